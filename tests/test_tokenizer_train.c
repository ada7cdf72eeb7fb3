/* test_tokenizer_train.c — tests of the BPE trainer (core/io/tokenizer_train.c) through its public
 * call: a corpus worked out by hand (its merges as the tokenizer they make, read back with
 * al_tok_hf_create; the summary; min_frequency; a vocabulary the corpus cannot reach), the
 * refusals (each argument, text that is not UTF-8 with the offset of the first bad byte, a
 * corpus over the limit), no token longer than AL_TOK_MAX_PIECE bytes, a result that does not
 * depend on the order of the words, encode then decode of the corpus with its own tokenizer, and
 * 1 MB of mixed text to 6400 tokens (the time it took printed for `npm run bench`, not checked).
 * The comparisons with Hugging Face's trainer and the reference
 * tokenizer are tests/train-tokenizer.test.mjs's.
 * Usage: test_tokenizer_train */
#include "attnlab.h"
#include "check.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Trains on text (NUL-terminated) and reads the result back; NULL after a failed check. */
static al_tokenizer *trained(const char *text, int64_t vocab, int64_t min_frequency, al_tok_train_summary *sum) {
    char *json = NULL;
    size_t len = 0;
    al_error err = {0};
    const al_status st = al_tok_train_bpe(text, strlen(text), vocab, min_frequency, &json, &len, sum, &err);
    CHECK(st == AL_OK && json && len > 0, "training on '%.40s' failed: %s", text, err.msg);
    if (st != AL_OK) return NULL;
    al_tokenizer *t = NULL;
    CHECK(al_tok_hf_create((const uint8_t *)json, len, 0, &t, &err) == AL_OK,
          "the trained tokenizer.json is refused: %s", err.msg);
    al_buffer_free(json);
    return t;
}

static int piece_is(const al_tokenizer *t, int32_t id, const char *want) {
    size_t n = 0;
    const char *p = al_tok_piece(t, id, &n);
    return p && n == strlen(want) && memcmp(p, want, n) == 0;
}

/* Words "aaaa", " abab", " abc", " bcd" (the merges worked out in tests/train-tokenizer.test.mjs):
 * a+a, a+b, Ġ+ab, b+c, Ġ+bc, aa+aa, Ġab+c, Ġab+ab, Ġbc+d, as ids 292..300. */
static void test_by_hand(void) {
    static const char *const want[] = {"aa", "ab", " ab", "bc", " bc", "aaaa", " abc", " abab", " bcd"};
    al_tok_train_summary sum;
    al_tokenizer *t = trained("aaaa abab abc bcd", 301, 0, &sum);
    CHECK(sum.vocab_size == 301 && sum.n_merges == 9 && sum.n_words == 4 && sum.n_distinct == 4 && sum.last_count == 1,
          "summary: %lld tokens, %lld merges, %lld words, %lld distinct, last %lld", (long long)sum.vocab_size,
          (long long)sum.n_merges, (long long)sum.n_words, (long long)sum.n_distinct, (long long)sum.last_count);
    if (!t) return;
    CHECK(al_tok_vocab_size(t) == 301, "vocab size %lld", (long long)al_tok_vocab_size(t));
    for (int k = 0; k < 9; k++) CHECK(piece_is(t, 292 + k, want[k]), "id %d is not '%s'", 292 + k, want[k]);
    CHECK(piece_is(t, 0, "<|endoftext|>") && piece_is(t, 1, "<|im_start|>") && piece_is(t, 2, "<|im_end|>") &&
              piece_is(t, 35, "<|buffer9|>"),
          "the added tokens");
    CHECK(piece_is(t, 36, "!") && piece_is(t, 100, "a") && piece_is(t, 256, " ") && piece_is(t, 291, "\xAD"),
          "the bytes: '!' 36, 'a' 100, ' ' 256, 0xAD 291");
    int32_t ids[8];
    const int64_t n = al_tok_encode(t, "aaaa abab abc bcd", 17, 0, 0, ids, 8, NULL);
    CHECK(n == 4 && ids[0] == 297 && ids[1] == 299 && ids[2] == 298 && ids[3] == 300, "the corpus encodes to its words");
    al_tok_free(t);

    /* min_frequency 2: Ġ+ab (2) is the last pair that often. */
    t = trained("aaaa abab abc bcd", 295, 2, &sum);
    CHECK(sum.vocab_size == 295 && sum.n_merges == 3 && sum.last_count == 2, "min_frequency 2: %lld tokens, last %lld",
          (long long)sum.vocab_size, (long long)sum.last_count);
    al_tok_free(t);
    t = trained("aaaa abab abc bcd", 400, 2, &sum);
    CHECK(sum.vocab_size == 295, "min_frequency 2 stops at 295, not %lld", (long long)sum.vocab_size);
    al_tok_free(t);
    /* More than the corpus gives: what it gives, and no error (the caller decides). */
    t = trained("aaaa abab abc bcd", 400, 0, &sum);
    CHECK(sum.vocab_size == 301 && t && al_tok_vocab_size(t) == 301, "400 asked, %lld given", (long long)sum.vocab_size);
    al_tok_free(t);
    /* One byte: no pair, only the added tokens and the bytes. */
    t = trained("x", 292, 0, &sum);
    CHECK(sum.vocab_size == 292 && sum.n_merges == 0 && sum.last_count == 0, "'x': %lld tokens", (long long)sum.vocab_size);
    al_tok_free(t);
}

