/* messages.c — the commands' one-line messages: user text shown safely (quoted, control bytes
 * and broken UTF-8 escaped, cut to a length), cli_error's "attnlab: ..." line. */
#include "cli/cli.h"
#include "base/internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* ---- messages ------------------------------------------------------------------------------- */

enum { SHOW_MAX = 160, MESSAGE_MAX = 1024 };

size_t cli_utf8_len(const unsigned char *s, size_t n, uint32_t *cp) {
    if (s[0] < 0x80) return *cp = s[0], 1;
    size_t len = s[0] >= 0xF0 && s[0] <= 0xF4 ? 4 : s[0] >= 0xE0 ? 3 : s[0] >= 0xC2 && s[0] < 0xE0 ? 2 : 0;
    if (!len || len > n) return 0;
    uint32_t v = s[0] & (0xFF >> (len + 1));
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80) return 0;
        v = v << 6 | (s[i] & 0x3F);
    }
    static const uint32_t min[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (v < min[len] || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) return 0;
    *cp = v;
    return len;
}

int cli_hidden_char(uint32_t cp) {
    return cp < 0x20 || (cp >= 0x7F && cp < 0xA0) || (cp >= 0x200B && cp <= 0x200F) ||
           (cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2060 && cp <= 0x2069) || cp == 0xFEFF;
}

/* Appends s[0, n) to out[cap] with every hidden character and every byte that is not UTF-8
 * escaped (\n, \xNN, \u{NNNN}); stops at `limit` bytes of output and adds "...". */
static void escape_into(char *out, size_t cap, const char *s, size_t n, size_t limit) {
    size_t o = strlen(out);
    const unsigned char *u = (const unsigned char *)s;
    for (size_t i = 0; i < n;) {
        char piece[16];
        uint32_t cp = 0;
        size_t len = cli_utf8_len(u + i, n - i, &cp);
        if (len == 0) snprintf(piece, sizeof piece, "\\x%02X", u[i]), len = 1;
        else if (cp == '\n') snprintf(piece, sizeof piece, "\\n");
        else if (cp == '\t') snprintf(piece, sizeof piece, "\\t");
        else if (cp == '\r') snprintf(piece, sizeof piece, "\\r");
        else if (cli_hidden_char(cp)) snprintf(piece, sizeof piece, cp < 0x100 ? "\\x%02X" : "\\u{%04X}", (unsigned)cp);
        else memcpy(piece, s + i, len), piece[len] = '\0';
        const size_t plen = strlen(piece);
        if (o + plen + 4 > cap || o + plen > limit) {
            if (o + 4 <= cap) memcpy(out + o, "...", 4), o += 3;
            return;
        }
        memcpy(out + o, piece, plen + 1);
        o += plen;
        i += len;
    }
}

const char *cli_show(const char *s) {
    /* A few rotating buffers: one message may show several arguments. */
    static char bufs[4][4 * SHOW_MAX + 8];
    static int next;
    char *out = bufs[next++ % 4];
    out[0] = '\0';
    if (!s) return "(none)";
    escape_into(out, sizeof bufs[0], s, strlen(s), SHOW_MAX);
    return out;
}

void cli_error(const char *fmt, ...) {
    char text[MESSAGE_MAX], line[MESSAGE_MAX + 16] = "";
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    escape_into(line, sizeof line, text, strlen(text), MESSAGE_MAX - 32); /* still one line */
    fprintf(stderr, "attnlab: %s\n", line);
}
