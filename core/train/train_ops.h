/* train/train_ops.h — the backward of each op of the model's forward (model.c, model/attend.c),
 * from what that forward kept (model/forward.h), for one batch of N = batch · seq rows; and the
 * loss. Not public API. Every backward ADDS into the gradients of its weights and, where it
 * says so, into the gradient of its input. (RoPE's backward is its forward by −θ: trainer.c.) */
#ifndef ATTNLAB_TRAIN_OPS_H
#define ATTNLAB_TRAIN_OPS_H

#include "base/internal.h"
#include "kernels/pool.h"

/* RMSNorm y = w ⊙ x / rms per row of d (rms [rows] as the forward kept it), r = 1/rms:
 * dx = (r·w⊙dy − x · r³/d · Σ(w⊙dy⊙x)) (written, or added when accumulate), dw += Σ_rows dy⊙x·r. */
void al_tr_rmsnorm_backward(float *dx, float *dw, const float *dy, const float *x, const float *w, const float *rms,
                            int64_t rows, int64_t d, int accumulate);

/* Causal attention with GQA, per sequence b and query head h (KV head h / (n_heads /
 * n_kv_heads)), att = softmax(q·kᵀ / √head_dim, causal) [batch, n_heads, seq, seq] as the
 * forward kept it, ctx = att · v: dq, dk, dv (written) from dctx. q [N, n_heads·hd], k and v
 * [N, n_kv_heads·hd]; scratch of 2 · seq² + head_dim · seq floats. Each head's products are
 * split by output columns over pool (NULL: one thread), with the same bits on any number. */
void al_tr_attention_backward(float *dq, float *dk, float *dv, const float *dctx, const float *att, const float *q,
                              const float *k, const float *v, int64_t batch, int64_t seq, int64_t n_heads,
                              int64_t n_kv_heads, int64_t head_dim, float *scratch, al_pool *pool);

/* SwiGLU's middle a = silu(g) ⊙ u: dg, du (written) from da. */
void al_tr_swiglu_backward(float *dg, float *du, const float *da, const float *g, const float *u, int64_t n);

/* The mean cross-entropy of logits [rows, vocab] against targets [rows] (-1: no target), the
 * logits turned into the gradient of (mean · scale) in place. Returns the mean (0 without
 * targets); *count receives the number of targets; row_loss [rows] (may be NULL) each row's
 * −log p(target), NaN where it has none. */
double al_tr_cross_entropy(float *logits, const int32_t *targets, int64_t rows, int64_t vocab, float scale,
                           int64_t *count, float *row_loss);

#endif
