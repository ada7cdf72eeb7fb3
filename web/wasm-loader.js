// wasm-loader.js — instantiates gen/attnlab.wasm, a standalone WebAssembly module (a "reactor":
// no main, its C runtime set up by calling the exported _initialize once), and gives the
// binding the few things it needs: the exported C functions (as _name), views of the memory
// that follow its growth, and C strings read as UTF-8.
//
// The module asks its host for four WASI calls and one Emscripten hook, no more:
//   clock_time_get  the timer of the benchmark (nanoseconds, from performance.now())
//   fd_write        text a C runtime error writes to stderr (shown on the console)
//   fd_close, fd_seek  never reached here; answered "bad file descriptor"
//   proc_exit       the C runtime giving up (abort): becomes a JS exception
//   emscripten_notify_memory_growth  memory grew; the views are re-made on next use anyway
// Works as a classic browser script (defines globalThis.createAttnLabModule) and in Node.
(function (root) {
  'use strict';

  const WASI_EBADF = 8;

  async function createAttnLabModule(options = {}) {
    if (!options.wasmBinary) throw new Error('createAttnLabModule: wasmBinary (the bytes of attnlab.wasm) is required');
    let memory = null;
    let views = null;
    // Views over the current buffer; memory.grow() detaches the old one, so compare first.
    const heap = () => {
      if (!views || views.buffer !== memory.buffer) {
        const b = memory.buffer;
        views = { buffer: b, u8: new Uint8Array(b), i32: new Int32Array(b), f32: new Float32Array(b), f64: new Float64Array(b) };
      }
      return views;
    };
    const decoder = new TextDecoder('utf-8');
    const stderrLine = [];

    const wasi = {
      clock_time_get(_clockId, _precision, outPtr) {
        const ns = BigInt(Math.round(performance.now() * 1e6));
        new DataView(memory.buffer).setBigUint64(outPtr, ns, true);
        return 0;
      },
      fd_write(fd, iovs, iovsLen, writtenPtr) {
        const dv = new DataView(memory.buffer);
        let total = 0;
        for (let i = 0; i < iovsLen; i++) {
          const ptr = dv.getUint32(iovs + 8 * i, true);
          const len = dv.getUint32(iovs + 8 * i + 4, true);
          stderrLine.push(decoder.decode(new Uint8Array(memory.buffer, ptr, len)));
          total += len;
        }
        const text = stderrLine.join('');
        if (text.includes('\n')) { console.error(`attnlab.wasm (fd ${fd}): ${text.trimEnd()}`); stderrLine.length = 0; }
        dv.setUint32(writtenPtr, total, true);
        return 0;
      },
      fd_close() { return WASI_EBADF; },
      fd_seek() { return WASI_EBADF; },
      proc_exit(code) { throw new Error(`attnlab.wasm stopped (exit ${code})`); },
    };
    const env = { emscripten_notify_memory_growth() { views = null; } };

    let instance;
    try {
      ({ instance } = await WebAssembly.instantiate(options.wasmBinary, { wasi_snapshot_preview1: wasi, env }));
    } catch (e) {
      throw new Error(`attnlab.wasm could not be started (it needs WebAssembly with SIMD): ${e.message}`);
    }
    const ex = instance.exports;
    memory = ex.memory;
    if (typeof ex._initialize === 'function') ex._initialize();

    const module = {
      get HEAPU8() { return heap().u8; },
      get HEAP32() { return heap().i32; },
      get HEAPF32() { return heap().f32; },
      get HEAPF64() { return heap().f64; },
      // The NUL-terminated C string at ptr, as UTF-8.
      UTF8ToString(ptr) {
        const u8 = heap().u8;
        let end = ptr;
        while (u8[end] !== 0) end++;
        return decoder.decode(u8.subarray(ptr, end));
      },
    };
    for (const [name, value] of Object.entries(ex)) {
      if (typeof value === 'function') module[`_${name}`] = value;
    }
    return module;
  }

  if (typeof module === 'object' && module.exports) module.exports = createAttnLabModule;
  else root.createAttnLabModule = createAttnLabModule;
})(typeof globalThis !== 'undefined' ? globalThis : this);
