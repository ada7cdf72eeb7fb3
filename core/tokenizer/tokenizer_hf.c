/* tokenizer_hf.c — Hugging Face's tokenizer.json for byte-level BPE as MiniMind's (GPT-2's
 * scheme), read with the project's strict JSON reader and checked whole before anything is
 * kept; then text encoded as the `tokenizers` library encodes it: added tokens found first (the
 * longest at the leftmost place), the rest split by GPT-2's pattern, each piece's bytes taken
 * as ByteLevel's characters and merged by rank (the alphabet and the split: byte_level.c).
 * Decoding maps the characters back to bytes. */
#include "attnlab/tokenizer.h"
#include "tokenizer/byte_level.h"
#include "base/json.h"
#include "tokenizer/tokenizer_impl.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* ---- reading the file ----------------------------------------------------------------------
 * The file is validated once (al_json_validate), then walked with the cursor: each object's
 * members are located first (a name given twice is refused, unknown names are skipped), so the
 * parts can be read in the order they depend on each other: vocabulary, added tokens, merges. */

#define KEY_MAX 64

typedef struct {
    const char *name;
    al_json_cursor at; /* where the value starts */
    int found;
} member;

/* Every problem with the file is AL_ERR_FORMAT. */
#define bad(err, ...) al_fail(err, AL_ERR_FORMAT, __VA_ARGS__)

/* The object at c (named `what` in messages): where each of m[0, n) starts. */
static al_status find_members(al_json_cursor *c, const char *what, member *m, int n, al_error *err) {
    for (int i = 0; i < n; i++) m[i].found = 0;
    if (al_json_peek(c) != JSON_OBJECT || al_json_enter(c) != 0)
        return bad(err, "%s must be an object, not %s", what, al_json_type_name(al_json_peek(c)));
    while (al_json_more(c)) {
        char key[KEY_MAX];
        size_t len;
        int has_nul;
        if (al_json_read_key(c, key, sizeof key - 1, &len, &has_nul) != 0)
            return bad(err, "%s: a key could not be read", what);
        key[len < sizeof key ? len : sizeof key - 1] = '\0'; /* the reader writes no NUL */
        for (int i = 0; len < sizeof key - 1 && !has_nul && i < n; i++) {
            if (strcmp(key, m[i].name) != 0) continue;
            if (m[i].found) return bad(err, "%s has \"%s\" twice", what, key);
            m[i].found = 1;
            m[i].at = *c;
        }
        if (al_json_skip(c) != 0) return bad(err, "%s: the value of \"%s\" could not be read", what, key);
    }
    return AL_OK;
}

/* A member that is absent or null. */
static int is_null(const member *m) {
    al_json_cursor c = m->at;
    return !m->found || al_json_peek(&c) == JSON_NULL;
}

/* A short string value (a type name) into buf, NUL-terminated ("" if it is longer or holds a
 * NUL); -1 if the value is not a string. */
static int read_word(al_json_cursor c, char *buf, size_t cap) {
    size_t len;
    int has_nul;
    if (al_json_read_string(&c, buf, cap - 1, &len, &has_nul) != 0) return -1;
    buf[len < cap && !has_nul ? len : 0] = '\0';
    return 0;
}

/* A member that must be true or false (absent: `absent`). */
static al_status read_flag(const member *m, const char *what, int absent, int *out, al_error *err) {
    al_json_cursor c = m->at;
    *out = absent;
    if (!m->found) return AL_OK;
    if (al_json_read_bool(&c, out) != 0) return bad(err, "%s must be true or false", what);
    return AL_OK;
}

/* What the reading keeps until the handle is built; all freed in build_free. */
typedef struct {
    int32_t n_vocab;
    char *vocab_text;     /* every token as the file writes it, each NUL-terminated */
    tok_entry *by_id;     /* [n_vocab] */
    int32_t *table;       /* [n_table] ids by their text's hash (-1: empty): lookups of merge
                           * halves and added tokens */
    uint32_t n_table;     /* a power of two, at least twice n_vocab */
    int32_t n_added;
    char *added_text;     /* each added token's content, NUL-terminated */
    tok_entry *added;     /* [n_added] in file order */
    int32_t n_new;        /* added tokens outside the vocabulary: ids n_vocab.. */
    int64_t n_merges;
    tok_merge_slot *slots; /* [n_slots] the hash table of the handle, built here */
    uint32_t n_slots;
    int32_t byte_id[256];
    int add_prefix_space, use_regex;
} hf_build;

static void build_free(hf_build *b) {
    free(b->vocab_text);
    free(b->by_id);
    free(b->table);
    free(b->added_text);
    free(b->added);
    free(b->slots);
}

static al_status no_memory(al_error *err, const char *what) {
    return al_fail(err, AL_ERR_NOMEM, "out of memory for the tokenizer's %s", what);
}

/* The slot of the vocabulary token written s[0, n) in the table: its own, or the empty one
 * where it would go. FNV-1a over the bytes; linear probing (the table is at most half full). */
static uint32_t vocab_slot(const hf_build *b, const char *s, size_t n) {
    uint64_t h = 0xCBF29CE484222325u;
    for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 0x100000001B3u;
    uint32_t i = (uint32_t)(h ^ h >> 32) & (b->n_table - 1);
    for (;; i = (i + 1) & (b->n_table - 1)) {
        const int32_t id = b->table[i];
        if (id < 0 || ((size_t)b->by_id[id].len == n && memcmp(b->by_id[id].str, s, n) == 0)) return i;
    }
}

/* The id of the vocabulary token written s[0, n), or -1. */
static int32_t vocab_lookup(const hf_build *b, const char *s, size_t n) {
    return b->table[vocab_slot(b, s, n)];
}

/* model.vocab: {"token": id, ...}, the ids 0..n-1 each once, every token ByteLevel text. Read
 * twice: once to count and measure, once to keep. */
