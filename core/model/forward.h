/* model/forward.h — the decoder's forward over a batch of whole sequences, keeping every
 * activation a backward pass reads: the trainer's forward (train/trainer.c) is this one, as
 * llm.c trains and samples with one gpt2_forward. And the model's weight block, which the
 * trainer's gradients and AdamW moments mirror offset for offset. Not public API. */
#ifndef ATTNLAB_MODEL_FORWARD_H
#define ATTNLAB_MODEL_FORWARD_H

#include "base/internal.h"
#include "kernels/pool.h"

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

/* What one forward pass of al_model_forward_probe keeps and changes, for the experiments
 * (model/experiments.c), n tokens at positions 0 .. n-1 (H heads, D head_dim). Every pointer is
 * the caller's; NULL: not kept, not changed. */
typedef struct {
    int64_t first_layer;        /* blocks first_layer .. n_layers-1 run, on x0 */
    const float *x0;            /* [n, hidden] the stream entering block first_layer; NULL (only
                                 * with first_layer 0): the ids' embeddings, as al_model_forward */
    float *stream;              /* [n_layers + 1, n, hidden]: row l the stream entering block l,
                                 * row n_layers after the last (rows below first_layer untouched) */
    float *heads;               /* [n_layers, n, H·D] each block's head outputs as o_proj read them */
    float *ffn;                 /* [n_layers, n, hidden] each block's FFN or MoE output (zeros in
                                 * an attention-only model) */
    int64_t patch_layer;        /* the block whose heads patch_heads names take patch_value's
                                 * output at every position; -1: none */
    const uint8_t *patch_heads; /* [H] */
    const float *patch_value;   /* [n, H·D] */
    int64_t resid_layer;        /* the block whose incoming stream has its row resid_pos replaced
                                 * by resid_value; -1: none */
    int64_t resid_pos;
    const float *resid_value;   /* [hidden] */
} al_model_probe;

/* al_model_forward of ids [n] from empty caches (the model must be reset: al_model_len 0) with
 * the probe's captures and changes, the ablation (al_model_set_ablation) applied as always.
 * From first_layer > 0 the caches below it stay empty, so the model is reset after the pass;
 * otherwise they hold the ids, as after al_model_forward.
 * logits as al_model_forward's (rows 0, 1 or n). The probe's sizes are the caller's to check;
 * the ids are checked here. */
al_status al_model_forward_probe(al_model *m, const int32_t *ids, int64_t n, const al_model_probe *probe,
                                 float *logits, int64_t logits_rows, int64_t logits_cap, al_error *err);

/* The final RMSNorm and the head over `rows` rows of a stream x [rows, hidden]: logits
 * [rows, vocab], the numbers al_model_forward gives for the same stream, bit for bit. */
void al_model_head_forward(al_model *m, float *logits, const float *x, int64_t rows);

/* The threads the model's products are split over (al_model_set_threads), for the trainer's
 * backward to split its own over: NULL (one thread) until a pass has started them. */
al_pool *al_model_pool(const al_model *m);

/* Layer l's ablated heads [n_heads] (1: switched off), or NULL when none is off in the model. */
const uint8_t *al_model_heads_off(const al_model *m, int64_t layer);

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
