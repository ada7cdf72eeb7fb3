// bundle.mjs — writes dist/attnlab.html: the whole page in one file (styles, scripts, Chart.js
// and the WebAssembly as base64) that works when opened from disk, where Chromium refuses ES
// modules and fetch() of files. The page's scripts are classic scripts for that reason.
import { createHash } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { mkdirSync, readFileSync, writeFileSync, renameSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

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
const wasm = readFileSync(join(WEB, 'gen', 'attnlab.wasm')).toString('base64');
// The model view's worker runs from a blob: its three scripts in one text.
const sources = (worker) => ['wasm-loader.js', 'attnlab-api.js', worker].map((f) => readFileSync(join(WEB, f), 'utf8')).join('\n');
const workerSource = sources('model/worker.js');
const trainWorkerSource = sources('train/worker.js');
const asScript = (text) => JSON.stringify(text).replace(/<\//g, '<\\/');
// The shipped model, as model/client.js looks for it.
const b64 = (f) => readFileSync(join(WEB, 'gen', 'models', f)).toString('base64');
const stories = { model: b64('stories260K.bin'), tokenizer: b64('tok512.bin') };
// The Train tab's tokenizer (MiniMind's) and built-in text, gzip-compressed (model/client.js's
// trainBytes inflates them).
const gz = (f) => gzipSync(readFileSync(join(WEB, 'gen', 'models', f)), { level: 9 }).toString('base64');
let first = true;
html = html.replace(/<script defer src="([^"]+)"><\/script>/g, (_m, src) => {
  const code = readFileSync(join(WEB, src), 'utf8');
  // The wasm, the worker and the model travel with the first script, before anything loads.
  const prefix = first ? inlineScript(`window.ATTNLAB_WASM_BASE64 = "${wasm}";\n` +
    `window.ATTNLAB_WORKER_SOURCE = ${asScript(workerSource)};\n` +
    `window.ATTNLAB_TRAIN_WORKER_SOURCE = ${asScript(trainWorkerSource)};\n` +
    `window.ATTNLAB_STORIES260K = ${JSON.stringify(stories)};\n` +
    `window.ATTNLAB_TRAIN_TOKENIZER_GZ = "${gz('minimind-fortunes/tokenizer.json')}";\n` +
    `window.ATTNLAB_TRAIN_SAMPLE_GZ = "${gz('minimind-fortunes/train-sample.txt')}";`) + '\n' : '';
  first = false;
  return prefix + inlineScript(code);
});
// The served page's policy, with the inline scripts and style allowed by hash and no network.
html = html.replace(/<meta http-equiv="Content-Security-Policy" content="[^"]*">/,
  `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src ${hashes.script.join(' ')} 'wasm-unsafe-eval'; ` +
  `style-src ${hashes.style.join(' ')}; img-src data: blob:; worker-src blob:; connect-src 'none'; base-uri 'none'; form-action 'none'">`);
if (!html.includes('wasm-unsafe-eval')) throw new Error('bundle: the page has no Content-Security-Policy to fill in');
mkdirSync(dirname(OUT), { recursive: true });
writeFileSync(OUT + '.tmp', html);
renameSync(OUT + '.tmp', OUT);
console.log(`built dist/attnlab.html (${Math.round(html.length / 1024)} KB)`);
