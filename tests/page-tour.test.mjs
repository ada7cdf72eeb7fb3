// page-tour.test.mjs — the guided tour and the layer lab's walkthrough as a learner follows them,
// at a desktop's 1440×900 and a phone's 390×844, in English and in Chinese, on the served page
// and on dist/attnlab.html from file://, checked by what is on the screen:
//   the tour: "Start here" opens it; each step shows only its view (computed style and box),
//     outlines its panel and no other, and brings it into view with the thing to look at whole
//     above the tour's card; the card is in the window and says the step's text; nothing
//     scrolls sideways; Back goes back, Enter on Next goes on, Esc closes and gives the focus
//     back to "Start here";
//   the walkthrough: each example of chapters 02 to 05 and 10 is titled by its chapter and number
//     ("02 · 1/3 · …"), names its chapter and script, says what to notice, outlines only the
//     panel it is about (none for the embedding and RMSNorm, which no chart draws) and brings it
//     into view with its note (and the chart that draws the example, where one does, whole in
//     the window beside the note), and its listings wrap (nothing scrolls sideways, on a phone
//     either); the chapters whose code is not shipped show no code listing.
// Screenshots of the window at each step are saved under tests/out/ for people to look at.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ROOT } from './lib/run.mjs';
import { openPage, servedBrowser, showLayerLab } from './lib/browser.mjs';
import { SIZES, VIEWS } from './lib/views.mjs';
import { axeViolations, describeViolations } from './lib/axe.mjs';

const { STRINGS } = await import('../web/ui/i18n.js');

let browser, served;
servedBrowser((b, url) => { browser = b; served = url; });

const OUT = join(ROOT, 'tests', 'out');
// The tour's steps: the view each opens and the panel it points at, in order (the page's
// page/tour.js says the same; this is what a learner is promised).
const TOUR = [
  ['tokens', 'model', 'prompt-panel'], ['sampler', 'model', 'gen-panel'], ['previous', 'model', 'roles-panel'],
  ['induction', 'model', 'roles-panel'], ['train', 'train', 'train-panel'], ['jump', 'train', 'train-roles-panel'],
  ['open', 'train', 'train-out-panel'], ['diagonal', 'model', 'head-panel'], ['mask', 'layer', 'mask-panel'],
  ['rope', 'layer', 'rope-panel'], ['gqa', 'layer', 'attn-panel'], ['kv', 'layer', 'kv-panel'],
];
// The walkthrough's examples: the chapter and number each is titled by, the panel it is about
// (null: none outlined, the walkthrough's own listing is the example) and the chart in it that
// draws the example (null: none of its own).
const WALK = [
  ['02 · 1/3', null], ['02 · 2/3', null], ['02 · 3/3', 'rope-panel'],
  ['03 · 1/7', 'attn-panel'], ['03 · 2/7', 'attn-panel'], ['03 · 3/7', 'rope-panel'], ['03 · 4/7', 'mask-panel'],
  ['03 · 5/7', 'attn-panel'], ['03 · 6/7', 'kv-panel'], ['03 · 7/7', 'verify-panel'],
  ['04 · 1/7', 'ffn-panel'], ['04 · 2/7', 'ffn-panel', 'chart-ffn-curves'], ['04 · 3/7', 'ffn-panel', 'chart-ffn-router'],
  ['04 · 4/7', 'ffn-panel'], ['04 · 5/7', 'ffn-panel'], ['04 · 6/7', 'ffn-panel', 'chart-ffn-renorm'],
  ['04 · 7/7', 'ffn-panel', 'chart-ffn-load'],
  ['05 · 1/7', 'block-panel'], ['05 · 2/7', 'block-panel', 'chart-block-stream'], ['05 · 3/7', 'block-panel'],
  ['05 · 4/7', 'block-panel'], ['05 · 5/7', 'block-panel'], ['05 · 6/7', 'block-panel', 'chart-block-labels'],
  ['05 · 7/7', 'block-panel'],
  ['10 · 1/7', 'sampler-panel', 'chart-gen-greedy'], ['10 · 2/7', 'sampler-panel', 'chart-gen-temps'],
  ['10 · 3/7', 'sampler-panel', 'chart-gen-topk'], ['10 · 4/7', 'sampler-panel', 'chart-gen-topp'],
  ['10 · 5/7', 'sampler-panel', 'chart-gen-penalty'], ['10 · 6/7', 'sampler-panel', 'chart-gen-draws'],
  ['10 · 7/7', 'sampler-panel', 'chart-gen-eos'],
];
// Each chapter's demo (the ABI's name) and script.
const CHAPTERS = {
  '02': ['basic', '02-basic-components-demo.py'], '03': ['attention', '03-attention-demo.py'],
  '04': ['mlp_moe', '04-mlp-moe-demo.py'], '05': ['block', '05-transformer-block-demo.py'],
  '10': ['generation', '10-generation-demo.py'],
};

