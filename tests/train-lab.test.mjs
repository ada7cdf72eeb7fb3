// train-lab.test.mjs — the Train tab's lab in WebAssembly (al_train_lab_*, through
// web/attnlab-api.js on web/gen/attnlab.wasm), against the native CLI: the model it downloads
// is a MiniMind folder that `attnlab inspect` reads as the shape asked, whose attention over the
// probe (`attnlab logits`) is the pattern the tab draws and whose roles (the model view's, on
// the same files) are the tab's last evaluation; the tokenizer it downloads is `attnlab
// cut-tokenizer`'s; the rows it sends are one per step and per evaluation; the probe's losses
// with heads switched off are the CLI's `logits --ablate` on the downloaded folder; the
// defaults and presets are accepted; bad settings are refused with the core's message.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT, run } from './lib/run.mjs';
import { maxDiff, readSafetensors } from './lib/safetensors.mjs';
import { loadCore } from './lib/wasm.mjs';
import { probeHalves } from './lib/probe-loss.mjs';

const core = await loadCore();
const CLI = join(ROOT, 'build', 'attnlab');
const work = mkdtempSync(join(tmpdir(), 'attnlab-train-lab-'));
process.on('exit', () => rmSync(work, { recursive: true, force: true }));
const TOKENIZER = new Uint8Array(readFileSync(join(ROOT, 'models', 'minimind-tokenizer', 'tokenizer.json')));
const SAMPLE = readFileSync(join(ROOT, 'models', 'minimind-fortunes', 'train-sample.txt'), 'utf8');

function cli(args) {
  const r = run(CLI, args);
  assert.equal(r.status, 0, `attnlab ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

const small = (changes = {}) => ({ ...core.trainDefaults(), batch: 4, seq: 48, steps: 30, eval_every: 10, ...changes });

function writeFolder(lab, name) {
  const dir = join(work, name);
  mkdirSync(dir, { recursive: true });
  for (const [which, file] of [['config', 'config.json'], ['model', 'model.safetensors'], ['tokenizer', 'tokenizer.json']]) writeFileSync(join(dir, file), lab.file(which));
  return dir;
}

test('the defaults are the Train tab\'s first preset: a 2-layer attention-only MiniMind on the repeated task', () => {
  const d = core.trainDefaults();
  assert.deepEqual({ layers: d.layers, ffn: d.ffn, data: d.data, vocab: d.vocab }, { layers: 2, ffn: 0, data: 'repeat', vocab: 292 });
  const lab = core.createTrainLab(d, TOKENIZER);
  assert.equal(lab.hparams.ffn_hidden, 0);
  assert.equal(lab.hparams.n_layers, 2);
  assert.equal(lab.probeLen, 48);
  assert.equal(lab.evals(0).length, lab.evalWidth, 'the roles before any step');
  lab.free();
});

test('rows: one per step and one per evaluation, sent once each', () => {
  const lab = core.createTrainLab(small(), TOKENIZER);
  assert.equal(lab.step(12), 12);
  const h = lab.history(0);
  assert.equal(h.length, 12 * lab.columns.length);
  assert.deepEqual(lab.columns, ['loss', 'first_half', 'repeated_half', 'lr']);
  assert.equal(lab.history(12).length, 0);
  assert.equal(lab.evals(0).length, 2 * lab.evalWidth, 'steps 0 and 10');
  assert.deepEqual([lab.evals(0)[0], lab.evals(1)[0]], [0, 10]);
  assert.equal(lab.step(100), 30, 'no step past the run\'s length');
  assert.equal(lab.evals(2).length, 2 * lab.evalWidth, 'steps 20 and 30');
  assert.equal(lab.tokensDone, 30 * 4 * 48);
  const batch = lab.lastBatch();
  assert.equal(batch.length, 4 * 48);
  lab.free();
});

test('the downloaded folder: the CLI loads it; its attention over the probe is the pattern; its roles are the last evaluation', () => {
  const lab = core.createTrainLab(small(), TOKENIZER);
  lab.step(30);
  const dir = writeFolder(lab, 'repeat');
  const inspect = cli(['inspect', '--model', dir]);
  assert.match(inspect, /ffn none \(attention-only\)/);
  assert.match(inspect, /vocab 292/);
  const probe = lab.probe();
  const out = join(work, 'probe.safetensors');
  cli(['logits', '--model', dir, '--ids', Array.from(probe).join(' '), '--out', out]);
  const t = readSafetensors(out).tensors;
  const T = probe.length, H = lab.hparams.n_heads;
  for (let l = 0; l < lab.hparams.n_layers; l++) {
    for (let h = 0; h < H; h++) {
      const want = t[`attn.${l}`].data.subarray(h * T * T, (h + 1) * T * T);
      const { worst } = maxDiff(lab.attention(l, h), want);
      assert.ok(worst <= 1e-5, `layer ${l} head ${h}: the pattern is ${worst} from the CLI's attention`);
    }
  }
  // the model view (a model lab on the downloaded files) measures the same roles
  const view = core.createModelLab({ model: lab.file('model'), config: lab.file('config'), tokenizer: lab.file('tokenizer'), kind: 'safetensors', context: 48 });
  const last = lab.evals(0).slice(-lab.evalWidth);
  const { worst } = maxDiff(last.subarray(1), view.roles());
  assert.ok(worst <= 1e-5, `roles ${worst} from the model view's`);
  assert.equal(lab.inductionMax, Math.max(...Array.from({ length: lab.hparams.n_layers * H }, (_, i) => last[1 + i * 4 + 3])));
  view.free();
  // the tokenizer is MiniMind's cut to the vocabulary, as `attnlab cut-tokenizer` cuts it
  const cut = join(work, 'cut.json');
  cli(['cut-tokenizer', '--tokenizer', join(ROOT, 'models', 'minimind-tokenizer', 'tokenizer.json'), '--vocab', '292', '--out', cut]);
  assert.deepEqual(Buffer.from(lab.file('tokenizer')), readFileSync(cut));
  lab.free();
});

