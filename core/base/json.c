/* json.c — strict JSON (RFC 8259) for the safetensors header: one validating pass that needs no
 * memory (an explicit stack of JSON_MAX_DEPTH containers instead of recursion, so a hostile
 * header cannot exhaust the C stack), and a cursor that decodes strings and integers on demand.
 * Strings are checked byte by byte for UTF-8 validity, since names end up in messages and UIs. */
#include "base/json.h"
#include "base/internal.h"

#include <math.h>
#include <stdarg.h>
#include <string.h>

const char *al_json_type_name(al_json_type t) {
    switch (t) {
    case JSON_OBJECT: return "an object";
    case JSON_ARRAY: return "an array";
    case JSON_STRING: return "a string";
    case JSON_NUMBER: return "a number";
    case JSON_TRUE: return "true";
    case JSON_FALSE: return "false";
    case JSON_NULL: return "null";
    case JSON_END: break;
    }
    return "nothing";
}

static int is_ws(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
static int is_digit(char c) { return c >= '0' && c <= '9'; }

static const char *skip_ws(const char *p, const char *end) {
    while (p < end && is_ws(*p)) p++;
    return p;
}

size_t al_json_utf8_seq_len(const unsigned char *s, size_t n) {
    if (n == 0) return 0;
    unsigned c = s[0];
    if (c < 0x80) return 1;
    /* The second byte's range carries the rules: E0 needs A0.. (no overlong 3-byte forms),
     * ED stops at 9F (no UTF-16 surrogates), F0 needs 90.. and F4 stops at 8F (<= U+10FFFF). */
    unsigned lo = 0x80, hi = 0xBF;
    size_t len;
    if (c >= 0xC2 && c <= 0xDF) len = 2;
    else if (c >= 0xE0 && c <= 0xEF) {
        len = 3;
        if (c == 0xE0) lo = 0xA0;
        if (c == 0xED) hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
        len = 4;
        if (c == 0xF0) lo = 0x90;
        if (c == 0xF4) hi = 0x8F;
    } else {
        return 0; /* continuation byte, C0/C1 (overlong), or F5..FF */
    }
    if (n < len) return 0;
    if (s[1] < lo || s[1] > hi) return 0;
    for (size_t i = 2; i < len; i++)
        if (s[i] < 0x80 || s[i] > 0xBF) return 0;
    return len;
}

/* ---- strings ------------------------------------------------------------------------------ */

typedef enum {
    STR_OK = 0,
    STR_EOF,        /* text ended inside the string */
    STR_CONTROL,    /* raw byte < 0x20 */
    STR_BAD_ESCAPE, /* backslash followed by a letter JSON does not define */
    STR_BAD_U,      /* \u not followed by four hex digits */
    STR_SURROGATE,  /* \uD800..\uDFFF not forming a high+low pair */
    STR_BAD_UTF8
} str_result;

static int hex4(const char *p, const char *end, unsigned *out) {
    if (end - p < 4) return -1;
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        char c = p[i];
        unsigned d;
        if (c >= '0' && c <= '9') d = (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f') d = (unsigned)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F') d = (unsigned)(c - 'A' + 10);
        else return -1;
        v = v << 4 | d;
    }
    *out = v;
    return 0;
}

/* RFC 8259's two-character escapes, each as the byte it stands for and the letter after the
 * backslash; the reader and the writer share them (\/ is read, but never needed when writing). */
static const char SHORT_ESCAPES[] = "\"\"\\\\\bb\ff\nn\rr\tt";

/* The byte that "\<letter>" stands for, or -1 if the letter is not a short escape. */
static int unescape(char letter) {
    if (letter == '/') return '/';
    for (size_t i = 1; i < sizeof SHORT_ESCAPES - 1; i += 2)
        if (SHORT_ESCAPES[i] == letter) return (unsigned char)SHORT_ESCAPES[i - 1];
    return -1;
}

void al_json_write_string(al_text *t, const char *s, size_t n) {
    al_text_put(t, "\"", 1);
    for (size_t i = 0; i < n; i++) {
        const unsigned char c = (unsigned char)s[i];
        size_t k = 0;
        while (k < sizeof SHORT_ESCAPES - 1 && (unsigned char)SHORT_ESCAPES[k] != c) k += 2;
        if (k < sizeof SHORT_ESCAPES - 1) {
            const char esc[2] = {'\\', SHORT_ESCAPES[k + 1]};
            al_text_put(t, esc, 2);
        } else if (c < 0x20) {
            char buf[8];
            al_text_put(t, buf, (size_t)al_snprintf(buf, sizeof buf, "\\u%04x", c));
        } else {
            al_text_put(t, s + i, 1);
        }
    }
    al_text_put(t, "\"", 1);
}