static void expect_refused(const char *text, size_t len, int64_t vocab, int64_t min_frequency, int with_out,
                           al_status want, const char *message) {
    char *json = (char *)&json; /* anything but NULL: a refusal must set it to NULL */
    size_t json_len = 7;
    al_error err = {0};
    const al_status st = al_tok_train_bpe(text, len, vocab, min_frequency, with_out ? &json : NULL, &json_len, NULL, &err);
    CHECK(st == want, "got '%s' (%s), want '%s'", al_status_str(st), err.msg, al_status_str(want));
    CHECK(!with_out || json == NULL, "a refusal left *json_out set");
    CHECK(strstr(err.msg, message) != NULL, "message '%s' lacks '%s'", err.msg, message);
}

static void test_refusals(void) {
    expect_refused(NULL, 3, 300, 0, 1, AL_ERR_ARG, "is NULL");
    expect_refused("abc", 3, 300, 0, 0, AL_ERR_ARG, "is NULL");
    expect_refused("abc", 0, 300, 0, 1, AL_ERR_ARG, "the corpus is empty");
    expect_refused("abc", 3, 291, 0, 1, AL_ERR_ARG, "vocab_size 291 is outside [292, 2097152]");
    expect_refused("abc", 3, AL_TOK_MAX_VOCAB + 1, 0, 1, AL_ERR_ARG, "vocab_size 2097153");
    expect_refused("abc", 3, 300, -1, 1, AL_ERR_ARG, "min_frequency -1");
    expect_refused("ab\xC3(", 4, 300, 0, 1, AL_ERR_FORMAT, "byte 0xC3 at offset 2");      /* a bad continuation */
    expect_refused("ab\xE4\xBD", 4, 300, 0, 1, AL_ERR_FORMAT, "byte 0xE4 at offset 2");   /* cut short */
    expect_refused("\xC0\xAF", 2, 300, 0, 1, AL_ERR_FORMAT, "byte 0xC0 at offset 0");     /* overlong */
    expect_refused("x\xED\xA0\x80", 4, 300, 0, 1, AL_ERR_FORMAT, "byte 0xED at offset 1"); /* a surrogate */
    expect_refused("\xF4\x90\x80\x80", 4, 300, 0, 1, AL_ERR_FORMAT, "offset 0");           /* above U+10FFFF */
    char *big = calloc((size_t)AL_TOK_MAX_CORPUS + 1, 1);
    if (big) expect_refused(big, (size_t)AL_TOK_MAX_CORPUS + 1, 300, 0, 1, AL_ERR_LIMIT, "above the limit");
    free(big);
    /* NUL bytes are text like any other. */
    char *json = NULL;
    size_t len = 0;
    CHECK(al_tok_train_bpe("a\0a\0", 4, 293, 0, &json, &len, NULL, NULL) == AL_OK, "NUL bytes refused");
    al_buffer_free(json);
}

