/* loop.c — the one training step that `attnlab train` and the page's Train tab both take, and
 * the held-out loss they both measure:
 *
 *   1. `accum` micro-batches, each drawn by a batch source (a corpus stream below, or the Train
 *      tab's repeated task), forward, then backward of loss / accum (the gradients add up)
 *   2. MiniMind's cosine learning rate counted in micro-batches, at this step's last one
 *   3. clipping to the global norm, then AdamW
 *
 * A corpus stream's batches: windows of `seq` tokens at places drawn by PyTorch's generator
 * seeded with (seed, step, micro-batch), so a run resumed at any step draws what it would have
 * drawn; the held-out windows by a generator of their own, the same at every measurement. */
#include "attnlab/train.h"
#include "base/internal.h"

#include <math.h>
#include <string.h>

al_rng *al_batch_rng(uint64_t seed, int64_t step, int64_t micro) {
    return al_rng_create(seed * 1000003u + (uint64_t)step * 131u + (uint64_t)micro);
}

/* ---- the step -------------------------------------------------------------------------------------------- */

static al_status check_settings(const al_trainer *t, const al_train_settings *s, al_error *err) {
    (void)t;
    if (s->batch < 1) return al_fail(err, AL_ERR_ARG, "train step: batch must be at least 1 (got %lld)", (long long)s->batch);
    if (s->seq < 2) return al_fail(err, AL_ERR_ARG, "train step: seq must be at least 2 (got %lld)", (long long)s->seq);
    if (s->accum < 1) return al_fail(err, AL_ERR_ARG, "train step: accum must be at least 1 (got %lld)", (long long)s->accum);
    if (s->steps < 1) return al_fail(err, AL_ERR_ARG, "train step: steps must be at least 1 (got %lld)", (long long)s->steps);
    return AL_OK;
}

al_status al_train_step(al_trainer *t, const al_train_settings *s, const al_batch_source *src, int64_t step, int32_t *ids,
                        al_train_step_result *out, al_error *err) {
    if (!t || !s || !src || !src->draw || !ids) return al_fail(err, AL_ERR_ARG, "train step: NULL argument");
    al_status st = check_settings(t, s, err);
    if (st != AL_OK) return st;
    if (step < 0 || step >= s->steps)
        return al_fail(err, AL_ERR_ARG, "train step: step %lld is outside the run's [0, %lld)", (long long)step,
                       (long long)s->steps);
    /* 1. the micro-batches: forward, backward of loss / accum, added up */
    double loss = 0.0;
    al_trainer_zero_grad(t);
    for (int64_t micro = 0; micro < s->accum; micro++) {
        float l = 0.0f;
        if ((st = src->draw(src->ctx, step, micro, ids, err)) != AL_OK) return st;
        if ((st = al_trainer_forward(t, ids, ids, s->batch, s->seq, s->aux_coef, &l, NULL, NULL, err)) != AL_OK) return st;
        if (src->seen) src->seen(src->ctx, t, micro);
        if ((st = al_trainer_backward(t, 1.0f / (float)s->accum, err)) != AL_OK) return st;
        loss += l / (double)s->accum;
    }
    /* 2. MiniMind's schedule counts micro-batches: optimizer step `step` (0-based) takes the rate
     *    of its last one, lr(step) = al_lr_schedule(lr, (step + 1) · accum, steps · accum), so the
     *    first step is already past the peak and the last one is at the floor lr / 10 */
    al_adamw_params p = s->adamw;
    p.lr = al_lr_schedule(s->lr, (step + 1) * s->accum, s->steps * s->accum);
    /* 3. clipping and AdamW */
    float norm = 0.0f;
    if ((st = al_trainer_step(t, &p, &norm, err)) != AL_OK) return st;
    if (out) out->loss = loss, out->lr = p.lr, out->grad_norm = norm;
    return AL_OK;
}

