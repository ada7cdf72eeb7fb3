/* tokenizer_train.c — a byte-level BPE tokenizer trained as MiniMind's train_tokenizer.py has
 * Hugging Face's BpeTrainer train one (the steps and the tie rule: al_tok_train_bpe in
 * tokenizer.h), written as a tokenizer.json laid out as MiniMind's. The words come from the
 * same split as encoding (byte_level.c). Each pair of tokens keeps its count and the list of
 * words it occurs in, and a heap orders the pairs: a merge rewrites only the words on its
 * pair's list, and only the counts of the pairs around each merge change. The file is written
 * by tokenizer_json_write.c. */
#include "attnlab/tokenizer.h"
#include "base/internal.h"
#include "tokenizer/byte_level.h"
#include "base/json.h"
#include "tokenizer/tokenizer_json_write.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* ---- the state of one training ------------------------------------------------------------- */

typedef struct {
    int32_t a, b;     /* left and right token ids */
    int64_t count;    /* occurrences, each word's weighted by its count */
    int32_t heap_at;  /* its place in the heap, -1 if not there */
    int32_t done;     /* merged: never counted or queued again */
    int32_t *words;   /* [n_words] words it occurs in (or did: a word may no longer have it) */
    int32_t n_words, cap_words;
} pair_entry;

typedef struct {
    int64_t at;     /* where it starts in the text */
    int64_t count;  /* how often it occurs */
    uint64_t hash;
    int32_t len;    /* bytes */
} word_entry;

typedef struct {
    int64_t at;     /* where its bytes start in the pool */
    int32_t len;
} token_entry;

typedef struct {
    const unsigned char *text;
    /* distinct words */
    word_entry *words;    /* [n_words] */
    int32_t n_words, cap_words;
    int32_t *word_table;  /* [n_word_table] word by hash (-1: empty) */
    uint32_t n_word_table;
    /* each word's tokens as they are now, all in one array: word w's are
     * sym[sym_at[w] .. sym_at[w] + sym_n[w]), fewer after each merge in it */
    int32_t *sym;         /* [the words' bytes] */
    int64_t *sym_at;      /* [n_words] */
    int32_t *sym_n;       /* [n_words] */
    /* tokens: their bytes in one pool */
    unsigned char *tok_bytes;
    int64_t n_tok_bytes, cap_tok_bytes;
    token_entry *tok;     /* [n_tok] */
    int32_t n_tok, cap_tok;
    int32_t *tok_table;   /* [n_tok_table] token by its bytes' hash (-1: empty) */
    uint32_t n_tok_table;
    /* pairs */
    pair_entry *pairs;    /* [n_pairs] every pair ever seen */
    int32_t n_pairs, cap_pairs;
    int32_t *pair_table;  /* [n_pair_table] pair by (a, b) (-1: empty) */
    uint32_t n_pair_table;
    int32_t *heap;        /* [n_heap] pair indices, the most frequent first */
    int32_t n_heap, cap_heap;
    int32_t (*merges)[2]; /* [n_merges] a and b, in order */
    int32_t n_merges, cap_merges;
    int failed;           /* memory ran out */
} trainer;

static void trainer_free(trainer *t) {
    free(t->words), free(t->word_table);
    free(t->sym), free(t->sym_at), free(t->sym_n);
    free(t->tok_bytes), free(t->tok), free(t->tok_table);
    for (int32_t i = 0; i < t->n_pairs; i++) free(t->pairs[i].words);
    free(t->pairs), free(t->pair_table), free(t->heap), free(t->merges);
}

/* Grows *p (of *cap elements of `size` bytes) to hold `need`; 0, or -1 (and t->failed) if
 * memory runs out. The counts stay below 2^31: the corpus is at most AL_TOK_MAX_CORPUS. */
static int grow(trainer *t, void **p, int32_t *cap, int64_t need, size_t size) {
    if (need <= *cap) return 0;
    int64_t want = *cap ? 2 * (int64_t)*cap : 16;
    while (want < need) want *= 2;
    if (want > INT32_MAX) want = INT32_MAX;
    void *q = want >= need ? realloc(*p, (size_t)want * size) : NULL;
    if (!q) {
        t->failed = 1;
        return -1;
    }
    *p = q, *cap = (int32_t)want;
    return 0;
}

