// llama2c.test.mjs — the whole decoder on stories260K against an independent PyTorch reference
// of the llama2.c model family (tests/reference/llama2c.py, fixtures by
// tests/fixtures/gen_llama2c.py): greedy continuations identical, token for token, to what
// llama2.c's run.c algorithm gives for every prompt (stopping where it stops: after its steps,
// or at a BOS); one pass's logits within 1e-4 of the reference's (relative to their largest
// value) and every layer's attention within 1e-5.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT, VARIANTS, run } from './lib/run.mjs';
import { maxDiff, readSafetensors } from './lib/safetensors.mjs';

const FIXTURES = join(ROOT, 'tests', 'fixtures', 'llama2c');
const generate = JSON.parse(readFileSync(join(FIXTURES, 'generate.json'), 'utf8'));
const work = mkdtempSync(join(tmpdir(), 'attnlab-llama2c-'));
process.on('exit', () => rmSync(work, { recursive: true, force: true }));

for (const variant of VARIANTS) {
  test(`${variant.name}: greedy continuations of stories260K equal the reference's`, () => {
    for (const c of generate.cases) {
      // run.c's `steps` counts positions: the prompt's tokens but its last are forced, every
      // later position chooses one.
      const maxNew = Math.max(0, c.steps - c.prompt_ids.length + 1);
      const r = run(join(variant.dir, 'attnlab'), ['generate', '--model', join(ROOT, generate.model),
        '--ids', c.prompt_ids.join(' '), '--max-new-tokens', String(maxNew), '--temperature', '0', '--print-ids']);
      assert.equal(r.status, 0, `${JSON.stringify(c.prompt)}: ${r.stderr}`);
      const got = r.stdout.trim() ? r.stdout.trim().split(' ').map(Number) : [];
      const want = c.steps < c.prompt_ids.length ? [] : c.ids;
      assert.deepEqual(got, want, `prompt ${JSON.stringify(c.prompt)} (stops by ${c.stop}, smallest logit gap ${c.min_gap})`);
      assert.match(r.stderr, /^prompt \d+ tokens .*generated \d+ tokens, [\d.]+ ms\/token, \d+ tokens\/s\n$/);
    }
  });
}

test('generate --prompt streams the prompt and the continuation as text, as the reference decodes them', () => {
  const tokenizer = join(ROOT, generate.tokenizer);
  for (const c of generate.cases.filter((x) => x.prompt !== '' && x.steps >= x.prompt_ids.length)) {
    const r = run(join(VARIANTS[0].dir, 'attnlab'), ['generate', '--model', join(ROOT, generate.model), '--tokenizer', tokenizer,
      '--prompt', c.prompt, '--max-new-tokens', String(c.steps - c.prompt_ids.length + 1), '--temperature', '0']);
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout, `${c.prompt}${c.text}\n`, `prompt ${JSON.stringify(c.prompt)}`);
    assert.match(r.stderr, new RegExp(`^prompt ${c.prompt_ids.length} tokens`));
  }
  const mismatch = run(join(VARIANTS[0].dir, 'attnlab'), ['generate', '--model', join(ROOT, generate.model),
    '--tokenizer', join(ROOT, 'tests', 'fixtures', 'llama2c', 'tokenize.json'), '--prompt', 'x']);
  assert.equal(mismatch.status, 2);
  assert.match(mismatch.stderr, /tokenize\.json \(read as a Hugging Face tokenizer\.json\): there is no pre_tokenizer/);
  const noTok = run(join(VARIANTS[0].dir, 'attnlab'), ['generate', '--model', join(ROOT, generate.model), '--prompt', 'x']);
  assert.match(noTok.stderr, /--prompt needs --tokenizer/);
});

test('one pass over a prompt: logits and every layer\'s attention as the reference computes them', () => {
  const want = readSafetensors(join(FIXTURES, 'logits.safetensors'));
  const out = join(work, 'logits.safetensors');
  const r = run(join(VARIANTS[0].dir, 'attnlab'), ['logits', '--model', join(ROOT, generate.model),
    '--ids', want.metadata.ids, '--out', out]);
  assert.equal(r.status, 0, r.stderr);
  const got = readSafetensors(out);
  assert.equal(got.metadata.ids, want.metadata.ids);
  for (const [name, tensor] of Object.entries(want.tensors)) {
    if (name.startsWith('resid.')) continue; // the reference's own diagnostics
    assert.ok(got.tensors[name], `${name} missing`);
    assert.deepEqual(got.tensors[name].shape, tensor.shape, `${name} shape`);
    const { worst, at } = maxDiff(got.tensors[name].data, tensor.data);
    const tolerance = name === 'logits' ? 1e-4 : 1e-5;
    assert.ok(worst <= tolerance, `${name}: max difference ${worst.toExponential(2)} at ${at} ` +
      `(got ${got.tensors[name].data[at]}, want ${tensor.data[at]})`);
  }
});

