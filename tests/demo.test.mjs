// demo.test.mjs — `attnlab demo` prints exactly what the tutorial's scripts print under PyTorch
// (tests/fixtures/demo/*.txt, from tests/fixtures/gen_demo.py), for the scripts' own seeds and
// others, in Chinese and English; and refuses bad flags with one line and exit 2. Chapters 04
// (mlp-moe) and 05 (block) have no English script: their English run must carry every number,
// tensor and boolean of the Chinese fixture, in order, on the same lines.
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

// What must be the same in both languages (gen_demo.py's NUM_RE).
const NUM_RE = /-?\d+(?:\.\d+)?(?:e[+-]?\d+)?|-?inf\b|\bnan\b|\bTrue\b|\bFalse\b|grad_fn=<\w+>/g;
const numbersByLine = (text) => text.split('\n').map((line) => line.match(NUM_RE) ?? []);

for (const variant of VARIANTS) {
  for (const c of cases.filter((x) => x.demo === 'mlp-moe' || x.demo === 'block')) {
    test(`${variant.name}: demo ${c.demo} --lang en seed ${c.seed}: the Chinese fixture's numbers, line by line`, () => {
      const args = ['demo', c.demo, '--lang', 'en'];
      if (c.seed !== 'default') args.push('--seed', c.seed);
      const r = run(join(variant.dir, 'attnlab'), args);
      assert.equal(r.status, 0, r.stderr);
      const got = numbersByLine(r.stdout), want = numbersByLine(readFileSync(join(FIXTURES, c.file), 'utf8'));
      assert.equal(got.length, want.length, 'line count');
      for (let i = 0; i < want.length; i++)
        assert.deepEqual(got[i], want[i], `line ${i + 1}: ${r.stdout.split('\n')[i]}`);
    });
  }
}

test('chapters 04 and 05: the corrected claims, in both languages', () => {
  const out = (demo, lang) => run(join(VARIANTS[0].dir, 'attnlab'), ['demo', demo, '--lang', lang]).stdout;
  for (const lang of ['zh', 'en']) {
    // Experts as wide as the dense FFN: a token's k experts cost more, not less.
    assert.doesNotMatch(out('mlp-moe', lang), /计算量更小|less work/);
    // aux_loss = (f·P).sum() · num_experts · coef · k
    assert.match(out('mlp-moe', lang), /= \(0\.2527\) \* 4 \* 0\.01 \* 2 /);
    const block = out('block', lang);
    assert.doesNotMatch(block, /norm1\(attn\)|norm2\(ffn\)|训练\/推理时只需/);
    assert.match(block, /attn\(norm1\(x\)\)[^\n]*\n[^\n]*\n[^\n]*mlp\(norm2\(h\)\)/);
    assert.match(block, /(位置|position) 0→(预测|predicts) token1 ?\(prompt, ?-100/);
  }
});

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
  [['demo', 'nope'], /unknown demo 'nope': expected 'basic', 'attention', 'mlp-moe', 'block' or 'generation'/],
  [['demo', 'mlp_moe'], /unknown demo 'mlp_moe'/],
  [['demo', 'block', '--seed', 'x'], /--seed expects/],
  [['demo', 'mlp-moe', '--lang', 'de'], /--lang expects/],
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
