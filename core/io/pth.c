/* pth.c — MiniMind's own training output read without Python. A .pth is torch.save's zip archive
 * (zip.c): <stem>/data.pkl, a pickle of the state_dict, and <stem>/data/<key>, one raw
 * little-endian storage per key. The pickle is run by a small machine that knows only the
 * opcodes and globals a dict of tensors needs; it builds values, never calls anything, and
 * refuses every other opcode and global by name (BUILD only sets an OrderedDict's `_metadata`,
 * as model.state_dict() pickles it, and is dropped). The tensors come out as float32 views
 * (al_pth_read_views): every storage element some tensor views widened once, so that 2,900
 * tensors on one storage cost its floats once, not 2,900 copies; the MiniMind loader checks the
 * names before that and indexes the views, al_pth_to_safetensors serialises them as an image. */
#include "attnlab/io.h"
#include "base/internal.h"
#include "base/json.h"
#include "io/pth.h"
#include "io/zip.h"
#include "base/text.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Bounds on what a pickle may make the machine hold. A state_dict nests three MARKs deep and
 * its stack holds at most pickle's batch of 1000 items (2000 values) plus a few. A tensor
 * takes about 17 values and 15 tuple elements (fewer with the memo), and MiniMind's largest
 * state_dicts hold a few hundred tensors; the bounds keep all the machine holds under 45 MB
 * (values 12, elements 8, memo 8, tensors 11.5, items 3), however the pickle repeats itself
 * through the memo. */
enum {
    PK_MAX_STACK = 1 << 16,   /* values on the stack */
    PK_MAX_MARKS = 64,        /* open MARKs */
    PK_MAX_MEMO = 1 << 20,    /* memo indices */
    PK_MAX_LINE = 256,        /* bytes of a GLOBAL's module or name line */
    PK_MAX_KEY = 1024,        /* bytes of a storage key */
    PK_MAX_VALUES = 1 << 19,  /* values made */
    PK_MAX_KIDS = 1 << 20,    /* elements of all tuples */
    PK_MAX_ITEMS = 1 << 17,   /* dict items set */
    PK_MAX_TENSORS = 1 << 17  /* tensors rebuilt */
};

/* Pickle's opcodes (Lib/pickletools.py), by the byte that encodes them. */
enum {
    OP_MARK = '(', OP_STOP = '.', OP_BININT = 'J', OP_BININT1 = 'K', OP_BININT2 = 'M', OP_NONE = 'N',
    OP_BINPERSID = 'Q', OP_REDUCE = 'R', OP_BINUNICODE = 'X', OP_GLOBAL = 'c', OP_EMPTY_DICT = '}',
    OP_BINGET = 'h', OP_LONG_BINGET = 'j', OP_BINPUT = 'q', OP_LONG_BINPUT = 'r', OP_SETITEM = 's',
    OP_TUPLE = 't', OP_EMPTY_TUPLE = ')', OP_SETITEMS = 'u', OP_PROTO = 0x80, OP_TUPLE1 = 0x85,
    OP_TUPLE2 = 0x86, OP_TUPLE3 = 0x87, OP_NEWTRUE = 0x88, OP_NEWFALSE = 0x89, OP_SHORT_BINUNICODE = 0x8c,
    OP_BUILD = 'b'
};

/* The name of every opcode up to protocol 5, for refusals. */
static const char *opcode_name(unsigned op) {
    static const struct { unsigned char op; const char *name; } NAMES[] = {
        {'(', "MARK"}, {'.', "STOP"}, {'0', "POP"}, {'1', "POP_MARK"}, {'2', "DUP"}, {'F', "FLOAT"},
        {'I', "INT"}, {'J', "BININT"}, {'K', "BININT1"}, {'L', "LONG"}, {'M', "BININT2"}, {'N', "NONE"},
        {'P', "PERSID"}, {'Q', "BINPERSID"}, {'R', "REDUCE"}, {'S', "STRING"}, {'T', "BINSTRING"},
        {'U', "SHORT_BINSTRING"}, {'V', "UNICODE"}, {'X', "BINUNICODE"}, {'a', "APPEND"}, {'b', "BUILD"},
        {'c', "GLOBAL"}, {'d', "DICT"}, {'}', "EMPTY_DICT"}, {'e', "APPENDS"}, {'g', "GET"}, {'h', "BINGET"},
        {'i', "INST"}, {'j', "LONG_BINGET"}, {'l', "LIST"}, {']', "EMPTY_LIST"}, {'o', "OBJ"}, {'p', "PUT"},
        {'q', "BINPUT"}, {'r', "LONG_BINPUT"}, {'s', "SETITEM"}, {'t', "TUPLE"}, {')', "EMPTY_TUPLE"},
        {'u', "SETITEMS"}, {'G', "BINFLOAT"}, {'B', "BINBYTES"}, {'C', "SHORT_BINBYTES"},
        {0x80, "PROTO"}, {0x81, "NEWOBJ"}, {0x82, "EXT1"}, {0x83, "EXT2"}, {0x84, "EXT4"}, {0x85, "TUPLE1"},
        {0x86, "TUPLE2"}, {0x87, "TUPLE3"}, {0x88, "NEWTRUE"}, {0x89, "NEWFALSE"}, {0x8a, "LONG1"},
        {0x8b, "LONG4"}, {0x8c, "SHORT_BINUNICODE"}, {0x8d, "BINUNICODE8"}, {0x8e, "BINBYTES8"},
        {0x8f, "EMPTY_SET"}, {0x90, "ADDITEMS"}, {0x91, "FROZENSET"}, {0x92, "NEWOBJ_EX"},
        {0x93, "STACK_GLOBAL"}, {0x94, "MEMOIZE"}, {0x95, "FRAME"}, {0x96, "BYTEARRAY8"},
        {0x97, "NEXT_BUFFER"}, {0x98, "READONLY_BUFFER"},
    };
    for (size_t i = 0; i < sizeof NAMES / sizeof NAMES[0]; i++)
        if (NAMES[i].op == op) return NAMES[i].name;
    return NULL;
}

/* The globals a state_dict names; the three storage types carry their dtype. */
typedef enum { G_ORDERED_DICT, G_REBUILD_TENSOR, G_FLOAT_STORAGE, G_HALF_STORAGE, G_BFLOAT16_STORAGE } pk_global;
static const struct {
    const char *module, *name;
    int elem_size;           /* storages only: bytes per element */
    const char *torch_dtype; /* and the dtype's name in config.json */
} GLOBALS[] = {
    {"collections", "OrderedDict", 0, NULL},
    {"torch._utils", "_rebuild_tensor_v2", 0, NULL},
    {"torch", "FloatStorage", 4, "float32"},
    {"torch", "HalfStorage", 2, "float16"},
    {"torch", "BFloat16Storage", 2, "bfloat16"},
};
#define N_GLOBALS ((int)(sizeof GLOBALS / sizeof GLOBALS[0]))

