/* demo_figures.c — the numbers the page's charts of chapters 04, 05 and 10 draw (demos.h): the
 * demo is run as `attnlab demo` runs it, its text only counted, and the examples keep what
 * they print (al_demo_figures) for the arrays here. A chart therefore shows the very values
 * its example prints, never a second computation of them. */
#include "attnlab/demos.h"
#include "demos/demo.h"

#include <math.h>
#include <string.h>

/* Runs `demo` for seed into fig (the text counted, not kept), after the checks every entry
 * point shares: a buffer for `need` floats. */
static al_status run_figures(al_demo demo, int64_t seed, const float *out, int64_t cap, int64_t need,
                             const char *what, al_demo_figures *fig, al_error *err) {
    if (!out) return al_fail(err, AL_ERR_ARG, "%s: NULL out", what);
    if (cap < need)
        return al_fail(err, AL_ERR_CAPACITY, "%s: %lld floats needed, cap is %lld", what, (long long)need,
                       (long long)cap);
    memset(fig, 0, sizeof *fig);
    al_demo_out d = {.fig = fig};
    al_text_init(&d.text, NULL, 0);
    return al_demo_write(demo, AL_LANG_EN, seed, &d, err);
}

al_status al_demo_ffn_curves(float *out, int64_t n, int64_t cap, al_error *err) {
    if (n < 2 || n > AL_DEMO_CURVE_MAX)
        return al_fail(err, AL_ERR_ARG, "ffn curves: n %lld is not in [2, %d]", (long long)n, AL_DEMO_CURVE_MAX);
    if (!out) return al_fail(err, AL_ERR_ARG, "ffn curves: NULL out");
    if (cap < 3 * n)
        return al_fail(err, AL_ERR_CAPACITY, "ffn curves: %lld floats needed, cap is %lld", (long long)(3 * n),
                       (long long)cap);
    /* torch.linspace(-3, 3, n) in float32: step = 6 / (n - 1); the first half start + step·i,
     * the rest end − step·(n − 1 − i) (exact at the whole numbers when n = 6k + 1); the
     * example's SiLU and ReLU at each. */
    const float step = 6.0f / (float)(n - 1);
    for (int64_t i = 0; i < n; i++) {
        const float x = i < n / 2 ? -3.0f + step * (float)i : 3.0f - step * (float)(n - 1 - i);
        out[i] = x;
        out[n + i] = al_demo_silu(x);
        out[2 * n + i] = x > 0.0f ? x : 0.0f;
    }
    return AL_OK;
}

al_status al_demo_router(int64_t seed, float *out, int64_t cap, al_error *err) {
    enum { T = AL_DEMO_MOE_TOKENS, E = AL_DEMO_MOE_EXPERTS, K = AL_DEMO_MOE_TOP_K };
    al_demo_figures fig;
    const al_status st = run_figures(AL_DEMO_MLP_MOE, seed, out, cap, 3 * T * E, "router", &fig, err);
    if (st != AL_OK) return st;
    /* [0] the softmax; [1] the top-k as 1s; [2] the renormalised weights in their columns */
    memcpy(out, fig.router, sizeof fig.router);
    memset(out + T * E, 0, 2 * T * E * sizeof(float));
    for (int t = 0; t < T; t++)
        for (int j = 0; j < K; j++) {
            out[T * E + t * E + fig.chosen[t * K + j]] = 1.0f;
            out[2 * T * E + t * E + fig.renorm_ids[t * K + j]] = fig.renorm[t * K + j];
        }
    return AL_OK;
}

al_status al_demo_expert_load(int64_t seed, float *out, int64_t cap, al_error *err) {
    enum { E = AL_DEMO_MOE_EXPERTS };
    al_demo_figures fig;
    const al_status st = run_figures(AL_DEMO_MLP_MOE, seed, out, cap, 4 * E, "expert load", &fig, err);
    if (st != AL_OK) return st;
    for (int e = 0; e < E; e++) {
        out[e] = fig.load[e];
        out[E + e] = fig.prob_mean[e];
        out[2 * E + e] = 1.0f / (float)E;
        out[3 * E + e] = fig.aux_loss;
    }
    return AL_OK;
}

