/* experiments.c — the interpretability experiments on a whole model, each an option of the one
 * forward (al_model_forward_probe, model/forward.h), never a copy of it: the logit lens, direct
 * logit attribution and activation patching (head ablation is the model's own switch,
 * al_model_set_ablation in model.c). The points they read and change are TransformerLens's:
 * a head's output is its slice of the heads merged, o_proj's input (hook_z); the stream entering
 * block l is hook_resid_pre.
 *
 * The lens and the attribution also read a run already made, whose parts the model kept
 * (al_model_keep_parts: the page's lab keeps them as its tokens go through): *_of.
 *
 * Memory: each call allocates what it keeps of its runs (the streams [n_layers + 1, n, hidden],
 * the heads' outputs [n_layers, n, n_heads · head_dim], the FFNs' [n_layers, n, hidden]) and
 * frees it before it returns. */
#include "attnlab/model.h"
#include "model/forward.h"
#include "model/norm.h"

#include <stdlib.h>
#include <string.h>

/* ---- checks shared by the experiments ------------------------------------------------------ */

static al_status check_tokens(const al_model *m, const char *what, const int32_t *ids, int64_t n, al_error *err) {
    if (!m || !ids) return al_fail(err, AL_ERR_ARG, "%s: NULL argument", what);
    if (n < 1) return al_fail(err, AL_ERR_ARG, "%s: no tokens", what);
    if (n > al_model_context(m))
        return al_fail(err, AL_ERR_CAPACITY, "%s: %lld tokens; the model's context is %lld", what, (long long)n,
                       (long long)al_model_context(m));
    const int64_t V = al_model_get_hparams(m)->vocab;
    for (int64_t i = 0; i < n; i++)
        if (ids[i] < 0 || ids[i] >= V)
            return al_fail(err, AL_ERR_ARG, "%s: token id %d at %lld is outside the vocabulary [0, %lld)", what,
                           (int)ids[i], (long long)i, (long long)V);
    return AL_OK;
}

static al_status check_id(const al_model *m, const char *what, const char *field, int32_t id, al_error *err) {
    const int64_t V = al_model_get_hparams(m)->vocab;
    return id < 0 || id >= V ? al_fail(err, AL_ERR_ARG, "%s: %s %d is outside the vocabulary [0, %lld)", what, field,
                                       (int)id, (long long)V)
                             : AL_OK;
}

static al_status check_cap(const char *what, int64_t need, int64_t cap, al_error *err) {
    return cap < need ? al_fail(err, AL_ERR_CAPACITY, "%s: %lld values, room for %lld", what, (long long)need,
                                (long long)cap)
                      : AL_OK;
}

/* A probe that changes nothing and keeps nothing. */
static al_model_probe probe_none(void) {
    al_model_probe p;
    memset(&p, 0, sizeof p);
    p.patch_layer = -1, p.resid_layer = -1;
    return p;
}

/* ---- the logit lens -------------------------------------------------------------------------- */

/* The stream entering each block and after the last, [n_layers + 1, n, hidden], in a new array
 * (NULL after setting err); the caches then hold the ids. */
static float *run_streams(al_model *m, const char *what, const int32_t *ids, int64_t n, al_error *err) {
    const al_model_hparams *hp = al_model_get_hparams(m);
    float *stream = malloc((size_t)((hp->n_layers + 1) * n * hp->hidden) * sizeof(float));
    if (!stream) return al_fail(err, AL_ERR_NOMEM, "%s: out of memory for %lld tokens", what, (long long)n), NULL;
    al_model_probe p = probe_none();
    p.stream = stream;
    al_model_reset(m);
    if (al_model_forward_probe(m, ids, n, &p, NULL, 0, 0, err) != AL_OK) {
        free(stream);
        return NULL;
    }
    return stream;
}

al_status al_model_logit_lens(al_model *m, const int32_t *ids, int64_t n, float *lens, int64_t cap, al_error *err) {
    al_status st = check_tokens(m, "logit lens", ids, n, err);
    if (st != AL_OK) return st;
    const al_model_hparams *hp = al_model_get_hparams(m);
    if (!lens) return al_fail(err, AL_ERR_ARG, "logit lens: NULL argument");
    if ((st = check_cap("logit lens", (hp->n_layers + 1) * n * hp->vocab, cap, err)) != AL_OK) return st;
    float *stream = run_streams(m, "logit lens", ids, n, err);
    if (!stream) return err ? err->status : AL_ERR_NOMEM;
    /* lens[l] = head(RMSNorm(stream[l])): row n_layers is what the forward's step 8 computes. */
    al_model_head_forward(m, lens, stream, (hp->n_layers + 1) * n);
    free(stream);
    return AL_OK;
}