typedef struct {
    char *dst;
    size_t cap, len;
    int has_nul;
} str_out;

static void put_byte(str_out *o, unsigned char b) {
    if (o->len < o->cap) o->dst[o->len] = (char)b;
    o->len++;
    if (b == 0) o->has_nul = 1;
}

static void put_code_point(str_out *o, unsigned cp) {
    if (cp < 0x80) {
        put_byte(o, (unsigned char)cp);
    } else if (cp < 0x800) {
        put_byte(o, (unsigned char)(0xC0 | cp >> 6));
        put_byte(o, (unsigned char)(0x80 | (cp & 0x3F)));
    } else if (cp < 0x10000) {
        put_byte(o, (unsigned char)(0xE0 | cp >> 12));
        put_byte(o, (unsigned char)(0x80 | (cp >> 6 & 0x3F)));
        put_byte(o, (unsigned char)(0x80 | (cp & 0x3F)));
    } else {
        put_byte(o, (unsigned char)(0xF0 | cp >> 18));
        put_byte(o, (unsigned char)(0x80 | (cp >> 12 & 0x3F)));
        put_byte(o, (unsigned char)(0x80 | (cp >> 6 & 0x3F)));
        put_byte(o, (unsigned char)(0x80 | (cp & 0x3F)));
    }
}

/* *pp points at the opening quote; on STR_OK it is moved past the closing one. On failure
 * *bad points at the offending byte (or the escape that starts the problem). */
static str_result scan_string(const char **pp, const char *end, str_out *o, const char **bad) {
    const char *p = *pp + 1;
    for (;;) {
        if (p >= end) { *bad = p; return STR_EOF; }
        unsigned char c = (unsigned char)*p;
        if (c == '"') break;
        if (c < 0x20) { *bad = p; return STR_CONTROL; }
        if (c == '\\') {
            *bad = p;
            if (end - p < 2) return STR_EOF;
            char e = p[1];
            p += 2;
            if (e != 'u') {
                const int b = unescape(e);
                if (b < 0) return STR_BAD_ESCAPE;
                put_byte(o, (unsigned char)b);
                continue;
            }
            unsigned cp;
            if (hex4(p, end, &cp) != 0) return end - p < 4 ? STR_EOF : STR_BAD_U;
            p += 4;
            if (cp >= 0xDC00 && cp <= 0xDFFF) return STR_SURROGATE;
            if (cp >= 0xD800 && cp <= 0xDBFF) {
                /* UTF-16 escapes a code point above U+FFFF as a high then a low surrogate:
                 * cp = 0x10000 + (high - 0xD800) * 0x400 + (low - 0xDC00). */
                unsigned lo;
                if (end - p >= 2 && p[0] == '\\' && p[1] == 'u') {
                    if (hex4(p + 2, end, &lo) != 0)
                        return end - p < 6 ? STR_EOF : STR_BAD_U;
                    if (lo < 0xDC00 || lo > 0xDFFF) return STR_SURROGATE;
                    p += 6;
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                } else {
                    return end - p < 2 && (p == end || p[0] == '\\') ? STR_EOF
                                                                     : STR_SURROGATE;
                }
            }
            put_code_point(o, cp);
            continue;
        }
        size_t n = al_json_utf8_seq_len((const unsigned char *)p, (size_t)(end - p));
        if (n == 0) {
            *bad = p;
            /* A sequence that is fine so far but cut by the end of the text is a truncation. */
            size_t avail = (size_t)(end - p);
            if (c >= 0xC2 && c <= 0xF4 && avail < 4) {
                size_t need = c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
                if (avail < need) {
                    unsigned char tmp[4] = {c, 0x80, 0x80, 0x80};
                    if (c == 0xE0) tmp[1] = 0xA0;
                    if (c == 0xF0) tmp[1] = 0x90;
                    memcpy(tmp, p, avail);
                    if (al_json_utf8_seq_len(tmp, need) == need) return STR_EOF;
                }
            }
            return STR_BAD_UTF8;
        }
        for (size_t i = 0; i < n; i++) put_byte(o, (unsigned char)p[i]);
        p += n;
    }
    *pp = p + 1;
    return STR_OK;
}

