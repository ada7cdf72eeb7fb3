// cli-inspect.test.mjs — `attnlab inspect`: what a checkpoint holds, read from the file (the
// expected numbers from stories260K's own description, models/stories260K/SOURCE.md: dim 64,
// FFN 172, 5 layers, 8/4 heads, vocab 512, seq 512, tied — 260,032 parameters by its layout).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { ROOT, VARIANTS, run } from './lib/run.mjs';

const cli = join(VARIANTS[0].dir, 'attnlab');
const model = join(ROOT, 'models', 'stories260K', 'stories260K.bin');

test('inspect prints the configuration and the parameter count of stories260K', () => {
  const r = run(cli, ['inspect', '--model', model]);
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /^llama2\.c checkpoint \(float32: legacy or version 1\)\n/);
  assert.match(r.stdout, /vocab 512, hidden 64, layers 5, heads 8, kv heads 4 \(GQA x2\), head_dim 8/);
  assert.match(r.stdout, /ffn 172 \(SwiGLU\), context 512, rope_theta 10000 \(interleaved pairs\), eps 1e-05, qk_norm off, lm_head tied/);
  // 512·64 + 5·(64 + 64·64 + 2·32·64 + 64·64 + 64 + 3·172·64) + 64
  assert.match(r.stdout, /parameters 260032 \(0\.26 M\)/);
});

test('inspect refuses what is not a model', () => {
  for (const [args, message] of [
    [['inspect'], /inspect needs --model PATH/],
    [['inspect', '--model', join(ROOT, 'nope')], /cannot open '.*nope': no such file or folder/],
    [['inspect', '--model', join(ROOT, 'models', 'stories260K', 'SOURCE.md')], /SOURCE\.md: llama2\.c checkpoint: /],
    [['inspect', '--model', join(ROOT, 'models', 'minimind-tokenizer')], /config\.json': No such file/],
  ]) {
    const r = run(cli, args);
    assert.equal(r.status, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.equal(r.stderr.trim().split('\n').length, 1);
    assert.match(r.stderr, message);
  }
});
