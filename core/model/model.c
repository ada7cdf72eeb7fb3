/* model.c — the whole decoder: token embedding, n_layers pre-norm blocks (attention with GQA,
 * optional QK-Norm, half-split or interleaved RoPE and a KV cache; a SwiGLU FFN, MoE's experts
 * or, attention-only, none), the final RMSNorm and the lm_head (tied to the embedding or not)
 * — MiniMind's MiniMindForCausalLM and Llama / llama2.c's Transformer.
 *
 * The same forward runs a batch of whole sequences for training (al_model_forward_batch,
 * model/forward.h): then each layer's activations go to the caller's store instead of the
 * scratch below, the caches stay untouched, and the numbers are those of al_model_forward.
 *
 * Memory, a model to train or write into (al_model_create): the weights in one allocation
 * carved into named arrays, in al_model_weights's order (the trainer's gradients and moments
 * mirror it); their GEMM-packed copies in a second, rebuilt only after weights were handed out
 * for writing. A model for inference (al_model_create_inference, what the loaders make) holds
 * its weights once: the norms as float32, every linear map (the head, and with it a tied
 * embedding) only as GEMM panels and an untied embedding as rows, both in the dtype they came
 * in, widened where they are read. Then one KV cache per layer for the
 * context reserved at create; and every activation of a forward call in a third allocation
 * sized for max_step tokens (the residual stream and the MoE's gathered rows for max_rows: a
 * batch). A forward call allocates nothing. */
#include "attnlab/model.h"
#include "model/attend.h"
#include "model/forward.h"
#include "model/kv_cache.h"
#include "model/norm.h"
#include "model/rope.h"
#include "torch/reduce.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Each layer's weights, each [out, in] or [dim], as pointers into the model's weight block:
 * the per-layer parameters AL_MP_ATTN_NORM .. AL_MP_DOWN, then the router, then each expert's
 * gate, up and down (MoE). */
enum { LAYER_PARAMS = AL_MP_DOWN - AL_MP_ATTN_NORM + 1, ROUTER_SLOT = LAYER_PARAMS, EXPERT_SLOTS = LAYER_PARAMS + 1 };
/* The linear maps packed for the GEMM, per layer: q, k, v, o, then the FFN's — gate, up and
 * down (dense) or the router then each expert's gate, up and down (MoE); the head last. */
enum { PACK_Q, PACK_K, PACK_V, PACK_O, PACK_FFN };

struct al_model {
    al_model_hparams hp;
    int64_t context;  /* positions reserved in the caches and RoPE tables */
    int64_t max_step; /* tokens per pass through the blocks */
    int64_t max_rows; /* tokens per batch pass (al_model_forward_batch); max_step otherwise */
    int64_t len;      /* tokens in the caches */
    al_attn_hparams attn_hp; /* the attention block's fields of hp */

    int inference;                       /* 1: the weights held once (al_model_create_inference) */
    al_weight_dtype wdtype;              /* the panels' elements (and an untied embedding's, inference) */
    void *store;                         /* inference: the one allocation of every weight */
    const void *embed_rows;              /* inference, untied: the embedding [vocab, hidden] in wdtype */
    float *weights;                      /* one allocation for every weight (not inference) */
    float *embed;                        /* [vocab, hidden] */
    float *final_norm;                   /* [hidden] */
    float *lm_head;                      /* [vocab, hidden], or the embedding when tied */
    float **layer;                       /* [n_layers][slots]: each layer's weights */
    int64_t slots;                       /* per layer: LAYER_PARAMS + 1 + 3 · n_experts */
    int64_t param_numel[AL_MP_COUNT];

    float *packed_mem;                   /* the linear maps as GEMM panels (not inference) */
    void **packed;                       /* [n_layers · packs + 1], head last: wdtype panels */
    int64_t packs;                       /* per layer: 4 + (3 dense, or 1 + 3 · n_experts) */
    int packed_stale;
    int64_t threads;                     /* asked for (al_model_set_threads); 1 after create */
    al_pool *pool;                       /* the threads the maps' GEMMs are split over; NULL: one
                                          * (started by the first pass that has use for them) */
    float *scores_more;                  /* [threads - 1, AL_ATTEND_QUERY_BLOCK, context] the pool's
                                          * other threads' attention scratch, made with it */

    int32_t *route_ids;                  /* [n_layers, max_step, top_k] the last pass's routing */
    float *route_w;                      /* [n_layers, max_step, top_k] */
    int64_t route_tokens;                /* tokens of the last pass (its last piece) */

    float *resid_norms;                  /* the caller's [n_layers + 1, n] capture, or NULL */
    int64_t resid_cap;                   /* its capacity in floats */
    int64_t resid_n, resid_at;           /* the call's n, and where this piece starts in it */
    al_model_parts kept;                 /* al_model_keep_parts: the caller's stores, or all NULL */

    uint8_t *head_off;                   /* [n_layers, n_heads] 1: the head is switched off */
    int64_t n_off;                       /* heads switched off */

    al_kv_cache **cache;                 /* [n_layers] */
    float *work;                         /* one allocation for everything below */
    float *rope_cos, *rope_sin;          /* [context, head_dim] */
    float *x;                            /* [max_rows, hidden] the residual stream */
    float *xn;                           /* [max_step, hidden] normed */
    float *q;                            /* [max_step, n_heads, head_dim] */
    float *k, *v;                        /* [max_step, n_kv_heads, head_dim] */
    float *ctx;                          /* [max_step, n_heads·head_dim] */
    float *gate, *up;                    /* [max_step, max(ffn_hidden, moe_ffn_hidden)] */
    float *probs;                        /* [max_step, n_experts] router softmax */
    float *rows;                         /* [max_rows, hidden] tokens routed to one expert */
    float *expert_out;                   /* [max_step, hidden] that expert's outputs */
    int64_t *row_token;                  /* [max_step] where each gathered row came from */
    float *row_w;                        /* [max_step] its weight for that expert */
    float *tmp;                          /* [max_rows, hidden] a block's output before the add */
    float *scores;                       /* [AL_ATTEND_QUERY_BLOCK, context] */
    float *k_packed;                     /* batches: [n_kv_heads, panels(context)] one sequence's K */
};

/* ---- configuration ------------------------------------------------------------------------ */

#define CHECK_RANGE(field, lo, hi)                                                          \
    do {                                                                                    \
        if (hp->field < (lo) || hp->field > (hi))                                           \
            return al_fail(err, hp->field > (hi) ? AL_ERR_LIMIT : AL_ERR_CONFIG,            \
                           "model: " #field " must be between %lld and %lld (got %lld)",    \
                           (long long)(lo), (long long)(hi), (long long)hp->field);         \
    } while (0)

al_status al_model_hparams_check(const al_model_hparams *hp, al_error *err) {
    if (!hp) return al_fail(err, AL_ERR_ARG, "model: no hyper-parameters");
    CHECK_RANGE(vocab, 1, AL_MAX_VOCAB);
    CHECK_RANGE(n_layers, 1, AL_MAX_LAYERS);
    CHECK_RANGE(ffn_hidden, 0, AL_MAX_FFN); /* 0: attention-only (MiniMind's intermediate_size 0) */
    CHECK_RANGE(max_seq, 1, AL_MAX_SEQ);
    if (hp->rope_style != AL_ROPE_HALF_SPLIT && hp->rope_style != AL_ROPE_INTERLEAVED)
        return al_fail(err, AL_ERR_CONFIG, "model: unknown RoPE style %d", (int)hp->rope_style);
    if (hp->tied != 0 && hp->tied != 1)
        return al_fail(err, AL_ERR_CONFIG, "model: tied must be 0 or 1 (got %d)", (int)hp->tied);
    if (hp->n_experts != 0) {
        CHECK_RANGE(n_experts, 1, AL_MAX_EXPERTS);
        CHECK_RANGE(top_k, 1, hp->n_experts);
        CHECK_RANGE(moe_ffn_hidden, 1, AL_MAX_FFN);
    }
    /* YaRN where MiniMind's formulas hold (see al_rope_yarn): f_i · (1 − ramp + ramp / factor)
     * with factor >= 1, ln(orig_max / (beta · 2π)) with orig_max >= 1 and each beta > 0, a ramp
     * from beta_fast's dimension up to beta_slow's only when beta_fast > beta_slow, and
     * attention_factor > 0 (NaN fails every comparison, so it is refused too). */
    if (hp->yarn_factor != 0.0) {
        if (!(hp->yarn_factor >= 1.0 && hp->yarn_factor <= 1e6))
            return al_fail(err, AL_ERR_CONFIG, "model: YaRN factor must be in [1, 1e6] (got %g)", hp->yarn_factor);
        CHECK_RANGE(yarn_original_max, 1, AL_MAX_SEQ);
        if (!(hp->yarn_beta_slow > 0.0 && hp->yarn_beta_fast > hp->yarn_beta_slow && hp->yarn_beta_fast < 1e6))
            return al_fail(err, AL_ERR_CONFIG, "model: YaRN betas must satisfy 0 < beta_slow < beta_fast < 1e6 "
                                               "(got beta_slow %g, beta_fast %g)",
                           hp->yarn_beta_slow, hp->yarn_beta_fast);
        if (!(hp->attention_factor > 0.0 && hp->attention_factor < 1e3))
            return al_fail(err, AL_ERR_CONFIG, "model: YaRN attention factor must be in (0, 1000) (got %g)",
                           hp->attention_factor);
    }
    /* The attention's own fields, checked as the single layer checks them. */
    const al_attn_hparams attn = {hp->hidden, hp->n_heads, hp->n_kv_heads, hp->head_dim,
                                  hp->rope_base, hp->eps, hp->qk_norm};
    return al_attn_hparams_check(&attn, err);
}

