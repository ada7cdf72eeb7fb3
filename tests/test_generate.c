/* test_generate.c — the page's model lab (al_model_lab_*, built natively) and `attnlab generate`
 * give the same tokens, because both run the core's one generator: on stories260K (llama2.c,
 * BOS first, stops at BOS) and minimind-fortunes (MiniMind, no BOS, stops at eos), greedy and
 * sampled with the same seed (several seeds, temperatures, top-k, top-p, repetition penalties),
 * runs that end at the stop token (the lab finished, the CLI's ids shorter) and the same runs
 * with --ignore-eos / al_model_lab_set_ignore_eos going on past it, and runs that end at the
 * context (stories260K's own 512 positions; a lab of 48 positions against the CLI's limit of new
 * tokens). The CLI is the program beside this one's folder (build/attnlab for build/tests/,
 * build/asan/attnlab for build/asan/tests/), run through the shell.
 *
 * Arguments: stories260K.bin tok512.bin minimind-fortunes-folder. */
#define _POSIX_C_SOURCE 200809L
#include "attnlab.h"
#include "check.h"
#include "read_file.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_IDS = 1024 };

typedef struct {
    const char *prompt;
    double temperature;
    int64_t top_k;
    double top_p, penalty;
    uint64_t seed;
    int64_t max_new;
    int ignore_eos;
} gen_case;

static char cli_path[4096];

/* The CLI beside the folder this program is in: <dir>/tests/test_generate → <dir>/attnlab. */
static void find_cli(const char *argv0) {
    snprintf(cli_path, sizeof cli_path, "%s", argv0);
    for (int up = 0; up < 2; up++) {
        char *slash = strrchr(cli_path, '/');
        if (slash) *slash = '\0';
        else snprintf(cli_path, sizeof cli_path, ".");
    }
    strncat(cli_path, "/attnlab", sizeof cli_path - strlen(cli_path) - 1);
}

/* `attnlab generate ... --print-ids`'s ids into out[cap]: their count, or -1 if it failed. */
static int64_t cli_ids(const char *model, const char *tokenizer, const gen_case *c, int32_t *out, int64_t cap) {
    CHECK(!strchr(c->prompt, '\''), "a prompt with a quote: %s", c->prompt);
    char cmd[8192];
    snprintf(cmd, sizeof cmd,
             "'%s' generate --model '%s'%s%s%s --prompt '%s' --temperature %.17g --top-k %lld --top-p %.17g "
             "--repetition-penalty %.17g --seed %llu --max-new-tokens %lld --print-ids%s 2>/dev/null",
             cli_path, model, tokenizer ? " --tokenizer '" : "", tokenizer ? tokenizer : "", tokenizer ? "'" : "",
             c->prompt, c->temperature, (long long)c->top_k, c->top_p, c->penalty, (unsigned long long)c->seed,
             (long long)c->max_new, c->ignore_eos ? " --ignore-eos" : "");
    FILE *p = popen(cmd, "r");
    if (!p) return -1;
    int64_t n = 0;
    long id;
    while (n < cap && fscanf(p, "%ld", &id) == 1) out[n++] = (int32_t)id;
    const int status = pclose(p);
    CHECK(status == 0, "the CLI failed (status %d): %s", status, cmd);
    return status == 0 ? n : -1;
}

/* The lab's steps for case c: until max_new tokens, or until the generator says no step would
 * draw (the stop token, the context). The new ids into out[cap]; their count. */
static int64_t lab_ids(al_model_lab *lab, const gen_case *c, int32_t *out, int64_t cap) {
    al_error err = {0};
    al_model_lab_set_ignore_eos(lab, c->ignore_eos);
    const int64_t n_prompt = al_model_lab_prompt(lab, c->prompt, strlen(c->prompt), c->seed, &err);
    CHECK(n_prompt > 0, "prompt %s: %s", c->prompt, err.msg);
    if (n_prompt < 1) return -1;
    const al_sampler_params p = {c->temperature, c->top_k, c->top_p, c->penalty};
    for (int64_t i = 0; i < c->max_new && al_model_lab_finish(lab) == AL_GEN_GOING; i++)
        if (al_model_lab_step(lab, &p, &err) < 0) {
            CHECK(0, "step %lld of %s: %s", (long long)i, c->prompt, err.msg);
            return -1;
        }
    int32_t all[MAX_IDS];
    const int64_t n = al_model_lab_ids(lab, all, MAX_IDS);
    const int64_t fresh = n - n_prompt < cap ? n - n_prompt : cap;
    memcpy(out, all + n_prompt, (size_t)fresh * sizeof *out);
    return n - n_prompt;
}

