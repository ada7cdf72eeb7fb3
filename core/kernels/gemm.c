/* gemm.c — the matrix kernel behind every projection and the attention products:
 *     C[m, n] (+)= A[m, k] · B[k, n]
 * A is read in place (rows of stride lda); B is read in panels of 16 columns, either from
 * weights packed once at load time (al_pack_panels) or straight from row-major memory (the V
 * cache). The loops are blocked for the caches: natively a panel of 16 (or two of 32) columns
 * and KC rows of B stays in L1/L2 while every row block of A passes over it; in WebAssembly a
 * block of 12 rows of A, packed with each value broadcast to 4 lanes, meets every panel.
 *
 * Every output is accumulated over k in order, one fused multiply-add at a time, in every
 * kernel and for every m (1 for a decode step, hundreds for a prefill): so a token's result
 * does not depend on how many tokens share the call, and decoding with the cache gives
 * bit-identical outputs to the uncached pass. The portable kernel uses fmaf() and matches the
 * AVX2 and AVX-512 kernels bit for bit; WebAssembly SIMD has no fused multiply-add, so the
 * WASM build multiplies then adds (still the same order, within a rounding of the native one).
 */
#include "attnlab/kernels.h"
#include "kernels/gemm.h"

#include <math.h>
#include <string.h>

#if defined(__wasm_simd128__)
#include <wasm_simd128.h>
#elif defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define AL_X86_DISPATCH 1
#endif

/* KC: how deep a block of k one kernel call runs before C is stored and reloaded: a whole
 * projection of MiniMind's (768 or 1024 deep) in one block. Fewer passes over C made the native
 * MiniMind-3 prefill ~5% faster than 256, and the WebAssembly GEMM ~2% faster. The sums run
 * over k in order either way: same bits. */
enum { NR = AL_GEMM_NR, KC = 1024, MR_MAX = 12, PF16 = 64 };

int64_t al_pack_panels_size(int64_t n, int64_t k) { return ((n + NR - 1) / NR) * k * NR; }

void al_pack_panels(float *packed, const float *w, int64_t n, int64_t k) {
    /* panel j, row kk, lane l  <-  w[(j·NR + l)·k + kk]; missing columns are zeros. */
    for (int64_t j = 0; j < (n + NR - 1) / NR; j++) {
        float *panel = packed + j * k * NR;
        for (int64_t kk = 0; kk < k; kk++)
            for (int64_t l = 0; l < NR; l++) {
                const int64_t col = j * NR + l;
                panel[kk * NR + l] = col < n ? w[col * k + kk] : 0.0f;
            }
    }
}

/* 16-bit weights widened to float32, exactly: a half through the hardware's conversion where
 * there is one (vcvtph2ps: AVX-512's 16 at a time, F16C's 8) or al_f16_bits_to_f32_bits, which
 * gives the same bits; a bfloat16 is the top half of its float. */
static float widen_one(const uint16_t *in, al_weight_dtype dtype, int64_t i) {
    return al_float_of_bits(dtype == AL_WEIGHTS_F16 ? al_f16_bits_to_f32_bits(in[i]) : (uint32_t)in[i] << 16);
}

void al_widen(float *out, const void *in, al_weight_dtype dtype, int64_t n, int64_t stride) {
    if (dtype == AL_WEIGHTS_F32) {
        const float *f = in;
        for (int64_t i = 0; i < n; i++) out[i] = f[i * stride];
        return;
    }
    for (int64_t i = 0; i < n; i++) out[i] = widen_one(in, dtype, i * stride);
}

#if defined(AL_X86_DISPATCH)
__attribute__((target("avx512f"))) static void widen_block_avx512(float *out, const uint16_t *in,
                                                                   al_weight_dtype dtype, int64_t n) {
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        const __m256i h = _mm256_loadu_si256((const __m256i *)(in + i));
        const __m512 f = dtype == AL_WEIGHTS_F16 ? _mm512_cvtph_ps(h)
                                                 : _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
        _mm512_storeu_ps(out + i, f);
    }
    for (; i < n; i++) out[i] = widen_one(in, dtype, i);
}
/* The CPUs with AVX2 but not AVX-512 (Zen, Haswell to Alder Lake): without it, a half went
 * through al_f16_bits_to_f32_bits one at a time and an f16 decode step took 7× the f32 one. */
__attribute__((target("avx2,f16c"))) static void widen_block_f16c(float *out, const uint16_t *in,
                                                                   al_weight_dtype dtype, int64_t n) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m128i h = _mm_loadu_si128((const __m128i *)(in + i));
        const __m256 f = dtype == AL_WEIGHTS_F16 ? _mm256_cvtph_ps(h)
                                                 : _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
        _mm256_storeu_ps(out + i, f);
    }
    for (; i < n; i++) out[i] = widen_one(in, dtype, i);
}
#endif

/* n contiguous 16-bit elements widened into out (a block of packed panels). */
static void widen_block(float *out, const uint16_t *in, al_weight_dtype dtype, int64_t n) {
#if defined(AL_X86_DISPATCH)
    static int isa = -1; /* 2: AVX-512, 1: AVX2 and F16C, 0: neither */
    if (isa < 0) {
        __builtin_cpu_init();
        isa = __builtin_cpu_supports("avx512f") ? 2 : __builtin_cpu_supports("avx2") && __builtin_cpu_supports("f16c");
    }
    if (isa == 2) {
        widen_block_avx512(out, in, dtype, n);
        return;
    }
    if (isa == 1) {
        widen_block_f16c(out, in, dtype, n);
        return;
    }
#endif
    for (int64_t i = 0; i < n; i++) out[i] = widen_one(in, dtype, i);
}

/* The floats of B's panel block starting at element `at` (kc rows of a panel): in place for
 * float32, else widened into `wide` [kc · NR] (16-bit B is always packed: rows of NR). */
static const float *panel_block(al_bmat b, int64_t at, int64_t kc, float *wide) {
    if (b.dtype == AL_WEIGHTS_F32) return (const float *)b.p + at;
    widen_block(wide, (const uint16_t *)b.p + at, b.dtype, kc * NR);
    return wide;
}

/* ------------------------------------------------------------------------------------------
 * Kernels: C[m rows, 16] (+)= A[m, kc] · B[kc, 16], B row kk at b + kk·ldb. The tile is
 * computed whole; only the first `cols` columns are stored.
 * ------------------------------------------------------------------------------------------ */

#if !defined(__wasm_simd128__)
typedef void (*kernel_fn)(int m, int64_t kc, const float *a, int64_t lda, const float *b,
                          int64_t ldb, float *c, int64_t ldc, int cols, int accumulate);
#endif

/* Loads the C tile as the starting accumulator (or zeros), and stores it back. */
static void tile_load(float acc[MR_MAX][NR], int m, const float *c, int64_t ldc, int cols,
                      int accumulate) {
    for (int i = 0; i < m; i++) {
        memset(acc[i], 0, sizeof acc[i]);
        if (accumulate) memcpy(acc[i], c + i * ldc, (size_t)cols * sizeof(float));
    }
}
static void tile_store(float acc[MR_MAX][NR], int m, float *c, int64_t ldc, int cols) {
    for (int i = 0; i < m; i++) memcpy(c + i * ldc, acc[i], (size_t)cols * sizeof(float));
}

/* Portable: fmaf per element, k in order. Also the reference for the SIMD kernels. */
#if !defined(__wasm_simd128__)
static void kernel_portable(int m, int64_t kc, const float *a, int64_t lda, const float *b,
                            int64_t ldb, float *c, int64_t ldc, int cols, int accumulate) {
    float acc[MR_MAX][NR];
    tile_load(acc, m, c, ldc, cols, accumulate);
    for (int64_t kk = 0; kk < kc; kk++) {
        const float *brow = b + kk * ldb;
        for (int i = 0; i < m; i++) {
            const float ai = a[i * lda + kk];
            for (int l = 0; l < NR; l++) {
#if defined(__wasm__)
                acc[i][l] = acc[i][l] + ai * brow[l];
#else
                acc[i][l] = fmaf(ai, brow[l], acc[i][l]);
#endif
            }
        }
    }
    tile_store(acc, m, c, ldc, cols);
}
#endif

