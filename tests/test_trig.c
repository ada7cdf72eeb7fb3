/* test_trig.c — checks core/torch/sleef_trig.c against PyTorch 1.13's torch.cos / torch.sin
 * (SLEEF's Sleef_cosf8_u10 / Sleef_sinf8_u10) bit for bit, replaying the golden file written by
 * tests/fixtures/gen_trig.py:
 *   T/H  full RoPE tables (angles = (float)m * freq_i, m < end) through al_*_torch_n, compared
 *        block by block with FNV-1a hashes of torch's tables;
 *   V    8-lane vectors as torch evaluated them inside longer tensors, through al_*_torch_n;
 *   S    single values (torch on a tensor of 8 copies, equal to a 1-element tensor), through the
 *        scalar al_cosf_torch / al_sinf_torch;
 * plus properties that need no fixture (in place, the lane forms, the 1-ULP accuracy).
 *
 * Usage: test_trig [tests/fixtures/trig/trig_golden.txt]    (exit status 0 only if all pass) */

#include "torch/sleef_trig.h"
#include "check.h"
#include "golden.h"

#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_FIXTURE "tests/fixtures/trig/trig_golden.txt"
#define MAX_LINE 8192
#define MAX_HALF 512
#define SHOW 10 /* mismatches printed per section */

/* ---- per-section mismatch bookkeeping --------------------------------------------------- */

typedef struct {
    const char *name;
    long values, bad;
} section;

static void mismatch(section *s, const char *what, const char *tag, float x, float got,
                     float want) {
    s->bad++;
    if (s->bad <= SHOW)
        fprintf(stderr, "%s: %s(%s x=%08x %.9g) got %08x (%.9g) want %08x (%.9g)\n", s->name, what,
                tag, al_bits_of_float(x), x, al_bits_of_float(got), got, al_bits_of_float(want), want);
}

static void compare(section *s, const char *what, const char *tag, const float *x, const float *got,
                    const float *want, long n) {
    for (long i = 0; i < n; i++) {
        s->values++;
        if (al_bits_of_float(got[i]) != al_bits_of_float(want[i])) mismatch(s, what, tag, x[i], got[i], want[i]);
    }
}

/* ---- T / H: whole RoPE tables ------------------------------------------------------------- */

typedef struct {
    long head_dim, end, block, half;
    float *angles, *cos_t, *sin_t;
} rope_table;

static void table_free(rope_table *t) {
    free(t->angles);
    free(t->cos_t);
    free(t->sin_t);
    memset(t, 0, sizeof *t);
}

static int table_load(rope_table *t, golden_src *c, char *base, size_t base_cap) {
    float freq[MAX_HALF];
    table_free(t);
    if (!golden_long(c, &t->head_dim) || !golden_token(c, base, base_cap) ||
        !golden_long(c, &t->end) || !golden_long(c, &t->block))
        return 0;
    t->half = t->head_dim / 2;
    if (t->head_dim <= 0 || t->half > MAX_HALF || t->end <= 0 || t->block <= 0 ||
        t->end > (1L << 20))
        return 0;
    if (!golden_f32_words(c, freq, t->half)) return 0;
    size_t n = (size_t)t->end * (size_t)t->half;
    t->angles = malloc(n * sizeof(float));
    t->cos_t = malloc(n * sizeof(float));
    t->sin_t = malloc(n * sizeof(float));
    if (!t->angles || !t->cos_t || !t->sin_t) return 0;
    for (long m = 0; m < t->end; m++)
        for (long i = 0; i < t->half; i++) t->angles[m * t->half + i] = (float)m * freq[i];
    al_cosf_torch_n(t->cos_t, t->angles, (int64_t)n);
    al_sinf_torch_n(t->sin_t, t->angles, (int64_t)n);
    return 1;
}

