/* safetensors_read.c — reads safetensors files (an 8-byte little-endian header length N, N bytes
 * of JSON describing each tensor, then the raw data); safetensors_write.c writes them. Files come from
 * downloads, so every field is checked before use: the header against a strict JSON parser
 * (json.c) and the schema, every size for overflow, every byte range against the data section. */
#include "attnlab/io.h"
#include "base/internal.h"
#include "base/json.h"
#include "base/text.h"
#include "io/safetensors_impl.h"

#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>


typedef struct {
    const char *name; /* as spelled in files */
    al_dtype dtype;
    int size;         /* bytes per element */
} st_dtype_info;

/* Every dtype the reference implementation defines; only the first four have their own
 * al_dtype, the rest are indexed (so a file holding them still opens) but not converted. */
static const st_dtype_info st_dtypes[] = {
    {"F32", AL_DTYPE_F32, 4},      {"F16", AL_DTYPE_F16, 2},      {"BF16", AL_DTYPE_BF16, 2},
    {"I64", AL_DTYPE_I64, 8},      {"F64", AL_DTYPE_OTHER, 8},    {"I32", AL_DTYPE_OTHER, 4},
    {"I16", AL_DTYPE_OTHER, 2},    {"I8", AL_DTYPE_OTHER, 1},     {"U64", AL_DTYPE_OTHER, 8},
    {"U32", AL_DTYPE_OTHER, 4},    {"U16", AL_DTYPE_OTHER, 2},    {"U8", AL_DTYPE_OTHER, 1},
    {"BOOL", AL_DTYPE_OTHER, 1},   {"F8_E5M2", AL_DTYPE_OTHER, 1}, {"F8_E4M3", AL_DTYPE_OTHER, 1},
};

struct st_tensor {
    const char *name; /* NUL-terminated, in the arena */
    const st_dtype_info *dt;
    int ndim;
    int64_t shape[AL_ST_MAX_DIMS];
    int64_t numel;
    int64_t begin, end; /* byte range [begin, end) in the data section */
};

/* One allocation: this struct, the tensor table, the name index, the names, the metadata
 * strings and a copy of the whole data section, in that order; al_st_free is a single free. */
struct al_safetensors {
    int n_tensors;
    struct st_tensor *tensors;         /* [n_tensors], in header order */
    const struct st_tensor **by_name;  /* [n_tensors], sorted by strcmp of name */
    int n_meta;
    const char *meta;                  /* n_meta pairs "key\0value\0", in header order */
    const uint8_t *data;               /* [data_size], aligned to 16 bytes; NULL: the header's index only */
    int64_t data_size;
    uint64_t data_at;                  /* where the data section starts in the file */
};

/* ---- errors ------------------------------------------------------------------------------- */


/* "[2, 3, 4]" */
static const char *shape_str(char *buf, size_t cap, const int64_t *shape, int ndim) {
    size_t o = 0;
    buf[0] = '\0';
    o += (size_t)al_snprintf(buf, cap, "[");
    for (int i = 0; i < ndim && o < cap; i++)
        o += (size_t)al_snprintf(buf + o, cap - o, "%s%" PRId64, i ? ", " : "", shape[i]);
    if (o < cap) al_snprintf(buf + o, cap - o, "]");
    return buf;
}

/* ---- header schema ------------------------------------------------------------------------ */

/* The header is walked twice with the same code: first to validate and count (tensors and
 * string bytes, nothing stored), then, once the single allocation is made, to fill it.
 * Names and metadata go to separate arenas so the metadata pairs end up contiguous. */
typedef struct {
    char *base; /* NULL while counting */
    size_t cap;
    size_t used; /* counted in both passes */
} st_arena;

typedef struct {
    struct st_tensor *tensors; /* NULL while counting */
    int64_t tensor_cap;        /* entries of `tensors` when filling */
    st_arena names, meta;
    int64_t n_tensors;
    int64_t n_meta;
} st_build;

/* Where the next string goes: the arena when filling, `scratch` when counting. */
static char *arena_dst(st_arena *a, char *scratch, size_t scratch_cap, size_t *cap) {
    if (a->base) {
        *cap = a->cap - a->used;
        return a->base + a->used;
    }
    *cap = scratch_cap;
    return scratch;
}

/* A stored string takes len + 1 bytes; in the fill pass it must fit exactly as counted (it
 * cannot differ unless the caller changed the bytes while we parsed). */
static int arena_commit(st_arena *a, char *dst, size_t len) {
    if (a->base) {
        if (len >= a->cap - a->used) return -1;
        dst[len] = '\0';
    }
    a->used += len + 1;
    return 0;
}

static al_status header_changed(al_error *err) {
    return al_fail(err, AL_ERR_FORMAT, "header changed while it was being parsed");
}