/* Two words of 6000 'a's: the library would end with one token of 6000 bytes; here none is
 * longer than AL_TOK_MAX_PIECE (a^4096 + a^1024 is never counted), and the file reads. */
static void test_piece_limit(void) {
    const size_t run = 6000;
    char *text = malloc(2 * run + 2);
    if (!text) return;
    memset(text, 'a', 2 * run + 1);
    text[run] = '\n';
    text[2 * run + 1] = '\0';
    al_tok_train_summary sum;
    al_tokenizer *t = trained(text, 1000, 0, &sum);
    free(text);
    if (!t) return;
    size_t longest = 0;
    for (int32_t id = 0; id < al_tok_vocab_size(t); id++) {
        size_t n = 0;
        al_tok_piece(t, id, &n);
        if (n > longest) longest = n;
    }
    CHECK(longest == AL_TOK_MAX_PIECE, "the longest token is %zu bytes, want %d", longest, AL_TOK_MAX_PIECE);
    CHECK(sum.vocab_size < 1000, "a run of one letter gave %lld tokens", (long long)sum.vocab_size);
    al_tok_free(t);
}

/* ---- a made-up corpus of mixed text ---------------------------------------------------------- */

static uint32_t rng_state = 12345;
static uint32_t next_random(void) { /* xorshift32 */
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 17;
    rng_state ^= rng_state << 5;
    return rng_state;
}

static const char *const WORDS[] = {"the", "attention", "model", "token", "merge", "pair", "byte", "of", "and",
                                    "注意力", "模型", "的", "训练", "分词器", "中文", "😀", "2024", "3.14", "，", "。",
                                    "don't", "we'll", "(x)", "--", "naïve", "Привет"};
#define N_WORDS (sizeof WORDS / sizeof WORDS[0])

/* `bytes` of lines of 1..12 words: WORDS (skewed towards the first) and, one in five, a made-up
 * word of 2 to 9 letters, for many distinct words. */
static char *mixed_text(size_t bytes, size_t *len) {
    char *text = malloc(bytes + 64);
    size_t n = 0;
    while (text && n < bytes) {
        const int words = 1 + (int)(next_random() % 12);
        for (int k = 0; k < words && n < bytes; k++) {
            if (k) text[n++] = (next_random() % 16) ? ' ' : '\t';
            if (next_random() % 5 == 0) {
                for (int c = 2 + (int)(next_random() % 8); c > 0; c--) text[n++] = (char)('a' + next_random() % 26);
                continue;
            }
            const uint32_t r = next_random() % 1000;
            const char *w = WORDS[(r * r / 1000) * N_WORDS / 1000];
            memcpy(text + n, w, strlen(w));
            n += strlen(w);
        }
        text[n++] = '\n';
    }
    if (text) text[n] = '\0';
    *len = n;
    return text;
}

static char *train_json(const char *text, size_t len, int64_t vocab, size_t *json_len) {
    char *json = NULL;
    al_error err = {0};
    CHECK(al_tok_train_bpe(text, len, vocab, 0, &json, json_len, NULL, &err) == AL_OK, "training failed: %s", err.msg);
    return json;
}

/* The same words in another order give the same file: nothing depends on where a word comes
 * first (the words are lines here, so the split is the same). Made-up words, most seen once,
 * trained until no pair is left: ties decide nearly every merge. And encode then decode of the
 * corpus with its own tokenizer gives the corpus. */
