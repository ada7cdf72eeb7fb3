// minimind.test.mjs — the whole decoder on MiniMind checkpoints (config.json + model.safetensors,
// float32, float16, bfloat16) against an independent PyTorch reference of MiniMindForCausalLM
// (tests/reference/minimind_model.py, itself checked against MiniMind's own code; fixtures by
// tests/fixtures/gen_minimind.py): dense and MoE (top-1 and top-2, norm_topk_prob on and off),
// YaRN, untied heads, GQA, MHA, MQA, a head_dim that is not hidden/heads, attention-only
// (intermediate_size 0: empty FFN weights, in a folder and in a .pth). One pass's logits
// within 1e-4 (relative to their largest value), every layer's attention within 1e-5, MoE
// routing (experts and weights) as the reference routes, and greedy continuations of 24
// tokens identical, with and without a repetition penalty. The pth_* cases are MiniMind's own
// training output (torch.save of the state_dict, float16): the CLI reads model.pth with the flags
// their config.json implies and must reproduce that config.json from the shapes and flags.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT, VARIANTS, run } from './lib/run.mjs';
import { maxDiff, readSafetensors, writeSafetensors } from './lib/safetensors.mjs';

const FIXTURES = join(ROOT, 'tests', 'fixtures', 'minimind');
const cases = readFileSync(join(FIXTURES, 'INDEX.txt'), 'utf8').split('\n').filter(Boolean);
const work = mkdtempSync(join(tmpdir(), 'attnlab-minimind-'));
process.on('exit', () => rmSync(work, { recursive: true, force: true }));
const cli = join(VARIANTS[0].dir, 'attnlab');
const config = (name) => JSON.parse(readFileSync(join(FIXTURES, name, 'config.json'), 'utf8'));

// What a .pth cannot say, as flags: what config.json sets apart from MiniMind's defaults (top-1,
// norm_topk_prob on, rope_theta 1e6, eps 1e-6, no YaRN, 32768 positions).
function pthFlags(c) {
  const flags = [];
  if (c.use_moe && c.num_experts_per_tok !== 1) flags.push('--moe-top-k', String(c.num_experts_per_tok));
  if (c.use_moe && c.norm_topk_prob === false) flags.push('--no-norm-topk-prob');
  if (c.rope_theta !== 1e6) flags.push('--rope-theta', String(c.rope_theta));
  if (c.rms_norm_eps !== 1e-6) flags.push('--eps', String(c.rms_norm_eps));
  if (c.inference_rope_scaling) flags.push('--yarn');
  assert.equal(c.max_position_embeddings, 32768, 'a .pth gets MiniMind\'s max_position_embeddings');
  assert.equal(c.rope_scaling, null, 'a .pth gets MiniMind\'s YaRN settings only');
  return flags;
}

// --model and what goes with it: the folder, or its model.pth and the flags.
function modelArgs(name) {
  const dir = join(FIXTURES, name);
  const pth = join(dir, 'model.pth');
  return existsSync(pth) ? ['--model', pth, ...pthFlags(config(name))] : ['--model', dir];
}

