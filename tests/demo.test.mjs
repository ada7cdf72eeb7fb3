// demo.test.mjs — `attnlab demo` prints exactly what the tutorial's two scripts print under
// PyTorch (tests/fixtures/demo/*.txt, from tests/fixtures/gen_demo.py), for the scripts' own
// seeds and others, in Chinese and English; and refuses bad flags with one line and exit 2.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT, VARIANTS, run } from './lib/run.mjs';

const FIXTURES = join(ROOT, 'tests', 'fixtures', 'demo');
const cases = readdirSync(FIXTURES)
  .filter((f) => f.endsWith('.txt'))
  .map((f) => {
    const [demo, lang, seed] = f.split('.');
    return { file: f, demo, lang, seed };
  });

// First differing line, to make failures readable.
function firstDifference(got, want) {
  const g = got.split('\n'), w = want.split('\n');
  for (let i = 0; i < Math.max(g.length, w.length); i++) {
    if (g[i] !== w[i]) return `line ${i + 1}:\n  got:  ${g[i]}\n  want: ${w[i]}`;
  }
  return 'identical';
}

for (const variant of VARIANTS) {
  for (const c of cases) {
    // The sanitizer build runs every case too: they are small.
    test(`${variant.name}: demo ${c.demo} --lang ${c.lang} seed ${c.seed}`, () => {
      const args = ['demo', c.demo, '--lang', c.lang];
      if (c.seed !== 'default') args.push('--seed', c.seed);
      const r = run(join(variant.dir, 'attnlab'), args);
      assert.equal(r.status, 0, r.stderr);
      const want = readFileSync(join(FIXTURES, c.file), 'utf8');
      assert.ok(r.stdout === want, firstDifference(r.stdout, want));
    });
  }
}

test('Chinese is the default language', () => {
  const r = run(join(VARIANTS[0].dir, 'attnlab'), ['demo', 'basic']);
  assert.equal(r.stdout, readFileSync(join(FIXTURES, 'basic.zh.default.txt'), 'utf8'));
});

test('the decode cost is stated as O(n) per step, not O(1)', () => {
  for (const lang of ['zh', 'en']) {
    const out = run(join(VARIANTS[0].dir, 'attnlab'), ['demo', 'attention', '--lang', lang]).stdout;
    assert.match(out, /O\(n\)/);
    assert.match(out, /O\(n²\)/);
    assert.doesNotMatch(out, /O\(1\)/);
  }
});

const BAD = [
  [['demo'], /demo needs a name/],
  [['demo', 'nope'], /unknown demo 'nope'/],
  [['demo', 'basic', '--lang', 'fr'], /--lang expects/],
  [['demo', 'basic', '--lang'], /--lang expects/],
  [['demo', 'basic', '--seed', '-1'], /--seed expects/],
  [['demo', 'basic', '--seed', '12abc'], /--seed expects/],
  [['demo', 'basic', '--seed', '99999999999999999999999'], /--seed expects/],
  [['demo', 'basic', '--verbose'], /unknown option '--verbose'/],
  [['frobnicate'], /unknown command/],
  [[], /usage/],
];
for (const [args, message] of BAD) {
  test(`bad arguments: attnlab ${args.join(' ')}`, () => {
    for (const variant of VARIANTS) {
      const r = run(join(variant.dir, 'attnlab'), args);
      assert.equal(r.status, 2, `exit ${r.status} ${r.signal ?? ''}: ${r.stderr}`);
      assert.match(r.stderr, message);
      if (args.length) assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
      assert.equal(r.stdout, '');
    }
  });
}
