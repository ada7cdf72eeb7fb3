/* cmd_kv_growth.c — `attnlab kv-growth`: the KV cache's growth over a prefill and decode steps
 * (al_kv_growth, core/app/views.c) as a table: the cache's bytes for this layer, for MHA and for
 * MQA, and each step's FLOPs with the cache and by recomputing the whole sequence. */
#include "cli/cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cmd_kv_growth(int argc, char **argv) {
    al_attn_hparams hp = al_attn_hparams_default(); /* the seeds' layer: 16, 4 heads, 2 KV heads, 8 */
    int64_t prompt = 4, steps = 3;                  /* the tutorial's example 6 */
    struct { const char *flag; int64_t *value; int64_t lo, hi; } ints[] = {
        {"--hidden", &hp.hidden, 1, AL_MAX_HIDDEN},      {"--heads", &hp.n_heads, 1, AL_MAX_HEADS},
        {"--kv-heads", &hp.n_kv_heads, 1, AL_MAX_HEADS}, {"--head-dim", &hp.head_dim, 2, AL_MAX_HEAD_DIM},
        {"--prompt", &prompt, 1, AL_MAX_SEQ},            {"--steps", &steps, 0, AL_MAX_SEQ - 1},
    };
    for (int i = 0; i < argc; i += 2) {
        const char *flag = argv[i], *value = i + 1 < argc ? argv[i + 1] : NULL;
        size_t k = 0;
        while (k < sizeof ints / sizeof ints[0] && strcmp(flag, ints[k].flag) != 0) k++;
        if (k == sizeof ints / sizeof ints[0]) {
            cli_error("unknown option '%s' for kv-growth (see 'attnlab help')", flag);
            return EXIT_BAD_INPUT;
        }
        if (!cli_parse_int(value, ints[k].lo, ints[k].hi, ints[k].value)) {
            cli_error("%s expects a whole number between %lld and %lld", flag, (long long)ints[k].lo,
                      (long long)ints[k].hi);
            return EXIT_BAD_INPUT;
        }
    }

    /* The rows: a size query (which also checks the configuration), then the fill. */
    al_error err = {0};
    const int64_t count = al_kv_growth(&hp, prompt, steps, NULL, 0, &err);
    if (count < 0) {
        cli_error("%s", err.msg);
        return EXIT_BAD_INPUT;
    }
    al_kv_growth_row *rows = malloc((size_t)count * sizeof *rows);
    if (!rows || al_kv_growth(&hp, prompt, steps, rows, count, &err) != count) {
        cli_error("%s", rows ? err.msg : "out of memory");
        free(rows);
        return rows ? EXIT_BAD_INPUT : EXIT_FAILURE_ENV;
    }

    printf("# KV cache growth: hidden %lld, %lld heads, %lld KV heads, head_dim %lld; "
           "prefill of %lld tokens, then %lld decode steps; batch 1, float32\n",
           (long long)hp.hidden, (long long)hp.n_heads, (long long)hp.n_kv_heads,
           (long long)hp.head_dim, (long long)prompt, (long long)steps);
    printf("%-8s %9s %14s %14s %14s %20s %20s\n", "step", "cache_len", "bytes", "mha_bytes",
           "mqa_bytes", "flops_with_cache", "flops_without_cache");
    for (int64_t i = 0; i < count; i++) {
        char step[24];
        if (i == 0) snprintf(step, sizeof step, "prefill");
        else snprintf(step, sizeof step, "%lld", (long long)i);
        const al_kv_growth_row *r = &rows[i];
        printf("%-8s %9lld %14lld %14lld %14lld %20lld %20lld\n", step, (long long)r->len,
               (long long)r->bytes, (long long)r->bytes_mha, (long long)r->bytes_mqa,
               (long long)r->flops_cached, (long long)r->flops_uncached);
    }
    free(rows);
    return fflush(stdout) == 0 ? EXIT_OK : EXIT_FAILURE_ENV;
}
