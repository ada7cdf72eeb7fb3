/* test_print.c — the core's own snprintf (core/base/print.c) and decimal parser (core/base/decimal.c)
 * against glibc's snprintf and strtod, which convert exactly (correctly rounded, ties to even)
 * and so are an independent reference:
 *   floats    every floating-point conversion the core uses (and flags, widths, %.*f/e/g with
 *             precisions 0..40) on random bit patterns (subnormals, inf, nan included), float32
 *             values, integers, short decimals, exact ties and hand-picked edge values;
 *   integers  d i u x X c with every length modifier, at their limits, with flags and widths;
 *   strings   %s %.*s %c, widths, precisions on unterminated buffers;
 *   buffers   return values and truncation at every small capacity, nothing written past it;
 *   parsing   random decimal strings (1..40 digits, any exponent), the exact midpoints between
 *             neighbouring doubles written out in full (and just above and below them), the
 *             subnormal and overflow boundaries, thousands of digits, huge exponents; and the
 *             grammar al_parse_finite accepts.
 *
 * Usage: test_print [N]    N random values per sweep (default 30000; valgrind runs use fewer).
 * Exit status 0 only if every output is identical to glibc's. */

#include "check.h"
#include "base/internal.h"

#include <float.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_N 30000
#define SHOW 8          /* mismatches printed per sweep */
#define OUT_MAX 2048    /* enough for "%.1100f" of DBL_MAX (309 + 1101 characters) */

/* ---- deterministic random numbers (splitmix64) ---------------------------------------------- */

static uint64_t rng_state = 0x5EED1234ABCDULL;

