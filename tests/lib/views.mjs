// views.mjs — the page's three views opened as a learner opens them (the tab clicked, at the top
// of the page, at a desktop's or a phone's size), and what is then on the screen: which views
// take room, where the shown one starts, and anything that sticks out sideways. Used by
// tests/page-visual.test.mjs, which checks it, and tests/lib/screenshots.mjs, which draws docs/.
import { modelViewDrawn, showLayerLab, trainTabDrawn } from './browser.mjs';

export const VIEWS = ['model', 'layer', 'train'];
export const SIZES = { desktop: { width: 1440, height: 900 }, phone: { width: 390, height: 844 } };

// The model view's Experiments panel drawn for the link's prompt and heads switched off: its
// answer in, none asked since, the logit lens charted.
export function experimentsDrawn(page) {
  return page.waitForFunction(() => {
    const x = window.attnlab.experiments.state;
    return x.exp && x.inFlight === 0 && window.Chart.getChart(document.getElementById('chart-exp-lens'));
  });
}

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
// less than three quarters of the view wide stands in one; a grid's tracks), and in each column, top to bottom
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
    // a grid's tracks are columns too, the one no half-width panel stands in among them (a
    // panel alone in its row leaves the other track blank)
    const style = getComputedStyle(grid), tracks = [];
    if (style.display === 'grid' && panels.some((p) => p.width < wide)) {
      let x = grid.getBoundingClientRect().left + parseFloat(style.paddingLeft) + parseFloat(style.borderLeftWidth);
      for (const w of style.gridTemplateColumns.split(' ').map(parseFloat)) { tracks.push(Math.round(x)); x += w + (parseFloat(style.columnGap) || 0); }
    }
    const columns = [...new Set([...panels.filter((p) => p.width < wide).map((p) => Math.round(p.left)), ...tracks])].sort((a, b) => a - b);
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

// The labels heatmap.js drew on every heatmap of the shown view, each heatmap scrolled into the
// window so it is drawn at its size: what is wrong with them, one line each. A label's box must
// lie inside its canvas, and the band under the x labels (down to the axis title) be no deeper
// than `slack` px (Chart.js's padding and the labels' gaps take 11 or 12): the labels take the
// room they need, not the room of the longest token.
export async function heatmapLabelWrongs(page, view, slack = 16) {
  const ids = await page.evaluate((shown) => [...document.querySelectorAll(`#view-${shown} canvas`)]
    .filter((c) => c.id && c.getClientRects().length && window.Chart.getChart(c)?.options.plugins.matrixImage?.image)
    .map((c) => c.id), view);
  const bad = [];
  for (const id of ids) {
    await page.evaluate((canvasId) => document.getElementById(canvasId).scrollIntoView({ block: 'center' }), id);
    await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
    bad.push(...await page.evaluate(([canvasId, slack]) => {
      const canvas = document.getElementById(canvasId), chart = window.Chart.getChart(canvas), d = canvas.heatmapDrawn;
      if (!d) return [`#${canvasId}: no labels drawn`];
      const w = canvas.getBoundingClientRect().width, h = canvas.getBoundingClientRect().height;
      const out = [];
      for (const l of [...d.x, ...d.y]) {
        const [x, y, bw, bh] = l.box;
        if (x < -0.5 || y < -0.5 || x + bw > w + 0.5 || y + bh > h + 0.5) {
          out.push(`#${canvasId}: label ${JSON.stringify(l.text)} [${x.toFixed(1)}, ${y.toFixed(1)}, ${bw.toFixed(1)}×${bh.toFixed(1)}] leaves its canvas (${w.toFixed(0)}×${h.toFixed(0)})`);
        }
      }
      const x = chart.scales.x, title = x.options.title;
      const { toFont, toPadding } = window.Chart.helpers;
      const titleHeight = title.display ? toFont(title.font).lineHeight + toPadding(title.padding).height : 0;
      const lowest = Math.max(x.top, ...d.x.map((l) => l.box[1] + l.box[3]));
      const band = x.bottom - titleHeight - lowest;
      if (band > slack) out.push(`#${canvasId}: ${band.toFixed(0)} px blank under its x labels (${d.x.length} drawn, slant ${d.x[0]?.slant ?? '–'})`);
      return out;
    }, [id, slack]));
  }
  await page.evaluate(() => window.scrollTo(0, 0));
  return bad;
}
