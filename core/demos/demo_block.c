/* demo_block.c — the tutorial's 05-transformer-block-demo.py, example by example: one pre-norm
 * block and its two residuals, pre-norm against post-norm stacked 6 deep, 3 blocks stacked, the
 * LM head tied to the embedding, logits_to_keep, the shifted cross-entropy with ignore_index,
 * and the whole forward to the loss with the gradient norm of its backward pass.
 *
 * The script's model: SimpleRMSNorm (weight · x / sqrt(mean(x²) + 1e-6)), SimpleAttention (one
 * fused qkv nn.Linear, 4 heads of 4, causal, no RoPE), the SwiGLU FFN, residuals around both.
 * Weights, inputs and token ids are PyTorch's own draws; every printed number is computed here
 * in PyTorch's float32 order: nn.Linear and the small batched products as the reference BLAS
 * (a plain dot product per output), the norms, sums and log-softmax as its CPU kernels, and the
 * backward pass op by op as autograd runs it (each op's derivative formula, the gradients of a
 * tensor added in the order they arrive, the weight gradients reduced as sum_to_size does).
 *
 * Four lines of the script are corrected (tests/fixtures/gen_demo.py makes the same changes to
 * the script it runs): the pre-norm sublayers are attn(norm1(x)) and mlp(norm2(h)), not
 * norm1(attn) and norm2(ffn); training needs every position's logits; and after the shift,
 * position 0 predicts the ignored label 1 while position 1 predicts token 2. */
#include "attnlab/demos.h"
#include "attnlab/model.h"
#include "demos/demo.h"
#include "model/norm.h"
#include "torch/reduce.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { VOCAB = 30, HIDDEN = 16, N_LAYERS = 3, N_HEADS = 4, HEAD_DIM = HIDDEN / N_HEADS, INTER = 32 };
enum { QKV = 3 * HIDDEN, MAX_SEQ = 8, MAX_N = 2 * MAX_SEQ /* tokens in one call */ };
static const float EPS = 1e-6f;
static const int64_t IGNORE = -100; /* cross_entropy's ignore_index */

/* SimpleBlock's (and PostNormBlock's) weights, nn.Linear layout [out, in]. */
typedef struct {
    float norm1[HIDDEN];        /* input_layernorm (PostNormBlock: norm1) */
    float qkv[QKV * HIDDEN];    /* [3·hidden, hidden]: rows q, then k, then v */
    float o[HIDDEN * HIDDEN];   /* o_proj */
    float norm2[HIDDEN];        /* post_attention_layernorm (PostNormBlock: norm2) */
    float gate[INTER * HIDDEN]; /* mlp.gate */
    float up[INTER * HIDDEN];   /* mlp.up */
    float down[HIDDEN * INTER]; /* mlp.down */
} block_w;

/* SimpleForCausalLM's weights; the LM head is the embedding (tied). */
typedef struct {
    float embed[VOCAB * HIDDEN]; /* [vocab, hidden] */
    block_w layer[N_LAYERS];
    float norm[HIDDEN];
} model_w;

/* What a block's forward keeps for its backward, for n = batch · seq <= MAX_N tokens. */
typedef struct {
    float x[MAX_N * HIDDEN], n1[MAX_N * HIDDEN], r1[MAX_N];  /* input, its norm, the rms */
    float qkv[MAX_N * QKV];                                  /* [n, 3·hidden] */
    float att[MAX_N * N_HEADS * MAX_SEQ];                    /* [batch, heads, seq, seq] */
    float ctx[MAX_N * HIDDEN];                               /* heads merged, before o_proj */
    float h[MAX_N * HIDDEN], n2[MAX_N * HIDDEN], r2[MAX_N];  /* after the first residual */
    float g[MAX_N * INTER], u[MAX_N * INTER], m[MAX_N * INTER]; /* gate, up, silu(gate)·up */
} block_acts;

/* Everything the demo works in, allocated once: the causal LM of examples 4 to 7, example 3's
 * SimpleModel, every block's activations (examples 1 to 3 use the first as scratch), and the
 * gradients (laid out as model_w). */
typedef struct {
    model_w lm, stack;
    block_acts acts[N_LAYERS];
    model_w grads;
} demo_mem;

/* SimpleBlock(hidden, n_heads, intermediate) (and PostNormBlock: the same draws, in the same
 * order): qkv, o_proj, gate, up, down; the norms start at 1. */
static void block_init(block_w *b, al_rng *rng) {
    for (int i = 0; i < HIDDEN; i++) b->norm1[i] = b->norm2[i] = 1.0f;
    al_rng_linear_init(rng, b->qkv, QKV, HIDDEN);
    al_rng_linear_init(rng, b->o, HIDDEN, HIDDEN);
    al_rng_linear_init(rng, b->gate, INTER, HIDDEN);
    al_rng_linear_init(rng, b->up, INTER, HIDDEN);
    al_rng_linear_init(rng, b->down, HIDDEN, INTER);
}

/* SimpleForCausalLM(...): nn.Embedding's normal_ init, the blocks, then the lm_head nn.Linear,
 * drawn and then replaced by the embedding (tied). */
static void model_init(model_w *m, al_rng *rng) {
    al_rng_randn(rng, m->embed, VOCAB * HIDDEN);
    for (int l = 0; l < N_LAYERS; l++) block_init(&m->layer[l], rng);
    for (int i = 0; i < HIDDEN; i++) m->norm[i] = 1.0f;
    float lm_head[VOCAB * HIDDEN];
    al_rng_linear_init(rng, lm_head, VOCAB, HIDDEN);
}

/* Σ x over n contiguous values as vec::reduce_all adds them (softmax's and log_softmax's row
 * sums): fewer than 8 one after the other; otherwise 8 lanes over whole vectors, the tail into
 * the first lanes, then the lanes folded by halves ((0+4)+(2+6)) + ((1+5)+(3+7)). */
static float vec_reduce_sum(const float *x, int64_t n) {
    if (n < 8) {
        float s = x[0];
        for (int64_t i = 1; i < n; i++) s += x[i];
        return s;
    }
    float lane[8];
    memcpy(lane, x, sizeof lane);
    int64_t d = 8;
    for (; d + 8 <= n; d += 8)
        for (int l = 0; l < 8; l++) lane[l] += x[d + l];
    for (int l = 0; d + l < n; l++) lane[l] += x[d + l];
    return ((lane[0] + lane[4]) + (lane[2] + lane[6])) + ((lane[1] + lane[5]) + (lane[3] + lane[7]));
}

