/* fuzz_tokenizer_json.c — libFuzzer harness for the Hugging Face tokenizer.json reader
 * (al_tok_hf_create) and what a tokenizer it accepts does with text and ids. The first byte is
 * the length k of a text, the next k bytes the text, the rest the tokenizer.json:
 *   - the file is read or refused; a refusal always carries a message and leaves no handle;
 *   - a tokenizer read encodes the text: the size query and the encode agree, at most two ids
 *     per byte, every id in the vocabulary, ids exactly when there is text;
 *   - the text's bytes, taken two at a time as ids, go through the streaming decoder, whose
 *     output is always well-formed UTF-8;
 *   - the file cut to its first 292 + k ids (al_tok_hf_cut) is refused with a message and no
 *     output, or gives a tokenizer.json that al_tok_hf_create reads with exactly that many.
 * Any crash, leak, sanitizer report or timeout is a bug; a broken invariant aborts.
 * Build: bash build.sh fuzz. Run: npm run fuzz -- SECONDS. */
#include "attnlab.h"

#include <stdlib.h>
#include <string.h>

/* Well-formed UTF-8 (the Unicode standard's table 3-7), or not. */
static int fuzz_valid_utf8(const unsigned char *s, size_t n) {
    for (size_t i = 0; i < n;) {
        const unsigned c = s[i];
        const size_t k = c < 0x80 ? 1 : c >= 0xC2 && c <= 0xDF ? 2 : c >= 0xE0 && c <= 0xEF ? 3 : c >= 0xF0 && c <= 0xF4 ? 4 : 0;
        if (!k || i + k > n) return 0;
        const unsigned lo = c == 0xE0 ? 0xA0 : c == 0xF0 ? 0x90 : 0x80, hi = c == 0xED ? 0x9F : c == 0xF4 ? 0x8F : 0xBF;
        if (k > 1 && (s[i + 1] < lo || s[i + 1] > hi)) return 0;
        for (size_t j = 2; j < k; j++)
            if (s[i + j] < 0x80 || s[i + j] > 0xBF) return 0;
        i += k;
    }
    return 1;
}

static void fuzz_encode(const al_tokenizer *t, const char *text, size_t len) {
    al_error err;
    const int64_t n = al_tok_encode(t, text, len, 0, 0, NULL, 0, &err);
    if (n < 0) {
        if (err.status != AL_ERR_NOMEM) abort(); /* valid arguments: only memory may fail */
        return;
    }
    if ((size_t)n > 2 * len + 2) abort();
    int32_t *ids = malloc((size_t)(n ? n : 1) * sizeof *ids);
    if (!ids) return;
    if (al_tok_encode(t, text, len, 0, 0, ids, n, &err) != n) abort();
    const int64_t vocab = al_tok_vocab_size(t);
    for (int64_t i = 0; i < n; i++)
        if (ids[i] < 0 || ids[i] >= vocab || !al_tok_piece(t, ids[i], NULL)) abort();
    if ((len > 0) != (n > 0)) abort(); /* every byte has a token: text gives ids, none gives none */
    free(ids);
}

static void fuzz_stream(const al_tokenizer *t, const uint8_t *b, size_t len) {
    al_tok_stream *s = NULL;
    al_error err;
    if (al_tok_stream_create(t, &s, &err) != AL_OK) return;
    const int64_t vocab = al_tok_vocab_size(t);
    char out[4 * (4096 + 3) + 16];
    for (size_t i = 0; i + 1 < len; i += 2) {
        const int32_t id = (int32_t)(((unsigned)b[i] << 8 | b[i + 1]) % (unsigned)vocab);
        const int64_t k = al_tok_stream_push(s, id, out, sizeof out, &err);
        if (k < 0 || !fuzz_valid_utf8((const unsigned char *)out, (size_t)k)) abort();
    }
    const int64_t k = al_tok_stream_finish(s, out, sizeof out, &err);
    if (k < 0 || !fuzz_valid_utf8((const unsigned char *)out, (size_t)k)) abort();
    al_tok_stream_free(s);
}

static void fuzz_cut(const uint8_t *json, size_t size, int64_t vocab) {
    char *out = (char *)&out;
    size_t len = 0;
    al_error err;
    const al_status st = al_tok_hf_cut(json, size, vocab, &out, &len, &err);
    if (st != AL_OK) {
        if (!err.msg[0] || out || (st != AL_ERR_FORMAT && st != AL_ERR_ARG && st != AL_ERR_NOMEM)) abort();
        return;
    }
    al_tokenizer *t = NULL;
    const al_status back = al_tok_hf_create((const uint8_t *)out, len, vocab, &t, &err);
    if (back != AL_OK && back != AL_ERR_NOMEM) abort();
    al_tok_free(t);
    al_buffer_free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    size_t text_len = data[0];
    if (text_len > size - 1) text_len = size - 1;
    const char *text = (const char *)data + 1;
    const uint8_t *json = data + 1 + text_len;
    const size_t json_size = size - 1 - text_len;
    al_tokenizer *t = (al_tokenizer *)&t;
    al_error err;
    if (al_tok_hf_create(json, json_size, 0, &t, &err) != AL_OK) {
        if (!err.msg[0] || t) abort(); /* an error always says what it is, and leaves no handle */
        return 0;
    }
    if (!t || al_tok_vocab_size(t) < 256 || al_tok_bos_id(t) != -1 || al_tok_eos_id(t) != -1) abort();
    fuzz_encode(t, text, text_len);
    fuzz_stream(t, (const uint8_t *)text, text_len);
    al_tok_free(t);
    fuzz_cut(json, json_size, AL_TOK_TRAIN_MIN_VOCAB + (int64_t)text_len);
    return 0;
}
