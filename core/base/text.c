/* text.c — the bounded text writer (see text.h). */
#include "base/text.h"
#include "base/json.h"

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

const char *al_show_bytes(char *out, size_t max, const uint8_t *s, size_t len, int cut, const char hex[16]) {
    size_t o = 0;
    for (size_t i = 0; i < len;) {
        const size_t n = s[i] >= 0x20 && s[i] < 0x7F ? 1 : s[i] >= 0x80 ? al_json_utf8_seq_len(s + i, len - i) : 0;
        if (o + (n ? n : 4) > max) {
            cut = 1;
            break;
        }
        if (n) {
            memcpy(out + o, s + i, n);
            o += n;
            i += n;
        } else {
            out[o++] = '\\';
            out[o++] = 'x';
            out[o++] = hex[s[i] >> 4];
            out[o++] = hex[s[i] & 15];
            i++;
        }
    }
    if (cut) {
        memcpy(out + o, "...", 3);
        o += 3;
    }
    out[o] = '\0';
    return out;
}