/* ---- the machine's values ------------------------------------------------------------------ */

typedef enum { V_NONE, V_BOOL, V_INT, V_STR, V_TUPLE, V_GLOBAL, V_DICT, V_STORAGE, V_TENSOR } pk_kind;
static const char *const KIND_NAMES[] = {"None", "a bool", "an int", "a string", "a tuple",
                                         "a global", "a dict", "a storage", "a tensor"};

/* A value; what `a` and `n` hold depends on the kind:
 * V_BOOL, V_INT: a = the number; V_STR: a = offset in the pickle, n = bytes;
 * V_TUPLE: a = first element in kids, n = elements; V_GLOBAL: a = pk_global;
 * V_STORAGE: a = index in storages; V_TENSOR: a = index in tensors. */
typedef struct {
    pk_kind kind;
    int64_t a, n;
} pk_value;

typedef struct {
    int64_t dict, key, value; /* value indices: one SETITEM, in order */
} pk_item;

typedef struct {
    const al_zip_entry *entry; /* <stem>/data/<key> */
    const uint8_t *key;        /* [key_len], in the pickle */
    size_t key_len;
    pk_global type;
    int64_t numel;
} pk_storage;

typedef struct {
    int64_t storage, offset, numel; /* elements of the storage, from offset */
    int ndim;
    int64_t shape[AL_ST_MAX_DIMS];
} pk_tensor;

/* Every resource of one read, freed in one place (pk_free). */
typedef struct {
    const uint8_t *pk; /* the pickle [len] */
    size_t len, at;    /* at: the opcode being run, for messages */
    const al_zip_entry *entries;
    int64_t n_entries;
    const uint8_t *stem; /* [stem_len], "<stem>" of "<stem>/data.pkl" */
    size_t stem_len;
    int64_t *entry_storage; /* [n_entries]: the storage read from each entry, -1 if none */

    pk_value *values;
    int64_t n_values, cap_values;
    int64_t *stack;
    int64_t depth, cap_stack;
    int64_t marks[PK_MAX_MARKS];
    int n_marks;
    int64_t *memo; /* [cap_memo], -1 where unset */
    int64_t cap_memo;
    int64_t *kids; /* the elements of every tuple */
    int64_t n_kids, cap_kids;
    pk_item *items;
    int64_t n_items, cap_items;
    pk_storage *storages;
    int64_t n_storages, cap_storages;
    pk_tensor *tensors;
    int64_t n_tensors, cap_tensors;
} pk_machine;

static void pk_free(pk_machine *m) {
    free(m->entry_storage);
    free(m->values);
    free(m->stack);
    free(m->memo);
    free(m->kids);
    free(m->items);
    free(m->storages);
    free(m->tensors);
}

static al_status no_memory(al_error *err) { return al_fail(err, AL_ERR_NOMEM, "pickle: out of memory"); }

/* Room for one more element in a growing array (doubling), of at most `limit` elements. */
static al_status grow(const pk_machine *m, void **array, int64_t *cap, int64_t used, size_t elem, int64_t limit,
                      const char *what, al_error *err) {
    if (used < *cap) return AL_OK;
    if (used >= limit)
        return al_fail(err, AL_ERR_LIMIT, "pickle: more than %lld %s at byte %zu, far more than a state_dict of tensors makes",
                       (long long)limit, what, m->at);
    const int64_t n = *cap ? (2 * *cap < limit ? 2 * *cap : limit) : 64;
    void *p = realloc(*array, (size_t)n * elem);
    if (!p) return no_memory(err);
    *array = p;
    *cap = n;
    return AL_OK;
}
#define GROW(m, arr, cap, used, limit, what, err) \
    grow(m, (void **)&(m)->arr, &(m)->cap, (m)->used, sizeof *(m)->arr, limit, what, err)

static al_status pk_error(const pk_machine *m, al_error *err, const char *what) {
    return al_fail(err, AL_ERR_FORMAT, "pickle: %s at byte %zu", what, m->at);
}

/* A new value of kind k: its index in *out. */
static al_status new_value(pk_machine *m, pk_kind k, int64_t a, int64_t n, int64_t *out, al_error *err) {
    const al_status s = GROW(m, values, cap_values, n_values, PK_MAX_VALUES, "values", err);
    if (s != AL_OK) return s;
    m->values[m->n_values] = (pk_value){k, a, n};
    *out = m->n_values++;
    return AL_OK;
}

static al_status push(pk_machine *m, int64_t v, al_error *err) {
    if (m->depth >= PK_MAX_STACK)
        return al_fail(err, AL_ERR_FORMAT, "pickle: stack deeper than %d values at byte %zu", PK_MAX_STACK, m->at);
    const al_status s = GROW(m, stack, cap_stack, depth, PK_MAX_STACK, "values on the stack", err);
    if (s != AL_OK) return s;
    m->stack[m->depth++] = v;
    return AL_OK;
}

static al_status push_new(pk_machine *m, pk_kind k, int64_t a, int64_t n, al_error *err) {
    int64_t v = 0;
    al_status s = new_value(m, k, a, n, &v, err);
    return s == AL_OK ? push(m, v, err) : s;
}

/* Values above the innermost MARK: what an opcode may pop. */
static int64_t available(const pk_machine *m) { return m->depth - (m->n_marks ? m->marks[m->n_marks - 1] : 0); }

static al_status need_values(const pk_machine *m, int64_t n, const char *op, al_error *err) {
    if (available(m) >= n) return AL_OK;
    return al_fail(err, AL_ERR_FORMAT, "pickle: %s at byte %zu needs %lld value%s on the stack, has %lld", op, m->at,
                   (long long)n, n == 1 ? "" : "s", (long long)available(m));
}

/* The next n bytes of the pickle's argument, or NULL (with *s set) if it ends first. */
static const uint8_t *take(pk_machine *m, size_t *pos, size_t n, al_status *s, al_error *err) {
    if (m->len - *pos < n) {
        *s = al_fail(err, AL_ERR_FORMAT, "pickle: ends inside the argument of %s at byte %zu", opcode_name(m->pk[m->at]), m->at);
        return NULL;
    }
    const uint8_t *p = m->pk + *pos;
    *pos += n;
    return p;
}

