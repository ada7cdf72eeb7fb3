/* bigram.c — the baseline a trained model must beat: a bigram model of the same training
 * tokens, scored on the same held-out targets. Two smoothings, each with its parameter picked
 * on the held-out text itself (the baseline's best case):
 *   add-k:        P(b | a) = (c(a, b) + k) / (c(a) + k·V)
 *   interpolated: P(b | a) = λ · c(a, b) / c(a) + (1 − λ) · P(b),  P(b) = (c(b) + 1) / (N + V)
 * (an a never seen leaves only the second term). Counts come from a sorted list of the pairs. */
#include "attnlab/app.h"
#include "base/internal.h"

#include <math.h>
#include <stdlib.h>

static int cmp_u64(const void *a, const void *b) {
    const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* How many times key occurs in the sorted keys[n]. */
static int64_t count_of(const uint64_t *keys, int64_t n, uint64_t key) {
    int64_t lo = 0, hi = n;
    while (lo < hi) {
        const int64_t mid = lo + (hi - lo) / 2;
        if (keys[mid] < key) lo = mid + 1;
        else hi = mid;
    }
    int64_t end = lo;
    while (end < n && keys[end] == key) end++;
    return end - lo;
}

al_status al_bigram_loss(const int32_t *train, int64_t n_train, const int32_t *prev, const int32_t *next, int64_t n_pairs,
                         int64_t vocab, al_bigram_result *out, al_error *err) {
    if (!train || !prev || !next || !out || n_train < 2 || n_pairs < 1 || vocab < 1)
        return al_fail(err, AL_ERR_ARG, "bigram: NULL argument or nothing to count");
    uint64_t *keys = malloc((size_t)(n_train - 1) * sizeof *keys);
    int64_t *first = calloc((size_t)vocab, sizeof *first), *unigram = calloc((size_t)vocab, sizeof *unigram);
    int64_t *pair_c = malloc((size_t)n_pairs * sizeof *pair_c);
    al_status st = keys && first && unigram && pair_c ? AL_OK : al_fail(err, AL_ERR_NOMEM, "bigram: out of memory");
    for (int64_t i = 0; st == AL_OK && i < n_train; i++)
        if (train[i] < 0 || train[i] >= vocab) st = al_fail(err, AL_ERR_ARG, "bigram: id %d outside the vocabulary", (int)train[i]);
    if (st == AL_OK) {
        /* 1. the counts: c(a, b) by sorted pairs, c(a) as a first element, c(b) */
        for (int64_t i = 0; i + 1 < n_train; i++) {
            keys[i] = (uint64_t)train[i] * (uint64_t)vocab + (uint64_t)train[i + 1];
            first[train[i]]++;
        }
        for (int64_t i = 0; i < n_train; i++) unigram[train[i]]++;
        qsort(keys, (size_t)(n_train - 1), sizeof *keys, cmp_u64);
        for (int64_t i = 0; i < n_pairs; i++)
            pair_c[i] = count_of(keys, n_train - 1, (uint64_t)prev[i] * (uint64_t)vocab + (uint64_t)next[i]);
        /* 2. each smoothing's held-out loss over a grid of its parameter; the best kept */
        static const double K[] = {1e-4, 3e-4, 1e-3, 3e-3, 1e-2, 3e-2, 0.1, 0.3, 1.0};
        static const double L[] = {0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99};
        out->add_k_loss = INFINITY, out->interpolated_loss = INFINITY;
        for (size_t g = 0; g < sizeof K / sizeof K[0]; g++) {
            double nll = 0.0;
            for (int64_t i = 0; i < n_pairs; i++)
                nll -= log(((double)pair_c[i] + K[g]) / ((double)first[prev[i]] + K[g] * (double)vocab));
            if (nll / (double)n_pairs < out->add_k_loss) out->add_k_loss = nll / (double)n_pairs, out->k = K[g];
        }
        for (size_t g = 0; g < sizeof L / sizeof L[0]; g++) {
            double nll = 0.0;
            for (int64_t i = 0; i < n_pairs; i++) {
                const double uni = ((double)unigram[next[i]] + 1.0) / ((double)n_train + (double)vocab);
                const double big = first[prev[i]] ? (double)pair_c[i] / (double)first[prev[i]] : 0.0;
                nll -= log(first[prev[i]] ? L[g] * big + (1.0 - L[g]) * uni : uni);
            }
            if (nll / (double)n_pairs < out->interpolated_loss) out->interpolated_loss = nll / (double)n_pairs, out->lambda = L[g];
        }
        out->loss = out->add_k_loss < out->interpolated_loss ? out->add_k_loss : out->interpolated_loss;
    }
    free(keys), free(first), free(unigram), free(pair_c);
    return st;
}
