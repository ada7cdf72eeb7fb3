/* session.c — one attention layer and one sequence, stepped through prefill and decode, with
 * everything the page shows recorded on the way: the attention weights of every query, the
 * mask applied to it, the cached outputs, and the tutorial's checks on the current state.
 *
 * Draw order follows the tutorial's example 6: torch.manual_seed(seed); SimpleAttention(...)
 * (q, k, v, o init); randn(1, prompt_len, hidden); then one randn(1, 1, hidden) per step.
 * Beside them, from the generator's state just after the init, the RoPE test vector of the
 * tutorial's example 3 (al_session_rope_relative).
 * All memory is taken at create time; prefill and steps never allocate. */
#include "attnlab/app.h"
#include "app/thumb.h"
#include "torch/reduce.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct al_session {
    al_session_config cfg;
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
    /* What the checks compare against, computed apart from the layer's forward pass. Each
     * token's K and V are projected once, when a check first needs them (ref_len tokens so
     * far), and the uncached pass over the whole sequence once per session: a step's checks
     * cost little more than the step. */
    int64_t ref_len;  /* tokens of k_raw and ref_v computed */
    float *k_raw;     /* [total, n_kv_heads, head_dim] K after QK-Norm, before RoPE */
    float *ref_v;     /* [total, n_kv_heads, head_dim] */
    float *ref_full;  /* [total, hidden] all tokens in one pass without the cache */
    int ref_full_done;
    /* The explicit repeat_kv path (materialised K/V copies, plain MHA) for the newest rows: */
    float *ref_q;     /* [REFERENCE_ROWS, n_heads, head_dim] */
    float *ref_k;     /* [total, n_kv_heads, head_dim] K after RoPE */
    float *ref_k_rep; /* [total, n_heads, head_dim] K repeated for every query head */
    float *ref_v_rep; /* [total, n_heads, head_dim] */
    float *ref_ctx;   /* [REFERENCE_ROWS, n_heads · head_dim] */
    float *ref_out;   /* [REFERENCE_ROWS, hidden] */
    float *ref_row;   /* [total] one query's scores, then weights */
    float *ref_cos;   /* [total, head_dim] RoPE table, as the layer builds it */
    float *ref_sin;   /* [total, head_dim] */
    float *rope_v;    /* [n_kv_heads, head_dim] the tutorial's v_test */
};

/* Queries the explicit repeat_kv path recomputes: the newest ones (a decode step's row among
 * them). A handful suffices to see a wrong KV head, and keeps the check cheap at the page's
 * largest sizes (the path is plain loops, O(rows · n · head_dim) per head). */
enum { REFERENCE_ROWS = 4 };

/* The tutorial's v_test (03-attention-demo.py, example 3) for this layer, drawn from a copy of
 * the generator as it stands after the layer's init (the session's tokens are drawn from that
 * same state): example 1's x = randn(2, 5, hidden), example 3's k_raw =
 * randn(1, 2, n_kv_heads, head_dim), then v_test = randn(1, 1, n_kv_heads, head_dim). */
