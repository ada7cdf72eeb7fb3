/* softmax.c — F.softmax(x, dim=-1) on a contiguous float32 row as PyTorch 1.13 computes it on
 * the CPU (aten/src/ATen/native/cpu/SoftMaxKernel.cpp, _vec_softmax_lastdim, AVX2 build):
 *   1. max = reduce_all(maximum, x);
 *   2. e_i = exp(x_i − max) with SLEEF's Sleef_expf8_u10 (its multiply-adds fused);
 *   3. s = reduce_all(+, e);
 *   4. y_i = e_i · (1 / s) — a multiplication by the rounded reciprocal, not a division.
 * reduce_all on n >= 8 floats: 8 lanes, lane l accumulating x[l], x[8 + l], ... left to right
 * (the tail of n % 8 into the first lanes), then the lanes folded as a tree: lane l + (l ^ 4),
 * then + (l ^ 2), then + (l ^ 1), lane 0 read. On n < 8 the row is one vector folded left to
 * right. Checked against torch.softmax for rows of 1 to 40 floats, thousands of them. */
#include "torch/softmax.h"

#include <math.h>

enum { LANES = 8 };

/* Sleef_expf8_u10 in one lane: exp(d) = 2^q · e^s, q = rint(d / ln 2), s = d − q·ln 2 (ln 2
 * in two parts), e^s = 1 + s + s²·P(s); 0 below −104, NaN kept. d <= 0 here. */
static float sleef_expf(float d) {
    if (d != d) return d;
    if (d < -104.0f) return 0.0f;
    const float q = rintf(d * 1.442695040888963407359924681001892137426645954152985934135449406931f);
    float s = fmaf(q, -0.693145751953125f, d);
    s = fmaf(q, -1.428606765330187045e-06f, s);
    float u = 0.000198527617612853646278381f;
    u = fmaf(u, s, 0.00139304355252534151077271f);
    u = fmaf(u, s, 0.00833336077630519866943359f);
    u = fmaf(u, s, 0.0416664853692054748535156f);
    u = fmaf(u, s, 0.166666671633720397949219f);
    u = fmaf(u, s, 0.5f);
    u = 1.0f + fmaf(s * s, u, s);
    /* vldexp2: u · 2^(q >> 1) · 2^(q − (q >> 1)), two exact powers of two */
    const int qi = (int)q, half = qi >> 1;
    return u * ldexpf(1.0f, half) * ldexpf(1.0f, qi - half);
}

/* reduce_all(op, x[n]) as described above; op: 0 maximum, 1 sum. */
static float reduce_all(const float *x, int64_t n, int sum) {
    if (n < LANES) {
        float acc = x[0];
        for (int64_t i = 1; i < n; i++) acc = sum ? acc + x[i] : (acc < x[i] || x[i] != x[i] ? x[i] : acc);
        return acc;
    }
    float lane[LANES];
    for (int l = 0; l < LANES; l++) lane[l] = x[l];
    int64_t i = LANES;
    for (; i < n; i += LANES)
        for (int l = 0; l < LANES && i + l < n; l++)
            lane[l] = sum ? lane[l] + x[i + l]
                          : (lane[l] < x[i + l] || x[i + l] != x[i + l] ? x[i + l] : lane[l]);
    for (int step = 4; step >= 1; step /= 2) {
        float next[LANES];
        for (int l = 0; l < LANES; l++) {
            const float a = lane[l], b = lane[l ^ step];
            next[l] = sum ? a + b : (a < b || b != b ? b : a);
        }
        for (int l = 0; l < LANES; l++) lane[l] = next[l];
    }
    return lane[0];
}

void al_softmax_torch_f32(float *y, const float *x, int64_t n) {
    if (n < 1) return;
    const float max = reduce_all(x, n, 0);
    for (int64_t i = 0; i < n; i++) y[i] = sleef_expf(x[i] - max);
    const float r = 1.0f / reduce_all(y, n, 1);
    for (int64_t i = 0; i < n; i++) y[i] *= r;
}
