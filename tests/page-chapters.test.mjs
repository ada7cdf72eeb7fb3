// page-chapters.test.mjs — chapters 04, 05 and 10 on the page against the command line, in the
// browser, by what the page shows:
//   the walkthrough's examples of 04, 05 and 10, their titles and what each prints, make up
//     exactly what `attnlab demo mlp-moe|block|generation --seed S --lang L` prints (the command the walkthrough
//     names) for the page's seed, in English and in Chinese, at the default seed and at one
//     typed into the Seed field;
//   the charts of the FFN and MoE and the block panels hold the numbers those examples print
//     (read back from the Chart.js instances): SiLU at the script's inputs, the router's scores
//     and each token's top-2 (the outlined cells), the renormalised weights, each expert's load
//     and mean probability and the balancing loss, the stream's norm before and after 6 pre-norm
//     and post-norm blocks, the tokens, their shifted labels (the ignored ones named) and the
//     loss; the sampler panel's charts hold what chapter 10 prints: the softmax and its greedy
//     choice, the three temperatures' distributions with their entropies, top-k's kept ids and
//     renormalised probabilities, top-p's order, cumulative sum, mask and distribution, the
//     logits before and after the penalty with the ids seen, each of the 8 draws' candidates,
//     token and probability, and the batch's tokens and EOS flags at every step;
//   every panel the core names (al_demo_panel) is in the layer view, every demo of the core is
//     walked, and each chart's data-demo-example names an example of its own panel;
//   every chart of the three panels has a title and labelled axes, served and from
//     dist/attnlab.html via file://, at 1440×900 and 390×844, with nothing scrolling sideways.
// The walkthrough's screens themselves (each example's panel in view and alone outlined) are
// tests/page-tour.test.mjs's.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ROOT, run } from './lib/run.mjs';
import { layerDrawn, openPage, servedBrowser, showLayerLab } from './lib/browser.mjs';
import { loadCore } from './lib/wasm.mjs';
import { SIZES } from './lib/views.mjs';

let browser, served;
servedBrowser((b, url) => { browser = b; served = url; });

const RULE = '='.repeat(70);
const GEN_BARS = ['chart-gen-greedy', 'chart-gen-temps', 'chart-gen-topk', 'chart-gen-topp', 'chart-gen-penalty'];
const CHARTS = ['chart-ffn-curves', 'chart-ffn-router', 'chart-ffn-renorm', 'chart-ffn-load', 'chart-block-stream', 'chart-block-labels',
  ...GEN_BARS, 'chart-gen-draws', 'chart-gen-eos'];

// Every example of the walkthrough, from the first to the last by its Next button: its
// chapter, title, the numbers it shows and the command it names.
async function walkSteps(page) {
  await page.evaluate(() => window.scrollTo(0, 0));
  while (!(await page.$eval('#walk-prev', (b) => b.disabled))) await page.click('#walk-prev');
  const steps = [];
  for (;;) {
    steps.push(await page.evaluate(() => {
      const text = (id) => document.getElementById(id).textContent;
      return { title: text('walk-title'), numbers: text('walk-text'), command: text('walk-command'), highlighted: [...document.querySelectorAll('.panel.highlight')].map((p) => p.id) };
    }));
    if (await page.$eval('#walk-next', (b) => b.disabled)) return steps;
    await page.click('#walk-next');
  }
}

// What the command the walkthrough names prints (attnlab demo <name> --seed S --lang L).
function cli(command) {
  const args = command.split(' ');
  assert.equal(args[0], 'attnlab');
  const r = run(join(ROOT, 'build', 'attnlab'), args.slice(1));
  assert.equal(r.status, 0, r.stderr);
  return r.stdout;
}

