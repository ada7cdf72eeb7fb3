// model/rope-model-chart.js — the model's RoPE: the frequency of each pair as the core gives it
// (al_model_lab_rope: plain, and YaRN-scaled where the model scales), and which two of a head's
// dimensions rotate together in this model's convention (half_split as MiniMind's rotate_half,
// interleaved as Llama and llama2.c).
import { csvRows } from '../ui/format.js';
import * as Heat from '../ui/heatmap.js';
import { stringsOf } from '../ui/i18n.js';

  // Okabe–Ito blue for the plain frequencies, vermillion for the scaled ones.
  const BLUE = '#0072B2', VERMILLION = '#D55E00';

  // Log-axis ticks: powers of ten only, as 1, 0.1, 0.01, 0.001 and, smaller, 1e-4.
  function powerTick(v) {
    const [mantissa, exponent] = Number(v).toExponential().split('e');
    if (mantissa !== '1') return '';
    const e = Number(exponent);
    return e >= -3 && e <= 3 ? String(10 ** e) : `1e${e}`;
  }

  function checkFreqs(d) {
    if (!d.plain || !d.plain.length) throw new RangeError('RoPE chart: no frequencies given');
    if (d.yarn && (!d.scaled || d.scaled.length !== d.plain.length)) {
      throw new RangeError(`RoPE chart: ${d.scaled ? d.scaled.length : 0} scaled frequencies for ${d.plain.length} pairs`);
    }
  }

  // d: {plain: Float32Array [head_dim / 2], scaled: Float32Array [head_dim / 2], yarn (bool),
  // base, lang}
  function freqConfig(d) {
    checkFreqs(d);
    const t = stringsOf(d.lang).ropeChart;
    const datasets = [{
      label: t.plain, data: Array.from(d.plain), borderColor: BLUE, backgroundColor: BLUE,
      pointRadius: d.plain.length > 64 ? 0 : 2,
    }];
    if (d.yarn) {
      datasets.push({
        label: t.scaled, data: Array.from(d.scaled), borderColor: VERMILLION, backgroundColor: VERMILLION,
        borderDash: [6, 3], pointRadius: d.scaled.length > 64 ? 0 : 2,
      });
    }
    return {
      type: 'line',
      data: { labels: Array.from(d.plain, (_, i) => i), datasets },
      options: {
        animation: false, responsive: true, maintainAspectRatio: false,
        interaction: { mode: 'index', intersect: false },
        plugins: {
          title: { display: true, text: t.freqTitle(d.base) },
          legend: { display: datasets.length > 1 },
          tooltip: {
            callbacks: {
              title: (items) => (items.length ? `${t.pair} = ${items[0].dataIndex}` : ''),
              label: (c) => `${c.dataset.label}: ${c.raw.toPrecision(6)} ${t.perPosition}`,
            },
          },
        },
        scales: {
          x: { title: { display: true, text: t.pair } },
          y: { type: 'logarithmic', title: { display: true, text: t.freq }, ticks: { callback: (v) => powerTick(v) } },
        },
      },
    };
  }

  // The frequencies: one line per pair i (plain, and scaled when the model scales).
  function csv(d, lang) {
    checkFreqs(d);
    const t = stringsOf(lang).ropeChart;
    return csvRows([['i', t.plain, ...(d.yarn ? [t.scaled] : [])],
      ...Array.from(d.plain, (v, i) => [i, v, ...(d.yarn ? [d.scaled[i]] : [])])]);
  }

  const FONT = 'system-ui, -apple-system, "Segoe UI", "PingFang SC", "Noto Sans CJK SC", sans-serif'; // the page's
  const SHOWN = 16;    // past 64 dimensions: the first and last SHOWN pairs
  const ALL_UP_TO = 64;

  const rgb = (c, alpha) => `rgba(${Math.round(c[0])}, ${Math.round(c[1])}, ${Math.round(c[2])}, ${alpha})`;

  // Draws dimensions 0..headDim-1 of one head as numbered boxes in a row, an arc over each
  // pair that rotates together (d.pairs: [[a, b], ...] for pair i = 0, 1, …, the core's
  // al_rope_pair_dims in the convention d.style) (box and arc in the pair's colour on the viridis ramp), and a
  // caption naming the convention. Past 64 dimensions only the first and last 16 pairs' boxes
  // are drawn, an ellipsis where dimensions are left out. Returns what it drew: {pairs: [[a, b]],
  // dims: the dimensions in their boxes, left to right, caption}.
  function drawPairs(canvas, d) {
    const { pairs: all, style } = d;
    if (!Array.isArray(all) || !all.length || !all.every((p) => Array.isArray(p) && p.length === 2)) {
      throw new RangeError('RoPE pairs: pairs must be a non-empty array of [a, b]');
    }
    if (style !== 'half_split' && style !== 'interleaved') throw new RangeError(`RoPE pairs: unknown style ${style}`);
    const t = stringsOf(d.lang).ropeChart;
    const headDim = 2 * all.length;
    const some = headDim > ALL_UP_TO;
    const shownIndices = all.map((_, i) => i).filter((i) => !some || i < SHOWN || i >= all.length - SHOWN);
    const shownPairs = shownIndices.map((i) => all[i]);
    const pairIndex = new Map(); // dimension -> its pair's index i
    for (const i of shownIndices) { pairIndex.set(all[i][0], i); pairIndex.set(all[i][1], i); }
    const dims = [...pairIndex.keys()].sort((a, b) => a - b);
    // Slots left to right: a box per dimension, '…' where dimensions are skipped.
    const slots = [];
    dims.forEach((dim, k) => {
      if (k > 0 && dim !== dims[k - 1] + 1) slots.push(null);
      slots.push(dim);
    });
    const caption = t[style](headDim) + (some ? t.some : '');
    if (typeof canvas.setAttribute === 'function') canvas.setAttribute('aria-label', caption);

    const { ctx, w, h } = Heat.fitCanvas(canvas);
    const margin = 8, labelH = 26, boxH = 18, lineH = 16;
    // The caption on as many lines as it needs: broken after a space or a punctuation mark,
    // each line as long as fits.
    ctx.font = `12px ${FONT}`;
    const captionLines = [];
    for (const piece of caption.split(/(?<=[ ；：，（])/)) {
      const last = captionLines.length - 1;
      if (last >= 0 && ctx.measureText(captionLines[last] + piece).width <= w - 2 * margin) captionLines[last] += piece;
      else captionLines.push(piece);
    }
    const captionH = lineH * captionLines.length + 6;
    const slotW = (w - 2 * margin) / Math.max(1, slots.length);
    const boxW = Math.max(2, slotW * 0.86);
    const boxTop = h - captionH - labelH - boxH;
    const arcRoom = Math.max(8, boxTop - margin);
    const centre = new Map(); // dimension -> x of its box's centre
    slots.forEach((dim, s) => { if (dim !== null) centre.set(dim, margin + slotW * (s + 0.5)); });
    const colourOf = (i) => Heat.viridis(all.length > 1 ? i / (all.length - 1) : 0);

    // Arcs: height grows with the distance they span, up to the room above the boxes.
    let widest = 0;
    for (const [a, b] of shownPairs) widest = Math.max(widest, centre.get(b) - centre.get(a));
    ctx.lineWidth = 1.5;
    for (const [a, b] of shownPairs) {
      const xa = centre.get(a), xb = centre.get(b);
      const rise = Math.max(6, arcRoom * 0.95 * ((xb - xa) / (widest || 1))) * (4 / 3); // the curve peaks at 3/4 of its control height
      ctx.strokeStyle = rgb(colourOf(pairIndex.get(a)), 0.9);
      ctx.beginPath();
      ctx.moveTo(xa, boxTop);
      ctx.bezierCurveTo(xa, boxTop - rise, xb, boxTop - rise, xb, boxTop);
      ctx.stroke();
    }

    // Boxes with their numbers: inside when they fit, else turned upright below the box.
    ctx.font = `10px ${FONT}`;
    ctx.textBaseline = 'middle';
    slots.forEach((dim, s) => {
      const x = margin + slotW * (s + 0.5);
      if (dim === null) {
        ctx.fillStyle = '#555';
        ctx.textAlign = 'center';
        ctx.fillText('…', x, boxTop + boxH / 2);
        return;
      }
      ctx.fillStyle = rgb(colourOf(pairIndex.get(dim)), 0.35);
      ctx.fillRect(x - boxW / 2, boxTop, boxW, boxH);
      ctx.strokeStyle = '#333';
      ctx.lineWidth = 1;
      ctx.strokeRect(x - boxW / 2, boxTop, boxW, boxH);
      ctx.fillStyle = '#1d1d1f';
      const text = String(dim);
      if (ctx.measureText(text).width <= boxW - 2) {
        ctx.textAlign = 'center';
        ctx.fillText(text, x, boxTop + boxH / 2);
      } else {
        ctx.save();
        ctx.translate(x, boxTop + boxH + 3);
        ctx.rotate(-Math.PI / 2);
        ctx.textAlign = 'right';
        ctx.fillText(text, 0, 0);
        ctx.restore();
      }
    });

    ctx.fillStyle = '#1d1d1f';
    ctx.textAlign = 'left';
    ctx.font = `12px ${FONT}`;
    captionLines.forEach((text, k) => ctx.fillText(text, margin, h - captionH + lineH * (k + 0.5) + 3));
    return { pairs: shownPairs.map((p) => p.slice()), dims, caption };
  }

export { freqConfig, drawPairs, csv };
