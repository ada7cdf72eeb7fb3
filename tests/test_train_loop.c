/* test_train_loop.c — the one training step, corpus format and initialiser that `attnlab train`,
 * `attnlab eval` and the Train tab share:
 *   - one seed, one model: the bench's random model (al_model_fill_random) and a trainer's fresh
 *     start (al_trainer_init_weights) hold the same numbers, for dense and MoE, tied and untied
 *     shapes, and their first weight is PyTorch's first N(0, 0.02²) draws of that seed
 *   - the learning rate: step s takes al_lr_schedule(lr, (s + 1)·accum, steps·accum), with
 *     accum 1 and 2 (the Train tab's rows), and a step of accum 2 sees two micro-batches
 *   - the corpus: each document between the tokenizer's own <|im_start|> and <|im_end|> (ids 257
 *     and 256 here, not 1 and 2), a tokenizer without them refused naming the token, the
 *     held-out part by documents from 20 on, by tokens (at least one window) below
 *   - the Train tab on text: its batches are windows of the corpus's training part, and it
 *     measures the held-out loss
 *   - with a third argument, a folder `attnlab train` wrote (tests/train-loop.test.mjs): the
 *     Train tab's lab with that run's settings, text and seed ends with the same weights bit for
 *     bit, the same loss of every step and the same held-out loss.
 *   test_train_loop tokenizer.json text.txt [RUN_DIR] */
#include "attnlab.h"
#include "check.h"
#include "read_file.h"
#include "tok_json.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static uint8_t *tok_bytes;
static size_t tok_size;
static char *text;
static size_t text_len;

/* ---- one seed, one model ------------------------------------------------------------------ */

static void test_one_initialiser(void) {
    struct { const char *name; int tied, experts; } shapes[] = {{"dense tied", 1, 0}, {"dense untied", 0, 0}, {"MoE", 1, 3}};
    for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++) {
        al_model_hparams hp = al_minimind_hparams_for(300, 32, 2, 4, 2);
        hp.tied = shapes[k].tied;
        if (shapes[k].experts) hp.n_experts = shapes[k].experts, hp.top_k = 2, hp.moe_ffn_hidden = hp.ffn_hidden;
        al_error err = {0};
        al_model *m = NULL;
        al_trainer *t = NULL;
        CHECK(al_model_create(&hp, 8, 1, &m, &err) == AL_OK, "%s: model: %s", shapes[k].name, err.msg);
        CHECK(al_trainer_create(&hp, 1, 8, &t, &err) == AL_OK, "%s: trainer: %s", shapes[k].name, err.msg);
        if (!m || !t) goto next;
        CHECK(al_model_fill_random(m, 42, &err) == AL_OK, "fill: %s", err.msg);
        CHECK(al_trainer_init_weights(t, 42, &err) == AL_OK, "init: %s", err.msg);
        const int64_t n = al_model_weights(&hp, NULL);
        al_weight_ref *refs = malloc((size_t)n * sizeof *refs);
        al_model_weights(&hp, refs);
        int64_t differ = 0, compared = 0;
        for (int64_t i = 0; i < n; i++) {
            int64_t nm = 0, nt = 0;
            const float *a = al_model_get_param(m, refs[i].p, refs[i].layer, refs[i].expert, &nm);
            const float *b = al_trainer_weight(t, refs[i].p, refs[i].layer, refs[i].expert, &nt);
            CHECK(nm == nt, "%s: weight %lld holds %lld numbers in the model, %lld in the trainer", shapes[k].name,
                  (long long)i, (long long)nm, (long long)nt);
            if (a && b && nm == nt) differ += memcmp(a, b, (size_t)nm * sizeof *a) != 0, compared++;
        }
        CHECK(compared > 0 && differ == 0, "%s: %lld of %lld weights differ between the bench's model and the trainer's",
              shapes[k].name, (long long)differ, (long long)compared);
        /* the first weight (the embedding) is the generator's first draws */
        float *first = malloc((size_t)(hp.vocab * hp.hidden) * sizeof *first);
        al_rng *rng = al_rng_create(42);
        al_rng_normal(rng, first, hp.vocab * hp.hidden, 0.0f, 0.02f);
        al_rng_free(rng);
        check_close("the embedding: torch.manual_seed(42) then normal_(0, 0.02)", al_trainer_weight(t, AL_MP_EMBED, 0, 0, NULL),
                    first, hp.vocab * hp.hidden, 0.0);
        free(first);
        free(refs);
    next:
        al_model_free(m);
        al_trainer_free(t);
    }
}

