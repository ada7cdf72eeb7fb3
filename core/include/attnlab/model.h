/* attnlab/model.h — the model's maths: its ops (embedding, linear, norms), RoPE,
 * and the attention layer with its hyper-parameters, its runtime capacity and its KV cache.
 * Part of attnlab.h. */
#ifndef ATTNLAB_MODEL_H
#define ATTNLAB_MODEL_H

#include "attnlab/kernels.h"
#include "attnlab/torch.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------------------------
 * Kernels (pure functions on caller memory; shapes given by the size arguments, last).
 * They do not check their arguments beyond asserts: callers validate input first.
 * ------------------------------------------------------------------------------------------ */

/* out[i, :] = table[ids[i], :].  Returns AL_ERR_ARG if an id is outside [0, vocab). */
al_status al_embedding_forward(float *out,            /* [n, dim] */
                               const int64_t *ids,    /* [n] */
                               const float *table,    /* [vocab, dim] */
                               int64_t n, int64_t vocab, int64_t dim);

/* y = x Wᵀ (PyTorch's nn.Linear weight layout [out, in], no bias). */
void al_linear_forward(float *y,        /* [n, out_dim] */
                       const float *x,  /* [n, in_dim] */
                       const float *w,  /* [out_dim, in_dim] */
                       int64_t n, int64_t in_dim, int64_t out_dim);

/* RMSNorm, as the seeds write it: y = weight * x / sqrt(mean(x²) + eps), per row. */
void al_rmsnorm_forward(float *y,            /* [n, dim] */
                        const float *x,      /* [n, dim] */
                        const float *weight, /* [dim] */
                        int64_t n, int64_t dim, float eps);

/* LayerNorm (nn.LayerNorm): y = (x - mean) / sqrt(var + eps) * weight + bias, biased var. */
void al_layernorm_forward(float *y,            /* [n, dim] */
                          const float *x,      /* [n, dim] */
                          const float *weight, /* [dim] */
                          const float *bias,   /* [dim] */
                          int64_t n, int64_t dim, float eps);

/* ------------------------------------------------------------------------------------------
 * RoPE (rotary position embedding), half-split convention of MiniMind:
 * dimension i is paired with i + head_dim/2, freq_i = base^(-2i/head_dim), angle = m · freq_i.
 * ------------------------------------------------------------------------------------------ */

/* freq[i] = 1 / base^(2i/head_dim), i < head_dim/2, rounded as PyTorch's float32 pow. */
al_status al_rope_freqs(float *freq /* [head_dim/2] */, int64_t head_dim, double base);

/* cos/sin tables: cos[m, i] = cos[m, i + head_dim/2] = cos(m · freq_i), same for sin. */
al_status al_rope_table(float *cos, float *sin, /* [end, head_dim] each */
                        int64_t end, int64_t head_dim, double base);

/* angles[m, i] = m · freq_i (float32, unwrapped), for drawing. */
al_status al_rope_angles(float *angles /* [end, head_dim/2] */,
                         int64_t end, int64_t head_dim, double base, al_error *err);

/* In place: x = x·cos + rotate_half(x)·sin with rotate_half(x) = [-x2, x1].
 * Token t of x uses row t of cos/sin (callers pass the rows for the tokens' positions). */
void al_rope_apply(float *x,         /* [n_tok, n_heads, head_dim] */
                   const float *cos, /* [n_tok, head_dim] */
                   const float *sin, /* [n_tok, head_dim] */
                   int64_t n_tok, int64_t n_heads, int64_t head_dim);

/* In place, the interleaved convention of Llama and llama2.c: dimensions 2i and 2i+1 form pair
 * i, rotated by m · freq_i: (x₂ᵢ, x₂ᵢ₊₁) ← (x₂ᵢ·cos − x₂ᵢ₊₁·sin, x₂ᵢ·sin + x₂ᵢ₊₁·cos).
 * cos/sin as al_rope_table gives them (only each row's first head_dim/2 values are read). */
void al_rope_apply_interleaved(float *x,         /* [n_tok, n_heads, head_dim] */
                               const float *cos, /* [n_tok, head_dim] */
                               const float *sin, /* [n_tok, head_dim] */
                               int64_t n_tok, int64_t n_heads, int64_t head_dim);

/* ------------------------------------------------------------------------------------------
 * Attention layer configuration
 * ------------------------------------------------------------------------------------------ */

