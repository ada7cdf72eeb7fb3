/* test_core.c — every kernel of the core against PyTorch's own results
 * (tests/fixtures/kernels.safetensors, written by tests/fixtures/gen_kernels.py), plus the
 * attention layer's and KV cache's API contracts (capacities, errors, sizes, resets).
 * usage: test_core [tests/fixtures/kernels.safetensors] */
#include "attnlab.h"
#include "check.h"
#include "read_file.h"
#include "base/internal.h"
#include "kernels/gemm.h" /* al_gemm and its packed panels, to compare with al_linear_forward */
#include "kernels/softmax.h" /* al_softmax_causal_row, against the long way round */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TOL 1e-5

static al_safetensors *golden;

/* A new buffer of n floats, all NaN: what a golden tensor that could not be read reads as, so
 * the tests after it run on defined values (the failure is already counted). */
static float *nan_buffer(int64_t n) {
    float *out = malloc((size_t)(n > 0 ? n : 1) * sizeof(float));
    if (!out) {
        fprintf(stderr, "test_core: out of memory for %lld floats\n", (long long)n);
        exit(1);
    }
    for (int64_t i = 0; i < n; i++) out[i] = NAN;
    return out;
}

/* Finds golden tensor `name` and checks it holds `numel` float32 values; 0 after a failed check
 * naming it. */
static int find_golden(const char *name, int64_t numel, al_st_tensor *t) {
    const al_status st = al_st_find(golden, name, t);
    CHECK(st == AL_OK, "golden tensor '%s': %s", name, al_status_str(st));
    if (st != AL_OK) return 0;
    CHECK(t->dtype == AL_DTYPE_F32 && t->numel == numel, "golden tensor '%s' is %s with %lld values; the test reads F32 with %lld",
          name, t->dtype_name, (long long)t->numel, (long long)numel);
    return t->dtype == AL_DTYPE_F32 && t->numel == numel;
}

/* Golden tensor `name` (numel floats) in a new buffer, read by the core's reader. Missing, of
 * another size, or refused by the reader: a failed check with the name and the core's message,
 * and a buffer of NaN. */
static float *get(const char *name, int64_t numel) {
    float *out = nan_buffer(numel);
    al_st_tensor t;
    if (!find_golden(name, numel, &t)) return out;
    al_error err = {0};
    const al_status st = al_st_read_f32(golden, name, out, numel, &err);
    CHECK(st == AL_OK, "golden tensor '%s' unreadable: %s", name, err.msg);
    if (st != AL_OK) for (int64_t i = 0; i < numel; i++) out[i] = NAN;
    return out;
}

/* The same for a tensor that holds -inf or NaN on purpose (the fully masked softmax row), which
 * the core's reader refuses: its float32 bits copied as they are. */
static float *get_nonfinite(const char *name, int64_t numel) {
    float *out = nan_buffer(numel);
    al_st_tensor t;
    if (find_golden(name, numel, &t)) memcpy(out, t.data, (size_t)numel * sizeof(float));
    return out;
}

static void test_embedding(void) {
    float *table = get("embedding.table", 50 * 12), *ids_f = get("embedding.ids", 6);
    float *want = get("embedding.out", 6 * 12);
    int64_t ids[6];
    for (int i = 0; i < 6; i++) ids[i] = isnan(ids_f[i]) ? -1 : (int64_t)ids_f[i]; /* NaN: unreadable */
    float got[6 * 12];
    CHECK(al_embedding_forward(got, ids, table, 6, 50, 12) == AL_OK, "embedding failed");
    CHECK(memcmp(got, want, sizeof got) == 0, "embedding is not an exact copy of the rows");
    ids[2] = 50;
    CHECK(al_embedding_forward(got, ids, table, 6, 50, 12) == AL_ERR_ARG, "id 50 of 50 accepted");
    ids[2] = -1;
    CHECK(al_embedding_forward(got, ids, table, 6, 50, 12) == AL_ERR_ARG, "id -1 accepted");
    free(table), free(ids_f), free(want);
}

static void test_linear(void) {
    const int64_t shapes[3][3] = {{3, 5, 7}, {10, 64, 48}, {2, 768, 96}};
    for (int i = 0; i < 3; i++) {
        char name[64];
        const int64_t n = shapes[i][0], fin = shapes[i][1], fout = shapes[i][2];
        snprintf(name, sizeof name, "linear%d.x", i);
        float *x = get(name, n * fin);
        snprintf(name, sizeof name, "linear%d.w", i);
        float *w = get(name, fout * fin);
        snprintf(name, sizeof name, "linear%d.out", i);
        float *want = get(name, n * fout);
        float *got = malloc((size_t)(n * fout) * sizeof(float));
        al_linear_forward(got, x, w, n, fin, fout);
        check_close(name, got, want, n * fout, TOL);
        free(x), free(w), free(want), free(got);
    }
}

/* The first index where a and b differ bit for bit, or -1. */
static int64_t first_bit_difference(const float *a, const float *b, int64_t n) {
    for (int64_t i = 0; i < n; i++)
        if (memcmp(&a[i], &b[i], sizeof(float)) != 0) return i;
    return -1;
}

/* al_linear_forward is the reference form of the packed GEMM the attention layer projects with
 * (linear.c's header): both must give the same bits, for one token and for many (n above the
 * GEMM's 12-row tile too), at sizes that are odd, below, at and above its 16-column panel, and
 * longer than its k block (1024 deep natively, 256 in WebAssembly), and one or two rows against
 * more panels than the decode kernel takes at once (8), the last one partial. Directly (al_gemm on
 * packed panels) and through the layer. */
