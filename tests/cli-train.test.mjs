// cli-train.test.mjs — `attnlab train` as a learner runs it: the folder it writes is a MiniMind
// folder the other commands load (an attention-only one too, with --ffn 0); the same seed gives
// the same losses and weights, on 2 threads as on 1; a run stopped and resumed gives, step for step, what one run
// gives (the same loss.csv losses and the same model.safetensors bytes); Ctrl-C leaves a
// complete checkpoint; bad input is one line and exit 2. The numbers themselves (loss,
// gradients, AdamW) are checked against PyTorch by test_train.c.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT, run } from './lib/run.mjs';
import { readSafetensors } from './lib/safetensors.mjs';

const CLI = join(ROOT, 'build', 'attnlab');
const work = mkdtempSync(join(tmpdir(), 'attnlab-train-'));
process.on('exit', () => rmSync(work, { recursive: true, force: true }));

// A corpus of English and Chinese text, documents split by empty lines: a frozen copy of the
// repository's own README and page strings (tests/fixtures/train-corpus/head.txt, so that an
// edit of the README changes no batch), then the last 40 fortunes of the shipped sample: the
// held-out part (the last 5% of the documents) is fortunes.
const corpus = join(work, 'corpus.txt');
const fortunes = readFileSync(join(ROOT, 'models', 'minimind-fortunes', 'train-sample.txt'), 'utf8').split(/\n\n+/).slice(-40);
writeFileSync(corpus, [readFileSync(join(ROOT, 'tests', 'fixtures', 'train-corpus', 'head.txt'), 'utf8'), ...fortunes].join('\n\n'));
const SHAPE = ['--hidden', '32', '--layers', '2', '--heads', '4', '--kv-heads', '2', '--batch', '2', '--seq', '32', '--lr', '3e-3'];

function train(out, extra) {
  return run(CLI, ['train', '--corpus', corpus, '--out', out, ...SHAPE, ...extra]);
}
const losses = (dir) => readFileSync(join(dir, 'loss.csv'), 'utf8').trim().split('\n').slice(1).map((l) => l.split(',')[1]);

test('train: a MiniMind folder that generate and logits load, its loss falling, the same for the same seed', () => {
  const a = join(work, 'a'), b = join(work, 'b');
  let r = train(a, ['--steps', '30', '--seed', '3']);
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stderr, /step 30\/30 {2}loss [\d.]+ {2}\d+ tokens\/s {2}\d+ s left/);
  for (const f of ['config.json', 'model.safetensors', 'tokenizer.json', 'loss.csv', 'train_state.safetensors']) assert.ok(existsSync(join(a, f)), f);
  const csv = readFileSync(join(a, 'loss.csv'), 'utf8').trim().split('\n');
  assert.equal(csv[0].split(',').slice(0, 2).join(','), 'step,loss');
  assert.equal(csv.length, 31);
  const l = losses(a).map(Number);
  assert.ok(l.at(-1) < l[0] - 0.5, `the loss does not fall: ${l[0]} → ${l.at(-1)}`);
  const config = JSON.parse(readFileSync(join(a, 'config.json'), 'utf8'));
  assert.equal(config.hidden_size, 32);
  assert.equal(config.num_hidden_layers, 2);
  assert.equal(config.vocab_size, 6400);
  assert.equal(config.intermediate_size, 128, 'MiniMind\'s width for hidden 32: ceil(32π/64)·64');
  r = run(CLI, ['generate', '--model', a, '--prompt', 'The page', '--max-new-tokens', '8', '--temperature', '0']);
  assert.equal(r.status, 0, r.stderr);
  r = run(CLI, ['logits', '--model', a, '--ids', '1 2 3', '--out', join(work, 'l.safetensors')]);
  assert.equal(r.status, 0, r.stderr);
  // eval: the held-out loss beside the bigram baseline, on the same targets
  r = run(CLI, ['eval', '--model', a, '--corpus', corpus, '--seq', '32']);
  assert.equal(r.status, 0, r.stderr);
  const e = JSON.parse(r.stdout);
  assert.ok(e.targets > 100 && e.held_out_tokens > e.targets && e.train_tokens > 10 * e.held_out_tokens, r.stdout);
  assert.ok(e.model_loss > 0 && e.model_loss < l[0] + 1, r.stdout);
  assert.ok(e.bigram_loss > 0 && e.bigram_loss <= Math.min(e.bigram_add_k_loss, e.bigram_interpolated_loss) + 1e-9, r.stdout);
  r = run(CLI, ['eval', '--model', a, '--corpus', corpus, '--tokenizer', join(ROOT, 'models', 'stories260K', 'tok512.bin')]);
  assert.equal(r.status, 2);
  assert.match(r.stderr, /the tokenizer has 512 tokens but the model's vocabulary has 6400/);
  r = train(b, ['--steps', '30', '--seed', '3']);
  assert.equal(r.status, 0, r.stderr);
  assert.deepEqual(losses(b), losses(a));
  assert.ok(readFileSync(join(a, 'model.safetensors')).equals(readFileSync(join(b, 'model.safetensors'))), 'the same seed gave other weights');
  r = train(join(work, 'c'), ['--steps', '3', '--seed', '4']);
  assert.notDeepEqual(losses(join(work, 'c')), losses(a).slice(0, 3), 'another seed gave the same losses');
});