/* sum_to_size of [rows, cols] to [cols] (a weight's gradient summed over its batch and
 * positions) as PyTorch's outer reduction over 8-column vectors: each column's rows read as
 * (rows/4, 4), the 4 partial sums from 0, the rows left over into the first, then the four
 * added. rows < 64, so its cascade is one level. out is ADDED to. */
static void sum_rows_add(float *out, const float *x, int64_t rows, int64_t cols) {
    for (int64_t c = 0; c < cols; c++) {
        float p[4] = {0.0f, 0.0f, 0.0f, 0.0f};
        int64_t r = 0;
        for (; r + 4 <= rows; r += 4)
            for (int k = 0; k < 4; k++) p[k] += x[(r + k) * cols + c];
        for (; r < rows; r++) p[0] += x[r * cols + c];
        out[c] += ((p[0] + p[1]) + p[2]) + p[3];
    }
}

/* dW [out, in] += dyᵀ · x (the weight's gradient of y = x Wᵀ): each a plain sum over the rows,
 * as the reference BLAS; dx [n, in] = dy · W, or added to dx when accumulate (autograd adds a
 * tensor's gradients in the order they arrive: the caller orders the calls). */
static void linear_backward(float *dx, float *dw, const float *dy, const float *x, const float *w,
                            int64_t n, int64_t in_dim, int64_t out_dim, int accumulate) {
    for (int64_t o = 0; o < out_dim; o++)
        for (int64_t i = 0; i < in_dim; i++) {
            float s = 0.0f;
            for (int64_t r = 0; r < n; r++) s += x[r * in_dim + i] * dy[r * out_dim + o];
            dw[o * in_dim + i] += s;
        }
    if (!dx) return;
    for (int64_t r = 0; r < n; r++)
        for (int64_t i = 0; i < in_dim; i++) {
            float s = 0.0f;
            for (int64_t o = 0; o < out_dim; o++) s += dy[r * out_dim + o] * w[o * in_dim + i];
            dx[r * in_dim + i] = accumulate ? dx[r * in_dim + i] + s : s;
        }
}

/* SimpleRMSNorm's backward, its autograd graph op by op: y = t / r with t = w·x and
 * r = sqrt(mean(x.pow(2)) + eps).
 *   div:  dt = dy / r;   dr = Σ_j −dy_j · ((t_j / r) / r)
 *   sqrt: ds = dr / (2r);   mean: dp = ds / d;   pow: dx_pow = dp · (2x)
 *   mul:  dx_mul = dt · w;   dw += Σ_rows dt · x
 * The two parts of dx reach x's other gradients in the order autograd runs them: pow's (later
 * in the forward) first. dx: dx_pow + dx_mul, or (dx + dx_pow) + dx_mul when accumulate. */
static void rmsnorm_backward(float *dx, float *dw, const float *dy, const float *x, const float *w,
                             const float *r, int64_t n, int accumulate) {
    float dt[MAX_N * HIDDEN], dt_x[MAX_N * HIDDEN];
    for (int64_t row = 0; row < n; row++) {
        const float *xr = x + row * HIDDEN, *dyr = dy + row * HIDDEN;
        float neg[HIDDEN];
        for (int j = 0; j < HIDDEN; j++) {
            const float t = w[j] * xr[j];
            dt[row * HIDDEN + j] = dyr[j] / r[row];
            neg[j] = -dyr[j] * ((t / r[row]) / r[row]);
            dt_x[row * HIDDEN + j] = dt[row * HIDDEN + j] * xr[j];
        }
        const float dr = al_sum_f32(neg, HIDDEN);
        const float dp = dr / (2.0f * r[row]) / (float)HIDDEN;
        for (int j = 0; j < HIDDEN; j++) {
            const float dx_pow = dp * (2.0f * xr[j]);
            const float dx_mul = dt[row * HIDDEN + j] * w[j];
            float *out = dx + row * HIDDEN + j;
            *out = accumulate ? (*out + dx_pow) + dx_mul : dx_pow + dx_mul;
        }
    }
    sum_rows_add(dw, dt_x, n, HIDDEN);
}

/* SimpleAttention: out [batch·seq, hidden] = o_proj(softmax(q kᵀ / √head_dim + mask) v), the
 * qkv rows and the softmax weights kept in A. The products q kᵀ and att · v are PyTorch's
 * small-batch kernel: each output a plain sum over its inner dimension, in order. */
static void attention_forward(const block_w *w, block_acts *A, float *out, const float *x,
                              int64_t batch, int64_t seq) {
    const int64_t n = batch * seq;
    al_demo_linear(A->qkv, x, w->qkv, n, HIDDEN, QKV);
    const float scale = sqrtf((float)HEAD_DIM); /* math.sqrt(4) = 2, exact */
    for (int64_t b = 0; b < batch; b++)
        for (int h = 0; h < N_HEADS; h++) {
            float *att = A->att + (b * N_HEADS + h) * seq * seq;
            for (int64_t i = 0; i < seq; i++)
                for (int64_t j = 0; j < seq; j++) {
                    const float *q = A->qkv + (b * seq + i) * QKV + h * HEAD_DIM;
                    const float *k = A->qkv + (b * seq + j) * QKV + HIDDEN + h * HEAD_DIM;
                    att[i * seq + j] = al_dot_f32(q, k, HEAD_DIM) / scale + (j > i ? -INFINITY : 0.0f);
                }
            al_softmax_forward(att, att, seq, seq);
            for (int64_t i = 0; i < seq; i++)
                for (int d = 0; d < HEAD_DIM; d++) {
                    float s = 0.0f;
                    for (int64_t j = 0; j < seq; j++)
                        s += att[i * seq + j] * A->qkv[(b * seq + j) * QKV + 2 * HIDDEN + h * HEAD_DIM + d];
                    A->ctx[(b * seq + i) * HIDDEN + h * HEAD_DIM + d] = s;
                }
        }
    al_demo_linear(out, A->ctx, w->o, n, HIDDEN, HIDDEN);
}

