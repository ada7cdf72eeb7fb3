/* internal.h — helpers shared by the core's source files and not part of the public API:
 * error reporting, number formatting and parsing (the core's own snprintf and strtod),
 * overflow-checked size arithmetic, PyTorch-order reductions (so the demos print PyTorch's last
 * digit), and the KV cache's row access for the attention layer. */
#ifndef ATTNLAB_INTERNAL_H
#define ATTNLAB_INTERNAL_H

#include "attnlab.h"

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

/* Fills err (if not NULL) with status and a printf-style one-line message; returns status so
 * callers can write `return al_fail(err, AL_ERR_SHAPE, "...", ...);`. */
al_status al_fail(al_error *err, al_status status, const char *fmt, ...) AL_PRINTF(3, 4);

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

/* x.pow(2).sum() in PyTorch's order: each square rounded to float32, then al_sum_f32's order. */
float al_sum_squares_f32(const float *x, int64_t n);

/* ‖x‖₂ in float32 as torch.Tensor.norm() computes it for a contiguous row (AVX2 build):
 * 8 lanes of fused x·x + acc, lanes added left to right, tail added last, then sqrt.
 * Bit-identical to PyTorch for rows of whole 8-float vectors (the demos print head_dim 8);
 * with a tail of n % 8 values the last bit differs for a few percent of rows — PyTorch's tail
 * order there is not reproduced yet. */
float al_norm2_f32(const float *x, int64_t n);

/* Row m of the RoPE cos/sin tables from precomputed frequencies [head_dim/2]. */
void al_rope_table_row(float *cos_row, float *sin_row, int64_t m, const float *freq,
                       int64_t head_dim);

/* ---- GEMM (gemm.c): C[m, n] (+)= A[m, k] · B[k, n], B read in panels of AL_GEMM_NR columns.
 * Every output is summed over k in order with one fused multiply-add per term, whatever m is. */
#define AL_GEMM_NR 16
typedef struct {
    const float *p;       /* element (kk, j·NR + l) at p + j·panel_stride + kk·row_stride + l */
    int64_t panel_stride;
    int64_t row_stride;
    int padded;           /* panels hold NR columns even at the right edge (zeros beyond n) */
} al_bmat;
/* Floats needed to pack B given as W[n, k] (nn.Linear layout: B = Wᵀ). */
int64_t al_pack_panels_size(int64_t n, int64_t k);
void al_pack_panels(float *packed, const float *w /* [n, k] */, int64_t n, int64_t k);
al_bmat al_bmat_packed(const float *packed, int64_t k);
al_bmat al_bmat_rows(const float *b /* [k, n] with row stride ldb */, int64_t ldb);
void al_gemm(float *c, int64_t ldc, const float *a, int64_t lda, al_bmat b, int64_t m,
             int64_t n, int64_t k, int accumulate);

/* ---- KV cache internals used by the attention layer.
 * K is stored for the scores product as packed panels: for each (sequence, KV head), panels of
 * 16 tokens laid out [head_dim][16]; V as rows [max_seq, n_kv_heads, head_dim]. */
al_status al_kv_cache_check_append(const al_kv_cache *c, int64_t n_kv_heads, int64_t head_dim,
                                   int64_t batch, int64_t seq, al_error *err);
/* Stores token t of sequence b: k and v are [n_kv_heads, head_dim]. */
void al_kv_cache_store(al_kv_cache *c, int64_t b, int64_t t, const float *k, const float *v);
void al_kv_cache_commit(al_kv_cache *c, int64_t batch, int64_t seq);
/* Kᵀ of sequence b, KV head h as a GEMM operand (k = head_dim, n = tokens). */
al_bmat al_kv_cache_keys(const al_kv_cache *c, int64_t b, int64_t h);
/* V of sequence b, KV head h as a GEMM operand (k = tokens, n = head_dim). */
al_bmat al_kv_cache_values(const al_kv_cache *c, int64_t b, int64_t h);
/* Packs k [tokens, n_kv_heads, head_dim] into the same panel layout (for the uncached pass):
 * panels for KV head h start at out + h·panels·16·head_dim, panels = ceil(tokens / 16). */
void al_pack_keys(float *out, const float *k, int64_t tokens, int64_t n_kv_heads, int64_t head_dim);

#endif
