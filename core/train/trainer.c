/* trainer.c — MiniMind's decoder trained in C: the model's own forward over a batch, keeping
 * every activation the backward pass reads (al_model_forward_batch, model/forward.h: the same
 * code and the same numbers as al_model_forward), the backward pass layer by layer in reverse,
 * and the gradients and AdamW moments laid out as the model's weight block.
 *
 *   forward, N = batch · seq rows (model.c):
 *     x = embed[ids]                                              [N, D]
 *     per layer:  xn = rmsnorm(x)·w;  q, k, v = xn Wqᵀ, xn Wkᵀ, xn Wvᵀ;
 *                 q, k = rmsnorm per head (QK-Norm), then RoPE;  ctx = attention(q, k, v)
 *                 h = x + ctx Woᵀ;   hn = rmsnorm(h)·w
 *                 dense: f = (silu(hn Wgᵀ) ⊙ hn Wuᵀ) Wdᵀ
 *                 MoE:   p = softmax(hn Wrᵀ), top-k → w (renormalised), f = Σ_k w_k expert_k(hn)
 *                 x = h + f
 *     logits = rmsnorm(x)·w Wheadᵀ;  loss = CE(logits[:, :-1], labels[:, 1:]) (+ aux)
 *   backward: the same in reverse, each matrix product as two (dx = dy W, dW += dyᵀ x).
 *
 * The products run on the GEMM (kernels/gemm.c): dx = dy W on W as it is, dW += dyᵀ x on dy
 * transposed into scratch. On threads (al_trainer_set_threads: the model's pool) each product's
 * output columns are split between them (al_gemm_pool), so every element of dx and of dW —
 * a weight's gradient summed over the tokens — is still summed whole and in order by one
 * thread; the reductions (the loss, the norms' and the embedding's gradients, the gradient norm,
 * AdamW) stay on the caller's thread. The bits do not depend on the number of threads. An MoE expert's backward runs on the rows the forward gathered for
 * it, as its forward did. Memory: the model (its weights, packed copies and scratch), and one
 * allocation for the rest: gradients, moments, the activations of one batch, the backward's
 * scratch. */
#include "attnlab/train.h"
#include "base/internal.h"
#include "kernels/pool.h"
#include "model/forward.h"
#include "model/rope.h"
#include "train/train_ops.h"
#include "train/trainer_internal.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

struct al_trainer {
    al_model_hparams hp;
    int64_t max_batch, max_seq;
    al_model *model;                   /* the weights and the forward */
    float *w;                          /* the model's weight block [n_params] */
    int64_t n_params;
    void *mem;                         /* one allocation for everything below */
    float *g, *m, *v;                  /* gradients, AdamW moments [n_params], laid out as w */
    int64_t steps;
    float *rope_cos, *rope_neg_sin;    /* [max_seq, head_dim]: the model's cos and −sin (RoPE's inverse) */
    /* the last forward */
    int64_t batch, seq;
    double aux_coef;
    int32_t *ids, *targets;            /* [N] */
    float *row_loss;                   /* [N] each row's −log p(target), NaN where none */
    int64_t n_targets;
    float aux;
    al_forward_acts acts;              /* every layer's activations, the final stream and norm */
    float *logits;                     /* [N, V] (then dlogits) */
    /* backward scratch */
    float *dx, *dh, *dtmp, *dq, *dk, *dv, *dctx, *dT, *dg, *du, *da, *dprobs, *dexp, *scratch;
    int have_forward;
};

/* ---- the weights' places ------------------------------------------------------------------------- */

const al_model_hparams *al_trainer_hparams(const al_trainer *t) { return t ? &t->hp : NULL; }
int64_t al_trainer_param_count(const al_trainer *t) { return t ? t->n_params : -1; }
int64_t al_trainer_steps(const al_trainer *t) { return t ? t->steps : -1; }

/* The weight (p, layer, expert) in an array laid out as the model's weight block (the weights
 * themselves, the gradients, a moment): the model's own addressing, as an offset. */
