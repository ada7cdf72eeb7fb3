// model/view.js — draws the model view from what the model worker sends: the model's facts, the
// prompt's tokens as chips, the text so far, the next-token bars at each stage of the sampler,
// every layer's and head's attention as a grid, one head large (heatmap and head view), the
// head roles, the KV cache of the whole model, its RoPE and, for MoE models, the routing; and
// each chart's PNG / CSV export. Every number comes from the core (through the worker).
// A chart is redrawn only when what it shows changed: heads switched off change the attention
// of the layers after theirs alone (a layer's attention is made from the layers before it).
// After an ablation (render's lazy) a chart off the screen is redrawn once it comes into view.
import * as KvChart from '../charts/kv.js';
import * as MaskChart from '../charts/mask.js';
import { visibleText, formatBytes, csvRows, matrixCsv } from '../ui/format.js';
import * as Heat from '../ui/heatmap.js';
import * as OnScreen from '../ui/on-screen.js';
import { page } from '../ui/page.js';
import * as HeadLines from './head-lines.js';
import * as NextChart from './next-chart.js';
import * as RopeModelChart from './rope-model-chart.js';
import * as RoutingChart from './routing-chart.js';
  const $ = (id) => document.getElementById(id);

  const view = {
    info: null,  // the loaded model (worker's load answer)
    snap: null,  // the last snapshot
    hoverQuery: -1,
  };
  const charts = {};
  const images = {};
  const KV_POINTS = 64;
  const imageFor = (id) => (images[id] ||= document.createElement('canvas'));

  const draw = (id, config) => page.drawChart(charts, id, config);
  // The heads the snapshot has off in the layers before `layer` (all of them before layer + 1):
  // with the tokens, what that layer's attention (and its routing, for layer + 1) is made from.
  const offBefore = (s, layer) => (s.off || []).filter(([l]) => l < layer).map(([l, h]) => `${l}.${h}`).join(',');

  // A token's chip and axis text (heatmap.js): the character on the token that completes it.
  const tokenLabel = (tok) => Heat.tokenLabel(tok);
  const wholeCharacters = (bytes) => Heat.wholeCharacters(bytes);
  const hex = (bytes) => bytes.map((b) => b.toString(16).padStart(2, '0')).join(' ');
  const visible = (text) => text.replace(/ /g, '␣').replace(/\n/g, '⏎');

  // ---------------------------------------------------------------- the model
  function renderModel(info) {
    const { t } = page;
    view.info = info;
    $('model-name').textContent = info.name;
    $('model-facts').textContent = t.modelFacts({ ...info.hparams, rope_style: info.ropeStyle === 'interleaved' ? 1 : 0 },
      t.kindNames[info.kind], info.context) + ' ' + t.threadsNote(info.threads);
    $('model-facts').dataset.threads = String(info.threads);
    $('moe-panel').hidden = !info.hparams.n_experts;
    const select = $('role-select');
    if (select.options.length !== info.roleNames.length || select.dataset.lang !== page.state.lang) {
      const chosen = select.value;
      select.replaceChildren(...info.roleNames.map((r) => new Option(t.roleNames[r], r)));
      select.value = chosen || 'previous';
      select.dataset.lang = page.state.lang;
    }
    renderRoles();
    renderRope();
  }

  // ---------------------------------------------------------------- chips and text
  let chipsShown = { serial: -1, count: 0 };
  function renderTokens(s) {
    const box = $('tokens');
    // Tokens never change once there: only new ones are added (a new prompt starts over).
    if (chipsShown.serial !== s.serial || s.len < chipsShown.count || chipsShown.lang !== page.state.lang) {
      box.replaceChildren();
      chipsShown = { serial: s.serial, count: 0, lang: page.state.lang };
    }
    const frag = document.createDocumentFragment();
    for (let i = chipsShown.count; i < s.len; i++) {
      const tok = s.tokens[i];
      const chip = document.createElement('span');
      const partial = !tok.text && !wholeCharacters(tok.bytes);
      chip.className = `chip${i >= s.promptLen ? ' gen' : ''}${partial ? ' partial' : ''}`;
      chip.textContent = visible(tokenLabel(tok));
      chip.title = page.t.tokenTip(i, s.ids[i], hex(tok.bytes)) + (partial ? ` ${page.t.partial}` : '');
      chip.dataset.id = String(s.ids[i]);
      frag.appendChild(chip);
    }
    box.appendChild(frag);
    chipsShown.count = s.len;
    chipsShown.prompt = s.tokens[0];
    $('generated').textContent = s.text;
    $('gen-status').textContent = page.t.genStatus(s.len, s.promptLen, view.info.context, s.finished);
  }

  // ---------------------------------------------------------------- next-token bars
  // The chart shows the draw to come while a step would draw (the sampler's settings as they
  // stand), else the last draw.
  function nextData(s) {
    return { ids: s.topIds, labels: s.topLabels, stages: s.stages, vocab: view.info.hparams.vocab, chosen: s.chosen,
      pending: s.pending, log: !!$('next-log').checked, lang: page.state.lang };
  }
  function renderNext(s, lazy = false) {
    OnScreen.draw($('chart-next'), null, () => draw('chart-next', NextChart.nextConfig(nextData(s))), lazy);
  }
  // The next-token chart's data alone (a sampler setting moved: no token drawn), kept in the
  // snapshot so that a later redraw shows it too.
  function renderNextOnly(next) {
    if (!view.snap) return;
    Object.assign(view.snap, next);
    renderNext(view.snap);
  }

  // The model chose its end token: said, with the way on past it. (Once the text has ended the
  // chart shows the last draw, whose ids hold the token drawn.)
  function renderEnded(s) {
    const ended = s.finish === 'stop_token';
    $('gen-ended').hidden = !ended;
    if (!ended) return;
    const i = Array.from(s.topIds).indexOf(s.lastChosen);
    $('gen-ended-text').textContent = page.t.endedNotice(i >= 0 && s.topLabels[i]
      ? `"${visibleText(s.topLabels[i])}" (#${s.lastChosen})` : `#${s.lastChosen}`);
  }

  // ---------------------------------------------------------------- heads grid
  let gridKeys = []; // per layer: what its thumbnails were painted from
  function renderGrid(s) {
    const { n_layers: L, n_heads: Hn } = view.info.hparams;
    const grid = $('chart-heads');
    if (grid.dataset.shape !== `${L}x${Hn}|${page.state.lang}`) {
      gridKeys = [];
      grid.replaceChildren();
      grid.style.gridTemplateColumns = `auto repeat(${Hn}, minmax(0, 1fr))`;
      grid.appendChild(document.createElement('span'));
      for (let h = 0; h < Hn; h++) {
        const label = document.createElement('span');
        label.className = 'axis';
        label.textContent = `h${h}`;
        grid.appendChild(label);
      }
      for (let l = 0; l < L; l++) {
        const label = document.createElement('span');
        label.className = 'axis';
        label.textContent = `L${l}`;
        grid.appendChild(label);
        for (let h = 0; h < Hn; h++) {
          const b = document.createElement('button');
          b.type = 'button';
          b.className = 'cell';
          b.dataset.layer = String(l);
          b.dataset.head = String(h);
          b.setAttribute('aria-label', page.t.headTitle(l, h));
          b.appendChild(document.createElement('canvas'));
          grid.appendChild(b);
        }
      }
      grid.dataset.shape = `${L}x${Hn}|${page.state.lang}`;
    }
    const size = s.thumbs.size, scale = page.state.log ? 'log' : 'linear';
    const off = new Set((s.off || []).map(([l, h]) => `${l}.${h}`)); // the heads switched off (Experiments)
    const keys = Array.from({ length: L }, (_, l) => `${view.info.name}|${s.serial}|${s.len}|${size}|${scale}|${offBefore(s, l)}`);
    for (const b of grid.querySelectorAll('button.cell')) {
      const l = Number(b.dataset.layer), h = Number(b.dataset.head);
      const offset = (l * Hn + h) * size * size;
      if (keys[l] !== gridKeys[l]) Heat.paint(b.firstChild, s.thumbs.data.subarray(offset, offset + size * size), size, size, 0, 1, scale);
      b.classList.toggle('selected', l === s.layer && h === s.head);
      b.classList.toggle('off', off.has(`${l}.${h}`));
    }
    gridKeys = keys;
    Heat.gridColourBar(grid, 'heads-bar', { lo: 0, hi: 1, scale, lang: page.state.lang }); // the thumbnails' one bar
  }

  // ---------------------------------------------------------------- one head
  function renderHead(s, lazy) {
    const { t } = page;
    const n = s.len;
    $('head-title').textContent = t.headTitle(s.layer, s.head);
    OnScreen.draw($('chart-head'), headKey(s), () => {
      const names = s.tokens.slice(0, n).map((tok) => visible(tokenLabel(tok)));
      draw('chart-head', Heat.heatmapConfig({
        values: s.attention, rows: n, cols: n, lo: 0, hi: 1, scale: page.state.log ? 'log' : 'linear',
        title: t.headTitle(s.layer, s.head), xLabel: t.keyToken, yLabel: t.queryToken, rowNames: names, colNames: names,
        format: (v) => v.toFixed(4), image: imageFor('chart-head'), highlightRow: n - 1, lang: page.state.lang,
      }, $('tip-head')));
    }, lazy);
    renderLines(s, lazy);
  }
  // What the open head's pattern is made from.
  const headKey = (s) => `${view.info.name}|${s.serial}|${s.len}|${s.layer}.${s.head}|${offBefore(s, s.layer)}|${page.state.log}|${page.state.lang}`;

  let linesGeometry = null;
  // The head view, with the query under the pointer (view.hoverQuery) picked out.
  function renderLines(s, lazy = false) {
    OnScreen.draw($('chart-head-lines'), `${headKey(s)}|${view.hoverQuery}`, () => drawLines(s), lazy);
  }
  function drawLines(s) {
    const canvas = $('chart-head-lines');
    const n = s.len;
    const names = s.tokens.slice(0, n).map((tok) => visible(tokenLabel(tok)));
    linesGeometry = HeadLines.drawHeadLines(canvas, {
      tokens: names, weights: s.attention, query: view.hoverQuery < n ? view.hoverQuery : -1, lang: page.state.lang,
    });
  }

  // ---------------------------------------------------------------- roles
  const RANKED = 5; // the strongest heads listed per role
  const score = (v) => v.toFixed(2);
  // What the chosen role is and how the model's heads measure up: its definition, the pattern
  // of a head that plays it exactly (from the core), the strongest heads with their scores (a
  // click opens one) and, when none reaches the threshold, that plainly, with the Train tab.
  function renderRoleTeach(info, roleName) {
    const { t } = page, R = info.roleNames.length, r = info.roleNames.indexOf(roleName), Hn = info.hparams.n_heads;
    const ideal = info.ideal[roleName];
    Heat.paint($('role-ideal'), ideal.data, ideal.size, ideal.size, 0, 1);
    $('role-def').textContent = t.roleDefs[roleName];
    $('role-threshold').textContent = t.roleThreshold(score(info.threshold));
    const ranking = info.ranking[roleName];
    const valueOf = (lh) => info.roles[lh * R + r];
    $('role-rank').replaceChildren(...Array.from(ranking.slice(0, RANKED), (lh) => {
      const li = document.createElement('li');
      const b = document.createElement('button');
      b.type = 'button';
      b.className = 'role-head';
      b.dataset.layer = String(Math.floor(lh / Hn));
      b.dataset.head = String(lh % Hn);
      b.dataset.score = score(valueOf(lh));
      const name = document.createElement('span');
      name.textContent = t.roleHead(Math.floor(lh / Hn), lh % Hn);
      const meter = document.createElement('meter');
      meter.min = 0;
      meter.max = 1;
      meter.value = valueOf(lh);
      meter.setAttribute('aria-hidden', 'true');
      const value = document.createElement('span');
      value.textContent = score(valueOf(lh));
      b.classList.toggle('clear', valueOf(lh) > info.threshold);
      b.append(name, meter, value);
      li.appendChild(b);
      return li;
    }));
    const best = ranking[0];
    const none = !(valueOf(best) > info.threshold);
    $('role-none').hidden = !none;
    if (none) {
      $('role-none-text').textContent = t.roleNone(t.roleNames[roleName], score(valueOf(best)), Math.floor(best / Hn), best % Hn,
        score(info.threshold));
    }
  }

  function renderRoles() {
    const info = view.info, { t } = page;
    if (!info) return;
    const { n_layers: L, n_heads: Hn } = info.hparams;
    const role = info.roleNames.indexOf($('role-select').value || 'previous');
    renderRoleTeach(info, info.roleNames[Math.max(0, role)]);
    const values = new Float32Array(L * Hn);
    for (let i = 0; i < L * Hn; i++) values[i] = info.roles[i * info.roleNames.length + Math.max(0, role)];
    draw('chart-roles', Heat.heatmapConfig({
      values, rows: L, cols: Hn, lo: 0, hi: 1, title: t.roleNames[info.roleNames[Math.max(0, role)]],
      xLabel: t.headAxis, yLabel: t.layerAxis, format: (v) => v.toFixed(3), image: imageFor('chart-roles'),
      cellsKey: `${info.name}|${role}`, lang: page.state.lang,
    }, $('tip-roles')));
  }

  // ---------------------------------------------------------------- KV cache
  let kvDrawn = '';
  function renderKv(s) {
    const { t } = page, hp = view.info.hparams;
    const rows = s.kv;
    if (!rows.length) return;
    // The cache and the mask follow the tokens alone (heads switched off change neither).
    const key = `${view.info.name}|${s.serial}|${s.len}|${page.state.lang}`;
    if (key === kvDrawn) return;
    kvDrawn = key;
    const last = rows[rows.length - 1];
    $('kv-model-facts').textContent = t.kvModelFacts(formatBytes(s.kvLayerBytes), formatBytes(last.bytes), hp.n_layers,
      formatBytes(last.bytes_mha), formatBytes(last.bytes_mqa), last.flops_cached.toLocaleString(), last.flops_uncached.toLocaleString());
    // The lines are drawn through at most KV_POINTS of the rows (the first, evenly spaced ones and
    // the last): they look the same, and a step's redraw costs the same at 100 tokens and 1000.
    // The CSV export has every row.
    const stride = Math.ceil(rows.length / KV_POINTS);
    const shown = rows.filter((_, i) => i % stride === 0 || i === rows.length - 1);
    const data = { rows: shown, scope: 'model', nLayers: hp.n_layers, nHeads: hp.n_heads, nKvHeads: hp.n_kv_heads, sharing: view.info.kvSharing,
      current: shown.length - 1, lang: page.state.lang };
    const n = s.len;
    const names = s.tokens.slice(0, n).map((tok) => visible(tokenLabel(tok)));
    draw('chart-mask-model', MaskChart.maskConfig({ mask: s.mask, len: n, newestRow: n > s.promptLen ? n - 1 : -1, t: { ...t, maskTitle: t.maskStepTitle },
      image: imageFor('chart-mask-model'), cellsKey: `${n}`, lang: page.state.lang, rowNames: names, colNames: names }, $('tip-mask-model')));
    draw('chart-kv-model', KvChart.kvBytesConfig(data));
    draw('chart-kv-model-flops', KvChart.kvFlopsConfig(data));
  }

  // ---------------------------------------------------------------- RoPE
  function renderRope() {
    const info = view.info, { t } = page, hp = info.hparams;
    const yarn = hp.yarn_factor ? { original: hp.yarn_original_max, factor: hp.yarn_factor } : null;
    $('rope-model-facts').textContent = t.ropeModelFacts(hp.rope_base, info.ropeStyle, hp.head_dim, yarn);
    RopeModelChart.drawPairs($('chart-rope-pairs'), { pairs: info.ropePairs, style: info.ropeStyle, lang: page.state.lang });
    draw('chart-rope-freq', RopeModelChart.freqConfig({ plain: info.rope.plain, scaled: info.rope.scaled, yarn: !!yarn, base: hp.rope_base, lang: page.state.lang }));
  }

  // ---------------------------------------------------------------- MoE
  function renderMoe(s, lazy) {
    if (!s.routing) return;
    const hp = view.info.hparams;
    // the routing at a layer follows its attention's output: the heads off up to that layer
    const key = `${view.info.name}|${s.serial}|${s.len}|${s.layer}|${offBefore(s, s.layer + 1)}|${page.state.lang}`;
    OnScreen.draw($('chart-moe'), key, () => {
      const names = s.tokens.slice(0, s.len).map((tok) => visible(tokenLabel(tok)));
      draw('chart-moe', RoutingChart.routingConfig({
        ids: s.routing.ids, weights: s.routing.weights, n: s.len, k: hp.top_k, nExperts: hp.n_experts, layer: s.layer, tokens: names,
        lang: page.state.lang, image: imageFor('chart-moe'),
      }, $('tip-moe')));
    }, lazy);
  }

  // ---------------------------------------------------------------- everything
  // The attention first (the grid and the open head), the rest of the charts in the next frame
  // when this is the first drawing: the page shows attention as soon as it can. lazy: the
  // charts off the screen wait until they come into view.
  let drawnOnce = false;
  function render(s, lazy = false) {
    view.snap = s;
    renderTokens(s);
    renderEnded(s);
    if (!s.len) return;
    renderGrid(s);
    renderHead(s, lazy);
    const rest = () => {
      if (view.snap !== s) return; // a newer snapshot draws them
      renderNext(s, lazy);
      renderKv(s);
      renderMoe(s, lazy);
    };
    if (drawnOnce) {
      rest();
      return;
    }
    drawnOnce = true;
    document.body.dataset.firstAttentionMs = String(performance.now());
    requestAnimationFrame(() => setTimeout(rest, 0));
  }

  // ---------------------------------------------------------------- exports
  // CSV rows, each cell quoted where it must be (a token may hold a comma, a quote or a newline).
  const csvOf = (rows) => csvRows(rows);
  // The heads grid as one picture: its title and what it shows above, the L / h labels, the
  // colour bar.
  function gridPng(note) {
    const { n_layers: L, n_heads: Hn } = view.info.hparams;
    const picture = Heat.gridImage({
      pictures: [...$('chart-heads').querySelectorAll('button.cell canvas')], rows: L, cols: Hn,
      rowLabels: Array.from({ length: L }, (_, l) => `L${l}`), colLabels: Array.from({ length: Hn }, (_, h) => `h${h}`),
      lo: 0, hi: 1, scale: page.state.log ? 'log' : 'linear', lang: page.state.lang,
    });
    return Heat.titledImage(picture, page.t.headsTitle, note).toDataURL('image/png');
  }
  function exportFile(chart, kind) {
    OnScreen.flush(); // the charts as they should be, those off the screen too
    const s = view.snap, info = view.info;
    const names = s ? s.tokens.slice(0, s.len).map((tok) => tokenLabel(tok)) : [];
    // A heatmap's PNG: its chart under a strip with the panel's title and what it shows.
    const scale = page.state.log ? 'log' : 'linear';
    const note = (withScale) => Heat.exportNote({ model: info.name, tokens: s ? s.len : 0, scale: withScale ? scale : null, lang: page.state.lang });
    const titled = (id, title, withScale) => Heat.titledImage(charts[id].canvas, title, note(withScale)).toDataURL('image/png');
    const png = {
      next: () => charts['chart-next'].toBase64Image(),
      heads: () => gridPng(note(true)),
      head: () => titled('chart-head', page.t.headTitle(s.layer, s.head), true),
      roles: () => titled('chart-roles', page.t.rolesTitle, false),
      kvmodel: () => charts['chart-kv-model'].toBase64Image(),
      ropemodel: () => charts['chart-rope-freq'].toBase64Image(),
      moe: () => titled('chart-moe', page.t.moeTitle, false),
    };
    const csv = {
      next: () => NextChart.csv(nextData(s), page.state.lang),
      heads: () => {
        const size = s.thumbs.size, rows = [['layer', 'head', 'row', ...Array.from({ length: size }, (_, j) => `col ${j}`)]];
        const { n_layers: L, n_heads: Hn } = info.hparams;
        for (let l = 0; l < L; l++) for (let h = 0; h < Hn; h++) for (let i = 0; i < size; i++) {
          const o = ((l * Hn + h) * size + i) * size;
          rows.push([l, h, i, ...Array.from(s.thumbs.data.subarray(o, o + size), String)]);
        }
        return csvOf(rows);
      },
      head: () => matrixCsv(s.attention, s.len, s.len, 'query\\key', names.map((name, i) => `${i} ${name}`)),
      roles: () => {
        const rows = [['layer', 'head', ...info.roleNames]];
        const { n_layers: L, n_heads: Hn } = info.hparams, R = info.roleNames.length;
        for (let l = 0; l < L; l++) for (let h = 0; h < Hn; h++) rows.push([l, h, ...Array.from(info.roles.subarray((l * Hn + h) * R, (l * Hn + h + 1) * R), String)]);
        return csvOf(rows);
      },
      kvmodel: () => KvChart.csv({ rows: s.kv }, page.state.lang),
      ropemodel: () => RopeModelChart.csv({ plain: info.rope.plain, scaled: info.rope.scaled, yarn: !!info.hparams.yarn_factor }, page.state.lang),
      moe: () => RoutingChart.csv({ ids: s.routing.ids, weights: s.routing.weights, n: s.len, k: info.hparams.top_k, nExperts: info.hparams.n_experts, tokens: names }, page.state.lang),
    };
    if (kind === 'png') return { name: `attnlab-${chart}.png`, url: png[chart]() };
    return { name: `attnlab-${chart}.csv`, url: URL.createObjectURL(new Blob([csv[chart]()], { type: 'text/csv' })) };
  }

  const lineAt = (y) => (linesGeometry && linesGeometry.rowAt ? linesGeometry.rowAt(y) : -1);

export {
  view, render, renderModel, renderRoles, renderLines, renderNext, renderNextOnly, exportFile, lineAt,
};