static uint32_t rd_le(const uint8_t *p, int n) {
    uint32_t v = 0;
    for (int i = n - 1; i >= 0; i--) v = v << 8 | p[i];
    return v;
}

static const char *kind_name(const pk_machine *m, int64_t v) { return KIND_NAMES[m->values[v].kind]; }

/* A string value's bytes. */
static const uint8_t *str_bytes(const pk_machine *m, const pk_value *v) { return m->pk + v->a; }

static int str_is(const pk_machine *m, int64_t v, const char *s) {
    const pk_value *x = &m->values[v];
    return x->kind == V_STR && (size_t)x->n == strlen(s) && memcmp(str_bytes(m, x), s, (size_t)x->n) == 0;
}

/* ---- opcodes ------------------------------------------------------------------------------ */

/* BINUNICODE, SHORT_BINUNICODE: UTF-8 text, kept where it is in the pickle. */
static al_status op_string(pk_machine *m, size_t *pos, int len_bytes, al_error *err) {
    al_status s = AL_OK;
    const uint8_t *n_at = take(m, pos, (size_t)len_bytes, &s, err);
    if (!n_at) return s;
    const uint32_t n = rd_le(n_at, len_bytes);
    const uint8_t *text = take(m, pos, n, &s, err);
    if (!text) return s;
    for (size_t i = 0; i < n;) {
        const size_t k = al_json_utf8_seq_len(text + i, n - i);
        if (k == 0) return pk_error(m, err, "a string that is not UTF-8");
        i += k;
    }
    return push_new(m, V_STR, (int64_t)(text - m->pk), n, err);
}

/* GLOBAL "module\nname\n": one of GLOBALS, anything else refused by name. */
static al_status op_global(pk_machine *m, size_t *pos, al_error *err) {
    const uint8_t *line[2];
    size_t line_len[2];
    for (int i = 0; i < 2; i++) {
        const size_t left = m->len - *pos, look = left < PK_MAX_LINE ? left : PK_MAX_LINE;
        const uint8_t *nl = memchr(m->pk + *pos, '\n', look);
        if (!nl) return pk_error(m, err, i ? "a GLOBAL whose name has no end of line" : "a GLOBAL whose module has no end of line");
        line[i] = m->pk + *pos;
        line_len[i] = (size_t)(nl - line[i]);
        *pos += line_len[i] + 1;
    }
    for (int g = 0; g < N_GLOBALS; g++)
        if (strlen(GLOBALS[g].module) == line_len[0] && !memcmp(GLOBALS[g].module, line[0], line_len[0]) &&
            strlen(GLOBALS[g].name) == line_len[1] && !memcmp(GLOBALS[g].name, line[1], line_len[1]))
            return push_new(m, V_GLOBAL, g, 0, err);
    char module[AL_ZIP_SHOWN_BUF], name[AL_ZIP_SHOWN_BUF];
    return al_fail(err, AL_ERR_FORMAT, "pickle: refusing global %s.%s at byte %zu (a state_dict of tensors names no such thing)",
                   al_zip_show(module, line[0], line_len[0]), al_zip_show(name, line[1], line_len[1]), m->at);
}

/* BINPUT, LONG_BINPUT: the stack's top into the memo (not popped). */
static al_status op_put(pk_machine *m, uint32_t index, al_error *err) {
    if (index >= PK_MAX_MEMO)
        return al_fail(err, AL_ERR_FORMAT, "pickle: memo index %" PRIu32 " at byte %zu is above the limit of %d", index, m->at, PK_MAX_MEMO);
    al_status s = need_values(m, 1, "a memo PUT", err);
    if (s != AL_OK) return s;
    if ((int64_t)index >= m->cap_memo) {
        int64_t cap = m->cap_memo ? m->cap_memo : 64;
        while (cap <= (int64_t)index) cap *= 2;
        int64_t *p = realloc(m->memo, (size_t)cap * sizeof *p);
        if (!p) return no_memory(err);
        for (int64_t i = m->cap_memo; i < cap; i++) p[i] = -1;
        m->memo = p;
        m->cap_memo = cap;
    }
    m->memo[index] = m->stack[m->depth - 1];
    return AL_OK;
}

static al_status op_get(pk_machine *m, uint32_t index, al_error *err) {
    if ((int64_t)index >= m->cap_memo || m->memo[index] < 0)
        return al_fail(err, AL_ERR_FORMAT, "pickle: %s %" PRIu32 " at byte %zu: no memo entry %" PRIu32,
                       opcode_name(m->pk[m->at]), index, m->at, index);
    return push(m, m->memo[index], err);
}

/* The top n values become a tuple. */
static al_status make_tuple(pk_machine *m, int64_t n, al_error *err) {
    const int64_t first = m->n_kids;
    for (int64_t i = 0; i < n; i++) {
        const al_status s = GROW(m, kids, cap_kids, n_kids, PK_MAX_KIDS, "tuple elements", err);
        if (s != AL_OK) return s;
        m->kids[m->n_kids++] = m->stack[m->depth - n + i];
    }
    m->depth -= n;
    return push_new(m, V_TUPLE, first, n, err);
}

static al_status pop_mark(pk_machine *m, const char *op, int64_t *mark, al_error *err) {
    if (m->n_marks == 0) return al_fail(err, AL_ERR_FORMAT, "pickle: %s at byte %zu without a MARK", op, m->at);
    *mark = m->marks[--m->n_marks];
    return AL_OK;
}

/* SETITEM(S): the pairs stack[from, depth) into the dict at stack[from - 1], which must be
 * above the innermost MARK (as in Python's unpickler). */
static al_status set_items(pk_machine *m, int64_t from, const char *op, al_error *err) {
    if (from <= (m->n_marks ? m->marks[m->n_marks - 1] : 0) || (m->depth - from) % 2 != 0)
        return al_fail(err, AL_ERR_FORMAT, "pickle: %s at byte %zu without a dict and key/value pairs", op, m->at);
    const int64_t dict = m->stack[from - 1];
    if (m->values[dict].kind != V_DICT)
        return al_fail(err, AL_ERR_FORMAT, "pickle: %s at byte %zu on %s, not a dict", op, m->at, kind_name(m, dict));
    for (int64_t i = from; i < m->depth; i += 2) {
        const al_status s = GROW(m, items, cap_items, n_items, PK_MAX_ITEMS, "dict items", err);
        if (s != AL_OK) return s;
        m->items[m->n_items++] = (pk_item){dict, m->stack[i], m->stack[i + 1]};
        m->values[dict].n++;
    }
    m->depth = from;
    return AL_OK;
}

