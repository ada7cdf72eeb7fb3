// ablate.mjs — the model view's Experiments panel answering a head switched off, as a person
// does it: in headless Chromium (served) at a desktop's size, stories260K at 64 tokens, the
// panel's grid of heads scrolled to the middle of the window, a click on a head. Timed from the
// click to the end of the first frame painted once every chart on the screen that shows a value
// the ablation changed is redrawn for it: the snapshot's 'attnlab:draw' measure done and no
// request of the panel's left unanswered (the patch, when its maps are on the screen), then a
// frame rendered (a message posted from that frame's requestAnimationFrame callback is
// delivered once the frame is painted). The charts off the screen are redrawn as they come
// into view (tests/model-experiments.test.mjs checks it). Each click toggles a head, with the
// panel idle before it. Also kept: the time to the frame after the snapshot's drawing alone.
// Run alone: node tests/bench/ablate.mjs [--quick] [--against DIR] [--rounds N]
//   --against DIR: DIR is another copy of web/ (its gen/ built, e.g. an older commit's): the two
//   are served side by side and measured in rounds one after the other (A B A B …), and the
//   medians of each side and their ratio (DIR's over this one's) are printed.
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { launch, modelViewDrawn, openPage } from '../lib/browser.mjs';
import { SIZES } from '../lib/views.mjs';
import { startServer } from '../../web/serve.mjs';
import { ROUNDS, median, showRatio, spread } from './stats.mjs';

export const TARGET_MS = 50;
const TEXT = 'Once upon a time there was a little girl named Lily';

// n head toggles on the page served at base: {settled, drawn} (ms each), the time to every
// chart on the screen redrawn and the time to the snapshot's drawing painted.
export async function ablateTimes(context, base, n) {
  const { page } = await openPage(context, `${base}#lang=en&temp=0&gen=50&text=${encodeURIComponent(TEXT)}`, SIZES.desktop);
  try {
    await modelViewDrawn(page);
    await page.waitForFunction(() => window.attnlab.modelView.view.snap.len === 64 && window.attnlab.experiments.state.exp &&
      window.attnlab.experiments.state.inFlight === 0);
    await page.evaluate(() => document.getElementById('exp-heads').scrollIntoView({ block: 'center' }));
    return await page.evaluate(async (count) => {
      const x = window.attnlab.experiments.state;
      const pause = (ms) => new Promise((r) => setTimeout(r, ms));
      const painted = () => new Promise((r) => requestAnimationFrame(() => {
        const channel = new MessageChannel();
        channel.port1.onmessage = () => r(performance.now());
        channel.port2.postMessage(0);
      }));
      const out = { settled: [], drawn: [] };
      for (let i = 0; i < count; i++) {
        while (x.inFlight) await pause(5);
        await new Promise((r) => requestAnimationFrame(r));
        performance.clearMeasures('attnlab:draw');
        const b = document.querySelector(`#exp-heads button[data-layer="${i % 5}"][data-head="${(3 * Math.floor(i / 2)) % 8}"]`);
        const t0 = performance.now();
        b.click();
        while (!performance.getEntriesByName('attnlab:draw').length) await pause(1);
        out.drawn.push((await painted()) - t0);
        while (x.inFlight) await pause(1);
        out.settled.push((await painted()) - t0);
      }
      return out;
    }, n);
  } finally {
    await page.close();
  }
}

// Alone: this web/ (and DIR's with --against), alternated.
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const arg = (name) => { const i = process.argv.indexOf(name); return i > 0 ? process.argv[i + 1] : null; };
  const quick = process.argv.includes('--quick');
  const rounds = Number(arg('--rounds')) || ROUNDS;
  const against = arg('--against');
  const sides = [['this', startServer]];
  if (against) sides.push([against, (await import(pathToFileURL(join(resolve(against), 'serve.mjs')).href)).startServer]);
  const servers = await Promise.all(sides.map(([, start]) => start(0)));
  const browser = await launch();
  const got = sides.map(() => ({ settled: [], drawn: [] }));
  const ratios = { settled: [], drawn: [] };
  const fmt = (v) => v.toFixed(1);
  try {
    for (let r = 0; r < rounds; r++) {
      const each = [];
      for (let s = 0; s < sides.length; s++) {
        const times = await ablateTimes(browser.context, `http://127.0.0.1:${servers[s].address().port}/`, quick ? 6 : 12);
        for (const k of ['settled', 'drawn']) got[s][k].push(...times[k]);
        each.push(times);
        console.log(`round ${r + 1}, ${sides[s][0]}: median ${fmt(median(times.settled))} ms (${times.settled.map(fmt).join(' ')}); ` +
          `the snapshot's drawing painted: ${fmt(median(times.drawn))} ms`);
      }
      if (sides.length === 2) for (const k of ['settled', 'drawn']) ratios[k].push(median(each[1][k]) / median(each[0][k]));
    }
  } finally {
    await browser.close();
    for (const s of servers) s.close();
  }
  sides.forEach(([name], s) => console.log(`${name}: median ${fmt(median(got[s].settled))} ms over ${got[s].settled.length} toggles ` +
    `(target ≤ ${TARGET_MS} ms); the snapshot's drawing painted: ${fmt(median(got[s].drawn))} ms`));
  if (sides.length === 2) {
    for (const k of ['settled', 'drawn']) console.log(`${k}: ${against} / this: ${showRatio(spread(ratios[k]), (v) => v.toFixed(2))}`);
  }
}
