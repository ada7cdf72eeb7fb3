// train-tokenizer.test.mjs — `attnlab train-tokenizer` (core/io/tokenizer_train.c):
//   - against Hugging Face's own BpeTrainer: on tests/lib/train-corpus.mjs's synthetic corpus,
//     every merge equals the one the Rust library learns (tests/fixtures/bpe_train/hf_merges.json,
//     written by tests/fixtures/gen_bpe_train.mjs), ties and all;
//   - hand-worked goldens on tiny corpora: the order of merges (counts, overlapping pairs, ties
//     to the lowest ids, ids in ByteLevel's code point order rather than byte order), and
//     --min-frequency;
//   - on a few hundred KB of the repository's English and Chinese text: the result loads in the
//     reference (@huggingface/tokenizers) and in `attnlab tokenize`, which give the same ids for
//     the hand-written and random texts of tests/lib/tok-texts.mjs; its layout is MiniMind's
//     tokenizer.json's, byte for byte up to the first merged token, and Python's json.dump
//     layout throughout; ids 0..35 are MiniMind's added tokens, 36..291 the 256 bytes; every merge
//     makes the next id from two older ones; the same corpus gives the same file twice;
//   - every bad input exits 2 with one line and writes nothing (an existing file is left as it
//     was), a corpus that cannot reach --vocab says how far it gets;
//   - the ASan build gives the same files; 1 MB trains in well under a second.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, truncateSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Tokenizer } from '@huggingface/tokenizers';
import { ROOT, VARIANTS, run, runAsync } from './lib/run.mjs';
import { CHAR_OF_BYTE } from './lib/hf-json.mjs';
import { handTexts, randomTexts } from './lib/tok-texts.mjs';
import { expectRefusals } from './lib/refusals.mjs';
import { megabyteCorpus, repoCorpus, syntheticCorpus } from './lib/train-corpus.mjs';
import { OUT as HF_MERGES, corpusText as hfCorpusText, sha256 } from './fixtures/gen_bpe_train.mjs';

const CLI = join(VARIANTS[0].dir, 'attnlab');
const ASAN_CLI = VARIANTS.find((v) => v.name === 'asan') ? join(ROOT, 'build', 'asan', 'attnlab') : null;
const MM_TEXT = readFileSync(join(ROOT, 'models', 'minimind-tokenizer', 'tokenizer.json'), 'utf8');
const MM = JSON.parse(MM_TEXT);
const MM_CONFIG = JSON.parse(readFileSync(join(ROOT, 'models', 'minimind-tokenizer', 'tokenizer_config.json'), 'utf8'));
const ADDED = MM.added_tokens.map((a) => a.content);
const FIRST_MERGED = 292; // 36 added tokens, 256 bytes

const work = mkdtempSync(join(tmpdir(), 'attnlab-train-'));
process.on('exit', () => rmSync(work, { recursive: true, force: true }));

let nextFile = 0;
// A corpus file with `text` (a string or bytes) in the work folder.
function corpusFile(text) {
  const path = join(work, `corpus${nextFile++}.txt`);
  writeFileSync(path, text);
  return path;
}

// `attnlab train-tokenizer` on the corpus file: the run and the file it wrote (null if none).
function train(corpus, vocab, extra = [], cli = CLI) {
  const out = join(work, `out${nextFile++}.json`);
  const r = run(cli, ['train-tokenizer', '--corpus', corpus, '--vocab', String(vocab), '--out', out, ...extra]);
  return { ...r, out, text: existsSync(out) ? readFileSync(out, 'utf8') : null };
}

// The merges of a training run, each "left right" in ByteLevel's characters.
function trainedMerges(corpusText, vocab, extra = []) {
  const r = train(corpusFile(corpusText), vocab, extra);
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.text).model.merges.map((m) => m.join(' '));
}

// ---- against Hugging Face's own trainer ---------------------------------------------------------

