/* kernels/fma_peak.h — the machine's fused multiply-add throughput, measured: the ceiling any
 * matrix product on one thread can reach here. Not public API. */
#ifndef ATTNLAB_KERNELS_FMA_PEAK_H
#define ATTNLAB_KERNELS_FMA_PEAK_H

/* GFLOP/s (2 per multiply-add) of independent multiply-adds on the widest vectors the GEMM
 * uses on this machine (AVX-512 or AVX2 fused, WebAssembly's SIMD128 multiply then add, else
 * scalar fmaf), best of five timed runs of ~20 ms each; the number of lanes used is written to
 * *lanes if not NULL. */
double al_fma_peak_gflops(int *lanes);

#endif
