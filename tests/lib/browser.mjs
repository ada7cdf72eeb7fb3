// browser.mjs — Debian's Chromium driven by playwright-core for the page tests: headless,
// no network side channels, a fresh profile each time; console errors and failed requests
// are collected per page.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before } from 'node:test';
import { chromium } from 'playwright-core';
import { startServer } from '../../web/serve.mjs';

const FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync'];

export async function launch() {
  const profile = mkdtempSync(join(tmpdir(), 'attnlab-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: '/usr/bin/chromium', headless: true, args: FLAGS, viewport: { width: 1400, height: 1800 },
  });
  return {
    context,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

// For a test file: the page served on a free port and a browser, started before its tests and
// closed after them; ready(browser, url) receives both once they are up.
export function servedBrowser(ready) {
  let browser, server;
  before(async () => {
    server = await startServer(0);
    browser = await launch();
    ready(browser, `http://127.0.0.1:${server.address().port}/`);
  });
  after(async () => {
    await browser?.close();
    server?.close();
  });
}

// Opens url in a new page and records problems: console errors/warnings, uncaught errors,
// failed requests and any request that leaves the page's own origin (or file://). viewport
// ({ width, height }) sizes the window before the page loads; the context's size otherwise.
export async function openPage(context, url, viewport) {
  const page = await context.newPage();
  if (viewport) await page.setViewportSize(viewport);
  const problems = [];
  const origin = url.startsWith('file:') ? 'file:' : new URL(url).origin;
  page.on('console', (m) => { if (m.type() === 'error' || m.type() === 'warning') problems.push(`console ${m.type()}: ${m.text()}`); });
  page.on('pageerror', (e) => problems.push(`uncaught: ${e.message}`));
  page.on('requestfailed', (r) => problems.push(`request failed: ${r.url()}`));
  page.on('request', (r) => {
    const u = r.url();
    if (!(u.startsWith(origin) || u.startsWith('data:') || u.startsWith('blob:'))) problems.push(`outside request: ${u}`);
  });
  await page.goto(url);
  // A hang guard, not a time limit: ten times and more the 3 s the bench holds the largest load to.
  await page.waitForSelector('body[data-ready="true"]', { timeout: 60000 });
  return { page, problems };
}

// The layer lab's tab shown (a link without layer-lab settings opens the model view) and its
// charts drawn.
export async function showLayerLab(page) {
  if (await page.$eval('#view-layer', (v) => v.hidden)) await page.click('#tab-layer');
  await page.waitForFunction(() => window.Chart.getChart(document.getElementById('chart-attn')) &&
    document.querySelectorAll('#verify tbody tr').length > 0);
}

// The layer lab's answers drawn: every request its worker (web/layer/worker.js) has been sent
// answered and painted (a Step, a control, a seed's walkthrough).
export async function layerDrawn(page) {
  await page.evaluate(() => window.attnlab.layerView.idle());
}

// The model view's first drawing done: the shipped model's prompt as chips and every head.
export async function modelViewDrawn(page) {
  await page.waitForFunction(() => document.querySelectorAll('#tokens .chip').length > 0 &&
    document.querySelectorAll('#chart-heads button.cell').length > 0 && window.Chart.getChart(document.getElementById('chart-next')));
}

// The Train tab shown, its default run started and paused once a few steps and an evaluation
// are drawn (the loss, the roles' curves and grid, the head over the probe).
export async function trainTabDrawn(page) {
  if (await page.$eval('#view-train', (v) => v.hidden)) await page.click('#tab-train');
  await page.waitForFunction(() => !document.getElementById('btn-train-start').disabled);
  await page.click('#btn-train-start');
  await page.waitForFunction(() => ['chart-loss', 'chart-roles-train', 'chart-roles-grid', 'chart-train-head']
    .every((id) => window.Chart.getChart(document.getElementById(id))) && !document.getElementById('btn-train-pause').disabled,
  null, { timeout: 30000 });
  await page.click('#btn-train-pause');
  await page.waitForFunction(() => /paused|已暂停/.test(document.getElementById('train-status').textContent));
}

// The layer lab at the page's largest settings (web/ui/state.js's limits, all at once), driven the
// same way for the page test, which checks what it shows, and for the bench, which reports how
// long each part took: opened at the last decode step (every step run, the time to data-ready),
// one Step and three language switches, each timed to the frame that shows it (a Step's answer
// comes from the layer view's worker), then a second page played and paused (the time until the
// button reads Play again), and what it shows once a step the worker was computing at Pause is
// drawn and 800 ms later. Waits are hang guards only (Playwright's 30 s, ten times any target and more).
export async function largestLayerLab(context, base) {
  const { FIELDS, MAX_TOKENS, MAX_HEAD_WIDTH } = await import('../../web/ui/state.js');
  const max = (k) => FIELDS[k][2];
  const prompt = max('prompt'), steps = MAX_TOKENS - prompt;
  const hash = `#prompt=${prompt}&steps=${steps}&hidden=${max('hidden')}&heads=${max('heads')}&kv=${max('kv')}` +
    `&hd=${MAX_HEAD_WIDTH / max('heads')}&base=${FIELDS.base[1]}&lang=en`;
  const rows = (page) => page.evaluate(() => window.Chart.getChart(document.getElementById('chart-mask')).options.plugins.matrixImage.rows);
  const out = { prompt, steps, shown: {} };
  const t0 = Date.now();
  const first = await openPage(context, `${base}${hash}&at=${prompt + steps - 1}`);
  out.load_ms = Date.now() - t0;
  const page = first.page;
  out.shown.loaded = await rows(page);
  // A Step or a language switch: the click's work, the worker's answer drawn and the frame that
  // shows it.
  const framed = (action) => page.evaluate((what) => new Promise((resolve) => {
    const t = performance.now();
    if (what === 'step') document.getElementById('btn-step').click();
    else {
      const lang = document.getElementById('lang');
      lang.value = lang.value === 'zh' ? 'en' : 'zh';
      lang.dispatchEvent(new Event('change'));
    }
    window.attnlab.layerView.idle().then(() => requestAnimationFrame(() => setTimeout(() => resolve(performance.now() - t), 0)));
  }), action);
  out.step_ms = await framed('step');
  out.shown.stepped = await rows(page);
  out.lang_ms = [];
  out.shown.langs = [];
  for (let i = 0; i < 3; i++) {
    out.lang_ms.push(await framed('lang'));
    out.shown.langs.push(await page.evaluate(() => document.documentElement.lang));
  }
  await page.close();

  const second = await openPage(context, `${base}${hash}`);
  const p2 = second.page;
  await p2.click('#btn-play');
  await p2.waitForFunction((n) => window.Chart.getChart(document.getElementById('chart-mask')).options.plugins.matrixImage.rows >= n + 3, prompt);
  const t1 = Date.now();
  await p2.click('#btn-play');
  await p2.waitForFunction(() => !/pause|暂停/i.test(document.getElementById('btn-play').textContent));
  out.pause_ms = Date.now() - t1;
  await layerDrawn(p2);
  out.shown.paused = await rows(p2);
  await p2.waitForTimeout(800);
  out.shown.later = await rows(p2);
  await p2.close();
  out.problems = [...first.problems, ...second.problems];
  return out;
}