/* FNV-1a over the bytes. */
static uint64_t hash_bytes(const unsigned char *s, size_t n) {
    uint64_t h = 0xCBF29CE484222325u;
    for (size_t i = 0; i < n; i++) h = (h ^ s[i]) * 0x100000001B3u;
    return h ^ h >> 32;
}

/* A table of n (a power of two) empty slots; NULL if memory runs out. */
static int32_t *empty_table(uint32_t n) {
    int32_t *table = malloc((size_t)n * sizeof *table);
    if (table) memset(table, 0xFF, (size_t)n * sizeof *table); /* -1 */
    return table;
}

/* ---- words: the corpus split, each distinct word once with its count ------------------------ */

static uint32_t word_slot(const trainer *t, const unsigned char *s, size_t n, uint64_t h) {
    uint32_t i = (uint32_t)h & (t->n_word_table - 1);
    for (;; i = (i + 1) & (t->n_word_table - 1)) {
        const int32_t w = t->word_table[i];
        if (w < 0 || (t->words[w].hash == h && (size_t)t->words[w].len == n &&
                      memcmp(t->text + t->words[w].at, s, n) == 0))
            return i;
    }
}

/* Doubles the word table, at most half full. */
static int grow_word_table(trainer *t) {
    const uint32_t n = t->n_word_table ? 2 * t->n_word_table : 1024;
    int32_t *table = empty_table(n);
    if (!table) return t->failed = 1, -1;
    free(t->word_table);
    t->word_table = table, t->n_word_table = n;
    for (int32_t w = 0; w < t->n_words; w++) {
        uint32_t i = (uint32_t)t->words[w].hash & (n - 1);
        while (table[i] >= 0) i = (i + 1) & (n - 1);
        table[i] = w;
    }
    return 0;
}

static int add_word(trainer *t, int64_t at, size_t n) {
    if (2 * ((uint64_t)t->n_words + 1) > t->n_word_table && grow_word_table(t) != 0) return -1;
    const uint64_t h = hash_bytes(t->text + at, n);
    const uint32_t slot = word_slot(t, t->text + at, n, h);
    if (t->word_table[slot] >= 0) {
        t->words[t->word_table[slot]].count++;
        return 0;
    }
    if (grow(t, (void **)&t->words, &t->cap_words, (int64_t)t->n_words + 1, sizeof *t->words) != 0) return -1;
    const int32_t w = t->n_words++;
    t->words[w] = (word_entry){at, 1, h, (int32_t)n};
    t->word_table[slot] = w;
    return 0;
}

/* ---- tokens: ids, bytes, and the id of a token by its bytes -------------------------------- */

static uint32_t tok_slot(const trainer *t, const unsigned char *s, size_t n) {
    uint32_t i = (uint32_t)hash_bytes(s, n) & (t->n_tok_table - 1);
    for (;; i = (i + 1) & (t->n_tok_table - 1)) {
        const int32_t id = t->tok_table[i];
        if (id < 0 || ((size_t)t->tok[id].len == n && memcmp(t->tok_bytes + t->tok[id].at, s, n) == 0)) return i;
    }
}

/* The id of the token standing for s[0, n) (not inside the pool): its own, or a new one; -1 if
 * memory runs out. */