// llama2.c's version-1 export of the same weights (export.py's version1_export: a 256-byte
// header, "ak42", version 1, the seven ints, shared_classifier; then the norms first, the
// embedding, the matrices, no freq_cis): the same model, so the same continuations.
function toVersion1(legacy) {
  const h = new Int32Array(legacy.buffer, legacy.byteOffset, 7);
  const [dim, hidden, layers, heads, kv, vocab, seq] = h;
  const hd = dim / heads, f = (n) => 4 * n;
  let at = 28;
  const take = (n) => { const b = legacy.subarray(at, at + f(n)); at += f(n); return b; };
  const embed = take(vocab * dim), rmsAtt = take(layers * dim), wq = take(layers * dim * dim);
  const wk = take(layers * kv * hd * dim), wv = take(layers * kv * hd * dim), wo = take(layers * dim * dim);
  const rmsFfn = take(layers * dim), w1 = take(layers * hidden * dim), w2 = take(layers * dim * hidden);
  const w3 = take(layers * hidden * dim), rmsFinal = take(dim);
  const header = Buffer.alloc(256);
  header.writeUInt32LE(0x616b3432, 0);
  header.writeInt32LE(1, 4);
  [dim, hidden, layers, heads, kv, vocab, seq].forEach((v, i) => header.writeInt32LE(v, 8 + 4 * i));
  header.writeUInt8(1, 36); // shared classifier (vocab > 0 in the legacy header)
  return Buffer.concat([header, rmsAtt, rmsFfn, rmsFinal, embed, wq, wk, wv, wo, w1, w2, w3]);
}

test('a version-1 llama2.c export of stories260K continues as the legacy one; version 2 is refused', async () => {
  const { writeFileSync } = await import('node:fs');
  const v1 = join(work, 'stories260K.v1.bin');
  const bytes = toVersion1(readFileSync(join(ROOT, generate.model)));
  writeFileSync(v1, bytes);
  for (const c of generate.cases.slice(0, 4)) {
    const maxNew = Math.max(0, c.steps - c.prompt_ids.length + 1);
    const r = run(join(VARIANTS[0].dir, 'attnlab'), ['generate', '--model', v1, '--ids', c.prompt_ids.join(' '),
      '--max-new-tokens', String(maxNew), '--temperature', '0', '--print-ids']);
    assert.equal(r.status, 0, r.stderr);
    assert.deepEqual(r.stdout.trim() ? r.stdout.trim().split(' ').map(Number) : [], c.steps < c.prompt_ids.length ? [] : c.ids);
  }
  const v2 = Buffer.from(bytes);
  v2.writeInt32LE(2, 4);
  writeFileSync(v1, v2);
  let r = run(join(VARIANTS[0].dir, 'attnlab'), ['inspect', '--model', v1]);
  assert.equal(r.status, 2);
  assert.match(r.stderr, /export version 2; the float32 ones are read/);
  writeFileSync(v1, bytes.subarray(0, bytes.length - 4));
  r = run(join(VARIANTS[0].dir, 'attnlab'), ['inspect', '--model', v1]);
  assert.match(r.stderr, /llama2\.c checkpoint \(version 1\): the header .* implies \d+ bytes but the file has \d+/);
});

test('generate and logits refuse bad input with one line and exit 2', () => {
  const cli = join(VARIANTS[0].dir, 'attnlab');
  const model = join(ROOT, generate.model);
  const cases = [
    [['generate', '--model', model, '--ids', '1 512'], /token id 512 at 1 is outside the vocabulary \[0, 512\)/],
    [['generate', '--model', model, '--ids', '1 x'], /--ids: 'x' is not a token id/],
    [['generate', '--model', model, '--ids', ''], /--ids: give at least one token id/],
    [['generate', '--model', model, '--ids', Array(600).fill(1).join(' ')], /the prompt has 600 tokens; the model's context is 512/],
    [['generate', '--model', join(ROOT, 'models', 'stories260K', 'tok512.bin'), '--ids', '1'], /tok512.bin: llama2.c checkpoint: header field hidden_dim is 0/],
    [['generate', '--ids', '1'], /generate needs --model and one of --ids .*, --prompt TEXT or --chat TEXT/],
    [['logits', '--model', model, '--ids', '1', '--out', model], /same file as the input/],
  ];
  for (const [args, message] of cases) {
    const r = run(cli, args);
    assert.equal(r.status, 2, `${args.join(' ').slice(0, 80)}: exit ${r.status} ${r.stderr}`);
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    assert.match(r.stderr, message);
  }
});