static void test_order_and_round_trip(void) {
    enum { LINES = 3000 };
    static char lines[LINES][16];
    static int order[LINES];
    for (int i = 0; i < LINES; i++) {
        int n = 0;
        for (int c = 3 + (int)(next_random() % 6); c > 0; c--) lines[i][n++] = (char)('a' + next_random() % 26);
        lines[i][n] = '\0';
        order[i] = i;
    }
    for (int i = LINES - 1; i > 0; i--) { /* a shuffle */
        const int j = (int)(next_random() % (uint32_t)(i + 1)), tmp = order[i];
        order[i] = order[j], order[j] = tmp;
    }
    char *a = malloc(LINES * 17), *b = malloc(LINES * 17);
    size_t la = 0, lb = 0;
    for (int i = 0; a && b && i < LINES; i++) {
        la += (size_t)sprintf(a + la, "%s\n", lines[i]);
        lb += (size_t)sprintf(b + lb, "%s\n", lines[order[i]]);
    }
    size_t ja = 0, jb = 0;
    char *json_a = a && b ? train_json(a, la, 100000, &ja) : NULL, *json_b = a && b ? train_json(b, lb, 100000, &jb) : NULL;
    CHECK(json_a && json_b && ja == jb && memcmp(json_a, json_b, ja) == 0, "the order of the words changed the result");
    CHECK(ja > 200000, "only %zu bytes of tokenizer.json: few merges", ja);
    al_buffer_free(json_a), al_buffer_free(json_b), free(a), free(b);

    size_t len = 0;
    char *text = mixed_text(200000, &len);
    size_t json_len = 0;
    char *json = text ? train_json(text, len, 3000, &json_len) : NULL;
    al_tokenizer *t = NULL;
    if (json) CHECK(al_tok_hf_create((const uint8_t *)json, json_len, 3000, &t, NULL) == AL_OK, "3000 tokens read back");
    al_buffer_free(json);
    const int64_t n = t ? al_tok_encode(t, text, len, 0, 0, NULL, 0, NULL) : -1;
    int32_t *ids = n > 0 ? malloc((size_t)n * sizeof *ids) : NULL;
    char *back = ids ? malloc(len + 1) : NULL;
    if (back && al_tok_encode(t, text, len, 0, 0, ids, n, NULL) == n) {
        size_t o = 0;
        for (int64_t i = 0; i < n && o <= len; i++) {
            const char *piece;
            size_t pn = 0;
            if (al_tok_decode(t, -1, ids[i], &piece, &pn, NULL) != AL_OK || o + pn > len) break;
            memcpy(back + o, piece, pn);
            o += pn;
        }
        CHECK(o == len && memcmp(back, text, len) == 0, "decode(encode(corpus)) is not the corpus");
        CHECK(n < (int64_t)len / 3, "%lld ids for %zu bytes: the merges hardly compress their own corpus", (long long)n, len);
    } else {
        CHECK(0, "encoding the corpus failed");
    }
    free(back), free(ids), free(text);
    al_tok_free(t);
}

/* 1 MB of mixed text to the full 6400 tokens, read back as a tokenizer of that size; the bench
 * reads the time printed. */
static void test_megabyte(void) {
    size_t len = 0;
    char *text = mixed_text((size_t)1 << 20, &len);
    if (!text) return;
    size_t json_len = 0;
    const clock_t t0 = clock();
    char *json = train_json(text, len, 6400, &json_len);
    const double s = (double)(clock() - t0) / CLOCKS_PER_SEC;
    al_tokenizer *t = NULL;
    CHECK(json && al_tok_hf_create((const uint8_t *)json, json_len, 6400, &t, NULL) == AL_OK, "1 MB: 6400 tokens read back");
    printf("1 MB (%zu bytes) to 6400 tokens: %.3f s\n", len, s);
    al_tok_free(t);
    al_buffer_free(json);
    free(text);
}

int main(void) {
    test_by_hand();
    test_refusals();
    test_piece_limit();
    test_order_and_round_trip();
    test_megabyte();
    CHECK_DONE();
}
