// wasm_threads.mjs — AttnLab's WebAssembly on two threads against one, in headless Chromium,
// on the models and the work of tests/bench/wllama.mjs (speed_models.mjs: stories260K and the
// MiniMind-3-shaped model; a prefill of 512 ids and greedy decode steps). One page, cross-origin
// isolated (wllama.mjs's server sends COOP/COEP), holds both builds through the page's binding:
// web/gen/attnlab.wasm (one thread) and web/gen/attnlab-threads.wasm (two: the caller's and one
// Worker, web/core/wasm-thread.js), a model lab of each for the same files (charts off, the end
// token passed over). ROUNDS rounds of one thread then two (A B A B …): medians, and two / one
// per round, its median and range. Target: two threads ≥ 1.6× one. Both builds' sizes too.
// Run alone: node tests/bench/wasm_threads.mjs [--quick] (writes tests/out/wasm-threads.md and .json).
import { mkdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ROOT } from '../lib/run.mjs';
import { PREFILL, loadLine, loadNow, speedModels } from './speed_models.mjs';
import { ROUNDS, median, showRatio, spread, targetTable } from './stats.mjs';
import { pageRunLab, serve } from './wllama.mjs';

export const THREADS_TARGET = 1.6;
const firstLine = (e) => String(e && e.message ? e.message : e).split('\n')[0];
const WASM = { 1: join(ROOT, 'web', 'gen', 'attnlab.wasm'), 2: join(ROOT, 'web', 'gen', 'attnlab-threads.wasm') };

const PAGE = `<!doctype html><html lang="en"><meta charset="utf-8"><title>AttnLab on one and two threads</title><body>
<script type="module">
import * as AttnLab from '/attnlab/attnlab-api.js';
window.AttnLab = AttnLab;
document.body.dataset.ready = 'true';
</script></body></html>
`;

// In the page: both builds' cores (once) and a model lab of each for the model's files.
async function pageLoad({ urls, context }) {
  const get = async (u) => (u ? new Uint8Array(await (await fetch(u)).arrayBuffer()) : null);
  if (!window.cores) {
    window.cores = {
      1: await window.AttnLab.load({ wasmBinary: await get('/attnlab/attnlab.wasm') }),
      2: await window.AttnLab.load({ wasmBinary: await get('/attnlab/attnlab-threads.wasm'), threads: 2, threadScript: '/attnlab/wasm-thread.js' }),
    };
  }
  const files = { model: await get(urls.model), config: await get(urls.config), tokenizer: await get(urls.tokenizer), context };
  window.labs = window.labs || {};
  const threads = {};
  for (const t of [1, 2]) {
    if (window.labs[t]) window.labs[t].free();
    const lab = window.labs[t] = window.cores[t].createModelLab(files);
    lab.setCharts(false);
    lab.setIgnoreEos(true);
    threads[t] = lab.threads;
  }
  return threads;
}

