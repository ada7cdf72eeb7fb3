// wasm.mjs — the WebAssembly build as Node tests and the benchmark use it: the page's own
// loader (web/wasm-loader.js) and binding (web/attnlab-api.js) on web/gen/attnlab.wasm.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { ROOT } from './run.mjs';

const require = createRequire(import.meta.url);
export const factory = require(join(ROOT, 'web', 'wasm-loader.js'));
export const AttnLab = require(join(ROOT, 'web', 'attnlab-api.js'));
export const wasmBytes = () => readFileSync(join(ROOT, 'web', 'gen', 'attnlab.wasm'));
export const loadCore = () => AttnLab.load({ factory, wasmBinary: wasmBytes() });
