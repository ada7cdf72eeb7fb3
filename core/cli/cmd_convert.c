/* cmd_convert.c — `attnlab convert`: a MiniMind model (a folder, or a .pth from its trainer)
 * written out as a MiniMind folder — config.json, model.safetensors in float16 (half the size:
 * what a model shipped with a page needs) or float32, and the tokenizer.json beside it. */
#include "cli/cli.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static char *joined(const char *dir, const char *name) {
    const size_t n = strlen(dir) + strlen(name) + 2;
    char *p = malloc(n);
    if (p) snprintf(p, n, "%s/%s", dir, name);
    return p;
}

int cmd_convert(int argc, char **argv) {
    const char *model_path = NULL, *out = NULL, *dtype_name = "f16";
    cli_pth_options pth;
    cli_pth_options_init(&pth);
    for (int i = 0; i < argc; i++) {
        const char *flag = argv[i], *value = i + 1 < argc ? argv[i + 1] : NULL;
        const int took = cli_parse_pth_flag(argc, argv, i, &pth);
        if (took < 0) return EXIT_BAD_INPUT;
        if (took > 0) {
            i += took - 1;
            continue;
        }
        const char **slot = !strcmp(flag, "--model") ? &model_path : !strcmp(flag, "--out") ? &out
                            : !strcmp(flag, "--dtype") ? &dtype_name : NULL;
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
    struct stat sb;
    if (stat(out, &sb) == 0 && !S_ISDIR(sb.st_mode)) {
        cli_error("--out '%s' is not a folder", cli_show(out));
        return EXIT_BAD_INPUT;
    }
    /* 1. the model and its config.json (a folder's own, or the one a .pth's shapes imply) */
    int status = EXIT_OK;
    al_model_file_kind kind;
    al_model *m = cli_load_model(model_path, 1, 1, &pth, &kind, &status);
    if (!m) return status;
    if (kind == AL_MODEL_FILE_LLAMA2C) {
        cli_error("'%s' is a llama2.c checkpoint: a MiniMind folder cannot hold it (its RoPE pairs dimensions "
                  "differently)", cli_show(model_path));
        al_model_free(m);
        return EXIT_BAD_INPUT;
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
        char *path = joined(model_path, "config.json");
        config = path ? (char *)cli_read_file(path, (size_t)1 << 20, &config_len) : NULL;
        free(path);
    }
    /* 2. the weights, by MiniMind's names */
    uint8_t *image = NULL;
    size_t size = 0;
    al_error err = {0};
    static const char *const META[] = {"format", "pt"};
    if (config && al_model_export(m, f16 ? AL_DTYPE_F16 : AL_DTYPE_F32, META, 1, &image, &size, &err) != AL_OK) {
        cli_error("%s", err.msg);
        status = EXIT_BAD_INPUT;
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
    char *cp = joined(out, "config.json"), *mp = joined(out, "model.safetensors"), *tp = joined(out, "tokenizer.json");
    if (status == EXIT_OK && (!cp || !mp || !tp || !cli_write_file_atomic(cp, (const uint8_t *)config, config_len) ||
                              !cli_write_file_atomic(mp, image, size) || (tok && !cli_write_file_atomic(tp, tok, tok_size))))
        status = EXIT_FAILURE_ENV;
    if (status == EXIT_OK)
        printf("wrote %s: config.json, model.safetensors (%s, %zu bytes)%s\n", out, f16 ? "float16" : "float32", size,
               tok ? ", tokenizer.json" : "");
    free(cp), free(mp), free(tp), free(tok), free(tok_path), free(config), free(image);
    return status;
}
