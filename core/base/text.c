/* text.c — the text writer (bounded, counting or growing) and message quoting (see text.h). */
#include "base/text.h"
#include "base/json.h"

#include <assert.h>
#include <inttypes.h>
#include <stdlib.h>

void al_text_init(al_text *t, char *buf, size_t cap) {
    memset(t, 0, sizeof *t);
    t->buf = buf;
    t->cap = buf ? cap : 0;
    t->nul = 1;
    if (t->cap) t->buf[0] = '\0';
}

void al_text_init_bytes(al_text *t, void *buf, size_t cap) {
    memset(t, 0, sizeof *t);
    t->buf = buf;
    t->cap = buf ? cap : 0;
}

void al_text_init_grow(al_text *t) {
    memset(t, 0, sizeof *t);
    t->nul = 1;
    t->grow = 1;
}

/* Growing: room for n more bytes and the NUL, the buffer doubling from 64 KiB. */
static int reserve(al_text *t, size_t n) {
    if (t->failed) return 0;
    if (n < t->cap - t->len) return 1;
    if (n > SIZE_MAX / 4 - t->len) {
        t->failed = 1;
        return 0;
    }
    size_t want = t->cap ? 2 * t->cap : 1 << 16;
    while (want <= t->len + n) want *= 2;
    char *q = realloc(t->buf, want);
    if (!q) {
        t->failed = 1;
        return 0;
    }
    t->buf = q;
    t->cap = want;
    return 1;
}

void al_text_put(al_text *t, const void *p, size_t n) {
    if (t->grow && !reserve(t, n)) return;
    const size_t room = t->cap - (t->nul && t->cap); /* bytes of text the buffer holds */
    if (t->len < room) {
        const size_t left = room - (size_t)t->len;
        memcpy(t->buf + t->len, p, n < left ? n : left);
    }
    t->len += n;
    if (t->nul && t->cap) t->buf[t->len < room ? t->len : room] = '\0';
}

void al_text_puts(al_text *t, const char *s) { al_text_put(t, s, strlen(s)); }

void al_text_int(al_text *t, int64_t v) {
    char buf[24];
    al_text_put(t, buf, (size_t)al_snprintf(buf, sizeof buf, "%" PRId64, v));
}

char *al_text_tail(al_text *t, size_t *room) {
    if (t->len < t->cap) {
        *room = t->cap - (size_t)t->len;
        return t->buf + t->len;
    }
    *room = 0;
    return NULL;
}

void al_text_printf(al_text *t, const char *fmt, ...) {
    assert(t->nul); /* snprintf ends what it writes with a NUL */
    va_list ap;
    if (t->grow) { /* measure, make room, then write */
        va_start(ap, fmt);
        const int n = al_vsnprintf(NULL, 0, fmt, ap);
        va_end(ap);
        if (n <= 0 || !reserve(t, (size_t)n)) return;
    }
    size_t room;
    char *tail = al_text_tail(t, &room);
    va_start(ap, fmt);
    const int n = al_vsnprintf(tail, room, fmt, ap);
    va_end(ap);
    if (n > 0) t->len += (size_t)n;
}

size_t al_utf8_char(const uint8_t *s, size_t n, uint32_t *cp) {
    const size_t len = al_json_utf8_seq_len(s, n);
    uint32_t v = len ? s[0] & (0xFFu >> (len == 1 ? 1 : len + 1)) : 0;
    for (size_t j = 1; j < len; j++) v = v << 6 | (s[j] & 0x3F);
    *cp = v;
    return len;
}

int al_hidden_char(uint32_t cp) {
    return cp < 0x20 || (cp >= 0x7F && cp < 0xA0) || (cp >= 0x200B && cp <= 0x200F) ||
           (cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2060 && cp <= 0x2069) || cp == 0xFEFF;
}

const char *al_show_bytes(char *out, size_t max, const uint8_t *s, size_t len, int cut, const char hex[16]) {
    size_t o = 0;
    for (size_t i = 0; i < len;) {
        /* One character (or one byte that starts none) as it is shown: piece[0, k). */
        uint32_t cp = 0;
        const size_t n = al_utf8_char(s + i, len - i, &cp);
        if (!n) cp = s[i];
        char piece[10];
        size_t k = 0;
        if (n && (cp == '\n' || cp == '\t' || cp == '\r')) {
            piece[k++] = '\\';
            piece[k++] = cp == '\n' ? 'n' : cp == '\t' ? 't' : 'r';
        } else if (!n || al_hidden_char(cp)) { /* \xNN; \u{NNNN} (every hidden one is <= U+FFFF) */
            const int wide = n && cp >= 0x100;
            piece[k++] = '\\';
            piece[k++] = wide ? 'u' : 'x';
            if (wide) piece[k++] = '{';
            for (int shift = wide ? 12 : 4; shift >= 0; shift -= 4) piece[k++] = hex[(cp >> shift) & 15];
            if (wide) piece[k++] = '}';
        } else {
            memcpy(piece, s + i, n);
            k = n;
        }
        if (o + k > max) {
            cut = 1;
            break;
        }
        memcpy(out + o, piece, k);
        o += k;
        i += n ? n : 1;
    }
    if (cut) {
        memcpy(out + o, "...", 3);
        o += 3;
    }
    out[o] = '\0';
    return out;
}
