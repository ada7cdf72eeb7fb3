// state.js — the page's whole state, kept in the URL hash so a view can be shared. Every value
// read from a hash is validated: out-of-range numbers are clamped, junk falls back to the
// default, and each correction is reported so the page can say what it changed (i18n.js words
// it: describeProblems).

  // key: [default, min, max, kind]. The limits are ones the page can serve: at all of them at
  // once (MiniMind-3's width 768, 16 heads of 64 dims or 8 of 128, 1024 tokens) it loads within
  // 3 s and steps within 300 ms (a browser test measures it).
  const FIELDS = {
    seed: [42, 0, 4294967295, 'int'],
    prompt: [6, 1, 512, 'int'],
    steps: [6, 0, 512, 'int'],
    hidden: [16, 1, 768, 'int'],
    heads: [4, 1, 16, 'int'],
    kv: [2, 1, 16, 'int'],
    hd: [8, 2, 128, 'even'],
    base: [10000, 1.0001, 1e9, 'number'],
    qk: [1, 0, 1, 'int'],
    head: [0, 0, 15, 'int'],
    pair: [0, 0, 63, 'int'],
    wrap: [1, 0, 1, 'int'],
    at: [-1, -1, 1024, 'int'], // tokens processed; -1: just after the prefill, 0: before it
    walk: [0, 0, 63, 'int'],
    lang: ['', '', '', 'lang'],
    // the model view (tab=model): the shipped model, the prompt, how many tokens were generated
    // from it, the sampler, the head shown, the colour scale, going on past the end token
    tab: ['model', '', '', 'tab'],
    model: [0, 0, 1, 'model'], // the shipped model (model/client.js's SHIPPED), or 'file': the learner's files
    text: ['Once upon a time', '', '', 'text'],
    gen: [0, 0, 1024, 'int'],
    temp: [0, 0, 2, 'number'],
    topk: [50, 0, 6400, 'int'],
    topp: [0.85, 0.01, 1, 'number'],
    rep: [1, 1, 2, 'number'],
    gseed: [0, 0, 4294967295, 'int'],
    layer: [0, 0, 255, 'int'],
    mhead: [0, 0, 255, 'int'],
    log: [0, 0, 1, 'int'],
    eos: [0, 0, 1, 'int'], // 1: generation goes on past the end token (generate --ignore-eos)
    // the Experiments panel: the heads switched off ("layer.head,…"), the token whose
    // attribution is shown (-1: the most likely next one), the two prompts of a patch and its
    // answer and wrong token ('' : the model's suggested pair)
    off: ['', '', '', 'heads'],
    dla: [-1, -1, 1048575, 'int'],
    clean: ['', '', '', 'text'],
    corrupt: ['', '', '', 'text'],
    answer: ['', '', '', 'text'],
    wrong: ['', '', '', 'text'],
    // the Train tab (tab=train): the preset, the data (0 the repeated task, 1 the built-in
    // sample, 2 pasted text), the shape and learning rate, the role the heatmap shows
    tpreset: [0, 0, 3, 'int'],
    tdata: [0, 0, 2, 'int'],
    tlayers: [2, 1, 8, 'int'],
    theads: [2, 1, 16, 'int'],
    thidden: [64, 16, 512, 'int'],
    tlr: [0.001, 0.00001, 0.1, 'number'],
    trole: [3, 0, 3, 'int'],
    // the heads switched off in the probe's evaluation, "layer.head" joined by commas ("1.1,0.0")
    toff: ['', '', '', 'heads'],
  };
  // The lists of heads ('heads' fields) and the shape each is bounded by, [layers, heads]: the
  // model view's by its layer and head fields (the model's own range is the core's to check),
  // the Train tab's by its largest shape (tlayers and theads at their maxima).
  const HEAD_BOUNDS = {
    off: [FIELDS.layer[2] + 1, FIELDS.mhead[2] + 1],
    toff: [FIELDS.tlayers[2], FIELDS.theads[2]],
  };
  const LAYER_KEYS = ['seed', 'prompt', 'steps', 'hidden', 'heads', 'kv', 'hd', 'base', 'qk', 'head', 'pair', 'wrap', 'at', 'walk'];
  const MAX_TEXT = 400; // characters of prompt text a hash may carry
  const MAX_TOKENS = 1024; // prompt + steps: the heatmaps' largest size
  const MAX_HEAD_WIDTH = 1024; // heads × head_dim (16 × 64, 8 × 128; MiniMind-3: 8 × 96)
  const MAX_HASH = 8192;   // longer hashes are ignored whole (a prompt of 400 characters and a patch's two, %-encoded, fit)

  function defaults() {
    const s = {};
    for (const [k, [d]] of Object.entries(FIELDS)) s[k] = d;
    return s;
  }

  // Parses one value; returns [value, ok, limit, bound] — limit is set when the value was
  // outside the page's range and clamped to it, and bound says which end it was: 'lower' (the
  // value was below min) or 'upper' (above max). A list of heads takes its bounds (HEAD_BOUNDS)
  // as min and max.
  function parseValue(kind, raw, min, max) {
    if (kind === 'lang') return raw === 'zh' || raw === 'en' ? [raw, true] : ['', false];
    if (kind === 'tab') return raw === 'model' || raw === 'layer' || raw === 'train' ? [raw, true] : ['model', false];
    if (kind === 'model' && raw === 'file') return ['file', true];
    if (kind === 'heads') return parseHeads(raw, min, max);
    if (kind === 'model') kind = 'int';
    if (kind === 'text') return raw.length <= MAX_TEXT ? [raw, true] : [raw.slice(0, MAX_TEXT), false, MAX_TEXT, 'upper'];
    if (!/^-?[0-9]+(\.[0-9]+)?(e[+-]?[0-9]+)?$/i.test(raw)) return [NaN, false];
    let v = Number(raw);
    if (!Number.isFinite(v)) return [NaN, false];
    let ok = true, limit, bound;
    if (kind !== 'number' && !Number.isInteger(v)) { v = Math.round(v); ok = false; }
    if (kind === 'even' && v % 2 !== 0) { v += 1; ok = false; }
    if (v < min) { v = min; ok = false; limit = min; bound = 'lower'; }
    if (v > max) { v = kind === 'even' && max % 2 ? max - 1 : max; ok = false; limit = max; bound = 'upper'; }
    return [v, ok, limit, bound];
  }

  // A list of heads "layer.head,…" → [text, ok]: each a layer below `layers` and a head below
  // `heads`, named once, layer by layer then head by head; anything else is dropped (ok false).
  function parseHeads(raw, layers, heads) {
    const parts = raw === '' ? [] : raw.split(',');
    const pairs = parts.map((p) => p.match(/^(\d{1,3})\.(\d{1,3})$/)).filter((m) => m && Number(m[1]) < layers && Number(m[2]) < heads)
      .map((m) => [Number(m[1]), Number(m[2])]);
    const text = headsText(pairs);
    return [text, pairs.length === parts.length && text.split(',').filter(Boolean).length === parts.length];
  }
  function headsText(pairs) {
    const sorted = [...pairs].sort((a, b) => a[0] - b[0] || a[1] - b[1]);
    return sorted.filter((p, i) => i === 0 || p[0] !== sorted[i - 1][0] || p[1] !== sorted[i - 1][1]).map((p) => `${p[0]}.${p[1]}`).join(',');
  }
  // "layer.head,…" (as the link holds it) → [[layer, head], …]
  function headsOf(text) {
    return text ? text.split(',').map((p) => p.split('.').map(Number)) : [];
  }

  // Cross-field rules that need no core maths: the chosen head and pair exist, the sequence
  // fits the heatmaps. (The rules the core knows are coreRelations'.)
  function clampRelations(s, problems) {
    const fix = (key, value) => { problems.push({ key, value: s[key], used: value }); s[key] = value; };
    if (s.prompt + s.steps > MAX_TOKENS) {
      problems.push({ key: 'steps', value: s.steps, used: MAX_TOKENS - s.prompt, limit: MAX_TOKENS, bound: 'upper' });
      s.steps = MAX_TOKENS - s.prompt;
    }
    if (s.kv > s.heads) fix('kv', s.heads);
    if (s.head >= s.heads) fix('head', 0);
    if (s.pair >= s.hd / 2) fix('pair', 0);
    if (s.at > 0 && (s.at < s.prompt || s.at > s.prompt + s.steps)) fix('at', -1);
    if (s.thidden % s.theads !== 0 || (s.thidden / s.theads) % 2 !== 0) fix('theads', 2); // heads of an even size
    const off = headsText(headsOf(s.toff).filter(([l, h]) => l < s.tlayers && h < s.theads)); // heads the model has
    if (off !== s.toff) fix('toff', off);
  }

  // Cross-field rules the core decides, applied once it is loaded (core: the binding's Core):
  // head_dim at most what the heads may have within the query width MAX_HEAD_WIDTH (the width
  // bounds the work of a step), KV heads snapped to the nearest count GQA allows; then the
  // rules above again (the pair must exist in the head_dim used).
  function coreRelations(s, problems, core) {
    const most = core.headDimMost(s.heads, MAX_HEAD_WIDTH);
    if (s.hd > most) {
      problems.push({ key: 'hd', value: s.hd, used: most, limit: most, bound: 'upper' });
      s.hd = most;
    }
    const nearest = core.kvNearest(s.heads, s.kv);
    if (nearest !== s.kv) {
      problems.push({ key: 'kv', value: s.kv, used: nearest });
      s.kv = nearest;
    }
    clampRelations(s, problems);
  }

  // Returns {state, problems: [{key, value, used, limit?, bound?} or {key, value, kind}]}: a value
  // corrected to `used` (clamped to a limit, lower or upper), or a part of the hash ignored
  // (kind 'ignored': an unknown key; 'undecodable': a broken %-encoding; 'too-long': the whole
  // hash).
  function parseHash(hash) {
    const state = defaults();
    const problems = [];
    let text = String(hash || '').replace(/^#/, '');
    if (text.length > MAX_HASH) {
      problems.push({ key: '#', value: `${text.slice(0, 24)}… (${text.length} chars)`, kind: 'too-long' });
      text = '';
    }
    const seen = new Set();
    for (const part of text.split('&')) {
      if (!part) continue;
      const eq = part.indexOf('=');
      let key, raw;
      try {
        key = decodeURIComponent(eq < 0 ? part : part.slice(0, eq));
        raw = decodeURIComponent(eq < 0 ? '' : part.slice(eq + 1));
      } catch (_e) {
        problems.push({ key: part.slice(0, 24), value: '', kind: 'undecodable' }); // broken %-encoding
        continue;
      }
      // Own keys only: '__proto__', 'constructor' and the like are unknown keys, not fields.
      const field = Object.prototype.hasOwnProperty.call(FIELDS, key) ? FIELDS[key] : null;
      if (!field) {
        problems.push({ key: key.slice(0, 24), value: raw.slice(0, 24), kind: 'ignored' });
        continue;
      }
      const [def, , , kind] = field;
      const [min, max] = kind === 'heads' ? HEAD_BOUNDS[key] : field.slice(1, 3);
      const [v, ok, limit, bound] = parseValue(kind, kind === 'text' ? raw : raw.slice(0, 64), min, max);
      const used = Number.isNaN(v) || ((kind === 'lang' || kind === 'tab') && !ok) ? def : v;
      if (!ok) problems.push(limit === undefined ? { key, value: raw.slice(0, 24), used } : { key, value: raw.slice(0, 24), used, limit, bound });
      state[key] = used;
      seen.add(key);
    }
    // A link from before the model view (layer-lab keys, no tab) opens the layer lab.
    if (!seen.has('tab') && LAYER_KEYS.some((k) => seen.has(k))) state.tab = 'layer';
    clampRelations(state, problems);
    return { state, problems };
  }

  function toHash(state) {
    return '#' + Object.keys(FIELDS).filter((k) => state[k] !== undefined && !(state[k] === '' && (FIELDS[k][3] === 'lang' || FIELDS[k][3] === 'heads')))
      .map((k) => `${k}=${encodeURIComponent(state[k])}`).join('&');
  }


export { headsOf, headsText, FIELDS, MAX_TOKENS, MAX_HEAD_WIDTH, MAX_HASH, MAX_TEXT, defaults, parseHash, toHash, clampRelations, coreRelations };