/* ---- the corpus ----------------------------------------------------------------------------- */

/* A tokenizer.json of the 256 bytes with <|im_end|> at 256 and <|im_start|> at 257. */
static al_tokenizer *wrapped_tokenizer(int with_start) {
    const char *added[] = {"<|im_end|>", "<|im_start|>"};
    char *json = tok_json(NULL, 0, NULL, 0, added, with_start ? 2 : 1, 0, 1, 0);
    al_tokenizer *tok = NULL;
    al_error err = {0};
    CHECK(json && al_tok_hf_create((const uint8_t *)json, strlen(json), 0, &tok, &err) == AL_OK, "tokenizer: %s", err.msg);
    free(json);
    return tok;
}

static void test_corpus(void) {
    al_tokenizer *tok = wrapped_tokenizer(1), *no_start = wrapped_tokenizer(0);
    if (!tok || !no_start) return;
    al_error err = {0};
    al_corpus c;
    /* three documents, separated by a "%" line and by two empty lines (each document's text up
     * to the separator's line, its newline included): fewer than 20, split by tokens */
    const char *three = "ab\n%\ncd\n\n\nef";
    CHECK(al_corpus_encode(tok, three, strlen(three), 2, &c, &err) == AL_OK, "three documents: %s", err.msg);
    const int32_t want[] = {257, 'a', 'b', '\n', 256, 257, 'c', 'd', '\n', 256, 257, 'e', 'f', 256};
    CHECK(c.n_tokens == 14 && !memcmp(c.ids, want, sizeof want), "the documents are not <|im_start|> text <|im_end|> "
          "with the tokenizer's ids (%lld tokens, first %d %d %d %d)", (long long)c.n_tokens, c.ids ? c.ids[0] : -1,
          c.ids ? c.ids[1] : -1, c.ids ? c.ids[2] : -1, c.ids ? c.ids[3] : -1);
    /* 5% of 14 tokens is 1 (rounded up), less than a window of 2: the last 2 held out */
    CHECK(c.n_docs == 3 && c.held_docs == 0 && c.split == 12, "3 documents: split at %lld (held_docs %lld)",
          (long long)c.split, (long long)c.held_docs);
    char line[256];
    CHECK(al_corpus_describe(&c, line, sizeof line) > 0 && strstr(line, "3 documents, 14 tokens; held out: the last 2 tokens"),
          "described as '%s'", line);
    al_corpus_free(&c);
    CHECK(al_corpus_encode(tok, three, strlen(three), 8, &c, &err) == AL_ERR_ARG && c.ids == NULL &&
          strstr(err.msg, "14 tokens are too few: a corpus of fewer than 20 documents needs at least 16"),
          "too few tokens: '%s'", err.msg);
    /* 40 documents of 5 tokens: the last 2 held out */
    char forty[40 * 8] = "";
    for (int d = 0; d < 40; d++) strcat(forty, d % 2 ? "xy\n%\n" : "xy\n\n");
    CHECK(al_corpus_encode(tok, forty, strlen(forty), 2, &c, &err) == AL_OK, "40 documents: %s", err.msg);
    CHECK(c.n_docs == 40 && c.held_docs == 2 && c.n_tokens == 200 && c.split == 190, "40 documents: %lld held, split %lld of %lld",
          (long long)c.held_docs, (long long)c.split, (long long)c.n_tokens);
    al_corpus_free(&c);
    /* no <|im_start|>: refused, naming it */
    CHECK(al_corpus_encode(no_start, three, strlen(three), 2, &c, &err) == AL_ERR_ARG && strstr(err.msg, "no <|im_start|> token"),
          "a tokenizer without <|im_start|>: '%s'", err.msg);
    al_tok_free(tok), al_tok_free(no_start);
}

/* ---- the Train tab's runs: the learning rate, accumulation, text ------------------------------ */

static al_train_lab_config small(void) {
    al_train_lab_config c;
    al_train_lab_config_default(&c);
    c.batch = 4, c.seq = 32, c.steps = 6, c.eval_every = 3;
    return c;
}