/* ---- numbers ------------------------------------------------------------------------------ */

/* number = [-] (0 | [1-9][0-9]*) [. [0-9]+] [(e|E) [+|-] [0-9]+]. Returns NULL if well-formed
 * (and moves *pp past it), else a reason; *bad is where it went wrong. */
static const char *scan_number(const char **pp, const char *end, const char **bad) {
    const char *p = *pp;
    if (p < end && *p == '-') p++;
    if (p >= end) { *bad = p; return "unexpected end of text inside a number"; }
    if (*p == '0') {
        p++;
        if (p < end && is_digit(*p)) { *bad = p; return "invalid number (leading zero)"; }
    } else if (is_digit(*p)) {
        while (p < end && is_digit(*p)) p++;
    } else {
        *bad = p;
        return "invalid number (no digits)";
    }
    if (p < end && *p == '.') {
        p++;
        if (p >= end) { *bad = p; return "unexpected end of text inside a number"; }
        if (!is_digit(*p)) { *bad = p; return "invalid number (no digits after '.')"; }
        while (p < end && is_digit(*p)) p++;
    }
    if (p < end && (*p == 'e' || *p == 'E')) {
        p++;
        if (p < end && (*p == '+' || *p == '-')) p++;
        if (p >= end) { *bad = p; return "unexpected end of text inside a number"; }
        if (!is_digit(*p)) { *bad = p; return "invalid number (no digits in the exponent)"; }
        while (p < end && is_digit(*p)) p++;
    }
    *pp = p;
    return NULL;
}

/* ---- validation --------------------------------------------------------------------------- */

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static int fail(char *msg, size_t cap, const char *fmt, ...) {
    if (msg && cap) {
        va_list ap;
        va_start(ap, fmt);
        al_vsnprintf(msg, cap, fmt, ap);
        va_end(ap);
    }
    return -1;
}

/* "'x'" for a printable ASCII byte, "byte 0xNN" otherwise. */
static const char *describe(char c, char buf[16]) {
    unsigned char u = (unsigned char)c;
    if (u > 0x20 && u < 0x7F) al_snprintf(buf, 16, "'%c'", c);
    else al_snprintf(buf, 16, "byte 0x%02x", u);
    return buf;
}

static al_json_type type_at(const char *p, const char *end) {
    if (p >= end) return JSON_END;
    switch (*p) {
    case '{': return JSON_OBJECT;
    case '[': return JSON_ARRAY;
    case '"': return JSON_STRING;
    case 't': return JSON_TRUE;
    case 'f': return JSON_FALSE;
    case 'n': return JSON_NULL;
    default: return (*p == '-' || is_digit(*p)) ? JSON_NUMBER : JSON_END;
    }
}

static int check_string(const char **pp, const char *end, const char *text, char *msg,
                        size_t cap) {
    const char *start = *pp, *bad = start;
    str_out o = {NULL, 0, 0, 0};
    char d[16];
    switch (scan_string(pp, end, &o, &bad)) {
    case STR_OK: return 0;
    case STR_EOF:
        return fail(msg, cap, "unexpected end of text inside the string that starts at byte %zu",
                    (size_t)(start - text));
    case STR_CONTROL:
        return fail(msg, cap, "unescaped control character 0x%02x in a string at byte %zu",
                    (unsigned char)*bad, (size_t)(bad - text));
    case STR_BAD_ESCAPE:
        return fail(msg, cap, "invalid escape '\\%c' at byte %zu",
                    (unsigned char)bad[1] > 0x20 && (unsigned char)bad[1] < 0x7F ? bad[1] : '?',
                    (size_t)(bad - text));
    case STR_BAD_U:
        return fail(msg, cap, "invalid \\u escape (needs 4 hex digits) at byte %zu",
                    (size_t)(bad - text));
    case STR_SURROGATE:
        return fail(msg, cap, "unpaired surrogate in a \\u escape at byte %zu",
                    (size_t)(bad - text));
    case STR_BAD_UTF8:
        return fail(msg, cap, "invalid UTF-8 %s in a string at byte %zu", describe(*bad, d),
                    (size_t)(bad - text));
    }
    return -1;
}

