// page-visual.test.mjs — what a learner sees after each tab click, at a desktop's 1440×900 and
// a phone's 390×844, in English and in Chinese, on the served page and on dist/attnlab.html
// from file://: only that tab's view takes room on the screen (computed display and visibility,
// and its box), it starts right under the tab bar, nothing scrolls sideways (the document no
// wider than the window, no element of the view past its right edge), nothing sticks out of
// its panel and nothing marked hidden takes room; at the desktop's width no panel leaves more
// than 150 px of blank page beside it, and the Experiments' head switches stand beside the
// next-token comparison; every heatmap's labels lie inside its canvas, with no blank band under
// the x labels. Every view is saved as a full-page screenshot under tests/out/ for people to look at.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ROOT } from './lib/run.mjs';
import { modelViewDrawn, openPage, servedBrowser } from './lib/browser.mjs';
import { SIZES, VIEWS, blankBesidePanels, experimentsDrawn, heatmapLabelWrongs, onScreen, openView } from './lib/views.mjs';

let browser, served;
servedBrowser((b, url) => { browser = b; served = url; });

const OUT = join(ROOT, 'tests', 'out');
// How far below the tab bar the shown view may start (its own top padding).
const GAP = 16;
// The most blank page, in px, a panel may leave beside it at a desktop's width (a short panel
// beside a tall one, a column ending early).
const BLANK = 150;

// What is wrong on the screen with view shown, one line each ([] if nothing).
function wrongs(s, view) {
  const bad = [];
  for (const v of VIEWS) {
    const b = s.views[v];
    const takesRoom = b.display !== 'none' && b.visibility !== 'hidden' && b.width > 0 && b.height > 0;
    if (v === view) {
      if (!takesRoom) bad.push(`#view-${v} is not shown (display ${b.display}, visibility ${b.visibility}, ${b.width}×${b.height})`);
      else if (b.top >= s.innerHeight || b.top + b.height <= 0) bad.push(`#view-${v} is off the screen (top ${Math.round(b.top)})`);
    } else if (takesRoom) {
      bad.push(`#view-${v} is shown too (display ${b.display}, ${Math.round(b.width)}×${Math.round(b.height)} at top ${Math.round(b.top)})`);
    }
  }
  if (s.scrollY !== 0) bad.push(`the page is scrolled to ${s.scrollY}`);
  if (Math.abs(s.gap) > GAP) bad.push(`#view-${view} starts ${Math.round(s.gap)} px from the tab bar's bottom`);
  if (s.scrollWidth > s.innerWidth) bad.push(`the page scrolls sideways: scrollWidth ${s.scrollWidth} > innerWidth ${s.innerWidth}`);
  const few = (list) => list.slice(0, 6).join('; ') + (list.length > 6 ? `; and ${list.length - 6} more` : '');
  if (s.beyond.length) bad.push(`past the window's right edge (${s.innerWidth}): ${few(s.beyond)}`);
  if (s.unhidden.length) bad.push(`marked hidden but shown: ${few(s.unhidden)}`);
  if (s.outside.length) bad.push(`out of their panel: ${few(s.outside)}`);
  return bad;
}

// The big head's tooltip, the pointer on its bottom-right cell: the tip stays inside the chart
// (and so inside its panel and the window), and goes when the pointer leaves the chart.
async function tipAtRightEdge(page) {
  const area = await page.evaluate(() => {
    const c = document.getElementById('chart-head');
    c.scrollIntoView({ block: 'center' });
    const a = window.Chart.getChart(c).chartArea;
    return { x: a.right - 3, y: a.bottom - 3 };
  });
  await page.hover('#chart-head', { position: area });
  await page.waitForFunction(() => !document.getElementById('tip-head').hidden);
  const s = await page.evaluate(() => {
    const tip = document.getElementById('tip-head').getBoundingClientRect();
    const chart = document.getElementById('tip-head').parentElement.getBoundingClientRect();
    return { tip: [tip.left, tip.right], chart: [chart.left, chart.right], text: document.getElementById('tip-head').textContent };
  });
  const bad = [];
  if (s.tip[0] < s.chart[0] - 1 || s.tip[1] > s.chart[1] + 1) {
    bad.push(`the head's tooltip "${s.text}" [${Math.round(s.tip[0])}, ${Math.round(s.tip[1])}] leaves its chart [${Math.round(s.chart[0])}, ${Math.round(s.chart[1])}]`);
  }
  // the pointer off the chart: the tooltip goes (a hang guard, not a time limit)
  await page.mouse.move(0, 0);
  const gone = await page.waitForFunction(() => document.getElementById('tip-head').getClientRects().length === 0, null, { timeout: 5000 }).then(() => true, () => false);
  if (!gone) bad.push(`the head's tooltip "${s.text}" stays after the pointer left the chart`);
  await page.evaluate(() => window.scrollTo(0, 0));
  return bad;
}

