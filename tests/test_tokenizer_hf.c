/* test_tokenizer_hf.c — tests of the tokenizer.json reader (core/io/tokenizer_hf.c) in C: ids
 * derived by hand on small made-up tokenizers (merge ranks and ties, GPT-2's split at white space,
 * contractions, letters and numbers beyond ASCII, the longest added token at the leftmost place
 * (overlapping ones too), add_prefix_space, use_regex false, merges written "a b"), then
 * MiniMind's tokenizer.json: its pieces, no BOS or EOS, size queries and short buffers,
 * decode(encode(bytes)) == bytes for any bytes, the streaming decoder writing only whole
 * characters one id at a time, 100 KB encoded (the time it took printed for `npm run bench`, not
 * checked), its cut to 6400, 512 and 292 ids (al_tok_hf_cut), and every truncation and random
 * byte changes of the file refused or read (and what is read cut or refused), never a crash
 * under ASan. Equality with the reference library on thousands of texts, and the refusals of
 * malformed files one by one, are tests/hf-tokenizer.test.mjs's.
 * Usage: test_tokenizer_hf models/minimind-tokenizer/tokenizer.json [--fewer]
 * (--fewer, for valgrind: fewer truncations and byte changes.) */
#include "attnlab.h"
#include "check.h"
#include "read_file.h"
#include "tok_json.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_IDS 4096

/* ---- made-up tokenizers ------------------------------------------------------------------- */

static al_tokenizer *made_up(const char *const *tokens, int n_tokens, const char *const (*merges)[2],
                             int n_merges, const char *const *added, int n_added, int add_prefix_space,
                             int use_regex, int old_merges) {
    char *json = tok_json(tokens, n_tokens, merges, n_merges, added, n_added, add_prefix_space,
                              use_regex, old_merges);
    al_tokenizer *t = NULL;
    al_error err = {0};
    CHECK(json && al_tok_hf_create((const uint8_t *)json, strlen(json), 0, &t, &err) == AL_OK,
          "made-up tokenizer.json refused: %s", err.msg);
    free(json);
    return t;
}

static void show_ids(char *buf, size_t cap, const int32_t *ids, int64_t n) {
    size_t o = 0;
    buf[0] = '\0';
    for (int64_t i = 0; i < n && o + 12 < cap; i++)
        o += (size_t)snprintf(buf + o, cap - o, "%s%d", i ? " " : "", (int)ids[i]);
}

static void expect_ids(const al_tokenizer *t, const char *text, size_t len, const int32_t *want,
                       int64_t n_want) {
    int32_t ids[MAX_IDS];
    al_error err = {0};
    const int64_t n = al_tok_encode(t, text, len, 0, 0, ids, MAX_IDS, &err);
    char got_s[512], want_s[512];
    show_ids(got_s, sizeof got_s, ids, n < 0 ? 0 : n);
    show_ids(want_s, sizeof want_s, want, n_want);
    CHECK(n == n_want && (n_want == 0 || memcmp(ids, want, (size_t)n_want * sizeof *ids) == 0),
          "'%s': got [%s]%s, want [%s]", text, got_s, n < 0 ? err.msg : "", want_s);
    CHECK(al_tok_encode(t, text, len, 0, 0, NULL, 0, NULL) == n_want, "'%s': size query", text);
}
#define EXPECT_IDS(t, text, ...)                                                              \
    do {                                                                                      \
        const int32_t want_[] = {__VA_ARGS__};                                                \
        expect_ids(t, text, strlen(text), want_, (int64_t)(sizeof want_ / sizeof want_[0]));  \
    } while (0)

/* Derived by hand. A byte's id is the byte; the tokens after 255 are numbered in order.
 *   "hello world": words "hello", " world" (the space joins the letters after it). "hello":
 *     h e l l o; he (rank 0) -> [he l l o]; ll (1) -> [he ll o]; hell (2); hello (3) -> 259.
 *     " world": Ġ w o r l d; Ġw (4) -> [Ġw o r l d]; or (5) -> [Ġw or l d] -> 260 261 'l' 'd'.
 *   "abc" with bc (rank 6) before ab (7): bc merges first, and then "a"+"bc" is no merge.
 *   "aaa": aa (8) at both places; the leftmost merges: [aa a]. "aaaa": [aa aa], then aaaa (9). */