static void test_schedule_and_accumulation(void) {
    for (int64_t accum = 1; accum <= 2; accum++) {
        al_train_lab_config c = small();
        c.accum = accum;
        al_error err = {0};
        al_train_lab *lab = NULL;
        CHECK(al_train_lab_create(&c, tok_bytes, tok_size, NULL, 0, &lab, &err) == AL_OK, "create: %s", err.msg);
        if (!lab) continue;
        CHECK(al_train_lab_step(lab, c.steps, &err) == c.steps, "steps: %s", err.msg);
        float h[6 * AL_TRAIN_COLUMNS];
        CHECK(al_train_lab_history(lab, 0, h, 6 * AL_TRAIN_COLUMNS, NULL) == 6, "history");
        for (int64_t s = 0; s < c.steps; s++) {
            /* step s (0-based) takes the rate of its last micro-batch, (s + 1)·accum of steps·accum */
            const double t = (double)((s + 1) * accum) / (double)(c.steps * accum);
            const double lr = c.lr * (0.1 + 0.45 * (1.0 + cos(3.141592653589793 * t)));
            CHECK(h[s * AL_TRAIN_COLUMNS + AL_TRAIN_LR] == (float)lr, "accum %lld: lr at step %lld is %g, want %g",
                  (long long)accum, (long long)s, h[s * AL_TRAIN_COLUMNS + AL_TRAIN_LR], lr);
        }
        CHECK(h[(c.steps - 1) * AL_TRAIN_COLUMNS + AL_TRAIN_LR] == (float)(c.lr * 0.1), "the last step is at the floor");
        CHECK(al_train_lab_tokens_done(lab) == c.steps * accum * c.batch * c.seq, "accum %lld: %lld tokens", (long long)accum,
              (long long)al_train_lab_tokens_done(lab));
        CHECK(isnan(al_train_lab_held_out_loss(lab)), "the repeated task has no held-out part");
        al_train_lab_free(lab);
    }
}

static void test_text_is_a_corpus(void) {
    al_train_lab_config c = small();
    c.data = AL_TRAIN_DATA_TEXT;
    al_error err = {0};
    al_train_lab *lab = NULL;
    CHECK(al_train_lab_create(&c, tok_bytes, tok_size, text, text_len, &lab, &err) == AL_OK, "create: %s", err.msg);
    if (!lab) return;
    uint8_t *tj = NULL;
    size_t tn = 0;
    al_tokenizer *tok = NULL;
    CHECK(al_train_lab_file(lab, AL_TRAIN_FILE_TOKENIZER, &tj, &tn, &err) == AL_OK &&
          al_tok_hf_create(tj, tn, c.vocab, &tok, &err) == AL_OK, "tokenizer: %s", err.msg);
    al_corpus corpus = {0};
    CHECK(tok && al_corpus_encode(tok, text, text_len, c.seq + 1, &corpus, &err) == AL_OK, "corpus: %s", err.msg);
    CHECK(corpus.held_docs > 0, "the sample is split by documents");
    CHECK(isfinite(al_train_lab_held_out_loss(lab)), "no held-out loss before the first step");
    const double before = al_train_lab_held_out_loss(lab);
    CHECK(al_train_lab_step(lab, c.steps, &err) == c.steps, "steps: %s", err.msg);
    CHECK(al_train_lab_held_out_loss(lab) < before, "the held-out loss %g did not fall from %g", al_train_lab_held_out_loss(lab),
          before);
    const int64_t N = c.batch * c.seq;
    int32_t *ids = malloc((size_t)N * sizeof *ids);
    CHECK(al_train_lab_last_batch(lab, ids, N) == N, "batch");
    for (int64_t b = 0; b < c.batch && corpus.ids; b++) {
        int found = 0;
        for (int64_t at = 0; at + c.seq <= corpus.split && !found; at++)
            found = !memcmp(corpus.ids + at, ids + b * c.seq, (size_t)c.seq * sizeof *ids);
        CHECK(found, "sequence %lld is not a window of the corpus's training part", (long long)b);
    }
    /* one document too short for a window to train on and one held out: the corpus's rule */
    al_train_lab *none = NULL;
    CHECK(al_train_lab_create(&c, tok_bytes, tok_size, "A short text, one document.", 27, &none, &err) == AL_ERR_ARG && !none &&
          strstr(err.msg, "a corpus of fewer than 20 documents needs at least 66") && strstr(err.msg, "paste more text"),
          "a short text: '%s'", err.msg);
    free(ids);
    al_corpus_free(&corpus);
    al_tok_free(tok);
    al_buffer_free(tj);
    al_train_lab_free(lab);
}

