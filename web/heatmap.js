// heatmap.js — a matrix drawn as ONE image inside a Chart.js chart area: Chart.js draws the
// axes, ticks and title; this plugin paints the cells. One element per cell
// (chartjs-chart-matrix) took 110–400 ms per update at 128–256 rows in headless Chromium; one
// image stays at a few ms up to 1024 rows. Hover shows the cell's row, column and value.
(function (root) {
  'use strict';

  // Viridis (perceptually uniform, readable with colour-blindness), 9 stops.
  const VIRIDIS = [
    [68, 1, 84], [71, 44, 122], [59, 81, 139], [44, 113, 142], [33, 144, 141],
    [39, 173, 129], [92, 200, 99], [170, 220, 50], [253, 231, 37],
  ];
  const MASKED = [60, 60, 60];

  // Colour of t in [0, 1] on the viridis ramp.
  function viridis(t) {
    const x = Math.min(1, Math.max(0, t)) * (VIRIDIS.length - 1);
    const i = Math.min(VIRIDIS.length - 2, Math.floor(x));
    const f = x - i;
    const a = VIRIDIS[i], b = VIRIDIS[i + 1];
    return [a[0] + (b[0] - a[0]) * f, a[1] + (b[1] - a[1]) * f, a[2] + (b[2] - a[2]) * f];
  }
  // The ramp sampled at 256 levels, packed as RGBA words, for painting.
  const RAMP = new Uint32Array(256);
  const LITTLE = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;
  const pack = (c) => (LITTLE ? (255 << 24) | (Math.round(c[2]) << 16) | (Math.round(c[1]) << 8) | Math.round(c[0])
    : (Math.round(c[0]) << 24) | (Math.round(c[1]) << 16) | (Math.round(c[2]) << 8) | 255) >>> 0;
  for (let i = 0; i < 256; i++) RAMP[i] = pack(viridis(i / 255));
  const MASKED_WORD = pack(MASKED);

  // The colour level (0..255) of v for a scale: 'linear' maps lo..hi evenly; 'log' maps
  // LOG_FLOOR..hi evenly in log10 (weights below the floor take the first colour), so the small
  // weights a softmax spreads over many keys stay visible.
  const LOG_FLOOR = 1e-4;
  function levelFor(scale, lo, hi) {
    if (scale === 'log') {
      const top = Math.log10(Math.max(hi, LOG_FLOOR * 10)), bottom = Math.log10(LOG_FLOOR);
      const k = 255 / (top - bottom);
      return (v) => (v <= LOG_FLOOR ? 0 : (Math.log10(v) - bottom) * k);
    }
    const k = hi > lo ? 255 / (hi - lo) : 0;
    return (v) => (v - lo) * k;
  }

  // Paints values[rows × cols] into a canvas of rows × cols pixels. Non-finite cells are
  // drawn in grey. lo/hi: the value range mapped to the ramp; scale 'linear' (default) or 'log'.
  function paint(canvas, values, rows, cols, lo, hi, scale = 'linear') {
    // Resizing a canvas reallocates it: only when the matrix changed shape.
    if (canvas.width !== Math.max(1, cols)) canvas.width = Math.max(1, cols);
    if (canvas.height !== Math.max(1, rows)) canvas.height = Math.max(1, rows);
    const ctx = canvas.getContext('2d');
    const img = ctx.createImageData(canvas.width, canvas.height);
    const words = new Uint32Array(img.data.buffer);
    const levelOf = levelFor(scale, lo, hi);
    for (let i = 0; i < rows * cols; i++) {
      const v = values[i];
      if (!Number.isFinite(v)) { words[i] = MASKED_WORD; continue; }
      const level = levelOf(v);
      words[i] = RAMP[level <= 0 ? 0 : level >= 255 ? 255 : Math.round(level)];
    }
    ctx.putImageData(img, 0, 0);
  }

  const plugin = {
    id: 'matrixImage',
    beforeDatasetsDraw(chart, _args, opts) {
      if (!opts || !opts.image) return;
      const { left, top, width, height } = chart.chartArea;
      const ctx = chart.ctx;
      ctx.save();
      ctx.imageSmoothingEnabled = false;
      ctx.drawImage(opts.image, left, top, width, height);
      if (opts.highlightRow !== undefined && opts.highlightRow >= 0) {
        const rowH = height / opts.rows;
        ctx.strokeStyle = '#ff4d4d';
        ctx.lineWidth = 2;
        ctx.strokeRect(left + 1, top + rowH * opts.highlightRow + 1, width - 2, Math.max(2, rowH - 2));
      }
      ctx.restore();
    },
  };

  // A Chart.js config for a heatmap. m: {values, rows, cols, lo, hi, title, xLabel, yLabel,
  // format(v) for the tooltip, highlightRow, image: the canvas to paint the cells into (one per
  // chart, reused), cellsKey: what the cells come from (optional; unchanged: not repainted)}. `tooltip` is a DOM element to position on hover.
  // The image also carries the matrix it shows (image.cells), which the hover reads: a chart
  // whose axes and title stay the same is then brought up to date by repainting the image and
  // redrawing (chart.draw()), without Chart.js's update and layout.
  function heatmapConfig(m, tooltip) {
    const image = m.image || (typeof document !== 'undefined' ? document.createElement('canvas') : null);
    if (image) {
      // m.cellsKey names what the cells were computed from: the same key (a new language, say)
      // keeps the painted image.
      if (m.cellsKey === undefined || image.cellsKey !== m.cellsKey) paint(image, m.values, m.rows, m.cols, m.lo, m.hi, m.scale);
      image.cellsKey = m.cellsKey;
      image.cells = m;
    }
    // names (optional): what row or column i stands for (a token), shown on the ticks when few.
    const axis = (label, n, reverse, names) => ({
      type: 'linear', min: -0.5, max: n - 0.5, reverse,
      title: { display: true, text: label },
      grid: { display: false },
      ticks: names && n <= 24
        ? { stepSize: 1, autoSkip: false, callback: (v) => (Number.isInteger(v) && v >= 0 && v < n ? names[v] : '') }
        : { precision: 0, maxTicksLimit: 12, callback: (v) => (Number.isInteger(v) ? v : '') },
    });
    return {
      type: 'scatter',
      data: { datasets: [{ data: [] }] },
      // Chart.js calls onHover only inside the chart area: the pointer leaving it (onto the
      // axes, or off the canvas) hides the tooltip here.
      plugins: [plugin, { id: 'tipOut', afterEvent(_chart, args) { if (tooltip && (!args.inChartArea || args.event.type === 'mouseout')) tooltip.hidden = true; } }],
      options: {
        animation: false,
        responsive: true,
        maintainAspectRatio: false,
        events: ['mousemove', 'mouseout'],
        scales: { x: axis(m.xLabel, m.cols, false, m.colNames), y: axis(m.yLabel, m.rows, true, m.rowNames) },
        plugins: {
          legend: { display: false },
          tooltip: { enabled: false },
          title: { display: !!m.title, text: m.title },
          matrixImage: { image, rows: m.rows, highlightRow: m.highlightRow },
        },
        onHover(event, _els, chart) {
          if (!tooltip) return;
          const c = (image && image.cells) || m;
          const x = Math.round(chart.scales.x.getValueForPixel(event.x));
          const y = Math.round(chart.scales.y.getValueForPixel(event.y));
          if (event.type === 'mouseout' || x < 0 || y < 0 || x >= c.cols || y >= c.rows) {
            tooltip.hidden = true;
            return;
          }
          tooltip.hidden = false;
          const named = (names, i) => (names ? ` ${JSON.stringify(names[i])}` : '');
          tooltip.textContent = `${c.yLabel} ${y}${named(c.rowNames, y)}, ${c.xLabel} ${x}${named(c.colNames, x)}: ${c.format(c.values[y * c.cols + x])}`;
          // right of the pointer, or left of it where it would pass the chart's right edge
          const right = event.x + 12 + tooltip.offsetWidth > chart.width;
          tooltip.style.left = `${right ? Math.max(0, event.x - 12 - tooltip.offsetWidth) : event.x + 12}px`;
          tooltip.style.top = `${event.y + 12}px`;
        },
      },
    };
  }

  // A canvas drawn by hand, sized to its CSS box times the device's pixel ratio and cleared, its
  // context set to draw in CSS pixels: {ctx, w, h}.
  function fitCanvas(canvas) {
    const ratio = root.devicePixelRatio || 1;
    const w = canvas.clientWidth || canvas.width, h = canvas.clientHeight || canvas.height;
    const pw = Math.max(1, Math.round(w * ratio)), ph = Math.max(1, Math.round(h * ratio));
    if (canvas.width !== pw) canvas.width = pw;
    if (canvas.height !== ph) canvas.height = ph;
    const ctx = canvas.getContext('2d');
    ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
    ctx.clearRect(0, 0, w, h);
    return { ctx, w, h };
  }

  const api = { heatmapConfig, paint, viridis, fitCanvas };
  if (typeof module === 'object' && module.exports) module.exports = api;
  else root.AttnLabHeatmap = api;
})(typeof globalThis !== 'undefined' ? globalThis : this);
