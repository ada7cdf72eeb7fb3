/* attnlab/kernels.h — the kernels layer's public part: the row-wise softmax (the matrix product
 * and the causal softmax row are the layer's own headers, kernels/gemm.h and kernels/softmax.h,
 * for the layers above). Part of attnlab.h. */
#ifndef ATTNLAB_KERNELS_H
#define ATTNLAB_KERNELS_H

#include "attnlab/base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The element type weights are held in: float32, or 16 bits (IEEE half, bfloat16) widened to
 * float32 wherever they are read. Widening is exact (every half and every bfloat16 is a float),
 * so a model's numbers do not depend on which of these holds the same values. */
typedef enum { AL_WEIGHTS_F32 = 0, AL_WEIGHTS_F16, AL_WEIGHTS_BF16 } al_weight_dtype;

/* Row-wise softmax in float32; -inf entries get weight exactly 0, a row of all -inf gives NaN
 * as in PyTorch. */
void al_softmax_forward(float *y, const float *x, /* [rows, cols] */ int64_t rows, int64_t cols);

#ifdef __cplusplus
}
#endif
#endif /* ATTNLAB_KERNELS_H */
