/* test_train_lab.c — the Train tab's lab against the model it exports and the rules it states:
 * the repeated task's sequences are r_1..r_R r_1..r_R then fresh ids (R in [seq/4, seq/2]); the
 * first step's losses (all targets, the first copies', the repeated copies') are what a
 * separately loaded model (al_model_load of the exported model.safetensors and config.json,
 * taken before the step) gives on the same batch; the learning rate is MiniMind's schedule as
 * `attnlab train` indexes it (step s at (s + 1) of steps); the roles at the last evaluation are
 * the model lab's on the exported model; the same settings give the same run bit for bit; text
 * batches are windows of the text's corpus (al_corpus_encode, as `attnlab train` reads it); the
 * three files load (the model, its config, the tokenizer cut to the vocabulary); heads switched
 * off in the probe's evaluation leave training alone and, on the default run past its jump,
 * take the second copy's loss back up; bad settings are refused with a message naming them.
 *   test_train_lab models/minimind-tokenizer/tokenizer.json models/minimind-fortunes/train-sample.txt [--quick] */
#include "attnlab.h"
#include "check.h"
#include "read_file.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static uint8_t *tok_json;
static size_t tok_size;
static char *text;
static size_t text_len;

static al_train_lab_config small(void) {
    al_train_lab_config c;
    al_train_lab_config_default(&c);
    c.batch = 4, c.seq = 32, c.steps = 12, c.eval_every = 5;
    return c;
}

static al_train_lab *make(const al_train_lab_config *c) {
    al_error err = {0};
    al_train_lab *lab = NULL;
    CHECK(al_train_lab_create(c, tok_json, tok_size, text, text_len, &lab, &err) == AL_OK, "create: %s", err.msg);
    return lab;
}

/* The model of the lab's files as they are now (the model view's loader). */
static al_model *exported_model(const al_train_lab *lab, int64_t context) {
    al_error err = {0};
    uint8_t *model = NULL, *config = NULL;
    size_t msize = 0, csize = 0;
    CHECK(al_train_lab_file(lab, AL_TRAIN_FILE_MODEL, &model, &msize, &err) == AL_OK, "model file: %s", err.msg);
    CHECK(al_train_lab_file(lab, AL_TRAIN_FILE_CONFIG, &config, &csize, &err) == AL_OK, "config file: %s", err.msg);
    al_model *m = NULL;
    if (model && config)
        CHECK(al_model_load(model, msize, AL_MODEL_FILE_SAFETENSORS, (const char *)config, csize, NULL, context, context, &m,
                            &err) == AL_OK, "load: %s", err.msg);
    al_buffer_free(model), al_buffer_free(config);
    return m;
}

/* The repeat length of a sequence of the repeated task: the R in [seq/4, seq/2] whose second
 * copy equals the first (the smallest; 0 if none). */
static int64_t repeat_of(const int32_t *ids, int64_t seq) {
    for (int64_t R = seq / 4; R <= seq / 2; R++)
        if (!memcmp(ids, ids + R, (size_t)R * sizeof *ids)) return R;
    return 0;
}

/* −log softmax(z)[target] of one row of logits z [V], in double. */
static double nll(const float *z, int64_t V, int32_t target) {
    double mx = -INFINITY, sum = 0.0;
    for (int64_t v = 0; v < V; v++) mx = z[v] > mx ? z[v] : mx;
    for (int64_t v = 0; v < V; v++) sum += exp(z[v] - mx);
    return -(z[target] - mx - log(sum));
}

