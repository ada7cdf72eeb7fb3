/* io/safetensors_impl.h — what the safetensors reader (safetensors_read.c) and writer
 * (safetensors_write.c) share: the header's size limit, how a name is quoted in a message (cut
 * to ST_SHOWN_MAX bytes so a message stays one readable line: al_show_bytes, lower-case hex),
 * how an element is named, the order of names. Not public API. */
#ifndef ATTNLAB_IO_SAFETENSORS_IMPL_H
#define ATTNLAB_IO_SAFETENSORS_IMPL_H

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
/* strcmp on two (const char *) elements, for al_sort. */
int al_st_cmp_str(const void *a, const void *b);

#endif
