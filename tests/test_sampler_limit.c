/* test_sampler_limit.c — the sampler at a temperature so small that a logit divided by it
 * leaves float's range: the limit T → 0+, every stage after the first one-hot and the token the
 * greedy one (temperature 0's), with no NaN anywhere; and just inside the range, the stages as
 * they always were (finite, the divide-first softmax). */
#include "attnlab.h"
#include "check.h"

#include <float.h>
#include <math.h>
#include <string.h>

enum { V = 6 };

/* Every stage finite; the rows after the first one-hot on `at` (the first: a distribution). */
static void check_one_hot(const char *what, const float *stages, int64_t tempered_at, int64_t at) {
    double sum = 0.0;
    for (int i = 0; i < V; i++) sum += stages[i];
    CHECK(fabs(sum - 1.0) < 1e-6, "%s: the raw stage sums to %g", what, sum);
    for (int s = 1; s < AL_SAMPLER_STAGES; s++)
        for (int i = 0; i < V; i++) {
            const float want = i == (s == 1 ? tempered_at : at) ? 1.0f : 0.0f;
            CHECK(stages[s * V + i] == want, "%s: stage %d, p[%d] = %g, want %g", what, s, i,
                  (double)stages[s * V + i], (double)want);
        }
}

int main(void) {
    /* Largest 40 (id 1); with id 1 seen and a penalty of 4, 40 / 4 = 10 < 12 (id 4). */
    const float logits[V] = {3.0f, 40.0f, -40.0f, 0.5f, 12.0f, -2.0f};
    float stages[AL_SAMPLER_STAGES * V];
    al_error err = {0};
    const int32_t seen[2] = {1, 1};
    al_sampler_params greedy = {0.0, 0, 1.0, 1.0};
    al_rng *rng = al_rng_create(1);

    /* 1. 40 / 1e-37 = 4e38 > FLT_MAX; 1e-38, 1e-40 (subnormal floats) and 1e-46 (0 as a float)
     *    overflow every logit but the small ones. */
    const double tiny[] = {1e-37, 1e-38, 1e-40, 1e-46, 4.9e-324};
    for (size_t k = 0; k < sizeof tiny / sizeof tiny[0]; k++) {
        for (int penalised = 0; penalised < 2; penalised++) {
            char what[64];
            snprintf(what, sizeof what, "T = %g%s", tiny[k], penalised ? ", penalty 4 on id 1" : "");
            al_sampler_params p = {tiny[k], 3, 0.5, penalised ? 4.0 : 1.0};
            greedy.repetition_penalty = p.repetition_penalty;
            const int64_t want = al_sample(logits, V, seen, 2, &greedy, NULL, stages, AL_SAMPLER_STAGES * V, &err);
            CHECK(want == (penalised ? 4 : 1), "%s: greedy chose %lld", what, (long long)want);
            CHECK(al_sampler_stages(logits, V, seen, 2, &p, stages, AL_SAMPLER_STAGES * V, &err) == AL_OK, "%s: %s", what,
                  err.msg);
            check_one_hot(what, stages, 1, want);
            for (int draw = 0; draw < 20; draw++) {
                const int64_t got = al_sample(logits, V, seen, 2, &p, rng, stages, AL_SAMPLER_STAGES * V, &err);
                CHECK(got == want, "%s: drew %lld, greedy %lld", what, (long long)got, (long long)want);
            }
        }
    }

    /* 2. Just inside the range: 30 / 1e-37 = 3e38 is finite, so the stages are the softmax of
     *    the quotients as ever (the largest wins it all, the rest underflow to 0: finite). */
    const float inside[V] = {3.0f, 30.0f, -30.0f, 0.5f, 12.0f, -2.0f};
    al_sampler_params p = {1e-37, 0, 1.0, 1.0};
    CHECK(al_sampler_stages(inside, V, NULL, 0, &p, stages, AL_SAMPLER_STAGES * V, &err) == AL_OK, "%s", err.msg);
    int finite = 1;
    for (int i = 0; i < AL_SAMPLER_STAGES * V; i++) finite &= isfinite(stages[i]);
    CHECK(finite && stages[V + 1] == 1.0f && stages[V + 4] == 0.0f, "T = 1e-37, largest logit 30: p = %g, %g",
          (double)stages[V + 1], (double)stages[V + 4]);

    /* 3. A -inf logit (a token ruled out) is not an overflow: the stages are the ordinary ones. */
    const float ruled_out[V] = {1.0f, 2.0f, -INFINITY, 0.5f, 1.5f, -2.0f};
    p = (al_sampler_params){1.0, 0, 1.0, 1.0};
    CHECK(al_sampler_stages(ruled_out, V, NULL, 0, &p, stages, AL_SAMPLER_STAGES * V, &err) == AL_OK, "%s", err.msg);
    CHECK(stages[V + 2] == 0.0f && stages[V + 1] > 0.0f && stages[V + 1] < 1.0f, "-inf logit: p = %g, %g",
          (double)stages[V + 2], (double)stages[V + 1]);
    al_rng_free(rng);
    CHECK_DONE();
}
