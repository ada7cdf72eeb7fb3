// model/worker.js — the model view's compute, off the page's thread: a Web Worker that holds
// the WebAssembly core and one model lab (attnlab-api.js's ModelLab), and answers the page's
// requests with everything one drawing needs. The page stays responsive while a large model
// loads, reads a long prompt or plays.
//
// Requests (op {args} → what it answers):
//   init   {wasm}                                   start the core
//   load   {model, config, tokenizer, name}         a new lab; the old one kept if this fails
//   prompt {text, seed, view, eos}                  a new prompt → a snapshot (eos: go on past
//                                                   the end token)
//   ids    {ids, seed, view, eos}                   a prompt given as ids → a snapshot
//   step   {sampler, count, charts, view}           count steps (stops early at the end) → a snapshot
//   view   {view}                                   a snapshot of what is there
//   next   {sampler}                                the next-token chart's data alone (no token drawn)
//   eos    {on, view}                               go on past the end token or not (a text that
//                                                   ended there resumes) → a snapshot
//   fingerprint {files}                             each file's fingerprint (al_file_fingerprint)
//   ablate {heads, view}                            those heads off ([[layer, head], …]) → a snapshot
//   experiment {sampler, count, target}             the Experiments panel's data (exp)
//   patch  {clean, corrupt, answer, wrong}          activation patching of two prompts' texts
// prompt and ids take heads too: switched off before the prompt runs.
// view: {layer, head, thumb, sampler}: which head to send whole, the thumbnails' size, the
// sampler settings the next-token chart shows the next draw with.
// The messages are core/protocol.js's. Served, this file is a module worker; in the single-file
// page its modules travel together as one script, run from a blob.
import * as AttnLab from '../core/attnlab-api.js';
import { serve } from '../core/protocol.js';

  let core = null;
  let lab = null;
  let info = null; // what does not change while the model stays

  // Every token's text and bytes, kept as they come (a token's text never changes).
  let tokens = [];
  let serial = 0; // counts the prompts: the tokens of one prompt only grow
  let ablationError = ''; // the core's refusal of the heads a prompt asked off (said once)

  // ---------------------------------------------------------------- the Experiments panel
  // What every head on gives changes only with the tokens and the sampler's settings: kept.
  let allHeads = { key: '', value: null };
  const label = (id) => new TextDecoder().decode(lab.piece(id));
  const lossOf = (all) => {
    try {
      return { value: lab.promptLoss(all) };
    } catch (e) {
      return { error: e.message };
    }
  };
  // The panel's data with the heads off as they are: the next-token distribution and the next
  // `count` draws with every head on and with these off, the prompt's loss both ways, the logit
  // lens, and the attribution of token `target` (-1: the most likely next) at the last position.
  function experiment({ sampler = {}, count = 20, target = -1 }) {
    const hp = lab.hparams, len = lab.len, L = hp.n_layers, LH = hp.n_layers * hp.n_heads;
    const going = lab.finish === 'going';
    const key = JSON.stringify([serial, len, sampler, count, going]);
    if (allHeads.key !== key) {
      const on = lab.ahead(sampler, true, count);
      allHeads = { key, value: { ids: on.ids, text: lab.idsText(on.ids), probs: on.probs, loss: lossOf(true) } };
    }
    const off = lab.ahead(sampler, false, count);
    const top = going ? lab.pending(sampler, Math.min(12, hp.vocab)).ids : new Int32Array(0);
    const lens = lab.lens();
    const ids = [...new Set([...lens.top, ...top])];
    const exp = {
      going, count, len, promptLen: lab.promptLen, top, all: allHeads.value,
      off: { ids: off.ids, text: lab.idsText(off.ids), probs: off.probs, loss: lossOf(false) },
      lens: { rows: L + 1, cols: len, top: lens.top, prob: lens.prob },
      labels: Object.fromEntries(ids.map((id) => [id, label(id)])),
      dla: null,
    };
    const chosen = target >= 0 && target < hp.vocab ? target : top.length ? top[0] : -1;
    if (chosen >= 0) {
      // the parts at the last position: column len - 1 of [LH + 1 + L, len]
      const parts = lab.dla(chosen), at = (r) => parts[r * len + len - 1];
      exp.dla = { target: chosen, label: label(chosen), heads: Float32Array.from({ length: LH }, (_, r) => at(r)),
        embed: at(LH), ffn: Float32Array.from({ length: L }, (_, l) => at(LH + 1 + l)) };
    }
    return exp;
  }

  // Activation patching of the clean text into the corrupted one (the same token count, else
  // said: {mismatch}), the metric logit(answer) − logit(wrong); both maps as the share of the
  // metric they recover (the core's), with the raw ones.
  function patch({ clean, corrupt, answer, wrong }) {
    const c = lab.encode(clean), k = lab.encode(corrupt);
    const tokens = (ids) => Array.from(ids, (id) => ({ id, text: '', bytes: Array.from(lab.piece(id)) }));
    if (c.length !== k.length) return { mismatch: true, cleanCount: c.length, corruptCount: k.length, cleanTokens: tokens(c), corruptTokens: tokens(k) };
    const a = lab.tokenId(answer), w = lab.tokenId(wrong);
    const raw = lab.patch(c, k, a, w);
    const { n_layers: L, n_heads: H } = lab.hparams, n = c.length, LH = L * H;
    const metrics = { clean: raw[LH + L * n], corrupt: raw[LH + L * n + 1] };
    const heads = core.patchRecovered(raw.slice(0, LH), metrics.clean, metrics.corrupt);
    const resid = core.patchRecovered(raw.slice(LH, LH + L * n), metrics.clean, metrics.corrupt);
    return { n, cleanTokens: tokens(c), corruptTokens: tokens(k), answer: a, wrong: w, answerLabel: label(a), wrongLabel: label(w),
      ...metrics, recovered: heads.recovered, heads: heads.values, resid: resid.values,
      rawHeads: raw.slice(0, LH), rawResid: raw.slice(LH, LH + L * n) };
  }

  // The files' fingerprints, in the order given (null for a missing file).
  const fingerprints = (files) => files.map((f) => (f ? core.fingerprint(f) : null));

  function modelInfo(l, name, files) {
    return {
      name,
      kind: l.kind,
      hparams: l.hparams,
      ropeStyle: l.ropeStyle,
      ropePairs: core.ropePairs(l.hparams.head_dim, l.ropeStyle), // the dimensions each pair turns
      kvSharing: l.kvSharing,
      context: l.context,
      threads: l.threads, // the threads its GEMMs are split over (the threaded build's: 2)
      roles: l.roles(),
      roleNames: l.roleNames,
      // per role: the heads strongest first, the pattern of a head that does only that
      ranking: Object.fromEntries(l.roleNames.map((r) => [r, l.roleRanking(r)])),
      ideal: Object.fromEntries(l.roleNames.map((r) => [r, core.roleIdeal(r, 4)])),
      threshold: core.roleThreshold(),
      rope: l.rope(),
      fingerprint: fingerprints(files),
      sizes: files.map((f) => (f ? f.length : 0)),
    };
  }

  // The next-token chart's data: the next draw's stages with these settings while a step would
  // draw (pending), else the last draw's, the token drawn marked.
  function nextToken(sampler) {
    const hp = lab.hparams, count = Math.min(12, hp.vocab);
    const going = lab.finish === 'going';
    const next = going ? lab.pending(sampler || {}, count)
      : { stages: lab.stages(), ids: lab.chosen >= 0 ? lab.topIds(count) : new Int32Array(0) };
    const dec = new TextDecoder();
    return { pending: going, stages: next.stages, topIds: next.ids, chosen: going ? -1 : lab.chosen,
      topLabels: Array.from(next.ids, (id) => dec.decode(lab.piece(id))) };
  }

  function snapshot(view = {}) {
    const len = lab.len;
    const ids = lab.ids();
    if (tokens.length > len) tokens.length = len;
    for (let i = tokens.length; i < len; i++) tokens.push({ text: lab.tokenText(i), bytes: Array.from(lab.tokenBytes(i)) });
    const hp = lab.hparams;
    const layer = Math.min(Math.max(0, view.layer | 0), hp.n_layers - 1);
    const head = Math.min(Math.max(0, view.head | 0), hp.n_heads - 1);
    const s = {
      len, promptLen: lab.promptLen, finished: lab.finished, finish: lab.finish, chosen: lab.chosen, ids, serial,
      tokens, text: lab.text(), layer, head,
      thumbs: len ? lab.thumbs(Math.max(1, view.thumb | 0 || 32)) : { size: 0, data: new Float32Array(0) },
      attention: len ? lab.attention(layer, head) : new Float32Array(0),
      mask: len ? lab.mask() : new Float32Array(0),
      ...nextToken(view.sampler),
      kv: lab.kv(),
      // one layer's cache now (every layer's is the same size)
      kvLayerBytes: core.kvCacheBytes(1, len, hp.n_kv_heads, hp.head_dim),
      residNorms: len ? lab.residNorms() : new Float32Array(0),
      routing: hp.n_experts && len ? lab.routing(layer) : null,
    };
    s.lastChosen = lab.chosen;
    s.off = lab.ablation();
    if (ablationError) s.ablationError = ablationError;
    ablationError = '';
    return s;
  }

  // The buffers an answer holds, handed over rather than copied: a snapshot's, the Experiments
  // panel's (not those with every head on: kept here for the next experiment) and a patch's.
  function transfers(r) {
    const out = [];
    if (r.stages) out.push(r.stages.buffer, r.topIds.buffer); // the next-token chart's data
    if (r.ids) {
      out.push(r.ids.buffer, r.thumbs.data.buffer, r.attention.buffer, r.mask.buffer, r.residNorms.buffer);
      if (r.routing) out.push(r.routing.ids.buffer, r.routing.weights.buffer);
    }
    if (r.exp) {
      const e = r.exp;
      out.push(e.top.buffer, e.off.ids.buffer, e.off.probs.buffer, e.lens.top.buffer, e.lens.prob.buffer);
      if (e.dla) out.push(e.dla.heads.buffer, e.dla.ffn.buffer);
    }
    if (r.patch && !r.patch.mismatch) for (const k of ['heads', 'resid', 'rawHeads', 'rawResid']) out.push(r.patch[k].buffer);
    return out;
  }

  const ops = {
    async init({ wasm }) {
      core = await AttnLab.load({ wasmBinary: wasm });
      return { ready: true };
    },
    load({ model, config, tokenizer, name, kind = 'unknown' }) {
      const next = core.createModelLab({ model, config: config || null, tokenizer, kind });
      let nextInfo;
      try {
        nextInfo = modelInfo(next, name, [model, config || null, tokenizer]);
      } catch (e) {
        next.free();
        throw e;
      }
      if (lab) lab.free();
      lab = next;
      info = nextInfo;
      tokens = [];
      serial++;
      return info;
    },
    prompt({ text, seed, view, eos = false, heads }) { return fresh(() => lab.prompt(text, seed), view, eos, heads); },
    ids({ ids, seed, view, eos = false, heads }) { return fresh(() => lab.promptIds(ids, seed), view, eos, heads); },
    ablate({ heads, view }) {
      need();
      lab.setAblation(heads);
      return snapshot(view);
    },
    experiment(args) {
      need();
      return { exp: experiment(args) };
    },
    patch(args) {
      need();
      return { patch: patch(args) };
    },
    step({ sampler, count = 1, charts = true, view }) {
      need();
      lab.setCharts(charts);
      for (let i = 0; i < count && lab.finish === 'going'; i++) lab.step(sampler);
      if (!charts) lab.setCharts(true);
      return snapshot(view);
    },
    view({ view }) {
      need();
      return snapshot(view);
    },
    next({ sampler }) {
      need();
      return nextToken(sampler);
    },
    eos({ on, view }) {
      need();
      allHeads = { key: '', value: null };
      lab.setIgnoreEos(on);
      if (on && lab.finish === 'stop_token') lab.resume();
      return snapshot(view);
    },
    fingerprint({ files }) { return { fingerprint: fingerprints(files) }; },
  };

  // A new prompt (set by run): its tokens start over, with the charts on.
  function fresh(run, view, eos, heads) {
    need();
    tokens = [];
    serial++;
    lab.setCharts(true);
    lab.setIgnoreEos(eos);
    if (heads) {
      try {
        lab.setAblation(heads);
      } catch (e) {
        ablationError = e.message; // the heads before stay; the page says why
      }
    }
    run();
    return snapshot(view);
  }

  function need() {
    if (!lab) throw new Error('no model loaded');
  }

  serve(ops, { transfer: transfers });
