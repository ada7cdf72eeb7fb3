/* test_model_lab.c — the page's model lab on stories260K: what it keeps for the charts is what
 * the model computes (every layer's attention after a prompt and greedy steps equals one
 * uncached pass of a separately loaded model over the same ids, bit for bit; its greedy ids
 * are the argmax of that pass's logits), charts off and on again give the same stores, the
 * next-token ids hold the chosen one, the KV rows follow the formula, and bad input is refused
 * with a message while the lab keeps what it had. The text and the numbers against the CLI
 * and the PyTorch reference: tests/model-lab.test.mjs. */
#include "attnlab.h"
#include "check.h"
#include "read_file.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { STEPS = 12 };

static al_model_lab *make(const uint8_t *model, size_t msize, const uint8_t *tok, size_t tsize, int64_t context) {
    al_error err = {0};
    al_model_lab *lab = NULL;
    CHECK(al_model_lab_create(model, msize, AL_MODEL_FILE_UNKNOWN, NULL, 0, tok, tsize, context, &lab, &err) == AL_OK, "create: %s", err.msg);
    return lab;
}

/* The lab's attention and greedy ids against one uncached pass of another copy of the model. */
static void test_against_model(al_model_lab *lab, const uint8_t *model, size_t msize) {
    al_error err = {0};
    const char *prompt = "Once upon a time";
    CHECK(al_model_lab_prompt(lab, prompt, strlen(prompt), 0, &err) > 1, "prompt: %s", err.msg);
    al_sampler_params greedy = al_sampler_params_default();
    greedy.temperature = 0.0;
    for (int i = 0; i < STEPS; i++) CHECK(al_model_lab_step(lab, &greedy, &err) >= 0, "step %d: %s", i, err.msg);
    const int64_t n = al_model_lab_len(lab), np = al_model_lab_prompt_len(lab);
    CHECK(n == np + STEPS, "len %lld after %d steps", (long long)n, STEPS);
    int32_t ids[512];
    CHECK(al_model_lab_ids(lab, ids, 512) == n, "ids");

    al_model *m = NULL;
    CHECK(al_model_from_llama2c(model, msize, n, n, &m, &err) == AL_OK, "model: %s", err.msg);
    if (!m) return;
    const al_model_hparams *hp = al_model_get_hparams(m);
    const int64_t L = hp->n_layers, H = hp->n_heads, V = hp->vocab;
    float *logits = malloc((size_t)(n * V) * sizeof(float)), *attn = malloc((size_t)(L * H * n * n) * sizeof(float));
    float *mine = malloc((size_t)(n * n) * sizeof(float));
    CHECK(al_model_forward(m, ids, n, logits, n, n * V, attn, L * H * n * n, &err) == AL_OK, "forward: %s", err.msg);
    for (int64_t i = np; i < n; i++)
        CHECK(al_sample_greedy(logits + (i - 1) * V, V) == ids[i], "step %lld: not the argmax", (long long)(i - np));
    int same = 1;
    for (int64_t l = 0; l < L; l++)
        for (int64_t h = 0; h < H; h++) {
            CHECK(al_model_lab_attention(lab, l, h, mine, n * n, &err) == AL_OK, "attention: %s", err.msg);
            same &= !memcmp(mine, attn + (l * H + h) * n * n, (size_t)(n * n) * sizeof(float));
        }
    CHECK(same, "the lab's attention differs from one uncached pass");

    /* Charts off for more steps, then on: the stores equal those of stepping with them on. */
    const int64_t before = n;
    CHECK(al_model_lab_set_charts(lab, 0, &err) == AL_OK, "charts off");
    for (int i = 0; i < 4; i++) CHECK(al_model_lab_step(lab, &greedy, &err) >= 0, "step: %s", err.msg);
    float *thumbs_off = malloc((size_t)(L * H * 16 * 16) * sizeof(float));
    CHECK(al_model_lab_set_charts(lab, 1, &err) == AL_OK, "charts on: %s", err.msg);
    CHECK(al_model_lab_thumbs(lab, 16, thumbs_off, L * H * 16 * 16, &err) == AL_OK, "thumbs: %s", err.msg);
    const int64_t n2 = al_model_lab_len(lab);
    float *row_last = malloc((size_t)(n2 * n2) * sizeof(float));
    CHECK(al_model_lab_attention(lab, L - 1, H - 1, row_last, n2 * n2, &err) == AL_OK, "attention: %s", err.msg);
    double sum = 0.0;
    for (int64_t k = 0; k < n2; k++) sum += row_last[(n2 - 1) * n2 + k];
    CHECK(n2 == before + 4 && sum > 0.999 && sum < 1.001, "after charts on: len %lld, last row sums to %g",
          (long long)n2, sum);

    /* The mask: query q sees keys 0..q. */
    float *mask = malloc((size_t)(n2 * n2) * sizeof(float));
    CHECK(al_model_lab_mask(lab, mask, n2 * n2, &err) == AL_OK, "mask: %s", err.msg);
    int causal = 1;
    for (int64_t q = 0; q < n2; q++)
        for (int64_t k = 0; k < n2; k++) causal &= k <= q ? mask[q * n2 + k] == 0.0f : mask[q * n2 + k] == -INFINITY;
    CHECK(causal, "the mask is not causal");
    free(mask);

    /* The next-token ids hold the chosen one; KV rows follow 2 · layers · len · kv_heads · head_dim · 4. */
    int32_t top[8];
    const int64_t k = al_model_lab_top_ids(lab, 8, top, &err);
    int has = 0;
    for (int64_t i = 0; i < k; i++) has |= top[i] == al_model_lab_chosen(lab);
    CHECK(k == 8 && has, "top ids miss the chosen token");
    al_kv_growth_row rows[64];
    const int64_t nrows = al_model_lab_kv(lab, rows, 64, &err);
    CHECK(nrows == n2 - np + 1, "kv rows %lld", (long long)nrows);
    for (int64_t i = 0; i < nrows && i < 64; i++)
        CHECK(rows[i].len == np + i && rows[i].bytes == 2 * L * rows[i].len * hp->n_kv_heads * hp->head_dim * 4 &&
                  rows[i].bytes_mqa == 2 * L * rows[i].len * hp->head_dim * 4 &&
                  (i == 0 || rows[i].flops_cached < rows[i].flops_uncached),
              "kv row %lld", (long long)i);
    free(logits), free(attn), free(mine), free(thumbs_off), free(row_last);
    al_model_free(m);
}

