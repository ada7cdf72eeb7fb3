/* model_files.c — `--model PATH` for the commands that run a whole model: a MiniMind / Hugging
 * Face directory (config.json + model.safetensors, and the tokenizer.json that goes with them)
 * or a llama2.c checkpoint (.bin), read, checked and turned into a model with only the context
 * the command needs reserved. */
#include "cli/cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define MAX_MODEL_BYTES ((size_t)2 << 30)
#define MAX_CONFIG_BYTES ((size_t)1 << 20)

/* path/name in a new string (NULL after printing why). */
static char *joined(const char *path, const char *name) {
    const size_t n = strlen(path) + strlen(name) + 2;
    char *out = malloc(n);
    if (!out) cli_error("out of memory");
    else snprintf(out, n, "%s/%s", path, name);
    return out;
}

static int64_t clamp_context(int64_t want, int64_t max_seq) {
    return want <= 0 || want > max_seq ? max_seq : want;
}

static int64_t clamp_step(int64_t step, int64_t want, int64_t max_seq) {
    const int64_t context = clamp_context(want, max_seq);
    return step < 1 ? 1 : step > context ? context : step;
}

int32_t cli_stop_token(cli_model_kind kind) { return kind == CLI_MODEL_LLAMA2C ? 1 : 2; }

char *cli_model_tokenizer(const char *path) {
    struct stat sb;
    return stat(path, &sb) == 0 && S_ISDIR(sb.st_mode) ? joined(path, "tokenizer.json") : NULL;
}

int cli_is_file(const char *path) {
    struct stat sb;
    return stat(path, &sb) == 0 && S_ISREG(sb.st_mode);
}

al_model *cli_load_model(const char *path, int64_t want_context, int64_t max_step,
                         cli_model_kind *kind, int *status) {
    *status = EXIT_BAD_INPUT;
    struct stat sb;
    if (stat(path, &sb) != 0) {
        cli_error("cannot open '%s': no such file or folder", cli_show(path));
        return NULL;
    }
    al_error err = {0};
    al_model *m = NULL;
    al_status st;
    if (S_ISDIR(sb.st_mode)) {
        /* A MiniMind / Hugging Face folder. */
        *kind = CLI_MODEL_MINIMIND;
        char *config_path = joined(path, "config.json"), *weights_path = joined(path, "model.safetensors");
        size_t config_size = 0, weights_size = 0;
        char *config = config_path ? (char *)cli_read_file(config_path, MAX_CONFIG_BYTES, &config_size) : NULL;
        uint8_t *weights = config && weights_path ? cli_read_safetensors(weights_path, MAX_MODEL_BYTES, &weights_size) : NULL;
        al_safetensors *tensors = NULL;
        al_model_hparams hp;
        if (weights && (st = al_st_parse_view(weights, weights_size, &tensors, &err)) != AL_OK)
            cli_error("%s: %s", cli_show(weights_path), err.msg);
        else if (tensors && (st = al_minimind_hparams(config, config_size, tensors, &hp, &err)) != AL_OK)
            cli_error("%s: %s", cli_show(path), err.msg);
        else if (tensors && (st = al_model_from_minimind(config, config_size, tensors, clamp_context(want_context, hp.max_seq),
                                                         clamp_step(max_step, want_context, hp.max_seq), &m, &err)) != AL_OK) {
            cli_error("%s: %s", cli_show(path), err.msg);
            if (st == AL_ERR_NOMEM) *status = EXIT_FAILURE_ENV;
        }
        al_st_free(tensors);
        free(weights);
        free(config);
        free(config_path);
        free(weights_path);
        if (m) *status = EXIT_OK;
        return m;
    }
    const size_t len = strlen(path);
    if (len > 4 && !strcmp(path + len - 4, ".pth")) {
        cli_error("'%s': MiniMind .pth checkpoints are not read yet; save the model with save_pretrained (config.json + "
                  "model.safetensors) or use a llama2.c .bin", cli_show(path));
        return NULL;
    }
    /* A llama2.c checkpoint. */
    *kind = CLI_MODEL_LLAMA2C;
    size_t size = 0;
    uint8_t *bytes = cli_read_file(path, MAX_MODEL_BYTES, &size);
    if (!bytes) return NULL;
    al_model_hparams hp;
    if ((st = al_llama2c_hparams(bytes, size, &hp, &err)) != AL_OK ||
        (st = al_model_from_llama2c(bytes, size, clamp_context(want_context, hp.max_seq),
                                    clamp_step(max_step, want_context, hp.max_seq), &m, &err)) != AL_OK) {
        cli_error("%s: %s", cli_show(path), err.msg);
        if (st == AL_ERR_NOMEM) *status = EXIT_FAILURE_ENV;
    }
    free(bytes);
    if (m) *status = EXIT_OK;
    return m;
}
