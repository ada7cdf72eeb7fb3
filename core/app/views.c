/* views.c — the quantities the page draws besides the layer's own outputs: the causal mask as
 * applied, RoPE angles (wrapped), one rotating pair, the dot product of a vector with itself
 * at a distance (relative-position invariance and long-range decay), and FLOP counts and cache
 * sizes that make the KV cache's O(n) against O(n²) visible. */
#include "attnlab/app.h"
#include "model/rope.h"

#include <math.h>
#include <string.h>

#define PI 3.14159265358979323846

void al_causal_mask(float *out, int64_t seq, int64_t past) {
    const int64_t keys = past + seq;
    for (int64_t s = 0; s < seq; s++)
        for (int64_t t = 0; t < keys; t++) out[s * keys + t] = t <= past + s ? 0.0f : -INFINITY;
}

al_status al_rope_angles_wrapped(float *angles, int64_t end, int64_t head_dim, double base,
                                 al_error *err) {
    al_status st = al_rope_angles(angles, end, head_dim, base, err);
    if (st != AL_OK) return st;
    const double two_pi = 2.0 * PI;
    for (int64_t i = 0; i < end * (head_dim / 2); i++) {
        /* remainder() gives [-π, π]; a rotation by -π is the rotation by π. */
        double a = remainder((double)angles[i], two_pi);
        if (a <= -PI) a += two_pi;
        angles[i] = (float)a;
    }
    return AL_OK;
}

al_status al_rope_pair_trace(float *points, const float *x, int64_t pair, int64_t end,
                             int64_t head_dim, double base, al_error *err) {
    if (!points || !x) return al_fail(err, AL_ERR_ARG, "RoPE pair trace: NULL argument");
    al_status st = al_rope_check(head_dim, base, err);
    if (st != AL_OK) return st;
    if (end < 0) return al_fail(err, AL_ERR_ARG, "RoPE pair trace: negative position count %lld", (long long)end);
    if (pair < 0 || pair >= head_dim / 2)
        return al_fail(err, AL_ERR_ARG, "RoPE pair trace: pair %lld is not in [0, %lld)",
                       (long long)pair, (long long)(head_dim / 2));
    float cos_row[AL_MAX_HEAD_DIM], sin_row[AL_MAX_HEAD_DIM], v[AL_MAX_HEAD_DIM];
    float freq[AL_MAX_HEAD_DIM / 2];
    al_rope_freqs(freq, head_dim, base);
    for (int64_t m = 0; m < end; m++) {
        /* The table row of position m, then the same rotation the layer applies. */
        al_rope_table_row(cos_row, sin_row, m, freq, head_dim);
        memcpy(v, x, (size_t)head_dim * sizeof(float));
        al_rope_apply(v, cos_row, sin_row, 1, 1, head_dim);
        points[2 * m] = v[pair];
        points[2 * m + 1] = v[pair + head_dim / 2];
    }
    return AL_OK;
}

al_status al_rope_relative_dots(float *dots, const float *v, int64_t m, int64_t n,
                                int64_t head_dim, double base, al_error *err) {
    if (!dots || !v) return al_fail(err, AL_ERR_ARG, "RoPE relative dots: NULL argument");
    al_status st = al_rope_check(head_dim, base, err);
    if (st != AL_OK) return st;
    if (m < 0 || n < 0)
        return al_fail(err, AL_ERR_ARG, "RoPE relative dots: position %lld and count %lld must be >= 0",
                       (long long)m, (long long)n);
    float freq[AL_MAX_HEAD_DIM / 2], c[AL_MAX_HEAD_DIM], s[AL_MAX_HEAD_DIM];
    float at_m[AL_MAX_HEAD_DIM], at_md[AL_MAX_HEAD_DIM];
    al_rope_freqs(freq, head_dim, base);
    memcpy(at_m, v, (size_t)head_dim * sizeof(float));
    al_rope_table_row(c, s, m, freq, head_dim);
    al_rope_apply(at_m, c, s, 1, 1, head_dim);
    for (int64_t d = 0; d < n; d++) {
        memcpy(at_md, v, (size_t)head_dim * sizeof(float));
        al_rope_table_row(c, s, m + d, freq, head_dim);
        al_rope_apply(at_md, c, s, 1, 1, head_dim);
        dots[d] = al_dot_f32(at_m, at_md, head_dim);
    }
    return AL_OK;
}

