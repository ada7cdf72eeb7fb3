/* kernels/pool.h — a few threads kept for the life of a model, each given one part of a job at
 * a time, and the GEMM split over them by columns of its output. Not public API. */
#ifndef ATTNLAB_KERNELS_POOL_H
#define ATTNLAB_KERNELS_POOL_H

#include "kernels/gemm.h"

typedef struct al_pool al_pool;

/* A pool of `threads` threads, the caller's included (threads - 1 are started); NULL if they
 * cannot be started. In WebAssembly the threads are the host's (pool.c): the threaded build
 * (AL_WASM_THREADS) makes a pool of exactly al_wasm_threads(), the one-thread build runs every
 * part on the caller's thread. al_pool_free(NULL) is a no-op. */
al_pool *al_pool_create(int threads);
void al_pool_free(al_pool *p);
int al_pool_threads(const al_pool *p); /* 1 for NULL */

/* Whether a job of `macs` multiply-adds over `units` independent outputs (columns, heads) is
 * worth handing to p's threads: more than one thread, at least AL_POOL_MIN_MACS of work, and a
 * unit for every thread. Otherwise the caller runs it alone. */
int al_pool_worth(const al_pool *p, int64_t macs, int64_t units);

/* fn(ctx, part, parts) for part = 0 .. parts - 1 with parts = al_pool_threads(p), each on its
 * own thread (part 0 on the caller's), returning when all have returned. */
void al_pool_run(al_pool *p, void (*fn)(void *ctx, int part, int parts), void *ctx);

/* Products of fewer multiply-adds than this run on the caller's thread alone; the bits are the
 * same either way (each output summed by one thread).
 * - WebAssembly: a parked thread starts its part 25 to 60 µs after the job went out (Chromium,
 *   memory.atomic.wait32), and the 352K multiply-adds of a stories260K FFN product on a chunk of
 *   32 tokens (the model lab's prefill) take 26 µs on one thread: pooled, they had made the
 *   prefill 0.82× as fast on two threads as on one. 2^19 keeps those, and a MiniMind-3 decode
 *   step's 768×384 key and value projections, on the caller's thread. 2^17, with the other
 *   thread watching 8 times longer (pool.c's WASM_SPIN), ran the MiniMind-3-shaped decode on
 *   two threads 1.69–1.98× as fast as on one instead of 1.62–1.64×, but the page's model view
 *   (stories260K, drawing while its worker computes) answered a head switched off in 50 ms
 *   instead of 38: on two cores the threads took the page's.
 * - Native: waking the pool costs some 4.5 µs (2 threads on a 2-core Xeon, measured with
 *   one row of A against packed float32 panels), while one thread does 200K multiply-adds in
 *   7 µs (768×256) and 262K (512×512) in 22 µs against 13 µs on two. Every product of a
 *   stories260K decode step (11K to 33K) is below 2^18: the pool's 11 wake-ups per token had
 *   made two threads slower than one. */
#if defined(__wasm__)
#define AL_POOL_MIN_MACS ((int64_t)1 << 19)
#else
#define AL_POOL_MIN_MACS ((int64_t)1 << 18)
#endif

/* al_gemm with the columns of C split between the pool's threads in whole pairs of panels: each
 * output is computed by one thread exactly as al_gemm computes it (summed over k in order), so
 * the bits do not depend on the number of threads. NULL or one thread: al_gemm. */
void al_gemm_pool(al_pool *p, float *c, int64_t ldc, const float *a, int64_t lda, al_bmat b, int64_t m, int64_t n,
                  int64_t k, int accumulate);

#if defined(AL_WASM_THREADS)
/* The threaded WebAssembly build's threads, for its host (web/core/wasm-loader.js), which
 * starts each as a Worker instance of the module on the same memory:
 *   block = al_wasm_thread_block()           on the first thread: a thread's stack and TLS
 *   stack pointer = al_wasm_thread_stack_top(block), then al_wasm_thread_run(part, block)
 *                                            in the new instance (it never returns)
 * al_wasm_thread_init_tls(block) gives the first thread its own TLS (once, before any call);
 * al_wasm_threads() counts the threads parked, the caller's included. */
#include <stdint.h>
void *al_wasm_thread_block(void);
uintptr_t al_wasm_thread_stack_top(void *block);
void al_wasm_thread_init_tls(void *block);
void al_wasm_thread_run(int part, void *block);
int al_wasm_threads(void);
#endif

#endif
