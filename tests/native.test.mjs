// native.test.mjs — runs the C test programs (built by build.sh into build/tests and, with
// ASan + UBSan, build/asan/tests) against their PyTorch fixtures. Each program prints its own
// failures (with the largest difference) and exits non-zero if any check failed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT, VARIANTS, run } from './lib/run.mjs';

const PROGRAMS = {
  test_core: ['tests/fixtures/kernels.safetensors'],
  test_rng: ['tests/fixtures/rng/rng_golden.txt'],
  test_format: ['tests/fixtures/format/tensor_repr.txt'],
  test_safetensors: ['tests/malformed'],
  test_pow: ['tests/fixtures/pow/pow_golden.txt'],
  test_trig: ['tests/fixtures/trig/trig_golden.txt'],
  test_fuzz_replay: ['tests/malformed/fuzz', 'tests/fuzz/seeds'],
  test_print: [],
  test_abi: [],
  test_demo: [],
};

test('both builds exist', () => {
  assert.deepEqual(VARIANTS.map((v) => v.name), ['native', 'asan']);
});

// The live checks against a core with deliberate bugs (build/faults: -DAL_FAULTS): each bug
// must turn its check red.
test('faults: each live check catches the bug it is meant to catch', () => {
  const r = run(join(ROOT, 'build', 'faults', 'test_faults'), []);
  assert.equal(r.signal, null, `test_faults killed by ${r.signal}\n${r.stderr}`);
  assert.equal(r.status, 0, `test_faults failed:\n${r.stderr}\n${r.stdout}`);
  assert.match(r.stdout, /0 failed/);
});

for (const variant of VARIANTS) {
  test(`${variant.name}: every built test program is run`, () => {
    const built = readdirSync(join(variant.dir, 'tests')).sort();
    assert.deepEqual(built, Object.keys(PROGRAMS).sort());
  });
  for (const [name, args] of Object.entries(PROGRAMS)) {
    test(`${variant.name}: ${name}`, () => {
      const r = run(join(variant.dir, 'tests', name), args);
      assert.equal(r.signal, null, `${name} killed by ${r.signal}\n${r.stderr}`);
      assert.equal(r.status, 0, `${name} failed:\n${r.stderr}\n${r.stdout}`);
    });
  }
}