double al_train_held_out_loss(al_trainer *t, const al_train_settings *s, const al_batch_source *src, int32_t *ids) {
    if (!t || !s || !src || !src->held_out || !ids || check_settings(t, s, NULL) != AL_OK) return NAN;
    double sum = 0.0;
    int64_t count = 0;
    for (int64_t k = 0; k < AL_TRAIN_HELD_OUT_BATCHES && src->held_out(src->ctx, k, ids); k++) {
        float loss = 0.0f;
        if (al_trainer_forward(t, ids, ids, s->batch, s->seq, s->aux_coef, &loss, NULL, NULL, NULL) == AL_OK)
            sum += loss, count++;
    }
    return count ? sum / (double)count : NAN;
}

/* ---- a corpus stream's batches ------------------------------------------------------------------------ */

enum { HELD_OUT_SEED = 0xE7A1 }; /* the held-out windows' generator, with step -1 */

/* `batch` windows of seq tokens from ids[lo, hi), at places drawn by the generator of (seed,
 * step, micro): window b starts at lo + ⌊u_b · (hi − lo − seq)⌋. */
static al_status draw_windows(const al_stream_batches *sb, int64_t lo, int64_t hi, uint64_t seed, int64_t step,
                              int64_t micro, int32_t *ids, al_error *err) {
    al_rng *rng = al_batch_rng(seed, step, micro);
    if (!rng) return al_fail(err, AL_ERR_NOMEM, "batch: out of memory");
    for (int64_t b = 0; b < sb->batch; b++) {
        float u;
        al_rng_uniform(rng, &u, 1, 0.0f, 1.0f);
        int64_t at = lo + (int64_t)((double)u * (double)(hi - lo - sb->seq));
        if (at > hi - sb->seq) at = hi - sb->seq;
        memcpy(ids + b * sb->seq, sb->ids + at, (size_t)sb->seq * sizeof *ids);
    }
    al_rng_free(rng);
    return AL_OK;
}

static al_status stream_draw(void *ctx, int64_t step, int64_t micro, int32_t *ids, al_error *err) {
    const al_stream_batches *sb = ctx;
    return draw_windows(sb, 0, sb->split, sb->seed, step, micro, ids, err);
}

/* The held-out batches: 8 fixed draws of windows from the held-out part, none if it is no
 * longer than a window. */
static int stream_held_out(void *ctx, int64_t k, int32_t *ids) {
    const al_stream_batches *sb = ctx;
    if (sb->n_tokens - sb->split <= sb->seq) return 0;
    return draw_windows(sb, sb->split, sb->n_tokens, HELD_OUT_SEED, -1, k, ids, NULL) == AL_OK;
}

al_status al_stream_batches_init(al_stream_batches *sb, const int32_t *ids, int64_t n_tokens, int64_t split, int64_t batch,
                                 int64_t seq, uint64_t seed, al_error *err) {
    if (!sb || !ids) return al_fail(err, AL_ERR_ARG, "stream batches: NULL argument");
    memset(sb, 0, sizeof *sb);
    if (batch < 1 || seq < 2)
        return al_fail(err, AL_ERR_ARG, "stream batches: batch %lld and seq %lld must be at least 1 and 2", (long long)batch,
                       (long long)seq);
    if (split < 0 || split > n_tokens)
        return al_fail(err, AL_ERR_ARG, "stream batches: split %lld is outside [0, %lld]", (long long)split,
                       (long long)n_tokens);
    /* each part at least a window and one token more: a window's place is drawn from the
     * hi − lo − seq positions of its part */
    if (split < seq + 1 || n_tokens - split < seq + 1)
        return al_fail(err, AL_ERR_ARG, "%lld tokens (%lld for training, %lld held out) are too few for windows of %lld",
                       (long long)n_tokens, (long long)split, (long long)(n_tokens - split), (long long)seq);
    sb->ids = ids, sb->n_tokens = n_tokens, sb->split = split, sb->batch = batch, sb->seq = seq, sb->seed = seed;
    return AL_OK;
}

al_batch_source al_stream_batch_source(al_stream_batches *sb) {
    al_batch_source src = {stream_draw, stream_held_out, NULL, sb};
    return src;
}