/* Steps taken with the charts off, then the charts on: the stages of the last step are those
 * of stepping with them on (the greedy step's stages are drawn again from the same logits). */
static void test_charts_off_stages(const uint8_t *model, size_t msize, const uint8_t *tok, size_t tsize) {
    al_model_lab *on = make(model, msize, tok, tsize, 64), *off = make(model, msize, tok, tsize, 64);
    if (!on || !off) return;
    al_error err = {0};
    al_sampler_params greedy = al_sampler_params_default();
    greedy.temperature = 0.0;
    greedy.repetition_penalty = 1.2;
    CHECK(al_model_lab_prompt(on, "The cat", 7, 0, &err) > 0 && al_model_lab_prompt(off, "The cat", 7, 0, &err) > 0, "prompt");
    CHECK(al_model_lab_set_charts(off, 0, &err) == AL_OK, "charts off");
    for (int i = 0; i < 6; i++)
        CHECK(al_model_lab_step(on, &greedy, &err) == al_model_lab_step(off, &greedy, &err), "step %d differs", i);
    CHECK(al_model_lab_set_charts(off, 1, &err) == AL_OK, "charts on: %s", err.msg);
    const int64_t V = al_model_lab_hparams(on)->vocab;
    float *a = malloc((size_t)(2 * AL_SAMPLER_STAGES * V) * sizeof(float)), *b = a + AL_SAMPLER_STAGES * V;
    CHECK(al_model_lab_stages(on, a, AL_SAMPLER_STAGES * V, &err) == AL_OK &&
              al_model_lab_stages(off, b, AL_SAMPLER_STAGES * V, &err) == AL_OK,
          "stages: %s", err.msg);
    CHECK(!memcmp(a, b, (size_t)(AL_SAMPLER_STAGES * V) * sizeof(float)), "the stages differ after charts off and on");
    double raw = 0.0;
    for (int64_t i = 0; i < V; i++) raw += a[i];
    CHECK(raw > 0.999 && raw < 1.001, "the raw stage sums to %g", raw);
    free(a);
    al_model_lab_free(on), al_model_lab_free(off);
}

/* The pending stages: the distributions the next step draws from, computed without a draw. Asked
 * for with other settings between the steps, they change no token (no random number is used),
 * asked for with the step's settings they are the stages the step then draws from, bit for bit;
 * at temperature 0 one-hot on the token the greedy step chooses; nothing once no step would draw. */