static al_status read_metadata(al_json_cursor *c, st_build *b, al_error *err) {
    char scratch[256], shown[ST_SHOWN_BUF];
    al_json_type t = al_json_peek(c);
    if (t != JSON_OBJECT)
        return al_fail(err, AL_ERR_FORMAT,
                       "\"__metadata__\" must be an object of strings, got %s",
                       al_json_type_name(t));
    al_json_enter(c);
    while (al_json_more(c)) {
        size_t cap, len, vlen;
        int nul;
        char *key = arena_dst(&b->meta, scratch, sizeof scratch, &cap);
        if (al_json_read_key(c, key, cap, &len, &nul) != 0) return header_changed(err);
        show(shown, key, len < cap ? len : cap, len > cap);
        if (nul)
            return al_fail(err, AL_ERR_FORMAT,
                           "__metadata__ key '%s' contains a NUL character (\\u0000)", shown);
        if (arena_commit(&b->meta, key, len) != 0) return header_changed(err);
        t = al_json_peek(c);
        if (t != JSON_STRING)
            return al_fail(err, AL_ERR_FORMAT, "__metadata__ key '%s': value must be a string, got %s",
                           shown, al_json_type_name(t));
        char *val = arena_dst(&b->meta, NULL, 0, &cap);
        if (al_json_read_string(c, val, cap, &vlen, &nul) != 0) return header_changed(err);
        if (nul)
            return al_fail(err, AL_ERR_FORMAT,
                           "__metadata__ key '%s': value contains a NUL character (\\u0000)",
                           shown);
        if (arena_commit(&b->meta, val, vlen) != 0) return header_changed(err);
        b->n_meta++;
    }
    return AL_OK;
}

/* Reads one entry of data_offsets or shape: a non-negative integer that fits in int64. */
static al_status read_dim(al_json_cursor *c, const char *shown, const char *field, int i,
                          int64_t *out, al_error *err) {
    uint64_t v = 0;
    const char *tok = NULL;
    size_t tok_len = 0;
    al_json_type t = al_json_peek(c);
    switch (al_json_read_uint(c, INT64_MAX, &v, &tok, &tok_len)) {
    case JSON_UINT_OK:
        *out = (int64_t)v;
        return AL_OK;
    case JSON_UINT_NOT_NUMBER:
        return al_fail(err, AL_ERR_FORMAT, "tensor '%s': %s[%d] must be a non-negative integer, got %s",
                       shown, field, i, al_json_type_name(t));
    case JSON_UINT_NEGATIVE:
    case JSON_UINT_FRACTION:
        return al_fail(err, AL_ERR_FORMAT, "tensor '%s': %s[%d] must be a non-negative integer, got %.*s",
                       shown, field, i, tok_len > 40 ? 40 : (int)tok_len, tok);
    case JSON_UINT_TOO_LARGE:
        return al_fail(err, AL_ERR_FORMAT, "tensor '%s': %s[%d] = %.*s%s is too large", shown,
                       field, i, tok_len > 40 ? 40 : (int)tok_len, tok, tok_len > 40 ? "..." : "");
    }
    return header_changed(err);
}

static al_status read_dtype(al_json_cursor *c, const char *shown, struct st_tensor *t,
                            al_error *err) {
    char buf[16], sb[ST_SHOWN_BUF];
    size_t len;
    int nul;
    al_json_type jt = al_json_peek(c);
    if (jt != JSON_STRING)
        return al_fail(err, AL_ERR_FORMAT, "tensor '%s': \"dtype\" must be a string, got %s",
                       shown, al_json_type_name(jt));
    if (al_json_read_string(c, buf, sizeof buf, &len, &nul) != 0) return header_changed(err);
    for (size_t i = 0; i < sizeof st_dtypes / sizeof st_dtypes[0]; i++) {
        if (strlen(st_dtypes[i].name) == len && memcmp(st_dtypes[i].name, buf, len) == 0) {
            t->dt = &st_dtypes[i];
            return AL_OK;
        }
    }
    return al_fail(err, AL_ERR_FORMAT, "tensor '%s': unknown dtype '%s'", shown,
                   show(sb, buf, len < sizeof buf ? len : sizeof buf, len > sizeof buf));
}

static al_status read_shape(al_json_cursor *c, const char *shown, struct st_tensor *t,
                            al_error *err) {
    al_json_type jt = al_json_peek(c);
    if (jt != JSON_ARRAY)
        return al_fail(err, AL_ERR_FORMAT, "tensor '%s': \"shape\" must be an array, got %s",
                       shown, al_json_type_name(jt));
    al_json_enter(c);
    t->ndim = 0;
    while (al_json_more(c)) {
        if (t->ndim == AL_ST_MAX_DIMS)
            return al_fail(err, AL_ERR_FORMAT, "tensor '%s': shape has more than %d dimensions",
                           shown, AL_ST_MAX_DIMS);
        al_status s = read_dim(c, shown, "shape", t->ndim, &t->shape[t->ndim], err);
        if (s != AL_OK) return s;
        t->ndim++;
    }
    return AL_OK;
}

static al_status read_offsets(al_json_cursor *c, const char *shown, struct st_tensor *t,
                              al_error *err) {
    int64_t off[2] = {0, 0};
    int n = 0;
    al_json_type jt = al_json_peek(c);
    if (jt != JSON_ARRAY)
        return al_fail(err, AL_ERR_FORMAT,
                       "tensor '%s': \"data_offsets\" must be an array [begin, end], got %s",
                       shown, al_json_type_name(jt));
    al_json_enter(c);
    while (al_json_more(c)) {
        if (n == 2)
            return al_fail(err, AL_ERR_FORMAT,
                           "tensor '%s': data_offsets must be [begin, end] but has more than 2 entries",
                           shown);
        al_status s = read_dim(c, shown, "data_offsets", n, &off[n], err);
        if (s != AL_OK) return s;
        n++;
    }
    if (n != 2)
        return al_fail(err, AL_ERR_FORMAT,
                       "tensor '%s': data_offsets must be [begin, end] but has %d entr%s", shown,
                       n, n == 1 ? "y" : "ies");
    t->begin = off[0];
    t->end = off[1];
    return AL_OK;
}

