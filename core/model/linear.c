/* linear.c — y = x Wᵀ with PyTorch's weight layout W[out, in] (nn.Linear without bias).
 * The reference form of what the attention layer computes with its packed GEMM
 * (kernels/gemm.c): each output is accumulated over `in` in order with one fused multiply-add per term (multiply then
 * add in the WebAssembly build, as the GEMM there), so both give the same bits. */
#include "attnlab/model.h"
#include "kernels/gemm.h"

#include <math.h>

void al_linear_forward(float *y, const float *x, const float *w, int64_t n, int64_t in_dim,
                       int64_t out_dim) {
    for (int64_t r = 0; r < n; r++) {
        const float *xr = x + r * in_dim;
        for (int64_t o = 0; o < out_dim; o++) {
            const float *wo = w + o * in_dim;
            float acc = 0.0f;
            for (int64_t i = 0; i < in_dim; i++) {
#if defined(__wasm__)
                acc = acc + xr[i] * wo[i];
#else
                acc = fmaf(xr[i], wo[i], acc);
#endif
            }
            y[r * out_dim + o] = acc;
        }
    }
}
