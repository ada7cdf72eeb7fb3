// demo-sections.test.mjs — the demos as sections (al_demo_sections through the WebAssembly
// binding, as the page's walkthrough gets them) against PyTorch's output and the tutorial
// scripts: for every seed and language of tests/fixtures/demo/, the sections' printed texts make
// up exactly what the script prints under PyTorch; each example's code is a verbatim piece of
// the script as the demo runs it (its seeds replaced), in the script's order; each title is the
// one the script prints; core/demos/gen/demo_code.c is what tools/gen/gen_demo_code.mjs writes.
// Also the RoPE relative-distance curve of the tutorial's v_test against the <v(0), v(1)> and
// <v(1), v(2)> the script prints.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './lib/run.mjs';
import { loadCore } from './lib/wasm.mjs';
import { OUT, SCRIPTS, examples, excerpts, pack, script, source, unpack } from '../tools/gen/gen_demo_code.mjs';

const core = await loadCore();
const DEMOS = join(ROOT, 'tests', 'fixtures', 'demo');
// The demos whose scripts the walkthrough shows (tools/gen/gen_demo_code.mjs's SCRIPTS).
const cases = readdirSync(DEMOS).filter((f) => f.endsWith('.txt')).map((file) => {
  const [demo, lang, seed] = file.split('.');
  return { file, demo, lang, seed: seed === 'default' ? -1 : Number(seed) };
}).filter((c) => c.demo in SCRIPTS);

// The script with every torch.manual_seed(<n>) given the seed, as `attnlab demo --seed` runs it.
const seeded = (text, seed) => (seed < 0 ? text : text.replace(/torch\.manual_seed\(\d+\)/g, `torch.manual_seed(${seed})`));

for (const c of cases) {
  test(`sections of ${c.demo} ${c.lang} seed ${c.seed}: PyTorch's output in order, the script's code and titles`, () => {
    const sections = core.demoSections(c.demo, c.lang, c.seed);
    assert.ok(sections.map((s) => s.printed).join('') === readFileSync(join(DEMOS, c.file), 'utf8'),
      'the sections do not make up the script\'s output');
    const text = seeded(script(c.demo, c.lang), c.seed);
    const want = examples(text);
    assert.deepEqual(sections.map((s) => s.title), want.map((e) => e.title));
    let from = 0;
    for (const [i, s] of sections.entries()) {
      assert.ok(s.printed.includes(`${s.title}\n`) && s.printed.includes(s.numbers), `section ${i}`);
      if (i === sections.length - 1) {
        assert.deepEqual([s.panel, s.code, s.numbers], ['none', '', ''], 'the closing banner');
        continue;
      }
      assert.notEqual(s.panel, 'none');
      assert.ok(s.code.length > 0 && s.numbers.length > 0, `section ${i} is empty`);
      const at = text.indexOf(s.code, from);
      assert.ok(at >= 0, `section ${i}: its code is not a piece of the script (after the previous one)`);
      from = at + s.code.length;
      assert.doesNotMatch(s.code, /O\(1\)/);
    }
  });
}

test('the excerpts\' packing round-trips: the scripts, long runs and random bytes', () => {
  let seed = 1;
  const random = Buffer.from(Array.from({ length: 5000 }, () => { seed = (seed * 1103515245 + 12345) >>> 0; return seed >> 24; }));
  for (const bytes of [excerpts().text, Buffer.alloc(1000, 7), random, Buffer.from('ab'), Buffer.alloc(0)]) {
    const packed = pack(bytes);
    assert.ok(Buffer.from(unpack(packed, bytes.length)).equals(bytes));
  }
  assert.ok(pack(excerpts().text).length < excerpts().text.length / 2.5, 'the scripts no longer pack well');
});

test('core/demos/gen/demo_code.c is what tools/gen/gen_demo_code.mjs writes', () => {
  assert.ok(readFileSync(OUT, 'utf8') === source(), 'run: node tools/gen/gen_demo_code.mjs');
});

test('demo sections: bad arguments are refused with a message', () => {
  assert.throws(() => core.demoSections('nope', 'en'), /unknown demo 'nope'/);
  assert.throws(() => core.demoSections('basic', 'fr'), /unknown language 'fr'/);
  assert.throws(() => core.demoSections('basic', 'en', -2), /seed/);
});

// The RoPE curve at the tutorial's layer: its point at distance 1 from position 0 (and from 1)
// is what the script prints for <v(0), v(1)> (and <v(1), v(2)>), for every seed PyTorch ran.
for (const c of cases.filter((x) => x.demo === 'attention' && x.lang === 'en')) {
  test(`RoPE curve of v_test, seed ${c.seed}: the script's <v(0), v(1)> and <v(1), v(2)>`, () => {
    const out = readFileSync(join(DEMOS, c.file), 'utf8');
    const printed = (pair) => new RegExp(`<v\\(${pair[0]}\\), v\\(${pair[1]}\\)> = (\\S+)`).exec(out)[1];
    const s = core.createSession({ hidden: 16, heads: 4, kvHeads: 2, headDim: 8, ropeBase: 10000, qkNorm: true,
      seed: c.seed < 0 ? 42 : c.seed, promptLen: 4, decodeSteps: 3 });
    try {
      assert.equal(s.ropeRelative(0, 2)[1].toFixed(6), printed('01'));
      assert.equal(s.ropeRelative(1, 2)[1].toFixed(6), printed('12'));
      assert.throws(() => s.ropeRelative(-1, 2), /m must be/);
    } finally {
      s.free();
    }
  });
}
