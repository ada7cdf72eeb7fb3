// model-view.test.mjs — the page's model view (tab "A real model") in headless Chromium, served
// and as dist/attnlab.html from file://, driven as a reader drives it: typing a prompt,
// stepping, opening a head and hovering it, loading files through the picker, switching the
// language, exporting, sharing the link, playing. Every expected value comes from the native CLI
// (build/attnlab tokenize, generate, logits, inspect, bench), never from the page: the chips are
// `tokenize`'s ids, the text and ids after steps are `generate`'s, the weights shown and
// exported are `logits`' over the chips' ids, a refused file is refused for the problem
// `inspect` finds in it. Load → first attention is printed, not asserted (timing targets belong
// to the bench).
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ROOT, run } from './lib/run.mjs';
import { readSafetensors } from './lib/safetensors.mjs';
import { modelViewDrawn, openPage, servedBrowser } from './lib/browser.mjs';
import { cutTokenizer, MM_TOKENIZER } from './lib/cut-tokenizer.mjs';

const CLI = join(ROOT, 'build', 'attnlab');
const STORIES = join(ROOT, 'models', 'stories260K', 'stories260K.bin');
const TOK512 = join(ROOT, 'models', 'stories260K', 'tok512.bin');
const MINIMIND = join(ROOT, 'tests', 'fixtures', 'minimind');
const DIST = pathToFileURL(join(ROOT, 'dist', 'attnlab.html')).href;

// The CLI is the native build, whose matrix kernel fuses each multiply-add; the page's
// WebAssembly does not (core/kernels/gemm.c). tests/model-lab.test.mjs measures their weights
// a few 1e-6 apart on stories260K and holds them to 1e-5 (WASM_VS_NATIVE); so are these.
const WASM_VS_NATIVE = 1e-5;

const work = mkdtempSync(join(tmpdir(), 'attnlab-model-view-'));
let browser, served;
servedBrowser((b, url) => { browser = b; served = url; });
after(() => {
  rmSync(work, { recursive: true, force: true });
});

// Both ways the page is opened: served, and the single file from file://.
const PAGES = [
  ['served page', (hash = '#lang=en') => `${served}${hash}`],
  ['dist/attnlab.html from file://', (hash = '#lang=en') => `${DIST}${hash}`],
];

// ---------------------------------------------------------------- the CLI's answers

