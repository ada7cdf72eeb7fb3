/* test_demo.c — the demos as sections (al_demo_sections) against the demos as one text
 * (al_demo_run, itself checked byte for byte against PyTorch's output by tests/demo.test.mjs):
 * the sections' printed ranges follow one another and make up exactly that text, each title is
 * its header's line, the numbers are the section's output without the blank lines around it,
 * every example has code (02 and 03; 04's and 05's code is the tutorial's, not shipped) and a
 * panel (the closing banner neither), a seed replaces the
 * script's torch.manual_seed values in the code as it does in the run; and the size query,
 * the capacity checks and bad arguments. tests/demo-sections.test.mjs checks the code excerpts
 * against the scripts themselves.
 * Also the numbers the page's charts of chapters 04 and 05 draw (al_demo_ffn_curves,
 * al_demo_router, al_demo_expert_load, al_demo_block_stream, al_demo_shifted_labels) and of
 * chapter 10 (al_demo_sampler_stages, al_demo_temperatures, al_demo_draws, al_demo_eos) against
 * what PyTorch printed for every seed of tests/fixtures/demo/: each value, rounded as the script
 * rounds it, is the printed one. */
#include "attnlab.h"
#include "check.h"
#include "read_file.h"

#include <math.h>

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


/* ---- the charts' numbers against the fixtures ------------------------------------------- */

static const char *const SEEDS[] = {"default", "0", "1", "7", "1234", "2024", "99999"};

/* The text just after `needle`, searching from `from`; NULL (and a failed check) if absent. */
static const char *after(const char *from, const char *needle, const char *what) {
    const char *at = from ? strstr(from, needle) : NULL;
    CHECK(at != NULL, "%s: no \"%s\" in the fixture", what, needle);
    return at ? at + strlen(needle) : NULL;
}

/* Reads Python's list "[a, b, ...]" (or "[[a, b, ...]]") at s into v[n]; the count read. */
static int read_list(const char *s, double *v, int n) {
    if (!s) return 0;
    while (*s == '[') s++;
    int i = 0;
    for (; i < n; i++) {
        char *end;
        v[i] = strtod(s, &end);
        if (end == s) break;
        s = end;
        while (*s == ',' || *s == ' ') s++;
    }
    return i;
}

/* The fixture at path as a NUL-terminated string (free it), or NULL (and a failed check). */
static char *read_text(const char *path) {
    size_t size;
    char *text = (char *)read_file(path, &size);
    CHECK(text != NULL, "no fixture %s", path);
    if (!text) return NULL;
    text = realloc(text, size + 1);
    text[size] = '\0';
    return text;
}

/* Reads Python's list of booleans "[True, False, ...]" at s into v[n] (1 or 0); the count read. */
static int read_bools(const char *s, int *v, int n) {
    if (!s || *s != '[') return 0;
    s++;
    int i = 0;
    for (; i < n; i++) {
        if (!strncmp(s, "True", 4)) v[i] = 1, s += 4;
        else if (!strncmp(s, "False", 5)) v[i] = 0, s += 5;
        else break;
        while (*s == ',' || *s == ' ') s++;
    }
    return i;
}

/* v written with `decimals` decimals (as Python's round or "%.Nf" prints it) reads as printed. */
static int same(double v, int decimals, double printed) {
    char text[64];
    snprintf(text, sizeof text, "%.*f", decimals, v);
    return strtod(text, NULL) == printed;
}

