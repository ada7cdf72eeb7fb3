// train/view.js — the Train tab's charts, drawn from what the worker sends (train/worker.js): the
// loss per step (and, on the repeated task, the loss of the first copies against the repeated
// ones), each head's role scores against the step as curves, the chosen role of every layer and
// head as a heatmap at the last evaluation, and one head's attention over the probe. The rows
// arrive as they are made and are kept here as they came; nothing is computed from them. While
// it trains the charts are drawn at most once a frame, each only when what it shows changed, and
// not at all while the tab is hidden, so a click is answered at once. The heads switched off
// (the causal test: al_train_lab_set_ablation) are greyed in the grid, and the probe's losses
// with and without them (al_train_lab_probe_loss) drawn as bars.
import { visibleText, csvRows } from '../ui/format.js';
import * as Heat from '../ui/heatmap.js';
import { page } from '../ui/page.js';
  const $ = (id) => document.getElementById(id);

  const view = {
    facts: null,      // the lab: hparams, params, probe, probePieces, columns, roleNames, config; probeText
    history: [],      // per step: Float32Array row [columns]
    evals: [],        // per evaluation: Float32Array row [1 + L·H·roles]
    patterns: null,   // every head's attention over the probe at the last evaluation [L, H, T, T]
    head: { layer: 0, head: 0 }, // the head shown over the probe
    follow: true,     // the head shown is the strongest of the chosen role (until one is clicked)
    strongest: [],    // per role: the strongest head at the last evaluation, {layer, head}
    inductionPassed: -1, // the step some head's induction score first passed the threshold; -1
    jump: null,       // [from, to]: the steps the default run's induction head forms between
    threshold: NaN,   // al_lab_role_threshold
    ablation: [],     // the heads switched off in the probe's evaluation, [[layer, head], ...] (the core's)
    probeLoss: null,  // al_train_lab_probe_loss at the last measurement: {step, first_half, ...}
    probeRows: [],    // every measurement received: {heads: [[l, h], ...], loss}, for the CSV
  };
  const charts = {};
  const images = {};
  const imageFor = (id) => images[id] || (images[id] = document.createElement('canvas'));
  const draw = (id, config) => page.drawChart(charts, id, config);

  function reset(facts) {
    // The probe's tokens as the chips and the axes show them (a lone byte of a character as its
    // byte, never "�").
    if (facts) facts.probeText = facts.probePieces.map((bytes) => Heat.tokenLabel({ text: '', bytes }));
    view.facts = facts;
    view.history = [];
    view.evals = [];
    view.patterns = null;
    view.strongest = [];
    view.inductionPassed = -1;
    view.follow = true;
    view.ablation = [];
    view.probeLoss = null;
    view.probeRows = [];
    if (facts) view.head = { layer: Math.min(view.head.layer, facts.hparams.n_layers - 1), head: Math.min(view.head.head, facts.hparams.n_heads - 1) };
  }

  // Appends a progress message's rows; what changed is drawn at the next frame.
  function add(progress) {
    const f = view.facts;
    if (!f) return;
    const c = f.columns.length, w = 1 + f.hparams.n_layers * f.hparams.n_heads * f.roleNames.length;
    for (let i = 0; i + c <= progress.history.length; i += c) view.history.push(progress.history.subarray(i, i + c));
    for (let i = 0; i + w <= progress.evals.length; i += w) view.evals.push(progress.evals.subarray(i, i + w));
    if (progress.patterns) view.patterns = progress.patterns, patternSerial++;
    view.strongest = progress.strongest || view.strongest;
    view.inductionPassed = progress.inductionPassed;
    const ablated = setAblation(progress);
    schedule({ loss: progress.history.length > 0, roles: progress.evals.length > 0 || ablated, pattern: !!progress.patterns, ablation: ablated });
  }

  // The heads off and the probe's losses from the worker ({ablation, probeLoss}: a progress
  // message or the answer to a switch); true when either changed.
  function setAblation({ ablation, probeLoss }) {
    if (!ablation || !probeLoss) return false;
    const heads = JSON.stringify(ablation), last = view.probeRows[view.probeRows.length - 1];
    const changed = heads !== JSON.stringify(view.ablation) || !view.probeLoss || probeLoss.step !== view.probeLoss.step ||
      probeLoss.repeated_half_off !== view.probeLoss.repeated_half_off;
    view.ablation = ablation;
    view.probeLoss = probeLoss;
    if (!last || JSON.stringify(last.heads) !== heads || JSON.stringify(last.loss) !== JSON.stringify(probeLoss)) view.probeRows.push({ heads: ablation, loss: probeLoss });
    return changed;
  }
  const isOff = (l, h) => view.ablation.some(([a, b]) => a === l && b === h);

  // ---------------------------------------------------------------- drawing, once a frame
  let patternSerial = 0; // counts the patterns received: what the head's picture was painted from
  const dirty = { loss: false, roles: false, pattern: false, ablation: false };
  let frame = 0;
  function schedule(parts = { loss: true, roles: true, pattern: true, ablation: true }) {
    for (const k of Object.keys(dirty)) dirty[k] = dirty[k] || !!parts[k];
    if (!frame) frame = requestAnimationFrame(drawDirty);
  }
  // The time each drawing takes is recorded as a User Timing measure 'attnlab:train-draw' (its
  // detail: what was drawn), for DevTools and the bench.
  function drawDirty() {
    frame = 0;
    if (!view.facts || $('view-train').hidden) return; // drawn when the tab is shown (schedule)
    const t0 = performance.now(), detail = { ...dirty };
    if (dirty.loss) renderLoss();
    if (dirty.roles) renderRoles();
    if (dirty.pattern) renderPattern();
    if (dirty.ablation) renderAblation();
    dirty.loss = dirty.roles = dirty.pattern = dirty.ablation = false;
    performance.measure('attnlab:train-draw', { start: t0, detail });
  }

  const roleIndex = () => Math.min(Math.max(0, page.state.trole), view.facts.roleNames.length - 1);
  const headName = (l, h) => `L${l} H${h}`;
  const MARK = '#d62728'; // the jump's line on the loss chart
  const COLOURS = ['#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b', '#e377c2', '#7f7f7f', '#bcbd22', '#17becf'];

  // ---------------------------------------------------------------- loss
  function renderLoss() {
    const { t } = page, f = view.facts;
    const col = (name) => f.columns.indexOf(name);
    const series = [['loss', t.trainLossAll, '#1f77b4']];
    if (f.config.data === 'repeat') series.push(['first_half', t.trainLossFirst, '#ff7f0e'], ['repeated_half', t.trainLossRepeated, '#2ca02c']);
    const datasets = series.map(([name, label, colour]) => ({
      label, borderColor: colour, backgroundColor: colour, borderWidth: 1.5, pointRadius: 0,
      data: view.history.map((row, i) => ({ x: i + 1, y: row[col(name)] })),
    }));
    // The step the induction score passed the threshold (the core's), as a vertical line on an
    // axis of its own from the bottom of the chart to the top.
    const at = view.inductionPassed;
    if (at >= 0) {
      datasets.push({
        label: t.trainJumpMark(view.threshold, at), borderColor: MARK, backgroundColor: MARK, borderWidth: 2, borderDash: [6, 4],
        pointRadius: 0, yAxisID: 'mark', data: [{ x: at, y: 0 }, { x: at, y: 1 }],
      });
    }
    draw('chart-loss', {
      type: 'line',
      data: { datasets },
      options: {
        animation: false, responsive: true, maintainAspectRatio: false, parsing: false,
        scales: {
          x: { type: 'linear', title: { display: true, text: t.trainStepAxis } },
          y: { title: { display: true, text: t.trainLossAxis } },
          mark: { type: 'linear', axis: 'y', position: 'right', display: false, min: 0, max: 1 },
        },
        plugins: { title: { display: true, text: t.trainLossTitle } },
      },
    });
  }

  // When the jump usually comes (the default run's, measured by the core's runs), and this run's.
  function renderJump() {
    const { t } = page;
    $('train-jump').textContent = view.jump ? t.trainJump(view.jump[0], view.jump[1], view.threshold,
      view.facts ? view.inductionPassed : null) : '';
  }

  // ---------------------------------------------------------------- roles
  function renderRoles() {
    const { t } = page, f = view.facts;
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
    const grid = Heat.heatmapConfig({
      values, rows: L, cols: Hn, lo: 0, hi: 1, title: t.trainRolesGridTitle(t.roleNames[f.roleNames[role]], last ? last[0] : 0),
      xLabel: t.headAxis, yLabel: t.layerAxis, format: (v) => v.toFixed(3), image: imageFor('chart-roles-grid'), lang: page.state.lang,
    }, $('tip-roles-grid'));
    grid.plugins.push(HEADS_OFF);
    grid.options.plugins.headsOff = { heads: view.ablation.map((p) => [...p]), text: t.trainAblateGridOff,
      values: view.ablation.map(([l, h]) => (last ? values[l * Hn + h].toFixed(2) : '')) }; // as the cells write them
    grid.layoutKey += JSON.stringify(grid.options.plugins.headsOff); // options of its own: in the key
    draw('chart-roles-grid', grid);
  }

  // The heads switched off, their cells painted grey with the word and the score on them; what
  // was drawn is kept on the canvas (canvas.headsOffDrawn: [[layer, head], ...]) for whoever
  // checks it.
  const OFF_GREY = '#5f5f5f';
  const HEADS_OFF = {
    id: 'headsOff',
    afterDraw(chart, _args, opts) {
      const heads = (opts && opts.heads) || [], { x, y } = chart.scales, ctx = chart.ctx;
      ctx.save();
      heads.forEach(([l, h], i) => {
        const x0 = x.getPixelForValue(h - 0.5), x1 = x.getPixelForValue(h + 0.5);
        const y0 = y.getPixelForValue(l - 0.5), y1 = y.getPixelForValue(l + 0.5);
        const left = Math.min(x0, x1), top = Math.min(y0, y1), w = Math.abs(x1 - x0), hgt = Math.abs(y1 - y0);
        ctx.fillStyle = OFF_GREY;
        ctx.fillRect(left, top, w, hgt);
        ctx.fillStyle = '#fff';
        ctx.font = 'bold 14px sans-serif';
        ctx.textAlign = 'center';
        ctx.textBaseline = 'middle';
        const small = Math.min(12, hgt / 4);
        ctx.fillText(opts.text, left + w / 2, top + hgt / 2 - (opts.values[i] ? small : 0));
        if (opts.values[i]) {
          ctx.font = `${small}px sans-serif`;
          ctx.fillText(opts.values[i], left + w / 2, top + hgt / 2 + small);
        }
      });
      ctx.restore();
      chart.canvas.headsOffDrawn = heads;
    },
  };

  // ---------------------------------------------------------------- one head over the probe
  // The shown head's pattern: {layer, head, data [T, T]}, or null before the first evaluation.
  function pattern() {
    const p = view.patterns, n = view.facts && view.facts.probe.length;
    if (!p) return null;
    const { layer, head } = view.head, at = (layer * view.facts.hparams.n_heads + head) * n * n;
    return { layer, head, data: p.subarray(at, at + n * n) };
  }

  function renderPattern() {
    const { t } = page, f = view.facts, p = pattern();
    if (!p) return;
    const n = f.probe.length;
    const names = f.probeText.map((s) => visibleText(s));
    $('train-head-title').textContent = t.trainHeadTitle(p.layer, p.head) +
      (view.follow ? t.trainHeadFollowed(t.roleNames[f.roleNames[roleIndex()]]) : '') + (isOff(p.layer, p.head) ? t.trainHeadOff : '');
    draw('chart-train-head', Heat.heatmapConfig({
      values: p.data, rows: n, cols: n, lo: 0, hi: 1, cellsKey: `${patternSerial} ${p.layer} ${p.head}`, title: t.trainHeadChartTitle(view.evals.length ? view.evals[view.evals.length - 1][0] : 0),
      xLabel: t.keyToken, yLabel: t.queryToken, format: (v) => v.toFixed(3), image: imageFor('chart-train-head'),
      rowNames: names, colNames: names, lang: page.state.lang,
    }, $('tip-train-head')));
  }

  // ---------------------------------------------------------------- heads switched off
  // The panel's words (the heads off, the losses as the core measured them) and the bars of the
  // probe's first and second copies, every head on against the heads off.
  const offNames = () => view.ablation.map(([l, h]) => headName(l, h));
  function renderAblation() {
    const { t } = page, p = view.probeLoss, names = offNames();
    $('train-ablate-list').textContent = view.facts ? t.trainAblateList(names) : '';
    $('train-ablate-result').textContent = p && Number.isFinite(p.first_half) ? t.trainAblateResult(p, names) : '';
    if (!p) return;
    const bars = (label, colour, first, repeated) => ({ label, backgroundColor: colour, borderColor: colour, data: [first, repeated] });
    draw('chart-ablation', {
      type: 'bar',
      data: {
        labels: [t.trainAblateFirst, t.trainAblateRepeated],
        datasets: [bars(t.trainAblatePlain, '#2ca02c', p.first_half, p.repeated_half),
          bars(names.length ? t.trainAblateOff(names) : t.trainAblateOffNone, '#6b6b6b', p.first_half_off, p.repeated_half_off)],
      },
      options: {
        animation: false, responsive: true, maintainAspectRatio: false,
        scales: { y: { beginAtZero: true, title: { display: true, text: t.trainLossAxis } } },
        plugins: { title: { display: true, text: t.trainAblateChartTitle(p.step) } },
      },
    });
  }

  // Everything at once (a new language, a new lab).
  function render() {
    renderJump();
    renderAblation();
    if (!view.facts) return;
    renderLoss();
    renderRoles();
    renderPattern();
  }

  // ---------------------------------------------------------------- exports
  const csvOf = (rows) => csvRows(rows);
  // A chart's PNG: the loss as drawn; the roles' curves with the grid of the last evaluation
  // under them; the head over the probe; each under a strip with its panel's title.
  function png(chart) {
    const { t } = page, f = view.facts;
    const note = Heat.exportNote({ tokens: f.probe.length, lang: page.state.lang });
    if (chart === 'loss') return Heat.titledImage(charts['chart-loss'].canvas, t.trainLossTitle, '');
    if (chart === 'ablation') return Heat.titledImage(charts['chart-ablation'].canvas, t.trainAblateTitle, t.trainAblateList(offNames()));
    if (chart === 'head') {
      const p = pattern();
      return Heat.titledImage(charts['chart-train-head'].canvas, p ? t.trainHeadTitle(p.layer, p.head) : t.trainHeadNone, note);
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
    return Heat.titledImage(both, t.trainRolesTitle, note);
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
      // every measurement of the probe's losses received, with the heads off at the time
      ablation: () => csvOf([['step', 'heads_off', 'first_half', 'repeated_half', 'first_half_off', 'repeated_half_off'],
        ...view.probeRows.map(({ heads, loss }) => [loss.step, heads.map(([l, h]) => headName(l, h)).join(' '), loss.first_half,
          loss.repeated_half, loss.first_half_off, loss.repeated_half_off].map(String))]),
      head: () => {
        const p = pattern(), n = f.probe.length;
        const rows = [['query\\key', ...f.probeText.map((s, j) => `${j} ${s}`)]];
        for (let i = 0; i < n; i++) rows.push([`${i} ${f.probeText[i]}`, ...Array.from(p.data.subarray(i * n, (i + 1) * n), String)]);
        return csvOf(rows);
      },
    };
    return { name: `attnlab-train-${chart}.csv`, url: URL.createObjectURL(new Blob([csv[chart]()], { type: 'text/csv' })) };
  }

export {
  view, reset, add, setAblation, isOff, schedule, render, renderJump, renderRoles, renderPattern, renderAblation,
  pattern, exportFile, charts,
};
