// added_tokens.mjs — the bench's row for a tokenizer.json with 50,000 added tokens that share
// their first byte ('<'): `attnlab tokenize` of 1 MB of mixed text holding some of them, the
// file's reading included, against the reference (@huggingface/tokenizers) reading the same
// file and encoding the same text in this process. Each side is timed `repeats` times; the
// medians are returned as { name, ms, target_ms } (target: the reference's time). The ids are
// compared once, so the row never times a wrong answer.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Tokenizer } from '@huggingface/tokenizers';
import { manyAdded } from '../lib/hf-json.mjs';
import { ROOT } from '../lib/run.mjs';
import { randomTexts } from '../lib/tok-texts.mjs';
import { median } from './stats.mjs';

const CLI = join(ROOT, 'build', 'attnlab');
const N_ADDED = 50000;

export function addedTokensBench({ quick = false } = {}) {
  const repeats = quick ? 2 : 5;
  const work = mkdtempSync(join(tmpdir(), 'attnlab-bench-added-'));
  try {
    const json = JSON.stringify(manyAdded(N_ADDED));
    const path = join(work, 'tokenizer.json');
    writeFileSync(path, json);
    const some = JSON.parse(json).added_tokens.filter((a, k) => k % 997 === 0).map((a) => a.content);
    const pieces = randomTexts(4000, 20240607, some);
    let text = '';
    for (let i = 0; Buffer.byteLength(text) < 1 << 20; i++) text += `${pieces[i % pieces.length]} `;
    const input = Buffer.from(text, 'utf8');

    const ours = [], theirs = [];
    let got = null, want = null;
    for (let r = 0; r < repeats; r++) {
      let t0 = performance.now();
      const p = spawnSync(CLI, ['tokenize', '--tokenizer', path], { input, encoding: 'utf8', maxBuffer: 64 << 20 });
      ours.push(performance.now() - t0);
      if (p.status !== 0) throw new Error(`attnlab tokenize failed: ${p.stderr.trim()}`);
      got = p.stdout;
      t0 = performance.now();
      want = new Tokenizer(JSON.parse(readFileSync(path, 'utf8')), {}).encode(text).ids;
      theirs.push(performance.now() - t0);
    }
    if (got.trim() !== want.join(' ')) throw new Error('attnlab tokenize and the reference give different ids');
    return {
      name: `tokenize 1 MB with ${N_ADDED.toLocaleString('en')} added tokens sharing a first byte (file read included)`,
      ms: median(ours),
      target_ms: median(theirs),
    };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
