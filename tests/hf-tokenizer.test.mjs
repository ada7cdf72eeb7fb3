// hf-tokenizer.test.mjs — MiniMind's tokenizer.json in C (core/io/tokenizer_hf.c) against the
// reference, @huggingface/tokenizers (the `tokenizers` library's JavaScript port, run here on
// models/minimind-tokenizer/tokenizer.json and tokenizer_config.json):
//   - `attnlab tokenize --tokenizer tokenizer.json --no-bos` gives exactly the reference's ids for
//     every text of a hand-written list (Chinese, English, mixed, emoji, white space runs,
//     digits, punctuation, the chat markers, the empty text) and of 2000 random texts from a
//     fixed-seed generator mixing those (plus other scripts, marks, controls, characters beyond
//     the BMP); the ASan build on a part of them;
//   - `--decode` of those ids gives the reference's decode, which is the text itself; random ids
//     decode as the reference decodes them (where it writes U+FFFD for bytes that are not UTF-8,
//     attnlab writes \xNN: runs of either compared as one U+FFFD); a character split over tokens
//     is held, never written in part;
//   - --pieces shows each id's bytes; BOS and EOS: a tokenizer.json adds none (--no-bos or not),
//     --eos is refused;
//   - made-up tokenizers: merges across the split's edges, each ByteLevel option, and many added
//     tokens overlapping every way (prefixes of each other, one inside another, shared first
//     bytes), both builds; 50,000 added tokens sharing a first byte on 1 MB of '<' and 100 KB of
//     text, under a hang guard;
//   - malformed tokenizer.json files refused one by one, each with its own message;
//   - `attnlab generate --chat TEXT [--think]` builds the prompt tokenizer_config.json's
//     chat_template renders (tests/fixtures/minimind_chat/chat.json, rendered by Jinja2) and
//     encodes it as the reference does: its continuation equals the one of --ids with the
//     reference's ids, sampled with several seeds; the reply is streamed as the reference
//     decodes it; the folder's tokenizer.json is the default; a tokenizer whose vocabulary is
//     not the model's is refused;
//   - core/tokenizer/gen/unicode_class.c is what tools/gen/gen_unicode_class.mjs writes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, symlinkSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Tokenizer } from '@huggingface/tokenizers';
import { ROOT, VARIANTS, inPool, run, runAsync } from './lib/run.mjs';
import { showPiece } from './lib/tokenizer.mjs';
import { BYTE_OF_CHAR, manyAdded, small, withAdded } from './lib/hf-json.mjs';
import { generator, handTexts, randomTexts } from './lib/tok-texts.mjs';
import { OUT as UNICODE_OUT, source as unicodeSource } from '../tools/gen/gen_unicode_class.mjs';

const TOK_DIR = join(ROOT, 'models', 'minimind-tokenizer');
const TOK = join(TOK_DIR, 'tokenizer.json');
const TOK_JSON = JSON.parse(readFileSync(TOK, 'utf8'));
const TOK_CONFIG = JSON.parse(readFileSync(join(TOK_DIR, 'tokenizer_config.json'), 'utf8'));
// With tokenizer_config.json: its clean_up_tokenization_spaces false is what MiniMind decodes
// with (the library's default, true, would rewrite " ." and " 's").
const REF = new Tokenizer(TOK_JSON, TOK_CONFIG);
const refIds = (text) => REF.encode(text).ids;
const refDecode = (ids) => (ids.length ? REF.decode(ids) : '');

const CLI = join(VARIANTS[0].dir, 'attnlab');
const ASAN_CLI = VARIANTS.find((v) => v.name === 'asan') ? join(ROOT, 'build', 'asan', 'attnlab') : null;
const work = mkdtempSync(join(tmpdir(), 'attnlab-hf-'));
process.on('exit', () => rmSync(work, { recursive: true, force: true }));

// ---- the texts ----------------------------------------------------------------------------------

const ADDED = TOK_JSON.added_tokens.map((a) => a.content);

const HAND = handTexts(ADDED);
const RANDOM = randomTexts(2000, 20240607, ADDED);
const ALL = [...HAND, ...RANDOM];

// ---- encoding -----------------------------------------------------------------------------------

const parseIds = (line) => line.trim().split(/\s+/).filter(Boolean).map(Number);
const show = (s) => JSON.stringify(s).slice(0, 120);