static void test_linear_is_gemm(void) {
    const int64_t ns[] = {1, 2, 5, 9, 13, 31};
    const int64_t dims[][2] = {{1, 1}, {3, 5}, {16, 16}, {17, 15}, {33, 48}, {64, 7}, {8, 8}, {100, 33}, {257, 40}, {300, 129},
                               {64, 120}, {64, 250}, {1100, 37}, {2100, 9}};
    al_rng *r = al_rng_create(7);
    for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++)
        for (size_t j = 0; j < sizeof dims / sizeof dims[0]; j++) {
            const int64_t n = ns[i], in = dims[j][0], out = dims[j][1];
            float *x = malloc((size_t)(n * in) * sizeof(float)), *w = malloc((size_t)(out * in) * sizeof(float));
            float *want = malloc((size_t)(n * out) * sizeof(float)), *got = malloc((size_t)(n * out) * sizeof(float));
            float *packed = malloc((size_t)al_pack_panels_size(out, in) * sizeof(float));
            al_rng_randn(r, x, n * in);
            al_rng_randn(r, w, out * in);
            al_linear_forward(want, x, w, n, in, out);
            al_pack_panels(packed, w, out, in);
            al_gemm(got, out, x, in, al_bmat_packed(packed, in), n, out, in, 0);
            const int64_t d = first_bit_difference(got, want, n * out);
            CHECK(d < 0, "GEMM and al_linear_forward differ for n %lld, in %lld, out %lld: [%lld] %.9g vs %.9g",
                  (long long)n, (long long)in, (long long)out, (long long)d, got[d < 0 ? 0 : d], want[d < 0 ? 0 : d]);
            /* B as plain rows (how attention reads its cached values): Wᵀ [in, out], exactly
             * `out` wide, so a narrow right edge is read in place or through a padded copy. */
            float *wt = malloc((size_t)(out * in) * sizeof(float));
            for (int64_t o = 0; o < out; o++)
                for (int64_t k = 0; k < in; k++) wt[k * out + o] = w[o * in + k];
            al_gemm(got, out, x, in, al_bmat_rows(wt, out), n, out, in, 0);
            const int64_t dr = first_bit_difference(got, want, n * out);
            CHECK(dr < 0, "row-major GEMM and al_linear_forward differ for n %lld, in %lld, out %lld: [%lld] %.9g vs %.9g",
                  (long long)n, (long long)in, (long long)out, (long long)dr, got[dr < 0 ? 0 : dr], want[dr < 0 ? 0 : dr]);
            free(x), free(w), free(wt), free(want), free(got), free(packed);
        }

    /* The layer's own projections: hidden 40 into 5 query heads and 1 KV head of 6 dims. */
    const al_attn_hparams hp = {40, 5, 1, 6, 10000.0, 1e-6f, 1};
    const al_attn_capacity cap = {2, 3};
    const int64_t shapes[2][2] = {{1, 1}, {2, 3}}; /* batch, seq: one token, then six */
    al_attn *a = NULL;
    al_error err = {0};
    CHECK(al_attn_create(&hp, &cap, &a, &err) == AL_OK, "layer: %s", err.msg);
    if (a) al_attn_init_torch(a, r);
    for (int s = 0; a && s < 2; s++) {
        const int64_t n = shapes[s][0] * shapes[s][1];
        float x[6 * 40], proj[6 * 30], ref[6 * 30];
        al_rng_randn(r, x, n * 40);
        for (int p = AL_PARAM_Q_PROJ; p <= AL_PARAM_V_PROJ; p++) {
            float *qkv[3] = {NULL, NULL, NULL}; /* q, k, v: this projection only */
            qkv[p - AL_PARAM_Q_PROJ] = proj;
            CHECK(al_attn_project_qkv(a, qkv[0], qkv[1], qkv[2], x, shapes[s][0], shapes[s][1], &err) == AL_OK,
                  "project: %s", err.msg);
            int64_t shape[2];
            al_attn_param_shape(&hp, (al_attn_param)p, shape);
            al_linear_forward(ref, x, al_attn_get_param(a, (al_attn_param)p, NULL), n, shape[1], shape[0]);
            const int64_t d = first_bit_difference(proj, ref, n * shape[0]);
            CHECK(d < 0, "%s of %lld tokens differs from al_linear_forward at [%lld]", al_attn_param_name((al_attn_param)p),
                  (long long)n, (long long)d);
        }
    }
    al_attn_free(a);
    al_rng_free(r);
}

static void test_norms(void) {
    const int64_t dims[] = {2, 4, 7, 8, 16, 33, 64, 128, 1000};
    for (size_t i = 0; i < sizeof dims / sizeof dims[0]; i++) {
        const int64_t d = dims[i];
        char name[64];
        snprintf(name, sizeof name, "rmsnorm%lld.x", (long long)d);
        float *x = get(name, 5 * d);
        snprintf(name, sizeof name, "rmsnorm%lld.w", (long long)d);
        float *w = get(name, d);
        snprintf(name, sizeof name, "rmsnorm%lld.out", (long long)d);
        float *want = get(name, 5 * d);
        float *got = malloc((size_t)(5 * d) * sizeof(float));
        al_rmsnorm_forward(got, x, w, 5, d, 1e-6f);
        check_close(name, got, want, 5 * d, TOL);
        /* In place gives the same result (the attention layer normalises q and k in place). */
        float *inplace = malloc((size_t)(5 * d) * sizeof(float));
        memcpy(inplace, x, (size_t)(5 * d) * sizeof(float));
        al_rmsnorm_forward(inplace, inplace, w, 5, d, 1e-6f);
        CHECK(memcmp(inplace, got, (size_t)(5 * d) * sizeof(float)) == 0, "in-place rmsnorm%lld differs", (long long)d);
        free(w), free(want), free(inplace);

        snprintf(name, sizeof name, "layernorm%lld.w", (long long)d);
        w = get(name, d);
        snprintf(name, sizeof name, "layernorm%lld.b", (long long)d);
        float *b = get(name, d);
        snprintf(name, sizeof name, "layernorm%lld.out", (long long)d);
        want = get(name, 5 * d);
        al_layernorm_forward(got, x, w, b, 5, d, 1e-6f);
        check_close(name, got, want, 5 * d, TOL);
        free(x), free(w), free(b), free(want), free(got);
    }
}

static void test_softmax(void) {
    float *x = get_nonfinite("softmax.x", 6 * 9), *want = get_nonfinite("softmax.out", 6 * 9), got[6 * 9];
    al_softmax_forward(got, x, 6, 9);
    for (int r = 0; r < 6; r++) {
        if (r == 2) { /* all -inf: NaN, as PyTorch */
            int all_nan = 1;
            for (int j = 0; j < 9; j++) all_nan &= isnan(got[r * 9 + j]) && isnan(want[r * 9 + j]);
            CHECK(all_nan, "fully masked softmax row should be NaN like PyTorch");
            continue;
        }
        check_close("softmax row", got + r * 9, want + r * 9, 9, TOL);
        for (int j = 0; j < 9; j++)
            if (isinf(x[r * 9 + j])) CHECK(got[r * 9 + j] == 0.0f, "masked weight not exactly 0");
    }
    free(x), free(want);
}

/* Rows with a +inf score (x − max is NaN there: PyTorch's row is NaN), a NaN score, a −inf. */
static void test_softmax_special(void) {
    float *x = get_nonfinite("softmax_special.x", 4 * 11), *want = get_nonfinite("softmax_special.out", 4 * 11), got[4 * 11];
    al_softmax_forward(got, x, 4, 11);
    for (int i = 0; i < 4 * 11; i++) {
        CHECK(isnan(got[i]) == isnan(want[i]), "softmax_special[%d]: %g, PyTorch %g", i, got[i], want[i]);
        if (isinf(x[i]) && x[i] < 0) CHECK(got[i] == 0.0f, "softmax_special[%d]: masked weight not exactly 0", i);
    }
    check_close("softmax_special ordinary rows", got + 2 * 11, want + 2 * 11, 2 * 11, TOL);
    free(x), free(want);
}

/* The attention's row in one call gives the bits of the long way: divide what the query sees by
 * the scale, −inf past it, softmax the whole row. Lengths on and off the 8 lanes; nothing seen;
 * a NaN score. */