/* The i-th element of tuple value t, which must be of kind k. */
static al_status element(const pk_machine *m, int64_t t, int64_t i, pk_kind k, const char *what, int64_t *out,
                         al_error *err) {
    const int64_t v = m->kids[m->values[t].a + i];
    if (m->values[v].kind != k)
        return al_fail(err, AL_ERR_FORMAT, "pickle: %s at byte %zu is %s, not %s", what, m->at, kind_name(m, v), KIND_NAMES[k]);
    *out = v;
    return AL_OK;
}

/* An entry's bytes against its CRC-32 (0: not computed, as torch.save writes with
 * compute_crc32 off, and as torch.load never checks). */
static al_status check_crc(const al_zip_entry *e, al_error *err) {
    char shown[AL_ZIP_SHOWN_BUF];
    if (e->crc32 == 0 || al_zip_crc32(e->data, e->size) == e->crc32) return AL_OK;
    return al_fail(err, AL_ERR_FORMAT, "zip: entry '%s' fails its CRC-32 check: the file is damaged",
                   al_zip_show(shown, e->name, e->name_len));
}

/* BINPERSID: ('storage', <Storage type>, key, location, numel) names the entry <stem>/data/<key>,
 * which must hold exactly numel elements of the type. */
static al_status op_persid(pk_machine *m, al_error *err) {
    al_status s = need_values(m, 1, "BINPERSID", err);
    if (s != AL_OK) return s;
    const int64_t pid = m->stack[--m->depth];
    if (m->values[pid].kind != V_TUPLE)
        return al_fail(err, AL_ERR_FORMAT, "pickle: the persistent id at byte %zu is %s, not ('storage', type, key, location, numel)",
                       m->at, kind_name(m, pid));
    if (m->values[pid].n != 5)
        return al_fail(err, AL_ERR_FORMAT, "pickle: the persistent id at byte %zu has %lld parts, not 5 ('storage', type, key, location, numel)",
                       m->at, (long long)m->values[pid].n);
    if (!str_is(m, m->kids[m->values[pid].a], "storage"))
        return al_fail(err, AL_ERR_FORMAT, "pickle: the persistent id at byte %zu does not start with 'storage'", m->at);
    int64_t type = 0, key = 0, location = 0, numel = 0;
    if ((s = element(m, pid, 1, V_GLOBAL, "the storage type", &type, err)) != AL_OK ||
        (s = element(m, pid, 2, V_STR, "the storage key", &key, err)) != AL_OK ||
        (s = element(m, pid, 3, V_STR, "the storage location", &location, err)) != AL_OK ||
        (s = element(m, pid, 4, V_INT, "the storage size", &numel, err)) != AL_OK)
        return s;
    const pk_global g = (pk_global)m->values[type].a;
    if (g < G_FLOAT_STORAGE)
        return al_fail(err, AL_ERR_FORMAT, "pickle: persistent id at byte %zu has type %s.%s, not a Float, Half or BFloat16 storage",
                       m->at, GLOBALS[g].module, GLOBALS[g].name);
    /* The bytes on disk are the same wherever the tensor lived; torch.load maps them. */
    const pk_value *loc = &m->values[location];
    char shown[AL_ZIP_SHOWN_BUF];
    if (!str_is(m, location, "cpu") && !(loc->n >= 4 && !memcmp(str_bytes(m, loc), "cuda", 4)))
        return al_fail(err, AL_ERR_FORMAT, "pickle: storage location '%s' at byte %zu is neither cpu nor cuda",
                       al_zip_show(shown, str_bytes(m, loc), (size_t)loc->n), m->at);
    const pk_value *k = &m->values[key];
    al_zip_show(shown, str_bytes(m, k), (size_t)k->n);
    if (k->n < 1 || k->n > PK_MAX_KEY) return al_fail(err, AL_ERR_FORMAT, "pickle: storage key '%s' at byte %zu is empty or too long", shown, m->at);
    const int64_t count = m->values[numel].a;
    if (count < 0) return al_fail(err, AL_ERR_FORMAT, "pickle: storage '%s' at byte %zu has a negative size", shown, m->at);

    char name[PK_MAX_LINE + PK_MAX_KEY + 16]; /* find_pickle keeps stem_len <= PK_MAX_LINE */
    memcpy(name, m->stem, m->stem_len);
    memcpy(name + m->stem_len, "/data/", 6);
    memcpy(name + m->stem_len + 6, str_bytes(m, k), (size_t)k->n);
    const size_t name_len = m->stem_len + 6 + (size_t)k->n;
    const al_zip_entry *e = al_zip_find(m->entries, m->n_entries, name, name_len);
    char shown_name[AL_ZIP_SHOWN_BUF];
    if (!e)
        return al_fail(err, AL_ERR_FORMAT, "pth: storage '%s' (pickle byte %zu) is not in the archive: no entry '%s'", shown, m->at,
                       al_zip_show(shown_name, (const uint8_t *)name, name_len));
    const size_t elem = (size_t)GLOBALS[g].elem_size;
    if ((uint64_t)count > e->size / elem)
        return al_fail(err, AL_ERR_FORMAT, "pth: storage '%s' holds %zu bytes, too few for a %s of %lld elements", shown, e->size,
                       GLOBALS[g].name, (long long)count);
    if ((size_t)count * elem != e->size)
        return al_fail(err, AL_ERR_FORMAT, "pth: storage '%s' holds %zu bytes, but a %s of %lld elements takes %zu", shown, e->size,
                       GLOBALS[g].name, (long long)count, (size_t)count * elem);

    /* One storage per entry: a key named again (tied weights) must name the same type and size. */
    int64_t *known = &m->entry_storage[e - m->entries];
    if (*known >= 0) {
        const pk_storage *st = &m->storages[*known];
        if (st->type != g || st->numel != count)
            return al_fail(err, AL_ERR_FORMAT, "pth: storage '%s' is named again at pickle byte %zu with another type or size", shown, m->at);
    } else {
        if ((s = check_crc(e, err)) != AL_OK) return s;
        if ((s = GROW(m, storages, cap_storages, n_storages, m->n_entries, "storages", err)) != AL_OK) return s;
        m->storages[m->n_storages] = (pk_storage){e, str_bytes(m, k), (size_t)k->n, g, count};
        *known = m->n_storages++;
    }
    return push_new(m, V_STORAGE, *known, 0, err);
}