// What is wrong with the steps of one chapter against its command's output: each title under a
// header in order, what it shows right after it (blank lines between), and nothing else left
// but the closing banner.
function chapterWrongs(steps, chapter) {
  const own = steps.filter((s) => s.title.startsWith(`${chapter} · `));
  if (own.length !== 7) return [`chapter ${chapter}: ${own.length} examples, not 7`];
  const commands = [...new Set(own.map((s) => s.command))];
  if (commands.length !== 1) return [`chapter ${chapter}: commands ${commands.join(' | ')}`];
  const out = cli(commands[0]);
  const bad = [];
  let at = 0;
  for (const s of own) {
    const title = s.title.split(' · ').slice(2).join(' · ');
    const header = `${RULE}\n${title}\n${RULE}\n`;
    const h = out.indexOf(header, at);
    if (h < 0) { bad.push(`${s.title}: no such header in \`${commands[0]}\` after byte ${at}`); continue; }
    const body = out.slice(h + header.length);
    const blank = /^\n*/.exec(body)[0].length;
    if (!body.startsWith(s.numbers, blank)) bad.push(`${s.title}: what it shows is not what the command prints under its header`);
    at = h + header.length + blank + s.numbers.length;
  }
  if (!/^\n*={70}\n[^\n]+\n={70}\n$/.test(out.slice(at))) bad.push(`chapter ${chapter}: the command prints more than the walkthrough shows: ${JSON.stringify(out.slice(at, at + 200))}`);
  return bad;
}

// The numbers of a printed list "[a, b, ...]" after `label` (or "[[...]]").
function list(out, label) {
  const at = out.indexOf(label);
  assert.ok(at >= 0, `no "${label}" in the command's output`);
  return /\[+([^\]]*)\]/.exec(out.slice(at + label.length))[1].split(',').map(Number);
}
// v is `printed`, written with `decimals` decimals (half a unit of the last digit either way).
const near = (v, printed, decimals) => Math.abs(v - printed) <= 0.5 * 10 ** -decimals + 1e-9;

// The data the three panels' charts hold now, read from Chart.js.
function chartData(page) {
  return page.evaluate((bars) => {
    const chart = (id) => window.Chart.getChart(document.getElementById(id));
    const cells = (id) => {
      const m = chart(id).options.plugins.matrixImage;
      return { values: Array.from(m.image.cells.values), outlined: m.outlineCells ? [...m.outlineCells] : [] };
    };
    const sets = (id) => chart(id).data.datasets.map((d) => d.data.map((p) => (typeof p === 'object' ? { ...p } : p)));
    return {
      curves: sets('chart-ffn-curves'), router: cells('chart-ffn-router'), renorm: cells('chart-ffn-renorm'),
      load: sets('chart-ffn-load'), loadTitle: chart('chart-ffn-load').options.plugins.title.text,
      stream: sets('chart-block-stream'), labels: chart('chart-block-labels').data.labels, losses: sets('chart-block-labels'),
      gen: Object.fromEntries(bars.map((id) => [id, { labels: chart(id).data.labels, sets: sets(id), names: chart(id).data.datasets.map((d) => d.label) }])),
      draws: cells('chart-gen-draws'),
      // the EOS chart: its flags, the token written in each cell, its columns (the steps run)
      eos: (() => {
        const m = chart('chart-gen-eos').options.plugins.matrixImage, c = m.image.cells;
        return { finished: Array.from(c.values), tokens: Array.from(c.values, (v, i) => c.cellText(v, i)), cols: c.cols, rows: c.rows };
      })(),
    };
  }, GEN_BARS);
}

