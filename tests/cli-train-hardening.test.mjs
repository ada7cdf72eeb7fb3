// cli-train-hardening.test.mjs — what `attnlab train` does when a run is stopped, killed or
// pointed at the wrong folder: SIGINT while a checkpoint is being written still ends with that
// checkpoint complete (exit 130, its step that of loss.csv's last row, no temporary file left);
// what a killed run left (NAME.next, NAME.tmp.XXXXXX) is removed by the next run; --out refuses a
// folder holding a run without --resume or --force, and an input train would write whatever the
// flags; --resume refuses a checkpoint that cannot be (moments negative or not finite, weights not
// finite, a step that is not one of the run's) without touching it, and a run whose weights stop
// being finite keeps the last good checkpoint; a one-document corpus holds out its last 5% of
// tokens and says so. Runs are tiny: a few steps of a model of a few MB.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import {
  closeSync, existsSync, linkSync, mkdirSync, mkdtempSync, openSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT, run } from './lib/run.mjs';
import { readSafetensors, writeSafetensors } from './lib/safetensors.mjs';

const CLI = join(ROOT, 'build', 'attnlab');
const work = mkdtempSync(join(tmpdir(), 'attnlab-train-hard-'));
process.on('exit', () => rmSync(work, { recursive: true, force: true }));

// 40 fortunes of the shipped sample: documents separated by empty lines, the last 2 held out.
const corpus = join(work, 'corpus.txt');
const fortunes = readFileSync(join(ROOT, 'models', 'minimind-fortunes', 'train-sample.txt'), 'utf8').split(/\n\n+/).slice(0, 40);
writeFileSync(corpus, fortunes.join('\n\n'));
const SHAPE = ['--hidden', '32', '--layers', '1', '--heads', '4', '--kv-heads', '2', '--batch', '2', '--seq', '16'];

const train = (out, extra, file = corpus) => run(CLI, ['train', '--corpus', file, '--out', out, ...SHAPE, ...extra]);
const temporaries = (dir) => readdirSync(dir).filter((f) => /\.next|\.tmp\./.test(f));
const lastRow = (dir) => Number(readFileSync(join(dir, 'loss.csv'), 'utf8').trim().split('\n').at(-1).split(',')[0]);
const stepOf = (dir, file) => readSafetensors(join(dir, file)).metadata.step;
const bytes = (dir) => Object.fromEntries(readdirSync(dir).map((f) => [f, readFileSync(join(dir, f))]));
function assertOneLine(r, status, message) {
  assert.equal(r.status, status, r.stderr);
  assert.match(r.stderr, message);
  assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
}

// A model of a few MB (hidden 256: the embedding alone 6.5 MB), a checkpoint after every step:
// most of the run is spent writing checkpoints. SIGINT is sent the moment a given file of the
// checkpoint under way shows in the folder (polled without pause): while the weights' temporary
// file is written, once model.safetensors.next is complete, while the state's is written.
test('train: SIGINT while a checkpoint is written ends the run with that checkpoint, exit 130, nothing temporary left', async () => {
  const moments = [/^model\.safetensors\.next\.tmp\./, /^model\.safetensors\.next$/, /^train_state\.safetensors\.next\.tmp\./];
  for (const [k, moment] of moments.entries()) {
    const dir = join(work, `sigint-${k}`), log = join(work, `sigint-${k}.log`);
    const fd = openSync(log, 'w');
    const child = spawn(CLI, ['train', '--corpus', corpus, '--out', dir, '--hidden', '256', '--layers', '1', '--heads', '4',
      '--kv-heads', '2', '--batch', '1', '--seq', '16', '--steps', '1000', '--checkpoint-every', '1'], { stdio: ['ignore', 'ignore', fd] });
    closeSync(fd);
    const closed = new Promise((resolve) => child.on('close', (code, signal) => resolve({ code, signal })));
    const deadline = Date.now() + 120000; // a hang guard only
    let sent = false;
    while (!sent && Date.now() < deadline && child.exitCode === null) {
      let files = [];
      try { files = readdirSync(dir); } catch { /* not made yet */ }
      if (files.some((f) => moment.test(f))) sent = child.kill('SIGINT');
    }
    assert.ok(sent, `${moment}: never seen`);
    const { code, signal } = await closed;
    const err = readFileSync(log, 'utf8');
    assert.equal(code, 130, `${moment}: exit ${code} (signal ${signal}): ${err}`);
    const stopped = Number(err.match(/interrupted after step (\d+)/)?.[1]);
    assert.ok(stopped >= 1, err);
    assert.deepEqual(temporaries(dir), [], `${moment}: left behind`);
    assert.equal(stepOf(dir, 'model.safetensors'), String(stopped), `${moment}: the weights`);
    assert.equal(stepOf(dir, 'train_state.safetensors'), String(stopped), `${moment}: the optimizer state`);
    assert.equal(lastRow(dir), stopped, `${moment}: loss.csv`);
    const r = run(CLI, ['generate', '--model', dir, '--ids', '1 2', '--max-new-tokens', '2', '--temperature', '0']);
    assert.equal(r.status, 0, r.stderr);
  }
});

