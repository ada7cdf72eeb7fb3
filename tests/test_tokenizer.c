/* test_tokenizer.c — tests of llama2.c's tokenizer (core/io/tokenizer_llama2c.c): ids derived by
 * hand from tok512.bin's pieces and scores, merge order and ties on small made-up vocabularies,
 * encode → decode round trips (non-ASCII, emoji, bytes that are not UTF-8), the streaming
 * decoder on characters split over byte tokens, 100 KB encoded and decoded back (the time it
 * took printed for `npm run bench`, not checked), and malformed files each refused with its own
 * message (plus every truncation and random byte changes of tok512.bin: refused or read, never a
 * crash under ASan).
 * Usage: test_tokenizer models/stories260K/tok512.bin */
#include "attnlab.h"
#include "check.h"
#include "read_file.h"
#include "tok_image.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_IDS 4096

/* ---- helpers ------------------------------------------------------------------------------ */

static int64_t encode(const al_tokenizer *t, const char *text, size_t len, int bos, int eos,
                      int32_t *ids) {
    al_error err = {0};
    const int64_t n = al_tok_encode(t, text, len, bos, eos, ids, MAX_IDS, &err);
    CHECK(n >= 0, "encode of %zu bytes failed: %s", len, err.msg);
    return n;
}

static void show_ids(char *buf, size_t cap, const int32_t *ids, int64_t n) {
    size_t o = 0;
    buf[0] = '\0';
    for (int64_t i = 0; i < n && o + 12 < cap; i++)
        o += (size_t)snprintf(buf + o, cap - o, "%s%d", i ? " " : "", (int)ids[i]);
}

/* The ids of text must be want[0, n_want). */
static void expect_ids(const al_tokenizer *t, const char *text, int bos, int eos,
                       const int32_t *want, int64_t n_want) {
    int32_t ids[MAX_IDS];
    const int64_t n = encode(t, text, strlen(text), bos, eos, ids);
    char got_s[512], want_s[512];
    show_ids(got_s, sizeof got_s, ids, n < 0 ? 0 : n);
    show_ids(want_s, sizeof want_s, want, n_want);
    CHECK(n == n_want && (n_want == 0 || memcmp(ids, want, (size_t)n_want * sizeof *ids) == 0),
          "'%s' (bos %d, eos %d): got [%s], want [%s]", text, bos, eos, got_s, want_s);
    /* The size query gives the same count and writes nothing. */
    CHECK(al_tok_encode(t, text, strlen(text), bos, eos, NULL, 0, NULL) == n_want,
          "'%s': size query", text);
}
#define EXPECT_IDS(t, text, bos, eos, ...)                                                   \
    do {                                                                                     \
        const int32_t want_[] = {__VA_ARGS__};                                               \
        expect_ids(t, text, bos, eos, want_, (int64_t)(sizeof want_ / sizeof want_[0]));     \
    } while (0)

/* run.c's way of printing ids: each one decoded after the one before (prev -1 for the first
 * when there is no BOS). */
static size_t decode_all(const al_tokenizer *t, const int32_t *ids, int64_t n, int bos, char *out,
                         size_t cap) {
    size_t o = 0;
    for (int64_t i = bos ? 1 : 0; i < n; i++) {
        const char *piece = NULL;
        size_t len = 0;
        al_error err = {0};
        const al_status st = al_tok_decode(t, i ? ids[i - 1] : -1, ids[i], &piece, &len, &err);
        CHECK(st == AL_OK, "decode of id %d: %s", (int)ids[i], err.msg);
        if (st != AL_OK || o + len > cap) return o;
        memcpy(out + o, piece, len);
        o += len;
    }
    return o;
}

/* The streaming decoder's whole output for ids, then finish. */
static size_t stream_all(const al_tokenizer *t, const int32_t *ids, int64_t n, char *out, size_t cap) {
    al_tok_stream *s = NULL;
    al_error err = {0};
    CHECK(al_tok_stream_create(t, &s, &err) == AL_OK, "stream_create: %s", err.msg);
    if (!s) return 0;
    size_t o = 0;
    for (int64_t i = 0; i <= n; i++) {
        const int64_t k = i < n ? al_tok_stream_push(s, ids[i], out + o, (int64_t)(cap - o), &err)
                                : al_tok_stream_finish(s, out + o, (int64_t)(cap - o), &err);
        CHECK(k >= 0, "stream at id %lld: %s", (long long)i, err.msg);
        if (k < 0) break;
        o += (size_t)k;
    }
    al_tok_stream_free(s);
    return o;
}