// What is wrong with the sampler panel's charts against what `attnlab demo generation --lang en`
// prints.
function generationWrongs(d, gen) {
  const bad = [];
  const expect = (ok, what) => { if (!ok) bad.push(what); };
  const ex = (n) => gen.slice(gen.indexOf(`Example ${n}:`), n < 7 ? gen.indexOf(`Example ${n + 1}:`) : undefined);
  const idOf = (label) => Number(/#(\d+)$/.exec(label)[1]);
  const all = (a, b, decimals) => a.length === b.length && a.every((v, i) => near(v, b[i], decimals));
  // 1: the softmax by id, the greedy token marked
  const g = d.gen['chart-gen-greedy'];
  const greedy = Number(/Token chosen by greedy decoding: (\d+)/.exec(gen)[1]);
  expect(all(g.sets[0], list(ex(1), 'Probabilities after softmax: '), 4), `greedy: ${g.sets[0]}`);
  expect(g.labels.filter((l) => l.startsWith('▶')).join() === `▶ #${greedy}`, `greedy: marked ${g.labels.filter((l) => l.startsWith('▶'))}, printed ${greedy}`);
  // 2: each temperature's distribution, its entropy in its name
  const temps = d.gen['chart-gen-temps'];
  ['0.5', '1.0', '2.0'].forEach((T, k) => {
    const part = ex(2).slice(ex(2).indexOf(`temperature=${T}:`));
    const entropy = /entropy: (\S+)/.exec(part)[1];
    expect(all(temps.sets[k], list(part, 'probabilities: '), 4), `T ${T}: ${temps.sets[k]}`);
    expect(temps.names[k].endsWith(`entropy ${entropy}`) && temps.names[k].startsWith(`T = ${Number(T)} `), `T ${T}: named "${temps.names[k]}", entropy printed ${entropy}`);
  });
  // 3: the raw softmax, the ids top-k keeps (not crossed out) and their renormalised probabilities
  const k = d.gen['chart-gen-topk'];
  const top = list(ex(3), 'Top-5 token ids: ').sort((a, b) => a - b), renorm = list(ex(3), 'Top-5 probabilities after renormalization: ');
  const keptK = k.labels.filter((l) => !l.startsWith('✕')).map(idOf);
  expect(all(k.sets[0], list(ex(3), 'Raw probabilities (12 tokens): '), 4), `top-k raw: ${k.sets[0]}`);
  expect(keptK.join() === top.join(), `top-k: kept ${keptK}, printed ${top}`);
  expect(all(k.sets[1].filter((_, id) => top.includes(id)), renorm, 4) && k.sets[1].every((v, id) => top.includes(id) || v === 0), `top-k: ${k.sets[1]}, printed ${renorm}`);
  // 4: most likely first, the cumulative line, the mask, top-p's distribution
  const p = d.gen['chart-gen-topp'];
  const order = list(ex(4), 'token ids, sorted: '), after = list(ex(4), 'probabilities after Top-P (in the original order): ');
  const mask = /mask \(True = removed\): \[([^\]]*)\]/.exec(ex(4))[1].split(', ').map((b) => b === 'True');
  expect(p.labels.map(idOf).join() === order.join(), `top-p: order ${p.labels}, printed ${order}`);
  expect(all(p.sets[2], list(ex(4), 'cumulative:   '), 4), `top-p: cumulative ${p.sets[2]}`);
  expect(p.labels.every((l, i) => l.startsWith('✕') === mask[i]), `top-p: crossed out ${p.labels}, mask printed ${mask}`);
  expect(all(p.sets[1], order.map((id) => after[id]), 4), `top-p: ${p.sets[1]}, printed ${after}`);
  // 5: the logits before and after the penalty, the ids seen marked
  const pen = d.gen['chart-gen-penalty'];
  const seen = list(ex(5), 'Tokens seen so far: ');
  expect(all(pen.sets[0], list(ex(5), 'Raw logits: '), 3) && all(pen.sets[1], list(ex(5), 'Logits after the penalty: '), 3), `penalty: ${pen.sets[0]} / ${pen.sets[1]}`);
  expect(pen.labels.filter((l) => l.startsWith('●')).map(idOf).join() === seen.join(), `penalty: marked ${pen.labels}, seen ${seen}`);
  // 6: each step's candidates, its token (outlined) and its probability
  for (let s = 0; s < 8; s++) {
    const [, n, token, prob] = new RegExp(`step ${s + 1}: candidates=(\\d+), token chosen=(\\d+), its probability=(\\S+)`).exec(ex(6)).map(Number);
    const row = d.draws.values.slice(s * 12, s * 12 + 12);
    expect(row.filter((v) => v > 0).length === n && d.draws.outlined.includes(s * 12 + token) && near(row[token], prob, 4),
      `draw ${s + 1}: ${row}, outlined ${d.draws.outlined}; printed ${n} candidates, token ${token}, p ${prob}`);
  }
  expect(d.draws.outlined.length === 8, `draws: ${d.draws.outlined.length} cells outlined`);
  // 7: every step's tokens and flags, and no step more
  const steps = [...ex(7).matchAll(/step (\d+): next_tokens=\[([^\]]*)\], finished=\[([^\]]*)\]/g)];
  expect(d.eos.rows === 3 && d.eos.cols === steps.length, `EOS: ${d.eos.rows} × ${d.eos.cols}, ${steps.length} steps printed`);
  for (const [, step, tokens, flags] of steps) {
    const col = Number(step) - 1;
    tokens.split(', ').forEach((tok, b) => {
      const i = b * d.eos.cols + col;
      expect(d.eos.tokens[i] === tok && d.eos.finished[i] === (flags.split(', ')[b] === 'True' ? 1 : 0), `EOS: sequence ${b} step ${step}: ${d.eos.tokens[i]} ${d.eos.finished[i]}, printed ${tok} ${flags}`);
    });
  }
  return bad;
}

