// layer/render.js — the core's results to the page: the four charts of the layer (each drawn by
// its module in charts/ from the data the layer view's worker sent, run.js's page.session), every head's thumbnail, the GQA
// map, the live checks, the charts of chapters 04, 05 and 10 and the status line; and each layer
// chart's PNG / CSV export. Nothing here computes a number.
import * as AttnChart from '../charts/attn.js';
import * as BlockChart from '../charts/block.js';
import * as FfnChart from '../charts/ffn.js';
import * as KvChart from '../charts/kv.js';
import * as MaskChart from '../charts/mask.js';
import * as RopeChart from '../charts/rope.js';
import * as SamplerChart from '../charts/sampler.js';
import { matrixCsv } from '../ui/format.js';
import * as Heat from '../ui/heatmap.js';
import { page } from '../ui/page.js';
import { kvSharing } from './facts.js';
  const $ = page.$;

  const charts = {}; // canvas id -> Chart
  const images = {}; // canvas id -> the offscreen canvas its heatmap cells are painted into
  const imageFor = (id) => (images[id] ||= document.createElement('canvas'));
  const exports = {}; // chart name -> () => {csv, canvas}

  // ---------------------------------------------------------------- drawing
  // Draws a chart unless it already shows exactly this: `key` names everything its data was
  // computed from, so an unchanged chart is not redrawn (a seed change leaves the mask, the RoPE
  // angles and the KV charts as they are). A heatmap whose axes and title stay the same is
  // redrawn without Chart.js's update (page.drawChart).
  const drawnKeys = {};
  function drawIfChanged(canvasId, key, makeConfig) {
    if (key !== null && drawnKeys[canvasId] === key && charts[canvasId]) return;
    draw(canvasId, makeConfig());
    drawnKeys[canvasId] = key;
  }

  const draw = (canvasId, config) => page.drawChart(charts, canvasId, config);


  // The state the frame shown was computed for: the page's, with the session's configuration
  // and the frame's view (a control moved since waits for its own frame).
  function drawnState() {
    const { session: { cfg, view }, state } = page;
    return { ...state, hidden: cfg.hidden, heads: cfg.heads, kv: cfg.kvHeads, hd: cfg.headDim, base: cfg.ropeBase,
      seed: cfg.seed, prompt: cfg.promptLen, head: view.head, pair: view.pair, wrap: view.wrap ? 1 : 0 };
  }

  // ---------------------------------------------------------------- the charts
  function render() {
    const { session, t } = page;
    const state = drawnState();
    const len = session.length, total = session.total;
    const newestRow = len > state.prompt ? len - 1 : -1;
    const kvMap = session.kvMap;
    page.state.at = len;

    // What every number below was computed from: this session at this length.
    const cells = session.cells;

    // 1. mask
    const mask = session.mask;
    drawIfChanged('chart-mask', `${len}|${state.prompt}|${state.lang}`,
      () => MaskChart.maskConfig({ mask, len, newestRow, t, lang: state.lang, image: imageFor('chart-mask'), cellsKey: cells }, $('tip-mask')));
    exports.mask = () => ({ csv: matrixCsv(mask, len, len, `${t.query}\\${t.key}`), canvas: 'chart-mask', title: t.maskTitle, tokens: len });

    // 2. RoPE (each sent by the worker only when what it depends on changed): the angles, one
    // pair of an all-ones vector turning, and the dot product of the tutorial's v_test against
    // distance (which depends on the layer and the seed it was drawn for).
    const pairs = state.hd / 2, hd = state.hd, base = state.base, wrap = !!state.wrap, pair = state.pair;
    const angles = () => session.angles.values;
    const ropeKey = `${total}|${hd}|${base}|${state.lang}`;
    drawIfChanged('chart-rope', `${ropeKey}|${wrap}|${len}`, () => RopeChart.ropeAngleConfig(
      { angles: angles(), positions: total, pairs, newest: len - 1, t, lang: state.lang, image: imageFor('chart-rope'), cellsKey: `${total}|${hd}|${base}|${wrap}` }, $('tip-rope')),
    `${total}|${pairs}|${len}|${state.lang}`);
    drawIfChanged('chart-rope-pair', `${ropeKey}|${pair}`, () => RopeChart.ropePairConfig(
      { points: session.ropePair.points, pair, t }));
    drawIfChanged('chart-rope-rel', `${ropeKey}|${state.seed}|${state.hidden}|${state.heads}|${state.kv}`,
      () => RopeChart.ropeRelativeConfig({ dots: session.ropeRel.dots, t }));
    exports.rope = () => ({ csv: matrixCsv(angles(), total, pairs, `${t.position}\\${t.pairIndex}`), canvas: 'chart-rope', title: t.ropeTitle, tokens: total, scale: 'linear' });

    // 3. attention weights: chosen head, every head, GQA map
    const weights = session.attention.values;
    drawIfChanged('chart-attn', null, () => AttnChart.attnConfig(
      { weights, len, head: state.head, kvHead: kvMap[state.head], newestRow, t, lang: state.lang, image: imageFor('chart-attn'), cellsKey: `${cells}|${state.head}` }, $('tip-attn')));
    exports.attn = () => ({ csv: matrixCsv(weights, len, len, `${t.query}\\${t.key}`), canvas: 'chart-attn', title: `${t.attnTitle} — head ${state.head} (${t.kvHead} ${kvMap[state.head]})`, tokens: len, scale: 'linear' });
    renderHeadGrid(state, kvMap, cells);
    renderGqaMap(state, kvMap);

    // 4. KV cache growth: one row after the prefill and one after each step so far (none
    // before the prefill), all from one call into the core.
    const rows = session.kvRows;
    const kvKey = `${state.prompt}|${len}|${state.hidden}|${state.heads}|${state.kv}|${state.hd}|${state.lang}`;
    const kv = { rows, scope: 'layer', nHeads: state.heads, nKvHeads: state.kv, sharing: kvSharing(state.heads, state.kv),
      current: rows.length - 1, lang: state.lang };
    drawIfChanged('chart-kv', kvKey, () => KvChart.kvBytesConfig(kv));
    drawIfChanged('chart-kv-flops', kvKey, () => KvChart.kvFlopsConfig(kv));
    exports.kv = () => ({ csv: KvChart.csv(kv, state.lang), canvas: 'chart-kv' }); // the model view's columns

    renderChecks();
    renderChapters(state);
    renderStatus();
    page.writeHash();
  }

  // Chapters 04, 05 and 10's charts: the numbers the core keeps as the demos print them for the
  // page's seed (the same seed the walkthrough's sections are run for; the worker sends them
  // once per seed), drawn once per seed and language.
  function renderChapters(state) {
    const { session: { chapters: c }, t } = page;
    const key = `${c.key}|${state.lang}`, seed = c.key;
    const F = FfnChart, B = BlockChart;
    drawIfChanged('chart-ffn-curves', key, () => F.curvesConfig({ line: c.ffnLine, points: c.ffnPoints, t }));
    drawIfChanged('chart-ffn-router', key, () => F.routerConfig({ router: c.router, which: 'scores', t, lang: state.lang, image: imageFor('chart-ffn-router'), cellsKey: seed }, $('tip-ffn-router')));
    drawIfChanged('chart-ffn-renorm', key, () => F.routerConfig({ router: c.router, which: 'weights', t, lang: state.lang, image: imageFor('chart-ffn-renorm'), cellsKey: seed }, $('tip-ffn-renorm')));
    drawIfChanged('chart-ffn-load', key, () => F.loadConfig({ load: c.load, t }));
    drawIfChanged('chart-block-stream', key, () => B.streamConfig({ stream: c.stream, t }));
    drawIfChanged('chart-block-labels', key, () => B.labelsConfig({ labels: c.labels, t }));
    const G = SamplerChart, lang = state.lang;
    for (const [id, example] of [['chart-gen-greedy', 1], ['chart-gen-topk', 3], ['chart-gen-topp', 4]]) {
      drawIfChanged(id, key, () => G.stagesConfig({ stages: c.stages[example], example, t, lang }));
    }
    drawIfChanged('chart-gen-temps', key, () => G.temperaturesConfig({ temps: c.temps, t }));
    drawIfChanged('chart-gen-penalty', key, () => G.penaltyConfig({ stages: c.stages[5], t, lang }));
    drawIfChanged('chart-gen-draws', key, () => G.drawsConfig({ draws: c.draws, t, lang, image: imageFor('chart-gen-draws'), cellsKey: seed }, $('tip-gen-draws')));
    drawIfChanged('chart-gen-eos', key, () => G.eosConfig({ eos: c.eos, t, lang, image: imageFor('chart-gen-eos'), cellsKey: seed }, $('tip-gen-eos')));
  }

  // Every head's weights as small images (plain canvases: Chart.js axes would cost more than
  // the picture is worth at this size), max-pooled by the core (worker.js's THUMB_SIZE): a
  // thumbnail is about 110 px wide, and 16 heads of 1024² cells cost 0.2 s to paint.
  function renderHeadGrid(state, kvMap, cells) {
    const { session } = page;
    const grid = $('attn-grid');
    while (grid.children.length > state.heads) grid.lastElementChild.remove();
    for (let h = 0; h < state.heads; h++) {
      let cell = grid.children[h];
      if (!cell) {
        cell = document.createElement('figure');
        cell.className = 'thumb';
        const canvas = document.createElement('canvas');
        canvas.id = `chart-attn-head-${h}`;
        cell.append(document.createElement('figcaption'), canvas);
        grid.appendChild(cell);
      }
      cell.firstChild.textContent = `h${h} → kv${kvMap[h]}`;
      cell.classList.toggle('selected', h === state.head);
      if (cell.dataset.cells === cells) continue; // already shows this session at this length
      const thumb = session.thumbs[h];
      Heat.paint(cell.lastChild, thumb.values, thumb.size, thumb.size, 0, 1);
      cell.dataset.cells = cells;
    }
    Heat.gridColourBar(grid, 'attn-grid-bar', { lo: 0, hi: 1, scale: 'linear', lang: state.lang });
  }

  function renderGqaMap(state, kvMap) {
    const { t } = page;
    const table = $('gqa-map');
    table.replaceChildren();
    const head = table.insertRow();
    head.insertCell().textContent = t.kvHead;
    head.insertCell().textContent = t.queryHeads;
    for (let k = 0; k < state.kv; k++) {
      const row = table.insertRow();
      row.className = `kv-group kv-${k % 8}`;
      row.insertCell().textContent = `kv ${k}`;
      row.insertCell().textContent = kvMap.map((kv, h) => (kv === k ? `h${h}` : null)).filter(Boolean).join(' ');
    }
  }

  // ---------------------------------------------------------------- checks and status
  function formatNumber(v) {
    if (Number.isNaN(v)) return 'NaN';
    if (v === 0) return '0';
    return v.toExponential(2);
  }

  // The checks run once per session and length (the worker's); a new language or head only
  // rewords them.
  function renderChecks() {
    const { session, t } = page;
    const body = $('verify').tBodies[0];
    body.replaceChildren();
    for (const c of session.checks) {
      const row = body.insertRow();
      row.className = c.passed ? 'pass' : 'fail';
      row.insertCell().textContent = t.checks[c.name];
      row.insertCell().textContent = formatNumber(c.value);
      row.insertCell().textContent = `≤ ${formatNumber(c.threshold)}`;
      row.insertCell().textContent = c.passed ? `✔ ${t.pass}` : `✘ ${t.fail}`;
    }
  }

  function renderStatus() {
    const { session, t } = page;
    if (!session) return;
    const state = drawnState();
    const len = session.length, total = session.total;
    const phase = len === 0 ? t.phaseNone : len >= total ? t.phaseDone : len === state.prompt ? t.phasePrefill : t.phaseDecode;
    $('status').textContent = t.status(len, total, phase);
    $('btn-prefill').disabled = len > 0;
    $('btn-step').disabled = len >= total;
    $('btn-play').disabled = len >= total;
    $('btn-play').textContent = page.playTimer ? t.pause : t.play;
  }

  // ---------------------------------------------------------------- exports
  // The file a chart's export button saves: {name, url} (kind 'png' or 'csv').
  function exportFile(chart, kind) {
    const what = exports[chart]();
    // A heatmap's PNG: its chart under a strip with its title and what it shows.
    const H = Heat;
    if (kind === 'png' && what.title) {
      const note = H.exportNote({ tokens: what.tokens, scale: what.scale, lang: page.state.lang });
      return { name: `attnlab-${chart}.png`, url: H.titledImage(charts[what.canvas].canvas, what.title, note).toDataURL('image/png') };
    }
    if (kind === 'png') return { name: `attnlab-${chart}.png`, url: charts[what.canvas].toBase64Image() };
    return { name: `attnlab-${chart}.csv`, url: URL.createObjectURL(new Blob([what.csv], { type: 'text/csv' })) };
  }

export { render, renderStatus, exportFile };