static void test_pending(const uint8_t *model, size_t msize, const uint8_t *tok, size_t tsize) {
    al_model_lab *a = make(model, msize, tok, tsize, 24), *b = make(model, msize, tok, tsize, 24);
    if (!a || !b) return;
    al_error err = {0};
    const int64_t V = al_model_lab_hparams(a)->vocab, S = AL_SAMPLER_STAGES;
    float *pending = malloc((size_t)(2 * S * V) * sizeof(float)), *drawn = pending + S * V;
    int32_t top[12];
    const al_sampler_params p = {0.9, 20, 0.8, 1.3}, other = {1.7, 5, 0.5, 1.0}, greedy = {0.0, 50, 0.85, 1.2};
    CHECK(al_model_lab_prompt(a, "Lily saw a", 10, 7, &err) > 0 && al_model_lab_prompt(b, "Lily saw a", 10, 7, &err) > 0,
          "prompt: %s", err.msg);
    for (int i = 0; i < 8; i++) {
        CHECK(al_model_lab_pending(a, &other, pending, S * V, top, 12, &err) == 12, "pending: %s", err.msg);
        CHECK(al_model_lab_pending(a, &greedy, pending, S * V, top, 12, &err) == 12, "pending greedy: %s", err.msg);
        const int64_t n = al_model_lab_len(a);
        const int64_t shown = al_model_lab_pending(a, &p, pending, S * V, top, 12, &err);
        CHECK(shown == 12 && al_model_lab_len(a) == n, "pending: %lld ids, %lld tokens (want 12, %lld)", (long long)shown,
              (long long)al_model_lab_len(a), (long long)n);
        const int64_t got = al_model_lab_step(a, &p, &err), want = al_model_lab_step(b, &p, &err);
        CHECK(got == want && got >= 0, "step %d: %lld after asking for the pending stages, %lld without", i, (long long)got,
              (long long)want);
        CHECK(al_model_lab_stages(a, drawn, S * V, &err) == AL_OK, "stages: %s", err.msg);
        CHECK(!memcmp(pending, drawn, (size_t)(S * V) * sizeof(float)), "step %d: the pending stages are not those drawn", i);
    }
    CHECK(al_model_lab_pending(a, &greedy, pending, S * V, top, 12, &err) == 12, "pending greedy: %s", err.msg);
    const int64_t best = al_model_lab_step(a, &greedy, &err);
    for (int64_t s = 1; best >= 0 && s < S; s++) {
        double sum = 0.0;
        for (int64_t i = 0; i < V; i++) sum += pending[s * V + i];
        CHECK(pending[s * V + best] == 1.0f && sum == 1.0, "greedy stage %lld: %g on the greedy choice %lld, sum %g",
              (long long)s, pending[s * V + best], (long long)best, sum);
    }
    /* and the greedy draw's stages, once made, are the ones pending showed: one-hot, not as at
     * temperature 1 */
    CHECK(al_model_lab_stages(a, drawn, S * V, &err) == AL_OK, "stages: %s", err.msg);
    CHECK(best < 0 || !memcmp(pending, drawn, (size_t)(S * V) * sizeof(float)), "the greedy draw's stages are not those pending showed");
    while (al_model_lab_finish(a) == AL_GEN_GOING) al_model_lab_step(a, &greedy, &err);
    pending[0] = 1.0f;
    CHECK(al_model_lab_pending(a, &p, pending, S * V, top, 12, &err) == 0 && pending[0] == 0.0f,
          "pending at the end: not 0 ids, stages not cleared");
    CHECK(al_model_lab_pending(a, &p, pending, S * V - 1, top, 12, &err) == -1 && err.status == AL_ERR_CAPACITY,
          "short buffer: %s", err.msg);
    free(pending);
    al_model_lab_free(a), al_model_lab_free(b);
}

