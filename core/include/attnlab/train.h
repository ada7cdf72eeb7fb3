/* attnlab/train.h — training the whole decoder in C: a forward pass that keeps what the
 * backward pass needs, the backward pass of every op (embedding, RMSNorm, linear, RoPE in both
 * conventions, QK-Norm, causal attention with GQA, SwiGLU, the MoE router and experts with
 * MiniMind's load-balancing loss, the tied head, the shifted cross-entropy), and AdamW with
 * MiniMind's trainer around it (gradient accumulation, clipping by global norm, its cosine
 * learning-rate schedule). Checked against PyTorch autograd (tests/fixtures/gen_train.py).
 * Part of attnlab.h. */
#ifndef ATTNLAB_TRAIN_H
#define ATTNLAB_TRAIN_H

#include "attnlab/io.h"

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

/* The threads the trainer computes on from now on (al_model_set_threads on its model: 1 after
 * create, 1 to AL_MAX_THREADS, the same refusals in WebAssembly). The forward's and the
 * backward's products are split between them by output columns, the reductions (the loss, a
 * gradient summed over tokens, the gradient norm, AdamW) never: the losses, gradients, weights
 * and moments are the same, bit for bit, on any number. */
al_status al_trainer_set_threads(al_trainer *t, int64_t threads, al_error *err);
int64_t al_trainer_threads(const al_trainer *t); /* -1 if t is NULL */

/* Head ablation on the trainer's model (al_model_set_ablation): its forward zeroes those heads'
 * outputs before o_proj, and its backward sends nothing back through them. */
al_status al_trainer_set_ablation(al_trainer *t, const int32_t *heads /* [n, 2] (layer, head) */, int64_t n,
                                  al_error *err);

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

/* A fresh start (al_weights_init into the trainer's weights): every matrix N(0, 0.02²) from
 * PyTorch's generator seeded with seed, in al_model_weights' order, every norm 1. */
al_status al_trainer_init_weights(al_trainer *t, uint64_t seed, al_error *err);

/* ------------------------------------------------------------------------------------------
 * One training step for everyone (train/loop.c): `attnlab train` and the page's Train tab take
 * the same step on batches from a batch source, and measure the same held-out loss.
 * ------------------------------------------------------------------------------------------ */

/* The generator of micro-batch `micro` of optimizer step `step` (0-based; -1: the held-out
 * batches) of a run seeded with seed: PyTorch's, seeded with seed · 1000003 + step · 131 + micro
 * (in uint64_t), so a run resumed at any step draws what it would have drawn. NULL on out of
 * memory. */
al_rng *al_batch_rng(uint64_t seed, int64_t step, int64_t micro);

/* Where a run's batches come from. draw: ids [batch, seq] of micro-batch `micro` of optimizer
 * step `step` (the labels are the ids: MiniMind's shift is in the loss). held_out (NULL: no
 * held-out part): held-out batch k into ids, 1, or 0 when there is no batch k. seen (may be
 * NULL): called after each micro-batch's forward, for what the caller shows of it
 * (al_trainer_row_losses). ctx is passed to each. */
typedef struct {
    al_status (*draw)(void *ctx, int64_t step, int64_t micro, int32_t *ids, al_error *err);
    int (*held_out)(void *ctx, int64_t k, int32_t *ids);
    void (*seen)(void *ctx, const al_trainer *t, int64_t micro);
    void *ctx;
} al_batch_source;

typedef struct {
    int64_t batch, seq;    /* windows per micro-batch, tokens per window */
    int64_t accum;         /* micro-batches per optimizer step (gradient accumulation) */
    int64_t steps;         /* optimizer steps of the whole run: the schedule's length */
    double lr;             /* the schedule's peak */
    double aux_coef;       /* MiniMind's router_aux_loss_coef (MoE models only) */
    al_adamw_params adamw; /* clipping, weight decay, betas, eps; its lr is the schedule's */
} al_train_settings;

typedef struct {
    double loss;     /* the mean of the micro-batches' losses */
    double lr;       /* the rate this step took */
    float grad_norm; /* the global gradient norm before clipping */
} al_train_step_result;

