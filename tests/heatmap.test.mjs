// heatmap.test.mjs — every heatmap of the three views read back from the screen in headless
// Chromium: the tokens (or indices, from 0) on both axes, the pixels under each label inked, a
// long prompt's labels thinned without two touching, a colour bar with the range and the scale
// the view's control says, the values written in small grids, the key of the outlined row, byte
// tokens shown as the character they complete, and PNG exports that are the chart and more:
// a title strip that is not blank. Screenshots of the panels go to tests/out/ at 1440×900 and
// 390×844.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './lib/run.mjs';
import { modelViewDrawn, openPage, servedBrowser, showLayerLab, trainTabDrawn } from './lib/browser.mjs';

const OUT = join(ROOT, 'tests', 'out');
mkdirSync(OUT, { recursive: true });

let browser, served;
servedBrowser((b, url) => { browser = b; served = url; });

// What a heatmap canvas shows: the labels heatmap.js drew (kept on the canvas) with the ink
// found under each one's box, or, on a chart without them, Chart.js's own tick labels that are
// not blank (no boxes).
const shown = (page, id) => page.evaluate((canvasId) => {
  const canvas = document.getElementById(canvasId);
  const d = canvas.heatmapDrawn;
  if (!d) {
    const chart = window.Chart.getChart(canvas);
    const ticks = (s) => s.ticks.map((t) => ({ text: String(t.label ?? '') })).filter((t) => t.text !== '');
    return { x: ticks(chart.scales.x), y: ticks(chart.scales.y), bar: null, values: 0, key: null, inked: [] };
  }
  // read from a copy made for reading (reading the chart's own canvas again and again warns)
  const copy = document.createElement('canvas');
  copy.width = canvas.width;
  copy.height = canvas.height;
  const ctx = copy.getContext('2d', { willReadFrequently: true });
  ctx.drawImage(canvas, 0, 0);
  const ratio = canvas.width / canvas.clientWidth;
  // pixels drawn (not transparent) inside a label's box
  const ink = ([x, y, w, h]) => {
    const px = ctx.getImageData(Math.floor(x * ratio), Math.floor(y * ratio), Math.max(1, Math.ceil(w * ratio)), Math.max(1, Math.ceil(h * ratio))).data;
    let n = 0;
    for (let i = 3; i < px.length; i += 4) if (px[i] > 128) n++;
    return n;
  };
  return { ...d, inked: [...d.x, ...d.y].map((l) => ink(l.box)) };
}, id);

const texts = (labels) => labels.map((l) => l.text);
const chips = (page) => page.$$eval('#tokens .chip', (cs) => cs.map((c) => c.textContent));
const clip = (s) => ([...s].length > 10 ? [...s].slice(0, 9).join('') + '…' : s);

// No two labels' boxes share a pixel.
function disjoint(labels) {
  for (let i = 0; i < labels.length; i++) {
    for (let j = i + 1; j < labels.length; j++) {
      const [ax, ay, aw, ah] = labels[i].box, [bx, by, bw, bh] = labels[j].box;
      const apart = ax + aw <= bx || bx + bw <= ax || ay + ah <= by || by + bh <= ay;
      assert.ok(apart, `labels ${labels[i].index} ${JSON.stringify(labels[i].text)} and ${labels[j].index} ${JSON.stringify(labels[j].text)} overlap`);
    }
  }
}

// A PNG's width and height (its IHDR chunk).
const pngSize = (bytes) => ({ width: bytes.readUInt32BE(16), height: bytes.readUInt32BE(20) });

// Saves a download started by clicking selector; returns its bytes.
async function download(page, selector) {
  const [d] = await Promise.all([page.waitForEvent('download', { timeout: 60000 }), page.click(selector)]);
  return readFileSync(await d.path());
}

// Whether a PNG (bytes) starts with a title strip: its top `strip` CSS pixels, decoded by the
// page, hold text (over 200 dark pixels) on white and nothing in colour (no heatmap cells).
const titleStrip = (page, bytes, strip) => page.evaluate(async ([b64, stripPx]) => {
  const img = new Image();
  img.src = `data:image/png;base64,${b64}`;
  await img.decode();
  const c = document.createElement('canvas');
  c.width = img.width;
  c.height = img.height;
  const ctx = c.getContext('2d', { willReadFrequently: true });
  ctx.drawImage(img, 0, 0);
  const px = ctx.getImageData(0, 0, c.width, Math.min(c.height, Math.round(stripPx * devicePixelRatio))).data;
  let dark = 0, coloured = 0;
  for (let i = 0; i < px.length; i += 4) {
    if (px[i + 3] > 128 && px[i] + px[i + 1] + px[i + 2] < 300) dark++;
    if (Math.max(px[i], px[i + 1], px[i + 2]) - Math.min(px[i], px[i + 1], px[i + 2]) > 40) coloured++;
  }
  return { dark, coloured, titled: dark > 200 && coloured === 0 };
}, [bytes.toString('base64'), strip]);

