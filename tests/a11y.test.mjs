// a11y.test.mjs — the axe-core audit of the served page and of dist/attnlab.html (from
// file://), in each view (the model view, the layer lab, the Train tab after a few steps) once
// its charts are drawn, in both languages: no violations.
// Each violation found is printed with its impact and first elements. The walkthrough's
// listings, which axe asks to be focusable, must then also scroll by keyboard.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ROOT } from './lib/run.mjs';
import { modelViewDrawn, openPage, showLayerLab, trainTabDrawn, servedBrowser } from './lib/browser.mjs';
import { axeViolations, describeViolations } from './lib/axe.mjs';

let browser, served;
servedBrowser((b, url) => { browser = b; served = url; });

// Every chart of the page exists and the checks table is filled: what axe sees is the page
// a reader sees, not one still loading.
const CHARTS = ['chart-mask', 'chart-rope', 'chart-rope-pair', 'chart-rope-rel', 'chart-attn', 'chart-kv', 'chart-kv-flops',
  'chart-ffn-curves', 'chart-ffn-router', 'chart-ffn-renorm', 'chart-ffn-load', 'chart-block-stream', 'chart-block-labels',
  'chart-gen-greedy', 'chart-gen-temps', 'chart-gen-topk', 'chart-gen-topp', 'chart-gen-penalty', 'chart-gen-draws', 'chart-gen-eos'];
function chartsDrawn(page) {
  return page.waitForFunction((ids) => ids.every((id) => window.Chart.getChart(document.getElementById(id))) &&
    document.querySelectorAll('#verify tbody tr').length > 0, CHARTS);
}

// The violations axe finds now, as one line each under the name of the view ('' if none).
async function audit(page, what) {
  const violations = await axeViolations(page);
  return violations.length ? `${what}:\n${describeViolations(violations)}\n` : '';
}

const PAGES = [
  ['served page', () => `${served}#lang=en`],
  ['dist/attnlab.html from file://', () => `${pathToFileURL(join(ROOT, 'dist', 'attnlab.html'))}#lang=en`],
];
for (const [label, url] of PAGES) {
  test(`${label}: axe finds no violations in every view, in English and in Chinese`, async () => {
    const { page, problems } = await openPage(browser.context, url());
    await modelViewDrawn(page);
    let found = await audit(page, `${label}, model view, English`);
    await showLayerLab(page);
    await chartsDrawn(page);
    found += await audit(page, `${label}, layer lab, English`);

    await page.selectOption('#lang', 'zh');
    await page.dispatchEvent('#lang', 'change');
    await page.waitForFunction(() => document.documentElement.lang === 'zh-CN' && /看见注意力/.test(document.querySelector('h1').textContent));
    await chartsDrawn(page);
    found += await audit(page, `${label}, layer lab, Chinese`);
    await page.click('#tab-model');
    await modelViewDrawn(page);
    found += await audit(page, `${label}, model view, Chinese`);
    await trainTabDrawn(page);
    found += await audit(page, `${label}, Train tab, Chinese`);
    await page.selectOption('#lang', 'en');
    await page.dispatchEvent('#lang', 'change');
    await page.waitForFunction(() => document.documentElement.lang === 'en');
    found += await audit(page, `${label}, Train tab, English`);

    assert.ok(!found, `axe violations:\n${found}`);
    assert.deepEqual(problems, []);
    await page.close();
  });
}

// Tab reaches the walkthrough's code listing and the arrow keys scroll it, without stepping
// the run (elsewhere on the page they step).
test('served page: the walkthrough\'s listings are reached by Tab and scrolled by the arrow keys', async () => {
  const { page, problems } = await openPage(browser.context, `${served}#tab=layer&lang=en`);
  await showLayerLab(page);
  const rows = () => page.evaluate(() => window.Chart.getChart(document.getElementById('chart-mask')).options.plugins.matrixImage.rows);
  const before = await rows();
  await page.focus('#walk-next');
  await page.keyboard.press('Tab');
  assert.equal(await page.evaluate(() => document.activeElement.id), 'walk-code');
  assert.ok(await page.$eval('#walk-code', (p) => p.scrollHeight > p.clientHeight), 'the code listing scrolls');
  for (let i = 0; i < 3; i++) await page.keyboard.press('ArrowDown');
  assert.equal(await rows(), before, 'an arrow key in the listing stepped the run');
  // Scrolling may be smooth: wait for it to move (a hang guard), then read where it is.
  await page.waitForFunction(() => document.getElementById('walk-code').scrollTop > 0, null, { timeout: 30000 }).catch(() => {});
  assert.ok(await page.$eval('#walk-code', (p) => p.scrollTop > 0), 'the arrow keys did not scroll the code listing');
  await page.keyboard.press('Tab');
  assert.equal(await page.evaluate(() => document.activeElement.id), 'walk-text');
  assert.deepEqual(problems, []);
  await page.close();
});
