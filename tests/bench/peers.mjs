// peers.mjs — AttnLab's WebAssembly against the engines people run in browsers, under Node, one
// thread each, in the same run:
//   - onnxruntime-web's WebAssembly backend on the tutorial's SimpleAttention exported to ONNX
//     (prefill, no cache) and on stories260K one decode step at a time (greedy generation);
//   - TensorFlow.js's WebAssembly backend (XNNPACK) on the same layer built from its ops.
// Weights, inputs and graphs come from tests/bench/gen_onnx.py (PyTorch's draw for the bench's
// seed, so the same numbers as Core.bench's). Every case is first checked against AttnLab's own
// output, max |peer − AttnLab| / max(1, |AttnLab|) ≤ 1e-4; one that disagrees is reported, not
// timed. Times are medians of repeated runs after a warm-up (see medianMs).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { ROOT } from '../lib/run.mjs';
import { parseSafetensors, readSafetensors } from '../lib/safetensors.mjs';
import { ROUNDS, median, spread } from './stats.mjs';

const ONNX = join(ROOT, 'tests', 'out', 'onnx');
const STORIES = join(ROOT, 'models', 'stories260K');
const CLI = join(ROOT, 'build', 'attnlab');
const TOLERANCE = 1e-4;
const SEED = 0; // Core.bench's default seed, the one the files are drawn with
export const PEER_LAYERS = [
  { name: 'seeds', hidden: 16, heads: 4, kv_heads: 2, head_dim: 8, rope_base: 1e4, seqs: [6, 128, 512] },
  { name: 'minimind-3', hidden: 768, heads: 8, kv_heads: 4, head_dim: 96, rope_base: 1e6, seqs: [128, 512] },
];
// The layer's graphs under onnxruntime-web: as exported, and with the mask added by a plain Add
// (see gen_onnx.py).
const ORT_LAYER_GRAPHS = [['onnxruntime-web', 'layer.onnx'], ['onnxruntime-web, mask by Add', 'layer_add.onnx']];
const STORIES_TOKENS = 250; // greedy from BOS, as run.mjs's storiesWasm
const LOGIT_STEPS = 8; // the first steps whose logits are checked against `attnlab logits`


// max |got − want| / max(1, |want|) over the elements: absolute where |want| ≤ 1, relative above.
function maxDiff(got, want) {
  if (got.length !== want.length) return Infinity;
  let worst = 0;
  for (let i = 0; i < want.length; i++) {
    const d = Math.abs(got[i] - want[i]) / Math.max(1, Math.abs(want[i]));
    if (!(d <= worst)) worst = d; // NaN counts as the worst
  }
  return worst;
}

// Median ms of fn (sync or async) over `repeats` runs after a warm-up of at least 1 s and 5
// runs. Longer than al_bench_run's because V8 compiles a WebAssembly function with its
// optimising tier only once it has been called often enough, in the background: a large module
// such as onnxruntime-web's runs up to ten times slower for its first second or so (measured
// here: the seeds' layer at 128 tokens, 20–38 ms a run for 1.2 s, then 3 ms).
async function medianMs(fn, repeats, warm = true) {
  const until = performance.now() + 1000;
  for (let w = 0; warm && (w < 5 || performance.now() < until); w++) await fn();
  const times = [];
  for (let r = 0; r < repeats; r++) {
    const t0 = performance.now();
    await fn();
    times.push(performance.now() - t0);
  }
  return median(times);
}

const firstLine = (e) => String(e && e.message ? e.message : e).split('\n')[0];

// The graphs, weights and inputs (tests/out/onnx/); { note } when they cannot be made.
function generateFiles() {
  const probe = spawnSync('/usr/bin/python3', ['-c', 'import torch'], { encoding: 'utf8' });
  if (probe.error || probe.status !== 0) return { note: 'PyTorch is not installed (apt-get install -y python3-torch): the peers\' graphs, weights and inputs come from tests/bench/gen_onnx.py; not run' };
  mkdirSync(ONNX, { recursive: true });
  const spec = { layers: PEER_LAYERS, stories: join(STORIES, 'stories260K.bin'), seed: SEED };
  const r = spawnSync('/usr/bin/python3', [join(ROOT, 'tests', 'bench', 'gen_onnx.py'), ONNX, JSON.stringify(spec)], { encoding: 'utf8' });
  if (r.status !== 0) return { note: `tests/bench/gen_onnx.py failed: ${(r.stderr || '').trim().split('\n').pop()}` };
  return JSON.parse(r.stdout.trim().split('\n').pop());
}

