/* trainer.c — MiniMind's decoder trained in C: the forward pass over a batch keeping every
 * activation the backward pass reads, the backward pass layer by layer in reverse, and the
 * weights, gradients and AdamW moments in one place each.
 *
 *   forward, N = batch · seq rows:
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
 * The products run on the GEMM (kernels/gemm.c): y = x Wᵀ on W packed once per optimizer step,
 * dx = dy W on W as it is, dW += dyᵀ x on dy transposed into scratch. An MoE layer runs every
 * expert on every token and weighs the tokens it was not chosen for by 0 (simple, and exact:
 * the gradients are those of the chosen tokens only). */
#include "attnlab/train.h"
#include "base/internal.h"
#include "kernels/gemm.h"
#include "model/rope.h"
#include "train/train_ops.h"
#include "train/trainer_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* What one layer keeps of a forward pass. */
typedef struct {
    float *x_in, *xn, *r1;             /* the block's input, its norm [N, D], r [N] */
    float *q_raw, *k_raw, *v;          /* projections before QK-Norm [N, qw], [N, kw], [N, kw] */
    float *q_n, *k_n, *rq, *rk;        /* after QK-Norm (before RoPE), r [N·H], [N·KV] */
    float *q, *k;                      /* after RoPE */
    float *att;                        /* [B, H, T, T] */
    float *ctx;                        /* [N, qw] */
    float *h, *hn, *r2;                /* after attention, its norm, r */
    float *g, *u, *a;                  /* dense: [N, F] each; MoE: [E, N, Fm] each */
    float *probs;                      /* MoE router softmax [N, E] */
    int32_t *top_ids;                  /* [N, k] */
    float *top_w;                      /* [N, k] the weights used */
    float *expert_out;                 /* [E, N, D] */
} layer_acts;

struct al_trainer {
    al_model_hparams hp;
    int64_t max_batch, max_seq;
    int64_t n_params, n_slots;
    int64_t *slot;                     /* offset of each (param, layer, expert) in w, or -1 */
    al_weight_ref *refs;               /* every weight (al_model_weights), in slot order */
    int64_t n_refs;
    float *w, *g, *m, *v;              /* weights, gradients, AdamW moments [n_params] */
    float *packed;                     /* every matrix packed for y = x Wᵀ */
    int64_t *packed_at;                /* per slot: offset in packed, or -1 */
    int packed_ok;
    int64_t steps;
    float *rope_cos, *rope_sin;        /* [max_seq, head_dim] */
    /* the last forward */
    int64_t batch, seq;
    double aux_coef;
    int32_t *ids, *targets;            /* [N] */
    float *row_loss;                   /* [N] each row's −log p(target), NaN where none */
    int64_t n_targets;
    float aux;
    layer_acts *layers;
    float *x_final, *xf, *rf, *logits; /* [N, D], [N, D], [N], [N, V] (then dlogits) */
    /* backward scratch */
    float *dx, *dh, *dtmp, *dq, *dk, *dv, *dctx, *dT, *dg, *du, *da, *dprobs, *dexp, *scratch;
    int have_forward;
};

/* ---- the weights' places ------------------------------------------------------------------------- */

static int global_param(al_model_param p) { return p == AL_MP_EMBED || p == AL_MP_FINAL_NORM || p == AL_MP_LM_HEAD; }
static int expert_param(al_model_param p) { return p >= AL_MP_EXPERT_GATE && p <= AL_MP_EXPERT_DOWN; }

/* Slot of (p, layer, expert): globals first, then per layer its params, then its experts'. */
static int64_t slot_index(const al_model_hparams *hp, al_model_param p, int64_t layer, int64_t expert) {
    if (global_param(p)) return p;
    const int64_t per_layer = AL_MP_COUNT + 3 * hp->n_experts;
    if (layer < 0 || layer >= hp->n_layers) return -1;
    if (expert_param(p)) {
        if (expert < 0 || expert >= hp->n_experts) return -1;
        return AL_MP_COUNT + layer * per_layer + AL_MP_COUNT + expert * 3 + (p - AL_MP_EXPERT_GATE);
    }
    return AL_MP_COUNT + layer * per_layer + p;
}