/* Optimizer step `step` (0-based, below s->steps): `accum` micro-batches drawn from src into ids
 * [batch, seq] (the caller's; it holds the last one after), each forward then backward of
 * loss / accum; then the learning rate al_lr_schedule(lr, (step + 1) · accum, steps · accum)
 * (MiniMind's schedule counted in micro-batches, at this step's last one); then clipping and
 * AdamW. *out (may be NULL) receives the step's loss, rate and norm. The first failure's status
 * and message (a source's, the forward's, AdamW's). */
al_status al_train_step(al_trainer *t, const al_train_settings *s, const al_batch_source *src, int64_t step, int32_t *ids,
                        al_train_step_result *out, al_error *err);

/* The held-out loss: the mean loss of src's held-out batches (at most AL_TRAIN_HELD_OUT_BATCHES
 * of them) with the weights as they are, no gradient kept; NaN if there is none (or an
 * argument is NULL). */
#define AL_TRAIN_HELD_OUT_BATCHES 8
double al_train_held_out_loss(al_trainer *t, const al_train_settings *s, const al_batch_source *src, int32_t *ids);

/* A corpus stream's batches (al_corpus's ids and split, kept by the caller): training windows
 * from ids [0, split) drawn by al_batch_rng(seed, step, micro); held-out windows from
 * [split, n_tokens) drawn by a generator of their own (al_batch_rng(0xE7A1, -1, k)), the same at
 * every measurement. AL_ERR_ARG if a part is shorter than seq + 1 tokens, saying so. */
typedef struct {
    const int32_t *ids; /* [n_tokens] */
    int64_t n_tokens, split;
    int64_t batch, seq;
    uint64_t seed;
} al_stream_batches;
al_status al_stream_batches_init(al_stream_batches *sb, const int32_t *ids, int64_t n_tokens, int64_t split, int64_t batch,
                                 int64_t seq, uint64_t seed, al_error *err);
al_batch_source al_stream_batch_source(al_stream_batches *sb); /* its draw and held_out, ctx sb */

/* ------------------------------------------------------------------------------------------
 * A trainer's weights and MiniMind's files (the CLI's `attnlab train`).
 * ------------------------------------------------------------------------------------------ */

/* The weights as a model.safetensors image by MiniMind's names (float32; lm_head left out when
 * tied), with string metadata meta_kv [2·n_meta]; *out malloc'd (free it), *size its bytes. */
al_status al_trainer_export(const al_trainer *t, const char *const *meta_kv, int n_meta, uint8_t **out, size_t *size,
                            al_error *err);
/* config.json for a MiniMind folder of these weights: the one their shapes imply
 * (al_minimind_config_from_tensors), with the trainer's RoPE base and MoE top-k. *out
 * malloc'd (free it), *len its bytes. */
al_status al_trainer_config_json(const al_trainer *t, char **out, size_t *len, al_error *err);
/* The weights set from a model.safetensors of this shape (every weight present, float32, f16
 * or bf16, of its shape, finite: a NaN or infinity is refused naming the tensor). */
al_status al_trainer_import(al_trainer *t, const al_safetensors *st, al_error *err);
/* AdamW's moments as a safetensors image ("adamw.m", "adamw.v" [n]) with string metadata, and
 * back (with the step count the run had reached): a state that cannot be (a moment NaN or
 * infinite, a second moment below 0) is refused naming the tensor and the weight, and leaves
 * both moments 0. */
al_status al_trainer_export_state(al_trainer *t, const char *const *meta_kv, int n_meta, uint8_t **out, size_t *size,
                                  al_error *err);
al_status al_trainer_import_state(al_trainer *t, const al_safetensors *st, int64_t steps, al_error *err);
/* Before a checkpoint is written: every weight and moment finite, every second moment at
 * least 0; else AL_ERR_NONFINITE naming the first tensor that is not. Changes nothing. */
al_status al_trainer_check(al_trainer *t, al_error *err);

#ifdef __cplusplus
}
#endif
#endif /* ATTNLAB_TRAIN_H */