/* One case on both sides; returns why the lab stopped (AL_GEN_GOING if by max_new). */
static al_gen_finish same_tokens(al_model_lab *lab, const char *model, const char *tokenizer, const gen_case *c,
                                 const char *what) {
    int32_t want[MAX_IDS], got[MAX_IDS];
    const int64_t n_want = cli_ids(model, tokenizer, c, want, MAX_IDS);
    const int64_t n_got = lab_ids(lab, c, got, MAX_IDS);
    int64_t first = -1;
    for (int64_t i = 0; i < n_want && i < n_got && first < 0; i++)
        if (want[i] != got[i]) first = i;
    CHECK(n_want >= 0 && n_want == n_got && first < 0,
          "%s %s (T %g, top-k %lld, top-p %g, penalty %g, seed %llu%s): the CLI gives %lld tokens, the lab %lld; "
          "first difference at %lld (CLI %d, lab %d)",
          what, c->prompt, c->temperature, (long long)c->top_k, c->top_p, c->penalty, (unsigned long long)c->seed,
          c->ignore_eos ? ", ignore eos" : "", (long long)n_want, (long long)n_got, (long long)first,
          first >= 0 ? (int)want[first] : -1, first >= 0 ? (int)got[first] : -1);
    return al_model_lab_finish(lab);
}

/* Case c (ignore_eos on) run by the lab with it off until the text ends at the stop token, then
 * resumed past it (al_model_lab_resume) with it on: the CLI's --ignore-eos tokens, since the
 * draws are the same. Returns whether the lab did end and resume. */
static int resumed_tokens(al_model_lab *lab, const char *model, const char *tokenizer, const gen_case *c,
                          const char *what) {
    int32_t want[MAX_IDS], all[MAX_IDS];
    al_error err = {0};
    const int64_t n_want = cli_ids(model, tokenizer, c, want, MAX_IDS);
    al_model_lab_set_ignore_eos(lab, 0);
    const int64_t n_prompt = al_model_lab_prompt(lab, c->prompt, strlen(c->prompt), c->seed, &err);
    CHECK(al_model_lab_resume(lab, &err) != AL_OK && strstr(err.msg, "not ended"), "%s: resume before the end: %s", what,
          err.msg);
    const al_sampler_params p = {c->temperature, c->top_k, c->top_p, c->penalty};
    int resumed = 0;
    for (int64_t i = 0; n_prompt > 0 && i < c->max_new; i++) {
        if (al_model_lab_finish(lab) == AL_GEN_STOP_TOKEN && !resumed) {
            al_model_lab_set_ignore_eos(lab, 1);
            CHECK(al_model_lab_resume(lab, &err) == AL_OK, "%s: resume: %s", what, err.msg);
            resumed = 1;
            i--; /* the stop token, now appended, was step i's token */
            continue;
        }
        if (al_model_lab_finish(lab) != AL_GEN_GOING || al_model_lab_step(lab, &p, &err) < 0) break;
    }
    const int64_t n = al_model_lab_ids(lab, all, MAX_IDS) - n_prompt;
    int same = n == n_want;
    for (int64_t i = 0; same && i < n; i++) same = all[n_prompt + i] == want[i];
    CHECK(resumed && same, "%s %s: resumed %d; the lab gives %lld tokens after the prompt, the CLI --ignore-eos %lld",
          what, c->prompt, resumed, (long long)n, (long long)n_want);
    return resumed;
}

/* Whether the new ids of case c hold the stop token (with ignore_eos: drawn and kept). */
static int holds(al_model_lab *lab, int32_t id) {
    int32_t all[MAX_IDS];
    const int64_t n = al_model_lab_ids(lab, all, MAX_IDS), np = al_model_lab_prompt_len(lab);
    for (int64_t i = np; i < n; i++)
        if (all[i] == id) return 1;
    return 0;
}