async function compareEncodings(cli, texts) {
  const results = await inPool(texts, 4, (text) =>
    runAsync(cli, ['tokenize', '--tokenizer', TOK, '--no-bos'], Buffer.from(text, 'utf8')));
  const bad = [];
  results.forEach((r, i) => {
    const want = refIds(texts[i]);
    if (r.status !== 0 || r.signal) bad.push(`${show(texts[i])}: exit ${r.status} ${r.signal ?? ''} ${r.stderr}`);
    else if (parseIds(r.stdout).join(' ') !== want.join(' '))
      bad.push(`${show(texts[i])}:\n    got  ${r.stdout.trim()}\n    want ${want.join(' ')}`);
  });
  return bad;
}

test(`tokenize: the reference's ids for ${HAND.length} hand-written and ${RANDOM.length} random texts`, async () => {
  const bad = await compareEncodings(CLI, ALL);
  assert.equal(bad.length, 0, `${bad.length} of ${ALL.length} texts differ; the first:\n${bad.slice(0, 5).join('\n')}`);
  // The random texts reach what they are meant to: added tokens, byte-split characters, runs.
  const ids = RANDOM.flatMap((t) => refIds(t));
  assert.ok(ids.filter((id) => id <= 35).length > 500, 'few added tokens in the random texts');
  assert.ok(RANDOM.filter((t) => /\s{2,}/u.test(t)).length > 300, 'few white space runs');
});

test('tokenize (ASan build): the reference\'s ids for the hand-written texts and 150 random ones', { skip: !ASAN_CLI }, async () => {
  const texts = [...HAND, ...RANDOM.slice(0, 150)];
  const bad = await compareEncodings(ASAN_CLI, texts);
  assert.equal(bad.length, 0, `${bad.length} differ; the first:\n${bad.slice(0, 5).join('\n')}`);
});

test('tokenize: 100 KB of mixed text from standard input, as the reference encodes it', () => {
  let text = '';
  for (let i = 0; Buffer.byteLength(text) <= 100000; i++) text += `${ALL[i % ALL.length]} `;
  const r = run(CLI, ['tokenize', '--tokenizer', TOK], { input: Buffer.from(text, 'utf8') });
  assert.equal(r.status, 0, r.stderr);
  assert.ok(Buffer.byteLength(text) > 100000, `${Buffer.byteLength(text)} bytes`);
  assert.deepEqual(parseIds(r.stdout), refIds(text));
});

// ---- decoding -----------------------------------------------------------------------------------

test('--decode: the reference\'s text for the ids of every text, which is the text itself', async () => {
  const cases = ALL.map((text) => ({ text, ids: refIds(text) })).filter((c) => c.ids.length > 0);
  const results = await inPool(cases, 4, (c) =>
    runAsync(CLI, ['tokenize', '--tokenizer', TOK, '--decode'], c.ids.join(' ')));
  const bad = [];
  results.forEach((r, i) => {
    const { text, ids } = cases[i];
    const want = refDecode(ids);
    assert.equal(want, text, `the reference does not give ${show(text)} back`);
    if (r.status !== 0 || r.stdout !== `${want}\n`) bad.push(`${show(text)}: got ${show(r.stdout)} ${r.stderr}`);
  });
  assert.equal(bad.length, 0, `${bad.length} of ${cases.length} decodes differ; the first:\n${bad.slice(0, 5).join('\n')}`);
});

// A run of \xNN escapes, or of U+FFFD, as one U+FFFD.
const replaced = (s) => s.replace(/(?:\\x[0-9A-F]{2})+/g, '\uFFFD').replace(/\uFFFD+/g, '\uFFFD');

test('--decode: random ids as the reference decodes them (bytes that are not UTF-8 escaped)', async () => {
  const rand = generator(7);
  const cases = Array.from({ length: 300 }, (_, i) =>
    Array.from({ length: 1 + Math.floor(rand() * 20) }, () => Math.floor(rand() * (i % 3 ? 6400 : 300))));
  const results = await inPool(cases, 4, (ids) => runAsync(CLI, ['tokenize', '--tokenizer', TOK, '--decode'], ids.join(' ')));
  let invalid = 0;
  results.forEach((r, i) => {
    assert.equal(r.status, 0, r.stderr);
    const want = refDecode(cases[i]);
    if (want.includes('\uFFFD')) invalid++;
    assert.ok(!r.stdout.includes('\uFFFD'), 'attnlab never writes U+FFFD');
    assert.equal(replaced(r.stdout.slice(0, -1)), replaced(want), `ids ${cases[i].join(' ')}`);
  });
  assert.ok(invalid > 30, `only ${invalid} cases had bytes that are not UTF-8`);
});

