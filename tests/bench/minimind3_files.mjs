// minimind3_files.mjs — a MiniMind-3-shaped model as files, for the bench's whole-model rows: a
// folder with config.json and a float32 model.safetensors of uniform random weights (norms 1),
// written here, and its float16 twin written by `attnlab convert --dtype f16` (rounded to
// nearest). The values are made-up bytes, not a model: the rows time and weigh them only.
import { execFileSync } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';

// MiniMind-3's config (MiniMindConfig's defaults): the shape `attnlab bench --preset minimind-3` runs.
const CONFIG = {
  architectures: ['MiniMindForCausalLM'], model_type: 'minimind', hidden_size: 768, num_hidden_layers: 8,
  num_attention_heads: 8, num_key_value_heads: 4, vocab_size: 6400, max_position_embeddings: 32768,
  rope_theta: 1e6, rms_norm_eps: 1e-6, tie_word_embeddings: true, use_moe: false,
};
const FFN = 2432; // ceil(768 · π / 64) · 64

function tensors() {
  const { hidden: E = CONFIG.hidden_size, num_hidden_layers: L } = { ...CONFIG, hidden: CONFIG.hidden_size };
  const D = E / CONFIG.num_attention_heads, KV = CONFIG.num_key_value_heads * D;
  const list = [['model.embed_tokens.weight', [CONFIG.vocab_size, E]], ['model.norm.weight', [E]]];
  for (let l = 0; l < L; l++) {
    const p = `model.layers.${l}.`;
    list.push([`${p}input_layernorm.weight`, [E]], [`${p}self_attn.q_proj.weight`, [E, E]], [`${p}self_attn.k_proj.weight`, [KV, E]],
      [`${p}self_attn.v_proj.weight`, [KV, E]], [`${p}self_attn.o_proj.weight`, [E, E]], [`${p}self_attn.q_norm.weight`, [D]],
      [`${p}self_attn.k_norm.weight`, [D]], [`${p}post_attention_layernorm.weight`, [E]], [`${p}mlp.gate_proj.weight`, [FFN, E]],
      [`${p}mlp.up_proj.weight`, [FFN, E]], [`${p}mlp.down_proj.weight`, [E, FFN]]);
  }
  return list;
}

// Writes <dir>/f32 and <dir>/f16 once (kept for later runs); returns their paths.
export function minimind3Folders(cli, dir) {
  const f32 = join(dir, 'f32'), f16 = join(dir, 'f16');
  if (!existsSync(join(f32, 'model.safetensors'))) {
    mkdirSync(f32, { recursive: true });
    writeFileSync(join(f32, 'config.json'), JSON.stringify(CONFIG, null, 2));
    const list = tensors();
    const header = {};
    let at = 0;
    for (const [name, shape] of list) {
      const bytes = 4 * shape.reduce((a, b) => a * b, 1);
      header[name] = { dtype: 'F32', shape, data_offsets: [at, at + bytes] };
      at += bytes;
    }
    let json = JSON.stringify(header);
    json += ' '.repeat((8 - ((8 + json.length) % 8)) % 8);
    const fd = openSync(join(f32, 'model.safetensors'), 'w');
    const len = Buffer.alloc(8);
    len.writeBigUInt64LE(BigInt(json.length));
    writeSync(fd, len);
    writeSync(fd, Buffer.from(json));
    let seed = 12345;
    for (const [, shape] of list) {
      const n = shape.reduce((a, b) => a * b, 1), v = new Float32Array(n);
      if (shape.length === 1) v.fill(1);
      else for (let i = 0; i < n; i++) { seed = (Math.imul(seed, 1103515245) + 12345) >>> 0; v[i] = (seed / 2 ** 32 - 0.5) * 0.08; }
      writeSync(fd, Buffer.from(v.buffer));
    }
    closeSync(fd);
  }
  if (!existsSync(join(f16, 'model.safetensors'))) execFileSync(cli, ['convert', '--model', f32, '--out', f16, '--dtype', 'f16', '--force']);
  return { f32, f16 };
}