test('every merge is the one Hugging Face\'s BpeTrainer learns (tests/fixtures/bpe_train/hf_merges.json)', () => {
  const fixture = JSON.parse(readFileSync(HF_MERGES, 'utf8'));
  const text = hfCorpusText();
  assert.equal(sha256(text), fixture.corpus.sha256,
    'the synthetic corpus changed: run tests/fixtures/gen_bpe_train.mjs (see its header)');
  assert.ok(fixture.merges.length > 3000, `${fixture.merges.length} merges`);
  const got = trainedMerges(text, FIRST_MERGED + fixture.new_tokens);
  const want = fixture.merges.map((m) => m.join(' '));
  const first = want.findIndex((m, i) => got[i] !== m);
  assert.equal(got.length, want.length, `${got.length} merges, the library learns ${want.length}`);
  assert.equal(first, -1, `merge ${first}: got '${got[first]}', the library's is '${want[first]}'`);
  // The library stops there: no pair is left, so one token more cannot be had.
  const more = train(corpusFile(text), FIRST_MERGED + fixture.new_tokens + 1);
  assert.equal(more.status, 2);
  assert.match(more.stderr, new RegExp(`gives only ${FIRST_MERGED + fixture.new_tokens} tokens`));
});

// ---- goldens worked out by hand -----------------------------------------------------------------

// Ids: the 188 printable bytes from 36 in byte order ('a' 100, 'b' 101, 'c' 102, 'd' 103,
// 'z' 125), then the 68 others from 224 in byte order (the space, Ġ, is 224 + 32 = 256).
test('hand-worked: counts, overlapping pairs and ties to the lowest ids', () => {
  // Words "aaaa", " abab", " abc", " bcd", once each. Pairs: a+a 3 (overlapping: "aaaa" has
  // three), a+b 3, Ġ+a 2, b+c 2, and b+a, Ġ+b, c+d 1.
  //  1. a+a (3) and a+b (3) tie: a+a has the lower ids (100,100) < (100,101). "aaaa" -> aa aa.
  //  2. a+b (3): " abab" -> Ġ ab ab, " abc" -> Ġ ab c. Now Ġ+ab 2, ab+ab 1, ab+c 1; Ġ+a, b+a 0.
  //  3. Ġ+ab (2). Left at 1: b+c (101,102), Ġ+b (256,101), c+d (102,103), aa+aa (292,292),
  //     Ġab+ab (294,293), Ġab+c (294,102).
  //  4. b+c, the lowest ids: " bcd" -> Ġ bc d; Ġ+b and c+d go, Ġ+bc (256,295) and bc+d (295,103)
  //     come.  5. Ġ+bc (256,295).  6. aa+aa (292,292).  7. Ġab+c (294,102).  8. Ġab+ab
  //     (294,293).  9. Ġbc+d (296,103). Then no pair is left: 301 tokens.
  const corpus = 'aaaa abab abc bcd';
  assert.deepEqual(trainedMerges(corpus, 301),
    ['a a', 'a b', 'Ġ ab', 'b c', 'Ġ bc', 'aa aa', 'Ġab c', 'Ġab ab', 'Ġbc d']);
  // --vocab stops it early, in the same order.
  assert.deepEqual(trainedMerges(corpus, 295), ['a a', 'a b', 'Ġ ab']);
  // --min-frequency 2: after Ġ+ab the best pair occurs once.
  assert.deepEqual(trainedMerges(corpus, 295, ['--min-frequency', '2']), ['a a', 'a b', 'Ġ ab']);
  const short = train(corpusFile(corpus), 296, ['--min-frequency', '2']);
  assert.equal(short.status, 2);
  assert.match(short.stderr, /gives only 295 tokens .*no pair of tokens occurs 2 times or more.*--vocab 295/);
});

