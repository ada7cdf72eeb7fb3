// llama_cpp.mjs — the GGUF round trip: a model written by `attnlab convert --out X.gguf`, run by
// llama.cpp (node-llama-cpp's prebuilt CPU binary, one thread, KV cache in float32), gives
// AttnLab's greedy ids and AttnLab's logits at every step within TOLERANCE (max |llama.cpp −
// AttnLab| over a step's logits, divided by max(1, the step's largest |logit|)). Also llama.cpp's
// tokenization of a text with the file's tokenizer against AttnLab's. Cases: stories260K (llama)
// and models/minimind-fortunes (qwen3, trained, so its logits are not flat) in float32, and the
// random MiniMind fixtures for the architectures' corners: untied, MoE (qwen3moe), attention-only
// (a zero FFN), YaRN (its attention factor through rope.scaling.attn_factor); fortunes in float16
// too (at its own tolerance, TOLERANCE's comment).
// node-llama-cpp is installed the first time into tests/out/peers/node-llama-cpp, the CPU binary
// alone (its GPU builds are optional dependencies, left out; no install script runs, nothing is
// built). `npm test` and `npm start` never install it. Run alone: node tests/bench/llama_cpp.mjs
// (writes tests/out/llama_cpp.md and .json).
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { cutTokenizer } from '../lib/cut-tokenizer.mjs';
import { ROOT, run } from '../lib/run.mjs';
import { readSafetensors } from '../lib/safetensors.mjs';
import { installPeer, peerFolder } from './npm_peer.mjs';

export const NODE_LLAMA_CPP = '3.22.1';
const PEER = peerFolder('node-llama-cpp');
const WORK = join(ROOT, 'tests', 'out', 'gguf');
const CLI = join(ROOT, 'build', 'attnlab');
const MINIMIND = join(ROOT, 'tests', 'fixtures', 'minimind');
// float32: the same products summed in another order. float16: looser, as ggml's float16 matrix
// product may round its other operand (the activations) to float16 where a CPU's kernels do.
const TOLERANCE = { f32: 1e-4, f16: 1e-2 };
const STEPS = 24;

const firstLine = (e) => String(e && e.message ? e.message : e).split('\n')[0];

// node-llama-cpp and its linux-x64 CPU binary in PEER (once): { entry } (its dist/index.js) or
// { note } when it cannot be.
export function install() {
  if (process.platform !== 'linux' || process.arch !== 'x64') return { note: `node-llama-cpp's CPU binary is installed here for linux-x64 only (this is ${process.platform}-${process.arch}): not run` };
  const r = installPeer('node-llama-cpp', [`node-llama-cpp@${NODE_LLAMA_CPP}`, `@node-llama-cpp/linux-x64@${NODE_LLAMA_CPP}`],
    ['node-llama-cpp/dist/index.js', '@node-llama-cpp/linux-x64'], { omitOptional: true });
  return r.note ? r : { entry: join(PEER, 'node_modules', 'node-llama-cpp', 'dist', 'index.js') };
}

// node-llama-cpp loaded once a process: { lib, llama, lines } (lines: every log line llama.cpp
// printed since its reader last emptied it; its errors also go to stderr) or { note }. Once: the
// addon holds one logger for the process, and a second getLlama loses it (its setLogger releases
// the first logger, whose release, finished on a later turn, marks the second one unset), after
// which llama.cpp's lines — context.printTimings()'s among them — go to stdout, not to `lines`.
// The Llama lives as long as the process (node-llama-cpp disposes it before exit).
let loaded = null;
export function loadLlamaCpp() {
  if (!loaded) loaded = (async () => {
    const inst = install();
    if (inst.note) return { note: inst.note };
    try {
      const lib = await import(pathToFileURL(inst.entry).href);
      const lines = [];
      const logger = (level, message) => {
        lines.push(String(message));
        if (level === lib.LlamaLogLevel.error || level === lib.LlamaLogLevel.fatal) console.error(String(message));
      };
      const llama = await lib.getLlama({ gpu: false, build: 'never', logLevel: lib.LlamaLogLevel.info, logger, progressLogs: false, skipDownload: true });
      return { lib, llama, lines };
    } catch (e) {
      return { note: `node-llama-cpp did not load: ${firstLine(e)}` };
    }
  })();
  return loaded;
}

// llama.cpp's version as node-llama-cpp's package records it: "ggml-org/llama.cpp v0.5.0".
export function llamaCppRelease() {
  const info = JSON.parse(readFileSync(join(PEER, 'node_modules', 'node-llama-cpp', 'llama', 'llama.cpp.info.json'), 'utf8'));
  return `${info.llamaCppGithubRepo} ${info.tag}`;
}

