/* test_sampler.c — MiniMind's sampler, stage by stage, on small distributions worked out here:
 * temperature scales the logits, the repetition penalty divides positive and multiplies
 * negative logits of each id seen (once, however often it was seen), top-k keeps the k largest
 * (and ties with the k-th), top-p keeps the smallest head of the sorted distribution whose
 * probability reaches p (the first always), temperature 0 is the argmax, and draws follow the
 * final distribution, repeat for the same seed and are torch.multinomial's (two words of the
 * generator per id). */
#include "attnlab.h"
#include "check.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { V = 6 };

static void softmax(double *out, const double *v, int n) {
    double max = -INFINITY, sum = 0.0;
    for (int i = 0; i < n; i++) max = v[i] > max ? v[i] : max;
    for (int i = 0; i < n; i++) sum += out[i] = v[i] == -INFINITY ? 0.0 : exp(v[i] - max);
    for (int i = 0; i < n; i++) out[i] /= sum;
}

static void check_stage(const char *what, const float *got, const double *logits_after) {
    double want[V];
    softmax(want, logits_after, V);
    for (int i = 0; i < V; i++)
        CHECK(fabs(got[i] - want[i]) < 1e-6, "%s: p[%d] = %.7f, want %.7f", what, i, (double)got[i], want[i]);
}