static void check_ffn_figures(const char *seed_name, int64_t seed) {
    enum { T = AL_DEMO_MOE_TOKENS, E = AL_DEMO_MOE_EXPERTS, K = AL_DEMO_MOE_TOP_K };
    char path[128], what[64];
    snprintf(path, sizeof path, "tests/fixtures/demo/mlp-moe.zh.%s.txt", seed_name);
    snprintf(what, sizeof what, "mlp-moe seed %s", seed_name);
    char *text = read_text(path);
    if (!text) return;
    al_error err = {0};

    /* Example 2: the curves at -3 .. 3 (7 points: the whole numbers) */
    float curves[3 * 7];
    CHECK(al_demo_ffn_curves(curves, 7, 3 * 7, &err) == AL_OK, "%s: curves: %s", what, err.msg);
    double x[7], silu[7], relu[7];
    CHECK(read_list(after(text, "输入值:    ", what), x, 7) == 7 &&
          read_list(after(text, "SiLU(x):   ", what), silu, 7) == 7 &&
          read_list(after(text, "ReLU(x):   ", what), relu, 7) == 7, "%s: the curves' lines", what);
    for (int i = 0; i < 7; i++)
        CHECK(curves[i] == x[i] && same(curves[7 + i], 4, silu[i]) && same(curves[14 + i], 4, relu[i]),
              "%s: curve point %d: x %g silu %.6f relu %g, printed %g %g %g", what, i, curves[i], curves[7 + i],
              curves[14 + i], x[i], silu[i], relu[i]);

    /* Examples 3 and 6: the router's softmax (3 decimals), the chosen experts, the
     * renormalised weights of tokens 0 to 2 (4 decimals) */
    float router[3 * T * E];
    CHECK(al_demo_router(seed, router, 3 * T * E, &err) == AL_OK, "%s: router: %s", what, err.msg);
    const char *at = after(text, "（softmax 后）:\n", what);
    for (int t = 0; t < T && at; t++) {
        char label[32];
        snprintf(label, sizeof label, "token %d: ", t);
        double p[E], ids[K];
        at = after(at, label, what);
        CHECK(read_list(at, p, E) == E, "%s: token %d's scores", what, t);
        const char *chosen = at ? after(at, "→ 选中专家 ", what) : NULL;
        CHECK(read_list(chosen, ids, K) == K, "%s: token %d's experts", what, t);
        int count = 0;
        for (int e = 0; e < E; e++) {
            CHECK(same(router[t * E + e], 3, p[e]), "%s: token %d expert %d: %.6f, printed %.3f", what, t, e,
                  router[t * E + e], p[e]);
            const int picked = e == (int)ids[0] || e == (int)ids[1];
            CHECK(router[T * E + t * E + e] == (picked ? 1.0f : 0.0f), "%s: token %d expert %d chosen %g", what, t, e,
                  router[T * E + t * E + e]);
            CHECK(picked == (router[2 * T * E + t * E + e] > 0.0f), "%s: token %d expert %d weight %g", what, t, e,
                  router[2 * T * E + t * E + e]);
            count += picked;
        }
        CHECK(count == K, "%s: token %d: %d experts chosen", what, t, count);
    }
    at = after(text, "归一化后（除以权重和）:\n", what);
    for (int t = 0; t < 3 && at; t++) {
        double ids[K], w[K];
        at = after(at, "选中专家 ", what);
        CHECK(read_list(at, ids, K) == K && read_list(after(at, "权重 ", what), w, K) == K, "%s: token %d", what, t);
        for (int j = 0; j < K; j++)
            CHECK(same(router[2 * T * E + t * E + (int)ids[j]], 4, w[j]), "%s: token %d expert %d renormalised %.6f, printed %g",
                  what, t, (int)ids[j], router[2 * T * E + t * E + (int)ids[j]], w[j]);
    }

    /* Example 7: f_i and P_i (4 decimals), 1/num_experts, the loss (6 decimals) */
    float load[4 * E];
    CHECK(al_demo_expert_load(seed, load, 4 * E, &err) == AL_OK, "%s: load: %s", what, err.msg);
    double f[E], pm[E];
    CHECK(read_list(after(text, "f_i（load）: ", what), f, E) == E && read_list(after(text, "P_i: ", what), pm, E) == E,
          "%s: the load lines", what);
    const char *aux_at = after(after(text, "* aux_loss_coef\n", what), "\n  = ", what);
    const double aux = aux_at ? strtod(aux_at, NULL) : NAN;
    for (int e = 0; e < E; e++)
        CHECK(same(load[e], 4, f[e]) && same(load[E + e], 4, pm[e]) && same(load[2 * E + e], 2, 0.25) &&
              same(load[3 * E + e], 6, aux), "%s: expert %d: f %.6f P %.6f ideal %g aux %.8f, printed %g %g %g", what, e,
              load[e], load[E + e], load[2 * E + e], load[3 * E + e], f[e], pm[e], aux);
    free(text);
}