int64_t al_attn_flops_full(const al_attn_hparams *c, int64_t n_query, int64_t n_keys) {
    /* Within the limits every term below stays under 2^53. */
    if (!c || al_attn_hparams_check(c, NULL) != AL_OK || n_query < 0 || n_keys < 0 ||
        n_query > AL_MAX_SEQ || n_keys > AL_MAX_SEQ)
        return -1;
    const int64_t proj = 2 * n_query * c->hidden * c->head_dim * (2 * c->n_heads + 2 * c->n_kv_heads);
    const int64_t attn = 4 * c->n_heads * n_query * n_keys * c->head_dim;
    return proj + attn;
}

int64_t al_kv_growth(const al_attn_hparams *hp, int64_t prompt, int64_t steps,
                     al_kv_growth_row *rows, int64_t cap, al_error *err) {
    if (cap < 0 || (!rows && cap > 0)) {
        al_fail(err, AL_ERR_ARG, "KV growth: no room for %lld rows", (long long)cap);
        return -1;
    }
    if (al_attn_hparams_check(hp, err) != AL_OK) return -1;
    if (prompt < 1 || steps < 0 || prompt > AL_MAX_SEQ || steps > AL_MAX_SEQ - prompt) {
        al_fail(err, AL_ERR_ARG, "KV growth: the prompt (%lld) must be >= 1, the decode steps "
                "(%lld) >= 0, and together at most %d tokens",
                (long long)prompt, (long long)steps, AL_MAX_SEQ);
        return -1;
    }
    /* Row i: the cache after the prefill (i = 0) or after decode step i. Within the limits
     * checked above no product overflows int64 (at most ~7e18 FLOPs). */
    for (int64_t i = 0; i <= steps && i < cap; i++) {
        const int64_t len = prompt + i;
        al_kv_growth_row *r = &rows[i];
        r->len = len;
        r->bytes = al_kv_cache_bytes_for(1, len, hp->n_kv_heads, hp->head_dim);
        r->bytes_mha = al_kv_cache_bytes_for(1, len, hp->n_heads, hp->head_dim);
        r->bytes_mqa = al_kv_cache_bytes_for(1, len, 1, hp->head_dim);
        r->flops_cached = al_attn_flops_full(hp, i == 0 ? prompt : 1, len);
        r->flops_uncached = al_attn_flops_full(hp, len, len);
    }
    return steps + 1;
}

al_status al_gqa_map(int32_t *kv_head, int64_t n_heads, int64_t n_kv_heads, al_error *err) {
    if (!kv_head) return al_fail(err, AL_ERR_ARG, "GQA map: no output buffer");
    if (n_heads < 1 || n_heads > AL_MAX_HEADS || n_kv_heads < 1 || n_kv_heads > n_heads)
        return al_fail(err, AL_ERR_ARG, "GQA map: heads must be in [1, %d] and KV heads in [1, heads] "
                       "(got %lld and %lld)", AL_MAX_HEADS, (long long)n_heads, (long long)n_kv_heads);
    if (n_heads % n_kv_heads != 0)
        return al_fail(err, AL_ERR_CONFIG, "n_heads (%lld) must be a multiple of n_kv_heads (%lld) for GQA",
                       (long long)n_heads, (long long)n_kv_heads);
    const int64_t n_rep = n_heads / n_kv_heads; /* query heads per KV head */
    for (int64_t h = 0; h < n_heads; h++) kv_head[h] = (int32_t)(h / n_rep);
    return AL_OK;
}

int64_t al_gqa_kv_nearest(int64_t n_heads, int64_t n_kv_heads) {
    if (n_heads < 1 || n_heads > AL_MAX_HEADS) return -1;
    int64_t best = 1; /* the choices ascend: a later one wins only when strictly nearer */
    for (int64_t kv = 2; kv <= n_heads; kv++) {
        const int64_t d = kv > n_kv_heads ? kv - n_kv_heads : n_kv_heads - kv;
        const int64_t d_best = best > n_kv_heads ? best - n_kv_heads : n_kv_heads - best;
        if (n_heads % kv == 0 && d < d_best) best = kv;
    }
    return best;
}

int64_t al_attn_head_dim_most(int64_t n_heads, int64_t width) {
    if (n_heads < 1 || n_heads > AL_MAX_HEADS || width < 2 * n_heads) return -1;
    const int64_t most = width / n_heads / 2 * 2; /* the even floor of width / n_heads */
    return most < AL_MAX_HEAD_DIM ? most : AL_MAX_HEAD_DIM;
}

int al_gqa_kv_choices(int32_t *out, int cap, int64_t n_heads) {
    int count = 0;
    if (n_heads < 1 || n_heads > AL_MAX_HEADS || cap < 0 || (!out && cap > 0)) return -1;
    for (int64_t kv = 1; kv <= n_heads; kv++)
        if (n_heads % kv == 0) {
            if (count < cap) out[count] = (int32_t)kv;
            count++;
        }
    return count;
}
