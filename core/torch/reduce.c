/* reduce.c — float32 reductions in the exact order PyTorch 1.13's CPU kernels use, so that a
 * sum, mean or norm printed with six decimals matches PyTorch's last digit, and a plain dot
 * product as reference BLAS computes it.
 *
 * PyTorch's sum of a contiguous row (aten/src/ATen/native/cpu/SumKernel.cpp, AVX2 build):
 *   - rows of n >= 8 are read as n/8 vectors of 8 lanes, summed lane-wise by `row_sum`
 *     (4 interleaved accumulators, each a 4-level cascade), the n % 8 tail is summed into a
 *     scalar, then the 8 lanes are added to that scalar left to right;
 *   - shorter rows use the same `row_sum` on scalars.
 * Checked against torch.sum for every n up to 300 and at 500, 1000, 4096 and 10000. */
#include "attnlab/torch.h"
#include "torch/reduce.h"

#include <math.h>
#include <string.h>

enum { LANES = 8, ILP = 4, LEVELS = 4 };

static int64_t ceil_log2(int64_t x) {
    if (x <= 2) return 1;
    int64_t bits = 0;
    for (uint64_t v = (uint64_t)(x - 1); v; v >>= 1) bits++;
    return bits;
}

/* Sum of `rows` rows of ILP columns of `width` lanes each (width 1 or LANES), element (i, k,
 * lane) at x[(i·ILP + k)·width + lane]: the cascade of multi_row_sum. out[k·width + lane]. */
static inline float load(const float *x, int64_t i, int square) {
    return square ? x[i] * x[i] : x[i];
}

static void multi_row_sum(float *out, const float *x, int64_t rows, int width, int square) {
    const int64_t level_power = ceil_log2(rows) / LEVELS > 4 ? ceil_log2(rows) / LEVELS : 4;
    const int64_t level_step = (int64_t)1 << level_power;
    const int64_t level_mask = level_step - 1;
    float acc[LEVELS][ILP * LANES];
    const int row_len = ILP * width;
    memset(acc, 0, sizeof acc);

    int64_t i = 0;
    while (i + level_step <= rows) {
        for (int64_t j = 0; j < level_step; j++)
            for (int c = 0; c < row_len; c++) acc[0][c] += load(x, (i + j) * row_len + c, square);
        i += level_step;
        /* Carry finished blocks up the cascade, like a binary counter in base level_step. */
        for (int level = 1; level < LEVELS; level++) {
            for (int c = 0; c < row_len; c++) {
                acc[level][c] += acc[level - 1][c];
                acc[level - 1][c] = 0.0f;
            }
            if ((i & (level_mask << (level * level_power))) != 0) break;
        }
    }
    for (; i < rows; i++)
        for (int c = 0; c < row_len; c++) acc[0][c] += load(x, i * row_len + c, square);
    for (int level = 1; level < LEVELS; level++)
        for (int c = 0; c < row_len; c++) acc[0][c] += acc[level][c];
    memcpy(out, acc[0], (size_t)row_len * sizeof(float));
}

/* row_sum: the row read as (n / ILP, ILP), remainder into accumulator 0, then the ILP
 * accumulators folded into the first, in `width` independent lanes. */
static void row_sum(float *out, const float *x, int64_t n, int width, int square) {
    float partial[ILP * LANES];
    const int64_t rows = n / ILP;
    multi_row_sum(partial, x, rows, width, square);
    for (int64_t i = rows * ILP; i < n; i++)
        for (int l = 0; l < width; l++) partial[l] += load(x, i * width + l, square);
    for (int k = 1; k < ILP; k++)
        for (int l = 0; l < width; l++) partial[l] += partial[k * width + l];
    memcpy(out, partial, (size_t)width * sizeof(float));
}

/* Rows shorter than 16, which the attention layer's QK-Norm meets for every head of small
 * models, spelled out: the same additions in the same order as the general code below gives
 * for them (its zero accumulators included, so even the sign of a zero sum is the same). */
static float short_row_sum(const float *x, int64_t n, int square) {
    if (n < ILP) { /* row_sum over scalars, no full row of ILP: one accumulator */
        float s = 0.0f;
        for (int64_t i = 0; i < n; i++) s += load(x, i, square);
        return ((s + 0.0f) + 0.0f) + 0.0f;
    }
    if (n < LANES) { /* one row of ILP accumulators, the rest into the first, then folded */
        float p[ILP];
        for (int k = 0; k < ILP; k++) p[k] = 0.0f + load(x, k, square);
        for (int64_t i = ILP; i < n; i++) p[0] += load(x, i, square);
        return ((p[0] + p[1]) + p[2]) + p[3];
    }
    /* one vector of 8 lanes (each 0 + x, plus three zero accumulators), the tail first */
    float total = 0.0f;
    for (int64_t i = LANES; i < n; i++) total += load(x, i, square);
    for (int l = 0; l < LANES; l++) total += (((0.0f + load(x, l, square)) + 0.0f) + 0.0f) + 0.0f;
    return total;
}

/* Σ x (square = 0) or Σ x² with each square rounded to float first (square = 1). */
static float torch_row_sum(const float *x, int64_t n, int square) {
    if (n < 2 * LANES) return short_row_sum(x, n, square);
    const int64_t vectors = n / LANES;
    float lanes[LANES];
    row_sum(lanes, x, vectors, LANES, square);
    float total = 0.0f;
    for (int64_t i = vectors * LANES; i < n; i++) total += load(x, i, square);
    for (int l = 0; l < LANES; l++) total += lanes[l];
    return total;
}

float al_sum_f32(const float *x, int64_t n) { return torch_row_sum(x, n, 0); }

float al_sum_squares_f32(const float *x, int64_t n) { return torch_row_sum(x, n, 1); }

float al_dot_f32(const float *a, const float *b, int64_t n) {
    float s = 0.0f;
    for (int64_t i = 0; i < n; i++) s += a[i] * b[i];
    return s;
}

float al_norm2_f32(const float *x, int64_t n) {
    float lanes[LANES] = {0};
    int64_t i = 0;
    for (; i + LANES <= n; i += LANES)
        for (int l = 0; l < LANES; l++) lanes[l] = fmaf(x[i + l], x[i + l], lanes[l]);
    float s = lanes[0];
    for (int l = 1; l < LANES; l++) s += lanes[l];
    for (; i < n; i++) s = fmaf(x[i], x[i], s);
    return sqrtf(s);
}
