// train/controls.js — the Train tab's controls and events: the preset, the data, the model's
// shape and learning rate (kept in the URL hash), Start / Pause / Reset, the status line, the
// role shown and the head shown (the strongest of that role, followed as it trains, until a
// head is clicked), the exports, and the trained model opened in the model view (on the probe,
// its induction head selected) or downloaded as a MiniMind folder's files; the heads switched
// off in the probe's evaluation (the followed induction head, any head by its button or by a
// Shift-click on the grid; kept in the URL hash). The training runs in its own worker
// (train/worker.js), started the first time the tab is shown.
import { TrainClient, trainBytes } from '../core/client.js';
import * as ModelControls from '../model/controls.js';
import { page } from '../ui/page.js';
import * as State from '../ui/state.js';
import { showTab, whenShown } from '../ui/tabs.js';
import * as TrainView from './view.js';
  const $ = (id) => document.getElementById(id);

  // The presets: the first is the core's default (al_train_lab_config_default); the others
  // change what they name.
  const PRESETS = [
    { key: 'attnOnly2' },
    { key: 'attnOnly1', layers: 1 },
    { key: 'tinyMiniMind', heads: 4, kv_heads: 2, ffn: -1, vocab: 512 },
    { key: 'smallMiniMind', layers: 4, heads: 4, kv_heads: 2, hidden: 128, ffn: -1, vocab: 6400, seq: 128, batch: 8, lr: 0.001,
      rope_theta: 1e6, steps: 5000 },
  ];
  const DATA = ['repeat', 'sample', 'text'];

  const tr = {
    client: null,
    defaults: null,
    booted: null,     // the worker's start (a promise), once
    made: null,       // the settings the current lab was made with (a JSON string), or null
    running: false,
    done: false,
    wasm: null,
  };

  function message(text) {
    $('train-message').textContent = text || '';
    $('train-message').hidden = !text;
  }

  // ---------------------------------------------------------------- settings
  function presetConfig(i) {
    const { key: _key, ...changes } = PRESETS[i];
    return { ...tr.defaults, ...changes };
  }

  // The lab's settings: the preset's, with the shape and rate the controls give.
  function settings() {
    const s = page.state, c = presetConfig(s.tpreset);
    c.layers = s.tlayers;
    c.heads = s.theads;
    c.hidden = s.thidden;
    c.lr = s.tlr;
    if (c.heads % c.kv_heads !== 0 || c.kv_heads > c.heads) c.kv_heads = c.heads;
    c.data = DATA[s.tdata] === 'repeat' ? 'repeat' : 'text';
    return c;
  }

  function syncControls() {
    const s = page.state, { t } = page;
    $('train-preset').replaceChildren(...PRESETS.map((p, i) => new Option(t.trainPresets[p.key], String(i))));
    $('train-preset').value = String(s.tpreset);
    $('train-data').replaceChildren(...DATA.map((d, i) => new Option(t.trainDataNames[d], String(i))));
    $('train-data').value = String(s.tdata);
    $('train-layers').value = String(s.tlayers);
    $('train-heads').value = String(s.theads);
    $('train-hidden').value = String(s.thidden);
    $('train-lr').value = String(s.tlr);
    $('train-text-label').hidden = DATA[s.tdata] !== 'text';
    const roles = tr.defaults ? ['previous', 'first', 'local', 'induction'] : [];
    $('train-role').replaceChildren(...roles.map((r, i) => new Option(t.roleNames[r], String(i))));
    $('train-role').value = String(s.trole);
  }

  // The controls read back through the hash's validation.
  function readControls() {
    const parts = [`tpreset=${$('train-preset').value}`, `tdata=${$('train-data').value}`, `tlayers=${$('train-layers').value}`,
      `theads=${$('train-heads').value}`, `thidden=${$('train-hidden').value}`, `tlr=${$('train-lr').value}`, `trole=${$('train-role').value}`, `toff=${page.state.toff}`];
    const { state, problems } = State.parseHash(parts.join('&'));
    for (const k of ['tpreset', 'tdata', 'tlayers', 'theads', 'thidden', 'tlr', 'trole', 'toff']) page.state[k] = state[k];
    if (problems.length) page.showProblems(problems);
    syncControls();
    page.writeHash();
  }

  // A preset sets the shape and rate to its own.
  function choosePreset() {
    readControls();
    const c = presetConfig(page.state.tpreset);
    Object.assign(page.state, { tlayers: c.layers, theads: c.heads, thidden: c.hidden, tlr: c.lr });
    syncControls();
    readControls(); // the heads switched off that the new shape has
  }

  // ---------------------------------------------------------------- status
  function renderStatus(p) {
    const { t } = page, f = TrainView.view.facts;
    const last = TrainView.view.history[TrainView.view.history.length - 1];
    const rate = p ? Math.round(p.tokensPerSecond) : 0; // tokens/s from the core (al_train_lab_tokens_per_second)
    $('train-status').textContent = f ? t.trainStatus(p ? p.steps : 0, f.config.steps, last ? last[0] : NaN, rate, tr.running, tr.done) : '';
    $('induction-max').textContent = p && Number.isFinite(p.inductionMax) ? p.inductionMax.toFixed(3) : '–';
    TrainView.renderJump();
    $('btn-train-start').disabled = tr.running || tr.done;
    $('btn-train-pause').disabled = !tr.running;
    $('train-open-model').disabled = !f;
    for (const b of document.querySelectorAll('[data-train-file]')) b.disabled = !f;
    tr.last = p;
  }

  // ---------------------------------------------------------------- heads switched off
  const inductionHead = () => {
    const v = TrainView.view;
    return v.facts ? v.strongest[v.facts.roleNames.indexOf('induction')] : null;
  };

  // The buttons: the strongest induction head's, all back on, one per head (pressed = off).
  function renderAblationControls() {
    const { t } = page, v = TrainView.view, f = v.facts, best = inductionHead();
    const followed = $('train-ablate-followed');
    followed.disabled = !f || !best;
    const bestOff = !!best && TrainView.isOff(best.layer, best.head);
    followed.textContent = f && best ? t.trainAblateFollowed(best.layer, best.head, bestOff) : t.trainAblateNoLab;
    followed.setAttribute('aria-pressed', String(bestOff));
    $('train-ablate-clear').disabled = !f || v.ablation.length === 0;
    const box = $('train-ablate-heads'), label = $('train-ablate-heads-label');
    const L = f ? f.hparams.n_layers : 0, Hn = f ? f.hparams.n_heads : 0;
    let buttons = box.querySelectorAll('button.head-toggle');
    if (buttons.length !== L * Hn) {
      const made = [];
      for (let l = 0; l < L; l++) for (let h = 0; h < Hn; h++) {
        const b = document.createElement('button');
        b.type = 'button';
        b.className = 'head-toggle';
        b.dataset.layer = String(l);
        b.dataset.head = String(h);
        b.textContent = `L${l} H${h}`;
        b.addEventListener('click', () => toggleHead(l, h));
        made.push(b);
      }
      box.replaceChildren(label, ...made);
      buttons = made;
    }
    for (const b of buttons) {
      const l = Number(b.dataset.layer), h = Number(b.dataset.head), off = TrainView.isOff(l, h);
      b.setAttribute('aria-pressed', String(off));
      b.title = t.trainAblateHeadLabel(l, h, off); // the state is aria-pressed's; the name stays the text shown
    }
  }

  // The heads off as the link holds them, sent to the lab; the core's list (and the probe's
  // losses it measured at once) comes back and is shown.
  async function applyAblation() {
    renderAblationControls();
    if (!TrainView.view.facts) return;
    try {
      const r = await tr.client.request('ablate', { heads: State.headsOf(page.state.toff) });
      TrainView.setAblation(r);
      page.state.toff = State.headsText(r.ablation);
      page.writeHash();
      TrainView.schedule({ roles: true, pattern: true, ablation: true });
    } catch (e) {
      message(page.t.errorPrefix + e.message);
    }
    renderAblationControls();
  }

  function setOff(heads) {
    page.state.toff = State.headsText(heads);
    page.writeHash();
    return applyAblation();
  }

  function toggleHead(l, h) {
    const heads = State.headsOf(page.state.toff);
    const at = heads.findIndex(([a, b]) => a === l && b === h);
    if (at >= 0) heads.splice(at, 1);
    else heads.push([l, h]);
    return setOff(heads);
  }

  function renderFacts() {
    const f = TrainView.view.facts;
    $('train-facts').textContent = f ? page.t.trainFacts(f.hparams, f.params, f.config) : '';
  }

  function onProgress(e) {
    const p = e.progress;
    if (!p) return;
    TrainView.add(p);
    follow();
    tr.running = p.running;
    tr.done = p.done;
    if (p.error) message(page.t.errorPrefix + p.error);
    renderStatus(p);
    renderAblationControls();
  }

  // While no head has been clicked, the head shown is the strongest of the chosen role (the
  // core's, at the last evaluation).
  function follow() {
    const v = TrainView.view, best = v.strongest[page.state.trole];
    if (!v.follow || !best || (best.layer === v.head.layer && best.head === v.head.head)) return;
    v.head = { ...best };
    TrainView.schedule({ pattern: true });
  }

  // ---------------------------------------------------------------- actions
  async function trainingText() {
    const data = DATA[page.state.tdata];
    if (data === 'sample') return new TextDecoder().decode(await trainBytes('sample'));
    if (data === 'text') return $('train-text').value;
    return '';
  }

  async function start() {
    message('');
    await boot();
    const c = settings();
    const key = JSON.stringify([c, DATA[page.state.tdata], DATA[page.state.tdata] === 'text' ? $('train-text').value : '']);
    try {
      if (tr.made !== key) {
        const [tokenizer, text] = await Promise.all([trainBytes('tokenizer'), trainingText()]);
        const facts = await tr.client.request('create', { config: c, tokenizer, text });
        tr.made = key;
        tr.done = false;
        TrainView.reset(facts);
        TrainView.add(facts.progress);
        follow();
        renderFacts();
        if (page.state.toff) await applyAblation(); // the heads the link switches off
        renderAblationControls();
      }
      await tr.client.request('start');
      tr.running = true;
      renderStatus(tr.last);
    } catch (e) {
      message(page.t.errorPrefix + e.message);
    }
  }

  async function pause() {
    await tr.client.request('pause');
    tr.running = false;
    renderStatus(tr.last);
  }

  async function reset() {
    if (tr.client) await tr.client.request('pause');
    tr.running = false;
    tr.done = false;
    tr.made = null;
    tr.last = null;
    TrainView.reset(null);
    for (const chart of Object.values(TrainView.charts)) chart.destroy();
    for (const k of Object.keys(TrainView.charts)) delete TrainView.charts[k];
    $('train-head-title').textContent = page.t.trainHeadNone;
    renderFacts();
    renderStatus(null);
    TrainView.renderAblation();
    renderAblationControls();
  }

  // One of the folder's files, as the model is now.
  async function download(which) {
    const NAMES = { config: 'config.json', model: 'model.safetensors', tokenizer: 'tokenizer.json' };
    try {
      const f = await tr.client.request('files');
      const type = which === 'model' ? 'application/octet-stream' : 'application/json';
      page.download({ name: NAMES[which], url: URL.createObjectURL(new Blob([f[which]], { type })) });
    } catch (e) {
      message(page.t.errorPrefix + e.message);
    }
  }

  // The model as it is now in the model view, its prompt the probe (the repeated random ids the
  // roles are measured on), the strongest induction head selected.
  async function openInModelView() {
    try {
      const v = TrainView.view, f = await tr.client.request('files');
      const head = v.strongest[v.facts.roleNames.indexOf('induction')] || v.head;
      showTab('model');
      await ModelControls.openModel({ model: f.model, config: f.config, tokenizer: f.tokenizer, kind: 'safetensors' },
        page.t.trainedName(tr.last ? tr.last.steps : 0), { ids: v.facts.probe, role: 'induction', head });
    } catch (e) {
      message(page.t.errorPrefix + e.message);
    }
  }

  // ---------------------------------------------------------------- start
  function boot() {
    if (!tr.booted) {
      tr.booted = (async () => {
        tr.client = new TrainClient();
        tr.client.onEvent = onProgress;
        const r = await tr.client.init(tr.wasm);
        tr.defaults = r.defaults;
        Object.assign(TrainView.view, { jump: r.jump, threshold: r.threshold });
        syncControls();
        TrainView.renderJump();
      })().catch((e) => message(page.t.errorPrefix + e.message));
    }
    TrainView.schedule(); // the charts, not drawn while the tab was hidden
    return tr.booted;
  }

  function wire() {
    $('train-preset').addEventListener('change', choosePreset);
    for (const id of ['train-data', 'train-layers', 'train-heads', 'train-hidden', 'train-lr']) $(id).addEventListener('change', readControls);
    // a role chosen: its strongest head is shown, and followed
    $('train-role').addEventListener('change', () => {
      readControls();
      TrainView.view.follow = true;
      follow();
      TrainView.schedule({ roles: true, pattern: true });
    });
    $('btn-train-start').addEventListener('click', start);
    $('btn-train-pause').addEventListener('click', pause);
    $('btn-train-reset').addEventListener('click', reset);
    for (const b of document.querySelectorAll('[data-train-file]')) b.addEventListener('click', () => download(b.dataset.trainFile));
    $('train-open-model').addEventListener('click', openInModelView);
    // a click shows the head; Shift-click (or Ctrl, ⌘) switches it off or on again
    $('chart-roles-grid').addEventListener('click', (e) => {
      const chart = window.Chart.getChart($('chart-roles-grid'));
      const f = TrainView.view.facts;
      if (!chart || !f) return;
      const head = Math.round(chart.scales.x.getValueForPixel(e.offsetX));
      const layer = Math.round(chart.scales.y.getValueForPixel(e.offsetY));
      if (layer < 0 || head < 0 || layer >= f.hparams.n_layers || head >= f.hparams.n_heads) return;
      if (e.shiftKey || e.ctrlKey || e.metaKey) {
        toggleHead(layer, head);
        return;
      }
      TrainView.view.head = { layer, head };
      TrainView.view.follow = false; // the learner's choice holds until a role is chosen
      TrainView.schedule({ pattern: true });
    });
    $('train-ablate-followed').addEventListener('click', () => {
      const best = inductionHead();
      if (best) toggleHead(best.layer, best.head);
    });
    $('train-ablate-clear').addEventListener('click', () => setOff([]));
    for (const button of document.querySelectorAll('[data-train-export]')) {
      button.addEventListener('click', () => {
        if (!TrainView.view.facts) return;
        const [chart, kind] = button.dataset.trainExport.split(':');
        page.download(TrainView.exportFile(chart, kind));
      });
    }
  }

  function onLanguage() {
    syncControls();
    renderFacts();
    renderStatus(tr.last);
    renderAblationControls();
    TrainView.render();
  }

  // wasm: the module's bytes, for the worker, which starts the first time the tab is shown.
  function startTab(wasm) {
    tr.wasm = wasm;
    wire();
    syncControls();
    whenShown('train', boot);
    page.followLanguage(onLanguage);
  }

export { startTab, syncControls };
