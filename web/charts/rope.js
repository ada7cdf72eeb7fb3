// rope.js — chart 2: RoPE. The main view is the angle m · freq_i for every position m and
// pair i (wrapped or not); beside it one pair's 2-D rotation across positions, and the dot
// product of a vector with itself at relative distance d.
import * as Heat from '../ui/heatmap.js';

  // d: {angles: Float32Array[positions*pairs], positions, pairs, newest (the position of the
  // newest token, outlined; -1 for none), t, lang}
  function ropeAngleConfig(d, tooltip) {
    let lo = Infinity, hi = -Infinity;
    for (const v of d.angles) { if (v < lo) lo = v; if (v > hi) hi = v; }
    return Heat.heatmapConfig({
      values: d.angles, rows: d.positions, cols: d.pairs, lo, hi, image: d.image, cellsKey: d.cellsKey,
      title: `${d.t.ropeTitle} — ${d.t.angle}`,
      xLabel: d.t.pairIndex, yLabel: d.t.position, highlightRow: d.newest, lang: d.lang, unit: 'rad',
      format: (v) => `${v.toPrecision(6)} rad`,
    }, tooltip);
  }

  // d: {points: Float32Array[positions*2], pair, t}
  function ropePairConfig(d) {
    const data = [];
    for (let m = 0; m < d.points.length / 2; m++) data.push({ x: d.points[2 * m], y: d.points[2 * m + 1], m });
    return {
      type: 'scatter',
      data: { datasets: [{ label: `i = ${d.pair}`, data, showLine: true, pointRadius: 2, borderColor: '#21908c', backgroundColor: '#21908c' }] },
      options: {
        animation: false, responsive: true, maintainAspectRatio: false, aspectRatio: 1,
        plugins: { title: { display: true, text: d.t.pairTraceTitle }, legend: { display: false },
          tooltip: { callbacks: { label: (c) => `m=${c.raw.m}: (${c.raw.x.toPrecision(4)}, ${c.raw.y.toPrecision(4)})` } } },
        scales: { x: { title: { display: true, text: 'x_i' } }, y: { title: { display: true, text: 'x_{i+d/2}' } } },
      },
    };
  }

  // d: {dots: Float32Array[n], t}. A linear x axis over {x, y} points, given in Chart.js's
  // internal form (parsing: false): a category axis would measure one label per distance.
  function ropeRelativeConfig(d) {
    const data = Array.from(d.dots, (y, x) => ({ x, y }));
    return {
      type: 'line',
      data: { datasets: [{ label: d.t.dot, data, pointRadius: 0, borderColor: '#3b528b' }] },
      options: {
        animation: false, responsive: true, maintainAspectRatio: false, parsing: false, normalized: true,
        plugins: { title: { display: true, text: d.t.relTitle }, legend: { display: false } },
        scales: {
          x: { type: 'linear', min: 0, max: d.dots.length - 1, title: { display: true, text: d.t.distance }, ticks: { maxTicksLimit: 10, precision: 0 } },
          y: { title: { display: true, text: d.t.dot } },
        },
      },
    };
  }

export { ropeAngleConfig, ropePairConfig, ropeRelativeConfig };