static void test_first_step_against_model(void) {
    al_train_lab_config c = small();
    al_train_lab *lab = make(&c);
    if (!lab) return;
    al_model *m = exported_model(lab, c.seq); /* the weights before any step */
    al_error err = {0};
    CHECK(al_train_lab_step(lab, 1, &err) == 1, "step: %s", err.msg);
    const int64_t N = c.batch * c.seq, V = c.vocab;
    int32_t *ids = malloc((size_t)N * sizeof *ids);
    CHECK(al_train_lab_last_batch(lab, ids, N) == N, "last batch");
    float row[AL_TRAIN_COLUMNS];
    CHECK(al_train_lab_history(lab, 0, row, AL_TRAIN_COLUMNS, NULL) == 1, "history");
    float *logits = malloc((size_t)(c.seq * V) * sizeof *logits);
    double all = 0.0, half[3] = {0.0, 0.0, 0.0};
    int64_t n_all = 0, n_half[3] = {0, 0, 0};
    for (int64_t b = 0; m && b < c.batch; b++) {
        const int32_t *s = ids + b * c.seq;
        const int64_t R = repeat_of(s, c.seq);
        CHECK(R >= c.seq / 4 && R <= c.seq / 2, "sequence %lld is not r_1..r_R r_1..r_R", (long long)b);
        for (int64_t i = 0; i < c.seq; i++) CHECK(s[i] >= 3 && s[i] < V, "id %d out of [3, %lld)", (int)s[i], (long long)V);
        al_model_reset(m);
        CHECK(al_model_forward(m, s, c.seq, logits, c.seq, c.seq * V, NULL, 0, &err) == AL_OK, "forward: %s", err.msg);
        for (int64_t i = 0; i + 1 < c.seq; i++) { /* row i predicts s[i + 1] */
            const double loss = nll(logits + i * V, V, s[i + 1]);
            all += loss, n_all++;
            const int which = i < R - 1 ? 1 : i >= R && i < 2 * R - 1 ? 2 : 0; /* targets r_2..r_R of each copy */
            half[which] += loss, n_half[which]++;
        }
    }
    const float want[3] = {(float)(all / (double)n_all), (float)(half[1] / (double)n_half[1]), (float)(half[2] / (double)n_half[2])};
    check_close("step 0: loss, first copies, repeated copies", row, want, 3, 1e-5);
    const double lr = c.lr * (0.1 + 0.45 * (1.0 + cos(3.141592653589793 * 1.0 / (double)c.steps)));
    CHECK(row[AL_TRAIN_LR] == (float)lr, "lr %g, MiniMind's schedule says %g", row[AL_TRAIN_LR], lr);
    free(ids), free(logits);
    al_model_free(m);
    al_train_lab_free(lab);
}

