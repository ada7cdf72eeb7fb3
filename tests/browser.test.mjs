// browser.test.mjs — the page in headless Chromium: the served page and the single-file
// dist/attnlab.html (from file://) load with no console errors and nothing from the network;
// all four charts draw data; Step grows the KV chart and the mask by one token; heads / KV
// heads update the GQA map; the language switch changes the text; the hash round-trips. A
// screenshot goes to tests/out/ for people to look at.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ROOT } from './lib/run.mjs';
import { largestLayerLab, layerDrawn, openPage, showLayerLab, servedBrowser } from './lib/browser.mjs';

let browser, served;
servedBrowser((b, url) => { browser = b; served = url; });

// What each chart currently shows, read from Chart.js and the heatmap plugin.
function chartState(page) {
  return page.evaluate(() => {
    const get = (id) => window.Chart.getChart(document.getElementById(id));
    const img = (id) => get(id).options.plugins.matrixImage;
    // A chart has drawn data if its canvas holds more than one colour.
    const colours = (id) => {
      const c = document.getElementById(id);
      const copy = document.createElement('canvas');
      copy.width = c.width;
      copy.height = c.height;
      const ctx = copy.getContext('2d', { willReadFrequently: true });
      ctx.drawImage(c, 0, 0);
      const d = ctx.getImageData(0, 0, c.width, c.height).data;
      const seen = new Set();
      for (let i = 0; i < d.length; i += 4 * 97) seen.add(`${d[i]},${d[i + 1]},${d[i + 2]}`);
      return seen.size;
    };
    return {
      maskRows: img('chart-mask').rows,
      attnRows: img('chart-attn').rows,
      ropeRows: img('chart-rope').rows,
      ropeNewest: img('chart-rope').highlightRow,
      attnNewest: img('chart-attn').highlightRow,
      kvPoints: get('chart-kv').data.datasets[0].data.length,
      kvLast: get('chart-kv').data.datasets[0].data.at(-1).y,
      colours: Object.fromEntries(['chart-mask', 'chart-rope', 'chart-attn', 'chart-kv'].map((id) => [id, colours(id)])),
      gqa: [...document.querySelectorAll('#gqa-map tr')].slice(1).map((r) => r.cells[1].textContent),
      title: document.querySelector('h1').textContent,
      checks: [...document.querySelectorAll('#verify tbody tr')].map((r) => r.className),
      hash: location.hash,
    };
  });
}

