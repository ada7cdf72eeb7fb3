// model/head-lines.js — one head's attention drawn as lines (the head view of BertViz): the
// tokens twice, queries on the left and keys on the right, a line from each query to every key
// it gives at least `threshold` of its weight, thicker, more opaque and brighter on the viridis
// ramp as the weight grows. A chosen query's lines are drawn on top and the others faded. A key
// above the lines shows the weakest and the strongest line and what hovering marks.
import { visibleText, csvLine } from '../ui/format.js';
import * as Heat from '../ui/heatmap.js';
import { stringsOf } from '../ui/i18n.js';

  const LEVELS = 16;     // lines are stroked in this many weight bands, one path each
  const FADED = 0.12;    // opacity factor of the lines of queries not chosen
  const MAX_CHARS = 14;  // longer token texts are cut with an ellipsis
  const TOP = 58, BOTTOM = 6, GAP = 6; // the header: the column names, then the key's two lines
  const FONT = 'system-ui, -apple-system, "Segoe UI", "PingFang SC", "Noto Sans CJK SC", sans-serif'; // the page's

  function check(d) {
    const n = d.tokens.length;
    if (!d.weights || d.weights.length < n * n) throw new RangeError(`head view: ${d.weights ? d.weights.length : 0} weights for ${n} tokens (${n} × ${n} needed)`);
    if (!Number.isInteger(d.query) || d.query < -1 || d.query >= n) throw new RangeError(`head view: query ${d.query} is not -1 or a token (${n} tokens)`);
  }

  const rgb = (c) => `rgb(${Math.round(c[0])}, ${Math.round(c[1])}, ${Math.round(c[2])})`;
  function label(text, i, withIndex) {
    let s = visibleText(text);
    if ([...s].length > MAX_CHARS) s = [...s].slice(0, MAX_CHARS - 1).join('') + '…';
    return withIndex ? `${i} ${s}` : s;
  }

  // d: {tokens: string[], weights: Float32Array [n * n] (row q = query q over the keys), query
  // (index, -1 for all), threshold (default 0.02), lang}. Returns {rowAt(y): the token row at y
  // CSS pixels from the canvas's top (-1 outside), lines: how many lines were drawn, key: the
  // key's texts}.
  function drawHeadLines(canvas, d) {
    const query = d.query === undefined ? -1 : d.query;
    const threshold = d.threshold === undefined ? 0.02 : d.threshold;
    check({ ...d, query });
    const t = stringsOf(d.lang).headLines;
    const n = d.tokens.length, weights = d.weights;

    // The canvas at its CSS size times the device's pixel ratio; drawing in CSS pixels.
    const { ctx, w, h } = Heat.fitCanvas(canvas);

    const rowH = n ? (h - TOP - BOTTOM) / n : 0;
    const rowAt = (y) => {
      if (!n || y < TOP) return -1;
      const i = Math.floor((y - TOP) / rowH);
      return i < n ? i : -1;
    };
    const rowY = (i) => TOP + rowH * (i + 0.5);
    const labelW = Math.min(160, w * 0.28);
    const x0 = labelW + GAP, x1 = w - labelW - GAP;

    // The key: the threshold, sample lines from the weakest band to the strongest, what a
    // hovered query shows; then the column names.
    const style = (strength) => ({ colour: rgb(Heat.viridis(0.8 * strength)), width: 0.5 + 2.5 * strength }); // the ramp's yellow end is lost on white
    ctx.textBaseline = 'middle';
    ctx.font = `11px ${FONT}`;
    ctx.fillStyle = '#555';
    const key = { shown: t.shown(threshold), weak: t.weak(threshold), strong: t.strong, chosen: t.chosen };
    const samples = [1, 4, 8, 12, 16].map((level) => style(level / LEVELS));
    const weakW = ctx.measureText(key.weak).width, strongW = ctx.measureText(key.strong).width;
    const sampleW = 14, total = weakW + strongW + samples.length * (sampleW + 4) + 12;
    let x = Math.max(2, (w - total) / 2);
    ctx.textAlign = 'left';
    ctx.fillText(key.weak, x, 9);
    x += weakW + 6;
    for (const sample of samples) {
      ctx.strokeStyle = sample.colour;
      ctx.lineWidth = sample.width;
      ctx.beginPath();
      ctx.moveTo(x, 9);
      ctx.lineTo(x + sampleW, 9);
      ctx.stroke();
      x += sampleW + 4;
    }
    ctx.fillText(key.strong, x + 2, 9);
    ctx.textAlign = 'center';
    ctx.fillText(key.chosen, w / 2, 25, w - 4);
    ctx.font = `bold 12px ${FONT}`;
    ctx.fillStyle = '#1d1d1f';
    ctx.textAlign = 'right';
    ctx.fillText(t.queries, labelW, 45);
    ctx.textAlign = 'left';
    ctx.fillText(t.keys, w - labelW, 45);
    ctx.font = `11px ${FONT}`;
    ctx.fillStyle = '#555';
    ctx.textAlign = 'center';
    ctx.fillText(key.shown, w / 2, 45);
    if (!n) return { rowAt, lines: 0, key };

    // Lines in bands of weight: one path per band, so 512 tokens stay quick to draw.
    let lines = 0;
    // factor: opacity of the whole pass; floor: the faintest line's opacity before it.
    const stroke = (rows, factor, floor, extraWidth) => {
      const bands = Array.from({ length: LEVELS }, () => []);
      for (const q of rows) {
        for (let k = 0; k < n; k++) {
          const v = weights[q * n + k];
          if (!(v >= threshold)) continue;
          bands[Math.min(LEVELS - 1, Math.floor(v * LEVELS))].push(q, k);
        }
      }
      bands.forEach((band, level) => {
        if (!band.length) return;
        const strength = (level + 1) / LEVELS, look = style(strength);
        ctx.strokeStyle = look.colour;
        ctx.globalAlpha = factor * Math.max(floor, strength);
        ctx.lineWidth = look.width + extraWidth;
        ctx.beginPath();
        for (let j = 0; j < band.length; j += 2) {
          ctx.moveTo(x0, rowY(band[j]));
          ctx.lineTo(x1, rowY(band[j + 1]));
          lines++;
        }
        ctx.stroke();
      });
      ctx.globalAlpha = 1;
    };
    const others = [];
    for (let q = 0; q < n; q++) if (q !== query) others.push(q);
    stroke(others, query >= 0 ? FADED : 1, 0.15, 0);
    if (query >= 0) stroke([query], 1, 0.35, 1);

    // Labels: every k-th one when rows are too thin for all (the chosen query's always, the
    // k-th ones next to it left out); the chosen query and the keys it attends to in bold.
    const fontPx = Math.min(13, Math.max(8, Math.floor(rowH * 0.85)));
    const every = Math.max(1, Math.ceil((fontPx + 1) / rowH));
    const attended = new Set();
    if (query >= 0) for (let k = 0; k < n; k++) if (weights[query * n + k] >= threshold) attended.add(k);
    const font = (bold) => `${bold ? 'bold ' : ''}${fontPx}px ${FONT}`;
    if (query >= 0) {
      const band = Math.max(rowH, fontPx + 2);
      ctx.fillStyle = 'rgba(0, 114, 178, 0.15)'; // Okabe–Ito blue, light
      ctx.fillRect(0, rowY(query) - band / 2, labelW + GAP / 2, band);
    }
    ctx.fillStyle = '#1d1d1f';
    for (let i = 0; i < n; i++) {
      const plain = i % every === 0;
      const nearQuery = every > 1 && query >= 0 && i !== query && Math.abs(i - query) < every;
      if (i === query || (plain && !nearQuery)) {
        ctx.font = font(i === query);
        ctx.textAlign = 'right';
        ctx.fillText(label(d.tokens[i], i, every > 1), labelW, rowY(i));
      }
      // Keys: the k-th labels only (all of them when there is room), bold when attended.
      if (plain) {
        ctx.font = font(attended.has(i));
        ctx.textAlign = 'left';
        ctx.fillText(label(d.tokens[i], i, every > 1), w - labelW, rowY(i));
      }
    }
    return { rowAt, lines, key };
  }

  // The head's weights: one line per query (its index, its token, its weight on each key).
  function csv(d, lang) {
    check({ ...d, query: -1 });
    const t = stringsOf(lang).headLines, n = d.tokens.length, line = csvLine;
    const lines = [line([t.csvQuery, t.csvToken, ...Array.from({ length: n }, (_, j) => t.csvKey(j))])];
    for (let q = 0; q < n; q++) lines.push(line([q, d.tokens[q], ...Array.from(d.weights.slice(q * n, q * n + n))]));
    return lines.join('\n') + '\n';
  }

export { drawHeadLines, csv };
