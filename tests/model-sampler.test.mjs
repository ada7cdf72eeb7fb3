// model-sampler.test.mjs — the model view's sampler, head roles and model links in headless
// Chromium, as a learner meets them: the next-token chart shows the draw to come before any
// Step and follows each sampler setting at once without drawing a token (the tokens after the
// settings are moved back are `attnlab generate --seed`'s); temperature 0 is one-hot; a log axis;
// each head role taught (definition, ideal pattern, strongest heads on a 0–1 scale, a plain
// "no head" with the Train tab); the learner's files recognised as a shipped model or put in the
// link as a file that reopening asks for; per-model examples; the end token said and gone past
// (`generate --ignore-eos`'s tokens). Screenshots under tests/out/ at 1440×900 and 390×844.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT, run } from './lib/run.mjs';
import { modelViewDrawn, openPage, servedBrowser } from './lib/browser.mjs';

const CLI = join(ROOT, 'build', 'attnlab');
const STORIES = join(ROOT, 'models', 'stories260K', 'stories260K.bin');
const TOK512 = join(ROOT, 'models', 'stories260K', 'tok512.bin');
const FORTUNES = join(ROOT, 'models', 'minimind-fortunes');
const DENSE = join(ROOT, 'tests', 'fixtures', 'minimind', 'dense_f16');
const MM_TOKENIZER = join(ROOT, 'models', 'minimind-tokenizer', 'tokenizer.json');
const OUT = join(ROOT, 'tests', 'out');
mkdirSync(OUT, { recursive: true });

let browser, served;
servedBrowser((b, url) => { browser = b; served = url; });

function cli(args) {
  const r = run(CLI, args);
  assert.equal(r.status, 0, `attnlab ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}
const idsOf = (text) => text.trim().split(/\s+/).filter(Boolean).map(Number);
const generateIds = (args) => idsOf(cli(['generate', ...args, '--print-ids']));
const sampler = (p) => ['--temperature', String(p.temp), '--top-k', String(p.topk), '--top-p', String(p.topp),
  '--repetition-penalty', String(p.rep), '--seed', String(p.seed)];

async function until(page, fn, arg, what, timeout = 60000) {
  try {
    await page.waitForFunction(fn, arg, { timeout });
  } catch (e) {
    if (!/Timeout/.test(e.message)) throw e;
    const seen = await page.evaluate(() => ({ status: document.getElementById('gen-status').textContent,
      name: document.getElementById('model-name').textContent, hash: location.hash,
      message: document.getElementById('model-message').textContent }));
    assert.fail(`${what}: not within ${timeout} ms; the page shows ${JSON.stringify(seen)}`);
  }
}

function setInput(page, selector, value, event = 'input') {
  return page.$eval(selector, (el, [v, ev]) => {
    el.value = v;
    el.dispatchEvent(new Event(ev, { bubbles: true }));
  }, [String(value), event]);
}

// The next-token chart as drawn: its title, x labels, each stage's bars, the y axis' kind.
function nextChart(page) {
  return page.evaluate(() => {
    const c = window.Chart.getChart(document.getElementById('chart-next'));
    return { title: c.options.plugins.title.text, labels: [...c.data.labels], stages: c.data.datasets.map((d) => [...d.data]),
      yType: c.scales.y.type };
  });
}
const tokenCount = (page) => page.$$eval('#tokens .chip', (c) => c.length);
const genIds = (page) => page.$$eval('#tokens .chip.gen', (c) => c.map((x) => Number(x.dataset.id)));

async function setPrompt(page, text) {
  await page.fill('#prompt-text', text);
  await until(page, (t) => document.getElementById('generated').textContent === t && !document.querySelector('#tokens .chip.gen') &&
    document.querySelectorAll('#tokens .chip').length > 0, text, `the prompt ${JSON.stringify(text)}`);
}

async function step(page) {
  const before = await page.textContent('#gen-status');
  await page.click('#btn-gen-step');
  await until(page, (b) => document.getElementById('gen-status').textContent !== b, before, 'a Step to land');
}

// Waits until the next-token chart's bars differ from `before` (a slider's redraw, no Step).
async function chartChanged(page, before, what) {
  await until(page, (b) => JSON.stringify(window.Chart.getChart(document.getElementById('chart-next')).data.datasets
    .map((d) => d.data)) !== b, JSON.stringify(before.stages), `${what}: the next-token chart to change`);
  return nextChart(page);
}

async function shot(page, name, selector) {
  for (const [w, h] of [[1440, 900], [390, 844]]) {
    await page.setViewportSize({ width: w, height: h });
    await page.waitForTimeout(200);
    await page.locator(selector).screenshot({ path: join(OUT, `${name}-${w}.png`) });
  }
  await page.setViewportSize({ width: 1400, height: 1800 });
}

// ---------------------------------------------------------------- 1. the sampler, live

test('before any Step the next-token chart shows the draw to come; each slider redraws it at once, no token drawn; the tokens after are `generate --seed`\'s', async () => {
  const { page, problems } = await openPage(browser.context, `${served}#lang=en`);
  await modelViewDrawn(page);
  const prompt = 'Lily saw a';
  await setPrompt(page, prompt);
  let chart = await nextChart(page);
  assert.ok(chart.labels.length >= 10, `before any Step the chart has ${chart.labels.length} bars`);
  assert.match(chart.title, /next Step draws/);
  const raw = chart.stages[0].reduce((a, b) => a + b, 0);
  assert.ok(raw > 0.3 && raw <= 1.0001, `the raw stage's bars hold ${raw} of the probability`);
  const n = await tokenCount(page);
  // each setting moved: the bars change, the tokens do not
  const moves = [['#temperature', 1.2], ['#top-k', 3], ['#top-p', 0.3], ['#rep-penalty', 1.8]];
  for (const [selector, value] of moves) {
    await setInput(page, selector, value);
    chart = await chartChanged(page, chart, selector);
    assert.equal(await tokenCount(page), n, `${selector}: no token drawn`);
  }
  assert.equal(await page.isDisabled('#btn-gen-step'), false);
  // and back: the sampled tokens are generate --seed's with these settings
  const p = { temp: 0.8, topk: 20, topp: 0.9, rep: 1, seed: 3 };
  await setInput(page, '#gen-seed', p.seed, 'change');
  await until(page, () => /generated 0/.test(document.getElementById('gen-status').textContent), null, 'the seed to restart');
  for (const [selector, value] of [['#temperature', p.temp], ['#top-k', p.topk], ['#top-p', p.topp], ['#rep-penalty', p.rep]]) {
    await setInput(page, selector, value);
    await setInput(page, '#temperature', 1.9); // a move away and back between the draws
    await setInput(page, '#temperature', p.temp);
  }
  for (let i = 0; i < 6; i++) {
    await step(page);
    await setInput(page, '#top-k', 2); // moved between steps, and back
    await setInput(page, '#top-k', p.topk);
  }
  const want = generateIds(['--model', STORIES, '--tokenizer', TOK512, '--prompt', prompt, '--max-new-tokens', '6', ...sampler(p)]);
  assert.deepEqual(await genIds(page), want, 'the tokens are `generate --seed 3`\'s');
  chart = await nextChart(page);
  assert.match(chart.title, /next Step draws/, 'after steps the chart still shows the draw to come');
  assert.deepEqual(problems, []);
  await page.close();
});