// On threads a run is the one-thread run, byte for byte: 3 steps of a model whose products are
// all split between the threads (hidden 128, 128 tokens a sequence: each of them above the
// pool's 2^18 multiply-adds, with two pairs of panels a thread), checkpointed at each step.
test('train --threads 2 writes the checkpoint and the losses of --threads 1, byte for byte', () => {
  const shape = ['--hidden', '128', '--layers', '2', '--heads', '4', '--kv-heads', '2', '--batch', '2', '--seq', '128', '--steps', '3'];
  const dirs = ['1', '2'].map((n) => {
    const dir = join(work, `threads-${n}`);
    const r = run(CLI, ['train', '--corpus', corpus, '--out', dir, ...shape, '--threads', n]);
    assert.equal(r.status, 0, r.stderr);
    return dir;
  });
  for (const f of ['model.safetensors', 'train_state.safetensors']) {
    assert.ok(readFileSync(join(dirs[0], f)).equals(readFileSync(join(dirs[1], f))), `${f}: --threads 2 differs from --threads 1`);
  }
  // every column but tokens/s: step, loss, lr, gradient norm, held-out loss
  const rows = (dir) => readFileSync(join(dir, 'loss.csv'), 'utf8').trim().split('\n').map((l) => l.split(',').filter((_, i) => i !== 4));
  assert.deepEqual(rows(dirs[1]), rows(dirs[0]));
});

// The held-out part of a corpus is its last 5% of documents (at least one), whatever separates
// them: an empty line, a line holding "%", several such lines in a row. 40 documents: the last
// 2 held out, each as <|im_start|> text <|im_end|>, its text up to the separator.
test('eval: the held-out part is the last 5% of the documents, however they are separated', () => {
  const dir = join(work, 'split-model');
  let r = train(dir, ['--steps', '1']);
  assert.equal(r.status, 0, r.stderr);
  const words = ['cat', 'dog', 'sun', 'sea', 'tree'];
  const docs = Array.from({ length: 40 }, (_, k) => `document ${k} says ${words.slice(k % 5).join(' ')}\n`);
  const seps = ['\n', '\n\n\n', '%\n', '%\n\n', '\n%\n'];
  const file = join(work, 'split.txt');
  writeFileSync(file, docs.map((d, k) => d + seps[k % seps.length]).join(''));
  r = run(CLI, ['eval', '--model', dir, '--corpus', file, '--seq', '32']);
  assert.equal(r.status, 0, r.stderr);
  const e = JSON.parse(r.stdout);
  const tokens = (text) => {
    const t = run(CLI, ['tokenize', '--tokenizer', join(dir, 'tokenizer.json'), '--text', text]);
    assert.equal(t.status, 0, t.stderr);
    return t.stdout.trim().split(/\s+/).length + 2;
  };
  const counts = docs.map(tokens);
  assert.equal(e.held_out_tokens, counts[38] + counts[39], r.stdout);
  assert.equal(e.train_tokens, counts.slice(0, 38).reduce((x, y) => x + y, 0), r.stdout);
});

