// views.mjs — the page's three views opened as a learner opens them (the tab clicked, at the top
// of the page, at a desktop's or a phone's size), and what is then on the screen: which views
// take room, where the shown one starts, and anything that sticks out sideways. Used by
// tests/page-visual.test.mjs, which checks it, and tests/lib/screenshots.mjs, which draws docs/.
import { modelViewDrawn, showLayerLab, trainTabDrawn } from './browser.mjs';

export const VIEWS = ['model', 'layer', 'train'];
export const SIZES = { desktop: { width: 1440, height: 900 }, phone: { width: 390, height: 844 } };

// Clicks the tab of view at the top of the page and waits for the view's charts: the model's
// prompt and heads; the layer lab's attention and checks; the Train tab's first evaluation
// (a few steps run, then paused: trained is true once that was done on this page).
export async function openView(page, view, trained = false) {
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.click(`#tab-${view}`);
  if (view === 'model') await modelViewDrawn(page);
  if (view === 'layer') await showLayerLab(page);
  if (view === 'train' && !trained) await trainTabDrawn(page);
  // every chart has taken its box's size (Chart.js resizes on the next frame)
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
  await page.evaluate(() => window.scrollTo(0, 0));
}

// What is on the screen now, at scroll 0:
//   views: for each view, its computed display and visibility and its box;
//   gap: the shown view's top less the tab bar's bottom;
//   scrollWidth, innerWidth: the document's width against the window's;
//   beyond: elements of the shown view whose right edge (where an ancestor's overflow does not
//     clip it) passes the window's right edge, named by tag, id, class and text;
//   outside: elements sticking out of their panel by more than a pixel, named the same way;
//   unhidden: elements of the shown view marked hidden that still take room.
export function onScreen(page, view) {
  return page.evaluate((shown) => {
    const name = (e) => {
      const text = (e.textContent || '').trim().replace(/\s+/g, ' ').slice(0, 40);
      const cls = typeof e.className === 'string' && e.className ? '.' + e.className.trim().split(/\s+/).join('.') : '';
      return `${e.tagName.toLowerCase()}${e.id ? '#' + e.id : ''}${cls}${text ? ` "${text}"` : ''}`;
    };
    const box = (e) => { const r = e.getBoundingClientRect(); return { top: r.top, left: r.left, width: r.width, height: r.height, right: r.right }; };
    // The part of e's box that is drawn: its own box cut by every ancestor up to stop that clips.
    const drawn = (e, stop) => {
      const r = e.getBoundingClientRect();
      let left = r.left, right = r.right;
      for (let a = e.parentElement; a && a !== stop; a = a.parentElement) {
        if (getComputedStyle(a).overflowX === 'visible') continue;
        const c = a.getBoundingClientRect();
        left = Math.max(left, c.left);
        right = Math.min(right, c.right);
      }
      return { left, right, width: r.width, height: r.height };
    };
    const visible = (e) => { const s = getComputedStyle(e); return s.display !== 'none' && s.visibility !== 'hidden'; };
    const views = {};
    for (const v of ['model', 'layer', 'train']) {
      const e = document.getElementById(`view-${v}`);
      const s = getComputedStyle(e);
      views[v] = { display: s.display, visibility: s.visibility, ...box(e) };
    }
    const root = document.getElementById(`view-${shown}`);
    const tabs = document.querySelector('.tabs').getBoundingClientRect();
    const beyond = [], outside = [], unhidden = [];
    for (const e of root.querySelectorAll('*')) {
      if (e.hidden && e.getClientRects().length > 0) unhidden.push(`${name(e)} (display ${getComputedStyle(e).display})`);
      if (!visible(e)) continue;
      const d = drawn(e, root.parentElement);
      if (d.width === 0 || d.height === 0 || d.right <= d.left) continue;
      if (d.right > innerWidth + 0.5) beyond.push(`${name(e)} right ${Math.round(d.right)}`);
      const panel = e.parentElement.closest('.panel, #controls');
      if (!panel) continue;
      const p = panel.getBoundingClientRect();
      const within = drawn(e, panel);
      if (within.right > p.right + 1 || within.left < p.left - 1) {
        outside.push(`${name(e)} [${Math.round(within.left)}, ${Math.round(within.right)}] in #${panel.id} [${Math.round(p.left)}, ${Math.round(p.right)}]`);
      }
    }
    return {
      views, gap: root.getBoundingClientRect().top - tabs.bottom, scrollY,
      scrollWidth: document.scrollingElement.scrollWidth, innerWidth, innerHeight, beyond, outside, unhidden,
    };
  }, view);
}

// The blank page beside the panels of the shown view, at scroll 0: the view's columns (a panel
// less than three quarters of the view wide stands in one), and in each column, top to bottom
// from the first panel to the bottom of the lowest, the stretches no panel covers, less the
// grid's gap. A short panel beside a taller one, or a column ending early, leaves such a
// stretch. [{column (its left edge), top, height, beside (the ids of the panels beside it)}].
export function blankBesidePanels(page, view) {
  return page.evaluate((shown) => {
    const grid = shown === 'layer' ? document.getElementById('layer-main') : document.getElementById(`view-${shown}`);
    const gap = parseFloat(getComputedStyle(grid).rowGap) || 16;
    const wide = grid.getBoundingClientRect().width * 0.75;
    const panels = [...grid.children].filter((e) => e.classList.contains('panel') && e.getClientRects().length > 0)
      .map((e) => { const r = e.getBoundingClientRect(); return { id: e.id, top: r.top + scrollY, bottom: r.bottom + scrollY, left: r.left, right: r.right, width: r.width }; });
    const columns = [...new Set(panels.filter((p) => p.width < wide).map((p) => Math.round(p.left)))].sort((a, b) => a - b);
    const first = Math.min(...panels.map((p) => p.top)), lowest = Math.max(...panels.map((p) => p.bottom));
    const blanks = [];
    for (const left of columns) {
      const inColumn = panels.filter((p) => p.left <= left + 1 && p.right > left + 1).sort((a, b) => a.top - b.top);
      let y = first;
      for (const p of [...inColumn, { top: lowest + gap, bottom: lowest }]) {
        const height = p.top - y - gap;
        if (height > 1) {
          const beside = panels.filter((q) => !inColumn.includes(q) && q.top < p.top - gap && q.bottom > y).map((q) => q.id);
          blanks.push({ column: left, top: Math.round(y), height: Math.round(height), beside });
        }
        y = Math.max(y, p.bottom);
      }
    }
    return blanks;
  }, view);
}
