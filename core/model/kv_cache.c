/* kv_cache.c — the KV cache: K (after QK-Norm and RoPE) and V of every token seen so far, so a
 * decode step computes projections for its one new token and reads the past from here.
 *
 * Memory is reserved once for max_batch × max_seq tokens, so appending never allocates. With
 * GQA only n_kv_heads heads are stored, which is the whole point of GQA: the cache is
 * n_heads/n_kv_heads times smaller than with MHA.
 *
 * Layouts are chosen for the two products that read the cache (see kernels/gemm.c). Scores
 * q·Kᵀ read K with head_dim as the summed index: K is kept as panels of 16 tokens, [head_dim][16] each,
 * per sequence and KV head — the packed form the GEMM reads without copying. Weights·V read V
 * with tokens as the summed index: V is kept as panels of 16 of its head_dim columns over every
 * position, [max_seq][16] each, per sequence and KV head, the lanes past head_dim zero — the
 * GEMM's padded panels, which it reads in place; plain rows with a head_dim below 16 (8 for
 * stories260K) made it copy V into a padded panel for every head at every decode step, a quarter
 * of the step's instructions. al_kv_cache_read returns both in the seeds' layout
 * [batch, len, n_kv_heads, head_dim]. */
#include "attnlab/model.h"
#include "model/kv_cache.h"
#include "base/fault.h"

#include <stdlib.h>
#include <string.h>

struct al_kv_cache {
    int64_t n_kv_heads, head_dim, max_batch, max_seq;
    int64_t len;   /* tokens stored per sequence */
    int64_t batch; /* sequences stored (0 while empty) */
    int64_t panels; /* ceil(max_seq / 16) */
    int64_t v_panels; /* ceil(head_dim / 16) */
    float *k;      /* [max_batch, n_kv_heads, panels, head_dim, 16] */
    float *v;      /* [max_batch, n_kv_heads, v_panels, max_seq, 16], same allocation as k */
};

int64_t al_kv_cache_floats(int64_t n_kv_heads, int64_t head_dim, int64_t max_batch, int64_t max_seq) {
    const int64_t k_panels = (max_seq + AL_GEMM_NR - 1) / AL_GEMM_NR, v_panels = (head_dim + AL_GEMM_NR - 1) / AL_GEMM_NR;
    return max_batch * n_kv_heads * AL_GEMM_NR * (k_panels * head_dim + v_panels * max_seq);
}

al_status al_kv_cache_create(const al_attn_hparams *hp, const al_attn_capacity *cap,
                             al_kv_cache **out, al_error *err) {
    if (!out) return al_fail(err, AL_ERR_ARG, "kv cache: no output pointer");
    *out = NULL;
    al_status st = al_attn_check(hp, cap, err);
    if (st != AL_OK) return st;
    al_kv_cache *c = calloc(1, sizeof *c);
    const int64_t panels = (cap->max_seq + AL_GEMM_NR - 1) / AL_GEMM_NR;
    const int64_t k_floats = cap->max_batch * hp->n_kv_heads * panels * AL_GEMM_NR * hp->head_dim;
    const int64_t floats = al_kv_cache_floats(hp->n_kv_heads, hp->head_dim, cap->max_batch, cap->max_seq);
    /* calloc: the unused lanes of a partly filled K panel are read (and multiplied by 0), and
     * those of V's panels past head_dim are read (their products are never stored). */
    float *mem = c ? calloc((size_t)floats, sizeof(float)) : NULL;
    if (!mem) {
        free(c);
        return al_fail(err, AL_ERR_NOMEM, "kv cache: out of memory for %lld floats", (long long)floats);
    }
    c->n_kv_heads = hp->n_kv_heads;
    c->head_dim = hp->head_dim;
    c->max_batch = cap->max_batch;
    c->max_seq = cap->max_seq;
    c->panels = panels;
    c->v_panels = (hp->head_dim + AL_GEMM_NR - 1) / AL_GEMM_NR;
    c->k = mem;
    c->v = mem + k_floats;
    *out = c;
    return AL_OK;
}

