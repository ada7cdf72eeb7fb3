// layer/run.js — the session the page shows, computed in the layer view's worker (worker.js):
// built from the state (head_dim and KV heads held to what the core allows), run to the state's
// token, stepped one token at a time, played and paused, and drawn from each answer. Only the
// newest request's answer is drawn (protocol.js's Newest): one that comes after a newer
// request was made is dropped. A configuration the core refuses brings back the last good
// state with the core's message.
import { LayerClient } from '../core/client.js';
import { Newest } from '../core/protocol.js';
import { page } from '../ui/page.js';
import * as State from '../ui/state.js';
import * as Facts from './facts.js';
import { syncControls } from './inputs.js';
import * as Render from './render.js';

  let client = null;
  let frames = null;   // build, step and view: the session's frames
  let texts = null;    // the walkthrough's sections

  // Starts the worker and the core in it.
  async function start(wasm) {
    client = new LayerClient();
    frames = new Newest(client);
    texts = new Newest(client);
    Facts.set(await client.init(wasm, { maxHeadWidth: State.MAX_HEAD_WIDTH }));
  }


  // ---------------------------------------------------------------- requests in flight
  // Counts the requests whose answers are not drawn yet; idle() resolves once none is left.
  let busy = 0;
  let waiting = [];
  function track(promise) {
    busy++;
    return promise.finally(() => {
      if (--busy > 0) return;
      const done = waiting;
      waiting = [];
      for (const resolve of done) resolve();
    });
  }
  const idle = () => (busy ? new Promise((resolve) => waiting.push(resolve)) : Promise.resolve());

  // ---------------------------------------------------------------- frames
  // The parts of a frame the page keeps between answers (worker.js): those of the session at
  // its length, and those named by a key.
  const CELL_PARTS = ['mask', 'thumbs', 'checks', 'kvRows'];
  const KEYED_PARTS = ['attention', 'angles', 'ropePair', 'ropeRel', 'chapters'];

  // What the page holds, by key, so that the worker sends only what changed.
  function have() {
    const s = page.session;
    if (!s) return {};
    return { cells: s.cells, ...Object.fromEntries(KEYED_PARTS.map((k) => [k, s[k] && s[k].key])) };
  }

  // A frame taken: the parts it leaves out are the ones the page holds.
  function take(frame) {
    const held = page.session || {};
    const next = { ...frame };
    for (const k of [...CELL_PARTS, ...KEYED_PARTS]) if (!(k in next)) next[k] = held[k];
    page.session = next;
    page.sessionSerial = frame.serial; // names this session in the charts' cache keys
  }

  const viewOf = (s) => ({ head: s.head, pair: s.pair, wrap: !!s.wrap });
  const ask = (op, args = {}) => frames.request(op, { ...args, view: viewOf(page.state), have: have() });

  function sessionConfig(s) {
    return {
      hidden: s.hidden, heads: s.heads, kvHeads: s.kv, headDim: s.hd, ropeBase: s.base,
      qkNorm: !!s.qk, seed: s.seed, promptLen: s.prompt, decodeSteps: s.steps,
    };
  }

  // ---------------------------------------------------------------- the session
  // Builds the session for page.state (head_dim and KV heads held to what the core allows, by
  // ui/state.js coreRelations) and runs it to state.at tokens. On a refused configuration,
  // returns to the last good state (or the defaults) and shows the core's message. Resolves
  // once drawn (or dropped for a newer request); never rejects.
  function rebuild(problems = [], refusal = '') {
    const { state, t } = page;
    try {
      State.coreRelations(state, problems, Facts.relations);
    } catch (e) {
      page.showMessage(t.errorPrefix + e.message, true);
      return Promise.resolve();
    }
    stop();
    const sent = { ...state };
    const at = state.at === -1 ? state.prompt : state.at; // 0: before the prefill
    return track(ask('build', { cfg: sessionConfig(state), at }).then((frame) => {
      if (!frame) return; // a newer request was made
      take(frame);
      page.lastGood = sent;
      if (refusal) page.showMessage(refusal, true);
      else page.showProblems(problems);
      syncControls();
      Render.render();
    }, (e) => {
      const fallback = page.lastGood || { ...State.defaults(), lang: sent.lang };
      if (JSON.stringify(fallback) === JSON.stringify(sent)) {
        page.showMessage(t.errorPrefix + e.message, true); // nothing left to fall back to
        return undefined;
      }
      page.state = { ...fallback };
      return rebuild([], page.t.errorPrefix + e.message);
    }));
  }

  // A frame of the session as it is, for another head, pair or wrap.
  function redraw() {
    return track(ask('view').then((frame) => {
      if (!frame) return;
      take(frame);
      Render.render();
    }, (e) => page.showMessage(page.t.errorPrefix + e.message, true)));
  }

  // One decode step, then the charts. Resolves once drawn.
  function step() {
    const { session, t } = page;
    if (!session) return Promise.resolve();
    if (session.length >= session.total) {
      stop();
      return Promise.resolve();
    }
    return track(ask('step').then((frame) => {
      if (!frame) return;
      take(frame);
      Render.render();
      if (frame.length >= frame.total) stop();
    }, (e) => {
      page.showMessage(t.errorPrefix + e.message, true);
      stop();
    }));
  }

  // Every demo's sections for a seed in every language of the page (null: a newer request
  // was made meanwhile).
  function sections(seed, langs) {
    return track(texts.request('sections', { seed, langs }));
  }

  // Play: a step every 400 ms, the next one scheduled only after this one has been drawn, so
  // steps never queue up behind a slow one and Pause takes effect at once (a step the worker is
  // computing when Pause comes is still drawn). While a step runs or waits for its frame,
  // playTimer is DRAWING (still playing, no timer to clear).
  const DRAWING = -1;
  function play() {
    if (page.playTimer) return stop();
    const schedule = () => {
      if (page.playTimer !== DRAWING) return; // paused meanwhile
      page.playTimer = setTimeout(() => {
        page.playTimer = DRAWING;
        step().then(() => requestAnimationFrame(schedule));
      }, 400);
    };
    page.playTimer = DRAWING;
    schedule();
    Render.renderStatus();
    return undefined;
  }

  function stop() {
    if (page.playTimer && page.playTimer !== DRAWING) clearTimeout(page.playTimer);
    page.playTimer = null;
    Render.renderStatus();
  }

  // Back to before the prefill (at 0) or to just after it (at -1), with a new session.
  function restart(at) {
    page.state.at = at;
    return rebuild([]);
  }

export { start, rebuild, redraw, step, sections, play, stop, restart, idle };
