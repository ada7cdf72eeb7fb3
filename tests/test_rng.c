/* test_rng.c — checks core/torch/rng.c against PyTorch 1.13: replays every record of the golden file
 * written by tests/fixtures/gen_rng.py (seeding, raw mt19937 words, uniform_, exponential_,
 * randn / normal_ on both kernel paths, torch.multinomial on both of its paths, nn.Linear and
 * xavier_uniform_ init, randint on both paths, the tutorials' sequences) and compares the float32
 * bit patterns (and the ids drawn) exactly, and torch.topk's order of indices (torch/topk.c) on
 * rows drawn that way; plus a few properties that need no fixture.
 *
 * Usage: test_rng [tests/fixtures/rng/rng_golden.txt]    (exit status 0 only if all pass) */

#include "attnlab.h"
#include "check.h"
#include "torch/topk.h"
#include "golden.h"

#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_FIXTURE "tests/fixtures/rng/rng_golden.txt"
#define NAME_MAX_LEN 128

/* Compares got[0..count) with the stored head and tail and with the hash of all values.
 * Prints the case, step, index and both values of the first few differences. */
static void compare_record(const char *case_name, int step, const char *op, const uint32_t *got,
                           int64_t count, uint64_t want_hash, const uint32_t *stored,
                           int64_t n_head, int64_t n_tail) {
    int64_t shown = 0, bad = 0;
    for (int64_t k = 0; k < n_head + n_tail; k++) {
        int64_t i = k < n_head ? k : count - n_tail + (k - n_head);
        if (got[i] != stored[k]) {
            bad++;
            if (shown++ < 5)
                fprintf(stderr, "  %s step %d (%s) [%" PRId64 "]: got %08x (%.9g) want %08x (%.9g)\n",
                        case_name, step, op, i, got[i], al_float_of_bits(got[i]), stored[k],
                        al_float_of_bits(stored[k]));
        }
    }
    uint64_t got_hash = fnv1a64_words(got, count);
    CHECK(bad == 0 && got_hash == want_hash,
          "%s step %d (%s, %" PRId64 " values): %" PRId64 " of the stored values differ, "
          "hash %016" PRIx64 " want %016" PRIx64,
          case_name, step, op, count, bad, got_hash, want_hash);
}

