// llama_cpp_speed.mjs — AttnLab against llama.cpp on the same weights (tests/bench/speed_models.mjs:
// stories260K, and a MiniMind-3-shaped model in float32 and float16, each as AttnLab's file and
// as the GGUF `attnlab convert` writes), the same work: a prefill of 512 tokens and one-token
// decode steps. ROUNDS rounds of AttnLab then llama.cpp (A B A B …): medians over the rounds, and
// AttnLab / llama.cpp per round, its median and range (> 1: AttnLab is faster).
//   - AttnLab: `attnlab bench --model` (al_model_bench_run: a warm-up run, then timed ones, each
//     al_model_forward call with the last token's logits; loading excluded), one process a
//     round, on one thread (--threads 1 once the CLI takes it, and --threads 2 beside llama.cpp's
//     two threads; until then its one thread against llama.cpp's two).
//   - llama.cpp: node-llama-cpp's prebuilt CPU binary (tests/bench/llama_cpp.mjs installs it), the
//     model loaded once and a context per thread count (KV cache float32, flash attention off,
//     batch 512: the prompt in one llama_decode), then per run: the sequence cleared, the prompt
//     by sequence.evaluateWithoutGeneratingNewTokens (prefill), and `decode` tokens of
//     sequence.evaluate with temperature 0 (greedy: one llama_decode of one token, then its
//     sampler, a step), the end token passed over (yieldEogToken) as AttnLab's bench does. Two
//     counts of the same runs: through the API (performance.now() around the calls: the
//     JavaScript, the addon's thread hand-offs and the sampling included) and llama.cpp's own
//     (llama_perf_context, printed by context.printTimings(): its decode calls alone, what
//     llama-bench reports). The targets are judged on llama.cpp's own count, the faster one, when
//     every row has it, else all on the API's (their names say so). node-llama-cpp is loaded
//     once a process (llama_cpp.mjs's loadLlamaCpp): a second getLlama loses the logger that
//     printTimings's lines come through.
// Run alone: node tests/bench/llama_cpp_speed.mjs [--quick] (writes tests/out/llama_cpp_speed.md
// and .json).
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ROOT } from '../lib/run.mjs';
import { NODE_LLAMA_CPP, llamaCppRelease, loadLlamaCpp } from './llama_cpp.mjs';
import { PREFILL, attnlabBench, attnlabGreedy, attnlabHasThreads, benchIds, loadLine, loadNow, speedModels } from './speed_models.mjs';
import { ROUNDS, median, showRatio, spread, targetTable } from './stats.mjs';

const GREEDY_CHECKED = 8; // the first decode ids compared with AttnLab's greedy continuation
const firstLine = (e) => String(e && e.message ? e.message : e).split('\n')[0];

// llama_perf_context's lines, as printed since the last print: { prompt: {ms, n}, eval: {ms, n} }
// (null where its line is not among them). llama.cpp counts a llama_decode of one token as an
// eval run and a longer one's tokens as prompt eval, and prints a count of 0 as 1 (at 0.00 ms).
export function perfCounts(lines) {
  const text = lines.join('\n');
  const prompt = text.match(/prompt eval time =\s*([\d.]+) ms \/\s*(\d+) tokens/);
  const evals = text.match(/eval time =\s*([\d.]+) ms \/\s*(\d+) runs/); // "runs": not the prompt's line
  return { prompt: prompt && { ms: Number(prompt[1]), n: Number(prompt[2]) }, eval: evals && { ms: Number(evals[1]), n: Number(evals[2]) } };
}

// Tokens/s by llama.cpp's own count of a run of n tokens: undefined (and why, in `misses`) unless
// its count is the run's.
export function ownRate(count, n, what, misses) {
  if (count && count.n === n && count.ms > 0) return (1e3 * n) / count.ms;
  misses.add(count ? `${what}: llama.cpp counted ${count.n} in ${count.ms} ms where the run had ${n}` : `${what}: no llama_perf_context line in the log`);
  return undefined;
}