function cli(args) {
  const r = run(CLI, args);
  assert.equal(r.status, 0, `attnlab ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}
const idsOf = (text) => text.trim().split(/\s+/).filter(Boolean).map(Number);
const tokenize = (tokenizer, text) => idsOf(cli(['tokenize', '--tokenizer', tokenizer, '--text', text]));

// generate's text (stdout without its trailing newline) and the ids it generated.
function generate(args) {
  const text = cli(['generate', ...args]).replace(/\n$/, '');
  const ids = idsOf(cli(['generate', ...args, '--print-ids']));
  return { text, ids };
}
const sampler = (p) => ['--temperature', String(p.temp), '--top-k', String(p.topk), '--top-p', String(p.topp),
  '--repetition-penalty', String(p.rep), '--seed', String(p.seed)];
const PAGE_DEFAULTS = { temp: 0, topk: 50, topp: 0.85, rep: 1, seed: 0 }; // state.js's defaults

let logitsFiles = 0;
function cliAttention(model, ids) {
  const out = join(work, `logits-${logitsFiles++}.safetensors`);
  cli(['logits', '--model', model, '--ids', ids.join(' '), '--out', out]);
  return readSafetensors(out).tensors;
}

// `attnlab inspect`'s hyper-parameters of a model (layers, kv heads, head_dim).
function inspect(model) {
  const text = cli(['inspect', '--model', model]);
  const num = (re) => Number(re.exec(text)?.[1]);
  return { layers: num(/layers (\d+)/), heads: num(/, heads (\d+)/), kvHeads: num(/kv heads (\d+)/), headDim: num(/head_dim (\d+)/) };
}

// MiniMind's tokenizer.json cut to its first `vocab` ids (tests/lib/cut-tokenizer.mjs), as a file.
function cutTokenizerFile(vocab, dir) {
  const path = join(dir, 'tokenizer.json');
  writeFileSync(path, cutTokenizer(vocab));
  return path;
}

// ---------------------------------------------------------------- the page

// What the model view shows now, for the checks and for the messages when a wait fails.
function shown(page) {
  return page.evaluate(() => {
    const $ = (id) => document.getElementById(id);
    return {
      ids: [...document.querySelectorAll('#tokens .chip')].map((c) => Number(c.dataset.id)),
      chips: [...document.querySelectorAll('#tokens .chip')].map((c) => c.textContent),
      genIds: [...document.querySelectorAll('#tokens .chip.gen')].map((c) => Number(c.dataset.id)),
      generated: $('generated').textContent,
      status: $('gen-status').textContent,
      name: $('model-name').textContent,
      facts: $('model-facts').textContent,
      message: $('model-message').hidden ? null : $('model-message').textContent,
      selected: [...document.querySelectorAll('#chart-heads button.cell.selected')].map((b) => [Number(b.dataset.layer), Number(b.dataset.head)]),
      play: $('btn-gen-play').textContent,
      hash: location.hash,
    };
  });
}

// Waits for fn(arg) to hold in the page; on a timeout (a hang guard, far above any wait the page
// makes) fails with what the page shows.
async function until(page, fn, arg, what, timeout = 60000) {
  try {
    await page.waitForFunction(fn, arg, { timeout });
  } catch (e) {
    if (!/Timeout/.test(e.message)) throw e;
    assert.fail(`${what}: not within ${timeout} ms; the page shows ${JSON.stringify(await shown(page))}`);
  }
}

async function open(url) {
  const opened = await openPage(browser.context, url);
  await modelViewDrawn(opened.page);
  return opened;
}

// An input's value set as a reader sets it, then the event the page listens for.
function setInput(page, selector, value, event = 'input') {
  return page.$eval(selector, (el, [v, ev]) => {
    el.value = v;
    el.dispatchEvent(new Event(ev, { bubbles: true }));
  }, [String(value), event]);
}

// Types a prompt (fill fires input; the page waits ~120 ms, then encodes it) and waits until the
// text so far is the prompt with nothing generated.
// (Typing the prompt already shown would only restart it ~120 ms later, after the test has
// gone on: left as it is.)
async function setPrompt(page, text) {
  const same = await page.evaluate((t) => document.getElementById('prompt-text').value === t &&
    document.getElementById('generated').textContent === t && !document.querySelector('#tokens .chip.gen'), text);
  if (same) return;
  await page.fill('#prompt-text', text);
  await until(page, (t) => document.getElementById('generated').textContent === t &&
    !document.querySelector('#tokens .chip.gen') && document.querySelectorAll('#tokens .chip').length > 0, text,
  `the prompt ${JSON.stringify(text)} to be encoded`);
}

// One Step, waited for: the status line changes when its snapshot is drawn.
async function step(page) {
  const before = await page.textContent('#gen-status');
  await page.click('#btn-gen-step');
  await until(page, (b) => document.getElementById('gen-status').textContent !== b, before, 'a Step to land');
}

async function steps(page, n) {
  for (let i = 0; i < n; i++) {
    if (await page.isDisabled('#btn-gen-step')) break; // the model ended its text
    await step(page);
  }
}

// Opens layer l head h from the grid and waits for the big heatmap to show it.
async function openHead(page, l, h) {
  await page.click(`#chart-heads button.cell[data-layer="${l}"][data-head="${h}"]`);
  await until(page, ([l2, h2]) => {
    const c = window.Chart.getChart(document.getElementById('chart-head'));
    const sel = document.querySelector('#chart-heads button.cell.selected');
    return c && sel && sel.dataset.layer === String(l2) && sel.dataset.head === String(h2) &&
      document.getElementById('head-title').textContent === `Layer ${l2}, head ${h2}`;
  }, [l, h], `layer ${l} head ${h} to open`);
}

// The matrix the big heatmap shows (what its hover reads).
function headMatrix(page) {
  return page.evaluate(() => {
    const c = window.Chart.getChart(document.getElementById('chart-head')).options.plugins.matrixImage.image.cells;
    return { rows: c.rows, cols: c.cols, values: Array.from(c.values) };
  });
}

// One head's [n, n] weights out of logits' attn.L [heads, n, n].
function headOf(tensors, l, h, n) {
  const t = tensors[`attn.${l}`];
  assert.deepEqual(t.shape.slice(1), [n, n], `attn.${l} shape`);
  return t.data.subarray(h * n * n, (h + 1) * n * n);
}

// The first value beyond tol, for the message; null if none.
function firstBeyond(got, want, tol) {
  let worst = 0;
  for (let i = 0; i < want.length; i++) worst = Math.max(worst, Math.abs(got[i] - want[i]));
  for (let i = 0; i < want.length; i++) {
    if (!(Math.abs(got[i] - want[i]) <= tol)) return { at: i, got: got[i], want: want[i], worst };
  }
  return null;
}

// A download started by clicking selector: its suggested name and bytes.
async function download(page, selector) {
  const [d] = await Promise.all([page.waitForEvent('download', { timeout: 60000 }), page.click(selector)]);
  const path = await d.path();
  return { name: d.suggestedFilename(), bytes: readFileSync(path) };
}

// RFC 4180: fields separated by commas, a field with a comma, quote or line break quoted, a
// quote inside doubled.
function parseCsv(text) {
  const rows = [];
  let row = [], field = '', quoted = false, i = 0;
  while (i < text.length) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') { field += '"'; i += 2; continue; }
      if (c === '"') { quoted = false; i++; continue; }
      field += c; i++; continue;
    }
    if (c === '"' && field === '') { quoted = true; i++; continue; }
    if (c === ',') { row.push(field); field = ''; i++; continue; }
    if (c === '\n' || c === '\r') {
      row.push(field); rows.push(row); row = []; field = '';
      i += c === '\r' && text[i + 1] === '\n' ? 2 : 1;
      continue;
    }
    field += c; i++;
  }
  if (field !== '' || row.length) { row.push(field); rows.push(row); }
  return rows;
}