/* One tensor entry: {"dtype": ..., "shape": [...], "data_offsets": [begin, end]}, each field
 * exactly once and no other field, then the arithmetic that ties them together. */
static al_status read_tensor(al_json_cursor *c, const char *shown, struct st_tensor *t,
                             al_error *err) {
    enum { F_DTYPE = 1, F_SHAPE = 2, F_OFFSETS = 4 };
    static const char *const field_names[] = {"dtype", "shape", "data_offsets"};
    unsigned seen = 0;
    char sb[ST_SHOWN_BUF], shp[200];
    al_json_type jt = al_json_peek(c);
    if (jt != JSON_OBJECT)
        return al_fail(err, AL_ERR_FORMAT, "tensor '%s': entry must be an object, got %s", shown,
                       al_json_type_name(jt));
    al_json_enter(c);
    while (al_json_more(c)) {
        char key[16];
        size_t len;
        int nul, f = 0;
        if (al_json_read_key(c, key, sizeof key, &len, &nul) != 0) return header_changed(err);
        for (int i = 0; i < 3; i++)
            if (strlen(field_names[i]) == len && memcmp(field_names[i], key, len) == 0) f = 1 << i;
        if (f == 0)
            return al_fail(err, AL_ERR_FORMAT, "tensor '%s': unknown field '%s'", shown,
                           show(sb, key, len < sizeof key ? len : sizeof key, len > sizeof key));
        if (seen & (unsigned)f)
            return al_fail(err, AL_ERR_FORMAT, "tensor '%s': duplicate field \"%.*s\"", shown,
                           (int)len, key);
        seen |= (unsigned)f;
        al_status s = f == F_DTYPE ? read_dtype(c, shown, t, err)
                      : f == F_SHAPE ? read_shape(c, shown, t, err)
                                     : read_offsets(c, shown, t, err);
        if (s != AL_OK) return s;
    }
    for (int i = 0; i < 3; i++)
        if (!(seen & (1u << i)))
            return al_fail(err, AL_ERR_FORMAT, "tensor '%s': missing \"%s\"", shown,
                           field_names[i]);

    /* numel = Π shape; a zero anywhere makes it 0 whatever the other sizes are, otherwise
     * each product is checked against INT64_MAX before it is formed. */
    shape_str(shp, sizeof shp, t->shape, t->ndim);
    int64_t numel = 1;
    for (int i = 0; i < t->ndim; i++)
        if (t->shape[i] == 0) numel = 0;
    for (int i = 0; i < t->ndim && numel != 0; i++) {
        if (numel > INT64_MAX / t->shape[i])
            return al_fail(err, AL_ERR_FORMAT,
                           "tensor '%s': shape %s has more elements than fit in 64 bits", shown,
                           shp);
        numel *= t->shape[i];
    }
    if (numel > INT64_MAX / t->dt->size)
        return al_fail(err, AL_ERR_FORMAT,
                       "tensor '%s': shape %s of %s: %" PRId64 " elements x %d bytes overflows 64 bits",
                       shown, shp, t->dt->name, numel, t->dt->size);
    t->numel = numel;
    int64_t nbytes = numel * t->dt->size;
    if (t->begin > t->end)
        return al_fail(err, AL_ERR_FORMAT,
                       "tensor '%s': data_offsets [%" PRId64 ", %" PRId64 "] are reversed (begin > end)",
                       shown, t->begin, t->end);
    if (t->end - t->begin != nbytes)
        return al_fail(err, AL_ERR_FORMAT,
                       "tensor '%s': shape %s of %s needs %" PRId64 " bytes but data_offsets [%" PRId64
                       ", %" PRId64 "] span %" PRId64,
                       shown, shp, t->dt->name, nbytes, t->begin, t->end, t->end - t->begin);
    return AL_OK;
}

static al_status walk_header(const char *hdr, size_t n, st_build *b, al_error *err) {
    al_json_cursor c;
    int seen_meta = 0;
    char scratch[256], shown[ST_SHOWN_BUF];
    al_json_cursor_init(&c, hdr, n);
    al_json_type t = al_json_peek(&c);
    if (t != JSON_OBJECT)
        return al_fail(err, AL_ERR_FORMAT, "header is %s, not an object", al_json_type_name(t));
    al_json_enter(&c);
    while (al_json_more(&c)) {
        size_t cap, len;
        int nul;
        /* The key is decoded into scratch first: whether it is "__metadata__" decides where it
         * belongs. A tensor name is then decoded again, from the same place, into the arena. */
        al_json_cursor at_key = c;
        if (al_json_read_key(&c, scratch, sizeof scratch, &len, &nul) != 0)
            return header_changed(err);
        show(shown, scratch, len < sizeof scratch ? len : sizeof scratch, len > sizeof scratch);
        if (len == 12 && memcmp(scratch, "__metadata__", 12) == 0) {
            if (seen_meta)
                return al_fail(err, AL_ERR_FORMAT, "duplicate \"__metadata__\" entry");
            seen_meta = 1;
            al_status s = read_metadata(&c, b, err);
            if (s != AL_OK) return s;
            continue;
        }
        if (nul)
            return al_fail(err, AL_ERR_FORMAT,
                           "tensor name '%s' contains a NUL character (\\u0000)", shown);
        char *name = arena_dst(&b->names, scratch, sizeof scratch, &cap);
        if (b->names.base) {
            size_t len2;
            c = at_key;
            if (al_json_read_key(&c, name, cap, &len2, &nul) != 0 || len2 != len)
                return header_changed(err);
        }
        struct st_tensor tensor;
        memset(&tensor, 0, sizeof tensor);
        al_status s = read_tensor(&c, shown, &tensor, err);
        if (s != AL_OK) return s;
        if (arena_commit(&b->names, name, len) != 0) return header_changed(err);
        if (b->tensors) {
            if (b->n_tensors >= b->tensor_cap) return header_changed(err);
            tensor.name = name;
            b->tensors[b->n_tensors] = tensor;
        }
        b->n_tensors++;
    }
    return AL_OK;
}

