/* kernels/softmax.h — the attention's row softmax, scaled and causally masked in one call.
 * (The plain row-wise softmax, al_softmax_forward, is public: attnlab/model.h.) Not public API. */
#ifndef ATTNLAB_KERNELS_SOFTMAX_H
#define ATTNLAB_KERNELS_SOFTMAX_H

#include "base/internal.h"

/* row[0..cols) in place: softmax over t < seen of row[t] / scale, and 0 for seen <= t < cols
 * (the masked keys). The same bits as dividing by scale, setting row[t] = −inf for t >= seen
 * and al_softmax_forward on the whole row; NaN everywhere if a scaled score is NaN or +inf,
 * or seen is 0. */
void al_softmax_causal_row(float *row, int64_t cols, int64_t seen, float scale);

#endif
