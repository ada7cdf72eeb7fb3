/* pth.c — MiniMind's own training output read without Python. A .pth is torch.save's zip archive
 * (zip.c): <stem>/data.pkl, a pickle of the state_dict, and <stem>/data/<key>, one raw
 * little-endian storage per key. The pickle is run by the restricted machine of pickle.c, to
 * which this file names the globals a state_dict uses (refusing every other by name) and says
 * what a persistent id (a storage: an entry of the archive) and a REDUCE (an OrderedDict, or a
 * tensor rebuilt on a storage) make. The archive is read from an al_byte_source: its directory,
 * then data.pkl whole, and nothing else until asked for. The tensors come out as an index
 * (al_pth_read_index: each tensor's place in the file, its shape and its storage's dtype), from
 * which the model loader reads them one at a time, or as float32 views (al_pth_read_views):
 * every storage element some tensor views widened once, so that 2,900 tensors on one storage
 * cost its floats once, not 2,900 copies; al_pth_to_safetensors serialises them as an image.
 * The whole-bytes entry points read their bytes through a memory source: one reading code. */
#include "attnlab/io.h"
#include "base/internal.h"
#include "base/text.h"
#include "io/pickle.h"
#include "io/pth.h"
#include "io/safetensors_impl.h"
#include "io/zip.h"

#include <stdlib.h>
#include <string.h>

/* The globals a state_dict names; the three storage types carry their dtype. */
typedef enum { G_ORDERED_DICT, G_REBUILD_TENSOR, G_FLOAT_STORAGE, G_HALF_STORAGE, G_BFLOAT16_STORAGE } pk_global;
static const struct {
    const char *module, *name;
    int elem_size;           /* storages only: bytes per element */
    const char *torch_dtype; /* and the dtype's name in config.json */
    al_dtype dtype;          /* and in the index */
} GLOBALS[] = {
    {"collections", "OrderedDict", 0, NULL, AL_DTYPE_OTHER},
    {"torch._utils", "_rebuild_tensor_v2", 0, NULL, AL_DTYPE_OTHER},
    {"torch", "FloatStorage", 4, "float32", AL_DTYPE_F32},
    {"torch", "HalfStorage", 2, "float16", AL_DTYPE_F16},
    {"torch", "BFloat16Storage", 2, "bfloat16", AL_DTYPE_BF16},
};
#define N_GLOBALS ((int)(sizeof GLOBALS / sizeof GLOBALS[0]))

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

/* A read: the machine, and what the archive and the pickle's storages and tensors hold
 * (freed with the machine in read_free). */
typedef struct {
    pk_machine m;
    const al_byte_source *src; /* the archive */
    al_zip zip;
    uint8_t *pickle;           /* data.pkl's bytes, which m reads */
    const uint8_t *stem; /* [stem_len], "<stem>" of "<stem>/data.pkl" */
    size_t stem_len;
    int64_t *entry_storage; /* [n_entries]: the storage read from each entry, -1 if none */
    pk_storage *storages;
    int64_t n_storages, cap_storages;
    pk_tensor *tensors;
    int64_t n_tensors, cap_tensors;
} pth_read;

static void read_free(pth_read *r) {
    al_pickle_free(&r->m);
    al_zip_free(&r->zip);
    free(r->pickle);
    free(r->entry_storage);
    free(r->storages);
    free(r->tensors);
}

/* The machine's GLOBAL: one of GLOBALS, or -1. */
static int find_global(const uint8_t *module, size_t module_len, const uint8_t *name, size_t name_len) {
    for (int g = 0; g < N_GLOBALS; g++)
        if (strlen(GLOBALS[g].module) == module_len && !memcmp(GLOBALS[g].module, module, module_len) &&
            strlen(GLOBALS[g].name) == name_len && !memcmp(GLOBALS[g].name, name, name_len))
            return g;
    return -1;
}

/* BINPERSID: ('storage', <Storage type>, key, location, numel) names the entry <stem>/data/<key>,
 * which must hold exactly numel elements of the type. */
