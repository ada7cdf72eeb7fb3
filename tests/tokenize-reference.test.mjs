// tokenize-reference.test.mjs — `attnlab tokenize` against an independent Python implementation
// of llama2.c's tokenizer: tests/fixtures/llama2c/tokenize.json, of the form
//   {"tokenizer": "models/stories260K/tok512.bin",
//    "cases": [{"text": "...", "bos": true, "ids": [...], "pieces": [...]}, ...],
//    "decode": [{"ids": [...], "text": "..."}, ...]}
// Every case's ids must be equal exactly (the text goes in on standard input, so any byte can);
// its pieces must be what --pieces prints for them (a piece given with SentencePiece's '▁' for
// a space is read as that space). A decode case's text must be what --decode prints, except
// that where the reference writes U+FFFD for bytes that are not UTF-8, attnlab writes each such
// byte as \xNN: a run of those is compared as one U+FFFD, as is a run of U+FFFD.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT, VARIANTS, run } from './lib/run.mjs';
import { showPiece } from './lib/tokenizer.mjs';

const FIXTURE = join(ROOT, 'tests', 'fixtures', 'llama2c', 'tokenize.json');
const missing = !existsSync(FIXTURE) &&
  'tests/fixtures/llama2c/tokenize.json is missing (the independent Python reference is merged separately)';
const fixture = missing ? null : JSON.parse(readFileSync(FIXTURE, 'utf8'));
const CLI = VARIANTS.length ? join(VARIANTS[0].dir, 'attnlab') : null;

function tokenize(args, input) {
  const r = run(CLI, ['tokenize', '--tokenizer', join(ROOT, fixture.tokenizer), ...args], { input });
  assert.equal(r.status, 0, r.stderr);
  assert.ok(r.stdout.endsWith('\n'), JSON.stringify(r.stdout));
  return r.stdout.slice(0, -1);
}

test('the reference fixture names a tokenizer and has cases', { skip: missing }, () => {
  assert.equal(typeof fixture.tokenizer, 'string');
  assert.ok(existsSync(join(ROOT, fixture.tokenizer)), `${fixture.tokenizer} does not exist`);
  assert.ok(Array.isArray(fixture.cases) && fixture.cases.length > 0, 'no cases');
});

test('every reference case: the same ids, and the same pieces', { skip: missing }, () => {
  for (const [i, c] of (fixture?.cases ?? []).entries()) {
    const what = `case ${i} ${JSON.stringify(c.text).slice(0, 80)}`;
    const flags = [...(c.bos === false ? ['--no-bos'] : []), ...(c.eos ? ['--eos'] : [])];
    const input = Buffer.from(c.text, 'utf8');
    const ids = tokenize(flags, input).split(' ').filter(Boolean).map(Number);
    assert.deepEqual(ids, c.ids, what);
    if (c.pieces) {
      const want = c.pieces.map((p) => showPiece(Buffer.from(p.replaceAll('\u2581', ' '), 'utf8'))).join(' ');
      assert.equal(tokenize([...flags, '--pieces'], input), want, `${what}: pieces`);
    }
  }
});

// A run of \xNN escapes, or of U+FFFD, as one U+FFFD.
const replaced = (s) => s.replace(/(?:\\x[0-9A-F]{2})+/g, '\uFFFD').replace(/\uFFFD+/g, '\uFFFD');

test('every reference decode: the same text', { skip: missing }, () => {
  for (const [i, c] of (fixture?.decode ?? []).entries()) {
    // `prev`: the token before the first id (its text decides whether the first piece keeps
    // its leading space); the CLI decodes it too, so its own text is taken off the front.
    const before = c.prev === null ? '' : tokenize(['--decode', '--text', String(c.prev)]);
    const all = tokenize(['--decode', '--text', [...(c.prev === null ? [] : [c.prev]), ...c.ids].join(' ')]);
    assert.ok(all.startsWith(before), `decode ${i}: the text of ${c.prev} does not lead`);
    // The byte token <0x00> (id 3): run.c's decode returns its byte as a C string, so it prints
    // nothing; AttnLab keeps the byte (text with a NUL round-trips). Compared without it.
    const got = all.slice(before.length).replaceAll('\0', '');
    // BOS and EOS: run.c's decode prints their pieces ("\n<s>\n", "\n</s>\n"); the display
    // decoder writes nothing for them (what follows BOS still drops its leading space).
    const want = c.text.replaceAll('\n<s>\n', '').replaceAll('\n</s>\n', '');
    if (want.includes('\uFFFD')) assert.equal(replaced(got), replaced(want), `decode ${i} (invalid UTF-8)`);
    else assert.equal(got, want, `decode ${i}: ids ${c.ids.join(' ')}`);
  }
});