async function loadOrt() {
  const ort = await import('onnxruntime-web'); // under Node: dist/ort.node.min.mjs, the WebAssembly backend
  ort.env.wasm.numThreads = 1;
  ort.env.logLevel = 'error';
  return ort;
}

async function loadTf() {
  const tf = await import('@tensorflow/tfjs-core');
  const wasm = await import('@tensorflow/tfjs-backend-wasm');
  const require = createRequire(import.meta.url);
  wasm.setWasmPaths(`${dirname(require.resolve('@tensorflow/tfjs-backend-wasm/dist/tfjs-backend-wasm.wasm'))}/`);
  wasm.setThreadsCount(1);
  if (!(await tf.setBackend('wasm'))) throw new Error('tf.setBackend(\'wasm\') failed');
  await tf.ready();
  return { tf, version: wasm.version_wasm, simd: tf.env().getBool('WASM_HAS_SIMD_SUPPORT'), threads: tf.env().getBool('WASM_HAS_MULTITHREAD_SUPPORT') };
}

// SimpleAttention.forward(x, cos, sin) without a cache, in TensorFlow.js ops. w: the layer's
// state_dict as {shape, data}. Written the way its WebAssembly backend runs fastest (measured
// here at MiniMind-3's size, 512 tokens): the linear weights transposed once to [in, out]
// (matMul with transposeB: 180 ms instead of 21 for q_proj), and the attention head by head with
// two-dimensional matMuls, which go to XNNPACK (all heads' scores as one batched matMul: 350 ms,
// head by head: 20 ms). Returns run(x, cos, sin, mask) → y [seq, hidden] and free().
function tfLayer(tf, c, w, eps) {
  const D = c.head_dim, H = c.heads, KV = c.kv_heads, rep = H / KV;
  const keep = [];
  const t = (name) => { const v = tf.tensor(w[name].data, w[name].shape); keep.push(v); return v; };
  const linear = (name) => { const v = tf.tidy(() => tf.transpose(tf.tensor(w[name].data, w[name].shape))); keep.push(v); return v; };
  const wq = linear('q_proj.weight'), wk = linear('k_proj.weight'), wv = linear('v_proj.weight'), wo = linear('o_proj.weight');
  const qn = t('q_norm.weight'), kn = t('k_norm.weight');
  const scale = 1 / Math.sqrt(D);
  const run = (x, cos, sin, mask) => tf.tidy(() => {
    const S = x.shape[0];
    const cs = tf.reshape(cos, [S, 1, D]), sn = tf.reshape(sin, [S, 1, D]);
    // SimpleRMSNorm: weight * x / sqrt(mean(x²) + eps), per head
    const norm = (v, weight) => tf.div(tf.mul(weight, v), tf.sqrt(tf.add(tf.mean(tf.square(v), -1, true), eps)));
    // apply_rotary_pos_emb: v * cos + rotate_half(v) * sin, rotate_half(v) = [−v₂, v₁]
    const rope = (v) => { const [a, b] = tf.split(v, 2, -1); return tf.add(tf.mul(v, cs), tf.mul(tf.concat([tf.neg(b), a], -1), sn)); };
    const q = tf.unstack(tf.transpose(rope(norm(tf.reshape(tf.matMul(x, wq), [S, H, D]), qn)), [1, 0, 2])); // H × [S, D]
    const k = tf.unstack(tf.transpose(rope(norm(tf.reshape(tf.matMul(x, wk), [S, KV, D]), kn)), [1, 2, 0])); // KV × [D, S]
    const v = tf.unstack(tf.transpose(tf.reshape(tf.matMul(x, wv), [S, KV, D]), [1, 0, 2])); // KV × [S, D]
    // repeat_kv: query head h reads KV head floor(h / rep); the causal mask added before softmax
    const heads = q.map((qh, h) => tf.matMul(tf.softmax(tf.add(tf.mul(tf.matMul(qh, k[Math.floor(h / rep)]), scale), mask), -1), v[Math.floor(h / rep)]));
    return tf.matMul(tf.concat(heads, 1), wo); // [S, H·D] @ [H·D, hidden]
  });
  return { run, free: () => keep.forEach((v) => v.dispose()) };
}

