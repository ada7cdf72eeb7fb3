// train-loop.test.mjs — `attnlab train` and the Train tab take one training step (train/loop.c)
// on one corpus format (io/corpus.c) from one initialiser (model/init.c): on the built-in
// sample with the Train tab's tokenizer, for accum 1 and 2, the Train tab's C code
// (test_train_loop with the run's folder) ends with the CLI's weights bit for bit and its loss
// rows; its WebAssembly build (whose GEMM multiplies then adds where the native build fuses)
// gives the CLI's losses within LOSS_TOLERANCE. A tokenizer without MiniMind's <|im_start|> is
// refused, the token named.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT, run } from './lib/run.mjs';
import { loadCore } from './lib/wasm.mjs';

const CLI = join(ROOT, 'build', 'attnlab');
const work = mkdtempSync(join(tmpdir(), 'attnlab-train-loop-'));
process.on('exit', () => rmSync(work, { recursive: true, force: true }));
const TOKENIZER_PATH = join(ROOT, 'models', 'minimind-tokenizer', 'tokenizer.json');
const SAMPLE_PATH = join(ROOT, 'models', 'minimind-fortunes', 'train-sample.txt');
const STEPS = 6;
// The Train tab's first preset, small: its shape as flags of `attnlab train`.
const SHAPE = { hidden: 64, layers: 2, heads: 2, kv_heads: 2, ffn: 0, batch: 4, seq: 32, steps: STEPS, lr: 1e-3, seed: 42 };
// WebAssembly against loss.csv's 6 decimals, over 6 steps: measured 5.6e-7 at most (the
// printing's rounding, and multiply-then-add against the fused multiply-add carried through
// the steps); some 20 times that.
const LOSS_TOLERANCE = 1e-5;

const cut = join(work, 'cut.json');
test('the Train tab\'s tokenizer, as the CLI cuts it', () => {
  const r = run(CLI, ['cut-tokenizer', '--tokenizer', TOKENIZER_PATH, '--vocab', '292', '--out', cut]);
  assert.equal(r.status, 0, r.stderr);
});

// loss.csv's rows: [step, loss, lr, grad_norm, tokens_per_s, held_out_loss (NaN but at checkpoints)]
const rows = (dir) => readFileSync(join(dir, 'loss.csv'), 'utf8').trim().split('\n').slice(1)
  .map((line) => line.split(',').map((v) => (v === '' ? NaN : Number(v))));

for (const accum of [1, 2]) {
  test(`accum ${accum}: the Train tab's run is attnlab train's, natively bit for bit, in WebAssembly within ${LOSS_TOLERANCE}`, async () => {
    const dir = join(work, `run${accum}`);
    const flags = Object.entries(SHAPE).flatMap(([k, v]) => [`--${k.replace('_', '-')}`, String(v)]);
    let r = run(CLI, ['train', '--corpus', SAMPLE_PATH, '--tokenizer', cut, '--out', dir, '--accum', String(accum),
      '--checkpoint-every', '3', ...flags]);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stderr, /^corpus: \d+ documents, \d+ tokens; held out: the last \d+ documents/);
    // natively: the lab's C code with the run's settings (read from its train_state.safetensors)
    r = run(join(ROOT, 'build', 'tests', 'test_train_loop'), [TOKENIZER_PATH, SAMPLE_PATH, dir]);
    assert.equal(r.status, 0, `${r.stderr}\n${r.stdout}`);
    assert.match(r.stdout, new RegExp(`accum ${accum}: ${STEPS} steps, the weights equal the CLI's bit for bit`));
    // in WebAssembly: the page's binding on the same settings
    const core = await loadCore();
    const lab = core.createTrainLab({ ...core.trainDefaults(), ...SHAPE, accum, eval_every: 3, data: 'text' },
      new Uint8Array(readFileSync(TOKENIZER_PATH)), readFileSync(SAMPLE_PATH, 'utf8'));
    assert.equal(lab.step(STEPS), STEPS);
    const h = lab.history(0), want = rows(dir);
    assert.equal(want.length, STEPS);
    let worst = 0;
    for (let s = 0; s < STEPS; s++) {
      // loss.csv shows the rate to 6 significant digits (%.6g)
      assert.ok(Math.abs(h[s * 4 + 3] - want[s][2]) <= 5e-6 * want[s][2], `step ${s + 1}: lr ${h[s * 4 + 3]}, the CLI's ${want[s][2]}`);
      worst = Math.max(worst, Math.abs(h[s * 4] - want[s][1]));
    }
    const held = Math.abs(lab.heldOutLoss - want[STEPS - 1][5]);
    console.log(`accum ${accum}: WebAssembly's losses at most ${worst.toExponential(2)} from the CLI's, held-out ${held.toExponential(2)}`);
    assert.ok(worst <= LOSS_TOLERANCE, `the losses are ${worst} from the CLI's`);
    assert.ok(held <= LOSS_TOLERANCE, `the held-out loss ${lab.heldOutLoss} is ${held} from the CLI's ${want[STEPS - 1][5]}`);
    lab.free();
  });
}

test('train: a tokenizer without <|im_start|> is refused, the token named', () => {
  const r = run(CLI, ['train', '--corpus', SAMPLE_PATH, '--tokenizer', join(ROOT, 'models', 'stories260K', 'tok512.bin'),
    '--out', join(work, 'llama2c')]);
  assert.equal(r.status, 2, r.stderr);
  assert.match(r.stderr, /^attnlab: --corpus: the tokenizer has no <\|im_start\|> token: a corpus is MiniMind's documents/);
  assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
});
