// The binding description (al_abi_json, generated from core/lab/abi_list.h) against the public
// headers and across builds: every struct the binding uses lists exactly the fields its C
// declaration has, in order; every enum value the header declares is there with its value; and
// the WebAssembly build describes the same layouts as the native one. With these and
// test_abi.c's offset checks, a field added or moved in C, or a new status code, cannot be
// misread by the page.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT, run } from './lib/run.mjs';
import { loadCore } from './lib/wasm.mjs';

const headers = join(ROOT, 'core', 'include', 'attnlab');
const headerText = readdirSync(headers).filter((f) => f.endsWith('.h'))
  .map((f) => readFileSync(join(headers, f), 'utf8')).join('\n')
  .replace(/\/\*[\s\S]*?\*\//g, '').replace(/\/\/.*$/gm, '');

// typedef struct { members } name;  ->  {name: [[type, member], ...]}
function structDeclarations(text) {
  const out = {};
  for (const m of text.matchAll(/typedef struct\s*\{([^}]*)\}\s*(\w+)\s*;/g)) {
    const members = [];
    for (const decl of m[1].split(';').map((d) => d.trim()).filter(Boolean)) {
      const [, type, names] = /^(?:const\s+)?([\w]+(?:\s*\*)?)\s+(.+)$/s.exec(decl);
      for (const name of names.split(',')) members.push([type.trim(), name.trim().replace(/\[.*\]$/, '').replace(/^\*/, '')]);
    }
    out[m[2]] = members;
  }
  return out;
}

// The field names of a struct as the binding sees them: nested structs flattened ("hp.hidden").
function flatFields(structs, ctype, prefix = '') {
  return structs[ctype].flatMap(([type, name]) => (structs[type] ? flatFields(structs, type, `${prefix}${name}.`) : [`${prefix}${name}`]));
}

// enum { A = 0, B, ... } name;  ->  {name: {A: 0, B: 1, ...}}
function enumDeclarations(text) {
  const out = {};
  for (const m of text.matchAll(/typedef enum\s*\{([^}]*)\}\s*(\w+)\s*;/g)) {
    let next = 0;
    out[m[2]] = {};
    for (const item of m[1].split(',').map((s) => s.trim()).filter(Boolean)) {
      const [, name, value] = /^(\w+)(?:\s*=\s*(\d+))?$/.exec(item);
      next = value !== undefined ? Number(value) : next;
      out[m[2]][name] = next++;
    }
  }
  return out;
}

const nativeAbi = () => {
  const r = run(join(ROOT, 'build', 'tests', 'test_abi'), ['--print']);
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout);
};

test('each described struct lists the fields of its C declaration, in order', () => {
  const abi = nativeAbi();
  const decls = structDeclarations(headerText);
  assert.ok(Object.keys(abi.structs).length >= 7);
  for (const [name, s] of Object.entries(abi.structs)) {
    assert.ok(decls[s.ctype], `${name}: no declaration of ${s.ctype} in core/include/attnlab/`);
    assert.deepEqual(Object.keys(s.fields), flatFields(decls, s.ctype), `${name} (${s.ctype})`);
  }
});

test('each described enum has every value its C declaration has', () => {
  const abi = nativeAbi();
  const decls = enumDeclarations(headerText);
  const ctype = { status: 'al_status', check: 'al_check_id', file_role: 'al_file_role', demo: 'al_demo', lang: 'al_lang', demo_panel: 'al_demo_panel',
    model_file_kind: 'al_model_file_kind', rope_style: 'al_rope_style', gen_finish: 'al_gen_finish', lab_role: 'al_lab_role',
    train_data: 'al_train_data', train_column: 'al_train_column', train_lab_file_kind: 'al_train_lab_file_kind' };
  for (const [name, values] of Object.entries(abi.enums)) {
    const decl = decls[ctype[name]];
    assert.ok(decl, `enum ${name}: no declaration of ${ctype[name]}`);
    assert.deepEqual(Object.values(values).sort((a, b) => a - b), Object.values(decl).sort((a, b) => a - b),
      `${name}: the list and ${ctype[name]} have different values`);
  }
});

test('the parsers above find what they look for', () => {
  const decls = structDeclarations('typedef struct { int64_t a, b; double c[4]; inner hp; } outer;\ntypedef struct { int32_t x; } inner;');
  assert.deepEqual(flatFields(decls, 'outer'), ['a', 'b', 'c', 'hp.x']);
  assert.deepEqual(enumDeclarations('typedef enum { A = 0, B, C = 5, D } e;').e, { A: 0, B: 1, C: 5, D: 6 });
});

test('the WebAssembly build describes the same layouts, enums and limits as the native one', async () => {
  const core = await loadCore();
  assert.deepEqual(core.abi, nativeAbi());
});

test('the binding refuses a struct with a field it was not given', async () => {
  const core = await loadCore();
  const size = core.sizeOf('bench_result');
  core.withAllocs([size], (p) => {
    assert.throws(() => core.writeStruct(p, 'bench_result', { prefill_ms: 1, decode_ms: 1, prefill_gflops: 1 }),
      /bench_result.decode_recompute_ms is not given/);
    assert.throws(() => core.writeStruct(p, 'bench_result', { prefill_ms: 1, decode_ms: 1, prefill_gflops: 1, decode_recompute_ms: 1, extra: 2 }),
      /bench_result has no field extra/);
  });
});
