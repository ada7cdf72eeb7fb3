/* model.c — the whole decoder: token embedding, n_layers pre-norm blocks (attention with GQA,
 * optional QK-Norm, half-split or interleaved RoPE and a KV cache; SwiGLU FFN), the final
 * RMSNorm and the lm_head (tied to the embedding or not) — MiniMind's MiniMindForCausalLM and
 * Llama / llama2.c's Transformer.
 *
 * Memory: the weights in one allocation carved into named arrays; their GEMM-packed copies in
 * a second, rebuilt only after weights were handed out for writing; one KV cache per layer for
 * the context reserved at create; and every activation of a forward call in a third
 * allocation sized for max_step tokens. A forward call allocates nothing. */
#include "model/attend.h"
#include "model/kv_cache.h"
#include "model/rope.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Per-layer weights, each [out, in] or [dim]: pointers into the model's weight block. */
enum { LAYER_PARAMS = AL_MP_DOWN - AL_MP_ATTN_NORM + 1 };
/* The linear maps packed for the GEMM, per layer (q, k, v, o, gate, up, down) and the head. */
enum { PACK_Q, PACK_K, PACK_V, PACK_O, PACK_GATE, PACK_UP, PACK_DOWN, PACKS_PER_LAYER };

struct al_model {
    al_model_hparams hp;
    int64_t context;  /* positions reserved in the caches and RoPE tables */
    int64_t max_step; /* tokens per pass through the blocks */
    int64_t len;      /* tokens in the caches */

    float *weights;                      /* one allocation for every weight */
    float *embed;                        /* [vocab, hidden] */
    float *final_norm;                   /* [hidden] */
    float *lm_head;                      /* [vocab, hidden], or the embedding when tied */
    float **layer;                       /* [n_layers][LAYER_PARAMS]: each layer's weights */
    int64_t param_numel[AL_MP_COUNT];

    float *packed_mem;                   /* the linear maps as GEMM panels */
    float **packed;                      /* [n_layers · PACKS_PER_LAYER + 1], head last */
    int packed_stale;

    al_kv_cache **cache;                 /* [n_layers] */
    float *work;                         /* one allocation for everything below */
    float *rope_cos, *rope_sin;          /* [context, head_dim] */
    float *x;                            /* [max_step, hidden] the residual stream */
    float *xn;                           /* [max_step, hidden] normed */
    float *q;                            /* [max_step, n_heads, head_dim] */
    float *k, *v;                        /* [max_step, n_kv_heads, head_dim] */
    float *ctx;                          /* [max_step, n_heads·head_dim] */
    float *gate, *up;                    /* [max_step, ffn_hidden] */
    float *tmp;                          /* [max_step, hidden] a block's output before the add */
    float *scores;                       /* [AL_ATTEND_QUERY_BLOCK, context] */
};

/* ---- configuration ------------------------------------------------------------------------ */

#define CHECK_RANGE(field, lo, hi)                                                          \
    do {                                                                                    \
        if (hp->field < (lo) || hp->field > (hi))                                           \
            return al_fail(err, hp->field > (hi) ? AL_ERR_LIMIT : AL_ERR_CONFIG,            \
                           "model: " #field " must be between %lld and %lld (got %lld)",    \
                           (long long)(lo), (long long)(hi), (long long)hp->field);         \
    } while (0)

al_status al_model_hparams_check(const al_model_hparams *hp, al_error *err) {
    if (!hp) return al_fail(err, AL_ERR_ARG, "model: no hyper-parameters");
    CHECK_RANGE(vocab, 1, AL_MAX_VOCAB);
    CHECK_RANGE(n_layers, 1, AL_MAX_LAYERS);
    CHECK_RANGE(ffn_hidden, 1, AL_MAX_FFN);
    CHECK_RANGE(max_seq, 1, AL_MAX_SEQ);
    if (hp->rope_style != AL_ROPE_HALF_SPLIT && hp->rope_style != AL_ROPE_INTERLEAVED)
        return al_fail(err, AL_ERR_CONFIG, "model: unknown RoPE style %d", (int)hp->rope_style);
    if (hp->tied != 0 && hp->tied != 1)
        return al_fail(err, AL_ERR_CONFIG, "model: tied must be 0 or 1 (got %d)", (int)hp->tied);
    /* The attention's own fields, checked as the single layer checks them. */
    const al_attn_hparams attn = {hp->hidden, hp->n_heads, hp->n_kv_heads, hp->head_dim,
                                  hp->rope_base, hp->eps, hp->qk_norm};
    return al_attn_hparams_check(&attn, err);
}

