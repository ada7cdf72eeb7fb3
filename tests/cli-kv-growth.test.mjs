// cli-kv-growth.test.mjs — `attnlab kv-growth` prints the KV cache's growth as a table whose
// numbers match the formulas written out here (not the core's own functions): bytes
// 2·len·kv_heads·head_dim·4 (MHA: kv_heads = heads; MQA: 1); a call of q queries over k keys
// costs 2·q·hidden·head_dim·(2·heads + 2·kv_heads) + 4·heads·q·k·head_dim FLOPs, the prefill
// being prompt over prompt, a decode step with the cache 1 over len and without it len over
// len. The WebAssembly binding's kvGrowth gives the same rows. Bad flags get one line and exit 2.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { ROOT, VARIANTS, run } from './lib/run.mjs';
import { loadCore } from './lib/wasm.mjs';

const CLI = join(VARIANTS[0].dir, 'attnlab');

function table(args) {
  const r = run(CLI, ['kv-growth', ...args]);
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stderr, '');
  const lines = r.stdout.trimEnd().split('\n');
  assert.match(lines[0], /^# KV cache growth: /);
  assert.deepEqual(lines[1].trim().split(/\s+/), ['step', 'cache_len', 'bytes', 'mha_bytes', 'mqa_bytes', 'flops_with_cache', 'flops_without_cache']);
  return { head: lines[0], rows: lines.slice(2).map((l) => l.trim().split(/\s+/)) };
}

// The rows the formulas give, as the table prints them.
function expected({ hidden, heads, kv, hd, prompt, steps }) {
  const flops = (q, k) => 2 * q * hidden * hd * (2 * heads + 2 * kv) + 4 * heads * q * k * hd;
  const bytes = (len, kvHeads) => 2 * len * kvHeads * hd * 4;
  const rows = [];
  for (let i = 0; i <= steps; i++) {
    const len = prompt + i;
    rows.push([i === 0 ? 'prefill' : String(i), len, bytes(len, kv), bytes(len, heads), bytes(len, 1),
      i === 0 ? flops(prompt, prompt) : flops(1, len), flops(len, len)].map(String));
  }
  return rows;
}

const CONFIGS = [
  { hidden: 16, heads: 4, kv: 2, hd: 8, prompt: 4, steps: 3 },
  { hidden: 768, heads: 8, kv: 4, hd: 96, prompt: 512, steps: 6 },
  { hidden: 64, heads: 6, kv: 1, hd: 32, prompt: 1, steps: 0 },
  { hidden: 512, heads: 8, kv: 8, hd: 64, prompt: 2000, steps: 48 },
];
for (const c of CONFIGS) {
  test(`attnlab kv-growth: hidden ${c.hidden}, ${c.heads}/${c.kv} heads, head_dim ${c.hd}, prompt ${c.prompt}, ${c.steps} steps`, async () => {
    const args = ['--hidden', c.hidden, '--heads', c.heads, '--kv-heads', c.kv, '--head-dim', c.hd, '--prompt', c.prompt, '--steps', c.steps].map(String);
    const { head, rows } = table(args);
    assert.match(head, new RegExp(`hidden ${c.hidden}, ${c.heads} heads, ${c.kv} KV heads, head_dim ${c.hd}; prefill of ${c.prompt} tokens, then ${c.steps} decode steps`));
    assert.deepEqual(rows, expected(c));
    const core = await loadCore();
    const wasm = core.kvGrowth({ hidden: c.hidden, heads: c.heads, kvHeads: c.kv, headDim: c.hd }, c.prompt, c.steps);
    assert.deepEqual(wasm.map((r, i) => [i === 0 ? 'prefill' : String(i), r.len, r.bytes, r.bytes_mha, r.bytes_mqa, r.flops_cached, r.flops_uncached].map(String)), expected(c));
  });
}

test('the layer view\'s FLOPs chart draws kvGrowth\'s rows as they are and says it counts the full rectangle', async () => {
  const Kv = await import('../web/charts/kv.js');
  const c = CONFIGS[0];
  const rows = (await loadCore()).kvGrowth({ hidden: c.hidden, heads: c.heads, kvHeads: c.kv, headDim: c.hd }, c.prompt, c.steps);
  const want = expected(c);
  for (const lang of ['en', 'zh']) {
    const chart = Kv.kvFlopsConfig({ rows, scope: 'layer', current: rows.length - 1, lang });
    assert.deepEqual(chart.data.datasets.map((s) => s.data.map((p) => String(p.y))), [want.map((r) => r[5]), want.map((r) => r[6])]);
    assert.deepEqual(chart.data.datasets[0].data.map((p) => String(p.x)), want.map((r) => r[1]));
    assert.match(chart.options.plugins.subtitle.text.join(' '), /n_query × n_keys/);
  }
});

test('attnlab kv-growth defaults to the tutorial\'s example 6: its layer, a prompt of 4 and 3 steps', () => {
  assert.deepEqual(table([]).rows, expected({ hidden: 16, heads: 4, kv: 2, hd: 8, prompt: 4, steps: 3 }));
});

test('kvGrowth in WebAssembly: the core\'s refusal reaches JS with its message', async () => {
  const core = await loadCore();
  assert.throws(() => core.kvGrowth({ hidden: 16, heads: 4, kvHeads: 3, headDim: 8 }, 4, 3), /n_heads \(4\) must be a multiple of n_kv_heads \(3\)/);
  assert.throws(() => core.kvGrowth({ hidden: 16, heads: 4, kvHeads: 2, headDim: 8 }, 65536, 1), /together at most 65536/);
});

const BAD = [
  [['--heads', '4', '--kv-heads', '3'], /multiple of n_kv_heads/],
  [['--head-dim', '7'], /head_dim must be even/],
  [['--prompt', '0'], /--prompt expects a whole number between 1 and 65536/],
  [['--steps', '-1'], /--steps expects a whole number between 0 and 65535/],
  [['--prompt', '65000', '--steps', '1000'], /together at most 65536 tokens/],
  [['--hidden', 'wide'], /--hidden expects a whole number/],
  [['--heads'], /--heads expects a whole number/],
  [['--batch', '2'], /unknown option '--batch' for kv-growth/],
];
for (const [args, message] of BAD) {
  test(`attnlab kv-growth refuses ${args.join(' ')}`, () => {
    for (const v of VARIANTS) {
      const r = run(join(v.dir, 'attnlab'), ['kv-growth', ...args]);
      assert.equal(r.status, 2, r.stderr);
      assert.match(r.stderr, message);
      assert.equal(r.stderr.trim().split('\n').length, 1);
      assert.equal(r.stdout, '');
    }
  });
}
