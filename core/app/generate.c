/* generate.c — the one generation loop, which `attnlab generate` and the page's model view both
 * run (llama2.c's generate): a prompt's ids (text: BOS first where the tokenizer has one), then
 * steps, each one forward pass over the tokens the model has not seen yet (the whole prompt at
 * first, then the token drawn last, with every layer's KV cache), MiniMind's sampler on the last
 * position's logits, and the rules that end the text: the stop token (llama2.c's BOS, MiniMind's
 * eos; not appended, unless ignore_eos makes it a token like any other), the limit of new tokens
 * and the context's end.
 *
 *   ids  [C]  the prompt, then every token drawn; ids[0, done) are in the caches, ids[done, n)
 *             go through the model at the next forward (a step's token waits there, so the
 *             last one of a text is never run for nothing)
 *   logits [vocab]                  of ids[done - 1]: what the next draw reads
 *   stages [AL_SAMPLER_STAGES, vocab] what the last draw left (al_sample)
 */
#include "attnlab/app.h"
#include "base/internal.h"

#include <stdlib.h>
#include <string.h>

struct al_generator {
    al_model *model;            /* borrowed */
    const al_tokenizer *tok;    /* borrowed; may be NULL */
    int32_t stop_token;         /* al_model_file_stop_token of the model's kind */
    al_gen_options opt;
    int64_t vocab, context;     /* V, C */
    int64_t n, done, n_prompt;  /* tokens so far, of them in the caches, of them the prompt */
    int ended;                  /* the last draw was the stop token (not appended) */
    int64_t last;               /* the last draw, -1 since the prompt */
    al_gen_forward_fn forward;  /* NULL: al_model_forward alone */
    void *forward_user;
    al_rng *rng;
    int32_t *ids;               /* [C] */
    float *logits;              /* [V] */
    float *stages;              /* [AL_SAMPLER_STAGES, V] */
};

al_gen_options al_gen_options_default(void) {
    al_gen_options o;
    o.sampler = al_sampler_params_default();
    o.max_new = -1;
    o.ignore_eos = 0;
    return o;
}

static al_status check_options(const al_gen_options *opt, al_error *err) {
    if (opt->max_new < -1 || opt->max_new > AL_MAX_SEQ)
        return al_fail(err, AL_ERR_ARG, "generator: max_new is %lld; -1 (no limit but the context) up to %d",
                       (long long)opt->max_new, AL_MAX_SEQ);
    return AL_OK;
}

int64_t al_gen_encode_prompt(const al_tokenizer *tok, const char *text, size_t len, int32_t *ids, int64_t cap,
                             al_error *err) {
    if (!tok || (!text && len > 0)) return al_fail(err, AL_ERR_ARG, "prompt: NULL argument"), -1;
    /* llama2.c's BOS first, as run.c encodes a prompt; a tokenizer.json has none. */
    return al_tok_encode(tok, text ? text : "", len, al_tok_bos_id(tok) >= 0, 0, ids, cap, err);
}

void al_gen_free(al_generator *g) {
    if (!g) return;
    al_rng_free(g->rng);
    free(g->ids), free(g->logits), free(g->stages);
    free(g);
}

al_status al_gen_create(al_model *model, const al_tokenizer *tok, al_model_file_kind kind, const al_gen_options *opt,
                        al_generator **out, al_error *err) {
    if (!out) return al_fail(err, AL_ERR_ARG, "generator: no output pointer");
    *out = NULL;
    if (!model || !opt) return al_fail(err, AL_ERR_ARG, "generator: NULL argument");
    al_status st = check_options(opt, err);
    if (st != AL_OK) return st;
    const int64_t V = al_model_get_hparams(model)->vocab;
    if (tok && al_tok_vocab_size(tok) != V)
        return al_fail(err, AL_ERR_SHAPE, "the tokenizer has %lld tokens but the model's vocabulary has %lld: they do not "
                       "belong together", (long long)al_tok_vocab_size(tok), (long long)V);
    al_generator *g = calloc(1, sizeof *g);
    if (!g) return al_fail(err, AL_ERR_NOMEM, "generator: out of memory");
    g->model = model;
    g->tok = tok;
    g->stop_token = al_model_file_stop_token(kind);
    g->opt = *opt;
    g->vocab = V;
    g->context = al_model_context(model);
    g->last = -1;
    g->ids = malloc((size_t)g->context * sizeof *g->ids);
    g->logits = calloc((size_t)V, sizeof *g->logits);
    g->stages = calloc((size_t)(AL_SAMPLER_STAGES * V), sizeof *g->stages);
    g->rng = al_rng_create(0);
    if (!g->ids || !g->logits || !g->stages || !g->rng) {
        al_gen_free(g);
        return al_fail(err, AL_ERR_NOMEM, "generator: out of memory");
    }
    *out = g;
    return AL_OK;
}

