// cli-convert.test.mjs — `attnlab convert`: MiniMind's .pth (float16, as its trainer saves) and a
// folder written as a MiniMind folder in float16; the model it writes computes what the original
// computes (a .pth's float16 weights come back exactly: the logits are equal), its file is half
// the float32 size, and what cannot be converted is refused with one line.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT, run } from './lib/run.mjs';
import { readSafetensors } from './lib/safetensors.mjs';

const CLI = join(ROOT, 'build', 'attnlab');
const MINIMIND = join(ROOT, 'tests', 'fixtures', 'minimind');
const work = mkdtempSync(join(tmpdir(), 'attnlab-convert-'));
process.on('exit', () => rmSync(work, { recursive: true, force: true }));

function logits(model, ids) {
  const out = join(work, `l${Math.random().toString(36).slice(2)}.safetensors`);
  const r = run(CLI, ['logits', '--model', model, '--ids', ids, '--out', out]);
  assert.equal(r.status, 0, r.stderr);
  return readSafetensors(out).tensors.logits.data;
}
const dtypes = (file) => {
  const buf = readFileSync(file);
  const header = JSON.parse(buf.subarray(8, 8 + Number(buf.readBigUInt64LE(0))).toString());
  return new Set(Object.entries(header).filter(([k]) => k !== '__metadata__').map(([, v]) => v.dtype));
};

test('convert: a .pth (float16) becomes a float16 folder with the same logits', () => {
  for (const name of ['pth_dense_tied', 'pth_moe_top2']) {
    const out = join(work, name);
    const extra = name === 'pth_moe_top2' ? ['--moe-top-k', '2'] : [];
    const r = run(CLI, ['convert', '--model', join(MINIMIND, name, 'model.pth'), '--out', out, ...extra]);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /float16/);
    assert.deepEqual([...dtypes(join(out, 'model.safetensors'))], ['F16']);
    const config = JSON.parse(readFileSync(join(out, 'config.json'), 'utf8'));
    if (name === 'pth_moe_top2') assert.equal(config.num_experts_per_tok, 2);
    const got = logits(out, '1 17 33 5');
    if (name === 'pth_moe_top2') {
      const wantMoe = run(CLI, ['logits', '--model', join(MINIMIND, name, 'model.pth'), '--moe-top-k', '2', '--ids', '1 17 33 5', '--out', join(work, 'moe.safetensors')]);
      assert.equal(wantMoe.status, 0, wantMoe.stderr);
      assert.deepEqual(got, readSafetensors(join(work, 'moe.safetensors')).tensors.logits.data);
    } else {
      assert.deepEqual(got, logits(join(MINIMIND, name, 'model.pth'), '1 17 33 5'));
    }
  }
});

test('convert: a float32 folder becomes half its size in float16, and --dtype f32 keeps it exactly', () => {
  const src = join(MINIMIND, 'dense_f32');
  const f16 = join(work, 'f16'), f32 = join(work, 'f32');
  let r = run(CLI, ['convert', '--model', src, '--out', f16]);
  assert.equal(r.status, 0, r.stderr);
  r = run(CLI, ['convert', '--model', src, '--out', f32, '--dtype', 'f32']);
  assert.equal(r.status, 0, r.stderr);
  const size = (d) => statSync(join(d, 'model.safetensors')).size;
  assert.ok(size(f16) < 0.55 * size(f32), `${size(f16)} vs ${size(f32)}`);
  assert.deepEqual(logits(f32, '1 2 3'), logits(src, '1 2 3'));
  const a = logits(f16, '1 2 3'), b = logits(src, '1 2 3');
  let worst = 0, top = 0;
  for (let i = 0; i < b.length; i++) { worst = Math.max(worst, Math.abs(a[i] - b[i])); top = Math.max(top, Math.abs(b[i])); }
  assert.ok(worst <= 1e-2 * Math.max(1, top), `float16 moved the logits by ${worst}`);
});

test('convert: refusals are one line and exit 2', () => {
  for (const [args, message] of [
    [['--model', join(ROOT, 'models', 'stories260K', 'stories260K.bin'), '--out', join(work, 'x')], /llama2\.c checkpoint/],
    [['--model', join(MINIMIND, 'pth_dense_tied', 'model.pth')], /needs --model PATH and --out DIR/],
    [['--model', join(MINIMIND, 'pth_dense_tied', 'model.pth'), '--out', join(work, 'y'), '--dtype', 'bf16'], /--dtype expects f16 or f32/],
    [['--model', join(work, 'none'), '--out', join(work, 'z')], /no such file or folder/],
  ]) {
    const r = run(CLI, ['convert', ...args]);
    assert.equal(r.status, 2, r.stderr);
    assert.match(r.stderr, message);
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
  }
});