static void test_ranks(void) {
    const char *tokens[] = {"he", "ll", "hell", "hello", " w", "or", "bc", "ab", "aa", "aaaa"};
    const char *const merges[][2] = {{"h", "e"}, {"l", "l"}, {"he", "ll"}, {"hell", "o"}, {" ", "w"},
                                     {"o", "r"}, {"b", "c"}, {"a", "b"}, {"a", "a"}, {"aa", "aa"}};
    for (int old = 0; old <= 1; old++) { /* the same file with merges written "a b" */
        al_tokenizer *t = made_up(tokens, 10, merges, 10, NULL, 0, 0, 1, old);
        if (!t) continue;
        CHECK(al_tok_vocab_size(t) == 266, "vocab size %lld", (long long)al_tok_vocab_size(t));
        EXPECT_IDS(t, "hello world", 259, 260, 261, 'l', 'd');
        EXPECT_IDS(t, "abc", 'a', 262);
        EXPECT_IDS(t, "ab", 263);
        EXPECT_IDS(t, "aaa", 264, 'a');
        EXPECT_IDS(t, "aaaa", 265);
        EXPECT_IDS(t, "aaaaa", 265, 'a');
        al_tok_free(t);
    }
}

/* GPT-2's pattern, seen through merges that would apply across a word's edge if the split
 * were wrong. Tokens 256..: "  ", "'s", "x'", "'S", "1a", " 1", "é" (C3 A9), "é!", "\x80a",
 * "\x80b", "\xA3a". */
static void test_split(void) {
    const char *tokens[] = {"  ", "'s", "x'", "'S", "1a", " 1", "\xC3\xA9", "\xC3\xA9!", "\x80" "a", "\x80" "b",
                            "\xA3" "a"};
    const char *const merges[][2] = {{" ", " "}, {"'", "s"}, {"x", "'"}, {"'", "S"}, {"1", "a"}, {" ", "1"},
                                     {"\xC3", "\xA9"}, {"\xC3\xA9", "!"}, {"\x80", "a"}, {"\x80", "b"},
                                     {"\xA3", "a"}};
    al_tokenizer *t = made_up(tokens, 11, merges, 11, NULL, 0, 0, 1, 0);
    if (!t) return;
    /* "a  b": a | " " | " b" — \s+(?!\S) gives the last space back, to go with the b. */
    EXPECT_IDS(t, "a  b", 'a', ' ', ' ', 'b');
    /* "a  \n": the run reaches the end of the text: one word, whose two spaces merge. */
    EXPECT_IDS(t, "a  \n", 'a', 256, '\n');
    /* "a   b": "  " then " b". */
    EXPECT_IDS(t, "a   b", 'a', 256, ' ', 'b');
    /* "\t b": a run of two backs off to the tab, then " b". */
    EXPECT_IDS(t, "\t b", '\t', ' ', 'b');
    /* "x's": x | 's (a contraction: "'" would otherwise be a word of its own); "x'" never merges. */
    EXPECT_IDS(t, "x's", 'x', 257);
    /* Contractions are lower case only: "x'S" -> x | ' | S. */
    EXPECT_IDS(t, "x'S", 'x', '\'', 'S');
    /* A number run stops at a letter: 1 | a. A space joins the number after it: a | " 1". */
    EXPECT_IDS(t, "1a", '1', 'a');
    EXPECT_IDS(t, "a 1", 'a', 261);
    /* é is a letter (its bytes merge within the word), '!' is not: é | ! */
    EXPECT_IDS(t, "\xC3\xA9\xC3\xA9", 262, 262);
    EXPECT_IDS(t, "\xC3\xA9!", 262, '!');
    /* U+1D400 (F0 9D 90 80) is a letter beyond the BMP: "\U0001D400a" is one word, so 80 a merge. */
    EXPECT_IDS(t, "\xF0\x9D\x90\x80" "a", 0xF0, 0x9D, 0x90, 264);
    /* U+3000 (E3 80 80) is white space, not a letter: its 80 and the b stay apart. */
    EXPECT_IDS(t, "a\xE3\x80\x80\xE3\x80\x80" "b", 'a', 0xE3, 0x80, 0x80, 0xE3, 0x80, 0x80, 'b');
    /* U+0663 (D9 A3) is a number: "\u0663a" is two words, A3 and a stay apart. */
    EXPECT_IDS(t, "\xD9\xA3" "a", 0xD9, 0xA3, 'a');
    /* A byte that is not UTF-8 is a character that is neither letter, number nor space. */
    EXPECT_IDS(t, "\x80" "a", 0x80, 'a');
    al_tok_free(t);
}

