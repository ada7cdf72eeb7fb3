// cli-convert.test.mjs — `attnlab convert`: MiniMind's .pth (float16, as its trainer saves) and a
// folder written as a MiniMind folder in float16; the model it writes computes what the original
// computes (a .pth's float16 weights come back exactly: the logits are equal), its file is half
// the float32 size, and what cannot be converted is refused with one line: a weight float16
// cannot hold, a folder that holds a model already (unless --force), a file the conversion reads.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, existsSync, linkSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT, run } from './lib/run.mjs';
import { readSafetensors, writeSafetensors } from './lib/safetensors.mjs';

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

function refused(r, message) {
  assert.equal(r.status, 2, `exit ${r.status}: ${r.stderr}${r.stdout}`);
  assert.match(r.stderr, message);
  assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
}
// Every file under dir, name → bytes.
const snapshot = (dir) => Object.fromEntries(['config.json', 'model.safetensors', 'tokenizer.json']
  .filter((f) => existsSync(join(dir, f))).map((f) => [f, readFileSync(join(dir, f))]));

test('convert: a folder that holds a model is replaced only with --force, and never a file it reads', () => {
  const src = join(work, 'src'), other = join(work, 'other');
  cpSync(join(MINIMIND, 'dense_f32'), src, { recursive: true });
  cpSync(join(MINIMIND, 'mha_4x4'), other, { recursive: true });
  writeFileSync(join(other, 'tokenizer.json'), '{"model": "the old one"}');
  const before = snapshot(other);
  // Any one of the three files makes a folder a model's.
  for (const file of ['config.json', 'model.safetensors', 'tokenizer.json']) {
    const one = join(work, `holds-${file}`);
    mkdirSync(one);
    writeFileSync(join(one, file), 'x');
    refused(run(CLI, ['convert', '--model', src, '--out', one]), /already holds a model .*--force to replace it/);
    assert.deepEqual(snapshot(one), { [file]: Buffer.from('x') });
  }
  refused(run(CLI, ['convert', '--model', src, '--out', other]), /'.*other' already holds a model/);
  assert.deepEqual(snapshot(other), before, 'the folder was changed');
  // Its own folder, with or without --force; a hard link to an input inside another folder.
  const own = snapshot(src);
  for (const extra of [[], ['--force']]) {
    refused(run(CLI, ['convert', '--model', src, '--out', src, ...extra]), /is the same file as the input '.*src\/config\.json'/);
    assert.deepEqual(snapshot(src), own, 'the input was changed');
  }
  const linked = join(work, 'linked');
  mkdirSync(linked);
  linkSync(join(src, 'model.safetensors'), join(linked, 'model.safetensors'));
  refused(run(CLI, ['convert', '--model', src, '--out', linked, '--force']), /'.*linked\/model\.safetensors' is the same file as the input '.*src\/model\.safetensors'/);
  // A .pth's folder: the tokenizer.json beside it is read, so not written over.
  const pthDir = join(work, 'pth-here');
  mkdirSync(pthDir);
  cpSync(join(MINIMIND, 'pth_dense_tied', 'model.pth'), join(pthDir, 'model.pth'));
  writeFileSync(join(pthDir, 'tokenizer.json'), '{}');
  refused(run(CLI, ['convert', '--model', join(pthDir, 'model.pth'), '--out', pthDir, '--force']), /tokenizer\.json' is the same file as the input/);
  // --force replaces the model, and the old tokenizer.json that no longer matches goes.
  const r = run(CLI, ['convert', '--model', src, '--out', other, '--force']);
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /the old tokenizer\.json removed/);
  assert.ok(!existsSync(join(other, 'tokenizer.json')));
  assert.deepEqual(JSON.parse(readFileSync(join(other, 'config.json'), 'utf8')), JSON.parse(readFileSync(join(src, 'config.json'), 'utf8')));
  const fresh = join(work, 'fresh');
  assert.equal(run(CLI, ['convert', '--model', src, '--out', fresh]).status, 0);
  assert.deepEqual(logits(other, '1 2 3'), logits(fresh, '1 2 3'));
});

// A copy of dense_f32 with one weight set to `value` (the first of the embeddings, by name).
function withWeight(name, value) {
  const dir = join(work, name);
  cpSync(join(MINIMIND, 'dense_f32'), dir, { recursive: true });
  const { metadata, tensors } = readSafetensors(join(dir, 'model.safetensors'));
  tensors['model.layers.1.mlp.up_proj.weight'].data[5] = value;
  writeSafetensors(join(dir, 'model.safetensors'), tensors, metadata);
  return dir;
}

test('convert: float16 rounds 65519 to 65504 as torch does, and refuses a weight that would become infinity', () => {
  // torch.tensor([65519., 65520., -65520., 1e6]).half() is [65504., inf, -inf, inf]
  const ok = withWeight('w65519', 65519);
  const out = join(work, 'w65519-f16');
  let r = run(CLI, ['convert', '--model', ok, '--out', out]);
  assert.equal(r.status, 0, r.stderr);
  const buf = readFileSync(join(out, 'model.safetensors'));
  const header = JSON.parse(buf.subarray(8, 8 + Number(buf.readBigUInt64LE(0))).toString());
  const at = 8 + Number(buf.readBigUInt64LE(0)) + header['model.layers.1.mlp.up_proj.weight'].data_offsets[0] + 2 * 5;
  assert.equal(buf.readUInt16LE(at), 0x7bff); // 65504, the largest half
  assert.equal(run(CLI, ['logits', '--model', out, '--ids', '1 2', '--out', join(work, 'w65519.safetensors')]).status, 0);
  for (const [value, shown] of [[65520, '65520'], [-65520, '-65520'], [1e6, '1000000'], [3e38, '3\\.00000001e\\+38']]) {
    const bad = withWeight(`w${value}`, value);
    const dest = join(work, `w${value}-f16`);
    r = run(CLI, ['convert', '--model', bad, '--out', dest]);
    refused(r, new RegExp(`tensor 'model\\.layers\\.1\\.mlp\\.up_proj\\.weight': element 5 \\(index \\[0, 5\\]\\) is ${shown}, which float16 cannot hold.*--dtype f32 keeps it`));
    assert.ok(!existsSync(dest), 'the folder was made');
    r = run(CLI, ['convert', '--model', bad, '--out', dest, '--dtype', 'f32']);
    assert.equal(r.status, 0, r.stderr);
  }
  // NaN and infinity are refused where the model is read, before any conversion.
  for (const value of [NaN, Infinity]) {
    const bad = withWeight(`w${value}`, value);
    refused(run(CLI, ['convert', '--model', bad, '--out', join(work, `w${value}-out`)]), /up_proj\.weight': element 5 \(index \[0, 5\]\) is (NaN|\+inf)/);
    assert.ok(!existsSync(join(work, `w${value}-out`)));
  }
});