// SIGKILL cannot clean up: what it can leave is removed by the next run into the folder (with
// --resume, with --force, or a new run into a folder that holds nothing else of a run), and
// nothing else is.
test('train: what a killed run left (*.next, *.tmp.XXXXXX) is removed by the next run, and nothing else', () => {
  const leftovers = ['model.safetensors.next', 'train_state.safetensors.next', 'model.safetensors.next.tmp.Ab12Cd',
    'train_state.safetensors.tmp.x9y8z7', 'loss.csv.tmp.QQQQQQ', 'config.json.tmp.a1b2c3', 'tokenizer.json.tmp.zzzzzz'];
  const kept = ['notes.tmp.123456', 'model.safetensors.tmp.toolong7', 'model.safetensors.old', 'my.next'];
  const plant = (dir) => { for (const f of [...leftovers, ...kept]) writeFileSync(join(dir, f), 'x'.repeat(1000)); };
  const dir = join(work, 'stale');
  let r = train(dir, ['--steps', '2']);
  assert.equal(r.status, 0, r.stderr);
  // and the rows loss.csv got past the checkpoint (step 2), a row cut short among them
  writeFileSync(join(dir, 'loss.csv'), `${readFileSync(join(dir, 'loss.csv'), 'utf8')}3,9.9,0,0,0,\n4,9.`);
  for (const extra of [['--steps', '3', '--resume'], ['--steps', '2', '--force']]) {
    plant(dir);
    r = train(dir, extra);
    assert.equal(r.status, 0, `${extra}: ${r.stderr}`);
    assert.deepEqual(readdirSync(dir).filter((f) => leftovers.includes(f)), [], `${extra}: not removed`);
    for (const f of kept) assert.ok(existsSync(join(dir, f)), `${extra}: ${f} was removed`);
    const rows = readFileSync(join(dir, 'loss.csv'), 'utf8').split('\n');
    assert.deepEqual(rows.slice(1, -1).map((l) => l.split(',')[0]), ['1', '2', '3'].slice(0, Number(extra[1])), `${extra}: ${rows}`);
    assert.ok(!rows.some((l) => l.startsWith('3,9.9') || l.startsWith('4,')), `${extra}: rows past the checkpoint kept`);
  }
  // a folder holding only leftovers (a run killed before its first file): a new run takes it
  const early = join(work, 'stale-early');
  mkdirSync(early);
  plant(early);
  r = train(early, ['--steps', '1']);
  assert.equal(r.status, 0, r.stderr);
  assert.deepEqual(temporaries(early).filter((f) => leftovers.includes(f)), []);
});

test('train --out: a folder holding a run is refused (its files untouched) without --resume or --force', () => {
  const dir = join(work, 'taken');
  let r = train(dir, ['--steps', '2', '--seed', '1']);
  assert.equal(r.status, 0, r.stderr);
  const before = bytes(dir);
  r = train(dir, ['--steps', '2', '--seed', '2']);
  assertOneLine(r, 2, /--out '.*taken' already holds a run \(config\.json\): --resume goes on with it, --force replaces it/);
  assert.deepEqual(bytes(dir), before);
  // any one of the run's files is enough
  for (const f of ['config.json', 'model.safetensors', 'train_state.safetensors', 'tokenizer.json', 'loss.csv']) {
    const one = join(work, `taken-${f}`);
    mkdirSync(one);
    writeFileSync(join(one, f), 'mine');
    r = train(one, ['--steps', '1']);
    assertOneLine(r, 2, new RegExp(`already holds a run \\(${f.replace('.', '\\.')}\\)`));
    assert.equal(readFileSync(join(one, f), 'utf8'), 'mine');
    assert.deepEqual(readdirSync(one), [f]);
  }
  r = train(dir, ['--steps', '2', '--resume', '--force']);
  assertOneLine(r, 2, /--resume goes on with the run in --out, --force replaces it: give one of them/);
  // --force: a new run (another seed, other weights) in place of the old
  r = train(dir, ['--steps', '2', '--seed', '2', '--force']);
  assert.equal(r.status, 0, r.stderr);
  assert.ok(!readFileSync(join(dir, 'model.safetensors')).equals(before['model.safetensors']), 'the old weights stayed');
  assert.equal(readFileSync(join(dir, 'loss.csv'), 'utf8').trim().split('\n').length, 3);
});