// --ffn 0: MiniMind's attention-only shape (intermediate_size 0), its FFN weights kept, empty.
test('train --ffn 0: an attention-only MiniMind folder that inspect, generate and logits load', () => {
  const dir = join(work, 'attn-only');
  let r = train(dir, ['--ffn', '0', '--steps', '3']);
  assert.equal(r.status, 0, r.stderr);
  const config = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8'));
  assert.equal(config.intermediate_size, 0);
  assert.equal(config.use_moe, false);
  const { tensors } = readSafetensors(join(dir, 'model.safetensors'));
  for (const l of [0, 1]) {
    assert.deepEqual(tensors[`model.layers.${l}.mlp.gate_proj.weight`].shape, [0, 32]);
    assert.deepEqual(tensors[`model.layers.${l}.mlp.up_proj.weight`].shape, [0, 32]);
    assert.deepEqual(tensors[`model.layers.${l}.mlp.down_proj.weight`].shape, [32, 0]);
  }
  r = run(CLI, ['inspect', '--model', dir]);
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /\nffn none \(attention-only\), context 32768,/);
  assert.match(r.stdout, /\n {2}model\.layers\.1\.mlp\.down_proj\.weight F32 \[32, 0\]\n/);
  r = run(CLI, ['generate', '--model', dir, '--prompt', 'The page', '--max-new-tokens', '4', '--temperature', '0']);
  assert.equal(r.status, 0, r.stderr);
  r = run(CLI, ['logits', '--model', dir, '--ids', '1 2 3', '--out', join(work, 'attn-only.safetensors')]);
  assert.equal(r.status, 0, r.stderr);
});