// What is wrong with the charts' numbers against what the English commands print.
function numberWrongs(d, moe, block) {
  const bad = [];
  const expect = (ok, what) => { if (!ok) bad.push(what); };
  // 04, example 2: the points the script prints, on the SiLU curve
  const silu = list(moe, 'SiLU(x):   '), xs = list(moe, 'Inputs:    ');
  expect(d.curves[2].length === 7 && d.curves[2].every((p, i) => p.x === xs[i] && near(p.y, silu[i], 4)), `SiLU points ${JSON.stringify(d.curves[2])}, printed ${silu}`);
  // 04, example 3: each token's scores and its top-2, outlined
  const want = [];
  for (let t = 0; t < 6; t++) {
    const scores = list(moe, `  token ${t}: `);
    const chosen = list(moe.slice(moe.indexOf(`  token ${t}: `)), 'experts chosen ');
    expect(scores.every((p, e) => near(d.router.values[t * 4 + e], p, 3)), `token ${t}: scores ${d.router.values.slice(t * 4, t * 4 + 4)}, printed ${scores}`);
    want.push(...chosen.map((e) => t * 4 + e));
  }
  expect(JSON.stringify([...d.router.outlined].sort((a, b) => a - b)) === JSON.stringify(want.sort((a, b) => a - b)), `outlined cells ${d.router.outlined}, the top-2 printed ${want}`);
  // 04, example 6: the renormalised weights of tokens 0 to 2
  const after = moe.slice(moe.indexOf('After (divided by their sum):'));
  for (let t = 0; t < 3; t++) {
    const line = after.slice(after.indexOf(`  token ${t}: `));
    const [experts, weights] = [list(line, 'experts '), list(line, 'weights ')];
    expect(experts.every((e, j) => near(d.renorm.values[t * 4 + e], weights[j], 4)), `token ${t}: renormalised ${d.renorm.values.slice(t * 4, t * 4 + 4)}, printed ${experts} ${weights}`);
  }
  // 04, example 7: f_i, P_i, the balanced share, the loss in the title
  const f = list(moe, 'f_i (load): '), p = list(moe, 'probability P_i: ');
  expect(f.every((v, e) => near(d.load[0][e], v, 4)) && p.every((v, e) => near(d.load[1][e], v, 4)), `load ${d.load[0]} / ${d.load[1]}, printed ${f} / ${p}`);
  expect(d.load[2].every((v) => v === 0.25), `the balanced share ${d.load[2]}`);
  const aux = /aux_loss_coef\n.*\n {2}= (\S+)\n/.exec(moe)[1];
  expect(String(d.loadTitle).endsWith(`= ${aux}`), `the load chart's title "${d.loadTitle}", the loss printed ${aux}`);
  // 05, example 2: the stream before and after the 6 blocks
  const x = Number(/Norm of the input x: (\S+)/.exec(block)[1]);
  const pre = Number(/after 6 pre-norm blocks: (\S+)/.exec(block)[1]), post = Number(/after 6 post-norm blocks: (\S+)/.exec(block)[1]);
  const [preLine, postLine] = d.stream;
  expect(preLine.length === 7 && near(preLine[0], x, 4) && near(postLine[0], x, 4) && near(preLine[6], pre, 4) && near(postLine[6], post, 4),
    `stream ${preLine} / ${postLine}, printed ${x} ${pre} ${post}`);
  // 05, example 6: the tokens, their shifted labels (the ignored named), the loss
  const ex6 = block.slice(block.indexOf('Example 6'));
  const ids = list(ex6, 'input_ids: '), labels = list(ex6, 'labels:    '), loss = Number(/loss: (\S+)/.exec(ex6)[1]);
  for (let t = 0; t < 5; t++) {
    const [top, bottom] = d.labels[t];
    const target = t === 4 ? 'no next token' : labels[t + 1] === -100 ? '-100: ignored' : `→ ${labels[t + 1]}`;
    expect(top === `pos ${t} · id ${ids[t]}` && bottom === target, `position ${t} labelled "${top} / ${bottom}", printed id ${ids[t]}, next label ${labels[t + 1]}`);
  }
  const counted = d.losses[0].filter((_, t) => t < 4 && labels[t + 1] !== -100);
  expect(d.losses[0][0] === 0 && d.losses[0][4] === 0 && counted.length === 3, `the positions that count ${d.losses[0]}`);
  expect(near(counted.reduce((a, b) => a + b, 0) / counted.length, loss, 4) && d.losses[1].every((v) => near(v, loss, 4)), `the positions' losses ${d.losses[0]} and their mean ${d.losses[1][0]}, printed ${loss}`);
  return bad;
}

