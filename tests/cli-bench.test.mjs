// cli-bench.test.mjs — `attnlab bench` prints one JSON line with the times the benchmark
// scripts read, and refuses bad flags with one line and exit 2.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import { ROOT, VARIANTS, run } from './lib/run.mjs';

test('attnlab bench prints prefill, decode and GFLOP/s as one JSON line', () => {
  const r = run(join(VARIANTS[0].dir, 'attnlab'), ['bench', '--hidden', '64', '--heads', '4', '--kv-heads', '2',
    '--head-dim', '16', '--seq', '32', '--decode-at', '40', '--repeats', '3', '--threads', '1']);
  assert.equal(r.status, 0, r.stderr);
  const lines = r.stdout.trim().split('\n');
  assert.equal(lines.length, 1);
  const j = JSON.parse(lines[0]);
  for (const k of ['prefill_ms', 'decode_ms', 'prefill_gflops', 'decode_recompute_ms']) {
    assert.ok(Number.isFinite(j[k]) && j[k] > 0, `${k} = ${j[k]}`);
  }
  assert.equal(j.seq, 32);
  assert.equal(j.decode_at, 40);
  // Both counts of the prefill, written out: 32 queries over 32 keys, 4 heads of 16 dims and
  // 2 KV heads; the causal work leaves out the 32·31/2 scores per head after each query's key.
  const proj = 2 * 32 * 64 * 16 * (2 * 4 + 2 * 2);
  assert.equal(j.prefill_flops_rectangle, proj + 4 * 4 * 32 * 32 * 16);
  assert.equal(j.prefill_flops_causal, proj + 4 * 4 * 16 * (32 * 33 / 2));
  // GFLOP/s of the causal count (prefill_ms is printed to 0.1 µs, GFLOP/s to 1e-3)
  const gflops = j.prefill_flops_causal / (j.prefill_ms * 1e6);
  assert.ok(Math.abs(j.prefill_gflops - gflops) <= gflops * (0.6e-4 / j.prefill_ms) + 1e-3, `${j.prefill_gflops} ${gflops}`);
});

// The widest vectors this CPU has, from /proc/cpuinfo's flags (float lanes): what the memory
// read and the multiply-add ceiling must use, or their bounds are the loop's, not the machine's.
function widestLanes() {
  let flags = '';
  try {
    flags = (readFileSync('/proc/cpuinfo', 'utf8').match(/^flags\s*:(.*)$/m) || [])[1] || '';
  } catch {
    return null;
  }
  const has = (f) => flags.split(/\s+/).includes(f);
  return process.arch !== 'x64' ? null : has('avx512f') ? 16 : has('avx2') ? 8 : 4;
}

test('attnlab bench --preset: memory read with the widest loads over a buffer past the caches, FMA ceiling on the widest vectors', () => {
  const r = run(join(VARIANTS[0].dir, 'attnlab'), ['bench', '--preset', 'minimind-3', '--seq', '4', '--decode', '1', '--repeats', '1']);
  assert.equal(r.status, 0, r.stderr);
  const j = JSON.parse(r.stdout);
  // 8 × the last-level cache, at least 1 GiB, at most 2 GiB
  const want = Math.min(2 ** 31, Math.max(2 ** 30, 8 * j.last_level_cache_bytes));
  assert.equal(j.read_buffer_bytes, want, `buffer ${j.read_buffer_bytes}, cache ${j.last_level_cache_bytes}`);
  const lanes = widestLanes();
  if (lanes) {
    assert.equal(j.read_lanes, lanes, 'memory read lanes');
    assert.equal(j.fma_lanes, lanes === 4 ? 1 : lanes, 'multiply-add lanes');
  }
  const asked = run(join(VARIANTS[0].dir, 'attnlab'), ['bench', '--preset', 'minimind-3', '--seq', '4', '--decode', '1', '--repeats', '1', '--read-mib', '3']);
  assert.equal(asked.status, 0, asked.stderr);
  assert.equal(JSON.parse(asked.stdout).read_buffer_bytes, 3 * 2 ** 20);
  for (const v of ['0', '16385', 'lots']) {
    const bad = run(join(VARIANTS[0].dir, 'attnlab'), ['bench', '--preset', 'minimind-3', '--read-mib', v]);
    assert.equal(bad.status, 2);
    assert.match(bad.stderr, /--read-mib expects a size in MiB from 1 to 16384/);
    assert.equal(bad.stderr.trim().split('\n').length, 1);
  }
});