test('hand-worked: ties go by id, and ids follow the characters\' code points, not the bytes', () => {
  // Words "za" and " a", once each: z+a (125,100) and Ġ+a (256,100) tie at 1. By byte, the
  // space (0x20) would come before 'z' (0x7A); by id, z+a comes first.
  assert.deepEqual(trainedMerges('za a', 294), ['z a', 'Ġ a']);
  // Words "aaa", "\n", "bb": "aaa" has a+a twice (overlapping), so a+a (2) merges first, once,
  // the leftmost: [aa a]. Then aa+a (292,100) and b+b (101,101) tie at 1: b+b first.
  assert.deepEqual(trainedMerges('aaa\nbb', 295), ['a a', 'b b', 'aa a']);
  // With " bb" the space joins the word: [Ġ b b] -> [Ġ bb], and Ġ+bb (256,293) comes before aa+a.
  assert.deepEqual(trainedMerges('aaa bb', 295), ['a a', 'b b', 'Ġ bb']);
  // A word's count weighs its pairs: "ab" three times outweighs "cd" twice and "ef" once.
  assert.deepEqual(trainedMerges('ef\ncd\ncd\nab\nab\nab', 295), ['a b', 'c d', 'e f']);
  // The split decides the words: "don't" is "don" and "'t", each pair once; the lowest ids
  // first: ' (42) + t (116), then d (103) + o (111), then do + n.
  assert.deepEqual(trainedMerges("don't", 295), ["' t", 'd o', 'do n']);
  // 你好 is one word of 6 bytes, E4 BD A0 E5 A5 BD: ä ½ ł å ¥ ½, ids 196 157 290 197 134 157
  // (ł, for the unprinted A0, is 224 + 66). Every pair occurs once, so the lowest ids go first:
  // ¥+½ (134,157) -> [ä ½ ł å ¥½]; ½+ł (157,290) -> [ä ½ł å ¥½]; ä+½ł (196,293) -> [ä½ł å ¥½];
  // å+¥½ (197,292) -> [ä½ł å¥½]; then ä½ł+å¥½.
  assert.deepEqual(trainedMerges('你好', 297), ['¥ ½', '½ ł', 'ä ½ł', 'å ¥½', 'ä½ł å¥½']);
});

// ---- real text: the result against the reference --------------------------------------------------

const TEXT = `${repoCorpus(ROOT)}\n${syntheticCorpus(7, 100000)}`;
const VOCAB = 4000;
const MAIN = (() => {
  const r = train(corpusFile(TEXT), VOCAB);
  return { ...r, json: r.text ? JSON.parse(r.text) : null };
})();

test(`the corpus: ${Buffer.byteLength(TEXT)} bytes of English and Chinese, trained to ${VOCAB} tokens`, () => {
  assert.ok(Buffer.byteLength(TEXT) > 200000);
  assert.ok((TEXT.match(/[\u4e00-\u9fff]/gu) || []).length > 10000, 'little Chinese');
  assert.equal(MAIN.status, 0, MAIN.stderr);
  assert.match(MAIN.stdout, new RegExp(`^wrote .*: ${VOCAB} tokens \\(36 added, 256 bytes, ${VOCAB - FIRST_MERGED} merged\\)`));
  assert.equal(MAIN.stderr, '');
});

test('the reference and attnlab tokenize give the same ids with the trained tokenizer', async () => {
  const ref = new Tokenizer(MAIN.json, MM_CONFIG);
  const texts = [...handTexts(ADDED), ...randomTexts(600, 20240612, ADDED), TEXT.slice(0, 20000)];
  const bad = [];
  let merged = 0;
  for (let i = 0; i < texts.length; i += 8) {
    const batch = texts.slice(i, i + 8);
    const results = await Promise.all(batch.map((t) => runAsync(CLI, ['tokenize', '--tokenizer', MAIN.out, '--no-bos'], Buffer.from(t, 'utf8'))));
    results.forEach((r, k) => {
      const want = ref.encode(batch[k]).ids;
      merged += want.filter((id) => id >= FIRST_MERGED).length;
      const got = r.stdout.trim().split(/\s+/).filter(Boolean).map(Number);
      if (r.status !== 0 || got.join(' ') !== want.join(' '))
        bad.push(`${JSON.stringify(batch[k]).slice(0, 80)}: got ${r.stdout.trim().slice(0, 80)} ${r.stderr} want ${want.join(' ').slice(0, 80)}`);
    });
  }
  assert.equal(bad.length, 0, `${bad.length} of ${texts.length} texts differ; the first:\n${bad.slice(0, 5).join('\n')}`);
  assert.ok(merged > 5000, `only ${merged} ids of learned tokens: the texts hardly use the merges`);
  // The reference decodes its ids back to the text.
  for (const t of texts.slice(1, 200)) assert.equal(ref.decode(ref.encode(t).ids), t);
});

test('its layout is MiniMind\'s tokenizer.json\'s: the same bytes up to the first learned token', () => {
  // Up to the line of token 292, the first merge's.
  const cut = (text) => text.slice(0, text.lastIndexOf('\n', text.indexOf(`": ${FIRST_MERGED},\n`)) + 1);
  const head = cut(MM_TEXT);
  assert.ok(head.length > 10000 && head.endsWith('"Ń": 291,\n'), 'MiniMind\'s file has no token 291 before 292');
  assert.equal(MAIN.text.slice(0, head.length), head);
});