/* ---- cross-tensor checks ------------------------------------------------------------------ */

static int cmp_by_name(const void *a, const void *b) {
    const struct st_tensor *x = *(const struct st_tensor *const *)a;
    const struct st_tensor *y = *(const struct st_tensor *const *)b;
    return strcmp(x->name, y->name);
}

static int cmp_by_offset(const void *a, const void *b) {
    const struct st_tensor *x = *(const struct st_tensor *const *)a;
    const struct st_tensor *y = *(const struct st_tensor *const *)b;
    if (x->begin != y->begin) return x->begin < y->begin ? -1 : 1;
    if (x->end != y->end) return x->end < y->end ? -1 : 1;
    return strcmp(x->name, y->name); /* a total order: the overlap reported never depends on the sort */
}

int al_st_cmp_str(const void *a, const void *b) {
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Duplicate names, then overlapping byte ranges, then ranges outside the data section.
 * `scratch` holds n_tensors pointers (and n_meta, whichever is larger). */
static al_status check_tensors(al_safetensors *st, void *scratch, al_error *err) {
    char a[ST_SHOWN_BUF], b[ST_SHOWN_BUF];
    int n = st->n_tensors;

    for (int i = 0; i + 1 < n; i++)
        if (strcmp(st->by_name[i]->name, st->by_name[i + 1]->name) == 0) {
            const char *nm = st->by_name[i]->name;
            return al_fail(err, AL_ERR_FORMAT, "duplicate tensor name '%s'",
                           show(a, nm, strlen(nm), 0));
        }

    if (st->n_meta > 1) {
        const char **keys = (const char **)scratch;
        const char *p = st->meta;
        for (int i = 0; i < st->n_meta; i++) {
            keys[i] = p;
            p += strlen(p) + 1;
            p += strlen(p) + 1;
        }
        al_sort(keys, (size_t)st->n_meta, sizeof *keys, al_st_cmp_str);
        for (int i = 0; i + 1 < st->n_meta; i++)
            if (strcmp(keys[i], keys[i + 1]) == 0)
                return al_fail(err, AL_ERR_FORMAT, "duplicate __metadata__ key '%s'",
                               show(a, keys[i], strlen(keys[i]), 0));
    }

    /* Sorted by begin, a non-empty range overlaps an earlier one exactly when it starts before
     * the furthest end seen so far. Empty tensors occupy no bytes and overlap nothing. */
    const struct st_tensor **by_off = (const struct st_tensor **)scratch;
    int m = 0;
    for (int i = 0; i < n; i++)
        if (st->tensors[i].end > st->tensors[i].begin) by_off[m++] = &st->tensors[i];
    al_sort(by_off, (size_t)m, sizeof *by_off, cmp_by_offset);
    const struct st_tensor *furthest = NULL;
    int64_t covered = 0, max_end = 0;
    for (int i = 0; i < m; i++) {
        const struct st_tensor *t = by_off[i];
        if (furthest && t->begin < furthest->end)
            return al_fail(err, AL_ERR_FORMAT,
                           "tensors '%s' (data_offsets [%" PRId64 ", %" PRId64 "]) and '%s' (data_offsets [%" PRId64
                           ", %" PRId64 "]) overlap",
                           show(a, furthest->name, strlen(furthest->name), 0), furthest->begin,
                           furthest->end, show(b, t->name, strlen(t->name), 0), t->begin, t->end);
        if (!furthest || t->end > furthest->end) furthest = t;
        covered += t->end - t->begin; /* disjoint ranges below max_end: cannot overflow */
        if (t->end > max_end) max_end = t->end;
    }

    for (int i = 0; i < n; i++) {
        const struct st_tensor *t = &st->tensors[i];
        if (t->end <= st->data_size) continue;
        show(a, t->name, strlen(t->name), 0);
        /* Ranges that tile [0, max_end) without gaps describe a well-formed file whose end is
         * missing (an interrupted download), which deserves its own message. */
        if (covered == max_end && max_end > st->data_size)
            return al_fail(err, AL_ERR_FORMAT,
                           "data section truncated: the header describes %" PRId64
                           " bytes of tensor data but the file holds %" PRId64 " (tensor '%s' ends at %" PRId64 ")",
                           max_end, st->data_size, a, t->end);
        return al_fail(err, AL_ERR_FORMAT,
                       "tensor '%s': data_offsets [%" PRId64 ", %" PRId64 "] outside the %" PRId64
                       "-byte data section",
                       a, t->begin, t->end, st->data_size);
    }
    return AL_OK;
}

/* ---- parse -------------------------------------------------------------------------------- */

static uint64_t load_le64(const uint8_t *p) {
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = v << 8 | p[i];
    return v;
}

/* a += b on sizes, failing instead of wrapping (size_t is 32 bits in WebAssembly). */
static int size_add(size_t *a, size_t b) {
    if (*a > SIZE_MAX - b) return -1;
    *a += b;
    return 0;
}

static int size_align16(size_t *a) { return size_add(a, (16 - *a % 16) % 16); }

/* How a parse keeps the data section: copied into the index's block, borrowed from the
 * caller's image, or not at all (only the header is checked, against the file's size). */
typedef enum { KEEP_COPY, KEEP_VIEW, KEEP_NONE, KEEP_INDEX } st_keep;

al_status al_st_header_size(const uint8_t *bytes, size_t avail, uint64_t file_size,
                            uint64_t *header_end, al_error *err) {
    if (header_end) *header_end = 0;
    if (!bytes && avail) return al_fail(err, AL_ERR_ARG, "al_st_header_size: bytes is NULL");
    if (file_size == 0) return al_fail(err, AL_ERR_FORMAT, "file is empty (0 bytes)");
    if (file_size < 8)
        return al_fail(err, AL_ERR_FORMAT,
                       "file is %" PRIu64 " bytes, shorter than the 8-byte header length field",
                       file_size);
    if (avail < 8) return al_fail(err, AL_ERR_ARG, "al_st_header_size: give the first 8 bytes");
    uint64_t n = load_le64(bytes);
    if (n == 0)
        return al_fail(err, AL_ERR_FORMAT, "header length is 0; the header must be a JSON object");
    if (n > ST_MAX_HEADER_BYTES)
        return al_fail(err, AL_ERR_FORMAT, "header length %" PRIu64 " exceeds the %u-byte limit",
                       n, ST_MAX_HEADER_BYTES);
    if (n > file_size - 8)
        return al_fail(err, AL_ERR_FORMAT,
                       "header length %" PRIu64 " runs past the end of the file (%" PRIu64
                       " bytes follow the length field)",
                       n, file_size - 8);
    if (header_end) *header_end = 8 + n;
    return AL_OK;
}

/* bytes[0, avail) holds the file's first avail bytes (all of them unless keep is KEEP_NONE, when
 * the length field and the header suffice) of a file of file_size bytes. */
static al_status parse(const uint8_t *bytes, size_t avail, uint64_t file_size, st_keep keep,
                       al_safetensors **out, al_error *err) {
    if (out) *out = NULL;
    if (!bytes && avail) return al_fail(err, AL_ERR_ARG, "al_st_parse: bytes is NULL");
    uint64_t header_end = 0;
    al_status s = al_st_header_size(bytes, avail, file_size, &header_end, err);
    if (s != AL_OK) return s;
    if (avail < header_end)
        return al_fail(err, AL_ERR_ARG, "the header needs %" PRIu64 " bytes, %zu given", header_end, avail);
    if (file_size - header_end > (uint64_t)SIZE_MAX)
        return al_fail(err, AL_ERR_LIMIT, "file too large to index in this address space");

    const char *hdr = (const char *)bytes + 8;
    size_t hlen = (size_t)(header_end - 8), data_size = (size_t)(file_size - header_end);
    char why[160];
    if (al_json_validate(hdr, hlen, why, sizeof why) != 0)
        return al_fail(err, AL_ERR_FORMAT, "header is not valid JSON: %s", why);

    /* Pass 1: validate the schema and count what must be stored. */
    st_build count;
    memset(&count, 0, sizeof count);
    s = walk_header(hdr, hlen, &count, err);
    if (s != AL_OK) return s;
    if (count.n_tensors > INT_MAX || count.n_meta > INT_MAX ||
        (uint64_t)data_size > (uint64_t)INT64_MAX)
        return al_fail(err, AL_ERR_LIMIT, "file holds more tensors or bytes than can be indexed");

    /* One block: struct | tensors | by_name | names | meta | (pad to 16) data (if copied). */
    size_t nt = (size_t)count.n_tensors, nm = (size_t)count.n_meta;
    size_t off_tensors = sizeof(al_safetensors), off_by_name, off_names, off_meta, off_data;
    size_t total;
    /* nt and nm are far below these bounds (an entry takes >= 40 header bytes), but size_t
     * may be 32 bits, so the products are still guarded. */
    int bad = nt > SIZE_MAX / sizeof(struct st_tensor) || nm > SIZE_MAX / sizeof(void *) ||
              nt > SIZE_MAX / sizeof(void *);
    bad |= size_align16(&off_tensors);
    off_by_name = off_tensors;
    bad |= size_add(&off_by_name, nt * sizeof(struct st_tensor));
    off_names = off_by_name;
    bad |= size_add(&off_names, nt * sizeof(struct st_tensor *));
    off_meta = off_names;
    bad |= size_add(&off_meta, count.names.used);
    off_data = off_meta;
    bad |= size_add(&off_data, count.meta.used);
    bad |= size_align16(&off_data);
    total = off_data;
    if (keep == KEEP_COPY) bad |= size_add(&total, data_size);
    if (bad) return al_fail(err, AL_ERR_LIMIT, "file too large to index in this address space");

    size_t nscratch = nt > nm ? nt : nm;
    unsigned char *block = malloc(total);
    void *scratch = malloc((nscratch ? nscratch : 1) * sizeof(void *));
    if (!block || !scratch) {
        free(block);
        free(scratch);
        return al_fail(err, AL_ERR_NOMEM, "out of memory for a %zu-byte safetensors index",
                       total);
    }

    /* Pass 2: the same walk, storing into the block. */
    st_build fill;
    memset(&fill, 0, sizeof fill);
    fill.tensors = (struct st_tensor *)(block + off_tensors);
    fill.tensor_cap = count.n_tensors;
    fill.names.base = (char *)(block + off_names);
    fill.names.cap = count.names.used;
    fill.meta.base = (char *)(block + off_meta);
    fill.meta.cap = count.meta.used;
    s = walk_header(hdr, hlen, &fill, err);
    if (s == AL_OK && (fill.n_tensors != count.n_tensors || fill.n_meta != count.n_meta ||
                       fill.names.used != count.names.used || fill.meta.used != count.meta.used))
        s = header_changed(err);

    al_safetensors *st = (al_safetensors *)block;
    if (s == AL_OK) {
        st->n_tensors = (int)nt;
        st->tensors = fill.tensors;
        st->by_name = (const struct st_tensor **)(block + off_by_name);
        st->n_meta = (int)nm;
        st->meta = fill.meta.base;
        st->data = keep == KEEP_COPY ? block + off_data : keep == KEEP_VIEW ? bytes + header_end : NULL;
        st->data_size = (int64_t)data_size;
        st->data_at = header_end;
        for (size_t i = 0; i < nt; i++) st->by_name[i] = &st->tensors[i];
        al_sort(st->by_name, nt, sizeof *st->by_name, cmp_by_name);
        s = check_tensors(st, scratch, err);
    }
    free(scratch);
    if (s != AL_OK || keep == KEEP_NONE) {
        free(block);
        return s == AL_OK ? al_ok(err) : s;
    }
    /* Copied only now that every range is known to lie inside it. */
    if (keep == KEEP_COPY && data_size) memcpy(block + off_data, bytes + header_end, data_size);
    *out = st;
    return al_ok(err);
}

al_status al_st_parse(const uint8_t *bytes, size_t size, al_safetensors **out, al_error *err) {
    if (!out) return al_fail(err, AL_ERR_ARG, "al_st_parse: out is NULL");
    return parse(bytes, size, size, KEEP_COPY, out, err);
}

al_status al_st_parse_view(const uint8_t *bytes, size_t size, al_safetensors **out,
                           al_error *err) {
    if (!out) return al_fail(err, AL_ERR_ARG, "al_st_parse_view: out is NULL");
    return parse(bytes, size, size, KEEP_VIEW, out, err);
}

al_status al_st_check_header(const uint8_t *bytes, size_t avail, uint64_t file_size,
                             al_error *err) {
    return parse(bytes, avail, file_size, KEEP_NONE, NULL, err);
}

al_status al_st_parse_header(const uint8_t *bytes, size_t avail, uint64_t file_size, al_safetensors **out,
                             al_error *err) {
    if (!out) return al_fail(err, AL_ERR_ARG, "al_st_parse_header: out is NULL");
    return parse(bytes, avail, file_size, KEEP_INDEX, out, err);
}

al_status al_st_index_placed(const al_st_placed *entries, int n, const char *const *meta_kv, int n_meta,
                             const void *data, uint64_t data_size, al_safetensors **out, al_error *err) {
    if (!out) return al_fail(err, AL_ERR_ARG, "al_st_index_placed: out is NULL");
    *out = NULL;
    if (n < 0 || n_meta < 0 || (!entries && n) || (!meta_kv && n_meta) || data_size > INT64_MAX)
        return al_fail(err, AL_ERR_ARG, "al_st_index_placed: bad counts or NULL arrays");
    /* 1. the sizes of the block (struct | tensors | by_name | names | meta), as parse() lays it out */
    size_t names = 0, meta = 0;
    for (int i = 0; i < n; i++)
        if (size_add(&names, strlen(entries[i].name) + 1)) return al_fail(err, AL_ERR_LIMIT, "al_st_index_placed: names too long");
    for (int i = 0; i < 2 * n_meta; i++)
        if (size_add(&meta, strlen(meta_kv[i]) + 1)) return al_fail(err, AL_ERR_LIMIT, "al_st_index_placed: metadata too long");
    size_t off_tensors = sizeof(al_safetensors), off_by_name, off_names, total;
    int bad = (size_t)n > SIZE_MAX / sizeof(struct st_tensor) || size_align16(&off_tensors);
    off_by_name = off_tensors;
    bad |= size_add(&off_by_name, (size_t)n * sizeof(struct st_tensor));
    off_names = off_by_name;
    bad |= size_add(&off_names, (size_t)n * sizeof(struct st_tensor *));
    total = off_names;
    bad |= size_add(&total, names) | size_add(&total, meta);
    if (bad) return al_fail(err, AL_ERR_LIMIT, "al_st_index_placed: too many tensors to index in this address space");
    unsigned char *block = malloc(total ? total : 1);
    if (!block) return al_fail(err, AL_ERR_NOMEM, "out of memory for a %zu-byte safetensors index", total);

    /* 2. each tensor: its dtype, its shape's product, and its bytes inside [0, data_size) */
    al_safetensors *st = (al_safetensors *)block;
    st->n_tensors = n;
    st->tensors = (struct st_tensor *)(block + off_tensors);
    st->by_name = (const struct st_tensor **)(block + off_by_name);
    st->n_meta = n_meta;
    st->data = data;
    st->data_size = (int64_t)data_size;
    st->data_at = 0;
    char *name_at = (char *)block + off_names, *meta_at = name_at + names;
    st->meta = meta_at;
    for (int i = 0; i < 2 * n_meta; i++) {
        const size_t len = strlen(meta_kv[i]) + 1;
        memcpy(meta_at, meta_kv[i], len);
        meta_at += len;
    }
    al_status s = AL_OK;
    for (int i = 0; i < n && s == AL_OK; i++) {
        const al_st_placed *e = &entries[i];
        struct st_tensor *t = &st->tensors[i];
        const size_t len = strlen(e->name) + 1;
        t->name = memcpy(name_at, e->name, len);
        name_at += len;
        t->dt = NULL;
        for (size_t k = 0; k < sizeof st_dtypes / sizeof st_dtypes[0] && !t->dt; k++)
            if (st_dtypes[k].dtype == e->dtype && e->dtype != AL_DTYPE_OTHER) t->dt = &st_dtypes[k];
        t->ndim = e->ndim;
        t->numel = 1;
        int64_t nbytes = 0;
        if (!t->dt || e->ndim < 0 || e->ndim > AL_ST_MAX_DIMS) s = AL_ERR_SHAPE;
        for (int d = 0; d < t->ndim && s == AL_OK; d++) {
            t->shape[d] = e->shape[d];
            if (e->shape[d] < 0 || !al_mul_ok(t->numel, e->shape[d], &t->numel)) s = AL_ERR_SHAPE;
        }
        if (s == AL_OK && !al_mul_ok(t->numel, t->dt->size, &nbytes)) s = AL_ERR_SHAPE;
        const uint64_t at = nbytes ? e->offset : 0; /* an empty tensor lies anywhere */
        if (s == AL_OK && (at > data_size || (uint64_t)nbytes > data_size - at)) s = AL_ERR_ARG;
        t->begin = (int64_t)at;
        t->end = (int64_t)at + nbytes;
        st->by_name[i] = t;
        if (s != AL_OK)
            s = al_fail(err, s, "al_st_index_placed: tensor '%s' has a bad dtype or shape, or lies outside the %llu bytes", t->name,
                        (unsigned long long)data_size);
    }
    /* 3. the name index; names once each */
    if (s == AL_OK) al_sort(st->by_name, (size_t)n, sizeof *st->by_name, cmp_by_name);
    for (int i = 0; i + 1 < n && s == AL_OK; i++)
        if (strcmp(st->by_name[i]->name, st->by_name[i + 1]->name) == 0) {
            char a[ST_SHOWN_BUF];
            const char *nm = st->by_name[i]->name;
            s = al_fail(err, AL_ERR_FORMAT, "duplicate tensor name '%s'", show(a, nm, strlen(nm), 0));
        }
    if (s != AL_OK) {
        free(block);
        return s;
    }
    *out = st;
    return al_ok(err);
}

void al_st_free(al_safetensors *st) { free(st); }

int al_st_count(const al_safetensors *st) { return st ? st->n_tensors : 0; }

static void fill_info(const al_safetensors *st, const struct st_tensor *t, al_st_tensor *info) {
    memset(info, 0, sizeof *info);
    info->name = t->name;
    info->dtype = t->dt->dtype;
    info->dtype_name = t->dt->name;
    info->ndim = t->ndim;
    for (int i = 0; i < t->ndim; i++) info->shape[i] = t->shape[i];
    info->numel = t->numel;
    info->data = st->data ? st->data + t->begin : NULL;
    info->nbytes = t->end - t->begin;
    info->offset = st->data_at + (uint64_t)t->begin;
}

al_status al_st_get(const al_safetensors *st, int index, al_st_tensor *info) {
    if (!st || !info || index < 0 || index >= st->n_tensors) return AL_ERR_ARG;
    fill_info(st, &st->tensors[index], info);
    return AL_OK;
}

static const struct st_tensor *find(const al_safetensors *st, const char *name) {
    int lo = 0, hi = st->n_tensors; /* binary search in by_name over [lo, hi) */
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        int c = strcmp(st->by_name[mid]->name, name);
        if (c == 0) return st->by_name[mid];
        if (c < 0) lo = mid + 1;
        else hi = mid;
    }
    return NULL;
}

