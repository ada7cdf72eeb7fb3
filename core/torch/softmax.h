/* torch/softmax.h — F.softmax over a contiguous row as PyTorch 1.13's CPU kernel computes it
 * (AVX2 build), bit for bit, for the sampler and the demos that print probabilities. Not
 * public API. */
#ifndef ATTNLAB_TORCH_SOFTMAX_H
#define ATTNLAB_TORCH_SOFTMAX_H

#include "base/internal.h"

/* y = softmax(x) over n >= 1 floats (y may be x). -inf entries get exactly 0; a NaN, or a
 * row whose largest entry is ±inf, gives NaN where PyTorch does. */
void al_softmax_torch_f32(float *y, const float *x, int64_t n);

#endif