// Every panel holding a heatmap, screenshot at a phone's width and a desktop's.
async function screenshots(page, name, ids) {
  for (const [w, h] of [[1440, 900], [390, 844]]) {
    await page.setViewportSize({ width: w, height: h });
    await page.waitForTimeout(300); // Chart.js redraws on resize
    for (const id of ids) {
      const el = await page.$(`#${id}`);
      if (el && await el.isVisible()) await el.screenshot({ path: join(OUT, `heatmap-${name}-${id}-${w}.png`) });
    }
  }
  await page.setViewportSize({ width: 1440, height: 900 });
  await page.waitForTimeout(300);
}

const modelPage = async (hash) => {
  const { page, problems } = await openPage(browser.context, `${served}#lang=en${hash}`);
  await page.setViewportSize({ width: 1440, height: 900 });
  await modelViewDrawn(page);
  await page.waitForFunction(() => window.Chart.getChart(document.getElementById('chart-head')) && window.Chart.getChart(document.getElementById('chart-mask-model')));
  return { page, problems };
};

test('model view: the head, the mask and the roles carry their tokens or indices (from 0), a colour bar, values in small grids, the outline\'s key', async () => {
  const { page, problems } = await modelPage('');
  const tokens = await chips(page);
  const head = await shown(page, 'chart-head');
  assert.deepEqual(texts(head.x), tokens.map(clip), 'the key axis names every token, as the chips do');
  assert.deepEqual(texts(head.y), tokens.map(clip), 'the query axis too');
  head.inked.forEach((n, i) => assert.ok(n > 0, `label ${i}'s box holds ink`));
  assert.deepEqual(head.bar, { top: '1', bottom: '0', caption: 'linear' });
  assert.equal(head.values, tokens.length ** 2, 'a small grid has its values written in');
  assert.match(head.key, /outlined row/);
  const mask = await shown(page, 'chart-mask-model');
  assert.deepEqual(texts(mask.x), tokens.map(clip));
  assert.deepEqual(mask.bar.legend, ['visible (0)', 'masked (-inf)']);

  const roles = await shown(page, 'chart-roles');
  const { L, H } = await page.evaluate(() => ({ L: window.attnlab.modelView.view.info.hparams.n_layers, H: window.attnlab.modelView.view.info.hparams.n_heads }));
  assert.deepEqual(texts(roles.x), Array.from({ length: H }, (_, h) => String(h)), 'the head axis starts at 0');
  assert.deepEqual(texts(roles.y), Array.from({ length: L }, (_, l) => String(l)), 'the layer axis starts at 0');
  assert.equal(roles.values, L * H);

  // the log control: the bars of the head and of the heads grid say so
  await page.click('#attn-log');
  await page.waitForFunction(() => document.getElementById('chart-head').heatmapDrawn?.bar?.caption === 'log');
  assert.deepEqual((await shown(page, 'chart-head')).bar, { top: '1', bottom: '≤ 0.0001', caption: 'log' });
  assert.deepEqual(await page.evaluate(() => document.getElementById('heads-bar')?.heatmapDrawn?.bar),
    { top: '1', bottom: '≤ 0.0001', caption: 'log' });
  await page.click('#attn-log');
  await screenshots(page, 'model', ['heads-panel', 'head-panel', 'roles-panel', 'kv-model-panel']);
  assert.deepEqual(problems, []);
  await page.close();
});

test('model view: a long prompt\'s labels are thinned: at most 24, the first and the last, none overlapping', async () => {
  const text = 'Once upon a time there was a little girl named Lily. She loved to play outside in the park with her friends. '.repeat(2);
  const { page, problems } = await modelPage(`&text=${encodeURIComponent(text)}`);
  const n = (await chips(page)).length;
  assert.ok(n > 48, `${n} tokens`);
  for (const id of ['chart-head', 'chart-mask-model']) {
    const d = await shown(page, id);
    for (const axis of ['x', 'y']) {
      const labels = d[axis];
      assert.ok(labels.length >= 8 && labels.length <= 24, `${id} ${axis}: ${labels.length} labels for ${n} tokens`);
      assert.equal(labels[0].index, 0, `${id} ${axis}: the first token labelled`);
      assert.equal(labels[labels.length - 1].index, n - 1, `${id} ${axis}: the last token labelled`);
      disjoint(labels);
    }
    d.inked.forEach((ink, i) => assert.ok(ink > 0, `${id}: label ${i}'s box holds ink`));
  }
  await screenshots(page, 'long', ['head-panel', 'kv-model-panel']);
  assert.deepEqual(problems, []);
  await page.close();
});

test('model view: byte tokens of a Chinese character show it on the token that completes it, as the chips do', async () => {
  const { page, problems } = await modelPage(`&text=${encodeURIComponent('床前明月光')}`);
  const tokens = await chips(page);
  const head = await shown(page, 'chart-head');
  assert.deepEqual(texts(head.x), tokens.map(clip));
  const all = texts(head.x).join(' ');
  for (const ch of '床前明月光') assert.ok(all.includes(ch), `${ch} on the axis: ${all}`);
  assert.doesNotMatch(all, /\uFFFD|<[0-9a-f]{2}>/);
  assert.deepEqual(problems, []);
  await page.close();
});

