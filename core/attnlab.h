/* attnlab.h — public API of the AttnLab core: the attention block of a MiniMind-style
 * decoder (embedding, RMSNorm, RoPE, GQA attention with QK-Norm, KV cache), computed the way
 * PyTorch computes it, plus the pieces needed to reproduce PyTorch's numbers bit for bit
 * (its random generator, its tensor printing) and to read/write safetensors files.
 *
 * Conventions (see STYLE.md): prefix `al_`, opaque handles with create/free (free(NULL) is a
 * no-op), a status code from everything that touches outside input, caller-owned output buffers
 * with their capacity, shapes in comments in memory order, row-major float32 everywhere.
 * The native CLI and the WebAssembly page use this same header. */
#ifndef ATTNLAB_H
#define ATTNLAB_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------------------------
 * Status codes and errors
 * ------------------------------------------------------------------------------------------ */

typedef enum {
    AL_OK = 0,
    AL_ERR_ARG,       /* a NULL pointer or an out-of-range argument */
    AL_ERR_CONFIG,    /* an impossible configuration (odd head_dim, heads % kv_heads != 0, ...) */
    AL_ERR_LIMIT,     /* sizes beyond what AttnLab agrees to allocate (see AL_MAX_*) */
    AL_ERR_NOMEM,     /* malloc failed */
    AL_ERR_SHAPE,     /* a tensor has the wrong shape for its role */
    AL_ERR_CAPACITY,  /* caller's buffer too small, or the KV cache is full */
    AL_ERR_FORMAT,    /* a malformed file (safetensors header, JSON, offsets, byte counts) */
    AL_ERR_DTYPE,     /* a tensor dtype AttnLab cannot use */
    AL_ERR_MISSING,   /* a required tensor is absent */
    AL_ERR_NONFINITE, /* NaN or infinity in an input or weight */
    AL_ERR_IO         /* reading or writing a file failed (CLI only) */
} al_status;

/* A one-line, human-readable explanation filled in by calls that take `al_error *`
 * (may be NULL when the caller only wants the status). Always NUL-terminated. */
#define AL_ERROR_MSG_MAX 256
typedef struct {
    al_status status;
    char msg[AL_ERROR_MSG_MAX];
} al_error;

/* Static, English name of a status ("shape mismatch", ...). Never NULL. */
const char *al_status_str(al_status s);

/* ------------------------------------------------------------------------------------------
 * Limits: anything larger is refused with AL_ERR_LIMIT before any allocation.
 * They keep one attention layer plus its cache within what a browser tab may use.
 * ------------------------------------------------------------------------------------------ */

#define AL_MAX_HIDDEN   16384
#define AL_MAX_HEADS    256
#define AL_MAX_HEAD_DIM 1024
#define AL_MAX_SEQ      65536
#define AL_MAX_BATCH    64
#define AL_MAX_BYTES    ((int64_t)1 << 30)  /* weights + cache + scratch of one layer: 1 GiB */

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

/* Row-wise softmax in float32; -inf entries get weight exactly 0, a row of all -inf gives NaN
 * as in PyTorch. */
void al_softmax_forward(float *y, const float *x, /* [rows, cols] */ int64_t rows, int64_t cols);

/* Sum of n floats in the order PyTorch 1.13's CPU sum kernel uses for a contiguous row
 * (AVX2 build), so printed sums and means carry the same last digit. */
float al_sum_f32(const float *x, int64_t n);

/* Dot product with a plain left-to-right float32 accumulation (reference BLAS sdot). */
float al_dot_f32(const float *a, const float *b, int64_t n);

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
                         int64_t end, int64_t head_dim, double base);

/* In place: x = x·cos + rotate_half(x)·sin with rotate_half(x) = [-x2, x1].
 * Token t of x uses row t of cos/sin (callers pass the rows for the tokens' positions). */
void al_rope_apply(float *x,         /* [n_tok, n_heads, head_dim] */
                   const float *cos, /* [n_tok, head_dim] */
                   const float *sin, /* [n_tok, head_dim] */
                   int64_t n_tok, int64_t n_heads, int64_t head_dim);