/* The layer's hyper-parameters: what a checkpoint fixes (llama.cpp's model parameters). */
typedef struct {
    int64_t hidden;     /* model width (input and output features) */
    int64_t n_heads;    /* query heads */
    int64_t n_kv_heads; /* key/value heads; n_heads % n_kv_heads == 0 (GQA; 1 = MQA) */
    int64_t head_dim;   /* even, for RoPE's pairs */
    double rope_base;   /* RoPE theta (seeds: 10000; MiniMind-3: 1e6) */
    float eps;          /* RMSNorm eps of QK-Norm (seeds: 1e-6) */
    int32_t qk_norm;    /* 1: RMSNorm per head on Q and K before RoPE (the seeds); 0: skip */
} al_attn_hparams;

/* What one run reserves memory for (llama.cpp's context parameters): scratch and caches are
 * sized for max_batch sequences of max_seq positions, so no forward call allocates. */
typedef struct {
    int64_t max_batch; /* sequences run together */
    int64_t max_seq;   /* positions available (RoPE table, cache capacity) */
} al_attn_capacity;

/* The seeds' SimpleAttention: hidden 16, 4 heads, 2 KV heads, head_dim 8, base 10000,
 * eps 1e-6, QK-Norm on. */
al_attn_hparams al_attn_hparams_default(void);
void al_attn_hparams_fill_default(al_attn_hparams *hp); /* the same into *hp, for bindings */

/* AL_OK, or AL_ERR_CONFIG / AL_ERR_LIMIT with a message naming the offending field. */
al_status al_attn_hparams_check(const al_attn_hparams *hp, al_error *err);

/* The hyper-parameters, the capacity, and the bytes they need together against AL_MAX_BYTES. */
al_status al_attn_check(const al_attn_hparams *hp, const al_attn_capacity *cap, al_error *err);

/* Bytes the layer (weights, RoPE table, scratch) and one cache would allocate; -1 if a field is
 * out of range. Used to refuse sizes beyond AL_MAX_BYTES with a useful message. */
int64_t al_attn_bytes_needed(const al_attn_hparams *hp, const al_attn_capacity *cap);

/* ------------------------------------------------------------------------------------------
 * KV cache: K (after QK-Norm and RoPE) and V of every past token.
 * ------------------------------------------------------------------------------------------ */

typedef struct al_kv_cache al_kv_cache;

/* A cache for the layer `hp` describes, holding up to cap->max_batch × cap->max_seq tokens. */
al_status al_kv_cache_create(const al_attn_hparams *hp, const al_attn_capacity *cap,
                             al_kv_cache **out, al_error *err);
void al_kv_cache_free(al_kv_cache *c);
void al_kv_cache_reset(al_kv_cache *c); /* length back to 0, memory kept */
/* Forgets the tokens after the first len (rewind, e.g. to time the same decode step again).
 * AL_ERR_ARG if len is negative or longer than what is stored. */
al_status al_kv_cache_truncate(al_kv_cache *c, int64_t len);

int64_t al_kv_cache_len(const al_kv_cache *c);   /* tokens stored per sequence; -1 if NULL */
int64_t al_kv_cache_batch(const al_kv_cache *c); /* batch of the stored sequences (0 if empty) */

/* Bytes held by K and V for the tokens stored: 2 · batch · len · n_kv_heads · head_dim · 4. */
int64_t al_kv_cache_bytes(const al_kv_cache *c);

/* The same formula for any configuration: what a cache of `len` tokens costs with
 * n_kv_heads KV heads (pass n_heads for MHA, 1 for MQA); -1 for a negative argument or a
 * size beyond int64. */
int64_t al_kv_cache_bytes_for(int64_t batch, int64_t len, int64_t n_kv_heads, int64_t head_dim);

/* How query heads share the cache's K/V heads: one each (MHA: n_kv_heads = n_heads, checked
 * first, so one head is MHA), one for all (MQA: n_kv_heads = 1), or groups (GQA); INVALID for
 * counts out of [1, AL_MAX_HEADS], more KV heads than heads, or a count that does not divide. */
typedef enum { AL_KV_MHA = 0, AL_KV_GQA, AL_KV_MQA, AL_KV_INVALID } al_kv_sharing;
al_kv_sharing al_kv_sharing_of(int64_t n_heads, int64_t n_kv_heads);

/* Copies the stored K or V out, in the seeds' layout [batch, len, n_kv_heads, head_dim]. */
al_status al_kv_cache_read(const al_kv_cache *c, int which_v, float *out, int64_t cap);

