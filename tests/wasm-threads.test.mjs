// wasm-threads.test.mjs — the page's core on two threads where it can be and one where it
// cannot: served (web/serve.mjs) the page is cross-origin isolated and the model view's worker
// runs gen/attnlab-threads.wasm on 2 threads (web/core/wasm-loader.js, core/kernels/pool.c);
// dist/attnlab.html from file:// has no SharedArrayBuffer and runs gen/attnlab.wasm on 1. The
// work is split over outputs only, so both give the same bits: the model view's numbers for
// stories260K on a prompt, and, through the binding, a model lab's and a few training steps'
// (the train lab on both threads too: its losses and weights).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ROOT } from './lib/run.mjs';
import { modelViewDrawn, openPage, servedBrowser } from './lib/browser.mjs';

const DIST = pathToFileURL(join(ROOT, 'dist', 'attnlab.html')).href;
// Long enough for a prefill of several of the GEMM's row blocks (12 rows each in WebAssembly),
// and for the model lab's later chunks of 32 tokens (past 112 tokens for stories260K) to share
// their heads' attention out between the threads (2^19 multiply-adds: core/model/attend.c).
const PROMPT = 'Once upon a time, Lily found a red ball in the park. She wanted to play with it, so she ran to her mom and ' +
  'asked if she could keep it. Her mom smiled and said yes, and they played together until the sun went down. ' +
  'The next day, Lily took the ball to school. She showed it to her friend Tim. Tim wanted to play too, so they ' +
  'threw the ball high in the sky and ran after it. The ball rolled into a big puddle and got very dirty. Lily was ' +
  'sad, but Tim said they could wash it. They washed the ball with water and soap until it was red and shiny again. ' +
  'Lily and Tim were happy. They played with the ball every day, and they were best friends forever.';

let browser, served;
servedBrowser((b, url) => { browser = b; served = url; });

// The bytes of a typed array, as hex (compared exactly: no tolerance).
const HEX = `(a) => Array.from(new Uint8Array(a.buffer, a.byteOffset, a.byteLength), (b) => b.toString(16).padStart(2, '0')).join('')`;

// The model view after the prompt: the threads it says it computes on (its facts line, as
// shown and as data) and the bytes of what its worker computed (the next-token stages, the
// residual norms, the attention shown).
async function modelView(url) {
  const { page, problems } = await openPage(browser.context, url);
  await modelViewDrawn(page);
  await page.fill('#prompt-text', PROMPT);
  await page.waitForFunction(() => window.attnlab.modelView.view.snap?.text?.startsWith('Once upon a time, Lily'));
  const out = await page.evaluate((hex) => {
    const toHex = eval(hex); // eslint-disable-line no-eval
    const s = window.attnlab.modelView.view.snap, facts = document.getElementById('model-facts');
    return {
      isolated: self.crossOriginIsolated, shared: typeof SharedArrayBuffer === 'function',
      threads: facts.dataset.threads, text: facts.textContent, model: window.attnlab.modelView.view.info.name,
      len: s.len, stages: toHex(s.stages), norms: toHex(s.residNorms), attention: toHex(s.attention),
    };
  }, HEX);
  await page.close();
  return { ...out, problems };
}

let twoThreads, oneThread;

test('served: cross-origin isolated, the model view computes on 2 threads', async () => {
  const r = await fetch(served);
  assert.equal(r.headers.get('cross-origin-opener-policy'), 'same-origin');
  assert.equal(r.headers.get('cross-origin-embedder-policy'), 'require-corp');
  twoThreads = await modelView(`${served}#lang=en`);
  assert.deepEqual(twoThreads.problems, []);
  assert.equal(twoThreads.isolated, true);
  assert.equal(twoThreads.model, 'stories260K');
  assert.equal(twoThreads.threads, '2');
  assert.match(twoThreads.text, /The core computes on 2 threads/);
});

test('file://: not isolated, no SharedArrayBuffer, the model view computes on 1 thread', async () => {
  oneThread = await modelView(`${DIST}#lang=en`);
  assert.deepEqual(oneThread.problems, []);
  assert.equal(oneThread.isolated, false);
  assert.equal(oneThread.shared, false);
  assert.equal(oneThread.threads, '1');
  assert.match(oneThread.text, /The core computes on 1 thread\./);
});

test('2 threads and 1 give the same bits: the model view\'s numbers', () => {
  assert.ok(twoThreads && oneThread, 'both pages were read');
  assert.equal(twoThreads.len, oneThread.len);
  for (const k of ['stages', 'norms', 'attention']) {
    assert.ok(twoThreads[k].length > 0, k);
    assert.ok(twoThreads[k] === oneThread[k], `${k}: the bytes differ between 2 threads and 1`);
  }
});

// In the served page, both builds through the binding (the page's thread may not wait, so the
// caller spins while the other thread works): a model lab's next-token stages (from the
// logits) for the prompt and two greedy steps on the served MiniMind (wider than stories260K:
// several panels and row blocks per thread), and the losses of a few training steps, byte for byte.
test('2 threads and 1 give the same bits: a model lab and a few training steps, through the binding', async () => {
  const { page, problems } = await openPage(browser.context, `${served}#lang=en`);
  const out = await page.evaluate(async ({ hex, prompt }) => {
    const toHex = eval(hex); // eslint-disable-line no-eval
    const get = async (u) => new Uint8Array(await (await fetch(u)).arrayBuffer());
    const F = 'gen/models/minimind-fortunes/';
    const [model, config, tokenizer] = await Promise.all([get(`${F}model.safetensors`), get(`${F}config.json`), get(`${F}tokenizer.json`)]);
    const run = async (file) => {
      const core = await window.attnlab.api.load({ wasmBinary: await get(file) });
      const lab = core.createModelLab({ model, config, tokenizer });
      lab.prompt(prompt, 0);
      const stages = [toHex(lab.stages())];
      for (let i = 0; i < 2; i++) {
        lab.step({ temperature: 0 });
        stages.push(toHex(lab.stages()));
      }
      const threads = lab.threads;
      lab.free();
      const d = core.trainDefaults();
      // the default batch (16 × 64 tokens): its projections' products are split between the threads
      const train = core.createTrainLab({ ...d, steps: 3, eval_every: 10 }, tokenizer);
      train.step(3);
      const history = toHex(train.history(0)), weights = toHex(train.file('model')), trainThreads = train.threads;
      train.free();
      return { threads, stages, history, weights, trainThreads };
    };
    return { two: await run('gen/attnlab-threads.wasm'), one: await run('gen/attnlab.wasm') };
  }, { hex: HEX, prompt: PROMPT });
  await page.close();
  assert.deepEqual(problems, []);
  assert.equal(out.two.threads, 2);
  assert.equal(out.one.threads, 1);
  out.two.stages.forEach((s, i) => assert.ok(s === out.one.stages[i], `step ${i}: the stages' bytes differ between 2 threads and 1`));
  assert.equal(out.two.trainThreads, 2);
  assert.equal(out.one.trainThreads, 1);
  assert.ok(out.two.history.length > 0 && out.two.history === out.one.history, 'the training steps\' losses differ between 2 threads and 1');
  assert.ok(out.two.weights.length > 0 && out.two.weights === out.one.weights, 'the trained weights differ between 2 threads and 1');
});