int al_json_validate(const char *text, size_t len, char *msg, size_t cap) {
    const char *p = text, *end = text + len;
    /* Containers still open: 1 for an object, 0 for an array. */
    unsigned char open[JSON_MAX_DEPTH];
    int depth = 0;
    enum { WANT_VALUE, WANT_KEY, AFTER_VALUE } state = WANT_VALUE;
    char d[16];

    if (msg && cap) msg[0] = '\0';
    for (;;) {
        p = skip_ws(p, end);
        if (state == AFTER_VALUE && depth == 0) {
            if (p != end)
                return fail(msg, cap, "unexpected %s after the top-level value at byte %zu",
                            describe(*p, d), (size_t)(p - text));
            return 0;
        }
        if (p >= end) return fail(msg, cap, "unexpected end of text at byte %zu", len);

        if (state == AFTER_VALUE) {
            char closer = open[depth - 1] ? '}' : ']';
            if (*p == ',') {
                p++;
                state = open[depth - 1] ? WANT_KEY : WANT_VALUE;
            } else if (*p == closer) {
                p++;
                depth--;
            } else {
                return fail(msg, cap, "expected ',' or '%c' but found %s at byte %zu", closer,
                            describe(*p, d), (size_t)(p - text));
            }
            continue;
        }

        if (state == WANT_KEY) {
            if (*p != '"')
                return fail(msg, cap, "expected a string key but found %s at byte %zu",
                            describe(*p, d), (size_t)(p - text));
            if (check_string(&p, end, text, msg, cap) != 0) return -1;
            p = skip_ws(p, end);
            if (p >= end) return fail(msg, cap, "unexpected end of text at byte %zu", len);
            if (*p != ':')
                return fail(msg, cap, "expected ':' after a key but found %s at byte %zu",
                            describe(*p, d), (size_t)(p - text));
            p++;
            state = WANT_VALUE;
            continue;
        }

        /* WANT_VALUE */
        const char *start = p, *bad = p;
        switch (type_at(p, end)) {
        case JSON_OBJECT:
        case JSON_ARRAY: {
            if (depth == JSON_MAX_DEPTH)
                return fail(msg, cap, "nested deeper than %d levels at byte %zu", JSON_MAX_DEPTH,
                            (size_t)(p - text));
            int is_obj = *p == '{';
            p = skip_ws(p + 1, end);
            if (p < end && *p == (is_obj ? '}' : ']')) {
                p++;
                state = AFTER_VALUE;
            } else {
                open[depth++] = (unsigned char)is_obj;
                state = is_obj ? WANT_KEY : WANT_VALUE;
            }
            continue;
        }
        case JSON_STRING:
            if (check_string(&p, end, text, msg, cap) != 0) return -1;
            break;
        case JSON_NUMBER: {
            const char *why = scan_number(&p, end, &bad);
            if (why)
                return fail(msg, cap, "%s at byte %zu", why, (size_t)(bad - text));
            break;
        }
        case JSON_TRUE:
        case JSON_FALSE:
        case JSON_NULL: {
            const char *word = *p == 't' ? "true" : *p == 'f' ? "false" : "null";
            size_t n = strlen(word), avail = (size_t)(end - p), i = 0;
            while (i < n && i < avail && p[i] == word[i]) i++;
            if (i == avail && i < n)
                return fail(msg, cap, "unexpected end of text inside '%s' at byte %zu", word,
                            (size_t)(start - text));
            if (i < n)
                return fail(msg, cap, "unexpected %s at byte %zu", describe(p[i], d),
                            (size_t)(p + i - text));
            p += n;
            break;
        }
        case JSON_END:
            return fail(msg, cap, "unexpected %s at byte %zu", describe(*p, d),
                        (size_t)(p - text));
        }
        state = AFTER_VALUE;
    }
}

/* ---- cursor ------------------------------------------------------------------------------- */

void al_json_cursor_init(al_json_cursor *c, const char *text, size_t len) {
    c->p = text;
    c->end = text + len;
}

al_json_type al_json_peek(al_json_cursor *c) {
    c->p = skip_ws(c->p, c->end);
    return type_at(c->p, c->end);
}

int al_json_enter(al_json_cursor *c) {
    al_json_type t = al_json_peek(c);
    if (t != JSON_OBJECT && t != JSON_ARRAY) return -1;
    c->p++;
    return 0;
}

int al_json_more(al_json_cursor *c) {
    c->p = skip_ws(c->p, c->end);
    if (c->p >= c->end) return 0;
    if (*c->p == '}' || *c->p == ']') {
        c->p++;
        return 0;
    }
    if (*c->p == ',') c->p++;
    return 1;
}