static uint64_t next_u64(void) {
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

/* Uniform in [lo, hi]. */
static long next_in(long lo, long hi) { return lo + (long)(next_u64() % (uint64_t)(hi - lo + 1)); }

static double double_of_bits(uint64_t bits) {
    double x;
    memcpy(&x, &bits, sizeof x);
    return x;
}

static uint64_t bits_of_double(double x) {
    uint64_t bits;
    memcpy(&bits, &x, sizeof bits);
    return bits;
}

/* ---- sweeps: many cases, a few mismatches shown, one CHECK ------------------------------------ */

typedef struct {
    const char *name;
    long cases, bad;
} sweep;

static void sweep_case(sweep *sw, int ok, const char *what, const char *got, int got_n,
                       const char *want, int want_n) {
    sw->cases++;
    if (ok) return;
    if (++sw->bad <= SHOW)
        fprintf(stderr, "  %s: %s: got \"%s\" (%d), glibc \"%s\" (%d)\n", sw->name, what, got, got_n,
                want, want_n);
}

static void sweep_done(sweep *sw) {
    CHECK(sw->bad == 0, "%s: %ld of %ld cases differ from glibc", sw->name, sw->bad, sw->cases);
    printf("  %-28s %9ld cases, %ld mismatches\n", sw->name, sw->cases, sw->bad);
}

/* fmt takes one double. */
static void compare_double(sweep *sw, const char *fmt, double v) {
    char want[OUT_MAX], got[OUT_MAX], what[96];
    int want_n = snprintf(want, sizeof want, fmt, v);
    int got_n = al_snprintf(got, sizeof got, fmt, v);
    int ok = want_n == got_n && strcmp(want, got) == 0;
    if (!ok) snprintf(what, sizeof what, "\"%s\" of %a", fmt, v);
    sweep_case(sw, ok, ok ? "" : what, got, got_n, want, want_n);
}

/* fmt takes an int (a precision or width) and a double. */
static void compare_double_star(sweep *sw, const char *fmt, int star, double v) {
    char want[OUT_MAX], got[OUT_MAX], what[96];
    int want_n = snprintf(want, sizeof want, fmt, star, v);
    int got_n = al_snprintf(got, sizeof got, fmt, star, v);
    int ok = want_n == got_n && strcmp(want, got) == 0;
    if (!ok) snprintf(what, sizeof what, "\"%s\" with %d of %a", fmt, star, v);
    sweep_case(sw, ok, ok ? "" : what, got, got_n, want, want_n);
}

/* ---- floating point ----------------------------------------------------------------------- */

/* The core's own float formats first (io/attn_files.c, model/attention.c, the demos, torch/tensor_format.c), then
 * flags and widths the core may use some day. */
static const char *const FLOAT_FORMATS[] = {
    "%g", "%.9g", "%.17g", "%.6f", "%.4f", "%.0f", "%.2e", "%.4e", "%.0f.",
    "%f", "%e", "%.0e", "%.1e", "%.1f", "%.0g", "%.1g", "%.3g", "%.25g", "%.20f", "%.30e",
    "%#.0f", "%#.0e", "%+.3f", "% .3e", "% g", "%+g",
    "%12.4f", "%-12.4e|", "%012.4f", "%+012.3e", "%-+10g|", "%010g", "% 015.2f", "%-015.2f|",
    "%3.1f", "%1e", "%G", "%E", "%F", "%.3G", "%.10E",
};
#define N_FLOAT_FORMATS (sizeof FLOAT_FORMATS / sizeof FLOAT_FORMATS[0])

enum value_kind {
    ANY_BITS,      /* every bit pattern: normals of all exponents, subnormals, inf, nan */
    SUBNORMAL,     /* biased exponent 0 */
    FROM_FLOAT32,  /* float32 values, what the tensors hold */
    MODERATE,      /* full 53-bit mantissa, |v| in about 1e-20 .. 1e20 */
    INTEGER,       /* whole numbers up to 2^63 */
    SHORT_DECIMAL, /* the double nearest k / 10^j: ties that are not quite ties */
    EXACT_TIE,     /* m / 2^j with m odd: ends in a 5 that a rounding position can fall on */
    N_KINDS
};
static const char *const KIND_NAMES[N_KINDS] = {"any bits", "subnormal", "float32", "moderate",
                                                "integer", "short decimal", "exact tie"};

static double random_double(enum value_kind kind) {
    uint64_t r = next_u64();
    double sign = (r >> 63) ? -1.0 : 1.0;
    switch (kind) {
    case ANY_BITS: return double_of_bits(r);
    case SUBNORMAL: return double_of_bits(r & 0x800FFFFFFFFFFFFFULL);
    case FROM_FLOAT32: {
        uint32_t w = (uint32_t)r;
        float f;
        memcpy(&f, &w, sizeof f);
        return (double)f;
    }
    case MODERATE: {
        double m = (double)(r & ((1ULL << 53) - 1)) + 0x1p53; /* 2^53 .. 2^54 */
        return sign * ldexp(m, (int)next_in(-120, 12));
    }
    case INTEGER: return sign * (double)(int64_t)((r & INT64_MAX) >> next_in(0, 62));
    case SHORT_DECIMAL:
        return sign * (double)next_in(0, 9999999) / pow(10.0, (double)next_in(0, 9));
    case EXACT_TIE: {
        uint64_t m = ((r >> 1) & ((1ULL << next_in(1, 40)) - 1)) | 1;
        return sign * ldexp((double)m, -(int)next_in(1, 60));
    }
    case N_KINDS: break;
    }
    return 0.0;
}

static const double EDGE_VALUES[] = {
    0.0, -0.0, 1.0, -1.0, 0.5, 1.5, 2.5, 3.5, -2.5, 0.125, 0.375, 0.625, 9.5, 99.5, 999999.5,
    0.05, 0.15, 0.25, 0.35, 0.45, 1e-5, 1e-4, 0.0001, 0.00001, 9.9999e-5, 9.99995e-5, 123456,
    1234567, 999999, 9999995, 0.999999, 0.9999995, 9.9999995, 99999.95, 1e15, 1e16, 1e17,
    9007199254740992.0, 9007199254740993.0, 1e21, 1e22, 1e23, 1e100, 1e-100, 1e308, 1e-308,
    DBL_MAX, -DBL_MAX, DBL_MIN, 2.2250738585072009e-308, 4.9406564584124654e-324,
    1e-323, FLT_MAX, FLT_MIN, 1e-45, 3.4028235677973366e38, 3.141592653589793,
    2.718281828459045, 1.0 / 3.0, 2.0 / 3.0, 0.1, 0.2, 0.3, 1e-6, 1e-7, 1e6, 1e7,
    -1e-300, 5e-5, 5e-6, 0.00049999999999999, 0.0005, 0.00050000000000001,
};
#define N_EDGE_VALUES (sizeof EDGE_VALUES / sizeof EDGE_VALUES[0])

static void test_float_edges(void) {
    sweep sw = {"floats: edge values", 0, 0};
    double specials[] = {INFINITY, -INFINITY, NAN, -NAN};
    for (size_t f = 0; f < N_FLOAT_FORMATS; f++) {
        for (size_t i = 0; i < N_EDGE_VALUES; i++) compare_double(&sw, FLOAT_FORMATS[f], EDGE_VALUES[i]);
        for (size_t i = 0; i < 4; i++) compare_double(&sw, FLOAT_FORMATS[f], specials[i]);
    }
    const char *star_formats[] = {"%.*f", "%.*e", "%.*g", "%*f", "%-*e|", "%0*g", "%#*.3f"};
    for (size_t f = 0; f < sizeof star_formats / sizeof *star_formats; f++)
        for (int p = -2; p <= 45; p++)
            for (size_t i = 0; i < N_EDGE_VALUES; i++)
                compare_double_star(&sw, star_formats[f], p, EDGE_VALUES[i]);
    /* Precisions around and beyond the longest exact expansion (767 significant digits, 1074
     * decimals): every digit printed is exact, then zeros. */
    const int long_precisions[] = {100, 400, 750, 766, 767, 768, 800, 1073, 1074, 1075, 1100};
    for (size_t f = 0; f < 3; f++)
        for (size_t p = 0; p < sizeof long_precisions / sizeof *long_precisions; p++)
            for (size_t i = 0; i < N_EDGE_VALUES; i++)
                compare_double_star(&sw, star_formats[f], long_precisions[p], EDGE_VALUES[i]);
    sweep_done(&sw);
}

/* Every float format on n values of each kind. */
static void test_float_formats(long n) {
    for (int kind = 0; kind < N_KINDS; kind++) {
        char name[64];
        snprintf(name, sizeof name, "floats: %s", KIND_NAMES[kind]);
        sweep sw = {name, 0, 0};
        for (long i = 0; i < n; i++) {
            double v = random_double((enum value_kind)kind);
            for (size_t f = 0; f < N_FLOAT_FORMATS; f++) compare_double(&sw, FLOAT_FORMATS[f], v);
        }
        sweep_done(&sw);
    }
}

/* %.*f, %.*e, %.*g with random precisions 0..40 on values of every kind. */
static void test_float_precisions(long n) {
    sweep sw = {"floats: precision 0..40", 0, 0};
    const char *formats[] = {"%.*f", "%.*e", "%.*g"};
    for (long i = 0; i < 8 * n; i++) {
        double v = random_double((enum value_kind)(i % N_KINDS));
        for (int f = 0; f < 3; f++) compare_double_star(&sw, formats[f], (int)next_in(0, 40), v);
    }
    sweep_done(&sw);
}

/* Exact ties at the rounding position: m / 2^j has exactly j decimals, the last one a 5, so
 * "%.{j-1}f" must round it to even; integers + 1/2 at "%.0f"; and every %e precision. */
static void test_float_ties(long n) {
    sweep sw = {"floats: exact ties", 0, 0};
    for (long i = 0; i < n; i++) {
        int j = (int)next_in(1, 30);
        uint64_t m = (next_u64() & ((1ULL << next_in(1, 30)) - 1)) | 1;
        double v = ldexp((double)m, -j);
        compare_double_star(&sw, "%.*f", j - 1, v);
        compare_double_star(&sw, "%.*e", (int)next_in(0, 20), v);
        double half = (double)(int64_t)(next_u64() >> next_in(11, 62)) + 0.5;
        compare_double(&sw, "%.0f", half);
        compare_double(&sw, "%.0f.", -half);
    }
    sweep_done(&sw);
}

/* "%#.*g" by C's definition, from glibc's %e and %f: P = max(precision, 1) significant digits;
 * X = the exponent of the value rounded to them; "%#.{P-1-X}f" if -4 <= X < P, else
 * "%#.{P-1}e". glibc 2.36 itself drops the zeros when rounding carries into a new digit in the
 * exponential style ("%#.3g" of 999.5 gives "1.e+03" where C, and Python, give "1.00e+03"), so
 * it cannot be the reference for %#g directly. */
static void reference_alternate_g(char *out, size_t cap, int precision, double v) {
    int p = precision == 0 ? 1 : precision;
    char e_form[OUT_MAX];
    snprintf(e_form, sizeof e_form, "%.*e", p - 1, v);
    const char *e = strchr(e_form, 'e');
    int x = e ? atoi(e + 1) : 0;
    if (!isfinite(v)) snprintf(out, cap, "%#g", v);
    else if (x >= -4 && x < p) snprintf(out, cap, "%#.*f", p - 1 - x, v);
    else snprintf(out, cap, "%#.*e", p - 1, v);
}

static void test_float_alternate_g(long n) {
    sweep sw = {"floats: %#g", 0, 0};
    for (long i = 0; i < n + (long)N_EDGE_VALUES * 25; i++) {
        int precision = (int)(i % 25);
        double v = i < (long)N_EDGE_VALUES * 25 ? EDGE_VALUES[i / 25]
                                                 : random_double((enum value_kind)(i % N_KINDS));
        char want[OUT_MAX], got[OUT_MAX], what[96];
        reference_alternate_g(want, sizeof want, precision, v);
        int want_n = (int)strlen(want);
        int got_n = al_snprintf(got, sizeof got, "%#.*g", precision, v);
        int ok = want_n == got_n && strcmp(want, got) == 0;
        if (!ok) snprintf(what, sizeof what, "\"%%#.%dg\" of %a", precision, v);
        sweep_case(&sw, ok, ok ? "" : what, got, got_n, want, want_n);
    }
    CHECK(al_snprintf(NULL, 0, "%#g", 999999.5) == 11, "%%#g keeps its zeros after a carry");
    sweep_done(&sw);
}

/* ---- integers ------------------------------------------------------------------------------ */

static const char *const INT_FORMATS[] = {
    "%d", "%i", "%5d", "%-5d|", "%05d", "%+d", "% d", "%.3d", "%.0d", "%+.0d", "% .0d",
    "%8.3d", "%-8.3d|", "%08.3d", "%+08d", "%- 8d|", "%u", "%5u", "%.0u", "%x", "%X", "%02x",
    "%04x", "%#x", "%#X", "%#08x", "%#.0x", "%.0x", "%#10.4x", "%hhd", "%hd", "%hhu", "%hu",
    "%hhx", "%hx", "%c|", "%3c|", "%-3c|", "%%%d%%",
};
static const char *const LLONG_FORMATS[] = {
    "%lld", "%llu", "%llx", "%llX", "%20lld", "%-+25lld|", "%025lld", "%.30lld", "%#llx",
    "%" PRId64, "%" PRIu64, "%" PRIx64, "%ld", "%lu", "%lx", "%jd", "%ju", "%jx",
};
static const char *const SIZE_FORMATS[] = {"%zu", "%zx", "%10zu", "%-10zu|", "%zd", "%td", "%tu"};

static void compare_int(sweep *sw, const char *fmt, int v) {
    char want[OUT_MAX], got[OUT_MAX], what[64];
    int want_n = snprintf(want, sizeof want, fmt, v);
    int got_n = al_snprintf(got, sizeof got, fmt, v);
    /* %c of 0 writes a NUL: compare the bytes, not the strings. */
    int ok = want_n == got_n && want_n >= 0 && want_n < OUT_MAX && memcmp(want, got, (size_t)want_n + 1) == 0;
    if (!ok) snprintf(what, sizeof what, "\"%s\" of %d", fmt, v);
    sweep_case(sw, ok, ok ? "" : what, got, got_n, want, want_n);
}

/* ll, l, j and PRI*64 all read 64 bits here (x86-64 and wasm32 alike for ll and j; l is 64-bit
 * on x86-64, where these tests run). */
static void compare_llong(sweep *sw, const char *fmt, long long v) {
    char want[OUT_MAX], got[OUT_MAX], what[64];
    int want_n = snprintf(want, sizeof want, fmt, v);
    int got_n = al_snprintf(got, sizeof got, fmt, v);
    int ok = want_n == got_n && strcmp(want, got) == 0;
    if (!ok) snprintf(what, sizeof what, "\"%s\" of %lld", fmt, v);
    sweep_case(sw, ok, ok ? "" : what, got, got_n, want, want_n);
}

static void compare_size(sweep *sw, const char *fmt, size_t v) {
    char want[OUT_MAX], got[OUT_MAX], what[64];
    int want_n = snprintf(want, sizeof want, fmt, v);
    int got_n = al_snprintf(got, sizeof got, fmt, v);
    int ok = want_n == got_n && strcmp(want, got) == 0;
    if (!ok) snprintf(what, sizeof what, "\"%s\" of %zu", fmt, v);
    sweep_case(sw, ok, ok ? "" : what, got, got_n, want, want_n);
}

static void test_integers(long n) {
    sweep sw = {"integers", 0, 0};
    int ints[] = {0, 1, -1, 7, -7, 9, 10, 99, 100, 255, 256, 'A', 127, -128, 128, 32767, -32768,
                  65535, 65536, INT_MAX, INT_MIN, INT_MAX - 1, INT_MIN + 1};
    long long llongs[] = {0, 1, -1, 42, LLONG_MAX, LLONG_MIN, LLONG_MIN + 1, INT_MAX, INT_MIN,
                          (long long)UINT32_MAX, 1000000000000LL, -999999999999999999LL};
    size_t sizes[] = {0, 1, 9, 10, SIZE_MAX, SIZE_MAX / 2, (size_t)PTRDIFF_MAX + 1};
    for (size_t f = 0; f < sizeof INT_FORMATS / sizeof *INT_FORMATS; f++) {
        for (size_t i = 0; i < sizeof ints / sizeof *ints; i++) compare_int(&sw, INT_FORMATS[f], ints[i]);
        for (long i = 0; i < n / 10; i++)
            compare_int(&sw, INT_FORMATS[f], (int)(uint32_t)(next_u64() >> next_in(32, 63)));
    }
    for (size_t f = 0; f < sizeof LLONG_FORMATS / sizeof *LLONG_FORMATS; f++) {
        for (size_t i = 0; i < sizeof llongs / sizeof *llongs; i++) compare_llong(&sw, LLONG_FORMATS[f], llongs[i]);
        for (long i = 0; i < n / 10; i++)
            compare_llong(&sw, LLONG_FORMATS[f], (long long)(next_u64() >> next_in(0, 63)) * (i % 2 ? -1 : 1));
    }
    for (size_t f = 0; f < sizeof SIZE_FORMATS / sizeof *SIZE_FORMATS; f++) {
        for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) compare_size(&sw, SIZE_FORMATS[f], sizes[i]);
        for (long i = 0; i < n / 10; i++) compare_size(&sw, SIZE_FORMATS[f], (size_t)(next_u64() >> next_in(0, 63)));
    }
    /* Widths and precisions from the arguments, negative ones included. */
    const char *star_formats[] = {"%*d|", "%-*d|", "%.*d|", "%0*d|", "%*x|", "%.*u|"};
    for (size_t f = 0; f < sizeof star_formats / sizeof *star_formats; f++) {
        for (int w = -12; w <= 12; w++) {
            for (size_t i = 0; i < sizeof ints / sizeof *ints; i++) {
                char want[OUT_MAX], got[OUT_MAX], what[64];
                int want_n = snprintf(want, sizeof want, star_formats[f], w, ints[i]);
                int got_n = al_snprintf(got, sizeof got, star_formats[f], w, ints[i]);
                int ok = want_n == got_n && strcmp(want, got) == 0;
                if (!ok) snprintf(what, sizeof what, "\"%s\" with %d of %d", star_formats[f], w, ints[i]);
                sweep_case(&sw, ok, ok ? "" : what, got, got_n, want, want_n);
            }
        }
    }
    sweep_done(&sw);
}

