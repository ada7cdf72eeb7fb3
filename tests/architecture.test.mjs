// The core's layering, read from its source: which folder may include which (the table in
// core/LAYERS, which the Makefile reads too), which public header declares what, that the
// compiler refuses a call up the table, which system headers a layer may use (libc and libm;
// the CLI alone does file IO), and that the library exports only names with the al_ prefix.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, existsSync, writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { execFileSync, spawnSync } from 'node:child_process';
import { join, dirname } from 'node:path';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const core = join(root, 'core');

// core/LAYERS: `layer: the layers it may use`, bottom first ('#' starts a comment). Returns
// {order: [layer...], uses: {layer: [layer...]}}; throws on a line that names a layer not
// above it (so the table itself runs one way).
export function readLayers(text) {
  const order = [];
  const uses = {};
  text.split('\n').forEach((raw, i) => {
    const line = raw.replace(/#.*/, '').trim();
    if (!line) return;
    const m = /^([a-z]+):\s*(.*)$/.exec(line);
    if (!m) throw new Error(`core/LAYERS:${i + 1}: not "layer: layers it uses"`);
    const below = m[2].split(/\s+/).filter(Boolean);
    for (const b of below) {
      if (!order.includes(b)) throw new Error(`core/LAYERS:${i + 1}: ${m[1]} uses ${b}, which is not above it`);
    }
    order.push(m[1]);
    uses[m[1]] = below;
  });
  return { order, uses };
}

const TABLE = readLayers(readFileSync(join(core, 'LAYERS'), 'utf8'));
// Each folder of core/ and the folders its files may include (besides its own): the table, plus
// include/ (the public headers, whose own includes are checked against their layer's row).
export const LAYERS = { include: [], ...TABLE.uses };

// libc and libm (C11), the two SIMD intrinsics headers, and the POSIX clock of the benchmark.
const CORE_SYSTEM_HEADERS = new Set(['assert.h', 'float.h', 'inttypes.h', 'limits.h', 'math.h', 'stdarg.h',
  'stddef.h', 'stdint.h', 'stdlib.h', 'string.h', 'immintrin.h', 'wasm_simd128.h', 'time.h']);
// The command line also reads and writes files, lists a folder it writes into (dirent.h: what a
// killed `train` left there, out_folder.c) and locks it for one run at a time (sys/file.h: flock).
const CLI_SYSTEM_HEADERS = new Set([...CORE_SYSTEM_HEADERS, 'stdio.h', 'errno.h', 'unistd.h', 'sys/stat.h', 'fcntl.h', 'signal.h',
  'dirent.h', 'sys/file.h']);

// One file past those: the ABI's al_heap_in_use reads the WebAssembly allocator's mallinfo
// (<malloc.h>, in the wasm build only) so that the binding's leak checks need no struct offsets.
// And the kernels' thread pool, C11's <threads.h> (in glibc's libc since 2.34: no library beyond
// libc), C11's <stdatomic.h> (the compiler's own, no library) and <signal.h> (its workers
// start with every signal blocked, so that the program's own thread takes them): the threads a
// model's GEMMs are split over (kernels/pool.c; the WebAssembly build has no <threads.h>: its threaded build
// parks the host's Workers on atomics).
const FILE_SYSTEM_HEADERS = { 'app/abi.c': new Set(['malloc.h']), 'kernels/pool.c': new Set(['threads.h', 'stdatomic.h', 'signal.h']) };

function sourceFiles() {
  const files = [];
  for (const folder of readdirSync(core, { withFileTypes: true })) {
    if (!folder.isDirectory()) continue;
    for (const sub of ['', 'gen', 'attnlab']) {
      const dir = join(core, folder.name, sub);
      if (sub && !existsSync(dir)) continue;
      for (const f of readdirSync(dir)) {
        if (/\.[ch]$/.test(f)) files.push({ folder: folder.name, name: sub ? `${sub}/${f}` : f, path: join(dir, f) });
      }
    }
  }
  return files;
}

// Every `#include` of a file: [{line, target, system}].
function includesOf(text) {
  const out = [];
  text.split('\n').forEach((line, i) => {
    const m = /^\s*#\s*include\s*([<"])([^>"]+)[>"]/.exec(line);
    if (m) out.push({ line: i + 1, target: m[2], system: m[1] === '<' });
  });
  return out;
}

// The layer whose public header include/<name> is (attnlab/model.h: model); null for attnlab.h.
function publicHeaderLayer(name) {
  const m = /^attnlab\/([a-z]+)\.h$/.exec(name);
  return m ? m[1] : null;
}

// The rule's violations in a set of files, as one line each.
export function violations(files) {
  const problems = [];
  for (const f of files) {
    const where = `core/${f.folder}/${f.name}`;
    if (!(f.folder in LAYERS)) {
      problems.push(`${where}: folder '${f.folder}' is not in the layer table`);
      continue;
    }
    for (const inc of includesOf(f.text)) {
      const at = `${where}:${inc.line}: #include ${inc.system ? `<${inc.target}>` : `"${inc.target}"`}`;
      if (inc.system) {
        const allowed = f.folder === 'cli' ? CLI_SYSTEM_HEADERS : CORE_SYSTEM_HEADERS;
        if (!allowed.has(inc.target) && !FILE_SYSTEM_HEADERS[`${f.folder}/${f.name}`]?.has(inc.target)) problems.push(`${at}: not a libc/libm header this layer may use`);
        continue;
      }
      // The public headers: a layer's own (attnlab/<layer>.h) and those of the layers it may
      // use; attnlab.h (all of them) only where every layer is below. A public header
      // include/attnlab/<layer>.h follows its layer's row.
      const owner = f.folder === 'include' ? publicHeaderLayer(f.name) : f.folder;
      const mayUse = owner ? [owner, ...(LAYERS[owner] || [])] : [];
      if (inc.target === 'attnlab.h') {
        const missing = TABLE.order.filter((l) => l !== 'cli' && !mayUse.includes(l));
        if (owner && missing.length) problems.push(`${at}: ${owner}/ may not see ${missing.join(', ')} (include its own layers' headers)`);
        continue;
      }
      const pub = /^attnlab\/([a-z]+)\.h$/.exec(inc.target);
      if (pub) {
        if (!(pub[1] in TABLE.uses)) problems.push(`${at}: no such layer`);
        else if (owner && !mayUse.includes(pub[1])) problems.push(`${at}: ${owner}/ may use only ${mayUse.join(', ')}`);
        continue;
      }
      const slash = inc.target.indexOf('/');
      if (slash < 0) {
        problems.push(`${at}: name the folder ("${f.folder}/${inc.target}")`);
        continue;
      }
      const target = inc.target.slice(0, slash);
      if (target !== f.folder && !LAYERS[f.folder].includes(target)) {
        problems.push(`${at}: ${f.folder}/ may include only ${[f.folder, ...LAYERS[f.folder]].join(', ')} (and the public headers)`);
      } else if (!existsSync(join(core, inc.target))) {
        problems.push(`${at}: no such file`);
      }
    }
  }
  return problems;
}

test('every #include in core/ follows the layer table', () => {
  const files = sourceFiles().map((f) => ({ ...f, text: readFileSync(f.path, 'utf8') }));
  assert.ok(files.length > 30, `found only ${files.length} source files`);
  assert.deepEqual(violations(files), []);
});

test('the layer check catches an include that breaks the rule', () => {
  const bad = [
    { folder: 'model', name: 'x.c', text: '#include "app/anything.h"\n' },
    { folder: 'base', name: 'y.c', text: '#include "torch/reduce.h"\n' },
    { folder: 'kernels', name: 'z.c', text: '#include "internal.h"\n' },
    { folder: 'io', name: 'w.c', text: '#include <stdio.h>\n' },
    { folder: 'tokenizer', name: 'v.c', text: '#include "io/pth.h"\n' },
    { folder: 'model', name: 't.c', text: '#include "attnlab/app.h"\n' },
    { folder: 'demos', name: 's.c', text: '#include "attnlab.h"\n' },
    { folder: 'include', name: 'attnlab/io.h', text: '#include "attnlab/train.h"\n' },
    { folder: 'lab', name: 'r.c', text: '' },
    { folder: 'app', name: 'bench.c', text: '#include <malloc.h>\n' }, // only abi.c reads mallinfo
  ];
  for (const f of bad) assert.equal(violations([f]).length, 1, `${f.folder}/${f.name} should be refused`);
  assert.deepEqual(violations([{ folder: 'cli', name: 'u.c', text: '#include "demos/demo.h"\n#include <stdio.h>\n' }]), []);
  assert.deepEqual(violations([{ folder: 'app', name: 'q.c', text: '#include "attnlab.h"\n#include "attnlab/train.h"\n' }]), []);
  assert.deepEqual(violations([{ folder: 'app', name: 'abi.c', text: '#include <malloc.h>\n' }]), []);
});

test('the layer table runs one way', () => {
  assert.throws(() => readLayers('base:\nmodel: base io\nio: base\n'), /model uses io, which is not above it/);
  assert.deepEqual(readLayers('base:\n# c\nmodel: base  # m\n').uses, { base: [], model: ['base'] });
  assert.ok(TABLE.order.includes('cli') && TABLE.order[0] === 'base', TABLE.order.join(' '));
  const makefile = readFileSync(join(root, 'Makefile'), 'utf8');
  assert.match(makefile, /^LAYERS := .*core\/LAYERS/m, 'the Makefile reads its layers from core/LAYERS');
  assert.doesNotMatch(makefile, /^LAYERS := base /m, 'the Makefile keeps no copy of the table');
});

test('the library exports only al_ names', () => {
  const lib = join(root, 'build', 'libattnlab.a');
  assert.ok(existsSync(lib), 'build/libattnlab.a is missing: run bash build.sh native');
  const out = execFileSync('nm', ['--defined-only', '-g', lib], { encoding: 'utf8' });
  const names = out.split('\n').map((l) => l.trim().split(/\s+/)).filter((p) => p.length === 3).map((p) => p[2]);
  assert.ok(names.length > 50, `nm listed only ${names.length} symbols`);
  assert.deepEqual(names.filter((n) => !n.startsWith('al_')), []);
});

// The flags the build compiles the core with (the Makefile's WARN and BASE), so the checks below
// see what the build sees.
function buildFlags() {
  const mk = readFileSync(join(root, 'Makefile'), 'utf8');
  const warn = /^WARN := (.*)$/m.exec(mk)[1].trim().split(/\s+/);
  assert.ok(warn.includes('-Werror=implicit-function-declaration'), 'the build refuses implicit declarations');
  return ['-std=c11', ...warn, '-I' + core, '-I' + join(core, 'include')];
}

// Compiles `text` (a scratch copy of a core file, placed beside nothing: its includes resolve
// through -Icore) with the build's flags; returns {ok, errors}.
function compile(text, flags) {
  const dir = mkdtempSync(join(tmpdir(), 'attnlab-layers-'));
  try {
    const file = join(dir, 'scratch.c');
    writeFileSync(file, text);
    const r = spawnSync(process.env.CC || 'gcc', [...flags, '-fsyntax-only', file], { encoding: 'utf8' });
    return { ok: r.status === 0, errors: r.stderr };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test('a call up the layer table does not build; the same call from above it does', () => {
  const flags = buildFlags();
  // model/ calling the app layer's model lab: an implicit declaration, refused.
  const call = '\nint64_t al_scratch_up(const al_model_lab *lab);\nint64_t al_scratch_up(const al_model_lab *lab) { return al_model_lab_len(lab); }\n';
  const rope = readFileSync(join(core, 'model', 'rope.c'), 'utf8');
  assert.ok(compile(rope, flags).ok, 'core/model/rope.c as it is builds');
  const up = compile(rope + call.replace(/const al_model_lab \*lab/g, 'const void *lab').replace('al_model_lab_len(lab)', 'al_model_lab_len((const void *)lab)'), flags);
  assert.ok(!up.ok, 'model/rope.c calling al_model_lab_len (app/) built');
  assert.match(up.errors, /implicit declaration of function .al_model_lab_len/);
  // The same call from app/ (views.c), which may use every layer below it, builds.
  const views = readFileSync(join(core, 'app', 'views.c'), 'utf8');
  const down = compile(views + call, flags);
  assert.ok(down.ok, `app/views.c calling al_model_lab_len did not build:\n${down.errors}`);
});

// The public functions of each layer: the al_ names defined by the objects of core/<layer>/
// (the native build's), and the header each is declared in.
function definedByLayer() {
  const obj = join(root, 'build', 'obj', 'core');
  assert.ok(existsSync(obj), 'build/obj/core is missing: run bash build.sh native');
  const out = {};
  for (const layer of TABLE.order) {
    if (layer === 'cli') continue;
    const objects = [];
    for (const sub of ['', 'gen']) {
      const dir = join(obj, layer, sub);
      if (!existsSync(dir)) continue;
      for (const f of readdirSync(dir)) if (f.endsWith('.o')) objects.push(join(dir, f));
    }
    const sources = new Set(sourceFiles().filter((f) => f.folder === layer && f.name.endsWith('.c')).map((f) => f.name.replace(/\.c$/, '.o')));
    const live = objects.filter((o) => sources.has(o.slice(join(obj, layer).length + 1)));
    out[layer] = new Set(live.length ? execFileSync('nm', ['--defined-only', '-g', ...live], { encoding: 'utf8' })
      .split('\n').map((l) => l.trim().split(/\s+/)).filter((p) => p.length === 3 && /[TDRB]/.test(p[1])).map((p) => p[2]) : []);
  }
  return out;
}

test('each public header declares the functions of its own layer, and the layer sees only those below', () => {
  const defined = definedByLayer();
  const problems = [];
  for (const layer of TABLE.order) {
    if (layer === 'cli') continue;
    const header = join(core, 'include', 'attnlab', `${layer}.h`);
    if (!existsSync(header)) {
      problems.push(`core/include/attnlab/${layer}.h: missing (one public header per layer)`);
      continue;
    }
    const text = readFileSync(header, 'utf8').replace(/\/\*[\s\S]*?\*\//g, '');
    const declared = new Set([...text.matchAll(/\b(al_[a-z0-9_]+)\s*\(/g)].map((m) => m[1]));
    for (const fn of declared) {
      if (defined[layer].has(fn)) continue;
      const home = Object.keys(defined).find((l) => defined[l].has(fn));
      if (home) problems.push(`attnlab/${layer}.h declares ${fn}, defined in core/${home}/`);
    }
  }
  assert.deepEqual(problems, []);
  // Each layer's files see exactly the layers of its row: a function of every other layer is
  // undeclared there (one scratch file per layer naming one public function of every layer).
  const flags = buildFlags();
  const sample = {};
  for (const l of Object.keys(defined)) sample[l] = [...defined[l]].sort().find((fn) => readFileSync(join(core, 'include', 'attnlab', `${l}.h`), 'utf8').includes(fn + '('));
  for (const layer of Object.keys(defined)) {
    const file = sourceFiles().find((f) => f.folder === layer && f.name.endsWith('.c') && !f.name.startsWith('gen/'));
    const refs = Object.entries(sample).filter(([, fn]) => fn).map(([l, fn]) => `static void *al_scratch_${l}(void) { return (void *)${fn}; }\n`);
    const r = compile(readFileSync(file.path, 'utf8') + '\n' + refs.join(''), flags);
    for (const [l, fn] of Object.entries(sample)) {
      if (!fn) continue;
      const seen = !new RegExp(`.${fn}. undeclared`).test(r.errors);
      const may = l === layer || LAYERS[layer].includes(l);
      if (seen !== may) problems.push(`core/${layer}/${file.name} ${seen ? 'sees' : 'does not see'} ${fn} (${l}/)`);
    }
  }
  assert.deepEqual(problems, []);
});
