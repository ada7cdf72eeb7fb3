/* attnlab/train.h — training the whole decoder in C: a forward pass that keeps what the
 * backward pass needs, the backward pass of every op (embedding, RMSNorm, linear, RoPE in both
 * conventions, QK-Norm, causal attention with GQA, SwiGLU, the MoE router and experts with
 * MiniMind's load-balancing loss, the tied head, the shifted cross-entropy), and AdamW with
 * MiniMind's trainer around it (gradient accumulation, clipping by global norm, its cosine
 * learning-rate schedule). Checked against PyTorch autograd (tests/fixtures/gen_train.py).
 * Part of attnlab.h. */
#ifndef ATTNLAB_TRAIN_H
#define ATTNLAB_TRAIN_H

#include "attnlab/model.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct al_trainer al_trainer;

/* A trainer for a model of shape hp (its weights zero, its norms 1, until set through
 * al_trainer_param), for batches of up to max_batch sequences of up to max_seq tokens. Every
 * buffer (weights, gradients, AdamW's moments, the activations of one batch) is allocated here;
 * refused beyond AL_MAX_MODEL_BYTES. */
al_status al_trainer_create(const al_model_hparams *hp, int64_t max_batch, int64_t max_seq, al_trainer **out,
                            al_error *err);
void al_trainer_free(al_trainer *t);
const al_model_hparams *al_trainer_hparams(const al_trainer *t);

/* A weight (nn.Linear layout [out, in]) or its gradient, by the model's names (al_model_param,
 * the layer and, for an expert's weights, the expert); NULL where the model has no such weight
 * (*numel 0). Writing through al_trainer_param takes effect at the next forward. */
float *al_trainer_param(al_trainer *t, al_model_param p, int64_t layer, int64_t expert, int64_t *numel);
const float *al_trainer_weight(const al_trainer *t, al_model_param p, int64_t layer, int64_t expert, int64_t *numel);
const float *al_trainer_grad(const al_trainer *t, al_model_param p, int64_t layer, int64_t expert, int64_t *numel);
int64_t al_trainer_param_count(const al_trainer *t); /* numbers in all weights (tied: once) */

/* MiniMind's forward(labels=...) on ids [batch, seq]: the mean cross-entropy of logits[:, :-1]
 * against labels[:, 1:] over the targets that are not -100, plus for MoE models the router's
 * load-balancing loss (router_aux_coef, MiniMind's router_aux_loss_coef) summed over layers.
 * Keeps the activations for al_trainer_backward. *ce and *aux (may be NULL) receive the two
 * parts; the return is the status. AL_ERR_ARG for an id outside the vocabulary, a label that
 * is neither -100 nor an id, or no target at all. */
al_status al_trainer_forward(al_trainer *t, const int32_t *ids, const int32_t *labels, int64_t batch, int64_t seq,
                             double router_aux_coef, float *loss, float *ce, float *aux, al_error *err);

/* The gradients of (loss · scale) for the last forward, ADDED to the gradients so far (so that
 * micro-batches accumulate: scale 1 / accumulation_steps). */
al_status al_trainer_backward(al_trainer *t, float scale, al_error *err);
void al_trainer_zero_grad(al_trainer *t);

/* AdamW as torch.optim.AdamW (decoupled weight decay on every weight, then the moments, then
 * p -= lr / (1 - beta1^step) · m / (√v / √(1 - beta2^step) + eps)), after clipping the
 * gradients to a global L2 norm of clip (0: none) as clip_grad_norm_ (coef = clip /
 * (norm + 1e-6), applied when below 1). *grad_norm (may be NULL) receives the norm before
 * clipping. Counts its own steps. */
typedef struct {
    double lr;
    double beta1, beta2, eps, weight_decay;
    double clip; /* max global gradient norm; 0: no clipping */
} al_adamw_params;
al_adamw_params al_adamw_params_default(void); /* MiniMind's: lr 5e-4, 0.9, 0.999, 1e-8, 0.01, clip 1 */
al_status al_trainer_step(al_trainer *t, const al_adamw_params *p, float *grad_norm, al_error *err);
int64_t al_trainer_steps(const al_trainer *t); /* optimizer steps taken */
/* AdamW's moments [n] each (n = al_trainer_param_count, the weights' order), and its step
 * count set back, to save a run and go on with it exactly. */
int64_t al_trainer_moments(al_trainer *t, float **m, float **v);
void al_trainer_set_steps(al_trainer *t, int64_t steps);

/* What the last forward saw, for showing it: each row's −log p(target) [batch · seq] (NaN where
 * a row has no target: the last of each sequence, and labels -100), and one layer's attention
 * weights [batch, n_heads, seq, seq] (row q over keys 0..seq-1, 0 past q). Copy min(cap, count)
 * numbers to out (may be NULL) and return the count; -1 before any forward or for a layer out
 * of range. */
int64_t al_trainer_row_losses(const al_trainer *t, float *out, int64_t cap);
int64_t al_trainer_attention(const al_trainer *t, int64_t layer, float *out, int64_t cap);

/* MiniMind's schedule: lr · (0.1 + 0.45 · (1 + cos(π · step / total))). */
double al_lr_schedule(double lr, int64_t step, int64_t total);

#ifdef __cplusplus
}
#endif
#endif /* ATTNLAB_TRAIN_H */