// Waits until done(lines) holds: the addon hands llama.cpp's log lines to JavaScript through a
// queue the event loop drains, so they may come a few turns after the call that printed them.
// Gives up (false) after `ms`, a hang guard far above the few milliseconds they take.
async function arrived(lines, done, ms = 5000) {
  const end = performance.now() + ms;
  while (!done(lines)) {
    if (performance.now() > end) return false;
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
  return true;
}

// llama.cpp's side of one model: loaded once, a context per thread count; run(r, threads) does
// one run and returns tokens/s through the API and by llama.cpp's own count, and the first
// decoded ids. misses: why an own count was left out.
async function llamaSide(llama, logs, model, threadCounts, misses) {
  logs.length = 0;
  const m = await llama.loadModel({ modelPath: model.gguf, gpuLayers: 0 });
  const isBuffer = (l) => /model buffer size/.test(l);
  await arrived(logs, (ls) => ls.some(isBuffer));
  const buffers = logs.filter(isBuffer).map((l) => l.replace(/^.*load_tensors:\s*/, '').replace(/\s+/g, ' ').trim());
  const contexts = {}, seqs = {};
  for (const t of threadCounts) {
    contexts[t] = await m.createContext({ contextSize: model.context + 8, batchSize: PREFILL, sequences: 1, threads: { ideal: t, min: t },
      flashAttention: false, experimentalKvCacheKeyType: 'F32', experimentalKvCacheValueType: 'F32', performanceTracking: true });
    seqs[t] = contexts[t].getSequence();
  }
  const counted = async (ctx) => { // llama_perf_context since the last print (printing resets it)
    logs.length = 0;
    await ctx.printTimings();
    await arrived(logs, (ls) => { const c = perfCounts(ls); return c.prompt && c.eval; });
    return perfCounts(logs);
  };
  const one = async (r, t) => {
    const ctx = contexts[t], seq = seqs[t];
    const ids = benchIds(r.prompt + 1, model.vocab);
    await seq.clearHistory();
    await counted(ctx);
    let t0 = performance.now();
    await seq.evaluateWithoutGeneratingNewTokens(ids.slice(0, r.prompt));
    const prefillMs = performance.now() - t0;
    const pre = await counted(ctx);
    const out = { prefill_api: (1e3 * r.prompt) / prefillMs, prefill_own: r.prompt === PREFILL ? ownRate(pre.prompt, r.prompt, `${model.name} ${model.dtype} prefill`, misses) : undefined };
    if (!r.decode) return out;
    const decoded = [];
    t0 = performance.now();
    for await (const token of seq.evaluate([ids[r.prompt]], { temperature: 0, yieldEogToken: true })) {
      decoded.push(token);
      if (decoded.length >= r.decode) break;
    }
    const decodeMs = performance.now() - t0;
    const dec = await counted(ctx);
    if (decoded.length !== r.decode) throw new Error(`llama.cpp stopped after ${decoded.length} of ${r.decode} decode steps`);
    return { ...out, decode_api: (1e3 * r.decode) / decodeMs, decode_own: ownRate(dec.eval, r.decode, `${model.name} ${model.dtype} decode`, misses), ids: decoded };
  };
  return {
    buffers,
    threads: Object.fromEntries(Object.entries(contexts).map(([t, c]) => [t, c.idealThreads])),
    // `repeats` runs (after one warm-up when warm), the median of each count
    async run(r, t, repeats, warm) {
      if (warm) await one(r, t);
      const runs = [];
      for (let i = 0; i < repeats; i++) runs.push(await one(r, t));
      const med = (k) => (runs.some((x) => x[k] === undefined) ? undefined : median(runs.map((x) => x[k])));
      return { prefill_api: med('prefill_api'), prefill_own: med('prefill_own'), decode_api: med('decode_api'), decode_own: med('decode_own'), ids: runs[0].ids };
    },
    async dispose() {
      for (const c of Object.values(contexts)) await c.dispose();
      await m.dispose();
    },
  };
}

// The comparisons: per model and run, AttnLab at one thread against llama.cpp at one, and (the
// MiniMind-3-shaped model) against llama.cpp at two, AttnLab at two where the CLI takes
// --threads. Each gives a prefill row (a run of PREFILL tokens) and a decode row.
function comparisons(models, hasThreads) {
  const list = [];
  for (const model of models) {
    for (const r of model.runs) {
      const pairs = model.name === 'stories260K' ? [[1, 1]] : [[1, 1], [hasThreads ? 2 : 1, 2]];
      for (const [ours, theirs] of pairs) list.push({ model, run: r, ours, theirs });
    }
  }
  return list;
}

export async function llamaCppSpeedBench({ quick = false } = {}) {
  const { llama, lines: logs, note } = await loadLlamaCpp(); // the process's one Llama: its logger is where printTimings's lines come
  if (note) return { note, rows: [] };
  // ggml's CPU backend: the variant for this CPU that node-llama-cpp loaded, as the process maps it
  const backend = (existsSync('/proc/self/maps') ? readFileSync('/proc/self/maps', 'utf8') : '').match(/libggml-cpu-([\w-]+)\.so/);
  const systemInfo = llama.systemInfo.replace(/^CPU : /, '').replace(/ = 1/g, '').replace(/\s*\|\s*$/, '').replace(/ \| /g, ' ');
  const hasThreads = attnlabHasThreads();
  const load = [loadNow()];
  const rows = [];
  const sides = [];
  const misses = new Set();
  try {
    const models = speedModels();
    const list = comparisons(models, hasThreads);
    for (const model of models) {
      const threadCounts = [...new Set(list.filter((c) => c.model === model).map((c) => c.theirs))];
      sides.push({ model, side: await llamaSide(llama, logs, model, threadCounts, misses) });
    }
    const repeatsOf = (model) => (model.name === 'stories260K' ? (quick ? 3 : 10) : 1);
    const rounds = list.map(() => []);
    const t0 = performance.now();
    for (let round = 0; round < ROUNDS; round++) {
      console.error(`  llama.cpp speed: round ${round + 1} of ${ROUNDS} (${((performance.now() - t0) / 1e3).toFixed(0)} s)`);
      const ours = new Map(); // one AttnLab process per model, run and thread count a round
      for (const [i, c] of list.entries()) {
        const key = `${c.model.name} ${c.model.dtype} ${c.run.prompt} ${c.run.decode} ${c.ours}`;
        if (!ours.has(key)) ours.set(key, attnlabBench(c.model, c.run, { repeats: repeatsOf(c.model), threads: c.ours, hasThreads }));
        const side = sides.find((s) => s.model === c.model).side;
        rounds[i].push({ ours: ours.get(key), theirs: await side.run(c.run, c.theirs, repeatsOf(c.model), round === 0) });
      }
    }
    for (const [i, c] of list.entries()) {
      const side = sides.find((s) => s.model === c.model).side;
      const rs = rounds[i];
      const base = { model: c.model.name, dtype: c.model.dtype, attnlab_threads: c.ours, llama_threads: c.theirs, llama_threads_used: side.threads[c.theirs], weights: side.buffers.join(', ') };
      for (const work of ['prefill', 'decode']) {
        if (work === 'prefill' ? c.run.prompt !== PREFILL : !c.run.decode) continue;
        const a = rs.map((x) => x.ours[`${work}_tokens_per_s`]), api = rs.map((x) => x.theirs[`${work}_api`]), own = rs.map((x) => x.theirs[`${work}_own`]);
        const row = { ...base, work: work === 'prefill' ? `prefill of ${PREFILL}` : `decode, ${c.run.decode} steps after ${c.run.prompt}`, kind: work,
          attnlab_tokens_per_s: median(a), llama_api_tokens_per_s: median(api), vs_api: spread(a.map((v, k) => v / api[k])) };
        if (own.every((v) => v !== undefined)) Object.assign(row, { llama_own_tokens_per_s: median(own), vs_own: spread(a.map((v, k) => v / own[k])) });
        if (work === 'decode') {
          const want = attnlabGreedy(c.model, benchIds(c.run.prompt + 1, c.model.vocab), GREEDY_CHECKED), got = rs[0].theirs.ids.slice(0, GREEDY_CHECKED);
          let agree = 0;
          while (agree < want.length && got[agree] === want[agree]) agree++;
          row.greedy_agree = agree;
          row.greedy_checked = want.length;
        }
        rows.push(row);
      }
    }
  } catch (e) {
    return { note: `the speed comparison failed: ${firstLine(e)}`, rows };
  } finally {
    for (const s of sides) await s.side.dispose();
  }
  load.push(loadNow());
  const versions = { 'node-llama-cpp': NODE_LLAMA_CPP, 'llama.cpp': llamaCppRelease() };
  const how = {
    attnlab: `build/attnlab bench --model FILE --seq P --decode D --repeats R${hasThreads ? ' --threads N' : ''} (al_model_bench_run: a warm-up run then R timed, medians; each step one al_model_forward with the last token's logits, no sampling; loading excluded), one process a round; ${hasThreads ? 'threads as the rows say' : 'one thread: this CLI takes no --threads yet (attnlab help), so the rows beside llama.cpp\'s two threads are AttnLab\'s one'}`,
    'llama.cpp': `node-llama-cpp ${NODE_LLAMA_CPP} (llama.cpp ${versions['llama.cpp']}), its prebuilt linux-x64 CPU binary; ggml's CPU backend ${backend ? `libggml-cpu-${backend[1]}` : '(variant not logged)'} (${systemInfo}); the GGUF loaded once (gpuLayers 0, mmap), a context per thread count: threads {ideal: N, min: N}, batch ${PREFILL}, KV cache F32, flash attention off; per run: sequence.clearHistory(), evaluateWithoutGeneratingNewTokens(prompt) (prefill), then sequence.evaluate([next id], {temperature: 0, yieldEogToken: true}) for D tokens (decode: greedy); a warm-up run before the first round`,
    machine: loadLine(...load),
    counts: `llama.cpp API: performance.now() around those calls (node-llama-cpp's JavaScript, its addon's thread hand-offs and the greedy sampler included); llama.cpp own count: llama_perf_context (context.printTimings(), performanceTracking on) over the same runs, its llama_decode calls alone; the targets use ${targetCount(rows) === 'own' ? 'the own count' : `the API's: the own count is not there for every row${misses.size ? ` (${[...misses].join('; ')})` : ''}`}`,
    models: 'stories260K.bin (float32) and stories260K-f32.gguf; a MiniMind-3-shaped model (hidden 768, 8 layers, 8/4 heads, head_dim 96, FFN 2432, vocabulary 6400, 64M parameters) that `attnlab train` writes after one step, float32, and that folder converted by `attnlab convert --dtype f16`; their GGUFs by `attnlab convert --out X.gguf` (the float16 one from the float16 folder: the same values on both sides); prompt ids (7 i + 3) mod vocab, as al_model_bench_run makes them',
  };
  return { how, versions, attnlab_threads_flag: hasThreads, rows, own_missing: [...misses] };
}

const fmtDefault = (v) => (v === undefined || Number.isNaN(v) ? '—' : v >= 100 ? v.toFixed(1) : v.toPrecision(3));
const threadsOf = (n) => `${n} thread${n > 1 ? 's' : ''}`;

export function llamaCppSpeedMarkdown(result, fmt = fmtDefault) {
  const { how, rows, note } = result;
  const md = [`AttnLab against llama.cpp on the same weights (tokens/s; ${ROUNDS} rounds of AttnLab then llama.cpp: medians, and AttnLab / llama.cpp per round, its median and range; > 1: AttnLab is faster):`, ''];
  if (note) md.push(`Not run: ${note}.`, '');
  if (!rows.length) return md;
  md.push('| model | dtype | work | AttnLab | llama.cpp | AttnLab tokens/s | llama.cpp, own count | llama.cpp, through its API | AttnLab / llama.cpp (own count) | AttnLab / llama.cpp (API) | greedy ids equal |',
    '|---|---|---|---|---|---:|---:|---:|---:|---:|---:|');
  for (const r of rows) {
    md.push(`| ${r.model} | ${r.dtype} | ${r.work} | ${threadsOf(r.attnlab_threads)} | ${threadsOf(r.llama_threads)} | ${fmt(r.attnlab_tokens_per_s)} | ${fmt(r.llama_own_tokens_per_s)} | ${fmt(r.llama_api_tokens_per_s)} | ${showRatio(r.vs_own, fmt)} | ${showRatio(r.vs_api, fmt)} | ${r.greedy_checked ? `${r.greedy_agree} of ${r.greedy_checked}` : ''} |`);
  }
  const weights = [...new Set(rows.map((r) => `${r.model} ${r.dtype}: ${r.weights}`))];
  md.push('', ...Object.entries(how).map(([k, v]) => `- ${k}: ${v}`), `- llama.cpp's weight buffers (its load log): ${weights.join('; ')}`,
    '- greedy ids equal: the first decode ids llama.cpp drew against `attnlab generate --temperature 0` on the same prompt (a check that both run the same model; the MiniMind-3-shaped model is one step from its random initialisation, so its top logits are close and a float16 product rounded otherwise may pick another)', '');
  md.push(...targetTable(llamaCppSpeedTargets(result, fmt)), '');
  return md;
}

// The count of llama.cpp's the targets are judged on, one for all of them: 'own' (llama_perf_context)
// when every row has it, else 'api'.
export const targetCount = (rows) => (rows.length && rows.every((r) => r.vs_own) ? 'own' : 'api');

// The targets' rows as run.mjs lists them: [name, value, ok, show], value the median ratio
// AttnLab / llama.cpp by targetCount's count, which the names say when it is the API's.
export function llamaCppSpeedTargets({ rows }, fmt = fmtDefault) {
  const count = targetCount(rows);
  const pick = (model, dtype, kind, theirs) => rows.find((r) => r.model === model && r.dtype === dtype && r.kind === kind && r.llama_threads === theirs);
  const target = (name, least, model, dtype, kind, theirs = 1) => {
    const r = pick(model, dtype, kind, theirs);
    const at = r && r.attnlab_threads !== r.llama_threads ? ` (AttnLab on ${threadsOf(r.attnlab_threads)}: no --threads yet)` : '';
    const by = count === 'api' ? ' (llama.cpp through its API: its own count not captured)' : '';
    const vs = r && (count === 'own' ? r.vs_own : r.vs_api);
    return [`${name}${at}${by}`, vs ? vs.median : undefined, (v) => v >= least,
      () => (count === 'own' ? `${showRatio(r.vs_own, fmt)}; through its API ${showRatio(r.vs_api, fmt)}` : `${showRatio(r.vs_api, fmt)} through its API`)];
  };
  const mm = 'MiniMind-3-shaped';
  return [
    target('stories260K decode ≥ 3× llama.cpp, 1 thread each', 3, 'stories260K', 'f32', 'decode'),
    target('stories260K prefill of 512 ≥ 3× llama.cpp, 1 thread each', 3, 'stories260K', 'f32', 'prefill'),
    ...['f32', 'f16'].flatMap((dtype) => [
      target(`${mm} ${dtype} decode ≥ 1.25× llama.cpp, 1 thread each`, 1.25, mm, dtype, 'decode'),
      target(`${mm} ${dtype} decode ≥ 1.25× llama.cpp, 2 threads each`, 1.25, mm, dtype, 'decode', 2),
      target(`${mm} ${dtype} prefill of 512 ≥ 1.0× llama.cpp, 1 thread each`, 1.0, mm, dtype, 'prefill'),
      target(`${mm} ${dtype} prefill of 512 ≥ 1.0× llama.cpp, 2 threads each`, 1.0, mm, dtype, 'prefill', 2),
    ]),
  ];
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const r = await llamaCppSpeedBench({ quick: process.argv.includes('--quick') });
  const md = llamaCppSpeedMarkdown(r);
  mkdirSync(join(ROOT, 'tests', 'out'), { recursive: true });
  writeFileSync(join(ROOT, 'tests', 'out', 'llama_cpp_speed.json'), JSON.stringify(r, null, 2) + '\n');
  writeFileSync(join(ROOT, 'tests', 'out', 'llama_cpp_speed.md'), md.join('\n') + '\n');
  console.log(md.join('\n'));
  process.exit(r.note ? 1 : 0);
}
