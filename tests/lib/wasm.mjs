// wasm.mjs — the WebAssembly build as Node tests and the benchmark use it: the page's own
// loader (web/core/wasm-loader.js) and binding (web/core/attnlab-api.js) on web/gen/attnlab.wasm.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './run.mjs';

export { createAttnLabModule as factory } from '../../web/core/wasm-loader.js';
export * as AttnLab from '../../web/core/attnlab-api.js';
import { createAttnLabModule as factory } from '../../web/core/wasm-loader.js';
import * as AttnLab from '../../web/core/attnlab-api.js';
export const wasmBytes = () => readFileSync(join(ROOT, 'web', 'gen', 'attnlab.wasm'));
export const loadCore = () => AttnLab.load({ factory, wasmBinary: wasmBytes() });