/* ------------------------------------------------------------------------------------------
 * Attention layer configuration
 * ------------------------------------------------------------------------------------------ */

typedef struct {
    int64_t hidden;     /* model width (input and output features) */
    int64_t n_heads;    /* query heads */
    int64_t n_kv_heads; /* key/value heads; n_heads % n_kv_heads == 0 (GQA; 1 = MQA) */
    int64_t head_dim;   /* even, for RoPE's pairs */
    double rope_base;   /* RoPE theta (seeds: 10000; MiniMind-3: 1e6) */
    float eps;          /* RMSNorm eps of QK-Norm (seeds: 1e-6) */
    int qk_norm;        /* 1: RMSNorm per head on Q and K before RoPE (the seeds); 0: skip */
    int64_t max_batch;  /* capacity of scratch and caches */
    int64_t max_seq;    /* positions available (RoPE table, cache capacity) */
} al_attn_config;

/* The seeds' SimpleAttention defaults: hidden 16, 4 heads, 2 KV heads, head_dim 8,
 * base 10000, eps 1e-6, QK-Norm on, batch 1..2, 64 positions. */
al_attn_config al_attn_config_default(void);

/* AL_OK, or AL_ERR_CONFIG / AL_ERR_LIMIT with a message naming the offending field. */
al_status al_attn_config_check(const al_attn_config *cfg, al_error *err);

/* Bytes the layer (weights, RoPE table, scratch) and one cache would allocate; 0 if the
 * config is invalid. Used to refuse sizes beyond AL_MAX_BYTES with a useful message. */
int64_t al_attn_bytes_needed(const al_attn_config *cfg);

/* ------------------------------------------------------------------------------------------
 * KV cache: K (after QK-Norm and RoPE) and V of every past token.
 * ------------------------------------------------------------------------------------------ */

typedef struct al_kv_cache al_kv_cache;

al_status al_kv_cache_create(const al_attn_config *cfg, al_kv_cache **out, al_error *err);
void al_kv_cache_free(al_kv_cache *c);
void al_kv_cache_reset(al_kv_cache *c); /* length back to 0, memory kept */
/* Forgets the tokens after the first len (rewind, e.g. to time the same decode step again).
 * AL_ERR_ARG if len is negative or longer than what is stored. */
al_status al_kv_cache_truncate(al_kv_cache *c, int64_t len);

int64_t al_kv_cache_len(const al_kv_cache *c);   /* tokens stored per sequence */
int64_t al_kv_cache_batch(const al_kv_cache *c); /* batch of the stored sequences (0 if empty) */

/* Bytes held by K and V for the tokens stored: 2 · batch · len · n_kv_heads · head_dim · 4. */
int64_t al_kv_cache_bytes(const al_kv_cache *c);

/* The same formula for any configuration: what a cache of `len` tokens costs with
 * n_kv_heads KV heads (pass n_heads for MHA, 1 for MQA). */
int64_t al_kv_cache_bytes_for(int64_t batch, int64_t len, int64_t n_kv_heads, int64_t head_dim);

/* Copies the stored K or V out, in the seeds' layout [batch, len, n_kv_heads, head_dim]. */
al_status al_kv_cache_read(const al_kv_cache *c, int which_v, float *out, int64_t cap);

/* ------------------------------------------------------------------------------------------
 * Random numbers, identical to PyTorch's CPU generator
 * ------------------------------------------------------------------------------------------ */

typedef struct al_rng al_rng;

al_rng *al_rng_create(uint64_t seed); /* torch.manual_seed(seed); NULL on out of memory */
void al_rng_free(al_rng *r);
void al_rng_seed(al_rng *r, uint64_t seed); /* torch.manual_seed again (clears cached normals) */
uint32_t al_rng_u32(al_rng *r);             /* next raw mt19937 output */

/* tensor.uniform_(from, to) on a float32 tensor of n elements. */
void al_rng_uniform(al_rng *r, float *out, int64_t n, float from, float to);

/* tensor.normal_(mean, std) on a float32 tensor of n elements (torch.randn: mean 0, std 1).
 * n >= 16: blocks of 16 by Box–Muller over float uniforms; n < 16: double normals one at a
 * time, the second of each pair cached for the next draw — PyTorch's two paths. */