/* "[2, 3]" */
static const char *dims_str(char *buf, size_t cap, const int64_t *d, int n) {
    al_text t;
    al_text_init(&t, buf, cap);
    al_text_printf(&t, "[");
    for (int i = 0; i < n; i++) al_text_printf(&t, "%s%lld", i ? ", " : "", (long long)d[i]);
    al_text_printf(&t, "]");
    return buf;
}

/* _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad, backward_hooks):
 * a contiguous tensor inside its storage. */
static al_status rebuild_tensor(pk_machine *m, int64_t args, al_error *err) {
    if (m->values[args].n != 6)
        return al_fail(err, AL_ERR_FORMAT, "pickle: _rebuild_tensor_v2 at byte %zu with %lld arguments, not 6", m->at, (long long)m->values[args].n);
    int64_t storage = 0, offset = 0, size = 0, stride = 0, grad = 0, hooks = 0;
    al_status s;
    if ((s = element(m, args, 0, V_STORAGE, "a tensor's storage", &storage, err)) != AL_OK ||
        (s = element(m, args, 1, V_INT, "a tensor's storage offset", &offset, err)) != AL_OK ||
        (s = element(m, args, 2, V_TUPLE, "a tensor's size", &size, err)) != AL_OK ||
        (s = element(m, args, 3, V_TUPLE, "a tensor's stride", &stride, err)) != AL_OK ||
        (s = element(m, args, 4, V_BOOL, "a tensor's requires_grad", &grad, err)) != AL_OK ||
        (s = element(m, args, 5, V_DICT, "a tensor's backward hooks", &hooks, err)) != AL_OK)
        return s;
    pk_tensor t;
    memset(&t, 0, sizeof t);
    t.storage = m->values[storage].a;
    t.offset = m->values[offset].a;
    const int64_t ndim = m->values[size].n;
    if (ndim > AL_ST_MAX_DIMS) return al_fail(err, AL_ERR_FORMAT, "pickle: a tensor at byte %zu has %lld dimensions; at most %d are read", m->at, (long long)ndim, AL_ST_MAX_DIMS);
    if (m->values[stride].n != ndim) return pk_error(m, err, "a tensor whose stride and size differ in length");
    int64_t st[AL_ST_MAX_DIMS];
    t.ndim = (int)ndim;
    t.numel = 1;
    for (int d = 0; d < t.ndim; d++) {
        int64_t v = 0;
        if ((s = element(m, size, d, V_INT, "a tensor's size", &v, err)) != AL_OK) return s;
        t.shape[d] = m->values[v].a;
        if ((s = element(m, stride, d, V_INT, "a tensor's stride", &v, err)) != AL_OK) return s;
        st[d] = m->values[v].a;
        if (t.shape[d] < 0) return pk_error(m, err, "a tensor with a negative size");
        if (!al_mul_ok(t.numel, t.shape[d], &t.numel)) return pk_error(m, err, "a tensor with more elements than fit in 64 bits");
    }
    /* Contiguous: the stride of each dimension is the product of the sizes after it (a
     * dimension of size 1 may have any stride, as in PyTorch's is_contiguous). */
    int64_t want = 1;
    for (int d = t.ndim - 1; d >= 0 && t.numel > 0; d--) {
        if (t.shape[d] != 1 && st[d] != want) {
            char shp[200], str[200];
            return al_fail(err, AL_ERR_FORMAT, "pickle: a tensor at byte %zu of size %s has stride %s: not contiguous", m->at,
                           dims_str(shp, sizeof shp, t.shape, t.ndim), dims_str(str, sizeof str, st, t.ndim));
        }
        want *= t.shape[d];
    }
    const pk_storage *ps = &m->storages[t.storage];
    if (t.offset < 0 || t.offset > ps->numel || t.numel > ps->numel - t.offset) {
        char shown[AL_ZIP_SHOWN_BUF];
        return al_fail(err, AL_ERR_FORMAT, "pth: a tensor at pickle byte %zu (%lld elements from offset %lld) runs past the end of storage '%s' (%lld elements)",
                       m->at, (long long)t.numel, (long long)t.offset, al_zip_show(shown, ps->key, ps->key_len), (long long)ps->numel);
    }
    if ((s = GROW(m, tensors, cap_tensors, n_tensors, PK_MAX_TENSORS, "tensors", err)) != AL_OK) return s;
    m->tensors[m->n_tensors] = t;
    return push_new(m, V_TENSOR, m->n_tensors++, 0, err);
}

/* REDUCE: callable(*args) for the two callables a state_dict holds. */
static al_status op_reduce(pk_machine *m, al_error *err) {
    al_status s = need_values(m, 2, "REDUCE", err);
    if (s != AL_OK) return s;
    const int64_t args = m->stack[--m->depth], callable = m->stack[--m->depth];
    if (m->values[callable].kind != V_GLOBAL)
        return al_fail(err, AL_ERR_FORMAT, "pickle: REDUCE at byte %zu calls %s", m->at, kind_name(m, callable));
    if (m->values[args].kind != V_TUPLE)
        return al_fail(err, AL_ERR_FORMAT, "pickle: REDUCE at byte %zu with arguments in %s, not a tuple", m->at, kind_name(m, args));
    switch ((pk_global)m->values[callable].a) {
    case G_ORDERED_DICT:
        if (m->values[args].n != 0) return pk_error(m, err, "OrderedDict built from arguments (only OrderedDict() is read)");
        return push_new(m, V_DICT, 0, 0, err);
    case G_REBUILD_TENSOR: return rebuild_tensor(m, args, err);
    default:
        return al_fail(err, AL_ERR_FORMAT, "pickle: REDUCE at byte %zu calls torch.%s; only OrderedDict() and _rebuild_tensor_v2() are built",
                       m->at, GLOBALS[m->values[callable].a].name);
    }
}

