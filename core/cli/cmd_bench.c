/* cmd_bench.c — `attnlab bench`: times the core alone on PyTorch-initialised random weights
 * (core/app/bench.c) and prints one JSON line:
 *   {"prefill_ms": …, "decode_ms": …, "prefill_gflops": …, "decode_recompute_ms": …} */
#include "cli/cli.h"

#include <stdio.h>
#include <string.h>

/* The largest cache CPU 0 reports (/sys/devices/system/cpu/cpu0/cache/index<i>/size: "48K",
 * "2048K", "32M"), in bytes; 0 when none is readable. */
static int64_t last_level_cache_bytes(void) {
    int64_t best = 0;
    for (int i = 0; i < 16; i++) {
        char path[64];
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
        FILE *f = fopen(path, "r");
        if (!f) continue;
        long long n = 0;
        char unit = 0;
        const int got = fscanf(f, "%lld%c", &n, &unit);
        fclose(f);
        if (got < 1 || n <= 0 || n > (1LL << 40)) continue;
        const int64_t bytes = (int64_t)n * (unit == 'K' ? 1024 : unit == 'M' ? 1024 * 1024 : unit == 'G' ? 1024 * 1024 * 1024 : 1);
        if (bytes > best) best = bytes;
    }
    return best;
}

/* The buffer memory's read speed is measured over: 8 × the last-level cache, at least 1 GiB
 * (and 1 GiB when the cache's size is unknown), at most 2 GiB — a machine shared with others
 * lends no more. */
static int64_t read_buffer_bytes(int64_t llc) {
    const int64_t lo = (int64_t)1 << 30, hi = (int64_t)2 << 30;
    return 8 * llc < lo ? lo : 8 * llc > hi ? hi : 8 * llc;
}

/* MiniMind-3's shape (its config's defaults) for `--preset minimind-3`. */
static al_model_hparams minimind3(void) { return al_minimind_hparams_for(6400, 768, 8, 8, 4); }

/* `attnlab bench --model PATH | --preset minimind-3 [--seq S] [--decode N] [--repeats R]
 * [--read-mib M]`: the whole model's prefill and decode speed, and its bounds, one JSON line. */
static int bench_model(int argc, char **argv) {
    const char *model_path = NULL, *preset = NULL;
    int64_t seq = 128, decode = 128, repeats = 5, seed = 0, read_mib = 0, threads = 0;
    for (int i = 0; i < argc; i += 2) {
        const char *flag = argv[i], *value = i + 1 < argc ? argv[i + 1] : NULL;
        int ok = value != NULL;
        if (!strcmp(flag, "--model")) model_path = value;
        else if (!strcmp(flag, "--preset")) preset = value;
        else if (!strcmp(flag, "--seq")) ok = cli_parse_int(value, 1, AL_MAX_SEQ, &seq);
        else if (!strcmp(flag, "--decode")) ok = cli_parse_int(value, 0, AL_MAX_SEQ, &decode);
        else if (!strcmp(flag, "--repeats")) ok = cli_parse_int(value, 1, 1000, &repeats);
        else if (!strcmp(flag, "--seed")) ok = cli_parse_int(value, 0, INT64_MAX, &seed);
        else if (!strcmp(flag, "--read-mib")) ok = cli_parse_int(value, 1, 16384, &read_mib);
        else if (!strcmp(flag, "--threads")) {
            if (!cli_parse_threads(value, &threads)) return EXIT_BAD_INPUT;
        }
        else {
            cli_error("unknown option '%s' for bench --model / --preset (see 'attnlab help')", cli_show(flag));
            return EXIT_BAD_INPUT;
        }
        if (!ok) {
            cli_error("%s expects %s", flag, !strcmp(flag, "--repeats")    ? "a count from 1 to 1000"
                                             : !strcmp(flag, "--read-mib") ? "a size in MiB from 1 to 16384"
                                                                           : "a value");
            return EXIT_BAD_INPUT;
        }
    }
    if (preset && strcmp(preset, "minimind-3") != 0) {
        cli_error("--preset: only 'minimind-3' is known (got '%s')", cli_show(preset));
        return EXIT_BAD_INPUT;
    }
    al_error err = {0};
    al_model *m = NULL;
    int status = EXIT_OK;
    if (model_path) {
        al_model_file_kind kind;
        m = cli_load_model(model_path, seq + decode, 64, NULL, &kind, &status); /* a .pth with MiniMind's defaults */
        if (!m) return status;
    } else {
        const al_model_hparams hp = minimind3();
        al_status st = al_model_create(&hp, seq + decode, seq + decode < 64 ? seq + decode : 64, &m, &err);
        if (st == AL_OK) st = al_model_fill_random(m, (uint64_t)seed, &err);
        if (st != AL_OK) {
            cli_error("%s", err.msg);
            al_model_free(m);
            return st == AL_ERR_NOMEM ? EXIT_FAILURE_ENV : EXIT_BAD_INPUT;
        }
    }
    if (!cli_set_threads(m, threads)) {
        al_model_free(m);
        return EXIT_BAD_INPUT;
    }
    const int64_t llc = last_level_cache_bytes();
    al_model_bench_result r;
    const al_status st = al_model_bench_run(m, seq, decode, repeats, read_mib ? read_mib << 20 : read_buffer_bytes(llc), &r, &err);
    const al_model_hparams hp = *al_model_get_hparams(m);
    const int64_t weight_bytes = al_model_weight_bytes(m), threads_run = al_model_threads(m);
    al_model_free(m);
    if (st != AL_OK) {
        cli_error("%s", err.msg);
        return EXIT_BAD_INPUT;
    }
    printf("{\"model\": \"%s\", \"params\": %lld, \"seq\": %lld, \"decode\": %lld, \"prefill_ms\": %.4f, "
           "\"prefill_tokens_per_s\": %.1f, \"decode_ms\": %.4f, \"decode_tokens_per_s\": %.1f, "
           "\"weight_bytes_per_token\": %lld, \"read_gb_per_s\": %.2f, \"read_buffer_bytes\": %lld, "
           "\"last_level_cache_bytes\": %lld, \"read_lanes\": %d, \"bandwidth_bound_tokens_per_s\": %.1f, "
           "\"prefill_flops\": %lld, \"fma_peak_gflops\": %.2f, \"fma_lanes\": %d, "
           "\"compute_bound_prefill_tokens_per_s\": %.1f, \"weight_bytes\": %lld, \"threads\": %lld}\n",
           model_path ? "file" : "minimind-3 (random weights)", (long long)al_model_param_count(&hp), (long long)seq,
           (long long)decode, r.prefill_ms, r.prefill_tokens_per_s, r.decode_ms, r.decode_tokens_per_s,
           (long long)r.weight_bytes_per_token, r.read_gb_per_s, (long long)r.read_buffer_bytes, (long long)llc,
           (int)r.read_lanes, r.bandwidth_bound_tokens_per_s, (long long)r.prefill_flops, r.fma_peak_gflops,
           (int)r.fma_lanes, r.compute_bound_prefill_tokens_per_s, (long long)weight_bytes, (long long)threads_run);
    return EXIT_OK;
}