/* ------------------------------------------------------------------------------------------
 * Attention layer: the seeds' SimpleAttention
 *   q = x Wqᵀ, k = x Wkᵀ, v = x Wvᵀ, split into heads;
 *   q, k ← RMSNorm per head (QK-Norm), then RoPE at the tokens' absolute positions;
 *   k, v appended to the cache; query head h reads KV head h / (n_heads / n_kv_heads);
 *   scores = q kᵀ / √head_dim, causal mask on the last seq key columns, softmax (float32);
 *   out = (weights · v) merged over heads, then Wo.
 * ------------------------------------------------------------------------------------------ */

typedef struct al_attn al_attn;

typedef enum {
    AL_PARAM_Q_PROJ = 0, /* [n_heads·head_dim, hidden] */
    AL_PARAM_K_PROJ,     /* [n_kv_heads·head_dim, hidden] */
    AL_PARAM_V_PROJ,     /* [n_kv_heads·head_dim, hidden] */
    AL_PARAM_O_PROJ,     /* [hidden, n_heads·head_dim] */
    AL_PARAM_Q_NORM,     /* [head_dim] */
    AL_PARAM_K_NORM,     /* [head_dim] */
    AL_PARAM_COUNT
} al_attn_param;

/* Creates a layer with zeroed projections and norm weights of 1, with scratch for `cap`. */
al_status al_attn_create(const al_attn_hparams *hp, const al_attn_capacity *cap, al_attn **out,
                         al_error *err);
void al_attn_free(al_attn *a);
const al_attn_hparams *al_attn_get_hparams(const al_attn *a);   /* NULL if a is NULL */

/* The PyTorch state_dict name of a parameter ("q_proj.weight", ...; NULL for an invalid p)
 * and its shape: returns the number of dimensions (1 or 2), or -1 for an invalid p. */
const char *al_attn_param_name(al_attn_param p);
int al_attn_param_shape(const al_attn_hparams *hp, al_attn_param p, int64_t shape[2]);

/* Read-only view of a parameter inside the layer's single weight allocation, and its element
 * count; NULL for an invalid `p`. Changes nothing. */
const float *al_attn_get_param(const al_attn *a, al_attn_param p, int64_t *numel);

/* The same parameter for writing (loading weights): the layer repacks its projections for the
 * GEMM before the next forward call. NULL for an invalid `p`. */
float *al_attn_param_for_write(al_attn *a, al_attn_param p, int64_t *numel);

/* Fills the weights exactly as `SimpleAttention(...)` does right after torch.manual_seed:
 * nn.Linear init of q, k, v, o in that order, norm weights 1. */
void al_attn_init_torch(al_attn *a, al_rng *r);

/* Runs `seq` new tokens of each of `batch` sequences through the layer.
 * With cache == NULL the tokens are positions 0..seq-1 and attend only to each other (the
 * seeds' use_cache=False). With a cache they take positions len..len+seq-1, their K/V are
 * appended, and they attend to all len+seq keys (prefill when len == 0, decode when seq == 1).
 * attn_weights, if not NULL, receives the softmax weights [batch, n_heads, seq, len+seq];
 * attn_cap is its capacity in floats. */
al_status al_attn_forward(al_attn *a, al_kv_cache *cache,
                          float *out,                     /* [batch, seq, hidden] */
                          float *attn_weights, int64_t attn_cap,
                          const float *x,                 /* [batch, seq, hidden] */
                          int64_t batch, int64_t seq, al_error *err);

/* Intermediate projections for teaching (seeds' example 1):
 * q [batch, seq, n_heads, head_dim], k and v [batch, seq, n_kv_heads, head_dim], straight out of
 * the projections (before QK-Norm and RoPE). Any output pointer may be NULL. */
al_status al_attn_project_qkv(al_attn *a, float *q, float *k, float *v, const float *x,
                              int64_t batch, int64_t seq, al_error *err);

/* GQA's repeat_kv as an explicit copy: out[b, s, h, :] = kv[b, s, h / n_rep, :]. */
void al_repeat_kv(float *out,      /* [batch, seq, n_kv_heads·n_rep, head_dim] */
                  const float *kv, /* [batch, seq, n_kv_heads, head_dim] */
                  int64_t batch, int64_t seq, int64_t n_kv_heads, int64_t n_rep,
                  int64_t head_dim);

/* ------------------------------------------------------------------------------------------
 * The whole decoder: token embedding → n_layers blocks → final RMSNorm → lm_head.
 *   block: h = x + attention(RMSNorm(x)),  out = h + FFN(RMSNorm(h)),
 *   FFN(x) = down(silu(gate(x)) · up(x))   (SwiGLU; llama2.c's w1 = gate, w3 = up, w2 = down),
 *   or none in an attention-only model (ffn_hidden 0): out = h.
 * MiniMind's models (half-split RoPE, QK-Norm) and Llama / llama2.c's (interleaved RoPE, no
 * QK-Norm). Weights live in one allocation and are packed once for the GEMM; each layer has a
 * KV cache for the context reserved at create; a forward call allocates nothing.
 * ------------------------------------------------------------------------------------------ */

