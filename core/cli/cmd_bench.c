/* cmd_bench.c — `attnlab bench`: times the core alone on PyTorch-initialised random weights
 * (core/lab/bench.c) and prints one JSON line:
 *   {"prefill_ms": …, "decode_ms": …, "prefill_gflops": …, "decode_recompute_ms": …} */
#include "cli/cli.h"

#include <stdio.h>
#include <string.h>

/* MiniMind-3's shape (its config's defaults) for `--preset minimind-3`. */
static al_model_hparams minimind3(void) { return al_minimind_hparams_for(6400, 768, 8, 8, 4); }

/* `attnlab bench --model PATH | --preset minimind-3 [--seq S] [--decode N] [--repeats R]`:
 * the whole model's prefill and decode speed, one JSON line. */
static int bench_model(int argc, char **argv) {
    const char *model_path = NULL, *preset = NULL;
    int64_t seq = 128, decode = 128, repeats = 5, seed = 0;
    for (int i = 0; i < argc; i += 2) {
        const char *flag = argv[i], *value = i + 1 < argc ? argv[i + 1] : NULL;
        int ok = value != NULL;
        if (!strcmp(flag, "--model")) model_path = value;
        else if (!strcmp(flag, "--preset")) preset = value;
        else if (!strcmp(flag, "--seq")) ok = cli_parse_int(value, 1, AL_MAX_SEQ, &seq);
        else if (!strcmp(flag, "--decode")) ok = cli_parse_int(value, 0, AL_MAX_SEQ, &decode);
        else if (!strcmp(flag, "--repeats")) ok = cli_parse_int(value, 1, 1000, &repeats);
        else if (!strcmp(flag, "--seed")) ok = cli_parse_int(value, 0, INT64_MAX, &seed);
        else {
            cli_error("unknown option '%s' for bench --model / --preset (see 'attnlab help')", cli_show(flag));
            return EXIT_BAD_INPUT;
        }
        if (!ok) {
            cli_error("%s expects %s", flag, !strcmp(flag, "--repeats") ? "a count from 1 to 1000" : "a value");
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
    al_model_bench_result r;
    const al_status st = al_model_bench_run(m, seq, decode, repeats, &r, &err);
    const al_model_hparams hp = *al_model_get_hparams(m);
    al_model_free(m);
    if (st != AL_OK) {
        cli_error("%s", err.msg);
        return EXIT_BAD_INPUT;
    }
    printf("{\"model\": \"%s\", \"params\": %lld, \"seq\": %lld, \"decode\": %lld, \"prefill_ms\": %.4f, "
           "\"prefill_tokens_per_s\": %.1f, \"decode_ms\": %.4f, \"decode_tokens_per_s\": %.1f, "
           "\"weight_bytes_per_token\": %lld, \"read_gb_per_s\": %.2f, \"bandwidth_bound_tokens_per_s\": %.1f, "
           "\"prefill_flops\": %lld, \"fma_peak_gflops\": %.2f, \"compute_bound_prefill_tokens_per_s\": %.1f}\n",
           model_path ? "file" : "minimind-3 (random weights)", (long long)al_model_param_count(&hp), (long long)seq,
           (long long)decode, r.prefill_ms, r.prefill_tokens_per_s, r.decode_ms, r.decode_tokens_per_s,
           (long long)r.weight_bytes_per_token, r.read_gb_per_s, r.bandwidth_bound_tokens_per_s,
           (long long)r.prefill_flops, r.fma_peak_gflops, r.compute_bound_prefill_tokens_per_s);
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
    al_bench_config b = {0};
    b.hp = al_attn_hparams_default(); /* QK-Norm on, eps 1e-6, as the seeds */
    b.hp.hidden = 768, b.hp.n_heads = 8, b.hp.n_kv_heads = 4, b.hp.head_dim = 96, b.hp.rope_base = 1e6;
    b.seq = 512, b.decode_at = 2048, b.repeats = 10, b.seed = 0;
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
    printf("{\"prefill_ms\": %.4f, \"decode_ms\": %.4f, \"prefill_gflops\": %.3f, "
           "\"decode_recompute_ms\": %.4f, \"hidden\": %lld, \"heads\": %lld, \"kv_heads\": %lld, "
           "\"head_dim\": %lld, \"seq\": %lld, \"decode_at\": %lld, \"repeats\": %lld}\n",
           r.prefill_ms, r.decode_ms, r.prefill_gflops, r.decode_recompute_ms, (long long)b.hp.hidden,
           (long long)b.hp.n_heads, (long long)b.hp.n_kv_heads, (long long)b.hp.head_dim, (long long)b.seq,
           (long long)b.decode_at, (long long)b.repeats);
    return EXIT_OK; /* main checks that standard output was written */
}
