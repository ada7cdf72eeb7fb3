/* train_lab.c — what the page's Train tab runs: a small MiniMind trained from scratch with the
 * trainer of core/train/, on the learner's text or on a task made for induction heads, with
 * every head's roles measured as it learns.
 *
 *   create:  MiniMind's tokenizer cut to its first `vocab` ids → the model's shape → a trainer
 *            with al_trainer_init_weights' weights → the data (text: a corpus as `attnlab train`
 *            reads one, al_corpus_encode: documents, <|im_start|> text <|im_end|>, the held-out
 *            part) → the roles at step 0
 *   step:    al_train_step, `attnlab train`'s step (train/loop.c): `accum` micro-batches
 *            [batch, seq] from the batch source (the text's windows as the CLI draws them, or
 *            the repeated task), each forward (each row's loss kept) and backward, then AdamW
 *            at MiniMind's cosine schedule; every eval_every steps (and the last) the roles
 *            again, and on text the held-out loss (al_train_held_out_loss)
 *   roles:   the probe of lab/head_roles.h (the model view's) through the trainer, batch 1;
 *            each layer's attention kept for the pattern of a clicked head; the probe's loss
 *            on its two copies, as it is and with the heads the learner switched off
 *   ablation: those heads off in the probe's forward only (the trainer's ablation set for that
 *            forward and cleared after it): training never sees it, so a run is the CLI's
 *            whatever was switched off while it paused
 *
 * The repeated task: each sequence is R random ids, the same R ids again, then fresh random
 * ids to the end, R drawn per sequence from [seq/4, seq/2] (so no fixed distance predicts the
 * repeat: only finding the earlier copy does), each micro-batch by the generator of (seed,
 * step, micro-batch) as the text's windows are drawn. Its first half is unpredictable; the
 * second half can be read off the first by an induction head. The losses kept per step: all
 * targets, and the targets r_2..r_R of the first copy and of the second (the halves), over all
 * the step's micro-batches.
 *
 * Stores, allocated at create:
 *   history [steps, AL_TRAIN_COLUMNS]               loss, first half, repeated half, lr per step
 *   evals   [n_evals, 1 + L·H·AL_LAB_ROLES]         step, then each head's roles
 *   probe_att [L, H, T, T]                          the probe's attention at the last evaluation */
#include "attnlab/app.h"
#include "base/internal.h"
#include "app/head_roles.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct al_train_lab {
    al_train_lab_config cfg;
    al_model_hparams hp;
    al_trainer *trainer;
    al_tokenizer *tok;
    char *tokenizer_json;   /* the cut tokenizer.json, for the download */
    size_t tokenizer_len;
    al_corpus corpus;       /* the text's ids and split (text data) */
    al_stream_batches stream; /* its windows (text data) */
    al_train_settings run;  /* the step's settings */
    al_batch_source source; /* the repeated task or the text's windows, ctx the lab */
    int32_t *ids;           /* [batch, seq] the last micro-batch */
    int32_t *held_ids;      /* [batch, seq] the held-out batches */
    int8_t *half;           /* [batch, seq] which half a row's target is in: 0 none, 1 first, 2 repeated */
    float *row_loss;        /* [batch, seq] */
    float *uniform;         /* [seq + 1] */
    double half_sum[3];     /* this step's row losses by half, over its micro-batches */
    int64_t half_count[3];
    double held_out;        /* the held-out loss at the last evaluation (text); NaN */
    int64_t steps_done;
    float *history;         /* [steps, AL_TRAIN_COLUMNS] */
    int64_t n_evals, max_evals;
    float *evals;           /* [max_evals, 1 + L·H·AL_LAB_ROLES] */
    al_role_probe probe;
    int32_t probe_ids[2 * AL_ROLE_REPEAT + 1];
    float *probe_att;       /* [L, H, T, T] */
    uint8_t *off;           /* [L, H] 1: the head is switched off in the probe's ablated forward */
    int32_t *off_list;      /* [L·H, 2] those heads as (layer, head), n_off of them */
    int64_t n_off;
    float probe_loss[AL_PROBE_COLUMNS]; /* the probe's losses at the last measurement */
};

