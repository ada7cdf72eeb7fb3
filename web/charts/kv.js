// charts/kv.js — the KV cache while the text grows, in both views: its bytes beside the same
// attention with MHA (n_kv_heads = n_heads) and MQA (n_kv_heads = 1), and the attention FLOPs
// of each step with the cache against recomputing every token. The rows are the core's, one
// per cache length (row 0 after the prompt, the prefill; then one after each decode step):
//   scope 'layer': one layer, al_kv_growth (core.kvGrowth), the full rectangle of scores counted
//                  (al_attn_flops_full: what PyTorch's eager layer multiplies, the masked too);
//   scope 'model': every layer of the model, al_model_lab_kv, the causal work counted
//                  (al_model_flops_causal: a query's scores over the keys it sees, none masked).
import { formatBytes, formatCount, csvRows } from '../ui/format.js';
import { stringsOf } from '../ui/i18n.js';

  // Okabe–Ito: this attention blue, MHA vermillion, MQA bluish green; the current row black.
  // Told apart with every kind of colour blindness (and by the lines' dashes too), and each at
  // least 3:1 against the panels' white (5.2, 3.9 and 3.4), which viridis' yellow end is not.
  const BLUE = '#0072B2', VERMILLION = '#D55E00', GREEN = '#009E73', MARK = '#000000';

  // Log-axis ticks: only 1, 2 and 5 times a power of ten are labelled.
  function logTick(v) {
    const mantissa = Number(v).toExponential().split('e')[0];
    return mantissa === '1' || mantissa === '2' || mantissa === '5' ? formatCount(v) : '';
  }

  // The names of how the heads share K and V, for the core's word (al_kv_sharing_of).
  const SHARING = { mha: 'MHA', gqa: 'GQA', mqa: 'MQA' };
  const SCOPES = ['layer', 'model'];

  function checkRows(rows, current) {
    if (!Array.isArray(rows)) throw new RangeError('KV chart: rows must be an array');
    if (!Number.isInteger(current) || current < -1 || current >= rows.length) {
      throw new RangeError(`KV chart: current row ${current} is not -1 or a row (${rows.length} rows)`);
    }
  }

  function checkScope(scope) {
    if (!SCOPES.includes(scope)) throw new RangeError(`KV chart: scope '${scope}' is not 'layer' or 'model'`);
  }

  // The x axis: tokens in the cache (a linear axis: its ticks cost the same at 10 rows and at
  // 1000), the prompt's length labelled as the prompt; tooltips name the row.
  // One row (just after the prefill) gets a token of room each side: an axis of no width
  // draws no point.
  function xAxis(rows, t) {
    const first = rows.length ? rows[0].len : 0, last = rows.length ? rows[rows.length - 1].len : 1;
    const single = last <= first;
    return {
      type: 'linear', min: single ? Math.max(0, first - 1) : first, max: single ? first + 1 : last,
      title: { display: true, text: t.tokens },
      ticks: { precision: 0, callback: (value) => (value === first ? `${first} ${t.prompt}` : String(value)) },
    };
  }
  const rowTitle = (rows, t) => (items) => {
    if (!items.length) return '';
    const i = items[0].dataIndex;
    return i === 0 ? t.prefillRow(rows[0].len) : t.stepRow(rows[i].len);
  };

  // The current row's point: larger, a black-edged diamond; the other points small (none past
  // 64 rows, where they would only crowd the line).
  function points(rows, current, colour) {
    const small = rows.length > 64 ? 0 : 2;
    return {
      pointRadius: rows.map((_, i) => (i === current ? 6 : small)),
      pointHoverRadius: rows.map((_, i) => (i === current ? 7 : 4)),
      pointStyle: rows.map((_, i) => (i === current ? 'rectRot' : 'circle')),
      pointBorderColor: rows.map((_, i) => (i === current ? MARK : colour)),
      pointBorderWidth: rows.map((_, i) => (i === current ? 2 : 1)),
      pointBackgroundColor: colour,
    };
  }

  // A line chart of some of the rows' fields against the tokens in the cache: series [label,
  // field, colour, dash] each; unit names a value in the tooltip, format writes it, y the axis.
  function rowsChart(d, t, title, series, unit, format, y) {
    const rows = d.rows;
    return {
      type: 'line',
      data: {
        datasets: series.map(([label, field, colour, dash]) => ({
          label, data: rows.map((r) => ({ x: r.len, y: r[field] })), borderColor: colour, backgroundColor: colour,
          borderDash: dash, ...points(rows, d.current, colour),
        })),
      },
      options: {
        animation: false, responsive: true, maintainAspectRatio: false, parsing: false, normalized: true,
        interaction: { mode: 'index', intersect: false },
        plugins: {
          title: { display: true, text: title },
          tooltip: {
            callbacks: {
              title: rowTitle(rows, t),
              label: (c) => `${c.dataset.label}: ${c.raw.y} ${unit} (${format(c.raw.y)})`,
            },
          },
        },
        scales: { x: xAxis(rows, t), y },
      },
    };
  }

  // d: {rows: [{len, bytes, bytes_mha, bytes_mqa, flops_cached, flops_uncached}], scope ('layer'
  // | 'model'), nLayers (scope 'model'), nHeads, nKvHeads, sharing ('mha' | 'gqa' | 'mqa', the
  // core's), current (row index or -1), lang}
  function kvBytesConfig(d) {
    checkRows(d.rows, d.current);
    checkScope(d.scope);
    if (!(d.sharing in SHARING)) throw new RangeError(`KV chart: unknown sharing ${d.sharing}`);
    const t = stringsOf(d.lang).kvChart;
    const title = d.scope === 'model' ? t.bytesTitleModel(d.nLayers) : t.bytesTitleLayer;
    const mine = d.scope === 'model' ? t.thisModel : t.thisLayer;
    return rowsChart(d, t, title, [
      [mine(SHARING[d.sharing], d.nKvHeads), 'bytes', BLUE, []],
      [t.mha(d.nHeads), 'bytes_mha', VERMILLION, [6, 3]],
      [t.mqa, 'bytes_mqa', GREEN, [2, 2]],
    ], t.byteUnit, formatBytes,
    { beginAtZero: true, title: { display: true, text: t.bytes }, ticks: { callback: (v) => formatBytes(v) } });
  }

  // d: {rows, scope, current, lang}; the subtitle says which scores the scope's FLOPs count.
  function kvFlopsConfig(d) {
    checkRows(d.rows, d.current);
    checkScope(d.scope);
    const t = stringsOf(d.lang).kvChart;
    const c = rowsChart(d, t, t.flopsTitle, [
      [t.withCache, 'flops_cached', BLUE, []],
      [t.recompute, 'flops_uncached', VERMILLION, [6, 3]],
    ], t.flops, formatCount,
    { type: 'logarithmic', title: { display: true, text: t.flops }, ticks: { callback: (v) => logTick(v) } });
    c.options.plugins.subtitle = { display: true, text: d.scope === 'model' ? t.flopsCausal : t.flopsFull };
    return c;
  }

  // Both charts' numbers: one line per row (tokens in the cache, prefill or decode, the three
  // byte counts, the two FLOPs counts).
  function csv(d, lang) {
    checkRows(d.rows, d.current === undefined ? -1 : d.current);
    const t = stringsOf(lang).kvChart;
    return csvRows([[t.tokens, t.phase, ...t.csvBytes, ...t.csvFlops],
      ...d.rows.map((r, i) => [r.len, i === 0 ? t.prefill : t.decode, r.bytes, r.bytes_mha, r.bytes_mqa, r.flops_cached, r.flops_uncached])]);
  }

export { kvBytesConfig, kvFlopsConfig, csv };