typedef enum { AL_ROPE_HALF_SPLIT = 0, AL_ROPE_INTERLEAVED = 1 } al_rope_style;

/* RoPE's pairs in a head of head_dim dimensions: head_dim/2 of them (-1 for an odd head_dim or
 * one out of [2, AL_MAX_HEAD_DIM]); pair i turns dimensions (i, i + head_dim/2) half-split
 * (MiniMind, Hugging Face's Llama) or (2i, 2i + 1) interleaved (llama2.c). */
int64_t al_rope_pairs(int64_t head_dim);
al_status al_rope_pair_dims(int32_t *dims /* [head_dim/2, 2] */, int64_t head_dim, al_rope_style style,
                            al_error *err);

typedef struct {
    int64_t vocab;      /* tokens */
    int64_t hidden;     /* model width */
    int64_t n_layers;
    int64_t n_heads;    /* query heads */
    int64_t n_kv_heads; /* key/value heads (GQA) */
    int64_t head_dim;   /* even */
    int64_t ffn_hidden; /* SwiGLU's inner width (MiniMind: intermediate_size); 0 in a dense
                         * model: attention-only, no FFN (MiniMind's FeedForward of width 0
                         * adds zeros) */
    int64_t max_seq;    /* positions the model was made for (MiniMind: max_position_embeddings) */
    double rope_base;   /* RoPE theta */
    float eps;          /* RMSNorm eps of every norm */
    int32_t qk_norm;    /* 1: RMSNorm on each head's q and k before RoPE (MiniMind) */
    int32_t rope_style; /* al_rope_style */
    int32_t tied;       /* 1: lm_head is the token embedding */
    /* MoE (MiniMind's use_moe): each layer's FFN is n_experts SwiGLU experts of width
     * moe_ffn_hidden; a router (softmax over the experts) picks top_k per token, their weights
     * renormalised to sum 1 (+1e-20) when norm_topk_prob. n_experts 0: a dense FFN;
     * otherwise 1 <= top_k <= n_experts. */
    int64_t n_experts;
    int64_t top_k;
    int64_t moe_ffn_hidden;
    int32_t norm_topk_prob;
    /* YaRN (MiniMind's inference_rope_scaling): the RoPE frequencies stretched as its
     * precompute_freqs_cis does when max_seq > yarn_original_max, and cos and sin multiplied by
     * attention_factor. yarn_factor 0: no scaling; otherwise 1 <= yarn_factor,
     * 1 <= yarn_original_max, 0 < yarn_beta_slow < yarn_beta_fast and 0 < attention_factor. */
    double yarn_factor;
    int64_t yarn_original_max;
    double yarn_beta_fast, yarn_beta_slow;
    double attention_factor;
} al_model_hparams;

/* The model's weights. Per layer unless said otherwise; [out, in] as nn.Linear keeps them. */
typedef enum {
    AL_MP_EMBED = 0,  /* [vocab, hidden], the model's (not per layer) */
    AL_MP_ATTN_NORM,  /* [hidden] */
    AL_MP_WQ,         /* [n_heads·head_dim, hidden] */
    AL_MP_WK,         /* [n_kv_heads·head_dim, hidden] */
    AL_MP_WV,         /* [n_kv_heads·head_dim, hidden] */
    AL_MP_WO,         /* [hidden, n_heads·head_dim] */
    AL_MP_Q_NORM,     /* [head_dim], with qk_norm only */
    AL_MP_K_NORM,     /* [head_dim], with qk_norm only */
    AL_MP_FFN_NORM,   /* [hidden] */
    AL_MP_GATE,       /* [ffn_hidden, hidden]; [0, hidden] when attention-only, as MiniMind keeps it */
    AL_MP_UP,         /* [ffn_hidden, hidden] */
    AL_MP_DOWN,       /* [hidden, ffn_hidden] */
    AL_MP_FINAL_NORM, /* [hidden], the model's */
    AL_MP_LM_HEAD,    /* [vocab, hidden], the model's, untied only */
    AL_MP_ROUTER,     /* [n_experts, hidden], MoE only (MiniMind's mlp.gate) */
    AL_MP_EXPERT_GATE,/* [moe_ffn_hidden, hidden] per layer and expert, MoE only */
    AL_MP_EXPERT_UP,  /* [moe_ffn_hidden, hidden] per layer and expert */
    AL_MP_EXPERT_DOWN,/* [hidden, moe_ffn_hidden] per layer and expert */
    AL_MP_COUNT
} al_model_param;