/* SwiGLUFFN: out = down(silu(gate(x)) · up(x)), gate, up and their product kept in A. */
static void ffn_forward(const block_w *w, block_acts *A, float *out, const float *x, int64_t n) {
    al_demo_linear(A->g, x, w->gate, n, HIDDEN, INTER);
    al_demo_linear(A->u, x, w->up, n, HIDDEN, INTER);
    for (int64_t i = 0; i < n * INTER; i++) A->m[i] = al_demo_silu(A->g[i]) * A->u[i];
    al_demo_linear(out, A->m, w->down, n, INTER, HIDDEN);
}

/* SimpleBlock.forward (pre-norm): h = x + attn(norm1(x)); out = h + mlp(norm2(h)).
 * PostNormBlock.forward (post_norm): h = norm1(x + attn(x)); out = norm2(h + mlp(h)).
 * out may be x. a keeps what the backward reads. */
static void block_forward(const block_w *w, block_acts *a, float *out, const float *x,
                          int64_t batch, int64_t seq, int post_norm) {
    const int64_t n = batch * seq;
    float sub[MAX_N * HIDDEN];
    memcpy(a->x, x, (size_t)(n * HIDDEN) * sizeof(float));
    if (post_norm) {
        attention_forward(w, a, sub, a->x, batch, seq);
        for (int64_t i = 0; i < n * HIDDEN; i++) a->h[i] = a->x[i] + sub[i];
        al_rmsnorm_keep_forward(a->h, NULL, a->h, w->norm1, n, HIDDEN, EPS);
        ffn_forward(w, a, sub, a->h, n);
        for (int64_t i = 0; i < n * HIDDEN; i++) out[i] = a->h[i] + sub[i];
        al_rmsnorm_keep_forward(out, NULL, out, w->norm2, n, HIDDEN, EPS);
        return;
    }
    al_rmsnorm_keep_forward(a->n1, a->r1, a->x, w->norm1, n, HIDDEN, EPS);
    attention_forward(w, a, sub, a->n1, batch, seq);
    for (int64_t i = 0; i < n * HIDDEN; i++) a->h[i] = a->x[i] + sub[i];
    al_rmsnorm_keep_forward(a->n2, a->r2, a->h, w->norm2, n, HIDDEN, EPS);
    ffn_forward(w, a, sub, a->n2, n);
    for (int64_t i = 0; i < n * HIDDEN; i++) out[i] = a->h[i] + sub[i];
}

/* The backward of a pre-norm block: dx [n, hidden] from dout, the weights' gradients added
 * into gw. Reverse order of the forward; x's three gradients arrive as the residual's, then
 * norm1's pow and mul parts (h's likewise). */
static void block_backward(const block_w *w, block_w *gw, const block_acts *A, float *dx,
                           const float *dout, int64_t batch, int64_t seq) {
    const int64_t n = batch * seq;
    /* 1. out = h + down(m): dm = dout · W_down; m = silu(g) · u */
    float dm[MAX_N * INTER], dg[MAX_N * INTER], du[MAX_N * INTER];
    linear_backward(dm, gw->down, dout, A->m, w->down, n, INTER, HIDDEN, 0);
    for (int64_t i = 0; i < n * INTER; i++) {
        const float x = A->g[i], sig = 1.0f / (1.0f + expf(-x));
        du[i] = dm[i] * al_demo_silu(x);
        const float ds = dm[i] * A->u[i];                 /* mul: d silu(g) = dm · u */
        dg[i] = ds * sig * (1.0f + x * (1.0f - sig));    /* silu' = σ(x)(1 + x(1 − σ(x))) */
    }
    /* 2. n2's gradient from up (created later, so first), then gate */
    float dn2[MAX_N * HIDDEN], dh[MAX_N * HIDDEN];
    linear_backward(dn2, gw->up, du, A->n2, w->up, n, HIDDEN, INTER, 0);
    linear_backward(dn2, gw->gate, dg, A->n2, w->gate, n, HIDDEN, INTER, 1);
    /* 3. h: the residual's gradient, then norm2's */
    memcpy(dh, dout, (size_t)(n * HIDDEN) * sizeof(float));
    rmsnorm_backward(dh, gw->norm2, dn2, A->h, w->norm2, A->r2, n, 1);
    /* 4. h = x + o_proj(ctx) */
    float dctx[MAX_N * HIDDEN], dqkv[MAX_N * QKV];
    linear_backward(dctx, gw->o, dh, A->ctx, w->o, n, HIDDEN, HIDDEN, 0);
    /* 5. per sequence and head: datt = dctx · vᵀ, dv = attᵀ · dctx; softmax's backward
     *    dscore = (datt − Σ datt·att) · att; the scale; dq = dscore · k, dk = dscoreᵀ · q. */
    const float scale = sqrtf((float)HEAD_DIM);
    for (int64_t b = 0; b < batch; b++)
        for (int h = 0; h < N_HEADS; h++) {
            const float *att = A->att + (b * N_HEADS + h) * seq * seq;
            const int64_t q_at = h * HEAD_DIM, k_at = HIDDEN + h * HEAD_DIM, v_at = 2 * HIDDEN + h * HEAD_DIM;
            const float *rows = A->qkv + b * seq * QKV, *dc = dctx + b * seq * HIDDEN + h * HEAD_DIM;
            float *drows = dqkv + b * seq * QKV;
            float ds[MAX_SEQ * MAX_SEQ];
            for (int64_t i = 0; i < seq; i++) {
                float prod[MAX_SEQ];
                for (int64_t j = 0; j < seq; j++) {
                    ds[i * seq + j] = al_dot_f32(dc + i * HIDDEN, rows + j * QKV + v_at, HEAD_DIM);
                    prod[j] = ds[i * seq + j] * att[i * seq + j];
                }
                const float dot = vec_reduce_sum(prod, seq);
                for (int64_t j = 0; j < seq; j++) ds[i * seq + j] = (ds[i * seq + j] - dot) * att[i * seq + j] / scale;
            }
            for (int64_t j = 0; j < seq; j++)
                for (int d = 0; d < HEAD_DIM; d++) {
                    float sv = 0.0f, sq = 0.0f, sk = 0.0f;
                    for (int64_t i = 0; i < seq; i++) sv += att[i * seq + j] * dc[i * HIDDEN + d];
                    for (int64_t t = 0; t < seq; t++) sq += ds[j * seq + t] * rows[t * QKV + k_at + d];
                    for (int64_t i = 0; i < seq; i++) sk += ds[i * seq + j] * rows[i * QKV + q_at + d];
                    drows[j * QKV + v_at + d] = sv;
                    drows[j * QKV + q_at + d] = sq;
                    drows[j * QKV + k_at + d] = sk;
                }
        }
    /* 6. qkv = n1 Wᵀ, then x: the residual's gradient, then norm1's */
    float dn1[MAX_N * HIDDEN];
    linear_backward(dn1, gw->qkv, dqkv, A->n1, w->qkv, n, HIDDEN, QKV, 0);
    memcpy(dx, dh, (size_t)(n * HIDDEN) * sizeof(float));
    rmsnorm_backward(dx, gw->norm1, dn1, A->x, w->norm1, A->r1, n, 1);
}

