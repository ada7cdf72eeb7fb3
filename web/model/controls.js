// model/controls.js — the model view's controls and events: the two tabs, the shipped model and
// the learner's own files (picker and drop), the prompt, the sampler, Step / Play / Reset, the
// head chosen in the grid or the roles, the colour scale, the exports and the keys. The state
// (model, prompt, steps taken, sampler, head) lives in the URL hash (state.js): opening a link
// replays the prompt and the steps; a link made with the learner's own files asks for them.
// Moving a sampler setting redraws the next token's stages at once, no token drawn.
import { ModelClient, SHIPPED, shippedBytes, available } from '../core/client.js';
import { page } from '../ui/page.js';
import * as State from '../ui/state.js';
import { showTab, whenShown, wireTabs } from '../ui/tabs.js';
import * as Experiments from './experiments.js';
import * as ModelView from './view.js';
  const $ = (id) => document.getElementById(id);

  const MAX_FILE_MB = 1024;
  const m = {
    client: null,
    info: null,
    busy: Promise.resolve(),
    playing: false,
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
  const sampler = () => ({ temperature: page.state.temp, topK: page.state.topk, topP: page.state.topp, repetitionPenalty: page.state.rep });
  const viewArgs = () => ({ layer: page.state.layer, head: page.state.mhead, thumb: 32, sampler: sampler() });

  // Draws a snapshot. The time it takes (the charts, the DOM, and the layout they force) is
  // recorded as a User Timing measure 'attnlab:draw' (the bench reads it; so can DevTools).
  // lazy (a head switched off): the charts off the screen are drawn once they come into view.
  function show(snap, lazy = false) {
    const t0 = performance.now();
    page.state.layer = snap.layer;
    page.state.mhead = snap.head;
    page.state.gen = snap.len - snap.promptLen;
    ModelView.render(snap, lazy);
    Experiments.onSnapshot(snap);
    renderButtons(snap);
    page.writeHash();
    void document.body.offsetHeight; // the layout the new DOM needs, done now
    performance.measure('attnlab:draw', { start: t0, detail: { len: snap.len } });
    return snap;
  }

  function renderButtons(snap) {
    const done = snap.finish !== 'going'; // the core's generator says whether a step would draw
    $('btn-gen-step').disabled = done;
    $('btn-gen-play').disabled = done && !m.playing;
    $('btn-gen-play').textContent = m.playing ? page.t.pause : page.t.play;
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
      let snap = await m.client.request('prompt', { text: page.state.text, seed: page.state.gseed, view: viewArgs(), eos: !!page.state.eos,
        heads: State.headsOf(page.state.off) });
      const want = page.state.gen;
      if (want > 0) snap = await m.client.request('step', { sampler: sampler(), count: want, charts: false, view: viewArgs() });
      return show(snap);
    }).catch((e) => {
      modelMessage(page.t.errorPrefix + e.message);
      throw e;
    });
  }

  // A prompt given as token ids (shown in the prompt box as their text), from the start.
  function promptIds(ids) {
    return queue(async () => {
      const snap = await m.client.request('ids', { ids, seed: page.state.gseed, view: viewArgs(), eos: !!page.state.eos });
      page.state.text = $('prompt-text').value = snap.text;
      return show(snap);
    }).catch((e) => {
      modelMessage(page.t.errorPrefix + e.message);
      throw e;
    });
  }

  // The head a new model opens on: the strongest of the chosen role (the roles panel says what
  // it does), unless the link named one.
  function openStrongest(info) {
    if (m.headFromLink) { m.headFromLink = false; return; }
    const lh = info.ranking[$('role-select').value || 'previous'][0];
    page.state.layer = Math.floor(lh / info.hparams.n_heads);
    page.state.mhead = lh % info.hparams.n_heads;
  }

  async function loadFiles(files, name) {
    modelMessage('');
    $('model-name').textContent = page.t.loadingModel;
    try {
      m.info = await queue(() => m.client.load({ ...files, name }));
    } catch (e) {
      $('model-name').textContent = m.info ? m.info.name : '';
      modelMessage(page.t.fileProblem(e.message));
      return false;
    }
    ModelView.renderModel(m.info);
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
    return parts.length > 1 ? parts[parts.length - 2] : page.t.yourFile(model.name);
  }

  // ---------------------------------------------------------------- the learner's files
  // Sorts picked or dropped files into model, config and tokenizer by name and kind.
  async function fromUserFiles(list) {
    const files = [...list];
    if (!files.length) return;
    for (const f of files) {
      if (f.size > MAX_FILE_MB * 1048576) { modelMessage(page.t.fileProblem(page.t.tooLarge(f.name, Math.round(f.size / 1048576)))); return; }
    }
    const lower = (f) => f.name.toLowerCase();
    const tokenizer = files.find((f) => /tokenizer\.json$/.test(lower(f))) || files.find((f) => /tok.*\.bin$/.test(lower(f)));
    const config = files.find((f) => lower(f) === 'config.json' || (/\.json$/.test(lower(f)) && f !== tokenizer && /config/.test(lower(f))));
    const model = files.find((f) => f !== tokenizer && f !== config && /\.(bin|pth|safetensors)$/.test(lower(f)));
    if (!model || !tokenizer) { modelMessage(page.t.fileProblem(page.t.filesNeeded)); return; }
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
      ModelView.renderRoles();
      page.state.layer = opened.head.layer;
      page.state.mhead = opened.head.head;
      page.state.model = 'file';
      $('model-select').value = '';
      await promptIds(opened.ids).catch(() => {});
    } else if (ok) {
      if (!m.awaitingFiles) page.state.gen = 0;
      m.awaitingFiles = false;
      const i = await shippedMatch(m.info);
      page.state.model = i >= 0 ? i : 'file';
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
    const s = page.state;
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
    const { state, problems } = State.parseHash(parts.join('&'));
    for (const k of ['temp', 'topk', 'topp', 'rep', 'gseed']) page.state[k] = state[k];
    if (problems.length) page.showProblems(problems);
    syncControls();
  }

  function fillExamples(which) {
    const box = $('examples');
    box.replaceChildren();
    const label = document.createElement('span');
    label.textContent = page.t.examples;
    box.appendChild(label);
    for (const text of page.t.exampleTexts[which] || []) {
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
      page.state.text = $('prompt-text').value;
      page.state.gen = 0;
      replay().catch(() => {});
    }, 120);
  }

  // The next-token chart redrawn for the sampler settings as they stand (no token drawn); while
  // one redraw waits in the queue, more moves of a slider add none.
  function redrawNext() {
    if (m.nextQueued || !ModelView.view.snap) return;
    m.nextQueued = true;
    queue(() => {
      m.nextQueued = false;
      return m.client.request('next', { sampler: sampler() });
    }).then((next) => { ModelView.renderNextOnly(next); Experiments.refresh(); })
      .catch((e) => modelMessage(page.t.errorPrefix + e.message));
  }

  // Going on past the end token, or not; a text that ended there goes on at once.
  function setEos(on) {
    page.state.eos = on ? 1 : 0;
    $('ignore-eos').checked = on;
    return queue(() => m.client.request('eos', { on, view: viewArgs() })).then(show)
      .catch((e) => modelMessage(page.t.errorPrefix + e.message));
  }

  function step() {
    return queue(() => m.client.request('step', { sampler: sampler(), count: 1, view: viewArgs() }))
      .then(show)
      .catch((e) => { stopPlay(); modelMessage(page.t.errorPrefix + e.message); });
  }

  function stopPlay() {
    m.playing = false;
    if (ModelView.view.snap) renderButtons(ModelView.view.snap);
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
    page.state.layer = layer;
    page.state.mhead = head;
    return queue(() => m.client.request('view', { view: viewArgs() })).then(show);
  }

  // ---------------------------------------------------------------- language
  function onLanguage() {
    if (m.info) {
      ModelView.renderModel(m.info);
      fillExamples($('examples').dataset.which || 'stories');
    }
    if (ModelView.view.snap) show(ModelView.view.snap);
    Experiments.onLanguage();
  }

  // ---------------------------------------------------------------- wiring
  function wire() {
    Experiments.wire({ queue, client: () => m.client, show, sampler, viewArgs, playing: () => m.playing });
    wireTabs();
    $('model-select').addEventListener('change', async () => {
      if ($('model-select').value === '') return;
      stopPlay();
      page.state.model = Number($('model-select').value);
      page.state.gen = 0;
      m.awaitingFiles = false;
      if (await loadShipped(page.state.model)) await replay().catch(() => {});
    });
    $('file-model').addEventListener('change', () => { stopPlay(); fromUserFiles($('file-model').files); });
    document.addEventListener('dragover', (e) => { if (page.state.tab === 'model') e.preventDefault(); });
    document.addEventListener('drop', (e) => {
      if (page.state.tab !== 'model') return;
      e.preventDefault();
      stopPlay();
      fromUserFiles(e.dataTransfer.files);
    });
    $('prompt-text').addEventListener('input', onPrompt);
    for (const id of ['temperature', 'top-k', 'top-p', 'rep-penalty']) {
      $(id).addEventListener('input', () => { readSampler(); page.writeHash(); redrawNext(); });
    }
    $('next-log').addEventListener('change', () => { if (ModelView.view.snap) ModelView.renderNext(ModelView.view.snap); });
    $('ignore-eos').addEventListener('change', () => setEos($('ignore-eos').checked));
    $('btn-gen-past-eos').addEventListener('click', () => setEos(true));
    $('gen-seed').addEventListener('change', () => { readSampler(); page.state.gen = 0; replay().catch(() => {}); });
    $('btn-gen-step').addEventListener('click', step);
    $('btn-gen-play').addEventListener('click', play);
    $('btn-gen-reset').addEventListener('click', () => { stopPlay(); page.state.gen = 0; replay().catch(() => {}); });
    $('attn-log').addEventListener('change', () => {
      page.state.log = $('attn-log').checked ? 1 : 0;
      if (ModelView.view.snap) show(ModelView.view.snap);
    });
    $('chart-heads').addEventListener('click', (e) => {
      const b = e.target.closest('button.cell');
      if (b) selectHead(Number(b.dataset.layer), Number(b.dataset.head));
    });
    // A role chosen: its strongest head opens.
    $('role-select').addEventListener('change', () => {
      ModelView.renderRoles();
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
      const q = ModelView.lineAt(e.offsetY);
      if (q === ModelView.view.hoverQuery || !ModelView.view.snap) return;
      ModelView.view.hoverQuery = q;
      ModelView.renderLines(ModelView.view.snap);
    });
    $('chart-head-lines').addEventListener('mouseleave', () => {
      ModelView.view.hoverQuery = -1;
      if (ModelView.view.snap) ModelView.renderLines(ModelView.view.snap);
    });
    for (const button of document.querySelectorAll('[data-model-export]')) {
      button.addEventListener('click', () => {
        const [chart, kind] = button.dataset.modelExport.split(':');
        page.download(ModelView.exportFile(chart, kind));
      });
    }
    document.addEventListener('keydown', (e) => {
      if (page.state.tab !== 'model') return;
      const t = e.target;
      if (t instanceof HTMLInputElement || t instanceof HTMLTextAreaElement || t instanceof HTMLSelectElement || t instanceof HTMLButtonElement) return;
      if (e.key === 'ArrowRight') { e.preventDefault(); if (!$('btn-gen-step').disabled) step(); }
      if (e.key === ' ') { e.preventDefault(); play(); }
    });
  }

  // ---------------------------------------------------------------- start
  // wasm: the module's bytes.
  // The model view's first drawing: the worker starts and the model's bytes arrive at the same
  // time, then the model loads and the prompt (and any steps the link gives) runs.
  async function boot(wasm) {
    m.client = new ModelClient();
    if (page.state.model === 'file') { // the files are the learner's to give again
      await m.client.init(wasm);
      m.awaitingFiles = true;
      $('model-select').value = '';
      modelMessage(page.t.fileLink);
      return;
    }
    const [, bytes] = await Promise.all([m.client.init(wasm), shippedBytes(page.state.model)]);
    if (!(await loadShipped(page.state.model, bytes))) return;
    await replay();
  }

  // Wires the view; it boots now if the link opens it, else the first time its tab is shown.
  async function start(wasm) {
    // the shipped models this page has, as the select's options
    const select = $('model-select');
    select.replaceChildren(...available().map((i) => new Option(SHIPPED[i].name, String(i))));
    if (page.state.model !== 'file' && !available().includes(page.state.model)) page.state.model = available()[0];
    select.value = page.state.model === 'file' ? '' : String(page.state.model);
    m.headFromLink = /[#&](layer|mhead)=/.test(location.hash);
    m.boot = () => {
      const booting = boot(wasm);
      m.boot = () => booting;
      return booting;
    };
    syncControls();
    wire();
    whenShown('model', () => m.boot().catch((e) => modelMessage(page.t.errorPrefix + e.message)));
    page.followLanguage(onLanguage);
    showTab(page.state.tab);
    if (page.state.tab === 'model') await m.boot();
  }

export { start, syncControls, replay, openModel, SHIPPED };