static int64_t eval_width(const al_model_hparams *hp) { return 1 + hp->n_layers * hp->n_heads * AL_LAB_ROLES; }

void al_train_lab_config_default(al_train_lab_config *c) {
    if (!c) return;
    memset(c, 0, sizeof *c);
    c->vocab = 292, c->layers = 2, c->heads = 2, c->kv_heads = 2, c->hidden = 64, c->ffn = 0;
    c->rope_theta = 1e6;
    c->batch = 16, c->seq = 64, c->accum = 1, c->steps = 3000, c->lr = 1e-3, c->seed = 42, c->eval_every = 25;
    c->data = AL_TRAIN_DATA_REPEAT;
}

void al_train_lab_free(al_train_lab *lab) {
    if (!lab) return;
    al_trainer_free(lab->trainer);
    al_tok_free(lab->tok);
    al_corpus_free(&lab->corpus);
    free(lab->tokenizer_json), free(lab->ids), free(lab->held_ids), free(lab->half), free(lab->row_loss);
    free(lab->uniform), free(lab->history), free(lab->evals), free(lab->probe_att), free(lab->off), free(lab->off_list);
    free(lab);
}

static al_status evaluate(al_train_lab *lab, al_error *err);
static al_batch_source batch_source(al_train_lab *lab);

#define CHECK_SETTING(field, lo, hi, what)                                                                     \
    do {                                                                                                       \
        if (!(c->field >= (lo) && c->field <= (hi)))                                                           \
            return al_fail(err, AL_ERR_ARG, "%s must be between %g and %g (got %g)", what, (double)(lo),       \
                           (double)(hi), (double)c->field);                                                    \
    } while (0)

static al_status check_config(const al_train_lab_config *c, int64_t full_vocab, al_error *err) {
    CHECK_SETTING(vocab, AL_TOK_TRAIN_MIN_VOCAB, full_vocab, "the vocabulary");
    CHECK_SETTING(layers, 1, 16, "layers");
    CHECK_SETTING(heads, 1, 32, "heads");
    CHECK_SETTING(kv_heads, 1, c->heads, "KV heads");
    CHECK_SETTING(hidden, 8, 1024, "the hidden size");
    CHECK_SETTING(ffn, -1, 8192, "the FFN size (0: attention-only, -1: MiniMind's)");
    CHECK_SETTING(rope_theta, 1.0, 1e9, "the RoPE base");
    CHECK_SETTING(batch, 1, 256, "the batch");
    CHECK_SETTING(seq, 8, 1024, "the sequence length");
    CHECK_SETTING(accum, 1, 64, "the micro-batches per step");
    CHECK_SETTING(steps, 1, 1000000, "the steps");
    CHECK_SETTING(lr, 1e-6, 1.0, "the learning rate");
    CHECK_SETTING(eval_every, 1, 1000000, "the steps between evaluations");
    if (c->heads % c->kv_heads)
        return al_fail(err, AL_ERR_ARG, "%lld heads cannot share %lld KV heads evenly: pick a divisor", (long long)c->heads,
                       (long long)c->kv_heads);
    if (c->hidden % c->heads || (c->hidden / c->heads) % 2)
        return al_fail(err, AL_ERR_ARG, "the hidden size %lld must split into %lld heads of an even size",
                       (long long)c->hidden, (long long)c->heads);
    if (c->data != AL_TRAIN_DATA_REPEAT && c->data != AL_TRAIN_DATA_TEXT)
        return al_fail(err, AL_ERR_ARG, "unknown training data %d", (int)c->data);
    return AL_OK;
}

