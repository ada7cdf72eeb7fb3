// train-ablation.test.mjs — the Train tab's causal test in headless Chromium, as a learner does
// it: the default run trained past its jump, paused, the strongest induction head switched off
// by its button; the second copy's loss shown climbs back above the first copy's, the grid
// shows the head greyed, the link and the buttons say it is off, and every number shown is the
// lab's (the worker's answer) and the native CLI's (`attnlab logits --ablate` on the folder the
// page downloads, the halves' −log softmax summed here). Any head by the keyboard and by
// Shift-click, all back on, the CSV; at 1440×900 and 390×844 nothing scrolls sideways and axe
// finds nothing; a link with heads off applies them to the run it starts.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT, run } from './lib/run.mjs';
import { readSafetensors } from './lib/safetensors.mjs';
import { openPage, trainTabDrawn, servedBrowser } from './lib/browser.mjs';
import { axeViolations, describeViolations } from './lib/axe.mjs';
import { probeHalves } from './lib/probe-loss.mjs';

const CLI = join(ROOT, 'build', 'attnlab');
const OUT = join(ROOT, 'tests', 'out');
mkdirSync(OUT, { recursive: true });
const work = mkdtempSync(join(tmpdir(), 'attnlab-train-ablation-'));
let browser, served;
servedBrowser((b, url) => { browser = b; served = url; });
after(() => rmSync(work, { recursive: true, force: true }));

// The default run's induction head forms by step 675 (AL_TRAIN_JUMP_TO); by step 1000 the
// probe's second copy is copied (test_train_lab.c: 0.47 nats against the first copy's 5.76) and
// switching the head off takes it back (7.37).
const TRAINED = 1000;
const HANG_MS = 20 * 60 * 1000; // a hang guard only: ten times the two minutes the bench holds the run to

async function download(page, selector) {
  const [d] = await Promise.all([page.waitForEvent('download', { timeout: 60000 }), page.click(selector)]);
  const path = join(work, `${Date.now()}-${d.suggestedFilename()}`);
  await d.saveAs(path);
  return { name: d.suggestedFilename(), bytes: readFileSync(path) };
}

// What the panel and the grid show now.
const shown = (page) => page.evaluate(() => {
  const v = window.attnlab.trainView.view, bars = window.Chart.getChart(document.getElementById('chart-ablation'));
  const grid = document.getElementById('chart-roles-grid');
  return {
    loss: v.probeLoss, ablation: v.ablation,
    result: document.getElementById('train-ablate-result').textContent,
    list: document.getElementById('train-ablate-list').textContent,
    bars: bars.data.datasets.map((d) => [d.label, ...d.data]),
    gridOff: grid.headsOffDrawn,
    pressed: [...document.querySelectorAll('#train-ablate-heads button.head-toggle')].filter((b) => b.getAttribute('aria-pressed') === 'true').map((b) => b.textContent),
  };
});

// The colour at the middle of the top-left quarter of cell (layer, head) of the grid as painted.
const cellColour = (page, layer, head) => page.evaluate(([l, h]) => {
  const canvas = document.getElementById('chart-roles-grid'), chart = window.Chart.getChart(canvas);
  const k = canvas.width / canvas.clientWidth;
  const x = chart.scales.x.getPixelForValue(h - 0.25), y = chart.scales.y.getPixelForValue(l - 0.25);
  // read through a one-pixel copy: the chart's own canvas is never read back
  const one = document.createElement('canvas');
  one.width = one.height = 1;
  const ctx = one.getContext('2d', { willReadFrequently: true });
  ctx.drawImage(canvas, Math.round(x * k), Math.round(y * k), 1, 1, 0, 0, 1, 1);
  return Array.from(ctx.getImageData(0, 0, 1, 1).data);
}, [layer, head]);
const grey = ([r, g, b]) => Math.max(r, g, b) - Math.min(r, g, b) <= 12 && r < 140;

async function noSidewaysScroll(page, label) {
  const [scroll, width] = await page.evaluate(() => [document.scrollingElement.scrollWidth, innerWidth]);
  assert.ok(scroll <= width, `${label}: the page scrolls sideways (${scroll} > ${width})`);
  const box = await page.$eval('#train-ablation-panel', (p) => { const r = p.getBoundingClientRect(); return [r.left, r.right]; });
  assert.ok(box[0] >= 0 && box[1] <= width, `${label}: the panel is ${box} of ${width}`);
}

