/* model_lab.c — what the page's model view shows, computed here: a real model and its
 * tokenizer, the tokens so far (the prompt, then one generated token per step), every layer's
 * attention over them (growing one row per step), MoE routing and the residual stream's size
 * per token, the sampler's stages at the last step, and each head's role scores.
 *
 * The tokens come from the core's generator (lab/generate.c), the loop `attnlab generate` runs:
 * the BOS rule, the sampler, the stop token and the context are its. The lab gives it its
 * forward pass (lab_forward: the model in chunks of CHUNK tokens, each chunk's captures copied
 * into the stores) and runs each token drawn through it at once, so the charts show it:
 *   prompt:  text → ids (al_gen_encode_prompt) → al_gen_prompt → al_gen_forward (captures)
 *   step:    al_gen_step (the draw from the last token's logits, seeded once per prompt) →
 *            al_gen_forward of the token drawn (one more row of every layer's attention, one
 *            more position in every KV cache)
 *
 * Stores are sized for the lab's context C when it is made, so nothing is allocated after:
 *   attn   [n_layers, n_heads, C, C]  query row q over keys 0..C-1 (0 past q); rows from
 *                                     len on are not read; a row is written over the keys there
 *                                     are as it comes, its zeros past q staying from the start
 *   route  [n_layers, C, top_k]       ids and weights (MoE models)
 *   resid  [n_layers + 1, C]          ‖x‖₂ of each token before layer 0 and after each layer
 *   parts  stream [n_layers + 1, C, hidden], heads [n_layers, C, H·D], ffn [n_layers, C, hidden]:
 *                                     what the residual stream is the sum of, kept by the model
 *                                     as the tokens go through (al_model_keep_parts), from which
 *                                     the logit lens and the attribution are read without a run
 *                                     of their own
 */
#include "attnlab/app.h"
#include "base/internal.h"
#include "base/text.h"
#include "io/zip.h"
#include "app/head_roles.h"
#include "app/thumb.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { CHUNK = 32 };

struct al_model_lab {
    al_model *model;
    al_tokenizer *tok;
    al_generator *gen;            /* the tokens: over model and tok */
    al_generator *ahead;          /* the draws to come, made without moving gen (al_model_lab_ahead) */
    al_tok_stream *stream;
    al_model_file_kind kind;
    al_model_hparams hp;
    int64_t context;              /* C */
    int charts;                   /* 1: keep the captures and the greedy stages (the default) */
    int stale;                    /* steps were taken with charts off: the stores miss them */
    int redraw;                   /* a greedy step's stages are owed (taken with charts off) */
    al_sampler_params last;       /* the last step's sampler settings (its stages, redrawn) */
    int64_t last_seen;            /* the ids the last draw's repetition penalty saw */
    float *logits;                /* [vocab] the last draw's, for its stages at temperature 0 */
    float *stages;                /* [AL_SAMPLER_STAGES, vocab] of the last step, as drawn */
    float *ranked;                /* [vocab] what the chart's ids are ranked by: the last draw's
                                   * probabilities after the repetition penalty (at temperature 1
                                   * for a greedy draw, whose stages are one-hot) */
    float *scratch;               /* [AL_SAMPLER_STAGES, vocab] al_model_lab_ahead's stages */
    int32_t *heads_off;           /* [L · H, 2] the heads off, kept while every head is on */
    float *attn;                  /* [L, H, C, C] */
    float *chunk_attn;            /* [L, H, CHUNK, C] one forward call's capture */
    int32_t *route_ids;           /* [L, C, top_k] */
    float *route_w;               /* [L, C, top_k] */
    float *resid;                 /* [L + 1, C] */
    float *chunk_resid;           /* [L + 1, CHUNK] */
    al_model_parts parts;         /* stream, heads, ffn of the tokens so far (stride C) */
    float *roles;                 /* [L, H, AL_LAB_ROLES] */
    char *text;                   /* each token's display text, one after another */
    int64_t *text_end;            /* [C] where token i's text ends in `text` */
    int64_t text_cap;
};

/* ---- sizes ------------------------------------------------------------------------------- */

static int64_t attn_floats(const al_model_hparams *hp, int64_t c) { return hp->n_layers * hp->n_heads * c * c; }
/* parts: stream [L + 1, C, hidden], heads [L, C, H·D], ffn [L, C, hidden] */
static int64_t stream_floats(const al_model_hparams *hp, int64_t c) { return (hp->n_layers + 1) * c * hp->hidden; }
static int64_t heads_floats(const al_model_hparams *hp, int64_t c) { return hp->n_layers * c * hp->n_heads * hp->head_dim; }
static int64_t ffn_floats(const al_model_hparams *hp, int64_t c) { return hp->n_layers * c * hp->hidden; }

int64_t al_model_lab_bytes_needed(const al_model_hparams *hp, int64_t context) {
    if (al_model_hparams_check(hp, NULL) != AL_OK || context < 1 || context > AL_LAB_MAX_CONTEXT) return -1;
    const int64_t L = hp->n_layers, H = hp->n_heads, k = hp->n_experts ? hp->top_k : 0;
    /* the stores, then the logits and stages of the lab and of its two generators, the scratch
     * stages; the ids of both generators, each token's text end, the heads off */
    const int64_t floats = attn_floats(hp, context) + L * H * CHUNK * context + 2 * L * context * k +
                           stream_floats(hp, context) + heads_floats(hp, context) + ffn_floats(hp, context) +
                           (L + 1) * (context + CHUNK) + L * H * AL_LAB_ROLES + (4 + 4 * AL_SAMPLER_STAGES) * hp->vocab;
    return (int64_t)sizeof(float) * floats + context * (int64_t)(2 * sizeof(int32_t) + sizeof(int64_t)) +
           2 * L * H * (int64_t)sizeof(int32_t);
}

/* ---- create, free ------------------------------------------------------------------------ */

void al_model_lab_free(al_model_lab *lab) {
    if (!lab) return;
    al_gen_free(lab->gen);
    al_gen_free(lab->ahead);
    al_model_free(lab->model);
    al_tok_stream_free(lab->stream);
    al_tok_free(lab->tok);
    free(lab->logits), free(lab->stages), free(lab->ranked), free(lab->scratch), free(lab->heads_off), free(lab->attn),
        free(lab->chunk_attn);
    free(lab->route_ids), free(lab->route_w), free(lab->resid), free(lab->chunk_resid), free(lab->roles);
    free(lab->parts.stream), free(lab->parts.heads), free(lab->parts.ffn);
    free(lab->text), free(lab->text_end);
    free(lab);
}

static al_status lab_forward(void *user, const int32_t *ids, int64_t past, int64_t count, float *logits, al_error *err);
static al_status compute_roles(al_model_lab *lab, al_error *err);

/* "what: message": which of the files a problem is in (the page takes two or three). */
static void name_file(al_error *err, const char *what) {
    if (!strncmp(err->msg, "llama2.c checkpoint", 19) || !strncmp(err->msg, "not a model", 11)) return; /* named */
    char msg[AL_ERROR_MSG_MAX];
    al_snprintf(msg, sizeof msg, "%s", err->msg);
    al_fail(err, err->status, "%s: %s", what, msg);
}

