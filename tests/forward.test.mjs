// forward.test.mjs — `attnlab forward` against PyTorch: for every case of
// tests/fixtures/attention (from tests/fixtures/gen_attention.py, the seeds' own
// SimpleAttention) the CLI's output file must hold the same output, attention weights, KV
// cache and cached output within 1e-5; and bad input must fail with one line, exit 2 and no
// output file.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT, VARIANTS, run } from './lib/run.mjs';
import { maxDiff, readSafetensors, writeSafetensors } from './lib/safetensors.mjs';

const CASES = join(ROOT, 'tests', 'fixtures', 'attention');
const TOLERANCE = 1e-5;
const names = readFileSync(join(CASES, 'INDEX.txt'), 'utf8').split('\n').filter(Boolean);
const work = mkdtempSync(join(tmpdir(), 'attnlab-forward-'));
process.on('exit', () => rmSync(work, { recursive: true, force: true }));

function forward(variant, caseDir, extra = []) {
  const out = join(work, `${variant.name}-${Math.random().toString(36).slice(2)}.safetensors`);
  const args = ['forward', '--weights', join(caseDir, 'weights.safetensors'),
    '--input', join(caseDir, 'input.safetensors'), '--out', out, ...extra];
  return { out, r: run(join(variant.dir, 'attnlab'), args) };
}

for (const variant of VARIANTS) {
  for (const name of names) {
    test(`${variant.name}: forward ${name}`, () => {
      const dir = join(CASES, name);
      const flags = readFileSync(join(dir, 'args.txt'), 'utf8').trim().split(/\s+/).filter(Boolean);
      const { out, r } = forward(variant, dir, flags);
      assert.equal(r.status, 0, r.stderr);
      assert.match(r.stdout, /max \|output - output_cached\|/);
      const got = readSafetensors(out).tensors;
      const want = readSafetensors(join(dir, 'expected.safetensors')).tensors;
      for (const tensor of ['output', 'attn_weights', 'k_cache', 'v_cache', 'output_cached']) {
        assert.ok(got[tensor], `${tensor} missing from the output`);
        assert.deepEqual(got[tensor].shape, want[tensor].shape, `${tensor} shape`);
        const { worst, at } = maxDiff(got[tensor].data, want[tensor].data);
        assert.ok(worst <= TOLERANCE,
          `${tensor}: max difference ${worst.toExponential(3)} at [${at}] ` +
          `(got ${got[tensor].data[at]}, want ${want[tensor].data[at]})`);
      }
      rmSync(out);
    });
  }
}

// Each malformed weights file must be refused with the message its EXPECTED.txt line names.
const MALFORMED = join(ROOT, 'tests', 'malformed');
const expected = readFileSync(join(MALFORMED, 'EXPECTED.txt'), 'utf8').split('\n')
  .filter((l) => l && !l.startsWith('#'))
  .map((l) => {
    const [file, stage, status, ...fragment] = l.split(' ');
    return { file, stage, status, fragment: fragment.join(' ') };
  });
const GOOD = join(CASES, names[0]);

function expectRefusal(r, out, pattern) {
  assert.equal(r.signal, null, `killed by ${r.signal}: ${r.stderr}`);
  assert.equal(r.status, 2, `exit ${r.status}: ${r.stderr}`);
  const lines = r.stderr.trim().split('\n');
  assert.equal(lines.length, 1, `expected one line on stderr, got:\n${r.stderr}`);
  assert.match(lines[0], /^attnlab: /);
  if (pattern instanceof RegExp) assert.match(lines[0], pattern);
  else if (pattern) assert.ok(lines[0].includes(pattern), `"${lines[0]}" lacks "${pattern}"`);
  assert.ok(!existsSync(out), 'an output file was left behind');
  assert.deepEqual(readdirSync(work).filter((f) => f.includes('.tmp.')), [], 'a temporary file was left behind');
}