int al_st_index(const al_safetensors *st, const char *name) {
    const struct st_tensor *t = st && name ? find(st, name) : NULL;
    return t ? (int)(t - st->tensors) : -1;
}

al_status al_st_find(const al_safetensors *st, const char *name, al_st_tensor *info) {
    if (!st || !name || !info) return AL_ERR_ARG;
    const struct st_tensor *t = find(st, name);
    if (!t) return AL_ERR_MISSING;
    fill_info(st, t, info);
    return AL_OK;
}

const char *al_st_metadata(const al_safetensors *st, const char *key) {
    if (!st || !key) return NULL;
    const char *p = st->meta;
    for (int i = 0; i < st->n_meta; i++) {
        const char *value = p + strlen(p) + 1;
        if (strcmp(p, key) == 0) return value;
        p = value + strlen(value) + 1;
    }
    return NULL;
}

/* ---- float32 conversion ------------------------------------------------------------------- */

/* Little-endian loads byte by byte: no alignment assumption, and right on any host. */
static uint32_t load_le32(const uint8_t *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static uint16_t load_le16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }

/* Element i as float32 bits: bfloat16 is the top half of a float32. */
static uint32_t element_bits(al_dtype dt, const uint8_t *src, int64_t i) {
    switch (dt) {
    case AL_DTYPE_F16: return al_f16_bits_to_f32_bits(load_le16(src + 2 * i));
    case AL_DTYPE_BF16: return (uint32_t)load_le16(src + 2 * i) << 16;
    default: return load_le32(src + 4 * i);
    }
}