test('temperature 0: the stages after the raw softmax are one-hot; the log axis shows the small ones', async () => {
  const { page, problems } = await openPage(browser.context, `${served}#lang=en`);
  await modelViewDrawn(page);
  await setPrompt(page, 'Once upon a time');
  await setInput(page, '#temperature', 0.5);
  let chart = await nextChart(page);
  await setInput(page, '#temperature', 0);
  chart = await chartChanged(page, chart, 'temperature 0');
  for (const bars of chart.stages.slice(1)) assert.deepEqual(bars.filter((v) => v !== 0), [1], `one-hot: ${bars}`);
  assert.equal(chart.stages[1].indexOf(1), 0, 'greedy\'s choice is the first bar');
  const nonzero = chart.stages[0].filter((v) => v > 0).length;
  assert.ok(nonzero > 1, 'the raw softmax keeps every token\'s probability');
  assert.equal(chart.yType, 'linear');
  await page.check('#next-log');
  await until(page, () => window.Chart.getChart(document.getElementById('chart-next')).scales.y.type === 'logarithmic', null, 'the log axis');
  const ticks = await page.evaluate(() => window.Chart.getChart(document.getElementById('chart-next')).scales.y.ticks.map((t) => t.label));
  assert.deepEqual(ticks, ['0.0001', '0.001', '0.01', '0.1', '1']);
  await setInput(page, '#temperature', 1);
  await page.waitForTimeout(300);
  await shot(page, 'sampler-next', '#gen-panel');
  assert.deepEqual(problems, []);
  await page.close();
});

// ---------------------------------------------------------------- 2. head roles that teach

