// cli-inspect.test.mjs — `attnlab inspect`: what a checkpoint holds, read from the file (the
// expected numbers from stories260K's own description, models/stories260K/SOURCE.md: dim 64,
// FFN 172, 5 layers, 8/4 heads, vocab 512, seq 512, tied — 260,032 parameters by its layout).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
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

// A folder's error names the file at fault, as the loader reports it (not from the message's
// words): the folder for its config.json (whose messages name config.json), the weights file
// for model.safetensors. n_kv_heads 3 is refused by the model's own check, whose message does
// not begin with config.json.
test('inspect names the file of a MiniMind folder that is at fault: config.json or model.safetensors', () => {
  const work = mkdtempSync(join(tmpdir(), 'attnlab-inspect-'));
  const folder = join(work, 'model');
  cpSync(join(ROOT, 'tests', 'fixtures', 'minimind', 'dense_f32'), folder, { recursive: true });
  const config = JSON.parse(readFileSync(join(folder, 'config.json'), 'utf8'));
  const weights = readFileSync(join(folder, 'model.safetensors'));
  const quote = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const refused = (pattern) => {
    const r = run(cli, ['inspect', '--model', folder]);
    assert.equal(r.status, 2, r.stderr);
    assert.match(r.stderr, pattern);
  };
  try {
    for (const [text, message] of [
      ['{"hidden_size": ', /config\.json is not valid JSON/],
      [JSON.stringify({ ...config, num_key_value_heads: 3 }), /config\.json: .*multiple of n_kv_heads/],
    ]) {
      writeFileSync(join(folder, 'config.json'), text);
      refused(new RegExp(`^attnlab: ${quote(folder)}: ${message.source}[^\n]*\n$`));
    }
    writeFileSync(join(folder, 'config.json'), JSON.stringify(config));
    writeFileSync(join(folder, 'model.safetensors'), weights.subarray(0, weights.length - 100));
    refused(new RegExp(`^attnlab: ${quote(join(folder, 'model.safetensors'))}: [^\n]*\n$`));
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
});