for (const variant of VARIANTS) {
  for (const m of expected) {
    test(`${variant.name}: malformed ${m.file} is refused as weights and as input`, () => {
      const bad = join(MALFORMED, m.file);
      const out = join(work, 'never.safetensors');
      let r = run(join(variant.dir, 'attnlab'), ['forward', '--weights', bad,
        '--input', join(GOOD, 'input.safetensors'), '--out', out]);
      // A file whose tensors are valid but not attention weights may fail later, on names.
      expectRefusal(r, out, m.stage === 'parse' ? m.fragment : null);
      r = run(join(variant.dir, 'attnlab'), ['forward', '--weights', join(GOOD, 'weights.safetensors'),
        '--input', bad, '--out', out]);
      expectRefusal(r, out, m.stage === 'parse' ? m.fragment : null);
    });
  }
}

// Well-formed files with contents that cannot make an attention layer, and bad flags.
function layerTensors({ hidden = 16, heads = 4, kv = 2, dim = 8 } = {}) {
  const t = (shape) => ({ shape, data: Array.from({ length: shape.reduce((a, b) => a * b, 1) }, (_, i) => Math.sin(i) * 0.1) });
  return {
    'q_proj.weight': t([heads * dim, hidden]), 'k_proj.weight': t([kv * dim, hidden]),
    'v_proj.weight': t([kv * dim, hidden]), 'o_proj.weight': t([hidden, heads * dim]),
    'q_norm.weight': t([dim]), 'k_norm.weight': t([dim]),
  };
}
const INPUT = join(GOOD, 'input.safetensors'); // x [.., .., 16]