/* Replays the golden file. Returns the number of records, or -1 if the file is malformed. */
static int replay_fixture(const char *path) {
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        fprintf(stderr, "cannot open %s\n", path);
        return -1;
    }
    golden_src in = golden_stream(f);
    char case_name[NAME_MAX_LEN] = "", prev_case[NAME_MAX_LEN] = "", op[32];
    al_rng *rng = NULL;
    float *values = NULL, *probs = NULL, *work = NULL;
    int64_t *drawn = NULL, n_probs = 0;
    uint32_t *got = NULL, *stored = NULL;
    int records = 0, step = 0, ok = 1;

    while (ok && golden_token(&in, case_name, sizeof case_name)) {
        int64_t count, n_head, n_tail;
        uint64_t hash;
        ok = golden_token(&in, op, sizeof op) && golden_i64(&in, &count) &&
             golden_hex(&in, &hash) && golden_i64(&in, &n_head) && golden_i64(&in, &n_tail) &&
             count >= 0 && n_head >= 0 && n_tail >= 0 && n_head + n_tail <= count &&
             count <= (INT64_C(1) << 24);
        if (!ok) break;
        step = strcmp(case_name, prev_case) == 0 ? step + 1 : 0;
        snprintf(prev_case, sizeof prev_case, "%s", case_name);

        /* Parameters, then the operation itself on this case's generator. */
        free(values); free(got); free(stored); free(drawn);
        values = malloc((size_t)(count > 0 ? count : 1) * sizeof *values);
        drawn = malloc((size_t)(count > 0 ? count : 1) * sizeof *drawn);
        got = malloc((size_t)(count > 0 ? count : 1) * sizeof *got);
        stored = malloc((size_t)(n_head + n_tail > 0 ? n_head + n_tail : 1) * sizeof *stored);
        if (values == NULL || got == NULL || stored == NULL || drawn == NULL) { ok = 0; break; }

        if (strcmp(op, "seed") == 0) {
            uint64_t seed;
            ok = golden_u64(&in, &seed, 10);
            if (!ok) break;
            if (step == 0) { /* a new case: a fresh generator, as after torch.manual_seed */
                al_rng_free(rng);
                rng = al_rng_create(seed);
                if (rng == NULL) { ok = 0; break; }
            } else {
                al_rng_seed(rng, seed);
            }
        } else if (rng == NULL) {
            ok = 0; /* every case must start with a seed */
            break;
        } else if (strcmp(op, "u32") == 0) {
            for (int64_t i = 0; i < count; i++) got[i] = al_rng_u32(rng);
        } else if (strcmp(op, "uniform") == 0) {
            float from, to;
            ok = golden_f32_bits(&in, &from) && golden_f32_bits(&in, &to);
            if (ok) al_rng_uniform(rng, values, count, from, to);
        } else if (strcmp(op, "randn") == 0) {
            al_rng_randn(rng, values, count);
        } else if (strcmp(op, "normal") == 0) {
            float mean, std;
            ok = golden_f32_bits(&in, &mean) && golden_f32_bits(&in, &std);
            if (ok) al_rng_normal(rng, values, count, mean, std);
        } else if (strcmp(op, "linear") == 0) {
            int64_t out_dim, in_dim;
            ok = golden_i64(&in, &out_dim) && golden_i64(&in, &in_dim) &&
                 out_dim * in_dim == count;
            if (ok) al_rng_linear_init(rng, values, out_dim, in_dim);
        } else if (strcmp(op, "xavier") == 0) {
            int64_t out_dim, in_dim;
            double gain;
            ok = golden_i64(&in, &out_dim) && golden_i64(&in, &in_dim) &&
                 golden_double(&in, &gain) && out_dim * in_dim == count;
            if (ok) al_rng_xavier_uniform(rng, values, out_dim, in_dim, gain);
        } else if (strcmp(op, "exponential") == 0) {
            double lambda;
            ok = golden_double(&in, &lambda);
            if (ok) al_rng_exponential(rng, values, count, lambda);
        } else if (strcmp(op, "probs") == 0) {
            /* The weights themselves, stored whole; the next multinomial records draw from them. */
            ok = n_head == count;
            free(probs); free(work);
            probs = malloc((size_t)(count > 0 ? count : 1) * sizeof *probs);
            work = malloc((size_t)(count > 0 ? count : 1) * sizeof *work);
            n_probs = count;
            if (probs == NULL || work == NULL) ok = 0;
        } else if (strcmp(op, "multinomial") == 0) {
            int64_t replacement;
            al_error err = {0};
            ok = golden_i64(&in, &replacement) && n_probs > 0;
            if (ok) {
                al_status st = al_rng_multinomial(rng, drawn, probs, n_probs, count, (int)replacement, work, &err);
                CHECK(st == AL_OK, "%s step %d: multinomial refused: %s", case_name, step, err.msg);
                for (int64_t i = 0; i < count; i++) got[i] = st == AL_OK ? (uint32_t)drawn[i] : 0xffffffffu;
            }
        } else if (strcmp(op, "randint") == 0) {
            int64_t low, high, *ints = malloc((size_t)(count / 2 + 1) * sizeof *ints);
            ok = ints != NULL && golden_i64(&in, &low) && golden_i64(&in, &high) && low < high &&
                 count % 2 == 0;
            if (ok) al_rng_randint(rng, ints, count / 2, low, high);
            for (int64_t i = 0; ok && i < count / 2; i++) { /* each value as two words, low first */
                got[2 * i] = (uint32_t)((uint64_t)ints[i] & 0xffffffffu);
                got[2 * i + 1] = (uint32_t)((uint64_t)ints[i] >> 32);
            }
            free(ints);
        } else if (strcmp(op, "topk") == 0) {
            int64_t n, sorted, ties, ints[8], idx[8];
            float x[8];
            ok = golden_i64(&in, &n) && golden_i64(&in, &sorted) && golden_i64(&in, &ties) &&
                 n >= 1 && n <= 8 && count >= 1 && count <= n;
            if (ok && ties) {
                al_rng_randint(rng, ints, n, 0, 3);
                for (int64_t i = 0; i < n; i++) x[i] = (float)ints[i];
            } else if (ok) {
                al_rng_randn(rng, x, n);
            }
            if (ok) al_topk_torch(idx, NULL, x, n, count, (int)sorted);
            for (int64_t i = 0; ok && i < count; i++) got[i] = (uint32_t)idx[i];
        } else {
            fprintf(stderr, "%s: unknown op '%s'\n", path, op);
            ok = 0;
        }
        if (!ok) break;

        for (int64_t k = 0; ok && k < n_head + n_tail; k++) {
            uint64_t b;
            ok = golden_hex(&in, &b) && b <= 0xffffffffu;
            stored[k] = (uint32_t)b;
        }
        if (!ok) break;
        if (strcmp(op, "probs") == 0) {
            for (int64_t i = 0; i < count; i++) probs[i] = al_float_of_bits(stored[i]);
        } else if (strcmp(op, "seed") != 0) {
            if (strcmp(op, "u32") != 0 && strcmp(op, "multinomial") != 0 && strcmp(op, "randint") != 0 &&
                strcmp(op, "topk") != 0)
                for (int64_t i = 0; i < count; i++) got[i] = al_bits_of_float(values[i]);
            compare_record(case_name, step, op, got, count, hash, stored, n_head, n_tail);
        }
        records++;
    }
    if (!ok) fprintf(stderr, "%s: malformed record in case '%s'\n", path, case_name);
    fclose(f);
    free(values); free(got); free(stored); free(drawn); free(probs); free(work);
    al_rng_free(rng);
    return ok ? records : -1;
}

