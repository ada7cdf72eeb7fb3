// train-view.test.mjs — the Train tab in headless Chromium, served and as dist/attnlab.html from
// file://, driven as a learner drives it: Start, Pause, Reset, a head clicked, a preset and the
// shape changed (kept in the link), the built-in sample and pasted text, the language, the
// exports, the trained model opened in the model view and downloaded. Every expected value
// comes from the native CLI on the files the page downloads (`attnlab inspect`, `logits`), or
// from the page's own state shown elsewhere (the status line against the exported loss rows),
// never from the numbers being checked. And the point of the tab: on the default preset and the
// repeated task, by step INDUCTION_BY, some head's induction score passes 0.5 and the repeated
// copies' loss falls below half of the first copies' (both read from the exported CSVs; how
// long that takes in seconds is the bench's, tests/bench/run.mjs).
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ROOT, run } from './lib/run.mjs';
import { readSafetensors } from './lib/safetensors.mjs';
import { openPage, trainTabDrawn, servedBrowser } from './lib/browser.mjs';

const CLI = join(ROOT, 'build', 'attnlab');
const OUT = join(ROOT, 'tests', 'out');
mkdirSync(OUT, { recursive: true });
const DIST = pathToFileURL(join(ROOT, 'dist', 'attnlab.html')).href;
const work = mkdtempSync(join(tmpdir(), 'attnlab-train-view-'));
let browser, served;
servedBrowser((b, url) => { browser = b; served = url; });
after(() => {
  rmSync(work, { recursive: true, force: true });
});

const PAGES = [
  ['served page', (hash) => `${served}${hash}`],
  ['dist/attnlab.html from file://', (hash) => `${DIST}${hash}`],
];