void al_rng_normal(al_rng *r, float *out, int64_t n, float mean, float std);
void al_rng_randn(al_rng *r, float *out, int64_t n);

/* nn.Linear's default weight init: kaiming_uniform_(a=√5) = U(-1/√in, 1/√in). */
void al_rng_linear_init(al_rng *r, float *w /* [out_dim, in_dim] */, int64_t out_dim,
                        int64_t in_dim);

/* nn.init.xavier_uniform_(w, gain): U(-a, a), a = gain·√(6 / (fan_in + fan_out)). */
void al_rng_xavier_uniform(al_rng *r, float *w /* [fan_out, fan_in] */, int64_t fan_out,
                           int64_t fan_in, double gain);

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

/* Creates a layer with zeroed projections and norm weights of 1. */
al_status al_attn_create(const al_attn_config *cfg, al_attn **out, al_error *err);
void al_attn_free(al_attn *a);
const al_attn_config *al_attn_get_config(const al_attn *a);

/* The PyTorch state_dict name of a parameter ("q_proj.weight", ...) and its shape. */
const char *al_attn_param_name(al_attn_param p);
int al_attn_param_shape(const al_attn_config *cfg, al_attn_param p, int64_t shape[2]);

/* Pointer to a parameter inside the layer's single weight allocation, and its element count.
 * Writable so callers can load weights; NULL for an invalid `p`. */
float *al_attn_get_param(al_attn *a, al_attn_param p, int64_t *numel);

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
 * safetensors: parse from memory, query, convert to float32; and serialise float32 tensors.
 * ------------------------------------------------------------------------------------------ */

#define AL_ST_MAX_DIMS 8

typedef enum { AL_DTYPE_F32 = 0, AL_DTYPE_F16, AL_DTYPE_BF16, AL_DTYPE_I64, AL_DTYPE_OTHER } al_dtype;

typedef struct al_safetensors al_safetensors;

typedef struct {
    const char *name;
    al_dtype dtype;
    const char *dtype_name;         /* as written in the file ("F32", "I8", ...) */
    int ndim;
    int64_t shape[AL_ST_MAX_DIMS];
    int64_t numel;
    const void *data;               /* inside the parsed copy; valid until al_st_free */
    int64_t nbytes;
} al_st_tensor;

/* Validates and indexes a whole file image (copied; the caller may free `bytes` after).
 * Every structural problem is reported as AL_ERR_FORMAT with a message naming it. */
al_status al_st_parse(const uint8_t *bytes, size_t size, al_safetensors **out, al_error *err);
void al_st_free(al_safetensors *st);

int al_st_count(const al_safetensors *st);
al_status al_st_get(const al_safetensors *st, int index, al_st_tensor *info);
/* AL_ERR_MISSING if absent. */
al_status al_st_find(const al_safetensors *st, const char *name, al_st_tensor *info);
/* Value of a string entry of "__metadata__", or NULL. */
const char *al_st_metadata(const al_safetensors *st, const char *key);

/* Converts a tensor (F32, F16 or BF16) to float32 into out[cap]; refuses other dtypes,
 * and NaN/inf values (AL_ERR_NONFINITE). */
al_status al_st_read_f32(const al_safetensors *st, const char *name, float *out, int64_t cap,
                         al_error *err);

typedef struct {
    const char *name;
    const float *data;
    int ndim;
    int64_t shape[AL_ST_MAX_DIMS];
} al_st_entry;

/* Serialises float32 tensors (and optional string metadata as key/value pairs) into buf.
 * *needed receives the exact size; with buf == NULL or cap too small only *needed is set
 * and AL_ERR_CAPACITY returned (AL_OK if buf is NULL and cap is 0: a size query). */
al_status al_st_serialize(const al_st_entry *entries, int n_entries,
                          const char *const *meta_kv, int n_meta,
                          uint8_t *buf, size_t cap, size_t *needed, al_error *err);