static al_tokenizer *made_up(const char *const *pieces, const float *scores, int n) {
    size_t size = 0;
    uint8_t *image = tok_image(pieces, scores, n, &size);
    al_tokenizer *t = NULL;
    al_error err = {0};
    CHECK(image && al_tok_llama2c_create(image, size, 0, &t, &err) == AL_OK, "made-up vocabulary: %s", err.msg);
    free(image);
    return t;
}

/* ---- tok512.bin --------------------------------------------------------------------------- */

static void test_pieces(const al_tokenizer *t) {
    CHECK(al_tok_vocab_size(t) == 512, "vocab size %lld", (long long)al_tok_vocab_size(t));
    size_t len = 0;
    const char *p = al_tok_piece(t, 1, &len);
    CHECK(p && len == 5 && memcmp(p, "\n<s>\n", 5) == 0, "piece 1 is <s> between newlines");
    p = al_tok_piece(t, 403, &len);
    CHECK(p && len == 5 && strcmp(p, " Once") == 0, "piece 403: '%s'", p ? p : "(null)");
    p = al_tok_piece(t, 3 + 0xE4, &len);
    CHECK(p && strcmp(p, "<0xE4>") == 0, "piece 231: '%s'", p ? p : "(null)");
    CHECK(al_tok_score(t, 260) == -1.0f && al_tok_score(t, 511) == -252.0f, "scores of 260 and 511");
    CHECK(al_tok_piece(t, 512, &len) == NULL && al_tok_piece(t, -1, NULL) == NULL &&
              al_tok_piece(NULL, 0, NULL) == NULL, "piece of an id out of range");
    CHECK(isnan(al_tok_score(t, 512)) && isnan(al_tok_score(NULL, 0)), "score of an id out of range");
    CHECK(al_tok_vocab_size(NULL) == -1, "vocab size of NULL");
}

/* Each derived by hand from the pieces and scores (score in parentheses; higher merges first):
 *   "a":     [<s>, ' ', a]; ' '+a = " a" 261 (-2)                               → 1 261
 *   "time":  [' ', t, i, m, e]; " t" 259 (-0) beats "im" 288 (-29): [" t", i, m, e];
 *            then "im" (-29): [" t", "im", e]; then "ime" 369 (-110); then " time" 378 (-119)
 *   "hello": "he" 260 (-1); then " he" 281 (-22); then "ll" 306 (-47); no " hell", "llo",
 *            "el" or "lo" exists                                                → 1 281 306 414
 *   "Lily":  "il" 290 (-31); " L" 307 (-48); "ily" 310 (-51); " Lily" 317 (-58)  → 1 317
 *   "中":    E4 B8 AD is no piece: the bytes + 3 = 231 187 176; no pair merges
 *   "a\x80": run.c reads 'a' and the continuation byte after it as one character, which is
 *            no piece, so both fall back to bytes: 'a' + 3 = 100, 0x80 + 3 = 131. */
static void test_hand_checked(const al_tokenizer *t) {
    EXPECT_IDS(t, "", 1, 0, 1);
    EXPECT_IDS(t, "", 1, 1, 1, 2);
    expect_ids(t, "", 0, 0, NULL, 0);
    EXPECT_IDS(t, "a", 1, 0, 1, 261);
    EXPECT_IDS(t, "a", 0, 1, 261, 2);
    EXPECT_IDS(t, "time", 1, 0, 1, 378);
    EXPECT_IDS(t, "hello", 1, 0, 1, 281, 306, 414);
    EXPECT_IDS(t, "Lily", 1, 0, 1, 317);
    EXPECT_IDS(t, "\xE4\xB8\xAD", 1, 0, 1, 410, 231, 187, 176);
    EXPECT_IDS(t, "a\x80", 1, 0, 1, 410, 100, 131);
    /* The first line of the model's greedy story, whole words of the vocabulary. */
    EXPECT_IDS(t, "Once upon a time", 1, 0, 1, 403, 407, 261, 378);

    /* A NUL byte is the byte <0x00> (id 3), not the end of the text. */
    int32_t ids[8];
    CHECK(encode(t, "a\0", 2, 0, 0, ids) == 2 && ids[0] == 261 && ids[1] == 3, "NUL in the text");
}