// The layer cases: AttnLab's output on the files (Core.forward), the bench's own draw
// (a session of the same seed) to show the files hold the bench's weights, then each peer
// checked and timed against Core.bench.
async function layerRows(core, peers, quick) {
  const rows = [];
  let drawDiff = 0;
  for (const c of PEER_LAYERS) {
    const dir = join(ONNX, c.name);
    const weightsBytes = new Uint8Array(readFileSync(join(dir, 'weights.safetensors')));
    const weights = parseSafetensors(weightsBytes, 'weights.safetensors');
    const eps = Number(weights.metadata.eps);
    const ortSessions = [];
    for (const [engine, file] of ORT_LAYER_GRAPHS) {
      ortSessions.push([engine, peers.ort.ort && await peers.ort.ort.InferenceSession.create(join(dir, file), { executionProviders: ['wasm'], graphOptimizationLevel: 'all' })]);
    }
    const tfl = peers.tf.tf && tfLayer(peers.tf.tf, c, weights.tensors, eps);
    try {
      for (const seq of c.seqs) {
        const inputPath = join(dir, `input_${seq}.safetensors`);
        const input = readSafetensors(inputPath).tensors;
        const ours = parseSafetensors(core.forward(weightsBytes, new Uint8Array(readFileSync(inputPath)), { attnWeights: false }).bytes, 'Core.forward').tensors.output.data;
        const session = core.createSession({ hidden: c.hidden, heads: c.heads, kvHeads: c.kv_heads, headDim: c.head_dim, ropeBase: c.rope_base, qkNorm: true, seed: SEED, promptLen: seq, decodeSteps: 0 });
        let benchDraw;
        try {
          session.prefill();
          benchDraw = maxDiff(session.outputs(), ours);
        } finally {
          session.free();
        }
        drawDiff = Math.max(drawDiff, benchDraw);
        const repeats = quick ? (c.hidden > 64 ? 3 : 15) : (c.hidden > 64 ? 7 : 41); // per round
        const benchCfg = { hidden: c.hidden, heads: c.heads, kvHeads: c.kv_heads, headDim: c.head_dim, ropeBase: c.rope_base, seq, seed: SEED };
        // The same warm-up for AttnLab's module: Core.bench warms the core for 0.1 s inside one
        // call, still in V8's first tier until the calls around it have been made often enough.
        const until = performance.now() + 1000;
        for (let w = 0; w < 2 || performance.now() < until; w++) core.bench({ ...benchCfg, repeats: 1 });
        const attnlab = () => core.bench({ ...benchCfg, repeats }).prefillMs;
        const base = { case: `${c.name} prefill`, tokens: seq, attnlab_ms: attnlab() };
        const sameWeights = benchDraw <= 1e-5 ? null : `the files' weights are not the bench's: the bench's own draw differs from them by ${benchDraw.toExponential(2)}`;

        // onnxruntime-web, each graph
        for (const [engine, ortSession] of ortSessions) {
          if (!ortSession) {
            rows.push({ engine, ...base, note: peers.ort.note });
            continue;
          }
          const { ort } = peers.ort;
          const feeds = {
            x: new ort.Tensor('float32', input.x.data, input.x.shape),
            cos: new ort.Tensor('float32', input.cos.data, input.cos.shape),
            sin: new ort.Tensor('float32', input.sin.data, input.sin.shape),
          };
          const diff = maxDiff((await ortSession.run(feeds)).y.data, ours);
          rows.push(await timed(engine, base, diff, sameWeights, () => ortSession.run(feeds), repeats, attnlab));
        }

        // TensorFlow.js, WebAssembly backend
        if (!tfl) rows.push({ engine: 'tfjs-wasm', ...base, note: peers.tf.note });
        else {
          const { tf } = peers.tf;
          const x = tf.tensor(input.x.data, [seq, c.hidden]), cos = tf.tensor(input.cos.data, input.cos.shape), sin = tf.tensor(input.sin.data, input.sin.shape);
          // The causal mask, built once per length as the RoPE tables are: −inf above the diagonal
          const mask = tf.tidy(() => tf.where(tf.greater(tf.reshape(tf.range(0, seq), [1, seq]), tf.reshape(tf.range(0, seq), [seq, 1])), tf.fill([seq, seq], -Infinity), tf.zeros([seq, seq])));
          const once = () => { const y = tfl.run(x, cos, sin, mask); const data = y.dataSync(); y.dispose(); return data; };
          try {
            rows.push(await timed('tfjs-wasm', base, maxDiff(once(), ours), sameWeights, once, repeats, attnlab));
          } finally {
            tf.dispose([x, cos, sin, mask]);
          }
        }
      }
    } finally {
      for (const [, ortSession] of ortSessions) if (ortSession) await ortSession.release();
      if (tfl) tfl.free();
    }
  }
  return { rows, drawDiff };
}

