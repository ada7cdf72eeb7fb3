/* print.c — the core's snprintf (al_snprintf, al_vsnprintf): C99 snprintf semantics for the
 * conversions the core's messages and demos use (listed in internal.h). Floating-point values
 * are converted exactly by decimal.c, so "%.4f" prints the digits of the correctly rounded
 * exact value, as glibc does — and as Python does, which is what PyTorch's printing goes
 * through. libc's printf would bring its long-double arithmetic into the WebAssembly build. */
#include "base/internal.h"

#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* ---- Output: counts every byte, stores those that fit before the final NUL ----------------- */

typedef struct {
    char *buf;
    size_t cap;
    size_t len; /* length of the full output so far, also past cap */
} print_sink;

static void put_char(print_sink *s, char c) {
    if (s->len + 1 < s->cap) s->buf[s->len] = c;
    s->len++;
}

static void put_chars(print_sink *s, const char *text, size_t n) {
    for (size_t i = 0; i < n; i++) put_char(s, text[i]);
}

static void put_repeated(print_sink *s, char c, int64_t count) {
    for (int64_t i = 0; i < count; i++) put_char(s, c);
}

/* ---- One conversion: %[flags][width][.precision][length]conversion ------------------------- */

typedef struct {
    int left_align; /* '-': pad on the right */
    int plus_sign;  /* '+': a sign on non-negative numbers too */
    int space_sign; /* ' ': a space where that '+' would go */
    int alternate;  /* '#': "0x" before nonzero hex; floats keep the point, %g its zeros */
    int zero_pad;   /* '0': numbers padded with zeros after their sign */
    int width;      /* minimum field width */
    int precision;  /* -1 when not given */
} print_spec;

/* The length modifier: none, hh, h, l, ll, z, j, t. */
enum print_length {
    LEN_INT, LEN_CHAR, LEN_SHORT, LEN_LONG, LEN_LLONG, LEN_SIZE, LEN_MAX, LEN_PTRDIFF
};

/* Writes what precedes a field's body: spaces (right-aligned), the prefix (a sign or "0x"), then
 * zeros if the '0' flag applies. Returns the spaces owed after the body (left-aligned). */
static int64_t put_field_start(print_sink *s, const print_spec *spec, const char *prefix,
                               int64_t body_len, int zero_pad_allowed) {
    size_t prefix_len = strlen(prefix);
    int64_t pad = spec->width - (int64_t)prefix_len - body_len;
    if (pad < 0) pad = 0;
    if (spec->left_align) {
        put_chars(s, prefix, prefix_len);
        return pad;
    }
    if (spec->zero_pad && zero_pad_allowed) {
        put_chars(s, prefix, prefix_len);
        put_repeated(s, '0', pad);
    } else {
        put_repeated(s, ' ', pad);
        put_chars(s, prefix, prefix_len);
    }
    return 0;
}

static const char *sign_prefix(const print_spec *spec, int negative) {
    return negative ? "-" : spec->plus_sign ? "+" : spec->space_sign ? " " : "";
}

/* ---- Integers, characters, strings --------------------------------------------------------- */

static void put_integer(print_sink *s, const print_spec *spec, uintmax_t magnitude,
                        const char *prefix, unsigned base, int upper) {
    const char *digit_chars = upper ? "0123456789ABCDEF" : "0123456789abcdef";
    char reversed[3 * sizeof(uintmax_t)]; /* 20 decimal digits for 64 bits */
    int n = 0;
    /* The value 0 with precision 0 has no digits at all. */
    if (magnitude != 0 || spec->precision != 0) {
        do {
            reversed[n++] = digit_chars[magnitude % base];
            magnitude /= base;
        } while (magnitude != 0);
    }
    /* The precision is a minimum digit count; when given, '0' no longer pads. */
    int64_t zeros = spec->precision > n ? spec->precision - n : 0;
    int64_t owed = put_field_start(s, spec, prefix, zeros + n, spec->precision < 0);
    put_repeated(s, '0', zeros);
    while (n > 0) put_char(s, reversed[--n]);
    put_repeated(s, ' ', owed);
}