al_status al_model_lab_create(const uint8_t *model, size_t model_size, al_model_file_kind kind, const uint8_t *config,
                              size_t config_size, const uint8_t *tokenizer, size_t tokenizer_size, int64_t context,
                              al_model_lab **out, al_error *err) {
    al_error local;
    if (!err) err = &local; /* messages are prefixed below */
    if (!out) return al_fail(err, AL_ERR_ARG, "model lab: no output pointer");
    *out = NULL;
    if (!model || !model_size) return al_fail(err, AL_ERR_ARG, "model lab: no model file");
    if (!tokenizer || !tokenizer_size)
        return al_fail(err, AL_ERR_MISSING, "the model needs its tokenizer (tokenizer.bin for a llama2.c model, "
                       "tokenizer.json for a MiniMind one)");
    if (context < 0 || context > AL_LAB_MAX_CONTEXT)
        return al_fail(err, AL_ERR_ARG, "model lab: a context of %lld; 0 (the default, %d) up to %d",
                       (long long)context, AL_LAB_DEFAULT_CONTEXT, AL_LAB_MAX_CONTEXT);
    al_model_lab *lab = calloc(1, sizeof *lab);
    if (!lab) return al_fail(err, AL_ERR_NOMEM, "model lab: out of memory");
    lab->charts = 1;
    /* 1. The model, its kind read from its bytes; the lab's context at most the model's. */
    lab->kind = kind == AL_MODEL_FILE_UNKNOWN ? al_model_file_detect(model, model_size) : kind;
    const int64_t want = context ? context : AL_LAB_DEFAULT_CONTEXT;
    al_status st = al_model_load(model, model_size, lab->kind, (const char *)config, config_size, NULL, want, CHUNK,
                                 &lab->model, err);
    if (st != AL_OK) name_file(err, lab->kind == AL_MODEL_FILE_SAFETENSORS ? "model.safetensors"
                                  : lab->kind == AL_MODEL_FILE_PTH       ? "the .pth checkpoint"
                                                                         : "the llama2.c checkpoint");
    if (st == AL_OK) {
        lab->hp = *al_model_get_hparams(lab->model);
        lab->context = al_model_context(lab->model);
        const int64_t bytes = al_model_lab_bytes_needed(&lab->hp, lab->context);
        if (bytes < 0 || bytes > AL_MAX_BYTES)
            st = al_fail(err, AL_ERR_LIMIT, "model lab: keeping every layer's attention over %lld tokens needs %lld MB "
                         "(at most %lld MB): choose a shorter context", (long long)lab->context,
                         (long long)(bytes >> 20), (long long)(AL_MAX_BYTES >> 20));
    }
    /* 2. The tokenizer that goes with it, and the generator over both (which refuses a
     *    tokenizer of another vocabulary than the model's). */
    if (st == AL_OK) {
        const int llama2c = lab->kind == AL_MODEL_FILE_LLAMA2C;
        st = llama2c ? al_tok_llama2c_create(tokenizer, tokenizer_size, lab->hp.vocab, &lab->tok, err)
                     : al_tok_hf_create(tokenizer, tokenizer_size, 0, &lab->tok, err);
        if (st != AL_OK)
            name_file(err, llama2c ? "the tokenizer (a llama2.c model reads a tokenizer.bin)"
                                   : "the tokenizer (a MiniMind model reads a tokenizer.json)");
    }
    if (st == AL_OK) {
        const al_gen_options opt = al_gen_options_default();
        st = al_gen_create(lab->model, lab->tok, lab->kind, &opt, &lab->gen, err);
        if (st == AL_OK) st = al_gen_create(lab->model, lab->tok, lab->kind, &opt, &lab->ahead, err);
    }
    if (st == AL_OK) {
        al_gen_set_forward(lab->gen, lab_forward, lab);
        st = al_tok_stream_create(lab->tok, &lab->stream, err);
    }
    /* 3. The stores (see the top of the file). */
    if (st == AL_OK) {
        const int64_t L = lab->hp.n_layers, H = lab->hp.n_heads, C = lab->context, V = lab->hp.vocab;
        const int64_t k = lab->hp.n_experts ? lab->hp.top_k : 1;
        size_t longest = 0, len = 0;
        for (int32_t id = 0; id < V; id++)
            if (al_tok_piece(lab->tok, id, &len) && len > longest) longest = len;
        lab->text_cap = C * 4 * ((int64_t)longest + 3); /* al_tok_stream_push's most per token */
        lab->logits = malloc((size_t)V * sizeof *lab->logits);
        lab->stages = calloc((size_t)(AL_SAMPLER_STAGES * V), sizeof *lab->stages);
        lab->ranked = calloc((size_t)V, sizeof *lab->ranked);
        lab->scratch = malloc((size_t)(AL_SAMPLER_STAGES * V) * sizeof *lab->scratch);
        lab->heads_off = malloc((size_t)(2 * L * H) * sizeof *lab->heads_off);
        /* rows written as they come; row q is 0 past key q from the start, and every write of it
         * (the softmax's, 0 where the mask hides a key) keeps it so */
        lab->attn = calloc((size_t)attn_floats(&lab->hp, C), sizeof *lab->attn);
        lab->chunk_attn = malloc((size_t)(L * H * CHUNK * C) * sizeof *lab->chunk_attn);
        lab->route_ids = calloc((size_t)(L * C * k), sizeof *lab->route_ids);
        lab->route_w = calloc((size_t)(L * C * k), sizeof *lab->route_w);
        lab->resid = calloc((size_t)((L + 1) * C), sizeof *lab->resid);
        lab->chunk_resid = malloc((size_t)((L + 1) * CHUNK) * sizeof *lab->chunk_resid);
        lab->roles = calloc((size_t)(L * H * AL_LAB_ROLES), sizeof *lab->roles);
        lab->parts = (al_model_parts){malloc((size_t)stream_floats(&lab->hp, C) * sizeof(float)),
                                      malloc((size_t)heads_floats(&lab->hp, C) * sizeof(float)),
                                      malloc((size_t)ffn_floats(&lab->hp, C) * sizeof(float)), C};
        lab->text = malloc((size_t)lab->text_cap);
        lab->text_end = calloc((size_t)C, sizeof *lab->text_end);
        if (!lab->logits || !lab->stages || !lab->ranked || !lab->scratch || !lab->heads_off || !lab->attn || !lab->chunk_attn || !lab->route_ids || !lab->route_w ||
            !lab->resid || !lab->chunk_resid || !lab->roles || !lab->parts.stream || !lab->parts.heads || !lab->parts.ffn ||
            !lab->text || !lab->text_end)
            st = al_fail(err, AL_ERR_NOMEM, "model lab: out of memory");
    }
    /* 4. Each head's role, measured once on a sequence of its own. */
    if (st == AL_OK) st = compute_roles(lab, err);
    if (st != AL_OK) {
        al_model_lab_free(lab);
        return st;
    }
    *out = lab;
    return AL_OK;
}

