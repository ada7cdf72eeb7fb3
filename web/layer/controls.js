// layer/controls.js — the layer lab's events: its inputs changed (inputs.js), the buttons, the
// keys, the language switch, the walkthrough's buttons, the export buttons and the hash changed
// by hand; and the lab started (its session built the first time its tab is shown).
import * as ModelControls from '../model/controls.js';
import { page } from '../ui/page.js';
import * as State from '../ui/state.js';
import { showTab, whenShown } from '../ui/tabs.js';
import { NUMERIC, syncControls, readControls } from './inputs.js';
import * as Render from './render.js';
import * as Run from './run.js';
import * as Walkthrough from './walkthrough.js';
  const $ = page.$;

  // A control changed: the head, pair and wrap only change what is drawn (the worker sends that
  // head's weights, that pair's turn); anything else builds a new session.
  function onControlChange(event) {
    const { state: next, problems } = readControls();
    const viewOnly = ['head', 'pair', 'wrap'].includes(event.target.id);
    page.state = { ...next, at: viewOnly && page.session ? page.session.length : -1 };
    if (viewOnly && !problems.length && page.session) {
      syncControls();
      Run.redraw();
    } else {
      Run.rebuild(problems);
      if (event.target.id === 'seed') Walkthrough.build();
    }
  }

  function wire() {
    // The inputs' ranges are the state's own (state.js), not a second copy in the HTML.
    for (const [id, key] of Object.entries(NUMERIC)) {
      if (key === 'pair') continue; // its range follows head_dim (syncControls)
      $(id).min = String(State.FIELDS[key][1]);
      $(id).max = String(State.FIELDS[key][2]);
    }
    for (const id of [...Object.keys(NUMERIC), 'kv', 'head', 'qk', 'wrap']) $(id).addEventListener('change', onControlChange);
    $('lang').addEventListener('change', () => page.switchLanguage($('lang').value));
    page.followLanguage(() => {
      if (!page.session) return;
      Walkthrough.build();
      Render.render();
    });
    $('btn-prefill').addEventListener('click', () => Run.restart(-1));
    $('btn-reset').addEventListener('click', () => Run.restart(0));
    $('btn-step').addEventListener('click', () => Run.step());
    $('btn-play').addEventListener('click', () => Run.play());
    $('walk-prev').addEventListener('click', () => Walkthrough.move(-1));
    $('walk-next').addEventListener('click', () => Walkthrough.move(1));
    $('walk-callout-prev').addEventListener('click', (e) => Walkthrough.move(-1, e.currentTarget));
    $('walk-callout-next').addEventListener('click', (e) => Walkthrough.move(1, e.currentTarget));
    $('walk-callout-code').addEventListener('click', () => Walkthrough.toCode());
    for (const button of document.querySelectorAll('[data-export]')) {
      button.addEventListener('click', () => {
        const [chart, kind] = button.dataset.export.split(':');
        page.download(Render.exportFile(chart, kind));
      });
    }
    // The arrows and space step and play, except where they have a use of their own: in a
    // field, and in the walkthrough's listings, which the keyboard scrolls.
    document.addEventListener('keydown', (e) => {
      if (page.state.tab !== 'layer') return; // the model view has keys of its own
      if (e.target instanceof HTMLInputElement || e.target instanceof HTMLSelectElement || e.target instanceof HTMLPreElement) return;
      if (e.key === 'ArrowRight' || e.key === 'ArrowDown') { e.preventDefault(); Run.step(); }
      if (e.key === 'ArrowLeft' || e.key === 'ArrowUp') { e.preventDefault(); Run.restart(0); }
      if (e.key === ' ') { e.preventDefault(); $('btn-play').click(); }
    });
    window.addEventListener('hashchange', () => {
      if (location.hash === State.toHash(page.state)) return;
      const parsed = State.parseHash(location.hash);
      const before = page.state;
      page.state = { ...parsed.state, lang: parsed.state.lang || page.state.lang };
      page.applyLanguage();
      ModelControls.syncControls();
      showTab(page.state.tab);
      if (page.state.tab === 'layer' && page.session) {
        Run.rebuild(parsed.problems);
        Walkthrough.build();
      } else {
        page.showProblems(parsed.problems);
      }
      if (['text', 'gen', 'gseed', 'temp', 'topk', 'topp', 'rep', 'layer', 'mhead', 'log'].some((k) => before[k] !== page.state[k])) ModelControls.replay().catch(() => {});
    });
  }

  // coreReady: resolves once the layer view's worker has started its core (run.js start). The
  // controls are wired then;
  // the session and the walkthrough are built the first time the tab is shown (at once, if
  // the link opens it), what the link's corrections were said then. Resolves once wired.
  function start(coreReady) {
    const wired = coreReady.then(() => {
      wire();
      syncControls();
    });
    let built = false;
    whenShown('layer', () => {
      if (built) return;
      built = true;
      wired.then(() => {
        Run.rebuild(page.loadProblems || []);
        page.loadProblems = null;
        Walkthrough.build();
      });
    });
    return wired;
  }

export { start };