test('head roles: a definition, an ideal pattern, the strongest heads on 0–1 with the threshold; a click opens one; "no head" said plainly with the Train tab; both languages', async () => {
  const { page, problems } = await openPage(browser.context, `${served}#lang=en`);
  await modelViewDrawn(page);
  const rank = () => page.$$eval('#role-rank button.role-head', (b) => b.map((x) => ({ layer: Number(x.dataset.layer),
    head: Number(x.dataset.head), score: Number(x.dataset.score), text: x.textContent })));
  const selected = () => page.$$eval('#chart-heads button.cell.selected', (b) => b.map((x) => [Number(x.dataset.layer), Number(x.dataset.head)]));
  // the head panel starts on the strongest previous-token head, not L0 H0
  let r = await rank();
  assert.ok(r.length >= 3, `${r.length} heads listed`);
  await until(page, ([l, h]) => document.getElementById('head-title').textContent === `Layer ${l}, head ${h}`, [r[0].layer, r[0].head],
    'the head panel to start on the strongest head');
  assert.deepEqual(await selected(), [[r[0].layer, r[0].head]]);
  for (let i = 0; i < r.length; i++) {
    assert.ok(r[i].score >= 0 && r[i].score <= 1, `score ${r[i].score} on 0–1`);
    if (i) assert.ok(r[i].score <= r[i - 1].score, 'strongest first');
  }
  assert.match(await page.textContent('#role-def'), /previous/i);
  assert.match(await page.textContent('#role-threshold'), /above 0\.50/);
  assert.ok(r[0].score > 0.5, `stories260K's best previous-token head scores ${r[0].score}`);
  assert.equal(await page.isHidden('#role-none'), true, 'a head passes: no "no head"');
  // the ideal pattern is drawn: the previous-token diagonal, bright below the main one
  const ideal = await page.evaluate(() => {
    const c = document.getElementById('role-ideal');
    const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
    const px = (x, y) => Array.from(d.subarray((y * c.width + x) * 4, (y * c.width + x) * 4 + 3));
    return { size: c.width, on: px(2, 3), off: px(3, 3) };
  });
  assert.equal(ideal.size, 9);
  assert.notDeepEqual(ideal.on, ideal.off, 'the cell below the diagonal differs from the diagonal');
  // a click opens that head
  await page.click(`#role-rank button.role-head >> nth=2`);
  await until(page, ([l, h]) => document.getElementById('head-title').textContent === `Layer ${l}, head ${h}`, [r[2].layer, r[2].head], 'the third head to open');
  // induction: no head passes, said plainly, the Train tab one click away; the strongest opens
  await page.selectOption('#role-select', 'induction');
  await until(page, () => !document.getElementById('role-none').hidden, null, 'the "no head" notice');
  r = await rank();
  const none = await page.textContent('#role-none-text');
  assert.ok(r[0].score < 0.5);
  assert.ok(none.includes(r[0].score.toFixed(2)) && none.includes(`layer ${r[0].layer} head ${r[0].head}`) && /Train tab/.test(none), none);
  await until(page, ([l, h]) => document.getElementById('head-title').textContent === `Layer ${l}, head ${h}`, [r[0].layer, r[0].head], 'the strongest induction head to open');
  await shot(page, 'roles-induction', '#roles-panel');
  // Chinese
  await page.selectOption('#lang', 'zh');
  await until(page, () => /归纳/.test(document.getElementById('role-def').textContent), null, 'the Chinese definition');
  assert.match(await page.textContent('#role-none-text'), /训练/);
  assert.match(await page.textContent('#btn-role-train'), /训练/);
  await page.click('#btn-role-train');
  await until(page, () => getComputedStyle(document.getElementById('view-train')).display !== 'none' &&
    document.getElementById('view-model').hidden, null, 'the Train tab to open');
  assert.deepEqual(problems, []);
  await page.close();
});

test('minimind-fortunes: no induction head either, said plainly; poem openings as examples', async () => {
  const { page, problems } = await openPage(browser.context, `${served}#lang=en&model=1`);
  await modelViewDrawn(page);
  await until(page, () => document.getElementById('model-name').textContent === 'minimind-fortunes', null, 'fortunes to load');
  const examples = await page.$$eval('#examples .example', (b) => b.map((x) => x.textContent));
  assert.ok(examples.includes('床前明月光，') && !examples.includes('你好，请介绍一下你自己。'), examples.join(' | '));
  await page.selectOption('#role-select', 'induction');
  await until(page, () => !document.getElementById('role-none').hidden, null, 'the "no head" notice');
  assert.match(await page.textContent('#role-none-text'), /no clear induction head/);
  assert.deepEqual(problems, []);
  await page.close();
});

// ---------------------------------------------------------------- 3. links, names, the end token