const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

// ---------------------------------------------------------------- 1–3, 6, 7 on the shipped model

for (const [label, url] of PAGES) {
  test(`${label}: typed prompts become \`attnlab tokenize\`'s ids, BOS first`, async () => {
    const { page, problems } = await open(url());
    assert.equal(await page.$eval('#view-model', (v) => v.hidden), false, 'the model view is the default tab');
    assert.equal(await page.textContent('#model-name'), 'stories260K');
    for (const text of ['Lily and Tom went to the park.', 'The cat sat on the mat, and "Ben" laughed!', 'café 你好']) {
      await setPrompt(page, text);
      const want = tokenize(TOK512, text);
      assert.equal(want[0], 1, '`tokenize` puts BOS first');
      const s = await shown(page);
      assert.deepEqual(s.ids, want, JSON.stringify(text));
      assert.match(s.status, new RegExp(`^${want.length} tokens \\(prompt ${want.length}, generated 0`));
    }
    assert.deepEqual(problems, []);
    await page.close();
  });

  test(`${label}: 20 greedy Steps give \`attnlab generate --temperature 0\`'s text and ids`, async () => {
    const { page, problems } = await open(url());
    const prompt = 'Lily and Tom';
    await setPrompt(page, prompt);
    await setInput(page, '#temperature', 0);
    assert.equal(await page.textContent('#temperature-out'), '0');
    await steps(page, 20);
    const want = generate(['--model', STORIES, '--tokenizer', TOK512, '--prompt', prompt, '--temperature', '0', '--max-new-tokens', '20']);
    const s = await shown(page);
    assert.equal(s.generated, want.text);
    assert.deepEqual(s.genIds, want.ids, 'the generated chips\' ids');
    assert.deepEqual(s.ids.slice(0, s.ids.length - want.ids.length), tokenize(TOK512, prompt));
    assert.deepEqual(problems, []);
    await page.close();
  });

  test(`${label}: a head's hover tooltip shows \`attnlab logits\`' weight to 4 decimals`, async () => {
    const { page, problems } = await open(url());
    await setPrompt(page, 'Once upon a time, there was a dog named Max.');
    await steps(page, 3);
    const L = 2, H = 5;
    await openHead(page, L, H);
    const { ids, chips } = await shown(page);
    const n = ids.length;
    const want = headOf(cliAttention(STORIES, ids), L, H, n);
    await page.$eval('#chart-head', (c) => c.scrollIntoView({ block: 'center' }));
    const cells = [[n - 1, 0], [n - 1, n - 1], [n - 1, n >> 1], [n >> 1, 1], [1, 0], [n - 2, n - 3], [0, n - 1]];
    for (const [i, j] of cells) {
      const at = await page.evaluate(([qi, kj]) => {
        const el = document.getElementById('chart-head');
        const c = window.Chart.getChart(el), r = el.getBoundingClientRect();
        return { x: r.left + c.scales.x.getPixelForValue(kj), y: r.top + c.scales.y.getPixelForValue(qi) };
      }, [i, j]);
      await page.mouse.move(at.x, at.y);
      await page.waitForFunction(([qi, kj]) => {
        const t = document.getElementById('tip-head');
        return !t.hidden && t.textContent.startsWith(`query token ${qi} `) && t.textContent.includes(`key token ${kj} `);
      }, [i, j], { timeout: 30000 }).catch(() => {}); // then the tooltip's text is the failure's message
      const tip = await page.$eval('#tip-head', (t) => (t.hidden ? null : t.textContent));
      const m = /^query token (\d+) (".*"), key token (\d+) (".*"): (-?\d+\.\d{4})$/.exec(tip || '');
      assert.ok(m, `hovering query ${i} key ${j}: the tooltip reads ${JSON.stringify(tip)}`);
      assert.deepEqual([Number(m[1]), Number(m[3])], [i, j], `hovering query ${i} key ${j}: ${tip}`);
      assert.deepEqual([JSON.parse(m[2]), JSON.parse(m[4])], [chips[i], chips[j]], `the tooltip names the chips: ${tip}`);
      const w = want[i * n + j];
      // Printed to 4 decimals: within half a unit of the last place (and the wasm/native gap).
      assert.ok(Math.abs(Number(m[5]) - w) <= 0.5e-4 + WASM_VS_NATIVE, `layer ${L} head ${H} [${i}, ${j}]: the page says ${m[5]}, logits ${w}`);
      if (j > i) assert.equal(m[5], '0.0000', 'a key after the query has no weight');
    }
    assert.deepEqual(problems, []);
    await page.close();
  });

  test(`${label}: the language switch changes the words, not the tokens or the text`, async () => {
    const { page, problems } = await open(url());
    await setPrompt(page, 'The cat sat on the');
    await steps(page, 4);
    const before = await shown(page);
    const words = () => page.evaluate(() => ['tab-model', 'tab-layer', 'model-title', 'gen-title', 'btn-gen-step']
      .map((id) => document.getElementById(id).textContent));
    assert.deepEqual(await words(), ['A real model', 'One layer, step by step', 'Model', 'Generation, step by step', 'Step']);
    await page.selectOption('#lang', 'zh');
    await page.dispatchEvent('#lang', 'change');
    await until(page, () => document.getElementById('tab-model').textContent === '真实模型', null, 'the tabs in Chinese');
    assert.deepEqual((await words()).slice(0, 4), ['真实模型', '单层注意力，逐步', '模型', '逐步生成']);
    const after = await shown(page);
    assert.deepEqual(after.ids, before.ids);
    assert.deepEqual(after.chips, before.chips);
    assert.equal(after.generated, before.generated);
    assert.deepEqual(after.selected, before.selected);
    assert.match(after.status, /已生成 4/);
    const [[l, h]] = before.selected;
    assert.equal(await page.textContent('#head-title'), `第 ${l} 层，第 ${h} 个头`);
    await step(page); // and it still steps
    assert.equal((await shown(page)).ids.length, before.ids.length + 1);
    await until(page, () => /lang=zh/.test(location.hash), null, 'the hash to say lang=zh');
    assert.deepEqual(problems, []);
    await page.close();
  });

  test(`${label}: exports: a PNG, the open head's weights as CSV (\`attnlab logits\`'), one KV row per step`, async (t) => {
    const { page, problems } = await open(url());
    // A comma and quotes among the tokens: the CSV must still have one field per column.
    const prompt = 'Once upon a time, "Tom" said';
    await setPrompt(page, prompt);
    const n0 = (await shown(page)).ids.length;
    const stepsTaken = 5;
    await steps(page, stepsTaken);
    const L = 3, H = 2;
    await openHead(page, L, H);
    const { ids, chips } = await shown(page);
    const n = ids.length;
    assert.equal(n, n0 + stepsTaken);

    await t.test('next:png is a PNG', async () => {
      const png = await download(page, '[data-model-export="next:png"]');
      assert.equal(png.name, 'attnlab-next.png');
      assert.deepEqual([...png.bytes.subarray(0, 8)], PNG_SIGNATURE, 'the PNG signature');
      assert.equal(png.bytes.subarray(12, 16).toString('latin1'), 'IHDR');
      assert.ok(png.bytes.readUInt32BE(16) > 0 && png.bytes.readUInt32BE(20) > 0, 'IHDR width and height');
    });

    const shownMatrix = await headMatrix(page);
    const want = headOf(cliAttention(STORIES, ids), L, H, n);
    await t.test('the heatmap shows `logits`\' weights', () => {
      assert.deepEqual([shownMatrix.rows, shownMatrix.cols], [n, n]);
      const d = firstBeyond(shownMatrix.values, want, WASM_VS_NATIVE);
      console.log(`# layer ${L} head ${H} over ${n} tokens: largest gap between the page and \`logits\` ${firstBeyond(shownMatrix.values, want, -1)?.worst.toExponential(2)}`);
      assert.equal(d, null, `[${d?.at}]: page ${d?.got}, logits ${d?.want} (largest gap ${d?.worst})`);
    });

    await t.test('head:csv holds the matrix the heatmap shows, one RFC 4180 row per query', async () => {
      const head = await download(page, '[data-model-export="head:csv"]');
      assert.equal(head.name, 'attnlab-head.csv');
      const text = head.bytes.toString('utf8');
      // Each line read alone should be one row of n + 1 fields (no token here has a line break).
      const broken = text.split('\n').filter(Boolean).filter((line) => {
        const r = parseCsv(line);
        return r.length !== 1 || r[0].length !== n + 1;
      });
      assert.deepEqual(broken.map((l) => l.slice(0, 40)), [], `lines that are not one row of ${n + 1} fields (RFC 4180)`);
      const rows = parseCsv(text);
      assert.equal(rows.length, n + 1, 'a header and one row per query token');
      assert.deepEqual(rows[0], ['query\\key', ...Array.from({ length: n }, (_, j) => String(j))]);
      for (let i = 0; i < n; i++) {
        const r = rows[i + 1];
        assert.ok(r[0].startsWith(`${i} `), `row ${i} is labelled ${JSON.stringify(r[0])} (token ${JSON.stringify(chips[i])})`);
        const values = r.slice(1).map(Number);
        assert.deepEqual(values, shownMatrix.values.slice(i * n, (i + 1) * n), `row ${i} is not the matrix the heatmap shows`);
        const d = firstBeyond(values, want.subarray(i * n, (i + 1) * n), WASM_VS_NATIVE);
        assert.equal(d, null, `row ${i} key ${d?.at}: CSV ${d?.got}, logits ${d?.want} (largest gap ${d?.worst})`);
      }
    });

    await t.test('kvmodel:csv: the prompt\'s row and one per step, bytes from `inspect`, FLOPs as `bench` counts', async () => {
      const kv = await download(page, '[data-model-export="kvmodel:csv"]');
      const kvRows = parseCsv(kv.bytes.toString('utf8'));
      assert.equal(kvRows.length, 1 + 1 + stepsTaken, 'a header, the prompt\'s row, one row per step');
      const hp = inspect(STORIES);
      const flops = (len) => JSON.parse(cli(['bench', '--model', STORIES, '--seq', String(len), '--decode', '1', '--repeats', '1'])).prefill_flops;
      kvRows.slice(1).forEach((r, i) => {
        const len = n0 + i;
        assert.equal(r.length, 7, `KV row ${i}: ${r}`);
        assert.equal(Number(r[0]), len, `KV row ${i}: tokens in the cache`);
        assert.equal(Number(r[2]), hp.layers * 2 * len * hp.kvHeads * hp.headDim * 4, `KV row ${i}: bytes of ${hp.layers} layers' K and V`);
        assert.equal(Number(r[3]), hp.layers * 2 * len * hp.heads * hp.headDim * 4, `KV row ${i}: MHA bytes`);
      });
      assert.equal(Number(kvRows.at(-1)[6]), flops(n), 'the last step\'s FLOPs recomputing, as `bench` counts a prefill');
      assert.equal(Number(kvRows[1][6]), flops(n0), 'the prompt\'s FLOPs');
    });
    assert.deepEqual(problems, []);
    await page.close();
  });
}