function cli(args) {
  const r = run(CLI, args);
  assert.equal(r.status, 0, `attnlab ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

// A download started by clicking selector: its suggested name and bytes.
async function download(page, selector) {
  const [d] = await Promise.all([page.waitForEvent('download', { timeout: 60000 }), page.click(selector)]);
  const path = join(work, `${Date.now()}-${d.suggestedFilename()}`);
  await d.saveAs(path);
  return { name: d.suggestedFilename(), bytes: readFileSync(path) };
}

// The default run (seed 42, deterministic: `attnlab train`'s step on the repeated task) has a
// layer-1 head's induction score pass 0.5 at step 675 (the evaluations are 25 steps apart) and
// the halves' losses part at step 737: the bound leaves about twice that.
const INDUCTION_BY = 1500;
// A hang guard only: ten times the two minutes the bench holds the run to.
const HANG_MS = 20 * 60 * 1000;

const stepOf = (status) => Number((status.match(/(?:step|第) (\d+)/) || [])[1]);
const status = (page) => page.textContent('#train-status');

for (const [label, url] of PAGES) {
  test(`${label}: Start trains, Pause stops it, the charts and the status follow the rows`, async () => {
    const { page, problems } = await openPage(browser.context, url('#lang=en&tab=train'));
    assert.deepEqual(await page.$$eval('[role="tabpanel"]', (v) => v.map((p) => [p.id, p.hidden])),
      [['view-model', true], ['view-train', false], ['view-layer', true]], 'only the Train tab shows');
    await trainTabDrawn(page);
    const paused = stepOf(await status(page));
    assert.ok(paused > 0, await status(page));
    await page.waitForTimeout(600);
    assert.equal(stepOf(await status(page)), paused, 'a step was taken after Pause');
    assert.match(await status(page), /[\d,]+ tokens\/s, paused/);
    // the loss CSV has a row per step; the status line shows the last one's loss
    const csv = (await download(page, '[data-train-export="loss:csv"]')).bytes.toString('utf8').trim().split('\n');
    assert.deepEqual(csv[0].split(','), ['step', 'loss', 'first_half', 'repeated_half', 'lr']);
    assert.equal(csv.length - 1, paused);
    const last = csv[csv.length - 1].split(',').map(Number);
    assert.equal(last[0], paused);
    assert.match(await status(page), new RegExp(`loss ${last[1].toFixed(3)}`));
    // the roles' CSV: a row per evaluation, a column per head and role; the number shown is
    // the last row's largest induction score
    const roles = (await download(page, '[data-train-export="roles:csv"]')).bytes.toString('utf8').trim().split('\n').map((r) => r.split(','));
    assert.deepEqual(roles[0].slice(0, 5), ['step', 'L0 H0 previous', 'L0 H0 first', 'L0 H0 local', 'L0 H0 induction']);
    const lastRoles = roles[roles.length - 1].map(Number);
    const induction = roles[0].map((name, i) => (/induction$/.test(name) ? lastRoles[i] : -1));
    assert.equal(await page.textContent('#induction-max'), Math.max(...induction).toFixed(3));
    // Start again goes on from where it paused
    await page.click('#btn-train-start');
    await page.waitForFunction((n) => Number((document.getElementById('train-status').textContent.match(/step (\d+)/) || [])[1]) > n + 5, paused);
    await page.click('#btn-train-pause');
    // a head clicked in the grid: its title, and its pattern over the probe (T × T)
    const box = await page.$eval('#chart-roles-grid', (c) => { const a = window.Chart.getChart(c).chartArea; return { x: a.right - 5, y: a.bottom - 5 }; });
    await page.click('#chart-roles-grid', { position: box });
    await page.waitForFunction(() => /Layer 1, head 1/.test(document.getElementById('train-head-title').textContent));
    const head = (await download(page, '[data-train-export="head:csv"]')).bytes.toString('utf8').trim().split('\n');
    assert.equal(head.length, 49, 'the probe: 48 tokens and the header');
    // Reset: no run, no charts, Start enabled
    await page.click('#btn-train-reset');
    await page.waitForFunction(() => document.getElementById('train-status').textContent === '' && !window.Chart.getChart(document.getElementById('chart-loss')));
    assert.equal(await page.textContent('#induction-max'), '–');
    assert.deepEqual(problems, []);
    await page.close();
  });
}

test(`served page: the default run grows an induction head by step ${INDUCTION_BY}`, async () => {
  const { page, problems } = await openPage(browser.context, `${served}#lang=en&tab=train`);
  await page.click('#tab-train');
  await page.waitForFunction(() => !document.getElementById('btn-train-start').disabled);
  await page.click('#btn-train-start');
  // Until both have happened (the rows the CSVs below export), or the run is past the bound.
  await page.waitForFunction((by) => {
    const history = window.attnlab.trainView.view.history, tail = history.slice(-50);
    const mean = (c) => tail.reduce((a, r) => a + r[c], 0) / tail.length;
    return history.length >= by || (Number(document.getElementById('induction-max').textContent) > 0.5 &&
      tail.length === 50 && mean(2) < mean(1) / 2);
  }, INDUCTION_BY, { timeout: HANG_MS, polling: 500 });
  await page.click('#btn-train-pause');
  await page.waitForFunction(() => /paused/.test(document.getElementById('train-status').textContent));
  // the roles' rows: the first evaluation with a head above 0.5, and the last one's best (the
  // number shown is no other)
  const roles = (await download(page, '[data-train-export="roles:csv"]')).bytes.toString('utf8').trim().split('\n').map((r) => r.split(','));
  const best = (row) => Math.max(...roles[0].map((name, i) => (/induction$/.test(name) ? Number(row[i]) : 0)));
  const formed = roles.slice(1).find((row) => best(row) > 0.5);
  assert.ok(formed && Number(formed[0]) <= INDUCTION_BY,
    `no induction score above 0.5 by step ${INDUCTION_BY}: the best is ${Math.max(...roles.slice(1).map(best))}`);
  assert.ok(best(roles[roles.length - 1]) > 0.5, `the last evaluation's best induction score is ${best(roles[roles.length - 1])}`);
  // the loss rows: the first step at which, over the last 50 steps, the repeated copies' loss is
  // below half the first copies'
  const rows = (await download(page, '[data-train-export="loss:csv"]')).bytes.toString('utf8').trim().split('\n').slice(1).map((r) => r.split(',').map(Number));
  const mean = (tail, c) => tail.reduce((a, r) => a + r[c], 0) / tail.length;
  const parted = rows.findIndex((_, i) => i >= 49 && mean(rows.slice(i - 49, i + 1), 3) < mean(rows.slice(i - 49, i + 1), 2) / 2);
  const tail = rows.slice(-50);
  assert.ok(parted >= 0 && rows[parted][0] <= INDUCTION_BY,
    `repeated copies ${mean(tail, 3)}, first copies ${mean(tail, 2)} after ${rows.length} steps`);
  console.log(`induction score > 0.5 at step ${formed[0]}, the halves' losses parted at step ${rows[parted][0]}; ` +
    `best score ${best(roles[roles.length - 1]).toFixed(3)}; losses ${mean(tail, 2).toFixed(3)} / ${mean(tail, 3).toFixed(3)}`);

  // What a person sees of it (drawn at the frame after the rows came). The loss chart marks that
  // step: a vertical line from the bottom to the top, named in the legend (read from the chart).
  const drawn = (f, arg) => page.waitForFunction(f, arg, { timeout: 10000 }).then(() => true, () => false);
  await drawn(() => window.Chart.getChart(document.getElementById('chart-loss')).data.datasets.some((s) => s.yAxisID === 'mark'));
  const mark = await page.evaluate(() => {
    const chart = window.Chart.getChart(document.getElementById('chart-loss'));
    const d = chart.data.datasets.find((s) => s.yAxisID === 'mark');
    const legend = chart.legend.legendItems.map((i) => i.text);
    return d && { xs: d.data.map((p) => p.x), ys: d.data.map((p) => p.y), label: d.label, legend,
      pixel: chart.scales.x.getPixelForValue(d.data[0].x), area: [chart.chartArea.left, chart.chartArea.right] };
  });
  assert.ok(mark, 'no mark on the loss chart');
  assert.deepEqual(mark.xs, [Number(formed[0]), Number(formed[0])], `the mark is at ${mark.xs}, the roles' rows say step ${formed[0]}`);
  assert.deepEqual(mark.ys, [0, 1]);
  assert.ok(mark.legend.includes(`induction score above 0.5 (step ${formed[0]})`), `legend ${mark.legend}`);
  assert.ok(mark.pixel > mark.area[0] && mark.pixel < mark.area[1], 'the mark is inside the chart');
  // when it usually comes (the core's measured range), and this run's step
  assert.match(await page.textContent('#train-jump'), new RegExp(`usually forms between step \\d+ and step \\d+ .*This run: step ${formed[0]},`));
  // the head panel follows the strongest induction head of the last evaluation
  const last = roles[roles.length - 1].map(Number);
  const strongest = roles[0].reduce((b, name, i) => (/induction$/.test(name) && (b < 0 || last[i] > last[b]) ? i : b), -1);
  const [, sl, sh] = roles[0][strongest].match(/^L(\d+) H(\d+)/).map(Number);
  const followed = `Layer ${sl}, head ${sh} on the probe (the strongest induction head, followed)`;
  await drawn((want) => document.getElementById('train-head-title').textContent === want, followed);
  assert.equal(await page.textContent('#train-head-title'), followed);
  await page.locator('#train-loss-panel').screenshot({ path: join(OUT, 'train-loss-jump.png') });
  await page.locator('#train-head-panel').screenshot({ path: join(OUT, 'train-head-followed.png') });

  // Open in the model view: the probe is the prompt (24 random ids, the same 24 again), the
  // induction head is selected in the grid and shown, the roles panel is on induction.
  await page.click('#train-open-model');
  await page.waitForFunction(() => /trained on this page/.test(document.getElementById('model-name').textContent) &&
    document.querySelectorAll('#tokens .chip').length > 0 && !document.getElementById('view-model').hidden, null, { timeout: 60000 });
  const probe = await page.evaluate(() => Array.from(window.attnlab.trainView.view.facts.probe));
  const ids = await page.$$eval('#tokens .chip', (chips) => chips.map((c) => Number(c.dataset.id)));
  assert.deepEqual(ids, probe, 'the model view\'s prompt is the probe');
  assert.deepEqual(ids.slice(0, 24), ids.slice(24), 'the probe repeats');
  await page.waitForFunction(([l, h]) => document.getElementById('head-title').textContent === `Layer ${l}, head ${h}`, [sl, sh]);
  assert.deepEqual(await page.$$eval('#chart-heads button.cell.selected', (b) => b.map((x) => [Number(x.dataset.layer), Number(x.dataset.head)])), [[sl, sh]]);
  assert.equal(await page.inputValue('#role-select'), 'induction');
  assert.equal(await page.inputValue('#prompt-text'), await page.evaluate(() => window.attnlab.modelView.view.snap.text));
  await page.locator('#view-model').screenshot({ path: join(OUT, 'train-opened-model.png') });
  assert.deepEqual(problems, []);
  await page.close();
});