typedef struct al_model al_model;

/* AL_OK, or AL_ERR_CONFIG / AL_ERR_LIMIT with a message naming the field. */
al_status al_model_hparams_check(const al_model_hparams *hp, al_error *err);

/* 1 or 2 (its dimensions, in shape), 0 if the model has no such weight (q_norm without
 * QK-Norm, lm_head when tied), -1 for an invalid p. A weight may hold no numbers: an
 * attention-only model's gate, up and down ([0, hidden], [hidden, 0]) keep their place. */
int al_model_param_shape(const al_model_hparams *hp, al_model_param p, int64_t shape[2]);

/* One weight of a model: which, in which layer, of which expert (0 where it does not apply). */
typedef struct {
    al_model_param p;
    int64_t layer, expert;
} al_weight_ref;
/* Every weight a model of shape hp has, in one order (the embedding, the final norm, the head
 * if untied, then layer by layer each weight in al_model_param's order, an expert's by expert),
 * into out (NULL: counts them); returns how many, -1 if hp is refused. */
int64_t al_model_weights(const al_model_hparams *hp, al_weight_ref *out);

/* Where the numbers of weight ref are written, for al_weights_init: a pointer to *numel floats,
 * or NULL (*numel 0) where the holder has no such weight. */
typedef float *(*al_weight_writer)(void *ctx, const al_weight_ref *ref, int64_t *numel);
/* The one fresh start of a model of shape hp, whoever holds its weights (at, ctx: a model's,
 * a trainer's): every matrix N(0, 0.02²) from PyTorch's generator seeded with seed
 * (torch.manual_seed), drawn weight after weight in al_model_weights' order; every norm 1. One
 * seed, one model: al_model_fill_random and al_trainer_init_weights both call it. */
al_status al_weights_init(const al_model_hparams *hp, uint64_t seed, al_weight_writer at, void *ctx, al_error *err);

/* How many numbers the model's weights hold (the embedding once when tied); -1 if hp is
 * refused. */
int64_t al_model_param_count(const al_model_hparams *hp);

/* Floating-point operations (2 per multiply-add) of one forward call of n_new tokens after
 * n_past cached ones, with logits for the last logits_rows: every projection, the router and the
 * top_k experts a token runs (MoE) or the dense FFN, the causal scores and weighted sums (query s
 * against the n_past + s + 1 keys it sees) and the head. Norms, RoPE, softmax and SiLU are not
 * counted. -1 if hp is refused, a count is out of range or the total reaches 2^53. */
int64_t al_model_flops_causal(const al_model_hparams *hp, int64_t n_new, int64_t n_past, int64_t logits_rows);

/* Bytes a model with `context` positions reserved and forward calls of up to `max_step`
 * tokens allocates (weights, packed copies, caches, scratch); -1 if out of range. */
int64_t al_model_bytes_needed(const al_model_hparams *hp, int64_t context, int64_t max_step);

/* The RoPE frequencies the model rotates by, freq [head_dim / 2] (cap floats): base^(-2i/d),
 * YaRN-scaled as MiniMind's precompute_freqs_cis when yarn_factor is set and max_seq passes
 * yarn_original_max (cos and sin are then also multiplied by attention_factor). */
al_status al_model_rope_freqs(const al_model_hparams *hp, float *freq, int64_t cap, al_error *err);

/* Creates a model with zeroed weights and norms of 1; refused beyond AL_MAX_MODEL_BYTES. Its
 * weights are float32, each readable and writable in place (al_model_get_param,
 * al_model_param_for_write), with the GEMM's packed copies of the maps beside them. */
al_status al_model_create(const al_model_hparams *hp, int64_t context, int64_t max_step,
                          al_model **out, al_error *err);

/* The same for inference, its weights held once (what the loaders make): the norms as float32
 * and every other weight in `dtype`, the maps only in the GEMM's packed layout (the head's
 * panels serving a tied embedding too). Written with al_model_set_param, read with
 * al_model_read_param; al_model_get_param gives the norms only and al_model_param_for_write
 * nothing. Every number it computes is the one an al_model_create model holding the same
 * values computes: 16-bit weights are widened exactly where they are read. */
al_status al_model_create_inference(const al_model_hparams *hp, int64_t context, int64_t max_step,
                                    al_weight_dtype dtype, al_model **out, al_error *err);