static void test_softmax_causal_row(void) {
    enum { MAXC = 100 };
    al_rng *r = al_rng_create(11);
    const int64_t lengths[] = {1, 7, 8, 9, 33, MAXC};
    for (size_t li = 0; li < sizeof lengths / sizeof lengths[0]; li++) {
        const int64_t cols = lengths[li];
        const int64_t seens[] = {0, 1, cols / 2, cols - 1, cols};
        for (size_t si = 0; si < sizeof seens / sizeof seens[0]; si++)
            for (int with_nan = 0; with_nan < 2; with_nan++) {
                const int64_t seen = seens[si];
                float x[MAXC], got[MAXC], want[MAXC];
                al_rng_normal(r, x, cols, 0.0f, 6.0f);
                if (with_nan && seen > 0) x[seen - 1] = NAN;
                for (int64_t t = 0; t < cols; t++) want[t] = t < seen ? x[t] / 2.828427f : -INFINITY;
                al_softmax_forward(want, want, 1, cols);
                memcpy(got, x, sizeof x);
                al_softmax_causal_row(got, cols, seen, 2.828427f);
                int same = 1;
                for (int64_t t = 0; t < cols; t++)
                    same &= isnan(want[t]) ? isnan(got[t]) != 0 : memcmp(&got[t], &want[t], sizeof(float)) == 0;
                CHECK(same, "causal row (cols %lld, seen %lld, NaN %d) differs from the long way",
                      (long long)cols, (long long)seen, with_nan);
            }
    }
    al_rng_free(r);
}

static void test_rope(void) {
    const int64_t dims[] = {2, 8, 64, 96, 128};
    const double bases[] = {100.0, 10000.0, 1e6};
    for (int i = 0; i < 5; i++)
        for (int j = 0; j < 3; j++) {
            const int64_t hd = dims[i], end = 40;
            char tag[64], name[96];
            snprintf(tag, sizeof tag, "rope_%lld_%g", (long long)hd, bases[j]);
            snprintf(name, sizeof name, "%s.freqs", tag);
            float *freqs = get(name, hd / 2);
            snprintf(name, sizeof name, "%s.cos", tag);
            float *cos_w = get(name, end * hd);
            snprintf(name, sizeof name, "%s.sin", tag);
            float *sin_w = get(name, end * hd);
            snprintf(name, sizeof name, "%s.angles", tag);
            float *ang_w = get(name, end * hd / 2);
            float *f = malloc((size_t)hd / 2 * sizeof(float));
            float *c = malloc((size_t)(end * hd) * sizeof(float));
            float *s = malloc((size_t)(end * hd) * sizeof(float));
            float *ang = malloc((size_t)(end * hd / 2) * sizeof(float));
            CHECK(al_rope_freqs(f, hd, bases[j]) == AL_OK, "rope_freqs failed");
            CHECK(memcmp(f, freqs, (size_t)hd / 2 * sizeof(float)) == 0, "%s freqs not bit-exact", tag);
            CHECK(al_rope_table(c, s, end, hd, bases[j]) == AL_OK, "rope_table failed");
            check_close(tag, c, cos_w, end * hd, 1e-6);
            check_close(tag, s, sin_w, end * hd, 1e-6);
            CHECK(al_rope_angles(ang, end, hd, bases[j], NULL) == AL_OK, "rope_angles failed");
            CHECK(memcmp(ang, ang_w, (size_t)(end * hd / 2) * sizeof(float)) == 0, "%s angles not bit-exact", tag);

            const char *roles[2][2] = {{"q", "q_rot"}, {"k", "k_rot"}};
            const int64_t heads[2] = {3, 1};
            for (int r = 0; r < 2; r++) {
                snprintf(name, sizeof name, "%s.%s", tag, roles[r][0]);
                float *x = get(name, end * heads[r] * hd);
                snprintf(name, sizeof name, "%s.%s", tag, roles[r][1]);
                float *want = get(name, end * heads[r] * hd);
                al_rope_apply(x, c, s, end, heads[r], hd);
                check_close(name, x, want, end * heads[r] * hd, TOL);
                free(x), free(want);
            }
            free(freqs), free(cos_w), free(sin_w), free(ang_w), free(f), free(c), free(s), free(ang);
        }
    float one[8];
    CHECK(al_rope_freqs(one, 7, 10000.0) == AL_ERR_ARG, "odd head_dim accepted");
    CHECK(al_rope_freqs(one, 8, -1.0) == AL_ERR_ARG, "negative base accepted");
    CHECK(al_rope_freqs(one, 8, NAN) == AL_ERR_ARG, "NaN base accepted");
}

static void test_repeat_kv(void) {
    float *kv = get("repeat_kv.kv", 2 * 3 * 2 * 4), *want = get("repeat_kv.out", 2 * 3 * 6 * 4), got[2 * 3 * 6 * 4];
    al_repeat_kv(got, kv, 2, 3, 2, 3, 4);
    CHECK(memcmp(got, want, sizeof got) == 0, "repeat_kv differs from PyTorch");
    free(kv), free(want);
}

static void test_sums(void) {
    const int64_t sizes[] = {1, 3, 4, 5, 8, 15, 16, 17, 24, 100, 1000, 4096};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        char name[64];
        snprintf(name, sizeof name, "sum%lld.x", (long long)sizes[i]);
        float *x = get(name, sizes[i]);
        snprintf(name, sizeof name, "sum%lld.out", (long long)sizes[i]);
        float *sum = get(name, 1);
        snprintf(name, sizeof name, "sum%lld.mean", (long long)sizes[i]);
        float *mean = get(name, 1);
        const float got = al_sum_f32(x, sizes[i]);
        CHECK(got == sum[0], "sum of %lld: got %.9g, PyTorch %.9g", (long long)sizes[i], got, sum[0]);
        CHECK(got / (float)sizes[i] == mean[0], "mean of %lld differs", (long long)sizes[i]);
        free(x), free(sum), free(mean);
    }
}