#if defined(__wasm_simd128__)
/* WebAssembly SIMD reads A pre-broadcast: each value of a block of MR_WASM rows repeated in 4
 * lanes, packed once per block of k and read by every panel of B. A splat in the loop (load and
 * shuffle) costs the shuffle unit as much as a multiply, and held the kernel at 70% of SIMD128's
 * multiply-add ceiling; plain loads of the packed copy reach ~90%.
 * Layout, for rows taken two by two (an odd last row alone):
 *     pack[i·kc·4 + kk·8 + 4r + l] = A[i + r, kk]    (pair i, i+1; r in 0..1, l in 0..3)
 *     pack[i·kc·4 + kk·4 + l]      = A[i, kk]        (a last row without a partner)        */
enum { MR_WASM = 12 };
/* the threaded build (kernels/pool.c) gives each thread its own copy of the buffers */
#if defined(AL_WASM_THREADS)
#define AL_PER_THREAD _Thread_local
#else
#define AL_PER_THREAD
#endif
static AL_PER_THREAD float g_apack[MR_WASM * KC * 4];

/* acc + a·b: a multiply then an add (SIMD128 has no fused form) */
#define MADD(acc, a, b) ((acc) = wasm_f32x4_add((acc), wasm_f32x4_mul((a), (b))))
/* C's vector v of a row as the starting accumulator, or zeros (the kernels' `accumulate`) */
#define C_LOAD(row, v) (accumulate ? wasm_v128_load((row) + 4 * (v)) : wasm_f32x4_splat(0.0f))

static void pack_a_wasm(float *pack, const float *a, int64_t lda, int rows, int kc) {
    int i = 0;
    for (; i + 1 < rows; i += 2) {
        const float *r0 = a + i * lda, *r1 = r0 + lda;
        float *p = pack + i * kc * 4;
        for (int kk = 0; kk < kc; kk++, p += 8) {
            wasm_v128_store(p, wasm_f32x4_splat(r0[kk]));
            wasm_v128_store(p + 4, wasm_f32x4_splat(r1[kk]));
        }
    }
    if (i < rows) {
        const float *r0 = a + i * lda;
        float *p = pack + i * kc * 4;
        for (int kk = 0; kk < kc; kk++, p += 4) wasm_v128_store(p, wasm_f32x4_splat(r0[kk]));
    }
}

/* C[m rows, 16] (+)= A[m, kc] · B[kc, 16], A packed as above: 2 rows × 4 vectors of 4 lanes =
 * 8 accumulators, which with 4 vectors of B and 2 of A the engine keeps in x86-64's 16 vector
 * registers (3 rows spill: 1.6× slower under V8). Multiply then add: SIMD128 has no fused form.
 * Pointers step by 32-bit adds: 64-bit index arithmetic cost V8 a multiply per k. A partial tile
 * (cols < 16) goes through a full-width copy of C. */
static void kernel_wasm(int m, int kc, const float *pack, const float *b, int ldb, float *c,
                        int64_t ldc, int cols, int accumulate) {
    float tile[MR_WASM][NR];
    float *cp = c;
    int64_t ldt = ldc;
    if (cols < NR) {
        tile_load(tile, m, c, ldc, cols, accumulate);
        cp = &tile[0][0], ldt = NR, accumulate = 1;
    }
    for (int i0 = 0; i0 < m; i0 += 2) {
        float *c0 = cp + i0 * ldt, *c1 = c0 + ldt;
        const float *ap = pack + i0 * kc * 4, *bk = b;
        if (m - i0 >= 2) {
            v128_t c00 = C_LOAD(c0, 0), c01 = C_LOAD(c0, 1),
                   c02 = C_LOAD(c0, 2), c03 = C_LOAD(c0, 3);
            v128_t c10 = C_LOAD(c1, 0), c11 = C_LOAD(c1, 1),
                   c12 = C_LOAD(c1, 2), c13 = C_LOAD(c1, 3);
            for (const float *const a_end = ap + 8 * kc; ap < a_end; ap += 8, bk += ldb) {
                const v128_t b0 = wasm_v128_load(bk), b1 = wasm_v128_load(bk + 4);
                const v128_t b2 = wasm_v128_load(bk + 8), b3 = wasm_v128_load(bk + 12);
                const v128_t x0 = wasm_v128_load(ap), x1 = wasm_v128_load(ap + 4);
                MADD(c00, x0, b0), MADD(c01, x0, b1);
                MADD(c02, x0, b2), MADD(c03, x0, b3);
                MADD(c10, x1, b0), MADD(c11, x1, b1);
                MADD(c12, x1, b2), MADD(c13, x1, b3);
            }
            wasm_v128_store(c0, c00), wasm_v128_store(c0 + 4, c01);
            wasm_v128_store(c0 + 8, c02), wasm_v128_store(c0 + 12, c03);
            wasm_v128_store(c1, c10), wasm_v128_store(c1 + 4, c11);
            wasm_v128_store(c1 + 8, c12), wasm_v128_store(c1 + 12, c13);
        } else {
            v128_t c00 = C_LOAD(c0, 0), c01 = C_LOAD(c0, 1),
                   c02 = C_LOAD(c0, 2), c03 = C_LOAD(c0, 3);
            for (int kk = 0; kk < kc; kk++, ap += 4, bk += ldb) {
                const v128_t x0 = wasm_v128_load(ap);
                MADD(c00, x0, wasm_v128_load(bk));
                MADD(c01, x0, wasm_v128_load(bk + 4));
                MADD(c02, x0, wasm_v128_load(bk + 8));
                MADD(c03, x0, wasm_v128_load(bk + 12));
            }
            wasm_v128_store(c0, c00), wasm_v128_store(c0 + 4, c01);
            wasm_v128_store(c0 + 8, c02), wasm_v128_store(c0 + 12, c03);
        }
    }
    if (cp != c) tile_store(tile, m, c, ldc, cols);
}

/* C[m rows, <= 8] (+)= A[m, kc] · B[kc, 8]: a product whose B is one narrow panel (the
 * attention's weights times V at a head_dim of 8). Packing A would cost as much as the product
 * here, and a 16-wide tile would be half zeros: A is splatted in the loop instead, 4 rows × 2
 * vectors = 8 accumulators (rows past the last 4 one at a time). A partial tile (cols < 8) goes
 * through a copy of C, and its B through a zero-padded copy (the caller's). */
