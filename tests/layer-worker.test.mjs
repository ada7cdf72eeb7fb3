// layer-worker.test.mjs — the layer view computes in its worker (web/layer/worker.js), off the
// page's thread: served and from file://, the page's own thread starts no WebAssembly at all
// while the layer lab loads, steps, changes head, heads and language, and what it draws is the
// core's numbers exactly (the same .wasm run here in Node); at the lab's largest settings no long
// task holds the page's thread while the worker computes a Step; and when the worker's answers
// come back out of order (two seeds typed quickly, answered newest first), the older answer is
// never drawn over the newer one.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ROOT } from './lib/run.mjs';
import { layerDrawn, openPage, servedBrowser, showLayerLab } from './lib/browser.mjs';
import { loadCore } from './lib/wasm.mjs';

let browser, served;
servedBrowser((b, url) => {
  browser = b;
  served = url;
});

// Run in every page before its own scripts: counts the page thread's WebAssembly starts, notes
// each worker started and each message it sends (the time it reaches the page's handler), can
// hold a worker's messages back (probe.hold) to deliver them later in any order, and records
// the page thread's long tasks.
function probeScript() {
  const probe = { starts: 0, workers: [], arrivals: [], hold: null, held: [], longTasks: [] };
  window.__probe = probe;
  for (const name of ['instantiate', 'instantiateStreaming', 'compile', 'compileStreaming']) {
    const f = WebAssembly[name];
    WebAssembly[name] = function counted(...args) {
      probe.starts++;
      return f.apply(this, args);
    };
  }
  const NativeWorker = window.Worker;
  window.Worker = class extends NativeWorker {
    constructor(url, options) {
      super(url, options);
      const me = { url: String(url) };
      probe.workers.push(me);
      let handler = null;
      super.onmessage = (e) => {
        probe.arrivals.push({ url: me.url, at: performance.now() });
        const deliver = () => handler && handler.call(this, e);
        if (probe.hold && probe.hold(me.url)) probe.held.push(deliver);
        else deliver();
      };
      Object.defineProperty(this, 'onmessage', { get: () => handler, set: (h) => { handler = h; }, configurable: true });
    }
  };
  const note = (entries) => { for (const e of entries) probe.longTasks.push({ start: e.startTime, end: e.startTime + e.duration }); };
  const observer = new PerformanceObserver((list) => note(list.getEntries()));
  observer.observe({ type: 'longtask', buffered: true });
  // the long tasks so far, those not yet reported included
  probe.takeLongTasks = () => new Promise((resolve) => requestAnimationFrame(() => setTimeout(() => {
    note(observer.takeRecords());
    resolve(probe.longTasks);
  }, 100)));
}

let probed = false;
async function open(url) {
  if (!probed) {
    await browser.context.addInitScript(probeScript);
    probed = true;
  }
  return openPage(browser.context, url);
}

const sessionConfig = (s) => ({ hidden: s.hidden, heads: s.heads, kvHeads: s.kv, headDim: s.hd, ropeBase: s.base,
  qkNorm: !!s.qk, seed: s.seed, promptLen: s.prompt, decodeSteps: s.steps });

// The core's own attention weights of one head for a state at `len` tokens, run here in Node.
async function coreAttention(state, len, head) {
  const core = await loadCore();
  const s = core.createSession(sessionConfig(state));
  try {
    s.runTo(len);
    return { weights: Array.from(s.attention(head)), mask: Array.from(s.mask()), checks: s.verify() };
  } finally {
    s.free();
  }
}

// What the layer view shows: its state, the attention chart's weights and the frame's facts.
const shown = (page) => page.evaluate(() => {
  const { page: P } = window.attnlab;
  const img = window.Chart.getChart(document.getElementById('chart-attn')).options.plugins.matrixImage;
  return {
    state: P.state, len: P.session.length, seed: P.session.cfg.seed, head: P.session.view.head,
    weights: Array.from(img.image.cells.values), mask: Array.from(P.session.mask), checks: P.session.checks,
    seedField: document.getElementById('seed').value, command: document.getElementById('walk-command').textContent,
  };
});

const PAGES = [
  ['served page', () => served],
  ['dist/attnlab.html from file://', () => pathToFileURL(join(ROOT, 'dist', 'attnlab.html')).href],
];
for (const [label, base] of PAGES) {
  test(`${label}: the layer view computes in its worker; the page's thread starts no WebAssembly, and the numbers are the core's`, async () => {
    const { page, problems } = await open(`${base()}#tab=layer&lang=en&heads=4&kv=2&hd=8`);
    await showLayerLab(page);
    await page.click('#btn-step');
    await layerDrawn(page);
    await page.selectOption('#head', '3');
    await layerDrawn(page);
    await page.selectOption('#lang', 'zh');
    await layerDrawn(page);
    const s = await shown(page);
    assert.equal(s.len, s.state.prompt + 1, 'the Step was drawn');
    assert.equal(s.head, 3, 'the head chosen was drawn');
    const want = await coreAttention(s.state, s.len, 3);
    assert.deepEqual(s.weights, want.weights, 'the attention drawn is the core\'s, to the bit');
    assert.deepEqual(s.mask, want.mask);
    assert.deepEqual(s.checks, want.checks);
    const probe = await page.evaluate(() => window.__probe);
    assert.equal(probe.starts, 0, 'the page\'s own thread started WebAssembly');
    if (label === 'served page') assert.ok(probe.workers.some((w) => /(^|\/)layer\/worker\.js$/.test(w.url)), 'the layer view\'s worker runs its module');
    assert.deepEqual(problems, []);
    await page.close();
  });
}

