// cli-gguf.test.mjs — `attnlab convert --out X.gguf`: each file read back with the tests' own
// GGUF reader (tests/lib/gguf.mjs) and checked against the format (version 3, alignment, data
// offsets), its metadata against the model's config, every tensor's bytes against the model's own
// weights (read from the checkpoint with the tests' safetensors and llama2.c readers) under
// llama.cpp's names and dims order, and the tokenizer against its file. stories260K as llama, the
// MiniMind fixtures as qwen3 (tied, untied, attention-only, YaRN) and qwen3moe, float32 and
// float16; and the refusals, each one line with nothing written. Whether llama.cpp computes the
// same numbers from these files is the bench's (tests/bench/llama_cpp.mjs).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT, VARIANTS, run } from './lib/run.mjs';
import { readSafetensors, writeSafetensors } from './lib/safetensors.mjs';
import { readGguf, parseGguf, halfToFloat } from './lib/gguf.mjs';
import { readTokenizerBin } from './lib/tokenizer.mjs';
import { cutTokenizer, MM_TOKENIZER } from './lib/cut-tokenizer.mjs';
import { expectRefusals } from './lib/refusals.mjs';

const CLI = join(ROOT, 'build', 'attnlab');
const MINIMIND = join(ROOT, 'tests', 'fixtures', 'minimind');
const STORIES = join(ROOT, 'models', 'stories260K');
const work = mkdtempSync(join(tmpdir(), 'attnlab-gguf-'));
process.on('exit', () => rmSync(work, { recursive: true, force: true }));

const tokenizers = {};
function tokenizerFor(vocab) {
  if (!tokenizers[vocab]) {
    tokenizers[vocab] = join(work, `tokenizer-${vocab}.json`);
    writeFileSync(tokenizers[vocab], cutTokenizer(vocab));
  }
  return tokenizers[vocab];
}

function convert(model, name, extra = []) {
  const out = join(work, `${name}.gguf`);
  const r = run(CLI, ['convert', '--model', model, '--out', out, ...extra]);
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /^wrote .*: GGUF, float(16|32), \d+ bytes\n$/);
  return readGguf(out);
}

// stories260K.bin by its layout (models/stories260K/SOURCE.md): 7 int32, then float32 arrays.
function readLlama2c(path) {
  const b = readFileSync(path);
  const [dim, hidden, layers, heads, kvHeads, vocabSigned, seq] = [0, 1, 2, 3, 4, 5, 6].map((i) => b.readInt32LE(4 * i));
  const vocab = Math.abs(vocabSigned), hd = dim / heads;
  const f = new Float32Array(b.buffer.slice(b.byteOffset + 28, b.byteOffset + b.length));
  let at = 0;
  const take = (n) => f.subarray(at, (at += n));
  const perLayer = (n) => Array.from({ length: layers }, () => take(n));
  const w = { embed: take(vocab * dim), rmsAtt: perLayer(dim), wq: perLayer(heads * hd * dim), wk: perLayer(kvHeads * hd * dim),
    wv: perLayer(kvHeads * hd * dim), wo: perLayer(dim * heads * hd), rmsFfn: perLayer(dim), w1: perLayer(hidden * dim),
    w2: perLayer(dim * hidden), w3: perLayer(hidden * dim), rmsFinal: take(dim) };
  return { dim, hidden, layers, heads, kvHeads, vocab, seq, hd, tied: vocabSigned > 0, w };
}

const same = (t, want, what) => {
  assert.equal(t.type, 'F32', `${what}: ${t.type}`);
  assert.equal(t.data.length, want.length, `${what}: ${t.data.length} numbers, want ${want.length}`);
  assert.ok(Buffer.from(t.bytes).equals(Buffer.from(new Float32Array(want).buffer)), `${what}: the bytes differ`);
};