/* F.cross_entropy(logits [rows, vocab], targets, ignore_index=-100), mean over the targets:
 * log_softmax per row (x − max − log Σ exp(x − max)), then nll_loss's cascade sum of −logp at
 * the targets (a row at index 0 carried to the top level first), divided by their count.
 * dlogits (may be NULL) receives the gradient of the loss; nll [rows] (may be NULL) each row's
 * −logp at its target (0 for an ignored one). */
static float cross_entropy(const float *logits, const int64_t *targets, int64_t rows, float *dlogits,
                           float *nll) {
    float logp[MAX_N * VOCAB], partial[8] = {0};
    int64_t count = 0;
    for (int64_t r = 0; r < rows; r++) {
        const float *z = logits + r * VOCAB;
        float max = z[0], e[VOCAB];
        for (int j = 1; j < VOCAB; j++) max = z[j] > max ? z[j] : max;
        for (int j = 0; j < VOCAB; j++) e[j] = expf(z[j] - max);
        const float log_sum = logf(vec_reduce_sum(e, VOCAB));
        for (int j = 0; j < VOCAB; j++) logp[r * VOCAB + j] = z[j] - max - log_sum;
        if (nll) nll[r] = targets[r] == IGNORE ? 0.0f : -logp[r * VOCAB + targets[r]];
        if (targets[r] == IGNORE) continue;
        count++;
        partial[0] -= logp[r * VOCAB + targets[r]];
        if (r == 0) /* (0 & mask) == 0 at every level: carried up the whole cascade */
            for (int lvl = 0; lvl + 1 < 8; lvl++) partial[lvl + 1] += partial[lvl], partial[lvl] = 0.0f;
    }
    float total = 0.0f;
    for (int lvl = 0; lvl < 8; lvl++) total += partial[lvl];
    const float loss = total / (float)count;
    if (dlogits) {
        /* nll: −1/count at each target; log_softmax: dz = g − exp(logp) · Σ g */
        const float g = -(1.0f / (float)count);
        for (int64_t r = 0; r < rows; r++)
            for (int j = 0; j < VOCAB; j++) {
                const int hit = targets[r] != IGNORE && targets[r] == j;
                const float sum = targets[r] == IGNORE ? 0.0f : g;
                dlogits[r * VOCAB + j] = (hit ? g : 0.0f) - expf(logp[r * VOCAB + j]) * sum;
            }
    }
    return loss;
}

/* F.cross_entropy(logits[..., :-1, :], labels[..., 1:], ignore_index=-100) for logits
 * [batch, seq, vocab]; dlogits [batch, seq, vocab] (may be NULL) its gradient, 0 at the last
 * position of each sequence; nll [batch, seq] (may be NULL) each position's −logp of the label
 * it predicts (cross_entropy's), 0 where it is ignored and at the last position. */
static float shifted_loss(const float *logits, const int64_t *labels, int64_t batch, int64_t seq,
                          float *dlogits, float *nll) {
    float shifted[MAX_N * VOCAB], dshifted[MAX_N * VOCAB], row_nll[MAX_N];
    int64_t targets[MAX_N];
    for (int64_t b = 0; b < batch; b++)
        for (int64_t t = 0; t + 1 < seq; t++) {
            memcpy(shifted + (b * (seq - 1) + t) * VOCAB, logits + (b * seq + t) * VOCAB, VOCAB * sizeof(float));
            targets[b * (seq - 1) + t] = labels[b * seq + t + 1];
        }
    const float loss = cross_entropy(shifted, targets, batch * (seq - 1), dlogits ? dshifted : NULL,
                                     nll ? row_nll : NULL);
    if (nll)
        for (int64_t b = 0; b < batch; b++)
            for (int64_t t = 0; t < seq; t++) nll[b * seq + t] = t + 1 < seq ? row_nll[b * (seq - 1) + t] : 0.0f;
    if (dlogits) {
        memset(dlogits, 0, (size_t)(batch * seq * VOCAB) * sizeof(float));
        for (int64_t b = 0; b < batch; b++)
            memcpy(dlogits + b * seq * VOCAB, dshifted + b * (seq - 1) * VOCAB, (size_t)((seq - 1) * VOCAB) * sizeof(float));
    }
    return loss;
}

/* The whole model over ids [batch, seq]: hidden [n, hidden] after the final norm, every block's
 * activations into acts [n_layers], and (each may be NULL) the final norm's input x_f and rms r_f. */
static void model_forward(const model_w *m, block_acts *acts, float *x_f, float *r_f, float *hidden,
                          const int64_t *ids, int64_t batch, int64_t seq) {
    const int64_t n = batch * seq;
    float x[MAX_N * HIDDEN], rms[MAX_N];
    al_embedding_forward(x, ids, m->embed, n, VOCAB, HIDDEN);
    for (int l = 0; l < N_LAYERS; l++) block_forward(&m->layer[l], &acts[l], x, x, batch, seq, 0);
    if (x_f) memcpy(x_f, x, (size_t)(n * HIDDEN) * sizeof(float));
    al_rmsnorm_keep_forward(hidden, rms, x, m->norm, n, HIDDEN, EPS);
    if (r_f) memcpy(r_f, rms, (size_t)n * sizeof(float));
}

/* SimpleForCausalLM.forward: logits [batch, keep or seq, vocab] (keep 0: every position) and,
 * with labels (may be NULL), the shifted cross-entropy, returned. */
