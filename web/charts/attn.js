// attn.js — chart 3: attention weights of the chosen head (rows: queries, columns: keys),
// the same for every head in a grid, and the GQA map of which query heads share a KV head.
(function (root) {
  'use strict';
  const H = root.AttnLabHeatmap || (typeof require === 'function' && require('../heatmap.js'));

  // d: {weights: Float32Array[len*len], len, head, kvHead, newestRow, t}
  function attnConfig(d, tooltip) {
    return H.heatmapConfig({
      values: d.weights, rows: d.len, cols: d.len, lo: 0, hi: 1,
      title: `${d.t.attnTitle} — head ${d.head} (${d.t.kvHead} ${d.kvHead})`,
      xLabel: d.t.key, yLabel: d.t.query, highlightRow: d.newestRow,
      format: (v) => v.toPrecision(6),
    }, tooltip);
  }

  // A small heatmap per head for the grid (no axes titles).
  function attnThumbConfig(d) {
    const c = H.heatmapConfig({
      values: d.weights, rows: d.len, cols: d.len, lo: 0, hi: 1,
      title: `h${d.head} → kv${d.kvHead}`, xLabel: '', yLabel: '', format: (v) => v.toPrecision(4),
    }, null);
    c.options.scales.x.display = false;
    c.options.scales.y.display = false;
    return c;
  }

  const api = { attnConfig, attnThumbConfig };
  if (typeof module === 'object' && module.exports) module.exports = api;
  else root.AttnLabAttnChart = api;
})(typeof globalThis !== 'undefined' ? globalThis : this);