/* lens top and prob [n_layers + 1, n] of a stream [n_layers + 1, stride, hidden] (its first n
 * positions per layer): a block of rows at a time, each row's logits, then its argmax and its
 * softmax there. */
static al_status lens_top(al_model *m, const float *stream, int64_t n, int64_t stride, int32_t *top, float *prob,
                          al_error *err) {
    const al_model_hparams *hp = al_model_get_hparams(m);
    const int64_t V = hp->vocab, block = 32;
    float *logits = malloc((size_t)(block * V) * sizeof(float));
    if (!logits) return al_fail(err, AL_ERR_NOMEM, "logit lens: out of memory");
    for (int64_t l = 0; l <= hp->n_layers; l++)
        for (int64_t s0 = 0; s0 < n; s0 += block) {
            const int64_t k = n - s0 < block ? n - s0 : block, r0 = l * n + s0;
            al_model_head_forward(m, logits, stream + (l * stride + s0) * hp->hidden, k);
            for (int64_t r = 0; r < k; r++) {
                float *row = logits + r * V;
                const int64_t best = al_sample_greedy(row, V);
                al_softmax_forward(row, row, 1, V);
                top[r0 + r] = (int32_t)best;
                prob[r0 + r] = best >= 0 ? row[best] : 0.0f;
            }
        }
    free(logits);
    return AL_OK;
}

al_status al_model_logit_lens_top(al_model *m, const int32_t *ids, int64_t n, int32_t *top, float *prob,
                                  int64_t cap, al_error *err) {
    al_status st = check_tokens(m, "logit lens", ids, n, err);
    if (st != AL_OK) return st;
    const al_model_hparams *hp = al_model_get_hparams(m);
    if (!top || !prob) return al_fail(err, AL_ERR_ARG, "logit lens: NULL argument");
    if ((st = check_cap("logit lens", (hp->n_layers + 1) * n, cap, err)) != AL_OK) return st;
    float *stream = run_streams(m, "logit lens", ids, n, err);
    if (!stream) return err ? err->status : AL_ERR_NOMEM;
    st = lens_top(m, stream, n, n, top, prob, err);
    free(stream);
    return st;
}

al_status al_model_lens_top_of(al_model *m, const al_model_parts *run, int64_t n, int32_t *top, float *prob,
                               int64_t cap, al_error *err) {
    if (!m || !run || !run->stream || !top || !prob) return al_fail(err, AL_ERR_ARG, "logit lens: NULL argument");
    if (n < 1 || n > run->stride) return al_fail(err, AL_ERR_ARG, "logit lens: %lld tokens of %lld kept", (long long)n,
                                                 (long long)run->stride);
    const al_status st = check_cap("logit lens", (al_model_get_hparams(m)->n_layers + 1) * n, cap, err);
    return st == AL_OK ? lens_top(m, run->stream, n, run->stride, top, prob, err) : st;
}

/* ---- direct logit attribution ---------------------------------------------------------------- */

/* Target's attribution at each position, parts [L · H + 1 + L, n], from the parts of a run
 * (their first n positions of stride) made by step 1, the caller's. */
