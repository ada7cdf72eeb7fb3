/* lab/head_roles.h — what each attention head does, measured the same way for a loaded model
 * (the model view) and for one being trained (the Train tab). Not public API.
 *
 * The probe: R random ids repeated once (BOS first where the tokenizer has one),
 *   [BOS] r_1 .. r_R r_1 .. r_R,   R = ROLE_REPEAT, or less where the context is shorter;
 * on its attention a [T, T] (row q over keys, 0 past q), the mean over the queries after the
 * first of
 *   previous token  a[i, i-1]
 *   first token     a[i, 0]                  (an attention sink)
 *   local window    Σ a[i, j] over the 4 keys j = i-3 .. i
 * and, over the second copy's queries (r_j again at position s + R + j), the induction score:
 * the weight on the token that followed r_j's first occurrence, at position s + j + 1. */
#ifndef ATTNLAB_LAB_HEAD_ROLES_H
#define ATTNLAB_LAB_HEAD_ROLES_H

#include "base/internal.h"

enum { AL_ROLE_REPEAT = 24 };

typedef struct {
    int64_t start;  /* s: 1 after a BOS, else 0 */
    int64_t repeat; /* R */
    int64_t len;    /* T = s + 2R */
} al_role_probe;

/* The probe's ids into ids[AL_ROLE_REPEAT · 2 + 1] for a vocabulary of `vocab` ids (random ids
 * past llama2.c's <unk>, BOS and EOS, from a generator seeded 1234), bos -1 for none, at most
 * `context` tokens; its shape in *probe, len 0 when the context is too short to measure (R < 2). */
al_status al_role_probe_ids(int32_t *ids, int64_t vocab, int32_t bos, int64_t context, al_role_probe *probe,
                            al_error *err);

/* One head's scores out[AL_LAB_ROLES] from its attention over the probe: a [T, T] with row stride ld. */
void al_head_role_scores(const al_role_probe *probe, const float *a, int64_t ld, float *out);

#endif