/* Added tokens: the longest at the leftmost place, before any split; add_prefix_space; no
 * regex. New ids follow the vocabulary: "<a>" 257, "<a>b" 258, "<|x|>" 259. */
static void test_added(void) {
    const char *tokens[] = {" a"};
    const char *const merges[][2] = {{" ", "a"}};
    const char *added[] = {"<a>", "<a>b", "<|x|>"};
    al_tokenizer *t = made_up(tokens, 1, merges, 1, added, 3, 0, 1, 0);
    if (t) {
        CHECK(al_tok_vocab_size(t) == 260, "vocab size %lld", (long long)al_tok_vocab_size(t));
        EXPECT_IDS(t, "<a>bc", 258, 'c');
        EXPECT_IDS(t, "<a>c", 257, 'c');
        EXPECT_IDS(t, "x<|x|> a<|x|>", 'x', 259, 256, 259);
        EXPECT_IDS(t, "<|x|", '<', '|', 'x', '|');
        size_t len = 0;
        const char *p = al_tok_piece(t, 259, &len);
        CHECK(p && len == 5 && !strcmp(p, "<|x|>"), "an added token's piece is its content");
        p = al_tok_piece(t, 256, &len);
        CHECK(p && len == 2 && !strcmp(p, " a"), "a token's piece is its bytes: '%s'", p ? p : "");
        CHECK(al_tok_score(t, 256) == 0.0f, "a tokenizer.json's scores are 0");
        al_tok_free(t);
    }
    /* At each place from the left the longest token starting there, even when another ends
     * first ("bc" inside "abcd"), and the search goes on after it ("bcd": "bc", not "cd"). New
     * ids: "bc" 257, "abcd" 258, "cd" 259, "xyx" 260, "yxy" 261. */
    const char *overlapping[] = {"bc", "abcd", "cd", "xyx", "yxy"};
    t = made_up(tokens, 1, merges, 1, overlapping, 5, 0, 1, 0);
    if (t) {
        EXPECT_IDS(t, "abcd", 258);
        EXPECT_IDS(t, "abce", 'a', 257, 'e');
        EXPECT_IDS(t, "abcdcd", 258, 259);
        EXPECT_IDS(t, "bcd", 257, 'd');
        EXPECT_IDS(t, "xbcd", 'x', 257, 'd');
        EXPECT_IDS(t, "xyxyx", 260, 'y', 'x');
        EXPECT_IDS(t, "yxyx", 261, 'x');
        EXPECT_IDS(t, "xxyxy", 'x', 260, 'y');
        al_tok_free(t);
    }
    /* add_prefix_space: each section not starting with a space gets one: "a" -> " a"; after an
     * added token too: "<a>a" -> <a> | " a". A section starting with a space gets none. */
    t = made_up(tokens, 1, merges, 1, added, 3, 1, 1, 0);
    if (t) {
        EXPECT_IDS(t, "a", 256);
        EXPECT_IDS(t, "<a>a", 257, 256);
        EXPECT_IDS(t, " a", 256);
        EXPECT_IDS(t, "<a>", 257);
        al_tok_free(t);
    }
    /* use_regex false: a section is one word, so " a" merges across what the pattern splits. */
    const char *tokens2[] = {"a ", "a a"};
    const char *const merges2[][2] = {{"a", " "}, {"a ", "a"}};
    t = made_up(tokens2, 2, merges2, 2, NULL, 0, 0, 0, 0);
    if (t) {
        EXPECT_IDS(t, "a a", 257);
        al_tok_free(t);
    }
    t = made_up(tokens2, 2, merges2, 2, NULL, 0, 0, 1, 0);
    if (t) { /* with the pattern: "a" | " a", no merge applies */
        EXPECT_IDS(t, "a a", 'a', ' ', 'a');
        al_tok_free(t);
    }
}

/* ---- MiniMind's tokenizer.json ------------------------------------------------------------ */

/* Ids of MiniMind's tokenizer, from its tokenizer.json: 0 <|endoftext|>, 1 <|im_start|>,
 * 2 <|im_end|>, 25 <think>, 26 </think>; the byte tokens from 36 ('!') on. */