test('served page: the trained model opens in the model view and downloads as a folder the CLI loads', async () => {
  const { page, problems } = await openPage(browser.context, `${served}#lang=en&tab=train`);
  await trainTabDrawn(page);
  const files = {};
  for (const which of ['config', 'model', 'tokenizer']) {
    const d = await download(page, `[data-train-file="${which}"]`);
    files[d.name] = d.bytes;
  }
  assert.deepEqual(Object.keys(files).sort(), ['config.json', 'model.safetensors', 'tokenizer.json']);
  const dir = join(work, 'folder');
  mkdirSync(dir);
  for (const [name, bytes] of Object.entries(files)) writeFileSync(join(dir, name), bytes);
  assert.match(cli(['inspect', '--model', dir]), /layers 2,[\s\S]*ffn none \(attention-only\)/);
  // opened in the model view: the prompt's attention is the CLI's on the same ids
  await page.click('#train-open-model');
  await page.waitForFunction(() => /trained on this page/.test(document.getElementById('model-name').textContent) &&
    document.querySelectorAll('#chart-heads button.cell').length === 4 && !document.getElementById('view-model').hidden);
  const ids = await page.$$eval('#tokens .chip', (chips) => chips.map((c) => Number(c.dataset.id)));
  assert.ok(ids.length > 0 && ids.every(Number.isInteger), `chips ${ids}`);
  const out = join(work, 'logits.safetensors');
  cli(['logits', '--model', dir, '--ids', ids.join(' '), '--out', out]);
  const want = readSafetensors(out).tensors['attn.0'].data.subarray(0, ids.length * ids.length);
  const csv = (await download(page, '[data-model-export="head:csv"]')).bytes.toString('utf8').trim().split('\n').slice(1);
  const got = csv.flatMap((row) => row.split(',').slice(1).map(Number));
  const worst = got.reduce((m, v, i) => Math.max(m, Math.abs(v - want[i])), 0);
  assert.ok(worst <= 1e-5, `layer 0 head 0 of the opened model is ${worst} from the CLI's`);
  assert.deepEqual(problems, []);
  await page.close();
});

