/* model_files.c — `--model PATH` for the commands that run a whole model: a MiniMind / Hugging
 * Face directory (config.json + model.safetensors, and the tokenizer.json that goes with them),
 * a MiniMind .pth (torch.save of a state_dict, its configuration from its shapes and the
 * command's flags) or a llama2.c checkpoint (.bin), read, checked and turned into a model with
 * only the context the command needs reserved. */
#define _POSIX_C_SOURCE 200809L /* strdup */
#include "cli/cli.h"
#include "base/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_MODEL_BYTES ((size_t)2 << 30)
#define MAX_CONFIG_BYTES ((size_t)1 << 20)

/* ---- .pth checkpoints ----------------------------------------------------------------------- */

void cli_pth_options_init(cli_pth_options *o) {
    o->flags = al_pth_flags_default();
    o->given = NULL;
}

int cli_parse_pth_flag(int argc, char **argv, int i, cli_pth_options *o) {
    const char *flag = argv[i], *value = i + 1 < argc ? argv[i + 1] : NULL, *want;
    int64_t n = 0;
    double x = 0.0;
    int ok;
    if (!strcmp(flag, "--no-norm-topk-prob") || !strcmp(flag, "--yarn")) { /* switches: no value */
        if (!strcmp(flag, "--yarn")) o->flags.yarn = 1;
        else o->flags.norm_topk_prob = 0;
        if (!o->given) o->given = flag;
        return 1;
    }
    if (!strcmp(flag, "--heads")) {
        ok = cli_parse_int(value, 1, AL_MAX_HEADS, &n) && (o->flags.n_heads = n, 1);
        want = "a number of attention heads from 1 to 256";
    } else if (!strcmp(flag, "--moe-top-k")) {
        ok = cli_parse_int(value, 1, 256, &n) && (o->flags.moe_top_k = n, 1);
        want = "a number of experts per token from 1 to 256";
    } else if (!strcmp(flag, "--rope-theta")) {
        ok = cli_parse_double(value, &x) && x > 0.0 && (o->flags.rope_theta = x, 1);
        want = "a positive number (MiniMind's default: 1e6)";
    } else if (!strcmp(flag, "--eps")) {
        ok = cli_parse_double(value, &x) && x > 0.0 && x < 1.0 && (o->flags.eps = x, 1);
        want = "a number in (0, 1) (MiniMind's default: 1e-6)";
    } else {
        return 0;
    }
    if (!value || !ok) {
        cli_error("%s expects %s", flag, want);
        return -1;
    }
    if (!o->given) o->given = flag;
    return 2;
}

int cli_read_pth(const char *path, const al_pth_flags *flags, al_pth_model *out, int *status) {
    *status = EXIT_BAD_INPUT;
    memset(out, 0, sizeof *out);
    cli_source src = {.fd = -1};
    if (cli_source_open(&src, path, MAX_MODEL_BYTES) != 0) return 0;
    al_error err = {0};
    /* the archive's directory and pickle only: the index says where each tensor lies */
    const al_status st = al_pth_model_read_source(&src.src, flags, out, &err);
    cli_source_close(&src);
    if (st == AL_OK) return 1;
    cli_error("%s: %s", cli_show(path), err.msg);
    if (st == AL_ERR_NOMEM) *status = EXIT_FAILURE_ENV;
    return 0;
}

/* A path whose name ends in ".pth" (with something before it). */
static int named_pth(const char *path) {
    const size_t len = strlen(path);
    return len > 4 && !strcmp(path + len - 4, ".pth");
}

int cli_model_paths_get(const char *path, cli_model_paths *out) {
    memset(out, 0, sizeof *out);
    struct stat sb;
    if (stat(path, &sb) != 0) return 0;
    char **f = out->files;
    if (S_ISDIR(sb.st_mode)) {
        out->kind = AL_MODEL_FILE_SAFETENSORS;
        f[CLI_MODEL_CONFIG] = cli_path_in(path, "config.json");
        f[CLI_MODEL_WEIGHTS] = cli_path_in(path, "model.safetensors");
        f[CLI_MODEL_TOKENIZER] = cli_path_in(path, "tokenizer.json");
    } else if (named_pth(path)) {
        out->kind = AL_MODEL_FILE_PTH;
        const char *slash = strrchr(path, '/'); /* the .pth's folder, its '/' included */
        const int folder = slash ? (int)(slash - path) + 1 : 0;
        const size_t n = (size_t)folder + sizeof "tokenizer.json";
        if ((f[CLI_MODEL_TOKENIZER] = malloc(n))) snprintf(f[CLI_MODEL_TOKENIZER], n, "%.*stokenizer.json", folder, path);
        f[CLI_MODEL_WEIGHTS] = strdup(path);
    } else {
        out->kind = AL_MODEL_FILE_LLAMA2C;
        f[CLI_MODEL_WEIGHTS] = strdup(path);
    }
    if (f[CLI_MODEL_WEIGHTS] && (f[CLI_MODEL_TOKENIZER] || out->kind == AL_MODEL_FILE_LLAMA2C) &&
        (f[CLI_MODEL_CONFIG] || out->kind != AL_MODEL_FILE_SAFETENSORS))
        return 1;
    cli_error("out of memory");
    cli_model_paths_free(out);
    return -1;
}

