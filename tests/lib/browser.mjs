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
// failed requests and any request that leaves the page's own origin (or file://).
export async function openPage(context, url) {
  const page = await context.newPage();
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
  await page.waitForSelector('body[data-ready="true"]', { timeout: 20000 });
  return { page, problems };
}

// The layer lab's tab shown (a link without layer-lab settings opens the model view) and its
// charts drawn.
export async function showLayerLab(page) {
  if (await page.$eval('#view-layer', (v) => v.hidden)) await page.click('#tab-layer');
  await page.waitForFunction(() => window.Chart.getChart(document.getElementById('chart-attn')) &&
    document.querySelectorAll('#verify tbody tr').length > 0);
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
