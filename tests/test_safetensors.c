/* test_safetensors.c — tests of the safetensors reader and writer: round trips, the exact bytes
 * the reference writer produces, f16/bf16 conversion (every bit pattern), files written from
 * torch, every malformed file listed in <dir>/EXPECTED.txt, and every truncation and a few
 * hundred random byte mutations of each file (run it under ASan/UBSan: no crash, no leak).
 * Usage: test_safetensors tests/malformed */
#define _POSIX_C_SOURCE 200809L /* dirent.h, to find files missing from EXPECTED.txt */

#include "attnlab.h"
#include "check.h"
#include "read_file.h"

#include <dirent.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- helpers ------------------------------------------------------------------------------ */

static uint32_t f2u(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

/* A file image from a header and data, padded with spaces like the reference writer. */
static uint8_t *make_file(const char *header, const void *data, size_t nbytes, size_t *size) {
    size_t h = strlen(header), pad = (8 - h % 8) % 8;
    *size = 8 + h + pad + nbytes;
    uint8_t *b = malloc(*size);
    for (int i = 0; i < 8; i++) b[i] = (uint8_t)((uint64_t)(h + pad) >> (8 * i));
    memcpy(b + 8, header, h);
    memset(b + 8 + h, ' ', pad);
    if (nbytes) memcpy(b + 8 + h + pad, data, nbytes);
    return b;
}

static int contains(const uint8_t *buf, size_t n, const char *s) {
    size_t k = strlen(s);
    for (size_t i = 0; i + k <= n; i++)
        if (memcmp(buf + i, s, k) == 0) return 1;
    return 0;
}

static int dtype_size(const char *name) {
    static const struct { const char *n; int s; } t[] = {
        {"F64", 8}, {"F32", 4}, {"F16", 2}, {"BF16", 2}, {"I64", 8}, {"I32", 4}, {"I16", 2},
        {"I8", 1}, {"U64", 8}, {"U32", 4}, {"U16", 2}, {"U8", 1}, {"BOOL", 1}, {"F8_E5M2", 1},
        {"F8_E4M3", 1}};
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        if (strcmp(t[i].n, name) == 0) return t[i].s;
    return -1;
}

static int convertible(al_dtype d) {
    return d == AL_DTYPE_F32 || d == AL_DTYPE_F16 || d == AL_DTYPE_BF16;
}

/* Every failure carries the same status in err and a non-empty one-line message. */
static void check_err(al_status s, const al_error *e, const char *ctx) {
    CHECK(e->status == s, "%s: err.status %d != returned %d", ctx, (int)e->status, (int)s);
    if (s != AL_OK) {
        CHECK(e->msg[0] != '\0', "%s: empty message", ctx);
        CHECK(strchr(e->msg, '\n') == NULL, "%s: message has a newline: %s", ctx, e->msg);
        CHECK(strlen(e->msg) < AL_ERROR_MSG_MAX, "%s: message not terminated", ctx);
    }
}

/* Uses every query on a parsed file and checks the invariants a caller relies on.
 * Returns the number of tensors whose read failed. */
static int exercise(const al_safetensors *st, const char *ctx) {
    int n = al_st_count(st), failed = 0;
    CHECK(n >= 0, "%s: count %d", ctx, n);
    for (int i = 0; i < n; i++) {
        al_st_tensor t, u;
        CHECK(al_st_get(st, i, &t) == AL_OK, "%s: get %d", ctx, i);
        CHECK(t.ndim >= 0 && t.ndim <= AL_ST_MAX_DIMS, "%s: ndim %d", ctx, t.ndim);
        int64_t numel = 1;
        for (int d = 0; d < t.ndim; d++) numel *= t.shape[d];
        CHECK(numel == t.numel, "%s: numel", ctx);
        CHECK(t.nbytes == t.numel * dtype_size(t.dtype_name), "%s: nbytes of '%s'", ctx, t.name);
        CHECK(al_st_find(st, t.name, &u) == AL_OK && u.data == t.data, "%s: find '%s'", ctx,
              t.name);
        CHECK(al_st_index(st, t.name) == i, "%s: index of '%s' %d, not %d", ctx, t.name, al_st_index(st, t.name), i);
        volatile uint8_t sum = 0; /* touch every byte: ASan sees any range outside the copy */
        for (int64_t k = 0; k < t.nbytes; k++) sum += ((const uint8_t *)t.data)[k];
        (void)sum;
        if (convertible(t.dtype)) {
            float *out = malloc((size_t)(t.numel ? t.numel : 1) * sizeof(float));
            al_error e;
            al_status s = al_st_read_f32(st, t.name, out, t.numel, &e);
            check_err(s, &e, ctx);
            if (s != AL_OK) {
                CHECK(s == AL_ERR_NONFINITE, "%s: read '%s' failed with %d: %s", ctx, t.name,
                      (int)s, e.msg);
                failed++;
            }
            free(out);
        }
    }
    CHECK(al_st_get(st, n, &(al_st_tensor){0}) == AL_ERR_ARG, "%s: get past the end", ctx);
    (void)al_st_metadata(st, "format");
    return failed;
}

/* ---- round trip ---------------------------------------------------------------------------- */

static void test_round_trip(void) {
    const float w[6] = {-0.0f, 0x1p-149f, FLT_MAX, -FLT_MIN, 3.14159274f, 1.0f / 3.0f};
    const float norm[5] = {1, 2, 3, 4, 5};
    const float scalar = 42.0f;
    const float odd[2] = {-1.5f, 2.25f};
    al_st_entry entries[] = {
        {"q_proj.weight", w, 2, {2, 3}},
        {"scalar", &scalar, 0, {0}},
        {"empty", NULL, 2, {0, 4}},
        {"norm", norm, 1, {5}},
        {"we\"ird\\na\nme \xc3\xbc\xf0\x9f\x98\x80", odd, 1, {2}},
    };
    const int ne = (int)(sizeof entries / sizeof entries[0]);
    const char *meta[] = {"format", "pt",
                          "note", "quote \" backslash \\ ctrl \x01 tab \t \xc3\xa9 \xf0\x9f\x98\x80",
                          "", "empty key"};
    al_error e;
    size_t needed = 0;

    al_status s = al_st_serialize(entries, ne, meta, 3, NULL, 0, &needed, &e);
    CHECK(s == AL_OK && needed > 8, "size query: %d %s", (int)s, e.msg);
    check_err(s, &e, "size query");
    uint8_t *buf = malloc(needed + 1);
    size_t again = 0;
    s = al_st_serialize(entries, ne, meta, 3, buf, needed - 1, &again, &e);
    CHECK(s == AL_ERR_CAPACITY && again == needed, "small buffer: %d", (int)s);
    check_err(s, &e, "small buffer");
    s = al_st_serialize(entries, ne, meta, 3, NULL, 16, &again, &e);
    CHECK(s == AL_ERR_CAPACITY && again == needed, "NULL buffer with a capacity: %d", (int)s);
    s = al_st_serialize(entries, ne, meta, 3, buf, needed + 1, &again, &e);
    CHECK(s == AL_OK && again == needed, "serialize: %d %s", (int)s, e.msg);

    uint64_t hlen = 0;
    for (int i = 7; i >= 0; i--) hlen = hlen << 8 | buf[i];
    CHECK(hlen % 8 == 0, "header length %llu not a multiple of 8", (unsigned long long)hlen);
    CHECK(needed == 8 + hlen + 4 * (6 + 1 + 0 + 5 + 2), "file size %zu", needed);
    CHECK(buf[8] == '{', "header starts with '{'");
    size_t last = 8 + (size_t)hlen - 1;
    while (last > 8 && buf[last] == ' ') last--;
    CHECK(buf[last] == '}' && 8 + hlen - 1 - last < 8, "padding: only spaces, fewer than 8");

    /* Parse from an odd address, then scribble over the source: the handle owns a copy. */
    uint8_t *odd_copy = malloc(needed + 1);
    memcpy(odd_copy + 1, buf, needed);
    al_safetensors *st = NULL;
    s = al_st_parse(odd_copy + 1, needed, &st, &e);
    CHECK(s == AL_OK && st, "parse round trip: %s", e.msg);
    check_err(s, &e, "parse round trip");
    memset(odd_copy, 0xAB, needed + 1);
    free(odd_copy);
    if (!st) {
        free(buf);
        return;
    }
    CHECK(al_st_count(st) == ne, "count %d", al_st_count(st));
    for (int i = 0; i < ne && i < al_st_count(st); i++) {
        al_st_tensor t;
        CHECK(al_st_get(st, i, &t) == AL_OK, "get %d", i);
        CHECK(strcmp(t.name, entries[i].name) == 0, "entry %d: name '%s' (header order)", i,
              t.name);
        CHECK(t.dtype == AL_DTYPE_F32 && strcmp(t.dtype_name, "F32") == 0, "dtype of %d", i);
        CHECK(t.ndim == entries[i].ndim, "ndim of %d", i);
        int64_t numel = 1;
        for (int d = 0; d < t.ndim; d++) {
            CHECK(t.shape[d] == entries[i].shape[d], "shape of %d", i);
            numel *= entries[i].shape[d];
        }
        CHECK(t.numel == numel && t.nbytes == 4 * numel, "numel/nbytes of %d", i);
        CHECK(((uintptr_t)t.data & 3) == 0, "F32 data of %d aligned in the copy", i);
        float out[8] = {0};
        s = al_st_read_f32(st, t.name, out, 8, &e);
        CHECK(s == AL_OK, "read %d: %s", i, e.msg);
        CHECK(numel == 0 || memcmp(out, entries[i].data, (size_t)numel * 4) == 0,
              "values of %d differ (bit for bit)", i);
    }
    CHECK(al_st_metadata(st, "format") && strcmp(al_st_metadata(st, "format"), "pt") == 0,
          "metadata format");
    CHECK(al_st_metadata(st, "note") && strcmp(al_st_metadata(st, "note"), meta[3]) == 0,
          "metadata note with escapes");
    CHECK(al_st_metadata(st, "") && strcmp(al_st_metadata(st, ""), "empty key") == 0,
          "metadata with an empty key");
    CHECK(al_st_metadata(st, "absent") == NULL, "absent metadata key");
    exercise(st, "round trip");
    al_st_free(st);

    /* The same tensors without metadata: no "__metadata__" entry at all. */
    s = al_st_serialize(entries, ne, NULL, 0, buf, needed, &again, &e);
    CHECK(s == AL_OK, "serialize without metadata: %s", e.msg);
    CHECK(!contains(buf, again, "__metadata__"), "no __metadata__ entry when n_meta is 0");
    st = NULL;
    CHECK(al_st_parse(buf, again, &st, &e) == AL_OK, "parse without metadata: %s", e.msg);
    CHECK(al_st_metadata(st, "format") == NULL, "no metadata");
    al_st_free(st);
    free(buf);
}

/* The bytes the reference implementation's own tests expect from its writer. */
static void test_reference_bytes(void) {
    al_error e;
    size_t n = 0;
    uint8_t buf[256];

    const float v[6] = {0, 1, 2, 3, 4, 5};
    al_st_entry attn = {"attn.0", v, 3, {1, 2, 3}};
    const char *h1 = "{\"attn.0\":{\"dtype\":\"F32\",\"shape\":[1,2,3],\"data_offsets\":[0,24]}}";
    size_t want_n;
    uint8_t *want = make_file(h1, v, 24, &want_n); /* 64 header bytes: no padding */
    CHECK(al_st_serialize(&attn, 1, NULL, 0, buf, sizeof buf, &n, &e) == AL_OK, "%s", e.msg);
    CHECK(n == want_n && want_n == 8 + 64 + 24 && memcmp(buf, want, n) == 0,
          "attn.0 bytes differ from the reference writer's");
    free(want);

    const uint8_t empty[] = {8, 0, 0, 0, 0, 0, 0, 0, '{', '}', ' ', ' ', ' ', ' ', ' ', ' '};
    CHECK(al_st_serialize(NULL, 0, NULL, 0, buf, sizeof buf, &n, &e) == AL_OK, "%s", e.msg);
    CHECK(n == sizeof empty && memcmp(buf, empty, n) == 0, "empty file bytes");

    const char *meta[] = {"framework", "pt"};
    want = make_file("{\"__metadata__\":{\"framework\":\"pt\"}}", NULL, 0, &want_n);
    CHECK(al_st_serialize(NULL, 0, meta, 1, buf, sizeof buf, &n, &e) == AL_OK, "%s", e.msg);
    CHECK(n == want_n && n == 48 && memcmp(buf, want, n) == 0, "metadata-only file bytes");
    free(want);
}

static void test_serialize_errors(void) {
    const float v[4] = {1, 2, 3, 4};
    al_error e;
    size_t n;
    uint8_t buf[512];
    struct {
        al_st_entry entries[2];
        int ne;
        const char *meta[4];
        int nm;
        al_status want;
        const char *fragment;
    } cases[] = {
        {{{NULL, v, 1, {4}}}, 1, {0}, 0, AL_ERR_ARG, "name is NULL"},
        {{{"w", v, 1, {4}}, {"w", v, 1, {2}}}, 2, {0}, 0, AL_ERR_ARG, "duplicate entry name 'w'"},
        {{{"__metadata__", v, 1, {4}}}, 1, {0}, 0, AL_ERR_ARG, "reserved"},
        {{{"w", v, 9, {1}}}, 1, {0}, 0, AL_ERR_ARG, "ndim 9"},
        {{{"w", v, -1, {1}}}, 1, {0}, 0, AL_ERR_ARG, "ndim -1"},
        {{{"w", v, 2, {2, -2}}}, 1, {0}, 0, AL_ERR_ARG, "shape[1] = -2 is negative"},
        {{{"w", NULL, 1, {4}}}, 1, {0}, 0, AL_ERR_ARG, "data is NULL"},
        {{{"w\xff", v, 1, {4}}}, 1, {0}, 0, AL_ERR_ARG, "'w\\xff': name is not valid UTF-8"},
        /* a character that would turn the line round, and a newline, shown by name */
        {{{"w\xe2\x80\xae\n", v, 1, {4}}, {"w\xe2\x80\xae\n", v, 1, {2}}}, 2, {0}, 0, AL_ERR_ARG,
         "duplicate entry name 'w\\u{202e}\\n'"},
        {{{"w", v, 2, {(int64_t)1 << 40, (int64_t)1 << 40}}}, 1, {0}, 0, AL_ERR_LIMIT,
         "too many elements"},
        {{{"w", v, 1, {4}}}, 1, {"k", "\xc0\xaf"}, 1, AL_ERR_ARG, "not valid UTF-8"},
        {{{"w", v, 1, {4}}}, 1, {"k", "a", "k", "b"}, 2, AL_ERR_ARG,
         "duplicate metadata key 'k'"},
        {{{"w", v, 1, {4}}}, 1, {NULL, "a"}, 1, AL_ERR_ARG, "metadata key 0 is NULL"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        al_status s = al_st_serialize(cases[i].entries, cases[i].ne, cases[i].meta, cases[i].nm,
                                      buf, sizeof buf, &n, &e);
        CHECK(s == cases[i].want && strstr(e.msg, cases[i].fragment),
              "serialize case %zu: status %d, message '%s', want '%s'", i, (int)s, e.msg,
              cases[i].fragment);
        check_err(s, &e, "serialize error");
    }
    al_st_entry ok = {"w", v, 1, {4}};
    CHECK(al_st_serialize(&ok, -1, NULL, 0, buf, sizeof buf, &n, &e) == AL_ERR_ARG, "n < 0");
    CHECK(al_st_serialize(NULL, 1, NULL, 0, buf, sizeof buf, &n, &e) == AL_ERR_ARG, "NULL entries");
    CHECK(al_st_serialize(&ok, 1, NULL, 1, buf, sizeof buf, &n, &e) == AL_ERR_ARG, "NULL meta");
    CHECK(al_st_serialize(&ok, 1, NULL, 0, NULL, 0, NULL, &e) == AL_ERR_ARG, "nowhere to report");
    CHECK(al_st_serialize(&ok, 1, NULL, 0, buf, sizeof buf, NULL, NULL) == AL_OK,
          "needed and err may be NULL when writing");
    /* An empty tensor needs no data pointer. */
    al_st_entry empty = {"e", NULL, 2, {3, 0}};
    CHECK(al_st_serialize(&empty, 1, NULL, 0, buf, sizeof buf, &n, &e) == AL_OK, "%s", e.msg);
}

static void test_api_errors(void) {
    al_error e;
    al_safetensors *st = (al_safetensors *)&e; /* must be reset to NULL on failure */
    const uint8_t junk[4] = {1, 2, 3, 4};
    CHECK(al_st_parse(junk, 4, NULL, &e) == AL_ERR_ARG, "out NULL");
    CHECK(al_st_parse(NULL, 4, &st, &e) == AL_ERR_ARG && st == NULL, "bytes NULL");
    CHECK(al_st_parse(NULL, 0, &st, &e) == AL_ERR_FORMAT && strstr(e.msg, "empty"), "empty");
    CHECK(al_st_parse(junk, 4, &st, NULL) == AL_ERR_FORMAT, "err may be NULL");
    al_st_free(NULL);
    CHECK(al_st_count(NULL) == 0, "count(NULL)");
    CHECK(al_st_metadata(NULL, "k") == NULL, "metadata(NULL)");
    al_st_tensor t;
    CHECK(al_st_get(NULL, 0, &t) == AL_ERR_ARG, "get(NULL)");
    CHECK(al_st_find(NULL, "w", &t) == AL_ERR_ARG, "find(NULL)");
    CHECK(al_st_index(NULL, "w") == -1, "index(NULL)");
    CHECK(al_st_read_f32(NULL, "w", NULL, 0, &e) == AL_ERR_ARG, "read(NULL)");

    const char *hdr = "{\"w\":{\"dtype\":\"F32\",\"shape\":[2,2],\"data_offsets\":[0,16]},"
                      "\"pos\":{\"dtype\":\"I64\",\"shape\":[1],\"data_offsets\":[16,24]},"
                      "\"none\":{\"dtype\":\"F16\",\"shape\":[0],\"data_offsets\":[24,24]},"
                      "\"flags\":{\"dtype\":\"BOOL\",\"shape\":[3],\"data_offsets\":[24,27]}}";
    uint8_t data[27] = {0};
    float four[4] = {1, 2, 3, 4};
    memcpy(data, four, 16);
    size_t size;
    uint8_t *file = make_file(hdr, data, sizeof data, &size);
    CHECK(al_st_parse(file, size, &st, &e) == AL_OK, "api file: %s", e.msg);
    free(file);
    if (!st) return;
    CHECK(al_st_get(st, -1, &t) == AL_ERR_ARG, "get(-1)");
    CHECK(al_st_get(st, 4, &t) == AL_ERR_ARG, "get(count)");
    CHECK(al_st_get(st, 0, NULL) == AL_ERR_ARG, "get info NULL");
    CHECK(al_st_find(st, "nope", &t) == AL_ERR_MISSING, "find missing");
    CHECK(al_st_index(st, "nope") == -1 && al_st_index(st, NULL) == -1, "index of a missing name");
    CHECK(al_st_index(st, "w") == 0 && al_st_index(st, "flags") == 3, "index in the header's order");
    CHECK(al_st_find(st, NULL, &t) == AL_ERR_ARG, "find NULL name");
    CHECK(al_st_find(st, "pos", &t) == AL_OK && t.dtype == AL_DTYPE_I64 && t.nbytes == 8,
          "I64 tensor indexed");
    CHECK(al_st_find(st, "flags", &t) == AL_OK && t.dtype == AL_DTYPE_OTHER &&
              strcmp(t.dtype_name, "BOOL") == 0 && t.nbytes == 3,
          "BOOL tensor indexed as OTHER");
    float out[4] = {9, 9, 9, 9};
    al_status s = al_st_read_f32(st, "nope", out, 4, &e);
    CHECK(s == AL_ERR_MISSING && strstr(e.msg, "no tensor named 'nope'"), "read missing: %s", e.msg);
    check_err(s, &e, "read missing");
    s = al_st_read_f32(st, "w", out, 3, &e);
    CHECK(s == AL_ERR_CAPACITY && strstr(e.msg, "has 4 elements but the buffer holds 3"),
          "read small: %s", e.msg);
    CHECK(out[0] == 9, "a refused read writes nothing");
    CHECK(al_st_read_f32(st, "w", NULL, 4, &e) == AL_ERR_ARG, "read out NULL");
    s = al_st_read_f32(st, "pos", out, 4, &e);
    CHECK(s == AL_ERR_DTYPE && strstr(e.msg, "dtype I64"), "read I64: %s", e.msg);
    s = al_st_read_f32(st, "flags", out, 4, &e);
    CHECK(s == AL_ERR_DTYPE && strstr(e.msg, "dtype BOOL"), "read BOOL: %s", e.msg);
    CHECK(al_st_read_f32(st, "none", NULL, 0, &e) == AL_OK, "empty read needs no buffer");
    CHECK(al_st_read_f32(st, "w", out, 4, NULL) == AL_OK && out[3] == 4, "read w");
    al_st_free(st);

    /* Gaps between tensors and bytes after the last one are tolerated (documented). */
    hdr = "{\"a\":{\"dtype\":\"U8\",\"shape\":[2],\"data_offsets\":[4,6]}}";
    file = make_file(hdr, "xxxxabyyyy", 10, &size);
    CHECK(al_st_parse(file, size, &st, &e) == AL_OK, "gap and tail: %s", e.msg);
    CHECK(al_st_find(st, "a", &t) == AL_OK && memcmp(t.data, "ab", 2) == 0, "gap data");
    al_st_free(st);
    free(file);

    /* An attention-only MiniMind's FFN: [0, 4] and [4, 0], empty ranges between two tensors and
     * at the very end of the data section, as torch's writer places them. */
    hdr = "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
          "\"gate\":{\"dtype\":\"F32\",\"shape\":[0,4],\"data_offsets\":[4,4]},"
          "\"b\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]},"
          "\"down\":{\"dtype\":\"F32\",\"shape\":[4,0],\"data_offsets\":[8,8]}}";
    file = make_file(hdr, four, 8, &size);
    CHECK(al_st_parse(file, size, &st, &e) == AL_OK, "empty tensors: %s", e.msg);
    free(file);
    if (!st) return;
    CHECK(al_st_find(st, "down", &t) == AL_OK && t.ndim == 2 && t.shape[0] == 4 && t.shape[1] == 0 && t.numel == 0 &&
              t.nbytes == 0,
          "empty tensor at the end of the data");
    CHECK(al_st_find(st, "gate", &t) == AL_OK && t.shape[0] == 0 && t.numel == 0, "empty tensor between two");
    CHECK(al_st_read_f32(st, "down", NULL, 0, &e) == AL_OK && al_st_read_f32(st, "b", out, 1, &e) == AL_OK && out[0] == 2,
          "reads around the empty tensors");
    al_st_free(st);
}

/* ---- f16 / bf16 ---------------------------------------------------------------------------- */

/* Reads one 16-bit pattern as a 1-element tensor of `dtype`. */
static al_status read_one16(const char *dtype, uint16_t bits, float *out, al_error *e) {
    char hdr[128];
    uint8_t data[2] = {(uint8_t)bits, (uint8_t)(bits >> 8)};
    snprintf(hdr, sizeof hdr, "{\"x\":{\"dtype\":\"%s\",\"shape\":[1],\"data_offsets\":[0,2]}}",
             dtype);
    size_t size;
    uint8_t *file = make_file(hdr, data, 2, &size);
    al_safetensors *st = NULL;
    al_status s = al_st_parse(file, size, &st, e);
    free(file);
    if (s == AL_OK) s = al_st_read_f32(st, "x", out, 1, e);
    al_st_free(st);
    return s;
}

/* The value of a binary16 / bfloat16 pattern by arithmetic (not bit tricks): sign · m · 2^e. */
static float ref_f16(uint16_t h) {
    int exp = h >> 10 & 31, mant = h & 1023;
    double v = exp == 0 ? ldexp(mant, -24) : ldexp(1024 + mant, exp - 25);
    return (float)(h & 0x8000 ? -v : v);
}
static float ref_bf16(uint16_t h) {
    int exp = h >> 7 & 255, mant = h & 127;
    double v = exp == 0 ? ldexp(mant, -133) : ldexp(128 + mant, exp - 134);
    return (float)(h & 0x8000 ? -v : v);
}

/* Every finite pattern in one tensor, compared bit for bit with the arithmetic value;
 * every non-finite pattern alone, which must be refused with its kind named. */
static void exhaustive16(const char *dtype, int exp_shift, float (*ref)(uint16_t)) {
    uint16_t exp_mask = (uint16_t)((dtype[0] == 'F' ? 0x1F : 0xFF) << exp_shift);
    uint8_t *data = malloc(2 * 65536);
    int n = 0;
    for (uint32_t h = 0; h < 65536; h++)
        if ((h & exp_mask) != exp_mask) {
            data[2 * n] = (uint8_t)h;
            data[2 * n + 1] = (uint8_t)(h >> 8);
            n++;
        }
    char hdr[128];
    snprintf(hdr, sizeof hdr, "{\"all\":{\"dtype\":\"%s\",\"shape\":[%d],\"data_offsets\":[0,%d]}}",
             dtype, n, 2 * n);
    size_t size;
    uint8_t *file = make_file(hdr, data, (size_t)(2 * n), &size);
    al_safetensors *st = NULL;
    al_error e;
    float *out = malloc((size_t)n * sizeof(float));
    CHECK(al_st_parse(file, size, &st, &e) == AL_OK, "%s exhaustive parse: %s", dtype, e.msg);
    CHECK(al_st_read_f32(st, "all", out, n, &e) == AL_OK, "%s exhaustive read: %s", dtype, e.msg);
    int bad = 0;
    for (int i = 0; i < n; i++) {
        uint16_t h = (uint16_t)(data[2 * i] | data[2 * i + 1] << 8);
        if (f2u(out[i]) != f2u(ref(h)) && bad++ < 5)
            fprintf(stderr, "%s 0x%04x: got 0x%08x want 0x%08x\n", dtype, h, f2u(out[i]),
                    f2u(ref(h)));
    }
    CHECK(bad == 0, "%s: %d of %d patterns converted wrongly", dtype, bad, n);
    al_st_free(st);
    free(file);
    free(out);
    free(data);

    int refused = 0, shown = 0;
    for (uint32_t h = 0; h < 65536; h++) {
        if ((h & exp_mask) != exp_mask) continue;
        float f = 0;
        int is_nan = (h & ((1u << exp_shift) - 1)) != 0;
        const char *want = is_nan ? "is NaN" : (h & 0x8000) ? "is -inf" : "is +inf";
        al_status s = read_one16(dtype, (uint16_t)h, &f, &e);
        if (s == AL_ERR_NONFINITE && strstr(e.msg, "tensor 'x': element 0 ") &&
            strstr(e.msg, want))
            refused++;
        else if (shown++ < 5)
            fprintf(stderr, "%s 0x%04x: %d %s\n", dtype, h, (int)s, e.msg);
    }
    CHECK(refused == (int)(65536 - (unsigned)n), "%s: %d non-finite patterns refused of %d",
          dtype, refused, 65536 - n);
}

static void test_half_conversion(void) {
    static const struct { uint16_t bits; float want; } f16[] = {
        {0x0000, 0.0f}, {0x8000, -0.0f}, {0x3C00, 1.0f}, {0xC000, -2.0f},
        {0x7BFF, 65504.0f}, {0xFBFF, -65504.0f}, {0x0001, 0x1p-24f}, {0x8001, -0x1p-24f},
        {0x03FF, 0x1.ff8p-15f}, {0x0400, 0x1p-14f}, {0x3555, 0x1.554p-2f}, {0x3BFF, 0x1.ffcp-1f},
        {0x0200, 0x1p-15f}, {0x4248, 3.140625f}};
    static const struct { uint16_t bits; float want; } bf16[] = {
        {0x0000, 0.0f}, {0x8000, -0.0f}, {0x3F80, 1.0f}, {0xC040, -3.0f},
        {0x0001, 0x1p-133f}, {0x8001, -0x1p-133f}, {0x007F, 0x1.fcp-127f}, {0x0080, 0x1p-126f},
        {0x7F7F, 0x1.fep127f}, {0x3EAB, 0x1.56p-2f}};
    al_error e;
    for (size_t i = 0; i < sizeof f16 / sizeof f16[0]; i++) {
        float f = 99;
        al_status s = read_one16("F16", f16[i].bits, &f, &e);
        CHECK(s == AL_OK && f2u(f) == f2u(f16[i].want), "F16 0x%04x -> %a, want %a", f16[i].bits,
              f, f16[i].want);
    }
    for (size_t i = 0; i < sizeof bf16 / sizeof bf16[0]; i++) {
        float f = 99;
        al_status s = read_one16("BF16", bf16[i].bits, &f, &e);
        CHECK(s == AL_OK && f2u(f) == f2u(bf16[i].want), "BF16 0x%04x -> %a, want %a",
              bf16[i].bits, f, bf16[i].want);
    }
    exhaustive16("F16", 10, ref_f16);
    exhaustive16("BF16", 7, ref_bf16);

    /* float32: subnormals pass unchanged, every NaN payload and both infinities are refused. */
    static const struct { uint32_t bits; const char *want; } f32[] = {
        {0x00000001, NULL}, {0x807FFFFF, NULL}, {0x7F7FFFFF, NULL}, {0x7F800000, "is +inf"},
        {0xFF800000, "is -inf"}, {0x7FC00000, "is NaN"}, {0x7F800001, "is NaN"},
        {0xFFFFFFFF, "is NaN"}};
    for (size_t i = 0; i < sizeof f32 / sizeof f32[0]; i++) {
        uint8_t d[8];
        uint32_t b = f32[i].bits;
        float one = 1.0f;
        memcpy(d, &one, 4); /* element 1 is the pattern: the index is reported */
        for (int k = 0; k < 4; k++) d[4 + k] = (uint8_t)(b >> (8 * k));
        size_t size;
        uint8_t *file = make_file("{\"v\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}",
                                  d, 8, &size);
        al_safetensors *st = NULL;
        float out[2];
        CHECK(al_st_parse(file, size, &st, &e) == AL_OK, "f32 parse");
        al_status s = al_st_read_f32(st, "v", out, 2, &e);
        if (f32[i].want)
            CHECK(s == AL_ERR_NONFINITE && strstr(e.msg, "tensor 'v': element 1 ") &&
                      strstr(e.msg, f32[i].want),
                  "F32 0x%08x: %d %s", b, (int)s, e.msg);
        else
            CHECK(s == AL_OK && f2u(out[1]) == b && out[0] == 1.0f, "F32 0x%08x passes", b);
        al_st_free(st);
        free(file);
    }
}

/* ---- the files of tests/malformed ----------------------------------------------------------- */

typedef struct {
    char file[128];
    char stage[16];
    char status[16];
    char fragment[256];
} expected_row;

static al_status status_by_name(const char *s) {
    if (strcmp(s, "OK") == 0) return AL_OK;
    if (strcmp(s, "FORMAT") == 0) return AL_ERR_FORMAT;
    if (strcmp(s, "NONFINITE") == 0) return AL_ERR_NONFINITE;
    if (strcmp(s, "DTYPE") == 0) return AL_ERR_DTYPE;
    if (strcmp(s, "LIMIT") == 0) return AL_ERR_LIMIT;
    return (al_status)-1;
}

static int load_expected(const char *dir, expected_row **rows_out) {
    char path[1024], line[1024];
    snprintf(path, sizeof path, "%s/EXPECTED.txt", dir);
    FILE *f = fopen(path, "r");
    CHECK(f != NULL, "cannot open %s", path);
    if (!f) return 0;
    int n = 0, cap = 16;
    expected_row *rows = malloc((size_t)cap * sizeof *rows);
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\r\n")] = '\0';
        if (line[0] == '#' || line[0] == '\0') continue;
        if (n == cap) rows = realloc(rows, (size_t)(cap *= 2) * sizeof *rows);
        expected_row *r = &rows[n];
        int used = 0;
        if (sscanf(line, "%127s %15s %15s %n", r->file, r->stage, r->status, &used) != 3 ||
            used == 0) {
            CHECK(0, "EXPECTED.txt: bad line '%s'", line);
            continue;
        }
        snprintf(r->fragment, sizeof r->fragment, "%s", line + used);
        n++;
    }
    fclose(f);
    *rows_out = rows;
    return n;
}

static uint8_t *load(const char *dir, const char *file, size_t *size) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    return read_file(path, size); /* NULL after a failed check that says why */
}