test('--decode holds a character split over tokens until it is whole', () => {
  // Characters MiniMind's vocabulary writes as several byte tokens: a prefix of their ids ends
  // inside a character (the reference writes U+FFFD there), the whole is the text.
  for (const text of ['龘', '𠀀好', '嫑 😀', '生僻字：爩']) {
    const ids = refIds(text);
    const cut = ids.findIndex((_, k) => k > 0 && refDecode(ids.slice(0, k)).includes('\uFFFD'));
    assert.ok(cut > 0, `${text}: no id ends inside a character (${ids.join(' ')})`);
    const whole = run(CLI, ['tokenize', '--tokenizer', TOK, '--decode', '--text', ids.join(' ')]);
    assert.equal(whole.stdout, `${text}\n`);
    // Cut there, what is held comes out at the end as \xNN, the text before it whole.
    const part = run(CLI, ['tokenize', '--tokenizer', TOK, '--decode', '--text', ids.slice(0, cut).join(' ')]);
    const before = refDecode(ids.slice(0, cut)).replace(/\uFFFD+$/, '');
    assert.match(part.stdout, new RegExp(`^${before.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(\\\\x[0-9A-F]{2})+\\n$`, 'u'));
  }
});

// ---- pieces, BOS and EOS ------------------------------------------------------------------------

const VOCAB_BY_ID = new Map(Object.entries(TOK_JSON.model.vocab).map(([text, id]) => [id, text]));
const ADDED_BY_ID = new Map(TOK_JSON.added_tokens.map((a) => [a.id, a.content]));
const pieceBytes = (id) => (ADDED_BY_ID.has(id) ? Buffer.from(ADDED_BY_ID.get(id), 'utf8')
  : Buffer.from([...VOCAB_BY_ID.get(id)].map((c) => BYTE_OF_CHAR.get(c))));

test('--pieces shows each id\'s bytes (an added token\'s text as it is)', () => {
  for (const text of ['Hello world', '你好，世界！', '<|im_start|>user\n龘<|im_end|>', ' \t tabs and\u00a0nbsp', '😀🎉']) {
    const r = run(CLI, ['tokenize', '--tokenizer', TOK, '--pieces', '--text', text]);
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout, `${refIds(text).map((id) => showPiece(pieceBytes(id))).join(' ')}\n`, show(text));
  }
});

test('a tokenizer.json adds no BOS (with or without --no-bos), refuses --eos, and checks --vocab-size', () => {
  const text = '<|im_start|>hi';
  const plain = run(CLI, ['tokenize', '--tokenizer', TOK, '--text', text]);
  const noBos = run(CLI, ['tokenize', '--tokenizer', TOK, '--no-bos', '--text', text]);
  assert.equal(plain.status, 0, plain.stderr);
  assert.equal(plain.stdout, noBos.stdout);
  assert.deepEqual(parseIds(plain.stdout), refIds(text));
  const eos = run(CLI, ['tokenize', '--tokenizer', TOK, '--eos', '--text', text]);
  assert.equal(eos.status, 2);
  assert.match(eos.stderr, /^attnlab: --eos: '.*tokenizer\.json' defines no EOS token of its own/);
  assert.equal(run(CLI, ['tokenize', '--tokenizer', TOK, '--vocab-size', '6400', '--text', 'a']).status, 0);
  const size = run(CLI, ['tokenize', '--tokenizer', TOK, '--vocab-size', '6401', '--text', 'a']);
  assert.equal(size.status, 2);
  assert.match(size.stderr, /\(read as a Hugging Face tokenizer\.json\): the file defines 6400 tokens \(model\.vocab and added_tokens\) but the vocabulary size is 6401/);
});

test('core/tokenizer/gen/unicode_class.c is what tools/gen/gen_unicode_class.mjs writes', () => {
  assert.ok(readFileSync(UNICODE_OUT, 'utf8') === unicodeSource(), 'run: node tools/gen/gen_unicode_class.mjs');
});

// ---- malformed files ----------------------------------------------------------------------------