static al_status read_vocab(al_json_cursor c, hf_build *b, al_error *err) {
    char shown[TOK_SHOWN_BUF];
    const al_json_cursor start = c;
    if (al_json_peek(&c) != JSON_OBJECT || al_json_enter(&c) != 0)
        return bad(err, "model.vocab must be an object (token: id)");
    int64_t n = 0;
    size_t text_bytes = 0;
    while (al_json_more(&c)) {
        size_t len;
        int has_nul;
        uint64_t id;
        const char *tok;
        size_t tok_len;
        if (al_json_read_key(&c, NULL, 0, &len, &has_nul) != 0) return bad(err, "model.vocab: a token could not be read");
        if (al_json_read_uint(&c, (uint64_t)INT32_MAX, &id, &tok, &tok_len) != JSON_UINT_OK)
            return bad(err, "model.vocab: the id of entry %" PRId64 " must be a whole number from 0", n);
        if (++n > AL_TOK_MAX_VOCAB)
            return bad(err, "model.vocab holds more than %d tokens, the limit", AL_TOK_MAX_VOCAB);
        text_bytes += len + 1;
    }
    if (n == 0) return bad(err, "model.vocab is empty");
    b->n_vocab = (int32_t)n;
    b->vocab_text = malloc(text_bytes);
    b->by_id = calloc((size_t)n, sizeof *b->by_id);
    b->n_table = 16;
    while (b->n_table < 2 * (uint64_t)n) b->n_table *= 2;
    b->table = malloc(b->n_table * sizeof *b->table);
    if (!b->vocab_text || !b->by_id || !b->table) return no_memory(err, "vocabulary");
    for (uint32_t i = 0; i < b->n_table; i++) b->table[i] = -1;

    c = start;
    al_json_enter(&c);
    char *text = b->vocab_text;
    for (int64_t i = 0; al_json_more(&c); i++) {
        size_t len, tok_len;
        int has_nul;
        uint64_t id;
        const char *tok;
        /* The text was checked above: these reads succeed, and fit what they measured. */
        al_json_read_key(&c, text, text_bytes - (size_t)(text - b->vocab_text), &len, &has_nul);
        al_json_read_uint(&c, (uint64_t)INT32_MAX, &id, &tok, &tok_len);
        text[len] = '\0';
        if (len == 0) return bad(err, "model.vocab: entry %" PRId64 " is the empty string", i);
        if (id >= (uint64_t)n)
            return bad(err, "model.vocab: '%s' has id %" PRIu64 ", outside [0, %" PRId64 ") (the ids must be "
                       "0..n-1, each once)", al_tok_show(shown, (const uint8_t *)text, len), id, n);
        tok_entry *e = &b->by_id[id];
        if (e->str) {
            char shown2[TOK_SHOWN_BUF];
            return bad(err, "model.vocab: '%s' and '%s' both have id %" PRIu64,
                       al_tok_show(shown, (const uint8_t *)e->str, (size_t)e->len),
                       al_tok_show(shown2, (const uint8_t *)text, len), id);
        }
        *e = (tok_entry){text, (int32_t)len, (int32_t)id, 0};
        text += len + 1;
    }
    for (int32_t id = 0; id < b->n_vocab; id++) {
        const tok_entry *e = &b->by_id[id];
        const uint32_t slot = vocab_slot(b, e->str, (size_t)e->len);
        if (b->table[slot] >= 0)
            return bad(err, "model.vocab has '%s' twice (ids %" PRId32 " and %" PRId32 ")",
                       al_tok_show(shown, (const uint8_t *)e->str, (size_t)e->len), b->table[slot], id);
        b->table[slot] = id;
    }
    /* Each token's bytes; a token the ByteLevel alphabet cannot write could never come out of
     * the merges (they start from single bytes) nor decode. */
    for (int32_t id = 0; id < b->n_vocab; id++) {
        const tok_entry *e = &b->by_id[id];
        size_t at = 0;
        const int64_t nb = al_byte_level_decode(e->str, (size_t)e->len, NULL, &at);
        if (nb < 0) {
            char ch[TOK_SHOWN_BUF];
            return bad(err, "model.vocab: token %" PRId32 " ('%s') is not ByteLevel text: '%s' is not one of "
                       "its 256 characters", id, al_tok_show(shown, (const uint8_t *)e->str, (size_t)e->len),
                       al_tok_show(ch, (const uint8_t *)e->str + at,
                                   al_json_utf8_seq_len((const unsigned char *)e->str + at, (size_t)e->len - at)));
        }
        if (nb > AL_TOK_MAX_PIECE)
            return bad(err, "model.vocab: token %" PRId32 " ('%s') stands for %" PRId64 " bytes, above the "
                       "limit of %d", id, al_tok_show(shown, (const uint8_t *)e->str, (size_t)e->len), nb,
                       AL_TOK_MAX_PIECE);
    }
    return AL_OK;
}

/* added_tokens: [{"id": 1, "content": "<|im_start|>", "single_word": false, "lstrip": false,
 * "rstrip": false, "normalized": false, "special": true}, ...]. Read twice, as the vocabulary. */
