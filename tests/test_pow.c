/* test_pow.c — checks core/torch/sleef_pow.c against PyTorch 1.13: every record of the golden file
 * written by tests/fixtures/gen_pow.py is recomputed and compared bit for bit.
 *   pairs: single powers from torch's vectorised (SLEEF) path   -> al_powf_torch()
 *   rope:  base ** (arange(0, d, 2).float() / d) for every even head_dim d, hashed per d
 *          -> al_powf_torch_scalar_tensor(); the vectorised prefixes are also checked with a
 *          hash that does not involve libm's powf (the tails are powf, and match torch only
 *          where this libm is the one torch used, glibc on the reference machine).
 * Plus properties that need no fixture (accuracy within 1 ulp of correct rounding, pow(x, 0),
 * pow(1, y), the 16-element block rule, in-place use).
 *
 * Usage: test_pow [tests/fixtures/pow/pow_golden.txt]    (exit status 0 only if all pass) */

#include "check.h"
#include "golden.h"
#include "torch/sleef_pow.h"

#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_FIXTURE "tests/fixtures/pow/pow_golden.txt"
#define SHOW_MAX 10
#define MAX_N 4096

static long total_pairs = 0, total_rope = 0;

static int check_pairs(golden_src *in) {
    long count;
    char tag[128];
    if (!golden_long(in, &count) || count < 0 || !golden_token(in, tag, sizeof tag)) return 0;
    long bad = 0;
    for (long k = 0; k < count; k++) {
        uint64_t xb, yb, rb;
        if (!golden_hex(in, &xb) || !golden_hex(in, &yb) || !golden_hex(in, &rb)) return 0;
        const float x = al_float_of_bits((uint32_t)xb), y = al_float_of_bits((uint32_t)yb);
        const uint32_t got = al_bits_of_float(al_powf_torch(x, y));
        if (got != (uint32_t)rb) {
            if (bad < SHOW_MAX)
                fprintf(stderr,
                        "  %s: pow(%.9g [%08" PRIx32 "], %.9g [%08" PRIx32 "]) = %.9g [%08" PRIx32
                        "], torch %.9g [%08" PRIx32 "]\n",
                        tag, x, (uint32_t)xb, y, (uint32_t)yb, al_float_of_bits(got), got,
                        al_float_of_bits((uint32_t)rb), (uint32_t)rb);
            bad++;
        }
    }
    CHECK(bad == 0, "pairs %s: %ld of %ld differ from torch", tag, bad, count);
    printf("  pairs %-8s %5ld values, %ld mismatches\n", tag, count, bad);
    total_pairs += count;
    return 1;
}

static int check_rope(golden_src *in) {
    uint64_t base_bits, prefix_want;
    long d_min, d_max;
    if (!golden_hex(in, &base_bits) || !golden_long(in, &d_min) || !golden_long(in, &d_max) ||
        !golden_hex(in, &prefix_want) || d_min < 2 || d_max > 2 * MAX_N || d_min % 2 || d_max % 2)
        return 0;
    const float base = al_float_of_bits((uint32_t)base_bits);
    static float e[MAX_N], out[MAX_N], lane[MAX_N];
    uint64_t prefix = GOLDEN_FNV64_BASIS;
    long bad = 0;
    for (long d = d_min; d <= d_max; d += 2) {
        uint64_t want;
        if (!golden_hex(in, &want)) return 0;
        const int64_t n = d / 2, vec = n - n % 16;
        /* torch.arange(0, d, 2).float() / d: exact even integers, one float32 division */
        for (int64_t i = 0; i < n; i++) e[i] = (float)(2 * i) / (float)d;
        al_powf_torch_scalar_tensor(out, base, e, n);
        for (int64_t i = 0; i < vec; i++) lane[i] = al_powf_torch(base, e[i]);
        prefix = fnv1a64_floats_update(prefix, lane, vec);
        const uint32_t got = fnv1a32_floats(out, n);
        if (got != (uint32_t)want) {
            if (bad < SHOW_MAX) {
                fprintf(stderr,
                        "  rope base %.9g head_dim %ld: hash %08" PRIx32 ", torch %08" PRIx32
                        " (%" PRId64 " SLEEF lanes, %" PRId64 " libm powf tail)\n",
                        base, d, got, (uint32_t)want, vec, n - vec);
                for (int64_t i = 0; i < n && i < 4; i++)
                    fprintf(stderr, "    [%" PRId64 "] %.9g^%.9g = %.9g [%08" PRIx32 "]\n", i, base,
                            e[i], out[i], al_bits_of_float(out[i]));
            }
            bad++;
        }
    }
    CHECK(prefix == prefix_want,
          "rope base %.9g: vectorised-prefix hash %016" PRIx64 ", torch %016" PRIx64, base, prefix,
          prefix_want);
    CHECK(bad == 0, "rope base %.9g: %ld of %ld head_dims differ from torch", base, bad,
          (d_max - d_min) / 2 + 1);
    printf("  rope base %-12.9g head_dim %ld..%ld: %ld vectors differ, SLEEF prefix %s\n", base,
           d_min, d_max, bad, prefix == prefix_want ? "ok" : "DIFFERS");
    total_rope += (d_max - d_min) / 2 + 1;
    return 1;
}

