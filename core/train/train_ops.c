/* train_ops.c — the backward of each of the model's ops, the chain rule written out (as llm.c
 * writes GPT-2's), from what the model's forward kept (model/forward.h). Sums that PyTorch does in
 * float32 are done in float32 here too, except the reductions that decide a norm or a loss,
 * which run in double (within float32 rounding of PyTorch's either way). */
#include "attnlab/train.h"
#include "train/train_ops.h"
#include "kernels/gemm.h"

#include <math.h>
#include <string.h>

/* ---- RMSNorm ---------------------------------------------------------------------------------- */

void al_tr_rmsnorm_backward(float *dx, float *dw, const float *dy, const float *x, const float *w, const float *rms,
                            int64_t rows, int64_t d, int accumulate) {
    for (int64_t i = 0; i < rows; i++) {
        const float *xi = x + i * d, *dyi = dy + i * d;
        float *dxi = dx + i * d;
        const float ri = 1.0f / rms[i]; /* r = 1/√(mean(x²) + eps) */
        /* ∂y_j/∂x_k = w_j r δ_jk − w_j x_j r³ x_k / d  →  dx = r·(w⊙dy) − x · r³/d · Σ_j w_j dy_j x_j */
        double dot = 0.0;
        for (int64_t j = 0; j < d; j++) dot += (double)w[j] * dyi[j] * xi[j];
        const float c = (float)(dot * (double)ri * ri * ri / (double)d);
        for (int64_t j = 0; j < d; j++) {
            const float g = ri * w[j] * dyi[j] - xi[j] * c;
            dxi[j] = accumulate ? dxi[j] + g : g;
            dw[j] += dyi[j] * xi[j] * ri; /* dw_j = Σ_rows dy_j · x_j · r */
        }
    }
}

/* ---- causal attention with GQA -------------------------------------------------------------------- */

void al_tr_attention_backward(float *dq, float *dk, float *dv, const float *dctx, const float *att, const float *q,
                              const float *k, const float *v, int64_t batch, int64_t seq, int64_t n_heads,
                              int64_t n_kv_heads, int64_t head_dim, float *scratch, al_pool *pool) {
    const int64_t qw = n_heads * head_dim, kw = n_kv_heads * head_dim, rep = n_heads / n_kv_heads;
    const int64_t T = seq;
    const float scale = 1.0f / sqrtf((float)head_dim);
    memset(dk, 0, (size_t)(batch * seq * kw) * sizeof(float));
    memset(dv, 0, (size_t)(batch * seq * kw) * sizeof(float));
    float *datt = scratch, *tr = scratch + T * T, *vt = scratch + 2 * T * T; /* [T, T], [T, T], [hd, T] */
    for (int64_t b = 0; b < batch; b++)
        for (int64_t h = 0; h < n_heads; h++) {
            const int64_t kvh = h / rep;
            const float *a = att + (b * n_heads + h) * T * T;
            const float *dc = dctx + b * T * qw + h * head_dim, *qb = q + b * T * qw + h * head_dim;
            const float *kb = k + b * T * kw + kvh * head_dim, *vb = v + b * T * kw + kvh * head_dim;
            float *dqb = dq + b * T * qw + h * head_dim, *dkb = dk + b * T * kw + kvh * head_dim;
            float *dvb = dv + b * T * kw + kvh * head_dim;
            /* ctx = att · v  →  datt = dctx · vᵀ,  dv += attᵀ · dctx */
            for (int64_t s = 0; s < T; s++)
                for (int64_t d = 0; d < head_dim; d++) vt[d * T + s] = vb[s * kw + d];
            al_gemm_pool(pool, datt, T, dc, qw, al_bmat_rows(vt, T), T, T, head_dim, 0);
            for (int64_t i = 0; i < T; i++)
                for (int64_t j = 0; j < T; j++) tr[j * T + i] = a[i * T + j];
            al_gemm_pool(pool, dvb, kw, tr, T, al_bmat_rows(dc, qw), T, head_dim, T, 1);
            /* softmax: dscore_ts = a_ts (datt_ts − Σ_s' a_ts' datt_ts'), times the 1/√hd scale
             * (masked weights are 0, so are their scores' gradients) */
            for (int64_t t = 0; t < T; t++) {
                const float *ar = a + t * T;
                float *dr = datt + t * T;
                double dot = 0.0;
                for (int64_t s = 0; s <= t; s++) dot += (double)ar[s] * dr[s];
                for (int64_t s = 0; s < T; s++) dr[s] = s <= t ? ar[s] * (dr[s] - (float)dot) * scale : 0.0f;
            }
            /* score = q · kᵀ  →  dq = dS · k,  dk += dSᵀ · q */
            al_gemm_pool(pool, dqb, qw, datt, T, al_bmat_rows(kb, kw), T, head_dim, T, 0);
            for (int64_t i = 0; i < T; i++)
                for (int64_t j = 0; j < T; j++) tr[j * T + i] = datt[i * T + j];
            al_gemm_pool(pool, dkb, kw, tr, T, al_bmat_rows(qb, qw), T, head_dim, T, 1);
        }
}

/* ---- SwiGLU ----------------------------------------------------------------------------------------- */

static float sigmoid(float x) { return 1.0f / (1.0f + expf(-x)); }

void al_tr_swiglu_backward(float *dg, float *du, const float *da, const float *g, const float *u, int64_t n) {
    for (int64_t i = 0; i < n; i++) {
        const float sg = sigmoid(g[i]);
        du[i] = da[i] * g[i] * sg;                                 /* ∂/∂u = silu(g) */
        dg[i] = da[i] * u[i] * sg * (1.0f + g[i] * (1.0f - sg)); /* silu'(g) = σ(g)(1 + g(1 − σ(g))) */
    }
}

/* ---- cross-entropy ------------------------------------------------------------------------------------ */

double al_tr_cross_entropy(float *logits, const int32_t *targets, int64_t rows, int64_t vocab, float scale,
                           int64_t *count, float *row_loss) {
    int64_t n = 0;
    for (int64_t i = 0; i < rows; i++) n += targets[i] >= 0;
    *count = n;
    double total = 0.0;
    for (int64_t i = 0; i < rows; i++) {
        float *z = logits + i * vocab;
        if (targets[i] < 0) { /* ignore_index: no loss, no gradient */
            memset(z, 0, (size_t)vocab * sizeof(float));
            if (row_loss) row_loss[i] = NAN;
            continue;
        }
        /* p = softmax(z) (the core's vectorised softmax, in place);  loss_i = −log p_target;
         * dz = (p − onehot) · scale / n */
        al_softmax_forward(z, z, 1, vocab);
        const double loss_i = -log((double)z[targets[i]]);
        total += loss_i;
        if (row_loss) row_loss[i] = (float)loss_i;
        const float k = (float)((double)scale / (double)n);
        for (int64_t j = 0; j < vocab; j++) z[j] *= k;
        z[targets[i]] -= k;
    }
    return n ? total / (double)n : 0.0;
}
