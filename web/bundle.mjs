// bundle.mjs — writes dist/attnlab.html: the whole page in one file (styles, scripts, Chart.js
// and the WebAssembly as base64) that works when opened from disk, where Chromium refuses ES
// modules and fetch() of files. The page's scripts are classic scripts for that reason.
import { mkdirSync, readFileSync, writeFileSync, renameSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const WEB = dirname(fileURLToPath(import.meta.url));
const OUT = join(WEB, '..', 'dist', 'attnlab.html');

// A script's text, safe inside <script>…</script>.
function inlineScript(code) {
  return `<script>\n${code.replace(/<\/script/gi, '<\\/script')}\n</script>`;
}

let html = readFileSync(join(WEB, 'index.html'), 'utf8');
html = html.replace(/<link rel="stylesheet" href="([^"]+)">/g,
  (_m, href) => `<style>\n${readFileSync(join(WEB, href), 'utf8')}\n</style>`);
const wasm = readFileSync(join(WEB, 'gen', 'attnlab.wasm')).toString('base64');
let first = true;
html = html.replace(/<script src="([^"]+)"><\/script>/g, (_m, src) => {
  const code = readFileSync(join(WEB, src), 'utf8');
  // The wasm travels with the first script so app.js finds it before it loads the core.
  const prefix = first ? inlineScript(`window.ATTNLAB_WASM_BASE64 = "${wasm}";`) + '\n' : '';
  first = false;
  return prefix + inlineScript(code);
});
mkdirSync(dirname(OUT), { recursive: true });
writeFileSync(OUT + '.tmp', html);
renameSync(OUT + '.tmp', OUT);
console.log(`built dist/attnlab.html (${Math.round(html.length / 1024)} KB)`);
