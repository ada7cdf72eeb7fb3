// cli-tokenize.test.mjs — `attnlab tokenize` with stories260K's tok512.bin: the ids of a few
// texts derived by hand (the derivations are in tests/test_tokenizer.c), the same ids from
// --text and from standard input, --pieces equal to the file's own pieces of those ids (read
// here in JavaScript) shown as tests/lib/tokenizer.mjs describes, --decode giving the text back
// (invalid UTF-8 escaped, never U+FFFD), a tokenizer.bin whose first byte is '{' still read as
// one, and bad files and flags refused with one line and exit 2, both builds.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT, VARIANTS, run } from './lib/run.mjs';
import { readTokenizerBin, showPiece } from './lib/tokenizer.mjs';
import { storyText100KB } from './lib/tok-texts.mjs';

const TOK = join(ROOT, 'models', 'stories260K', 'tok512.bin');
const VOCAB = readTokenizerBin(TOK);
const work = mkdtempSync(join(tmpdir(), 'attnlab-tokenize-'));
process.on('exit', () => rmSync(work, { recursive: true, force: true }));

function tokenize(variant, args, input) {
  const r = run(join(variant.dir, 'attnlab'), ['tokenize', '--tokenizer', TOK, ...args], input === undefined ? {} : { input });
  assert.equal(r.signal, null, `killed by ${r.signal}: ${r.stderr}`);
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stderr, '');
  assert.ok(r.stdout.endsWith('\n'), `no newline at the end: ${JSON.stringify(r.stdout)}`);
  if (!args.includes('--decode')) assert.equal(r.stdout.indexOf('\n'), r.stdout.length - 1, `one line: ${JSON.stringify(r.stdout)}`);
  return r.stdout.slice(0, -1);
}
const ids = (variant, text, flags = []) => tokenize(variant, ['--text', text, ...flags]).split(' ').filter(Boolean).map(Number);

// Derived by hand in tests/test_tokenizer.c (test_hand_checked).
const HAND = [
  ['', [1]],
  ['a', [1, 261]],
  ['time', [1, 378]],
  ['hello', [1, 281, 306, 414]],
  ['Lily', [1, 317]],
  ['中', [1, 410, 231, 187, 176]],
  ['Once upon a time', [1, 403, 407, 261, 378]],
];

