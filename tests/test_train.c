/* test_train.c — the training loop in C. Here: every gradient of the backward pass against
 * central finite differences of the forward pass (float32, a step small enough that no MoE
 * top-k choice flips), for a dense model with QK-Norm and half-split RoPE, one with
 * interleaved RoPE and no QK-Norm, and an MoE model with top-2 routing, renormalised weights
 * and the load-balancing loss; and the refusals. Against PyTorch autograd (losses, every
 * gradient, 20 AdamW steps): tests/train.test.mjs with tests/fixtures/train/. */
#include "attnlab.h"
#include "check.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A small random model: matrices U(-0.15, 0.15), norms 1 ± 0.1. */
static double frand(unsigned *s) {
    *s = *s * 1103515245u + 12345u;
    return (double)((*s >> 8) & 0xffff) / 65536.0 - 0.5;
}

static void fill(al_trainer *t, unsigned seed) {
    const al_model_hparams *hp = al_trainer_hparams(t);
    for (int p = 0; p < AL_MP_COUNT; p++)
        for (int64_t l = 0; l < hp->n_layers; l++)
            for (int64_t e = 0; e < (hp->n_experts ? hp->n_experts : 1); e++) {
                int64_t n = 0, shape[2];
                float *w = al_trainer_param(t, (al_model_param)p, l, e, &n);
                const int dims = al_model_param_shape(hp, (al_model_param)p, shape);
                for (int64_t i = 0; w && i < n; i++) w[i] = dims == 1 ? 1.0f + 0.2f * (float)frand(&seed) : 0.3f * (float)frand(&seed);
            }
}

static void check_gradients(const char *name, al_model_hparams hp, double aux_coef, float h) {
    al_error err = {0};
    al_trainer *t = NULL;
    CHECK(al_trainer_create(&hp, 2, 8, &t, &err) == AL_OK, "%s: create: %s", name, err.msg);
    if (!t) return;
    fill(t, 7);
    int32_t ids[16], labels[16];
    for (int i = 0; i < 16; i++) ids[i] = (i * 7 + 3) % (int)hp.vocab, labels[i] = i % 5 == 3 ? -100 : ids[i];
    float loss = 0.0f;
    CHECK(al_trainer_forward(t, ids, labels, 2, 8, aux_coef, &loss, NULL, NULL, &err) == AL_OK, "%s: %s", name, err.msg);
    al_trainer_zero_grad(t);
    CHECK(al_trainer_backward(t, 1.0f, &err) == AL_OK, "%s: %s", name, err.msg);
    int bad = 0, total = 0;
    for (int p = 0; p < AL_MP_COUNT; p++)
        for (int64_t l = 0; l < hp.n_layers; l++)
            for (int64_t e = 0; e < (hp.n_experts ? hp.n_experts : 1); e++) {
                int64_t n = 0;
                float *w = al_trainer_param(t, (al_model_param)p, l, e, &n);
                const float *g = al_trainer_grad(t, (al_model_param)p, l, e, NULL);
                for (int k = 0; w && k < 3; k++) {
                    const int64_t i = (k * 977 + 13) % n;
                    const float old = w[i];
                    float lp = 0.0f, lm = 0.0f;
                    w[i] = old + h;
                    al_trainer_param(t, (al_model_param)p, l, e, NULL); /* marks the weights changed */
                    al_trainer_forward(t, ids, labels, 2, 8, aux_coef, &lp, NULL, NULL, &err);
                    w[i] = old - h;
                    al_trainer_param(t, (al_model_param)p, l, e, NULL);
                    al_trainer_forward(t, ids, labels, 2, 8, aux_coef, &lm, NULL, NULL, &err);
                    w[i] = old;
                    al_trainer_param(t, (al_model_param)p, l, e, NULL);
                    const double fd = ((double)lp - lm) / (2.0 * h), an = g[i];
                    total++;
                    if (fabs(fd - an) > 2e-3 + 0.05 * fabs(fd)) {
                        bad++;
                        fprintf(stderr, "%s: weight %d layer %lld expert %lld [%lld]: finite difference %g, backward %g\n",
                                name, p, (long long)l, (long long)e, (long long)i, fd, an);
                    }
                }
            }
    CHECK(bad == 0 && total > 50, "%s: %d of %d gradients differ from finite differences", name, bad, total);
    al_trainer_free(t);
}

static al_model_hparams small(void) {
    al_model_hparams hp = {0};
    hp.vocab = 40, hp.hidden = 16, hp.n_layers = 2, hp.n_heads = 4, hp.n_kv_heads = 2, hp.head_dim = 4;
    hp.ffn_hidden = 24, hp.max_seq = 16, hp.rope_base = 10000.0, hp.eps = 1e-6f, hp.qk_norm = 1, hp.tied = 1;
    return hp;
}

static void test_refusals(void) {
    al_model_hparams hp = small();
    al_error err = {0};
    al_trainer *t = NULL;
    CHECK(al_trainer_create(&hp, 0, 8, &t, &err) == AL_ERR_ARG && !t, "batch 0: %s", err.msg);
    CHECK(al_trainer_create(&hp, 2, 99, &t, &err) == AL_ERR_ARG && !t, "seq past the model's: %s", err.msg);
    hp.n_kv_heads = 3;
    CHECK(al_trainer_create(&hp, 2, 8, &t, &err) == AL_ERR_CONFIG && !t, "bad heads: %s", err.msg);
    hp = small();
    CHECK(al_trainer_create(&hp, 2, 8, &t, &err) == AL_OK, "create: %s", err.msg);
    int32_t ids[16] = {0}, labels[16];
    for (int i = 0; i < 16; i++) labels[i] = -100;
    CHECK(al_trainer_forward(t, ids, labels, 2, 8, 0.0, NULL, NULL, NULL, &err) == AL_ERR_ARG &&
              strstr(err.msg, "no label"), "all -100: %s", err.msg);
    labels[3] = 40;
    CHECK(al_trainer_forward(t, ids, labels, 2, 8, 0.0, NULL, NULL, NULL, &err) == AL_ERR_ARG &&
              strstr(err.msg, "label 40"), "label past the vocabulary: %s", err.msg);
    ids[2] = -1;
    CHECK(al_trainer_forward(t, ids, labels, 2, 8, 0.0, NULL, NULL, NULL, &err) == AL_ERR_ARG &&
              strstr(err.msg, "id -1"), "bad id: %s", err.msg);
    CHECK(al_trainer_forward(t, ids, labels, 3, 8, 0.0, NULL, NULL, NULL, &err) == AL_ERR_ARG, "batch past the trainer's");
    al_trainer_free(t);
}

int main(void) {
    al_model_hparams hp = small();
    check_gradients("dense, QK-Norm, half-split RoPE, tied", hp, 0.0, 1e-2f);
    hp.qk_norm = 0, hp.rope_style = AL_ROPE_INTERLEAVED, hp.tied = 0, hp.n_kv_heads = 4;
    check_gradients("dense, interleaved RoPE, no QK-Norm, MHA, untied", hp, 0.0, 1e-2f);
    hp = small();
    hp.n_experts = 3, hp.top_k = 2, hp.moe_ffn_hidden = 20, hp.norm_topk_prob = 1, hp.tied = 0;
    check_gradients("MoE top-2 of 3, renormalised, load-balancing loss", hp, 0.1, 1e-3f);
    test_refusals();
    CHECK_DONE();
}