int al_model_param_shape(const al_model_hparams *hp, al_model_param p, int64_t shape[2]) {
    if (!hp || !shape) return -1;
    const int64_t q_out = hp->n_heads * hp->head_dim, kv_out = hp->n_kv_heads * hp->head_dim;
    shape[1] = 1;
    switch (p) {
    case AL_MP_EMBED: shape[0] = hp->vocab, shape[1] = hp->hidden; return 2;
    case AL_MP_ATTN_NORM:
    case AL_MP_FFN_NORM:
    case AL_MP_FINAL_NORM: shape[0] = hp->hidden; return 1;
    case AL_MP_WQ: shape[0] = q_out, shape[1] = hp->hidden; return 2;
    case AL_MP_WK:
    case AL_MP_WV: shape[0] = kv_out, shape[1] = hp->hidden; return 2;
    case AL_MP_WO: shape[0] = hp->hidden, shape[1] = q_out; return 2;
    case AL_MP_Q_NORM:
    case AL_MP_K_NORM: shape[0] = hp->head_dim; return hp->qk_norm ? 1 : 0;
    case AL_MP_GATE:
    case AL_MP_UP: shape[0] = hp->ffn_hidden, shape[1] = hp->hidden; return 2;
    case AL_MP_DOWN: shape[0] = hp->hidden, shape[1] = hp->ffn_hidden; return 2;
    case AL_MP_LM_HEAD: shape[0] = hp->vocab, shape[1] = hp->hidden; return hp->tied ? 0 : 2;
    default: return -1;
    }
}

static int64_t param_numel(const al_model_hparams *hp, al_model_param p) {
    int64_t shape[2] = {0, 0};
    const int nd = al_model_param_shape(hp, p, shape);
    return nd == 2 ? shape[0] * shape[1] : nd == 1 ? shape[0] : 0;
}

static int is_layer_param(al_model_param p) { return p >= AL_MP_ATTN_NORM && p <= AL_MP_DOWN; }

/* The linear map of each pack slot, and its shape. */
static const al_model_param PACK_PARAM[PACKS_PER_LAYER] = {AL_MP_WQ,   AL_MP_WK, AL_MP_WV,  AL_MP_WO,
                                                           AL_MP_GATE, AL_MP_UP, AL_MP_DOWN};

/* Floats of: the weights; their packed copies; the activations. Within the checked limits
 * every product stays far below 2^62. */
static int64_t weight_floats(const al_model_hparams *hp) {
    int64_t n = param_numel(hp, AL_MP_EMBED) + param_numel(hp, AL_MP_FINAL_NORM) +
                param_numel(hp, AL_MP_LM_HEAD);
    for (int p = AL_MP_ATTN_NORM; p <= AL_MP_DOWN; p++) n += hp->n_layers * param_numel(hp, (al_model_param)p);
    return n;
}

static int64_t packed_floats(const al_model_hparams *hp) {
    int64_t n = al_pack_panels_size(hp->vocab, hp->hidden); /* the head */
    for (int i = 0; i < PACKS_PER_LAYER; i++) {
        int64_t shape[2] = {0, 0};
        al_model_param_shape(hp, PACK_PARAM[i], shape);
        n += hp->n_layers * al_pack_panels_size(shape[0], shape[1]);
    }
    return n;
}

static int64_t work_floats(const al_model_hparams *hp, int64_t context, int64_t max_step) {
    const int64_t q_width = hp->n_heads * hp->head_dim, kv_width = hp->n_kv_heads * hp->head_dim;
    return 2 * context * hp->head_dim + max_step * (4 * hp->hidden + 2 * q_width + 2 * kv_width +
                                                    2 * hp->ffn_hidden) +
           AL_ATTEND_QUERY_BLOCK * context;
}

int64_t al_model_bytes_needed(const al_model_hparams *hp, int64_t context, int64_t max_step) {
    if (al_model_hparams_check(hp, NULL) != AL_OK || context < 1 || context > hp->max_seq ||
        max_step < 1 || max_step > context)
        return -1;
    const int64_t cache_floats = hp->n_layers * 2 * context * hp->n_kv_heads * hp->head_dim +
                                 hp->n_layers * hp->n_kv_heads * AL_GEMM_NR * hp->head_dim;
    return (int64_t)sizeof(float) *
           (weight_floats(hp) + packed_floats(hp) + work_floats(hp, context, max_step) + cache_floats);
}

