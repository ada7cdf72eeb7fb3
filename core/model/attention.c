/* attention.c — one attention layer of MiniMind, as the seeds' SimpleAttention computes it:
 * projections, head split, QK-Norm, RoPE, GQA, causal mask, softmax, weights · V, output
 * projection; with or without a KV cache.
 *
 * Memory: the weights live in one allocation carved into the six parameters, plus the four
 * projections packed for the GEMM (kernels/gemm.c), repacked only after the weights were
 * handed out for writing; the RoPE table and every intermediate buffer live in a third
 * allocation sized for max_batch × max_seq tokens at create time, so a forward call (and in
 * particular a decode step) never allocates. The forward is the attention block the decoder
 * runs too (model/attend.c): scores are computed a block of queries at a time, over only the
 * keys the block may see, so the full [seq, seq] matrix is never materialised. */
#include "attnlab/model.h"
#include "model/kv_cache.h"
#include "model/attend.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct al_attn {
    al_attn_hparams hp;
    al_attn_capacity cap;
    float *param[AL_PARAM_COUNT];       /* carved from `weights` */
    int64_t param_numel[AL_PARAM_COUNT];
    float *weights;                     /* q, k, v, o projections, q_norm, k_norm */
    float *packed[AL_PARAM_O_PROJ + 1]; /* the projections as GEMM panels, carved from packed_mem */
    float *packed_mem;
    int packed_stale;                   /* weights handed out for writing since the last pack */

    float *work;     /* one allocation for everything below */
    float *rope_cos; /* [max_seq, head_dim] */
    float *rope_sin; /* [max_seq, head_dim] */
    float *q;        /* [max_batch · max_seq, n_heads, head_dim] */
    float *k;        /* [max_batch · max_seq, n_kv_heads, head_dim] */
    float *v;        /* [max_batch · max_seq, n_kv_heads, head_dim] */
    float *ctx;      /* [max_batch · max_seq, n_heads · head_dim] heads merged, before o_proj */
    float *k_packed; /* [n_kv_heads, ceil(max_seq/16), head_dim, 16] one sequence's K as panels */
    float *scores;   /* [QUERY_BLOCK, max_seq] a block of score rows, then of weights */
};

enum { QUERY_BLOCK = AL_ATTEND_QUERY_BLOCK };

al_attn_hparams al_attn_hparams_default(void) {
    al_attn_hparams hp = {0};
    hp.hidden = 16;
    hp.n_heads = 4;
    hp.n_kv_heads = 2;
    hp.head_dim = 8;
    hp.rope_base = 10000.0;
    hp.eps = 1e-6f;
    hp.qk_norm = 1;
    return hp;
}

void al_attn_hparams_fill_default(al_attn_hparams *hp) {
    if (hp) *hp = al_attn_hparams_default();
}

/* Floats of the work buffer (RoPE tables + activations); the fields must be within limits. */
static int64_t work_floats(const al_attn_hparams *hp, const al_attn_capacity *cap) {
    const int64_t tokens = cap->max_batch * cap->max_seq;
    return 2 * cap->max_seq * hp->head_dim                  /* rope cos, sin */
           + tokens * hp->n_heads * hp->head_dim * 2        /* q, ctx */
           + tokens * hp->n_kv_heads * hp->head_dim * 2     /* k, v */
           + hp->n_kv_heads * al_pack_panels_size(cap->max_seq, hp->head_dim) /* k_packed */
           + QUERY_BLOCK * cap->max_seq;                    /* scores */
}

static int64_t weight_floats(const al_attn_hparams *hp) {
    int64_t total = 0;
    for (int p = 0; p < AL_PARAM_COUNT; p++) {
        int64_t shape[2] = {0, 0};
        int nd = al_attn_param_shape(hp, (al_attn_param)p, shape);
        total += nd == 2 ? shape[0] * shape[1] : shape[0];
    }
    return total;
}