// The cases: a model, its tokenizer, the GGUF dtype, a prompt (ids, and a text to tokenize).
function cases() {
  mkdirSync(WORK, { recursive: true });
  const tok = (vocab) => {
    const p = join(WORK, `tokenizer-${vocab}.json`);
    if (!existsSync(p)) writeFileSync(p, cutTokenizer(vocab));
    return p;
  };
  const stories = join(ROOT, 'models', 'stories260K');
  const fortunes = join(ROOT, 'models', 'minimind-fortunes');
  const fixture = (name, vocab, prompt) => ({ name: `${name} (random)`, model: join(MINIMIND, name), tokenizer: tok(vocab), dtype: 'f32', ids: prompt });
  return [
    { name: 'stories260K', model: join(stories, 'stories260K.bin'), tokenizer: join(stories, 'tok512.bin'), dtype: 'f32', ids: [1], text: 'Once upon a time, Lily saw a big red ball.' },
    { name: 'minimind-fortunes', model: fortunes, dtype: 'f32', text: '<|im_start|>人生就像一盒巧克力' },
    { name: 'minimind-fortunes', model: fortunes, dtype: 'f16', text: '<|im_start|>人生就像一盒巧克力' },
    fixture('untied', 512, [1, 471, 142, 150]),
    fixture('moe_top2_norm', 300, [1, 17, 33, 5]),
    fixture('attn_only', 300, [1, 17, 33, 5]),
    fixture('yarn_small', 300, [1, 17, 33, 5]),
    fixture('yarn_minimind_defaults', 300, [1, 17, 33, 5]),
  ];
}

// AttnLab's side: the prompt's ids (from the text), STEPS greedy ids, and the logits before each.
function attnlab(c) {
  const tokArgs = c.tokenizer ? ['--tokenizer', c.tokenizer] : [];
  let textIds = null;
  if (c.text) { // the text's ids as AttnLab encodes them, no BOS (llama.cpp's tokenize adds none either)
    const t = run(CLI, ['tokenize', '--tokenizer', c.tokenizer || join(c.model, 'tokenizer.json'), '--text', c.text, ...(c.ids ? ['--no-bos'] : [])]);
    if (t.status !== 0) throw new Error(`attnlab tokenize: ${t.stderr.trim()}`);
    textIds = t.stdout.trim().split(/\s+/).map(Number);
  }
  const ids = c.ids || textIds;
  const g = run(CLI, ['generate', '--model', c.model, '--ids', ids.join(' '), '--temperature', '0', '--max-new-tokens', String(STEPS), '--print-ids', '--ignore-eos']);
  if (g.status !== 0) throw new Error(`attnlab generate: ${g.stderr.trim()}`);
  const greedy = g.stdout.trim().split(/\s+/).map(Number);
  const out = join(WORK, 'logits.safetensors');
  const l = run(CLI, ['logits', '--model', c.model, '--ids', [...ids, ...greedy.slice(0, -1)].join(' '), '--out', out]);
  if (l.status !== 0) throw new Error(`attnlab logits: ${l.stderr.trim()}`);
  const { shape, data } = readSafetensors(out).tensors.logits;
  const vocab = shape[shape.length - 1];
  const steps = greedy.map((_, s) => data.subarray((ids.length - 1 + s) * vocab, (ids.length + s) * vocab));
  const gguf = join(WORK, `${c.name.split(' ')[0]}-${c.dtype}.gguf`);
  const conv = run(CLI, ['convert', '--model', c.model, ...tokArgs, '--out', gguf, '--dtype', c.dtype]);
  if (conv.status !== 0) throw new Error(`attnlab convert: ${conv.stderr.trim()}`);
  return { ids, textIds, greedy, steps, vocab, gguf };
}

