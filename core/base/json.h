/* json.h — a small, strict JSON reader (RFC 8259) for the safetensors header, and the one JSON
 * string writer (safetensors and tokenizer.json files).
 * al_json_validate checks a whole text once (syntax, escapes, UTF-8, nesting depth) without
 * allocating; the cursor functions then walk the validated text value by value, so the schema
 * code in safetensors.c reads like the format it checks. Internal to the core, not public API. */
#ifndef ATTNLAB_JSON_H
#define ATTNLAB_JSON_H

#include "base/text.h"

#include <stddef.h>
#include <stdint.h>

/* Deeper than any header needs (safetensors uses 3 levels); bounds the validator's stack. */
#define JSON_MAX_DEPTH 64

typedef enum {
    JSON_END = 0, /* no value here: end of text, or a byte that cannot start one */
    JSON_OBJECT,
    JSON_ARRAY,
    JSON_STRING,
    JSON_NUMBER,
    JSON_TRUE,
    JSON_FALSE,
    JSON_NULL
} al_json_type;

/* "an object", "a number", ... for messages. */
const char *al_json_type_name(al_json_type t);

/* Checks that text[0, len) is exactly one JSON value with optional whitespace around it.
 * Returns 0 if so; otherwise -1 and a one-line reason with its byte offset in msg[cap]
 * (every reason caused by text ending too early contains "unexpected end"). */
int al_json_validate(const char *text, size_t len, char *msg, size_t cap);

/* Length of the well-formed UTF-8 sequence (RFC 3629: no overlongs, no surrogates,
 * at most U+10FFFF) starting at s[0], or 0 if s[0, n) does not start with one. */
size_t al_json_utf8_seq_len(const unsigned char *s, size_t n);

/* s[0, n) as a JSON string, as Python's json.dump writes it with ensure_ascii off (and the
 * safetensors reference writer too): " and \ escaped, the control characters as \n, \r, \t,
 * \b, \f or \u00XX (lowercase hex), every other byte as it is (the caller checks UTF-8). */
void al_json_write_string(al_text *t, const char *s, size_t n);

/* A read position in a text. The functions below never read outside [p, end); on text that
 * al_json_validate rejected they may fail (return -1 or JSON_END) but do not misbehave. */
typedef struct {
    const char *p;
    const char *end;
} al_json_cursor;

void al_json_cursor_init(al_json_cursor *c, const char *text, size_t len);

/* Skips whitespace and tells what value starts next. */
al_json_type al_json_peek(al_json_cursor *c);

/* Consumes the '{' or '[' that starts the next value. Returns 0, or -1 if none. */
int al_json_enter(al_json_cursor *c);

/* Called before each member/element of the entered container: returns 1 if one follows
 * (consuming the ',' before it), 0 once the container is closed (consuming its '}' or ']'). */
int al_json_more(al_json_cursor *c);

/* Reads a string value and decodes its escapes into UTF-8: writes the first min(len, cap)
 * bytes to dst (dst may be NULL when cap is 0), sets *len to the full decoded length and
 * *has_nul to 1 if it contains U+0000 (which C strings cannot carry). Returns 0 or -1. */
int al_json_read_string(al_json_cursor *c, char *dst, size_t cap, size_t *len, int *has_nul);

/* Reads an object key: a string as above, then the ':' after it. */
int al_json_read_key(al_json_cursor *c, char *dst, size_t cap, size_t *len, int *has_nul);

typedef enum {
    JSON_UINT_OK = 0,
    JSON_UINT_NOT_NUMBER, /* the value is not a number (nothing consumed) */
    JSON_UINT_NEGATIVE,   /* "-3" */
    JSON_UINT_FRACTION,   /* "2.5", "1e3": not written as an integer */
    JSON_UINT_TOO_LARGE   /* an integer above `max` */
} al_json_uint_result;

/* Reads a number that must be written as a plain non-negative integer no larger than max.
 * The number's text is returned in *tok / *tok_len (for messages) whenever one was read. */
al_json_uint_result al_json_read_uint(al_json_cursor *c, uint64_t max, uint64_t *out, const char **tok,
                                size_t *tok_len);

/* Reads a number (any JSON number, finite as a double) into *out, correctly rounded. 0 or -1. */
int al_json_read_number(al_json_cursor *c, double *out);

/* Reads true or false. 0 or -1. */
int al_json_read_bool(al_json_cursor *c, int *out);

/* Steps over the next value, whatever it is (objects and arrays whole; strings and keys are
 * not decoded, so this is for validated text: on other text it may step over what the reading
 * functions would refuse). 0 or -1. */
int al_json_skip(al_json_cursor *c);

#endif /* ATTNLAB_JSON_H */
