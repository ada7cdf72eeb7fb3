/* session.c — one attention layer and one sequence, stepped through prefill and decode, with
 * everything the page shows recorded on the way: the attention weights of every query, the
 * mask applied to it, the cached outputs, and the tutorial's checks on the current state.
 *
 * Draw order follows the tutorial's example 6: torch.manual_seed(seed); SimpleAttention(...)
 * (q, k, v, o init); randn(1, prompt_len, hidden); then one randn(1, 1, hidden) per step.
 * All memory is taken at create time; prefill and steps never allocate. */
#include "internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct al_session {
    al_session_config cfg;
    al_attn_config attn_cfg;
    al_attn *attn;
    al_kv_cache *cache;
    int64_t len;     /* tokens processed */
    int64_t total;   /* prompt_len + decode_steps */
    float *mem;      /* one allocation for the arrays below */
    float *x;        /* [total, hidden] the tokens */
    float *out;      /* [total, hidden] outputs as computed with the cache */
    float *weights;  /* [n_heads, total, total] softmax rows of every processed query */
    float *step_w;   /* [n_heads, prompt_len or 1, len] one call's weights */
    float *check;    /* [total, max(hidden, n_heads·head_dim)] scratch for the checks */
    float *k_raw;    /* [total, n_kv_heads, head_dim] */
};

al_status al_session_create(const al_session_config *cfg, al_session **out, al_error *err) {
    if (!out) return al_fail(err, AL_ERR_ARG, "session: no output pointer");
    *out = NULL;
    if (!cfg) return al_fail(err, AL_ERR_ARG, "session: no configuration");
    if (cfg->seed < 0) return al_fail(err, AL_ERR_CONFIG, "seed must be >= 0");
    if (cfg->prompt_len < 1) return al_fail(err, AL_ERR_CONFIG, "prompt length must be >= 1");
    if (cfg->decode_steps < 0) return al_fail(err, AL_ERR_CONFIG, "decode steps must be >= 0");
    if (cfg->prompt_len > AL_MAX_SEQ || cfg->decode_steps > AL_MAX_SEQ - cfg->prompt_len)
        return al_fail(err, AL_ERR_LIMIT, "prompt length + decode steps must be at most %d",
                       AL_MAX_SEQ);

    al_attn_config a = al_attn_config_default();
    a.hidden = cfg->hidden;
    a.n_heads = cfg->n_heads;
    a.n_kv_heads = cfg->n_kv_heads;
    a.head_dim = cfg->head_dim;
    a.rope_base = cfg->rope_base;
    a.qk_norm = cfg->qk_norm ? 1 : 0;
    a.max_batch = 1;
    a.max_seq = cfg->prompt_len + cfg->decode_steps;
    al_status st = al_attn_config_check(&a, err);
    if (st != AL_OK) return st;

    /* The recorded weights are n_heads · total² floats: bound them like the layer itself. */
    const int64_t total = a.max_seq;
    const int64_t wide = a.hidden > a.n_heads * a.head_dim ? a.hidden : a.n_heads * a.head_dim;
    const int64_t floats = 2 * total * a.hidden + a.n_heads * total * total +
                           a.n_heads * cfg->prompt_len * total + total * wide +
                           total * a.n_kv_heads * a.head_dim;
    if ((int64_t)sizeof(float) * floats + al_attn_bytes_needed(&a) > AL_MAX_BYTES)
        return al_fail(err, AL_ERR_LIMIT,
                       "this session needs %lld MiB (weights, cache and %lld×%lld attention maps "
                       "per head); the limit is %lld MiB",
                       (long long)(((int64_t)sizeof(float) * floats + al_attn_bytes_needed(&a)) >> 20),
                       (long long)total, (long long)total, (long long)(AL_MAX_BYTES >> 20));

    al_session *s = calloc(1, sizeof *s);
    if (!s) return al_fail(err, AL_ERR_NOMEM, "session: out of memory");
    s->cfg = *cfg;
    s->attn_cfg = a;
    s->total = total;
    if ((st = al_attn_create(&a, &s->attn, err)) != AL_OK ||
        (st = al_kv_cache_create(&a, &s->cache, err)) != AL_OK) {
        al_session_free(s);
        return st;
    }
    s->mem = calloc((size_t)floats, sizeof(float));
    al_rng *rng = al_rng_create((uint64_t)cfg->seed);
    if (!s->mem || !rng) {
        al_rng_free(rng);
        al_session_free(s);
        return al_fail(err, AL_ERR_NOMEM, "session: out of memory");
    }
    float *p = s->mem;
    s->x = p;       p += total * a.hidden;
    s->out = p;     p += total * a.hidden;
    s->weights = p; p += a.n_heads * total * total;
    s->step_w = p;  p += a.n_heads * cfg->prompt_len * total;
    s->check = p;   p += total * wide;
    s->k_raw = p;

    al_attn_init_torch(s->attn, rng);
    al_rng_randn(rng, s->x, cfg->prompt_len * a.hidden);
    for (int64_t t = cfg->prompt_len; t < total; t++)
        al_rng_randn(rng, s->x + t * a.hidden, a.hidden);
    al_rng_free(rng);
    *out = s;
    return AL_OK;
}