/* Floats of the packed projections. */
static int64_t packed_floats(const al_attn_hparams *hp) {
    int64_t total = 0;
    for (int p = AL_PARAM_Q_PROJ; p <= AL_PARAM_O_PROJ; p++) {
        int64_t shape[2] = {0, 0};
        al_attn_param_shape(hp, (al_attn_param)p, shape);
        total += al_pack_panels_size(shape[0], shape[1]);
    }
    return total;
}

static int fields_within_limits(const al_attn_hparams *hp, const al_attn_capacity *cap) {
    return hp->hidden >= 1 && hp->hidden <= AL_MAX_HIDDEN && hp->n_heads >= 1 &&
           hp->n_heads <= AL_MAX_HEADS && hp->n_kv_heads >= 1 && hp->n_kv_heads <= hp->n_heads &&
           hp->head_dim >= 2 && hp->head_dim <= AL_MAX_HEAD_DIM && cap->max_batch >= 1 &&
           cap->max_batch <= AL_MAX_BATCH && cap->max_seq >= 1 && cap->max_seq <= AL_MAX_SEQ;
}

int64_t al_attn_bytes_needed(const al_attn_hparams *hp, const al_attn_capacity *cap) {
    if (!hp || !cap || !fields_within_limits(hp, cap)) return -1;
    /* Within the limits every product below is < 2^53, so int64 cannot overflow. */
    const int64_t cache = 2 * cap->max_batch * cap->max_seq * hp->n_kv_heads * hp->head_dim;
    return (int64_t)sizeof(float) *
           (weight_floats(hp) + packed_floats(hp) + work_floats(hp, cap) + cache);
}

#define CHECK_RANGE(s, field, lo, hi)                                                      \
    do {                                                                                   \
        if ((s)->field < (lo) || (s)->field > (hi))                                        \
            return al_fail(err, ((s)->field > (hi)) ? AL_ERR_LIMIT : AL_ERR_CONFIG,        \
                           #field " must be between %lld and %lld (got %lld)",             \
                           (long long)(lo), (long long)(hi), (long long)(s)->field);       \
    } while (0)

al_status al_attn_hparams_check(const al_attn_hparams *hp, al_error *err) {
    if (!hp) return al_fail(err, AL_ERR_ARG, "no hyper-parameters given");
    CHECK_RANGE(hp, hidden, 1, AL_MAX_HIDDEN);
    CHECK_RANGE(hp, n_heads, 1, AL_MAX_HEADS);
    CHECK_RANGE(hp, n_kv_heads, 1, AL_MAX_HEADS);
    CHECK_RANGE(hp, head_dim, 2, AL_MAX_HEAD_DIM);
    if (hp->n_heads % hp->n_kv_heads != 0)
        return al_fail(err, AL_ERR_CONFIG,
                       "n_heads (%lld) must be a multiple of n_kv_heads (%lld) for GQA",
                       (long long)hp->n_heads, (long long)hp->n_kv_heads);
    if (hp->head_dim % 2 != 0)
        return al_fail(err, AL_ERR_CONFIG,
                       "head_dim must be even: RoPE rotates pairs of dimensions (got %lld)",
                       (long long)hp->head_dim);
    char shown[AL_SHORTEST_MAX];
    if (!(hp->rope_base > 1.0) || !isfinite(hp->rope_base) || hp->rope_base > 1e30)
        return al_fail(err, AL_ERR_CONFIG, "rope_base must be a finite number in (1, 1e30] (got %s)",
                       al_format_shortest(shown, hp->rope_base));
    if (!(hp->eps > 0.0f) || !(hp->eps < 1.0f))
        return al_fail(err, AL_ERR_CONFIG, "eps must be in (0, 1) (got %s)",
                       al_format_shortest(shown, (double)hp->eps));
    if (hp->qk_norm != 0 && hp->qk_norm != 1)
        return al_fail(err, AL_ERR_CONFIG, "qk_norm must be 0 or 1 (got %d)", (int)hp->qk_norm);
    return AL_OK;
}