static al_status persistent_load(pk_machine *m, int64_t pid, al_error *err) {
    pth_read *r = m->host;
    al_status s = AL_OK;
    if (m->values[pid].kind != PK_TUPLE)
        return al_fail(err, AL_ERR_FORMAT, "pickle: the persistent id at byte %zu is %s, not ('storage', type, key, location, numel)",
                       m->at, al_pickle_kind_name(m, pid));
    if (m->values[pid].n != 5)
        return al_fail(err, AL_ERR_FORMAT, "pickle: the persistent id at byte %zu has %lld parts, not 5 ('storage', type, key, location, numel)",
                       m->at, (long long)m->values[pid].n);
    if (!al_pickle_str_is(m, m->kids[m->values[pid].a], "storage"))
        return al_fail(err, AL_ERR_FORMAT, "pickle: the persistent id at byte %zu does not start with 'storage'", m->at);
    int64_t type = 0, key = 0, location = 0, numel = 0;
    if ((s = al_pickle_element(m, pid, 1, PK_GLOBAL, "the storage type", &type, err)) != AL_OK ||
        (s = al_pickle_element(m, pid, 2, PK_STR, "the storage key", &key, err)) != AL_OK ||
        (s = al_pickle_element(m, pid, 3, PK_STR, "the storage location", &location, err)) != AL_OK ||
        (s = al_pickle_element(m, pid, 4, PK_INT, "the storage size", &numel, err)) != AL_OK)
        return s;
    const pk_global g = (pk_global)m->values[type].a;
    if (g < G_FLOAT_STORAGE)
        return al_fail(err, AL_ERR_FORMAT, "pickle: persistent id at byte %zu has type %s.%s, not a Float, Half or BFloat16 storage",
                       m->at, GLOBALS[g].module, GLOBALS[g].name);
    /* The bytes on disk are the same wherever the tensor lived; torch.load maps them. */
    const pk_value *loc = &m->values[location];
    char shown[AL_ZIP_SHOWN_BUF];
    if (!al_pickle_str_is(m, location, "cpu") && !(loc->n >= 4 && !memcmp(al_pickle_str_bytes(m, loc), "cuda", 4)))
        return al_fail(err, AL_ERR_FORMAT, "pickle: storage location '%s' at byte %zu is neither cpu nor cuda",
                       al_zip_show(shown, al_pickle_str_bytes(m, loc), (size_t)loc->n), m->at);
    const pk_value *k = &m->values[key];
    al_zip_show(shown, al_pickle_str_bytes(m, k), (size_t)k->n);
    if (k->n < 1 || k->n > PK_MAX_KEY) return al_fail(err, AL_ERR_FORMAT, "pickle: storage key '%s' at byte %zu is empty or too long", shown, m->at);
    const int64_t count = m->values[numel].a;
    if (count < 0) return al_fail(err, AL_ERR_FORMAT, "pickle: storage '%s' at byte %zu has a negative size", shown, m->at);

    char name[PK_MAX_LINE + PK_MAX_KEY + 16]; /* find_pickle keeps stem_len <= PK_MAX_LINE */
    memcpy(name, r->stem, r->stem_len);
    memcpy(name + r->stem_len, "/data/", 6);
    memcpy(name + r->stem_len + 6, al_pickle_str_bytes(m, k), (size_t)k->n);
    const size_t name_len = r->stem_len + 6 + (size_t)k->n;
    const al_zip_entry *e = al_zip_find(&r->zip, name, name_len);
    char shown_name[AL_ZIP_SHOWN_BUF];
    if (!e)
        return al_fail(err, AL_ERR_FORMAT, "pth: storage '%s' (pickle byte %zu) is not in the archive: no entry '%s'", shown, m->at,
                       al_zip_show(shown_name, (const uint8_t *)name, name_len));
    const size_t elem = (size_t)GLOBALS[g].elem_size;
    if ((uint64_t)count > e->size / elem)
        return al_fail(err, AL_ERR_FORMAT, "pth: storage '%s' holds %llu bytes, too few for a %s of %lld elements", shown,
                       (unsigned long long)e->size, GLOBALS[g].name, (long long)count);
    if ((uint64_t)count * elem != e->size)
        return al_fail(err, AL_ERR_FORMAT, "pth: storage '%s' holds %llu bytes, but a %s of %lld elements takes %llu", shown,
                       (unsigned long long)e->size, GLOBALS[g].name, (long long)count, (unsigned long long)count * elem);

    /* One storage per entry: a key named again (tied weights) must name the same type and size. */
    int64_t *known = &r->entry_storage[e - r->zip.entries];
    if (*known >= 0) {
        const pk_storage *st = &r->storages[*known];
        if (st->type != g || st->numel != count)
            return al_fail(err, AL_ERR_FORMAT, "pth: storage '%s' is named again at pickle byte %zu with another type or size", shown, m->at);
    } else {
        if ((s = al_zip_check_crc(r->src, e, err)) != AL_OK) return s;
        if ((s = AL_PICKLE_GROW(m, r, storages, cap_storages, n_storages, r->zip.count, "storages", err)) != AL_OK) return s;
        r->storages[r->n_storages] = (pk_storage){e, al_pickle_str_bytes(m, k), (size_t)k->n, g, count};
        *known = r->n_storages++;
    }
    return al_pickle_push_new(m, PK_STORAGE, *known, 0, err);
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
    pth_read *r = m->host;
    if (m->values[args].n != 6)
        return al_fail(err, AL_ERR_FORMAT, "pickle: _rebuild_tensor_v2 at byte %zu with %lld arguments, not 6", m->at, (long long)m->values[args].n);
    int64_t storage = 0, offset = 0, size = 0, stride = 0, grad = 0, hooks = 0;
    al_status s;
    if ((s = al_pickle_element(m, args, 0, PK_STORAGE, "a tensor's storage", &storage, err)) != AL_OK ||
        (s = al_pickle_element(m, args, 1, PK_INT, "a tensor's storage offset", &offset, err)) != AL_OK ||
        (s = al_pickle_element(m, args, 2, PK_TUPLE, "a tensor's size", &size, err)) != AL_OK ||
        (s = al_pickle_element(m, args, 3, PK_TUPLE, "a tensor's stride", &stride, err)) != AL_OK ||
        (s = al_pickle_element(m, args, 4, PK_BOOL, "a tensor's requires_grad", &grad, err)) != AL_OK ||
        (s = al_pickle_element(m, args, 5, PK_DICT, "a tensor's backward hooks", &hooks, err)) != AL_OK)
        return s;
    pk_tensor t;
    memset(&t, 0, sizeof t);
    t.storage = m->values[storage].a;
    t.offset = m->values[offset].a;
    const int64_t ndim = m->values[size].n;
    if (ndim > AL_ST_MAX_DIMS) return al_fail(err, AL_ERR_FORMAT, "pickle: a tensor at byte %zu has %lld dimensions; at most %d are read", m->at, (long long)ndim, AL_ST_MAX_DIMS);
    if (m->values[stride].n != ndim) return al_pickle_error(m, err, "a tensor whose stride and size differ in length");
    int64_t st[AL_ST_MAX_DIMS];
    t.ndim = (int)ndim;
    t.numel = 1;
    for (int d = 0; d < t.ndim; d++) {
        int64_t v = 0;
        if ((s = al_pickle_element(m, size, d, PK_INT, "a tensor's size", &v, err)) != AL_OK) return s;
        t.shape[d] = m->values[v].a;
        if ((s = al_pickle_element(m, stride, d, PK_INT, "a tensor's stride", &v, err)) != AL_OK) return s;
        st[d] = m->values[v].a;
        if (t.shape[d] < 0) return al_pickle_error(m, err, "a tensor with a negative size");
        if (!al_mul_ok(t.numel, t.shape[d], &t.numel)) return al_pickle_error(m, err, "a tensor with more elements than fit in 64 bits");
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
    const pk_storage *ps = &r->storages[t.storage];
    if (t.offset < 0 || t.offset > ps->numel || t.numel > ps->numel - t.offset) {
        char shown[AL_ZIP_SHOWN_BUF];
        return al_fail(err, AL_ERR_FORMAT, "pth: a tensor at pickle byte %zu (%lld elements from offset %lld) runs past the end of storage '%s' (%lld elements)",
                       m->at, (long long)t.numel, (long long)t.offset, al_zip_show(shown, ps->key, ps->key_len), (long long)ps->numel);
    }
    if ((s = AL_PICKLE_GROW(m, r, tensors, cap_tensors, n_tensors, PK_MAX_TENSORS, "tensors", err)) != AL_OK) return s;
    r->tensors[r->n_tensors] = t;
    return al_pickle_push_new(m, PK_TENSOR, r->n_tensors++, 0, err);
}

/* The machine's REDUCE: the two callables a state_dict holds. */
static al_status reduce(pk_machine *m, int global, int64_t args, al_error *err) {
    switch ((pk_global)global) {
    case G_ORDERED_DICT:
        if (m->values[args].n != 0) return al_pickle_error(m, err, "OrderedDict built from arguments (only OrderedDict() is read)");
        return al_pickle_push_new(m, PK_DICT, 0, 0, err);
    case G_REBUILD_TENSOR: return rebuild_tensor(m, args, err);
    default:
        return al_fail(err, AL_ERR_FORMAT, "pickle: REDUCE at byte %zu calls torch.%s; only OrderedDict() and _rebuild_tensor_v2() are built",
                       m->at, GLOBALS[global].name);
    }
}

/* ---- the archive -------------------------------------------------------------------------- */

/* <stem>/data.pkl (exactly one), read whole, and <stem>/byteorder "little" if there is one. */
static al_status find_pickle(pth_read *r, al_error *err) {
    pk_machine *m = &r->m;
    static const char PKL[] = "/data.pkl";
    const size_t pkl_len = sizeof PKL - 1;
    const al_zip_entry *found = NULL;
    for (int64_t i = 0; i < r->zip.count; i++) {
        const al_zip_entry *e = &r->zip.entries[i];
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
    r->stem = found->name;
    r->stem_len = found->name_len - pkl_len;
    if (found->size > SIZE_MAX || !(r->pickle = malloc(found->size ? (size_t)found->size : 1)))
        return al_fail(err, AL_ERR_NOMEM, "pth: out of memory for a pickle of %llu bytes", (unsigned long long)found->size);
    al_status s = al_zip_check_crc(r->src, found, err);
    if (s == AL_OK) s = al_zip_entry_bytes(r->src, found, 0, r->pickle, (size_t)found->size, err);
    if (s != AL_OK) return s;
    m->pk = r->pickle;
    m->len = (size_t)found->size;

    char name[PK_MAX_LINE + 16];
    if (r->stem_len > PK_MAX_LINE) return al_fail(err, AL_ERR_FORMAT, "pth: the archive's folder name is too long");
    memcpy(name, r->stem, r->stem_len);
    memcpy(name + r->stem_len, "/byteorder", 10);
    const al_zip_entry *order = al_zip_find(&r->zip, name, r->stem_len + 10);
    if (!order) return AL_OK;
    /* enough of it to show: al_zip_show cuts at AL_ZIP_SHOWN_MAX */
    uint8_t text[AL_ZIP_SHOWN_MAX + 1];
    const size_t n = order->size < sizeof text ? (size_t)order->size : sizeof text;
    if ((s = al_zip_check_crc(r->src, order, err)) != AL_OK || (s = al_zip_entry_bytes(r->src, order, 0, text, n, err)) != AL_OK)
        return s;
    if (!(order->size == 6 && !memcmp(text, "little", 6))) {
        char shown[AL_ZIP_SHOWN_BUF];
        return al_fail(err, AL_ERR_FORMAT, "pth: byteorder '%s': only little-endian storages are read", al_zip_show(shown, text, n));
    }
    return AL_OK;
}

/* ---- the result --------------------------------------------------------------------------- */

static int cmp_keys(const void *x, const void *y, const pk_machine *m) {
    const pk_value *a = &m->values[*(const int64_t *)x], *b = &m->values[*(const int64_t *)y];
    const int c = memcmp(al_pickle_str_bytes(m, a), al_pickle_str_bytes(m, b), (size_t)(a->n < b->n ? a->n : b->n));
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
    if (!keys) return al_pickle_no_memory(err);
    int64_t k = 0;
    al_status s = AL_OK;
    for (int64_t i = 0; i < m->n_items && s == AL_OK; i++) {
        const pk_item *it = &m->items[i];
        if (it->dict != dict) continue;
        const pk_value *key = &m->values[it->key];
        if (key->kind != PK_STR) {
            s = al_fail(err, AL_ERR_FORMAT, "pickle: the state_dict has a key that is %s, not a string", al_pickle_kind_name(m, it->key));
            break;
        }
        al_zip_show(shown, al_pickle_str_bytes(m, key), (size_t)key->n);
        if (memchr(al_pickle_str_bytes(m, key), '\0', (size_t)key->n) || al_pickle_str_is(m, it->key, "__metadata__"))
            s = al_fail(err, AL_ERR_FORMAT, "pickle: the state_dict's key '%s' cannot be a tensor name", shown);
        else if (m->values[it->value].kind != PK_TENSOR)
            s = al_fail(err, AL_ERR_FORMAT, "pickle: the state_dict's '%s' is %s, not a tensor", shown, al_pickle_kind_name(m, it->value));
        else if (minimind_names && !al_minimind_is_param_name(al_pickle_str_bytes(m, key), (size_t)key->n))
            s = al_fail(err, AL_ERR_FORMAT, "pth: the state_dict's '%s' is not a MiniMind weight (model.embed_tokens.weight, "
                                            "model.layers.N.*, model.norm.weight, lm_head.weight)", shown);
        keys[k++] = (key_ref){it->key, m};
    }
    if (s == AL_OK) {
        al_sort(keys, (size_t)k, sizeof *keys, cmp_key_refs);
        for (int64_t i = 1; i < k && s == AL_OK; i++)
            if (cmp_key_refs(&keys[i - 1], &keys[i]) == 0) {
                const pk_value *key = &m->values[keys[i].key];
                s = al_fail(err, AL_ERR_FORMAT, "pickle: the state_dict sets '%s' twice", al_zip_show(shown, al_pickle_str_bytes(m, key), (size_t)key->n));
            }
    }
    free(keys);
    return s;
}

/* Element i of a storage as float32 bits: bfloat16 is the top half of a float32. */
static uint32_t storage_bits(pk_global g, const uint8_t *p, int64_t i) {
    switch (g) {
    case G_HALF_STORAGE: return al_f16_bits_to_f32_bits((uint16_t)al_pickle_rd_le(p + 2 * i, 2));
    case G_BFLOAT16_STORAGE: return al_pickle_rd_le(p + 2 * i, 2) << 16;
    default: return al_pickle_rd_le(p + 4 * i, 4);
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

/* The dict's tensors, counted before anything is allocated: the model copies each tensor, so
 * tensors naming one storage many times cost that many copies; *names_bytes their names with
 * a NUL each, *dtypes a bit per storage type seen. */
static al_status count_tensors(const pth_read *r, int64_t dict, int64_t *names_bytes, int *dtypes, al_error *err) {
    const pk_machine *m = &r->m;
    int64_t total = 0;
    *names_bytes = 0, *dtypes = 0;
    for (int64_t i = 0; i < m->n_items; i++) {
        if (m->items[i].dict != dict) continue;
        const pk_tensor *t = &r->tensors[m->values[m->items[i].value].a];
        if (t->numel > AL_MAX_MODEL_BYTES / 4 - total)
            return al_fail(err, AL_ERR_LIMIT, "pth: the tensors hold more than %lld float32 numbers (%lld bytes)",
                           (long long)(AL_MAX_MODEL_BYTES / 4), (long long)AL_MAX_MODEL_BYTES);
        total += t->numel;
        *names_bytes += m->values[m->items[i].key].n + 1;
        *dtypes |= 1 << r->storages[t->storage].type;
    }
    return AL_OK;
}

/* What the storages hold: "float16", "bfloat16", "float32", or "mixed". */
static const char *torch_dtype_of(int dtypes) {
    for (int g = G_FLOAT_STORAGE; g < N_GLOBALS; g++)
        if (dtypes == 1 << g) return GLOBALS[g].torch_dtype;
    return "mixed";
}

/* The dict's i-th item's tensor and its name, copied NUL-terminated to names + *name_at. */
static const pk_tensor *item_tensor(const pth_read *r, int64_t i, char *names, int64_t *name_at, const char **name) {
    const pk_machine *m = &r->m;
    const pk_value *key = &m->values[m->items[i].key];
    memcpy(names + *name_at, al_pickle_str_bytes(m, key), (size_t)key->n);
    names[*name_at + key->n] = '\0';
    *name = names + *name_at;
    *name_at += key->n + 1;
    return &r->tensors[m->values[m->items[i].value].a];
}

/* The dict's tensors as views: 1. what they would cost, counted before anything is allocated;
 * 2. the entries, and each non-empty tensor's span of its storage, sorted by storage and
 * offset; 3. the runs of elements some tensor views (overlapping spans merged), read from the
 * archive a chunk at a time and widened to float32 once each, every tensor pointing into its
 * run. A storage viewed by 2,900 tensors is thus widened once, and the block never holds more
 * than the storages' viewed elements. */
static al_status build_views(const pth_read *r, int64_t dict, al_pth_views *v, al_error *err) {
    const pk_machine *m = &r->m;
    const int64_t n = m->values[dict].n;
    int64_t names_bytes = 0;
    int dtypes = 0;
    al_status s = count_tensors(r, dict, &names_bytes, &dtypes, err);
    if (s != AL_OK) return s;
    v->entries = malloc((size_t)(n ? n : 1) * sizeof *v->entries);
    v->names = malloc((size_t)names_bytes + 1);
    pk_span *spans = malloc((size_t)(n ? n : 1) * sizeof *spans);
    uint8_t *chunk = malloc(AL_ZIP_CHUNK);
    if (!v->entries || !v->names || !spans || !chunk) {
        free(spans), free(chunk);
        return al_pickle_no_memory(err);
    }
    int64_t e = 0, n_spans = 0, name_at = 0;
    for (int64_t i = 0; i < m->n_items; i++) {
        if (m->items[i].dict != dict) continue;
        al_st_entry *en = &v->entries[e];
        memset(en, 0, sizeof *en);
        const pk_tensor *t = item_tensor(r, i, v->names, &name_at, &en->name);
        en->ndim = t->ndim;
        for (int d = 0; d < t->ndim; d++) en->shape[d] = t->shape[d];
        if (t->numel > 0) spans[n_spans++] = (pk_span){t->storage, t->offset, t->offset + t->numel, e};
        e++;
    }
    v->n_entries = (int)n;
    al_sort(spans, (size_t)n_spans, sizeof *spans, cmp_spans);
    int64_t widened = 0;
    for (int64_t i = 0, next = 0; i < n_spans; i = next) widened += run_end(spans, n_spans, i, &next) - spans[i].begin;
    v->weights = malloc((size_t)(widened ? widened : 1) * sizeof *v->weights);
    if (!v->weights) s = al_pickle_no_memory(err);
    v->n_weights = widened;
    for (int64_t i = 0, next = 0, at = 0; i < n_spans && s == AL_OK; i = next) {
        const int64_t begin = spans[i].begin, end = run_end(spans, n_spans, i, &next);
        const pk_storage *ps = &r->storages[spans[i].storage];
        const int64_t elem = GLOBALS[ps->type].elem_size, per_chunk = (int64_t)AL_ZIP_CHUNK / elem;
        for (int64_t k = begin; k < end && s == AL_OK; k += per_chunk) {
            const int64_t count = end - k < per_chunk ? end - k : per_chunk;
            s = al_zip_entry_bytes(r->src, ps->entry, (uint64_t)(k * elem), chunk, (size_t)(count * elem), err);
            for (int64_t j = 0; j < count && s == AL_OK; j++)
                v->weights[at + k - begin + j] = al_float_of_bits(storage_bits(ps->type, chunk, j));
        }
        for (int64_t j = i; j < next; j++) v->entries[spans[j].entry].data = v->weights + at + (spans[j].begin - begin);
        at += end - begin;
    }
    for (int64_t i = 0; i < n && s == AL_OK; i++) /* an empty tensor points anywhere */
        if (!v->entries[i].data) v->entries[i].data = v->weights;
    free(spans);
    free(chunk);
    v->torch_dtype = torch_dtype_of(dtypes);
    return s;
}

/* The dict's tensors as an index of the archive: each tensor where its elements lie in the
 * file (its storage entry's data, from the tensor's offset), in its storage's dtype; nothing
 * read. Tensors that share a storage share its bytes in the file. */
static al_status build_index(const pth_read *r, int64_t dict, al_safetensors **out, al_error *err) {
    const pk_machine *m = &r->m;
    const int64_t n = m->values[dict].n;
    int64_t names_bytes = 0;
    int dtypes = 0;
    al_status s = count_tensors(r, dict, &names_bytes, &dtypes, err);
    if (s != AL_OK) return s;
    al_st_placed *placed = malloc((size_t)(n ? n : 1) * sizeof *placed);
    char *names = malloc((size_t)names_bytes + 1);
    if (!placed || !names) s = al_pickle_no_memory(err);
    for (int64_t i = 0, e = 0, name_at = 0; i < m->n_items && s == AL_OK; i++) {
        if (m->items[i].dict != dict) continue;
        al_st_placed *p = &placed[e++];
        memset(p, 0, sizeof *p);
        const pk_tensor *t = item_tensor(r, i, names, &name_at, &p->name);
        const pk_storage *ps = &r->storages[t->storage];
        p->dtype = GLOBALS[ps->type].dtype;
        p->ndim = t->ndim;
        for (int d = 0; d < t->ndim; d++) p->shape[d] = t->shape[d];
        /* inside the entry (rebuild_tensor checked it), which is inside the archive */
        p->offset = ps->entry->data_at + (uint64_t)t->offset * (uint64_t)GLOBALS[ps->type].elem_size;
    }
    const char *meta[] = {"format", "pt", "torch_dtype", torch_dtype_of(dtypes)};
    if (s == AL_OK) s = al_st_index_placed(placed, (int)n, meta, 2, NULL, r->src->size, out, err);
    free(placed);
    free(names);
    return s;
}

al_status al_pth_views_index(const al_pth_views *v, al_safetensors **out, al_error *err) {
    if (!out) return al_fail(err, AL_ERR_ARG, "pth: NULL output pointer");
    *out = NULL;
    al_st_placed *placed = malloc((size_t)(v->n_entries ? v->n_entries : 1) * sizeof *placed);
    if (!placed) return al_pickle_no_memory(err);
    for (int i = 0; i < v->n_entries; i++) {
        const al_st_entry *e = &v->entries[i];
        placed[i] = (al_st_placed){e->name, AL_DTYPE_F32, e->ndim, {0}, (uint64_t)(e->data - v->weights) * 4};
        for (int d = 0; d < e->ndim; d++) placed[i].shape[d] = e->shape[d];
    }
    const char *meta[] = {"format", "pt", "torch_dtype", v->torch_dtype};
    const al_status s = al_st_index_placed(placed, v->n_entries, meta, 2, v->weights, (uint64_t)v->n_weights * 4, out, err);
    free(placed);
    return s;
}

void al_pth_views_free(al_pth_views *v) {
    if (!v) return;
    free(v->weights);
    free(v->entries);
    free(v->names);
    memset(v, 0, sizeof *v);
}

/* The archive src read up to its state_dict: the directory, data.pkl run, the dict's items
 * checked (*dict: the dict's value in r->m). r is released by read_free, also on failure. */
static al_status read_state_dict(const al_byte_source *src, int minimind_names, pth_read *r, int64_t *dict,
                                 al_error *err) {
    memset(r, 0, sizeof *r);
    r->src = src;
    r->m.find_global = find_global;
    r->m.persistent_load = persistent_load;
    r->m.reduce = reduce;
    r->m.host = r;
    al_status s = al_zip_read(src, &r->zip, err);
    if (s == AL_ERR_FORMAT) {
        uint8_t first[2] = {0, 0};
        const size_t n = src->size < 2 ? (size_t)src->size : 2;
        if (src->read(src->ctx, 0, first, n) == 0 && al_pickle_starts(first, n))
            return al_fail(err, AL_ERR_FORMAT, "pth: a bare pickle, torch.save's format before PyTorch 1.6 "
                                               "(_use_new_zipfile_serialization=False), which is not read");
    }
    if (s != AL_OK) return s;
    r->entry_storage = malloc((size_t)(r->zip.count ? r->zip.count : 1) * sizeof *r->entry_storage);
    if (!r->entry_storage) return al_pickle_no_memory(err);
    for (int64_t i = 0; i < r->zip.count; i++) r->entry_storage[i] = -1;
    *dict = -1;
    if ((s = find_pickle(r, err)) != AL_OK || (s = al_pickle_run(&r->m, dict, err)) != AL_OK) return s;
    if (r->m.values[*dict].kind != PK_DICT)
        return al_fail(err, AL_ERR_FORMAT, "pickle: the file holds %s, not a dict of tensors", al_pickle_kind_name(&r->m, *dict));
    if ((s = check_items(&r->m, *dict, minimind_names, err)) != AL_OK) return s;
    if (r->m.values[*dict].n > INT32_MAX) return al_fail(err, AL_ERR_LIMIT, "pth: too many tensors");
    return AL_OK;
}

al_status al_pth_read_index(const al_byte_source *src, int minimind_names, al_safetensors **out, al_error *err) {
    if (!out) return al_fail(err, AL_ERR_ARG, "pth: NULL output pointer");
    *out = NULL;
    if (!src || !src->read) return al_fail(err, AL_ERR_ARG, "pth: no source");
    pth_read r;
    int64_t dict = -1;
    al_status s = read_state_dict(src, minimind_names, &r, &dict, err);
    if (s == AL_OK) s = build_index(&r, dict, out, err);
    read_free(&r);
    return s;
}

al_status al_pth_read_views(const uint8_t *bytes, size_t size, int minimind_names, al_pth_views *out, al_error *err) {
    if (!out) return al_fail(err, AL_ERR_ARG, "pth: NULL output pointer");
    memset(out, 0, sizeof *out);
    if (!bytes && size) return al_fail(err, AL_ERR_ARG, "pth: bytes is NULL");
    const al_memory mem = {bytes, size};
    const al_byte_source src = al_memory_source(&mem);
    pth_read r;
    int64_t dict = -1;
    al_status s = read_state_dict(&src, minimind_names, &r, &dict, err);
    if (s == AL_OK) s = build_views(&r, dict, out, err);
    read_free(&r);
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
    if (s == AL_OK && !(*out = malloc(needed))) s = al_pickle_no_memory(err);
    if (s == AL_OK && (s = al_st_serialize(v.entries, v.n_entries, meta, 2, *out, needed, out_size, err)) != AL_OK) {
        free(*out);
        *out = NULL;
    }
    al_pth_views_free(&v);
    return s;
}
