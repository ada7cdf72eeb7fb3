// model-experiments.test.mjs — the model view's Experiments panel in headless Chromium, on
// stories260K:
//   - its numbers are the CLI's: with head 2.6 switched off in the page, the next token's
//     distribution, the prompt's loss, the logit lens and the attribution against `attnlab
//     logits --ablate 2.6 --lens --target`, the next 20 tokens against `attnlab generate
//     --ablate 2.6 --print-ids`, and with every head on the patch maps of the fixture's pair
//     against `attnlab patch` (their share of the metric worked out here from the CLI's raw
//     maps), each read from the worker's answer the panel drew and from the charts;
//   - what a person sees at 1440×900 and 390×844: the panel shown, nothing wider than the
//     window, the heatmaps' axes carrying the tokens (read back from the charts), a screenshot;
//   - the link round-trips (heads off, the patch's prompts and tokens), a head switched off by
//     keyboard, heads the model does not have and prompts of different lengths said on the page;
//   - a head switched off redraws at once the charts on the screen, and those off it (the patch
//     asked for then) once they are scrolled into view;
//   - axe-core finds nothing in the panel drawn, in both languages, served and from file://.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ROOT, run } from './lib/run.mjs';
import { readSafetensors } from './lib/safetensors.mjs';
import { openPage, servedBrowser } from './lib/browser.mjs';
import { axeViolations, describeViolations } from './lib/axe.mjs';
import { SIZES } from './lib/views.mjs';

let browser, served;
servedBrowser((b, url) => { browser = b; served = url; });

const CLI = join(ROOT, 'build', 'attnlab');
const STORIES = join(ROOT, 'models', 'stories260K', 'stories260K.bin');
const FIXTURE = JSON.parse(readFileSync(join(ROOT, 'tests', 'fixtures', 'experiments', 'stories260K', 'case.json'), 'utf8'));
const work = mkdtempSync(join(tmpdir(), 'attnlab-exp-page-'));
process.on('exit', () => rmSync(work, { recursive: true, force: true }));
const OUT = join(ROOT, 'tests', 'out');

const hash = (s) => '#' + Object.entries({ lang: 'en', tab: 'model', temp: 0, ...s }).map(([k, v]) => `${k}=${encodeURIComponent(v)}`).join('&');

// The panel drawn for the state the page holds: no request of its own unanswered, the
// experiment of the heads the link names drawn, and (when asked) the patch maps.
async function panelDrawn(page, { patch = true } = {}) {
  await page.waitForFunction((withPatch) => {
    const x = window.attnlab.experiments && window.attnlab.experiments.state;
    const drawn = (id) => window.Chart.getChart(document.getElementById(id));
    return x && x.exp && x.inFlight === 0 && !x.queued && drawn('chart-exp-lens') && drawn('chart-exp-next') &&
      (!withPatch || (x.patch && drawn('chart-exp-patch-resid')));
  }, patch, { timeout: 60000 });
}

// The element scrolled into view and two frames rendered (drawings waiting for it have run).
async function scrollTo(page, id, block = 'center') {
  await page.evaluate(([i, b]) => document.getElementById(i).scrollIntoView({ block: b }), [id, block]);
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
}
// A heatmap's cells as its chart draws them.
const cellsOf = (page, id) => page.evaluate((i) => Array.from(window.Chart.getChart(document.getElementById(i)).options.plugins.matrixImage.image.cells.values), id);

const cliOut = (name) => join(work, `${name}.safetensors`);
function cli(args) {
  const r = run(CLI, args);
  assert.equal(r.status, 0, r.stderr);
  return r.stdout;
}
function softmax(row) {
  let max = -Infinity, sum = 0;
  for (const v of row) max = Math.max(max, v);
  const out = Array.from(row, (v) => Math.exp(v - max));
  for (const v of out) sum += v;
  return out.map((v) => v / sum);
}
// Within tol, or (scaled) within tol of the largest |value| wanted: the page's WebAssembly sums
// in another order than the native CLI.
function assertNear(got, want, tol, what, scaled = false) {
  assert.equal(got.length, want.length, `${what}: length`);
  if (scaled) tol *= Math.max(...Array.from(want, Math.abs));
  let worst = 0, at = -1;
  for (let i = 0; i < want.length; i++) {
    const d = Math.abs(got[i] - want[i]);
    if (!(d <= worst)) worst = d, at = i;
  }
  assert.ok(worst <= tol, `${what}: differs by ${worst} at ${at} (page ${got[at]}, CLI ${want[at]})`);
}

