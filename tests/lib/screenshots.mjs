// screenshots.mjs — remakes the README's pictures of the page: docs/<view>-view.png at a
// desktop's 1440 px and docs/<view>-view-phone.png at a phone's 390 px, for the model view, the
// layer lab and the Train tab (trained until a head's induction score passes 0.5), and
// docs/experiments-view(-phone).png: the model view's Experiments panel with head 2.6 switched
// off, from its grid of heads down to the logit lens; in English.
//   node tests/lib/screenshots.mjs [model|layer|train|experiments …]   (after bash build.sh page;
//   the pictures named, or every one)
// Each view is opened by its tab as tests/page-visual.test.mjs opens it; the top of the page is
// drawn (HEIGHT px of it), as a reader first sees it.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './run.mjs';
import { launch, modelViewDrawn, openPage } from './browser.mjs';
import { SIZES, VIEWS, experimentsDrawn, openView } from './views.mjs';
import { startServer } from '../../web/serve.mjs';

const DOCS = join(ROOT, 'docs');
const HEIGHT = { desktop: 1500, phone: 1700 };
const SHOTS = process.argv.slice(2).length ? process.argv.slice(2) : [...VIEWS, 'experiments'];
const EXPERIMENT = `#lang=en&off=2.6&text=${encodeURIComponent('Once upon a time there was a little girl named Lily')}`;

// The Train tab run on past the jump: a head's induction score above 0.5 (a hang guard of
// ten times the half minute it takes), then paused.
async function trainPastTheJump(page) {
  await page.click('#btn-train-start');
  await page.waitForFunction(() => Number(document.getElementById('induction-max').textContent) > 0.5, null, { timeout: 600000, polling: 1000 });
  await page.click('#btn-train-pause');
  await page.waitForFunction(() => /paused|已暂停/.test(document.getElementById('train-status').textContent));
}

// The Experiments panel at each size, from its top to the logit lens's exports.
async function experiments(base) {
  const { page, problems } = await openPage(browser.context, base + EXPERIMENT, SIZES.desktop);
  await modelViewDrawn(page);
  await experimentsDrawn(page);
  for (const [size, viewport] of Object.entries(SIZES)) {
    await page.setViewportSize(viewport);
    await frames(page);
    const clip = await page.evaluate(() => {
      const top = document.getElementById('exp-panel').getBoundingClientRect().top + scrollY;
      const bottom = document.querySelector('[data-exp-export="lens:png"]').getBoundingClientRect().bottom + scrollY;
      return { x: 0, y: Math.floor(top) - 8, width: innerWidth, height: Math.ceil(bottom - top) + 20 };
    });
    const path = join(DOCS, `experiments-view${size === 'phone' ? '-phone' : ''}.png`);
    await page.screenshot({ path, fullPage: true, clip });
    console.log(path);
  }
  await page.close();
  return problems;
}

// Waits for the charts to take the window's new size (Chart.js resizes on the next frames).
const frames = (page) => page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(() => setTimeout(r, 100)))));

const server = await startServer(0);
const browser = await launch();
try {
  mkdirSync(DOCS, { recursive: true });
  const base = `http://127.0.0.1:${server.address().port}/`;
  const { page, problems } = await openPage(browser.context, `${base}#lang=en`, SIZES.desktop);
  for (const view of VIEWS.filter((v) => SHOTS.includes(v))) {
    await page.setViewportSize(SIZES.desktop);
    await openView(page, view);
    if (view === 'train') await trainPastTheJump(page);
    for (const [size, viewport] of Object.entries(SIZES)) {
      await page.setViewportSize(viewport);
      await frames(page);
      await page.evaluate(() => window.scrollTo(0, 0));
      const path = join(DOCS, `${view}-view${size === 'phone' ? '-phone' : ''}.png`);
      const full = await page.evaluate(() => document.scrollingElement.scrollHeight);
      await page.screenshot({ path, fullPage: true, clip: { x: 0, y: 0, width: viewport.width, height: Math.min(full, HEIGHT[size]) } });
      console.log(path);
    }
  }
  if (SHOTS.includes('experiments')) problems.push(...await experiments(base));
  if (problems.length) throw new Error(`the page reported: ${problems.join('; ')}`);
} finally {
  await browser.close();
  server.close();
}