const CONFIG_CASES = [
  ['heads not a multiple of kv heads', () => layerTensors({ heads: 3, kv: 2 }), [], /multiple of n_kv_heads/],
  ['odd head_dim', () => layerTensors({ dim: 7 }), [], /head_dim 7.*even/],
  ['missing tensor', () => { const t = layerTensors(); delete t['v_proj.weight']; return t; }, [], /'v_proj.weight' not found/],
  ['misshapen tensor', () => { const t = layerTensors(); t['o_proj.weight'].shape = [32, 16]; return t; }, [], /'o_proj.weight' has shape \[32, 16\], expected \[16, 32\]/],
  ['1-D projection', () => { const t = layerTensors(); t['k_proj.weight'].shape = [256]; return t; }, [], /'k_proj.weight' has 1 dimensions/],
  ['NaN in a weight', () => { const t = layerTensors(); t['k_proj.weight'].data[5] = NaN; return t; }, [], /k_proj.weight.*(NaN|non-finite)/i],
  ['infinite norm weight', () => { const t = layerTensors(); t['q_norm.weight'].data[0] = Infinity; return t; }, [], /q_norm.weight.*(inf|non-finite)/i],
  ['hidden size differs from x', () => layerTensors({ hidden: 12 }), [], /hidden size 16 but the weights expect 12/],
  ['hidden size beyond the limit', () => layerTensors({ hidden: 16400, heads: 1, kv: 1, dim: 2 }), [], /hidden must be between 1 and 16384 \(got 16400\)/],
  ['a dimension of size 0', () => { const t = layerTensors(); t['q_norm.weight'] = { shape: [0], data: [] }; return t; }, [], /'q_norm.weight' has an empty dimension/],
  ['shape and data disagree', () => ({ 'q_proj.weight': { shape: [8, 20000], data: [] } }), [], /needs 640000 bytes/],
  ['MiniMind checkpoint without --layer', () => Object.fromEntries(Object.entries(layerTensors()).map(([k, v]) => [`model.layers.0.self_attn.${k}`, v])), [], /--layer/],
  ['--layer that does not exist', () => Object.fromEntries(Object.entries(layerTensors()).map(([k, v]) => [`model.layers.0.self_attn.${k}`, v])), ['--layer', '3'], /model.layers.3.self_attn.q_proj.weight' not found/],
  ['metadata rope_base not a number', () => layerTensors(), ['META:rope_base=abc'], /rope_base' is not a finite number/],
  ['metadata eps out of range', () => layerTensors(), ['META:eps=2'], /eps must be in/],
  ['--rope-base 1', () => layerTensors(), ['--rope-base', '1'], /rope_base must be/],
  ['--prefill longer than the sequence', () => layerTensors(), ['--prefill', '999'], /prefill of 999 tokens is longer/],
  ['--prefill 0', () => layerTensors(), ['--prefill', '0'], /--prefill expects/],
  ['--eps nan', () => layerTensors(), ['--eps', 'nan'], /--eps expects/],
  ['unknown flag', () => layerTensors(), ['--fast'], /unknown option '--fast'/],
  ['flag without value', () => layerTensors(), ['--layer'], /--layer expects/],
];

for (const [what, make, flags, message] of CONFIG_CASES) {
  test(`forward refuses: ${what}`, () => {
    const weights = join(work, 'config-case.safetensors');
    const meta = Object.fromEntries(flags.filter((f) => f.startsWith('META:')).map((f) => f.slice(5).split('=')));
    const cliFlags = flags.filter((f) => !f.startsWith('META:'));
    writeSafetensors(weights, make(), Object.keys(meta).length ? meta : undefined);
    for (const variant of VARIANTS) {
      const out = join(work, 'never.safetensors');
      const r = run(join(variant.dir, 'attnlab'), ['forward', '--weights', weights, '--input', INPUT, '--out', out, ...cliFlags]);
      expectRefusal(r, out, message);
    }
  });
}

test('forward refuses non-finite input and missing files, and never leaves a file behind', () => {
  const x = readSafetensors(INPUT).tensors.x;
  const data = Array.from(x.data);
  data[3] = NaN;
  const badInput = join(work, 'nan-input.safetensors');
  writeSafetensors(badInput, { x: { shape: x.shape, data } });
  const wrongName = join(work, 'wrong-name.safetensors');
  writeSafetensors(wrongName, { input: x });
  const twoD = join(work, 'two-d.safetensors');
  writeSafetensors(twoD, { x: { shape: [x.shape[1], x.shape[2]], data: x.data.slice(0, x.shape[1] * x.shape[2]) } });
  const weights = join(GOOD, 'weights.safetensors');
  for (const variant of VARIANTS) {
    const out = join(work, 'never.safetensors');
    const cli = join(variant.dir, 'attnlab');
    expectRefusal(run(cli, ['forward', '--weights', weights, '--input', badInput, '--out', out]), out, /x.*(NaN|non-finite)/i);
    expectRefusal(run(cli, ['forward', '--weights', weights, '--input', wrongName, '--out', out]), out, /no tensor named 'x'/);
    expectRefusal(run(cli, ['forward', '--weights', weights, '--input', twoD, '--out', out]), out, /\[batch, seq, hidden\]/);
    expectRefusal(run(cli, ['forward', '--weights', join(work, 'absent.safetensors'), '--input', INPUT, '--out', out]), out, /cannot open/);
    expectRefusal(run(cli, ['forward', '--weights', work, '--input', INPUT, '--out', out]), out, /not a regular file/);
    expectRefusal(run(cli, ['forward', '--input', INPUT, '--out', out]), out, /needs --weights, --input and --out/);
  }
});

test('an existing output file is replaced whole, or left untouched on failure', () => {
  const out = join(work, 'existing.safetensors');
  writeFileSync(out, 'previous contents');
  const bad = join(MALFORMED, expected[0].file);
  const cli = join(VARIANTS[0].dir, 'attnlab');
  const r = run(cli, ['forward', '--weights', bad, '--input', INPUT, '--out', out]);
  assert.equal(r.status, 2);
  assert.equal(readFileSync(out, 'utf8'), 'previous contents');
  const ok = run(cli, ['forward', '--weights', join(GOOD, 'weights.safetensors'), '--input', INPUT, '--out', out]);
  assert.equal(ok.status, 0, ok.stderr);
  assert.ok(readSafetensors(out).tensors.output);
});