for (const variant of VARIANTS) {
  test(`${variant.name}: tokenize gives the hand-derived ids, with --no-bos and --eos`, () => {
    for (const [text, want] of HAND) {
      assert.deepEqual(ids(variant, text), want, JSON.stringify(text));
      assert.deepEqual(ids(variant, text, ['--no-bos']), want.slice(1), `${JSON.stringify(text)} --no-bos`);
      assert.deepEqual(ids(variant, text, ['--eos']), [...want, 2], `${JSON.stringify(text)} --eos`);
    }
  });

  test(`${variant.name}: standard input gives the ids --text gives, NUL bytes included, read to its end`, () => {
    const texts = ['Once upon a time, there was a little girl named Lily.\nShe loved to play.\n', 'café 中文 😀', '', '  spaces  '];
    for (const text of texts) {
      assert.equal(tokenize(variant, [], Buffer.from(text)), tokenize(variant, ['--text', text]), JSON.stringify(text));
    }
    // A NUL byte is the byte <0x00> (id 3); what follows it is still read.
    assert.equal(tokenize(variant, ['--no-bos'], Buffer.from('a\0a')), '261 3 412');
    // 100 KB (several reads; a single argument may hold up to 128 KiB).
    const long = 'Lily saw a big red ball. '.repeat(4000);
    const line = tokenize(variant, [], Buffer.from(long));
    assert.equal(line, tokenize(variant, ['--text', long]));
    assert.ok(line.split(' ').length > 4000 * 6, `${line.split(' ').length} ids for ${long.length} bytes`);
  });

  test(`${variant.name}: --pieces prints the file's pieces of those ids, escaped for one line`, () => {
    const texts = ['Once upon a time, there was a little girl named Lily.', 'tab\there\\back “quote” é\u00a0中😀', 'line\nbreak\r\n'];
    for (const text of texts) {
      const got = tokenize(variant, ['--text', text, '--pieces']);
      const want = ids(variant, text).map((id) => showPiece(VOCAB.pieces[id])).join(' ');
      assert.equal(got, want, JSON.stringify(text));
      assert.ok(!/[\n\r\t]/.test(got));
    }
    assert.equal(tokenize(variant, ['--text', 'Once upon a time', '--pieces']), '\\n<s>\\n \u2581Once \u2581upon \u2581a \u2581time');
    assert.equal(tokenize(variant, ['--text', '中', '--pieces', '--no-bos']), '\u2581 <0xE4> <0xB8> <0xAD>');
    assert.equal(tokenize(variant, ['--text', 'a\\b', '--pieces', '--no-bos']), '\u2581a \\\\ b');
  });

  test(`${variant.name}: --decode gives the text back, holding split characters, escaping invalid bytes`, () => {
    const texts = ['Once upon a time, there was a little girl named Lily.', 'café 中文字符 😀🎉 “ok” \u00a0', 'new\nlines\n'];
    for (const text of texts) {
      const line = tokenize(variant, ['--text', text]);
      assert.equal(tokenize(variant, ['--decode', '--text', line]), text, JSON.stringify(text));
      assert.equal(tokenize(variant, ['--decode'], Buffer.from(`${line.replaceAll(' ', '\n')}\n`)), text, 'ids from standard input');
    }
    // E4 then 'a' (a character cut short), a lone continuation byte, then E4 B8 at the end.
    assert.equal(tokenize(variant, ['--decode', '--text', `1 ${3 + 0xE4} ${3 + 0x61} ${3 + 0x80} 403 ${3 + 0xE4} ${3 + 0xB8}`]), '\\xE4a\\x80 Once\\xE4\\xB8');
    assert.equal(tokenize(variant, ['--decode', '--text', '1 2']), '');
  });

  test(`${variant.name}: a tokenizer.bin whose max_token_length is 123 starts with '{' and is still one`, () => {
    const b = readFileSync(TOK);
    b.writeInt32LE(123, 0);
    const path = join(work, `brace-${variant.name}.bin`);
    writeFileSync(path, b);
    assert.equal(b[0], '{'.charCodeAt(0));
    const r = run(join(variant.dir, 'attnlab'), ['tokenize', '--tokenizer', path, '--text', 'Lily']);
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout, '1 317\n');
  });
}

// (How long it takes is the bench's: tests/bench/run.mjs.)
test('tokenize: 100 KB from standard input, the same ids as from --text', () => {
  const text = storyText100KB();
  assert.ok(Buffer.byteLength(text) > 100000);
  const line = tokenize(VARIANTS[0], [], Buffer.from(text));
  assert.ok(line.split(' ').length > 20000);
  assert.equal(tokenize(VARIANTS[0], ['--text', text]), line);
});