static int32_t token_id(trainer *t, const unsigned char *s, size_t n) {
    if (2 * ((uint64_t)t->n_tok + 1) > t->n_tok_table) {
        const uint32_t size = t->n_tok_table ? 2 * t->n_tok_table : 1024;
        int32_t *table = empty_table(size);
        if (!table) return t->failed = 1, -1;
        free(t->tok_table);
        t->tok_table = table, t->n_tok_table = size;
        for (int32_t id = 0; id < t->n_tok; id++)
            table[tok_slot(t, t->tok_bytes + t->tok[id].at, (size_t)t->tok[id].len)] = id;
    }
    const uint32_t slot = tok_slot(t, s, n);
    if (t->tok_table[slot] >= 0) return t->tok_table[slot];
    if (grow(t, (void **)&t->tok, &t->cap_tok, (int64_t)t->n_tok + 1, sizeof *t->tok) != 0) return -1;
    if (t->n_tok_bytes + (int64_t)n > t->cap_tok_bytes) {
        int64_t want = t->cap_tok_bytes ? 2 * t->cap_tok_bytes : 4096;
        while (want < t->n_tok_bytes + (int64_t)n) want *= 2;
        unsigned char *bytes = realloc(t->tok_bytes, (size_t)want);
        if (!bytes) return t->failed = 1, -1;
        t->tok_bytes = bytes, t->cap_tok_bytes = want;
    }
    memcpy(t->tok_bytes + t->n_tok_bytes, s, n);
    const int32_t id = t->n_tok++;
    t->tok[id] = (token_entry){t->n_tok_bytes, (int32_t)n};
    t->n_tok_bytes += (int64_t)n;
    t->tok_table[slot] = id;
    return id;
}

/* ---- pairs: counts, word lists, the heap ---------------------------------------------------- */

static uint32_t pair_slot(const trainer *t, int32_t a, int32_t b) {
    const uint64_t h = ((uint64_t)(uint32_t)a * 0x9E3779B97F4A7C15u) ^ ((uint64_t)(uint32_t)b * 0xC2B2AE3D27D4EB4Fu);
    uint32_t i = (uint32_t)(h >> 32) & (t->n_pair_table - 1);
    for (;; i = (i + 1) & (t->n_pair_table - 1)) {
        const int32_t p = t->pair_table[i];
        if (p < 0 || (t->pairs[p].a == a && t->pairs[p].b == b)) return i;
    }
}

/* The pair (a, b): its own entry, or a new one with count 0. -1 if memory runs out. */
static int32_t pair_of(trainer *t, int32_t a, int32_t b) {
    if (2 * ((uint64_t)t->n_pairs + 1) > t->n_pair_table) {
        const uint32_t n = t->n_pair_table ? 2 * t->n_pair_table : 4096;
        int32_t *table = empty_table(n);
        if (!table) return t->failed = 1, -1;
        free(t->pair_table);
        t->pair_table = table, t->n_pair_table = n;
        for (int32_t p = 0; p < t->n_pairs; p++) table[pair_slot(t, t->pairs[p].a, t->pairs[p].b)] = p;
    }
    const uint32_t slot = pair_slot(t, a, b);
    if (t->pair_table[slot] >= 0) return t->pair_table[slot];
    if (grow(t, (void **)&t->pairs, &t->cap_pairs, (int64_t)t->n_pairs + 1, sizeof *t->pairs) != 0) return -1;
    const int32_t p = t->n_pairs++;
    t->pairs[p] = (pair_entry){a, b, 0, -1, 0, NULL, 0, 0};
    t->pair_table[slot] = p;
    return p;
}

/* Heap order: the higher count first; on equal counts the lower (a, b), as BpeTrainer's. */
static int before(const trainer *t, int32_t p, int32_t q) {
    const pair_entry *x = &t->pairs[p], *y = &t->pairs[q];
    if (x->count != y->count) return x->count > y->count;
    if (x->a != y->a) return x->a < y->a;
    return x->b < y->b;
}

static void heap_put(trainer *t, int32_t at, int32_t p) {
    t->heap[at] = p;
    t->pairs[p].heap_at = at;
}

static void sift_up(trainer *t, int32_t at) {
    const int32_t p = t->heap[at];
    while (at > 0 && before(t, p, t->heap[(at - 1) / 2])) {
        heap_put(t, at, t->heap[(at - 1) / 2]);
        at = (at - 1) / 2;
    }
    heap_put(t, at, p);
}

