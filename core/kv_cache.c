/* kv_cache.c — the KV cache: K (after QK-Norm and RoPE) and V of every token seen so far, so a
 * decode step computes projections for its one new token and reads the past from here.
 *
 * Memory is reserved once for max_batch × max_seq tokens, laid out
 * [max_batch, max_seq, n_kv_heads, head_dim], so appending never allocates. With GQA only
 * n_kv_heads heads are stored, which is the whole point of GQA: the cache is n_heads/n_kv_heads
 * times smaller than with MHA. */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

struct al_kv_cache {
    int64_t n_kv_heads, head_dim, max_batch, max_seq;
    int64_t len;   /* tokens stored per sequence */
    int64_t batch; /* sequences stored (0 while empty) */
    float *k;      /* [max_batch, max_seq, n_kv_heads, head_dim] */
    float *v;      /* [max_batch, max_seq, n_kv_heads, head_dim], same allocation as k */
};

al_status al_kv_cache_create(const al_attn_config *cfg, al_kv_cache **out, al_error *err) {
    if (!out) return al_fail(err, AL_ERR_ARG, "kv cache: no output pointer");
    *out = NULL;
    al_status st = al_attn_config_check(cfg, err);
    if (st != AL_OK) return st;
    al_kv_cache *c = calloc(1, sizeof *c);
    const int64_t per_tensor = cfg->max_batch * cfg->max_seq * cfg->n_kv_heads * cfg->head_dim;
    float *mem = c ? malloc((size_t)(2 * per_tensor) * sizeof(float)) : NULL;
    if (!mem) {
        free(c);
        return al_fail(err, AL_ERR_NOMEM, "kv cache: out of memory for %lld floats",
                       (long long)(2 * per_tensor));
    }
    c->n_kv_heads = cfg->n_kv_heads;
    c->head_dim = cfg->head_dim;
    c->max_batch = cfg->max_batch;
    c->max_seq = cfg->max_seq;
    c->k = mem;
    c->v = mem + per_tensor;
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

int64_t al_kv_cache_len(const al_kv_cache *c) { return c ? c->len : 0; }
int64_t al_kv_cache_batch(const al_kv_cache *c) { return c ? c->batch : 0; }

int64_t al_kv_cache_bytes_for(int64_t batch, int64_t len, int64_t n_kv_heads, int64_t head_dim) {
    /* K and V, each batch · len · n_kv_heads · head_dim float32 values. */
    int64_t n = 2 * (int64_t)sizeof(float);
    if (!al_mul_ok(n, batch, &n) || !al_mul_ok(n, len, &n) || !al_mul_ok(n, n_kv_heads, &n) ||
        !al_mul_ok(n, head_dim, &n))
        return -1;
    return n;
}

int64_t al_kv_cache_bytes(const al_kv_cache *c) {
    return c ? al_kv_cache_bytes_for(c->batch, c->len, c->n_kv_heads, c->head_dim) : 0;
}

al_status al_kv_cache_read(const al_kv_cache *c, int which_v, float *out, int64_t cap) {
    if (!c || !out) return AL_ERR_ARG;
    const int64_t row = c->n_kv_heads * c->head_dim;
    if (cap < c->batch * c->len * row) return AL_ERR_CAPACITY;
    const float *src = which_v ? c->v : c->k;
    for (int64_t b = 0; b < c->batch; b++)
        memcpy(out + b * c->len * row, src + b * c->max_seq * row,
               (size_t)(c->len * row) * sizeof(float));
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

float *al_kv_cache_row(al_kv_cache *c, int which_v, int64_t b, int64_t t) {
    const int64_t row = c->n_kv_heads * c->head_dim;
    return (which_v ? c->v : c->k) + (b * c->max_seq + t) * row;
}

void al_kv_cache_commit(al_kv_cache *c, int64_t batch, int64_t seq) {
    c->batch = batch;
    c->len += seq;
}
