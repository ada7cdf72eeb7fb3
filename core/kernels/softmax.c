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
#include "attnlab/kernels.h"
#include "kernels/softmax.h"

#include "base/fault.h"

#include <math.h>
#include <string.h>

/* exp(x) for x <= 0 or −inf, or NaN (which stays NaN): softmax_row's x − max, once it has
 * refused infinite maxima. No overflow clamp, no NaN select and no float-to-int conversion:
 * WebAssembly's min, NaN tests and saturating conversion are several x86 instructions each, and
 * the three made the seeds' prefill of 512 tokens 14% slower. */
static inline float exp_nonpositive(float x) {
    const float log2e = 1.44269504088896341f;
    const float ln2_hi = 0.693359375f, ln2_lo = -2.12194440e-4f;
    /* Below about -87.3 the result is below FLT_MIN: 0 (and 0 for −inf), masked at the end;
     * what the arithmetic below makes of such an x (2^n's bits wrap) is discarded there. A NaN
     * is "in range" and comes out NaN. */
    const int in_range = !(x < -87.33654475f);
    /* n = round(x / ln 2) by adding and removing 1.5·2^23 + 127 (|x·log2e| < 2^22): t's low
     * mantissa bits then hold n + 127, so t's bits shifted up by 23 are 2^n's. */
    const float shifter = 12583039.0f;
    const float t = x * log2e + shifter;
    const float n = t - shifter;
    const float r = (x - n * ln2_hi) - n * ln2_lo;
    float p = 1.9875691500e-4f;
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    const float er = (p * (r * r) + r) + 1.0f;
    /* 2^n: n in [-126, 0] here, bits (n + 127) << 23, from t's bits (0x4B400000 + 127 + n). */
    uint32_t bits;
    memcpy(&bits, &t, sizeof bits);
    bits <<= 23;
    float two_n;
    memcpy(&two_n, &bits, sizeof two_n);
    const float y = er * two_n;
    /* y, or +0 (all bits clear), chosen by an AND of the bits with all ones or zeros. Written
     * in_range ? y : 0.0f, gcc keeps a branch around y's arithmetic (it will not run float
     * operations that may raise flags on the path that discards them) and leaves the loop
     * scalar without AVX-512's masks: 5x the instructions of the vector loop with AVX2. */
    uint32_t y_bits;
    memcpy(&y_bits, &y, sizeof y_bits);
    y_bits &= -(uint32_t)in_range;
    float out;
    memcpy(&out, &y_bits, sizeof out);
    return out;
}

/* y[j] = exp(x[j] − max), j < n, in blocks of EXP_BLOCK: each block's loop has a constant
 * count, so it runs as whole vectors, and the last, partial block goes through a copy padded
 * with max (whose exps, 1, are dropped): its entries scalar, up to 15 exps of ~30 instructions
 * each, cost as much as the rest of a decode step's row of 100 scores. In place (the
 * attention's rows are), one pointer: the compiler then vectorises the loop without a run-time
 * overlap check, which y == x would fail (every element is read before it is written, so the
 * two loops give the same bits). Each entry's exp is the same arithmetic either way. */
enum { EXP_BLOCK = 16 };
static inline __attribute__((always_inline)) void exp_shifted(float *y, const float *x, int64_t n, float max) {
    const int64_t whole = n - n % EXP_BLOCK;
    if (y == x)
        for (int64_t j = 0; j < whole; j++) y[j] = exp_nonpositive(y[j] - max);
    else
        for (int64_t j = 0; j < whole; j++) y[j] = exp_nonpositive(x[j] - max);
    if (whole == n) return;
    float tail[EXP_BLOCK];
    for (int l = 0; l < EXP_BLOCK; l++) tail[l] = whole + l < n ? x[whole + l] : max;
    for (int l = 0; l < EXP_BLOCK; l++) tail[l] = exp_nonpositive(tail[l] - max);
    for (int64_t j = whole; j < n; j++) y[j] = tail[j - whole];
}

