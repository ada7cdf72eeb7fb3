// minimind.test.mjs — the whole decoder on MiniMind checkpoints (config.json + model.safetensors,
// float32, float16, bfloat16) against an independent PyTorch reference of MiniMindForCausalLM
// (tests/reference/minimind_model.py, itself checked against MiniMind's own code; fixtures by
// tests/fixtures/gen_minimind.py): dense and MoE (top-1 and top-2, norm_topk_prob on and off),
// YaRN, untied heads, GQA, MHA, MQA, a head_dim that is not hidden/heads. One pass's logits
// within 1e-4 (relative to their largest value), every layer's attention within 1e-5, MoE
// routing (experts and weights) as the reference routes, and greedy continuations of 24
// tokens identical, with and without a repetition penalty.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT, VARIANTS, run } from './lib/run.mjs';
import { maxDiff, readSafetensors } from './lib/safetensors.mjs';

const FIXTURES = join(ROOT, 'tests', 'fixtures', 'minimind');
const cases = readFileSync(join(FIXTURES, 'INDEX.txt'), 'utf8').split('\n').filter(Boolean)
  .filter((name) => existsSync(join(FIXTURES, name, 'model.safetensors'))); // the .pth ones: not read yet
const work = mkdtempSync(join(tmpdir(), 'attnlab-minimind-'));
process.on('exit', () => rmSync(work, { recursive: true, force: true }));
const cli = join(VARIANTS[0].dir, 'attnlab');

for (const name of cases) {
  test(`${name}: logits, attention and routing of one pass`, () => {
    const dir = join(FIXTURES, name);
    const want = readSafetensors(join(dir, 'expected.safetensors'));
    const out = join(work, `${name}.safetensors`);
    const r = run(cli, ['logits', '--model', dir, '--ids', want.metadata.ids, '--out', out]);
    assert.equal(r.status, 0, r.stderr);
    const got = readSafetensors(out).tensors;
    for (const [tensor, w] of Object.entries(want.tensors)) {
      if (tensor.startsWith('resid.') || tensor.startsWith('route_probs.')) continue; // the reference's diagnostics
      assert.ok(got[tensor], `${tensor} missing`);
      assert.deepEqual(got[tensor].shape, w.shape, `${tensor} shape`);
      const tolerance = tensor === 'logits' ? 1e-4 : tensor.startsWith('route_ids.') ? 0 : 1e-5;
      const { worst, at } = maxDiff(got[tensor].data, w.data);
      assert.ok(worst <= tolerance, `${tensor}: max difference ${worst.toExponential(2)} at ${at} (got ${got[tensor].data[at]}, want ${w.data[at]})`);
    }
    // The residual stream's norm [layers + 1, seq]: row l + 1 is ‖resid.l‖ of the reference's
    // stream after block l; row 0 the embedding rows' norms (read where the weights are F32).
    const [seq, hidden] = want.tensors['resid.0'].shape;
    const layers = Object.keys(want.tensors).filter((t) => t.startsWith('resid.')).length;
    const norms = got.resid_norm;
    assert.ok(norms, 'resid_norm missing');
    assert.deepEqual(norms.shape, [layers + 1, seq]);
    const norm = (v, at) => Math.sqrt(Array.from(v.subarray(at, at + hidden)).reduce((a, x) => a + x * x, 0));
    const expect = new Float32Array((layers + 1) * seq);
    for (let l = 0; l < layers; l++)
      for (let t = 0; t < seq; t++) expect[(l + 1) * seq + t] = norm(want.tensors[`resid.${l}`].data, t * hidden);
    const ids = want.metadata.ids.split(' ').map(Number);
    const weights = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8')).torch_dtype === 'float32'
      ? readSafetensors(join(dir, 'model.safetensors')).tensors['model.embed_tokens.weight'] : null;
    for (let t = 0; t < seq; t++) expect[t] = weights ? norm(weights.data, ids[t] * hidden) : norms.data[t];
    const { worst, at } = maxDiff(norms.data, expect);
    assert.ok(worst <= 1e-5, `resid_norm: max difference ${worst.toExponential(2)} at ${at} (got ${norms.data[at]}, want ${expect[at]})`);
  });

  test(`${name}: greedy continuations, with and without a repetition penalty`, () => {
    const dir = join(FIXTURES, name);
    const g = JSON.parse(readFileSync(join(dir, 'generate.json'), 'utf8'));
    for (const run_ of g.runs) {
      const r = run(cli, ['generate', '--model', dir, '--ids', run_.prompt_ids.join(' '),
        '--max-new-tokens', String(g.max_new_tokens), '--temperature', '0',
        '--repetition-penalty', String(run_.repetition_penalty), '--print-ids']);
      assert.equal(r.status, 0, r.stderr);
      const got = r.stdout.trim() ? r.stdout.trim().split(' ').map(Number) : [];
      // MiniMind's generate keeps the EOS it stops at; the CLI stops before printing it.
      const want = run_.stop === 'eos' ? run_.ids.slice(0, -1) : run_.ids;
      assert.deepEqual(got, want, `prompt ${run_.prompt_ids.join(' ')}, penalty ${run_.repetition_penalty} (smallest gap ${run_.min_gap})`);
    }
  });
}

test('a MiniMind folder that does not match its config is refused with one line', async () => {
  const { cpSync, writeFileSync } = await import('node:fs');
  const bad = join(work, 'bad-model');
  cpSync(join(FIXTURES, 'dense_f32'), bad, { recursive: true });
  const config = JSON.parse(readFileSync(join(bad, 'config.json'), 'utf8'));
  const refusals = [
    [{ ...config, num_hidden_layers: 3 }, /tensor 'model.layers.2.input_layernorm.weight' not found/],
    [{ ...config, hidden_size: 48 }, /tensor 'model.embed_tokens.weight' has 2 dimensions \[512, 64\], config.json implies \[512, 48\]/],
    [{ ...config, num_hidden_layers: 1 }, /tensor 'model.layers.1.[a-z_.]+' has no place in the model/],
    [{ ...config, num_key_value_heads: 3 }, /multiple of n_kv_heads/],
    [{ ...config, rms_norm_eps: 'small' }, /"rms_norm_eps" must be a finite number/],
  ];
  for (const [c, message] of refusals) {
    writeFileSync(join(bad, 'config.json'), JSON.stringify(c));
    const r = run(cli, ['generate', '--model', bad, '--ids', '1 2', '--max-new-tokens', '2']);
    assert.equal(r.status, 2, `${JSON.stringify(c).slice(0, 60)}: ${r.stderr}`);
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    assert.match(r.stderr, message);
  }
  writeFileSync(join(bad, 'config.json'), '{"hidden_size": ');
  const r = run(cli, ['inspect', '--model', bad]);
  assert.equal(r.status, 2);
  assert.match(r.stderr, /config.json is not valid JSON/);
});