/* ---- create, free, weights ---------------------------------------------------------------- */

al_status al_model_create(const al_model_hparams *hp, int64_t context, int64_t max_step,
                          al_model **out, al_error *err) {
    if (!out) return al_fail(err, AL_ERR_ARG, "model: no output pointer");
    *out = NULL;
    al_status st = al_model_hparams_check(hp, err);
    if (st != AL_OK) return st;
    if (context < 1 || context > hp->max_seq)
        return al_fail(err, AL_ERR_ARG, "model: a context of %lld positions; the model allows 1 to %lld",
                       (long long)context, (long long)hp->max_seq);
    if (max_step < 1 || max_step > context)
        return al_fail(err, AL_ERR_ARG, "model: %lld tokens per pass; give 1 to the context (%lld)",
                       (long long)max_step, (long long)context);
    const int64_t bytes = al_model_bytes_needed(hp, context, max_step);
    if (bytes > AL_MAX_MODEL_BYTES)
        return al_fail(err, AL_ERR_LIMIT, "model: needs %lld MiB for a context of %lld; the limit is %lld MiB",
                       (long long)(bytes >> 20), (long long)context, (long long)(AL_MAX_MODEL_BYTES >> 20));

    al_model *m = calloc(1, sizeof *m);
    if (!m) return al_fail(err, AL_ERR_NOMEM, "model: out of memory");
    m->hp = *hp;
    m->context = context;
    m->max_step = max_step;
    const int64_t L = hp->n_layers;
    m->weights = malloc((size_t)weight_floats(hp) * sizeof(float));
    m->packed_mem = malloc((size_t)packed_floats(hp) * sizeof(float));
    m->work = malloc((size_t)work_floats(hp, context, max_step) * sizeof(float));
    m->layer = calloc((size_t)(L * LAYER_PARAMS), sizeof(float *));
    m->packed = calloc((size_t)(L * PACKS_PER_LAYER + 1), sizeof(float *));
    m->cache = calloc((size_t)L, sizeof(al_kv_cache *));
    if (!m->weights || !m->packed_mem || !m->work || !m->layer || !m->packed || !m->cache) {
        al_model_free(m);
        return al_fail(err, AL_ERR_NOMEM, "model: out of memory for %lld MiB", (long long)(bytes >> 20));
    }
    const al_attn_hparams attn = {hp->hidden, hp->n_heads, hp->n_kv_heads, hp->head_dim,
                                  hp->rope_base, hp->eps, hp->qk_norm};
    const al_attn_capacity cap = {1, context};
    for (int64_t l = 0; l < L; l++)
        if ((st = al_kv_cache_create(&attn, &cap, &m->cache[l], err)) != AL_OK) {
            al_model_free(m);
            return st;
        }

    /* The weight block: embedding, every layer's weights, final norm, untied head. */
    for (int p = 0; p < AL_MP_COUNT; p++) m->param_numel[p] = param_numel(hp, (al_model_param)p);
    float *w = m->weights;
    m->embed = w, w += m->param_numel[AL_MP_EMBED];
    for (int64_t l = 0; l < L; l++)
        for (int p = AL_MP_ATTN_NORM; p <= AL_MP_DOWN; p++) {
            m->layer[l * LAYER_PARAMS + (p - AL_MP_ATTN_NORM)] = m->param_numel[p] ? w : NULL;
            w += m->param_numel[p];
        }
    m->final_norm = w, w += m->param_numel[AL_MP_FINAL_NORM];
    m->lm_head = hp->tied ? m->embed : w;
    memset(m->weights, 0, (size_t)weight_floats(hp) * sizeof(float));
    for (int64_t l = 0; l < L; l++)
        for (int p = AL_MP_ATTN_NORM; p <= AL_MP_DOWN; p++)
            if (p == AL_MP_ATTN_NORM || p == AL_MP_FFN_NORM || p == AL_MP_Q_NORM || p == AL_MP_K_NORM) {
                float *norm = m->layer[l * LAYER_PARAMS + (p - AL_MP_ATTN_NORM)];
                for (int64_t i = 0; norm && i < m->param_numel[p]; i++) norm[i] = 1.0f;
            }
    for (int64_t i = 0; i < hp->hidden; i++) m->final_norm[i] = 1.0f;

    float *pk = m->packed_mem;
    for (int64_t l = 0; l < L; l++)
        for (int i = 0; i < PACKS_PER_LAYER; i++) {
            int64_t shape[2] = {0, 0};
            al_model_param_shape(hp, PACK_PARAM[i], shape);
            m->packed[l * PACKS_PER_LAYER + i] = pk;
            pk += al_pack_panels_size(shape[0], shape[1]);
        }
    m->packed[L * PACKS_PER_LAYER] = pk;
    m->packed_stale = 1;

    const int64_t S = max_step, q_width = hp->n_heads * hp->head_dim, kv_width = hp->n_kv_heads * hp->head_dim;
    float *p = m->work;
    m->rope_cos = p; p += context * hp->head_dim;
    m->rope_sin = p; p += context * hp->head_dim;
    m->x = p;        p += S * hp->hidden;
    m->xn = p;       p += S * hp->hidden;
    m->tmp = p;      p += S * hp->hidden;
    m->q = p;        p += S * q_width;
    m->ctx = p;      p += S * q_width;
    m->k = p;        p += S * kv_width;
    m->v = p;        p += S * kv_width;
    m->gate = p;     p += S * hp->ffn_hidden;
    m->up = p;       p += S * hp->ffn_hidden;
    m->scores = p;
    /* The same cos/sin table for both conventions: the interleaved one reads each row's
     * first head_dim/2 values (pair i at index i). */
    al_rope_table(m->rope_cos, m->rope_sin, context, hp->head_dim, hp->rope_base);
    *out = m;
    return AL_OK;
}