test('files from the picker: the shipped minimind-fortunes is recognised (its name, model=1); other files put model=file in the link, which asks for them', async () => {
  const { page, problems } = await openPage(browser.context, `${served}#lang=en`);
  await modelViewDrawn(page);
  await page.setInputFiles('#file-model', [join(FORTUNES, 'config.json'), join(FORTUNES, 'model.safetensors'), join(FORTUNES, 'tokenizer.json')]);
  await until(page, () => document.getElementById('model-name').textContent === 'minimind-fortunes' &&
    document.querySelectorAll('#chart-heads button.cell').length === 16, null, 'the files to be recognised as minimind-fortunes');
  await until(page, () => /[#&]model=1(&|$)/.test(location.hash), null, 'the link to say model=1');
  assert.equal(await page.$eval('#model-select', (s) => s.value), '1');
  assert.ok((await page.$$eval('#examples .example', (b) => b.map((x) => x.textContent))).includes('床前明月光，'));
  // a model that is not shipped
  await page.setInputFiles('#file-model', [join(DENSE, 'config.json'), join(DENSE, 'model.safetensors'), MM_TOKENIZER]);
  await until(page, () => document.querySelectorAll('#chart-heads button.cell').length === 8 && /[#&]model=file(&|$)/.test(location.hash),
    null, 'the other model to load, model=file in the link');
  assert.equal(await page.textContent('#model-name'), 'model.safetensors (your file)');
  await page.fill('#prompt-text', 'Hello');
  await until(page, () => /[#&]text=Hello(&|$)/.test(location.hash), null, 'the prompt in the link');
  const hash = await page.evaluate(() => location.hash);
  await page.close();
  const again = await openPage(browser.context, `${served}${hash}`);
  await until(again.page, () => !document.getElementById('model-message').hidden, null, 'the message asking for the files');
  assert.match(await again.page.textContent('#model-message'), /your own files.*pick the same files again/);
  await again.page.waitForTimeout(500);
  assert.equal(await tokenCount(again.page), 0, 'nothing replayed on another model');
  await again.page.setInputFiles('#file-model', [join(DENSE, 'config.json'), join(DENSE, 'model.safetensors'), MM_TOKENIZER]);
  await until(again.page, () => document.getElementById('generated').textContent === 'Hello' && document.getElementById('model-message').hidden,
    null, 'the link to replay on the files given again');
  assert.deepEqual([...problems, ...again.problems], []);
  await again.page.close();
});

test('the end token: said visibly; "go on past it" continues, and the tokens are `generate --ignore-eos`\'s; the link keeps it', async () => {
  const { page, problems } = await openPage(browser.context, `${served}#lang=en&model=1&temp=0`);
  await modelViewDrawn(page);
  await until(page, () => document.getElementById('model-name').textContent === 'minimind-fortunes', null, 'fortunes to load');
  const prompt = '人生'; // greedy: the end token after 2 tokens
  await setPrompt(page, prompt);
  for (let i = 0; i < 4 && !(await page.isDisabled('#btn-gen-step')); i++) await step(page);
  await until(page, () => !document.getElementById('gen-ended').hidden, null, 'the end-token notice');
  assert.match(await page.textContent('#gen-ended-text'), /chose its end token/);
  assert.equal(await page.isDisabled('#btn-gen-step'), true);
  // the last draw (greedy, temperature 0) is shown as it was drawn: the raw softmax, then one-hot
  // on the token drawn (the ▶ bar), as the chart showed it before the Step
  const last = await nextChart(page);
  assert.match(last.title, /last draw/);
  const drawn = last.labels.findIndex((l) => l.startsWith('▶'));
  assert.ok(drawn >= 0, `no drawn token among ${last.labels}`);
  for (const bars of last.stages.slice(1)) assert.deepEqual([bars[drawn], bars.filter((v) => v !== 0).length], [1, 1], `one-hot on the drawn token: ${bars}`);
  assert.ok(last.stages[0].filter((v) => v > 0).length > 1, 'the raw softmax keeps every token\'s probability');
  await shot(page, 'sampler-ended', '#gen-panel');
  await page.click('#btn-gen-past-eos');
  await until(page, () => !document.getElementById('btn-gen-step').disabled && document.getElementById('gen-ended').hidden, null, 'Step again');
  assert.equal(await page.isChecked('#ignore-eos'), true);
  while ((await genIds(page)).length < 10) await step(page);
  const want = generateIds(['--model', FORTUNES, '--prompt', prompt, '--max-new-tokens', '10', '--ignore-eos',
    ...sampler({ temp: 0, topk: 50, topp: 0.85, rep: 1, seed: 0 })]);
  assert.deepEqual(await genIds(page), want);
  assert.ok(want.includes(2), 'the end token is among them');
  await until(page, () => /[#&]eos=1(&|$)/.test(location.hash) && /[#&]gen=10(&|$)/.test(location.hash), null, 'the link to say eos=1');
  const hash = await page.evaluate(() => location.hash);
  const again = await openPage(browser.context, `${served}${hash}`);
  await until(again.page, () => /generated 10/.test(document.getElementById('gen-status').textContent), null, 'the link to replay');
  assert.deepEqual(await genIds(again.page), want);
  assert.deepEqual([...problems, ...again.problems], []);
  await page.close();
  await again.page.close();
});