/* Every float tensor of `st` equals the same-named tensor of `ref` (float32) bit for bit. */
static void compare_with_reference(const al_safetensors *st, const al_safetensors *ref,
                                   const char *file) {
    int n_float = 0;
    for (int i = 0; i < al_st_count(st); i++) {
        al_st_tensor t, r;
        al_st_get(st, i, &t);
        if (!convertible(t.dtype)) continue;
        n_float++;
        CHECK(al_st_find(ref, t.name, &r) == AL_OK && r.dtype == AL_DTYPE_F32 &&
                  r.numel == t.numel && r.ndim == t.ndim,
              "%s: '%s' missing or different in the reference", file, t.name);
        if (r.numel != t.numel) continue;
        float *a = malloc((size_t)(t.numel + 1) * 4), *b = malloc((size_t)(t.numel + 1) * 4);
        al_error e;
        CHECK(al_st_read_f32(st, t.name, a, t.numel, &e) == AL_OK, "%s: %s", file, e.msg);
        CHECK(al_st_read_f32(ref, t.name, b, t.numel, &e) == AL_OK, "%s ref: %s", file, e.msg);
        CHECK(memcmp(a, b, (size_t)t.numel * 4) == 0, "%s: '%s' differs from torch's float32",
              file, t.name);
        free(a);
        free(b);
    }
    CHECK(n_float == al_st_count(ref), "%s: %d float tensors, reference has %d", file, n_float,
          al_st_count(ref));
}