/* ---- strings ------------------------------------------------------------------------------- */

static void test_strings(void) {
    sweep sw = {"strings", 0, 0};
    const char *strings[] = {"", "a", "hello", "tensor 'q_proj.weight'", "s\303\251ed",
                             "0123456789012345678901234567890123456789012345678901234567890123456789"};
    const char *formats[] = {"%s", "%10s", "%-10s|", "%.3s", "%.40s", "%.0s|", "%5.2s|", "%-5.2s|",
                             "[%s] and [%s]"};
    for (size_t f = 0; f < sizeof formats / sizeof *formats; f++) {
        for (size_t i = 0; i < sizeof strings / sizeof *strings; i++) {
            char want[OUT_MAX], got[OUT_MAX], what[64];
            int want_n = snprintf(want, sizeof want, formats[f], strings[i], strings[i]);
            int got_n = al_snprintf(got, sizeof got, formats[f], strings[i], strings[i]);
            int ok = want_n == got_n && strcmp(want, got) == 0;
            if (!ok) snprintf(what, sizeof what, "\"%s\" of \"%.20s\"", formats[f], strings[i]);
            sweep_case(&sw, ok, ok ? "" : what, got, got_n, want, want_n);
        }
    }
    /* %.*s reads only `precision` bytes: the buffer below has no NUL (ASan would notice). */
    const char unterminated[3] = {'a', 'b', 'c'};
    for (int p = -1; p <= 3; p++) {
        for (int w = -6; w <= 6; w += 3) {
            char want[OUT_MAX], got[OUT_MAX], what[64];
            const char *text = p < 0 ? "abc" : unterminated;
            int want_n = snprintf(want, sizeof want, "<%*.*s>", w, p, text);
            int got_n = al_snprintf(got, sizeof got, "<%*.*s>", w, p, text);
            int ok = want_n == got_n && strcmp(want, got) == 0;
            if (!ok) snprintf(what, sizeof what, "\"<%%*.*s>\" with %d, %d", w, p);
            sweep_case(&sw, ok, ok ? "" : what, got, got_n, want, want_n);
        }
    }
    sweep_done(&sw);
}

