/* kernels/gemm.h — the matrix product every projection and attention product runs on, and the
 * packed operand layouts it reads. Not public API. */
#ifndef ATTNLAB_KERNELS_GEMM_H
#define ATTNLAB_KERNELS_GEMM_H

#include "attnlab/kernels.h"
#include "base/internal.h"

/* C[m, n] (+)= A[m, k] · B[k, n], B read in panels of AL_GEMM_NR columns.
 * Every output is summed over k in order with one fused multiply-add per term, whatever m is. */
#define AL_GEMM_NR 16
typedef struct {
    const void *p;        /* element (kk, j·NR + l) at p + j·panel_stride + kk·row_stride + l */
    int64_t panel_stride;
    int64_t row_stride;
    int padded;           /* panels hold NR columns even at the right edge (zeros beyond n) */
    al_weight_dtype dtype; /* the elements' type: 16-bit ones only in packed panels, widened
                            * exactly a block at a time before the kernels read them */
} al_bmat;
/* Elements needed to pack B given as W[n, k] (nn.Linear layout: B = Wᵀ). */
int64_t al_pack_panels_size(int64_t n, int64_t k);
void al_pack_panels(float *packed, const float *w /* [n, k] */, int64_t n, int64_t k);
/* Where element (row, col) of W[n, k] goes in its panels: panel col / NR, row kk, lane col % NR. */
static inline int64_t al_pack_panels_at(int64_t row, int64_t col, int64_t k) {
    return (row / AL_GEMM_NR) * k * AL_GEMM_NR + col * AL_GEMM_NR + row % AL_GEMM_NR;
}
al_bmat al_bmat_packed(const float *packed, int64_t k);
/* Panels of `dtype` elements (al_pack_panels' layout). */
al_bmat al_bmat_panels(const void *packed, al_weight_dtype dtype, int64_t k);
/* out[i] = in[i · stride] widened to float32, i < n: exact. */
void al_widen(float *out, const void *in, al_weight_dtype dtype, int64_t n, int64_t stride);
al_bmat al_bmat_rows(const float *b /* [k, n] with row stride ldb */, int64_t ldb);
void al_gemm(float *c, int64_t ldc, const float *a, int64_t lda, al_bmat b, int64_t m,
             int64_t n, int64_t k, int accumulate);
/* `count` products of one shape, operands a fixed step apart (cuBLAS's strided batch): for g <
 * count, C_g [m, n] (+)= A_g [m, k] · B_g [k, n] with C_g at c + g·c_step, A_g at a + g·a_step
 * and B_g b's panels moved g·b_step elements on (the heads of a decode step, each against its
 * own KV head). Each product's numbers are al_gemm's for it alone. */
void al_gemm_batch(float *c, int64_t ldc, int64_t c_step, const float *a, int64_t lda, int64_t a_step, al_bmat b,
                   int64_t b_step, int64_t count, int64_t m, int64_t n, int64_t k, int accumulate);

#endif
