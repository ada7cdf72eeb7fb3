/* cmd_demo.c — `attnlab demo basic|attention|mlp-moe|block|generation [--lang zh|en] [--seed N]`. */
#include "cli/cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cmd_demo(int argc, char **argv) {
    if (argc < 1) {
        cli_error("demo needs a name: 'basic', 'attention', 'mlp-moe', 'block' or 'generation'");
        return EXIT_BAD_INPUT;
    }
    al_demo demo;
    if (!strcmp(argv[0], "basic")) demo = AL_DEMO_BASIC;
    else if (!strcmp(argv[0], "attention")) demo = AL_DEMO_ATTENTION;
    else if (!strcmp(argv[0], "mlp-moe")) demo = AL_DEMO_MLP_MOE;
    else if (!strcmp(argv[0], "block")) demo = AL_DEMO_BLOCK;
    else if (!strcmp(argv[0], "generation")) demo = AL_DEMO_GENERATION;
    else {
        cli_error("unknown demo '%s': expected 'basic', 'attention', 'mlp-moe', 'block' or 'generation'", argv[0]);
        return EXIT_BAD_INPUT;
    }
    al_lang lang = AL_LANG_ZH;
    int64_t seed = -1; /* the scripts' own seeds */
    for (int i = 1; i < argc; i++) {
        const char *flag = argv[i];
        const char *value = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(flag, "--lang")) {
            if (value && !strcmp(value, "zh")) lang = AL_LANG_ZH;
            else if (value && !strcmp(value, "en")) lang = AL_LANG_EN;
            else {
                cli_error("--lang expects 'zh' or 'en'");
                return EXIT_BAD_INPUT;
            }
            i++;
        } else if (!strcmp(flag, "--seed")) {
            if (!cli_parse_int(value, 0, INT64_MAX, &seed)) {
                cli_error("--seed expects a whole number >= 0");
                return EXIT_BAD_INPUT;
            }
            i++;
        } else {
            cli_error("unknown option '%s' for demo (see 'attnlab help')", flag);
            return EXIT_BAD_INPUT;
        }
    }
    al_error err = {0};
    const int64_t len = al_demo_run(demo, lang, seed, NULL, 0, &err);
    char *text = len >= 0 ? malloc((size_t)len + 1) : NULL;
    if (!text || al_demo_run(demo, lang, seed, text, len + 1, &err) != len) {
        cli_error("%s", err.msg[0] ? err.msg : "out of memory");
        free(text);
        return err.status == AL_ERR_NOMEM || !err.msg[0] ? EXIT_FAILURE_ENV : EXIT_BAD_INPUT;
    }
    fwrite(text, 1, (size_t)len, stdout);
    free(text);
    return EXIT_OK; /* main checks that standard output was written */
}
