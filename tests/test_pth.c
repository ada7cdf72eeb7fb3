/* test_pth.c — the .pth reader (al_pth_to_safetensors) and the config.json written from a
 * state_dict's shapes (al_minimind_config_from_tensors). Archives and pickles are built here, byte
 * by byte, as torch.save lays them out: a valid one must read back exactly (float16, bfloat16,
 * float32, a shared storage, ZIP64 records, torch.save's local headers); each malformed one
 * (table below) must be refused with its own message. The given .pth files (the fixtures) must
 * read, and go through the fuzz harness, as must the fuzzer's regression inputs of any folder
 * given. A state_dict whose tensors view one storage many times is read with the storage
 * widened once; `--write DIR` leaves such files for tests/pth-memory.test.mjs.
 * usage: test_pth FILE.pth... [DIR...], or test_pth --write DIR */
#define _DEFAULT_SOURCE /* opendir */
#include "fuzz/fuzz_pth.c"

#include "check.h"
#include "io/pth.h"
#include "read_file.h"

#include <dirent.h>
#include <stdio.h>
#include <sys/stat.h>

/* ---- byte buffers ---------------------------------------------------------------------------- */

typedef struct {
    uint8_t *p;
    size_t n, cap;
} buf;

static void put(buf *b, const void *src, size_t n) {
    if (b->n + n > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->n + n) cap *= 2;
        uint8_t *p = realloc(b->p, cap);
        if (!p) abort();
        b->p = p;
        b->cap = cap;
    }
    if (n) memcpy(b->p + b->n, src, n);
    b->n += n;
}
static void put_le(buf *b, uint64_t v, int bytes) {
    for (int i = 0; i < bytes; i++) {
        const uint8_t c = (uint8_t)(v >> (8 * i));
        put(b, &c, 1);
    }
}
static void put8(buf *b, unsigned v) { put_le(b, v, 1); }
static void set_le(buf *b, size_t at, uint64_t v, int bytes) {
    for (int i = 0; i < bytes; i++) b->p[at + i] = (uint8_t)(v >> (8 * i));
}

/* ---- pickles: what torch.save's protocol-2 pickler writes ------------------------------------ */

static void pk_str(buf *b, const char *s) {
    put8(b, 'X');
    put_le(b, strlen(s), 4);
    put(b, s, strlen(s));
}
static void pk_global(buf *b, const char *module, const char *name) {
    put8(b, 'c');
    put(b, module, strlen(module));
    put8(b, '\n');
    put(b, name, strlen(name));
    put8(b, '\n');
}
static void pk_int(buf *b, int64_t v) {
    if (v >= 0 && v < 256) put8(b, 'K'), put8(b, (unsigned)v);
    else if (v >= 0 && v < 65536) put8(b, 'M'), put_le(b, (uint64_t)v, 2);
    else put8(b, 'J'), put_le(b, (uint64_t)v, 4);
}

typedef struct {
    const char *name;         /* the state_dict's key */
    const char *type;         /* "HalfStorage", ... */
    const char *key;          /* the storage's key */
    int64_t numel, offset;    /* the storage's elements; the tensor's offset in it */
    int ndim;
    int64_t size[10], stride[10];
    const char *location;     /* NULL: "cpu" */
} tdesc;

/* _rebuild_tensor_v2(('storage', torch.<type>, key, location, numel), offset, size, stride,
 * False, collections.OrderedDict()) */
static void pk_tensor(buf *b, const tdesc *t) {
    pk_global(b, "torch._utils", "_rebuild_tensor_v2");
    put8(b, '(');
    put8(b, '(');
    pk_str(b, "storage");
    pk_global(b, "torch", t->type);
    pk_str(b, t->key);
    pk_str(b, t->location ? t->location : "cpu");
    pk_int(b, t->numel);
    put8(b, 't');
    put8(b, 'Q');
    pk_int(b, t->offset);
    for (int pass = 0; pass < 2; pass++) {
        const int64_t *v = pass ? t->stride : t->size;
        if (t->ndim == 0) put8(b, ')');
        else if (t->ndim <= 3) {
            for (int d = 0; d < t->ndim; d++) pk_int(b, v[d]);
            put8(b, 0x85 + (unsigned)t->ndim - 1);
        } else {
            put8(b, '(');
            for (int d = 0; d < t->ndim; d++) pk_int(b, v[d]);
            put8(b, 't');
        }
    }
    put8(b, 0x89);
    pk_global(b, "collections", "OrderedDict");
    put8(b, ')');
    put8(b, 'R');
    put8(b, 't');
    put8(b, 'R');
}

/* {name: tensor, ...} */
static void pk_state_dict(buf *b, const tdesc *t, int n) {
    put8(b, 0x80), put8(b, 2);
    put8(b, '}');
    put8(b, 'q'), put8(b, 0);
    put8(b, '(');
    for (int i = 0; i < n; i++) {
        pk_str(b, t[i].name);
        pk_tensor(b, &t[i]);
    }
    put8(b, 'u');
    put8(b, '.');
}

/* ---- archives: stored entries, as torch.save writes them ------------------------------------- */

typedef struct {
    const char *name;
    const uint8_t *data;
    size_t size;
} zentry;

enum { ZIP_MAX = 16 };

/* Where the builder put things, for the cases that break them. */
typedef struct {
    buf b;
    size_t local_at[ZIP_MAX], central_at[ZIP_MAX], dir_at, end_at, locator_at, end64_at;
} zip_image;

static uint32_t crc32_of(const uint8_t *p, size_t n) {
    uint32_t crc = 0xFFFFFFFFu;
    for (size_t i = 0; i < n; i++) {
        crc ^= p[i];
        for (int k = 0; k < 8; k++) crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1)));
    }
    return ~crc;
}

/* torch_style: local headers with bit 3 set and sizes and CRC 0 (a data descriptor follows the
 * data), as PyTorch's miniz writes them. zip64: ZIP64 end records, and the classic fields
 * saturated with their values in each central entry's ZIP64 extra block. */
static zip_image make_zip(const zentry *e, int n, int torch_style, int zip64) {
    zip_image z;
    memset(&z, 0, sizeof z);
    buf *b = &z.b;
    for (int i = 0; i < n; i++) {
        const uint32_t crc = crc32_of(e[i].data, e[i].size);
        z.local_at[i] = b->n;
        put_le(b, 0x04034b50, 4);
        put_le(b, 20, 2);
        put_le(b, torch_style ? 0x808 : 0, 2);
        put_le(b, 0, 2); /* stored */
        put_le(b, 0, 4); /* time, date */
        put_le(b, torch_style ? 0 : crc, 4);
        put_le(b, torch_style ? 0 : e[i].size, 4);
        put_le(b, torch_style ? 0 : e[i].size, 4);
        put_le(b, strlen(e[i].name), 2);
        put_le(b, 0, 2);
        put(b, e[i].name, strlen(e[i].name));
        put(b, e[i].data, e[i].size);
        if (torch_style) {
            put_le(b, 0x08074b50, 4);
            put_le(b, crc, 4);
            put_le(b, e[i].size, 4);
            put_le(b, e[i].size, 4);
        }
    }
    z.dir_at = b->n;
    for (int i = 0; i < n; i++) {
        z.central_at[i] = b->n;
        put_le(b, 0x02014b50, 4);
        put_le(b, 20, 2);
        put_le(b, 20, 2);
        put_le(b, torch_style ? 0x808 : 0, 2);
        put_le(b, 0, 2);
        put_le(b, 0, 4);
        put_le(b, crc32_of(e[i].data, e[i].size), 4);
        put_le(b, zip64 ? 0xFFFFFFFFu : e[i].size, 4);
        put_le(b, zip64 ? 0xFFFFFFFFu : e[i].size, 4);
        put_le(b, strlen(e[i].name), 2);
        put_le(b, zip64 ? 28 : 0, 2); /* extra */
        put_le(b, 0, 2);                /* comment */
        put_le(b, 0, 2);                /* disk */
        put_le(b, 0, 2);
        put_le(b, 0, 4);
        put_le(b, zip64 ? 0xFFFFFFFFu : z.local_at[i], 4);
        put(b, e[i].name, strlen(e[i].name));
        if (zip64) {
            put_le(b, 1, 2);
            put_le(b, 24, 2);
            put_le(b, e[i].size, 8);
            put_le(b, e[i].size, 8);
            put_le(b, z.local_at[i], 8);
        }
    }
    const size_t dir_size = b->n - z.dir_at;
    if (zip64) {
        z.end64_at = b->n;
        put_le(b, 0x06064b50, 4);
        put_le(b, 44, 8);
        put_le(b, 45, 2);
        put_le(b, 45, 2);
        put_le(b, 0, 4);
        put_le(b, 0, 4);
        put_le(b, (uint64_t)n, 8);
        put_le(b, (uint64_t)n, 8);
        put_le(b, dir_size, 8);
        put_le(b, z.dir_at, 8);
        z.locator_at = b->n;
        put_le(b, 0x07064b50, 4);
        put_le(b, 0, 4);
        put_le(b, z.end64_at, 8);
        put_le(b, 1, 4);
    }
    z.end_at = b->n;
    put_le(b, 0x06054b50, 4);
    put_le(b, 0, 2);
    put_le(b, 0, 2);
    put_le(b, zip64 ? 0xFFFF : (unsigned)n, 2);
    put_le(b, zip64 ? 0xFFFF : (unsigned)n, 2);
    put_le(b, zip64 ? 0xFFFFFFFFu : dir_size, 4);
    put_le(b, zip64 ? 0xFFFFFFFFu : z.dir_at, 4);
    put_le(b, 0, 2);
    return z;
}

/* ---- the valid state_dict every case starts from ----------------------------------------------- */

/* Storage "0": six float16 values (1, -2, 0.5, 65504 the largest half, 2^-24 the smallest
 * subnormal, -0); "1": four float32; "2": two bfloat16 (1, -2.5). */
static const uint8_t HALVES[12] = {0x00, 0x3C, 0x00, 0xC0, 0x00, 0x38, 0xFF, 0x7B, 0x01, 0x00, 0x00, 0x80};
static const float HALVES_F32[6] = {1.0f, -2.0f, 0.5f, 65504.0f, 5.9604644775390625e-8f, -0.0f};
static const float FLOATS[4] = {3.25f, -1e-30f, 1e30f, 0.0f};
static const uint8_t BFLOATS[4] = {0x80, 0x3F, 0x20, 0xC0};

/* a [2, 3] of "0"; b [4] of "1"; c [3] = "0"[3:] (the storage shared, as tied weights share
 * theirs); d [1, 2] of "2", its size-1 dimension with a stride PyTorch ignores. */
static const tdesc BASE[4] = {
    {"a", "HalfStorage", "0", 6, 0, 2, {2, 3}, {3, 1}, NULL},
    {"b", "FloatStorage", "1", 4, 0, 1, {4}, {1}, NULL},
    {"c", "HalfStorage", "0", 6, 3, 1, {3}, {1}, "cuda:0"},
    {"d", "BFloat16Storage", "2", 2, 0, 2, {1, 2}, {7, 1}, NULL},
};