/* Builds an attention layer from a loaded file. Tensor names are the seeds'
 * ("q_proj.weight", ...) after `prefix` (e.g. "model.layers.3.self_attn."; "" for none).
 * Shapes give hidden, heads, kv heads and head_dim (head_dim from the QK-Norm weights; a file
 * without q_norm.weight is accepted only if base_cfg->head_dim > 0, and then QK-Norm is off).
 * rope_base, eps, max_batch and max_seq are taken from `base_cfg`. */
al_status al_attn_from_safetensors(const al_safetensors *st, const char *prefix,
                                   const al_attn_config *base_cfg, al_attn **out,
                                   al_error *err);

/* ------------------------------------------------------------------------------------------
 * Forward on files: weights and input safetensors in, a safetensors result out (the CLI's
 * `forward` and the page share it). The result holds output [batch, seq, hidden] (one pass,
 * no cache), attn_weights [batch, n_heads, seq, seq], k_cache and v_cache
 * [batch, seq, n_kv_heads, head_dim], and output_cached (prefill of P tokens, then one-token
 * decode steps), with the resolved configuration as metadata.
 * ------------------------------------------------------------------------------------------ */

typedef struct {
    int64_t layer;    /* MiniMind checkpoint layer (names "model.layers.N.self_attn.*"); -1: none */
    double rope_base; /* NAN: the weights' __metadata__ "rope_base", else 10000 */
    double eps;       /* NAN: the weights' __metadata__ "eps", else 1e-6 */
    int64_t prefill;  /* tokens of the prefill; 0: the whole sequence */
} al_forward_options;

enum { AL_FILE_NONE = 0, AL_FILE_WEIGHTS = 1, AL_FILE_INPUT = 2 };

typedef struct {
    int64_t hidden, n_heads, n_kv_heads, head_dim;
    double rope_base, eps;
    int32_t qk_norm;
    int32_t failed_file; /* on error: AL_FILE_WEIGHTS or AL_FILE_INPUT if a file is to blame */
    int64_t batch, seq, prefill;
    double max_diff;     /* max |output − output_cached| */
    int64_t bytes;       /* size of the result */
} al_forward_summary;

al_forward_options al_forward_options_default(void);

/* *out receives a malloc'd result of summary->bytes bytes, to release with al_buffer_free. */
al_status al_forward_safetensors(const uint8_t *weights, size_t weights_size,
                                 const uint8_t *input, size_t input_size,
                                 const al_forward_options *opt, uint8_t **out,
                                 al_forward_summary *summary, al_error *err);
void al_buffer_free(void *p);

/* ------------------------------------------------------------------------------------------
 * Teaching views: the quantities the page draws, computed here so the page does no maths.
 * ------------------------------------------------------------------------------------------ */

/* The causal mask of `seq` new queries over past + seq keys: 0 where query s may see key t
 * (t <= past + s), -inf elsewhere — masking only the last `seq` key columns, so a multi-token
 * step on top of a cache is right. */
void al_causal_mask(float *out /* [seq, past + seq] */, int64_t seq, int64_t past);

/* RoPE angles m · freq_i wrapped to (-π, π] (what the rotation actually does). */
al_status al_rope_angles_wrapped(float *angles /* [end, head_dim/2] */, int64_t end,
                                 int64_t head_dim, double base);

/* The 2-D point (x_i, x_{i+d/2}) of a vector after RoPE at positions 0..end-1, for pair i:
 * shows one pair turning at its own frequency. */
al_status al_rope_pair_trace(float *points /* [end, 2] */, const float *x /* [head_dim] */,
                             int64_t pair, int64_t end, int64_t head_dim, double base);

/* dots[d] = <R(m) v, R(m + d) v> for d = 0..n-1 at a fixed m: the same vector placed at two
 * positions d apart. Equal for every m (relative-position invariance); decays with d. */
al_status al_rope_relative_dots(float *dots /* [n] */, const float *v /* [head_dim] */,
                                int64_t m, int64_t n, int64_t head_dim, double base);

/* GQA's repeat_kv map: kv_head[h] = h / (n_heads / n_kv_heads) for each query head h.
 * AL_ERR_CONFIG if n_heads is not a multiple of n_kv_heads. */
