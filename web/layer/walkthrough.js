// layer/walkthrough.js — the walkthrough: every example of the tutorial's chapters, one at a time,
// as the core gives them (core.demoSections, run in the layer view's worker): its title, its
// code in the script (chapters 02 and 03; the later chapters' code is the tutorial's and not
// shipped, so the chapter and its script are named instead), what it prints for the page's
// seed and language, and the panel of the page it belongs to (chosen by the core), outlined and
// brought into view with a note on what to notice in it, beside the chart that draws the
// example where the panel has one.
// The chapters are the core's demos (its al_demo enum, in order); the markup says where each
// goes: a panel names the al_demo_panel it is (data-demo-panel), a chart the examples it draws
// (data-demo-example="demo:number"). A chapter added to the core is added here by its row in
// SCRIPTS, its panel's markup and its notes (i18n.js).
import { STRINGS } from '../ui/i18n.js';
import { page } from '../ui/page.js';
import * as Run from './run.js';
  const $ = page.$;

  // The tutorial script each demo reproduces; its chapter is the number it starts with.
  const SCRIPTS = {
    basic: '02-basic-components-demo.py',
    attention: '03-attention-demo.py',
    mlp_moe: '04-mlp-moe-demo.py',
    block: '05-transformer-block-demo.py',
    generation: '10-generation-demo.py',
  };
  const chapterOf = (demo) => SCRIPTS[demo].slice(0, 2);
  // The command line's name of a demo (the ABI's mlp_moe is `attnlab demo mlp-moe`).
  const cliName = (demo) => demo.replace(/_/g, '-');

  // The element of the layer view that is the panel the core names ('text': an example no
  // chart draws, the embedding or RMSNorm: the walkthrough's own listing is its panel).
  const panelOf = (name) => document.querySelector(`#layer-main [data-demo-panel="${name}"]`);
  // The chart that draws an example, if its panel has one.
  const figureOf = (step) => document.querySelector(`#layer-main [data-demo-example="${step.demo}:${step.n}"]`);

  let steps = []; // [{demo, title, code, numbers, panel, n (its number in the script), of}]
  let held = null; // the worker's sections for one seed, in every language: {seed, en, zh}

  // Builds the steps from the core's sections for the page's seed (asked of the layer view's
  // worker once per seed, in every language, so a language switch needs no answer) in the
  // page's language; the closing banners (panel 'none') are not steps. Also names each
  // chapter's script where the page shows that chapter's charts.
  function build() {
    const { state, t } = page;
    if (held && held.seed === state.seed) return fill();
    return Run.sections(state.seed, Object.keys(STRINGS)).then((answer) => {
      if (!answer) return; // a newer seed was asked for
      held = answer;
      fill();
    }, (e) => page.showMessage(t.errorPrefix + e.message, true));
  }

  function fill() {
    const { state, t } = page;
    try {
      steps = [];
      for (const { demo, sections } of held[state.lang]) {
        if (!SCRIPTS[demo]) throw new Error(`the walkthrough has no script for the demo '${demo}'`);
        const own = sections.filter((s) => s.panel !== 'none');
        for (const [i, s] of own.entries()) {
          if (!panelOf(s.panel)) throw new Error(`the walkthrough has no panel '${s.panel}'`);
          steps.push({ demo, ...s, n: i + 1, of: own.length });
        }
      }
    } catch (e) {
      page.showMessage(t.errorPrefix + e.message, true);
      return;
    }
    for (const el of document.querySelectorAll('[data-chapter]')) el.textContent = t.chapter(chapterOf(el.dataset.chapter), SCRIPTS[el.dataset.chapter]);
    if (state.walk >= steps.length) state.walk = 0;
    show();
  }

  // The example's title by chapter and number ("04 · 2/7 · …").
  const titleOf = (step) => `${chapterOf(step.demo)} · ${step.n}/${step.of} · ${step.title}`;

  // Shows the current example; scroll: its panel (and its chart) brought into view (a move,
  // not a redraw).
  function show(scroll = false) {
    const { state, t } = page;
    const step = steps[state.walk];
    if (!step) return;
    const title = titleOf(step);
    const note = (t.walkNotes[step.demo] || [])[step.n - 1] || '';
    const script = SCRIPTS[step.demo];
    $('walk-chapter').textContent = t.chapter(chapterOf(step.demo), script);
    $('walk-title').textContent = title;
    $('walk-note').textContent = note;
    $('walk-command').textContent = `attnlab demo ${cliName(step.demo)} --seed ${state.seed} --lang ${state.lang}`;
    // The code where it is shipped; else the script named, for the reader to open beside it.
    const shipped = step.code !== '';
    $('walk-code').textContent = step.code;
    $('walk-code').hidden = !shipped;
    $('walk-code-title').hidden = !shipped;
    $('walk-no-code').hidden = shipped;
    $('walk-no-code').textContent = shipped ? '' : t.walkNoCode(script);
    $('walk-text').textContent = step.numbers;
    const panel = panelOf(step.panel);
    const own = step.panel === 'text';
    const figure = own ? null : figureOf(step);
    for (const p of document.querySelectorAll('#layer-main .panel')) p.classList.toggle('highlight', !own && p === panel);
    // The note also stands in the outlined panel, with the way on, where the eye is: above the
    // example's chart, or at the top of the panel.
    const callout = $('walk-callout');
    callout.hidden = own;
    if (!own) {
      $('walk-callout-title').textContent = title;
      $('walk-callout-note').textContent = note;
      $('walk-callout-prev').disabled = state.walk === 0;
      $('walk-callout-next').disabled = state.walk === steps.length - 1;
      // (the chart's own box in the panel: a grid of two charts is not broken up; at the top,
      // under the panel's heading and the line naming its chapter)
      let before = figure;
      if (!before) for (before = panel.querySelector('h2').nextElementSibling; before.matches('.chapter, #walk-callout');) before = before.nextElementSibling;
      while (before.parentElement !== panel) before = before.parentElement;
      if (before.previousElementSibling !== callout) before.before(callout);
      $('walk-callout-code').textContent = shipped ? t.walkToCode : t.walkToNumbers;
    }
    $('walk-prev').disabled = state.walk === 0;
    $('walk-next').disabled = state.walk === steps.length - 1;
    if (scroll) page.bringIntoView(panel, own ? null : figure || callout);
  }

  // The previous (-1) or next (+1) example, its panel brought into view. A button of the note
  // moves with the note: the keyboard's focus stays on it (or on its twin, once it is disabled).
  function move(by, button = null) {
    const { state } = page;
    state.walk = Math.min(steps.length - 1, Math.max(0, state.walk + by));
    show(true);
    page.writeHash();
    if (button && $('walk-callout').contains(button)) {
      const twin = button.id === 'walk-callout-next' ? 'walk-callout-prev' : 'walk-callout-next';
      const target = $('walk-callout').hidden ? $(button.id.replace('-callout', '')) : button.disabled ? $(twin) : button;
      target.focus({ preventScroll: true });
    }
  }

  // The listing of the example shown, from its panel's note.
  function toCode() {
    page.bringIntoView($('walk-panel'));
    $('walk-text').focus({ preventScroll: true });
    if (!$('walk-code').hidden) $('walk-code').focus({ preventScroll: true });
  }

export { build, move, toCode };