static void table_block(section *s, const rope_table *t, const char *base, long b, uint64_t hc,
                        uint64_t hs) {
    long rows = t->block, first = b * rows;
    if (b < 0 || first + rows > t->end) {
        CHECK(0, "H block %ld outside the table (head_dim %ld, base %s)", b, t->head_dim, base);
        return;
    }
    const int64_t off = (int64_t)first * t->half, n = (int64_t)rows * t->half;
    s->values += 2 * n;
    const uint64_t gc = fnv1a64_floats(t->cos_t + off, n);
    const uint64_t gs = fnv1a64_floats(t->sin_t + off, n);
    if (gc != hc || gs != hs) {
        s->bad++;
        if (s->bad <= SHOW)
            fprintf(stderr,
                    "%s: head_dim %ld base %s rows %ld..%ld: %s differs "
                    "(cos hash %016" PRIx64 " want %016" PRIx64 ", sin hash %016" PRIx64
                    " want %016" PRIx64 "); first values x=%08x cos=%08x sin=%08x\n",
                    s->name, t->head_dim, base, first, first + rows - 1,
                    gc != hc ? (gs != hs ? "cos and sin" : "cos") : "sin", gc, hc, gs, hs,
                    al_bits_of_float(t->angles[off]), al_bits_of_float(t->cos_t[off]), al_bits_of_float(t->sin_t[off]));
    }
}

/* ---- properties that need no fixture ------------------------------------------------------ */

/* Distance in ULPs of got from the double-precision value (SLEEF's u10 bound is 1 ULP). */
static double ulp_error(float got, double exact) {
    if (exact == 0.0) return got == 0.0f ? 0.0 : INFINITY;
    int e;
    frexp(exact, &e);
    double ulp = ldexp(1.0, e - 24);
    if (fabs(exact) < 0x1p-126) ulp = 0x1p-149;
    return fabs((double)got - exact) / ulp;
}

static void properties(void) {
    /* in place, a tail that is not a multiple of 8, and n <= 0 */
    float buf[13], ref[13], x[13];
    for (int i = 0; i < 13; i++) x[i] = buf[i] = (float)(i * 37 - 200) * 0.731f;
    al_cosf_torch_n(ref, x, 13);
    al_cosf_torch_n(buf, buf, 13);
    CHECK(memcmp(buf, ref, sizeof buf) == 0, "in-place al_cosf_torch_n differs");
    for (int i = 0; i < 13; i++) buf[i] = x[i];
    al_sinf_torch_n(ref, x, 13);
    al_sinf_torch_n(buf, buf, 13);
    CHECK(memcmp(buf, ref, sizeof buf) == 0, "in-place al_sinf_torch_n differs");
    float untouched = 42.0f;
    al_cosf_torch_n(&untouched, x, 0);
    al_sinf_torch_n(&untouched, x, -3);
    CHECK(untouched == 42.0f, "n <= 0 wrote to out");

    /* the lane forms: |x| >= 125 ignores wide; the scalar form is the lane form with wide = 0;
     * each vector lane equals its lane form with the vector's choice */
    long bad_lane = 0, bad_ulp = 0;
    double worst = 0.0;
    uint32_t state = 12345u;
    for (long k = 0; k < 400000; k++) {
        state = state * 1664525u + 1013904223u;
        float v = (float)((double)(state >> 8) / 16777216.0 * 2e5 - 1e5);
        if (k % 2) v *= 1.0f / 512.0f; /* many below 125 too */
        float c0 = al_cosf_torch_lane(v, 0), c1 = al_cosf_torch_lane(v, 1);
        float s0 = al_sinf_torch_lane(v, 0), s1 = al_sinf_torch_lane(v, 1);
        if (al_bits_of_float(al_cosf_torch(v)) != al_bits_of_float(c0) || al_bits_of_float(al_sinf_torch(v)) != al_bits_of_float(s0))
            bad_lane++;
        if (!(fabsf(v) < 125.0f) && (al_bits_of_float(c0) != al_bits_of_float(c1) || al_bits_of_float(s0) != al_bits_of_float(s1)))
            bad_lane++;
        const double ec = ulp_error(c0, cos((double)v)), ec1 = ulp_error(c1, cos((double)v));
        const double es = ulp_error(s0, sin((double)v)), es1 = ulp_error(s1, sin((double)v));
        const double e = fmax(fmax(ec, ec1), fmax(es, es1));
        if (e > worst) worst = e;
        if (e > 1.0) {
            if (++bad_ulp <= SHOW)
                fprintf(stderr, "accuracy: x=%08x (%.9g) %.3f ULP\n", al_bits_of_float(v), v, e);
        }
    }
    CHECK(bad_lane == 0, "%ld lane-form disagreements", bad_lane);
    CHECK(bad_ulp == 0, "%ld results beyond 1 ULP of the double-precision value (worst %.3f)",
          bad_ulp, worst);
    printf("accuracy: worst %.3f ULP over 1.6M random results\n", worst);
}