void al_session_free(al_session *s) {
    if (!s) return;
    al_attn_free(s->attn);
    al_kv_cache_free(s->cache);
    free(s->mem);
    free(s);
}

const al_attn_config *al_session_attn_config(const al_session *s) { return s ? &s->attn_cfg : NULL; }
int64_t al_session_len(const al_session *s) { return s ? s->len : 0; }
int64_t al_session_total(const al_session *s) { return s ? s->total : 0; }

void al_session_reset(al_session *s) {
    if (!s) return;
    al_kv_cache_reset(s->cache);
    s->len = 0;
    memset(s->weights, 0, (size_t)(s->attn_cfg.n_heads * s->total * s->total) * sizeof(float));
}

/* Runs `n` tokens starting at s->len through the layer and records outputs and weights. */
static al_status run_tokens(al_session *s, int64_t n, al_error *err) {
    const int64_t H = s->attn_cfg.n_heads, hidden = s->attn_cfg.hidden, T = s->total;
    const int64_t past = s->len, keys = past + n;
    al_status st = al_attn_forward(s->attn, s->cache, s->out + past * hidden, s->step_w,
                                   H * n * keys, s->x + past * hidden, 1, n, err);
    if (st != AL_OK) return st;
    for (int64_t h = 0; h < H; h++)
        for (int64_t q = 0; q < n; q++)
            memcpy(s->weights + (h * T + past + q) * T, s->step_w + (h * n + q) * keys,
                   (size_t)keys * sizeof(float));
    s->len = keys;
    return AL_OK;
}

al_status al_session_prefill(al_session *s, al_error *err) {
    if (!s) return al_fail(err, AL_ERR_ARG, "no session");
    if (s->len > 0) return AL_OK; /* already done */
    return run_tokens(s, s->cfg.prompt_len, err);
}

al_status al_session_step(al_session *s, al_error *err) {
    if (!s) return al_fail(err, AL_ERR_ARG, "no session");
    if (s->len == 0) return al_session_prefill(s, err);
    if (s->len >= s->total)
        return al_fail(err, AL_ERR_CAPACITY, "all %lld decode steps have run",
                       (long long)s->cfg.decode_steps);
    return run_tokens(s, 1, err);
}

al_status al_session_outputs(const al_session *s, float *out, int64_t cap) {
    if (!s || !out) return AL_ERR_ARG;
    if (cap < s->len * s->attn_cfg.hidden) return AL_ERR_CAPACITY;
    memcpy(out, s->out, (size_t)(s->len * s->attn_cfg.hidden) * sizeof(float));
    return AL_OK;
}

al_status al_session_weights(const al_session *s, int64_t head, float *out, int64_t cap) {
    if (!s || !out || head < 0 || head >= s->attn_cfg.n_heads) return AL_ERR_ARG;
    const int64_t n = s->len, T = s->total;
    if (cap < n * n) return AL_ERR_CAPACITY;
    for (int64_t q = 0; q < n; q++)
        memcpy(out + q * n, s->weights + (head * T + q) * T, (size_t)n * sizeof(float));
    return AL_OK;
}

al_status al_session_mask(const al_session *s, float *out, int64_t cap) {
    if (!s || !out) return AL_ERR_ARG;
    const int64_t n = s->len;
    if (cap < n * n) return AL_ERR_CAPACITY;
    /* Query q — a prefill row or a decode step — sees keys 0..q: the prefill's rows form the
     * causal triangle, a decode row sees every cached key and itself. Keys after q do not
     * exist yet when a decode row is computed, and are masked in a prefill row. */
    for (int64_t q = 0; q < n; q++) {
        float *row = out + q * n;
        al_causal_mask(row, 1, q);
        for (int64_t t = q + 1; t < n; t++) row[t] = -INFINITY;
    }
    return AL_OK;
}

static void set_check(al_check *c, al_check_id id, double value, double threshold) {
    c[id].id = id;
    c[id].value = value;
    c[id].threshold = threshold;
    c[id].passed = value <= threshold; /* NaN fails */
}