/* The whole run: the schedule, the evaluations, the roles against the model lab's. */
static void test_run(void) {
    al_train_lab_config c = small();
    al_train_lab *lab = make(&c), *twin = make(&c);
    if (!lab || !twin) return;
    al_error err = {0};
    CHECK(al_train_lab_step(lab, 5, &err) == 5 && al_train_lab_step(lab, 100, &err) == c.steps, "steps: %s", err.msg);
    CHECK(al_train_lab_step(twin, c.steps, &err) == c.steps, "twin: %s", err.msg);
    CHECK(al_train_lab_step(lab, 1, &err) == c.steps, "no step past the run's length");
    CHECK(al_train_lab_tokens_done(lab) == c.steps * c.batch * c.seq, "tokens done");
    float h[12 * AL_TRAIN_COLUMNS], h2[12 * AL_TRAIN_COLUMNS];
    CHECK(al_train_lab_history(lab, 0, NULL, 0, NULL) == c.steps, "history count");
    CHECK(al_train_lab_history(lab, c.steps + 1, NULL, 0, &err) == -1 && strstr(err.msg, "history: no rows from"),
          "history past the end: %s", err.msg);
    CHECK(al_train_lab_evals(lab, 99, NULL, 0, &err) == -1 && strstr(err.msg, "evaluations: no rows from 99"),
          "evals past the end: %s", err.msg);
    CHECK(al_train_lab_piece(lab, (int32_t)c.vocab, NULL, 0, &err) == -1 && strstr(err.msg, "no token id"),
          "piece past the vocabulary: %s", err.msg);
    CHECK(al_train_lab_history(lab, 0, h, 12 * AL_TRAIN_COLUMNS, NULL) == c.steps, "history");
    CHECK(al_train_lab_history(twin, 0, h2, 12 * AL_TRAIN_COLUMNS, NULL) == c.steps, "twin history");
    CHECK(!memcmp(h, h2, sizeof h), "the same settings gave another run");
    for (int64_t s = 0; s < c.steps; s++) {
        const double lr = c.lr * (0.1 + 0.45 * (1.0 + cos(3.141592653589793 * (double)(s + 1) / (double)c.steps)));
        CHECK(h[s * AL_TRAIN_COLUMNS + AL_TRAIN_LR] == (float)lr, "lr at step %lld", (long long)s);
        CHECK(isfinite(h[s * AL_TRAIN_COLUMNS]) && h[s * AL_TRAIN_COLUMNS] > 0.0f, "loss at step %lld", (long long)s);
    }
    /* evaluations at steps 0, 5, 10 and the last (12) */
    const al_model_hparams *hp = al_train_lab_hparams(lab);
    const int64_t LH = hp->n_layers * hp->n_heads, w = 1 + LH * AL_LAB_ROLES;
    float ev[4 * 64];
    CHECK(w * 4 <= 4 * 64, "eval row width");
    CHECK(al_train_lab_evals(lab, 0, NULL, 0, NULL) == 4, "%lld evaluations", (long long)al_train_lab_evals(lab, 0, NULL, 0, NULL));
    CHECK(al_train_lab_evals(lab, 0, ev, 4 * w, NULL) == 4, "evaluations");
    CHECK(ev[0] == 0 && ev[w] == 5 && ev[2 * w] == 10 && ev[3 * w] == 12, "evaluated at %g %g %g %g", ev[0], ev[w], ev[2 * w], ev[3 * w]);
    float best = 0.0f;
    for (int64_t lh = 0; lh < LH; lh++) best = fmaxf(best, ev[3 * w + 1 + lh * AL_LAB_ROLES + AL_LAB_ROLE_INDUCTION]);
    CHECK(al_train_lab_induction_max(lab) == best, "induction max %g, the last row's %g", al_train_lab_induction_max(lab), best);
    /* per role: the strongest head of the last row, and for a threshold just under each row's
     * best the first row above it (none above 1: a score is a share of attention) */
    for (int r = 0; r < AL_LAB_ROLES; r++) {
        int64_t top = 0;
        for (int64_t lh = 1; lh < LH; lh++)
            if (ev[3 * w + 1 + lh * AL_LAB_ROLES + r] > ev[3 * w + 1 + top * AL_LAB_ROLES + r]) top = lh;
        CHECK(al_train_lab_strongest_head(lab, (al_lab_role)r) == top, "role %d: strongest head %lld, the last row's %lld", r,
              (long long)al_train_lab_strongest_head(lab, (al_lab_role)r), (long long)top);
        for (int64_t e = 0; e < 4; e++) {
            float row_best = 0.0f;
            for (int64_t lh = 0; lh < LH; lh++) row_best = fmaxf(row_best, ev[e * w + 1 + lh * AL_LAB_ROLES + r]);
            const double t = (double)row_best - 1e-6;
            int64_t want = -1;
            for (int64_t k = 0; k < 4 && want < 0; k++)
                for (int64_t lh = 0; lh < LH && want < 0; lh++)
                    if (ev[k * w + 1 + lh * AL_LAB_ROLES + r] > t) want = (int64_t)ev[k * w];
            CHECK(al_train_lab_role_passed(lab, (al_lab_role)r, t) == want, "role %d above %g: step %lld, the rows say %lld", r, t,
                  (long long)al_train_lab_role_passed(lab, (al_lab_role)r, t), (long long)want);
        }
        CHECK(al_train_lab_role_passed(lab, (al_lab_role)r, 1.0) == -1, "role %d above 1", r);
    }
    CHECK(al_train_lab_strongest_head(lab, AL_LAB_ROLES) == -1 && al_train_lab_role_passed(lab, AL_LAB_ROLES, 0.5) == -1 &&
          al_train_lab_strongest_head(NULL, AL_LAB_ROLE_INDUCTION) == -1, "a role out of range, a NULL lab");
    /* the roles of the exported model, measured by the model view */
    uint8_t *model = NULL, *config = NULL, *tok = NULL;
    size_t msize = 0, csize = 0, tsize = 0;
    CHECK(al_train_lab_file(lab, AL_TRAIN_FILE_MODEL, &model, &msize, &err) == AL_OK, "model: %s", err.msg);
    CHECK(al_train_lab_file(lab, AL_TRAIN_FILE_CONFIG, &config, &csize, &err) == AL_OK, "config: %s", err.msg);
    CHECK(al_train_lab_file(lab, AL_TRAIN_FILE_TOKENIZER, &tok, &tsize, &err) == AL_OK, "tokenizer: %s", err.msg);
    al_model_lab *view = NULL;
    CHECK(al_model_lab_create(model, msize, AL_MODEL_FILE_SAFETENSORS, config, csize, tok, tsize, c.seq, &view, &err) == AL_OK,
          "the model view refuses the trained model: %s", err.msg);
    if (view) {
        float roles[64];
        CHECK(al_model_lab_roles(view, roles, LH * AL_LAB_ROLES, &err) == AL_OK, "roles: %s", err.msg);
        check_close("the last evaluation's roles against the model view's", ev + 3 * w + 1, roles, LH * AL_LAB_ROLES, 1e-5);
        CHECK(al_model_lab_hparams(view)->ffn_hidden == 0, "the exported model is not attention-only");
    }
    /* the pattern: the probe's attention rows, causal, each summing to 1 */
    const int64_t T = al_train_lab_probe(lab, NULL, 0);
    CHECK(T == 2 * (c.seq / 2 < 24 ? c.seq / 2 : 24), "probe of %lld tokens", (long long)T);
    float *p = malloc((size_t)(T * T) * sizeof *p);
    CHECK(al_train_lab_attention(lab, 1, 1, p, T * T, &err) == AL_OK, "pattern: %s", err.msg);
    for (int64_t q = 0; q < T; q++) {
        double sum = 0.0;
        for (int64_t k = 0; k < T; k++) sum += p[q * T + k];
        CHECK(fabs(sum - 1.0) < 1e-5 && (q + 1 == T || p[q * T + q + 1] == 0.0f), "pattern row %lld", (long long)q);
    }
    CHECK(al_train_lab_attention(lab, 2, 0, p, T * T, &err) == AL_ERR_ARG && strstr(err.msg, "layer 2"), "layer 2: %s", err.msg);
    free(p);
    al_model_lab_free(view);
    al_buffer_free(model), al_buffer_free(config), al_buffer_free(tok);
    al_train_lab_free(lab), al_train_lab_free(twin);
}

