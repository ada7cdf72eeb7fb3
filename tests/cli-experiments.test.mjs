// cli-experiments.test.mjs — the experiments from the command line: `attnlab logits` with
// --ablate, --lens and --target, `attnlab generate --ablate` and `attnlab patch`.
//   - Against the PyTorch reference's hooks (tests/reference/minimind_experiments.py, fixtures
//     by tests/fixtures/gen_experiments.py): for each case of tests/fixtures/experiments/, the
//     plain run's tensors (plain.safetensors), the ablated run's (ablated.safetensors) and the
//     patching maps (patch.safetensors), every tensor within 1e-4 of its largest |value|.
//   - The invariants, on stories260K: the lens' last row is the logits bit for bit, the
//     attribution's parts sum to the target's logit, no head named is no flag at all, a patch
//     run from its block is a whole forward bit for bit, a prompt patched into itself keeps its
//     metric everywhere.
//   - Bad input: one line, exit 2, no file.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT, VARIANTS, run } from './lib/run.mjs';
import { readSafetensors } from './lib/safetensors.mjs';
import { expectRefusals } from './lib/refusals.mjs';

const cli = join(VARIANTS[0].dir, 'attnlab');
const work = mkdtempSync(join(tmpdir(), 'attnlab-experiments-'));
process.on('exit', () => rmSync(work, { recursive: true, force: true }));
const STORIES = 'models/stories260K/stories260K.bin';
const IDS = '1 403 407 261 378 432 383 286 261 376 298 315';
const CORRUPT = '1 403 407 300 378 432 383 286 261 376 298 315';

function logits(name, args) {
  const out = join(work, `${name}.safetensors`);
  const r = run(cli, ['logits', ...args, '--out', out]);
  assert.equal(r.status, 0, r.stderr);
  return readSafetensors(out);
}

// Every tensor of `want` in `got`, of its shape, within 1e-4 of its largest |value|.
function assertClose(got, want, what, skip = []) {
  for (const [name, w] of Object.entries(want.tensors)) {
    if (skip.includes(name) || name.startsWith('attn.') || name.startsWith('route_')) continue;
    const g = got.tensors[name];
    assert.ok(g, `${what}: ${name} missing`);
    assert.deepEqual(g.shape, w.shape, `${what}: ${name}'s shape`);
    let largest = 0, worst = 0, at = -1;
    for (const v of w.data) largest = Math.max(largest, Math.abs(v));
    for (let i = 0; i < w.data.length; i++) {
      const d = Math.abs(g.data[i] - w.data[i]);
      if (!(d <= worst)) worst = d, at = i;
    }
    assert.ok(worst <= 1e-4 * largest, `${what}: ${name} differs by ${worst.toExponential(2)} (largest |value| ` +
      `${largest.toExponential(2)}) at ${at}: got ${g.data[at]}, want ${w.data[at]}`);
  }
}

const same = (a, b) => Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(Buffer.from(b.buffer, b.byteOffset, b.byteLength));

// ---- against the reference -------------------------------------------------------------------

const FIXTURES = join(ROOT, 'tests', 'fixtures', 'experiments');
const cases = existsSync(FIXTURES) ? readdirSync(FIXTURES).filter((c) => existsSync(join(FIXTURES, c, 'case.json'))) : [];
if (!cases.length)
  test('the reference fixtures', { skip: 'tests/fixtures/experiments is missing: run tests/fixtures/gen_experiments.py' }, () => {});
for (const name of cases) {
  test(`${name}: logits, lens and attribution, plain and ablated, and the patching maps as the reference's hooks give them`, () => {
    const c = JSON.parse(readFileSync(join(FIXTURES, name, 'case.json'), 'utf8'));
    const base = ['--model', c.model, '--ids', c.ids.join(' '), '--lens', '--target', String(c.target)];
    assertClose(logits(`${name}-plain`, base), readSafetensors(join(FIXTURES, name, 'plain.safetensors')), `${name} plain`);
    const ablate = c.ablate.map(([l, h]) => `${l}.${h}`).join(',');
    assertClose(logits(`${name}-ablated`, [...base, '--ablate', ablate]),
      readSafetensors(join(FIXTURES, name, 'ablated.safetensors')), `${name} ablated`);
    const out = join(work, `${name}-patch.safetensors`);
    const r = run(cli, ['patch', '--model', c.model, '--clean', c.clean.join(' '), '--corrupt', c.corrupt.join(' '),
      '--answer', String(c.answer), '--wrong', String(c.wrong), '--out', out]);
    assert.equal(r.status, 0, r.stderr);
    assertClose(readSafetensors(out), readSafetensors(join(FIXTURES, name, 'patch.safetensors')), `${name} patch`);
  });
}