/* The archive of a pickle and the three storages (plus `extra` entries). */
static zip_image pth_of(const buf *pickle, const zentry *extra, int n_extra, int torch_style, int zip64) {
    uint8_t floats[16];
    for (int i = 0; i < 4; i++) {
        uint32_t bits;
        memcpy(&bits, &FLOATS[i], 4);
        for (int k = 0; k < 4; k++) floats[4 * i + k] = (uint8_t)(bits >> (8 * k));
    }
    zentry e[ZIP_MAX] = {
        {"archive/data.pkl", pickle->p, pickle->n},
        {"archive/data/0", HALVES, sizeof HALVES},
        {"archive/data/1", floats, sizeof floats},
        {"archive/data/2", BFLOATS, sizeof BFLOATS},
        {"archive/version", (const uint8_t *)"3\n", 2},
    };
    int n = 5;
    for (int i = 0; i < n_extra; i++) e[n++] = extra[i];
    return make_zip(e, n, torch_style, zip64);
}

static zip_image base_pth(int torch_style, int zip64) {
    buf pk = {0};
    pk_state_dict(&pk, BASE, 4);
    zip_image z = pth_of(&pk, NULL, 0, torch_style, zip64);
    free(pk.p);
    return z;
}

/* The base archive read back: every value, name, shape and the metadata. */
static void check_base(const char *what, const uint8_t *bytes, size_t size) {
    uint8_t *out = NULL;
    size_t out_size = 0;
    al_error err = {0};
    al_safetensors *st = NULL;
    const al_status s = al_pth_to_safetensors(bytes, size, &out, &out_size, &err);
    CHECK(s == AL_OK, "%s: %s", what, err.msg);
    if (s != AL_OK) return;
    CHECK(al_st_parse(out, out_size, &st, &err) == AL_OK, "%s: output: %s", what, err.msg);
    if (st) {
        static const char *const NAMES[4] = {"a", "b", "c", "d"};
        const float want_b[4] = {FLOATS[0], FLOATS[1], FLOATS[2], FLOATS[3]}, want_d[2] = {1.0f, -2.5f};
        const float *want[4] = {HALVES_F32, want_b, HALVES_F32 + 3, want_d};
        CHECK(al_st_count(st) == 4, "%s: %d tensors", what, al_st_count(st));
        for (int i = 0; i < 4 && i < al_st_count(st); i++) {
            al_st_tensor t;
            al_st_get(st, i, &t);
            CHECK(!strcmp(t.name, NAMES[i]) && t.dtype == AL_DTYPE_F32 && t.ndim == BASE[i].ndim, "%s: tensor %d is %s", what, i, t.name);
            for (int d = 0; d < t.ndim; d++) CHECK(t.shape[d] == BASE[i].size[d], "%s: %s's shape", what, t.name);
            float v[6];
            CHECK(al_st_read_f32(st, t.name, v, 6, &err) == AL_OK, "%s: %s", what, err.msg);
            /* exact, to the bit (-0 included) */
            CHECK(!memcmp(v, want[i], (size_t)t.numel * sizeof(float)), "%s: %s's values", what, t.name);
        }
        const char *dtype = al_st_metadata(st, "torch_dtype");
        CHECK(dtype && !strcmp(dtype, "mixed"), "%s: torch_dtype %s", what, dtype ? dtype : "(none)");
    }
    al_st_free(st);
    al_buffer_free(out);
}

static void test_valid(void) {
    zip_image z = base_pth(0, 0);
    check_base("plain archive", z.b.p, z.b.n);
    free(z.b.p);
    z = base_pth(1, 0);
    check_base("torch.save's local headers", z.b.p, z.b.n);
    free(z.b.p);
    z = base_pth(1, 1);
    check_base("ZIP64 records", z.b.p, z.b.n);
    /* A CRC of 0 means "not computed" (torch.save with compute_crc32 off): not checked. */
    for (int i = 0; i < 5; i++) set_le(&z.b, z.central_at[i] + 16, 0, 4);
    check_base("CRCs not computed", z.b.p, z.b.n);
    free(z.b.p);

    /* The same dict as an OrderedDict (REDUCE on collections.OrderedDict), with
     * SHORT_BINUNICODE keys and LONG_BINPUT / LONG_BINGET, through SETITEM one by one. */
    buf pk = {0};
    put8(&pk, 0x80), put8(&pk, 4);
    pk_global(&pk, "collections", "OrderedDict");
    put8(&pk, 'r'), put_le(&pk, 70000, 4);
    put8(&pk, ')');
    put8(&pk, 'R');
    for (int i = 0; i < 4; i++) {
        put8(&pk, 0x8c), put8(&pk, 1), put(&pk, BASE[i].name, 1);
        if (i == 0) pk_tensor(&pk, &BASE[i]), put8(&pk, 'r'), put_le(&pk, 70001, 4);
        else if (i == 2) put8(&pk, 'j'), put_le(&pk, 70001, 4); /* "c" is "a" again: check below */
        else pk_tensor(&pk, &BASE[i]);
        put8(&pk, 's');
    }
    put8(&pk, '.');
    z = pth_of(&pk, NULL, 0, 0, 0);
    uint8_t *out = NULL;
    size_t out_size = 0;
    al_error err = {0};
    al_safetensors *st = NULL;
    CHECK(al_pth_to_safetensors(z.b.p, z.b.n, &out, &out_size, &err) == AL_OK, "OrderedDict: %s", err.msg);
    if (out && al_st_parse(out, out_size, &st, &err) == AL_OK) {
        al_st_tensor c;
        CHECK(al_st_find(st, "c", &c) == AL_OK && c.numel == 6 && !memcmp(c.data, "\0\0\x80\x3f", 4), "memo: 'c' is not 'a'");
    }
    al_st_free(st);
    al_buffer_free(out);
    free(z.b.p);
    free(pk.p);
}

/* ---- malformed files ----------------------------------------------------------------------- */

typedef struct {
    const char *name;
    void (*make)(buf *out);
    al_status status;
    const char *message; /* a part of the message that only this case gives */
} bad_case;

/* The case's file: the archive built (and broken) into it. */
static void take_zip(buf *out, zip_image *z) {
    *out = z->b;
}

static void too_short(buf *out) { put(out, "PK\5\6", 4); }
static void bare_pickle(buf *out) { put(out, "\x80\x02}.", 4); }
static void truncated(buf *out) {
    zip_image z = base_pth(1, 0);
    z.b.n -= 10; /* the end record cut */
    take_zip(out, &z);
}
static void dir_offset_past(buf *out) {
    zip_image z = base_pth(0, 0);
    set_le(&z.b, z.end_at + 16, z.b.n + 100, 4);
    take_zip(out, &z);
}
static void dir_size_past(buf *out) {
    zip_image z = base_pth(0, 0);
    set_le(&z.b, z.end_at + 12, 0x7FFFFFFF, 4);
    take_zip(out, &z);
}
static void dir_offset_inside(buf *out) {
    /* The directory offset one byte off: no entry where it says. */
    zip_image z = base_pth(0, 0);
    set_le(&z.b, z.end_at + 16, z.dir_at - 1, 4);
    take_zip(out, &z);
}
static void too_many_entries(buf *out) {
    zip_image z = base_pth(0, 0);
    set_le(&z.b, z.end_at + 8, 60000, 2);
    set_le(&z.b, z.end_at + 10, 60000, 2);
    take_zip(out, &z);
}
static void local_offset_past(buf *out) {
    zip_image z = base_pth(0, 0);
    set_le(&z.b, z.central_at[1] + 42, z.dir_at - 10, 4);
    take_zip(out, &z);
}
static void local_extra_past(buf *out) {
    zip_image z = base_pth(0, 0);
    set_le(&z.b, z.local_at[4] + 28, 0xFFFF, 2);
    take_zip(out, &z);
}
static void local_offset_wrong(buf *out) {
    zip_image z = base_pth(0, 0);
    set_le(&z.b, z.central_at[1] + 42, z.local_at[1] + 1, 4);
    take_zip(out, &z);
}
static void entry_size_past(buf *out) {
    zip_image z = base_pth(0, 0);
    set_le(&z.b, z.central_at[4] + 20, 1000, 4);
    set_le(&z.b, z.central_at[4] + 24, 1000, 4);
    take_zip(out, &z);
}
static void sizes_differ(buf *out) {
    zip_image z = base_pth(0, 0);
    set_le(&z.b, z.central_at[4] + 20, 1, 4);
    take_zip(out, &z);
}
static void compressed(buf *out) {
    zip_image z = base_pth(0, 0);
    set_le(&z.b, z.central_at[0] + 10, 8, 2);
    take_zip(out, &z);
}
static void compressed_local(buf *out) {
    zip_image z = base_pth(0, 0);
    set_le(&z.b, z.local_at[0] + 8, 8, 2);
    take_zip(out, &z);
}
static void encrypted(buf *out) {
    zip_image z = base_pth(0, 0);
    set_le(&z.b, z.central_at[2] + 8, 1, 2);
    take_zip(out, &z);
}
static void local_name_differs(buf *out) {
    zip_image z = base_pth(0, 0);
    z.b.p[z.local_at[1] + 30 + 13] = '9'; /* archive/data/0 -> archive/data/9 */
    take_zip(out, &z);
}
static void duplicate_entry(buf *out) {
    buf pk = {0};
    pk_state_dict(&pk, BASE, 4);
    const zentry extra = {"archive/data/1", (const uint8_t *)"0123456789abcdef", 16};
    zip_image z = pth_of(&pk, &extra, 1, 0, 0);
    free(pk.p);
    take_zip(out, &z);
}
static void zip64_locator_past(buf *out) {
    zip_image z = base_pth(1, 1);
    set_le(&z.b, z.locator_at + 8, z.b.n, 8);
    take_zip(out, &z);
}
static void zip64_disagrees(buf *out) {
    zip_image z = base_pth(1, 1);
    set_le(&z.b, z.end_at + 10, 4, 2); /* the classic count, not saturated, and wrong */
    take_zip(out, &z);
}
static void zip64_extra_short(buf *out) {
    zip_image z = base_pth(1, 1);
    set_le(&z.b, z.central_at[0] + 46 + strlen("archive/data.pkl") + 2, 8, 2); /* one field of three */
    take_zip(out, &z);
}
static void split_archive(buf *out) {
    zip_image z = base_pth(0, 0);
    set_le(&z.b, z.end_at + 4, 1, 2);
    take_zip(out, &z);
}
static void bad_crc(buf *out) {
    zip_image z = base_pth(0, 0);
    z.b.p[z.local_at[2] + 30 + 14] ^= 1; /* a bit of storage "1" */
    take_zip(out, &z);
}
static void no_pickle(buf *out) {
    const zentry e = {"archive/version", (const uint8_t *)"3\n", 2};
    zip_image z = make_zip(&e, 1, 0, 0);
    take_zip(out, &z);
}
static void two_pickles(buf *out) {
    buf pk = {0};
    pk_state_dict(&pk, BASE, 4);
    const zentry extra = {"other/data.pkl", pk.p, pk.n};
    zip_image z = pth_of(&pk, &extra, 1, 0, 0);
    free(pk.p);
    take_zip(out, &z);
}
static void big_endian(buf *out) {
    buf pk = {0};
    pk_state_dict(&pk, BASE, 4);
    const zentry extra = {"archive/byteorder", (const uint8_t *)"big", 3};
    zip_image z = pth_of(&pk, &extra, 1, 0, 0);
    free(pk.p);
    take_zip(out, &z);
}