// What the window shows now: each view's computed display and box, the outlined panels, the
// boxes of the named elements, the tour's card, and the document's width against the window's.
function screenState(page, ids) {
  return page.evaluate((ids) => {
    const box = (e) => {
      if (!e || e.getClientRects().length === 0) return null;
      const r = e.getBoundingClientRect();
      return { top: r.top, bottom: r.bottom, left: r.left, right: r.right };
    };
    const views = {};
    for (const v of ['model', 'layer', 'train']) {
      const e = document.getElementById(`view-${v}`);
      const s = getComputedStyle(e), r = e.getBoundingClientRect();
      views[v] = s.display !== 'none' && s.visibility !== 'hidden' && r.width > 0 && r.height > 0;
    }
    const boxes = {};
    for (const [name, sel] of Object.entries(ids)) boxes[name] = box(document.querySelector(sel));
    return {
      views, boxes, innerWidth, innerHeight, scrollWidth: document.scrollingElement.scrollWidth,
      tourTargets: [...document.querySelectorAll('.tour-target')].map((e) => e.id),
      highlighted: [...document.querySelectorAll('.panel.highlight')].map((e) => e.id),
      cardText: [document.getElementById('tour-title').textContent, document.getElementById('tour-text').textContent],
    };
  }, ids);
}

// A screenshot of the window once the outlines' transitions have ended (what a person then sees).
async function shot(page, path) {
  await page.evaluate(() => Promise.all(document.getAnimations().map((a) => a.finished)));
  await page.screenshot({ path });
}

// axe's violations on the page as it is now, one line each.
async function audit(page) {
  const violations = await axeViolations(page);
  return violations.length ? [`axe: ${describeViolations(violations)}`] : [];
}

const px = (b) => (b ? `[${Math.round(b.top)}, ${Math.round(b.bottom)}]` : 'not shown');

// What is wrong with the window showing only view, one line each.
function viewWrongs(s, view) {
  const bad = [];
  for (const v of VIEWS) {
    if (v === view && !s.views[v]) bad.push(`#view-${v} is not shown`);
    if (v !== view && s.views[v]) bad.push(`#view-${v} is shown too`);
  }
  if (s.scrollWidth > s.innerWidth) bad.push(`the page scrolls sideways: scrollWidth ${s.scrollWidth} > innerWidth ${s.innerWidth}`);
  return bad;
}

// The tour's current step settled (its panel has kept its place; a hang guard, not a time limit).
async function settled(page, i) {
  await page.waitForFunction((i) => {
    const c = document.getElementById('tour');
    return c.dataset.step === String(i) && c.dataset.settled === 'true';
  }, i, { timeout: 30000 });
}

