// hardening.test.mjs — what an adversarial review broke, each kept broken-proof: limits that
// count every allocation and the result file (CLI, ASan and WebAssembly), non-finite results,
// output paths that would destroy files, FIFOs, lost write errors, interrupted writes, headers
// checked before data is read, bounded benchmarks, and one-line messages that show numbers and
// paths as given.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, cpSync, existsSync, linkSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync, ftruncateSync, copyFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT, VARIANTS, run } from './lib/run.mjs';
import { readSafetensors, writeSafetensors } from './lib/safetensors.mjs';
import { loadCore, AttnLab } from './lib/wasm.mjs';

const work = mkdtempSync(join(tmpdir(), 'attnlab-hardening-'));
process.on('exit', () => rmSync(work, { recursive: true, force: true }));
const GOOD = join(ROOT, 'tests', 'fixtures', 'attention', 'mha_4x4_hd8_h32_b1_s7_p3');
const WEIGHTS = join(GOOD, 'weights.safetensors');
const INPUT = join(GOOD, 'input.safetensors');
const native = VARIANTS.find((v) => v.name === 'native');
const cli = (variant = native) => join(variant.dir, 'attnlab');

// The smallest layer there is: hidden 1, one head of head_dim 2 (weights `scale` each).
function tinyWeights(path, scale = 0.5) {
  const t = (shape) => ({ shape, data: new Array(shape.reduce((a, b) => a * b, 1)).fill(scale) });
  writeSafetensors(path, {
    'q_proj.weight': t([2, 1]), 'k_proj.weight': t([2, 1]), 'v_proj.weight': t([2, 1]),
    'o_proj.weight': t([1, 2]), 'q_norm.weight': { shape: [2], data: [1, 1] }, 'k_norm.weight': { shape: [2], data: [1, 1] },
  });
  return path;
}
function input(path, batch, seq, hidden = 1) {
  const n = batch * seq * hidden;
  const data = new Float32Array(n);
  for (let i = 0; i < n; i++) data[i] = Math.sin(i) * 0.5;
  writeSafetensors(path, { x: { shape: [batch, seq, hidden], data } });
  return path;
}
const tmpFiles = () => readdirSync(work).filter((f) => f.includes('.tmp.'));

function refused(r, pattern, out) {
  assert.equal(r.signal, null, `killed by ${r.signal}: ${r.stderr}`);
  assert.equal(r.status, 2, `exit ${r.status}: ${r.stderr}${r.stdout}`);
  const lines = r.stderr.trim().split('\n');
  assert.equal(lines.length, 1, `one line expected:\n${r.stderr}`);
  assert.match(lines[0], pattern);
  if (out) assert.ok(!existsSync(out), `${out} was written`);
  assert.deepEqual(tmpFiles(), [], 'a temporary file was left behind');
}

// 1. Every allocation and the result count against the limit, before anything is allocated.
for (const variant of VARIANTS) {
  test(`${variant.name}: the attention weights and the result count against the 1 GiB limit`, () => {
    const w = tinyWeights(join(work, 'tiny.safetensors'));
    const out = join(work, 'big.safetensors');
    const huge = input(join(work, 'x-64x65536.safetensors'), 64, 65536);
    refused(run(cli(variant), ['forward', '--weights', w, '--input', huge, '--out', out]), /needs \d+ MiB .*the limit is 1024 MiB/, out);
    const long = input(join(work, 'x-1x16384.safetensors'), 1, 16384);
    refused(run(cli(variant), ['forward', '--weights', w, '--input', long, '--out', out]), /needs \d+ MiB .*attention weights.*the limit is 1024 MiB.*without the attention weights/, out);
    if (variant.name !== 'native') return; // the run itself once, natively
    const r = run(cli(variant), ['forward', '--weights', w, '--input', long, '--out', out, '--no-attn-weights']);
    assert.equal(r.status, 0, r.stderr);
    const got = readSafetensors(out).tensors;
    assert.deepEqual(Object.keys(got).sort(), ['k_cache', 'output', 'output_cached', 'v_cache']);
    rmSync(out);
  });
}

