// wllama.mjs — AttnLab's WebAssembly against llama.cpp's (npm @wllama/wllama) in headless Chromium,
// on the same weights (tests/bench/speed_models.mjs: AttnLab's files and the GGUF `attnlab
// convert` writes from them) and the same work as tests/bench/llama_cpp_speed.mjs: a prefill of
// 512 tokens and one-token greedy decode steps. ROUNDS rounds of AttnLab then wllama (A B A B …)
// per model in one page: medians over the rounds, and AttnLab / wllama per round, its median and
// range (> 1: AttnLab is faster).
//   - AttnLab: the page's own binding (web/core/wasm-loader.js, web/core/attnlab-api.js, web/gen/attnlab.wasm)
//     on the page's thread: the model lab with its charts off and the end token passed over
//     (Core.createModelLab, setCharts(false), setIgnoreEos(true)); prefill = promptIds(prompt),
//     decode = step({temperature: 0}) (a greedy draw, then the drawn token through the model),
//     each timed with performance.now(). One thread (tests/bench/wasm_threads.mjs: two against one).
//   - wllama: its single build (esm/wasm/wllama.wasm: memory64, JSPI, SIMD; threads at run time)
//     in its own Worker, the GGUF loaded once per thread count (n_gpu_layers 0: the CPU, no
//     WebGPU; n_ctx the run's, n_batch = n_ubatch = 512, KV cache f32, flash attention off, one
//     slot), then per run one createCompletion of the prompt ids (temperature 0: greedy; the end
//     token ignored; prompt cache off), timed by llama-server's own counts that it returns
//     (timings.prompt_ms: the prompt's evaluation; timings.predicted_ms: from the first token
//     drawn to the last, predicted_n − 1 decode steps, each a llama_decode and its sampler).
//     One thread, and two where the page is cross-origin isolated: the bench's own server sends
//     COOP/COEP (wllama's shared memory needs it even for one thread).
// Run alone: node tests/bench/wllama.mjs [--quick] (writes tests/out/wllama.md and .json).
import { readFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { extname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ROOT } from '../lib/run.mjs';
import { installPeer } from './npm_peer.mjs';
import { PREFILL, attnlabGreedy, loadLine, loadNow, speedModels, textOfTokens } from './speed_models.mjs';
import { ROUNDS, median, showRatio, spread, targetTable } from './stats.mjs';

export const WLLAMA = '3.13.0';
const GREEDY_CHECKED = 8;
const TYPES = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8', '.wasm': 'application/wasm' };
const firstLine = (e) => String(e && e.message ? e.message : e).split('\n')[0];

// The page: AttnLab's binding as the page loads it, and wllama's module.
const PAGE = `<!doctype html><html lang="en"><meta charset="utf-8"><title>AttnLab and wllama</title><body>
<script type="module">
import * as AttnLab from '/attnlab/attnlab-api.js';
import { Wllama } from '/wllama/esm/index.js';
window.AttnLab = AttnLab;
window.Wllama = Wllama;
document.body.dataset.ready = 'true';
</script></body></html>
`;

// The bench's server: the page, the two engines' files and the models' (files: URL path →
// file; page: the HTML at /, this bench's by default), cross-origin isolated (COOP, COEP and CORP on every answer).
export function serve(files, page = PAGE) {
  const server = createServer((req, res) => {
    const path = decodeURIComponent(new URL(req.url, 'http://localhost').pathname);
    const headers = { 'Cross-Origin-Opener-Policy': 'same-origin', 'Cross-Origin-Embedder-Policy': 'require-corp',
      'Cross-Origin-Resource-Policy': 'same-origin', 'Cache-Control': 'no-cache' };
    try {
      const body = path === '/' ? Buffer.from(page) : files.has(path) ? readFileSync(files.get(path)) : null;
      if (!body) throw Object.assign(new Error(`not served: ${path}`), { code: 'ENOENT' });
      res.writeHead(200, { ...headers, 'Content-Type': TYPES[path === '/' ? '.html' : extname(path)] || 'application/octet-stream' });
      res.end(body);
    } catch (e) {
      if (process.env.WLLAMA_DEBUG) console.error(e.message);
      res.writeHead(e.code === 'ENOENT' ? 404 : 500, { ...headers, 'Content-Type': 'text/plain' });
      res.end('not found\n');
    }
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve(server));
  });
}

// In the page: AttnLab's model lab for a model (its files by URL), charts off, the end token passed over.
async function pageLoadAttnLab({ urls, context }) {
  const get = async (u) => (u ? new Uint8Array(await (await fetch(u)).arrayBuffer()) : null);
  if (!window.core) window.core = await window.AttnLab.load({ wasmBinary: await (await fetch('/attnlab/attnlab.wasm')).arrayBuffer() });
  if (window.lab) window.lab.free();
  window.lab = window.core.createModelLab({ model: await get(urls.model), config: await get(urls.config), tokenizer: await get(urls.tokenizer), context });
  window.lab.setCharts(false);
  window.lab.setIgnoreEos(true);
}