/* ---- running tokens through the model ----------------------------------------------------- */

/* The generator's forward pass (al_gen_forward_fn): ids [count] at positions past.. through the
 * model, in chunks, captures copied into the stores. */
static al_status lab_forward(void *user, const int32_t *ids, int64_t past, int64_t count, float *logits, al_error *err) {
    al_model_lab *lab = user;
    const int64_t L = lab->hp.n_layers, H = lab->hp.n_heads, C = lab->context, V = lab->hp.vocab;
    const int64_t k = lab->hp.n_experts ? lab->hp.top_k : 0;
    for (int64_t done = 0; done < count;) {
        const int64_t at = past + done, m = count - done < CHUNK ? count - done : CHUNK, keys = at + m;
        if (!lab->charts) { /* the model alone: nothing kept but the logits */
            al_status st = al_model_forward(lab->model, ids + done, m, logits, 1, V, NULL, 0, err);
            if (st != AL_OK) return st;
            done += m, lab->stale = 1;
            continue;
        }
        al_model_capture_resid_norms(lab->model, lab->chunk_resid, (L + 1) * CHUNK);
        al_model_keep_parts(lab->model, &lab->parts);
        al_status st = al_model_forward(lab->model, ids + done, m, logits, 1, V, lab->chunk_attn, L * H * CHUNK * C, err);
        al_model_keep_parts(lab->model, NULL);
        al_model_capture_resid_norms(lab->model, NULL, 0);
        if (st != AL_OK) return st;
        /* chunk_attn [L, H, m, keys] → attn [L, H, C, C] rows at .. at+m-1 */
        for (int64_t lh = 0; lh < L * H; lh++)
            for (int64_t q = 0; q < m; q++) {
                float *row = lab->attn + (lh * C + at + q) * C;
                memcpy(row, lab->chunk_attn + (lh * m + q) * keys, (size_t)keys * sizeof(float)); /* past: 0 as ever */
            }
        /* chunk_resid [L + 1, m] → resid [L + 1, C] */
        for (int64_t l = 0; l <= L; l++)
            memcpy(lab->resid + l * C + at, lab->chunk_resid + l * m, (size_t)m * sizeof(float));
        /* routing [m, k] per layer → route [L, C, k] */
        for (int64_t l = 0; k && l < L; l++)
            al_model_routing(lab->model, l, lab->route_ids + (l * C + at) * k, lab->route_w + (l * C + at) * k, m * k);
        done += m;
    }
    return AL_OK;
}

/* Token i's display text: what the streaming decoder writes when it arrives (whole characters
 * only; the bytes of a split character appear with the token that completes it). */
static al_status append_text(al_model_lab *lab, int64_t i, al_error *err) {
    const int64_t start = i ? lab->text_end[i - 1] : 0;
    const int64_t len = al_tok_stream_push(lab->stream, al_gen_ids(lab->gen)[i], lab->text + start, lab->text_cap - start,
                                           err);
    if (len < 0) return err ? err->status : AL_ERR_CAPACITY;
    lab->text_end[i] = start + len;
    return AL_OK;
}

/* The view of no tokens yet: a fresh decoder (NULL if memory ran out), no stages. */
static void forget_view(al_model_lab *lab) {
    al_tok_stream_free(lab->stream);
    lab->stream = NULL;
    al_tok_stream_create(lab->tok, &lab->stream, NULL);
    lab->stale = lab->redraw = 0;
    memset(lab->stages, 0, (size_t)(AL_SAMPLER_STAGES * lab->hp.vocab) * sizeof *lab->stages);
    memset(lab->ranked, 0, (size_t)lab->hp.vocab * sizeof *lab->ranked);
}

/* Back to no tokens: the generator's too (caches emptied). */
static void forget(al_model_lab *lab) {
    al_gen_reset(lab->gen);
    forget_view(lab);
}

int64_t al_model_lab_prompt_ids(al_model_lab *lab, const int32_t *ids, int64_t n, uint64_t seed, al_error *err) {
    if (!lab || (!ids && n > 0)) return al_fail(err, AL_ERR_ARG, "model lab: NULL argument"), -1;
    al_error local;
    if (!err) err = &local; /* the page's words for the context, below */
    /* 1. The generator's prompt (refused: the tokens before kept), then run with the captures. */
    if (al_gen_prompt(lab->gen, ids, n, seed, err) < 0) {
        if (err->status == AL_ERR_LIMIT)
            al_fail(err, AL_ERR_LIMIT, "the prompt has %lld tokens; the page keeps %lld", (long long)n,
                    (long long)lab->context);
        return -1;
    }
    forget_view(lab);
    al_status st = lab->stream ? al_gen_forward(lab->gen, err) : al_fail(err, AL_ERR_NOMEM, "model lab: out of memory");
    /* 2. Each token's text. */
    for (int64_t i = 0; st == AL_OK && i < n; i++) st = append_text(lab, i, err);
    if (st != AL_OK) {
        forget(lab);
        return -1;
    }
    return n;
}

int64_t al_model_lab_prompt(al_model_lab *lab, const char *text, size_t len, uint64_t seed, al_error *err) {
    if (!lab || (!text && len > 0)) return al_fail(err, AL_ERR_ARG, "model lab: NULL argument"), -1;
    const int64_t n = al_gen_encode_prompt(lab->tok, text, len, NULL, 0, err);
    if (n < 0) return -1;
    int32_t *ids = malloc((size_t)(n ? n : 1) * sizeof *ids);
    if (!ids) return al_fail(err, AL_ERR_NOMEM, "model lab: out of memory"), -1;
    int64_t got = al_gen_encode_prompt(lab->tok, text, len, ids, n, err);
    if (got >= 0) got = al_model_lab_prompt_ids(lab, ids, got, seed, err);
    free(ids);
    return got;
}

/* Greedy's stages [AL_SAMPLER_STAGES, V]: the raw softmax kept, every later stage one-hot on
 * greedy's choice `best` (temperature 0 leaves nothing else to draw from). */
static void one_hot_stages(float *stages, int64_t V, int64_t best) {
    memset(stages + V, 0, (size_t)((AL_SAMPLER_STAGES - 1) * V) * sizeof *stages);
    for (int64_t s = 1; s < AL_SAMPLER_STAGES; s++) stages[s * V + best] = 1.0f;
}

/* The stages of a greedy step, as the pending chart showed them before it (al_model_lab_pending
 * at temperature 0): from the logits the step drew from (lab->logits) over the ids it saw, the
 * raw softmax and then one-hot on the token drawn; ranked as at temperature 1. */
static al_status greedy_stages(al_model_lab *lab, al_error *err) {
    const int64_t V = lab->hp.vocab;
    al_sampler_params shown = lab->last;
    shown.temperature = 1.0;
    lab->redraw = 0;
    al_status st = al_sampler_stages(lab->logits, V, al_gen_ids(lab->gen), lab->last_seen, &shown, lab->stages,
                                     AL_SAMPLER_STAGES * V, err);
    if (st != AL_OK) return st;
    memcpy(lab->ranked, lab->stages + 2 * V, (size_t)V * sizeof *lab->ranked);
    one_hot_stages(lab->stages, V, al_gen_last(lab->gen));
    return AL_OK;
}

