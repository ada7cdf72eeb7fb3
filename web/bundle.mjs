// bundle.mjs — writes dist/attnlab.html: the whole page in one file (styles, scripts, Chart.js
// and the WebAssembly as base64) that works when opened from disk, where Chromium refuses ES
// modules and fetch() of files. The page's scripts are classic scripts for that reason.
import { createHash } from 'node:crypto';
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
const wasm = readFileSync(join(WEB, 'gen', 'attnlab.wasm')).toString('base64');
let first = true;
html = html.replace(/<script src="([^"]+)"><\/script>/g, (_m, src) => {
  const code = readFileSync(join(WEB, src), 'utf8');
  // The wasm travels with the first script so app.js finds it before it loads the core.
  const prefix = first ? inlineScript(`window.ATTNLAB_WASM_BASE64 = "${wasm}";`) + '\n' : '';
  first = false;
  return prefix + inlineScript(code);
});
// The served page's policy, with the inline scripts and style allowed by hash and no network.
html = html.replace(/<meta http-equiv="Content-Security-Policy" content="[^"]*">/,
  `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src ${hashes.script.join(' ')} 'wasm-unsafe-eval'; ` +
  `style-src ${hashes.style.join(' ')}; img-src data: blob:; connect-src 'none'; base-uri 'none'; form-action 'none'">`);
if (!html.includes('wasm-unsafe-eval')) throw new Error('bundle: the page has no Content-Security-Policy to fill in');
mkdirSync(dirname(OUT), { recursive: true });
writeFileSync(OUT + '.tmp', html);
renameSync(OUT + '.tmp', OUT);
console.log(`built dist/attnlab.html (${Math.round(html.length / 1024)} KB)`);
