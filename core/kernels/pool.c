/* pool.c — the threads a model computes on (C11 <threads.h>, in glibc's libc since 2.34) and
 * the GEMM split over them. Work is split over outputs only: each thread computes whole
 * columns of C, each summed over k in order as on one thread, so every number is the same
 * whatever the number of threads; no reduction is ever split.
 *
 * A job is handed out by a generation count under one mutex: the caller bumps it and
 * broadcasts, each worker runs its part and counts itself done; the caller runs part 0 and
 * waits for the count. A decode step runs about 60 jobs (one per projection), each a fraction
 * of a millisecond, one after the other: a worker put to sleep between two of them must be
 * woken and given a core again, which on a busy machine took longer than the job. So both
 * sides first watch the count for a short while (SPIN checks, tens of microseconds) and sleep
 * on the condition only when nothing came: the next job of a step arrives within that time.
 *
 * WebAssembly has no thread of its own to start: the threaded build (AL_WASM_THREADS, a shared
 * memory) is given its threads by its host (web/core/wasm-loader.js starts Workers, each an
 * instance of the same module on the same memory that calls al_wasm_thread_run and stays
 * there). A pool of more than one thread borrows all of them: the job goes out through a
 * generation count that parked threads watch for a while (WASM_SPIN), then wait on
 * (memory.atomic.wait32, allowed in a Worker), and the caller spins for the parts to finish (a
 * page's main thread may not wait). A part must not allocate (emmalloc holds no lock here): the
 * GEMM's parts do not. */
#define _POSIX_C_SOURCE 200809L /* sigprocmask */
#include "kernels/pool.h"

#include <stdlib.h>

#if !defined(__wasm__)
#include <signal.h>
#include <stdatomic.h>
#include <threads.h>
#define AL_POOL_THREADS 1
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define SPIN_PAUSE() _mm_pause()
#else
#define SPIN_PAUSE() ((void)0)
#endif
/* how many times a waiting side looks at the count before it sleeps */
enum { SPIN = 2000 };
#elif defined(AL_WASM_THREADS)
#include <stdatomic.h>
#include <stdint.h>
#endif

struct al_pool {
    int threads;
#if defined(AL_POOL_THREADS)
    thrd_t *workers;                       /* [threads - 1] */
    int started;                           /* workers started (all, once created) */
    mtx_t lock;
    cnd_t job, done;                       /* a new job; a part finished */
    _Atomic uint64_t generation;           /* jobs handed out (written under the lock) */
    atomic_int finished;                   /* parts of the current job done */
    int quit;
    void (*fn)(void *ctx, int part, int parts);
    void *ctx;
#endif
};

#if defined(AL_WASM_THREADS)
/* The host's threads, one job at a time (one thread calls the core): */
static atomic_int g_hosts;                  /* threads parked in al_wasm_thread_run */
static atomic_int g_generation;             /* jobs handed out; what the parked threads wait on */
static atomic_int g_finished;               /* parts of the current job done */
static void (*g_fn)(void *ctx, int part, int parts);
static void *g_ctx;
static int g_parts;

/* The stack and the thread-local storage of one host thread, in one block from the caller's
 * heap: [tls (its size, rounded to 16) | stack (STACK bytes, growing down from the top)]. */
enum { WASM_THREAD_STACK = 256 << 10 };
/* How many times a parked thread looks at the generation before it waits on it. Woken from
 * memory.atomic.wait32 it started its part 25 to 60 µs after the job went out (Chromium),
 * against a few hundred µs for a product of a MiniMind-3 decode step; the next job of a step
 * comes within this many looks, so it is seen at once. Bounded: between steps, and on a
 * page left alone, the thread waits (a core is not held for nothing). */
enum { WASM_SPIN = 1 << 15 };
extern void __wasm_init_tls(void *mem);

static size_t tls_bytes(void) { return (__builtin_wasm_tls_size() + 15) & ~(size_t)15; }

void *al_wasm_thread_block(void) {
    const size_t align = __builtin_wasm_tls_align() > 16 ? __builtin_wasm_tls_align() : 16;
    return aligned_alloc(align, tls_bytes() + WASM_THREAD_STACK);
}
uintptr_t al_wasm_thread_stack_top(void *block) { return (uintptr_t)block + tls_bytes() + WASM_THREAD_STACK; }

