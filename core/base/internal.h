/* base/internal.h — the base layer's helpers for the rest of the core (not public API): error
 * reporting, float bit access, number formatting and parsing (the core's own snprintf and
 * strtod), sorting and overflow-checked size arithmetic. No maths, no IO: every other folder may
 * include this one. */
#ifndef ATTNLAB_INTERNAL_H
#define ATTNLAB_INTERNAL_H

#include "attnlab/base.h"

#include <stdarg.h>
#include <stdint.h>
#include <string.h>

#if defined(__GNUC__)
#define AL_PRINTF(fmt_index, args_index) __attribute__((format(printf, fmt_index, args_index)))
#else
#define AL_PRINTF(fmt_index, args_index)
#endif

/* The IEEE binary32 bit pattern of f, and the float with bit pattern b (through memcpy, the
 * defined way to reinterpret bits in C). */
static inline uint32_t al_bits_of_float(float f) {
    uint32_t b;
    memcpy(&b, &f, sizeof b);
    return b;
}

static inline float al_float_of_bits(uint32_t b) {
    float f;
    memcpy(&f, &b, sizeof f);
    return f;
}

/* IEEE binary16 → binary32 bits, exact (every half is a float). Normal halves rebias the
 * exponent, 15 → 127. A subnormal half is mant · 2^-24; with its leading 1 at bit k it is
 * 1.f · 2^(k-24), a normal float with exponent field k - 24 + 127 = k + 103. */
static inline uint32_t al_f16_bits_to_f32_bits(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000) << 16;
    uint32_t exp = (uint32_t)(h >> 10) & 0x1F, mant = h & 0x3FFu;
    if (exp == 0x1F) return sign | 0x7F800000u | mant << 13; /* inf, NaN (payload kept) */
    if (exp != 0) return sign | (exp + 112) << 23 | mant << 13;
    if (mant == 0) return sign;
    int k = 9;
    while (!(mant >> k & 1)) k--;
    uint32_t frac = (mant << (10 - k)) & 0x3FFu;
    return sign | (uint32_t)(k + 103) << 23 | frac << 13;
}

/* binary32 → IEEE binary16 bits, rounded to nearest (ties to even), as torch's .half(): values
 * past the largest half (65504) become infinity, NaN stays NaN, small values become subnormal
 * halves or zero. */
static inline uint16_t al_f32_to_f16_bits(float f) {
    uint32_t x;
    memcpy(&x, &f, sizeof x);
    const uint16_t sign = (uint16_t)((x >> 16) & 0x8000);
    const uint32_t exp = (x >> 23) & 0xFF, mant = x & 0x7FFFFF;
    if (exp == 0xFF) return (uint16_t)(sign | 0x7C00 | (mant ? 0x200 | (mant >> 13) : 0)); /* inf, NaN */
    const int32_t e = (int32_t)exp - 127 + 15; /* the half's biased exponent */
    if (e >= 0x1F) return (uint16_t)(sign | 0x7C00);
    if (e <= 0) { /* subnormal half (or 0): the value (1.mant) · 2^(exp-127) in units of 2^-24 */
        if (e < -10) return sign;
        const uint32_t m = mant | 0x800000;
        const int shift = 14 - e; /* 2^(exp-127-23) / 2^-24 = 2^(e-14): drop 14 - e bits */
        uint32_t half = m >> shift;
        const uint32_t rest = m & ((1u << shift) - 1), mid = 1u << (shift - 1);
        if (rest > mid || (rest == mid && (half & 1))) half++;
        return (uint16_t)(sign | half);
    }
    uint32_t half = (uint32_t)e << 10 | mant >> 13;
    const uint32_t rest = mant & 0x1FFF;
    if (rest > 0x1000 || (rest == 0x1000 && (half & 1))) half++; /* may carry into the exponent: right */
    return (uint16_t)(sign | half);
}

/* Fills err (if not NULL) with status and a printf-style one-line message; returns status so
 * callers can write `return al_fail(err, AL_ERR_SHAPE, "...", ...);`. */
al_status al_fail(al_error *err, al_status status, const char *fmt, ...) AL_PRINTF(3, 4);
/* Clears err (if not NULL) to AL_OK and an empty message; returns AL_OK, for the success path of
 * a call that promises a cleared err: `return al_ok(err);`. */
al_status al_ok(al_error *err);
/* A failure `status` (AL_OK passes through) recorded as being in `file`: err->file, for a
 * call that reads more than one file. */
al_status al_fail_in(al_error *err, al_file_role file, al_status status);

/* Parses the whole string as one finite decimal number, correctly rounded (the grammar of
 * al_decimal_parse below: no spaces, hex, inf or nan); 0 on anything else or on overflow. */
int al_parse_finite(const char *s, double *out);

/* ---- Formatting (print.c): snprintf / vsnprintf with C99 semantics — the full length is
 * returned, at most cap-1 bytes are stored and then a NUL (when cap > 0). Supported: flags
 * - + space # 0, width and precision (also *), conversions d i u x X (with the lengths hh h l
 * ll z j t), c s, f F e E g G, and %%. Any other conversion is written out as text, together
 * with the rest of the format, and no further argument is read. Floating-point values are
 * printed exactly, correctly rounded (ties to even), as glibc prints them. */
int al_snprintf(char *buf, size_t cap, const char *fmt, ...) AL_PRINTF(3, 4);
int al_vsnprintf(char *buf, size_t cap, const char *fmt, va_list ap) AL_PRINTF(3, 0);

/* v with the fewest significant digits that read back as v (as Python's repr chooses them),
 * written to buf and returned: for showing a number as the user gave it. */
#define AL_SHORTEST_MAX 32
const char *al_format_shortest(char buf[AL_SHORTEST_MAX], double v);
/* The same for a float32 value (1e-6f shows as 1e-06, not 9.99999997e-07). */
const char *al_format_shortest_f32(char buf[AL_SHORTEST_MAX], float v);

/* ---- Exact decimal conversion (decimal.c).
 * A decimal 0.d₁d₂…d_count × 10^exponent: ASCII digits, d₁ ≠ '0' and no trailing zeros, so
 * count = 0 means zero. A double's exact expansion has at most 767 digits. */
#define AL_DECIMAL_DIGITS 800
typedef struct {
    char digit[AL_DECIMAL_DIGITS];
    int count;
    int exponent;
} al_decimal;
/* The exact value of |v| (v finite); zero gives count 0 and exponent 1. */
void al_decimal_from_double(al_decimal *d, double v);
/* Rounds to the first `keep` digits (ties to even). keep = 0 rounds to the unit just above d₁
 * (zero, or that unit: the exponent grows by one, as it does when 9s carry); keep < 0 gives
 * zero. */
void al_decimal_round(al_decimal *d, int keep);
/* Reads [+-] digits [. digits] [(e|E) [+-] digits] (at least one mantissa digit) at the start
 * of s into the nearest double (ties to even; ±infinity beyond the largest double, ±0 or a
 * subnormal below the smallest normal); returns the end of the number, or NULL if s does not
 * start with one. */
const char *al_decimal_parse(const char *s, double *out);

/* Sorts n elements of `size` bytes in place (heapsort, sort.c): O(n log n) in every case, no
 * allocation. Not stable: give cmp a tie-break where the order of equal elements matters. */
void al_sort(void *array, size_t n, size_t size, int (*cmp)(const void *, const void *));

/* a·b into *out; returns 0 (and leaves *out alone) if it overflows or an input is negative. */
int al_mul_ok(int64_t a, int64_t b, int64_t *out);

#endif
