/* decimal.c — exact conversion between binary64 doubles and decimal text, for the core's own
 * printf (print.c) and number parsing (al_parse_finite), so that the core needs neither libc's
 * printf family nor strtod.
 *
 * Both directions are exact. A double is m·2^e, whose decimal expansion is finite (767
 * significant digits at most), so formatting computes all of it with a small big integer and
 * rounds the digit string. Parsing compares the decimal value with the midpoints between
 * neighbouring doubles, again with exact big integers. Rounding is to nearest, ties to even,
 * which is what glibc's printf and strtod (and Python's float formatting) do. */
#include "base/internal.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

/* ---- Big unsigned integers in base 10^9 ---------------------------------------------------
 * limb[0] is the least significant limb; n limbs are in use, the top one nonzero (n = 0 is
 * zero). Base 10^9 makes the decimal digits free to read off, and a limb times any factor below
 * 2^32, plus a carry, stays below 10^9·2^32 + 2^32 < 2^64.
 *
 * Sizes: formatting builds m·5^1074 < 10^767 at most (86 limbs); parsing compares numbers of at
 * most ~805 digits (see compare_with_midpoint_above). 100 limbs hold 900 digits. */

#define BIG_BASE 1000000000u
#define BIG_BASE_DIGITS 9
#define BIG_LIMBS 100

typedef struct {
    uint32_t limb[BIG_LIMBS];
    int n;
} big_uint;

static void big_set_u64(big_uint *b, uint64_t v) {
    b->n = 0;
    for (; v != 0; v /= BIG_BASE) b->limb[b->n++] = (uint32_t)(v % BIG_BASE);
}

/* b = b·factor + addend, with addend < 10^9. The top limb stays nonzero: a nonzero product is at
 * least the old top limb, and a carry out of it becomes the new top limb. */
static void big_mul_add(big_uint *b, uint32_t factor, uint32_t addend) {
    uint64_t carry = addend;
    for (int i = 0; i < b->n; i++) {
        uint64_t p = (uint64_t)b->limb[i] * factor + carry;
        b->limb[i] = (uint32_t)(p % BIG_BASE);
        carry = p / BIG_BASE;
    }
    /* The sizes above keep n below BIG_LIMBS; the n < BIG_LIMBS test only guards the array. */
    for (; carry != 0 && b->n < BIG_LIMBS; carry /= BIG_BASE)
        b->limb[b->n++] = (uint32_t)(carry % BIG_BASE);
}

/* b·5^k, 5^13 (the largest power of 5 below 2^32) at a time. */
static void big_mul_pow5(big_uint *b, int k) {
    static const uint32_t pow5[13] = {1,       5,       25,       125,       625,
                                      3125,    15625,   78125,    390625,    1953125,
                                      9765625, 48828125, 244140625};
    for (; k >= 13; k -= 13) big_mul_add(b, 1220703125u, 0);
    if (k > 0) big_mul_add(b, pow5[k], 0);
}

/* b·2^k, 2^31 at a time. */
static void big_mul_pow2(big_uint *b, int k) {
    for (; k >= 31; k -= 31) big_mul_add(b, 1u << 31, 0);
    if (k > 0) big_mul_add(b, 1u << k, 0);
}

static int big_compare(const big_uint *a, const big_uint *b) {
    if (a->n != b->n) return a->n < b->n ? -1 : 1;
    for (int i = a->n - 1; i >= 0; i--)
        if (a->limb[i] != b->limb[i]) return a->limb[i] < b->limb[i] ? -1 : 1;
    return 0;
}

/* The integer whose decimal digits are digit[0..count) (ASCII, most significant first). */
static void big_from_digits(big_uint *b, const char *digit, int count) {
    b->n = 0;
    for (int i = 0; i < count;) {
        uint32_t chunk = 0, scale = 1;
        for (int k = 0; k < BIG_BASE_DIGITS && i < count; k++, i++) {
            chunk = chunk * 10 + (uint32_t)(digit[i] - '0');
            scale *= 10;
        }
        big_mul_add(b, scale, chunk);
    }
}