static void kernel_wasm_narrow(int m, int kc, const float *a, int64_t lda, const float *b,
                               int ldb, float *c, int64_t ldc, int cols, int accumulate) {
    float tile[MR_WASM][NR];
    float *cp = c;
    int64_t ldt = ldc;
    if (cols < 8) {
        tile_load(tile, m, c, ldc, cols, accumulate);
        cp = &tile[0][0], ldt = NR, accumulate = 1;
    }
    int i0 = 0;
    for (; i0 + 4 <= m; i0 += 4) {
        float *c0 = cp + i0 * ldt, *c1 = c0 + ldt, *c2 = c1 + ldt, *c3 = c2 + ldt;
        const float *a0 = a + i0 * lda, *a1 = a0 + lda, *a2 = a1 + lda, *a3 = a2 + lda, *bk = b;
        v128_t c00 = C_LOAD(c0, 0), c01 = C_LOAD(c0, 1), c10 = C_LOAD(c1, 0), c11 = C_LOAD(c1, 1);
        v128_t c20 = C_LOAD(c2, 0), c21 = C_LOAD(c2, 1), c30 = C_LOAD(c3, 0), c31 = C_LOAD(c3, 1);
        for (int kk = 0; kk < kc; kk++, bk += ldb) {
            const v128_t b0 = wasm_v128_load(bk), b1 = wasm_v128_load(bk + 4);
            v128_t x = wasm_v128_load32_splat(a0 + kk);
            MADD(c00, x, b0), MADD(c01, x, b1);
            x = wasm_v128_load32_splat(a1 + kk);
            MADD(c10, x, b0), MADD(c11, x, b1);
            x = wasm_v128_load32_splat(a2 + kk);
            MADD(c20, x, b0), MADD(c21, x, b1);
            x = wasm_v128_load32_splat(a3 + kk);
            MADD(c30, x, b0), MADD(c31, x, b1);
        }
        wasm_v128_store(c0, c00), wasm_v128_store(c0 + 4, c01);
        wasm_v128_store(c1, c10), wasm_v128_store(c1 + 4, c11);
        wasm_v128_store(c2, c20), wasm_v128_store(c2 + 4, c21);
        wasm_v128_store(c3, c30), wasm_v128_store(c3 + 4, c31);
    }
    for (; i0 < m; i0++) {
        float *c0 = cp + i0 * ldt;
        const float *a0 = a + i0 * lda, *bk = b;
        v128_t c00 = C_LOAD(c0, 0), c01 = C_LOAD(c0, 1);
        for (int kk = 0; kk < kc; kk++, bk += ldb) {
            const v128_t x = wasm_v128_load32_splat(a0 + kk);
            MADD(c00, x, wasm_v128_load(bk));
            MADD(c01, x, wasm_v128_load(bk + 4));
        }
        wasm_v128_store(c0, c00), wasm_v128_store(c0 + 4, c01);
    }
    if (cp != c) tile_store(tile, m, c, ldc, cols);
}
#undef MADD
#undef C_LOAD
#endif

#if defined(AL_X86_DISPATCH)
/* AVX2 + FMA: up to 6 rows × 2 vectors of 8 = 12 accumulators. */
__attribute__((target("avx2,fma"))) static void kernel_avx2(int m, int64_t kc, const float *a,
                                                             int64_t lda, const float *b,
                                                             int64_t ldb, float *c, int64_t ldc,
                                                             int cols, int accumulate) {
    float tile[MR_MAX][NR];
    tile_load(tile, m, c, ldc, cols, accumulate);
    for (int i0 = 0; i0 < m; i0 += 6) {
        const int rows = m - i0 < 6 ? m - i0 : 6;
        __m256 acc[6][2];
        for (int i = 0; i < rows; i++) {
            acc[i][0] = _mm256_loadu_ps(&tile[i0 + i][0]);
            acc[i][1] = _mm256_loadu_ps(&tile[i0 + i][8]);
        }
        const float *ap = a + i0 * lda;
#define AVX2_ROWS(R)                                                                   \
    for (int64_t kk = 0; kk < kc; kk++) {                                              \
        const __m256 b0 = _mm256_loadu_ps(b + kk * ldb);                               \
        const __m256 b1 = _mm256_loadu_ps(b + kk * ldb + 8);                           \
        _Pragma("GCC unroll 16") for (int i = 0; i < (R); i++) {                      \
            const __m256 ai = _mm256_broadcast_ss(ap + i * lda + kk);                  \
            acc[i][0] = _mm256_fmadd_ps(ai, b0, acc[i][0]);                            \
            acc[i][1] = _mm256_fmadd_ps(ai, b1, acc[i][1]);                            \
        }                                                                              \
    }
        /* A constant row count lets the compiler keep all accumulators in registers; the
         * full 6-row block, the common case, names them so none is spilled in the loop. */
        if (rows == 6) {
            __m256 c00 = acc[0][0], c01 = acc[0][1], c10 = acc[1][0], c11 = acc[1][1];
            __m256 c20 = acc[2][0], c21 = acc[2][1], c30 = acc[3][0], c31 = acc[3][1];
            __m256 c40 = acc[4][0], c41 = acc[4][1], c50 = acc[5][0], c51 = acc[5][1];
            for (int64_t kk = 0; kk < kc; kk++) {
                const __m256 b0 = _mm256_loadu_ps(b + kk * ldb);
                const __m256 b1 = _mm256_loadu_ps(b + kk * ldb + 8);
                __m256 ai = _mm256_broadcast_ss(ap + kk);
                c00 = _mm256_fmadd_ps(ai, b0, c00), c01 = _mm256_fmadd_ps(ai, b1, c01);
                ai = _mm256_broadcast_ss(ap + lda + kk);
                c10 = _mm256_fmadd_ps(ai, b0, c10), c11 = _mm256_fmadd_ps(ai, b1, c11);
                ai = _mm256_broadcast_ss(ap + 2 * lda + kk);
                c20 = _mm256_fmadd_ps(ai, b0, c20), c21 = _mm256_fmadd_ps(ai, b1, c21);
                ai = _mm256_broadcast_ss(ap + 3 * lda + kk);
                c30 = _mm256_fmadd_ps(ai, b0, c30), c31 = _mm256_fmadd_ps(ai, b1, c31);
                ai = _mm256_broadcast_ss(ap + 4 * lda + kk);
                c40 = _mm256_fmadd_ps(ai, b0, c40), c41 = _mm256_fmadd_ps(ai, b1, c41);
                ai = _mm256_broadcast_ss(ap + 5 * lda + kk);
                c50 = _mm256_fmadd_ps(ai, b0, c50), c51 = _mm256_fmadd_ps(ai, b1, c51);
            }
            acc[0][0] = c00, acc[0][1] = c01, acc[1][0] = c10, acc[1][1] = c11;
            acc[2][0] = c20, acc[2][1] = c21, acc[3][0] = c30, acc[3][1] = c31;
            acc[4][0] = c40, acc[4][1] = c41, acc[5][0] = c50, acc[5][1] = c51;
        } else {
            switch (rows) {
            case 5: AVX2_ROWS(5) break;
            case 4: AVX2_ROWS(4) break;
            case 3: AVX2_ROWS(3) break;
            case 2: AVX2_ROWS(2) break;
            default: AVX2_ROWS(1) break;
            }
        }
#undef AVX2_ROWS
        for (int i = 0; i < rows; i++) {
            _mm256_storeu_ps(&tile[i0 + i][0], acc[i][0]);
            _mm256_storeu_ps(&tile[i0 + i][8], acc[i][1]);
        }
    }
    tile_store(tile, m, c, ldc, cols);
}

/* AVX2 + FMA, one or two rows of A (a decode step) against up to AVX2_PANELS panels of B side
 * by side: kernel_avx2 on one panel keeps 2 accumulators, whose fused multiply-adds wait on
 * each other's latency (4 cycles for 2 of them); here 8 are in flight. B is float32 panels
 * (row stride ldb) or 16-bit ones (rows of NR) widened as they are loaded (F16C's vcvtph2ps, a
 * bfloat16's shift), so a decode step reads 2 bytes a weight and writes none back. The same
 * fused multiply-adds in the same order as kernel_avx2 over panels widened by widen_block: the
 * same bits. b: element `at` of B's storage; `panels` panels panel_stride elements apart, the
 * last with last_cols columns. */