/* A pickle in an archive with the base storages. */
static void archive_of(buf *out, buf *pk) {
    zip_image z = pth_of(pk, NULL, 0, 0, 0);
    free(pk->p);
    take_zip(out, &z);
}
static void with_global(buf *out, const char *module, const char *name) {
    buf pk = {0};
    put8(&pk, 0x80), put8(&pk, 2);
    pk_global(&pk, module, name);
    pk_str(&pk, "touch /tmp/pwned");
    put8(&pk, 0x85), put8(&pk, 'R'), put8(&pk, '.');
    archive_of(out, &pk);
}
static void global_os_system(buf *out) { with_global(out, "os", "system"); }
static void global_builtins_eval(buf *out) { with_global(out, "builtins", "eval"); }
static void global_near_miss(buf *out) { with_global(out, "torch", "FloatStorageX"); }
static void global_no_newline(buf *out) {
    buf pk = {0};
    put8(&pk, 0x80), put8(&pk, 2), put8(&pk, 'c');
    for (int i = 0; i < 300; i++) put8(&pk, 'a');
    archive_of(out, &pk);
}
static void with_ops(buf *out, const char *ops, size_t n) {
    buf pk = {0};
    put(&pk, ops, n);
    archive_of(out, &pk);
}
/* A pickle written out as a string literal (its length without the final NUL). */
#define OPS(out, literal) with_ops(out, literal, sizeof literal - 1)
static void unknown_opcode(buf *out) { OPS(out, "\x80\x02}\xff."); }
static void build_on_int(buf *out) { OPS(out, "\x80\x02K\x01}b."); }
static void build_int_state(buf *out) { OPS(out, "\x80\x02}K\x01" "b."); }
static void build_alone(buf *out) { OPS(out, "\x80\x02}b."); }
static void opcode_stack_global(buf *out) { OPS(out, "\x80\x02\x8c\x02os\x8c\x06system\x93."); }
static void opcode_inst(buf *out) { OPS(out, "\x80\x02(ios\nsystem\n."); }
static void protocol_6(buf *out) { OPS(out, "\x80\x06}."); }
static void memo_get_missing(buf *out) { OPS(out, "\x80\x02}q\x00h\x05."); }
static void memo_put_huge(buf *out) { OPS(out, "\x80\x02}r\xff\xff\xff\xff."); }
static void memo_put_empty(buf *out) { OPS(out, "\x80\x02q\x00}."); }
static void no_stop(buf *out) { OPS(out, "\x80\x02}"); }
static void after_stop(buf *out) { OPS(out, "\x80\x02}.}"); }
static void stop_two_values(buf *out) { OPS(out, "\x80\x02}}."); }
static void cut_argument(buf *out) { OPS(out, "\x80\x02X\x10\x00\x00\x00" "abc"); }
static void not_utf8(buf *out) { OPS(out, "\x80\x02X\x02\x00\x00\x00\xc3\x28."); }
static void tuple_no_mark(buf *out) { OPS(out, "\x80\x02K\x01t."); }
static void tuple2_short(buf *out) { OPS(out, "\x80\x02K\x01\x86."); }
static void setitem_on_tuple(buf *out) { OPS(out, "\x80\x02)X\x01\x00\x00\x00" "aK\x01s."); }
static void reduce_on_int(buf *out) { OPS(out, "\x80\x02K\x01)R."); }
static void not_a_dict(buf *out) { OPS(out, "\x80\x02)."); }
static void value_not_tensor(buf *out) { OPS(out, "\x80\x02}X\x01\x00\x00\x00" "aK\x07s."); }
static void key_not_string(buf *out) { OPS(out, "\x80\x02}K\x01K\x07s."); }
static void deep_stack(buf *out) {
    buf pk = {0};
    put8(&pk, 0x80), put8(&pk, 2);
    for (int i = 0; i < 70000; i++) put8(&pk, ')');
    put8(&pk, '.');
    archive_of(out, &pk);
}
static void deep_marks(buf *out) {
    buf pk = {0};
    put8(&pk, 0x80), put8(&pk, 2);
    for (int i = 0; i < 100; i++) put8(&pk, '(');
    put8(&pk, '.');
    archive_of(out, &pk);
}
static void reduce_ordered_dict_args(buf *out) {
    buf pk = {0};
    put8(&pk, 0x80), put8(&pk, 2);
    pk_global(&pk, "collections", "OrderedDict");
    put8(&pk, '}'), put8(&pk, 0x85), put8(&pk, 'R'), put8(&pk, '.');
    archive_of(out, &pk);
}
static void reduce_storage(buf *out) {
    buf pk = {0};
    put8(&pk, 0x80), put8(&pk, 2);
    pk_global(&pk, "torch", "HalfStorage");
    put8(&pk, ')'), put8(&pk, 'R'), put8(&pk, '.');
    archive_of(out, &pk);
}

/* The base dict with tensor i changed by `edit`. */
static void with_tensor(buf *out, void (*edit)(tdesc *t)) {
    tdesc t[4];
    memcpy(t, BASE, sizeof t);
    edit(&t[0]);
    buf pk = {0};
    pk_state_dict(&pk, t, 4);
    archive_of(out, &pk);
}
static void e_missing(tdesc *t) { t->key = "7"; }
static void e_past_end(tdesc *t) { t->offset = 1; }
static void e_offset_huge(tdesc *t) { t->offset = 2000000000; }
static void e_stride(tdesc *t) { t->stride[0] = 1, t->stride[1] = 2; }
static void e_stride_gap(tdesc *t) { t->size[0] = 1, t->size[1] = 3, t->stride[1] = 2; }
static void e_storage_short(tdesc *t) { t->numel = 7; }
static void e_storage_long(tdesc *t) { t->numel = 5, t->size[1] = 2, t->stride[0] = 2; }
static void e_retyped(tdesc *t) { t->type = "BFloat16Storage"; }
static void e_dims(tdesc *t) {
    t->ndim = 9;
    for (int d = 0; d < 9; d++) t->size[d] = 1, t->stride[d] = 1;
}
static void e_negative(tdesc *t) { t->size[0] = -2; }
static void e_location(tdesc *t) { t->location = "disk"; }
static void e_type(tdesc *t) { t->type = "LongStorage"; }
static void e_key_reserved(tdesc *t) { t->name = "__metadata__"; }
static void e_same_name(tdesc *t) { t->name = "b"; }
static void missing_storage(buf *out) { with_tensor(out, e_missing); }
static void past_storage_end(buf *out) { with_tensor(out, e_past_end); }
static void offset_huge(buf *out) { with_tensor(out, e_offset_huge); }
static void not_contiguous(buf *out) { with_tensor(out, e_stride); }
static void not_contiguous_gap(buf *out) { with_tensor(out, e_stride_gap); }
static void storage_short(buf *out) { with_tensor(out, e_storage_short); }
static void storage_long(buf *out) { with_tensor(out, e_storage_long); }
static void storage_retyped(buf *out) { with_tensor(out, e_retyped); }
static void too_many_dims(buf *out) { with_tensor(out, e_dims); }
static void negative_size(buf *out) { with_tensor(out, e_negative); }
static void bad_location(buf *out) { with_tensor(out, e_location); }
static void bad_storage_type(buf *out) { with_tensor(out, e_type); }
static void key_reserved(buf *out) { with_tensor(out, e_key_reserved); }
static void key_twice(buf *out) { with_tensor(out, e_same_name); }

/* One storage of 2^20 halves named by 800 tensors: 838,860,800 float32 numbers, more than a
 * model may hold, from a file of 2 MB. */
static void output_too_large(buf *out) {
    enum { NUMEL = 1 << 20, COPIES = 800 };
    uint8_t *halves = calloc(NUMEL, 2);
    buf pk = {0};
    put8(&pk, 0x80), put8(&pk, 2), put8(&pk, '}'), put8(&pk, '(');
    for (int i = 0; i < COPIES; i++) {
        char name[16];
        snprintf(name, sizeof name, "t%d", i);
        const tdesc t = {name, "HalfStorage", "0", NUMEL, 0, 1, {NUMEL}, {1}, NULL};
        pk_str(&pk, name);
        pk_tensor(&pk, &t);
    }
    put8(&pk, 'u'), put8(&pk, '.');
    const zentry e[2] = {{"archive/data.pkl", pk.p, pk.n}, {"archive/data/0", halves, 2 * (size_t)NUMEL}};
    zip_image z = make_zip(e, 2, 0, 0);
    free(pk.p);
    free(halves);
    take_zip(out, &z);
}