al_status al_train_lab_create(const al_train_lab_config *cfg, const uint8_t *tokenizer, size_t tokenizer_size,
                              const char *text, size_t text_len, al_train_lab **out, al_error *err) {
    if (!cfg || !out) return al_fail(err, AL_ERR_ARG, "train lab: NULL argument");
    *out = NULL;
    if (!tokenizer || !tokenizer_size) return al_fail(err, AL_ERR_MISSING, "train lab: no tokenizer.json");
    al_train_lab *lab = calloc(1, sizeof *lab);
    if (!lab) return al_fail(err, AL_ERR_NOMEM, "train lab: out of memory");
    lab->cfg = *cfg;
    /* 1. MiniMind's tokenizer, cut to the first `vocab` ids (the added tokens, the bytes, then
     *    the first merges): any text still encodes, in more tokens. */
    al_tokenizer *full = NULL;
    al_status st = al_tok_hf_create(tokenizer, tokenizer_size, 0, &full, err);
    if (st == AL_OK) st = check_config(cfg, al_tok_vocab_size(full), err);
    al_tok_free(full);
    if (st == AL_OK)
        st = al_tok_hf_cut(tokenizer, tokenizer_size, cfg->vocab, &lab->tokenizer_json, &lab->tokenizer_len, err);
    if (st == AL_OK)
        st = al_tok_hf_create((const uint8_t *)lab->tokenizer_json, lab->tokenizer_len, cfg->vocab, &lab->tok, err);
    /* 2. The model's shape: MiniMind's defaults for this size, the FFN and RoPE base asked. */
    if (st == AL_OK) {
        lab->hp = al_minimind_hparams_for(cfg->vocab, cfg->hidden, cfg->layers, cfg->heads, cfg->kv_heads);
        if (cfg->ffn >= 0) lab->hp.ffn_hidden = cfg->ffn;
        lab->hp.rope_base = cfg->rope_theta;
        st = al_trainer_create(&lab->hp, cfg->batch, cfg->seq, &lab->trainer, err);
    }
    if (st == AL_OK) st = al_trainer_init_weights(lab->trainer, cfg->seed, err);
    /* 3. The data: the text as a corpus (the CLI's: documents, the held-out part) and its
     *    windows; the repeated task draws as it goes. */
    if (st == AL_OK && cfg->data == AL_TRAIN_DATA_TEXT) {
        if (!text || !text_len) st = al_fail(err, AL_ERR_ARG, "no text to train on: paste some");
        if (st == AL_OK) st = al_corpus_encode(lab->tok, text, text_len, cfg->seq + 1, &lab->corpus, err);
        if (st == AL_OK)
            st = al_stream_batches_init(&lab->stream, lab->corpus.ids, lab->corpus.n_tokens, lab->corpus.split, cfg->batch,
                                        cfg->seq, cfg->seed, err);
        if (st == AL_ERR_ARG && err) {
            char why[sizeof err->msg];
            al_snprintf(why, sizeof why, "%s", err->msg);
            st = al_fail(err, AL_ERR_ARG, "the text: %s: paste more text or shorten the sequence", why);
        }
    }
    /* 4. The stores (see the top of the file). */
    if (st == AL_OK) {
        const int64_t N = cfg->batch * cfg->seq, L = lab->hp.n_layers, H = lab->hp.n_heads;
        lab->max_evals = cfg->steps / cfg->eval_every + 2;
        lab->ids = malloc((size_t)N * sizeof *lab->ids);
        lab->held_ids = malloc((size_t)N * sizeof *lab->held_ids);
        lab->half = calloc((size_t)N, sizeof *lab->half);
        lab->row_loss = malloc((size_t)N * sizeof *lab->row_loss);
        lab->uniform = malloc((size_t)(cfg->seq + 1) * sizeof *lab->uniform);
        lab->history = calloc((size_t)(cfg->steps * AL_TRAIN_COLUMNS), sizeof *lab->history);
        lab->evals = calloc((size_t)(lab->max_evals * eval_width(&lab->hp)), sizeof *lab->evals);
        lab->probe_att = calloc((size_t)(L * H * (2 * AL_ROLE_REPEAT + 1) * (2 * AL_ROLE_REPEAT + 1)),
                                sizeof *lab->probe_att);
        lab->off = calloc((size_t)(L * H), sizeof *lab->off);
        lab->off_list = calloc((size_t)(L * H * 2), sizeof *lab->off_list);
        if (!lab->ids || !lab->held_ids || !lab->half || !lab->row_loss || !lab->uniform || !lab->history || !lab->evals ||
            !lab->probe_att || !lab->off || !lab->off_list)
            st = al_fail(err, AL_ERR_NOMEM, "train lab: out of memory");
    }
    /* 5. The step's settings: the CLI's defaults but for the shape (AdamW's, clip 1, weight
     *    decay 0.01; no MoE). */
    if (st == AL_OK) {
        const al_train_settings run = {cfg->batch, cfg->seq, cfg->accum, cfg->steps, cfg->lr, 0.0, al_adamw_params_default()};
        lab->run = run;
        lab->source = batch_source(lab);
        lab->held_out = NAN;
    }
    /* 6. The probe, and the roles (and the held-out loss) before any step. */
    if (st == AL_OK) st = al_role_probe_ids(lab->probe_ids, cfg->vocab, -1, cfg->seq, &lab->probe, err);
    if (st == AL_OK) st = evaluate(lab, err);
    if (st != AL_OK) {
        al_train_lab_free(lab);
        return st;
    }
    *out = lab;
    return AL_OK;
}