static float *place(const al_trainer *t, float *base, al_model_param p, int64_t layer, int64_t expert, int64_t *numel) {
    if (numel) *numel = 0;
    if (!t) return NULL;
    int64_t n = 0;
    const int64_t at = al_model_weight_offset(t->model, p, layer, expert, &n);
    if (at < 0) return NULL;
    if (numel) *numel = n;
    return base + at;
}

float *al_trainer_param(al_trainer *t, al_model_param p, int64_t layer, int64_t expert, int64_t *numel) {
    float *w = place(t, t ? t->w : NULL, p, layer, expert, numel);
    if (w) al_model_weights_changed(t->model);
    return w;
}

const float *al_trainer_weight(const al_trainer *t, al_model_param p, int64_t layer, int64_t expert, int64_t *numel) {
    return place(t, t ? t->w : NULL, p, layer, expert, numel);
}

const float *al_trainer_grad(const al_trainer *t, al_model_param p, int64_t layer, int64_t expert, int64_t *numel) {
    return place(t, t ? t->g : NULL, p, layer, expert, numel);
}

/* The weight behind the head: lm_head, or the embedding when tied. */
static const float *head_weight(const al_trainer *t) {
    return place(t, t->w, t->hp.tied ? AL_MP_EMBED : AL_MP_LM_HEAD, 0, 0, NULL);
}
static float *head_grad(const al_trainer *t) { return place(t, t->g, t->hp.tied ? AL_MP_EMBED : AL_MP_LM_HEAD, 0, 0, NULL); }

/* ---- create, free ---------------------------------------------------------------------------------- */

void al_trainer_free(al_trainer *t) {
    if (!t) return;
    al_model_free(t->model);
    free(t->mem);
    free(t);
}

static int64_t max3(int64_t a, int64_t b, int64_t c) { return a > b ? (a > c ? a : c) : (b > c ? b : c); }

/* `count` elements of `size` bytes at offset *used of base (16-byte aligned); with base NULL
 * only counted. */
static void *carve(char *base, int64_t *used, int64_t count, int64_t size) {
    void *p = base ? base + *used : NULL;
    *used += (count * size + 15) / 16 * 16;
    return p;
}

/* Lays the trainer's allocation out at base (NULL: measures it); returns its bytes. */
static int64_t layout(al_trainer *t, char *base) {
    const al_model_hparams *hp = &t->hp;
    const int64_t N = t->max_batch * t->max_seq, T = t->max_seq, D = hp->hidden, V = hp->vocab, L = hp->n_layers;
    const int64_t H = hp->n_heads, KV = hp->n_kv_heads, E = hp->n_experts, K = E ? hp->top_k : 0, hd = hp->head_dim;
    const int64_t qw = H * hd, kw = KV * hd, F = E ? hp->moe_ffn_hidden : hp->ffn_hidden, ffn = E || F;
    const int64_t qk = hp->qk_norm, rows = E ? N * K : N; /* an FFN's rows: each token once, or top_k times */
    int64_t used = 0;
#define CARVE(ptr, count) (ptr) = carve(base, &used, (count), (int64_t)sizeof *(ptr))
    CARVE(t->g, t->n_params); CARVE(t->m, t->n_params); CARVE(t->v, t->n_params);
    CARVE(t->rope_cos, T * hd); CARVE(t->rope_neg_sin, T * hd);
    CARVE(t->ids, N); CARVE(t->targets, N); CARVE(t->row_loss, N);
    CARVE(t->acts.layer, L);
    for (int64_t l = 0; l < L; l++) {
        al_layer_acts scratch, *a = base ? &t->acts.layer[l] : &scratch;
        memset(a, 0, sizeof *a);
        CARVE(a->x_in, N * D); CARVE(a->xn, N * D); CARVE(a->rms1, N);
        if (qk) {
            CARVE(a->q_proj, N * qw); CARVE(a->k_proj, N * kw); CARVE(a->rms_q, N * H); CARVE(a->rms_k, N * KV);
        }
        CARVE(a->q, N * qw); CARVE(a->k, N * kw); CARVE(a->v, N * kw); CARVE(a->att, N * H * T); CARVE(a->ctx, N * qw);
        CARVE(a->h, N * D); CARVE(a->hn, ffn * N * D); CARVE(a->rms2, ffn * N);
        CARVE(a->g, rows * F); CARVE(a->u, rows * F); CARVE(a->a, rows * F);
        if (E) {
            CARVE(a->probs, N * E); CARVE(a->top_ids, N * K); CARVE(a->top_w, N * K); CARVE(a->expert_out, N * K * D);
            CARVE(a->row_token, N * K); CARVE(a->row_w, N * K); CARVE(a->expert_rows, E + 1);
        }
    }
    CARVE(t->acts.x_final, N * D); CARVE(t->acts.xf, N * D); CARVE(t->acts.rms_f, N); CARVE(t->logits, N * V);
    CARVE(t->dx, N * D); CARVE(t->dh, N * D); CARVE(t->dtmp, N * max3(D, qw, F)); CARVE(t->dq, N * qw);
    CARVE(t->dk, N * kw); CARVE(t->dv, N * kw); CARVE(t->dctx, N * qw);
    CARVE(t->dT, N * max3(V, F, max3(D, qw, E)) + max3(D, qw, F) * max3(V, F, D));
    CARVE(t->dg, N * F); CARVE(t->du, N * F); CARVE(t->da, N * F); CARVE(t->dprobs, N * (E ? E : 1));
    CARVE(t->dexp, E ? 3 * N * D : 1); /* an expert's output gradient, its input rows, their gradient */
    CARVE(t->scratch, T + N * K + 2 * T * T + hd * T + 1);
#undef CARVE
    return used;
}

