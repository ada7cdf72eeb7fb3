/* tokenizer_json_write.h — the one writer of a tokenizer.json laid out as MiniMind's (Python's
 * json.dump with indent 2 and ensure_ascii off), for a trained tokenizer (tokenizer_train.c) and
 * a cut one (tokenizer_cut.c). Internal to the core, not public API. */
#ifndef ATTNLAB_TOKENIZER_JSON_WRITE_H
#define ATTNLAB_TOKENIZER_JSON_WRITE_H

#include "base/internal.h"

#include <stddef.h>
#include <stdint.h>

/* MiniMind's added tokens, ids 0..35 (train_tokenizer.py): special_tokens_list, then
 * additional_tokens_list and the <|bufferN|> tokens up to SPECIAL_TOKENS_NUM = 36. */
extern const char *const al_tok_minimind_added[AL_TOK_TRAIN_SPECIALS];

/* The tokenizer.json of n_tok tokens (at least AL_TOK_TRAIN_MIN_VOCAB) and n_merges merges, in a
 * malloc'd *out of *out_len bytes (no NUL after them):
 *   - ids 0..35 are MiniMind's added tokens, in added_tokens and in model.vocab, the first 21
 *     "special": true as its script writes them (piece[0..35] are not read);
 *   - id k from 36 on is the token whose bytes are piece[k][0, len[k]), written as ByteLevel's
 *     characters (at most AL_TOK_MAX_PIECE bytes);
 *   - merges[m][0] and merges[m][1] are the ids of merge m's halves, written in rank order;
 *   - normalizer and post-processor null, pre-tokenizer and decoder ByteLevel (add_prefix_space
 *     false and use_regex true for the pre-tokenizer), model BPE without options.
 * AL_ERR_NOMEM (and *out NULL) if memory runs out. */
al_status al_tok_json_write(const char *const *piece, /* [n_tok] */
                            const int32_t *len,       /* [n_tok] */
                            int32_t n_tok,
                            const int32_t *merges,    /* [n_merges, 2] */
                            int32_t n_merges, char **out, size_t *out_len, al_error *err);

#endif /* ATTNLAB_TOKENIZER_JSON_WRITE_H */
