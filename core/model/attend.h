/* model/attend.h — the attention block every forward runs: the single layer (attention.c), the
 * whole decoder (model.c) and, through the decoder, the trainer. Projections, QK-Norm, RoPE,
 * the KV cache, then per head the scores against the keys each query may see, scaled, masked,
 * softmaxed, and the weighted sum of the values; the output projection last. Not public API. */
#ifndef ATTNLAB_MODEL_ATTEND_H
#define ATTNLAB_MODEL_ATTEND_H

#include "kernels/pool.h"

/* Queries processed a block at a time: the scores buffer holds one block's rows. */
#define AL_ATTEND_QUERY_BLOCK 32

/* One head, `seq` new queries at positions past .. past+seq-1 against keys 0 .. past+seq-1:
 * query s sees key t iff t <= past + s (the causal mask on the last `seq` columns).
 *   ctx[s, :] = softmax(q[s] · Kᵀ / scale, masked) · V      (ctx row stride ld_ctx)
 * q rows have stride ld_q; keys is Kᵀ as a GEMM operand (k = head_dim, n = tokens) and values
 * V (k = tokens, n = head_dim). weights, if not NULL, receives each query's softmax row, zero
 * past what it sees: [seq, ld_w] with ld_w >= past + seq. scores is scratch of
 * AL_ATTEND_QUERY_BLOCK · (past + seq) floats. Masked weights are exactly 0, so their terms
 * add nothing: a query's numbers do not depend on how many later keys exist. */
void al_attend_head(float *ctx, int64_t ld_ctx, float *weights, int64_t ld_w, const float *q,
                    int64_t ld_q, al_bmat keys, al_bmat values, int64_t seq, int64_t past,
                    int64_t head_dim, float scale, int fault_mask_leak, float *scores);

/* A decode step's query heads at one position, n_rep for each of `groups` KV heads (query head
 * g·n_rep + r reads KV head g), each seeing all `visible` keys:
 *   ctx[g·n_rep + r, :] = softmax(q[g·n_rep + r] · K_gᵀ / scale) · V_g
 * K_g, V_g: keys and values moved g·key_step and g·value_step floats on (consecutive KV heads).
 * q and ctx [groups · n_rep, head_dim] (row stride head_dim), weights rows of stride ld_w >=
 * visible or NULL; the numbers of al_attend_head for each head alone. The KV heads whose scores
 * fit the buffer go through weights · V together (al_gemm_batch). scores:
 * AL_ATTEND_QUERY_BLOCK · visible floats. */
void al_attend_heads(float *ctx, float *weights, int64_t ld_w, const float *q, al_bmat keys, int64_t key_step,
                     al_bmat values, int64_t value_step, int64_t groups, int64_t n_rep, int64_t visible,
                     int64_t head_dim, float scale, float *scores);

/* An attention block's weights as its forward reads them. */
typedef struct {
    const void *wq, *wk, *wv, *wo;    /* packed for the GEMM (al_pack_panels) from [H·D, hidden],
                                       * [KV·D, hidden], [KV·D, hidden], [hidden, H·D], in dtype */
    const float *q_norm, *k_norm;     /* [head_dim] each; read only with qk_norm */
    const float *rope_cos, *rope_sin; /* [positions, head_dim]: row m rotates position m */
    int32_t rope_style;               /* al_rope_style */
    /* The experiments' hooks on each head's output (its slice of ctx, what o_proj reads), at
     * every position: head_off[h] 1 zeroes head h (ablation); then head_patched[h] 1 puts
     * patch's slice in its place (activation patching). NULL: no such head. */
    const uint8_t *head_off;          /* [H] or NULL */
    const uint8_t *head_patched;      /* [H] or NULL */
    const float *patch;               /* [batch · seq, H·D], read with head_patched */
    al_weight_dtype dtype;            /* the element type of wq, wk, wv and wo */
    al_pool *pool;                    /* the threads the projections are split over, or NULL */
} al_attn_block;

/* Where the block writes what it computes, for n = batch · seq new tokens. A training forward
 * keeps these buffers for its backward; inference reuses one set for every layer. */
typedef struct {
    float *q_proj, *k_proj; /* [n, H·D], [n, KV·D]: the projections before QK-Norm, kept apart;
                             * NULL: QK-Norm runs in place in q and k */
    float *rms_q, *rms_k;   /* [n·H], [n·KV]: QK-Norm's divisors, or NULL */
    float *q;               /* [n, H, D] after QK-Norm and RoPE */
    float *k, *v;           /* [n, KV, D]: k after QK-Norm and RoPE, v as projected */
    float *ctx;             /* [n, H·D]: the heads merged, before o_proj */
    float *k_packed;        /* without a cache: one sequence's K as panels, KV · panels(seq) */
    float *scores;          /* [AL_ATTEND_QUERY_BLOCK, past + seq] scratch */
    float *scores_more;     /* [threads - 1, scores_each]: the pool's other threads' scratch, each
                             * as scores; NULL: the heads are attended to on the caller's thread */
    int64_t scores_each;    /* floats of one thread's scratch in scores_more */
} al_attn_bufs;

/* out = o_proj(attention(x)) for `seq` new tokens of each of `batch` sequences, as the seeds'
 * SimpleAttention and MiniMind's Attention compute it:
 *   1. q, k, v = x Wqᵀ, x Wkᵀ, x Wvᵀ, split into heads;
 *   2. QK-Norm (hp->qk_norm): RMSNorm over each head's head_dim values;
 *   3. RoPE (half-split or interleaved) at positions past .. past+seq-1;
 *   4. with a cache: k, v appended (past = its length), the queries attend to all past + seq
 *      keys; without: past = 0 and each sequence attends to its own keys;
 *   5. per sequence and query head h (KV head h / (H / KV)): al_attend_head, scale √head_dim
 *      (the heads shared out among w->pool's threads when b->scores_more gives each its
 *      scratch: each head's numbers are computed by one thread as on one, the same bits);
 *   6. the heads w->head_off names zeroed, those w->head_patched names replaced (ctx keeps
 *      what o_proj reads);
 *   7. the heads merged and projected: out = ctx Woᵀ.
 * weights, if not NULL, receives the softmax weights [batch, H, seq, past + seq]. The caller
 * has checked the sizes against the buffers and the cache. */
void al_attn_block_forward(float *out,                /* [batch · seq, hidden] */
                           float *weights,            /* [batch, H, seq, past + seq] or NULL */
                           const al_attn_bufs *b, const float *x, /* [batch · seq, hidden] */
                           const al_attn_hparams *hp, const al_attn_block *w, al_kv_cache *cache,
                           int64_t batch, int64_t seq);

#endif