// ---------------------------------------------------------------- 4, 5: the reader's own files

test('served page: MiniMind dense_f16 (config.json + model.safetensors + tokenizer.json) from the picker; a Chinese prompt is `tokenize`\'s ids', async () => {
  const { page, problems } = await open(served + '#lang=en');
  const dir = join(MINIMIND, 'dense_f16');
  await page.setInputFiles('#file-model', [join(dir, 'config.json'), join(dir, 'model.safetensors'), MM_TOKENIZER]);
  await until(page, () => document.getElementById('model-name').textContent === 'model.safetensors (your file)' &&
    document.querySelectorAll('#chart-heads button.cell').length === 2 * 4, null, 'the model to load');
  let s = await shown(page);
  assert.equal(s.message, null, 'no message');
  assert.match(s.facts, /^MiniMind safetensors: 2 layers, hidden 32/);
  const prompt = '你好，世界。今天天气很好';
  await setPrompt(page, prompt);
  s = await shown(page);
  assert.deepEqual(s.ids, tokenize(MM_TOKENIZER, prompt));
  assert.ok(s.ids.length > 0 && s.ids[0] !== 1, 'a tokenizer.json adds no BOS');
  // and greedy steps are `generate`'s on the folder
  await setInput(page, '#temperature', 0);
  await steps(page, 8);
  const want = generate(['--model', dir, '--tokenizer', MM_TOKENIZER, '--prompt', prompt, '--max-new-tokens', '8', ...sampler(PAGE_DEFAULTS)]);
  s = await shown(page);
  assert.deepEqual(s.genIds, want.ids);
  assert.deepEqual(problems, []);
  await page.close();
});

