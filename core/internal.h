/* internal.h — helpers shared by the core's source files and not part of the public API:
 * error reporting, overflow-checked size arithmetic, PyTorch-order reductions (so the demos
 * print PyTorch's last digit), and the KV cache's row access for the attention layer. */
#ifndef ATTNLAB_INTERNAL_H
#define ATTNLAB_INTERNAL_H

#include "attnlab.h"

#include <stdarg.h>

#if defined(__GNUC__)
#define AL_PRINTF(fmt_index, args_index) __attribute__((format(printf, fmt_index, args_index)))
#else
#define AL_PRINTF(fmt_index, args_index)
#endif

/* Fills err (if not NULL) with status and a printf-style one-line message; returns status so
 * callers can write `return al_fail(err, AL_ERR_SHAPE, "...", ...);`. */
al_status al_fail(al_error *err, al_status status, const char *fmt, ...) AL_PRINTF(3, 4);

/* Parses the whole string as a finite number (strtod syntax); 0 on junk, overflow or inf/nan. */
int al_parse_finite(const char *s, double *out);

/* a·b into *out; returns 0 (and leaves *out alone) if it overflows or an input is negative. */
int al_mul_ok(int64_t a, int64_t b, int64_t *out);

/* x.pow(2).sum() in PyTorch's order: each square rounded to float32, then al_sum_f32's order. */
float al_sum_squares_f32(const float *x, int64_t n);

/* ‖x‖₂ in float32 as torch.Tensor.norm() computes it for a contiguous row (AVX2 build):
 * 8 lanes of fused x·x + acc, lanes added left to right, tail added last, then sqrt. */
float al_norm2_f32(const float *x, int64_t n);

/* Row m of the RoPE cos/sin tables from precomputed frequencies [head_dim/2]. */
void al_rope_table_row(float *cos_row, float *sin_row, int64_t m, const float *freq,
                       int64_t head_dim);

/* KV cache internals used by the attention layer. A row is [n_kv_heads, head_dim] floats. */
al_status al_kv_cache_check_append(const al_kv_cache *c, int64_t n_kv_heads, int64_t head_dim,
                                   int64_t batch, int64_t seq, al_error *err);
float *al_kv_cache_row(al_kv_cache *c, int which_v, int64_t b, int64_t t);
void al_kv_cache_commit(al_kv_cache *c, int64_t batch, int64_t seq);

#endif
