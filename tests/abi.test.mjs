// The binding description (al_abi_json, generated from core/app/abi_list.h) against the public
// headers and across builds: every struct the binding uses lists exactly the fields its C
// declaration has, in order; every enum value the header declares is there with its value; and
// the WebAssembly build describes the same layouts as the native one. With these and
// test_abi.c's offset checks, a field added or moved in C, or a new status code, cannot be
// misread by the page.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT, run } from './lib/run.mjs';
import { AttnLab, factory, loadCore, wasmBytes } from './lib/wasm.mjs';

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
  const ctype = abi.enum_ctypes;
  for (const [name, values] of Object.entries(abi.enums)) {
    const decl = decls[ctype[name]];
    assert.ok(decl, `enum ${name}: no declaration of ${ctype[name]}`);
    assert.deepEqual(Object.values(values).sort((a, b) => a - b), Object.values(decl).sort((a, b) => a - b),
      `${name}: the list and ${ctype[name]} have different values`);
  }
});

test('each function row gives every parameter and result a kind the binding can pass', () => {
  const abi = nativeAbi();
  assert.ok(Object.keys(abi.functions).length >= 80);
  for (const [name, f] of Object.entries(abi.functions)) {
    for (const [param, kind, type] of [['(result)', ...f.result], ...f.args]) {
      assert.ok(['i32', 'i64', 'f32', 'f64', 'ptr', 'size', 'void'].includes(kind), `${name} ${param}: no kind for ${type}`);
    }
  }
});

test('each shape names a pointer parameter of its function and dims the binding can resolve', () => {
  const abi = nativeAbi();
  const hparams = new Set([...Object.keys(abi.structs.model_hparams.fields), ...Object.keys(abi.structs.attn_hparams.fields)]);
  for (const [key, dims] of Object.entries(abi.shapes)) {
    const [fn, param] = key.split(' ');
    const f = abi.functions[fn];
    assert.ok(f, `shape of ${key}: no function ${fn} in the list`);
    const arg = f.args.find(([n]) => n === param);
    assert.ok(arg && arg[1] === 'ptr', `shape of ${key}: ${fn} has no pointer parameter ${param}`);
    for (const d of dims.split(' ')) {
      const known = /^\d+$/.test(d) || d === 'result' || d in abi.limits || hparams.has(d) || f.args.some(([n]) => n === d) || d in abi.functions;
      assert.ok(known, `shape of ${key}: dim ${d} is no number, limit, parameter, hyper-parameter or function`);
    }
  }
});

// A declaration changed in a scratch copy of the headers: abi.c no longer compiles, and the
// compiler names the function whose row no longer matches. (No binary is built.)
test('a function whose declaration differs from its row fails the build, naming it', () => {
  const folder = readdirSync(join(ROOT, 'core')).find((d) => existsSync(join(ROOT, 'core', d, 'abi.c')));
  const abiSource = join(ROOT, 'core', folder, 'abi.c');
  const dir = mkdtempSync(join(tmpdir(), 'attnlab-abi-'));
  try {
    cpSync(join(ROOT, 'core', 'include'), join(dir, 'include'), { recursive: true });
    const header = join(dir, 'include', 'attnlab', 'model.h');
    const text = readFileSync(header, 'utf8');
    const before = 'int64_t al_kv_cache_bytes_for(int64_t batch, int64_t len, int64_t n_kv_heads, int64_t head_dim);';
    assert.ok(text.includes(before), 'the declaration this test changes has moved');
    const compile = () => run('gcc', ['-std=c11', '-fsyntax-only', `-I${join(dir, 'include')}`, `-I${join(ROOT, 'core')}`,
      abiSource]);
    assert.equal(compile().status, 0, 'the unchanged copy compiles');
    writeFileSync(header, text.replace(before, before.replace('int64_t head_dim', 'int32_t head_dim')));
    const r = compile();
    assert.notEqual(r.status, 0, 'a changed declaration compiled');
    assert.match(r.stderr, /al_kv_cache_bytes_for: its declaration differs from its row in abi_list\.h/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
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

test('the module exports exactly the listed functions and the allocator', async () => {
  const core = await loadCore();
  const exported = Object.keys(core.m).filter((k) => k.startsWith('_al_')).map((k) => k.slice(1)).sort();
  assert.deepEqual(exported, Object.keys(core.abi.functions).sort());
});

// The module as the loader gives it, with one export changed by `doctor` before the binding
// sees it: the binding refuses it at load, naming the function, rather than on a call.
const loadDoctored = (doctor) => AttnLab.load({ wasmBinary: wasmBytes(), factory: async (o) => doctor(await factory(o)) });

test('a module that lacks a listed function, or whose export takes other parameters, is refused at load', async () => {
  await assert.rejects(loadDoctored((m) => { delete m._al_kv_cache_bytes_for; return m; }),
    /attnlab\.wasm does not export al_kv_cache_bytes_for, which its ABI list names/);
  await assert.rejects(loadDoctored((m) => { m._al_kv_cache_bytes_for = (a, b, c) => a + b + c; return m; }),
    /attnlab\.wasm's al_kv_cache_bytes_for takes 3 parameters, its ABI list 4/);
});

test('the wrappers pass int64_t as BigInt and refuse a wrong count or kind, naming the function', async () => {
  const core = await loadCore();
  assert.equal(core.fn.al_kv_cache_bytes_for(1, 3, 2, 8), 2 * 4 * 3 * 2 * 8);
  assert.throws(() => core.fn.al_kv_cache_bytes_for(1, 3, 2), /al_kv_cache_bytes_for takes 4 arguments \(batch, len, n_kv_heads, head_dim\), given 3/);
  assert.throws(() => core.fn.al_kv_cache_bytes_for(1, 3, 2, 0.5), /al_kv_cache_bytes_for: head_dim must be a whole number/);
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
