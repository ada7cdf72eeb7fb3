// ui/page.js — what every part of the page shares: the layer lab's session as the charts show
// it (its worker's last frame) and the state it was built from, the strings of the page's language; and the two places the
// page speaks outside its charts: the message line and the URL hash. The other page scripts
// (layer/, model/, train/, then main.js) read and set these fields and
// keep no copy of their own.
import { stringsOf, describeProblems } from './i18n.js';
import * as State from './state.js';
  const $ = (id) => document.getElementById(id);

  const page = {
    session: null,   // the layer lab's session as its charts show it (layer/run.js: its worker's frame)
    state: null,     // the page's state (state.js), which the URL hash holds
    lastGood: null,  // the last state a session was built from
    t: stringsOf('en'), // the strings of the page's language
    playTimer: null, // set while Play runs
    sessionSerial: 0, // counts the sessions built: what the charts' cached pictures were drawn from
    $,
  };

  // ---------------------------------------------------------------- charts
  // Draws config on the canvas canvasId, keeping the chart in charts (canvas id -> Chart): the
  // same type is updated in place (no animation), another type replaces it. A heatmap whose
  // layout is unchanged (config.layoutKey, heatmap.js), its cells repainted already, is redrawn
  // as it stands, without Chart.js's update and layout.
  page.drawChart = (charts, canvasId, config) => {
    const existing = charts[canvasId];
    const layoutKey = config.layoutKey || null;
    if (existing && existing.config.type === config.type) {
      if (layoutKey !== null && existing.$layoutKey === layoutKey) {
        existing.draw();
        return existing;
      }
      existing.data = config.data;
      existing.options = config.options;
      existing.update('none');
      existing.$layoutKey = layoutKey;
      return existing;
    }
    if (existing) existing.destroy();
    charts[canvasId] = new window.Chart($(canvasId), config);
    charts[canvasId].$layoutKey = layoutKey;
    return charts[canvasId];
  };

  // ---------------------------------------------------------------- files
  // Saves {name, url} (a data: or blob: URL) as a download, as a click on a link does.
  page.download = ({ name, url }) => {
    const a = document.createElement('a');
    a.href = url;
    a.download = name;
    document.body.appendChild(a);
    a.click();
    a.remove();
  };

  // ---------------------------------------------------------------- the message line
  page.showMessage = (text, isError) => {
    const box = $('message');
    box.textContent = text || '';
    box.hidden = !text;
    box.className = isError ? 'message error' : 'message';
  };
  // The corrections made to a state read from the hash or the controls (none: no message).
  page.showProblems = (problems) => page.showMessage(problems.length ? describeProblems(page.t, problems) : '', false);

  // ---------------------------------------------------------------- the language
  page.applyLanguage = () => {
    page.t = stringsOf(page.state.lang);
    document.documentElement.lang = page.state.lang === 'zh' ? 'zh-CN' : 'en';
    for (const el of document.querySelectorAll('[data-i18n]')) el.textContent = page.t[el.dataset.i18n];
    $('lang').value = page.state.lang;
  };
  // The learner switched the language: the page's words, then each view's (what it redraws
  // in the new language, given by followLanguage in the order the views started).
  const languageFollowers = [];
  page.followLanguage = (redraw) => { languageFollowers.push(redraw); };
  page.switchLanguage = (lang) => {
    page.state.lang = lang === 'zh' ? 'zh' : 'en';
    page.applyLanguage();
    for (const redraw of languageFollowers) redraw();
    page.writeHash();
  };

  // ---------------------------------------------------------------- bringing a panel into view
  // What covers the bottom of the window, in px (the tour's card while it is open): nothing is
  // brought into view under it.
  page.coveredBottom = 0;
  // The scroll position that shows panel from its top, a margin under the window's top; where
  // the panel is taller than the room left above what covers the bottom, spot (an element of
  // the panel, the thing to look at) is brought up until all of it shows.
  page.viewTop = (panel, spot = null) => {
    const margin = 8;
    const bottom = innerHeight - page.coveredBottom - margin; // the lowest line that shows
    const p = panel.getBoundingClientRect();
    let y = scrollY + p.top - margin;
    if (spot) {
      const s = spot.getBoundingClientRect();
      const spotBottom = scrollY + s.bottom - bottom;
      if (spotBottom > y) y = Math.min(spotBottom, scrollY + s.top - margin);
    }
    return Math.max(0, Math.round(y));
  };
  page.bringIntoView = (panel, spot = null) => {
    const y = page.viewTop(panel, spot);
    if (Math.abs(y - scrollY) > 1) window.scrollTo(0, y);
  };

  // ---------------------------------------------------------------- the URL hash
  // The URL follows the state, written once things settle: history.replaceState costs
  // milliseconds, too much to pay on every step of Play.
  let hashTimer = null;
  page.writeHash = () => {
    clearTimeout(hashTimer);
    hashTimer = setTimeout(() => {
      const hash = State.toHash(page.state);
      if (location.hash !== hash) history.replaceState(null, '', hash);
    }, 150);
  };

export { page };
