// bench-peers.test.mjs — the pieces of the llama.cpp speed comparisons (tests/bench/llama_cpp_speed.mjs,
// tests/bench/wllama.mjs) that decide what is reported, checked without running a peer: llama.cpp's
// own counts read from its log, whether the CLI takes --threads, the prompt text both tokenizers
// make the same ids of, and how the targets pick their rows. (No time is measured here.)
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { llamaCppSpeedTargets, ownRate, perfCounts } from './bench/llama_cpp_speed.mjs';
import { helpHasModelThreads, textOfTokens } from './bench/speed_models.mjs';
import { targetTable } from './bench/stats.mjs';
import { wllamaTargets } from './bench/wllama.mjs';
import { ROOT } from './lib/run.mjs';

test('llama.cpp\'s own counts: the prompt\'s tokens and the decode runs, each from its own line', () => {
  // as llama_perf_context_print writes them (node-llama-cpp 3.22.1, context.printTimings())
  const lines = [
    'llama_perf_context_print:        load time =       0.00 ms',
    'llama_perf_context_print: prompt eval time =     135.90 ms /   512 tokens (    0.27 ms per token,  3767.45 tokens per second)',
    'llama_perf_context_print:        eval time =     126.12 ms /   256 runs   (    0.49 ms per token,  2029.88 tokens per second)',
  ];
  assert.deepEqual(perfCounts(lines), { prompt: { ms: 135.9, n: 512 }, eval: { ms: 126.12, n: 256 } });
  assert.deepEqual(perfCounts([lines[2]]), { prompt: null, eval: { ms: 126.12, n: 256 } });
  assert.deepEqual(perfCounts([lines[1]]), { prompt: { ms: 135.9, n: 512 }, eval: null }); // "prompt eval" is not "eval"
});

test('llama.cpp\'s own counts from a whole print of context.printTimings(), after a prefill and after a decode', () => {
  // the lines node-llama-cpp 3.22.1 (llama.cpp v0.5.0) hands its logger: MiniMind-3-shaped f32, one
  // thread, a prefill of 512, then 16 decode steps (each print resets the counters, so the other
  // count is 0, printed as 1 at 0.00 ms)
  const print = (prompt, evals) => ['llama_perf_context_print:        load time =      49.21 ms', prompt, evals,
    'llama_perf_context_print:       total time =      52.58 ms /    65 tokens', 'llama_perf_context_print:    graphs reused =          0'];
  const none = { prompt: 'llama_perf_context_print: prompt eval time =       0.00 ms /     1 tokens (    0.00 ms per token,      inf tokens per second)',
    evals: 'llama_perf_context_print:        eval time =       0.00 ms /     1 runs   (    0.00 ms per token,      inf tokens per second)' };
  const prefill = perfCounts(print('llama_perf_context_print: prompt eval time =    2253.45 ms /   512 tokens (    4.40 ms per token,   227.21 tokens per second)', none.evals));
  const decode = perfCounts(print(none.prompt, 'llama_perf_context_print:        eval time =     538.01 ms /    16 runs   (   33.63 ms per token,    29.74 tokens per second)'));
  assert.deepEqual(prefill, { prompt: { ms: 2253.45, n: 512 }, eval: { ms: 0, n: 1 } });
  assert.deepEqual(decode, { prompt: { ms: 0, n: 1 }, eval: { ms: 538.01, n: 16 } });
  const misses = new Set();
  assert.equal(ownRate(prefill.prompt, 512, 'prefill', misses), (1e3 * 512) / 2253.45);
  assert.equal(ownRate(decode.eval, 16, 'decode', misses), (1e3 * 16) / 538.01);
  assert.deepEqual([...misses], []);
  // a count that is not the run's, a count of 0 (printed as 1), and no line: left out, and why
  assert.equal(ownRate(decode.eval, 15, 'decode', misses), undefined);
  assert.equal(ownRate(prefill.eval, 1, 'decode of 1', misses), undefined);
  assert.equal(ownRate(perfCounts([]).eval, 16, 'decode', misses), undefined);
  assert.deepEqual([...misses], ['decode: llama.cpp counted 16 in 538.01 ms where the run had 15', 'decode of 1: llama.cpp counted 1 in 0 ms where the run had 1',
    'decode: no llama_perf_context line in the log']);
});

test('--threads is looked for in the usage of `attnlab bench --model` alone', () => {
  const layer = '  attnlab bench [--hidden H] [--seq S]\n                [--decode-at C] [--threads 1]\n      time the core\n';
  const model = (extra) => `  attnlab bench --model PATH | --preset minimind-3 [--seq S] [--decode N]${extra}\n      a whole model's prefill and decode tokens/s\n`;
  const train = '  attnlab bench --train [--hidden H] [--threads N]\n      MiniMind\'s training step timed\n';
  assert.equal(helpHasModelThreads(`usage:\n${layer}${model('')}${train}`), false);
  assert.equal(helpHasModelThreads(`usage:\n${layer}${model(' [--threads N]')}${train}`), true);
  assert.equal(helpHasModelThreads(`usage:\n${layer}`), false);
});