// llama.cpp's side: the prompt, then each greedy id fed back, the logits before each.
async function llamaCpp(lib, llama, ours, c) {
  const model = await llama.loadModel({ modelPath: ours.gguf, gpuLayers: 0 });
  try {
    const context = await model.createContext({ contextSize: 256, sequences: 1, threads: 1, flashAttention: false,
      experimentalKvCacheKeyType: 'F32', experimentalKvCacheValueType: 'F32' });
    const seq = context.getSequence();
    const ask = (t) => [t, { generateNext: { logits: true } }];
    let input = [...ours.ids.slice(0, -1), ask(ours.ids[ours.ids.length - 1])];
    const greedy = [];
    let worst = 0, worstStep = -1;
    for (let s = 0; s < ours.greedy.length; s++) {
      const r = await seq.controlledEvaluate(input);
      const logits = new Float32Array(ours.vocab).fill(NaN);
      for (const [t, v] of r[r.length - 1].next.logits) logits[t] = v;
      let best = 0;
      for (let t = 1; t < logits.length; t++) if (logits[t] > logits[best]) best = t;
      greedy.push(best);
      const want = ours.steps[s];
      let scale = 1, d = 0;
      for (let t = 0; t < want.length; t++) scale = Math.max(scale, Math.abs(want[t]));
      for (let t = 0; t < want.length; t++) { const e = Math.abs(logits[t] - want[t]) / scale; if (!(e <= d)) d = e; }
      if (!(d <= worst)) { worst = d; worstStep = s; }
      input = [ask(ours.greedy[s])]; // AttnLab's id: the logits stay comparable after a disagreement
    }
    const tokenized = c.text ? Array.from(model.tokenize(c.text, true)) : null;
    await context.dispose();
    return { greedy, worst, worstStep, tokenized };
  } finally {
    await model.dispose();
  }
}

export async function llamaCppBench() {
  const { lib, llama, lines, note } = await loadLlamaCpp();
  if (note) return { note, rows: [] };
  const how = `node-llama-cpp ${NODE_LLAMA_CPP} (llama.cpp ${llamaCppRelease()}), its prebuilt linux-x64 CPU binary, 1 thread, context 256, KV cache F32, flash attention off; GGUF from attnlab convert`;
  const rows = [];
  for (const c of cases()) {
    const row = { case: c.name, dtype: c.dtype, steps: STEPS, tolerance: TOLERANCE[c.dtype] };
    try {
      const ours = attnlab(c);
      const peer = await llamaCpp(lib, llama, ours, c);
      let agree = 0;
      while (agree < ours.greedy.length && peer.greedy[agree] === ours.greedy[agree]) agree++;
      Object.assign(row, { ids_equal: agree === ours.greedy.length, ids_agree: agree, max_diff: peer.worst, worst_step: peer.worstStep });
      if (peer.tokenized) row.tokens_equal = JSON.stringify(peer.tokenized) === JSON.stringify(ours.textIds);
      row.met = row.ids_equal && peer.worst <= row.tolerance && row.tokens_equal !== false;
    } catch (e) {
      row.note = firstLine(e);
      row.met = false;
    }
    rows.push(row);
    lines.length = 0; // this case's load log, read by no one
  }
  return { how, rows };
}

export function llamaCppMarkdown({ how, rows, note }, fmt = (v) => String(v)) {
  const md = ['The GGUF round trip: `attnlab convert --out X.gguf`, run by llama.cpp, against AttnLab on the same prompt: greedy ids, and each step\'s logits (max |llama.cpp − AttnLab| / max(1, largest |logit|); after a disagreement both go on from AttnLab\'s id), and llama.cpp\'s tokenization of the prompt text with the file\'s tokenizer:', ''];
  if (note) return [...md, `Not run: ${note}.`, ''];
  md.push('| model | GGUF | greedy ids equal | max logit diff | tolerance | tokenizer equal | met |', '|---|---|---:|---:|---:|:---:|:---:|');
  for (const r of rows) {
    md.push(`| ${r.case} | ${r.dtype} | ${r.note ? '—' : r.ids_equal ? `all ${r.steps}` : `first ${r.ids_agree} of ${r.steps}`} | ${r.max_diff === undefined ? '—' : r.max_diff.toExponential(1)} | ${r.tolerance.toExponential(0)} | ${r.tokens_equal === undefined ? '—' : r.tokens_equal ? 'yes' : '**no**'} | ${r.met ? 'yes' : `**no**${r.note ? `: ${r.note}` : ''}`} |`);
  }
  md.push('', `- llama.cpp: ${how}`, '');
  return md;
}

// The target row as run.mjs lists them: [name, value, ok, show].
export function llamaCppTarget({ rows, note }) {
  const met = rows.filter((r) => r.met).length;
  return ['GGUF through llama.cpp: AttnLab\'s greedy ids and logits within tolerance on every case', note ? undefined : met,
    (v) => v === rows.length, (v) => `${v} of ${rows.length} cases`];
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const r = await llamaCppBench();
  mkdirSync(join(ROOT, 'tests', 'out'), { recursive: true });
  writeFileSync(join(ROOT, 'tests', 'out', 'llama_cpp.json'), JSON.stringify(r, null, 2) + '\n');
  const md = llamaCppMarkdown(r, (v) => v.toPrecision(3)).join('\n');
  writeFileSync(join(ROOT, 'tests', 'out', 'llama_cpp.md'), md + '\n');
  console.log(md);
  process.exit(r.rows.every((x) => x.met) && !r.note ? 0 : 1);
}