static void check_block_figures(const char *seed_name, int64_t seed) {
    enum { P = AL_DEMO_BLOCK_POINTS, S = AL_DEMO_LOSS_SEQ };
    char path[128], what[64];
    snprintf(path, sizeof path, "tests/fixtures/demo/block.zh.%s.txt", seed_name);
    snprintf(what, sizeof what, "block seed %s", seed_name);
    char *text = read_text(path);
    if (!text) return;
    al_error err = {0};

    /* Example 2: the input's norm and the norms after 6 pre-norm and 6 post-norm blocks */
    float stream[2 * P];
    CHECK(al_demo_block_stream(seed, stream, 2 * P, &err) == AL_OK, "%s: stream: %s", what, err.msg);
    const char *in = after(text, "输入 x 范数: ", what);
    const char *pre = after(text, "Pre-Norm 堆叠 6 层后输出范数: ", what);
    const char *post = after(text, "Post-Norm 堆叠 6 层后输出范数: ", what);
    if (in && pre && post) {
        const double x = strtod(in, NULL);
        CHECK(same(stream[0], 4, x) && same(stream[P], 4, x), "%s: depth 0: %.6f %.6f, printed %g", what, stream[0],
              stream[P], x);
        CHECK(same(stream[P - 1], 4, strtod(pre, NULL)) && same(stream[2 * P - 1], 4, strtod(post, NULL)),
              "%s: depth 6: %.6f %.6f, printed %s", what, stream[P - 1], stream[2 * P - 1], pre);
    }

    /* Example 6: input_ids, labels, the shift, each position's loss and their mean */
    float lab[5 * S];
    CHECK(al_demo_shifted_labels(seed, lab, 5 * S, &err) == AL_OK, "%s: labels: %s", what, err.msg);
    double ids[S], labels[S];
    CHECK(read_list(after(text, "input_ids: ", what), ids, S) == S && read_list(after(text, "labels:    ", what), labels, S) == S,
          "%s: the ids' lines", what);
    const char *loss_at = after(after(text, "示例 6", what), "loss: ", what);
    const double loss = loss_at ? strtod(loss_at, NULL) : NAN;
    double sum = 0.0;
    int counted = 0;
    for (int t = 0; t < S; t++) {
        const double target = t + 1 < S ? labels[t + 1] : -100.0;
        CHECK(lab[t] == ids[t] && lab[S + t] == labels[t] && lab[2 * S + t] == target,
              "%s: position %d: id %g label %g target %g, printed %g %g", what, t, lab[t], lab[S + t], lab[2 * S + t],
              ids[t], labels[t]);
        CHECK((target == -100.0) == (lab[3 * S + t] == 0.0f) && same(lab[4 * S + t], 4, loss),
              "%s: position %d: loss %g, mean %.6f, printed %g", what, t, lab[3 * S + t], lab[4 * S + t], loss);
        if (target != -100.0) sum += lab[3 * S + t], counted++;
    }
    CHECK(counted == S - 2 && fabs(sum / counted - loss) <= 5.001e-5, "%s: the positions' mean loss %.6f, printed %g", what,
          counted ? sum / counted : NAN, loss);
    free(text);
}

/* Chapter 10's charts against what the script printed: the stages, logits, order, cumulative
 * sums and marks of examples 1, 3, 4 and 5, the three temperatures, the eight draws and the
 * batch's tokens and EOS flags. */