/* "element 5 (index [1, 2])" for a non-finite value, so a user can find it in their tensor. */
void al_st_describe_index(char *buf, size_t cap, const int64_t *shape, int ndim, int64_t i) {
    int64_t idx[AL_ST_MAX_DIMS], rest = i;
    char shp[200];
    for (int d = ndim - 1; d >= 0; d--) {
        idx[d] = shape[d] ? rest % shape[d] : 0;
        rest = shape[d] ? rest / shape[d] : 0;
    }
    if (ndim >= 2)
        al_snprintf(buf, cap, "element %" PRId64 " (index %s)", i,
                    shape_str(shp, sizeof shp, idx, ndim));
    else
        al_snprintf(buf, cap, "element %" PRId64, i);
}

/* Every value of tensor t (its bytes at src) finite, or a message naming the first that is not.
 * All three formats keep IEEE's layout after widening: exponent bits all ones = inf/NaN. */
static al_status check_finite(const struct st_tensor *t, const uint8_t *src, const char *shown, al_error *err) {
    char where[240];
    const al_dtype dt = t->dt->dtype;
    for (int64_t i = 0; i < t->numel; i++) {
        uint32_t b = element_bits(dt, src, i);
        if ((b & 0x7F800000u) == 0x7F800000u) {
            al_st_describe_index(where, sizeof where, t->shape, t->ndim, i);
            return al_fail(err, AL_ERR_NONFINITE, "tensor '%s': %s is %s", shown, where,
                           (b & 0x007FFFFFu) ? "NaN" : (b >> 31) ? "-inf" : "+inf");
        }
    }
    return AL_OK;
}