/* The threads the model computes on from now on (1 to AL_MAX_THREADS; 1 after create): the
 * projections, the FFN and the head are split between them by output columns, so every number
 * is the same on any number of threads. Natively they are started by the first pass with a
 * product big enough to split (a tiny model's decode steps never start them); if they cannot
 * be, the model computes on one, and al_model_threads says 1. In WebAssembly the one-thread
 * build refuses more; the threaded one takes exactly as many as its host started
 * (web/core/wasm-loader.js). */
#define AL_MAX_THREADS 256
al_status al_model_set_threads(al_model *m, int64_t threads, al_error *err);
int64_t al_model_threads(const al_model *m); /* -1 if m is NULL */

/* Bytes al_model_create_inference allocates; -1 if out of range. */
int64_t al_model_inference_bytes(const al_model_hparams *hp, int64_t context, int64_t max_step,
                                 al_weight_dtype dtype);
/* The bytes a model's weights take (an inference model's one copy; a writable model's
 * float32 weights and their packed copies), and the dtype its maps are held in; -1 / float32
 * if m is NULL. */
int64_t al_model_weight_bytes(const al_model *m);
al_weight_dtype al_model_weight_dtype(const al_model *m);
void al_model_free(al_model *m);
const al_model_hparams *al_model_get_hparams(const al_model *m); /* NULL if m is NULL */
int64_t al_model_context(const al_model *m);                     /* -1 if m is NULL */

/* A weight of layer `layer` and, for the experts' weights, expert `expert` (each ignored where
 * it does not apply): read-only, or for writing (the model repacks before its next forward
 * call). NULL if the model has no such weight, it holds no numbers (an attention-only model's
 * FFN), an index is out of range, or (an inference model) the weight is not a float32 norm. */
const float *al_model_get_param(const al_model *m, al_model_param p, int64_t layer,
                                int64_t expert, int64_t *numel);
float *al_model_param_for_write(al_model *m, al_model_param p, int64_t layer, int64_t expert,
                                int64_t *numel);
/* Any model's weight as float32 [numel] in its own [out, in] or [dim] layout, into out (cap
 * floats; out NULL and cap 0: a size query): the count, or -1 if the model has no such weight,
 * it holds no numbers or cap is short. */
int64_t al_model_read_param(const al_model *m, al_model_param p, int64_t layer, int64_t expert,
                            float *out, int64_t cap);
/* Rows first .. first+count-1 of a weight [out, in] (a norm [dim] is one row), count · in
 * floats, the same way. */
int64_t al_model_read_rows(const al_model *m, al_model_param p, int64_t layer, int64_t expert,
                           int64_t first, int64_t count, float *out, int64_t cap);
/* Sets a weight from numel little-endian elements of src_dtype at src (a file's bytes, any
 * alignment), into the model's layout: a float32 model widens 16-bit ones; a 16-bit model takes
 * only its own dtype (nothing is rounded), its norms widened to float32. The caller has checked
 * the values (finite). */
al_status al_model_set_param(al_model *m, al_model_param p, int64_t layer, int64_t expert,
                             const void *src, al_weight_dtype src_dtype, int64_t numel,
                             al_error *err);

/* MoE routing of the last forward call's tokens (their last piece of max_step), for the page:
 * ids and weights [tokens, top_k] of layer `layer`. The number of tokens, or -1. */
int64_t al_model_routing(const al_model *m, int64_t layer, int32_t *ids, float *weights,
                         int64_t cap);

/* The residual stream's size, for the page and the CLI: from now on each forward call of n
 * tokens writes ‖x‖₂ of every token at every depth into `norms` [n_layers + 1, n] — row 0 the
 * embeddings, row l + 1 the stream after block l — a buffer the caller keeps (cap floats; a
 * call needing more fails with AL_ERR_CAPACITY). NULL (the default) turns it off: no cost. */
void al_model_capture_resid_norms(al_model *m, float *norms, int64_t cap);

/* The parts the residual stream is the sum of, kept by every forward call from now on (one
 * without an experiment's probe) at the tokens' positions, for the experiments read from a run
 * already made (al_model_lens_top_of, al_model_dla_of): stream [n_layers + 1, stride, hidden]
 * (row l the stream entering block l, row n_layers after the last), heads [n_layers, stride,
 * n_heads · head_dim] (o_proj's input), ffn [n_layers, stride, hidden] (each block's FFN or MoE
 * output); stride at least the context. Buffers the caller keeps; NULL parts (the default)
 * turn it off: no cost. */
typedef struct {
    float *stream, *heads, *ffn;
    int64_t stride; /* the positions each layer's rows hold */
} al_model_parts;
void al_model_keep_parts(al_model *m, const al_model_parts *parts);