enum { AVX2_PANELS = 4 };
typedef enum { AVX2_B_F32, AVX2_B_F16, AVX2_B_BF16 } avx2_b;
__attribute__((target("avx2,fma,f16c"), always_inline)) static inline __m256 avx2_load_b(const void *b, int64_t i,
                                                                                       avx2_b kind) {
    if (kind == AVX2_B_F32) return _mm256_loadu_ps((const float *)b + i);
    const __m128i h = _mm_loadu_si128((const __m128i *)((const uint16_t *)b + i));
    return kind == AVX2_B_F16 ? _mm256_cvtph_ps(h) : _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
}
__attribute__((target("avx2,fma,f16c"), always_inline)) static inline void avx2_rows(
    const int R, const int P, const avx2_b kind, int64_t kc, const float *a, int64_t lda, const void *b, int64_t at,
    int64_t panel_stride, int64_t ldb, float *c, int64_t ldc, int last_cols, int accumulate) {
    float tile[2][AVX2_PANELS * NR] = {{0}};
    const int width = (P - 1) * NR + last_cols; /* C's columns */
    for (int i = 0; i < R; i++)
        if (accumulate) memcpy(tile[i], c + i * ldc, (size_t)width * sizeof(float));
    __m256 acc[2][AVX2_PANELS][2];
    for (int i = 0; i < R; i++)
        for (int p = 0; p < P; p++) {
            acc[i][p][0] = _mm256_loadu_ps(tile[i] + p * NR);
            acc[i][p][1] = _mm256_loadu_ps(tile[i] + p * NR + 8);
        }
    for (int64_t kk = 0; kk < kc; kk++) {
        _Pragma("GCC unroll 4") for (int p = 0; p < P; p++) {
            const int64_t row = at + p * panel_stride + kk * ldb;
            const __m256 b0 = avx2_load_b(b, row, kind), b1 = avx2_load_b(b, row + 8, kind);
            _Pragma("GCC unroll 2") for (int i = 0; i < R; i++) {
                const __m256 ai = _mm256_broadcast_ss(a + i * lda + kk);
                acc[i][p][0] = _mm256_fmadd_ps(ai, b0, acc[i][p][0]);
                acc[i][p][1] = _mm256_fmadd_ps(ai, b1, acc[i][p][1]);
            }
        }
    }
    for (int i = 0; i < R; i++) {
        for (int p = 0; p < P; p++) {
            _mm256_storeu_ps(tile[i] + p * NR, acc[i][p][0]);
            _mm256_storeu_ps(tile[i] + p * NR + 8, acc[i][p][1]);
        }
        memcpy(c + i * ldc, tile[i], (size_t)width * sizeof(float));
    }
}
/* m rows (1 or 2; two rows take at most 2 panels, keeping 8 accumulators) of that kernel. */
__attribute__((target("avx2,fma,f16c"))) static void kernel_avx2_rows(int m, int panels, int64_t kc, const float *a,
                                                                    int64_t lda, al_bmat b, int64_t at, int64_t ldb,
                                                                    float *c, int64_t ldc, int last_cols,
                                                                    int accumulate) {
    const avx2_b kind = b.dtype == AL_WEIGHTS_F32 ? AVX2_B_F32 : b.dtype == AL_WEIGHTS_F16 ? AVX2_B_F16 : AVX2_B_BF16;
#define AVX2_ROWS_CASE(R, P, K) avx2_rows(R, P, K, kc, a, lda, b.p, at, b.panel_stride, ldb, c, ldc, last_cols, accumulate)
#define AVX2_ROWS_KIND(R, P)                                                                              \
    (kind == AVX2_B_F32 ? AVX2_ROWS_CASE(R, P, AVX2_B_F32)                                                \
     : kind == AVX2_B_F16 ? AVX2_ROWS_CASE(R, P, AVX2_B_F16) : AVX2_ROWS_CASE(R, P, AVX2_B_BF16))
    if (m == 2) {
        if (panels == 2) AVX2_ROWS_KIND(2, 2);
        else AVX2_ROWS_KIND(2, 1);
    } else {
        switch (panels) {
        case 4: AVX2_ROWS_KIND(1, 4); break;
        case 3: AVX2_ROWS_KIND(1, 3); break;
        case 2: AVX2_ROWS_KIND(1, 2); break;
        default: AVX2_ROWS_KIND(1, 1); break;
        }
    }
#undef AVX2_ROWS_KIND
#undef AVX2_ROWS_CASE
}

/* AVX-512: up to 12 rows × 1 vector of 16 = 12 accumulators. */
__attribute__((target("avx512f"))) static void kernel_avx512(int m, int64_t kc, const float *a,
                                                              int64_t lda, const float *b,
                                                              int64_t ldb, float *c, int64_t ldc,
                                                              int cols, int accumulate) {
    /* Masked loads and stores cover a partial tile at the right edge: C is used in place, and
     * a narrow right edge of row-major B is read in place too (nothing past its `cols` columns
     * is touched), so no padded copy of it is made (the copy cost as much as the products for
     * a head_dim of 8). */
    const __mmask16 keep = (__mmask16)((1u << cols) - 1u);
    __m512 acc[MR_MAX];
    for (int i = 0; i < m; i++)
        acc[i] = accumulate ? _mm512_maskz_loadu_ps(keep, c + i * ldc) : _mm512_setzero_ps();
#define AVX512_ROWS(R)                                                                 \
    for (int64_t kk = 0; kk < kc; kk++) {                                              \
        const __m512 bk = _mm512_maskz_loadu_ps(keep, b + kk * ldb);                   \
        _Pragma("GCC unroll 16") for (int i = 0; i < (R); i++)                        \
            acc[i] = _mm512_fmadd_ps(_mm512_set1_ps(a[i * lda + kk]), bk, acc[i]);     \
    }
    switch (m) {
    case 12: AVX512_ROWS(12) break;
    case 11: AVX512_ROWS(11) break;
    case 10: AVX512_ROWS(10) break;
    case 9: AVX512_ROWS(9) break;
    case 8: AVX512_ROWS(8) break;
    case 7: AVX512_ROWS(7) break;
    case 6: AVX512_ROWS(6) break;
    case 5: AVX512_ROWS(5) break;
    case 4: AVX512_ROWS(4) break;
    case 3: AVX512_ROWS(3) break;
    case 2: AVX512_ROWS(2) break;
    default: AVX512_ROWS(1) break;
    }
#undef AVX512_ROWS
    for (int i = 0; i < m; i++) _mm512_mask_storeu_ps(c + i * ldc, keep, acc[i]);
}

/* AVX-512, two panels side by side (32 columns): up to 12 rows × 2 vectors = 24 accumulators
 * of AVX-512's 32 registers. Each step loads 2 vectors of B and broadcasts 12 values of A for
 * 24 fused multiply-adds, so the loads no longer limit the multiply-adds (the one-panel kernel
 * needs 13 loads for 12). b1 is the second panel; cols1 of its columns are stored. */
