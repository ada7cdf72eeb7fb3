// tokenizer-cut.test.mjs — `attnlab cut-tokenizer` (al_tok_hf_cut, core/io/tokenizer_cut.c):
// MiniMind's tokenizer.json cut to its first V ids, for V 292 (the added tokens and the bytes
// alone), 300, 512, 1000 and 6400 (the whole file):
//   - the file is tests/lib/cut-tokenizer.mjs's cut as data (the same added tokens, vocabulary
//     and merges in the same order, every other field MiniMind's), laid out as train-tokenizer
//     writes; cut to 6400 it is MiniMind's file byte for byte;
//   - the reference (@huggingface/tokenizers) loading it encodes the hand-written and random texts
//     of tests/lib/tok-texts.mjs to the ids it gives with the JavaScript cut, every id below V;
//     `attnlab tokenize` with it (al_tok_hf_create) gives those ids too; the ASan build writes the
//     same files;
//   - a file that is not a tokenizer.json, or not of MiniMind's kind (other added tokens, the
//     bytes elsewhere, another pre-tokenizer), V below 292 or above the file's size, and bad
//     flags each exit 2 with one line and write nothing (an existing file is left as it was).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Tokenizer } from '@huggingface/tokenizers';
import { ROOT, VARIANTS, inPool, run, runAsync } from './lib/run.mjs';
import { MM_TOKENIZER, cutTokenizer } from './lib/cut-tokenizer.mjs';
import { small } from './lib/hf-json.mjs';
import { handTexts, randomTexts } from './lib/tok-texts.mjs';
import { expectRefusals } from './lib/refusals.mjs';

const CLI = join(VARIANTS[0].dir, 'attnlab');
const ASAN_CLI = VARIANTS.find((v) => v.name === 'asan') ? join(ROOT, 'build', 'asan', 'attnlab') : null;
const MM_TEXT = readFileSync(MM_TOKENIZER, 'utf8');
const MM = JSON.parse(MM_TEXT);
const MM_CONFIG = JSON.parse(readFileSync(join(ROOT, 'models', 'minimind-tokenizer', 'tokenizer_config.json'), 'utf8'));
const ADDED = MM.added_tokens.map((a) => a.content);
const SIZES = [292, 300, 512, 1000, 6400];

const work = mkdtempSync(join(tmpdir(), 'attnlab-cut-'));
process.on('exit', () => rmSync(work, { recursive: true, force: true }));

let nextFile = 0;
// `attnlab cut-tokenizer` of `from` to `vocab` ids: the run and the file it wrote (null if none).
function cut(vocab, from = MM_TOKENIZER, cli = CLI) {
  const out = join(work, `cut${nextFile++}.json`);
  const r = run(cli, ['cut-tokenizer', '--tokenizer', from, '--vocab', String(vocab), '--out', out]);
  return { ...r, out, text: existsSync(out) ? readFileSync(out, 'utf8') : null };
}

const CUTS = new Map(SIZES.map((v) => [v, cut(v)]));

// A tokenizer of MiniMind's kind as its file is laid out (Python's json.dump with indent 2,
// UTF-8 as it is; JSON.stringify escapes these strings as Python does): MiniMind's lines up to
// "vocab", then one line a token in id order and four a merge.
const VOCAB_AT = MM_TEXT.indexOf('\n    "vocab": {\n') + '\n    "vocab": {\n'.length;
function layout(t) {
  const vocab = Object.entries(t.model.vocab).sort((a, b) => a[1] - b[1]).map(([tok, id]) => `      ${JSON.stringify(tok)}: ${id}`);
  const merges = t.model.merges.map(([a, b]) => `      [\n        ${JSON.stringify(a)},\n        ${JSON.stringify(b)}\n      ]`);
  return `${MM_TEXT.slice(0, VOCAB_AT)}${vocab.join(',\n')}\n    },\n    "merges": ${merges.length ? `[\n${merges.join(',\n')}\n    ]` : '[]'}\n  }\n}`;
}

