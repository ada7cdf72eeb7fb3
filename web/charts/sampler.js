// sampler.js — chart 7: chapter 10's sampler on the script's 12-token vocabulary, from the
// numbers the core keeps as the demo prints them (core.demoSamplerStages, demoTemperatures,
// demoDraws, demoEos): the sampler's stages as the model view's next-token chart draws them
// (its bars, stage names and colours: model/next-chart.js) for greedy decoding, top-k, top-p
// with its cumulative sum, the logits before and after the repetition penalty, the three
// temperatures side by side with their entropies, the eight draws of the whole sampler, and
// the batch's tokens with their EOS flags step by step.
import * as NextChart from '../model/next-chart.js';
import * as Heat from '../ui/heatmap.js';
import { stringsOf } from '../ui/i18n.js';

  // The sampler's stages by the model view's order (al_sampler_stages' rows).
  const RAW = 0, PENALISED = 2, TOP_K = 3, TOP_P = 4;
  const TEMPS = ['#0072B2', '#009E73', '#D55E00']; // Okabe–Ito, cold to hot
  const CUMULATIVE = '#c62828';

  const stageName = (lang, s) => stringsOf(lang).nextChart.stages[s];
  const ids = (n) => Array.from({ length: n }, (_, i) => i);

  // d: {stages (core.demoSamplerStages), example: 1, 3 or 4, t, lang}. Example 1: the raw
  // softmax, its greedy choice marked; 3: raw against top-k, the masked ids crossed out; 4: the
  // same for top-p, most likely first, with the cumulative sum the mask comes from.
  function stagesConfig(d) {
    const st = d.stages, V = st.vocab;
    const order = d.example === 4 ? Array.from(st.order) : ids(V);
    const kept = (id) => st.marks[id] === 1;
    const shown = d.example === 1 ? [RAW] : [RAW, d.example === 3 ? TOP_K : TOP_P];
    const chosenAt = d.example === 1 ? order.findIndex(kept) : -1;
    const xLabels = order.map((id) => (d.example === 1 ? `${kept(id) ? '▶ ' : ''}#${id}` : `${kept(id) ? '' : '✕ '}#${id}`));
    return NextChart.barsConfig({
      xLabels,
      series: shown.map((s) => ({ label: stageName(d.lang, s), colour: NextChart.STAGE_COLOURS[s], data: order.map((id) => st.stages[s * V + id]) })),
      chosenAt,
      title: d.t.genStagesTitle[d.example],
      xTitle: d.t.genStagesX[d.example],
      y: { type: 'linear', beginAtZero: true, title: { display: true, text: d.t.genProb } },
      lines: d.example === 4 ? [{ label: d.t.genCumulative, data: Array.from(st.cumulative), colour: CUMULATIVE }] : [],
    });
  }

  // d: {stages (core.demoSamplerStages of example 5), t, lang}: the logits before and after the
  // penalty, the ids already generated marked; their probabilities are the stages' (tooltip).
  function penaltyConfig(d) {
    const st = d.stages, V = st.vocab;
    const seen = (id) => st.marks[id] === 1;
    return NextChart.barsConfig({
      xLabels: ids(V).map((id) => `${seen(id) ? '● ' : ''}#${id}`),
      series: [
        { label: d.t.genRawLogits, colour: NextChart.STAGE_COLOURS[RAW], data: Array.from(st.logits) },
        { label: d.t.genPenalisedLogits, colour: NextChart.STAGE_COLOURS[PENALISED], data: Array.from(st.penalised) },
      ],
      chosenAt: -1,
      title: d.t.genPenaltyTitle,
      xTitle: d.t.genPenaltyX,
      y: { type: 'linear', title: { display: true, text: d.t.genLogit } },
    });
  }

  // d: {temps (core.demoTemperatures), t}: softmax(logits / T) at each temperature, side by
  // side, each named with its entropy.
  function temperaturesConfig(d) {
    const V = d.temps[0].probs.length;
    return NextChart.barsConfig({
      xLabels: ids(V).map((id) => `#${id}`),
      series: d.temps.map((k, i) => ({ label: d.t.genTempSeries(k.temperature, k.entropy.toFixed(4)), colour: TEMPS[i], data: Array.from(k.probs) })),
      chosenAt: -1,
      title: d.t.genTempsTitle,
      xTitle: d.t.genTokenId,
      y: { type: 'linear', beginAtZero: true, title: { display: true, text: d.t.genProb } },
    });
  }

  // d: {draws (core.demoDraws), t, lang, image}: each step's distribution after the last stage,
  // steps as rows, ids as columns, the token drawn outlined and named beside its row.
  function drawsConfig(d, tooltip) {
    const r = d.draws;
    const drawn = [];
    for (let i = 0; i < r.drawn.length; i++) if (r.drawn[i] === 1) drawn.push(i);
    return Heat.heatmapConfig({
      values: r.probs, rows: r.draws, cols: r.vocab, lo: 0, hi: 1, image: d.image, cellsKey: d.cellsKey,
      title: [d.t.genDrawsTitle(r.draws), d.t.genDrawsKey],
      xLabel: d.t.genTokenId, yLabel: d.t.genStep, lang: d.lang, outlineCells: drawn,
      rowNames: drawn.map((cell, s) => `${s + 1} → #${cell % r.vocab}`),
      cellText: (v) => (v !== 0 ? v.toFixed(2) : '–'), format: (v) => v.toPrecision(4),
    }, tooltip);
  }

  // d: {eos (core.demoEos), t, lang, image}: sequences as rows, the steps run as columns, each
  // cell the token the sequence got, shaded once it has finished.
  function eosConfig(d, tooltip) {
    const e = d.eos, B = e.batch, M = e.maxNew;
    let steps = 0;
    while (steps < M && e.tokens[steps] !== -1) steps++;
    const pick = (a) => Float32Array.from({ length: B * steps }, (_, i) => a[Math.floor(i / steps) * M + (i % steps)]);
    const tokens = pick(e.tokens), finished = pick(e.finished);
    return Heat.heatmapConfig({
      values: finished, rows: B, cols: steps, lo: 0, hi: 1, image: d.image, cellsKey: d.cellsKey,
      title: d.t.genEosTitle, xLabel: d.t.genStep, yLabel: d.t.genSequence, lang: d.lang,
      colNames: ids(steps).map((s) => String(s + 1)),
      legend: [{ value: 0, text: d.t.genRunning }, { value: 1, text: d.t.genFinished }],
      cellText: (_v, i) => String(tokens[i]),
      format: (v, i) => `${d.t.genTokenId} ${tokens[i]}, ${v === 1 ? d.t.genFinished : d.t.genRunning}`,
    }, tooltip);
  }

export { stagesConfig, penaltyConfig, temperaturesConfig, drawsConfig, eosConfig };
