// ffn.js — chart 5: chapter 04's FFN and MoE, from the numbers the core keeps as the demo prints
// them (core.demoFfnCurves, demoRouter, demoExpertLoad): SiLU against ReLU, the router's softmax
// with each token's top-k outlined, the chosen experts' weights renormalised, and each expert's
// load against its mean routing probability with the balanced share and the balancing loss.
import * as Heat from '../ui/heatmap.js';

  const SILU = '#21908c', RELU = '#440154', LOAD = '#3b528b', PROB = '#5ec962', IDEAL = '#c62828';

  // d: {line: {x, silu, relu} (a fine curve), points: {x, silu, relu} (the example's inputs), t}.
  // A linear x axis over {x, y} points.
  function curvesConfig(d) {
    const pts = (xs, ys) => Array.from(xs, (x, i) => ({ x, y: ys[i] }));
    return {
      type: 'scatter',
      data: {
        datasets: [
          { label: d.t.siluCurve, data: pts(d.line.x, d.line.silu), showLine: true, pointRadius: 0, pointStyle: 'line', borderColor: SILU, backgroundColor: SILU, borderWidth: 2 },
          { label: d.t.reluCurve, data: pts(d.line.x, d.line.relu), showLine: true, pointRadius: 0, pointStyle: 'line', borderColor: RELU, backgroundColor: RELU, borderDash: [6, 3], borderWidth: 2 },
          { label: d.t.siluPoints, data: pts(d.points.x, d.points.silu), showLine: false, pointRadius: 4, pointStyle: 'circle', borderColor: SILU, backgroundColor: '#fff', borderWidth: 2 },
        ],
      },
      options: {
        animation: false, responsive: true, maintainAspectRatio: false,
        plugins: { title: { display: true, text: d.t.curvesTitle }, legend: { labels: { usePointStyle: true } },
          tooltip: { callbacks: { label: (c) => `${c.dataset.label}: x = ${c.raw.x}, ${c.raw.y.toPrecision(4)}` } } },
        scales: {
          x: { type: 'linear', min: -3, max: 3, title: { display: true, text: d.t.curveX }, ticks: { stepSize: 1 } },
          y: { title: { display: true, text: d.t.curveY } },
        },
      },
    };
  }

  // d: {router: {scores|weights [tokens*experts], chosen [tokens*experts] (1: a top-k choice),
  // tokens, experts, topK}, which: 'scores' or 'weights', t, lang, image}; tooltip: the element
  // heatmap.js places on hover. Tokens are rows, experts columns, the values in the cells.
  function routerConfig(d, tooltip) {
    const r = d.router;
    const chosen = [];
    for (let i = 0; i < r.chosen.length; i++) if (r.chosen[i] === 1) chosen.push(i);
    const scores = d.which === 'scores';
    return Heat.heatmapConfig({
      values: r[d.which], rows: r.tokens, cols: r.experts, lo: 0, hi: 1, image: d.image, cellsKey: d.cellsKey,
      title: scores ? [d.t.routerTitle(r.topK, r.experts), d.t.routerKey(r.topK)] : d.t.renormTitle(r.topK),
      xLabel: d.t.expert, yLabel: d.t.token, lang: d.lang, outlineCells: scores ? chosen : null,
      cellText: (v) => (scores || v !== 0 ? v.toFixed(2) : '–'), format: (v) => v.toPrecision(4),
    }, tooltip);
  }

  // d: {load: {load, prob, ideal, aux} [experts], t}
  function loadConfig(d) {
    const l = d.load;
    const labels = Array.from(l.load, (_, e) => `${d.t.expert} ${e}`);
    return {
      type: 'bar',
      data: {
        labels,
        datasets: [
          { label: d.t.loadBars, data: Array.from(l.load), backgroundColor: LOAD },
          { label: d.t.probBars, data: Array.from(l.prob), backgroundColor: PROB },
          { type: 'line', label: d.t.idealLine(l.ideal[0]), data: Array.from(l.ideal), borderColor: IDEAL, backgroundColor: IDEAL, borderDash: [6, 3], pointRadius: 0, borderWidth: 2 },
        ],
      },
      options: {
        animation: false, responsive: true, maintainAspectRatio: false,
        plugins: { title: { display: true, text: d.t.loadTitle(l.aux[0].toFixed(6)) } },
        scales: { x: { title: { display: true, text: d.t.expert } }, y: { beginAtZero: true, title: { display: true, text: d.t.share } } },
      },
    };
  }

export { curvesConfig, routerConfig, loadConfig };