/* The layer's contracts: config validation, capacities, cache sizes and reset. */
static void test_layer_api(void) {
    al_error err = {0};
    const al_attn_hparams cfg = al_attn_hparams_default();
    al_attn_capacity cap = {2, 64};
    CHECK(al_attn_check(&cfg, &cap, &err) == AL_OK, "default config rejected: %s", err.msg);
    al_attn_hparams bad = cfg;
    bad.n_kv_heads = 3;
    CHECK(al_attn_hparams_check(&bad, &err) == AL_ERR_CONFIG && strstr(err.msg, "multiple"),
          "heads %% kv_heads not caught: %s", err.msg);
    bad = cfg, bad.head_dim = 7;
    CHECK(al_attn_hparams_check(&bad, &err) == AL_ERR_CONFIG && strstr(err.msg, "even"), "odd head_dim: %s", err.msg);
    bad = cfg, bad.hidden = 0;
    CHECK(al_attn_hparams_check(&bad, &err) == AL_ERR_CONFIG, "hidden 0 accepted");
    bad = cfg, bad.hidden = AL_MAX_HIDDEN + 1;
    CHECK(al_attn_hparams_check(&bad, &err) == AL_ERR_LIMIT, "hidden over limit accepted");
    bad = cfg, bad.hidden = 8192, bad.n_heads = 64, bad.n_kv_heads = 64, bad.head_dim = 128;
    const al_attn_capacity big = {8, 65536};
    CHECK(al_attn_hparams_check(&bad, &err) == AL_OK, "big hyper-parameters within the limits: %s", err.msg);
    CHECK(al_attn_check(&bad, &big, &err) == AL_ERR_LIMIT && strstr(err.msg, "MiB"), "memory limit: %s", err.msg);
    const al_attn_capacity no_seq = {1, 0}, many = {AL_MAX_BATCH + 1, 1};
    CHECK(al_attn_check(&cfg, &no_seq, &err) == AL_ERR_CONFIG && strstr(err.msg, "max_seq"), "max_seq 0: %s", err.msg);
    CHECK(al_attn_check(&cfg, &many, &err) == AL_ERR_LIMIT && strstr(err.msg, "max_batch"), "max_batch: %s", err.msg);
    CHECK(al_attn_bytes_needed(&cfg, &no_seq) == -1 && al_attn_bytes_needed(NULL, &cap) == -1, "bytes of a bad config");
    bad = cfg, bad.rope_base = INFINITY;
    CHECK(al_attn_hparams_check(&bad, &err) == AL_ERR_CONFIG, "infinite rope_base accepted");
    bad = cfg, bad.eps = 0.0f;
    CHECK(al_attn_hparams_check(&bad, &err) == AL_ERR_CONFIG, "eps 0 accepted");
    al_attn *none = (al_attn *)1;
    CHECK(al_attn_create(&bad, &cap, &none, &err) != AL_OK && none == NULL, "create with bad config");

    cap.max_seq = 8;
    al_attn *a = NULL;
    al_kv_cache *c = NULL;
    CHECK(al_attn_create(&cfg, &cap, &a, &err) == AL_OK, "create: %s", err.msg);
    CHECK(al_kv_cache_create(&cfg, &cap, &c, &err) == AL_OK, "cache: %s", err.msg);
    if (!a || !c) return;
    al_rng *r = al_rng_create(0);
    al_attn_init_torch(a, r);
    float x[2 * 8 * 16], out[2 * 8 * 16], w[2 * 4 * 8 * 8];
    int64_t numel_v = 0;
    al_rng_randn(r, x, 2 * 8 * 16);
    CHECK(al_attn_forward(a, c, out, w, 2 * 4 * 5 * 5 - 1, x, 2, 5, &err) == AL_ERR_CAPACITY,
          "short attention-weights buffer accepted");
    CHECK(al_kv_cache_len(c) == 0, "failed call changed the cache");
    CHECK(al_attn_forward(a, c, out, w, 2 * 4 * 5 * 5, x, 2, 5, &err) == AL_OK, "prefill: %s", err.msg);
    CHECK(al_kv_cache_len(c) == 5 && al_kv_cache_batch(c) == 2, "cache length after prefill");
    CHECK(al_kv_cache_bytes(c) == 2 * 2 * 5 * 2 * 8 * 4, "cache bytes %lld", (long long)al_kv_cache_bytes(c));
    CHECK(al_kv_cache_bytes_for(2, 5, 4, 8) == 2 * al_kv_cache_bytes(c), "MHA cost should be 2x GQA 4/2");
    CHECK(al_kv_cache_bytes_for(2, 5, 1, 8) * 2 == al_kv_cache_bytes(c), "MQA cost should be half of GQA 4/2");
    /* V read back in the seeds' layout [batch, len, n_kv_heads, head_dim]: x · Wvᵀ, bit for bit
     * (the GEMM and al_linear_forward sum each output alike), whatever layout the cache keeps. */
    {
        float v[2 * 5 * 2 * 8], v_ref[2 * 5 * 2 * 8];
        const float *wv = al_attn_get_param(a, AL_PARAM_V_PROJ, &numel_v);
        al_linear_forward(v_ref, x, wv, 2 * 5, 16, 2 * 8);
        CHECK(al_kv_cache_read(c, 1, v, 2 * 5 * 2 * 8 - 1) == AL_ERR_CAPACITY, "short V buffer accepted");
        CHECK(al_kv_cache_read(c, 1, v, 2 * 5 * 2 * 8) == AL_OK && memcmp(v, v_ref, sizeof v) == 0,
              "V read back from the cache is not x Wv^T (v[0] %g, expected %g)", v[0], v_ref[0]);
    }
    CHECK(al_attn_forward(a, c, out, NULL, 0, x, 1, 1, &err) == AL_ERR_SHAPE, "batch change accepted");
    CHECK(al_attn_forward(a, c, out, NULL, 0, x, 2, 4, &err) == AL_ERR_CAPACITY && strstr(err.msg, "max_seq"),
          "overflowing the cache accepted: %s", err.msg);
    CHECK(al_attn_forward(a, c, out, NULL, 0, x, 2, 3, &err) == AL_OK, "fill to capacity: %s", err.msg);
    CHECK(al_attn_forward(a, c, out, NULL, 0, x, 2, 1, &err) == AL_ERR_CAPACITY, "cache full not reported");
    al_kv_cache_reset(c);
    CHECK(al_kv_cache_len(c) == 0 && al_kv_cache_bytes(c) == 0, "reset");
    x[3] = NAN;
    CHECK(al_attn_forward(a, c, out, NULL, 0, x, 2, 1, &err) == AL_ERR_NONFINITE, "NaN input accepted");
    CHECK(al_kv_cache_len(c) == 0, "rejected input changed the cache");
    CHECK(strcmp(al_status_str(AL_ERR_SHAPE), "shape mismatch") == 0, "status names");
    int64_t numel = 0;
    CHECK(al_attn_get_param(a, AL_PARAM_COUNT, &numel) == NULL, "bad param index");
    CHECK(al_attn_param_for_write(a, AL_PARAM_COUNT, &numel) == NULL, "bad param index for writing");
    CHECK(al_attn_get_param(a, AL_PARAM_O_PROJ, &numel) != NULL && numel == 16 * 32, "o_proj numel");
    CHECK(al_kv_cache_len(NULL) == -1 && al_kv_cache_bytes(NULL) == -1 && al_attn_get_hparams(NULL) == NULL,
          "queries on NULL fail the documented way");
    al_rng_free(r);
    al_kv_cache_free(c);
    al_attn_free(a);
    al_attn_free(NULL);
    al_kv_cache_free(NULL);
    al_rng_free(NULL);
}