void al_model_free(al_model *m) {
    if (!m) return;
    for (int64_t l = 0; m->cache && l < m->hp.n_layers; l++) al_kv_cache_free(m->cache[l]);
    free(m->cache);
    free(m->weights);
    free(m->packed_mem);
    free(m->packed);
    free(m->layer);
    free(m->work);
    free(m);
}

const al_model_hparams *al_model_get_hparams(const al_model *m) { return m ? &m->hp : NULL; }
int64_t al_model_context(const al_model *m) { return m ? m->context : -1; }
int64_t al_model_len(const al_model *m) { return m ? m->len : -1; }

void al_model_reset(al_model *m) {
    if (!m) return;
    for (int64_t l = 0; l < m->hp.n_layers; l++) al_kv_cache_reset(m->cache[l]);
    m->len = 0;
}

static float *param_ptr(const al_model *m, al_model_param p, int64_t layer, int64_t *numel) {
    if (!m || p < 0 || p >= AL_MP_COUNT || m->param_numel[p] == 0) return NULL;
    if (is_layer_param(p) && (layer < 0 || layer >= m->hp.n_layers)) return NULL;
    if (numel) *numel = m->param_numel[p];
    switch (p) {
    case AL_MP_EMBED: return m->embed;
    case AL_MP_FINAL_NORM: return m->final_norm;
    case AL_MP_LM_HEAD: return m->lm_head;
    default: return m->layer[layer * LAYER_PARAMS + (p - AL_MP_ATTN_NORM)];
    }
}

const float *al_model_get_param(const al_model *m, al_model_param p, int64_t layer,
                                int64_t *numel) {
    return param_ptr(m, p, layer, numel);
}

float *al_model_param_for_write(al_model *m, al_model_param p, int64_t layer, int64_t *numel) {
    float *w = param_ptr(m, p, layer, numel);
    if (w) m->packed_stale = 1; /* the caller may write: repack before the next pass */
    return w;
}

static void ensure_packed(al_model *m) {
    if (!m->packed_stale) return;
    for (int64_t l = 0; l < m->hp.n_layers; l++)
        for (int i = 0; i < PACKS_PER_LAYER; i++) {
            int64_t shape[2] = {0, 0};
            al_model_param_shape(&m->hp, PACK_PARAM[i], shape);
            al_pack_panels(m->packed[l * PACKS_PER_LAYER + i],
                           m->layer[l * LAYER_PARAMS + (PACK_PARAM[i] - AL_MP_ATTN_NORM)], shape[0],
                           shape[1]);
        }
    al_pack_panels(m->packed[m->hp.n_layers * PACKS_PER_LAYER], m->lm_head, m->hp.vocab, m->hp.hidden);
    m->packed_stale = 0;
}