__attribute__((target("avx512f"))) static void kernel_avx512_pair(
    int m, int64_t kc, const float *a, int64_t lda, const float *b0, const float *b1,
    int64_t ldb, float *c, int64_t ldc, int cols1, int accumulate) {
    const __mmask16 keep1 = (__mmask16)((1u << cols1) - 1u);
    __m512 acc0[MR_MAX], acc1[MR_MAX];
    for (int i = 0; i < m; i++) {
        acc0[i] = accumulate ? _mm512_loadu_ps(c + i * ldc) : _mm512_setzero_ps();
        acc1[i] = accumulate ? _mm512_maskz_loadu_ps(keep1, c + i * ldc + NR) : _mm512_setzero_ps();
    }
#define AVX512_PAIR_ROWS(R)                                                            \
    for (int64_t kk = 0; kk < kc; kk++) {                                              \
        const __m512 bk0 = _mm512_loadu_ps(b0 + kk * ldb);                             \
        const __m512 bk1 = _mm512_loadu_ps(b1 + kk * ldb);                             \
        _Pragma("GCC unroll 16") for (int i = 0; i < (R); i++) {                      \
            const __m512 ai = _mm512_set1_ps(a[i * lda + kk]);                         \
            acc0[i] = _mm512_fmadd_ps(ai, bk0, acc0[i]);                               \
            acc1[i] = _mm512_fmadd_ps(ai, bk1, acc1[i]);                               \
        }                                                                              \
    }
    switch (m) {
    case 12: AVX512_PAIR_ROWS(12) break;
    case 11: AVX512_PAIR_ROWS(11) break;
    case 10: AVX512_PAIR_ROWS(10) break;
    case 9: AVX512_PAIR_ROWS(9) break;
    case 8: AVX512_PAIR_ROWS(8) break;
    case 7: AVX512_PAIR_ROWS(7) break;
    case 6: AVX512_PAIR_ROWS(6) break;
    case 5: AVX512_PAIR_ROWS(5) break;
    case 4: AVX512_PAIR_ROWS(4) break;
    case 3: AVX512_PAIR_ROWS(3) break;
    case 2: AVX512_PAIR_ROWS(2) break;
    default: AVX512_PAIR_ROWS(1) break;
    }
#undef AVX512_PAIR_ROWS
    for (int i = 0; i < m; i++) {
        _mm512_storeu_ps(c + i * ldc, acc0[i]);
        _mm512_mask_storeu_ps(c + i * ldc + NR, keep1, acc1[i]);
    }
}
/* AVX-512, one or two rows of A against up to ROW_PANELS panels side by side (a decode step's
 * projections; the scores of the query heads that share a KV head), or, one product per panel,
 * each head's weights against its own V (al_gemm_batch). Each output is a chain of kc dependent
 * multiply-adds, one per term in order (4 cycles each): one row against a pair of panels keeps
 * 2 chains in flight and waits on them, 8 panels keep 8, enough to cover the latency; A's value
 * rides on the multiply-add as a broadcast operand. B's panels are read whole (packed, padded);
 * only the columns of `keep` (of `keep_last` in the last panel) are loaded and stored in C.
 * stories260K's decode step spends most of its time here: every map has 1 to 32 panels. */
enum { ROW_PANELS = 8 };
/* The mask of a panel's first `cols` columns, 1 <= cols <= 16. */
static __mmask16 keep_of(int cols) { return (__mmask16)((1u << cols) - 1u); }
typedef struct {
    int64_t a_step, b_step, c_step; /* panel p's A rows at a + p·a_step, its B at b + p·b_step, C at c + p·c_step */
    __mmask16 keep, keep_last;      /* the columns stored: of every panel but the last, of the last */
} panel_steps;
#define AVX512_INLINE __attribute__((target("avx512f"), always_inline)) static inline
AVX512_INLINE void rows_panels(const int R, const int P, const int own_a, int64_t kc, const float *a, int64_t lda,
                               const float *b, int64_t ldb, float *c, int64_t ldc, panel_steps st, int accumulate) {
    /* own_a 0 (a constant): every panel reads the same rows, so R broadcasts serve a step */
    const int64_t a_step = own_a ? st.a_step : 0;
    __m512 acc[2][ROW_PANELS];
    _Pragma("GCC unroll 2") for (int r = 0; r < R; r++)
        _Pragma("GCC unroll 8") for (int p = 0; p < P; p++) {
            const __mmask16 keep = p == P - 1 ? st.keep_last : st.keep;
            acc[r][p] = accumulate ? _mm512_maskz_loadu_ps(keep, c + p * st.c_step + r * ldc) : _mm512_setzero_ps();
        }
    for (int64_t kk = 0; kk < kc; kk++, a++, b += ldb) {
        _Pragma("GCC unroll 8") for (int p = 0; p < P; p++) {
            const __m512 x = _mm512_loadu_ps(b + p * st.b_step);
            _Pragma("GCC unroll 2") for (int r = 0; r < R; r++)
                acc[r][p] = _mm512_fmadd_ps(_mm512_set1_ps(a[p * a_step + r * lda]), x, acc[r][p]);
        }
    }
    _Pragma("GCC unroll 2") for (int r = 0; r < R; r++)
        _Pragma("GCC unroll 8") for (int p = 0; p < P; p++)
            _mm512_mask_storeu_ps(c + p * st.c_step + r * ldc, p == P - 1 ? st.keep_last : st.keep, acc[r][p]);
}

/* Panels 0 .. panels−1 of rows_panels, m 1 or 2 rows of A. */
__attribute__((target("avx512f"))) static void kernel_avx512_rows(int m, int panels, int64_t kc, const float *a,
                                                                   int64_t lda, const float *b, int64_t ldb, float *c,
                                                                   int64_t ldc, panel_steps st, int accumulate) {
#define ROWS_PANELS(R, P, OWN) rows_panels(R, P, OWN, kc, a, lda, b, ldb, c, ldc, st, accumulate)
#define ROWS_SWITCH(R, OWN)                                                            \
    switch (panels) {                                                                  \
    case 8: ROWS_PANELS(R, 8, OWN); break;                                             \
    case 7: ROWS_PANELS(R, 7, OWN); break;                                             \
    case 6: ROWS_PANELS(R, 6, OWN); break;                                             \
    case 5: ROWS_PANELS(R, 5, OWN); break;                                             \
    case 4: ROWS_PANELS(R, 4, OWN); break;                                             \
    case 3: ROWS_PANELS(R, 3, OWN); break;                                             \
    case 2: ROWS_PANELS(R, 2, OWN); break;                                             \
    default: ROWS_PANELS(R, 1, OWN); break;                                            \
    }
    if (st.a_step == 0 && m == 2) ROWS_SWITCH(2, 0)
    else if (st.a_step == 0) ROWS_SWITCH(1, 0)
    else if (m == 2) ROWS_SWITCH(2, 1)
    else ROWS_SWITCH(1, 1)
#undef ROWS_SWITCH
#undef ROWS_PANELS
}

/* The same two panels held in 16 bits, widened as they are loaded: a decode step (a few rows of
 * A) reads each element of B once, so widening it into a buffer first (panel_block) would write
 * and read it again; here the conversion (one instruction per 16 values) rides on the loads.
 * The same fused multiply-adds in the same order: the same bits. B comes from memory, not the
 * caches, so each step of two rows of B asks for the line PF16 rows (2 KB) ahead in both
 * panels, keeping more reads in flight than the hardware's prefetchers alone. */
#define LOAD_F16(p) _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(p)))
#define LOAD_BF16(p) \
    _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)(p))), 16))
#define AVX512_PAIR16_STEP(R, LOAD, kk)                                                \
    {                                                                                  \
        const __m512 bk0 = LOAD(b0 + (kk) * NR);                                       \
        const __m512 bk1 = LOAD(b1 + (kk) * NR);                                       \
        _Pragma("GCC unroll 16") for (int i = 0; i < (R); i++) {                      \
            const __m512 ai = _mm512_set1_ps(a[i * lda + (kk)]);                       \
            acc0[i] = _mm512_fmadd_ps(ai, bk0, acc0[i]);                               \
            acc1[i] = _mm512_fmadd_ps(ai, bk1, acc1[i]);                               \
        }                                                                              \
    }
#define AVX512_PAIR16_ROWS(R, LOAD)                                                    \
    {                                                                                  \
        int64_t kk = 0;                                                                \
        for (; kk + 2 <= kc; kk += 2) {                                                \
            _mm_prefetch((const char *)(b0 + (kk + PF16) * NR), _MM_HINT_T0);          \
            _mm_prefetch((const char *)(b1 + (kk + PF16) * NR), _MM_HINT_T0);          \
            AVX512_PAIR16_STEP(R, LOAD, kk)                                            \
            AVX512_PAIR16_STEP(R, LOAD, kk + 1)                                        \
        }                                                                              \
        if (kk < kc) AVX512_PAIR16_STEP(R, LOAD, kk)                                   \
    }
#define AVX512_PAIR16_SWITCH(LOAD)                                                     \
    switch (m) {                                                                       \
    case 6: AVX512_PAIR16_ROWS(6, LOAD) break;                                         \
    case 5: AVX512_PAIR16_ROWS(5, LOAD) break;                                         \
    case 4: AVX512_PAIR16_ROWS(4, LOAD) break;                                         \
    case 3: AVX512_PAIR16_ROWS(3, LOAD) break;                                         \
    case 2: AVX512_PAIR16_ROWS(2, LOAD) break;                                         \
    default: AVX512_PAIR16_ROWS(1, LOAD) break;                                        \
    }
