/* tokenizer_cut.c — a tokenizer.json of MiniMind's kind cut to its first V ids
 * (al_tok_hf_cut in tokenizer.h): read and checked by al_tok_hf_create, then the first V tokens
 * and the merges that stay among them written by the trainer's writer (tokenizer_json_write.c). */
#include "attnlab/tokenizer.h"
#include "tokenizer/tokenizer_impl.h"
#include "tokenizer/tokenizer_json_write.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* What the writer writes besides the tokens and merges must be what t encodes with: MiniMind's
 * 36 added tokens at ids 0..35, nothing else added, the 256 bytes right after them, and
 * ByteLevel's split as MiniMind's pre-tokenizer has it. */
static al_status check_minimind_kind(const al_tokenizer *t, al_error *err) {
    char shown[TOK_SHOWN_BUF];
    if (t->n_added != AL_TOK_TRAIN_SPECIALS)
        return al_fail(err, AL_ERR_FORMAT, "added_tokens holds %" PRId32 " tokens; a cut keeps MiniMind's %d (ids "
                       "0..%d: <|endoftext|> .. <|buffer9|>) and no others", t->n_added, AL_TOK_TRAIN_SPECIALS,
                       AL_TOK_TRAIN_SPECIALS - 1);
    for (int32_t k = 0; k < t->n_added; k++) {
        const tok_entry *a = &t->added[k];
        if (a->id >= AL_TOK_TRAIN_SPECIALS)
            return al_fail(err, AL_ERR_FORMAT, "added token '%s' has id %" PRId32 "; a cut keeps MiniMind's %d added "
                           "tokens, at ids 0..%d", al_tok_show(shown, (const uint8_t *)a->str, (size_t)a->len), a->id,
                           AL_TOK_TRAIN_SPECIALS, AL_TOK_TRAIN_SPECIALS - 1);
        const char *want = al_tok_minimind_added[a->id];
        if ((size_t)a->len != strlen(want) || memcmp(a->str, want, (size_t)a->len) != 0)
            return al_fail(err, AL_ERR_FORMAT, "added token %" PRId32 " is '%s', not MiniMind's '%s' (a cut keeps "
                           "MiniMind's %d added tokens)", a->id, al_tok_show(shown, (const uint8_t *)a->str,
                           (size_t)a->len), want, AL_TOK_TRAIN_SPECIALS);
    }
    for (int byte = 0; byte < 256; byte++)
        if (t->byte_id[byte] >= AL_TOK_TRAIN_MIN_VOCAB)
            return al_fail(err, AL_ERR_FORMAT, "the token of the byte 0x%02X has id %" PRId32 "; a cut needs the 256 "
                           "bytes at ids %d..%d, right after the added tokens, as MiniMind's", (unsigned)byte,
                           t->byte_id[byte], AL_TOK_TRAIN_SPECIALS, AL_TOK_TRAIN_MIN_VOCAB - 1);
    if (t->add_prefix_space || !t->use_regex)
        return al_fail(err, AL_ERR_FORMAT, "the pre-tokenizer's %s; a cut writes MiniMind's (ByteLevel, "
                       "add_prefix_space false, use_regex true)",
                       t->add_prefix_space ? "add_prefix_space is true" : "use_regex is false");
    return AL_OK;
}

al_status al_tok_hf_cut(const uint8_t *json, size_t size, int64_t vocab, char **json_out, size_t *json_len,
                        al_error *err) {
    if (json_out) *json_out = NULL;
    if (json_len) *json_len = 0;
    if (!json_out || !json_len || (!json && size > 0))
        return al_fail(err, AL_ERR_ARG, "al_tok_hf_cut: json, json_out or json_len is NULL");
    if (vocab < AL_TOK_TRAIN_MIN_VOCAB)
        return al_fail(err, AL_ERR_ARG, "vocab %" PRId64 " is below %d: a cut keeps the %d added tokens and the 256 "
                       "bytes", vocab, AL_TOK_TRAIN_MIN_VOCAB, AL_TOK_TRAIN_SPECIALS);
    al_tokenizer *t = NULL;
    al_status st = al_tok_hf_create(json, size, 0, &t, err);
    if (st != AL_OK) return st;
    st = check_minimind_kind(t, err);
    if (st == AL_OK && vocab > t->vocab_size)
        st = al_fail(err, AL_ERR_ARG, "vocab %" PRId64 " is above the file's %" PRId32 " tokens", vocab, t->vocab_size);
    /* The merges in rank order (the table holds each once, its rank its index in the file), then
     * those whose halves and result are all below vocab, in that order. */
    int32_t n_merges = 0, n_kept = 0;
    for (uint32_t i = 0; i < t->n_slots; i++) n_merges += t->merges[i].a >= 0;
    int32_t *by_rank = st == AL_OK ? malloc(((size_t)n_merges + 1) * 2 * sizeof *by_rank) : NULL;
    if (st == AL_OK && !by_rank) st = al_fail(err, AL_ERR_NOMEM, "out of memory for the merges");
    if (st == AL_OK) {
        for (int32_t r = 0; r < n_merges; r++) by_rank[2 * r] = -1;
        for (uint32_t i = 0; i < t->n_slots; i++) {
            const tok_merge_slot *m = &t->merges[i];
            if (m->a >= 0 && m->a < vocab && m->b < vocab && m->id < vocab)
                by_rank[2 * m->rank] = m->a, by_rank[2 * m->rank + 1] = m->b;
        }
        for (int32_t r = 0; r < n_merges; r++)
            if (by_rank[2 * r] >= 0) {
                by_rank[2 * n_kept] = by_rank[2 * r], by_rank[2 * n_kept + 1] = by_rank[2 * r + 1];
                n_kept++;
            }
        st = al_tok_json_write(t->piece, t->len, (int32_t)vocab, by_rank, n_kept, json_out, json_len, err);
    }
    free(by_rank);
    al_tok_free(t);
    if (st == AL_OK) al_ok(err);
    return st;
}