al_status al_trainer_create(const al_model_hparams *hp, int64_t max_batch, int64_t max_seq, al_trainer **out,
                            al_error *err) {
    if (!out) return al_fail(err, AL_ERR_ARG, "trainer: no output pointer");
    *out = NULL;
    al_status st = al_model_hparams_check(hp, err);
    if (st != AL_OK) return st;
    if (max_batch < 1 || max_batch > AL_MAX_BATCH || max_seq < 2 || max_seq > hp->max_seq)
        return al_fail(err, AL_ERR_ARG, "trainer: batches of 1 to %d sequences of 2 to %lld tokens (asked %lld × %lld)",
                       AL_MAX_BATCH, (long long)hp->max_seq, (long long)max_batch, (long long)max_seq);
    al_trainer *t = calloc(1, sizeof *t);
    if (!t) return al_fail(err, AL_ERR_NOMEM, "trainer: out of memory");
    t->hp = *hp;
    t->max_batch = max_batch, t->max_seq = max_seq;
    t->n_params = al_model_param_count(hp);
    /* What it all costs (the model, and the allocation laid out below), counted before
     * anything is allocated. */
    const int64_t bytes = al_model_batches_bytes(hp, max_batch, max_seq) + layout(t, NULL);
    if (bytes > AL_MAX_MODEL_BYTES) {
        free(t);
        return al_fail(err, AL_ERR_LIMIT, "trainer: %.0f MB for this model, batch and sequence (at most %lld MB)",
                       (double)bytes / 1048576.0, (long long)(AL_MAX_MODEL_BYTES >> 20));
    }
    if ((st = al_model_create_batches(hp, max_batch, max_seq, &t->model, err)) != AL_OK) {
        free(t);
        return st;
    }
    t->w = al_model_weight_block(t->model);
    t->mem = calloc(1, (size_t)layout(t, NULL));
    if (!t->mem) {
        al_trainer_free(t);
        return al_fail(err, AL_ERR_NOMEM, "trainer: out of memory");
    }
    layout(t, t->mem);
    /* RoPE's backward is the rotation by −θ: the model's tables with sin negated (YaRN
     * included), positions 0 .. max_seq-1. */
    al_model_rope_table(hp, t->rope_cos, t->rope_neg_sin, max_seq);
    for (int64_t i = 0; i < max_seq * hp->head_dim; i++) t->rope_neg_sin[i] = -t->rope_neg_sin[i];
    *out = t;
    return AL_OK;
}

/* ---- matrix products ---------------------------------------------------------------------------------- */

/* The backward of y = x Wᵀ: dx [n, in] (+)= dy W; dW [out, in] += dyᵀ x (dy transposed into
 * t->dT first). */
