/* tokenizer_gguf.c — a tokenizer as a GGUF file holds it (llama.cpp's tokenizer.ggml.* keys, for
 * io/gguf_write.c): llama2.c's tokenizer.bin as the SentencePiece vocabulary it was exported from,
 * a tokenizer.json as byte-level BPE with its merges in rank order. */
#include "attnlab/tokenizer.h"
#include "tokenizer/byte_level.h"
#include "tokenizer/tokenizer_impl.h"

#include <string.h>

const char *al_tok_gguf_model(const al_tokenizer *t) {
    return !t ? NULL : t->kind == TOK_LLAMA2C ? "llama" : "gpt2";
}

/* The added token with id `id`, or NULL. */
static const tok_entry *added_token(const al_tokenizer *t, int32_t id) {
    for (int32_t k = 0; k < t->n_added; k++)
        if (t->added[k].id == id) return &t->added[k];
    return NULL;
}

/* Writes n bytes at o->at if they fit; counts them whatever. */
typedef struct {
    char *out;
    int64_t cap, at;
} sink;

static void put(sink *o, const char *s, size_t n) {
    if (o->out && o->at + (int64_t)n <= o->cap) memcpy(o->out + o->at, s, n);
    o->at += (int64_t)n;
}

int64_t al_tok_gguf_token(const al_tokenizer *t, int32_t id, char *out, int64_t cap, int32_t *type) {
    if (!t || id < 0 || id >= t->vocab_size || cap < 0 || (!out && cap > 0)) return -1;
    sink o = {out, cap, 0};
    const char *p = t->piece[id];
    const int32_t n = t->len[id];
    int32_t ty = AL_TOK_GGUF_NORMAL;
    if (t->kind == TOK_LLAMA2C) {
        /* llama2.c's export (tokenizer.py) wrote SentencePiece's pieces with '▁' turned back into
         * spaces and BOS and EOS as "\n<s>\n" and "\n</s>\n": undone here. */
        if (id == AL_TOK_BOS || id == AL_TOK_EOS) {
            const char *name = id == AL_TOK_BOS ? "<s>" : "</s>";
            put(&o, name, strlen(name));
            ty = AL_TOK_GGUF_CONTROL;
        } else {
            for (int32_t k = 0; k < n; k++) put(&o, p[k] == ' ' ? "\xE2\x96\x81" : p + k, p[k] == ' ' ? 3 : 1);
            ty = id == AL_TOK_UNK ? AL_TOK_GGUF_UNKNOWN : al_tok_byte_piece(p, (size_t)n) >= 0 ? AL_TOK_GGUF_BYTE
                                                                                              : AL_TOK_GGUF_NORMAL;
        }
    } else {
        /* An added token is its content; any other token its bytes as ByteLevel's characters
         * (the vocabulary's own text in the tokenizer.json). */
        const tok_entry *a = added_token(t, id);
        if (a) {
            put(&o, a->str, (size_t)a->len);
            ty = a->special ? AL_TOK_GGUF_CONTROL : AL_TOK_GGUF_USER_DEFINED;
        } else {
            for (int32_t k = 0; k < n; k++) {
                char ch[2];
                put(&o, ch, al_byte_level_utf8((unsigned char)p[k], ch));
            }
        }
    }
    if (out && o.at > cap) return -1;
    if (type) *type = ty;
    return o.at;
}

int64_t al_tok_merges(const al_tokenizer *t, int32_t *pairs, int64_t cap) {
    if (!t || cap < 0 || (!pairs && cap > 0)) return -1;
    int64_t n = 0;
    for (uint32_t i = 0; t->merges && i < t->n_slots; i++) n += t->merges[i].a >= 0;
    if (!pairs) return n;
    if (cap < 2 * n) return -1;
    /* The table holds each merge once, its rank its index in the file: 0 .. n-1. */
    for (uint32_t i = 0; i < t->n_slots; i++) {
        const tok_merge_slot *m = &t->merges[i];
        if (m->a >= 0) pairs[2 * m->rank] = m->a, pairs[2 * m->rank + 1] = m->b;
    }
    return n;
}
