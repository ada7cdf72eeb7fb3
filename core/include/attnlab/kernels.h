/* attnlab/kernels.h — the kernels layer's public part: the row-wise softmax (the matrix product
 * and the causal softmax row are the layer's own headers, kernels/gemm.h and kernels/softmax.h,
 * for the layers above). Part of attnlab.h. */
#ifndef ATTNLAB_KERNELS_H
#define ATTNLAB_KERNELS_H

#include "attnlab/base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Row-wise softmax in float32; -inf entries get weight exactly 0, a row of all -inf gives NaN
 * as in PyTorch. */
void al_softmax_forward(float *y, const float *x, /* [rows, cols] */ int64_t rows, int64_t cols);

#ifdef __cplusplus
}
#endif
#endif /* ATTNLAB_KERNELS_H */
