/* cmd_patch.c — `attnlab patch --model PATH --clean "ids" --corrupt "ids" --answer ID --wrong ID
 * --out OUT.safetensors`: activation patching (al_model_patch) from a clean prompt into a
 * corrupted one of the same length, the metric logit(answer) − logit(wrong) at the last
 * position, written as float32 safetensors: `head` [n_layers, n_heads] (each head's output from
 * the clean run, every position), `resid` [n_layers, seq] (the stream entering each block at
 * each position from the clean run), `clean` [1] and `corrupt` [1] (the runs as they are). The
 * prompts may be text (--clean-text, --corrupt-text) with the model's tokenizer. A last line on
 * stderr gives the patches and their time; --full-forward runs a whole forward per patch, as
 * hooks do (the same numbers), to compare. */
#define _POSIX_C_SOURCE 199309L
#include "cli/cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

/* One prompt's ids into ids[AL_MAX_SEQ]: from "1 2 3", or text encoded with tok. The count, or
 * -1 after printing why (naming the flag). */
static int64_t prompt_ids(const char *flag, const char *ids_text, const char *text, const al_tokenizer *tok,
                          int32_t *ids) {
    if (!text) {
        const int64_t n = cli_parse_ids(ids_text, ids, AL_MAX_SEQ);
        if (n == 0) cli_error("%s: give at least one token id", flag);
        return n > 0 ? n : -1;
    }
    al_error err = {0};
    const int64_t n = al_gen_encode_prompt(tok, text, strlen(text), ids, AL_MAX_SEQ, &err);
    if (n < 0) cli_error("%s: %s", flag, err.msg);
    else if (n == 0) cli_error("%s: the prompt has no tokens", flag);
    return n > 0 ? n : -1;
}