/* Properties that hold without a fixture. */
static void check_properties(void) {
    al_rng_free(NULL); /* no-op */

    /* The C++ standard fixes mt19937's 10000th output for the default seed 5489. */
    al_rng *r = al_rng_create(5489);
    CHECK(r != NULL, "al_rng_create failed");
    if (r == NULL) return;
    uint32_t word = 0;
    for (int i = 0; i < 10000; i++) word = al_rng_u32(r);
    CHECK(word == 4123659995u, "10000th mt19937 word %u, want 4123659995", word);

    /* Only the low 32 bits of the seed reach the engine. */
    al_rng *wide = al_rng_create((UINT64_C(1) << 32) + 5);
    al_rng_seed(r, 5);
    CHECK(wide != NULL, "al_rng_create failed");
    if (wide != NULL) {
        for (int i = 0; i < 1000; i++) {
            uint32_t a = al_rng_u32(r), b = al_rng_u32(wide);
            if (a != b) { CHECK(a == b, "seed 2^32+5 differs from seed 5 at word %d", i); break; }
        }
    }
    al_rng_free(wide);

    /* randn is normal(0, 1); empty draws consume nothing; reseeding clears the cached normal. */
    float a[40], b[40], one, again;
    al_rng_seed(r, 77); al_rng_randn(r, a, 3); al_rng_randn(r, a + 3, 37);
    al_rng_seed(r, 77); al_rng_normal(r, b, 3, 0.0f, 1.0f); al_rng_normal(r, b + 3, 0, 0.0f, 1.0f);
    al_rng_uniform(r, b + 3, 0, -1.0f, 1.0f); al_rng_normal(r, b + 3, 37, 0.0f, 1.0f);
    CHECK(memcmp(a, b, sizeof a) == 0, "randn and normal(0, 1) differ");
    al_rng_seed(r, 5); al_rng_randn(r, &one, 1);
    al_rng_seed(r, 5); al_rng_randn(r, &again, 1);
    CHECK(al_bits_of_float(one) == al_bits_of_float(again), "reseeding did not clear the cached normal");

    /* A clone continues exactly where its original stands, the cached normal included, and
     * the two then draw independently. */
    al_rng_seed(r, 9); al_rng_randn(r, a, 3); /* leaves a cached normal */
    al_rng *copy = al_rng_clone(r);
    CHECK(copy != NULL && al_rng_clone(NULL) == NULL, "al_rng_clone");
    if (copy != NULL) {
        al_rng_randn(r, a, 40); al_rng_randn(r, a, 1);
        al_rng_randn(copy, b, 40); al_rng_randn(copy, b, 1);
        CHECK(memcmp(a, b, sizeof a) == 0, "the clone draws other numbers than its original");
        al_rng_randn(copy, b, 40);
        al_rng_randn(r, a, 40);
        CHECK(memcmp(a, b, sizeof a) == 0, "drawing from the clone moved the original");
    }
    al_rng_free(copy);

    /* uniform_ stays within [from, to) here (the bounds are far apart relative to an ulp). */
    float u[1000];
    al_rng_uniform(r, u, 1000, -0.25f, 0.5f);
    int inside = 1;
    for (int i = 0; i < 1000; i++) inside &= u[i] >= -0.25f && u[i] < 0.5f;
    CHECK(inside, "uniform_ left [-0.25, 0.5)");
    al_rng_free(r);
}

int main(int argc, char **argv) {
    const char *path = argc > 1 ? argv[1] : DEFAULT_FIXTURE;
    check_properties();
    int records = replay_fixture(path);
    CHECK(records > 0, "could not replay %s", path);
    if (records > 0) printf("%s: %d records replayed\n", path, records);
    CHECK_DONE();
}