static int64_t numel_of(const al_model_hparams *hp, al_model_param p) {
    int64_t shape[2] = {0, 0};
    const int dims = al_model_param_shape(hp, p, shape);
    return dims <= 0 ? 0 : dims == 1 ? shape[0] : shape[0] * shape[1];
}

const al_model_hparams *al_trainer_hparams(const al_trainer *t) { return t ? &t->hp : NULL; }
int64_t al_trainer_param_count(const al_trainer *t) { return t ? t->n_params : -1; }
int64_t al_trainer_steps(const al_trainer *t) { return t ? t->steps : -1; }

static float *place(const al_trainer *t, float *base, al_model_param p, int64_t layer, int64_t expert, int64_t *numel) {
    if (numel) *numel = 0;
    if (!t || (int)p < 0 || p >= AL_MP_COUNT) return NULL;
    const int64_t s = slot_index(&t->hp, p, layer, expert);
    if (s < 0 || s >= t->n_slots || t->slot[s] < 0) return NULL;
    if (numel) *numel = numel_of(&t->hp, p);
    return base + t->slot[s];
}

float *al_trainer_param(al_trainer *t, al_model_param p, int64_t layer, int64_t expert, int64_t *numel) {
    float *w = place(t, t ? t->w : NULL, p, layer, expert, numel);
    if (w) t->packed_ok = 0;
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
    free(t->slot), free(t->packed_at), free(t->refs), free(t->w), free(t->g), free(t->m), free(t->v), free(t->packed);
    free(t->rope_cos), free(t->rope_sin), free(t->ids), free(t->targets), free(t->row_loss);
    if (t->layers)
        for (int64_t l = 0; l < t->hp.n_layers; l++) {
            layer_acts *a = &t->layers[l];
            free(a->x_in), free(a->xn), free(a->r1), free(a->q_raw), free(a->k_raw), free(a->v), free(a->q_n);
            free(a->k_n), free(a->rq), free(a->rk), free(a->q), free(a->k), free(a->att), free(a->ctx), free(a->h);
            free(a->hn), free(a->r2), free(a->g), free(a->u), free(a->a), free(a->probs), free(a->top_ids);
            free(a->top_w), free(a->expert_out);
        }
    free(t->layers);
    free(t->x_final), free(t->xf), free(t->rf), free(t->logits);
    free(t->dx), free(t->dh), free(t->dtmp), free(t->dq), free(t->dk), free(t->dv), free(t->dctx), free(t->dT);
    free(t->dg), free(t->du), free(t->da), free(t->dprobs), free(t->dexp), free(t->scratch);
    free(t);
}

static size_t alloc_count(int64_t count) { return count > 0 ? (size_t)count : 1; }
static int64_t max3(int64_t a, int64_t b, int64_t c) { return a > b ? (a > c ? a : c) : (b > c ? b : c); }

