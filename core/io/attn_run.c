/* attn_files.c — one attention layer run on files: weights and input as safetensors images, the
 * result as a safetensors image (one layer on files, not the model's forward pass). The
 * sequence is run twice — the whole of it in one pass without a cache (the seeds'
 * use_cache=False), and as a prefill of P tokens followed by one-token decode steps with the KV
 * cache — so the file shows both and the cache's effect. Everything the run will allocate,
 * the result included, is counted against AL_MAX_BYTES before anything is allocated; a result
 * that is not finite is an error. The CLI's `forward` command and the WebAssembly page share
 * this. */
#include "attnlab/io.h"
#include "base/internal.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The option's value, else the weights file's __metadata__ key, else the seeds' default. */
static al_status resolve(double option, const al_safetensors *st, const char *key,
                         double fallback, double *out, al_error *err) {
    if (!isnan(option)) {
        *out = option;
        return AL_OK;
    }
    const char *meta = al_st_metadata(st, key);
    if (!meta) {
        *out = fallback;
        return AL_OK;
    }
    if (!al_parse_finite(meta, out))
        return al_fail(err, AL_ERR_FORMAT, "__metadata__ '%s' is not a finite number: '%.40s'",
                       key, meta);
    return AL_OK;
}

al_attn_files_options al_attn_files_options_default(void) {
    al_attn_files_options o;
    o.layer = -1;
    o.rope_base = NAN;
    o.eps = NAN;
    o.prefill = 0;
    o.attn_weights = 1;
    return o;
}

/* Everything one run holds, released in one place. */
typedef struct {
    al_safetensors *weights, *input;
    al_attn *attn;
    al_kv_cache *cache;
    float *x, *work;
} run_state;

static void run_free(run_state *r) {
    al_st_free(r->weights);
    al_st_free(r->input);
    al_attn_free(r->attn);
    al_kv_cache_free(r->cache);
    free(r->x);
    free(r->work);
}

/* Records which file an error is about, for the caller's message. */
static al_status in_file(al_attn_files_summary *sum, int file, al_status st) {
    sum->failed_file = file;
    return st;
}

/* "[2, 3, 4]" for messages. */
static const char *shape_text(char *buf, size_t cap, const int64_t *shape, int ndim) {
    size_t used = 0;
    buf[0] = '\0';
    for (int d = 0; d < ndim && used < cap; d++)
        used += (size_t)al_snprintf(buf + used, cap - used, "%s%lld", d ? ", " : "[", (long long)shape[d]);
    if (used < cap) al_snprintf(buf + used, cap - used, ndim ? "]" : "[]");
    return buf;
}

/* AL_ERR_NONFINITE naming the tensor and the index of its first NaN or infinity, if any. */
static al_status check_finite(const char *name, const float *v, const int64_t *shape, int ndim,
                              al_error *err) {
    int64_t n = 1;
    for (int d = 0; d < ndim; d++) n *= shape[d];
    for (int64_t i = 0; i < n; i++) {
        if (isfinite(v[i])) continue;
        int64_t index[AL_ST_MAX_DIMS], rest = i;
        for (int d = ndim - 1; d >= 0; d--) index[d] = rest % shape[d], rest /= shape[d];
        char at[128];
        return al_fail(err, AL_ERR_NONFINITE,
                       "the result '%s' is %s at %s: the weights or the input are too large for "
                       "float32", name, isnan(v[i]) ? "NaN" : "infinite", shape_text(at, sizeof at, index, ndim));
    }
    return AL_OK;
}