int64_t al_model_lab_step(al_model_lab *lab, const al_sampler_params *p, al_error *err) {
    if (!lab || !p) return al_fail(err, AL_ERR_ARG, "model lab: NULL argument"), -1;
    const int64_t V = lab->hp.vocab;
    /* 1. The generator's step with these settings: the draw from the last token's logits (the
     *    refusals too: no prompt, the text ended, the context full, bad settings). */
    al_gen_options opt = al_gen_get_options(lab->gen);
    opt.sampler = *p;
    if (al_gen_set_options(lab->gen, &opt, err) != AL_OK) return -1;
    const int64_t seen = al_gen_len(lab->gen);
    const int64_t chosen = al_gen_step(lab->gen, err);
    if (chosen < 0) return -1;
    lab->last = *p;
    lab->last_seen = seen;
    /* 2. The stages as drawn; at temperature 0 (greedy) the sampler leaves none, so they are
     *    the raw softmax and then one-hot on the choice, as pending showed them (now, or when
     *    the charts come back on). */
    if (p->temperature == 0.0) {
        memcpy(lab->logits, al_gen_logits(lab->gen), (size_t)V * sizeof *lab->logits);
        lab->redraw = 1;
        if (lab->charts && greedy_stages(lab, err) != AL_OK) return -1;
    } else {
        memcpy(lab->stages, al_gen_stages(lab->gen), (size_t)(AL_SAMPLER_STAGES * V) * sizeof *lab->stages);
        memcpy(lab->ranked, lab->stages + 2 * V, (size_t)V * sizeof *lab->ranked);
        lab->redraw = 0;
    }
    /* 3. The stop token ends the text (not appended, as the CLI does not print it); any other
     *    token through the model now: one more row of attention, one more cache position. */
    if (al_gen_len(lab->gen) == seen) return chosen;
    if (al_gen_forward(lab->gen, err) != AL_OK || append_text(lab, seen, err) != AL_OK) {
        forget(lab);
        return -1;
    }
    return chosen;
}

al_status al_model_lab_set_charts(al_model_lab *lab, int on, al_error *err) {
    if (!lab) return al_fail(err, AL_ERR_ARG, "model lab: NULL argument");
    lab->charts = on != 0;
    if (!lab->charts || !lab->stale) return AL_OK;
    /* The steps taken without charts: every token run again from the start, captures on. The
     * numbers are those of the steps (a cached pass equals an uncached one, bit for bit), and the
     * logits of the last token come out the same; a greedy last step's stages from the logits
     * it drew from. */
    lab->stale = 0;
    al_gen_rewind(lab->gen);
    al_status st = al_gen_forward(lab->gen, err);
    if (st == AL_OK && lab->redraw) st = greedy_stages(lab, err);
    if (st != AL_OK) forget(lab);
    return st;
}

al_status al_model_lab_resume(al_model_lab *lab, al_error *err) {
    if (!lab) return al_fail(err, AL_ERR_ARG, "model lab: NULL argument");
    const int64_t at = al_gen_len(lab->gen);
    al_status st = al_gen_resume(lab->gen, err);
    if (st != AL_OK) return st;
    /* The stop token through the model now, as a step's token: one more row, its text. */
    if (al_gen_forward(lab->gen, err) != AL_OK || append_text(lab, at, err) != AL_OK) {
        forget(lab);
        return err ? err->status : AL_ERR_ARG;
    }
    return AL_OK;
}

void al_model_lab_set_ignore_eos(al_model_lab *lab, int on) {
    if (!lab) return;
    al_gen_options opt = al_gen_get_options(lab->gen);
    opt.ignore_eos = on != 0;
    al_gen_set_options(lab->gen, &opt, NULL);
}

/* ---- head roles ---------------------------------------------------------------------------- */

/* On the probe of lab/head_roles.h, run as a prompt with every capture kept. */
static al_status compute_roles(al_model_lab *lab, al_error *err) {
    const int64_t L = lab->hp.n_layers, H = lab->hp.n_heads, C = lab->context;
    int32_t *ids = malloc((size_t)C * sizeof *ids);
    if (!ids) return al_fail(err, AL_ERR_NOMEM, "model lab: out of memory");
    al_role_probe probe;
    al_status st = al_role_probe_ids(ids, lab->hp.vocab, al_tok_bos_id(lab->tok), C, &probe, err);
    if (st == AL_OK && probe.len) { /* too short a context: the scores stay 0 */
        if (al_gen_prompt(lab->gen, ids, probe.len, 0, err) < 0) st = err ? err->status : AL_ERR_ARG;
        if (st == AL_OK) st = al_gen_forward(lab->gen, err);
        for (int64_t lh = 0; st == AL_OK && lh < L * H; lh++)
            al_head_role_scores(&probe, lab->attn + lh * C * C, C, lab->roles + lh * AL_LAB_ROLES);
        al_gen_reset(lab->gen);
    }
    free(ids);
    return st;
}

/* ---- reading it out ----------------------------------------------------------------------- */

const al_model_hparams *al_model_lab_hparams(const al_model_lab *lab) { return lab ? &lab->hp : NULL; }
al_model_file_kind al_model_lab_kind(const al_model_lab *lab) { return lab ? lab->kind : AL_MODEL_FILE_UNKNOWN; }
int64_t al_model_lab_context(const al_model_lab *lab) { return lab ? lab->context : -1; }
al_status al_model_lab_set_threads(al_model_lab *lab, int64_t threads, al_error *err) {
    if (!lab) return al_fail(err, AL_ERR_ARG, "model lab threads: NULL lab");
    return al_model_set_threads(lab->model, threads, err);
}
int64_t al_model_lab_threads(const al_model_lab *lab) { return lab ? al_model_threads(lab->model) : -1; }
int64_t al_model_lab_len(const al_model_lab *lab) { return lab ? al_gen_len(lab->gen) : -1; }
int64_t al_model_lab_prompt_len(const al_model_lab *lab) { return lab ? al_gen_prompt_len(lab->gen) : -1; }
int al_model_lab_finished(const al_model_lab *lab) { return lab && al_gen_finished(lab->gen) == AL_GEN_STOP_TOKEN; }
al_gen_finish al_model_lab_finish(const al_model_lab *lab) { return lab ? al_gen_finished(lab->gen) : AL_GEN_NO_PROMPT; }
int64_t al_model_lab_chosen(const al_model_lab *lab) { return lab ? al_gen_last(lab->gen) : -1; }

static al_status check_cap(const char *what, int64_t need, int64_t cap, al_error *err) {
    return cap < need ? al_fail(err, AL_ERR_CAPACITY, "model lab %s: %lld values, room for %lld", what, (long long)need,
                                (long long)cap)
                      : AL_OK;
}

