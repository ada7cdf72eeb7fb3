/* cmd_forward.c — `attnlab forward`: loads one attention layer from safetensors weights (the
 * seeds' names or a MiniMind checkpoint's layer N), runs x through it twice — the whole
 * sequence in one pass, and a prefill of P tokens followed by one-token decode steps with the
 * KV cache — and writes both results, the attention weights and the cache as safetensors. */
#include "cli.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_FILE_BYTES ((size_t)2 << 30) /* 2 GiB: a whole small checkpoint fits */

typedef struct {
    const char *weights, *input, *out;
    int64_t layer;      /* -1: the seeds' names without a prefix */
    double rope_base;   /* NAN: from the file's metadata, else 10000 */
    double eps;         /* NAN: from the file's metadata, else 1e-6 */
    int64_t prefill;    /* 0: the whole sequence */
} forward_args;

static int parse_args(int argc, char **argv, forward_args *a) {
    memset(a, 0, sizeof *a);
    a->layer = -1;
    a->rope_base = NAN;
    a->eps = NAN;
    for (int i = 0; i < argc; i++) {
        const char *flag = argv[i];
        const char *value = i + 1 < argc ? argv[i + 1] : NULL;
        int ok = 1;
        if (!strcmp(flag, "--weights")) a->weights = value;
        else if (!strcmp(flag, "--input")) a->input = value;
        else if (!strcmp(flag, "--out")) a->out = value;
        else if (!strcmp(flag, "--layer")) ok = cli_parse_int(value, 0, 100000, &a->layer);
        else if (!strcmp(flag, "--rope-base")) ok = cli_parse_double(value, &a->rope_base);
        else if (!strcmp(flag, "--eps")) ok = cli_parse_double(value, &a->eps);
        else if (!strcmp(flag, "--prefill")) ok = cli_parse_int(value, 1, AL_MAX_SEQ, &a->prefill);
        else {
            cli_error("unknown option '%s' for forward (see 'attnlab help')", flag);
            return 0;
        }
        if (!value || !ok) {
            cli_error("%s expects %s", flag,
                      !strcmp(flag, "--layer") ? "a layer number >= 0"
                      : !strcmp(flag, "--prefill") ? "a token count >= 1"
                      : (!strcmp(flag, "--rope-base") || !strcmp(flag, "--eps")) ? "a finite number"
                                                                                 : "a file path");
            return 0;
        }
        i++;
    }
    if (!a->weights || !a->input || !a->out) {
        cli_error("forward needs --weights, --input and --out");
        return 0;
    }
    return 1;
}

/* A parsed safetensors file, with the error printed (prefixed by the file name) on failure. */
static al_safetensors *load_safetensors(const char *path) {
    size_t size = 0;
    uint8_t *bytes = cli_read_file(path, MAX_FILE_BYTES, &size);
    if (!bytes) return NULL;
    al_safetensors *st = NULL;
    al_error err = {0};
    if (al_st_parse(bytes, size, &st, &err) != AL_OK) cli_error("%s: %s", path, err.msg);
    free(bytes);
    return st;
}

/* The value of a flag, else of the file's __metadata__ key, else the seeds' default. */
static int resolve_number(double flag, const al_safetensors *st, const char *key, double fallback,
                          const char *path, double *out) {
    if (!isnan(flag)) {
        *out = flag;
        return 1;
    }
    const char *meta = al_st_metadata(st, key);
    if (!meta) {
        *out = fallback;
        return 1;
    }
    if (!cli_parse_double(meta, out)) {
        cli_error("%s: __metadata__ '%s' is not a finite number: '%.40s'", path, key, meta);
        return 0;
    }
    return 1;
}