int al_model_param_shape(const al_model_hparams *hp, al_model_param p, int64_t shape[2]) {
    if (!hp || !shape) return -1;
    const int64_t q_out = hp->n_heads * hp->head_dim, kv_out = hp->n_kv_heads * hp->head_dim;
    shape[1] = 1;
    switch (p) {
    case AL_MP_EMBED: shape[0] = hp->vocab, shape[1] = hp->hidden; return 2;
    case AL_MP_ATTN_NORM:
    case AL_MP_FFN_NORM:
    case AL_MP_FINAL_NORM: shape[0] = hp->hidden; return 1;
    case AL_MP_WQ: shape[0] = q_out, shape[1] = hp->hidden; return 2;
    case AL_MP_WK:
    case AL_MP_WV: shape[0] = kv_out, shape[1] = hp->hidden; return 2;
    case AL_MP_WO: shape[0] = hp->hidden, shape[1] = q_out; return 2;
    case AL_MP_Q_NORM:
    case AL_MP_K_NORM: shape[0] = hp->head_dim; return hp->qk_norm ? 1 : 0;
    case AL_MP_GATE:
    case AL_MP_UP: shape[0] = hp->ffn_hidden, shape[1] = hp->hidden; return hp->n_experts ? 0 : 2;
    case AL_MP_DOWN: shape[0] = hp->hidden, shape[1] = hp->ffn_hidden; return hp->n_experts ? 0 : 2;
    case AL_MP_LM_HEAD: shape[0] = hp->vocab, shape[1] = hp->hidden; return hp->tied ? 0 : 2;
    case AL_MP_ROUTER: shape[0] = hp->n_experts, shape[1] = hp->hidden; return hp->n_experts ? 2 : 0;
    case AL_MP_EXPERT_GATE:
    case AL_MP_EXPERT_UP: shape[0] = hp->moe_ffn_hidden, shape[1] = hp->hidden; return hp->n_experts ? 2 : 0;
    case AL_MP_EXPERT_DOWN: shape[0] = hp->hidden, shape[1] = hp->moe_ffn_hidden; return hp->n_experts ? 2 : 0;
    default: return -1;
    }
}

static int64_t param_numel(const al_model_hparams *hp, al_model_param p) {
    int64_t shape[2] = {0, 0};
    const int nd = al_model_param_shape(hp, p, shape);
    return nd == 2 ? shape[0] * shape[1] : nd == 1 ? shape[0] : 0;
}

static int is_layer_param(al_model_param p) {
    return (p >= AL_MP_ATTN_NORM && p <= AL_MP_DOWN) || p >= AL_MP_ROUTER;
}
static int is_expert_param(al_model_param p) { return p >= AL_MP_EXPERT_GATE; }

static int64_t packs_per_layer(const al_model_hparams *hp) { return 4 + (hp->n_experts ? 1 + 3 * hp->n_experts : 3); }

/* The weight packed in slot `i` of a layer, and its expert (-1: none). */
static al_model_param pack_param(const al_model_hparams *hp, int64_t i, int64_t *expert) {
    static const al_model_param ATTN[4] = {AL_MP_WQ, AL_MP_WK, AL_MP_WV, AL_MP_WO};
    static const al_model_param DENSE[3] = {AL_MP_GATE, AL_MP_UP, AL_MP_DOWN};
    static const al_model_param EXPERT[3] = {AL_MP_EXPERT_GATE, AL_MP_EXPERT_UP, AL_MP_EXPERT_DOWN};
    *expert = -1;
    if (i < PACK_FFN) return ATTN[i];
    i -= PACK_FFN;
    if (!hp->n_experts) return DENSE[i];
    if (i == 0) return AL_MP_ROUTER;
    *expert = (i - 1) / 3;
    return EXPERT[(i - 1) % 3];
}

/* Floats of: the weights; their packed copies; the activations. Within the checked limits
 * every product stays far below 2^62. */
static int64_t weight_floats(const al_model_hparams *hp) {
    int64_t n = param_numel(hp, AL_MP_EMBED) + param_numel(hp, AL_MP_FINAL_NORM) +
                param_numel(hp, AL_MP_LM_HEAD);
    for (int p = AL_MP_ATTN_NORM; p <= AL_MP_DOWN; p++) n += hp->n_layers * param_numel(hp, (al_model_param)p);
    n += hp->n_layers * param_numel(hp, AL_MP_ROUTER);
    for (int p = AL_MP_EXPERT_GATE; p <= AL_MP_EXPERT_DOWN; p++)
        n += hp->n_layers * hp->n_experts * param_numel(hp, (al_model_param)p);
    return n;
}

static int64_t packed_elems(const al_model_hparams *hp) {
    int64_t n = al_pack_panels_size(hp->vocab, hp->hidden); /* the head */
    for (int64_t i = 0; i < packs_per_layer(hp); i++) {
        int64_t shape[2] = {0, 0}, expert;
        al_model_param_shape(hp, pack_param(hp, i, &expert), shape);
        n += hp->n_layers * al_pack_panels_size(shape[0], shape[1]);
    }
    return n;
}

static int64_t ffn_width(const al_model_hparams *hp) {
    return hp->n_experts && hp->moe_ffn_hidden > hp->ffn_hidden ? hp->moe_ffn_hidden : hp->ffn_hidden;
}

/* The tokens of a batch pass: max_batch sequences of the context (0: none, al_model_forward's
 * max_step). */
static int64_t max_rows_of(int64_t context, int64_t max_step, int64_t max_batch) {
    return max_batch ? max_batch * context : max_step;
}

/* A model for batches (max_batch > 0, al_model_create_batches) keeps its activations in the
 * caller's store; of its scratch it needs the stream, a block's output and an expert's
 * gathered rows for a whole batch, and one sequence's K packed. */
static int64_t work_floats(const al_model_hparams *hp, int64_t context, int64_t max_step, int64_t max_batch) {
    const int64_t q_width = hp->n_heads * hp->head_dim, kv_width = hp->n_kv_heads * hp->head_dim;
    const int64_t max_rows = max_rows_of(context, max_step, max_batch);
    const int64_t k_packed = max_batch ? hp->n_kv_heads * al_pack_panels_size(context, hp->head_dim) : 0;
    return 2 * context * hp->head_dim + max_step * (3 * hp->hidden + 2 * q_width + 2 * kv_width +
                                                    2 * ffn_width(hp) + hp->n_experts + 1) +
           3 * max_rows * hp->hidden + AL_ATTEND_QUERY_BLOCK * context + k_packed +
           2 * hp->n_layers * max_step * (hp->n_experts ? hp->top_k : 0); /* routing */
}

int64_t al_model_weights(const al_model_hparams *hp, al_weight_ref *out) {
    if (al_model_hparams_check(hp, NULL) != AL_OK) return -1;
    int64_t n = 0, shape[2];
    const al_model_param globals[] = {AL_MP_EMBED, AL_MP_FINAL_NORM, AL_MP_LM_HEAD};
    for (size_t i = 0; i < sizeof globals / sizeof globals[0]; i++) {
        if (al_model_param_shape(hp, globals[i], shape) <= 0) continue;
        if (out) out[n] = (al_weight_ref){globals[i], 0, 0};
        n++;
    }
    for (int64_t l = 0; l < hp->n_layers; l++)
        for (int p = AL_MP_ATTN_NORM; p < AL_MP_COUNT; p++) {
            if (p == AL_MP_FINAL_NORM || p == AL_MP_LM_HEAD || al_model_param_shape(hp, (al_model_param)p, shape) <= 0)
                continue;
            const int expert = p >= AL_MP_EXPERT_GATE && p <= AL_MP_EXPERT_DOWN;
            for (int64_t e = 0; e < (expert ? hp->n_experts : 1); e++) {
                if (out) out[n] = (al_weight_ref){(al_model_param)p, l, e};
                n++;
            }
        }
    return n;
}

int64_t al_model_param_count(const al_model_hparams *hp) {
    if (al_model_hparams_check(hp, NULL) != AL_OK) return -1;
    return weight_floats(hp);
}