static al_status dla_of(al_model *m, const int32_t *ids, int64_t n, const al_model_parts *run, int32_t target,
                        float *parts, al_error *err) {
    const al_model_hparams *hp = al_model_get_hparams(m);
    const int64_t L = hp->n_layers, H = hp->n_heads, D = hp->head_dim, E = hp->hidden, HD = H * D, S = run->stride;
    double *g = malloc((size_t)E * sizeof(double)), *r = malloc((size_t)HD * sizeof(double));
    double *inv_rms = malloc((size_t)n * sizeof(double));
    float *y = malloc((size_t)E * sizeof(float)), *wo = malloc((size_t)(E * HD) * sizeof(float));
    al_status st = AL_OK;
    if (!g || !r || !inv_rms || !y || !wo)
        st = al_fail(err, AL_ERR_NOMEM, "logit attribution: out of memory for %lld tokens", (long long)n);
    if (st == AL_OK) {
        /* 2. The final norm's scale at each position, as the real run divides by it: 1 / rms. */
        const float *final_norm = al_model_get_param(m, AL_MP_FINAL_NORM, 0, 0, NULL);
        float rms;
        for (int64_t s = 0; s < n; s++) {
            al_rmsnorm_keep_forward(y, &rms, run->stream + (L * S + s) * E, final_norm, 1, E, hp->eps);
            inv_rms[s] = 1.0 / (double)rms;
        }
        /* 3. g = w ⊙ U[target]: logit = Σ_i w_i · x_i / rms · U[target, i] = (g · x) / rms, and x
         *    is the embedding plus every head's and FFN's output. */
        /* (the rows read as float32 from whatever the model holds them in) */
        al_model_read_rows(m, hp->tied ? AL_MP_EMBED : AL_MP_LM_HEAD, 0, 0, target, 1, y, E);
        for (int64_t i = 0; i < E; i++) g[i] = (double)final_norm[i] * y[i];
        float *embed_row = parts + L * H * n, *ffn_rows = embed_row + n;
        for (int64_t s = 0; s < n; s++) {
            double acc = 0.0;
            al_model_read_rows(m, AL_MP_EMBED, 0, 0, ids[s], 1, y, E);
            for (int64_t i = 0; i < E; i++) acc += g[i] * y[i];
            embed_row[s] = (float)(acc * inv_rms[s]);
        }
        for (int64_t l = 0; l < L; l++) {
            /* 4. Head h's output through its slice of o_proj, Wo[:, h·D : (h+1)·D] [hidden, D]:
             *    its part is ctx_h · (Wo_hᵀ g) / rms, so r = Woᵀ g [H·D] once per layer. */
            al_model_read_param(m, AL_MP_WO, l, 0, wo, E * HD); /* [hidden, H·D] */
            for (int64_t j = 0; j < HD; j++) r[j] = 0.0;
            for (int64_t i = 0; i < E; i++)
                for (int64_t j = 0; j < HD; j++) r[j] += g[i] * wo[i * HD + j];
            for (int64_t h = 0; h < H; h++)
                for (int64_t s = 0; s < n; s++) {
                    const float *z = run->heads + (l * S + s) * HD + h * D;
                    double acc = 0.0;
                    for (int64_t d = 0; d < D; d++) acc += (double)z[d] * r[h * D + d];
                    parts[(l * H + h) * n + s] = (float)(acc * inv_rms[s]);
                }
            /* 5. The block's FFN (or MoE) output, the same way. */
            for (int64_t s = 0; s < n; s++) {
                const float *f = run->ffn + (l * S + s) * E;
                double acc = 0.0;
                for (int64_t i = 0; i < E; i++) acc += g[i] * f[i];
                ffn_rows[l * n + s] = (float)(acc * inv_rms[s]);
            }
        }
    }
    free(g), free(r), free(inv_rms), free(y), free(wo);
    return st;
}

/* The checks both attributions make before anything runs. */
static al_status check_dla(al_model *m, const int32_t *ids, int64_t n, int32_t target, const float *parts,
                           int64_t cap, al_error *err) {
    al_status st = check_tokens(m, "logit attribution", ids, n, err);
    if (st == AL_OK) st = check_id(m, "logit attribution", "target", target, err);
    if (st != AL_OK) return st;
    const al_model_hparams *hp = al_model_get_hparams(m);
    if (!parts) return al_fail(err, AL_ERR_ARG, "logit attribution: NULL argument");
    return check_cap("logit attribution", (hp->n_layers * hp->n_heads + 1 + hp->n_layers) * n, cap, err);
}

al_status al_model_dla(al_model *m, const int32_t *ids, int64_t n, int32_t target, float *parts, int64_t cap,
                       al_error *err) {
    al_status st = check_dla(m, ids, n, target, parts, cap, err);
    if (st != AL_OK) return st;
    const al_model_hparams *hp = al_model_get_hparams(m);
    const int64_t L = hp->n_layers, E = hp->hidden, HD = hp->n_heads * hp->head_dim;
    /* 1. The real run, keeping the stream, each head's output and each FFN's. */
    al_model_parts run = {malloc((size_t)((L + 1) * n * E) * sizeof(float)), malloc((size_t)(L * n * HD) * sizeof(float)),
                          malloc((size_t)(L * n * E) * sizeof(float)), n};
    if (!run.stream || !run.heads || !run.ffn)
        st = al_fail(err, AL_ERR_NOMEM, "logit attribution: out of memory for %lld tokens", (long long)n);
    al_model_probe p = probe_none();
    p.stream = run.stream, p.heads = run.heads, p.ffn = run.ffn;
    if (st == AL_OK) {
        al_model_reset(m);
        st = al_model_forward_probe(m, ids, n, &p, NULL, 0, 0, err);
    }
    if (st == AL_OK) st = dla_of(m, ids, n, &run, target, parts, err);
    free(run.stream), free(run.heads), free(run.ffn);
    return st;
}

al_status al_model_dla_of(al_model *m, const int32_t *ids, int64_t n, const al_model_parts *run, int32_t target,
                          float *parts, int64_t cap, al_error *err) {
    al_status st = check_dla(m, ids, n, target, parts, cap, err);
    if (st != AL_OK) return st;
    if (!run || !run->stream || !run->heads || !run->ffn)
        return al_fail(err, AL_ERR_ARG, "logit attribution: NULL argument");
    if (n > run->stride)
        return al_fail(err, AL_ERR_ARG, "logit attribution: %lld tokens of %lld kept", (long long)n, (long long)run->stride);
    return dla_of(m, ids, n, run, target, parts, err);
}