void al_gen_set_forward(al_generator *g, al_gen_forward_fn fn, void *user) {
    if (!g) return;
    g->forward = fn;
    g->forward_user = user;
}

al_status al_gen_set_options(al_generator *g, const al_gen_options *opt, al_error *err) {
    if (!g || !opt) return al_fail(err, AL_ERR_ARG, "generator: NULL argument");
    al_status st = check_options(opt, err);
    if (st == AL_OK) g->opt = *opt;
    return st;
}

al_gen_options al_gen_get_options(const al_generator *g) { return g ? g->opt : al_gen_options_default(); }

void al_gen_reset(al_generator *g) {
    if (!g) return;
    al_model_reset(g->model);
    g->n = g->done = g->n_prompt = 0;
    g->ended = 0;
    g->last = -1;
}

al_status al_gen_copy(al_generator *into, al_generator *from, al_error *err) {
    if (!into || !from) return al_fail(err, AL_ERR_ARG, "generator: NULL argument");
    if (into->model != from->model)
        return al_fail(err, AL_ERR_ARG, "generator copy: the two generators run different models");
    al_rng *rng = al_rng_clone(from->rng);
    if (!rng) return al_fail(err, AL_ERR_NOMEM, "generator: out of memory");
    /* The tokens, the options and the random numbers as they stand, and the caches, which hold
     * from's first `done` tokens: into's now (the rest pending, run by its next forward), from's
     * all pending again. */
    al_rng_free(into->rng);
    into->rng = rng;
    into->opt = from->opt;
    into->stop_token = from->stop_token;
    memcpy(into->ids, from->ids, (size_t)from->n * sizeof *into->ids);
    memcpy(into->logits, from->logits, (size_t)from->vocab * sizeof *into->logits);
    memcpy(into->stages, from->stages, (size_t)(AL_SAMPLER_STAGES * from->vocab) * sizeof *into->stages);
    into->n = from->n, into->n_prompt = from->n_prompt, into->done = from->done;
    into->ended = from->ended, into->last = from->last;
    from->done = 0;
    return AL_OK;
}

void al_gen_rewind(al_generator *g) {
    if (!g) return;
    al_model_reset(g->model);
    g->done = 0;
}

int64_t al_gen_prompt(al_generator *g, const int32_t *ids, int64_t n, uint64_t seed, al_error *err) {
    if (!g || (!ids && n > 0)) return al_fail(err, AL_ERR_ARG, "generator: NULL argument"), -1;
    /* 1. Checked before anything changes: a refused prompt leaves the last one as it was. */
    if (n < 1) return al_fail(err, AL_ERR_ARG, "the prompt has no tokens"), -1;
    if (n > g->context)
        return al_fail(err, AL_ERR_LIMIT, "the prompt has %lld tokens; the model's context is %lld", (long long)n,
                       (long long)g->context), -1;
    for (int64_t i = 0; i < n; i++)
        if (ids[i] < 0 || ids[i] >= g->vocab)
            return al_fail(err, AL_ERR_ARG, "token id %d at %lld is outside the vocabulary [0, %lld)", (int)ids[i],
                           (long long)i, (long long)g->vocab), -1;
    al_rng *rng = al_rng_create(seed);
    if (!rng) return al_fail(err, AL_ERR_NOMEM, "generator: out of memory"), -1;
    /* 2. The caches emptied, the prompt pending (run by the next forward or step). */
    al_gen_reset(g);
    al_rng_free(g->rng);
    g->rng = rng;
    memcpy(g->ids, ids, (size_t)n * sizeof *ids);
    g->n = g->n_prompt = n;
    memset(g->stages, 0, (size_t)(AL_SAMPLER_STAGES * g->vocab) * sizeof *g->stages);
    return n;
}

