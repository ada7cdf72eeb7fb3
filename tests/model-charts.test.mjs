// model-charts.test.mjs — the model view's chart modules (web/model/*-chart.js, head-lines.js,
// and the KV-cache chart both views share, web/charts/kv.js) from small hand-made data: the configs hold exactly the given numbers, every label exists in
// both languages (and differs between them), the drawn token and the current row are marked,
// csv() gives the same numbers back; the two canvas drawings run against a fake 2-D context
// that records its calls (which dimensions an arc joins, which lines are left out).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { ROOT } from './lib/run.mjs';
import { fakeCanvas, manyTokenLines } from './lib/fake-canvas.mjs';
import { loadCore } from './lib/wasm.mjs';

const Next = await import('../web/model/next-chart.js');
const Format = await import('../web/ui/format.js');
const Kv = await import('../web/charts/kv.js');
const Rope = await import('../web/model/rope-model-chart.js');
const Lines = await import('../web/model/head-lines.js');
const Routing = await import('../web/model/routing-chart.js');
const Heat = await import('../web/ui/heatmap.js');
const { STRINGS } = await import('../web/ui/i18n.js');

const LANGS = ['en', 'zh'];
const core = await loadCore(); // the rules the charts show (KV sharing, RoPE pairs) are the core's

// Every string a config shows (titles, legends, axis titles, labels), callbacks left out.
function strings(config) {
  const out = [];
  const walk = (v) => {
    if (typeof v === 'string') out.push(v);
    else if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === 'object' && !ArrayBuffer.isView(v)) Object.values(v).forEach(walk);
  };
  walk(config.options.plugins.title);
  walk(config.data.datasets.map((s) => s.label));
  walk(config.data.labels);
  walk(Object.values(config.options.scales).map((s) => s.title));
  return out;
}

// Both languages' configs: no "undefined" anywhere (a missing key), the words differ.
function checkLanguages(make) {
  const [en, zh] = LANGS.map((lang) => strings(make(lang)).join(' | '));
  for (const text of [en, zh]) {
    assert.doesNotMatch(text, /undefined|NaN|\[object/, text);
    assert.ok(text.length > 0);
  }
  assert.notEqual(en, zh);
  assert.match(zh, /[\u4e00-\u9fff]/, 'the Chinese labels hold Chinese');
}

// A chart's group of the page's strings (ui/i18n.js) holds the same keys in both languages.
function checkDictionaries(group) {
  assert.ok(STRINGS.en[group] && STRINGS.zh[group], `no strings group '${group}'`);
  assert.deepEqual(Object.keys(STRINGS.zh[group]).sort(), Object.keys(STRINGS.en[group]).sort());
}

// CSV text to rows of cells (quoted cells with commas, quotes and line breaks included).
function parseCsv(text) {
  const rows = [];
  let row = [], cell = '', quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') { cell += '"'; i++; } else if (c === '"') quoted = false; else cell += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') { row.push(cell); cell = ''; } else if (c === '\n') { row.push(cell); rows.push(row); row = []; cell = ''; } else cell += c;
  }
  assert.equal(cell + row.length, '0', 'the CSV ends with a line break');
  return rows;
}

// ------------------------------------------------------------------ next token
const VOCAB = 10;
const stages = new Float32Array(5 * VOCAB);
for (let i = 0; i < stages.length; i++) stages[i] = ((i * 37) % 101) / 101; // distinct values
const nextData = (lang) => ({ ids: new Int32Array([7, 2, 4]), labels: ['Lily', ' the', ''], stages, vocab: VOCAB, chosen: 4, lang });

test('next token: five stage datasets holding exactly the given probabilities', () => {
  const c = Next.nextConfig(nextData('en'));
  assert.equal(c.type, 'bar');
  assert.equal(c.data.datasets.length, 5);
  c.data.datasets.forEach((s, stage) => {
    assert.deepEqual(s.data, [7, 2, 4].map((id) => stages[stage * VOCAB + id]));
  });
  assert.equal(c.options.animation, false);
  assert.equal(c.options.maintainAspectRatio, false);
  assert.equal(c.options.scales.y.min, 0);
  assert.equal(c.options.scales.y.max, 1);
});

test('next token: labels quote the text, show whitespace and fall back to the id; the drawn one is marked', () => {
  const c = Next.nextConfig(nextData('en'));
  assert.deepEqual(c.data.labels, ['"Lily" (#7)', '"␣the" (#2)', '▶ #4']);
  assert.equal(Format.visibleText('a b\nc\td'), 'a␣b⏎c⇥d');
  // the drawn token's tick bold and dark, its bars with a border; the others not
  const scale = c.options.scales.x.ticks;
  assert.equal(scale.font({ tick: { value: 2 } }).weight, 'bold');
  assert.equal(scale.font({ tick: { value: 0 } }).weight, 'normal');
  assert.notEqual(scale.color({ tick: { value: 2 } }), scale.color({ tick: { value: 1 } }));
  for (const s of c.data.datasets) {
    assert.deepEqual(s.borderWidth.map((w) => w > 0), [false, false, true]);
  }
  // nothing drawn yet: no mark
  const none = Next.nextConfig({ ...nextData('en'), chosen: -1 });
  assert.ok(none.data.labels.every((l) => !l.startsWith('▶')));
  assert.ok(none.data.datasets.every((s) => s.borderWidth.every((w) => w === 0)));
});