// The largest settings (web/ui/state.js's limits): a Step, whose worker computes while the
// page's thread stays free: no long task runs between the click and the answer's arrival (the
// drawing of the answer, which follows it, is the page's and not counted here). A Step computed
// on the page's thread holds it at every Step; a pause the page's thread takes for itself (its
// garbage collector on a busy machine) can fall on any one, so of up to three Steps one clear
// of long tasks is enough.
test('served page, the layer lab at its largest settings: no long task on the page\'s thread while the worker computes a Step', async () => {
  const { FIELDS, MAX_TOKENS, MAX_HEAD_WIDTH } = await import('../web/ui/state.js');
  const max = (k) => FIELDS[k][2];
  const prompt = max('prompt'), steps = MAX_TOKENS - prompt;
  const hash = `#tab=layer&lang=en&prompt=${prompt}&steps=${steps}&hidden=${max('hidden')}&heads=${max('heads')}&kv=${max('kv')}` +
    `&hd=${MAX_HEAD_WIDTH / max('heads')}&base=${FIELDS.base[1]}&at=${MAX_TOKENS - 4}`;
  const { page, problems } = await open(`${served}${hash}`);
  await showLayerLab(page);
  const tries = [], fromWorker = [];
  for (let i = 1; i <= 3; i++) {
    // quiet first: the drawing before done
    await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => setTimeout(r, 200))));
    const r = await page.evaluate(async () => {
      const probe = window.__probe;
      const from = probe.arrivals.length;
      const clicked = performance.now();
      document.getElementById('btn-step').click();
      await window.attnlab.layerView.idle();
      const drawn = performance.now();
      // (no answer from a worker: the Step was computed here, and all of it counts)
      const answer = probe.arrivals.slice(from).find((a) => a.url.includes('layer/worker.js'));
      return { clicked, answered: answer ? answer.at : drawn, fromWorker: !!answer, len: window.attnlab.page.session.length, longTasks: await probe.takeLongTasks() };
    });
    assert.equal(r.len, MAX_TOKENS - 4 + i, 'the Step was drawn');
    fromWorker.push(r.fromWorker);
    // (a task that starts within a few ms of the answer is the one that delivers and draws it)
    const held = r.longTasks.filter((t) => t.end > r.clicked && t.start < r.answered - 5);
    tries.push(`click at ${r.clicked.toFixed(1)} ms, answer at ${r.answered.toFixed(1)} ms: ${held.map((t) => `[${t.start.toFixed(1)}, ${t.end.toFixed(1)}]`).join(' ') || 'none'}`);
    if (!held.length) break;
  }
  assert.ok(/none$/.test(tries.at(-1)), `long tasks on the page's thread while each Step was computed:\n${tries.join('\n')}`);
  assert.ok(fromWorker.every(Boolean), 'each Step\'s answer came from the layer view\'s worker');
  assert.deepEqual(problems, []);
  await page.close();
});

// Two seeds typed quickly: each asks the worker for a session and the walkthrough's sections.
// The four answers are held back, then delivered newest first, each in its own task: what is
// drawn at the end is the newer seed's, never the older one's drawn over it.
test('served page: answers that come back out of order never draw an older seed over a newer one', async () => {
  const { page, problems } = await open(`${served}#tab=layer&lang=en&prompt=8&steps=2&seed=3`);
  await showLayerLab(page);
  await page.evaluate(() => { window.__probe.hold = (url) => url.includes('layer/worker.js'); });
  for (const seed of ['4', '5']) {
    await page.fill('#seed', seed);
    await page.dispatchEvent('#seed', 'change');
  }
  await page.waitForFunction(() => window.__probe.held.length === 4);
  await page.evaluate(async () => {
    const probe = window.__probe;
    probe.hold = null;
    for (const deliver of probe.held.reverse()) {
      deliver();
      await new Promise((r) => setTimeout(r, 20));
    }
  });
  await layerDrawn(page);
  const s = await shown(page);
  assert.equal(s.seedField, '5');
  assert.equal(s.state.seed, 5);
  assert.equal(s.seed, 5, 'the session drawn is seed 5\'s');
  assert.match(s.command, /--seed 5 /, 'the walkthrough is seed 5\'s');
  const want = await coreAttention({ ...s.state, seed: 5 }, s.len, s.head);
  const older = await coreAttention({ ...s.state, seed: 4 }, s.len, s.head);
  assert.notDeepEqual(older.weights, want.weights, 'the two seeds draw different weights');
  assert.deepEqual(s.weights, want.weights, 'the attention drawn is seed 5\'s');
  await page.waitForFunction(() => /seed=5/.test(location.hash));
  assert.deepEqual(problems, []);
  await page.close();
});
