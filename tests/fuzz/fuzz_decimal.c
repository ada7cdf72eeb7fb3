/* fuzz_decimal.c — libFuzzer harness that checks the core's own number conversions against
 * glibc, an independent, correctly rounding implementation of the same two functions:
 *
 *   parsing   the input as text: whatever prefix al_decimal_parse reads, strtod must read the
 *             same characters and give the same double, bit for bit (overflow to ±inf and
 *             underflow to subnormals or ±0 included);
 *   printing  the first 8 bytes as a double's bits and the next two as a conversion
 *             (%f %e %g %F %E %G, with or without '+', '-', ' ', '0', '#', a width and a
 *             precision up to 60): al_snprintf must write what snprintf writes, return the
 *             same length, and truncate the same way into a buffer of the size given by the
 *             next byte.
 *
 * Any difference aborts (with both results on stderr), so libFuzzer keeps the input. */
#include "base/internal.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TEXT_MAX 4096

static void fail(const char *what, const char *input, const char *ours, const char *theirs) {
    fprintf(stderr, "%s differs\n  input:  %s\n  al:     %s\n  glibc:  %s\n", what, input, ours, theirs);
    abort();
}

static void check_parse(const uint8_t *data, size_t size) {
    char text[TEXT_MAX + 1];
    const size_t n = size < TEXT_MAX ? size : TEXT_MAX;
    memcpy(text, data, n);
    text[n] = '\0';

    double ours = 0.0;
    const char *end = al_decimal_parse(text, &ours);
    if (!end) return; /* not a number by the core's grammar: nothing to compare */

    /* The prefix the core read, alone: strtod must read all of it, to the same value. */
    char prefix[TEXT_MAX + 1];
    const size_t len = (size_t)(end - text);
    memcpy(prefix, text, len);
    prefix[len] = '\0';
    char *theirs_end = NULL;
    const double theirs = strtod(prefix, &theirs_end);
    char a[64], b[64];
    snprintf(a, sizeof a, "%a (read %zu chars)", ours, len);
    snprintf(b, sizeof b, "%a (read %zu chars)", theirs, (size_t)(theirs_end - prefix));
    if ((size_t)(theirs_end - prefix) != len || memcmp(&ours, &theirs, sizeof ours) != 0) fail("parse", prefix, a, b);
}

static void check_print(const uint8_t *data, size_t size) {
    if (size < 11) return;
    double v;
    memcpy(&v, data, sizeof v);
    const uint8_t conv = data[8], shape = data[9], cap_byte = data[10];

    static const char conversions[] = "feg" "FEG";
    static const char *const flag_sets[] = {"", "+", "-", " ", "0", "#", "+0", "-#", " #0", "+-"};
    char fmt[32];
    const char c = conversions[conv % 6];
    const char *flags = flag_sets[(conv / 6) % 10];
    /* glibc 2.36 drops the zeros '#' must keep when %#g rounds up into a new digit (%#.3g of
     * 999.5 gives "1.e+03", not "1.00e+03"): there glibc is not a reference. */
    if ((c == 'g' || c == 'G') && strchr(flags, '#')) return;
    const int precision = shape % 61;            /* 0..60 */
    const int width = (shape / 61) ? (int)(conv % 40) : 0; /* sometimes a width up to 39 */
    if ((conv / 60) % 2) snprintf(fmt, sizeof fmt, "%%%s%d%c", flags, width, c); /* default precision */
    else snprintf(fmt, sizeof fmt, "%%%s%d.%d%c", flags, width, precision, c);

    /* %f of 1e308 with precision 60 is about 370 characters. */
    char ours[512], theirs[512];
    const int n_ours = al_snprintf(ours, sizeof ours, fmt, v);
    const int n_theirs = snprintf(theirs, sizeof theirs, fmt, v);
    char input[64];
    snprintf(input, sizeof input, "%s of %a", fmt, v);
    if (n_ours != n_theirs || strcmp(ours, theirs) != 0) fail("print", input, ours, theirs);

    /* Truncation into a small buffer: same return value, same stored prefix, NUL-terminated. */
    const size_t cap = cap_byte % 48;
    char small_ours[48], small_theirs[48];
    memset(small_ours, 'x', sizeof small_ours);
    memset(small_theirs, 'x', sizeof small_theirs);
    const int t_ours = al_snprintf(small_ours, cap, fmt, v);
    const int t_theirs = snprintf(small_theirs, cap, fmt, v);
    if (t_ours != t_theirs || memcmp(small_ours, small_theirs, sizeof small_ours) != 0)
        fail("truncated print", input, small_ours, small_theirs);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    check_parse(data, size);
    check_print(data, size);
    return 0;
}