/* Runs n tokens through the model at positions len .. len+n-1, appending their K and V to
 * every layer's cache (len = al_model_len; 0 after create or reset). n may exceed max_step:
 * the tokens then go through in pieces of max_step, with the same numbers.
 *   logits [logits_rows, vocab]: logits_rows 1 gives the last token's, n every token's, 0 none;
 *   logits_cap its capacity in floats.
 *   attn (may be NULL): every layer's softmax weights [n_layers, n_heads, n, len + n], zero past
 *   what a query sees; attn_cap its capacity in floats (n must then fit in max_step).
 * Ids must be in [0, vocab); len + n must fit the context. */
al_status al_model_forward(al_model *m, const int32_t *ids, int64_t n, float *logits,
                           int64_t logits_rows, int64_t logits_cap, float *attn, int64_t attn_cap,
                           al_error *err);
int64_t al_model_len(const al_model *m); /* tokens in the caches; -1 if m is NULL */
void al_model_reset(al_model *m);        /* empties the caches; the weights stay */

/* The next token by argmax: the first of the largest logits (NaN never chosen); -1 if n < 1. */
int64_t al_sample_greedy(const float *logits /* [vocab] */, int64_t vocab);

/* MiniMind's sampler (its generate): logits / temperature → repetition penalty over every id
 * seen (prompt included; positive logits divided, negative multiplied) → top-k (logits below
 * the k-th largest out) → top-p (sorted descending, a token out once the probability before it
 * exceeds top_p; the first always kept) → a draw from the softmax of what is left. */
typedef struct {
    double temperature;        /* 0: greedy (after the repetition penalty) */
    int64_t top_k;             /* 0: off */
    double top_p;              /* 1: off */
    double repetition_penalty; /* 1: off */
} al_sampler_params;

al_sampler_params al_sampler_params_default(void); /* MiniMind's: 0.85, 50, 0.85, 1.0 */
/* The same defaults written into *p (for bindings, which cannot take a struct by value). */
void al_sampler_params_fill_default(al_sampler_params *p);

/* The repetition penalty stage alone, in place on logits [vocab]: every id seen, once each,
 * positive logits divided by `penalty`, negative ones multiplied. AL_ERR_ARG (nothing changed)
 * for a penalty outside (0, 100] or a seen id outside the vocabulary. */
al_status al_sampler_penalise(float *logits /* [vocab] */, int64_t vocab,
                              const int32_t *seen /* [n_seen] */, int64_t n_seen, double penalty,
                              al_error *err);

/* The distribution at each stage, for drawing: stages [AL_SAMPLER_STAGES, vocab] = the
 * softmax of the raw logits, after temperature, after the repetition penalty, after top-k,
 * after top-p. When a finite logit divided by the temperature is not finite (T of 1e-38 or
 * less, or T = 1e-37 with a logit of 40), the stages after the first are their limit as
 * T → 0+: one-hot on the largest logit, then on the largest penalised logit (greedy's choice).
 * cap: the buffer's capacity in floats. */
#define AL_SAMPLER_STAGES 5
al_status al_sampler_stages(const float *logits /* [vocab] */, int64_t vocab,
                            const int32_t *seen /* [n_seen] */, int64_t n_seen,
                            const al_sampler_params *p, float *stages, int64_t cap, al_error *err);

/* The next token: the stages computed into `stages` (as above), then the draw from the last
 * stage as torch.multinomial(probs, 1) draws it (one exponential per id: 2·vocab words of rng);
 * at temperature 0 the argmax of the penalised logits (then only they are
 * left in `stages`, no stage is computed). At a temperature too small for the logits (above)
 * the draw is from one-hot stages: the same token as temperature 0. -1 with *err set on bad
 * arguments. */
int64_t al_sample(const float *logits, int64_t vocab, const int32_t *seen, int64_t n_seen,
                  const al_sampler_params *p, al_rng *rng, float *stages, int64_t cap, al_error *err);

/* ------------------------------------------------------------------------------------------
 * Experiments: options of the one forward, not copies of it (model/experiments.c). Each is
 * TransformerLens's hook at the same point: a head's output is its slice of the heads merged
 * (hook_z, the input of o_proj); the residual stream entering block l is hook_resid_pre.
 * ------------------------------------------------------------------------------------------ */

/* Head ablation: from now on every forward of the model (al_model_forward — generation, the
 * logits, the page's steps — and the trainer's batch forward, whose backward then sees the head
 * as constant zero) sets the output of each head heads[i] = (layer, head) to zero before o_proj,
 * at every position. The caches the ablated model fills are its own. n 0 switches every head
 * back on; a head named twice counts once. A layer or head out of range is refused, naming it,
 * and nothing changes. */