/* Runs the pickle to its STOP; the result is the one value left on the stack. */
static al_status run(pk_machine *m, int64_t *result, al_error *err) {
    size_t pos = 0;
    al_status s = AL_OK;
    while (s == AL_OK) {
        if (pos >= m->len) return al_fail(err, AL_ERR_FORMAT, "pickle: ends at byte %zu without STOP", pos);
        m->at = pos;
        const unsigned op = m->pk[pos++];
        const uint8_t *arg;
        int64_t mark = 0;
        switch (op) {
        case OP_PROTO:
            if ((arg = take(m, &pos, 1, &s, err)) && arg[0] > 5)
                s = al_fail(err, AL_ERR_FORMAT, "pickle: protocol %u at byte %zu is newer than 5", arg[0], m->at);
            break;
        case OP_EMPTY_DICT: s = push_new(m, V_DICT, 0, 0, err); break;
        case OP_MARK:
            if (m->n_marks == PK_MAX_MARKS)
                s = al_fail(err, AL_ERR_FORMAT, "pickle: more than %d open MARKs at byte %zu", PK_MAX_MARKS, m->at);
            else m->marks[m->n_marks++] = m->depth;
            break;
        case OP_BINUNICODE: s = op_string(m, &pos, 4, err); break;
        case OP_SHORT_BINUNICODE: s = op_string(m, &pos, 1, err); break;
        case OP_BINPUT:
        case OP_LONG_BINPUT:
            if ((arg = take(m, &pos, op == OP_BINPUT ? 1 : 4, &s, err))) s = op_put(m, rd_le(arg, op == OP_BINPUT ? 1 : 4), err);
            break;
        case OP_BINGET:
        case OP_LONG_BINGET:
            if ((arg = take(m, &pos, op == OP_BINGET ? 1 : 4, &s, err))) s = op_get(m, rd_le(arg, op == OP_BINGET ? 1 : 4), err);
            break;
        case OP_GLOBAL: s = op_global(m, &pos, err); break;
        case OP_TUPLE:
            if ((s = pop_mark(m, "TUPLE", &mark, err)) == AL_OK) s = make_tuple(m, m->depth - mark, err);
            break;
        case OP_EMPTY_TUPLE: s = make_tuple(m, 0, err); break;
        case OP_TUPLE1:
        case OP_TUPLE2:
        case OP_TUPLE3:
            if ((s = need_values(m, (int64_t)(op - OP_TUPLE1 + 1), opcode_name(op), err)) == AL_OK)
                s = make_tuple(m, (int64_t)(op - OP_TUPLE1 + 1), err);
            break;
        case OP_BININT:
            /* a signed 32-bit number: two's complement */
            if ((arg = take(m, &pos, 4, &s, err))) s = push_new(m, V_INT, (int64_t)rd_le(arg, 4) - (arg[3] >> 7 ? (int64_t)1 << 32 : 0), 0, err);
            break;
        case OP_BININT1:
        case OP_BININT2:
            if ((arg = take(m, &pos, op == OP_BININT1 ? 1 : 2, &s, err))) s = push_new(m, V_INT, rd_le(arg, op == OP_BININT1 ? 1 : 2), 0, err);
            break;
        case OP_NEWTRUE:
        case OP_NEWFALSE: s = push_new(m, V_BOOL, op == OP_NEWTRUE, 0, err); break;
        case OP_NONE: s = push_new(m, V_NONE, 0, 0, err); break;
        case OP_BINPERSID: s = op_persid(m, err); break;
        case OP_REDUCE: s = op_reduce(m, err); break;
        case OP_SETITEM:
            if ((s = need_values(m, 2, "SETITEM", err)) == AL_OK) s = set_items(m, m->depth - 2, "SETITEM", err);
            break;
        case OP_SETITEMS:
            if ((s = pop_mark(m, "SETITEMS", &mark, err)) == AL_OK) s = set_items(m, mark, "SETITEMS", err);
            break;
        case OP_BUILD:
            /* state_dict()'s OrderedDict sets its `_metadata` (module versions) this way: a
             * dict's state, a dict (or None), is dropped; BUILD on anything else is refused. */
            if ((s = need_values(m, 2, "BUILD", err)) == AL_OK) {
                const int64_t state = m->stack[m->depth - 1], target = m->stack[m->depth - 2];
                if (m->values[target].kind != V_DICT)
                    s = al_fail(err, AL_ERR_FORMAT, "pickle: BUILD at byte %zu on %s: only a dict's state is accepted (and dropped)",
                                m->at, kind_name(m, target));
                else if (m->values[state].kind != V_DICT && m->values[state].kind != V_NONE)
                    s = al_fail(err, AL_ERR_FORMAT, "pickle: BUILD at byte %zu with a state that is %s, not a dict",
                                m->at, kind_name(m, state));
                else m->depth--;
            }
            break;
        case OP_STOP:
            if (m->depth != 1 || m->n_marks != 0)
                return al_fail(err, AL_ERR_FORMAT, "pickle: STOP at byte %zu leaves %lld values and %d MARKs, not one value",
                               m->at, (long long)m->depth, m->n_marks);
            if (pos != m->len) return al_fail(err, AL_ERR_FORMAT, "pickle: %zu bytes follow STOP at byte %zu", m->len - pos, m->at);
            *result = m->stack[0];
            return AL_OK;
        default:
            if (opcode_name(op))
                return al_fail(err, AL_ERR_FORMAT, "pickle: refusing opcode %s (0x%02x) at byte %zu: a state_dict of tensors does not use it",
                               opcode_name(op), op, m->at);
            return al_fail(err, AL_ERR_FORMAT, "pickle: unknown opcode 0x%02x at byte %zu", op, m->at);
        }
    }
    return s;
}

/* ---- the archive -------------------------------------------------------------------------- */

/* <stem>/data.pkl (exactly one), and <stem>/byteorder "little" if there is one. */
static al_status find_pickle(pk_machine *m, al_error *err) {
    static const char PKL[] = "/data.pkl";
    const size_t pkl_len = sizeof PKL - 1;
    const al_zip_entry *found = NULL;
    for (int64_t i = 0; i < m->n_entries; i++) {
        const al_zip_entry *e = &m->entries[i];
        if (e->name_len <= pkl_len || memcmp(e->name + e->name_len - pkl_len, PKL, pkl_len) != 0 ||
            memchr(e->name, '/', e->name_len - pkl_len))
            continue;
        if (found) {
            char a[AL_ZIP_SHOWN_BUF], b[AL_ZIP_SHOWN_BUF];
            return al_fail(err, AL_ERR_FORMAT, "pth: the archive holds two pickles, '%s' and '%s'",
                           al_zip_show(a, found->name, found->name_len), al_zip_show(b, e->name, e->name_len));
        }
        found = e;
    }
    if (!found) return al_fail(err, AL_ERR_FORMAT, "pth: the archive holds no <name>/data.pkl: not a file torch.save wrote");
    m->pk = found->data;
    m->len = found->size;
    m->stem = found->name;
    m->stem_len = found->name_len - pkl_len;
    al_status s = check_crc(found, err);
    if (s != AL_OK) return s;

    char name[PK_MAX_LINE + 16];
    if (m->stem_len > PK_MAX_LINE) return al_fail(err, AL_ERR_FORMAT, "pth: the archive's folder name is too long");
    memcpy(name, m->stem, m->stem_len);
    memcpy(name + m->stem_len, "/byteorder", 10);
    const al_zip_entry *order = al_zip_find(m->entries, m->n_entries, name, m->stem_len + 10);
    if (order && (s = check_crc(order, err)) != AL_OK) return s;
    if (order && !(order->size == 6 && !memcmp(order->data, "little", 6))) {
        char shown[AL_ZIP_SHOWN_BUF];
        return al_fail(err, AL_ERR_FORMAT, "pth: byteorder '%s': only little-endian storages are read",
                       al_zip_show(shown, order->data, order->size));
    }
    return AL_OK;
}