int cmd_patch(int argc, char **argv) {
    const char *model_path = NULL, *clean_ids = NULL, *corrupt_ids = NULL, *clean_text = NULL, *corrupt_text = NULL;
    const char *tokenizer_path = NULL, *answer_text = NULL, *wrong_text = NULL, *out_path = NULL, *ablate = NULL;
    int full = 0;
    cli_pth_options pth;
    cli_pth_options_init(&pth);
    for (int i = 0; i < argc; i += 2) {
        const char *flag = argv[i], *value = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(flag, "--full-forward")) {
            full = 1;
            i--; /* no value */
            continue;
        }
        const int took = cli_parse_pth_flag(argc, argv, i, &pth);
        if (took < 0) return EXIT_BAD_INPUT;
        if (took > 0) {
            i += took - 2;
            continue;
        }
        if (!strcmp(flag, "--model")) model_path = value;
        else if (!strcmp(flag, "--clean")) clean_ids = value;
        else if (!strcmp(flag, "--corrupt")) corrupt_ids = value;
        else if (!strcmp(flag, "--clean-text")) clean_text = value;
        else if (!strcmp(flag, "--corrupt-text")) corrupt_text = value;
        else if (!strcmp(flag, "--tokenizer")) tokenizer_path = value;
        else if (!strcmp(flag, "--answer")) answer_text = value;
        else if (!strcmp(flag, "--wrong")) wrong_text = value;
        else if (!strcmp(flag, "--ablate")) ablate = value;
        else if (!strcmp(flag, "--out")) out_path = value;
        else {
            cli_error("unknown option '%s' for patch (see 'attnlab help')", cli_show(flag));
            return EXIT_BAD_INPUT;
        }
        if (!value) {
            cli_error("%s expects a value", flag);
            return EXIT_BAD_INPUT;
        }
    }
    if (!model_path || (clean_ids != NULL) + (clean_text != NULL) != 1 ||
        (corrupt_ids != NULL) + (corrupt_text != NULL) != 1 || !answer_text || !wrong_text || !out_path) {
        cli_error("patch needs --model, one of --clean IDS or --clean-text TEXT, one of --corrupt IDS or "
                  "--corrupt-text TEXT, --answer ID, --wrong ID and --out");
        return EXIT_BAD_INPUT;
    }
    const char *others[1] = {tokenizer_path};
    if (!cli_check_model_output(out_path, model_path, others, tokenizer_path ? 1 : 0)) return EXIT_BAD_INPUT;

    /* 1. The tokenizer when a prompt is text (a MiniMind model's own by default). */
    char *folder_tokenizer = NULL;
    if ((clean_text || corrupt_text) && !tokenizer_path) {
        folder_tokenizer = cli_model_tokenizer(model_path);
        if (!folder_tokenizer || !cli_is_file(folder_tokenizer)) {
            cli_error("--clean-text and --corrupt-text need --tokenizer (llama2.c's tokenizer.bin, or a MiniMind "
                      "folder's tokenizer.json)");
            free(folder_tokenizer);
            return EXIT_BAD_INPUT;
        }
        tokenizer_path = folder_tokenizer;
    }
    al_tokenizer *tok = (clean_text || corrupt_text) ? cli_load_tokenizer(tokenizer_path, 0) : NULL;
    free(folder_tokenizer);
    if ((clean_text || corrupt_text) && !tok) return EXIT_BAD_INPUT;

    /* 2. The two prompts, of the same length. */
    int32_t *clean = malloc((size_t)AL_MAX_SEQ * sizeof *clean), *corrupt = malloc((size_t)AL_MAX_SEQ * sizeof *corrupt);
    int status = clean && corrupt ? EXIT_BAD_INPUT : EXIT_FAILURE_ENV;
    if (!clean || !corrupt) cli_error("out of memory");
    const int64_t n = clean && corrupt ? prompt_ids(clean_text ? "--clean-text" : "--clean", clean_ids, clean_text, tok, clean)
                                       : -1;
    const int64_t n_corrupt =
        n > 0 ? prompt_ids(corrupt_text ? "--corrupt-text" : "--corrupt", corrupt_ids, corrupt_text, tok, corrupt) : -1;
    al_tok_free(tok);
    if (n > 0 && n_corrupt > 0 && n != n_corrupt)
        cli_error("the clean prompt has %lld tokens and the corrupted one %lld: patching needs the same number",
                  (long long)n, (long long)n_corrupt);

    /* 3. The model, its heads switched off as asked, and the answer and the wrong token. */
    al_model_file_kind kind;
    al_model *m = n > 0 && n == n_corrupt ? cli_load_model(model_path, n, n, &pth, &kind, &status) : NULL;
    if (m && al_model_context(m) < n) {
        cli_error("%lld tokens; the model's context is %lld", (long long)n, (long long)al_model_context(m));
        al_model_free(m);
        m = NULL;
    }
    int64_t answer = -1, wrong = -1;
    if (m) {
        const int64_t V = al_model_get_hparams(m)->vocab;
        const int ok_answer = cli_parse_int(answer_text, 0, V - 1, &answer);
        const int ok_wrong = ok_answer && cli_parse_int(wrong_text, 0, V - 1, &wrong);
        if (!ok_answer || !ok_wrong) {
            cli_error("%s: '%s' is not a token id of the model's vocabulary [0, %lld)",
                      ok_answer ? "--wrong" : "--answer", cli_show(ok_answer ? wrong_text : answer_text), (long long)V);
            al_model_free(m);
            m = NULL;
        } else if (ablate && !cli_set_ablation(m, ablate)) {
            al_model_free(m);
            m = NULL;
        }
    }
    if (!m) {
        free(clean), free(corrupt);
        return status == EXIT_OK ? EXIT_BAD_INPUT : status;
    }

    /* 4. The patches, timed. */
    const al_model_hparams hp = *al_model_get_hparams(m);
    const int64_t L = hp.n_layers, H = hp.n_heads, size = L * H + L * n + 2;
    float *out = malloc((size_t)size * sizeof(float));
    al_error err = {0};
    al_status st = AL_OK;
    status = EXIT_OK;
    const double t0 = now_ms();
    if (!out) {
        cli_error("out of memory");
        status = EXIT_FAILURE_ENV;
    } else if ((st = al_model_patch(m, clean, corrupt, n, (int32_t)answer, (int32_t)wrong, full, out, size, &err)) !=
               AL_OK) {
        cli_error("%s", err.msg);
        status = st == AL_ERR_NOMEM ? EXIT_FAILURE_ENV : EXIT_BAD_INPUT;
    }
    const double ms = now_ms() - t0;

    /* 5. The file: head, resid, clean, corrupt; the prompts and the two tokens as metadata. */
    char *meta_clean = status == EXIT_OK ? malloc((size_t)n * 12 + 1) : NULL;
    char *meta_corrupt = meta_clean ? malloc((size_t)n * 12 + 1) : NULL;
    uint8_t *file = NULL;
    size_t needed = 0;
    if (status == EXIT_OK && !meta_corrupt) {
        cli_error("out of memory");
        status = EXIT_FAILURE_ENV;
    }
    if (status == EXIT_OK) {
        size_t a = 0, b = 0;
        meta_clean[0] = meta_corrupt[0] = '\0';
        for (int64_t i = 0; i < n; i++) {
            a += (size_t)sprintf(meta_clean + a, i ? " %d" : "%d", (int)clean[i]);
            b += (size_t)sprintf(meta_corrupt + b, i ? " %d" : "%d", (int)corrupt[i]);
        }
        char meta_answer[16], meta_wrong[16];
        snprintf(meta_answer, sizeof meta_answer, "%lld", (long long)answer);
        snprintf(meta_wrong, sizeof meta_wrong, "%lld", (long long)wrong);
        const char *meta[] = {"clean", meta_clean, "corrupt", meta_corrupt, "answer", meta_answer, "wrong", meta_wrong};
        const al_st_entry entries[4] = {
            {"head", out, 2, {L, H}},
            {"resid", out + L * H, 2, {L, n}},
            {"clean", out + L * H + L * n, 1, {1}},
            {"corrupt", out + L * H + L * n + 1, 1, {1}},
        };
        if ((st = al_st_serialize(entries, 4, meta, 4, NULL, 0, &needed, &err)) != AL_OK || !(file = malloc(needed)) ||
            (st = al_st_serialize(entries, 4, meta, 4, file, needed, &needed, &err)) != AL_OK) {
            cli_error("%s", file ? err.msg : "out of memory for the result");
            status = EXIT_FAILURE_ENV;
        } else if (!cli_write_file_atomic(out_path, file, needed)) {
            status = EXIT_FAILURE_ENV;
        } else {
            printf("wrote %s: head [%lld, %lld], resid [%lld, %lld]; metric clean %.6g, corrupted %.6g\n",
                   cli_show(out_path), (long long)L, (long long)H, (long long)L, (long long)n,
                   (double)out[L * H + L * n], (double)out[L * H + L * n + 1]);
            /* Blocks run: a patch at block l runs L − l of them (a whole forward, L). */
            const double blocks = full ? (double)(L * (H + n)) * (double)L : (double)(H + n) * (double)(L * (L + 1) / 2);
            fprintf(stderr, "%lld patches (%s) in %.2f ms, %.0f blocks run\n", (long long)(L * H + L * n),
                    full ? "a whole forward each" : "each from its block up", ms, blocks);
        }
    }
    free(file), free(meta_clean), free(meta_corrupt), free(out), free(clean), free(corrupt);
    al_model_free(m);
    return status;
}
