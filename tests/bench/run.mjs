// run.mjs — `npm run bench`: everything measured in one run, side by side, written to
// tests/out/bench.json and tests/out/bench.md (and printed), each target beside what was
// measured, met or not (a target missed is reported, never a failed run: the tests check
// behaviour, and only here is time measured):
//   - the native core against PyTorch (the tutorial's SimpleAttention, one thread) on the same
//     weights and inputs: prefill and one decode step at the seeds' size and MiniMind's;
//   - the WebAssembly build under Node against the native build on the same work, and against
//     onnxruntime-web and TensorFlow.js's WebAssembly backend (tests/bench/peers.mjs);
//   - a decode step's cost as the cache grows, with the cache and by recomputing without it;
//   - the page in headless Chromium: control change to painted charts, and load to first chart;
//     while the Train tab trains, an input (a click, a key on a select or a slider) to the
//     frame that shows its answer (tests/bench/train_input.mjs);
//     the layer lab at its largest settings (load, Step, language switch, Pause); the model
//     view's load, its drawing of a step and its answer to a page.evaluate during Play;
//   - the model view's head lines over 512 tokens (a recording canvas under Node);
//   - the tokenizers: 100 KB encoded and 1 MB trained, as their C tests print it and through
//     the CLI with the process included;
//   - sizes of the .wasm, its JS glue and the page;
//   - the model view's Experiments panel: a head switched off → every chart on the screen that
//     shows a changed value painted (stories260K at 64 tokens, tests/bench/ablate.mjs); `attnlab patch` from each block up against a whole forward per patch
//     (--full-forward), alternated, on stories260K (32 tokens) and a MiniMind-3-shaped model
//     (64 tokens);
//   - whole models: stories260K's greedy generation (against llama2.c's run.c when
//     LLAMA2C_RUN_C names its source file; tests/bench/stories.mjs, also runnable alone), and a MiniMind-3-shaped model's prefill and decode
//     against the PyTorch reference model (tests/bench/torch_model_bench.py) and against the
//     memory-bandwidth bound;
//   - the GGUF round trip through llama.cpp (tests/bench/llama_cpp.mjs, also runnable alone);
//   - llama.cpp as the speed peer on the same weights: natively (tests/bench/llama_cpp_speed.mjs)
//     and in WebAssembly, @wllama/wllama in headless Chromium (tests/bench/wllama.mjs), each
//     runnable alone;
//   - the WebAssembly core on two threads against one in headless Chromium, on the same models
//     (tests/bench/wasm_threads.mjs, also runnable alone).
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { gzipSync } from 'node:zlib';
import { manyTokenLines } from '../lib/fake-canvas.mjs';
import { PROGRAMS } from '../lib/programs.mjs';
import { ROOT, run } from '../lib/run.mjs';
import { storyText100KB } from '../lib/tok-texts.mjs';
import { megabyteCorpus } from '../lib/train-corpus.mjs';
import { loadCore } from '../lib/wasm.mjs';
import { TARGET_MS as ABLATE_MS, ablateTimes } from './ablate.mjs';
import { addedTokensBench } from './added_tokens.mjs';
import { minimind3Folders } from './minimind3_files.mjs';
import { blasLabel, cpuFlags, torchEnv } from './blas.mjs';
import { llamaCppBench, llamaCppMarkdown, llamaCppTarget } from './llama_cpp.mjs';
import { llamaCppSpeedBench, llamaCppSpeedMarkdown, llamaCppSpeedTargets } from './llama_cpp_speed.mjs';
import { wllamaBench, wllamaMarkdown, wllamaTargets } from './wllama.mjs';
import { wasmThreadsBench, wasmThreadsMarkdown, wasmThreadsTargets } from './wasm_threads.mjs';
import { peersBench, peersMarkdown, peersTargets } from './peers.mjs';
import { storiesRounds } from './stories.mjs';
import { ROUNDS, median, showRatio, spread } from './stats.mjs';
import { TARGET_MS as TRAIN_INPUT_MS, showTrainInput, trainInputRun } from './train_input.mjs';

const OUT = join(ROOT, 'tests', 'out');
const CLI = join(ROOT, 'build', 'attnlab');
const SIZES = {
  seeds: { hidden: 16, heads: 4, kv_heads: 2, head_dim: 8, rope_base: 10000 },
  'minimind2-small': { hidden: 512, heads: 8, kv_heads: 2, head_dim: 64, rope_base: 1e6 },
  'minimind-3': { hidden: 768, heads: 8, kv_heads: 4, head_dim: 96, rope_base: 1e6 },
};
const SEQS = [128, 512, 2048];
const CACHES = [128, 512, 2048];
const quick = process.argv.includes('--quick');
// runs per round (the layer is timed in ROUNDS rounds: layerRounds)
const repeatsFor = (size, n) => (quick ? 3 : size === 'seeds' ? 60 : n >= 2048 ? 3 : 7);

// The work list: prefill (seq) and decode (decode_at) cases, as one record each.
const cases = [];
for (const [size, dims] of Object.entries(SIZES)) {
  for (const seq of [...(size === 'seeds' ? [6] : []), ...SEQS]) cases.push({ size, kind: 'prefill', ...dims, seq, decode_at: 0, repeats: repeatsFor(size, seq) });
  for (const at of CACHES) cases.push({ size, kind: 'decode', ...dims, seq: 0, decode_at: at, repeats: repeatsFor(size, at) });
}

function nativeBench(c) {
  const args = ['bench', '--hidden', c.hidden, '--heads', c.heads, '--kv-heads', c.kv_heads, '--head-dim', c.head_dim,
    '--rope-base', c.rope_base, '--seq', c.seq, '--decode-at', c.decode_at, '--repeats', c.repeats, '--threads', 1].map(String);
  return JSON.parse(execFileSync(CLI, args, { encoding: 'utf8' }));
}

// The PyTorch processes' environment: one thread, and OpenBLAS's widest kernel (blas.mjs).
const TORCH = torchEnv();

function torchBench(list) {
  if (TORCH.blas.note) return { note: `${TORCH.blas.note} (apt-get install -y python3-torch libopenblas0-pthread): skipped` };
  const r = spawnSync('/usr/bin/python3', [join(ROOT, 'tests', 'bench', 'torch_bench.py'), JSON.stringify(list)],
    { encoding: 'utf8', maxBuffer: 1 << 26, env: TORCH.env });
  if (r.status !== 0) return { note: `PyTorch benchmark failed: ${r.stderr.trim().split('\n').pop()}` };
  const results = r.stdout.trim().split('\n').map((l) => JSON.parse(l));
  return { version: results[0].blas.torch, blas: results[0].blas, results };
}

// The layer, ROUNDS rounds of native (one process per case), PyTorch (one process for every
// case) and WebAssembly (this process) one after the other; per case, each side's median time
// over the rounds and each ratio's median and range.
function layerRounds(core) {
  const rounds = [];
  for (let r = 0; r < ROUNDS; r++) {
    console.error(`  round ${r + 1} of ${ROUNDS}`);
    const native = cases.map((c) => nativeBench(c));
    const torch = torchBench(cases.map((c) => ({ hidden: c.hidden, heads: c.heads, kv_heads: c.kv_heads, head_dim: c.head_dim, rope_base: c.rope_base, seq: c.seq, decode_at: c.decode_at, repeats: Math.min(c.repeats, 50) })));
    const wasm = cases.map((c) => {
      const w = core.bench({ hidden: c.hidden, heads: c.heads, kvHeads: c.kv_heads, headDim: c.head_dim, ropeBase: c.rope_base, seq: c.seq, decodeAt: c.decode_at, repeats: Math.max(3, Math.min(c.repeats, 50)) });
      return { prefill_ms: w.prefillMs, decode_ms: w.decodeMs };
    });
    rounds.push({ native, torch, wasm });
  }
  return rounds;
}

