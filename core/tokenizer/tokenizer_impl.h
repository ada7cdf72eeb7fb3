/* tokenizer_impl.h — what the tokenizer readers share (internal to the core, not public API):
 * the handle's layout, the merge loop both encoders drive with their own rule for which pair
 * merges, and what each reader gives tokenizer.c, which holds the public calls. */
#ifndef ATTNLAB_TOKENIZER_IMPL_H
#define ATTNLAB_TOKENIZER_IMPL_H

#include "base/internal.h"

#include <stddef.h>
#include <stdint.h>

/* Pieces quoted in messages are cut to this many bytes (tok_show). */
#define TOK_SHOWN_MAX 40
#define TOK_SHOWN_BUF (TOK_SHOWN_MAX + 8)

typedef enum {
    TOK_LLAMA2C, /* tokenizer_llama2c.c */
    TOK_HF       /* tokenizer_hf.c */
} tok_kind;

typedef struct {
    const char *str; /* NUL-terminated, in the handle */
    int32_t len;
    int32_t id;
    int32_t special; /* an added token of a tokenizer.json marked "special" (0 elsewhere) */
} tok_entry;

/* A merge of a tokenizer.json: the pair (a, b) of ids becomes `id`; lower ranks merge first. */
typedef struct {
    int32_t a, b;  /* a < 0: an empty slot */
    int32_t rank;
    int32_t id;
} tok_merge_slot;

/* An edge of the added tokens' automaton (tokenizer_hf.c, "finding the added tokens"): from the
 * node `from` on the byte `byte` to the node `to`. */
typedef struct {
    int32_t from; /* < 0: an empty slot */
    int32_t to;
    uint8_t byte;
} tok_edge_slot;

/* One allocation: this struct, then the arrays its pointers name, then the piece bytes (each
 * followed by a NUL); al_tok_free is a single free whatever the kind. */
struct al_tokenizer {
    tok_kind kind;
    int32_t vocab_size;
    int32_t longest;     /* bytes of the longest piece */
    int32_t bos, eos;    /* what encode adds when asked and the stream decoder keeps silent; -1: none */
    const char **piece;  /* [vocab_size] the bytes each id stands for, NUL-terminated */
    int32_t *len;        /* [vocab_size] their lengths */

    /* llama2.c's tokenizer.bin (NULL for a tokenizer.json) */
    tok_entry *sorted;   /* [vocab_size] by bytes then id: run.c's sorted_vocab */
    float *score;        /* [vocab_size] */
    char byte_text[512]; /* byte b as the string {b, '\0'} at 2b: run.c's byte_pieces */

    /* a tokenizer.json's (NULL / 0 for llama2.c's) */
    int32_t byte_id[256];       /* the token of each byte alone (ByteLevel's alphabet) */
    tok_merge_slot *merges;     /* [n_slots] an open-addressing hash table on (a, b) */
    uint32_t n_slots;           /* a power of two, at least twice the merges */
    tok_entry *added;           /* [n_added] in the file's order */
    int32_t n_added;
    /* the added tokens' contents written backwards as an Aho-Corasick automaton, node 0 the root */
    int32_t n_nodes;            /* at most 1 + the bytes of the added tokens */
    tok_edge_slot *edges;       /* [n_edge_slots] an open-addressing hash table on (from, byte) */
    uint32_t n_edge_slots;      /* a power of two, at least twice the edges */
    int32_t *fail;              /* [n_nodes] the node of the longest proper suffix that is a node */
    int32_t *match;             /* [n_nodes] the longest added token whose reversed content is a
                                 * suffix of the node's bytes, or -1 */
    int add_prefix_space;       /* ByteLevel's: a space before each section not starting with one */
    int use_regex;              /* ByteLevel's: split by GPT-2's pattern (else a section is one word) */
};

/* A piece for a message: printable ASCII and well-formed UTF-8 as they are, anything else as
 * \xNN, cut at TOK_SHOWN_MAX bytes with "...". */
const char *al_tok_show(char out[TOK_SHOWN_BUF], const uint8_t *s, size_t len);

/* The byte a llama2.c piece "<0xNN>" stands for, or -1 if it is not one. (run.c's
 * sscanf("<0x%02hhX>") also takes "<0x4" or "<0x41>junk"; no vocabulary has such pieces, and
 * they stay text here.) */
int al_tok_byte_piece(const char *p, size_t n);

/* Two pieces in byte order, then by length (strcmp's order for pieces without NUL bytes):
 * < 0, 0 or > 0. */
int al_tok_compare_bytes(const char *a, size_t la, const char *b, size_t lb);
/* For al_sort over tok_entry: by bytes, then the lower id first among equal pieces (so a
 * lookup finds the lowest, and duplicates stand side by side). */
int al_tok_compare_entries(const void *pa, const void *pb);

/* ---- the merge loop ------------------------------------------------------------------------
 * Tokens in a list, every adjacent pair that merges in a heap: the pair with the highest gain
 * merges first, the leftmost (by the position its left token had before any merge) on ties;
 * only the pairs that touch a merged token are looked up again. O(n log n). This is run.c's
 * loop (gain: the merged piece's score) and the `tokenizers` library's (gain: minus the merge's
 * rank, so the lowest rank first; the library also breaks ties by position). */

/* The id the pair (a, b) merges into, with its gain in *gain, or -1 if it does not merge. */
typedef int32_t (*tok_pair_rule)(const void *ctx, int32_t a, int32_t b, float *gain);

/* Bytes of scratch al_tok_merge needs for n tokens. */
size_t al_tok_merge_scratch(int32_t n);

/* Merges ids[0, n) in place until no pair merges and returns how many ids are left (in order,
 * at the front of ids). scratch holds al_tok_merge_scratch(n) bytes, aligned as malloc's are. */
int32_t al_tok_merge(int32_t *ids, int32_t n, tok_pair_rule rule, const void *ctx, void *scratch);

/* ---- what each reader gives tokenizer.c ---------------------------------------------------- */

/* Encodes text[0, len) (len checked against AL_TOK_MAX_TEXT) into out[], which holds at least
 * al_tok_*_encode_bound(len) ids: BOS first if bos (llama2.c's only), never EOS. Returns the
 * count, or -1 with *err set (AL_ERR_NOMEM). */
int64_t al_tok_llama2c_encode_bound(size_t len);
int64_t al_tok_llama2c_encode_ids(const al_tokenizer *t, const char *text, size_t len, int bos,
                                  int32_t *out, al_error *err);
int64_t al_tok_hf_encode_bound(size_t len);
int64_t al_tok_hf_encode_ids(const al_tokenizer *t, const char *text, size_t len, int32_t *out,
                             al_error *err);

#endif /* ATTNLAB_TOKENIZER_IMPL_H */
