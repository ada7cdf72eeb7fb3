/* gguf_write.c — a model and its tokenizer as one GGUF file (version 3, llama.cpp's format), so
 * llama.cpp, ollama and LM Studio run it: MiniMind as llama.cpp's `qwen3` (`qwen3moe` for MoE),
 * llama2.c's models as `llama`. The layout (ggml's gguf.h), all little-endian:
 *   "GGUF", uint32 version 3, uint64 tensor count, uint64 metadata count;
 *   each metadata entry: a string key, a uint32 type, the value (a string is a uint64 length and
 *   its bytes, no NUL; an array a uint32 element type, a uint64 count and the elements);
 *   each tensor: a string name, uint32 n_dims, uint64 ne[n_dims] (the fastest-varying dimension
 *   first: the row-major shape reversed, so nn.Linear's [out, in] is ne {in, out}), uint32 ggml
 *   type (0 F32, 1 F16), uint64 offset into the data;
 *   zeros up to a multiple of general.alignment (32), then the data: each tensor at its offset,
 *   a multiple of 32, and padded with zeros to the next (the last too: llama.cpp reads the data
 *   as the sum of the padded sizes). */
#include "attnlab/io.h"
#include "base/fault.h"
#include "base/internal.h"
#include "base/text.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define GGUF_ALIGN 32
/* An attention-only model's FFN is written as SwiGLU of this width with every weight zero: it adds
 * exactly +0 (silu(0) · 0 = 0, a sum of zeros is 0), where llama.cpp refuses a width of 0 (its
 * tensor check divides by each dimension). 32: whole blocks for llama.cpp's quantizers. */
#define ZERO_FFN 32
/* llama.cpp's YaRN correction betas: its qwen3 reads none from the file. */
#define GGML_BETA_FAST 32.0
#define GGML_BETA_SLOW 1.0

enum { T_UINT32 = 4, T_INT32 = 5, T_FLOAT32 = 6, T_BOOL = 7, T_STRING = 8, T_ARRAY = 9 };
enum { GGML_F32 = 0, GGML_F16 = 1 };

typedef struct {
    char name[48];
    int n_dims;
    int64_t ne[3];     /* ggml's order: ne[0] the fastest */
    al_model_param p;
    int64_t layer;
    int64_t n_parts;   /* experts stacked on the slowest dimension (1: a plain weight) */
    int zero;          /* 1: all zeros (an attention-only model's FFN) */
    int32_t type;      /* GGML_F32 or GGML_F16 */
    uint64_t offset;   /* into the data */
    uint64_t nbytes;
} gguf_tensor;

typedef struct {
    al_text w;
    uint64_t n_kv;
    const al_model *m;
    const al_model_hparams *hp;
    const al_tokenizer *tok;
    const char *arch;
    const char *name;
    char *text;        /* [text_cap] one token's text */
    int64_t text_cap;
    int32_t *merges;   /* [n_merges, 2] */
    int64_t n_merges;
    gguf_tensor *t;
    int64_t n_t;
    int f16;
    float *part;       /* [part_cap] one part's floats, read from the model's own layout */
    int64_t part_cap;
} gguf_writer;

/* ---- bytes ------------------------------------------------------------------------------------ */