/* ---- more breakage, one check each ----------------------------------------------------------- */
static void garbage_after_end(buf *out) {
    zip_image z = base_pth(0, 0);
    put(&z.b, "trail", 5); /* the end record's comment length no longer reaches the end */
    take_zip(out, &z);
}
static void zip64_other_disk(buf *out) {
    zip_image z = base_pth(1, 1);
    set_le(&z.b, z.locator_at + 16, 3, 4);
    take_zip(out, &z);
}
static void zip64_no_record(buf *out) {
    zip_image z = base_pth(1, 1);
    set_le(&z.b, z.locator_at + 8, z.end64_at - 4, 8);
    take_zip(out, &z);
}
static void zip64_record_size(buf *out) {
    zip_image z = base_pth(1, 1);
    set_le(&z.b, z.end64_at + 4, 1000, 8);
    take_zip(out, &z);
}
static void one_entry_too_many(buf *out) {
    zip_image z = base_pth(0, 0);
    set_le(&z.b, z.end_at + 8, 6, 2);
    set_le(&z.b, z.end_at + 10, 6, 2);
    take_zip(out, &z);
}
static void one_entry_too_few(buf *out) {
    zip_image z = base_pth(0, 0);
    set_le(&z.b, z.end_at + 8, 4, 2);
    set_le(&z.b, z.end_at + 10, 4, 2);
    take_zip(out, &z);
}
static void name_past_directory(buf *out) {
    zip_image z = base_pth(0, 0);
    set_le(&z.b, z.central_at[4] + 28, 0xFFFF, 2);
    take_zip(out, &z);
}
static void extra_cut(buf *out) {
    zip_image z = base_pth(0, 0);
    set_le(&z.b, z.central_at[0] + 30, 3, 2); /* 3 bytes: less than a block header */
    take_zip(out, &z);
}
static void extra_block_past(buf *out) {
    zip_image z = base_pth(0, 0);
    set_le(&z.b, z.central_at[0] + 30, 4, 2); /* a block header ("PK", 0x0201 bytes) and nothing */
    take_zip(out, &z);
}
static void zip64_no_disk(buf *out) {
    zip_image z = base_pth(1, 1);
    set_le(&z.b, z.central_at[0] + 34, 0xFFFF, 2); /* the disk in the block, which has 3 fields */
    take_zip(out, &z);
}
static void entry_on_disk(buf *out) {
    zip_image z = base_pth(0, 0);
    set_le(&z.b, z.central_at[1] + 34, 2, 2);
    take_zip(out, &z);
}
static void damaged_pickle(buf *out) {
    zip_image z = base_pth(0, 0);
    z.b.p[z.local_at[0] + 30 + 16 + 4] ^= 0x20;
    take_zip(out, &z);
}
static void damaged_byteorder(buf *out) {
    buf pk = {0};
    pk_state_dict(&pk, BASE, 4);
    const zentry extra = {"archive/byteorder", (const uint8_t *)"little", 6};
    zip_image z = pth_of(&pk, &extra, 1, 0, 0);
    free(pk.p);
    z.b.p[z.local_at[5] + 30 + 17] = 'b';
    take_zip(out, &z);
}
static void long_folder(buf *out) {
    char name[400];
    memset(name, 'f', 300);
    strcpy(name + 300, "/data.pkl");
    const zentry e = {name, (const uint8_t *)"\x80\x02}.", 4};
    zip_image z = make_zip(&e, 1, 0, 0);
    take_zip(out, &z);
}
static void global_name_no_newline(buf *out) { OPS(out, "\x80\x02" "ccollections\nOrderedDict"); }
static void memo_get_far(buf *out) { OPS(out, "\x80\x02}q\x00j\xa0\x86\x01\x00."); }
static void reduce_short(buf *out) { OPS(out, "\x80\x02)R."); }
static void persid_empty(buf *out) { OPS(out, "\x80\x02Q."); }
static void persid_not_tuple(buf *out) { OPS(out, "\x80\x02K\x01Q."); }
static void setitem_short(buf *out) { OPS(out, "\x80\x02K\x01s."); }
static void setitems_no_mark(buf *out) { OPS(out, "\x80\x02}u."); }
static void setitems_odd(buf *out) { OPS(out, "\x80\x02}(K\x01u."); }
static void setitem_past_mark(buf *out) { OPS(out, "\x80\x02}(K\x01K\x02s."); }
static void reduce_args_int(buf *out) { OPS(out, "\x80\x02" "ccollections\nOrderedDict\nK\x01R."); }
/* ('storage', <type>, key, 'cpu', numel) with one part replaced */
static void with_pid(buf *out, int bad) {
    buf pk = {0};
    put8(&pk, 0x80), put8(&pk, 2), put8(&pk, '(');
    pk_str(&pk, "storage");
    if (bad == 0) pk_str(&pk, "HalfStorage");
    else if (bad == 1) pk_global(&pk, "collections", "OrderedDict");
    else pk_global(&pk, "torch", "HalfStorage");
    pk_str(&pk, bad == 2 ? "" : "0");
    pk_str(&pk, "cpu");
    pk_int(&pk, bad == 3 ? -1 : 6);
    put8(&pk, 't'), put8(&pk, 'Q'), put8(&pk, '.');
    archive_of(out, &pk);
}
static void pid_type_string(buf *out) { with_pid(out, 0); }
static void pid_four(buf *out) { OPS(out, "\x80\x02(X\x07\x00\x00\x00storageK\x01K\x02K\x03tQ."); }
static void pid_module(buf *out) { OPS(out, "\x80\x02(X\x06\x00\x00\x00moduleK\x01K\x02K\x03K\x04tQ."); }
static void pid_type_dict(buf *out) { with_pid(out, 1); }
static void pid_key_empty(buf *out) { with_pid(out, 2); }
static void pid_numel_negative(buf *out) { with_pid(out, 3); }
/* _rebuild_tensor_v2 with its arguments replaced by `args` (a pickle fragment). */
static void with_args(buf *out, const char *args, size_t n) {
    buf pk = {0};
    put8(&pk, 0x80), put8(&pk, 2);
    pk_global(&pk, "torch._utils", "_rebuild_tensor_v2");
    put(&pk, args, n);
    put8(&pk, 'R'), put8(&pk, '.');
    archive_of(out, &pk);
}
#define ARGS(out, literal) with_args(out, literal, sizeof literal - 1)
static void rebuild_five(buf *out) { ARGS(out, "(K\x01K\x02K\x03K\x04K\x05t"); }
static void rebuild_kinds(buf *out) {
    /* a storage, then an int where the size tuple goes */
    buf pk = {0};
    put8(&pk, 0x80), put8(&pk, 2);
    pk_global(&pk, "torch._utils", "_rebuild_tensor_v2");
    put8(&pk, '('), put8(&pk, '(');
    pk_str(&pk, "storage");
    pk_global(&pk, "torch", "HalfStorage");
    pk_str(&pk, "0"), pk_str(&pk, "cpu"), pk_int(&pk, 6);
    put8(&pk, 't'), put8(&pk, 'Q');
    pk_int(&pk, 0), pk_int(&pk, 6), pk_int(&pk, 1), put8(&pk, 0x89), put8(&pk, '}');
    put8(&pk, 't'), put8(&pk, 'R'), put8(&pk, '.');
    archive_of(out, &pk);
}
static void e_overflow(tdesc *t) {
    t->ndim = 3;
    for (int d = 0; d < 3; d++) t->size[d] = 2000000000, t->stride[d] = 1;
}
static void e_negative_offset(tdesc *t) { t->offset = -1; }
static void stride_length(buf *out) {
    /* size (2, 3) and stride (3,) */
    tdesc t = BASE[0];
    buf pk = {0};
    put8(&pk, 0x80), put8(&pk, 2), put8(&pk, '}'), put8(&pk, '(');
    pk_str(&pk, "a");
    pk_global(&pk, "torch._utils", "_rebuild_tensor_v2");
    put8(&pk, '('), put8(&pk, '(');
    pk_str(&pk, "storage"), pk_global(&pk, "torch", t.type), pk_str(&pk, t.key), pk_str(&pk, "cpu"), pk_int(&pk, 6);
    put8(&pk, 't'), put8(&pk, 'Q'), pk_int(&pk, 0);
    pk_int(&pk, 2), pk_int(&pk, 3), put8(&pk, 0x86);
    pk_int(&pk, 3), put8(&pk, 0x85);
    put8(&pk, 0x89), pk_global(&pk, "collections", "OrderedDict"), put8(&pk, ')'), put8(&pk, 'R');
    put8(&pk, 't'), put8(&pk, 'R'), put8(&pk, 'u'), put8(&pk, '.');
    archive_of(out, &pk);
}
static void size_overflow(buf *out) { with_tensor(out, e_overflow); }
static void negative_offset(buf *out) { with_tensor(out, e_negative_offset); }
static void key_with_nul(buf *out) {
    /* the key "a\0b", three bytes */
    buf pk = {0};
    put8(&pk, 0x80), put8(&pk, 2), put8(&pk, '}'), put8(&pk, '(');
    put8(&pk, 'X'), put_le(&pk, 3, 4), put(&pk, "a\0b", 3);
    pk_tensor(&pk, &BASE[0]);
    put8(&pk, 'u'), put8(&pk, '.');
    archive_of(out, &pk);
}

/* The machine's bounds, each reached through the memo or by values that leave the stack (a
 * pickle of about 1 MB each). */
static void many_values(buf *out) {
    /* 9 tuples of 60,000 False: 540,009 values */
    buf pk = {0};
    put8(&pk, 0x80), put8(&pk, 2);
    for (int t = 0; t < 9; t++) {
        put8(&pk, '(');
        for (int i = 0; i < 60000; i++) put8(&pk, 0x89);
        put8(&pk, 't');
    }
    put8(&pk, '.');
    archive_of(out, &pk);
}
static void many_kids(buf *out) {
    /* 18 tuples of the memo's dict 60,000 times: 1,080,000 elements */
    buf pk = {0};
    put8(&pk, 0x80), put8(&pk, 2), put8(&pk, '}'), put8(&pk, 'q'), put8(&pk, 0);
    for (int t = 0; t < 18; t++) {
        put8(&pk, '(');
        for (int i = 0; i < 60000; i++) put8(&pk, 'h'), put8(&pk, 0);
        put8(&pk, 't');
    }
    put8(&pk, '.');
    archive_of(out, &pk);
}
static void many_items(buf *out) {
    /* the dict set to itself 150,000 times, in batches of 30,000 */
    buf pk = {0};
    put8(&pk, 0x80), put8(&pk, 2), put8(&pk, '}'), put8(&pk, 'q'), put8(&pk, 0);
    for (int t = 0; t < 5; t++) {
        put8(&pk, '(');
        for (int i = 0; i < 30000; i++) put8(&pk, 'h'), put8(&pk, 0), put8(&pk, 'h'), put8(&pk, 0);
        put8(&pk, 'u');
    }
    put8(&pk, '.');
    archive_of(out, &pk);
}
static void many_tensors(buf *out) {
    /* _rebuild_tensor_v2 (memo 1) of one argument tuple (memo 2) under the key "a" (memo 3),
     * 150,000 times in batches of 30,000 */
    buf pk = {0}, t = {0};
    put8(&pk, 0x80), put8(&pk, 2), put8(&pk, '}');
    pk_str(&pk, "a"), put8(&pk, 'q'), put8(&pk, 3);
    pk_global(&pk, "torch._utils", "_rebuild_tensor_v2"), put8(&pk, 'q'), put8(&pk, 1);
    pk_tensor(&t, &BASE[0]);
    const size_t global_len = strlen("c" "torch._utils\n" "_rebuild_tensor_v2\n");
    put(&pk, t.p + global_len, t.n - global_len - 1); /* its arguments: all but the global and the last REDUCE */
    free(t.p);
    put8(&pk, 'q'), put8(&pk, 2), put8(&pk, 'R'), put8(&pk, 's');
    for (int b = 0; b < 5; b++) {
        put8(&pk, '(');
        for (int i = 0; i < 30000; i++) put(&pk, "h\3h\1h\2R", 7);
        put8(&pk, 'u');
    }
    put8(&pk, '.');
    archive_of(out, &pk);
}

