/* kernels/gemm.h — the matrix product every projection and attention product runs on, and the
 * packed operand layouts it reads. Not public API. */
#ifndef ATTNLAB_KERNELS_GEMM_H
#define ATTNLAB_KERNELS_GEMM_H

#include "base/internal.h"

/* C[m, n] (+)= A[m, k] · B[k, n], B read in panels of AL_GEMM_NR columns.
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

#endif