/* ---- batches ------------------------------------------------------------------------------- */

/* A random id past the ids MiniMind's tokenizer keeps for its added tokens' first three. */
static int32_t random_id(float u, int64_t vocab) {
    int64_t id = 3 + (int64_t)(u * (float)(vocab - 3));
    return (int32_t)(id >= vocab ? vocab - 1 : id);
}

/* Sequence b of the repeated task, from rng: r_1..r_R r_1..r_R then fresh ids; half[] marks the
 * rows whose targets are r_2..r_R of each copy. */
static void repeated_sequence(al_train_lab *lab, al_rng *rng, int64_t b) {
    const int64_t S = lab->cfg.seq, V = lab->cfg.vocab, lo = S / 4, hi = S / 2;
    int32_t *ids = lab->ids + b * S;
    int8_t *half = lab->half + b * S;
    al_rng_uniform(rng, lab->uniform, S + 1, 0.0f, 1.0f);
    int64_t R = lo + (int64_t)(lab->uniform[S] * (float)(hi - lo + 1));
    if (R > hi) R = hi;
    for (int64_t i = 0; i < S; i++) ids[i] = random_id(lab->uniform[i], V);
    memset(half, 0, (size_t)S);
    for (int64_t j = 0; j < R; j++) ids[R + j] = ids[j];
    for (int64_t j = 1; j < R; j++) half[j - 1] = 1, half[R + j - 1] = 2; /* row i predicts ids[i + 1] */
}

/* The batch source's draw: the repeated task's micro-batch from the generator of (seed, step,
 * micro), or the text's windows (al_stream_batches, the CLI's). */
static al_status lab_draw(void *ctx, int64_t step, int64_t micro, int32_t *ids, al_error *err) {
    al_train_lab *lab = ctx;
    if (lab->cfg.data == AL_TRAIN_DATA_TEXT) {
        const al_batch_source text = al_stream_batch_source(&lab->stream);
        return text.draw(text.ctx, step, micro, ids, err);
    }
    al_rng *rng = al_batch_rng(lab->cfg.seed, step, micro);
    if (!rng) return al_fail(err, AL_ERR_NOMEM, "train lab: out of memory");
    for (int64_t b = 0; b < lab->cfg.batch; b++) repeated_sequence(lab, rng, b);
    al_rng_free(rng);
    return AL_OK;
}

static int lab_held_out(void *ctx, int64_t k, int32_t *ids) {
    al_train_lab *lab = ctx;
    const al_batch_source text = al_stream_batch_source(&lab->stream);
    return text.held_out(text.ctx, k, ids);
}

/* After each micro-batch's forward: its rows' losses added to the step's halves. */
static void lab_seen(void *ctx, const al_trainer *t, int64_t micro) {
    (void)micro;
    al_train_lab *lab = ctx;
    const int64_t N = lab->cfg.batch * lab->cfg.seq;
    if (lab->cfg.data != AL_TRAIN_DATA_REPEAT) return;
    al_trainer_row_losses(t, lab->row_loss, N);
    for (int64_t i = 0; i < N; i++) lab->half_sum[lab->half[i]] += lab->row_loss[i], lab->half_count[lab->half[i]]++;
}

