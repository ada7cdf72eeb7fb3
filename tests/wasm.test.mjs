// wasm.test.mjs — the WebAssembly build through its JavaScript binding (web/core/attnlab-api.js),
// in Node: the same PyTorch fixtures as the native tests, native and WASM equal within 1e-6 on
// the same inputs, the tutorial's checks through the JS API, and errors reaching JS as thrown
// errors carrying the core's message.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT, run } from './lib/run.mjs';
import { maxDiff, readSafetensors } from './lib/safetensors.mjs';
import { AttnLab, factory, loadCore, wasmBytes } from './lib/wasm.mjs';

const core = await loadCore();

const work = mkdtempSync(join(tmpdir(), 'attnlab-wasm-'));
process.on('exit', () => rmSync(work, { recursive: true, force: true }));

const DEMOS = join(ROOT, 'tests', 'fixtures', 'demo');
for (const file of readdirSync(DEMOS).filter((f) => f.endsWith('.txt'))) {
  const [demo, lang, seed] = file.split('.');
  test(`wasm: demo ${demo} ${lang} seed ${seed} equals PyTorch's output`, () => {
    // the file's name is the command line's (mlp-moe), the binding's the ABI's enum (mlp_moe)
    const text = core.demo(demo.replace('-', '_'), lang, seed === 'default' ? -1 : Number(seed));
    assert.ok(text === readFileSync(join(DEMOS, file), 'utf8'), `${file} differs`);
  });
}

const CASES = join(ROOT, 'tests', 'fixtures', 'attention');
const names = readFileSync(join(CASES, 'INDEX.txt'), 'utf8').split('\n').filter(Boolean);

function optionsFrom(argsTxt) {
  const a = argsTxt.trim().split(/\s+/).filter(Boolean);
  const o = {};
  for (let i = 0; i < a.length; i += 2) {
    const v = Number(a[i + 1]);
    if (a[i] === '--rope-base') o.ropeBase = v;
    else if (a[i] === '--eps') o.eps = v;
    else if (a[i] === '--prefill') o.prefill = v;
    else if (a[i] === '--layer') o.layer = v;
    else throw new Error(`unexpected flag ${a[i]}`);
  }
  return { flags: a, options: o };
}

for (const name of names) {
  test(`wasm: forward ${name} against PyTorch and against the native build`, () => {
    const dir = join(CASES, name);
    const { flags, options } = optionsFrom(readFileSync(join(dir, 'args.txt'), 'utf8'));
    const { bytes, summary } = core.forward(readFileSync(join(dir, 'weights.safetensors')),
      readFileSync(join(dir, 'input.safetensors')), options);
    const wasmFile = join(work, `${name}.wasm.safetensors`);
    writeFileSync(wasmFile, bytes);
    const got = readSafetensors(wasmFile).tensors;
    const want = readSafetensors(join(dir, 'expected.safetensors')).tensors;
    const nativeFile = join(work, `${name}.native.safetensors`);
    const r = run(join(ROOT, 'build', 'attnlab'), ['forward', '--weights', join(dir, 'weights.safetensors'),
      '--input', join(dir, 'input.safetensors'), '--out', nativeFile, ...flags]);
    assert.equal(r.status, 0, r.stderr);
    const native = readSafetensors(nativeFile).tensors;
    assert.equal(summary.seq, want.output.shape[1]);
    for (const t of ['output', 'attn_weights', 'k_cache', 'v_cache', 'output_cached']) {
      const vsTorch = maxDiff(got[t].data, want[t].data);
      assert.ok(vsTorch.worst <= 1e-5, `${t}: WASM vs PyTorch ${vsTorch.worst.toExponential(3)} at [${vsTorch.at}]`);
      const vsNative = maxDiff(got[t].data, native[t].data);
      assert.ok(vsNative.worst <= 1e-6, `${t}: WASM vs native ${vsNative.worst.toExponential(3)} at [${vsNative.at}]`);
    }
  });
}