/* What the valid files hold, beyond "it parses": values computed here independently. */
static void check_valid_contents(const char *file, const al_safetensors *st) {
    al_st_tensor t;
    float out[64];
    al_error e;
    if (strcmp(file, "valid_f32.safetensors") == 0) {
        CHECK(al_st_read_f32(st, "ramp", out, 64, &e) == AL_OK, "ramp: %s", e.msg);
        for (int i = 0; i < 12; i++) CHECK(out[i] == i * 0.25f - 1.0f, "ramp[%d] = %g", i, out[i]);
        CHECK(al_st_find(st, "q_proj.weight", &t) == AL_OK && t.ndim == 2 && t.shape[0] == 8 &&
                  t.shape[1] == 16,
              "q_proj.weight shape");
        CHECK(al_st_metadata(st, "format") && strcmp(al_st_metadata(st, "format"), "pt") == 0,
              "valid_f32 metadata");
    } else if (strcmp(file, "valid_mixed.safetensors") == 0) {
        const char *note = al_st_metadata(st, "note");
        CHECK(note && strcmp(note, "quote \" backslash \\ newline \n tab \t \xc3\xa9 \xe2\x98\x83 "
                                   "\xf0\x9f\x98\x80") == 0,
              "valid_mixed note: %s", note ? note : "(null)");
        CHECK(al_st_find(st, "positions", &t) == AL_OK && t.dtype == AL_DTYPE_I64 && t.numel == 5,
              "positions is I64");
        int64_t pos[5];
        if (t.nbytes == 40) {
            memcpy(pos, t.data, 40); /* little-endian host assumed by this check only */
            for (int i = 0; i < 5; i++) CHECK(pos[i] == i, "positions[%d]", i);
        }
        CHECK(al_st_find(st, "empty", &t) == AL_OK && t.numel == 0 && t.ndim == 2 &&
                  t.shape[0] == 0 && t.shape[1] == 3,
              "empty tensor");
        CHECK(al_st_find(st, "scalar", &t) == AL_OK && t.ndim == 0 && t.numel == 1, "scalar");
        CHECK(al_st_read_f32(st, "scalar", out, 1, &e) == AL_OK && out[0] == 2.5f, "scalar value");
        CHECK(al_st_find(st, "model.layers.0.self_attn.q_norm.weight", &t) == AL_OK &&
                  t.dtype == AL_DTYPE_F16,
              "q_norm is F16");
        CHECK(al_st_find(st, "model.layers.0.self_attn.k_norm.weight", &t) == AL_OK &&
                  t.dtype == AL_DTYPE_BF16,
              "k_norm is BF16");
    } else if (strcmp(file, "valid_unordered.safetensors") == 0) {
        CHECK(al_st_count(st) == 2, "two tensors");
        CHECK(al_st_get(st, 0, &t) == AL_OK && strcmp(t.name, "k_proj.weight") == 0,
              "header order kept");
        CHECK(al_st_read_f32(st, "k_proj.weight", out, 2, &e) == AL_OK && out[0] == 7.0f &&
                  out[1] == -7.0f,
              "k_proj values");
        CHECK(al_st_find(st, "q_proj.weight", &t) == AL_OK && t.numel == 4,
              "\\u0071 decoded in a name");
        const char *v = al_st_metadata(st, "s\xc3\xa9" "ed");
        CHECK(v && strcmp(v, "\xf0\x9f\x98\x80") == 0, "surrogate pair decoded");
    } else if (strcmp(file, "valid_no_tensors.safetensors") == 0) {
        CHECK(al_st_count(st) == 0, "no tensors");
    }
}