/* Sessions against PyTorch: the tutorial's example-6 draw order, prefill, decode steps. */
/* al_session_run_to against stepping: the same outputs, weights and cache to the bit, for
 * catch-ups shorter and longer than the prompt (so in one call and in several). */
static void test_session_run_to(void) {
    const al_session_config cases[] = {
        {{16, 4, 2, 8, 10000.0, 1e-6f, 1}, 42, 3, 10},
        {{24, 6, 1, 4, 500000.0, 1e-6f, 1}, 7, 6, 5},
        {{32, 4, 4, 16, 100.0, 1e-6f, 0}, 1, 1, 40},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const al_session_config *cfg = &cases[i];
        const int64_t total = cfg->prompt_len + cfg->decode_steps, hidden = cfg->hp.hidden;
        al_error err = {0};
        al_session *stepped = NULL, *jumped = NULL;
        CHECK(al_session_create(cfg, &stepped, &err) == AL_OK && al_session_create(cfg, &jumped, &err) == AL_OK,
              "run_to case %zu: %s", i, err.msg);
        if (!stepped || !jumped) continue;
        const int64_t mid = cfg->prompt_len + cfg->decode_steps / 2;
        CHECK(al_session_run_to(jumped, cfg->prompt_len - 1, &err) == AL_ERR_ARG, "run_to inside the prompt accepted");
        CHECK(al_session_run_to(jumped, total + 1, &err) == AL_ERR_ARG, "run_to past the end accepted");
        CHECK(al_session_run_to(jumped, mid, &err) == AL_OK, "run_to %lld: %s", (long long)mid, err.msg);
        CHECK(al_session_len(jumped) == mid, "length after run_to");
        CHECK(al_session_run_to(jumped, mid - 1, &err) == AL_ERR_ARG, "run_to backwards accepted");
        CHECK(al_session_run_to(jumped, total, &err) == AL_OK, "run_to the end: %s", err.msg);
        while (al_session_len(stepped) < total && al_session_step(stepped, &err) == AL_OK) {}
        CHECK(al_session_len(stepped) == total, "stepping: %s", err.msg);
        float *a = malloc((size_t)(total * (hidden > total ? hidden : total)) * sizeof(float));
        float *b = malloc((size_t)(total * (hidden > total ? hidden : total)) * sizeof(float));
        al_session_outputs(stepped, a, total * hidden, NULL);
        al_session_outputs(jumped, b, total * hidden, NULL);
        CHECK(memcmp(a, b, (size_t)(total * hidden) * sizeof(float)) == 0, "run_to case %zu: outputs differ", i);
        for (int64_t h = 0; h < cfg->hp.n_heads; h++) {
            al_session_attention(stepped, h, a, total * total, NULL);
            al_session_attention(jumped, h, b, total * total, NULL);
            CHECK(memcmp(a, b, (size_t)(total * total) * sizeof(float)) == 0, "run_to case %zu: head %lld weights differ",
                  i, (long long)h);
        }
        /* The head grid's thumbnails: the whole matrix when it fits, else each cell the
         * largest weight of the block of queries and keys it covers. */
        al_session_attention(jumped, 0, a, total * total, NULL);
        CHECK(al_session_thumb_size(jumped, total + 5) == total && al_session_thumb_size(jumped, 3) == 3 &&
              al_session_thumb_size(jumped, 0) == -1, "thumbnail sizes");
        CHECK(al_session_attention_thumb(jumped, 0, total + 5, b, total * total, &err) == AL_OK &&
              memcmp(a, b, (size_t)(total * total) * sizeof(float)) == 0, "a thumbnail as large as the matrix is the matrix");
        CHECK(al_session_attention_thumb(jumped, 0, 3, b, 9, &err) == AL_OK, "thumbnail: %s", err.msg);
        for (int64_t r = 0; r < 3; r++)
            for (int64_t j = 0; j < 3; j++) {
                float most = 0.0f;
                for (int64_t q = r * total / 3; q < (r + 1) * total / 3; q++)
                    for (int64_t k = j * total / 3; k < (j + 1) * total / 3; k++)
                        most = a[q * total + k] > most ? a[q * total + k] : most;
                CHECK(b[r * 3 + j] == most, "thumbnail cell (%lld, %lld): %g, want %g", (long long)r, (long long)j,
                      (double)b[r * 3 + j], (double)most);
            }
        al_check checks[AL_CHECK_COUNT];
        CHECK(al_session_verify(jumped, checks, &err) == AL_OK, "verify after run_to: %s", err.msg);
        for (int c = 0; c < AL_CHECK_COUNT; c++) CHECK(checks[c].passed, "run_to case %zu: check %d fails", i, c);
        free(a), free(b);
        al_session_free(stepped);
        al_session_free(jumped);
    }
}