int main(void) {
    const float logits[V] = {2.0f, -1.0f, 0.5f, 3.0f, 0.5f, -2.0f};
    const int32_t seen[4] = {0, 1, 1, 5}; /* id 1 twice: penalised once */
    float stages[AL_SAMPLER_STAGES * V];
    al_error err = {0};
    al_sampler_params p = {0.5, 3, 0.8, 2.0};
    CHECK(al_sampler_stages(logits, V, seen, 4, &p, stages, sizeof stages / sizeof stages[0], &err) == AL_OK, "%s", err.msg);

    double raw[V], tempered[V], penalised[V], topk[V], topp[V];
    for (int i = 0; i < V; i++) raw[i] = logits[i], tempered[i] = logits[i] / 0.5;
    check_stage("raw", stages, raw);
    check_stage("temperature", stages + V, tempered);
    memcpy(penalised, tempered, sizeof penalised);
    penalised[0] /= 2.0;  /* 4 → 2 */
    penalised[1] *= 2.0;  /* -2 → -4 */
    penalised[5] *= 2.0;  /* -4 → -8 */
    check_stage("repetition penalty", stages + 2 * V, penalised);
    /* Sorted: id 3 (6), id 0 (2), ids 2 and 4 (1 each), id 1 (-4), id 5 (-8). The 3rd largest
     * is 1: ids 2 and 4 both stay (a tie with the k-th). */
    memcpy(topk, penalised, sizeof topk);
    topk[1] = topk[5] = -INFINITY;
    check_stage("top-k", stages + 3 * V, topk);
    /* Top-p 0.8: id 3 alone has probability e^6 / (e^6 + e^2 + 2e) ≈ 0.969 > 0.8, so only it
     * stays (every later token comes after more than 0.8). */
    double q[V];
    softmax(q, topk, V);
    CHECK(q[3] > 0.8, "the worked example changed");
    for (int i = 0; i < V; i++) topp[i] = i == 3 ? topk[i] : -INFINITY;
    check_stage("top-p", stages + 4 * V, topp);

    /* Top-p 0.99: sorted p = 0.9693 (id 3), 0.0178 (id 0), 0.0065 (id 2), 0.0065 (id 4); the
     * probability before id 2 is 0.9871 < 0.99, before id 4 0.9936 > 0.99: ids 3, 0 and 2 stay
     * (of the tie, the smaller id first). */
    p.top_p = 0.99;
    al_sampler_stages(logits, V, seen, 4, &p, stages, AL_SAMPLER_STAGES * V, &err);
    for (int i = 0; i < V; i++) topp[i] = i == 3 || i == 0 || i == 2 ? topk[i] : -INFINITY;
    check_stage("top-p 0.99", stages + 4 * V, topp);

    /* Greedy: temperature 0 takes the argmax after the penalty. */
    const int32_t three[1] = {3};
    al_sampler_params greedy = {0.0, 0, 1.0, 100.0};
    CHECK(al_sample(logits, V, NULL, 0, &greedy, NULL, stages, AL_SAMPLER_STAGES * V, &err) == 3, "greedy");
    CHECK(al_sample(logits, V, three, 1, &greedy, NULL, stages, AL_SAMPLER_STAGES * V, &err) == 0,
          "greedy after penalising id 3 (3 / 100 < 2)");

    /* The penalty stage alone: the same logits as the stages' penalised row is the softmax of
     * (seen 0, 1 twice, 5: 2 / 2, -1 · 2, -2 · 2); a seen id outside the vocabulary changes
     * nothing. */
    float alone[V];
    memcpy(alone, logits, sizeof alone);
    CHECK(al_sampler_penalise(alone, V, seen, 4, 2.0, &err) == AL_OK, "%s", err.msg);
    const float penalised_logits[V] = {1.0f, -2.0f, 0.5f, 3.0f, 0.5f, -4.0f};
    CHECK(!memcmp(alone, penalised_logits, sizeof alone), "al_sampler_penalise: %g %g %g %g %g %g",
          (double)alone[0], (double)alone[1], (double)alone[2], (double)alone[3], (double)alone[4], (double)alone[5]);
    const int32_t past_end[2] = {0, V};
    CHECK(al_sampler_penalise(alone, V, past_end, 2, 2.0, &err) == AL_ERR_ARG && alone[0] == 1.0f,
          "a seen id outside the vocabulary: refused, nothing changed");

    /* Draws: the frequencies of 20000 draws within 0.01 of the final distribution; the same
     * seed gives the same draws. */
    al_sampler_params mild = {1.0, 0, 1.0, 1.0};
    al_rng *rng = al_rng_create(7), *again = al_rng_create(7);
    int counts[V] = {0}, same = 1;
    for (int i = 0; i < 20000; i++) {
        const int64_t a = al_sample(logits, V, NULL, 0, &mild, rng, stages, AL_SAMPLER_STAGES * V, &err);
        const int64_t b = al_sample(logits, V, NULL, 0, &mild, again, stages, AL_SAMPLER_STAGES * V, &err);
        same &= a == b;
        if (a >= 0 && a < V) counts[a]++;
    }
    CHECK(same, "the same seed gave different draws");
    /* A draw is torch.multinomial(final stage, 1): one exponential per id, two words each, so a
     * clone that takes 2·V words stands where the sampler's generator stands. */
    al_rng *before = al_rng_clone(rng), *words = al_rng_clone(rng);
    int64_t want = -1;
    const int64_t drawn = al_sample(logits, V, NULL, 0, &mild, rng, stages, AL_SAMPLER_STAGES * V, &err);
    CHECK(al_rng_multinomial(before, &want, stages + (AL_SAMPLER_STAGES - 1) * V, V, 1, 0, NULL, &err) == AL_OK &&
          drawn == want, "al_sample drew %lld, torch.multinomial %lld", (long long)drawn, (long long)want);
    for (int i = 0; i < 2 * V; i++) al_rng_u32(words);
    CHECK(al_rng_u32(words) == al_rng_u32(rng), "a draw did not take 2 words per id");
    al_rng_free(before);
    al_rng_free(words);
    softmax(raw, raw, V);
    for (int i = 0; i < V; i++)
        CHECK(fabs(counts[i] / 20000.0 - raw[i]) < 0.01, "id %d drawn %.4f of the time, p = %.4f", i, counts[i] / 20000.0, raw[i]);
    al_rng_free(rng);
    al_rng_free(again);

    /* Refusals. */
    al_sampler_params bad = {-1.0, 0, 1.0, 1.0};
    CHECK(al_sampler_stages(logits, V, NULL, 0, &bad, stages, AL_SAMPLER_STAGES * V, &err) == AL_ERR_ARG && strstr(err.msg, "temperature"), "temperature -1");
    bad = (al_sampler_params){1.0, 0, 0.0, 1.0};
    CHECK(al_sampler_stages(logits, V, NULL, 0, &bad, stages, AL_SAMPLER_STAGES * V, &err) == AL_ERR_ARG && strstr(err.msg, "top_p"), "top_p 0");
    const int32_t outside[1] = {6};
    CHECK(al_sampler_stages(logits, V, outside, 1, &mild, stages, AL_SAMPLER_STAGES * V, &err) == AL_ERR_ARG, "seen id 6");
    CHECK(al_sampler_stages(logits, V, NULL, 0, &mild, stages, 10, &err) == AL_ERR_CAPACITY, "short stages buffer");
    CHECK(al_sample(logits, V, NULL, 0, &mild, NULL, stages, AL_SAMPLER_STAGES * V, &err) == -1, "no generator");
    CHECK(al_sample(logits, V, NULL, 0, &mild, NULL, stages, AL_SAMPLER_STAGES * V, NULL) == -1, "no generator, NULL err");
    CHECK_DONE();
}