al_status al_trainer_create(const al_model_hparams *hp, int64_t max_batch, int64_t max_seq, al_trainer **out,
                            al_error *err) {
    if (!out) return al_fail(err, AL_ERR_ARG, "trainer: no output pointer");
    *out = NULL;
    al_status st = al_model_hparams_check(hp, err);
    if (st != AL_OK) return st;
    if (max_batch < 1 || max_batch > AL_MAX_BATCH || max_seq < 2 || max_seq > hp->max_seq)
        return al_fail(err, AL_ERR_ARG, "trainer: batches of 1 to %d sequences of 2 to %lld tokens (asked %lld × %lld)",
                       AL_MAX_BATCH, (long long)hp->max_seq, (long long)max_batch, (long long)max_seq);
    const int64_t N = max_batch * max_seq, D = hp->hidden, V = hp->vocab, L = hp->n_layers, E = hp->n_experts;
    const int64_t qw = hp->n_heads * hp->head_dim, kw = hp->n_kv_heads * hp->head_dim;
    const int64_t F = E ? hp->moe_ffn_hidden : hp->ffn_hidden, EF = E ? E : 1, K = E ? hp->top_k : 0;
    /* What it all costs, counted before anything is allocated. */
    const double weights = (double)al_model_param_count(hp);
    const double per_layer = (double)N * (2.0 * D + 1 + 2.0 * qw + 3.0 * kw + 2.0 * hp->n_heads + 2.0 * hp->n_kv_heads +
                                          (double)hp->n_heads * max_seq + qw + 2.0 * D + 1 + 3.0 * EF * F + E + 2.0 * K +
                                          (E ? (double)E * D : 0.0));
    const double bytes = 4.0 * (5.0 * weights + (double)L * per_layer + (double)N * (3.0 * D + 1 + 2.0 * V) +
                                (double)N * (4.0 * D + 4.0 * qw + 4.0 * kw + 3.0 * EF * F + E) + 2.0 * max_seq * hp->head_dim);
    if (bytes > (double)AL_MAX_MODEL_BYTES)
        return al_fail(err, AL_ERR_LIMIT, "trainer: %.0f MB for this model, batch and sequence (at most %lld MB)",
                       bytes / 1048576.0, (long long)(AL_MAX_MODEL_BYTES >> 20));
    al_trainer *t = calloc(1, sizeof *t);
    if (!t) return al_fail(err, AL_ERR_NOMEM, "trainer: out of memory");
    t->hp = *hp;
    t->max_batch = max_batch, t->max_seq = max_seq;
    t->n_slots = AL_MP_COUNT + L * (AL_MP_COUNT + 3 * E);
    t->slot = malloc((size_t)t->n_slots * sizeof *t->slot);
    t->packed_at = malloc((size_t)t->n_slots * sizeof *t->packed_at);
    t->n_refs = al_model_weights(hp, NULL);
    t->refs = malloc((size_t)t->n_refs * sizeof *t->refs);
    int ok = t->slot && t->packed_at && t->refs;
    int64_t n = 0, packed = 0;
    if (ok) {
        al_model_weights(hp, t->refs);
        for (int64_t s = 0; s < t->n_slots; s++) t->slot[s] = t->packed_at[s] = -1;
        for (int64_t r = 0; r < t->n_refs; r++) {
            const al_model_param p = t->refs[r].p;
            const int64_t s = slot_index(hp, p, t->refs[r].layer, t->refs[r].expert);
            t->slot[s] = n;
            n += numel_of(hp, p);
            int64_t shape[2] = {0, 0};
            if (al_model_param_shape(hp, p, shape) == 2 && p != AL_MP_EMBED) {
                t->packed_at[s] = packed;
                packed += al_pack_panels_size(shape[0], shape[1]);
            }
        }
    }
    if (ok && hp->tied) { /* the head is the embedding, packed as a matrix of its own */
        t->packed_at[AL_MP_EMBED] = packed;
        packed += al_pack_panels_size(V, D);
    }
    t->n_params = n;
#define ALLOC(ptr, count) ok = ok && ((ptr) = calloc(alloc_count(count), sizeof *(ptr))) != NULL
    ALLOC(t->w, n); ALLOC(t->g, n); ALLOC(t->m, n); ALLOC(t->v, n); ALLOC(t->packed, packed);
    ALLOC(t->rope_cos, max_seq * hp->head_dim); ALLOC(t->rope_sin, max_seq * hp->head_dim);
    ALLOC(t->ids, N); ALLOC(t->targets, N); ALLOC(t->row_loss, N);
    ALLOC(t->layers, L);
    for (int64_t l = 0; ok && l < L; l++) {
        layer_acts *a = &t->layers[l];
        ALLOC(a->x_in, N * D); ALLOC(a->xn, N * D); ALLOC(a->r1, N);
        ALLOC(a->q_raw, N * qw); ALLOC(a->k_raw, N * kw); ALLOC(a->v, N * kw);
        ALLOC(a->q_n, N * qw); ALLOC(a->k_n, N * kw); ALLOC(a->rq, N * hp->n_heads); ALLOC(a->rk, N * hp->n_kv_heads);
        ALLOC(a->q, N * qw); ALLOC(a->k, N * kw); ALLOC(a->att, N * hp->n_heads * max_seq); ALLOC(a->ctx, N * qw);
        ALLOC(a->h, N * D); ALLOC(a->hn, N * D); ALLOC(a->r2, N);
        ALLOC(a->g, EF * N * F); ALLOC(a->u, EF * N * F); ALLOC(a->a, EF * N * F);
        if (E) {
            ALLOC(a->probs, N * E); ALLOC(a->top_ids, N * K); ALLOC(a->top_w, N * K); ALLOC(a->expert_out, E * N * D);
        }
    }
    ALLOC(t->x_final, N * D); ALLOC(t->xf, N * D); ALLOC(t->rf, N); ALLOC(t->logits, N * V);
    ALLOC(t->dx, N * D); ALLOC(t->dh, N * D); ALLOC(t->dtmp, N * max3(D, qw, F)); ALLOC(t->dq, N * qw);
    ALLOC(t->dk, N * kw); ALLOC(t->dv, N * kw); ALLOC(t->dctx, N * qw); ALLOC(t->dT, N * max3(V, F, max3(D, qw, E)) + max3(D, qw, F) * max3(V, F, D));
    ALLOC(t->dg, N * F); ALLOC(t->du, N * F); ALLOC(t->da, N * F); ALLOC(t->dprobs, N * (E ? E : 1));
    ALLOC(t->dexp, E ? N * D : 1);
    ALLOC(t->scratch, max_seq + N * K + 2 * max_seq * max_seq + hp->head_dim * max_seq + 1);
#undef ALLOC
    if (!ok) {
        al_trainer_free(t);
        return al_fail(err, AL_ERR_NOMEM, "trainer: out of memory");
    }
    /* Norm weights start at 1, as the model's. */
    for (int64_t r = 0; r < t->n_refs; r++) {
        int64_t shape[2] = {0, 0};
        const al_weight_ref *ref = &t->refs[r];
        if (al_model_param_shape(hp, ref->p, shape) == 1) {
            float *w = t->w + t->slot[slot_index(hp, ref->p, ref->layer, ref->expert)];
            for (int64_t i = 0; i < shape[0]; i++) w[i] = 1.0f;
        }
    }
    /* The RoPE tables the model rotates by (YaRN included), positions 0 .. max_seq-1. */
    al_model_rope_table(hp, t->rope_cos, t->rope_sin, max_seq);
    *out = t;
    return AL_OK;
}