// ---- invariants --------------------------------------------------------------------------------

test('logits --lens --target: the lens\' last row is the logits bit for bit, the parts sum to the target\'s logit', () => {
  for (const ablate of [[], ['--ablate', '1.3,4.0']]) {
    const f = logits(`sum${ablate.length}`, ['--model', STORIES, '--ids', IDS, '--lens', '--target', '261', ...ablate]);
    const { logits: lg, lens, dla, dla_embed: embed, dla_ffn: ffn } = f.tensors;
    const [seq, vocab] = lg.shape;
    const [L, H] = dla.shape;
    assert.deepEqual(lens.shape, [L + 1, seq, vocab]);
    assert.deepEqual(embed.shape, [seq]);
    assert.deepEqual(ffn.shape, [L, seq]);
    assert.ok(same(lens.data.subarray(L * seq * vocab), lg.data), 'the lens\' last row is not the logits');
    for (let s = 0; s < seq; s++) {
      let sum = embed.data[s], mag = Math.abs(embed.data[s]);
      for (let i = 0; i < L * H; i++) sum += dla.data[i * seq + s], mag += Math.abs(dla.data[i * seq + s]);
      for (let l = 0; l < L; l++) sum += ffn.data[l * seq + s], mag += Math.abs(ffn.data[l * seq + s]);
      const logit = lg.data[s * vocab + 261];
      assert.ok(Math.abs(sum - logit) <= 1e-5 * mag, `position ${s}: the parts sum to ${sum}, the logit is ${logit}`);
    }
    if (ablate.length) {
      for (let s = 0; s < seq; s++) assert.equal(dla.data[(1 * H + 3) * seq + s], 0, 'head 1.3 is off but has a share');
      assert.equal(f.metadata.ablate, '1.3,4.0');
    }
    assert.equal(f.metadata.target, '261');
  }
});

test('logits --ablate: every tensor is the ablated model\'s; generate --ablate continues differently', () => {
  const plain = logits('plain', ['--model', STORIES, '--ids', IDS]);
  const off = logits('off', ['--model', STORIES, '--ids', IDS, '--ablate', '0.0,0.1,0.2,0.3,0.4,0.5,0.6,0.7']);
  assert.ok(!same(plain.tensors.logits.data, off.tensors.logits.data), 'a block\'s heads off changes no logit');
  assert.ok(same(plain.tensors['attn.0'].data, off.tensors['attn.0'].data), 'block 0\'s own attention changed');
  assert.ok(!same(plain.tensors['attn.1'].data, off.tensors['attn.1'].data), 'block 1 sees the same stream');
  const args = ['generate', '--model', STORIES, '--ids', '1', '--temperature', '0', '--max-new-tokens', '24', '--print-ids'];
  const a = run(cli, args), b = run(cli, [...args, '--ablate', '1.0,1.1,1.2,1.3,1.4,1.5,1.6,1.7']);
  assert.equal(a.status, 0, a.stderr);
  assert.equal(b.status, 0, b.stderr);
  assert.notEqual(a.stdout, b.stdout, 'a block switched off writes the same story');
});

test('patch: from its block up = a whole forward per patch, bit for bit; a prompt into itself keeps its metric', () => {
  const base = ['patch', '--model', STORIES, '--clean', IDS, '--answer', '261', '--wrong', '300'];
  const fast = join(work, 'fast.safetensors'), full = join(work, 'full.safetensors'), self = join(work, 'self.safetensors');
  for (const [out, extra] of [[fast, ['--corrupt', CORRUPT]], [full, ['--corrupt', CORRUPT, '--full-forward']],
    [self, ['--corrupt', IDS]]]) {
    const r = run(cli, [...base, ...extra, '--out', out]);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stderr, /^\d+ patches \(.*\) in [\d.]+ ms, \d+ blocks run\n$/);
  }
  assert.deepEqual(readFileSync(fast), readFileSync(full), 'the patches from block l differ from whole forwards');
  const f = readSafetensors(fast).tensors;
  assert.deepEqual(f.head.shape, [5, 8]);
  assert.deepEqual(f.resid.shape, [5, 12]);
  assert.notEqual(f.clean.data[0], f.corrupt.data[0]);
  const clean = logits('clean', ['--model', STORIES, '--ids', IDS]).tensors.logits;
  assert.equal(f.clean.data[0], clean.data[11 * 512 + 261] - clean.data[11 * 512 + 300], 'the clean metric');
  const s = readSafetensors(self).tensors;
  for (const t of ['head', 'resid', 'corrupt']) assert.ok(s[t].data.every((v) => v === s.clean.data[0]), t);
  // text prompts with the model's tokenizer, as ids would be
  const text = join(work, 'text.safetensors');
  const r = run(cli, ['patch', '--model', STORIES, '--tokenizer', 'models/stories260K/tok512.bin', '--clean-text',
    'Lily and Ben', '--corrupt-text', 'Tim and Ben', '--answer', '261', '--wrong', '300', '--out', text]);
  assert.equal(r.status, 0, r.stderr);
  assert.equal(readSafetensors(text).metadata.clean.split(' ').length, readSafetensors(text).tensors.resid.shape[1]);
});

