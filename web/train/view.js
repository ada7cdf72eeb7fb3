// train/view.js — the Train tab's charts, drawn from what the worker sends (train/worker.js): the
// loss per step (and, on the repeated task, the loss of the first copies against the repeated
// ones), each head's role scores against the step as curves, the chosen role of every layer and
// head as a heatmap at the last evaluation, and one head's attention over the probe. The rows
// arrive as they are made and are kept here as they came; nothing is computed from them.
(function (root) {
  'use strict';
  const P = root.AttnLabPage;
  const $ = (id) => document.getElementById(id);
  const H = () => root.AttnLabHeatmap;

  const view = {
    facts: null,      // the lab: hparams, params, probe, probePieces, columns, roleNames, config; probeText
    history: [],      // per step: Float32Array row [columns]
    evals: [],        // per evaluation: Float32Array row [1 + L·H·roles]
    pattern: null,    // {layer, head, data}
  };
  const charts = {};
  const images = {};
  const imageFor = (id) => images[id] || (images[id] = document.createElement('canvas'));
  const draw = (id, config) => P.drawChart(charts, id, config);

  function reset(facts) {
    // The probe's tokens as the chips and the axes show them (a lone byte of a character as its
    // byte, never "�").
    if (facts) facts.probeText = facts.probePieces.map((bytes) => H().tokenLabel({ text: '', bytes }));
    view.facts = facts;
    view.history = [];
    view.evals = [];
    view.pattern = null;
  }

  // Appends a progress message's rows.
  function add(progress) {
    const f = view.facts;
    if (!f) return;
    const c = f.columns.length, w = 1 + f.hparams.n_layers * f.hparams.n_heads * f.roleNames.length;
    for (let i = 0; i + c <= progress.history.length; i += c) view.history.push(progress.history.subarray(i, i + c));
    for (let i = 0; i + w <= progress.evals.length; i += w) view.evals.push(progress.evals.subarray(i, i + w));
  }

  const roleIndex = () => Math.min(Math.max(0, P.state.trole), view.facts.roleNames.length - 1);
  const headName = (l, h) => `L${l} H${h}`;
  const COLOURS = ['#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b', '#e377c2', '#7f7f7f', '#bcbd22', '#17becf'];

  // ---------------------------------------------------------------- loss
  function renderLoss() {
    const { t } = P, f = view.facts;
    const col = (name) => f.columns.indexOf(name);
    const series = [['loss', t.trainLossAll, '#1f77b4']];
    if (f.config.data === 'repeat') series.push(['first_half', t.trainLossFirst, '#ff7f0e'], ['repeated_half', t.trainLossRepeated, '#2ca02c']);
    draw('chart-loss', {
      type: 'line',
      data: {
        datasets: series.map(([name, label, colour]) => ({
          label, borderColor: colour, backgroundColor: colour, borderWidth: 1.5, pointRadius: 0,
          data: view.history.map((row, i) => ({ x: i + 1, y: row[col(name)] })),
        })),
      },
      options: {
        animation: false, responsive: true, maintainAspectRatio: false, parsing: false,
        scales: { x: { type: 'linear', title: { display: true, text: t.trainStepAxis } }, y: { title: { display: true, text: t.trainLossAxis } } },
        plugins: { title: { display: true, text: t.trainLossTitle } },
      },
    });
  }

  // ---------------------------------------------------------------- roles
  function renderRoles() {
    const { t } = P, f = view.facts;
    const { n_layers: L, n_heads: Hn } = f.hparams, R = f.roleNames.length, role = roleIndex();
    const datasets = [];
    for (let l = 0; l < L; l++) for (let h = 0; h < Hn; h++) {
      const colour = COLOURS[(l * Hn + h) % COLOURS.length];
      datasets.push({
        label: headName(l, h), borderColor: colour, backgroundColor: colour, borderWidth: 1.5, pointRadius: 0,
        borderDash: l % 2 ? [5, 3] : [],
        data: view.evals.map((row) => ({ x: row[0], y: row[1 + (l * Hn + h) * R + role] })),
      });
    }
    draw('chart-roles-train', {
      type: 'line',
      data: { datasets },
      options: {
        animation: false, responsive: true, maintainAspectRatio: false, parsing: false,
        scales: { x: { type: 'linear', title: { display: true, text: t.trainStepAxis } }, y: { min: 0, max: 1, title: { display: true, text: t.roleNames[f.roleNames[role]] } } },
        plugins: { title: { display: true, text: t.trainRolesCurveTitle(t.roleNames[f.roleNames[role]]) }, legend: { display: L * Hn <= 16 } },
      },
    });
    const last = view.evals[view.evals.length - 1];
    const values = new Float32Array(L * Hn);
    for (let i = 0; i < L * Hn; i++) values[i] = last ? last[1 + i * R + role] : NaN;
    draw('chart-roles-grid', H().heatmapConfig({
      values, rows: L, cols: Hn, lo: 0, hi: 1, title: t.trainRolesGridTitle(t.roleNames[f.roleNames[role]], last ? last[0] : 0),
      xLabel: t.headAxis, yLabel: t.layerAxis, format: (v) => v.toFixed(3), image: imageFor('chart-roles-grid'), lang: P.state.lang,
    }, $('tip-roles-grid')));
  }

  // ---------------------------------------------------------------- one head over the probe
  function renderPattern() {
    const { t } = P, f = view.facts, p = view.pattern;
    if (!p) return;
    const n = f.probe.length;
    const names = f.probeText.map((s) => root.AttnLabNextChart.visibleText(s));
    $('train-head-title').textContent = t.trainHeadTitle(p.layer, p.head);
    draw('chart-train-head', H().heatmapConfig({
      values: p.data, rows: n, cols: n, lo: 0, hi: 1, title: t.trainHeadChartTitle(view.evals.length ? view.evals[view.evals.length - 1][0] : 0),
      xLabel: t.keyToken, yLabel: t.queryToken, format: (v) => v.toFixed(3), image: imageFor('chart-train-head'),
      rowNames: names, colNames: names, lang: P.state.lang,
    }, $('tip-train-head')));
  }

  function render() {
    if (!view.facts) return;
    renderLoss();
    renderRoles();
    renderPattern();
  }

  // ---------------------------------------------------------------- exports
  const csvOf = (rows) => root.AttnLabNextChart.csvRows(rows);
  // A chart's PNG: the loss as drawn; the roles' curves with the grid of the last evaluation
  // under them; the head over the probe; each under a strip with its panel's title.
  function png(chart) {
    const { t } = P, f = view.facts, H_ = H();
    const note = H_.exportNote({ tokens: f.probe.length, lang: P.state.lang });
    if (chart === 'loss') return H_.titledImage(charts['chart-loss'].canvas, t.trainLossTitle, '');
    if (chart === 'head') {
      const p = view.pattern;
      return H_.titledImage(charts['chart-train-head'].canvas, p ? t.trainHeadTitle(p.layer, p.head) : t.trainHeadNone, note);
    }
    const curves = charts['chart-roles-train'].canvas, grid = charts['chart-roles-grid'].canvas;
    const both = document.createElement('canvas');
    both.width = Math.max(curves.width, grid.width);
    both.height = curves.height + grid.height;
    const ctx = both.getContext('2d');
    ctx.fillStyle = '#fff';
    ctx.fillRect(0, 0, both.width, both.height);
    ctx.drawImage(curves, 0, 0);
    ctx.drawImage(grid, 0, curves.height);
    return H_.titledImage(both, t.trainRolesTitle, note);
  }
  function exportFile(chart, kind) {
    const f = view.facts;
    if (kind === 'png') return { name: `attnlab-train-${chart}.png`, url: png(chart).toDataURL('image/png') };
    const { n_layers: L, n_heads: Hn } = f.hparams;
    const csv = {
      loss: () => csvOf([['step', ...f.columns], ...view.history.map((row, i) => [i + 1, ...Array.from(row, String)])]),
      roles: () => {
        const names = [];
        for (let l = 0; l < L; l++) for (let h = 0; h < Hn; h++) for (const r of f.roleNames) names.push(`${headName(l, h)} ${r}`);
        return csvOf([['step', ...names], ...view.evals.map((row) => Array.from(row, String))]);
      },
      head: () => {
        const p = view.pattern, n = f.probe.length;
        const rows = [['query\\key', ...f.probeText.map((s, j) => `${j} ${s}`)]];
        for (let i = 0; i < n; i++) rows.push([`${i} ${f.probeText[i]}`, ...Array.from(p.data.subarray(i * n, (i + 1) * n), String)]);
        return csvOf(rows);
      },
    };
    return { name: `attnlab-train-${chart}.csv`, url: URL.createObjectURL(new Blob([csv[chart]()], { type: 'text/csv' })) };
  }

  root.AttnLabTrainView = { view, reset, add, render, renderRoles, renderPattern, exportFile, charts };
})(typeof globalThis !== 'undefined' ? globalThis : this);