const kernels = readSafetensors(join(ROOT, 'tests', 'fixtures', 'kernels.safetensors'));
const SESSIONS = {
  session_seeds: { hidden: 16, heads: 4, kvHeads: 2, headDim: 8, ropeBase: 10000, qkNorm: true, seed: 42, promptLen: 4, decodeSteps: 3 },
  session_mqa: { hidden: 24, heads: 6, kvHeads: 1, headDim: 4, ropeBase: 500000, qkNorm: true, seed: 7, promptLen: 6, decodeSteps: 5 },
  session_mha: { hidden: 16, heads: 2, kvHeads: 2, headDim: 16, ropeBase: 100, qkNorm: true, seed: 123, promptLen: 1, decodeSteps: 6 },
};
for (const [tag, cfg] of Object.entries(SESSIONS)) {
  test(`wasm: session ${tag} steps like PyTorch and passes the tutorial's checks`, () => {
    const s = core.createSession(cfg);
    try {
      s.prefill();
      assert.equal(s.length, cfg.promptLen);
      while (s.length < s.total) s.step();
      assert.throws(() => s.step(), /decode steps have run/);
      const out = maxDiff(s.outputs(), kernels.tensors[`${tag}.out`].data);
      assert.ok(out.worst <= 1e-5, `outputs differ by ${out.worst}`);
      const n = s.total;
      const want = kernels.tensors[`${tag}.weights`].data;
      for (let h = 0; h < cfg.heads; h++) {
        const d = maxDiff(s.attention(h), want.subarray(h * n * n, (h + 1) * n * n));
        assert.ok(d.worst <= 1e-5, `head ${h} weights differ by ${d.worst}`);
      }
      for (const c of s.verify()) assert.ok(c.passed, `${c.name}: ${c.value} > ${c.threshold}`);
    } finally {
      s.free();
    }
  });
}

test('wasm: the checks hold across configurations (MHA, GQA, MQA, no QK-Norm, long sequences)', () => {
  const configs = [
    { hidden: 64, heads: 8, kvHeads: 8, headDim: 16, ropeBase: 10000, qkNorm: true, seed: 1, promptLen: 17, decodeSteps: 9 },
    { hidden: 96, heads: 6, kvHeads: 3, headDim: 32, ropeBase: 1e6, qkNorm: false, seed: 2, promptLen: 5, decodeSteps: 40 },
    { hidden: 48, heads: 4, kvHeads: 1, headDim: 128, ropeBase: 500000, qkNorm: true, seed: 3, promptLen: 64, decodeSteps: 64 },
  ];
  for (const cfg of configs) {
    const s = core.createSession(cfg);
    try {
      s.prefill();
      while (s.length < s.total) s.step();
      for (const c of s.verify()) assert.ok(c.passed, `${JSON.stringify(cfg)} ${c.name}: ${c.value}`);
      assert.equal(core.kvCacheBytes(1, s.length, cfg.kvHeads, cfg.headDim), 2 * s.length * cfg.kvHeads * cfg.headDim * 4);
      assert.ok(s.flopsFull(s.length, s.length) > s.flopsFull(1, s.length));
    } finally {
      s.free();
    }
  }
});

test('wasm: GQA map and KV-head choices come from the core', () => {
  assert.deepEqual(core.gqaMap(8, 2), [0, 0, 0, 0, 1, 1, 1, 1]);
  assert.deepEqual(core.kvChoices(12), [1, 2, 3, 4, 6, 12]);
  assert.throws(() => core.gqaMap(8, 3), AttnLab.AttnLabError);
});

test('wasm: the bench starts from the core\'s settings (al_bench_config_default)', () => {
  const d = core.benchDefaults;
  assert.deepEqual([d.seq, d.decode_at, d.seed], [0, 0, 0]);
  assert.ok(d.repeats >= 1);
  assert.equal(d['hp.rope_base'], core.layerDefaults.rope_base);
  const r = core.bench({ hidden: 16, heads: 4, kvHeads: 2, headDim: 8, seq: 4 });
  assert.ok(r.prefillMs > 0 && r.decodeMs === 0, JSON.stringify(r));
});

test('wasm: the rules behind the page\'s labels and corrections come from the core', () => {
  assert.deepEqual([[8, 8], [8, 2], [8, 1], [8, 3]].map(([h, kv]) => core.kvSharing(h, kv)), ['mha', 'gqa', 'mqa', 'invalid']);
  assert.deepEqual([[8, 3], [6, 4], [16, 16]].map(([h, kv]) => core.kvNearest(h, kv)), [2, 3, 16]);
  assert.deepEqual(core.ropePairs(6, 'half_split'), [[0, 3], [1, 4], [2, 5]]);
  assert.deepEqual(core.ropePairs(6, 'interleaved'), [[0, 1], [2, 3], [4, 5]]);
  assert.deepEqual([[16, 1024], [6, 1024], [4, 7]].map(([h, w]) => core.headDimMost(h, w)), [64, 170, -1]);
  // a size the core refuses: its own message, not one made here
  assert.throws(() => core.ropePairs(7, 'interleaved'), /RoPE pairs: head_dim must be even and in \[2, \d+\] \(got 7\)/);
  assert.throws(() => core.ropeAngles(4, 7, 10000), /head_dim must be even and in \[2, \d+\] \(got 7\)/);
});