test('heads switched off: the probe\'s losses are the CLI\'s logits --ablate; none off, the plain ones; training unchanged', () => {
  const lab = core.createTrainLab(small(), TOKENIZER), twin = core.createTrainLab(small(), TOKENIZER);
  lab.setAblation([[1, 1], [0, 1], [1, 1]]);
  assert.deepEqual(lab.ablation(), [[0, 1], [1, 1]]);
  lab.step(30);
  twin.step(30);
  assert.deepEqual(lab.history(0), twin.history(0), 'the heads off changed the training');
  const p = lab.probeLoss();
  assert.deepEqual(Object.keys(p), ['step', 'first_half', 'repeated_half', 'first_half_off', 'repeated_half_off']);
  assert.equal(p.step, 30);
  const dir = writeFolder(lab, 'ablated'), probe = lab.probe(), out = join(work, 'ablated.safetensors');
  for (const [ablate, keys] of [[['--ablate', '0.1,1.1'], ['first_half_off', 'repeated_half_off']], [[], ['first_half', 'repeated_half']]]) {
    cli(['logits', '--model', dir, '--ids', Array.from(probe).join(' '), '--out', out, ...ablate]);
    const want = probeHalves(readSafetensors(out).tensors.logits.data, probe, lab.hparams.vocab);
    keys.forEach((k, i) => assert.ok(Math.abs(p[k] - want[i]) <= 1e-5, `${k} ${p[k]}, the CLI's ${ablate.join(' ') || 'logits'} ${want[i]}`));
  }
  lab.setAblation([]);
  const none = lab.probeLoss();
  assert.deepEqual([none.first_half_off, none.repeated_half_off], [none.first_half, none.repeated_half], 'none off: not the plain forward');
  assert.deepEqual(lab.ablation(), []);
  assert.throws(() => lab.setAblation([[2, 0]]), /layer must be a whole number between 0 and 1/);
  assert.throws(() => lab.setAblation([[0]]), /each head to switch off is \[layer, head\]/);
  lab.free();
  twin.free();
});

test('text: the built-in sample trains; the halves are not measured', () => {
  const lab = core.createTrainLab(small({ data: 'text', ffn: -1 }), TOKENIZER, SAMPLE);
  lab.step(3);
  const h = lab.history(0);
  assert.ok(Number.isFinite(h[0]) && Number.isNaN(h[1]) && Number.isNaN(h[2]));
  assert.ok(lab.hparams.ffn_hidden > 0);
  const dir = writeFolder(lab, 'text');
  assert.match(cli(['inspect', '--model', dir]), /ffn 256/);
  lab.free();
});

test('bad settings: the core\'s message, no lab', () => {
  const cases = [
    [{ heads: 3 }, /3 heads cannot share 2 KV heads/],
    [{ hidden: 70, heads: 2, kv_heads: 2 }, /even size/],
    [{ vocab: 100 }, /vocabulary must be between 292 and 6400/],
    [{ lr: 2 }, /learning rate/],
    [{ data: 'text' }, /paste more text or shorten the sequence/],
  ];
  for (const [changes, message] of cases) assert.throws(() => core.createTrainLab(small(changes), TOKENIZER, 'too short'), message);
  assert.throws(() => core.createTrainLab(small({ data: 'poems' }), TOKENIZER), /unknown training data 'poems'/);
  assert.throws(() => core.createTrainLab(small(), new TextEncoder().encode('{}')), /tokenizer|model/i);
  const lab = core.createTrainLab(small(), TOKENIZER);
  assert.throws(() => lab.attention(2, 0), /layer/);
  assert.throws(() => lab.file('weights'), /unknown file 'weights'/);
  // rows, ids and bytes out of range: the core's own words, naming what there is
  assert.deepEqual(Array.from(lab.lastBatch()), []); // no step yet: nothing seen
  assert.throws(() => lab.history(1), /train lab history: no rows from 1 \(there are 0\)/);
  assert.throws(() => lab.evals(9), /train lab evaluations: no rows from 9 \(there are 1\)/);
  assert.throws(() => lab.piece(99999), /train lab: no token id 99999 in the vocabulary of 292/);
  lab.free();
  assert.throws(() => lab.step(1), /already freed/);
});