test('served page: a MiniMind .pth with a tokenizer.json from the picker: greedy Steps give `generate --ids`\' ids', async () => {
  const { page, problems } = await open(served + '#lang=en');
  const dir = mkdtempSync(join(work, 'pth-'));
  const model = join(MINIMIND, 'pth_dense_tied', 'model.pth');
  const tokenizer = cutTokenizerFile(512, dir);
  await page.setInputFiles('#file-model', [model, tokenizer]);
  await until(page, () => document.getElementById('model-name').textContent === 'model.pth (your file)' &&
    document.querySelectorAll('#tokens .chip').length > 0, null, 'the .pth to load');
  let s = await shown(page);
  assert.equal(s.message, null);
  assert.match(s.facts, /^MiniMind \.pth: /, 'the model facts say .pth');
  const prompt = 'Hello, world! 123';
  await setPrompt(page, prompt);
  s = await shown(page);
  const promptIds = tokenize(tokenizer, prompt);
  assert.deepEqual(s.ids, promptIds);
  await setInput(page, '#temperature', 0);
  await steps(page, 10);
  const want = idsOf(cli(['generate', '--model', model, '--ids', promptIds.join(' '), '--max-new-tokens', '10', '--print-ids', ...sampler(PAGE_DEFAULTS)]));
  s = await shown(page);
  assert.ok(want.length > 0);
  assert.deepEqual(s.genIds, want);
  assert.deepEqual(problems, []);
  await page.close();
});