/* `attnlab bench --train`: MiniMind's training step on a model of the given shape. */
static int bench_train(int argc, char **argv) {
    int64_t hidden = 128, layers = 4, heads = 4, kv = 2, vocab = 6400, batch = 8, seq = 128, steps = 5, ffn = -1;
    struct { const char *flag; int64_t *v; int64_t lo, hi; } ints[] = {
        {"--hidden", &hidden, 8, 4096}, {"--layers", &layers, 1, 64}, {"--heads", &heads, 1, 64},
        {"--kv-heads", &kv, 1, 64},     {"--vocab", &vocab, 8, AL_MAX_VOCAB}, {"--batch", &batch, 1, 64},
        {"--seq", &seq, 2, 4096},       {"--steps", &steps, 1, 1000},         {"--ffn", &ffn, 0, 16384},
    };
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "--train")) continue;
        int known = 0;
        for (size_t k = 0; k < sizeof ints / sizeof ints[0]; k++)
            if (!strcmp(argv[i], ints[k].flag)) {
                known = 1;
                if (!cli_parse_int(i + 1 < argc ? argv[i + 1] : NULL, ints[k].lo, ints[k].hi, ints[k].v)) {
                    cli_error("%s expects a whole number from %lld to %lld", argv[i], (long long)ints[k].lo, (long long)ints[k].hi);
                    return EXIT_BAD_INPUT;
                }
                i++;
            }
        if (!known) {
            cli_error("unknown option '%s' for bench --train", cli_show(argv[i]));
            return EXIT_BAD_INPUT;
        }
    }
    al_model_hparams hp = al_minimind_hparams_for(vocab, hidden, layers, heads, kv);
    if (ffn >= 0) hp.ffn_hidden = ffn; /* 0: attention-only */
    double ms = 0.0;
    al_error err = {0};
    if (hidden % heads || al_train_bench_run(&hp, batch, seq, steps, &ms, &err) != AL_OK) {
        cli_error("%s", hidden % heads ? "--hidden must be a multiple of --heads" : err.msg);
        return EXIT_BAD_INPUT;
    }
    printf("{\"hidden\": %lld, \"layers\": %lld, \"heads\": %lld, \"kv_heads\": %lld, \"ffn\": %lld, \"vocab\": %lld, "
           "\"batch\": %lld, \"seq\": %lld, \"step_ms\": %.3f, \"tokens_per_s\": %.1f}\n",
           (long long)hidden, (long long)layers, (long long)heads, (long long)kv, (long long)hp.ffn_hidden, (long long)vocab,
           (long long)batch, (long long)seq, ms, 1e3 * (double)(batch * seq) / ms);
    return EXIT_OK;
}