/* ---- activation patching --------------------------------------------------------------------- */

/* The metric of one run: logit(answer) − logit(wrong) at the last position. */
static al_status run_metric(al_model *m, const int32_t *ids, int64_t n, const al_model_probe *p, float *logits,
                            int32_t answer, int32_t wrong, float *metric, al_error *err) {
    al_model_reset(m);
    const al_status st = al_model_forward_probe(m, ids, n, p, logits, 1, al_model_get_hparams(m)->vocab, err);
    if (st == AL_OK) *metric = logits[answer] - logits[wrong];
    return st;
}

al_status al_model_patch(al_model *m, const int32_t *clean, const int32_t *corrupt, int64_t n, int32_t answer,
                         int32_t wrong, int full, float *out, int64_t cap, al_error *err) {
    al_status st = check_tokens(m, "patching: the clean prompt", clean, n, err);
    if (st == AL_OK) st = check_tokens(m, "patching: the corrupted prompt", corrupt, n, err);
    if (st == AL_OK) st = check_id(m, "patching", "answer", answer, err);
    if (st == AL_OK) st = check_id(m, "patching", "wrong", wrong, err);
    if (st != AL_OK) return st;
    if (answer == wrong)
        return al_fail(err, AL_ERR_ARG, "patching: answer and wrong are the same token (%d): the metric is 0",
                       (int)answer);
    const al_model_hparams *hp = al_model_get_hparams(m);
    const int64_t L = hp->n_layers, H = hp->n_heads, E = hp->hidden, HD = H * hp->head_dim;
    if (!out) return al_fail(err, AL_ERR_ARG, "patching: NULL argument");
    if ((st = check_cap("patching", L * H + L * n + 2, cap, err)) != AL_OK) return st;

    float *clean_stream = malloc((size_t)((L + 1) * n * E) * sizeof(float));
    float *corrupt_stream = malloc((size_t)((L + 1) * n * E) * sizeof(float));
    float *clean_heads = malloc((size_t)(L * n * HD) * sizeof(float));
    float *logits = malloc((size_t)hp->vocab * sizeof(float));
    uint8_t *one_head = calloc((size_t)H, 1);
    if (!clean_stream || !corrupt_stream || !clean_heads || !logits || !one_head)
        st = al_fail(err, AL_ERR_NOMEM, "patching: out of memory for %lld tokens", (long long)n);
    float *head_map = out, *resid_map = out + L * H, *metrics = resid_map + L * n;

    /* 1. The two runs as they are: the clean one keeps its stream and heads' outputs, the
     *    corrupted one its stream (where a patch at block l starts from). */
    al_model_probe p = probe_none();
    p.stream = clean_stream, p.heads = clean_heads;
    if (st == AL_OK) st = run_metric(m, clean, n, &p, logits, answer, wrong, &metrics[0], err);
    p = probe_none();
    p.stream = corrupt_stream;
    if (st == AL_OK) st = run_metric(m, corrupt, n, &p, logits, answer, wrong, &metrics[1], err);

    /* 2. Each head's output from the clean run, at every position, into the corrupted one:
     *    blocks l .. L-1 from the corrupted stream entering l (or, full, the whole forward). */
    for (int64_t l = 0; st == AL_OK && l < L; l++)
        for (int64_t h = 0; st == AL_OK && h < H; h++) {
            p = probe_none();
            p.first_layer = full ? 0 : l;
            p.x0 = full || l == 0 ? NULL : corrupt_stream + l * n * E;
            p.patch_layer = l, p.patch_heads = one_head, p.patch_value = clean_heads + l * n * HD;
            one_head[h] = 1;
            st = run_metric(m, corrupt, n, &p, logits, answer, wrong, &head_map[l * H + h], err);
            one_head[h] = 0;
        }
    /* 3. The stream entering block l at position s from the clean run, the same way. */
    for (int64_t l = 0; st == AL_OK && l < L; l++)
        for (int64_t s = 0; st == AL_OK && s < n; s++) {
            p = probe_none();
            p.first_layer = full ? 0 : l;
            p.x0 = full || l == 0 ? NULL : corrupt_stream + l * n * E;
            p.resid_layer = l, p.resid_pos = s, p.resid_value = clean_stream + (l * n + s) * E;
            st = run_metric(m, corrupt, n, &p, logits, answer, wrong, &resid_map[l * n + s], err);
        }
    al_model_reset(m);
    free(clean_stream), free(corrupt_stream), free(clean_heads), free(logits), free(one_head);
    return st;
}
