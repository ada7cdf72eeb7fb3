/* cmd_convert.c — `attnlab convert`: a MiniMind model (a folder, or a .pth from its trainer)
 * written out as a MiniMind folder — config.json, model.safetensors in float16 (half the size:
 * what a model shipped with a page needs) or float32, and the tokenizer.json beside it. A
 * folder that already holds a model is replaced only with --force, and never a file the
 * conversion reads. An --out ending in .gguf writes one GGUF file instead (convert_gguf.c). */
#define _POSIX_C_SOURCE 200809L /* unlink */
#include "cli/cli.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int cmd_convert(int argc, char **argv) {
    const char *model_path = NULL, *out = NULL, *dtype_name = "f16", *tokenizer_path = NULL;
    int force = 0;
    cli_pth_options pth;
    cli_pth_options_init(&pth);
    for (int i = 0; i < argc; i++) {
        const char *flag = argv[i], *value = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(flag, "--force")) {
            force = 1;
            continue;
        }
        const int took = cli_parse_pth_flag(argc, argv, i, &pth);
        if (took < 0) return EXIT_BAD_INPUT;
        if (took > 0) {
            i += took - 1;
            continue;
        }
        const char **slot = !strcmp(flag, "--model") ? &model_path : !strcmp(flag, "--out") ? &out
                            : !strcmp(flag, "--dtype") ? &dtype_name : !strcmp(flag, "--tokenizer") ? &tokenizer_path
                                                                                                  : NULL;
        if (!slot) {
            cli_error("unknown option '%s' for convert (see 'attnlab help')", cli_show(flag));
            return EXIT_BAD_INPUT;
        }
        if (!value) {
            cli_error("%s expects a value", flag);
            return EXIT_BAD_INPUT;
        }
        *slot = value;
        i++;
    }
    if (!model_path || !out) {
        cli_error("convert needs --model PATH and --out DIR");
        return EXIT_BAD_INPUT;
    }
    const int f16 = !strcmp(dtype_name, "f16");
    if (!f16 && strcmp(dtype_name, "f32")) {
        cli_error("--dtype expects f16 or f32");
        return EXIT_BAD_INPUT;
    }
    const size_t out_len = strlen(out);
    if (out_len > 5 && !strcmp(out + out_len - 5, ".gguf")) {
        if (force) {
            cli_error("--force is for an --out folder; an --out .gguf file is replaced whole");
            return EXIT_BAD_INPUT;
        }
        return cli_convert_gguf(model_path, tokenizer_path, out, f16, &pth);
    }
    if (tokenizer_path) {
        cli_error("--tokenizer is for an --out .gguf file (a folder gets the tokenizer.json beside the model)");
        return EXIT_BAD_INPUT;
    }
    struct stat sb;
    const int out_exists = stat(out, &sb) == 0;
    if (out_exists && !S_ISDIR(sb.st_mode)) {
        cli_error("--out '%s' is not a folder", cli_show(out));
        return EXIT_BAD_INPUT;
    }
    char *cp = cli_path_in(out, "config.json"), *mp = cli_path_in(out, "model.safetensors");
    char *tp = cli_path_in(out, "tokenizer.json");
    int status = cp && mp && tp ? EXIT_OK : EXIT_FAILURE_ENV; /* cli_path_in printed why */
    /* 0. An existing folder: none of its three files may be a file this reads (--force or not),
     *    and a model there is replaced only with --force. */
    const char *written[3] = {cp, mp, tp};
    for (int i = 0; status == EXIT_OK && out_exists && i < 3; i++)
        if (!cli_check_model_output(written[i], model_path, NULL, 0)) status = EXIT_BAD_INPUT;
    const int had_model = status == EXIT_OK && out_exists && cli_folder_has_model(out);
    if (had_model && !force) {
        cli_error("--out '%s' already holds a model (config.json, model.safetensors or tokenizer.json): give "
                  "another folder, or --force to replace it", cli_show(out));
        status = EXIT_BAD_INPUT;
    }
    if (status != EXIT_OK) {
        free(cp), free(mp), free(tp);
        return status;
    }
    /* 1. the model and its config.json (a folder's own, or the one a .pth's shapes imply) */
    al_model_file_kind kind;
    al_model *m = cli_load_model(model_path, 1, 1, &pth, &kind, &status);
    if (m && kind == AL_MODEL_FILE_LLAMA2C) {
        cli_error("'%s' is a llama2.c checkpoint: a MiniMind folder cannot hold it (its RoPE pairs dimensions "
                  "differently)", cli_show(model_path));
        al_model_free(m);
        m = NULL, status = EXIT_BAD_INPUT;
    }
    if (!m) {
        free(cp), free(mp), free(tp);
        return status;
    }
    char *config = NULL;
    size_t config_len = 0;
    if (kind == AL_MODEL_FILE_PTH) {
        al_pth_model pm;
        int read_status = EXIT_OK;
        if (!cli_read_pth(model_path, &pth.flags, &pm, &read_status)) status = read_status;
        else {
            config = pm.config, config_len = pm.config_len;
            pm.config = NULL;
            al_pth_model_free(&pm);
        }
    } else {
        cli_model_paths paths;
        if (cli_model_paths_get(model_path, &paths) > 0)
            config = (char *)cli_read_file(paths.files[CLI_MODEL_CONFIG], (size_t)1 << 20, &config_len);
        cli_model_paths_free(&paths);
    }
    /* 2. the weights, by MiniMind's names */
    uint8_t *image = NULL;
    size_t size = 0;
    al_error err = {0};
    static const char *const META[] = {"format", "pt"};
    al_status st = config ? al_model_export(m, f16 ? AL_DTYPE_F16 : AL_DTYPE_F32, META, 1, &image, &size, &err) : AL_OK;
    if (st != AL_OK) {
        if (f16 && st == AL_ERR_NONFINITE) cli_error("%s: %s; --dtype f32 keeps it", cli_show(model_path), err.msg);
        else cli_error("%s", err.msg);
        status = st == AL_ERR_NOMEM ? EXIT_FAILURE_ENV : EXIT_BAD_INPUT;
    }
    al_model_free(m);
    if (!config) status = status == EXIT_OK ? EXIT_BAD_INPUT : status;
    /* 3. the folder: config.json, model.safetensors, and the tokenizer.json that went with it */
    char *tok_path = status == EXIT_OK ? cli_model_tokenizer(model_path) : NULL;
    size_t tok_size = 0;
    uint8_t *tok = tok_path && cli_is_file(tok_path) ? cli_read_file(tok_path, (size_t)64 << 20, &tok_size) : NULL;
    if (status == EXIT_OK && stat(out, &sb) != 0 && mkdir(out, 0755) != 0) {
        cli_error("--out '%s': %s", cli_show(out), strerror(errno));
        status = EXIT_BAD_INPUT;
    }
    const int lock = status == EXIT_OK ? cli_folder_lock(out) : -1;
    if (status == EXIT_OK && lock < 0) status = EXIT_FAILURE_ENV;
    if (status == EXIT_OK && (!cli_write_file_atomic(cp, (const uint8_t *)config, config_len) ||
                              !cli_write_file_atomic(mp, image, size) || (tok && !cli_write_file_atomic(tp, tok, tok_size))))
        status = EXIT_FAILURE_ENV;
    /* A replaced model's tokenizer.json that the new one does not bring would no longer match it. */
    const int dropped = status == EXIT_OK && had_model && !tok && unlink(tp) == 0;
    if (status == EXIT_OK)
        printf("wrote %s: config.json, model.safetensors (%s, %zu bytes)%s\n", cli_show(out), f16 ? "float16" : "float32",
               size, tok ? ", tokenizer.json" : dropped ? "; the old tokenizer.json removed (this model has none)" : "");
    if (lock >= 0) close(lock);
    free(cp), free(mp), free(tp), free(tok), free(tok_path), free(config), free(image);
    return status;
}