test('wasm: the core\'s errors reach JS as thrown errors with its message', () => {
  const base = { hidden: 16, heads: 4, kvHeads: 2, headDim: 8, ropeBase: 10000, qkNorm: true, seed: 0, promptLen: 4, decodeSteps: 3 };
  assert.throws(() => core.createSession({ ...base, kvHeads: 3 }), /n_heads \(4\) must be a multiple of n_kv_heads \(3\)/);
  assert.throws(() => core.createSession({ ...base, headDim: 7 }), /head_dim must be even/);
  assert.throws(() => core.createSession({ ...base, ropeBase: 1 }), /rope_base must be/);
  assert.throws(() => core.createSession({ ...base, hidden: 4096, heads: 32, kvHeads: 32, headDim: 256, promptLen: 4096, decodeSteps: 4096 }), /MiB/);
  assert.throws(() => core.createSession({ ...base, seed: -1 }), /seed/);
  assert.throws(() => core.createSession({ ...base, hidden: 1.5 }), /hidden/);
  assert.throws(() => core.demo('basic', 'fr'), /unknown language/);
  const s = core.createSession(base);
  assert.throws(() => s.verify(), /needs the prefill/);
  assert.throws(() => s.attention(4), /head/);
  s.free();
  assert.throws(() => s.prefill(), /freed/);
  const good = join(CASES, names[0]);
  const malformed = join(ROOT, 'tests', 'malformed');
  const expected = readFileSync(join(malformed, 'EXPECTED.txt'), 'utf8').split('\n').filter((l) => l && !l.startsWith('#'));
  for (const line of expected) {
    const [file, stage, , ...fragment] = line.split(' ');
    assert.throws(() => core.forward(readFileSync(join(malformed, file)), readFileSync(join(good, 'input.safetensors'))),
      (e) => e instanceof AttnLab.AttnLabError && (stage !== 'parse' || e.message.includes(fragment.join(' '))),
      `${file} should be refused`);
  }
});

test('wasm: the loader refuses missing or broken bytes with a clear message', async () => {
  await assert.rejects(factory({}), /wasmBinary \(the bytes of attnlab\.wasm\) is required/);
  const bytes = wasmBytes();
  await assert.rejects(factory({ wasmBinary: bytes.subarray(0, bytes.length >> 1) }), /^Error: attnlab\.wasm could not be started: .+ \(the page needs WebAssembly with SIMD\)$/);
  await assert.rejects(factory({ wasmBinary: new Uint8Array([1, 2, 3]) }), /attnlab\.wasm could not be started/);
});

test('wasm: memory growth keeps the binding\'s views valid', () => {
  // A session large enough to grow the 16 MiB initial memory; its outputs are then read
  // through views made after the growth.
  const before = core.heapStats().heapBytes;
  const s = core.createSession({ hidden: 512, heads: 8, kvHeads: 2, headDim: 64, ropeBase: 1e6, qkNorm: true, seed: 7, promptLen: 1024, decodeSteps: 2 });
  try {
    s.prefill();
    s.step();
    assert.ok(core.heapStats().heapBytes > before, 'the heap grew');
    const w = s.attention(0);
    let rowSum = 0;
    for (let j = 0; j < s.length; j++) rowSum += w[(s.length - 1) * s.length + j];
    assert.ok(Math.abs(rowSum - 1) < 1e-5, `the last attention row sums to ${rowSum}`);
    assert.ok(s.verify().every((c) => c.passed));
  } finally {
    s.free();
  }
});

// The bench's measures of WebAssembly's own ceiling: SIMD128's four lanes, speeds that are
// speeds (a loop the engine could fold away would claim thousands of GFLOP/s); bad shapes
// refused. (The kernel's speed against the ceiling is the bench's: tests/bench/run.mjs.)
test('wasm: the SIMD128 ceiling and the matrix kernel\'s speed are measured', () => {
  const peak = core.fmaPeak();
  assert.equal(peak.lanes, 4);
  assert.ok(peak.gflops > 0 && peak.gflops < 1000, `SIMD128 peak ${peak.gflops} GFLOP/s`);
  const g = core.gemmBench(64, 256, 256, 3);
  assert.ok(g > 0 && g < 1000, `the kernel at ${g} GFLOP/s`);
  assert.throws(() => core.gemmBench(0, 16, 16, 1), /m must be/);
  assert.throws(() => core.gemmBench(4, 16, 16, 0), /repeats/);
});