static void test_sessions(void) {
    const struct { const char *tag; al_session_config cfg; } cases[] = {
        {"session_seeds", {{16, 4, 2, 8, 10000.0, 1e-6f, 1}, 42, 4, 3}},
        {"session_mqa", {{24, 6, 1, 4, 500000.0, 1e-6f, 1}, 7, 6, 5}},
        {"session_mha", {{16, 2, 2, 16, 100.0, 1e-6f, 1}, 123, 1, 6}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const al_session_config *cfg = &cases[i].cfg;
        const int64_t total = cfg->prompt_len + cfg->decode_steps, hidden = cfg->hp.hidden;
        char name[96];
        al_error err = {0};
        al_session *s = NULL;
        CHECK(al_session_create(cfg, &s, &err) == AL_OK, "%s: %s", cases[i].tag, err.msg);
        if (!s) continue;
        al_check checks[AL_CHECK_COUNT];
        CHECK(al_session_verify(s, checks, &err) == AL_ERR_ARG, "verify before prefill accepted");
        for (int run = 0; run < 2; run++) { /* the second run after a reset must be identical */
            CHECK(al_session_prefill(s, &err) == AL_OK, "prefill: %s", err.msg);
            CHECK(al_session_len(s) == cfg->prompt_len, "length after prefill");
            while (al_session_len(s) < total) {
                const al_status st = al_session_step(s, &err);
                CHECK(st == AL_OK, "step %lld: %s", (long long)al_session_len(s), err.msg);
                if (st != AL_OK) break; /* fail, do not spin */
            }
            CHECK(al_session_step(s, &err) == AL_ERR_CAPACITY, "step past the end accepted");
            float *out = malloc((size_t)(total * hidden) * sizeof(float));
            snprintf(name, sizeof name, "%s.out", cases[i].tag);
            float *want = get(name, total * hidden);
            CHECK(al_session_outputs(s, out, total * hidden, NULL) == AL_OK, "outputs");
            check_close(name, out, want, total * hidden, TOL);
            free(out), free(want);
            snprintf(name, sizeof name, "%s.weights", cases[i].tag);
            float *want_w = get(name, cfg->hp.n_heads * total * total), *w = malloc((size_t)(total * total) * sizeof(float));
            for (int64_t h = 0; h < cfg->hp.n_heads; h++) {
                CHECK(al_session_attention(s, h, w, total * total, NULL) == AL_OK, "weights");
                check_close(name, w, want_w + h * total * total, total * total, TOL);
            }
            CHECK(al_session_attention(s, cfg->hp.n_heads, w, total * total, &err) == AL_ERR_ARG && strstr(err.msg, "head"), "bad head accepted");
            CHECK(al_session_mask(s, w, total * total, NULL) == AL_OK, "mask");
            int mask_ok = 1;
            for (int64_t q = 0; q < total; q++)
                for (int64_t t = 0; t < total; t++) mask_ok &= (t <= q) ? w[q * total + t] == 0.0f : isinf(w[q * total + t]);
            CHECK(mask_ok, "session mask is not causal");
            free(want_w), free(w);
            CHECK(al_session_verify(s, checks, &err) == AL_OK, "verify: %s", err.msg);
            for (int c = 0; c < AL_CHECK_COUNT; c++)
                CHECK(checks[c].passed && (int)checks[c].id == c, "%s: check %d failed, value %g", cases[i].tag, c, checks[c].value);
            al_session_reset(s);
            CHECK(al_session_len(s) == 0, "reset");
        }
        al_session_free(s);
    }
    al_session_config bad = {{16, 4, 3, 8, 10000.0, 1e-6f, 1}, 0, 4, 3};
    al_error err = {0};
    al_session *none = NULL;
    CHECK(al_session_create(&bad, &none, &err) == AL_ERR_CONFIG && none == NULL, "GQA 4/3 accepted");
    bad.hp.n_kv_heads = 2, bad.prompt_len = 0;
    CHECK(al_session_create(&bad, &none, &err) == AL_ERR_CONFIG, "empty prompt accepted");
    bad.prompt_len = 60000, bad.decode_steps = 60000;
    CHECK(al_session_create(&bad, &none, &err) == AL_ERR_LIMIT, "oversized session accepted");
    bad.prompt_len = 4096, bad.decode_steps = 4096, bad.hp.n_heads = 64, bad.hp.n_kv_heads = 64;
    CHECK(al_session_create(&bad, &none, &err) == AL_ERR_LIMIT && strstr(err.msg, "MiB"), "attention maps over the memory limit: %s", err.msg);
    al_session_free(NULL);
}

/* The RoPE relative-distance curve of the tutorial's v_test: at the script's layer its points at
 * distance 1 are the <v(0), v(1)> and <v(1), v(2)> that 03-attention-demo.py prints for the same
 * seed (the demo's text, checked against PyTorch's by tests/demo.test.mjs); it is the same curve
 * from any starting position; and it is refused bad arguments. */
static void test_session_rope_relative(void) {
    const int64_t seeds[] = {42, 0, 7, 1234};
    for (size_t i = 0; i < sizeof seeds / sizeof seeds[0]; i++) {
        const al_session_config cfg = {{16, 4, 2, 8, 10000.0, 1e-6f, 1}, seeds[i], 6, 6};
        al_error err = {0};
        al_session *s = NULL;
        CHECK(al_session_create(&cfg, &s, &err) == AL_OK, "session: %s", err.msg);
        if (!s) continue;
        float at0[64], at1[2], at5[64];
        CHECK(al_session_rope_relative(s, 0, at0, 64, &err) == AL_OK, "curve: %s", err.msg);
        CHECK(al_session_rope_relative(s, 1, at1, 2, &err) == AL_OK, "curve at 1: %s", err.msg);
        CHECK(al_session_rope_relative(s, 5, at5, 64, &err) == AL_OK, "curve at 5: %s", err.msg);
        check_close("RoPE curve from position 5 against from 0", at5, at0, 64, 1e-5);

        static char text[16384];
        CHECK(al_demo_run(AL_DEMO_ATTENTION, AL_LANG_EN, seeds[i] == 42 ? -1 : seeds[i], text, sizeof text, NULL) > 0, "demo");
        char want01[64] = "", want12[64] = "", got01[64], got12[64];
        const char *p01 = strstr(text, "<v(0), v(1)> = "), *p12 = strstr(text, "<v(1), v(2)> = ");
        if (p01) sscanf(p01 + 15, "%63s", want01);
        if (p12) sscanf(p12 + 15, "%63s", want12);
        snprintf(got01, sizeof got01, "%.6f", (double)at0[1]);
        snprintf(got12, sizeof got12, "%.6f", (double)at1[1]);
        CHECK(!strcmp(got01, want01) && !strcmp(got12, want12),
              "seed %lld: the curve gives <v(0), v(1)> = %s and <v(1), v(2)> = %s, the script %s and %s",
              (long long)seeds[i], got01, got12, want01, want12);

        CHECK(al_session_rope_relative(s, -1, at0, 4, &err) == AL_ERR_ARG, "negative position accepted");
        CHECK(al_session_rope_relative(s, 0, NULL, 4, &err) == AL_ERR_ARG, "NULL output accepted");
        CHECK(al_session_rope_relative(s, 1, at0, AL_MAX_SEQ, &err) == AL_ERR_ARG, "past AL_MAX_SEQ accepted");
        CHECK(al_session_rope_relative(NULL, 0, at0, 4, &err) == AL_ERR_ARG, "NULL session accepted");
        CHECK(al_session_rope_relative(s, 0, NULL, 0, &err) == AL_OK, "an empty curve refused");
        al_session_free(s);
    }
}

/* The teaching views: mask, wrapped angles, pair trace, relative dots, FLOP counts. */
static void test_views(void) {
    float mask[3 * 5];
    al_causal_mask(mask, 3, 2); /* 3 new queries after 2 cached keys */
    for (int s = 0; s < 3; s++)
        for (int t = 0; t < 5; t++)
            CHECK((t <= 2 + s) ? mask[s * 5 + t] == 0.0f : mask[s * 5 + t] == -INFINITY, "mask[%d,%d]", s, t);

    enum { END = 300, HD = 16 };
    float raw[END * HD / 2], wrapped[END * HD / 2];
    al_rope_angles(raw, END, HD, 10000.0, NULL);
    CHECK(al_rope_angles_wrapped(wrapped, END, HD, 10000.0, NULL) == AL_OK, "wrapped angles");
    int in_range = 1, same_rotation = 1;
    for (int i = 0; i < END * HD / 2; i++) {
        in_range &= wrapped[i] > -3.14159266f && wrapped[i] <= 3.14159266f;
        same_rotation &= fabs(cos((double)raw[i]) - cos((double)wrapped[i])) < 1e-4 &&
                         fabs(sin((double)raw[i]) - sin((double)wrapped[i])) < 1e-4;
    }
    CHECK(in_range && same_rotation, "wrapped angles must be the same rotations in (-pi, pi]");

    float v[HD], pts[END * 2], dots0[40], dots5[40];
    for (int i = 0; i < HD; i++) v[i] = (float)(i % 5) - 1.5f;
    CHECK(al_rope_pair_trace(pts, v, 3, END, HD, 10000.0, NULL) == AL_OK, "pair trace");
    CHECK(pts[0] == v[3] && pts[1] == v[3 + HD / 2], "position 0 is not rotated");
    const double r0 = hypot(v[3], v[3 + HD / 2]);
    double worst = 0;
    for (int m = 0; m < END; m++) worst = fmax(worst, fabs(hypot(pts[2 * m], pts[2 * m + 1]) - r0));
    CHECK(worst < 1e-5, "rotation changed the pair's length by %g", worst);
    CHECK(al_rope_pair_trace(pts, v, HD / 2, END, HD, 10000.0, NULL) == AL_ERR_ARG, "pair out of range accepted");
    CHECK(al_rope_relative_dots(dots0, v, 0, 40, HD, 10000.0, NULL) == AL_OK, "dots");
    CHECK(al_rope_relative_dots(dots5, v, 5, 40, HD, 10000.0, NULL) == AL_OK, "dots");
    check_close("relative-position invariance", dots5, dots0, 40, 1e-5);
    CHECK(dots0[0] == al_dot_f32(v, v, HD), "distance 0 is the squared norm");

    int32_t map[8], choices[16];
    CHECK(al_gqa_map(map, 8, 2, NULL) == AL_OK && map[0] == 0 && map[3] == 0 && map[4] == 1 && map[7] == 1, "GQA map 8/2");
    CHECK(al_gqa_map(map, 8, 3, NULL) == AL_ERR_CONFIG, "GQA 8/3 accepted");
    CHECK(al_gqa_kv_choices(choices, 16, 12) == 6 && choices[0] == 1 && choices[5] == 12 && choices[3] == 4, "divisors of 12");
    CHECK(al_gqa_kv_choices(choices, 2, 12) == 6, "count beyond cap");
    CHECK(al_gqa_kv_choices(choices, 16, 0) == -1 && al_gqa_kv_choices(NULL, 4, 12) == -1, "bad arguments");
    /* the bench's starting settings: the tutorial's layer, nothing timed, 5 runs of each */
    al_bench_config bench;
    al_bench_config_default(&bench);
    const al_attn_hparams tutorial = al_attn_hparams_default();
    CHECK(bench.hp.hidden == tutorial.hidden && bench.hp.n_heads == tutorial.n_heads &&
              bench.hp.head_dim == tutorial.head_dim && bench.hp.rope_base == tutorial.rope_base &&
              bench.seq == 0 && bench.decode_at == 0 && bench.repeats == 5 && bench.seed == 0,
          "bench defaults");
    /* the page's query width of 1024: 16 heads of 64, 8 of 128, 6 of 170 (the even floor of
     * 170.7), 3 of 340; one head of at most AL_MAX_HEAD_DIM; nothing for a width under two
     * dimensions a head */
    CHECK(al_attn_head_dim_most(16, 1024) == 64 && al_attn_head_dim_most(8, 1024) == 128 &&
              al_attn_head_dim_most(6, 1024) == 170 && al_attn_head_dim_most(3, 1024) == 340 &&
              al_attn_head_dim_most(1, 4 * AL_MAX_HEAD_DIM) == AL_MAX_HEAD_DIM && al_attn_head_dim_most(5, 15) == 2,
          "head_dim within a width");
    CHECK(al_attn_head_dim_most(0, 1024) == -1 && al_attn_head_dim_most(AL_MAX_HEADS + 1, 1 << 20) == -1 &&
              al_attn_head_dim_most(4, 7) == -1, "head_dim within a width: bad arguments");

    const al_attn_hparams c = al_attn_hparams_default(); /* 16 hidden, 4/2 heads, 8 dims */
    CHECK(al_attn_flops_full(&c, 1, 10) == 2 * 16 * 8 * (8 + 4) + 4 * 4 * 10 * 8, "decode FLOPs");
    CHECK(al_attn_flops_full(&c, 10, 10) == 10 * 2 * 16 * 8 * 12 + 4 * 4 * 100 * 8, "full FLOPs");
}

/* The layer's FLOPs against PyTorch's profiler on the tutorial's layer (gen_attn_flops.py):
 * al_attn_flops_full is what PyTorch multiplies — the whole n_query × n_keys rectangle of scores,
 * the mask added afterwards — and equals the profiler's count. The causal work, counted here
 * from the profiler's number: of the rectangle, query s (from 0) of the last n_query positions
 * needs only the keys up to its own, so the n_query − 1 − s keys after it are multiplied for
 * nothing — n_query·(n_query − 1)/2 scores per head, each a head_dim-long dot product for q·kᵀ
 * and again for weights·V, 2 FLOPs per multiply-add. */
static void test_attn_flops_profiler(const char *path) {
    size_t size = 0;
    uint8_t *bytes = read_file(path, &size);
    char *text = bytes ? malloc(size + 1) : NULL;
    CHECK(text != NULL, "%s: not read", path);
    if (!text) {
        free(bytes);
        return;
    }
    memcpy(text, bytes, size);
    text[size] = '\0';
    free(bytes);
    int cases = 0, masked_cases = 0;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        if (line[0] == '#') continue;
        long long v[7];
        CHECK(sscanf(line, "%lld %lld %lld %lld %lld %lld %lld", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6]) == 7,
              "attention flops fixture line: %s", line);
        al_attn_hparams hp = al_attn_hparams_default();
        hp.hidden = v[0], hp.n_heads = v[1], hp.n_kv_heads = v[2], hp.head_dim = v[3];
        const int64_t nq = v[4], nk = v[5], profiler = v[6];
        const int64_t masked = nq * (nq - 1) / 2; /* scores per head after their query's own key */
        const int64_t causal = profiler - 2 * 2 * hp.n_heads * hp.head_dim * masked;
        CHECK(al_attn_flops_full(&hp, nq, nk) == profiler, "%s: al_attn_flops_full %lld, the profiler %lld", line,
              (long long)al_attn_flops_full(&hp, nq, nk), (long long)profiler);
        CHECK(al_attn_flops_causal(&hp, nq, nk) == causal, "%s: al_attn_flops_causal %lld, the causal work %lld", line,
              (long long)al_attn_flops_causal(&hp, nq, nk), (long long)causal);
        cases++;
        masked_cases += masked > 0;
    }
    free(text);
    CHECK(cases >= 20 && masked_cases >= 8, "%s: %d calls (%d with masked scores)", path, cases, masked_cases);
    const al_attn_hparams c = al_attn_hparams_default();
    CHECK(al_attn_flops_causal(&c, 5, 4) == -1 && al_attn_flops_causal(&c, -1, 4) == -1 &&
              al_attn_flops_causal(NULL, 1, 1) == -1, "causal FLOPs out of range accepted");
}

