/* train/train_ops.h — the forward pieces that keep what their backward needs, and each
 * backward, for one batch of N = batch · seq rows. Not public API. Every backward ADDS into the
 * gradients of its weights and, where it says so, into the gradient of its input. */
#ifndef ATTNLAB_TRAIN_OPS_H
#define ATTNLAB_TRAIN_OPS_H

#include "base/internal.h"

/* y = w ⊙ x · r, r = 1/√(mean(x²) + eps), per row of d; r [rows] kept. */
void al_tr_rmsnorm_forward(float *y, float *r, const float *x, const float *w, int64_t rows, int64_t d, float eps);
/* dx = (r·w⊙dy − x · r³/d · Σ(w⊙dy⊙x)) (written, or added when accumulate), dw += Σ_rows dy⊙x·r. */
void al_tr_rmsnorm_backward(float *dx, float *dw, const float *dy, const float *x, const float *w, const float *r,
                            int64_t rows, int64_t d, int accumulate);

/* RoPE on rows of n_heads heads of head_dim: half-split (i with i + d/2, MiniMind's
 * rotate_half) or interleaved (2i with 2i+1); cos/sin [positions, head_dim] as the model's
 * table (halves equal), position of row i = i % seq. Backward: the inverse rotation. */
void al_tr_rope(float *x, const float *cos_t, const float *sin_t, int64_t rows, int64_t seq, int64_t n_heads,
                int64_t head_dim, int interleaved, int inverse);

/* Causal attention with GQA, per sequence b and query head h (KV head h / (n_heads /
 * n_kv_heads)): att = softmax(q·kᵀ / √head_dim, causal) [batch, n_heads, seq, seq] kept,
 * ctx = att · v. q [N, n_heads·hd], k and v [N, n_kv_heads·hd], ctx [N, n_heads·hd]; kt is
 * scratch of head_dim · seq floats. */
void al_tr_attention_forward(float *ctx, float *att, const float *q, const float *k, const float *v, int64_t batch,
                             int64_t seq, int64_t n_heads, int64_t n_kv_heads, int64_t head_dim, float *kt);
/* dq, dk, dv (written) from dctx; scratch of 2 · seq² + head_dim · seq floats. */
void al_tr_attention_backward(float *dq, float *dk, float *dv, const float *dctx, const float *att, const float *q,
                              const float *k, const float *v, int64_t batch, int64_t seq, int64_t n_heads,
                              int64_t n_kv_heads, int64_t head_dim, float *scratch);

/* SwiGLU's middle: a = silu(g) ⊙ u; backward: dg, du (written) from da. */
void al_tr_swiglu_forward(float *a, const float *g, const float *u, int64_t n);
void al_tr_swiglu_backward(float *dg, float *du, const float *da, const float *g, const float *u, int64_t n);

/* The mean cross-entropy of logits [rows, vocab] against targets [rows] (-1: no target), the
 * logits turned into the gradient of (mean · scale) in place. Returns the mean (0 without
 * targets); *count receives the number of targets; row_loss [rows] (may be NULL) each row's
 * −log p(target), NaN where it has none. */
double al_tr_cross_entropy(float *logits, const int32_t *targets, int64_t rows, int64_t vocab, float scale,
                           int64_t *count, float *row_loss);

#endif