__attribute__((target("avx512f"))) static void kernel_avx512_pair16(
    int m, int64_t kc, const float *a, int64_t lda, const uint16_t *b0, const uint16_t *b1,
    al_weight_dtype dtype, float *c, int64_t ldc, int cols1, int accumulate) {
    const __mmask16 keep1 = (__mmask16)((1u << cols1) - 1u);
    __m512 acc0[6], acc1[6];
    for (int i = 0; i < m; i++) {
        acc0[i] = accumulate ? _mm512_loadu_ps(c + i * ldc) : _mm512_setzero_ps();
        acc1[i] = accumulate ? _mm512_maskz_loadu_ps(keep1, c + i * ldc + NR) : _mm512_setzero_ps();
    }
    if (dtype == AL_WEIGHTS_F16) AVX512_PAIR16_SWITCH(LOAD_F16)
    else AVX512_PAIR16_SWITCH(LOAD_BF16)
    for (int i = 0; i < m; i++) {
        _mm512_storeu_ps(c + i * ldc, acc0[i]);
        _mm512_mask_storeu_ps(c + i * ldc + NR, keep1, acc1[i]);
    }
}
#undef AVX512_PAIR16_SWITCH
#undef AVX512_PAIR16_ROWS
#undef AVX512_PAIR16_STEP
#undef LOAD_BF16
#undef LOAD_F16

/* ---- AVX-512 with A packed: the prefill's path (gemm_packed) ---------------------------------
 * Within a block of KCP rows of k, A's block of up to MCP rows is copied once into panels of R
 * rows (12; the last one 8 or 4, so that a block of 64 rows wastes no work), element (r, kk) of a
 * panel at ap[kk·R + r]: a step of the kernel broadcasts its R values from one pointer at fixed
 * offsets (read in place, A took 12 row pointers, more than the free registers, two of them
 * reloaded from the stack every step). Every pair of panels of B then passes over the packed
 * block, the pair's KCP · 32 floats (32 KB) staying in L1 while the packed A (up to 192 KB)
 * comes from L2; a 16-bit pair is widened once per block of A. B mostly comes from memory (a
 * prefill of 64 tokens uses each weight 64 times), so while a pair is read, the next pair's
 * block is fetched into L2, its rows spread over the steps of all the pair's panels of A:
 * without it the first panel waits on memory (~20% slower). C carries each output's partial
 * sum from one block of k to the next: each output is still summed over k in order, one fused
 * multiply-add per term, the same bits. */
enum { KCP = 256, MCP = 192, PACK_MIN_ROWS = 12, PACK_MIN_K = 128 };

/* The rows of the panel that starts with `left` rows of A's block left. */
static int panel_rows(int64_t left) { return left > 8 ? 12 : left > 4 ? 8 : 4; }

/* A[rows, kc] (row stride lda) into panels of panel_rows() rows, zeros below its last row. */
static void pack_a(float *ap, const float *a, int64_t lda, int64_t rows, int64_t kc) {
    for (int64_t p = 0; p < rows;) {
        const int R = panel_rows(rows - p);
        for (int r = 0; r < R; r++) {
            if (p + r < rows) {
                const float *src = a + (p + r) * lda;
                for (int64_t kk = 0; kk < kc; kk++) ap[kk * R + r] = src[kk];
            } else {
                for (int64_t kk = 0; kk < kc; kk++) ap[kk * R + r] = 0.0f;
            }
        }
        ap += R * kc, p += R;
    }
}

/* What a kernel call fetches into L2 of the next block of B: the row at `at` (16.16 fixed
 * point) of both panels at the first step, `step` further at each next one. */
typedef struct {
    const char *p0, *p1;
    int64_t row_bytes;
    uint32_t at, step;
} prefetch_plan;

/* C[rows, 16 + cols1] (+)= A[R, kc] · [B0 | B1][kc, 32]: R × 2 accumulators (24 of AVX-512's 32
 * registers at 12 rows), each step 2 loads of B and R broadcasts for 2R fused multiply-adds. The
 * tile is computed whole; only its first `rows` rows are loaded and stored. */
AVX512_INLINE void packed_pair(const int R, int64_t kc, const float *ap, const float *b0, const float *b1,
                               int64_t ldb, float *c, int64_t ldc, int rows, int cols1, int accumulate,
                               prefetch_plan pf) {
    const __mmask16 keep1 = (__mmask16)((1u << cols1) - 1u);
    __m512 acc0[MR_MAX], acc1[MR_MAX];
    _Pragma("GCC unroll 12") for (int i = 0; i < R; i++) {
        const int load = accumulate && i < rows;
        acc0[i] = load ? _mm512_loadu_ps(c + i * ldc) : _mm512_setzero_ps();
        acc1[i] = load ? _mm512_maskz_loadu_ps(keep1, c + i * ldc + NR) : _mm512_setzero_ps();
    }
    uint32_t at = pf.at;
    for (const float *const end = ap + kc * R; ap < end; ap += R, b0 += ldb, b1 += ldb, at += pf.step) {
        const int64_t off = (int64_t)(at >> 16) * pf.row_bytes;
        _mm_prefetch(pf.p0 + off, _MM_HINT_T1);
        _mm_prefetch(pf.p1 + off, _MM_HINT_T1);
        const __m512 x0 = _mm512_loadu_ps(b0), x1 = _mm512_loadu_ps(b1);
        _Pragma("GCC unroll 12") for (int i = 0; i < R; i++) {
            const __m512 ai = _mm512_set1_ps(ap[i]);
            acc0[i] = _mm512_fmadd_ps(ai, x0, acc0[i]);
            acc1[i] = _mm512_fmadd_ps(ai, x1, acc1[i]);
        }
    }
    _Pragma("GCC unroll 12") for (int i = 0; i < R; i++)
        if (i < rows) {
            _mm512_storeu_ps(c + i * ldc, acc0[i]);
            _mm512_mask_storeu_ps(c + i * ldc + NR, keep1, acc1[i]);
        }
}

/* C[rows, cols] (+)= A[R, kc] · B[kc, cols], one panel: B read with a mask, so that a narrow
 * right edge of row-major B is read in place. */
AVX512_INLINE void packed_one(const int R, int64_t kc, const float *ap, const float *b, int64_t ldb, float *c,
                              int64_t ldc, int rows, int cols, int accumulate) {
    const __mmask16 keep = (__mmask16)((1u << cols) - 1u);
    __m512 acc[MR_MAX];
    _Pragma("GCC unroll 12") for (int i = 0; i < R; i++)
        acc[i] = accumulate && i < rows ? _mm512_maskz_loadu_ps(keep, c + i * ldc) : _mm512_setzero_ps();
    for (const float *const end = ap + kc * R; ap < end; ap += R, b += ldb) {
        const __m512 x = _mm512_maskz_loadu_ps(keep, b);
        _Pragma("GCC unroll 12") for (int i = 0; i < R; i++)
            acc[i] = _mm512_fmadd_ps(_mm512_set1_ps(ap[i]), x, acc[i]);
    }
    _Pragma("GCC unroll 12") for (int i = 0; i < R; i++)
        if (i < rows) _mm512_mask_storeu_ps(c + i * ldc, keep, acc[i]);
}