test('the panel\'s numbers are the CLI\'s: head 2.6 off (distribution, loss, next 20 tokens, lens, attribution), then the fixture\'s patch', async () => {
  const { page, problems } = await openPage(browser.context, served + hash({ text: FIXTURE.clean_text, off: '2.6' }), SIZES.desktop);
  await panelDrawn(page, { patch: false });
  const got = await page.evaluate(() => {
    const x = window.attnlab.experiments.state, e = x.exp;
    const lensChart = window.Chart.getChart(document.getElementById('chart-exp-lens'));
    return {
      ids: Array.from(window.attnlab.modelView.view.snap.ids), off: window.attnlab.page.state.off,
      pressed: [...document.querySelectorAll('#exp-heads button[aria-pressed="true"]')].map((b) => `${b.dataset.layer}.${b.dataset.head}`),
      probs: Array.from(e.off.probs), aheadIds: Array.from(e.off.ids), loss: e.off.loss.value, lossAll: e.all.loss.value,
      lensTop: Array.from(e.lens.top), lensProb: Array.from(e.lens.prob),
      // what the lens chart was drawn from: its cells are the answer's
      lensCells: Array.from(lensChart.options.plugins.matrixImage.image.cells.values),
      dla: { target: e.dla.target, heads: Array.from(e.dla.heads), embed: e.dla.embed, ffn: Array.from(e.dla.ffn) },
      lossText: document.getElementById('exp-loss').textContent,
    };
  });
  assert.deepEqual(got.ids, FIXTURE.ids, 'the prompt\'s ids');
  assert.equal(got.off, '2.6');
  assert.deepEqual(got.pressed, ['2.6'], 'the pressed button is the head off');

  // 1. The logits, lens and attribution of the ablated model, from the CLI.
  const ids = FIXTURE.ids.join(' ');
  cli(['logits', '--model', STORIES, '--ids', ids, '--ablate', '2.6', '--lens', '--target', String(got.dla.target), '--out', cliOut('ablated')]);
  const t = readSafetensors(cliOut('ablated')).tensors;
  const [n, V] = t.logits.shape, L = t.dla.shape[0], Hn = t.dla.shape[1];
  assertNear(got.probs, softmax(t.logits.data.subarray((n - 1) * V, n * V)), 1e-6, 'next-token distribution');
  let nll = 0;
  for (let i = 0; i + 1 < n; i++) nll -= Math.log(softmax(t.logits.data.subarray(i * V, (i + 1) * V))[FIXTURE.ids[i + 1]]);
  assert.ok(Math.abs(got.loss - nll / (n - 1)) < 1e-5, `loss ${got.loss}, from the CLI's logits ${nll / (n - 1)}`);
  assert.ok(got.lossText.includes(got.loss.toFixed(4)) && got.lossText.includes(got.lossAll.toFixed(4)), got.lossText);
  const top = [], prob = [];
  for (let r = 0; r <= L; r++) for (let j = 0; j < n; j++) {
    const row = t.lens.data.subarray((r * n + j) * V, (r * n + j + 1) * V), p = softmax(row);
    let best = 0;
    for (let v = 1; v < V; v++) if (row[v] > row[best]) best = v;
    top.push(best), prob.push(p[best]);
  }
  assert.deepEqual(got.lensTop, top, 'each layer\'s top token');
  assertNear(got.lensProb, prob, 1e-5, 'lens probabilities');
  assertNear(got.lensCells, prob, 1e-5, 'the lens chart\'s cells');
  const at = (data, rows) => Array.from({ length: rows }, (_, r) => data[r * n + n - 1]);
  assertNear(got.dla.heads, at(t.dla.data, L * Hn), 1e-4, 'attribution per head', true);
  assertNear([got.dla.embed, ...got.dla.ffn], [t.dla_embed.data[n - 1], ...at(t.dla_ffn.data, L)], 1e-4, 'embedding and FFN shares', true);

  // 2. The next 20 tokens: generate with the head off, greedy (the page's temperature 0).
  const printed = cli(['generate', '--model', STORIES, '--ids', ids, '--ablate', '2.6', '--temperature', '0',
    '--max-new-tokens', '20', '--print-ids']).trim().split(/\s+/).map(Number);
  assert.deepEqual(got.aheadIds, printed, 'the next 20 tokens');

  // 3. Every head on again (the button), the fixture's pair (the suggestion), its patch.
  await page.click('#btn-exp-clear');
  await page.waitForFunction(() => window.attnlab.page.state.off === '' && window.attnlab.experiments.state.inFlight === 0);
  await page.click('#btn-exp-patch');
  await panelDrawn(page);
  const p = await page.evaluate(() => {
    const q = window.attnlab.experiments.state.patch;
    const cells = (id) => Array.from(window.Chart.getChart(document.getElementById(id)).options.plugins.matrixImage.image.cells.values);
    return { clean: q.clean, corrupt: q.corrupt, rawHeads: Array.from(q.rawHeads), rawResid: Array.from(q.rawResid), answer: q.answer,
      wrong: q.wrong, heads: cells('chart-exp-patch-heads'), resid: cells('chart-exp-patch-resid'), recovered: q.recovered };
  });
  assert.equal(p.answer, FIXTURE.answer);
  assert.equal(p.wrong, FIXTURE.wrong);
  cli(['patch', '--model', STORIES, '--clean', FIXTURE.clean.join(' '), '--corrupt', FIXTURE.corrupt.join(' '),
    '--answer', String(FIXTURE.answer), '--wrong', String(FIXTURE.wrong), '--out', cliOut('patch')]);
  const q = readSafetensors(cliOut('patch')).tensors;
  assertNear([p.clean, p.corrupt], [q.clean.data[0], q.corrupt.data[0]], 1e-4, 'the two metrics', true);
  assertNear(p.rawHeads, Array.from(q.head.data), 1e-4, 'heads map', true);
  assertNear(p.rawResid, Array.from(q.resid.data), 1e-4, 'stream map', true);
  const share = (v) => (v - q.corrupt.data[0]) / (q.clean.data[0] - q.corrupt.data[0]);
  assert.ok(p.recovered);
  assertNear(p.heads, Array.from(q.head.data, share), 1e-4, 'the heads map drawn, as shares', true);
  assertNear(p.resid, Array.from(q.resid.data, share), 1e-4, 'the stream map drawn, as shares', true);
  assert.deepEqual(problems, []);
  await page.close();
});