static void sift_down(trainer *t, int32_t at) {
    const int32_t p = t->heap[at];
    for (;;) {
        int32_t c = 2 * at + 1;
        if (c >= t->n_heap) break;
        if (c + 1 < t->n_heap && before(t, t->heap[c + 1], t->heap[c])) c++;
        if (!before(t, t->heap[c], p)) break;
        heap_put(t, at, t->heap[c]);
        at = c;
    }
    heap_put(t, at, p);
}

static void heap_remove(trainer *t, int32_t p) {
    const int32_t at = t->pairs[p].heap_at;
    t->pairs[p].heap_at = -1;
    const int32_t last = t->heap[--t->n_heap];
    if (at == t->n_heap) return;
    heap_put(t, at, last);
    sift_up(t, at);
    sift_down(t, t->pairs[last].heap_at);
}

/* Puts pair p where its new count says, in the heap if it occurs, out of it if not: called at
 * each change of a count, so only p is out of order (several counts changed at once and then
 * fixed one by one could leave the heap wrong). */
static int heap_fix(trainer *t, int32_t p) {
    pair_entry *e = &t->pairs[p];
    if (e->count <= 0) {
        if (e->heap_at >= 0) heap_remove(t, p);
        return 0;
    }
    if (e->heap_at < 0) {
        if (grow(t, (void **)&t->heap, &t->cap_heap, (int64_t)t->n_heap + 1, sizeof *t->heap) != 0) return -1;
        heap_put(t, t->n_heap++, p);
        sift_up(t, e->heap_at);
    } else {
        sift_up(t, e->heap_at);
        sift_down(t, e->heap_at);
    }
    return 0;
}

/* Adds delta occurrences of (a, b) in word w (delta > 0 also lists w for the pair). A pair
 * whose token would exceed AL_TOK_MAX_PIECE bytes, or that was merged already, is not
 * counted. */
static int count_pair(trainer *t, int32_t a, int32_t b, int32_t w, int64_t delta) {
    if ((int64_t)t->tok[a].len + t->tok[b].len > AL_TOK_MAX_PIECE) return 0;
    const int32_t p = pair_of(t, a, b);
    if (p < 0) return -1;
    pair_entry *e = &t->pairs[p];
    if (e->done) return 0;
    e->count += delta;
    if (delta > 0 && (e->n_words == 0 || e->words[e->n_words - 1] != w)) {
        if (grow(t, (void **)&e->words, &e->cap_words, (int64_t)e->n_words + 1, sizeof *e->words) != 0) return -1;
        e->words[e->n_words++] = w;
    }
    return heap_fix(t, p);
}

/* ---- training --------------------------------------------------------------------------------- */

/* Merges (a, b) into id in word w, left to right as BpeTrainer's Word::merge does ("aaa" with
 * a+a gives [aa a]), and counts the pairs that change around each merge: (prev, a) and
 * (b, next) go, (prev, id) and (id, next) come, each as often as the word occurs. */
static int merge_word(trainer *t, int32_t w, int32_t a, int32_t b, int32_t id) {
    int32_t *s = t->sym + t->sym_at[w];
    const int32_t n = t->sym_n[w];
    const int64_t count = t->words[w].count;
    int32_t out = 0;
    for (int32_t in = 0; in < n;) {
        if (in + 1 < n && s[in] == a && s[in + 1] == b) {
            if (out > 0 && (count_pair(t, s[out - 1], a, w, -count) != 0 ||
                            count_pair(t, s[out - 1], id, w, count) != 0))
                return -1;
            if (in + 2 < n && (count_pair(t, b, s[in + 2], w, -count) != 0 ||
                               count_pair(t, id, s[in + 2], w, count) != 0))
                return -1;
            s[out++] = id;
            in += 2;
        } else {
            s[out++] = s[in++];
        }
    }
    t->sym_n[w] = out;
    return 0;
}