test('next token: the tooltip names the stage and the token, probability to 4 decimals', () => {
  const c = Next.nextConfig(nextData('en'));
  const cb = c.options.plugins.tooltip.callbacks;
  const item = { dataIndex: 1, dataset: c.data.datasets[3], raw: c.data.datasets[3].data[1] };
  assert.equal(cb.title([item]), '"␣the" (#2)');
  assert.equal(cb.label(item), `after top-k: ${stages[3 * VOCAB + 2].toFixed(4)}`);
});

test('next token: both languages, and csv() gives the numbers back', () => {
  checkDictionaries('nextChart');
  checkLanguages((lang) => Next.nextConfig(nextData(lang)));
  for (const lang of LANGS) {
    const rows = parseCsv(Next.csv(nextData(lang), lang));
    assert.equal(rows.length, 4);
    assert.equal(rows[0].length, 8);
    assert.doesNotMatch(rows[0].join(), /undefined/);
    [7, 2, 4].forEach((id, i) => {
      const r = rows[i + 1];
      assert.equal(r[0], nextData(lang).labels[i]);
      assert.equal(Number(r[1]), id);
      for (let s = 0; s < 5; s++) assert.equal(Number(r[2 + s]), stages[s * VOCAB + id]);
      assert.equal(r[7], id === 4 ? '1' : '0');
    });
  }
  assert.notEqual(Next.csv(nextData('en'), 'en').split('\n')[0], Next.csv(nextData('zh'), 'zh').split('\n')[0]);
  // a text with a comma, a quote and a line break stays one cell
  const odd = { ...nextData('en'), labels: ['a,"b"\n', '', ''] };
  assert.equal(parseCsv(Next.csv(odd, 'en'))[1][0], 'a,"b"\n');
});

test('next token: ids outside the vocabulary and short stages are refused', () => {
  assert.throws(() => Next.nextConfig({ ...nextData('en'), ids: new Int32Array([10]) , labels: [''] }), /outside the vocabulary/);
  assert.throws(() => Next.nextConfig({ ...nextData('en'), stages: new Float32Array(5) }), /stages holds 5/);
});

// ------------------------------------------------------------------ KV cache
const kvRows = [
  { len: 5, bytes: 2560, bytes_mha: 10240, bytes_mqa: 1280, flops_cached: 51200, flops_uncached: 51200 },
  { len: 6, bytes: 3072, bytes_mha: 12288, bytes_mqa: 1536, flops_cached: 12288, flops_uncached: 73728 },
  { len: 7, bytes: 3584, bytes_mha: 14336, bytes_mqa: 1792, flops_cached: 14336, flops_uncached: 100352 },
];
const kvData = (lang) => ({ rows: kvRows, scope: 'model', nLayers: 2, nHeads: 8, nKvHeads: 2, sharing: core.kvSharing(8, 2), current: 1, lang });