for (const [size, viewport] of Object.entries(SIZES)) {
  test(`at ${viewport.width}×${viewport.height}: the panel shows, fits the window, its heatmaps name the tokens`, async () => {
    const { page, problems } = await openPage(browser.context, served + hash({ text: FIXTURE.clean_text, off: '2.6,4.0' }), viewport);
    await panelDrawn(page);
    await page.evaluate(() => document.getElementById('exp-panel').scrollIntoView());
    await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
    const seen = await page.evaluate(() => {
      const panel = document.getElementById('exp-panel'), box = panel.getBoundingClientRect(), s = getComputedStyle(panel);
      const axes = (id) => {
        const drawn = document.getElementById(id).heatmapDrawn;
        return { x: drawn.x.map((l) => l.text), y: drawn.y.map((l) => l.text), bar: drawn.bar };
      };
      return {
        display: s.display, visibility: s.visibility, width: box.width, height: box.height, left: box.left,
        scrollWidth: document.scrollingElement.scrollWidth, innerWidth,
        lens: axes('chart-exp-lens'), dla: axes('chart-exp-dla'), resid: axes('chart-exp-patch-resid'),
        buttons: [...document.querySelectorAll('#exp-heads button')].map((b) => b.getBoundingClientRect().right),
      };
    });
    assert.notEqual(seen.display, 'none');
    assert.equal(seen.visibility, 'visible');
    assert.ok(seen.width > 300 && seen.height > 500 && seen.left >= 0, JSON.stringify(seen));
    assert.ok(seen.scrollWidth <= seen.innerWidth, `the page is ${seen.scrollWidth} px wide in a window of ${seen.innerWidth}`);
    assert.ok(Math.max(...seen.buttons) <= seen.innerWidth, 'a head button passes the window\'s edge');
    // the tokens on the lens's x axis, the layers read out on its y axis, a colour bar
    assert.ok(seen.lens.x.includes('<s>') && seen.lens.x.some((s) => /Lily/.test(s)), `lens x: ${seen.lens.x}`);
    assert.deepEqual([seen.lens.y[0], seen.lens.y[seen.lens.y.length - 1]], ['embedding', 'after L4']);
    assert.ok(seen.lens.bar && seen.lens.bar.top === '1', JSON.stringify(seen.lens.bar));
    assert.ok(seen.resid.x.some((s) => s === 'Lily/Tim'), `patch x: ${seen.resid.x}`);
    assert.ok(seen.dla.y.includes('L0') && seen.dla.x.includes('h0'), JSON.stringify(seen.dla));
    await (await page.$('#exp-panel')).screenshot({ path: join(OUT, `model-experiments-${size}.png`) });
    assert.deepEqual(problems, []);
    await page.close();
  });
}