static void linear_backward(al_trainer *t, float *dx, int accumulate, float *dw, const float *dy, const float *x,
                            const float *w, int64_t n, int64_t out, int64_t in) {
    al_pool *pool = al_model_pool(t->model);
    if (dx) al_gemm_pool(pool, dx, in, dy, out, al_bmat_rows(w, in), n, in, out, accumulate);
    if (out <= in) {
        /* dW [out, in] += dyᵀ [out, n] · x [n, in]: dy transposed (the smaller of the two);
         * the threads share dW's columns, each element summed over all n tokens in order */
        for (int64_t i = 0; i < n; i++)
            for (int64_t j = 0; j < out; j++) t->dT[j * n + i] = dy[i * out + j];
        al_gemm_pool(pool, dw, in, t->dT, n, al_bmat_rows(x, in), out, in, n, 1);
        return;
    }
    /* a wide output (the head: out = vocab): dWᵀ [in, out] = xᵀ [in, n] · dy [n, out], x being
     * the one transposed, then added into dW transposed back */
    float *xt = t->dT, *dwt = t->dT + in * n;
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < in; j++) xt[j * n + i] = x[i * in + j];
    al_gemm_pool(pool, dwt, out, xt, n, al_bmat_rows(dy, out), in, out, n, 0);
    for (int64_t j = 0; j < out; j++)
        for (int64_t i = 0; i < in; i++) dw[j * in + i] += dwt[i * out + j];
}

#define W(p, l, e) place(t, t->w, (p), (l), (e), NULL)
#define G(p, l, e) place(t, t->g, (p), (l), (e), NULL)

/* ---- forward ----------------------------------------------------------------------------------------------- */

/* The batch's shape and ids against the trainer's (labels too when not NULL). */
static al_status check_batch(const al_trainer *t, const int32_t *ids, const int32_t *labels, int64_t batch, int64_t seq,
                             al_error *err) {
    if (batch < 1 || batch > t->max_batch || seq < 2 || seq > t->max_seq)
        return al_fail(err, AL_ERR_ARG, "trainer forward: %lld × %lld tokens; the trainer takes 1 to %lld × 2 to %lld",
                       (long long)batch, (long long)seq, (long long)t->max_batch, (long long)t->max_seq);
    const int64_t V = t->hp.vocab;
    for (int64_t i = 0; i < batch * seq; i++) {
        if (ids[i] < 0 || ids[i] >= V)
            return al_fail(err, AL_ERR_ARG, "trainer forward: id %d at %lld is outside the vocabulary of %lld",
                           (int)ids[i], (long long)i, (long long)V);
        if (labels && labels[i] != -100 && (labels[i] < 0 || labels[i] >= V))
            return al_fail(err, AL_ERR_ARG, "trainer forward: label %d at %lld is neither -100 nor an id",
                           (int)labels[i], (long long)i);
    }
    return AL_OK;
}