static al_status read_added(const member *m, hf_build *b, al_error *err) {
    if (!m->found) return AL_OK;
    al_json_cursor c = m->at;
    const al_json_cursor start = c;
    if (al_json_peek(&c) != JSON_ARRAY || al_json_enter(&c) != 0) return bad(err, "added_tokens must be an array");
    int64_t n = 0;
    size_t text_bytes = 0;
    while (al_json_more(&c)) {
        char what[40];
        al_snprintf(what, sizeof what, "added_tokens[%" PRId64 "]", n);
        member f[] = {{"id", {0}, 0}, {"content", {0}, 0}, {"single_word", {0}, 0}, {"lstrip", {0}, 0},
                      {"rstrip", {0}, 0}, {"normalized", {0}, 0}, {"special", {0}, 0}};
        al_status st = find_members(&c, what, f, 7, err);
        if (st != AL_OK) return st;
        uint64_t id;
        const char *tok;
        size_t tok_len, len;
        int has_nul;
        al_json_cursor v = f[0].at;
        if (!f[0].found || al_json_read_uint(&v, (uint64_t)INT32_MAX, &id, &tok, &tok_len) != JSON_UINT_OK)
            return bad(err, "%s: \"id\" must be a whole number from 0", what);
        v = f[1].at;
        if (!f[1].found || al_json_read_string(&v, NULL, 0, &len, &has_nul) != 0)
            return bad(err, "%s: \"content\" must be a string", what);
        for (int k = 2; k < 7; k++) {
            int flag;
            char field[64];
            al_snprintf(field, sizeof field, "%s.%s", what, f[k].name);
            if ((st = read_flag(&f[k], field, 0, &flag, err)) != AL_OK) return st;
            /* lstrip/rstrip eat the white space around the token, single_word matches it only
             * as a whole word: options MiniMind's tokens leave off, not implemented here. */
            if (flag && k <= 4) return bad(err, "%s is true: not supported (only false)", field);
        }
        if (++n > AL_TOK_MAX_VOCAB) return bad(err, "added_tokens holds more than %d tokens, the limit", AL_TOK_MAX_VOCAB);
        text_bytes += len + 1;
    }
    if (n == 0) return AL_OK;
    b->n_added = (int32_t)n;
    b->added_text = malloc(text_bytes);
    b->added = malloc((size_t)n * sizeof *b->added);
    if (!b->added_text || !b->added) return no_memory(err, "added tokens");
    c = start;
    al_json_enter(&c);
    char *text = b->added_text;
    for (int32_t i = 0; al_json_more(&c); i++) {
        member f[] = {{"id", {0}, 0}, {"content", {0}, 0}, {"special", {0}, 0}};
        find_members(&c, "", f, 3, err); /* checked above */
        uint64_t id;
        const char *tok;
        size_t tok_len, len;
        int has_nul, special;
        al_json_read_uint(&f[0].at, (uint64_t)INT32_MAX, &id, &tok, &tok_len);
        al_json_read_string(&f[1].at, text, text_bytes - (size_t)(text - b->added_text), &len, &has_nul);
        read_flag(&f[2], "", 0, &special, err); /* checked above */
        text[len] = '\0';
        b->added[i] = (tok_entry){text, (int32_t)len, (int32_t)id, special};
        text += len + 1;
    }
    return AL_OK;
}

/* Each added token's content non-empty and given once; one in the vocabulary keeps the id it
 * has there (the library gives the vocabulary's text that id), the others take the ids right
 * after the vocabulary's, each once, without gaps. */
static al_status check_added(hf_build *b, al_error *err) {
    char shown[TOK_SHOWN_BUF], shown2[TOK_SHOWN_BUF];
    if (b->n_added == 0) return AL_OK;
    tok_entry *by_text = malloc((size_t)b->n_added * sizeof *by_text);
    int32_t *new_at = malloc((size_t)b->n_added * sizeof *new_at); /* id - n_vocab -> index */
    if (!by_text || !new_at) {
        free(by_text), free(new_at);
        return no_memory(err, "added tokens");
    }
    al_status st = AL_OK;
    for (int32_t i = 0; i < b->n_added; i++) {
        by_text[i] = (tok_entry){b->added[i].str, b->added[i].len, i, 0}; /* id: the index */
        new_at[i] = -1;
    }
    al_sort(by_text, (size_t)b->n_added, sizeof *by_text, al_tok_compare_entries);
    for (int32_t i = 0; st == AL_OK && i < b->n_added; i++) {
        const tok_entry *a = &b->added[i];
        const char *s = al_tok_show(shown, (const uint8_t *)a->str, (size_t)a->len);
        const int32_t in_vocab = vocab_lookup(b, a->str, (size_t)a->len);
        if (a->len == 0) st = bad(err, "added_tokens[%" PRId32 "]: the content is empty", i);
        else if (a->len > AL_TOK_MAX_PIECE)
            st = bad(err, "added_tokens[%" PRId32 "]: the content is %" PRId32 " bytes, above the limit of %d",
                     i, a->len, AL_TOK_MAX_PIECE);
        else if (i > 0 && al_tok_compare_bytes(by_text[i - 1].str, (size_t)by_text[i - 1].len, by_text[i].str,
                                        (size_t)by_text[i].len) == 0)
            st = bad(err, "added_tokens[%" PRId32 "] repeats the content of added_tokens[%" PRId32 "] ('%s')",
                     by_text[i].id, by_text[i - 1].id,
                     al_tok_show(shown2, (const uint8_t *)by_text[i].str, (size_t)by_text[i].len));
        else if (in_vocab >= 0 && in_vocab != a->id)
            st = bad(err, "added_tokens[%" PRId32 "] ('%s') has id %" PRId32 ", but model.vocab gives it id %" PRId32,
                     i, s, a->id, in_vocab);
        else if (in_vocab < 0 && a->id < b->n_vocab)
            st = bad(err, "added_tokens[%" PRId32 "] ('%s') has id %" PRId32 ", which is model.vocab's '%s'", i, s,
                     a->id, al_tok_show(shown2, (const uint8_t *)b->by_id[a->id].str, (size_t)b->by_id[a->id].len));
        else if (in_vocab < 0 && a->id - b->n_vocab >= b->n_added)
            st = bad(err, "added_tokens[%" PRId32 "] ('%s') has id %" PRId32 ": the added tokens outside model.vocab "
                     "take the ids after its %" PRId32 ", without gaps", i, s, a->id, b->n_vocab);
        else if (in_vocab < 0 && new_at[a->id - b->n_vocab] >= 0)
            st = bad(err, "added_tokens[%" PRId32 "] and added_tokens[%" PRId32 "] both have id %" PRId32,
                     new_at[a->id - b->n_vocab], i, a->id);
        else if (in_vocab < 0) {
            new_at[a->id - b->n_vocab] = i;
            b->n_new++;
        }
    }
    /* n_new distinct ids below n_vocab + n_added: those from n_vocab + n_new up must be none. */
    for (int32_t k = b->n_new; st == AL_OK && k < b->n_added; k++)
        if (new_at[k] >= 0)
            st = bad(err, "added_tokens[%" PRId32 "] ('%s') has id %" PRId32 ": the added tokens outside model.vocab "
                     "take the ids after its %" PRId32 ", without gaps", new_at[k],
                     al_tok_show(shown, (const uint8_t *)b->added[new_at[k]].str, (size_t)b->added[new_at[k]].len),
                     b->n_vocab + k, b->n_vocab);
    if (st == AL_OK && (int64_t)b->n_vocab + b->n_new > AL_TOK_MAX_VOCAB)
        st = bad(err, "model.vocab and added_tokens define %" PRId64 " tokens, above the limit of %d",
                 (int64_t)b->n_vocab + b->n_new, AL_TOK_MAX_VOCAB);
    free(by_text);
    free(new_at);
    return st;
}

