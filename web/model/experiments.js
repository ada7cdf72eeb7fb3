// model/experiments.js — the model view's Experiments panel: heads switched off with a grid of
// toggle buttons (the link's off), and at once what that changes — the next token's
// distribution, the next 20 tokens with the sampler's settings and seed, the prompt's loss —
// then the logit lens (layers × positions, each layer's top token), the direct attribution of
// a next token to the heads that wrote it (hover a bar of a next-token chart, or its button),
// and activation patching of two prompts (the model's suggested pair, or the learner's). Every
// number comes from the core through the model worker (ops ablate, experiment, patch).
// A head switched off redraws at once the charts on the screen; those off it (and the patch,
// asked of the worker only then) once they come into view.
import { visibleText, csvRows } from '../ui/format.js';
import * as Heat from '../ui/heatmap.js';
import * as OnScreen from '../ui/on-screen.js';
import { page } from '../ui/page.js';
import * as State from '../ui/state.js';
import * as ExperimentCharts from './experiments-charts.js';
  const $ = (id) => document.getElementById(id);
  const COUNT = 20; // the draws ahead shown
  const PATCH_KEYS = ['clean', 'corrupt', 'answer', 'wrong'];
  const INPUT = { clean: 'exp-clean', corrupt: 'exp-corrupt', answer: 'exp-answer', wrong: 'exp-wrong' };

  const state = {
    api: null,     // the model controls' queue, client, show, sampler settings, view args, playing
    info: null,    // the loaded model
    snap: null,    // the last snapshot shown
    exp: null,     // the last experiment drawn
    patch: null,   // the last patch drawn
    queued: false, // an experiment request waits in the queue
    patchDue: false, // the model is new: its pair is patched once its prompt has run
    ablating: 0,   // ablate requests not answered yet: the heads they send are the state's
    inFlight: 0,   // the panel's requests not answered yet (0: what it shows is the state's,
                   // but for the charts off the screen that wait to come into view)
    patchRun: null, // the last patch asked for, until drawn
  };
  const charts = {};
  const images = {};
  const imageFor = (id) => (images[id] ||= document.createElement('canvas'));
  const draw = (id, config) => page.drawChart(charts, id, config);
  // A chart drawn by fn, at once or (lazy) once it is on the screen.
  const drawSeen = (id, fn, lazy) => OnScreen.draw($(id), null, fn, lazy);
  const forget = (id) => {
    OnScreen.forget($(id));
    if (charts[id]) { charts[id].destroy(); delete charts[id]; }
  };
  const patchBox = () => $('chart-exp-patch-heads').parentElement.parentElement; // both maps
  const visible = (text) => visibleText(text);
  const chipName = (tok) => visible(Heat.tokenLabel(tok));
  const fixed = (v, d = 3) => (Number.isFinite(v) ? v.toFixed(d) : String(v));
  // a token's text short enough for a lens cell
  const cellName = (text) => {
    const chars = [...visible(text)];
    return chars.length > 4 ? `${chars.slice(0, 3).join('')}…` : chars.join('');
  };
  const offHeads = () => State.headsOf(page.state.off);

  // A request of the panel's, counted until it is answered (and drawn).
  function answered(promise) {
    state.inFlight++;
    return promise.finally(() => { state.inFlight--; });
  }

  function message(text) {
    $('exp-message').textContent = text || '';
    $('exp-message').hidden = !text;
  }

  // ---------------------------------------------------------------- the heads off
  // The toggle buttons, one per layer and head, made once per model shape and language.
  function buildHeads() {
    const { n_layers: L, n_heads: Hn } = state.info.hparams, t = page.t;
    const box = $('exp-heads');
    const shape = `${L}x${Hn}|${page.state.lang}`;
    if (box.dataset.shape === shape) return;
    box.replaceChildren();
    box.style.gridTemplateColumns = `auto repeat(${Hn}, minmax(0, 1fr))`;
    for (let l = 0; l < L; l++) {
      const label = document.createElement('span');
      label.className = 'axis';
      label.textContent = `L${l}`;
      box.appendChild(label);
      for (let h = 0; h < Hn; h++) {
        const b = document.createElement('button');
        b.type = 'button';
        b.className = 'exp-head';
        b.dataset.layer = String(l);
        b.dataset.head = String(h);
        b.textContent = `h${h}`;
        b.setAttribute('aria-pressed', 'false');
        box.appendChild(b);
      }
    }
    box.dataset.shape = shape;
  }

  function syncHeads() {
    if (!state.info) return;
    buildHeads();
    const t = page.t, off = new Set(offHeads().map(([l, h]) => `${l}.${h}`));
    for (const b of $('exp-heads').querySelectorAll('button.exp-head')) {
      const l = Number(b.dataset.layer), h = Number(b.dataset.head), on = off.has(`${l}.${h}`);
      b.setAttribute('aria-pressed', String(on));
      b.setAttribute('aria-label', t.expHeadTip(l, h, on));
    }
    $('exp-off-list').textContent = t.expOff(offHeads().map(([l, h]) => t.expHead(l, h)));
  }

  // The heads off as the state has them, sent to the worker: every chart comes back redrawn.
  // Two requests at once, the snapshot of the lab with those heads off and then the panel's
  // experiment: the worker computes the second while the first's charts are drawn here.
  function ablate() {
    message('');
    syncHeads();
    page.writeHash();
    const heads = offHeads();
    state.ablating++;
    return answered(state.api.queue(async () => {
      const client = state.api.client();
      const snapshot = client.request('ablate', { heads, view: state.api.viewArgs() });
      const experiment = client.request('experiment', { sampler: state.api.sampler(), count: COUNT, target: page.state.dla });
      experiment.catch(() => {}); // said below, once the snapshot is drawn (or refused)
      let snap;
      try {
        snap = await snapshot;
      } finally {
        state.ablating--;
      }
      state.expKey = expKeyOf(snap); // on its way: the snapshot asks for no other
      state.api.show(snap, true);
      render((await experiment).exp, true);
      // its maps are of the heads off too: patched again once they are on the screen
      if (state.patch && !state.patch.mismatch) OnScreen.draw(patchBox(), null, runPatch, true);
    }).catch((e) => {
      state.expKey = ''; // none came: the next refresh asks again
      message(page.t.errorPrefix + e.message);
    }));
  }

  function toggle(layer, head) {
    const list = offHeads().filter(([l, h]) => l !== layer || h !== head);
    if (list.length === offHeads().length) list.push([layer, head]);
    list.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
    page.state.off = State.headsText(list);
    return ablate();
  }

  // ---------------------------------------------------------------- what it changes
  // What an experiment on the lab as snap shows it is of.
  const expKeyOf = (snap) => JSON.stringify([snap.serial, snap.len, snap.finish, page.state.off, state.api.sampler(), page.state.dla]);

  // The experiment for the state as it stands (one request waiting at most), unless Play runs.
  function refresh() {
    if (!state.api || state.queued || state.api.playing() || !state.snap || !state.snap.len) return;
    // what the experiment is of: the same as the one drawn (a head opened, say) asks for none
    const key = expKeyOf(state.snap);
    if (key === state.expKey) return;
    state.expKey = key;
    state.queued = true;
    answered(state.api.queue(() => {
      state.queued = false;
      return state.api.client().request('experiment', { sampler: state.api.sampler(), count: COUNT, target: page.state.dla });
    }).then((r) => render(r.exp)).catch((e) => message(page.t.errorPrefix + e.message)));
  }

  function renderEffect(exp, lazy) {
    const t = page.t;
    const { all, off } = exp;
    $('exp-loss').textContent = off.loss.error ? t.expLossNone(off.loss.error)
      : t.expLoss(fixed(off.loss.value, 4), fixed(all.loss.value, 4), exp.promptLen - 1);
    const ahead = (side) => (exp.going ? side.text + (side.ids.length < exp.count ? t.expEnded(side.ids.length) : '') : t.expNoDraw);
    $('exp-text-all').textContent = ahead(all);
    $('exp-text-off').textContent = ahead(off);
    if (!exp.top.length) { forget('chart-exp-next'); return; }
    drawSeen('chart-exp-next', () => draw('chart-exp-next', ExperimentCharts.compareConfig({
      ids: exp.top, labels: exp.labels, all: all.probs, off: off.probs, title: t.expNextTitle,
      names: { all: t.expNextAll, off: t.expNextOff }, xTitle: t.expToken, yTitle: t.expProb,
    })), lazy);
  }

  // The lens: rows read out before layer 0 and after each layer, columns the positions.
  function lensData(exp) {
    const t = page.t, tokens = state.snap ? state.snap.tokens : [];
    return {
      ...exp.lens, labels: exp.labels,
      rowNames: Array.from({ length: exp.lens.rows }, (_, l) => t.expLensRow(l)),
      colNames: Array.from({ length: exp.lens.cols }, (_, j) => (tokens[j] ? chipName(tokens[j]) : String(j))),
    };
  }
  function renderLens(exp, lazy) {
    drawSeen('chart-exp-lens', () => drawLens(exp), lazy);
  }
  function drawLens(exp) {
    const t = page.t, d = lensData(exp), name = (i) => exp.labels[d.top[i]] || '';
    draw('chart-exp-lens', Heat.heatmapConfig({
      values: d.prob, rows: d.rows, cols: d.cols, lo: 0, hi: 1, unit: t.expProb, title: t.expLensTitle,
      xLabel: t.expLensX, yLabel: t.expLensY, rowNames: d.rowNames, colNames: d.colNames, valuesUpTo: 64,
      cellText: (_v, i) => cellName(name(i)), format: (v, i) => t.expLensTip(ExperimentCharts.tokenName(name(i), d.top[i]), fixed(v, 4)),
      image: imageFor('chart-exp-lens'), lang: page.state.lang,
    }, $('tip-exp-lens')));
  }

  // The tokens whose attribution can be shown (the next-token chart's), the one shown pressed.
  function renderTargets(exp) {
    const box = $('exp-dla-targets');
    box.replaceChildren(...Array.from(exp.top, (id) => {
      const b = document.createElement('button');
      b.type = 'button';
      b.className = 'exp-target';
      b.dataset.id = String(id);
      b.textContent = ExperimentCharts.tokenName(exp.labels[id], id);
      b.setAttribute('aria-pressed', String(!!exp.dla && exp.dla.target === id));
      return b;
    }));
  }
  function renderDla(exp, lazy) {
    renderTargets(exp);
    if (!exp.dla) { forget('chart-exp-dla'); forget('chart-exp-shares'); return; }
    drawSeen('chart-exp-dla', () => drawDla(exp), lazy);
  }
  function drawDla(exp) {
    const t = page.t, { n_layers: L, n_heads: Hn } = state.info.hparams, d = exp.dla;
    const name = ExperimentCharts.tokenName(d.label, d.target);
    // a range symmetric about 0, so that 0 is the middle of the colour bar
    let most = 1e-6;
    for (const v of d.heads) most = Math.max(most, Math.abs(v));
    draw('chart-exp-dla', Heat.heatmapConfig({
      values: d.heads, rows: L, cols: Hn, lo: -most, hi: most, unit: t.expLogit, title: t.expDlaChart(name),
      xLabel: t.headAxis, yLabel: t.layerAxis, rowNames: Array.from({ length: L }, (_, l) => `L${l}`),
      colNames: Array.from({ length: Hn }, (_, h) => `h${h}`), format: (v) => fixed(v, 4), cellText: (v) => fixed(v, 2),
      image: imageFor('chart-exp-dla'), lang: page.state.lang,
    }, $('tip-exp-dla')));
    draw('chart-exp-shares', ExperimentCharts.sharesConfig({
      names: [t.expEmbed, ...Array.from(d.ffn, (_, l) => t.expFfn(l))], values: [d.embed, ...d.ffn],
      title: t.expSharesTitle(name), yTitle: t.expLogit,
    }));
  }

  // lazy: the charts off the screen drawn once they come into view.
  function render(exp, lazy = false) {
    if (!exp || !state.info) return;
    state.exp = exp;
    renderEffect(exp, lazy);
    renderLens(exp, lazy);
    renderDla(exp, lazy);
    if (state.patchDue) {
      state.patchDue = false;
      runPatch();
    }
  }

  // The token a hovered bar or a pressed button names: its attribution shown.
  function setTarget(id) {
    if (!Number.isInteger(id) || id < 0 || id === page.state.dla) return;
    page.state.dla = id;
    page.writeHash();
    refresh();
  }
  // A bar under the pointer in a next-token chart: ids[index] of that chart.
  function hoverBars(canvasId, idsOf) {
    $(canvasId).addEventListener('mousemove', (e) => {
      const chart = window.Chart.getChart($(canvasId));
      const ids = idsOf();
      if (!chart || !ids) return;
      const items = chart.getElementsAtEventForMode(e, 'index', { intersect: false }, false);
      if (items.length && items[0].index < ids.length) setTarget(ids[items[0].index]);
    });
  }

  // ---------------------------------------------------------------- patching
  // The pair suggested for this model: stories260K's and llama2.c models', else MiniMind's.
  function suggestion() {
    const which = state.info && (state.info.name === 'stories260K' || state.info.kind === 'llama2c') ? 'stories' : 'fortunes';
    const [clean, corrupt, answer, wrong] = page.t.expSuggested[which];
    return { clean, corrupt, answer, wrong };
  }
  // The inputs from the state; a field the state leaves empty shows the suggested pair's.
  function fillPatch() {
    const s = suggestion();
    for (const k of PATCH_KEYS) $(INPUT[k]).value = page.state[k] || s[k];
  }
  const patchArgs = () => Object.fromEntries(PATCH_KEYS.map((k) => [k, $(INPUT[k]).value]));

  function patchMessage(text) {
    $('exp-patch-message').textContent = text || '';
    $('exp-patch-message').hidden = !text;
  }
  function runPatch() {
    if (!state.api) return Promise.resolve();
    OnScreen.drop(patchBox()); // asked now: not again when it comes into view
    state.patchRun = answered(state.api.queue(() => state.api.client().request('patch', patchArgs()))
      .then((r) => renderPatch(r.patch))
      .catch((e) => { state.patch = null; clearPatch(); patchMessage(page.t.errorPrefix + e.message); }));
    return state.patchRun;
  }
  // The patch the heads off ask for, done (now, if it was waiting to come into view).
  function patchShown() {
    OnScreen.flush();
    return state.patchRun || Promise.resolve();
  }
  function clearPatch() {
    $('exp-patch-facts').textContent = '';
    forget('chart-exp-patch-heads');
    forget('chart-exp-patch-resid');
  }
  // Each position's name: the clean prompt's token, "clean/corrupted" where the two differ.
  const positionNames = (p) => p.cleanTokens.map((tok, j) => (tok.id === p.corruptTokens[j].id ? chipName(tok)
    : `${chipName(tok)}/${chipName(p.corruptTokens[j])}`));
  function renderPatch(p) {
    const t = page.t;
    state.patch = p;
    if (p.mismatch) {
      clearPatch();
      patchMessage(t.expLengths(p.cleanCount, p.corruptCount));
      return;
    }
    patchMessage(p.recovered ? '' : t.expPatchFlat(fixed(p.clean)));
    $('exp-patch-facts').textContent = t.expPatchMetrics(fixed(p.clean), fixed(p.corrupt));
    const { n_layers: L, n_heads: Hn } = state.info.hparams;
    const range = (values) => {
      if (p.recovered) return { lo: 0, hi: 1 };
      let lo = Infinity, hi = -Infinity;
      for (const v of values) lo = Math.min(lo, v), hi = Math.max(hi, v);
      return { lo, hi };
    };
    const unit = p.recovered ? t.expRecovered : t.expRaw;
    const layers = (f) => Array.from({ length: L }, (_, l) => f(l));
    draw('chart-exp-patch-heads', Heat.heatmapConfig({
      values: p.heads, rows: L, cols: Hn, ...range(p.heads), unit, title: t.expPatchHeads, xLabel: t.headAxis, yLabel: t.layerAxis,
      rowNames: layers((l) => `L${l}`), colNames: Array.from({ length: Hn }, (_, h) => `h${h}`),
      format: (v) => fixed(v, 4), cellText: (v) => fixed(v, 2), image: imageFor('chart-exp-patch-heads'), lang: page.state.lang,
    }, $('tip-exp-patch-heads')));
    draw('chart-exp-patch-resid', Heat.heatmapConfig({
      values: p.resid, rows: L, cols: p.n, ...range(p.resid), unit, title: t.expPatchResid, xLabel: t.expLensX, yLabel: t.layerAxis,
      rowNames: layers((l) => t.expPatchBefore(l)), colNames: positionNames(p), valuesUpTo: 24,
      format: (v) => fixed(v, 4), cellText: (v) => fixed(v, 1), image: imageFor('chart-exp-patch-resid'), lang: page.state.lang,
    }, $('tip-exp-patch-resid')));
  }

  // ---------------------------------------------------------------- exports
  function exportFile(what, kind) {
    OnScreen.flush(); // the charts as they should be, those off the screen too
    const t = page.t, exp = state.exp, p = state.patch, info = state.info;
    const offText = t.expOff(offHeads().map(([l, h]) => t.expHead(l, h)));
    const note = Heat.exportNote({ model: info.name, tokens: exp ? exp.len : 0, lang: page.state.lang });
    const titled = (id, title) => Heat.titledImage(charts[id].canvas, title, `${note} · ${offText}`).toDataURL('image/png');
    const png = {
      next: () => titled('chart-exp-next', t.expNextTitle),
      lens: () => titled('chart-exp-lens', t.expLensTitle),
      dla: () => titled('chart-exp-dla', t.expDlaChart(ExperimentCharts.tokenName(exp.dla.label, exp.dla.target))),
      patchheads: () => titled('chart-exp-patch-heads', t.expPatchHeads),
      patchresid: () => titled('chart-exp-patch-resid', t.expPatchResid),
    };
    const { n_layers: L, n_heads: Hn } = info.hparams;
    const csv = {
      next: () => ExperimentCharts.nextRows({ ids: exp.top, labels: exp.labels, all: exp.all.probs, off: exp.off.probs }),
      lens: () => ExperimentCharts.lensRows(lensData(exp)),
      dla: () => ExperimentCharts.dlaRows({ layers: L, heads: Hn, values: exp.dla.heads, embed: exp.dla.embed, ffn: exp.dla.ffn }),
      patch: () => ExperimentCharts.patchRows({ layers: L, heads: Hn, n: p.n, tokens: positionNames(p), recovered: p.recovered,
        rawHeads: p.rawHeads, rawResid: p.rawResid, shareHeads: p.heads, shareResid: p.resid, clean: p.clean, corrupt: p.corrupt }),
    };
    if (kind === 'png') return { name: `attnlab-exp-${what}.png`, url: png[what]() };
    const text = csvRows(csv[what]());
    return { name: `attnlab-exp-${what}.csv`, url: URL.createObjectURL(new Blob([text], { type: 'text/csv' })) };
  }

  // ---------------------------------------------------------------- wiring
  // api: {queue, client(), show(snap), sampler(), viewArgs(), playing()} from the model controls.
  function wire(api) {
    state.api = api;
    $('exp-heads').addEventListener('click', (e) => {
      const b = e.target.closest('button.exp-head');
      if (b) toggle(Number(b.dataset.layer), Number(b.dataset.head));
    });
    $('btn-exp-clear').addEventListener('click', () => { page.state.off = ''; ablate(); });
    $('exp-dla-targets').addEventListener('click', (e) => {
      const b = e.target.closest('button.exp-target');
      if (b) setTarget(Number(b.dataset.id));
    });
    $('exp-dla-targets').addEventListener('focusin', (e) => {
      const b = e.target.closest('button.exp-target');
      if (b) setTarget(Number(b.dataset.id));
    });
    hoverBars('chart-next', () => (state.snap && state.snap.pending ? state.snap.topIds : null));
    hoverBars('chart-exp-next', () => (state.exp ? state.exp.top : null));
    let timer = null;
    for (const k of PATCH_KEYS) {
      $(INPUT[k]).addEventListener('input', () => {
        // the suggested pair's value is left out of the link (the model's suggestion)
        page.state[k] = $(INPUT[k]).value === suggestion()[k] ? '' : $(INPUT[k]).value;
        page.writeHash();
        clearTimeout(timer);
        timer = setTimeout(runPatch, 300);
      });
    }
    $('btn-exp-patch').addEventListener('click', runPatch);
    $('btn-exp-suggest').addEventListener('click', () => {
      for (const k of PATCH_KEYS) page.state[k] = '';
      fillPatch();
      page.writeHash();
      runPatch();
    });
    for (const button of document.querySelectorAll('[data-exp-export]')) {
      button.addEventListener('click', async () => {
        const [what, kind] = button.dataset.expExport.split(':');
        if (what.startsWith('patch')) await patchShown(); // a patch put off is done first
        if ((what.startsWith('patch') ? state.patch && !state.patch.mismatch : state.exp && (what !== 'dla' || state.exp.dla))) page.download(exportFile(what, kind));
      });
    }
  }

  // A new model: its heads' buttons, its pair in the inputs (patched once its prompt has run).
  function onModel(info) {
    state.info = info;
    state.exp = null;
    state.patch = null;
    state.patchDue = true;
    state.expKey = '';
    OnScreen.drop(patchBox());
    clearPatch();
    patchMessage('');
    syncHeads();
    fillPatch();
  }

  // Every snapshot drawn: the heads the lab has off (the truth for the link), the core's word
  // if it refused the link's, and an experiment asked for it (none if one is on its way).
  function onSnapshot(snap) {
    state.snap = snap;
    if (snap.off && !state.ablating) page.state.off = State.headsText(snap.off);
    if (snap.ablationError) message(page.t.errorPrefix + snap.ablationError);
    syncHeads();
    refresh();
  }

  function onLanguage() {
    if (!state.info) return;
    syncHeads();
    fillPatch();
    if (state.exp) render(state.exp);
    if (state.patch) renderPatch(state.patch);
  }

export { wire, onModel, onSnapshot, onLanguage, refresh, exportFile, state };