al_status al_session_verify(al_session *s, al_check *checks, al_error *err) {
    if (!s || !checks) return al_fail(err, AL_ERR_ARG, "verify: NULL argument");
    if (s->len == 0) return al_fail(err, AL_ERR_ARG, "verify needs the prefill first");
    const al_attn_config *c = &s->attn_cfg;
    const int64_t n = s->len, T = s->total, H = c->n_heads, KV = c->n_kv_heads, D = c->head_dim;
    const int64_t n_rep = H / KV, hidden = c->hidden;

    /* Shapes: the cache holds n tokens of one sequence, n_kv_heads·head_dim wide. */
    double mismatches = (al_kv_cache_len(s->cache) != n) + (al_kv_cache_batch(s->cache) != 1) +
                        (al_kv_cache_bytes(s->cache) != al_kv_cache_bytes_for(1, n, KV, D));
    set_check(checks, AL_CHECK_SHAPES, mismatches, 0.0);

    /* repeat_kv: the query heads of one group read the same K. */
    float *k_cache = s->k_raw; /* [n, KV, D] */
    al_kv_cache_read(s->cache, 0, k_cache, n * KV * D);
    float *expanded = s->check; /* [n, H, D] */
    al_repeat_kv(expanded, k_cache, 1, n, KV, n_rep, D);
    double worst = 0.0;
    for (int64_t t = 0; t < n; t++)
        for (int64_t h = 0; h < H; h++)
            for (int64_t d = 0; d < D; d++) {
                const double diff = fabs((double)expanded[(t * H + h) * D + d] -
                                         (double)k_cache[(t * KV + h / n_rep) * D + d]);
                if (diff > worst) worst = diff;
            }
    set_check(checks, AL_CHECK_REPEAT_KV, worst, 0.0);

    /* RoPE keeps norms: each token's K before RoPE (projection + QK-Norm) against the cached,
     * rotated K at its position; relative to the norm. */
    al_attn_project_qkv(s->attn, NULL, s->k_raw, NULL, s->x, 1, n, NULL);
    if (c->qk_norm)
        al_rmsnorm_forward(s->k_raw, s->k_raw, al_attn_get_param(s->attn, AL_PARAM_K_NORM, NULL),
                           n * KV, D, c->eps);
    float *rotated = s->check; /* [n, KV, D] the cache again */
    al_kv_cache_read(s->cache, 0, rotated, n * KV * D);
    worst = 0.0;
    for (int64_t r = 0; r < n * KV; r++) {
        const double before = al_norm2_f32(s->k_raw + r * D, D);
        const double after = al_norm2_f32(rotated + r * D, D);
        const double diff = fabs(before - after) / (before > 1.0 ? before : 1.0);
        if (diff > worst) worst = diff;
    }
    set_check(checks, AL_CHECK_ROPE_NORM, worst, 1e-5);

    /* Relative position: <R(0)v, R(1)v> against <R(1)v, R(2)v> for token 0's first K head. */
    float d0[2], d1[2];
    al_rope_relative_dots(d0, s->k_raw, 0, 2, D, c->rope_base);
    al_rope_relative_dots(d1, s->k_raw, 1, 2, D, c->rope_base);
    const double scale = fabs((double)d0[1]) > 1.0 ? fabs((double)d0[1]) : 1.0;
    set_check(checks, AL_CHECK_ROPE_RELATIVE, fabs((double)d0[1] - (double)d1[1]) / scale, 1e-5);

    /* Masked weights exactly 0, rows summing to 1: over the softmax rows actually computed
     * (the prefill's P×P block and each decode row up to its own position). */
    double masked_max = 0.0, row_err = 0.0;
    for (int64_t h = 0; h < H; h++)
        for (int64_t q = 0; q < n; q++) {
            const float *w = s->weights + (h * T + q) * T;
            const int64_t keys = q < s->cfg.prompt_len ? s->cfg.prompt_len : q + 1;
            for (int64_t t = q + 1; t < keys; t++)
                if (fabs((double)w[t]) > masked_max) masked_max = fabs((double)w[t]);
            double sum = 0.0;
            for (int64_t t = 0; t < keys; t++) sum += w[t];
            if (fabs(sum - 1.0) > row_err || isnan(sum)) row_err = isnan(sum) ? NAN : fabs(sum - 1.0);
        }
    set_check(checks, AL_CHECK_MASK_ZERO, masked_max, 0.0);
    set_check(checks, AL_CHECK_ROWS_SUM, row_err, 1e-5);

    /* Cached against uncached: the whole processed sequence in one pass. */
    float *full = s->check; /* [n, hidden] */
    al_status st = al_attn_forward(s->attn, NULL, full, NULL, 0, s->x, 1, n, err);
    if (st != AL_OK) return st;
    worst = 0.0;
    for (int64_t i = 0; i < n * hidden; i++) {
        const double diff = fabs((double)full[i] - (double)s->out[i]);
        if (diff > worst || isnan(diff)) worst = diff;
    }
    set_check(checks, AL_CHECK_CACHE_DIFF, worst, 1e-5);
    return AL_OK;
}