/* ---- the result --------------------------------------------------------------------------- */

static int cmp_keys(const void *x, const void *y, const pk_machine *m) {
    const pk_value *a = &m->values[*(const int64_t *)x], *b = &m->values[*(const int64_t *)y];
    const int c = memcmp(str_bytes(m, a), str_bytes(m, b), (size_t)(a->n < b->n ? a->n : b->n));
    return c ? c : a->n < b->n ? -1 : a->n > b->n;
}

/* al_sort takes no context: the machine is reached through the first element of each pair. */
typedef struct {
    int64_t key;
    const pk_machine *m;
} key_ref;
static int cmp_key_refs(const void *x, const void *y) {
    const key_ref *a = x, *b = y;
    return cmp_keys(&a->key, &b->key, a->m);
}

/* The dict's items: string keys, each once, holding tensors; with minimind_names, each one of
 * MiniMind's weight names (so that nothing is converted for a name no model reads). */
static al_status check_items(const pk_machine *m, int64_t dict, int minimind_names, al_error *err) {
    char shown[AL_ZIP_SHOWN_BUF];
    const int64_t n = m->values[dict].n;
    key_ref *keys = malloc((size_t)(n ? n : 1) * sizeof *keys);
    if (!keys) return no_memory(err);
    int64_t k = 0;
    al_status s = AL_OK;
    for (int64_t i = 0; i < m->n_items && s == AL_OK; i++) {
        const pk_item *it = &m->items[i];
        if (it->dict != dict) continue;
        const pk_value *key = &m->values[it->key];
        if (key->kind != V_STR) {
            s = al_fail(err, AL_ERR_FORMAT, "pickle: the state_dict has a key that is %s, not a string", kind_name(m, it->key));
            break;
        }
        al_zip_show(shown, str_bytes(m, key), (size_t)key->n);
        if (memchr(str_bytes(m, key), '\0', (size_t)key->n) || str_is(m, it->key, "__metadata__"))
            s = al_fail(err, AL_ERR_FORMAT, "pickle: the state_dict's key '%s' cannot be a tensor name", shown);
        else if (m->values[it->value].kind != V_TENSOR)
            s = al_fail(err, AL_ERR_FORMAT, "pickle: the state_dict's '%s' is %s, not a tensor", shown, kind_name(m, it->value));
        else if (minimind_names && !al_minimind_is_param_name(str_bytes(m, key), (size_t)key->n))
            s = al_fail(err, AL_ERR_FORMAT, "pth: the state_dict's '%s' is not a MiniMind weight (model.embed_tokens.weight, "
                                            "model.layers.N.*, model.norm.weight, lm_head.weight)", shown);
        keys[k++] = (key_ref){it->key, m};
    }
    if (s == AL_OK) {
        al_sort(keys, (size_t)k, sizeof *keys, cmp_key_refs);
        for (int64_t i = 1; i < k && s == AL_OK; i++)
            if (cmp_key_refs(&keys[i - 1], &keys[i]) == 0) {
                const pk_value *key = &m->values[keys[i].key];
                s = al_fail(err, AL_ERR_FORMAT, "pickle: the state_dict sets '%s' twice", al_zip_show(shown, str_bytes(m, key), (size_t)key->n));
            }
    }
    free(keys);
    return s;
}

/* Element i of a storage as float32 bits: bfloat16 is the top half of a float32. */
static uint32_t storage_bits(pk_global g, const uint8_t *p, int64_t i) {
    switch (g) {
    case G_HALF_STORAGE: return al_f16_bits_to_f32_bits((uint16_t)rd_le(p + 2 * i, 2));
    case G_BFLOAT16_STORAGE: return rd_le(p + 2 * i, 2) << 16;
    default: return rd_le(p + 4 * i, 4);
    }
}

/* A tensor's elements [begin, end) in its storage, and its entry. */
typedef struct {
    int64_t storage, begin, end, entry;
} pk_span;

static int cmp_spans(const void *x, const void *y) {
    const pk_span *a = x, *b = y;
    if (a->storage != b->storage) return a->storage < b->storage ? -1 : 1;
    if (a->begin != b->begin) return a->begin < b->begin ? -1 : 1;
    return (a->entry > b->entry) - (a->entry < b->entry);
}

/* The end of the run of elements that starts at spans[i]: the spans of the same storage that
 * overlap or touch it, merged. *next is the first span after the run. */
static int64_t run_end(const pk_span *spans, int64_t n, int64_t i, int64_t *next) {
    int64_t end = spans[i].end, j = i + 1;
    for (; j < n && spans[j].storage == spans[i].storage && spans[j].begin <= end; j++)
        if (spans[j].end > end) end = spans[j].end;
    *next = j;
    return end;
}

/* The dict's tensors as views: 1. what they would cost, counted before anything is allocated;
 * 2. the entries, and each non-empty tensor's span of its storage, sorted by storage and
 * offset; 3. the runs of elements some tensor views (overlapping spans merged), widened to
 * float32 once each, every tensor pointing into its run. A storage viewed by 2,900 tensors
 * is thus widened once, and the block never holds more than the storages' viewed elements. */