// In the page: one AttnLab run on window.lab (or window.labs[t]), tokens/s, and the decoded
// ids (the first `keep` of them, all if not given). Also the two-thread bench's (wasm_threads.mjs).
export function pageRunLab({ t, ids, decode, keep }) {
  const lab = t === undefined ? window.lab : window.labs[t];
  let t0 = performance.now();
  lab.promptIds(ids);
  const prefillMs = performance.now() - t0;
  t0 = performance.now();
  for (let i = 0; i < decode; i++) lab.step({ temperature: 0 });
  const decodeMs = performance.now() - t0;
  const made = Array.from(lab.ids()).slice(ids.length);
  return { prefill: (1e3 * ids.length) / prefillMs, decode: decode ? (1e3 * decode) / decodeMs : null, ids: keep === undefined ? made : made.slice(0, keep) };
}

// In the page: wllama with a model (the GGUF by URL) on `threads` threads, as window.wl[key].
async function pageLoadWllama({ key, url, threads, context }) {
  window.wl = window.wl || {};
  const file = new File([await (await fetch(url)).arrayBuffer()], 'model.gguf');
  const w = new window.Wllama({ default: '/wllama/esm/wasm/wllama.wasm' }, { suppressNativeLog: true });
  await w.loadModel([file], { n_threads: threads, n_gpu_layers: 0, n_ctx: context, n_batch: 512, n_ubatch: 512,
    cache_type_k: 'f32', cache_type_v: 'f32', flash_attn: false, n_parallel: 1 });
  window.wl[key] = w;
  return { threads: w.getNumThreads(), multithread: w.isMultithread(), isolated: window.crossOriginIsolated };
}

// In the page: one wllama run (a completion of the prompt text: wllama takes no ids), its own counts.
async function pageRunWllama({ key, text, decode }) {
  const r = await window.wl[key].createCompletion({ prompt: text, max_tokens: decode + 1, temperature: 0, ignore_eos: true, cache_prompt: false });
  const t = r.timings;
  return { prompt_n: t.prompt_n, cache_n: t.cache_n, predicted_n: t.predicted_n, prefill: (1e3 * t.prompt_n) / t.prompt_ms,
    decode: decode ? (1e3 * (t.predicted_n - 1)) / t.predicted_ms : null };
}

async function pageFreeAll() {
  if (window.lab) window.lab.free();
  window.lab = null;
  for (const w of Object.values(window.wl || {})) await w.exit();
  window.wl = {};
}