static float lm_forward(const model_w *m, block_acts *acts, float *logits, const int64_t *ids,
                        const int64_t *labels, int64_t batch, int64_t seq, int64_t keep) {
    float hidden[MAX_N * HIDDEN];
    model_forward(m, acts, NULL, NULL, hidden, ids, batch, seq);
    const int64_t rows = keep > 0 ? keep : seq;
    for (int64_t b = 0; b < batch; b++)
        al_demo_linear(logits + b * rows * VOCAB, hidden + (b * seq + seq - rows) * HIDDEN, m->embed, rows,
                       HIDDEN, VOCAB);
    if (!labels) return 0.0f;
    return shifted_loss(logits, labels, batch, seq, NULL, NULL);
}

/* Example 1: one pre-norm block on [2, 5, 16], and its steps one by one. */
static void example_block(al_demo_out *d, al_lang lang, al_rng *rng, block_acts *scratch) {
    enum { B = 2, S = 5, N = B * S };
    al_text *o = &d->text;
    al_demo_header(d, AL_DEMO_PANEL_BLOCK, L("示例 1：单个 Transformer Block 前向（Pre-Norm + 双残差）",
                                             "Example 1: One Transformer block forward (pre-norm + two residuals)"));
    block_w block;
    block_init(&block, rng);
    float x[N * HIDDEN], out[N * HIDDEN], h6[N * HIDDEN];
    al_rng_randn(rng, x, N * HIDDEN);
    block_forward(&block, scratch, out, x, B, S, 0);
    block_forward(&block, scratch, h6, x, B, S, 0); /* the steps again, as the script redoes them */

    const int64_t shape[3] = {B, S, HIDDEN};
    char comment[96];
    al_text_printf(o, "\n");
    al_snprintf(comment, sizeof comment, "  # [batch=%d, seq=%d, hidden=%d]", B, S, HIDDEN);
    al_demo_shape(o, L("输入 x shape: ", "Input x shape: "), shape, 3, comment);
    al_demo_shape(o, L("Block 输出 shape: ", "Block output shape: "), shape, 3,
                  L("  # 与输入相同（残差保持维度）", "  # same as the input (the residuals keep the width)"));
    al_text_printf(o, "\n%s\n", L("前向拆解：", "The forward pass step by step:"));
    /* The script labels these norm1(attn) and norm2(ffn): in a pre-norm block the norm comes
     * first, inside the sublayer. */
    al_demo_shape(o, L("  attn(norm1(x)) 输出 shape: ", "  attn(norm1(x)) output shape: "), shape, 3, "");
    al_demo_shape(o, L("  + 残差 后 shape: ", "  after + residual, shape: "), shape, 3, "");
    al_demo_shape(o, L("  mlp(norm2(h)) 输出 shape: ", "  mlp(norm2(h)) output shape: "), shape, 3, "");
    al_demo_shape(o, L("  + 残差 后 shape: ", "  after + residual, shape: "), shape, 3, "");
    al_text_printf(o, L("\n验证：拆解结果与直接前向一致？%s\n", "\nCheck: do the steps give the direct forward's result? %s\n"),
                   al_demo_bool(al_demo_allclose(out, h6, N * HIDDEN, 1e-6f)));
    al_text_printf(o, "  %s\n\n", L("→ Pre-Norm：子层输入先归一化，残差路径不经过 norm，梯度可直接回流",
                                    "→ Pre-norm: each sublayer's input is normalised first; the residual path skips the norm, so gradients flow straight back"));
}

/* Example 2: a pre-norm and a post-norm block, each applied 6 times. */
static void example_pre_post(al_demo_out *d, al_lang lang, al_rng *rng, block_acts *scratch) {
    enum { B = 2, S = 5, N = B * S, DEPTH = 6 };
    al_text *o = &d->text;
    al_demo_header(d, AL_DEMO_PANEL_BLOCK, L("示例 2：Pre-Norm vs Post-Norm 对比", "Example 2: Pre-norm against post-norm"));
    block_w pre, post;
    block_init(&pre, rng);
    block_init(&post, rng);
    float x[N * HIDDEN], pre_out[N * HIDDEN], post_out[N * HIDDEN];
    al_rng_randn(rng, x, N * HIDDEN);
    memcpy(pre_out, x, sizeof x);
    memcpy(post_out, x, sizeof x);
    _Static_assert((int)DEPTH == (int)AL_DEMO_BLOCK_DEPTH, "the stream chart's depth is this example's");
    for (int i = 0; i <= DEPTH; i++) {
        if (i > 0) {
            block_forward(&pre, scratch, pre_out, pre_out, B, S, 0);
            block_forward(&post, scratch, post_out, post_out, B, S, 1);
        }
        if (d->fig) { /* the norm of the stream after i blocks, for the chart */
            d->fig->pre_norm[i] = al_norm2_f32(pre_out, N * HIDDEN);
            d->fig->post_norm[i] = al_norm2_f32(post_out, N * HIDDEN);
        }
    }
    al_text_printf(o, L("\n输入 x 范数: %.4f\n", "\nNorm of the input x: %.4f\n"), (double)al_norm2_f32(x, N * HIDDEN));
    al_text_printf(o, L("Pre-Norm 堆叠 %d 层后输出范数: %.4f\n", "Output norm after %d pre-norm blocks: %.4f\n"),
                   DEPTH, (double)al_norm2_f32(pre_out, N * HIDDEN));
    al_text_printf(o, L("Post-Norm 堆叠 %d 层后输出范数: %.4f\n", "Output norm after %d post-norm blocks: %.4f\n"),
                   DEPTH, (double)al_norm2_f32(post_out, N * HIDDEN));
    al_text_printf(o, "\n%s\n", L("观察：Post-Norm 每层都归一化残差和，深层更易「压平」输出；",
                                  "Observe: post-norm normalises the residual sum in every block, so deep stacks tend to flatten the output;"));
    al_text_printf(o, "  %s\n\n", L("Pre-Norm 残差路径不归一化，深层梯度更通畅，因此大模型普遍用 Pre-Norm",
                                    "pre-norm leaves the residual path unnormalised, so gradients pass more freely through depth, which is why large models use pre-norm"));
}