// 2. The same sizes through the WebAssembly build, where size_t is 32 bits.
test('wasm: a run beyond the limit is refused cleanly, and the module keeps working', async () => {
  const core = await loadCore();
  const { readFileSync } = await import('node:fs');
  const w = readFileSync(tinyWeights(join(work, 'tiny-wasm.safetensors')));
  for (const seq of [32768, 65536]) {
    const x = readFileSync(input(join(work, `x-wasm-${seq}.safetensors`), 1, seq));
    assert.throws(() => core.forward(w, x), (e) => e instanceof AttnLab.AttnLabError && /needs \d+ MiB .*limit is 1024 MiB/.test(e.message));
  }
  const ok = core.forward(readFileSync(WEIGHTS), readFileSync(INPUT));
  assert.equal(ok.summary.seq, 7);
  const noWeights = core.forward(readFileSync(WEIGHTS), readFileSync(INPUT), { attnWeights: false });
  assert.ok(noWeights.bytes.length < ok.bytes.length);
});

// 3. A result that is not finite is an error, not a clean run.
test('a non-finite result names the tensor and the first index, exit 2', () => {
  const w = tinyWeights(join(work, 'huge-weights.safetensors'), 3e38);
  for (const variant of VARIANTS) {
    const out = join(work, 'nan.safetensors');
    refused(run(cli(variant), ['forward', '--weights', w, '--input', input(join(work, 'x-small.safetensors'), 1, 4), '--out', out]),
      /the result '(output|k_cache|v_cache|attn_weights|output_cached)' is (NaN|infinite) at \[\d+, \d+, \d+(, \d+)?\]/, out);
  }
});

// 4–6, 13. Output paths that would destroy something, FIFOs, and paths that cannot be written.
test('output paths: never an input, never a device or FIFO, errors name the path given', () => {
  const copy = join(work, 'input-copy.safetensors');
  copyFileSync(INPUT, copy);
  const before = statSync(copy).size;
  const fifo = join(work, 'fifo');
  spawnSync('mkfifo', [fifo]);
  for (const variant of VARIANTS) {
    const f = (out, inputPath = copy) => run(cli(variant), ['forward', '--weights', WEIGHTS, '--input', inputPath, '--out', out]);
    refused(f(copy), /--out '.*input-copy.safetensors' is the same file as the input/);
    refused(f(join(work, '.', 'input-copy.safetensors')), /same file as the input/);
    assert.equal(statSync(copy).size, before, 'the input was changed');
    refused(f('/dev/null'), /cannot write '\/dev\/null': it exists and is not a regular file/);
    assert.ok(statSync('/dev/null').isCharacterDevice(), '/dev/null was replaced');
    refused(f(fifo), /cannot write '.*fifo': it exists and is not a regular file/);
    assert.ok(statSync(fifo).isFIFO(), 'the FIFO was replaced');
    refused(f(''), /--out needs a file path/);
    refused(f(join(work, 'no-such-folder', 'o.safetensors')), /cannot write '.*no-such-folder\/o.safetensors': its folder does not exist/);
    refused(f(work), /cannot write '.*': it is a folder/);
    // A FIFO as input must not block: one that does is killed after 30 s (a hang guard) and
    // refused() names the signal.
    refused(run(cli(variant), ['forward', '--weights', fifo, '--input', INPUT, '--out', join(work, 'o.safetensors')], { timeout: 30000 }),
      /'.*fifo' is not a regular file/);
  }
});

