/* pickle.c — the restricted pickle machine (pickle.h): it knows only the opcodes a dict of
 * tensors needs, builds values and never calls anything, and refuses every other opcode by name
 * (BUILD only sets an OrderedDict's `_metadata`, as model.state_dict() pickles it, and is
 * dropped). The globals, BINPERSID and REDUCE are the host's (pth.c). */
#include "io/pickle.h"
#include "base/internal.h"
#include "base/json.h"
#include "io/zip.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

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

static const char *const KIND_NAMES[] = {"None", "a bool", "an int", "a string", "a tuple",
                                         "a global", "a dict", "a storage", "a tensor"};

#define GROW(m, arr, cap, used, limit, what, err) AL_PICKLE_GROW(m, m, arr, cap, used, limit, what, err)

int al_pickle_starts(const uint8_t *bytes, size_t size) { return size >= 2 && bytes[0] == OP_PROTO && bytes[1] <= 5; }

void al_pickle_free(pk_machine *m) {
    free(m->values);
    free(m->stack);
    free(m->memo);
    free(m->kids);
    free(m->items);
}

al_status al_pickle_no_memory(al_error *err) { return al_fail(err, AL_ERR_NOMEM, "pickle: out of memory"); }

/* Room for one more element in a growing array (doubling), of at most `limit` elements. */
al_status al_pickle_grow(const pk_machine *m, void **array, int64_t *cap, int64_t used, size_t elem, int64_t limit,
                      const char *what, al_error *err) {
    if (used < *cap) return AL_OK;
    if (used >= limit)
        return al_fail(err, AL_ERR_LIMIT, "pickle: more than %lld %s at byte %zu, far more than a state_dict of tensors makes",
                       (long long)limit, what, m->at);
    const int64_t n = *cap ? (2 * *cap < limit ? 2 * *cap : limit) : 64;
    void *p = realloc(*array, (size_t)n * elem);
    if (!p) return al_pickle_no_memory(err);
    *array = p;
    *cap = n;
    return AL_OK;
}