static al_model_lab *make(const uint8_t *model, size_t msize, const uint8_t *config, size_t csize, const uint8_t *tok,
                          size_t tsize, int64_t context) {
    al_error err = {0};
    al_model_lab *lab = NULL;
    CHECK(al_model_lab_create(model, msize, AL_MODEL_FILE_UNKNOWN, config, csize, tok, tsize, context, &lab, &err) == AL_OK,
          "create: %s", err.msg);
    return lab;
}

static const gen_case STORIES[] = {
    /* greedy: each ends at BOS before 400 tokens, then goes on past it */
    {"Once upon a time", 0.0, 50, 0.85, 1.0, 0, 400, 0},
    {"Once upon a time", 0.0, 50, 0.85, 1.0, 0, 400, 1},
    {"Lily and Tom", 0.0, 50, 0.85, 1.0, 0, 400, 0},
    {"Lily and Tom", 0.0, 50, 0.85, 1.0, 0, 400, 1},
    {"Tom had a red ball.", 0.0, 50, 0.85, 1.3, 0, 120, 0},
    /* sampled */
    {"The cat sat on the", 0.9, 50, 0.85, 1.0, 1, 400, 0},
    {"The cat sat on the", 0.9, 50, 0.85, 1.0, 1, 400, 1},
    {"Once upon a time", 0.9, 50, 0.85, 1.0, 2, 400, 0},
    {"Once upon a time", 0.9, 50, 0.85, 1.0, 2, 400, 1},
    {"Lily and Tom", 0.7, 0, 1.0, 1.0, 42, 200, 0},
    {"Lily and Tom", 1.3, 10, 0.95, 1.2, 7, 200, 0},
    {"Tom had a red ball.", 0.8, 40, 0.9, 1.1, 2024, 200, 0},
    {"Tom had a red ball.", 1.0, 5, 0.5, 2.0, 99, 200, 1},
    /* to the end of the context: 512 positions */
    {"Once upon a time", 0.0, 50, 0.85, 1.0, 0, 600, 1},
    {"Lily and Tom", 1.1, 50, 0.9, 1.0, 5, 600, 1},
};

static const gen_case MINIMIND[] = {
    /* greedy: 人生 and 今天 end at eos after 2 tokens, 朋友 after 16 */
    {"人生", 0.0, 50, 0.85, 1.0, 0, 60, 0},
    {"人生", 0.0, 50, 0.85, 1.0, 0, 60, 1},
    {"今天", 0.0, 50, 0.85, 1.0, 0, 60, 0},
    {"朋友", 0.0, 50, 0.85, 1.0, 0, 60, 0},
    {"朋友", 0.0, 50, 0.85, 1.0, 0, 60, 1},
    {"Hello, world", 0.0, 50, 0.85, 1.3, 0, 40, 1},
    /* sampled */
    {"人生", 0.7, 50, 0.85, 1.0, 3, 100, 0},
    {"人生", 0.7, 50, 0.85, 1.0, 3, 100, 1},
    {"今天", 1.2, 50, 0.85, 1.0, 3, 100, 0},
    {"朋友", 0.7, 50, 0.85, 1.0, 3, 100, 0},
    {"朋友", 0.7, 50, 0.85, 1.0, 3, 100, 1},
    {"Hello", 0.85, 20, 0.9, 1.1, 11, 80, 1},
    {"今天天气很好", 0.6, 0, 0.7, 1.5, 123, 80, 0},
};