test('the layout of the checks below is MiniMind\'s file\'s', () => {
  assert.ok(layout(MM) === MM_TEXT);
});

for (const v of SIZES) {
  test(`cut to ${v}: tests/lib/cut-tokenizer.mjs's cut as data, laid out as train-tokenizer writes`, () => {
    const c = CUTS.get(v);
    assert.equal(c.status, 0, c.stderr);
    assert.equal(c.stderr, '');
    assert.equal(c.stdout, `wrote ${c.out}: the first ${v} tokens of ${MM_TOKENIZER} (36 added, 256 bytes, ${v - 292} merged)\n`);
    const got = JSON.parse(c.text), want = JSON.parse(cutTokenizer(v));
    assert.deepEqual(got.added_tokens, want.added_tokens);
    assert.deepEqual(got.model.vocab, want.model.vocab);
    assert.deepEqual(got.model.merges, want.model.merges);
    assert.deepEqual(got, want);
    assert.deepEqual(Object.keys(got), Object.keys(MM));
    assert.deepEqual(Object.keys(got.model), Object.keys(MM.model));
    assert.ok(c.text === layout(want), 'not laid out as MiniMind\'s file');
  });
}

test('cut to 6400, the whole file: MiniMind\'s tokenizer.json byte for byte', () => {
  assert.ok(CUTS.get(6400).text === MM_TEXT, 'the cut differs from MiniMind\'s file');
  assert.equal(MM.model.merges.length, 6108);
  assert.equal(JSON.parse(CUTS.get(512).text).model.merges.length, 220); // 512 - 292: each merge a token
  assert.equal(JSON.parse(CUTS.get(292).text).model.merges.length, 0);
});

// ---- encoding -------------------------------------------------------------------------------------

const TEXTS = [...handTexts(ADDED), ...randomTexts(400, 20240701, ADDED)];
const AT_CLI = [...handTexts(ADDED), ...randomTexts(60, 20240702, ADDED)];
const parseIds = (line) => line.trim().split(/\s+/).filter(Boolean).map(Number);
const show = (s) => JSON.stringify(s).slice(0, 100);

for (const v of SIZES) {
  test(`cut to ${v}: the reference encodes ${TEXTS.length} texts as with the JavaScript cut, and so does attnlab tokenize`, async () => {
    const c = CUTS.get(v);
    const ref = new Tokenizer(JSON.parse(c.text), MM_CONFIG);
    const js = new Tokenizer(JSON.parse(cutTokenizer(v)), MM_CONFIG);
    const full = new Tokenizer(MM, MM_CONFIG);
    assert.equal(ref.get_vocab(true).size, v);
    let differFromFull = 0;
    for (const text of TEXTS) {
      const ids = ref.encode(text).ids;
      assert.deepEqual(ids, js.encode(text).ids, show(text));
      assert.ok(ids.every((id) => id < v), `${show(text)}: an id at or above ${v}`);
      if (ids.join(' ') !== full.encode(text).ids.join(' ')) differFromFull++;
    }
    // The cut changes encodings below 6400 (else the test would not tell the cuts apart).
    if (v < 6400) assert.ok(differFromFull > TEXTS.length / 2, `only ${differFromFull} texts encode otherwise than with 6400`);
    else assert.equal(differFromFull, 0);
    const results = await inPool(AT_CLI, 4, (text) =>
      runAsync(CLI, ['tokenize', '--tokenizer', c.out, '--vocab-size', String(v), '--no-bos'], Buffer.from(text, 'utf8')));
    const bad = [];
    results.forEach((r, i) => {
      const want = ref.encode(AT_CLI[i]).ids.join(' ');
      if (r.status !== 0 || parseIds(r.stdout).join(' ') !== want)
        bad.push(`${show(AT_CLI[i])}: got ${r.stdout.trim().slice(0, 80)} ${r.stderr} want ${want.slice(0, 80)}`);
    });
    assert.equal(bad.length, 0, `${bad.length} of ${AT_CLI.length} texts differ; the first:\n${bad.slice(0, 5).join('\n')}`);
  });
}

