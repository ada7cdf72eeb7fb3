/* attend.c — the attention block every forward runs (model/attend.h): the single layer of the
 * tutorial, the decoder's blocks and, through the decoder, the trainer's forward, so that the
 * three compute the same numbers. Nothing here allocates: the caller owns every buffer. */
#include "attnlab/model.h"
#include "model/attend.h"
#include "model/kv_cache.h"
#include "model/norm.h"
#include "kernels/softmax.h"
#include "base/fault.h"

#include <math.h>
#include <string.h>

/* `rows` queries q [rows, head_dim] (row stride ld_q) against the first `visible` keys, row r
 * seeing the first seen0 + r·seen_step of them: scores [rows, visible] = q·Kᵀ, masked, scaled
 * and softmaxed in place, copied to weights if any. Consecutive positions of one head
 * (seen_step 1) or heads at one position (0). */
static void attend_scores(float *weights, int64_t ld_w, const float *q, int64_t ld_q, al_bmat keys, int64_t rows,
                          int64_t visible, int64_t seen0, int64_t seen_step, int64_t head_dim, float scale,
                          int fault_mask_leak, float *scores) {
    al_gemm(scores, visible, q, ld_q, keys, rows, visible, head_dim, 0);
    for (int64_t r = 0; r < rows; r++) {
        float *row = scores + r * visible;
        int64_t last = seen0 + r * seen_step - 1;
        if (fault_mask_leak && last + 1 < visible) last++;
        al_softmax_causal_row(row, visible, last + 1, scale);
        if (weights) {
            float *w = weights + r * ld_w;
            memcpy(w, row, (size_t)visible * sizeof(float));
            for (int64_t t = visible; t < ld_w; t++) w[t] = 0.0f;
        }
    }
}

void al_attend_head(float *ctx, int64_t ld_ctx, float *weights, int64_t ld_w, const float *q,
                    int64_t ld_q, al_bmat keys, al_bmat values, int64_t seq, int64_t past,
                    int64_t head_dim, float scale, int fault_mask_leak, float *scores) {
    for (int64_t s0 = 0; s0 < seq; s0 += AL_ATTEND_QUERY_BLOCK) {
        const int64_t rows = seq - s0 < AL_ATTEND_QUERY_BLOCK ? seq - s0 : AL_ATTEND_QUERY_BLOCK;
        /* keys the block's last query sees; query s0 + r sees past + s0 + r + 1 of them */
        const int64_t visible = past + s0 + rows;
        attend_scores(weights ? weights + s0 * ld_w : NULL, ld_w, q + s0 * ld_q, ld_q, keys, rows, visible, past + s0 + 1,
                      1, head_dim, scale, fault_mask_leak, scores);
        /* Masked weights are exactly 0, so their terms add nothing. */
        al_gemm(ctx + s0 * ld_ctx, ld_ctx, scores, visible, values, rows, head_dim, visible, 0);
    }
}

/* b with its elements moved `floats` on (the keys and values are float32). */
static al_bmat moved(al_bmat b, int64_t floats) {
    b.p = (const float *)b.p + floats;
    return b;
}

void al_attend_heads(float *ctx, float *weights, int64_t ld_w, const float *q, al_bmat keys, int64_t key_step,
                     al_bmat values, int64_t value_step, int64_t groups, int64_t n_rep, int64_t visible,
                     int64_t head_dim, float scale, float *scores) {
    /* KV heads whose query heads' scores fit the buffer together */
    const int64_t per_block = n_rep < AL_ATTEND_QUERY_BLOCK ? AL_ATTEND_QUERY_BLOCK / n_rep : 1;
    for (int64_t g0 = 0; g0 < groups; g0 += per_block) {
        const int64_t count = groups - g0 < per_block ? groups - g0 : per_block;
        for (int64_t r0 = 0; r0 < n_rep; r0 += AL_ATTEND_QUERY_BLOCK) {
            const int64_t rows = n_rep - r0 < AL_ATTEND_QUERY_BLOCK ? n_rep - r0 : AL_ATTEND_QUERY_BLOCK;
            /* 1. Each KV head's query heads against its keys: scores [count, rows, visible]. */
            for (int64_t g = 0; g < count; g++) {
                const int64_t h = (g0 + g) * n_rep + r0; /* the first query head */
                attend_scores(weights ? weights + h * ld_w : NULL, ld_w, q + h * head_dim, head_dim,
                              moved(keys, (g0 + g) * key_step), rows, visible, visible, 0, head_dim, scale, 0,
                              scores + g * rows * visible);
            }
            /* 2. weights · V, each KV head's product beside the others' (al_gemm_batch). */
            al_gemm_batch(ctx + (g0 * n_rep + r0) * head_dim, head_dim, n_rep * head_dim, scores, visible, rows * visible,
                          moved(values, g0 * value_step), value_step, count, rows, head_dim, visible, 0);
        }
    }
}