function tokenizeWith(json, args = ['--text', 'hehe<|x|>']) {
  const path = join(work, `t${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(path, typeof json === 'string' ? json : JSON.stringify(json));
  return run(CLI, ['tokenize', '--tokenizer', path, ...args]);
}

test('the small tokenizer reads, and encodes as the reference does', () => {
  const r = tokenizeWith(small());
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout, '256 256 257\n');
  assert.deepEqual(new Tokenizer(small(), {}).encode('hehe<|x|>').ids, [256, 256, 257]);
  // merges written "h e", a Sequence holding the ByteLevel, a ByteLevel post-processor: the same.
  const o = small();
  o.model.merges = ['h e'];
  o.pre_tokenizer = { type: 'Sequence', pretokenizers: [o.pre_tokenizer] };
  o.post_processor = { type: 'ByteLevel', trim_offsets: false };
  assert.equal(tokenizeWith(o).stdout, '256 256 257\n');
});

// Small tokenizers whose merges cross the edges a wrong split would move (two spaces, "'s" and
// "'S" (a contraction only in lower case), a space before a digit), with added tokens where one
// starts another, and each
// ByteLevel option: the reference's ids for the hand-written texts and 300 random ones.
test('made-up tokenizers (overlapping added tokens, add_prefix_space, use_regex false): the reference\'s ids', async () => {
  const texts = [...HAND.slice(0, 120), ...RANDOM.slice(0, 300), "x's x'S it'S", 'a  b a  \n', '<a>bc<a>c<a>', ' <a>b', 'he<a>he', '1 2  3'];
  for (const [prefix, regex] of [[false, true], [true, true], [false, false]]) {
    const o = small();
    const next = 257;
    for (const [k, text] of ['ĠĠ', "'s", "'S", 'Ġ1', 'hehe'].entries()) o.model.vocab[text] = next + k;
    o.model.merges.push(['Ġ', 'Ġ'], ["'", 's'], ["'", 'S'], ['Ġ', '1'], ['he', 'he']);
    o.added_tokens = ['<|x|>', '<a>', '<a>b', '<a>bc<'].map((content, k) => ({ ...o.added_tokens[0], id: next + 5 + k, content }));
    o.pre_tokenizer.add_prefix_space = prefix;
    o.pre_tokenizer.use_regex = regex;
    const path = join(work, `made-up-${prefix}-${regex}.json`);
    writeFileSync(path, JSON.stringify(o));
    const ref = new Tokenizer(o, {});
    const results = await inPool(texts, 4, (text) => runAsync(CLI, ['tokenize', '--tokenizer', path], Buffer.from(text, 'utf8')));
    results.forEach((r, i) => {
      assert.equal(r.status, 0, r.stderr);
      assert.deepEqual(parseIds(r.stdout), ref.encode(texts[i]).ids, `add_prefix_space ${prefix}, use_regex ${regex}: ${show(texts[i])}`);
    });
  }
});

// Added tokens that overlap in every way the cut at them can get wrong: prefixes of each other
// ('<' .. '<<<', '<a' .. '<a>b'), one inside another ('a>' in '<a>b'), one ending where another
// starts ('b<'), ones sharing their first bytes ('中' and '丁' share two of their three in
// UTF-8), tokens of the vocabulary ('he', 'a'), a long run that only its last byte completes;
// then random strings over their characters. The texts are those pieces, their parts and the
// characters, run together, and runs one byte short of a token or one past it.
const OVERLAPPING = ['<', '<<', '<<<', '<a', '<a>', '<a>b', 'a>', '>b', 'b<', '|', '<|', '|>', '<|x|>', 'he', 'a',
  '中', '中文', '丁', ' <', '\n\n', `${'<'.repeat(40)}x`];
const CHARS = ['<', '>', 'a', 'b', '|', ' ', 'x', 'h', 'e', '中', '文', '丁', '\n'];

function overlappingTexts(contents, count, rand) {
  const pick = (list) => list[Math.floor(rand() * list.length)];
  const parts = contents.flatMap((c) => { const ch = [...c]; return [c, ch.slice(1).join(''), ch.slice(0, -1).join('')]; });
  const texts = ['<'.repeat(100), `${'<'.repeat(39)}x`, `${'<'.repeat(41)}x`, `<<${'<'.repeat(40)}x<`, '<a>b<a>b<<<a>',
    '<a>a>b<', '中文丁中丁文', 'hehe he', '', 'b<a>b<|x|>|><|'];
  while (texts.length < count) {
    let t = '';
    for (let k = 1 + Math.floor(rand() * 12); k > 0; k--) t += rand() < 0.5 ? pick(parts) : pick(CHARS);
    texts.push(t);
  }
  return texts;
}

test('made-up tokenizers with many overlapping added tokens: the reference\'s ids, both builds', async () => {
  const rand = generator(99);
  const sets = [OVERLAPPING];
  for (let s = 0; s < 3; s++) {
    const extra = new Set();
    while (extra.size < 60) {
      let c = '';
      for (let k = 1 + Math.floor(rand() * 6); k > 0; k--) c += CHARS[Math.floor(rand() * CHARS.length)];
      if (!OVERLAPPING.includes(c)) extra.add(c);
    }
    sets.push([...OVERLAPPING, ...extra]);
  }
  for (const [k, contents] of sets.entries()) {
    const o = withAdded(contents);
    o.pre_tokenizer.add_prefix_space = k === 1;
    const path = join(work, `overlapping-${k}.json`);
    writeFileSync(path, JSON.stringify(o));
    const ref = new Tokenizer(o, {});
    const texts = [...overlappingTexts(contents, 150, rand), ...HAND.slice(0, 40)];
    for (const [cli, some] of [[CLI, texts], [ASAN_CLI, texts.slice(0, 30)]]) {
      if (!cli) continue;
      const results = await inPool(some, 4, (text) => runAsync(cli, ['tokenize', '--tokenizer', path], Buffer.from(text, 'utf8')));
      results.forEach((r, i) => {
        assert.equal(r.status, 0, r.stderr);
        assert.deepEqual(parseIds(r.stdout), ref.encode(some[i]).ids, `${cli}, tokenizer ${k}: ${show(some[i])}`);
      });
    }
    // The texts reach what they are meant to: many added tokens, several side by side.
    const ids = texts.flatMap((t) => ref.encode(t).ids);
    const added = new Set(o.added_tokens.map((a) => a.id));
    assert.ok(ids.filter((id) => added.has(id)).length > 500, `tokenizer ${k}: few added tokens in the texts`);
  }
});

// 50,000 added tokens starting with '<': 1 MB of '<' and 100 KB of mixed text (with the
// MiniMind markers, so many a '<') encode as the reference encodes them. Every place used to
// try each token with its first byte: minutes for the 1 MB; the bound is only a hang guard.
test('50,000 added tokens sharing their first byte: 1 MB of \'<\' and 100 KB of text, the reference\'s ids', () => {
  const o = manyAdded(50000);
  const path = join(work, 'many-added.json');
  writeFileSync(path, JSON.stringify(o));
  const ref = new Tokenizer(o, {});
  let mixed = '';
  for (let i = 0; Buffer.byteLength(mixed) <= 100000; i++) mixed += `${ALL[i % ALL.length]} `;
  for (const variant of VARIANTS) {
    for (const text of ['<'.repeat(1 << 20), mixed]) {
      const what = `${variant.name}: ${Buffer.byteLength(text)} bytes of ${show(text.slice(0, 20))}`;
      const r = run(join(variant.dir, 'attnlab'), ['tokenize', '--tokenizer', path], { input: Buffer.from(text, 'utf8'), timeout: 20000 });
      assert.equal(r.signal, null, `${what}: still running after 20 s (the hang guard)`);
      assert.equal(r.status, 0, r.stderr);
      const got = parseIds(r.stdout), want = ref.encode(text).ids;
      const at = got.findIndex((id, i) => id !== want[i]);
      assert.ok(at < 0 && got.length === want.length, `${what}: ${got.length} ids, the reference ${want.length}; ` +
        `the first difference at ${at < 0 ? Math.min(got.length, want.length) : at}: ${got[at]} for ${want[at]}`);
    }
  }
});

const change = (f) => { const o = small(); f(o); return o; };
const MALFORMED = [
  ['not JSON', '{"model": ', /not valid JSON: unexpected end of text/],
  ['an empty object', '{}', /there is no pre_tokenizer/],
  ['a key twice', JSON.stringify(small()).replace('"model":', '"decoder": null, "model":'), /the file has "decoder" twice/],
  ['a normalizer', change((o) => { o.normalizer = { type: 'NFC' }; }), /normalizer is set: not supported/],
  ['truncation', change((o) => { o.truncation = { max_length: 8 }; }), /truncation is set: not supported/],
  ['padding', change((o) => { o.padding = { strategy: 'BatchLongest' }; }), /padding is set: not supported/],
  ['another pre-tokenizer', change((o) => { o.pre_tokenizer = { type: 'Metaspace' }; }), /pre_tokenizer: type 'Metaspace' is not supported/],
  ['a Sequence of two', change((o) => { o.pre_tokenizer = { type: 'Sequence', pretokenizers: [{ type: 'Digits' }, o.pre_tokenizer] }; }), /a Sequence of more than one pre-tokenizer is not supported/],
  ['a Sequence of a Split', change((o) => { o.pre_tokenizer = { type: 'Sequence', pretokenizers: [{ type: 'Split' }] }; }), /pre_tokenizer\.pretokenizers\[0\]: type 'Split' is not supported/],
  ['no add_prefix_space', change((o) => { delete o.pre_tokenizer.add_prefix_space; }), /pre_tokenizer has no "add_prefix_space"/],
  ['use_regex not a flag', change((o) => { o.pre_tokenizer.use_regex = 'yes'; }), /pre_tokenizer\.use_regex must be true or false/],
  ['no decoder', change((o) => { delete o.decoder; }), /there is no decoder/],
  ['another decoder', change((o) => { o.decoder = { type: 'WordPiece' }; }), /decoder: type 'WordPiece' is not supported \(only ByteLevel\)/],
  ['a template post-processor', change((o) => { o.post_processor = { type: 'TemplateProcessing' }; }), /post_processor: type 'TemplateProcessing' is not supported/],
  ['no model', change((o) => { delete o.model; }), /there is no "model"/],
  ['another model', change((o) => { o.model.type = 'WordPiece'; }), /model: type 'WordPiece' is not supported \(only BPE\)/],
  ['dropout', change((o) => { o.model.dropout = 0.1; }), /model\.dropout is set: not supported/],
  ['a subword prefix', change((o) => { o.model.continuing_subword_prefix = '##'; }), /model\.continuing_subword_prefix is set/],
  ['an end-of-word suffix', change((o) => { o.model.end_of_word_suffix = '</w>'; }), /model\.end_of_word_suffix is set/],
  ['byte_fallback', change((o) => { o.model.byte_fallback = true; }), /model\.byte_fallback is true: not supported/],
  ['ignore_merges', change((o) => { o.model.ignore_merges = true; }), /model\.ignore_merges is true: not supported/],
  ['no vocab', change((o) => { delete o.model.vocab; }), /model has no "vocab"/],
  ['no merges', change((o) => { delete o.model.merges; }), /model has no "merges"/],
  ['an empty vocab', change((o) => { o.model.vocab = {}; }), /model\.vocab is empty/],
  ['an id that is no number', change((o) => { o.model.vocab.he = '256'; }), /model\.vocab: the id of entry 256 must be a whole number/],
  ['an id out of range', change((o) => { o.model.vocab.he = 999; }), /model\.vocab: 'he' has id 999, outside \[0, 257\)/],
  ['two tokens with one id', change((o) => { o.model.vocab.he = 5; }), /model\.vocab: '&' and 'he' both have id 5|model\.vocab: 'he' has id 5|both have id 5/],
  ['an empty token', JSON.stringify(small()).replace('"he":256', '"":256'), /model\.vocab: entry 256 is the empty string/],
  ['a token twice', JSON.stringify(small()).replace('"he":256', '"he":256,"he":257'), /model\.vocab has 'he' twice \(ids 256 and 257\)/],
  ['a token that is not ByteLevel text', change((o) => { delete o.model.vocab.he; o.model.vocab['h e'] = 256; o.model.merges = []; }), /model\.vocab: token 256 \('h e'\) is not ByteLevel text: ' ' is not one of its 256 characters/],
  ['a byte without a token', change((o) => { delete o.model.vocab['Ċ']; o.model.vocab['ĊĊ'] = 10; }), /model\.vocab has no token for the byte 0x0A \('Ċ'\)/],
  ['a merge of a token not in vocab', change((o) => { o.model.merges.push(['hq', 'e']); }), /model\.merges\[1\]: 'hq' is not in model\.vocab/],
  ['a merge whose result is not in vocab', change((o) => { o.model.merges.push(['e', 'h']); }), /model\.merges\[1\]: 'e' \+ 'h' is not in model\.vocab/],
  ['a merge twice', change((o) => { o.model.merges.push(['h', 'e']); }), /model\.merges\[1\] repeats model\.merges\[0\] \('h' 'e'\)/],
  ['a merge of three', change((o) => { o.model.merges = [['h', 'e', 'x']]; }), /model\.merges\[0\] must be a pair of strings/],
  ['a merge string of three', change((o) => { o.model.merges = ['h e x']; }), /model\.merges\[0\] \('h e x'\) must be two tokens separated by one space/],
  ['an unk_token not in vocab', change((o) => { o.model.unk_token = '<unk>'; }), /model\.unk_token '<unk>' is not in model\.vocab/],
  ['added tokens not an array', change((o) => { o.added_tokens = {}; }), /added_tokens must be an array/],
  ['an added token without id', change((o) => { delete o.added_tokens[0].id; }), /added_tokens\[0\]: "id" must be a whole number/],
  ['an added token without content', change((o) => { delete o.added_tokens[0].content; }), /added_tokens\[0\]: "content" must be a string/],
  ['an empty added token', change((o) => { o.added_tokens[0].content = ''; }), /added_tokens\[0\]: the content is empty/],
  ['an added token twice', change((o) => { o.added_tokens.push({ ...o.added_tokens[0], id: 258 }); }), /added_tokens\[1\] repeats the content of added_tokens\[0\] \('<\|x\|>'\)/],
  ['an added token with another id than vocab\'s', change((o) => { o.added_tokens[0].content = 'he'; o.added_tokens[0].id = 200; }), /added_tokens\[0\] \('he'\) has id 200, but model\.vocab gives it id 256/],
  ['an added token on a vocab id', change((o) => { o.added_tokens[0].id = 100; }), /added_tokens\[0\] \('<\|x\|>'\) has id 100, which is model\.vocab's 'd'/],
  ['an added token after a gap', change((o) => { o.added_tokens[0].id = 300; }), /added_tokens\[0\] \('<\|x\|>'\) has id 300: the added tokens outside model\.vocab take the ids after its 257, without gaps/],
  ['an added token after a gap left by one in vocab', change((o) => { o.added_tokens = [{ ...o.added_tokens[0], id: 256, content: 'he' }, { ...o.added_tokens[0], id: 258 }]; }), /added_tokens\[1\] \('<\|x\|>'\) has id 258: the added tokens outside model\.vocab take the ids after its 257, without gaps/],
  ['two added tokens with one id', change((o) => { o.added_tokens.push({ ...o.added_tokens[0], content: '<|y|>' }); }), /added_tokens\[0\] and added_tokens\[1\] both have id 257/],
  ['an added token with lstrip', change((o) => { o.added_tokens[0].lstrip = true; }), /added_tokens\[0\]\.lstrip is true: not supported/],
  ['an added token with single_word', change((o) => { o.added_tokens[0].single_word = true; }), /added_tokens\[0\]\.single_word is true: not supported/],
  ['a flag that is no flag', change((o) => { o.added_tokens[0].special = 1; }), /added_tokens\[0\]\.special must be true or false/],
];

test(`${MALFORMED.length} malformed tokenizer.json files: each refused with its own message, one line, exit 2`, () => {
  const seen = new Set();
  for (const [name, json, message] of MALFORMED) {
    for (const cli of [CLI, ASAN_CLI].filter(Boolean)) {
      const path = join(work, `${name.replaceAll(/\W+/g, '-')}.json`);
      writeFileSync(path, typeof json === 'string' ? json : JSON.stringify(json));
      const r = run(cli, ['tokenize', '--tokenizer', path, '--text', 'he']);
      assert.equal(r.signal, null, `${name}: killed by ${r.signal}: ${r.stderr}`);
      assert.equal(r.status, 2, `${name}: exit ${r.status}\n${r.stderr}${r.stdout}`);
      assert.equal(r.stdout, '', `${name}: nothing on standard output`);
      const lines = r.stderr.trim().split('\n');
      assert.equal(lines.length, 1, `${name}: one line: ${r.stderr}`);
      assert.match(lines[0], /\(read as a Hugging Face tokenizer\.json\): /, name);
      assert.match(lines[0], message, name);
      seen.add(lines[0].replace(/^.*\(read as a Hugging Face tokenizer\.json\): /, ''));
    }
  }
  assert.equal(seen.size, MALFORMED.length, 'two files gave the same message');
});

// ---- generate --chat ----------------------------------------------------------------------------

const CHAT = JSON.parse(readFileSync(join(ROOT, 'tests', 'fixtures', 'minimind_chat', 'chat.json'), 'utf8'));
const MINIMIND = join(ROOT, 'tests', 'fixtures', 'minimind');

// A MiniMind folder: a fixture's config.json and model.safetensors, and (if `tokenizer`) the
// tokenizer.json beside them.
function folder(name, fixture, tokenizer = TOK) {
  const dir = join(work, name);
  mkdirSync(dir);
  for (const f of ['config.json', 'model.safetensors']) symlinkSync(join(MINIMIND, fixture, f), join(dir, f));
  if (tokenizer) symlinkSync(tokenizer, join(dir, 'tokenizer.json'));
  return dir;
}
const MODEL = folder('dense_f16', 'dense_f16'); // the one fixture with MiniMind's vocabulary, 6400
const SAMPLING = ['--max-new-tokens', '12', '--temperature', '1', '--top-k', '0', '--top-p', '1', '--print-ids'];

test('chat.json is rendered from the tokenizer_config.json of today', async () => {
  const { createHash } = await import('node:crypto');
  assert.equal(createHash('sha256').update(TOK_CONFIG.chat_template).digest('hex'), CHAT.template_sha256,
    'the chat template changed: run python3 tests/fixtures/gen_minimind_chat.py');
  assert.ok(CHAT.cases.length >= 16);
});

test('generate --chat: the prompt the chat template renders, encoded as the reference encodes it', async () => {
  const jobs = [];
  for (const c of CHAT.cases) {
    const ids = refIds(c.rendered);
    for (const seed of ['1', '2']) {
      jobs.push({ c, ids, seed,
        chat: ['generate', '--model', MODEL, '--chat', c.message, ...(c.think ? ['--think'] : []), '--seed', seed, ...SAMPLING],
        byIds: ['generate', '--model', MODEL, '--ids', ids.join(' '), '--seed', seed, ...SAMPLING] });
    }
  }
  const results = await inPool(jobs, 4, async (j) => [await runAsync(CLI, j.chat, ''), await runAsync(CLI, j.byIds, '')]);
  const continuations = new Set();
  results.forEach(([chat, byIds], k) => {
    const { c, ids, seed } = jobs[k];
    const what = `--chat ${show(c.message)}${c.think ? ' --think' : ''} (seed ${seed})`;
    assert.equal(chat.status, 0, `${what}: ${chat.stderr}`);
    assert.equal(byIds.status, 0, byIds.stderr);
    assert.match(chat.stderr, new RegExp(`^prompt ${ids.length} tokens`), what);
    assert.equal(chat.stdout, byIds.stdout, `${what}: not the continuation of the reference's ids ${ids.join(' ')}`);
    continuations.add(chat.stdout);
  });
  // The comparison tells prompts apart: different prompts sample different continuations.
  assert.ok(continuations.size > jobs.length * 0.8, `only ${continuations.size} different continuations of ${jobs.length}`);
});

