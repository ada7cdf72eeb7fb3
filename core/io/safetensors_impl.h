/* io/safetensors_impl.h — what the safetensors reader (safetensors_read.c) and writer
 * (safetensors_write.c) share: the header's size limit, how a name is quoted in a message (cut
 * to ST_SHOWN_MAX bytes so a message stays one readable line: al_show_bytes, lower-case hex),
 * how an element is named, the order of names; and the index the .pth reader (pth.c) builds
 * of tensors placed in a file or a block it holds. Not public API. */
#ifndef ATTNLAB_IO_SAFETENSORS_IMPL_H
#define ATTNLAB_IO_SAFETENSORS_IMPL_H

#include "attnlab/io.h"
#include "base/text.h"

/* The reference implementation (huggingface/safetensors) refuses larger headers: 100 MB. */
#define ST_MAX_HEADER_BYTES 100000000u

#define ST_SHOWN_MAX 64
#define ST_SHOWN_BUF (ST_SHOWN_MAX + 8)

static inline const char *show(char out[ST_SHOWN_BUF], const char *s, size_t len, int cut) {
    return al_show_bytes(out, ST_SHOWN_MAX, (const uint8_t *)s, len, cut, "0123456789abcdef");
}

/* "element 7 (index [1, 3])" for flat element i of a tensor of this shape, into buf [cap]. */
void al_st_describe_index(char *buf, size_t cap, const int64_t *shape, int ndim, int64_t i);
/* A tensor to index: its dtype (F32, F16 or BF16), shape, and where its bytes start. */
typedef struct {
    const char *name;
    al_dtype dtype;
    int ndim;
    int64_t shape[AL_ST_MAX_DIMS];
    uint64_t offset; /* in data, or in the file when data is NULL */
} al_st_placed;

/* An index over entries[n] whose bytes lie in data[data_size] (data NULL: in a file of
 * data_size bytes, read from it piece by piece as al_st_parse_header's are), with metadata
 * pairs meta_kv[2 * n_meta]. Names and metadata are copied; data must outlive the index.
 * Tensors may share bytes (tied weights do); names must be unique. */
al_status al_st_index_placed(const al_st_placed *entries, int n, const char *const *meta_kv, int n_meta,
                             const void *data, uint64_t data_size, al_safetensors **out, al_error *err);

/* strcmp on two (const char *) elements, for al_sort. */
int al_st_cmp_str(const void *a, const void *b);

#endif