/* al_kv_growth against the formulas written out here: K and V of len tokens are
 * 2·len·kv_heads·head_dim float32 values; a call of q queries over k keys costs
 * 2·q·hidden·head_dim·(2·heads + 2·kv_heads) for the projections and 4·heads·q·k·head_dim for
 * the scores and weights·V. */
static void test_kv_growth(void) {
    const struct { int64_t hidden, heads, kv, hd, prompt, steps; } cases[] = {
        {16, 4, 2, 8, 4, 3}, {768, 8, 4, 96, 512, 5}, {64, 6, 1, 32, 1, 0}, {48, 2, 2, 16, 3, 40},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        al_attn_hparams hp = al_attn_hparams_default();
        hp.hidden = cases[c].hidden, hp.n_heads = cases[c].heads, hp.n_kv_heads = cases[c].kv, hp.head_dim = cases[c].hd;
        const int64_t H = cases[c].heads, KV = cases[c].kv, D = cases[c].hd, C = cases[c].hidden;
        const int64_t P = cases[c].prompt, S = cases[c].steps;
        al_error err = {0};
        CHECK(al_kv_growth(&hp, P, S, NULL, 0, &err) == S + 1, "case %zu: size query: %s", c, err.msg);
        al_kv_growth_row rows[41];
        CHECK(al_kv_growth(&hp, P, S, rows, S + 1, &err) == S + 1, "case %zu: fill: %s", c, err.msg);
        for (int64_t i = 0; i <= S; i++) {
            const int64_t len = P + i, q = i == 0 ? P : 1;
            const int64_t proj = 2 * C * D * (2 * H + 2 * KV);
            CHECK(rows[i].len == len, "case %zu row %lld: len %lld", c, (long long)i, (long long)rows[i].len);
            CHECK(rows[i].bytes == 2 * len * KV * D * 4 && rows[i].bytes_mha == 2 * len * H * D * 4 &&
                  rows[i].bytes_mqa == 2 * len * D * 4, "case %zu row %lld: bytes %lld %lld %lld", c, (long long)i,
                  (long long)rows[i].bytes, (long long)rows[i].bytes_mha, (long long)rows[i].bytes_mqa);
            CHECK(rows[i].flops_cached == q * proj + 4 * H * q * len * D, "case %zu row %lld: cached FLOPs %lld", c,
                  (long long)i, (long long)rows[i].flops_cached);
            CHECK(rows[i].flops_uncached == len * proj + 4 * H * len * len * D, "case %zu row %lld: uncached FLOPs %lld",
                  c, (long long)i, (long long)rows[i].flops_uncached);
        }
        /* A short buffer gets the first rows and the full count. */
        al_kv_growth_row two[2] = {{0}, {0}};
        CHECK(S < 1 || (al_kv_growth(&hp, P, S, two, 2, NULL) == S + 1 && two[1].len == P + 1), "case %zu: short buffer", c);
    }
    al_attn_hparams hp = al_attn_hparams_default();
    al_kv_growth_row row;
    al_error err = {0};
    CHECK(al_kv_growth(&hp, 0, 3, &row, 1, &err) == -1 && err.status == AL_ERR_ARG && strstr(err.msg, "prompt"), "prompt 0 accepted");
    CHECK(al_kv_growth(&hp, 4, -1, &row, 1, &err) == -1 && err.status == AL_ERR_ARG, "negative steps accepted");
    CHECK(al_kv_growth(&hp, AL_MAX_SEQ, 1, &row, 1, &err) == -1 && err.status == AL_ERR_ARG, "past AL_MAX_SEQ accepted");
    CHECK(al_kv_growth(&hp, 4, 3, NULL, 4, &err) == -1 && err.status == AL_ERR_ARG, "NULL rows with a capacity accepted");
    CHECK(al_kv_growth(NULL, 4, 3, &row, 1, &err) == -1 && err.status == AL_ERR_ARG, "NULL hparams accepted");
    hp.n_kv_heads = 3;
    CHECK(al_kv_growth(&hp, 4, 3, &row, 1, &err) == -1 && err.status == AL_ERR_CONFIG && strstr(err.msg, "multiple"),
          "GQA 4/3 accepted: %s", err.msg);
}