int al_json_read_string(al_json_cursor *c, char *dst, size_t cap, size_t *len, int *has_nul) {
    str_out o = {dst, dst ? cap : 0, 0, 0};
    const char *bad;
    if (al_json_peek(c) != JSON_STRING) return -1;
    if (scan_string(&c->p, c->end, &o, &bad) != STR_OK) return -1;
    *len = o.len;
    *has_nul = o.has_nul;
    return 0;
}

int al_json_read_key(al_json_cursor *c, char *dst, size_t cap, size_t *len, int *has_nul) {
    if (al_json_read_string(c, dst, cap, len, has_nul) != 0) return -1;
    c->p = skip_ws(c->p, c->end);
    if (c->p >= c->end || *c->p != ':') return -1;
    c->p++;
    return 0;
}

al_json_uint_result al_json_read_uint(al_json_cursor *c, uint64_t max, uint64_t *out, const char **tok,
                                size_t *tok_len) {
    const char *bad;
    if (al_json_peek(c) != JSON_NUMBER) return JSON_UINT_NOT_NUMBER;
    const char *start = c->p;
    if (scan_number(&c->p, c->end, &bad) != NULL) return JSON_UINT_NOT_NUMBER;
    *tok = start;
    *tok_len = (size_t)(c->p - start);
    if (*start == '-') return JSON_UINT_NEGATIVE;
    uint64_t v = 0;
    for (const char *q = start; q < c->p; q++) {
        if (!is_digit(*q)) return JSON_UINT_FRACTION;
        unsigned dgt = (unsigned)(*q - '0');
        /* v * 10 + dgt <= max  <=>  v <= (max - dgt) / 10, checked before it can wrap. */
        if (dgt > max || v > (max - dgt) / 10) {
            /* Still classify "1e999" or "123456789012345678901.5" as non-integers first. */
            for (const char *r = q; r < c->p; r++)
                if (!is_digit(*r)) return JSON_UINT_FRACTION;
            return JSON_UINT_TOO_LARGE;
        }
        v = v * 10 + dgt;
    }
    *out = v;
    return JSON_UINT_OK;
}

int al_json_read_number(al_json_cursor *c, double *out) {
    const char *bad;
    if (al_json_peek(c) != JSON_NUMBER) return -1;
    const char *start = c->p;
    if (scan_number(&c->p, c->end, &bad) != NULL) return -1;
    /* The JSON grammar of a number is a subset of al_decimal_parse's: it reads the same text. */
    double v;
    const char *end = al_decimal_parse(start, &v);
    if (end != c->p || !isfinite(v)) return -1;
    *out = v;
    return 0;
}

int al_json_read_bool(al_json_cursor *c, int *out) {
    const al_json_type t = al_json_peek(c);
    if (t != JSON_TRUE && t != JSON_FALSE) return -1;
    c->p += t == JSON_TRUE ? 4 : 5;
    *out = t == JSON_TRUE;
    return 0;
}

/* Steps over a string without decoding it: on validated text only a quote ends one, and an
 * escape's second byte (or \u's hex digits) is never a quote or a backslash that counts. */
static int skip_string(al_json_cursor *c) {
    for (const char *p = c->p + 1; p < c->end; p++) {
        if (*p == '"') {
            c->p = p + 1;
            return 0;
        }
        if (*p == '\\') p++;
    }
    return -1;
}

int al_json_skip(al_json_cursor *c) {
    const char *bad;
    switch (al_json_peek(c)) {
    case JSON_OBJECT:
    case JSON_ARRAY: {
        const int object = *c->p == '{';
        if (al_json_enter(c) != 0) return -1;
        while (al_json_more(c)) {
            if (object) { /* the key, undecoded, and its ':' */
                if (al_json_peek(c) != JSON_STRING || skip_string(c) != 0) return -1;
                c->p = skip_ws(c->p, c->end);
                if (c->p >= c->end || *c->p != ':') return -1;
                c->p++;
            }
            if (al_json_skip(c) != 0) return -1; /* depth bounded by the validated text */
        }
        return 0;
    }
    case JSON_STRING: return skip_string(c);
    case JSON_NUMBER: return scan_number(&c->p, c->end, &bad) != NULL ? -1 : 0;
    case JSON_TRUE: c->p += 4; return 0;
    case JSON_FALSE: c->p += 5; return 0;
    case JSON_NULL: c->p += 4; return 0;
    default: return -1;
    }
}
