// model/next-chart.js — the next token: for each id the sampler considered, its probability
// after each of the sampler's five stages (raw softmax, temperature, repetition penalty, top-k,
// top-p), as the core gives them: for the draw to come (al_model_lab_pending, with the sampler
// settings as they stand) or, once the text has ended, the last draw (al_model_lab_stages), the
// token drawn marked. The probabilities on a linear or a log axis. Its bars (barsConfig) and
// the stages' names and colours are also the walkthrough's (charts/sampler.js).
import { visibleText, csvLine } from '../ui/format.js';
import { stringsOf } from '../ui/i18n.js';

  // Okabe–Ito (readable with colour-blindness), one colour per stage; the drawn token's bars
  // get a black border.
  const STAGE_COLOURS = ['#E69F00', '#56B4E9', '#009E73', '#0072B2', '#CC79A7'];
  const STAGES = STAGE_COLOURS.length; // AL_SAMPLER_STAGES
  const MARK = '#000000';

  // The x label of an id: its text quoted, whitespace visible, then the id; the id alone when
  // there is no text.
  function tokenLabel(text, id) {
    return text ? `"${visibleText(text)}" (#${id})` : `#${id}`;
  }

  function check(d) {
    if (!Number.isInteger(d.vocab) || d.vocab < 1) throw new RangeError(`next-token chart: vocab ${d.vocab} is not a positive integer`);
    if (!d.stages || d.stages.length < STAGES * d.vocab) {
      throw new RangeError(`next-token chart: stages holds ${d.stages ? d.stages.length : 0} values, ${STAGES} × ${d.vocab} needed`);
    }
    for (const id of d.ids) {
      if (!Number.isInteger(id) || id < 0 || id >= d.vocab) throw new RangeError(`next-token chart: id ${id} is outside the vocabulary (${d.vocab})`);
    }
    if (d.labels && d.labels.length !== d.ids.length) {
      throw new RangeError(`next-token chart: ${d.labels.length} labels for ${d.ids.length} ids`);
    }
  }

  // The smallest probability the log axis shows.
  const LOG_MIN = 1e-4;

  // The bars the next-token chart and the walkthrough's sampler charts (charts/sampler.js)
  // share: one group per x label, one bar per series (a stage of the sampler, or one stage under
  // several settings), the bars at chosenAt outlined and its tick in bold, lines drawn over the
  // bars. b: {xLabels, series: [{label, data (by x), colour}], chosenAt (-1: none), title,
  // xTitle, y (the y scale), lines: [{label, data (by x), colour}] (optional)}.
  function barsConfig(b) {
    const isChosen = (c) => !!c.tick && c.tick.value === b.chosenAt;
    const datasets = b.series.map((s) => ({
      label: s.label,
      data: s.data,
      backgroundColor: s.colour,
      borderColor: s.data.map((_, i) => (i === b.chosenAt ? MARK : s.colour)),
      borderWidth: s.data.map((_, i) => (i === b.chosenAt ? 3 : 0)),
      borderSkipped: false,
    }));
    for (const l of b.lines || []) {
      datasets.push({ type: 'line', label: l.label, data: l.data, borderColor: l.colour, backgroundColor: l.colour, borderDash: [6, 3], borderWidth: 2, pointRadius: 3 });
    }
    return {
      type: 'bar',
      data: { labels: b.xLabels, datasets },
      options: {
        animation: false, responsive: true, maintainAspectRatio: false,
        interaction: { mode: 'index', intersect: false },
        plugins: {
          title: { display: true, text: b.title },
          legend: { display: true },
          tooltip: {
            callbacks: {
              title: (items) => (items.length ? b.xLabels[items[0].dataIndex] : ''),
              label: (c) => `${c.dataset.label}: ${c.raw.toFixed(4)}`,
            },
          },
        },
        scales: {
          x: {
            title: { display: true, text: b.xTitle },
            ticks: {
              autoSkip: false, maxRotation: 60,
              color: (c) => (isChosen(c) ? MARK : '#555'),
              font: (c) => (isChosen(c) ? { weight: 'bold' } : { weight: 'normal' }),
            },
          },
          y: b.y,
        },
      },
    };
  }

  // The probability axis: linear from 0 to 1, or log from LOG_MIN.
  function probabilityAxis(log, title) {
    return log
      ? { type: 'logarithmic', min: LOG_MIN, max: 1, title: { display: true, text: title },
        // the powers of ten only, written out (0.001, not 1e-3)
        afterBuildTicks: (axis) => { axis.ticks = [1e-4, 1e-3, 1e-2, 1e-1, 1].map((value) => ({ value })); },
        ticks: { callback: (v) => String(v) } }
      : { type: 'linear', min: 0, max: 1, title: { display: true, text: title } };
  }

  // d: {ids: Int32Array (most likely first; the drawn one may be last), labels: string[] (same
  // order; '' shows the id), stages: Float32Array [5 * vocab] (row s = stage s, index
  // s * vocab + id), vocab, chosen (id or -1), pending (the draw to come, not one made), log
  // (a log probability axis), lang}
  function nextConfig(d) {
    check(d);
    const t = stringsOf(d.lang).nextChart;
    const ids = Array.from(d.ids);
    const labels = d.labels || [];
    const chosenAt = ids.indexOf(d.chosen); // -1: none drawn yet
    return barsConfig({
      xLabels: ids.map((id, i) => (i === chosenAt ? '▶ ' : '') + tokenLabel(labels[i], id)),
      series: t.stages.map((name, s) => ({ label: name, colour: STAGE_COLOURS[s], data: ids.map((id) => d.stages[s * d.vocab + id]) })),
      chosenAt,
      title: d.pending ? t.titlePending : d.chosen >= 0 ? t.titleLast : t.title,
      xTitle: d.pending ? t.xPending : t.xTitle,
      y: probabilityAxis(d.log, t.yTitle),
    });
  }

  // The chart's numbers: one line per id, its text, the id, the five stages, drawn (1) or not.
  function csv(d, lang) {
    check(d);
    const t = stringsOf(lang).nextChart;
    const labels = d.labels || [];
    const lines = [csvLine([t.token, t.id, ...t.stages, t.chosen])];
    Array.from(d.ids).forEach((id, i) => {
      const row = [labels[i] || '', id];
      for (let s = 0; s < STAGES; s++) row.push(d.stages[s * d.vocab + id]);
      row.push(id === d.chosen ? 1 : 0);
      lines.push(csvLine(row));
    });
    return lines.join('\n') + '\n';
  }

export { nextConfig, barsConfig, probabilityAxis, csv, STAGE_COLOURS };