al_status al_model_set_ablation(al_model *m, const int32_t *heads /* [n, 2] (layer, head) */, int64_t n,
                                al_error *err);
/* The heads switched off, layer by layer then head by head, into heads [cap, 2] (as many as
 * fit); returns how many there are, -1 if m is NULL (or heads is NULL with cap > 0). */
int64_t al_model_ablation(const al_model *m, int32_t *heads, int64_t cap);

/* Each experiment runs the model over its tokens from empty caches (al_model_reset first) and
 * leaves them as said. Ids must be in [0, vocab) and n within the context. */

/* Logit lens: the final RMSNorm and the head applied to the residual stream entering block 0
 * (the embeddings) and after each block: lens [n_layers + 1, n, vocab] (cap floats); row
 * n_layers is the model's logits, bit for bit. The caches then hold the ids. */
al_status al_model_logit_lens(al_model *m, const int32_t *ids, int64_t n, float *lens, int64_t cap, al_error *err);
/* The same lens, each of its rows summed up for drawing: top [n_layers + 1, n] the first of the
 * largest logits, prob [n_layers + 1, n] its softmax probability (cap: each array's count). */
al_status al_model_logit_lens_top(al_model *m, const int32_t *ids, int64_t n, int32_t *top, float *prob,
                                  int64_t cap, al_error *err);

/* The same lens of a run already made, its parts kept (al_model_keep_parts): the first n
 * positions of run's stream, the numbers al_model_logit_lens_top gives for those tokens. */
al_status al_model_lens_top_of(al_model *m, const al_model_parts *run, int64_t n, int32_t *top, float *prob,
                               int64_t cap, al_error *err);

/* Direct logit attribution of token `target`: each part the residual stream is the sum of, put
 * through the final RMSNorm with the real run's scale at its position (divided by that
 * position's RMS, times the norm's weight) and dotted with the head's row for target:
 *   parts [n_layers · n_heads + 1 + n_layers, n] (cap floats): row l · n_heads + h head h of
 *   block l (its output through its slice of o_proj), row n_layers · n_heads the embedding,
 *   row n_layers · n_heads + 1 + l block l's FFN (or MoE).
 * At each position the parts sum to the target's logit, up to rounding. The caches then hold
 * the ids. */
al_status al_model_dla(al_model *m, const int32_t *ids, int64_t n, int32_t target, float *parts, int64_t cap,
                       al_error *err);
/* The same attribution of a run already made over ids [n], its parts kept (al_model_keep_parts:
 * all three): the numbers al_model_dla gives. */
al_status al_model_dla_of(al_model *m, const int32_t *ids, int64_t n, const al_model_parts *run, int32_t target,
                          float *parts, int64_t cap, al_error *err);

/* Activation patching from ids clean [n] into corrupt [n], the metric logit(answer) −
 * logit(wrong) at the last position:
 *   out [n_layers · n_heads + n_layers · n + 2] (cap floats): first [n_layers, n_heads], the
 *   metric of the corrupt run with that head's output (every position) taken from the clean
 *   run; then [n_layers, n], with the stream entering that block at that position taken from
 *   the clean run; then the clean and the corrupt run's metrics.
 * A patch at block l runs blocks l .. n_layers-1 only, from the corrupt run's stream entering
 * block l (the blocks below compute what they did in the corrupt run); full 1 runs the whole
 * forward for every patch instead, as hooks do (the same numbers, bit for bit; for timing).
 * answer and wrong must differ. The caches are then empty. */
al_status al_model_patch(al_model *m, const int32_t *clean, const int32_t *corrupt, int64_t n, int32_t answer,
                         int32_t wrong, int full, float *out, int64_t cap, al_error *err);

/* ------------------------------------------------------------------------------------------
 * A model's random start and its loss on a text.
 * ------------------------------------------------------------------------------------------ */

/* A model of a given shape to time, or to look at: al_weights_init's fresh start (every matrix
 * N(0, 0.02²), every norm 1), the trainer's for the same seed. */
al_status al_model_fill_random(al_model *m, uint64_t seed, al_error *err);

/* One pass of the model over ids [n] (its caches emptied first): Σ −log P(ids[t+1] | ids[..t])
 * added to *sum, and n − 1 to *count. */
al_status al_model_nll(al_model *m, const int32_t *ids, int64_t n, double *sum, int64_t *count, al_error *err);

#ifdef __cplusplus
}
#endif
#endif /* ATTNLAB_MODEL_H */