static void test_minimind_pieces(const al_tokenizer *t) {
    CHECK(al_tok_vocab_size(t) == 6400, "vocab size %lld", (long long)al_tok_vocab_size(t));
    CHECK(al_tok_bos_id(t) == -1 && al_tok_eos_id(t) == -1, "a tokenizer.json has no BOS or EOS");
    size_t len = 0;
    const char *p = al_tok_piece(t, 1, &len);
    CHECK(p && len == 12 && !strcmp(p, "<|im_start|>"), "piece 1: '%s'", p ? p : "");
    p = al_tok_piece(t, 26, &len);
    CHECK(p && !strcmp(p, "</think>"), "piece 26: '%s'", p ? p : "");
    p = al_tok_piece(t, 36, &len);
    CHECK(p && len == 1 && p[0] == '!', "piece 36: '%s'", p ? p : "");
    CHECK(al_tok_piece(t, 6400, NULL) == NULL, "piece 6400");

    int32_t ids[8];
    al_error err = {0};
    CHECK(al_tok_encode(t, "a", 1, 1, 0, ids, 8, &err) == -1 && err.status == AL_ERR_ARG,
          "bos with a tokenizer.json is refused");
    CHECK(al_tok_encode(t, "a", 1, 0, 1, ids, 8, &err) == -1 && err.status == AL_ERR_ARG,
          "eos with a tokenizer.json is refused");
    /* "<|im_start|>user\n你好<|im_end|>\n", as the reference library encodes it. */
    const char chat[] = "<|im_start|>user\n\xE4\xBD\xA0\xE5\xA5\xBD<|im_end|>\n";
    expect_ids(t, chat, sizeof chat - 1, (const int32_t[]){1, 832, 311, 234, 1968, 2, 234}, 7);
    /* A short buffer: AL_ERR_CAPACITY and the buffer untouched. */
    for (int i = 0; i < 8; i++) ids[i] = -7;
    CHECK(al_tok_encode(t, chat, sizeof chat - 1, 0, 0, ids, 6, &err) == -1 && err.status == AL_ERR_CAPACITY &&
              ids[0] == -7 && ids[5] == -7,
          "a short buffer: %s", err.msg);
    CHECK(al_tok_encode(t, "", 0, 0, 0, ids, 0, &err) == 0, "the empty text has no ids");
}

/* decode(encode(x)) == x for any bytes: ByteLevel maps every byte, and the added tokens'
 * pieces are their text. */
static void test_minimind_round_trips(const al_tokenizer *t) {
    static const char *const texts[] = {
        "Once upon a time, there was a little girl named Lily.",
        "\xE4\xBD\xA0\xE5\xA5\xBD\xEF\xBC\x8C\xE4\xB8\x96\xE7\x95\x8C\xEF\xBC\x81", /* 你好，世界！ */
        "emoji \xF0\x9F\x98\x80\xF0\x9F\x8E\x89 \xF0\x9F\x91\x8D\xF0\x9F\x8F\xBD",
        "  a\t\tb\n\n\nc   ", "<|im_start|>system\n<think>\n\n</think>\n\n<|im_end|>",
        "\xFF\xFE not UTF-8 \xC0\x80 \xED\xA0\x80 \xF4\x90\x80\x80 \x80\x80", "I'm don't they'll WE'RE",
        "\xF0\xA0\x80\x80\xF0\x9D\x90\x80 beyond the BMP", "\xEF\xBB\xBF" "BOM and \xC2\x85 NEL",
    };
    for (size_t k = 0; k < sizeof texts / sizeof texts[0]; k++) {
        const char *text = texts[k];
        const size_t len = strlen(text);
        int32_t ids[MAX_IDS];
        al_error err = {0};
        const int64_t n = al_tok_encode(t, text, len, 0, 0, ids, MAX_IDS, &err);
        CHECK(n > 0, "encode of text %zu: %s", k, err.msg);
        char out[MAX_IDS];
        size_t o = 0;
        for (int64_t i = 0; i < n && o < sizeof out; i++) {
            const char *piece = NULL;
            size_t plen = 0;
            CHECK(al_tok_decode(t, i ? ids[i - 1] : -1, ids[i], &piece, &plen, &err) == AL_OK, "decode: %s", err.msg);
            if (!piece || o + plen > sizeof out) break;
            memcpy(out + o, piece, plen);
            o += plen;
        }
        CHECK(o == len && memcmp(out, text, len) == 0, "text %zu does not come back from its ids", k);
    }
    /* A NUL byte too (the byte U+0100 stands for). */
    int32_t ids[4];
    const int64_t n = al_tok_encode(t, "a\0b", 3, 0, 0, ids, 4, NULL);
    size_t len = 9;
    const char *p = n == 3 ? al_tok_piece(t, ids[1], &len) : NULL;
    CHECK(p && len == 1 && p[0] == '\0', "NUL in the text: %lld ids", (long long)n);
}