void al_kv_cache_free(al_kv_cache *c) {
    if (!c) return;
    free(c->k);
    free(c);
}

void al_kv_cache_reset(al_kv_cache *c) {
    if (c) c->len = c->batch = 0;
}

al_status al_kv_cache_truncate(al_kv_cache *c, int64_t len) {
    if (!c || len < 0 || len > c->len) return AL_ERR_ARG;
    c->len = len;
    if (len == 0) c->batch = 0;
    return AL_OK;
}

int64_t al_kv_cache_len(const al_kv_cache *c) { return c ? c->len : -1; }
int64_t al_kv_cache_batch(const al_kv_cache *c) { return c ? c->batch : -1; }

int64_t al_kv_cache_bytes_for(int64_t batch, int64_t len, int64_t n_kv_heads, int64_t head_dim) {
    /* K and V, each batch · len · n_kv_heads · head_dim float32 values. */
    int64_t n = 2 * (int64_t)sizeof(float);
    if (!al_mul_ok(n, batch, &n) || !al_mul_ok(n, len, &n) || !al_mul_ok(n, n_kv_heads, &n) ||
        !al_mul_ok(n, head_dim, &n))
        return -1;
    return n;
}

al_kv_sharing al_kv_sharing_of(int64_t n_heads, int64_t n_kv_heads) {
    if (n_heads < 1 || n_heads > AL_MAX_HEADS || n_kv_heads < 1 || n_kv_heads > n_heads ||
        n_heads % n_kv_heads != 0)
        return AL_KV_INVALID;
    if (n_kv_heads == n_heads) return AL_KV_MHA;
    return n_kv_heads == 1 ? AL_KV_MQA : AL_KV_GQA;
}

int64_t al_kv_cache_bytes(const al_kv_cache *c) {
    if (!c) return -1;
    return al_kv_cache_bytes_for(c->batch, c->len, c->n_kv_heads, c->head_dim) +
           (AL_FAULT(AL_FAULT_CACHE_BYTES) ? 4 : 0);
}

/* Where V's element d of token t, sequence b, KV head h is kept: lane d % 16 of panel d / 16. */
static float *value_at(const al_kv_cache *c, int64_t b, int64_t h, int64_t t, int64_t d) {
    return c->v + (((b * c->n_kv_heads + h) * c->v_panels + d / AL_GEMM_NR) * c->max_seq + t) * AL_GEMM_NR +
           d % AL_GEMM_NR;
}

al_status al_kv_cache_read(const al_kv_cache *c, int which_v, float *out, int64_t cap) {
    if (!c || !out) return AL_ERR_ARG;
    const int64_t KV = c->n_kv_heads, D = c->head_dim, row = KV * D;
    if (cap < c->batch * c->len * row) return AL_ERR_CAPACITY;
    for (int64_t b = 0; b < c->batch; b++) {
        for (int64_t h = 0; which_v && h < KV; h++)
            for (int64_t t = 0; t < c->len; t++)
                for (int64_t d = 0; d < D; d++) out[(b * c->len + t) * row + h * D + d] = *value_at(c, b, h, t, d);
        for (int64_t h = 0; !which_v && h < KV; h++) {
            const float *panels = c->k + (b * KV + h) * c->panels * AL_GEMM_NR * D;
            for (int64_t t = 0; t < c->len; t++)
                for (int64_t d = 0; d < D; d++)
                    out[(b * c->len + t) * row + h * D + d] =
                        panels[(t / AL_GEMM_NR) * AL_GEMM_NR * D + d * AL_GEMM_NR + t % AL_GEMM_NR];
        }
    }
    return AL_OK;
}