int main(int argc, char **argv) {
    const char *path = argc > 1 ? argv[1] : DEFAULT_FIXTURE;
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "test_trig: cannot open %s\n", path);
        return 1;
    }

    section sec_table = {"rope tables", 0, 0}, sec_vec = {"vectors", 0, 0},
            sec_scalar = {"scalars", 0, 0};
    rope_table table = {0};
    char base[64] = "";
    char line[MAX_LINE], tok[64];
    long lineno = 0, n_t = 0, n_h = 0, n_v = 0, n_s = 0, bad_lines = 0;
    int have_table = 0;

    while (fgets(line, sizeof line, f)) {
        lineno++;
        golden_src c = golden_line(line);
        if (!golden_token(&c, tok, sizeof tok) || tok[0] == '#') continue;
        int ok = 1;
        if (strcmp(tok, "T") == 0) {
            ok = have_table = table_load(&table, &c, base, sizeof base);
            n_t++;
        } else if (strcmp(tok, "H") == 0) {
            long b;
            uint64_t hc, hs;
            ok = have_table && golden_long(&c, &b) && golden_hex64(&c, &hc) &&
                 golden_hex64(&c, &hs);
            if (ok) table_block(&sec_table, &table, base, b, hc, hs);
            n_h++;
        } else if (strcmp(tok, "V") == 0) {
            char tag[32];
            long n;
            float x[8], wc[8], ws[8], gc[8], gs[8];
            ok = golden_token(&c, tag, sizeof tag) && golden_long(&c, &n) && n >= 1 && n <= 8 &&
                 golden_f32_words(&c, x, n) && golden_f32_words(&c, wc, n) &&
                 golden_f32_words(&c, ws, n);
            if (ok) {
                al_cosf_torch_n(gc, x, n);
                al_sinf_torch_n(gs, x, n);
                compare(&sec_vec, "cos", tag, x, gc, wc, n);
                compare(&sec_vec, "sin", tag, x, gs, ws, n);
            }
            n_v++;
        } else if (strcmp(tok, "S") == 0) {
            char tag[32];
            float x, wc, ws;
            ok = golden_token(&c, tag, sizeof tag) && golden_f32_words(&c, &x, 1) &&
                 golden_f32_words(&c, &wc, 1) && golden_f32_words(&c, &ws, 1);
            if (ok) {
                float gc = al_cosf_torch(x), gs = al_sinf_torch(x);
                compare(&sec_scalar, "cos", tag, &x, &gc, &wc, 1);
                compare(&sec_scalar, "sin", tag, &x, &gs, &ws, 1);
                /* the same value as a 1-element and an 8-copy tensor */
                float x8[8], o8[8], o1;
                for (int i = 0; i < 8; i++) x8[i] = x;
                al_cosf_torch_n(o8, x8, 8);
                al_cosf_torch_n(&o1, &x, 1);
                for (int i = 0; i < 8; i++)
                    if (al_bits_of_float(o8[i]) != al_bits_of_float(wc))
                        mismatch(&sec_scalar, "cos_n8", tag, x, o8[i], wc);
                if (al_bits_of_float(o1) != al_bits_of_float(wc)) mismatch(&sec_scalar, "cos_n1", tag, x, o1, wc);
            }
            n_s++;
        } else {
            ok = 0;
        }
        if (!ok) {
            bad_lines++;
            if (bad_lines <= SHOW) fprintf(stderr, "%s:%ld: unreadable record\n", path, lineno);
        }
    }
    fclose(f);
    table_free(&table);

    CHECK(bad_lines == 0, "%ld unreadable lines in %s", bad_lines, path);
    CHECK(n_t == 32 && n_h > 0 && n_v > 0 && n_s > 0,
          "fixture incomplete: %ld T, %ld H, %ld V, %ld S", n_t, n_h, n_v, n_s);
    section *secs[] = {&sec_table, &sec_vec, &sec_scalar};
    for (int i = 0; i < 3; i++) {
        const char *unit = i == 0 ? "hashed blocks" : "values";
        CHECK(secs[i]->bad == 0, "%s: %ld %s differ from torch (%ld values checked)",
              secs[i]->name, secs[i]->bad, unit, secs[i]->values);
        printf("%s: %ld values, %ld %s differ\n", secs[i]->name, secs[i]->values, secs[i]->bad,
               unit);
    }
    properties();
    CHECK_DONE();
}