/* al_sort against libc's qsort: sizes 0..300 and 5000, many equal keys or none, already sorted
 * and reversed inputs, 8-byte and 3-byte elements. */
static int cmp_int(const void *a, const void *b) {
    const int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}
static int cmp_3bytes(const void *a, const void *b) { return memcmp(a, b, 3); }

static void test_sort(void) {
    static int got[5000], want[5000];
    static unsigned char got3[3 * 5000], want3[3 * 5000];
    uint32_t state = 12345;
    for (int n = 0; n <= 5000; n = n < 300 ? n + 1 : 5000) {
        for (int kind = 0; kind < 4; kind++) {
            for (int i = 0; i < n; i++) {
                state = state * 1664525u + 1013904223u;
                got[i] = kind == 0 ? (int)(state >> 8) : kind == 1 ? (int)(state >> 28) : kind == 2 ? i : n - i;
            }
            memcpy(want, got, sizeof(int) * (size_t)n);
            qsort(want, (size_t)n, sizeof(int), cmp_int);
            al_sort(got, (size_t)n, sizeof(int), cmp_int);
            CHECK(memcmp(got, want, sizeof(int) * (size_t)n) == 0, "al_sort of %d ints (kind %d) differs from qsort", n, kind);
        }
        for (int i = 0; i < 3 * n; i++) {
            state = state * 1664525u + 1013904223u;
            got3[i] = (unsigned char)(state >> 29);
        }
        memcpy(want3, got3, (size_t)(3 * n));
        qsort(want3, (size_t)n, 3, cmp_3bytes);
        al_sort(got3, (size_t)n, 3, cmp_3bytes);
        CHECK(memcmp(got3, want3, (size_t)(3 * n)) == 0, "al_sort of %d 3-byte elements differs from qsort", n);
        if (n == 5000) break;
    }
}

int main(int argc, char **argv) {
    const char *path = argc > 1 ? argv[1] : "tests/fixtures/kernels.safetensors";
    size_t size;
    uint8_t *bytes = read_file(path, &size);
    if (!bytes) CHECK_DONE();
    al_error err = {0};
    const al_status st = al_st_parse(bytes, size, &golden, &err);
    free(bytes);
    CHECK(st == AL_OK, "%s: %s", path, err.msg);
    if (st != AL_OK) CHECK_DONE();
    test_embedding();
    test_linear();
    test_linear_is_gemm();
    test_norms();
    test_softmax();
    test_softmax_special();
    test_softmax_causal_row();
    test_rope();
    test_repeat_kv();
    test_sums();
    test_layer_api();
    test_sessions();
    test_session_run_to();
    test_session_rope_relative();
    test_views();
    test_kv_growth();
    test_attn_flops_profiler(argc > 2 ? argv[2] : "tests/fixtures/attn_flops/flops.txt");
    test_sort();
    al_st_free(golden);
    CHECK_DONE();
}
