// attnlab-api.js — the thin JavaScript binding of the AttnLab core compiled to WebAssembly.
// One method per C entry point. Heap views are re-read after every call into C (memory growth
// replaces them) and results are copied out; every malloc is freed in a finally block.
// Struct offsets, enum values, limits, the entry points and the shapes of the arrays they fill
// are never written here: they come from the module itself (al_abi_json, generated from the
// ABI list abi_list.h). C is called only through this.fn, made from that list at load: each
// wrapper checks its argument count and kinds and passes an int64_t as a BigInt and a pointer
// or int32 as a Number, so a signature changed in C (and in its row, or the build fails) is
// followed here, and a function the list does not name cannot be called. A struct is filled
// only when every one of its fields is given, so a field added or moved in C cannot be misread.
// Every array a call fills is sized one way (Core.array, from its shape in the list), and a
// refusal carries the core's own message (al_error), never one made here.
// No maths here: every number comes from the core.
// An ES module, for the page, its workers and the Node tests alike.
import { createAttnLabModule } from './wasm-loader.js';

  class AttnLabError extends Error {
    constructor(message, status) {
      super(message);
      this.name = 'AttnLabError';
      this.status = status;
    }
  }
  const ARG_ERROR = -1; // an argument refused here, before any call into C

  function checkInt(name, value, min, max) {
    if (!Number.isSafeInteger(value) || value < min || value > max) {
      throw new AttnLabError(`${name} must be a whole number between ${min} and ${max} (got ${value})`, ARG_ERROR);
    }
  }
  function checkNumber(name, value) {
    if (typeof value !== 'number' || !Number.isFinite(value)) {
      throw new AttnLabError(`${name} must be a finite number (got ${value})`, ARG_ERROR);
    }
  }
  function checkFloats(name, value, length) {
    if (!(value instanceof Float32Array) && !Array.isArray(value)) {
      throw new AttnLabError(`${name} must be a Float32Array or an array`, ARG_ERROR);
    }
    if (value.length !== length) throw new AttnLabError(`${name} must hold ${length} numbers (got ${value.length})`, ARG_ERROR);
  }

  // The one row read before the list itself: al_abi_json(char *buf, int64_t cap).
  const ABI_JSON = { result: ['i64', 'int64_t'], args: [['buf', 'ptr', 'char *'], ['cap', 'i64', 'int64_t']] };

  // A JS value as the wasm parameter of kind `kind` (name: the function and parameter, for the
  // message): int64_t as a BigInt, pointers, sizes and int32 as Numbers, floats as Numbers.
  function toWasm(name, kind, v) {
    if (kind === 'f32' || kind === 'f64') {
      if (typeof v !== 'number') throw new AttnLabError(`${name} must be a number (got ${typeof v})`, ARG_ERROR);
      return v;
    }
    if (!Number.isSafeInteger(v)) throw new AttnLabError(`${name} must be a whole number (got ${v})`, ARG_ERROR);
    return kind === 'i64' ? BigInt(v) : v;
  }

  // The wrapper of export `name` from its row f of the ABI list; refuses at load a module that
  // lacks it or whose export takes another number of parameters.
  function bindFunction(module, name, f) {
    const raw = module[`_${name}`];
    if (typeof raw !== 'function') throw new AttnLabError(`attnlab.wasm does not export ${name}, which its ABI list names`, ARG_ERROR);
    if (raw.length !== f.args.length) {
      throw new AttnLabError(`attnlab.wasm's ${name} takes ${raw.length} parameters, its ABI list ${f.args.length}`, ARG_ERROR);
    }
    const names = f.args.map(([param]) => `${name}: ${param}`);
    const kinds = f.args.map(([, kind]) => kind);
    const i64 = f.result[0] === 'i64';
    return (...args) => {
      if (args.length !== kinds.length) {
        throw new AttnLabError(`${name} takes ${kinds.length} arguments (${f.args.map(([p]) => p).join(', ')}), given ${args.length}`, ARG_ERROR);
      }
      const r = raw(...args.map((v, i) => toWasm(names[i], kinds[i], v)));
      return i64 ? Number(r) : r;
    };
  }

  // The names of an enum's values in order of value: {a: 0, b: 1} -> ['a', 'b'].
  const enumNames = (e) => Object.entries(e).sort((x, y) => x[1] - y[1]).map(([k]) => k);

  class Core {
    constructor(module) {
      this.m = module;
      this.threads = module.threads || 1; // the threads the module was started with (wasm-loader.js)
      this.fn = { al_abi_json: bindFunction(module, 'al_abi_json', ABI_JSON) };
      this.abi = this.readAbi();
      this.fn = {};
      for (const [name, f] of Object.entries(this.abi.functions)) this.fn[name] = bindFunction(module, name, f);
      const { structs, enums, limits } = this.abi;
      for (const name of ['error', 'attn_hparams', 'session_config', 'check', 'attn_files_options', 'attn_files_summary',
        'bench_config', 'bench_result', 'kv_growth_row', 'demo_section', 'model_hparams', 'sampler_params']) {
        if (!structs[name]) throw new AttnLabError(`attnlab.wasm does not describe struct ${name}`, ARG_ERROR);
      }
      this.status = enums.status;
      // The core's defaults: the seeds' layer (rope base, eps), MiniMind's sampler, the bench's
      // settings (al_bench_config's fields: nothing timed, the runs of each).
      this.layerDefaults = this.filled('attn_hparams', this.fn.al_attn_hparams_fill_default);
      this.samplerDefaults = this.filled('sampler_params', this.fn.al_sampler_params_fill_default);
      this.benchDefaults = this.filled('bench_config', this.fn.al_bench_config_default);
      this.limits = limits;
      this.checkNames = enumNames(enums.check).filter((n) => n !== 'count');
      this.panelNames = enumNames(enums.demo_panel);
    }

    // --- al_abi_json: every struct layout, enum value and limit, from the module ----------
    readAbi() {
      const len = this.fn.al_abi_json(0, 0);
      if (!(len > 0)) throw new AttnLabError('attnlab.wasm could not describe its structs', ARG_ERROR);
      return this.withAllocs([len + 1], (p) => {
        this.fn.al_abi_json(p, len + 1);
        return JSON.parse(this.m.UTF8ToString(p));
      });
    }

    // --- memory helpers --------------------------------------------------------------------
    alloc(bytes) {
      const p = this.m._malloc(Math.max(8, bytes));
      if (!p) throw new AttnLabError(`out of memory (${bytes} bytes)`, this.status ? this.status.nomem : ARG_ERROR);
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
    sizeOf(struct) { return this.abi.structs[struct].size; }
    // The struct fill(ptr) writes, read back.
    filled(struct, fill) {
      return this.withAllocs([this.sizeOf(struct)], (p) => { fill(p); return this.readStruct(p, struct); });
    }
    // The element count of the array function `name` writes through `param`, from its shape in
    // the ABI list. env: values by name (the call's arguments, the handle's hyper-parameters);
    // a dim is a number, a limit, one of those, a listed function called with its arguments
    // taken from env by name (a buffer NULL and a capacity 0 when env has none: a size query),
    // or `result`, what sizeQuery() returns (the call itself asked for its size).
    countOf(name, param, env, sizeQuery) {
      const dims = this.abi.shapes[`${name} ${param}`];
      if (dims === undefined) throw new AttnLabError(`the ABI list gives no shape for ${name} ${param}`, ARG_ERROR);
      let n = 1;
      for (const d of dims.split(' ')) {
        let v;
        if (/^\d+$/.test(d)) v = Number(d);
        else if (d === 'result') v = sizeQuery();
        else if (d in env) v = env[d];
        else if (d in this.limits) v = this.limits[d];
        else if (d in this.fn) v = this.fn[d](...this.abi.functions[d].args.map(([p]) => (p in env ? env[p] : 0)));
        else throw new AttnLabError(`${name} ${param}: unknown dim ${d}`, ARG_ERROR);
        if (!(v >= 0)) return v; // a refused size query: the caller reports it
        n *= v;
      }
      return n;
    }
    // The one way to get an array a C function fills: `name` writes it through parameter
    // `param`; args gives the call's other parameters by their C names (the buffer, `cap` and
    // `err` are filled in here). Its element count is the function's shape in the ABI list
    // (countOf, each dim named by env or args; a `result` dim asks the function itself, its
    // buffer NULL and cap 0). type: 'f32', 'i32', 'u8', 'char' (bytes with room for a NUL) or a
    // struct's name (an array of objects). A status other than AL_OK, a negative count or a
    // size refused throws the core's own message: a refused size calls the function with no
    // room, so that it says what it refuses.
    array(name, param, args, type, env = {}) {
      const f = this.abi.functions[name];
      if (!f) throw new AttnLabError(`the ABI list does not name ${name}`, ARG_ERROR);
      const call = (ptr, cap, err) => {
        const r = this.fn[name](...f.args.map(([p]) => {
          if (p === param) return ptr;
          if (p === 'cap') return cap;
          if (p === 'err') return err;
          if (!(p in args)) throw new AttnLabError(`${name}: ${p} is not given`, ARG_ERROR);
          return args[p];
        }));
        if (f.result[1] === 'al_status') this.throwIf(r, err);
        else if (r < 0) this.throwIf(this.readStruct(err, 'error').status || this.status.arg, err);
        return r;
      };
      const bytes = type === 'f32' || type === 'i32' ? 4 : type === 'u8' || type === 'char' ? 1 : this.sizeOf(type);
      const room = type === 'char' ? 1 : 0;
      return this.withError((err) => {
        const count = this.countOf(name, param, { ...env, ...args }, () => call(0, 0, err));
        return this.withAllocs([bytes * (Math.max(0, count) + room)], (p) => {
          if (count < 0) {
            call(p, 0, err);
            throw new AttnLabError(`${name}: no size for these arguments`, this.status.arg);
          }
          call(p, count + room, err);
          if (type === 'f32') return this.floatsFrom(p, count);
          if (type === 'i32') return this.m.HEAP32.slice(p >> 2, (p >> 2) + count);
          if (type === 'u8' || type === 'char') return this.m.HEAPU8.slice(p, p + count);
          return Array.from({ length: count }, (_, i) => this.readStruct(p + i * bytes, type));
        });
      });
    }
    // Fills the C struct `struct` at ptr from values keyed by C field name ("hp.hidden", ...).
    // Every field must be given, and nothing else.
    writeStruct(ptr, struct, values) {
      const { fields } = this.abi.structs[struct];
      for (const key of Object.keys(values)) {
        if (!(key in fields)) throw new AttnLabError(`${struct} has no field ${key}`, ARG_ERROR);
      }
      const view = new DataView(this.m.HEAPU8.buffer);
      for (const [name, [offset, type]] of Object.entries(fields)) {
        if (!(name in values)) throw new AttnLabError(`${struct}.${name} is not given`, ARG_ERROR);
        const v = values[name];
        if (type === 'i64') view.setBigInt64(ptr + offset, BigInt(v), true);
        else if (type === 'i32') view.setInt32(ptr + offset, v, true);
        else if (type === 'f64') view.setFloat64(ptr + offset, v, true);
        else if (type === 'f32') view.setFloat32(ptr + offset, v, true);
        else throw new AttnLabError(`${struct}.${name}: cannot write a ${type}`, ARG_ERROR);
      }
    }
    // Reads the C struct at ptr into an object keyed by C field name.
    readStruct(ptr, struct) {
      const view = new DataView(this.m.HEAPU8.buffer);
      const out = {};
      for (const [name, [offset, type, size]] of Object.entries(this.abi.structs[struct].fields)) {
        if (type === 'i64') out[name] = Number(view.getBigInt64(ptr + offset, true));
        else if (type === 'i32') out[name] = view.getInt32(ptr + offset, true);
        else if (type === 'f64') out[name] = view.getFloat64(ptr + offset, true);
        else if (type === 'f32') out[name] = view.getFloat32(ptr + offset, true);
        else if (type === 'char') out[name] = this.m.UTF8ToString(ptr + offset, size);
      }
      return out;
    }
    floatsFrom(ptr, count) { return this.m.HEAPF32.slice(ptr >> 2, (ptr >> 2) + count); }
    floatsTo(ptr, values) { this.m.HEAPF32.set(values, ptr >> 2); }
    statusText(status) { return this.m.UTF8ToString(this.fn.al_status_str(status)); }
    // Throws the core's own message (from the al_error at errPtr) when status is not AL_OK.
    throwIf(status, errPtr) {
      if (status === this.status.ok) return;
      const msg = errPtr ? this.readStruct(errPtr, 'error').msg : '';
      throw new AttnLabError(msg || this.statusText(status), status);
    }
    // Calls fn(errPtr) with a fresh al_error and throws its message if the call failed.
    withError(fn) {
      const size = this.sizeOf('error');
      return this.withAllocs([size], (err) => {
        this.m.HEAPU8.fill(0, err, err + size); // AL_OK and an empty message
        return fn(err);
      });
    }

    // --- diagnostics: bytes currently allocated on the wasm heap (al_heap_in_use) and the
    // heap's size, for leak checks
    heapStats() { return { inUse: this.fn.al_heap_in_use(), heapBytes: this.m.HEAPU8.length }; }

    // --- al_demo_run -----------------------------------------------------------------------
    demo(which, lang, seed = -1) {
      const demo = this.abi.enums.demo[which];
      const language = this.abi.enums.lang[lang];
      if (demo === undefined) throw new AttnLabError(`unknown demo '${which}'`, ARG_ERROR);
      if (language === undefined) throw new AttnLabError(`unknown language '${lang}'`, ARG_ERROR);
      checkInt('seed', seed, -1, 2 ** 32 - 1);
      return new TextDecoder().decode(this.array('al_demo_run', 'buf', { demo, lang: language, seed }, 'char'));
    }

    // --- al_demo_section_count: how many sections demoSections gives --------------------
    demoSectionCount(which) {
      const demo = this.abi.enums.demo[which];
      if (demo === undefined) throw new AttnLabError(`unknown demo '${which}'`, ARG_ERROR);
      const count = this.fn.al_demo_section_count(demo);
      if (count < 1) throw new AttnLabError(`demo '${which}' has no sections`, this.status.arg);
      return count;
    }

    // --- al_demo_sections: the demo as sections, for the walkthrough ----------------------
    // Returns [{panel, title, code, numbers, printed}], one per example and the closing banner
    // (panel 'none'); the printed texts, in order, make up what demo() returns.
    demoSections(which, lang, seed = -1) {
      const count = this.demoSectionCount(which);
      const demo = this.abi.enums.demo[which];
      const language = this.abi.enums.lang[lang];
      if (language === undefined) throw new AttnLabError(`unknown language '${lang}'`, ARG_ERROR);
      checkInt('seed', seed, -1, 2 ** 32 - 1);
      return this.withError((err) => {
        const call = (sections, max, text, cap) => {
          const len = this.fn.al_demo_sections(demo, language, seed, sections, max, text, cap, err);
          if (len < 0) this.throwIf(this.readStruct(err, 'error').status || this.status.arg, err);
          return len;
        };
        const len = call(0, 0, 0, 0);
        const size = this.sizeOf('demo_section');
        return this.withAllocs([size * count, len + 1], (ps, pt) => {
          call(ps, count, pt, len + 1);
          const slice = (offset, bytes) => this.m.UTF8ToString(pt + offset, bytes);
          return Array.from({ length: count }, (_, i) => {
            const s = this.readStruct(ps + i * size, 'demo_section');
            return {
              panel: this.panelNames[s.panel], title: slice(s.title, s.title_len), code: slice(s.code, s.code_len),
              numbers: slice(s.numbers, s.numbers_len), printed: slice(s.start, s.len),
            };
          });
        });
      });
    }

    // --- the numbers the charts of chapters 04, 05 and 10 draw, for a seed (demos.h), each from
    // the run that prints them; rows cut from the one array the core fills, named as there.
    // al_demo_ffn_curves: {x, silu, relu} at n points of [-3, 3]
    demoFfnCurves(n) {
      checkInt('points', n, 2, this.limits.AL_DEMO_CURVE_MAX);
      const out = this.array('al_demo_ffn_curves', 'out', { n }, 'f32');
      return { x: out.slice(0, n), silu: out.slice(n, 2 * n), relu: out.slice(2 * n) };
    }
    // Runs `name` (a chart's function of demos.h) for seed: its rows, each `width` long.
    demoRows(name, seed, names) {
      checkInt('seed', seed, -1, 2 ** 32 - 1);
      const out = this.array(name, 'out', { seed }, 'f32');
      const width = out.length / names.length;
      return Object.fromEntries(names.map((row, i) => [row, out.slice(i * width, (i + 1) * width)]));
    }
    // al_demo_router: {scores, chosen, weights} [tokens, experts] and the sizes
    demoRouter(seed) {
      return { ...this.demoRows('al_demo_router', seed, ['scores', 'chosen', 'weights']),
        tokens: this.limits.AL_DEMO_MOE_TOKENS, experts: this.limits.AL_DEMO_MOE_EXPERTS, topK: this.limits.AL_DEMO_MOE_TOP_K };
    }
    // al_demo_expert_load: {load, prob, ideal, aux} [experts] (aux: the loss in every column)
    demoExpertLoad(seed) { return this.demoRows('al_demo_expert_load', seed, ['load', 'prob', 'ideal', 'aux']); }
    // al_demo_block_stream: {pre, post} [depth + 1]
    demoBlockStream(seed) { return this.demoRows('al_demo_block_stream', seed, ['pre', 'post']); }
    // al_demo_shifted_labels: {ids, labels, targets, nll, loss} [positions] (-100: none)
    demoShiftedLabels(seed) { return this.demoRows('al_demo_shifted_labels', seed, ['ids', 'labels', 'targets', 'nll', 'loss']); }
    // al_demo_sampler_stages: example 1, 3, 4 or 5's {stages [AL_SAMPLER_STAGES * vocab] (the
    // model view's next-token chart's layout), logits, penalised (logits), order, cumulative,
    // marks} [vocab]
    demoSamplerStages(seed, example) {
      checkInt('seed', seed, -1, 2 ** 32 - 1);
      checkInt('example', example, 1, 5);
      const V = this.limits.AL_DEMO_GEN_VOCAB, S = this.limits.AL_SAMPLER_STAGES;
      const out = this.array('al_demo_sampler_stages', 'out', { seed, example }, 'f32');
      const row = (i) => out.slice(i * V, (i + 1) * V);
      return { stages: out.slice(0, S * V), logits: row(S), penalised: row(S + 1), order: row(S + 2), cumulative: row(S + 3), marks: row(S + 4), vocab: V };
    }
    // al_demo_temperatures: [{probs [vocab], temperature, top, entropy}], one per temperature
    demoTemperatures(seed) {
      const V = this.limits.AL_DEMO_GEN_VOCAB;
      checkInt('seed', seed, -1, 2 ** 32 - 1);
      const out = this.array('al_demo_temperatures', 'out', { seed }, 'f32');
      return Array.from({ length: this.limits.AL_DEMO_GEN_TEMPS }, (_, k) => {
        const row = out.subarray(k * 4 * V, (k + 1) * 4 * V);
        return { probs: row.slice(0, V), temperature: row[V], top: row[2 * V], entropy: row[3 * V] };
      });
    }
    // al_demo_draws: {probs, drawn} [draws * vocab] (drawn: 1 at each step's token) and the sizes
    demoDraws(seed) {
      return { ...this.demoRows('al_demo_draws', seed, ['probs', 'drawn']), draws: this.limits.AL_DEMO_GEN_DRAWS, vocab: this.limits.AL_DEMO_GEN_VOCAB };
    }
    // al_demo_eos: {tokens, finished} [batch * maxNew] (-1: a step not run) and the sizes
    demoEos(seed) {
      return { ...this.demoRows('al_demo_eos', seed, ['tokens', 'finished']), batch: this.limits.AL_DEMO_GEN_BATCH, maxNew: this.limits.AL_DEMO_GEN_MAX_NEW };
    }

    // --- al_kv_growth: the cache's bytes and each step's FLOPs over a prefill and decode steps
    // layer: {hidden, heads, kvHeads, headDim, ropeBase, eps}. Returns al_kv_growth_row's
    // [{len, bytes, bytes_mha, bytes_mqa, flops_cached, flops_uncached}], one row after the
    // prefill and one after each step.
    kvGrowth(layer, prompt, steps) {
      checkInt('hidden', layer.hidden, 1, this.limits.AL_MAX_HIDDEN);
      checkInt('heads', layer.heads, 1, this.limits.AL_MAX_HEADS);
      checkInt('kv heads', layer.kvHeads, 1, this.limits.AL_MAX_HEADS);
      checkInt('head_dim', layer.headDim, 2, this.limits.AL_MAX_HEAD_DIM);
      checkInt('prompt', prompt, 1, this.limits.AL_MAX_SEQ);
      checkInt('steps', steps, 0, this.limits.AL_MAX_SEQ);
      return this.withAllocs([this.sizeOf('attn_hparams')], (ph) => {
        this.writeStruct(ph, 'attn_hparams', {
          hidden: layer.hidden, n_heads: layer.heads, n_kv_heads: layer.kvHeads, head_dim: layer.headDim,
          rope_base: layer.ropeBase ?? this.layerDefaults.rope_base, eps: layer.eps ?? this.layerDefaults.eps, qk_norm: layer.qkNorm === false ? 0 : 1,
        });
        return this.array('al_kv_growth', 'rows', { hp: ph, prompt, steps }, 'kv_growth_row');
      });
    }

    // --- head roles: al_lab_role_threshold, al_lab_role_ideal -----------------------------
    roleThreshold() { return this.fn.al_lab_role_threshold(); }
    // A role's ideal pattern on BOS + `repeat` ids twice: {size, data [size, size]}
    roleIdeal(role, repeat = 4) {
      const r = this.abi.enums.lab_role[role];
      if (r === undefined || role === 'count') throw new AttnLabError(`unknown head role '${role}'`, ARG_ERROR);
      checkInt('repeat', repeat, 2, 64);
      const data = this.array('al_lab_role_ideal', 'out', { role: r, repeat }, 'f32');
      return { size: this.fn.al_lab_role_ideal_size(repeat), data };
    }

    // --- al_file_fingerprint: a file's CRC-32 ----------------------------------------------
    fingerprint(bytes) {
      if (!(bytes instanceof Uint8Array)) throw new AttnLabError('bytes must be a Uint8Array', ARG_ERROR);
      return this.withAllocs([bytes.length], (p) => {
        this.m.HEAPU8.set(bytes, p);
        return this.fn.al_file_fingerprint(p, bytes.length);
      });
    }

    // --- al_patch_recovered: a patching map as the share of the metric it recovers (1 the
    // clean run, 0 the corrupted one); {values, recovered} (recovered false: the two metrics
    // are equal, nothing to recover, values is the raw map)
    patchRecovered(map, clean, corrupt) {
      checkFloats('map', map, map.length);
      checkNumber('clean', clean);
      checkNumber('corrupt', corrupt);
      const n = map.length;
      return this.withAllocs([4 * n, 4 * n], (pm, po) => this.withError((err) => {
        this.floatsTo(pm, map);
        const r = this.fn.al_patch_recovered(pm, n, clean, corrupt, po, n, err);
        if (r < 0) this.throwIf(this.readStruct(err, 'error').status || this.status.arg, err);
        return { values: this.floatsFrom(po, n), recovered: r === 1 };
      }));
    }

    // --- al_kv_cache_bytes_for -------------------------------------------------------------
    kvCacheBytes(batch, len, kvHeads, headDim) {
      for (const [k, v] of Object.entries({ batch, len, kvHeads, headDim })) checkInt(k, v, 0, 2 ** 31);
      return this.fn.al_kv_cache_bytes_for(batch, len, kvHeads, headDim);
    }

    // --- RoPE views: al_rope_angles / al_rope_angles_wrapped ------------------------------
    ropeAngles(end, headDim, base, wrapped = false) {
      checkInt('positions', end, 1, this.limits.AL_MAX_SEQ);
      checkInt('head_dim', headDim, 2, this.limits.AL_MAX_HEAD_DIM);
      checkNumber('rope base', base);
      return this.array(wrapped ? 'al_rope_angles_wrapped' : 'al_rope_angles', 'angles', { end, head_dim: headDim, base }, 'f32');
    }

    // --- al_rope_pair_trace ----------------------------------------------------------------
    ropePairTrace(x, pair, end, headDim, base) {
      checkInt('head_dim', headDim, 2, this.limits.AL_MAX_HEAD_DIM);
      checkFloats('x', x, headDim);
      checkInt('pair', pair, 0, headDim / 2 - 1);
      checkInt('positions', end, 1, this.limits.AL_MAX_SEQ);
      checkNumber('rope base', base);
      return this.withAllocs([4 * headDim], (px) => {
        this.floatsTo(px, x);
        return this.array('al_rope_pair_trace', 'points', { x: px, pair, end, head_dim: headDim, base }, 'f32');
      });
    }

    // --- al_gqa_map: the KV head each query head reads ------------------------------------
    gqaMap(heads, kvHeads) {
      checkInt('heads', heads, 1, this.limits.AL_MAX_HEADS);
      checkInt('kv heads', kvHeads, 1, this.limits.AL_MAX_HEADS);
      return Array.from(this.array('al_gqa_map', 'kv_head', { n_heads: heads, n_kv_heads: kvHeads }, 'i32'));
    }

    // --- al_kv_sharing_of: 'mha' | 'gqa' | 'mqa' ('invalid' for counts GQA does not allow) -----
    kvSharing(heads, kvHeads) {
      checkInt('heads', heads, 0, Number.MAX_SAFE_INTEGER);
      checkInt('kv heads', kvHeads, 0, Number.MAX_SAFE_INTEGER);
      return enumNames(this.abi.enums.kv_sharing)[this.fn.al_kv_sharing_of(heads, kvHeads)];
    }
    // --- al_gqa_kv_nearest: the allowed KV head count nearest kvHeads ----------------------
    kvNearest(heads, kvHeads) {
      checkInt('heads', heads, 1, this.limits.AL_MAX_HEADS);
      checkInt('kv heads', kvHeads, 0, Number.MAX_SAFE_INTEGER);
      return this.fn.al_gqa_kv_nearest(heads, kvHeads);
    }
    // --- al_attn_head_dim_most: the largest head_dim `heads` heads may have within a query
    // width of `width` dimensions (even, at most AL_MAX_HEAD_DIM; -1 where none fits)
    headDimMost(heads, width) {
      checkInt('heads', heads, 1, this.limits.AL_MAX_HEADS);
      checkInt('width', width, 0, Number.MAX_SAFE_INTEGER);
      return this.fn.al_attn_head_dim_most(heads, width);
    }
    // --- al_rope_pair_dims: [[a, b], ...], the dimensions pair i turns in style ('half_split'
    // or 'interleaved')
    ropePairs(headDim, style) {
      const s = this.abi.enums.rope_style[style];
      if (s === undefined) throw new AttnLabError(`unknown RoPE style '${style}'`, ARG_ERROR);
      checkInt('head_dim', headDim, 2, this.limits.AL_MAX_HEAD_DIM);
      const d = this.array('al_rope_pair_dims', 'dims', { head_dim: headDim, style: s }, 'i32');
      return Array.from({ length: d.length / 2 }, (_, i) => [d[2 * i], d[2 * i + 1]]);
    }

    // --- al_gqa_kv_choices: the KV head counts GQA allows ---------------------------------
    kvChoices(heads) {
      checkInt('heads', heads, 1, this.limits.AL_MAX_HEADS);
      return Array.from(this.array('al_gqa_kv_choices', 'out', { n_heads: heads }, 'i32'));
    }

    // --- al_attn_files_run: a layer from weights bytes run on input bytes ----------------
    // Returns {bytes: Uint8Array (a safetensors file), summary}. options: layer, prefill,
    // ropeBase, eps, attnWeights (false: the result leaves out attn_weights).
    forward(weightsBytes, inputBytes, options = {}) {
      if (!(weightsBytes instanceof Uint8Array) || !(inputBytes instanceof Uint8Array)) {
        throw new AttnLabError('weights and input must be Uint8Arrays', ARG_ERROR);
      }
      const layer = options.layer ?? -1, prefill = options.prefill ?? 0;
      checkInt('layer', layer, -1, Number.MAX_SAFE_INTEGER); // the core refuses a layer the file lacks
      checkInt('prefill', prefill, 0, this.limits.AL_MAX_SEQ);
      for (const k of ['ropeBase', 'eps']) if (options[k] !== undefined) checkNumber(k, options[k]);
      return this.withAllocs([weightsBytes.length, inputBytes.length, this.sizeOf('attn_files_options'),
        this.sizeOf('attn_files_summary'), 4], (pw, pi, po, ps, pout) => this.withError((err) => {
        this.m.HEAPU8.set(weightsBytes, pw);
        this.m.HEAPU8.set(inputBytes, pi);
        this.writeStruct(po, 'attn_files_options', {
          layer, rope_base: options.ropeBase ?? NaN, eps: options.eps ?? NaN, prefill,
          attn_weights: options.attnWeights === false ? 0 : 1,
        });
        this.m.HEAP32[pout >> 2] = 0;
        const status = this.fn.al_attn_files_run(pw, weightsBytes.length, pi, inputBytes.length, po, pout, ps, err);
        this.throwIf(status, err);
        const result = this.m.HEAP32[pout >> 2]; // re-read: the call may have grown memory
        try {
          const y = this.readStruct(ps, 'attn_files_summary');
          const summary = {
            hidden: y['hp.hidden'], heads: y['hp.n_heads'], kvHeads: y['hp.n_kv_heads'], headDim: y['hp.head_dim'],
            ropeBase: y['hp.rope_base'], eps: y['hp.eps'], qkNorm: y['hp.qk_norm'] !== 0,
            batch: y.batch, seq: y.seq, prefill: y.prefill, maxDiff: y.max_diff, bytes: y.bytes,
          };
          return { bytes: this.m.HEAPU8.slice(result, result + summary.bytes), summary };
        } finally {
          this.fn.al_buffer_free(result);
        }
      }));
    }

    // The hyper-parameter fields of a C struct from the binding's camelCase names.
    hparams(c) {
      return {
        'hp.hidden': c.hidden, 'hp.n_heads': c.heads, 'hp.n_kv_heads': c.kvHeads, 'hp.head_dim': c.headDim,
        'hp.rope_base': c.ropeBase, 'hp.eps': c.eps ?? this.layerDefaults.eps, 'hp.qk_norm': c.qkNorm === false ? 0 : 1,
      };
    }

    // --- al_bench_run: the core timed inside WebAssembly ----------------------------------
    bench(cfg) {
      const d = this.benchDefaults;
      const c = { ropeBase: d['hp.rope_base'], seq: d.seq, decodeAt: d.decode_at, repeats: d.repeats, seed: d.seed, ...cfg };
      for (const f of ['hidden', 'heads', 'kvHeads', 'headDim', 'seq', 'decodeAt', 'repeats', 'seed']) checkInt(f, c[f], 0, 2 ** 31);
      checkNumber('ropeBase', c.ropeBase);
      return this.withAllocs([this.sizeOf('bench_config'), this.sizeOf('bench_result')], (pc, pr) => this.withError((err) => {
        this.writeStruct(pc, 'bench_config', {
          ...this.hparams(c), seq: c.seq, decode_at: c.decodeAt, repeats: c.repeats, seed: c.seed,
        });
        this.throwIf(this.fn.al_bench_run(pc, pr, err), err);
        const r = this.readStruct(pr, 'bench_result');
        return { prefillMs: r.prefill_ms, decodeMs: r.decode_ms, prefillGflops: r.prefill_gflops, decodeRecomputeMs: r.decode_recompute_ms };
      }));
    }

    // --- al_session_create -----------------------------------------------------------------
    createSession(cfg) {
      const fields = ['hidden', 'heads', 'kvHeads', 'headDim', 'ropeBase', 'qkNorm', 'seed', 'promptLen', 'decodeSteps'];
      for (const f of fields) if (!(f in cfg)) throw new AttnLabError(`session config lacks ${f}`, ARG_ERROR);
      checkNumber('rope base', cfg.ropeBase);
      for (const f of ['hidden', 'heads', 'kvHeads', 'headDim', 'seed', 'promptLen', 'decodeSteps']) {
        checkInt(f, cfg[f], 0, 2 ** 32 - 1);
      }
      return this.withAllocs([this.sizeOf('session_config'), 4], (pc, pout) => this.withError((err) => {
        this.writeStruct(pc, 'session_config', {
          ...this.hparams({ ...cfg, qkNorm: !!cfg.qkNorm }),
          seed: cfg.seed, prompt_len: cfg.promptLen, decode_steps: cfg.decodeSteps,
        });
        this.throwIf(this.fn.al_session_create(pc, pout, err), err);
        return new Session(this, this.m.HEAP32[pout >> 2], cfg);
      }));
    }

    // --- the model lab (al_model_lab_*): a real model and its tokenizer, for the model view ----
    // Files are Uint8Arrays: model (.bin, model.safetensors or .pth), config (config.json, for a
    // model.safetensors), tokenizer (tokenizer.bin or tokenizer.json). The bytes are copied into
    // the module for the call and freed after it: the lab keeps its own model.
    // kind: what the model file is said to be ('llama2c', 'safetensors', 'pth', from its name), or
    // 'unknown' to go by its bytes.
    createModelLab({ model, config = null, tokenizer, context = 0, kind = 'unknown' } = {}) {
      const kindValue = this.abi.enums.model_file_kind[kind];
      if (kindValue === undefined) throw new AttnLabError(`unknown model file kind '${kind}'`, ARG_ERROR);
      for (const [name, v] of [['model', model], ['tokenizer', tokenizer]]) {
        if (!(v instanceof Uint8Array) || v.length === 0) throw new AttnLabError(`${name} must be a non-empty Uint8Array`, ARG_ERROR);
      }
      if (config !== null && !(config instanceof Uint8Array)) throw new AttnLabError('config must be a Uint8Array or null', ARG_ERROR);
      checkInt('context', context, 0, this.limits.AL_LAB_MAX_CONTEXT);
      const cfg = config || new Uint8Array(0);
      return this.withAllocs([model.length, cfg.length, tokenizer.length, 4], (pm, pc, pt, pout) => this.withError((err) => {
        this.m.HEAPU8.set(model, pm);
        this.m.HEAPU8.set(cfg, pc);
        this.m.HEAPU8.set(tokenizer, pt);
        this.m.HEAP32[pout >> 2] = 0;
        this.throwIf(this.fn.al_model_lab_create(pm, model.length, kindValue, cfg.length ? pc : 0, cfg.length, pt, tokenizer.length,
          context, pout, err), err);
        return this.onEveryThread(new ModelLab(this, this.m.HEAP32[pout >> 2]));
      }));
    }

    // A lab just made (model or train), set to compute on every thread the module has (the
    // same numbers on any number); freed if the core refuses.
    onEveryThread(lab) {
      try {
        if (this.threads > 1) lab.setThreads(this.threads);
      } catch (e) {
        lab.free();
        throw e;
      }
      return lab;
    }

    // --- the train lab (al_train_lab_*): a small MiniMind trained from scratch --------------
    // The core's default settings, keyed by al_train_lab_config's field names, data as a name.
    trainDefaults() {
      const size = this.sizeOf('train_lab_config');
      return this.withAllocs([size], (p) => {
        this.fn.al_train_lab_config_default(p);
        const c = this.readStruct(p, 'train_lab_config');
        return { ...c, data: enumNames(this.abi.enums.train_data)[c.data] };
      });
    }
    // config: al_train_lab_config's fields (data: 'repeat' or 'text'); tokenizer: MiniMind's
    // tokenizer.json bytes; text: the training text (data 'text').
    createTrainLab(config, tokenizer, text = '') {
      if (!(tokenizer instanceof Uint8Array) || !tokenizer.length) throw new AttnLabError('tokenizer must be a non-empty Uint8Array', ARG_ERROR);
      if (typeof text !== 'string') throw new AttnLabError('text must be a string', ARG_ERROR);
      const data = this.abi.enums.train_data[config.data];
      if (data === undefined) throw new AttnLabError(`unknown training data '${config.data}'`, ARG_ERROR);
      const values = { ...config, data };
      for (const [k, v] of Object.entries(values)) checkNumber(k, v);
      const bytes = new TextEncoder().encode(text);
      const size = this.sizeOf('train_lab_config');
      return this.withAllocs([size, tokenizer.length, bytes.length + 1, 4], (pc, pt, px, pout) => this.withError((err) => {
        this.writeStruct(pc, 'train_lab_config', values);
        this.m.HEAPU8.set(tokenizer, pt);
        this.m.HEAPU8.set(bytes, px);
        this.m.HEAP32[pout >> 2] = 0;
        this.throwIf(this.fn.al_train_lab_create(pc, pt, tokenizer.length, px, bytes.length, pout, err), err);
        return this.onEveryThread(new TrainLab(this, this.m.HEAP32[pout >> 2], config));
      }));
    }

    // al_train_bench_run: MiniMind's training step timed on a model of shape hparams (a
    // model_hparams struct's fields, as TrainLab.hparams gives them); the median step in ms.
    trainBench(hparams, batch, seq, steps) {
      checkInt('batch', batch, 1, this.limits.AL_MAX_BATCH);
      checkInt('seq', seq, 2, this.limits.AL_MAX_SEQ);
      checkInt('steps', steps, 1, Number.MAX_SAFE_INTEGER); // the core bounds the run
      return this.withAllocs([this.sizeOf('model_hparams'), 8], (ph, pms) => this.withError((err) => {
        this.writeStruct(ph, 'model_hparams', hparams);
        this.throwIf(this.fn.al_train_bench_run(ph, batch, seq, steps, pms, err), err);
        return new DataView(this.m.HEAPU8.buffer).getFloat64(pms, true);
      }));
    }

    // al_gemm_bench_run: the matrix kernel's GFLOP/s on C[m, n] = A[m, k] · Wᵀ (W packed)
    gemmBench(m, n, k, repeats) {
      for (const [name, v] of [['m', m], ['n', n], ['k', k], ['repeats', repeats]]) checkInt(name, v, 1, Number.MAX_SAFE_INTEGER);
      return this.withAllocs([8], (pg) => this.withError((err) => {
        this.throwIf(this.fn.al_gemm_bench_run(m, n, k, repeats, pg, err), err);
        return new DataView(this.m.HEAPU8.buffer).getFloat64(pg, true);
      }));
    }
    // al_bench_fma_peak_gflops: {gflops, lanes} of independent multiply-adds (SIMD128 here)
    fmaPeak() {
      return this.withAllocs([4], (pl) => {
        const gflops = this.fn.al_bench_fma_peak_gflops(pl);
        return { gflops, lanes: this.m.HEAP32[pl >> 2] };
      });
    }
  }

  // What the three handles (Session, ModelLab, TrainLab) share: the pointer of a C object that
  // must not be used once freed, its free (freeFn), and the arrays its calls fill.
  class Handle {
    constructor(core, ptr, what, freeFn) {
      this.core = core;
      this.ptr = ptr;
      this.what = what;
      this.freeFn = freeFn;
    }
    live() {
      if (!this.ptr) throw new AttnLabError(`${this.what} already freed`, ARG_ERROR);
      return this.ptr;
    }
    free() {
      if (this.ptr) this.freeFn(this.ptr);
      this.ptr = 0;
    }
    // The array C function `name` fills through `param` for this handle (Core.array): args
    // are the call's other parameters; env names more dims of its shape (hyper-parameters).
    array(name, param, args, type, env = {}) {
      const handle = this.core.abi.functions[name].args[0][0]; // s or lab
      return this.core.array(name, param, { [handle]: this.live(), ...args }, type, env);
    }
  }

  class Session extends Handle {
    constructor(core, ptr, cfg) {
      super(core, ptr, 'session', core.fn.al_session_free);
      this.cfg = { ...cfg };
    }
    // al_session_prefill / al_session_step
    prefill() { this.callWithError(this.core.fn.al_session_prefill); }
    step() { this.callWithError(this.core.fn.al_session_step); }
    callWithError(fn) {
      const c = this.core;
      c.withError((err) => c.throwIf(fn(this.live(), err), err));
    }
    // al_session_run_to: the prefill if needed, then the steps up to len tokens, in as few calls
    // as the core can make them (the same numbers as stepping)
    runTo(len) {
      checkInt('len', len, 1, this.total);
      const c = this.core;
      c.withError((err) => c.throwIf(c.fn.al_session_run_to(this.live(), len, err), err));
    }
    // al_session_reset
    reset() { this.core.fn.al_session_reset(this.live()); }
    // al_session_len / al_session_total
    get length() { return this.core.fn.al_session_len(this.live()); }
    get total() { return this.core.fn.al_session_total(this.live()); }
    // al_session_outputs
    outputs() { return this.array('al_session_outputs', 'out', {}, 'f32', { hidden: this.cfg.hidden }); }
    // al_session_attention: [len, len] for one head
    attention(head) {
      checkInt('head', head, 0, this.cfg.heads - 1);
      return this.array('al_session_attention', 'out', { head }, 'f32');
    }
    // al_session_attention_thumb: one head's weights max-pooled to [size, size], size =
    // min(len, maxSize); returns {size, values}
    attentionThumb(head, maxSize) {
      checkInt('head', head, 0, this.cfg.heads - 1);
      checkInt('thumbnail size', maxSize, 1, Number.MAX_SAFE_INTEGER);
      const values = this.array('al_session_attention_thumb', 'out', { head, max_size: maxSize }, 'f32');
      return { size: this.core.fn.al_session_thumb_size(this.live(), maxSize), values };
    }
    // al_session_mask: [len, len] of 0 / -inf
    mask() { return this.array('al_session_mask', 'out', {}, 'f32'); }
    // al_session_verify: [{name, value, threshold, passed}]
    verify() {
      const names = this.core.checkNames;
      return this.array('al_session_verify', 'checks', {}, 'check').map((r, i) => (
        { name: names[i], value: r.value, threshold: r.threshold, passed: r.passed !== 0 }));
    }
    // al_session_rope_relative: the tutorial's v_test at positions m and m + d, d = 0..n-1
    ropeRelative(m, n) {
      checkInt('m', m, 0, this.core.limits.AL_MAX_SEQ);
      checkInt('n', n, 1, this.core.limits.AL_MAX_SEQ);
      return this.array('al_session_rope_relative', 'dots', { m, n }, 'f32');
    }
    // al_attn_flops_full on this session's layer
    flopsFull(nQuery, nKeys) {
      checkInt('n_query', nQuery, 0, 2 ** 31);
      checkInt('n_keys', nKeys, 0, 2 ** 31);
      const hp = this.core.fn.al_session_hparams(this.live());
      return this.core.fn.al_attn_flops_full(hp, nQuery, nKeys);
    }
  }

  class ModelLab extends Handle {
    constructor(core, ptr) {
      super(core, ptr, 'model lab', core.fn.al_model_lab_free);
      const m = core.m;
      this.hparams = core.readStruct(core.fn.al_model_lab_hparams(ptr), 'model_hparams');
      this.kind = enumNames(core.abi.enums.model_file_kind)[core.fn.al_model_lab_kind(ptr)];
      this.ropeStyle = enumNames(core.abi.enums.rope_style)[this.hparams.rope_style];
      this.kvSharing = core.kvSharing(this.hparams.n_heads, this.hparams.n_kv_heads); // 'mha' | 'gqa' | 'mqa'
      this.context = core.fn.al_model_lab_context(ptr);
      this.stageCount = core.limits.AL_SAMPLER_STAGES;
      this.roleNames = enumNames(core.abi.enums.lab_role).filter((n) => n !== 'count');
      if (this.roleNames.length !== core.limits.AL_LAB_ROLES) {
        throw new AttnLabError('attnlab.wasm describes another set of head roles', ARG_ERROR);
      }
    }
    // al_model_lab_threads / al_model_lab_set_threads: the threads its model computes on
    get threads() { return this.core.fn.al_model_lab_threads(this.live()); }
    setThreads(n) {
      const c = this.core;
      c.withError((err) => c.throwIf(c.fn.al_model_lab_set_threads(this.live(), n, err), err));
    }
    get len() { return this.core.fn.al_model_lab_len(this.live()); }
    get promptLen() { return this.core.fn.al_model_lab_prompt_len(this.live()); }
    get finished() { return this.core.fn.al_model_lab_finished(this.live()) !== 0; }
    get chosen() { return this.core.fn.al_model_lab_chosen(this.live()); }
    // al_model_lab_finish: why a step would draw nothing ('going' when it would draw; 'stop_token',
    // 'context', 'no_prompt')
    get finish() { return enumNames(this.core.abi.enums.gen_finish)[this.core.fn.al_model_lab_finish(this.live())]; }
    // Runs fn(err) and throws the core's message when it returns a negative count.
    count(fn) {
      const c = this.core;
      return c.withError((err) => {
        const n = fn(err);
        if (n < 0) c.throwIf(c.readStruct(err, 'error').status || c.status.arg, err);
        return n;
      });
    }
    // al_model_lab_prompt: text encoded as `attnlab generate --prompt` does; the token count
    prompt(text, seed = 0) {
      if (typeof text !== 'string') throw new AttnLabError('the prompt must be text', ARG_ERROR);
      checkInt('seed', seed, 0, Number.MAX_SAFE_INTEGER);
      const bytes = new TextEncoder().encode(text);
      const c = this.core;
      return c.withAllocs([bytes.length + 1], (p) => {
        c.m.HEAPU8.set(bytes, p);
        return this.count((err) => c.fn.al_model_lab_prompt(this.live(), p, bytes.length, seed, err));
      });
    }
    // al_model_lab_prompt_ids
    promptIds(ids, seed = 0) {
      if (!Array.isArray(ids) && !(ids instanceof Int32Array)) throw new AttnLabError('ids must be an array', ARG_ERROR);
      for (const id of ids) checkInt('token id', id, 0, this.hparams.vocab - 1);
      checkInt('seed', seed, 0, Number.MAX_SAFE_INTEGER);
      const c = this.core;
      return c.withAllocs([4 * ids.length], (p) => {
        c.m.HEAP32.set(ids, p >> 2);
        return this.count((err) => c.fn.al_model_lab_prompt_ids(this.live(), p, ids.length, seed, err));
      });
    }
    // MiniMind's sampler settings, checked, as al_sampler_params' fields
    samplerParams(params = {}) {
      const d = this.core.samplerDefaults;
      const { temperature = d.temperature, topK = d.top_k, topP = d.top_p, repetitionPenalty = d.repetition_penalty } = params;
      checkNumber('temperature', temperature);
      checkInt('top-k', topK, 0, this.hparams.vocab);
      checkNumber('top-p', topP);
      checkNumber('repetition penalty', repetitionPenalty);
      return { temperature, top_k: topK, top_p: topP, repetition_penalty: repetitionPenalty };
    }
    // al_model_lab_step with MiniMind's sampler settings; the chosen id
    step(params = {}) {
      const c = this.core, values = this.samplerParams(params);
      return c.withAllocs([c.sizeOf('sampler_params')], (ps) => {
        c.writeStruct(ps, 'sampler_params', values);
        return this.count((err) => c.fn.al_model_lab_step(this.live(), ps, err));
      });
    }
    // al_model_lab_pending: the next draw's {stages [AL_SAMPLER_STAGES, vocab], ids} with these
    // settings, no token drawn (ids empty when no step would draw)
    pending(params = {}, count = 12) {
      checkInt('count', count, 1, this.hparams.vocab);
      const c = this.core, values = this.samplerParams(params);
      const n = c.countOf('al_model_lab_pending', 'stages', this.hparams);
      return c.withAllocs([c.sizeOf('sampler_params'), 4 * n, 4 * count], (ps, pst, pt) => {
        c.writeStruct(ps, 'sampler_params', values);
        const got = this.count((err) => c.fn.al_model_lab_pending(this.live(), ps, pst, n, pt, count, err));
        return { stages: c.floatsFrom(pst, n), ids: c.m.HEAP32.slice(pt >> 2, (pt >> 2) + got) };
      });
    }
    // al_model_lab_set_ignore_eos: on, the stop token is a token like the others and the text goes on
    setIgnoreEos(on) { this.core.fn.al_model_lab_set_ignore_eos(this.live(), on ? 1 : 0); }
    // al_model_lab_resume: a text ended at the stop token goes on past it (the token appended)
    resume() {
      const c = this.core;
      c.withError((err) => c.throwIf(c.fn.al_model_lab_resume(this.live(), err), err));
    }
    // al_model_lab_set_charts: off for speed; on again recomputes what the charts need
    setCharts(on) {
      const c = this.core;
      c.withError((err) => c.throwIf(c.fn.al_model_lab_set_charts(this.live(), on ? 1 : 0, err), err));
    }
    ids() { return this.array('al_model_lab_ids', 'out', {}, 'i32'); }
    // al_model_lab_token_text: token i's text as streamed (i = -1: all so far)
    tokenText(i) {
      checkInt('token', i, -1, this.len - 1);
      return new TextDecoder().decode(this.array('al_model_lab_token_text', 'out', { i }, 'char'));
    }
    text() { return this.tokenText(-1); }
    // al_model_lab_token_bytes: what token i stands for where it stands
    tokenBytes(i) {
      checkInt('token', i, 0, this.len - 1);
      return this.array('al_model_lab_token_bytes', 'out', { i }, 'u8');
    }
    // al_model_lab_piece: any id's piece
    piece(id) {
      checkInt('token id', id, 0, this.hparams.vocab - 1);
      return this.array('al_model_lab_piece', 'out', { id }, 'u8');
    }
    // al_model_lab_attention: [len, len] of one layer's head
    attention(layer, head) {
      checkInt('layer', layer, 0, this.hparams.n_layers - 1);
      checkInt('head', head, 0, this.hparams.n_heads - 1);
      return this.array('al_model_lab_attention', 'out', { layer, head }, 'f32');
    }
    // al_model_lab_mask: [len, len] of 0 / -inf
    mask() { return this.array('al_model_lab_mask', 'out', {}, 'f32'); }
    // al_model_lab_thumbs: [n_layers, n_heads, size, size]
    thumbs(maxSize) {
      checkInt('thumbnail size', maxSize, 1, Number.MAX_SAFE_INTEGER);
      const data = this.array('al_model_lab_thumbs', 'out', { max_size: maxSize }, 'f32', this.hparams);
      return { size: this.core.fn.al_model_lab_thumb_size(this.live(), maxSize), data };
    }
    // al_model_lab_stages: [AL_SAMPLER_STAGES, vocab]
    stages() {
      return this.array('al_model_lab_stages', 'out', {}, 'f32', this.hparams);
    }
    // al_model_lab_top_ids
    topIds(count) {
      checkInt('count', count, 1, this.hparams.vocab);
      return this.array('al_model_lab_top_ids', 'out', { count }, 'i32');
    }
    // al_model_lab_roles: [n_layers, n_heads, roles]
    roles() {
      return this.array('al_model_lab_roles', 'out', {}, 'f32', this.hparams);
    }
    // al_model_lab_role_ranking: the heads (layer * n_heads + head) by one role's score, strongest first
    roleRanking(role) {
      const c = this.core, r = c.abi.enums.lab_role[role];
      if (r === undefined || role === 'count') throw new AttnLabError(`unknown head role '${role}'`, ARG_ERROR);
      return this.array('al_model_lab_role_ranking', 'heads', { role: r }, 'i32', this.hparams);
    }
    // al_model_lab_routing: {ids, weights} [len, top_k] of one layer
    routing(layer) {
      checkInt('layer', layer, 0, this.hparams.n_layers - 1);
      const c = this.core, n = c.countOf('al_model_lab_routing', 'ids', { ...this.hparams, lab: this.live() });
      return c.withAllocs([4 * Math.max(1, n), 4 * Math.max(1, n)], (pi, pw) => {
        this.count((err) => c.fn.al_model_lab_routing(this.live(), layer, pi, pw, n, err));
        return { ids: c.m.HEAP32.slice(pi >> 2, (pi >> 2) + n), weights: c.floatsFrom(pw, n) };
      });
    }
    // al_model_lab_resid_norms: [n_layers + 1, len]
    residNorms() {
      return this.array('al_model_lab_resid_norms', 'out', {}, 'f32');
    }
    // --- the experiments ------------------------------------------------------------------
    // al_model_lab_set_ablation: heads [[layer, head], …] switched off from now on (none: every
    // head on); the tokens so far run again at once
    setAblation(heads) {
      if (!Array.isArray(heads)) throw new AttnLabError('heads must be an array of [layer, head]', ARG_ERROR);
      const flat = [];
      for (const h of heads) {
        if (!Array.isArray(h) || h.length !== 2) throw new AttnLabError('each head must be [layer, head]', ARG_ERROR);
        for (const v of h) checkInt('layer or head', v, 0, 2 ** 31 - 1);
        flat.push(h[0], h[1]);
      }
      const c = this.core;
      c.withAllocs([4 * flat.length], (p) => c.withError((err) => {
        c.m.HEAP32.set(flat, p >> 2);
        c.throwIf(c.fn.al_model_lab_set_ablation(this.live(), p, heads.length, err), err);
      }));
    }
    // al_model_lab_ablation: the heads off, [[layer, head], …]
    ablation() {
      const flat = this.array('al_model_lab_ablation', 'heads', {}, 'i32');
      return Array.from({ length: flat.length / 2 }, (_, i) => [flat[2 * i], flat[2 * i + 1]]);
    }
    // al_model_lab_lens: {top, prob} [n_layers + 1, len]
    lens() {
      const c = this.core, n = c.countOf('al_model_lab_lens', 'top', { ...this.hparams, lab: this.live() });
      return c.withAllocs([4 * n, 4 * n], (pt, pp) => c.withError((err) => {
        c.throwIf(c.fn.al_model_lab_lens(this.live(), pt, pp, n, err), err);
        return { top: c.m.HEAP32.slice(pt >> 2, (pt >> 2) + n), prob: c.floatsFrom(pp, n) };
      }));
    }
    // al_model_lab_dla: the direct attribution of token `target`, [dla rows, len] (the heads
    // [n_layers · n_heads], the embedding, each block's FFN)
    dla(target) {
      checkInt('target', target, 0, this.hparams.vocab - 1);
      return this.array('al_model_lab_dla', 'out', { target }, 'f32');
    }
    // Runs fn(ptr, length) with text's UTF-8 bytes in the module.
    withText(text, fn) {
      if (typeof text !== 'string') throw new AttnLabError('the text must be a string', ARG_ERROR);
      const bytes = new TextEncoder().encode(text), c = this.core;
      return c.withAllocs([bytes.length + 1], (p) => { c.m.HEAPU8.set(bytes, p); return fn(p, bytes.length); });
    }
    // al_model_lab_encode: text to ids as a prompt is encoded
    encode(text) {
      return this.withText(text, (p, len) => this.array('al_model_lab_encode', 'ids', { text: p, len }, 'i32'));
    }
    // al_model_lab_token_id: the token a text names (its piece, or the one token it encodes to)
    tokenId(text) {
      return this.withText(text, (p, len) => this.count((err) => this.core.fn.al_model_lab_token_id(this.live(), p, len, err)));
    }
    // Runs fn(ptr) with ids in the module, each checked against the vocabulary.
    withIds(ids, fn) {
      if (!Array.isArray(ids) && !(ids instanceof Int32Array)) throw new AttnLabError('ids must be an array', ARG_ERROR);
      for (const id of ids) checkInt('token id', id, 0, this.hparams.vocab - 1);
      const c = this.core;
      return c.withAllocs([4 * Math.max(1, ids.length)], (p) => { c.m.HEAP32.set(ids, p >> 2); return fn(p); });
    }
    // al_model_lab_patch: clean ids patched into corrupt ids of the same count, the metric
    // logit(answer) − logit(wrong): the heads' map [n_layers, n_heads], the stream's
    // [n_layers, n], then the clean and the corrupted metric
    patch(clean, corrupt, answer, wrong) {
      checkInt('answer', answer, 0, this.hparams.vocab - 1);
      checkInt('wrong', wrong, 0, this.hparams.vocab - 1);
      return this.withIds(clean, (pc) => this.withIds(corrupt, (pk) => this.array('al_model_lab_patch', 'out',
        { clean: pc, corrupt: pk, n: clean.length, answer, wrong }, 'f32')));
    }
    // al_model_lab_ahead: the next `count` draws with these sampler settings, made without
    // moving the lab, and the next token's distribution: {ids, probs [vocab]}; allHeads: every
    // head on for the call
    ahead(params = {}, allHeads = false, count = 20) {
      checkInt('count', count, 0, this.context);
      const c = this.core, values = this.samplerParams(params), V = this.hparams.vocab;
      return c.withAllocs([c.sizeOf('sampler_params'), 4 * Math.max(1, count), 4 * V], (ps, pi, pp) => {
        c.writeStruct(ps, 'sampler_params', values);
        const got = this.count((err) => c.fn.al_model_lab_ahead(this.live(), ps, allHeads ? 1 : 0, pi, count, pp, V, err));
        return { ids: c.m.HEAP32.slice(pi >> 2, (pi >> 2) + got), probs: c.floatsFrom(pp, V) };
      });
    }
    // al_model_lab_ids_text: the text ids write after the tokens so far
    idsText(ids) {
      return this.withIds(ids, (p) => new TextDecoder().decode(this.array('al_model_lab_ids_text', 'out', { ids: p, n: ids.length }, 'char')));
    }
    // al_model_lab_prompt_loss: the mean loss over the prompt; allHeads: every head on
    promptLoss(allHeads = false) {
      const c = this.core;
      return c.withError((err) => {
        const loss = c.fn.al_model_lab_prompt_loss(this.live(), allHeads ? 1 : 0, err);
        if (loss < 0) c.throwIf(c.readStruct(err, 'error').status || c.status.arg, err);
        return loss;
      });
    }
    // al_model_lab_kv: one row after the prompt and after each step
    kv() { return this.array('al_model_lab_kv', 'rows', {}, 'kv_growth_row'); }
    // al_model_lab_rope: {scaled, plain} [head_dim / 2]
    rope() {
      const c = this.core, half = c.countOf('al_model_lab_rope', 'scaled', this.hparams);
      return c.withAllocs([4 * half, 4 * half], (ps, pp) => c.withError((err) => {
        c.throwIf(c.fn.al_model_lab_rope(this.live(), ps, pp, half, err), err);
        return { scaled: c.floatsFrom(ps, half), plain: c.floatsFrom(pp, half) };
      }));
    }
  }

  class TrainLab extends Handle {
    constructor(core, ptr, config) {
      super(core, ptr, 'train lab', core.fn.al_train_lab_free);
      this.config = { ...config };
      const m = core.m;
      this.hparams = core.readStruct(core.fn.al_train_lab_hparams(ptr), 'model_hparams');
      this.paramCount = core.fn.al_train_lab_param_count(ptr);
      this.columns = enumNames(core.abi.enums.train_column).filter((n) => n !== 'count');
      this.roleNames = enumNames(core.abi.enums.lab_role).filter((n) => n !== 'count');
      this.evalWidth = core.fn.al_train_lab_eval_width(ptr);
      this.probeLen = core.fn.al_train_lab_probe(ptr, 0, 0);
    }
    // al_train_lab_threads / al_train_lab_set_threads: the threads its trainer computes on
    get threads() { return this.core.fn.al_train_lab_threads(this.live()); }
    setThreads(n) {
      const c = this.core;
      c.withError((err) => c.throwIf(c.fn.al_train_lab_set_threads(this.live(), n, err), err));
    }
    get stepsDone() { return this.core.fn.al_train_lab_steps_done(this.live()); }
    // al_train_lab_tokens_per_second: the speed over ms milliseconds of training
    tokensPerSecond(ms) { checkNumber('ms', ms); return this.core.fn.al_train_lab_tokens_per_second(this.live(), ms); }
    get tokensDone() { return this.core.fn.al_train_lab_tokens_done(this.live()); }
    get inductionMax() { return this.core.fn.al_train_lab_induction_max(this.live()); }
    // al_train_lab_strongest_head: the head highest on role at the last evaluation, {layer, head}
    strongestHead(role) {
      const lh = this.core.fn.al_train_lab_strongest_head(this.live(), this.role(role));
      return { layer: Math.floor(lh / this.hparams.n_heads), head: lh % this.hparams.n_heads };
    }
    // al_train_lab_role_passed: the step of the first evaluation with some head above threshold on role; -1: none yet
    rolePassed(role, threshold) {
      checkNumber('threshold', threshold);
      return this.core.fn.al_train_lab_role_passed(this.live(), this.role(role), threshold);
    }
    role(name) {
      const r = this.core.abi.enums.lab_role[name];
      if (r === undefined || name === 'count') throw new AttnLabError(`unknown head role '${name}'`, ARG_ERROR);
      return r;
    }
    // al_train_lab_held_out_loss: on text, the held-out loss at the last evaluation (NaN on the repeated task)
    get heldOutLoss() { return this.core.fn.al_train_lab_held_out_loss(this.live()); }
    // al_train_lab_step: up to n more steps; the steps done
    step(n) {
      checkInt('steps', n, 0, 1e6);
      const c = this.core;
      return c.withError((err) => {
        const done = c.fn.al_train_lab_step(this.live(), n, err);
        if (done < 0) c.throwIf(c.readStruct(err, 'error').status || c.status.arg, err);
        return done;
      });
    }
    // Rows from.. of al_train_lab_history ([steps, columns]) or al_train_lab_evals ([evals, width]).
    history(from = 0) {
      checkInt('from', from, 0, Number.MAX_SAFE_INTEGER);
      return this.array('al_train_lab_history', 'out', { from }, 'f32');
    }
    evals(from = 0) {
      checkInt('from', from, 0, Number.MAX_SAFE_INTEGER);
      return this.array('al_train_lab_evals', 'out', { from }, 'f32');
    }
    // al_train_lab_last_batch: the last step's ids [batch, seq] (empty before any step)
    lastBatch() { return this.array('al_train_lab_last_batch', 'ids', {}, 'i32'); }
    probe() { return this.array('al_train_lab_probe', 'ids', {}, 'i32'); }
    // al_train_lab_attention: [T, T] of one head over the probe
    attention(layer, head) {
      checkInt('layer', layer, 0, this.hparams.n_layers - 1);
      checkInt('head', head, 0, this.hparams.n_heads - 1);
      return this.array('al_train_lab_attention', 'out', { layer, head }, 'f32');
    }
    // al_train_lab_piece: the bytes an id stands for
    piece(id) { return this.array('al_train_lab_piece', 'out', { id }, 'u8'); }
    // al_train_lab_set_ablation: heads [[layer, head], ...] switched off in the probe's
    // evaluation (training never sees it; [] for none); the probe's losses measured again
    setAblation(heads) {
      if (!Array.isArray(heads)) throw new AttnLabError('the heads to switch off must be an array of [layer, head]', ARG_ERROR);
      const flat = [];
      for (const pair of heads) {
        if (!Array.isArray(pair) || pair.length !== 2) throw new AttnLabError('each head to switch off is [layer, head]', ARG_ERROR);
        checkInt('layer', pair[0], 0, this.hparams.n_layers - 1);
        checkInt('head', pair[1], 0, this.hparams.n_heads - 1);
        flat.push(pair[0], pair[1]);
      }
      const c = this.core;
      c.withAllocs([4 * Math.max(1, flat.length)], (p) => c.withError((err) => {
        c.m.HEAP32.set(flat, p >> 2);
        c.throwIf(c.fn.al_train_lab_set_ablation(this.live(), p, heads.length, err), err);
      }));
    }
    // al_train_lab_ablation: the heads off, [[layer, head], ...] layer by layer
    ablation() {
      const flat = this.array('al_train_lab_ablation', 'heads', {}, 'i32');
      return Array.from({ length: flat.length / 2 }, (_, i) => [flat[2 * i], flat[2 * i + 1]]);
    }
    // al_train_lab_probe_loss: {step, first_half, repeated_half, first_half_off, repeated_half_off}
    probeLoss() {
      const v = this.array('al_train_lab_probe_loss', 'out', {}, 'f32');
      const names = enumNames(this.core.abi.enums.train_probe_column).filter((n) => n !== 'count');
      return Object.fromEntries(names.map((n, i) => [n, v[i]]));
    }
    // al_train_lab_file: 'config' | 'model' | 'tokenizer' → bytes
    file(which) {
      const kind = this.core.abi.enums.train_lab_file_kind[which];
      if (kind === undefined) throw new AttnLabError(`unknown file '${which}'`, ARG_ERROR);
      const c = this.core;
      return c.withAllocs([4, 8], (pp, ps) => c.withError((err) => {
        c.throwIf(c.fn.al_train_lab_file(this.live(), kind, pp, ps, err), err);
        const p = c.m.HEAP32[pp >> 2], n = c.m.HEAP32[ps >> 2];
        const out = c.m.HEAPU8.slice(p, p + n);
        c.m._free(p);
        return out;
      }));
    }
  }

  // Loads the module: in a browser from the script-provided factory, in Node with the wasm
  // bytes passed in: the page fetches them (or decodes them from the single-file page).
  // threads, threadScript: the threaded build's (wasm-loader.js), ignored by the one-thread build.
  async function load(options = {}) {
    const factory = options.factory || createAttnLabModule;
    if (typeof factory !== 'function') throw new AttnLabError('wasm-loader.js is not loaded', ARG_ERROR);
    const module = await factory(options.wasmBinary
      ? { wasmBinary: options.wasmBinary, threads: options.threads, threadScript: options.threadScript } : {});
    return new Core(module);
  }

export { load, AttnLabError };
