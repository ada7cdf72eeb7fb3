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
//
// Two builds take the same path. gen/attnlab.wasm runs on one thread and owns its memory.
// gen/attnlab-threads.wasm (it exports al_wasm_thread_run) imports a shared memory as
// env.memory, and computes its GEMMs on `threads` threads (default 2): the caller's and
// threads - 1 Workers (wasm-thread.js), each an instance of the same module on that memory,
// parked in the core until a job comes (core/kernels/pool.c). It needs SharedArrayBuffer and
// Worker, so a cross-origin isolated page (web/serve.mjs sends the headers); the page picks
// the build (main.js), and module.threads says which it got. options.threadScript: the URL of
// wasm-thread.js where it is not in the page's core/ folder.
// An ES module, for the page, its workers and the Node tests alike.

// The imports of either build (memory: the memory once known; grew: its growth noticed).
function hostImports(memory, grew) {
  const wasi = {
    clock_time_get(_clockId, _precision, outPtr) {
      const ns = BigInt(Math.round(performance.now() * 1e6));
      new DataView(memory().buffer).setBigUint64(outPtr, ns, true);
      return 0;
    },
  };
  return { wasi_snapshot_preview1: wasi, env: { emscripten_notify_memory_growth: grew, memory: memory() } };
}

// The threaded build's memory: 16 MB to start, at most 2 GB (the link's -sINITIAL_MEMORY and
// -sMAXIMUM_MEMORY, which a shared memory must be given as they are), in 64 KB pages.
const SHARED_PAGES = { initial: 256, maximum: 32768 };

// The threads' script, core/wasm-thread.js, where the page keeps it: beside index.html's core/
// folder from the page, one folder up from its workers (model/worker.js, train/worker.js).
function threadScript() {
  if (typeof document !== 'undefined') return new URL('core/wasm-thread.js', document.baseURI).href;
  return new URL('../core/wasm-thread.js', self.location.href).href;
}

// Starts threads - 1 Workers of the threaded build on its memory and waits until each is
// parked in the core (al_wasm_threads counts them); a Worker that fails says why.
async function startThreads(ex, module, memory, threads, script) {
  const workers = [];
  for (let part = 1; part < threads; part++) {
    const block = ex.al_wasm_thread_block();
    if (!block) throw new Error('no memory for a thread\'s stack');
    const w = new Worker(script, { type: 'module' });
    const failed = new Promise((_, reject) => {
      w.onmessage = (e) => reject(new Error(e.data.error));
      w.onerror = (e) => reject(new Error(e.message || 'wasm-thread.js could not be started'));
    });
    failed.catch(() => {});
    w.postMessage({ module, memory, part, block, stackTop: ex.al_wasm_thread_stack_top(block) });
    workers.push({ w, failed });
  }
  // A thread parks within milliseconds; 30 s is a hang guard.
  for (let waited = 0; ex.al_wasm_threads() < threads; waited += 5) {
    if (waited > 30000) throw new Error(`only ${ex.al_wasm_threads()} of ${threads} threads started`);
    await Promise.race([new Promise((r) => setTimeout(r, 5)), ...workers.map((x) => x.failed)]);
  }
  return workers.map((x) => x.w);
}

  async function createAttnLabModule(options = {}) {
    if (!options.wasmBinary) throw new Error('createAttnLabModule: wasmBinary (the bytes of attnlab.wasm) is required');
    let memory = null;
    let views = null;
    // Views over the current buffer; memory.grow() detaches the old one (or, shared, leaves it
    // short), so compare first.
    const heap = () => {
      if (!views || views.buffer !== memory.buffer) {
        const b = memory.buffer;
        views = { buffer: b, u8: new Uint8Array(b), i32: new Int32Array(b), f32: new Float32Array(b), f64: new Float64Array(b) };
      }
      return views;
    };
    const decoder = new TextDecoder('utf-8');

    let compiled;
    try {
      compiled = await WebAssembly.compile(options.wasmBinary);
    } catch (e) {
      throw new Error(`attnlab.wasm could not be started: ${e.message} (the page needs WebAssembly with SIMD)`);
    }
    const threaded = WebAssembly.Module.exports(compiled).some((e) => e.name === 'al_wasm_thread_run');
    if (threaded) {
      if (typeof SharedArrayBuffer === 'undefined' || typeof Worker === 'undefined') {
        throw new Error('attnlab-threads.wasm could not be started: it needs SharedArrayBuffer and Worker (a cross-origin isolated page)');
      }
      memory = new WebAssembly.Memory({ ...SHARED_PAGES, shared: true });
    }
    const imports = hostImports(() => memory, () => { views = null; });
    if (!threaded) delete imports.env.memory;
    let instance;
    try {
      instance = await WebAssembly.instantiate(compiled, imports);
    } catch (e) {
      throw new Error(`attnlab.wasm could not be started: ${e.message} (the page needs WebAssembly with SIMD)`);
    }
    const ex = instance.exports;
    if (!threaded) memory = ex.memory;
    if (typeof ex._initialize === 'function') ex._initialize();
    let threads = 1;
    if (threaded) {
      const block = ex.al_wasm_thread_block();
      if (!block) throw new Error('attnlab.wasm could not be started: no memory for its thread-local storage');
      ex.al_wasm_thread_init_tls(block);
      threads = options.threads ?? 2;
      if (!Number.isSafeInteger(threads) || threads < 1) throw new Error(`threads must be a whole number from 1 (got ${threads})`);
      await startThreads(ex, compiled, memory, threads, options.threadScript || threadScript());
    }

    const module = {
      threads, // the threads its GEMMs are split over (1 for gen/attnlab.wasm)
      get HEAPU8() { return heap().u8; },
      get HEAP32() { return heap().i32; },
      get HEAPF32() { return heap().f32; },
      get HEAPF64() { return heap().f64; },
      // The NUL-terminated C string at ptr (at most maxBytes long), as UTF-8.
      UTF8ToString(ptr, maxBytes = Infinity) {
        const u8 = heap().u8;
        let end = ptr;
        while (end - ptr < maxBytes && u8[end] !== 0) end++;
        return decoder.decode(u8.slice(ptr, end)); // a copy: TextDecoder refuses a shared view
      },
    };
    for (const [name, value] of Object.entries(ex)) {
      if (typeof value === 'function') module[`_${name}`] = value;
    }
    return module;
  }

export { createAttnLabModule, hostImports };
