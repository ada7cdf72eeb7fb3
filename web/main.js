// app.js — starts the page: the state from the URL hash, the language, the WebAssembly core
// (fetched, or decoded from the single-file page), then the controls wired and the model view
// started (model/controls.js; the layer lab's session and walkthrough are built when its tab is
// first shown). The work itself is in page/: shared.js (what the parts
// share), render.js (the core's results to the charts), run.js (the session), walkthrough.js
// and controls.js.
(function (root) {
  'use strict';
  const P = root.AttnLabPage;

  async function loadWasmBytes() {
    if (root.ATTNLAB_WASM_BASE64) {
      const bin = atob(root.ATTNLAB_WASM_BASE64);
      const bytes = new Uint8Array(bin.length);
      for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
      return bytes;
    }
    const r = await fetch('gen/attnlab.wasm');
    if (!r.ok) throw new Error(`gen/attnlab.wasm: HTTP ${r.status}`);
    return new Uint8Array(await r.arrayBuffer());
  }

  async function main() {
    const parsed = root.AttnLabState.parseHash(location.hash);
    P.state = parsed.state;
    P.loadProblems = parsed.problems;
    if (!P.state.lang) P.state.lang = root.AttnLabI18n.pickLanguage(navigator.languages);
    P.applyLanguage();
    P.showMessage(P.t.loading, false);
    let wasm;
    try {
      wasm = await loadWasmBytes();
    } catch (e) {
      P.showMessage(P.t.errorPrefix + e.message, true);
      return;
    }
    // The model view starts its worker and draws the shipped model while the page's own core
    // (the layer lab's) starts here; the layer lab is built the first time its tab is shown
    // (at once, if the link opens it).
    const layerCore = root.AttnLab.load({ wasmBinary: wasm }).then((core) => {
      P.core = core;
      root.AttnLabControls.wire();
      root.AttnLabControls.syncControls();
    });
    try {
      await root.AttnLabModelControls.start(wasm, layerCore);
    } catch (e) {
      P.showMessage(P.t.errorPrefix + e.message, true);
    }
    try {
      await layerCore;
    } catch (e) {
      P.showMessage(P.t.errorPrefix + e.message, true);
    }
    if (!document.querySelector('#message.error')) P.showProblems(parsed.problems);
    document.body.dataset.readyMs = String(performance.now());
    document.body.dataset.ready = 'true';
  }

  main();
})(typeof globalThis !== 'undefined' ? globalThis : this);
