// train/worker.js — the Train tab's compute, off the page's thread: a Web Worker that holds the
// WebAssembly core and one train lab (attnlab-api.js's TrainLab) and trains it in slices of
// about SLICE_MS, answering the page's requests between them, so Pause is heard at once and
// the page never waits.
//
// Requests and answers are core/protocol.js's, and while it runs the event {progress} after
// each slice.
//   init     {wasm}                       start the core; the defaults, the role threshold and
//                                         the steps the default run's jump comes between
//   create   {config, tokenizer, text}    a new lab (the old one freed); its facts
//   start    {}                           train until paused or done (progress as it goes)
//   pause    {}                           stop after the current slice
//   files    {}                           config.json, model.safetensors, tokenizer.json bytes
//   ablate   {heads: [[layer, head], ...]} those heads off in the probe's evaluation (not in
//                                         training); {ablation, probeLoss} measured at once
// progress: {steps, tokens, ms, history (rows since the last), evals (rows since the last),
// inductionMax, inductionPassed (the step some head's induction score first passed the
// threshold, -1), strongest (per role, the strongest head at the last evaluation), patterns
// (when an evaluation came: every head's attention over the probe [L, H, T, T], else null),
// heldOutLoss (text: at the last evaluation), ablation (the heads off, [[layer, head], ...]),
// probeLoss (al_train_lab_probe_loss: the probe's copies' losses with and without them, and the
// step they were measured at), running, done}. The page answers a click on a
// head from the patterns it holds: it never waits for a slice to end.
import * as AttnLab from '../core/attnlab-api.js';
import { serve, emit } from '../core/protocol.js';

  const SLICE_MS = 100;
  let core = null;
  let lab = null;
  let running = false;
  let sent = { steps: 0, evals: 0 }; // rows already sent
  let trainMs = 0; // time spent training (the speed shown)
  let perStepMs = 50; // measured, to size the slices
  let threshold = NaN; // al_lab_role_threshold, read at init

  function facts(l) {
    const probe = Array.from(l.probe());
    return { hparams: l.hparams, params: l.paramCount, probe, config: l.config, columns: l.columns, roleNames: l.roleNames,
      threads: l.threads, // the threads its products are split over (the threaded build's: 2)
      probePieces: probe.map((id) => Array.from(l.piece(id))) };
  }

  // Every head's attention over the probe at the last evaluation, [L, H, T, T].
  function patterns() {
    const { n_layers: L, n_heads: H } = lab.hparams, T2 = lab.probeLen * lab.probeLen;
    const out = new Float32Array(L * H * T2);
    for (let l = 0; l < L; l++) for (let h = 0; h < H; h++) out.set(lab.attention(l, h), (l * H + h) * T2);
    return out;
  }

  function progress() {
    const history = lab.history(sent.steps);
    const evals = lab.evals(sent.evals);
    sent = { steps: lab.stepsDone, evals: sent.evals + evals.length / lab.evalWidth };
    const done = lab.stepsDone >= lab.config.steps;
    return { steps: lab.stepsDone, tokens: lab.tokensDone, ms: trainMs, tokensPerSecond: lab.tokensPerSecond(trainMs), history, evals,
      inductionMax: lab.inductionMax, inductionPassed: lab.rolePassed('induction', threshold),
      strongest: lab.roleNames.map((r) => lab.strongestHead(r)), patterns: evals.length ? patterns() : null,
      heldOutLoss: lab.heldOutLoss, ablation: lab.ablation(), probeLoss: lab.probeLoss(), running: running && !done, done };
  }

  // The rows and the patterns are handed over, not copied.
  const buffers = (p) => [p.history.buffer, p.evals.buffer, ...(p.patterns ? [p.patterns.buffer] : [])];
  function post(p) { emit({ progress: p }, buffers(p)); }

  // One slice of steps, then the next after any waiting message has been heard.
  function slice() {
    if (!running || !lab) return;
    const n = Math.max(1, Math.round(SLICE_MS / perStepMs));
    const t0 = performance.now();
    let failed = null;
    try {
      const before = lab.stepsDone;
      const after = lab.step(n);
      const ms = performance.now() - t0;
      trainMs += ms;
      if (after > before) perStepMs = Math.max(0.5, ms / (after - before));
    } catch (e) {
      failed = e.message || String(e);
    }
    if (failed || lab.stepsDone >= lab.config.steps) running = false;
    const p = progress();
    if (failed) p.error = failed;
    post(p);
    if (running) setTimeout(slice, 0);
  }

  const ops = {
    async init({ wasm }) {
      core = await AttnLab.load({ wasmBinary: wasm });
      threshold = core.roleThreshold();
      return { defaults: core.trainDefaults(), threshold, jump: [core.limits.AL_TRAIN_JUMP_FROM, core.limits.AL_TRAIN_JUMP_TO] };
    },
    create({ config, tokenizer, text = '' }) {
      running = false;
      const next = core.createTrainLab(config, tokenizer, text);
      if (lab) lab.free();
      lab = next;
      sent = { steps: 0, evals: 0 };
      trainMs = 0;
      const f = facts(lab);
      f.progress = progress();
      return f;
    },
    start() {
      need();
      if (!running) {
        running = true;
        setTimeout(slice, 0);
      }
      return { running: true };
    },
    pause() {
      running = false;
      return { running: false };
    },
    ablate({ heads }) {
      need();
      lab.setAblation(heads);
      return { ablation: lab.ablation(), probeLoss: lab.probeLoss() };
    },
    files() {
      need();
      return { config: lab.file('config'), model: lab.file('model'), tokenizer: lab.file('tokenizer') };
    },
  };

  function need() {
    if (!lab) throw new Error('no model to train: press Start');
  }

  serve(ops, { transfer: (result) => (result.progress ? buffers(result.progress) : []) });
