/* check.h — the tiny assertion harness of the native tests: each CHECK prints file:line and
 * what failed, counts the failure and carries on; test programs end with CHECK_DONE(), which
 * prints a summary and returns non-zero if anything failed. */
#ifndef ATTNLAB_CHECK_H
#define ATTNLAB_CHECK_H

#include <math.h>
#include <stdio.h>

static int check_failures = 0;
static int check_count = 0;

#define CHECK(cond, ...)                                                    \
    do {                                                                    \
        check_count++;                                                      \
        if (!(cond)) {                                                      \
            check_failures++;                                               \
            fprintf(stderr, "%s:%d: CHECK(%s) failed: ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                   \
            fputc('\n', stderr);                                            \
        }                                                                   \
    } while (0)

/* Compares n floats with tolerance tol, absolute for |expected| <= 1 and relative above.
 * Prints the largest difference and the first differing values on failure. */
static inline int check_close(const char *what, const float *got, const float *want, long n, double tol) {
    double worst = 0.0;
    long worst_i = -1, first_bad = -1;
    for (long i = 0; i < n; i++) {
        double g = got[i], w = want[i];
        double d;
        if (isinf(w) || isnan(w)) d = (g == w || (isnan(g) && isnan(w))) ? 0.0 : INFINITY;
        else d = fabs(g - w) / (fabs(w) > 1.0 ? fabs(w) : 1.0);
        if (!(d <= worst)) { worst = d; worst_i = i; }
        if (!(d <= tol) && first_bad < 0) first_bad = i;
    }
    check_count++;
    if (first_bad >= 0) {
        check_failures++;
        fprintf(stderr, "%s: max diff %.3e at [%ld] (got %.9g, want %.9g), tolerance %.1e\n",
                what, worst, worst_i, got[worst_i], want[worst_i], tol);
        for (long i = first_bad, shown = 0; i < n && shown < 5; i++) {
            double g = got[i], w = want[i];
            double d = fabs(g - w) / (fabs(w) > 1.0 ? fabs(w) : 1.0);
            if (!(d <= tol)) { fprintf(stderr, "  [%ld] got %.9g want %.9g\n", i, g, w); shown++; }
        }
        return 0;
    }
    return 1;
}

#define CHECK_DONE()                                                          \
    do {                                                                      \
        printf("%s: %d checks, %d failed\n", __FILE__, check_count, check_failures); \
        return check_failures ? 1 : 0;                                        \
    } while (0)

#endif
