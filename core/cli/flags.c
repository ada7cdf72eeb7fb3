/* flags.c — the commands' numbers and flags: whole numbers within a range, finite decimals,
 * lists of token ids, and the --name value pairs of a command line. */
#include "cli/cli.h"
#include "base/internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- numbers -------------------------------------------------------------------------------- */

int cli_parse_int(const char *s, int64_t lo, int64_t hi, int64_t *out) {
    if (!s || !*s) return 0;
    char *end = NULL;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno != 0 || *end != '\0' || v < lo || v > hi) return 0;
    *out = (int64_t)v;
    return 1;
}

int cli_parse_double(const char *s, double *out) { return s && al_parse_finite(s, out); }

/* "1 2 3" into ids[cap]; the count, or -1 after printing why. */
int64_t cli_parse_ids(const char *text, int32_t *ids, int64_t cap) {
    int64_t n = 0;
    const char *p = text;
    while (*p) {
        while (*p == ' ' || *p == ',') p++;
        if (!*p) break;
        const char *start = p;
        while (*p && *p != ' ' && *p != ',') p++;
        char token[24];
        const size_t len = (size_t)(p - start);
        int64_t v = 0;
        if (len >= sizeof token) {
            cli_error("--ids: '%.20s...' is not a token id", start);
            return -1;
        }
        memcpy(token, start, len);
        token[len] = '\0';
        if (!cli_parse_int(token, 0, INT32_MAX, &v)) {
            cli_error("--ids: '%s' is not a token id (a whole number >= 0)", cli_show(token));
            return -1;
        }
        if (n == cap) {
            cli_error("--ids: more than %lld ids", (long long)cap);
            return -1;
        }
        ids[n++] = (int32_t)v;
    }
    return n;
}

int cli_set_ablation(al_model *m, const char *text) {
    const al_model_hparams *hp = al_model_get_hparams(m);
    const int64_t cap = hp->n_layers * hp->n_heads;
    int32_t *heads = malloc((size_t)(2 * cap) * sizeof *heads);
    if (!heads) {
        cli_error("out of memory");
        return 0;
    }
    /* "L.H,L.H,...": each a layer and a head, whole numbers, the pairs apart by commas or spaces */
    int64_t n = 0;
    int ok = 1;
    for (const char *p = text; ok && *p;) {
        while (*p == ' ' || *p == ',') p++;
        if (!*p) break;
        const char *start = p;
        while (*p && *p != ' ' && *p != ',') p++;
        char pair[48];
        const size_t len = (size_t)(p - start);
        char *dot = NULL;
        int64_t layer = 0, head = 0;
        if (len < sizeof pair) {
            memcpy(pair, start, len);
            pair[len] = '\0';
            dot = strchr(pair, '.');
        }
        if (!dot) {
            cli_error("--ablate: '%s' is not LAYER.HEAD (e.g. --ablate \"0.3,1.2\")",
                      len < sizeof pair ? cli_show(pair) : "(too long)");
            ok = 0;
            break;
        }
        *dot = '\0';
        if (!cli_parse_int(pair, 0, INT32_MAX, &layer) || !cli_parse_int(dot + 1, 0, INT32_MAX, &head)) {
            *dot = '.';
            cli_error("--ablate: '%s' is not LAYER.HEAD with whole numbers >= 0 (e.g. --ablate \"0.3,1.2\")",
                      cli_show(pair));
            ok = 0;
            break;
        }
        if (n == cap) {
            cli_error("--ablate: more than the model's %lld heads", (long long)cap);
            ok = 0;
            break;
        }
        heads[2 * n] = (int32_t)layer, heads[2 * n + 1] = (int32_t)head;
        n++;
    }
    if (ok && n == 0) {
        cli_error("--ablate: give at least one LAYER.HEAD (e.g. --ablate \"0.3\")");
        ok = 0;
    }
    al_error err = {0};
    if (ok && al_model_set_ablation(m, heads, n, &err) != AL_OK) {
        cli_error("--ablate: %s", err.msg + (strncmp(err.msg, "ablation: ", 10) ? 0 : 10));
        ok = 0;
    }
    free(heads);
    return ok;
}

/* ---- flags --------------------------------------------------------------------------------- */

int cli_parse_flags(int argc, char **argv, const char *cmd, const cli_flag *flags, int n) {
    for (int i = 0; i < argc; i += 2) {
        int k = 0;
        while (k < n && strcmp(argv[i], flags[k].name) != 0) k++;
        if (k == n) {
            cli_error("unknown option '%s' for %s (see 'attnlab help')", cli_show(argv[i]), cmd);
            return 0;
        }
        if (i + 1 >= argc) {
            cli_error("%s expects a value", flags[k].name);
            return 0;
        }
        *flags[k].value = argv[i + 1];
    }
    return 1;
}
