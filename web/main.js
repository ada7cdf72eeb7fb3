// main.js — the page's entry module: starts the page: the state from the URL hash, the
// language, the WebAssembly core's bytes (fetched, or decoded from the single-file page) handed
// to the views' workers (the page's own thread runs no core), then the controls wired and the
// model view started (model/controls.js; the layer lab's session and walkthrough are built when
// its tab is first shown). The page's modules by folder:
//   core/   the WebAssembly loader and binding, the workers' protocol and client
//   ui/     what the views share: the page's state and message line, the link (state.js), the
//           strings of both languages, the heatmap, formatting and CSV, the tour
//   charts/ one module per chart config of the layer view (the mask chart is the model view's too)
//   layer/  the layer view and its worker;  model/  the model view and its worker;
//   train/  the Train tab and its worker
import * as AttnLab from './core/attnlab-api.js';
import { embedded, base64Bytes } from './core/embedded.js';
import * as LayerControls from './layer/controls.js';
import * as LayerRun from './layer/run.js';
import * as ModelControls from './model/controls.js';
import * as Experiments from './model/experiments.js';
import * as ModelView from './model/view.js';
import * as TrainView from './train/view.js';
import * as I18n from './ui/i18n.js';
import { page as P } from './ui/page.js';
import * as S from './ui/state.js';
import './ui/tour.js';

  async function loadWasmBytes() {
    if (embedded) return base64Bytes(embedded.wasm);
    const r = await fetch('gen/attnlab.wasm');
    if (!r.ok) throw new Error(`gen/attnlab.wasm: HTTP ${r.status}`);
    return new Uint8Array(await r.arrayBuffer());
  }

  async function main() {
    const parsed = S.parseHash(location.hash);
    P.state = parsed.state;
    P.loadProblems = parsed.problems;
    if (!P.state.lang) P.state.lang = I18n.pickLanguage(navigator.languages);
    P.applyLanguage();
    P.showMessage(P.t.loading, false);
    let wasm;
    try {
      wasm = await loadWasmBytes();
    } catch (e) {
      P.showMessage(P.t.errorPrefix + e.message, true);
      return;
    }
    // The model view starts its worker and draws the shipped model while the layer lab's worker
    // starts its core; the layer lab is built the first time its tab is shown (at once, if the
    // link opens it).
    const layerCore = LayerRun.start(wasm).then(() => {
      LayerControls.wire();
      LayerControls.syncControls();
    });
    try {
      await ModelControls.start(wasm, layerCore);
    } catch (e) {
      P.showMessage(P.t.errorPrefix + e.message, true);
    }
    try {
      await layerCore;
      await LayerRun.idle(); // the layer lab drawn, if the link opens it
    } catch (e) {
      P.showMessage(P.t.errorPrefix + e.message, true);
    }
    if (!document.querySelector('#message.error')) P.showProblems(parsed.problems);
    document.body.dataset.readyMs = String(performance.now());
    document.body.dataset.ready = 'true';
  }

  // The one name the page gives the window: a handle for the browser tests and for a person at
  // the console (the binding, the link's rules, what the page shares and each view's state).
  // Nothing in the page reads it.
  window.attnlab = { api: AttnLab, link: S, page: P, layerView: LayerRun, modelView: ModelView, trainView: TrainView, experiments: Experiments };

  main();