async function switchLanguage(page, lang) {
  await page.selectOption('#lang', lang);
  await page.dispatchEvent('#lang', 'change');
  await page.waitForFunction((l) => document.documentElement.lang === (l === 'zh' ? 'zh-CN' : 'en'), lang);
}

// The seed typed into the layer view's Seed field; the walkthrough rebuilt for it.
async function typeSeed(page, seed) {
  await page.fill('#seed', String(seed));
  await page.dispatchEvent('#seed', 'change');
  await page.waitForFunction((s) => document.getElementById('walk-command').textContent.includes(`--seed ${s} `), seed, { timeout: 30000 });
  await layerDrawn(page);
}

test('served page: the walkthrough of chapters 04, 05 and 10 is what the command line prints, and the charts hold its numbers, at two seeds and in both languages', async () => {
  const { page, problems } = await openPage(browser.context, `${served}#tab=layer&lang=en`, SIZES.desktop);
  await showLayerLab(page);
  const bad = [];
  for (const seed of [42, 7]) {
    if (seed !== 42) await typeSeed(page, seed);
    for (const lang of ['en', 'zh']) {
      await switchLanguage(page, lang);
      const steps = await walkSteps(page);
      for (const chapter of ['04', '05', '10']) bad.push(...chapterWrongs(steps, chapter).map((w) => `seed ${seed}, ${lang}: ${w}`));
      if (lang === 'en') {
        const d = await chartData(page);
        const moe = cli(`attnlab demo mlp-moe --seed ${seed} --lang en`), block = cli(`attnlab demo block --seed ${seed} --lang en`);
        bad.push(...numberWrongs(d, moe, block).map((w) => `seed ${seed}: ${w}`));
        bad.push(...generationWrongs(d, cli(`attnlab demo generation --seed ${seed} --lang en`)).map((w) => `seed ${seed}: ${w}`));
      }
    }
  }
  assert.deepEqual(bad, [], `the page against the command line:\n${bad.join('\n')}`);
  assert.deepEqual(problems, []);
  await page.close();
});