/* Text: each sequence is a window of the text's corpus as the cut tokenizer encodes it (its
 * training part). */
static void test_text(void) {
    al_train_lab_config c = small();
    c.data = AL_TRAIN_DATA_TEXT;
    c.ffn = -1;
    al_train_lab *lab = make(&c);
    if (!lab) return;
    al_error err = {0};
    uint8_t *tj = NULL;
    size_t tn = 0;
    CHECK(al_train_lab_file(lab, AL_TRAIN_FILE_TOKENIZER, &tj, &tn, &err) == AL_OK, "tokenizer: %s", err.msg);
    al_tokenizer *tok = NULL;
    CHECK(al_tok_hf_create(tj, tn, c.vocab, &tok, &err) == AL_OK, "the tokenizer file does not read with %lld ids: %s",
          (long long)c.vocab, err.msg);
    al_corpus corpus = {0};
    CHECK(tok && al_corpus_encode(tok, text, text_len, c.seq + 1, &corpus, &err) == AL_OK, "corpus: %s", err.msg);
    const int64_t n = corpus.split;
    const int32_t *all = corpus.ids;
    CHECK(al_train_lab_step(lab, 2, &err) == 2, "steps: %s", err.msg);
    const int64_t N = c.batch * c.seq;
    int32_t *ids = malloc((size_t)N * sizeof *ids);
    CHECK(al_train_lab_last_batch(lab, ids, N) == N, "batch");
    for (int64_t b = 0; b < c.batch && n > 0; b++) {
        int found = 0;
        for (int64_t at = 0; at + c.seq <= n && !found; at++) found = !memcmp(all + at, ids + b * c.seq, (size_t)c.seq * sizeof *ids);
        CHECK(found, "sequence %lld is not a window of the text", (long long)b);
    }
    float row[AL_TRAIN_COLUMNS];
    CHECK(al_train_lab_history(lab, 1, row, AL_TRAIN_COLUMNS, NULL) == 1, "history");
    CHECK(isnan(row[AL_TRAIN_FIRST_HALF]) && isnan(row[AL_TRAIN_REPEATED_HALF]), "text has no halves");
    CHECK(al_train_lab_hparams(lab)->ffn_hidden == al_minimind_ffn_hidden(c.hidden), "ffn -1: MiniMind's width");
    free(ids);
    al_corpus_free(&corpus);
    al_tok_free(tok);
    al_buffer_free(tj);
    al_train_lab_free(lab);
}

/* The probe's losses [2] (first copy's targets r_2..r_R, the second's) of a separately loaded
 * model (the exported one), with heads [n, 2] switched off: al_model_forward, −log softmax in
 * double. */
