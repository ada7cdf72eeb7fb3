// layer/worker.js — the layer view's compute, off the page's thread: a Web Worker that holds the
// WebAssembly core and the one session the layer lab shows (attnlab-api.js's Session), and
// answers the page's requests with everything one drawing needs, so that a Step or a control
// at the lab's largest settings never holds the page up.
//
// Requests (op {args} → what it answers):
//   init     {wasm, maxHeadWidth}        start the core → the core's answers the page's controls
//                                        need before any session (facts below)
//   build    {cfg, at, view, have}       a new session (createSession's config) run to `at`
//                                        tokens (0: before the prefill) → a frame; the old
//                                        session kept if the core refuses this one
//   step     {view, have}                one decode step (none once the session is full) → a frame
//   view     {view, have}                a frame of the session as it is (another head, pair, wrap)
//   sections {seed, langs}               every demo's sections (core.demoSections) for the seed,
//                                        in each language: {lang: [{demo, sections}]}, the demos
//                                        in the order of their chapters (the core's al_demo enum)
// view: {head, pair, wrap}: the head whose weights are sent whole, the RoPE pair traced, the
// angles wrapped or not.
// facts: {headDimMost [heads], kvNearest [heads][kv], kvChoices [heads], kvSharing [heads][kv]}: for every head count
// the core allows (1..AL_MAX_HEADS) and every KV count up to it, the core's own answers (what
// ui/state.js's coreRelations and the KV select ask).
//
// A frame: {serial (counts the sessions built), cfg, length, total, view, cells, kvMap} and
// its parts. What the page already holds (have: the keys of its parts) is not sent again:
//   cells (serial|length)  mask [len, len], thumbs [{size, values}] per head, checks, kvRows
//   attention              {key, head, values [len, len]}
//   angles                 {key, values [total, head_dim / 2]}
//   ropePair               {key, points}  one pair of an all-ones vector turning
//   ropeRel                {key, dots}    the tutorial's v_test against distance
//   chapters               {key (the seed), ...} the data of chapters 04, 05 and 10's charts
// The messages are core/protocol.js's. Served, this file is a module worker; in the single-file
// page its modules travel together as one script, run from a blob.
import * as AttnLab from '../core/attnlab-api.js';
import { serve } from '../core/protocol.js';

  // A thumbnail is about 110 px wide: the core max-pools each head to at most this a side.
  const THUMB_SIZE = 128;

  let core = null;
  let session = null;
  let serial = 0;

  // For every head count and every KV head count up to AL_MAX_HEADS, the core's answers
  // (headDimMost within the page's query width, ui/state.js's MAX_HEAD_WIDTH).
  function facts(maxHeadWidth) {
    const most = core.limits.AL_MAX_HEADS;
    const heads = Array.from({ length: most + 1 }, (_, h) => h);
    return {
      maxHeads: most,
      headDimMost: heads.map((h) => (h ? core.headDimMost(h, maxHeadWidth) : null)),
      kvNearest: heads.map((h) => (h ? heads.map((kv) => core.kvNearest(h, kv)) : null)),
      kvChoices: heads.map((h) => (h ? core.kvChoices(h) : null)),
      kvSharing: heads.map((h) => (h ? heads.map((kv) => core.kvSharing(h, kv)) : null)),
    };
  }

  // The data of chapters 04, 05 and 10's charts for a seed, as the demos print them.
  function chapters(seed) {
    return {
      key: `${seed}`,
      ffnLine: core.demoFfnCurves(61), ffnPoints: core.demoFfnCurves(7),
      router: core.demoRouter(seed), load: core.demoExpertLoad(seed),
      stream: core.demoBlockStream(seed), labels: core.demoShiftedLabels(seed),
      stages: Object.fromEntries([1, 3, 4, 5].map((example) => [example, core.demoSamplerStages(seed, example)])),
      temps: core.demoTemperatures(seed), draws: core.demoDraws(seed), eos: core.demoEos(seed),
    };
  }

  // The session as the page draws it, less what it holds already (have).
  function frame(view, have = {}) {
    const cfg = session.cfg, len = session.length, total = session.total;
    const hd = cfg.headDim, base = cfg.ropeBase;
    const cells = `${serial}|${len}`;
    const f = { serial, cfg, length: len, total, view, cells, kvMap: core.gqaMap(cfg.heads, cfg.kvHeads) };
    if (have.cells !== cells) {
      f.mask = session.mask();
      f.thumbs = Array.from({ length: cfg.heads }, (_, h) => session.attentionThumb(h, THUMB_SIZE));
      f.checks = len > 0 ? session.verify() : []; // the checks need the prefill
      // one row after the prefill and one after each step so far (none before the prefill)
      f.kvRows = len >= cfg.promptLen ? core.kvGrowth(cfg, cfg.promptLen, len - cfg.promptLen) : [];
    }
    const part = (name, key, make) => { if (have[name] !== key) f[name] = { key, ...make() }; };
    part('attention', `${cells}|${view.head}`, () => ({ head: view.head, values: session.attention(view.head) }));
    part('angles', `${total}|${hd}|${base}|${view.wrap}`, () => ({ values: core.ropeAngles(total, hd, base, view.wrap) }));
    part('ropePair', `${total}|${hd}|${base}|${view.pair}`,
      () => ({ points: core.ropePairTrace(new Float32Array(hd).fill(1), view.pair, total, hd, base) }));
    part('ropeRel', `${serial}`, () => ({ dots: session.ropeRelative(0, Math.max(64, total)) }));
    if (have.chapters !== `${cfg.seed}`) f.chapters = chapters(cfg.seed);
    return f;
  }

  // The large arrays of a frame are handed over, not copied.
  function transfers(f) {
    const out = [];
    if (f.mask) out.push(f.mask.buffer, ...f.thumbs.map((t) => t.values.buffer));
    if (f.attention) out.push(f.attention.values.buffer);
    if (f.angles) out.push(f.angles.values.buffer);
    return out;
  }

  const ops = {
    async init({ wasm, maxHeadWidth }) {
      core = await AttnLab.load({ wasmBinary: wasm, threads: 1 }); // its sessions do not split their work
      return facts(maxHeadWidth);
    },
    build({ cfg, at, view, have }) {
      const next = core.createSession(cfg);
      try {
        if (at > 0) next.runTo(at);
      } catch (e) {
        next.free();
        throw e;
      }
      if (session) session.free();
      session = next;
      serial++;
      return frame(view, have);
    },
    step({ view, have }) {
      need();
      if (session.length < session.total) session.step();
      return frame(view, have);
    },
    view({ view, have }) {
      need();
      return frame(view, have);
    },
    sections({ seed, langs }) {
      const demos = Object.entries(core.abi.enums.demo).sort((a, b) => a[1] - b[1]).map(([name]) => name);
      return { seed, ...Object.fromEntries(langs.map((lang) => [lang, demos.map((demo) => ({ demo, sections: core.demoSections(demo, lang, seed) }))])) };
    },
  };

  function need() {
    if (!session) throw new Error('no session built');
  }

  serve(ops, { transfer: (result) => (result.cells ? transfers(result) : []) });