/* The calling instance's thread-local storage in its block (the first thread's too: without
 * it its __tls_base is 0 and the GEMM's buffers would overwrite the start of memory). */
void al_wasm_thread_init_tls(void *block) { __wasm_init_tls(block); }

int al_wasm_threads(void) { return atomic_load(&g_hosts) + 1; }

/* A host thread's life (its stack pointer already set to its block's top by the host): part
 * `part` (1, 2, ...) of every job that has that many parts. Never returns. The generation is
 * read before the thread counts itself in, so no job is handed out that it has not seen. */
void al_wasm_thread_run(int part, void *block) {
    al_wasm_thread_init_tls(block);
    int seen = atomic_load(&g_generation);
    atomic_fetch_add(&g_hosts, 1);
    for (;;) {
        int now = seen;
        for (int i = 0; i < WASM_SPIN && (now = atomic_load(&g_generation)) == seen; i++) {
        }
        while ((now = atomic_load(&g_generation)) == seen)
            __builtin_wasm_memory_atomic_wait32((int *)&g_generation, seen, -1);
        seen = now;
        g_fn(g_ctx, part, g_parts);
        atomic_fetch_add(&g_finished, 1);
    }
}
#endif

#if defined(AL_POOL_THREADS)
typedef struct {
    al_pool *p;
    int part;
} worker_arg;

static int worker(void *arg) {
    worker_arg w = *(worker_arg *)arg;
    free(arg);
    al_pool *p = w.p;
    uint64_t seen = 0;
    for (;;) {
        /* the next job, watched for a while, then waited for under the lock */
        for (int i = 0; i < SPIN && atomic_load(&p->generation) == seen; i++) SPIN_PAUSE();
        mtx_lock(&p->lock);
        while (atomic_load(&p->generation) == seen && !p->quit) cnd_wait(&p->job, &p->lock);
        if (p->quit) break;
        seen = atomic_load(&p->generation);
        void (*fn)(void *, int, int) = p->fn;
        void *ctx = p->ctx;
        mtx_unlock(&p->lock);
        fn(ctx, w.part, p->threads);
        /* counted at once (the caller may be watching), signalled under the lock (it may be
         * between its last look and its wait) */
        if (atomic_fetch_add(&p->finished, 1) + 1 == p->threads - 1) {
            mtx_lock(&p->lock);
            cnd_signal(&p->done);
            mtx_unlock(&p->lock);
        }
    }
    mtx_unlock(&p->lock);
    return 0;
}
#endif

al_pool *al_pool_create(int threads) {
    if (threads < 1) return NULL;
    al_pool *p = calloc(1, sizeof *p);
    if (!p) return NULL;
#if defined(AL_POOL_THREADS)
    p->threads = threads;
    if (threads == 1) return p;
    p->workers = calloc((size_t)(threads - 1), sizeof *p->workers);
    if (!p->workers || mtx_init(&p->lock, mtx_plain) != thrd_success) {
        free(p->workers), free(p);
        return NULL;
    }
    if (cnd_init(&p->job) != thrd_success || cnd_init(&p->done) != thrd_success) {
        mtx_destroy(&p->lock);
        free(p->workers), free(p);
        return NULL;
    }
    /* The workers start with every signal blocked (a thread inherits its creator's mask): a
     * signal sent to the process goes to a thread of the program's own, whose mask and handlers
     * decide what it does (attnlab train holds Ctrl-C while a checkpoint is written), never to a
     * worker in the middle of a product. */
    sigset_t all, before;
    sigfillset(&all);
    sigprocmask(SIG_SETMASK, &all, &before);
    for (int t = 1; t < threads; t++) {
        worker_arg *w = malloc(sizeof *w);
        if (!w) break;
        *w = (worker_arg){p, t};
        if (thrd_create(&p->workers[t - 1], worker, w) != thrd_success) {
            free(w);
            break;
        }
        p->started++;
    }
    sigprocmask(SIG_SETMASK, &before, NULL);
    if (p->started != threads - 1) {
        al_pool_free(p);
        return NULL;
    }
#elif defined(AL_WASM_THREADS)
    /* every host thread takes part in every job (one that sat out could take the next job's
     * part for this one's), so a pool has all of them */
    if (threads > 1 && threads != al_wasm_threads()) {
        free(p);
        return NULL;
    }
    p->threads = threads;
#else
    p->threads = threads;
#endif
    return p;
}