/* Well-formed UTF-8 (table 3-7), or not. */
static int valid_utf8(const unsigned char *s, size_t n) {
    for (size_t i = 0; i < n;) {
        const unsigned c = s[i];
        size_t k = c < 0x80 ? 1 : c >= 0xC2 && c <= 0xDF ? 2 : c >= 0xE0 && c <= 0xEF ? 3 : c >= 0xF0 && c <= 0xF4 ? 4 : 0;
        if (!k || i + k > n) return 0;
        const unsigned lo = c == 0xE0 ? 0xA0 : c == 0xF0 ? 0x90 : 0x80, hi = c == 0xED ? 0x9F : c == 0xF4 ? 0x8F : 0xBF;
        if (k > 1 && (s[i + 1] < lo || s[i + 1] > hi)) return 0;
        for (size_t j = 2; j < k; j++)
            if (s[i + j] < 0x80 || s[i + j] > 0xBF) return 0;
        i += k;
    }
    return 1;
}

/* The streaming decoder, one id at a time: every piece of output whole UTF-8 characters, no
 * escape, the whole the text. The text has characters MiniMind's vocabulary splits over byte
 * tokens (rare Chinese characters, emoji), checked here to be split. */
static void test_minimind_stream(const al_tokenizer *t) {
    /* 龘 (E9 BE 98), 𠀀 (F0 A0 80 80), 😀, 生僻字 嫑 (E5 AB 91), and common 中文 */
    const char text[] = "\xE4\xB8\xAD\xE6\x96\x87 \xE9\xBE\x98\xF0\xA0\x80\x80\xF0\x9F\x98\x80 \xE5\xAB\x91 "
                        "\xE6\x98\xA5\xE7\x9C\xA0\xE4\xB8\x8D\xE8\xA7\x89\xE6\x99\x93";
    int32_t ids[MAX_IDS];
    al_error err = {0};
    const int64_t n = al_tok_encode(t, text, sizeof text - 1, 0, 0, ids, MAX_IDS, &err);
    CHECK(n > 0, "encode: %s", err.msg);
    int split = 0;
    for (int64_t i = 0; i < n; i++) {
        size_t len = 0;
        const char *p = al_tok_piece(t, ids[i], &len);
        if (p && !valid_utf8((const unsigned char *)p, len)) split = 1;
    }
    CHECK(split, "no character of the text is split over tokens: the test would prove nothing");
    al_tok_stream *s = NULL;
    CHECK(al_tok_stream_create(t, &s, &err) == AL_OK, "stream: %s", err.msg);
    if (!s) return;
    char all[1024], chunk[256];
    size_t o = 0;
    for (int64_t i = 0; i <= n; i++) {
        const int64_t k = i < n ? al_tok_stream_push(s, ids[i], chunk, sizeof chunk, &err)
                                : al_tok_stream_finish(s, chunk, sizeof chunk, &err);
        CHECK(k >= 0, "push %lld: %s", (long long)i, err.msg);
        if (k < 0) break;
        CHECK(valid_utf8((unsigned char *)chunk, (size_t)k) && !memchr(chunk, '\\', (size_t)k),
              "id %lld wrote part of a character, or an escape", (long long)i);
        if (o + (size_t)k <= sizeof all) memcpy(all + o, chunk, (size_t)k);
        o += (size_t)k;
    }
    CHECK(o == sizeof text - 1 && memcmp(all, text, o) == 0, "the stream's text is not the text");
    /* <|im_start|> (id 1) is written: a tokenizer.json has no silent BOS. */
    CHECK(al_tok_stream_push(s, 1, chunk, sizeof chunk, &err) == 12 && !memcmp(chunk, "<|im_start|>", 12),
          "an added token is written as its text");
    al_tok_stream_free(s);
}