static al_status run(run_state *r, const uint8_t *weights, size_t weights_size,
                     const uint8_t *input, size_t input_size, const al_attn_files_options *opt,
                     uint8_t **out, al_attn_files_summary *sum, al_error *err) {
    al_status st;
    /* 1. Both files indexed in place: their images outlive the run. */
    if ((st = al_st_parse_view(weights, weights_size, &r->weights, err)) != AL_OK)
        return in_file(sum, AL_FILE_WEIGHTS, st);
    if ((st = al_st_parse_view(input, input_size, &r->input, err)) != AL_OK)
        return in_file(sum, AL_FILE_INPUT, st);

    /* 2. x [batch, seq, hidden] fixes the capacities the layer needs. */
    al_st_tensor xt;
    char shown[128];
    if (al_st_find(r->input, "x", &xt) != AL_OK)
        return in_file(sum, AL_FILE_INPUT, al_fail(err, AL_ERR_MISSING, "no tensor named 'x'"));
    if (xt.ndim != 3 || xt.shape[0] < 1 || xt.shape[1] < 1 || xt.shape[2] < 1)
        return in_file(sum, AL_FILE_INPUT,
                       al_fail(err, AL_ERR_SHAPE, "tensor 'x' has shape %s; it must be [batch, seq, hidden] "
                                                  "with no empty dimension",
                               shape_text(shown, sizeof shown, xt.shape, xt.ndim)));
    const int64_t batch = xt.shape[0], seq = xt.shape[1];
    if (batch > AL_MAX_BATCH || seq > AL_MAX_SEQ)
        return in_file(sum, AL_FILE_INPUT,
                       al_fail(err, AL_ERR_LIMIT, "x has batch %lld and seq %lld; the limits are %d and %d",
                               (long long)batch, (long long)seq, AL_MAX_BATCH, AL_MAX_SEQ));
    const int64_t prefill = opt->prefill ? opt->prefill : seq;
    if (prefill < 1 || prefill > seq)
        return al_fail(err, AL_ERR_ARG, "a prefill of %lld tokens is longer than the sequence (%lld tokens)",
                       (long long)prefill, (long long)seq);

    /* 3. The layer's hyper-parameters: RoPE base and eps from the options or the metadata
     *    (checked as given, before eps is rounded to float32), the rest from the shapes. */
    al_attn_hparams cfg = al_attn_hparams_default();
    const al_attn_capacity cap = {batch, seq};
    double eps;
    if ((st = resolve(opt->rope_base, r->weights, "rope_base", 10000.0, &cfg.rope_base, err)) != AL_OK ||
        (st = resolve(opt->eps, r->weights, "eps", 1e-6, &eps, err)) != AL_OK)
        return in_file(sum, AL_FILE_WEIGHTS, st);
    char given[AL_SHORTEST_MAX];
    if (!(eps >= FLT_MIN && eps < 1.0) || !((float)eps < 1.0f))
        return al_fail(err, AL_ERR_CONFIG, "eps must be in (0, 1), and stay there as a normal "
                       "float32 number (got %s)", al_format_shortest(given, eps));
    cfg.eps = (float)eps;
    cfg.head_dim = 0; /* from the QK-Norm weights */

    char prefix[64] = "";
    if (opt->layer >= 0)
        al_snprintf(prefix, sizeof prefix, "model.layers.%lld.self_attn.", (long long)opt->layer);
    if ((st = al_attn_hparams_from_safetensors(r->weights, prefix, &cfg, &cfg, err)) != AL_OK) {
        al_st_tensor probe;
        if (opt->layer < 0 && st == AL_ERR_MISSING &&
            al_st_find(r->weights, "model.layers.0.self_attn.q_proj.weight", &probe) == AL_OK) {
            const size_t used = strlen(err->msg);
            al_snprintf(err->msg + used, sizeof err->msg - used,
                        " (this is a MiniMind checkpoint: choose a layer with --layer N)");
        }
        return in_file(sum, AL_FILE_WEIGHTS, st);
    }
    if (xt.shape[2] != cfg.hidden)
        return in_file(sum, AL_FILE_INPUT,
                       al_fail(err, AL_ERR_SHAPE, "x has hidden size %lld but the weights expect %lld",
                               (long long)xt.shape[2], (long long)cfg.hidden));
    if ((st = al_attn_check(&cfg, &cap, err)) != AL_OK) return st;

    /* 4. Everything the run allocates, counted before any of it is: the layer and its cache,
     *    x, the work buffer and the result file. Within the limits checked above no product
     *    below reaches 2^47, so int64 cannot overflow, and a total within AL_MAX_BYTES fits a
     *    32-bit size_t (WebAssembly). */
    const int64_t H = cfg.hidden;
    const int64_t x_n = batch * seq * H;
    const int64_t attn_n = opt->attn_weights ? batch * cfg.n_heads * seq * seq : 0;
    const int64_t kv_n = batch * seq * cfg.n_kv_heads * cfg.head_dim;
    const int64_t work_n = 4 * x_n + attn_n + 2 * kv_n;
    enum { HEADER_BYTES_MAX = 4096 }; /* the result's header: five shapes and six numbers */
    const int64_t result_bytes = 4 * (2 * x_n + attn_n + 2 * kv_n) + HEADER_BYTES_MAX;
    const int64_t total = al_attn_bytes_needed(&cfg, &cap) + 4 * x_n + 4 * work_n + result_bytes;
    if (total > AL_MAX_BYTES)
        return in_file(sum, AL_FILE_INPUT,
                       al_fail(err, AL_ERR_LIMIT,
                               "this run needs %lld MiB (layer and cache, activations, %s and the "
                               "result file) for %lld x %lld tokens; the limit is %lld MiB%s",
                               (long long)((total + (1 << 20) - 1) >> 20),
                               opt->attn_weights ? "attention weights" : "no attention weights",
                               (long long)batch, (long long)seq, (long long)(AL_MAX_BYTES >> 20),
                               opt->attn_weights && attn_n * 8 > total / 2
                                   ? " (without the attention weights it would need less)"
                                   : ""));

    if ((st = al_attn_from_safetensors(r->weights, prefix, &cfg, &cap, &r->attn, err)) != AL_OK)
        return in_file(sum, AL_FILE_WEIGHTS, st);
    r->x = malloc((size_t)x_n * sizeof(float));
    r->work = malloc((size_t)work_n * sizeof(float));
    if (!r->x || !r->work)
        return al_fail(err, AL_ERR_NOMEM, "out of memory for a sequence of %lld tokens", (long long)seq);
    if ((st = al_st_read_f32(r->input, "x", r->x, x_n, err)) != AL_OK)
        return in_file(sum, AL_FILE_INPUT, st);
    float *output = r->work;                /* [batch, seq, hidden] */
    float *output_cached = output + x_n;    /* [batch, seq, hidden] */
    float *x_step = output_cached + x_n;    /* [batch, <= seq, hidden] one call's input */
    float *out_step = x_step + x_n;         /* [batch, <= seq, hidden] one call's output */
    float *attn_weights = out_step + x_n;   /* [batch, n_heads, seq, seq], if asked for */
    float *k_cache = attn_weights + attn_n; /* [batch, seq, n_kv_heads, head_dim] */
    float *v_cache = k_cache + kv_n;        /* [batch, seq, n_kv_heads, head_dim] */

    /* 5. Pass 1: the whole sequence at once, no cache. */
    if ((st = al_attn_forward(r->attn, NULL, output, opt->attn_weights ? attn_weights : NULL,
                              attn_n, r->x, batch, seq, err)) != AL_OK)
        return st;

    /* 6. Pass 2: prefill, then one token at a time against the cache. Each call takes tokens
     *    [t0, t0 + n) of every sequence of the batch: x[:, t0:t0+n]. */
    if ((st = al_kv_cache_create(&cfg, &cap, &r->cache, err)) != AL_OK) return st;
    for (int64_t t0 = 0; t0 < seq;) {
        const int64_t n = t0 == 0 ? prefill : 1;
        for (int64_t b = 0; b < batch; b++)
            memcpy(x_step + b * n * H, r->x + (b * seq + t0) * H, (size_t)(n * H) * sizeof(float));
        if ((st = al_attn_forward(r->attn, r->cache, out_step, NULL, 0, x_step, batch, n, err)) != AL_OK)
            return st;
        for (int64_t b = 0; b < batch; b++)
            memcpy(output_cached + (b * seq + t0) * H, out_step + b * n * H, (size_t)(n * H) * sizeof(float));
        t0 += n;
    }
    al_kv_cache_read(r->cache, 0, k_cache, kv_n);
    al_kv_cache_read(r->cache, 1, v_cache, kv_n);

    /* 7. A result that is not finite is not a result: say which tensor and where. */
    const int64_t out_shape[3] = {batch, seq, H};
    const int64_t attn_shape[4] = {batch, cfg.n_heads, seq, seq};
    const int64_t kv_shape[4] = {batch, seq, cfg.n_kv_heads, cfg.head_dim};
    if ((st = check_finite("output", output, out_shape, 3, err)) != AL_OK ||
        (opt->attn_weights && (st = check_finite("attn_weights", attn_weights, attn_shape, 4, err)) != AL_OK) ||
        (st = check_finite("k_cache", k_cache, kv_shape, 4, err)) != AL_OK ||
        (st = check_finite("v_cache", v_cache, kv_shape, 4, err)) != AL_OK ||
        (st = check_finite("output_cached", output_cached, out_shape, 3, err)) != AL_OK)
        return st;
    double max_diff = 0.0;
    for (int64_t i = 0; i < x_n; i++) {
        const double d = fabs((double)output[i] - (double)output_cached[i]);
        if (!(d <= max_diff)) max_diff = d; /* a NaN difference would stick */
    }

    /* 8. The result, with the resolved configuration as metadata. */
    char vals[6][32];
    al_snprintf(vals[0], 32, "%lld", (long long)cfg.hidden);
    al_snprintf(vals[1], 32, "%lld", (long long)cfg.n_heads);
    al_snprintf(vals[2], 32, "%lld", (long long)cfg.n_kv_heads);
    al_snprintf(vals[3], 32, "%lld", (long long)cfg.head_dim);
    al_snprintf(vals[4], 32, "%.17g", cfg.rope_base);
    al_snprintf(vals[5], 32, "%.9g", (double)cfg.eps);
    const char *meta[] = {"hidden", vals[0], "n_heads", vals[1], "n_kv_heads", vals[2],
                          "head_dim", vals[3], "rope_base", vals[4], "eps", vals[5]};
    al_st_entry entries[5] = {
        {"output", output, 3, {batch, seq, H}},
        {"k_cache", k_cache, 4, {batch, seq, cfg.n_kv_heads, cfg.head_dim}},
        {"v_cache", v_cache, 4, {batch, seq, cfg.n_kv_heads, cfg.head_dim}},
        {"output_cached", output_cached, 3, {batch, seq, H}},
        {"attn_weights", attn_weights, 4, {batch, cfg.n_heads, seq, seq}},
    };
    const int n_entries = opt->attn_weights ? 5 : 4;
    size_t needed = 0;
    if ((st = al_st_serialize(entries, n_entries, meta, 6, NULL, 0, &needed, err)) != AL_OK) return st;
    if ((int64_t)needed > result_bytes) /* the count above must hold */
        return al_fail(err, AL_ERR_LIMIT, "the result needs %zu bytes, more than the %lld counted",
                       needed, (long long)result_bytes);
    uint8_t *file = malloc(needed);
    if (!file) return al_fail(err, AL_ERR_NOMEM, "out of memory for a %zu-byte result", needed);
    if ((st = al_st_serialize(entries, n_entries, meta, 6, file, needed, &needed, err)) != AL_OK) {
        free(file);
        return st;
    }
    *out = file;
    sum->hp = cfg;
    sum->batch = batch;
    sum->seq = seq;
    sum->prefill = prefill;
    sum->max_diff = max_diff;
    sum->bytes = (int64_t)needed;
    return AL_OK;
}

al_status al_attn_files_run(const uint8_t *weights, size_t weights_size, const uint8_t *input,
                            size_t input_size, const al_attn_files_options *opt, uint8_t **out,
                            al_attn_files_summary *summary, al_error *err) {
    al_attn_files_summary scratch;
    al_attn_files_summary *sum = summary ? summary : &scratch;
    memset(sum, 0, sizeof *sum);
    al_error own_err; /* the run appends to messages, so it always has a record to write to */
    if (!err) err = &own_err;
    if (!out) return al_fail(err, AL_ERR_ARG, "forward: no output pointer");
    *out = NULL;
    if (!weights || !input) return al_fail(err, AL_ERR_ARG, "forward: NULL file image");
    const al_attn_files_options defaults = al_attn_files_options_default();
    if (!opt) opt = &defaults;
    run_state r = {0};
    const al_status st = run(&r, weights, weights_size, input, input_size, opt, out, sum, err);
    run_free(&r);
    return st;
}

void al_buffer_free(void *p) { free(p); }
