/* demo.c — entry point of the tutorial demos and the helpers both share (see demo.h). */
#include "demos/demo.h"

#include <math.h>

void al_demo_rule(al_text *o) {
    al_text_printf(o, "%s\n",
                   "======================================================================");
}

const char *al_demo_bool(int value) { return value ? "True" : "False"; }

const char *al_demo_pass(al_lang lang, int passed) {
    return passed ? L("通过", "passed") : L("失败", "failed");
}

int al_demo_allclose(const float *a, const float *b, int64_t n, float atol) {
    const float rtol = 1e-5f;
    for (int64_t i = 0; i < n; i++) {
        const float allowed = atol + fabsf(rtol * b[i]);
        if (!(fabsf(a[i] - b[i]) <= allowed) && a[i] != b[i]) return 0;
    }
    return 1;
}

size_t al_demo_run(al_demo demo, al_lang lang, int64_t seed, char *buf, size_t cap,
                   al_error *err) {
    if (demo != AL_DEMO_BASIC && demo != AL_DEMO_ATTENTION) {
        al_fail(err, AL_ERR_ARG, "unknown demo %d", (int)demo);
        return 0;
    }
    if (lang != AL_LANG_ZH && lang != AL_LANG_EN) {
        al_fail(err, AL_ERR_ARG, "unknown language %d", (int)lang);
        return 0;
    }
    al_rng *rng = al_rng_create(5489); /* the state before any manual_seed; reseeded below */
    if (!rng) {
        al_fail(err, AL_ERR_NOMEM, "out of memory");
        return 0;
    }
    al_text o;
    al_text_init(&o, buf, cap);
    al_status st = AL_OK;
    if (demo == AL_DEMO_BASIC) al_demo_basic(&o, lang, seed, rng);
    else st = al_demo_attention(&o, lang, seed, rng, err);
    al_rng_free(rng);
    return st == AL_OK ? o.len : 0;
}