/* One row, in place or not: y = softmax(x) over n entries. Returns 1, with y left for the
 * caller to fill with NaN, when a score is NaN, nothing is visible (max −inf) or a score is
 * +inf (x − max is then NaN for it: PyTorch's row is NaN). */
static inline __attribute__((always_inline)) int softmax_row(float *yr, const float *xr, int64_t n) {
    enum { LANES = 8, MAX_LANES = 16 };
    /* The maximum, in MAX_LANES lanes folded after (exact whatever the order: the same value
     * as one pass; the lanes let it vectorise, the loop over them kept whole so that it is one
     * vector maximum rather than 16 scalar ones). Written m < v ? v : m, one SIMD pseudo-max.
     * A NaN never wins a comparison: it is found by the sum below. */
    float lane_max[MAX_LANES];
    for (int l = 0; l < MAX_LANES; l++) lane_max[l] = -INFINITY;
    int64_t j0 = 0;
    for (; j0 + MAX_LANES <= n; j0 += MAX_LANES) {
        _Pragma("GCC unroll 1") for (int l = 0; l < MAX_LANES; l++)
            lane_max[l] = lane_max[l] < xr[j0 + l] ? xr[j0 + l] : lane_max[l];
    }
    for (int l = 0; j0 < n; j0++, l++) lane_max[l] = lane_max[l] < xr[j0] ? xr[j0] : lane_max[l];
    float max = -INFINITY;
    for (int l = 0; l < MAX_LANES; l++) max = max < lane_max[l] ? lane_max[l] : max;
    if (max == -INFINITY || max == INFINITY) return 1;
    exp_shifted(yr, xr, n, max);
    /* The sum in 8 lanes, folded in a fixed order. Trailing masked entries are exact zeros,
     * so a row padded with them sums to the same bits as the row without them. */
    float lanes[LANES] = {0};
    int64_t j = 0;
    for (; j + LANES <= n; j += LANES)
        for (int l = 0; l < LANES; l++) lanes[l] += yr[j + l];
    for (int l = 0; j < n; j++, l++) lanes[l] += yr[j];
    float sum = 0.0f;
    for (int l = 0; l < LANES; l++) sum += lanes[l];
    if (sum != sum) return 1; /* a NaN score: its exp is NaN, and so the sum */
    /* PyTorch multiplies by the reciprocal of the sum rather than dividing each entry. */
    const float inv = (AL_FAULT(AL_FAULT_SOFTMAX_NORM) ? 1.001f : 1.0f) / sum;
    for (int64_t k = 0; k < n; k++) yr[k] *= inv;
    return 0;
}

/* On x86-64 the functions are built for AVX-512, AVX2 and the baseline, picked at load time:
 * the same arithmetic in wider vectors (no fused multiply-adds: the build forbids contraction). */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && defined(__linux__)
#define SOFTMAX_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define SOFTMAX_CLONES
#endif

SOFTMAX_CLONES
void al_softmax_forward(float *y, const float *x, int64_t rows, int64_t cols) {
    for (int64_t r = 0; r < rows; r++) {
        float *yr = y + r * cols;
        /* A NaN or +inf score, or a row with nothing visible (max −inf): NaN weights. */
        if (softmax_row(yr, x + r * cols, cols))
            for (int64_t j = 0; j < cols; j++) yr[j] = NAN;
    }
}

SOFTMAX_CLONES
void al_softmax_causal_row(float *row, int64_t cols, int64_t seen, float scale) {
    /* 1. scale what the query sees: scores / √d, a division as in the reference */
    for (int64_t t = 0; t < seen; t++) row[t] = row[t] / scale;
    /* 2. softmax over it; 3. the masked rest: exp(−inf − max) = 0 exactly */
    const int nan_row = softmax_row(row, row, seen);
    for (int64_t t = nan_row ? 0 : seen; t < cols; t++) row[t] = nan_row ? NAN : 0.0f;
}
