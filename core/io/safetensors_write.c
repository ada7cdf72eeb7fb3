/* safetensors_write.c — writes safetensors images (float32, or float16 rounded to nearest): the
 * JSON header with the tensors sorted by name, names and metadata checked (valid UTF-8, no
 * duplicates), every size checked for overflow; safetensors_read.c reads them back. */
#include "attnlab/io.h"
#include "base/internal.h"
#include "base/json.h"
#include "base/text.h"
#include "io/safetensors_impl.h"

#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* ---- serialisation ------------------------------------------------------------------------ */

static int utf8_valid(const char *s) {
    size_t n = strlen(s);
    for (size_t i = 0; i < n;) {
        size_t k = al_json_utf8_seq_len((const unsigned char *)s + i, n - i);
        if (k == 0) return 0;
        i += k;
    }
    return 1;
}

/* 1 and *dup set if two of strs[0, n) are equal, 0 if none, -1 if out of memory. */
static int find_duplicate(const char *const *strs, int n, const char **dup) {
    if (n < 2) return 0;
    const char **sorted = malloc((size_t)n * sizeof *sorted);
    if (!sorted) return -1;
    memcpy(sorted, strs, (size_t)n * sizeof *sorted);
    al_sort(sorted, (size_t)n, sizeof *sorted, al_st_cmp_str);
    int found = 0;
    for (int i = 0; i + 1 < n && !found; i++)
        if (strcmp(sorted[i], sorted[i + 1]) == 0) {
            *dup = sorted[i];
            found = 1;
        }
    free(sorted);
    return found;
}

/* Elements of an entry whose shape al_st_serialize has checked (product <= INT64_MAX / 4). */
static int64_t entry_numel(const al_st_entry *e) {
    int64_t numel = 1;
    for (int d = 0; d < e->ndim; d++)
        if (e->shape[d] == 0) return 0;
    for (int d = 0; d < e->ndim; d++) numel *= e->shape[d];
    return numel;
}

static void w_header(al_text *w, const al_st_entry *entries, int n_entries, al_dtype dtype,
                     const char *const *meta_kv, int n_meta) {
    al_text_puts(w, "{");
    if (n_meta > 0) {
        al_text_puts(w, "\"__metadata__\":{");
        for (int i = 0; i < n_meta; i++) {
            if (i) al_text_puts(w, ",");
            al_json_write_string(w, meta_kv[2 * i], strlen(meta_kv[2 * i]));
            al_text_puts(w, ":");
            al_json_write_string(w, meta_kv[2 * i + 1], strlen(meta_kv[2 * i + 1]));
        }
        al_text_puts(w, "}");
    }
    int64_t offset = 0;
    for (int i = 0; i < n_entries; i++) {
        const al_st_entry *e = &entries[i];
        int64_t numel = entry_numel(e);
        if (i || n_meta > 0) al_text_puts(w, ",");
        al_json_write_string(w, e->name, strlen(e->name));
        const int64_t size = dtype == AL_DTYPE_F16 ? 2 : 4;
        al_text_puts(w, dtype == AL_DTYPE_F16 ? ":{\"dtype\":\"F16\",\"shape\":[" : ":{\"dtype\":\"F32\",\"shape\":[");
        for (int d = 0; d < e->ndim; d++) {
            if (d) al_text_puts(w, ",");
            al_text_int(w, e->shape[d]);
        }
        al_text_puts(w, "],\"data_offsets\":[");
        al_text_int(w, offset);
        al_text_puts(w, ",");
        al_text_int(w, offset + size * numel);
        al_text_puts(w, "]}");
        offset += size * numel;
    }
    al_text_puts(w, "}");
}

al_status al_st_serialize(const al_st_entry *entries, int n_entries,
                          const char *const *meta_kv, int n_meta,
                          uint8_t *buf, size_t cap, size_t *needed, al_error *err) {
    return al_st_serialize_as(entries, n_entries, AL_DTYPE_F32, meta_kv, n_meta, buf, cap, needed, err);
}