/* Where the key (a, b) starts probing in a table of n_slots (a power of two): Fibonacci hashing
 * of the two numbers. The merges' table and the added tokens' edges use it. */
static uint32_t pair_hash(int32_t a, int32_t b, uint32_t n_slots) {
    const uint64_t h = ((uint64_t)(uint32_t)a * 0x9E3779B97F4A7C15u) ^ ((uint64_t)(uint32_t)b * 0xC2B2AE3D27D4EB4Fu);
    return (uint32_t)(h >> 32) & (n_slots - 1);
}

/* The slot of the pair (a, b) in the table: its own, or the empty one where it would go (linear
 * probing; the table is at most half full). */
static uint32_t slot_of(const tok_merge_slot *slots, uint32_t n_slots, int32_t a, int32_t b) {
    uint32_t i = pair_hash(a, b, n_slots);
    while (slots[i].a >= 0 && (slots[i].a != a || slots[i].b != b)) i = (i + 1) & (n_slots - 1);
    return i;
}

/* Reads the string at c to (*buf)[at, at + *len), growing *buf; 0, -1 if it is not a string,
 * -2 if memory runs out. */
static int read_grow(al_json_cursor *c, char **buf, size_t *cap, size_t at, size_t *len) {
    al_json_cursor probe = *c;
    int has_nul;
    if (al_json_read_string(&probe, NULL, 0, len, &has_nul) != 0) return -1;
    if (at + *len + 1 > *cap) {
        const size_t want = 2 * (at + *len + 1);
        char *grown = realloc(*buf, want);
        if (!grown) return -2;
        *buf = grown, *cap = want;
    }
    return al_json_read_string(c, *buf + at, *cap - at, len, &has_nul);
}

/* model.merges: [["a", "b"], ...], or ["a b", ...] (the older form: the halves separated by the
 * one space); a merge's rank is its index. Both halves and their concatenation must be tokens
 * of the vocabulary, and no pair may come twice. Builds the handle's hash table. */
static al_status read_merges(al_json_cursor c, hf_build *b, al_error *err) {
    char shown[TOK_SHOWN_BUF], shown2[TOK_SHOWN_BUF];
    const al_json_cursor start = c;
    if (al_json_peek(&c) != JSON_ARRAY || al_json_enter(&c) != 0) return bad(err, "model.merges must be an array");
    int64_t n = 0;
    while (al_json_more(&c)) {
        if (++n > AL_TOK_MAX_VOCAB) return bad(err, "model.merges holds more than %d merges, the limit", AL_TOK_MAX_VOCAB);
        al_json_skip(&c);
    }
    b->n_merges = n;
    b->n_slots = 16;
    while (b->n_slots < 2 * (uint64_t)n) b->n_slots *= 2;
    b->slots = malloc(b->n_slots * sizeof *b->slots);
    if (!b->slots) return no_memory(err, "merges");
    for (uint32_t i = 0; i < b->n_slots; i++) b->slots[i].a = -1;

    char *buf = NULL;
    size_t cap = 0;
    al_status st = AL_OK;
    c = start;
    al_json_enter(&c);
    for (int64_t r = 0; st == AL_OK && al_json_more(&c); r++) {
        size_t la = 0, lb = 0;
        int got;
        if (al_json_peek(&c) == JSON_STRING) {
            got = read_grow(&c, &buf, &cap, 0, &la);
            const char *space = got == 0 ? memchr(buf, ' ', la) : NULL;
            if (got == 0 && (!space || memchr(space + 1, ' ', la - (size_t)(space - buf) - 1))) {
                st = bad(err, "model.merges[%" PRId64 "] ('%s') must be two tokens separated by one space", r,
                         al_tok_show(shown, (const uint8_t *)buf, la));
                break;
            }
            if (got == 0) { /* "a b" -> "ab", a at the front */
                lb = la - (size_t)(space - buf) - 1;
                la = (size_t)(space - buf);
                memmove(buf + la, buf + la + 1, lb);
            }
        } else if (al_json_peek(&c) == JSON_ARRAY && al_json_enter(&c) == 0) {
            got = al_json_more(&c) ? read_grow(&c, &buf, &cap, 0, &la) : -1;
            if (got == 0) got = al_json_more(&c) ? read_grow(&c, &buf, &cap, la, &lb) : -1;
            if (got == 0 && al_json_more(&c)) got = -1;
        } else {
            got = -1;
        }
        if (got == -2) {
            st = no_memory(err, "merges");
            break;
        }
        if (got != 0) {
            st = bad(err, "model.merges[%" PRId64 "] must be a pair of strings or one \"a b\" string", r);
            break;
        }
        const int32_t a = vocab_lookup(b, buf, la), bb = vocab_lookup(b, buf + la, lb);
        const int32_t id = vocab_lookup(b, buf, la + lb);
        if (a < 0 || bb < 0)
            st = bad(err, "model.merges[%" PRId64 "]: '%s' is not in model.vocab", r,
                     a < 0 ? al_tok_show(shown, (const uint8_t *)buf, la)
                           : al_tok_show(shown, (const uint8_t *)buf + la, lb));
        else if (id < 0)
            st = bad(err, "model.merges[%" PRId64 "]: '%s' + '%s' is not in model.vocab", r,
                     al_tok_show(shown, (const uint8_t *)buf, la), al_tok_show(shown2, (const uint8_t *)buf + la, lb));
        else {
            tok_merge_slot *slot = &b->slots[slot_of(b->slots, b->n_slots, a, bb)];
            if (slot->a >= 0)
                st = bad(err, "model.merges[%" PRId64 "] repeats model.merges[%" PRId32 "] ('%s' '%s')", r, slot->rank,
                         al_tok_show(shown, (const uint8_t *)buf, la), al_tok_show(shown2, (const uint8_t *)buf + la, lb));
            else
                *slot = (tok_merge_slot){a, bb, (int32_t)r, id};
        }
    }
    free(buf);
    return st;
}

