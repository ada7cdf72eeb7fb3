// attn.js — chart 3: attention weights of the chosen head (rows: queries, columns: keys). The
// page also paints every head as a small image and shows the GQA map beside it (layer/render.js).
import * as Heat from '../ui/heatmap.js';

  // d: {weights: Float32Array[len*len], len, head, kvHead, newestRow, t, lang}
  function attnConfig(d, tooltip) {
    return Heat.heatmapConfig({
      values: d.weights, rows: d.len, cols: d.len, lo: 0, hi: 1, image: d.image, cellsKey: d.cellsKey,
      title: `${d.t.attnTitle} — head ${d.head} (${d.t.kvHead} ${d.kvHead})`,
      xLabel: d.t.key, yLabel: d.t.query, highlightRow: d.newestRow, lang: d.lang,
      format: (v) => v.toPrecision(6),
    }, tooltip);
  }

export { attnConfig };