static al_batch_source batch_source(al_train_lab *lab) {
    al_batch_source src = {lab_draw, lab->cfg.data == AL_TRAIN_DATA_TEXT ? lab_held_out : NULL, lab_seen, lab};
    return src;
}

/* ---- the probe ----------------------------------------------------------------------------- */

/* The probe through the trainer, batch 1: plain, or with the heads of lab->off switched off (the
 * trainer's ablation set for this forward only, then cleared: the next step trains the whole
 * model). */
static al_status probe_forward(al_train_lab *lab, int ablated, al_error *err) {
    float loss;
    al_status st = ablated ? al_trainer_set_ablation(lab->trainer, lab->off_list, lab->n_off, err) : AL_OK;
    if (st == AL_OK)
        st = al_trainer_forward(lab->trainer, lab->probe_ids, lab->probe_ids, 1, lab->probe.len, 0.0, &loss, NULL, NULL, err);
    if (ablated) al_trainer_set_ablation(lab->trainer, NULL, 0, NULL);
    return st;
}

/* The last forward's mean loss over each copy of the probe into out[2]: the rows whose targets
 * are r_2..r_R of the first copy (rows s..s+R-2) and of the second (s+R..s+2R-2), as the step's
 * halves are counted; summed in double. */
static void probe_halves(al_train_lab *lab, float *out) {
    const int64_t s = lab->probe.start, R = lab->probe.repeat;
    al_trainer_row_losses(lab->trainer, lab->row_loss, lab->probe.len);
    for (int c = 0; c < 2; c++) {
        double sum = 0.0;
        for (int64_t i = s + c * R; i < s + c * R + R - 1; i++) sum += lab->row_loss[i];
        out[c] = (float)(sum / (double)(R - 1));
    }
}

/* The probe's losses now: plain (from the forward just made when plain_done, else a new one),
 * then with the heads switched off (with none off, the same forward through the ablation's
 * path). */
static al_status measure_probe(al_train_lab *lab, int plain_done, al_error *err) {
    float *out = lab->probe_loss;
    out[AL_PROBE_STEP] = (float)lab->steps_done;
    for (int c = 1; c < AL_PROBE_COLUMNS; c++) out[c] = NAN;
    if (!lab->probe.len) return AL_OK;
    al_status st = plain_done ? AL_OK : probe_forward(lab, 0, err);
    if (st == AL_OK) probe_halves(lab, out + AL_PROBE_FIRST_HALF);
    if (st == AL_OK) st = probe_forward(lab, 1, err);
    if (st == AL_OK) probe_halves(lab, out + AL_PROBE_FIRST_HALF_OFF);
    return st;
}

static al_status evaluate(al_train_lab *lab, al_error *err) {
    const int64_t L = lab->hp.n_layers, H = lab->hp.n_heads, T = lab->probe.len;
    float *row = lab->evals + lab->n_evals * eval_width(&lab->hp);
    row[0] = (float)lab->steps_done;
    /* the held-out loss first (its forwards are not the probe's) */
    if (lab->source.held_out) lab->held_out = al_train_held_out_loss(lab->trainer, &lab->run, &lab->source, lab->held_ids);
    if (T) {
        al_status st = probe_forward(lab, 0, err);
        if (st != AL_OK) return st;
        for (int64_t l = 0; l < L; l++) {
            float *att = lab->probe_att + l * H * T * T;
            al_trainer_attention(lab->trainer, l, att, H * T * T);
            for (int64_t h = 0; h < H; h++)
                al_head_role_scores(&lab->probe, att + h * T * T, T, row + 1 + (l * H + h) * AL_LAB_ROLES);
        }
    }
    lab->n_evals++;
    return measure_probe(lab, 1, err);
}

al_status al_train_lab_set_threads(al_train_lab *lab, int64_t threads, al_error *err) {
    if (!lab) return al_fail(err, AL_ERR_ARG, "train lab threads: NULL lab");
    return al_trainer_set_threads(lab->trainer, threads, err);
}
int64_t al_train_lab_threads(const al_train_lab *lab) { return lab ? al_trainer_threads(lab->trainer) : -1; }