// --force takes the old run's checkpoint away before it writes the new config.json: a run killed
// before its first checkpoint never leaves the new config beside the old weights.
test('train --force: killed before its first checkpoint, the folder holds no weights of the old run', async () => {
  const dir = join(work, 'forced');
  const r = train(dir, ['--steps', '2']);
  assert.equal(r.status, 0, r.stderr);
  const child = spawn(CLI, ['train', '--corpus', corpus, '--out', dir, '--hidden', '256', '--layers', '4', '--heads', '4',
    '--kv-heads', '2', '--batch', '4', '--seq', '64', '--steps', '1000', '--force'], { stdio: 'ignore' });
  const closed = new Promise((resolve) => child.on('close', resolve));
  const deadline = Date.now() + 120000; // a hang guard only
  let killed = false;
  while (!killed && Date.now() < deadline && child.exitCode === null) {
    let log = '';
    try { log = readFileSync(join(dir, 'loss.csv'), 'utf8'); } catch { /* between two writes */ }
    if (log.startsWith('step,') && log.trim().split('\n').length === 1) killed = child.kill('SIGKILL');
  }
  await closed;
  assert.ok(killed, 'the new run was never seen starting');
  assert.equal(JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8')).hidden_size, 256);
  assert.ok(!existsSync(join(dir, 'model.safetensors')) || stepOf(dir, 'model.safetensors') !== '2', 'the old weights beside the new config');
  assert.ok(!existsSync(join(dir, 'train_state.safetensors')) || stepOf(dir, 'train_state.safetensors') !== '2');
});

// The corpus or the tokenizer as one of the files the run writes, by another name (a hard link,
// a symbolic link): refused even with --force or --resume, nothing changed.
test('train --out: an input that is one of the files train writes is refused, whatever the flags', () => {
  const dir = join(work, 'inputs');
  let r = train(dir, ['--steps', '2']);
  assert.equal(r.status, 0, r.stderr);
  const text = join(work, 'inputs-corpus.txt');
  writeFileSync(text, readFileSync(corpus));
  const cases = [
    ['loss.csv', 'link', ['--force'], '--corpus'],
    ['loss.csv', 'symlink', ['--resume', '--steps', '3'], '--corpus'],
    ['model.safetensors.next', 'link', ['--resume', '--steps', '3'], '--corpus'],
    ['config.json', 'link', ['--force'], '--corpus'],
  ];
  for (const [name, how, flags, flag] of cases) {
    rmSync(join(dir, name), { force: true });
    (how === 'link' ? linkSync : symlinkSync)(text, join(dir, name));
    const before = bytes(dir);
    r = train(dir, flags, text);
    assertOneLine(r, 2, new RegExp(`${flag} '.*inputs-corpus\\.txt' is '.*inputs/${name.replace(/\./g, '\\.')}', a file train writes: refusing to overwrite an input`));
    assert.deepEqual(bytes(dir), before, `${name}: the folder changed`);
    rmSync(join(dir, name));
  }
  assert.equal(readFileSync(text, 'utf8'), readFileSync(corpus, 'utf8'));
  // the tokenizer given, the folder's own tokenizer.json of a new run
  r = train(join(work, 'inputs2'), ['--steps', '1']);
  assert.equal(r.status, 0, r.stderr);
  const tok = join(work, 'inputs2', 'tokenizer.json');
  r = run(CLI, ['train', '--corpus', corpus, '--out', join(work, 'inputs2'), '--tokenizer', tok, ...SHAPE, '--steps', '1', '--force']);
  assertOneLine(r, 2, /--tokenizer '.*inputs2\/tokenizer\.json' is '.*inputs2\/tokenizer\.json', a file train writes/);
  // resuming with the run's own tokenizer (read, not written) is the normal case
  r = run(CLI, ['train', '--corpus', corpus, '--out', join(work, 'inputs2'), '--tokenizer', tok, ...SHAPE, '--steps', '2', '--resume']);
  assert.equal(r.status, 0, r.stderr);
});

// A checkpoint at step 4 of 8, its files changed one way each: --resume refuses it with one line
// naming what is wrong, and writes nothing (every file of the folder keeps its bytes).
test('train --resume: a checkpoint that cannot be is refused, the folder untouched', () => {
  let r = train(join(work, 'half'), ['--steps', '4']);
  assert.equal(r.status, 0, r.stderr);
  const half = join(work, 'half');
  const state = readSafetensors(join(half, 'train_state.safetensors'));
  const model = readSafetensors(join(half, 'model.safetensors'));
  const changed = (file, st, name, index, value, metadata = st.metadata) => (dir) => {
    const tensors = structuredClone(st.tensors);
    if (name) tensors[name].data[index] = value;
    writeSafetensors(join(dir, file), tensors, metadata);
  };
  const cases = [
    ['a negative second moment', changed('train_state.safetensors', state, 'adamw.v', 37, -0.5),
      /train_state\.safetensors': adamw\.v\[37\] \(model\.embed_tokens\.weight\[37\]\) is -0\.5: a second moment is finite and never negative/],
    ['a NaN second moment', changed('train_state.safetensors', state, 'adamw.v', 5, NaN), /train_state\.safetensors': tensor 'adamw\.v': .* is NaN/],
    ['a NaN first moment', changed('train_state.safetensors', state, 'adamw.m', 9, NaN), /train_state\.safetensors': tensor 'adamw\.m': .* is NaN/],
    ['an infinite first moment', changed('train_state.safetensors', state, 'adamw.m', 9, -Infinity), /tensor 'adamw\.m': .* is -inf/],
    ['an infinite weight', changed('model.safetensors', model, 'model.norm.weight', 3, Infinity), /model\.safetensors': tensor 'model\.norm\.weight': .* is \+inf/],
  ];
  for (const step of ['abc', '123456789012345678901', '-1', '9', '4.0', '']) {
    cases.push([`step '${step}'`, (dir) => {
      changed('model.safetensors', model, null, 0, 0, { ...model.metadata, step })(dir);
      changed('train_state.safetensors', state, null, 0, 0, { ...state.metadata, step })(dir);
    }, new RegExp(`the checkpoint in '.*' is at step '${step.replace('.', '\\.')}', not a whole number from 0 to --steps 8`)]);
  }
  cases.push(['steps of two checkpoints', changed('model.safetensors', model, null, 0, 0, { ...model.metadata, step: '3' }),
    /the weights and the optimizer state in '.*' are of different steps \('3', '4'\)/]);
  for (const [what, spoil, message] of cases) {
    const dir = join(work, `spoilt-${what.replace(/\W+/g, '-')}`);
    mkdirSync(dir);
    for (const f of readdirSync(half)) writeFileSync(join(dir, f), readFileSync(join(half, f)));
    spoil(dir);
    const before = bytes(dir);
    r = train(dir, ['--steps', '8', '--checkpoint-every', '1', '--resume']);
    assertOneLine(r, 2, message);
    assert.deepEqual(bytes(dir), before, `${what}: the folder changed`);
  }
  // the checkpoint itself goes on
  r = train(half, ['--steps', '8', '--checkpoint-every', '4', '--resume']);
  assert.equal(r.status, 0, r.stderr);
  assert.equal(stepOf(half, 'model.safetensors'), '8');
  // at step == --steps: nothing to do, said on one line, exit 0, nothing written
  const before = bytes(half);
  r = train(half, ['--steps', '8', '--resume']);
  assertOneLine(r, 0, /the run in '.*half' has done its 8 steps: nothing to do/);
  assert.deepEqual(bytes(half), before);
});

// Moments that are finite and non-negative but make the next step's weights infinite (a first
// moment of 3e38 with a second of 0): the run stops at that step with one line, exit 2, and the
// checkpoint it resumed from keeps its bytes.
test('train: a step whose weights are not finite stops the run; the last good checkpoint stays', () => {
  const dir = join(work, 'blowup');
  let r = train(dir, ['--steps', '3']);
  assert.equal(r.status, 0, r.stderr);
  const state = readSafetensors(join(dir, 'train_state.safetensors'));
  state.tensors['adamw.m'].data.fill(3e38);
  state.tensors['adamw.v'].data.fill(0);
  writeSafetensors(join(dir, 'train_state.safetensors'), state.tensors, state.metadata);
  const before = bytes(dir);
  r = train(dir, ['--steps', '6', '--checkpoint-every', '1', '--resume']);
  assert.equal(r.status, 2, r.stderr);
  const errors = r.stderr.split('\n').filter((l) => l.startsWith('attnlab:'));
  assert.equal(errors.length, 1, r.stderr);
  assert.match(errors[0], /step 4: the weights are not finite: .*\[\d+\] is -?inf; the checkpoint of step 3 is kept/);
  assert.ok(readFileSync(join(dir, 'model.safetensors')).equals(before['model.safetensors']));
  assert.ok(readFileSync(join(dir, 'train_state.safetensors')).equals(before['train_state.safetensors']));
  assert.deepEqual(temporaries(dir), []);
});

// A plain text file with no empty line is one document: its last 5% of tokens held out (at least
// one window of --seq + 1), said before the progress line, by eval too; too short, one line
// naming the minimum.
test('train: a one-document corpus trains on its first 95% of tokens; too short names the minimum', () => {
  const one = join(work, 'one.txt');
  writeFileSync(one, fortunes.map((f) => f.replace(/\n+/g, ' ')).join('\n'));
  const dir = join(work, 'one');
  let r = train(dir, ['--steps', '3'], one);
  assert.equal(r.status, 0, r.stderr);
  const split = r.stderr.match(/^corpus: 1 document, (\d+) tokens; held out: the last (\d+) tokens \(5% of them or one window, whichever is more\), as it has fewer than 20 documents\n/);
  assert.ok(split, r.stderr);
  const [n, held] = [Number(split[1]), Number(split[2])];
  assert.equal(held, Math.max(Math.ceil(n / 20), 17));
  r = run(CLI, ['eval', '--model', dir, '--corpus', one, '--seq', '16']);
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stderr, split[0]);
  const e = JSON.parse(r.stdout);
  assert.equal(e.held_out_tokens, held);
  assert.equal(e.train_tokens, n - held);
  // 33 tokens: one short of a window of 17 to train on and one held out
  const tokens = (text) => run(CLI, ['tokenize', '--tokenizer', join(dir, 'tokenizer.json'), '--text', text]).stdout.trim().split(/\s+/).length + 2;
  let short = 'a';
  while (tokens(short + ' a') <= 33) short += ' a';
  assert.equal(tokens(short), 33);
  writeFileSync(join(work, 'short.txt'), short);
  r = train(join(work, 'short'), ['--steps', '1'], join(work, 'short.txt'));
  assertOneLine(r, 2, /--corpus: 33 tokens are too few: a corpus of fewer than 20 documents needs at least 34 \(a window of 17 tokens to train on and one held out\)/);
  assert.ok(!existsSync(join(work, 'short')));
  writeFileSync(join(work, 'short.txt'), short + ' a');
  r = train(join(work, 'short'), ['--steps', '1'], join(work, 'short.txt'));
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stderr, /^corpus: 1 document, 34 tokens; held out: the last 17 tokens/);
});

// 40 documents: split by documents as always (the last 2), and said so.
test('train: a corpus of 40 documents holds out its last 2, as before', () => {
  const r = train(join(work, 'forty'), ['--steps', '1']);
  assert.equal(r.status, 0, r.stderr);
  const m = r.stderr.match(/^corpus: 40 documents, (\d+) tokens; held out: the last 2 documents \((\d+) tokens\)\n/);
  assert.ok(m, r.stderr);
  const tokens = (text) => run(CLI, ['tokenize', '--tokenizer', join(work, 'forty', 'tokenizer.json'), '--text', text]).stdout.trim().split(/\s+/).length + 2;
  // a document is its text up to the separator, the newline before it included
  assert.equal(Number(m[2]), tokens(`${fortunes[38]}\n`) + tokens(fortunes[39]));
});