// Every file a command reads is an input --out may not be: for a model, each file its loader
// reads (a folder's config.json and model.safetensors, and its tokenizer.json; a .pth and the
// tokenizer.json beside it), told apart by device and inode, so links and other spellings of the
// path are caught too. Every command that takes --out is in the table.
test('output paths: no command writes over any file it reads, a model\'s files included', () => {
  const dir = join(work, 'reads');
  mkdirSync(dir);
  const folder = join(dir, 'folder');
  cpSync(join(ROOT, 'tests', 'fixtures', 'minimind', 'dense_f32'), folder, { recursive: true });
  writeFileSync(join(folder, 'tokenizer.json'), readFileSync(join(ROOT, 'models', 'minimind-tokenizer', 'tokenizer.json')));
  const pthDir = join(dir, 'pth');
  mkdirSync(pthDir);
  copyFileSync(join(ROOT, 'tests', 'fixtures', 'minimind', 'pth_dense_tied', 'model.pth'), join(pthDir, 'model.pth'));
  writeFileSync(join(pthDir, 'tokenizer.json'), '{}');
  const bin = join(dir, 'stories260K.bin');
  copyFileSync(join(ROOT, 'models', 'stories260K', 'stories260K.bin'), bin);
  const tok = join(dir, 'tokenizer.json');
  copyFileSync(join(ROOT, 'models', 'minimind-tokenizer', 'tokenizer.json'), tok);
  const corpus = join(dir, 'corpus.txt');
  writeFileSync(corpus, 'the cat sat on the mat\n'.repeat(50));
  const copy = join(dir, 'input.safetensors');
  copyFileSync(INPUT, copy);
  linkSync(join(folder, 'model.safetensors'), join(dir, 'hard-link.safetensors'));
  symlinkSync(join(folder, 'config.json'), join(dir, 'sym-link.json'));
  // [command, its arguments but --out, the files it reads that --out may name]
  const cases = [
    ['logits', ['--model', folder, '--ids', '1 2'], [join(folder, 'config.json'), join(folder, 'model.safetensors'),
      join(folder, 'tokenizer.json'), join(folder, '.', 'config.json'), join(dir, 'hard-link.safetensors'), join(dir, 'sym-link.json')]],
    ['logits', ['--model', join(pthDir, 'model.pth'), '--ids', '1 2'], [join(pthDir, 'model.pth'), join(pthDir, 'tokenizer.json')]],
    ['logits', ['--model', bin, '--ids', '1 2'], [bin]],
    ['forward', ['--weights', WEIGHTS, '--input', copy], [copy]],
    ['cut-tokenizer', ['--tokenizer', tok, '--vocab', '300'], [tok]],
    ['train-tokenizer', ['--corpus', corpus, '--vocab', '300'], [corpus]],
    ['convert', ['--model', folder, '--force'], [folder]],
    ['convert', ['--model', join(pthDir, 'model.pth'), '--force'], [pthDir]],
  ];
  const before = new Map();
  const files = [join(folder, 'config.json'), join(folder, 'model.safetensors'), join(folder, 'tokenizer.json'),
    join(pthDir, 'model.pth'), join(pthDir, 'tokenizer.json'), bin, tok, corpus, copy];
  for (const f of files) before.set(f, readFileSync(f));
  for (const [cmd, args, outs] of cases) {
    for (const out of outs) refused(run(cli(), [cmd, ...args, '--out', out]), /is the same file as the input/);
  }
  for (const f of files) assert.deepEqual(readFileSync(f), before.get(f), `${f} was changed`);
  // Every command whose usage takes --out is in the table (train: a folder of its own, its tests).
  const usage = run(cli(), ['help']).stdout;
  const withOut = [...usage.matchAll(/^ {2}attnlab ([a-z-]+) [^\n]*--out /gm)].map((m) => m[1]);
  assert.deepEqual([...new Set(withOut)].filter((c) => c !== 'train').sort(), [...new Set(cases.map((c) => c[0]))].sort());
});

// 7. Output that cannot be written is an error with one line.
test('write errors on standard output are reported, exit non-zero', () => {
  for (const args of [['demo', 'basic'], ['help'], ['forward', '--weights', WEIGHTS, '--input', INPUT, '--out', join(work, 'full.safetensors')]]) {
    const fd = openSync('/dev/full', 'w');
    const r = spawnSync(cli(), args, { cwd: ROOT, stdio: ['ignore', fd, 'pipe'], encoding: 'utf8' });
    closeSync(fd);
    assert.notEqual(r.status, 0, `${args[0]} > /dev/full exited 0`);
    assert.match(r.stderr.trim(), /^attnlab: cannot write to standard output: No space left on device$/);
  }
});

// 8. An interrupted write leaves no temporary file.
test('a temporary file is removed when the process is killed while writing', async () => {
  const w = tinyWeights(join(work, 'tiny-kill.safetensors'));
  const x = input(join(work, 'x-kill.safetensors'), 1, 8192);
  const out = join(work, 'killed.safetensors');
  let checked = 0;
  for (const signal of ['SIGTERM', 'SIGINT']) {
    const child = spawn(cli(), ['forward', '--weights', w, '--input', x, '--out', out], { stdio: 'ignore' });
    let sawTmp = false;
    const exited = new Promise((resolve) => child.on('exit', (code, sig) => resolve({ code, sig })));
    while (child.exitCode === null && child.signalCode === null) {
      if (tmpFiles().length) {
        sawTmp = true;
        child.kill(signal);
        break;
      }
      await new Promise((r) => setTimeout(r, 2));
    }
    const { sig } = await exited;
    if (!sawTmp) continue; // finished before the poll saw it: nothing to check this time
    checked++;
    assert.equal(sig, signal);
    assert.deepEqual(tmpFiles(), [], `a temporary file survived ${signal}`);
    assert.ok(!existsSync(out));
  }
  assert.ok(checked > 0, 'no write was caught in progress: make the result larger');
});