static void put_text_field(print_sink *s, const print_spec *spec, const char *text, size_t n) {
    int64_t owed = put_field_start(s, spec, "", (int64_t)n, 0);
    put_chars(s, text, n);
    put_repeated(s, ' ', owed);
}

static void put_string(print_sink *s, const print_spec *spec, const char *str) {
    if (!str) str = "(null)";
    /* With a precision, read no further than it: the text need not be NUL-terminated. */
    size_t n = 0;
    while ((spec->precision < 0 || n < (size_t)spec->precision) && str[n] != '\0') n++;
    put_text_field(s, spec, str, n);
}

/* ---- Floating point ------------------------------------------------------------------------
 * From the exact decimal d₁d₂… × 10^exponent of |v| (decimal.c), rounded once:
 *   %f  to the digit at 10^-precision         → integer digits, '.', `precision` digits
 *   %e  to precision+1 significant digits     → d₁ '.' d₂…  e±XX (at least two exponent digits)
 *   %g  to P = max(precision, 1) significant digits; with X the exponent of the rounded value,
 *       %f style with precision P-1-X when -4 ≤ X < P, else %e style with P-1; then, without
 *       '#', the fraction's trailing zeros (and a bare point) are dropped. */

static char digit_at(const al_decimal *d, int64_t i) {
    return i >= 0 && i < d->count ? d->digit[i] : '0';
}

/* A digit count for al_decimal_round: beyond the stored digits means "keep everything". */
static int rounding_position(int64_t keep) {
    if (keep > AL_DECIMAL_DIGITS) return AL_DECIMAL_DIGITS;
    if (keep < -1) return -1;
    return (int)keep;
}

static void put_float(print_sink *s, const print_spec *spec, double v, char conversion) {
    int upper = conversion == 'F' || conversion == 'E' || conversion == 'G';
    char style = upper ? (char)(conversion - 'A' + 'a') : conversion;
    const char *sign = sign_prefix(spec, signbit(v) != 0);
    if (!isfinite(v)) {
        /* As glibc: nan keeps its sign bit ("-nan"), and '0' pads with spaces here. */
        const char *text = isnan(v) ? (upper ? "NAN" : "nan") : (upper ? "INF" : "inf");
        int64_t owed = put_field_start(s, spec, sign, 3, 0);
        put_chars(s, text, 3);
        put_repeated(s, ' ', owed);
        return;
    }

    al_decimal d;
    al_decimal_from_double(&d, v);
    int64_t precision = spec->precision < 0 ? 6 : spec->precision;
    int exponential = style == 'e';
    if (style == 'g') {
        int64_t significant = precision == 0 ? 1 : precision;
        al_decimal_round(&d, rounding_position(significant));
        int64_t x = d.count > 0 ? d.exponent - 1 : 0;
        exponential = !(x >= -4 && x < significant);
        precision = exponential ? significant - 1 : significant - 1 - x;
        if (!spec->alternate) {
            int64_t fraction_digits = exponential ? d.count - 1 : d.count - d.exponent;
            if (fraction_digits < 0) fraction_digits = 0;
            if (precision > fraction_digits) precision = fraction_digits;
        }
    } else if (exponential) {
        al_decimal_round(&d, rounding_position(precision + 1));
    } else {
        al_decimal_round(&d, rounding_position(d.exponent + precision));
    }

    int point = precision > 0 || spec->alternate;
    int exp10 = d.count > 0 ? d.exponent - 1 : 0;
    int exp_abs = exp10 < 0 ? -exp10 : exp10;
    int int_digits = d.exponent > 0 ? d.exponent : 1;
    int64_t body_len = exponential ? 1 + point + precision + 2 + (exp_abs >= 100 ? 3 : 2)
                                   : int_digits + point + precision;
    int64_t owed = put_field_start(s, spec, sign, body_len, 1);
    if (exponential) {
        put_char(s, digit_at(&d, 0));
        if (point) put_char(s, '.');
        for (int64_t i = 1; i <= precision; i++) put_char(s, digit_at(&d, i));
        put_char(s, upper ? 'E' : 'e');
        put_char(s, exp10 < 0 ? '-' : '+');
        if (exp_abs >= 100) put_char(s, (char)('0' + exp_abs / 100));
        put_char(s, (char)('0' + exp_abs / 10 % 10));
        put_char(s, (char)('0' + exp_abs % 10));
    } else {
        /* Digit i sits at 10^(exponent-1-i): the integer part is digits 0..exponent-1. */
        if (d.exponent > 0) {
            for (int i = 0; i < d.exponent; i++) put_char(s, digit_at(&d, i));
        } else {
            put_char(s, '0');
        }
        if (point) put_char(s, '.');
        for (int64_t i = 0; i < precision; i++) put_char(s, digit_at(&d, d.exponent + i));
    }
    put_repeated(s, ' ', owed);
}