al_status al_train_lab_set_ablation(al_train_lab *lab, const int32_t *heads, int64_t n, al_error *err) {
    if (!lab) return al_fail(err, AL_ERR_ARG, "train lab ablation: NULL argument");
    /* the model's checks (each head in range; refused: nothing changes), then cleared again */
    al_status st = al_trainer_set_ablation(lab->trainer, heads, n, err);
    al_trainer_set_ablation(lab->trainer, NULL, 0, NULL);
    if (st != AL_OK) return st;
    const int64_t H = lab->hp.n_heads, LH = lab->hp.n_layers * H;
    memset(lab->off, 0, (size_t)LH);
    for (int64_t i = 0; i < n; i++) lab->off[heads[2 * i] * H + heads[2 * i + 1]] = 1;
    lab->n_off = 0;
    for (int64_t lh = 0; lh < LH; lh++)
        if (lab->off[lh]) lab->off_list[2 * lab->n_off] = (int32_t)(lh / H), lab->off_list[2 * lab->n_off + 1] = (int32_t)(lh % H), lab->n_off++;
    return measure_probe(lab, 0, err);
}

int64_t al_train_lab_ablation(const al_train_lab *lab, int32_t *heads, int64_t cap) {
    if (!lab || (!heads && cap > 0)) return -1;
    if (heads) memcpy(heads, lab->off_list, (size_t)(2 * (lab->n_off < cap ? lab->n_off : cap)) * sizeof *heads);
    return lab->n_off;
}

al_status al_train_lab_probe_loss(const al_train_lab *lab, float *out, int64_t cap, al_error *err) {
    if (!lab || !out) return al_fail(err, AL_ERR_ARG, "train lab probe loss: NULL argument");
    if (cap < AL_PROBE_COLUMNS)
        return al_fail(err, AL_ERR_CAPACITY, "train lab probe loss: %d floats needed (got %lld)", (int)AL_PROBE_COLUMNS,
                       (long long)cap);
    memcpy(out, lab->probe_loss, sizeof lab->probe_loss);
    return AL_OK;
}

/* ---- steps --------------------------------------------------------------------------------- */

int64_t al_train_lab_step(al_train_lab *lab, int64_t n, al_error *err) {
    if (!lab || n < 0) return al_fail(err, AL_ERR_ARG, "train lab step: NULL argument or n < 0"), -1;
    const al_train_lab_config *c = &lab->cfg;
    for (int64_t k = 0; k < n && lab->steps_done < c->steps; k++) {
        const int64_t step = lab->steps_done;
        /* 1. `attnlab train`'s step: the micro-batches (each row's loss added to the halves as
         *    it is seen), forward, backward, AdamW at lr(step) */
        memset(lab->half_sum, 0, sizeof lab->half_sum);
        memset(lab->half_count, 0, sizeof lab->half_count);
        al_train_step_result r;
        if (al_train_step(lab->trainer, &lab->run, &lab->source, step, lab->ids, &r, err) != AL_OK) return -1;
        /* 2. the step's row: the loss, the halves' mean losses (NaN on text), the lr */
        float *row = lab->history + step * AL_TRAIN_COLUMNS;
        row[AL_TRAIN_LOSS] = (float)r.loss;
        row[AL_TRAIN_FIRST_HALF] = lab->half_count[1] ? (float)(lab->half_sum[1] / (double)lab->half_count[1]) : NAN;
        row[AL_TRAIN_REPEATED_HALF] = lab->half_count[2] ? (float)(lab->half_sum[2] / (double)lab->half_count[2]) : NAN;
        row[AL_TRAIN_LR] = (float)r.lr;
        lab->steps_done++;
        /* 3. the roles every eval_every steps, and after the last */
        if ((lab->steps_done % c->eval_every == 0 || lab->steps_done == c->steps) && evaluate(lab, err) != AL_OK) return -1;
    }
    return lab->steps_done;
}

