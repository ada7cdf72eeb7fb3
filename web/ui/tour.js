// ui/tour.js — "Start here": a guided path across the three views. Each step opens its view
// (the tab clicked, as a learner would), brings its panel into view above the tour's card,
// outlines the panel and the thing in it to look at, and says in a line or two what to see:
// tokens, one sampler step, a previous-token head, no induction head, one trained and opened,
// its diagonal, then the layer lab's mask, RoPE, GQA and KV cache. Back / Next / Close, Esc
// closes; the card is not modal: the page is used while it is open.
import { page } from './page.js';
  const $ = page.$;

  // key: its strings (t.tourSteps[key]: title, text); tab: the view; panel: the element
  // brought into view and outlined; spot: a selector in it, the thing to look at (the first
  // match); role: the head role chosen in the model view's roles panel for the step.
  const STEPS = [
    { key: 'tokens', tab: 'model', panel: 'prompt-panel', spot: '#tokens' },
    { key: 'sampler', tab: 'model', panel: 'gen-panel', spot: '#chart-next' },
    { key: 'previous', tab: 'model', panel: 'roles-panel', spot: '.role-teach', role: 'previous' },
    { key: 'induction', tab: 'model', panel: 'roles-panel', spot: '.role-teach', role: 'induction' },
    { key: 'train', tab: 'train', panel: 'train-panel', spot: '#train-panel .stepper' },
    { key: 'jump', tab: 'train', panel: 'train-roles-panel', spot: '#chart-roles-train' },
    { key: 'open', tab: 'train', panel: 'train-out-panel', spot: '#train-open-model, #btn-train-open' },
    { key: 'diagonal', tab: 'model', panel: 'head-panel', spot: '#chart-head', role: 'induction' },
    { key: 'mask', tab: 'layer', panel: 'mask-panel', spot: '#chart-mask' },
    { key: 'rope', tab: 'layer', panel: 'rope-panel', spot: '#chart-rope' },
    { key: 'gqa', tab: 'layer', panel: 'attn-panel', spot: '#gqa-map' },
    { key: 'kv', tab: 'layer', panel: 'kv-panel', spot: '#chart-kv' },
  ];
  // Frames the panel must keep its place before the step counts as settled (charts drawn after
  // a tab opens move what is below them), and the most frames spent waiting for that.
  const STILL_FRAMES = 12, MAX_FRAMES = 360;

  const tour = { at: -1, serial: 0, userMoved: false };
  const card = () => $('tour');
  const isOpen = () => tour.at >= 0;

  // The step's panel and the thing to look at in it.
  function targets(step) {
    const panel = $(step.panel);
    return { panel, spot: panel.querySelector(step.spot) || panel };
  }

  function render() {
    if (!isOpen()) return;
    const { t } = page;
    const [title, text] = t.tourSteps[STEPS[tour.at].key];
    $('tour-count').textContent = t.tourCount(tour.at + 1, STEPS.length);
    $('tour-title').textContent = title;
    $('tour-text').textContent = text;
    $('tour-back').disabled = tour.at === 0;
    $('tour-next').textContent = tour.at === STEPS.length - 1 ? t.tourFinish : t.tourNext;
    // What the card covers is kept free below the page's end too (the last panel can come up).
    page.coveredBottom = innerHeight - card().getBoundingClientRect().top;
    document.documentElement.style.setProperty('--tour-room', `${Math.ceil(page.coveredBottom)}px`);
  }

  // The head role of the model view, chosen as the learner would (its change event).
  function chooseRole(role) {
    const select = $('role-select');
    if (select.value === role || ![...select.options].some((o) => o.value === role)) return;
    select.value = role;
    select.dispatchEvent(new Event('change'));
  }

  function clearMarks() {
    for (const e of document.querySelectorAll('.tour-target, .tour-spot')) e.classList.remove('tour-target', 'tour-spot');
  }

  // Brings the step's panel into view, again on each frame while what is above it moves (a
  // view just opened draws its charts), until it has kept its place or the learner scrolls.
  function settle(step, serial) {
    let still = 0, frames = 0, last = NaN;
    const frame = () => {
      if (serial !== tour.serial) return;
      const { panel, spot } = targets(step);
      if (!tour.userMoved) page.bringIntoView(panel, spot);
      const y = page.viewTop(panel, spot);
      still = Math.abs(y - last) <= 1 ? still + 1 : 0;
      last = y;
      if (still >= STILL_FRAMES || tour.userMoved || ++frames > MAX_FRAMES) card().dataset.settled = 'true';
      else requestAnimationFrame(frame);
    };
    frame();
  }

  function go(at) {
    tour.at = Math.max(0, Math.min(STEPS.length - 1, at));
    tour.serial++;
    tour.userMoved = false;
    const step = STEPS[tour.at];
    card().dataset.step = String(tour.at);
    card().dataset.settled = 'false';
    if ($(`view-${step.tab}`).hidden) $(`tab-${step.tab}`).click();
    if (step.role) chooseRole(step.role);
    render();
    clearMarks();
    const { panel, spot } = targets(step);
    panel.classList.add('tour-target');
    if (spot !== panel) spot.classList.add('tour-spot');
    settle(step, tour.serial);
  }

  function open() {
    card().hidden = false;
    document.body.classList.add('touring');
    go(0);
    $('tour-next').focus({ preventScroll: true });
  }

  function close() {
    if (!isOpen()) return;
    tour.at = -1;
    tour.serial++;
    card().hidden = true;
    delete card().dataset.step;
    document.body.classList.remove('touring');
    clearMarks();
    page.coveredBottom = 0;
    $('tour-start').focus({ preventScroll: true });
  }

  function next() {
    if (tour.at === STEPS.length - 1) close();
    else go(tour.at + 1);
  }

  function back() {
    go(tour.at - 1);
    if ($('tour-back').disabled) $('tour-next').focus({ preventScroll: true });
  }

  function wire() {
    $('tour-start').addEventListener('click', open);
    $('tour-next').addEventListener('click', next);
    $('tour-back').addEventListener('click', back);
    $('tour-close').addEventListener('click', close);
    // Keys pressed in the card are the card's: the views' own keys (→ steps the layer lab,
    // space plays) do not also act on them.
    card().addEventListener('keydown', (e) => {
      if (e.key === 'Escape') { e.preventDefault(); close(); }
      e.stopPropagation();
    });
    document.addEventListener('keydown', (e) => { if (e.key === 'Escape' && isOpen()) close(); });
    // A learner who scrolls while a step settles keeps the place they scrolled to.
    for (const type of ['wheel', 'touchmove']) window.addEventListener(type, () => { tour.userMoved = true; }, { passive: true });
    // The card's text in the language chosen, once the page has switched its strings.
    $('lang').addEventListener('change', () => setTimeout(render, 0));
    window.addEventListener('resize', () => {
      if (!isOpen()) return;
      render();
      settle(STEPS[tour.at], ++tour.serial);
    });
    // The tour starts once the page is ready (the views' tabs wired, the model drawn).
    const ready = () => { if (document.body.dataset.ready === 'true') $('tour-start').disabled = false; };
    new MutationObserver(ready).observe(document.body, { attributes: true, attributeFilter: ['data-ready'] });
    ready();
  }

  wire();

export { open, close, next, back, STEPS };