// A row: timed only when the peer agrees with AttnLab; fn does `per` units of base's work, and
// attnlab() (sync or async) measures AttnLab's ms for one unit. ROUNDS rounds of AttnLab then
// the peer (the peer warmed up once, before the first); medians over the rounds, and the ratio
// peer / AttnLab per round: its median and range.
async function timed(engine, base, diff, problem, fn, repeats, attnlab, per = 1) {
  const row = { engine, ...base, max_diff: diff };
  if (problem) return { ...row, note: `${problem}: not timed` };
  if (!(diff <= TOLERANCE)) return { ...row, note: `disagrees with AttnLab (max diff ${diff.toExponential(2)} > ${TOLERANCE}): not timed` };
  const ours = [], theirs = [];
  for (let r = 0; r < ROUNDS; r++) {
    ours.push(await attnlab());
    theirs.push((await medianMs(fn, repeats, r === 0)) / per);
  }
  const ratio = spread(theirs.map((t, i) => t / ours[i]));
  return { ...row, attnlab_ms: median(ours), peer_ms: median(theirs), ratio: ratio.median, ratio_min: ratio.min, ratio_max: ratio.max };
}

const argmax = (v) => { let best = 0; for (let i = 1; i < v.length; i++) if (v[i] > v[best]) best = i; return best; };

// stories260K, greedy from BOS: AttnLab's model lab (charts off, as run.mjs's storiesWasm)
// against the decode-step graph under onnxruntime-web, ms per generated token. Checked first:
// the graph's logits of the first steps against `attnlab logits` on the same ids, and the
// generated ids against the lab's.
async function storiesRow(core, peers, quick) {
  const base = { engine: 'onnxruntime-web', case: 'stories260K, greedy generation from BOS, per token' };
  const read = (name) => new Uint8Array(readFileSync(join(STORIES, name)));
  const lab = core.createModelLab({ model: read('stories260K.bin'), tokenizer: read('tok512.bin') });
  const samples = quick ? 3 : 5; // per round
  try {
    lab.setCharts(false);
    const generateOurs = () => {
      lab.promptIds([1]);
      for (let i = 0; i < STORIES_TOKENS && !lab.finished; i++) lab.step({ temperature: 0 });
    };
    generateOurs();
    const ids = Array.from(lab.ids()).slice(1);
    let warm = true;
    const attnlab = async () => {
      const ms = (await medianMs(generateOurs, samples, warm)) / ids.length;
      warm = false;
      return ms;
    };
    const row = { case: base.case, tokens: ids.length, attnlab_ms: await attnlab() };
    if (!peers.ort.ort) return { ...base, ...row, note: peers.ort.note };
    return await storiesPeer(peers, base, row, ids, samples, attnlab);
  } finally {
    lab.free();
  }
}