/* A ByteLevel pre-tokenizer {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets":
 * true, "use_regex": true}, or (as `what` "pre_tokenizer") a Sequence whose one member is one. */
static al_status read_pre_tokenizer(al_json_cursor c, const char *what, hf_build *b, al_error *err) {
    member f[] = {{"type", {0}, 0}, {"add_prefix_space", {0}, 0}, {"trim_offsets", {0}, 0},
                  {"use_regex", {0}, 0}, {"pretokenizers", {0}, 0}};
    al_status st = find_members(&c, what, f, 5, err);
    if (st != AL_OK) return st;
    char type[32], field[64];
    if (!f[0].found || read_word(f[0].at, type, sizeof type) != 0) return bad(err, "%s has no \"type\" string", what);
    if (!strcmp(type, "Sequence") && !strcmp(what, "pre_tokenizer")) {
        al_json_cursor list = f[4].at;
        if (!f[4].found || al_json_peek(&list) != JSON_ARRAY || al_json_enter(&list) != 0 || !al_json_more(&list))
            return bad(err, "pre_tokenizer: a Sequence's \"pretokenizers\" must be an array of one ByteLevel");
        const al_json_cursor only = list;
        al_json_skip(&list);
        if (al_json_more(&list))
            return bad(err, "pre_tokenizer: a Sequence of more than one pre-tokenizer is not supported (only ByteLevel alone)");
        return read_pre_tokenizer(only, "pre_tokenizer.pretokenizers[0]", b, err);
    }
    if (strcmp(type, "ByteLevel") != 0)
        return bad(err, "%s: type '%s' is not supported (only ByteLevel, alone or the one member of a Sequence)",
                   what, type);
    al_snprintf(field, sizeof field, "%s.add_prefix_space", what);
    if (!f[1].found) return bad(err, "%s has no \"add_prefix_space\"", what);
    if ((st = read_flag(&f[1], field, 0, &b->add_prefix_space, err)) != AL_OK) return st;
    int trim;
    al_snprintf(field, sizeof field, "%s.trim_offsets", what);
    if ((st = read_flag(&f[2], field, 0, &trim, err)) != AL_OK) return st; /* offsets only */
    al_snprintf(field, sizeof field, "%s.use_regex", what);
    return read_flag(&f[3], field, 1, &b->use_regex, err);
}

/* A member that must be an object of type `want` (ByteLevel for the decoder and the
 * post-processor; their options concern offsets and decoding spaces no ByteLevel text has). */
static al_status expect_type(const member *m, const char *what, const char *want, al_error *err) {
    al_json_cursor c = m->at;
    member f[] = {{"type", {0}, 0}};
    al_status st = find_members(&c, what, f, 1, err);
    if (st != AL_OK) return st;
    char type[32];
    if (!f[0].found || read_word(f[0].at, type, sizeof type) != 0) return bad(err, "%s has no \"type\" string", what);
    if (strcmp(type, want) != 0) return bad(err, "%s: type '%s' is not supported (only %s)", what, type, want);
    return AL_OK;
}

/* model: {"type": "BPE", "dropout": null, "unk_token": null, "continuing_subword_prefix": null,
 * "end_of_word_suffix": null, "fuse_unk": false, "byte_fallback": false, "ignore_merges":
 * false, "vocab": {...}, "merges": [...]}. */
enum { M_TYPE, M_VOCAB, M_MERGES, M_DROPOUT, M_UNK, M_PREFIX, M_SUFFIX, M_FUSE, M_FALLBACK, M_IGNORE, M_COUNT };

static al_status read_model(const member *model, const member *added, hf_build *b, al_error *err) {
    member f[M_COUNT] = {{"type", {0}, 0}, {"vocab", {0}, 0}, {"merges", {0}, 0}, {"dropout", {0}, 0},
                         {"unk_token", {0}, 0}, {"continuing_subword_prefix", {0}, 0},
                         {"end_of_word_suffix", {0}, 0}, {"fuse_unk", {0}, 0}, {"byte_fallback", {0}, 0},
                         {"ignore_merges", {0}, 0}};
    if (!model->found) return bad(err, "there is no \"model\"");
    al_json_cursor c = model->at;
    al_status st = find_members(&c, "model", f, M_COUNT, err);
    if (st != AL_OK) return st;
    char type[32];
    if (!f[M_TYPE].found || read_word(f[M_TYPE].at, type, sizeof type) != 0)
        return bad(err, "model has no \"type\" string");
    if (strcmp(type, "BPE") != 0) return bad(err, "model: type '%s' is not supported (only BPE)", type);
    if (!is_null(&f[M_DROPOUT])) return bad(err, "model.dropout is set: not supported (only null)");
    for (int k = M_PREFIX; k <= M_SUFFIX; k++) { /* null or "" */
        al_json_cursor v = f[k].at;
        size_t len;
        int has_nul;
        if (!is_null(&f[k]) && (al_json_read_string(&v, NULL, 0, &len, &has_nul) != 0 || len > 0))
            return bad(err, "model.%s is set: not supported (only null)", f[k].name);
    }
    int flag;
    if ((st = read_flag(&f[M_FUSE], "model.fuse_unk", 0, &flag, err)) != AL_OK) return st;
    if ((st = read_flag(&f[M_FALLBACK], "model.byte_fallback", 0, &flag, err)) != AL_OK) return st;
    if (flag) return bad(err, "model.byte_fallback is true: not supported (ByteLevel has a token for every byte)");
    if ((st = read_flag(&f[M_IGNORE], "model.ignore_merges", 0, &flag, err)) != AL_OK) return st;
    if (flag) return bad(err, "model.ignore_merges is true: not supported (only false)");
    if (!f[M_VOCAB].found) return bad(err, "model has no \"vocab\"");
    if (!f[M_MERGES].found) return bad(err, "model has no \"merges\"");

    if ((st = read_vocab(f[M_VOCAB].at, b, err)) != AL_OK) return st;
    /* Every byte alone must be a token: the merges start from them. */
    for (int byte = 0; byte < 256; byte++) {
        char ch[2];
        const size_t n = al_byte_level_utf8((unsigned)byte, ch);
        if ((b->byte_id[byte] = vocab_lookup(b, ch, n)) < 0)
            return bad(err, "model.vocab has no token for the byte 0x%02X ('%.*s'): ByteLevel BPE needs one for "
                       "each of the 256", (unsigned)byte, (int)n, ch);
    }
    if (!is_null(&f[M_UNK])) {
        char *unk = NULL;
        size_t cap = 0, len = 0;
        al_json_cursor u = f[M_UNK].at;
        const int got = read_grow(&u, &unk, &cap, 0, &len);
        const int32_t id = got == 0 ? vocab_lookup(b, unk, len) : -1;
        char shown[TOK_SHOWN_BUF];
        if (got == -2) st = no_memory(err, "unk_token");
        else if (got != 0) st = bad(err, "model.unk_token must be a string or null");
        else if (id < 0) st = bad(err, "model.unk_token '%s' is not in model.vocab", al_tok_show(shown, (const uint8_t *)unk, len));
        free(unk);
        if (st != AL_OK) return st;
    }
    if ((st = read_added(added, b, err)) != AL_OK || (st = check_added(b, err)) != AL_OK) return st;
    return read_merges(f[M_MERGES].at, b, err);
}

