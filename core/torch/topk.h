/* torch/topk.h — torch.topk on the CPU in PyTorch 1.13's own order, for the demos: which
 * positions the k largest come out in matters wherever a sum runs over them. Not public API. */
#ifndef ATTNLAB_TORCH_TOPK_H
#define ATTNLAB_TORCH_TOPK_H

#include "base/internal.h"

/* Largest k of x[0..n) (NaN counts as largest), 1 <= k <= n <= 8 (rows as short as the demos'
 * routers: PyTorch's nth_element path, whose depth limit is never reached): their indices into
 * idx [k] and values into val [k] (may be NULL), in the order torch.topk(x, k, sorted=sorted)
 * returns them. */
void al_topk_torch(int64_t *idx, float *val, const float *x, int64_t n, int64_t k, int sorted);

#endif
