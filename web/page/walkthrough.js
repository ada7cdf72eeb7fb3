// page/walkthrough.js — the walkthrough: every example of both tutorial scripts, one at a time,
// as the core gives them (core.demoSections): its title, its code in the script and what it
// prints for the page's seed and language, and the panel of the page it belongs to (chosen by
// the core), outlined.
(function (root) {
  'use strict';
  const P = root.AttnLabPage;
  const $ = P.$;

  // The element of each panel the core names (al_demo_panel).
  const PANEL_IDS = { mask: 'mask-panel', rope: 'rope-panel', attn: 'attn-panel', kv: 'kv-panel', checks: 'verify-panel' };
  let steps = []; // [{demo, title, code, numbers, panel}]

  // Asks the core for both demos' sections in the page's language and seed; the closing
  // banners (panel 'none') are not steps.
  function build() {
    const { core, state, t } = P;
    try {
      steps = [];
      for (const demo of ['basic', 'attention']) {
        for (const s of core.demoSections(demo, state.lang, state.seed)) {
          if (s.panel === 'none') continue;
          if (!(s.panel in PANEL_IDS)) throw new Error(`the walkthrough has no panel '${s.panel}'`);
          steps.push({ demo, ...s });
        }
      }
    } catch (e) {
      P.showMessage(t.errorPrefix + e.message, true);
      return;
    }
    if (state.walk >= steps.length) state.walk = 0;
    show();
  }

  function show() {
    const { state } = P;
    const step = steps[state.walk];
    if (!step) return;
    $('walk-title').textContent = `${state.walk + 1}/${steps.length} · ${step.title}`;
    $('walk-command').textContent = `attnlab demo ${step.demo} --seed ${state.seed} --lang ${state.lang}`;
    $('walk-code').textContent = step.code;
    $('walk-text').textContent = step.numbers;
    for (const p of document.querySelectorAll('.panel')) p.classList.toggle('highlight', p.id === PANEL_IDS[step.panel]);
    $('walk-prev').disabled = state.walk === 0;
    $('walk-next').disabled = state.walk === steps.length - 1;
  }

  // The previous (-1) or next (+1) example.
  function move(by) {
    const { state } = P;
    state.walk = Math.min(steps.length - 1, Math.max(0, state.walk + by));
    show();
    P.writeHash();
  }

  root.AttnLabWalkthrough = { build, move };
})(typeof globalThis !== 'undefined' ? globalThis : this);