// Bad files and flags: [name, args (after 'tokenize'), file bytes or null, stdin, message].
const truncated = readFileSync(TOK).subarray(0, 3000);
const negative = Buffer.from(readFileSync(TOK));
negative.writeInt32LE(-7, 4 + 4);
const BAD = [
  ['no --tokenizer', ['--text', 'a'], null, /^attnlab: tokenize needs --tokenizer/],
  ['an unknown option', ['--tokenizer', TOK, '--lang', 'en'], null, /unknown option '--lang' for tokenize/],
  ['--text without its value', ['--tokenizer', TOK, '--text'], null, /--text expects the text/],
  ['--tokenizer without its value', ['--tokenizer'], null, /--tokenizer expects a file path/],
  ['--vocab-size not a number', ['--tokenizer', TOK, '--vocab-size', 'lots'], null, /--vocab-size expects a whole number between 0 and 2097152 .* got 'lots'/],
  ['--vocab-size that does not match', ['--tokenizer', TOK, '--vocab-size', '600', '--text', 'a'], null, /tok512\.bin \(read as llama2\.c's tokenizer\.bin\): the file holds 512 tokens but the vocabulary size is 600/],
  ['--vocab-size below the byte pieces', ['--tokenizer', TOK, '--vocab-size', '32', '--text', 'a'], null, /vocab_size 32 is outside \[259, 2097152\]/],
  ['a missing file', ['--tokenizer', join(ROOT, 'no-such.bin'), '--text', 'a'], null, /cannot open '.*no-such\.bin': No such file/],
  ['a folder', ['--tokenizer', ROOT, '--text', 'a'], null, /is not a regular file/],
  ['an empty file', ['--tokenizer', 'FILE', '--text', 'a'], Buffer.alloc(0), /the file is 0 bytes, too short for its 4-byte max_token_length/],
  ['a truncated file', ['--tokenizer', 'FILE', '--text', 'a'], truncated, /token 214: the file ends inside its score and length \(2 of 8 bytes at offset 2998\)/],
  ['a negative length', ['--tokenizer', 'FILE', '--text', 'a'], negative, /token 0: length -7 is negative/],
  ['a tokenizer.json', ['--tokenizer', 'FILE', '--text', 'a'], Buffer.from('{\n  "version": "1.0",\n  "model": {"type": "BPE"}\n}\n'), /\(read as a Hugging Face tokenizer\.json\): there is no pre_tokenizer/],
  ['--decode with a word that is no id', ['--tokenizer', TOK, '--decode', '--text', '1 403 x7 5'], null, /--decode: 'x7' is not a token id/],
  ['--decode with an id out of range', ['--tokenizer', TOK, '--decode', '--text', '1 403 512'], null, /--decode: token id 512 is outside \[0, 512\)/],
  ['--decode with a negative id', ['--tokenizer', TOK, '--decode', '--text', '-1'], null, /--decode: '-1' is not a token id/],
  ['--decode with --pieces', ['--tokenizer', TOK, '--decode', '--pieces'], null, /--decode reads ids and prints their text/],
];
for (const [name, args, bytes, message] of BAD) {
  test(`tokenize refuses ${name}: one line, exit 2`, () => {
    let argv = args;
    if (bytes) {
      const path = join(work, `${name.replaceAll(/\W+/g, '-')}.bin`);
      writeFileSync(path, bytes);
      argv = args.map((a) => (a === 'FILE' ? path : a));
    }
    for (const v of VARIANTS) {
      const r = run(join(v.dir, 'attnlab'), ['tokenize', ...argv], { input: '' });
      assert.equal(r.signal, null, `killed by ${r.signal}: ${r.stderr}`);
      assert.equal(r.status, 2, `${v.name}: exit ${r.status}\n${r.stderr}${r.stdout}`);
      assert.equal(r.stdout, '', 'nothing on standard output');
      const lines = r.stderr.trim().split('\n');
      assert.equal(lines.length, 1, `one line: ${r.stderr}`);
      assert.match(lines[0], message);
    }
  });
}

test('tokenize refuses standard input over 16 MiB', () => {
  const r = run(join(VARIANTS[0].dir, 'attnlab'), ['tokenize', '--tokenizer', TOK], { input: Buffer.alloc((16 << 20) + 1, 0x61) });
  assert.equal(r.status, 2, r.stderr);
  assert.equal(r.stdout, '');
  assert.match(r.stderr, /^attnlab: standard input holds more than 16 MiB; larger input is refused\n$/);
});

test('the usage lists tokenize', () => {
  const r = run(join(VARIANTS[0].dir, 'attnlab'), []);
  assert.match(r.stderr, /^usage: attnlab demo\|forward\|bench\|kv-growth\|generate\|logits\|patch\|inspect\|tokenize\|train\|train-tokenizer\|cut-tokenizer /);
  const help = run(join(VARIANTS[0].dir, 'attnlab'), ['help']);
  assert.match(help.stdout, /attnlab tokenize --tokenizer T \[--text TEXT\] \[--pieces\] \[--no-bos\] \[--eos\]/);
});
