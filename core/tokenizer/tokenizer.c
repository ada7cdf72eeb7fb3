/* tokenizer.c — the public tokenizer calls, whatever file the handle came from (llama2.c's
 * tokenizer.bin: tokenizer_llama2c.c; Hugging Face's tokenizer.json: tokenizer_hf.c): the
 * getters, encode's checks around each reader's encoder, decode, the merge loop both encoders
 * share, and the streaming decoder that writes only whole UTF-8 characters. */
#include "attnlab/tokenizer.h"
#include "base/json.h"
#include "base/text.h"
#include "tokenizer/tokenizer_impl.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>


const char *al_tok_show(char out[TOK_SHOWN_BUF], const uint8_t *s, size_t len) {
    return al_show_bytes(out, TOK_SHOWN_MAX, s, len, 0, "0123456789ABCDEF");
}

int al_tok_compare_bytes(const char *a, size_t la, const char *b, size_t lb) {
    const int c = memcmp(a, b, la < lb ? la : lb);
    return c ? c : (la > lb) - (la < lb);
}

int al_tok_compare_entries(const void *pa, const void *pb) {
    const tok_entry *a = pa, *b = pb;
    const int c = al_tok_compare_bytes(a->str, (size_t)a->len, b->str, (size_t)b->len);
    return c ? c : (a->id > b->id) - (a->id < b->id);
}

/* ---- getters ------------------------------------------------------------------------------ */

void al_tok_free(al_tokenizer *t) { free(t); }

int64_t al_tok_vocab_size(const al_tokenizer *t) { return t ? t->vocab_size : -1; }

int32_t al_tok_bos_id(const al_tokenizer *t) { return t ? t->bos : -1; }

int32_t al_tok_eos_id(const al_tokenizer *t) { return t ? t->eos : -1; }

const char *al_tok_piece(const al_tokenizer *t, int32_t id, size_t *len) {
    if (!t || id < 0 || id >= t->vocab_size) return NULL;
    if (len) *len = (size_t)t->len[id];
    return t->piece[id];
}

float al_tok_score(const al_tokenizer *t, int32_t id) {
    if (!t || id < 0 || id >= t->vocab_size) return NAN;
    return t->score ? t->score[id] : 0.0f;
}

/* ---- the merge loop ----------------------------------------------------------------------- */

/* A token is indexed by the position it had before any merge, so left to right is smaller to
 * larger index; a pair is kept in the heap at its left token. */
