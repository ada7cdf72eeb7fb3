/* text.c — the bounded text writer (see text.h). */
#include "torch/text.h"


void al_text_init(al_text *t, char *buf, size_t cap) {
    t->buf = buf;
    t->cap = buf ? cap : 0;
    t->len = 0;
    if (t->cap) t->buf[0] = '\0';
}

/* Space left for the next write, including room for its NUL. */
static char *text_tail(al_text *t, size_t *room) {
    if (t->len < t->cap) {
        *room = t->cap - t->len;
        return t->buf + t->len;
    }
    *room = 0;
    return NULL;
}

void al_text_printf(al_text *t, const char *fmt, ...) {
    size_t room;
    char *tail = text_tail(t, &room);
    va_list ap;
    va_start(ap, fmt);
    int n = al_vsnprintf(tail, room, fmt, ap);
    va_end(ap);
    if (n > 0) t->len += (size_t)n;
}

void al_text_tensor(al_text *t, const float *data, const int64_t *shape, int ndim,
                    const char *suffix) {
    size_t room;
    char *tail = text_tail(t, &room);
    const int64_t n = al_format_tensor(tail, room, data, NULL, shape, ndim, suffix);
    if (n > 0) t->len += (size_t)n;
}

void al_text_int_tensor(al_text *t, const int64_t *data, const int64_t *shape, int ndim) {
    size_t room;
    char *tail = text_tail(t, &room);
    const int64_t n = al_format_tensor(tail, room, NULL, data, shape, ndim, NULL);
    if (n > 0) t->len += (size_t)n;
}

void al_text_size(al_text *t, const int64_t *shape, int ndim) {
    size_t room;
    char *tail = text_tail(t, &room);
    const int64_t n = al_format_size(tail, room, shape, ndim);
    if (n > 0) t->len += (size_t)n;
}