/* ---- matrix products ---------------------------------------------------------------------------------- */

/* Packs every matrix for y = x Wᵀ (after the weights changed). */
static void pack_all(al_trainer *t) {
    const al_model_hparams *hp = &t->hp;
    for (int64_t r = 0; r < t->n_refs; r++) {
        const al_weight_ref *ref = &t->refs[r];
        const al_model_param p = ref->p;
        const int64_t s = slot_index(hp, p, ref->layer, ref->expert);
        int64_t shape[2] = {0, 0};
        if (t->packed_at[s] >= 0 && p != AL_MP_EMBED && al_model_param_shape(hp, p, shape) == 2)
            al_pack_panels(t->packed + t->packed_at[s], t->w + t->slot[s], shape[0], shape[1]);
    }
    if (hp->tied) al_pack_panels(t->packed + t->packed_at[AL_MP_EMBED], t->w + t->slot[AL_MP_EMBED], hp->vocab, hp->hidden);
    t->packed_ok = 1;
}

/* y [n, out] = x [n, in] · Wᵀ, W the matrix of slot s. */
static void linear(al_trainer *t, float *y, const float *x, int64_t s, int64_t n, int64_t out, int64_t in) {
    al_gemm(y, out, x, in, al_bmat_packed(t->packed + t->packed_at[s], in), n, out, in, 0);
}

/* The backward of y = x Wᵀ: dx [n, in] (+)= dy W; dW [out, in] += dyᵀ x (dy transposed into
 * t->dT first). */
static void linear_backward(al_trainer *t, float *dx, int accumulate, float *dw, const float *dy, const float *x,
                            const float *w, int64_t n, int64_t out, int64_t in) {
    if (dx) al_gemm(dx, in, dy, out, al_bmat_rows(w, in), n, in, out, accumulate);
    if (out <= in) {
        /* dW [out, in] += dyᵀ [out, n] · x [n, in]: dy transposed (the smaller of the two) */
        for (int64_t i = 0; i < n; i++)
            for (int64_t j = 0; j < out; j++) t->dT[j * n + i] = dy[i * out + j];
        al_gemm(dw, in, t->dT, n, al_bmat_rows(x, in), out, in, n, 1);
        return;
    }
    /* a wide output (the head: out = vocab): dWᵀ [in, out] = xᵀ [in, n] · dy [n, out], x being
     * the one transposed, then added into dW transposed back */
    float *xt = t->dT, *dwt = t->dT + in * n;
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < in; j++) xt[j * n + i] = x[i * in + j];
    al_gemm(dwt, out, xt, n, al_bmat_rows(dy, out), in, out, n, 0);
    for (int64_t j = 0; j < out; j++)
        for (int64_t i = 0; i < in; i++) dw[j * in + i] += dwt[i * out + j];
}