al_status al_demo_block_stream(int64_t seed, float *out, int64_t cap, al_error *err) {
    enum { P = AL_DEMO_BLOCK_POINTS };
    al_demo_figures fig;
    const al_status st = run_figures(AL_DEMO_BLOCK, seed, out, cap, 2 * P, "block stream", &fig, err);
    if (st != AL_OK) return st;
    memcpy(out, fig.pre_norm, sizeof fig.pre_norm);
    memcpy(out + P, fig.post_norm, sizeof fig.post_norm);
    return AL_OK;
}

al_status al_demo_shifted_labels(int64_t seed, float *out, int64_t cap, al_error *err) {
    enum { S = AL_DEMO_LOSS_SEQ };
    al_demo_figures fig;
    const al_status st = run_figures(AL_DEMO_BLOCK, seed, out, cap, 5 * S, "shifted labels", &fig, err);
    if (st != AL_OK) return st;
    for (int t = 0; t < S; t++) {
        out[t] = (float)fig.ids[t];
        out[S + t] = (float)fig.labels[t];
        out[2 * S + t] = t + 1 < S ? (float)fig.labels[t + 1] : -100.0f; /* the shift */
        out[3 * S + t] = fig.nll[t];
        out[4 * S + t] = fig.loss;
    }
    return AL_OK;
}

al_status al_demo_sampler_stages(int64_t seed, int32_t example, float *out, int64_t cap, al_error *err) {
    enum { ROWS = AL_DEMO_GEN_STAGE_ROWS, V = AL_DEMO_GEN_VOCAB };
    /* the examples that run the sampler's stages on one distribution, in al_demo_figures' order */
    static const int32_t EXAMPLES[4] = {1, 3, 4, 5};
    int slot = 0;
    while (slot < 4 && EXAMPLES[slot] != example) slot++;
    if (slot == 4)
        return al_fail(err, AL_ERR_ARG, "sampler stages: example %d is not one of 1, 3, 4, 5", (int)example);
    al_demo_figures fig;
    const al_status st = run_figures(AL_DEMO_GENERATION, seed, out, cap, ROWS * V, "sampler stages", &fig, err);
    if (st != AL_OK) return st;
    memcpy(out, fig.gen_stages[slot], sizeof fig.gen_stages[slot]);
    return AL_OK;
}

al_status al_demo_temperatures(int64_t seed, float *out, int64_t cap, al_error *err) {
    enum { T = AL_DEMO_GEN_TEMPS, V = AL_DEMO_GEN_VOCAB };
    static const float TEMPS[T] = {0.5f, 1.0f, 2.0f}; /* example 2's */
    al_demo_figures fig;
    const al_status st = run_figures(AL_DEMO_GENERATION, seed, out, cap, T * 4 * V, "temperatures", &fig, err);
    if (st != AL_OK) return st;
    for (int k = 0; k < T; k++) {
        float *row = out + k * 4 * V;
        memcpy(row, fig.temp_probs + k * V, V * sizeof(float));
        for (int i = 0; i < V; i++) {
            row[V + i] = TEMPS[k];
            row[2 * V + i] = fig.temp_top[k];
            row[3 * V + i] = fig.temp_entropy[k];
        }
    }
    return AL_OK;
}

al_status al_demo_draws(int64_t seed, float *out, int64_t cap, al_error *err) {
    enum { S = AL_DEMO_GEN_DRAWS, V = AL_DEMO_GEN_VOCAB };
    al_demo_figures fig;
    const al_status st = run_figures(AL_DEMO_GENERATION, seed, out, cap, 2 * S * V, "draws", &fig, err);
    if (st != AL_OK) return st;
    memcpy(out, fig.draw_probs, sizeof fig.draw_probs);
    memset(out + S * V, 0, S * V * sizeof(float));
    for (int s = 0; s < S; s++) out[S * V + s * V + fig.drawn[s]] = 1.0f;
    return AL_OK;
}

al_status al_demo_eos(int64_t seed, float *out, int64_t cap, al_error *err) {
    enum { B = AL_DEMO_GEN_BATCH, N = AL_DEMO_GEN_MAX_NEW };
    al_demo_figures fig;
    const al_status st = run_figures(AL_DEMO_GENERATION, seed, out, cap, 2 * B * N, "eos", &fig, err);
    if (st != AL_OK) return st;
    for (int b = 0; b < B; b++)
        for (int i = 0; i < N; i++) {
            const int ran = i < fig.eos_steps;
            out[b * N + i] = ran ? (float)fig.eos_next[b * N + i] : -1.0f;
            out[B * N + b * N + i] = ran ? (float)fig.eos_finished[b * N + i] : -1.0f;
        }
    return AL_OK;
}