static void model_probe_halves(al_model *m, const int32_t *probe, int64_t T, const int32_t *heads, int64_t n, float *out) {
    al_error err = {0};
    const int64_t V = al_model_get_hparams(m)->vocab, R = T / 2;
    float *logits = malloc((size_t)(T * V) * sizeof *logits);
    CHECK(al_model_set_ablation(m, heads, n, &err) == AL_OK, "model ablation: %s", err.msg);
    al_model_reset(m);
    CHECK(al_model_forward(m, probe, T, logits, T, T * V, NULL, 0, &err) == AL_OK, "forward: %s", err.msg);
    for (int64_t c = 0; c < 2; c++) {
        double sum = 0.0;
        for (int64_t i = c * R; i < c * R + R - 1; i++) sum += nll(logits + i * V, V, probe[i + 1]);
        out[c] = (float)(sum / (double)(R - 1));
    }
    free(logits);
}

/* Heads switched off in the probe's evaluation: training never sees them (the run, its
 * evaluations and the plain probe losses are a twin's with none off, bit for bit); with none
 * off the ablated losses are the plain ones bit for bit; the losses with heads off are what
 * the exported model gives with those heads off; a head out of range is refused and nothing
 * changes. */
static void test_ablation_rules(void) {
    al_train_lab_config c = small();
    al_train_lab *lab = make(&c), *twin = make(&c);
    if (!lab || !twin) return;
    al_error err = {0};
    const int32_t heads[3][2] = {{1, 1}, {0, 0}, {1, 1}};
    CHECK(al_train_lab_set_ablation(lab, &heads[0][0], 3, &err) == AL_OK, "set: %s", err.msg);
    int32_t got[8] = {0};
    CHECK(al_train_lab_ablation(lab, got, 4) == 2 && got[0] == 0 && got[1] == 0 && got[2] == 1 && got[3] == 1,
          "the heads off: %d of them, (%d, %d) (%d, %d)", (int)al_train_lab_ablation(lab, NULL, 0), got[0], got[1], got[2], got[3]);
    CHECK(al_train_lab_step(lab, c.steps, &err) == c.steps && al_train_lab_step(twin, c.steps, &err) == c.steps, "steps: %s",
          err.msg);
    float h[12 * AL_TRAIN_COLUMNS], h2[12 * AL_TRAIN_COLUMNS], ev[4 * 64], ev2[4 * 64];
    CHECK(al_train_lab_history(lab, 0, h, 12 * AL_TRAIN_COLUMNS, NULL) == c.steps &&
          al_train_lab_history(twin, 0, h2, 12 * AL_TRAIN_COLUMNS, NULL) == c.steps && !memcmp(h, h2, sizeof h),
          "the heads off in the probe changed the training");
    CHECK(al_train_lab_evals(lab, 0, ev, 4 * 64, NULL) == 4 && al_train_lab_evals(twin, 0, ev2, 4 * 64, NULL) == 4 &&
          !memcmp(ev, ev2, (size_t)(4 * al_train_lab_eval_width(lab)) * sizeof *ev), "the heads off changed the roles");
    float p[AL_PROBE_COLUMNS], q[AL_PROBE_COLUMNS];
    CHECK(al_train_lab_probe_loss(lab, p, AL_PROBE_COLUMNS, &err) == AL_OK && al_train_lab_probe_loss(twin, q, AL_PROBE_COLUMNS, &err) == AL_OK,
          "probe loss: %s", err.msg);
    CHECK(p[AL_PROBE_STEP] == (float)c.steps && !memcmp(p, q, 3 * sizeof *p), "step %g; plain %g %g, the twin's %g %g", p[0], p[1], p[2], q[1], q[2]);
    CHECK(isfinite(p[AL_PROBE_FIRST_HALF_OFF]) && isfinite(p[AL_PROBE_REPEATED_HALF_OFF]) &&
          (p[AL_PROBE_FIRST_HALF_OFF] != p[AL_PROBE_FIRST_HALF] || p[AL_PROBE_REPEATED_HALF_OFF] != p[AL_PROBE_REPEATED_HALF]),
          "two heads off changed no loss: %g %g", p[3], p[4]);
    /* the exported model with the same heads off */
    const int64_t T = al_train_lab_probe(lab, NULL, 0);
    int32_t probe[48];
    CHECK(T > 0 && T <= 48 && al_train_lab_probe(lab, probe, 48) == T, "probe of %lld", (long long)T);
    al_model *m = exported_model(lab, c.seq);
    if (m) {
        float want[2];
        model_probe_halves(m, probe, T, &heads[0][0], 3, want);
        check_close("the probe's losses with L0 H0 and L1 H1 off against the exported model's", p + AL_PROBE_FIRST_HALF_OFF, want, 2, 1e-5);
        model_probe_halves(m, probe, T, NULL, 0, want);
        check_close("the plain probe losses against the exported model's", p + AL_PROBE_FIRST_HALF, want, 2, 1e-5);
    }
    al_model_free(m);
    /* refused: named, nothing changed */
    const int32_t bad[2][2] = {{0, 1}, {2, 0}};
    CHECK(al_train_lab_set_ablation(lab, &bad[0][0], 2, &err) == AL_ERR_ARG && strstr(err.msg, "layer 2"), "layer 2: %s", err.msg);
    CHECK(al_train_lab_ablation(lab, got, 4) == 2 && al_train_lab_probe_loss(lab, q, AL_PROBE_COLUMNS, NULL) == AL_OK &&
          !memcmp(p, q, sizeof p), "a refused list changed the heads off or the losses");
    CHECK(al_train_lab_set_ablation(lab, NULL, 1, &err) == AL_ERR_ARG && al_train_lab_set_ablation(NULL, NULL, 0, &err) == AL_ERR_ARG &&
          al_train_lab_ablation(NULL, NULL, 0) == -1 && al_train_lab_probe_loss(lab, q, AL_PROBE_COLUMNS - 1, &err) == AL_ERR_CAPACITY,
          "NULL arguments, too little room");
    /* none off: the ablated forward is the plain one bit for bit (and the plain one unchanged) */
    CHECK(al_train_lab_set_ablation(lab, NULL, 0, &err) == AL_OK && al_train_lab_ablation(lab, NULL, 0) == 0, "none off: %s", err.msg);
    CHECK(al_train_lab_probe_loss(lab, q, AL_PROBE_COLUMNS, NULL) == AL_OK && !memcmp(q, p, 3 * sizeof *q) &&
          !memcmp(q + AL_PROBE_FIRST_HALF_OFF, q + AL_PROBE_FIRST_HALF, 2 * sizeof *q),
          "none off: plain %g %g, off %g %g", q[1], q[2], q[3], q[4]);
    al_train_lab_free(lab), al_train_lab_free(twin);
}

