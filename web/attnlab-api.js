// attnlab-api.js — the thin JavaScript binding of the AttnLab core compiled to WebAssembly.
// One method per C entry point; arguments are checked here because the raw exports check
// neither count nor type. Heap views are re-read after every call into C (memory growth
// replaces them) and results are copied out; every malloc is freed in a finally block.
// No maths here: every number comes from the core.
// Works as a classic browser script (defines globalThis.AttnLab) and as a Node module.
(function (root) {
  'use strict';

  const STATUS_NOMEM = 4;
  const CHECK_NAMES = ['shapes', 'repeat_kv', 'rope_norm', 'rope_relative', 'mask_zero', 'rows_sum', 'cache_diff'];

  class AttnLabError extends Error {
    constructor(message, status) {
      super(message);
      this.name = 'AttnLabError';
      this.status = status;
    }
  }

  function checkInt(name, value, min, max) {
    if (!Number.isSafeInteger(value) || value < min || value > max) {
      throw new AttnLabError(`${name} must be a whole number between ${min} and ${max} (got ${value})`, 1);
    }
  }
  function checkNumber(name, value) {
    if (typeof value !== 'number' || !Number.isFinite(value)) {
      throw new AttnLabError(`${name} must be a finite number (got ${value})`, 1);
    }
  }
  function checkFloats(name, value, length) {
    if (!(value instanceof Float32Array) && !Array.isArray(value)) {
      throw new AttnLabError(`${name} must be a Float32Array or an array`, 1);
    }
    if (value.length !== length) throw new AttnLabError(`${name} must hold ${length} numbers (got ${value.length})`, 1);
  }

  class Core {
    constructor(module) {
      this.m = module;
      this.layout = {
        config: this.structLayout(0, 10),
        check: this.structLayout(1, 5),
        error: this.structLayout(2, 3),
        forwardOptions: this.structLayout(3, 5),
        forwardSummary: this.structLayout(4, 14),
        benchConfig: this.structLayout(5, 10),
        benchResult: this.structLayout(6, 5),
      };
    }

    // --- memory helpers --------------------------------------------------------------------
    alloc(bytes) {
      const p = this.m._malloc(Math.max(8, bytes));
      if (!p) throw new AttnLabError(`out of memory (${bytes} bytes)`, STATUS_NOMEM);
      return p;
    }
    // Runs fn with n fresh allocations, freeing them whatever happens.
    withAllocs(sizes, fn) {
      const ptrs = [];
      try {
        for (const size of sizes) ptrs.push(this.alloc(size));
        return fn(...ptrs);
      } finally {
        for (const p of ptrs) this.m._free(p);
      }
    }
    floatsFrom(ptr, count) { return this.m.HEAPF32.slice(ptr >> 2, (ptr >> 2) + count); }
    floatsTo(ptr, values) { this.m.HEAPF32.set(values, ptr >> 2); }
    statusText(status) { return this.m.UTF8ToString(this.m._al_status_str(status)); }
    throwIf(status, errPtr) {
      if (status === 0) return;
      const msg = errPtr ? this.m.UTF8ToString(errPtr + this.layout.error[1]) : '';
      throw new AttnLabError(msg || this.statusText(status), status);
    }

    // --- diagnostics: bytes currently allocated on the wasm heap and the heap's size, for
    // leak checks. emmalloc's mallinfo counts in uordblks every allocated region whole and the
    // 8-byte header of every free region (ordblks + smblks of them); both are taken out, and
    // so is this probe's own region (64 bytes + its header).
    heapStats() {
      const REGION_HEADER = 8;
      return this.withAllocs([64], (p) => {
        this.m._mallinfo(p);
        const i = p >> 2, h = this.m.HEAP32;
        const freeRegions = h[i + 1] + h[i + 2];
        return { inUse: h[i + 7] - REGION_HEADER * freeRegions - (64 + REGION_HEADER), heapBytes: this.m.HEAPU8.length };
      });
    }

    // --- al_struct_layout ------------------------------------------------------------------
    structLayout(which, count) {
      return this.withAllocs([4 * count], (p) => {
        const n = this.m._al_struct_layout(which, p, count);
        if (n !== count) throw new AttnLabError(`struct layout ${which}: ${n} values, expected ${count}`, 1);
        return Array.from(this.m.HEAP32.slice(p >> 2, (p >> 2) + count));
      });
    }

    // --- al_demo_run -----------------------------------------------------------------------
    demo(which, lang, seed = -1) {
      const demo = { basic: 0, attention: 1 }[which];
      const language = { zh: 0, en: 1 }[lang];
      if (demo === undefined) throw new AttnLabError(`unknown demo '${which}'`, 1);
      if (language === undefined) throw new AttnLabError(`unknown language '${lang}'`, 1);
      checkInt('seed', seed, -1, 2 ** 32 - 1);
      return this.withAllocs([this.layout.error[2]], (err) => {
        const len = Number(this.m._al_demo_run(demo, language, BigInt(seed), 0, 0, err));
        if (!len) this.throwIf(this.m.HEAP32[err >> 2] || 1, err);
        return this.withAllocs([len + 1], (buf) => {
          this.m._al_demo_run(demo, language, BigInt(seed), buf, len + 1, err);
          return this.m.UTF8ToString(buf, len);
        });
      });
    }

    // --- al_kv_cache_bytes_for -------------------------------------------------------------
    kvCacheBytes(batch, len, kvHeads, headDim) {
      for (const [k, v] of Object.entries({ batch, len, kvHeads, headDim })) checkInt(k, v, 0, 2 ** 31);
      return Number(this.m._al_kv_cache_bytes_for(BigInt(batch), BigInt(len), BigInt(kvHeads), BigInt(headDim)));
    }

    // --- RoPE views: al_rope_angles / al_rope_angles_wrapped ------------------------------
    ropeAngles(end, headDim, base, wrapped = false) {
      checkInt('positions', end, 1, 65536);
      checkInt('head_dim', headDim, 2, 1024);
      checkNumber('rope base', base);
      const n = end * (headDim / 2);
      return this.withAllocs([4 * n], (p) => {
        const f = wrapped ? this.m._al_rope_angles_wrapped : this.m._al_rope_angles;
        this.throwIf(f(p, BigInt(end), BigInt(headDim), base), 0);
        return this.floatsFrom(p, n);
      });
    }

    // --- al_rope_pair_trace ----------------------------------------------------------------
    ropePairTrace(x, pair, end, headDim, base) {
      checkInt('head_dim', headDim, 2, 1024);
      checkFloats('x', x, headDim);
      checkInt('pair', pair, 0, headDim / 2 - 1);
      checkInt('positions', end, 1, 65536);
      checkNumber('rope base', base);
      return this.withAllocs([4 * headDim, 8 * end], (px, out) => {
        this.floatsTo(px, x);
        this.throwIf(this.m._al_rope_pair_trace(out, px, BigInt(pair), BigInt(end), BigInt(headDim), base), 0);
        return this.floatsFrom(out, 2 * end);
      });
    }

    // --- al_rope_relative_dots -------------------------------------------------------------
    ropeRelativeDots(v, m, n, headDim, base) {
      checkInt('head_dim', headDim, 2, 1024);
      checkFloats('v', v, headDim);
      checkInt('m', m, 0, 65536);
      checkInt('n', n, 1, 65536);
      checkNumber('rope base', base);
      return this.withAllocs([4 * headDim, 4 * n], (pv, out) => {
        this.floatsTo(pv, v);
        this.throwIf(this.m._al_rope_relative_dots(out, pv, BigInt(m), BigInt(n), BigInt(headDim), base), 0);
        return this.floatsFrom(out, n);
      });
    }

    // --- al_gqa_map: the KV head each query head reads ------------------------------------
    gqaMap(heads, kvHeads) {
      checkInt('heads', heads, 1, 256);
      checkInt('kv heads', kvHeads, 1, 256);
      return this.withAllocs([4 * heads], (p) => {
        this.throwIf(this.m._al_gqa_map(p, BigInt(heads), BigInt(kvHeads)), 0);
        return Array.from(this.m.HEAP32.slice(p >> 2, (p >> 2) + heads));
      });
    }

    // --- al_gqa_kv_choices: the KV head counts GQA allows ---------------------------------
    kvChoices(heads) {
      checkInt('heads', heads, 1, 256);
      return this.withAllocs([4 * 256], (p) => {
        const n = this.m._al_gqa_kv_choices(p, 256, BigInt(heads));
        return Array.from(this.m.HEAP32.slice(p >> 2, (p >> 2) + n));
      });
    }

    // --- al_forward_safetensors: a layer from weights bytes run on input bytes -----------
    // Returns {bytes: Uint8Array (a safetensors file), summary}.
    forward(weightsBytes, inputBytes, options = {}) {
      if (!(weightsBytes instanceof Uint8Array) || !(inputBytes instanceof Uint8Array)) {
        throw new AttnLabError('weights and input must be Uint8Arrays', 1);
      }
      const layer = options.layer ?? -1, prefill = options.prefill ?? 0;
      checkInt('layer', layer, -1, 100000);
      checkInt('prefill', prefill, 0, 65536);
      for (const k of ['ropeBase', 'eps']) if (options[k] !== undefined) checkNumber(k, options[k]);
      const O = this.layout.forwardOptions, Y = this.layout.forwardSummary;
      return this.withAllocs([weightsBytes.length, inputBytes.length, O[4], Y[13], 4, this.layout.error[2]],
        (pw, pi, po, ps, pout, err) => {
          this.m.HEAPU8.set(weightsBytes, pw);
          this.m.HEAPU8.set(inputBytes, pi);
          let view = new DataView(this.m.HEAPU8.buffer);
          view.setBigInt64(po + O[0], BigInt(layer), true);
          view.setFloat64(po + O[1], options.ropeBase ?? NaN, true);
          view.setFloat64(po + O[2], options.eps ?? NaN, true);
          view.setBigInt64(po + O[3], BigInt(prefill), true);
          view.setInt32(pout, 0, true);
          const status = this.m._al_forward_safetensors(pw, weightsBytes.length, pi, inputBytes.length, po, pout, ps, err);
          this.throwIf(status, err);
          view = new DataView(this.m.HEAPU8.buffer); // the call may have grown memory
          const result = view.getInt32(pout, true);
          try {
            const i64 = (k) => Number(view.getBigInt64(ps + Y[k], true));
            const summary = {
              hidden: i64(0), heads: i64(1), kvHeads: i64(2), headDim: i64(3),
              ropeBase: view.getFloat64(ps + Y[4], true), eps: view.getFloat64(ps + Y[5], true),
              qkNorm: view.getInt32(ps + Y[6], true) !== 0, batch: i64(8), seq: i64(9), prefill: i64(10),
              maxDiff: view.getFloat64(ps + Y[11], true), bytes: i64(12),
            };
            return { bytes: this.m.HEAPU8.slice(result, result + summary.bytes), summary };
          } finally {
            this.m._al_buffer_free(result);
          }
        });
    }

    // --- al_bench_run: the core timed inside WebAssembly ----------------------------------
    bench(cfg) {
      const L = this.layout.benchConfig, R = this.layout.benchResult;
      const fields = ['hidden', 'heads', 'kvHeads', 'headDim', 'ropeBase', 'seq', 'decodeAt', 'repeats', 'seed'];
      const c = { ropeBase: 10000, seq: 0, decodeAt: 0, repeats: 5, seed: 0, ...cfg };
      for (const f of fields) if (f === 'ropeBase') checkNumber(f, c[f]); else checkInt(f, c[f], 0, 2 ** 31);
      return this.withAllocs([L[9], R[4], this.layout.error[2]], (pc, pr, err) => {
        let view = new DataView(this.m.HEAPU8.buffer);
        fields.forEach((f, i) => (f === 'ropeBase' ? view.setFloat64(pc + L[i], c[f], true) : view.setBigInt64(pc + L[i], BigInt(c[f]), true)));
        this.throwIf(this.m._al_bench_run(pc, pr, err), err);
        view = new DataView(this.m.HEAPU8.buffer);
        return {
          prefillMs: view.getFloat64(pr + R[0], true), decodeMs: view.getFloat64(pr + R[1], true),
          prefillGflops: view.getFloat64(pr + R[2], true), decodeRecomputeMs: view.getFloat64(pr + R[3], true),
        };
      });
    }

    // --- al_session_create -----------------------------------------------------------------
    createSession(cfg) {
      const fields = ['hidden', 'heads', 'kvHeads', 'headDim', 'ropeBase', 'qkNorm', 'seed', 'promptLen', 'decodeSteps'];
      for (const f of fields) if (!(f in cfg)) throw new AttnLabError(`session config lacks ${f}`, 1);
      checkNumber('rope base', cfg.ropeBase);
      for (const f of ['hidden', 'heads', 'kvHeads', 'headDim', 'seed', 'promptLen', 'decodeSteps']) {
        checkInt(f, cfg[f], 0, 2 ** 32 - 1);
      }
      const L = this.layout.config;
      return this.withAllocs([L[9], 4, this.layout.error[2]], (pc, pout, err) => {
        const heap = new DataView(this.m.HEAPU8.buffer);
        const i64 = (off, v) => heap.setBigInt64(pc + off, BigInt(v), true);
        i64(L[0], cfg.hidden); i64(L[1], cfg.heads); i64(L[2], cfg.kvHeads); i64(L[3], cfg.headDim);
        heap.setFloat64(pc + L[4], cfg.ropeBase, true);
        heap.setInt32(pc + L[5], cfg.qkNorm ? 1 : 0, true);
        i64(L[6], cfg.seed); i64(L[7], cfg.promptLen); i64(L[8], cfg.decodeSteps);
        this.throwIf(this.m._al_session_create(pc, pout, err), err);
        return new Session(this, this.m.HEAP32[pout >> 2], cfg);
      });
    }
  }

  class Session {
    constructor(core, ptr, cfg) {
      this.core = core;
      this.ptr = ptr;
      this.cfg = { ...cfg };
    }
    live() {
      if (!this.ptr) throw new AttnLabError('session already freed', 1);
      return this.ptr;
    }
    // al_session_free
    free() {
      if (this.ptr) this.core.m._al_session_free(this.ptr);
      this.ptr = 0;
    }
    // al_session_prefill / al_session_step
    prefill() { this.callWithError(this.core.m._al_session_prefill); }
    step() { this.callWithError(this.core.m._al_session_step); }
    callWithError(fn) {
      const c = this.core;
      c.withAllocs([c.layout.error[2]], (err) => c.throwIf(fn(this.live(), err), err));
    }
    // al_session_reset
    reset() { this.core.m._al_session_reset(this.live()); }
    // al_session_len / al_session_total
    get length() { return Number(this.core.m._al_session_len(this.live())); }
    get total() { return Number(this.core.m._al_session_total(this.live())); }
    // al_session_outputs
    outputs() {
      const n = this.length * this.cfg.hidden;
      return this.core.withAllocs([4 * n], (p) => {
        this.core.throwIf(this.core.m._al_session_outputs(this.live(), p, BigInt(n)), 0);
        return this.core.floatsFrom(p, n);
      });
    }
    // al_session_weights: [len, len] for one head
    weights(head) {
      checkInt('head', head, 0, this.cfg.heads - 1);
      const n = this.length;
      return this.core.withAllocs([4 * n * n], (p) => {
        this.core.throwIf(this.core.m._al_session_weights(this.live(), BigInt(head), p, BigInt(n * n)), 0);
        return this.core.floatsFrom(p, n * n);
      });
    }
    // al_session_mask: [len, len] of 0 / -inf
    mask() {
      const n = this.length;
      return this.core.withAllocs([4 * n * n], (p) => {
        this.core.throwIf(this.core.m._al_session_mask(this.live(), p, BigInt(n * n)), 0);
        return this.core.floatsFrom(p, n * n);
      });
    }
    // al_session_verify: [{name, value, threshold, passed}]
    verify() {
      const c = this.core, L = c.layout.check, count = CHECK_NAMES.length;
      return c.withAllocs([L[4] * count, c.layout.error[2]], (p, err) => {
        c.throwIf(c.m._al_session_verify(this.live(), p, err), err);
        const view = new DataView(c.m.HEAPU8.buffer);
        return CHECK_NAMES.map((name, i) => ({
          name,
          value: view.getFloat64(p + i * L[4] + L[1], true),
          threshold: view.getFloat64(p + i * L[4] + L[2], true),
          passed: view.getInt32(p + i * L[4] + L[3], true) !== 0,
        }));
      });
    }
    // al_attn_flops on this session's layer
    flops(nQuery, nKeys) {
      checkInt('n_query', nQuery, 0, 2 ** 31);
      checkInt('n_keys', nKeys, 0, 2 ** 31);
      const cfg = this.core.m._al_session_attn_config(this.live());
      return Number(this.core.m._al_attn_flops(cfg, BigInt(nQuery), BigInt(nKeys)));
    }
  }

  // Loads the module: in a browser from the script-provided factory, in Node with the wasm
  // bytes passed in: the page fetches them (or decodes them from the single-file page).
  async function load(options = {}) {
    const factory = options.factory || root.createAttnLabModule;
    if (typeof factory !== 'function') throw new AttnLabError('wasm-loader.js is not loaded', 1);
    const module = await factory(options.wasmBinary ? { wasmBinary: options.wasmBinary } : {});
    return new Core(module);
  }

  const api = { load, AttnLabError, CHECK_NAMES };
  if (typeof module === 'object' && module.exports) module.exports = api;
  else root.AttnLab = api;
})(typeof globalThis !== 'undefined' ? globalThis : this);