/* ---- The format string ---------------------------------------------------------------------- */

/* A decimal field width or precision; saturates at INT_MAX. */
static int read_count(const char **f) {
    int n = 0;
    for (; **f >= '0' && **f <= '9'; (*f)++)
        n = n > (INT_MAX - 9) / 10 ? INT_MAX : n * 10 + (**f - '0');
    return n;
}

static intmax_t signed_arg(va_list *ap, enum print_length length) {
    switch (length) {
    case LEN_CHAR: return (signed char)va_arg(*ap, int);
    case LEN_SHORT: return (short)va_arg(*ap, int);
    case LEN_LONG: return va_arg(*ap, long);
    case LEN_LLONG: return va_arg(*ap, long long);
    case LEN_SIZE: return va_arg(*ap, ptrdiff_t); /* the signed type of size_t's width */
    case LEN_MAX: return va_arg(*ap, intmax_t);
    case LEN_PTRDIFF: return va_arg(*ap, ptrdiff_t);
    case LEN_INT: break;
    }
    return va_arg(*ap, int);
}

static uintmax_t unsigned_arg(va_list *ap, enum print_length length) {
    switch (length) {
    case LEN_CHAR: return (unsigned char)va_arg(*ap, unsigned);
    case LEN_SHORT: return (unsigned short)va_arg(*ap, unsigned);
    case LEN_LONG: return va_arg(*ap, unsigned long);
    case LEN_LLONG: return va_arg(*ap, unsigned long long);
    case LEN_SIZE: return va_arg(*ap, size_t);
    case LEN_MAX: return va_arg(*ap, uintmax_t);
    case LEN_PTRDIFF: return (size_t)va_arg(*ap, ptrdiff_t);
    case LEN_INT: break;
    }
    return va_arg(*ap, unsigned);
}

/* Reads one conversion's flags, width, precision and length (f is just past the '%'). */
static enum print_length read_spec(const char **f, va_list *ap, print_spec *spec) {
    memset(spec, 0, sizeof *spec);
    spec->precision = -1;
    for (; **f != '\0' && strchr("-+ #0", **f); (*f)++) {
        switch (**f) {
        case '-': spec->left_align = 1; break;
        case '+': spec->plus_sign = 1; break;
        case ' ': spec->space_sign = 1; break;
        case '#': spec->alternate = 1; break;
        default: spec->zero_pad = 1; break;
        }
    }
    if (**f == '*') { /* a negative width from the arguments means '-' */
        (*f)++;
        int w = va_arg(*ap, int);
        if (w < 0) spec->left_align = 1;
        spec->width = w >= 0 ? w : w == INT_MIN ? INT_MAX : -w;
    } else {
        spec->width = read_count(f);
    }
    if (**f == '.') {
        (*f)++;
        if (**f == '*') { /* a negative precision from the arguments means none */
            (*f)++;
            int p = va_arg(*ap, int);
            spec->precision = p >= 0 ? p : -1;
        } else {
            spec->precision = read_count(f); /* "." alone is 0 */
        }
    }
    switch (**f) {
    case 'h':
        if (*++(*f) != 'h') return LEN_SHORT;
        (*f)++;
        return LEN_CHAR;
    case 'l':
        if (*++(*f) != 'l') return LEN_LONG;
        (*f)++;
        return LEN_LLONG;
    case 'z': (*f)++; return LEN_SIZE;
    case 'j': (*f)++; return LEN_MAX;
    case 't': (*f)++; return LEN_PTRDIFF;
    default: return LEN_INT;
    }
}