static const bad_case BAD[] = {
    {"too short", too_short, AL_ERR_FORMAT, "too short to be a zip archive"},
    {"legacy format", bare_pickle, AL_ERR_FORMAT, "a bare pickle, torch.save's format before PyTorch 1.6"},
    {"truncated zip", truncated, AL_ERR_FORMAT, "no end of central directory record"},
    {"directory offset past the end", dir_offset_past, AL_ERR_FORMAT, "central directory's offset"},
    {"directory size past the end", dir_size_past, AL_ERR_FORMAT, "central directory's 2147483647 bytes"},
    {"directory offset off by one", dir_offset_inside, AL_ERR_FORMAT, "no central directory entry at byte"},
    {"entry count too large", too_many_entries, AL_ERR_FORMAT, "60000 entries cannot fit"},
    {"local header offset past", local_offset_past, AL_ERR_FORMAT, "is not before the central directory"},
    {"local header into the directory", local_extra_past, AL_ERR_FORMAT, "runs into the central directory"},
    {"local header offset wrong", local_offset_wrong, AL_ERR_FORMAT, "no local header at byte"},
    {"entry size past the directory", entry_size_past, AL_ERR_FORMAT, "run past the start of the central directory"},
    {"stored sizes differ", sizes_differ, AL_ERR_FORMAT, "but compressed size 1"},
    {"compressed entry", compressed, AL_ERR_FORMAT, "is compressed (method 8, deflate)"},
    {"compressed local header", compressed_local, AL_ERR_FORMAT, "(method 8 in its local header)"},
    {"encrypted entry", encrypted, AL_ERR_FORMAT, "'archive/data/1' is encrypted"},
    {"local name differs", local_name_differs, AL_ERR_FORMAT, "names another entry"},
    {"duplicate entry", duplicate_entry, AL_ERR_FORMAT, "entry 'archive/data/1' appears twice"},
    {"ZIP64 locator past the end", zip64_locator_past, AL_ERR_FORMAT, "ZIP64 end record's offset"},
    {"ZIP64 and classic disagree", zip64_disagrees, AL_ERR_FORMAT, "end record gives entry count 4"},
    {"ZIP64 extra block short", zip64_extra_short, AL_ERR_FORMAT, "lacks a 64-bit field"},
    {"split archive", split_archive, AL_ERR_FORMAT, "the end record names disk 1"},
    {"damaged storage", bad_crc, AL_ERR_FORMAT, "'archive/data/1' fails its CRC-32 check"},
    {"no data.pkl", no_pickle, AL_ERR_FORMAT, "holds no <name>/data.pkl"},
    {"two data.pkl", two_pickles, AL_ERR_FORMAT, "holds two pickles"},
    {"big-endian storages", big_endian, AL_ERR_FORMAT, "byteorder 'big'"},
    {"global os.system", global_os_system, AL_ERR_FORMAT, "pickle: refusing global os.system"},
    {"global builtins.eval", global_builtins_eval, AL_ERR_FORMAT, "pickle: refusing global builtins.eval"},
    {"global near miss", global_near_miss, AL_ERR_FORMAT, "refusing global torch.FloatStorageX"},
    {"global without newline", global_no_newline, AL_ERR_FORMAT, "module has no end of line"},
    {"unknown opcode", unknown_opcode, AL_ERR_FORMAT, "unknown opcode 0xff at byte 3"},
    {"BUILD on an int", build_on_int, AL_ERR_FORMAT, "BUILD at byte 5 on an int: only a dict's state is accepted"},
    {"BUILD with an int state", build_int_state, AL_ERR_FORMAT, "BUILD at byte 5 with a state that is an int, not a dict"},
    {"BUILD with one value", build_alone, AL_ERR_FORMAT, "BUILD at byte 3 needs 2 values on the stack, has 1"},
    {"opcode STACK_GLOBAL", opcode_stack_global, AL_ERR_FORMAT, "refusing opcode STACK_GLOBAL"},
    {"opcode INST", opcode_inst, AL_ERR_FORMAT, "refusing opcode INST"},
    {"protocol 6", protocol_6, AL_ERR_FORMAT, "protocol 6 at byte 0 is newer than 5"},
    {"memo index never put", memo_get_missing, AL_ERR_FORMAT, "BINGET 5 at byte 5: no memo entry 5"},
    {"memo index out of range", memo_put_huge, AL_ERR_FORMAT, "memo index 4294967295 at byte 3 is above the limit"},
    {"memo put on an empty stack", memo_put_empty, AL_ERR_FORMAT, "a memo PUT at byte 2 needs 1 value"},
    {"no STOP", no_stop, AL_ERR_FORMAT, "ends at byte 3 without STOP"},
    {"bytes after STOP", after_stop, AL_ERR_FORMAT, "1 bytes follow STOP"},
    {"two values at STOP", stop_two_values, AL_ERR_FORMAT, "leaves 2 values"},
    {"argument cut short", cut_argument, AL_ERR_FORMAT, "ends inside the argument of BINUNICODE"},
    {"string not UTF-8", not_utf8, AL_ERR_FORMAT, "a string that is not UTF-8"},
    {"TUPLE without MARK", tuple_no_mark, AL_ERR_FORMAT, "TUPLE at byte 4 without a MARK"},
    {"TUPLE2 of one value", tuple2_short, AL_ERR_FORMAT, "TUPLE2 at byte 4 needs 2 values"},
    {"SETITEM on a tuple", setitem_on_tuple, AL_ERR_FORMAT, "SETITEM at byte 11 on a tuple"},
    {"REDUCE on an int", reduce_on_int, AL_ERR_FORMAT, "REDUCE at byte 5 calls an int"},
    {"top level not a dict", not_a_dict, AL_ERR_FORMAT, "holds a tuple, not a dict of tensors"},
    {"value not a tensor", value_not_tensor, AL_ERR_FORMAT, "'a' is an int, not a tensor"},
    {"key not a string", key_not_string, AL_ERR_FORMAT, "a key that is an int"},
    {"deep stack", deep_stack, AL_ERR_FORMAT, "stack deeper than 65536 values"},
    {"deep MARKs", deep_marks, AL_ERR_FORMAT, "more than 64 open MARKs"},
    {"OrderedDict with arguments", reduce_ordered_dict_args, AL_ERR_FORMAT, "OrderedDict built from arguments"},
    {"REDUCE on a storage type", reduce_storage, AL_ERR_FORMAT, "calls torch.HalfStorage"},
    {"missing storage", missing_storage, AL_ERR_FORMAT, "storage '7' (pickle byte"},
    {"tensor past its storage's end", past_storage_end, AL_ERR_FORMAT, "(6 elements from offset 1) runs past the end of storage '0'"},
    {"offset past its storage", offset_huge, AL_ERR_FORMAT, "from offset 2000000000)"},
    {"non-contiguous stride", not_contiguous, AL_ERR_FORMAT, "of size [2, 3] has stride [1, 2]: not contiguous"},
    {"strided last dimension", not_contiguous_gap, AL_ERR_FORMAT, "of size [1, 3] has stride [3, 2]"},
    {"storage smaller than its size", storage_short, AL_ERR_FORMAT, "holds 12 bytes, too few for a HalfStorage of 7"},
    {"storage larger than its size", storage_long, AL_ERR_FORMAT, "HalfStorage of 5 elements takes 10"},
    {"storage named with two types", storage_retyped, AL_ERR_FORMAT, "is named again at pickle byte"},
    {"nine dimensions", too_many_dims, AL_ERR_FORMAT, "has 9 dimensions; at most 8"},
    {"negative size", negative_size, AL_ERR_FORMAT, "a tensor with a negative size"},
    {"unknown location", bad_location, AL_ERR_FORMAT, "location 'disk'"},
    {"storage type not read", bad_storage_type, AL_ERR_FORMAT, "refusing global torch.LongStorage"},
    {"key __metadata__", key_reserved, AL_ERR_FORMAT, "'__metadata__' cannot be a tensor name"},
    {"key set twice", key_twice, AL_ERR_FORMAT, "sets 'b' twice"},
    {"output beyond the limit", output_too_large, AL_ERR_LIMIT, "more than 805306368 float32 numbers"},
    {"bytes after the end record", garbage_after_end, AL_ERR_FORMAT, "gives a comment of 0 bytes, but 5 follow it"},
    {"ZIP64 locator on another disk", zip64_other_disk, AL_ERR_FORMAT, "ZIP64 locator points to disk 0 of 3"},
    {"ZIP64 locator off target", zip64_no_record, AL_ERR_FORMAT, "no ZIP64 end record at byte"},
    {"ZIP64 record size too large", zip64_record_size, AL_ERR_FORMAT, "end record's size 1000 does not fit"},
    {"one entry too many", one_entry_too_many, AL_ERR_FORMAT, "central directory entry 5 at byte"},
    {"one entry too few", one_entry_too_few, AL_ERR_FORMAT, "follow its last entry"},
    {"name past the directory", name_past_directory, AL_ERR_FORMAT, "entry 4's name and fields run past the directory"},
    {"extra field cut", extra_cut, AL_ERR_FORMAT, "its extra field is cut short"},
    {"extra block past its field", extra_block_past, AL_ERR_FORMAT, "an extra block runs past its extra field"},
    {"ZIP64 block without the disk", zip64_no_disk, AL_ERR_FORMAT, "lacks the disk number"},
    {"entry on another disk", entry_on_disk, AL_ERR_FORMAT, "'archive/data/0' starts on disk 2"},
    {"damaged pickle", damaged_pickle, AL_ERR_FORMAT, "'archive/data.pkl' fails its CRC-32 check"},
    {"damaged byteorder", damaged_byteorder, AL_ERR_FORMAT, "'archive/byteorder' fails its CRC-32 check"},
    {"folder name too long", long_folder, AL_ERR_FORMAT, "the archive's folder name is too long"},
    {"GLOBAL name without newline", global_name_no_newline, AL_ERR_FORMAT, "a GLOBAL whose name has no end of line"},
    {"memo index far past", memo_get_far, AL_ERR_FORMAT, "LONG_BINGET 100000 at byte 5: no memo entry 100000"},
    {"REDUCE of one value", reduce_short, AL_ERR_FORMAT, "REDUCE at byte 3 needs 2 values"},
    {"BINPERSID of nothing", persid_empty, AL_ERR_FORMAT, "BINPERSID at byte 2 needs 1 value"},
    {"persistent id not a tuple", persid_not_tuple, AL_ERR_FORMAT, "the persistent id at byte 4 is an int"},
    {"persistent id of four parts", pid_four, AL_ERR_FORMAT, "has 4 parts, not 5"},
    {"persistent id not a storage", pid_module, AL_ERR_FORMAT, "does not start with 'storage'"},
    {"SETITEM of one value", setitem_short, AL_ERR_FORMAT, "SETITEM at byte 4 needs 2 values"},
    {"SETITEMS without MARK", setitems_no_mark, AL_ERR_FORMAT, "SETITEMS at byte 3 without a MARK"},
    {"SETITEMS of an odd count", setitems_odd, AL_ERR_FORMAT, "SETITEMS at byte 6 without a dict and key/value pairs"},
    {"SETITEM on a dict below a MARK", setitem_past_mark, AL_ERR_FORMAT, "SETITEM at byte 8 without a dict and key/value pairs"},
    {"REDUCE with an int for arguments", reduce_args_int, AL_ERR_FORMAT, "with arguments in an int, not a tuple"},
    {"storage type a string", pid_type_string, AL_ERR_FORMAT, "the storage type at byte"},
    {"storage type OrderedDict", pid_type_dict, AL_ERR_FORMAT, "has type collections.OrderedDict, not a Float"},
    {"storage key empty", pid_key_empty, AL_ERR_FORMAT, "storage key '' at byte"},
    {"storage size negative", pid_numel_negative, AL_ERR_FORMAT, "storage '0' at byte 54 has a negative size"},
    {"_rebuild_tensor_v2 of five", rebuild_five, AL_ERR_FORMAT, "_rebuild_tensor_v2 at byte 47 with 5 arguments"},
    {"size that is an int", rebuild_kinds, AL_ERR_FORMAT, "a tensor's size at byte"},
    {"stride shorter than size", stride_length, AL_ERR_FORMAT, "a tensor whose stride and size differ in length"},
    {"size past 64 bits", size_overflow, AL_ERR_FORMAT, "more elements than fit in 64 bits"},
    {"negative offset", negative_offset, AL_ERR_FORMAT, "from offset -1)"},
    {"key with a NUL", key_with_nul, AL_ERR_FORMAT, "key 'a\\x00b' cannot be a tensor name"},
    {"values beyond the bound", many_values, AL_ERR_LIMIT, "more than 524288 values at byte"},
    {"tuple elements beyond the bound", many_kids, AL_ERR_LIMIT, "more than 1048576 tuple elements"},
    {"dict items beyond the bound", many_items, AL_ERR_LIMIT, "more than 131072 dict items"},
    {"tensors beyond the bound", many_tensors, AL_ERR_LIMIT, "more than 131072 tensors"},
};

