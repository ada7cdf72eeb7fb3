/* adamw.c — one optimizer step as MiniMind's trainer takes it: the gradients clipped to a global
 * L2 norm (torch.nn.utils.clip_grad_norm_), then torch.optim.AdamW on every weight; and the
 * trainer's cosine learning-rate schedule. */
#include "attnlab/train.h"
#include "base/internal.h"
#include "train/trainer_internal.h"

#include <math.h>

al_adamw_params al_adamw_params_default(void) {
    al_adamw_params p = {5e-4, 0.9, 0.999, 1e-8, 0.01, 1.0};
    return p;
}

double al_lr_schedule(double lr, int64_t step, int64_t total) {
    if (total <= 0) return lr;
    return lr * (0.1 + 0.45 * (1.0 + cos(3.14159265358979323846 * (double)step / (double)total))); /* lr·(0.1 + 0.45(1 + cos(πs/T))) */
}

al_status al_trainer_step(al_trainer *t, const al_adamw_params *p, float *grad_norm, al_error *err) {
    if (!t || !p) return al_fail(err, AL_ERR_ARG, "AdamW: NULL argument");
    if (!(p->lr >= 0.0) || !(p->beta1 >= 0.0 && p->beta1 < 1.0) || !(p->beta2 >= 0.0 && p->beta2 < 1.0) ||
        !(p->eps > 0.0) || !(p->weight_decay >= 0.0) || !(p->clip >= 0.0))
        return al_fail(err, AL_ERR_ARG, "AdamW: lr %g, betas %g %g, eps %g, weight decay %g, clip %g: out of range",
                       p->lr, p->beta1, p->beta2, p->eps, p->weight_decay, p->clip);
    float *w, *g, *m, *v;
    const int64_t n = al_trainer_buffers(t, &w, &g, &m, &v);
    /* 1. the global norm √Σ g², and the clipping coefficient clip / (norm + 1e-6) when below 1 */
    double ss = 0.0;
    for (int64_t i = 0; i < n; i++) ss += (double)g[i] * g[i];
    const float norm = (float)sqrt(ss);
    if (grad_norm) *grad_norm = norm;
    if (!isfinite(norm)) return al_fail(err, AL_ERR_NONFINITE, "AdamW: the gradients are not finite (norm %g)", norm);
    if (p->clip > 0.0) {
        const float coef = (float)(p->clip / ((double)norm + 1e-6));
        if (coef < 1.0f)
            for (int64_t i = 0; i < n; i++) g[i] *= coef;
    }
    /* 2. AdamW, as torch.optim.AdamW's single-tensor step:
     *      w ← w · (1 − lr·wd);  m ← β1 m + (1 − β1) g;  v ← β2 v + (1 − β2) g²
     *      w ← w − (lr / (1 − β1^t)) · m / (√v / √(1 − β2^t) + eps) */
    const int64_t step = al_trainer_count_step(t);
    const double bc1 = 1.0 - pow(p->beta1, (double)step), bc2 = 1.0 - pow(p->beta2, (double)step);
    const float decay = (float)(1.0 - p->lr * p->weight_decay), step_size = (float)(p->lr / bc1);
    const float b1 = (float)p->beta1, b2 = (float)p->beta2, sqrt_bc2 = (float)sqrt(bc2), eps = (float)p->eps;
    for (int64_t i = 0; i < n; i++) {
        w[i] *= decay;
        m[i] = m[i] * b1 + g[i] * (1.0f - b1);
        v[i] = v[i] * b2 + g[i] * g[i] * (1.0f - b2);
        w[i] -= step_size * (m[i] / (sqrtf(v[i]) / sqrt_bc2 + eps));
    }
    return AL_OK;
}