/* ---- reading it out ------------------------------------------------------------------------ */

const al_model_hparams *al_train_lab_hparams(const al_train_lab *lab) { return lab ? &lab->hp : NULL; }
int64_t al_train_lab_steps_done(const al_train_lab *lab) { return lab ? lab->steps_done : -1; }
int64_t al_train_lab_tokens_done(const al_train_lab *lab) {
    return lab ? lab->steps_done * lab->cfg.accum * lab->cfg.batch * lab->cfg.seq : -1;
}
double al_train_lab_tokens_per_second(const al_train_lab *lab, double ms) {
    if (!lab) return -1.0;
    return ms > 0.0 ? (double)al_train_lab_tokens_done(lab) / (ms / 1000.0) : 0.0;
}
int64_t al_train_lab_eval_width(const al_train_lab *lab) { return lab ? eval_width(&lab->hp) : -1; }
double al_train_lab_held_out_loss(const al_train_lab *lab) { return lab ? lab->held_out : NAN; }
int64_t al_train_lab_param_count(const al_train_lab *lab) { return lab ? al_trainer_param_count(lab->trainer) : -1; }

/* Refuses rows from.. of `count` rows (what: their name) unless 0 <= from <= count. */
static int rows_refused(const al_train_lab *lab, const char *what, int64_t from, int64_t count, const float *out,
                        int64_t cap, al_error *err) {
    if (!lab || (!out && cap > 0)) return al_fail(err, AL_ERR_ARG, "train lab %s: NULL argument", what), 1;
    if (from < 0 || from > count)
        return al_fail(err, AL_ERR_ARG, "train lab %s: no rows from %lld (there are %lld)", what, (long long)from,
                       (long long)count), 1;
    return 0;
}

int64_t al_train_lab_history(const al_train_lab *lab, int64_t from, float *out, int64_t cap, al_error *err) {
    if (rows_refused(lab, "history", from, lab ? lab->steps_done : 0, out, cap, err)) return -1;
    int64_t rows = lab->steps_done - from;
    if (!out) return rows; /* a count query */
    if (rows * AL_TRAIN_COLUMNS > cap) rows = cap / AL_TRAIN_COLUMNS;
    if (rows > 0) memcpy(out, lab->history + from * AL_TRAIN_COLUMNS, (size_t)(rows * AL_TRAIN_COLUMNS) * sizeof *out);
    return rows;
}

int64_t al_train_lab_evals(const al_train_lab *lab, int64_t from, float *out, int64_t cap, al_error *err) {
    if (rows_refused(lab, "evaluations", from, lab ? lab->n_evals : 0, out, cap, err)) return -1;
    const int64_t w = eval_width(&lab->hp);
    int64_t rows = lab->n_evals - from;
    if (!out) return rows; /* a count query */
    if (rows * w > cap) rows = cap / w;
    if (rows > 0) memcpy(out, lab->evals + from * w, (size_t)(rows * w) * sizeof *out);
    return rows;
}

/* The head of evaluation row (its scores, past the step) highest on role: layer · n_heads + head,
 * the lower on a tie. */
static int64_t strongest(const al_train_lab *lab, const float *scores, al_lab_role role) {
    const int64_t LH = lab->hp.n_layers * lab->hp.n_heads;
    int64_t best = 0;
    for (int64_t lh = 1; lh < LH; lh++)
        if (scores[lh * AL_LAB_ROLES + role] > scores[best * AL_LAB_ROLES + role]) best = lh;
    return best;
}

int64_t al_train_lab_strongest_head(const al_train_lab *lab, al_lab_role role) {
    if (!lab || !lab->n_evals || role < 0 || role >= AL_LAB_ROLES) return -1;
    return strongest(lab, lab->evals + (lab->n_evals - 1) * eval_width(&lab->hp) + 1, role);
}

int64_t al_train_lab_role_passed(const al_train_lab *lab, al_lab_role role, double threshold) {
    if (!lab || role < 0 || role >= AL_LAB_ROLES) return -1;
    for (int64_t e = 0; e < lab->n_evals; e++) {
        const float *row = lab->evals + e * eval_width(&lab->hp);
        if (row[1 + strongest(lab, row + 1, role) * AL_LAB_ROLES + role] > threshold) return (int64_t)row[0];
    }
    return -1;
}