test(`served page: trained to step ${TRAINED}, the induction head switched off takes the second copy's loss back up`, async () => {
  const { page, problems } = await openPage(browser.context, `${served}#lang=en&tab=train`, { width: 1440, height: 900 });
  await page.waitForFunction(() => !document.getElementById('btn-train-start').disabled);
  assert.equal(await page.textContent('#train-ablate-followed'), 'Start training first');
  assert.ok(await page.$eval('#train-ablate-followed', (b) => b.disabled));
  await page.click('#btn-train-start');
  await page.waitForFunction((n) => window.attnlab.trainView.view.history.length >= n, TRAINED, { timeout: HANG_MS, polling: 500 });
  await page.click('#btn-train-pause');
  await page.waitForFunction(() => /paused/.test(document.getElementById('train-status').textContent));
  const steps = await page.evaluate(() => window.attnlab.trainView.view.history.length);

  // the followed induction head (the core's strongest), switched off by its button
  const best = await page.evaluate(() => window.attnlab.trainView.view.strongest[3]);
  const name = `L${best.layer} H${best.head}`;
  assert.equal(await page.textContent('#train-ablate-followed'), `Switch off ${name} (the strongest induction head)`);
  await page.click('#train-ablate-followed');
  await page.waitForFunction(() => window.attnlab.trainView.view.ablation.length === 1 &&
    (document.getElementById('chart-roles-grid').headsOffDrawn || []).length === 1 && /off/.test(document.getElementById('train-ablate-result').textContent));
  const s = await shown(page);
  const p = s.loss;
  console.log(`step ${p.step}, ${name} off: second copy ${p.repeated_half.toFixed(3)} -> ${p.repeated_half_off.toFixed(3)}, ` +
    `first copy ${p.first_half.toFixed(3)} -> ${p.first_half_off.toFixed(3)}`);
  assert.equal(p.step, steps, 'measured at the step it paused at');
  assert.deepEqual(s.ablation, [[best.layer, best.head]]);
  // the point: copied, the second copy is far below the first; with the head off, no better
  assert.ok(p.repeated_half < 0.25 * p.first_half, `the second copy is not copied: ${p.repeated_half} against ${p.first_half}`);
  assert.ok(p.repeated_half_off > 0.9 * p.first_half, `${name} off, the second copy's loss is ${p.repeated_half_off}, the first's ${p.first_half}`);
  // what is shown is the lab's numbers
  const f3 = (v) => v.toFixed(3);
  assert.equal(s.result, `Step ${steps}, second copy's loss: ${f3(p.repeated_half)} → ${f3(p.repeated_half_off)} nats with ${name} off ` +
    `(first copy: ${f3(p.first_half)} → ${f3(p.first_half_off)}).`);
  assert.deepEqual(s.bars, [['every head on', p.first_half, p.repeated_half], [`${name} off`, p.first_half_off, p.repeated_half_off]]);
  assert.equal(s.list, `Switched off: ${name}`);
  assert.deepEqual(s.gridOff, [[best.layer, best.head]]);
  assert.deepEqual(s.pressed, [name]);
  await page.waitForFunction((want) => location.hash.includes(want), `toff=${best.layer}.${best.head}`); // written 150 ms after
  assert.equal(await page.getAttribute('#train-ablate-followed', 'aria-pressed'), 'true');
  assert.ok(grey(await cellColour(page, best.layer, best.head)), `the cell of ${name} is ${await cellColour(page, best.layer, best.head)}`);
  const other = best.head === 0 ? [best.layer, 1] : [best.layer, 0];
  assert.ok(!grey(await cellColour(page, ...other)), `the cell of L${other[0]} H${other[1]} is greyed`);

  // ... and the native CLI's on the model the page downloads (the weights it measured)
  const dir = join(work, 'trained');
  mkdirSync(dir);
  for (const which of ['config', 'model', 'tokenizer']) {
    const d = await download(page, `[data-train-file="${which}"]`);
    writeFileSync(join(dir, d.name), d.bytes);
  }
  const probe = await page.evaluate(() => Array.from(window.attnlab.trainView.view.facts.probe));
  const vocab = await page.evaluate(() => window.attnlab.trainView.view.facts.hparams.vocab);
  const out = join(work, 'probe.safetensors');
  for (const [ablate, keys] of [[['--ablate', `${best.layer}.${best.head}`], ['first_half_off', 'repeated_half_off']], [[], ['first_half', 'repeated_half']]]) {
    const r = run(CLI, ['logits', '--model', dir, '--ids', probe.join(' '), '--out', out, ...ablate]);
    assert.equal(r.status, 0, r.stderr);
    const want = probeHalves(readSafetensors(out).tensors.logits.data, probe, vocab);
    keys.forEach((k, i) => assert.ok(Math.abs(p[k] - want[i]) <= 1e-4, `${k}: the page ${p[k]}, the CLI ${want[i]}`));
  }
  await page.locator('#train-ablation-panel').screenshot({ path: join(OUT, 'train-ablation-1440.png') });
  await page.locator('#train-roles-panel').screenshot({ path: join(OUT, 'train-ablation-grid-1440.png') });
  await noSidewaysScroll(page, '1440×900');

  // any head by the keyboard: Tab reaches its button, Space switches it off, again on
  const first = `#train-ablate-heads button.head-toggle[data-layer="0"][data-head="0"]`;
  await page.focus('#train-ablate-clear');
  await page.keyboard.press('Tab');
  assert.equal(await page.evaluate(() => document.activeElement.textContent), 'L0 H0');
  await page.keyboard.press('Space');
  await page.waitForFunction(() => window.attnlab.trainView.view.ablation.length === 2);
  assert.equal(await page.getAttribute(first, 'aria-pressed'), 'true');
  assert.equal(await page.getAttribute(first, 'title'), 'layer 0, head 0: off');
  assert.match((await shown(page)).list, new RegExp(`^Switched off: L0 H0, ${name}$`));
  await page.keyboard.press('Space');
  await page.waitForFunction(() => window.attnlab.trainView.view.ablation.length === 1);
  // Shift-click on the grid: another head off; a plain click shows a head and switches nothing
  const at = await page.$eval('#chart-roles-grid', (c, [l, h]) => {
    const chart = window.Chart.getChart(c), r = c.getBoundingClientRect();
    return { x: chart.scales.x.getPixelForValue(h) * (r.width / c.clientWidth), y: chart.scales.y.getPixelForValue(l) * (r.height / c.clientHeight) };
  }, other);
  await page.click('#chart-roles-grid', { position: at, modifiers: ['Shift'] });
  await page.waitForFunction(() => window.attnlab.trainView.view.ablation.length === 2 &&
    document.getElementById('chart-roles-grid').headsOffDrawn.length === 2);
  assert.ok(grey(await cellColour(page, ...other)), 'a Shift-clicked head is not greyed');
  await page.click('#chart-roles-grid', { position: at });
  await page.waitForFunction(([l, h]) => document.getElementById('train-head-title').textContent.startsWith(`Layer ${l}, head ${h} on the probe`), other);
  assert.match(await page.textContent('#train-head-title'), /switched off in the probe's loss/);
  assert.equal((await shown(page)).ablation.length, 2);

  // the CSV: every measurement received, the last the one shown
  const csv = (await download(page, '[data-train-export="ablation:csv"]')).bytes.toString('utf8').trim().split('\n').map((r) => r.split(','));
  assert.deepEqual(csv[0], ['step', 'heads_off', 'first_half', 'repeated_half', 'first_half_off', 'repeated_half_off']);
  const lastRow = csv[csv.length - 1], now = (await shown(page)).loss;
  assert.deepEqual(lastRow.slice(2).map(Number), [now.first_half, now.repeated_half, now.first_half_off, now.repeated_half_off]);
  assert.equal(Number(lastRow[0]), now.step);
  assert.ok(csv.some((r) => r[1] === name && Number(r[5]) === p.repeated_half_off), `no row of ${name} alone off`);

  // a phone: the panel fits, nothing scrolls sideways
  await page.setViewportSize({ width: 390, height: 844 });
  await page.waitForTimeout(300);
  await noSidewaysScroll(page, '390×844');
  await page.locator('#train-ablation-panel').screenshot({ path: join(OUT, 'train-ablation-390.png') });
  const violations = await axeViolations(page);
  assert.equal(violations.length, 0, describeViolations(violations));
  await page.setViewportSize({ width: 1440, height: 900 });
  const wide = await axeViolations(page);
  assert.equal(wide.length, 0, describeViolations(wide));

  // all back on: the two measurements agree (the ablated forward with nothing off is the plain one)
  await page.click('#train-ablate-clear');
  await page.waitForFunction(() => window.attnlab.trainView.view.ablation.length === 0 && !document.getElementById('chart-roles-grid').headsOffDrawn.length);
  const cleared = await shown(page);
  assert.deepEqual([cleared.loss.first_half_off, cleared.loss.repeated_half_off], [cleared.loss.first_half, cleared.loss.repeated_half]);
  assert.equal(cleared.list, 'No head is switched off');
  await page.waitForFunction(() => !/toff=/.test(location.hash));
  assert.deepEqual(problems, []);
  await page.close();
});

test('served page: heads off in the link are off in the run it starts; heads the model lacks are dropped, saying so', async () => {
  const { page, problems } = await openPage(browser.context, `${served}#lang=en&tab=train&toff=1.0,7.3`);
  await page.waitForFunction(() => /heads switched off/.test(document.getElementById('message').textContent));
  assert.match(await page.textContent('#message'), /heads switched off/);
  await trainTabDrawn(page);
  await page.waitForFunction(() => window.attnlab.trainView.view.ablation.length === 1);
  const s = await shown(page);
  assert.deepEqual(s.ablation, [[1, 0]]);
  assert.deepEqual(s.pressed, ['L1 H0']);
  assert.match(s.result, /with L1 H0 off/);
  // in Chinese
  await page.selectOption('#lang', 'zh');
  await page.dispatchEvent('#lang', 'change');
  await page.waitForFunction(() => /已关掉：L1 H0/.test(document.getElementById('train-ablate-list').textContent));
  assert.match(await page.textContent('#train-ablate-result'), /关掉 L1 H0 后，第二遍的损失/);
  assert.deepEqual(problems, []);
  await page.close();
});
