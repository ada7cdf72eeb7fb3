/* cmd_logits.c — `attnlab logits --model PATH --ids "1 2 3" --out OUT.safetensors [--ablate
 * "L.H,..."] [--lens] [--target ID]`: one pass of the model over the ids, written as float32
 * safetensors: `logits` [seq, vocab], for each layer N `attn.N` [n_heads, seq, seq] (each
 * query's softmax weights, zero past what it sees), for an MoE model `route_ids.N` and
 * `route_weights.N` [seq, top_k], and `resid_norm` [n_layers + 1, seq] (‖x‖ of the residual
 * stream: the embeddings, then after each block). The experiments (attnlab/model.h): with
 * --ablate every tensor is the model's with those heads off; --lens adds `lens`
 * [n_layers + 1, seq, vocab] (the logit lens); --target adds the direct logit attribution of
 * that token, `dla` [n_layers, n_heads, seq], `dla_embed` [seq] and `dla_ffn` [n_layers, seq].
 * The ids are in the file's metadata. */
#include "cli/cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cmd_logits(int argc, char **argv) {
    const char *model_path = NULL, *ids_text = NULL, *out_path = NULL, *ablate = NULL, *target_text = NULL;
    int want_lens = 0;
    int64_t threads = 0;
    cli_pth_options pth;
    cli_pth_options_init(&pth);
    for (int i = 0; i < argc; i += 2) {
        const char *flag = argv[i], *value = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(flag, "--lens")) {
            want_lens = 1;
            i--; /* no value */
            continue;
        }
        const int took = cli_parse_pth_flag(argc, argv, i, &pth);
        if (took < 0) return EXIT_BAD_INPUT;
        if (took > 0) {
            i += took - 2; /* the loop adds the other 2 */
            continue;
        }
        if (!strcmp(flag, "--model")) model_path = value;
        else if (!strcmp(flag, "--ids")) ids_text = value;
        else if (!strcmp(flag, "--out")) out_path = value;
        else if (!strcmp(flag, "--ablate")) ablate = value;
        else if (!strcmp(flag, "--target")) target_text = value;
        else if (!strcmp(flag, "--threads")) {
            if (!cli_parse_threads(value, &threads)) return EXIT_BAD_INPUT;
        }
        else {
            cli_error("unknown option '%s' for logits (see 'attnlab help')", cli_show(flag));
            return EXIT_BAD_INPUT;
        }
        if (!value) {
            cli_error("%s expects a value", flag);
            return EXIT_BAD_INPUT;
        }
    }
    if (!model_path || !ids_text || !out_path) {
        cli_error("logits needs --model, --ids and --out");
        return EXIT_BAD_INPUT;
    }
    if (!cli_check_model_output(out_path, model_path, NULL, 0)) return EXIT_BAD_INPUT;

    int32_t *ids = malloc((size_t)AL_MAX_SEQ * sizeof *ids);
    const int64_t n = ids ? cli_parse_ids(ids_text, ids, AL_MAX_SEQ) : -1;
    if (!ids) cli_error("out of memory");
    if (n == 0) cli_error("--ids: give at least one token id");
    int status = !ids ? EXIT_FAILURE_ENV : EXIT_BAD_INPUT;
    al_model_file_kind kind;
    al_model *m = n > 0 ? cli_load_model(model_path, n, n, &pth, &kind, &status) : NULL;
    if (m && !cli_set_threads(m, threads)) {
        al_model_free(m);
        m = NULL;
    }
    if (m && al_model_context(m) < n) {
        cli_error("%lld ids; the model's context is %lld", (long long)n, (long long)al_model_context(m));
        al_model_free(m);
        m = NULL;
    }
    int64_t target = -1;
    if (m && target_text && (!cli_parse_int(target_text, 0, al_model_get_hparams(m)->vocab - 1, &target))) {
        cli_error("--target: '%s' is not a token id of the model's vocabulary [0, %lld)", cli_show(target_text),
                  (long long)al_model_get_hparams(m)->vocab);
        al_model_free(m);
        m = NULL;
    }
    if (m && ablate && !cli_set_ablation(m, ablate)) {
        al_model_free(m);
        m = NULL;
    }
    /* Everything the file will hold, counted before any of it is computed. */
    const al_model_hparams *hpp = m ? al_model_get_hparams(m) : NULL;
    if (hpp) {
        const int64_t L = hpp->n_layers, H = hpp->n_heads, K = hpp->n_experts ? hpp->top_k : 0;
        const double floats = (double)n * (double)hpp->vocab + (double)(L * H) * (double)n * (double)n +
                              (double)((L + 1) * n) + (double)(2 * L * n * K) +
                              (want_lens ? (double)((L + 1) * n) * (double)hpp->vocab : 0.0) +
                              (target >= 0 ? (double)((L * H + 1 + L) * n) : 0.0);
        if (4.0 * floats > (double)CLI_MAX_RESULT_BYTES) {
            cli_error("the result would hold %.0f MiB for %lld tokens%s; the limit is %lld MiB: give fewer ids",
                      4.0 * floats / (1 << 20), (long long)n, want_lens ? " (with --lens)" : "",
                      (long long)(CLI_MAX_RESULT_BYTES >> 20));
            al_model_free(m);
            m = NULL;
        }
    }
    if (!m) {
        free(ids);
        return status == EXIT_OK ? EXIT_BAD_INPUT : status;
    }
    al_error err = {0};
    al_status st;
    const al_model_hparams hp = *al_model_get_hparams(m);

    /* The pass, with every position's logits and every layer's attention. */
    const int64_t L = hp.n_layers, H = hp.n_heads;
    float *logits = malloc((size_t)(n * hp.vocab) * sizeof(float));
    float *attn = malloc((size_t)(L * H * n * n) * sizeof(float));
    float *resid = malloc((size_t)((L + 1) * n) * sizeof(float));
    al_model_capture_resid_norms(m, resid, resid ? (L + 1) * n : 0);
    status = EXIT_OK;
    if (!logits || !attn || !resid) {
        cli_error("out of memory for %lld tokens", (long long)n);
        status = EXIT_FAILURE_ENV;
    } else if ((st = al_model_forward(m, ids, n, logits, n, n * hp.vocab, attn, L * H * n * n, &err)) != AL_OK) {
        cli_error("%s", err.msg);
        status = EXIT_BAD_INPUT;
    }

    /* MoE: each layer's routing, the expert ids (as float32 numbers) and weights [seq, top_k]. */
    const int64_t K = hp.n_experts ? hp.top_k : 0;
    float *routes = status == EXIT_OK && K ? malloc((size_t)(2 * L * n * K) * sizeof(float)) : NULL;
    int32_t *route_ids = routes ? malloc((size_t)(n * K) * sizeof(int32_t)) : NULL;
    if (K && status == EXIT_OK && (!routes || !route_ids)) {
        cli_error("out of memory");
        status = EXIT_FAILURE_ENV;
    }
    for (int64_t l = 0; K && status == EXIT_OK && l < L; l++) {
        al_model_routing(m, l, route_ids, routes + (L + l) * n * K, n * K);
        for (int64_t i = 0; i < n * K; i++) routes[l * n * K + i] = (float)route_ids[i];
    }

    /* The experiments, each its own pass over the ids (after the routing is read): the lens
     * [n_layers + 1, seq, vocab]; the attribution's parts [L·H + 1 + L, seq], whose rows are
     * dla [L, H, seq], dla_embed [seq] and dla_ffn [L, seq] one after the other. */
    float *lens = status == EXIT_OK && want_lens ? malloc((size_t)((L + 1) * n * hp.vocab) * sizeof(float)) : NULL;
    float *parts = status == EXIT_OK && target >= 0 ? malloc((size_t)((L * H + 1 + L) * n) * sizeof(float)) : NULL;
    if (status == EXIT_OK && ((want_lens && !lens) || (target >= 0 && !parts))) {
        cli_error("out of memory for the experiments over %lld tokens", (long long)n);
        status = EXIT_FAILURE_ENV;
    }
    if (lens && (st = al_model_logit_lens(m, ids, n, lens, (L + 1) * n * hp.vocab, &err)) != AL_OK) {
        cli_error("%s", err.msg);
        status = st == AL_ERR_NOMEM ? EXIT_FAILURE_ENV : EXIT_BAD_INPUT;
    }
    if (status == EXIT_OK && parts &&
        (st = al_model_dla(m, ids, n, (int32_t)target, parts, (L * H + 1 + L) * n, &err)) != AL_OK) {
        cli_error("%s", err.msg);
        status = st == AL_ERR_NOMEM ? EXIT_FAILURE_ENV : EXIT_BAD_INPUT;
    }

    /* The file: logits, then attn.0 .. attn.{L-1} (and route_ids.N, route_weights.N), then
     * resid_norm; the ids as metadata. */
    const int64_t n_entries = 1 + L + 2 * (K ? L : 0) + 1 + (lens ? 1 : 0) + (parts ? 3 : 0);
    al_st_entry *entries = status == EXIT_OK ? calloc((size_t)n_entries, sizeof *entries) : NULL;
    char (*names)[40] = entries ? calloc((size_t)(3 * L), sizeof *names) : NULL;
    char *ids_meta = names ? malloc((size_t)n * 12 + 1) : NULL;
    uint8_t *file = NULL;
    size_t needed = 0;
    if (status == EXIT_OK && !ids_meta) {
        cli_error("out of memory");
        status = EXIT_FAILURE_ENV;
    }
    if (status == EXIT_OK) {
        entries[0] = (al_st_entry){"logits", logits, 2, {n, hp.vocab}};
        for (int64_t l = 0; l < L; l++) {
            snprintf(names[l], sizeof names[l], "attn.%lld", (long long)l);
            entries[l + 1] = (al_st_entry){names[l], attn + l * H * n * n, 3, {H, n, n}};
            if (!K) continue;
            snprintf(names[L + l], sizeof names[0], "route_ids.%lld", (long long)l);
            snprintf(names[2 * L + l], sizeof names[0], "route_weights.%lld", (long long)l);
            entries[1 + L + l] = (al_st_entry){names[L + l], routes + l * n * K, 2, {n, K}};
            entries[1 + 2 * L + l] = (al_st_entry){names[2 * L + l], routes + (L + l) * n * K, 2, {n, K}};
        }
        int64_t e = 1 + L + 2 * (K ? L : 0);
        entries[e++] = (al_st_entry){"resid_norm", resid, 2, {L + 1, n}};
        if (lens) entries[e++] = (al_st_entry){"lens", lens, 3, {L + 1, n, hp.vocab}};
        if (parts) {
            entries[e++] = (al_st_entry){"dla", parts, 3, {L, H, n}};
            entries[e++] = (al_st_entry){"dla_embed", parts + L * H * n, 1, {n}};
            entries[e++] = (al_st_entry){"dla_ffn", parts + (L * H + 1) * n, 2, {L, n}};
        }
        size_t used = 0;
        ids_meta[0] = '\0';
        for (int64_t i = 0; i < n; i++) used += (size_t)sprintf(ids_meta + used, i ? " %d" : "%d", (int)ids[i]);
        /* the ids, and what the experiments were asked (the heads off as given, the target) */
        char target_meta[16];
        snprintf(target_meta, sizeof target_meta, "%lld", (long long)target);
        const char *meta[6] = {"ids", ids_meta};
        int n_meta = 1;
        if (ablate) meta[2 * n_meta] = "ablate", meta[2 * n_meta + 1] = ablate, n_meta++;
        if (target >= 0) meta[2 * n_meta] = "target", meta[2 * n_meta + 1] = target_meta, n_meta++;
        if ((st = al_st_serialize(entries, (int)n_entries, meta, n_meta, NULL, 0, &needed, &err)) != AL_OK ||
            !(file = malloc(needed)) ||
            (st = al_st_serialize(entries, (int)n_entries, meta, n_meta, file, needed, &needed, &err)) != AL_OK) {
            cli_error("%s", file ? err.msg : "out of memory for the result");
            status = EXIT_FAILURE_ENV;
        } else if (!cli_write_file_atomic(out_path, file, needed)) {
            status = EXIT_FAILURE_ENV;
        } else {
            printf("wrote %s: logits [%lld, %lld] and attn.0 .. attn.%lld [%lld, %lld, %lld]\n",
                   cli_show(out_path), (long long)n, (long long)hp.vocab, (long long)(L - 1), (long long)H,
                   (long long)n, (long long)n);
        }
    }
    free(file);
    free(lens);
    free(parts);
    free(ids_meta);
    free(names);
    free(entries);
    free(attn);
    free(resid);
    free(routes);
    free(route_ids);
    free(logits);
    free(ids);
    al_model_free(m);
    return status;
}