static int test_files(const char *dir, expected_row *rows, int n) {
    int n_parse = 0, n_read = 0, n_ok = 0;
    for (int i = 0; i < n; i++) {
        expected_row *r = &rows[i];
        size_t size = 0;
        uint8_t *bytes = load(dir, r->file, &size);
        if (!bytes) continue;
        al_status want = status_by_name(r->status);
        CHECK((int)want >= 0, "%s: unknown status %s", r->file, r->status);
        al_safetensors *st = NULL;
        al_error e;
        memset(&e, 0, sizeof e);
        al_status s = al_st_parse(bytes, size, &st, &e);
        check_err(s, &e, r->file);
        if (strcmp(r->stage, "parse") == 0) {
            n_parse++;
            CHECK(s != AL_OK && s == want && st == NULL && strstr(e.msg, r->fragment),
                  "%s: status %d, message '%s'; want status %s and '%s'", r->file, (int)s, e.msg,
                  r->status, r->fragment);
        } else if (strcmp(r->stage, "read") == 0) {
            n_read++;
            CHECK(s == AL_OK, "%s: parse should succeed: %s", r->file, e.msg);
            int matched = 0;
            for (int k = 0; st && k < al_st_count(st); k++) {
                al_st_tensor t;
                float out[256];
                al_st_get(st, k, &t);
                al_status rs = al_st_read_f32(st, t.name, out, 256, &e);
                check_err(rs, &e, r->file);
                if (rs != AL_OK) {
                    CHECK(rs == want && strstr(e.msg, r->fragment),
                          "%s: read status %d, message '%s'; want status %s and '%s'", r->file,
                          (int)rs, e.msg, r->status, r->fragment);
                    matched = 1;
                    break;
                }
            }
            CHECK(matched, "%s: every read succeeded, want '%s'", r->file, r->fragment);
        } else if (strcmp(r->stage, "ok") == 0) {
            n_ok++;
            CHECK(s == AL_OK, "%s: %s", r->file, e.msg);
            if (st) {
                CHECK(exercise(st, r->file) == 0, "%s: a float tensor was refused", r->file);
                check_valid_contents(r->file, st);
                if (strcmp(r->fragment, "-") != 0) {
                    size_t rsize;
                    uint8_t *rbytes = load(dir, r->fragment, &rsize);
                    al_safetensors *ref = NULL;
                    if (rbytes && al_st_parse(rbytes, rsize, &ref, &e) == AL_OK)
                        compare_with_reference(st, ref, r->file);
                    else
                        CHECK(0, "%s: reference %s unreadable", r->file, r->fragment);
                    al_st_free(ref);
                    free(rbytes);
                }
            }
        } else {
            CHECK(0, "%s: unknown stage %s", r->file, r->stage);
        }
        al_st_free(st);
        free(bytes);
    }
    printf("files: %d must fail to parse, %d must fail to read, %d valid\n", n_parse, n_read, n_ok);
    CHECK(n_parse >= 50 && n_read >= 5 && n_ok >= 5, "too few files listed");

    /* Every fragment is distinct, so each file proves its own check fired. */
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++)
            if (strcmp(rows[i].stage, "ok") != 0 && strcmp(rows[j].stage, "ok") != 0)
                CHECK(strcmp(rows[i].fragment, rows[j].fragment) != 0,
                      "%s and %s expect the same fragment", rows[i].file, rows[j].file);

    /* No file in the folder is forgotten by EXPECTED.txt. */
    DIR *d = opendir(dir);
    CHECK(d != NULL, "cannot list %s", dir);
    struct dirent *ent;
    while (d && (ent = readdir(d))) {
        size_t len = strlen(ent->d_name);
        if (len < 12 || strcmp(ent->d_name + len - 12, ".safetensors") != 0) continue;
        int listed = 0;
        for (int i = 0; i < n && !listed; i++) listed = strcmp(rows[i].file, ent->d_name) == 0;
        CHECK(listed, "%s is not listed in EXPECTED.txt", ent->d_name);
    }
    if (d) closedir(d);
    return n;
}