static void put_u32(al_text *w, uint32_t v) {
    const uint8_t b[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
    al_text_put(w, b, 4);
}

static void put_u64(al_text *w, uint64_t v) {
    put_u32(w, (uint32_t)v);
    put_u32(w, (uint32_t)(v >> 32));
}

static void put_f32(al_text *w, float f) {
    uint32_t b;
    memcpy(&b, &f, 4);
    put_u32(w, b);
}

static void put_str(al_text *w, const char *s, size_t n) {
    put_u64(w, n);
    al_text_put(w, s, n);
}

static void put_zeros(al_text *w, uint64_t n) {
    static const uint8_t z[GGUF_ALIGN] = {0};
    for (; n > 0; n -= n < GGUF_ALIGN ? n : GGUF_ALIGN) al_text_put(w, z, n < GGUF_ALIGN ? (size_t)n : GGUF_ALIGN);
}

static uint64_t pad_to(uint64_t n) { return (GGUF_ALIGN - n % GGUF_ALIGN) % GGUF_ALIGN; }

/* ---- metadata --------------------------------------------------------------------------------- */

static void key(gguf_writer *g, const char *k, uint32_t type) {
    char full[96];
    /* "%s." keys name the architecture's own (llama.cpp's LLM_KV_* with the arch first). */
    if (k[0] == '.') al_snprintf(full, sizeof full, "%s%s", g->arch, k);
    else al_snprintf(full, sizeof full, "%s", k);
    put_str(&g->w, full, strlen(full));
    put_u32(&g->w, type);
    g->n_kv++;
}

static void kv_u32(gguf_writer *g, const char *k, int64_t v) {
    key(g, k, T_UINT32);
    put_u32(&g->w, (uint32_t)v);
}

static void kv_f32(gguf_writer *g, const char *k, double v) {
    key(g, k, T_FLOAT32);
    put_f32(&g->w, (float)v);
}

static void kv_bool(gguf_writer *g, const char *k, int v) {
    key(g, k, T_BOOL);
    const uint8_t b = v ? 1 : 0;
    al_text_put(&g->w, &b, 1);
}

static void kv_str(gguf_writer *g, const char *k, const char *v) {
    key(g, k, T_STRING);
    put_str(&g->w, v, strlen(v));
}

static void kv_array(gguf_writer *g, const char *k, uint32_t elem, int64_t n) {
    key(g, k, T_ARRAY);
    put_u32(&g->w, elem);
    put_u64(&g->w, (uint64_t)n);
}

/* The tokenizer's text of id into g->text; its length (al_tok_gguf_token's, checked by the caller's
 * size query first). */
static int64_t token_text(gguf_writer *g, int32_t id, int32_t *type) {
    return al_tok_gguf_token(g->tok, id, g->text, g->text_cap, type);
}

static void write_tokenizer(gguf_writer *g) {
    const int llama = !strcmp(al_tok_gguf_model(g->tok), "llama");
    const int32_t n = (int32_t)al_tok_vocab_size(g->tok);
    kv_str(g, "tokenizer.ggml.model", al_tok_gguf_model(g->tok));
    /* MiniMind's split is GPT-2's pattern ('s|'t|...|\s+(?!\S)|\s+): llama.cpp's pre-tokenizer "gpt-2". */
    if (!llama) kv_str(g, "tokenizer.ggml.pre", "gpt-2");
    kv_array(g, "tokenizer.ggml.tokens", T_STRING, n);
    for (int32_t id = 0; id < n; id++) put_str(&g->w, g->text, (size_t)token_text(g, id, NULL));
    kv_array(g, "tokenizer.ggml.token_type", T_INT32, n);
    for (int32_t id = 0; id < n; id++) {
        int32_t type = 0;
        al_tok_gguf_token(g->tok, id, NULL, 0, &type);
        put_u32(&g->w, (uint32_t)type);
    }
    if (llama) {
        kv_array(g, "tokenizer.ggml.scores", T_FLOAT32, n);
        for (int32_t id = 0; id < n; id++) put_f32(&g->w, al_tok_score(g->tok, id));
    } else {
        kv_array(g, "tokenizer.ggml.merges", T_STRING, g->n_merges);
        for (int64_t r = 0; r < g->n_merges; r++) {
            /* "left right", each half its token's text */
            const int64_t la = al_tok_gguf_token(g->tok, g->merges[2 * r], NULL, 0, NULL);
            const int64_t lb = al_tok_gguf_token(g->tok, g->merges[2 * r + 1], NULL, 0, NULL);
            put_u64(&g->w, (uint64_t)(la + 1 + lb));
            al_text_put(&g->w, g->text, (size_t)token_text(g, g->merges[2 * r], NULL));
            al_text_put(&g->w, " ", 1);
            al_text_put(&g->w, g->text, (size_t)token_text(g, g->merges[2 * r + 1], NULL));
        }
    }
    /* llama2.c's run.c: BOS 1 first, EOS 2, <unk> 0. MiniMind (MiniMindConfig's bos_token_id and
     * eos_token_id): <|im_start|> 1 and <|im_end|> 2, and its encode adds neither. */
    kv_u32(g, "tokenizer.ggml.bos_token_id", AL_TOK_BOS);
    kv_u32(g, "tokenizer.ggml.eos_token_id", AL_TOK_EOS);
    if (llama) kv_u32(g, "tokenizer.ggml.unknown_token_id", AL_TOK_UNK);
    kv_bool(g, "tokenizer.ggml.add_bos_token", llama);
    kv_bool(g, "tokenizer.ggml.add_eos_token", 0);
}

static void write_metadata(gguf_writer *g) {
    const al_model_hparams *hp = g->hp;
    kv_str(g, "general.architecture", g->arch);
    if (g->name) kv_str(g, "general.name", g->name);
    kv_u32(g, "general.alignment", GGUF_ALIGN);
    kv_u32(g, "general.file_type", g->f16 ? 1 : 0); /* LLAMA_FTYPE_ALL_F32, _MOSTLY_F16 */
    kv_u32(g, ".vocab_size", hp->vocab);
    kv_u32(g, ".context_length", hp->max_seq);
    kv_u32(g, ".embedding_length", hp->hidden);
    kv_u32(g, ".block_count", hp->n_layers);
    kv_u32(g, ".feed_forward_length", hp->n_experts ? hp->moe_ffn_hidden : hp->ffn_hidden ? hp->ffn_hidden : ZERO_FFN);
    kv_u32(g, ".attention.head_count", hp->n_heads);
    kv_u32(g, ".attention.head_count_kv", hp->n_kv_heads);
    kv_u32(g, ".attention.key_length", hp->head_dim);
    kv_u32(g, ".attention.value_length", hp->head_dim);
    kv_u32(g, ".rope.dimension_count", hp->head_dim);
    kv_f32(g, ".rope.freq_base", hp->rope_base);
    kv_f32(g, ".attention.layer_norm_rms_epsilon", hp->eps);
    if (hp->n_experts) {
        kv_u32(g, ".expert_count", hp->n_experts);
        kv_u32(g, ".expert_used_count", hp->top_k);
        kv_u32(g, ".expert_feed_forward_length", hp->moe_ffn_hidden);
    }
    if (hp->yarn_factor != 0.0) {
        /* MiniMind: the frequencies YaRN-scaled when max_seq passes the original context, and
         * cos and sin times attention_factor a whenever rope_scaling is set. llama.cpp multiplies
         * them by rope.scaling.attn_factor · (1 + 0.1 ln s) (its context cancels its own mscale;
         * ggml's rope adds 1 + 0.1 ln s), so a / (1 + 0.1 ln s) gives a; factor 1 (no scaling of
         * the frequencies) where MiniMind scales none. */
        const double s = hp->max_seq > hp->yarn_original_max ? hp->yarn_factor : 1.0;
        kv_str(g, ".rope.scaling.type", "yarn");
        kv_f32(g, ".rope.scaling.factor", s);
        kv_u32(g, ".rope.scaling.original_context_length", hp->yarn_original_max);
        kv_f32(g, ".rope.scaling.attn_factor", hp->attention_factor / (1.0 + 0.1 * log(s)));
    }
    write_tokenizer(g);
}

/* ---- tensors ---------------------------------------------------------------------------------- */

static const char *gguf_name(al_model_param p) {
    switch (p) {
    case AL_MP_EMBED: return "token_embd";
    case AL_MP_FINAL_NORM: return "output_norm";
    case AL_MP_LM_HEAD: return "output";
    case AL_MP_ATTN_NORM: return "attn_norm";
    case AL_MP_WQ: return "attn_q";
    case AL_MP_WK: return "attn_k";
    case AL_MP_WV: return "attn_v";
    case AL_MP_WO: return "attn_output";
    case AL_MP_Q_NORM: return "attn_q_norm";
    case AL_MP_K_NORM: return "attn_k_norm";
    case AL_MP_FFN_NORM: return "ffn_norm";
    case AL_MP_GATE: return "ffn_gate";
    case AL_MP_UP: return "ffn_up";
    case AL_MP_DOWN: return "ffn_down";
    case AL_MP_ROUTER: return "ffn_gate_inp";
    case AL_MP_EXPERT_GATE: return "ffn_gate_exps";
    case AL_MP_EXPERT_UP: return "ffn_up_exps";
    case AL_MP_EXPERT_DOWN: return "ffn_down_exps";
    default: return NULL;
    }
}

/* Adds weight p of layer `layer` (-1: the model's) to the list, if the model has it. */
static void add_tensor(gguf_writer *g, al_model_param p, int64_t layer) {
    const al_model_hparams *hp = g->hp;
    int64_t shape[2] = {0, 0};
    int nd = al_model_param_shape(hp, p, shape);
    gguf_tensor t = {.p = p, .layer = layer < 0 ? 0 : layer, .n_parts = 1};
    if (nd <= 0) return;
    if ((p == AL_MP_GATE || p == AL_MP_UP || p == AL_MP_DOWN) && hp->ffn_hidden == 0) {
        if (hp->n_experts) return; /* a MoE's layers have experts instead */
        shape[p == AL_MP_DOWN ? 1 : 0] = ZERO_FFN;
        t.zero = 1;
    }
    if (layer < 0) al_snprintf(t.name, sizeof t.name, "%s.weight", gguf_name(p));
    else al_snprintf(t.name, sizeof t.name, "blk.%" PRId64 ".%s.weight", layer, gguf_name(p));
    t.n_dims = nd;
    for (int d = 0; d < nd; d++) t.ne[d] = shape[nd - 1 - d];
    if (p >= AL_MP_EXPERT_GATE && p <= AL_MP_EXPERT_DOWN) {
        t.n_parts = hp->n_experts;
        t.ne[t.n_dims++] = hp->n_experts;
    }
    /* float16 for the matrices; norms stay float32, as llama.cpp's converter keeps them. */
    t.type = g->f16 && t.n_dims >= 2 ? GGML_F16 : GGML_F32;
    int64_t numel = 1;
    for (int d = 0; d < t.n_dims; d++) numel *= t.ne[d];
    t.nbytes = (uint64_t)numel * (t.type == GGML_F16 ? 2 : 4);
    if (g->t) g->t[g->n_t] = t;
    g->n_t++;
}

/* Every tensor in llama.cpp's order (its own converter's: the model's, then layer by layer);
 * g->t NULL: counts them. */
static void list_tensors(gguf_writer *g) {
    const al_model_hparams *hp = g->hp;
    g->n_t = 0;
    add_tensor(g, AL_MP_EMBED, -1);
    add_tensor(g, AL_MP_FINAL_NORM, -1);
    add_tensor(g, AL_MP_LM_HEAD, -1); /* none when tied: llama.cpp then reads token_embd */
    for (int64_t l = 0; l < hp->n_layers; l++)
        for (int p = AL_MP_ATTN_NORM; p < AL_MP_COUNT; p++)
            if (p != AL_MP_FINAL_NORM && p != AL_MP_LM_HEAD) add_tensor(g, (al_model_param)p, l);
    uint64_t at = 0;
    for (int64_t i = 0; g->t && i < g->n_t; i++) {
        g->t[i].offset = at;
        at += g->t[i].nbytes + pad_to(g->t[i].nbytes);
    }
}

/* The floats of part k of tensor t and their count, *x NULL for zeros. Read as float32 whatever
 * the model holds them in (al_model_read_param: a loaded model keeps its maps only as GEMM
 * panels, perhaps 16-bit), into g->part, which holds the largest part. A read that fails is
 * refused with the tensor's name: never written as zeros. */
static int64_t part_numel(const gguf_tensor *t) { return (int64_t)(t->nbytes / (t->type == GGML_F16 ? 2 : 4)) / t->n_parts; }

static al_status part_data(const gguf_writer *g, const gguf_tensor *t, int64_t k, const float **x, int64_t *numel,
                           al_error *err) {
    *numel = part_numel(t);
    *x = NULL;
    if (t->zero) return AL_OK;
    const int64_t n = AL_FAULT(AL_FAULT_WEIGHT_READ) && t->p == AL_MP_WK
                          ? -1
                          : al_model_read_param(g->m, t->p, t->layer, k, g->part, g->part_cap);
    if (n != *numel)
        return al_fail(err, AL_ERR_ARG, "GGUF export: tensor '%s' (part %" PRId64 "): the model's weights could not be "
                       "read (%" PRId64 " of %" PRId64 " numbers)", t->name, k, n < 0 ? 0 : n, *numel);
    *x = g->part;
    return AL_OK;
}

static al_status write_file(gguf_writer *g, al_error *err) {
    al_text *w = &g->w;
    al_text_put(w, "GGUF", 4);
    put_u32(w, 3);
    put_u64(w, (uint64_t)g->n_t);
    put_u64(w, g->n_kv); /* counted by the measuring pass; the same 8 bytes in both */
    g->n_kv = 0;
    write_metadata(g);
    for (int64_t i = 0; i < g->n_t; i++) {
        const gguf_tensor *t = &g->t[i];
        put_str(w, t->name, strlen(t->name));
        put_u32(w, (uint32_t)t->n_dims);
        for (int d = 0; d < t->n_dims; d++) put_u64(w, (uint64_t)t->ne[d]);
        put_u32(w, (uint32_t)t->type);
        put_u64(w, t->offset);
    }
    put_zeros(w, pad_to(w->len));
    for (int64_t i = 0; i < g->n_t; i++) {
        const gguf_tensor *t = &g->t[i];
        for (int64_t k = 0; k < t->n_parts; k++) {
            int64_t numel;
            const float *x;
            const al_status st = part_data(g, t, k, &x, &numel, err);
            if (st != AL_OK) return st;
            if (!x) put_zeros(w, (uint64_t)numel * (t->type == GGML_F16 ? 2 : 4));
            for (int64_t j = 0; x && j < numel; j++) {
                if (t->type == GGML_F32) {
                    put_f32(w, x[j]);
                    continue;
                }
                const uint16_t h = al_f32_to_f16_bits(x[j]);
                const uint8_t le[2] = {(uint8_t)h, (uint8_t)(h >> 8)};
                al_text_put(w, le, 2);
            }
        }
        put_zeros(w, pad_to(t->nbytes));
    }
    return AL_OK;
}

/* ---- what can be written ---------------------------------------------------------------------- */

/* The architecture llama.cpp runs the model as, or NULL after al_fail: what MiniMind computes and
 * llama.cpp's graph does not is refused, never written approximately. */
static const char *choose_arch(const al_model_hparams *hp, al_error *err) {
    if (hp->rope_style == AL_ROPE_INTERLEAVED) {
        /* llama2.c rotates dimensions (2i, 2i+1): llama.cpp's normal RoPE, no permutation. */
        if (hp->qk_norm || hp->n_experts || hp->yarn_factor != 0.0) {
            al_fail(err, AL_ERR_CONFIG, "GGUF: a model with interleaved RoPE is written as llama.cpp's llama, which has "
                    "no QK-Norm, MoE or YaRN");
            return NULL;
        }
        return "llama";
    }
    /* Half-split RoPE (rotate_half) is llama.cpp's NEOX mode, qwen3's, with QK-Norm before it. */
    if (!hp->qk_norm) {
        al_fail(err, AL_ERR_CONFIG, "GGUF: a MiniMind without QK-Norm (q_norm, k_norm) is not written: llama.cpp's "
                "qwen3 applies them");
        return NULL;
    }
    if (hp->n_experts && !hp->norm_topk_prob) {
        al_fail(err, AL_ERR_CONFIG, "GGUF: a MoE with norm_topk_prob false cannot be written: llama.cpp's qwen3moe "
                "always renormalises the top-%" PRId64 " weights", hp->top_k);
        return NULL;
    }
    if (hp->yarn_factor != 0.0) {
        /* ggml's ramp over the pairs is MiniMind's when its betas are ggml's and the upper end
         * needs no clamp (MiniMind clamps it at head_dim/2 - 1, ggml at head_dim - 1). */
        const double high = ceil((double)hp->head_dim * log((double)hp->yarn_original_max / (GGML_BETA_SLOW * 6.283185307179586)) /
                                 (2.0 * log(hp->rope_base)));
        if (hp->yarn_beta_fast != GGML_BETA_FAST || hp->yarn_beta_slow != GGML_BETA_SLOW) {
            al_fail(err, AL_ERR_CONFIG, "GGUF: YaRN with beta_fast %g and beta_slow %g cannot be written: llama.cpp's "
                    "qwen3 uses 32 and 1", hp->yarn_beta_fast, hp->yarn_beta_slow);
            return NULL;
        }
        if (hp->max_seq > hp->yarn_original_max && high > (double)(hp->head_dim / 2 - 1)) {
            al_fail(err, AL_ERR_CONFIG, "GGUF: this YaRN ramp ends past pair %" PRId64 ", where MiniMind stops it and "
                    "llama.cpp does not: it cannot be written", hp->head_dim / 2 - 1);
            return NULL;
        }
    }
    return hp->n_experts ? "qwen3moe" : "qwen3";
}

/* float16 holds every matrix (|x| < 65520, finite), or al_fail names the first that it cannot. */
static al_status check_f16(const gguf_writer *g, al_error *err) {
    for (int64_t i = 0; i < g->n_t; i++) {
        const gguf_tensor *t = &g->t[i];
        for (int64_t k = 0; t->type == GGML_F16 && k < t->n_parts; k++) {
            int64_t numel;
            const float *x;
            const al_status st = part_data(g, t, k, &x, &numel, err);
            if (st != AL_OK) return st;
            for (int64_t j = 0; x && j < numel; j++)
                if ((al_f32_to_f16_bits(x[j]) & 0x7C00) == 0x7C00)
                    return al_fail(err, AL_ERR_NONFINITE, "tensor '%s': element %" PRId64 " is %.9g, which float16 "
                                   "cannot hold (its largest value is 65504)", t->name, k * numel + j, (double)x[j]);
        }
    }
    return AL_OK;
}

al_status al_model_export_gguf(const al_model *m, const al_tokenizer *tok, al_dtype dtype, const char *name,
                               uint8_t **out, size_t *size, al_error *err) {
    if (out) *out = NULL;
    if (size) *size = 0;
    if (!m || !tok || !out || !size) return al_fail(err, AL_ERR_ARG, "GGUF export: NULL argument");
    if (dtype != AL_DTYPE_F32 && dtype != AL_DTYPE_F16)
        return al_fail(err, AL_ERR_ARG, "GGUF export: dtype must be float32 or float16");
    gguf_writer g = {.m = m, .hp = al_model_get_hparams(m), .tok = tok, .name = name, .f16 = dtype == AL_DTYPE_F16};
    if (!(g.arch = choose_arch(g.hp, err))) return err ? err->status : AL_ERR_CONFIG;
    const int64_t n_tok = al_tok_vocab_size(tok);
    if (n_tok != g.hp->vocab)
        return al_fail(err, AL_ERR_CONFIG, "GGUF: the tokenizer has %" PRId64 " tokens, the model %" PRId64,
                       n_tok, g.hp->vocab);
    /* The longest token text, for the scratch it is written through. */
    for (int32_t id = 0; id < n_tok; id++) {
        const int64_t n = al_tok_gguf_token(tok, id, NULL, 0, NULL);
        if (n > g.text_cap) g.text_cap = n;
    }
    g.n_merges = al_tok_merges(tok, NULL, 0);
    list_tensors(&g);
    g.text = malloc((size_t)g.text_cap + 1);
    g.merges = malloc(((size_t)g.n_merges + 1) * 2 * sizeof *g.merges);
    g.t = malloc((size_t)g.n_t * sizeof *g.t);
    al_status st = g.text && g.merges && g.t ? AL_OK : al_fail(err, AL_ERR_NOMEM, "GGUF export: out of memory");
    if (st == AL_OK) {
        al_tok_merges(tok, g.merges, 2 * g.n_merges);
        list_tensors(&g);
        for (int64_t i = 0; i < g.n_t; i++) g.part_cap = part_numel(&g.t[i]) > g.part_cap ? part_numel(&g.t[i]) : g.part_cap;
        if (!(g.part = malloc((size_t)(g.part_cap > 0 ? g.part_cap : 1) * sizeof *g.part)))
            st = al_fail(err, AL_ERR_NOMEM, "GGUF export: out of memory");
    }
    if (st == AL_OK) {
        st = check_f16(&g, err);
    }
    /* Measure, then write: each pass reads every weight, and a read that fails ends it. */
    if (st == AL_OK) {
        al_text_init_bytes(&g.w, NULL, 0);
        st = write_file(&g, err);
    }
    const uint64_t total = g.w.len;
    if (st == AL_OK && total > SIZE_MAX)
        st = al_fail(err, AL_ERR_LIMIT, "GGUF file of %" PRIu64 " bytes exceeds this address space", total);
    else if (st == AL_OK && !(*out = malloc((size_t)total)))
        st = al_fail(err, AL_ERR_NOMEM, "GGUF export: out of memory for %" PRIu64 " bytes", total);
    if (st == AL_OK) {
        al_text_init_bytes(&g.w, *out, (size_t)total);
        st = write_file(&g, err);
        if (st == AL_OK && g.w.len != total) st = al_fail(err, AL_ERR_ARG, "GGUF export: the size changed while writing");
        else if (st == AL_OK) *size = (size_t)total;
    }
    if (st != AL_OK) free(*out), *out = NULL;
    free(g.text), free(g.merges), free(g.t), free(g.part);
    return st == AL_OK ? al_ok(err) : st;
}