test('served page: settings in the link, presets, text data, the language, a clear error for too little text', async () => {
  const { page, problems } = await openPage(browser.context, `${served}#lang=en&tab=train&tpreset=2&tlayers=3&theads=4&thidden=64&tlr=0.002&tdata=1`);
  await page.waitForFunction(() => document.getElementById('train-preset').options.length === 4);
  assert.deepEqual(await page.$eval('#view-train', () => ['train-preset', 'train-layers', 'train-heads', 'train-hidden', 'train-lr', 'train-data']
    .map((id) => document.getElementById(id).value)), ['2', '3', '4', '64', '0.002', '1']);
  // the built-in sample with the tiny MiniMind preset (SwiGLU) changed to 3 layers
  await page.click('#btn-train-start');
  await page.waitForFunction(() => /3 layers, hidden 64, 4 query \/ 2 KV heads/.test(document.getElementById('train-facts').textContent) &&
    /step [1-9]/.test(document.getElementById('train-status').textContent), null, { timeout: 30000 });
  assert.match(await page.textContent('#train-facts'), /FFN 256/);
  await page.click('#btn-train-pause');
  // a preset sets its own shape; the link follows
  await page.selectOption('#train-preset', '1');
  await page.waitForFunction(() => /tpreset=1/.test(location.hash) && /tlayers=1/.test(location.hash));
  assert.equal(await page.inputValue('#train-layers'), '1');
  // pasted text: too little is refused with a visible message
  await page.selectOption('#train-data', '2');
  assert.equal(await page.$eval('#train-text-label', (l) => l.hidden), false);
  await page.fill('#train-text', 'too short');
  await page.click('#btn-train-start');
  await page.waitForFunction(() => /paste more text/.test(document.getElementById('train-message').textContent));
  assert.equal(await page.$eval('#train-message', (m) => m.hidden), false);
  // enough text trains
  await page.fill('#train-text', 'The quick brown fox jumps over the lazy dog. '.repeat(20));
  await page.click('#btn-train-start');
  await page.waitForFunction(() => document.getElementById('train-message').hidden && /step [1-9]/.test(document.getElementById('train-status').textContent));
  await page.click('#btn-train-pause');
  // Chinese
  await page.selectOption('#lang', 'zh');
  await page.dispatchEvent('#lang', 'change');
  await page.waitForFunction(() => /第 \d+ \/ \d+ 步/.test(document.getElementById('train-status').textContent) &&
    document.getElementById('tab-train').textContent === '训练一个模型');
  assert.match(await page.textContent('#train-facts'), /1 层/);
  assert.deepEqual(problems, []);
  await page.close();
});