/* The role ranking: every head once, scores never rising; the ideal patterns are causal attention. */
static void test_roles(const uint8_t *model, size_t msize, const uint8_t *tok, size_t tsize) {
    al_model_lab *lab = make(model, msize, tok, tsize, 0);
    if (!lab) return;
    al_error err = {0};
    const al_model_hparams *hp = al_model_lab_hparams(lab);
    const int64_t LH = hp->n_layers * hp->n_heads;
    float *roles = malloc((size_t)(LH * AL_LAB_ROLES) * sizeof(float));
    int32_t *heads = malloc((size_t)LH * sizeof(int32_t));
    CHECK(al_model_lab_roles(lab, roles, LH * AL_LAB_ROLES, &err) == AL_OK, "roles: %s", err.msg);
    for (int r = 0; r < AL_LAB_ROLES; r++) {
        CHECK(al_model_lab_role_ranking(lab, (al_lab_role)r, heads, LH, &err) == LH, "ranking: %s", err.msg);
        int64_t seen = 0;
        for (int64_t i = 0; i < LH; i++) {
            seen += heads[i] >= 0 && heads[i] < LH;
            if (i) CHECK(roles[heads[i] * AL_LAB_ROLES + r] <= roles[heads[i - 1] * AL_LAB_ROLES + r], "role %d: rank %lld rises", r, (long long)i);
            for (int64_t j = 0; j < i; j++) CHECK(heads[j] != heads[i], "role %d: head %d twice", r, heads[i]);
        }
        CHECK(seen == LH, "role %d: %lld heads in range", r, (long long)seen);
    }
    CHECK(al_model_lab_role_ranking(lab, AL_LAB_ROLES, heads, LH, &err) == -1 && strstr(err.msg, "role 4"), "bad role: %s", err.msg);
    CHECK(al_model_lab_role_ranking(lab, AL_LAB_ROLE_FIRST, heads, LH - 1, &err) == -1, "short: %s", err.msg);
    /* the ideal patterns: causal rows summing to 1 */
    const int64_t T = al_lab_role_ideal_size(4);
    float ideal[81];
    CHECK(T == 9 && al_lab_role_ideal_size(1) == -1 && al_lab_role_ideal_size(25) == -1, "ideal sizes");
    for (int r = 0; r < AL_LAB_ROLES; r++) {
        CHECK(al_lab_role_ideal((al_lab_role)r, 4, ideal, 81, &err) == AL_OK, "ideal %d: %s", r, err.msg);
        for (int64_t q = 0; q < T; q++) {
            double sum = 0.0;
            for (int64_t k = 0; k < T; k++) {
                sum += ideal[q * T + k];
                CHECK(k <= q || ideal[q * T + k] == 0.0f, "ideal %d: key past the query", r);
            }
            CHECK(sum > 0.9999 && sum < 1.0001, "ideal %d row %lld sums to %g", r, (long long)q, sum);
        }
    }
    CHECK(al_lab_role_ideal(AL_LAB_ROLE_INDUCTION, 4, ideal, 80, &err) == AL_ERR_CAPACITY, "ideal short: %s", err.msg);
    free(roles), free(heads);
    al_model_lab_free(lab);
}

