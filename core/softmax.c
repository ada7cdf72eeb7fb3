/* softmax.c — row-wise softmax in float32, as F.softmax on the last dimension:
 *   y_j = exp(x_j − max) / Σ_k exp(x_k − max)
 * Subtracting the row maximum keeps exp from overflowing. Masked scores are −inf, so
 * exp(−inf − max) is exactly 0 and masked weights are exactly 0; a row that is all −inf has
 * max −inf, −inf − (−inf) is NaN, and the row is NaN — as in PyTorch. */
#include "internal.h"

#include <math.h>

void al_softmax_forward(float *y, const float *x, int64_t rows, int64_t cols) {
    for (int64_t r = 0; r < rows; r++) {
        const float *xr = x + r * cols;
        float *yr = y + r * cols;
        float max = -INFINITY;
        for (int64_t j = 0; j < cols; j++)
            if (xr[j] > max || isnan(xr[j])) max = xr[j];
        float sum = 0.0f;
        for (int64_t j = 0; j < cols; j++) {
            yr[j] = expf(xr[j] - max);
            sum += yr[j];
        }
        /* PyTorch multiplies by the reciprocal of the sum rather than dividing each entry. */
        const float inv = 1.0f / sum;
        for (int64_t j = 0; j < cols; j++) yr[j] *= inv;
    }
}