// At a desktop's width the Experiments' head switches and the next-token comparison they change
// share the panel's width: the chart to the right of the switches, level with them, and the
// switches at least 40% of the panel wide.
async function switchesBesideChart(page) {
  const s = await page.evaluate(() => {
    const box = (id) => { const r = document.getElementById(id).getBoundingClientRect(); return { left: r.left, right: r.right, top: r.top, bottom: r.bottom, width: r.width }; };
    return { panel: box('exp-panel'), heads: box('exp-heads'), chart: box('chart-exp-next') };
  });
  const bad = [];
  if (s.heads.width < 0.4 * s.panel.width) bad.push(`the head switches take ${Math.round(s.heads.width)} px of the Experiments panel's ${Math.round(s.panel.width)}`);
  if (s.chart.left < s.heads.right || s.chart.top > s.heads.bottom || s.chart.bottom < s.heads.top) {
    bad.push(`the next-token comparison [${Math.round(s.chart.left)}, ${Math.round(s.chart.top)}] is not beside the head switches [${Math.round(s.heads.right)}, ${Math.round(s.heads.top)}–${Math.round(s.heads.bottom)}]`);
  }
  return bad;
}

const PAGES = [
  ['served', () => `${served}#lang=en`],
  ['dist', () => `${pathToFileURL(join(ROOT, 'dist', 'attnlab.html'))}#lang=en`],
];
for (const [label, url] of PAGES) {
  for (const [size, viewport] of Object.entries(SIZES)) {
    test(`${label === 'dist' ? 'dist/attnlab.html from file://' : 'served page'}, ${viewport.width}×${viewport.height}: each tab shows only its view, under the tabs, with nothing past the window's edge`, async () => {
      mkdirSync(OUT, { recursive: true });
      const { page, problems } = await openPage(browser.context, url(), viewport);
      const found = [];
      let trained = false;
      for (const lang of ['en', 'zh']) {
        if (lang === 'zh') {
          // the language switched as a learner switches it
          await page.selectOption('#lang', 'zh');
          await page.dispatchEvent('#lang', 'change');
          await page.waitForFunction(() => document.documentElement.lang === 'zh-CN');
        }
        // the layer view first: a click away from the view the page opens on
        for (const view of ['layer', 'train', 'model']) {
          await openView(page, view, trained);
          if (view === 'train') trained = true;
          const s = await onScreen(page, view);
          found.push(...wrongs(s, view).map((w) => `${lang}, ${view}: ${w}`));
          if (size === 'desktop') {
            for (const b of await blankBesidePanels(page, view)) {
              if (b.height > BLANK) {
                found.push(`${lang}, ${view}: ${b.height} px blank at x ${b.column}, y ${b.top}, beside ${b.beside.join(', ') || 'no panel'}`);
              }
            }
          }
          found.push(...(await heatmapLabelWrongs(page, view)).map((w) => `${lang}, ${view}: ${w}`));
          if (view === 'model' && size === 'desktop') found.push(...(await switchesBesideChart(page)).map((w) => `${lang}, ${view}: ${w}`));
          await page.screenshot({ path: join(OUT, `visual-${label}-${size}-${lang}-${view}.png`), fullPage: true });
          if (view === 'model') found.push(...(await tipAtRightEdge(page)).map((w) => `${lang}, ${view}: ${w}`));
        }
      }
      assert.deepEqual(found, [], `what is wrong on the screen:\n${found.join('\n')}`);
      assert.deepEqual(problems, []);
      await page.close();
    });
  }
}

// A prompt long enough that a phone's heatmaps thin their x labels and turn them: each label
// inside its canvas, no blank band under them (the room of the labels drawn, not of the longest
// token), nothing scrolling sideways.
const LONG = `#lang=en&off=2.6&text=${encodeURIComponent('Once upon a time there was a little girl named Lily')}`;
for (const [size, viewport] of Object.entries(SIZES)) {
  test(`served page, ${viewport.width}×${viewport.height}, a longer prompt: the model view's heatmaps take under their x labels only the room the labels drawn need`, async () => {
    const { page, problems } = await openPage(browser.context, served + LONG, viewport);
    await modelViewDrawn(page);
    await experimentsDrawn(page);
    const found = await heatmapLabelWrongs(page, 'model');
    const s = await onScreen(page, 'model');
    if (s.scrollWidth > s.innerWidth) found.push(`the page scrolls sideways: scrollWidth ${s.scrollWidth} > innerWidth ${s.innerWidth}`);
    await page.screenshot({ path: join(OUT, `visual-long-${size}-model.png`), fullPage: true });
    assert.deepEqual(found, [], `what is wrong on the screen:\n${found.join('\n')}`);
    assert.deepEqual(problems, []);
    await page.close();
  });
}
