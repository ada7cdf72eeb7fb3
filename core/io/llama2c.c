/* llama2c.c — a model from a llama2.c checkpoint image, in either of the float32 formats its
 * export.py writes:
 *   legacy (v0, what run.c reads): seven little-endian int32 (dim, hidden_dim, n_layers,
 *     n_heads, n_kv_heads, vocab_size — negative when an untied classifier follows — seq_len),
 *     then float32 arrays: token embedding [vocab, dim]; rms_att [layers, dim]; wq [layers,
 *     heads·hd, dim]; wk and wv [layers, kv·hd, dim]; wo [layers, dim, heads·hd]; rms_ffn
 *     [layers, dim]; w1 [layers, hidden, dim]; w2 [layers, dim, hidden]; w3 [layers, hidden,
 *     dim]; rms_final [dim]; freq_cis_real and freq_cis_imag [seq, hd/2] (not read: the model
 *     computes its own table); wcls [vocab, dim] if untied.
 *   version 1: a 256-byte header — the magic "ak42" (uint32 0x616b3432), int32 version 1, the
 *     same seven int32 (vocab_size positive), uint8 shared_classifier, zeros — then rms_att,
 *     rms_ffn, rms_final, the embedding, wq, wk, wv, wo, w1, w2, w3 (each for every layer), and
 *     wcls if not shared; no freq_cis.
 * Version 2 (int8, Q8_0) is refused. Llama's conventions: interleaved RoPE (base 10000), no
 * QK-Norm, RMSNorm eps 1e-5. Every size is checked against the image before anything is read
 * or allocated. */
#include "attnlab/io.h"
#include "base/internal.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum { HEADER_INTS = 7, V1_HEADER_BYTES = 256, V1_MAGIC = 0x616b3432 };

