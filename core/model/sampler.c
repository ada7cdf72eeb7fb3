/* sampler.c — the next token from the logits, in MiniMind's generate order: logits /
 * temperature → repetition penalty over every id seen (positive logits divided by it, negative
 * multiplied) → top-k (logits below the k-th largest out) → top-p (the smallest set of the most
 * likely tokens whose probability reaches p; the first always kept) → a draw from the softmax
 * of what is left, by torch.multinomial's own method (al_rng_multinomial), so that a generator
 * seeded as torch.manual_seed(S) draws the tokens MiniMind's generate draws. Temperature 0 is greedy (after the repetition penalty), and so is a
 * temperature so small that a logit divided by it leaves float's range (T of 1e-38, or 1e-37
 * with a logit of 40): that is the limit T → 0+, every stage one-hot. Each stage can be read
 * out (al_sampler_stages) for the page to draw. */
#include "attnlab/model.h"
#include "base/internal.h"
#include "torch/softmax.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int64_t al_sample_greedy(const float *logits, int64_t vocab) {
    if (!logits || vocab < 1) return -1;
    int64_t best = -1;
    for (int64_t i = 0; i < vocab; i++)
        if (logits[i] == logits[i] && (best < 0 || logits[i] > logits[best])) best = i;
    return best < 0 ? 0 : best;
}

al_sampler_params al_sampler_params_default(void) {
    al_sampler_params p = {0.85, 50, 0.85, 1.0};
    return p;
}

void al_sampler_params_fill_default(al_sampler_params *p) {
    if (p) *p = al_sampler_params_default();
}

static al_status check(const float *logits, int64_t vocab, const int32_t *seen, int64_t n_seen,
                       const al_sampler_params *p, al_error *err) {
    if (!logits || !p || (n_seen > 0 && !seen)) return al_fail(err, AL_ERR_ARG, "sampler: NULL argument");
    if (vocab < 1 || vocab > AL_MAX_VOCAB) return al_fail(err, AL_ERR_ARG, "sampler: vocab %lld out of range", (long long)vocab);
    if (!(p->temperature >= 0.0 && p->temperature <= 100.0))
        return al_fail(err, AL_ERR_ARG, "sampler: temperature must be in [0, 100] (got %g)", p->temperature);
    if (p->top_k < 0) return al_fail(err, AL_ERR_ARG, "sampler: top_k must be >= 0 (0: off; got %lld)", (long long)p->top_k);
    if (!(p->top_p > 0.0 && p->top_p <= 1.0))
        return al_fail(err, AL_ERR_ARG, "sampler: top_p must be in (0, 1] (got %g)", p->top_p);
    if (!(p->repetition_penalty > 0.0 && p->repetition_penalty <= 100.0))
        return al_fail(err, AL_ERR_ARG, "sampler: repetition penalty must be in (0, 100] (got %g)", p->repetition_penalty);
    for (int64_t i = 0; i < n_seen; i++)
        if (seen[i] < 0 || seen[i] >= vocab)
            return al_fail(err, AL_ERR_ARG, "sampler: seen id %d outside the vocabulary", (int)seen[i]);
    return AL_OK;
}

/* For sorting ids by logit, largest first (ties: the smaller id first, as a stable sort). */
typedef struct {
    float v;
    int32_t id;
} scored;

static int by_value_desc(const void *a, const void *b) {
    const scored *x = a, *y = b;
    if (x->v != y->v) return x->v < y->v ? 1 : -1;
    return (x->id > y->id) - (x->id < y->id);
}

/* Softmax of v [n] into out (-inf entries get 0), as F.softmax computes it, bit for bit. */
static void softmax_into(float *out, const float *v, int64_t n) {
    al_softmax_torch_f32(out, v, n);
}

/* MiniMind's repetition penalty on v [vocab] for every id seen, once each (torch.unique):
 * positive logits divided by r, negative ones multiplied (ids checked by the caller). */
static void penalise(float *v, const int32_t *seen, int64_t n_seen, double penalty) {
    if (penalty == 1.0) return;
    const float r = (float)penalty;
    for (int64_t i = 0; i < n_seen; i++) {
        int repeat = 0;
        for (int64_t j = 0; j < i && !repeat; j++) repeat = seen[j] == seen[i];
        if (repeat) continue;
        float *x = &v[seen[i]];
        *x = *x > 0.0f ? *x / r : *x * r;
    }
}

al_status al_sampler_penalise(float *logits, int64_t vocab, const int32_t *seen, int64_t n_seen,
                              double penalty, al_error *err) {
    const al_sampler_params p = {1.0, 0, 1.0, penalty};
    al_status st = check(logits, vocab, seen, n_seen, &p, err);
    if (st == AL_OK) penalise(logits, seen, n_seen, penalty);
    return st;
}

static void one_hot(float *out, int64_t n, int64_t at) {
    memset(out, 0, (size_t)n * sizeof *out);
    out[at] = 1.0f;
}

