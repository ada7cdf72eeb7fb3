/* convert_gguf.c — `attnlab convert --out X.gguf`: a model (a MiniMind folder, a .pth from its
 * trainer, a llama2.c checkpoint) and its tokenizer (the folder's tokenizer.json, or --tokenizer)
 * written as one GGUF file for llama.cpp (al_model_export_gguf), all or nothing. */
#include "cli/cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* general.name: the model's folder name, or its file name without the extension. */
static void model_name(const char *path, char *out, size_t cap) {
    const int file = cli_is_file(path);
    size_t n = strlen(path);
    while (n > 1 && path[n - 1] == '/') n--;
    size_t start = n;
    while (start > 0 && path[start - 1] != '/') start--;
    size_t end = n;
    for (size_t i = n; file && i > start + 1; i--)
        if (path[i - 1] == '.') {
            end = i - 1;
            break;
        }
    const size_t len = end - start < cap - 1 ? end - start : cap - 1;
    memcpy(out, path + start, len);
    out[len] = '\0';
}

int cli_convert_gguf(const char *model_path, const char *tokenizer_path, const char *out, int f16,
                     const cli_pth_options *pth) {
    /* 0. The output is none of the inputs, in a folder that exists. */
    if (!cli_check_model_output(out, model_path, &tokenizer_path, tokenizer_path ? 1 : 0)) return EXIT_BAD_INPUT;
    /* 1. The model, with one position reserved: only its weights are read. */
    int status = EXIT_OK;
    al_model_file_kind kind;
    al_model *m = cli_load_model(model_path, 1, 1, pth, &kind, &status);
    if (!m) return status;
    /* 2. Its tokenizer, of the model's vocabulary: --tokenizer, else the one beside a MiniMind. */
    char *beside = tokenizer_path ? NULL : cli_model_tokenizer(model_path);
    const char *tok_path = tokenizer_path ? tokenizer_path : beside;
    al_tokenizer *tok = NULL;
    if (!tokenizer_path && (!tok_path || !cli_is_file(tok_path))) { /* a --tokenizer that is no file: its reader says so */
        cli_error("a GGUF file holds the tokenizer: '%s' has none beside it; give --tokenizer (%s)", cli_show(model_path),
                  kind == AL_MODEL_FILE_LLAMA2C ? "llama2.c's tokenizer.bin" : "a tokenizer.json");
        status = EXIT_BAD_INPUT;
    } else if (!(tok = cli_load_tokenizer(tok_path, al_model_get_hparams(m)->vocab))) {
        status = EXIT_BAD_INPUT;
    }
    /* 3. The image, then the file. */
    uint8_t *image = NULL;
    size_t size = 0;
    if (status == EXIT_OK) {
        char name[128];
        model_name(model_path, name, sizeof name);
        al_error err = {0};
        const al_status st = al_model_export_gguf(m, tok, f16 ? AL_DTYPE_F16 : AL_DTYPE_F32, name, &image, &size, &err);
        if (st != AL_OK) {
            if (f16 && st == AL_ERR_NONFINITE) cli_error("%s: %s; --dtype f32 keeps it", cli_show(model_path), err.msg);
            else cli_error("%s: %s", cli_show(model_path), err.msg);
            status = st == AL_ERR_NOMEM ? EXIT_FAILURE_ENV : EXIT_BAD_INPUT;
        }
    }
    if (status == EXIT_OK && !cli_write_file_atomic(out, image, size)) status = EXIT_FAILURE_ENV;
    if (status == EXIT_OK) printf("wrote %s: GGUF, %s, %zu bytes\n", cli_show(out), f16 ? "float16" : "float32", size);
    al_buffer_free(image);
    al_tok_free(tok);
    al_model_free(m);
    free(beside);
    return status;
}