int cmd_bench(int argc, char **argv) {
    for (int i = 0; i < argc; i++)
        if (!strcmp(argv[i], "--train")) return bench_train(argc, argv);
    for (int i = 0; i < argc; i++)
        if (!strcmp(argv[i], "--model") || !strcmp(argv[i], "--preset")) return bench_model(argc, argv);
    al_bench_config b;
    al_bench_config_default(&b); /* QK-Norm on, eps 1e-6, as the seeds; seed 0 */
    b.hp.hidden = 768, b.hp.n_heads = 8, b.hp.n_kv_heads = 4, b.hp.head_dim = 96, b.hp.rope_base = 1e6;
    b.seq = 512, b.decode_at = 2048, b.repeats = 10;
    struct { const char *flag; int64_t *value; int64_t lo, hi; } ints[] = {
        {"--hidden", &b.hp.hidden, 1, AL_MAX_HIDDEN},  {"--heads", &b.hp.n_heads, 1, AL_MAX_HEADS},
        {"--kv-heads", &b.hp.n_kv_heads, 1, AL_MAX_HEADS}, {"--head-dim", &b.hp.head_dim, 2, AL_MAX_HEAD_DIM},
        {"--seq", &b.seq, 0, AL_MAX_SEQ},             {"--decode-at", &b.decode_at, 0, AL_MAX_SEQ - 1},
        {"--repeats", &b.repeats, 1, 1000},         {"--seed", &b.seed, 0, INT64_MAX},
    };
    for (int i = 0; i < argc; i += 2) {
        const char *flag = argv[i], *value = i + 1 < argc ? argv[i + 1] : NULL;
        int known = 0, ok = 0;
        for (size_t k = 0; k < sizeof ints / sizeof ints[0]; k++)
            if (!strcmp(flag, ints[k].flag)) {
                known = 1;
                ok = cli_parse_int(value, ints[k].lo, ints[k].hi, ints[k].value);
                if (!ok) cli_error("%s expects a whole number between %lld and %lld", flag,
                                   (long long)ints[k].lo, (long long)ints[k].hi);
            }
        if (!strcmp(flag, "--rope-base")) {
            known = 1;
            ok = cli_parse_double(value, &b.hp.rope_base);
            if (!ok) cli_error("--rope-base expects a finite number");
        }
        if (!strcmp(flag, "--threads")) {
            int64_t threads = 0;
            known = 1;
            ok = cli_parse_int(value, 1, 1, &threads);
            if (!ok) cli_error("--threads: the core runs on one thread; only --threads 1 is supported");
        }
        if (!known) {
            cli_error("unknown option '%s' for bench (see 'attnlab help')", flag);
            return EXIT_BAD_INPUT;
        }
        if (!ok) return EXIT_BAD_INPUT;
    }
    al_bench_result r;
    al_error err = {0};
    al_status st = al_bench_run(&b, &r, &err);
    if (st != AL_OK) {
        cli_error("%s", err.msg);
        return st == AL_ERR_NOMEM ? EXIT_FAILURE_ENV : EXIT_BAD_INPUT;
    }
    /* The prefill's two counts: the causal work (prefill_gflops's) and the whole rectangle of
     * scores, what PyTorch's eager layer multiplies before it masks. */
    printf("{\"prefill_ms\": %.4f, \"decode_ms\": %.4f, \"prefill_gflops\": %.3f, "
           "\"prefill_flops_causal\": %lld, \"prefill_flops_rectangle\": %lld, "
           "\"decode_recompute_ms\": %.4f, \"hidden\": %lld, \"heads\": %lld, \"kv_heads\": %lld, "
           "\"head_dim\": %lld, \"seq\": %lld, \"decode_at\": %lld, \"repeats\": %lld}\n",
           r.prefill_ms, r.decode_ms, r.prefill_gflops, (long long)(b.seq ? al_attn_flops_causal(&b.hp, b.seq, b.seq) : 0),
           (long long)(b.seq ? al_attn_flops_full(&b.hp, b.seq, b.seq) : 0), r.decode_recompute_ms, (long long)b.hp.hidden,
           (long long)b.hp.n_heads, (long long)b.hp.n_kv_heads, (long long)b.hp.head_dim, (long long)b.seq,
           (long long)b.decode_at, (long long)b.repeats);
    return EXIT_OK; /* main checks that standard output was written */
}