test('served page: a MiniMind MoE model (top-2) from the picker: the routing chart shows `attnlab logits`\' experts and weights', async () => {
  const { page, problems } = await open(served + '#lang=en');
  const dir = mkdtempSync(join(work, 'moe-'));
  const src = join(MINIMIND, 'moe_top2_norm');
  const tokenizer = cutTokenizerFile(JSON.parse(readFileSync(join(src, 'config.json'), 'utf8')).vocab_size, dir);
  await page.setInputFiles('#file-model', [join(src, 'config.json'), join(src, 'model.safetensors'), tokenizer]);
  await until(page, () => document.getElementById('model-name').textContent === 'model.safetensors (your file)' &&
    !document.getElementById('moe-panel').hidden && window.Chart.getChart(document.getElementById('chart-moe')), null, 'the MoE model to load');
  await openHead(page, 0, 0); // the routing chart shows the open head's layer
  const s = await shown(page);
  // The routing chart's cells: token i's weight on expert e (0 where not chosen), layer 0.
  const cells = await page.evaluate(() => {
    const m = window.Chart.getChart(document.getElementById('chart-moe')).options.plugins.matrixImage.image.cells;
    return { rows: m.rows, cols: m.cols, values: Array.from(m.values) };
  });
  const out = join(dir, 'logits.safetensors');
  cli(['logits', '--model', src, '--ids', s.ids.join(' '), '--out', out]);
  const { tensors } = readSafetensors(out);
  const ids = tensors['route_ids.0'], w = tensors['route_weights.0'];
  const k = ids.shape[1];
  assert.equal(cells.rows, s.ids.length);
  for (let i = 0; i < cells.rows; i++) {
    for (let e = 0; e < cells.cols; e++) {
      let want = 0;
      for (let j = 0; j < k; j++) if (Number(ids.data[i * k + j]) === e) want = w.data[i * k + j];
      assert.ok(Math.abs(cells.values[i * cells.cols + e] - want) <= 1e-5, `token ${i} expert ${e}: ${cells.values[i * cells.cols + e]} vs ${want}`);
    }
  }
  assert.deepEqual(problems, []);
  await page.close();
});

// The second shipped model, trained here (models/minimind-fortunes): served beside the page,
// chosen in #model-select; a Chinese prompt is `tokenize`'s ids and greedy steps `generate`'s.
// The single file carries stories260K alone (its 2.5 MB).
test('served page: the shipped minimind-fortunes from #model-select: Chinese prompt ids and greedy steps as the CLI\'s', async () => {
  const { page, problems } = await open(served + '#lang=en');
  const options = await page.$$eval('#model-select option', (o) => o.map((x) => x.textContent));
  assert.deepEqual(options, ['stories260K', 'minimind-fortunes']);
  await page.selectOption('#model-select', '1');
  await until(page, () => document.getElementById('model-name').textContent === 'minimind-fortunes' &&
    document.querySelectorAll('#chart-heads button.cell').length === 4 * 4, null, 'minimind-fortunes to load');
  const model = join(ROOT, 'models', 'minimind-fortunes');
  const prompt = '天下';
  await setPrompt(page, prompt);
  let s = await shown(page);
  assert.deepEqual(s.ids, tokenize(MM_TOKENIZER, prompt));
  await setInput(page, '#temperature', 0);
  await steps(page, 6);
  s = await shown(page);
  const want = generate(['--model', model, '--prompt', prompt, '--max-new-tokens', '6', ...sampler(PAGE_DEFAULTS)]);
  assert.deepEqual(s.genIds, want.ids);
  assert.equal(want.ids.length, 6, `generate gave ${want.ids.length} ids`);
  assert.match(await page.evaluate(() => location.hash), /model=1/);
  assert.deepEqual(problems, []);
  await page.close();
  const single = await open(`${pathToFileURL(join(ROOT, 'dist', 'attnlab.html'))}#lang=en`);
  assert.deepEqual(await single.page.$$eval('#model-select option', (o) => o.map((x) => x.textContent)), ['stories260K']);
  await single.page.close();
});

// Each case writes its files into dir and returns them with the path the CLI is given for the
// same model; the page's message must name the problem the CLI finds in it.
const CORRUPT = [
  ['a truncated model.safetensors (with its config.json and tokenizer.json)', (dir) => {
    writeFileSync(join(dir, 'model.safetensors'), readFileSync(join(MINIMIND, 'dense_f16', 'model.safetensors')).subarray(0, 4000));
    writeFileSync(join(dir, 'config.json'), readFileSync(join(MINIMIND, 'dense_f16', 'config.json')));
    return { files: [join(dir, 'config.json'), join(dir, 'model.safetensors'), MM_TOKENIZER], cliModel: dir };
  }],
  ['random bytes named model.pth (with a tokenizer.json)', (dir) => {
    let x = 12345;
    writeFileSync(join(dir, 'model.pth'), Buffer.alloc(64 << 10).map(() => (x = (x * 1103515245 + 12345) >>> 0) >>> 24));
    return { files: [join(dir, 'model.pth'), MM_TOKENIZER], cliModel: join(dir, 'model.pth') };
  }],
  ['a truncated model.pth (with a tokenizer.json)', (dir) => {
    writeFileSync(join(dir, 'model.pth'), readFileSync(join(MINIMIND, 'pth_dense_tied', 'model.pth')).subarray(0, 5000));
    return { files: [join(dir, 'model.pth'), cutTokenizerFile(512, dir)], cliModel: join(dir, 'model.pth') };
  }],
];