/* Step 5 of al_attn_block_forward for sequence s, shared out by heads: part `part` of `parts`
 * attends to query heads [u0, u1) (a decode step: KV heads [u0, u1) and their n_rep query
 * heads each), in the scratch of its own. */
typedef struct {
    float *weights; /* [batch, H, seq, L] or NULL */
    const al_attn_bufs *b;
    al_kv_cache *cache;
    int64_t H, KV, D, n_rep, seq, past, L;
    float scale;
    int grouped;
    int64_t s;
} attend_job;

static void attend_part(void *ctx, int part, int parts) {
    const attend_job *j = ctx;
    const al_attn_bufs *b = j->b;
    const int64_t H = j->H, KV = j->KV, D = j->D, seq = j->seq, L = j->L, s = j->s;
    float *scores = part == 0 ? b->scores : b->scores_more + (part - 1) * b->scores_each;
    const int64_t units = j->grouped ? KV : H, u0 = units * part / parts, u1 = units * (part + 1) / parts;
    if (u1 <= u0) return;
    if (j->grouped) {
        /* KV heads u0 .. u1-1's keys and values; the next ones a fixed step on in either layout */
        const int64_t key_step = j->cache ? al_kv_cache_head_step(j->cache, 0) : al_pack_panels_size(L, D);
        const int64_t value_step = j->cache ? al_kv_cache_head_step(j->cache, 1) : D;
        const al_bmat keys = j->cache ? al_kv_cache_keys(j->cache, s, u0) : al_bmat_packed(b->k_packed + u0 * key_step, D);
        const al_bmat values = j->cache ? al_kv_cache_values(j->cache, s, u0) : al_bmat_rows(b->v + s * KV * D + u0 * D, KV * D);
        const int64_t h0 = u0 * j->n_rep; /* the first query head */
        al_attend_heads(b->ctx + s * H * D + h0 * D, j->weights ? j->weights + (s * H + h0) * L : NULL, L,
                        b->q + s * H * D + h0 * D, keys, key_step, values, value_step, u1 - u0, j->n_rep, L, D, j->scale,
                        scores);
        return;
    }
    const int64_t panel_floats = al_pack_panels_size(L, D);
    for (int64_t h = u0; h < u1; h++) {
        const int64_t kvh = AL_FAULT(AL_FAULT_GQA_MODULO) ? h % KV : h / j->n_rep;
        const al_bmat keys = j->cache ? al_kv_cache_keys(j->cache, s, kvh) : al_bmat_packed(b->k_packed + kvh * panel_floats, D);
        const al_bmat values = j->cache ? al_kv_cache_values(j->cache, s, kvh)
                                        : al_bmat_rows(b->v + s * seq * KV * D + kvh * D, KV * D);
        al_attend_head(b->ctx + s * seq * H * D + h * D, H * D, j->weights ? j->weights + (s * H + h) * seq * L : NULL, L,
                       b->q + (s * seq * H + h) * D, H * D, keys, values, seq, j->past, D, j->scale,
                       AL_FAULT(AL_FAULT_MASK_LEAK), scores);
    }
}

/* y [n, out] = x [n, in] · Wᵀ with W packed (elements of the block's dtype). */
static void project(float *y, const float *x, const al_attn_block *w, const void *packed, int64_t n, int64_t out,
                    int64_t in) {
    al_gemm_pool(w->pool, y, out, x, in, al_bmat_panels(packed, w->dtype, in), n, out, in, 0);
}

