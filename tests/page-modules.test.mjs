// page-modules.test.mjs — the page's code is ES modules: every web/**/*.js is a module in the
// one form web/modules.mjs inlines (imports at the top, one export at the bottom), reached from
// the entry module or a worker's; none sets a global but main.js's one handle (window.attnlab),
// and the loaded page, served and from file://, has no other new name on window than that and
// Chart.js's; the single-file page loads no script from a file; and the workers' one protocol
// (web/core/protocol.js) answers, refuses, sends events, hands buffers over and leaves shared
// memory shared.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join, posix, relative, sep } from 'node:path';
import { pathToFileURL } from 'node:url';
import { MessageChannel } from 'node:worker_threads';
import { gunzipSync } from 'node:zlib';
import { ROOT } from './lib/run.mjs';
import { openPage, servedBrowser } from './lib/browser.mjs';
import { inlineModules, moduleGraph } from '../web/modules.mjs';
import { Client, Newest, serve, emit } from '../web/core/protocol.js';

const WEB = join(ROOT, 'web');
const DIST = join(ROOT, 'dist', 'attnlab.html');

// Every .js file of the page's own (not the generated or vendored ones), relative to web/.
function pageFiles(dir = WEB) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    if (e.isDirectory()) return ['gen', 'vendor'].includes(e.name) && dir === WEB ? [] : pageFiles(p);
    return e.name.endsWith('.js') ? [relative(WEB, p).split(sep).join('/')] : [];
  });
}

// The entries: index.html's module scripts and the workers the page starts (the threaded
// core's threads too: web/core/wasm-loader.js starts them).
const html = readFileSync(join(WEB, 'index.html'), 'utf8');
const entries = [...html.matchAll(/<script type="module" src="([^"]+)"><\/script>/g)].map((m) => m[1]);
const WORKERS = ['model/worker.js', 'train/worker.js', 'layer/worker.js', 'core/wasm-thread.js'];

test('index.html loads Chart.js and one entry module, no other script', () => {
  assert.deepEqual(entries, ['main.js']);
  const scripts = [...html.matchAll(/<script\b[^>]*>/g)].map((m) => m[0]);
  assert.deepEqual(scripts, ['<script defer src="vendor/chart.umd.js">', '<script type="module" src="main.js">']);
});