/* Refusals, each with a message; the lab keeps its tokens. */
static void test_refusals(const uint8_t *model, size_t msize, const uint8_t *tok, size_t tsize) {
    al_error err = {0};
    al_model_lab *lab = NULL;
    CHECK(al_model_lab_create(model, msize - 4, AL_MODEL_FILE_UNKNOWN, NULL, 0, tok, tsize, 0, &lab, &err) != AL_OK && !lab &&
              strstr(err.msg, "bytes"), "truncated model: %s", err.msg);
    CHECK(al_model_lab_create(model, msize, AL_MODEL_FILE_UNKNOWN, NULL, 0, NULL, 0, 0, &lab, &err) == AL_ERR_MISSING && !lab &&
              strstr(err.msg, "tokenizer"), "no tokenizer: %s", err.msg);
    CHECK(al_model_lab_create(model, msize, AL_MODEL_FILE_UNKNOWN, NULL, 0, tok, tsize - 3, 0, &lab, &err) != AL_OK && !lab,
          "truncated tokenizer: %s", err.msg);
    CHECK(al_model_lab_create(model, msize, AL_MODEL_FILE_UNKNOWN, NULL, 0, tok, tsize, AL_LAB_MAX_CONTEXT + 1, &lab, &err) == AL_ERR_ARG,
          "context too long: %s", err.msg);
    lab = make(model, msize, tok, tsize, 8);
    if (!lab) return;
    CHECK(al_model_lab_context(lab) == 8, "context %lld", (long long)al_model_lab_context(lab));
    al_sampler_params greedy = al_sampler_params_default();
    greedy.temperature = 0.0;
    CHECK(al_model_lab_step(lab, &greedy, &err) == -1 && strstr(err.msg, "prompt first"), "step first: %s", err.msg);
    CHECK(al_model_lab_prompt(lab, "Once", 4, 0, &err) > 0, "prompt: %s", err.msg);
    const int64_t n = al_model_lab_len(lab);
    CHECK(al_model_lab_prompt(lab, "Once upon a time there was a big dog", 36, 0, &err) == -1 &&
              strstr(err.msg, "keeps 8") && al_model_lab_len(lab) == n, "long prompt: %s", err.msg);
    const int32_t bad[2] = {1, 9999};
    CHECK(al_model_lab_prompt_ids(lab, bad, 2, 0, &err) == -1 && strstr(err.msg, "outside the vocabulary") &&
              al_model_lab_len(lab) == n, "bad id: %s", err.msg);
    const int32_t none[1] = {0};
    CHECK(al_model_lab_prompt_ids(lab, none, 0, 0, &err) == -1 && strstr(err.msg, "no tokens"), "empty: %s", err.msg);
    al_sampler_params wrong = greedy;
    wrong.top_p = 0.0;
    CHECK(al_model_lab_step(lab, &wrong, &err) == -1 && strstr(err.msg, "top_p") && al_model_lab_len(lab) == n,
          "bad top-p: %s", err.msg);
    while (al_model_lab_len(lab) < 8 && !al_model_lab_finished(lab)) al_model_lab_step(lab, &greedy, &err);
    CHECK(al_model_lab_step(lab, &greedy, &err) == -1 && (strstr(err.msg, "is full") || strstr(err.msg, "ended")),
          "full: %s", err.msg);
    float small[4];
    CHECK(al_model_lab_attention(lab, 0, 0, small, 4, &err) == AL_ERR_CAPACITY, "small buffer: %s", err.msg);
    CHECK(al_model_lab_attention(lab, 99, 0, small, 4, &err) == AL_ERR_ARG && strstr(err.msg, "layer 99"), "layer");
    /* a token or an id out of range: the message names it and what there is */
    const int64_t len = al_model_lab_len(lab);
    uint8_t bytes[4];
    CHECK(al_model_lab_token_text(lab, len, NULL, 0, &err) == -1 && strstr(err.msg, "no token") &&
              strstr(err.msg, "the text has"), "token text past the end: %s", err.msg);
    CHECK(al_model_lab_token_bytes(lab, -1, bytes, 4, &err) == -1 && strstr(err.msg, "no token -1"), "token bytes: %s",
          err.msg);
    CHECK(al_model_lab_piece(lab, -5, bytes, 4, &err) == -1 && strstr(err.msg, "no token id -5 in the vocabulary of"),
          "piece: %s", err.msg);
    int32_t ids[2];
    float w[2];
    CHECK(al_model_lab_routing(lab, 0, ids, w, 2, &err) == -1 && strstr(err.msg, "no experts"), "routing: %s", err.msg);
    al_model_lab_free(lab);
}

/* The experiments on the lab: the lens, the attribution and a patch leave the text to come as
 * it would be; heads switched off after the prompt give the charts and the tokens of heads off
 * from the start; a bad head is refused, the ablation kept. */