static al_status build_views(const pk_machine *m, int64_t dict, al_pth_views *v, al_error *err) {
    const int64_t n = m->values[dict].n;
    int64_t total = 0, names_bytes = 0;
    int dtypes = 0; /* bit per storage type seen */
    for (int64_t i = 0; i < m->n_items; i++) {
        if (m->items[i].dict != dict) continue;
        const pk_tensor *t = &m->tensors[m->values[m->items[i].value].a];
        /* The model copies each tensor: tensors naming one storage many times cost that many copies. */
        if (t->numel > AL_MAX_MODEL_BYTES / 4 - total)
            return al_fail(err, AL_ERR_LIMIT, "pth: the tensors hold more than %lld float32 numbers (%lld bytes)",
                           (long long)(AL_MAX_MODEL_BYTES / 4), (long long)AL_MAX_MODEL_BYTES);
        total += t->numel;
        names_bytes += m->values[m->items[i].key].n + 1;
        dtypes |= 1 << m->storages[t->storage].type;
    }
    v->entries = malloc((size_t)(n ? n : 1) * sizeof *v->entries);
    v->names = malloc((size_t)names_bytes + 1);
    pk_span *spans = malloc((size_t)(n ? n : 1) * sizeof *spans);
    if (!v->entries || !v->names || !spans) {
        free(spans);
        return no_memory(err);
    }
    int64_t e = 0, n_spans = 0, name_at = 0;
    for (int64_t i = 0; i < m->n_items; i++) {
        if (m->items[i].dict != dict) continue;
        const pk_value *key = &m->values[m->items[i].key];
        const pk_tensor *t = &m->tensors[m->values[m->items[i].value].a];
        memcpy(v->names + name_at, str_bytes(m, key), (size_t)key->n);
        v->names[name_at + key->n] = '\0';
        al_st_entry *en = &v->entries[e];
        memset(en, 0, sizeof *en);
        en->name = v->names + name_at;
        en->ndim = t->ndim;
        for (int d = 0; d < t->ndim; d++) en->shape[d] = t->shape[d];
        if (t->numel > 0) spans[n_spans++] = (pk_span){t->storage, t->offset, t->offset + t->numel, e};
        name_at += key->n + 1;
        e++;
    }
    v->n_entries = (int)n;
    al_sort(spans, (size_t)n_spans, sizeof *spans, cmp_spans);
    int64_t widened = 0;
    for (int64_t i = 0, next = 0; i < n_spans; i = next) widened += run_end(spans, n_spans, i, &next) - spans[i].begin;
    v->weights = malloc((size_t)(widened ? widened : 1) * sizeof *v->weights);
    if (!v->weights) {
        free(spans);
        return no_memory(err);
    }
    v->n_weights = widened;
    for (int64_t i = 0, next = 0, at = 0; i < n_spans; i = next) {
        const int64_t begin = spans[i].begin, end = run_end(spans, n_spans, i, &next);
        const pk_storage *ps = &m->storages[spans[i].storage];
        for (int64_t k = begin; k < end; k++) v->weights[at + k - begin] = al_float_of_bits(storage_bits(ps->type, ps->entry->data, k));
        for (int64_t j = i; j < next; j++) v->entries[spans[j].entry].data = v->weights + at + (spans[j].begin - begin);
        at += end - begin;
    }
    for (int64_t i = 0; i < n; i++) /* an empty tensor points anywhere */
        if (!v->entries[i].data) v->entries[i].data = v->weights;
    free(spans);
    v->torch_dtype = "mixed";
    for (int g = G_FLOAT_STORAGE; g < N_GLOBALS; g++)
        if (dtypes == 1 << g) v->torch_dtype = GLOBALS[g].torch_dtype;
    return AL_OK;
}

void al_pth_views_free(al_pth_views *v) {
    if (!v) return;
    free(v->weights);
    free(v->entries);
    free(v->names);
    memset(v, 0, sizeof *v);
}

al_status al_pth_read_views(const uint8_t *bytes, size_t size, int minimind_names, al_pth_views *out, al_error *err) {
    if (!out) return al_fail(err, AL_ERR_ARG, "pth: NULL output pointer");
    memset(out, 0, sizeof *out);
    if (!bytes && size) return al_fail(err, AL_ERR_ARG, "pth: bytes is NULL");
    pk_machine m;
    memset(&m, 0, sizeof m);
    al_zip_entry *entries = NULL;
    al_status s = al_zip_read(bytes, size, &entries, &m.n_entries, err);
    if (s == AL_ERR_FORMAT && size >= 2 && bytes[0] == OP_PROTO && bytes[1] <= 5)
        return al_fail(err, AL_ERR_FORMAT, "pth: a bare pickle, torch.save's format before PyTorch 1.6 "
                                           "(_use_new_zipfile_serialization=False), which is not read");
    if (s != AL_OK) return s;
    m.entries = entries;
    m.entry_storage = malloc((size_t)(m.n_entries ? m.n_entries : 1) * sizeof *m.entry_storage);
    if (!m.entry_storage) s = no_memory(err);
    for (int64_t i = 0; i < m.n_entries && s == AL_OK; i++) m.entry_storage[i] = -1;
    int64_t result = -1;
    if (s == AL_OK) s = find_pickle(&m, err);
    if (s == AL_OK) s = run(&m, &result, err);
    if (s == AL_OK && m.values[result].kind != V_DICT)
        s = al_fail(err, AL_ERR_FORMAT, "pickle: the file holds %s, not a dict of tensors", kind_name(&m, result));
    if (s == AL_OK) s = check_items(&m, result, minimind_names, err);
    if (s == AL_OK && m.values[result].n > INT32_MAX) s = al_fail(err, AL_ERR_LIMIT, "pth: too many tensors");
    if (s == AL_OK) s = build_views(&m, result, out, err);
    pk_free(&m);
    free(entries);
    if (s != AL_OK) al_pth_views_free(out);
    return s;
}

al_status al_pth_to_safetensors(const uint8_t *bytes, size_t size, uint8_t **out, size_t *out_size, al_error *err) {
    if (!out || !out_size) return al_fail(err, AL_ERR_ARG, "pth: NULL output pointer");
    *out = NULL;
    *out_size = 0;
    al_pth_views v;
    al_status s = al_pth_read_views(bytes, size, 0, &v, err);
    /* Each tensor gets its own copy in the image: safetensors has no shared bytes. */
    const char *meta[] = {"format", "pt", "torch_dtype", v.torch_dtype};
    size_t needed = 0;
    if (s == AL_OK) s = al_st_serialize(v.entries, v.n_entries, meta, 2, NULL, 0, &needed, err);
    if (s == AL_OK && !(*out = malloc(needed))) s = no_memory(err);
    if (s == AL_OK && (s = al_st_serialize(v.entries, v.n_entries, meta, 2, *out, needed, out_size, err)) != AL_OK) {
        free(*out);
        *out = NULL;
    }
    al_pth_views_free(&v);
    return s;
}