/* ---- return values and truncation ----------------------------------------------------------- */

static sweep truncation_sweep = {"buffers: truncation", 0, 0};

/* At every capacity from 0 to beyond the full length: the same return value and the same bytes
 * as glibc, a NUL at the end, and nothing written past the capacity. */
static void check_truncation(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    va_list probe;
    va_copy(probe, ap);
    int full = vsnprintf(NULL, 0, fmt, probe);
    va_end(probe);
    for (int cap = 0; cap <= full + 2; cap++) {
        char want[OUT_MAX], got[OUT_MAX];
        memset(want, 0x7F, sizeof want);
        memset(got, 0x7F, sizeof got);
        va_list a, b;
        va_copy(a, ap);
        va_copy(b, ap);
        int want_n = vsnprintf(want, (size_t)cap, fmt, a);
        int got_n = al_vsnprintf(got, (size_t)cap, fmt, b);
        va_end(a);
        va_end(b);
        int ok = want_n == got_n && memcmp(want, got, sizeof want) == 0;
        char what[96];
        if (!ok) snprintf(what, sizeof what, "\"%s\" at capacity %d", fmt, cap);
        want[OUT_MAX - 1] = got[OUT_MAX - 1] = '\0';
        sweep_case(&truncation_sweep, ok, ok ? "" : what, got, got_n, want, want_n);
    }
    va_end(ap);
}

