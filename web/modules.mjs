// modules.mjs — the page's ES modules (web/**/*.js) read as a graph, and that graph inlined into
// one classic script for the single-file page (bundle.mjs) and for its workers: Chromium refuses
// module imports from file:// and a worker from a blob cannot import its neighbours.
//
// The modules are written in one form, which this file checks and refuses otherwise (with the
// file and line), so that the inlined script runs exactly as the browser runs the modules:
//   - imports first, one a line at the left margin, of a file beside or under web/:
//       import * as Name from './file.js';    import { a, b as c } from '../ui/file.js';
//       import './file.js';                   (for what it does when it runs)
//   - one `export { a, b as c };` at the left margin, the last statement of the file; an
//     exported name is declared with const, function or class (never let/var: an importer's
//     named binding is read once, after the module has run);
//   - no import(), no import.meta, no other export form.
// Modules run in the order the browser runs them (each after what it imports, depth first). A
// module on a cycle may be imported only as `import * as` by the modules of that cycle: the
// namespace's names are read when used, so a cycle behaves as between real modules.
import { readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const WEB = dirname(fileURLToPath(import.meta.url));

const IMPORT = /^import\s+(?:\*\s+as\s+([A-Za-z_$][\w$]*)\s+from\s+|\{([^}]*)\}\s+from\s+)?'([^']+)';\s*$/;
const EXPORT = /^export\s*\{([^}]*)\};?\s*$/;

// "a", "b as c" → [[local, exported]] (imports: [[imported, local]]).
const names = (list) => list.split(',').map((s) => s.trim()).filter(Boolean).map((s) => {
  const m = /^([A-Za-z_$][\w$]*)(?:\s+as\s+([A-Za-z_$][\w$]*))?$/.exec(s);
  if (!m) throw new Error(`not a name: '${s}'`);
  return [m[1], m[2] || m[1]];
});

// One module: {path (relative to web/, with /), imports [{from, ns, named}], exports [[local,
// exported]], body (its text without the import and export statements)}.
function parse(path) {
  const file = join(WEB, path);
  const text = readFileSync(file, 'utf8');
  const where = (i) => `${path}:${i + 1}`;
  const lines = text.split('\n');
  const imports = [];
  let exports = null;
  const body = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    if (/\bimport\s*\(|\bimport\.meta\b/.test(line)) throw new Error(`${where(i)}: import() and import.meta are not used in the page's modules`);
    if (/^import\b/.test(line)) {
      if (exports) throw new Error(`${where(i)}: an import after the export`);
      const m = IMPORT.exec(line);
      if (!m) throw new Error(`${where(i)}: an import is one line: import * as X from './f.js'; or import { a } from './f.js';`);
      if (!m[3].startsWith('.')) throw new Error(`${where(i)}: '${m[3]}' is not a file of the page (./ or ../)`);
      const from = relative(WEB, resolve(dirname(file), m[3])).split(sep).join('/');
      if (from.startsWith('..')) throw new Error(`${where(i)}: '${m[3]}' is outside web/`);
      imports.push({ from, ns: m[1] || null, named: m[2] === undefined ? [] : names(m[2]), line: i });
      body.push(''); // the lines keep their numbers
      continue;
    }
    if (/^export\b/.test(line)) {
      if (exports) throw new Error(`${where(i)}: a second export statement`);
      let end = i;
      while (!/\};?\s*$/.test(lines[end]) && end < lines.length - 1) end++;
      const m = EXPORT.exec(lines.slice(i, end + 1).join(' '));
      if (!m) throw new Error(`${where(i)}: the one export form is export { a, b as c };`);
      exports = names(m[1]);
      if (lines.slice(end + 1).some((l) => l.trim())) throw new Error(`${where(end + 1)}: code after the export statement`);
      i = end;
      continue;
    }
    body.push(line);
  }
  const source = body.join('\n');
  for (const [local] of exports || []) {
    if (new RegExp(`^\\s*(?:let|var)\\s+${local.replace('$', '\\$')}\\b`, 'm').test(source)) {
      throw new Error(`${path}: '${local}' is exported but declared with let/var (declare it with const)`);
    }
  }
  return { path, imports, exports: exports || [], body: source };
}

// The modules `entry` reaches, in the order they run, each once.
function moduleGraph(entry) {
  const done = new Map();
  const active = new Set();
  const order = [];
  function visit(path, via) {
    if (done.has(path)) return;
    active.add(path);
    let m;
    try {
      m = parse(path);
    } catch (e) {
      if (e.code === 'ENOENT') throw new Error(`${via || path}: imports '${path}', which does not exist`);
      throw e;
    }
    done.set(path, m);
    for (const imp of m.imports) {
      if (active.has(imp.from) && imp.named.length) {
        throw new Error(`${path}:${imp.line + 1}: '${imp.from}' imports this module back (a cycle): import it as import * as`);
      }
      visit(imp.from, path);
    }
    active.delete(path);
    order.push(m);
  }
  visit(entry);
  const byPath = new Map(order.map((m) => [m.path, m]));
  for (const m of order) {
    for (const imp of m.imports) {
      const has = new Set(byPath.get(imp.from).exports.map(([, name]) => name));
      for (const [name] of imp.named) if (!has.has(name)) throw new Error(`${m.path}:${imp.line + 1}: '${imp.from}' exports no '${name}'`);
    }
  }
  return order;
}

// The graph from `entry` as one classic script: each module in its own function, its namespace
// an object of getters made before any module runs.
function inlineModules(entry) {
  const order = moduleGraph(entry);
  const key = (p) => JSON.stringify(p);
  const out = ['(function () {', "'use strict';", `const __ns = { ${order.map((m) => `${key(m.path)}: {}`).join(', ')} };`];
  for (const m of order) {
    out.push(`// ---------------------------------------------------------------- ${m.path}`, '(function () {');
    out.push(`  Object.defineProperties(__ns[${key(m.path)}], { ${m.exports.map(([local, name]) =>
      `${name}: { enumerable: true, get: () => ${local} }`).join(', ')} });`);
    out.push(`  Object.preventExtensions(__ns[${key(m.path)}]);`);
    for (const imp of m.imports) {
      if (imp.ns) out.push(`  const ${imp.ns} = __ns[${key(imp.from)}];`);
      if (imp.named.length) out.push(`  const { ${imp.named.map(([name, local]) => (name === local ? name : `${name}: ${local}`)).join(', ')} } = __ns[${key(imp.from)}];`);
    }
    out.push(m.body, '})();');
  }
  out.push('})();');
  return out.join('\n');
}

export { moduleGraph, inlineModules };