// 9. The header is checked before the data is read.
test('a 2 GiB file with a broken header is refused without reading it into memory', () => {
  const big = join(work, 'zeros-2g.safetensors');
  const fd = openSync(big, 'w');
  ftruncateSync(fd, 2 ** 31 - 16); // sparse: no disk used
  closeSync(fd);
  // Under a 300 MB address-space limit, reading the file whole would fail as out of memory.
  const r = spawnSync('bash', ['-c', `ulimit -v 300000; exec "$0" "$@"`, cli(), 'forward', '--weights', big, '--input', INPUT, '--out', join(work, 'o.safetensors')], { cwd: ROOT, encoding: 'utf8' });
  refused(r, /zeros-2g.safetensors: header length is 0/);
  rmSync(big);
});

// 10. A benchmark's work is bounded like memory.
test('bench refuses work beyond its limit', () => {
  refused(run(cli(), ['bench', '--seq', '65536', '--decode-at', '0', '--repeats', '1']), /bench: this asks for \d+ GFLOP of work .*the limit is 1000 GFLOP/);
  refused(run(cli(), ['bench', '--repeats', '100000']), /--repeats expects a whole number between 1 and 1000/);
});

// 12, 14, 15. Messages: one line, user text escaped and cut, numbers as given, what is wrong.
test('messages show paths escaped and cut, numbers as given, and say what is wrong', () => {
  const out = join(work, 'msg.safetensors');
  const f = (args) => run(cli(), ['forward', ...args]);
  refused(f(['--weights', 'a\nb\u001b[31mred\u202eevil', '--input', INPUT, '--out', out]), /cannot open 'a\\nb\\x1B\[31mred\\u\{202E\}evil'/);
  const long = `${'x'.repeat(5000)}.safetensors`;
  const r = f(['--weights', long, '--input', INPUT, '--out', out]);
  refused(r, /cannot open 'x+\.\.\.'/);
  assert.ok(r.stderr.length < 400, `message of ${r.stderr.length} bytes`);
  const none = run(cli(), []);
  assert.equal(none.status, 2);
  assert.match(none.stderr, /^usage: attnlab demo\|forward\|bench\|kv-growth\|generate\|logits\|patch\|inspect/);
  assert.ok(none.stderr.trim().split('\n').length <= 2, 'no arguments: a short usage');
  refused(f(['--weights', WEIGHTS, '--input', INPUT, '--out', out, '--eps', '0.99999999999']), /\(got 0.99999999999\)/);
  refused(f(['--weights', WEIGHTS, '--input', INPUT, '--out', out, '--eps', '1e-50']), /\(got 1e-50\)/);
  const ok = f(['--weights', WEIGHTS, '--input', INPUT, '--out', out, '--rope-base', '1.0000001']);
  assert.equal(ok.status, 0, ok.stderr);
  assert.match(ok.stdout, /rope_base 1.0000001, eps 1e-06/);
  // A wrongly shaped x says its shape.
  const twoD = join(work, 'x-2d.safetensors');
  writeSafetensors(twoD, { x: { shape: [7, 32], data: new Array(224).fill(0) } });
  refused(f(['--weights', WEIGHTS, '--input', twoD, '--out', out]), /tensor 'x' has shape \[7, 32\]; it must be \[batch, seq, hidden\]/);
  // An empty tensor placed past the end of the data is outside it, not a truncated file.
  const header = JSON.stringify({ a: { dtype: 'F32', shape: [2], data_offsets: [0, 8] }, b: { dtype: 'F32', shape: [0], data_offsets: [200, 200] } });
  const len = Buffer.alloc(8);
  len.writeBigUInt64LE(BigInt(header.length));
  const past = join(work, 'past-end.safetensors');
  writeFileSync(past, Buffer.concat([len, Buffer.from(header), Buffer.alloc(8)]));
  refused(f(['--weights', past, '--input', INPUT, '--out', out]), /tensor 'b': data_offsets \[200, 200\] outside the 8-byte data section/);
  // A file whose size stat reports as 0 is read, not called empty.
  const proc = f(['--weights', '/proc/self/status', '--input', INPUT, '--out', out]);
  assert.equal(proc.status, 2);
  assert.doesNotMatch(proc.stderr, /empty/);
});