// The tour followed from "Start here" to its end in lang; what is wrong at each step.
async function followTour(page, lang, shots) {
  const t = STRINGS[lang];
  const bad = [];
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.click('#tour-start');
  assert.equal(await page.evaluate(() => document.activeElement.id), 'tour-next', 'the focus is on Next once the tour opens');
  for (const [i, [key, view, panel]] of TOUR.entries()) {
    if (i > 0) {
      // Enter on the focused Next: the keyboard goes on
      await page.focus('#tour-next');
      await page.keyboard.press('Enter');
    }
    await settled(page, i);
    const s = await screenState(page, { panel: `#${panel}`, spot: '.tour-spot', card: '#tour' });
    const at = (w) => `step ${i + 1} (${key}): ${w}`;
    bad.push(...viewWrongs(s, view).map(at));
    if (s.tourTargets.join() !== panel) bad.push(at(`outlined: [${s.tourTargets}], not #${panel}`));
    const { panel: p, spot, card } = s.boxes;
    if (!card || card.top < 0 || card.bottom > s.innerHeight || card.left < 0 || card.right > s.innerWidth) bad.push(at(`the card is out of the window: ${px(card)}, left ${card && Math.round(card.left)}, right ${card && Math.round(card.right)} of ${s.innerWidth}`));
    if (!p || p.bottom <= 0 || p.top >= (card ? card.top : s.innerHeight)) bad.push(at(`#${panel} is out of view: ${px(p)} (card from ${card && Math.round(card.top)})`));
    if (!spot) bad.push(at('nothing in the panel is marked to look at'));
    else if (spot.top < 0 || spot.bottom > card.top || spot.left < 0 || spot.right > s.innerWidth) {
      bad.push(at(`what to look at is not all in view above the card: ${px(spot)}, card from ${Math.round(card.top)}, window ${s.innerHeight}`));
    }
    if (s.cardText.join('\n') !== t.tourSteps[key].join('\n')) bad.push(at(`the card says "${s.cardText.join(' / ')}"`));
    if (shots) await shot(page, join(OUT, `${shots}-${lang}-${String(i + 1).padStart(2, '0')}-${key}.png`));
    // axe, with the card open, on the first step of each view
    if (i === 0 || TOUR[i - 1][1] !== view) bad.push(...(await audit(page)).map(at));
  }
  // Back, from the last step: the one before it, its view shown
  await page.click('#tour-back');
  await settled(page, TOUR.length - 2);
  const back = await screenState(page, { panel: `#${TOUR.at(-2)[2]}` });
  if (back.tourTargets.join() !== TOUR.at(-2)[2]) bad.push(`Back: outlined [${back.tourTargets}]`);
  // Esc closes it: no card, nothing outlined, the focus back on "Start here"
  await page.keyboard.press('Escape');
  const closed = await page.evaluate(() => ({
    card: document.getElementById('tour').getClientRects().length, marked: document.querySelectorAll('.tour-target, .tour-spot').length,
    focus: document.activeElement.id,
  }));
  if (closed.card || closed.marked || closed.focus !== 'tour-start') bad.push(`Esc left ${JSON.stringify(closed)}`);
  return bad;
}

// The walkthrough followed from its first example to its last in lang, by the Next of the note
// in the panel where there is one (where the eye is), else by the walkthrough's own.
async function followWalkthrough(page, lang, shots) {
  const t = STRINGS[lang];
  const bad = [];
  await showLayerLab(page);
  // back to the first example by moving (the page opens at the top, not at the walkthrough)
  if (await page.$eval('#walk-prev', (b) => b.disabled)) await page.click('#walk-next');
  while (!(await page.$eval('#walk-prev', (b) => b.disabled))) await page.click('#walk-prev');
  for (const [i, [label, panel, figure]] of WALK.entries()) {
    if (i > 0) await page.click((await page.isVisible('#walk-callout-next')) ? '#walk-callout-next' : '#walk-next');
    const s = await screenState(page, { panel: `#${panel || 'walk-panel'}`, callout: '#walk-callout', title: '#walk-title', figure: `#${figure || 'none'}` });
    const at = (w) => `example ${label}: ${w}`;
    bad.push(...viewWrongs(s, 'layer').map(at));
    const info = await page.evaluate(() => ({
      title: document.getElementById('walk-title').textContent, note: document.getElementById('walk-note').textContent,
      chapter: document.getElementById('walk-chapter').textContent,
      callout: document.getElementById('walk-callout-note').textContent,
      codeShown: document.getElementById('walk-code').getClientRects().length > 0,
      sideways: ['walk-code', 'walk-text'].filter((id) => { const e = document.getElementById(id); return e.scrollWidth > e.clientWidth; }),
    }));
    if (!info.title.startsWith(`${label} · `)) bad.push(at(`titled "${info.title}"`));
    const [chapter, count] = label.split(' · ');
    const [demo, script] = CHAPTERS[chapter], n = Number(count.split('/')[0]);
    if (info.chapter !== t.chapter(chapter, script)) bad.push(at(`the chapter is named "${info.chapter}"`));
    if (info.codeShown !== ['02', '03'].includes(chapter)) bad.push(at(`the code listing is ${info.codeShown ? 'shown' : 'not shown'}`));
    if (info.note !== t.walkNotes[demo][n - 1]) bad.push(at(`the note says "${info.note}"`));
    if (s.highlighted.join() !== (panel || '')) bad.push(at(`outlined: [${s.highlighted}], not ${panel ? '#' + panel : 'none'}`));
    const { panel: p, callout, title, figure: f } = s.boxes;
    if (figure) {
      // the example's chart whole in the window, under its note
      if (!f || f.top < 0 || f.bottom > s.innerHeight) bad.push(at(`#${figure} is not all in view: ${px(f)} of ${s.innerHeight}`));
      else if (callout && callout.bottom > f.top + 1) bad.push(at(`the note ${px(callout)} is not above #${figure} ${px(f)}`));
    } else if (!p || p.top < 0 || p.top >= s.innerHeight) bad.push(at(`#${panel || 'walk-panel'} starts out of view: ${px(p)}`));
    if (panel) {
      if (!callout || callout.top < 0 || callout.bottom > s.innerHeight) bad.push(at(`the note in #${panel} is not in view: ${px(callout)}`));
      else if (info.callout !== info.note) bad.push(at(`the note in the panel says "${info.callout}"`));
    } else if (callout) {
      bad.push(at('a note stands in a panel, though no panel is outlined'));
    } else if (!title || title.top < 0 || title.bottom > s.innerHeight) {
      bad.push(at(`the walkthrough's title is not in view: ${px(title)}`));
    }
    if (info.sideways.length) bad.push(at(`listings that scroll sideways: ${info.sideways.join(', ')}`));
    if (shots) await shot(page, join(OUT, `${shots}-${lang}-${String(i + 1).padStart(2, '0')}.png`));
    // axe, with the note in a panel
    if (['03 · 4/7', '04 · 3/7', '05 · 6/7', '10 · 6/7'].includes(label)) bad.push(...(await audit(page)).map(at));
  }
  return bad;
}

