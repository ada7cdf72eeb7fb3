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
import { embedded, embeddedBytes } from './core/embedded.js';
import * as LayerControls from './layer/controls.js';
import * as LayerRun from './layer/run.js';
import * as ModelControls from './model/controls.js';
import * as Experiments from './model/experiments.js';
import * as ModelView from './model/view.js';
import * as TrainControls from './train/controls.js';
import * as TrainView from './train/view.js';
import * as I18n from './ui/i18n.js';
import { page } from './ui/page.js';
import * as State from './ui/state.js';
import './ui/tour.js';

  // The core's bytes: cross-origin isolated (web/serve.mjs sends the headers), the threaded
  // build, whose GEMMs the workers' cores split over two threads (core/wasm-loader.js); else,
  // and in the single-file page, the one-thread build.
  async function loadWasmBytes() {
    if (embedded) return embeddedBytes(embedded.wasm);
    const threaded = self.crossOriginIsolated === true && typeof SharedArrayBuffer === 'function';
    for (const file of threaded ? ['gen/attnlab-threads.wasm', 'gen/attnlab.wasm'] : ['gen/attnlab.wasm']) {
      const r = await fetch(file);
      if (r.ok) return new Uint8Array(await r.arrayBuffer());
      if (file === 'gen/attnlab.wasm') throw new Error(`gen/attnlab.wasm: HTTP ${r.status}`);
    }
  }

  async function main() {
    const parsed = State.parseHash(location.hash);
    page.state = parsed.state;
    page.loadProblems = parsed.problems;
    if (!page.state.lang) page.state.lang = I18n.pickLanguage(navigator.languages);
    page.applyLanguage();
    page.showMessage(page.t.loading, false);
    let wasm;
    try {
      wasm = await loadWasmBytes();
    } catch (e) {
      page.showMessage(page.t.errorPrefix + e.message, true);
      return;
    }
    // The model view starts its worker and draws the shipped model while the layer lab's worker
    // starts its core; the layer lab is built the first time its tab is shown (at once, if the
    // link opens it).
    const layerCore = LayerControls.start(LayerRun.start(wasm));
    TrainControls.startTab(wasm);
    try {
      await ModelControls.start(wasm);
    } catch (e) {
      page.showMessage(page.t.errorPrefix + e.message, true);
    }
    try {
      await layerCore;
      await LayerRun.idle(); // the layer lab drawn, if the link opens it
    } catch (e) {
      page.showMessage(page.t.errorPrefix + e.message, true);
    }
    if (!document.querySelector('#message.error')) page.showProblems(parsed.problems);
    document.body.dataset.readyMs = String(performance.now());
    document.body.dataset.ready = 'true';
  }

  // The one name the page gives the window: a handle for the browser tests and for a person at
  // the console (the binding, the link's rules, what the page shares and each view's state).
  // Nothing in the page reads it.
  window.attnlab = { api: AttnLab, link: State, page, layerView: LayerRun, modelView: ModelView, trainView: TrainView, experiments: Experiments };

  main();