test('generate --chat streams the reply alone, as the reference decodes its ids', () => {
  for (const message of ['你好', 'Tell me a story.']) {
    const ids = run(CLI, ['generate', '--model', MODEL, '--chat', message, '--max-new-tokens', '16', '--temperature', '0', '--print-ids']);
    const text = run(CLI, ['generate', '--model', MODEL, '--chat', message, '--max-new-tokens', '16', '--temperature', '0']);
    assert.equal(text.status, 0, text.stderr);
    const reply = parseIds(ids.stdout);
    assert.equal(reply.length, 16);
    assert.equal(replaced(text.stdout), `${replaced(refDecode(reply))}\n`, message);
  }
});

test('generate --prompt with a MiniMind folder: its tokenizer.json by default, no BOS added', () => {
  const text = 'Once upon a time, 从前有座山';
  const ids = refIds(text);
  const byPrompt = run(CLI, ['generate', '--model', MODEL, '--prompt', text, '--seed', '3', ...SAMPLING]);
  const byIds = run(CLI, ['generate', '--model', MODEL, '--ids', ids.join(' '), '--seed', '3', ...SAMPLING]);
  assert.equal(byPrompt.status, 0, byPrompt.stderr);
  assert.match(byPrompt.stderr, new RegExp(`^prompt ${ids.length} tokens`));
  assert.equal(byPrompt.stdout, byIds.stdout);
  // With the text streamed: the prompt, then the continuation.
  const streamed = run(CLI, ['generate', '--model', MODEL, '--prompt', text, '--max-new-tokens', '4', '--temperature', '0']);
  assert.ok(streamed.stdout.startsWith(text), show(streamed.stdout));
});