int main(int argc, char **argv) {
    const char *stories = argc > 1 ? argv[1] : "models/stories260K/stories260K.bin";
    const char *tok512 = argc > 2 ? argv[2] : "models/stories260K/tok512.bin";
    const char *fortunes = argc > 3 ? argv[3] : "models/minimind-fortunes";
    find_cli(argv[0]);
    char path[4096];
    size_t msize = 0, tsize = 0, csize = 0;

    /* 1. stories260K: the stop token is BOS (1). */
    uint8_t *model = read_file(stories, &msize), *tok = read_file(tok512, &tsize);
    al_model_lab *lab = model && tok ? make(model, msize, NULL, 0, tok, tsize, 0) : NULL;
    int stopped = 0, past_stop = 0, at_context = 0;
    for (size_t i = 0; lab && i < sizeof STORIES / sizeof *STORIES; i++) {
        const gen_case *c = &STORIES[i];
        const al_gen_finish why = same_tokens(lab, stories, tok512, c, "stories260K");
        stopped += why == AL_GEN_STOP_TOKEN;
        past_stop += c->ignore_eos && holds(lab, 1);
        at_context += why == AL_GEN_CONTEXT && al_model_lab_len(lab) == 512;
        CHECK(!c->ignore_eos || why != AL_GEN_STOP_TOKEN, "stories260K %s: ended at the stop token with ignore_eos",
              c->prompt);
    }
    CHECK(!lab || (stopped >= 4 && past_stop >= 4 && at_context == 2),
          "stories260K: %d runs ended at BOS, %d went past it, %d reached the context (want >= 4, >= 4, 2)", stopped,
          past_stop, at_context);
    al_model_lab_free(lab);
    free(model), free(tok);

    /* 2. minimind-fortunes: the stop token is eos (2); a lab of 48 positions against the CLI's
     *    limit of 48 - prompt new tokens. */
    snprintf(path, sizeof path, "%s/model.safetensors", fortunes);
    model = read_file(path, &msize);
    snprintf(path, sizeof path, "%s/config.json", fortunes);
    uint8_t *config = read_file(path, &csize);
    snprintf(path, sizeof path, "%s/tokenizer.json", fortunes);
    tok = read_file(path, &tsize);
    lab = model && config && tok ? make(model, msize, config, csize, tok, tsize, 0) : NULL;
    stopped = past_stop = 0;
    for (size_t i = 0; lab && i < sizeof MINIMIND / sizeof *MINIMIND; i++) {
        const gen_case *c = &MINIMIND[i];
        const al_gen_finish why = same_tokens(lab, fortunes, NULL, c, "minimind-fortunes");
        stopped += why == AL_GEN_STOP_TOKEN;
        past_stop += c->ignore_eos && holds(lab, 2);
    }
    CHECK(!lab || (stopped >= 4 && past_stop >= 3), "minimind-fortunes: %d runs ended at eos, %d went past it "
          "(want >= 4, >= 3)", stopped, past_stop);
    /* Ended, then resumed past the end: the tokens of a run with ignore_eos from the start. */
    const gen_case resume[] = {{"人生", 0.0, 50, 0.85, 1.0, 0, 30, 1}, {"今天", 0.0, 50, 0.85, 1.0, 0, 30, 1}};
    for (size_t i = 0; lab && i < sizeof resume / sizeof *resume; i++)
        resumed_tokens(lab, fortunes, NULL, &resume[i], "minimind-fortunes, resumed");
    al_model_lab_free(lab);
    lab = model && config && tok ? make(model, msize, config, csize, tok, tsize, 48) : NULL;
    for (uint64_t seed = 1; lab && seed <= 3; seed++) {
        al_error err = {0};
        const char *prompt = "今天天气很好";
        const int64_t n_prompt = al_model_lab_prompt(lab, prompt, strlen(prompt), 0, &err);
        CHECK(n_prompt > 0, "prompt: %s", err.msg);
        const gen_case c = {prompt, 0.9, 50, 0.9, 1.0, seed, 48 - n_prompt, 1};
        const al_gen_finish why = same_tokens(lab, fortunes, NULL, &c, "minimind-fortunes, a context of 48:");
        CHECK(why == AL_GEN_CONTEXT && al_model_lab_len(lab) == 48, "seed %llu: the lab stopped by %d at %lld tokens",
              (unsigned long long)seed, (int)why, (long long)al_model_lab_len(lab));
        const al_sampler_params p = {0.9, 50, 0.9, 1.0};
        CHECK(al_model_lab_step(lab, &p, &err) == -1 && strstr(err.msg, "is full"), "a step past the context: %s",
              err.msg);
    }
    al_model_lab_free(lab);
    free(model), free(config), free(tok);
    CHECK_DONE();
}