// The format's own rules beyond what the reader enforces: the counts, general.alignment 32.
function checkLayout(g, arch) {
  assert.equal(g.version, 3);
  assert.equal(g.get('general.architecture'), arch);
  assert.equal(g.kv.get('general.alignment').type, 'UINT32');
  assert.equal(g.alignment, 32);
  assert.equal(g.dataStart % 32, 0);
  assert.equal(g.dataEnd, g.size, 'the file ends where the padded data does');
}

test('gguf: stories260K as llama — its metadata, every weight as in the .bin, the tokenizer as tok512.bin', () => {
  const g = convert(join(STORIES, 'stories260K.bin'), 'stories', ['--tokenizer', join(STORIES, 'tok512.bin'), '--dtype', 'f32']);
  const m = readLlama2c(join(STORIES, 'stories260K.bin'));
  checkLayout(g, 'llama');
  assert.equal(g.get('general.file_type'), 0);
  assert.equal(g.get('general.name'), 'stories260K');
  const want = { 'llama.context_length': m.seq, 'llama.embedding_length': m.dim, 'llama.block_count': m.layers,
    'llama.feed_forward_length': m.hidden, 'llama.attention.head_count': m.heads, 'llama.attention.head_count_kv': m.kvHeads,
    'llama.rope.dimension_count': m.hd, 'llama.attention.key_length': m.hd, 'llama.vocab_size': m.vocab };
  for (const [k, v] of Object.entries(want)) assert.equal(g.get(k), v, k);
  assert.equal(g.get('llama.rope.freq_base'), 10000);
  assert.equal(g.get('llama.attention.layer_norm_rms_epsilon'), Math.fround(1e-5));
  // Tied: no output tensor (llama.cpp then reads token_embd).
  assert.ok(m.tied);
  assert.equal(g.tensor('output.weight'), undefined);
  same(g.tensor('token_embd.weight'), m.w.embed, 'token_embd');
  assert.deepEqual(g.tensor('token_embd.weight').ne, [m.dim, m.vocab]);
  same(g.tensor('output_norm.weight'), m.w.rmsFinal, 'output_norm');
  const names = { attn_norm: 'rmsAtt', attn_q: 'wq', attn_k: 'wk', attn_v: 'wv', attn_output: 'wo', ffn_norm: 'rmsFfn', ffn_gate: 'w1', ffn_down: 'w2', ffn_up: 'w3' };
  for (let l = 0; l < m.layers; l++)
    for (const [n, key] of Object.entries(names)) same(g.tensor(`blk.${l}.${n}.weight`), m.w[key][l], `blk.${l}.${n}`);
  assert.deepEqual(g.tensor('blk.0.attn_k.weight').ne, [m.dim, m.kvHeads * m.hd]);
  assert.deepEqual(g.tensor('blk.0.ffn_down.weight').ne, [m.hidden, m.dim]);
  assert.equal(g.tensors.length, 2 + 9 * m.layers);
  // SentencePiece's pieces as llama2.c's export had them: spaces back to ▁, BOS and EOS named.
  const tok = readTokenizerBin(join(STORIES, 'tok512.bin'));
  assert.equal(g.get('tokenizer.ggml.model'), 'llama');
  const tokens = g.get('tokenizer.ggml.tokens'), types = g.get('tokenizer.ggml.token_type');
  assert.equal(tokens.length, 512);
  for (let id = 0; id < 512; id++) {
    const piece = tok.pieces[id].toString('utf8');
    const wantText = id === 1 ? '<s>' : id === 2 ? '</s>' : piece.replaceAll(' ', '\u2581');
    assert.equal(tokens[id], wantText, `token ${id}`);
    const wantType = id === 0 ? 2 : id <= 2 ? 3 : /^<0x[0-9A-F]{2}>$/.test(piece) ? 6 : 1;
    assert.equal(types[id], wantType, `token ${id}'s type`);
  }
  assert.deepEqual(g.get('tokenizer.ggml.scores'), tok.scores);
  assert.equal(g.kv.get('tokenizer.ggml.token_type').elemType, 'INT32');
  assert.equal(g.get('tokenizer.ggml.bos_token_id'), 1);
  assert.equal(g.get('tokenizer.ggml.eos_token_id'), 2);
  assert.equal(g.get('tokenizer.ggml.unknown_token_id'), 0);
  assert.equal(g.get('tokenizer.ggml.add_bos_token'), true);
});

