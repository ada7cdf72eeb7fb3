/* tokenizer_llama2c.c — llama2.c's tokenizer (run.c: build_tokenizer, encode, decode): a
 * tokenizer.bin image checked and indexed, text encoded by byte-fallback merges driven by the
 * pieces' scores, ids decoded one at a time, and a streaming decoder that writes only whole
 * UTF-8 characters. Files come from downloads, so every length and score is checked first. */
#include "base/internal.h"
#include "io/json.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* <unk>, <s>, </s>, then the 256 byte pieces. */
#define TOK_MIN_VOCAB (AL_TOK_BYTE0 + 256)

/* run.c's merge loop starts from best_score = -1e10 and takes a pair only if its piece scores
 * strictly higher: a piece scored at or below that is never merged into. */
#define TOK_NO_MERGE (-1e10f)

/* Pieces quoted in messages are cut to this many bytes. */
#define TOK_SHOWN_MAX 40
#define TOK_SHOWN_BUF (TOK_SHOWN_MAX + 8)

typedef struct {
    const char *str; /* NUL-terminated, in the handle */
    int32_t len;
    int32_t id;
} tok_entry;

/* One allocation: this struct, the sorted index, the piece pointers, the lengths, the scores,
 * then the piece bytes (each followed by a NUL); al_tok_free is a single free. */
struct al_tokenizer {
    int32_t vocab_size;
    int32_t longest;          /* the longest piece, in bytes */
    tok_entry *sorted;        /* [vocab_size], by bytes then id: run.c's sorted_vocab */
    const char **piece;       /* [vocab_size] */
    int32_t *len;             /* [vocab_size] */
    float *score;             /* [vocab_size] */
    char byte_text[512];      /* byte b as the string {b, '\0'} at 2b: run.c's byte_pieces */
};

/* ---- reading the file --------------------------------------------------------------------- */

static al_status tok_ok(al_error *err) {
    if (err) {
        err->status = AL_OK;
        err->msg[0] = '\0';
    }
    return AL_OK;
}