/* The corpus's words, their tokens and their pairs; the heap. */
static al_status start(trainer *t, size_t len, const int32_t byte_id[256], al_error *err) {
    for (size_t i = 0; i < len;) {
        const size_t j = al_byte_level_word_end(t->text, len, i);
        if (add_word(t, (int64_t)i, j - i) != 0) return al_fail(err, AL_ERR_NOMEM, "out of memory for the corpus's words");
        i = j;
    }
    int64_t n_sym = 0;
    for (int32_t w = 0; w < t->n_words; w++) n_sym += t->words[w].len;
    t->sym = malloc((size_t)n_sym * sizeof *t->sym);
    t->sym_at = malloc((size_t)t->n_words * sizeof *t->sym_at);
    t->sym_n = malloc((size_t)t->n_words * sizeof *t->sym_n);
    if (!t->sym || !t->sym_at || !t->sym_n) return al_fail(err, AL_ERR_NOMEM, "out of memory for the corpus's words");
    int64_t at = 0;
    for (int32_t w = 0; w < t->n_words; w++) {
        t->sym_at[w] = at;
        const word_entry *e = &t->words[w];
        t->sym_n[w] = e->len;
        for (int32_t k = 0; k < e->len; k++) t->sym[at + k] = byte_id[t->text[e->at + k]];
        for (int32_t k = 0; k + 1 < e->len; k++)
            if (count_pair(t, t->sym[at + k], t->sym[at + k + 1], w, e->count) != 0)
                return al_fail(err, AL_ERR_NOMEM, "out of memory for the pairs");
        at += e->len;
    }
    return AL_OK;
}

/* Merges the most frequent pair until the vocabulary holds vocab_size tokens or no pair
 * occurs min_count times; the count of the last merged pair in *last. */
static al_status learn(trainer *t, int64_t vocab_size, int64_t min_count, int64_t *last, al_error *err) {
    *last = 0;
    while (t->n_tok < vocab_size && t->n_heap > 0) {
        const int32_t p = t->heap[0];
        if (t->pairs[p].count < min_count) break;
        const int32_t a = t->pairs[p].a, b = t->pairs[p].b;
        *last = t->pairs[p].count;
        /* The new token's bytes, a's then b's, copied first: the pool may move. */
        const size_t la = (size_t)t->tok[a].len, lb = (size_t)t->tok[b].len;
        unsigned char *joined = malloc(la + lb);
        const int32_t id = joined ? (memcpy(joined, t->tok_bytes + t->tok[a].at, la),
                                     memcpy(joined + la, t->tok_bytes + t->tok[b].at, lb), token_id(t, joined, la + lb))
                                  : -1;
        free(joined);
        if (id < 0 || grow(t, (void **)&t->merges, &t->cap_merges, (int64_t)t->n_merges + 1, sizeof *t->merges) != 0)
            return al_fail(err, AL_ERR_NOMEM, "out of memory for the merges");
        t->merges[t->n_merges][0] = a, t->merges[t->n_merges][1] = b;
        t->n_merges++;
        heap_remove(t, p);
        t->pairs[p].done = 1;
        t->pairs[p].count = 0;
        /* The words on p's list; the list itself is read by index, as count_pair may grow
         * the pairs array (and p's entry with it) but never adds to a merged pair's list. */
        for (int32_t k = 0; k < t->pairs[p].n_words; k++) {
            const int32_t w = t->pairs[p].words[k];
            if (merge_word(t, w, a, b, id) != 0) return al_fail(err, AL_ERR_NOMEM, "out of memory for the pairs");
        }
        free(t->pairs[p].words);
        t->pairs[p].words = NULL, t->pairs[p].n_words = t->pairs[p].cap_words = 0;
    }
    return AL_OK;
}

/* ---- writing the tokenizer.json ------------------------------------------------------------- */

/* The writer takes each token's bytes by id: here, places in the pool. */
static al_status write_json(const trainer *t, char **out, size_t *out_len, al_error *err) {
    const char **piece = malloc((size_t)t->n_tok * sizeof *piece);
    int32_t *len = malloc((size_t)t->n_tok * sizeof *len);
    al_status st = piece && len ? AL_OK : al_fail(err, AL_ERR_NOMEM, "out of memory for the tokenizer.json");
    for (int32_t id = 0; st == AL_OK && id < t->n_tok; id++) {
        piece[id] = (const char *)t->tok_bytes + t->tok[id].at;
        len[id] = t->tok[id].len;
    }
    if (st == AL_OK)
        st = al_tok_json_write(piece, len, t->n_tok, (const int32_t *)t->merges, t->n_merges, out, out_len, err);
    free(piece), free(len);
    return st;
}