async function pageTimings() {
  const { launch, openPage, largestLayerLab, modelViewDrawn } = await import('../lib/browser.mjs');
  const { startServer } = await import('../../web/serve.mjs');
  const server = await startServer(0);
  const base = `http://127.0.0.1:${server.address().port}/`;
  const browser = await launch();
  const out = { load: [], change: {} };
  try {
    for (let i = 0; i < (quick ? 2 : 5); i++) {
      const { page } = await openPage(browser.context, `${base}#tab=layer&lang=en`);
      out.load.push(Number(await page.evaluate(() => document.body.dataset.readyMs)));
      await page.close();
    }
    for (const seq of [16, 64, 128, 512]) {
      const { page } = await openPage(browser.context, `${base}#tab=layer&lang=en&prompt=${seq}&steps=0`);
      // Control changes in rotation — the seed (new weights: attention and checks), the RoPE
      // base (RoPE charts too), head_dim and the number of heads (every chart). Each change is
      // made at the start of a frame (in a requestAnimationFrame callback), computed by the layer
      // view's worker, and timed until the frame after its answer was drawn has been rendered: a
      // message posted from a frame's callback is delivered only after the frame's style, layout
      // and paint. So the time is the change's work (the core in the worker, the charts'
      // canvases, the DOM) and one wait for a frame after the answer, not the wait for the
      // display's next refresh that a change made at a random moment adds.
      const times = await page.evaluate(async (n) => {
        const frame = () => new Promise((r) => requestAnimationFrame(() => r()));
        const painted = (resolve, t0) => requestAnimationFrame(() => {
          const channel = new MessageChannel();
          channel.port1.onmessage = () => resolve(performance.now() - t0);
          channel.port2.postMessage(0);
        });
        const changedAndPainted = (control, value) => new Promise((resolve) => requestAnimationFrame(() => {
          const t0 = performance.now();
          control.value = value;
          control.dispatchEvent(new Event('change'));
          window.attnlab.layerView.idle().then(() => painted(resolve, t0));
        }));
        const changes = [
          (i) => ['seed', String(100 + i)],
          (i) => ['base', i % 2 ? '500000' : '10000'],
          (i) => ['hd', i % 2 ? '16' : '8'],
          (i) => ['heads', i % 2 ? '8' : '4'],
        ];
        const result = [];
        for (let i = 0; i < n; i++) {
          const [id, value] = changes[i % changes.length](Math.floor(i / changes.length));
          const control = document.getElementById(id);
          await frame();
          result.push(await changedAndPainted(control, value));
        }
        return result;
      }, quick ? 8 : 40);
      out.change[seq] = times;
      await page.close();
    }
    // The model view: load → first attention drawn (served and from file://), and the page's
    // drawing of each step during Play at a context of 128 and of 512 tokens (stories260K; the
    // link replays the prompt and the steps before, then Play runs; each step's 'attnlab:draw'
    // measure is its charts, DOM and layout).
    out.model = { load: { served: [], file: [] }, step: {} };
    const file = `${pathToFileURL(join(ROOT, 'dist', 'attnlab.html'))}`;
    for (let i = 0; i < (quick ? 3 : 7); i++) {
      for (const [where, url] of [['served', `${base}#lang=en`], ['file', `${file}#lang=en`]]) {
        const { page } = await openPage(browser.context, url);
        out.model.load[where].push(Number(await page.evaluate(() => document.body.dataset.firstAttentionMs)));
        await page.close();
      }
    }
    const text = 'Once upon a time there was a little girl named Lily';
    for (const ctx of [128, 512]) {
      const { page } = await openPage(browser.context, `${base}#lang=en&temp=0&gen=${ctx - 40}&text=${encodeURIComponent(text)}`);
      const times = await page.evaluate(async (n) => {
        performance.clearMeasures('attnlab:draw');
        document.getElementById('btn-gen-play').click();
        await new Promise((resolve) => {
          const timer = setInterval(() => {
            if (performance.getEntriesByName('attnlab:draw').length >= n || document.getElementById('btn-gen-step').disabled) {
              clearInterval(timer);
              resolve();
            }
          }, 20);
        });
        document.getElementById('btn-gen-play').click();
        return performance.getEntriesByName('attnlab:draw').map((e) => [e.detail.len, e.duration]);
      }, 40);
      out.model.step[ctx] = times.filter(([len]) => len >= ctx - 20 && len <= ctx + 20).map(([, ms]) => ms);
      await page.close();
    }
    // The model view answering while it plays: page.evaluate round trips (a request to the page
    // and its answer) once Play reads Pause.
    {
      const { page } = await openPage(browser.context, `${base}#lang=en&text=${encodeURIComponent('Once upon a time')}`);
      await modelViewDrawn(page);
      await page.click('#btn-gen-play');
      await page.waitForFunction(() => document.getElementById('btn-gen-play').textContent === 'Pause');
      out.model.answer = [];
      for (let i = 0; i < (quick ? 8 : 24); i++) {
        const t0 = performance.now();
        await page.evaluate(() => 1 + 1);
        out.model.answer.push(performance.now() - t0);
      }
      await page.click('#btn-gen-play');
      await page.close();
    }
    // The Experiments panel: a head switched off, as a person clicks it, until every chart on the
    // screen that shows a changed value is painted (tests/bench/ablate.mjs).
    out.model.ablate = (await ablateTimes(browser.context, base, quick ? 6 : 24)).settled;
    // The layer lab at its largest settings, run as its page test runs it (tests/lib/browser.mjs):
    // load to the last decode step, a Step, the median of three language switches, Pause.
    const largest = [];
    for (let i = 0; i < (quick ? 1 : 3); i++) {
      const r = await largestLayerLab(browser.context, base);
      if (r.problems.length) throw new Error(`the layer lab at its largest settings: ${r.problems.join('; ')}`);
      largest.push({ load_ms: r.load_ms, step_ms: r.step_ms, lang_ms: median(r.lang_ms), pause_ms: r.pause_ms });
    }
    out.largest = { runs: largest, ...Object.fromEntries(['load_ms', 'step_ms', 'lang_ms', 'pause_ms'].map((k) => [k, median(largest.map((r) => r[k]))])) };
  } finally {
    await browser.close();
    server.close();
  }
  return out;
}

const p95 = (v) => { const s = [...v].sort((a, b) => a - b); return s[Math.min(s.length - 1, Math.ceil(0.95 * s.length) - 1)]; };
const fmt = (v, d = 3) => (v === undefined || Number.isNaN(v) ? '—' : v >= 100 ? v.toFixed(1) : v.toPrecision(d));

const STORIES = join(ROOT, 'models', 'stories260K');
const median5 = (f) => median(Array.from({ length: quick ? 3 : 5 }, f));

// stories260K in WebAssembly (Node, the page's binding): the model lab with the charts off,
// greedy from BOS, 250 tokens a run; generated tokens per second.
function storiesWasm(core) {
  const read = (name) => new Uint8Array(readFileSync(join(STORIES, name)));
  const lab = core.createModelLab({ model: read('stories260K.bin'), tokenizer: read('tok512.bin') });
  try {
    lab.setCharts(false);
    return median5(() => {
      let n = 0;
      const t0 = performance.now();
      for (let r = 0; r < 4; r++) {
        lab.promptIds([1]);
        for (let i = 0; i < 250 && !lab.finished; i++, n++) lab.step({ temperature: 0 });
      }
      return (1e3 * n) / (performance.now() - t0);
    });
  } finally {
    lab.free();
  }
}