__attribute__((target("avx512f"), noinline)) static void gemm_packed(float *c, int64_t ldc, const float *a,
                                                                   int64_t lda, al_bmat b, int64_t m, int64_t n,
                                                                   int64_t k, int accumulate) {
    float apack[MCP * KCP]; /* A's block: panels [R, kc] one after another */
    float wide0[KCP * NR], wide1[KCP * NR];
    const int64_t ldb = b.dtype == AL_WEIGHTS_F32 ? b.row_stride : NR;
    const int64_t esize = b.dtype == AL_WEIGHTS_F32 ? 4 : 2;
    for (int64_t k0 = 0; k0 < k; k0 += KCP) {
        const int64_t kc = k - k0 < KCP ? k - k0 : KCP;
        const int acc = accumulate || k0 > 0;
        for (int64_t i0 = 0; i0 < m; i0 += MCP) {
            const int64_t mc = m - i0 < MCP ? m - i0 : MCP;
            pack_a(apack, a + i0 * lda + k0, lda, mc, kc);
            float *const ci = c + i0 * ldc;
            int64_t panels = 0; /* of A's block */
            for (int64_t p = 0; p < mc; p += panel_rows(mc - p)) panels++;
            for (int64_t j = 0; j < n;) {
                const int64_t at = (j / NR) * b.panel_stride + k0 * b.row_stride;
                const int cols = n - j < NR ? (int)(n - j) : NR;
                const int cols1 = n - j - NR < NR ? (int)(n - j - NR) : NR;
                const float *bp = panel_block(b, at, kc, wide0);
                const int pair = n - j > NR && (b.padded || cols1 == NR);
                const float *bp1 = pair ? panel_block(b, at + b.panel_stride, kc, wide1) : NULL;
                /* the next pair's block, or the first pair's of the next block of k */
                const int64_t next = j + 2 * NR < n ? at + 2 * b.panel_stride : k0 + KCP < k ? (k0 + KCP) * b.row_stride : at;
                prefetch_plan pf = {(const char *)b.p + next * esize, (const char *)b.p + (next + b.panel_stride) * esize,
                                    b.row_stride * esize, 0, (uint32_t)(65536 / panels)};
                const float *ap = apack;
                for (int64_t p = 0; p < mc; pf.at += (uint32_t)kc * pf.step) {
                    const int R = panel_rows(mc - p), rows = mc - p < R ? (int)(mc - p) : R;
                    float *const cp = ci + p * ldc + j;
                    if (pair && R == 12) packed_pair(12, kc, ap, bp, bp1, ldb, cp, ldc, rows, cols1, acc, pf);
                    else if (pair && R == 8) packed_pair(8, kc, ap, bp, bp1, ldb, cp, ldc, rows, cols1, acc, pf);
                    else if (pair) packed_pair(4, kc, ap, bp, bp1, ldb, cp, ldc, rows, cols1, acc, pf);
                    else if (R == 12) packed_one(12, kc, ap, bp, ldb, cp, ldc, rows, cols, acc);
                    else if (R == 8) packed_one(8, kc, ap, bp, ldb, cp, ldc, rows, cols, acc);
                    else packed_one(4, kc, ap, bp, ldb, cp, ldc, rows, cols, acc);
                    ap += R * kc, p += R;
                }
                j += pair ? 2 * NR : NR;
            }
        }
    }
}
#undef AVX512_INLINE
#endif


/* A right-edge panel of row-major B (the V cache, say, when n is not a multiple of 16), copied
 * zero-padded to NR columns so the kernels can read it whole. */
static void copy_edge(float *edge, const float *bp, int64_t ldb, int64_t kc, int cols) {
    for (int64_t kk = 0; kk < kc; kk++)
        for (int l = 0; l < NR; l++) edge[kk * NR + l] = l < cols ? bp[kk * ldb + l] : 0.0f;
}

#if defined(__wasm_simd128__)
/* WebAssembly: within a block of k, row blocks outermost, so each block of A is packed once
 * and read by every panel of B (a panel, up to 64 KB, comes from L2 once per 12 rows). B of at
 * most 8 columns, one narrow panel, goes to kernel_wasm_narrow with A read in place. */
static void gemm_blocks(float *c, int64_t ldc, const float *a, int64_t lda, al_bmat b,
                        int64_t m, int64_t n, int64_t k, int accumulate) {
    static AL_PER_THREAD float edge[KC * NR]; /* static, as g_apack: 64 KB off the 1 MB stack */
    const int64_t last = (n - 1) / NR;                 /* the last panel, maybe partial */
    const int last_cols = (int)(n - last * NR);
    for (int64_t k0 = 0; k0 < k; k0 += KC) {
        const int kc = (int)(k - k0 < KC ? k - k0 : KC);
        const int acc = accumulate || k0 > 0;
        /* a partial last panel of row-major B, zero-padded, but for 8 columns (read in place) */
        const int edge_copied = last_cols < NR && !b.padded && n != 8;
        if (edge_copied)
            copy_edge(edge, (const float *)b.p + last * b.panel_stride + k0 * b.row_stride, b.row_stride, kc,
                      last_cols);
        if (n <= 8 && b.dtype == AL_WEIGHTS_F32) {
            const float *bp = edge_copied ? edge : (const float *)b.p + k0 * b.row_stride;
            const int ldb = edge_copied ? NR : (int)b.row_stride;
            for (int64_t i = 0; i < m; i += MR_WASM) {
                const int rows = m - i < MR_WASM ? (int)(m - i) : MR_WASM;
                kernel_wasm_narrow(rows, kc, a + i * lda + k0, lda, bp, ldb, c + i * ldc, ldc,
                                   (int)n, acc);
            }
            continue;
        }
        for (int64_t i = 0; i < m; i += MR_WASM) {
            const int rows = m - i < MR_WASM ? (int)(m - i) : MR_WASM;
            pack_a_wasm(g_apack, a + i * lda + k0, lda, rows, kc);
            for (int64_t p = 0; p <= last; p++) {
                const int cols = p == last ? last_cols : NR;
                /* 16-bit panels (not what the WebAssembly build loads: see model_load.c)
                 * widened panel by panel into the edge buffer */
                const float *bp = panel_block(b, p * b.panel_stride + k0 * b.row_stride, kc, edge);
                int ldb = (int)b.row_stride;
                if (p == last && edge_copied) bp = edge, ldb = NR;
                kernel_wasm(rows, kc, g_apack, bp, ldb, c + i * ldc + p * NR, ldc, cols, acc);
            }
        }
    }
}
#else
static kernel_fn g_kernel;
static kernel_fn g_edge_kernel; /* reads a narrow right edge of row-major B in place, if any */
static int g_mr;

/* A kernel over two adjacent panels at once, where the machine has the registers for it. */
typedef void (*pair_kernel_fn)(int m, int64_t kc, const float *a, int64_t lda, const float *b0,
                               const float *b1, int64_t ldb, float *c, int64_t ldc, int cols1,
                               int accumulate);
static pair_kernel_fn g_pair_kernel;
static int g_rows_avx2; /* kernel_avx2_rows: AVX2 with FMA and F16C, not AVX-512 */

/* The kernel for this machine and its row block, chosen once. */
static kernel_fn pick_kernel(int *mr) {
#if defined(AL_X86_DISPATCH)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f")) {
        *mr = 12;
        g_pair_kernel = kernel_avx512_pair;
        g_edge_kernel = kernel_avx512;
        return kernel_avx512;
    }
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
        *mr = 6;
        g_rows_avx2 = __builtin_cpu_supports("f16c") != 0;
        return kernel_avx2;
    }
#endif
    *mr = 6;
    return kernel_portable;
}


/* Native: within a block of k, panels of B outermost: a panel (or two) stays in L1 while every
 * row block of A passes over it, A read in place. */