for (const name of cases) {
  test(`${name}: logits, attention and routing of one pass`, () => {
    const dir = join(FIXTURES, name);
    const want = readSafetensors(join(dir, 'expected.safetensors'));
    const out = join(work, `${name}.safetensors`);
    const r = run(cli, ['logits', ...modelArgs(name), '--ids', want.metadata.ids, '--out', out]);
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
    const weights = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8')).torch_dtype === 'float32' && existsSync(join(dir, 'model.safetensors'))
      ? readSafetensors(join(dir, 'model.safetensors')).tensors['model.embed_tokens.weight'] : null;
    for (let t = 0; t < seq; t++) expect[t] = weights ? norm(weights.data, ids[t] * hidden) : norms.data[t];
    const { worst, at } = maxDiff(norms.data, expect);
    assert.ok(worst <= 1e-5, `resid_norm: max difference ${worst.toExponential(2)} at ${at} (got ${norms.data[at]}, want ${expect[at]})`);
  });

  test(`${name}: greedy continuations, with and without a repetition penalty`, () => {
    const dir = join(FIXTURES, name);
    const g = JSON.parse(readFileSync(join(dir, 'generate.json'), 'utf8'));
    for (const run_ of g.runs) {
      const r = run(cli, ['generate', ...modelArgs(name), '--ids', run_.prompt_ids.join(' '),
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

// A temperature so small that a logit divided by it leaves float's range is the limit T → 0+:
// the step is greedy, the tokens temperature 0's (once NaN probabilities picked the last id every
// time). 1e-38 and 1e-40 overflow every logit of a real model; 1e-37 overflows a logit of 40 and
// more (40 / 1e-37 > 3.4e38), here from dense_f32 with its final norm scaled up.
test('generate at a temperature too small for the logits chooses as temperature 0 does', () => {
  const gen = (model, t) => {
    const r = run(cli, ['generate', '--model', model, '--ids', '1 5 9', '--max-new-tokens', '12', '--temperature', t,
      '--seed', '7', '--print-ids']);
    assert.equal(r.status, 0, r.stderr);
    return r.stdout.trim();
  };
  const fortunes = join(ROOT, 'models', 'minimind-fortunes');
  const greedy = gen(fortunes, '0');
  for (const t of ['1e-38', '1e-40', '1e-45']) assert.equal(gen(fortunes, t), greedy, `--temperature ${t}`);
  const loud = join(work, 'loud');
  mkdirSync(loud);
  copyFileSync(join(FIXTURES, 'dense_f32', 'config.json'), join(loud, 'config.json'));
  const { metadata, tensors } = readSafetensors(join(FIXTURES, 'dense_f32', 'model.safetensors'));
  const lastLogits = () => {
    const out = join(work, 'loud.safetensors');
    assert.equal(run(cli, ['logits', '--model', loud, '--ids', '1 5 9', '--out', out]).status, 0);
    const { shape, data } = readSafetensors(out).tensors.logits;
    return data.subarray((shape[0] - 1) * shape[1]);
  };
  writeSafetensors(join(loud, 'model.safetensors'), tensors, metadata);
  const before = Math.max(...lastLogits());
  tensors['model.norm.weight'].data = tensors['model.norm.weight'].data.map((w) => w * 45 / before);
  writeSafetensors(join(loud, 'model.safetensors'), tensors, metadata);
  const largest = Math.max(...lastLogits());
  assert.ok(largest >= 40 && largest / Math.fround(1e-37) > 3.4028234663852886e38, `largest logit ${largest}`);
  assert.equal(gen(loud, '1e-37'), gen(loud, '0'));
});

// The configuration inspect reports for a .pth (from its shapes and the flags) is its config.json's.
for (const name of cases.filter((n) => existsSync(join(FIXTURES, n, 'model.pth')))) {
  test(`${name}: the configuration read from the .pth's shapes is its config.json`, () => {
    const c = config(name);
    const r = run(cli, ['inspect', ...modelArgs(name)]);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /^MiniMind \.pth /);
    const number = (re) => {
      const m = re.exec(r.stdout);
      assert.ok(m, `${re} not in\n${r.stdout}`);
      return m.slice(1).map((v) => (/^\d|^-/.test(v) ? Number(v) : v));
    };
    const [vocab, hidden, layers, heads, kvHeads, headDim] =
      number(/vocab (\d+), hidden (\d+), layers (\d+), heads (\d+), kv heads (\d+) \(GQA x\d+\), head_dim (\d+)/);
    assert.deepEqual([vocab, hidden, layers, heads, kvHeads, headDim],
      [c.vocab_size, c.hidden_size, c.num_hidden_layers, c.num_attention_heads, c.num_key_value_heads,
        c.head_dim ?? c.hidden_size / c.num_attention_heads]);
    const [ffn, kind, context, theta, eps, qkNorm, head] =
      number(/ffn (\d+|none) \((SwiGLU|attention-only)\).*, context (\d+), rope_theta ([^ ]+) .*, eps ([^ ,]+), qk_norm (on|off), lm_head (tied|its own)/);
    assert.deepEqual([ffn, kind, context, theta, eps, qkNorm, head],
      [c.intermediate_size || 'none', c.intermediate_size ? 'SwiGLU' : 'attention-only', c.max_position_embeddings, c.rope_theta,
        c.rms_norm_eps, 'on', c.tie_word_embeddings ? 'tied' : 'its own']);
    if (c.use_moe) {
      assert.deepEqual(number(/MoE: (\d+) experts of (\d+), top-(\d+) per token, norm_topk_prob (on|off)/),
        [c.num_experts, c.moe_intermediate_size, c.num_experts_per_tok, c.norm_topk_prob ? 'on' : 'off']);
    } else {
      assert.doesNotMatch(r.stdout, /MoE:/);
    }
    assert.equal(/YaRN:/.test(r.stdout), c.inference_rope_scaling);
    const dtype = { float16: 'F16', float32: 'F32' }[c.torch_dtype];
    assert.match(r.stdout, new RegExp(`${dtype} in the \\.pth`));
    assert.match(r.stdout, new RegExp(`\\n {2}model\\.embed_tokens\\.weight ${dtype} \\[\\d+, \\d+\\]\\n`));
  });
}

test('the flags give a .pth what its shapes cannot', () => {
  const moe = join(FIXTURES, 'pth_moe_top2', 'model.pth');
  const r = run(cli, ['inspect', '--model', moe, '--moe-top-k', '2', '--no-norm-topk-prob', '--rope-theta', '10000',
    '--eps', '1e-5', '--yarn', '--heads', '4']);
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /heads 4, kv heads 2 .*\n.*rope_theta 10000 \(half-split, YaRN\), eps 1e-05,/);
  assert.match(r.stdout, /\nMoE: 4 experts of 32, top-2 per token, norm_topk_prob off\n/);
  assert.match(r.stdout, /\nYaRN: factor 16, original context 2048, beta_fast 32, beta_slow 1, attention factor 1\n/);
  const plain = run(cli, ['inspect', '--model', moe]);
  assert.match(plain.stdout, /rope_theta 1e\+06 \(half-split\), eps 1e-06,.*\nMoE: 4 experts of 32, top-1 per token, norm_topk_prob on\n/);
});

test('generate --chat with a .pth takes the tokenizer.json beside it', () => {
  const folder = join(work, 'chat-pth');
  mkdirSync(folder, { recursive: true });
  const pth = join(folder, 'model.pth');
  copyFileSync(join(FIXTURES, 'pth_state_dict', 'model.pth'), pth);
  const alone = run(cli, ['generate', '--model', pth, '--chat', 'hi', '--max-new-tokens', '2']);
  assert.equal(alone.status, 2);
  assert.match(alone.stderr, /^attnlab: --chat needs a tokenizer: '.*model\.pth' has no tokenizer\.json \(give --tokenizer\)\n$/);
  // MiniMind's tokenizer beside it is found, and refused: 6400 tokens for a 512-token model.
  copyFileSync(join(ROOT, 'models', 'minimind-tokenizer', 'tokenizer.json'), join(folder, 'tokenizer.json'));
  const beside = run(cli, ['generate', '--model', pth, '--chat', 'hi', '--max-new-tokens', '2']);
  assert.equal(beside.status, 2);
  assert.match(beside.stderr, /the tokenizer has 6400 tokens but the model's vocabulary has 512/);
  const bin = run(cli, ['generate', '--model', join(ROOT, 'models', 'stories260K', 'stories260K.bin'), '--chat', 'hi']);
  assert.equal(bin.status, 2);
  assert.match(bin.stderr, /--model must be a MiniMind folder \(config\.json, model\.safetensors\) or \.pth/);
});

test('a .pth that cannot be read, or flags that do not fit it, are refused with one line', () => {
  const dense = join(FIXTURES, 'pth_dense_tied', 'model.pth');
  const moe = join(FIXTURES, 'pth_moe_top2', 'model.pth');
  const bytes = readFileSync(dense);
  const truncated = join(work, 'truncated.pth');
  writeFileSync(truncated, bytes.subarray(0, bytes.length - 30));
  // A pickle naming os.system where torch's rebuild function was (the directory's CRC of
  // data.pkl set to 0, "not computed", so the pickle itself is what gets refused).
  const evil = Buffer.from(bytes);
  const at = evil.indexOf('torch._utils\n_rebuild_tensor_v2\n');
  evil.write('os\nsystem\n'.padEnd(32, 'N'), at, 'latin1');
  evil.fill(0, evil.indexOf('PK\x01\x02') + 16, evil.indexOf('PK\x01\x02') + 20);
  const evilPath = join(work, 'evil.pth');
  writeFileSync(evilPath, evil);
  const deflated = Buffer.from(bytes);
  deflated.writeUInt16LE(8, deflated.indexOf('PK\x01\x02') + 10);
  const deflatedPath = join(work, 'deflated.pth');
  writeFileSync(deflatedPath, deflated);
  for (const [args, message] of [
    [['--model', truncated], /truncated\.pth: zip: no end of central directory record/],
    [['--model', evilPath], /evil\.pth: pickle: refusing global os\.system at byte \d+/],
    [['--model', deflatedPath], /deflated\.pth: zip: entry 'model\/data\.pkl' is compressed \(method 8, deflate\)/],
    [['--model', dense, '--moe-top-k', '2'], /MoE routing given \(top-k 2, norm_topk_prob on\), but the checkpoint has no experts/],
    [['--model', moe, '--moe-top-k', '9'], /MoE top-k 9 given, but the checkpoint has 4 experts/],
    [['--model', dense, '--heads', '8'], /8 heads given, but q_proj's 32 rows and q_norm's head_dim 8 make 4/],
    [['--model', dense, '--eps', '0'], /--eps expects a number in \(0, 1\)/],
    [['--model', dense, '--eps', '1'], /--eps expects a number in \(0, 1\)/],
    [['--model', dense, '--heads', '0'], /--heads expects a number of attention heads from 1 to 256/],
    [['--model', dense, '--moe-top-k', '300'], /--moe-top-k expects a number of experts per token from 1 to 256/],
    [['--model', dense, '--rope-theta'], /--rope-theta expects a positive number/],
    [['--model', join(FIXTURES, 'dense_f32'), '--yarn'], /--yarn applies to a \.pth checkpoint only; '.*dense_f32' gives its own configuration/],
  ]) {
    for (const command of [['generate', '--ids', '1 2', '--max-new-tokens', '2'], ['inspect'], ['logits', '--ids', '1', '--out', join(work, 'o.safetensors')]]) {
      const r = run(cli, [command[0], ...args, ...command.slice(1)]);
      assert.equal(r.status, 2, `${command[0]} ${args.join(' ')}: ${r.stderr}`);
      assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
      assert.match(r.stderr, message);
    }
  }
});

// The largest MoE the limits allow, 256 layers of 256 experts (198,402 tensors of a few floats
// each), every weight in model.safetensors and one more, last in the file: refused, naming it.
// The check is the file's names less the model's (n log n); the guard is for a hang only.
test('a MiniMind folder of 200k tensors with one the model has no place for is refused, naming it', () => {
  const dir = join(work, 'moe-200k');
  mkdirSync(dir, { recursive: true });
  const L = 256, E = 256;
  writeFileSync(join(dir, 'config.json'), JSON.stringify({
    hidden_size: 2, num_hidden_layers: L, num_attention_heads: 1, num_key_value_heads: 1, head_dim: 2, vocab_size: 1,
    max_position_embeddings: 8, use_moe: true, num_experts: E, num_experts_per_tok: 1, moe_intermediate_size: 1,
  }));
  const tensors = {};
  const weight = (name, shape) => { tensors[name] = { shape, data: new Array(shape[0] * (shape[1] ?? 1)).fill(0.5) }; };
  weight('model.embed_tokens.weight', [1, 2]);
  weight('model.norm.weight', [2]);
  for (let l = 0; l < L; l++) {
    const layer = `model.layers.${l}.`;
    weight(`${layer}input_layernorm.weight`, [2]);
    for (const x of ['q', 'k', 'v', 'o']) weight(`${layer}self_attn.${x}_proj.weight`, [2, 2]);
    weight(`${layer}post_attention_layernorm.weight`, [2]);
    weight(`${layer}mlp.gate.weight`, [E, 2]);
    for (let e = 0; e < E; e++) {
      weight(`${layer}mlp.experts.${e}.gate_proj.weight`, [1, 2]);
      weight(`${layer}mlp.experts.${e}.up_proj.weight`, [1, 2]);
      weight(`${layer}mlp.experts.${e}.down_proj.weight`, [2, 1]);
    }
  }
  weight(`model.layers.${L - 1}.mlp.experts.${E}.gate_proj.weight`, [1, 2]);
  assert.equal(Object.keys(tensors).length, 2 + L * (7 + 3 * E) + 1);
  writeSafetensors(join(dir, 'model.safetensors'), tensors);
  const r = run(cli, ['inspect', '--model', dir], { timeout: 30000 });
  assert.equal(r.signal, null, 'still running after 30 s');
  assert.equal(r.status, 2, r.stderr);
  assert.match(r.stderr, /^attnlab: [^\n]*: tensor 'model\.layers\.255\.mlp\.experts\.256\.gate_proj\.weight' has no place in the model config\.json describes\n$/);
  rmSync(dir, { recursive: true, force: true });
});

test('a MiniMind folder that does not match its config is refused with one line', async () => {
  const { cpSync, writeFileSync } = await import('node:fs');
  const bad = join(work, 'bad-model');
  cpSync(join(FIXTURES, 'dense_f32'), bad, { recursive: true });
  const config = JSON.parse(readFileSync(join(bad, 'config.json'), 'utf8'));
  const { rope_scaling: _, inference_rope_scaling: __, ...withoutYarn } = config;
  const yarn = (fields) => ({ ...config, rope_scaling: { type: 'yarn', ...fields } });
  const refusals = [
    [{ ...config, num_hidden_layers: 3 }, /tensor 'model.layers.2.input_layernorm.weight' not found/],
    [{ ...config, hidden_size: 48 }, /tensor 'model.embed_tokens.weight' has 2 dimensions \[512, 64\], config.json implies \[512, 48\]/],
    [{ ...config, num_hidden_layers: 1 }, /tensor 'model.layers.1.[a-z_.]+' has no place in the model/],
    [{ ...config, num_key_value_heads: 3 }, /multiple of n_kv_heads/],
    [{ ...config, rms_norm_eps: 'small' }, /"rms_norm_eps" must be a finite number/],
    // intermediate_size null is MiniMind's default for hidden 64 (256); 0 is attention-only
    [{ ...config, intermediate_size: null }, /'model.layers.0.mlp.gate_proj.weight' has 2 dimensions \[128, 64\], config.json implies \[256, 64\]/],
    [{ ...config, intermediate_size: 0 }, /'model.layers.0.mlp.gate_proj.weight' has 2 dimensions \[128, 64\], config.json implies \[0, 64\]/],
    [{ ...config, use_moe: true, intermediate_size: 0, moe_intermediate_size: 0 },
      /"moe_intermediate_size" must be at least 1 with use_moe \(absent or 0, it is intermediate_size\)/],
    // a MoE needs experts, and each token 1 to num_experts of them (MiniMind's topk)
    [{ ...config, use_moe: true, num_experts: 0 }, /config\.json: "num_experts" must be at least 1 with use_moe \(got 0\)/],
    [{ ...config, use_moe: true, n_routed_experts: 0 }, /"num_experts" must be at least 1 with use_moe \(got 0\)/],
    [{ ...config, use_moe: true, num_experts_per_tok: 0 }, /"num_experts_per_tok" must be from 1 to num_experts \(4\) \(got 0\)/],
    [{ ...config, use_moe: true, num_experts: 2, num_experts_per_tok: 3 },
      /"num_experts_per_tok" must be from 1 to num_experts \(2\) \(got 3\)/],
    // rope_scaling given turns YaRN on; each field must be one precompute_freqs_cis can use
    [yarn({ factor: 0 }), /config\.json: "rope_scaling\.factor" must be at least 1 \(got 0\)/],
    [yarn({ factor: -4 }), /"rope_scaling\.factor" must be at least 1 \(got -4\)/],
    [yarn({ factor: 0.5 }), /"rope_scaling\.factor" must be at least 1 \(got 0\.5\)/],
    [yarn({ factor: 1e7 }), /YaRN factor must be in \[1, 1e6\] \(got 1e\+07\)/],
    [yarn({ original_max_position_embeddings: 0 }), /"rope_scaling\.original_max_position_embeddings" must be at least 1 \(got 0\)/],
    [yarn({ beta_fast: 1, beta_slow: 1 }), /"rope_scaling\.beta_fast" must be above beta_slow \(1\) \(got 1\)/],
    [yarn({ beta_fast: 0.5 }), /"rope_scaling\.beta_fast" must be above beta_slow \(1\) \(got 0\.5\)/],
    [yarn({ beta_slow: 0 }), /"rope_scaling\.beta_slow" must be above 0 \(got 0\)/],
    [yarn({ beta_fast: -1, beta_slow: -2 }), /"rope_scaling\.beta_slow" must be above 0 \(got -2\)/],
    [yarn({ attention_factor: 0 }), /"rope_scaling\.attention_factor" must be above 0 \(got 0\)/],
    [yarn({ attention_factor: -1 }), /"rope_scaling\.attention_factor" must be above 0 \(got -1\)/],
    // the object turns YaRN on even where inference_rope_scaling false comes after it
    [{ ...withoutYarn, rope_scaling: { factor: 0 }, inference_rope_scaling: false }, /"rope_scaling\.factor" must be at least 1 \(got 0\)/],
  ];
  for (const [c, message] of refusals) {
    writeFileSync(join(bad, 'config.json'), JSON.stringify(c));
    for (const command of [['generate', '--ids', '1 2', '--max-new-tokens', '2'], ['inspect']]) {
      const r = run(cli, [command[0], '--model', bad, ...command.slice(1)]);
      assert.equal(r.status, 2, `${command[0]} ${JSON.stringify(c).slice(-80)}: ${r.stderr}`);
      assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
      assert.match(r.stderr, message);
    }
  }
  // A field rope_scaling leaves out takes MiniMind's default (factor 16, not 0: YaRN stays on).
  writeFileSync(join(bad, 'config.json'), JSON.stringify(yarn({})));
  const yarnDefaults = run(cli, ['inspect', '--model', bad]);
  assert.equal(yarnDefaults.status, 0, yarnDefaults.stderr);
  assert.match(yarnDefaults.stdout, /\nYaRN: factor 16, original context 2048, beta_fast 32, beta_slow 1, attention factor 1\n/);
  writeFileSync(join(bad, 'config.json'), '{"hidden_size": ');
  const r = run(cli, ['inspect', '--model', bad]);
  assert.equal(r.status, 2);
  assert.match(r.stderr, /config.json is not valid JSON/);
});
