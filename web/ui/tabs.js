// ui/tabs.js — the three views' tabs (a WAI-ARIA tab list): one view shown and its tab selected
// and focusable, the left and right arrows moving between tabs. What a view does when it is
// shown is the caller's (model/controls.js's showTab).
const TABS = ['model', 'layer', 'train'];
const $ = (id) => document.getElementById(id);

// Shows view `tab` and hides the others.
function selectTab(tab) {
  for (const name of TABS) {
    $(`view-${name}`).hidden = name !== tab;
    $(`tab-${name}`).setAttribute('aria-selected', String(name === tab));
    $(`tab-${name}`).tabIndex = name === tab ? 0 : -1;
  }
}

// A click or an arrow key on a tab calls show(name) (which selects it), the arrows then focus it.
function wireTabs(show) {
  TABS.forEach((name, i) => {
    $(`tab-${name}`).addEventListener('click', () => show(name));
    $(`tab-${name}`).addEventListener('keydown', (e) => {
      if (e.key !== 'ArrowLeft' && e.key !== 'ArrowRight') return;
      e.preventDefault();
      const next = TABS[(i + (e.key === 'ArrowRight' ? 1 : TABS.length - 1)) % TABS.length];
      show(next);
      $(`tab-${next}`).focus();
    });
  });
}

export { TABS, selectTab, wireTabs };