test('KV bytes: three series with exactly the rows\' bytes; the current row marked; row 0 the prompt', () => {
  const c = Kv.kvBytesConfig(kvData('en'));
  assert.equal(c.type, 'line');
  const xy = (lens, ys) => ys.map((y, i) => ({ x: lens[i], y }));
  assert.equal(c.data.datasets.length, 3);
  assert.deepEqual(c.data.datasets.map((s) => s.data), [xy([5, 6, 7], [2560, 3072, 3584]), xy([5, 6, 7], [10240, 12288, 14336]), xy([5, 6, 7], [1280, 1536, 1792])]);
  assert.equal(c.options.scales.x.min, 5);
  assert.equal(c.options.scales.x.max, 7);
  assert.match(c.data.datasets[0].label, /GQA, n_kv_heads = 2/);
  assert.match(c.data.datasets[1].label, /MHA.*8/);
  assert.match(c.data.datasets[2].label, /MQA/);
  for (const s of c.data.datasets) {
    assert.ok(s.pointRadius[1] > s.pointRadius[0] && s.pointRadius[1] > s.pointRadius[2]);
    assert.equal(s.pointStyle[1], 'rectRot');
  }
  assert.equal(c.options.scales.x.ticks.callback(5), '5 (prompt)');
  assert.equal(c.options.scales.x.ticks.callback(7), '7');
  assert.equal(c.options.scales.y.ticks.callback(2560), '2.5 KB');
  assert.equal(c.options.scales.y.ticks.callback(3 * 1024 * 1024), '3 MB');
  assert.equal(c.options.scales.y.ticks.callback(512), '512 B');
  const cb = c.options.plugins.tooltip.callbacks;
  assert.match(cb.title([{ dataIndex: 0 }]), /prompt \(prefill\): 5 tokens/);
  assert.match(cb.title([{ dataIndex: 2 }]), /decode step: 7 tokens/);
  assert.equal(cb.label({ dataset: c.data.datasets[0], raw: { x: 5, y: 2560 } }), `${c.data.datasets[0].label}: 2560 bytes (2.5 KB)`);
  // a model with as many KV heads as heads is called MHA, one KV head MQA
  assert.match(Kv.kvBytesConfig({ ...kvData('en'), nKvHeads: 8, sharing: core.kvSharing(8, 8) }).data.datasets[0].label, /\(MHA,/);
  assert.match(Kv.kvBytesConfig({ ...kvData('en'), nKvHeads: 1, sharing: core.kvSharing(8, 1) }).data.datasets[0].label, /\(MQA,/);
  // no current row: no mark
  assert.ok(Kv.kvBytesConfig({ ...kvData('en'), current: -1 }).data.datasets.every((s) => s.pointStyle.every((p) => p === 'circle')));
  assert.throws(() => Kv.kvBytesConfig({ ...kvData('en'), current: 3 }), /current row 3/);
});

test('KV FLOPs: with the cache against recomputing, log y, exactly the rows\' counts', () => {
  const c = Kv.kvFlopsConfig({ rows: kvRows, scope: 'model', current: 2, lang: 'en' });
  assert.equal(c.options.scales.y.type, 'logarithmic');
  assert.deepEqual(c.data.datasets.map((s) => s.data.map((p) => p.y)), [[51200, 12288, 14336], [51200, 73728, 100352]]);
  assert.deepEqual(c.data.datasets[0].data.map((p) => p.x), [5, 6, 7]);
  assert.equal(c.data.datasets[0].pointStyle[2], 'rectRot');
  assert.equal(c.options.scales.x.ticks.callback(5), '5 (prompt)');
  assert.match(c.options.plugins.subtitle.text.join(' '), /^causal: /); // the count al_model_flops_causal makes
  assert.match(Kv.kvFlopsConfig({ rows: kvRows, scope: 'model', current: 2, lang: 'zh' }).options.plugins.subtitle.text.join(''), /^因果计数/);
  const tick = c.options.scales.y.ticks.callback;
  assert.equal(tick(1e6), '1M');
  assert.equal(tick(20000), '20k');
  assert.equal(tick(3e5), '');
});

test('KV: both languages, and csv() gives the rows back', () => {
  checkDictionaries('kvChart');
  checkLanguages((lang) => Kv.kvBytesConfig(kvData(lang)));
  checkLanguages((lang) => Kv.kvFlopsConfig({ rows: kvRows, scope: 'model', current: 0, lang }));
  for (const lang of LANGS) {
    const rows = parseCsv(Kv.csv(kvData(lang), lang));
    assert.equal(rows[0].length, 7);
    assert.doesNotMatch(rows[0].join(), /undefined/);
    assert.deepEqual(rows.slice(1).map((r) => [r[0], r[2], r[3], r[4], r[5], r[6]].map(Number)),
      kvRows.map((r) => [r.len, r.bytes, r.bytes_mha, r.bytes_mqa, r.flops_cached, r.flops_uncached]));
    assert.deepEqual(rows.slice(1).map((r) => r[1]), [STRINGS[lang].kvChart.prefill, STRINGS[lang].kvChart.decode, STRINGS[lang].kvChart.decode]);
  }
  assert.notEqual(Kv.csv(kvData('en'), 'en').split('\n')[0], Kv.csv(kvData('zh'), 'zh').split('\n')[0]);
});

test('KV: the layer view\'s charts are the same module\'s, one palette, its own title, label and FLOPs count', () => {
  const layer = { ...kvData('en'), scope: 'layer', current: 2 };
  const bytes = Kv.kvBytesConfig(layer), model = Kv.kvBytesConfig(kvData('en'));
  assert.equal(bytes.options.plugins.title.text, 'KV cache of this layer');
  assert.equal(model.options.plugins.title.text, 'KV cache of all 2 layers');
  assert.match(bytes.data.datasets[0].label, /^this layer \(GQA, n_kv_heads = 2\)$/);
  assert.deepEqual(bytes.data.datasets.map((s) => s.data), model.data.datasets.map((s) => s.data), 'the same rows drawn the same way');
  // one palette (Okabe–Ito) for both views, each series its colour and dash
  const look = (c) => c.data.datasets.map((s) => [s.borderColor, s.borderDash.join()]);
  assert.deepEqual(look(bytes), look(model));
  assert.deepEqual(look(bytes), [['#0072B2', ''], ['#D55E00', '6,3'], ['#009E73', '2,2']]);
  const flops = Kv.kvFlopsConfig(layer), modelFlops = Kv.kvFlopsConfig({ ...kvData('en') });
  assert.deepEqual(look(flops), look(modelFlops));
  assert.match(flops.options.plugins.subtitle.text.join(' '), /n_query × n_keys/, 'the layer counts the full rectangle (al_attn_flops_full)');
  assert.match(modelFlops.options.plugins.subtitle.text.join(' '), /^causal: /);
  assert.equal(flops.data.datasets[0].pointStyle[2], 'rectRot', 'the newest row marked in the layer view too');
  checkLanguages((lang) => Kv.kvBytesConfig({ ...layer, lang }));
  checkLanguages((lang) => Kv.kvFlopsConfig({ ...layer, lang }));
  // before the prefill the layer has no rows: empty charts, no mark
  assert.deepEqual(Kv.kvBytesConfig({ ...layer, rows: [], current: -1 }).data.datasets.map((s) => s.data), [[], [], []]);
  assert.throws(() => Kv.kvBytesConfig({ ...layer, scope: 'head' }), /scope 'head' is not 'layer' or 'model'/);
});

// ------------------------------------------------------------------ RoPE
const plain = new Float32Array([1, 0.1, 0.01, 0.001]);
const scaled = new Float32Array([1, 0.1, 0.0025, 0.00025]);
const ropeData = (lang, yarn = true) => ({ plain, scaled, yarn, base: 1000000, lang });

test('RoPE frequencies: the plain series, and the scaled one only with YaRN; log y', () => {
  const c = Rope.freqConfig(ropeData('en'));
  assert.equal(c.options.scales.y.type, 'logarithmic');
  assert.deepEqual(c.data.labels, [0, 1, 2, 3]);
  assert.deepEqual(c.data.datasets.map((s) => s.data), [Array.from(plain), Array.from(scaled)]);
  assert.equal(c.data.datasets[0].label, 'unscaled');
  assert.match(c.options.plugins.title.text, /θ_i = base\^\(−2i\/d\)/);
  assert.equal(c.options.plugins.legend.display, true);
  assert.equal(c.data.datasets[1].label, 'YaRN-scaled');
  assert.match(c.options.plugins.title.text, /1000000/);
  const without = Rope.freqConfig(ropeData('en', false));
  assert.equal(without.data.datasets.length, 1);
  assert.equal(without.options.plugins.legend.display, false, 'one line needs no legend');
  assert.equal(c.options.scales.y.ticks.callback(1), '1');
  assert.equal(c.options.scales.y.ticks.callback(0.001), '0.001');
  assert.equal(c.options.scales.y.ticks.callback(0.0001), '1e-4');
  assert.equal(c.options.scales.y.ticks.callback(0.003), '');
});

test('RoPE: both languages, and csv() gives the frequencies back', () => {
  checkDictionaries('ropeChart');
  checkLanguages((lang) => Rope.freqConfig(ropeData(lang)));
  for (const lang of LANGS) {
    const rows = parseCsv(Rope.csv(ropeData(lang), lang));
    assert.equal(rows.length, 5);
    assert.doesNotMatch(rows[0].join(), /undefined/);
    rows.slice(1).forEach((r, i) => assert.deepEqual(r.map(Number), [i, plain[i], scaled[i]]));
    assert.equal(parseCsv(Rope.csv(ropeData(lang, false), lang))[1].length, 2);
  }
});

// The arcs drawPairs drew, as [dimension, dimension], read from the recorded moveTo/bezierCurveTo
// and the boxes' numbers (each written at its box's centre).
function arcsDrawn(canvas) {
  const centre = new Map();
  for (const [name, text, x] of canvas.calls) if (name === 'fillText' && /^\d+$/.test(text)) centre.set(x, Number(text));
  const arcs = [];
  let from = null;
  for (const call of canvas.calls) {
    if (call[0] === 'moveTo') from = call[1];
    if (call[0] === 'bezierCurveTo') arcs.push([centre.get(from), centre.get(call[5])]);
  }
  return arcs;
}

test('RoPE pairs: MiniMind\'s half split joins i with i + d/2, interleaved 2i with 2i + 1', () => {
  const half = fakeCanvas(800, 160);
  const drawn = Rope.drawPairs(half, { pairs: core.ropePairs(8, 'half_split'), style: 'half_split', lang: 'en' });
  assert.deepEqual(drawn.pairs, [[0, 4], [1, 5], [2, 6], [3, 7]]);
  assert.deepEqual(arcsDrawn(half), [[0, 4], [1, 5], [2, 6], [3, 7]]);
  assert.match(drawn.caption, /^MiniMind: dimension i rotates with dimension i \+ d\/2 \(its rotate_half/);
  assert.doesNotMatch(drawn.caption, /half_split/);
  assert.equal(half.attrs['aria-label'], drawn.caption);
  assert.ok(half.calls.some((c) => c[0] === 'fillText' && c[1] === drawn.caption));

  const inter = fakeCanvas(800, 160);
  const drawnI = Rope.drawPairs(inter, { pairs: core.ropePairs(8, 'interleaved'), style: 'interleaved', lang: 'zh' });
  assert.deepEqual(arcsDrawn(inter), [[0, 1], [2, 3], [4, 5], [6, 7]]);
  assert.match(drawnI.caption, /^Llama、llama2\.c：相邻的第 2i 维/);
  assert.doesNotMatch(drawnI.caption, /interleaved/);

  // sized to the CSS box times the pixel ratio
  globalThis.devicePixelRatio = 2;
  try {
    const sized = fakeCanvas(300, 100);
    Rope.drawPairs(sized, { pairs: core.ropePairs(4, 'interleaved'), style: 'interleaved', lang: 'en' });
    assert.deepEqual([sized.width, sized.height], [600, 200]);
    assert.deepEqual(sized.calls.find((c) => c[0] === 'setTransform'), ['setTransform', 2, 0, 0, 2, 0, 0]);
  } finally {
    delete globalThis.devicePixelRatio;
  }
});

test('RoPE pairs: past 64 dimensions only the first and last 16 pairs, with ellipses', () => {
  const half = fakeCanvas(4000, 160);
  const drawn = Rope.drawPairs(half, { pairs: core.ropePairs(128, 'half_split'), style: 'half_split', lang: 'en' });
  assert.equal(drawn.pairs.length, 32);
  assert.deepEqual(drawn.pairs[0], [0, 64]);
  assert.deepEqual(drawn.pairs[31], [63, 127]);
  assert.equal(drawn.dims.length, 64);
  assert.equal(half.calls.filter((c) => c[0] === 'fillText' && c[1] === '…').length, 2);
  assert.match(drawn.caption, /first 16 and last 16 pairs/);
  assert.deepEqual(arcsDrawn(half)[0], [0, 64]);

  const inter = fakeCanvas(4000, 160);
  const drawnI = Rope.drawPairs(inter, { pairs: core.ropePairs(128, 'interleaved'), style: 'interleaved', lang: 'en' });
  assert.deepEqual(drawnI.pairs.at(-1), [126, 127]);
  assert.equal(inter.calls.filter((c) => c[0] === 'fillText' && c[1] === '…').length, 1);
  // a caption too wide for the canvas is broken between words, each line within the canvas
  // (the fake canvas measures 6 px a character; 8 px margins)
  for (const [width, lang] of [[300, 'en'], [200, 'en'], [200, 'zh']]) {
    const narrow = fakeCanvas(width, 160);
    const drawnN = Rope.drawPairs(narrow, { pairs: core.ropePairs(128, 'interleaved'), style: 'interleaved', lang });
    const captionLines = narrow.calls.filter((c) => c[0] === 'fillText' && !/^(\d+|…)$/.test(c[1])).map((c) => c[1]);
    assert.ok(captionLines.length >= 2, `${width} px, ${lang}: ${captionLines.length} caption line`);
    assert.equal(captionLines.join(''), drawnN.caption);
    for (const line of captionLines) assert.ok(line.length * 6 <= width - 16, `${width} px, ${lang}: "${line}" is wider than the canvas`);
  }
  assert.throws(() => Rope.drawPairs(fakeCanvas(10, 10), { pairs: core.ropePairs(7, 'interleaved'), style: 'interleaved' }), /even/);
});

// ------------------------------------------------------------------ head lines
// 3 tokens, causal: row q over keys 0..q.
const lineTokens = ['<s>', ' cat', '\n'];
const lineWeights = new Float32Array([
  1, 0, 0,
  0.99, 0.01, 0,
  0.5, 0.3, 0.2,
]);

// The lines drawn as [query row, key row], from the recorded moveTo/lineTo pairs (the key's
// sample lines, in the header above the rows, left out).
function linesDrawn(canvas, rowAt) {
  const out = [];
  let from = null;
  for (const call of canvas.calls) {
    if (call[0] === 'moveTo') from = call[2];
    if (call[0] === 'lineTo' && rowAt(from) >= 0) out.push([rowAt(from), rowAt(call[2])]);
  }
  return out.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
}

test('head lines: a line for each weight at or above the threshold, none under it', () => {
  const canvas = fakeCanvas(400, 200);
  const r = Lines.drawHeadLines(canvas, { tokens: lineTokens, weights: lineWeights, query: -1, lang: 'en' });
  // 0.01 (query 1, key 1) and the zeros are under the default 0.02
  assert.deepEqual(linesDrawn(canvas, r.rowAt), [[0, 0], [1, 0], [2, 0], [2, 1], [2, 2]]);
  assert.equal(r.lines, 5);
  const higher = fakeCanvas(400, 200);
  const r2 = Lines.drawHeadLines(higher, { tokens: lineTokens, weights: lineWeights, query: -1, threshold: 0.25, lang: 'en' });
  assert.deepEqual(linesDrawn(higher, r2.rowAt), [[0, 0], [1, 0], [2, 0], [2, 1]]);
  // labels: whitespace visible, both columns, the threshold named
  const texts = canvas.calls.filter((c) => c[0] === 'fillText').map((c) => c[1]);
  assert.equal(texts.filter((s) => s === '␣cat').length, 2);
  assert.ok(texts.includes('⏎'));
  assert.ok(texts.includes('lines: weight ≥ 0.02'));
});

test('head lines: the chosen query\'s lines drawn last, the others faded; rowAt maps y to a row', () => {
  const canvas = fakeCanvas(400, 200);
  const r = Lines.drawHeadLines(canvas, { tokens: lineTokens, weights: lineWeights, query: 2, lang: 'en' });
  const strokes = []; // [globalAlpha, lines in that path], the key's sample lines left out
  let alpha = 1, count = 0;
  for (const c of canvas.calls) {
    if (c[0] === 'globalAlpha=') alpha = c[1];
    if (c[0] === 'beginPath') count = 0;
    if (c[0] === 'lineTo' && r.rowAt(c[2]) >= 0) count++;
    if (c[0] === 'stroke' && count) strokes.push([alpha, count]);
  }
  const last = linesDrawn(canvas, r.rowAt).filter(([q]) => q === 2);
  assert.equal(last.length, 3);
  // the chosen query's three lines come in the last strokes, more opaque than the faded ones
  const faded = strokes.slice(0, strokes.length - 3), chosen = strokes.slice(-3);
  assert.equal(chosen.reduce((s, [, n]) => s + n, 0), 3);
  assert.ok(Math.max(...faded.map(([a]) => a)) < Math.min(...chosen.map(([a]) => a)));
  // rows: the header above them, then three equal bands
  assert.equal(r.rowAt(5), -1);
  assert.equal(r.rowAt(199), -1);
  const ys = canvas.calls.filter((c) => c[0] === 'fillText' && c[1] === '<s>').map((c) => c[3]);
  assert.equal(r.rowAt(ys[0]), 0);
  assert.throws(() => Lines.drawHeadLines(fakeCanvas(10, 10), { tokens: lineTokens, weights: lineWeights, query: 3 }), /query 3/);
});

// (How long the drawing takes is the bench's: tests/bench/run.mjs.)
test('head lines: 512 tokens draw every k-th label', () => {
  const { canvas, data, n } = manyTokenLines();
  const r = Lines.drawHeadLines(canvas, data);
  assert.equal(r.lines, n);
  const texts = canvas.calls.filter((c) => c[0] === 'fillText').map((c) => c[1]);
  assert.ok(texts.length < n, `${texts.length} labels for ${n} rows`);
  assert.ok(texts.includes('100 t100'), 'the chosen query keeps its label');
  assert.ok(texts.includes('query（查询）'));
});

test('head lines: both languages, and csv() gives the weights back', () => {
  checkDictionaries('headLines');
  const header = (lang) => {
    const c = fakeCanvas(400, 200);
    Lines.drawHeadLines(c, { tokens: lineTokens, weights: lineWeights, query: -1, lang });
    return c.calls.filter((x) => x[0] === 'fillText').map((x) => x[1]).join(' | ');
  };
  assert.notEqual(header('en'), header('zh'));
  assert.doesNotMatch(header('zh'), /undefined/);
  for (const lang of LANGS) {
    const rows = parseCsv(Lines.csv({ tokens: lineTokens, weights: lineWeights }, lang));
    assert.equal(rows.length, 4);
    assert.doesNotMatch(rows[0].join(), /undefined/);
    rows.slice(1).forEach((r, q) => {
      assert.equal(Number(r[0]), q);
      assert.equal(r[1], lineTokens[q]);
      assert.deepEqual(r.slice(2).map(Number), Array.from(lineWeights.slice(q * 3, q * 3 + 3)));
    });
  }
});

// ------------------------------------------------------------------ MoE routing
const routeData = (lang) => ({
  ids: new Int32Array([2, 0, 1, 3, 3, 2]), weights: new Float32Array([0.7, 0.3, 0.55, 0.45, 0.9, 0.1]),
  n: 3, k: 2, nExperts: 4, layer: 1, tokens: ['<s>', ' a', 'b'], lang,
});
const routeDense = [
  [0.3, 0, 0.7, 0],
  [0, 0.55, 0, 0.45],
  [0, 0, 0.1, 0.9],
].map((r) => Array.from(new Float32Array(r)));

test('routing: a tokens × experts heatmap of exactly the given weights, 0 where not chosen', () => {
  // an image for heatmap.js to paint into: the matrix it was given stays on it (image.cells)
  const image = { width: 0, height: 0, getContext: () => ({ createImageData: (w, h) => ({ data: new Uint8ClampedArray(4 * w * h) }), putImageData() {} }) };
  const c = Routing.routingConfig({ ...routeData('en'), image }, null);
  assert.equal(c.options.plugins.matrixImage.image, image);
  assert.deepEqual([image.cells.rows, image.cells.cols, image.cells.lo, image.cells.hi], [3, 4, 0, 1]);
  assert.deepEqual([0, 1, 2].map((i) => Array.from(image.cells.values.slice(4 * i, 4 * i + 4))), routeDense);
  assert.deepEqual([image.width, image.height], [4, 3]);
  assert.equal(image.cells.format(0), '0 (not chosen)');
  assert.equal(image.cells.format(image.cells.values[2]), image.cells.values[2].toPrecision(6));
  assert.equal(c.options.plugins.matrixImage.rows, 3);
  assert.equal(c.options.scales.x.max, 3.5); // 4 experts: columns -0.5 .. 3.5
  assert.equal(c.options.scales.y.max, 2.5);
  assert.match(c.options.plugins.title.text, /Layer 1: .*top-2 of 4 experts/);
  assert.deepEqual(image.cells.rowNames, ['<s>', '␣a', 'b']);
  assert.throws(() => Routing.routingConfig({ ...routeData('en'), nExperts: 3 }, null), /names expert 3/);
});

test('routing: both languages, and csv() gives the dense matrix', () => {
  checkDictionaries('routingChart');
  const titles = LANGS.map((lang) => {
    const c = Routing.routingConfig(routeData(lang), null);
    return [c.options.plugins.title.text, c.options.scales.x.title.text, c.options.scales.y.title.text].join(' | ');
  });
  for (const t of titles) assert.doesNotMatch(t, /undefined/);
  assert.notEqual(titles[0], titles[1]);
  for (const lang of LANGS) {
    const rows = parseCsv(Routing.csv(routeData(lang), lang));
    assert.equal(rows.length, 4);
    assert.equal(rows[0].length, 6);
    assert.doesNotMatch(rows[0].join(), /undefined/);
    rows.slice(1).forEach((r, i) => {
      assert.equal(r[1], routeData(lang).tokens[i]);
      assert.deepEqual(r.slice(2).map(Number), routeDense[i]);
    });
  }
});

// ------------------------------------------------------------------ heatmap layout (heatmap.js)

test('heatmap labels: every k-th, the first and the last always, at most 24, none closer than a label', () => {
  // every one when they fit
  assert.deepEqual(Heat.pickLabels(5, 60, 20), [0, 1, 2, 3, 4]);
  assert.deepEqual(Heat.pickLabels(1, 5, 20), [0]);
  for (const [n, cell, extent] of [[100, 3, 12], [512, 0.8, 12], [30, 13, 12], [25, 14, 40], [7, 9, 12], [1024, 0.4, 60]]) {
    const picked = Heat.pickLabels(n, cell, extent);
    assert.equal(picked[0], 0, `n ${n}: the first`);
    assert.equal(picked[picked.length - 1], n - 1, `n ${n}: the last`);
    assert.ok(picked.length <= 24, `n ${n}: ${picked.length} labels`);
    for (let i = 1; i < picked.length; i++) {
      assert.ok((picked[i] - picked[i - 1]) * cell >= extent, `n ${n}: labels ${picked[i - 1]} and ${picked[i]} overlap`);
    }
  }
  // two labels that would touch: the first only
  assert.deepEqual(Heat.pickLabels(2, 5, 20), [0]);
  assert.deepEqual(Heat.pickLabels(0, 5, 20), []);
  assert.equal(Heat.clip('abcdefghijklmnop'), 'abcdefghi…');
  assert.equal(Heat.clip('床前明月光'), '床前明月光');
});

test('heatmap values: black or white text, whichever reads on the cell, at every level of the ramp', () => {
  const luminance = (c) => {
    const lin = (v) => (v / 255 <= 0.03928 ? v / 255 / 12.92 : ((v / 255 + 0.055) / 1.055) ** 2.4);
    return 0.2126 * lin(c[0]) + 0.7152 * lin(c[1]) + 0.0722 * lin(c[2]);
  };
  for (let level = 0; level <= 255; level++) {
    const c = Heat.viridis(level / 255), L = luminance(c);
    const text = Heat.textColourOn(c);
    const contrast = text === '#000' ? (L + 0.05) / 0.05 : 1.05 / (L + 0.05);
    assert.ok(contrast >= 4.5, `level ${level}: ${text} on rgb(${c.map(Math.round)}) has contrast ${contrast.toFixed(2)}`);
  }
  assert.equal(Heat.textColourOn(Heat.viridis(0)), '#fff');
  assert.equal(Heat.textColourOn(Heat.viridis(1)), '#000');
  assert.equal(Heat.textColourOn(Heat.colourOf(-Infinity, -1, 0)), '#fff', 'a masked cell is dark grey');
});

test('heatmap colour bar: the range and the scale, in both languages; the outline\'s key under the title', () => {
  assert.deepEqual(Heat.barTexts({ lo: 0, hi: 1, scale: 'linear', lang: 'en' }), { top: '1', bottom: '0', caption: 'linear' });
  assert.deepEqual(Heat.barTexts({ lo: 0, hi: 1, scale: 'log', lang: 'en' }), { top: '1', bottom: '≤ 0.0001', caption: 'log' });
  assert.deepEqual(Heat.barTexts({ lo: -2.5719, hi: 3.14159, unit: 'rad', lang: 'zh' }), { top: '3.14', bottom: '-2.57', caption: '线性 (rad)' });
  checkDictionaries('heatmap');
  const m = { values: new Float32Array(4), rows: 2, cols: 2, lo: 0, hi: 1, title: 't', xLabel: 'key', yLabel: 'query', format: String };
  const outlined = Heat.heatmapConfig({ ...m, highlightRow: 1, lang: 'zh' });
  assert.equal(outlined.options.plugins.subtitle.display, true);
  assert.equal(outlined.options.plugins.subtitle.text, STRINGS.zh.heatmap.newestRow);
  assert.equal(Heat.heatmapConfig({ ...m, highlightRow: -1 }).options.plugins.subtitle.display, false);
  // Chart.js's own ticks are off: the plugin draws the labels, and a scale on the right makes
  // room for the bar
  assert.equal(outlined.options.scales.x.ticks.display, false);
  assert.equal(outlined.options.scales.bar.position, 'right');
  assert.equal(Heat.exportNote({ model: 'stories260K', tokens: 5, scale: 'log', lang: 'en' }), 'stories260K · 5 tokens · log colour scale');
  assert.equal(Heat.exportNote({ tokens: 3, lang: 'zh' }), '3 个 token');
});

test('token labels: a character split into bytes shows on the token that completes it, the others as bytes, never U+FFFD', () => {
  // 明 is e6 98 8e: three byte tokens, the core gives the character to the last
  const pieces = [{ text: '', bytes: [0xe6] }, { text: '', bytes: [0x98] }, { text: '明', bytes: [0x8e] }];
  assert.deepEqual(pieces.map(Heat.tokenLabel), ['‹e6›', '‹98›', '明']);
  assert.equal(Heat.tokenLabel({ text: '', bytes: [...Buffer.from('<s>')] }), '<s>', 'a piece of whole characters');
  assert.equal(Heat.tokenLabel({ text: '', bytes: [...Buffer.from('月')] }), '月', 'a lone token of one character');
});

test('head lines: a key of the line colours, from the threshold\'s to the strongest, and what hovering marks', () => {
  for (const lang of LANGS) {
    const canvas = fakeCanvas(400, 200);
    const r = Lines.drawHeadLines(canvas, { tokens: lineTokens, weights: lineWeights, query: -1, lang });
    const texts = canvas.calls.filter((c) => c[0] === 'fillText').map((c) => c[1]);
    for (const s of [r.key.weak, r.key.strong, r.key.chosen]) assert.ok(texts.includes(s), `${lang}: ${s}`);
    assert.match(r.key.weak, /0\.02/);
    // sample lines in the header, above the first row, from the weakest band's colour to the strongest's
    const samples = [];
    let colour = null;
    for (const c of canvas.calls) {
      if (c[0] === 'strokeStyle=') colour = c[1];
      if (c[0] === 'lineTo' && r.rowAt(c[2]) < 0) samples.push(colour);
    }
    const rgb = (t) => `rgb(${Heat.viridis(0.8 * t).map(Math.round).join(', ')})`;
    assert.equal(samples.length, 5);
    assert.equal(samples[0], rgb(1 / 16));
    assert.equal(samples[4], rgb(1));
  }
});

test('KV: just after the prefill (one row) the x axis has room for its point', () => {
  for (const config of [Kv.kvBytesConfig({ ...kvData('en'), rows: kvRows.slice(0, 1), current: 0 }),
    Kv.kvFlopsConfig({ rows: kvRows.slice(0, 1), scope: 'layer', current: 0, lang: 'en' })]) {
    const { min, max } = config.options.scales.x, x = config.data.datasets[0].data[0].x;
    assert.ok(min < x && x < max, `the one point (${x}) inside the axis [${min}, ${max}]`);
  }
});