test('generate --chat refuses what does not fit, with one line and exit 2', () => {
  const noTokenizer = folder('no-tokenizer', 'dense_f16', null);
  const otherVocab = folder('dense_bf16', 'dense_bf16'); // vocab 300, with MiniMind's tokenizer.json
  const cases = [
    [['--model', otherVocab, '--chat', 'hi'], /the tokenizer has 6400 tokens but the model's vocabulary has 300: they do not belong together/],
    [['--model', join(MINIMIND, 'dense_bf16'), '--tokenizer', TOK, '--chat', 'hi'], /the tokenizer has 6400 tokens but the model's vocabulary has 300/],
    [['--model', noTokenizer, '--chat', 'hi'], /--chat needs a tokenizer: '.*no-tokenizer' has no tokenizer\.json \(give --tokenizer\)/],
    [['--model', noTokenizer, '--prompt', 'hi'], /--prompt needs a tokenizer: '.*no-tokenizer' has no tokenizer\.json/],
    [['--model', join(ROOT, 'models', 'stories260K', 'stories260K.bin'), '--chat', 'hi'], /--chat writes MiniMind's chat format: --model must be a MiniMind folder/],
    [['--model', MODEL, '--think', '--prompt', 'hi'], /--think opens the reply's thinking in the chat format: it goes with --chat/],
    [['--model', MODEL, '--chat', 'hi', '--ids', '1'], /generate needs --model and one of --ids .*, --prompt TEXT or --chat TEXT/],
    [['--model', MODEL, '--chat'], /--chat expects a value/],
  ];
  for (const [args, message] of cases) {
    const r = run(CLI, ['generate', ...args]);
    assert.equal(r.status, 2, `${args.join(' ')}: exit ${r.status} ${r.stderr}`);
    assert.equal(r.stdout, '');
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    assert.match(r.stderr, message);
  }
  // With --tokenizer the folder's own is not needed.
  const given = run(CLI, ['generate', '--model', noTokenizer, '--tokenizer', TOK, '--chat', 'hi', '--max-new-tokens', '2']);
  assert.equal(given.status, 0, given.stderr);
});