// A MiniMind-3-shaped model, random weights: ours and the PyTorch reference model, same work.
// ROUNDS rounds of `ours()` then `theirs()` (each returning parsed JSON, or { note }); per
// round the ratio of each key of `ratios`: [name, (ours, theirs) => value]. Returns the last
// round's JSON with every number of `medians` replaced by its median over the rounds.
function alternated(ours, theirs, ratios, medians) {
  const rounds = [];
  for (let r = 0; r < ROUNDS; r++) rounds.push([ours(), theirs()]);
  const [o, t] = rounds[rounds.length - 1].map((j) => ({ ...j }));
  for (const k of medians) {
    o[k] = median(rounds.map(([a]) => a[k]));
    if (!t.note && t[k] !== undefined) t[k] = median(rounds.map(([, b]) => b[k]));
  }
  const ratio = t.note ? {} : Object.fromEntries(ratios.map(([name, f]) => [name, spread(rounds.map(([a, b]) => f(a, b)))]));
  return { ours: o, torch: t, ratio };
}

const torchJson = (script, work, what) => () => {
  if (TORCH.blas.note) return { note: TORCH.blas.note };
  const r = spawnSync('/usr/bin/python3', [join(ROOT, 'tests', 'bench', script), JSON.stringify(work)], { encoding: 'utf8', env: TORCH.env });
  return r.status === 0 ? JSON.parse(r.stdout) : { note: `PyTorch ${what} benchmark not run: ${r.stderr.trim().split('\n').pop()}` };
};

// A MiniMind-3-shaped model, random weights: ours and the PyTorch reference model, same work,
// alternated; and the model's two bounds (memory read, multiply-add ceiling) as measured each round.
function minimind3Model() {
  const work = { seq: 512, decode: 64, repeats: quick ? 1 : 2 };
  const ours = () => JSON.parse(execFileSync(CLI, ['bench', '--preset', 'minimind-3', '--seq', work.seq, '--decode', work.decode,
    '--repeats', work.repeats].map(String), { encoding: 'utf8' }));
  const r = alternated(ours, torchJson('torch_model_bench.py', work, 'model'), [
    ['prefill', (a, b) => a.prefill_tokens_per_s / b.prefill_tokens_per_s],
    ['decode', (a, b) => a.decode_tokens_per_s / b.decode_tokens_per_s],
    ['bound_over_decode', (a) => a.bandwidth_bound_tokens_per_s / a.decode_tokens_per_s],
  ], ['prefill_ms', 'prefill_tokens_per_s', 'decode_ms', 'decode_tokens_per_s', 'read_gb_per_s', 'bandwidth_bound_tokens_per_s', 'fma_peak_gflops', 'compute_bound_prefill_tokens_per_s']);
  return { work, ...r };
}