static void test_malformed(void) {
    const int n = (int)(sizeof BAD / sizeof BAD[0]);
    for (int i = 0; i < n; i++) {
        buf b = {0};
        BAD[i].make(&b);
        uint8_t *out = (uint8_t *)"untouched";
        size_t out_size = 99;
        al_error err = {0};
        const al_status s = al_pth_to_safetensors(b.p, b.n, &out, &out_size, &err);
        CHECK(s == BAD[i].status && strstr(err.msg, BAD[i].message), "%s: got '%s' \"%s\", want '%s' \"...%s...\"",
              BAD[i].name, al_status_str(s), err.msg, al_status_str(BAD[i].status), BAD[i].message);
        CHECK(!out && out_size == 0 && !strchr(err.msg, '\n'), "%s: output left, or a message of more than one line", BAD[i].name);
        /* its own message: no other case's expected text in it */
        for (int j = 0; j < n; j++)
            CHECK(j == i || !strstr(err.msg, BAD[j].message), "%s: message \"%s\" is also %s's", BAD[i].name, err.msg, BAD[j].name);
        LLVMFuzzerTestOneInput(b.p ? b.p : (const uint8_t *)"", b.n);
        free(b.p);
    }
    printf("%d malformed .pth files refused\n", n);
}

/* ---- config.json from shapes ---------------------------------------------------------------- */

/* A tiny MiniMind state_dict (one layer, hidden 4, 2 heads of 2, 1 KV head, FFN 6, vocab 8):
 * the tensors named in `names`, with the shapes MiniMind gives them, as float32 safetensors. */
typedef struct {
    const char *name;
    int ndim;
    int64_t shape[2];
} shape_entry;

static al_safetensors *state_dict(const shape_entry *e, int n, int head_equal) {
    static float zeros[64], ones[64];
    for (int i = 0; i < 64; i++) ones[i] = 1.0f;
    al_st_entry entries[32];
    for (int i = 0; i < n; i++) {
        entries[i] = (al_st_entry){e[i].name, zeros, e[i].ndim, {e[i].shape[0], e[i].shape[1]}};
        if (!strcmp(e[i].name, "lm_head.weight") && !head_equal) entries[i].data = ones;
    }
    size_t size = 0;
    al_st_serialize(entries, n, NULL, 0, NULL, 0, &size, NULL);
    uint8_t *bytes = malloc(size);
    al_safetensors *st = NULL;
    if (bytes && al_st_serialize(entries, n, NULL, 0, bytes, size, &size, NULL) == AL_OK) al_st_parse(bytes, size, &st, NULL);
    free(bytes);
    return st;
}

static const shape_entry DENSE[] = {
    {"model.embed_tokens.weight", 2, {8, 4}},
    {"model.layers.0.self_attn.q_proj.weight", 2, {4, 4}},
    {"model.layers.0.self_attn.k_proj.weight", 2, {2, 4}},
    {"model.layers.0.self_attn.v_proj.weight", 2, {2, 4}},
    {"model.layers.0.self_attn.o_proj.weight", 2, {4, 4}},
    {"model.layers.0.self_attn.q_norm.weight", 1, {2, 0}},
    {"model.layers.0.self_attn.k_norm.weight", 1, {2, 0}},
    {"model.layers.0.input_layernorm.weight", 1, {4, 0}},
    {"model.layers.0.post_attention_layernorm.weight", 1, {4, 0}},
    {"model.layers.0.mlp.gate_proj.weight", 2, {6, 4}},
    {"model.layers.0.mlp.up_proj.weight", 2, {6, 4}},
    {"model.layers.0.mlp.down_proj.weight", 2, {4, 6}},
    {"model.norm.weight", 1, {4, 0}},
    {"lm_head.weight", 2, {8, 4}},
};
enum { N_DENSE = sizeof DENSE / sizeof DENSE[0] };

/* The config written for st and flags, and the model it gives (NULL if refused: *msg says why). */
static char *config_for(const al_safetensors *st, const al_pth_flags *flags, al_error *err) {
    const int64_t len = al_minimind_config_from_tensors(st, flags, NULL, 0, err);
    if (len < 0) return NULL;
    char *text = malloc((size_t)len + 1);
    CHECK(text && al_minimind_config_from_tensors(st, flags, text, len + 1, err) == len, "config: fill differs from its size query");
    CHECK(text && strlen(text) == (size_t)len, "config: not NUL-terminated at its length");
    return text;
}

static void test_config(void) {
    al_error err = {0};
    al_pth_flags f = al_pth_flags_default();

    /* The dense model, tied (lm_head equal to the embedding), reads back through the loader. */
    al_safetensors *st = state_dict(DENSE, N_DENSE, 1);
    char *cfg = config_for(st, NULL, &err);
    CHECK(cfg && strstr(cfg, "\"num_attention_heads\": 2,") && strstr(cfg, "\"num_key_value_heads\": 1,") &&
              strstr(cfg, "\"head_dim\": 2,") && strstr(cfg, "\"intermediate_size\": 6,") &&
              strstr(cfg, "\"num_hidden_layers\": 1,") && strstr(cfg, "\"vocab_size\": 8,") &&
              strstr(cfg, "\"tie_word_embeddings\": true") && strstr(cfg, "\"rope_scaling\": null"),
          "dense config: %s", cfg ? cfg : err.msg);
    al_model_hparams hp;
    CHECK(cfg && al_minimind_hparams(cfg, strlen(cfg), st, &hp, &err) == AL_OK && hp.n_heads == 2 && hp.n_kv_heads == 1 &&
              hp.head_dim == 2 && hp.ffn_hidden == 6 && hp.tied && hp.qk_norm && hp.rope_base == 1e6 && hp.eps == 1e-6f,
          "dense hparams: %s", err.msg);
    /* A short buffer: the full length still, the text cut and NUL-terminated. */
    char small[10];
    CHECK(cfg && al_minimind_config_from_tensors(st, NULL, small, sizeof small, &err) == (int64_t)strlen(cfg) &&
              small[9] == '\0' && !strncmp(small, cfg, 9),
          "config in a short buffer");
    free(cfg);

    /* Flags: YaRN, rope_theta, eps reach the hparams. */
    f.yarn = 1, f.rope_theta = 10000.0, f.eps = 1e-5;
    cfg = config_for(st, &f, &err);
    CHECK(cfg && al_minimind_hparams(cfg, strlen(cfg), st, &hp, &err) == AL_OK && hp.yarn_factor == 16.0 &&
              hp.yarn_original_max == 2048 && hp.rope_base == 10000.0 && hp.eps == 1e-5f,
          "flags: %s", err.msg);
    CHECK(cfg && strstr(cfg, "\"inference_rope_scaling\": true,") && strstr(cfg, "\"rope_scaling\": {\"type\": \"yarn\", \"factor\": 16,"),
          "YaRN in config.json: %s", cfg ? cfg : "");
    free(cfg);
    f = al_pth_flags_default();

    struct {
        const char *what;
        al_pth_flags flags;
        al_status status;
        const char *message;
    } refused[] = {
        {"heads disagree with q_norm", f, AL_ERR_CONFIG, "3 heads given, but q_proj's 4 rows"},
        {"MoE routing on a dense model", f, AL_ERR_CONFIG, "MoE routing given (top-k 2"},
        {"norm_topk_prob off on a dense model", f, AL_ERR_CONFIG, "norm_topk_prob off), but the checkpoint has no experts"},
        {"negative heads", f, AL_ERR_ARG, "heads must be from 1 to 256"},
        {"rope_theta 0", f, AL_ERR_ARG, "rope_theta and eps must be positive"},
        {"top-0", f, AL_ERR_ARG, "MoE top-k must be from 1 to 256"},
        {"yarn 2", f, AL_ERR_ARG, "norm_topk_prob and yarn 0 or 1"},
    };
    refused[0].flags.n_heads = 3;
    refused[1].flags.moe_top_k = 2;
    refused[2].flags.norm_topk_prob = 0;
    refused[3].flags.n_heads = -1;
    refused[4].flags.rope_theta = 0.0;
    refused[5].flags.moe_top_k = 0;
    refused[6].flags.yarn = 2;
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        err = (al_error){0};
        CHECK(al_minimind_config_from_tensors(st, &refused[i].flags, NULL, 0, &err) == -1 && err.status == refused[i].status &&
                  strstr(err.msg, refused[i].message),
              "%s: got \"%s\"", refused[i].what, err.msg);
    }
    CHECK(al_minimind_config_from_tensors(st, NULL, NULL, 5, &err) == -1 && err.status == AL_ERR_ARG, "NULL buffer with a capacity");
    al_st_free(st);

    /* Attention-only (MiniMind's intermediate_size 0): gate_proj and up_proj [0, 4], down_proj
     * [4, 0]; intermediate_size 0, and the model it gives has no FFN. */
    shape_entry e0[N_DENSE];
    memcpy(e0, DENSE, sizeof DENSE);
    e0[9].shape[0] = e0[10].shape[0] = e0[11].shape[1] = 0;
    st = state_dict(e0, N_DENSE, 1);
    err = (al_error){0};
    cfg = config_for(st, NULL, &err);
    CHECK(cfg && strstr(cfg, "\"intermediate_size\": 0,"), "attention-only config: %s", cfg ? cfg : err.msg);
    hp.ffn_hidden = -1;
    CHECK(cfg && al_minimind_hparams(cfg, strlen(cfg), st, &hp, &err) == AL_OK && hp.ffn_hidden == 0 && !hp.n_experts,
          "attention-only hparams: ffn_hidden %lld, experts %lld %s", (long long)hp.ffn_hidden, (long long)hp.n_experts, err.msg);
    al_model *m0 = NULL;
    CHECK(cfg && al_model_from_minimind(cfg, strlen(cfg), st, 4, 4, &m0, &err) == AL_OK, "attention-only model: %s", err.msg);
    al_model_free(m0);
    free(cfg);
    al_st_free(st);

    /* An untied head; no q_norm (heads needed); shapes that fit no head count; no embedding;
     * a layer index past the limit; MoE. */
    st = state_dict(DENSE, N_DENSE, 0);
    cfg = config_for(st, NULL, &err);
    CHECK(cfg && strstr(cfg, "\"tie_word_embeddings\": false"), "untied head: %s", cfg ? cfg : err.msg);
    free(cfg);
    al_st_free(st);

    shape_entry e[N_DENSE + 8];
    memcpy(e, DENSE, sizeof DENSE);
    e[5] = e[N_DENSE - 1]; /* q_norm out (lm_head twice: the first copy is the one read) */
    st = state_dict(e, N_DENSE - 1, 1);
    CHECK(al_minimind_config_from_tensors(st, NULL, NULL, 0, &err) == -1 && err.status == AL_ERR_CONFIG &&
              strstr(err.msg, "give it (--heads)"),
          "no q_norm: %s", err.msg);
    f.n_heads = 2;
    cfg = config_for(st, &f, &err);
    CHECK(cfg && strstr(cfg, "\"head_dim\": 2,"), "no q_norm, 2 heads given: %s", cfg ? cfg : err.msg);
    free(cfg);
    f.n_heads = 3;
    CHECK(al_minimind_config_from_tensors(st, &f, NULL, 0, &err) == -1 && strstr(err.msg, "q_proj's 4 rows are not a whole number of heads"),
          "4 rows, 3 heads: %s", err.msg);
    f = al_pth_flags_default();
    al_st_free(st);

    memcpy(e, DENSE, sizeof DENSE);
    e[2].shape[0] = 3; /* k_proj: 3 rows of head_dim 2 */
    st = state_dict(e, N_DENSE, 1);
    CHECK(al_minimind_config_from_tensors(st, NULL, NULL, 0, &err) == -1 && strstr(err.msg, "k_proj's 3 rows are not a whole number of key/value heads"),
          "k_proj 3 rows: %s", err.msg);
    al_st_free(st);

    st = state_dict(DENSE + 1, N_DENSE - 1, 1);
    CHECK(al_minimind_config_from_tensors(st, NULL, NULL, 0, &err) == -1 && err.status == AL_ERR_MISSING &&
              strstr(err.msg, "'model.embed_tokens.weight' not found"),
          "no embedding: %s", err.msg);
    al_st_free(st);

    memcpy(e, DENSE, sizeof DENSE);
    e[N_DENSE] = (shape_entry){"model.layers.300.mlp.up_proj.weight", 1, {1, 0}};
    st = state_dict(e, N_DENSE + 1, 1);
    CHECK(al_minimind_config_from_tensors(st, NULL, NULL, 0, &err) == -1 && err.status == AL_ERR_LIMIT &&
              strstr(err.msg, "layer index above the limit"),
          "layer 300: %s", err.msg);
    al_st_free(st);

    /* A tensor each check needs, missing or misshapen. */
    struct {
        const char *what;
        int drop;           /* index into DENSE left out, or -1 */
        int reshape;        /* index into DENSE given shape `shape` with `ndim`, or -1 */
        int ndim;
        int64_t shape[2];
        al_status status;
        const char *message;
    } shapes[] = {
        {"embedding 1-D", -1, 0, 1, {8, 0}, AL_ERR_SHAPE, "'model.embed_tokens.weight' has 1 dimensions, a MiniMind state_dict 2"},
        {"q_norm of size 0", -1, 5, 1, {0, 0}, AL_ERR_SHAPE, "'model.layers.0.self_attn.q_norm.weight' has a dimension of size 0"},
        {"no q_proj", 1, -1, 0, {0, 0}, AL_ERR_MISSING, "'model.layers.0.self_attn.q_proj.weight' not found"},
        {"no k_proj", 2, -1, 0, {0, 0}, AL_ERR_MISSING, "'model.layers.0.self_attn.k_proj.weight' not found"},
        {"no gate_proj", 9, -1, 0, {0, 0}, AL_ERR_MISSING, "'model.layers.0.mlp.gate_proj.weight' not found"},
        /* rows of 0 are an attention-only model; columns of 0 nothing */
        {"gate_proj [6, 0]", -1, 9, 2, {6, 0}, AL_ERR_SHAPE, "'model.layers.0.mlp.gate_proj.weight' has a dimension of size 0"},
    };
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        int n = 0;
        for (int j = 0; j < N_DENSE; j++) {
            if (j == shapes[i].drop) continue;
            e[n] = DENSE[j];
            if (j == shapes[i].reshape) e[n].ndim = shapes[i].ndim, e[n].shape[0] = shapes[i].shape[0], e[n].shape[1] = shapes[i].shape[1];
            n++;
        }
        st = state_dict(e, n, 1);
        err = (al_error){0};
        CHECK(st && al_minimind_config_from_tensors(st, NULL, NULL, 0, &err) == -1 && err.status == shapes[i].status &&
                  strstr(err.msg, shapes[i].message),
              "%s: got \"%s\"", shapes[i].what, err.msg);
        al_st_free(st);
    }
    st = state_dict(DENSE, 1, 1); /* the embedding alone */
    CHECK(al_minimind_config_from_tensors(st, NULL, NULL, 0, &err) == -1 && err.status == AL_ERR_MISSING &&
              strstr(err.msg, "no tensor named model.layers.N"),
          "no layers: %s", err.msg);
    al_st_free(st);

    /* MoE: the router [2 experts, 4] and each expert's [3, 4]; top-2 without renormalising. */
    memcpy(e, DENSE, sizeof DENSE);
    int n = 9;
    e[n++] = (shape_entry){"model.layers.0.mlp.gate.weight", 2, {2, 4}};
    for (int x = 0; x < 2; x++) {
        static char names[2][3][64];
        snprintf(names[x][0], 64, "model.layers.0.mlp.experts.%d.gate_proj.weight", x);
        snprintf(names[x][1], 64, "model.layers.0.mlp.experts.%d.up_proj.weight", x);
        snprintf(names[x][2], 64, "model.layers.0.mlp.experts.%d.down_proj.weight", x);
        e[n++] = (shape_entry){names[x][0], 2, {3, 4}};
        e[n++] = (shape_entry){names[x][1], 2, {3, 4}};
        e[n++] = (shape_entry){names[x][2], 2, {4, 3}};
    }
    e[n++] = DENSE[N_DENSE - 2];
    st = state_dict(e, n, 1);
    f.moe_top_k = 2, f.norm_topk_prob = 0;
    cfg = config_for(st, &f, &err);
    CHECK(cfg && al_minimind_hparams(cfg, strlen(cfg), st, &hp, &err) == AL_OK && hp.n_experts == 2 && hp.top_k == 2 &&
              hp.moe_ffn_hidden == 3 && !hp.norm_topk_prob && hp.tied,
          "MoE: %s", cfg ? err.msg : err.msg);
    al_model *m = NULL;
    CHECK(cfg && al_model_from_minimind(cfg, strlen(cfg), st, 4, 4, &m, &err) == AL_OK, "MoE model: %s", err.msg);
    al_model_free(m);
    free(cfg);
    f.moe_top_k = 3;
    CHECK(al_minimind_config_from_tensors(st, &f, NULL, 0, &err) == -1 && strstr(err.msg, "MoE top-k 3 given, but the checkpoint has 2 experts"),
          "top-3 of 2: %s", err.msg);
    al_st_free(st);
    e[10] = e[n - 1]; /* expert 0's gate_proj out */
    st = state_dict(e, n - 1, 1);
    CHECK(al_minimind_config_from_tensors(st, NULL, NULL, 0, &err) == -1 && err.status == AL_ERR_MISSING &&
              strstr(err.msg, "'model.layers.0.mlp.experts.0.gate_proj.weight' not found"),
          "MoE without expert 0's gate_proj: %s", err.msg);
    al_st_free(st);
}