int64_t al_model_flops_causal(const al_model_hparams *hp, int64_t n_new, int64_t n_past, int64_t logits_rows) {
    if (al_model_hparams_check(hp, NULL) != AL_OK || n_new < 0 || n_past < 0 || n_new > hp->max_seq ||
        n_past > hp->max_seq - n_new || logits_rows < 0 || logits_rows > n_new)
        return -1;
    const int64_t q_width = hp->n_heads * hp->head_dim, kv_width = hp->n_kv_heads * hp->head_dim;
    /* multiply-adds per token and layer: q, k, v and o, then the FFN it runs */
    const int64_t attn_proj = hp->hidden * (2 * q_width + 2 * kv_width);
    const int64_t ffn = hp->n_experts ? hp->hidden * hp->n_experts + hp->top_k * 3 * hp->hidden * hp->moe_ffn_hidden
                                      : 3 * hp->hidden * hp->ffn_hidden;
    /* keys seen by the n_new queries: Σ_s (n_past + s + 1); q·k and w·v, head_dim each */
    const int64_t keys_seen = n_new * n_past + n_new * (n_new + 1) / 2;
    const int64_t attn = 2 * hp->n_heads * hp->head_dim * keys_seen;
    /* Each factor is within the limits; their products are estimated in double first so that
     * the exact int64 sum is formed only below 2^53. */
    const double estimate = 2.0 * ((double)hp->n_layers * ((double)n_new * (double)(attn_proj + ffn) + (double)attn) +
                                   (double)logits_rows * (double)hp->hidden * (double)hp->vocab);
    if (estimate >= 9007199254740992.0) return -1;
    return 2 * (hp->n_layers * (n_new * (attn_proj + ffn) + attn) + logits_rows * hp->hidden * hp->vocab);
}

static int64_t dtype_size(al_weight_dtype dt) { return dt == AL_WEIGHTS_F32 ? 4 : 2; }

/* The norms' floats: the final one, and each layer's two (four with QK-Norm). */
static int64_t norm_floats(const al_model_hparams *hp) {
    return hp->hidden + hp->n_layers * (2 * hp->hidden + (hp->qk_norm ? 2 * hp->head_dim : 0));
}

/* The layouts: a model to write into holds its weights as float32 and packed copies of its
 * maps beside them; one for inference, the norms as float32 and the rest once, in dt. */
enum { WRITABLE = -1 };
static int64_t store_bytes(const al_model_hparams *hp, int mode) {
    if (mode == WRITABLE) return (int64_t)sizeof(float) * (weight_floats(hp) + packed_elems(hp));
    const int64_t embed_rows = hp->tied ? 0 : hp->vocab * hp->hidden;
    return (int64_t)sizeof(float) * norm_floats(hp) + dtype_size((al_weight_dtype)mode) * (embed_rows + packed_elems(hp));
}

/* Bytes of a model of layout `writable` (WRITABLE, or an inference model's dtype), for batches
 * of max_batch sequences (0: none); the arguments are within range. */
static int64_t bytes_for(const al_model_hparams *hp, int64_t context, int64_t max_step, int64_t max_batch, int writable) {
    const int64_t cache_floats = hp->n_layers * al_kv_cache_floats(hp->n_kv_heads, hp->head_dim, 1, context);
    return store_bytes(hp, writable) + (int64_t)sizeof(float) * (work_floats(hp, context, max_step, max_batch) + cache_floats);
}

int64_t al_model_bytes_needed(const al_model_hparams *hp, int64_t context, int64_t max_step) {
    if (al_model_hparams_check(hp, NULL) != AL_OK || context < 1 || context > hp->max_seq ||
        max_step < 1 || max_step > context)
        return -1;
    return bytes_for(hp, context, max_step, 0, WRITABLE);
}

int64_t al_model_inference_bytes(const al_model_hparams *hp, int64_t context, int64_t max_step, al_weight_dtype dtype) {
    if (al_model_bytes_needed(hp, context, max_step) < 0 || dtype < AL_WEIGHTS_F32 || dtype > AL_WEIGHTS_BF16) return -1;
    return bytes_for(hp, context, max_step, 0, (int)dtype);
}

int64_t al_model_batches_bytes(const al_model_hparams *hp, int64_t max_batch, int64_t max_seq) {
    if (al_model_hparams_check(hp, NULL) != AL_OK || max_seq < 1 || max_seq > hp->max_seq || max_batch < 1 ||
        max_batch > AL_MAX_BATCH)
        return -1;
    return bytes_for(hp, max_seq, max_seq, max_batch, WRITABLE);
}

/* ---- create, free, weights ---------------------------------------------------------------- */

al_status al_model_rope_freqs(const al_model_hparams *hp, float *freq, int64_t cap, al_error *err) {
    al_status st = al_model_hparams_check(hp, err);
    if (st != AL_OK) return st;
    if (!freq || cap < hp->head_dim / 2)
        return al_fail(err, AL_ERR_CAPACITY, "model RoPE: %lld frequencies, room for %lld", (long long)(hp->head_dim / 2),
                       (long long)cap);
    /* θ_i = base^(-2i/head_dim), stretched by YaRN when the model reaches past the original
     * context (MiniMind's precompute_freqs_cis) */
    al_rope_freqs(freq, hp->head_dim, hp->rope_base);
    if (hp->yarn_factor != 0.0 && hp->max_seq > hp->yarn_original_max)
        al_rope_yarn(freq, hp->head_dim, hp->rope_base, hp->yarn_factor, hp->yarn_original_max, hp->yarn_beta_fast,
                     hp->yarn_beta_slow);
    return AL_OK;
}

static int is_norm(int p) {
    return p == AL_MP_ATTN_NORM || p == AL_MP_FFN_NORM || p == AL_MP_Q_NORM || p == AL_MP_K_NORM || p == AL_MP_FINAL_NORM;
}

/* Every norm set to 1 (the weights' start: the rest is zeros). */
static void norms_to_one(al_model *m) {
    for (int64_t l = 0; l < m->hp.n_layers; l++)
        for (int p = AL_MP_ATTN_NORM; p <= AL_MP_DOWN; p++)
            if (is_norm(p)) {
                float *norm = m->layer[l * m->slots + (p - AL_MP_ATTN_NORM)];
                for (int64_t i = 0; norm && i < m->param_numel[p]; i++) norm[i] = 1.0f;
            }
    for (int64_t i = 0; i < m->hp.hidden; i++) m->final_norm[i] = 1.0f;
}

/* Each layer's (and the head's) panels from `pk` on, elements of `size` bytes; returns the end. */
static uint8_t *carve_panels(al_model *m, uint8_t *pk, int64_t size) {
    for (int64_t l = 0; l < m->hp.n_layers; l++)
        for (int64_t i = 0; i < m->packs; i++) {
            int64_t shape[2] = {0, 0}, expert;
            al_model_param_shape(&m->hp, pack_param(&m->hp, i, &expert), shape);
            m->packed[l * m->packs + i] = pk;
            pk += size * al_pack_panels_size(shape[0], shape[1]);
        }
    m->packed[m->hp.n_layers * m->packs] = pk;
    return pk + size * al_pack_panels_size(m->hp.vocab, m->hp.hidden);
}

/* A model to write into: the weight block in al_model_weights's order (embedding, final norm,
 * untied head, then layer by layer its weights in al_model_param's order, an expert's by
 * expert), and the packed copies apart. */
static void carve_writable(al_model *m) {
    const al_model_hparams *hp = &m->hp;
    float *w = m->weights;
    m->embed = w, w += m->param_numel[AL_MP_EMBED];
    m->final_norm = w, w += m->param_numel[AL_MP_FINAL_NORM];
    m->lm_head = hp->tied ? m->embed : w;
    w += m->param_numel[AL_MP_LM_HEAD]; /* 0 when tied */
    for (int64_t l = 0; l < hp->n_layers; l++) {
        float **slot = m->layer + l * m->slots;
        for (int p = AL_MP_ATTN_NORM; p <= AL_MP_DOWN; p++) {
            int64_t shape[2];
            slot[p - AL_MP_ATTN_NORM] = al_model_param_shape(hp, (al_model_param)p, shape) > 0 ? w : NULL;
            w += m->param_numel[p];
        }
        slot[ROUTER_SLOT] = m->param_numel[AL_MP_ROUTER] ? w : NULL;
        w += m->param_numel[AL_MP_ROUTER];
        for (int p = AL_MP_EXPERT_GATE; p <= AL_MP_EXPERT_DOWN; p++)
            for (int64_t e = 0; e < hp->n_experts; e++) {
                slot[EXPERT_SLOTS + 3 * e + (p - AL_MP_EXPERT_GATE)] = w;
                w += m->param_numel[p];
            }
    }
    memset(m->weights, 0, (size_t)weight_floats(hp) * sizeof(float));
    norms_to_one(m);
    carve_panels(m, (uint8_t *)m->packed_mem, sizeof(float));
}

/* A model for inference, one allocation (zeroed): the norms (float32: final, then layer by
 * layer), an untied embedding's rows, then every map's panels, layer by layer and the head
 * last, in wdtype. Only the norms have a slot: the maps are reached through their panels. */
static void carve_inference(al_model *m) {
    const al_model_hparams *hp = &m->hp;
    float *w = m->store;
    m->final_norm = w, w += hp->hidden;
    for (int64_t l = 0; l < hp->n_layers; l++)
        for (int p = AL_MP_ATTN_NORM; p <= AL_MP_DOWN; p++)
            if (is_norm(p) && m->param_numel[p]) {
                m->layer[l * m->slots + (p - AL_MP_ATTN_NORM)] = w;
                w += m->param_numel[p];
            }
    norms_to_one(m);
    uint8_t *rows = (uint8_t *)w;
    m->embed_rows = hp->tied ? NULL : rows;
    carve_panels(m, rows + (hp->tied ? 0 : dtype_size(m->wdtype) * hp->vocab * hp->hidden), dtype_size(m->wdtype));
}