typedef struct {
    tok_pair_rule rule;
    const void *ctx;
    int32_t *id;     /* [n] the token at each live position */
    int32_t *next;   /* [n] the next live position, -1 at the end */
    int32_t *prev;   /* [n] the previous live position, -1 at the start */
    int32_t *merged; /* [n] the id the pair starting here merges into */
    float *gain;     /* [n] that merge's gain */
    int32_t *heap;   /* [n_heap] positions, best first */
    int32_t *where;  /* [n] a position's index in heap, or -1 */
    int32_t n_heap;
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

/* Asks the rule about the pair that starts at pos and puts it in the heap, or takes it out. */
static void update_pair(tok_merger *m, int32_t pos) {
    const int32_t right = m->next[pos];
    float gain = 0.0f;
    const int32_t id = right >= 0 ? m->rule(m->ctx, m->id[pos], m->id[right], &gain) : -1;
    if (id < 0) {
        heap_remove(m, pos);
        return;
    }
    m->merged[pos] = id;
    m->gain[pos] = gain;
    if (m->where[pos] < 0) {
        heap_put(m, m->n_heap++, pos);
        sift_up(m, m->n_heap - 1);
    } else {
        sift_up(m, m->where[pos]);
        sift_down(m, m->where[pos]);
    }
}

size_t al_tok_merge_scratch(int32_t n) { return 6 * (size_t)(n > 0 ? n : 1) * sizeof(int32_t); }

int32_t al_tok_merge(int32_t *ids, int32_t n, tok_pair_rule rule, const void *ctx, void *scratch) {
    if (n < 2) return n;
    int32_t *arrays = scratch;
    tok_merger m = {rule, ctx, ids, arrays, arrays + n, arrays + 2 * n, (float *)(arrays + 3 * n),
                    arrays + 4 * n, arrays + 5 * n, 0};
    /* 1. Every adjacent pair that merges, in the heap. */
    for (int32_t i = 0; i < n; i++) {
        m.next[i] = i + 1 < n ? i + 1 : -1;
        m.prev[i] = i - 1;
        m.where[i] = -1;
    }
    for (int32_t i = 0; i + 1 < n; i++) update_pair(&m, i);

    /* 2. The best pair into its left token until no pair merges; only the pairs that touch the
     *    merged token change. */
    while (m.n_heap > 0) {
        const int32_t left = m.heap[0], right = m.next[left];
        m.id[left] = m.merged[left];
        heap_remove(&m, right);
        m.next[left] = m.next[right];
        if (m.next[right] >= 0) m.prev[m.next[right]] = left;
        update_pair(&m, left);
        if (m.prev[left] >= 0) update_pair(&m, m.prev[left]);
    }

    /* 3. The survivors to the front, in order. Position 0 is never merged away, and a
     *    survivor's position is never below its index in the output. */
    int32_t o = 0;
    for (int32_t i = 0; i >= 0; i = m.next[i]) ids[o++] = m.id[i];
    return o;
}

/* ---- encoding ----------------------------------------------------------------------------- */

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
    if ((bos && t->bos < 0) || (eos && t->eos < 0)) {
        al_fail(err, AL_ERR_ARG, "al_tok_encode: this tokenizer has no %s token of its own (a "
                "tokenizer.json adds none: pass bos 0 and eos 0)", bos && t->bos < 0 ? "BOS" : "EOS");
        return -1;
    }
    if ((uint64_t)len > (uint64_t)AL_TOK_MAX_TEXT) {
        al_fail(err, AL_ERR_LIMIT, "the text is %zu bytes, above the limit of %" PRId64 " MiB",
                len, AL_TOK_MAX_TEXT >> 20);
        return -1;
    }
    /* The ids go to a scratch array first, so a short buffer is left untouched. */
    const int64_t bound = t->kind == TOK_HF ? al_tok_hf_encode_bound(len) : al_tok_llama2c_encode_bound(len);
    int32_t *out = malloc((size_t)bound * sizeof *out);
    if (!out) {
        al_fail(err, AL_ERR_NOMEM, "out of memory encoding %zu bytes of text", len);
        return -1;
    }
    const int64_t n = t->kind == TOK_HF ? al_tok_hf_encode_ids(t, text, len, out, err)
                                        : al_tok_llama2c_encode_ids(t, text, len, bos, out, err);
    if (n < 0) {
        free(out);
        return -1;
    }
    const int64_t count = n + (eos ? 1 : 0);
    if (ids && cap < count) {
        free(out);
        al_fail(err, AL_ERR_CAPACITY, "the text encodes to %" PRId64 " ids but the buffer holds %" PRId64,
                count, cap);
        return -1;
    }
    if (ids) {
        memcpy(ids, out, (size_t)n * sizeof *ids);
        if (eos) ids[n] = t->eos;
    }
    free(out);
    al_ok(err);
    return count;
}

/* ---- decoding ----------------------------------------------------------------------------- */

static int hex_digit(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
}

int al_tok_byte_piece(const char *p, size_t n) {
    if (n != 6 || memcmp(p, "<0x", 3) != 0 || p[5] != '>') return -1;
    const int hi = hex_digit(p[3]), lo = hex_digit(p[4]);
    return hi < 0 || lo < 0 ? -1 : hi * 16 + lo;
}

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
    if (t->kind == TOK_LLAMA2C) {
        /* After BOS, SentencePiece's decoder strips the leading space (llama2.c PR #89). */
        if (prev_id == AL_TOK_BOS && p[0] == ' ') p++, n--;
        const int b = al_tok_byte_piece(p, n);
        if (b >= 0) p = t->byte_text + 2 * b, n = 1;
    }
    *text = p;
    if (len) *len = n;
    return al_ok(err);
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
    return al_ok(err);
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
    if (!final && (id < 0 || id >= s->t->vocab_size)) {
        al_fail(err, AL_ERR_ARG, "token id %" PRId32 " is outside [0, %" PRId32 ")", id, s->t->vocab_size);
        return -1;
    }
    /* BOS and EOS write nothing (a tokenizer.json has neither). */
    if (!final && id != s->t->bos && id != s->t->eos &&
        al_tok_decode(s->t, s->prev, id, &piece, &n, err) != AL_OK)
        return -1;
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
    al_ok(err);
    return (int64_t)need;
}

al_status al_tok_stream_copy(al_tok_stream *into, const al_tok_stream *from, al_error *err) {
    if (!into || !from) return al_fail(err, AL_ERR_ARG, "al_tok_stream_copy: NULL decoder");
    if (into->t != from->t) return al_fail(err, AL_ERR_ARG, "al_tok_stream_copy: the decoders read different tokenizers");
    *into = *from;
    return AL_OK;
}

int64_t al_tok_stream_push(al_tok_stream *s, int32_t id, char *out, int64_t cap, al_error *err) {
    return stream_step(s, id, 0, out, cap, err);
}

int64_t al_tok_stream_finish(al_tok_stream *s, char *out, int64_t cap, al_error *err) {
    return stream_step(s, -1, 1, out, cap, err);
}