/* Merge order, ties, the -1e10 floor, the prefix without a " " piece, duplicate pieces. */
static void test_made_up(void) {
    /* ids from 259 on: " " 259, "a" 260, "b" 261, "ab" 262, "ba" 263, "x" 264, "y" 265, "xy" 266,
     * "yx" 267, "c" 268, "bc" 269 */
    const char *p1[] = {" ", "a", "b", "ab", "ba", "x", "y", "xy", "yx", "c", "bc"};
    const float s1[] = {-1, -2, -2, -5, -5, -3, -3, -1e10f, -9e9f, -2, -1};
    al_tokenizer *t = made_up(p1, s1, 11);
    if (t) {
        /* "ab" and "ba" both score -5: the first pair merges, then "aba" is no piece. */
        EXPECT_IDS(t, "aba", 0, 0, 259, 262, 260);
        /* A piece scored -1e10 is never merged into (run.c's best_score starts there); -9e9 is. */
        EXPECT_IDS(t, "xy", 0, 0, 259, 264, 265);
        EXPECT_IDS(t, "yx", 0, 0, 259, 267);
        /* The best pair merges first wherever it is: "bc" (-1) before "ab" (-5). */
        EXPECT_IDS(t, "abc", 0, 0, 259, 260, 269);
        /* EOS comes after the merges. */
        EXPECT_IDS(t, "ab", 1, 1, 1, 259, 262, 2);
    }
    al_tok_free(t);

    /* BOS takes part in the merges, as in run.c: with a piece "\n<s>\n " (BOS's piece and a
     * space) scored above " a", BOS and the prefix merge first. */
    const char *p3[] = {" ", "a", " a", "\n<s>\n "};
    const float s3[] = {-1, -1, -2, -0.5f};
    t = made_up(p3, s3, 4);
    if (t) EXPECT_IDS(t, "a", 1, 0, 262, 260);
    al_tok_free(t);

    /* No " " piece: the dummy prefix is the byte <0x20> (run.c would write id -1). */
    const char *p2[] = {"a", "a"};
    const float s2[] = {-1, -2};
    t = made_up(p2, s2, 2);
    /* ... and of two equal pieces the lower id is the one found. */
    if (t) EXPECT_IDS(t, "a", 1, 0, 1, 3 + ' ', 259);
    al_tok_free(t);
}

static void test_round_trips(const al_tokenizer *t) {
    static const char *const texts[] = {
        "Once upon a time, there was a little girl named Lily.",
        " leading space", "  two leading spaces", "trailing space ", "tabs\tand\nnewlines\r\n",
        "café naïve résumé", "中文字符测试", "日本語のテキスト", "Привет, мир", "emoji 😀🎉👍🏽 and 🇫🇷",
        "mixed: a中b😀c\xC2\xA0" "d", "“quotes” — dashes – and … ellipses", "\x01\x02\x7F control",
        "\xFF\xFE not UTF-8 \xC0\x80 \xED\xA0\x80 \xF4\x90\x80\x80", "\x80\x80\x80\x80\x80\x80 continuation run",
        "a", "!", "<0x41> looks like a byte piece", "\\ backslash", "\xE2\x96\x81 lower one eighth block",
    };
    char out[MAX_IDS], shown[64];
    int32_t ids[MAX_IDS];
    for (size_t k = 0; k < sizeof texts / sizeof texts[0]; k++) {
        const char *text = texts[k];
        const size_t len = strlen(text);
        snprintf(shown, sizeof shown, "%s", text);
        /* With BOS the dummy prefix's space is dropped again: the text comes back exactly. */
        int64_t n = encode(t, text, len, 1, 0, ids);
        size_t got = decode_all(t, ids, n, 1, out, sizeof out);
        CHECK(got == len && memcmp(out, text, len) == 0, "round trip of '%s' (bos): %zu bytes back", shown, got);
        /* Without BOS the prefix space stays. */
        n = encode(t, text, len, 0, 0, ids);
        got = decode_all(t, ids, n, 0, out, sizeof out);
        CHECK(got == len + 1 && out[0] == ' ' && memcmp(out + 1, text, len) == 0,
              "round trip of '%s' (no bos)", shown);
    }
    /* Valid UTF-8 comes out of the streaming decoder unchanged too. */
    for (size_t k = 0; k < 13; k++) {
        const size_t len = strlen(texts[k]);
        const int64_t n = encode(t, texts[k], len, 1, 1, ids);
        const size_t got = stream_all(t, ids, n, out, sizeof out);
        CHECK(got == len && memcmp(out, texts[k], len) == 0, "stream of text %zu: %zu bytes", k, got);
    }
    /* Random bytes (any byte, and UTF-8 pieces of the vocabulary mixed in). */
    uint32_t r = 12345;
    for (int k = 0; k < 300; k++) {
        char text[64];
        size_t len = 0;
        const size_t want = (size_t)(k % 40);
        while (len < want) {
            r = r * 1664525u + 1013904223u;
            if ((r >> 28) < 4 && len + 3 <= want) memcpy(text + len, "\xE2\x80\x9C", 3), len += 3;
            else text[len++] = (char)(r >> 20);
        }
        const int64_t n = encode(t, text, len, 1, 0, ids);
        const size_t got = decode_all(t, ids, n, 1, out, sizeof out);
        CHECK(got == len && memcmp(out, text, len) == 0, "round trip of random text %d (%zu bytes)", k, len);
    }
}