/* al_model_create's work, and for batches of max_batch sequences of the context (0: none), in
 * layout `mode` (WRITABLE, or an inference model's dtype). */
static al_status create(const al_model_hparams *hp, int64_t context, int64_t max_step, int64_t max_batch, int mode,
                        al_model **out, al_error *err) {
    if (!out) return al_fail(err, AL_ERR_ARG, "model: no output pointer");
    *out = NULL;
    al_status st = al_model_hparams_check(hp, err);
    if (st != AL_OK) return st;
    if (context < 1 || context > hp->max_seq)
        return al_fail(err, AL_ERR_ARG, "model: a context of %lld positions; the model allows 1 to %lld",
                       (long long)context, (long long)hp->max_seq);
    if (max_step < 1 || max_step > context)
        return al_fail(err, AL_ERR_ARG, "model: %lld tokens per pass; give 1 to the context (%lld)",
                       (long long)max_step, (long long)context);
    const int64_t bytes = bytes_for(hp, context, max_step, max_batch, mode);
    if (bytes > AL_MAX_MODEL_BYTES)
        return al_fail(err, AL_ERR_LIMIT, "model: needs %lld MiB for a context of %lld; the limit is %lld MiB",
                       (long long)(bytes >> 20), (long long)context, (long long)(AL_MAX_MODEL_BYTES >> 20));

    al_model *m = calloc(1, sizeof *m);
    if (!m) return al_fail(err, AL_ERR_NOMEM, "model: out of memory");
    m->hp = *hp;
    m->context = context;
    m->max_step = max_step;
    m->threads = 1;
    const int64_t max_rows = max_rows_of(context, max_step, max_batch);
    m->max_rows = max_rows;
    m->attn_hp = (al_attn_hparams){hp->hidden, hp->n_heads, hp->n_kv_heads, hp->head_dim, hp->rope_base, hp->eps, hp->qk_norm};
    const int64_t L = hp->n_layers;
    m->inference = mode != WRITABLE;
    m->wdtype = m->inference ? (al_weight_dtype)mode : AL_WEIGHTS_F32;
    if (m->inference) m->store = calloc(1, (size_t)store_bytes(hp, mode));
    else m->weights = malloc((size_t)weight_floats(hp) * sizeof(float));
    if (!m->inference) m->packed_mem = malloc((size_t)packed_elems(hp) * sizeof(float));
    m->work = malloc((size_t)work_floats(hp, context, max_step, max_batch) * sizeof(float));
    m->slots = EXPERT_SLOTS + 3 * hp->n_experts;
    m->packs = packs_per_layer(hp);
    m->layer = calloc((size_t)(L * m->slots), sizeof(float *));
    m->packed = calloc((size_t)(L * m->packs + 1), sizeof(void *));
    m->row_token = malloc((size_t)max_step * sizeof(int64_t));
    m->cache = calloc((size_t)L, sizeof(al_kv_cache *));
    m->head_off = calloc((size_t)(L * hp->n_heads), 1);
    if ((m->inference ? !m->store : !m->weights || !m->packed_mem) || !m->work || !m->layer || !m->packed || !m->cache ||
        !m->row_token || !m->head_off) {
        al_model_free(m);
        return al_fail(err, AL_ERR_NOMEM, "model: out of memory for %lld MiB", (long long)(bytes >> 20));
    }
    const al_attn_capacity cap = {1, context};
    for (int64_t l = 0; l < L; l++)
        if ((st = al_kv_cache_create(&m->attn_hp, &cap, &m->cache[l], err)) != AL_OK) {
            al_model_free(m);
            return st;
        }

    for (int p = 0; p < AL_MP_COUNT; p++) m->param_numel[p] = param_numel(hp, (al_model_param)p);
    if (m->inference) carve_inference(m);
    else carve_writable(m);
    m->packed_stale = !m->inference;

    const int64_t S = max_step, q_width = hp->n_heads * hp->head_dim, kv_width = hp->n_kv_heads * hp->head_dim;
    float *p = m->work;
    m->rope_cos = p; p += context * hp->head_dim;
    m->rope_sin = p; p += context * hp->head_dim;
    m->x = p;        p += max_rows * hp->hidden;
    m->tmp = p;      p += max_rows * hp->hidden;
    m->rows = p;     p += max_rows * hp->hidden;
    m->xn = p;       p += S * hp->hidden;
    m->q = p;        p += S * q_width;
    m->ctx = p;      p += S * q_width;
    m->k = p;        p += S * kv_width;
    m->v = p;        p += S * kv_width;
    m->gate = p;     p += S * ffn_width(hp);
    m->up = p;       p += S * ffn_width(hp);
    m->probs = p;    p += S * hp->n_experts;
    m->expert_out = p; p += S * hp->hidden;
    m->row_w = p;    p += S;
    m->route_w = p;  p += hp->n_layers * S * (hp->n_experts ? hp->top_k : 0);
    m->route_ids = (int32_t *)p; p += hp->n_layers * S * (hp->n_experts ? hp->top_k : 0);
    m->scores = p;   p += AL_ATTEND_QUERY_BLOCK * context;
    m->k_packed = max_batch ? p : NULL;
    /* The same cos/sin table for both conventions: the interleaved one reads each row's
     * first head_dim/2 values (pair i at index i). YaRN stretches the frequencies first, as
     * MiniMind's precompute_freqs_cis does when the model reaches past the original context. */
    al_model_rope_table(hp, m->rope_cos, m->rope_sin, context);
    *out = m;
    return AL_OK;
}

al_status al_model_create(const al_model_hparams *hp, int64_t context, int64_t max_step,
                          al_model **out, al_error *err) {
    return create(hp, context, max_step, 0, WRITABLE, out, err);
}

al_status al_model_create_inference(const al_model_hparams *hp, int64_t context, int64_t max_step, al_weight_dtype dtype,
                                    al_model **out, al_error *err) {
    if (dtype < AL_WEIGHTS_F32 || dtype > AL_WEIGHTS_BF16) {
        if (out) *out = NULL;
        return al_fail(err, AL_ERR_ARG, "model: weight dtype %d is none of float32, float16 and bfloat16", (int)dtype);
    }
    return create(hp, context, max_step, 0, (int)dtype, out, err);
}

al_status al_model_create_batches(const al_model_hparams *hp, int64_t max_batch, int64_t max_seq, al_model **out,
                                  al_error *err) {
    if (max_batch < 1 || max_batch > AL_MAX_BATCH) {
        if (out) *out = NULL;
        return al_fail(err, AL_ERR_ARG, "model: batches of 1 to %d sequences (asked %lld)", AL_MAX_BATCH,
                       (long long)max_batch);
    }
    return create(hp, max_seq, max_seq, max_batch, WRITABLE, out, err);
}

void al_model_free(al_model *m) {
    if (!m) return;
    for (int64_t l = 0; m->cache && l < m->hp.n_layers; l++) al_kv_cache_free(m->cache[l]);
    free(m->cache);
    al_pool_free(m->pool);
    free(m->scores_more);
    free(m->weights);
    free(m->store);
    free(m->packed_mem);
    free(m->packed);
    free(m->layer);
    free(m->work);
    free(m->row_token);
    free(m->head_off);
    free(m);
}

const al_model_hparams *al_model_get_hparams(const al_model *m) { return m ? &m->hp : NULL; }

al_status al_model_set_threads(al_model *m, int64_t threads, al_error *err) {
    if (!m) return al_fail(err, AL_ERR_ARG, "model threads: NULL model");
    if (threads < 1 || threads > AL_MAX_THREADS)
        return al_fail(err, AL_ERR_ARG, "model threads: %lld; give 1 to %d", (long long)threads, AL_MAX_THREADS);
#if defined(__wasm__) && !defined(AL_WASM_THREADS)
    if (threads > 1) return al_fail(err, AL_ERR_ARG, "model threads: this build runs on one thread");
#elif defined(AL_WASM_THREADS)
    /* the threaded build borrows every thread its host started, and no other count */
    if (threads > 1 && threads != al_wasm_threads())
        return al_fail(err, AL_ERR_ARG, "model threads: %lld; this page started %d", (long long)threads, al_wasm_threads());
#endif
    if (threads == m->threads) return AL_OK;
    al_pool_free(m->pool);
    free(m->scores_more);
    m->pool = NULL;
    m->scores_more = NULL;
    m->threads = threads;
    return AL_OK;
}

int64_t al_model_threads(const al_model *m) { return m ? m->threads : -1; }
al_pool *al_model_pool(const al_model *m) { return m ? m->pool : NULL; }

/* The pool, started by the first pass of `rows` tokens whose widest map reaches
 * AL_POOL_MIN_MACS (kernels/pool.h): below it every product runs on the caller's thread, and a
 * pool started for nothing costs a thread's start and, at free, its wake-up and join (5 ms of
 * a stories260K generate of 250 tokens, whose products all stay below). Threads that cannot
 * be started leave the model on one, with the same numbers. */