// The problem `attnlab inspect` finds in a model it refuses: its message without its own prefix
// and the file's path (the page names the file its own way).
function cliRefusal(model) {
  const r = run(CLI, ['inspect', '--model', model]);
  assert.notEqual(r.status, 0, `attnlab inspect accepted ${model}`);
  const line = r.stderr.trim().replace(/^attnlab: /, '');
  const file = /^(\S+\/)?(model\.safetensors|model\.pth): /.exec(line);
  assert.ok(file, `attnlab inspect's message names no file: ${line}`);
  return line.slice(file[0].length);
}

for (const [what, make] of CORRUPT) {
  test(`served page: ${what} is refused, naming the problem \`attnlab inspect\` finds; stories260K stays and steps`, async () => {
    const { page, problems } = await open(served + '#lang=en');
    const prompt = 'Lily and Tom';
    await setPrompt(page, prompt);
    await steps(page, 2);
    const before = await shown(page);
    const dir = mkdtempSync(join(work, 'corrupt-'));
    const { files, cliModel } = make(dir);
    await page.setInputFiles('#file-model', files);
    await until(page, () => !document.getElementById('model-message').hidden, null, 'a message about the file');
    const s = await shown(page);
    assert.equal(s.name, 'stories260K', '#model-name still the old model');
    assert.deepEqual(s.ids, before.ids);
    assert.equal(s.generated, before.generated);
    await step(page);
    const want = generate(['--model', STORIES, '--tokenizer', TOK512, '--prompt', prompt, '--max-new-tokens', '3', ...sampler(PAGE_DEFAULTS)]);
    const after = await shown(page);
    assert.deepEqual(after.genIds, want.ids, 'the third Step is stories260K\'s');
    assert.equal(after.generated, want.text);
    assert.deepEqual(problems, []);
    const m = /^Could not load: (.+) \(the previous model stays\)$/.exec(s.message);
    assert.ok(m, `the message: ${s.message}`);
    const cliSays = cliRefusal(cliModel);
    assert.ok(m[1].includes(cliSays), `the page says ${JSON.stringify(m[1])}; \`attnlab inspect\` says ${JSON.stringify(cliSays)}`);
    await page.close();
  });
}

// ---------------------------------------------------------------- 8: the link

