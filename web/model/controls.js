// model/controls.js — the model view's controls and events: the two tabs, the shipped model and
// the learner's own files (picker and drop), the prompt, the sampler, Step / Play / Reset, the
// head chosen in the grid or the roles, the colour scale, the exports and the keys. The state
// (model, prompt, steps taken, sampler, head) lives in the URL hash (state.js): opening a link
// replays the prompt and the steps; a link made with the learner's own files asks for them.
// Moving a sampler setting redraws the next token's stages at once, no token drawn.
import { ModelClient, SHIPPED, shippedBytes, available } from '../core/client.js';
import * as Run from '../layer/run.js';
import * as Walkthrough from '../layer/walkthrough.js';
import * as TrainControls from '../train/controls.js';
import { page as P } from '../ui/page.js';
import * as S from '../ui/state.js';
import { selectTab, wireTabs } from '../ui/tabs.js';
import * as Experiments from './experiments.js';
import * as ModelView from './view.js';
  const $ = (id) => document.getElementById(id);
  const V = () => ModelView;

  const MAX_FILE_MB = 1024;
  const m = {
    client: null,
    info: null,
    busy: Promise.resolve(),
    playing: false,
    layerBuilt: false,
    layerReady: Promise.resolve(),
    boot: null, // starts the model view once (set by start)
    headFromLink: false, // the link named the head to open: a new model does not choose one
    awaitingFiles: false, // the link was made with the learner's files: they replay it once given
    shippedPrints: {}, // shipped model index → its files' {fingerprint, sizes}, as loaded
    nextQueued: false, // a next-token redraw is waiting in the queue
  };

  // ---------------------------------------------------------------- talking to the worker
  // Requests run one after another; each answer's snapshot is drawn.
  function queue(fn) {
    const run = m.busy.then(fn);
    m.busy = run.catch(() => {});
    return run;
  }
  const sampler = () => ({ temperature: P.state.temp, topK: P.state.topk, topP: P.state.topp, repetitionPenalty: P.state.rep });
  const viewArgs = () => ({ layer: P.state.layer, head: P.state.mhead, thumb: 32, sampler: sampler() });

  // Draws a snapshot. The time it takes (the charts, the DOM, and the layout they force) is
  // recorded as a User Timing measure 'attnlab:draw' (the bench reads it; so can DevTools).
  // lazy (a head switched off): the charts off the screen are drawn once they come into view.
  function show(snap, lazy = false) {
    const t0 = performance.now();
    P.state.layer = snap.layer;
    P.state.mhead = snap.head;
    P.state.gen = snap.len - snap.promptLen;
    V().render(snap, lazy);
    Experiments.onSnapshot(snap, lazy);
    renderButtons(snap);
    P.writeHash();
    void document.body.offsetHeight; // the layout the new DOM needs, done now
    performance.measure('attnlab:draw', { start: t0, detail: { len: snap.len } });
    return snap;
  }

  function renderButtons(snap) {
    const done = snap.finish !== 'going'; // the core's generator says whether a step would draw
    $('btn-gen-step').disabled = done;
    $('btn-gen-play').disabled = done && !m.playing;
    $('btn-gen-play').textContent = m.playing ? P.t.pause : P.t.play;
  }

  function modelMessage(text) {
    const box = $('model-message');
    box.textContent = text || '';
    box.hidden = !text;
  }

  // The prompt from the state, then the steps the state says were taken (charts off: fast).
  function replay() {
    if (!m.info) return Promise.resolve(null); // not booted yet: its boot replays the state
    return queue(async () => {
      let snap = await m.client.request('prompt', { text: P.state.text, seed: P.state.gseed, view: viewArgs(), eos: !!P.state.eos,
        heads: S.headsOf(P.state.off) });
      const want = P.state.gen;
      if (want > 0) snap = await m.client.request('step', { sampler: sampler(), count: want, charts: false, view: viewArgs() });
      return show(snap);
    }).catch((e) => {
      modelMessage(P.t.errorPrefix + e.message);
      throw e;
    });
  }

  // A prompt given as token ids (shown in the prompt box as their text), from the start.
  function promptIds(ids) {
    return queue(async () => {
      const snap = await m.client.request('ids', { ids, seed: P.state.gseed, view: viewArgs(), eos: !!P.state.eos });
      P.state.text = $('prompt-text').value = snap.text;
      return show(snap);
    }).catch((e) => {
      modelMessage(P.t.errorPrefix + e.message);
      throw e;
    });
  }

  // The head a new model opens on: the strongest of the chosen role (the roles panel says what
  // it does), unless the link named one.
  function openStrongest(info) {
    if (m.headFromLink) { m.headFromLink = false; return; }
    const lh = info.ranking[$('role-select').value || 'previous'][0];
    P.state.layer = Math.floor(lh / info.hparams.n_heads);
    P.state.mhead = lh % info.hparams.n_heads;
  }

  async function loadFiles(files, name) {
    modelMessage('');
    $('model-name').textContent = P.t.loadingModel;
    try {
      m.info = await queue(() => m.client.load({ ...files, name }));
    } catch (e) {
      $('model-name').textContent = m.info ? m.info.name : '';
      modelMessage(P.t.fileProblem(e.message));
      return false;
    }
    V().renderModel(m.info);
    Experiments.onModel(m.info);
    openStrongest(m.info);
    fillExamples(files.examples || (m.info.kind === 'llama2c' ? 'stories' : 'minimind'));
    return true;
  }

  async function loadShipped(i, bytes = null) {
    const files = bytes || (await shippedBytes(i));
    const ok = await loadFiles(files, files.name);
    if (ok) m.shippedPrints[i] = { fingerprint: m.info.fingerprint, sizes: m.info.sizes };
    return ok;
  }

  // The shipped model the learner's files are, if they are one: the same bytes (size and
  // fingerprint) for the model, its config and its tokenizer; -1 if none.
  async function shippedMatch(info) {
    for (const i of available()) {
      const want = m.shippedPrints[i] || await shippedBytes(i).then(async (b) => {
        const files = [b.model, b.config || null, b.tokenizer];
        const sizes = files.map((f) => (f ? f.length : 0));
        const got = await queue(() => m.client.request('fingerprint', { files }, files.filter(Boolean).map((f) => f.buffer)));
        return (m.shippedPrints[i] = { fingerprint: got.fingerprint, sizes });
      }).catch(() => null);
      if (want && want.sizes.every((n, k) => n === info.sizes[k]) && want.fingerprint.every((f, k) => f === info.fingerprint[k])) return i;
    }
    return -1;
  }

  // The name the learner's files go by: the folder they came from, else the model file's own
  // name, said to be theirs.
  function filesName(model) {
    const parts = (model.webkitRelativePath || '').split('/');
    return parts.length > 1 ? parts[parts.length - 2] : P.t.yourFile(model.name);
  }

  // ---------------------------------------------------------------- the learner's files
  // Sorts picked or dropped files into model, config and tokenizer by name and kind.
  async function fromUserFiles(list) {
    const files = [...list];
    if (!files.length) return;
    for (const f of files) {
      if (f.size > MAX_FILE_MB * 1048576) { modelMessage(P.t.fileProblem(P.t.tooLarge(f.name, Math.round(f.size / 1048576)))); return; }
    }
    const lower = (f) => f.name.toLowerCase();
    const tokenizer = files.find((f) => /tokenizer\.json$/.test(lower(f))) || files.find((f) => /tok.*\.bin$/.test(lower(f)));
    const config = files.find((f) => lower(f) === 'config.json' || (/\.json$/.test(lower(f)) && f !== tokenizer && /config/.test(lower(f))));
    const model = files.find((f) => f !== tokenizer && f !== config && /\.(bin|pth|safetensors)$/.test(lower(f)));
    if (!model || !tokenizer) { modelMessage(P.t.fileProblem(P.t.filesNeeded)); return; }
    const read = async (f) => (f ? new Uint8Array(await f.arrayBuffer()) : null);
    // The name says what the file is: a .pth is read as a .pth even if it is not a zip (and then
    // the message says so), a .bin as a llama2.c checkpoint.
    const kind = /\.pth$/.test(lower(model)) ? 'pth' : /\.safetensors$/.test(lower(model)) ? 'safetensors' : 'llama2c';
    await openModel({ model: await read(model), config: await read(config), tokenizer: await read(tokenizer), kind }, filesName(model));
  }

  // A model given as bytes (the learner's files, or the Train tab's model): loaded and its
  // prompt run from the start. The view boots first if it has not yet.
  // A shipped model given as files is that model (its name, examples and link); any other is
  // 'file' in the link, which then asks for the files. A link that asked for them replays its
  // steps on them. opened (the Train tab's): {ids, the prompt as token ids; role and head, the
  // role shown and the head selected}.
  async function openModel(files, name, opened = null) {
    if (m.boot) await m.boot();
    const ok = await loadFiles(files, name);
    if (ok && opened) {
      $('role-select').value = opened.role;
      V().renderRoles();
      P.state.layer = opened.head.layer;
      P.state.mhead = opened.head.head;
      P.state.model = 'file';
      $('model-select').value = '';
      await promptIds(opened.ids).catch(() => {});
    } else if (ok) {
      if (!m.awaitingFiles) P.state.gen = 0;
      m.awaitingFiles = false;
      const i = await shippedMatch(m.info);
      P.state.model = i >= 0 ? i : 'file';
      $('model-select').value = i >= 0 ? String(i) : '';
      if (i >= 0) {
        m.info.name = SHIPPED[i].name;
        $('model-name').textContent = SHIPPED[i].name;
        fillExamples(SHIPPED[i].examples);
      }
      await replay().catch(() => {});
    }
    return ok;
  }

  // ---------------------------------------------------------------- controls from the state
  function syncControls() {
    const s = P.state;
    $('prompt-text').value = s.text;
    $('temperature').value = String(s.temp);
    $('top-k').value = String(s.topk);
    $('top-p').value = String(s.topp);
    $('rep-penalty').value = String(s.rep);
    $('gen-seed').value = String(s.gseed);
    $('attn-log').checked = !!s.log;
    $('ignore-eos').checked = !!s.eos;
    $('temperature-out').textContent = String(s.temp);
    $('top-p-out').textContent = String(s.topp);
    $('rep-penalty-out').textContent = String(s.rep);
  }

  // The sampler's inputs read back through the hash's validation.
  function readSampler() {
    const parts = [`temp=${$('temperature').value}`, `topk=${$('top-k').value}`, `topp=${$('top-p').value}`,
      `rep=${$('rep-penalty').value}`, `gseed=${$('gen-seed').value}`];
    const { state, problems } = S.parseHash(parts.join('&'));
    for (const k of ['temp', 'topk', 'topp', 'rep', 'gseed']) P.state[k] = state[k];
    if (problems.length) P.showProblems(problems);
    syncControls();
  }

  function fillExamples(which) {
    const box = $('examples');
    box.replaceChildren();
    const label = document.createElement('span');
    label.textContent = P.t.examples;
    box.appendChild(label);
    for (const text of P.t.exampleTexts[which] || []) {
      const b = document.createElement('button');
      b.type = 'button';
      b.className = 'example';
      b.textContent = text;
      b.addEventListener('click', () => {
        $('prompt-text').value = text;
        onPrompt();
      });
      box.appendChild(b);
    }
    box.dataset.which = which;
  }

  // ---------------------------------------------------------------- actions
  let promptTimer = null;
  function onPrompt() {
    clearTimeout(promptTimer);
    promptTimer = setTimeout(() => {
      stopPlay();
      P.state.text = $('prompt-text').value;
      P.state.gen = 0;
      replay().catch(() => {});
    }, 120);
  }

  // The next-token chart redrawn for the sampler settings as they stand (no token drawn); while
  // one redraw waits in the queue, more moves of a slider add none.
  function redrawNext() {
    if (m.nextQueued || !V().view.snap) return;
    m.nextQueued = true;
    queue(() => {
      m.nextQueued = false;
      return m.client.request('next', { sampler: sampler() });
    }).then((next) => { V().renderNextOnly(next); Experiments.refresh(); })
      .catch((e) => modelMessage(P.t.errorPrefix + e.message));
  }

  // Going on past the end token, or not; a text that ended there goes on at once.
  function setEos(on) {
    P.state.eos = on ? 1 : 0;
    $('ignore-eos').checked = on;
    return queue(() => m.client.request('eos', { on, view: viewArgs() })).then(show)
      .catch((e) => modelMessage(P.t.errorPrefix + e.message));
  }

  function step() {
    return queue(() => m.client.request('step', { sampler: sampler(), count: 1, view: viewArgs() }))
      .then(show)
      .catch((e) => { stopPlay(); modelMessage(P.t.errorPrefix + e.message); });
  }

  function stopPlay() {
    m.playing = false;
    if (V().view.snap) renderButtons(V().view.snap);
  }

  async function play() {
    // Pause: no step after the one in flight, whose token still comes; the button reads Play
    // once it has (the loop below ends and draws it), so no token arrives after it does.
    if (m.playing) { m.playing = false; return; }
    m.playing = true;
    while (m.playing) {
      const snap = await step();
      if (!snap || snap.finish !== 'going') break;
      // Let the page paint and take input between steps.
      await new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
    }
    stopPlay();
    Experiments.refresh(); // the panel waits for Play to end
  }

  function selectHead(layer, head) {
    P.state.layer = layer;
    P.state.mhead = head;
    return queue(() => m.client.request('view', { view: viewArgs() })).then(show);
  }

  // ---------------------------------------------------------------- tabs
  // The view shown (ui/tabs.js), and what each does when shown.
  function showTab(tab) {
    P.state.tab = tab;
    selectTab(tab);
    if (tab === 'train') TrainControls.boot();
    if (tab === 'model' && m.boot) m.boot().catch((e) => modelMessage(P.t.errorPrefix + e.message));
    if (tab === 'layer' && !m.layerBuilt) {
      m.layerBuilt = true;
      m.layerReady.then(() => {
        // what the link's corrections were stay said when the layer lab is first built
        Run.rebuild(P.loadProblems || []);
        P.loadProblems = null;
        Walkthrough.build();
      });
    }
    P.writeHash();
  }

  function onLanguage() {
    TrainControls.onLanguage();
    if (m.info) {
      V().renderModel(m.info);
      fillExamples($('examples').dataset.which || 'stories');
    }
    if (V().view.snap) show(V().view.snap);
    Experiments.onLanguage();
  }

  // ---------------------------------------------------------------- wiring
  function wire() {
    Experiments.wire({ queue, client: () => m.client, show, sampler, viewArgs, playing: () => m.playing });
    wireTabs(showTab);
    $('model-select').addEventListener('change', async () => {
      if ($('model-select').value === '') return;
      stopPlay();
      P.state.model = Number($('model-select').value);
      P.state.gen = 0;
      m.awaitingFiles = false;
      if (await loadShipped(P.state.model)) await replay().catch(() => {});
    });
    $('file-model').addEventListener('change', () => { stopPlay(); fromUserFiles($('file-model').files); });
    document.addEventListener('dragover', (e) => { if (P.state.tab === 'model') e.preventDefault(); });
    document.addEventListener('drop', (e) => {
      if (P.state.tab !== 'model') return;
      e.preventDefault();
      stopPlay();
      fromUserFiles(e.dataTransfer.files);
    });
    $('prompt-text').addEventListener('input', onPrompt);
    for (const id of ['temperature', 'top-k', 'top-p', 'rep-penalty']) {
      $(id).addEventListener('input', () => { readSampler(); P.writeHash(); redrawNext(); });
    }
    $('next-log').addEventListener('change', () => { if (V().view.snap) V().renderNext(V().view.snap); });
    $('ignore-eos').addEventListener('change', () => setEos($('ignore-eos').checked));
    $('btn-gen-past-eos').addEventListener('click', () => setEos(true));
    $('gen-seed').addEventListener('change', () => { readSampler(); P.state.gen = 0; replay().catch(() => {}); });
    $('btn-gen-step').addEventListener('click', step);
    $('btn-gen-play').addEventListener('click', play);
    $('btn-gen-reset').addEventListener('click', () => { stopPlay(); P.state.gen = 0; replay().catch(() => {}); });
    $('attn-log').addEventListener('change', () => {
      P.state.log = $('attn-log').checked ? 1 : 0;
      if (V().view.snap) show(V().view.snap);
    });
    $('chart-heads').addEventListener('click', (e) => {
      const b = e.target.closest('button.cell');
      if (b) selectHead(Number(b.dataset.layer), Number(b.dataset.head));
    });
    // A role chosen: its strongest head opens.
    $('role-select').addEventListener('change', () => {
      V().renderRoles();
      if (!m.info) return;
      const lh = m.info.ranking[$('role-select').value][0];
      selectHead(Math.floor(lh / m.info.hparams.n_heads), lh % m.info.hparams.n_heads);
    });
    $('role-rank').addEventListener('click', (e) => {
      const b = e.target.closest('button.role-head');
      if (b) selectHead(Number(b.dataset.layer), Number(b.dataset.head));
    });
    $('btn-role-train').addEventListener('click', () => { showTab('train'); $('tab-train').focus(); });
    $('chart-roles').addEventListener('click', (e) => {
      const chart = window.Chart.getChart($('chart-roles'));
      if (!chart || !m.info) return;
      const head = Math.round(chart.scales.x.getValueForPixel(e.offsetX));
      const layer = Math.round(chart.scales.y.getValueForPixel(e.offsetY));
      if (layer >= 0 && head >= 0 && layer < m.info.hparams.n_layers && head < m.info.hparams.n_heads) selectHead(layer, head);
    });
    $('chart-head-lines').addEventListener('mousemove', (e) => {
      const q = V().lineAt(e.offsetY);
      if (q === V().view.hoverQuery || !V().view.snap) return;
      V().view.hoverQuery = q;
      V().renderLines(V().view.snap);
    });
    $('chart-head-lines').addEventListener('mouseleave', () => {
      V().view.hoverQuery = -1;
      if (V().view.snap) V().renderLines(V().view.snap);
    });
    for (const button of document.querySelectorAll('[data-model-export]')) {
      button.addEventListener('click', () => {
        const [chart, kind] = button.dataset.modelExport.split(':');
        P.download(V().exportFile(chart, kind));
      });
    }
    document.addEventListener('keydown', (e) => {
      if (P.state.tab !== 'model') return;
      const t = e.target;
      if (t instanceof HTMLInputElement || t instanceof HTMLTextAreaElement || t instanceof HTMLSelectElement || t instanceof HTMLButtonElement) return;
      if (e.key === 'ArrowRight') { e.preventDefault(); if (!$('btn-gen-step').disabled) step(); }
      if (e.key === ' ') { e.preventDefault(); play(); }
    });
  }

  // ---------------------------------------------------------------- start
  // wasm: the module's bytes; layerReady: resolves once the page's own core (the layer lab's)
  // is there.
  // The model view's first drawing: the worker starts and the model's bytes arrive at the same
  // time, then the model loads and the prompt (and any steps the link gives) runs.
  async function boot(wasm) {
    m.client = new ModelClient();
    if (P.state.model === 'file') { // the files are the learner's to give again
      await m.client.init(wasm);
      m.awaitingFiles = true;
      $('model-select').value = '';
      modelMessage(P.t.fileLink);
      return;
    }
    const [, bytes] = await Promise.all([m.client.init(wasm), shippedBytes(P.state.model)]);
    if (!(await loadShipped(P.state.model, bytes))) return;
    await replay();
  }

  // Wires the view; it boots now if the link opens it, else the first time its tab is shown.
  async function start(wasm, layerReady) {
    m.layerReady = layerReady;
    // the shipped models this page has, as the select's options
    const select = $('model-select');
    select.replaceChildren(...available().map((i) => new Option(SHIPPED[i].name, String(i))));
    if (P.state.model !== 'file' && !available().includes(P.state.model)) P.state.model = available()[0];
    select.value = P.state.model === 'file' ? '' : String(P.state.model);
    m.headFromLink = /[#&](layer|mhead)=/.test(location.hash);
    m.boot = () => {
      const booting = boot(wasm);
      m.boot = () => booting;
      return booting;
    };
    syncControls();
    wire();
    TrainControls.start(wasm);
    showTab(P.state.tab);
    if (P.state.tab === 'model') await m.boot();
  }

export { start, showTab, onLanguage, syncControls, replay, openModel, SHIPPED };
