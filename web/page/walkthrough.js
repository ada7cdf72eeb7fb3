// page/walkthrough.js — the walkthrough: every example of both tutorial scripts, one at a time,
// as the core gives them (core.demoSections): its title, its code in the script and what it
// prints for the page's seed and language, and the panel of the page it belongs to (chosen by
// the core), outlined and brought into view with a note on what to notice in it.
(function (root) {
  'use strict';
  const P = root.AttnLabPage;
  const $ = P.$;

  // The element of each panel the core names (al_demo_panel); 'text' is an example no chart
  // draws (the embedding, RMSNorm): the walkthrough's own listing is its panel, none outlined.
  const PANEL_IDS = {
    mask: 'mask-panel', rope: 'rope-panel', attn: 'attn-panel', kv: 'kv-panel', checks: 'verify-panel', text: 'walk-panel',
  };
  // The tutorial script each demo reproduces, by the number it starts with
  // (02-basic-components-demo.py, 03-attention-demo.py).
  const SCRIPT = { basic: '02', attention: '03' };
  let steps = []; // [{demo, title, code, numbers, panel, n (its number in the script), of}]

  // Asks the core for both demos' sections in the page's language and seed; the closing
  // banners (panel 'none') are not steps.
  function build() {
    const { core, state, t } = P;
    try {
      steps = [];
      for (const demo of ['basic', 'attention']) {
        const own = core.demoSections(demo, state.lang, state.seed).filter((s) => s.panel !== 'none');
        for (const [i, s] of own.entries()) {
          if (!(s.panel in PANEL_IDS)) throw new Error(`the walkthrough has no panel '${s.panel}'`);
          steps.push({ demo, ...s, n: i + 1, of: own.length });
        }
      }
    } catch (e) {
      P.showMessage(t.errorPrefix + e.message, true);
      return;
    }
    if (state.walk >= steps.length) state.walk = 0;
    show();
  }

  // The example's title by script and number ("03 · 4/7 · …").
  const titleOf = (step) => `${SCRIPT[step.demo]} · ${step.n}/${step.of} · ${step.title}`;

  // Shows the current example; scroll: its panel is brought into view (a move, not a redraw).
  function show(scroll = false) {
    const { state, t } = P;
    const step = steps[state.walk];
    if (!step) return;
    const title = titleOf(step);
    const note = (t.walkNotes[step.demo] || [])[step.n - 1] || '';
    $('walk-title').textContent = title;
    $('walk-note').textContent = note;
    $('walk-command').textContent = `attnlab demo ${step.demo} --seed ${state.seed} --lang ${state.lang}`;
    $('walk-code').textContent = step.code;
    $('walk-text').textContent = step.numbers;
    const panel = $(PANEL_IDS[step.panel]);
    const own = step.panel === 'text';
    for (const p of document.querySelectorAll('#layer-main .panel')) p.classList.toggle('highlight', !own && p === panel);
    // The note also stands at the top of the outlined panel, with the way on, where the eye is.
    const callout = $('walk-callout');
    callout.hidden = own;
    if (!own) {
      $('walk-callout-title').textContent = title;
      $('walk-callout-note').textContent = note;
      $('walk-callout-prev').disabled = state.walk === 0;
      $('walk-callout-next').disabled = state.walk === steps.length - 1;
      const heading = panel.querySelector('h2');
      if (heading.nextElementSibling !== callout) heading.after(callout);
    }
    $('walk-prev').disabled = state.walk === 0;
    $('walk-next').disabled = state.walk === steps.length - 1;
    if (scroll) P.bringIntoView(panel, own ? null : callout);
  }

  // The previous (-1) or next (+1) example, its panel brought into view. A button of the note
  // moves with the note: the keyboard's focus stays on it (or on its twin, once it is disabled).
  function move(by, button = null) {
    const { state } = P;
    state.walk = Math.min(steps.length - 1, Math.max(0, state.walk + by));
    show(true);
    P.writeHash();
    if (button && $('walk-callout').contains(button)) {
      const twin = button.id === 'walk-callout-next' ? 'walk-callout-prev' : 'walk-callout-next';
      const target = $('walk-callout').hidden ? $(button.id.replace('-callout', '')) : button.disabled ? $(twin) : button;
      target.focus({ preventScroll: true });
    }
  }

  // The listing of the example shown, from its panel's note.
  function toCode() {
    P.bringIntoView($('walk-panel'));
    $('walk-code').focus({ preventScroll: true });
  }

  root.AttnLabWalkthrough = { build, move, toCode };
})(typeof globalThis !== 'undefined' ? globalThis : this);