/* The causal test of the induction head on the Train tab's default run. Trained 1000 steps
 * (its induction head forms by AL_TRAIN_JUMP_TO), the probe's second copy is predicted by
 * copying: its loss is far below the first copy's; switched off, the strongest induction head
 * takes that back, and the second copy is no better predicted than the first. Measured
 * natively (seed 42, step 1000): L1 H1, induction score 0.92; first copy 5.76 nats, second
 * 0.47; with L1 H1 off the second copy 7.37 (L1 H0 off, the other induction head at 0.89:
 * 11.6; L0 H1, the previous-token head that feeds them: 5.08; L0 H0: 0.63). */
static void test_ablation_trained(void) {
    al_train_lab_config c;
    al_train_lab_config_default(&c);
    al_train_lab *lab = make(&c);
    if (!lab) return;
    al_error err = {0};
    CHECK(al_train_lab_step(lab, 1000, &err) == 1000, "steps: %s", err.msg);
    const int64_t lh = al_train_lab_strongest_head(lab, AL_LAB_ROLE_INDUCTION), H = al_train_lab_hparams(lab)->n_heads;
    const int32_t head[2] = {(int32_t)(lh / H), (int32_t)(lh % H)};
    CHECK(al_train_lab_induction_max(lab) > 0.5f, "no induction head by step 1000: %g", al_train_lab_induction_max(lab));
    CHECK(al_train_lab_set_ablation(lab, head, 1, &err) == AL_OK, "set: %s", err.msg);
    float p[AL_PROBE_COLUMNS];
    CHECK(al_train_lab_probe_loss(lab, p, AL_PROBE_COLUMNS, &err) == AL_OK, "probe loss: %s", err.msg);
    printf("after 1000 steps, L%d H%d off: first copy %.3f -> %.3f, second copy %.3f -> %.3f\n", head[0], head[1],
           p[AL_PROBE_FIRST_HALF], p[AL_PROBE_FIRST_HALF_OFF], p[AL_PROBE_REPEATED_HALF], p[AL_PROBE_REPEATED_HALF_OFF]);
    CHECK(p[AL_PROBE_REPEATED_HALF] < 0.25f * p[AL_PROBE_FIRST_HALF], "the second copy is not copied: %g against %g",
          p[AL_PROBE_REPEATED_HALF], p[AL_PROBE_FIRST_HALF]);
    CHECK(p[AL_PROBE_REPEATED_HALF_OFF] > 0.9f * p[AL_PROBE_FIRST_HALF], "L%d H%d off, the second copy's loss is %g, the first's %g",
          head[0], head[1], p[AL_PROBE_REPEATED_HALF_OFF], p[AL_PROBE_FIRST_HALF]);
    al_train_lab_free(lab);
}