test('bad input: one line, exit 2, no file', () => {
  const m = ['--model', STORIES];
  expectRefusals(cli, 'logits', [
    [[...m, '--ids', IDS, '--ablate', '5.0', '--out', 'OUT'], /--ablate: layer 5 is not in \[0, 5\)/],
    [[...m, '--ids', IDS, '--ablate', '0.8', '--out', 'OUT'], /--ablate: head 8 is not in \[0, 8\)/],
    [[...m, '--ids', IDS, '--ablate', '1-2', '--out', 'OUT'], /--ablate: '1-2' is not LAYER\.HEAD/],
    [[...m, '--ids', IDS, '--ablate', '1.x', '--out', 'OUT'], /--ablate: '1\.x' is not LAYER\.HEAD/],
    [[...m, '--ids', IDS, '--ablate', ',', '--out', 'OUT'], /--ablate: give at least one/],
    [[...m, '--ids', IDS, '--target', '512', '--out', 'OUT'], /--target: '512' is not a token id .*\[0, 512\)/],
    [[...m, '--ids', '1 512', '--lens', '--out', 'OUT'], /token id 512 at 1 is outside the vocabulary/],
    [['--model', 'models/minimind-fortunes', '--ids', Array(4000).fill(5).join(' '), '--lens', '--out', 'OUT'],
      /the result would hold \d+ MiB for 4000 tokens \(with --lens\); the limit is 1024 MiB/],
  ], work);
  const p = [...m, '--answer', '261', '--wrong', '300'];
  expectRefusals(cli, 'patch', [
    [[...p, '--clean', '1 2 3', '--corrupt', '1 2', '--out', 'OUT'], /clean prompt has 3 tokens and the corrupted one 2/],
    [[...m, '--clean', '1 2 3', '--corrupt', '1 2 4', '--answer', '261', '--wrong', '261', '--out', 'OUT'],
      /answer and wrong are the same token \(261\)/],
    [[...p, '--clean', '1 2 3', '--corrupt', '1 2 999', '--out', 'OUT'], /corrupted prompt: token id 999 at 2 is outside/],
    [[...p, '--clean', '1 600 3', '--corrupt', '1 2 3', '--out', 'OUT'], /clean prompt: token id 600 at 1 is outside/],
    [[...m, '--clean', '1 2 3', '--corrupt', '1 2 4', '--answer', '512', '--wrong', '3', '--out', 'OUT'],
      /--answer: '512' is not a token id/],
    [[...m, '--clean', '1 2 3', '--corrupt', '1 2 4', '--answer', '5', '--wrong', '-1', '--out', 'OUT'],
      /--wrong: '-1' is not a token id/],
    [[...p, '--clean', '1 2 3', '--corrupt', '1 2 4', '--ablate', '0.9', '--out', 'OUT'], /--ablate: head 9 is not in/],
    [[...p, '--clean', '1 2 3', '--out', 'OUT'], /patch needs --model/],
    [[...p, '--clean-text', 'Lily', '--corrupt', '1 2', '--out', 'OUT'], /need --tokenizer/],
  ], work);
  const g = run(cli, ['generate', ...m, '--ids', '1', '--ablate', '7.0']);
  assert.equal(g.status, 2);
  assert.match(g.stderr, /^attnlab: --ablate: layer 7 is not in \[0, 5\)\n$/);
  assert.equal(g.stdout, '');
});

test('help names the experiments', () => {
  const r = run(cli, ['help']);
  for (const flag of ['--ablate', '--lens', '--target', 'attnlab patch', '--full-forward']) assert.ok(r.stdout.includes(flag), flag);
});