/* Appends fmt with its arguments to s. */
static void format_into(print_sink *s, const char *fmt, va_list *args) {
    for (const char *f = fmt; *f != '\0'; f++) {
        if (*f != '%') {
            put_char(s, *f);
            continue;
        }
        const char *spec_text = f++;
        print_spec spec;
        enum print_length length = read_spec(&f, args, &spec);
        char conversion = *f;
        /* %lc and %ls take wide characters, which this printf does not write: unsupported. */
        if (length != LEN_INT && (conversion == 'c' || conversion == 's')) conversion = '\0';
        switch (conversion) {
        case 'd':
        case 'i': {
            intmax_t v = signed_arg(args, length);
            uintmax_t magnitude = v < 0 ? (uintmax_t)0 - (uintmax_t)v : (uintmax_t)v;
            put_integer(s, &spec, magnitude, sign_prefix(&spec, v < 0), 10, 0);
            break;
        }
        case 'u': put_integer(s, &spec, unsigned_arg(args, length), "", 10, 0); break;
        case 'x':
        case 'X': {
            uintmax_t v = unsigned_arg(args, length);
            const char *prefix = spec.alternate && v != 0 ? (conversion == 'x' ? "0x" : "0X") : "";
            put_integer(s, &spec, v, prefix, 16, conversion == 'X');
            break;
        }
        case 'c': {
            char c = (char)va_arg(*args, int);
            put_text_field(s, &spec, &c, 1);
            break;
        }
        case 's': put_string(s, &spec, va_arg(*args, const char *)); break;
        case 'f':
        case 'F':
        case 'e':
        case 'E':
        case 'g':
        case 'G': put_float(s, &spec, va_arg(*args, double), conversion); break;
        case '%': put_char(s, '%'); break;
        default:
            /* Not a conversion this printf knows (%p, %n, %a, %Lf, %ls, a '%' at the very
             * end...): shown as text with the rest of the format, since reading arguments of
             * unknown types could crash. */
            put_chars(s, spec_text, strlen(spec_text));
            return;
        }
    }
}

int al_vsnprintf(char *buf, size_t cap, const char *fmt, va_list ap) {
    print_sink s = {buf, buf ? cap : 0, 0};
    /* A copy, so that helpers can take its address (va_list may be an array type). */
    va_list args;
    va_copy(args, ap);
    format_into(&s, fmt, &args);
    va_end(args);
    if (s.cap > 0) s.buf[s.len < s.cap ? s.len : s.cap - 1] = '\0';
    return s.len > INT_MAX ? -1 : (int)s.len;
}

int al_snprintf(char *buf, size_t cap, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = al_vsnprintf(buf, cap, fmt, ap);
    va_end(ap);
    return n;
}

const char *al_format_shortest(char buf[AL_SHORTEST_MAX], double v) {
    /* The fewest significant digits whose %g reads back as v (17 always do), as Python's
     * repr and JavaScript's String(number) choose them: 1.0000001 stays 1.0000001, 1e-50
     * stays 1e-50. */
    int digits = 1;
    for (; digits < 17; digits++) {
        al_snprintf(buf, AL_SHORTEST_MAX, "%.*g", digits, v);
        double back;
        if (!isfinite(v) || (al_decimal_parse(buf, &back) && back == v)) break;
    }
    /* Whole numbers below 10^17 in full (10000, not 1e+04): at least their integer digits. */
    int int_digits = 0;
    for (double m = fabs(v); m >= 1.0 && m < 1e17; m /= 10.0) int_digits++;
    al_snprintf(buf, AL_SHORTEST_MAX, "%.*g", digits > int_digits ? digits : int_digits, v);
    return buf;
}

const char *al_format_shortest_f32(char buf[AL_SHORTEST_MAX], float v) {
    /* The same for a float32 value: at most 9 digits, read back through float32. */
    for (int digits = 1; digits <= 9; digits++) {
        al_snprintf(buf, AL_SHORTEST_MAX, "%.*g", digits, (double)v);
        double back;
        if (!isfinite(v) || (al_decimal_parse(buf, &back) && (float)back == v)) break;
    }
    return buf;
}
