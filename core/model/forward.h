/* model/forward.h — the decoder's forward over a batch of whole sequences, keeping every
 * activation a backward pass reads: the trainer's forward (train/trainer.c) is this one, as
 * llm.c trains and samples with one gpt2_forward. And the model's weight block, which the
 * trainer's gradients and AdamW moments mirror offset for offset. Not public API. */
#ifndef ATTNLAB_MODEL_FORWARD_H
#define ATTNLAB_MODEL_FORWARD_H

#include "base/internal.h"

/* What the forward keeps of one layer, for N = batch · seq tokens (H heads, KV KV heads, D
 * head_dim). Every pointer is the caller's; the forward writes each array whole. */
typedef struct {
    float *x_in;            /* [N, hidden] the block's input (the residual stream) */
    float *xn, *rms1;       /* [N, hidden] attention's pre-norm, [N] the rms it divided by */
    float *q_proj, *k_proj; /* [N, H·D], [N, KV·D] the projections before QK-Norm (qk_norm only) */
    float *rms_q, *rms_k;   /* [N·H], [N·KV] QK-Norm's divisors (qk_norm only) */
    float *q, *k, *v;       /* [N, H·D], [N, KV·D], [N, KV·D]: q and k after QK-Norm and RoPE */
    float *att;             /* [batch, H, seq, seq] the softmax weights, 0 past each query */
    float *ctx;             /* [N, H·D] the heads merged, before o_proj */
    float *h, *hn, *rms2;   /* [N, hidden] after attention's residual, its FFN pre-norm, [N] */
    /* dense: [N, ffn_hidden] each; MoE: [N · top_k, moe_ffn_hidden], the rows every expert ran,
     * expert by expert (expert_rows) */
    float *g, *u, *a;       /* gate, up, silu(gate) · up */
    float *probs;           /* MoE: [N, n_experts] the router's softmax */
    int32_t *top_ids;       /* MoE: [N, top_k] the experts each token chose */
    float *top_w;           /* MoE: [N, top_k] their weights (renormalised when norm_topk_prob) */
    float *expert_out;      /* MoE: [N · top_k, hidden] each row's expert output */
    int64_t *row_token;     /* MoE: [N · top_k] the token of each row */
    float *row_w;           /* MoE: [N · top_k] the row's weight (its token's for that expert) */
    int64_t *expert_rows;   /* MoE: [n_experts + 1] expert e ran rows expert_rows[e] .. [e + 1] */
} al_layer_acts;

typedef struct {
    al_layer_acts *layer;   /* [n_layers] */
    float *x_final;         /* [N, hidden] the stream after the last block */
    float *xf, *rms_f;      /* [N, hidden] its final norm, [N] the rms it divided by */
} al_forward_acts;

/* A model that also runs al_model_forward_batch on up to max_batch sequences of up to max_seq
 * tokens (its context: max_seq positions, which al_model_forward may use as well). */
al_status al_model_create_batches(const al_model_hparams *hp, int64_t max_batch, int64_t max_seq, al_model **out,
                                  al_error *err);
/* The bytes al_model_create_batches allocates; -1 if out of range. */
int64_t al_model_batches_bytes(const al_model_hparams *hp, int64_t max_batch, int64_t max_seq);

/* The forward of `batch` whole sequences ids [batch, seq] at positions 0 .. seq-1, each
 * attending to its own tokens (the caches and al_model_len untouched): logits
 * [batch · seq, vocab], and every activation into acts. The same numbers, token for token, as
 * al_model_forward gives each sequence after a reset. The caller has checked the ids and that
 * batch and seq fit the model's capacity. */
void al_model_forward_batch(al_model *m, const int32_t *ids, int64_t batch, int64_t seq, float *logits,
                            const al_forward_acts *acts);

/* Every weight in one block of al_model_param_count floats, in al_model_weights's order; a
 * weight's offset in it is the offset of its gradient or moment in an array laid out the same.
 * al_model_weight_offset: that offset and *numel (may be NULL) its count, a weight of no
 * numbers included (an attention-only model's FFN: numel 0); -1 where the model has no such
 * weight or an index is out of range. al_model_weights_changed: the block was written
 * (repacked before the next forward). */
float *al_model_weight_block(al_model *m);
int64_t al_model_weight_offset(const al_model *m, al_model_param p, int64_t layer, int64_t expert, int64_t *numel);
void al_model_weights_changed(al_model *m);

#endif
