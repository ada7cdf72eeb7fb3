/* stream_read.c — how many bytes per second one core reads from memory: a sum of a buffer in
 * independent accumulators, so the loop waits on nothing but the loads. A decode step reads
 * every weight once, so its speed is bounded by this rate over the weights' bytes; measured
 * with narrower loads than the machine has (SSE2's 16 bytes on a core that loads 64) the
 * "bound" is the loop's and not the memory's, and a decode step beats it. */
#define _POSIX_C_SOURCE 199309L
#include "attnlab/kernels.h"
#include "kernels/stream_read.h"

#include <time.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__)) && !defined(__wasm__)
#include <immintrin.h>
#define AL_X86_DISPATCH 1
#endif

static double seconds_now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* 16 lanes, 4 loads of 64 bytes in flight per step (n a multiple of 64 floats). */
static float sum_portable(const float *w, int64_t n) {
    float lane[16] = {0};
    for (int64_t i = 0; i < n; i += 16)
        for (int j = 0; j < 16; j++) lane[j] += w[i + j];
    float s = 0.0f;
    for (int j = 0; j < 16; j++) s += lane[j];
    return s;
}

#if defined(AL_X86_DISPATCH)
__attribute__((target("avx2"))) static float sum_avx2(const float *w, int64_t n) {
    __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
    for (int64_t i = 0; i < n; i += 32) {
        a0 = _mm256_add_ps(a0, _mm256_load_ps(w + i));
        a1 = _mm256_add_ps(a1, _mm256_load_ps(w + i + 8));
        a2 = _mm256_add_ps(a2, _mm256_load_ps(w + i + 16));
        a3 = _mm256_add_ps(a3, _mm256_load_ps(w + i + 24));
    }
    float lanes[8];
    _mm256_storeu_ps(lanes, _mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3)));
    float s = 0.0f;
    for (int j = 0; j < 8; j++) s += lanes[j];
    return s;
}

__attribute__((target("avx512f"))) static float sum_avx512(const float *w, int64_t n) {
    __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
    for (int64_t i = 0; i < n; i += 64) {
        a0 = _mm512_add_ps(a0, _mm512_load_ps(w + i));
        a1 = _mm512_add_ps(a1, _mm512_load_ps(w + i + 16));
        a2 = _mm512_add_ps(a2, _mm512_load_ps(w + i + 32));
        a3 = _mm512_add_ps(a3, _mm512_load_ps(w + i + 48));
    }
    return _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)));
}
#endif

double al_stream_read_gb_per_s(const float *buf, int64_t n, int passes, int *lanes, float *sink) {
    float (*sum)(const float *, int64_t) = sum_portable;
    int width = 4; /* the portable loop as compilers vectorise it: SSE2, NEON, SIMD128 */
#if defined(AL_X86_DISPATCH)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f")) sum = sum_avx512, width = 16;
    else if (__builtin_cpu_supports("avx2")) sum = sum_avx2, width = 8;
#endif
    if (lanes) *lanes = width;
    float s = sum(buf, n); /* the untimed pass: pages mapped, clock up */
    double best = 0.0;
    for (int r = 0; r < passes; r++) {
        const double t0 = seconds_now();
        s += sum(buf, n);
        const double dt = seconds_now() - t0;
        if (r == 0 || dt < best) best = dt;
    }
    if (sink) *sink = s;
    return best > 0.0 ? (double)n * (double)sizeof(float) / best * 1e-9 : 0.0;
}
