// app.js — wires the page: controls and the URL hash to the core (through attnlab-api.js), and
// the core's results to the four charts, the checks and the walkthrough. No maths here.
(function () {
  'use strict';
  const { STRINGS, pickLanguage } = window.AttnLabI18n;
  const S = window.AttnLabState;
  const $ = (id) => document.getElementById(id);
  const RULE = '='.repeat(70);

  let core = null;
  let session = null;
  let state = null;
  let t = STRINGS.en;
  let playTimer = null;
  let lastGood = null; // the last state a session was built from
  const charts = {};   // canvas id -> Chart
  const images = {};   // canvas id -> the offscreen canvas its heatmap cells are painted into
  const imageFor = (id) => (images[id] ||= document.createElement('canvas'));
  const kvChoiceCache = new Map(); // heads -> the KV head counts the core allows
  const kvChoices = (heads) => {
    if (!kvChoiceCache.has(heads)) kvChoiceCache.set(heads, core.kvChoices(heads));
    return kvChoiceCache.get(heads);
  };
  const exports = {};  // chart name -> () => {csv, canvasId}
  let walkSteps = [];

  // ---------------------------------------------------------------- messages
  function showMessage(text, isError) {
    const box = $('message');
    box.textContent = text || '';
    box.hidden = !text;
    box.className = isError ? 'message error' : 'message';
  }
  function describeProblems(problems) {
    return problems.map((p) => (p.limit !== undefined ? t.beyondLimit(p.key, p.value, p.used, p.limit)
      : t.invalid(p.key, p.value, p.used))).join(' · ');
  }

  // ---------------------------------------------------------------- loading
  async function loadWasmBytes() {
    if (window.ATTNLAB_WASM_BASE64) {
      const bin = atob(window.ATTNLAB_WASM_BASE64);
      const bytes = new Uint8Array(bin.length);
      for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
      return bytes;
    }
    const r = await fetch('gen/attnlab.wasm');
    if (!r.ok) throw new Error(`gen/attnlab.wasm: HTTP ${r.status}`);
    return new Uint8Array(await r.arrayBuffer());
  }

  // ---------------------------------------------------------------- charts
  // Draws a chart unless it already shows exactly this: `key` names everything its data was
  // computed from, so an unchanged chart is not redrawn (a seed change leaves the mask, RoPE and
  // KV charts as they are). For a heatmap, `layout` names what its axes, title and outline come
  // from: when only the cells changed, makeConfig has repainted its image and the chart is
  // redrawn as it stands, without Chart.js's update and layout.
  const drawnKeys = {};
  const drawnLayouts = {};
  function drawIfChanged(canvasId, key, makeConfig, layout = null) {
    if (key !== null && drawnKeys[canvasId] === key && charts[canvasId]) return;
    const config = makeConfig();
    if (layout !== null && drawnLayouts[canvasId] === layout && charts[canvasId]) charts[canvasId].draw();
    else draw(canvasId, config);
    drawnKeys[canvasId] = key;
    drawnLayouts[canvasId] = layout;
  }

  function draw(canvasId, config) {
    const existing = charts[canvasId];
    if (existing && existing.config.type === config.type) {
      existing.data = config.data;
      existing.options = config.options;
      existing.update('none');
      return existing;
    }
    if (existing) existing.destroy();
    charts[canvasId] = new window.Chart($(canvasId), config);
    return charts[canvasId];
  }

  function matrixCsv(values, rows, cols, rowLabel, colLabel) {
    const lines = [[`${rowLabel}\\${colLabel}`, ...Array.from({ length: cols }, (_, j) => j)].join(',')];
    for (let i = 0; i < rows; i++) {
      const row = [i];
      for (let j = 0; j < cols; j++) row.push(String(values[i * cols + j]));
      lines.push(row.join(','));
    }
    return lines.join('\n') + '\n';
  }

  // ---------------------------------------------------------------- session
  function sessionConfig(s) {
    return {
      hidden: s.hidden, heads: s.heads, kvHeads: s.kv, headDim: s.hd, ropeBase: s.base,
      qkNorm: !!s.qk, seed: s.seed, promptLen: s.prompt, decodeSteps: s.steps,
    };
  }

  // Builds the session for `state` (KV heads snapped to a divisor of heads, as the core lists
  // them) and runs it to state.at tokens. On a refused configuration, returns to the last good
  // state (or the defaults) and shows the core's message.
  function rebuild(problems = [], refusal = '') {
    const choices = kvChoices(state.heads);
    if (!choices.includes(state.kv)) {
      const nearest = choices.reduce((a, b) => (Math.abs(b - state.kv) < Math.abs(a - state.kv) ? b : a));
      problems.push({ key: 'kv', value: state.kv, used: nearest });
      state.kv = nearest;
    }
    stopPlaying();
    let next;
    try {
      next = core.createSession(sessionConfig(state));
      const target = state.at === -1 ? state.prompt : state.at; // 0: before the prefill
      if (target > 0) next.prefill();
      while (next.length < target) next.step();
    } catch (e) {
      if (next) next.free();
      const fallback = lastGood || { ...S.defaults(), lang: state.lang };
      if (JSON.stringify(fallback) === JSON.stringify(state)) {
        showMessage(t.errorPrefix + e.message, true); // nothing left to fall back to
        return;
      }
      state = { ...fallback };
      return rebuild([], t.errorPrefix + e.message);
    }
    if (session) session.free();
    session = next;
    lastGood = { ...state };
    if (refusal) showMessage(refusal, true);
    else showMessage(problems.length ? describeProblems(problems) : '', false);
    syncControls();
    render();
  }

  // ---------------------------------------------------------------- rendering
  function render() {
    const len = session.length, total = session.total;
    const newestRow = len > state.prompt ? len - 1 : -1;
    const kvMap = core.gqaMap(state.heads, state.kv);
    state.at = len;

    // 1. mask
    const mask = session.mask();
    drawIfChanged('chart-mask', `${len}|${state.prompt}|${state.lang}`,
      () => window.AttnLabMaskChart.maskConfig({ mask, len, newestRow, t, image: imageFor('chart-mask') }, $('tip-mask')));
    exports.mask = () => ({ csv: matrixCsv(mask, len, len, t.query, t.key), canvas: 'chart-mask' });

    // 2. RoPE (each computed only when its chart is redrawn or the export asks for it)
    const pairs = state.hd / 2, hd = state.hd, base = state.base, wrap = !!state.wrap, pair = state.pair;
    const angles = () => core.ropeAngles(total, hd, base, wrap);
    const ropeKey = `${total}|${hd}|${base}|${state.lang}`;
    drawIfChanged('chart-rope', `${ropeKey}|${wrap}|${len}`, () => window.AttnLabRopeChart.ropeAngleConfig(
      { angles: angles(), positions: total, pairs, newest: len - 1, t, image: imageFor('chart-rope') }, $('tip-rope')),
    `${total}|${pairs}|${len}|${state.lang}`);
    const ones = () => new Float32Array(hd).fill(1);
    drawIfChanged('chart-rope-pair', `${ropeKey}|${pair}`, () => window.AttnLabRopeChart.ropePairConfig(
      { points: core.ropePairTrace(ones(), pair, total, hd, base), pair, t }));
    drawIfChanged('chart-rope-rel', ropeKey, () => window.AttnLabRopeChart.ropeRelativeConfig(
      { dots: core.ropeRelativeDots(ones(), 0, Math.max(64, total), hd, base), t }));
    exports.rope = () => ({ csv: matrixCsv(angles(), total, pairs, t.position, t.pairIndex), canvas: 'chart-rope' });

    // 3. attention weights: chosen head, every head, GQA map
    const weights = session.weights(state.head);
    drawIfChanged('chart-attn', null, () => window.AttnLabAttnChart.attnConfig(
      { weights, len, head: state.head, kvHead: kvMap[state.head], newestRow, t, image: imageFor('chart-attn') }, $('tip-attn')),
    `${len}|${state.head}|${kvMap[state.head]}|${newestRow}|${state.lang}`);
    exports.attn = () => ({ csv: matrixCsv(weights, len, len, t.query, t.key), canvas: 'chart-attn' });
    renderHeadGrid(len, kvMap);
    renderGqaMap(kvMap);

    // 4. KV cache growth: after the prefill and each step
    const lengths = [], bytes = [], mha = [], mqa = [], cached = [], uncached = [];
    for (let n = state.prompt; n <= len; n++) {
      lengths.push(n);
      bytes.push(core.kvCacheBytes(1, n, state.kv, state.hd));
      mha.push(core.kvCacheBytes(1, n, state.heads, state.hd));
      mqa.push(core.kvCacheBytes(1, n, 1, state.hd));
      cached.push(n === state.prompt ? session.flops(n, n) : session.flops(1, n));
      uncached.push(session.flops(n, n));
    }
    const kvKey = `${state.prompt}|${len}|${state.hidden}|${state.heads}|${state.kv}|${state.hd}|${state.lang}`;
    drawIfChanged('chart-kv', kvKey, () => window.AttnLabKvChart.kvBytesConfig({ lengths, bytes, mha, mqa, t }));
    drawIfChanged('chart-kv-flops', kvKey, () => window.AttnLabKvChart.kvFlopsConfig({ lengths, cached, uncached, t }));
    exports.kv = () => ({
      csv: 'cache_len,bytes,mha_bytes,mqa_bytes,flops_with_cache,flops_without_cache\n' +
        lengths.map((n, i) => [n, bytes[i], mha[i], mqa[i], cached[i], uncached[i]].join(',')).join('\n') + '\n',
      canvas: 'chart-kv',
    });

    renderChecks();
    renderStatus();
    writeHash();
  }

  // Every head's weights as small images (plain canvases: Chart.js axes would cost more than
  // the picture is worth at this size).
  function renderHeadGrid(len, kvMap) {
    const grid = $('attn-grid');
    while (grid.children.length > state.heads) grid.lastElementChild.remove();
    for (let h = 0; h < state.heads; h++) {
      let cell = grid.children[h];
      if (!cell) {
        cell = document.createElement('figure');
        cell.className = 'thumb';
        const canvas = document.createElement('canvas');
        canvas.id = `chart-attn-head-${h}`;
        cell.append(document.createElement('figcaption'), canvas);
        grid.appendChild(cell);
      }
      cell.firstChild.textContent = `h${h} → kv${kvMap[h]}`;
      cell.classList.toggle('selected', h === state.head);
      window.AttnLabHeatmap.paint(cell.lastChild, session.weights(h), len, len, 0, 1);
    }
  }

  function renderGqaMap(kvMap) {
    const table = $('gqa-map');
    table.replaceChildren();
    const head = table.insertRow();
    head.insertCell().textContent = t.kvHead;
    head.insertCell().textContent = t.queryHeads;
    for (let k = 0; k < state.kv; k++) {
      const row = table.insertRow();
      row.className = `kv-group kv-${k % 8}`;
      row.insertCell().textContent = `kv ${k}`;
      row.insertCell().textContent = kvMap.map((kv, h) => (kv === k ? `h${h}` : null)).filter(Boolean).join(' ');
    }
  }

  function formatNumber(v) {
    if (Number.isNaN(v)) return 'NaN';
    if (v === 0) return '0';
    return v.toExponential(2);
  }

  function renderChecks() {
    const body = $('verify').tBodies[0];
    body.replaceChildren();
    if (session.length === 0) return; // the checks need the prefill
    for (const c of session.verify()) {
      const row = body.insertRow();
      row.className = c.passed ? 'pass' : 'fail';
      row.insertCell().textContent = t.checks[c.name];
      row.insertCell().textContent = formatNumber(c.value);
      row.insertCell().textContent = `≤ ${formatNumber(c.threshold)}`;
      row.insertCell().textContent = c.passed ? `✔ ${t.pass}` : `✘ ${t.fail}`;
    }
  }

  function renderStatus() {
    const len = session.length, total = session.total;
    const phase = len === 0 ? t.phaseNone : len >= total ? t.phaseDone : len === state.prompt ? t.phasePrefill : t.phaseDecode;
    $('status').textContent = t.status(len, total, phase);
    $('btn-prefill').disabled = len > 0;
    $('btn-step').disabled = len >= total;
    $('btn-play').disabled = len >= total;
    $('btn-play').textContent = playTimer ? t.pause : t.play;
  }

  // The URL follows the state, written once things settle: history.replaceState costs
  // milliseconds, too much to pay on every step of Play.
  let hashTimer = null;
  function writeHash() {
    clearTimeout(hashTimer);
    hashTimer = setTimeout(() => {
      const hash = S.toHash(state);
      if (location.hash !== hash) history.replaceState(null, '', hash);
    }, 150);
  }

  // ---------------------------------------------------------------- walkthrough
  // Each example of both tutorial scripts, split on the scripts' "=" * 70 headers.
  const WALK_CHART = {
    basic: ['attn-panel', 'attn-panel', 'rope-panel'],
    attention: ['attn-panel', 'attn-panel', 'rope-panel', 'mask-panel', 'attn-panel', 'kv-panel', 'verify-panel'],
  };
  function buildWalkthrough() {
    walkSteps = [];
    for (const demo of ['basic', 'attention']) {
      const text = core.demo(demo, state.lang, state.seed);
      const parts = text.split(`${RULE}\n`);
      // parts: '', title, body, title, body, ..., title(final), ''
      for (let i = 1; i + 1 < parts.length; i += 2) {
        const title = parts[i].trim();
        if (!parts[i + 1].trim()) continue; // the closing banner
        walkSteps.push({ demo, title, body: parts[i + 1].replace(/\n+$/, ''), panel: WALK_CHART[demo][walkSteps.filter((s) => s.demo === demo).length] });
      }
    }
    if (state.walk >= walkSteps.length) state.walk = 0;
    renderWalk();
  }
  function renderWalk() {
    const step = walkSteps[state.walk];
    $('walk-title').textContent = `${state.walk + 1}/${walkSteps.length} · ${step.title}`;
    $('walk-command').textContent = `attnlab demo ${step.demo} --seed ${state.seed} --lang ${state.lang}`;
    $('walk-text').textContent = step.body;
    for (const p of document.querySelectorAll('.panel')) p.classList.toggle('highlight', p.id === step.panel);
    $('walk-prev').disabled = state.walk === 0;
    $('walk-next').disabled = state.walk === walkSteps.length - 1;
  }

  // ---------------------------------------------------------------- language
  function applyLanguage() {
    t = STRINGS[state.lang];
    document.documentElement.lang = state.lang === 'zh' ? 'zh-CN' : 'en';
    for (const el of document.querySelectorAll('[data-i18n]')) el.textContent = t[el.dataset.i18n];
    $('lang').value = state.lang;
  }

  // ---------------------------------------------------------------- controls
  const NUMERIC = { seed: 'seed', prompt: 'prompt', steps: 'steps', hidden: 'hidden', heads: 'heads', hd: 'hd', base: 'base', pair: 'pair' };

  function syncControls() {
    for (const [id, key] of Object.entries(NUMERIC)) $(id).value = String(state[key]);
    const kv = $('kv'), head = $('head');
    if (kv.dataset.heads !== String(state.heads)) { // the options depend on the head count only
      kv.replaceChildren(...kvChoices(state.heads).map((n) => new Option(String(n), String(n))));
      head.replaceChildren(...Array.from({ length: state.heads }, (_, h) => new Option(`h${h}`, String(h))));
      kv.dataset.heads = String(state.heads);
    }
    kv.value = String(state.kv);
    head.value = String(state.head);
    $('pair').max = String(state.hd / 2 - 1);
    $('qk').checked = !!state.qk;
    $('wrap').checked = !!state.wrap;
  }

  // Reads the controls into a hash-like string so the same validation applies to both.
  function readControls() {
    const parts = [];
    for (const [id, key] of Object.entries(NUMERIC)) parts.push(`${key}=${encodeURIComponent($(id).value.trim())}`);
    parts.push(`kv=${$('kv').value}`, `head=${$('head').value}`, `qk=${$('qk').checked ? 1 : 0}`,
      `wrap=${$('wrap').checked ? 1 : 0}`, `lang=${state.lang}`, `walk=${state.walk}`);
    return S.parseHash(parts.join('&'));
  }

  function onControlChange(event) {
    const { state: next, problems } = readControls();
    const viewOnly = ['head', 'pair', 'wrap'].includes(event.target.id);
    state = { ...next, at: viewOnly ? session.length : -1 };
    if (viewOnly && !problems.length) {
      syncControls();
      render();
    } else {
      rebuild(problems);
      // The walkthrough's text is not on screen with the charts: build it after they paint.
      if (event.target.id === 'seed') afterPaint(buildWalkthrough);
    }
  }

  function afterPaint(fn) {
    requestAnimationFrame(() => setTimeout(fn, 0));
  }

  function step() {
    if (session.length >= session.total) return stopPlaying();
    try {
      session.step();
    } catch (e) {
      showMessage(t.errorPrefix + e.message, true);
      return stopPlaying();
    }
    render();
    if (session.length >= session.total) stopPlaying();
  }
  function stopPlaying() {
    if (playTimer) clearInterval(playTimer);
    playTimer = null;
    if (session) renderStatus();
  }

  function download(name, url) {
    const a = document.createElement('a');
    a.href = url;
    a.download = name;
    document.body.appendChild(a);
    a.click();
    a.remove();
  }

  function wire() {
    for (const id of [...Object.keys(NUMERIC), 'kv', 'head', 'qk', 'wrap']) $(id).addEventListener('change', onControlChange);
    $('lang').addEventListener('change', () => {
      state.lang = $('lang').value === 'zh' ? 'zh' : 'en';
      applyLanguage();
      buildWalkthrough();
      render();
    });
    $('btn-prefill').addEventListener('click', () => { state.at = -1; rebuild([]); });
    $('btn-reset').addEventListener('click', () => { state.at = 0; rebuild([]); });
    $('btn-step').addEventListener('click', step);
    $('btn-play').addEventListener('click', () => {
      if (playTimer) return stopPlaying();
      playTimer = setInterval(step, 400);
      renderStatus();
    });
    $('walk-prev').addEventListener('click', () => { state.walk = Math.max(0, state.walk - 1); renderWalk(); writeHash(); });
    $('walk-next').addEventListener('click', () => { state.walk = Math.min(walkSteps.length - 1, state.walk + 1); renderWalk(); writeHash(); });
    for (const button of document.querySelectorAll('[data-export]')) {
      button.addEventListener('click', () => {
        const [chart, kind] = button.dataset.export.split(':');
        const what = exports[chart]();
        if (kind === 'png') download(`attnlab-${chart}.png`, charts[what.canvas].toBase64Image());
        else download(`attnlab-${chart}.csv`, URL.createObjectURL(new Blob([what.csv], { type: 'text/csv' })));
      });
    }
    document.addEventListener('keydown', (e) => {
      if (e.target instanceof HTMLInputElement || e.target instanceof HTMLSelectElement) return;
      if (e.key === 'ArrowRight' || e.key === 'ArrowDown') { e.preventDefault(); step(); }
      if (e.key === 'ArrowLeft' || e.key === 'ArrowUp') { e.preventDefault(); state.at = 0; rebuild([]); }
      if (e.key === ' ') { e.preventDefault(); $('btn-play').click(); }
    });
    window.addEventListener('hashchange', () => {
      if (location.hash === S.toHash(state)) return;
      const parsed = S.parseHash(location.hash);
      state = { ...parsed.state, lang: parsed.state.lang || state.lang };
      applyLanguage();
      rebuild(parsed.problems);
      buildWalkthrough();
    });
  }

  async function main() {
    const parsed = S.parseHash(location.hash);
    state = parsed.state;
    if (!state.lang) state.lang = pickLanguage(navigator.languages);
    applyLanguage();
    showMessage(t.loading, false);
    try {
      core = await window.AttnLab.load({ wasmBinary: await loadWasmBytes() });
    } catch (e) {
      showMessage(t.errorPrefix + e.message, true);
      return;
    }
    wire();
    syncControls();
    rebuild(parsed.problems);
    buildWalkthrough();
    document.body.dataset.readyMs = String(performance.now());
    document.body.dataset.ready = 'true';
  }

  main();
})();
