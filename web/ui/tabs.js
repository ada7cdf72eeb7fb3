// ui/tabs.js — the three views' tabs (a WAI-ARIA tab list): one view shown and its tab selected
// and focusable, the left and right arrows moving between tabs; the state and the hash follow.
// What a view does when it is shown is its own (whenShown), so a view shows another without
// importing it.
import { page } from './page.js';
const TABS = ['model', 'layer', 'train'];
const $ = (id) => document.getElementById(id);
const shownBy = {}; // tab → what its view does each time it is shown

// Shows view `tab` and hides the others.
function selectTab(tab) {
  for (const name of TABS) {
    $(`view-${name}`).hidden = name !== tab;
    $(`tab-${name}`).setAttribute('aria-selected', String(name === tab));
    $(`tab-${name}`).tabIndex = name === tab ? 0 : -1;
  }
}

// fn() runs each time view `tab` is shown (its first drawing, the charts it held back while hidden).
function whenShown(tab, fn) {
  if (!TABS.includes(tab)) throw new RangeError(`tabs: no view '${tab}' (${TABS.join(', ')})`);
  shownBy[tab] = fn;
}

// Shows view `tab`, then lets it do what it does when shown.
function showTab(tab) {
  page.state.tab = tab;
  selectTab(tab);
  if (shownBy[tab]) shownBy[tab]();
  page.writeHash();
}

// A click or an arrow key on a tab shows its view, the arrows then focus it.
function wireTabs() {
  TABS.forEach((name, i) => {
    $(`tab-${name}`).addEventListener('click', () => showTab(name));
    $(`tab-${name}`).addEventListener('keydown', (e) => {
      if (e.key !== 'ArrowLeft' && e.key !== 'ArrowRight') return;
      e.preventDefault();
      const next = TABS[(i + (e.key === 'ArrowRight' ? 1 : TABS.length - 1)) % TABS.length];
      showTab(next);
      $(`tab-${next}`).focus();
    });
  });
}

export { TABS, selectTab, whenShown, showTab, wireTabs };