static void start_pool(al_model *m, int64_t rows) {
    if (m->threads <= 1 || m->pool) return;
    const al_model_hparams *hp = &m->hp;
    int64_t widest = hp->vocab > hp->n_heads * hp->head_dim ? hp->vocab : hp->n_heads * hp->head_dim;
    if (ffn_width(hp) > widest) widest = ffn_width(hp);
    if (rows * widest * hp->hidden < AL_POOL_MIN_MACS) return;
    m->pool = al_pool_create((int)m->threads);
    if (!m->pool) {
        m->threads = 1;
        return;
    }
    /* each other thread's scratch for the heads it attends to (model/attend.c); without it the
     * heads stay on the caller's thread, the maps still split */
    m->scores_more = malloc((size_t)((m->threads - 1) * AL_ATTEND_QUERY_BLOCK * m->context) * sizeof(float));
}
int64_t al_model_context(const al_model *m) { return m ? m->context : -1; }
int64_t al_model_len(const al_model *m) { return m ? m->len : -1; }

void al_model_reset(al_model *m) {
    if (!m) return;
    for (int64_t l = 0; l < m->hp.n_layers; l++) al_kv_cache_reset(m->cache[l]);
    m->len = 0;
}

/* Where weight p (of layer, of expert) starts in the weight block, one that holds no numbers
 * included (an attention-only model's FFN); NULL if the model has no such weight or an index is
 * out of range. */
static int weight_exists(const al_model *m, al_model_param p, int64_t layer, int64_t expert) {
    int64_t shape[2];
    if (!m || p < 0 || p >= AL_MP_COUNT || al_model_param_shape(&m->hp, p, shape) <= 0) return 0;
    if (is_layer_param(p) && (layer < 0 || layer >= m->hp.n_layers)) return 0;
    return !is_expert_param(p) || (expert >= 0 && expert < m->hp.n_experts);
}

static float *weight_at(const al_model *m, al_model_param p, int64_t layer, int64_t expert) {
    if (!weight_exists(m, p, layer, expert)) return NULL;
    float *const *slot = m->layer + layer * m->slots;
    switch (p) {
    case AL_MP_EMBED: return m->embed;
    case AL_MP_FINAL_NORM: return m->final_norm;
    case AL_MP_LM_HEAD: return m->lm_head;
    case AL_MP_ROUTER: return slot[ROUTER_SLOT];
    case AL_MP_EXPERT_GATE:
    case AL_MP_EXPERT_UP:
    case AL_MP_EXPERT_DOWN: return slot[EXPERT_SLOTS + 3 * expert + (p - AL_MP_EXPERT_GATE)];
    default: return slot[p - AL_MP_ATTN_NORM];
    }
}

static float *param_ptr(const al_model *m, al_model_param p, int64_t layer, int64_t expert,
                        int64_t *numel) {
    float *w = weight_at(m, p, layer, expert);
    if (!w || m->param_numel[p] == 0) return NULL;
    if (numel) *numel = m->param_numel[p];
    return w;
}

const float *al_model_get_param(const al_model *m, al_model_param p, int64_t layer,
                                int64_t expert, int64_t *numel) {
    return param_ptr(m, p, layer, expert, numel);
}

float *al_model_param_for_write(al_model *m, al_model_param p, int64_t layer, int64_t expert,
                                int64_t *numel) {
    if (m && m->inference) return NULL; /* its weights are set with al_model_set_param */
    float *w = param_ptr(m, p, layer, expert, numel);
    if (w) m->packed_stale = 1; /* the caller may write: repack before the next pass */
    return w;
}

static void ensure_packed(al_model *m) {
    if (!m->packed_stale) return; /* never, for inference: the panels are the weights */
    for (int64_t l = 0; l < m->hp.n_layers; l++)
        for (int64_t i = 0; i < m->packs; i++) {
            int64_t shape[2] = {0, 0}, expert;
            const al_model_param p = pack_param(&m->hp, i, &expert);
            al_model_param_shape(&m->hp, p, shape);
            al_pack_panels(m->packed[l * m->packs + i], param_ptr(m, p, l, expert, NULL), shape[0], shape[1]);
        }
    al_pack_panels(m->packed[m->hp.n_layers * m->packs], m->lm_head, m->hp.vocab, m->hp.hidden);
    m->packed_stale = 0;
}

/* The packed slot of layer weight p (of expert e) in a layer's panels; -1 for the others. */
static int64_t pack_slot(al_model_param p, int64_t expert) {
    switch (p) {
    case AL_MP_WQ: return PACK_Q;
    case AL_MP_WK: return PACK_K;
    case AL_MP_WV: return PACK_V;
    case AL_MP_WO: return PACK_O;
    case AL_MP_GATE:
    case AL_MP_UP:
    case AL_MP_DOWN: return PACK_FFN + (p - AL_MP_GATE);
    case AL_MP_ROUTER: return PACK_FFN;
    case AL_MP_EXPERT_GATE:
    case AL_MP_EXPERT_UP:
    case AL_MP_EXPERT_DOWN: return PACK_FFN + 1 + 3 * expert + (p - AL_MP_EXPERT_GATE);
    default: return -1;
    }
}

/* Where an inference model holds weight p: float32 norms (*kind NORM), rows in wdtype (an
 * untied embedding, ROWS) or panels in wdtype (every map, a tied embedding as the head's,
 * PANELS); NULL if it has no such weight. */
enum { NORM, ROWS, PANELS };
static void *held_at(const al_model *m, al_model_param p, int64_t layer, int64_t expert, int *kind) {
    if (!weight_exists(m, p, layer, expert) || m->param_numel[p] == 0) return NULL;
    *kind = PANELS;
    if (is_norm(p)) {
        *kind = NORM;
        return weight_at(m, p, layer, expert);
    }
    if (p == AL_MP_EMBED && !m->hp.tied) {
        *kind = ROWS;
        return (void *)m->embed_rows;
    }
    if (p == AL_MP_EMBED || p == AL_MP_LM_HEAD) return m->packed[m->hp.n_layers * m->packs];
    return m->packed[layer * m->packs + pack_slot(p, expert)];
}