// The GGUF name of each MiniMind weight.
function minimindNames(config) {
  const map = { 'token_embd.weight': ['model.embed_tokens.weight'], 'output_norm.weight': ['model.norm.weight'] };
  if (!config.tie_word_embeddings) map['output.weight'] = ['lm_head.weight'];
  const L = { attn_norm: 'input_layernorm', attn_q: 'self_attn.q_proj', attn_k: 'self_attn.k_proj', attn_v: 'self_attn.v_proj',
    attn_output: 'self_attn.o_proj', attn_q_norm: 'self_attn.q_norm', attn_k_norm: 'self_attn.k_norm', ffn_norm: 'post_attention_layernorm' };
  for (let l = 0; l < config.num_hidden_layers; l++) {
    for (const [n, mm] of Object.entries(L)) map[`blk.${l}.${n}.weight`] = [`model.layers.${l}.${mm}.weight`];
    if (config.use_moe) {
      map[`blk.${l}.ffn_gate_inp.weight`] = [`model.layers.${l}.mlp.gate.weight`];
      for (const [n, mm] of [['ffn_gate_exps', 'gate_proj'], ['ffn_up_exps', 'up_proj'], ['ffn_down_exps', 'down_proj']])
        map[`blk.${l}.${n}.weight`] = Array.from({ length: config.num_experts }, (_, e) => `model.layers.${l}.mlp.experts.${e}.${mm}.weight`);
    } else if (config.intermediate_size > 0) {
      for (const [n, mm] of [['ffn_gate', 'gate_proj'], ['ffn_up', 'up_proj'], ['ffn_down', 'down_proj']]) map[`blk.${l}.${n}.weight`] = [`model.layers.${l}.mlp.${mm}.weight`];
    }
  }
  return map;
}

// A fixture as qwen3 / qwen3moe: metadata from its config.json, tensors from its safetensors.
function checkMinimind(name, g, { f16 = false } = {}) {
  const dir = join(MINIMIND, name);
  const config = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8'));
  const st = readSafetensors(join(dir, 'model.safetensors')).tensors;
  const arch = config.use_moe ? 'qwen3moe' : 'qwen3';
  checkLayout(g, arch);
  assert.equal(g.get('general.file_type'), f16 ? 1 : 0);
  const hd = config.head_dim ?? config.hidden_size / config.num_attention_heads;
  const ffn = config.use_moe ? config.moe_intermediate_size ?? config.intermediate_size : config.intermediate_size || 32;
  const want = { context_length: config.max_position_embeddings, embedding_length: config.hidden_size, block_count: config.num_hidden_layers,
    feed_forward_length: ffn, 'attention.head_count': config.num_attention_heads, 'attention.head_count_kv': config.num_key_value_heads,
    'attention.key_length': hd, 'attention.value_length': hd, 'rope.dimension_count': hd, vocab_size: config.vocab_size };
  if (config.use_moe) Object.assign(want, { expert_count: config.num_experts, expert_used_count: config.num_experts_per_tok, expert_feed_forward_length: ffn });
  for (const [k, v] of Object.entries(want)) assert.equal(g.get(`${arch}.${k}`), v, `${arch}.${k}`);
  assert.equal(g.get(`${arch}.rope.freq_base`), Math.fround(config.rope_theta));
  assert.equal(g.get(`${arch}.attention.layer_norm_rms_epsilon`), Math.fround(config.rms_norm_eps));
  const map = minimindNames(config);
  const extra = config.intermediate_size === 0 && !config.use_moe ? 3 * config.num_hidden_layers : 0;
  assert.equal(g.tensors.length, Object.keys(map).length + extra, g.tensors.map((t) => t.name).join(' '));
  for (const [gname, parts] of Object.entries(map)) {
    const t = g.tensor(gname);
    assert.ok(t, `${gname} missing`);
    const shape = parts.length > 1 ? [parts.length, ...st[parts[0]].shape] : st[parts[0]].shape;
    assert.deepEqual(t.ne, [...shape].reverse(), `${gname}: ne`);
    const data = new Float32Array(t.numel);
    parts.forEach((p, k) => data.set(st[p].data, k * st[p].data.length));
    if (!f16 || shape.length === 1) {
      same(t, data, gname);
      continue;
    }
    // float16: the nearest half of each float32 (within half an ulp: 2^-11 relative, 2^-25 below the normals).
    assert.equal(t.type, 'F16', gname);
    for (let i = 0; i < data.length; i++) {
      const d = Math.abs(t.data[i] - data[i]);
      assert.ok(d <= Math.max(Math.abs(data[i]) * 2 ** -11, 2 ** -25), `${gname}[${i}]: ${t.data[i]} for ${data[i]}`);
    }
  }
  return { config, st };
}