static int32_t load_i32(const uint8_t *p) {
    return (int32_t)((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24);
}

/* The header's fields from the file's first bytes (at least min(256, size) of them: all a
 * header may take) and the file's size; *data_at: where its arrays start. */
static al_status read_header(const uint8_t *bytes, size_t size, al_model_hparams *hp, size_t *data_at, al_error *err) {
    if (!bytes || !hp) return al_fail(err, AL_ERR_ARG, "llama2.c checkpoint: NULL argument");
    if (size < HEADER_INTS * 4)
        return al_fail(err, AL_ERR_FORMAT, "llama2.c checkpoint: %zu bytes, shorter than its 28-byte header", size);
    int32_t h[HEADER_INTS];
    int version = 0;
    size_t header = HEADER_INTS * 4;
    if (load_i32(bytes) == V1_MAGIC) {
        if (size < V1_HEADER_BYTES)
            return al_fail(err, AL_ERR_FORMAT, "llama2.c checkpoint: %zu bytes, shorter than the 256-byte version header", size);
        version = load_i32(bytes + 4);
        if (version != 1)
            return al_fail(err, AL_ERR_FORMAT, "llama2.c checkpoint: export version %d; the float32 ones are read "
                           "(legacy and version 1; version 2 is int8)", version);
        header = V1_HEADER_BYTES;
        if (bytes[36] > 1)
            return al_fail(err, AL_ERR_FORMAT, "llama2.c checkpoint: shared_classifier is %d, not 0 or 1", (int)bytes[36]);
    }
    for (int i = 0; i < HEADER_INTS; i++) h[i] = load_i32(bytes + (version ? 8 : 0) + 4 * i);
    static const char *const NAMES[HEADER_INTS] = {"dim", "hidden_dim", "n_layers", "n_heads",
                                                   "n_kv_heads", "vocab_size", "seq_len"};
    for (int i = 0; i < HEADER_INTS; i++)
        if (h[i] == 0 || (h[i] < 0 && i != 5))
            return al_fail(err, AL_ERR_FORMAT, "llama2.c checkpoint: header field %s is %d", NAMES[i], (int)h[i]);
    if (h[5] == INT32_MIN || (version && h[5] < 0))
        return al_fail(err, AL_ERR_FORMAT, "llama2.c checkpoint: vocab_size is %d", (int)h[5]);
    memset(hp, 0, sizeof *hp);
    hp->hidden = h[0];
    hp->ffn_hidden = h[1];
    hp->n_layers = h[2];
    hp->n_heads = h[3];
    hp->n_kv_heads = h[4];
    hp->vocab = h[5] < 0 ? -(int64_t)h[5] : h[5];
    hp->tied = version ? bytes[36] == 1 : h[5] > 0;
    hp->max_seq = h[6];
    if (hp->hidden % hp->n_heads != 0)
        return al_fail(err, AL_ERR_FORMAT, "llama2.c checkpoint: dim %lld is not a multiple of n_heads %lld",
                       (long long)hp->hidden, (long long)hp->n_heads);
    hp->head_dim = hp->hidden / hp->n_heads;
    hp->rope_base = 10000.0;
    hp->eps = 1e-5f;
    hp->qk_norm = 0;
    hp->rope_style = AL_ROPE_INTERLEAVED;
    al_status st = al_model_hparams_check(hp, err);
    if (st != AL_OK) return st;

    /* The size the header implies, in 64 bits (within the limits just checked, no overflow). */
    const int64_t E = hp->hidden, F = hp->ffn_hidden, L = hp->n_layers;
    const int64_t q = hp->n_heads * hp->head_dim, kv = hp->n_kv_heads * hp->head_dim;
    int64_t floats = hp->vocab * E + L * (E + q * E + 2 * kv * E + E * q + E + 3 * F * E) + E;
    if (!version) floats += hp->max_seq * hp->head_dim; /* the two freq_cis tables */
    if (!hp->tied) floats += hp->vocab * E;
    const int64_t want = (int64_t)header + 4 * floats;
    if ((int64_t)size != want)
        return al_fail(err, AL_ERR_FORMAT,
                       "llama2.c checkpoint%s: the header (dim %lld, hidden %lld, %lld layers, %lld/%lld heads, vocab %lld, seq %lld) "
                       "implies %lld bytes but the file has %zu", version ? " (version 1)" : "",
                       (long long)E, (long long)F, (long long)L, (long long)hp->n_heads,
                       (long long)hp->n_kv_heads, (long long)hp->vocab, (long long)hp->max_seq,
                       (long long)want, size);
    *data_at = header;
    return AL_OK;
}

al_status al_llama2c_hparams(const uint8_t *bytes, size_t size, al_model_hparams *hp, al_error *err) {
    size_t data_at;
    return read_header(bytes, size, hp, &data_at, err);
}

/* The index of the first of `count` little-endian float32 values at src that is NaN or
 * infinite (its exponent bits all ones), or count if none is. Each value is read as a host
 * uint32 and tested against the exponent's bits as they lie in memory, in the host's order
 * (exp_bits), so the test is right whatever the host's byte order; the values are ORed a
 * block at a time and the first one looked for only in a failing block, which leaves one load,
 * AND, compare and OR per value and lets the loop vectorise (value by value, byte by byte, the
 * test was three quarters of the instructions of loading stories260K). */
static int64_t first_nonfinite(const uint8_t *src, int64_t count) {
    static const uint8_t exp_le[4] = {0x00, 0x00, 0x80, 0x7f}; /* 0x7f800000, little-endian */
    uint32_t exp_bits;
    memcpy(&exp_bits, exp_le, sizeof exp_bits);
    enum { BLOCK = 1024 };
    for (int64_t i0 = 0; i0 < count; i0 += BLOCK) {
        const int64_t n = count - i0 < BLOCK ? count - i0 : BLOCK;
        const uint8_t *block = src + 4 * i0;
        uint32_t bad = 0;
        for (int64_t i = 0; i < n; i++) {
            uint32_t b;
            memcpy(&b, block + 4 * i, sizeof b);
            bad |= (b & exp_bits) == exp_bits;
        }
        if (!bad) continue;
        for (int64_t i = 0;; i++) {
            uint32_t b;
            memcpy(&b, block + 4 * i, sizeof b);
            if ((b & exp_bits) == exp_bits) return i0 + i;
        }
    }
    return count;
}

/* `count` float32 values (little-endian) into weight p of layer l, refusing NaN and infinity. */
static al_status set_floats(al_model *m, al_model_param p, int64_t l, const uint8_t *src, int64_t count,
                            const char *what, al_error *err) {
    const int64_t bad = first_nonfinite(src, count);
    if (bad < count)
        return al_fail(err, AL_ERR_NONFINITE, "llama2.c checkpoint: %s holds a non-finite value at index %lld", what,
                       (long long)bad);
    return al_model_set_param(m, p, l, -1, src, AL_WEIGHTS_F32, count, err);
}

/* The `n` bytes at `at`: in the image, or read from src into buf (room for the largest array). */
static const uint8_t *bytes_at(const uint8_t *image, const al_byte_source *src, uint64_t at, size_t n, uint8_t *buf) {
    if (!src) return image + at;
    return src->read(src->ctx, at, buf, n) == 0 ? buf : NULL;
}

/* The model from the image `bytes` (src->read NULL: src->size bytes), or from the file src reads
 * piece by piece (bytes: its first min(256, size) bytes), one array of one layer at a time. */
static al_status from_llama2c(const uint8_t *bytes, const al_byte_source *src, int64_t context, int64_t max_step,
                              al_model **out, al_error *err) {
    if (!out) return al_fail(err, AL_ERR_ARG, "llama2.c checkpoint: no output pointer");
    *out = NULL;
    if (src->size > SIZE_MAX) return al_fail(err, AL_ERR_LIMIT, "llama2.c checkpoint: too large for this address space");
    al_model_hparams hp;
    size_t data_at;
    al_status st = read_header(bytes, (size_t)src->size, &hp, &data_at, err);
    if (st != AL_OK) return st;
    if (context <= 0) context = hp.max_seq;
    al_model *m = NULL;
    if ((st = al_model_create_inference(&hp, context, max_step, AL_WEIGHTS_F32, &m, err)) != AL_OK) return st;
    const al_byte_source *from = src->read ? src : NULL;
    /* the largest array read at once: the embedding, the head, or one layer's largest map */
    const int64_t E = hp.hidden, q = hp.n_heads * hp.head_dim;
    int64_t largest = hp.vocab * E;
    if (q * E > largest) largest = q * E;
    if (hp.ffn_hidden * E > largest) largest = hp.ffn_hidden * E;
    uint8_t *buf = from ? malloc((size_t)(4 * largest)) : NULL;
    if (from && !buf) {
        al_model_free(m);
        return al_fail(err, AL_ERR_NOMEM, "llama2.c checkpoint: out of memory for %lld floats", (long long)largest);
    }

    /* The arrays in file order; per-layer ones hold every layer back to back. */
    typedef struct {
        al_model_param p;
        const char *name;
    } array;
    static const array LEGACY[] = {
        {AL_MP_EMBED, "token_embedding"}, {AL_MP_ATTN_NORM, "rms_att"}, {AL_MP_WQ, "wq"},
        {AL_MP_WK, "wk"}, {AL_MP_WV, "wv"}, {AL_MP_WO, "wo"}, {AL_MP_FFN_NORM, "rms_ffn"},
        {AL_MP_GATE, "w1"}, {AL_MP_DOWN, "w2"}, {AL_MP_UP, "w3"}, {AL_MP_FINAL_NORM, "rms_final"},
    };
    static const array V1[] = {
        {AL_MP_ATTN_NORM, "rms_att"}, {AL_MP_FFN_NORM, "rms_ffn"}, {AL_MP_FINAL_NORM, "rms_final"},
        {AL_MP_EMBED, "token_embedding"}, {AL_MP_WQ, "wq"}, {AL_MP_WK, "wk"}, {AL_MP_WV, "wv"},
        {AL_MP_WO, "wo"}, {AL_MP_GATE, "w1"}, {AL_MP_DOWN, "w2"}, {AL_MP_UP, "w3"},
    };
    const int v1 = load_i32(bytes) == V1_MAGIC;
    const array *order = v1 ? V1 : LEGACY;
    uint64_t at = data_at;
    for (size_t i = 0; i < sizeof LEGACY / sizeof LEGACY[0] && st == AL_OK; i++) {
        const int per_layer = order[i].p != AL_MP_EMBED && order[i].p != AL_MP_FINAL_NORM;
        for (int64_t l = 0; l < (per_layer ? hp.n_layers : 1) && st == AL_OK; l++) {
            const int64_t numel = al_model_read_param(m, order[i].p, l, -1, NULL, 0);
            const uint8_t *p = bytes_at(bytes, from, at, (size_t)(4 * numel), buf);
            st = p ? set_floats(m, order[i].p, l, p, numel, order[i].name, err)
                   : al_fail(err, AL_ERR_IO, "llama2.c checkpoint: %s could not be read", order[i].name);
            at += (uint64_t)(4 * numel);
        }
    }
    if (!v1) at += (uint64_t)(4 * hp.max_seq * hp.head_dim); /* freq_cis_real, freq_cis_imag */
    if (st == AL_OK && !hp.tied) {
        const int64_t numel = al_model_read_param(m, AL_MP_LM_HEAD, 0, -1, NULL, 0);
        const uint8_t *p = bytes_at(bytes, from, at, (size_t)(4 * numel), buf);
        st = p ? set_floats(m, AL_MP_LM_HEAD, 0, p, numel, "wcls", err)
               : al_fail(err, AL_ERR_IO, "llama2.c checkpoint: wcls could not be read");
    }
    free(buf);
    if (st != AL_OK) {
        al_model_free(m);
        return st;
    }
    *out = m;
    return AL_OK;
}

al_status al_model_from_llama2c(const uint8_t *bytes, size_t size, int64_t context,
                                int64_t max_step, al_model **out, al_error *err) {
    if (!bytes) return al_fail(err, AL_ERR_ARG, "llama2.c checkpoint: NULL argument");
    const al_byte_source whole = {NULL, NULL, size};
    return from_llama2c(bytes, &whole, context, max_step, out, err);
}

al_status al_model_from_llama2c_source(const al_byte_source *src, int64_t context, int64_t max_step, al_model **out,
                                       al_error *err) {
    if (!src || !src->read) return al_fail(err, AL_ERR_ARG, "llama2.c checkpoint: no source");
    uint8_t header[V1_HEADER_BYTES];
    const size_t avail = src->size < sizeof header ? (size_t)src->size : sizeof header;
    if (src->read(src->ctx, 0, header, avail) != 0) return al_fail(err, AL_ERR_IO, "llama2.c checkpoint: cannot read its header");
    return from_llama2c(header, src, context, max_step, out, err);
}

