/* cmd_bench.c — `attnlab bench`: times the core alone on PyTorch-initialised random weights
 * (core/lab/bench.c) and prints one JSON line:
 *   {"prefill_ms": …, "decode_ms": …, "prefill_gflops": …, "decode_recompute_ms": …} */
#include "cli/cli.h"

#include <stdio.h>
#include <string.h>

int cmd_bench(int argc, char **argv) {
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
