// stories.mjs — stories260K's greedy generation, each process timed whole, against llama2.c's own
// run.c (not shipped here: built -Ofast -march=native when LLAMA2C_RUN_C names its source, run
// with OMP_NUM_THREADS=1), and optionally against another build of the CLI (an older one, to
// see what a change bought). Rounds of `attnlab generate` (250 tokens from BOS), then run.c,
// then the other build, one after the other (A B C A B C …, so that a change in the machine's
// load falls on all three), each process timed with a nanosecond clock (run.c's own "achieved
// tok/s" counts whole milliseconds), the model's loading included on every side. Also our
// tokens/s as generate prints it (its loop alone). Part of `npm run bench` (tests/bench/run.mjs);
// run alone:
//   LLAMA2C_RUN_C=/path/to/run.c node tests/bench/stories.mjs [--rounds N] [--old PATH/attnlab]
// prints the JSON.
import { spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ROOT } from '../lib/run.mjs';
import { ROUNDS, median, spread } from './stats.mjs';

const OUT = join(ROOT, 'tests', 'out');
const CLI = join(ROOT, 'build', 'attnlab');
const STORIES = join(ROOT, 'models', 'stories260K');
const TOKENS = 250;

const processMs = (program, args, options) => {
  const t0 = process.hrtime.bigint();
  const r = spawnSync(program, args, { encoding: 'utf8', ...options });
  return { r, ms: Number(process.hrtime.bigint() - t0) / 1e6 };
};

// Why run.c is not measured when LLAMA2C_RUN_C is unset: the bench may fetch llama2.c but not
// ship it, and the only registries it reaches (Debian's, npm) hold no llama2.c.
const RUN_C_MISSING = 'run.c not measured: llama2.c is in neither package registry the bench reaches (Debian, npm) and is not shipped here; stories260K (4 KV heads of 8, tok512.bin by -z) needs a run.c of August 2023 or later: set LLAMA2C_RUN_C to its path';

// One greedy run of a CLI: { ms, printed } (printed: the tokens/s generate reports).
function generate(cli) {
  const a = processMs(cli, ['generate', '--model', join(STORIES, 'stories260K.bin'), '--ids', '1', '--temperature', '0',
    '--max-new-tokens', String(TOKENS), '--print-ids']);
  if (a.r.status !== 0) throw new Error(`${cli} generate: ${a.r.stderr.trim()}`);
  return { ms: a.ms, printed: Number(a.r.stderr.match(/([\d.]+) tokens\/s/)[1]) };
}

// options: rounds (ROUNDS), cli (build/attnlab), old (another CLI, or none).
export function storiesRounds({ rounds = ROUNDS, cli = CLI, old = null } = {}) {
  const src = process.env.LLAMA2C_RUN_C;
  let bin = null, note = null;
  if (!src) note = RUN_C_MISSING;
  else {
    mkdirSync(OUT, { recursive: true });
    bin = join(OUT, 'llama2c_run');
    const cc = spawnSync('cc', ['-Ofast', '-march=native', '-o', bin, src, '-lm'], { encoding: 'utf8' });
    if (cc.status !== 0) note = `run.c did not build: ${cc.stderr.trim().split('\n')[0]}`, bin = null;
  }
  const ours = [], theirs = [], ratio = [], printed = [], older = [], vsOld = [];
  for (let i = 0; i < rounds; i++) {
    const a = generate(cli);
    printed.push(a.printed);
    ours.push(a.ms);
    if (bin) {
      // run.c counts BOS as its first step: 251 steps make 250 new tokens
      const b = processMs(bin, [join(STORIES, 'stories260K.bin'), '-z', join(STORIES, 'tok512.bin'), '-t', '0', '-n', String(TOKENS + 1)],
        { env: { ...process.env, OMP_NUM_THREADS: '1' } });
      if (b.r.status !== 0) {
        note = `run.c failed: ${b.r.stderr.trim().split('\n').pop()}`;
        bin = null;
      } else {
        theirs.push(b.ms);
        ratio.push(b.ms / a.ms);
      }
    }
    if (old) {
      const c = generate(old);
      older.push(c.ms);
      vsOld.push(c.ms / a.ms);
    }
  }
  const run_c = theirs.length === rounds ? { process_ms: median(theirs), tokens_per_s: TOKENS * 1e3 / median(theirs) } : { note };
  return { ours_tokens_per_s: median(printed), ours_process_ms: median(ours), ours_process_tokens_per_s: TOKENS * 1e3 / median(ours),
    run_c, vs_run_c: ratio.length === rounds ? spread(ratio) : undefined,
    ...(old ? { old: { cli: old, process_ms: median(older) }, vs_old: spread(vsOld) } : {}) };
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const arg = (name) => { const i = process.argv.indexOf(name); return i > 0 ? process.argv[i + 1] : undefined; };
  const rounds = arg('--rounds') ? Number(arg('--rounds')) : ROUNDS;
  console.log(JSON.stringify(storiesRounds({ rounds, old: arg('--old') || null }), null, 2));
}