// Python's json.dumps(obj, ensure_ascii=False, indent=2), which MiniMind's script writes with
// (JSON.stringify escapes these strings as Python does); objects as [key, value] lists, in order.
function pyDump(v, indent = '') {
  const inner = `${indent}  `;
  if (Array.isArray(v) && v.isObject)
    return v.length ? `{\n${v.map(([k, x]) => `${inner}${JSON.stringify(k)}: ${pyDump(x, inner)}`).join(',\n')}\n${indent}}` : '{}';
  if (Array.isArray(v)) return v.length ? `[\n${v.map((x) => inner + pyDump(x, inner)).join(',\n')}\n${indent}]` : '[]';
  if (v && typeof v === 'object') {
    const entries = Object.entries(v);
    entries.isObject = true;
    return pyDump(entries, indent);
  }
  return JSON.stringify(v);
}

test('its layout is Python\'s json.dump with indent 2 throughout, the vocabulary in id order', () => {
  const { model } = MAIN.json;
  const vocab = Object.entries(model.vocab).sort((a, b) => a[1] - b[1]); // JSON.parse moves "0".."9" first
  vocab.isObject = true;
  const expected = pyDump({ ...MAIN.json, model: { ...model, vocab: null, merges: null } })
    .replace('"vocab": null', `"vocab": ${pyDump(vocab, '    ')}`)
    .replace('"merges": null', `"merges": ${pyDump(model.merges, '    ')}`);
  assert.equal(MAIN.text, expected);
  assert.deepEqual(Object.keys(MAIN.json), Object.keys(MM));
  assert.deepEqual(Object.keys(model), Object.keys(MM.model));
});

test('ids 0..35 are MiniMind\'s added tokens, 36..291 the 256 bytes, the size --vocab', () => {
  const { model, added_tokens } = MAIN.json;
  assert.deepEqual(added_tokens, MM.added_tokens); // ids, contents, flags: special only 0..20
  assert.deepEqual(added_tokens.slice(0, 3).map((a) => [a.id, a.content]),
    [[0, '<|endoftext|>'], [1, '<|im_start|>'], [2, '<|im_end|>']]);
  const byId = Object.entries(model.vocab).sort((a, b) => a[1] - b[1]).map(([t]) => t);
  assert.equal(byId.length, VOCAB);
  assert.deepEqual(Object.values(model.vocab).sort((a, b) => a - b), [...Array(VOCAB).keys()]);
  assert.deepEqual(byId.slice(0, 36), ADDED);
  const bytes = [...CHAR_OF_BYTE].sort((a, b) => a.codePointAt(0) - b.codePointAt(0));
  assert.deepEqual(byId.slice(36, FIRST_MERGED), bytes);
  assert.deepEqual(byId.slice(0, FIRST_MERGED), Object.entries(MM.model.vocab).sort((a, b) => a[1] - b[1]).slice(0, FIRST_MERGED).map(([t]) => t));
  const ref = new Tokenizer(MAIN.json, MM_CONFIG);
  assert.equal(ref.get_vocab(true).size, VOCAB);
  assert.equal(ref.token_to_id('<|im_end|>'), 2);
  assert.equal(run(CLI, ['tokenize', '--tokenizer', MAIN.out, '--vocab-size', String(VOCAB), '--text', 'x']).status, 0);
});

test('every merge makes the next id from two tokens made before it, no merge twice', () => {
  const { model } = MAIN.json;
  const seen = new Set();
  let next = FIRST_MERGED;
  model.merges.forEach(([a, b], i) => {
    const [ia, ib, ir] = [model.vocab[a], model.vocab[b], model.vocab[a + b]];
    assert.ok(ia !== undefined && ib !== undefined && ir !== undefined, `merge ${i}: ${a} ${b}`);
    assert.ok(!seen.has(`${a} ${b}`), `merge ${i} repeats ${a} ${b}`);
    seen.add(`${a} ${b}`);
    if (ir === next) next++;
    assert.ok(ir < next && ia < ir && ib < ir, `merge ${i}: ${a} (${ia}) + ${b} (${ib}) = ${ir}, next id ${next}`);
  });
  assert.equal(next, VOCAB, 'the merges make every learned token');
});

test('the same corpus gives the same file twice', () => {
  const again = train(corpusFile(TEXT), VOCAB);
  assert.equal(again.status, 0, again.stderr);
  assert.ok(again.text === MAIN.text, 'the two files differ');
});