static void check_file(const char *path) {
    FILE *f = fopen(path, "r");
    CHECK(f != NULL, "cannot open %s", path);
    if (!f) return;
    golden_src in = golden_stream(f);
    char tok[64];
    int ok = 1;
    while (ok && golden_token(&in, tok, sizeof tok)) {
        if (strcmp(tok, "pairs") == 0) ok = check_pairs(&in);
        else if (strcmp(tok, "rope") == 0) ok = check_rope(&in);
        else ok = 0;
    }
    CHECK(ok, "%s: malformed near token '%s'", path, tok);
    CHECK(total_pairs > 0 && total_rope > 0, "%s: no records (%ld pairs, %ld rope vectors)", path,
          total_pairs, total_rope);
    fclose(f);
}

/* ---- properties without a fixture ---- */

static uint64_t rng_state = UINT64_C(0x9e3779b97f4a7c15);
static uint64_t next_u64(void) {
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}
static double next_unit(void) { return (double)(next_u64() >> 11) * 0x1p-53; }

/* Distance in ulps between two finite floats of the same sign. */
static int64_t ulp_distance(float a, float b) {
    return llabs((int64_t)(int32_t)al_bits_of_float(a) - (int64_t)(int32_t)al_bits_of_float(b));
}

static void check_properties(void) {
    /* SLEEF's u10 bound: within 1 ulp of the exact power; so within 1 ulp of the correctly
     * rounded one. Ranges kept away from overflow and subnormal results. */
    long worse = 0, differ = 0, n = 200000;
    for (long k = 0; k < n; k++) {
        const float x = (float)exp(next_unit() * 40.0 - 20.0);
        const float y = (float)(next_unit() * 8.0 - 4.0);
        const float got = al_powf_torch(x, y);
        const float cr = (float)pow((double)x, (double)y);
        const int64_t dist = ulp_distance(got, cr);
        if (dist != 0) differ++;
        if (dist > 1) {
            if (worse < SHOW_MAX)
                fprintf(stderr, "  pow(%a, %a) = %a, correctly rounded %a\n", x, y, got, cr);
            worse++;
        }
    }
    CHECK(worse == 0, "%ld of %ld powers are more than 1 ulp from the correctly rounded value",
          worse, n);
    CHECK(differ > 0, "no power differs from correct rounding: is this really SLEEF's algorithm?");
    printf("  accuracy: %ld of %ld differ from correct rounding, none by more than 1 ulp\n", differ,
           n);

    const float xs[] = {0.0f, -0.0f, 1.0f, -1.0f, 2.5f, -3.0f, INFINITY, -INFINITY, NAN, 1e-42f};
    for (size_t i = 0; i < sizeof xs / sizeof *xs; i++) {
        CHECK(al_bits_of_float(al_powf_torch(xs[i], 0.0f)) == al_bits_of_float(1.0f), "pow(%g, 0) != 1", xs[i]);
        CHECK(al_bits_of_float(al_powf_torch(xs[i], -0.0f)) == al_bits_of_float(1.0f), "pow(%g, -0) != 1", xs[i]);
        CHECK(al_bits_of_float(al_powf_torch(1.0f, xs[i])) == al_bits_of_float(1.0f), "pow(1, %g) != 1", xs[i]);
    }
    CHECK(al_powf_torch(-2.0f, 3.0f) == -8.0f, "pow(-2, 3) = %g", al_powf_torch(-2.0f, 3.0f));
    CHECK(isnan(al_powf_torch(-2.0f, 0.5f)), "pow(-2, 0.5) is not NaN");
    CHECK(al_bits_of_float(al_powf_torch(-0.0f, -3.0f)) == al_bits_of_float(-INFINITY), "pow(-0, -3) != -inf");

    /* Block rule: the first 16*(n/16) elements are SLEEF lanes, the rest libm powf; in place
     * gives the same. 6539.0063^0.43122676 is a pair where the two differ on glibc. */
    enum { N = 37 };
    float e[N], out[N], inplace[N];
    for (int i = 0; i < N; i++) e[i] = inplace[i] = (float)i / (float)N;
    al_powf_torch_scalar_tensor(out, 10000.0f, e, N);
    al_powf_torch_scalar_tensor(inplace, 10000.0f, inplace, N);
    int block_ok = 1;
    for (int i = 0; i < N; i++) {
        const float want = i < 32 ? al_powf_torch(10000.0f, e[i]) : powf(10000.0f, e[i]);
        block_ok &= al_bits_of_float(out[i]) == al_bits_of_float(want) && al_bits_of_float(inplace[i]) == al_bits_of_float(want);
    }
    CHECK(block_ok, "al_powf_torch_scalar_tensor does not follow the 16-element block rule");
}

int main(int argc, char **argv) {
    const char *path = argc > 1 ? argv[1] : DEFAULT_FIXTURE;
    printf("test_pow: %s\n", path);
    check_file(path);
    check_properties();
    CHECK_DONE();
}