/* Example 3: SimpleModel, its 3 blocks traced one by one. */
static void example_stack(al_demo_out *d, al_lang lang, al_rng *rng, model_w *m, block_acts *scratch) {
    enum { B = 2, S = 6, N = B * S };
    al_text *o = &d->text;
    al_demo_header(d, AL_DEMO_PANEL_BLOCK, L("示例 3：多层 Block 堆叠（MiniMindModel）",
                                             "Example 3: Stacking blocks (MiniMindModel)"));
    /* SimpleModel(...): SimpleForCausalLM's draws without the head's */
    al_rng_randn(rng, m->embed, VOCAB * HIDDEN);
    for (int l = 0; l < N_LAYERS; l++) block_init(&m->layer[l], rng);
    for (int i = 0; i < HIDDEN; i++) m->norm[i] = 1.0f;
    int64_t ids[N];
    al_rng_randint(rng, ids, N, 0, VOCAB);

    const int64_t ids_shape[2] = {B, S}, shape[3] = {B, S, HIDDEN};
    al_text_printf(o, "\n");
    al_demo_shape(o, L("输入 input_ids shape: ", "Input input_ids shape: "), ids_shape, 2, "  # [batch=2, seq=6]");
    al_text_printf(o, L("配置：vocab=%d, hidden=%d, n_layers=%d, n_heads=%d\n",
                        "Configuration: vocab=%d, hidden=%d, n_layers=%d, n_heads=%d\n"),
                   VOCAB, HIDDEN, N_LAYERS, N_HEADS);
    float h[N * HIDDEN], h_final[N * HIDDEN];
    al_embedding_forward(h, ids, m->embed, N, VOCAB, HIDDEN);
    al_text_printf(o, "\n%s\n", L("逐层追踪 hidden_states shape：", "hidden_states shape, block by block:"));
    al_demo_shape(o, L("  embed 后: ", "  after embed: "), shape, 3, "");
    for (int l = 0; l < N_LAYERS; l++) {
        block_forward(&m->layer[l], scratch, h, h, B, S, 0);
        char label[64], norm[64];
        al_snprintf(label, sizeof label, L("  block %d 后: ", "  after block %d: "), l);
        al_snprintf(norm, sizeof norm, L("  范数=%.4f", "  norm=%.4f"), (double)al_norm2_f32(h, N * HIDDEN));
        al_demo_shape(o, label, shape, 3, norm);
    }
    al_rmsnorm_forward(h_final, h, m->norm, N, HIDDEN, EPS);
    al_demo_shape(o, L("  final norm 后: ", "  after the final norm: "), shape, 3, "");
    al_demo_shape(o, L("\n模型输出 hidden_states shape: ", "\nModel output hidden_states shape: "), shape, 3,
                  "  # [batch, seq, hidden]");
    al_text_printf(o, "  %s\n\n", L("→ 各层 shape 不变，只有范数/分布随深度变化",
                                    "→ the shape stays the same through every block; only the norm and distribution change with depth"));
}

/* Example 4: the LM head tied to the embedding; then the model made again from the seed. */
static void example_tied(al_demo_out *d, al_lang lang, al_rng *rng, int64_t seed, model_w *lm) {
    enum { B = 2, S = 6, N = B * S };
    al_text *o = &d->text;
    al_demo_header(d, AL_DEMO_PANEL_BLOCK, L("示例 4：LM Head 与权重绑定", "Example 4: The LM head and weight tying"));
    model_init(lm, rng);
    float hidden[N * HIDDEN], logits[N * VOCAB];
    al_rng_randn(rng, hidden, N * HIDDEN);
    al_demo_linear(logits, hidden, lm->embed, N, HIDDEN, VOCAB);
    const int64_t h_shape[3] = {B, S, HIDDEN}, l_shape[3] = {B, S, VOCAB}, w_shape[2] = {VOCAB, HIDDEN};
    char comment[96];
    al_text_printf(o, "\n");
    al_snprintf(comment, sizeof comment, "  # [batch, seq, hidden=%d]", HIDDEN);
    al_demo_shape(o, "hidden_states shape: ", h_shape, 3, comment);
    al_snprintf(comment, sizeof comment, "  # [batch, seq, vocab=%d]", VOCAB);
    al_demo_shape(o, L("lm_head 输出 logits shape: ", "lm_head output logits shape: "), l_shape, 3, comment);
    al_text_printf(o, "\n%s\n", L("权重绑定验证：", "Checking the tied weights:"));
    al_demo_shape(o, "  embed_tokens.weight shape: ", w_shape, 2, "");
    al_demo_shape(o, "  lm_head.weight shape: ", w_shape, 2, "");
    /* lm_head.weight is lm->embed itself: one pointer, so one memory object */
    const float *head = lm->embed;
    al_text_printf(o, L("  两者是同一内存对象？%s\n", "  Are they the same object in memory? %s\n"),
                   al_demo_bool(head == lm->embed));
    memset(lm->embed, 0, sizeof lm->embed); /* embed_tokens.weight.data.zero_() */
    float abs_sum = 0.0f;
    for (int i = 0; i < VOCAB * HIDDEN; i++) abs_sum += fabsf(head[i]);
    al_text_printf(o, L("  修改 embed 是否影响 lm_head？ %s（lm_head 也变 0）\n",
                        "  Does changing embed change lm_head? %s (lm_head is 0 too)\n"), al_demo_bool(abs_sum == 0.0f));
    al_rng_seed(rng, seed >= 0 ? (uint64_t)seed : 42); /* the script's torch.manual_seed(42) */
    model_init(lm, rng);
    al_text_printf(o, L("\n  → 权重绑定节省 %d 个参数（embed 与 lm_head 共享）\n\n",
                        "\n  → tying the weights saves %d parameters (embed and lm_head share them)\n\n"),
                   VOCAB * HIDDEN);
}

