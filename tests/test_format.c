/* test_format.c — checks al_format_tensor and al_format_size byte for byte against the strings
 * PyTorch 1.13 printed for the same tensors (fixture written by tests/fixtures/gen_format.py),
 * plus the snprintf-style contract: full length returned, output truncated but always
 * NUL-terminated, nothing written past cap.
 *
 * Usage: test_format tests/fixtures/format/tensor_repr.txt */

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnlab.h"
#include "check.h"

#define MAX_DIMS 64
#define CANARY 0x5A /* filler byte: any change past cap means an overflow */

/* Reads "<key> <nbytes>\n<bytes>\n"; returns a malloc'ed NUL-terminated string or NULL. */
static char *read_string_field(FILE *f, const char *key) {
    char word[64];
    size_t n;
    if (fscanf(f, " %63s %zu", word, &n) != 2 || strcmp(word, key) != 0) return NULL;
    if (fgetc(f) != '\n') return NULL;
    char *text = malloc(n + 1);
    if (!text) return NULL;
    if (fread(text, 1, n, f) != n || fgetc(f) != '\n') {
        free(text);
        return NULL;
    }
    text[n] = '\0';
    return text;
}

/* Prints both strings, and the first differing offset, so a mismatch is easy to read. */
static void report_mismatch(const char *name, const char *got, const char *want) {
    size_t i = 0;
    while (got[i] && got[i] == want[i]) i++;
    fprintf(stderr, "--- %s: first difference at byte %zu\n--- torch:\n%s\n--- attnlab:\n%s\n---\n",
            name, i, want, got);
}

/* The snprintf contract for one call: with capacity cap, the buffer holds the first
 * min(len, cap - 1) bytes of the full text plus a NUL, and the bytes past cap are untouched. */
typedef size_t (*format_call)(char *buf, size_t cap, const void *ctx);

static void check_truncation(const char *name, format_call call, const void *ctx,
                             const char *full_text) {
    size_t len = strlen(full_text);
    size_t caps[] = {0, 1, 2, 7, 8, len / 2, len > 0 ? len - 1 : 0, len, len + 1};
    for (size_t c = 0; c < sizeof caps / sizeof caps[0]; c++) {
        size_t cap = caps[c];
        char *buf = malloc(cap + 16);
        if (!buf) { CHECK(0, "out of memory"); return; }
        memset(buf, CANARY, cap + 16);
        size_t ret = call(buf, cap, ctx);
        CHECK(ret == len, "%s: cap %zu returned %zu, want %zu", name, cap, ret, len);
        if (cap > 0) {
            size_t kept = len < cap - 1 ? len : cap - 1;
            CHECK(memcmp(buf, full_text, kept) == 0 && buf[kept] == '\0',
                  "%s: cap %zu: wrong truncated text", name, cap);
        }
        int untouched = 1;
        for (size_t i = cap; i < cap + 16; i++) untouched &= (unsigned char)buf[i] == CANARY;
        CHECK(untouched, "%s: cap %zu: wrote past the capacity", name, cap);
        free(buf);
    }
}

typedef struct {
    const float *values;
    const int64_t *ints;
    const int64_t *shape;
    int ndim;
    const char *suffix;
} tensor_case;

static size_t call_format_tensor(char *buf, size_t cap, const void *ctx) {
    const tensor_case *t = ctx;
    return al_format_tensor(buf, cap, t->values, t->ints, t->shape, t->ndim, t->suffix);
}

typedef struct {
    const int64_t *shape;
    int ndim;
} size_case;

static size_t call_format_size(char *buf, size_t cap, const void *ctx) {
    const size_case *s = ctx;
    return al_format_size(buf, cap, s->shape, s->ndim);
}

/* Formats into an exactly sized buffer (after a size query) and compares with torch. */
static void check_text(const char *name, format_call call, const void *ctx, const char *want) {
    size_t len = call(NULL, 0, ctx);
    char *got = malloc(len + 1);
    if (!got) { CHECK(0, "out of memory"); return; }
    size_t ret = call(got, len + 1, ctx);
    CHECK(ret == len, "%s: size query said %zu, formatting returned %zu", name, len, ret);
    int same = ret == strlen(want) && strcmp(got, want) == 0;
    CHECK(same, "%s: text differs from torch", name);
    if (!same) report_mismatch(name, got, want);
    /* The truncation contract is checked against our own full text, so that a wrong
     * character above is reported once and not again for every capacity. */
    check_truncation(name, call, ctx, got);
    free(got);
}

static int run_tensor_record(FILE *f) {
    char name[128], kind[4];
    int ndim;
    int64_t shape[MAX_DIMS], numel;
    if (fscanf(f, " %127s %3s %d", name, kind, &ndim) != 3 || ndim < 0 || ndim > MAX_DIMS)
        return 0;
    for (int d = 0; d < ndim; d++)
        if (fscanf(f, " %" SCNd64, &shape[d]) != 1) return 0;
    if (fscanf(f, " %" SCNd64, &numel) != 1 || numel < 0) return 0;

    int is_int = kind[0] == 'I';
    float *values = malloc(sizeof(float) * (size_t)(numel > 0 ? numel : 1));
    int64_t *ints = malloc(sizeof(int64_t) * (size_t)(numel > 0 ? numel : 1));
    char *suffix = NULL, *want = NULL;
    int ok = values && ints;
    for (int64_t i = 0; ok && i < numel; i++) {
        if (is_int) {
            ok = fscanf(f, " %" SCNd64, &ints[i]) == 1;
        } else {
            uint32_t bits;
            ok = fscanf(f, " %" SCNx32, &bits) == 1;
            memcpy(&values[i], &bits, sizeof bits);
        }
    }
    if (ok) ok = (suffix = read_string_field(f, "suffix")) != NULL;
    if (ok) ok = (want = read_string_field(f, "repr")) != NULL;
    if (ok) {
        tensor_case t = {is_int ? NULL : values, is_int ? ints : NULL, shape, ndim,
                         suffix[0] ? suffix : NULL};
        check_text(name, call_format_tensor, &t, want);
    }
    free(values);
    free(ints);
    free(suffix);
    free(want);
    return ok;
}