test('a tokenizer train-tokenizer wrote cuts to its own first ids, and the cut of a cut is the smaller cut', () => {
  const corpus = join(work, 'corpus.txt');
  writeFileSync(corpus, readFileSync(join(ROOT, 'README.md')));
  const trained = join(work, 'trained.json');
  const r = run(CLI, ['train-tokenizer', '--corpus', corpus, '--vocab', '900', '--out', trained]);
  assert.equal(r.status, 0, r.stderr);
  const small600 = run(CLI, ['train-tokenizer', '--corpus', corpus, '--vocab', '600', '--out', join(work, 'trained600.json')]);
  assert.equal(small600.status, 0, small600.stderr);
  // BpeTrainer's merges are greedy: the first 308 of 900 are the 308 of 600.
  assert.ok(cut(600, trained).text === readFileSync(join(work, 'trained600.json'), 'utf8'), 'cut to 600 is not the training to 600');
  assert.ok(cut(900, trained).text === readFileSync(trained, 'utf8'), 'cut to its own size is not the file');
  assert.ok(cut(512, CUTS.get(1000).out).text === CUTS.get(512).text, 'the cut to 512 of the cut to 1000 differs');
});

test('ASan build: the same files, no error', { skip: !ASAN_CLI }, () => {
  for (const v of [292, 512, 6400]) {
    const a = cut(v, MM_TOKENIZER, ASAN_CLI);
    assert.equal(a.status, 0, a.stderr);
    assert.ok(a.text === CUTS.get(v).text, `the ASan build's cut to ${v} differs`);
  }
});

// ---- refusals -------------------------------------------------------------------------------------

// MiniMind's file changed by edit(json), written to the work folder.
function changed(name, edit) {
  const t = JSON.parse(MM_TEXT);
  edit(t);
  const path = join(work, `${name}.json`);
  writeFileSync(path, JSON.stringify(t));
  return path;
}