/* Example 5: logits for the last 3 positions only, against the full logits. */
static void example_keep(al_demo_out *d, al_lang lang, al_rng *rng, const model_w *lm, block_acts *acts) {
    enum { B = 2, S = 8, KEEP = 3 };
    al_text *o = &d->text;
    al_demo_header(d, AL_DEMO_PANEL_BLOCK, L("示例 5：logits_to_keep 机制", "Example 5: logits_to_keep"));
    int64_t ids[B * S];
    al_rng_randint(rng, ids, B * S, 0, VOCAB);
    float full[B * S * VOCAB], kept[B * KEEP * VOCAB], tail[B * KEEP * VOCAB];
    lm_forward(lm, acts, full, ids, NULL, B, S, 0);
    lm_forward(lm, acts, kept, ids, NULL, B, S, KEEP);
    for (int b = 0; b < B; b++)
        memcpy(tail + b * KEEP * VOCAB, full + (b * S + S - KEEP) * VOCAB, KEEP * VOCAB * sizeof(float));
    const int64_t ids_shape[2] = {B, S}, full_shape[3] = {B, S, VOCAB}, kept_shape[3] = {B, KEEP, VOCAB};
    char label[96];
    al_text_printf(o, "\n");
    al_demo_shape(o, "input_ids shape: ", ids_shape, 2, "  # [batch, seq=8]");
    al_demo_shape(o, L("完整 logits shape: ", "Full logits shape: "), full_shape, 3, "  # [batch, 8, vocab]");
    al_snprintf(label, sizeof label, L("logits_to_keep=%d 时 logits shape: ", "logits shape with logits_to_keep=%d: "), KEEP);
    al_demo_shape(o, label, kept_shape, 3, "  # [batch, 3, vocab]");
    al_text_printf(o, L("\n验证：保留的 logits 与完整 logits 末尾 %d 位一致？%s\n",
                        "\nCheck: do the kept logits equal the last %d positions of the full logits? %s\n"),
                   KEEP, al_demo_bool(al_demo_allclose(kept, tail, B * KEEP * VOCAB, 1e-6f)));
    /* The script says training needs only the last logits too; training's loss reads every
     * position's logits. */
    al_text_printf(o, "  %s\n\n", L("→ 推理（生成）时只需最后几位 logits，省显存与计算（lm_head 只算尾部）；训练的 loss 要每个位置的 logits",
                                    "→ inference (generation) needs only the last logits, saving memory and work (lm_head runs on the tail only); training's loss needs every position's logits"));
}

/* Prints ids [rows, cols] as Python's list of lists. */
static void print_id_rows(al_text *o, const int64_t *ids, int64_t rows, int64_t cols) {
    al_text_printf(o, "[");
    for (int64_t r = 0; r < rows; r++) {
        al_text_printf(o, "%s[", r ? ", " : "");
        for (int64_t c = 0; c < cols; c++) al_text_printf(o, "%s%lld", c ? ", " : "", (long long)ids[r * cols + c]);
        al_text_printf(o, "]");
    }
    al_text_printf(o, "]");
}

/* Example 6: the shifted cross-entropy, the prompt's labels -100. */
static void example_loss(al_demo_out *d, al_lang lang, al_rng *rng, const model_w *lm, block_acts *acts) {
    enum { S = 5 };
    al_text *o = &d->text;
    al_demo_header(d, AL_DEMO_PANEL_BLOCK, L("示例 6：交叉熵损失与标签错位对齐（ignore_index=-100）",
                                             "Example 6: Cross-entropy and the shifted labels (ignore_index=-100)"));
    int64_t ids[S], labels[S];
    al_rng_randint(rng, ids, S, 0, VOCAB);
    for (int t = 0; t < S; t++) labels[t] = t < 2 ? IGNORE : ids[t];
    al_text_printf(o, "\ninput_ids: ");
    print_id_rows(o, ids, 1, S);
    al_text_printf(o, "\nlabels:    ");
    print_id_rows(o, labels, 1, S);
    al_text_printf(o, "%s\n", L("  （前 2 位 -100 表示 prompt 不计算 loss）", "  (the first 2, -100, are the prompt: no loss there)"));
    float logits[S * VOCAB];
    const float loss = lm_forward(lm, acts, logits, ids, labels, 1, S, 0);
    const int64_t logits_shape[3] = {1, S, VOCAB}, sl_shape[3] = {1, S - 1, VOCAB}, lab_shape[2] = {1, S - 1};
    al_text_printf(o, "\n");
    al_demo_shape(o, "logits shape: ", logits_shape, 3, "  # [batch, seq=5, vocab]");
    al_text_printf(o, "loss: %.4f\n", (double)loss);
    al_text_printf(o, "\n%s\n", L("错位对齐：", "The shift:"));
    al_demo_shape(o, "  shift_logits shape: ", sl_shape, 3, L("  # 用位置 0~3 预测", "  # positions 0 to 3 predict"));
    al_demo_shape(o, "  shift_labels shape: ", lab_shape, 2, L("  # 目标是位置 1~4", "  # the targets are positions 1 to 4"));
    /* The script pairs position 1 with the ignored label; after the shift it is position 0
     * that meets label 1 (-100), and position 1 predicts token 2. */
    al_text_printf(o, "  %s\n", L("对应关系：位置 0→预测 token1(prompt,-100,忽略), 位置 1→预测 token2, 位置 2→预测 token3, 位置 3→预测 token4",
                                  "Pairs: position 0→predicts token1 (prompt, -100, ignored), position 1→predicts token2, position 2→predicts token3, position 3→predicts token4"));
    float nll[S];
    const float manual = shifted_loss(logits, labels, 1, S, NULL, nll); /* F.cross_entropy by hand */
    if (d->fig) {
        _Static_assert((int)S == (int)AL_DEMO_LOSS_SEQ, "the loss chart's positions are this example's");
        memcpy(d->fig->ids, ids, sizeof ids);
        memcpy(d->fig->labels, labels, sizeof labels);
        memcpy(d->fig->nll, nll, sizeof nll);
        d->fig->loss = loss;
    }
    al_text_printf(o, L("\n手动计算 loss: %.4f\n", "\nLoss computed by hand: %.4f\n"), (double)manual);
    al_text_printf(o, L("模型返回 loss: %.4f\n", "Loss the model returns: %.4f\n"), (double)loss);
    al_text_printf(o, L("验证一致？%s\n", "Check: do they agree? %s\n"), al_demo_bool(al_demo_allclose(&manual, &loss, 1, 1e-8f)));
    al_text_printf(o, "  %s\n\n", L("→ -100 的位置被 cross_entropy 忽略，只对答案 token 计算 loss",
                                    "→ cross_entropy skips the -100 positions: the loss counts the answer tokens only"));
}