int cmd_forward(int argc, char **argv) {
    forward_args args;
    if (!parse_args(argc, argv, &args)) return EXIT_BAD_INPUT;

    int rc = EXIT_BAD_INPUT;
    al_error err = {0};
    al_safetensors *weights = NULL, *input = NULL;
    al_attn *attn = NULL;
    al_kv_cache *cache = NULL;
    float *x = NULL, *work = NULL;
    uint8_t *file = NULL;

    if (!(weights = load_safetensors(args.weights)) || !(input = load_safetensors(args.input)))
        goto done;

    /* x [batch, seq, hidden] fixes the capacities the layer needs. */
    al_st_tensor xt;
    if (al_st_find(input, "x", &xt) != AL_OK) {
        cli_error("%s: no tensor named 'x'", args.input);
        goto done;
    }
    if (xt.ndim != 3 || xt.shape[0] < 1 || xt.shape[1] < 1 || xt.shape[2] < 1) {
        cli_error("%s: tensor 'x' must have shape [batch, seq, hidden] with no empty dimension",
                  args.input);
        goto done;
    }
    const int64_t batch = xt.shape[0], seq = xt.shape[1];
    if (batch > AL_MAX_BATCH || seq > AL_MAX_SEQ) {
        cli_error("%s: x has batch %lld and seq %lld; the limits are %d and %d", args.input,
                  (long long)batch, (long long)seq, AL_MAX_BATCH, AL_MAX_SEQ);
        goto done;
    }
    const int64_t prefill = args.prefill ? args.prefill : seq;
    if (prefill > seq) {
        cli_error("--prefill %lld is longer than the sequence (%lld tokens)",
                  (long long)prefill, (long long)seq);
        goto done;
    }

    al_attn_config cfg = al_attn_config_default();
    double eps;
    if (!resolve_number(args.rope_base, weights, "rope_base", 10000.0, args.weights,
                        &cfg.rope_base) ||
        !resolve_number(args.eps, weights, "eps", 1e-6, args.weights, &eps))
        goto done;
    cfg.eps = (float)eps;
    cfg.max_batch = batch;
    cfg.max_seq = seq;
    cfg.head_dim = 0; /* from the QK-Norm weights */

    char prefix[64] = "";
    if (args.layer >= 0) snprintf(prefix, sizeof prefix, "model.layers.%lld.self_attn.", (long long)args.layer);
    if (al_attn_from_safetensors(weights, prefix, &cfg, &attn, &err) != AL_OK) {
        al_st_tensor probe;
        if (args.layer < 0 && err.status == AL_ERR_MISSING &&
            al_st_find(weights, "model.layers.0.self_attn.q_proj.weight", &probe) == AL_OK)
            cli_error("%s: %s (this is a MiniMind checkpoint: choose a layer with --layer N)",
                      args.weights, err.msg);
        else
            cli_error("%s: %s", args.weights, err.msg);
        rc = err.status == AL_ERR_NOMEM ? EXIT_FAILURE_ENV : EXIT_BAD_INPUT;
        goto done;
    }
    cfg = *al_attn_get_config(attn);
    if (xt.shape[2] != cfg.hidden) {
        cli_error("%s: x has hidden size %lld but the weights expect %lld", args.input,
                  (long long)xt.shape[2], (long long)cfg.hidden);
        goto done;
    }

    const int64_t x_n = batch * seq * cfg.hidden;
    const int64_t attn_n = batch * cfg.n_heads * seq * seq;
    const int64_t kv_n = batch * seq * cfg.n_kv_heads * cfg.head_dim;
    const int64_t work_n = 4 * x_n + attn_n + 2 * kv_n;
    x = malloc((size_t)x_n * sizeof(float));
    work = malloc((size_t)work_n * sizeof(float));
    if (!x || !work) {
        cli_error("out of memory for a sequence of %lld tokens", (long long)seq);
        rc = EXIT_FAILURE_ENV;
        goto done;
    }
    if (al_st_read_f32(input, "x", x, x_n, &err) != AL_OK) {
        cli_error("%s: %s", args.input, err.msg);
        goto done;
    }
    const int64_t H = cfg.hidden;
    float *output = work;                      /* [batch, seq, hidden] */
    float *output_cached = output + x_n;       /* [batch, seq, hidden] */
    float *x_step = output_cached + x_n;       /* [batch, ≤ seq, hidden] one call's input */
    float *out_step = x_step + x_n;            /* [batch, ≤ seq, hidden] one call's output */
    float *attn_weights = out_step + x_n;      /* [batch, n_heads, seq, seq] */
    float *k_cache = attn_weights + attn_n;    /* [batch, seq, n_kv_heads, head_dim] */
    float *v_cache = k_cache + kv_n;           /* [batch, seq, n_kv_heads, head_dim] */

    /* Pass 1: the whole sequence at once, no cache (the seeds' use_cache=False). */
    if (al_attn_forward(attn, NULL, output, attn_weights, attn_n, x, batch, seq, &err) != AL_OK)
        goto forward_failed;

    /* Pass 2: prefill of `prefill` tokens, then one token at a time against the cache. Each
     * call takes tokens [t0, t0 + n) of every sequence of the batch: x[:, t0:t0+n]. */
    if (al_kv_cache_create(&cfg, &cache, &err) != AL_OK) goto forward_failed;
    for (int64_t t0 = 0; t0 < seq;) {
        const int64_t n = t0 == 0 ? prefill : 1;
        for (int64_t b = 0; b < batch; b++)
            memcpy(x_step + b * n * H, x + (b * seq + t0) * H, (size_t)(n * H) * sizeof(float));
        if (al_attn_forward(attn, cache, out_step, NULL, 0, x_step, batch, n, &err) != AL_OK)
            goto forward_failed;
        for (int64_t b = 0; b < batch; b++)
            memcpy(output_cached + (b * seq + t0) * H, out_step + b * n * H,
                   (size_t)(n * H) * sizeof(float));
        t0 += n;
    }
    al_kv_cache_read(cache, 0, k_cache, kv_n);
    al_kv_cache_read(cache, 1, v_cache, kv_n);

    double max_diff = 0.0;
    for (int64_t i = 0; i < x_n; i++) {
        double d = fabs((double)output[i] - (double)output_cached[i]);
        if (d > max_diff) max_diff = d;
    }

    /* Write everything, with the config as metadata. */
    char meta_vals[6][32];
    snprintf(meta_vals[0], 32, "%lld", (long long)cfg.hidden);
    snprintf(meta_vals[1], 32, "%lld", (long long)cfg.n_heads);
    snprintf(meta_vals[2], 32, "%lld", (long long)cfg.n_kv_heads);
    snprintf(meta_vals[3], 32, "%lld", (long long)cfg.head_dim);
    snprintf(meta_vals[4], 32, "%.17g", cfg.rope_base);
    snprintf(meta_vals[5], 32, "%.9g", (double)cfg.eps);
    const char *meta[] = {"hidden", meta_vals[0], "n_heads", meta_vals[1],
                          "n_kv_heads", meta_vals[2], "head_dim", meta_vals[3],
                          "rope_base", meta_vals[4], "eps", meta_vals[5]};
    al_st_entry entries[5] = {
        {"output", output, 3, {batch, seq, H}},
        {"attn_weights", attn_weights, 4, {batch, cfg.n_heads, seq, seq}},
        {"k_cache", k_cache, 4, {batch, seq, cfg.n_kv_heads, cfg.head_dim}},
        {"v_cache", v_cache, 4, {batch, seq, cfg.n_kv_heads, cfg.head_dim}},
        {"output_cached", output_cached, 3, {batch, seq, H}},
    };
    size_t needed = 0;
    if (al_st_serialize(entries, 5, meta, 6, NULL, 0, &needed, &err) != AL_OK ||
        !(file = malloc(needed)) ||
        al_st_serialize(entries, 5, meta, 6, file, needed, &needed, &err) != AL_OK) {
        cli_error("cannot serialise the output: %s", err.msg[0] ? err.msg : "out of memory");
        rc = EXIT_FAILURE_ENV;
        goto done;
    }
    if (!cli_write_file_atomic(args.out, file, needed)) {
        rc = EXIT_FAILURE_ENV;
        goto done;
    }
    printf("attention: hidden %lld, heads %lld, kv heads %lld (GQA x%lld), head_dim %lld, "
           "rope_base %g, eps %g, qk_norm %s\n",
           (long long)cfg.hidden, (long long)cfg.n_heads, (long long)cfg.n_kv_heads,
           (long long)(cfg.n_heads / cfg.n_kv_heads), (long long)cfg.head_dim, cfg.rope_base,
           (double)cfg.eps, cfg.qk_norm ? "on" : "off");
    printf("input: batch %lld, seq %lld; cached run: prefill %lld + %lld decode steps\n",
           (long long)batch, (long long)seq, (long long)prefill, (long long)(seq - prefill));
    printf("max |output - output_cached| = %.3e\n", max_diff);
    printf("wrote %s (%zu bytes)\n", args.out, needed);
    rc = EXIT_OK;
    goto done;

forward_failed:
    cli_error("%s", err.msg);
    rc = err.status == AL_ERR_NOMEM ? EXIT_FAILURE_ENV : EXIT_BAD_INPUT;
done:
    free(file);
    free(x);
    free(work);
    al_kv_cache_free(cache);
    al_attn_free(attn);
    al_st_free(weights);
    al_st_free(input);
    return rc;
}