int64_t al_model_lab_ids(const al_model_lab *lab, int32_t *out, int64_t cap) {
    if (!lab || (!out && cap > 0)) return -1;
    const int64_t len = al_gen_len(lab->gen), n = len < cap ? len : cap;
    if (n > 0) memcpy(out, al_gen_ids(lab->gen), (size_t)n * sizeof *out);
    return len;
}

/* Refuses token i of a lab's text unless -1 <= i < len (first = -1: the whole text allowed) or
 * 0 <= i < len (first = 0); the message names the token and how many there are. */
static int token_refused(const al_model_lab *lab, int64_t i, int64_t first, const void *out, int64_t cap,
                         al_error *err) {
    if (!lab || (!out && cap > 0)) return al_fail(err, AL_ERR_ARG, "model lab: NULL argument"), 1;
    const int64_t n_tokens = al_gen_len(lab->gen);
    if (i < first || i >= n_tokens)
        return al_fail(err, AL_ERR_ARG, "model lab: no token %lld (the text has %lld)", (long long)i,
                       (long long)n_tokens), 1;
    return 0;
}

int64_t al_model_lab_token_text(const al_model_lab *lab, int64_t i, char *out, int64_t cap, al_error *err) {
    if (token_refused(lab, i, -1, out, cap, err)) return -1;
    const int64_t n_tokens = al_gen_len(lab->gen);
    const int64_t start = i > 0 ? lab->text_end[i - 1] : 0, end = i < 0 ? (n_tokens ? lab->text_end[n_tokens - 1] : 0)
                                                                        : lab->text_end[i];
    const int64_t from = i < 0 ? 0 : start, len = end - from;
    if (cap > 0) {
        const int64_t n = len < cap - 1 ? len : cap - 1;
        memcpy(out, lab->text + from, (size_t)n);
        out[n] = '\0';
    }
    return len;
}

int64_t al_model_lab_token_bytes(const al_model_lab *lab, int64_t i, uint8_t *out, int64_t cap, al_error *err) {
    if (token_refused(lab, i, 0, out, cap, err)) return -1;
    const char *text = NULL;
    size_t len = 0;
    const int32_t *ids = al_gen_ids(lab->gen);
    if (al_tok_decode(lab->tok, i ? ids[i - 1] : -1, ids[i], &text, &len, err) != AL_OK) return -1;
    if (cap > 0) memcpy(out, text, (size_t)((int64_t)len < cap ? (int64_t)len : cap));
    return (int64_t)len;
}

int64_t al_model_lab_piece(const al_model_lab *lab, int32_t id, uint8_t *out, int64_t cap, al_error *err) {
    if (!lab || (!out && cap > 0)) return al_fail(err, AL_ERR_ARG, "model lab: NULL argument"), -1;
    size_t len = 0;
    const char *piece = al_tok_piece(lab->tok, id, &len);
    if (!piece)
        return al_fail(err, AL_ERR_ARG, "model lab: no token id %d in the vocabulary of %lld", (int)id,
                       (long long)al_tok_vocab_size(lab->tok)), -1;
    if (cap > 0) memcpy(out, piece, (size_t)((int64_t)len < cap ? (int64_t)len : cap));
    return (int64_t)len;
}

al_status al_model_lab_attention(const al_model_lab *lab, int64_t layer, int64_t head, float *out, int64_t cap,
                                 al_error *err) {
    if (!lab || !out) return al_fail(err, AL_ERR_ARG, "model lab attention: NULL argument");
    if (layer < 0 || layer >= lab->hp.n_layers || head < 0 || head >= lab->hp.n_heads)
        return al_fail(err, AL_ERR_ARG, "model lab attention: layer %lld head %lld is not in the model's %lld × %lld",
                       (long long)layer, (long long)head, (long long)lab->hp.n_layers, (long long)lab->hp.n_heads);
    const int64_t n = al_gen_len(lab->gen), C = lab->context;
    al_status st = check_cap("attention", n * n, cap, err);
    if (st != AL_OK) return st;
    const float *a = lab->attn + (layer * lab->hp.n_heads + head) * C * C;
    for (int64_t q = 0; q < n; q++) memcpy(out + q * n, a + q * C, (size_t)n * sizeof(float));
    return AL_OK;
}

al_status al_model_lab_mask(const al_model_lab *lab, float *out, int64_t cap, al_error *err) {
    if (!lab || !out) return al_fail(err, AL_ERR_ARG, "model lab mask: NULL argument");
    const int64_t n = al_gen_len(lab->gen);
    al_status st = check_cap("mask", n * n, cap, err);
    /* Query q sees keys 0..q, in the prompt's pass (the causal triangle) and in each step (its
     * one row over every cached key and itself): 0 where it sees, -inf where it does not. */
    for (int64_t q = 0; st == AL_OK && q < n; q++)
        for (int64_t k = 0; k < n; k++) out[q * n + k] = k <= q ? 0.0f : -INFINITY;
    return st;
}

int64_t al_model_lab_thumb_size(const al_model_lab *lab, int64_t max_size) {
    if (!lab || max_size < 1) return -1;
    const int64_t n = al_gen_len(lab->gen);
    return n < max_size ? n : max_size;
}

al_status al_model_lab_thumbs(const al_model_lab *lab, int64_t max_size, float *out, int64_t cap, al_error *err) {
    if (!lab || !out) return al_fail(err, AL_ERR_ARG, "model lab thumbnails: NULL argument");
    const int64_t size = al_model_lab_thumb_size(lab, max_size), LH = lab->hp.n_layers * lab->hp.n_heads;
    if (size < 0) return al_fail(err, AL_ERR_ARG, "model lab thumbnails: size %lld must be >= 1", (long long)max_size);
    al_status st = check_cap("thumbnails", LH * size * size, cap, err);
    for (int64_t lh = 0; st == AL_OK && lh < LH; lh++)
        al_thumb_max_pool(lab->attn + lh * lab->context * lab->context, al_gen_len(lab->gen), lab->context, size,
                          out + lh * size * size);
    return st;
}

al_status al_model_lab_stages(const al_model_lab *lab, float *out, int64_t cap, al_error *err) {
    if (!lab || !out) return al_fail(err, AL_ERR_ARG, "model lab stages: NULL argument");
    const int64_t need = AL_SAMPLER_STAGES * lab->hp.vocab;
    al_status st = check_cap("stages", need, cap, err);
    if (st == AL_OK) memcpy(out, lab->stages, (size_t)need * sizeof(float));
    return st;
}

/* The `count` ids most likely in p [vocab] into out, largest first (ties by id); returns how
 * many (min(count, vocab)). */
static int64_t rank_ids(const float *p, int64_t V, int64_t count, int32_t *out) {
    const int64_t n = count < V ? count : V;
    int64_t have = 0;
    for (int64_t id = 0; id < V; id++) { /* insertion into a short sorted list */
        int64_t at = have;
        while (at > 0 && p[id] > p[out[at - 1]]) at--;
        if (at >= n) continue;
        const int64_t last = have < n ? have : n - 1;
        memmove(out + at + 1, out + at, (size_t)(last - at) * sizeof *out);
        out[at] = (int32_t)id;
        if (have < n) have++;
    }
    return have;
}