// `attnlab patch`: each patch from its block up (the default) against a whole forward per patch
// (--full-forward, as hooks do), alternated in the same run, on stories260K with 32 tokens and on
// a MiniMind-3-shaped model with 64 tokens (MiniMind-3's shape from `attnlab train` after one
// step: near its random start; written to a temporary folder). The times are the CLI's own
// (its stderr: the patches alone, the model's loading left out).
function patchBench() {
  const dir = mkdtempSync(join(tmpdir(), 'attnlab-patch-bench-'));
  try {
    const ids = (n, at) => Array.from({ length: n }, (_, i) => (i === at ? 42 : 100 + ((i * 37 + 11) % 400))).join(' ');
    const one = (model, n, full) => {
      const r = spawnSync(CLI, ['patch', '--model', model, '--clean', ids(n, -1), '--corrupt', ids(n, Math.floor(n / 3)),
        '--answer', '5', '--wrong', '6', '--out', join(dir, 'patch.safetensors'), ...(full ? ['--full-forward'] : [])], { encoding: 'utf8' });
      if (r.status !== 0) throw new Error(`patch: ${r.stderr.trim()}`);
      const m = r.stderr.match(/(\d+) patches .* in ([\d.]+) ms, (\d+) blocks run/);
      return { patches: Number(m[1]), ms: Number(m[2]), blocks: Number(m[3]) };
    };
    const compare = (model, n, rounds) => {
      const block = [], whole = [], ratio = [];
      let last;
      for (let r = 0; r < rounds; r++) {
        const a = one(model, n, false), b = one(model, n, true);
        block.push(a.ms), whole.push(b.ms), ratio.push(b.ms / a.ms);
        last = { patches: a.patches, blocks: a.blocks, blocks_full: b.blocks };
      }
      return { tokens: n, ...last, block_ms: median(block), full_ms: median(whole), speedup: spread(ratio), rounds };
    };
    const stories = compare(join(STORIES, 'stories260K.bin'), 32, ROUNDS);
    const mm3 = join(dir, 'minimind-3');
    const t = spawnSync(CLI, ['train', '--corpus', join(ROOT, 'models', 'minimind-fortunes', 'train-sample.txt'), '--out', mm3,
      '--tokenizer', join(ROOT, 'models', 'minimind-tokenizer', 'tokenizer.json'), '--hidden', '768', '--layers', '8', '--heads', '8',
      '--kv-heads', '4', '--steps', '1', '--batch', '1', '--seq', '16'], { encoding: 'utf8' });
    if (t.status !== 0) throw new Error(`train (the MiniMind-3-shaped model): ${t.stderr.trim()}`);
    // a whole forward of a 64-token prompt per patch, 576 patches a side: two rounds (one quick)
    return { stories, minimind3: compare(mm3, 64, quick ? 1 : 2) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

// The weights in their dtype, and threads, on MiniMind-3-shaped files (tests/out/minimind3: float32
// and its float16 twin): f16 decode against f32 (the bytes a token reads, its time, each against
// the bandwidth bound), two threads against one (f16), each pair alternated; and the peak memory
// (maximum resident size, /usr/bin/time -v) of `attnlab generate` on the f16 model against its
// weights in their dtype + its KV cache + 32 MB.
function weightsBench() {
  const { f32, f16 } = minimind3Folders(CLI, join(OUT, 'minimind3'));
  const work = { seq: 128, decode: 64, repeats: quick ? 1 : 2, new_tokens: 64 };
  const bench = (dir, threads) => () => JSON.parse(execFileSync(CLI, ['bench', '--model', dir, '--seq', work.seq, '--decode', work.decode,
    '--repeats', work.repeats, '--threads', threads].map(String), { encoding: 'utf8' }));
  const keys = ['decode_ms', 'decode_tokens_per_s', 'prefill_tokens_per_s', 'bandwidth_bound_tokens_per_s', 'read_gb_per_s'];
  const d = alternated(bench(f16, 1), bench(f32, 1), [
    ['decode', (a, b) => a.decode_tokens_per_s / b.decode_tokens_per_s],
    ['f16_bound_over_decode', (a) => a.bandwidth_bound_tokens_per_s / a.decode_tokens_per_s],
    ['f32_bound_over_decode', (a, b) => b.bandwidth_bound_tokens_per_s / b.decode_tokens_per_s],
  ], keys);
  const t = alternated(bench(f16, 2), bench(f16, 1), [
    ['decode', (a, b) => a.decode_tokens_per_s / b.decode_tokens_per_s],
    ['prefill', (a, b) => a.prefill_tokens_per_s / b.prefill_tokens_per_s],
  ], keys);
  const config = JSON.parse(readFileSync(join(f16, 'config.json'), 'utf8'));
  const ids = '1 2 3', context = 3 + work.new_tokens;
  const r = spawnSync('/usr/bin/time', ['-v', CLI, 'generate', '--model', f16, '--ids', ids, '--max-new-tokens', String(work.new_tokens),
    '--temperature', '0', '--ignore-eos'], { encoding: 'utf8' });
  const kib = Number((/Maximum resident set size \(kbytes\): (\d+)/.exec(r.stderr) || [])[1]);
  const headDim = config.hidden_size / config.num_attention_heads;
  const kv = config.num_hidden_layers * 2 * context * config.num_key_value_heads * headDim * 4;
  const budget = d.ours.weight_bytes + kv + 32 * 2 ** 20;
  return { work, dtype: { f16: d.ours, f32: d.torch, ratio: d.ratio }, threads: { two: t.ours, one: t.torch, ratio: t.ratio },
    memory: { peak_bytes: kib * 1024, weight_bytes: d.ours.weight_bytes, kv_cache_bytes: kv, budget_bytes: budget } };
}

// Training: MiniMind's step (forward with labels, backward, clipping, AdamW) on the same small
// MiniMind (hidden 128, 4 layers, 4/2 heads, 6400 vocab), batch 8 × 128 tokens, one thread.
function trainBench() {
  const work = { hidden: 128, layers: 4, heads: 4, kv_heads: 2, vocab: 6400, batch: 8, seq: 128, steps: quick ? 3 : 5 };
  const ours = () => JSON.parse(execFileSync(CLI, ['bench', '--train', '--hidden', work.hidden, '--layers', work.layers, '--heads', work.heads,
    '--kv-heads', work.kv_heads, '--vocab', work.vocab, '--batch', work.batch, '--seq', work.seq, '--steps', work.steps].map(String), { encoding: 'utf8' }));
  const r = alternated(ours, torchJson('torch_train_bench.py', work, 'training'), [['tokens', (a, b) => a.tokens_per_s / b.tokens_per_s]], ['tokens_per_s', 'step_ms']);
  return { work, ...r };
}

// WebAssembly's own ceiling, in the same run: independent SIMD128 multiply-adds with no memory
// traffic (al_bench_fma_peak_gflops), and the matrix kernel at MiniMind-3's prefill shapes (512
// tokens through q/o, k/v and the FFN's projections) as a fraction of it.
function simdCeiling(core) {
  const peak = Math.max(...Array.from({ length: 3 }, () => core.fmaPeak().gflops));
  const shapes = [['q_proj, o_proj', 512, 768, 768], ['k_proj, v_proj', 512, 384, 768], ['gate_proj, up_proj', 512, 2432, 768],
    ['down_proj', 512, 768, 2432]];
  const gemm = shapes.map(([name, m, n, k]) => ({ name, m, n, k, gflops: core.gemmBench(m, n, k, quick ? 3 : 9) }));
  // and a small one (64 × 256 × 256, three repeats, as the WebAssembly test once ran it), which
  // must stay under the ceiling too: else the ceiling is not one
  const small = median(Array.from({ length: 5 }, () => core.gemmBench(64, 256, 256, 3)));
  return { peak_gflops: peak, gemm, fraction: median(gemm.map((g) => g.gflops)) / peak, small_gflops: small };
}

// The Train tab's default run in headless Chromium (served), for two minutes: when some head's
// induction score first passes 0.5, and when the loss of the repeated copies first falls below
// half of the first copies' (each the mean over the last 50 steps), in seconds and steps; and
// the highest induction score and the two losses at the end.
async function trainTabRun() {
  const { launch, openPage } = await import('../lib/browser.mjs');
  const { startServer } = await import('../../web/serve.mjs');
  const server = await startServer(0);
  const browser = await launch();
  const out = { seconds: 120, induction_at: null, halves_at: null };
  try {
    const { page } = await openPage(browser.context, `http://127.0.0.1:${server.address().port}/#tab=train&lang=en`);
    await page.click('#btn-train-start');
    const t0 = Date.now();
    while (Date.now() - t0 < out.seconds * 1000) {
      await page.waitForTimeout(2000);
      const s = await page.evaluate(() => {
        const h = window.attnlab.trainView.view.history.slice(-50);
        const mean = (c) => h.reduce((a, r) => a + r[c], 0) / Math.max(1, h.length);
        return { steps: window.attnlab.trainView.view.history.length, first: mean(1), repeated: mean(2),
          induction: Number(document.getElementById('induction-max').textContent) };
      });
      const at = { s: (Date.now() - t0) / 1000, steps: s.steps };
      if (out.induction_at === null && s.induction > 0.5) out.induction_at = at;
      if (out.halves_at === null && s.steps >= 50 && s.repeated < s.first / 2) out.halves_at = at;
      Object.assign(out, { steps: s.steps, induction_max: s.induction, first_half: s.first, repeated_half: s.repeated });
      if (s.steps >= 3000) break;
    }
    await page.close();
  } finally {
    await browser.close();
    server.close();
  }
  return out;
}

// The model view's head lines over 512 tokens on a recording canvas under Node (the case
// tests/model-charts.test.mjs checks): ms for one drawing, the median of 5.
async function headLinesMs() {
  const Lines = await import('../../web/model/head-lines.js');
  return median5(() => {
    const { canvas, data } = manyTokenLines();
    const t0 = performance.now();
    Lines.drawHeadLines(canvas, data);
    return performance.now() - t0;
  });
}

// The tokenizers' speeds, ms, medians of 5: as their C tests print them (build/tests, run with
// tests/lib/programs.mjs's arguments: 100 KB encoded by each reader, 1 MB of mixed text trained
// to 6400 tokens), and the same work through the CLI with the process included (100 KB on
// `attnlab tokenize`'s standard input; the 1 MB corpus of tests/lib/train-corpus.mjs to
// `attnlab train-tokenizer`).
function tokenizerSpeeds() {
  const printed = (name, pattern, toMs) => median5(() => {
    const r = run(join(ROOT, 'build', 'tests', name), PROGRAMS[name].args);
    const m = r.status === 0 && r.stdout.match(pattern);
    if (!m) throw new Error(`${name} (bash build.sh native builds it): exit ${r.status}, ${r.stderr.trim() || 'no timing line'}`);
    return Number(m[1]) * toMs;
  });
  const timed = (args, input) => median5(() => {
    const t0 = process.hrtime.bigint();
    const r = run(CLI, args(), { input });
    const ms = Number(process.hrtime.bigint() - t0) / 1e6;
    if (r.status !== 0) throw new Error(`attnlab ${args()[0]}: ${r.stderr.trim()}`);
    return ms;
  });
  const work = mkdtempSync(join(tmpdir(), 'attnlab-bench-'));
  try {
    const corpus = join(work, 'corpus.txt');
    writeFileSync(corpus, megabyteCorpus(ROOT));
    let out = 0;
    const encoded = /100 KB \(\d+ bytes\) -> \d+ ids in ([\d.]+) ms/;
    return {
      llama2c_100kb_ms: printed('test_tokenizer', encoded, 1),
      hf_100kb_ms: printed('test_tokenizer_hf', encoded, 1),
      train_1mb_ms: printed('test_tokenizer_train', /1 MB \(\d+ bytes\) to 6400 tokens: ([\d.]+) s/, 1e3),
      cli_tokenize_100kb_ms: timed(() => ['tokenize', '--tokenizer', join(STORIES, 'tok512.bin')], Buffer.from(storyText100KB())),
      cli_train_1mb_ms: timed(() => ['train-tokenizer', '--corpus', corpus, '--vocab', '6400', '--out', join(work, `out${out++}.json`)]),
    };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

// stories260K's prefill of 8 tokens and its compute bound (the prefill's operations at the
// measured multiply-add ceiling), as `attnlab bench --model` reports both.
function storiesBound() {
  const j = JSON.parse(execFileSync(CLI, ['bench', '--model', join(STORIES, 'stories260K.bin'), '--seq', '8', '--decode', '16',
    '--repeats', '2'], { encoding: 'utf8' }));
  return { prefill_tokens_per_s: j.prefill_tokens_per_s, compute_bound_prefill_tokens_per_s: j.compute_bound_prefill_tokens_per_s };
}

// The Train tab's default preset (al_train_lab_config_default: a 2-layer attention-only MiniMind,
// vocabulary 512, batch 16 × 64): the same training step (al_train_bench_run) natively and in
// WebAssembly under Node.
function trainLabBench(core) {
  const d = core.trainDefaults();
  const lab = core.createTrainLab(d, new Uint8Array(readFileSync(join(ROOT, 'models', 'minimind-tokenizer', 'tokenizer.json'))));
  const hp = lab.hparams;
  lab.free();
  const steps = quick ? 3 : 7;
  const native = [], wasm = [];
  for (let r = 0; r < ROUNDS; r++) {
    wasm.push((1e3 * d.batch * d.seq) / core.trainBench(hp, d.batch, d.seq, steps));
    native.push(JSON.parse(execFileSync(CLI, ['bench', '--train', '--hidden', hp.hidden, '--layers', hp.n_layers, '--heads', hp.n_heads,
      '--kv-heads', hp.n_kv_heads, '--ffn', hp.ffn_hidden, '--vocab', hp.vocab, '--batch', d.batch, '--seq', d.seq, '--steps', steps].map(String), { encoding: 'utf8' })).tokens_per_s);
  }
  return { work: { ...d, steps }, native_tokens_per_s: median(native), wasm_tokens_per_s: median(wasm), wasm_vs_native: spread(wasm.map((w, i) => w / native[i])) };
}

async function main() {
  mkdirSync(OUT, { recursive: true });
  const model = (readFileSync('/proc/cpuinfo', 'utf8').match(/model name\s*:\s*(.*)/) || [])[1] || 'unknown CPU';
  const MATTERS = ['sse4_2', 'avx', 'avx2', 'fma', 'avx512f', 'avx512bw', 'avx512vl', 'avx512_vnni', 'avx512_bf16', 'avx512_fp16', 'amx_tile'];
  const cpu = `${model} (${MATTERS.filter((f) => cpuFlags().includes(f)).join(' ') || 'no AVX'})`;
  console.error(`PyTorch's BLAS: ${TORCH.blas.note || `${blasLabel(TORCH.blas)}; ${TORCH.blas.coretype}`}`);
  console.error('the layer: native, PyTorch and WebAssembly, alternated…');
  const core = await loadCore();
  const layer = layerRounds(core);
  const torch = layer[0].torch.note ? layer[0].torch : { version: layer[0].torch.version, blas: layer[0].torch.blas };
  console.error('browser engines…');
  const peers = await peersBench(core, { quick });
  console.error('GGUF through llama.cpp…');
  const llamaCpp = await llamaCppBench();
  console.error('llama.cpp as the speed peer…');
  const llamaSpeed = await llamaCppSpeedBench({ quick });
  console.error('decode curve…');
  const curve = [64, 128, 256, 512, 1024, 2048].map((at) => {
    const r = nativeBench({ ...SIZES['minimind-3'], seq: 0, decode_at: at, repeats: quick ? 3 : 7 });
    return { cache: at, with_cache_ms: r.decode_ms, recompute_ms: r.decode_recompute_ms };
  });
  console.error('whole models…');
  const stories = { ...storiesRounds(), wasm_tokens_per_s: storiesWasm(core) };
  const mm3model = minimind3Model();
  console.error('attnlab patch, from each block and a whole forward each…');
  const patching = patchBench();
  const weights = weightsBench();
  console.error('training…');
  const training = trainBench();
  const trainLab = trainLabBench(core);
  const bound = storiesBound();
  console.error('SIMD128 ceiling…');
  const simd = simdCeiling(core);
  console.error('tokenizers…');
  const tokenizers = tokenizerSpeeds();
  const added = addedTokensBench({ quick });
  const headLines = await headLinesMs();
  console.error('the Train tab, two minutes…');
  const trainTab = await trainTabRun();
  console.error('the Train tab: inputs answered while it trains…');
  const trainInput = await trainInputRun({ quick });
  console.error('page…');
  const page = await pageTimings();
  console.error('wllama in headless Chromium…');
  const wllama = await wllamaBench({ quick });
  console.error('WebAssembly on two threads and one in headless Chromium…');
  const wasmThreads = await wasmThreadsBench({ quick });
  const size = (p) => statSync(join(ROOT, p)).size;
  // The page's payload: index.html, everything it links (scripts, styles), the modules its entry
  // module imports and the .wasm it fetches.
  const html = readFileSync(join(ROOT, 'web', 'index.html'), 'utf8');
  const { moduleGraph } = await import('../../web/modules.mjs');
  const linked = [...html.matchAll(/<(?:script defer src|link rel="stylesheet" href)="([^"]+)"/g)].map((m) => `web/${m[1]}`);
  for (const [, entry] of html.matchAll(/<script type="module" src="([^"]+)"/g)) linked.push(...moduleGraph(entry).map((m) => `web/${m.path}`));
  const payload = ['web/index.html', ...linked, 'web/gen/attnlab.wasm'];
  const gzipped = (paths) => paths.reduce((a, p) => a + gzipSync(readFileSync(join(ROOT, p)), { level: 9 }).length, 0);
  const sizes = { wasm: size('web/gen/attnlab.wasm'), glue: size('web/core/wasm-loader.js'), page: payload.reduce((a, p) => a + size(p), 0), single_file: size('dist/attnlab.html'),
    wasm_glue_gzip: gzipped(['web/gen/attnlab.wasm', 'web/core/wasm-loader.js']), page_gzip: gzipped(payload) };

  // Per case: each side's median over the rounds; each ratio per round, its median and range.
  // GFLOP/s count the causal work for both sides (the native JSON's prefill_flops_causal).
  const ms = (r, kind) => (kind === 'prefill' ? r.prefill_ms : r.decode_ms);
  const rows = cases.map((c, i) => {
    const n = layer.map((r) => ms(r.native[i], c.kind)), w = layer.map((r) => ms(r.wasm[i], c.kind));
    const t = torch.note ? null : layer.map((r) => ms(r.torch.results[i], c.kind));
    const flops = c.kind === 'prefill' ? layer[0].native[i].prefill_flops_causal : undefined;
    const vsTorch = t && spread(t.map((v, k) => v / n[k])), vsWasm = spread(w.map((v, k) => n[k] / v));
    return {
      size: c.size, kind: c.kind, tokens: c.kind === 'prefill' ? c.seq : c.decode_at,
      native_ms: median(n), torch_ms: t ? median(t) : undefined, wasm_ms: median(w),
      flops_causal: flops, flops_rectangle: c.kind === 'prefill' ? layer[0].native[i].prefill_flops_rectangle : undefined,
      native_gflops: flops && flops / (median(n) * 1e6), torch_gflops: flops && t ? flops / (median(t) * 1e6) : undefined,
      speedup_vs_torch: vsTorch ? vsTorch.median : undefined, speedup_range: vsTorch, wasm_vs_native: vsWasm.median, wasm_range: vsWasm,
    };
  });
  const pageSummary = Object.fromEntries(Object.entries(page.change).map(([s, v]) => [s, { median_ms: median(v), p95_ms: p95(v) }]));
  const find = (size, kind, tokens) => rows.find((r) => r.size === size && r.kind === kind && r.tokens === tokens);
  const mm3 = find('minimind-3', 'prefill', 512), seeds = find('seeds', 'prefill', 6), dec = find('minimind-3', 'decode', 2048);
  const wasmRatio = median(rows.filter((r) => r.size !== 'seeds').map((r) => r.wasm_vs_native));
  const tb = torch.blas ? blasLabel(torch.blas) : torch.note;
  const targets = [
    ['native ≥ 1.0× PyTorch, MiniMind-3 prefill seq 512', mm3.speedup_vs_torch, (v) => v >= 1.0, () => showRatio(mm3.speedup_range, fmt)],
    ['native ≥ 50× PyTorch at the seeds\' size (prefill of 6 tokens)', seeds.speedup_vs_torch, (v) => v >= 50, () => showRatio(seeds.speedup_range, fmt)],
    ['decode step at cache 2048, MiniMind-3, ≤ 1.0 ms native', dec.native_ms, (v) => v <= 1.0, (v) => `${fmt(v)} ms`],
    ['WASM ≥ 0.5× native (median over MiniMind cases)', wasmRatio, (v) => v >= 0.5, (v) => `${fmt(v)}×`],
    ['page repaint ≤ 16 ms after a change at seq 64 (median)', pageSummary[64].median_ms, (v) => v <= 16, (v) => `${fmt(v)} ms`],
    ['page repaint ≤ 100 ms after a change at seq 512 (median)', pageSummary[512].median_ms, (v) => v <= 100, (v) => `${fmt(v)} ms`],
    ['stories260K greedy 250 tokens ≥ 1.5× llama2.c run.c (each process timed whole)', stories.vs_run_c && stories.vs_run_c.median, (v) => v >= 1.5, () => showRatio(stories.vs_run_c, fmt)],
    ['stories260K in WebAssembly (Node, charts off) ≥ 5,000 generated tokens/s', stories.wasm_tokens_per_s, (v) => v >= 5000, (v) => `${fmt(v)} tokens/s`],
    ['MiniMind-3 model decode ≥ 3× PyTorch (tokens/s)', mm3model.ratio.decode && mm3model.ratio.decode.median, (v) => v >= 3, () => showRatio(mm3model.ratio.decode, fmt)],
    ['MiniMind-3 model decode within 2× of the memory-bandwidth bound', mm3model.ratio.bound_over_decode.median, (v) => v <= 2, (v) => `bound / measured ${fmt(v)} (${fmt(mm3model.ratio.bound_over_decode.min)}–${fmt(mm3model.ratio.bound_over_decode.max)})`],
    ['MiniMind-3 files: f16 decode faster than f32 (one thread)', weights.dtype.ratio.decode.median, (v) => v > 1, () => `${showRatio(weights.dtype.ratio.decode, fmt)}; ${(weights.dtype.f16.weight_bytes / 2 ** 20).toFixed(1)} MiB of weights, ${fmt(weights.dtype.f16.decode_ms)} ms a token (f32: ${(weights.dtype.f32.weight_bytes / 2 ** 20).toFixed(1)} MiB, ${fmt(weights.dtype.f32.decode_ms)} ms)`],
    ['MiniMind-3 files: f16 decode within 1.25× of its bandwidth bound', weights.dtype.ratio.f16_bound_over_decode.median, (v) => v <= 1.25, () => `bound / measured ${showRatio(weights.dtype.ratio.f16_bound_over_decode, fmt)} (f32: ${showRatio(weights.dtype.ratio.f32_bound_over_decode, fmt)})`],
    ['MiniMind-3 files: 2 threads faster than 1 (f16 decode)', weights.threads.ratio.decode.median, (v) => v > 1, () => `${showRatio(weights.threads.ratio.decode, fmt)} (prefill of ${weights.work.seq}: ${showRatio(weights.threads.ratio.prefill, fmt)})`],
    ['MiniMind-3 files: attnlab generate on f16 peaks ≤ 1.1× weights + KV cache + 32 MB', weights.memory.peak_bytes / weights.memory.budget_bytes, (v) => v <= 1.1, (v) => `${fmt(v)}× (${(weights.memory.peak_bytes / 2 ** 20).toFixed(1)} MiB against ${(weights.memory.budget_bytes / 2 ** 20).toFixed(1)} MiB)`],
    ['MiniMind-3 model prefill of 512 ≥ 1.5× PyTorch (tokens/s)', mm3model.ratio.prefill && mm3model.ratio.prefill.median, (v) => v >= 1.5, () => `${showRatio(mm3model.ratio.prefill, fmt)} (at the FMA ceiling: ${fmt(mm3model.ours.compute_bound_prefill_tokens_per_s / mm3model.torch.prefill_tokens_per_s)}×)`],
    ['model view: load → first attention ≤ 500 ms, served (median)', median(page.model.load.served), (v) => v <= 500, (v) => `${fmt(v)} ms`],
    ['model view: load → first attention ≤ 500 ms, file:// (median)', median(page.model.load.file), (v) => v <= 500, (v) => `${fmt(v)} ms`],
    ['model view: a step drawn during Play ≤ 16 ms at 128 tokens (median)', median(page.model.step[128]), (v) => v <= 16, (v) => `${fmt(v)} ms`],
    ['model view: a step drawn during Play ≤ 50 ms at 512 tokens (median)', median(page.model.step[512]), (v) => v <= 50, (v) => `${fmt(v)} ms`],
    ['model view: a head switched off in the Experiments panel → every chart on the screen that shows a changed value painted (those off it: as they scroll in) ≤ 50 ms, stories260K at 64 tokens, 1440×900 (median)', median(page.model.ablate), (v) => v <= ABLATE_MS, (v) => `${fmt(v)} ms`],
    ['model view: a page.evaluate round trip during Play < 100 ms (median)', median(page.model.answer), (v) => v < 100, (v) => `${fmt(v)} ms`],
    ['model view: the head lines over 512 tokens drawn < 2 s (a recording canvas, Node; median)', headLines, (v) => v < 2000, (v) => `${fmt(v)} ms`],
    ['layer lab at its largest settings: load, every decode step run, ≤ 3 s (median)', page.largest.load_ms, (v) => v <= 3000, (v) => `${fmt(v)} ms`],
    ['layer lab at its largest settings: a Step to its frame ≤ 300 ms (median)', page.largest.step_ms, (v) => v <= 300, (v) => `${fmt(v)} ms`],
    ['layer lab at its largest settings: a language switch to its frame ≤ 200 ms (median)', page.largest.lang_ms, (v) => v <= 200, (v) => `${fmt(v)} ms`],
    ['layer lab at its largest settings: Pause shown ≤ 200 ms (median)', page.largest.pause_ms, (v) => v <= 200, (v) => `${fmt(v)} ms`],
    ['llama2.c tokenizer (tok512.bin): 100 KB encoded < 250 ms (test_tokenizer, median)', tokenizers.llama2c_100kb_ms, (v) => v < 250, (v) => `${fmt(v)} ms`],
    ['MiniMind\'s tokenizer.json: 100 KB encoded < 250 ms (test_tokenizer_hf, median)', tokenizers.hf_100kb_ms, (v) => v < 250, (v) => `${fmt(v)} ms`],
    [`${added.name} ≤ the reference, @huggingface/tokenizers (median)`, added.ms, (v) => v <= added.target_ms, (v) => `${fmt(v)} ms (the reference: ${fmt(added.target_ms)} ms)`],
    ['BPE trainer: 1 MB of mixed text to 6400 tokens < 1 s (test_tokenizer_train, median)', tokenizers.train_1mb_ms, (v) => v < 1000, (v) => `${fmt(v)} ms`],
    ['attnlab tokenize: 100 KB on standard input < 500 ms, the process included (median)', tokenizers.cli_tokenize_100kb_ms, (v) => v < 500, (v) => `${fmt(v)} ms`],
    ['attnlab train-tokenizer: 1 MB to 6400 tokens < 500 ms, the process included (median)', tokenizers.cli_train_1mb_ms, (v) => v < 500, (v) => `${fmt(v)} ms`],
    ['stories260K prefill of 8 under its compute bound (attnlab bench --model)', bound.prefill_tokens_per_s / bound.compute_bound_prefill_tokens_per_s, (v) => v < 1, (v) => `${fmt(100 * v)}% of the bound`],
    ['WebAssembly GEMM at 64 × 256 × 256 < 1.2× the measured SIMD128 ceiling', simd.small_gflops / simd.peak_gflops, (v) => v < 1.2, (v) => `${fmt(v)}× (${fmt(simd.small_gflops)} GFLOP/s)`],
    ['dist/attnlab.html with stories260K ≤ 2.5 MB', sizes.single_file / 2 ** 20, (v) => v <= 2.5, (v) => `${fmt(v)} MB`],
    ['training tokens/s ≥ PyTorch\'s (MiniMind, hidden 128, 4 layers, batch 8 × 128)', training.ratio.tokens && training.ratio.tokens.median, (v) => v >= 1, () => showRatio(training.ratio.tokens, fmt)],
    ['Train tab, default run, headless Chromium: some head\'s induction score > 0.5 within 2 minutes', trainTab.induction_at ? trainTab.induction_at.s : trainTab.induction_max, () => trainTab.induction_at !== null, (v) => (trainTab.induction_at ? `${fmt(v)} s (step ${trainTab.induction_at.steps})` : `not in ${trainTab.seconds} s: highest ${fmt(v)} at step ${trainTab.steps}`)],
    ['Train tab, default run: repeated copies\' loss < half the first copies\' within 2 minutes', trainTab.halves_at ? trainTab.halves_at.s : trainTab.repeated_half / trainTab.first_half, () => trainTab.halves_at !== null, (v) => (trainTab.halves_at ? `${fmt(v)} s (step ${trainTab.halves_at.steps})` : `not in ${trainTab.seconds} s: ratio ${fmt(v)} at step ${trainTab.steps}`)],
    [`Train tab training, headless Chromium: an input (click, a select's or a slider's key) to the frame showing its answer ≤ ${TRAIN_INPUT_MS} ms (p90)`, trainInput.all.p90, (v) => v <= TRAIN_INPUT_MS, () => showTrainInput(trainInput, fmt)],
    ['Train tab: WebAssembly training tokens/s ≥ 0.2× native (its default preset)', trainLab.wasm_vs_native.median, (v) => v >= 0.2, () => showRatio(trainLab.wasm_vs_native, fmt)],
    ['WebAssembly GEMM ≥ 80% of the measured SIMD128 ceiling (MiniMind-3 prefill shapes, median)', simd.fraction, (v) => v >= 0.8, (v) => `${fmt(100 * v)}% (${fmt(median(simd.gemm.map((g) => g.gflops)))} of ${fmt(simd.peak_gflops)} GFLOP/s)`],
    ...peersTargets(peers, fmt),
    llamaCppTarget(llamaCpp),
    ...llamaCppSpeedTargets(llamaSpeed, fmt),
    ...wllamaTargets(wllama, fmt),
    ...wasmThreadsTargets(wasmThreads, fmt),
    ['.wasm + glue ≤ 100 KB', (sizes.wasm + sizes.glue) / 1024, (v) => v <= 100, (v) => `${fmt(v)} KB`],
  ].map(([name, value, ok, show]) => ({ name, value, met: value === undefined ? null : ok(value), shown: value === undefined ? '—' : show(value) }));

  const json = { date: new Date().toISOString(), cpu, torch: torch.version || torch.note, torch_blas: TORCH.blas, rounds: ROUNDS, rows, curve, page: { load_ms: { median: median(page.load), samples: page.load }, change: pageSummary, model: page.model, largest: page.largest, head_lines_ms: headLines }, sizes, patching, models: { stories260K: { ...stories, bound }, minimind3: mm3model, minimind3_files: weights, training, train_lab: trainLab, train_tab: trainTab, train_input: trainInput }, simd128: simd, tokenizers, added_tokens: added, peers, llama_cpp: llamaCpp, llama_cpp_speed: llamaSpeed, wllama, wasm_threads: wasmThreads, targets };
  writeFileSync(join(OUT, 'bench.json'), JSON.stringify(json, null, 2) + '\n');

  const md = [];
  md.push(`Measured ${json.date.slice(0, 10)} on ${cpu}, one thread; PyTorch ${torch.version ? `${torch.version} (Debian python3-torch) on ${tb}: ${TORCH.blas.coretype}` : `— ${torch.note}`}. Each comparison is ${ROUNDS} rounds of its two sides one after the other (A B A B …): times are medians over the rounds, each ratio its median and (in brackets) its range over the rounds.`, '');
  const mid = rows.find((r) => r.size === 'minimind-3' && r.kind === 'prefill' && r.tokens === 512);
  md.push(`GFLOP/s count the causal work, the same count for both sides (al_attn_flops_causal: query s of a prefill sees s + 1 keys), which the native core computes; PyTorch's eager layer multiplies the whole rectangle of scores and masks it afterwards (al_attn_flops_full, PyTorch's profiler's count): at MiniMind-3's 512 tokens ${fmt(mid.flops_rectangle / mid.flops_causal)}× the causal work. Ceiling: ${fmt(mm3model.ours.fma_peak_gflops)} GFLOP/s of independent fused multiply-adds (${mm3model.ours.fma_lanes} lanes).`, '');
  md.push(`| layer | work | tokens | native ms | PyTorch ms (${tb}) | native / PyTorch | native GFLOP/s | PyTorch GFLOP/s | WASM ms | WASM / native |`);
  md.push('|---|---|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const r of rows) {
    md.push(`| ${r.size} | ${r.kind === 'prefill' ? 'prefill' : 'decode step, cache'} | ${r.tokens} | ${fmt(r.native_ms)} | ${fmt(r.torch_ms)} | ${showRatio(r.speedup_range, fmt)} | ${fmt(r.native_gflops)} | ${fmt(r.torch_gflops)} | ${fmt(r.wasm_ms)} | ${showRatio(r.wasm_range, fmt)} |`);
  }
  md.push('', 'Decode step, MiniMind-3 layer, as the cache grows (native):', '');
  md.push('| cache tokens | with the KV cache (ms) | recomputing without it (ms) |', '|---:|---:|---:|');
  for (const c of curve) md.push(`| ${c.cache} | ${fmt(c.with_cache_ms)} | ${fmt(c.recompute_ms)} |`);
  md.push('', 'The page in headless Chromium (served): control change → every chart repainted, and load → first chart:', '');
  md.push('| sequence | median ms | p95 ms |', '|---:|---:|---:|');
  for (const [s, v] of Object.entries(pageSummary)) md.push(`| ${s} | ${fmt(v.median_ms)} | ${fmt(v.p95_ms)} |`);
  md.push(`| load → first chart | ${fmt(median(page.load))} | |`);
  md.push('', 'The model view (stories260K) in headless Chromium: load → first attention drawn, and the drawing of one step during Play (its charts, DOM and layout):', '');
  md.push('| what | median ms | p95 ms |', '|---|---:|---:|');
  md.push(`| load → first attention, served | ${fmt(median(page.model.load.served))} | ${fmt(p95(page.model.load.served))} |`);
  md.push(`| load → first attention, file:// | ${fmt(median(page.model.load.file))} | ${fmt(p95(page.model.load.file))} |`);
  for (const [ctx, v] of Object.entries(page.model.step)) md.push(`| a step at ${ctx} tokens | ${fmt(median(v))} | ${fmt(p95(v))} |`);
  md.push(`| a page.evaluate round trip during Play | ${fmt(median(page.model.answer))} | ${fmt(p95(page.model.answer))} |`);
  md.push(`| a head switched off (Experiments) → every chart redrawn, 64 tokens | ${fmt(median(page.model.ablate))} | ${fmt(p95(page.model.ablate))} |`);
  md.push('', `Activation patching, \`attnlab patch\` (native; the CLI's own time for the patches, medians; each block up against a whole forward per patch, \`--full-forward\`, alternated; the ratio's median and range over the rounds):`, '');
  md.push('| model | tokens | patches | blocks run | from each block (ms) | blocks run, whole forwards | a whole forward each (ms) | whole / from the block | rounds |', '|---|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const [name, r] of [['stories260K', patching.stories], ['MiniMind-3 shape (8 layers, hidden 768)', patching.minimind3]]) {
    md.push(`| ${name} | ${r.tokens} | ${r.patches} | ${r.blocks} | ${fmt(r.block_ms)} | ${r.blocks_full} | ${fmt(r.full_ms)} | ${showRatio(r.speedup, fmt)} | ${r.rounds} |`);
  }
  md.push('', `The layer lab at its largest settings (the page's own limits, all at once; medians of ${page.largest.runs.length} runs): load to the last decode step ${fmt(page.largest.load_ms)} ms, a Step ${fmt(page.largest.step_ms)} ms, a language switch ${fmt(page.largest.lang_ms)} ms, Pause ${fmt(page.largest.pause_ms)} ms.`);
  md.push('', `The tokenizers (medians): 100 KB encoded with tok512.bin ${fmt(tokenizers.llama2c_100kb_ms)} ms and with MiniMind's tokenizer.json ${fmt(tokenizers.hf_100kb_ms)} ms, 1 MB trained to 6400 tokens ${fmt(tokenizers.train_1mb_ms)} ms (in the C tests); through the CLI, the process included, \`attnlab tokenize\` on 100 KB ${fmt(tokenizers.cli_tokenize_100kb_ms)} ms and \`attnlab train-tokenizer\` on 1 MB ${fmt(tokenizers.cli_train_1mb_ms)} ms.`);
  md.push('', `Sizes: attnlab.wasm ${(sizes.wasm / 1024).toFixed(1)} KB, JS glue (web/core/wasm-loader.js) ${(sizes.glue / 1024).toFixed(1)} KB (together ${(sizes.wasm_glue_gzip / 1024).toFixed(1)} KB gzipped), page payload ${(sizes.page / 1024).toFixed(1)} KB (${(sizes.page_gzip / 1024).toFixed(1)} KB gzipped), dist/attnlab.html ${(sizes.single_file / 1024).toFixed(1)} KB.`, '');
  const tps = (v) => (v ? fmt(v) : '—');
  md.push(`Whole models, one thread (tokens/s; AttnLab / reference: median and range over ${ROUNDS} alternated rounds):`, '');
  md.push('| model | work | AttnLab native | reference | AttnLab / reference | reference is |', '|---|---|---:|---:|---:|---|');
  const torchIs = (j, what) => j.note || `PyTorch ${j.torch}, eager${what}, ${blasLabel(j.blas)}`;
  md.push(`| stories260K | greedy generation, 250 tokens from BOS, each process timed whole (loading included) | ${tps(stories.ours_process_tokens_per_s)} | ${tps(stories.run_c.tokens_per_s)} | ${showRatio(stories.vs_run_c, fmt)} | ${stories.run_c.note || 'llama2.c run.c, -Ofast -march=native, OMP_NUM_THREADS=1'} |`);
  md.push(`| stories260K | the same, generate's own count (its loop alone) | ${tps(stories.ours_tokens_per_s)} | | | |`);
  md.push(`| MiniMind, hidden 128, 4 layers, random ids | a training step (batch 8 × 128 tokens) | ${tps(training.ours.tokens_per_s)} | ${tps(training.torch.tokens_per_s)} | ${showRatio(training.ratio.tokens, fmt)} | ${torchIs(training.torch, ': forward, backward, clipping, AdamW')} |`);
  md.push(`| stories260K | the same in WebAssembly (Node, the page's model lab, charts off) | ${tps(stories.wasm_tokens_per_s)} | | | |`);
  md.push(`| the Train tab's default: ${trainLab.work.layers} layers, attention only, hidden ${trainLab.work.hidden}, vocabulary ${trainLab.work.vocab} | a training step (batch ${trainLab.work.batch} × ${trainLab.work.seq} tokens) | ${tps(trainLab.native_tokens_per_s)} | ${tps(trainLab.wasm_tokens_per_s)} | ${showRatio({ median: 1 / trainLab.wasm_vs_native.median, min: 1 / trainLab.wasm_vs_native.max, max: 1 / trainLab.wasm_vs_native.min }, fmt)} | the same step in WebAssembly (Node) |`);
  md.push(`| MiniMind-3 shape, random fp32 | prefill of ${mm3model.work.seq} | ${tps(mm3model.ours.prefill_tokens_per_s)} | ${tps(mm3model.torch.prefill_tokens_per_s)} | ${showRatio(mm3model.ratio.prefill, fmt)} | ${torchIs(mm3model.torch, ', KV cache')} |`);
  md.push(`| MiniMind-3 shape, random fp32 | decode step with logits | ${tps(mm3model.ours.decode_tokens_per_s)} | ${tps(mm3model.torch.decode_tokens_per_s)} | ${showRatio(mm3model.ratio.decode, fmt)} | ${torchIs(mm3model.torch, ', KV cache')} |`);
  md.push(`| MiniMind-3 shape, random fp32 | memory-bandwidth bound of a decode step | ${tps(mm3model.ours.bandwidth_bound_tokens_per_s)} | | | ${(mm3model.ours.weight_bytes_per_token / 2 ** 20).toFixed(1)} MiB of weights read at ${fmt(mm3model.ours.read_gb_per_s)} GB/s: memory's read speed, the best of 5 passes over ${(mm3model.ours.read_buffer_bytes / 2 ** 30).toFixed(2)} GiB (8 × the ${(mm3model.ours.last_level_cache_bytes / 2 ** 20).toFixed(0)} MiB last-level cache /sys reports, within 1–2 GiB) with ${mm3model.ours.read_lanes}-lane loads |`);
  md.push(`| MiniMind-3 shape, random fp32 | compute bound of the prefill of ${mm3model.work.seq} | ${tps(mm3model.ours.compute_bound_prefill_tokens_per_s)} | | | ${fmt(mm3model.ours.prefill_flops / 1e9)} GFLOP (al_model_flops_causal: the causal work) at the measured fused multiply-add ceiling of ${fmt(mm3model.ours.fma_peak_gflops)} GFLOP/s (${mm3model.ours.fma_lanes} lanes); AttnLab's prefill runs at ${fmt(100 * mm3model.ours.prefill_tokens_per_s / mm3model.ours.compute_bound_prefill_tokens_per_s)}% of it |`, '');
  md.push(`WebAssembly's ceiling (Node): independent SIMD128 multiply-adds (a multiply then an add, 4 lanes, no memory traffic) reach ${fmt(simd.peak_gflops)} GFLOP/s; the matrix kernel at MiniMind-3's prefill shapes (512 tokens):`, '');
  md.push('| projection | m × n × k | GFLOP/s | of the ceiling |', '|---|---|---:|---:|');
  for (const g of simd.gemm) md.push(`| ${g.name} | ${g.m} × ${g.n} × ${g.k} | ${fmt(g.gflops)} | ${fmt(100 * g.gflops / simd.peak_gflops)}% |`);
  md.push('');
  md.push(...peersMarkdown(peers, fmt));
  md.push(...llamaCppMarkdown(llamaCpp, fmt));
  md.push(...llamaCppSpeedMarkdown(llamaSpeed, fmt));
  md.push(...wllamaMarkdown(wllama, fmt));
  md.push(...wasmThreadsMarkdown(wasmThreads, fmt));
  // What 3× a peer asks of the MiniMind-3 layer: its FLOPs (the native row's GFLOP/s × ms) in a
  // third of the peer's time, against the ceiling measured above.
  const needs = (peers.rows || []).filter((r) => /^minimind-3/.test(r.case) && r.peer_ms && /^onnxruntime-web/.test(r.engine)).map((r) => {
    const n = find('minimind-3', 'prefill', r.tokens);
    const flops = n && n.native_gflops * n.native_ms * 1e6;
    return flops ? `${r.engine}, ${r.tokens} tokens: 3× its ${fmt(r.peer_ms)} ms is ${fmt(r.peer_ms / 3)} ms, ${fmt(flops / (r.peer_ms / 3) / 1e6)} GFLOP/s` : null;
  }).filter(Boolean);
  if (needs.length) md.push(`3× onnxruntime-web on MiniMind-3's layer would take (the SIMD128 ceiling above: ${fmt(simd.peak_gflops)} GFLOP/s): ${needs.join('; ')}.`, '');
  md.push('| target | measured | met |', '|---|---:|:---:|');
  for (const t of targets) md.push(`| ${t.name} | ${t.shown} | ${t.met === null ? '—' : t.met ? 'yes' : '**no**'} |`);
  writeFileSync(join(OUT, 'bench.md'), md.join('\n') + '\n');
  console.log(md.join('\n'));
}

main().catch((e) => {
  console.error(`bench: ${e.stack || e.message}`);
  process.exit(1);
});
