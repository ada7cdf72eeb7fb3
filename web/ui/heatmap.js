// heatmap.js — a matrix drawn as ONE image inside a Chart.js chart area: Chart.js draws the
// axes, ticks and title; this plugin paints the cells. One element per cell
// (chartjs-chart-matrix) took 110–400 ms per update at 128–256 rows in headless Chromium; one
// image stays at a few ms up to 1024 rows. The plugin also draws the tokens (or indices) on both
// axes, thinned to what fits, the values in the cells of small grids and a colour bar with the
// range and the scale; hover shows the cell's row, column and value. Also the pieces every
// heatmap's export shares (a titled image, a grid of small heatmaps, a colour bar on its own).
import { stringsOf } from './i18n.js';

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

  // ---------------------------------------------------------------- layout
  const FONT = 'system-ui, -apple-system, "Segoe UI", "PingFang SC", "Noto Sans CJK SC", sans-serif'; // the page's
  const LABEL_PX = 11;   // axis labels' font size
  const GAP = 3;         // pixels between a label and the next, or the chart
  const MAX_LABELS = 24; // labels on an axis at most
  const MAX_CHARS = 10;  // longer labels are cut with an ellipsis
  const VALUES_UP_TO = 12; // grids up to this many rows and columns get their values written in
  const BAR_W = 12;      // the colour bar's width
  const OUTLINE = '#ff4d4d';
  const KEY_COLOUR = '#c62828'; // the outline's key, darker to read on white
  const font = (px, bold) => `${bold ? 'bold ' : ''}${px}px ${FONT}`;

  // Which of n labels along an axis are drawn: every k-th, the first always and the last when
  // it does not touch the first, at most `most`, none overlapping. cell: pixels per row or
  // column; extent: the largest label's size along the axis. Returns the indices, ascending.
  function pickLabels(n, cell, extent, most = MAX_LABELS) {
    if (!(n > 0) || !(cell > 0)) return [];
    const room = extent + GAP;
    const k = Math.max(1, Math.ceil(room / cell), Math.ceil((n - 1) / Math.max(1, most - 1)));
    const out = [];
    for (let i = 0; i < n - 1; i += k) out.push(i);
    if (n === 1) return [0];
    // The last one replaces a k-th one too close to it.
    if (out.length > 1 && (n - 1 - out[out.length - 1]) * cell < room) out.pop();
    if ((n - 1 - out[out.length - 1]) * cell >= room) out.push(n - 1);
    return out;
  }

  // A label as drawn: long ones cut with an ellipsis.
  function clip(text) {
    const chars = [...String(text)];
    return chars.length > MAX_CHARS ? chars.slice(0, MAX_CHARS - 1).join('') + '…' : chars.join('');
  }

  // The text colour that reads on a cell of colour c ([r, g, b], 0..255): black on light
  // cells, white on dark ones (WCAG's relative luminance, crossing over at 0.179).
  function textColourOn(c) {
    const lin = (v) => (v / 255 <= 0.03928 ? v / 255 / 12.92 : ((v / 255 + 0.055) / 1.055) ** 2.4);
    const luminance = 0.2126 * lin(c[0]) + 0.7152 * lin(c[1]) + 0.0722 * lin(c[2]);
    return luminance > 0.179 ? '#000' : '#fff';
  }

  // The colour a value is painted in ([r, g, b]).
  function colourOf(v, lo, hi, scale) {
    if (!Number.isFinite(v)) return MASKED;
    const level = levelFor(scale, lo, hi)(v);
    return viridis((level <= 0 ? 0 : level >= 255 ? 255 : level) / 255);
  }

  // A number short enough for a colour bar's end or a cell.
  const short = (v) => String(Number(v.toPrecision(3)));

  // What a colour bar says: the values at its ends and its scale (linear or log; log's bottom
  // stands for every weight at or under the floor). m: {lo, hi, scale, unit, lang}.
  function barTexts(m) {
    const t = stringsOf(m.lang).heatmap, log = m.scale === 'log';
    return {
      top: short(m.hi),
      bottom: log ? `≤ ${short(LOG_FLOOR)}` : short(m.lo),
      caption: `${log ? t.log : t.linear}${m.unit ? ` (${m.unit})` : ''}`,
    };
  }

  // The ramp as a gradient from (x0, y0) (its first colour) to (x1, y1) (its last).
  function rampGradient(ctx, x0, y0, x1, y1) {
    const g = ctx.createLinearGradient(x0, y0, x1, y1);
    VIRIDIS.forEach((c, i) => g.addColorStop(i / (VIRIDIS.length - 1), `rgb(${c[0]}, ${c[1]}, ${c[2]})`));
    return g;
  }

  // A vertical colour bar (or, with m.legend [{value, text}], one swatch per value) drawn in
  // the box from x, top to bottom; returns what it wrote.
  function drawBar(ctx, x, top, bottom, m) {
    ctx.save();
    ctx.font = font(LABEL_PX);
    ctx.fillStyle = '#1d1d1f';
    ctx.textAlign = 'left';
    if (m.legend) {
      ctx.textBaseline = 'middle';
      m.legend.forEach((item, i) => {
        const y = top + i * (LABEL_PX + 8);
        const c = colourOf(item.value, m.lo, m.hi, m.scale);
        ctx.fillStyle = `rgb(${c[0]}, ${c[1]}, ${c[2]})`;
        ctx.fillRect(x, y, BAR_W, BAR_W);
        ctx.strokeStyle = '#888';
        ctx.strokeRect(x + 0.5, y + 0.5, BAR_W - 1, BAR_W - 1);
        ctx.fillStyle = '#1d1d1f';
        ctx.fillText(item.text, x + BAR_W + GAP, y + BAR_W / 2);
      });
      ctx.restore();
      return { legend: m.legend.map((item) => item.text) };
    }
    const texts = barTexts(m);
    ctx.textBaseline = 'top';
    const lines = captionLines(texts.caption);
    lines.forEach((line, i) => ctx.fillText(line, x, top + i * (LABEL_PX + 2)));
    const barTop = top + lines.length * (LABEL_PX + 2) + 2;
    if (bottom > barTop) {
      ctx.fillStyle = rampGradient(ctx, 0, bottom, 0, barTop);
      ctx.fillRect(x, barTop, BAR_W, bottom - barTop);
      ctx.strokeStyle = '#888';
      ctx.strokeRect(x + 0.5, barTop + 0.5, BAR_W - 1, bottom - barTop - 1);
    }
    ctx.fillStyle = '#1d1d1f';
    ctx.fillText(texts.top, x + BAR_W + GAP, barTop);
    ctx.textBaseline = 'bottom';
    ctx.fillText(texts.bottom, x + BAR_W + GAP, bottom);
    ctx.restore();
    return texts;
  }

  // A colour bar's caption as drawn above it: the scale, and its unit on a line of its own (the
  // bar then takes no more of the chart's width than its numbers need).
  const captionLines = (caption) => caption.split(/ (?=\()/);

  // The width a colour bar or legend needs.
  function barWidth(ctx, m) {
    ctx.save();
    ctx.font = font(LABEL_PX);
    const bar = barTexts(m);
    const texts = m.legend ? m.legend.map((item) => item.text) : [bar.top, bar.bottom, ...captionLines(bar.caption)];
    const widest = Math.max(...texts.map((s) => ctx.measureText(s).width));
    ctx.restore();
    return 2 * GAP + 6 + Math.ceil(m.legend ? BAR_W + GAP + widest : Math.max(widest, BAR_W + GAP + widest));
  }

  // ---------------------------------------------------------------- the x labels' slant
  // The x labels lie flat, slant at 45° or stand upright, whichever first shows as many of them
  // as upright labels would: they turn only as far as the cells' width needs. Each takes the
  // room its slant needs along the axis (flat: the widest label; 45°: its line height over
  // sin 45°; upright: its line height), and below the axis only as deep as the labels drawn.
  const SLANTS = [0, 45, 90];
  const SIN45 = Math.SQRT1_2;
  // The box a label w px wide takes at a slant, its anchor (the top middle of a flat label, the
  // end of a turned one) at (x, y): [left, top, width, height].
  function labelBox(slant, w, x, y) {
    const h = LABEL_PX;
    if (slant === 0) return [x - w / 2, y, w, h];
    if (slant === 90) return [x - h / 2, y, h, w];
    return [x - SIN45 * (w + h / 2), y, SIN45 * (w + h), SIN45 * (w + h)];
  }
  // How n labels stand along an axis of cells `cell` px wide: {slant, picks (the indices drawn),
  // depth (px under the axis), overhang (px they pass the axis's left end)}. width(i): label i's
  // width as drawn; slants: the slants to choose from (a drawing keeps the one its chart's
  // layout made room for).
  function xLabelLayout(n, cell, width, slants = SLANTS) {
    let widest = 0;
    for (let i = 0; i < n; i++) widest = Math.max(widest, width(i));
    const along = { 0: widest, 45: (LABEL_PX + GAP) / SIN45 - GAP, 90: LABEL_PX + 1 };
    const picked = slants.map((slant) => pickLabels(n, cell, along[slant]));
    const most = Math.max(...picked.map((p) => p.length));
    const k = Math.max(0, picked.findIndex((p) => p.length === most));
    const slant = slants[k], picks = picked[k];
    let depth = 0, overhang = 0;
    for (const i of picks) {
      const [left, , , h] = labelBox(slant, width(i), (i + 0.5) * cell, 0);
      depth = Math.max(depth, h);
      overhang = Math.max(overhang, -left);
    }
    return { slant, picks, depth: Math.ceil(depth), overhang: Math.ceil(overhang) };
  }

  // ---------------------------------------------------------------- drawing
  // The labels of one axis: [{index, text, box: [x, y, w, h]}] (CSS pixels), drawn; the x
  // labels at the slant the layout chose (slant: 0, 45 or 90).
  function drawAxisLabels(ctx, area, c, axis, slant = 0) {
    const horizontal = axis === 'x';
    const n = horizontal ? c.cols : c.rows, names = horizontal ? c.colNames : c.rowNames;
    const cell = (horizontal ? area.width : area.height) / Math.max(1, n);
    const text = (i) => (names ? clip(names[i]) : String(i));
    ctx.font = font(LABEL_PX);
    const width = (i) => ctx.measureText(text(i)).width;
    const drawn = [];
    ctx.fillStyle = '#1d1d1f';
    if (!horizontal) {
      ctx.textAlign = 'right';
      ctx.textBaseline = 'middle';
      for (const i of pickLabels(n, cell, LABEL_PX + 1)) {
        const s = text(i), w = width(i), mid = area.top + (i + 0.5) * cell;
        ctx.fillText(s, area.left - GAP, mid);
        drawn.push({ index: i, text: s, box: [area.left - GAP - w, mid - LABEL_PX / 2, w, LABEL_PX] });
      }
      return drawn;
    }
    for (const i of xLabelLayout(n, cell, width, [slant]).picks) {
      const s = text(i), w = width(i), mid = area.left + (i + 0.5) * cell, top = area.bottom + GAP;
      ctx.save();
      if (slant === 0) {
        ctx.textAlign = 'center';
        ctx.textBaseline = 'top';
        ctx.fillText(s, mid, top);
      } else {
        // the label's end at its cell; a slanted one lowered so its corner stays under the axis
        ctx.translate(mid, top + (slant === 45 ? SIN45 * LABEL_PX / 2 : 0));
        ctx.rotate(-slant * Math.PI / 180);
        ctx.textAlign = 'right';
        ctx.textBaseline = 'middle';
        ctx.fillText(s, 0, 0);
      }
      ctx.restore();
      drawn.push({ index: i, text: s, slant, box: labelBox(slant, w, mid, top) });
    }
    return drawn;
  }

  // Each cell's value written in it, in black or white as its colour needs, when the grid is
  // small and every value fits its cell; returns how many were written.
  function drawCellValues(ctx, area, c) {
    const most = c.valuesUpTo || VALUES_UP_TO;
    if (c.rows > most || c.cols > most || !c.rows || !c.cols) return 0;
    const w = area.width / c.cols, h = area.height / c.rows;
    const px = Math.min(12, Math.floor(h * 0.45));
    if (px < 8) return 0;
    const text = (v, i) => (c.cellText ? c.cellText(v, i) : Number.isFinite(v) ? v.toFixed(2) : '');
    ctx.font = font(px);
    for (let i = 0; i < c.rows * c.cols; i++) if (ctx.measureText(text(c.values[i], i)).width + 4 > w) return 0;
    ctx.textAlign = 'center';
    ctx.textBaseline = 'middle';
    for (let r = 0; r < c.rows; r++) {
      for (let j = 0; j < c.cols; j++) {
        const v = c.values[r * c.cols + j];
        ctx.fillStyle = textColourOn(colourOf(v, c.lo, c.hi, c.scale));
        ctx.fillText(text(v, r * c.cols + j), area.left + (j + 0.5) * w, area.top + (r + 0.5) * h);
      }
    }
    return c.rows * c.cols;
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
        ctx.strokeStyle = OUTLINE;
        ctx.lineWidth = 2;
        ctx.strokeRect(left + 1, top + rowH * opts.highlightRow + 1, width - 2, Math.max(2, rowH - 2));
      }
      // cells outlined one by one (m.outlineCells: their indices, row by row)
      if (opts.outlineCells && opts.outlineCells.length) {
        const rowH = height / opts.rows, colW = width / opts.cols;
        ctx.strokeStyle = OUTLINE;
        ctx.lineWidth = 3;
        for (const i of opts.outlineCells) {
          const r = Math.floor(i / opts.cols), c = i % opts.cols;
          ctx.strokeRect(left + colW * c + 2, top + rowH * r + 2, Math.max(2, colW - 4), Math.max(2, rowH - 4));
        }
      }
      ctx.restore();
    },
    // The tokens (or indices) on both axes, the values in small grids and the colour bar; what
    // was drawn is kept on the canvas (canvas.heatmapDrawn) for whoever checks it.
    afterDraw(chart, _args, opts) {
      const c = opts && opts.image && opts.image.cells;
      if (!c) return;
      const ctx = chart.ctx, area = chart.chartArea, bar = chart.scales.bar;
      ctx.save();
      const drawn = {
        y: drawAxisLabels(ctx, area, c, 'y', false),
        x: drawAxisLabels(ctx, area, c, 'x', chart.$heatmap ? chart.$heatmap.xSlant : 0),
        values: drawCellValues(ctx, area, c),
        bar: bar ? drawBar(ctx, bar.left + 2 * GAP + 2, area.top, area.bottom, c) : null,
        key: opts.highlightRow >= 0 ? stringsOf(c.lang).heatmap.newestRow : null,
      };
      ctx.restore();
      chart.canvas.heatmapDrawn = drawn;
    },
  };

  // A Chart.js config for a heatmap. m: {values, rows, cols, lo, hi, scale ('linear' or 'log'),
  // unit, title, xLabel, yLabel, rowNames, colNames (what row or column i stands for, a token;
  // indices without), format(v, i) for the tooltip, cellText(v, i) for the values written in
  // small grids (i: the cell's index), valuesUpTo (the most rows and columns that get them,
  // VALUES_UP_TO unless given), legend ([{value, text}]: swatches in place of the colour bar), highlightRow (outlined,
  // with its key under the title), outlineCells (indices of cells outlined), lang, image: the canvas to paint the cells into (one per
  // chart, reused), cellsKey: what the cells come from (optional; unchanged: not repainted)}.
  // `tooltip` is a DOM element to position on hover.
  // The image also carries the matrix it shows (image.cells), which the hover and the labels
  // read: a chart whose axes and title stay the same is then brought up to date by repainting
  // the image and redrawing (chart.draw()), without Chart.js's update and layout. The config's
  // layoutKey names everything else the chart's options are made of (null without m.image):
  // page.drawChart redraws a chart whose key is unchanged. A caller that adds options of its
  // own to the config adds what they are made of to the key.
  function heatmapConfig(m, tooltip) {
    const image = m.image || (typeof document !== 'undefined' ? document.createElement('canvas') : null);
    if (image) {
      // m.cellsKey names what the cells were computed from: the same key (a new language, say)
      // keeps the painted image.
      if (m.cellsKey === undefined || image.cellsKey !== m.cellsKey) paint(image, m.values, m.rows, m.cols, m.lo, m.hi, m.scale);
      image.cellsKey = m.cellsKey;
      image.cells = m;
    }
    // The widest of an axis's labels, in the labels' font.
    const widest = (ctx, names, n) => {
      ctx.save();
      ctx.font = font(LABEL_PX);
      let w = names ? 0 : ctx.measureText(String(Math.max(0, n - 1))).width;
      if (names) for (let i = 0; i < n; i++) w = Math.max(w, ctx.measureText(clip(names[i])).width);
      ctx.restore();
      return Math.ceil(w);
    };
    // Room for the labels beside the chart area (Chart.js's own ticks are off: they fell at
    // -0.5, 0.5, … and were blanked). The x labels turn only as far as the cells' width needs
    // (xLabelLayout), and take under the axis the depth of those drawn; a slanted first label
    // passing the axis's left end moves the chart area right (the canvas holds every label).
    const fitY = (s) => { s.width += widest(s.ctx, m.rowNames, m.rows) + 2 * GAP; };
    const fitX = (s) => {
      s.ctx.save();
      s.ctx.font = font(LABEL_PX);
      const x = xLabelLayout(m.cols, s.width / Math.max(1, m.cols), (i) => s.ctx.measureText(m.colNames ? clip(m.colNames[i]) : String(i)).width);
      s.ctx.restore();
      s.chart.$heatmap = { xSlant: x.slant };
      s.height += x.depth + 2 * GAP;
      s.paddingLeft = x.overhang + GAP;
    };
    const axis = (label, n, reverse, afterFit) => ({
      type: 'linear', min: -0.5, max: n - 0.5, reverse,
      title: { display: true, text: label },
      grid: { display: false },
      ticks: { display: false },
      afterFit,
    });
    const t = stringsOf(m.lang).heatmap;
    const outlined = m.highlightRow !== undefined && m.highlightRow >= 0;
    const layoutKey = image && m.image ? JSON.stringify([m.rows, m.cols, m.title, m.xLabel, m.yLabel, m.rowNames || null,
      m.colNames || null, barTexts(m), m.legend ? m.legend.map((item) => item.text) : null, outlined ? m.highlightRow : -1,
      m.outlineCells || null, m.lang, tooltip ? tooltip.id : null]) : null;
    return {
      type: 'scatter',
      layoutKey,
      data: { datasets: [{ data: [] }] },
      // Chart.js calls onHover only inside the chart area: the pointer leaving it (onto the
      // axes, or off the canvas) hides the tooltip here.
      plugins: [plugin, { id: 'tipOut', afterEvent(_chart, args) { if (tooltip && (!args.inChartArea || args.event.type === 'mouseout')) tooltip.hidden = true; } }],
      options: {
        animation: false,
        responsive: true,
        maintainAspectRatio: false,
        events: ['mousemove', 'mouseout'],
        scales: {
          x: axis(m.xLabel, m.cols, false, fitX),
          y: axis(m.yLabel, m.rows, true, fitY),
          // room on the right for the colour bar, drawn by the plugin
          bar: { type: 'linear', position: 'right', min: 0, max: 1, grid: { display: false }, border: { display: false },
            ticks: { display: false }, afterFit: (s) => { s.width = barWidth(s.ctx, m); } },
        },
        plugins: {
          legend: { display: false },
          tooltip: { enabled: false },
          title: { display: !!m.title, text: m.title },
          subtitle: { display: outlined, text: t.newestRow, color: KEY_COLOUR, font: { size: LABEL_PX }, padding: { bottom: 4 } },
          matrixImage: { image, rows: m.rows, cols: m.cols, highlightRow: outlined ? m.highlightRow : -1, outlineCells: m.outlineCells || null },
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
          tooltip.textContent = `${c.yLabel} ${y}${named(c.rowNames, y)}, ${c.xLabel} ${x}${named(c.colNames, x)}: ${c.format(c.values[y * c.cols + x], y * c.cols + x)}`;
          // right of the pointer, or left of it where it would pass the chart's right edge
          const right = event.x + 12 + tooltip.offsetWidth > chart.width;
          tooltip.style.left = `${right ? Math.max(0, event.x - 12 - tooltip.offsetWidth) : event.x + 12}px`;
          tooltip.style.top = `${event.y + 12}px`;
        },
      },
    };
  }

  // ---------------------------------------------------------------- colour bars and exports
  // A horizontal colour bar in its own canvas (beside a grid of small heatmaps that have none):
  // caption, the lowest value, the ramp, the highest. m: {lo, hi, scale, unit, lang}.
  function drawColourBar(canvas, m) {
    const { ctx, w, h } = fitCanvas(canvas);
    const texts = barTexts(m);
    ctx.font = font(LABEL_PX);
    ctx.fillStyle = '#1d1d1f';
    ctx.textBaseline = 'middle';
    ctx.textAlign = 'left';
    let x = 0;
    for (const s of [texts.caption, texts.bottom]) { ctx.fillText(s, x, h / 2); x += ctx.measureText(s).width + 2 * GAP; }
    const right = w - ctx.measureText(texts.top).width - 2 * GAP;
    if (right > x) {
      ctx.fillStyle = rampGradient(ctx, x, 0, right, 0);
      ctx.fillRect(x, h / 2 - BAR_W / 2, right - x, BAR_W);
      ctx.strokeStyle = '#888';
      ctx.strokeRect(x + 0.5, h / 2 - BAR_W / 2 + 0.5, right - x - 1, BAR_W - 1);
    }
    ctx.fillStyle = '#1d1d1f';
    ctx.textAlign = 'right';
    ctx.fillText(texts.top, w, h / 2);
    canvas.heatmapDrawn = { bar: texts };
    return texts;
  }

  // What a PNG export holds: a white strip with the title (bold) and a note under it (the
  // model, the tokens, the scale) above the picture, at the picture's pixel size. Returns the
  // canvas.
  // The colour bar a grid of thumbnails shares: a canvas #id right after the grid (made the first
  // time), drawn for m (drawColourBar's) and named for screen readers by its texts.
  function gridColourBar(grid, id, m) {
    let bar = document.getElementById(id);
    if (!bar) {
      bar = document.createElement('canvas');
      bar.id = id;
      bar.className = 'colour-bar';
      bar.setAttribute('role', 'img');
      grid.after(bar);
    }
    const texts = drawColourBar(bar, m);
    bar.setAttribute('aria-label', `${texts.caption}: ${texts.bottom} – ${texts.top}`);
    return texts;
  }

  function titledImage(picture, title, note) {
    const ratio = picture.clientWidth ? picture.width / picture.clientWidth : 1;
    const strip = Math.round((note ? 46 : 28) * ratio);
    const out = document.createElement('canvas');
    out.width = picture.width;
    out.height = picture.height + strip;
    const ctx = out.getContext('2d');
    ctx.fillStyle = '#fff';
    ctx.fillRect(0, 0, out.width, out.height);
    ctx.scale(ratio, ratio);
    ctx.fillStyle = '#1d1d1f';
    ctx.textBaseline = 'top';
    ctx.font = font(15, true);
    ctx.fillText(title, 10, 8, out.width / ratio - 20);
    if (note) {
      ctx.font = font(12);
      ctx.fillStyle = '#444';
      ctx.fillText(note, 10, 28, out.width / ratio - 20);
    }
    ctx.setTransform(1, 0, 0, 1, 0, 0);
    ctx.drawImage(picture, 0, strip);
    return out;
  }

  // The line under an export's title: {model, tokens (a count), scale ('linear', 'log' or
  // none), lang}, each part only when given.
  function exportNote(d) {
    const t = stringsOf(d.lang).heatmap;
    return [d.model, d.tokens ? t.tokens(d.tokens) : '', d.scale ? t.colours(t[d.scale]) : ''].filter(Boolean).join(' · ');
  }

  // A grid of small heatmaps (every layer's and head's attention) as one picture: the column
  // and row labels, each heatmap scaled up without smoothing, the colour bar on the right.
  // d: {pictures: canvas[rows * cols], rows, cols, rowLabels, colLabels, lo, hi, scale, lang}.
  function gridImage(d) {
    const size = 64, pad = 4, left = 40, top = 20;
    const out = document.createElement('canvas');
    const ctx = out.getContext('2d');
    const barW = barWidth(ctx, d);
    out.width = left + d.cols * (size + pad) + barW;
    out.height = top + d.rows * (size + pad) + pad;
    ctx.fillStyle = '#fff';
    ctx.fillRect(0, 0, out.width, out.height);
    ctx.font = font(LABEL_PX);
    ctx.fillStyle = '#1d1d1f';
    ctx.textAlign = 'center';
    ctx.textBaseline = 'middle';
    for (let h = 0; h < d.cols; h++) ctx.fillText(d.colLabels[h], left + h * (size + pad) + size / 2, top / 2);
    ctx.textAlign = 'right';
    for (let l = 0; l < d.rows; l++) ctx.fillText(d.rowLabels[l], left - 2 * GAP, top + l * (size + pad) + size / 2);
    ctx.imageSmoothingEnabled = false;
    d.pictures.forEach((c, i) => ctx.drawImage(c, left + (i % d.cols) * (size + pad), top + Math.floor(i / d.cols) * (size + pad), size, size));
    drawBar(ctx, left + d.cols * (size + pad) + 2 * GAP, top, top + Math.min(d.rows * (size + pad) - pad, 160), d);
    return out;
  }

  // A token's text as the page shows it (chips, axes): its text (the core gives a character to
  // the token that completes it); for a token that writes none, its piece when that is whole
  // characters (llama2.c's BOS, "<s>"), else its bytes (part of a character, completed later).
  // tok: {text, bytes: number[]}.
  const strict = typeof TextDecoder !== 'undefined' ? new TextDecoder('utf-8', { fatal: true }) : null;
  function wholeCharacters(bytes) {
    try {
      return strict.decode(new Uint8Array(bytes)).trim();
    } catch (_e) {
      return ''; // part of a character
    }
  }
  function tokenLabel(tok) {
    return tok.text || wholeCharacters(tok.bytes) || tok.bytes.map((b) => `‹${b.toString(16).padStart(2, '0')}›`).join('');
  }

  // A canvas drawn by hand, sized to its CSS box times the device's pixel ratio and cleared, its
  // context set to draw in CSS pixels: {ctx, w, h}.
  function fitCanvas(canvas) {
    const ratio = globalThis.devicePixelRatio || 1;
    const w = canvas.clientWidth || canvas.width, h = canvas.clientHeight || canvas.height;
    const pw = Math.max(1, Math.round(w * ratio)), ph = Math.max(1, Math.round(h * ratio));
    if (canvas.width !== pw) canvas.width = pw;
    if (canvas.height !== ph) canvas.height = ph;
    const ctx = canvas.getContext('2d');
    ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
    ctx.clearRect(0, 0, w, h);
    return { ctx, w, h };
  }

export {
  heatmapConfig, paint, viridis, fitCanvas, drawColourBar, gridColourBar, titledImage, gridImage, exportNote, tokenLabel, wholeCharacters,
  pickLabels, xLabelLayout, labelBox, clip, textColourOn, colourOf, barTexts,
};
