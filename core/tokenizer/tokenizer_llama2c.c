/* tokenizer_llama2c.c — llama2.c's tokenizer (run.c: build_tokenizer, encode): a tokenizer.bin
 * image checked and indexed, and text encoded by byte-fallback merges driven by the pieces'
 * scores. Decoding and the streaming decoder are tokenizer.c's. Files come from downloads, so
 * every length and score is checked first. */
#include "attnlab/tokenizer.h"
#include "tokenizer/tokenizer_impl.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* <unk>, <s>, </s>, then the 256 byte pieces. */
#define TOK_MIN_VOCAB (AL_TOK_BYTE0 + 256)

/* run.c's merge loop starts from best_score = -1e10 and takes a pair only if its piece scores
 * strictly higher: a piece scored at or below that is never merged into. */
#define TOK_NO_MERGE (-1e10f)

/* ---- reading the file --------------------------------------------------------------------- */

static uint32_t load_le32(const uint8_t *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

typedef struct {
    int32_t n;            /* tokens */
    int32_t longest;      /* bytes of the longest piece */
    uint64_t piece_bytes; /* all pieces together */
} tok_census;

/* Checks the whole image and counts what the handle will hold; nothing is stored. */
static al_status check_image(const uint8_t *b, size_t size, int64_t want, tok_census *c,
                             al_error *err) {
    char shown[TOK_SHOWN_BUF];
    memset(c, 0, sizeof *c);
    if (size < 4)
        return al_fail(err, AL_ERR_FORMAT,
                       "the file is %zu bytes, too short for its 4-byte max_token_length", size);
    const int32_t max_len = (int32_t)load_le32(b);
    if (max_len < 1)
        return al_fail(err, AL_ERR_FORMAT, "max_token_length is %" PRId32 ": it must be at least 1",
                       max_len);
    if (max_len > AL_TOK_MAX_PIECE)
        return al_fail(err, AL_ERR_FORMAT, "max_token_length is %" PRId32 ", above the limit of %d bytes",
                       max_len, AL_TOK_MAX_PIECE);
    size_t off = 4;
    int64_t i = 0;
    for (; want ? i < want : off < size; i++) {
        if (!want && i == AL_TOK_MAX_VOCAB)
            return al_fail(err, AL_ERR_FORMAT, "the file holds more than %d tokens, the limit",
                           AL_TOK_MAX_VOCAB);
        const size_t left = size - off;
        if (left == 0)
            return al_fail(err, AL_ERR_FORMAT,
                           "the file holds %" PRId64 " tokens but the vocabulary size is %" PRId64,
                           i, want);
        if (left < 8)
            return al_fail(err, AL_ERR_FORMAT,
                           "token %" PRId64 ": the file ends inside its score and length "
                           "(%zu of 8 bytes at offset %zu)", i, left, off);
        const float score = al_float_of_bits(load_le32(b + off));
        const int32_t len = (int32_t)load_le32(b + off + 4);
        if (len < 0)
            return al_fail(err, AL_ERR_FORMAT, "token %" PRId64 ": length %" PRId32 " is negative", i, len);
        if (len == 0)
            return al_fail(err, AL_ERR_FORMAT,
                           "token %" PRId64 ": length 0 (llama2.c reads no empty pieces)", i);
        if ((size_t)len > left - 8)
            return al_fail(err, AL_ERR_FORMAT,
                           "token %" PRId64 ": length %" PRId32 " runs past the end of the file "
                           "(%zu bytes follow offset %zu)", i, len, left - 8, off + 8);
        if (len > max_len)
            return al_fail(err, AL_ERR_FORMAT,
                           "token %" PRId64 ": length %" PRId32 " exceeds max_token_length %" PRId32,
                           i, len, max_len);
        const uint8_t *p = b + off + 8;
        if (!isfinite(score))
            return al_fail(err, AL_ERR_FORMAT, "token %" PRId64 " ('%s'): score is %s", i,
                           al_tok_show(shown, p, (size_t)len), isnan(score) ? "NaN" : "infinite");
        const uint8_t *nul = memchr(p, 0, (size_t)len);
        if (nul)
            return al_fail(err, AL_ERR_FORMAT,
                           "token %" PRId64 ": the piece has a NUL byte at %d (llama2.c reads "
                           "pieces as C strings)", i, (int)(nul - p));
        if (i >= AL_TOK_BYTE0 && i < TOK_MIN_VOCAB && al_tok_byte_piece((const char *)p, (size_t)len) != i - AL_TOK_BYTE0)
            return al_fail(err, AL_ERR_FORMAT,
                           "token %" PRId64 " is '%s', not the byte piece <0x%02X> (ids 3..258 "
                           "stand for the bytes 0x00..0xFF)", i, al_tok_show(shown, p, (size_t)len),
                           (unsigned)(i - AL_TOK_BYTE0));
        if (len > c->longest) c->longest = len;
        c->piece_bytes += (uint64_t)len;
        off += 8 + (size_t)len;
    }
    if (off < size)
        return al_fail(err, AL_ERR_FORMAT,
                       "the vocabulary size is %" PRId64 " but %zu bytes follow its last token: "
                       "the file holds more tokens", want, size - off);
    if (i < TOK_MIN_VOCAB)
        return al_fail(err, AL_ERR_FORMAT,
                       "the file holds %" PRId64 " tokens; llama2.c's format has at least %d "
                       "(<unk>, <s>, </s> and the 256 byte pieces)", i, TOK_MIN_VOCAB);
    c->n = (int32_t)i;
    return AL_OK;
}

static size_t align8(size_t n) { return (n + 7) & ~(size_t)7; }

al_status al_tok_llama2c_create(const uint8_t *bytes, size_t size, int64_t vocab_size,
                                al_tokenizer **out, al_error *err) {
    if (out) *out = NULL;
    if (!out || (!bytes && size > 0))
        return al_fail(err, AL_ERR_ARG, "al_tok_llama2c_create: out or bytes is NULL");
    if (vocab_size != 0 && (vocab_size < TOK_MIN_VOCAB || vocab_size > AL_TOK_MAX_VOCAB))
        return al_fail(err, AL_ERR_ARG,
                       "vocab_size %" PRId64 " is outside [%d, %d] (0: as many tokens as the file "
                       "holds)", vocab_size, TOK_MIN_VOCAB, AL_TOK_MAX_VOCAB);
    tok_census c;
    al_status st = check_image(bytes, size, vocab_size, &c, err);
    if (st != AL_OK) return st;

    const size_t n = (size_t)c.n;
    const size_t at_sorted = align8(sizeof(al_tokenizer));
    const size_t at_piece = at_sorted + align8(n * sizeof(tok_entry));
    const size_t at_len = at_piece + align8(n * sizeof(char *));
    const size_t at_score = at_len + align8(n * sizeof(int32_t));
    const size_t at_text = at_score + align8(n * sizeof(float));
    /* n < 2^21 and the pieces fit in the image, so only a 32-bit size_t can overflow. */
    if ((uint64_t)at_text + c.piece_bytes + n > SIZE_MAX / 2)
        return al_fail(err, AL_ERR_LIMIT, "a vocabulary of %zu tokens does not fit in memory", n);
    char *block = malloc(at_text + (size_t)c.piece_bytes + n);
    if (!block) return al_fail(err, AL_ERR_NOMEM, "out of memory for a vocabulary of %zu tokens", n);

    al_tokenizer *t = (al_tokenizer *)block;
    memset(t, 0, sizeof *t);
    t->kind = TOK_LLAMA2C;
    t->bos = AL_TOK_BOS;
    t->eos = AL_TOK_EOS;
    t->vocab_size = c.n;
    t->longest = c.longest;
    t->sorted = (tok_entry *)(block + at_sorted);
    t->piece = (const char **)(block + at_piece);
    t->len = (int32_t *)(block + at_len);
    t->score = (float *)(block + at_score);
    char *text = block + at_text;
    size_t off = 4;
    for (size_t i = 0; i < n; i++) {
        const int32_t len = (int32_t)load_le32(bytes + off + 4);
        t->score[i] = al_float_of_bits(load_le32(bytes + off));
        t->len[i] = len;
        memcpy(text, bytes + off + 8, (size_t)len);
        text[len] = '\0';
        t->piece[i] = text;
        t->sorted[i] = (tok_entry){text, len, (int32_t)i, 0};
        text += len + 1;
        off += 8 + (size_t)len;
    }
    al_sort(t->sorted, n, sizeof(tok_entry), al_tok_compare_entries);
    for (int b = 0; b < 256; b++) {
        t->byte_text[2 * b] = (char)b;
        t->byte_text[2 * b + 1] = '\0';
    }
    *out = t;
    return al_ok(err);
}

/* The id of the piece s[0, n) (the lowest if several), or -1: run.c's str_lookup. */
static int32_t lookup(const al_tokenizer *t, const char *s, size_t n) {
    size_t lo = 0, hi = (size_t)t->vocab_size; /* the first entry >= s is in [lo, hi] */
    while (lo < hi) {
        const size_t mid = lo + (hi - lo) / 2;
        if (al_tok_compare_bytes(t->sorted[mid].str, (size_t)t->sorted[mid].len, s, n) < 0) lo = mid + 1;
        else hi = mid;
    }
    if (lo < (size_t)t->vocab_size &&
        al_tok_compare_bytes(t->sorted[lo].str, (size_t)t->sorted[lo].len, s, n) == 0)
        return t->sorted[lo].id;
    return -1;
}

/* ---- encoding ----------------------------------------------------------------------------- */

/* A pair merges into the piece of their pieces concatenated, if the vocabulary has it and it
 * scores above TOK_NO_MERGE (as in run.c); the gain is its score. */
typedef struct {
    const al_tokenizer *t;
    char *pair; /* [longest] two pieces concatenated (a longer pair is no piece) */
} score_rule;

static int32_t merge_by_score(const void *ctx, int32_t a, int32_t b, float *gain) {
    const score_rule *r = ctx;
    const al_tokenizer *t = r->t;
    if (t->len[a] + t->len[b] > t->longest) return -1;
    memcpy(r->pair, t->piece[a], (size_t)t->len[a]);
    memcpy(r->pair + t->len[a], t->piece[b], (size_t)t->len[b]);
    const int32_t id = lookup(t, r->pair, (size_t)(t->len[a] + t->len[b]));
    if (id < 0 || !(t->score[id] > TOK_NO_MERGE)) return -1;
    *gain = t->score[id];
    return id;
}

/* The token list before any merge, as run.c builds it; returns its length. */
static int32_t initial_tokens(const al_tokenizer *t, const unsigned char *text, size_t len,
                              int bos, int32_t *id) {
    int32_t n = 0;
    if (bos) id[n++] = AL_TOK_BOS;
    if (len > 0) { /* add_dummy_prefix */
        const int32_t space = lookup(t, " ", 1);
        id[n++] = space >= 0 ? space : AL_TOK_BYTE0 + ' ';
    }
    for (size_t i = 0; i < len;) {
        /* A character as run.c reads one: the byte at i and the continuation bytes (10xxxxxx)
         * after it, 4 bytes at most, whether or not that makes well-formed UTF-8. */
        size_t k = 1;
        while (k < 4 && i + k < len && (text[i + k] & 0xC0) == 0x80) k++;
        const int32_t found = lookup(t, (const char *)text + i, k);
        if (found >= 0) id[n++] = found;
        else
            for (size_t j = 0; j < k; j++) id[n++] = AL_TOK_BYTE0 + text[i + j]; /* byte fallback */
        i += k;
    }
    return n;
}

/* At most one token per byte, plus BOS and the prefix. */
int64_t al_tok_llama2c_encode_bound(size_t len) { return (int64_t)len + 2; }

int64_t al_tok_llama2c_encode_ids(const al_tokenizer *t, const char *text, size_t len, int bos,
                                  int32_t *out, al_error *err) {
    const int32_t n_max = (int32_t)al_tok_llama2c_encode_bound(len);
    char *scratch = malloc(al_tok_merge_scratch(n_max) + (size_t)t->longest);
    if (!scratch) {
        al_fail(err, AL_ERR_NOMEM, "out of memory encoding %zu bytes of text", len);
        return -1;
    }
    const score_rule rule = {t, scratch + al_tok_merge_scratch(n_max)};
    const int32_t n = initial_tokens(t, (const unsigned char *)text, len, bos, out);
    const int32_t kept = al_tok_merge(out, n, merge_by_score, &rule, scratch);
    free(scratch);
    return kept;
}
