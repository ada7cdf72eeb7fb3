/* model/attend.h — the heart of attention for one head, shared by the single layer
 * (attention.c) and the whole model (model.c): scores against the keys each query may see,
 * scaled, masked, softmaxed, then the weighted sum of the values. Not public API. */
#ifndef ATTNLAB_MODEL_ATTEND_H
#define ATTNLAB_MODEL_ATTEND_H

#include "kernels/gemm.h"

/* Queries processed a block at a time: the scores buffer holds one block's rows. */
#define AL_ATTEND_QUERY_BLOCK 32

/* One head, `seq` new queries at positions past .. past+seq-1 against keys 0 .. past+seq-1:
 * query s sees key t iff t <= past + s (the causal mask on the last `seq` columns).
 *   ctx[s, :] = softmax(q[s] · Kᵀ / scale, masked) · V      (ctx row stride ld_ctx)
 * q rows have stride ld_q; keys is Kᵀ as a GEMM operand (k = head_dim, n = tokens) and values
 * V (k = tokens, n = head_dim). weights, if not NULL, receives each query's softmax row, zero
 * past what it sees: [seq, ld_w] with ld_w >= past + seq. scores is scratch of
 * AL_ATTEND_QUERY_BLOCK · (past + seq) floats. Masked weights are exactly 0, so their terms
 * add nothing: a query's numbers do not depend on how many later keys exist. */
void al_attend_head(float *ctx, int64_t ld_ctx, float *weights, int64_t ld_w, const float *q,
                    int64_t ld_q, al_bmat keys, al_bmat values, int64_t seq, int64_t past,
                    int64_t head_dim, float scale, int fault_mask_leak, float *scores);

#endif