/* ---- The bits of a double -----------------------------------------------------------------
 * A finite double x ≥ 0 is M·2^k with M < 2^53 and k ≥ -1074 (subnormals have M < 2^52 and
 * k = -1074). Neighbouring non-negative doubles have neighbouring bit patterns. */

static uint64_t bits_of_double(double x) {
    uint64_t bits;
    memcpy(&bits, &x, sizeof bits);
    return bits;
}

static double double_of_bits(uint64_t bits) {
    double x;
    memcpy(&x, &bits, sizeof x);
    return x;
}

static void split_double(double x, uint64_t *m, int *k) {
    uint64_t bits = bits_of_double(x);
    int biased = (int)((bits >> 52) & 0x7FF);
    uint64_t fraction = bits & ((UINT64_C(1) << 52) - 1);
    if (biased == 0) {
        *m = fraction;
        *k = -1074;
    } else {
        *m = fraction | (UINT64_C(1) << 52);
        *k = biased - 1075;
    }
}

/* ---- Double → decimal ---------------------------------------------------------------------- */

void al_decimal_from_double(al_decimal *d, double v) {
    uint64_t m;
    int k;
    split_double(v, &m, &k);
    d->count = 0;
    d->exponent = 1; /* zero reads as 0.0 × 10^1, so %e shows it as 0e+00 */
    if (m == 0) return;
    /* Factors of two in m only lengthen the work below. */
    while ((m & 1) == 0) {
        m >>= 1;
        k++;
    }
    /* m·2^k is an integer (k ≥ 0), or m·5^-k · 10^k (k < 0): either way n·10^-scale. */
    big_uint n;
    big_set_u64(&n, m);
    int scale = 0; /* the value is n·10^-scale */
    if (k > 0) big_mul_pow2(&n, k);
    if (k < 0) {
        big_mul_pow5(&n, -k);
        scale = -k;
    }
    /* The top limb without its leading zeros, then 9 digits for every other limb. */
    char top[BIG_BASE_DIGITS];
    int top_len = 0;
    for (uint32_t t = n.limb[n.n - 1]; t != 0; t /= 10) top[top_len++] = (char)('0' + t % 10);
    while (top_len > 0) d->digit[d->count++] = top[--top_len];
    for (int i = n.n - 2; i >= 0; i--) {
        uint32_t limb = n.limb[i];
        for (int j = BIG_BASE_DIGITS - 1; j >= 0; j--) {
            d->digit[d->count + j] = (char)('0' + limb % 10);
            limb /= 10;
        }
        d->count += BIG_BASE_DIGITS;
    }
    d->exponent = d->count - scale;
    while (d->digit[d->count - 1] == '0') d->count--;
}

void al_decimal_round(al_decimal *d, int keep) {
    if (keep >= d->count) return;
    if (keep < 0) { /* V < 10^exponent, a tenth of the rounding unit or less: zero */
        d->count = 0;
        return;
    }
    /* Round up when the dropped part exceeds half a unit of the last kept digit; at exactly
     * half (a 5 and nothing after it, since trailing zeros are never stored), to even. An empty
     * kept part (keep = 0) counts as 0, which is even. */
    char first_dropped = d->digit[keep];
    int more_after = keep + 1 < d->count;
    int last_kept_odd = keep > 0 && (d->digit[keep - 1] - '0') % 2 == 1;
    int up = first_dropped > '5' || (first_dropped == '5' && (more_after || last_kept_odd));
    d->count = keep;
    if (up) {
        int i = keep - 1;
        while (i >= 0 && d->digit[i] == '9') i--; /* ...x99 + 1 = ...(x+1)00 */
        if (i < 0) {                              /* 99...9 + 1 = 10...0: one digit more */
            d->digit[0] = '1';
            d->count = 1;
            d->exponent++;
            return;
        }
        d->digit[i]++;
        d->count = i + 1;
    }
    while (d->count > 0 && d->digit[d->count - 1] == '0') d->count--;
}

