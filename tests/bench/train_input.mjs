// train_input.mjs — the page's answer to the learner while the Train tab trains: in headless
// Chromium (served), the default run started, then inputs made as a person makes them (through
// the browser's input pipeline, not dispatched by script) at irregular moments: a click on a
// head of the roles grid (the head panel shows that head), the role chosen with the keyboard
// (the role curves show that role), and, with the training going on behind, the model view's
// temperature slider moved with the keyboard (the next-token chart redrawn). Each time is from
// the input event's own timestamp (when the browser received it, however long it then waited
// for the page's thread) to the end of the first frame painted with its effect on screen: the
// effect is looked for after each frame's paint (a message posted from the frame's
// requestAnimationFrame callback is delivered once the frame is painted), so a time is late by
// at most the frame it was looked for in. Reported: p50, p90 and the worst, against the 100 ms
// target. Run alone: node tests/bench/train_input.mjs [--quick]
import { launch, openPage } from '../lib/browser.mjs';
import { startServer } from '../../web/serve.mjs';

export const TARGET_MS = 100;

// The q-quantile of the values, nearest rank.
const quantile = (v, q) => { const s = [...v].sort((a, b) => a - b); return s[Math.min(s.length - 1, Math.ceil(q * s.length) - 1)]; };
export const summary = (v) => ({ n: v.length, p50: quantile(v, 0.5), p90: quantile(v, 0.9), max: Math.max(...v) });

// Arms the page: the next event of `type` starts the clock; the first painted frame after it in
// which the effect (`effect`, the source of a function of no arguments) is seen stops it into
// window.__answerMs.
function arm(page, type, effect) {
  return page.evaluate(([t, source]) => {
    window.__answerMs = null;
    const seen = new Function(`return (${source})();`); // eslint-disable-line no-new-func
    window.addEventListener(t, (e) => {
      const t0 = e.timeStamp;
      const look = () => requestAnimationFrame(() => {
        const ch = new MessageChannel();
        ch.port1.onmessage = () => { if (seen()) window.__answerMs = performance.now() - t0; else look(); };
        ch.port2.postMessage(0);
      });
      look();
    }, { capture: true, once: true });
  }, [type, effect]);
}

async function answered(page) {
  // a hang guard only: ten times the target and more
  await page.waitForFunction(() => window.__answerMs !== null, null, { timeout: 30 * TARGET_MS * 10, polling: 20 });
  return page.evaluate(() => window.__answerMs);
}

const pause = (page) => page.waitForTimeout(150 + Math.floor(Math.random() * 250));

// A click on another head of the roles grid.
async function gridClick(page, i) {
  const at = await page.evaluate((k) => {
    const canvas = document.getElementById('chart-roles-grid'), chart = window.Chart.getChart(canvas);
    canvas.scrollIntoView({ block: 'center' }); // a click lands only on what is on the screen
    const f = window.attnlab.trainView.view.facts, n = f.hparams.n_layers * f.hparams.n_heads;
    const [, l0, h0] = (document.getElementById('train-head-title').textContent.match(/Layer (\d+), head (\d+)/) || [0, -1, -1]).map(Number);
    let lh = k % n;
    if (lh === l0 * f.hparams.n_heads + h0) lh = (lh + 1) % n; // another head than the one shown
    const layer = Math.floor(lh / f.hparams.n_heads), head = lh % f.hparams.n_heads, box = canvas.getBoundingClientRect();
    return { layer, head, x: box.left + chart.scales.x.getPixelForValue(head), y: box.top + chart.scales.y.getPixelForValue(layer) };
  }, i);
  await arm(page, 'pointerdown', `() => document.getElementById('train-head-title').textContent.startsWith('Layer ${at.layer}, head ${at.head} ')`);
  await page.mouse.click(at.x, at.y);
  return answered(page);
}

