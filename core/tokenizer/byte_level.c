/* byte_level.c — GPT-2's byte-level scheme (byte_level.h): ByteLevel's 256-character alphabet
 * and the split pattern, shared by the tokenizer.json encoder and the BPE trainer. */
#include "attnlab/tokenizer.h"
#include "tokenizer/byte_level.h"
#include "base/json.h"
#include "tokenizer/unicode_class.h"

/* ---- the alphabet -------------------------------------------------------------------------- */

#define N_UNPRINTED 68

static int printed(unsigned b) { return (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE; }

uint32_t al_byte_level_char(unsigned b) {
    if (printed(b)) return b;
    /* 0x00..0x20 are the first 33, 0x7F..0xA0 the next 34, 0xAD the last. */
    return 0x100 + (b <= 0x20 ? b : b <= 0xA0 ? 33 + (b - 0x7F) : 67);
}

int al_byte_level_byte(uint32_t cp) {
    if (cp < 0x100) return printed(cp) ? (int)cp : -1;
    if (cp >= 0x100 + N_UNPRINTED) return -1;
    const unsigned k = cp - 0x100;
    return (int)(k <= 32 ? k : k <= 66 ? 0x7F + (k - 33) : 0xAD);
}

size_t al_byte_level_utf8(unsigned b, char out[2]) {
    const uint32_t cp = al_byte_level_char(b);
    if (cp < 0x80) return out[0] = (char)cp, 1;
    out[0] = (char)(0xC0 | cp >> 6);
    out[1] = (char)(0x80 | (cp & 0x3F));
    return 2;
}

/* The code point of the well-formed UTF-8 character of n bytes at s. */
static uint32_t utf8_decode(const unsigned char *s, size_t n) {
    if (n == 1) return s[0];
    uint32_t cp = s[0] & (0x7Fu >> n);
    for (size_t k = 1; k < n; k++) cp = cp << 6 | (s[k] & 0x3Fu);
    return cp;
}

int64_t al_byte_level_decode(const char *s, size_t n, char *out, size_t *bad) {
    int64_t o = 0;
    for (size_t i = 0; i < n;) {
        const size_t k = al_json_utf8_seq_len((const unsigned char *)s + i, n - i);
        const int b = k ? al_byte_level_byte(utf8_decode((const unsigned char *)s + i, k)) : -1;
        if (b < 0) {
            *bad = i;
            return -1;
        }
        if (out) out[o] = (char)b;
        o++;
        i += k;
    }
    return o;
}

/* ---- the split pattern --------------------------------------------------------------------- */

/* The class of the character at s[i] and its length in bytes; a byte that is not part of
 * well-formed UTF-8 is one character of class other. */
static al_uc_class char_class(const unsigned char *s, size_t n, size_t i, size_t *len) {
    const unsigned c = s[i];
    if (c < 0x80) {
        *len = 1;
        if ((c | 0x20) >= 'a' && (c | 0x20) <= 'z') return AL_UC_LETTER;
        if (c >= '0' && c <= '9') return AL_UC_NUMBER;
        if (c == ' ' || (c >= '\t' && c <= '\r')) return AL_UC_SPACE;
        return AL_UC_OTHER;
    }
    const size_t k = al_json_utf8_seq_len(s + i, n - i);
    *len = k ? k : 1;
    return k ? al_unicode_class(utf8_decode(s + i, k)) : AL_UC_OTHER;
}

size_t al_byte_level_word_end(const unsigned char *s, size_t n, size_t i) {
    if (s[i] == '\'' && i + 1 < n) { /* the contractions, case-sensitive */
        const unsigned c = s[i + 1], d = i + 2 < n ? s[i + 2] : 0;
        if (c == 's' || c == 't' || c == 'm' || c == 'd') return i + 2;
        if ((c == 'r' && d == 'e') || (c == 'v' && d == 'e') || (c == 'l' && d == 'l')) return i + 3;
    }
    size_t k, j = i;
    al_uc_class cls = char_class(s, n, i, &k);
    if (s[i] == ' ' && i + 1 < n) { /* " ?": the space joins a run of anything but white space */
        const al_uc_class next = char_class(s, n, i + 1, &k);
        if (next != AL_UC_SPACE) cls = next, j = i + 1;
    }
    if (cls != AL_UC_SPACE) {
        while (j < n && char_class(s, n, j, &k) == cls) j += k;
        return j;
    }
    /* White space: \s+(?!\S) backs off one character when a non-space follows (that character
     * then starts the next word, with the space it may take); \s+ when the run is one. */
    size_t last = i;
    while (j < n && char_class(s, n, j, &k) == AL_UC_SPACE) last = j, j += k;
    return j < n && last > i ? last : j;
}