/* ---- forward ------------------------------------------------------------------------------ */

/* y [n, out] = x [n, in] · Wᵀ with layer l's packed map `slot` (or the head: l = n_layers). */
static void linear(const al_model *m, int64_t l, int slot, float *y, const float *x, int64_t n,
                   int64_t out_dim, int64_t in_dim) {
    const float *packed = m->packed[l * PACKS_PER_LAYER + slot];
    al_gemm(y, out_dim, x, in_dim, al_bmat_packed(packed, in_dim), n, out_dim, in_dim, 0);
}

static const float *layer_param(const al_model *m, int64_t l, al_model_param p) {
    return m->layer[l * LAYER_PARAMS + (p - AL_MP_ATTN_NORM)];
}

/* One pass of n <= max_step tokens at positions past .. past+n-1 through every block; leaves
 * the residual stream in m->x. attn: [n_layers, n_heads, n, past + n] or NULL. */
static void blocks(al_model *m, int64_t n, int64_t past, float *attn) {
    const al_model_hparams *hp = &m->hp;
    const int64_t E = hp->hidden, H = hp->n_heads, KV = hp->n_kv_heads, D = hp->head_dim;
    const int64_t F = hp->ffn_hidden, n_rep = H / KV, keys = past + n;
    const float scale = (float)sqrt((double)D);
    for (int64_t l = 0; l < hp->n_layers; l++) {
        /* 1. Attention's pre-norm: xn = RMSNorm(x) · w. */
        al_rmsnorm_forward(m->xn, m->x, layer_param(m, l, AL_MP_ATTN_NORM), n, E, hp->eps);
        /* 2. q [n, H, D], k and v [n, KV, D]. */
        linear(m, l, PACK_Q, m->q, m->xn, n, H * D, E);
        linear(m, l, PACK_K, m->k, m->xn, n, KV * D, E);
        linear(m, l, PACK_V, m->v, m->xn, n, KV * D, E);
        /* 3. QK-Norm (MiniMind), then RoPE at the tokens' absolute positions. */
        if (hp->qk_norm) {
            al_rmsnorm_forward(m->q, m->q, layer_param(m, l, AL_MP_Q_NORM), n * H, D, hp->eps);
            al_rmsnorm_forward(m->k, m->k, layer_param(m, l, AL_MP_K_NORM), n * KV, D, hp->eps);
        }
        const float *cos_t = m->rope_cos + past * D, *sin_t = m->rope_sin + past * D;
        if (hp->rope_style == AL_ROPE_INTERLEAVED) {
            al_rope_apply_interleaved(m->q, cos_t, sin_t, n, H, D);
            al_rope_apply_interleaved(m->k, cos_t, sin_t, n, KV, D);
        } else {
            al_rope_apply(m->q, cos_t, sin_t, n, H, D);
            al_rope_apply(m->k, cos_t, sin_t, n, KV, D);
        }
        /* 4. K and V into the layer's cache, then each head over the keys it may see; query
         *    head h reads KV head h / n_rep. */
        al_kv_cache *cache = m->cache[l];
        for (int64_t t = 0; t < n; t++) al_kv_cache_store(cache, 0, past + t, m->k + t * KV * D, m->v + t * KV * D);
        al_kv_cache_commit(cache, 1, n);
        for (int64_t h = 0; h < H; h++)
            al_attend_head(m->ctx + h * D, H * D, attn ? attn + ((l * H + h) * n) * keys : NULL, keys,
                           m->q + h * D, H * D, al_kv_cache_keys(cache, 0, h / n_rep),
                           al_kv_cache_values(cache, 0, h / n_rep), n, past, D, scale, 0, m->scores);
        /* 5. h = x + o_proj(heads merged). */
        linear(m, l, PACK_O, m->tmp, m->ctx, n, E, H * D);
        for (int64_t i = 0; i < n * E; i++) m->x[i] = m->x[i] + m->tmp[i];
        /* 6. The FFN's pre-norm, then SwiGLU: down(silu(gate(xn)) · up(xn)), silu(a) = a·σ(a). */
        al_rmsnorm_forward(m->xn, m->x, layer_param(m, l, AL_MP_FFN_NORM), n, E, hp->eps);
        linear(m, l, PACK_GATE, m->gate, m->xn, n, F, E);
        linear(m, l, PACK_UP, m->up, m->xn, n, F, E);
        for (int64_t i = 0; i < n * F; i++) {
            const float a = m->gate[i];
            m->gate[i] = a / (1.0f + expf(-a)) * m->up[i];
        }
        /* 7. out = h + down(...). */
        linear(m, l, PACK_DOWN, m->tmp, m->gate, n, E, F);
        for (int64_t i = 0; i < n * E; i++) m->x[i] = m->x[i] + m->tmp[i];
    }
}

