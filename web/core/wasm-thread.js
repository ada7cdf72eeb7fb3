// wasm-thread.js — one thread of the threaded build (gen/attnlab-threads.wasm), a module Worker
// started by wasm-loader.js: it instantiates the module it is sent on the shared memory it is
// sent, moves its stack pointer to the block the first thread gave it, and calls
// al_wasm_thread_run, which waits for the GEMM's parts and never returns (core/kernels/pool.c).
import { hostImports } from './wasm-loader.js';

addEventListener('message', async ({ data: { module, memory, part, block, stackTop } }) => {
  try {
    const instance = await WebAssembly.instantiate(module, hostImports(() => memory, () => {}));
    const ex = instance.exports;
    ex.stackRestore(stackTop);
    ex.al_wasm_thread_run(part, block);
  } catch (e) {
    postMessage({ error: e.message || String(e) });
  }
}, { once: true });