// models: speed_models.mjs's list (made there when not given).
export async function wllamaBench({ quick = false, models = null } = {}) {
  const inst = installPeer('wllama', [`@wllama/wllama@${WLLAMA}`], ['@wllama/wllama/esm/index.js', '@wllama/wllama/esm/wasm/wllama.wasm']);
  if (inst.note) return { note: inst.note, rows: [] };
  const esm = join(inst.dir, 'node_modules', '@wllama', 'wllama', 'esm');
  const files = new Map([
    ['/attnlab/wasm-loader.js', join(ROOT, 'web', 'core', 'wasm-loader.js')], ['/attnlab/attnlab-api.js', join(ROOT, 'web', 'core', 'attnlab-api.js')],
    ['/attnlab/attnlab.wasm', join(ROOT, 'web', 'gen', 'attnlab.wasm')],
    ['/wllama/esm/index.js', join(esm, 'index.js')], ['/wllama/esm/wasm/wllama.wasm', join(esm, 'wasm', 'wllama.wasm')],
  ]);
  const libllama = (readFileSync(join(esm, 'index.js'), 'utf8').match(/LIBLLAMA_VERSION = "([^"]+)"/) || [])[1];
  try {
    models = models || speedModels();
  } catch (e) {
    return { note: firstLine(e), rows: [] };
  }
  models.forEach((m, i) => {
    for (const [k, p] of Object.entries(m.files)) files.set(`/models/${i}/${k}`, p);
    files.set(`/models/${i}/model.gguf`, m.gguf);
  });
  const { launch } = await import('../lib/browser.mjs');
  const server = await serve(files);
  const browser = await launch();
  const rows = [], problems = [], before = loadNow();
  let threading = null, isolated = false;
  try {
    const page = await browser.context.newPage();
    page.on('pageerror', (e) => problems.push(`uncaught: ${e.message}`));
    page.on('console', (m) => { if (m.type() === 'error') problems.push(`console: ${m.text()}`); });
    page.on('requestfailed', (q) => problems.push(`request failed: ${q.url()}`));
    await page.goto(`http://127.0.0.1:${server.address().port}/`);
    await page.waitForFunction(() => document.body.dataset.ready === 'true', null, { timeout: 60000 }); // a hang guard
    isolated = await page.evaluate(() => window.crossOriginIsolated);
    for (const [i, model] of models.entries()) {
      console.error(`  wllama: ${model.name} ${model.dtype}`);
      const urls = Object.fromEntries(Object.keys(model.files).map((k) => [k, `/models/${i}/${k}`]));
      await page.evaluate(pageLoadAttnLab, { urls, context: model.context });
      const threadCounts = isolated ? [1, 2] : [1];
      const loaded = {};
      for (const t of threadCounts) loaded[t] = await page.evaluate(pageLoadWllama, { key: String(t), url: `/models/${i}/model.gguf`, threads: t, context: model.context + 8 });
      threading = threading || loaded;
      const repeats = model.name === 'stories260K' ? (quick ? 2 : 5) : 1;
      for (const r of model.runs) {
        // The prompt: a text both tokenizers make the same ids of (wllama takes text, AttnLab
        // these ids); llama-server refuses a prompt that fills its whole context, so stories260K
        // (context 512) prefills 511 here.
        const { text, ids } = textOfTokens(model, Math.min(r.prompt, model.context - 1));
        const ours = () => page.evaluate(pageRunLab, { ids, decode: r.decode, keep: 8 });
        const theirs = (t) => page.evaluate(pageRunWllama, { key: String(t), text, decode: r.decode });
        // a warm-up of each side (V8 compiles WebAssembly with its optimising tier only after a
        // while: at least 1 s and 2 runs, as peers.mjs's medianMs), then ROUNDS rounds of
        // `repeats` runs each (their medians)
        for (const side of [ours, ...threadCounts.map((t) => () => theirs(t))]) {
          const until = performance.now() + 1000;
          for (let w = 0; w < 2 || performance.now() < until; w++) await side();
        }
        const rounds = [];
        for (let round = 0; round < ROUNDS; round++) {
          const a = [], b = Object.fromEntries(threadCounts.map((t) => [t, []]));
          for (let k = 0; k < repeats; k++) a.push(await ours());
          for (const t of threadCounts) for (let k = 0; k < repeats; k++) b[t].push(await theirs(t));
          rounds.push({ ours: a, theirs: b });
        }
        const want = r.decode ? attnlabGreedy(model, ids, GREEDY_CHECKED) : null;
        for (const t of threadCounts) {
          const seen = rounds[0].theirs[t][0];
          for (const kind of ['prefill', 'decode']) {
            if (kind === 'prefill' ? r.prompt !== PREFILL : !r.decode) continue;
            const a = rounds.map((x) => median(x.ours.map((y) => y[kind]))), b = rounds.map((x) => median(x.theirs[t].map((y) => y[kind])));
            const row = { model: model.name, dtype: model.dtype, kind, work: kind === 'prefill' ? `prefill of ${ids.length}` : `decode, ${r.decode} steps after ${ids.length}`,
              attnlab_threads: 1, wllama_threads: loaded[t].threads, attnlab_tokens_per_s: median(a), wllama_tokens_per_s: median(b), ratio: spread(a.map((v, k) => v / b[k])),
              prompt_ids: ids.length, wllama_prompt_n: seen.prompt_n, wllama_cache_n: seen.cache_n };
            if (kind === 'decode') {
              const got = rounds[0].ours[0].ids;
              let agree = 0;
              while (agree < want.length && got[agree] === want[agree]) agree++;
              Object.assign(row, { attnlab_greedy_agree: agree, greedy_checked: want.length });
            }
            rows.push(row);
          }
        }
      }
      await page.evaluate(pageFreeAll);
    }
    await page.close();
  } catch (e) {
    return { note: `the browser comparison failed: ${firstLine(e)}${problems.length ? ` (${problems.join('; ')})` : ''}`, rows };
  } finally {
    await browser.close();
    server.close();
  }
  const how = {
    attnlab: 'web/gen/attnlab.wasm through the page\'s own binding, on the page\'s thread, one thread (tests/bench/wasm_threads.mjs measures the threaded build): Core.createModelLab of the model\'s files (stories260K.bin with tok512.bin; the MiniMind folder\'s model.safetensors, config.json, tokenizer.json), setCharts(false), setIgnoreEos(true); prefill = promptIds(the prompt\'s ids), decode = step({temperature: 0}) (greedy draw, then the token through the model), performance.now() around them',
    wllama: `npm @wllama/wllama ${WLLAMA} (llama.cpp ${libllama || '—'}), its one build (esm/wasm/wllama.wasm: memory64, JSPI, SIMD128; pthreads at run time), in its Worker; loadModel(GGUF, {n_threads, n_gpu_layers: 0, n_ctx, n_batch: 512, n_ubatch: 512, cache_type_k/v: 'f32', flash_attn: false, n_parallel: 1}); a run = createCompletion({prompt: the text, max_tokens: steps + 1, temperature: 0, ignore_eos: true, cache_prompt: false}); tokens/s from the llama-server timings it returns: prompt_n / prompt_ms (prefill), (predicted_n − 1) / predicted_ms (decode: the steps after the first draw)`,
    browser: `Debian's Chromium, headless (tests/lib/browser.mjs), the page served by the bench itself with Cross-Origin-Opener-Policy same-origin and Cross-Origin-Embedder-Policy require-corp: crossOriginIsolated ${isolated}; wllama's two threads ${threading && threading[2] ? `measured (multithread ${threading[2].multithread}, ${threading[2].threads} threads)` : 'not measured: the page is not cross-origin isolated'}`,
    machine: loadLine(before, loadNow()),
    runs: `a warm-up of each side (at least 1 s and 2 runs), then ${ROUNDS} rounds, AttnLab then wllama (each thread count); the prompt "a a a …", which both tokenizers make the same ids of (AttnLab takes the ids, wllama the text, and reports how many tokens it saw); stories260K ${quick ? 2 : 5} runs a round (their median), the MiniMind-3-shaped model one; stories260K prefills 511 here, as llama-server refuses a prompt that fills the model's whole context of 512`,
  };
  return { how, versions: { '@wllama/wllama': WLLAMA, 'llama.cpp (wllama)': libllama }, rows };
}