void al_pool_free(al_pool *p) {
    if (!p) return;
#if defined(AL_POOL_THREADS)
    if (p->threads > 1) {
        mtx_lock(&p->lock);
        p->quit = 1;
        cnd_broadcast(&p->job);
        mtx_unlock(&p->lock);
        for (int t = 0; t < p->started; t++) thrd_join(p->workers[t], NULL);
        cnd_destroy(&p->job), cnd_destroy(&p->done);
        mtx_destroy(&p->lock);
    }
    free(p->workers);
#endif
    free(p);
}

int al_pool_threads(const al_pool *p) { return p ? p->threads : 1; }

int al_pool_worth(const al_pool *p, int64_t macs, int64_t units) {
    const int threads = al_pool_threads(p);
    return threads > 1 && macs >= AL_POOL_MIN_MACS && units >= threads;
}

void al_pool_run(al_pool *p, void (*fn)(void *ctx, int part, int parts), void *ctx) {
    const int parts = al_pool_threads(p);
#if defined(AL_POOL_THREADS)
    if (parts > 1) {
        mtx_lock(&p->lock);
        p->fn = fn, p->ctx = ctx;
        atomic_store(&p->finished, 0);
        atomic_fetch_add(&p->generation, 1);
        cnd_broadcast(&p->job);
        mtx_unlock(&p->lock);
        fn(ctx, 0, parts);
        for (int i = 0; i < SPIN && atomic_load(&p->finished) < parts - 1; i++) SPIN_PAUSE();
        if (atomic_load(&p->finished) < parts - 1) {
            mtx_lock(&p->lock);
            while (atomic_load(&p->finished) < parts - 1) cnd_wait(&p->done, &p->lock);
            mtx_unlock(&p->lock);
        }
        return;
    }
#elif defined(AL_WASM_THREADS)
    if (parts > 1) {
        g_fn = fn, g_ctx = ctx, g_parts = parts;
        atomic_store(&g_finished, 0);
        atomic_fetch_add(&g_generation, 1);
        __builtin_wasm_memory_atomic_notify((int *)&g_generation, (unsigned)parts - 1); /* all of them */
        fn(ctx, 0, parts);
        while (atomic_load(&g_finished) < parts - 1) {
        }
        return;
    }
#endif
    for (int part = 0; part < parts; part++) fn(ctx, part, parts);
}

/* ---- the GEMM by columns ------------------------------------------------------------------ */

typedef struct {
    float *c;
    int64_t ldc;
    const float *a;
    int64_t lda;
    al_bmat b;
    int64_t m, n, k;
    int accumulate;
} gemm_job;

/* Part `part` of `parts`: the columns [j0, j1) of C, in whole pairs of panels (the widest
 * kernel's tile), the pairs shared out as evenly as they go. */
static void gemm_part(void *ctx, int part, int parts) {
    const gemm_job *g = ctx;
    const int64_t pair = 2 * AL_GEMM_NR, pairs = (g->n + pair - 1) / pair;
    const int64_t j0 = pairs * part / parts * pair, j1n = pairs * (part + 1) / parts * pair;
    const int64_t j1 = j1n < g->n ? j1n : g->n;
    if (j1 <= j0) return;
    /* B from column j0 on: panel j0 / NR (j0 is a multiple of NR) */
    al_bmat b = g->b;
    const int64_t skip = (j0 / AL_GEMM_NR) * b.panel_stride * (b.dtype == AL_WEIGHTS_F32 ? 4 : 2);
    b.p = (const uint8_t *)b.p + skip;
    al_gemm(g->c + j0, g->ldc, g->a, g->lda, b, g->m, j1 - j0, g->k, g->accumulate);
}

void al_gemm_pool(al_pool *p, float *c, int64_t ldc, const float *a, int64_t lda, al_bmat b, int64_t m, int64_t n,
                  int64_t k, int accumulate) {
    /* too little work to wake the threads for, or fewer pairs of panels than threads */
    if (!al_pool_worth(p, m * n * k, n / (2 * AL_GEMM_NR))) {
        al_gemm(c, ldc, a, lda, b, m, n, k, accumulate);
        return;
    }
    gemm_job g = {c, ldc, a, lda, b, m, n, k, accumulate};
    al_pool_run(p, gemm_part, &g);
}