static void test_decode(const al_tokenizer *t) {
    const char *piece = NULL;
    size_t len = 0;
    al_error err = {0};
    CHECK(al_tok_decode(t, 1, 403, &piece, &len, &err) == AL_OK && len == 4 && strcmp(piece, "Once") == 0,
          "after BOS ' Once' drops its space");
    CHECK(al_tok_decode(t, 378, 403, &piece, &len, &err) == AL_OK && len == 5 && strcmp(piece, " Once") == 0,
          "elsewhere it keeps it");
    CHECK(al_tok_decode(t, -1, 403, &piece, &len, &err) == AL_OK && len == 5, "at the start too");
    CHECK(al_tok_decode(t, 1, 3 + 'A', &piece, &len, &err) == AL_OK && len == 1 && piece[0] == 'A',
          "<0x41> is the byte 'A'");
    CHECK(al_tok_decode(t, 5, 3, &piece, &len, &err) == AL_OK && len == 1 && piece[0] == '\0',
          "<0x00> is one NUL byte");
    CHECK(al_tok_decode(t, 1, 410, &piece, &len, &err) == AL_OK && len == 0, "' ' after BOS is empty");
    CHECK(al_tok_decode(t, 7, 1, &piece, &len, &err) == AL_OK && len == 5, "BOS decodes to its piece");
    CHECK(al_tok_decode(t, 1, 512, &piece, &len, &err) == AL_ERR_ARG && strstr(err.msg, "token id 512 is outside [0, 512)"),
          "id out of range: %s", err.msg);
    CHECK(al_tok_decode(t, -2, 5, &piece, &len, &err) == AL_ERR_ARG && strstr(err.msg, "previous token id -2"),
          "prev out of range: %s", err.msg);
    CHECK(al_tok_decode(t, -1, 5, NULL, &len, &err) == AL_ERR_ARG, "NULL text");
}

/* Pushes id and checks the text it writes. */
static void expect_push(al_tok_stream *s, int32_t id, const char *want) {
    char out[64];
    al_error err = {0};
    const int64_t need = al_tok_stream_push(s, id, NULL, 0, &err); /* a size query first */
    const int64_t n = al_tok_stream_push(s, id, out, sizeof out, &err);
    CHECK(n == (int64_t)strlen(want) && need == n && memcmp(out, want, strlen(want)) == 0,
          "push %d: got %lld bytes '%.*s' (size query %lld), want '%s' (%s)", (int)id, (long long)n,
          n > 0 ? (int)n : 0, out, (long long)need, want, err.msg);
}

static void expect_finish(al_tok_stream *s, const char *want) {
    char out[64];
    al_error err = {0};
    const int64_t n = al_tok_stream_finish(s, out, sizeof out, &err);
    CHECK(n == (int64_t)strlen(want) && memcmp(out, want, strlen(want)) == 0,
          "finish: got %lld bytes '%.*s', want '%s' (%s)", (long long)n, n > 0 ? (int)n : 0, out,
          want, err.msg);
}

