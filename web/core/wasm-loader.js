// wasm-loader.js — instantiates gen/attnlab.wasm, a standalone WebAssembly module (a "reactor":
// no main, its C runtime set up by calling the exported _initialize once), and gives the
// binding the few things it needs: the exported C functions (as _name), views of the memory
// that follow its growth, and C strings read as UTF-8.
//
// The module asks its host for one WASI call and one Emscripten hook, no more (the core prints
// nothing and never exits; a build that imported anything else would fail to instantiate, and
// the tests would say so):
//   clock_time_get  the benchmark's timer (nanoseconds, from performance.now())
//   emscripten_notify_memory_growth  memory grew; the views are re-made on next use anyway
// An ES module, for the page, its workers and the Node tests alike.

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

    const wasi = {
      clock_time_get(_clockId, _precision, outPtr) {
        const ns = BigInt(Math.round(performance.now() * 1e6));
        new DataView(memory.buffer).setBigUint64(outPtr, ns, true);
        return 0;
      },
    };
    const env = { emscripten_notify_memory_growth() { views = null; } };

    let instance;
    try {
      ({ instance } = await WebAssembly.instantiate(options.wasmBinary, { wasi_snapshot_preview1: wasi, env }));
    } catch (e) {
      throw new Error(`attnlab.wasm could not be started: ${e.message} (the page needs WebAssembly with SIMD)`);
    }
    const ex = instance.exports;
    memory = ex.memory;
    if (typeof ex._initialize === 'function') ex._initialize();

    const module = {
      get HEAPU8() { return heap().u8; },
      get HEAP32() { return heap().i32; },
      get HEAPF32() { return heap().f32; },
      get HEAPF64() { return heap().f64; },
      // The NUL-terminated C string at ptr (at most maxBytes long), as UTF-8.
      UTF8ToString(ptr, maxBytes = Infinity) {
        const u8 = heap().u8;
        let end = ptr;
        while (end - ptr < maxBytes && u8[end] !== 0) end++;
        return decoder.decode(u8.subarray(ptr, end));
      },
    };
    for (const [name, value] of Object.entries(ex)) {
      if (typeof value === 'function') module[`_${name}`] = value;
    }
    return module;
  }

export { createAttnLabModule };