test('the link round-trips: heads off (one by keyboard), the patch\'s prompts and tokens; bad heads and unequal prompts are said', async () => {
  const custom = { text: 'Once upon a time', off: '1.3', clean: 'Lily and Tim went to the park. Lily', corrupt: 'Lily and Tim went to the park. Tim',
    answer: 'had', wrong: 'was' };
  const { page, problems } = await openPage(browser.context, served + hash(custom), SIZES.desktop);
  await panelDrawn(page);
  await page.focus('#exp-heads button[data-layer="4"][data-head="0"]');
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => window.attnlab.page.state.off === '1.3,4.0' && window.attnlab.experiments.state.inFlight === 0);
  await page.waitForFunction(() => /off=1\.3%2C4\.0/.test(location.hash)); // written once things settle
  await scrollTo(page, 'chart-exp-patch-heads'); // its maps patched again once on the screen
  await page.waitForFunction(() => window.attnlab.experiments.state.inFlight === 0);
  const first = await page.evaluate(() => ({ hash: location.hash, ids: Array.from(window.attnlab.experiments.state.exp.off.ids),
    heads: Array.from(window.attnlab.experiments.state.patch.rawHeads), cell: document.querySelector('#chart-heads button[data-layer="4"][data-head="0"]').className }));
  assert.match(first.cell, /\boff\b/, 'the heads grid marks the head off');
  for (const [k, v] of Object.entries(custom)) if (k !== 'off') assert.ok(first.hash.includes(`${k}=${encodeURIComponent(v)}`), `${k} in ${first.hash}`);

  const again = await openPage(browser.context, served + first.hash, SIZES.desktop);
  await panelDrawn(again.page);
  const second = await again.page.evaluate(() => ({
    pressed: [...document.querySelectorAll('#exp-heads button[aria-pressed="true"]')].map((b) => `${b.dataset.layer}.${b.dataset.head}`),
    inputs: ['exp-clean', 'exp-corrupt', 'exp-answer', 'exp-wrong'].map((id) => document.getElementById(id).value),
    ids: Array.from(window.attnlab.experiments.state.exp.off.ids), heads: Array.from(window.attnlab.experiments.state.patch.rawHeads),
  }));
  assert.deepEqual(second.pressed, ['1.3', '4.0']);
  assert.deepEqual(second.inputs, [custom.clean, custom.corrupt, custom.answer, custom.wrong]);
  assert.deepEqual(second.ids, first.ids, 'the next 20 tokens');
  assert.deepEqual(second.heads, first.heads, 'the patch map');

  // prompts of different lengths: said, no maps
  await again.page.fill('#exp-corrupt', 'Lily and Tim went to the big park. Tim');
  await again.page.waitForFunction(() => !document.getElementById('exp-patch-message').hidden);
  const said = await again.page.evaluate(() => ({ text: document.getElementById('exp-patch-message').textContent,
    maps: !!window.Chart.getChart(document.getElementById('chart-exp-patch-heads')) }));
  assert.match(said.text, /different token counts \(clean \d+, corrupted \d+\)/);
  assert.equal(said.maps, false);
  assert.deepEqual(again.problems, []);
  await again.page.close();

  // a head the model does not have: the core's refusal, shown; every head stays on
  const bad = await openPage(browser.context, served + hash({ off: '9.0' }), SIZES.desktop);
  await panelDrawn(bad.page);
  const refused = await bad.page.evaluate(() => ({ shown: !document.getElementById('exp-message').hidden,
    text: document.getElementById('exp-message').textContent, off: window.attnlab.page.state.off }));
  assert.ok(refused.shown && /layer 9/.test(refused.text), JSON.stringify(refused));
  assert.equal(refused.off, '');
  assert.deepEqual(bad.problems, []);
  await bad.page.close();
  assert.deepEqual(problems, []);
  await page.close();
});

