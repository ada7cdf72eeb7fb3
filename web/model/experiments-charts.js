// model/experiments-charts.js — the Experiments panel's bar charts as Chart.js configs (its
// heatmaps are heatmap.js's): the next token's probability with every head on against these
// heads off, and the embedding's and each FFN's direct share of a token's logit; and the CSV
// rows of each of the panel's exports. Data in, config or rows out: no numbers made here.
import { visibleText } from '../ui/format.js';
  const ON = '#4e79a7';   // every head on
  const OFF = '#e15759';  // these heads off
  const SHARE = '#59a14f';
  const visible = (text) => visibleText(text);
  const tokenName = (label, id) => (label ? `"${visible(label)}" (#${id})` : `#${id}`);

  // d: {ids (most likely first with the heads off), labels {id: text}, all, off: Float32Array
  // [vocab] each, title, names: {all, off}, xTitle, yTitle, log}
  function compareConfig(d) {
    const ids = Array.from(d.ids);
    const xLabels = ids.map((id) => tokenName(d.labels[id], id));
    const dataset = (label, probs, colour) => ({ label, data: ids.map((id) => probs[id]), backgroundColor: colour });
    return {
      type: 'bar',
      data: { labels: xLabels, datasets: [dataset(d.names.all, d.all, ON), dataset(d.names.off, d.off, OFF)] },
      options: {
        animation: false, responsive: true, maintainAspectRatio: false,
        interaction: { mode: 'index', intersect: false },
        plugins: {
          title: { display: true, text: d.title },
          legend: { display: true },
          tooltip: { callbacks: { label: (c) => `${c.dataset.label}: ${c.raw.toFixed(4)}` } },
        },
        scales: {
          x: { title: { display: true, text: d.xTitle }, ticks: { autoSkip: false, maxRotation: 60 } },
          y: { type: 'linear', min: 0, max: 1, title: { display: true, text: d.yTitle } },
        },
      },
    };
  }

  // d: {names: string[] (the embedding, then each FFN), values (the same order), title, yTitle}
  function sharesConfig(d) {
    return {
      type: 'bar',
      data: { labels: d.names, datasets: [{ label: d.yTitle, data: Array.from(d.values), backgroundColor: SHARE }] },
      options: {
        animation: false, responsive: true, maintainAspectRatio: false,
        plugins: {
          title: { display: true, text: d.title },
          legend: { display: false },
          tooltip: { callbacks: { label: (c) => `${c.raw.toFixed(4)}` } },
        },
        scales: { x: { ticks: { autoSkip: false } }, y: { title: { display: true, text: d.yTitle } } },
      },
    };
  }

  // ---------------------------------------------------------------- CSV rows
  // The next token both ways: token, id, probability with every head on, with these off.
  const nextRows = (d) => [['token', 'id', 'p_all_heads', 'p_heads_off'],
    ...Array.from(d.ids, (id) => [d.labels[id] || '', id, d.all[id], d.off[id]])];
  // The lens: one row per layer read out and position: the top token, its id, its probability.
  function lensRows(d) {
    const rows = [['read_out', 'position', 'token_at_position', 'top_token', 'top_id', 'probability']];
    for (let r = 0; r < d.rows; r++) {
      for (let j = 0; j < d.cols; j++) {
        const id = d.top[r * d.cols + j];
        rows.push([d.rowNames[r], j, d.colNames[j], d.labels[id] || '', id, d.prob[r * d.cols + j]]);
      }
    }
    return rows;
  }
  // The attribution: each head's share, then the embedding's and each FFN's.
  function dlaRows(d) {
    const rows = [['part', 'layer', 'head', 'logit_share']];
    for (let l = 0; l < d.layers; l++) for (let h = 0; h < d.heads; h++) rows.push(['head', l, h, d.values[l * d.heads + h]]);
    rows.push(['embedding', '', '', d.embed]);
    Array.from(d.ffn).forEach((v, l) => rows.push(['ffn', l, '', v]));
    return rows;
  }
  // The patch: each head's and each stream position's raw metric and share recovered (empty
  // when the two runs' metrics are equal), then the two runs' metrics.
  function patchRows(d) {
    const share = (v) => (d.recovered ? v : '');
    const rows = [['patched', 'layer', 'head_or_position', 'token', 'metric', 'recovered']];
    for (let l = 0; l < d.layers; l++) for (let h = 0; h < d.heads; h++) {
      const i = l * d.heads + h;
      rows.push(['head', l, h, '', d.rawHeads[i], share(d.shareHeads[i])]);
    }
    for (let l = 0; l < d.layers; l++) for (let j = 0; j < d.n; j++) {
      const i = l * d.n + j;
      rows.push(['resid', l, j, d.tokens[j], d.rawResid[i], share(d.shareResid[i])]);
    }
    rows.push(['clean', '', '', '', d.clean, 1], ['corrupt', '', '', '', d.corrupt, 0]);
    return rows;
  }

export { compareConfig, sharesConfig, nextRows, lensRows, dlaRows, patchRows, tokenName };
