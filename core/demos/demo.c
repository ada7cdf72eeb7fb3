/* demo.c — entry points of the tutorial demos (the whole text, or the text as sections for the
 * page's walkthrough) and the helpers the demos share (see demo.h). */
#include "attnlab/demos.h"
#include "attnlab/model.h"
#include "demos/demo.h"

#include <math.h>
#include <string.h>

#define RULE "======================================================================" /* "=" * 70 */

void al_demo_header(al_demo_out *d, al_demo_panel panel, const char *title) {
    al_text *o = &d->text;
    const size_t start = o->len;
    al_text_printf(o, "%s\n", RULE);
    const size_t title_at = o->len;
    al_text_printf(o, "%s", title);
    const size_t title_end = o->len;
    al_text_printf(o, "\n%s\n", RULE);
    if (d->count < AL_DEMO_MAX_SECTIONS) {
        d->at[d->count].start = start;
        d->at[d->count].title = title_at;
        d->at[d->count].title_end = title_end;
        d->at[d->count].body = o->len;
        d->at[d->count].panel = panel;
    }
    d->count++; /* more than AL_DEMO_MAX_SECTIONS: refused by al_demo_sections */
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

void al_demo_shape(al_text *o, const char *label, const int64_t *shape, int ndim,
                   const char *comment) {
    al_text_printf(o, "%s", label);
    al_text_size(o, shape, ndim);
    al_text_printf(o, "%s\n", comment);
}

void al_demo_py_float(al_text *o, double v) {
    /* The fewest significant digits that read back as v, then written out in fixed notation,
     * as Python's repr does in this range. */
    char text[64];
    int digits = 1;
    for (; digits < 17; digits++) {
        double back;
        al_snprintf(text, sizeof text, "%.*e", digits - 1, v);
        if (al_parse_finite(text, &back) && back == v) break;
    }
    const int exponent = v == 0.0 ? 0 : (int)floor(log10(fabs(v)));
    const int decimals = digits - 1 - exponent > 1 ? digits - 1 - exponent : 1;
    al_text_printf(o, "%.*f", decimals, v);
}

void al_demo_py_rounded(al_text *o, const float *values, int64_t n, int digits) {
    al_text_printf(o, "[");
    for (int64_t i = 0; i < n; i++) {
        /* round(v, digits) is v correctly rounded to that many decimals; its repr drops the
         * trailing zeros but keeps one decimal. */
        char text[64];
        al_snprintf(text, sizeof text, "%.*f", digits, (double)values[i]);
        size_t len = strlen(text);
        while (len > 0 && text[len - 1] == '0' && text[len - 2] != '.') len--;
        al_text_printf(o, "%s%.*s", i ? ", " : "", (int)len, text);
    }
    al_text_printf(o, "]");
}

void al_demo_linear(float *y, const float *x, const float *w, int64_t n, int64_t in_dim,
                    int64_t out_dim) {
    for (int64_t r = 0; r < n; r++)
        for (int64_t o = 0; o < out_dim; o++)
            y[r * out_dim + o] = al_dot_f32(x + r * in_dim, w + o * in_dim, in_dim);
}

float al_demo_silu(float x) { return x / (1.0f + expf(-x)); }

al_status al_demo_write(al_demo demo, al_lang lang, int64_t seed, al_demo_out *d,
                            al_error *err) {
    if (al_demo_section_count(demo) < 0) return al_fail(err, AL_ERR_ARG, "unknown demo %d", (int)demo);
    if (lang != AL_LANG_ZH && lang != AL_LANG_EN)
        return al_fail(err, AL_ERR_ARG, "unknown language %d", (int)lang);
    al_rng *rng = al_rng_create(5489); /* the state before any manual_seed; reseeded below */
    if (!rng) return al_fail(err, AL_ERR_NOMEM, "out of memory");
    d->count = 0;
    al_status st = AL_OK;
    if (demo == AL_DEMO_BASIC) al_demo_basic(d, lang, seed, rng);
    else if (demo == AL_DEMO_ATTENTION) st = al_demo_attention(d, lang, seed, rng, err);
    else if (demo == AL_DEMO_MLP_MOE) st = al_demo_mlp_moe(d, lang, seed, rng, err);
    else if (demo == AL_DEMO_BLOCK) st = al_demo_block(d, lang, seed, rng, err);
    else st = al_demo_generation(d, lang, seed, rng, err);
    al_rng_free(rng);
    return st;
}

int64_t al_demo_run(al_demo demo, al_lang lang, int64_t seed, char *buf, int64_t cap,
                    al_error *err) {
    if (cap < 0 || (!buf && cap > 0))
        return al_fail(err, AL_ERR_ARG, "demo: a NULL buffer or a negative capacity"), -1;
    al_demo_out d = {.fig = NULL};
    al_text_init(&d.text, buf, (size_t)cap);
    return al_demo_write(demo, lang, seed, &d, err) == AL_OK ? (int64_t)d.text.len : -1;
}

/* Appends a script excerpt as the demo runs it: with seed >= 0, the value of every
 * torch.manual_seed(<digits>) call replaced by the seed. */
static void append_code(al_text *o, const char *code, int64_t seed) {
    static const char CALL[] = "torch.manual_seed(";
    const size_t call_len = sizeof CALL - 1;
    while (*code) {
        const char *call = seed >= 0 ? strstr(code, CALL) : NULL;
        const char *digits = call ? call + call_len : NULL;
        const char *close = digits;
        while (close && *close >= '0' && *close <= '9') close++;
        if (!call || close == digits || *close != ')') {
            /* no call left (or not a plain number): the rest, or up to past this call */
            const size_t n = call ? (size_t)(digits - code) : strlen(code);
            al_text_printf(o, "%.*s", (int)n, code);
            code += n;
            continue;
        }
        al_text_printf(o, "%.*s%lld", (int)(digits - code), code, (long long)seed);
        code = close;
    }
}

int64_t al_demo_section_count(al_demo demo) {
    if (demo == AL_DEMO_BASIC) return 4;     /* 3 examples and the closing banner */
    if (demo == AL_DEMO_ATTENTION) return 8; /* 7 examples and the closing banner */
    if (demo == AL_DEMO_MLP_MOE || demo == AL_DEMO_BLOCK || demo == AL_DEMO_GENERATION) return 8; /* the same */
    return -1;
}

int64_t al_demo_sections(al_demo demo, al_lang lang, int64_t seed, al_demo_section *sections,
                         int64_t max_sections, char *text, int64_t cap, al_error *err) {
    const int64_t count = al_demo_section_count(demo);
    if (count < 0) {
        al_fail(err, AL_ERR_ARG, "unknown demo %d", (int)demo);
        return -1;
    }
    if (cap < 0 || max_sections < 0 || (!text && cap > 0) || (!sections && max_sections > 0)) {
        al_fail(err, AL_ERR_ARG, "demo sections: a NULL buffer given a capacity, or a negative capacity");
        return -1;
    }

    /* 1. The printed text, its sections recorded as it is written. */
    al_demo_out d = {.fig = NULL};
    al_text_init(&d.text, text, (size_t)cap);
    if (al_demo_write(demo, lang, seed, &d, err) != AL_OK) return -1;
    if (d.count != count) { /* a demo and al_demo_section_count disagree: a bug, not an input */
        al_fail(err, AL_ERR_CONFIG, "demo %d has %d sections, %lld expected", (int)demo, d.count,
                (long long)count);
        return -1;
    }
    const size_t printed = d.text.len;

    /* 2. The code excerpts after it. */
    size_t code_at[AL_DEMO_MAX_SECTIONS];
    for (int i = 0; i < d.count; i++) {
        code_at[i] = d.text.len;
        append_code(&d.text, al_demo_code(demo, lang, i), seed);
    }
    const int64_t len = (int64_t)d.text.len;
    if (cap == 0) return len; /* size query */
    if (len >= cap || max_sections < count) {
        al_fail(err, AL_ERR_CAPACITY, "demo sections: %lld bytes and %lld sections needed, "
                "%lld and %lld given", (long long)(len + 1), (long long)count, (long long)cap,
                (long long)max_sections);
        return -1;
    }

    /* 3. Each section runs to the next one's header (the last one to the end of the printed
     *    text); its numbers are its body without the newlines around it. */
    for (int i = 0; i < d.count; i++) {
        const size_t end = i + 1 < d.count ? d.at[i + 1].start : printed;
        size_t from = d.at[i].body, to = end;
        while (from < to && text[from] == '\n') from++;
        while (to > from && text[to - 1] == '\n') to--;
        al_demo_section *s = &sections[i];
        s->panel = (int32_t)d.at[i].panel;
        s->start = (int64_t)d.at[i].start;
        s->len = (int64_t)(end - d.at[i].start);
        s->title = (int64_t)d.at[i].title;
        s->title_len = (int64_t)(d.at[i].title_end - d.at[i].title);
        s->numbers = (int64_t)from;
        s->numbers_len = (int64_t)(to - from);
        s->code = (int64_t)code_at[i];
        s->code_len = (int64_t)((i + 1 < d.count ? code_at[i + 1] : d.text.len) - code_at[i]);
    }
    return len;
}