const fmtDefault = (v) => (v === undefined || v === null || Number.isNaN(v) ? '—' : v >= 100 ? v.toFixed(1) : v.toPrecision(3));
const threadsOf = (n) => `${n} thread${n > 1 ? 's' : ''}`;

export function wllamaMarkdown(result, fmt = fmtDefault) {
  const { how, rows, note } = result;
  const md = [`AttnLab's WebAssembly against llama.cpp's (@wllama/wllama) in headless Chromium, the same weights (tokens/s; ${ROUNDS} rounds of AttnLab then wllama: medians, and AttnLab / wllama per round, its median and range; > 1: AttnLab is faster):`, ''];
  if (note) md.push(`Not run: ${note}.`, '');
  if (!rows.length) return md;
  md.push('| model | dtype | work | AttnLab | wllama | AttnLab tokens/s | wllama tokens/s | AttnLab / wllama | wllama prompt tokens | AttnLab greedy ids equal |', '|---|---|---|---|---|---:|---:|---:|---:|---:|');
  for (const r of rows) {
    const seen = r.wllama_prompt_n === r.prompt_ids ? String(r.wllama_prompt_n) : `**${r.wllama_prompt_n}** (AttnLab: ${r.prompt_ids})`;
    md.push(`| ${r.model} | ${r.dtype} | ${r.work} | ${threadsOf(r.attnlab_threads)} | ${threadsOf(r.wllama_threads)} | ${fmt(r.attnlab_tokens_per_s)} | ${fmt(r.wllama_tokens_per_s)} | ${showRatio(r.ratio, fmt)} | ${seen}${r.wllama_cache_n ? ` (${r.wllama_cache_n} cached)` : ''} | ${r.greedy_checked ? `${r.attnlab_greedy_agree} of ${r.greedy_checked}` : ''} |`);
  }
  md.push('', ...Object.entries(how).map(([k, v]) => `- ${k}: ${v}`), '- AttnLab greedy ids equal: the page\'s first decode ids against `attnlab generate --temperature 0` natively on the same prompt', '');
  md.push(...targetTable(wllamaTargets(result, fmt)), '');
  return md;
}

// The target's row as run.mjs lists them: [name, value, ok, show], value the smallest median
// AttnLab / wllama over the cases at one thread each.
export function wllamaTargets({ rows, note }, fmt = fmtDefault) {
  const one = rows.filter((r) => r.wllama_threads === 1);
  const worst = one.reduce((w, r) => (!w || r.ratio.median < w.ratio.median ? r : w), null);
  return [['AttnLab\'s WebAssembly ≥ 1.0× llama.cpp\'s (@wllama/wllama, headless Chromium), one thread each, every case', note || !worst ? undefined : worst.ratio.median,
    (v) => v >= 1, (v) => `${fmt(v)}× at worst (${worst.model} ${worst.dtype}, ${worst.work})`]];
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const r = await wllamaBench({ quick: process.argv.includes('--quick') });
  const md = wllamaMarkdown(r);
  mkdirSync(join(ROOT, 'tests', 'out'), { recursive: true });
  writeFileSync(join(ROOT, 'tests', 'out', 'wllama.json'), JSON.stringify(r, null, 2) + '\n');
  writeFileSync(join(ROOT, 'tests', 'out', 'wllama.md'), md.join('\n') + '\n');
  console.log(md.join('\n'));
  process.exit(r.note ? 1 : 0);
}