static void check_generation_figures(const char *seed_name, int64_t seed) {
    enum { V = AL_DEMO_GEN_VOCAB, ROWS = AL_DEMO_GEN_STAGE_ROWS, T = AL_DEMO_GEN_TEMPS };
    enum { RAW = 0, PENALISED = 2, TOP_K = 3, TOP_P = 4, LOGITS = 5, PENAL_LOGITS = 6, ORDER = 7, CUMSUM = 8, MARK = 9 };
    char path[128], what[64];
    snprintf(path, sizeof path, "tests/fixtures/demo/generation.zh.%s.txt", seed_name);
    snprintf(what, sizeof what, "generation seed %s", seed_name);
    char *text = read_text(path);
    if (!text) return;
    al_error err = {0};
    float st[4][ROWS * V];
    const int examples[4] = {1, 3, 4, 5};
    for (int e = 0; e < 4; e++)
        CHECK(al_demo_sampler_stages(seed, examples[e], st[e], ROWS * V, &err) == AL_OK, "%s: stages of example %d: %s",
              what, examples[e], err.msg);
    const char *ex[8];
    for (int e = 0; e < 7; e++) {
        char label[32];
        snprintf(label, sizeof label, "示例 %d", e + 1);
        ex[e] = after(text, label, what);
    }
    if (!ex[0] || !ex[1] || !ex[2] || !ex[3] || !ex[4] || !ex[5] || !ex[6]) goto done;
    double v[V], w[V];

    /* Example 1: the logits (3 decimals), softmax (4), the greedy token marked */
    CHECK(read_list(after(ex[0], "logits: ", what), v, V) == V && read_list(after(ex[0], "softmax 后概率: ", what), w, V) == V,
          "%s: example 1's lists", what);
    const char *greedy_at = after(ex[0], "贪心解码选择的 token: ", what);
    const int greedy = greedy_at ? atoi(greedy_at) : -1;
    for (int i = 0; i < V; i++)
        CHECK(same(st[0][LOGITS * V + i], 3, v[i]) && same(st[0][RAW * V + i], 4, w[i]) &&
              st[0][MARK * V + i] == (i == greedy), "%s: example 1, id %d: logit %.6f p %.6f mark %g, printed %g %g greedy %d",
              what, i, st[0][LOGITS * V + i], st[0][RAW * V + i], st[0][MARK * V + i], v[i], w[i], greedy);

    /* Example 2: each temperature's probabilities, highest probability and entropy (4) */
    float temps[T * 4 * V];
    CHECK(al_demo_temperatures(seed, temps, T * 4 * V, &err) == AL_OK, "%s: temperatures: %s", what, err.msg);
    static const char *const NAMES[T] = {"temperature=0.5:", "temperature=1.0:", "temperature=2.0:"};
    static const double TS[T] = {0.5, 1.0, 2.0};
    for (int k = 0; k < T; k++) {
        const char *at = after(ex[1], NAMES[k], what);
        const char *top_at = after(at, "最高概率: ", what), *h_at = after(at, "熵: ", what);
        CHECK(read_list(after(at, "概率: ", what), v, V) == V && top_at && h_at, "%s: temperature %g's lines", what, TS[k]);
        if (!top_at || !h_at) continue;
        const float *row = temps + k * 4 * V;
        for (int i = 0; i < V; i++)
            CHECK(same(row[i], 4, v[i]) && row[V + i] == (float)TS[k] && same(row[2 * V + i], 4, strtod(top_at, NULL)) &&
                  same(row[3 * V + i], 4, strtod(h_at, NULL)), "%s: T %g id %d: p %.6f T %g top %.6f entropy %.6f, printed %g %s %s",
                  what, TS[k], i, row[i], row[V + i], row[2 * V + i], row[3 * V + i], v[i], top_at, h_at);
    }

    /* Example 3: the top-5 ids kept, their renormalised probabilities in id order (4) */
    double ids[V];
    CHECK(read_list(after(ex[2], "Top-5 的 token 索引: ", what), ids, 5) == 5 &&
          read_list(after(ex[2], "Top-5 重新归一化后概率: ", what), w, 5) == 5, "%s: example 3's lists", what);
    for (int i = 0, kept = 0; i < V; i++) {
        int in = 0;
        for (int j = 0; j < 5; j++) in |= (int)ids[j] == i;
        CHECK(st[1][MARK * V + i] == in && (st[1][TOP_K * V + i] > 0.0f) == in, "%s: example 3, id %d: mark %g p %g, in %d", what,
              i, st[1][MARK * V + i], st[1][TOP_K * V + i], in);
        if (in && kept < 5) CHECK(same(st[1][TOP_K * V + i], 4, w[kept++]), "%s: example 3, id %d: %.6f", what, i, st[1][TOP_K * V + i]);
    }

    /* Example 4: the sorted ids, the cumulative sums, the mask, top-p's distribution (4) */
    int mask[V];
    double cum[V];
    CHECK(read_list(after(ex[3], "排序后 token 索引: ", what), ids, V) == V && read_list(after(ex[3], "累计概率:   ", what), cum, V) == V &&
          read_bools(after(ex[3], "屏蔽掩码（True=移除）: ", what), mask, V) == V &&
          read_list(after(ex[3], "Top-P 采样后概率（原始顺序）: ", what), w, V) == V, "%s: example 4's lists", what);
    for (int i = 0; i < V; i++)
        CHECK(st[2][ORDER * V + i] == (float)ids[i] && same(st[2][CUMSUM * V + i], 4, cum[i]) &&
              st[2][MARK * V + (int)ids[i]] == !mask[i] && same(st[2][TOP_P * V + i], 4, w[i]),
              "%s: example 4, rank %d: id %g cum %.6f; id %d: mark %g top-p %.6f, printed %g %g %d %g", what, i,
              st[2][ORDER * V + i], st[2][CUMSUM * V + i], i, st[2][MARK * V + i], st[2][TOP_P * V + i], ids[i], cum[i], mask[i], w[i]);

    /* Example 5: the logits before and after the penalty (3), the seen ids, their
     * probabilities before and after (4) */
    CHECK(read_list(after(ex[4], "原始 logits: ", what), v, V) == V && read_list(after(ex[4], "惩罚后 logits: ", what), w, V) == V &&
          read_list(after(ex[4], "已出现过的 token: ", what), ids, 3) == 3, "%s: example 5's lists", what);
    for (int i = 0; i < V; i++) {
        const int seen = i == (int)ids[0] || i == (int)ids[1] || i == (int)ids[2];
        CHECK(same(st[3][LOGITS * V + i], 3, v[i]) && same(st[3][PENAL_LOGITS * V + i], 3, w[i]) && st[3][MARK * V + i] == seen,
              "%s: example 5, id %d: logits %.6f → %.6f mark %g, printed %g → %g", what, i, st[3][LOGITS * V + i],
              st[3][PENAL_LOGITS * V + i], st[3][MARK * V + i], v[i], w[i]);
    }
    const char *probs_at = after(ex[4], "惩罚前后已出现 token 的概率:\n", what);
    for (int j = 0; j < 3 && probs_at; j++) {
        char label[32];
        snprintf(label, sizeof label, "token %d: ", (int)ids[j]);
        const char *at = after(probs_at, label, what);
        const char *arrow = at ? strstr(at, "→ ") : NULL;
        if (!at || !arrow) continue;
        const int id = (int)ids[j];
        CHECK(same(st[3][RAW * V + id], 4, strtod(at, NULL)) && same(st[3][PENALISED * V + id], 4, strtod(arrow + strlen("→ "), NULL)),
              "%s: example 5, token %d: %.6f → %.6f, printed %.20s", what, id, st[3][RAW * V + id], st[3][PENALISED * V + id], at);
    }

    /* Example 6: each step's candidates, token and its probability */
    enum { S = AL_DEMO_GEN_DRAWS };
    float draws[2 * S * V];
    CHECK(al_demo_draws(seed, draws, 2 * S * V, &err) == AL_OK, "%s: draws: %s", what, err.msg);
    for (int s = 0; s < S; s++) {
        char label[32];
        snprintf(label, sizeof label, "步骤 %d: ", s + 1);
        int candidates = -1, token = -1;
        double p = NAN;
        const char *at = after(ex[5], label, what);
        CHECK(at && sscanf(at, "候选数=%d, 选中 token=%d, 其概率=%lf", &candidates, &token, &p) == 3, "%s: step %d's line", what, s + 1);
        int n = 0, marked = -1;
        for (int i = 0; i < V; i++) {
            n += draws[s * V + i] > 0.0f;
            if (draws[S * V + s * V + i] == 1.0f) marked = marked < 0 ? i : V;
        }
        CHECK(n == candidates && marked == token && token >= 0 && token < V && same(draws[s * V + token], 4, p),
              "%s: step %d: %d candidates, token %d, p %.6f; printed %d %d %g", what, s + 1, n, marked,
              marked >= 0 && marked < V ? draws[s * V + marked] : NAN, candidates, token, p);
    }

    /* Example 7: the batch's tokens and flags at each step, -1 after the last */
    enum { B = AL_DEMO_GEN_BATCH, N = AL_DEMO_GEN_MAX_NEW };
    float eos[2 * B * N];
    CHECK(al_demo_eos(seed, eos, 2 * B * N, &err) == AL_OK, "%s: eos: %s", what, err.msg);
    for (int s = 0; s < N; s++) {
        char label[48];
        snprintf(label, sizeof label, "步骤 %d: next_tokens=", s + 1);
        const char *at = strstr(ex[6], label);
        double next[B];
        int finished[B];
        if (!at) { /* the loop had stopped */
            for (int b = 0; b < B; b++)
                CHECK(eos[b * N + s] == -1.0f && eos[B * N + b * N + s] == -1.0f, "%s: sequence %d at step %d not run: %g %g", what, b,
                      s + 1, eos[b * N + s], eos[B * N + b * N + s]);
            continue;
        }
        CHECK(read_list(at + strlen(label), next, B) == B && read_bools(after(at, "finished=", what), finished, B) == B,
              "%s: step %d's lists", what, s + 1);
        for (int b = 0; b < B; b++)
            CHECK(eos[b * N + s] == (float)next[b] && eos[B * N + b * N + s] == (float)finished[b],
                  "%s: sequence %d at step %d: token %g finished %g, printed %g %d", what, b, s + 1, eos[b * N + s],
                  eos[B * N + b * N + s], next[b], finished[b]);
    }
done:
    free(text);
}