#define BYTE(b) (3 + (b))

static void test_stream(const al_tokenizer *t) {
    al_tok_stream *s = NULL;
    al_error err = {0};
    CHECK(al_tok_stream_create(t, &s, &err) == AL_OK, "create: %s", err.msg);
    if (!s) return;
    /* "中" = E4 B8 AD over three byte tokens, after BOS and the prefix: nothing until the last. */
    expect_push(s, 1, "");
    expect_push(s, 410, "");
    expect_push(s, BYTE(0xE4), "");
    expect_push(s, BYTE(0xB8), "");
    /* A short buffer is refused and changes nothing. */
    char small[2];
    CHECK(al_tok_stream_push(s, BYTE(0xAD), small, 2, &err) == -1 && err.status == AL_ERR_CAPACITY,
          "a 2-byte buffer for a 3-byte character: %s", err.msg);
    CHECK(al_tok_stream_push(s, 512, small, 2, &err) == -1 && err.status == AL_ERR_ARG, "id 512: %s", err.msg);
    expect_push(s, BYTE(0xAD), "\xE4\xB8\xAD");
    expect_push(s, 403, " Once"); /* not after BOS: the space stays */
    /* An emoji over four bytes; EOS writes nothing and does not disturb what is held. */
    expect_push(s, BYTE(0xF0), "");
    expect_push(s, BYTE(0x9F), "");
    expect_push(s, 2, "");
    expect_push(s, BYTE(0x98), "");
    expect_push(s, BYTE(0x80), "\xF0\x9F\x98\x80");
    /* Cut short by the next byte: the lead byte escaped, the next one as it is. */
    expect_push(s, BYTE(0xE4), "");
    expect_push(s, BYTE('a'), "\\xE4a");
    /* Bytes that never start a character: a lone continuation byte, an overlong form, a
     * surrogate, a lead byte past U+10FFFF. */
    expect_push(s, BYTE(0x80), "\\x80");
    expect_push(s, BYTE(0xC0), "\\xC0");
    expect_push(s, BYTE(0xED), "");
    expect_push(s, BYTE(0xA0), "\\xED\\xA0");
    expect_push(s, BYTE(0xF5), "\\xF5");
    /* The edges of the table: U+0800 (E0 A0 80) is a character and E0 9F BF overlong; U+10000
     * (F0 90 80 80) is one and F0 8F BF BF overlong; U+10FFFF (F4 8F BF BF) is one and F4 90
     * past it; U+D7FF (ED 9F BF) is one. */
    expect_push(s, BYTE(0xE0), "");
    expect_push(s, BYTE(0xA0), "");
    expect_push(s, BYTE(0x80), "\xE0\xA0\x80");
    expect_push(s, BYTE(0xE0), "");
    expect_push(s, BYTE(0x9F), "\\xE0\\x9F");
    expect_push(s, BYTE(0xBF), "\\xBF");
    expect_push(s, BYTE(0xF0), "");
    expect_push(s, BYTE(0x90), "");
    expect_push(s, BYTE(0x80), "");
    expect_push(s, BYTE(0x80), "\xF0\x90\x80\x80");
    expect_push(s, BYTE(0xF0), "");
    expect_push(s, BYTE(0x8F), "\\xF0\\x8F");
    expect_push(s, BYTE(0xF4), "");
    expect_push(s, BYTE(0x8F), "");
    expect_push(s, BYTE(0xBF), "");
    expect_push(s, BYTE(0xBF), "\xF4\x8F\xBF\xBF");
    expect_push(s, BYTE(0xF4), "");
    expect_push(s, BYTE(0x90), "\\xF4\\x90");
    expect_push(s, BYTE(0xED), "");
    expect_push(s, BYTE(0x9F), "");
    expect_push(s, BYTE(0xBF), "\xED\x9F\xBF");
    expect_push(s, BYTE(0xC1), "\\xC1");
    expect_push(s, BYTE(0xC2), "");
    expect_push(s, BYTE(0x80), "\xC2\x80");
    /* Held at the end: finish escapes it and starts over (no previous token). */
    expect_push(s, BYTE(0xE4), "");
    expect_push(s, BYTE(0xB8), "");
    CHECK(al_tok_stream_finish(s, NULL, 0, &err) == 8, "finish's size query");
    expect_finish(s, "\\xE4\\xB8");
    expect_finish(s, "");
    expect_push(s, 403, " Once");
    /* A whole piece that is text, then BOS: the next piece drops its space. */
    expect_push(s, 1, "");
    expect_push(s, 403, "Once");
    /* A character split between a held byte and a text piece's bytes. */
    expect_push(s, BYTE(0xC3), "");
    expect_push(s, 485, "\\xC3\xC3\xA9"); /* C3 then "é" = C3 A9: C3 is cut short */
    al_tok_stream_free(s);

    CHECK(al_tok_stream_create(NULL, &s, &err) == AL_ERR_ARG && s == NULL, "create without a tokenizer");
    CHECK(al_tok_stream_push(NULL, 5, NULL, 0, &err) == -1 && err.status == AL_ERR_ARG, "push to NULL");
}