test('model view: the head\'s and the heads grid\'s PNGs are the chart and a title strip (layer, head, tokens, scale)', async () => {
  const { page, problems } = await modelPage('');
  const canvas = await page.$eval('#chart-head', (c) => ({ width: c.width, height: c.height }));
  const head = await download(page, '[data-model-export="head:png"]');
  writeFileSync(join(OUT, 'heatmap-export-head.png'), head);
  const size = pngSize(head);
  assert.ok(size.width >= canvas.width && size.height > canvas.height, `head PNG ${size.width}×${size.height}, chart ${canvas.width}×${canvas.height}`);
  assert.deepEqual((await titleStrip(page, head, 40)).titled, true, 'the head PNG starts with a title strip');

  const { L, H } = await page.evaluate(() => ({ L: window.attnlab.modelView.view.info.hparams.n_layers, H: window.attnlab.modelView.view.info.hparams.n_heads }));
  const grid = await download(page, '[data-model-export="heads:png"]');
  writeFileSync(join(OUT, 'heatmap-export-heads.png'), grid);
  const g = pngSize(grid);
  // the thumbnails alone: 64 px and a 4 px gap each
  assert.ok(g.width > H * 68 && g.height > L * 68, `heads PNG ${g.width}×${g.height} for ${L} × ${H} thumbnails`);
  assert.deepEqual((await titleStrip(page, grid, 40)).titled, true, 'the heads PNG starts with a title strip');
  assert.deepEqual(problems, []);
  await page.close();
});

test('layer view: the mask, the RoPE angles and the attention label their axes from 0, with a bar or swatches and the outline\'s key', async () => {
  const { page, problems } = await openPage(browser.context, `${served}#lang=en`);
  await page.setViewportSize({ width: 1440, height: 900 });
  await showLayerLab(page);
  const len = await page.evaluate(() => window.attnlab.page.session.length);
  const attn = await shown(page, 'chart-attn');
  assert.deepEqual(texts(attn.x), Array.from({ length: len }, (_, i) => String(i)), 'the key axis starts at 0');
  assert.deepEqual(texts(attn.y), Array.from({ length: len }, (_, i) => String(i)));
  assert.deepEqual(attn.bar, { top: '1', bottom: '0', caption: 'linear' });
  assert.equal(attn.values, len * len);
  const mask = await shown(page, 'chart-mask');
  assert.equal(mask.x[0].text, '0');
  assert.ok(mask.bar.legend.length === 2);
  const rope = await shown(page, 'chart-rope');
  assert.equal(rope.x[0].text, '0');
  assert.equal(rope.y[0].text, '0');
  assert.match(rope.bar.caption, /linear \(rad\)/);
  assert.deepEqual(await page.evaluate(() => document.getElementById('attn-grid-bar')?.heatmapDrawn?.bar), { top: '1', bottom: '0', caption: 'linear' });
  // a decode step outlines the newest query, and the key says what the outline is
  await page.click('#btn-step');
  await page.waitForFunction((n) => window.attnlab.page.session.length === n + 1, len);
  await page.waitForFunction(() => document.getElementById('chart-attn').heatmapDrawn?.key);
  assert.match((await shown(page, 'chart-attn')).key, /outlined row/);
  assert.equal(await page.evaluate(() => window.Chart.getChart(document.getElementById('chart-attn')).options.plugins.subtitle.display), true);
  const png = await download(page, '[data-export="attn:png"]');
  const c = await page.$eval('#chart-attn', (el) => ({ width: el.width, height: el.height }));
  assert.ok(pngSize(png).height > c.height, 'the attention PNG is the chart and more');
  assert.deepEqual((await titleStrip(page, png, 40)).titled, true, 'it starts with a title strip');
  await screenshots(page, 'layer', ['mask-panel', 'rope-panel', 'attn-panel']);
  assert.deepEqual(problems, []);
  await page.close();
});

test('Train tab: the roles grid writes its values, the head over the probe names its tokens', async () => {
  const { page, problems } = await openPage(browser.context, `${served}#lang=en`);
  await page.setViewportSize({ width: 1440, height: 900 });
  await trainTabDrawn(page);
  const grid = await shown(page, 'chart-roles-grid');
  const { L, H, probe } = await page.evaluate(() => {
    const f = window.attnlab.trainView.view.facts;
    return { L: f.hparams.n_layers, H: f.hparams.n_heads, probe: f.probe.length };
  });
  assert.deepEqual(texts(grid.x), Array.from({ length: H }, (_, h) => String(h)));
  assert.deepEqual(texts(grid.y), Array.from({ length: L }, (_, l) => String(l)));
  assert.equal(grid.values, L * H);
  const head = await page.evaluate(() => window.attnlab.trainView.view.pattern !== null);
  if (head) {
    const d = await shown(page, 'chart-train-head');
    assert.equal(d.x[0].index, 0);
    assert.equal(d.x[d.x.length - 1].index, probe - 1);
    disjoint(d.x);
    disjoint(d.y);
    assert.doesNotMatch(texts(d.x).join(''), /\uFFFD/);
  }
  await screenshots(page, 'train', ['train-roles-panel', 'train-head-panel']);
  assert.deepEqual(problems, []);
  await page.close();
});