al_status al_gqa_map(int32_t *kv_head /* [n_heads] */, int64_t n_heads, int64_t n_kv_heads);

/* The KV head counts that GQA allows for n_heads query heads (its divisors, ascending).
 * Returns how many there are; writes at most cap of them. */
int al_gqa_kv_choices(int32_t *out, int cap, int64_t n_heads);

/* Multiply-adds ×2 (FLOPs) of one attention call: n_query new tokens against n_keys keys —
 * projections 2·n_query·hidden·head_dim·(2·n_heads + 2·n_kv_heads), scores and weights·V
 * 4·n_heads·n_query·n_keys·head_dim (the full rectangle, as PyTorch computes it). A decode step
 * with the cache is n_query = 1, n_keys = n; recomputing without it is n_query = n_keys = n. */
int64_t al_attn_flops(const al_attn_config *cfg, int64_t n_query, int64_t n_keys);

/* ------------------------------------------------------------------------------------------
 * Session: one layer, one sequence, stepped through prefill and decode — what the page drives.
 * Weights and tokens are drawn as the tutorial's example 6 draws them: torch.manual_seed(seed),
 * SimpleAttention init, randn(1, prompt_len, hidden), then randn(1, 1, hidden) per step.
 * ------------------------------------------------------------------------------------------ */

typedef struct al_session al_session;

typedef struct {
    int64_t hidden, n_heads, n_kv_heads, head_dim;
    double rope_base;
    int qk_norm;
    int64_t seed;         /* torch.manual_seed value, >= 0 */
    int64_t prompt_len;   /* tokens of the prefill, >= 1 */
    int64_t decode_steps; /* one-token steps after it, >= 0 */
} al_session_config;

al_status al_session_create(const al_session_config *cfg, al_session **out, al_error *err);
void al_session_free(al_session *s);
const al_attn_config *al_session_attn_config(const al_session *s);

/* Runs the prefill (if not done yet) / the next decode step. AL_ERR_CAPACITY when all
 * decode_steps have run. */
al_status al_session_prefill(al_session *s, al_error *err);
al_status al_session_step(al_session *s, al_error *err);
void al_session_reset(al_session *s); /* back to before the prefill, same weights and tokens */

int64_t al_session_len(const al_session *s);       /* tokens processed = cache length */
int64_t al_session_total(const al_session *s);     /* prompt_len + decode_steps */

/* Outputs of the tokens processed so far, as computed with the cache: [len, hidden]. */
al_status al_session_outputs(const al_session *s, float *out, int64_t cap);

/* Attention weights of every query processed so far for one head, as a square
 * [len, len] matrix (query row q over keys 0..len-1; masked cells are 0). */
al_status al_session_weights(const al_session *s, int64_t head, float *out, int64_t cap);

/* The mask actually applied to every processed query: [len, len], 0 or -inf. Prefill rows
 * have the causal triangle; a decode row sees all cached keys. */
al_status al_session_mask(const al_session *s, float *out, int64_t cap);

/* The checks of the tutorial run on the session's current state. */
typedef enum {
    AL_CHECK_SHAPES = 0,     /* cache and weights shapes as the config implies (value: mismatches) */
    AL_CHECK_REPEAT_KV,      /* query heads sharing a KV head read identical K (max |diff|) */
    AL_CHECK_ROPE_NORM,      /* |‖R(m)k‖ − ‖k‖| max over cached keys' positions */
    AL_CHECK_ROPE_RELATIVE,  /* |<R(0)v,R(1)v> − <R(1)v,R(2)v>| */
    AL_CHECK_MASK_ZERO,      /* largest weight on a masked cell (must be exactly 0) */
    AL_CHECK_ROWS_SUM,       /* max |Σ weights − 1| over rows */
    AL_CHECK_CACHE_DIFF,     /* max |cached − uncached output| over processed tokens */
    AL_CHECK_COUNT
} al_check_id;

typedef struct {
    al_check_id id;
    double value;     /* the measured number */
    double threshold; /* passes when value <= threshold */
    int passed;
} al_check;