/* ---- truncations and mutations ------------------------------------------------------------- */

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint64_t rng_next(void) { /* xorshift64*: deterministic, so failures reproduce */
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545F4914F6CDD1Dull;
}

static void try_parse(const uint8_t *bytes, size_t size, const char *ctx, long *n_ok) {
    al_safetensors *st = (al_safetensors *)&rng_state;
    al_error e;
    memset(&e, 0, sizeof e);
    /* An exact-size heap copy, so ASan catches any read past the end of the image. */
    uint8_t *copy = malloc(size ? size : 1);
    if (size) memcpy(copy, bytes, size);
    al_status s = al_st_parse(size ? copy : NULL, size, &st, &e);
    free(copy);
    check_err(s, &e, ctx);
    if (s == AL_OK) {
        (*n_ok)++;
        exercise(st, ctx);
        al_st_free(st);
    } else {
        CHECK(st == NULL, "%s: out not reset on failure", ctx);
    }
}

static void test_fuzz(const char *dir, expected_row *rows, int n) {
    long runs = 0, n_ok = 0;
    for (int i = 0; i < n; i++) {
        size_t size = 0;
        uint8_t *bytes = load(dir, rows[i].file, &size);
        if (!bytes) continue;
        char ctx[300];
        snprintf(ctx, sizeof ctx, "%s (truncated)", rows[i].file);
        for (size_t len = 0; len < size; len++, runs++) try_parse(bytes, len, ctx, &n_ok);
        snprintf(ctx, sizeof ctx, "%s (mutated)", rows[i].file);
        uint8_t *m = malloc(size ? size : 1);
        for (int k = 0; size && k < 300; k++, runs++) {
            memcpy(m, bytes, size);
            uint64_t r = rng_next();
            /* Half the mutations hit the 8-byte length or the header, where parsing happens. */
            size_t pos = (size_t)(r >> 16) % size;
            if (k % 2 == 0) {
                uint64_t h = 0;
                for (int b = 7; b >= 0 && size >= 8; b--) h = h << 8 | bytes[b];
                size_t span = size >= 8 && h + 8 <= size ? (size_t)h + 8 : size;
                pos = (size_t)(r >> 16) % span;
            }
            uint8_t v = (uint8_t)(r >> 8);
            switch (r % 4) {
            case 0: v = (uint8_t)(m[pos] ^ (1u << (r >> 40) % 8)); break; /* one bit */
            case 1: v = "{}[]\",:\\0-.e9 u"[(r >> 40) % 16]; break;         /* JSON syntax */
            default: break;                                                 /* any byte */
            }
            m[pos] = v;
            try_parse(m, size, ctx, &n_ok);
        }
        free(m);
        free(bytes);
    }
    printf("fuzz: %ld parses of truncated or mutated files, %ld of them accepted\n", runs, n_ok);
}