// models: speed_models.mjs's list (made there when not given).
export async function wasmThreadsBench({ quick = false, models = null } = {}) {
  const sizes = Object.fromEntries(Object.entries(WASM).map(([t, p]) => [t, statSync(p, { throwIfNoEntry: false })?.size ?? null]));
  if (!sizes[2]) return { note: 'web/gen/attnlab-threads.wasm is missing: run bash build.sh wasm', rows: [], sizes };
  const files = new Map([
    ['/attnlab/wasm-loader.js', join(ROOT, 'web', 'core', 'wasm-loader.js')], ['/attnlab/attnlab-api.js', join(ROOT, 'web', 'core', 'attnlab-api.js')],
    ['/attnlab/wasm-thread.js', join(ROOT, 'web', 'core', 'wasm-thread.js')],
    ['/attnlab/attnlab.wasm', WASM[1]], ['/attnlab/attnlab-threads.wasm', WASM[2]],
  ]);
  try {
    models = models || speedModels();
  } catch (e) {
    return { note: firstLine(e), rows: [], sizes };
  }
  models.forEach((m, i) => { for (const [k, p] of Object.entries(m.files)) files.set(`/models/${i}/${k}`, p); });
  const { launch } = await import('../lib/browser.mjs');
  const server = await serve(files, PAGE);
  const browser = await launch();
  const rows = [], problems = [], before = loadNow();
  try {
    const page = await browser.context.newPage();
    page.on('pageerror', (e) => problems.push(`uncaught: ${e.message}`));
    page.on('console', (m) => { if (m.type() === 'error') problems.push(`console: ${m.text()}`); });
    await page.goto(`http://127.0.0.1:${server.address().port}/`);
    await page.waitForFunction(() => document.body.dataset.ready === 'true', null, { timeout: 60000 }); // a hang guard
    if (!(await page.evaluate(() => window.crossOriginIsolated))) throw new Error('the page is not cross-origin isolated');
    for (const [i, model] of models.entries()) {
      console.error(`  wasm threads: ${model.name} ${model.dtype}`);
      const urls = Object.fromEntries(Object.keys(model.files).map((k) => [k, `/models/${i}/${k}`]));
      const threads = await page.evaluate(pageLoad, { urls, context: model.context });
      const repeats = model.name === 'stories260K' ? (quick ? 2 : 5) : 1;
      for (const r of model.runs) {
        const n = Math.min(r.prompt, model.context - 1);
        const ids = Array.from({ length: n }, (_, k) => (7 * k + 3) % model.vocab);
        const side = (t) => page.evaluate(pageRunLab, { t, ids, decode: r.decode });
        // a warm-up of each (V8's optimising tier: at least 1 s and 2 runs), then the rounds
        for (const t of [1, 2]) {
          const until = performance.now() + 1000;
          for (let w = 0; w < 2 || performance.now() < until; w++) await side(t);
        }
        const rounds = [];
        let same = true;
        for (let round = 0; round < ROUNDS; round++) {
          const got = { 1: [], 2: [] };
          for (const t of [1, 2]) for (let k = 0; k < repeats; k++) got[t].push(await side(t));
          same = same && JSON.stringify(got[1][0].ids) === JSON.stringify(got[2][0].ids);
          rounds.push(got);
        }
        for (const kind of ['prefill', 'decode']) {
          if (kind === 'prefill' ? r.prompt !== PREFILL : !r.decode) continue;
          const per = (t) => rounds.map((x) => median(x[t].map((y) => y[kind])));
          const one = per(1), two = per(2);
          rows.push({ model: model.name, dtype: model.dtype, kind, work: kind === 'prefill' ? `prefill of ${ids.length}` : `decode, ${r.decode} steps after ${ids.length}`,
            threads: [threads[1], threads[2]], one_tokens_per_s: median(one), two_tokens_per_s: median(two),
            ratio: spread(two.map((v, k) => v / one[k])), decoded_ids_equal: same });
        }
      }
    }
    await page.close();
  } catch (e) {
    return { note: `the browser comparison failed: ${firstLine(e)}${problems.length ? ` (${problems.join('; ')})` : ''}`, rows, sizes };
  } finally {
    await browser.close();
    server.close();
  }
  const how = {
    builds: `web/gen/attnlab.wasm (one thread, ${sizes[1]} bytes; the one dist/attnlab.html carries) and web/gen/attnlab-threads.wasm (atomics, bulk memory, a shared memory; ${sizes[2]} bytes), both -msimd128, float32 panels (model_load.c widens 16-bit weights at load in WebAssembly)`,
    page: 'one page served by wllama.mjs\'s server (COOP same-origin, COEP require-corp), both builds loaded through the page\'s binding on the page\'s thread (the threaded one starts one Worker); a model lab of each, setCharts(false), setIgnoreEos(true); prefill = promptIds(ids (7 i + 3) mod vocab), decode = step({temperature: 0}); performance.now() around them',
    machine: loadLine(before, loadNow()),
    runs: `a warm-up of each (at least 1 s and 2 runs), then ${ROUNDS} rounds, one thread then two; stories260K ${quick ? 2 : 5} runs a round (their median), the MiniMind-3-shaped model one`,
  };
  return { how, sizes, rows };
}

const fmtDefault = (v) => (v === undefined || v === null || Number.isNaN(v) ? '—' : v >= 100 ? v.toFixed(1) : v.toPrecision(3));

export function wasmThreadsMarkdown(result, fmt = fmtDefault) {
  const { how, rows, note, sizes } = result;
  const md = [`AttnLab's WebAssembly on two threads against one in headless Chromium (tokens/s; ${ROUNDS} rounds of one then two: medians, and two / one per round, its median and range):`, ''];
  if (sizes) md.push(`Builds: one thread ${sizes[1] ?? '—'} bytes, two threads ${sizes[2] ?? '—'} bytes.`, '');
  if (note) md.push(`Not run: ${note}.`, '');
  if (!rows.length) return md;
  md.push('| model | dtype | work | 1 thread tokens/s | 2 threads tokens/s | 2 / 1 | decoded ids equal |', '|---|---|---|---:|---:|---:|:---:|');
  for (const r of rows) md.push(`| ${r.model} | ${r.dtype} | ${r.work} | ${fmt(r.one_tokens_per_s)} | ${fmt(r.two_tokens_per_s)} | ${showRatio(r.ratio, fmt)} | ${r.decoded_ids_equal ? 'yes' : '**no**'} |`);
  md.push('', ...Object.entries(how).map(([k, v]) => `- ${k}: ${v}`), '');
  return md;
}

// The target rows for run.mjs's table: each row's two / one against 1.6.
export const wasmThreadsTargets = (result, fmt = fmtDefault) => result.rows.map((r) => [
  `WebAssembly two threads ≥ ${THREADS_TARGET}× one (${r.model} ${r.dtype}, ${r.work})`, r.ratio.median, (v) => v >= THREADS_TARGET, (v) => `${fmt(v)}×`]);

if (process.argv[1] && pathToFileURL(process.argv[1]).href === import.meta.url) {
  const result = await wasmThreadsBench({ quick: process.argv.includes('--quick') });
  const out = join(ROOT, 'tests', 'out');
  mkdirSync(out, { recursive: true });
  writeFileSync(join(out, 'wasm-threads.json'), `${JSON.stringify(result, null, 2)}\n`);
  const md = [...wasmThreadsMarkdown(result), ...targetTable(wasmThreadsTargets(result))].join('\n');
  writeFileSync(join(out, 'wasm-threads.md'), `${md}\n`);
  console.log(md);
}