al_status al_trainer_forward(al_trainer *t, const int32_t *ids, const int32_t *labels, int64_t batch, int64_t seq,
                             double router_aux_coef, float *loss, float *ce, float *aux, al_error *err) {
    if (!t || !ids || !labels) return al_fail(err, AL_ERR_ARG, "trainer forward: NULL argument");
    const al_model_hparams *hp = &t->hp;
    al_status st = check_batch(t, ids, labels, batch, seq, err);
    if (st != AL_OK) return st;
    const int64_t N = batch * seq, V = hp->vocab, E = hp->n_experts, K = E ? hp->top_k : 0;
    /* targets: row (b, t) predicts labels[b, t+1] (MiniMind's shift); the last of each row none */
    int64_t n_targets = 0;
    for (int64_t b = 0; b < batch; b++)
        for (int64_t s = 0; s < seq; s++) {
            const int32_t y = s + 1 < seq ? labels[b * seq + s + 1] : -100;
            t->targets[b * seq + s] = y == -100 ? -1 : y;
            n_targets += y != -100;
        }
    if (!n_targets) return al_fail(err, AL_ERR_ARG, "trainer forward: no label to learn (all are -100)");
    memcpy(t->ids, ids, (size_t)N * sizeof *ids);
    t->batch = batch, t->seq = seq, t->aux_coef = router_aux_coef;

    /* 1. The model's forward over the batch, every layer's activations kept (model/forward.h). */
    al_model_forward_batch(t->model, ids, batch, seq, t->logits, &t->acts);
    /* 2. MiniMind's load-balancing loss of each MoE layer: coef · E · Σ_k Σ_e f_ke · P_e, f_ke the
     *    share of tokens whose k-th choice is e, P_e the mean router probability of e */
    double aux_total = 0.0;
    for (int64_t l = 0; E && router_aux_coef != 0.0 && l < hp->n_layers; l++) {
        const al_layer_acts *a = &t->acts.layer[l];
        double s = 0.0;
        for (int64_t e = 0; e < E; e++) {
            double f = 0.0, pm = 0.0;
            for (int64_t i = 0; i < N; i++) {
                pm += a->probs[i * E + e];
                for (int64_t j = 0; j < K; j++) f += a->top_ids[i * K + j] == e;
            }
            s += (f / (double)N) * (pm / (double)N);
        }
        aux_total += router_aux_coef * (double)E * s;
    }
    /* 3. the loss (the logits become dL/dlogits for the backward) */
    const double ce_loss = al_tr_cross_entropy(t->logits, t->targets, N, V, 1.0f, &t->n_targets, t->row_loss);
    t->aux = (float)aux_total;
    if (loss) *loss = (float)(ce_loss + aux_total);
    if (ce) *ce = (float)ce_loss;
    if (aux) *aux = (float)aux_total;
    t->have_forward = 1;
    return AL_OK;
}

al_status al_trainer_logits(al_trainer *t, const int32_t *ids, int64_t batch, int64_t seq, float *logits, int64_t cap,
                            al_error *err) {
    if (!t || !ids || !logits) return al_fail(err, AL_ERR_ARG, "trainer logits: NULL argument");
    al_status st = check_batch(t, ids, NULL, batch, seq, err);
    if (st != AL_OK) return st;
    const int64_t n = batch * seq * t->hp.vocab;
    if (cap < n)
        return al_fail(err, AL_ERR_CAPACITY, "trainer logits: %lld floats, the buffer holds %lld", (long long)n,
                       (long long)cap);
    al_model_forward_batch(t->model, ids, batch, seq, t->logits, &t->acts);
    memcpy(logits, t->logits, (size_t)n * sizeof *logits);
    t->have_forward = 0; /* no loss: nothing to go back through */
    return AL_OK;
}

/* ---- backward ------------------------------------------------------------------------------------------------ */

void al_trainer_zero_grad(al_trainer *t) {
    if (t) memset(t->g, 0, (size_t)t->n_params * sizeof *t->g);
}

/* RoPE's backward on dx [N, n_heads, head_dim]: each sequence's rows turned back by −θ, the
 * forward's rotation with sin negated. */
static void rope_backward(const al_trainer *t, float *dx, int64_t n_heads) {
    const int64_t hd = t->hp.head_dim;
    for (int64_t b = 0; b < t->batch; b++) {
        float *rows = dx + b * t->seq * n_heads * hd;
        if (t->hp.rope_style == AL_ROPE_INTERLEAVED) al_rope_apply_interleaved(rows, t->rope_cos, t->rope_neg_sin, t->seq, n_heads, hd);
        else al_rope_apply(rows, t->rope_cos, t->rope_neg_sin, t->seq, n_heads, hd);
    }
}

al_status al_trainer_set_threads(al_trainer *t, int64_t threads, al_error *err) {
    if (!t) return al_fail(err, AL_ERR_ARG, "trainer threads: NULL trainer");
    return al_model_set_threads(t->model, threads, err);
}
int64_t al_trainer_threads(const al_trainer *t) { return t ? al_model_threads(t->model) : -1; }

al_status al_trainer_set_ablation(al_trainer *t, const int32_t *heads, int64_t n, al_error *err) {
    if (!t) return al_fail(err, AL_ERR_ARG, "trainer: NULL argument");
    return al_model_set_ablation(t->model, heads, n, err);
}