/* The ids the next-token chart shows: the `count` most likely after the repetition penalty (the
 * order top-k and top-p work in; ties by id), with the chosen one put last if it is not among
 * them. Returns how many were written. */
int64_t al_model_lab_top_ids(const al_model_lab *lab, int64_t count, int32_t *out, al_error *err) {
    if (!lab || !out || count < 1) return al_fail(err, AL_ERR_ARG, "model lab top: NULL argument or count < 1"), -1;
    const int64_t have = rank_ids(lab->ranked, lab->hp.vocab, count, out);
    const int64_t chosen = al_gen_last(lab->gen);
    int in = chosen < 0;
    for (int64_t i = 0; i < have && !in; i++) in = out[i] == chosen;
    if (!in) out[have - 1] = (int32_t)chosen;
    return have;
}

int64_t al_model_lab_pending(const al_model_lab *lab, const al_sampler_params *p, float *stages, int64_t cap,
                             int32_t *top, int64_t count, al_error *err) {
    if (!lab || !p || !stages || !top || count < 1)
        return al_fail(err, AL_ERR_ARG, "model lab pending: NULL argument or count < 1"), -1;
    const int64_t V = lab->hp.vocab;
    if (check_cap("pending stages", AL_SAMPLER_STAGES * V, cap, err) != AL_OK) return -1;
    memset(stages, 0, (size_t)(AL_SAMPLER_STAGES * V) * sizeof *stages);
    if (al_gen_finished(lab->gen) != AL_GEN_GOING) return 0; /* no draw to come */
    /* 1. What the next step reads: the logits of the last token (run through the model by the
     *    prompt or the last step) and every id so far for the repetition penalty. */
    const float *logits = al_gen_logits(lab->gen);
    const int32_t *ids = al_gen_ids(lab->gen);
    const int64_t n = al_gen_len(lab->gen);
    /* 2. The ids to show: ranked after the penalty at temperature 1 (any temperature keeps the
     *    order; a small one rounds the tail to ties). */
    al_sampler_params at_one = *p;
    at_one.temperature = 1.0;
    if (al_sampler_stages(logits, V, ids, n, &at_one, stages, cap, err) != AL_OK) return -1;
    const int64_t have = rank_ids(stages + 2 * V, V, count, top);
    /* 3. The stages with these settings; at temperature 0 (greedy: no stage is drawn from) the
     *    model's softmax, then one-hot on greedy's choice, the argmax of the penalised logits
     *    (al_sample's, which reads no random number at temperature 0). */
    if (p->temperature != 0.0) return al_sampler_stages(logits, V, ids, n, p, stages, cap, err) == AL_OK ? have : -1;
    const int64_t best = al_sample(logits, V, ids, n, p, NULL, stages + 2 * V, cap - 2 * V, err);
    if (best < 0) return -1;
    one_hot_stages(stages, V, best);
    return have;
}

int64_t al_model_lab_role_ranking(const al_model_lab *lab, al_lab_role role, int32_t *heads, int64_t cap,
                                  al_error *err) {
    if (!lab || !heads) return al_fail(err, AL_ERR_ARG, "model lab role ranking: NULL argument"), -1;
    if (role < 0 || role >= AL_LAB_ROLES)
        return al_fail(err, AL_ERR_ARG, "model lab role ranking: role %d is not in [0, %d)", (int)role, AL_LAB_ROLES), -1;
    const int64_t LH = lab->hp.n_layers * lab->hp.n_heads;
    if (check_cap("role ranking", LH, cap, err) != AL_OK) return -1;
    for (int64_t i = 0; i < LH; i++) { /* insertion sort, stable: ties keep the lower head first */
        const float v = lab->roles[i * AL_LAB_ROLES + role];
        int64_t at = i;
        while (at > 0 && v > lab->roles[heads[at - 1] * AL_LAB_ROLES + role]) heads[at] = heads[at - 1], at--;
        heads[at] = (int32_t)i;
    }
    return LH;
}

int64_t al_file_fingerprint(const uint8_t *data, size_t size) {
    if (!data && size > 0) return -1;
    return (int64_t)al_zip_crc32(data, size);
}

al_status al_model_lab_roles(const al_model_lab *lab, float *out, int64_t cap, al_error *err) {
    if (!lab || !out) return al_fail(err, AL_ERR_ARG, "model lab roles: NULL argument");
    const int64_t need = lab->hp.n_layers * lab->hp.n_heads * AL_LAB_ROLES;
    al_status st = check_cap("roles", need, cap, err);
    if (st == AL_OK) memcpy(out, lab->roles, (size_t)need * sizeof(float));
    return st;
}

int64_t al_model_lab_routing(const al_model_lab *lab, int64_t layer, int32_t *ids, float *weights, int64_t cap,
                             al_error *err) {
    if (!lab || !ids || !weights) return al_fail(err, AL_ERR_ARG, "model lab routing: NULL argument"), -1;
    if (!lab->hp.n_experts) return al_fail(err, AL_ERR_ARG, "model lab routing: the model has no experts"), -1;
    if (layer < 0 || layer >= lab->hp.n_layers)
        return al_fail(err, AL_ERR_ARG, "model lab routing: layer %lld is not in [0, %lld)", (long long)layer,
                       (long long)lab->hp.n_layers), -1;
    const int64_t k = lab->hp.top_k, n = al_gen_len(lab->gen), need = n * k;
    if (check_cap("routing", need, cap, err) != AL_OK) return -1;
    memcpy(ids, lab->route_ids + layer * lab->context * k, (size_t)need * sizeof *ids);
    memcpy(weights, lab->route_w + layer * lab->context * k, (size_t)need * sizeof *weights);
    return n;
}

al_status al_model_lab_resid_norms(const al_model_lab *lab, float *out, int64_t cap, al_error *err) {
    if (!lab || !out) return al_fail(err, AL_ERR_ARG, "model lab residual norms: NULL argument");
    const int64_t L = lab->hp.n_layers, n = al_gen_len(lab->gen);
    al_status st = check_cap("residual norms", (L + 1) * n, cap, err);
    for (int64_t l = 0; st == AL_OK && l <= L; l++)
        memcpy(out + l * n, lab->resid + l * lab->context, (size_t)n * sizeof(float));
    return st;
}

int64_t al_model_lab_resid_points(const al_model_lab *lab) { return lab ? lab->hp.n_layers + 1 : -1; }