test('every web/**/*.js is a module in the inlined form, reached from the entry or a worker', () => {
  const reached = new Set();
  for (const entry of [...entries, ...WORKERS]) for (const m of moduleGraph(entry)) reached.add(m.path);
  const files = pageFiles();
  assert.ok(files.length >= 30, `only ${files.length} page files found`);
  assert.deepEqual(files.filter((f) => !reached.has(f)), [], 'files no entry imports (classic scripts left over?)');
  for (const f of files) {
    const text = readFileSync(join(WEB, f), 'utf8');
    assert.match(text, /^(import|export) /m, `${f} imports or exports: a module`);
    assert.doesNotMatch(text, /^\(function \((root|self)\)/m, `${f} is still wrapped as a classic script`);
  }
});

// Each page module's imports, read from its import lines: file (relative to web/) → the files
// it imports, in the order written.
function importGraph() {
  const graph = new Map();
  for (const f of pageFiles()) {
    const from = [];
    for (const line of readFileSync(join(WEB, f), 'utf8').split('\n')) {
      const m = /^import\s+(?:[^'"]*\sfrom\s+)?'([^']+)';/.exec(line);
      if (m) from.push(posix.normalize(posix.join(posix.dirname(f), m[1])));
    }
    graph.set(f, from);
  }
  return graph;
}

// The first cycle of the graph found by a depth-first walk (its files, the first repeated at
// the end), or null.
function findCycle(graph) {
  const state = new Map(); // file → 'open' while on the walk's path, 'done' once left
  const path = [];
  function visit(f) {
    if (state.get(f) === 'done') return null;
    if (state.get(f) === 'open') return [...path.slice(path.indexOf(f)), f];
    state.set(f, 'open');
    path.push(f);
    for (const next of graph.get(f) || []) {
      const cycle = visit(next);
      if (cycle) return cycle;
    }
    path.pop();
    state.set(f, 'done');
    return null;
  }
  for (const f of graph.keys()) {
    const cycle = visit(f);
    if (cycle) return cycle;
  }
  return null;
}

test('the page\'s import graph has no cycle, and its modules import each other by their own names', () => {
  const graph = importGraph();
  assert.ok(graph.size >= 30);
  assert.deepEqual([...graph.values()].flat().filter((f) => !graph.has(f)), [], 'every import is a page file');
  const cycle = findCycle(graph);
  assert.equal(cycle, null, `an import cycle: ${(cycle || []).join(' → ')}`);
  // the walk finds a cycle where there is one
  assert.deepEqual(findCycle(new Map([['a.js', ['b.js']], ['b.js', ['c.js']], ['c.js', ['b.js']]])), ['b.js', 'c.js', 'b.js']);
  // no renaming import (`{ a as b }`), and a namespace is named for its file (view.js as
  // ModelView or View, heatmap.js as Heat…), never by one letter
  const renamed = [], short = [];
  for (const f of graph.keys()) {
    readFileSync(join(WEB, f), 'utf8').split('\n').forEach((line, i) => {
      if (/^import\s*\{[^}]*\bas\b/.test(line)) renamed.push(`${f}:${i + 1}: ${line}`);
      const ns = /^import \* as (\w+) /.exec(line);
      if (ns && ns[1].length < 3) short.push(`${f}:${i + 1}: ${line}`);
      // a one-letter stand-in for a module (const V = () => ModelView)
      if (/^\s*const [A-Za-z] = \(\) => [A-Z]\w*;/.test(line)) short.push(`${f}:${i + 1}: ${line.trim()}`);
    });
  }
  assert.deepEqual(renamed, [], 'imports that rename');
  assert.deepEqual(short, [], 'one-letter names for modules');
});

test('every text in Chinese is in the ui tables (i18n.js, strings-*.js), each chart\'s words a group of them', () => {
  const tables = ['ui/i18n.js', 'ui/strings-model.js', 'ui/strings-train.js'];
  const elsewhere = [];
  for (const f of pageFiles()) {
    if (tables.includes(f)) continue;
    const text = readFileSync(join(WEB, f), 'utf8');
    // a quoted string or template holding Chinese (a regular expression's break characters are no text)
    for (const m of text.matchAll(/'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*"|`[^`]*`/g)) {
      if (/[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]/u.test(m[0])) elsewhere.push(`${f}: ${m[0].slice(0, 60)}`);
    }
    if (/\bSTRINGS\s*=/.test(text)) elsewhere.push(`${f}: a STRINGS table of its own`);
  }
  assert.deepEqual(elsewhere, []);
});

test('no page module sets a global, but main.js its one handle window.attnlab', () => {
  const sets = [];
  for (const f of pageFiles()) {
    readFileSync(join(WEB, f), 'utf8').split('\n').forEach((line, i) => {
      // an assignment to a property of the global object (window.x =, self.x =, globalThis[x] =)
      if (/\b(window|self|globalThis)\s*(\.\s*[\w$]+|\[[^\]]*\])\s*=(?!=)/.test(line) && !/^\s*\/\//.test(line)) sets.push(`${f}:${i + 1}: ${line.trim()}`);
    });
  }
  assert.equal(sets.length, 1, `global assignments:\n${sets.join('\n')}`);
  assert.match(sets[0], /^main\.js:\d+: window\.attnlab = \{/);
});

test('the single-file page loads no script, style or module from a file', () => {
  const page = readFileSync(DIST, 'utf8');
  assert.deepEqual([...page.matchAll(/<script\b[^>]*\ssrc=[^>]*>/gi)].map((m) => m[0]), []);
  assert.deepEqual([...page.matchAll(/<link\b[^>]*rel="?(stylesheet|modulepreload|preload)[^>]*>/gi)].map((m) => m[0]), []);
  assert.doesNotMatch(page, /<script type="module"/, 'no module script: from file:// Chromium refuses its imports');
  const blocks = [...page.matchAll(/<script type="application\/json" id="attnlab-embedded">/g)];
  assert.equal(blocks.length, 1, 'one JSON block carries the wasm, the workers and the model');
});

// The single-file page's files, inflated, are the served page's, byte for byte (the workers'
// code is what modules.mjs inlines from their modules).
test('the single-file page carries the wasm, the workers, the model and the Train inputs, compressed, each the served file', () => {
  const page = readFileSync(DIST, 'utf8');
  const text = page.match(/<script type="application\/json" id="attnlab-embedded">([\s\S]*?)<\/script>/)[1];
  const embedded = JSON.parse(text);
  const inflate = (b64) => gunzipSync(Buffer.from(b64, 'base64'));
  const gen = (...p) => readFileSync(join(ROOT, 'web', 'gen', ...p));
  assert.ok(inflate(embedded.wasm).equals(gen('attnlab.wasm')), 'wasm');
  assert.ok(inflate(embedded.stories260K.model).equals(gen('models', 'stories260K.bin')), 'stories260K.bin');
  assert.ok(inflate(embedded.stories260K.tokenizer).equals(gen('models', 'tok512.bin')), 'tok512.bin');
  assert.ok(inflate(embedded.trainTokenizer).equals(gen('models', 'minimind-fortunes', 'tokenizer.json')), 'tokenizer.json');
  assert.ok(inflate(embedded.trainSample).equals(gen('models', 'minimind-fortunes', 'train-sample.txt')), 'train-sample.txt');
  assert.deepEqual(Object.keys(embedded.workers).sort(), ['layer', 'model', 'train']);
  for (const [w, code] of Object.entries(embedded.workers)) assert.equal(inflate(code).toString('utf8'), inlineModules(`${w}/worker.js`), `${w} worker`);
});

// The names the loaded page added to window: its own property names less those of an empty
// document's window (an about:blank frame's), less the frames' index names.
async function newGlobals(page) {
  return page.evaluate(() => {
    const frame = document.createElement('iframe');
    document.body.append(frame);
    const blank = new Set(Object.getOwnPropertyNames(frame.contentWindow));
    const added = Object.getOwnPropertyNames(window).filter((k) => !blank.has(k) && !/^\d+$/.test(k)).sort();
    frame.remove();
    return added;
  });
}

let browser, served;
servedBrowser((b, url) => { browser = b; served = url; });

for (const [label, url] of [['served page', () => served], ['dist/attnlab.html from disk', () => pathToFileURL(DIST).href]]) {
  test(`${label}: the page adds window.attnlab and Chart.js's Chart to window, nothing else`, async () => {
    const { page, problems } = await openPage(browser.context, `${url()}#lang=en`);
    // the views the handle names are there (the tests read them)
    assert.deepEqual(await page.evaluate(() => Object.keys(window.attnlab).sort()), ['api', 'experiments', 'layerView', 'link', 'modelView', 'page', 'trainView']);
    assert.deepEqual(await newGlobals(page), ['Chart', 'attnlab']);
    assert.deepEqual(problems, []);
    await page.close();
  });
}

// ------------------------------------------------------------------ the workers' protocol
// The page's side and a worker's side over a MessageChannel, as over a Worker.
function pair(ops, transfer) {
  const { port1, port2 } = new MessageChannel();
  serve(ops, { port: port1, transfer });
  const client = new Client(port2);
  return { client, port1, close: () => { port1.close(); port2.close(); } };
}

test('protocol: a request is answered, a throw or rejection refused with its message, an unknown op named', async () => {
  const { client, close } = pair({
    add: ({ a, b }) => a + b,
    later: async ({ v }) => v * 2,
    fail: () => { throw new Error('no such head'); },
    reject: async () => { throw new Error('refused later'); },
  });
  try {
    assert.equal(await client.request('add', { a: 2, b: 3 }), 5);
    assert.equal(await client.request('later', { v: 21 }), 42);
    await assert.rejects(client.request('fail'), /^Error: no such head$/);
    await assert.rejects(client.request('reject'), /^Error: refused later$/);
    await assert.rejects(client.request('toString'), /unknown request 'toString'/);
    await assert.rejects(client.request('nope'), /unknown request 'nope'/);
    // answers are matched to their requests, whatever order they come back in
    const [slow, fast] = await Promise.all([client.request('later', { v: 1 }), client.request('add', { a: 1, b: 1 })]);
    assert.deepEqual([slow, fast], [2, 2]);
  } finally {
    close();
  }
});

test('protocol: events reach onEvent; buffers named are handed over; shared memory stays shared', async () => {
  let port;
  const { client, port1, close } = pair({
    // fills the buffer it was handed and hands it back
    fill: ({ buffer }) => { new Uint8Array(buffer).fill(7); return { buffer }; },
    // writes into the shared memory it was sent: the page sees the write
    share: ({ memory }) => { new Int32Array(memory)[0] = 123; emit({ progress: { wrote: true } }, [memory], port); return { ok: true }; },
  }, (result) => (result.buffer ? [result.buffer] : []));
  port = port1;
  try {
    const events = [];
    client.onEvent = (e) => events.push(e);
    const buffer = new ArrayBuffer(8);
    const back = await client.request('fill', { buffer }, [buffer]);
    assert.equal(buffer.byteLength, 0, 'the buffer was handed over, not copied');
    assert.deepEqual([...new Uint8Array(back.buffer)], [7, 7, 7, 7, 7, 7, 7, 7]);
    const memory = new SharedArrayBuffer(16);
    // a SharedArrayBuffer in a transfer list would make postMessage throw: the protocol leaves it out
    assert.deepEqual(await client.request('share', { memory }, [memory]), { ok: true });
    assert.equal(new Int32Array(memory)[0], 123, 'the worker wrote into the same memory');
    await new Promise((r) => setTimeout(r, 50));
    assert.deepEqual(events, [{ progress: { wrote: true } }]);
  } finally {
    close();
  }
});

test('protocol: of requests made through Newest only the newest one\'s answer counts, whatever order the answers come in', async () => {
  // `wait` answers after the given request has been answered: the later request answers first
  let release;
  const released = new Promise((r) => { release = r; });
  const { client, close } = pair({
    wait: async ({ v }) => { await released; return v; },
    now: ({ v }) => { setTimeout(release, 0); return v; },
    fail: async () => { await released; throw new Error('refused'); },
  });
  try {
    const newest = new Newest(client);
    const order = [];
    const older = newest.request('wait', { v: 'seed 4' }).then((r) => (order.push('older'), r));
    const newer = newest.request('now', { v: 'seed 5' }).then((r) => (order.push('newer'), r));
    assert.deepEqual([await older, await newer], [null, 'seed 5'], 'the older answer, come last, is dropped');
    assert.deepEqual(order, ['newer', 'older'], 'the answers came back out of order');
    // an older request's refusal is dropped too; the newest one's is said
    const refused = newest.request('fail');
    assert.equal(await newest.request('add', { a: 1 }).catch((e) => e.message), "unknown request 'add'");
    assert.equal(await refused, null);
    // alone, a request is answered as by the client
    assert.equal(await newest.request('now', { v: 7 }), 7);
  } finally {
    close();
  }
});