test('the prompt text: "a a a …" that each tokenizer makes exactly n ids of, its start token included', () => {
  const stories = { name: 'stories260K', files: { tokenizer: join(ROOT, 'models', 'stories260K', 'tok512.bin') } };
  const minimind = { name: 'MiniMind', files: { tokenizer: join(ROOT, 'models', 'minimind-tokenizer', 'tokenizer.json') } };
  for (const n of [1, 2, 511, 512]) {
    const s = textOfTokens(stories, n), m = textOfTokens(minimind, n);
    assert.equal(s.ids.length, n);
    assert.equal(m.ids.length, n);
    assert.deepEqual(s.ids, [1, ...Array(n - 1).fill(261)]); // BOS, then "▁a" (llama2.c adds the start token)
    assert.deepEqual(m.ids, [100, ...Array(n - 1).fill(299)]); // "a", then "Ġa" (a tokenizer.json adds none)
    assert.equal(s.text.split(' ').filter(Boolean).length, n - 1);
    assert.equal(m.text.split(' ').length, n);
  }
});

test('the llama.cpp targets: each on its row, llama.cpp\'s own count, and AttnLab\'s thread count said when it differs', () => {
  const row = (o) => ({ model: 'MiniMind-3-shaped', dtype: 'f32', kind: 'decode', attnlab_threads: 1, llama_threads: 1,
    vs_own: { median: 1.3, min: 1.1, max: 1.5 }, vs_api: { median: 1.4, min: 1.2, max: 1.6 }, ...o });
  const rows = [row({}), row({ llama_threads: 2, vs_own: { median: 1.2, min: 1, max: 2 } }), row({ kind: 'prefill', vs_own: { median: 0.9, min: 0.8, max: 1 } })];
  const targets = llamaCppSpeedTargets({ rows });
  const find = (start) => targets.find(([name]) => name.startsWith(start));
  const [name1, v1, ok1] = find('MiniMind-3-shaped f32 decode ≥ 1.25× llama.cpp, 1 thread each');
  assert.equal(v1, 1.3);
  assert.equal(ok1(v1), true);
  assert.doesNotMatch(name1, /no --threads/);
  const [name2, v2, ok2] = find('MiniMind-3-shaped f32 decode ≥ 1.25× llama.cpp, 2 threads each');
  assert.equal(v2, 1.2);
  assert.equal(ok2(v2), false);
  assert.match(name2, /\(AttnLab on 1 thread: no --threads yet\)/);
  const [, v3, ok3] = find('MiniMind-3-shaped f32 prefill of 512 ≥ 1.0× llama.cpp, 1 thread each');
  assert.equal(ok3(v3), false);
  assert.equal(find('MiniMind-3-shaped f16 decode ≥ 1.25× llama.cpp, 1 thread each')[1], undefined); // not measured
  assert.equal(find('stories260K decode')[1], undefined);
  const table = targetTable(targets);
  assert.ok(table.includes('| MiniMind-3-shaped f16 decode ≥ 1.25× llama.cpp, 1 thread each | — | — |'));
  assert.ok(table.some((l) => l.startsWith('| MiniMind-3-shaped f32 decode ≥ 1.25× llama.cpp, 2 threads each') && l.endsWith('| **no** |')));
});

test('the llama.cpp targets fall back to the API count, all of them and saying so, when one row lacks the own count', () => {
  const row = (o) => ({ model: 'MiniMind-3-shaped', dtype: 'f32', kind: 'decode', attnlab_threads: 1, llama_threads: 1,
    vs_own: { median: 1.3, min: 1.1, max: 1.5 }, vs_api: { median: 1.4, min: 1.2, max: 1.6 }, ...o });
  const targets = llamaCppSpeedTargets({ rows: [row({}), row({ kind: 'prefill', vs_own: undefined, vs_api: { median: 0.9, min: 0.8, max: 1 } })] });
  const find = (start) => targets.find(([name]) => name.startsWith(start));
  const [name1, v1, , show1] = find('MiniMind-3-shaped f32 decode ≥ 1.25× llama.cpp, 1 thread each');
  assert.equal(v1, 1.4); // the API's, though this row has its own count: one count for every target
  assert.match(name1, /\(llama\.cpp through its API: its own count not captured\)$/);
  assert.match(show1(v1), /^1\.40× \(1\.20–1\.60\) through its API$/);
  assert.equal(find('MiniMind-3-shaped f32 prefill of 512 ≥ 1.0× llama.cpp, 1 thread each')[1], 0.9);
  const [nameOwn, vOwn] = llamaCppSpeedTargets({ rows: [row({})] }).find(([name]) => name.startsWith('MiniMind-3-shaped f32 decode ≥ 1.25× llama.cpp, 1 thread each'));
  assert.equal(vOwn, 1.3);
  assert.doesNotMatch(nameOwn, /through its API/);
});

test('the wllama target: the worst case at one thread each, wllama\'s two threads beside it', () => {
  const row = (o) => ({ model: 'stories260K', dtype: 'f32', work: 'decode', wllama_threads: 1, ratio: { median: 2, min: 1, max: 3 }, ...o });
  const [[, value, ok, show]] = wllamaTargets({ rows: [row({}), row({ work: 'prefill', ratio: { median: 1.5 } }), row({ wllama_threads: 2, ratio: { median: 0.5 } })] });
  assert.equal(value, 1.5);
  assert.equal(ok(value), true);
  assert.match(show(value), /prefill/);
  assert.equal(wllamaTargets({ rows: [], note: 'not run' })[0][1], undefined);
});