for (const [label, url] of [['served page', () => `${served}#tab=layer&lang=en`], ['dist/attnlab.html from file://', () => `${pathToFileURL(join(ROOT, 'dist', 'attnlab.html'))}#tab=layer&lang=en`]]) {
  test(`${label}: loads cleanly, draws four charts, steps, maps GQA, switches language, keeps the hash`, async () => {
    const { page, problems } = await openPage(browser.context, url());
    let s = await chartState(page);
    assert.equal(s.maskRows, 6, 'the default prompt of 6 tokens is prefilled');
    assert.equal(s.attnRows, 6);
    for (const [id, n] of Object.entries(s.colours)) assert.ok(n >= 3, `${id} looks blank (${n} colours)`);
    assert.deepEqual(s.checks, Array(7).fill('pass'));

    await page.click('#btn-step');
    await layerDrawn(page);
    const after1 = await chartState(page);
    assert.equal(after1.maskRows, s.maskRows + 1, 'Step adds a row to the mask');
    assert.equal(after1.kvPoints, s.kvPoints + 1, 'Step grows the KV chart by one token');
    assert.ok(after1.kvLast > s.kvLast);
    assert.equal(after1.ropeNewest, s.ropeNewest + 1, 'Step moves the RoPE chart to the new position');
    assert.equal(after1.attnNewest, after1.maskRows - 1, 'Step adds the new query row to the attention chart');
    await page.keyboard.press('ArrowRight');
    await layerDrawn(page);
    assert.equal((await chartState(page)).maskRows, s.maskRows + 2, 'the arrow key steps too');

    await page.fill('#heads', '8');
    await page.dispatchEvent('#heads', 'change');
    await page.selectOption('#kv', '2');
    await page.dispatchEvent('#kv', 'change');
    await layerDrawn(page);
    s = await chartState(page);
    assert.deepEqual(s.gqa, ['h0 h1 h2 h3', 'h4 h5 h6 h7']);
    const kvOptions = await page.$$eval('#kv option', (o) => o.map((x) => x.value));
    assert.deepEqual(kvOptions, ['1', '2', '4', '8'], 'only divisors of heads are offered');

    const english = s.title;
    await page.selectOption('#lang', 'zh');
    await page.dispatchEvent('#lang', 'change');
    s = await chartState(page);
    assert.notEqual(s.title, english);
    assert.match(s.title, /看见注意力/);

    // The hash holds the whole state (written once the page settles): reopening it shows the
    // same view.
    await page.waitForFunction(() => /heads=8/.test(location.hash) && /lang=zh/.test(location.hash));
    s = await chartState(page);
    const hash = s.hash;
    assert.match(hash, /heads=8/);
    assert.match(hash, /kv=2/);
    assert.match(hash, /lang=zh/);
    const again = await openPage(browser.context, url().replace(/#.*$/, '') + hash);
    const s2 = await chartState(again.page);
    assert.equal(s2.hash, hash);
    assert.deepEqual(s2.gqa, s.gqa);
    assert.equal(s2.maskRows, s.maskRows);
    assert.equal(s2.title, s.title);

    if (label === 'served page') {
      mkdirSync(join(ROOT, 'tests', 'out'), { recursive: true });
      await page.screenshot({ path: join(ROOT, 'tests', 'out', 'page.png'), fullPage: true });
    }
    assert.deepEqual([...problems, ...again.problems], []);
    await page.close();
    await again.page.close();
  });
}

test('walkthrough shows each example\'s code and the CLI demo\'s numbers for the page\'s seed, on its panel', async () => {
  const { page, problems } = await openPage(browser.context, `${served}#lang=en&seed=7`);
  const first = await page.textContent('#walk-text');
  assert.match(first, /input_ids/);
  assert.doesNotMatch(first, /={70}/, 'the header is the title, not part of the numbers');
  assert.match(await page.textContent('#walk-title'), /^02 · 1\/3 · Example 1: Token Embedding/);
  assert.match(await page.textContent('#walk-code'), /nn\.init\.xavier_uniform_\(embedding\.weight\)/);
  assert.match(await page.textContent('#walk-code'), /torch\.manual_seed\(7\)/, 'the code seeds as the run does');
  assert.match(await page.textContent('#walk-command'), /attnlab demo basic --seed 7 --lang en/);
  for (let i = 0; i < 5; i++) await page.click('#walk-next');
  assert.match(await page.textContent('#walk-title'), /^03 · 3\/7 · Example 3: RoPE rotary position embedding/);
  assert.match(await page.textContent('#walk-code'), /v_test = torch\.randn\(1, 1, n_kv_heads, head_dim\)/);
  assert.deepEqual(await page.$$eval('.panel.highlight', (p) => p.map((x) => x.id)), ['rope-panel']);
  await page.click('#walk-next');
  assert.deepEqual(await page.$$eval('.panel.highlight', (p) => p.map((x) => x.id)), ['mask-panel']);
  assert.deepEqual(problems, []);
  await page.close();
});

// The RoPE relative-distance curve is drawn for the tutorial's own test vector: at the
// tutorial's configuration (the page's defaults) its point at distance 1 is the <v(0), v(1)>
// that example 3 of 03-attention-demo.py prints in the walkthrough, for any seed.
test('the RoPE dot-product curve uses the tutorial\'s v_test', async () => {
  for (const seed of [42, 1234]) {
    const { page, problems } = await openPage(browser.context, `${served}#lang=en&seed=${seed}&walk=5`);
    const printed = /<v\(0\), v\(1\)> = (\S+)/.exec(await page.textContent('#walk-text'));
    assert.ok(printed, 'the walkthrough shows example 3 of the attention demo');
    const dot1 = await page.evaluate(() => window.Chart.getChart(document.getElementById('chart-rope-rel')).data.datasets[0].data[1].y);
    assert.equal(dot1.toFixed(6), printed[1]);
    assert.deepEqual(problems, []);
    await page.close();
  }
});

// A value below a field's minimum is reported against the lower limit, one above the maximum
// against the upper limit, in both languages.
test('a value below the page\'s range is reported as below its lower limit', async () => {
  const cases = [
    ['zh', /随机种子“-5”低于本页的下限 0/, /上限 0/],
    ['en', /seed "-5" is below this page's lower limit of 0/, /upper limit of 0/],
  ];
  for (const [lang, says, never] of cases) {
    const { page, problems } = await openPage(browser.context, `${served}#lang=${lang}&seed=-5&prompt=9999`);
    const message = await page.textContent('#message');
    assert.match(message, says);
    assert.doesNotMatch(message, never);
    assert.match(message, lang === 'zh' ? /提示长度“9999”超出本页的上限 512/ : /prompt length "9999" is beyond this page's upper limit of 512/);
    assert.deepEqual(problems, []);
    await page.close();
  }
});

// Hostile links: huge, negative, NaN, markup and very long values, broken encodings, unknown
// keys. The page must come up working, show what it corrected, run no injected code and log
// no uncaught errors.
const HOSTILE = [
  'prompt=99999999999999999999999&steps=-5&seed=-1',
  'hd=NaN&base=Infinity&heads=0&kv=99',
  'lang=<img src=x onerror="window.__pwned=1">&seed=<script>window.__pwned=1</script>',
  `seed=${'9'.repeat(10000)}`,
  `x=${'A'.repeat(12000)}`,
  'prompt=%E0%A4%A&hidden=1e400&at=77777',
  'heads=7&kv=3&head=99&pair=-3&hd=3',
  '__proto__=1&constructor=2&toString=3&hasOwnProperty=4',
];
for (const [i, hash] of HOSTILE.entries()) {
  test(`hostile link ${i + 1} is corrected and the page still works`, async () => {
    const { page, problems } = await openPage(browser.context, `${served}#${hash}`);
    await showLayerLab(page); // a link the page drops whole opens the model view
    const s = await chartState(page);
    assert.ok(s.maskRows >= 1, 'the mask chart has rows');
    assert.ok(s.colours['chart-attn'] >= 2, 'attention chart drawn');
    assert.equal(await page.evaluate(() => window.__pwned), undefined, 'injected code ran');
    const message = await page.textContent('#message');
    assert.ok(message.length > 0 && !(await page.$eval('#message', (m) => m.hidden)), 'no visible message about the corrections');
    assert.ok(message.length < 2000, 'the message repeats the hostile input at length');
    if (await page.isEnabled('#btn-step')) await page.click('#btn-step'); // disabled with no decode steps
    assert.deepEqual(problems, []);
    await page.close();
  });
}

// The page's largest settings, from its own limits (web/ui/state.js), must be ones it can serve:
// every decode step run to the last token, a Step that adds its row, language switches that
// take, Pause that stops the run. (How long each takes is the bench's: tests/bench/run.mjs.)
test('at its largest settings the page loads every step, steps, switches language and pauses', async () => {
  const r = await largestLayerLab(browser.context, served);
  assert.equal(r.shown.loaded, r.prompt + r.steps - 1, 'opened at the last decode step');
  assert.equal(r.shown.stepped, r.prompt + r.steps, 'Step adds the last row');
  assert.deepEqual(r.shown.langs, ['zh-CN', 'en', 'zh-CN'], 'the language follows each switch');
  assert.ok(r.shown.paused >= r.prompt + 3 && r.shown.paused < r.prompt + r.steps, `paused at ${r.shown.paused} rows`);
  assert.equal(r.shown.later, r.shown.paused, 'a step ran after Pause');
  assert.deepEqual(r.problems, []);
});

test('the Content-Security-Policy blocks inline scripts on both pages', async () => {
  for (const url of [`${served}#lang=en`, `${pathToFileURL(join(ROOT, 'dist', 'attnlab.html'))}#lang=en`]) {
    const { page } = await openPage(browser.context, url);
    const blocked = await page.evaluate(() => new Promise((resolve) => {
      document.addEventListener('securitypolicyviolation', (e) => resolve(e.violatedDirective), { once: true });
      const s = document.createElement('script');
      s.textContent = 'window.__inline = 1';
      document.body.appendChild(s);
      setTimeout(() => resolve(window.__inline ? 'ran' : 'no event'), 10000); // a hang guard: the event comes at once
    }));
    assert.match(blocked, /script-src/);
    await page.close();
  }
});

// A seed change repaints the attention heatmap without a Chart.js update (same axes): the hover
// must then read the new weights. The expected value comes from a second instance of the core
// in the page, built from the configuration in the URL.
test('served page: after a seed change the attention hover shows the new weights', async () => {
  const { page, problems } = await openPage(browser.context, `${served}#lang=en&prompt=8&steps=0&seed=3`);
  const hoverLastRowFirstKey = async () => {
    await page.locator('#chart-attn').scrollIntoViewIfNeeded();
    const at = await page.evaluate(() => {
      const chart = window.Chart.getChart(document.getElementById('chart-attn'));
      const box = chart.canvas.getBoundingClientRect();
      const rows = chart.options.plugins.matrixImage.rows;
      return { x: box.left + chart.scales.x.getPixelForValue(0), y: box.top + chart.scales.y.getPixelForValue(rows - 1) };
    });
    await page.mouse.move(at.x, at.y);
    await page.waitForFunction(() => !document.getElementById('tip-attn').hidden);
    const text = await page.textContent('#tip-attn');
    await page.mouse.move(1, 1);
    return text;
  };
  const expected = () => page.evaluate(async () => {
    const { state } = window.attnlab.link.parseHash(location.hash);
    const bytes = new Uint8Array(await (await fetch('gen/attnlab.wasm')).arrayBuffer());
    const core = await window.attnlab.api.load({ wasmBinary: bytes });
    const s = core.createSession({ hidden: state.hidden, heads: state.heads, kvHeads: state.kv, headDim: state.hd,
      ropeBase: state.base, qkNorm: !!state.qk, seed: state.seed, promptLen: state.prompt, decodeSteps: state.steps });
    try {
      s.prefill();
      const w = s.attention(state.head);
      return w[(state.prompt - 1) * state.prompt].toPrecision(6);
    } finally {
      s.free();
    }
  });
  const before = await hoverLastRowFirstKey();
  await page.waitForFunction(() => /seed=3/.test(location.hash));
  assert.ok(before.endsWith(`: ${await expected()}`), before);
  await page.fill('#seed', '4');
  await page.dispatchEvent('#seed', 'change');
  await page.waitForFunction(() => /seed=4/.test(location.hash));
  const after = await hoverLastRowFirstKey();
  assert.notEqual(after, before);
  assert.ok(after.endsWith(`: ${await expected()}`), after);
  assert.deepEqual(problems, []);
  await page.close();
});

// The CSV export of the RoPE chart holds the angles the core computes for the page's state
// (the export computes them when asked, not on every redraw).
test('served page: the RoPE CSV export holds the core\'s angles', async () => {
  const { page, problems } = await openPage(browser.context, `${served}#lang=en&prompt=5&steps=2&hd=8&base=500&wrap=1`);
  const [download] = await Promise.all([page.waitForEvent('download'), page.click('[data-export="rope:csv"]')]);
  const { readFile } = await import('node:fs/promises');
  const lines = (await readFile(await download.path(), 'utf8')).trim().split('\n');
  const want = await page.evaluate(async () => {
    const { state } = window.attnlab.link.parseHash(location.hash);
    const bytes = new Uint8Array(await (await fetch('gen/attnlab.wasm')).arrayBuffer());
    const core = await window.attnlab.api.load({ wasmBinary: bytes });
    const total = state.prompt + state.steps;
    return { total, pairs: state.hd / 2, angles: Array.from(core.ropeAngles(total, state.hd, state.base, !!state.wrap)).map(String) };
  });
  assert.equal(download.suggestedFilename(), 'attnlab-rope.csv');
  assert.equal(lines.length, want.total + 1, 'a header and one row per position');
  assert.deepEqual(lines[0].split(',').slice(1), Array.from({ length: want.pairs }, (_, j) => String(j)));
  const cells = lines.slice(1).flatMap((l) => l.split(',').slice(1));
  assert.deepEqual(cells, want.angles);
  assert.deepEqual(problems, []);
  await page.close();
});

test('served page: the layer view\'s KV CSV export holds the core\'s rows, in the model view\'s columns and the page\'s language', async () => {
  for (const lang of ['en', 'zh']) {
    const { page, problems } = await openPage(browser.context, `${served}#tab=layer&lang=${lang}&prompt=5&steps=3&heads=4&kv=2&hd=8`);
    await showLayerLab(page);
    await page.click('#btn-step');
    await layerDrawn(page);
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('[data-export="kv:csv"]')]);
    const { readFile } = await import('node:fs/promises');
    const lines = (await readFile(await download.path(), 'utf8')).trim().split('\n');
    const want = await page.evaluate(async (language) => {
      const { state } = window.attnlab.link.parseHash(location.hash);
      const bytes = new Uint8Array(await (await fetch('gen/attnlab.wasm')).arrayBuffer());
      const core = await window.attnlab.api.load({ wasmBinary: bytes });
      const cfg = { hidden: state.hidden, heads: state.heads, kvHeads: state.kv, headDim: state.hd, ropeBase: state.base,
        qkNorm: !!state.qk, seed: state.seed, promptLen: state.prompt, decodeSteps: state.steps };
      const { STRINGS } = await import('./ui/i18n.js');
      const t = STRINGS[language].kvChart;
      return { rows: core.kvGrowth(cfg, state.prompt, 1).map((r) => [r.len, r.bytes, r.bytes_mha, r.bytes_mqa, r.flops_cached, r.flops_uncached].map(String)),
        header: [t.tokens, t.phase, ...t.csvBytes, ...t.csvFlops] };
    }, lang);
    assert.equal(download.suggestedFilename(), 'attnlab-kv.csv');
    assert.deepEqual(lines[0].split(','), want.header, `${lang}: the model view's columns, named in the page's language`);
    assert.equal(lines.length, 3, 'a header, the prefill and the one step');
    assert.deepEqual(lines.slice(1).map((l) => { const c = l.split(','); return [c[0], ...c.slice(2)]; }), want.rows);
    assert.deepEqual(problems, []);
    await page.close();
  }
});
