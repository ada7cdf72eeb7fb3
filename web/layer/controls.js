// layer/controls.js — the controls and the page's events: the inputs shown from the state and
// read back through the same validation as the URL hash (state.js), the buttons, the keys, the
// language switch, the walkthrough's buttons, the export buttons and the hash changed by hand.
import * as ModelControls from '../model/controls.js';
import { page as P } from '../ui/page.js';
import * as S from '../ui/state.js';
import * as Render from './render.js';
import * as Run from './run.js';
import * as Walkthrough from './walkthrough.js';
  const $ = P.$;
  const run = () => Run;
  const walk = () => Walkthrough;

  // Input id -> state key, for the inputs that hold a number.
  const NUMERIC = { seed: 'seed', prompt: 'prompt', steps: 'steps', hidden: 'hidden', heads: 'heads', hd: 'hd', base: 'base', pair: 'pair' };

  function syncControls() {
    const { state } = P;
    for (const [id, key] of Object.entries(NUMERIC)) $(id).value = String(state[key]);
    const kv = $('kv'), head = $('head');
    if (kv.dataset.heads !== String(state.heads)) { // the options depend on the head count only
      kv.replaceChildren(...run().kvChoices(state.heads).map((n) => new Option(String(n), String(n))));
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
      `wrap=${$('wrap').checked ? 1 : 0}`, `lang=${P.state.lang}`, `walk=${P.state.walk}`);
    // the model view's part of the state, as it is
    for (const k of ['tab', 'model', 'text', 'gen', 'temp', 'topk', 'topp', 'rep', 'gseed', 'layer', 'mhead', 'log']) {
      parts.push(`${k}=${encodeURIComponent(P.state[k])}`);
    }
    return S.parseHash(parts.join('&'));
  }

  // A control changed: the head, pair and wrap only change what is drawn (the worker sends that
  // head's weights, that pair's turn); anything else builds a new session.
  function onControlChange(event) {
    const { state: next, problems } = readControls();
    const viewOnly = ['head', 'pair', 'wrap'].includes(event.target.id);
    P.state = { ...next, at: viewOnly && P.session ? P.session.length : -1 };
    if (viewOnly && !problems.length && P.session) {
      syncControls();
      run().redraw();
    } else {
      run().rebuild(problems);
      if (event.target.id === 'seed') walk().build();
    }
  }

  function wire() {
    // The inputs' ranges are the state's own (state.js), not a second copy in the HTML.
    for (const [id, key] of Object.entries(NUMERIC)) {
      if (key === 'pair') continue; // its range follows head_dim (syncControls)
      $(id).min = String(S.FIELDS[key][1]);
      $(id).max = String(S.FIELDS[key][2]);
    }
    for (const id of [...Object.keys(NUMERIC), 'kv', 'head', 'qk', 'wrap']) $(id).addEventListener('change', onControlChange);
    $('lang').addEventListener('change', () => {
      P.state.lang = $('lang').value === 'zh' ? 'zh' : 'en';
      P.applyLanguage();
      if (P.session) {
        walk().build();
        Render.render();
      }
      ModelControls.onLanguage();
      P.writeHash();
    });
    $('btn-prefill').addEventListener('click', () => run().restart(-1));
    $('btn-reset').addEventListener('click', () => run().restart(0));
    $('btn-step').addEventListener('click', () => run().step());
    $('btn-play').addEventListener('click', () => run().play());
    $('walk-prev').addEventListener('click', () => walk().move(-1));
    $('walk-next').addEventListener('click', () => walk().move(1));
    $('walk-callout-prev').addEventListener('click', (e) => walk().move(-1, e.currentTarget));
    $('walk-callout-next').addEventListener('click', (e) => walk().move(1, e.currentTarget));
    $('walk-callout-code').addEventListener('click', () => walk().toCode());
    for (const button of document.querySelectorAll('[data-export]')) {
      button.addEventListener('click', () => {
        const [chart, kind] = button.dataset.export.split(':');
        P.download(Render.exportFile(chart, kind));
      });
    }
    // The arrows and space step and play, except where they have a use of their own: in a
    // field, and in the walkthrough's listings, which the keyboard scrolls.
    document.addEventListener('keydown', (e) => {
      if (P.state.tab !== 'layer') return; // the model view has keys of its own
      if (e.target instanceof HTMLInputElement || e.target instanceof HTMLSelectElement || e.target instanceof HTMLPreElement) return;
      if (e.key === 'ArrowRight' || e.key === 'ArrowDown') { e.preventDefault(); run().step(); }
      if (e.key === 'ArrowLeft' || e.key === 'ArrowUp') { e.preventDefault(); run().restart(0); }
      if (e.key === ' ') { e.preventDefault(); $('btn-play').click(); }
    });
    window.addEventListener('hashchange', () => {
      if (location.hash === S.toHash(P.state)) return;
      const parsed = S.parseHash(location.hash);
      const before = P.state;
      P.state = { ...parsed.state, lang: parsed.state.lang || P.state.lang };
      P.applyLanguage();
      const model = ModelControls;
      model.syncControls();
      model.showTab(P.state.tab);
      if (P.state.tab === 'layer' && P.session) {
        run().rebuild(parsed.problems);
        walk().build();
      } else {
        P.showProblems(parsed.problems);
      }
      if (['text', 'gen', 'gseed', 'temp', 'topk', 'topp', 'rep', 'layer', 'mhead', 'log'].some((k) => before[k] !== P.state[k])) model.replay().catch(() => {});
    });
  }

export { syncControls, wire };