al_status al_sampler_stages(const float *logits, int64_t vocab, const int32_t *seen, int64_t n_seen,
                            const al_sampler_params *p, float *stages, int64_t cap, al_error *err) {
    al_status st = check(logits, vocab, seen, n_seen, p, err);
    if (st != AL_OK) return st;
    if (!stages || cap < AL_SAMPLER_STAGES * vocab)
        return al_fail(err, AL_ERR_CAPACITY, "sampler: the stages need %lld floats", (long long)(AL_SAMPLER_STAGES * vocab));
    scored *order = malloc((size_t)vocab * sizeof *order);
    if (!order) return al_fail(err, AL_ERR_NOMEM, "sampler: out of memory");
    float *raw = stages, *tempered = stages + vocab, *penalised = stages + 2 * vocab;
    float *top_k = stages + 3 * vocab, *top_p = stages + 4 * vocab;

    /* 1. The model's distribution as it stands. */
    softmax_into(raw, logits, vocab);
    /* 2. logits / temperature (temperature 0: greedy, left unscaled here). */
    const float t = p->temperature > 0.0 ? (float)p->temperature : 1.0f;
    int overflow = 0; /* a finite logit whose quotient is not: softmax would be ∞ - ∞ = NaN */
    for (int64_t i = 0; i < vocab; i++) {
        top_p[i] = logits[i] / t; /* top_p as scratch: logits so far */
        overflow |= isfinite(logits[i]) && !isfinite(top_p[i]);
    }
    if (overflow) {
        /* The limit T → 0+: softmax(logits / T) is one-hot on the largest logit, and the penalty
         * keeps the order of logits / T (T > 0 scales both signs alike), so the rest is one-hot on
         * the largest penalised logit, which top-k and top-p keep: the step is greedy. */
        one_hot(tempered, vocab, al_sample_greedy(logits, vocab));
        memcpy(top_p, logits, (size_t)vocab * sizeof *top_p);
        penalise(top_p, seen, n_seen, p->repetition_penalty);
        const int64_t best = al_sample_greedy(top_p, vocab);
        one_hot(penalised, vocab, best), one_hot(top_k, vocab, best), one_hot(top_p, vocab, best);
        free(order);
        return AL_OK;
    }
    softmax_into(tempered, top_p, vocab);
    /* 3. Repetition penalty on every id seen, once each. */
    penalise(top_p, seen, n_seen, p->repetition_penalty);
    softmax_into(penalised, top_p, vocab);
    /* 4. top-k: logits below the k-th largest out (ties with it kept). */
    for (int64_t i = 0; i < vocab; i++) order[i] = (scored){top_p[i], (int32_t)i};
    al_sort(order, (size_t)vocab, sizeof *order, by_value_desc);
    if (p->top_k > 0 && p->top_k < vocab) {
        const float kth = order[p->top_k - 1].v;
        for (int64_t i = 0; i < vocab; i++)
            if (top_p[i] < kth) top_p[i] = -INFINITY;
    }
    softmax_into(top_k, top_p, vocab);
    /* 5. top-p: in descending order, drop a token once the probability before it exceeds p
     *    (so the first is always kept). */
    if (p->top_p < 1.0) {
        double cumulative = 0.0;
        for (int64_t i = 0; i < vocab; i++) {
            const int32_t id = order[i].id;
            if (cumulative > p->top_p) top_p[id] = -INFINITY;
            cumulative += top_k[id];
        }
    }
    softmax_into(top_p, top_p, vocab);
    free(order);
    return AL_OK;
}

int64_t al_sample(const float *logits, int64_t vocab, const int32_t *seen, int64_t n_seen,
                  const al_sampler_params *p, al_rng *rng, float *stages, int64_t cap, al_error *err) {
    if (p && p->temperature == 0.0) {
        /* Greedy: the argmax after the repetition penalty (top-k and top-p always keep it), the
         * penalised logits in stages' first row; no softmax, no sort. */
        if (check(logits, vocab, seen, n_seen, p, err) != AL_OK) return -1;
        if (!stages || cap < 2 * vocab) return al_fail(err, AL_ERR_CAPACITY, "sampler: the stages need %lld floats",
                                                       (long long)(AL_SAMPLER_STAGES * vocab)), -1;
        float *penalised = stages, *done = stages + vocab; /* done: ids already penalised */
        memcpy(penalised, logits, (size_t)vocab * sizeof(float));
        if (p->repetition_penalty != 1.0) {
            const float r = (float)p->repetition_penalty;
            for (int64_t i = 0; i < n_seen; i++) done[seen[i]] = 0.0f;
            for (int64_t i = 0; i < n_seen; i++) {
                float *v = &penalised[seen[i]];
                if (done[seen[i]] != 0.0f) continue; /* once per id, as torch.unique */
                done[seen[i]] = 1.0f;
                *v = *v > 0.0f ? *v / r : *v * r;
            }
        }
        return al_sample_greedy(penalised, vocab);
    }
    if (al_sampler_stages(logits, vocab, seen, n_seen, p, stages, cap, err) != AL_OK) return -1;
    const float *final = stages + (AL_SAMPLER_STAGES - 1) * vocab;
    if (!rng) return al_fail(err, AL_ERR_ARG, "sampler: no random generator"), -1;
    /* torch.multinomial(probs, num_samples=1): one exponential per id of the vocabulary (those
     * left at 0 too), then the argmax of p / q — so a step moves the generator by 2·vocab words,
     * as MiniMind's does. */
    int64_t chosen = -1;
    if (al_rng_multinomial(rng, &chosen, final, vocab, 1, 0, NULL, err) != AL_OK) return -1;
    return chosen;
}