// The role select moved one option with the keyboard.
async function roleKey(page, i) {
  await page.focus('#train-role');
  await arm(page, 'keydown', `() => { const s = document.getElementById('train-role');
    const title = window.Chart.getChart(document.getElementById('chart-roles-train')).options.plugins.title.text;
    return title.startsWith(s.options[s.selectedIndex].text + ':'); }`);
  await page.keyboard.press(i % 2 ? 'ArrowUp' : 'ArrowDown');
  return answered(page);
}

// The temperature slider moved one step with the keyboard (the model view; training goes on).
async function sliderKey(page, i) {
  await page.focus('#temperature');
  const before = await page.evaluate(() => JSON.stringify(window.Chart.getChart(document.getElementById('chart-next')).data.datasets.map((d) => d.data)));
  await arm(page, 'keydown', `() => JSON.stringify(window.Chart.getChart(document.getElementById('chart-next')).data.datasets.map((d) => d.data)) !== ${JSON.stringify(before)}`);
  await page.keyboard.press(i % 2 ? 'ArrowLeft' : 'ArrowRight');
  return answered(page);
}

// base: the served page's address. Returns {kinds: {name: ms[]}, all: summary, ...summaries}.
export async function trainInputBench({ base, quick = false, browser }) {
  const n = quick ? 8 : 25;
  const { page } = await openPage(browser.context, `${base}#tab=train&lang=en`);
  const out = { samples: {}, steps: {} };
  try {
    await page.waitForFunction(() => !document.getElementById('btn-train-start').disabled);
    await page.click('#btn-train-start');
    await page.waitForFunction(() => window.Chart.getChart(document.getElementById('chart-roles-grid')) &&
      window.attnlab.trainView.view.history.length >= 50, null, { timeout: 60000 });
    const steps = () => page.evaluate(() => window.attnlab.trainView.view.history.length);
    for (const [name, fn] of [['click a head', gridClick], ['choose a role', roleKey]]) {
      out.samples[name] = [];
      for (let i = 0; i < n; i++) { await pause(page); out.samples[name].push(await fn(page, i)); }
    }
    // the model view, the training going on behind it
    await page.click('#tab-model');
    await page.waitForFunction(() => window.Chart.getChart(document.getElementById('chart-next')), null, { timeout: 60000 });
    out.samples['move a slider (model view)'] = [];
    for (let i = 0; i < n; i++) { await pause(page); out.samples['move a slider (model view)'].push(await sliderKey(page, i)); }
    out.steps = { at_end: await steps(), running: await page.evaluate(() => !document.getElementById('btn-train-pause').disabled) };
  } finally {
    await page.close();
  }
  const all = Object.values(out.samples).flat();
  return { ...out, target_ms: TARGET_MS, all: summary(all), kinds: Object.fromEntries(Object.entries(out.samples).map(([k, v]) => [k, summary(v)])) };
}

// The whole measurement with its own server and browser (the bench's row, and this file run alone).
export async function trainInputRun({ quick = false } = {}) {
  const server = await startServer(0);
  const browser = await launch();
  try {
    return await trainInputBench({ base: `http://127.0.0.1:${server.address().port}/`, quick, browser });
  } finally {
    await browser.close();
    server.close();
  }
}

// The bench's line for it: p50, p90 and the worst, each kind's p90.
export const showTrainInput = (r, fmt) => `p50 ${fmt(r.all.p50)} ms, p90 ${fmt(r.all.p90)} ms, worst ${fmt(r.all.max)} ms over ${r.all.n} inputs (p90: ` +
  `${Object.entries(r.kinds).map(([k, s]) => `${k} ${fmt(s.p90)} ms`).join(', ')})`;

if (import.meta.url === `file://${process.argv[1]}`) {
  const r = await trainInputRun({ quick: process.argv.includes('--quick') });
  const f = (v) => v.toFixed(0);
  for (const [k, s] of Object.entries(r.kinds)) console.log(`${k}: p50 ${f(s.p50)} ms, p90 ${f(s.p90)} ms, max ${f(s.max)} ms (${s.n})`);
  console.log(`all: ${showTrainInput(r, f)} against ${r.target_ms} ms; training at step ${r.steps.at_end}, still running: ${r.steps.running}`);
}