int64_t al_model_lab_kv(const al_model_lab *lab, al_kv_growth_row *rows, int64_t cap, al_error *err) {
    if (!lab || (!rows && cap > 0)) return al_fail(err, AL_ERR_ARG, "model lab KV: NULL argument"), -1;
    const al_model_hparams *hp = &lab->hp;
    const int64_t n_prompt = al_gen_prompt_len(lab->gen), steps = al_gen_len(lab->gen) - n_prompt, L = hp->n_layers;
    /* Row 0: after the prompt; row i: after step i. Bytes of every layer's cache together. */
    for (int64_t i = 0; i <= steps && i < cap; i++) {
        const int64_t len = n_prompt + i;
        rows[i].len = len;
        rows[i].bytes = L * al_kv_cache_bytes_for(1, len, hp->n_kv_heads, hp->head_dim);
        rows[i].bytes_mha = L * al_kv_cache_bytes_for(1, len, hp->n_heads, hp->head_dim);
        rows[i].bytes_mqa = L * al_kv_cache_bytes_for(1, len, 1, hp->head_dim);
        rows[i].flops_cached = i ? al_model_flops_causal(hp, 1, len - 1, 1) : al_model_flops_causal(hp, len, 0, 1);
        rows[i].flops_uncached = al_model_flops_causal(hp, len, 0, 1);
    }
    return n_prompt ? steps + 1 : 0;
}

al_status al_model_lab_rope(const al_model_lab *lab, float *scaled, float *plain, int64_t cap, al_error *err) {
    if (!lab || !scaled || !plain) return al_fail(err, AL_ERR_ARG, "model lab RoPE: NULL argument");
    const int64_t half = lab->hp.head_dim / 2;
    al_status st = check_cap("RoPE", half, cap, err);
    if (st == AL_OK) st = al_rope_freqs(plain, lab->hp.head_dim, lab->hp.rope_base);
    if (st == AL_OK) st = al_model_rope_freqs(&lab->hp, scaled, half, err);
    return st;
}

/* ---- experiments ------------------------------------------------------------------------------ */

al_status al_model_lab_set_ablation(al_model_lab *lab, const int32_t *heads, int64_t n, al_error *err) {
    if (!lab) return al_fail(err, AL_ERR_ARG, "model lab: NULL argument");
    al_status st = al_model_set_ablation(lab->model, heads, n, err);
    if (st != AL_OK || al_gen_len(lab->gen) == 0) return st;
    /* Every token again through the ablated model (the captures too, with the charts on): the
     * charts, the last token's logits and so the next draw (al_model_lab_pending) are the
     * ablated model's; the last step's stages stay those it was drawn from. */
    al_gen_rewind(lab->gen);
    st = al_gen_forward(lab->gen, err);
    if (st != AL_OK) forget(lab);
    return st;
}

int64_t al_model_lab_ablation(const al_model_lab *lab, int32_t *heads, int64_t cap) {
    return lab ? al_model_ablation(lab->model, heads, cap) : -1;
}

al_status al_model_lab_lens(al_model_lab *lab, int32_t *top, float *prob, int64_t cap, al_error *err) {
    if (!lab) return al_fail(err, AL_ERR_ARG, "model lab lens: NULL argument");
    if (al_gen_len(lab->gen) < 1) return al_fail(err, AL_ERR_ARG, "model lab lens: no tokens yet");
    /* Read off the parts the tokens left as they went through; steps taken with the charts off
     * left none: a run of its own (the caches end holding the same tokens, as one pass computes
     * them, bit for bit). */
    if (!lab->stale) return al_model_lens_top_of(lab->model, &lab->parts, al_gen_len(lab->gen), top, prob, cap, err);
    return al_model_logit_lens_top(lab->model, al_gen_ids(lab->gen), al_gen_len(lab->gen), top, prob, cap, err);
}

int64_t al_model_lab_dla_rows(const al_model_lab *lab) {
    return lab ? lab->hp.n_layers * lab->hp.n_heads + 1 + lab->hp.n_layers : -1;
}

al_status al_model_lab_dla(al_model_lab *lab, int32_t target, float *out, int64_t cap, al_error *err) {
    if (!lab) return al_fail(err, AL_ERR_ARG, "model lab attribution: NULL argument");
    if (al_gen_len(lab->gen) < 1) return al_fail(err, AL_ERR_ARG, "model lab attribution: no tokens yet");
    /* As the lens: from the parts kept, else a run of its own. */
    if (!lab->stale)
        return al_model_dla_of(lab->model, al_gen_ids(lab->gen), al_gen_len(lab->gen), &lab->parts, target, out, cap, err);
    return al_model_dla(lab->model, al_gen_ids(lab->gen), al_gen_len(lab->gen), target, out, cap, err);
}

int64_t al_model_lab_encode(const al_model_lab *lab, const char *text, size_t len, int32_t *ids, int64_t cap,
                            al_error *err) {
    if (!lab || (!text && len > 0) || (!ids && cap > 0)) return al_fail(err, AL_ERR_ARG, "model lab: NULL argument"), -1;
    const int64_t n = al_gen_encode_prompt(lab->tok, text, len, NULL, 0, err);
    if (n < 0 || cap < n) return n; /* a count query, or too small a buffer: the count */
    return al_gen_encode_prompt(lab->tok, text, len, ids, cap, err);
}

int64_t al_model_lab_patch_size(const al_model_lab *lab, int64_t n) {
    if (!lab || n < 1) return -1;
    return lab->hp.n_layers * lab->hp.n_heads + lab->hp.n_layers * n + 2;
}

al_status al_model_lab_patch(al_model_lab *lab, const int32_t *clean, const int32_t *corrupt, int64_t n,
                             int32_t answer, int32_t wrong, float *out, int64_t cap, al_error *err) {
    if (!lab) return al_fail(err, AL_ERR_ARG, "model lab patching: NULL argument");
    if (n > lab->context)
        return al_fail(err, AL_ERR_LIMIT, "model lab patching: the prompts have %lld tokens; the page keeps %lld",
                       (long long)n, (long long)lab->context);
    const al_status st = al_model_patch(lab->model, clean, corrupt, n, answer, wrong, 0, out, cap, err);
    /* The caches are empty now: the next step runs the tokens so far again. */
    al_gen_rewind(lab->gen);
    return st;
}

/* ---- what heads switched off change ------------------------------------------------------- */

/* Every head on for one experiment (all_heads 1; the heads off kept in heads_off, *n_off of
 * them), or as set (0); heads_back puts them back. */
static al_status heads_all_on(al_model_lab *lab, int all_heads, int64_t *n_off, al_error *err) {
    *n_off = 0;
    if (!all_heads) return AL_OK;
    *n_off = al_model_ablation(lab->model, lab->heads_off, lab->hp.n_layers * lab->hp.n_heads);
    return al_model_set_ablation(lab->model, NULL, 0, err);
}
static void heads_back(al_model_lab *lab, int all_heads, int64_t n_off) {
    if (all_heads) al_model_set_ablation(lab->model, lab->heads_off, n_off, NULL); /* they were accepted before */
}