al_status al_st_serialize_as(const al_st_entry *entries, int n_entries, al_dtype dtype,
                             const char *const *meta_kv, int n_meta,
                             uint8_t *buf, size_t cap, size_t *needed, al_error *err) {
    char shown[ST_SHOWN_BUF];
    if (dtype != AL_DTYPE_F32 && dtype != AL_DTYPE_F16)
        return al_fail(err, AL_ERR_ARG, "al_st_serialize: only F32 and F16 are written");
    if (needed) *needed = 0;
    if (n_entries < 0 || (n_entries > 0 && !entries))
        return al_fail(err, AL_ERR_ARG, "al_st_serialize: bad entries or n_entries");
    if (n_meta < 0 || (n_meta > 0 && !meta_kv))
        return al_fail(err, AL_ERR_ARG, "al_st_serialize: bad meta_kv or n_meta");
    if (!buf && !needed)
        return al_fail(err, AL_ERR_ARG, "al_st_serialize: both buf and needed are NULL");

    /* Everything a reader (ours or the reference) would refuse is refused here. */
    int64_t data_bytes = 0;
    for (int i = 0; i < n_entries; i++) {
        const al_st_entry *e = &entries[i];
        if (!e->name) return al_fail(err, AL_ERR_ARG, "entry %d: name is NULL", i);
        show(shown, e->name, strlen(e->name), 0);
        if (!utf8_valid(e->name))
            return al_fail(err, AL_ERR_ARG, "entry '%s': name is not valid UTF-8", shown);
        if (strcmp(e->name, "__metadata__") == 0)
            return al_fail(err, AL_ERR_ARG, "entry '%s': the name is reserved", shown);
        if (e->ndim < 0 || e->ndim > AL_ST_MAX_DIMS)
            return al_fail(err, AL_ERR_ARG, "entry '%s': ndim %d outside [0, %d]", shown, e->ndim,
                           AL_ST_MAX_DIMS);
        int64_t numel = 1;
        for (int d = 0; d < e->ndim; d++)
            if (e->shape[d] < 0)
                return al_fail(err, AL_ERR_ARG, "entry '%s': shape[%d] = %" PRId64 " is negative",
                               shown, d, e->shape[d]);
        for (int d = 0; d < e->ndim; d++) {
            if (e->shape[d] == 0) {
                numel = 0;
                break;
            }
        }
        for (int d = 0; d < e->ndim && numel != 0; d++) {
            if (numel > INT64_MAX / 4 / e->shape[d])
                return al_fail(err, AL_ERR_LIMIT, "entry '%s': too many elements", shown);
            numel *= e->shape[d];
        }
        if (numel > 0 && !e->data)
            return al_fail(err, AL_ERR_ARG, "entry '%s': data is NULL", shown);
        /* float16: a value that rounds past 65504 (|x| >= 65520) would be written as infinity,
         *  a file every reader refuses; NaN and infinity likewise. */
        for (int64_t j = 0; j < numel && dtype == AL_DTYPE_F16; j++) {
            if ((al_f32_to_f16_bits(e->data[j]) & 0x7C00) != 0x7C00) continue;
            char where[240];
            al_st_describe_index(where, sizeof where, e->shape, e->ndim, j);
            return al_fail(err, AL_ERR_NONFINITE, "tensor '%s': %s is %.9g, which float16 cannot hold (its "
                           "largest value is 65504)", shown, where, (double)e->data[j]);
        }
        const int64_t size = dtype == AL_DTYPE_F16 ? 2 : 4;
        if (size * numel > INT64_MAX - data_bytes)
            return al_fail(err, AL_ERR_LIMIT, "entries hold more data than fits in 64 bits");
        data_bytes += size * numel;
    }
    for (int i = 0; i < 2 * n_meta; i++) {
        if (!meta_kv[i])
            return al_fail(err, AL_ERR_ARG, "metadata %s %d is NULL", i % 2 ? "value" : "key",
                           i / 2);
        if (!utf8_valid(meta_kv[i]))
            return al_fail(err, AL_ERR_ARG, "metadata %s '%s' is not valid UTF-8",
                           i % 2 ? "value" : "key", show(shown, meta_kv[i], strlen(meta_kv[i]), 0));
    }

    const char *dup = NULL;
    const char **names = n_entries > 1 ? malloc((size_t)n_entries * sizeof *names) : NULL;
    const char **keys = n_meta > 1 ? malloc((size_t)n_meta * sizeof *keys) : NULL;
    if ((n_entries > 1 && !names) || (n_meta > 1 && !keys)) {
        free(names);
        free(keys);
        return al_fail(err, AL_ERR_NOMEM, "out of memory checking names");
    }
    for (int i = 0; names && i < n_entries; i++) names[i] = entries[i].name;
    for (int i = 0; keys && i < n_meta; i++) keys[i] = meta_kv[2 * i];
    int dn = names ? find_duplicate(names, n_entries, &dup) : 0;
    const char *dup_key = NULL;
    int dk = keys ? find_duplicate(keys, n_meta, &dup_key) : 0;
    free(names);
    free(keys);
    if (dn < 0 || dk < 0) return al_fail(err, AL_ERR_NOMEM, "out of memory checking names");
    if (dn) return al_fail(err, AL_ERR_ARG, "duplicate entry name '%s'", show(shown, dup, strlen(dup), 0));
    if (dk)
        return al_fail(err, AL_ERR_ARG, "duplicate metadata key '%s'",
                       show(shown, dup_key, strlen(dup_key), 0));

    /* Measure: header, padded with spaces so the data starts 8-byte aligned in the file. */
    al_text w;
    al_text_init_bytes(&w, NULL, 0);
    w_header(&w, entries, n_entries, dtype, meta_kv, n_meta);
    uint64_t hlen = w.len, pad = (8 - hlen % 8) % 8;
    if (hlen + pad > ST_MAX_HEADER_BYTES)
        return al_fail(err, AL_ERR_LIMIT, "header would be %" PRIu64 " bytes, above the %u-byte limit of readers",
                       hlen + pad, ST_MAX_HEADER_BYTES);
    uint64_t total = 8 + hlen + pad + (uint64_t)data_bytes;
    if (total > SIZE_MAX)
        return al_fail(err, AL_ERR_LIMIT, "file of %" PRIu64 " bytes exceeds this address space", total);
    if (needed) *needed = (size_t)total;
    if (!buf && cap == 0) return al_ok(err);
    if (!buf || cap < total)
        return al_fail(err, AL_ERR_CAPACITY, "the file needs %" PRIu64 " bytes but the buffer holds %zu",
                       total, buf ? cap : (size_t)0);

    al_text_init_bytes(&w, buf, cap);
    uint8_t n8[8];
    for (int i = 0; i < 8; i++) n8[i] = (uint8_t)((hlen + pad) >> (8 * i));
    al_text_put(&w, n8, 8);
    w_header(&w, entries, n_entries, dtype, meta_kv, n_meta);
    for (uint64_t i = 0; i < pad; i++) al_text_puts(&w, " ");
    for (int i = 0; i < n_entries; i++) {
        const al_st_entry *e = &entries[i];
        int64_t numel = entry_numel(e);
        for (int64_t j = 0; j < numel && dtype == AL_DTYPE_F16; j++) {
            const uint16_t h = al_f32_to_f16_bits(e->data[j]);
            const uint8_t le[2] = {(uint8_t)h, (uint8_t)(h >> 8)};
            al_text_put(&w, le, 2);
        }
        for (int64_t j = 0; j < numel && dtype != AL_DTYPE_F16; j++) {
            uint32_t b;
            uint8_t le[4];
            memcpy(&b, &e->data[j], 4);
            le[0] = (uint8_t)b;
            le[1] = (uint8_t)(b >> 8);
            le[2] = (uint8_t)(b >> 16);
            le[3] = (uint8_t)(b >> 24);
            al_text_put(&w, le, 4);
        }
    }
    return w.len == total ? al_ok(err) : al_fail(err, AL_ERR_ARG, "size changed while writing");
}