test('a head switched off: the charts on the screen redrawn at once, those off it (and the patch) once scrolled into view', async () => {
  // head 3.1 open: its layer comes after 2.6's, so its pattern changes
  const { page, problems } = await openPage(browser.context, served + hash({ text: FIXTURE.clean_text, layer: 3, mhead: 1 }), SIZES.desktop);
  await panelDrawn(page);
  await scrollTo(page, 'exp-heads');
  const before = { dla: await cellsOf(page, 'chart-exp-dla'), patch: await cellsOf(page, 'chart-exp-patch-heads'),
    head: await cellsOf(page, 'chart-head') };
  await page.click('#exp-heads button[data-layer="2"][data-head="6"]');
  await page.waitForFunction(() => window.attnlab.page.state.off === '2.6' && window.attnlab.experiments.state.inFlight === 0);
  // the heatmaps redrawn on the screen (their layout unchanged: no Chart.js update) show what
  // the same charts drawn anew show, pixel for pixel, in a page opened with 2.6 off
  const pictures = (p) => p.evaluate(() => ['chart-exp-lens', 'chart-head'].map((id) => document.getElementById(id).toDataURL()));
  const fresh = await openPage(browser.context, served + hash({ text: FIXTURE.clean_text, layer: 3, mhead: 1, off: '2.6' }), SIZES.desktop);
  await panelDrawn(fresh.page);
  await scrollTo(fresh.page, 'exp-heads');
  const [redrawn, anew] = [await pictures(page), await pictures(fresh.page)];
  assert.ok(redrawn[0] === anew[0], 'the lens redrawn after the toggle is not the lens drawn anew with 2.6 off');
  assert.ok(redrawn[1] === anew[1], 'head 3.1 redrawn after the toggle is not the head drawn anew with 2.6 off');
  assert.deepEqual(fresh.problems, []);
  await fresh.page.close();
  const shown = await page.evaluate(() => {
    const e = window.attnlab.experiments.state.exp;
    const bars = window.Chart.getChart(document.getElementById('chart-exp-next')).data.datasets[1].data;
    return { bars: Array.from(bars), want: Array.from(e.top, (id) => e.off.probs[id]), dla: Array.from(e.dla.heads) };
  });
  assert.deepEqual(shown.bars, shown.want, 'the next token\'s bars on the screen are the heads off\'s');
  assert.notDeepEqual(shown.dla, before.dla, 'head 2.6 off changes the attribution');
  assert.deepEqual(await cellsOf(page, 'chart-exp-dla'), before.dla, 'the attribution off the screen waits');
  assert.deepEqual(await cellsOf(page, 'chart-exp-patch-heads'), before.patch, 'the patch off the screen waits');

  await scrollTo(page, 'chart-head');
  const attention = await page.evaluate(() => Array.from(window.attnlab.modelView.view.snap.attention));
  assert.notDeepEqual(attention, before.head, 'head 2.6 off changes head 3.1\'s pattern');
  assert.deepEqual(await cellsOf(page, 'chart-head'), attention, 'the open head scrolled into view is the heads off\'s');
  await scrollTo(page, 'chart-exp-dla');
  assert.deepEqual(await cellsOf(page, 'chart-exp-dla'), shown.dla, 'the attribution scrolled into view is the heads off\'s');
  await scrollTo(page, 'chart-exp-patch-heads');
  await page.waitForFunction(() => window.attnlab.experiments.state.inFlight === 0);
  const patched = await page.evaluate(() => Array.from(window.attnlab.experiments.state.patch.heads));
  assert.notDeepEqual(patched, before.patch, 'head 2.6 off changes the patch');
  assert.deepEqual(await cellsOf(page, 'chart-exp-patch-heads'), patched, 'the patch scrolled into view is the heads off\'s');
  assert.deepEqual(problems, []);
  await page.close();
});

for (const [label, base] of [['served page', () => served], ['dist/attnlab.html from file://', () => pathToFileURL(join(ROOT, 'dist', 'attnlab.html')).href]]) test(`${label}: axe finds no violations in the panel drawn, in English and in Chinese`, async () => {
  const { page, problems } = await openPage(browser.context, base() + hash({ text: FIXTURE.clean_text, off: '2.6' }), SIZES.desktop);
  await panelDrawn(page);
  let found = '';
  for (const lang of ['en', 'zh']) {
    if (lang === 'zh') {
      await page.selectOption('#lang', 'zh');
      await page.dispatchEvent('#lang', 'change');
      await page.waitForFunction(() => document.documentElement.lang === 'zh-CN');
      await panelDrawn(page);
    }
    const v = await axeViolations(page);
    if (v.length) found += `${lang}:\n${describeViolations(v)}\n`;
  }
  assert.ok(!found, found);
  assert.deepEqual(problems, []);
  await page.close();
});