// The decode-step graph under onnxruntime-web against the model lab's ids, then timed.
async function storiesPeer(peers, base, row, ids, samples, attnlab) {

  const { ort } = peers.ort;
  const dir = join(ONNX, 'stories260K');
  const meta = JSON.parse(readFileSync(join(dir, 'meta.json'), 'utf8'));
  const session = await ort.InferenceSession.create(join(dir, 'step.onnx'), { executionProviders: ['wasm'], graphOptimizationLevel: 'all' });
  try {
    const empty = new ort.Tensor('float32', new Float32Array(0), [meta.n_layers, 0, meta.n_kv_heads, meta.head_dim]);
    const int64 = (v) => new ort.Tensor('int64', BigInt64Array.of(BigInt(v)), [1]);
    // n tokens from BOS: the token at pos goes in, the argmax of its logits comes out.
    const generate = async (n, logits = []) => {
      let k = empty, v = empty, token = 1;
      const out = [];
      for (let pos = 0; pos < n; pos++) {
        const r = await session.run({ token: int64(token), pos: int64(pos), k_cache: k, v_cache: v });
        if (pos < logits.length) logits[pos] = r.logits.data.slice();
        token = argmax(r.logits.data);
        out.push(token);
        k = r.k_new;
        v = r.v_new;
      }
      return out;
    };
    const logits = new Array(LOGIT_STEPS);
    const peerIds = await generate(ids.length, logits);
    const theirs = new Float32Array(LOGIT_STEPS * meta.vocab);
    logits.forEach((l, i) => theirs.set(l, i * meta.vocab));
    const ours = attnlabLogits([1, ...ids.slice(0, LOGIT_STEPS - 1)]);
    if (ours.note) return { ...base, ...row, note: ours.note };
    const diff = maxDiff(theirs, ours.logits);
    const differing = peerIds.findIndex((id, i) => id !== ids[i]);
    const idsNote = differing < 0 ? `the same ${ids.length} ids as the model lab; logits of the first ${LOGIT_STEPS} steps checked` : `ids differ from the model lab's from token ${differing} on`;
    const timedRow = await timed('onnxruntime-web', row, diff, differing < 0 ? null : idsNote, () => generate(ids.length), samples, attnlab, ids.length);
    return { ...timedRow, note: timedRow.note || idsNote };
  } finally {
    await session.release();
  }
}

// `attnlab logits` (the CLI) on the ids: logits [ids, vocab].
function attnlabLogits(ids) {
  if (!existsSync(CLI)) return { note: `${CLI} is missing (bash build.sh page builds it): not checked, not timed` };
  const out = join(ONNX, 'stories260K', 'attnlab_logits.safetensors');
  const r = spawnSync(CLI, ['logits', '--model', join(STORIES, 'stories260K.bin'), '--ids', ids.join(' '), '--out', out], { encoding: 'utf8' });
  if (r.status !== 0) return { note: `attnlab logits failed: ${r.stderr.trim()}` };
  return { logits: readSafetensors(out).tensors.logits.data };
}

// rows: [{engine, case, tokens, attnlab_ms, peer_ms, ratio (peer_ms / attnlab_ms), max_diff,
// note}]; versions; how each side was run.
export async function peersBench(core, { quick = false } = {}) {
  const made = generateFiles();
  const peers = { ort: {}, tf: {} };
  const versions = { node: process.versions.node, torch: made.torch, onnx_opset: made.opset };
  if (made.note) peers.ort.note = peers.tf.note = made.note;
  else {
    try {
      peers.ort.ort = await loadOrt();
      versions['onnxruntime-web'] = peers.ort.ort.env.versions.web;
    } catch (e) {
      peers.ort.note = `onnxruntime-web did not load (npm ci installs it): ${firstLine(e)}`;
    }
    try {
      peers.tf = await loadTf();
      versions['@tensorflow/tfjs-core'] = peers.tf.tf.version_core;
      versions['@tensorflow/tfjs-backend-wasm'] = peers.tf.version;
    } catch (e) {
      peers.tf = { note: `TensorFlow.js's WebAssembly backend did not load (npm ci installs it): ${firstLine(e)}` };
    }
  }
  const how = {
    attnlab: 'the page\'s web/gen/attnlab.wasm under Node: the layer\'s prefill by Core.bench (al_bench_run, timed inside WebAssembly), stories260K by the model lab with its charts off (Core.createModelLab, promptIds([1]), step({temperature: 0}))',
    'onnxruntime-web': `npm onnxruntime-web ${versions['onnxruntime-web'] || '—'} under Node (its "node" entry, dist/ort.node.min.mjs, which runs the WebAssembly backend: ort-wasm-simd-threaded.wasm, the package's only build, SIMD), ort.env.wasm.numThreads = 1, executionProviders ['wasm'], graph optimisations 'all'; the layer as torch.onnx.export wrote SimpleAttention (opset ${made.opset || '—'}, seq dynamic, cos/sin as inputs; its in-place \`scores[:, :, :, -seq_len:] += mask\` becomes ScatterND over index tensors built by Concat and Expand: "mask by Add" is the same layer with \`scores = scores + mask\`), session.run timed with its input and output copies; stories260K as a decode-step graph (token, pos and the KV caches in; logits and the caches with one more row out), greedy in JavaScript`,
    'tfjs-wasm': `npm @tensorflow/tfjs-core + @tensorflow/tfjs-backend-wasm ${versions['@tensorflow/tfjs-backend-wasm'] || '—'} under Node: setWasmPaths(the package's dist/), setThreadsCount(1) (SIMD ${peers.tf.simd ? 'on' : 'off'}, threads ${peers.tf.threads ? 'on' : 'off'}); the layer from tf ops (matMul against weights transposed once, RMSNorm per head, RoPE with the same cos/sin tables, then head by head: scores by a two-dimensional matMul against KV head h / rep (GQA\'s repeat_kv), the causal mask built once per length, softmax, matMul by V), one call and dataSync timed`,
    check: `before timing, max |peer − AttnLab| / max(1, |AttnLab|) ≤ ${TOLERANCE}: the layer against Core.forward on the same weights and input, stories260K's first ${LOGIT_STEPS} steps' logits against \`attnlab logits\` on the same ids and every generated id against the model lab's`,
  };
  if (made.note) {
    const rows = [];
    for (const c of PEER_LAYERS) for (const seq of c.seqs) for (const engine of [...ORT_LAYER_GRAPHS.map(([e]) => e), 'tfjs-wasm']) rows.push({ engine, case: `${c.name} prefill`, tokens: seq, note: made.note });
    rows.push({ engine: 'onnxruntime-web', case: 'stories260K, greedy generation from BOS, per token', tokens: STORIES_TOKENS, note: made.note });
    return { rows, versions, how };
  }
  const layers = await layerRows(core, peers, quick);
  how.weights = `the files' weights are the bench's: AttnLab's output on them and a session drawn from seed ${SEED} as al_bench_run draws differ by at most ${layers.drawDiff.toExponential(2)}`;
  const rows = [...layers.rows, await storiesRow(core, peers, quick)];
  return { rows, versions, how };
}

