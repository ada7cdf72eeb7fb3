// wasm-heap.test.mjs — the WebAssembly heap under long use through the JS binding: 10,000
// decode steps (with the page's reads: weights, mask, checks) and 1,000 configuration changes
// must leave the allocated bytes where they were after the first few (no leaked malloc, every
// session freed), and the heap must stop growing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AttnLab, loadCore } from './lib/wasm.mjs';

const core = await loadCore();

const base = { hidden: 32, heads: 4, kvHeads: 2, headDim: 8, ropeBase: 10000, qkNorm: true, seed: 1, promptLen: 8, decodeSteps: 100 };

test('the bytes in use are the core\'s count (al_heap_in_use): a session adds them, freeing it takes them back', () => {
  const before = core.heapStats().inUse;
  assert.ok(before > 0, `in use: ${before}`);
  const s = core.createSession(base);
  const held = core.heapStats().inUse;
  s.free();
  assert.ok(held > before, `a session adds nothing: ${before} then ${held}`);
  assert.equal(core.heapStats().inUse, before);
});

test('10,000 decode steps do not grow the heap', () => {
  const s = core.createSession(base);
  let steps = 0, after = null;
  try {
    for (let round = 0; steps < 10000; round++) {
      s.reset();
      s.prefill();
      while (s.length < s.total) {
        s.step();
        steps++;
        s.attention(steps % base.heads);
        if (steps % 10 === 0) { s.mask(); s.verify(); s.outputs(); }
      }
      if (round === 2) after = core.heapStats();
    }
    const end = core.heapStats();
    assert.equal(end.inUse, after.inUse, `allocated bytes went from ${after.inUse} to ${end.inUse}`);
    assert.equal(end.heapBytes, after.heapBytes, 'the heap grew');
  } finally {
    s.free();
  }
});

test('1,000 configuration changes free every session', () => {
  const kvFor = (heads) => core.kvChoices(heads);
  let after = null;
  for (let i = 0; i < 1000; i++) {
    const heads = [1, 2, 4, 6, 8][i % 5];
    const choices = kvFor(heads);
    const cfg = { ...base, seed: i, heads, kvHeads: choices[i % choices.length], headDim: 2 * (1 + (i % 16)),
      hidden: 8 + (i % 24), promptLen: 1 + (i % 30), decodeSteps: i % 7, qkNorm: i % 3 !== 0, ropeBase: [100, 10000, 1e6][i % 3] };
    const s = core.createSession(cfg);
    try {
      s.prefill();
      if (s.length < s.total) s.step();
      s.attention(0);
      s.verify();
      core.ropeAngles(cfg.promptLen, cfg.headDim, cfg.ropeBase, true);
      core.gqaMap(cfg.heads, cfg.kvHeads);
    } finally {
      s.free();
    }
    assert.throws(() => core.createSession({ ...cfg, kvHeads: heads + 1 }), AttnLab.AttnLabError, `${heads} heads over ${heads + 1} KV heads accepted`);
    if (i === 20) after = core.heapStats();
  }
  const end = core.heapStats();
  assert.equal(end.inUse, after.inUse, `allocated bytes went from ${after.inUse} to ${end.inUse}`);
  assert.equal(end.heapBytes, after.heapBytes, 'the heap grew');
});