al_status al_gen_forward(al_generator *g, al_error *err) {
    if (!g) return al_fail(err, AL_ERR_ARG, "generator: NULL argument");
    if (g->done == g->n) return AL_OK;
    const int64_t past = g->done, count = g->n - g->done;
    /* From the first token, from empty caches: whatever ran the model since (an experiment of
     * the lab's, another generator over the same model) is not ours to build on. */
    if (past == 0) al_model_reset(g->model);
    al_status st = g->forward ? g->forward(g->forward_user, g->ids + past, past, count, g->logits, err)
                              : al_model_forward(g->model, g->ids + past, count, g->logits, 1, g->vocab, NULL, 0, err);
    if (st != AL_OK) {
        al_gen_reset(g); /* the caches hold part of the tokens: start again from a prompt */
        return st;
    }
    g->done = g->n;
    return AL_OK;
}

al_gen_finish al_gen_finished(const al_generator *g) {
    if (!g || g->n < 1) return AL_GEN_NO_PROMPT;
    if (g->ended) return AL_GEN_STOP_TOKEN;
    if (g->opt.max_new >= 0 && g->n - g->n_prompt >= g->opt.max_new) return AL_GEN_LENGTH;
    if (g->n >= g->context) return AL_GEN_CONTEXT;
    return AL_GEN_GOING;
}

int64_t al_gen_step(al_generator *g, al_error *err) {
    if (!g) return al_fail(err, AL_ERR_ARG, "generator: NULL argument"), -1;
    /* 1. Whether a token may come at all. */
    switch (al_gen_finished(g)) {
    case AL_GEN_GOING: break;
    case AL_GEN_NO_PROMPT: return al_fail(err, AL_ERR_ARG, "give a prompt first"), -1;
    case AL_GEN_STOP_TOKEN:
        return al_fail(err, AL_ERR_ARG, "the model has ended its text (it chose its stop token): reset to go on"), -1;
    case AL_GEN_LENGTH:
        return al_fail(err, AL_ERR_ARG, "%lld new tokens, the most asked for", (long long)g->opt.max_new), -1;
    case AL_GEN_CONTEXT:
        return al_fail(err, AL_ERR_CAPACITY, "the context of %lld tokens is full", (long long)g->context), -1;
    }
    /* 2. The tokens the model has not seen (the prompt, or the last draw) through it. */
    if (al_gen_forward(g, err) != AL_OK) return -1;
    /* 3. MiniMind's sampler over the last position's logits, every id so far seen by the
     *    repetition penalty; bad settings refused with nothing changed. */
    const int64_t chosen = al_sample(g->logits, g->vocab, g->ids, g->n, &g->opt.sampler, g->rng, g->stages,
                                     AL_SAMPLER_STAGES * g->vocab, err);
    if (chosen < 0) return -1;
    g->last = chosen;
    /* 4. The stop token ends the text, not appended (run.c and MiniMind's generate print none);
     *    with ignore_eos it is a token like the others. Any other token waits in ids for the
     *    next forward. */
    if ((int32_t)chosen == g->stop_token && !g->opt.ignore_eos) {
        g->ended = 1;
        return chosen;
    }
    g->ids[g->n++] = (int32_t)chosen;
    return chosen;
}

al_status al_gen_resume(al_generator *g, al_error *err) {
    if (!g) return al_fail(err, AL_ERR_ARG, "generator: NULL argument");
    if (al_gen_finished(g) != AL_GEN_STOP_TOKEN)
        return al_fail(err, AL_ERR_ARG, "the text has not ended at the stop token: nothing to go on past");
    if (g->n >= g->context)
        return al_fail(err, AL_ERR_CAPACITY, "the context of %lld tokens is full", (long long)g->context);
    /* The stop token drawn last, appended as ignore_eos would have appended it (the same draw,
     * so the tokens after it are those of a run with ignore_eos from the start). */
    g->ids[g->n++] = g->stop_token;
    g->ended = 0;
    return AL_OK;
}

/* ---- reading it out ----------------------------------------------------------------------- */

int64_t al_gen_len(const al_generator *g) { return g ? g->n : -1; }
int64_t al_gen_prompt_len(const al_generator *g) { return g ? g->n_prompt : -1; }
int64_t al_gen_generated(const al_generator *g) { return g ? g->n - g->n_prompt : -1; }
int64_t al_gen_context(const al_generator *g) { return g ? g->context : -1; }
int64_t al_gen_last(const al_generator *g) { return g ? g->last : -1; }
int32_t al_gen_stop_token(const al_generator *g) { return g ? g->stop_token : -1; }
const int32_t *al_gen_ids(const al_generator *g) { return g ? g->ids : NULL; }
const float *al_gen_logits(const al_generator *g) { return g ? g->logits : NULL; }
const float *al_gen_stages(const al_generator *g) { return g ? g->stages : NULL; }
