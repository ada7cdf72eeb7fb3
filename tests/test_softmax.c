/* test_softmax.c — al_softmax_torch_f32 against PyTorch 1.13's F.softmax, bit for bit, on the
 * rows of tests/fixtures/softmax/softmax_golden.txt (tests/fixtures/gen_softmax.py): every
 * length from 1 to 40 (shorter than one vector, whole vectors, tails), 64, 100 and 1000, narrow
 * and wide scores, masked (-inf) entries, in place and not. */
#include "check.h"
#include "golden.h"
#include "torch/softmax.h"

#define DEFAULT_FIXTURE "tests/fixtures/softmax/softmax_golden.txt"
enum { MAX_N = 1000 };

int main(int argc, char **argv) {
    const char *path = argc > 1 ? argv[1] : DEFAULT_FIXTURE;
    FILE *f = fopen(path, "r");
    CHECK(f != NULL, "cannot open %s", path);
    if (!f) CHECK_DONE();
    golden_src in = golden_stream(f);
    static float x[MAX_N], want[MAX_N], got[MAX_N];
    char tok[16];
    int rows = 0;
    while (golden_token(&in, tok, sizeof tok)) {
        int64_t n = 0;
        CHECK(!strcmp(tok, "row") && golden_i64(&in, &n) && n >= 1 && n <= MAX_N, "record %d: bad header", rows);
        if (strcmp(tok, "row") || n < 1 || n > MAX_N) break;
        CHECK(golden_f32_words(&in, x, (long)n) && golden_f32_words(&in, want, (long)n), "row %d: short", rows);
        al_softmax_torch_f32(got, x, n);
        int64_t bad = -1;
        for (int64_t i = 0; i < n && bad < 0; i++)
            if (al_bits_of_float(got[i]) != al_bits_of_float(want[i])) bad = i;
        CHECK(bad < 0, "row %d (n %lld): y[%lld] = %.9g, PyTorch %.9g", rows, (long long)n, (long long)bad,
              bad >= 0 ? (double)got[bad] : 0.0, bad >= 0 ? (double)want[bad] : 0.0);
        al_softmax_torch_f32(x, x, n); /* in place: the same bits */
        CHECK(!memcmp(x, got, (size_t)n * sizeof *x), "row %d: in place differs", rows);
        rows++;
    }
    fclose(f);
    CHECK(rows == 166, "%d rows read, 166 expected", rows);
    CHECK_DONE();
}