// Ctrl-C during a run, then --resume: every step's loss and the final weights (bytes and all)
// are those of the run that never stopped.
test('train: Ctrl-C leaves a complete checkpoint; --resume goes on to exactly the uninterrupted run', async () => {
  const dir = join(work, 'int'), whole = join(work, 'whole');
  const settings = [...SHAPE, '--steps', '40', '--seed', '9', '--checkpoint-every', '7'];
  let r = run(CLI, ['train', '--corpus', corpus, '--out', whole, ...settings]);
  assert.equal(r.status, 0, r.stderr);
  const child = spawn(CLI, ['train', '--corpus', corpus, '--out', dir, ...settings], { stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  child.stderr.on('data', (d) => { err += d; });
  await new Promise((resolve) => {
    const timer = setInterval(() => {
      if (/step 1[0-9]\//.test(err)) { clearInterval(timer); child.kill('SIGINT'); resolve(); }
    }, 5);
  });
  const code = await new Promise((resolve) => child.on('close', (c) => resolve(c)));
  assert.equal(code, 130, err);
  const stopped = Number(err.match(/interrupted after step (\d+)/)[1]);
  assert.ok(stopped >= 10 && stopped < 40, `stopped at ${stopped}`);
  assert.deepEqual(readdirSync(dir).filter((f) => /\.tmp|\.next/.test(f)), [], 'a temporary file was left');
  // what it left loads
  r = run(CLI, ['generate', '--model', dir, '--ids', '1 2', '--max-new-tokens', '3', '--temperature', '0']);
  assert.equal(r.status, 0, r.stderr);
  r = run(CLI, ['train', '--corpus', corpus, '--out', dir, ...settings, '--resume']);
  assert.equal(r.status, 0, r.stderr);
  assert.deepEqual(losses(dir), losses(whole));
  assert.ok(readFileSync(join(dir, 'model.safetensors')).equals(readFileSync(join(whole, 'model.safetensors'))),
    'the resumed run ended with other weights');
  assert.ok(readFileSync(join(dir, 'train_state.safetensors')).equals(readFileSync(join(whole, 'train_state.safetensors'))));
});

// Two runs into one folder: the second stops with one line while the first trains on, and the
// first ends as a run alone gives (its loss.csv, its weights). The lock is the system's: once the
// first has ended, the folder is free again (--resume takes it).
test('train: a second run into a folder another run is writing into stops with one line', async () => {
  const dir = join(work, 'busy'), alone = join(work, 'alone');
  const settings = [...SHAPE, '--steps', '40', '--seed', '5'];
  let r = run(CLI, ['train', '--corpus', corpus, '--out', alone, ...settings]);
  assert.equal(r.status, 0, r.stderr);
  const child = spawn(CLI, ['train', '--corpus', corpus, '--out', dir, ...settings], { stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  child.stderr.on('data', (d) => { err += d; });
  const closed = new Promise((resolve) => child.on('close', (c) => resolve(c)));
  await new Promise((resolve, reject) => {
    const guard = setTimeout(() => reject(new Error(`the first run never reached step 2: ${err}`)), 120000);
    const timer = setInterval(() => {
      if (/step [2-9]\//.test(err)) { clearInterval(timer); clearTimeout(guard); resolve(); }
    }, 5);
  });
  for (const extra of [['--resume'], ['--force']]) {
    r = run(CLI, ['train', '--corpus', corpus, '--out', dir, ...settings, ...extra]);
    if (/step 40\/40/.test(err)) break; // the first run ended meanwhile: nothing left to race
    assert.equal(r.status, 1, `${extra}: ${r.stderr}`);
    assert.match(r.stderr, /^attnlab: --out '.*busy': another attnlab run is writing into this folder now\n$/);
  }
  // convert --force into it waits its turn the same way
  r = run(CLI, ['convert', '--model', alone, '--out', dir, '--force']);
  if (!/step 40\/40/.test(err)) {
    assert.equal(r.status, 1, r.stderr);
    assert.match(r.stderr, /^attnlab: --out '.*busy': another attnlab run is writing into this folder now\n$/);
  }
  assert.equal(await closed, 0, err);
  assert.deepEqual(losses(dir), losses(alone));
  assert.ok(readFileSync(join(dir, 'model.safetensors')).equals(readFileSync(join(alone, 'model.safetensors'))));
  r = run(CLI, ['train', '--corpus', corpus, '--out', dir, ...settings, '--resume']);
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stderr, /has done its 40 steps: nothing to do/);
});

// --vocab V with no tokenizer: a byte-level BPE tokenizer of V tokens trained on the corpus first
// (train-tokenizer's), which the folder then holds and the model is shaped by.
test('train --vocab: the tokenizer trained on the corpus, the model of its size', () => {
  const dir = join(work, 'vocab');
  let r = run(CLI, ['train', '--corpus', corpus, '--out', dir, '--vocab', '800', ...SHAPE, '--steps', '4']);
  assert.equal(r.status, 0, r.stderr);
  const tok = JSON.parse(readFileSync(join(dir, 'tokenizer.json'), 'utf8'));
  assert.equal(Object.keys(tok.model.vocab).length, 800);
  assert.equal(JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8')).vocab_size, 800);
  // the same tokenizer as train-tokenizer trains on the same text
  const alone = join(work, 'alone.json');
  r = run(CLI, ['train-tokenizer', '--corpus', corpus, '--vocab', '800', '--out', alone]);
  assert.equal(r.status, 0, r.stderr);
  assert.ok(readFileSync(alone).equals(readFileSync(join(dir, 'tokenizer.json'))), 'another tokenizer than train-tokenizer\'s');
  r = run(CLI, ['generate', '--model', dir, '--prompt', 'The page', '--max-new-tokens', '4', '--temperature', '0']);
  assert.equal(r.status, 0, r.stderr);
  r = run(CLI, ['train', '--corpus', corpus, '--out', join(work, 'vocab2'), '--vocab', '900', '--tokenizer', join(ROOT, 'models', 'minimind-tokenizer', 'tokenizer.json')]);
  assert.equal(r.status, 2);
  assert.match(r.stderr, /--vocab 900, but the tokenizer has 6400 tokens/);
});

test('train: bad input is one line and exit 2, and writes nothing', () => {
  const cases = [
    [['--corpus', join(work, 'missing.txt'), '--out', join(work, 'x1')], /missing\.txt/],
    [['--out', join(work, 'x2')], /needs --corpus FILE and --out DIR/],
    [['--corpus', corpus, '--out', join(work, 'x3'), '--hidden', '30', '--heads', '4'], /not a multiple of --heads/],
    [['--corpus', corpus, '--out', join(work, 'x4'), '--steps', '0'], /--steps expects a whole number/],
    [['--corpus', corpus, '--out', join(work, 'x5'), '--bogus', '1'], /unknown option '--bogus'/],
    [['--corpus', corpus, '--out', join(work, 'x7'), '--moe', '4', '--ffn', '0'], /--moe needs experts of some width: --ffn 0/],
    [['--corpus', corpus, '--out', join(work, 'nothing-here'), '--resume'], /no such folder to resume from/],
    [['--corpus', corpus, '--out', join(work, 'x9'), '--threads', '0'], /--threads expects a count from 1 to \d+/],
  ];
  const tiny = join(work, 'tiny.txt');
  writeFileSync(tiny, 'a b c\n');
  // one document, too short for a window of 65 tokens to train on and one held out
  cases.push([['--corpus', tiny, '--out', join(work, 'x6'), '--seq', '64'], /--corpus: 6 tokens are too few: a corpus of fewer than 20 documents needs at least 130 \(a window of 65 tokens/]);
  // 40 documents, split by documents, the 2 held out shorter than a window
  const short40 = join(work, 'short40.txt');
  writeFileSync(short40, Array.from({ length: 40 }, (_, k) => `d${k}`).join('\n\n'));
  cases.push([['--corpus', short40, '--out', join(work, 'x8'), '--seq', '64'], /held out\) are too few for windows of 64/]);
  for (const [args, message] of cases) {
    const r = run(CLI, ['train', ...args]);
    assert.equal(r.status, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, message);
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    const out = args[args.indexOf('--out') + 1];
    assert.ok(!existsSync(out), `${out} was made`);
  }
});
