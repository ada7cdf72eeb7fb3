/* fma_peak.c — how many multiply-adds per second one core can issue: twelve independent
 * accumulators (more than the FMA latency × issue width of current x86 cores), each updated
 *     acc[i] = acc[i] · x + y
 * in a loop whose loads and stores are nothing but registers — fused on x86 (AVX-512, AVX2),
 * a SIMD128 multiply then add in WebAssembly. A matrix kernel can only approach this number;
 * the bench reports prefill speed against it. */
#define _POSIX_C_SOURCE 199309L
#include "attnlab/kernels.h"
#include "kernels/fma_peak.h"

#include <math.h>
#include <stdint.h>
#include <time.h>

#if defined(__wasm_simd128__)
#include <wasm_simd128.h>
#elif defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define AL_X86_DISPATCH 1
#endif

enum { ACCUMULATORS = 12 };

static double seconds_now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* x slightly above 1 and y slightly below it keep every accumulator finite and normal. */
static float chain_portable(int64_t iters) {
    float acc[ACCUMULATORS];
    for (int i = 0; i < ACCUMULATORS; i++) acc[i] = (float)i;
    const float x = 1.0000001f, y = 0.9999999f;
    for (int64_t it = 0; it < iters; it++)
        for (int i = 0; i < ACCUMULATORS; i++) acc[i] = fmaf(acc[i], x, y);
    float s = 0.0f;
    for (int i = 0; i < ACCUMULATORS; i++) s += acc[i];
    return s;
}

#if defined(__wasm_simd128__)
/* WebAssembly SIMD128: four lanes, and no fused form — acc = acc · x + y is a multiply then an
 * add, the two operations the GEMM's inner step issues (counted as the 2 flops of one
 * multiply-add). A function of its own, called again and again: an engine compiles a function
 * first with a quick baseline compiler and optimises it only between calls (V8: Liftoff, then
 * TurboFan), so inlined into its caller the loop would be timed unoptimised. */
static volatile float wasm_x = 0.9999999f, wasm_y = 1e-7f;
__attribute__((noinline)) static float chain_wasm(int64_t iters) {
    v128_t acc[ACCUMULATORS];
    for (int i = 0; i < ACCUMULATORS; i++) acc[i] = wasm_f32x4_splat((float)i);
    const v128_t x = wasm_f32x4_splat(wasm_x), y = wasm_f32x4_splat(wasm_y);
    for (int64_t it = 0; it < iters; it++)
        for (int i = 0; i < ACCUMULATORS; i++) acc[i] = wasm_f32x4_add(wasm_f32x4_mul(acc[i], x), y);
    v128_t s = acc[0];
    for (int i = 1; i < ACCUMULATORS; i++) s = wasm_f32x4_add(s, acc[i]);
    /* every lane into the result, or the compiler keeps only the lane read */
    return wasm_f32x4_extract_lane(s, 0) + wasm_f32x4_extract_lane(s, 1) + wasm_f32x4_extract_lane(s, 2) +
           wasm_f32x4_extract_lane(s, 3);
}
#endif

#if defined(AL_X86_DISPATCH)
__attribute__((target("avx2,fma"))) static float chain_avx2(int64_t iters) {
    __m256 acc[ACCUMULATORS];
    for (int i = 0; i < ACCUMULATORS; i++) acc[i] = _mm256_set1_ps((float)i);
    const __m256 x = _mm256_set1_ps(1.0000001f), y = _mm256_set1_ps(0.9999999f);
    for (int64_t it = 0; it < iters; it++)
        for (int i = 0; i < ACCUMULATORS; i++) acc[i] = _mm256_fmadd_ps(acc[i], x, y);
    __m256 s = acc[0];
    for (int i = 1; i < ACCUMULATORS; i++) s = _mm256_add_ps(s, acc[i]);
    float lanes[8];
    _mm256_storeu_ps(lanes, s);
    return lanes[0];
}

__attribute__((target("avx512f"))) static float chain_avx512(int64_t iters) {
    __m512 acc[ACCUMULATORS];
    for (int i = 0; i < ACCUMULATORS; i++) acc[i] = _mm512_set1_ps((float)i);
    const __m512 x = _mm512_set1_ps(1.0000001f), y = _mm512_set1_ps(0.9999999f);
    for (int64_t it = 0; it < iters; it++)
        for (int i = 0; i < ACCUMULATORS; i++) acc[i] = _mm512_fmadd_ps(acc[i], x, y);
    __m512 s = acc[0];
    for (int i = 1; i < ACCUMULATORS; i++) s = _mm512_add_ps(s, acc[i]);
    return _mm512_reduce_add_ps(s);
}
#endif

double al_fma_peak_gflops(int *lanes) {
    float (*chain)(int64_t) = chain_portable;
    int width = 1;
#if defined(__wasm_simd128__)
    chain = chain_wasm, width = 4;
#endif
#if defined(AL_X86_DISPATCH)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f")) chain = chain_avx512, width = 16;
    else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) chain = chain_avx2, width = 8;
#endif
    if (lanes) *lanes = width;
    /* Grow the run until it takes ~20 ms, then keep the best of five at that length. */
    int64_t iters = 1 << 16;
    volatile float sink = 0.0f;
    double t = 0.0;
    for (;;) {
        const double t0 = seconds_now();
        sink += chain(iters);
        t = seconds_now() - t0;
        if (t >= 0.02 || iters >= ((int64_t)1 << 40)) break;
        iters *= 2;
    }
    double best = t;
    for (int r = 0; r < 5; r++) {
        const double t0 = seconds_now();
        sink += chain(iters);
        const double dt = seconds_now() - t0;
        if (dt < best) best = dt;
    }
    (void)sink;
    return best > 0.0 ? 2.0 * ACCUMULATORS * width * (double)iters / best * 1e-9 : 0.0;
}