/* ---- storages viewed many times ------------------------------------------------------------- */

/* One storage "0" of 2^18 float16 zeros (512 KB), and a state_dict of n tensors on it that
 * describe(i, t, name) gives (as tied weights view theirs, but far more often). */
enum { SHARED_NUMEL = 1 << 18 };
typedef void (*describe_fn)(int i, tdesc *t, char *name);

static void shared_pth(buf *out, int n, describe_fn describe) {
    uint8_t *halves = calloc(SHARED_NUMEL, 2);
    buf pk = {0};
    put8(&pk, 0x80), put8(&pk, 2), put8(&pk, '}'), put8(&pk, '(');
    for (int i = 0; i < n; i++) {
        if (i && i % 900 == 0) put8(&pk, 'u'), put8(&pk, '('); /* SETITEMS in batches, as pickle writes them */
        char name[96];
        tdesc t = {name, "HalfStorage", "0", SHARED_NUMEL, 0, 1, {SHARED_NUMEL}, {1}, NULL};
        describe(i, &t, name);
        pk_str(&pk, name);
        pk_tensor(&pk, &t);
    }
    put8(&pk, 'u'), put8(&pk, '.');
    const zentry e[2] = {{"archive/data.pkl", pk.p, pk.n}, {"archive/data/0", halves, 2 * (size_t)SHARED_NUMEL}};
    zip_image z = make_zip(e, 2, 1, 0);
    free(pk.p);
    free(halves);
    take_zip(out, &z);
}

/* 2,900 keys that are no model's, each the whole storage. */
enum { N_FOREIGN = 2900 };
static void d_foreign(int i, tdesc *t, char *name) {
    (void)t;
    snprintf(name, 96, "t%d", i);
}

/* MiniMind's names for 64 layers (hidden 128, 2 heads of 64, FFN 256, vocab 512): 707 tensors
 * on one storage, each layer's at its own offset, so that their views overlap unaligned. */
enum { NAMED_LAYERS = 64, NAMED_KEYS = 3 + 11 * NAMED_LAYERS };
static void d_named(int i, tdesc *t, char *name) {
    static const struct { const char *name; int64_t rows, cols; } GLOBAL[3] = {
        {"model.embed_tokens.weight", 512, 128}, {"model.norm.weight", 128, 0}, {"lm_head.weight", 512, 128}};
    static const struct { const char *name; int64_t rows, cols; } LAYER[11] = {
        {"input_layernorm.weight", 128, 0}, {"post_attention_layernorm.weight", 128, 0},
        {"self_attn.q_proj.weight", 128, 128}, {"self_attn.k_proj.weight", 128, 128},
        {"self_attn.v_proj.weight", 128, 128}, {"self_attn.o_proj.weight", 128, 128},
        {"self_attn.q_norm.weight", 64, 0}, {"self_attn.k_norm.weight", 64, 0},
        {"mlp.gate_proj.weight", 256, 128}, {"mlp.up_proj.weight", 256, 128}, {"mlp.down_proj.weight", 128, 256}};
    int64_t rows, cols;
    if (i < 3) {
        snprintf(name, 96, "%s", GLOBAL[i].name);
        rows = GLOBAL[i].rows, cols = GLOBAL[i].cols;
    } else {
        const int l = (i - 3) / 11, k = (i - 3) % 11;
        snprintf(name, 96, "model.layers.%d.%s", l, LAYER[k].name);
        rows = LAYER[k].rows, cols = LAYER[k].cols;
        t->offset = 3001 * l; /* a prime: every layer's views start inside the last one's */
    }
    t->ndim = cols ? 2 : 1;
    t->size[0] = rows, t->size[1] = cols;
    t->stride[0] = cols ? cols : 1, t->stride[1] = 1;
}

/* One key whose shape claims 2^40 elements of the 2^18 the storage holds. */
static void d_too_big(int i, tdesc *t, char *name) {
    (void)i;
    snprintf(name, 96, "model.embed_tokens.weight");
    t->ndim = 2;
    t->size[0] = t->size[1] = 1 << 20;
    t->stride[0] = 1 << 20, t->stride[1] = 1;
}

/* 300 keys naming the storage in turn as float16, float32 and bfloat16. */
static void d_retyped(int i, tdesc *t, char *name) {
    static const char *const TYPES[3] = {"HalfStorage", "FloatStorage", "BFloat16Storage"};
    snprintf(name, 96, "model.layers.%d.input_layernorm.weight", i);
    t->type = TYPES[i % 3];
    t->numel = i % 3 == 1 ? SHARED_NUMEL / 2 : SHARED_NUMEL; /* the bytes the entry holds */
    t->size[0] = 64;
}

/* 150,000 keys that are MiniMind's names but for their expert index, on one memoized tensor:
 * past the machine's bound on dict items. */
static void many_keys(buf *out) {
    buf pk = {0};
    put8(&pk, 0x80), put8(&pk, 2), put8(&pk, '}'), put8(&pk, '(');
    pk_str(&pk, "model.norm.weight");
    pk_tensor(&pk, &BASE[0]);
    put8(&pk, 'q'), put8(&pk, 1);
    for (int i = 1; i < 150000; i++) {
        if (i % 30000 == 0) put8(&pk, 'u'), put8(&pk, '(');
        char name[96];
        snprintf(name, sizeof name, "model.layers.%d.mlp.experts.%d.up_proj.weight", i % 256, 256 + i);
        pk_str(&pk, name);
        put8(&pk, 'h'), put8(&pk, 1);
    }
    put8(&pk, 'u'), put8(&pk, '.');
    archive_of(out, &pk);
}

