/* linear.c — y = x Wᵀ with PyTorch's weight layout W[out, in] (nn.Linear without bias).
 * Both x's rows and W's rows are contiguous along `in`, so every output is one dot product
 * of two contiguous rows; eight partial sums per dot let the compiler use SIMD lanes. */
#include "internal.h"

enum { DOT_LANES = 8 };

/* Σ a[i]·b[i] with DOT_LANES independent accumulators (vectorisable without -ffast-math). */
static float dot_lanes(const float *a, const float *b, int64_t n) {
    float acc[DOT_LANES] = {0};
    int64_t i = 0;
    for (; i + DOT_LANES <= n; i += DOT_LANES)
        for (int l = 0; l < DOT_LANES; l++) acc[l] += a[i + l] * b[i + l];
    float s = 0.0f;
    for (int l = 0; l < DOT_LANES; l++) s += acc[l];
    for (; i < n; i++) s += a[i] * b[i];
    return s;
}

void al_linear_forward(float *y, const float *x, const float *w, int64_t n, int64_t in_dim,
                       int64_t out_dim) {
    for (int64_t r = 0; r < n; r++) {
        const float *xr = x + r * in_dim;
        float *yr = y + r * out_dim;
        for (int64_t o = 0; o < out_dim; o++) yr[o] = dot_lanes(xr, w + o * in_dim, in_dim);
    }
}