void cli_model_paths_free(cli_model_paths *p) {
    for (int i = 0; i < CLI_MODEL_FILES; i++) free(p->files[i]), p->files[i] = NULL;
}

char *cli_model_tokenizer(const char *path) {
    cli_model_paths mp;
    if (cli_model_paths_get(path, &mp) != 1) return NULL;
    char *tokenizer = mp.files[CLI_MODEL_TOKENIZER];
    mp.files[CLI_MODEL_TOKENIZER] = NULL;
    cli_model_paths_free(&mp);
    return tokenizer;
}

int cli_check_model_output(const char *out, const char *model_path, const char *const *others, int n_others) {
    const char *inputs[1 + CLI_MODEL_FILES + CLI_MAX_OTHER_INPUTS] = {model_path};
    if (n_others < 0 || n_others > CLI_MAX_OTHER_INPUTS) n_others = CLI_MAX_OTHER_INPUTS;
    cli_model_paths mp = {0}; /* all NULL when model_path names nothing (yet) */
    if (model_path && cli_model_paths_get(model_path, &mp) < 0) return 0;
    for (int i = 0; i < CLI_MODEL_FILES; i++) inputs[1 + i] = mp.files[i];
    for (int i = 0; i < n_others; i++) inputs[1 + CLI_MODEL_FILES + i] = others[i];
    const int ok = cli_check_output(out, inputs, 1 + CLI_MODEL_FILES + n_others);
    cli_model_paths_free(&mp);
    return ok;
}

int cli_parse_threads(const char *value, int64_t *threads) {
    if (cli_parse_int(value, 1, AL_MAX_THREADS, threads)) return 1;
    cli_error("--threads expects a count from 1 to %d", AL_MAX_THREADS);
    return 0;
}

int64_t cli_threads_or_cores(int64_t threads) {
    if (threads != 0) return threads;
    const long cores = sysconf(_SC_NPROCESSORS_ONLN);
    return cores < 1 ? 1 : cores > AL_MAX_THREADS ? AL_MAX_THREADS : cores;
}

int cli_set_threads(al_model *m, int64_t threads) {
    al_error err = {0};
    if (al_model_set_threads(m, cli_threads_or_cores(threads), &err) == AL_OK) return 1;
    cli_error("--threads: %s", err.msg);
    return 0;
}

int cli_is_file(const char *path) {
    struct stat sb;
    return stat(path, &sb) == 0 && S_ISREG(sb.st_mode);
}

al_model *cli_load_model(const char *path, int64_t want_context, int64_t max_step,
                         const cli_pth_options *pth, al_model_file_kind *kind, int *status) {
    *status = EXIT_BAD_INPUT;
    cli_model_paths mp;
    const int found = cli_model_paths_get(path, &mp);
    if (found <= 0) {
        if (found == 0) cli_error("cannot open '%s': no such file or folder", cli_show(path));
        else *status = EXIT_FAILURE_ENV;
        return NULL;
    }
    if (pth && pth->given && mp.kind != AL_MODEL_FILE_PTH) {
        cli_error("%s applies to a .pth checkpoint only; '%s' gives its own configuration", pth->given, cli_show(path));
        cli_model_paths_free(&mp);
        return NULL;
    }
    al_error err = {0};
    al_model *m = NULL;
    al_status st;
    /* A .pth (by its name), a MiniMind / Hugging Face folder, or else a llama2.c checkpoint. */
    *kind = mp.kind;
    const char *config_path = mp.files[CLI_MODEL_CONFIG], *weights_path = mp.files[CLI_MODEL_WEIGHTS];
    char *config = NULL;
    size_t config_size = 0;
    if (*kind == AL_MODEL_FILE_SAFETENSORS) config = (char *)cli_read_file(config_path, MAX_CONFIG_BYTES, &config_size);
    /* The weights read piece by piece into the model (see al_model_load_source). */
    cli_source src = {.fd = -1};
    if ((*kind != AL_MODEL_FILE_SAFETENSORS || config) && cli_source_open(&src, weights_path, MAX_MODEL_BYTES) == 0) {
        st = al_model_load_source(&src.src, *kind, config, config_size, pth ? &pth->flags : NULL, want_context,
                                  max_step, &m, &err);
        if (st != AL_OK) {
            /* the loader says which file is at fault: a folder's config.json (its messages name
             * it: the folder is shown) or the weights file */
            cli_error("%s: %s", cli_show(err.file == AL_FILE_CONFIG ? path : weights_path), err.msg);
            if (st == AL_ERR_NOMEM) *status = EXIT_FAILURE_ENV;
        }
    }
    cli_source_close(&src);
    free(config);
    cli_model_paths_free(&mp);
    if (m) *status = EXIT_OK;
    return m;
}
