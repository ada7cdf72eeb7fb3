// bundle.mjs — writes dist/attnlab.html: the whole page in one file (styles, Chart.js, the page's
// modules inlined into one script by modules.mjs, and in one JSON block the WebAssembly, the
// workers' code and the shipped model, compressed) that works when opened from disk, where Chromium
// refuses module imports and fetch() of files.
import { createHash } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { mkdirSync, readFileSync, writeFileSync, renameSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { inlineModules } from './modules.mjs';

const WEB = dirname(fileURLToPath(import.meta.url));
const OUT = join(WEB, '..', 'dist', 'attnlab.html');

// Every inline script and style is allowed by its hash in the page's Content-Security-Policy.
const hashes = { script: [], style: [] };
function allow(kind, text) {
  hashes[kind].push(`'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`);
  return text;
}

// A script's text, safe inside <script>…</script>.
function inlineScript(code) {
  const text = `\n${code.replace(/<\/script/gi, '<\\/script')}\n`;
  return `<script>${allow('script', text)}</script>`;
}

let html = readFileSync(join(WEB, 'index.html'), 'utf8');
html = html.replace(/<link rel="stylesheet" href="([^"]+)">/g,
  (_m, href) => `<style>${allow('style', `\n${readFileSync(join(WEB, href), 'utf8')}\n`)}</style>`);
// Preloads are for the served page: here everything is inline.
html = html.replace(/<!-- PRELOAD:[^>]*-->\n(<link rel="preload"[^>]*>\n)*/, '');
if (html.includes('rel="preload"')) throw new Error('bundle: a preload link was left in the single-file page');
// What the page's modules read from core/embedded.js, every file gzip-compressed, then base64:
// the wasm, each worker's modules as one classic script (run from a blob), the shipped model,
// the Train tab's tokenizer (MiniMind's) and built-in text.
const gz = (bytes) => gzipSync(bytes, { level: 9 }).toString('base64');
const gzFile = (...path) => gz(readFileSync(join(WEB, ...path)));
const embedded = {
  wasm: gzFile('gen', 'attnlab.wasm'),
  workers: Object.fromEntries(['model', 'train', 'layer'].map((w) => [w, gz(Buffer.from(inlineModules(`${w}/worker.js`), 'utf8'))])),
  stories260K: { model: gzFile('gen', 'models', 'stories260K.bin'), tokenizer: gzFile('gen', 'models', 'tok512.bin') },
  trainTokenizer: gzFile('gen', 'models', 'minimind-fortunes', 'tokenizer.json'),
  trainSample: gzFile('gen', 'models', 'minimind-fortunes', 'train-sample.txt'),
};
// JSON inside <script type="application/json">: every "<" written as \u003c (the same string),
// so that no "</script" or "<!--" in a worker's code can end the block.
const dataBlock = `<script type="application/json" id="attnlab-embedded">${JSON.stringify(embedded).replace(/</g, '\\u003c')}</script>`;
html = html.replace(/<script defer src="([^"]+)"><\/script>/g, (_m, src) => inlineScript(readFileSync(join(WEB, src), 'utf8')));
let entries = 0;
html = html.replace(/<script type="module" src="([^"]+)"><\/script>/g, (_m, src) => {
  entries++;
  return `${dataBlock}\n${inlineScript(inlineModules(src))}`;
});
if (entries !== 1) throw new Error(`bundle: index.html has ${entries} entry modules (one is expected)`);
if (/<script[^>]*\ssrc=/i.test(html)) throw new Error('bundle: a script with src was left in the single-file page');
// The served page's policy, with the inline scripts and style allowed by hash and no network.
html = html.replace(/<meta http-equiv="Content-Security-Policy" content="[^"]*">/,
  `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src ${hashes.script.join(' ')} 'wasm-unsafe-eval'; ` +
  `style-src ${hashes.style.join(' ')}; img-src data: blob:; worker-src blob:; connect-src 'none'; base-uri 'none'; form-action 'none'">`);
if (!html.includes('wasm-unsafe-eval')) throw new Error('bundle: the page has no Content-Security-Policy to fill in');
mkdirSync(dirname(OUT), { recursive: true });
writeFileSync(OUT + '.tmp', html);
renameSync(OUT + '.tmp', OUT);
console.log(`built dist/attnlab.html (${Math.round(html.length / 1024)} KB)`);