#define W(p, l, e) (t->w + t->slot[slot_index(&t->hp, (p), (l), (e))])
#define G(p, l, e) (t->g + t->slot[slot_index(&t->hp, (p), (l), (e))])
#define S(p, l, e) slot_index(&t->hp, (p), (l), (e))

/* ---- forward ----------------------------------------------------------------------------------------------- */

/* The router's top-k of one token: the k largest probabilities (ties: the lower expert first). */
static void top_k(const float *p, int64_t n_experts, int64_t k, int32_t *ids) {
    for (int64_t j = 0; j < k; j++) {
        int32_t best = -1;
        for (int64_t e = 0; e < n_experts; e++) {
            int taken = 0;
            for (int64_t i = 0; i < j; i++) taken |= ids[i] == e;
            if (!taken && (best < 0 || p[e] > p[best])) best = (int32_t)e;
        }
        ids[j] = best;
    }
}

al_status al_trainer_forward(al_trainer *t, const int32_t *ids, const int32_t *labels, int64_t batch, int64_t seq,
                             double router_aux_coef, float *loss, float *ce, float *aux, al_error *err) {
    if (!t || !ids || !labels) return al_fail(err, AL_ERR_ARG, "trainer forward: NULL argument");
    const al_model_hparams *hp = &t->hp;
    if (batch < 1 || batch > t->max_batch || seq < 2 || seq > t->max_seq)
        return al_fail(err, AL_ERR_ARG, "trainer forward: %lld × %lld tokens; the trainer takes 1 to %lld × 2 to %lld",
                       (long long)batch, (long long)seq, (long long)t->max_batch, (long long)t->max_seq);
    const int64_t N = batch * seq, D = hp->hidden, V = hp->vocab, H = hp->n_heads, KV = hp->n_kv_heads,
                  hd = hp->head_dim, E = hp->n_experts, K = E ? hp->top_k : 0;
    const int64_t qw = H * hd, kw = KV * hd, F = E ? hp->moe_ffn_hidden : hp->ffn_hidden;
    for (int64_t i = 0; i < N; i++) {
        if (ids[i] < 0 || ids[i] >= V)
            return al_fail(err, AL_ERR_ARG, "trainer forward: id %d at %lld is outside the vocabulary of %lld",
                           (int)ids[i], (long long)i, (long long)V);
        if (labels[i] != -100 && (labels[i] < 0 || labels[i] >= V))
            return al_fail(err, AL_ERR_ARG, "trainer forward: label %d at %lld is neither -100 nor an id",
                           (int)labels[i], (long long)i);
    }
    /* targets: row (b, t) predicts labels[b, t+1] (MiniMind's shift); the last of each row none */
    int64_t n_targets = 0;
    for (int64_t b = 0; b < batch; b++)
        for (int64_t s = 0; s < seq; s++) {
            const int32_t y = s + 1 < seq ? labels[b * seq + s + 1] : -100;
            t->targets[b * seq + s] = y == -100 ? -1 : y;
            n_targets += y != -100;
        }
    if (!n_targets) return al_fail(err, AL_ERR_ARG, "trainer forward: no label to learn (all are -100)");
    if (!t->packed_ok) pack_all(t);
    memcpy(t->ids, ids, (size_t)N * sizeof *ids);
    t->batch = batch, t->seq = seq, t->aux_coef = router_aux_coef;

    /* 1. token embedding */
    float *x = t->x_final; /* the residual stream, carried in place; each layer keeps its input */
    for (int64_t i = 0; i < N; i++) memcpy(x + i * D, W(AL_MP_EMBED, 0, 0) + (int64_t)ids[i] * D, (size_t)D * sizeof(float));
    double aux_total = 0.0;
    for (int64_t l = 0; l < hp->n_layers; l++) {
        layer_acts *a = &t->layers[l];
        memcpy(a->x_in, x, (size_t)(N * D) * sizeof(float));
        /* 2. attention: norm, projections, QK-Norm, RoPE, causal attention, output projection */
        al_tr_rmsnorm_forward(a->xn, a->r1, a->x_in, W(AL_MP_ATTN_NORM, l, 0), N, D, hp->eps);
        linear(t, a->q_raw, a->xn, S(AL_MP_WQ, l, 0), N, qw, D);
        linear(t, a->k_raw, a->xn, S(AL_MP_WK, l, 0), N, kw, D);
        linear(t, a->v, a->xn, S(AL_MP_WV, l, 0), N, kw, D);
        if (hp->qk_norm) {
            al_tr_rmsnorm_forward(a->q_n, a->rq, a->q_raw, W(AL_MP_Q_NORM, l, 0), N * H, hd, hp->eps);
            al_tr_rmsnorm_forward(a->k_n, a->rk, a->k_raw, W(AL_MP_K_NORM, l, 0), N * KV, hd, hp->eps);
        } else {
            memcpy(a->q_n, a->q_raw, (size_t)(N * qw) * sizeof(float));
            memcpy(a->k_n, a->k_raw, (size_t)(N * kw) * sizeof(float));
        }
        memcpy(a->q, a->q_n, (size_t)(N * qw) * sizeof(float));
        memcpy(a->k, a->k_n, (size_t)(N * kw) * sizeof(float));
        const int inter = hp->rope_style == AL_ROPE_INTERLEAVED;
        al_tr_rope(a->q, t->rope_cos, t->rope_sin, N, seq, H, hd, inter, 0);
        al_tr_rope(a->k, t->rope_cos, t->rope_sin, N, seq, KV, hd, inter, 0);
        al_tr_attention_forward(a->ctx, a->att, a->q, a->k, a->v, batch, seq, H, KV, hd, t->dT);
        linear(t, a->h, a->ctx, S(AL_MP_WO, l, 0), N, D, qw);
        for (int64_t i = 0; i < N * D; i++) a->h[i] += a->x_in[i]; /* h = x + attn */
        /* 3. FFN: norm, then SwiGLU, or the router and its experts; none in an attention-only
         *    model (intermediate_size 0: MiniMind's empty FeedForward adds zeros) */
        if (!E && !F) {
            memcpy(x, a->h, (size_t)(N * D) * sizeof(float)); /* x = h */
            continue;
        }
        al_tr_rmsnorm_forward(a->hn, a->r2, a->h, W(AL_MP_FFN_NORM, l, 0), N, D, hp->eps);
        if (!E) {
            linear(t, a->g, a->hn, S(AL_MP_GATE, l, 0), N, F, D);
            linear(t, a->u, a->hn, S(AL_MP_UP, l, 0), N, F, D);
            al_tr_swiglu_forward(a->a, a->g, a->u, N * F);
            linear(t, x, a->a, S(AL_MP_DOWN, l, 0), N, D, F);
        } else {
            linear(t, a->probs, a->hn, S(AL_MP_ROUTER, l, 0), N, E, D);
            for (int64_t i = 0; i < N; i++) {
                float *p = a->probs + i * E;
                float max = -INFINITY;
                for (int64_t e = 0; e < E; e++) max = p[e] > max ? p[e] : max;
                double sum = 0.0;
                for (int64_t e = 0; e < E; e++) sum += p[e] = expf(p[e] - max);
                for (int64_t e = 0; e < E; e++) p[e] = (float)(p[e] / sum);
                int32_t *top = a->top_ids + i * K;
                float *w = a->top_w + i * K;
                top_k(p, E, K, top);
                double wsum = 0.0;
                for (int64_t j = 0; j < K; j++) wsum += w[j] = p[top[j]];
                if (hp->norm_topk_prob)
                    for (int64_t j = 0; j < K; j++) w[j] = (float)(w[j] / (wsum + 1e-20));
            }
            for (int64_t e = 0; e < E; e++) {
                float *g = a->g + e * N * F, *u = a->u + e * N * F, *act = a->a + e * N * F;
                linear(t, g, a->hn, S(AL_MP_EXPERT_GATE, l, e), N, F, D);
                linear(t, u, a->hn, S(AL_MP_EXPERT_UP, l, e), N, F, D);
                al_tr_swiglu_forward(act, g, u, N * F);
                linear(t, a->expert_out + e * N * D, act, S(AL_MP_EXPERT_DOWN, l, e), N, D, F);
            }
            memset(x, 0, (size_t)(N * D) * sizeof(float));
            for (int64_t i = 0; i < N; i++)
                for (int64_t j = 0; j < K; j++) {
                    const float w = a->top_w[i * K + j], *o = a->expert_out + ((int64_t)a->top_ids[i * K + j] * N + i) * D;
                    for (int64_t d = 0; d < D; d++) x[i * D + d] += w * o[d];
                }
            /* MiniMind's load-balancing loss: coef · E · Σ_k Σ_e f_ke · P_e, f_ke the share of
             * tokens whose k-th choice is e, P_e the mean router probability of e */
            if (router_aux_coef != 0.0) {
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
        }
        for (int64_t i = 0; i < N * D; i++) x[i] += a->h[i]; /* x = h + ffn */
    }
    /* 4. final norm, the head, the loss (the logits become dL/dlogits for the backward) */
    al_tr_rmsnorm_forward(t->xf, t->rf, x, W(AL_MP_FINAL_NORM, 0, 0), N, D, hp->eps);
    al_gemm(t->logits, V, t->xf, D, al_bmat_packed(t->packed + t->packed_at[hp->tied ? AL_MP_EMBED : AL_MP_LM_HEAD], D),
            N, V, D, 0);
    const double ce_loss = al_tr_cross_entropy(t->logits, t->targets, N, V, 1.0f, &t->n_targets, t->row_loss);
    t->aux = (float)aux_total;
    if (loss) *loss = (float)(ce_loss + aux_total);
    if (ce) *ce = (float)ce_loss;
    if (aux) *aux = (float)aux_total;
    t->have_forward = 1;
    return AL_OK;
}

/* ---- backward ------------------------------------------------------------------------------------------------ */

void al_trainer_zero_grad(al_trainer *t) {
    if (t) memset(t->g, 0, (size_t)t->n_params * sizeof *t->g);
}

al_status al_trainer_backward(al_trainer *t, float scale, al_error *err) {
    if (!t) return al_fail(err, AL_ERR_ARG, "trainer backward: NULL argument");
    if (!t->have_forward) return al_fail(err, AL_ERR_ARG, "trainer backward: no forward pass to go back through");
    const al_model_hparams *hp = &t->hp;
    const int64_t N = t->batch * t->seq, D = hp->hidden, V = hp->vocab, H = hp->n_heads, KV = hp->n_kv_heads,
                  hd = hp->head_dim, E = hp->n_experts, K = E ? hp->top_k : 0;
    const int64_t qw = H * hd, kw = KV * hd, F = E ? hp->moe_ffn_hidden : hp->ffn_hidden;
    /* 4'. the head and the final norm: dlogits = (softmax − onehot) / n · scale */
    float *dlogits = t->logits;
    if (scale != 1.0f)
        for (int64_t i = 0; i < N * V; i++) dlogits[i] *= scale;
    linear_backward(t, t->dh, 0, head_grad(t), dlogits, t->xf, head_weight(t), N, V, D);
    if (scale != 1.0f) /* the logits' gradient is kept at scale 1 for another backward */
        for (int64_t i = 0; i < N * V; i++) dlogits[i] /= scale;
    float *dx = t->dx; /* dL/dx of the residual stream */
    al_tr_rmsnorm_backward(dx, G(AL_MP_FINAL_NORM, 0, 0), t->dh, t->x_final, W(AL_MP_FINAL_NORM, 0, 0), t->rf, N, D, 0);
    for (int64_t l = hp->n_layers - 1; l >= 0; l--) {
        layer_acts *a = &t->layers[l];
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
            /* y = Σ_j w_j out_{e_j}  →  dout_e (per token, weighted), dw_j = dy · out_{e_j} */
            float *dw = t->scratch; /* [N, K] */
            memset(dhn, 0, (size_t)(N * D) * sizeof(float));
            for (int64_t i = 0; i < N; i++)
                for (int64_t j = 0; j < K; j++) {
                    const float *o = a->expert_out + ((int64_t)a->top_ids[i * K + j] * N + i) * D;
                    double dot = 0.0;
                    for (int64_t d = 0; d < D; d++) dot += (double)dx[i * D + d] * o[d];
                    dw[i * K + j] = (float)dot;
                }
            for (int64_t e = 0; e < E; e++) {
                /* dout_e [N, D]: w · dy for the tokens that chose e, 0 for the rest */
                float *dout = t->dexp;
                memset(dout, 0, (size_t)(N * D) * sizeof(float));
                for (int64_t i = 0; i < N; i++)
                    for (int64_t j = 0; j < K; j++)
                        if (a->top_ids[i * K + j] == e) {
                            const float w = a->top_w[i * K + j];
                            for (int64_t d = 0; d < D; d++) dout[i * D + d] += w * dx[i * D + d];
                        }
                const float *act = a->a + e * N * F, *g = a->g + e * N * F, *u = a->u + e * N * F;
                linear_backward(t, t->da, 0, G(AL_MP_EXPERT_DOWN, l, e), dout, act, W(AL_MP_EXPERT_DOWN, l, e), N, D, F);
                al_tr_swiglu_backward(t->dg, t->du, t->da, g, u, N * F);
                linear_backward(t, dhn, 1, G(AL_MP_EXPERT_GATE, l, e), t->dg, a->hn, W(AL_MP_EXPERT_GATE, l, e), N, F, D);
                linear_backward(t, dhn, 1, G(AL_MP_EXPERT_UP, l, e), t->du, a->hn, W(AL_MP_EXPERT_UP, l, e), N, F, D);
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
        if (ffn) al_tr_rmsnorm_backward(t->dh, G(AL_MP_FFN_NORM, l, 0), dhn, a->h, W(AL_MP_FFN_NORM, l, 0), a->r2, N, D, 1);
        /* 2'. attention: h = x_in + o(ctx)  →  dx_in = dh + attn'(dh) */
        linear_backward(t, t->dctx, 0, G(AL_MP_WO, l, 0), t->dh, a->ctx, W(AL_MP_WO, l, 0), N, D, qw);
        al_tr_attention_backward(t->dq, t->dk, t->dv, t->dctx, a->att, a->q, a->k, a->v, t->batch, t->seq, H, KV, hd,
                                 t->scratch);
        const int inter = hp->rope_style == AL_ROPE_INTERLEAVED;
        al_tr_rope(t->dq, t->rope_cos, t->rope_sin, N, t->seq, H, hd, inter, 1);
        al_tr_rope(t->dk, t->rope_cos, t->rope_sin, N, t->seq, KV, hd, inter, 1);
        if (hp->qk_norm) { /* the per-head norms, in place through dtmp */
            al_tr_rmsnorm_backward(t->dtmp, G(AL_MP_Q_NORM, l, 0), t->dq, a->q_raw, W(AL_MP_Q_NORM, l, 0), a->rq, N * H, hd, 0);
            memcpy(t->dq, t->dtmp, (size_t)(N * qw) * sizeof(float));
            al_tr_rmsnorm_backward(t->dtmp, G(AL_MP_K_NORM, l, 0), t->dk, a->k_raw, W(AL_MP_K_NORM, l, 0), a->rk, N * KV, hd, 0);
            memcpy(t->dk, t->dtmp, (size_t)(N * kw) * sizeof(float));
        }
        float *dxn = t->dtmp;
        linear_backward(t, dxn, 0, G(AL_MP_WQ, l, 0), t->dq, a->xn, W(AL_MP_WQ, l, 0), N, qw, D);
        linear_backward(t, dxn, 1, G(AL_MP_WK, l, 0), t->dk, a->xn, W(AL_MP_WK, l, 0), N, kw, D);
        linear_backward(t, dxn, 1, G(AL_MP_WV, l, 0), t->dv, a->xn, W(AL_MP_WV, l, 0), N, kw, D);
        memcpy(dx, t->dh, (size_t)(N * D) * sizeof(float));
        al_tr_rmsnorm_backward(dx, G(AL_MP_ATTN_NORM, l, 0), dxn, a->x_in, W(AL_MP_ATTN_NORM, l, 0), a->r1, N, D, 1);
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
    t->packed_ok = 0;
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
    if (out) memcpy(out, t->layers[layer].att, (size_t)(n < cap ? n : cap) * sizeof *out);
    return n;
}
