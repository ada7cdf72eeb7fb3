/* torch/reduce.h — reductions in PyTorch's own order, for the core's other layers (the public
 * al_sum_f32 and al_dot_f32 are in attnlab.h): so the demos and the checks print PyTorch's
 * last digit. Not public API. */
#ifndef ATTNLAB_TORCH_REDUCE_H
#define ATTNLAB_TORCH_REDUCE_H

#include "base/internal.h"

/* x.pow(2).sum() in PyTorch's order: each square rounded to float32, then al_sum_f32's order. */
float al_sum_squares_f32(const float *x, int64_t n);

/* ‖x‖₂ in float32 as torch.Tensor.norm() computes it for a contiguous row (AVX2 build):
 * 8 lanes of fused x·x + acc, lanes added left to right, tail added last, then sqrt.
 * Bit-identical to PyTorch for rows of whole 8-float vectors (the demos print head_dim 8);
 * with a tail of n % 8 values the last bit differs for a few percent of rows — PyTorch's tail
 * order there is not reproduced yet. */
float al_norm2_f32(const float *x, int64_t n);

#endif