static void gemm_blocks(float *c, int64_t ldc, const float *a, int64_t lda, al_bmat b,
                        int64_t m, int64_t n, int64_t k, int accumulate) {
    if (!g_kernel) g_kernel = pick_kernel(&g_mr);
    float edge[KC * NR];
    /* 16-bit B: a panel pair's block widened into wide0, wide1 once, read by every row block.
     * A few rows without the widening kernel widen blocks of KC16 rows so that the pair's
     * floats stay in L1 (32 KB); a prefill keeps KC, which passes over C fewer times. The
     * widening kernel (kernel_avx512_pair16, a decode step) keeps KC too: each panel is then
     * read as one run of up to 32 KB rather than runs of 8 KB the prefetchers start afresh.
     * Either way each output is summed over k in order: the same bits. */
    enum { KC16 = 256 };
    const int widen_in_kernel = g_pair_kernel && b.dtype != AL_WEIGHTS_F32 && m <= 6;
#if defined(AL_X86_DISPATCH)
    if (g_pair_kernel && m >= PACK_MIN_ROWS && k >= PACK_MIN_K) {
        gemm_packed(c, ldc, a, lda, b, m, n, k, accumulate);
        return;
    }
#endif
    /* AVX2: one or two rows against several panels at once (kernel_avx2_rows), 16-bit B widened
     * as it is loaded; float32 B when its panels are padded (NR columns each) */
    const int rows_avx2 = g_rows_avx2 && m <= 2 && (b.dtype != AL_WEIGHTS_F32 || b.padded);
    const int64_t kblock = b.dtype != AL_WEIGHTS_F32 && m < 2 * MR_MAX && !widen_in_kernel && !rows_avx2 ? KC16 : KC;
    float wide0[KC * NR], wide1[KC * NR];
    for (int64_t k0 = 0; k0 < k; k0 += kblock) {
        const int64_t kc = k - k0 < kblock ? k - k0 : kblock;
        const int acc = accumulate || k0 > 0;
        for (int64_t j = 0; j < n;) {
            const int cols = n - j < NR ? (int)(n - j) : NR;
            const int64_t at = (j / NR) * b.panel_stride + k0 * b.row_stride;
            int64_t ldb = b.dtype == AL_WEIGHTS_F32 ? b.row_stride : NR;
            /* Two full-or-padded panels side by side, when the kernel exists and the second
             * panel can be read as it is. */
            const int cols1 = n - j - NR < NR ? (int)(n - j - NR) : NR;
#if defined(AL_X86_DISPATCH)
            /* 16-bit B and a few rows: widened as the kernel loads it */
            if (widen_in_kernel && n - j > NR) {
                const uint16_t *b0 = (const uint16_t *)b.p + at;
                kernel_avx512_pair16((int)m, kc, a + k0, lda, b0, b0 + b.panel_stride, b.dtype, c + j, ldc, cols1, acc);
                j += 2 * NR;
                continue;
            }
            /* One or two rows of float32 panels: up to ROW_PANELS of them at once */
            if (g_pair_kernel && m <= 2 && b.padded && b.dtype == AL_WEIGHTS_F32) {
                const int64_t left = (n - j + NR - 1) / NR;
                const int panels = left < ROW_PANELS ? (int)left : ROW_PANELS;
                const int64_t last_cols = n - j - (panels - 1) * NR;
                const panel_steps st = {0, b.panel_stride, NR, 0xFFFF, keep_of(last_cols < NR ? (int)last_cols : NR)};
                kernel_avx512_rows((int)m, panels, kc, a + k0, lda, (const float *)b.p + at, b.row_stride, c + j, ldc, st,
                                   acc);
                j += panels * NR;
                continue;
            }
            if (rows_avx2) {
                const int most = m == 1 ? AVX2_PANELS : 2;
                const int64_t left = (n - j + NR - 1) / NR;
                const int panels = left < most ? (int)left : most;
                const int64_t last_cols = n - j - (panels - 1) * NR;
                kernel_avx2_rows((int)m, panels, kc, a + k0, lda, b, at, ldb, c + j, ldc, last_cols < NR ? (int)last_cols : NR,
                                 acc);
                j += panels * NR;
                continue;
            }
#endif
            const float *bp = panel_block(b, at, kc, wide0);
            if (g_pair_kernel && n - j > NR && (b.padded || cols1 == NR)) {
                const float *bp1 = panel_block(b, at + b.panel_stride, kc, wide1);
                for (int64_t i = 0; i < m; i += g_mr) {
                    const int rows = m - i < g_mr ? (int)(m - i) : g_mr;
                    g_pair_kernel(rows, kc, a + i * lda + k0, lda, bp, bp1, ldb, c + i * ldc + j,
                                  ldc, cols1, acc);
                }
                j += 2 * NR;
                continue;
            }
            kernel_fn kernel = g_kernel;
            if (cols < NR && !b.padded && g_edge_kernel) {
                kernel = g_edge_kernel;
            } else if (cols < NR && !b.padded) {
                copy_edge(edge, bp, ldb, kc, cols);
                bp = edge;
                ldb = NR;
            }
            for (int64_t i = 0; i < m; i += g_mr) {
                const int rows = m - i < g_mr ? (int)(m - i) : g_mr;
                kernel(rows, kc, a + i * lda + k0, lda, bp, ldb, c + i * ldc + j, ldc, cols, acc);
            }
            j += NR;
        }
    }
}
#endif

/* ------------------------------------------------------------------------------------------
 * Driver
 * ------------------------------------------------------------------------------------------ */

void al_gemm(float *c, int64_t ldc, const float *a, int64_t lda, al_bmat b, int64_t m,
             int64_t n, int64_t k, int accumulate) {
    if (m <= 0 || n <= 0) return;
    if (k <= 0) {
        if (!accumulate)
            for (int64_t i = 0; i < m; i++) memset(c + i * ldc, 0, (size_t)n * sizeof(float));
        return;
    }
    gemm_blocks(c, ldc, a, lda, b, m, n, k, accumulate);
}

void al_gemm_batch(float *c, int64_t ldc, int64_t c_step, const float *a, int64_t lda, int64_t a_step, al_bmat b,
                   int64_t b_step, int64_t count, int64_t m, int64_t n, int64_t k, int accumulate) {
#if defined(AL_X86_DISPATCH)
    /* 1. One or two rows of A against one padded float32 panel per product (a decode step's
     *    weights · V, head by head): ROW_PANELS products a kernel call, their chains of
     *    multiply-adds side by side; a block of KC rows of k at a time, C carrying the sums. */
    if (!g_kernel) g_kernel = pick_kernel(&g_mr);
    if (g_pair_kernel && m >= 1 && m <= 2 && n >= 1 && n <= NR && k >= 1 && b.padded && b.dtype == AL_WEIGHTS_F32) {
        const panel_steps st = {a_step, b_step, c_step, keep_of((int)n), keep_of((int)n)};
        for (int64_t g = 0; g < count; g += ROW_PANELS)
            for (int64_t k0 = 0; k0 < k; k0 += KC) {
                const int64_t kc = k - k0 < KC ? k - k0 : KC;
                const int panels = count - g < ROW_PANELS ? (int)(count - g) : ROW_PANELS;
                kernel_avx512_rows((int)m, panels, kc, a + g * a_step + k0, lda,
                                   (const float *)b.p + g * b_step + k0 * b.row_stride, b.row_stride, c + g * c_step, ldc,
                                   st, accumulate || k0 > 0);
            }
        return;
    }
#endif
    /* 2. Otherwise one product after the other. */
    const int64_t esize = b.dtype == AL_WEIGHTS_F32 ? 4 : 2;
    for (int64_t g = 0; g < count; g++) {
        al_bmat bg = b;
        bg.p = (const char *)b.p + g * b_step * esize;
        al_gemm(c + g * c_step, ldc, a + g * a_step, lda, bg, m, n, k, accumulate);
    }
}

al_bmat al_bmat_packed(const float *packed, int64_t k) { return al_bmat_panels(packed, AL_WEIGHTS_F32, k); }

al_bmat al_bmat_panels(const void *packed, al_weight_dtype dtype, int64_t k) {
    al_bmat b = {packed, k * NR, NR, 1, dtype};
    return b;
}

al_bmat al_bmat_rows(const float *b, int64_t ldb) {
    al_bmat m = {b, NR, ldb, 0, AL_WEIGHTS_F32};
    return m;
}
