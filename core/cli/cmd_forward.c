/* cmd_forward.c — `attnlab forward`: reads the weights and input files, runs the layer with
 * al_attn_files_run (core/io/attn_files.c: the whole sequence in one pass, and a prefill
 * followed by one-token decode steps with the KV cache), writes the result all-or-nothing and
 * prints a summary. */
#include "cli/cli.h"
#include "base/internal.h"

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
    int attn_weights;   /* 0: --no-attn-weights */
} forward_args;

static int parse_args(int argc, char **argv, forward_args *a) {
    memset(a, 0, sizeof *a);
    a->layer = -1;
    a->rope_base = NAN;
    a->eps = NAN;
    a->attn_weights = 1;
    for (int i = 0; i < argc; i += 2) { /* every flag but --no-attn-weights takes a value */
        const char *flag = argv[i];
        if (!strcmp(flag, "--no-attn-weights")) {
            a->attn_weights = 0;
            i--;
            continue;
        }
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
            cli_error("unknown option '%s' for forward (see 'attnlab help')", cli_show(flag));
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
    }
    if (!a->weights || !a->input || !a->out) {
        cli_error("forward needs --weights, --input and --out");
        return 0;
    }
    return 1;
}

int cmd_forward(int argc, char **argv) {
    forward_args args;
    if (!parse_args(argc, argv, &args)) return EXIT_BAD_INPUT;

    const char *inputs[2] = {args.weights, args.input};
    if (!cli_check_output(args.out, inputs, 2)) return EXIT_BAD_INPUT;
    size_t weights_size = 0, input_size = 0;
    uint8_t *weights = cli_read_safetensors(args.weights, MAX_FILE_BYTES, &weights_size);
    uint8_t *input = weights ? cli_read_safetensors(args.input, MAX_FILE_BYTES, &input_size) : NULL;
    if (!weights || !input) {
        free(weights);
        return EXIT_BAD_INPUT;
    }
    al_attn_files_options opt = al_attn_files_options_default();
    opt.layer = args.layer;
    opt.rope_base = args.rope_base;
    opt.eps = args.eps;
    opt.prefill = args.prefill;
    opt.attn_weights = args.attn_weights;
    al_attn_files_summary sum;
    al_error err = {0};
    uint8_t *result = NULL;
    al_status st = al_attn_files_run(weights, weights_size, input, input_size, &opt, &result, &sum,
                                     &err);
    free(weights);
    free(input);
    if (st != AL_OK) {
        const char *file = sum.failed_file == AL_FILE_WEIGHTS ? args.weights
                           : sum.failed_file == AL_FILE_INPUT ? args.input : NULL;
        if (file) cli_error("%s: %s", cli_show(file), err.msg);
        else cli_error("%s", err.msg);
        return st == AL_ERR_NOMEM ? EXIT_FAILURE_ENV : EXIT_BAD_INPUT;
    }
    const int written = cli_write_file_atomic(args.out, result, (size_t)sum.bytes);
    al_buffer_free(result);
    if (!written) return EXIT_FAILURE_ENV;

    char base[AL_SHORTEST_MAX], eps[AL_SHORTEST_MAX];
    printf("attention: hidden %lld, heads %lld, kv heads %lld (GQA x%lld), head_dim %lld, "
           "rope_base %s, eps %s, qk_norm %s\n",
           (long long)sum.hp.hidden, (long long)sum.hp.n_heads, (long long)sum.hp.n_kv_heads,
           (long long)(sum.hp.n_heads / sum.hp.n_kv_heads), (long long)sum.hp.head_dim,
           al_format_shortest(base, sum.hp.rope_base), al_format_shortest_f32(eps, sum.hp.eps),
           sum.hp.qk_norm ? "on" : "off");
    printf("input: batch %lld, seq %lld; cached run: prefill %lld + %lld decode steps\n",
           (long long)sum.batch, (long long)sum.seq, (long long)sum.prefill,
           (long long)(sum.seq - sum.prefill));
    printf("max |output - output_cached| = %.3e\n", sum.max_diff);
    printf("wrote %s (%lld bytes)\n", cli_show(args.out), (long long)sum.bytes);
    return EXIT_OK; /* main checks that standard output was written */
}