al_status al_pickle_error(const pk_machine *m, al_error *err, const char *what) {
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

al_status al_pickle_push_new(pk_machine *m, pk_kind k, int64_t a, int64_t n, al_error *err) {
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

uint32_t al_pickle_rd_le(const uint8_t *p, int n) {
    uint32_t v = 0;
    for (int i = n - 1; i >= 0; i--) v = v << 8 | p[i];
    return v;
}

const char *al_pickle_kind_name(const pk_machine *m, int64_t v) { return KIND_NAMES[m->values[v].kind]; }

/* A string value's bytes. */
const uint8_t *al_pickle_str_bytes(const pk_machine *m, const pk_value *v) { return m->pk + v->a; }

int al_pickle_str_is(const pk_machine *m, int64_t v, const char *s) {
    const pk_value *x = &m->values[v];
    return x->kind == PK_STR && (size_t)x->n == strlen(s) && memcmp(al_pickle_str_bytes(m, x), s, (size_t)x->n) == 0;
}

/* ---- opcodes ------------------------------------------------------------------------------ */

/* BINUNICODE, SHORT_BINUNICODE: UTF-8 text, kept where it is in the pickle. */
static al_status op_string(pk_machine *m, size_t *pos, int len_bytes, al_error *err) {
    al_status s = AL_OK;
    const uint8_t *n_at = take(m, pos, (size_t)len_bytes, &s, err);
    if (!n_at) return s;
    const uint32_t n = al_pickle_rd_le(n_at, len_bytes);
    const uint8_t *text = take(m, pos, n, &s, err);
    if (!text) return s;
    for (size_t i = 0; i < n;) {
        const size_t k = al_json_utf8_seq_len(text + i, n - i);
        if (k == 0) return al_pickle_error(m, err, "a string that is not UTF-8");
        i += k;
    }
    return al_pickle_push_new(m, PK_STR, (int64_t)(text - m->pk), n, err);
}

/* GLOBAL "module\nname\n": one the host names, anything else refused by name. */
static al_status op_global(pk_machine *m, size_t *pos, al_error *err) {
    const uint8_t *line[2];
    size_t line_len[2];
    for (int i = 0; i < 2; i++) {
        const size_t left = m->len - *pos, look = left < PK_MAX_LINE ? left : PK_MAX_LINE;
        const uint8_t *nl = memchr(m->pk + *pos, '\n', look);
        if (!nl) return al_pickle_error(m, err, i ? "a GLOBAL whose name has no end of line" : "a GLOBAL whose module has no end of line");
        line[i] = m->pk + *pos;
        line_len[i] = (size_t)(nl - line[i]);
        *pos += line_len[i] + 1;
    }
    const int g = m->find_global(line[0], line_len[0], line[1], line_len[1]);
    if (g >= 0) return al_pickle_push_new(m, PK_GLOBAL, g, 0, err);
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
        if (!p) return al_pickle_no_memory(err);
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
    return al_pickle_push_new(m, PK_TUPLE, first, n, err);
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
    if (m->values[dict].kind != PK_DICT)
        return al_fail(err, AL_ERR_FORMAT, "pickle: %s at byte %zu on %s, not a dict", op, m->at, al_pickle_kind_name(m, dict));
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
al_status al_pickle_element(const pk_machine *m, int64_t t, int64_t i, pk_kind k, const char *what, int64_t *out,
                         al_error *err) {
    const int64_t v = m->kids[m->values[t].a + i];
    if (m->values[v].kind != k)
        return al_fail(err, AL_ERR_FORMAT, "pickle: %s at byte %zu is %s, not %s", what, m->at, al_pickle_kind_name(m, v), KIND_NAMES[k]);
    *out = v;
    return AL_OK;
}

/* REDUCE: callable(*args), a global on a tuple; what it makes is the host's. */
static al_status op_reduce(pk_machine *m, al_error *err) {
    al_status s = need_values(m, 2, "REDUCE", err);
    if (s != AL_OK) return s;
    const int64_t args = m->stack[--m->depth], callable = m->stack[--m->depth];
    if (m->values[callable].kind != PK_GLOBAL)
        return al_fail(err, AL_ERR_FORMAT, "pickle: REDUCE at byte %zu calls %s", m->at, al_pickle_kind_name(m, callable));
    if (m->values[args].kind != PK_TUPLE)
        return al_fail(err, AL_ERR_FORMAT, "pickle: REDUCE at byte %zu with arguments in %s, not a tuple", m->at, al_pickle_kind_name(m, args));
    return m->reduce(m, (int)m->values[callable].a, args, err);
}

/* BINPERSID: the persistent id on the stack names an object the host makes. */
static al_status op_persid(pk_machine *m, al_error *err) {
    al_status s = need_values(m, 1, "BINPERSID", err);
    if (s != AL_OK) return s;
    return m->persistent_load(m, m->stack[--m->depth], err);
}

/* Runs the pickle to its STOP; the result is the one value left on the stack. */
al_status al_pickle_run(pk_machine *m, int64_t *result, al_error *err) {
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
        case OP_EMPTY_DICT: s = al_pickle_push_new(m, PK_DICT, 0, 0, err); break;
        case OP_MARK:
            if (m->n_marks == PK_MAX_MARKS)
                s = al_fail(err, AL_ERR_FORMAT, "pickle: more than %d open MARKs at byte %zu", PK_MAX_MARKS, m->at);
            else m->marks[m->n_marks++] = m->depth;
            break;
        case OP_BINUNICODE: s = op_string(m, &pos, 4, err); break;
        case OP_SHORT_BINUNICODE: s = op_string(m, &pos, 1, err); break;
        case OP_BINPUT:
        case OP_LONG_BINPUT:
            if ((arg = take(m, &pos, op == OP_BINPUT ? 1 : 4, &s, err))) s = op_put(m, al_pickle_rd_le(arg, op == OP_BINPUT ? 1 : 4), err);
            break;
        case OP_BINGET:
        case OP_LONG_BINGET:
            if ((arg = take(m, &pos, op == OP_BINGET ? 1 : 4, &s, err))) s = op_get(m, al_pickle_rd_le(arg, op == OP_BINGET ? 1 : 4), err);
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
            if ((arg = take(m, &pos, 4, &s, err))) s = al_pickle_push_new(m, PK_INT, (int64_t)al_pickle_rd_le(arg, 4) - (arg[3] >> 7 ? (int64_t)1 << 32 : 0), 0, err);
            break;
        case OP_BININT1:
        case OP_BININT2:
            if ((arg = take(m, &pos, op == OP_BININT1 ? 1 : 2, &s, err))) s = al_pickle_push_new(m, PK_INT, al_pickle_rd_le(arg, op == OP_BININT1 ? 1 : 2), 0, err);
            break;
        case OP_NEWTRUE:
        case OP_NEWFALSE: s = al_pickle_push_new(m, PK_BOOL, op == OP_NEWTRUE, 0, err); break;
        case OP_NONE: s = al_pickle_push_new(m, PK_NONE, 0, 0, err); break;
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
                if (m->values[target].kind != PK_DICT)
                    s = al_fail(err, AL_ERR_FORMAT, "pickle: BUILD at byte %zu on %s: only a dict's state is accepted (and dropped)",
                                m->at, al_pickle_kind_name(m, target));
                else if (m->values[state].kind != PK_DICT && m->values[state].kind != PK_NONE)
                    s = al_fail(err, AL_ERR_FORMAT, "pickle: BUILD at byte %zu with a state that is %s, not a dict",
                                m->at, al_pickle_kind_name(m, state));
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
