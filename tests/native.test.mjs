// native.test.mjs — runs the C test programs of tests/lib/programs.mjs (built by build.sh into
// build/tests and, with ASan + UBSan, build/asan/tests) against their PyTorch fixtures. Each
// program prints its own failures (with the largest difference) and exits non-zero if any check
// failed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { callsOf, functionsTakingErrors, withoutComments } from './lib/c-source.mjs';
import { PROGRAMS } from './lib/programs.mjs';
import { ROOT, VARIANTS, run } from './lib/run.mjs';

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

// "Every public call accepts err == NULL": test_null_err.c must call each one with NULL there.
test('test_null_err.c calls every public function that takes an al_error * with NULL for it', () => {
  const functions = functionsTakingErrors();
  assert.ok(functions.size >= 25 && functions.get('al_attn_files_run') === 7 && functions.get('al_st_parse') === 3,
    `the header scan found only ${[...functions.keys()].join(', ')}`);
  const source = withoutComments(readFileSync(join(ROOT, 'tests', 'test_null_err.c'), 'utf8'));
  const missing = [...functions].filter(([name, at]) => !callsOf(source, name).some((args) => args[at] === 'NULL'));
  assert.deepEqual(missing.map(([name]) => name), [], 'public calls with no err == NULL call in tests/test_null_err.c');
});

for (const variant of VARIANTS) {
  test(`${variant.name}: every built test program is run`, () => {
    const built = readdirSync(join(variant.dir, 'tests')).sort();
    assert.deepEqual(built, Object.keys(PROGRAMS).sort());
  });
  for (const [name, { args }] of Object.entries(PROGRAMS)) {
    test(`${variant.name}: ${name}`, () => {
      const r = run(join(variant.dir, 'tests', name), args);
      assert.equal(r.signal, null, `${name} killed by ${r.signal}\n${r.stderr}`);
      assert.equal(r.status, 0, `${name} failed:\n${r.stderr}\n${r.stdout}`);
    });
  }
}