al_status al_st_read_f32(const al_safetensors *st, const char *name, float *out, int64_t cap,
                         al_error *err) {
    char shown[ST_SHOWN_BUF];
    if (!st || !name) return al_fail(err, AL_ERR_ARG, "al_st_read_f32: st or name is NULL");
    show(shown, name, strlen(name), 0);
    const struct st_tensor *t = find(st, name);
    if (!t) return al_fail(err, AL_ERR_MISSING, "no tensor named '%s'", shown);
    al_dtype dt = t->dt->dtype;
    if (dt != AL_DTYPE_F32 && dt != AL_DTYPE_F16 && dt != AL_DTYPE_BF16)
        return al_fail(err, AL_ERR_DTYPE,
                       "tensor '%s' has dtype %s; only F32, F16 and BF16 convert to float32",
                       shown, t->dt->name);
    if (cap < t->numel)
        return al_fail(err, AL_ERR_CAPACITY,
                       "tensor '%s' has %" PRId64 " elements but the buffer holds %" PRId64, shown,
                       t->numel, cap);
    if (!out && t->numel > 0) return al_fail(err, AL_ERR_ARG, "al_st_read_f32: out is NULL");
    if (!st->data) return al_fail(err, AL_ERR_ARG, "al_st_read_f32: the index holds no data");

    /* Checked before anything is written, so a refused tensor leaves `out` untouched. */
    const uint8_t *src = st->data + t->begin;
    al_status s = check_finite(t, src, shown, err);
    if (s != AL_OK) return s;
    for (int64_t i = 0; i < t->numel; i++) out[i] = al_float_of_bits(element_bits(dt, src, i));
    return al_ok(err);
}

al_status al_st_check_values(const al_safetensors *st, const char *name, const void *data, al_error *err) {
    char shown[ST_SHOWN_BUF];
    if (!st || !name) return al_fail(err, AL_ERR_ARG, "al_st_check_values: st or name is NULL");
    show(shown, name, strlen(name), 0);
    const struct st_tensor *t = find(st, name);
    if (!t) return al_fail(err, AL_ERR_MISSING, "no tensor named '%s'", shown);
    const al_dtype dt = t->dt->dtype;
    if (dt != AL_DTYPE_F32 && dt != AL_DTYPE_F16 && dt != AL_DTYPE_BF16)
        return al_fail(err, AL_ERR_DTYPE, "tensor '%s' has dtype %s; only F32, F16 and BF16 convert to float32", shown,
                       t->dt->name);
    if (!data && !st->data) return al_fail(err, AL_ERR_ARG, "al_st_check_values: no data");
    return check_finite(t, data ? data : st->data + t->begin, shown, err);
}