/* MiniMind's file cut to its first ids (al_tok_hf_cut): whole, it comes back byte for byte; cut
 * to 292 and 512 it keeps the pieces of those ids and encodes as the reference library encodes
 * with tests/lib/cut-tokenizer.mjs's cut; a size outside [292, 6400] or a cut file is refused
 * with nothing written. */
static void test_minimind_cut(const uint8_t *file, size_t size, const al_tokenizer *full) {
    char *json = NULL;
    size_t len = 0;
    al_error err = {0};
    CHECK(al_tok_hf_cut(file, size, 6400, &json, &len, &err) == AL_OK && len == size && !memcmp(json, file, size),
          "the cut to 6400 is not the file: %s", err.msg);
    al_buffer_free(json);
    static const struct {
        int64_t vocab;
        int32_t chat[16], n_chat, story[16], n_story;
    } cuts[] = {
        {292, {1, 120, 118, 104, 117, 234, 196, 157, 290, 197, 134, 157, 2, 234}, 14,
         {82, 113, 102, 104, 256, 120, 115, 114, 113, 256, 100, 256, 119, 108, 112, 104}, 16},
        {512, {1, 120, 118, 311, 234, 441, 510, 157, 2, 234}, 10, {82, 113, 473, 483, 115, 310, 299, 297, 467, 104}, 10},
    };
    const char chat[] = "<|im_start|>user\n\xE4\xBD\xA0\xE5\xA5\xBD<|im_end|>\n", story[] = "Once upon a time";
    for (int k = 0; k < 2; k++) {
        al_tokenizer *t = NULL;
        CHECK(al_tok_hf_cut(file, size, cuts[k].vocab, &json, &len, &err) == AL_OK &&
                  al_tok_hf_create((const uint8_t *)json, len, cuts[k].vocab, &t, &err) == AL_OK,
              "the cut to %lld: %s", (long long)cuts[k].vocab, err.msg);
        al_buffer_free(json);
        if (!t) continue;
        int same = 1;
        for (int32_t id = 0; id < cuts[k].vocab; id++) {
            size_t la = 0, lb = 0;
            const char *a = al_tok_piece(t, id, &la), *b = al_tok_piece(full, id, &lb);
            same &= a && b && la == lb && !memcmp(a, b, la);
        }
        CHECK(same, "the cut to %lld changes a piece", (long long)cuts[k].vocab);
        expect_ids(t, chat, sizeof chat - 1, cuts[k].chat, cuts[k].n_chat);
        expect_ids(t, story, sizeof story - 1, cuts[k].story, cuts[k].n_story);
        al_tok_free(t);
    }
    json = (char *)&json;
    CHECK(al_tok_hf_cut(file, size, 291, &json, &len, &err) == AL_ERR_ARG && !json && len == 0, "vocab 291: %s", err.msg);
    json = (char *)&json;
    CHECK(al_tok_hf_cut(file, size, 6401, &json, &len, &err) == AL_ERR_ARG && !json && strstr(err.msg, "6400 tokens"),
          "vocab 6401: %s", err.msg);
    json = (char *)&json;
    CHECK(al_tok_hf_cut(file, size / 2, 512, &json, &len, &err) == AL_ERR_FORMAT && !json, "half the file: %s", err.msg);
}

/* 100 KB of a chat line (Chinese, emoji, an added token) repeated: its ids counted; the bench
 * reads the time printed. */
static void test_100kb(const al_tokenizer *t) {
    const char unit[] = "Once upon a time, \xE4\xB8\xAD\xE6\x96\x87 \xF0\x9F\x98\x80 there was a little girl. <|im_end|>\n";
    const size_t n_unit = sizeof unit - 1, reps = 100000 / n_unit + 1;
    char *text = malloc(n_unit * reps);
    if (!text) return;
    for (size_t i = 0; i < reps; i++) memcpy(text + i * n_unit, unit, n_unit);
    const clock_t start = clock();
    const int64_t n = al_tok_encode(t, text, n_unit * reps, 0, 0, NULL, 0, NULL);
    const double ms = 1e3 * (double)(clock() - start) / CLOCKS_PER_SEC;
    CHECK(n > 20000, "100 KB gave %lld ids", (long long)n);
    printf("100 KB (%zu bytes) -> %lld ids in %.1f ms\n", n_unit * reps, (long long)n, ms);
    free(text);
}