static void test_truncation(void) {
    check_truncation("plain text");
    check_truncation("");
    check_truncation("%s", "");
    check_truncation("tensor '%s' has shape [%" PRId64 ", %" PRId64 "]", "q_proj.weight", (int64_t)32, (int64_t)-16);
    check_truncation("%.4f|%.4e|%g|%.17g", -3.14159265, 6.02214076e23, 1e-5, 0.1);
    check_truncation("%.0f.", 1e20);
    check_truncation("%12.3e%-8d|%c%%", -0.0, -42, 'x');
    check_truncation("%#x %04x %zu %lld", 255u, 7u, (size_t)12345, LLONG_MIN);
    check_truncation("%.40f", DBL_MAX);
    check_truncation("%f %e %g", (double)INFINITY, -(double)NAN, -(double)INFINITY);
    sweep_done(&truncation_sweep);

    /* NULL with capacity 0 only measures. */
    CHECK(al_snprintf(NULL, 0, "%d-%s-%.3f", 12345, "abc", 2.0) == 15, "size query with NULL");
    char one[1] = {'x'};
    CHECK(al_snprintf(one, 1, "%d", 42) == 2 && one[0] == '\0', "capacity 1 holds only the NUL");
}

/* Conversions outside the supported set are written out as text, with the rest of the format,
 * and no argument is read for them or after them. The format is not a literal here, so that
 * the compiler's format check lets these calls through. */