/* ---- Decimal → double --------------------------------------------------------------------
 * The text's value is V = 0.d₁d₂…dₙ × 10^point = D·10^E with D the integer of the digits and
 * E = point − n. Only the first PARSE_DIGITS significant digits are kept, plus a digit 1 when
 * any dropped digit is nonzero: the midpoints between doubles have at most 768 significant
 * digits, so none lies strictly between the kept value and the true one, and both round alike. */

#define PARSE_DIGITS 800

typedef struct {
    char digit[PARSE_DIGITS + 1]; /* significant digits; then trailing zeros are removed */
    int count;
    int64_t point;
    int dropped_nonzero; /* a nonzero digit came after the first PARSE_DIGITS */
} parsed_decimal;

/* Whether V = D·10^E is below (-1), at (0) or above (1) the midpoint between the finite double
 * x ≥ 0 and the next double up. x = M·2^k, so the midpoint is H·2^j with H = 2M+1, j = k-1:
 *   D·5^E·2^E  vs  H·2^j,
 * compared as integers by moving each power to the side where its exponent is positive:
 *   L = D·5^max(E,0)·2^max(E-j,0)   vs   R = H·5^max(-E,0)·2^max(j-E,0).
 * x is within a few ulps of V (see estimate_value; or DBL_MAX for V < 10^310), so L and R are
 * within a factor of 100 of each other; whichever side has no power of 2 is D (≤ 801 digits),
 * D·5^E (≤ 310 digits, as V < 10^310) or H·5^-E (≤ 17 + 0.7·1124 digits): at most about 805
 * digits, 90 limbs. */
static int compare_with_midpoint_above(const big_uint *d_times_pow5, int e10, double x) {
    uint64_t m;
    int k;
    split_double(x, &m, &k);
    uint64_t h = 2 * m + 1;
    int j = k - 1;
    big_uint left = *d_times_pow5, right;
    big_set_u64(&right, h);
    if (e10 < 0) big_mul_pow5(&right, -e10);
    if (e10 > j) big_mul_pow2(&left, e10 - j);
    if (j > e10) big_mul_pow2(&right, j - e10);
    return big_compare(&left, &right);
}

/* x·10^k from the powers 10^(2^i), each product or quotient rounded once: within about ten
 * ulps. The factors all move x the same way, so no partial result overflows unless the final
 * one does, and once in the subnormal range the absolute error stays below a few units. */
static double scale_by_pow10(double x, int k) {
    static const double pow10_pow2[] = {1e1, 1e2, 1e4, 1e8, 1e16, 1e32, 1e64, 1e128, 1e256};
    int n = k < 0 ? -k : k;
    for (int i = 8; i >= 0; i--) {
        for (; n >= (1 << i); n -= 1 << i) x = k < 0 ? x / pow10_pow2[i] : x * pow10_pow2[i];
    }
    return x;
}

/* A double within a few ulps of V, from its first 19 digits (which fit in a uint64). */
static double estimate_value(const parsed_decimal *p) {
    int n = p->count < 19 ? p->count : 19;
    uint64_t lead = 0;
    for (int i = 0; i < n; i++) lead = lead * 10 + (uint64_t)(p->digit[i] - '0');
    double x = scale_by_pow10((double)lead, (int)p->point - n);
    return x > DBL_MAX ? DBL_MAX : x;
}

/* Of two neighbouring doubles, the one with an even last bit (ties to even). */
static double even_of(double a, double b) { return (bits_of_double(a) & 1) == 0 ? a : b; }