/* Bad settings: refused, each with a message naming it, and nothing made. */
static void test_refusals(void) {
    static const struct { int field; double value; const char *named; } cases[] = {
        {0, 100, "vocabulary"}, {0, 7000, "vocabulary"}, {1, 0, "layers"}, {2, 0, "heads"}, {3, 3, "KV heads"},
        {4, 4, "hidden"}, {5, -2, "FFN"}, {6, 0.5, "RoPE base"}, {7, 0, "batch"}, {8, 4, "sequence"},
        {9, 0, "steps"}, {10, 0, "learning rate"}, {11, 0, "evaluations"}, {12, 7, "training data"},
        {4, 70, "even size"}, {3, 3, "cannot share"}, {13, 0, "paste more text"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        al_train_lab_config c = small();
        c.heads = 4, c.kv_heads = 2;
        const double v = cases[i].value;
        switch (cases[i].field) {
        case 0: c.vocab = (int64_t)v; break;
        case 1: c.layers = (int64_t)v; break;
        case 2: c.heads = (int64_t)v; break;
        case 3: c.kv_heads = (int64_t)v; break;
        case 4: c.hidden = (int64_t)v; break;
        case 5: c.ffn = (int64_t)v; break;
        case 6: c.rope_theta = v; break;
        case 7: c.batch = (int64_t)v; break;
        case 8: c.seq = (int64_t)v; break;
        case 9: c.steps = (int64_t)v; break;
        case 10: c.lr = v; break;
        case 11: c.eval_every = (int64_t)v; break;
        case 12: c.data = (al_train_data)(int)v; break;
        case 13: c.data = AL_TRAIN_DATA_TEXT; break;
        }
        al_error err = {0};
        al_train_lab *lab = (al_train_lab *)&err; /* must come back NULL */
        const size_t len = cases[i].field == 13 ? 20 : text_len; /* a few characters: too few tokens */
        const al_status st = al_train_lab_create(&c, tok_json, tok_size, text, len, &lab, &err);
        CHECK(st != AL_OK && lab == NULL && strstr(err.msg, cases[i].named), "case %zu (%s): status %d, '%s'", i, cases[i].named,
              (int)st, err.msg);
    }
    al_train_lab_config c = small();
    al_error err = {0};
    al_train_lab *lab = NULL;
    CHECK(al_train_lab_create(&c, NULL, 0, NULL, 0, &lab, &err) == AL_ERR_MISSING && strstr(err.msg, "tokenizer"), "no tokenizer: %s",
          err.msg);
    CHECK(al_train_lab_create(&c, (const uint8_t *)"{}", 2, NULL, 0, &lab, &err) != AL_OK && !lab, "not a tokenizer.json");
    CHECK(al_train_lab_step(NULL, 1, &err) == -1 && al_train_lab_history(NULL, 0, NULL, 0, NULL) == -1, "NULL lab");
}

int main(int argc, char **argv) {
    CHECK(argc == 3 || (argc == 4 && !strcmp(argv[3], "--quick")), "usage: test_train_lab tokenizer.json text.txt [--quick]");
    if (argc != 3 && argc != 4) CHECK_DONE();
    const int quick = argc == 4; /* without the run of 1000 steps (under valgrind) */
    tok_json = read_file(argv[1], &tok_size);
    text = (char *)read_file(argv[2], &text_len);
    if (!tok_json || !text) CHECK_DONE();
    test_first_step_against_model();
    test_run();
    test_text();
    test_ablation_rules();
    if (!quick) test_ablation_trained();
    test_refusals();
    free(tok_json), free(text);
    CHECK_DONE();
}