void al_attn_block_forward(float *out, float *weights, const al_attn_bufs *b, const float *x,
                           const al_attn_hparams *hp, const al_attn_block *w, al_kv_cache *cache,
                           int64_t batch, int64_t seq) {
    const int64_t E = hp->hidden, H = hp->n_heads, KV = hp->n_kv_heads, D = hp->head_dim;
    const int64_t n = batch * seq, n_rep = H / KV;
    const int64_t past = cache ? al_kv_cache_len(cache) : 0;
    const int64_t L = past + seq; /* keys each new query can see, before masking */

    /* 1. Projections: q [n, H, D], k and v [n, KV, D] (the view(bsz, seq, heads, dim) split);
     *    q and k into q_proj and k_proj first when those are kept apart. */
    const int keep = hp->qk_norm && b->q_proj;
    project(keep ? b->q_proj : b->q, x, w, w->wq, n, H * D, E);
    project(keep ? b->k_proj : b->k, x, w, w->wk, n, KV * D, E);
    project(b->v, x, w, w->wv, n, KV * D, E);

    /* 2. QK-Norm: RMSNorm over each head's head_dim values, before RoPE. */
    if (hp->qk_norm) {
        al_rmsnorm_keep_forward(b->q, b->rms_q, keep ? b->q_proj : b->q, w->q_norm, n * H, D, hp->eps);
        al_rmsnorm_keep_forward(b->k, b->rms_k, keep ? b->k_proj : b->k, w->k_norm, n * KV, D, hp->eps);
    }

    /* 3. RoPE on q and k at absolute positions past .. past+seq-1 (V is never rotated). */
    const float *cos_t = w->rope_cos + past * D, *sin_t = w->rope_sin + past * D;
    for (int64_t s = 0; s < batch; s++) {
        float *q = b->q + s * seq * H * D, *k = b->k + s * seq * KV * D;
        if (w->rope_style == AL_ROPE_INTERLEAVED) {
            al_rope_apply_interleaved(q, cos_t, sin_t, seq, H, D);
            al_rope_apply_interleaved(k, cos_t, sin_t, seq, KV, D);
        } else {
            al_rope_apply(q, cos_t, sin_t, seq, H, D);
            al_rope_apply(k, cos_t, sin_t, seq, KV, D);
        }
    }

    /* 4. Keys and values to attend to: the cache after appending, or this call's own. */
    if (cache) {
        for (int64_t s = 0; s < batch; s++)
            for (int64_t t = 0; t < seq; t++)
                al_kv_cache_store(cache, s, past + t, b->k + (s * seq + t) * KV * D, b->v + (s * seq + t) * KV * D);
        al_kv_cache_commit(cache, batch, seq);
    }

    /* 5. Per sequence and head, a block of queries at a time: scores = q·Kᵀ over the keys the
     *    block may see, / √head_dim, causal mask on the last `seq` columns (query s sees key t
     *    iff t <= past + s), softmax, then weights·V. Query head h reads KV head h / n_rep
     *    (repeat_kv without the copy). */
    float scale = (float)sqrt((double)D);
    if (AL_FAULT(AL_FAULT_CACHE_DRIFT) && cache && past > 0) scale = nextafterf(scale, INFINITY);
    /*    One new token (a decode step): the n_rep query heads of a KV head, adjacent in q and
     *    ctx and seeing the same keys, go through the products together, n_rep rows of A a
     *    call (each output still summed over k in order, whatever the rows: the same bits). */
    const int grouped = seq == 1 && !AL_FAULT(AL_FAULT_GQA_MODULO);
    /*    The heads (a decode step: the KV heads) shared out among the pool's threads, each with
     *    its own scratch, when there is work enough to wake them for: q·Kᵀ and weights·V,
     *    H · seq · (past + seq/2) · D multiply-adds each. */
    const int64_t macs = 2 * H * seq * (past + (seq + 1) / 2) * D;
    const int shared = b->scores_more && al_pool_worth(w->pool, macs, grouped ? KV : H);
    attend_job job = {weights, b, cache, H, KV, D, n_rep, seq, past, L, scale, grouped, 0};
    for (int64_t s = 0; s < batch; s++) {
        if (!cache) al_pack_keys(b->k_packed, b->k + s * seq * KV * D, seq, KV, D);
        job.s = s;
        if (shared) al_pool_run(w->pool, attend_part, &job);
        else attend_part(&job, 0, 1);
    }

    /* 6. The experiments' hooks: a head switched off writes zeros, a patched head the given
     *    output, at every position (TransformerLens's hook_z, the input of o_proj). */
    if (w->head_off || w->head_patched)
        for (int64_t h = 0; h < H; h++) {
            const int off = w->head_off && w->head_off[h], patched = w->head_patched && w->head_patched[h];
            for (int64_t t = 0; (off || patched) && t < n; t++) {
                float *slice = b->ctx + t * H * D + h * D;
                if (patched) memcpy(slice, w->patch + t * H * D + h * D, (size_t)D * sizeof(float));
                else memset(slice, 0, (size_t)D * sizeof(float));
            }
        }

    /* 7. Heads merged ([n, H·D], already in that layout) and projected back to hidden. */
    project(out, b->ctx, w, w->wo, n, E, H * D);
}