static void test_experiments(const uint8_t *model, size_t msize, const uint8_t *tok, size_t tsize) {
    al_model_lab *a = make(model, msize, tok, tsize, 48), *b = make(model, msize, tok, tsize, 48);
    al_model_lab *c = make(model, msize, tok, tsize, 48);
    if (!a || !b || !c) return;
    al_error err = {0};
    const al_model_hparams *hp = al_model_lab_hparams(a);
    const int64_t L = hp->n_layers, H = hp->n_heads;
    const al_sampler_params p = {0.9, 20, 0.8, 1.1};
    const int32_t off[] = {1, 2, 2, 5, 3, 0};
    CHECK(al_model_lab_set_ablation(c, off, 3, &err) == AL_OK, "ablate before the prompt: %s", err.msg);
    for (int k = 0; k < 3; k++) {
        al_model_lab *lab = k == 0 ? a : k == 1 ? b : c;
        CHECK(al_model_lab_prompt(lab, "Lily saw a", 10, 3, &err) > 0, "prompt: %s", err.msg);
        for (int i = 0; i < 4; i++) CHECK(al_model_lab_step(lab, &p, &err) >= 0, "step: %s", err.msg);
    }
    /* 1. a: the lens, the attribution and a patch, then the same steps as b. */
    const int64_t n = al_model_lab_len(a);
    int32_t *top = malloc((size_t)((L + 1) * n) * sizeof(int32_t));
    float *prob = malloc((size_t)((L + 1) * n) * sizeof(float));
    float *parts = malloc((size_t)(al_model_lab_dla_rows(a) * n) * sizeof(float));
    CHECK(al_model_lab_lens(a, top, prob, (L + 1) * n, &err) == AL_OK, "lens: %s", err.msg);
    CHECK(al_model_lab_dla(a, 261, parts, al_model_lab_dla_rows(a) * n, &err) == AL_OK, "dla: %s", err.msg);
    /*    read off the parts a's prompt and steps left, they are what a run of their own gives: d
     *    took the same steps with the charts off, so it keeps no parts and runs the model */
    al_model_lab *d = make(model, msize, tok, tsize, 48);
    if (d) {
        int32_t *top_d = malloc((size_t)((L + 1) * n) * sizeof(int32_t));
        float *prob_d = malloc((size_t)((L + 1) * n) * sizeof(float));
        float *parts_d = malloc((size_t)(al_model_lab_dla_rows(a) * n) * sizeof(float));
        CHECK(al_model_lab_set_charts(d, 0, &err) == AL_OK && al_model_lab_prompt(d, "Lily saw a", 10, 3, &err) > 0,
              "prompt, no charts: %s", err.msg);
        for (int i = 0; i < 4; i++) CHECK(al_model_lab_step(d, &p, &err) >= 0, "step: %s", err.msg);
        CHECK(al_model_lab_len(d) == n && al_model_lab_lens(d, top_d, prob_d, (L + 1) * n, &err) == AL_OK &&
                  al_model_lab_dla(d, 261, parts_d, al_model_lab_dla_rows(a) * n, &err) == AL_OK,
              "lens, attribution with no charts: %s", err.msg);
        CHECK(!memcmp(top, top_d, (size_t)((L + 1) * n) * sizeof(int32_t)) &&
                  !memcmp(prob, prob_d, (size_t)((L + 1) * n) * sizeof(float)),
              "the lens read off the parts kept is not that of a run of its own");
        CHECK(!memcmp(parts, parts_d, (size_t)(al_model_lab_dla_rows(a) * n) * sizeof(float)),
              "the attribution read off the parts kept is not that of a run of its own");
        free(top_d), free(prob_d), free(parts_d);
        al_model_lab_free(d);
    }
    int32_t clean[8], corrupt[8];
    const int64_t k1 = al_model_lab_encode(a, "Tim and Ben", 11, clean, 8, &err);
    const int64_t k2 = al_model_lab_encode(a, "Lily and Ben", 12, corrupt, 8, &err);
    CHECK(k1 == 5 && k2 == 5 && al_model_lab_encode(a, "Tim and Ben", 11, NULL, 0, &err) == 5, "encode: %lld, %lld",
          (long long)k1, (long long)k2);
    float map[8 * 5 + 5 * 5 + 2];
    CHECK(al_model_lab_patch_size(a, 5) == L * H + L * 5 + 2, "patch size");
    CHECK(al_model_lab_patch(a, clean, corrupt, 5, 261, 300, map, L * H + L * 5 + 2, &err) == AL_OK, "patch: %s", err.msg);
    for (int i = 0; i < 6; i++) {
        const int64_t x = al_model_lab_step(a, &p, &err), y = al_model_lab_step(b, &p, &err);
        CHECK(x == y && x >= 0, "step %d after the experiments: %lld, without them %lld", i, (long long)x, (long long)y);
    }
    /* 2. b: heads off now, as c had them from the start. */
    CHECK(al_model_lab_set_ablation(b, off, 3, &err) == AL_OK, "ablate after the prompt: %s", err.msg);
    int32_t back[6];
    CHECK(al_model_lab_ablation(b, back, 3) == 3 && back[0] == 1 && back[1] == 2, "the heads off read back");
    const int64_t nb = al_model_lab_len(b), nc = al_model_lab_len(c);
    float *att_b = malloc((size_t)(nb * nb) * sizeof(float)), *att_c = malloc((size_t)(nc * nc) * sizeof(float));
    CHECK(al_model_lab_attention(c, 3, 1, att_c, nc * nc, &err) == AL_OK, "attention: %s", err.msg);
    /* c's tokens through b: the same ids, so the same rows where they are the same tokens */
    CHECK(al_model_lab_attention(b, 3, 1, att_b, nb * nb, &err) == AL_OK, "attention: %s", err.msg);
    const int64_t na = al_model_lab_len(a), prompt = al_model_lab_prompt_len(b);
    float *att_a = malloc((size_t)(na * na) * sizeof(float));
    CHECK(al_model_lab_attention(a, 3, 1, att_a, na * na, &err) == AL_OK, "attention: %s", err.msg);
    int same_rows = 1, moved = 0;
    for (int64_t q = 0; q < prompt; q++)
        for (int64_t t = 0; t <= q; t++)
            same_rows &= att_b[q * nb + t] == att_c[q * nc + t], moved |= att_b[q * nb + t] != att_a[q * na + t];
    CHECK(prompt > 2 && same_rows && moved,
          "heads switched off after the prompt: the prompt's attention is not that of heads off from the start");
    free(att_a);
    const int32_t bad[] = {0, 8};
    CHECK(al_model_lab_set_ablation(b, bad, 1, &err) == AL_ERR_ARG && strstr(err.msg, "head 8") &&
          al_model_lab_ablation(b, NULL, 0) == 3, "head 8: %s", err.msg);
    CHECK(al_model_lab_set_ablation(b, NULL, 0, &err) == AL_OK && al_model_lab_ablation(b, NULL, 0) == 0, "clear: %s",
          err.msg);
    free(top), free(prob), free(parts), free(att_b), free(att_c);
    al_model_lab_free(a), al_model_lab_free(b), al_model_lab_free(c);
}