/* Little-endian element i of src (dtype dt), as stored bits: 32 for float32, 16 otherwise. */
static uint32_t element_raw(const uint8_t *src, al_weight_dtype dt, int64_t i) {
    if (dt != AL_WEIGHTS_F32) return (uint32_t)src[2 * i] | (uint32_t)src[2 * i + 1] << 8;
    const uint8_t *b = src + 4 * i;
    return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

/* Stores bits `raw` of dtype `from` as element `at` of dst (dtype `to`): as they are, or a
 * 16-bit value widened to float32 (exact). */
static void element_put(void *dst, al_weight_dtype to, int64_t at, uint32_t raw, al_weight_dtype from) {
    if (to != AL_WEIGHTS_F32) {
        ((uint16_t *)dst)[at] = (uint16_t)raw;
        return;
    }
    const uint32_t bits = from == AL_WEIGHTS_F16 ? al_f16_bits_to_f32_bits((uint16_t)raw)
                          : from == AL_WEIGHTS_BF16 ? raw << 16 : raw;
    ((float *)dst)[at] = al_float_of_bits(bits);
}

al_status al_model_set_param(al_model *m, al_model_param p, int64_t layer, int64_t expert, const void *src,
                             al_weight_dtype src_dtype, int64_t numel, al_error *err) {
    if (!m || (!src && numel > 0)) return al_fail(err, AL_ERR_ARG, "model weights: NULL argument");
    if (src_dtype < AL_WEIGHTS_F32 || src_dtype > AL_WEIGHTS_BF16)
        return al_fail(err, AL_ERR_ARG, "model weights: dtype %d is none of float32, float16 and bfloat16", (int)src_dtype);
    if (weight_exists(m, p, layer, expert) && m->param_numel[p] == 0 && numel == 0) return AL_OK; /* an empty FFN */
    int kind = PANELS;
    void *dst = m->inference ? held_at(m, p, layer, expert, &kind) : param_ptr(m, p, layer, expert, NULL);
    if (!dst) return al_fail(err, AL_ERR_ARG, "model weights: the model has no weight %d (layer %lld, expert %lld)",
                             (int)p, (long long)layer, (long long)expert);
    if (numel != m->param_numel[p])
        return al_fail(err, AL_ERR_SHAPE, "model weights: weight %d holds %lld numbers, %lld given", (int)p,
                       (long long)m->param_numel[p], (long long)numel);
    const al_weight_dtype to = m->inference && kind != NORM ? m->wdtype : AL_WEIGHTS_F32;
    /* Widening is exact; anything else would round, and is refused. */
    if (to != src_dtype && to != AL_WEIGHTS_F32)
        return al_fail(err, AL_ERR_DTYPE, "model weights: a model holding 16-bit weights takes them in its own dtype, "
                                          "not converted from another");
    const uint8_t *s = src;
    if (kind != PANELS || !m->inference) {
        for (int64_t i = 0; i < numel; i++) element_put(dst, to, i, element_raw(s, src_dtype, i), src_dtype);
        m->packed_stale |= !m->inference;
        return AL_OK;
    }
    /* W [rows, k] into its panels: element (r, c) at al_pack_panels_at(r, c, k); the padding
     * columns past the last row stay the zeros the model was created with. */
    int64_t shape[2] = {0, 0};
    al_model_param_shape(&m->hp, p, shape);
    const int64_t k = shape[1];
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    /* The same dtype on a little-endian machine: the stored bytes are the element, copied as
     * they are (what element_raw and element_put make of them, at a fifth of the instructions:
     * loading stories260K had cost as much as 15 of its decode steps). */
    if (to == src_dtype) {
        for (int64_t r = 0; r < shape[0]; r++) {
            const int64_t at = al_pack_panels_at(r, 0, k);
            if (to == AL_WEIGHTS_F32) {
                float *row = (float *)dst + at;
                for (int64_t c = 0; c < k; c++) memcpy(row + c * AL_GEMM_NR, s + 4 * (r * k + c), 4);
            } else {
                uint16_t *row = (uint16_t *)dst + at;
                for (int64_t c = 0; c < k; c++) memcpy(row + c * AL_GEMM_NR, s + 2 * (r * k + c), 2);
            }
        }
        return AL_OK;
    }
#endif
    for (int64_t r = 0; r < shape[0]; r++)
        for (int64_t c = 0; c < k; c++)
            element_put(dst, to, al_pack_panels_at(r, c, k), element_raw(s, src_dtype, r * k + c), src_dtype);
    return AL_OK;
}

int64_t al_model_read_rows(const al_model *m, al_model_param p, int64_t layer, int64_t expert, int64_t first,
                           int64_t count, float *out, int64_t cap) {
    if (!m || (!out && cap > 0)) return -1;
    int kind = NORM;
    const void *w = m->inference ? held_at(m, p, layer, expert, &kind) : param_ptr(m, p, layer, expert, NULL);
    if (!w) return -1;
    int64_t shape[2] = {0, 0};
    const int64_t rows = al_model_param_shape(&m->hp, p, shape) == 2 ? shape[0] : 1; /* a norm [dim]: one row */
    const int64_t k = m->param_numel[p] / rows, numel = count * k;
    if (first < 0 || count < 0 || first > rows - count) return -1;
    if (!out) return numel;
    if (cap < numel) return -1;
    if (kind == NORM || !m->inference) memcpy(out, (const float *)w + first * k, (size_t)numel * sizeof(float));
    else if (kind == ROWS) al_widen(out, (const uint8_t *)w + dtype_size(m->wdtype) * first * k, m->wdtype, numel, 1);
    else /* row r of W is lane r % NR of its panel, k elements NR apart */
        for (int64_t r = first; r < first + count; r++)
            al_widen(out + (r - first) * k, (const uint8_t *)w + dtype_size(m->wdtype) * al_pack_panels_at(r, 0, k),
                     m->wdtype, k, AL_GEMM_NR);
    return numel;
}

int64_t al_model_read_param(const al_model *m, al_model_param p, int64_t layer, int64_t expert, float *out, int64_t cap) {
    int64_t shape[2] = {0, 0};
    const int nd = m ? al_model_param_shape(&m->hp, p, shape) : 0;
    return al_model_read_rows(m, p, layer, expert, 0, nd == 2 ? shape[0] : 1, out, cap);
}

int64_t al_model_weight_bytes(const al_model *m) {
    return m ? store_bytes(&m->hp, m->inference ? (int)m->wdtype : WRITABLE) : -1;
}

al_weight_dtype al_model_weight_dtype(const al_model *m) { return m ? m->wdtype : AL_WEIGHTS_F32; }

/* x [hidden] = the embedding's row `id`, widened where it is held in 16 bits (in an inference
 * model's rows, or, tied, in lane id % NR of the head's panels). */
static void embed_row(const al_model *m, float *x, int64_t id) {
    const int64_t E = m->hp.hidden;
    if (!m->inference) memcpy(x, m->embed + id * E, (size_t)E * sizeof(float));
    else if (m->embed_rows) al_widen(x, (const uint8_t *)m->embed_rows + dtype_size(m->wdtype) * id * E, m->wdtype, E, 1);
    else al_widen(x, (const uint8_t *)m->packed[m->hp.n_layers * m->packs] + dtype_size(m->wdtype) * al_pack_panels_at(id, 0, E),
                  m->wdtype, E, AL_GEMM_NR);
}

/* ---- forward ------------------------------------------------------------------------------ */

/* Layer l's packed map `slot` (or the head: l = n_layers, slot 0), of wdtype elements. */
static const void *packed_map(const al_model *m, int64_t l, int64_t slot) { return m->packed[l * m->packs + slot]; }

/* y [n, out] = x [n, in] · Wᵀ with layer l's packed map `slot` (or the head: l = n_layers). */
static void linear(const al_model *m, int64_t l, int64_t slot, float *y, const float *x, int64_t n,
                   int64_t out_dim, int64_t in_dim) {
    al_gemm_pool(m->pool, y, out_dim, x, in_dim,
                 al_bmat_panels(packed_map(m, l, slot), m->wdtype, in_dim), n, out_dim, in_dim, 0);
}

static const float *layer_param(const al_model *m, int64_t l, al_model_param p) {
    return param_ptr(m, p, l, -1, NULL);
}

/* out [n, hidden] = down(silu(gate(x)) · up(x)) with the packed maps at slots g, g+1, g+2
 * (gate, up, down) of layer l: SwiGLU, silu(a) = a · σ(a) = a / (1 + e^−a). gate, up and act
 * [n, width] receive the three (act may be gate: inference keeps none of them). */
static void swiglu(const al_model *m, int64_t l, int64_t g, float *out, const float *x, int64_t n, int64_t width,
                   float *gate, float *up, float *act) {
    const int64_t E = m->hp.hidden;
    linear(m, l, g, gate, x, n, width, E);
    linear(m, l, g + 1, up, x, n, width, E);
    for (int64_t i = 0; i < n * width; i++) {
        const float a = gate[i];
        act[i] = a / (1.0f + expf(-a)) * up[i];
    }
    linear(m, l, g + 2, out, act, n, E, width);
}

/* MoE (MiniMind's MOEFeedForward): p = softmax(router(x)) per token; its top_k experts e with
 * weights p_e (renormalised to sum 1 when norm_topk_prob); out = Σ p_e · expert_e(x). Tokens
 * are gathered per expert and run through it together, the experts in order. Leaves the
 * routing in m->route_ids / m->route_w for layer l, or with a store A all of it (the router's
 * softmax, the choices, and every expert's rows one after the other) in A. */
static void moe(al_model *m, int64_t l, const al_layer_acts *A, float *out, const float *x, int64_t n) {
    const al_model_hparams *hp = &m->hp;
    const int64_t E = hp->hidden, X = hp->n_experts, K = hp->top_k, F = hp->moe_ffn_hidden;
    float *probs = A ? A->probs : m->probs;
    int32_t *ids = A ? A->top_ids : m->route_ids + l * m->max_step * K;
    float *w = A ? A->top_w : m->route_w + l * m->max_step * K;
    int64_t *row_token = A ? A->row_token : m->row_token;
    float *row_w = A ? A->row_w : m->row_w;
    linear(m, l, PACK_FFN, probs, x, n, X, E);
    al_softmax_forward(probs, probs, n, X);
    for (int64_t t = 0; t < n; t++) {
        /* top-k by repeated selection: the largest left, the first on ties (as torch.topk). */
        const float *p = probs + t * X;
        float sum = 0.0f;
        for (int64_t k = 0; k < K; k++) {
            int64_t best = -1;
            for (int64_t e = 0; e < X; e++) {
                int taken = 0;
                for (int64_t j = 0; j < k; j++) taken |= ids[t * K + j] == e;
                if (!taken && (best < 0 || p[e] > p[best])) best = e;
            }
            ids[t * K + k] = (int32_t)best;
            w[t * K + k] = p[best];
            sum += p[best];
        }
        if (hp->norm_topk_prob)
            for (int64_t k = 0; k < K; k++) w[t * K + k] = w[t * K + k] / (sum + 1e-20f);
    }
    memset(out, 0, (size_t)(n * E) * sizeof(float));
    int64_t at = 0; /* rows gathered for the experts before e (kept in A, one after the other) */
    for (int64_t e = 0; e < X; e++) {
        const int64_t first = A ? at : 0;
        int64_t rows = 0;
        for (int64_t t = 0; t < n; t++)
            for (int64_t k = 0; k < K; k++)
                if (ids[t * K + k] == e) {
                    memcpy(m->rows + rows * E, x + t * E, (size_t)E * sizeof(float));
                    row_token[first + rows] = t;
                    row_w[first + rows++] = w[t * K + k];
                }
        if (A) A->expert_rows[e] = at;
        at += rows;
        if (!rows) continue;
        float *expert_out = A ? A->expert_out + first * E : m->expert_out;
        swiglu(m, l, PACK_FFN + 1 + 3 * e, expert_out, m->rows, rows, F, A ? A->g + first * F : m->gate,
               A ? A->u + first * F : m->up, A ? A->a + first * F : m->gate);
        for (int64_t r = 0; r < rows; r++)
            for (int64_t i = 0; i < E; i++)
                out[row_token[first + r] * E + i] += row_w[first + r] * expert_out[r * E + i];
    }
    if (A) A->expert_rows[X] = at;
}

int64_t al_model_routing(const al_model *m, int64_t layer, int32_t *ids, float *weights, int64_t cap) {
    if (!m || !m->hp.n_experts || layer < 0 || layer >= m->hp.n_layers) return -1;
    const int64_t K = m->hp.top_k, n = m->route_tokens;
    if ((ids || weights) && cap < n * K) return -1;
    if (ids) memcpy(ids, m->route_ids + layer * m->max_step * K, (size_t)(n * K) * sizeof(int32_t));
    if (weights) memcpy(weights, m->route_w + layer * m->max_step * K, (size_t)(n * K) * sizeof(float));
    return n;
}

/* ‖x_t‖₂ of the piece's n tokens into row `row` of the caller's [n_layers + 1, n] capture. */
static void store_resid_norms(al_model *m, int64_t row, int64_t n) {
    for (int64_t t = 0; t < n; t++)
        m->resid_norms[row * m->resid_n + m->resid_at + t] = al_norm2_f32(m->x + t * m->hp.hidden, m->hp.hidden);
}

void al_model_capture_resid_norms(al_model *m, float *norms, int64_t cap) {
    if (!m) return;
    m->resid_norms = cap > 0 ? norms : NULL;
    m->resid_cap = norms ? cap : 0;
}

void al_model_keep_parts(al_model *m, const al_model_parts *parts) {
    if (!m) return;
    if (parts && parts->stride >= m->context) m->kept = *parts;
    else memset(&m->kept, 0, sizeof m->kept);
}

const uint8_t *al_model_heads_off(const al_model *m, int64_t layer) {
    return m && m->n_off && layer >= 0 && layer < m->hp.n_layers ? m->head_off + layer * m->hp.n_heads : NULL;
}

al_status al_model_set_ablation(al_model *m, const int32_t *heads, int64_t n, al_error *err) {
    if (!m || (!heads && n > 0)) return al_fail(err, AL_ERR_ARG, "ablation: NULL argument");
    const int64_t L = m->hp.n_layers, H = m->hp.n_heads;
    if (n < 0 || n > L * H)
        return al_fail(err, AL_ERR_ARG, "ablation: %lld heads; the model has %lld", (long long)n, (long long)(L * H));
    /* Checked whole before anything changes: a refused list leaves the last one on. */
    for (int64_t i = 0; i < n; i++) {
        if (heads[2 * i] < 0 || heads[2 * i] >= L)
            return al_fail(err, AL_ERR_ARG, "ablation: layer %d is not in [0, %lld)", (int)heads[2 * i], (long long)L);
        if (heads[2 * i + 1] < 0 || heads[2 * i + 1] >= H)
            return al_fail(err, AL_ERR_ARG, "ablation: head %d is not in [0, %lld)", (int)heads[2 * i + 1], (long long)H);
    }
    memset(m->head_off, 0, (size_t)(L * H));
    m->n_off = 0;
    for (int64_t i = 0; i < n; i++) {
        uint8_t *off = m->head_off + heads[2 * i] * H + heads[2 * i + 1];
        m->n_off += !*off; /* a head named twice counts once */
        *off = 1;
    }
    return AL_OK;
}

int64_t al_model_ablation(const al_model *m, int32_t *heads, int64_t cap) {
    if (!m || (!heads && cap > 0)) return -1;
    int64_t k = 0;
    for (int64_t lh = 0; lh < m->hp.n_layers * m->hp.n_heads; lh++)
        if (m->head_off[lh]) {
            if (k < cap) heads[2 * k] = (int32_t)(lh / m->hp.n_heads), heads[2 * k + 1] = (int32_t)(lh % m->hp.n_heads);
            k++;
        }
    return k;
}

/* A probe's row block [rows, width] of layer `row` in a capture [.., total, width], for the
 * piece that starts at token `at`. */
static float *probe_rows(float *capture, int64_t row, int64_t total, int64_t at, int64_t width) {
    return capture + (row * total + at) * width;
}

/* One pass through every block: `batch` sequences of `seq` new tokens in m->x (a batch only
 * with a store; otherwise batch 1 at positions len .. len+seq-1 through the caches). Leaves the
 * residual stream in m->x.
 *   attn: [n_layers, n_heads, seq, len + seq] or NULL (no store);
 *   acts: each layer's activations for a backward (batches), or NULL: the scratch, reused;
 *   probe: the experiments' captures and patch (model/forward.h) for tokens at .. at+seq-1 of
 *   `total`, from block probe->first_layer on; or NULL. */
static void blocks(al_model *m, int64_t batch, int64_t seq, float *attn, const al_forward_acts *acts,
                   const al_model_probe *probe, int64_t at, int64_t total) {
    const al_model_hparams *hp = &m->hp;
    const int64_t E = hp->hidden, H = hp->n_heads, F = hp->ffn_hidden, n = batch * seq, keys = m->len + seq;
    const int64_t HD = H * hp->head_dim;
    for (int64_t l = probe ? probe->first_layer : 0; l < hp->n_layers; l++) {
        const al_layer_acts *A = acts ? &acts->layer[l] : NULL;
        /* 1. Attention's pre-norm: xn = RMSNorm(x) · w. */
        if (A) memcpy(A->x_in, m->x, (size_t)(n * E) * sizeof(float));
        if (probe && probe->resid_layer == l && probe->resid_pos >= at && probe->resid_pos < at + n)
            memcpy(m->x + (probe->resid_pos - at) * E, probe->resid_value, (size_t)E * sizeof(float));
        if (probe && probe->stream) memcpy(probe_rows(probe->stream, l, total, at, E), m->x, (size_t)(n * E) * sizeof(float));
        float *xn = A ? A->xn : m->xn;
        al_rmsnorm_keep_forward(xn, A ? A->rms1 : NULL, m->x, layer_param(m, l, AL_MP_ATTN_NORM), n, E, hp->eps);
        /* 2.-5. q, k, v, QK-Norm (MiniMind), RoPE at the tokens' positions, K and V into the
         *    layer's cache (or, a batch, each sequence's own), each head over the keys it may
         *    see, then o_proj: the attention block the single layer runs (model/attend.c). */
        const al_attn_bufs bufs =
            A ? (al_attn_bufs){A->q_proj, A->k_proj, A->rms_q, A->rms_k, A->q, A->k, A->v, A->ctx, m->k_packed, m->scores,
                               m->scores_more, AL_ATTEND_QUERY_BLOCK * m->context}
              : (al_attn_bufs){NULL, NULL, NULL, NULL, m->q, m->k, m->v, m->ctx, NULL, m->scores,
                               m->scores_more, AL_ATTEND_QUERY_BLOCK * m->context};
        /*    The heads switched off, and a patch's, at the input of o_proj. */
        const int patched = probe && probe->patch_layer == l;
        const al_attn_block w = {packed_map(m, l, PACK_Q), packed_map(m, l, PACK_K), packed_map(m, l, PACK_V),
                                 packed_map(m, l, PACK_O), layer_param(m, l, AL_MP_Q_NORM),
                                 layer_param(m, l, AL_MP_K_NORM), m->rope_cos, m->rope_sin, hp->rope_style,
                                 al_model_heads_off(m, l), patched ? probe->patch_heads : NULL,
                                 patched ? probe->patch_value + at * HD : NULL, m->wdtype, m->pool};
        al_attn_block_forward(m->tmp, A ? A->att : attn ? attn + l * H * seq * keys : NULL, &bufs, xn, &m->attn_hp, &w,
                              A ? NULL : m->cache[l], batch, seq);
        if (probe && probe->heads) memcpy(probe_rows(probe->heads, l, total, at, HD), bufs.ctx, (size_t)(n * HD) * sizeof(float));
        /* h = x + o_proj(heads merged). */
        for (int64_t i = 0; i < n * E; i++) m->x[i] = m->x[i] + m->tmp[i];
        if (A) memcpy(A->h, m->x, (size_t)(n * E) * sizeof(float));
        /* 6. The FFN's pre-norm, then SwiGLU, or the mixture of SwiGLU experts (MoE), and
         * 7. out = h + FFN(...). An attention-only model (ffn_hidden 0: MiniMind's empty
         *    FeedForward, which adds zeros) has neither: out = h. */
        if (hp->n_experts || F) {
            float *hn = A ? A->hn : m->xn;
            al_rmsnorm_keep_forward(hn, A ? A->rms2 : NULL, m->x, layer_param(m, l, AL_MP_FFN_NORM), n, E, hp->eps);
            if (hp->n_experts) moe(m, l, A, m->tmp, hn, n);
            else swiglu(m, l, PACK_FFN, m->tmp, hn, n, F, A ? A->g : m->gate, A ? A->u : m->up, A ? A->a : m->gate);
            for (int64_t i = 0; i < n * E; i++) m->x[i] = m->x[i] + m->tmp[i];
        }
        if (probe && probe->ffn) {
            float *dst = probe_rows(probe->ffn, l, total, at, E);
            if (hp->n_experts || F) memcpy(dst, m->tmp, (size_t)(n * E) * sizeof(float));
            else memset(dst, 0, (size_t)(n * E) * sizeof(float));
        }
        /* 8. (captured only when asked) ‖out‖ per token, the residual stream after block l. */
        if (m->resid_norms && !A) store_resid_norms(m, l + 1, n);
    }
    if (probe && probe->stream)
        memcpy(probe_rows(probe->stream, hp->n_layers, total, at, E), m->x, (size_t)(n * E) * sizeof(float));
}

/* al_model_forward, with the experiments' probe (NULL: none). */
static al_status forward(al_model *m, const int32_t *ids, int64_t n, float *logits, int64_t logits_rows,
                         int64_t logits_cap, float *attn, int64_t attn_cap, const al_model_probe *probe,
                         al_error *err) {
    if (!m || (!ids && n > 0)) return al_fail(err, AL_ERR_ARG, "model forward: NULL argument");
    const al_model_hparams *hp = &m->hp;
    if (n < 1) return al_fail(err, AL_ERR_ARG, "model forward: no tokens");
    if (n > m->context - m->len)
        return al_fail(err, AL_ERR_CAPACITY, "model forward: %lld tokens after %lld would pass the context of %lld",
                       (long long)n, (long long)m->len, (long long)m->context);
    if (logits_rows != 0 && logits_rows != 1 && logits_rows != n)
        return al_fail(err, AL_ERR_ARG, "model forward: logits for 0, 1 or all %lld tokens (got %lld)",
                       (long long)n, (long long)logits_rows);
    if (logits_rows && !logits) return al_fail(err, AL_ERR_ARG, "model forward: no logits buffer");
    if (logits_cap < logits_rows * hp->vocab)
        return al_fail(err, AL_ERR_CAPACITY, "model forward: logits need %lld floats, the buffer holds %lld",
                       (long long)(logits_rows * hp->vocab), (long long)logits_cap);
    if (attn) {
        if (n > m->max_step)
            return al_fail(err, AL_ERR_CAPACITY, "model forward: attention weights for %lld tokens; at most %lld per call",
                           (long long)n, (long long)m->max_step);
        const int64_t need = hp->n_layers * hp->n_heads * n * (m->len + n);
        if (attn_cap < need)
            return al_fail(err, AL_ERR_CAPACITY, "model forward: attention weights need %lld floats, the buffer holds %lld",
                           (long long)need, (long long)attn_cap);
    }
    if (m->resid_norms && m->resid_cap < (hp->n_layers + 1) * n)
        return al_fail(err, AL_ERR_CAPACITY, "model forward: residual norms need %lld floats, the buffer holds %lld",
                       (long long)((hp->n_layers + 1) * n), (long long)m->resid_cap);
    for (int64_t i = 0; i < n; i++)
        if (ids[i] < 0 || ids[i] >= hp->vocab)
            return al_fail(err, AL_ERR_ARG, "token id %d at %lld is outside the vocabulary [0, %lld)",
                           (int)ids[i], (long long)i, (long long)hp->vocab);
    ensure_packed(m);
    start_pool(m, n < m->max_step ? n : m->max_step);
    const int64_t first = probe ? probe->first_layer : 0;
    al_model_probe kept = {0};
    kept.patch_layer = kept.resid_layer = -1;
    if (!probe && m->kept.stream) kept.stream = m->kept.stream, kept.heads = m->kept.heads, kept.ffn = m->kept.ffn;

    /* In pieces of at most max_step tokens: a token's numbers do not depend on the piece it
     * went through (each query sees the same keys, summed in the same order). */
    for (int64_t done = 0; done < n;) {
        const int64_t step = n - done < m->max_step ? n - done : m->max_step;
        /* 0. x = embedding rows of the ids, or the probe's stream entering its first block. */
        if (probe && probe->x0) memcpy(m->x, probe->x0 + done * hp->hidden, (size_t)(step * hp->hidden) * sizeof(float));
        for (int64_t t = 0; !(probe && probe->x0) && t < step; t++) embed_row(m, m->x + t * hp->hidden, ids[done + t]);
        if (m->resid_norms) {
            m->resid_n = n, m->resid_at = done;
            if (first == 0) store_resid_norms(m, 0, step); /* the stream as it enters block 0 */
        }
        /*    The stores kept (al_model_keep_parts) take the piece at its positions in the
         *    context, as a probe takes it at its place in the call. */
        if (kept.stream) blocks(m, 1, step, attn, NULL, &kept, m->len, m->kept.stride);
        else blocks(m, 1, step, attn, NULL, probe, done, n);
        m->len += step;
        m->route_tokens = step;
        /* 8. Final norm and lm_head for the rows asked for: logits = RMSNorm(x) · headᵀ. */
        const int64_t from = logits_rows == 1 ? (done + step == n ? step - 1 : step) : 0;
        const int64_t rows = logits_rows == 0 ? 0 : step - from;
        if (rows > 0) {
            al_rmsnorm_forward(m->xn, m->x + from * hp->hidden, m->final_norm, rows, hp->hidden, hp->eps);
            float *dst = logits + (logits_rows == 1 ? 0 : (done + from) * hp->vocab);
            linear(m, hp->n_layers, 0, dst, m->xn, rows, hp->vocab, hp->hidden);
        }
        done += step;
    }
    /* From a block above the first, the caches below it never received these tokens. */
    if (first > 0) al_model_reset(m);
    return AL_OK;
}

al_status al_model_forward(al_model *m, const int32_t *ids, int64_t n, float *logits,
                           int64_t logits_rows, int64_t logits_cap, float *attn, int64_t attn_cap,
                           al_error *err) {
    return forward(m, ids, n, logits, logits_rows, logits_cap, attn, attn_cap, NULL, err);
}

al_status al_model_forward_probe(al_model *m, const int32_t *ids, int64_t n, const al_model_probe *probe,
                                 float *logits, int64_t logits_rows, int64_t logits_cap, al_error *err) {
    if (!m || !probe) return al_fail(err, AL_ERR_ARG, "model forward: NULL argument");
    if (m->len != 0) return al_fail(err, AL_ERR_ARG, "model forward: an experiment starts from empty caches");
    if (probe->first_layer < 0 || probe->first_layer >= m->hp.n_layers || (probe->first_layer > 0 && !probe->x0))
        return al_fail(err, AL_ERR_ARG, "model forward: first layer %lld is not in [0, %lld) or has no stream",
                       (long long)probe->first_layer, (long long)m->hp.n_layers);
    if (probe->patch_layer >= 0 && (!probe->patch_heads || !probe->patch_value))
        return al_fail(err, AL_ERR_ARG, "model forward: a patch with no heads or no values");
    if (probe->resid_layer >= 0 && (!probe->resid_value || probe->resid_pos < 0 || probe->resid_pos >= n))
        return al_fail(err, AL_ERR_ARG, "model forward: a stream patch at position %lld of %lld tokens",
                       (long long)probe->resid_pos, (long long)n);
    return forward(m, ids, n, logits, logits_rows, logits_cap, NULL, 0, probe, err);
}

void al_model_head_forward(al_model *m, float *logits, const float *x, int64_t rows) {
    const al_model_hparams *hp = &m->hp;
    ensure_packed(m);
    start_pool(m, rows < m->max_step ? rows : m->max_step);
    /* 8. as in the forward, max_step rows at a time through the scratch: each row's numbers do
     * not depend on the rows beside it (al_gemm sums every output over k in order). */
    for (int64_t done = 0; done < rows; done += m->max_step) {
        const int64_t r = rows - done < m->max_step ? rows - done : m->max_step;
        al_rmsnorm_forward(m->xn, x + done * hp->hidden, m->final_norm, r, hp->hidden, hp->eps);
        linear(m, hp->n_layers, 0, logits + done * hp->vocab, m->xn, r, hp->vocab, hp->hidden);
    }
}

/* ---- for the trainer -------------------------------------------------------------------- */

void al_model_forward_batch(al_model *m, const int32_t *ids, int64_t batch, int64_t seq, float *logits,
                            const al_forward_acts *acts) {
    const al_model_hparams *hp = &m->hp;
    const int64_t n = batch * seq, E = hp->hidden;
    assert(acts && m->k_packed && n <= m->max_rows && seq <= m->context);
    ensure_packed(m);
    start_pool(m, n);
    /* 0. x = embedding rows of the ids. */
    for (int64_t t = 0; t < n; t++) embed_row(m, m->x + t * E, ids[t]);
    blocks(m, batch, seq, NULL, acts, NULL, 0, n);
    /* 8. Final norm and lm_head for every token: logits = RMSNorm(x) · headᵀ. */
    memcpy(acts->x_final, m->x, (size_t)(n * E) * sizeof(float));
    al_rmsnorm_keep_forward(acts->xf, acts->rms_f, m->x, m->final_norm, n, E, hp->eps);
    linear(m, hp->n_layers, 0, logits, acts->xf, n, hp->vocab, E);
}

float *al_model_weight_block(al_model *m) { return m ? m->weights : NULL; }

int64_t al_model_weight_offset(const al_model *m, al_model_param p, int64_t layer, int64_t expert, int64_t *numel) {
    if (m && m->inference) return -1;
    const float *w = weight_at(m, p, layer, expert);
    if (!w) return -1;
    if (numel) *numel = m->param_numel[p];
    return w - m->weights;
}

void al_model_weights_changed(al_model *m) {
    if (m) m->packed_stale = 1;
}
