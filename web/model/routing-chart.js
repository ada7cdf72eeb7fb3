// model/routing-chart.js — MoE routing in one layer: tokens (rows) × experts (columns), each
// cell the weight the router gave that expert for that token (al_model_lab_routing's top-k
// ids and weights placed in their columns; 0 where the expert was not chosen), drawn by
// heatmap.js.
import { visibleText, csvLine } from '../ui/format.js';
import * as Heat from '../ui/heatmap.js';
import { stringsOf } from '../ui/i18n.js';

  // The dense [n, nExperts] matrix: each given weight put in its expert's column, 0 elsewhere.
  function dense(d) {
    const { n, k, nExperts } = d;
    if (!Number.isInteger(n) || n < 0 || !Number.isInteger(k) || k < 1 || !Number.isInteger(nExperts) || nExperts < 1) {
      throw new RangeError(`routing chart: n ${n}, k ${k}, nExperts ${nExperts} are not sizes`);
    }
    if (d.ids.length < n * k || d.weights.length < n * k) throw new RangeError(`routing chart: ${d.ids.length} ids and ${d.weights.length} weights for ${n} × ${k}`);
    const m = new Float32Array(n * nExperts);
    for (let i = 0; i < n; i++) {
      for (let j = 0; j < k; j++) {
        const e = d.ids[i * k + j];
        if (!Number.isInteger(e) || e < 0 || e >= nExperts) throw new RangeError(`routing chart: token ${i} names expert ${e} (${nExperts} experts)`);
        m[i * nExperts + e] = d.weights[i * k + j];
      }
    }
    return m;
  }

  // d: {ids: Int32Array [n * k], weights: Float32Array [n * k], n, k, nExperts, layer, tokens:
  // string[], lang, image (optional: the canvas the cells are painted into, one per chart),
  // cellsKey (optional: what the cells come from; unchanged: not repainted)}. tooltipEl: the
  // element heatmap.js places on hover.
  function routingConfig(d, tooltipEl) {
    const t = stringsOf(d.lang).routingChart;
    const values = dense(d);
    const tokens = d.tokens || [];
    return Heat.heatmapConfig({
      values, rows: d.n, cols: d.nExperts, lo: 0, hi: 1, image: d.image, cellsKey: d.cellsKey,
      title: t.title(d.layer, d.k, d.nExperts), xLabel: t.expert, yLabel: t.token, lang: d.lang,
      // rows named by their token's text, whitespace visible (on the ticks when few, on hover)
      rowNames: Array.from({ length: d.n }, (_, i) => visibleText(tokens[i] === undefined ? '' : tokens[i])),
      format: (v) => (v === 0 ? `0 (${t.notChosen})` : v.toPrecision(6)),
    }, tooltipEl);
  }

  // The matrix: one line per token (its index, its text, its weight for each expert).
  function csv(d, lang) {
    const t = stringsOf(lang).routingChart, m = dense(d), line = csvLine, tokens = d.tokens || [];
    const lines = [line([t.csvIndex, t.csvToken, ...Array.from({ length: d.nExperts }, (_, e) => t.csvExpert(e))])];
    for (let i = 0; i < d.n; i++) {
      lines.push(line([i, tokens[i] === undefined ? '' : tokens[i], ...Array.from(m.slice(i * d.nExperts, (i + 1) * d.nExperts))]));
    }
    return lines.join('\n') + '\n';
  }

export { routingConfig, csv };
