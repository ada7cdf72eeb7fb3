/* base/text.h — the core's one text writer, and message quoting. The writer appends to a
 * buffer in one of three ways: bounded (a caller's buffer that never overflows, kept
 * NUL-terminated, the full length still counted, so one pass can both measure and fill: the
 * snprintf convention over many calls), counting bytes (a caller's buffer, or none, filled
 * without a NUL: the same code measures and writes a file image), or growing (a malloc'd
 * buffer, NUL-terminated, that grows to hold everything). */
#ifndef ATTNLAB_TEXT_H
#define ATTNLAB_TEXT_H

#include "base/internal.h"

typedef struct {
    char *buf;    /* the caller's buffer or the writer's own (growing); NULL when cap is 0 */
    size_t cap;   /* its capacity in bytes, the NUL's included when the text keeps one */
    uint64_t len; /* length the full text has so far (beyond cap once a bounded buffer is full) */
    int nul;      /* 1: the text in buf is kept NUL-terminated (bounded text, growing) */
    int grow;     /* 1: buf is malloc'd and grows (free it with free()) */
    int failed;   /* growing: memory ran out; the text is incomplete and len stopped */
} al_text;

/* Bounded text in buf[cap] (cap includes the NUL; buf may be NULL when cap is 0: counting). */
void al_text_init(al_text *t, char *buf, size_t cap);
/* Bytes in buf[cap], no NUL (buf NULL: only counts); a piece past the end is cut. */
void al_text_init_bytes(al_text *t, void *buf, size_t cap);
/* A growing text, NUL-terminated; the caller frees t->buf. */
void al_text_init_grow(al_text *t);

void al_text_put(al_text *t, const void *p, size_t n);
void al_text_puts(al_text *t, const char *s);
/* v in decimal. */
void al_text_int(al_text *t, int64_t v);
/* printf-style, through al_snprintf: for a writer that keeps a NUL (bounded or growing). */
void al_text_printf(al_text *t, const char *fmt, ...) AL_PRINTF(2, 3);
/* Where the next write goes, and *room the bytes it may use, NUL included (NULL and 0 once the
 * buffer is full): for writers that append with their own snprintf-style call, then add the
 * full length they return to t->len. For a bounded text only. */
char *al_text_tail(al_text *t, size_t *room);

/* The length of the well-formed UTF-8 character at s (at most n bytes) with its code point in
 * *cp, or 0 if none starts there (al_json_utf8_seq_len's rules). */
size_t al_utf8_char(const uint8_t *s, size_t n, uint32_t *cp);

/* Characters that would break a message's one line or change how a terminal shows it: C0 and C1
 * controls, DEL, and the invisible format characters (bidirectional overrides and isolates,
 * zero-width characters, the BOM). */
int al_hidden_char(uint32_t cp);

/* Copies s[0, len) into out for a message: well-formed UTF-8 as is, but \n, \t and \r named,
 * the other hidden characters as \xNN (below U+0100) or \u{NNNN}, and bytes that are not UTF-8
 * as \xNN, the digits hex ("0123456789abcdef" or upper case: each caller's messages keep
 * theirs), so the message stays one line and shows what it holds; cut at max bytes with "..."
 * (also when `cut` says the caller already shortened s). out holds max + 4 bytes. Returns out. */
const char *al_show_bytes(char *out, size_t max, const uint8_t *s, size_t len, int cut, const char hex[16]);

#endif