test('ASan build: the same files, no error', { skip: !ASAN_CLI }, () => {
  for (const [text, vocab] of [['aaaa abab abc bcd', 301], [hfCorpusText(), 1500], [TEXT.slice(0, 60000), 2000]]) {
    const corpus = corpusFile(text);
    const a = train(corpus, vocab, [], ASAN_CLI), n = train(corpus, vocab);
    assert.equal(a.status, 0, a.stderr);
    assert.ok(a.text === n.text, `the ASan build's file differs (vocab ${vocab})`);
  }
});

// (How long it takes is the bench's: tests/bench/run.mjs.)
test('1 MB of text trains to the full 6400 tokens', () => {
  const r = train(corpusFile(megabyteCorpus(ROOT)), 6400);
  assert.equal(r.status, 0, r.stderr);
  assert.equal(Object.keys(JSON.parse(r.text).model.vocab).length, 6400);
});

// ---- refusals -----------------------------------------------------------------------------------

test('each bad input exits 2 with one line and writes nothing, an existing file left as it was', () => {
  const good = corpusFile('aaaa abab abc bcd');
  const empty = corpusFile('');
  const latin1 = corpusFile(Buffer.from([0x63, 0x61, 0x66, 0xE9, 0x20, 0x61])); // "café a" in Latin-1
  const huge = join(work, 'huge.txt');
  writeFileSync(huge, '');
  truncateSync(huge, (64 << 20) + 1); // sparse: one byte over the limit
  const folder = join(work, 'a-folder');
  mkdirSync(folder);
  const cases = [
    [[], /needs --corpus, --vocab and --out/],
    [['--corpus', good, '--vocab', '300'], /needs --corpus, --vocab and --out/],
    [['--corpus', good, '--out', 'OUT'], /needs --corpus, --vocab and --out/],
    [['--vocab', '300', '--out', 'OUT'], /needs --corpus, --vocab and --out/],
    [['--corpus', good, '--vocab', '300', '--out'], /--out expects a value/],
    [['--corpus', good, '--vocab', '300', '--out', 'OUT', '--bogus', '1'], /unknown option '--bogus'/],
    [['--corpus', join(work, 'none.txt'), '--vocab', '300', '--out', 'OUT'], /cannot open .*none\.txt.*No such file/],
    [['--corpus', folder, '--vocab', '300', '--out', 'OUT'], /is not a regular file/],
    [['--corpus', empty, '--vocab', '300', '--out', 'OUT'], /the corpus .* is empty/],
    [['--corpus', latin1, '--vocab', '300', '--out', 'OUT'], /is not UTF-8 text: byte 0xE9 at offset 3/],
    [['--corpus', huge, '--vocab', '300', '--out', 'OUT'], /files larger than 64 MiB are refused/],
    [['--corpus', good, '--vocab', '291', '--out', 'OUT'], /--vocab expects a whole number between 292 .* and 2097152, got '291'/],
    [['--corpus', good, '--vocab', '2097153', '--out', 'OUT'], /--vocab expects .*got '2097153'/],
    [['--corpus', good, '--vocab', '3e2', '--out', 'OUT'], /--vocab expects .*got '3e2'/],
    [['--corpus', good, '--vocab', '300', '--out', 'OUT', '--min-frequency', '-1'], /--min-frequency expects a whole number from 0, got '-1'/],
    [['--corpus', good, '--vocab', '302', '--out', 'OUT'], /the corpus gives only 301 tokens \(36 added, 256 bytes, 9 merged\), short of --vocab 302: then no pair of tokens is left to merge; nothing written \(use a larger corpus or --vocab 301\)/],
    [['--corpus', good, '--vocab', '300', '--out', join(work, 'no-folder', 'x.json')], /its folder does not exist/],
    [['--corpus', good, '--vocab', '300', '--out', folder], /is a folder/],
    [['--corpus', good, '--vocab', '300', '--out', good], /same file as the input/],
  ];
  expectRefusals(CLI, 'train-tokenizer', cases, work);
  assert.equal(readFileSync(good, 'utf8'), 'aaaa abab abc bcd', 'the corpus changed');
});

test('help lists train-tokenizer', () => {
  const r = run(CLI, ['help']);
  assert.match(r.stdout, /attnlab train-tokenizer --corpus FILE --vocab N --out tokenizer\.json \[--min-frequency F\]/);
});