static void test_limits(const al_tokenizer *t) {
    al_error err = {0};
    int32_t ids[4];
    CHECK(al_tok_encode(t, "hello", 5, 1, 0, ids, 2, &err) == -1 && err.status == AL_ERR_CAPACITY &&
              strstr(err.msg, "encodes to 4 ids but the buffer holds 2"), "capacity: %s", err.msg);
    CHECK(al_tok_encode(t, "hello", 5, 1, 0, NULL, 4, &err) == -1 && err.status == AL_ERR_ARG, "NULL ids with cap 4");
    CHECK(al_tok_encode(t, NULL, 5, 1, 0, NULL, 0, &err) == -1 && err.status == AL_ERR_ARG, "NULL text");
    CHECK(al_tok_encode(t, NULL, 0, 1, 0, ids, 4, &err) == 1 && ids[0] == 1, "NULL text of length 0");
    CHECK(al_tok_encode(t, "x", (size_t)AL_TOK_MAX_TEXT + 1, 1, 0, NULL, 0, &err) == -1 &&
              err.status == AL_ERR_LIMIT, "text over the limit: %s", err.msg);

    /* 100 KB of text: a story's words, Chinese and emoji; the bench reads the time printed. */
    static const char *const words[] = {"Once", "upon", "a", "time,", "there", "was", "little",
                                        "girl", "named", "Lily.", "中文", "😀", "café", "\n"};
    const size_t len = 100000;
    char *text = malloc(len + 16);
    int32_t *many = malloc((len + 3) * sizeof *many);
    if (!text || !many) {
        CHECK(0, "out of memory");
        free(text);
        free(many);
        return;
    }
    size_t o = 0;
    for (uint32_t r = 1; o < len;) {
        r = r * 1664525u + 1013904223u;
        const char *w = words[(r >> 16) % (sizeof words / sizeof words[0])];
        const size_t wl = strlen(w);
        if (o + wl + 1 > len) break;
        memcpy(text + o, w, wl);
        o += wl;
        text[o++] = ' ';
    }
    const clock_t start = clock();
    const int64_t n = al_tok_encode(t, text, o, 1, 0, many, (int64_t)len + 3, &err);
    const double ms = 1e3 * (double)(clock() - start) / CLOCKS_PER_SEC;
    CHECK(n > 0 && n < (int64_t)o / 2, "100 KB: %lld ids (%s)", (long long)n, err.msg);
    printf("100 KB (%zu bytes) -> %lld ids in %.1f ms\n", o, (long long)n, ms);
    if (n > 0) {
        char *back = malloc(o + 1);
        const size_t got = back ? decode_all(t, many, n, 1, back, o + 1) : 0;
        CHECK(got == o && memcmp(back, text, o) == 0, "100 KB round trip");
        free(back);
    }
    free(text);
    free(many);
}

/* ---- malformed files ---------------------------------------------------------------------- */

/* Offset of token i's score in tok512.bin. */
static size_t entry_at(const uint8_t *b, int i) {
    size_t o = 4;
    for (int k = 0; k < i; k++) o += 8 + (size_t)(b[o + 4] | b[o + 5] << 8);
    return o;
}

static void put32(uint8_t *p, uint32_t v) { tok_image_put32(p, v); }

typedef struct {
    const char *what;
    int64_t vocab_size;
    al_status status;
    const char *message;
} refusal;

