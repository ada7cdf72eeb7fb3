/* golden.h — reading the golden files that tests/fixtures/gen_*.py write from PyTorch, shared by
 * test_rng.c, test_pow.c and test_trig.c: whitespace-separated tokens (from a whole stream or
 * from one line), numbers and %08x float words parsed from them, and the FNV-1a hashes the
 * generators store for long runs of float32 results.
 *
 * Every reader returns 1 on success and 0 when the token is missing or is not entirely the
 * number asked for (so a record that runs short or holds junk reads as malformed). */
#ifndef ATTNLAB_GOLDEN_H
#define ATTNLAB_GOLDEN_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/internal.h" /* al_bits_of_float / al_float_of_bits */

/* ---- FNV-1a over float32 bit patterns ---------------------------------------------------------
 * Each 32-bit word is hashed as its 4 bytes, least significant first (as the generators do). */

#define GOLDEN_FNV32_BASIS 0x811c9dc5u
#define GOLDEN_FNV64_BASIS UINT64_C(0xcbf29ce484222325)

static inline uint32_t fnv1a32_word(uint32_t h, uint32_t w) {
    for (int shift = 0; shift < 32; shift += 8) {
        h ^= (w >> shift) & 0xffu;
        h *= 0x01000193u;
    }
    return h;
}

static inline uint64_t fnv1a64_word(uint64_t h, uint32_t w) {
    for (int shift = 0; shift < 32; shift += 8) {
        h ^= (w >> shift) & 0xffu;
        h *= UINT64_C(0x100000001b3);
    }
    return h;
}

/* 32-bit FNV-1a of n floats' bit patterns. */
static inline uint32_t fnv1a32_floats(const float *v, int64_t n) {
    uint32_t h = GOLDEN_FNV32_BASIS;
    for (int64_t i = 0; i < n; i++) h = fnv1a32_word(h, al_bits_of_float(v[i]));
    return h;
}

/* 64-bit FNV-1a state h carried on over n more floats (start from GOLDEN_FNV64_BASIS). */
static inline uint64_t fnv1a64_floats_update(uint64_t h, const float *v, int64_t n) {
    for (int64_t i = 0; i < n; i++) h = fnv1a64_word(h, al_bits_of_float(v[i]));
    return h;
}

/* 64-bit FNV-1a of n floats' bit patterns. */
static inline uint64_t fnv1a64_floats(const float *v, int64_t n) {
    return fnv1a64_floats_update(GOLDEN_FNV64_BASIS, v, n);
}

/* 64-bit FNV-1a of n words (float bit patterns already taken, or raw generator words). */
static inline uint64_t fnv1a64_words(const uint32_t *w, int64_t n) {
    uint64_t h = GOLDEN_FNV64_BASIS;
    for (int64_t i = 0; i < n; i++) h = fnv1a64_word(h, w[i]);
    return h;
}

/* ---- tokens -------------------------------------------------------------------------------- */

/* Where tokens come from: a whole stream (tokens run across lines, and a token starting with '#'
 * comments out the rest of its line), or one line already read (nothing is a comment there: the
 * caller looks at the first token). */
typedef struct {
    FILE *f;       /* the stream, or NULL for line mode */
    const char *p; /* line mode: what is left of the line */
} golden_src;

static inline golden_src golden_stream(FILE *f) {
    golden_src in = {f, NULL};
    return in;
}

static inline golden_src golden_line(const char *line) {
    golden_src in = {NULL, line};
    return in;
}

static inline int golden_is_space(int c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

/* Reads the next whitespace-separated token into tok (cut to cap - 1 characters); 0 at the end
 * of the stream or line. */
static inline int golden_token(golden_src *in, char *tok, size_t cap) {
    size_t len = 0;
    if (in->f == NULL) {
        while (golden_is_space(*in->p)) in->p++;
        while (*in->p && !golden_is_space(*in->p)) {
            if (len + 1 < cap) tok[len++] = *in->p;
            in->p++;
        }
        tok[len] = '\0';
        return len > 0;
    }
    int c;
    for (;;) {
        c = fgetc(in->f);
        while (golden_is_space(c)) c = fgetc(in->f);
        if (c != '#') break;
        while (c != '\n' && c != EOF) c = fgetc(in->f);
    }
    if (c == EOF) return 0;
    while (c != EOF && !golden_is_space(c)) {
        if (len + 1 < cap) tok[len++] = (char)c;
        c = fgetc(in->f);
    }
    tok[len] = '\0';
    return 1;
}

/* ---- numbers ------------------------------------------------------------------------------- */

#define GOLDEN_NUM_CAP 64 /* longest number token kept (63 characters) */

/* An unsigned integer in the given base (strtoull's syntax). */
static inline int golden_u64(golden_src *in, uint64_t *v, int base) {
    char tok[GOLDEN_NUM_CAP], *end;
    if (!golden_token(in, tok, sizeof tok)) return 0;
    *v = strtoull(tok, &end, base);
    return *end == '\0';
}

/* A hex number of any length (strtoull's syntax, as the other unsigned readers). */
static inline int golden_hex(golden_src *in, uint64_t *v) { return golden_u64(in, v, 16); }

/* Decimal integers, as int64_t or long. */
static inline int golden_i64(golden_src *in, int64_t *v) {
    char tok[GOLDEN_NUM_CAP], *end;
    if (!golden_token(in, tok, sizeof tok)) return 0;
    *v = strtoll(tok, &end, 10);
    return *end == '\0';
}

static inline int golden_long(golden_src *in, long *v) {
    char tok[GOLDEN_NUM_CAP], *end;
    if (!golden_token(in, tok, sizeof tok)) return 0;
    *v = strtol(tok, &end, 10);
    return *end == '\0';
}

/* A decimal floating-point number (strtod's syntax). */
static inline int golden_double(golden_src *in, double *v) {
    char tok[GOLDEN_NUM_CAP], *end;
    if (!golden_token(in, tok, sizeof tok)) return 0;
    *v = strtod(tok, &end);
    return *end == '\0';
}

/* A hex number of exactly `digits` characters (%08x, %016x); *v is left alone on failure. */
static inline int golden_hex_digits(golden_src *in, size_t digits, uint64_t *v) {
    char tok[GOLDEN_NUM_CAP], *end;
    if (!golden_token(in, tok, sizeof tok)) return 0;
    unsigned long long u = strtoull(tok, &end, 16);
    if (*end != '\0' || strlen(tok) != digits) return 0;
    *v = (uint64_t)u;
    return 1;
}

static inline int golden_hex32(golden_src *in, uint32_t *v) {
    uint64_t u;
    if (!golden_hex_digits(in, 8, &u)) return 0;
    *v = (uint32_t)u;
    return 1;
}

static inline int golden_hex64(golden_src *in, uint64_t *v) { return golden_hex_digits(in, 16, v); }

/* ---- float32 values as their bit patterns -------------------------------------------------- */

/* One float given as a hex word of any length up to 0xffffffff. */
static inline int golden_f32_bits(golden_src *in, float *v) {
    uint64_t b;
    if (!golden_hex(in, &b) || b > 0xffffffffu) return 0;
    *v = al_float_of_bits((uint32_t)b);
    return 1;
}

/* n floats given as %08x words (exactly 8 hex digits each). */
static inline int golden_f32_words(golden_src *in, float *out, long n) {
    for (long i = 0; i < n; i++) {
        uint32_t w;
        if (!golden_hex32(in, &w)) return 0;
        out[i] = al_float_of_bits(w);
    }
    return 1;
}

#endif