enum { T_ADDED, T_NORMALIZER, T_PRE, T_POST, T_DECODER, T_MODEL, T_TRUNCATION, T_PADDING, T_COUNT };

static al_status read_file(const uint8_t *bytes, size_t size, hf_build *b, al_error *err) {
    char why[160];
    if (al_json_validate((const char *)bytes, size, why, sizeof why) != 0)
        return bad(err, "not valid JSON: %s", why);
    al_json_cursor c;
    al_json_cursor_init(&c, (const char *)bytes, size);
    member f[T_COUNT] = {{"added_tokens", {0}, 0}, {"normalizer", {0}, 0}, {"pre_tokenizer", {0}, 0},
                         {"post_processor", {0}, 0}, {"decoder", {0}, 0}, {"model", {0}, 0},
                         {"truncation", {0}, 0}, {"padding", {0}, 0}};
    al_status st = find_members(&c, "the file", f, T_COUNT, err);
    if (st != AL_OK) return st;
    if (!is_null(&f[T_NORMALIZER])) return bad(err, "normalizer is set: not supported (only null, as MiniMind's)");
    if (!is_null(&f[T_TRUNCATION])) return bad(err, "truncation is set: not supported (only null)");
    if (!is_null(&f[T_PADDING])) return bad(err, "padding is set: not supported (only null)");
    if (!f[T_PRE].found || is_null(&f[T_PRE])) return bad(err, "there is no pre_tokenizer (ByteLevel is needed)");
    if ((st = read_pre_tokenizer(f[T_PRE].at, "pre_tokenizer", b, err)) != AL_OK) return st;
    if (!f[T_DECODER].found || is_null(&f[T_DECODER])) return bad(err, "there is no decoder (ByteLevel is needed)");
    if ((st = expect_type(&f[T_DECODER], "decoder", "ByteLevel", err)) != AL_OK) return st;
    if (!is_null(&f[T_POST]) && (st = expect_type(&f[T_POST], "post_processor", "ByteLevel", err)) != AL_OK) return st;
    return read_model(&f[T_MODEL], &f[T_ADDED], b, err);
}

/* ---- finding the added tokens --------------------------------------------------------------
 * The library cuts the text at its added tokens before anything else: from the left, the
 * longest added token that starts at a place is taken and the search goes on after it; where
 * none starts, one place on (its DictionarySplitter; the Rust library's aho-corasick with
 * LeftmostLongest). So what the cut needs is, for each place i, the longest added token that
 * starts there. Trying every token at every place costs text x tokens; walking a trie of them
 * from every place, text x the longest token. Instead one pass reads the text backwards through
 * an Aho-Corasick automaton of the contents written backwards: having read s[len-1] .. s[i], it
 * stands at the longest suffix of those bytes that is a node (a prefix of some reversed
 * content), and a reversed content that is a suffix of them is a content that starts at i; the
 * longest of those is the node's `match`. Each byte moves one node deeper at most and each
 * failure link one shallower, so the pass costs O(len) whatever the tokens; the automaton has
 * a node per byte of the contents at most, and is built once, in O(those bytes). */

/* The node the edge from `from` on `byte` leads to, or -1. */
static int32_t edge_to(const al_tokenizer *t, int32_t from, uint8_t byte) {
    for (uint32_t i = pair_hash(from, byte, t->n_edge_slots);; i = (i + 1) & (t->n_edge_slots - 1)) {
        const tok_edge_slot *e = &t->edges[i];
        if (e->from < 0) return -1;
        if (e->from == from && e->byte == byte) return e->to;
    }
}

/* The automaton's step: from node u on byte c, following failure links until an edge on c. */
static int32_t next_node(const al_tokenizer *t, int32_t u, uint8_t c) {
    int32_t v;
    while ((v = edge_to(t, u, c)) < 0 && u > 0) u = t->fail[u];
    return v < 0 ? 0 : v;
}

/* Builds t's automaton from t->added[0, n_added), into t->edges, fail and match, which hold
 * n_nodes (1 + the contents' bytes) and n_edge_slots entries. -1 if memory runs out. */