al_status al_attn_check(const al_attn_hparams *hp, const al_attn_capacity *cap, al_error *err) {
    al_status st = al_attn_hparams_check(hp, err);
    if (st != AL_OK) return st;
    if (!cap) return al_fail(err, AL_ERR_ARG, "no capacity given");
    CHECK_RANGE(cap, max_batch, 1, AL_MAX_BATCH);
    CHECK_RANGE(cap, max_seq, 1, AL_MAX_SEQ);
    const int64_t bytes = al_attn_bytes_needed(hp, cap);
    if (bytes > AL_MAX_BYTES)
        return al_fail(err, AL_ERR_LIMIT,
                       "this configuration needs %lld MiB (weights, activations and KV cache); "
                       "the limit is %lld MiB",
                       (long long)(bytes >> 20), (long long)(AL_MAX_BYTES >> 20));
    return AL_OK;
}

static const char *const PARAM_NAMES[AL_PARAM_COUNT] = {
    "q_proj.weight", "k_proj.weight", "v_proj.weight",
    "o_proj.weight", "q_norm.weight", "k_norm.weight",
};

const char *al_attn_param_name(al_attn_param p) {
    return (p >= 0 && p < AL_PARAM_COUNT) ? PARAM_NAMES[p] : NULL;
}

int al_attn_param_shape(const al_attn_hparams *c, al_attn_param p, int64_t shape[2]) {
    if (!c || !shape) return -1;
    const int64_t q_out = c->n_heads * c->head_dim, kv_out = c->n_kv_heads * c->head_dim;
    switch (p) {
    case AL_PARAM_Q_PROJ: shape[0] = q_out; shape[1] = c->hidden; return 2;
    case AL_PARAM_K_PROJ:
    case AL_PARAM_V_PROJ: shape[0] = kv_out; shape[1] = c->hidden; return 2;
    case AL_PARAM_O_PROJ: shape[0] = c->hidden; shape[1] = q_out; return 2;
    case AL_PARAM_Q_NORM:
    case AL_PARAM_K_NORM: shape[0] = c->head_dim; shape[1] = 1; return 1;
    default: return -1;
    }
}

al_status al_attn_create(const al_attn_hparams *hp, const al_attn_capacity *cap, al_attn **out,
                         al_error *err) {
    if (!out) return al_fail(err, AL_ERR_ARG, "attention: no output pointer");
    *out = NULL;
    al_status st = al_attn_check(hp, cap, err);
    if (st != AL_OK) return st;

    al_attn *a = calloc(1, sizeof *a);
    if (!a) return al_fail(err, AL_ERR_NOMEM, "attention: out of memory");
    a->hp = *hp;
    a->cap = *cap;
    a->weights = malloc((size_t)weight_floats(hp) * sizeof(float));
    a->packed_mem = malloc((size_t)packed_floats(hp) * sizeof(float));
    a->work = malloc((size_t)work_floats(hp, cap) * sizeof(float));
    if (!a->weights || !a->packed_mem || !a->work) {
        al_attn_free(a);
        return al_fail(err, AL_ERR_NOMEM, "attention: out of memory for %lld bytes",
                       (long long)al_attn_bytes_needed(hp, cap));
    }

    float *w = a->weights;
    for (int p = 0; p < AL_PARAM_COUNT; p++) {
        int64_t shape[2] = {0, 0};
        int nd = al_attn_param_shape(hp, (al_attn_param)p, shape);
        a->param[p] = w;
        a->param_numel[p] = nd == 2 ? shape[0] * shape[1] : shape[0];
        w += a->param_numel[p];
    }
    float *pk = a->packed_mem;
    for (int p = AL_PARAM_Q_PROJ; p <= AL_PARAM_O_PROJ; p++) {
        int64_t shape[2] = {0, 0};
        al_attn_param_shape(hp, (al_attn_param)p, shape);
        a->packed[p] = pk;
        pk += al_pack_panels_size(shape[0], shape[1]);
    }
    al_attn_init_torch(a, NULL); /* zero projections, unit norms */

    const int64_t tokens = cap->max_batch * cap->max_seq;
    float *p = a->work;
    a->rope_cos = p; p += cap->max_seq * hp->head_dim;
    a->rope_sin = p; p += cap->max_seq * hp->head_dim;
    a->q = p;        p += tokens * hp->n_heads * hp->head_dim;
    a->ctx = p;      p += tokens * hp->n_heads * hp->head_dim;
    a->k = p;        p += tokens * hp->n_kv_heads * hp->head_dim;
    a->v = p;        p += tokens * hp->n_kv_heads * hp->head_dim;
    a->k_packed = p; p += hp->n_kv_heads * al_pack_panels_size(cap->max_seq, hp->head_dim);
    a->scores = p;
    al_rope_table(a->rope_cos, a->rope_sin, cap->max_seq, hp->head_dim, hp->rope_base);
    *out = a;
    return AL_OK;
}