test('each bad input exits 2 with one line and writes nothing, an existing file left as it was', () => {
  const folder = join(work, 'a-folder');
  mkdirSync(folder);
  const notJson = join(ROOT, 'models', 'stories260K', 'tok512.bin');
  const otherJson = join(work, 'other.json');
  writeFileSync(otherJson, '{"model": {"type": "WordPiece"}, "pre_tokenizer": null}');
  const smallTok = join(work, 'small.json');
  writeFileSync(smallTok, JSON.stringify(small()));
  const renamed = changed('renamed', (t) => {
    t.added_tokens[5].content = '<|box|>';
    delete t.model.vocab['<|box_start|>'];
    t.model.vocab['<|box|>'] = 5;
  });
  const extra = changed('extra', (t) => {
    t.added_tokens.push({ ...t.added_tokens[35], id: 6400, content: '<|extra|>' });
  });
  const moved = changed('moved', (t) => { // <|buffer9|> a plain token, and an added one after the vocabulary
    t.added_tokens[35] = { ...t.added_tokens[35], id: 6400, content: '<|extra|>' };
  });
  const swapped = changed('swapped', (t) => { // the byte 0xAD ('Ń') after the first merged token
    const [first] = Object.entries(t.model.vocab).find(([, id]) => id === 292);
    t.model.vocab['Ń'] = 292;
    t.model.vocab[first] = 291;
  });
  const prefixed = changed('prefixed', (t) => { t.pre_tokenizer.add_prefix_space = true; });
  const noRegex = changed('no-regex', (t) => { t.pre_tokenizer.use_regex = false; });
  const cases = [
    [[], /needs --tokenizer, --vocab and --out/],
    [['--tokenizer', MM_TOKENIZER, '--vocab', '512'], /needs --tokenizer, --vocab and --out/],
    [['--vocab', '512', '--out', 'OUT'], /needs --tokenizer, --vocab and --out/],
    [['--tokenizer', MM_TOKENIZER, '--vocab', '512', '--out'], /--out expects a value/],
    [['--tokenizer', MM_TOKENIZER, '--vocab', '512', '--out', 'OUT', '--bogus', '1'], /unknown option '--bogus' for cut-tokenizer/],
    [['--tokenizer', MM_TOKENIZER, '--vocab', '291', '--out', 'OUT'], /--vocab expects a whole number from 292 \(MiniMind's 36 added tokens and the 256 bytes\) up to the tokenizer's size, got '291'/],
    [['--tokenizer', MM_TOKENIZER, '--vocab', '5e2', '--out', 'OUT'], /--vocab expects .*got '5e2'/],
    [['--tokenizer', MM_TOKENIZER, '--vocab', '6401', '--out', 'OUT'], /tokenizer\.json: vocab 6401 is above the file's 6400 tokens$/m],
    [['--tokenizer', MM_TOKENIZER, '--vocab', '2097153', '--out', 'OUT'], /--vocab expects .*got '2097153'/],
    [['--tokenizer', join(work, 'none.json'), '--vocab', '512', '--out', 'OUT'], /cannot open .*none\.json.*No such file/],
    [['--tokenizer', folder, '--vocab', '512', '--out', 'OUT'], /is not a regular file/],
    [['--tokenizer', notJson, '--vocab', '512', '--out', 'OUT'], /tok512\.bin: not valid JSON: unexpected byte 0x07 at byte 0/],
    [['--tokenizer', otherJson, '--vocab', '512', '--out', 'OUT'], /other\.json: there is no pre_tokenizer/],
    [['--tokenizer', smallTok, '--vocab', '292', '--out', 'OUT'], /small\.json: added_tokens holds 1 tokens; a cut keeps MiniMind's 36 \(ids 0\.\.35: <\|endoftext\|> \.\. <\|buffer9\|>\) and no others/],
    [['--tokenizer', renamed, '--vocab', '512', '--out', 'OUT'], /added token 5 is '<\|box\|>', not MiniMind's '<\|box_start\|>'/],
    [['--tokenizer', extra, '--vocab', '512', '--out', 'OUT'], /added_tokens holds 37 tokens/],
    [['--tokenizer', moved, '--vocab', '512', '--out', 'OUT'], /added token '<\|extra\|>' has id 6400; a cut keeps MiniMind's 36 added tokens, at ids 0\.\.35/],
    [['--tokenizer', swapped, '--vocab', '512', '--out', 'OUT'], /the token of the byte 0xAD has id 292; a cut needs the 256 bytes at ids 36\.\.291/],
    [['--tokenizer', prefixed, '--vocab', '512', '--out', 'OUT'], /the pre-tokenizer's add_prefix_space is true; a cut writes MiniMind's/],
    [['--tokenizer', noRegex, '--vocab', '512', '--out', 'OUT'], /the pre-tokenizer's use_regex is false/],
    [['--tokenizer', MM_TOKENIZER, '--vocab', '512', '--out', join(work, 'no-folder', 'x.json')], /its folder does not exist/],
    [['--tokenizer', MM_TOKENIZER, '--vocab', '512', '--out', folder], /is a folder/],
    [['--tokenizer', smallTok, '--vocab', '512', '--out', smallTok], /same file as the input/],
  ];
  expectRefusals(CLI, 'cut-tokenizer', cases, work);
  assert.ok(readFileSync(smallTok, 'utf8').startsWith('{"version"'), 'the input changed');
  // Each changed file is still one al_tok_hf_create reads: the refusal is the cut's own.
  for (const path of [renamed, extra, moved, swapped, prefixed, noRegex, smallTok])
    assert.equal(run(CLI, ['tokenize', '--tokenizer', path, '--text', 'x']).status, 0, path);
});

test('help lists cut-tokenizer', () => {
  const r = run(CLI, ['help']);
  assert.match(r.stdout, /attnlab cut-tokenizer --tokenizer T --vocab N --out tokenizer\.json\n/);
  assert.match(run(CLI, []).stderr, /\|cut-tokenizer /);
});