/* Each case takes a fresh copy of tok512.bin (size bytes) and may change it and its size. */
static void expect_refused(const uint8_t *good, size_t size, int which, const refusal *c) {
    uint8_t *b = malloc(size + 16);
    if (!b) return;
    memcpy(b, good, size);
    float f;
    uint32_t bits;
    switch (which) {
    case 0: size = 0; break;                                        /* empty */
    case 1: size = 3; break;                                        /* shorter than its header */
    case 2: put32(b, 0); break;                                     /* max_token_length 0 */
    case 3: put32(b, 0xFFFFFFFFu); break;                           /* max_token_length -1 */
    case 4: put32(b, 0x7FFFFFFFu); break;                           /* huge max_token_length */
    case 5: size = entry_at(b, 300) + 5; break;                     /* truncated in a length */
    case 6: size = entry_at(b, 300) + 8 + 1; break;                 /* truncated in a piece */
    case 7: put32(b + entry_at(b, 300) + 4, 0xFFFFFFFEu); break;    /* length -2 */
    case 8: put32(b + entry_at(b, 511) + 4, 100); break;            /* length past the end */
    case 9: put32(b + entry_at(b, 300) + 4, 0); break;              /* length 0 */
    case 10: put32(b, 4); break;                                    /* <unk> is 5 bytes */
    case 11: /* vocab size mismatch: 600 wanted, 512 there */
    case 12: break;                                                 /* 300 wanted, 512 there */
    case 13: f = NAN, memcpy(&bits, &f, 4), put32(b + entry_at(b, 400), bits); break;
    case 14: f = -INFINITY, memcpy(&bits, &f, 4), put32(b + entry_at(b, 400), bits); break;
    case 15: b[entry_at(b, 403) + 8 + 2] = 0; break;                /* " O\0ce" */
    case 16: b[entry_at(b, 3 + 0x61) + 8 + 4] = '2'; break;         /* <0x62> at 0x61's place */
    case 17: size = entry_at(b, 200); break;                        /* only 200 tokens */
    case 18: case 19: break;                                        /* bad vocab_size arguments */
    }
    al_tokenizer *t = (al_tokenizer *)&t; /* must be set to NULL */
    al_error err = {0};
    const al_status st = al_tok_llama2c_create(b, size, c->vocab_size, &t, &err);
    CHECK(st == c->status && t == NULL && strstr(err.msg, c->message) != NULL,
          "%s: got '%s' \"%s\", want '%s' \"%s\"", c->what, al_status_str(st), err.msg,
          al_status_str(c->status), c->message);
    if (st == AL_OK) al_tok_free(t);
    free(b);
}

