/* torch/text.h — a bounded text writer (for the demos and the binding description):
 * printf-style appends and PyTorch tensor reprs into a caller's buffer that never overflow and
 * keep counting the full length, so one pass can both measure and fill (the snprintf
 * convention, over many calls). */
#ifndef ATTNLAB_TEXT_H
#define ATTNLAB_TEXT_H

#include "base/internal.h"

typedef struct {
    char *buf;  /* caller's buffer, may be NULL when cap is 0 */
    size_t cap; /* its capacity in bytes, including the terminating NUL */
    size_t len; /* length the full text has so far (may exceed cap) */
} al_text;

void al_text_init(al_text *t, char *buf, size_t cap);
void al_text_printf(al_text *t, const char *fmt, ...) AL_PRINTF(2, 3);
/* Appends the PyTorch repr of a float32 tensor (suffix may be NULL). */
void al_text_tensor(al_text *t, const float *data, const int64_t *shape, int ndim,
                    const char *suffix);
/* Appends the repr of an int64 tensor. */
void al_text_int_tensor(al_text *t, const int64_t *data, const int64_t *shape, int ndim);
/* Appends "torch.Size([...])". */
void al_text_size(al_text *t, const int64_t *shape, int ndim);

#endif