int64_t al_model_lab_ahead(al_model_lab *lab, const al_sampler_params *p, int all_heads, int32_t *ids, int64_t count,
                           float *probs, int64_t cap, al_error *err) {
    if (!lab || !p || !probs || (!ids && count > 0)) return al_fail(err, AL_ERR_ARG, "model lab ahead: NULL argument"), -1;
    if (count < 0 || count > lab->context)
        return al_fail(err, AL_ERR_ARG, "model lab ahead: %lld draws; 0 up to the context, %lld", (long long)count,
                       (long long)lab->context), -1;
    const int64_t V = lab->hp.vocab;
    if (check_cap("ahead probabilities", V, cap, err) != AL_OK) return -1;
    memset(probs, 0, (size_t)V * sizeof *probs);
    if (al_gen_finished(lab->gen) != AL_GEN_GOING) return 0; /* no draw to come */
    /* 1. The second generator in the first's state, with these settings (refused: bad ones). */
    al_gen_options opt = al_gen_get_options(lab->gen);
    opt.sampler = *p;
    int64_t n_off = 0, got = 0;
    al_status st = al_gen_copy(lab->ahead, lab->gen, err);
    if (st == AL_OK) st = al_gen_set_options(lab->ahead, &opt, err);
    if (st == AL_OK) st = heads_all_on(lab, all_heads, &n_off, err);
    if (n_off) al_gen_rewind(lab->ahead); /* the caches are of the heads off: every token again */
    /* 2. The tokens so far through the model (those the caches do not hold): the next token's
     *    distribution, the raw stage. */
    if (st == AL_OK) st = al_gen_forward(lab->ahead, err);
    if (st == AL_OK) {
        const al_sampler_params raw = {1.0, 0, 1.0, 1.0};
        st = al_sampler_stages(al_gen_logits(lab->ahead), V, al_gen_ids(lab->ahead), al_gen_len(lab->ahead), &raw,
                               lab->scratch, AL_SAMPLER_STAGES * V, err);
        if (st == AL_OK) memcpy(probs, lab->scratch, (size_t)V * sizeof *probs);
    }
    /* 3. The draws, as the lab's steps would make them. */
    while (st == AL_OK && got < count && al_gen_finished(lab->ahead) == AL_GEN_GOING) {
        const int64_t id = al_gen_step(lab->ahead, err);
        if (id < 0) st = err ? err->status : AL_ERR_ARG;
        else ids[got++] = (int32_t)id;
    }
    heads_back(lab, all_heads, n_off);
    al_gen_reset(lab->ahead); /* the caches hold its tokens: the lab's run again (al_gen_copy) */
    return st == AL_OK ? got : -1;
}

double al_model_lab_prompt_loss(al_model_lab *lab, int all_heads, al_error *err) {
    if (!lab) return al_fail(err, AL_ERR_ARG, "model lab loss: NULL argument"), -1.0;
    const int64_t n = al_gen_prompt_len(lab->gen);
    if (n < 2)
        return al_fail(err, AL_ERR_ARG, "the prompt has %lld token%s: a loss needs 2 (each token after the first is "
                       "predicted from those before it)", (long long)n, n == 1 ? "" : "s"), -1.0;
    int64_t n_off = 0, count = 0;
    double sum = 0.0;
    al_status st = heads_all_on(lab, all_heads, &n_off, err);
    if (st == AL_OK) st = al_model_nll(lab->model, al_gen_ids(lab->gen), n, &sum, &count, err);
    heads_back(lab, all_heads, n_off);
    al_gen_rewind(lab->gen);
    return st == AL_OK ? sum / (double)count : -1.0;
}

int64_t al_model_lab_ids_text(const al_model_lab *lab, const int32_t *ids, int64_t n, char *out, int64_t cap,
                              al_error *err) {
    if (!lab || (!ids && n > 0) || (!out && cap > 0) || n < 0 || cap < 0)
        return al_fail(err, AL_ERR_ARG, "model lab text: NULL argument"), -1;
    /* A decoder in the state of the lab's (the last token, any bytes of a character held), and
     * room for the most one token writes (al_tok_stream_push's bound). */
    const int64_t most = lab->text_cap / lab->context;
    al_tok_stream *s = NULL;
    char *piece = malloc((size_t)most);
    al_status st = piece ? al_tok_stream_create(lab->tok, &s, err) : al_fail(err, AL_ERR_NOMEM, "model lab: out of memory");
    if (st == AL_OK && lab->stream) st = al_tok_stream_copy(s, lab->stream, err);
    int64_t len = 0;
    for (int64_t i = 0; st == AL_OK && i < n; i++) {
        const int64_t k = al_tok_stream_push(s, ids[i], piece, most, err);
        if (k < 0) {
            st = err ? err->status : AL_ERR_ARG;
            break;
        }
        if (len < cap - 1) memcpy(out + len, piece, (size_t)(k < cap - 1 - len ? k : cap - 1 - len));
        len += k;
    }
    if (cap > 0) out[len < cap - 1 ? len : cap - 1] = '\0';
    al_tok_stream_free(s);
    free(piece);
    return st == AL_OK ? len : -1;
}

int64_t al_model_lab_token_id(const al_model_lab *lab, const char *text, size_t len, al_error *err) {
    if (!lab || (!text && len > 0)) return al_fail(err, AL_ERR_ARG, "model lab token: NULL argument"), -1;
    if (!len) return al_fail(err, AL_ERR_ARG, "no text: name a token"), -1;
    /* 1. The piece itself, as the page shows tokens (llama2.c's " Lily"). */
    for (int32_t id = 0; id < lab->hp.vocab; id++) {
        size_t n = 0;
        const char *piece = al_tok_piece(lab->tok, id, &n);
        if (piece && n == len && !memcmp(piece, text, len)) return id;
    }
    /* 2. Else what the text encodes to, without BOS (llama2.c's "Lily" is " Lily"). */
    const int64_t n = al_tok_encode(lab->tok, text, len, 0, 0, NULL, 0, err);
    if (n < 0) return -1;
    char shown[64 + 4];
    if (n != 1)
        return al_fail(err, AL_ERR_ARG, "\"%s\" is %lld tokens, not one", al_show_bytes(shown, 64, (const uint8_t *)text,
                       len, 0, "0123456789abcdef"), (long long)n), -1;
    int32_t id = -1;
    return al_tok_encode(lab->tok, text, len, 0, 0, &id, 1, err) == 1 ? id : -1;
}

int64_t al_patch_recovered(const float *map, int64_t n, float clean, float corrupt, float *out, int64_t cap,
                           al_error *err) {
    if (n < 0 || ((!map || !out) && n > 0)) return al_fail(err, AL_ERR_ARG, "patch share: NULL argument"), -1;
    if (cap < n) return al_fail(err, AL_ERR_CAPACITY, "patch share: %lld values, room for %lld", (long long)n, (long long)cap), -1;
    if (!isfinite(clean) || !isfinite(corrupt))
        return al_fail(err, AL_ERR_NONFINITE, "patch share: the metrics are %g (clean) and %g (corrupted)", (double)clean,
                       (double)corrupt), -1;
    const double gap = (double)clean - (double)corrupt;
    const double scale = fmax(1.0, fmax(fabs((double)clean), fabs((double)corrupt)));
    if (fabs(gap) <= 1e-6 * scale) { /* nothing to recover: the raw map */
        if (out != map && n > 0) memmove(out, map, (size_t)n * sizeof *out);
        return 0;
    }
    for (int64_t i = 0; i < n; i++) out[i] = (float)(((double)map[i] - (double)corrupt) / gap);
    return 1;
}