/* Bad arguments to the charts' functions: a refused count, no buffer, too small a buffer. */
static void check_figure_refusals(void) {
    al_error err = {0};
    float out[40];
    CHECK(al_demo_ffn_curves(out, 1, 40, &err) == AL_ERR_ARG && strstr(err.msg, "n 1"), "curves of 1 point: %s", err.msg);
    CHECK(al_demo_ffn_curves(out, AL_DEMO_CURVE_MAX + 1, 40, &err) == AL_ERR_ARG, "too many curve points");
    CHECK(al_demo_ffn_curves(out, 14, 41, &err) == AL_ERR_CAPACITY, "curves: a short buffer accepted");
    CHECK(al_demo_ffn_curves(NULL, 7, 21, &err) == AL_ERR_ARG, "curves: NULL accepted");
    CHECK(al_demo_router(-1, out, 40, &err) == AL_ERR_CAPACITY && strstr(err.msg, "72"), "router: %s", err.msg);
    CHECK(al_demo_expert_load(-1, out, 15, &err) == AL_ERR_CAPACITY, "load: a short buffer accepted");
    CHECK(al_demo_block_stream(-1, NULL, 14, &err) == AL_ERR_ARG, "stream: NULL accepted");
    CHECK(al_demo_shifted_labels(-1, out, 24, &err) == AL_ERR_CAPACITY, "labels: a short buffer accepted");
    /* the curve's points run from -3 to 3 evenly, ends included */
    CHECK(al_demo_sampler_stages(-1, 2, out, 40, &err) == AL_ERR_ARG && strstr(err.msg, "example 2"), "stages of example 2: %s",
          err.msg);
    CHECK(al_demo_sampler_stages(-1, 1, out, 40, &err) == AL_ERR_CAPACITY && strstr(err.msg, "120"), "stages: %s", err.msg);
    CHECK(al_demo_temperatures(-1, NULL, 144, &err) == AL_ERR_ARG, "temperatures: NULL accepted");
    CHECK(al_demo_draws(-1, out, 40, &err) == AL_ERR_CAPACITY, "draws: a short buffer accepted");
    CHECK(al_demo_eos(-1, out, 40, &err) == AL_ERR_CAPACITY && strstr(err.msg, "48"), "eos: %s", err.msg);
    CHECK(al_demo_ffn_curves(out, 13, 39, &err) == AL_OK && out[0] == -3.0f && out[12] == 3.0f && out[6] == 0.0f &&
          out[1] == -2.5f, "curves of 13 points: %g %g %g %g", out[0], out[1], out[6], out[12]);
}

int main(void) {
    const al_demo demos[] = {AL_DEMO_BASIC, AL_DEMO_ATTENTION, AL_DEMO_MLP_MOE, AL_DEMO_BLOCK, AL_DEMO_GENERATION};
    for (size_t d = 0; d < sizeof demos / sizeof demos[0]; d++)
        for (int lang = AL_LANG_ZH; lang <= AL_LANG_EN; lang++) {
            check_demo(demos[d], (al_lang)lang, -1);
            check_demo(demos[d], (al_lang)lang, 7);
        }
    for (size_t i = 0; i < sizeof SEEDS / sizeof *SEEDS; i++) {
        const int64_t seed = strcmp(SEEDS[i], "default") ? strtoll(SEEDS[i], NULL, 10) : -1;
        check_ffn_figures(SEEDS[i], seed);
        check_block_figures(SEEDS[i], seed);
        check_generation_figures(SEEDS[i], seed);
    }
    check_figure_refusals();

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