static int build_matcher(al_tokenizer *t) {
    /* 1. The trie of the reversed contents; the match of a node a content ends at is its token.
     *    Each node's parent, byte and depth are kept for step 3. */
    int32_t *parent = malloc((size_t)t->n_nodes * sizeof *parent);
    int32_t *depth = malloc((size_t)t->n_nodes * sizeof *depth);
    int32_t *order = malloc((size_t)t->n_nodes * sizeof *order);
    uint8_t *byte = malloc((size_t)t->n_nodes);
    int32_t *count = calloc(AL_TOK_MAX_PIECE + 2, sizeof *count);
    if (!parent || !depth || !order || !byte || !count) {
        free(parent), free(depth), free(order), free(byte), free(count);
        return -1;
    }
    for (uint32_t i = 0; i < t->n_edge_slots; i++) t->edges[i].from = -1;
    int32_t n = 1;
    t->match[0] = -1, t->fail[0] = 0, depth[0] = 0;
    for (int32_t k = 0; k < t->n_added; k++) {
        const tok_entry *a = &t->added[k];
        int32_t u = 0;
        for (int32_t j = a->len - 1; j >= 0; j--) {
            const uint8_t c = (uint8_t)a->str[j];
            int32_t v = edge_to(t, u, c);
            if (v < 0) {
                uint32_t i = pair_hash(u, c, t->n_edge_slots);
                while (t->edges[i].from >= 0) i = (i + 1) & (t->n_edge_slots - 1);
                v = n++;
                t->edges[i] = (tok_edge_slot){u, v, c};
                parent[v] = u, byte[v] = c, depth[v] = depth[u] + 1, t->match[v] = -1;
            }
            u = v;
        }
        t->match[u] = a->id; /* the contents differ (check_added), so one token per node */
    }
    /* 2. The nodes by depth (a counting sort: depths are at most AL_TOK_MAX_PIECE). */
    for (int32_t v = 0; v < n; v++) count[depth[v] + 1]++;
    for (int d = 1; d <= AL_TOK_MAX_PIECE + 1; d++) count[d] += count[d - 1];
    for (int32_t v = 0; v < n; v++) order[count[depth[v]]++] = v;
    /* 3. Shallower nodes first, so a failure link and the nodes it reaches are done: the link of
     *    a child of the root is the root; of v = parent p then byte c, the step on c from p's
     *    link. A node no content ends at matches what its link matches. */
    for (int32_t k = 1; k < n; k++) {
        const int32_t v = order[k], p = parent[v];
        t->fail[v] = p == 0 ? 0 : next_node(t, t->fail[p], byte[v]);
        if (t->match[v] < 0) t->match[v] = t->match[t->fail[v]];
    }
    t->n_nodes = n;
    free(parent), free(depth), free(order), free(byte), free(count);
    return 0;
}

/* ---- the handle --------------------------------------------------------------------------- */

static uint64_t align8(uint64_t n) { return (n + 7) & ~(uint64_t)7; }

static al_status build_handle(const hf_build *b, int64_t vocab_size, al_tokenizer **out, al_error *err) {
    const int32_t n = b->n_vocab + b->n_new;
    if (vocab_size != 0 && vocab_size != n)
        return bad(err, "the file defines %" PRId32 " tokens (model.vocab and added_tokens) but the vocabulary "
                   "size is %" PRId64, n, vocab_size);
    /* Each id's piece: an added token's content, else its vocabulary text decoded. */
    int32_t *added_of = malloc((size_t)n * sizeof *added_of);
    if (!added_of) return no_memory(err, "pieces");
    for (int32_t id = 0; id < n; id++) added_of[id] = -1;
    for (int32_t i = 0; i < b->n_added; i++) added_of[b->added[i].id] = i;
    uint64_t piece_bytes = 0, added_bytes = 0;
    for (int32_t i = 0; i < b->n_added; i++) added_bytes += (uint64_t)b->added[i].len;
    /* The automaton's nodes are int32 ids, its table's slots a uint32 count (2^31 at most). */
    if (added_bytes > (uint64_t)AL_TOK_MAX_ADDED_BYTES) {
        free(added_of);
        return al_fail(err, AL_ERR_LIMIT, "the added tokens' contents are %" PRIu64 " bytes together, above the "
                       "limit of %" PRId64, added_bytes, AL_TOK_MAX_ADDED_BYTES);
    }
    uint32_t n_edge_slots = 16;
    while (n_edge_slots < 2 * added_bytes) n_edge_slots *= 2;
    const uint64_t n_nodes = 1 + added_bytes;
    for (int32_t id = 0; id < n; id++) {
        size_t at;
        piece_bytes += 1 + (uint64_t)(added_of[id] >= 0 ? b->added[added_of[id]].len
                                                         : al_byte_level_decode(b->by_id[id].str, (size_t)b->by_id[id].len, NULL, &at));
    }
    /* The counts are below 2^31 (the added bytes too): in 64 bits nothing overflows, and only a
     * 32-bit size_t can be too small. */
    const uint64_t at_piece = align8(sizeof(al_tokenizer));
    const uint64_t at_len = at_piece + align8((uint64_t)n * sizeof(char *));
    const uint64_t at_slots = at_len + align8((uint64_t)n * sizeof(int32_t));
    const uint64_t at_added = at_slots + align8((uint64_t)b->n_slots * sizeof(tok_merge_slot));
    const uint64_t at_edges = at_added + align8((uint64_t)b->n_added * sizeof(tok_entry));
    const uint64_t at_fail = at_edges + align8((uint64_t)n_edge_slots * sizeof(tok_edge_slot));
    const uint64_t at_match = at_fail + align8(n_nodes * sizeof(int32_t));
    const uint64_t at_text = at_match + align8(n_nodes * sizeof(int32_t));
    if (at_text + piece_bytes > SIZE_MAX / 2) {
        free(added_of);
        return al_fail(err, AL_ERR_LIMIT, "a tokenizer of %" PRId32 " tokens does not fit in memory", n);
    }
    char *block = malloc((size_t)(at_text + piece_bytes));
    if (!block) {
        free(added_of);
        return no_memory(err, "tokens");
    }
    al_tokenizer *t = (al_tokenizer *)block;
    memset(t, 0, sizeof *t);
    t->kind = TOK_HF;
    t->vocab_size = n;
    t->bos = t->eos = -1;
    t->piece = (const char **)(block + at_piece);
    t->len = (int32_t *)(block + at_len);
    t->merges = (tok_merge_slot *)(block + at_slots);
    t->n_slots = b->n_slots;
    t->added = (tok_entry *)(block + at_added);
    t->n_added = b->n_added;
    t->n_nodes = (int32_t)n_nodes;
    t->edges = (tok_edge_slot *)(block + at_edges);
    t->n_edge_slots = n_edge_slots;
    t->fail = (int32_t *)(block + at_fail);
    t->match = (int32_t *)(block + at_match);
    t->add_prefix_space = b->add_prefix_space;
    t->use_regex = b->use_regex;
    memcpy(t->byte_id, b->byte_id, sizeof t->byte_id);
    memcpy(t->merges, b->slots, (size_t)b->n_slots * sizeof *t->merges);
    char *text = block + at_text;
    for (int32_t id = 0; id < n; id++) {
        size_t at, len;
        if (added_of[id] >= 0) {
            len = (size_t)b->added[added_of[id]].len;
            memcpy(text, b->added[added_of[id]].str, len);
            t->added[added_of[id]] = (tok_entry){text, (int32_t)len, id, b->added[added_of[id]].special};
        } else {
            len = (size_t)al_byte_level_decode(b->by_id[id].str, (size_t)b->by_id[id].len, text, &at);
        }
        text[len] = '\0';
        t->piece[id] = text;
        t->len[id] = (int32_t)len;
        if ((int32_t)len > t->longest) t->longest = (int32_t)len;
        text += len + 1;
    }
    free(added_of);
    if (build_matcher(t) != 0) {
        free(block);
        return no_memory(err, "added tokens");
    }
    *out = t;
    return AL_OK;
}

