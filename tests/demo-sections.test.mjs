// demo-sections.test.mjs — the demos as sections (al_demo_sections through the WebAssembly
// binding, as the page's walkthrough gets them) against PyTorch's output and the tutorial
// scripts: for every seed and language of tests/fixtures/demo/, the sections' printed texts make
// up exactly what the script prints under PyTorch; each example's code is a verbatim piece of
// the script as the demo runs it (its seeds replaced), in the script's order; each title is the
// one the script prints; core/demos/gen/demo_code.c is what tools/gen/gen_demo_code.mjs writes.
// Also the RoPE relative-distance curve of the tutorial's v_test against the <v(0), v(1)> and
// <v(1), v(2)> the script prints. Chapters 04 and 05 (mlp-moe, block) ship no code: their
// sections make up the fixture, their titles are its headers, and their code is empty.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT, run } from './lib/run.mjs';
import { loadCore } from './lib/wasm.mjs';
import { OUT, examples, excerpts, pack, script, source } from '../tools/gen/gen_demo_code.mjs';

const core = await loadCore();
const DEMOS = join(ROOT, 'tests', 'fixtures', 'demo');
const cases = readdirSync(DEMOS).filter((f) => f.endsWith('.txt')).map((file) => {
  const [demo, lang, seed] = file.split('.');
  return { file, demo, lang, seed: seed === 'default' ? -1 : Number(seed) };
});

// The script with every torch.manual_seed(<n>) given the seed, as `attnlab demo --seed` runs it.
const seeded = (text, seed) => (seed < 0 ? text : text.replace(/torch\.manual_seed\(\d+\)/g, `torch.manual_seed(${seed})`));

// The demos whose scripts' code is not shipped, by fixture name and ABI name.
const CODELESS = { 'mlp-moe': 'mlp_moe', block: 'block', generation: 'generation' };

for (const c of cases.filter((x) => CODELESS[x.demo])) {
  test(`sections of ${c.demo} ${c.lang} seed ${c.seed}: PyTorch's output in order, its titles, no code`, () => {
    const sections = core.demoSections(CODELESS[c.demo], c.lang, c.seed);
    const want = readFileSync(join(DEMOS, c.file), 'utf8');
    assert.ok(sections.map((s) => s.printed).join('') === want, 'the sections do not make up the script\'s output');
    const titles = [...want.matchAll(/^={70}\n(.*)\n={70}$/gm)].map((m) => m[1]);
    assert.deepEqual(sections.map((s) => s.title), titles);
    for (const [i, s] of sections.entries()) {
      assert.equal(s.code, '', `section ${i} ships code`);
      assert.equal(s.panel === 'none', i === sections.length - 1, `section ${i}: panel ${s.panel}`);
      assert.ok(i === sections.length - 1 || (s.numbers.length > 0 && s.printed.includes(s.numbers)), `section ${i}`);
    }
  });
}

for (const c of cases.filter((x) => !CODELESS[x.demo])) {
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

// demo_code.c's own unpack (cut from the source the generator writes), built into a program
// that reads a size (4 bytes, little-endian) and packed bytes and writes what it unpacks (exit 1
// where unpack refuses them): the one decompressor, run on the generator's packings.
function cUnpacker() {
  const unpack = /\nstatic int unpack\([^]*?\n}\n/.exec(source())[0];
  const dir = mkdtempSync(join(tmpdir(), 'attnlab-unpack-'));
  process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'unpack.c'), `#include <stdio.h>\n#include <stdlib.h>\n${unpack}
int main(void) {
    static unsigned char in[1 << 20];
    const size_t n = fread(in, 1, sizeof in, stdin);
    if (n < 4) return 2;
    const size_t size = (size_t)in[0] | (size_t)in[1] << 8 | (size_t)in[2] << 16 | (size_t)in[3] << 24;
    char *out = malloc(size ? size : 1);
    if (!out || !unpack(out, size, in + 4, n - 4)) return 1;
    fwrite(out, 1, size, stdout);
    return 0;
}
`);
  const exe = join(dir, 'unpack');
  const built = run(process.env.CC || 'gcc', ['-std=c11', '-Wall', '-Werror', join(dir, 'unpack.c'), '-o', exe]);
  assert.equal(built.status, 0, built.stderr);
  return (packed, size) => {
    const head = Buffer.alloc(4);
    head.writeUInt32LE(size);
    const r = run(exe, [], { input: Buffer.concat([head, Buffer.from(packed)]), encoding: 'buffer' });
    assert.equal(r.status, 0, 'demo_code.c\'s unpack refused the packing');
    return r.stdout;
  };
}

test('the excerpts\' packing round-trips through demo_code.c\'s unpack: the scripts, long runs and random bytes', () => {
  const unpack = cUnpacker();
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
