/* model/norm.h — RMSNorm as every forward runs it (the decoder, the single layer, the trainer),
 * with the divisor of each row kept for a backward pass. (The public al_rmsnorm_forward is
 * this without the divisors.) Not public API. */
#ifndef ATTNLAB_MODEL_NORM_H
#define ATTNLAB_MODEL_NORM_H

#include "base/internal.h"

/* y = weight · x / rms per row, rms = sqrt(mean(x²) + eps) in PyTorch's float32 order; y may be
 * x. rms [n], if not NULL, receives each row's rms (what RMSNorm's backward divides by). */
void al_rmsnorm_keep_forward(float *y,            /* [n, dim] */
                             float *rms,          /* [n] or NULL */
                             const float *x,      /* [n, dim] */
                             const float *weight, /* [dim] */
                             int64_t n, int64_t dim, float eps);

#endif