al_status al_tok_hf_create(const uint8_t *bytes, size_t size, int64_t vocab_size, al_tokenizer **out,
                           al_error *err) {
    if (out) *out = NULL;
    if (!out || (!bytes && size > 0)) return al_fail(err, AL_ERR_ARG, "al_tok_hf_create: out or bytes is NULL");
    if (vocab_size < 0 || vocab_size > AL_TOK_MAX_VOCAB)
        return al_fail(err, AL_ERR_ARG, "vocab_size %" PRId64 " is outside [0, %d] (0: as many tokens as the file "
                       "defines)", vocab_size, AL_TOK_MAX_VOCAB);
    hf_build b;
    memset(&b, 0, sizeof b);
    al_status st = read_file(bytes, size, &b, err);
    if (st == AL_OK) st = build_handle(&b, vocab_size, out, err);
    build_free(&b);
    if (st == AL_OK) al_ok(err);
    return st;
}

/* ---- encoding ----------------------------------------------------------------------------- */

/* A pair merges if the file lists it: the lower its rank, the higher its gain (exact in a float:
 * ranks are below 2^24). */
static int32_t merge_by_rank(const void *ctx, int32_t a, int32_t b, float *gain) {
    const al_tokenizer *t = ctx;
    const tok_merge_slot *slot = &t->merges[slot_of(t->merges, t->n_slots, a, b)];
    if (slot->a < 0) return -1;
    *gain = -(float)slot->rank;
    return slot->id;
}

typedef struct {
    const al_tokenizer *t;
    int32_t *out;      /* the ids so far */
    int64_t count;
    void *scratch;     /* the merge loop's, for cap tokens */
    int32_t cap;
} hf_encoder;

/* A word's bytes as ByteLevel's single-byte tokens, merged by rank. */
static int encode_word(hf_encoder *e, const unsigned char *w, size_t n) {
    if ((int64_t)n > e->cap) {
        const int32_t want = (int32_t)(n > 2 * (size_t)e->cap ? n : 2 * (size_t)e->cap);
        free(e->scratch);
        e->cap = 0;
        if (!(e->scratch = malloc(al_tok_merge_scratch(want)))) return -1;
        e->cap = want;
    }
    int32_t *ids = e->out + e->count;
    for (size_t k = 0; k < n; k++) ids[k] = e->t->byte_id[w[k]];
    e->count += al_tok_merge(ids, (int32_t)n, merge_by_rank, e->t, e->scratch);
    return 0;
}

/* Text between added tokens: the pre-tokenizer's words, each merged. */
static int encode_section(hf_encoder *e, const unsigned char *s, size_t n, unsigned char *work) {
    if (e->t->add_prefix_space && s[0] != ' ') { /* the library prepends a space to the section */
        work[0] = ' ';
        memcpy(work + 1, s, n);
        s = work, n++;
    }
    if (!e->t->use_regex) return encode_word(e, s, n);
    for (size_t i = 0; i < n;) {
        const size_t j = al_byte_level_word_end(s, n, i);
        if (encode_word(e, s + i, j - i) != 0) return -1;
        i = j;
    }
    return 0;
}

/* One id per byte at most, plus one for the space each section may get. */
int64_t al_tok_hf_encode_bound(size_t len) { return 2 * (int64_t)len + 2; }

int64_t al_tok_hf_encode_ids(const al_tokenizer *t, const char *text, size_t len, int32_t *out, al_error *err) {
    const unsigned char *s = (const unsigned char *)text;
    hf_encoder e = {t, out, 0, NULL, 0};
    unsigned char *work = t->add_prefix_space ? malloc(len + 1) : NULL;
    /* 1. The longest added token starting at each place, or -1 ("finding the added tokens"). */
    int32_t *starts = t->n_added > 0 ? malloc((len ? len : 1) * sizeof *starts) : NULL;
    int failed = (t->add_prefix_space && !work) || (t->n_added > 0 && !starts);
    int32_t node = 0;
    for (size_t i = len; starts && !failed && i-- > 0;) {
        node = next_node(t, node, s[i]);
        starts[i] = t->match[node];
    }
    /* 2. From the left: the text up to the next place a token starts, then that token. */
    for (size_t pos = 0; !failed && pos < len;) {
        size_t at = pos;
        while (at < len && (!starts || starts[at] < 0)) at++;
        if (at > pos && encode_section(&e, s + pos, at - pos, work) != 0) failed = 1;
        if (at == len) break;
        e.out[e.count++] = starts[at];
        pos = at + (size_t)t->len[starts[at]];
    }
    free(starts);
    free(work);
    free(e.scratch);
    if (failed) {
        al_fail(err, AL_ERR_NOMEM, "out of memory encoding %zu bytes of text", len);
        return -1;
    }
    return e.count;
}
