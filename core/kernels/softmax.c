/* softmax.c — row-wise softmax in float32, as F.softmax on the last dimension:
 *   y_j = exp(x_j − max) / Σ_k exp(x_k − max)
 * Subtracting the row maximum keeps exp from overflowing. Masked scores are −inf, so
 * exp(−inf − max) is exactly 0 and masked weights are exactly 0; a row that is all −inf has
 * max −inf, −inf − (−inf) is NaN, and the row is NaN — as in PyTorch.
 *
 * exp is computed here, branch-free so the compiler can vectorise the row (the attention's
 * softmax runs once per score): exp(x) = 2^n · e^r with n = round(x / ln 2) and
 * r = x − n·ln 2 (ln 2 split in two parts so n·ln2_hi is exact), e^r = 1 + r + r²·P(r) with
 * Cephes' degree-5 P on |r| <= ln2/2 — within 2 ulp of the true value, like PyTorch's own
 * vectorised exp (SLEEF, 1 ulp); the results agree with PyTorch to the fixtures' 1e-5.
 * The same arithmetic runs natively and in WebAssembly, so both builds agree bit for bit. */
#include "base/internal.h"
#include "base/fault.h"

#include <math.h>
#include <string.h>

static inline float exp_poly(float x) {
    const float log2e = 1.44269504088896341f;
    const float ln2_hi = 0.693359375f, ln2_lo = -2.12194440e-4f;
    /* Below about -87.3 the result is below FLT_MIN: return 0 (and 0 for -inf). Above 88.7 it
     * overflows: clamp (x − max <= 0 in softmax, so only NaN arguments get there: an infinite
     * score minus an infinite max). NaN stays NaN. Every special case is a select, not a
     * branch, and never reaches the float-to-int conversion below. */
    const int underflow = x < -87.33654475f, not_a_number = x != x;
    x = x > 88.3762626647949f ? 88.3762626647949f : x;
    x = underflow || not_a_number ? 0.0f : x;
    /* Round to nearest by adding and removing 1.5·2^23 (|x·log2e| < 2^22): no call to floor,
     * so the loop vectorises on any SIMD level. */
    const float shifter = 12582912.0f;
    const float n = (x * log2e + shifter) - shifter;
    const float r = (x - n * ln2_hi) - n * ln2_lo;
    float p = 1.9875691500e-4f;
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    const float er = (p * (r * r) + r) + 1.0f;
    /* 2^n by building the float's exponent field; n is in [-126, 127] here. */
    const int32_t bits = ((int32_t)n + 127) << 23;
    float two_n;
    memcpy(&two_n, &bits, sizeof two_n);
    const float y = er * two_n;
    return not_a_number ? NAN : underflow ? 0.0f : y;
}

/* On x86-64 the function is built for AVX-512, AVX2 and the baseline, picked at load time:
 * the same arithmetic in wider vectors (no fused multiply-adds: the build forbids contraction). */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && defined(__linux__)
__attribute__((target_clones("avx512f", "avx2", "default")))
#endif
void al_softmax_forward(float *y, const float *x, int64_t rows, int64_t cols) {
    enum { LANES = 8 };
    for (int64_t r = 0; r < rows; r++) {
        const float *xr = x + r * cols;
        float *yr = y + r * cols;
        /* The maximum and whether a NaN is there, in LANES lanes folded after (the maximum is
         * exact whatever the order: the same value as one pass; the lanes let it vectorise). */
        float lane_max[LANES];
        int lane_nan[LANES];
        for (int l = 0; l < LANES; l++) lane_max[l] = -INFINITY, lane_nan[l] = 0;
        int64_t j0 = 0;
        for (; j0 + LANES <= cols; j0 += LANES)
            for (int l = 0; l < LANES; l++) {
                const float v = xr[j0 + l];
                lane_max[l] = v > lane_max[l] ? v : lane_max[l];
                lane_nan[l] |= v != v;
            }
        for (int l = 0; j0 < cols; j0++, l++) {
            lane_max[l] = xr[j0] > lane_max[l] ? xr[j0] : lane_max[l];
            lane_nan[l] |= xr[j0] != xr[j0];
        }
        float max = -INFINITY;
        int has_nan = 0;
        for (int l = 0; l < LANES; l++) {
            max = lane_max[l] > max ? lane_max[l] : max;
            has_nan |= lane_nan[l];
        }
        /* A NaN score, or a row with nothing visible (max −inf): NaN weights. */
        if (has_nan || max == -INFINITY) {
            for (int64_t j = 0; j < cols; j++) yr[j] = NAN;
            continue;
        }
        /* In place (the attention's rows are), one pointer: the compiler then vectorises the
         * loop without a run-time overlap check, which y == x would fail (every element is
         * read before it is written, so the two loops give the same bits). */
        if (yr == xr)
            for (int64_t j = 0; j < cols; j++) yr[j] = exp_poly(yr[j] - max);
        else
            for (int64_t j = 0; j < cols; j++) yr[j] = exp_poly(xr[j] - max);
        /* The sum in 8 lanes, folded in a fixed order. Trailing masked entries are exact
         * zeros, so a row padded with them sums to the same bits. */
        float lanes[LANES] = {0};
        int64_t j = 0;
        for (; j + LANES <= cols; j += LANES)
            for (int l = 0; l < LANES; l++) lanes[l] += yr[j + l];
        for (int l = 0; j < cols; j++, l++) lanes[l] += yr[j];
        float sum = 0.0f;
        for (int l = 0; l < LANES; l++) sum += lanes[l];
        /* PyTorch multiplies by the reciprocal of the sum rather than dividing each entry. */
        const float inv = (AL_FAULT(AL_FAULT_SOFTMAX_NORM) ? 1.001f : 1.0f) / sum;
        for (int64_t k = 0; k < cols; k++) yr[k] *= inv;
    }
}
