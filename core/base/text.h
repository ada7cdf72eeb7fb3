/* base/text.h — a bounded text writer (for the demos and the binding description):
 * printf-style appends into a caller's buffer that never overflow and
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
/* Where the next write goes, and *room the bytes it may use, NUL included (NULL and 0 once the
 * buffer is full): for writers that append with their own snprintf-style call, then add the
 * full length they return to t->len. */
char *al_text_tail(al_text *t, size_t *room);

/* Copies s[0, len) into out for a message: printable ASCII and well-formed UTF-8 as is, anything
 * else (control bytes, broken sequences) as \xNN with the digits hex ("0123456789abcdef" or
 * upper case: each file's messages keep theirs), so the message stays one line; cut at max
 * bytes with "..." (also when `cut` says the caller already shortened s). out holds max + 4
 * bytes. Returns out. */
const char *al_show_bytes(char *out, size_t max, const uint8_t *s, size_t len, int cut, const char hex[16]);

#endif