// MiniMind's tokenizer.json (cut to the model's vocabulary) as llama.cpp's gpt2 vocabulary.
function checkGpt2Tokenizer(g, tokenizerPath) {
  const t = JSON.parse(readFileSync(tokenizerPath, 'utf8'));
  const byId = [];
  for (const [text, id] of Object.entries(t.model.vocab)) byId[id] = text;
  const added = new Map(t.added_tokens.map((a) => [a.id, a]));
  assert.equal(g.get('tokenizer.ggml.model'), 'gpt2');
  assert.equal(g.get('tokenizer.ggml.pre'), 'gpt-2');
  const tokens = g.get('tokenizer.ggml.tokens'), types = g.get('tokenizer.ggml.token_type');
  assert.equal(tokens.length, byId.length);
  for (let id = 0; id < byId.length; id++) {
    assert.equal(tokens[id], added.has(id) ? added.get(id).content : byId[id], `token ${id}`);
    assert.equal(types[id], added.has(id) ? (added.get(id).special ? 3 : 4) : 1, `token ${id}'s type`);
  }
  assert.deepEqual(g.get('tokenizer.ggml.merges'), t.model.merges.map((m) => (Array.isArray(m) ? m.join(' ') : m)));
  assert.equal(g.get('tokenizer.ggml.bos_token_id'), 1);
  assert.equal(g.get('tokenizer.ggml.eos_token_id'), 2);
  assert.equal(g.get('tokenizer.ggml.add_bos_token'), false);
}

test('gguf: MiniMind fixtures as qwen3 — tied, untied, float32 and float16 — with the tokenizer beside or given', () => {
  let g = convert(join(MINIMIND, 'dense_f32'), 'dense', ['--tokenizer', tokenizerFor(512), '--dtype', 'f32']);
  checkMinimind('dense_f32', g);
  assert.equal(g.tensor('output.weight'), undefined, 'tied: no output tensor');
  checkGpt2Tokenizer(g, tokenizerFor(512));
  g = convert(join(MINIMIND, 'untied'), 'untied', ['--tokenizer', tokenizerFor(512), '--dtype', 'f32']);
  checkMinimind('untied', g);
  assert.ok(g.tensor('output.weight'));
  g = convert(join(MINIMIND, 'dense_f32'), 'dense16', ['--tokenizer', tokenizerFor(512)]); // float16 by default
  checkMinimind('dense_f32', g, { f16: true });
  assert.equal(g.tensor('blk.0.attn_norm.weight').type, 'F32', 'norms stay float32');
  // The folder's own tokenizer.json: models/minimind-fortunes (float16 weights, so float16 is exact).
  g = convert(join(ROOT, 'models', 'minimind-fortunes'), 'fortunes');
  checkLayout(g, 'qwen3');
  assert.equal(g.get('general.name'), 'minimind-fortunes');
  checkGpt2Tokenizer(g, MM_TOKENIZER);
});