async function switchLanguage(page, lang) {
  await page.selectOption('#lang', lang);
  await page.dispatchEvent('#lang', 'change');
  await page.waitForFunction((l) => document.documentElement.lang === (l === 'zh' ? 'zh-CN' : 'en'), lang);
}

const PAGES = [
  ['served', 'served page', () => served],
  ['dist', 'dist/attnlab.html from file://', () => pathToFileURL(join(ROOT, 'dist', 'attnlab.html')).href],
];
for (const [label, name, base] of PAGES) {
  for (const [size, viewport] of Object.entries(SIZES)) {
    test(`${name}, ${viewport.width}×${viewport.height}: the tour reaches each of its panels in view, its view alone shown, in English and in Chinese`, async () => {
      mkdirSync(OUT, { recursive: true });
      const { page, problems } = await openPage(browser.context, `${base()}#lang=en`, viewport);
      const found = [];
      for (const lang of ['en', 'zh']) {
        if (lang === 'zh') await switchLanguage(page, 'zh');
        found.push(...(await followTour(page, lang, `tour-${label}-${size}`)).map((w) => `${lang}, ${w}`));
      }
      assert.deepEqual(found, [], `what is wrong on the screen:\n${found.join('\n')}`);
      assert.deepEqual(problems, []);
      await page.close();
    });

    test(`${name}, ${viewport.width}×${viewport.height}: the walkthrough's examples (chapters 02 to 05 and 10) are titled by chapter and number, each brings its panel (and its chart) into view, outlined alone, and its listings wrap`, async () => {
      mkdirSync(OUT, { recursive: true });
      const { page, problems } = await openPage(browser.context, `${base()}#tab=layer&lang=en`, viewport);
      const found = [];
      for (const lang of ['en', 'zh']) {
        if (lang === 'zh') await switchLanguage(page, 'zh');
        found.push(...(await followWalkthrough(page, lang, `walk-${label}-${size}`)).map((w) => `${lang}, ${w}`));
      }
      assert.deepEqual(found, [], `what is wrong on the screen:\n${found.join('\n')}`);
      assert.deepEqual(problems, []);
      await page.close();
    });
  }
}

// While the tour is open its card's text follows the language switched on the page.
test('served page: the tour\'s card changes language with the page', async () => {
  const { page, problems } = await openPage(browser.context, `${served}#lang=en`, SIZES.desktop);
  await page.click('#tour-start');
  await settled(page, 0);
  await switchLanguage(page, 'zh');
  await page.waitForFunction((want) => document.getElementById('tour-title').textContent === want, STRINGS.zh.tourSteps.tokens[0], { timeout: 30000 });
  assert.equal(await page.textContent('#tour-next'), STRINGS.zh.tourNext);
  assert.equal(await page.textContent('#tour-count'), STRINGS.zh.tourCount(1, TOUR.length));
  assert.deepEqual(problems, []);
  await page.close();
});
