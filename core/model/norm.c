/* norm.c — the two normalisations the tutorial compares:
 *   RMSNorm   y = weight · x / sqrt(mean(x²) + eps)        (MiniMind, and QK-Norm per head)
 *   LayerNorm y = (x − mean) / sqrt(var + eps) · weight + bias   (nn.LayerNorm)
 * RMSNorm only rescales; LayerNorm also recentres. Both follow PyTorch's float32 order of
 * operations so that printed values match to the last digit. */
#include "attnlab/model.h"
#include "model/norm.h"
#include "torch/reduce.h"

#include <math.h>

void al_rmsnorm_keep_forward(float *y, float *rms, const float *x, const float *weight, int64_t n,
                             int64_t dim, float eps) {
    for (int64_t r = 0; r < n; r++) {
        const float *xr = x + r * dim;
        float *yr = y + r * dim;
        /* mean(x²) as torch: x.pow(2) elementwise, summed in torch's order, divided by dim. */
        const float sum_sq = al_sum_squares_f32(xr, dim);
        const float rms_r = sqrtf(sum_sq / (float)dim + eps);
        if (rms) rms[r] = rms_r;
        /* The seeds write weight * x / rms: the product first, then the division. */
        for (int64_t i = 0; i < dim; i++) yr[i] = weight[i] * xr[i] / rms_r;
    }
}

void al_rmsnorm_forward(float *y, const float *x, const float *weight, int64_t n, int64_t dim,
                        float eps) {
    al_rmsnorm_keep_forward(y, NULL, x, weight, n, dim, eps);
}

/* Welford's running mean and M2 over a short row, as PyTorch's RowwiseMoments does for the
 * part of a row that does not fill its 8-float vectors; longer rows are folded in 8 lanes
 * and merged with Chan's update (AddMoments). */
static void row_moments(const float *x, int64_t n, float *mean_out, float *var_out) {
    enum { LANES = 8 };
    const int64_t vectors = n / LANES;
    float lane_mean[LANES] = {0}, lane_m2[LANES] = {0};
    for (int64_t j = 0; j < vectors; j++) {
        const float c = 1.0f / (float)(j + 1);
        for (int l = 0; l < LANES; l++) {
            const float v = x[j * LANES + l];
            const float delta = v - lane_mean[l];
            lane_mean[l] += delta * c;
            lane_m2[l] += delta * (v - lane_mean[l]);
        }
    }
    int64_t count = 0;
    float mean = 0.0f, m2 = 0.0f;
    for (int64_t i = vectors * LANES; i < n; i++) {
        const float delta = x[i] - mean;
        ++count;
        mean += delta / (float)count;
        m2 += delta * (x[i] - mean);
    }
    for (int l = 0; l < LANES; l++) {
        /* Chan et al.: merge a lane of `vectors` values into the running moments. */
        const int64_t total = count + vectors;
        const float c = total == 0 ? 0.0f : (float)vectors / (float)total;
        const float delta = lane_mean[l] - mean;
        mean += c * delta;
        m2 += lane_m2[l] + delta * delta * c * (float)count;
        count = total;
    }
    *mean_out = mean;
    *var_out = m2 / (float)n;
}

void al_layernorm_forward(float *y, const float *x, const float *weight, const float *bias,
                          int64_t n, int64_t dim, float eps) {
    for (int64_t r = 0; r < n; r++) {
        const float *xr = x + r * dim;
        float *yr = y + r * dim;
        float mean, var;
        row_moments(xr, dim, &mean, &var);
        /* y = (x·scale + shift)·weight + bias with scale = 1/sqrt(var + eps),
         * shift = −scale·mean: PyTorch's fused form of (x − mean)·scale. Its AVX2 build
         * compiles both multiply-adds to FMA instructions, and so do we, explicitly. */
        const float scale = 1.0f / sqrtf(var + eps);
        const float shift = -scale * mean;
        for (int64_t i = 0; i < dim; i++)
            yr[i] = fmaf(fmaf(xr[i], scale, shift), weight[i], bias[i]);
    }
}