/* The double nearest to V (ties to even), infinity above the largest double's upper midpoint. */
static double nearest_double(const parsed_decimal *p) {
    if (p->count == 0) return 0.0;
    /* 10^(point-1) ≤ V < 10^point: beyond point 310, V is far above DBL_MAX ≈ 1.8·10^308;
     * below point -323, under half the smallest subnormal (2^-1075 ≈ 2.5·10^-324). */
    if (p->point > 310) return HUGE_VAL;
    if (p->point < -323) return 0.0;
    int e10 = (int)p->point - p->count;

#if FLT_EVAL_METHOD == 0
    /* Exact operands, one IEEE rounding: D < 2^53 and 10^|E| ≤ 10^22 are both doubles. */
    if (p->count <= 16 && e10 >= -22 && e10 <= 22) {
        uint64_t d = 0;
        for (int i = 0; i < p->count; i++) d = d * 10 + (uint64_t)(p->digit[i] - '0');
        static const double pow10[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                         1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                         1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
        if (d < (UINT64_C(1) << 53))
            return e10 < 0 ? (double)d / pow10[-e10] : (double)d * pow10[e10];
    }
#endif

    /* Step from the estimate one double at a time until V lies between the midpoints below and
     * above x — up while V is above the midpoint over x, else down while V is below the
     * midpoint under x; at a midpoint, the even neighbour. The comparisons are exact; the
     * tests' millions of cases need at most 6 of them. */
    big_uint d_times_pow5;
    big_from_digits(&d_times_pow5, p->digit, p->count);
    if (e10 > 0) big_mul_pow5(&d_times_pow5, e10);
    double x = estimate_value(p);
    int c = compare_with_midpoint_above(&d_times_pow5, e10, x);
    if (c >= 0) {
        while (c > 0) {
            x = double_of_bits(bits_of_double(x) + 1); /* the next double up (∞ after DBL_MAX) */
            if (x > DBL_MAX) return x;
            c = compare_with_midpoint_above(&d_times_pow5, e10, x);
        }
        if (c < 0) return x;
        return even_of(x, double_of_bits(bits_of_double(x) + 1));
    }
    while (x > 0) {
        double below = double_of_bits(bits_of_double(x) - 1);
        c = compare_with_midpoint_above(&d_times_pow5, e10, below);
        if (c > 0) return x;
        if (c == 0) return even_of(below, x);
        x = below;
    }
    return 0.0;
}

static int is_digit(char c) { return c >= '0' && c <= '9'; }

/* Collects one mantissa digit: leading zeros only move the point (when after it). */
static void take_digit(parsed_decimal *p, char c, int after_point) {
    if (p->count == 0 && c == '0') {
        if (after_point) p->point--;
        return;
    }
    if (!after_point) p->point++;
    if (p->count < PARSE_DIGITS) p->digit[p->count++] = c;
    else if (c != '0') p->dropped_nonzero = 1;
}

const char *al_decimal_parse(const char *s, double *out) {
    const char *c = s;
    int negative = 0;
    if (*c == '+' || *c == '-') negative = *c++ == '-';
    parsed_decimal p;
    p.count = 0;
    p.point = 0;
    p.dropped_nonzero = 0;
    int any_digit = 0;
    for (; is_digit(*c); c++, any_digit = 1) take_digit(&p, *c, 0);
    if (*c == '.') {
        for (c++; is_digit(*c); c++, any_digit = 1) take_digit(&p, *c, 1);
    }
    if (!any_digit) return NULL;
    /* An exponent counts only with at least one digit ("1e" is the number 1 followed by "e").
     * Its value saturates: beyond 10^9 the result is 0 or infinity anyway. */
    if (*c == 'e' || *c == 'E') {
        const char *e = c + 1;
        int exp_negative = 0;
        if (*e == '+' || *e == '-') exp_negative = *e++ == '-';
        if (is_digit(*e)) {
            int64_t value = 0;
            for (; is_digit(*e); e++)
                if (value < 1000000000) value = value * 10 + (*e - '0');
            p.point += exp_negative ? -value : value;
            c = e;
        }
    }
    if (p.dropped_nonzero) p.digit[p.count++] = '1';
    while (p.count > 0 && p.digit[p.count - 1] == '0') p.count--;
    double v = nearest_double(&p);
    *out = negative ? -v : v;
    return c;
}