static int run_size_record(FILE *f) {
    char name[128];
    int ndim;
    int64_t shape[MAX_DIMS];
    if (fscanf(f, " %127s %d", name, &ndim) != 2 || ndim < 0 || ndim > MAX_DIMS) return 0;
    for (int d = 0; d < ndim; d++)
        if (fscanf(f, " %" SCNd64, &shape[d]) != 1) return 0;
    char *want = read_string_field(f, "repr");
    if (!want) return 0;
    size_case s = {shape, ndim};
    check_text(name, call_format_size, &s, want);
    free(want);
    return 1;
}

/* Cases written by hand: the tutorial's own lines, and arguments the fixture cannot hold. */
static void check_hand_written(void) {
    char buf[256];
    const float scalar = 3.5f;
    CHECK(al_format_tensor(buf, sizeof buf, &scalar, NULL, NULL, 0, NULL) == 14 &&
              strcmp(buf, "tensor(3.5000)") == 0,
          "0-D tensor: got \"%s\"", buf);

    const float row[4] = {0.48372f, 0.08869f, 0.31574f, -0.09238f};
    const int64_t row_shape[1] = {4};
    al_format_tensor(buf, sizeof buf, row, NULL, row_shape, 1, ", grad_fn=<SelectBackward0>");
    CHECK(strcmp(buf, "tensor([ 0.4837,  0.0887,  0.3157, -0.0924], grad_fn=<SelectBackward0>)")
              == 0, "vector with grad_fn: got \"%s\"", buf);

    const float mask[9] = {0, -INFINITY, -INFINITY, 0, 0, -INFINITY, 0, 0, 0};
    const int64_t mask_shape[2] = {3, 3};
    al_format_tensor(buf, sizeof buf, mask, NULL, mask_shape, 2, NULL);
    CHECK(strcmp(buf, "tensor([[0., -inf, -inf],\n        [0., 0., -inf],\n        [0., 0., 0.]])")
              == 0, "causal mask: got \"%s\"", buf);

    const int64_t ids[6] = {1, 3, 5, 2, 4, 6};
    const int64_t ids_shape[2] = {2, 3};
    al_format_tensor(buf, sizeof buf, NULL, ids, ids_shape, 2, NULL);
    CHECK(strcmp(buf, "tensor([[1, 3, 5],\n        [2, 4, 6]])") == 0, "int64: got \"%s\"", buf);

    const int64_t size_shape[3] = {2, 3, 4};
    CHECK(al_format_size(buf, sizeof buf, size_shape, 3) == 21 &&
              strcmp(buf, "torch.Size([2, 3, 4])") == 0, "torch.Size: got \"%s\"", buf);

    /* Invalid arguments: empty text and 0, never a crash. */
    const int64_t negative_shape[2] = {2, -1};
    const int64_t huge_shape[3] = {INT64_C(1) << 40, INT64_C(1) << 40, INT64_C(1) << 40};
    strcpy(buf, "x");
    CHECK(al_format_tensor(buf, sizeof buf, row, NULL, negative_shape, 2, NULL) == -1 &&
              buf[0] == '\0', "negative dimension accepted");
    CHECK(al_format_tensor(buf, sizeof buf, row, NULL, row_shape, -1, NULL) == -1,
          "negative ndim accepted");
    CHECK(al_format_tensor(buf, sizeof buf, row, NULL, NULL, 1, NULL) == -1, "NULL shape accepted");
    CHECK(al_format_tensor(buf, sizeof buf, NULL, NULL, row_shape, 1, NULL) == -1,
          "NULL data accepted");
    CHECK(al_format_tensor(buf, sizeof buf, row, NULL, huge_shape, 3, NULL) == -1,
          "element count overflow accepted");
    CHECK(al_format_size(buf, sizeof buf, NULL, 2) == -1, "NULL size shape accepted");
    /* An empty tensor needs no data. */
    const int64_t empty_shape[2] = {0, 3};
    al_format_tensor(buf, sizeof buf, NULL, NULL, empty_shape, 2, NULL);
    CHECK(strcmp(buf, "tensor([], size=(0, 3))") == 0, "empty without data: got \"%s\"", buf);
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s tests/fixtures/format/tensor_repr.txt\n", argv[0]);
        return 2;
    }
    FILE *f = fopen(argv[1], "rb");
    if (!f) {
        perror(argv[1]);
        return 2;
    }
    (void)check_close; /* check.h's float comparison is unused here; this keeps -Werror quiet */
    check_hand_written();
    int tensors = 0, sizes = 0;
    char word[16];
    while (fscanf(f, " %15s", word) == 1) {
        int ok = 0;
        if (strcmp(word, "tensor") == 0) {
            ok = run_tensor_record(f);
            tensors++;
        } else if (strcmp(word, "size") == 0) {
            ok = run_size_record(f);
            sizes++;
        }
        if (!ok) {
            CHECK(0, "malformed fixture record after %d tensors, %d sizes", tensors, sizes);
            break;
        }
    }
    fclose(f);
    CHECK(tensors > 100 && sizes > 0, "fixture too small: %d tensors, %d sizes", tensors, sizes);
    printf("%d tensor reprs and %d torch.Size reprs compared\n", tensors, sizes);
    CHECK_DONE();
}