test('gguf: MoE as qwen3moe (experts stacked), an attention-only model with a zero FFN, YaRN as llama.cpp computes MiniMind\'s', () => {
  for (const name of ['moe_top1_norm', 'moe_top2_norm']) checkMinimind(name, convert(join(MINIMIND, name), name, ['--tokenizer', tokenizerFor(300), '--dtype', 'f32']));
  const g = convert(join(MINIMIND, 'attn_only'), 'attn_only', ['--tokenizer', tokenizerFor(300), '--dtype', 'f32']);
  checkMinimind('attn_only', g);
  const hidden = g.get('qwen3.embedding_length');
  assert.equal(g.get('qwen3.feed_forward_length'), 32);
  for (let l = 0; l < 2; l++)
    for (const n of ['ffn_gate', 'ffn_up', 'ffn_down']) {
      const t = g.tensor(`blk.${l}.${n}.weight`);
      assert.deepEqual(t.ne, n === 'ffn_down' ? [32, hidden] : [hidden, 32], n);
      assert.ok(t.data.every((x) => Object.is(x, 0)), `${n}: all +0`);
    }
  // yarn_small: factor 4 from 16 positions; llama.cpp multiplies cos and sin by
  // attn_factor · (1 + 0.1 ln 4), MiniMind by attention_factor 1.
  const y = convert(join(MINIMIND, 'yarn_small'), 'yarn', ['--tokenizer', tokenizerFor(300), '--dtype', 'f32']);
  checkMinimind('yarn_small', y);
  assert.equal(y.get('qwen3.rope.scaling.type'), 'yarn');
  assert.equal(y.get('qwen3.rope.scaling.factor'), 4);
  assert.equal(y.get('qwen3.rope.scaling.original_context_length'), 16);
  assert.equal(y.get('qwen3.rope.scaling.attn_factor'), Math.fround(1 / (1 + 0.1 * Math.log(4))));
  assert.equal(convert(join(MINIMIND, 'dense_f32'), 'noyarn', ['--tokenizer', tokenizerFor(512)]).get('qwen3.rope.scaling.type'), undefined);
});

test('gguf: the reader refuses what breaks the format (so the checks above can fail)', () => {
  const good = readFileSync(join(work, 'stories.gguf'));
  const broken = (f) => { const b = Buffer.from(good); f(b); return b; };
  assert.throws(() => parseGguf(broken((b) => b.write('GGUG', 0))), /magic/);
  assert.throws(() => parseGguf(broken((b) => b.writeUInt32LE(2, 4))), /version/);
  assert.throws(() => parseGguf(good.subarray(0, good.length - 1)), /the data needs/);
  assert.throws(() => parseGguf(good.subarray(0, 100)), /the file ends/);
  const g = parseGguf(good);
  const off = good.indexOf(Buffer.from('token_embd.weight')) + 'token_embd.weight'.length + 4 + 16 + 4; // its offset field
  assert.equal(Number(good.readBigUInt64LE(off)), g.tensor('token_embd.weight').offset);
  assert.throws(() => parseGguf(broken((b) => b.writeBigUInt64LE(BigInt(g.tensor('token_embd.weight').offset + 4), off))), /not a multiple|overlaps/);
  assert.equal(halfToFloat(0x3c00), 1);
  assert.equal(halfToFloat(0x7bff), 65504);
  assert.equal(halfToFloat(0x0001), 2 ** -24);
});