/* What heads switched off change: the draws ahead are the lab's own next steps (the lab's text
 * unchanged by them), with every head on those of a lab with none off; the prompt's loss with
 * every head on is the plain lab's; the text of ids is the chips' text; a token named by its
 * piece or its text; a patch map's share of the metric. */
static void test_ahead(const uint8_t *model, size_t msize, const uint8_t *tok, size_t tsize) {
    al_model_lab *a = make(model, msize, tok, tsize, 48), *b = make(model, msize, tok, tsize, 48);
    if (!a || !b) return;
    al_error err = {0};
    const int64_t V = al_model_lab_hparams(a)->vocab;
    const al_sampler_params p = {0.9, 20, 0.8, 1.1};
    const int32_t off[] = {2, 6, 1, 3};
    float *pa = malloc((size_t)V * sizeof(float)), *pb = malloc((size_t)V * sizeof(float));
    int32_t ahead[12], other[12];
    for (int k = 0; k < 2; k++) {
        al_model_lab *lab = k ? b : a;
        CHECK(al_model_lab_prompt(lab, "Lily saw a", 10, 5, &err) > 0, "prompt: %s", err.msg);
        CHECK(al_model_lab_step(lab, &p, &err) >= 0, "step: %s", err.msg);
    }
    CHECK(al_model_lab_set_ablation(a, off, 2, &err) == AL_OK, "ablate: %s", err.msg);
    /* 1. Every head on: b's draws and distribution, bit for bit; a's own are other ones. */
    const int64_t len = al_model_lab_len(a);
    CHECK(al_model_lab_ahead(a, &p, 1, ahead, 12, pa, V, &err) == 12, "ahead, every head on: %s", err.msg);
    CHECK(al_model_lab_ahead(b, &p, 0, other, 12, pb, V, &err) == 12, "ahead of b: %s", err.msg);
    CHECK(!memcmp(ahead, other, sizeof ahead) && !memcmp(pa, pb, (size_t)V * sizeof(float)),
          "ahead with every head on is not the draws of a lab with none off");
    CHECK(al_model_lab_ablation(a, NULL, 0) == 2 && al_model_lab_len(a) == len, "ahead moved the lab");
    /* 2. As set: the next 12 steps of a, the text they add that of the ids. */
    CHECK(al_model_lab_ahead(a, &p, 0, ahead, 12, pa, V, &err) == 12, "ahead: %s", err.msg);
    char text[512], want[512];
    const int64_t n_text = al_model_lab_ids_text(a, ahead, 12, text, sizeof text, &err);
    CHECK(n_text >= 0 && al_model_lab_ids_text(a, ahead, 12, NULL, 0, &err) == n_text, "ids text: %s", err.msg);
    const int64_t before = al_model_lab_token_text(a, -1, want, sizeof want, &err);
    /* the lens after the draws ahead changes nothing the next steps read */
    const int64_t L1 = al_model_lab_hparams(a)->n_layers + 1;
    int32_t *top = malloc((size_t)(L1 * len) * sizeof(int32_t));
    float *prob = malloc((size_t)(L1 * len) * sizeof(float));
    CHECK(al_model_lab_lens(a, top, prob, L1 * len, &err) == AL_OK, "lens: %s", err.msg);
    free(top), free(prob);
    /* c took a's prompt, step and heads off, and no draws ahead: the steps of a lab that never
     * lent its caches, which a's steps after the draws ahead (the caches given back) are too */
    al_model_lab *c = make(model, msize, tok, tsize, 48);
    CHECK(c && al_model_lab_prompt(c, "Lily saw a", 10, 5, &err) > 0 && al_model_lab_step(c, &p, &err) >= 0 &&
              al_model_lab_set_ablation(c, off, 2, &err) == AL_OK, "lab c: %s", err.msg);
    for (int i = 0; i < 12; i++) {
        const int64_t id = al_model_lab_step(a, &p, &err), own = c ? al_model_lab_step(c, &p, &err) : id;
        CHECK(id == ahead[i], "step %d draws %lld, ahead said %d", i, (long long)id, (int)ahead[i]);
        CHECK(id == own, "step %d after the draws ahead: %lld, a lab with none %lld", i, (long long)id, (long long)own);
    }
    al_model_lab_free(c);
    CHECK(al_model_lab_token_text(a, -1, want, sizeof want, &err) == before + n_text && !strcmp(want + before, text),
          "the text of the ids ahead \"%s\" is not the text the steps wrote \"%s\"", text, want + before);
    /* 3. The prompt's loss: every head on is b's; as set, another. */
    const double all = al_model_lab_prompt_loss(a, 1, &err), plain = al_model_lab_prompt_loss(b, 0, &err);
    const double ablated = al_model_lab_prompt_loss(a, 0, &err);
    CHECK(all > 0 && all == plain && ablated > 0 && ablated != all, "loss: every head %g, plain %g, ablated %g", all,
          plain, ablated);
    CHECK(al_model_lab_prompt(b, "", 0, 0, &err) == 1 && al_model_lab_prompt_loss(b, 0, &err) == -1.0 &&
          strstr(err.msg, "a loss needs 2"), "loss of one token: %s", err.msg);
    /* 4. Tokens by name; a text of two is refused, naming it. */
    const int64_t lily = al_model_lab_token_id(a, " Lily", 5, &err);
    CHECK(lily >= 0 && al_model_lab_token_id(a, "Lily", 4, &err) == lily, "Lily: %lld (%s)", (long long)lily, err.msg);
    CHECK(al_model_lab_token_id(a, "Lily had", 8, &err) == -1 && strstr(err.msg, "\"Lily had\" is 2 tokens"),
          "two tokens: %s", err.msg);
    /* 5. A map's share: the clean metric is 1, the corrupted 0; equal metrics leave it raw. */
    const float map[3] = {2.0f, -1.0f, 0.5f};
    float share[3];
    CHECK(al_patch_recovered(map, 3, 2.0f, -1.0f, share, 3, &err) == 1 && share[0] == 1.0f && share[1] == 0.0f &&
          share[2] == 0.5f, "share: %g %g %g", share[0], share[1], share[2]);
    CHECK(al_patch_recovered(map, 3, 0.75f, 0.75f, share, 3, &err) == 0 && share[0] == 2.0f && share[2] == 0.5f,
          "equal metrics: the raw map");
    CHECK(al_patch_recovered(map, 3, 1.0f, 0.0f, share, 2, &err) == -1 && err.status == AL_ERR_CAPACITY, "share cap");
    free(pa), free(pb);
    al_model_lab_free(a), al_model_lab_free(b);
}

int main(int argc, char **argv) {
    const char *model_path = argc > 1 ? argv[1] : "models/stories260K/stories260K.bin";
    const char *tok_path = argc > 2 ? argv[2] : "models/stories260K/tok512.bin";
    size_t msize = 0, tsize = 0;
    uint8_t *model = read_file(model_path, &msize), *tok = read_file(tok_path, &tsize);
    if (model && tok) {
        al_model_lab *lab = make(model, msize, tok, tsize, 0);
        if (lab) test_against_model(lab, model, msize);
        al_model_lab_free(lab);
        test_charts_off_stages(model, msize, tok, tsize);
        test_pending(model, msize, tok, tsize);
        test_roles(model, msize, tok, tsize);
        test_refusals(model, msize, tok, tsize);
        test_experiments(model, msize, tok, tsize);
        test_ahead(model, msize, tok, tsize);
    }
    free(model), free(tok);
    CHECK_DONE();
}