// The bench's report of it: the markdown table and how each side was run (fmt: run.mjs's
// number format).
export function peersMarkdown({ rows, how }, fmt) {
  const md = [`AttnLab's WebAssembly against browser engines (Node, one thread each, same weights and inputs; ${ROUNDS} rounds of AttnLab then the peer: medians, and the ratio's median and range; peer / AttnLab > 1: AttnLab is faster):`, ''];
  md.push('| engine | case | tokens | AttnLab ms | peer ms | peer / AttnLab | max diff | note |', '|---|---|---:|---:|---:|---:|---:|---|');
  for (const r of rows) {
    md.push(`| ${r.engine} | ${r.case} | ${r.tokens} | ${fmt(r.attnlab_ms)} | ${fmt(r.peer_ms)} | ${r.ratio ? `${fmt(r.ratio)}× (${fmt(r.ratio_min)}–${fmt(r.ratio_max)})` : '—'} | ${r.max_diff === undefined ? '—' : r.max_diff.toExponential(1)} | ${r.note || ''} |`);
  }
  md.push('', ...Object.entries(how).map(([k, v]) => `- ${k}: ${v}`), '');
  return md;
}

// The targets' rows as run.mjs lists them: [name, value, ok, show], value the smallest
// peer / AttnLab ratio over the engine's cases (onnxruntime-web's: both graphs of the layer and
// stories260K); a case not timed fails the target.
export function peersTargets({ rows }, fmt) {
  const target = (engine, name, least) => {
    const mine = rows.filter((r) => r.engine.startsWith(engine));
    const timed = mine.filter((r) => r.ratio !== undefined);
    const worst = timed.reduce((w, r) => (!w || r.ratio < w.ratio ? r : w), null);
    const untimed = mine.length - timed.length;
    // Nothing timed: not measured ('—') when nothing was run, not met when the peer disagreed.
    const checked = mine.some((r) => r.max_diff !== undefined);
    const value = worst ? worst.ratio : checked ? NaN : undefined;
    return [name, value, (v) => v >= least && untimed === 0,
      (v) => (worst ? `${fmt(v)}× at worst (${worst.engine}: ${worst.case}, ${worst.tokens} tokens)${untimed ? `; ${untimed} of ${mine.length} cases not timed` : ''}` : `no case timed: ${untimed} of ${mine.length} disagree with AttnLab or did not run`)];
  };
  return [
    target('onnxruntime-web', 'AttnLab\'s WebAssembly ≥ 3× onnxruntime-web (WebAssembly, one thread) on every case', 3),
    target('tfjs-wasm', 'AttnLab\'s WebAssembly ≥ 1.5× TensorFlow.js\'s WebAssembly backend (one thread) on every case', 1.5),
  ];
}