float al_train_lab_induction_max(const al_train_lab *lab) {
    const int64_t lh = al_train_lab_strongest_head(lab, AL_LAB_ROLE_INDUCTION);
    if (lh < 0) return NAN;
    return lab->evals[(lab->n_evals - 1) * eval_width(&lab->hp) + 1 + lh * AL_LAB_ROLES + AL_LAB_ROLE_INDUCTION];
}

int64_t al_train_lab_last_batch(const al_train_lab *lab, int32_t *ids, int64_t cap) {
    if (!lab || (!ids && cap > 0)) return -1;
    const int64_t N = lab->steps_done ? lab->cfg.batch * lab->cfg.seq : 0; /* none seen before a step */
    if (ids) memcpy(ids, lab->ids, (size_t)(N < cap ? N : cap) * sizeof *ids);
    return N;
}

int64_t al_train_lab_probe(const al_train_lab *lab, int32_t *ids, int64_t cap) {
    if (!lab || (!ids && cap > 0)) return -1;
    const int64_t T = lab->probe.len;
    if (ids) memcpy(ids, lab->probe_ids, (size_t)(T < cap ? T : cap) * sizeof *ids);
    return T;
}

al_status al_train_lab_attention(const al_train_lab *lab, int64_t layer, int64_t head, float *out, int64_t cap,
                                 al_error *err) {
    if (!lab || !out) return al_fail(err, AL_ERR_ARG, "train lab attention: NULL argument");
    const int64_t L = lab->hp.n_layers, H = lab->hp.n_heads, T = lab->probe.len;
    if (layer < 0 || layer >= L || head < 0 || head >= H)
        return al_fail(err, AL_ERR_ARG, "train lab attention: no head %lld of layer %lld", (long long)head, (long long)layer);
    if (cap < T * T) return al_fail(err, AL_ERR_CAPACITY, "train lab attention: %lld floats needed", (long long)(T * T));
    memcpy(out, lab->probe_att + (layer * H + head) * T * T, (size_t)(T * T) * sizeof *out);
    return AL_OK;
}

int64_t al_train_lab_piece(const al_train_lab *lab, int32_t id, uint8_t *out, int64_t cap, al_error *err) {
    if (!lab || (!out && cap > 0)) return al_fail(err, AL_ERR_ARG, "train lab: NULL argument"), -1;
    size_t len = 0;
    const char *p = id >= 0 && id < lab->cfg.vocab ? al_tok_piece(lab->tok, id, &len) : NULL;
    if (!p)
        return al_fail(err, AL_ERR_ARG, "train lab: no token id %d in the vocabulary of %lld", (int)id,
                       (long long)lab->cfg.vocab), -1;
    if (out && cap > 0) memcpy(out, p, len < (size_t)cap ? len : (size_t)cap);
    return (int64_t)len;
}

al_status al_train_lab_file(const al_train_lab *lab, al_train_lab_file_kind which, uint8_t **out, size_t *size,
                            al_error *err) {
    if (!lab || !out || !size) return al_fail(err, AL_ERR_ARG, "train lab file: NULL argument");
    *out = NULL, *size = 0;
    switch (which) {
    case AL_TRAIN_FILE_CONFIG: return al_trainer_config_json(lab->trainer, (char **)out, size, err);
    case AL_TRAIN_FILE_MODEL: {
        const char *meta[] = {"format", "pt"};
        return al_trainer_export(lab->trainer, meta, 1, out, size, err);
    }
    case AL_TRAIN_FILE_TOKENIZER:
        if (!(*out = malloc(lab->tokenizer_len))) return al_fail(err, AL_ERR_NOMEM, "train lab file: out of memory");
        memcpy(*out, lab->tokenizer_json, lab->tokenizer_len);
        *size = lab->tokenizer_len;
        return AL_OK;
    }
    return al_fail(err, AL_ERR_ARG, "train lab file: unknown file %d", (int)which);
}