static al_status draw_rope_test_vector(al_session *s, const al_rng *after_init, al_error *err) {
    const al_attn_hparams *a = &s->cfg.hp;
    const int64_t kv_width = a->n_kv_heads * a->head_dim;
    const int64_t skipped = 10 * a->hidden > 2 * kv_width ? 10 * a->hidden : 2 * kv_width;
    al_rng *rng = al_rng_clone(after_init);
    float *scratch = malloc((size_t)skipped * sizeof(float)); /* x, then k_raw, discarded */
    if (!rng || !scratch) {
        al_rng_free(rng);
        free(scratch);
        return al_fail(err, AL_ERR_NOMEM, "session: out of memory");
    }
    al_rng_randn(rng, scratch, 2 * 5 * a->hidden);
    al_rng_randn(rng, scratch, 2 * kv_width);
    al_rng_randn(rng, s->rope_v, kv_width);
    al_rng_free(rng);
    free(scratch);
    return AL_OK;
}

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

    const al_attn_hparams a = cfg->hp;
    const al_attn_capacity cap = {1, cfg->prompt_len + cfg->decode_steps};
    al_status st = al_attn_check(&a, &cap, err);
    if (st != AL_OK) return st;

    /* The recorded weights are n_heads · total² floats: bound them like the layer itself. */
    const int64_t total = cap.max_seq;
    const int64_t wide = a.hidden > a.n_heads * a.head_dim ? a.hidden : a.n_heads * a.head_dim;
    const int64_t q_width = a.n_heads * a.head_dim, kv_width = a.n_kv_heads * a.head_dim;
    const int64_t floats = 2 * total * a.hidden + a.n_heads * total * total +
                           a.n_heads * cfg->prompt_len * total + total * wide +
                           total * (3 * kv_width + a.hidden + 2 * q_width + 1 + 2 * a.head_dim) +
                           REFERENCE_ROWS * (2 * q_width + a.hidden) + kv_width;
    const int64_t bytes = (int64_t)sizeof(float) * floats + al_attn_bytes_needed(&a, &cap);
    if (bytes > AL_MAX_BYTES)
        return al_fail(err, AL_ERR_LIMIT,
                       "this session needs %lld MiB (weights, cache and %lld×%lld attention maps "
                       "per head); the limit is %lld MiB",
                       (long long)(bytes >> 20),
                       (long long)total, (long long)total, (long long)(AL_MAX_BYTES >> 20));

    al_session *s = calloc(1, sizeof *s);
    if (!s) return al_fail(err, AL_ERR_NOMEM, "session: out of memory");
    s->cfg = *cfg;
    s->total = total;
    if ((st = al_attn_create(&a, &cap, &s->attn, err)) != AL_OK ||
        (st = al_kv_cache_create(&a, &cap, &s->cache, err)) != AL_OK) {
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
    s->k_raw = p;     p += total * kv_width;
    s->ref_v = p;     p += total * kv_width;
    s->ref_full = p;  p += total * a.hidden;
    s->ref_q = p;     p += REFERENCE_ROWS * q_width;
    s->ref_k = p;     p += total * kv_width;
    s->ref_k_rep = p; p += total * q_width;
    s->ref_v_rep = p; p += total * q_width;
    s->ref_ctx = p;   p += REFERENCE_ROWS * q_width;
    s->ref_out = p;   p += REFERENCE_ROWS * a.hidden;
    s->ref_row = p;   p += total;
    s->ref_cos = p;   p += total * a.head_dim;
    s->ref_sin = p;   p += total * a.head_dim;
    s->rope_v = p;
    /* The table for all `total` positions, as the layer builds it (a value's last bit may
     * depend on its neighbours in the table). */
    al_rope_table(s->ref_cos, s->ref_sin, total, a.head_dim, a.rope_base);

    al_attn_init_torch(s->attn, rng);
    if ((st = draw_rope_test_vector(s, rng, err)) != AL_OK) {
        al_rng_free(rng);
        al_session_free(s);
        return st;
    }
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

const al_attn_hparams *al_session_hparams(const al_session *s) { return s ? &s->cfg.hp : NULL; }
int64_t al_session_len(const al_session *s) { return s ? s->len : -1; }
int64_t al_session_total(const al_session *s) { return s ? s->total : -1; }

void al_session_reset(al_session *s) {
    if (!s) return;
    al_kv_cache_reset(s->cache);
    s->len = 0;
    memset(s->weights, 0, (size_t)(s->cfg.hp.n_heads * s->total * s->total) * sizeof(float));
}

/* Runs `n` tokens starting at s->len through the layer and records outputs and weights. */
static al_status run_tokens(al_session *s, int64_t n, al_error *err) {
    const int64_t H = s->cfg.hp.n_heads, hidden = s->cfg.hp.hidden, T = s->total;
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

al_status al_session_run_to(al_session *s, int64_t len, al_error *err) {
    if (!s) return al_fail(err, AL_ERR_ARG, "no session");
    if (len < s->cfg.prompt_len || len > s->total)
        return al_fail(err, AL_ERR_ARG, "run to %lld tokens: give a length from the prompt's %lld to %lld",
                       (long long)len, (long long)s->cfg.prompt_len, (long long)s->total);
    if (len < s->len)
        return al_fail(err, AL_ERR_ARG, "run to %lld tokens: %lld have run already (reset first)",
                       (long long)len, (long long)s->len);
    al_status st = al_session_prefill(s, err);
    /* The decode steps in calls of up to prompt_len tokens (what the weights buffer holds):
     * each token's query still sees exactly the keys up to its own position, and the products
     * are summed in the same order, so every number is the one its own step would give. */
    while (st == AL_OK && s->len < len) {
        const int64_t n = len - s->len < s->cfg.prompt_len ? len - s->len : s->cfg.prompt_len;
        st = run_tokens(s, n, err);
    }
    return st;
}

/* AL_ERR_CAPACITY with the sizes when a caller's buffer of cap floats is shorter than need. */
static al_status check_cap(const char *what, int64_t need, int64_t cap, al_error *err) {
    if (cap < need)
        return al_fail(err, AL_ERR_CAPACITY, "session %s: need room for %lld floats, the buffer holds %lld",
                       what, (long long)need, (long long)cap);
    return AL_OK;
}

al_status al_session_outputs(const al_session *s, float *out, int64_t cap, al_error *err) {
    if (!s || !out) return al_fail(err, AL_ERR_ARG, "session outputs: NULL argument");
    al_status st = check_cap("outputs", s->len * s->cfg.hp.hidden, cap, err);
    if (st != AL_OK) return st;
    memcpy(out, s->out, (size_t)(s->len * s->cfg.hp.hidden) * sizeof(float));
    return AL_OK;
}

al_status al_session_attention(const al_session *s, int64_t head, float *out, int64_t cap,
                               al_error *err) {
    if (!s || !out) return al_fail(err, AL_ERR_ARG, "session weights: NULL argument");
    if (head < 0 || head >= s->cfg.hp.n_heads)
        return al_fail(err, AL_ERR_ARG, "session weights: head %lld is not in [0, %lld)", (long long)head,
                       (long long)s->cfg.hp.n_heads);
    const int64_t n = s->len, T = s->total;
    al_status st = check_cap("weights", n * n, cap, err);
    if (st != AL_OK) return st;
    for (int64_t q = 0; q < n; q++)
        memcpy(out + q * n, s->weights + (head * T + q) * T, (size_t)n * sizeof(float));
    return AL_OK;
}

int64_t al_session_thumb_size(const al_session *s, int64_t max_size) {
    if (!s || max_size < 1) return -1;
    return s->len < max_size ? s->len : max_size;
}

al_status al_session_attention_thumb(const al_session *s, int64_t head, int64_t max_size, float *out,
                                     int64_t cap, al_error *err) {
    if (!s || !out) return al_fail(err, AL_ERR_ARG, "session thumbnail: NULL argument");
    if (head < 0 || head >= s->cfg.hp.n_heads)
        return al_fail(err, AL_ERR_ARG, "session thumbnail: head %lld is not in [0, %lld)",
                       (long long)head, (long long)s->cfg.hp.n_heads);
    const int64_t size = al_session_thumb_size(s, max_size);
    if (size < 0) return al_fail(err, AL_ERR_ARG, "session thumbnail: size %lld must be >= 1", (long long)max_size);
    al_status st = check_cap("thumbnail", size * size, cap, err);
    if (st != AL_OK) return st;
    al_thumb_max_pool(s->weights + head * s->total * s->total, s->len, s->total, size, out);
    return AL_OK;
}

al_status al_session_mask(const al_session *s, float *out, int64_t cap, al_error *err) {
    if (!s || !out) return al_fail(err, AL_ERR_ARG, "session mask: NULL argument");
    const int64_t n = s->len;
    al_status st = check_cap("mask", n * n, cap, err);
    if (st != AL_OK) return st;
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

/* max |a − b| over n values, NaN if either holds a NaN. */
static double max_abs_diff(const float *a, const float *b, int64_t n) {
    double worst = 0.0;
    for (int64_t i = 0; i < n; i++) {
        const double d = fabs((double)a[i] - (double)b[i]);
        if (!(d <= worst)) worst = d; /* a NaN difference sticks */
    }
    return worst;
}

/* Projects K (then QK-Norm) and V of the tokens the checks have not seen yet, up to n. */
static void reference_kv(al_session *s, int64_t n) {
    const al_attn_hparams *c = &s->cfg.hp;
    const int64_t KV = c->n_kv_heads, D = c->head_dim, from = s->ref_len;
    if (from >= n) return;
    float *k = s->k_raw + from * KV * D;
    al_attn_project_qkv(s->attn, NULL, k, s->ref_v + from * KV * D, s->x + from * c->hidden, 1,
                        n - from, NULL);
    if (c->qk_norm)
        al_rmsnorm_forward(k, k, al_attn_get_param(s->attn, AL_PARAM_K_NORM, NULL), (n - from) * KV,
                           D, c->eps);
    s->ref_len = n;
}

/* The last `rows` of the session's n tokens the long way, as the tutorial first writes
 * attention: the projections, QK-Norm and RoPE, then repeat_kv as a real copy (every query
 * head gets its own K and V), then plain multi-head attention one query at a time, then o_proj
 * — into s->ref_out [rows, hidden]. Independent of the layer's GQA indexing, packed GEMM and
 * query blocks. */
static void reference_attention(al_session *s, int64_t n, int64_t rows) {
    const al_attn_hparams *c = &s->cfg.hp;
    const int64_t H = c->n_heads, KV = c->n_kv_heads, D = c->head_dim, n_rep = H / KV;
    const int64_t first = n - rows; /* position of the first recomputed query */
    reference_kv(s, n);
    al_attn_project_qkv(s->attn, s->ref_q, NULL, NULL, s->x + first * c->hidden, 1, rows, NULL);
    if (c->qk_norm)
        al_rmsnorm_forward(s->ref_q, s->ref_q, al_attn_get_param(s->attn, AL_PARAM_Q_NORM, NULL),
                           rows * H, D, c->eps);
    memcpy(s->ref_k, s->k_raw, (size_t)(n * KV * D) * sizeof(float));
    al_rope_apply(s->ref_q, s->ref_cos + first * D, s->ref_sin + first * D, rows, H, D);
    al_rope_apply(s->ref_k, s->ref_cos, s->ref_sin, n, KV, D);
    al_repeat_kv(s->ref_k_rep, s->ref_k, 1, n, KV, n_rep, D); /* [n, H, D] */
    al_repeat_kv(s->ref_v_rep, s->ref_v, 1, n, KV, n_rep, D);

    const float scale = (float)sqrt((double)D);
    for (int64_t r = 0; r < rows; r++)
        for (int64_t h = 0; h < H; h++) {
            /* Query i sees keys 0..i: the prefill's causal rows and every decode row alike. */
            const int64_t i = first + r;
            const float *q = s->ref_q + (r * H + h) * D;
            for (int64_t t = 0; t <= i; t++)
                s->ref_row[t] = al_dot_f32(q, s->ref_k_rep + (t * H + h) * D, D) / scale;
            al_softmax_forward(s->ref_row, s->ref_row, 1, i + 1);
            float *ctx = s->ref_ctx + r * H * D + h * D;
            for (int64_t d = 0; d < D; d++) {
                float acc = 0.0f;
                for (int64_t t = 0; t <= i; t++) acc += s->ref_row[t] * s->ref_v_rep[(t * H + h) * D + d];
                ctx[d] = acc;
            }
        }
    al_linear_forward(s->ref_out, s->ref_ctx, al_attn_get_param(s->attn, AL_PARAM_O_PROJ, NULL),
                      rows, H * D, c->hidden);
}

al_status al_session_rope_relative(const al_session *s, int64_t m, float *dots, int64_t n,
                                   al_error *err) {
    if (!s || (!dots && n > 0)) return al_fail(err, AL_ERR_ARG, "RoPE relative curve: NULL argument");
    if (m < 0 || n < 0 || m > AL_MAX_SEQ || n > AL_MAX_SEQ - m)
        return al_fail(err, AL_ERR_ARG, "RoPE relative curve: position %lld and count %lld must be "
                       ">= 0 and together at most %d", (long long)m, (long long)n, AL_MAX_SEQ);
    if (n == 0) return AL_OK;
    const al_attn_hparams *c = &s->cfg.hp;
    const int64_t KV = c->n_kv_heads, D = c->head_dim, rows = m + n;
    float *mem = malloc((size_t)(2 * rows * D + 3 * KV * D) * sizeof(float));
    if (!mem) return al_fail(err, AL_ERR_NOMEM, "RoPE relative curve: out of memory");
    float *cos_t = mem;              /* [m + n, D] */
    float *sin_t = cos_t + rows * D; /* [m + n, D] */
    float *at_m = sin_t + rows * D;  /* [KV, D] v_test at position m */
    float *at_md = at_m + KV * D;    /* [KV, D] v_test at position m + d */
    float *prod = at_md + KV * D;    /* [KV, D] their elementwise product */

    /* 1. precompute_freqs_cis(head_dim, m + n, base): the whole table at once, as the script
     *    computes its table (a value's last bit can depend on its neighbours in the table). */
    al_status st = al_rope_table(cos_t, sin_t, rows, D, c->rope_base);
    if (st != AL_OK) {
        free(mem);
        return al_fail(err, st, "RoPE relative curve: the table could not be computed");
    }
    /* 2. v0 = apply_rotary_pos_emb(v_test, cos[m], sin[m]) on every KV head. */
    memcpy(at_m, s->rope_v, (size_t)(KV * D) * sizeof(float));
    al_rope_apply(at_m, cos_t + m * D, sin_t + m * D, 1, KV, D);
    /* 3. dots[d] = (v0 * v_d).sum(): float32 products, summed in PyTorch's order. */
    for (int64_t d = 0; d < n; d++) {
        memcpy(at_md, s->rope_v, (size_t)(KV * D) * sizeof(float));
        al_rope_apply(at_md, cos_t + (m + d) * D, sin_t + (m + d) * D, 1, KV, D);
        for (int64_t i = 0; i < KV * D; i++) prod[i] = at_m[i] * at_md[i];
        dots[d] = al_sum_f32(prod, KV * D);
    }
    free(mem);
    return AL_OK;
}

al_status al_session_verify(al_session *s, al_check *checks, al_error *err) {
    if (!s || !checks) return al_fail(err, AL_ERR_ARG, "verify: NULL argument");
    if (s->len == 0) return al_fail(err, AL_ERR_ARG, "verify needs the prefill first");
    const al_attn_hparams *c = &s->cfg.hp;
    const int64_t n = s->len, T = s->total, H = c->n_heads, KV = c->n_kv_heads, D = c->head_dim;
    const int64_t hidden = c->hidden;

    /* Shapes: the cache holds n tokens of one sequence, n_kv_heads·head_dim wide, and each
     * weight has as many values as the shape the hyper-parameters give it. */
    double mismatches = (al_kv_cache_len(s->cache) != n) + (al_kv_cache_batch(s->cache) != 1) +
                        (al_kv_cache_bytes(s->cache) != al_kv_cache_bytes_for(1, n, KV, D));
    for (int p = 0; p < AL_PARAM_COUNT; p++) {
        int64_t shape[2] = {0, 0}, numel = -1;
        const int nd = al_attn_param_shape(c, (al_attn_param)p, shape);
        al_attn_get_param(s->attn, (al_attn_param)p, &numel);
        mismatches += numel != (nd == 2 ? shape[0] * shape[1] : shape[0]);
    }
    set_check(checks, AL_CHECK_SHAPES, mismatches, 0.0);

    /* repeat_kv: the layer's outputs for the newest queries (GQA by indexing, no copy) against
     * the explicit path (K and V copied for every query head, then plain multi-head
     * attention), relative to the outputs' size. The two sum in different orders, hence a
     * tolerance. */
    const int64_t rows = n < REFERENCE_ROWS ? n : REFERENCE_ROWS;
    reference_attention(s, n, rows);
    const float *newest = s->out + (n - rows) * hidden;
    double ref_max = 1.0;
    for (int64_t i = 0; i < rows * hidden; i++)
        if (fabs((double)s->ref_out[i]) > ref_max) ref_max = fabs((double)s->ref_out[i]);
    set_check(checks, AL_CHECK_REPEAT_KV, max_abs_diff(newest, s->ref_out, rows * hidden) / ref_max, 1e-5);

    /* RoPE keeps norms: each token's K before RoPE (projection + QK-Norm, in k_raw) against
     * the cached, rotated K at its position; relative to the norm. */
    float *rotated = s->check; /* [n, KV, D] the cache */
    al_kv_cache_read(s->cache, 0, rotated, n * KV * D);
    double worst = 0.0;
    for (int64_t r = 0; r < n * KV; r++) {
        const double before = al_norm2_f32(s->k_raw + r * D, D);
        const double after = al_norm2_f32(rotated + r * D, D);
        const double diff = fabs(before - after) / (before > 1.0 ? before : 1.0);
        if (!(diff <= worst)) worst = diff;
    }
    set_check(checks, AL_CHECK_ROPE_NORM, worst, 1e-5);

    /* Relative position: <R(0)v, R(1)v> against <R(1)v, R(2)v> for token 0's first K head. */
    float d0[2], d1[2];
    al_rope_relative_dots(d0, s->k_raw, 0, 2, D, c->rope_base, NULL);
    al_rope_relative_dots(d1, s->k_raw, 1, 2, D, c->rope_base, NULL);
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
                if (!(fabs((double)w[t]) <= masked_max)) masked_max = fabs((double)w[t]);
            double sum = 0.0;
            for (int64_t t = 0; t < keys; t++) sum += w[t];
            if (!(fabs(sum - 1.0) <= row_err)) row_err = fabs(sum - 1.0);
        }
    set_check(checks, AL_CHECK_MASK_ZERO, masked_max, 0.0);
    set_check(checks, AL_CHECK_ROWS_SUM, row_err, 1e-5);

    /* Cached against uncached: every token of the session in one pass without the cache,
     * computed once. Row i of that pass depends on tokens 0..i only (masked weights are exact
     * zeros), and decoding with the cache sums every product in the same order as the full
     * pass, so the processed rows are identical to the bit: the limit is exactly 0. */
    if (!s->ref_full_done) {
        al_status st = al_attn_forward(s->attn, NULL, s->ref_full, NULL, 0, s->x, 1, s->total, err);
        if (st != AL_OK) return st;
        s->ref_full_done = 1;
    }
    set_check(checks, AL_CHECK_CACHE_DIFF, max_abs_diff(s->ref_full, s->out, n * hidden), 0.0);
    return AL_OK;
}