/* Writing float16: every half written back is itself (all 65536 bit patterns but NaNs, which
 * stay NaN), and a float between two halves becomes the nearer one (ties: the even one), read
 * back through the reader's own float16 path — round-to-nearest-even, as torch's .half(). */
static float half_value(uint16_t h) {
    float v = 0.0f;
    uint8_t img[256];
    /* a one-element F16 file built by hand, read by the reader */
    const char header[] = "{\"h\":{\"dtype\":\"F16\",\"shape\":[1],\"data_offsets\":[0,2]}}      ";
    const uint64_t n = sizeof header - 1;
    for (int i = 0; i < 8; i++) img[i] = (uint8_t)(n >> (8 * i));
    memcpy(img + 8, header, n);
    img[8 + n] = (uint8_t)h, img[9 + n] = (uint8_t)(h >> 8);
    al_safetensors *st = NULL;
    if (al_st_parse(img, 10 + n, &st, NULL) == AL_OK) {
        al_st_tensor t;
        if (al_st_find(st, "h", &t) == AL_OK) {
            float out[1];
            al_error err = {0};
            if (al_st_read_f32(st, "h", out, 1, &err) == AL_OK) v = out[0];
            else v = (h & 0x7C00) == 0x7C00 ? ((h & 0x3FF) ? NAN : (h & 0x8000 ? -INFINITY : INFINITY)) : NAN;
        }
        al_st_free(st);
    }
    return v;
}

