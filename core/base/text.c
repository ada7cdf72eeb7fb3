/* text.c — the bounded text writer (see text.h). */
#include "base/text.h"

void al_text_init(al_text *t, char *buf, size_t cap) {
    t->buf = buf;
    t->cap = buf ? cap : 0;
    t->len = 0;
    if (t->cap) t->buf[0] = '\0';
}

char *al_text_tail(al_text *t, size_t *room) {
    if (t->len < t->cap) {
        *room = t->cap - t->len;
        return t->buf + t->len;
    }
    *room = 0;
    return NULL;
}

void al_text_printf(al_text *t, const char *fmt, ...) {
    size_t room;
    char *tail = al_text_tail(t, &room);
    va_list ap;
    va_start(ap, fmt);
    int n = al_vsnprintf(tail, room, fmt, ap);
    va_end(ap);
    if (n > 0) t->len += (size_t)n;
}
