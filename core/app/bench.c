/* bench.c — times the core alone: one prefill (the whole sequence, no cache), one decode step
 * against a cache of a given length, and the same step done by recomputing the sequence
 * without a cache. Weights are nn.Linear's default init and inputs randn, drawn with PyTorch's
 * generator, so a PyTorch benchmark seeded the same way runs on the same numbers. Each time is
 * the median of `repeats` runs after a warm-up of at least WARMUP_MS (caches filled, and the
 * CPU's clock up from idle: a single warm-up run of a few microseconds is not enough). */
#define _POSIX_C_SOURCE 199309L
#include "attnlab/app.h"
#include "base/internal.h"
#include "kernels/fma_peak.h"
#include "kernels/gemm.h"
#include "kernels/stream_read.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

enum { WARMUP_MS = 100, WARMUP_MAX_RUNS = 100000, BENCH_MAX_REPEATS = 1000 };
/* At most this much arithmetic per benchmark call: about 5 s natively here, half a minute in
 * WebAssembly. */
#define BENCH_MAX_FLOPS 1e12

static int cmp_double(const void *a, const void *b) {
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int64_t n) {
    al_sort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

int64_t al_attn_flops_causal(const al_attn_hparams *hp, int64_t n_query, int64_t n_keys) {
    const int64_t rectangle = al_attn_flops_full(hp, n_query, n_keys);
    if (rectangle < 0 || n_query > n_keys) return -1;
    /* the masked triangle: query s (from 0) skips the n_query − 1 − s keys after its own */
    return rectangle - 4 * hp->n_heads * hp->head_dim * (n_query * (n_query - 1) / 2);
}

void al_bench_config_default(al_bench_config *b) {
    *b = (al_bench_config){.hp = al_attn_hparams_default(), .seq = 0, .decode_at = 0, .repeats = 5, .seed = 0};
}

al_status al_bench_run(const al_bench_config *b, al_bench_result *out, al_error *err) {
    if (!b || !out) return al_fail(err, AL_ERR_ARG, "bench: NULL argument");
    memset(out, 0, sizeof *out);
    if (b->seq < 0 || b->decode_at < 0 || (b->seq == 0 && b->decode_at == 0))
        return al_fail(err, AL_ERR_ARG, "bench: give a sequence length and/or a decode position");
    if (b->repeats < 1 || b->repeats > BENCH_MAX_REPEATS)
        return al_fail(err, b->repeats < 1 ? AL_ERR_ARG : AL_ERR_LIMIT,
                       "bench: repeats must be between 1 and %d (got %lld)",
                       BENCH_MAX_REPEATS, (long long)b->repeats);
    if (b->seed < 0) return al_fail(err, AL_ERR_ARG, "bench: seed must be >= 0");
    al_status hp_st = al_attn_hparams_check(&b->hp, err);
    if (hp_st != AL_OK) return hp_st;
    if (b->seq > AL_MAX_SEQ || b->decode_at > AL_MAX_SEQ - 1)
        return al_fail(err, AL_ERR_LIMIT, "bench: seq and decode_at must be below %d", AL_MAX_SEQ);
    const al_attn_capacity cap = {1, b->seq > b->decode_at + 1 ? b->seq : b->decode_at + 1};
    if ((hp_st = al_attn_check(&b->hp, &cap, err)) != AL_OK) return hp_st; /* memory first */
    /* The work asked for, bounded like memory: the timed runs (and as many again for the
     * warm-up, which runs at least once): each prefill, each decode step and its recompute. */
    const double per_repeat = (b->seq ? (double)al_attn_flops_full(&b->hp, b->seq, b->seq) : 0.0) +
                              (b->decode_at ? (double)al_attn_flops_full(&b->hp, 1, b->decode_at + 1) +
                                                  (double)al_attn_flops_full(&b->hp, b->decode_at + 1, b->decode_at + 1)
                                            : 0.0);
    const double work = per_repeat * (double)(b->repeats + 1);
    if (work > BENCH_MAX_FLOPS)
        return al_fail(err, AL_ERR_LIMIT,
                       "bench: this asks for %.0f GFLOP of work (%lld repeats and a warm-up); the "
                       "limit is %.0f GFLOP: lower the sequence, the decode position or the repeats",
                       work * 1e-9, (long long)b->repeats, BENCH_MAX_FLOPS * 1e-9);

    const al_attn_hparams cfg = b->hp;
    al_attn *attn = NULL;
    al_kv_cache *cache = NULL;
    al_status st = al_attn_create(&cfg, &cap, &attn, err);
    if (st == AL_OK) st = al_kv_cache_create(&cfg, &cap, &cache, err);
    const int64_t n = cap.max_seq;
    float *x = st == AL_OK ? malloc((size_t)(2 * n * cfg.hidden) * sizeof(float)) : NULL;
    double *times = st == AL_OK ? malloc((size_t)b->repeats * sizeof(double)) : NULL;
    al_rng *rng = st == AL_OK ? al_rng_create((uint64_t)b->seed) : NULL;
    if (st == AL_OK && (!x || !times || !rng)) st = al_fail(err, AL_ERR_NOMEM, "bench: out of memory");
    if (st != AL_OK) goto done;
    float *y = x + n * cfg.hidden;
    al_attn_init_torch(attn, rng);
    al_rng_randn(rng, x, n * cfg.hidden);

    if (b->seq > 0) {
        const double warm_until = now_ms() + WARMUP_MS;
        for (int64_t w = 0; w < WARMUP_MAX_RUNS && (w == 0 || now_ms() < warm_until); w++)
            if ((st = al_attn_forward(attn, NULL, y, NULL, 0, x, 1, b->seq, err)) != AL_OK) goto done;
        for (int64_t r = 0; r < b->repeats; r++) {
            const double t0 = now_ms();
            if ((st = al_attn_forward(attn, NULL, y, NULL, 0, x, 1, b->seq, err)) != AL_OK) goto done;
            times[r] = now_ms() - t0;
        }
        out->prefill_ms = median(times, b->repeats);
        out->prefill_gflops = (double)al_attn_flops_causal(&cfg, b->seq, b->seq) / (out->prefill_ms * 1e6);
    }
    if (b->decode_at > 0) {
        const int64_t C = b->decode_at;
        const float *token = x + C * cfg.hidden; /* the token at position C */
        if ((st = al_attn_forward(attn, cache, y, NULL, 0, x, 1, C, err)) != AL_OK) goto done;
        const double warm_until = now_ms() + WARMUP_MS;
        for (int64_t w = 0; w < WARMUP_MAX_RUNS && (w == 0 || now_ms() < warm_until); w++) {
            if ((st = al_attn_forward(attn, cache, y, NULL, 0, token, 1, 1, err)) != AL_OK) goto done;
            al_kv_cache_truncate(cache, C);
        }
        for (int64_t r = 0; r < b->repeats; r++) {
            const double t0 = now_ms();
            if ((st = al_attn_forward(attn, cache, y, NULL, 0, token, 1, 1, err)) != AL_OK) goto done;
            times[r] = now_ms() - t0;
            al_kv_cache_truncate(cache, C); /* the next run decodes the same step again */
        }
        out->decode_ms = median(times, b->repeats);
        for (int64_t r = -1; r < b->repeats; r++) {
            const double t0 = now_ms();
            if ((st = al_attn_forward(attn, NULL, y, NULL, 0, x, 1, C + 1, err)) != AL_OK) goto done;
            if (r >= 0) times[r] = now_ms() - t0;
        }
        out->decode_recompute_ms = median(times, b->repeats);
    }
done:
    al_rng_free(rng);
    free(times);
    free(x);
    al_kv_cache_free(cache);
    al_attn_free(attn);
    return st;
}

/* ---- the whole model ---------------------------------------------------------------------- */

/* How many of weight p the model holds: one per layer (the embedding, final norm and head are
 * the model's own) and, for the experts' weights, one per expert of each layer. */
static void param_extent(const al_model_hparams *hp, int p, int64_t *layers, int64_t *experts) {
    *layers = p != AL_MP_EMBED && p != AL_MP_LM_HEAD && p != AL_MP_FINAL_NORM ? hp->n_layers : 1;
    *experts = p >= AL_MP_EXPERT_GATE ? hp->n_experts : 1;
}

/* The weights a decode step reads: every matrix and norm of every layer, top_k of the experts of
 * each layer (the ones a token uses), the final norm and the head (the embedding when tied; an
 * untied model reads one row of its embedding, left out). Returns the bytes. */
static int64_t decode_weight_bytes(const al_model *m) {
    const al_model_hparams *hp = al_model_get_hparams(m);
    int64_t bytes = 0;
    for (int p = 0; p < AL_MP_COUNT; p++) {
        if (p == AL_MP_EMBED && !hp->tied) continue;
        int64_t layers, experts;
        param_extent(hp, p, &layers, &experts);
        if (p >= AL_MP_EXPERT_GATE) experts = hp->top_k; /* the experts one token uses */
        for (int64_t l = 0; l < layers; l++)
            for (int64_t e = 0; e < experts; e++) {
                /* the norms are float32; the rest in the dtype the model holds them in */
                const int norm = al_model_param_shape(hp, (al_model_param)p, (int64_t[2]){0, 0}) == 1;
                const int64_t size = norm || al_model_weight_dtype(m) == AL_WEIGHTS_F32 ? 4 : 2;
                const int64_t numel = al_model_read_param(m, (al_model_param)p, l, e, NULL, 0);
                if (numel > 0) bytes += numel * size;
            }
    }
    return bytes;
}

enum { READ_ALIGN = 64, READ_MIN_MIB = 1 };
#define READ_DEFAULT_BYTES ((int64_t)1 << 30)
#define READ_MAX_BYTES ((int64_t)16 << 30)

/* Memory's read speed over a buffer of `bytes` (rounded down to 64 floats), halved while it
 * cannot be allocated, down to 1 MiB: the buffer's size and the lanes used written to out. */
static al_status measure_read(int64_t bytes, al_model_bench_result *out, al_error *err) {
    const int64_t step = READ_ALIGN * (int64_t)sizeof(float);
    for (bytes -= bytes % step; bytes >= ((int64_t)READ_MIN_MIB << 20); bytes = bytes / 2 - bytes / 2 % step) {
        if ((uint64_t)bytes > (uint64_t)SIZE_MAX) continue;
        float *buf = aligned_alloc(READ_ALIGN, (size_t)bytes);
        if (!buf) continue;
        memset(buf, 0, (size_t)bytes); /* every page written, so every page is memory */
        int lanes = 0;
        out->read_gb_per_s = al_stream_read_gb_per_s(buf, bytes / (int64_t)sizeof(float), 5, &lanes, &out->read_checksum);
        out->read_buffer_bytes = bytes;
        out->read_lanes = lanes;
        free(buf);
        return AL_OK;
    }
    return al_fail(err, AL_ERR_NOMEM, "model bench: no memory for the %d MiB read buffer", READ_MIN_MIB);
}

al_status al_model_bench_run(al_model *m, int64_t prompt, int64_t decode, int64_t repeats, int64_t read_bytes,
                             al_model_bench_result *out, al_error *err) {
    if (!m || !out) return al_fail(err, AL_ERR_ARG, "model bench: NULL argument");
    memset(out, 0, sizeof *out);
    const al_model_hparams *hp = al_model_get_hparams(m);
    if (prompt < 1 || decode < 0 || prompt + decode > al_model_context(m))
        return al_fail(err, AL_ERR_ARG, "model bench: a prompt of %lld and %lld decode steps must fit the context of %lld",
                       (long long)prompt, (long long)decode, (long long)al_model_context(m));
    if (repeats < 1 || repeats > BENCH_MAX_REPEATS)
        return al_fail(err, repeats < 1 ? AL_ERR_ARG : AL_ERR_LIMIT, "model bench: repeats must be between 1 and %d",
                       BENCH_MAX_REPEATS);
    if (read_bytes != 0 && (read_bytes < ((int64_t)READ_MIN_MIB << 20) || read_bytes > READ_MAX_BYTES))
        return al_fail(err, AL_ERR_ARG, "model bench: read_bytes must be 0 (1 GiB) or from 1 MiB to 16 GiB (got %lld)",
                       (long long)read_bytes);
    int32_t *ids = malloc((size_t)(prompt + decode) * sizeof *ids);
    float *logits = malloc((size_t)hp->vocab * sizeof *logits);
    al_status st = !ids || !logits ? al_fail(err, AL_ERR_NOMEM, "model bench: out of memory") : AL_OK;
    /* Fixed ids (the work does not depend on which): the prompt, then each step's token. */
    for (int64_t i = 0; st == AL_OK && i < prompt + decode; i++) ids[i] = (int32_t)((7 * i + 3) % hp->vocab);
    double prefill[BENCH_MAX_REPEATS + 1], step[BENCH_MAX_REPEATS + 1];
    /* One warm-up run, then `repeats` timed ones: prefill the prompt, then `decode` one-token
     * steps, each with its logits (what generation pays per token). */
    for (int64_t r = 0; st == AL_OK && r <= repeats; r++) {
        al_model_reset(m);
        double t0 = now_ms();
        st = al_model_forward(m, ids, prompt, logits, 1, hp->vocab, NULL, 0, err);
        prefill[r] = now_ms() - t0;
        t0 = now_ms();
        for (int64_t i = 0; st == AL_OK && i < decode; i++)
            st = al_model_forward(m, &ids[prompt + i], 1, logits, 1, hp->vocab, NULL, 0, err);
        step[r] = decode ? (now_ms() - t0) / (double)decode : 0.0;
    }
    if (st == AL_OK) {
        out->prefill_ms = median(prefill + 1, repeats);
        out->decode_ms = median(step + 1, repeats);
        out->prefill_tokens_per_s = 1e3 * (double)prompt / out->prefill_ms;
        out->decode_tokens_per_s = decode ? 1e3 / out->decode_ms : 0.0;
        /* The memory-bandwidth bound of a decode step: the weights it reads, at the speed memory
         * is read — over a buffer well past the caches, where a large model's weights are. */
        out->weight_bytes_per_token = decode_weight_bytes(m);
        st = measure_read(read_bytes ? read_bytes : READ_DEFAULT_BYTES, out, err);
        out->bandwidth_bound_tokens_per_s =
            out->weight_bytes_per_token > 0 ? out->read_gb_per_s * 1e9 / (double)out->weight_bytes_per_token : 0.0;
        /* The compute bound of the prefill: its multiply-adds at the fastest rate this core
         * issues them (every kernel's ceiling). */
        out->prefill_flops = al_model_flops_causal(hp, prompt, 0, 1);
        int fma_lanes = 0;
        out->fma_peak_gflops = al_fma_peak_gflops(&fma_lanes);
        out->fma_lanes = fma_lanes;
        out->compute_bound_prefill_tokens_per_s =
            out->prefill_flops > 0 ? out->fma_peak_gflops * 1e9 * (double)prompt / (double)out->prefill_flops : 0.0;
    }
    free(ids);
    free(logits);
    return st;
}

/* ---- training ------------------------------------------------------------------------------ */

al_status al_train_bench_run(const al_model_hparams *hp, int64_t batch, int64_t seq, int64_t steps, double *step_ms,
                             al_error *err) {
    if (!hp || !step_ms) return al_fail(err, AL_ERR_ARG, "train bench: NULL argument");
    if (steps < 1 || steps > BENCH_MAX_REPEATS)
        return al_fail(err, AL_ERR_ARG, "train bench: steps must be between 1 and %d", BENCH_MAX_REPEATS);
    al_trainer *t = NULL;
    al_status st = al_trainer_create(hp, batch, seq, &t, err);
    if (st == AL_OK) st = al_trainer_init_weights(t, 0, err);
    int32_t *ids = st == AL_OK ? malloc((size_t)(batch * seq) * sizeof *ids) : NULL;
    if (st == AL_OK && !ids) st = al_fail(err, AL_ERR_NOMEM, "train bench: out of memory");
    double times[BENCH_MAX_REPEATS + 2];
    al_adamw_params p = al_adamw_params_default();
    /* Two warm-up steps, then `steps` timed ones: MiniMind's step — forward with labels,
     * backward, clipping, AdamW — on fixed ids (the work does not depend on which). */
    for (int64_t s = 0; st == AL_OK && s < steps + 2; s++) {
        for (int64_t i = 0; i < batch * seq; i++) ids[i] = (int32_t)((7 * i + 3 * s + 1) % hp->vocab);
        const double t0 = now_ms();
        al_trainer_zero_grad(t);
        st = al_trainer_forward(t, ids, ids, batch, seq, hp->n_experts ? 5e-4 : 0.0, NULL, NULL, NULL, err);
        if (st == AL_OK) st = al_trainer_backward(t, 1.0f, err);
        if (st == AL_OK) st = al_trainer_step(t, &p, NULL, err);
        times[s] = now_ms() - t0;
    }
    if (st == AL_OK) *step_ms = median(times + 2, steps);
    free(ids);
    al_trainer_free(t);
    return st;
}

/* ---- the kernel alone --------------------------------------------------------------------- */

double al_bench_fma_peak_gflops(int32_t *lanes) {
    int width = 0;
    const double g = al_fma_peak_gflops(&width);
    if (lanes) *lanes = width;
    return g;
}

al_status al_gemm_bench_run(int64_t m, int64_t n, int64_t k, int64_t repeats, double *gflops, al_error *err) {
    if (!gflops) return al_fail(err, AL_ERR_ARG, "gemm bench: NULL argument");
    *gflops = 0.0;
    if (m < 1 || n < 1 || k < 1 || m > AL_MAX_SEQ || n > 65536 || k > 65536)
        return al_fail(err, AL_ERR_ARG, "gemm bench: m, n, k must be between 1 and %d, 65536, 65536", AL_MAX_SEQ);
    if (repeats < 1 || repeats > BENCH_MAX_REPEATS)
        return al_fail(err, AL_ERR_ARG, "gemm bench: repeats must be between 1 and %d", BENCH_MAX_REPEATS);
    if (2.0 * (double)m * (double)n * (double)k * (double)(repeats + 1) > BENCH_MAX_FLOPS)
        return al_fail(err, AL_ERR_LIMIT, "gemm bench: too much work asked");
    /* A [m, k] and W [n, k] from N(0, 1) (PyTorch's generator, seed 0), W packed as the model
     * packs its weights; C [m, n] = A · Wᵀ, as a projection of m tokens. */
    float *a = malloc((size_t)(m * k) * sizeof *a), *w = malloc((size_t)(n * k) * sizeof *w);
    float *packed = malloc((size_t)al_pack_panels_size(n, k) * sizeof *packed), *c = malloc((size_t)(m * n) * sizeof *c);
    double *times = malloc((size_t)repeats * sizeof *times);
    al_rng *rng = al_rng_create(0);
    al_status st = a && w && packed && c && times && rng ? AL_OK : al_fail(err, AL_ERR_NOMEM, "gemm bench: out of memory");
    if (st == AL_OK) {
        al_rng_normal(rng, a, m * k, 0.0f, 1.0f);
        al_rng_normal(rng, w, n * k, 0.0f, 1.0f);
        al_pack_panels(packed, w, n, k);
        const al_bmat b = al_bmat_packed(packed, k);
        const double start = now_ms();
        for (int runs = 0; runs < WARMUP_MAX_RUNS && (runs < 1 || now_ms() - start < WARMUP_MS); runs++)
            al_gemm(c, n, a, k, b, m, n, k, 0);
        for (int64_t r = 0; r < repeats; r++) {
            const double t0 = now_ms();
            al_gemm(c, n, a, k, b, m, n, k, 0);
            times[r] = now_ms() - t0;
        }
        const double ms = median(times, repeats);
        *gflops = ms > 0.0 ? 2.0 * (double)m * (double)n * (double)k / (ms * 1e6) : 0.0;
    }
    free(a), free(w), free(packed), free(c), free(times);
    al_rng_free(rng);
    return st;
}