test('served page: every panel the core names is in the layer view, every demo of the core is walked, every chart names an example of its panel', async () => {
  const { page, problems } = await openPage(browser.context, `${served}#tab=layer&lang=en`, SIZES.desktop);
  await showLayerLab(page);
  // the core's panels and demos (the page's thread holds no core: its worker's is the same .wasm)
  const core = await loadCore();
  const panelNames = Object.keys(core.abi.enums.demo_panel).filter((n) => n !== 'none');
  const shown = await page.evaluate((names) => ({
    panels: names.map((n) => [n, document.querySelectorAll(`#layer-main [data-demo-panel="${n}"]`).length]),
    charts: [...document.querySelectorAll('[data-demo-example]')].map((el) => [el.dataset.demoExample, el.closest('[data-demo-panel]').dataset.demoPanel]),
  }), panelNames);
  const demos = Object.keys(core.abi.enums.demo);
  const found = {
    panels: shown.panels, demos,
    examples: demos.reduce((n, d) => n + core.demoSectionCount(d) - 1, 0),
    // each chart's example: its demo's section of that number belongs to the chart's panel
    charts: shown.charts.map(([example, got]) => {
      const [demo, n] = example.split(':');
      const section = core.demoSections(demo, 'en')[Number(n) - 1];
      return [example, section && section.panel, got];
    }),
  };
  assert.deepEqual(found.panels.filter(([, n]) => n !== 1), [], 'panels of the core without exactly one element in the layer view');
  assert.deepEqual(found.charts.filter(([, want, got]) => want !== got), [], 'charts in a panel their example does not belong to');
  assert.equal(found.charts.length, 13);
  const steps = await walkSteps(page);
  assert.equal(steps.length, found.examples, `${steps.length} examples walked, the core's ${found.demos.join(', ')} have ${found.examples}`);
  assert.deepEqual(problems, []);
  await page.close();
});

const PAGES = [
  ['served page', () => served],
  ['dist/attnlab.html from file://', () => pathToFileURL(join(ROOT, 'dist', 'attnlab.html')).href],
];
for (const [name, base] of PAGES) {
  for (const viewport of Object.values(SIZES)) {
    test(`${name}, ${viewport.width}×${viewport.height}: the charts of chapters 04, 05 and 10 have titles and labelled axes, inside their panels, nothing scrolling sideways`, async () => {
      const { page, problems } = await openPage(browser.context, `${base()}#tab=layer&lang=en`, viewport);
      await showLayerLab(page);
      await page.waitForFunction((ids) => ids.every((id) => window.Chart.getChart(document.getElementById(id))), CHARTS);
      const found = await page.evaluate((ids) => ids.map((id) => {
        const canvas = document.getElementById(id), chart = window.Chart.getChart(canvas);
        const text = (s) => (s && s.options.title && s.options.title.display ? String(s.options.title.text || '') : '');
        const c = canvas.getBoundingClientRect(), p = canvas.closest('.panel').getBoundingClientRect();
        return {
          id, title: String(chart.options.plugins.title.display ? chart.options.plugins.title.text : ''), x: text(chart.scales.x), y: text(chart.scales.y),
          inside: c.left >= p.left - 1 && c.right <= p.right + 1 && c.width > 100 && c.height > 100,
        };
      }), CHARTS);
      const bad = found.filter((c) => !c.title || !c.x || !c.y || !c.inside).map((c) => JSON.stringify(c));
      const wide = await page.evaluate(() => [document.scrollingElement.scrollWidth, innerWidth]);
      if (wide[0] > wide[1]) bad.push(`the page scrolls sideways: scrollWidth ${wide[0]} > innerWidth ${wide[1]}`);
      assert.deepEqual(bad, [], `charts without a title or an axis's label, or out of their panel:\n${bad.join('\n')}`);
      assert.deepEqual(problems, []);
      await page.close();
    });
  }
}
