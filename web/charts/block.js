// block.js — chart 6: chapter 05's block, from the numbers the core keeps as the demo prints them
// (core.demoBlockStream, demoShiftedLabels): the norm of the residual stream through 6 pre-norm
// and 6 post-norm blocks, and the loss of each position against the label it is trained on
// after the shift, the ignored ones marked.

  const PRE = '#21908c', POST = '#440154', NLL = '#3b528b', MEAN = '#c62828';
  const IGNORE = -100; // cross_entropy's ignore_index, as the core writes it

  // d: {stream: {pre, post} [depth + 1], t}
  function streamConfig(d) {
    const labels = Array.from(d.stream.pre, (_, i) => i);
    return {
      type: 'line',
      data: {
        labels,
        datasets: [
          { label: d.t.preNorm, data: Array.from(d.stream.pre), borderColor: PRE, backgroundColor: PRE, pointRadius: 3 },
          { label: d.t.postNorm, data: Array.from(d.stream.post), borderColor: POST, backgroundColor: POST, borderDash: [6, 3], pointRadius: 3 },
        ],
      },
      options: {
        animation: false, responsive: true, maintainAspectRatio: false,
        plugins: { title: { display: true, text: d.t.streamTitle },
          tooltip: { callbacks: { label: (c) => `${c.dataset.label}: ${c.raw.toFixed(4)}` } } },
        scales: { x: { title: { display: true, text: d.t.blocksApplied } }, y: { beginAtZero: true, title: { display: true, text: d.t.streamNorm } } },
      },
    };
  }

  // What position t is scored on, in words: its label after the shift, or why it has none.
  function targetText(l, t, words) {
    if (t === l.targets.length - 1) return words.noNext;
    return l.targets[t] === IGNORE ? words.ignored : `→ ${l.targets[t]}`;
  }

  // d: {labels: {ids, labels, targets, nll, loss} [positions], t}. One bar per position: the
  // loss of the label it predicts; the positions that count for nothing are named so on the
  // axis, in grey (their bars are 0); the mean (the loss) as a line.
  function labelsConfig(d) {
    const l = d.labels;
    const counts = Array.from(l.targets, (v) => v !== IGNORE); // the last position's is IGNORE too
    const labels = Array.from(l.ids, (id, t) => [`${d.t.positionShort} ${t} · id ${id}`, targetText(l, t, d.t)]);
    return {
      type: 'bar',
      data: {
        labels,
        datasets: [
          { label: d.t.nllBars, data: Array.from(l.nll), backgroundColor: NLL },
          { type: 'line', label: d.t.meanLoss(l.loss[0].toFixed(4)), data: Array.from(l.loss), borderColor: MEAN, backgroundColor: MEAN, borderDash: [6, 3], pointRadius: 0, borderWidth: 2 },
        ],
      },
      options: {
        animation: false, responsive: true, maintainAspectRatio: false,
        plugins: { title: { display: true, text: d.t.labelsTitle } },
        scales: {
          x: { title: { display: true, text: d.t.labelsX }, ticks: { autoSkip: false, maxRotation: 0, color: (c) => (counts[c.index] ? '#333' : '#666') } },
          y: { beginAtZero: true, title: { display: true, text: d.t.nllAxis } },
        },
      },
    };
  }

export { streamConfig, labelsConfig };