void al_attn_free(al_attn *a) {
    if (!a) return;
    free(a->weights);
    free(a->packed_mem);
    free(a->work);
    free(a);
}

const al_attn_hparams *al_attn_get_hparams(const al_attn *a) { return a ? &a->hp : NULL; }

const float *al_attn_get_param(const al_attn *a, al_attn_param p, int64_t *numel) {
    if (!a || p < 0 || p >= AL_PARAM_COUNT) return NULL;
    if (numel) *numel = a->param_numel[p];
    return a->param[p];
}

float *al_attn_param_for_write(al_attn *a, al_attn_param p, int64_t *numel) {
    if (!a || p < 0 || p >= AL_PARAM_COUNT) return NULL;
    if (numel) *numel = a->param_numel[p];
    a->packed_stale = 1; /* the caller may write: repack before the next use */
    return a->param[p];
}

/* Packs the projections for the GEMM if the weights may have changed. */
static void ensure_packed(al_attn *a) {
    if (!a->packed_stale) return;
    for (int p = AL_PARAM_Q_PROJ; p <= AL_PARAM_O_PROJ; p++) {
        int64_t shape[2] = {0, 0};
        al_attn_param_shape(&a->hp, (al_attn_param)p, shape);
        al_pack_panels(a->packed[p], a->param[p], shape[0], shape[1]);
    }
    a->packed_stale = 0;
}

/* y [n, out] = x [n, in] · Wᵀ with the packed projection p. */
static void project(al_attn *a, al_attn_param p, float *y, const float *x, int64_t n) {
    int64_t shape[2] = {0, 0};
    al_attn_param_shape(&a->hp, p, shape);
    al_gemm(y, shape[0], x, shape[1], al_bmat_packed(a->packed[p], shape[1]), n, shape[0],
            shape[1], 0);
}

void al_attn_init_torch(al_attn *a, al_rng *r) {
    /* SimpleAttention.__init__ creates q, k, v, o (nn.Linear: kaiming_uniform, a = √5) in this
     * order, then two SimpleRMSNorm with weight = ones. Without a generator: zeros. */
    for (int p = AL_PARAM_Q_PROJ; p <= AL_PARAM_O_PROJ; p++) {
        int64_t shape[2] = {0, 0};
        al_attn_param_shape(&a->hp, (al_attn_param)p, shape);
        if (r) al_rng_linear_init(r, a->param[p], shape[0], shape[1]);
        else memset(a->param[p], 0, (size_t)a->param_numel[p] * sizeof(float));
    }
    for (int p = AL_PARAM_Q_NORM; p <= AL_PARAM_K_NORM; p++)
        for (int64_t i = 0; i < a->param_numel[p]; i++) a->param[p][i] = 1.0f;
    a->packed_stale = 1;
}

void al_repeat_kv(float *out, const float *kv, int64_t batch, int64_t seq, int64_t n_kv_heads,
                  int64_t n_rep, int64_t head_dim) {
    /* Query head h = kv_head · n_rep + r reads KV head kv_head = h / n_rep. */
    for (int64_t t = 0; t < batch * seq; t++)
        for (int64_t kvh = 0; kvh < n_kv_heads; kvh++)
            for (int64_t r = 0; r < n_rep; r++)
                memcpy(out + ((t * n_kv_heads + kvh) * n_rep + r) * head_dim,
                       kv + (t * n_kv_heads + kvh) * head_dim, (size_t)head_dim * sizeof(float));
}