static void test_unsupported(void) {
    struct {
        const char *fmt, *want;
    } cases[] = {
        {"[%p] %d", "[%p] %d"}, {"%Lf and %s", "%Lf and %s"}, {"%n", "%n"}, {"%a", "%a"},
        {"%ls|%lc", "%ls|%lc"}, {"50%", "50%"}, {"%-08.3", "%-08.3"}, {"ok %d then %q %s", "ok 7 then %q %s"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char got[64];
        const char *fmt = cases[i].fmt;
        int n = al_snprintf(got, sizeof got, fmt, 7, "unused");
        CHECK(strcmp(got, cases[i].want) == 0 && n == (int)strlen(cases[i].want),
              "unsupported \"%s\": got \"%s\" (%d), want \"%s\"", cases[i].fmt, got, n, cases[i].want);
    }
}

/* ---- parsing ------------------------------------------------------------------------------- */

static sweep *parse_sweep;

/* al_decimal_parse and strtod read the same prefix of s into the same double (bit for bit). */
static void compare_parse(const char *s) {
    char *want_end;
    double want = strtod(s, &want_end);
    double got = 0.0;
    const char *got_end = al_decimal_parse(s, &got);
    if (!got_end) got_end = s; /* strtod's way of saying "no number" */
    int ok = got_end == want_end && (got_end == s || bits_of_double(got) == bits_of_double(want));
    char got_text[64], want_text[64], what[120];
    if (!ok) {
        snprintf(got_text, sizeof got_text, "%a, %td chars", got, got_end - s);
        snprintf(want_text, sizeof want_text, "%a, %td chars", want, want_end - s);
        snprintf(what, sizeof what, "parse \"%.80s%s\"", s, strlen(s) > 80 ? "..." : "");
    }
    sweep_case(parse_sweep, ok, ok ? "" : what, got_text, 0, want_text, 0);
}

static void append_digits(char **p, int count) {
    for (int i = 0; i < count; i++) *(*p)++ = (char)('0' + next_in(0, 9));
}

/* [sign] digits [. digits] [e [sign] digits], sometimes with leading zeros, sometimes without
 * a digit on one side of the point or in the exponent. */
static void random_number_text(char *s, int in_range) {
    char *p = s;
    long r = next_in(0, 3);
    if (r == 0) *p++ = '-';
    if (r == 1) *p++ = '+';
    int digits = (int)next_in(1, 40);
    int before = (int)next_in(0, digits);
    if (next_in(0, 7) == 0) for (long z = next_in(1, 30); z > 0; z--) *p++ = '0';
    append_digits(&p, before);
    if (before < digits || next_in(0, 3) == 0) {
        *p++ = '.';
        if (next_in(0, 7) == 0) for (long z = next_in(1, 30); z > 0; z--) *p++ = '0';
        append_digits(&p, digits - before);
    }
    if (in_range) { /* the value between about 1e-330 and 1e312 */
        p += sprintf(p, "e%ld", next_in(-330, 310) - before);
    } else if (next_in(0, 3) > 0) {
        *p++ = next_in(0, 1) ? 'e' : 'E';
        long sign = next_in(0, 2);
        if (sign == 1) *p++ = '-';
        if (sign == 2) *p++ = '+';
        if (next_in(0, 15) > 0) p += sprintf(p, "%ld", next_in(0, 400) >> next_in(0, 8));
        else if (next_in(0, 1)) p += sprintf(p, "%ld", next_in(0, 999999999) * 100); /* huge */
    }
    if (next_in(0, 15) == 0) *p++ = "x .e+-"[next_in(0, 5)]; /* junk after the number */
    *p = '\0';
}

static void test_parse_random(long n) {
    sweep sw = {"parse: random strings", 0, 0};
    parse_sweep = &sw;
    char s[256];
    for (long i = 0; i < 16 * n; i++) {
        random_number_text(s, 0);
        compare_parse(s);
        random_number_text(s, 1);
        compare_parse(s);
    }
    sweep_done(&sw);
}

/* Whether this machine's long double holds a double's midpoint exactly (x87: 64-bit mantissa;
 * valgrind emulates x87 with 53 bits, and then this sweep is skipped). */
static int long_double_is_wide(void) {
    volatile long double one = 1.0L, tiny = 0x1p-60L;
    return one + tiny != one;
}

/* Exact midpoints between neighbouring doubles — ties, rounded to the even one — written out in
 * full (up to 767 significant digits), plus the same digits nudged just above and just below,
 * and padded past the parser's 800 kept digits (so that its "dropped nonzero digit" counts). */
static void test_parse_midpoints(long n) {
    sweep sw = {"parse: exact midpoints", 0, 0};
    parse_sweep = &sw;
    if (!long_double_is_wide()) {
        printf("  parse: exact midpoints      skipped (long double is not wider than double here)\n");
        return;
    }
    static char text[4096];
    for (long i = 0; i < n; i++) {
        double x;
        do x = fabs(random_double(i % 3 == 0 ? SUBNORMAL : ANY_BITS));
        while (!(x < DBL_MAX));
        if (i == 0) x = DBL_MAX; /* its upper midpoint is the overflow threshold */
        if (i == 1) x = 0.0;     /* and 0's is half the smallest subnormal */
        long double mid = ((long double)x + (long double)nextafter(x, INFINITY)) / 2;
        if (i == 0) mid = (long double)DBL_MAX + 0x1p970L;
        snprintf(text, sizeof text, "%.900Le", mid); /* exact: 768 digits at most */
        char *e = strchr(text, 'e');
        char exponent[16];
        snprintf(exponent, sizeof exponent, "%s", e);
        char *end = e; /* drop the mantissa's trailing zeros */
        while (end[-1] == '0') end--;
        if (end[-1] == '.') end--;
        strcpy(end, exponent);
        compare_parse(text); /* exactly the midpoint */
        strcpy(end, "0001");
        strcpy(end + 4, exponent);
        compare_parse(text); /* just above */
        memset(end, '0', 300);
        strcpy(end + 300, "1");
        strcpy(end + 301, exponent);
        compare_parse(text); /* just above, past 800 digits */
        strcpy(end + 300, exponent);
        compare_parse(text); /* the midpoint again, padded with zeros past 800 digits */
        if (end[-1] >= '1' && end[-1] <= '9') { /* just below: ...5 → ...4999 */
            end[-1]--;
            strcpy(end, "999");
            strcpy(end + 3, exponent);
            compare_parse(text);
        }
    }
    sweep_done(&sw);
}

static void test_parse_edges(void) {
    sweep sw = {"parse: edge strings", 0, 0};
    parse_sweep = &sw;
    const char *cases[] = {
        "0", "-0", "+0", "0.0", "-0.0e5", "00000", ".5", "5.", "-.5", "+3", "1e-6", "1E6", "1e+06",
        "1e", "1e+", "1e-", "1.e3", ".e3", ".", "+", "-", "", "e5", "+-1", "1..2", "1.2.3",
        "1.7976931348623157e308", "1.7976931348623158e308", "1.7976931348623159e308",
        "1.797693134862315807937289714053e308", "1.797693134862315807937289714052e308",
        "-1.7976931348623159e308", "1e308", "1e309", "9.99e308", "1e310", "1e400", "1e99999",
        "2.2250738585072011e-308", "2.2250738585072012e-308", "2.2250738585072014e-308",
        "4.9406564584124654e-324", "5e-324", "2.4703282292062327e-324",
        "2.4703282292062328e-324", "2.47032822920623272088284396434110686182529901307162e-324",
        "2.4703282292062327208828439643411068618252990130716238221279284125033775363510437593264991818081799618989828234772285886546332835517796989819938739800539093906315035659515570226392290858392449105184435931802849936536152500319370457678249219365623669863658480757001585769269903706311928279558551332927834338409351978015531246597263579574622766465272827220056374006485499977096599470454020828166226237857393450736339007967761930577506740176324673600968951340535537458516661134223766678604162159680461914467291840300530057530849048765391711386591646239524912623653881879636239373280423891018672348497668235089863388587925628302755995657524455507255189313690836254779186948667994968324049705821028513185451396213837722826145437693412532098591327667236328125e-324",
        "1e-323", "1e-324", "1e-325", "1e-400", "1e-99999", "3e-324", "7e-324", "7.5e-324",
        "0.1", "0.2", "0.3", "1.1", "9007199254740993", "9007199254740992.5", "9007199254740993.0001",
        "123456789012345678901234567890", "1e22", "1e23", "8.98846567431158e307",
        "4.35e-320", "100000000000000000000000000000000000000000000e-44", "0.000000000000000000000001e24",
        "1e-1000000000000", "1e1000000000000", "0e1000000000000", "0.0000e-99999999999", "-1e-400",
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) compare_parse(cases[i]);
    /* Thousands of digits: the value hides behind zeros, or digits run far past the 800 kept. */
    static char big[12000];
    char *p = big;
    *p++ = '1';
    memset(p, '0', 5000);
    strcpy(p + 5000, "e-5000");
    compare_parse(big);
    strcpy(big, "0.");
    memset(big + 2, '0', 5000);
    strcpy(big + 5002, "1e5001");
    compare_parse(big);
    for (int k = 0; k < 20; k++) {
        p = big;
        append_digits(&p, (int)next_in(700, 11000));
        sprintf(p, "e%ld", next_in(-11300, 300));
        if (big[0] == '0') big[0] = '7';
        compare_parse(big);
    }
    sweep_done(&sw);
}

/* The grammar of al_parse_finite: the whole string is one finite decimal number. */
static void test_parse_finite(void) {
    struct {
        const char *text;
        int ok;
        double value;
    } cases[] = {
        {"1e-6", 1, 1e-6}, {"+3", 1, 3}, {".5", 1, 0.5}, {"5.", 1, 5}, {"-0", 1, -0.0},
        {"1E6", 1, 1e6}, {"1e+06", 1, 1e6}, {"10000.0", 1, 1e4}, {"1000000.0", 1, 1e6},
        {"1e-05", 1, 1e-5}, {"1.7976931348623157e308", 1, DBL_MAX}, {"1e-400", 1, 0.0},
        {"", 0, 0}, {" 1", 0, 0}, {"1 ", 0, 0}, {"abc", 0, 0}, {"1e", 0, 0}, {".", 0, 0},
        {"+", 0, 0}, {"e5", 0, 0}, {"inf", 0, 0}, {"nan", 0, 0}, {"1e999", 0, 0},
        {"-1.7976931348623159e308", 0, 0}, {"0x10", 0, 0}, {"1,5", 0, 0}, {"--1", 0, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        double v = 12345.0;
        int ok = al_parse_finite(cases[i].text, &v);
        CHECK(ok == cases[i].ok, "al_parse_finite(\"%s\") returned %d", cases[i].text, ok);
        if (ok && cases[i].ok)
            CHECK(bits_of_double(v) == bits_of_double(cases[i].value), "al_parse_finite(\"%s\") = %a",
                  cases[i].text, v);
        if (!ok) CHECK(v == 12345.0, "al_parse_finite(\"%s\") wrote its output on failure", cases[i].text);
    }
    double v;
    CHECK(al_parse_finite(NULL, &v) == 0, "al_parse_finite(NULL)");
}

int main(int argc, char **argv) {
    long n = argc > 1 ? strtol(argv[1], NULL, 10) : DEFAULT_N;
    if (n < 1) n = 1;
    test_float_edges();
    test_float_formats(n / 10);
    test_float_precisions(n);
    test_float_ties(n);
    test_float_alternate_g(n);
    test_integers(n);
    test_strings();
    test_truncation();
    test_unsupported();
    test_parse_random(n);
    test_parse_midpoints(n / 5);
    test_parse_edges();
    test_parse_finite();
    CHECK_DONE();
}