static void shared_foreign(buf *out) { shared_pth(out, N_FOREIGN, d_foreign); }
static void shared_named(buf *out) { shared_pth(out, NAMED_KEYS, d_named); }
static void shared_too_big(buf *out) { shared_pth(out, 1, d_too_big); }
static void shared_retyped(buf *out) { shared_pth(out, 300, d_retyped); }

/* A float16 MiniMind of 29 M parameters (58 MB), as its trainer saves one but on one storage:
 * hidden 512, 8 layers, 8 heads of 64 and 2 KV heads, FFN 1664, vocab 6400, tied (no lm_head),
 * every tensor at its own place in storage "0", its values float16 of magnitude 1/8 to 1/2.
 * Large enough that a reader holding the file beside the model shows in its peak memory. */
enum { BIG_LAYERS = 8, BIG_KEYS = 2 + 11 * BIG_LAYERS };
static void big_f16(buf *out) {
    static const struct { const char *name; int64_t rows, cols; } LAYER[11] = {
        {"input_layernorm.weight", 512, 0}, {"post_attention_layernorm.weight", 512, 0},
        {"self_attn.q_proj.weight", 512, 512}, {"self_attn.k_proj.weight", 128, 512},
        {"self_attn.v_proj.weight", 128, 512}, {"self_attn.o_proj.weight", 512, 512},
        {"self_attn.q_norm.weight", 64, 0}, {"self_attn.k_norm.weight", 64, 0},
        {"mlp.gate_proj.weight", 1664, 512}, {"mlp.up_proj.weight", 1664, 512}, {"mlp.down_proj.weight", 512, 1664}};
    tdesc t[BIG_KEYS];
    char names[BIG_KEYS][96];
    int64_t numel = 0;
    for (int i = 0; i < BIG_KEYS; i++) {
        int64_t rows = 512, cols = 0;
        if (i == 0) snprintf(names[i], 96, "model.embed_tokens.weight"), rows = 6400, cols = 512;
        else if (i == 1) snprintf(names[i], 96, "model.norm.weight");
        else {
            const int l = (i - 2) / 11, k = (i - 2) % 11;
            snprintf(names[i], 96, "model.layers.%d.%s", l, LAYER[k].name);
            rows = LAYER[k].rows, cols = LAYER[k].cols;
        }
        t[i] = (tdesc){names[i], "HalfStorage", "0", 0, numel, cols ? 2 : 1, {rows, cols}, {cols ? cols : 1, 1}, NULL};
        numel += rows * (cols ? cols : 1);
    }
    uint8_t *halves = malloc(2 * (size_t)numel);
    uint32_t h = 12345;
    for (int64_t i = 0; i < numel; i++) {
        h = h * 1103515245u + 12345u;
        const uint16_t bits = (uint16_t)((h >> 31) << 15 | (0x3000u + ((h >> 8) & 0x7FFu))); /* ±[1/8, 1/2) */
        halves[2 * i] = (uint8_t)bits, halves[2 * i + 1] = (uint8_t)(bits >> 8);
    }
    for (int i = 0; i < BIG_KEYS; i++) t[i].numel = numel;
    buf pk = {0};
    pk_state_dict(&pk, t, BIG_KEYS);
    const zentry e[2] = {{"archive/data.pkl", pk.p, pk.n}, {"archive/data/0", halves, 2 * (size_t)numel}};
    zip_image z = make_zip(e, 2, 1, 0);
    free(pk.p);
    free(halves);
    take_zip(out, &z);
}

/* The files test_pth --write DIR leaves for tests/pth-memory.test.mjs, which reads each with
 * the CLI under /usr/bin/time: refused, or (shared_named, big_f16) loaded. */
static const struct {
    const char *file;
    void (*make)(buf *out);
} SHARED[] = {
    {"shared_foreign.pth", shared_foreign}, {"shared_named.pth", shared_named}, {"view_too_big.pth", shared_too_big},
    {"storage_retyped.pth", shared_retyped}, {"many_keys.pth", many_keys}, {"big_f16.pth", big_f16},
};

static int write_shared(const char *dir) {
    int ok = 1;
    for (size_t i = 0; i < sizeof SHARED / sizeof SHARED[0]; i++) {
        buf b = {0};
        SHARED[i].make(&b);
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, SHARED[i].file);
        FILE *f = fopen(path, "wb");
        ok = ok && f && fwrite(b.p, 1, b.n, f) == b.n;
        if (f) ok = fclose(f) == 0 && ok;
        free(b.p);
    }
    if (!ok) fprintf(stderr, "test_pth: cannot write the files in %s\n", dir);
    return ok ? 0 : 1;
}

/* The reading: each storage widened once (the views share its floats), MiniMind's names
 * checked before anything is converted, every other case refused with its own message. */
static void test_shared(void) {
    al_error err = {0};
    al_pth_views v;
    /* The base archive: "c" is "a"[3:], so storage "0" is widened once (6 floats, not 9). */
    zip_image z = base_pth(0, 0);
    CHECK(al_pth_read_views(z.b.p, z.b.n, 0, &v, &err) == AL_OK && v.n_weights == 6 + 4 + 2 && v.n_entries == 4 &&
              v.entries[2].data == v.entries[0].data + 3,
          "base views: %s (%lld floats)", err.msg, (long long)v.n_weights);
    al_pth_views_free(&v);
    /* Its names are no model's: the loader refuses them before converting. */
    al_pth_model pm;
    CHECK(al_pth_model_read(z.b.p, z.b.n, NULL, &pm, &err) == AL_ERR_FORMAT && strstr(err.msg, "'a' is not a MiniMind weight") &&
              !pm.weights && !pm.tensors,
          "base as a model: %s", err.msg);
    free(z.b.p);

    /* 2,900 views of one storage: one widening, every view on the same floats. */
    buf b = {0};
    shared_foreign(&b);
    CHECK(al_pth_read_views(b.p, b.n, 0, &v, &err) == AL_OK && v.n_weights == SHARED_NUMEL && v.n_entries == N_FOREIGN,
          "2,900 views: %s (%lld floats)", err.msg, (long long)v.n_weights);
    for (int i = 1; i < v.n_entries; i++) CHECK(v.entries[i].data == v.weights, "view %d has its own copy", i);
    al_pth_views_free(&v);
    CHECK(al_pth_model_read(b.p, b.n, NULL, &pm, &err) == AL_ERR_FORMAT &&
              strstr(err.msg, "pth: the state_dict's 't0' is not a MiniMind weight") && !pm.weights,
          "2,900 foreign names: %s", err.msg);
    free(b.p);

    /* MiniMind's names on overlapping views: read, the head tied to the embedding (the same
     * floats), and no more floats than the storage's span they cover. */
    shared_named(&b);
    CHECK(al_pth_model_read(b.p, b.n, NULL, &pm, &err) == AL_OK, "named views: %s", err.msg);
    al_st_tensor embed, head;
    CHECK(pm.tensors && al_st_count(pm.tensors) == NAMED_KEYS && al_st_find(pm.tensors, "model.embed_tokens.weight", &embed) == AL_OK &&
              al_st_find(pm.tensors, "lm_head.weight", &head) == AL_OK && embed.data == head.data &&
              pm.n_weights == 3001 * (NAMED_LAYERS - 1) + 256 * 128 && pm.config && strstr(pm.config, "\"tie_word_embeddings\": true") &&
              strstr(pm.config, "\"num_hidden_layers\": 64,"),
          "named views: %lld floats, config %s", (long long)pm.n_weights, pm.config ? pm.config : "(none)");
    al_pth_model_free(&pm);
    free(b.p);

    struct {
        const char *what;
        void (*make)(buf *out);
        al_status status;
        const char *message;
    } refused[] = {
        {"a view larger than its storage", shared_too_big, AL_ERR_FORMAT,
         "(1099511627776 elements from offset 0) runs past the end of storage '0' (262144 elements)"},
        {"a storage under three dtypes", shared_retyped, AL_ERR_FORMAT, "storage '0' is named again at pickle byte"},
        {"150,000 keys", many_keys, AL_ERR_LIMIT, "more than 131072 dict items"},
    };
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        refused[i].make(&b);
        err = (al_error){0};
        CHECK(al_pth_model_read(b.p, b.n, NULL, &pm, &err) == refused[i].status && strstr(err.msg, refused[i].message) && !pm.weights,
              "%s: got \"%s\"", refused[i].what, err.msg);
        free(b.p);
    }

    /* The names a MiniMind state_dict holds, and near misses. */
    static const char *const KNOWN[] = {"model.embed_tokens.weight", "model.norm.weight", "lm_head.weight",
                                        "model.layers.0.self_attn.q_proj.weight", "model.layers.255.mlp.down_proj.weight",
                                        "model.layers.3.mlp.gate.weight", "model.layers.7.mlp.experts.255.up_proj.weight"};
    static const char *const UNKNOWN[] = {"", "t0", "model.layers.256.mlp.down_proj.weight", "model.layers.07.mlp.up_proj.weight",
                                          "model.layers..mlp.up_proj.weight", "model.layers.1.mlp.experts.256.up_proj.weight",
                                          "model.layers.1.mlp.experts.0.gate.weight", "lm_head.weight.", "model.layers.99999999999999999999.input_layernorm.weight"};
    for (size_t i = 0; i < sizeof KNOWN / sizeof KNOWN[0]; i++)
        CHECK(al_minimind_is_param_name((const uint8_t *)KNOWN[i], strlen(KNOWN[i])), "'%s' is MiniMind's", KNOWN[i]);
    for (size_t i = 0; i < sizeof UNKNOWN / sizeof UNKNOWN[0]; i++)
        CHECK(!al_minimind_is_param_name((const uint8_t *)UNKNOWN[i], strlen(UNKNOWN[i])), "'%s' is not MiniMind's", UNKNOWN[i]);
}

/* ---- the fixtures and the fuzzer's regressions ---------------------------------------------- */

static void test_file(const char *path) {
    size_t n = 0;
    uint8_t *bytes = read_file(path, &n);
    if (!bytes) return;
    uint8_t *out = NULL;
    size_t out_size = 0;
    al_error err = {0};
    CHECK(al_pth_to_safetensors(bytes, n, &out, &out_size, &err) == AL_OK, "%s: %s", path, err.msg);
    al_buffer_free(out);
    LLVMFuzzerTestOneInput(bytes, n);
    free(bytes);
}

static int replay_dir(const char *dir) {
    DIR *d = opendir(dir);
    CHECK(d != NULL, "cannot open %s", dir);
    if (!d) return 0;
    int count = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        size_t n;
        uint8_t *b = read_file(path, &n);
        if (!b) continue;
        LLVMFuzzerTestOneInput(b, n);
        count++;
        free(b);
    }
    closedir(d);
    return count;
}

int main(int argc, char **argv) {
    if (argc == 3 && !strcmp(argv[1], "--write")) return write_shared(argv[2]);
    test_valid();
    test_malformed();
    test_config();
    test_shared();
    int files = 0;
    for (int i = 1; i < argc; i++) {
        struct stat sb;
        if (stat(argv[i], &sb) == 0 && S_ISDIR(sb.st_mode)) {
            const int n = replay_dir(argv[i]);
            printf("%s: %d inputs replayed\n", argv[i], n);
        } else {
            test_file(argv[i]);
            files++;
        }
    }
    CHECK(files > 0, "usage: test_pth FILE.pth... [DIR...]");
    CHECK_DONE();
}