/* ---- the call --------------------------------------------------------------------------------- */

al_status al_tok_train_bpe(const char *text, size_t len, int64_t vocab_size, int64_t min_frequency,
                           char **json_out, size_t *json_len, al_tok_train_summary *summary,
                           al_error *err) {
    if (json_out) *json_out = NULL;
    if (json_len) *json_len = 0;
    if (summary) memset(summary, 0, sizeof *summary);
    if (!text || !json_out || !json_len)
        return al_fail(err, AL_ERR_ARG, "al_tok_train_bpe: text, json_out or json_len is NULL");
    if (len == 0) return al_fail(err, AL_ERR_ARG, "the corpus is empty");
    if ((uint64_t)len > (uint64_t)AL_TOK_MAX_CORPUS)
        return al_fail(err, AL_ERR_LIMIT, "the corpus is %zu bytes, above the limit of %" PRId64 " (%" PRId64 " MiB)",
                       len, AL_TOK_MAX_CORPUS, AL_TOK_MAX_CORPUS >> 20);
    if (vocab_size < AL_TOK_TRAIN_MIN_VOCAB || vocab_size > AL_TOK_MAX_VOCAB)
        return al_fail(err, AL_ERR_ARG, "vocab_size %" PRId64 " is outside [%d, %d] (the %d added tokens and the 256 "
                       "bytes come first)", vocab_size, AL_TOK_TRAIN_MIN_VOCAB, AL_TOK_MAX_VOCAB, AL_TOK_TRAIN_SPECIALS);
    if (min_frequency < 0) return al_fail(err, AL_ERR_ARG, "min_frequency %" PRId64 " is negative", min_frequency);
    const unsigned char *s = (const unsigned char *)text;
    for (size_t i = 0; i < len;) {
        const size_t k = al_json_utf8_seq_len(s + i, len - i);
        if (!k) return al_fail(err, AL_ERR_FORMAT, "the corpus is not UTF-8 text: byte 0x%02X at offset %zu", s[i], i);
        i += k;
    }

    trainer t;
    memset(&t, 0, sizeof t);
    t.text = s;
    /* 1. The added tokens, then the bytes in the order of their characters' code points: the
     *    188 printable bytes (which are their own characters), then the other 68 (U+0100 on). */
    int32_t byte_id[256];
    for (int32_t id = 0; id < AL_TOK_TRAIN_SPECIALS; id++)
        token_id(&t, (const unsigned char *)al_tok_minimind_added[id], strlen(al_tok_minimind_added[id]));
    for (int pass = 0; pass < 2; pass++)
        for (unsigned b = 0; b < 256; b++) {
            const unsigned char byte = (unsigned char)b;
            if ((al_byte_level_char(b) == b) == (pass == 0)) byte_id[b] = token_id(&t, &byte, 1);
        }
    al_status st = t.failed ? al_fail(err, AL_ERR_NOMEM, "out of memory for the vocabulary") : AL_OK;
    /* 2-3. The words and their pairs; 4. the merges. */
    int64_t last = 0;
    if (st == AL_OK) st = start(&t, len, byte_id, err);
    if (st == AL_OK) st = learn(&t, vocab_size, min_frequency > 1 ? min_frequency : 1, &last, err);
    if (st == AL_OK) st = write_json(&t, json_out, json_len, err);
    if (st == AL_OK) {
        if (summary) {
            int64_t words = 0;
            for (int32_t w = 0; w < t.n_words; w++) words += t.words[w].count;
            *summary = (al_tok_train_summary){t.n_tok, t.n_merges, words, t.n_words, last};
        }
        al_ok(err);
    }
    trainer_free(&t);
    return st;
}
