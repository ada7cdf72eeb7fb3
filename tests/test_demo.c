/* test_demo.c — the demos as sections (al_demo_sections) against the demos as one text
 * (al_demo_run, itself checked byte for byte against PyTorch's output by tests/demo.test.mjs):
 * the sections' printed ranges follow one another and make up exactly that text, each title is
 * its header's line, the numbers are the section's output without the blank lines around it,
 * every example has code (02 and 03; 04's and 05's code is the tutorial's, not shipped) and a
 * panel (the closing banner neither), a seed replaces the
 * script's torch.manual_seed values in the code as it does in the run; and the size query,
 * the capacity checks and bad arguments. tests/demo-sections.test.mjs checks the code excerpts
 * against the scripts themselves. */
#include "attnlab.h"
#include "check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RULE "======================================================================"

/* The panels the page highlights for each example, in order, then the closing banner. */
static const al_demo_panel BASIC_PANELS[] = {AL_DEMO_PANEL_TEXT, AL_DEMO_PANEL_TEXT,
                                             AL_DEMO_PANEL_ROPE, AL_DEMO_PANEL_NONE};
static const al_demo_panel ATTENTION_PANELS[] = {
    AL_DEMO_PANEL_ATTN, AL_DEMO_PANEL_ATTN, AL_DEMO_PANEL_ROPE,   AL_DEMO_PANEL_MASK,
    AL_DEMO_PANEL_ATTN, AL_DEMO_PANEL_KV,   AL_DEMO_PANEL_CHECKS, AL_DEMO_PANEL_NONE};
static const al_demo_panel MLP_MOE_PANELS[] = {
    AL_DEMO_PANEL_FFN, AL_DEMO_PANEL_FFN, AL_DEMO_PANEL_FFN, AL_DEMO_PANEL_FFN,
    AL_DEMO_PANEL_FFN, AL_DEMO_PANEL_FFN, AL_DEMO_PANEL_FFN, AL_DEMO_PANEL_NONE};
static const al_demo_panel BLOCK_PANELS[] = {
    AL_DEMO_PANEL_BLOCK, AL_DEMO_PANEL_BLOCK, AL_DEMO_PANEL_BLOCK, AL_DEMO_PANEL_BLOCK,
    AL_DEMO_PANEL_BLOCK, AL_DEMO_PANEL_BLOCK, AL_DEMO_PANEL_BLOCK, AL_DEMO_PANEL_NONE};
static const al_demo_panel GENERATION_PANELS[] = {
    AL_DEMO_PANEL_SAMPLER, AL_DEMO_PANEL_SAMPLER, AL_DEMO_PANEL_SAMPLER, AL_DEMO_PANEL_SAMPLER,
    AL_DEMO_PANEL_SAMPLER, AL_DEMO_PANEL_SAMPLER, AL_DEMO_PANEL_SAMPLER, AL_DEMO_PANEL_NONE};

static int has(const char *text, int64_t at, int64_t len, const char *needle) {
    const size_t n = strlen(needle);
    for (int64_t i = at; i + (int64_t)n <= at + len; i++)
        if (!memcmp(text + i, needle, n)) return 1;
    return 0;
}