al_status al_trainer_backward(al_trainer *t, float scale, al_error *err) {
    if (!t) return al_fail(err, AL_ERR_ARG, "trainer backward: NULL argument");
    if (!t->have_forward) return al_fail(err, AL_ERR_ARG, "trainer backward: no forward pass to go back through");
    const al_model_hparams *hp = &t->hp;
    const int64_t N = t->batch * t->seq, D = hp->hidden, V = hp->vocab, H = hp->n_heads, KV = hp->n_kv_heads,
                  hd = hp->head_dim, E = hp->n_experts, K = E ? hp->top_k : 0;
    const al_forward_acts *acts = &t->acts;
    const int64_t qw = H * hd, kw = KV * hd, F = E ? hp->moe_ffn_hidden : hp->ffn_hidden;
    /* 4'. the head and the final norm: dlogits = (softmax − onehot) / n · scale */
    float *dlogits = t->logits;
    if (scale != 1.0f)
        for (int64_t i = 0; i < N * V; i++) dlogits[i] *= scale;
    linear_backward(t, t->dh, 0, head_grad(t), dlogits, acts->xf, head_weight(t), N, V, D);
    if (scale != 1.0f) /* the logits' gradient is kept at scale 1 for another backward */
        for (int64_t i = 0; i < N * V; i++) dlogits[i] /= scale;
    float *dx = t->dx; /* dL/dx of the residual stream */
    al_tr_rmsnorm_backward(dx, G(AL_MP_FINAL_NORM, 0, 0), t->dh, acts->x_final, W(AL_MP_FINAL_NORM, 0, 0), acts->rms_f, N, D, 0);
    for (int64_t l = hp->n_layers - 1; l >= 0; l--) {
        const al_layer_acts *a = &acts->layer[l];
        /* 3'. FFN: x_out = h + ffn(hn)  →  dh = dx + ffn'(dx) */
        memcpy(t->dh, dx, (size_t)(N * D) * sizeof(float));
        float *dhn = t->dtmp; /* dL/dhn [N, D] */
        const int ffn = E || F; /* attention-only: no FFN, dh = dx */
        if (!E && F) {
            linear_backward(t, t->da, 0, G(AL_MP_DOWN, l, 0), dx, a->a, W(AL_MP_DOWN, l, 0), N, D, F);
            al_tr_swiglu_backward(t->dg, t->du, t->da, a->g, a->u, N * F);
            linear_backward(t, dhn, 0, G(AL_MP_GATE, l, 0), t->dg, a->hn, W(AL_MP_GATE, l, 0), N, F, D);
            linear_backward(t, dhn, 1, G(AL_MP_UP, l, 0), t->du, a->hn, W(AL_MP_UP, l, 0), N, F, D);
        } else if (E) {
            /* y_i = Σ_j w_ij out_e(ij)(hn_i), each expert run on the rows the forward gathered
             * for it (expert_rows): dw_ij = dy_i · out_e(ij), and per expert its rows' backward */
            float *dw = t->scratch; /* [N, K] */
            float *dout = t->dexp, *xr = t->dexp + N * D, *dxr = t->dexp + 2 * N * D; /* [rows, D] each */
            memset(dhn, 0, (size_t)(N * D) * sizeof(float));
            for (int64_t e = 0; e < E; e++)
                for (int64_t r = a->expert_rows[e]; r < a->expert_rows[e + 1]; r++) {
                    const int64_t i = a->row_token[r];
                    double dot = 0.0;
                    for (int64_t d = 0; d < D; d++) dot += (double)dx[i * D + d] * a->expert_out[r * D + d];
                    for (int64_t j = 0; j < K; j++)
                        if (a->top_ids[i * K + j] == e) dw[i * K + j] = (float)dot;
                }
            for (int64_t e = 0; e < E; e++) {
                const int64_t r0 = a->expert_rows[e], R = a->expert_rows[e + 1] - r0;
                if (!R) continue; /* chosen by no token: no gradient */
                /* dout [R, D] = w · dy of each row's token; xr [R, D] its input, gathered again */
                for (int64_t r = 0; r < R; r++) {
                    const int64_t i = a->row_token[r0 + r];
                    const float w = a->row_w[r0 + r];
                    for (int64_t d = 0; d < D; d++) dout[r * D + d] = w * dx[i * D + d];
                    memcpy(xr + r * D, a->hn + i * D, (size_t)D * sizeof(float));
                }
                const float *act = a->a + r0 * F, *g = a->g + r0 * F, *u = a->u + r0 * F;
                linear_backward(t, t->da, 0, G(AL_MP_EXPERT_DOWN, l, e), dout, act, W(AL_MP_EXPERT_DOWN, l, e), R, D, F);
                al_tr_swiglu_backward(t->dg, t->du, t->da, g, u, R * F);
                linear_backward(t, dxr, 0, G(AL_MP_EXPERT_GATE, l, e), t->dg, xr, W(AL_MP_EXPERT_GATE, l, e), R, F, D);
                linear_backward(t, dxr, 1, G(AL_MP_EXPERT_UP, l, e), t->du, xr, W(AL_MP_EXPERT_UP, l, e), R, F, D);
                for (int64_t r = 0; r < R; r++) /* scattered back to the rows' tokens */
                    for (int64_t d = 0; d < D; d++) dhn[a->row_token[r0 + r] * D + d] += dxr[r * D + d];
            }
            /* the weights: w_j = p_j / (Σ_k p_k + 1e-20) when renormalised, else p_j */
            float *dp = t->dprobs; /* [N, E] */
            memset(dp, 0, (size_t)(N * E) * sizeof(float));
            for (int64_t i = 0; i < N; i++) {
                const float *p = a->probs + i * E;
                const int32_t *top = a->top_ids + i * K;
                if (hp->norm_topk_prob) {
                    double sum = 0.0, wdw = 0.0;
                    for (int64_t j = 0; j < K; j++) sum += p[top[j]];
                    sum += 1e-20;
                    for (int64_t j = 0; j < K; j++) wdw += (double)dw[i * K + j] * p[top[j]];
                    for (int64_t j = 0; j < K; j++) dp[i * E + top[j]] += (float)(dw[i * K + j] / sum - wdw / (sum * sum));
                } else {
                    for (int64_t j = 0; j < K; j++) dp[i * E + top[j]] += dw[i * K + j];
                }
            }
            /* the load-balancing loss: ∂aux/∂p_ie = coef · E · (Σ_k f_ke) / N */
            if (t->aux_coef != 0.0)
                for (int64_t e = 0; e < E; e++) {
                    double f = 0.0;
                    for (int64_t i = 0; i < N; i++)
                        for (int64_t j = 0; j < K; j++) f += a->top_ids[i * K + j] == e;
                    const float c = (float)(t->aux_coef * (double)E * (f / (double)N) / (double)N * scale);
                    for (int64_t i = 0; i < N; i++) dp[i * E + e] += c;
                }
            /* softmax: dz = p ⊙ (dp − Σ p ⊙ dp), then the router's linear */
            for (int64_t i = 0; i < N; i++) {
                const float *p = a->probs + i * E;
                float *d = dp + i * E;
                double s = 0.0;
                for (int64_t e = 0; e < E; e++) s += (double)p[e] * d[e];
                for (int64_t e = 0; e < E; e++) d[e] = p[e] * (d[e] - (float)s);
            }
            linear_backward(t, dhn, 1, G(AL_MP_ROUTER, l, 0), dp, a->hn, W(AL_MP_ROUTER, l, 0), N, E, D);
        }
        /* the FFN norm: dh += norm'(dhn) */
        if (ffn) al_tr_rmsnorm_backward(t->dh, G(AL_MP_FFN_NORM, l, 0), dhn, a->h, W(AL_MP_FFN_NORM, l, 0), a->rms2, N, D, 1);
        /* 2'. attention: h = x_in + o(ctx)  →  dx_in = dh + attn'(dh) */
        linear_backward(t, t->dctx, 0, G(AL_MP_WO, l, 0), t->dh, a->ctx, W(AL_MP_WO, l, 0), N, D, qw);
        /*    a head switched off (al_model_set_ablation) gave o_proj zeros: nothing flows back into it */
        const uint8_t *off = al_model_heads_off(t->model, l);
        for (int64_t h = 0; off && h < H; h++)
            for (int64_t i = 0; off[h] && i < N; i++) memset(t->dctx + i * qw + h * hd, 0, (size_t)hd * sizeof(float));
        al_tr_attention_backward(t->dq, t->dk, t->dv, t->dctx, a->att, a->q, a->k, a->v, t->batch, t->seq, H, KV, hd,
                                 t->scratch, al_model_pool(t->model));
        rope_backward(t, t->dq, H);
        rope_backward(t, t->dk, KV);
        if (hp->qk_norm) { /* the per-head norms, in place through dtmp */
            al_tr_rmsnorm_backward(t->dtmp, G(AL_MP_Q_NORM, l, 0), t->dq, a->q_proj, W(AL_MP_Q_NORM, l, 0), a->rms_q, N * H, hd, 0);
            memcpy(t->dq, t->dtmp, (size_t)(N * qw) * sizeof(float));
            al_tr_rmsnorm_backward(t->dtmp, G(AL_MP_K_NORM, l, 0), t->dk, a->k_proj, W(AL_MP_K_NORM, l, 0), a->rms_k, N * KV, hd, 0);
            memcpy(t->dk, t->dtmp, (size_t)(N * kw) * sizeof(float));
        }
        float *dxn = t->dtmp;
        linear_backward(t, dxn, 0, G(AL_MP_WQ, l, 0), t->dq, a->xn, W(AL_MP_WQ, l, 0), N, qw, D);
        linear_backward(t, dxn, 1, G(AL_MP_WK, l, 0), t->dk, a->xn, W(AL_MP_WK, l, 0), N, kw, D);
        linear_backward(t, dxn, 1, G(AL_MP_WV, l, 0), t->dv, a->xn, W(AL_MP_WV, l, 0), N, kw, D);
        memcpy(dx, t->dh, (size_t)(N * D) * sizeof(float));
        al_tr_rmsnorm_backward(dx, G(AL_MP_ATTN_NORM, l, 0), dxn, a->x_in, W(AL_MP_ATTN_NORM, l, 0), a->rms1, N, D, 1);
    }
    /* 1'. the embedding: each token's row gathers its gradient */
    float *gemb = G(AL_MP_EMBED, 0, 0);
    for (int64_t i = 0; i < N; i++)
        for (int64_t d = 0; d < D; d++) gemb[(int64_t)t->ids[i] * D + d] += dx[i * D + d];
    return AL_OK;
}

