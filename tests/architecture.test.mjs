// The core's layering, read from its source: which folder may include which, which system
// headers it may use (libc and libm; the CLI alone does file IO), and that the library exports
// only names with the al_ prefix.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, existsSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const core = join(root, 'core');

// Each folder of core/ and the folders its files may include (besides its own and the public
// headers in include/). Dependencies run one way, bottom to top: the order below.
export const LAYERS = {
  include: [],
  base: [],
  torch: ['base'],
  kernels: ['base'],
  model: ['base', 'torch', 'kernels'],
  train: ['base', 'torch', 'kernels', 'model'],
  io: ['base', 'torch', 'kernels', 'model'],
  lab: ['base', 'torch', 'kernels', 'model', 'train', 'io'],
  demos: ['base', 'torch', 'kernels', 'model', 'lab'],
  cli: ['base', 'torch', 'kernels', 'model', 'train', 'io', 'lab', 'demos'],
};

// libc and libm (C11), the two SIMD intrinsics headers, and the POSIX clock of the benchmark.
const CORE_SYSTEM_HEADERS = new Set(['assert.h', 'float.h', 'inttypes.h', 'limits.h', 'math.h', 'stdarg.h',
  'stddef.h', 'stdint.h', 'stdlib.h', 'string.h', 'immintrin.h', 'wasm_simd128.h', 'time.h']);
// The command line also reads and writes files, and lists a folder it writes into (dirent.h:
// what a killed `train` left there, out_folder.c).
const CLI_SYSTEM_HEADERS = new Set([...CORE_SYSTEM_HEADERS, 'stdio.h', 'errno.h', 'unistd.h', 'sys/stat.h', 'fcntl.h', 'signal.h',
  'dirent.h']);

function sourceFiles() {
  const files = [];
  for (const folder of readdirSync(core, { withFileTypes: true })) {
    if (!folder.isDirectory()) continue;
    for (const f of readdirSync(join(core, folder.name))) {
      if (/\.[ch]$/.test(f)) files.push({ folder: folder.name, name: f, path: join(core, folder.name, f) });
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
        if (!allowed.has(inc.target)) problems.push(`${at}: not a libc/libm header this layer may use`);
        continue;
      }
      if (inc.target === 'attnlab.h' || inc.target.startsWith('attnlab/')) continue; // public API
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
    { folder: 'model', name: 'x.c', text: '#include "lab/anything.h"\n' },
    { folder: 'base', name: 'y.c', text: '#include "torch/reduce.h"\n' },
    { folder: 'kernels', name: 'z.c', text: '#include "internal.h"\n' },
    { folder: 'io', name: 'w.c', text: '#include <stdio.h>\n' },
    { folder: 'lab', name: 'v.c', text: '#include "demos/demo.h"\n' },
  ];
  for (const f of bad) assert.equal(violations([f]).length, 1, `${f.folder}/${f.name} should be refused`);
  assert.deepEqual(violations([{ folder: 'cli', name: 'u.c', text: '#include "demos/demo.h"\n#include <stdio.h>\n' }]), []);
});

test('the library exports only al_ names', () => {
  const lib = join(root, 'build', 'libattnlab.a');
  assert.ok(existsSync(lib), 'build/libattnlab.a is missing: run bash build.sh native');
  const out = execFileSync('nm', ['--defined-only', '-g', lib], { encoding: 'utf8' });
  const names = out.split('\n').map((l) => l.trim().split(/\s+/)).filter((p) => p.length === 3).map((p) => p[2]);
  assert.ok(names.length > 50, `nm listed only ${names.length} symbols`);
  assert.deepEqual(names.filter((n) => !n.startsWith('al_')), []);
});