static uint32_t load_le32(const uint8_t *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* A piece for a message: printable ASCII and well-formed UTF-8 as they are, anything else as
 * \xNN, cut at TOK_SHOWN_MAX bytes with "...". */
static const char *show(char out[TOK_SHOWN_BUF], const uint8_t *s, size_t len) {
    static const char hex[] = "0123456789ABCDEF";
    size_t o = 0;
    for (size_t i = 0; i < len;) {
        const size_t n = s[i] >= 0x20 && s[i] < 0x7F ? 1
                         : s[i] >= 0x80             ? al_json_utf8_seq_len(s + i, len - i)
                                                    : 0;
        if (o + (n ? n : 4) > TOK_SHOWN_MAX) {
            memcpy(out + o, "...", 3);
            o += 3;
            break;
        }
        if (n) {
            memcpy(out + o, s + i, n);
            o += n;
            i += n;
        } else {
            out[o++] = '\\';
            out[o++] = 'x';
            out[o++] = hex[s[i] >> 4];
            out[o++] = hex[s[i] & 15];
            i++;
        }
    }
    out[o] = '\0';
    return out;
}

static int hex_digit(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
}

/* The byte a piece "<0xNN>" stands for, or -1 if it is not one. (run.c's sscanf("<0x%02hhX>")
 * also takes "<0x4" or "<0x41>junk"; no vocabulary has such pieces, and they stay text here.) */
static int byte_piece(const char *p, size_t n) {
    if (n != 6 || memcmp(p, "<0x", 3) != 0 || p[5] != '>') return -1;
    const int hi = hex_digit(p[3]), lo = hex_digit(p[4]);
    return hi < 0 || lo < 0 ? -1 : hi * 16 + lo;
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
                           show(shown, p, (size_t)len), isnan(score) ? "NaN" : "infinite");
        const uint8_t *nul = memchr(p, 0, (size_t)len);
        if (nul)
            return al_fail(err, AL_ERR_FORMAT,
                           "token %" PRId64 ": the piece has a NUL byte at %d (llama2.c reads "
                           "pieces as C strings)", i, (int)(nul - p));
        if (i >= AL_TOK_BYTE0 && i < TOK_MIN_VOCAB && byte_piece((const char *)p, (size_t)len) != i - AL_TOK_BYTE0)
            return al_fail(err, AL_ERR_FORMAT,
                           "token %" PRId64 " is '%s', not the byte piece <0x%02X> (ids 3..258 "
                           "stand for the bytes 0x00..0xFF)", i, show(shown, p, (size_t)len),
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

/* Byte order, then length (strcmp's order for pieces without NUL bytes). */
static int compare_bytes(const char *a, size_t la, const char *b, size_t lb) {
    const int c = memcmp(a, b, la < lb ? la : lb);
    return c ? c : (la > lb) - (la < lb);
}

/* The lower id first among equal pieces, so a lookup finds the lowest. */
static int compare_entries(const void *pa, const void *pb) {
    const tok_entry *a = pa, *b = pb;
    const int c = compare_bytes(a->str, (size_t)a->len, b->str, (size_t)b->len);
    return c ? c : (a->id > b->id) - (a->id < b->id);
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
        t->sorted[i] = (tok_entry){text, len, (int32_t)i};
        text += len + 1;
        off += 8 + (size_t)len;
    }
    al_sort(t->sorted, n, sizeof(tok_entry), compare_entries);
    for (int b = 0; b < 256; b++) {
        t->byte_text[2 * b] = (char)b;
        t->byte_text[2 * b + 1] = '\0';
    }
    *out = t;
    return tok_ok(err);
}

void al_tok_free(al_tokenizer *t) { free(t); }

int64_t al_tok_vocab_size(const al_tokenizer *t) { return t ? t->vocab_size : -1; }

const char *al_tok_piece(const al_tokenizer *t, int32_t id, size_t *len) {
    if (!t || id < 0 || id >= t->vocab_size) return NULL;
    if (len) *len = (size_t)t->len[id];
    return t->piece[id];
}

float al_tok_score(const al_tokenizer *t, int32_t id) {
    return t && id >= 0 && id < t->vocab_size ? t->score[id] : NAN;
}

/* The id of the piece s[0, n) (the lowest if several), or -1: run.c's str_lookup. */
static int32_t lookup(const al_tokenizer *t, const char *s, size_t n) {
    size_t lo = 0, hi = (size_t)t->vocab_size; /* the first entry >= s is in [lo, hi] */
    while (lo < hi) {
        const size_t mid = lo + (hi - lo) / 2;
        if (compare_bytes(t->sorted[mid].str, (size_t)t->sorted[mid].len, s, n) < 0) lo = mid + 1;
        else hi = mid;
    }
    if (lo < (size_t)t->vocab_size &&
        compare_bytes(t->sorted[lo].str, (size_t)t->sorted[lo].len, s, n) == 0)
        return t->sorted[lo].id;
    return -1;
}

/* ---- encoding ----------------------------------------------------------------------------- */

/* The tokens being merged, a doubly linked list over their first positions, and a heap of
 * the mergeable pairs, each kept at its left token: best = the highest score, then the
 * leftmost (run.c's scan takes the first pair of the best score). A token is indexed by the
 * position it had before any merge, so left to right is smaller to larger index. */
typedef struct {
    const al_tokenizer *t;
    int32_t *id;     /* [n] the token at each live position */
    int32_t *next;   /* [n] the next live position, -1 at the end */
    int32_t *prev;   /* [n] the previous live position, -1 at the start */
    int32_t *merged; /* [n] the id the pair starting here merges into */
    float *gain;     /* [n] that id's score */
    int32_t *heap;   /* [n_heap] positions, best first */
    int32_t *where;  /* [n] a position's index in heap, or -1 */
    int32_t n_heap;
    char *pair;      /* [longest] two pieces concatenated (a longer pair is no piece) */
} tok_merger;

static int better(const tok_merger *m, int32_t a, int32_t b) {
    return m->gain[a] > m->gain[b] || (m->gain[a] == m->gain[b] && a < b);
}

static void heap_put(tok_merger *m, int32_t i, int32_t pos) {
    m->heap[i] = pos;
    m->where[pos] = i;
}

static void sift_up(tok_merger *m, int32_t i) {
    const int32_t pos = m->heap[i];
    while (i > 0 && better(m, pos, m->heap[(i - 1) / 2])) {
        heap_put(m, i, m->heap[(i - 1) / 2]);
        i = (i - 1) / 2;
    }
    heap_put(m, i, pos);
}

static void sift_down(tok_merger *m, int32_t i) {
    const int32_t pos = m->heap[i];
    for (;;) {
        int32_t child = 2 * i + 1;
        if (child >= m->n_heap) break;
        if (child + 1 < m->n_heap && better(m, m->heap[child + 1], m->heap[child])) child++;
        if (!better(m, m->heap[child], pos)) break;
        heap_put(m, i, m->heap[child]);
        i = child;
    }
    heap_put(m, i, pos);
}

static void heap_remove(tok_merger *m, int32_t pos) {
    const int32_t i = m->where[pos];
    if (i < 0) return;
    m->where[pos] = -1;
    const int32_t last = m->heap[--m->n_heap];
    if (last == pos) return;
    heap_put(m, i, last);
    sift_up(m, i);
    sift_down(m, m->where[last]);
}

/* Looks up the pair that starts at pos and puts it in the heap, or takes it out if it is not a
 * piece of the vocabulary (or scores too low to be merged, as in run.c). */
static void update_pair(tok_merger *m, int32_t pos) {
    const int32_t right = m->next[pos];
    int32_t id = -1;
    if (right >= 0) {
        const al_tokenizer *t = m->t;
        const int32_t a = m->id[pos], b = m->id[right];
        if (t->len[a] + t->len[b] <= t->longest) {
            memcpy(m->pair, t->piece[a], (size_t)t->len[a]);
            memcpy(m->pair + t->len[a], t->piece[b], (size_t)t->len[b]);
            id = lookup(t, m->pair, (size_t)(t->len[a] + t->len[b]));
        }
        if (id >= 0 && !(t->score[id] > TOK_NO_MERGE)) id = -1;
    }
    if (id < 0) {
        heap_remove(m, pos);
        return;
    }
    m->merged[pos] = id;
    m->gain[pos] = m->t->score[id];
    if (m->where[pos] < 0) {
        heap_put(m, m->n_heap++, pos);
        sift_up(m, m->n_heap - 1);
    } else {
        sift_up(m, m->where[pos]);
        sift_down(m, m->where[pos]);
    }
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

int64_t al_tok_encode(const al_tokenizer *t, const char *text, size_t len, int bos, int eos,
                      int32_t *ids, int64_t cap, al_error *err) {
    if (!t || (!text && len > 0)) {
        al_fail(err, AL_ERR_ARG, "al_tok_encode: t or text is NULL");
        return -1;
    }
    if (cap < 0 || (!ids && cap > 0)) {
        al_fail(err, AL_ERR_ARG, "al_tok_encode: ids is NULL with cap %" PRId64 " (0 for a size query)", cap);
        return -1;
    }
    if ((uint64_t)len > (uint64_t)AL_TOK_MAX_TEXT) {
        al_fail(err, AL_ERR_LIMIT, "the text is %zu bytes, above the limit of %" PRId64 " MiB",
                len, AL_TOK_MAX_TEXT >> 20);
        return -1;
    }
    /* 1. At most one token per byte, plus BOS and the prefix: seven int32 arrays of that. */
    const size_t n_max = len + 2;
    char *scratch = malloc(7 * n_max * sizeof(int32_t) + (size_t)t->longest);
    if (!scratch) {
        al_fail(err, AL_ERR_NOMEM, "out of memory encoding %zu bytes of text", len);
        return -1;
    }
    tok_merger m = {t, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 0, NULL};
    int32_t *arrays = (int32_t *)scratch;
    m.id = arrays;
    m.next = arrays + n_max;
    m.prev = arrays + 2 * n_max;
    m.merged = arrays + 3 * n_max;
    m.heap = arrays + 4 * n_max;
    m.where = arrays + 5 * n_max;
    m.gain = (float *)(arrays + 6 * n_max);
    m.pair = (char *)(arrays + 7 * n_max);
    const int32_t n = initial_tokens(t, (const unsigned char *)text, len, bos, m.id);

    /* 2. Every adjacent pair that is a piece, in the heap. */
    for (int32_t i = 0; i < n; i++) {
        m.next[i] = i + 1 < n ? i + 1 : -1;
        m.prev[i] = i - 1;
        m.where[i] = -1;
    }
    for (int32_t i = 0; i + 1 < n; i++) update_pair(&m, i);

    /* 3. Merge the best pair into its left token until no pair is a piece; only the pairs
     *    that touch the merged token change. */
    while (m.n_heap > 0) {
        const int32_t left = m.heap[0], right = m.next[left];
        m.id[left] = m.merged[left];
        heap_remove(&m, right);
        m.next[left] = m.next[right];
        if (m.next[right] >= 0) m.prev[m.next[right]] = left;
        update_pair(&m, left);
        if (m.prev[left] >= 0) update_pair(&m, m.prev[left]);
    }

    /* 4. The survivors in order, then EOS. Position 0 is never merged away. */
    int64_t count = eos ? 1 : 0;
    for (int32_t i = n > 0 ? 0 : -1; i >= 0; i = m.next[i]) count++;
    if (ids && cap < count) {
        free(scratch);
        al_fail(err, AL_ERR_CAPACITY, "the text encodes to %" PRId64 " ids but the buffer holds %" PRId64,
                count, cap);
        return -1;
    }
    if (ids) {
        int64_t o = 0;
        for (int32_t i = n > 0 ? 0 : -1; i >= 0; i = m.next[i]) ids[o++] = m.id[i];
        if (eos) ids[o++] = AL_TOK_EOS;
    }
    free(scratch);
    tok_ok(err);
    return count;
}

/* ---- decoding ----------------------------------------------------------------------------- */

al_status al_tok_decode(const al_tokenizer *t, int32_t prev_id, int32_t id, const char **text,
                        size_t *len, al_error *err) {
    if (!t || !text) return al_fail(err, AL_ERR_ARG, "al_tok_decode: t or text is NULL");
    if (id < 0 || id >= t->vocab_size)
        return al_fail(err, AL_ERR_ARG, "token id %" PRId32 " is outside [0, %" PRId32 ")", id,
                       t->vocab_size);
    if (prev_id < -1 || prev_id >= t->vocab_size)
        return al_fail(err, AL_ERR_ARG, "previous token id %" PRId32 " is outside [-1, %" PRId32 ")",
                       prev_id, t->vocab_size);
    const char *p = t->piece[id];
    size_t n = (size_t)t->len[id];
    /* After BOS, SentencePiece's decoder strips the leading space (llama2.c PR #89). */
    if (prev_id == AL_TOK_BOS && p[0] == ' ') p++, n--;
    const int b = byte_piece(p, n);
    if (b >= 0) p = t->byte_text + 2 * b, n = 1;
    *text = p;
    if (len) *len = n;
    return tok_ok(err);
}

/* ---- streaming decoder -------------------------------------------------------------------- */

struct al_tok_stream {
    const al_tokenizer *t;
    int32_t prev;          /* the last id pushed, -1 at the start */
    int n_held;
    unsigned char held[3]; /* the start of a character whose other bytes are yet to come */
};

/* The held bytes followed by a piece, read as one byte string. */
typedef struct {
    const unsigned char *held;
    size_t n_held;
    const unsigned char *piece;
    size_t n;
} stream_bytes;

static unsigned byte_at(const stream_bytes *s, size_t i) {
    return i < s->n_held ? s->held[i] : s->piece[i - s->n_held];
}

/* At byte i: the length of the well-formed UTF-8 character there (1 to 4; the Unicode
 * standard's table 3-7, so no overlong forms, surrogates or values past U+10FFFF), 0 if none
 * starts there, or -1 if the bytes up to the end are the valid start of one. */
static int char_at(const stream_bytes *s, size_t i) {
    const size_t total = s->n_held + s->n;
    const unsigned c = byte_at(s, i);
    unsigned lo = 0x80, hi = 0xBF; /* the range of the second byte */
    int need;
    if (c < 0x80) return 1;
    if (c >= 0xC2 && c <= 0xDF) need = 2;
    else if (c >= 0xE0 && c <= 0xEF) need = 3, lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
    else if (c >= 0xF0 && c <= 0xF4) need = 4, lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
    else return 0;
    for (int k = 1; k < need; k++) {
        if (i + (size_t)k >= total) return -1;
        const unsigned d = byte_at(s, i + (size_t)k);
        if (d < (k == 1 ? lo : 0x80) || d > (k == 1 ? hi : 0xBF)) return 0;
    }
    return need;
}

/* Writes the complete characters of s (to out, unless it is NULL) and returns how many bytes
 * that is; what starts a character and ends too soon goes to held[] (or, when `final`, is
 * escaped too). */
static size_t stream_emit(const stream_bytes *s, int final, char *out, unsigned char held[3],
                          int *n_held) {
    static const char hex[] = "0123456789ABCDEF";
    const size_t total = s->n_held + s->n;
    size_t o = 0, i = 0;
    *n_held = 0;
    while (i < total) {
        const int k = char_at(s, i);
        if (k < 0 && !final) {
            for (; i < total; i++) held[(*n_held)++] = (unsigned char)byte_at(s, i);
            break;
        }
        if (k > 0) {
            for (int j = 0; j < k; j++, o++)
                if (out) out[o] = (char)byte_at(s, i + (size_t)j);
            i += (size_t)k;
        } else { /* \xNN, and the next byte starts afresh */
            const unsigned b = byte_at(s, i++);
            if (out) out[o] = '\\', out[o + 1] = 'x', out[o + 2] = hex[b >> 4], out[o + 3] = hex[b & 15];
            o += 4;
        }
    }
    return o;
}

al_status al_tok_stream_create(const al_tokenizer *t, al_tok_stream **out, al_error *err) {
    if (out) *out = NULL;
    if (!t || !out) return al_fail(err, AL_ERR_ARG, "al_tok_stream_create: t or out is NULL");
    al_tok_stream *s = calloc(1, sizeof *s);
    if (!s) return al_fail(err, AL_ERR_NOMEM, "out of memory for a streaming decoder");
    s->t = t;
    s->prev = -1;
    *out = s;
    return tok_ok(err);
}

void al_tok_stream_free(al_tok_stream *s) { free(s); }

/* push and finish: the bytes of `id` (none for finish) after what is held, counted first so a
 * size query or a short buffer leaves the decoder as it was. */
static int64_t stream_step(al_tok_stream *s, int32_t id, int final, char *out, int64_t cap,
                           al_error *err) {
    const char *who = final ? "al_tok_stream_finish" : "al_tok_stream_push";
    if (!s) {
        al_fail(err, AL_ERR_ARG, "%s: the decoder is NULL", who);
        return -1;
    }
    if (cap < 0 || (!out && cap > 0)) {
        al_fail(err, AL_ERR_ARG, "%s: out is NULL with cap %" PRId64 " (0 for a size query)", who, cap);
        return -1;
    }
    const char *piece = "";
    size_t n = 0;
    if (!final && id != AL_TOK_BOS && id != AL_TOK_EOS) {
        if (al_tok_decode(s->t, s->prev, id, &piece, &n, err) != AL_OK) return -1;
    } else if (!final && (id < 0 || id >= s->t->vocab_size)) {
        al_fail(err, AL_ERR_ARG, "token id %" PRId32 " is outside [0, %" PRId32 ")", id, s->t->vocab_size);
        return -1;
    }
    const stream_bytes bytes = {s->held, (size_t)s->n_held, (const unsigned char *)piece, n};
    unsigned char held[3];
    int n_held;
    const size_t need = stream_emit(&bytes, final, NULL, held, &n_held);
    if (out && (uint64_t)cap < need) {
        al_fail(err, AL_ERR_CAPACITY, "%s: the text is %zu bytes but the buffer holds %" PRId64,
                who, need, cap);
        return -1;
    }
    if (out) {
        stream_emit(&bytes, final, out, held, &n_held);
        memcpy(s->held, held, (size_t)n_held);
        s->n_held = n_held;
        s->prev = final ? -1 : id;
    }
    tok_ok(err);
    return (int64_t)need;
}

int64_t al_tok_stream_push(al_tok_stream *s, int32_t id, char *out, int64_t cap, al_error *err) {
    return stream_step(s, id, 0, out, cap, err);
}

int64_t al_tok_stream_finish(al_tok_stream *s, char *out, int64_t cap, al_error *err) {
    return stream_step(s, -1, 1, out, cap, err);
}