/* Example 7: the whole forward to the loss, and the backward pass's gradient norm. */
static void example_full(al_demo_out *d, al_lang lang, al_rng *rng, const model_w *lm, block_acts *acts,
                         model_w *grads) {
    enum { B = 2, S = 8, N = B * S };
    al_text *o = &d->text;
    al_demo_header(d, AL_DEMO_PANEL_BLOCK, L("示例 7：完整前向（input_ids → hidden → logits → loss）",
                                             "Example 7: The whole forward pass (input_ids → hidden → logits → loss)"));
    int64_t ids[N], labels[N];
    al_rng_randint(rng, ids, N, 0, VOCAB);
    for (int i = 0; i < N; i++) labels[i] = i % S < 2 ? IGNORE : ids[i]; /* labels[:, :2] = -100 */
    const int64_t ids_shape[2] = {B, S}, h_shape[3] = {B, S, HIDDEN}, l_shape[3] = {B, S, VOCAB};
    const int64_t sl_shape[3] = {B, S - 1, VOCAB}, lab_shape[2] = {B, S - 1};
    char comment[96];
    al_text_printf(o, "\n");
    al_snprintf(comment, sizeof comment, "  # [batch=%d, seq=%d]", B, S);
    al_demo_shape(o, L("输入 input_ids shape: ", "Input input_ids shape: "), ids_shape, 2, comment);
    al_demo_shape(o, "labels shape: ", ids_shape, 2, L("  （前 2 位 -100）", "  (the first 2 are -100)"));

    memset(grads, 0, sizeof *grads);
    float x_f[N * HIDDEN], r_f[N], hidden[N * HIDDEN], logits[N * VOCAB];
    model_forward(lm, acts, x_f, r_f, hidden, ids, B, S);
    al_demo_linear(logits, hidden, lm->embed, N, HIDDEN, VOCAB);
    al_text_printf(o, "\n%s\n", L("数据流：", "The data flow:"));
    al_text_printf(o, "  1. embed_tokens: ");
    al_text_size(o, ids_shape, 2);
    al_demo_shape(o, " → ", h_shape, 3, "");
    al_text_printf(o, L("  2. %d 层 Block: → ", "  2. %d blocks: → "), N_LAYERS);
    al_demo_shape(o, "", h_shape, 3, "");
    al_demo_shape(o, "  3. final norm: → ", h_shape, 3, "");
    al_snprintf(comment, sizeof comment, "  # [batch, seq, vocab=%d]", VOCAB);
    al_demo_shape(o, "  4. lm_head: → ", l_shape, 3, comment);
    float dlogits[N * VOCAB];
    const float loss = shifted_loss(logits, labels, B, S, dlogits, NULL);
    al_text_printf(o, L("  5. 错位 + 交叉熵: logits ", "  5. shift + cross-entropy: logits "));
    al_text_size(o, sl_shape, 3);
    al_text_printf(o, " vs labels ");
    al_text_size(o, lab_shape, 2);
    al_text_printf(o, "\n     → loss = %.4f\n", (double)loss);

    /* loss.backward(): the head (tied: its gradient goes to the embedding), the final norm, the
     * blocks in reverse, the embedding's lookup. */
    float dx[N * HIDDEN], dh[N * HIDDEN];
    linear_backward(dh, grads->embed, dlogits, hidden, lm->embed, N, HIDDEN, VOCAB, 0);
    rmsnorm_backward(dx, grads->norm, dh, x_f, lm->norm, r_f, N, 0);
    for (int l = N_LAYERS - 1; l >= 0; l--) {
        block_backward(&lm->layer[l], &grads->layer[l], &acts[l], dh, dx, B, S);
        memcpy(dx, dh, sizeof dx);
    }
    /* embedding_dense_backward: grad_weight[id] += dx[i] for each token in order, from zeros,
     * then added to the head's gradient already in the leaf */
    float dembed[VOCAB * HIDDEN] = {0};
    for (int i = 0; i < N; i++)
        for (int j = 0; j < HIDDEN; j++) dembed[ids[i] * HIDDEN + j] += dx[i * HIDDEN + j];
    for (int i = 0; i < VOCAB * HIDDEN; i++) grads->embed[i] += dembed[i];

    /* sum(p.grad.norm().item() ** 2 for p in lm.parameters()) ** 0.5, in lm.parameters()'s
     * order: the embedding, each block's weights, the final norm. */
    double sum = 0.0;
    const double n_embed = al_norm2_f32(grads->embed, VOCAB * HIDDEN);
    sum += n_embed * n_embed;
    for (int l = 0; l < N_LAYERS; l++) {
        const block_w *g = &grads->layer[l];
        const float *params[7] = {g->norm1, g->qkv, g->o, g->norm2, g->gate, g->up, g->down};
        const int64_t sizes[7] = {HIDDEN, QKV * HIDDEN, HIDDEN * HIDDEN, HIDDEN, INTER * HIDDEN, INTER * HIDDEN, HIDDEN * INTER};
        for (int p = 0; p < 7; p++) {
            const double norm = al_norm2_f32(params[p], sizes[p]);
            sum += norm * norm;
        }
    }
    const double n_final = al_norm2_f32(grads->norm, HIDDEN);
    sum += n_final * n_final;
    al_text_printf(o, L("\n反向传播后参数梯度总范数: %.4f  （验证梯度可正常回流）\n",
                        "\nTotal gradient norm of the parameters after backpropagation: %.4f  (the gradients flow back)\n"),
                   pow(sum, 0.5));
    al_text_printf(o, "\n%s\n\n", L("完整流程：input_ids → embed → blocks → norm → lm_head → shift → cross_entropy → loss",
                                    "The whole flow: input_ids → embed → blocks → norm → lm_head → shift → cross_entropy → loss"));
}

al_status al_demo_block(al_demo_out *d, al_lang lang, int64_t seed, al_rng *rng, al_error *err) {
    demo_mem *mem = malloc(sizeof *mem); /* 180 KB: on the heap, not the WebAssembly stack */
    if (!mem) return al_fail(err, AL_ERR_NOMEM, "out of memory");
    al_rng_seed(rng, seed >= 0 ? (uint64_t)seed : 42);
    example_block(d, lang, rng, &mem->acts[0]);
    example_pre_post(d, lang, rng, &mem->acts[0]);
    example_stack(d, lang, rng, &mem->stack, &mem->acts[0]);
    example_tied(d, lang, rng, seed, &mem->lm);
    example_keep(d, lang, rng, &mem->lm, mem->acts);
    example_loss(d, lang, rng, &mem->lm, mem->acts);
    example_full(d, lang, rng, &mem->lm, mem->acts, &mem->grads);
    al_demo_header(d, AL_DEMO_PANEL_NONE, L("所有示例运行完毕！", "All examples finished!"));
    free(mem);
    return AL_OK;
}