test('gguf: what cannot be written is refused with one line, nothing written', () => {
  const big = join(work, 'big');
  mkdirSync(big, { recursive: true });
  const src = readSafetensors(join(MINIMIND, 'dense_f32', 'model.safetensors')).tensors;
  src['model.layers.0.self_attn.q_proj.weight'].data[3] = 70000;
  writeSafetensors(join(big, 'model.safetensors'), src);
  writeFileSync(join(big, 'config.json'), readFileSync(join(MINIMIND, 'dense_f32', 'config.json')));
  const t300 = tokenizerFor(300), t512 = tokenizerFor(512);
  expectRefusals(CLI, 'convert', [
    [['--model', join(MINIMIND, 'moe_top2_nonorm'), '--tokenizer', t300, '--out', 'OUT'], /norm_topk_prob false cannot be written: llama\.cpp's qwen3moe always renormalises/],
    [['--model', join(STORIES, 'stories260K.bin'), '--out', 'OUT'], /holds the tokenizer: .* has none beside it; give --tokenizer \(llama2\.c's tokenizer\.bin\)/],
    [['--model', join(MINIMIND, 'dense_f32'), '--out', 'OUT'], /has none beside it; give --tokenizer \(a tokenizer\.json\)/],
    [['--model', join(MINIMIND, 'dense_f32'), '--tokenizer', t300, '--out', 'OUT'], /defines 300 tokens .* vocabulary size is 512/],
    [['--model', join(MINIMIND, 'dense_f32'), '--tokenizer', join(work, 'none.json'), '--out', 'OUT'], /none\.json.*(No such file|cannot)/],
    [['--model', big, '--tokenizer', t512, '--out', 'OUT'], /blk\.0\.attn_q\.weight': element 3 is 70000, which float16 cannot hold.*--dtype f32 keeps it/],
    [['--model', join(MINIMIND, 'dense_f32'), '--tokenizer', t512, '--out', 'OUT', '--force'], /--force is for an --out folder/],
    [['--model', join(MINIMIND, 'dense_f32'), '--tokenizer', t512, '--out', 'OUT', '--dtype', 'bf16'], /--dtype expects f16 or f32/],
  ], work, '.gguf');
  // --tokenizer belongs to a .gguf; the output is never one of the inputs.
  let r = run(CLI, ['convert', '--model', join(MINIMIND, 'dense_f32'), '--tokenizer', t512, '--out', join(work, 'folder')]);
  assert.equal(r.status, 2);
  assert.match(r.stderr, /^attnlab: --tokenizer is for an --out \.gguf file[^\n]*\n$/);
  const asInput = join(work, 'input.gguf');
  writeFileSync(asInput, readFileSync(t512));
  r = run(CLI, ['convert', '--model', join(MINIMIND, 'dense_f32'), '--tokenizer', asInput, '--out', asInput]);
  assert.equal(r.status, 2, r.stderr);
  assert.match(r.stderr, /^attnlab: [^\n]*\n$/);
  assert.deepEqual(readFileSync(asInput), readFileSync(t512));
  assert.ok(!existsSync(join(work, 'folder')));
});

test('gguf: each build (native, ASan+UBSan) writes the same bytes, without a sanitizer report', () => {
  const jobs = [
    ['stories', join(STORIES, 'stories260K.bin'), ['--tokenizer', join(STORIES, 'tok512.bin'), '--dtype', 'f32']],
    ['moe', join(MINIMIND, 'moe_top2_norm'), ['--tokenizer', tokenizerFor(300)]],
    ['attn', join(MINIMIND, 'attn_only'), ['--tokenizer', tokenizerFor(300)]],
    ['fortunes16', join(ROOT, 'models', 'minimind-fortunes'), []],
  ];
  for (const [name, model, extra] of jobs) {
    const files = VARIANTS.map((v) => {
      const out = join(work, `${name}-${v.name}.gguf`);
      const r = run(join(v.dir, 'attnlab'), ['convert', '--model', model, '--out', out, ...extra]);
      assert.equal(r.status, 0, `${v.name}: ${r.stderr}`);
      assert.doesNotMatch(r.stderr, /Sanitizer|runtime error/, v.name);
      return readFileSync(out);
    });
    for (const f of files) assert.ok(f.equals(files[0]), `${name}: the builds differ`);
  }
});

test('help lists convert to GGUF', () => {
  const r = run(CLI, ['help']);
  assert.match(r.stdout + r.stderr, /attnlab convert --model PATH \[--tokenizer T\] --out X\.gguf \[--dtype f16\|f32\]/);
});