/* Fills checks[AL_CHECK_COUNT]. Needs at least the prefill. */
al_status al_session_verify(al_session *s, al_check *checks, al_error *err);

/* ------------------------------------------------------------------------------------------
 * Benchmark: the core alone on random (PyTorch-initialised) weights, timed with a monotonic
 * clock: median of repeated runs after a warm-up. The CLI's `bench` and the WASM build use it.
 * ------------------------------------------------------------------------------------------ */

typedef struct {
    int64_t hidden, n_heads, n_kv_heads, head_dim;
    double rope_base;
    int64_t seq;       /* prefill length to time (0: skip) */
    int64_t decode_at; /* cache length before the timed decode step (0: skip) */
    int64_t repeats;   /* timed runs of each (>= 1); a warm-up run comes first */
    int64_t seed;
} al_bench_config;

typedef struct {
    double prefill_ms;     /* median time of one prefill of seq tokens (no cache) */
    double decode_ms;      /* median time of one decode step against decode_at cached tokens */
    double prefill_gflops; /* al_attn_flops(cfg, seq, seq) / prefill time */
    double decode_recompute_ms; /* the same step by recomputing decode_at + 1 tokens, no cache */
} al_bench_result;

al_status al_bench_run(const al_bench_config *cfg, al_bench_result *out, al_error *err);

/* ------------------------------------------------------------------------------------------
 * Struct layouts for bindings: byte offsets of each field (in declaration order) followed by
 * the struct's size, so the WebAssembly wrapper fills and reads structs without hard-coding
 * a C compiler's layout. Returns the number of values written (fields + 1), 0 if cap is short.
 * ------------------------------------------------------------------------------------------ */

typedef enum {
    AL_LAYOUT_SESSION_CONFIG = 0,
    AL_LAYOUT_CHECK,
    AL_LAYOUT_ERROR,
    AL_LAYOUT_FORWARD_OPTIONS,
    AL_LAYOUT_FORWARD_SUMMARY,
    AL_LAYOUT_BENCH_CONFIG,
    AL_LAYOUT_BENCH_RESULT
} al_layout_id;
int al_struct_layout(al_layout_id which, int32_t *offsets, int cap);

/* ------------------------------------------------------------------------------------------
 * PyTorch-style text: tensor repr exactly as torch 1.13 prints it (precision 4, linewidth 80,
 * sci mode and integer mode chosen the same way), for the demos.
 * ------------------------------------------------------------------------------------------ */

/* Writes the repr of a float32 (or int64 if `ints` != NULL) tensor into buf[cap], e.g.
 * "tensor([ 0.4837,  0.0887], grad_fn=<SelectBackward0>)". `suffix` (may be NULL) is the text
 * placed before the closing parenthesis, such as ", grad_fn=<SelectBackward0>".
 * Returns the full length (like snprintf); output is truncated but terminated if cap is small. */
size_t al_format_tensor(char *buf, size_t cap, const float *data, const int64_t *ints,
                        const int64_t *shape, int ndim, const char *suffix);

/* "torch.Size([2, 3, 4])". Same return convention. */
size_t al_format_size(char *buf, size_t cap, const int64_t *shape, int ndim);

/* ------------------------------------------------------------------------------------------
 * The tutorial demos: every example of 02-basic-components-demo.py (AL_DEMO_BASIC) and
 * 03-attention-demo.py (AL_DEMO_ATTENTION), printed as those scripts print them.
 * ------------------------------------------------------------------------------------------ */

typedef enum { AL_DEMO_BASIC = 0, AL_DEMO_ATTENTION = 1 } al_demo;
typedef enum { AL_LANG_ZH = 0, AL_LANG_EN = 1 } al_lang;

/* seed < 0: each torch.manual_seed(...) keeps the script's value; else all use `seed`.
 * Writes the whole text to buf[cap]; returns its full length (size query with cap 0),
 * or 0 with *err set on failure. */
size_t al_demo_run(al_demo demo, al_lang lang, int64_t seed, char *buf, size_t cap,
                   al_error *err);

#ifdef __cplusplus
}
#endif
#endif /* ATTNLAB_H */