static void test_malformed(const uint8_t *good, size_t size) {
    static const refusal cases[] = {
        {"empty", 0, AL_ERR_FORMAT, "the file is 0 bytes, too short for its 4-byte max_token_length"},
        {"3 bytes", 0, AL_ERR_FORMAT, "the file is 3 bytes, too short"},
        {"max_token_length 0", 0, AL_ERR_FORMAT, "max_token_length is 0: it must be at least 1"},
        {"max_token_length -1", 0, AL_ERR_FORMAT, "max_token_length is -1: it must be at least 1"},
        {"huge max_token_length", 0, AL_ERR_FORMAT, "max_token_length is 2147483647, above the limit of 4096 bytes"},
        {"truncated in a length", 0, AL_ERR_FORMAT, "token 300: the file ends inside its score and length (5 of 8 bytes"},
        {"truncated in a piece", 0, AL_ERR_FORMAT, "token 300: length 3 runs past the end of the file (1 bytes follow"},
        {"negative length", 0, AL_ERR_FORMAT, "token 300: length -2 is negative"},
        {"length past the end", 512, AL_ERR_FORMAT, "token 511: length 100 runs past the end of the file (3 bytes follow"},
        {"length 0", 0, AL_ERR_FORMAT, "token 300: length 0 (llama2.c reads no empty pieces)"},
        {"piece longer than max_token_length", 0, AL_ERR_FORMAT, "token 0: length 5 exceeds max_token_length 4"},
        {"vocab size 600 of 512", 600, AL_ERR_FORMAT, "the file holds 512 tokens but the vocabulary size is 600"},
        {"vocab size 300 of 512", 300, AL_ERR_FORMAT, "the vocabulary size is 300 but 2176 bytes follow its last token"},
        {"NaN score", 0, AL_ERR_FORMAT, "token 400 (' do'): score is NaN"},
        {"-inf score", 0, AL_ERR_FORMAT, "token 400 (' do'): score is infinite"},
        {"NUL in a piece", 0, AL_ERR_FORMAT, "token 403: the piece has a NUL byte at 2"},
        {"wrong byte piece", 0, AL_ERR_FORMAT, "token 100 is '<0x62>', not the byte piece <0x61>"},
        {"too few tokens", 0, AL_ERR_FORMAT, "the file holds 200 tokens; llama2.c's format has at least 259"},
        {"vocab_size -1", -1, AL_ERR_ARG, "vocab_size -1 is outside [259, 2097152]"},
        {"vocab_size 100", 100, AL_ERR_ARG, "vocab_size 100 is outside [259, 2097152]"},
    };
    const int n = (int)(sizeof cases / sizeof cases[0]);
    for (int i = 0; i < n; i++) expect_refused(good, size, i, &cases[i]);
    /* Each refusal has its own message. */
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++)
            CHECK(strcmp(cases[i].message, cases[j].message) != 0, "cases %d and %d share a message", i, j);

    al_tokenizer *t = NULL;
    CHECK(al_tok_llama2c_create(NULL, 5, 0, &t, NULL) == AL_ERR_ARG, "NULL bytes");
    CHECK(al_tok_llama2c_create(good, size, 0, NULL, NULL) == AL_ERR_ARG, "NULL out");
    CHECK(al_tok_llama2c_create(good, size, 512, &t, NULL) == AL_OK, "vocab size 512 given");
    al_tok_free(t);
    al_tok_free(NULL);

    /* Every truncation, and random byte changes: refused cleanly or read (a cut at a token
     * boundary past 259 tokens is a smaller valid vocabulary), never a crash. */
    int read_ok = 0;
    for (size_t cut = 0; cut < size; cut++) {
        al_error err = {0};
        const al_status st = al_tok_llama2c_create(good, cut, 0, &t, &err);
        CHECK(st == AL_OK || (st == AL_ERR_FORMAT && err.msg[0]), "cut at %zu: %s", cut, err.msg);
        if (st == AL_OK) {
            read_ok++;
            int32_t ids[64];
            CHECK(al_tok_encode(t, "Once upon a time 中", 20, 1, 1, ids, 64, &err) > 0, "cut at %zu: encode", cut);
            al_tok_free(t);
        }
    }
    CHECK(read_ok == 512 - 259, "%d truncations are valid vocabularies, want 253", read_ok);
    uint8_t *b = malloc(size);
    uint32_t r = 7;
    for (int k = 0; b && k < 2000; k++) {
        memcpy(b, good, size);
        for (int j = 0; j < 1 + k % 4; j++) {
            r = r * 1664525u + 1013904223u;
            b[(r >> 8) % size] = (uint8_t)(r >> 24);
        }
        al_error err = {0};
        const al_status st = al_tok_llama2c_create(b, size, k % 2 ? 512 : 0, &t, &err);
        CHECK(st == AL_OK || (st == AL_ERR_FORMAT && err.msg[0]), "mutation %d: %s", k, err.msg);
        if (st == AL_OK) {
            int32_t ids[64];
            CHECK(al_tok_encode(t, "Once upon a time 中", 20, 1, 1, ids, 64, &err) > 0, "mutation %d: encode", k);
            al_tok_free(t);
        }
    }
    free(b);
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: test_tokenizer models/stories260K/tok512.bin\n");
        return 2;
    }
    size_t size = 0;
    uint8_t *bytes = read_file(argv[1], &size);
    if (!bytes) CHECK_DONE();
    al_tokenizer *t = NULL;
    al_error err = {0};
    CHECK(al_tok_llama2c_create(bytes, size, 0, &t, &err) == AL_OK, "%s: %s", argv[1], err.msg);
    if (t) {
        test_pieces(t);
        test_hand_checked(t);
        test_round_trips(t);
        test_decode(t);
        test_stream(t);
        test_limits(t);
    }
    test_made_up();
    test_malformed(bytes, size);
    al_tok_free(t);
    free(bytes);
    CHECK_DONE();
}