/* ---- for the optimizer --------------------------------------------------------------------------------------- */

int64_t al_trainer_buffers(al_trainer *t, float **w, float **g, float **m, float **v) {
    *w = t->w, *g = t->g, *m = t->m, *v = t->v;
    return t->n_params;
}

int64_t al_trainer_count_step(al_trainer *t) {
    al_model_weights_changed(t->model);
    return ++t->steps;
}

int64_t al_trainer_moments(al_trainer *t, float **m, float **v) {
    if (!t || !m || !v) return -1;
    *m = t->m, *v = t->v;
    return t->n_params;
}

void al_trainer_set_steps(al_trainer *t, int64_t steps) {
    if (t && steps >= 0) t->steps = steps;
}

/* ---- what the last forward saw ------------------------------------------------------------------------------- */

int64_t al_trainer_row_losses(const al_trainer *t, float *out, int64_t cap) {
    if (!t || !t->have_forward) return -1;
    const int64_t n = t->batch * t->seq;
    if (out) memcpy(out, t->row_loss, (size_t)(n < cap ? n : cap) * sizeof *out);
    return n;
}

int64_t al_trainer_attention(const al_trainer *t, int64_t layer, float *out, int64_t cap) {
    if (!t || !t->have_forward || layer < 0 || layer >= t->hp.n_layers) return -1;
    const int64_t n = t->batch * t->hp.n_heads * t->seq * t->seq;
    if (out) memcpy(out, t->acts.layer[layer].att, (size_t)(n < cap ? n : cap) * sizeof *out);
    return n;
}