static uint16_t written_half(float f) {
    const al_st_entry e = {"x", &f, 1, {1}};
    uint8_t buf[256];
    size_t size = 0;
    al_error err = {0};
    CHECK(al_st_serialize_as(&e, 1, AL_DTYPE_F16, NULL, 0, buf, sizeof buf, &size, &err) == AL_OK, "%s", err.msg);
    return (uint16_t)(buf[size - 2] | buf[size - 1] << 8);
}

static void test_f16_writing(void) {
    int bad = 0;
    for (uint32_t h = 0; h < 65536; h++) {
        const float v = half_value((uint16_t)h);
        if (!isfinite(v)) continue; /* refused, below */
        if (written_half(v) != h) bad++;
    }
    CHECK(bad == 0, "%d halves written back differently", bad);
    /* between neighbours: the nearer wins, ties to the even one */
    unsigned seed = 12345;
    int wrong = 0;
    for (int i = 0; i < 20000; i++) {
        seed = seed * 1103515245u + 12345u;
        const uint16_t lo = (uint16_t)(seed >> 16) & 0x7BFE; /* finite, below the largest */
        const float a = half_value(lo), b = half_value((uint16_t)(lo + 1));
        const float t = (float)((seed >> 3) & 0xFF) / 256.0f, f = a + (b - a) * t;
        const uint16_t got = written_half(f);
        const double da = fabs((double)f - a), db = fabs((double)b - f);
        const uint16_t want = da < db ? lo : db < da ? (uint16_t)(lo + 1) : ((lo & 1) ? (uint16_t)(lo + 1) : lo);
        wrong += got != want;
    }
    CHECK(wrong == 0, "%d floats rounded to the wrong half", wrong);
    /* 65504 is the largest half and 65536 would be the next: 65520 is the tie, to the even one
     * (infinity); below it, down to 65504 (IEEE binary16's rounding, torch's .half()). Values that
     * would be written as infinity, and infinity and NaN themselves, are refused. */
    CHECK(written_half(65519.0f) == 0x7BFF && written_half(-65519.996f) == 0xFBFF, "65519 to 65504");
    const float refused[] = {65520.0f, -65520.0f, 70000.0f, 3e38f, INFINITY, -INFINITY, NAN};
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        const float big[3] = {1.0f, 2.0f, refused[i]};
        const al_st_entry e = {"w", big, 2, {1, 3}};
        al_error err = {0};
        size_t size = 0;
        CHECK(al_st_serialize_as(&e, 1, AL_DTYPE_F16, NULL, 0, NULL, 0, &size, &err) == AL_ERR_NONFINITE &&
                  strstr(err.msg, "tensor 'w': element 2 (index [0, 2])") && strstr(err.msg, "float16 cannot hold"),
              "%g as float16: %s", (double)refused[i], err.msg);
        CHECK(al_st_serialize_as(&e, 1, AL_DTYPE_F32, NULL, 0, NULL, 0, &size, &err) == AL_OK, "%g as float32: %s",
              (double)refused[i], err.msg);
    }
    CHECK(written_half(1e-10f) == 0 && written_half(-1e-10f) == 0x8000, "below the smallest half: zero");
    const al_st_entry e = {"x", NULL, 0, {0}};
    CHECK(al_st_serialize_as(&e, 1, AL_DTYPE_BF16, NULL, 0, NULL, 0, &(size_t){0}, NULL) == AL_ERR_ARG, "BF16 refused");
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s <folder with EXPECTED.txt>\n", argv[0]);
        return 2;
    }
    test_round_trip();
    test_reference_bytes();
    test_serialize_errors();
    test_api_errors();
    test_half_conversion();
    test_f16_writing();
    expected_row *rows = NULL;
    int n = load_expected(argv[1], &rows);
    test_files(argv[1], rows, n);
    test_fuzz(argv[1], rows, n);
    free(rows);
    CHECK_DONE();
}