static al_status check_forward_args(const al_attn *a, int64_t batch, int64_t seq, int64_t past,
                                    al_error *err) {
    const al_attn_capacity *c = &a->cap;
    if (batch < 1 || batch > c->max_batch)
        return al_fail(err, batch < 1 ? AL_ERR_ARG : AL_ERR_CAPACITY,
                       "batch must be between 1 and %lld (got %lld)", (long long)c->max_batch,
                       (long long)batch);
    if (seq < 1 || seq > c->max_seq - past)
        return al_fail(err, seq < 1 ? AL_ERR_ARG : AL_ERR_CAPACITY,
                       "%lld new tokens after %lld cached exceed max_seq %lld", (long long)seq,
                       (long long)past, (long long)c->max_seq);
    return AL_OK;
}

static al_status check_finite(const float *x, int64_t n, const char *what, al_error *err) {
    for (int64_t i = 0; i < n; i++)
        if (!isfinite(x[i]))
            return al_fail(err, AL_ERR_NONFINITE, "%s holds a non-finite value at index %lld",
                           what, (long long)i);
    return AL_OK;
}

al_status al_attn_project_qkv(al_attn *a, float *q, float *k, float *v, const float *x,
                              int64_t batch, int64_t seq, al_error *err) {
    if (!a || !x) return al_fail(err, AL_ERR_ARG, "project_qkv: NULL argument");
    al_status st = check_forward_args(a, batch, seq, 0, err);
    if (st != AL_OK) return st;
    const al_attn_hparams *c = &a->hp;
    const int64_t n = batch * seq;
    st = check_finite(x, n * c->hidden, "input x", err);
    if (st != AL_OK) return st;
    ensure_packed(a);
    if (q) project(a, AL_PARAM_Q_PROJ, q, x, n);
    if (k) project(a, AL_PARAM_K_PROJ, k, x, n);
    if (v) project(a, AL_PARAM_V_PROJ, v, x, n);
    return AL_OK;
}

al_status al_attn_forward(al_attn *a, al_kv_cache *cache, float *out, float *attn_weights,
                          int64_t attn_cap, const float *x, int64_t batch, int64_t seq,
                          al_error *err) {
    if (!a || !out || !x) return al_fail(err, AL_ERR_ARG, "attention forward: NULL argument");
    const al_attn_hparams *c = &a->hp;
    const int64_t H = c->n_heads, KV = c->n_kv_heads, D = c->head_dim;
    const int64_t past = cache ? al_kv_cache_len(cache) : 0;
    al_status st = check_forward_args(a, batch, seq, past, err);
    if (st != AL_OK) return st;
    if (cache && (st = al_kv_cache_check_append(cache, KV, D, batch, seq, err)) != AL_OK) return st;
    const int64_t L = past + seq; /* keys each new query can see, before masking */
    if (attn_weights && attn_cap < batch * H * seq * L)
        return al_fail(err, AL_ERR_CAPACITY,
                       "attention weights need %lld floats, buffer holds %lld",
                       (long long)(batch * H * seq * L), (long long)attn_cap);
    const int64_t n = batch * seq;
    if ((st = check_finite(x, n * c->hidden, "input x", err)) != AL_OK) return st;

    /* Projections, QK-Norm, RoPE, the cache, each head's attention and o_proj: the block the
     * decoder runs too (model/attend.c). */
    ensure_packed(a);
    const al_attn_bufs bufs = {.q = a->q, .k = a->k, .v = a->v, .ctx = a->ctx, .k_packed = a->k_packed,
                               .scores = a->scores};
    const al_attn_block w = {.wq = a->packed[AL_PARAM_Q_PROJ], .wk = a->packed[AL_PARAM_K_PROJ],
                             .wv = a->packed[AL_PARAM_V_PROJ], .wo = a->packed[AL_PARAM_O_PROJ],
                             .q_norm = a->param[AL_PARAM_Q_NORM], .k_norm = a->param[AL_PARAM_K_NORM],
                             .rope_cos = a->rope_cos, .rope_sin = a->rope_sin, .rope_style = AL_ROPE_HALF_SPLIT};
    al_attn_block_forward(out, attn_weights, &bufs, x, c, &w, cache, batch, seq);
    return AL_OK;
}