al_status al_model_forward(al_model *m, const int32_t *ids, int64_t n, float *logits,
                           int64_t logits_rows, int64_t logits_cap, float *attn, int64_t attn_cap,
                           al_error *err) {
    if (!m || (!ids && n > 0)) return al_fail(err, AL_ERR_ARG, "model forward: NULL argument");
    const al_model_hparams *hp = &m->hp;
    if (n < 1) return al_fail(err, AL_ERR_ARG, "model forward: no tokens");
    if (n > m->context - m->len)
        return al_fail(err, AL_ERR_CAPACITY, "model forward: %lld tokens after %lld would pass the context of %lld",
                       (long long)n, (long long)m->len, (long long)m->context);
    if (logits_rows != 0 && logits_rows != 1 && logits_rows != n)
        return al_fail(err, AL_ERR_ARG, "model forward: logits for 0, 1 or all %lld tokens (got %lld)",
                       (long long)n, (long long)logits_rows);
    if (logits_rows && !logits) return al_fail(err, AL_ERR_ARG, "model forward: no logits buffer");
    if (logits_cap < logits_rows * hp->vocab)
        return al_fail(err, AL_ERR_CAPACITY, "model forward: logits need %lld floats, the buffer holds %lld",
                       (long long)(logits_rows * hp->vocab), (long long)logits_cap);
    if (attn) {
        if (n > m->max_step)
            return al_fail(err, AL_ERR_CAPACITY, "model forward: attention weights for %lld tokens; at most %lld per call",
                           (long long)n, (long long)m->max_step);
        const int64_t need = hp->n_layers * hp->n_heads * n * (m->len + n);
        if (attn_cap < need)
            return al_fail(err, AL_ERR_CAPACITY, "model forward: attention weights need %lld floats, the buffer holds %lld",
                           (long long)need, (long long)attn_cap);
    }
    for (int64_t i = 0; i < n; i++)
        if (ids[i] < 0 || ids[i] >= hp->vocab)
            return al_fail(err, AL_ERR_ARG, "token id %d at %lld is outside the vocabulary [0, %lld)",
                           (int)ids[i], (long long)i, (long long)hp->vocab);
    ensure_packed(m);

    /* In pieces of at most max_step tokens: a token's numbers do not depend on the piece it
     * went through (each query sees the same keys, summed in the same order). */
    for (int64_t done = 0; done < n;) {
        const int64_t step = n - done < m->max_step ? n - done : m->max_step;
        const int64_t past = m->len;
        /* 0. x = embedding rows of the ids. */
        for (int64_t t = 0; t < step; t++)
            memcpy(m->x + t * hp->hidden, m->embed + (int64_t)ids[done + t] * hp->hidden,
                   (size_t)hp->hidden * sizeof(float));
        blocks(m, step, past, attn);
        m->len += step;
        /* 8. Final norm and lm_head for the rows asked for: logits = RMSNorm(x) · headᵀ. */
        const int64_t first = logits_rows == 1 ? (done + step == n ? step - 1 : step) : 0;
        const int64_t rows = logits_rows == 0 ? 0 : step - first;
        if (rows > 0) {
            al_rmsnorm_forward(m->xn, m->x + first * hp->hidden, m->final_norm, rows, hp->hidden, hp->eps);
            float *dst = logits + (logits_rows == 1 ? 0 : (done + first) * hp->vocab);
            linear(m, hp->n_layers, 0, dst, m->xn, rows, hp->vocab, hp->hidden);
        }
        done += step;
    }
    return AL_OK;
}

int64_t al_sample_greedy(const float *logits, int64_t vocab) {
    if (!logits || vocab < 1) return -1;
    int64_t best = -1;
    for (int64_t i = 0; i < vocab; i++)
        if (logits[i] == logits[i] && (best < 0 || logits[i] > logits[best])) best = i;
    return best < 0 ? 0 : best;
}
