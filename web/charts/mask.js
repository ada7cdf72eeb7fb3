// mask.js — chart 1: the causal mask as applied to every query processed so far
// (rows: queries, columns: keys; 0 = visible, -inf = masked), the newest row outlined.
import * as Heat from '../ui/heatmap.js';

  // d: {mask: Float32Array[len*len], len, newestRow, t (strings), lang, rowNames/colNames
  // (the tokens; optional)}
  function maskConfig(d, tooltip) {
    return Heat.heatmapConfig({
      values: d.mask, rows: d.len, cols: d.len, lo: -1, hi: 0, image: d.image, cellsKey: d.cellsKey,
      title: `${d.t.maskTitle} — ${d.t.allowed} / ${d.t.masked}`,
      xLabel: d.t.key, yLabel: d.t.query, highlightRow: d.newestRow, lang: d.lang, rowNames: d.rowNames, colNames: d.colNames,
      // two swatches in place of a colour bar: the mask holds two values
      legend: [{ value: 0, text: d.t.allowed }, { value: -Infinity, text: d.t.masked }],
      cellText: (v) => (Number.isFinite(v) ? '0' : '−∞'),
      format: (v) => (Number.isFinite(v) ? `${d.t.allowed}` : `${d.t.masked}`),
    }, tooltip);
  }

export { maskConfig };