/* ---- against a run of `attnlab train` ------------------------------------------------------------ */

/* The number after "key=" in the run's settings ("hidden=32 layers=2 ..."); NaN if absent. */
static double setting(const char *settings, const char *key) {
    char pat[40];
    snprintf(pat, sizeof pat, "%s=", key);
    for (const char *p = strstr(settings, pat); p; p = strstr(p + 1, pat))
        if (p == settings || p[-1] == ' ') return strtod(p + strlen(pat), NULL);
    return NAN;
}

static al_safetensors *read_st(const char *dir, const char *name, uint8_t **bytes) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    size_t size = 0;
    *bytes = read_file(path, &size);
    al_safetensors *st = NULL;
    al_error err = {0};
    if (*bytes) CHECK(al_st_parse_view(*bytes, size, &st, &err) == AL_OK, "%s: %s", path, err.msg);
    return st;
}

static void test_against_cli(const char *dir) {
    uint8_t *state_bytes = NULL, *model_bytes = NULL, *csv = NULL;
    al_safetensors *state = read_st(dir, "train_state.safetensors", &state_bytes);
    al_safetensors *cli_model = read_st(dir, "model.safetensors", &model_bytes);
    const char *settings = state ? al_st_metadata(state, "attnlab_train") : NULL;
    CHECK(settings != NULL, "%s: no run settings", dir);
    if (!settings || !cli_model) goto done;
    /* the run's settings as the Train tab's */
    al_train_lab_config c;
    al_train_lab_config_default(&c);
    c.vocab = (int64_t)setting(settings, "vocab"), c.hidden = (int64_t)setting(settings, "hidden");
    c.layers = (int64_t)setting(settings, "layers"), c.heads = (int64_t)setting(settings, "heads");
    c.kv_heads = (int64_t)setting(settings, "kv_heads"), c.ffn = (int64_t)setting(settings, "ffn");
    c.rope_theta = setting(settings, "rope_theta"), c.batch = (int64_t)setting(settings, "batch");
    c.seq = (int64_t)setting(settings, "seq"), c.accum = (int64_t)setting(settings, "accum");
    c.steps = (int64_t)setting(settings, "steps"), c.lr = setting(settings, "lr");
    c.seed = (uint64_t)setting(settings, "seed"), c.eval_every = c.steps, c.data = AL_TRAIN_DATA_TEXT;
    CHECK(setting(settings, "experts") == 0 && setting(settings, "clip") == 1.0 && setting(settings, "weight_decay") == 0.01,
          "the run is not of the Train tab's kind (dense, clip 1, weight decay 0.01): %s", settings);
    al_error err = {0};
    al_train_lab *lab = NULL;
    CHECK(al_train_lab_create(&c, tok_bytes, tok_size, text, text_len, &lab, &err) == AL_OK, "lab: %s", err.msg);
    if (!lab) goto done;
    CHECK(al_train_lab_step(lab, c.steps, &err) == c.steps, "steps: %s", err.msg);
    /* 1. the weights at the end, tensor by tensor, bit for bit */
    uint8_t *image = NULL;
    size_t size = 0;
    al_safetensors *lab_model = NULL;
    CHECK(al_train_lab_file(lab, AL_TRAIN_FILE_MODEL, &image, &size, &err) == AL_OK &&
          al_st_parse_view(image, size, &lab_model, &err) == AL_OK, "the lab's model: %s", err.msg);
    CHECK(lab_model && al_st_count(lab_model) == al_st_count(cli_model), "tensor counts");
    for (int i = 0; lab_model && i < al_st_count(cli_model); i++) {
        al_st_tensor a, b;
        al_st_get(cli_model, i, &a);
        const int found = al_st_find(lab_model, a.name, &b) == AL_OK;
        CHECK(found && a.nbytes == b.nbytes && !memcmp(a.data, b.data, (size_t)a.nbytes),
              "accum %lld: %s differs from the CLI's after %lld steps", (long long)c.accum, a.name, (long long)c.steps);
    }
    /* 2. every step's loss, and the held-out loss at the end (loss.csv: step,loss,lr,grad_norm,
     *    tokens_per_s,held_out_loss) */
    char path[1024];
    snprintf(path, sizeof path, "%s/loss.csv", dir);
    size_t csv_size = 0;
    uint8_t *csv_bytes = read_file(path, &csv_size);
    csv = csv_bytes ? malloc(csv_size + 1) : NULL; /* as text: NUL-terminated */
    if (csv) memcpy(csv, csv_bytes, csv_size), csv[csv_size] = '\0';
    free(csv_bytes);
    float *h = malloc((size_t)(c.steps * AL_TRAIN_COLUMNS) * sizeof *h);
    CHECK(h && al_train_lab_history(lab, 0, h, c.steps * AL_TRAIN_COLUMNS, NULL) == c.steps, "history");
    const char *line = csv ? strchr((const char *)csv, '\n') : NULL;
    int64_t rows = 0;
    double held = NAN;
    while (line && line[1] && h) {
        line++;
        char *end = NULL;
        const long long step = strtoll(line, &end, 10);
        const char *loss_text = end + 1;
        const double loss = strtod(loss_text, &end);
        const size_t loss_len = (size_t)(end - loss_text);
        CHECK(step == rows + 1 && step <= c.steps, "loss.csv row %lld is step %lld", (long long)rows + 1, step);
        if (step != rows + 1 || step > c.steps) break;
        const float mine = h[rows * AL_TRAIN_COLUMNS + AL_TRAIN_LOSS];
        char shown[32];
        snprintf(shown, sizeof shown, "%.6f", (double)mine);
        /* accum 1: the step's loss is one float, printed the same; accum 2: the CLI prints the
         * double mean of two, the lab keeps it as a float (at most half a float step apart) */
        if (c.accum == 1)
            CHECK(strlen(shown) == loss_len && !memcmp(shown, loss_text, loss_len), "step %lld: loss %s, the CLI's %.*s", step,
                  shown, (int)loss_len, loss_text);
        else
            CHECK(fabs((double)mine - loss) <= 1e-6, "step %lld: loss %.9g, the CLI's %.6f", step, (double)mine, loss);
        const char *nl = strchr(line, '\n');
        const char *row_end = nl ? nl : line + strlen(line), *p = row_end;
        while (p > line && p[-1] != ',') p--; /* the last column: empty but at checkpoints */
        if (p < row_end) held = strtod(p, NULL);
        rows++;
        line = nl;
    }
    CHECK(rows == c.steps, "loss.csv has %lld rows, the run %lld steps", (long long)rows, (long long)c.steps);
    CHECK(isfinite(held) && fabs(held - al_train_lab_held_out_loss(lab)) <= 5e-7, "held-out loss %.9g, the CLI's %.6f",
          al_train_lab_held_out_loss(lab), held);
    printf("accum %lld: %lld steps, the weights equal the CLI's bit for bit; loss %.6f → %.6f, held out %.6f\n",
           (long long)c.accum, (long long)c.steps, (double)h[0], (double)h[(c.steps - 1) * AL_TRAIN_COLUMNS], held);
    free(h);
    al_st_free(lab_model);
    al_buffer_free(image);
    al_train_lab_free(lab);
done:
    al_st_free(state), al_st_free(cli_model);
    free(state_bytes), free(model_bytes), free(csv);
}

int main(int argc, char **argv) {
    CHECK(argc == 3 || argc == 4, "usage: test_train_loop tokenizer.json text.txt [RUN_DIR]");
    if (argc != 3 && argc != 4) CHECK_DONE();
    tok_bytes = read_file(argv[1], &tok_size);
    text = (char *)read_file(argv[2], &text_len);
    if (!tok_bytes || !text) CHECK_DONE();
    if (argc == 4) {
        test_against_cli(argv[3]);
    } else {
        test_one_initialiser();
        test_corpus();
        test_schedule_and_accumulation();
        test_text_is_a_corpus();
    }
    free(tok_bytes), free(text);
    CHECK_DONE();
}