al_status al_kv_cache_check_append(const al_kv_cache *c, int64_t n_kv_heads, int64_t head_dim,
                                   int64_t batch, int64_t seq, al_error *err) {
    if (c->n_kv_heads != n_kv_heads || c->head_dim != head_dim)
        return al_fail(err, AL_ERR_CONFIG,
                       "kv cache holds %lld kv heads of dim %lld, the layer has %lld of dim %lld",
                       (long long)c->n_kv_heads, (long long)c->head_dim, (long long)n_kv_heads,
                       (long long)head_dim);
    if (batch > c->max_batch)
        return al_fail(err, AL_ERR_CAPACITY, "batch %lld exceeds the cache's max_batch %lld",
                       (long long)batch, (long long)c->max_batch);
    if (c->len > 0 && batch != c->batch)
        return al_fail(err, AL_ERR_SHAPE, "batch %lld does not match the %lld cached sequences",
                       (long long)batch, (long long)c->batch);
    if (seq > c->max_seq - c->len)
        return al_fail(err, AL_ERR_CAPACITY,
                       "kv cache full: %lld cached + %lld new tokens exceed max_seq %lld",
                       (long long)c->len, (long long)seq, (long long)c->max_seq);
    return AL_OK;
}

/* Writes token t's K [n_kv_heads, head_dim] into panel layout [heads][panels][D][16]
 * (the layout of one sequence), for the cache and for the uncached pass alike. */
static void store_key(float *k_panels, int64_t panels, int64_t t, const float *k, int64_t n_kv_heads,
                      int64_t head_dim) {
    for (int64_t h = 0; h < n_kv_heads; h++) {
        float *panel = k_panels + (h * panels + t / AL_GEMM_NR) * AL_GEMM_NR * head_dim;
        for (int64_t d = 0; d < head_dim; d++) panel[d * AL_GEMM_NR + t % AL_GEMM_NR] = k[h * head_dim + d];
    }
}

void al_kv_cache_store(al_kv_cache *c, int64_t b, int64_t t, const float *k, const float *v) {
    const int64_t D = c->head_dim;
    store_key(c->k + b * c->n_kv_heads * c->panels * AL_GEMM_NR * D, c->panels, t, k, c->n_kv_heads, D);
    for (int64_t h = 0; h < c->n_kv_heads; h++)
        for (int64_t d0 = 0; d0 < D; d0 += AL_GEMM_NR)
            memcpy(value_at(c, b, h, t, d0), v + h * D + d0, (size_t)(D - d0 < AL_GEMM_NR ? D - d0 : AL_GEMM_NR) * sizeof(float));
}

void al_pack_keys(float *out, const float *k, int64_t tokens, int64_t n_kv_heads, int64_t head_dim) {
    const int64_t panels = (tokens + AL_GEMM_NR - 1) / AL_GEMM_NR;
    /* Lanes past the last token must be finite: they are multiplied into masked scores. */
    memset(out, 0, (size_t)(n_kv_heads * panels * AL_GEMM_NR * head_dim) * sizeof(float));
    for (int64_t t = 0; t < tokens; t++)
        store_key(out, panels, t, k + t * n_kv_heads * head_dim, n_kv_heads, head_dim);
}

al_bmat al_kv_cache_keys(const al_kv_cache *c, int64_t b, int64_t h) {
    return al_bmat_packed(c->k + (b * c->n_kv_heads + h) * c->panels * AL_GEMM_NR * c->head_dim,
                          c->head_dim);
}

int64_t al_kv_cache_head_step(const al_kv_cache *c, int which_v) {
    /* from KV head 0's operand to KV head 1's, where the accessors place them */
    if (which_v) return value_at(c, 0, 1, 0, 0) - value_at(c, 0, 0, 0, 0);
    return (const float *)al_kv_cache_keys(c, 0, 1).p - (const float *)al_kv_cache_keys(c, 0, 0).p;
}

al_bmat al_kv_cache_values(const al_kv_cache *c, int64_t b, int64_t h) {
    return al_bmat_panels(value_at(c, b, h, 0, 0), AL_WEIGHTS_F32, c->max_seq);
}

void al_kv_cache_commit(al_kv_cache *c, int64_t batch, int64_t seq) {
    c->batch = batch;
    c->len += seq;
}
