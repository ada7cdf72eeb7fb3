/* messages.c — the commands' one-line messages: user text shown safely (quoted, control bytes
 * and broken UTF-8 escaped, cut to a length), cli_error's "attnlab: ..." line. */
#include "cli/cli.h"
#include "base/internal.h"
#include "base/text.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* ---- messages ------------------------------------------------------------------------------- */

enum { SHOW_MAX = 160, MESSAGE_MAX = 1024 };
static const char HEX[] = "0123456789ABCDEF"; /* \xNN and \u{NNNN} in upper case */

const char *cli_show(const char *s) {
    /* A few rotating buffers: one message may show several arguments. */
    static char bufs[4][SHOW_MAX + 4];
    static int next;
    if (!s) return "(none)";
    return al_show_bytes(bufs[next++ % 4], SHOW_MAX, (const uint8_t *)s, strlen(s), 0, HEX);
}

void cli_error(const char *fmt, ...) {
    char text[MESSAGE_MAX], line[MESSAGE_MAX + 4];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    fprintf(stderr, "attnlab: %s\n", al_show_bytes(line, MESSAGE_MAX, (const uint8_t *)text, strlen(text), 0, HEX));
}