/* Every truncation of the file (at a stride) and random byte changes: refused with a message
 * (AL_ERR_FORMAT) or read; what is read encodes and decodes back. */
static void test_mutations(const uint8_t *file, size_t size, int fewer) {
    int read_ok = 0, refused = 0;
    uint8_t *copy = malloc(size);
    if (!copy) return;
    for (size_t cut = 0; cut < size; cut += cut < (fewer ? 512 : 4096) ? 1 : fewer ? 9973 : 997) {
        al_tokenizer *t = NULL;
        al_error err = {0};
        const al_status st = al_tok_hf_create(file, cut, 0, &t, &err);
        CHECK(st == AL_ERR_FORMAT && err.msg[0] && !t, "the file cut at %zu: %s", cut, al_status_str(st));
        refused++;
    }
    uint64_t rng = 0x9E3779B97F4A7C15u;
    for (int trial = 0; trial < (fewer ? 40 : 300); trial++) {
        memcpy(copy, file, size);
        for (int k = 0; k < 1 + trial % 4; k++) {
            rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
            /* A digit becomes another digit, a letter another letter, white space other white
             * space (files that still parse, so the later checks and the reading of what
             * passes get their turn); any other byte anything. */
            uint8_t *at = &copy[(rng >> 16) % size];
            const unsigned r = (unsigned)(rng >> 8);
            *at = *at >= '0' && *at <= '9' ? (uint8_t)('0' + r % 10)
                  : (*at | 0x20) >= 'a' && (*at | 0x20) <= 'z' ? (uint8_t)('a' + r % 26)
                  : *at == ' ' || *at == '\n' ? (uint8_t)" \n\t\r"[r % 4] : (uint8_t)r;
        }
        al_tokenizer *t = NULL;
        al_error err = {0};
        const al_status st = al_tok_hf_create(copy, size, 0, &t, &err);
        CHECK(st == AL_OK || (st == AL_ERR_FORMAT && err.msg[0]), "trial %d: %s %s", trial, al_status_str(st), err.msg);
        if (t) {
            const char text[] = "hello \xE4\xB8\x96\xE7\x95\x8C <|im_start|>";
            int32_t ids[64];
            const int64_t n = al_tok_encode(t, text, sizeof text - 1, 0, 0, ids, 64, &err);
            CHECK(n > 0, "trial %d: a file read cannot encode: %s", trial, err.msg);
            /* Its cut is refused (its added tokens or bytes are no longer MiniMind's) or read. */
            char *json = NULL;
            size_t len = 0;
            al_tokenizer *c = NULL;
            const al_status cs = al_tok_hf_cut(copy, size, 300, &json, &len, &err);
            CHECK(cs == AL_OK ? al_tok_hf_create((const uint8_t *)json, len, 300, &c, &err) == AL_OK
                              : cs == AL_ERR_FORMAT && err.msg[0] && !json,
                  "trial %d: the cut to 300: %s %s", trial, al_status_str(cs), err.msg);
            al_tok_free(c);
            al_buffer_free(json);
            read_ok++;
        } else {
            refused++;
        }
        al_tok_free(t);
    }
    printf("mutations: %d read, %d refused\n", read_ok, refused);
    free(copy);
}

int main(int argc, char **argv) {
    CHECK(argc >= 2, "usage: test_tokenizer_hf tokenizer.json [--fewer]");
    if (argc < 2) return 1;
    const int fewer = argc > 2 && !strcmp(argv[2], "--fewer");
    test_ranks();
    test_split();
    test_added();
    size_t size = 0;
    uint8_t *file = read_file(argv[1], &size);
    al_tokenizer *t = NULL;
    al_error err = {0};
    CHECK(file && al_tok_hf_create(file, size, 6400, &t, &err) == AL_OK, "%s: %s", argv[1], err.msg);
    if (t) {
        test_minimind_pieces(t);
        test_minimind_round_trips(t);
        test_minimind_stream(t);
        test_100kb(t);
        if (file) test_minimind_cut(file, size, t);
    }
    al_tok_free(t);
    if (file) {
        al_tokenizer *t2 = NULL;
        CHECK(al_tok_hf_create(file, size, 6401, &t2, &err) == AL_ERR_FORMAT && !t2, "vocab_size 6401 accepted");
        test_mutations(file, size, fewer);
    }
    free(file);
    CHECK_DONE();
}
