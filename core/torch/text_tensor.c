/* text_tensor.c — PyTorch reprs appended to a bounded text writer (see text_tensor.h). */
#include "attnlab/torch.h"
#include "torch/text_tensor.h"

void al_text_tensor(al_text *t, const float *data, const int64_t *shape, int ndim,
                    const char *suffix) {
    size_t room;
    char *tail = al_text_tail(t, &room);
    const int64_t n = al_format_tensor(tail, room, data, NULL, shape, ndim, suffix);
    if (n > 0) t->len += (size_t)n;
}

void al_text_int_tensor(al_text *t, const int64_t *data, const int64_t *shape, int ndim) {
    size_t room;
    char *tail = al_text_tail(t, &room);
    const int64_t n = al_format_tensor(tail, room, NULL, data, shape, ndim, NULL);
    if (n > 0) t->len += (size_t)n;
}

void al_text_size(al_text *t, const int64_t *shape, int ndim) {
    size_t room;
    char *tail = al_text_tail(t, &room);
    const int64_t n = al_format_size(tail, room, shape, ndim);
    if (n > 0) t->len += (size_t)n;
}