static void check_demo(al_demo demo, al_lang lang, int64_t seed) {
    char what[64];
    snprintf(what, sizeof what, "demo %d lang %d seed %lld", (int)demo, (int)lang, (long long)seed);
    al_error err = {0};

    /* The whole text, as the CLI prints it. */
    const int64_t run_len = al_demo_run(demo, lang, seed, NULL, 0, &err);
    char *run = malloc(run_len + 1);
    CHECK(run && al_demo_run(demo, lang, seed, run, run_len + 1, &err) == run_len, "%s: run", what);

    /* 1. Size query, then the fill. */
    const int64_t count = al_demo_section_count(demo);
    const int64_t len = al_demo_sections(demo, lang, seed, NULL, 0, NULL, 0, &err);
    CHECK(count == (demo == AL_DEMO_BASIC ? 4 : 8), "%s: %lld sections", what, (long long)count);
    /* the tutorial's later scripts (04, 05, 10) are not shipped: their examples carry no code */
    const int shipped_code = demo == AL_DEMO_BASIC || demo == AL_DEMO_ATTENTION;
    CHECK(shipped_code ? len > (int64_t)run_len : len == (int64_t)run_len, "%s: size %lld for a run of %zu bytes",
          what, (long long)len, run_len);
    if (!run || count < 1 || len <= 0) {
        free(run);
        return;
    }
    char *text = malloc((size_t)len + 1);
    al_demo_section *s = calloc((size_t)count, sizeof *s);
    CHECK(al_demo_sections(demo, lang, seed, s, count, text, len + 1, &err) == len, "%s: fill: %s", what, err.msg);
    CHECK(text[len] == '\0' && strlen(text) == (size_t)len, "%s: NUL-terminated at its length", what);

    /* 2. The printed ranges tile the run's text, in order. */
    CHECK(memcmp(text, run, run_len) == 0, "%s: the text does not start with the run's", what);
    int64_t at = 0;
    for (int64_t i = 0; i < count; i++) {
        CHECK(s[i].start == at && s[i].len > 0, "%s: section %lld starts at %lld, not %lld", what,
              (long long)i, (long long)s[i].start, (long long)at);
        at = s[i].start + s[i].len;
    }
    CHECK(at == (int64_t)run_len, "%s: the sections end at %lld, the text at %zu", what, (long long)at, run_len);

    const al_demo_panel *panels = demo == AL_DEMO_BASIC       ? BASIC_PANELS
                                  : demo == AL_DEMO_ATTENTION ? ATTENTION_PANELS
                                  : demo == AL_DEMO_MLP_MOE   ? MLP_MOE_PANELS
                                  : demo == AL_DEMO_BLOCK     ? BLOCK_PANELS
                                                              : GENERATION_PANELS;
    for (int64_t i = 0; i < count; i++) {
        const al_demo_section *x = &s[i];
        const int last = i == count - 1;
        /* 3. The header: rule, title, rule; the title inside it. */
        CHECK(!memcmp(text + x->start, RULE "\n", 71), "%s: section %lld has no rule first", what, (long long)i);
        CHECK(x->title == x->start + 71 && x->title_len > 0 && !memchr(text + x->title, '\n', (size_t)x->title_len) &&
              !memcmp(text + x->title + x->title_len, "\n" RULE "\n", 72), "%s: section %lld title", what, (long long)i);
        /* 4. The numbers: inside the section, after the header, no newline at either end. */
        const int64_t body = x->title + x->title_len + 72;
        CHECK(x->numbers >= body && x->numbers + x->numbers_len <= x->start + x->len, "%s: %lld numbers outside", what, (long long)i);
        CHECK(x->numbers_len == 0 || (text[x->numbers] != '\n' && text[x->numbers + x->numbers_len - 1] != '\n'),
              "%s: section %lld numbers keep a blank line", what, (long long)i);
        for (int64_t j = body; j < x->start + x->len; j++)
            if (j < x->numbers || j >= x->numbers + x->numbers_len)
                CHECK(text[j] == '\n', "%s: section %lld drops '%c' at %lld from its numbers", what, (long long)i, text[j], (long long)j);
        /* 5. Code after the printed text; panels; the closing banner has neither numbers nor code. */
        CHECK(x->code >= (int64_t)run_len && x->code + x->code_len <= len, "%s: %lld code outside", what, (long long)i);
        CHECK((int)x->panel == (int)panels[i], "%s: section %lld panel %d, want %d", what, (long long)i, x->panel, (int)panels[i]);
        CHECK(last ? x->numbers_len == 0 && x->code_len == 0 : x->numbers_len > 0 && (x->code_len > 0) == shipped_code,
              "%s: section %lld has %lld bytes of numbers and %lld of code", what, (long long)i,
              (long long)x->numbers_len, (long long)x->code_len);
    }
    /* 6. The code as the demo runs it: the seed in every manual_seed call of the basic demo. */
    if (demo == AL_DEMO_BASIC) {
        CHECK(has(text, s[0].code, s[0].code_len, seed < 0 ? "torch.manual_seed(42)" : "torch.manual_seed(7)"),
              "%s: example 1's code does not seed as the run does", what);
        CHECK(has(text, s[1].code, s[1].code_len, seed < 0 ? "torch.manual_seed(123)" : "torch.manual_seed(7)"),
              "%s: example 2's code does not seed as the run does", what);
    }
    CHECK(!has(text, 0, len, "O(1)"), "%s: the text says O(1)", what);

    /* 7. Buffers too small. */
    CHECK(al_demo_sections(demo, lang, seed, s, count, text, len, &err) == -1 && err.status == AL_ERR_CAPACITY,
          "%s: no room for the NUL accepted", what);
    CHECK(al_demo_sections(demo, lang, seed, s, count - 1, text, len + 1, &err) == -1 && err.status == AL_ERR_CAPACITY,
          "%s: one section short accepted", what);
    free(run), free(text), free(s);
}

int main(void) {
    const al_demo demos[] = {AL_DEMO_BASIC, AL_DEMO_ATTENTION, AL_DEMO_MLP_MOE, AL_DEMO_BLOCK, AL_DEMO_GENERATION};
    for (size_t d = 0; d < sizeof demos / sizeof demos[0]; d++)
        for (int lang = AL_LANG_ZH; lang <= AL_LANG_EN; lang++) {
            check_demo(demos[d], (al_lang)lang, -1);
            check_demo(demos[d], (al_lang)lang, 7);
        }

    al_error err = {0};
    al_demo_section s[8];
    char text[16];
    CHECK(al_demo_section_count((al_demo)99) == -1 && al_demo_section_count((al_demo)-1) == -1, "unknown demo counted");
    CHECK(al_demo_sections((al_demo)99, AL_LANG_EN, -1, NULL, 0, NULL, 0, &err) == -1 && err.status == AL_ERR_ARG,
          "unknown demo accepted");
    CHECK(al_demo_sections(AL_DEMO_BASIC, (al_lang)5, -1, NULL, 0, NULL, 0, &err) == -1 &&
          err.status == AL_ERR_ARG && strstr(err.msg, "language"), "unknown language accepted: %s", err.msg);
    CHECK(al_demo_sections(AL_DEMO_BASIC, AL_LANG_EN, -1, NULL, 4, text, sizeof text, &err) == -1 &&
          err.status == AL_ERR_ARG, "NULL sections with a capacity accepted");
    CHECK(al_demo_sections(AL_DEMO_BASIC, AL_LANG_EN, -1, s, 4, NULL, 100, &err) == -1 && err.status == AL_ERR_ARG,
          "NULL text with a capacity accepted");
    CHECK(al_demo_sections(AL_DEMO_BASIC, AL_LANG_EN, -1, s, 4, text, -1, NULL) == -1, "negative capacity accepted");
    CHECK(al_demo_sections(AL_DEMO_BASIC, AL_LANG_EN, -1, s, 4, text, sizeof text, NULL) == -1, "small text accepted");
    CHECK_DONE();
}