for (const [label, url] of PAGES) {
  test(`${label}: the hash holds prompt, sampler, steps and head; the link replays them (\`generate\`'s sampled text)`, async () => {
    const { page, problems } = await open(url());
    const prompt = 'Lily saw a'; // seeds 4, 5 and 6 and greedy give four different texts here
    const p = { temp: 0.7, topk: 20, topp: 0.85, rep: 1, seed: 5 };
    await setPrompt(page, prompt);
    await setInput(page, '#temperature', p.temp);
    await page.fill('#top-k', String(p.topk)); // fill fires input
    await setInput(page, '#gen-seed', p.seed, 'change');
    await steps(page, 6);
    await openHead(page, 1, 3);
    // The hash is written 150 ms after the page settles: wait for its last part.
    const parts = [`text=${encodeURIComponent(prompt)}`, 'gen=6', 'temp=0.7', 'topk=20', 'gseed=5', 'layer=1', 'mhead=3'];
    await until(page, () => /[#&]mhead=3(&|$)/.test(location.hash), null, 'the hash to name the open head');
    const s = await shown(page);
    const want = generate(['--model', STORIES, '--tokenizer', TOK512, '--prompt', prompt, '--max-new-tokens', '6', ...sampler(p)]);
    assert.equal(s.generated, want.text, 'sampled with seed 5, temperature 0.7, top-k 20: `generate`\'s text');
    assert.deepEqual(s.genIds, want.ids);
    for (const part of parts) {
      assert.ok(s.hash.includes(`&${part}&`) || s.hash.endsWith(`&${part}`), `the hash has ${part}: ${s.hash}`);
    }
    const controls = (pg) => pg.evaluate(() => ['temperature', 'top-k', 'top-p', 'rep-penalty', 'gen-seed', 'prompt-text']
      .map((id) => document.getElementById(id).value));
    const again = await open(url(s.hash));
    await until(again.page, () => /generated 6/.test(document.getElementById('gen-status').textContent), null, 'the link to replay 6 steps');
    const s2 = await shown(again.page);
    assert.deepEqual(s2.ids, s.ids, 'the same chips');
    assert.equal(s2.generated, s.generated, 'the same text');
    assert.deepEqual(s2.selected, [[1, 3]], 'the same head selected');
    assert.equal(await again.page.textContent('#head-title'), 'Layer 1, head 3');
    assert.deepEqual(await controls(again.page), ['0.7', '20', '0.85', '1', '5', prompt]);
    assert.deepEqual(await controls(again.page), await controls(page));
    assert.equal(await again.page.textContent('#temperature-out'), '0.7');
    assert.deepEqual([...problems, ...again.problems], []);
    await page.close();
    await again.page.close();
  });
}

// A link with a temperature so small that a logit divided by it leaves float's range (1e-40)
// replays greedy's tokens, and the next-token chart shows one-hot stages after the first, with no
// NaN in any bar.
test('served page: a link with temp=1e-40 replays greedy\'s tokens and draws one-hot stages', async () => {
  const { page, problems } = await open(`${served}#lang=en`);
  const prompt = 'Lily saw a';
  await setPrompt(page, prompt);
  await steps(page, 4);
  await page.waitForTimeout(300); // the hash is written 150 ms after the page settles
  const hash = (await shown(page)).hash;
  assert.match(hash, /&temp=0(&|$)/);
  const again = await open(`${served}${hash.replace(/&temp=0(&|$)/, '&temp=1e-40$1')}`);
  await until(again.page, () => /generated 4/.test(document.getElementById('gen-status').textContent), null, 'the link to replay 4 steps');
  const want = generate(['--model', STORIES, '--tokenizer', TOK512, '--prompt', prompt, '--max-new-tokens', '4', ...sampler(PAGE_DEFAULTS)]);
  const s = await shown(again.page);
  assert.deepEqual(s.genIds, want.ids, 'temperature 0\'s ids');
  assert.equal(s.generated, want.text);
  const bars = await again.page.evaluate(() => window.Chart.getChart(document.getElementById('chart-next')).data.datasets
    .map((d) => ({ label: d.label, data: d.data })));
  assert.equal(bars.length, 5, bars.map((b) => b.label).join(', '));
  for (const b of bars) assert.ok(b.data.every(Number.isFinite), `${b.label}: ${b.data}`);
  for (const b of bars.slice(1)) assert.deepEqual(b.data.filter((v) => v !== 0), [1], `${b.label}: ${b.data}`);
  assert.deepEqual([...problems, ...again.problems], []);
  await page.close();
  await again.page.close();
});

// ---------------------------------------------------------------- 9: Play

// (That the page answers while it plays, a page.evaluate round trip, is the bench's to time.)
test('served page: Play generates; Pause stops it; the tokens are `generate`\'s', async () => {
  const { page, problems } = await open(served + '#lang=en');
  const prompt = 'Once upon a time';
  await setPrompt(page, prompt);
  const n0 = (await shown(page)).ids.length;
  assert.equal(await page.textContent('#btn-gen-play'), 'Play');
  await page.click('#btn-gen-play');
  await until(page, () => document.getElementById('btn-gen-play').textContent === 'Pause', null, 'Play to read Pause');
  await until(page, (n) => document.querySelectorAll('#tokens .chip').length >= n + 5, n0, 'five tokens while playing');
  const playing = await page.textContent('#btn-gen-play');
  await page.click('#btn-gen-play');
  await until(page, () => document.getElementById('btn-gen-play').textContent === 'Play', null, 'Pause to stop');
  const stopped = await shown(page);
  await page.waitForTimeout(400);
  const later = await shown(page);
  assert.equal(playing, 'Pause', 'the button reads Pause while playing');
  assert.equal(later.ids.length, stopped.ids.length, 'no tokens after Pause');
  const n = stopped.genIds.length;
  assert.ok(n >= 5);
  const want = generate(['--model', STORIES, '--tokenizer', TOK512, '--prompt', prompt, '--max-new-tokens', String(n), ...sampler(PAGE_DEFAULTS)]);
  assert.deepEqual(stopped.genIds, want.ids, `the ${n} played tokens are \`generate\`'s`);
  assert.equal(stopped.generated, want.text);
  assert.deepEqual(problems, []);
  await page.close();
});

// ---------------------------------------------------------------- timing, printed

test('load → first attention, served and from file:// (printed, not asserted)', async () => {
  const seen = {};
  for (const [label, url] of PAGES) {
    seen[label] = [];
    for (let i = 0; i < 3; i++) {
      const { page, problems } = await open(url());
      const ms = Number(await page.evaluate(() => document.body.dataset.firstAttentionMs));
      assert.ok(Number.isFinite(ms) && ms > 0, `${label}: data-first-attention-ms is ${ms}`);
      seen[label].push(ms);
      assert.deepEqual(problems, []);
      await page.close();
    }
  }
  for (const [label, list] of Object.entries(seen)) console.log(`# load → first attention, ${label}: ${list.map((x) => x.toFixed(0)).join(', ')} ms`);
});
