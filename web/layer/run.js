// layer/run.js — the session the page shows: built from the state (head_dim and KV heads held to
// what the core allows), run to the state's token, stepped one token at a time, played and
// paused. A configuration the core refuses brings back the last good state with the core's
// message.
import { page } from '../ui/page.js';
import * as State from '../ui/state.js';
import { syncControls } from './inputs.js';
import * as Render from './render.js';

  function sessionConfig(s) {
    return {
      hidden: s.hidden, heads: s.heads, kvHeads: s.kv, headDim: s.hd, ropeBase: s.base,
      qkNorm: !!s.qk, seed: s.seed, promptLen: s.prompt, decodeSteps: s.steps,
    };
  }

  // Builds the session for page.state (head_dim and KV heads held to what the core allows, by
  // ui/state.js coreRelations) and runs it to state.at tokens. On a refused configuration,
  // returns to the last good state (or the defaults) and shows the core's message.
  function rebuild(problems = [], refusal = '') {
    const { state, t } = page;
    State.coreRelations(state, problems, page.core);
    stop();
    let next;
    try {
      next = page.core.createSession(sessionConfig(state));
      const target = state.at === -1 ? state.prompt : state.at; // 0: before the prefill
      if (target > 0) next.runTo(target);
    } catch (e) {
      if (next) next.free();
      const fallback = page.lastGood || { ...State.defaults(), lang: state.lang };
      if (JSON.stringify(fallback) === JSON.stringify(state)) {
        page.showMessage(t.errorPrefix + e.message, true); // nothing left to fall back to
        return;
      }
      page.state = { ...fallback };
      return rebuild([], t.errorPrefix + e.message);
    }
    if (page.session) page.session.free();
    page.session = next;
    page.sessionSerial = (page.sessionSerial || 0) + 1; // names this session in the charts' cache keys
    page.lastGood = { ...state };
    if (refusal) page.showMessage(refusal, true);
    else page.showProblems(problems);
    syncControls();
    Render.render();
  }

  // One decode step, then the charts.
  function step() {
    const { session, t } = page;
    if (session.length >= session.total) return stop();
    try {
      session.step();
    } catch (e) {
      page.showMessage(t.errorPrefix + e.message, true);
      return stop();
    }
    Render.render();
    if (session.length >= session.total) stop();
  }

  // Play: a step every 400 ms, the next one scheduled only after this one has been drawn, so
  // steps never queue up behind a slow one and Pause takes effect at once. While a step runs or
  // waits for its frame, playTimer is DRAWING (still playing, no timer to clear).
  const DRAWING = -1;
  function play() {
    if (page.playTimer) return stop();
    const schedule = () => {
      if (page.playTimer !== DRAWING) return; // paused meanwhile
      page.playTimer = setTimeout(() => {
        page.playTimer = DRAWING;
        step();
        requestAnimationFrame(schedule);
      }, 400);
    };
    page.playTimer = DRAWING;
    schedule();
    Render.renderStatus();
  }

  function stop() {
    if (page.playTimer && page.playTimer !== DRAWING) clearTimeout(page.playTimer);
    page.playTimer = null;
    Render.renderStatus();
  }

  // Back to before the prefill (at 0) or to just after it (at -1), with a new session.
  function restart(at) {
    page.state.at = at;
    rebuild([]);
  }

export { rebuild, step, play, stop, restart };