const BAD = [
  [['--threads', '2'], /only --threads 1/],
  [['--heads', '4', '--kv-heads', '3'], /multiple of n_kv_heads/],
  [['--head-dim', '7'], /head_dim must be even/],
  [['--seq', '0', '--decode-at', '0'], /sequence length and\/or a decode position/],
  [['--hidden', '16384', '--heads', '128', '--kv-heads', '128', '--head-dim', '128', '--seq', '4096'], /MiB/],
  [['--seq', 'many'], /--seq expects a whole number/],
  [['--fast'], /unknown option '--fast'/],
];
for (const [args, message] of BAD) {
  test(`attnlab bench refuses ${args.join(' ')}`, () => {
    for (const v of VARIANTS) {
      const r = run(join(v.dir, 'attnlab'), ['bench', ...args]);
      assert.equal(r.status, 2, r.stderr);
      assert.match(r.stderr, message);
      assert.equal(r.stderr.trim().split('\n').length, 1);
      assert.equal(r.stdout, '');
    }
  });
}

test('attnlab bench --model: a whole model\'s prefill and decode speed as one JSON line', () => {
  const model = join(ROOT, 'models', 'stories260K', 'stories260K.bin');
  const r = run(join(VARIANTS[0].dir, 'attnlab'), ['bench', '--model', model, '--seq', '8', '--decode', '16', '--repeats', '2', '--read-mib', '8']);
  assert.equal(r.status, 0, r.stderr);
  const j = JSON.parse(r.stdout);
  assert.equal(j.params, 260032);
  assert.equal(j.seq, 8);
  assert.equal(j.decode, 16);
  for (const k of ['prefill_ms', 'prefill_tokens_per_s', 'decode_ms', 'decode_tokens_per_s', 'read_gb_per_s', 'bandwidth_bound_tokens_per_s']) assert.ok(j[k] > 0, `${k} = ${j[k]}`);
  // A tied dense model reads every weight once per decode step (the embedding as the head).
  assert.equal(j.weight_bytes_per_token, 4 * j.params);
  assert.ok(Math.abs(j.bandwidth_bound_tokens_per_s - j.read_gb_per_s * 1e9 / j.weight_bytes_per_token) <= 0.01 * j.bandwidth_bound_tokens_per_s);
  // The compute bound: the prefill's operations (8 tokens, the last one's logits) at the measured
  // fused multiply-add ceiling. (That the prefill stays under it, two speeds measured, is the
  // bench's: tests/bench/run.mjs.)
  assert.ok(j.prefill_flops > 2 * 8 * (j.params - 512 * 64) && j.fma_peak_gflops > 0, `${j.prefill_flops} ${j.fma_peak_gflops}`);
  assert.ok(Math.abs(j.compute_bound_prefill_tokens_per_s - j.fma_peak_gflops * 1e9 * 8 / j.prefill_flops) <= 0.01 * j.compute_bound_prefill_tokens_per_s);
  // An untied model reads one row of its embedding (left out); an MoE layer reads top_k experts.
  const fixtures = join(ROOT, 'tests', 'fixtures', 'minimind');
  for (const [name, unread] of [
    ['untied', (c) => c.vocab_size * c.hidden_size],
    ['moe_top2_norm', (c) => c.num_hidden_layers * (c.num_experts - c.num_experts_per_tok) * 3 * c.moe_intermediate_size * c.hidden_size],
  ]) {
    const cfg = JSON.parse(readFileSync(join(fixtures, name, 'config.json'), 'utf8'));
    const m = run(join(VARIANTS[0].dir, 'attnlab'), ['bench', '--model', join(fixtures, name), '--seq', '4', '--decode', '2', '--repeats', '1', '--read-mib', '8']);
    assert.equal(m.status, 0, m.stderr);
    const mj = JSON.parse(m.stdout);
    assert.equal(mj.weight_bytes_per_token, 4 * (mj.params - unread(cfg)), name);
  }
  // The MiniMind-3 preset, even for a context shorter than one pass's 64 tokens.
  const preset = run(join(VARIANTS[0].dir, 'attnlab'), ['bench', '--preset', 'minimind-3', '--seq', '8', '--decode', '2', '--repeats', '1', '--read-mib', '8']);
  assert.equal(preset.status, 0, preset.stderr);
  const pj = JSON.parse(preset.stdout);
  assert.equal(pj.params, 63912192);
  assert.equal(pj.weight_bytes_per_token, 4 * pj.params);
  const bad = run(join(VARIANTS[0].dir, 'attnlab'), ['bench', '--preset', 'gpt-5']);
  assert.equal(bad.status, 2);
  assert.match(bad.stderr, /--preset: only 'minimind-3' is known \(got 'gpt-5'\)/);
  const long = run(join(VARIANTS[0].dir, 'attnlab'), ['bench', '--model', model, '--seq', '500', '--decode', '100']);
  assert.equal(long.status, 2);
  assert.match(long.stderr, /must fit the context of 512/);
});
