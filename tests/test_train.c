/* test_train.c — the training loop in C. Here: every gradient of the backward pass against
 * central finite differences of the forward pass (float32, a step small enough that no MoE
 * top-k choice flips), for a dense model with QK-Norm and half-split RoPE, one with
 * interleaved RoPE and no QK-Norm, an attention-only one (no FFN) and an MoE model with top-2
 * routing, renormalised weights and the load-balancing loss; that the trainer's forward gives
 * the model's logits and attention weights bit for bit; that 2 and 3 threads train as one,
 * byte for byte; and the refusals. Against PyTorch autograd (losses, every
 * gradient, 20 AdamW steps): tests/train.test.mjs with tests/fixtures/train/. */
#include "attnlab.h"
#include "check.h"
#include "read_file.h"
#include "train/trainer_internal.h" /* al_trainer_logits */

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A small random model: matrices U(-0.15, 0.15), norms 1 ± 0.1. */
static double frand(unsigned *s) {
    *s = *s * 1103515245u + 12345u;
    return (double)((*s >> 8) & 0xffff) / 65536.0 - 0.5;
}

static void fill(al_trainer *t, unsigned seed) {
    const al_model_hparams *hp = al_trainer_hparams(t);
    for (int p = 0; p < AL_MP_COUNT; p++)
        for (int64_t l = 0; l < hp->n_layers; l++)
            for (int64_t e = 0; e < (hp->n_experts ? hp->n_experts : 1); e++) {
                int64_t n = 0, shape[2];
                float *w = al_trainer_param(t, (al_model_param)p, l, e, &n);
                const int dims = al_model_param_shape(hp, (al_model_param)p, shape);
                for (int64_t i = 0; w && i < n; i++) w[i] = dims == 1 ? 1.0f + 0.2f * (float)frand(&seed) : 0.3f * (float)frand(&seed);
            }
}

static void check_gradients(const char *name, al_model_hparams hp, double aux_coef, float h) {
    al_error err = {0};
    al_trainer *t = NULL;
    CHECK(al_trainer_create(&hp, 2, 8, &t, &err) == AL_OK, "%s: create: %s", name, err.msg);
    if (!t) return;
    fill(t, 7);
    int32_t ids[16], labels[16];
    for (int i = 0; i < 16; i++) ids[i] = (i * 7 + 3) % (int)hp.vocab, labels[i] = i % 5 == 3 ? -100 : ids[i];
    float loss = 0.0f;
    CHECK(al_trainer_forward(t, ids, labels, 2, 8, aux_coef, &loss, NULL, NULL, &err) == AL_OK, "%s: %s", name, err.msg);
    al_trainer_zero_grad(t);
    CHECK(al_trainer_backward(t, 1.0f, &err) == AL_OK, "%s: %s", name, err.msg);
    int bad = 0, total = 0;
    for (int p = 0; p < AL_MP_COUNT; p++)
        for (int64_t l = 0; l < hp.n_layers; l++)
            for (int64_t e = 0; e < (hp.n_experts ? hp.n_experts : 1); e++) {
                int64_t n = 0;
                float *w = al_trainer_param(t, (al_model_param)p, l, e, &n);
                const float *g = al_trainer_grad(t, (al_model_param)p, l, e, NULL);
                for (int k = 0; w && n > 0 && k < 3; k++) { /* an attention-only FFN holds nothing */
                    const int64_t i = (k * 977 + 13) % n;
                    const float old = w[i];
                    float lp = 0.0f, lm = 0.0f;
                    w[i] = old + h;
                    al_trainer_param(t, (al_model_param)p, l, e, NULL); /* marks the weights changed */
                    al_trainer_forward(t, ids, labels, 2, 8, aux_coef, &lp, NULL, NULL, &err);
                    w[i] = old - h;
                    al_trainer_param(t, (al_model_param)p, l, e, NULL);
                    al_trainer_forward(t, ids, labels, 2, 8, aux_coef, &lm, NULL, NULL, &err);
                    w[i] = old;
                    al_trainer_param(t, (al_model_param)p, l, e, NULL);
                    const double fd = ((double)lp - lm) / (2.0 * h), an = g[i];
                    total++;
                    if (fabs(fd - an) > 2e-3 + 0.05 * fabs(fd)) {
                        bad++;
                        fprintf(stderr, "%s: weight %d layer %lld expert %lld [%lld]: finite difference %g, backward %g\n",
                                name, p, (long long)l, (long long)e, (long long)i, fd, an);
                    }
                }
            }
    CHECK(bad == 0 && total > 50, "%s: %d of %d gradients differ from finite differences", name, bad, total);
    al_trainer_free(t);
}

static al_model_hparams small(void) {
    al_model_hparams hp = {0};
    hp.vocab = 40, hp.hidden = 16, hp.n_layers = 2, hp.n_heads = 4, hp.n_kv_heads = 2, hp.head_dim = 4;
    hp.ffn_hidden = 24, hp.max_seq = 16, hp.rope_base = 10000.0, hp.eps = 1e-6f, hp.qk_norm = 1, hp.tied = 1;
    return hp;
}

/* The trainer's forward is the model's: on the same weights, a batch of two sequences through
 * the trainer gives, bit for bit, the logits (al_trainer_logits) and every layer's attention
 * weights (al_trainer_attention) that al_model_forward gives each sequence after a reset,
 * through its KV caches. The model's context is the trainer's max_seq, so that both rotate by
 * the same RoPE table. */
static uint32_t bits(float f) {
    uint32_t b;
    memcpy(&b, &f, sizeof b);
    return b;
}

static void check_same_forward(const char *name, al_model_hparams hp) {
    enum { B = 2, T = 8 };
    al_error err = {0};
    al_trainer *t = NULL;
    al_model *m = NULL;
    CHECK(al_trainer_create(&hp, B, T, &t, &err) == AL_OK && al_model_create(&hp, T, T, &m, &err) == AL_OK, "%s: %s",
          name, err.msg);
    const int64_t V = hp.vocab, H = hp.n_heads, L = hp.n_layers;
    float *t_logits = malloc((size_t)(B * T * V) * sizeof(float)), *m_logits = malloc((size_t)(T * V) * sizeof(float));
    float *t_att = malloc((size_t)(B * H * T * T) * sizeof(float)), *m_att = malloc((size_t)(L * H * T * T) * sizeof(float));
    if (!t || !m || !t_logits || !m_logits || !t_att || !m_att) goto done;
    fill(t, 11);
    /* the trainer's weights into the model, weight by weight */
    const int64_t n_refs = al_model_weights(&hp, NULL);
    al_weight_ref *refs = malloc((size_t)n_refs * sizeof *refs);
    al_model_weights(&hp, refs);
    for (int64_t r = 0; refs && r < n_refs; r++) {
        int64_t n = 0, nm = 0;
        const float *w = al_trainer_weight(t, refs[r].p, refs[r].layer, refs[r].expert, &n);
        float *dst = al_model_param_for_write(m, refs[r].p, refs[r].layer, refs[r].expert, &nm);
        CHECK(n == nm && (n == 0 || (w && dst)), "%s: weight %d holds %lld and %lld numbers", name, (int)refs[r].p,
              (long long)n, (long long)nm);
        if (n && w && dst && n == nm) memcpy(dst, w, (size_t)n * sizeof(float));
    }
    free(refs);
    int32_t ids[B * T], labels[B * T];
    for (int i = 0; i < B * T; i++) ids[i] = labels[i] = (i * 11 + 5) % (int)V;
    CHECK(al_trainer_logits(t, ids, B, T, t_logits, B * T * V, &err) == AL_OK, "%s: trainer logits: %s", name, err.msg);
    float loss = 0.0f;
    CHECK(al_trainer_forward(t, ids, labels, B, T, 0.0, &loss, NULL, NULL, &err) == AL_OK, "%s: %s", name, err.msg);
    for (int64_t b = 0; b < B; b++) {
        al_model_reset(m);
        CHECK(al_model_forward(m, ids + b * T, T, m_logits, T, T * V, m_att, L * H * T * T, &err) == AL_OK, "%s: %s", name,
              err.msg);
        int64_t differ = 0, first = -1;
        for (int64_t i = 0; i < T * V; i++)
            if (bits(m_logits[i]) != bits(t_logits[b * T * V + i])) differ++, first = first < 0 ? i : first;
        CHECK(differ == 0, "%s: sequence %lld: %lld of %lld logits differ, the first [%lld]: model %.9g, trainer %.9g", name,
              (long long)b, (long long)differ, (long long)(T * V), (long long)first, first < 0 ? 0.0 : m_logits[first],
              first < 0 ? 0.0 : t_logits[b * T * V + first]);
        for (int64_t l = 0; l < L; l++) {
            CHECK(al_trainer_attention(t, l, t_att, B * H * T * T) == B * H * T * T, "%s: trainer attention", name);
            differ = 0, first = -1;
            for (int64_t i = 0; i < H * T * T; i++) /* trainer [B, H, T, T], model [L, H, T, T] */
                if (bits(m_att[l * H * T * T + i]) != bits(t_att[b * H * T * T + i]))
                    differ++, first = first < 0 ? i : first;
            CHECK(differ == 0, "%s: sequence %lld layer %lld: %lld attention weights differ, the first [%lld]: model %.9g, "
                  "trainer %.9g", name, (long long)b, (long long)l, (long long)differ, (long long)first,
                  first < 0 ? 0.0 : m_att[l * H * T * T + first], first < 0 ? 0.0 : t_att[b * H * T * T + first]);
        }
    }
done:
    free(t_logits), free(m_logits), free(t_att), free(m_att);
    al_model_free(m);
    al_trainer_free(t);
}

static void test_refusals(void) {
    al_model_hparams hp = small();
    al_error err = {0};
    al_trainer *t = NULL;
    CHECK(al_trainer_create(&hp, 0, 8, &t, &err) == AL_ERR_ARG && !t, "batch 0: %s", err.msg);
    CHECK(al_trainer_create(&hp, 2, 99, &t, &err) == AL_ERR_ARG && !t, "seq past the model's: %s", err.msg);
    hp.n_kv_heads = 3;
    CHECK(al_trainer_create(&hp, 2, 8, &t, &err) == AL_ERR_CONFIG && !t, "bad heads: %s", err.msg);
    hp = small();
    CHECK(al_trainer_create(&hp, 2, 8, &t, &err) == AL_OK, "create: %s", err.msg);
    int32_t ids[16] = {0}, labels[16];
    for (int i = 0; i < 16; i++) labels[i] = -100;
    CHECK(al_trainer_forward(t, ids, labels, 2, 8, 0.0, NULL, NULL, NULL, &err) == AL_ERR_ARG &&
              strstr(err.msg, "no label"), "all -100: %s", err.msg);
    labels[3] = 40;
    CHECK(al_trainer_forward(t, ids, labels, 2, 8, 0.0, NULL, NULL, NULL, &err) == AL_ERR_ARG &&
              strstr(err.msg, "label 40"), "label past the vocabulary: %s", err.msg);
    ids[2] = -1;
    CHECK(al_trainer_forward(t, ids, labels, 2, 8, 0.0, NULL, NULL, NULL, &err) == AL_ERR_ARG &&
              strstr(err.msg, "id -1"), "bad id: %s", err.msg);
    CHECK(al_trainer_forward(t, ids, labels, 3, 8, 0.0, NULL, NULL, NULL, &err) == AL_ERR_ARG, "batch past the trainer's");
    al_trainer_free(t);
}

/* A checkpoint's numbers: al_trainer_check names the first weight or moment that cannot be (NaN
 * or infinite, a second moment below 0), and al_trainer_import_state refuses such a state (a
 * negative second moment; NaN and inf are the reader's) naming the tensor and the weight,
 * leaving both moments 0. */
static void test_state_checks(void) {
    al_model_hparams hp = small();
    al_error err = {0};
    al_trainer *t = NULL;
    CHECK(al_trainer_create(&hp, 2, 8, &t, &err) == AL_OK, "create: %s", err.msg);
    if (!t) return;
    fill(t, 3);
    CHECK(al_trainer_check(t, &err) == AL_OK, "a fresh trainer: %s", err.msg);
    float *w = al_trainer_param(t, AL_MP_WK, 1, 0, NULL), *m = NULL, *v = NULL;
    const int64_t n = al_trainer_moments(t, &m, &v);
    w[2] = NAN;
    CHECK(al_trainer_check(t, &err) == AL_ERR_NONFINITE && strstr(err.msg, "model.layers.1.self_attn.k_proj.weight[2] is nan"),
          "a NaN weight: %s", err.msg);
    w[2] = 0.0f;
    m[n - 1] = -INFINITY;
    CHECK(al_trainer_check(t, &err) == AL_ERR_NONFINITE && strstr(err.msg, "adamw.m[") && strstr(err.msg, "is -inf"),
          "an infinite first moment: %s", err.msg);
    m[n - 1] = 0.5f; /* a first moment may be negative; a second may not */
    v[n - 1] = -1e-30f;
    CHECK(al_trainer_check(t, &err) == AL_ERR_NONFINITE && strstr(err.msg, "a second moment is finite and never negative"),
          "a negative second moment: %s", err.msg);
    CHECK(al_trainer_check(t, &err) == AL_ERR_NONFINITE && v[n - 1] == -1e-30f, "the check changed the state");
    /* the same state through a file: refused, the moments left 0 */
    uint8_t *image = NULL;
    size_t size = 0;
    al_safetensors *st = NULL;
    CHECK(al_trainer_export_state(t, NULL, 0, &image, &size, &err) == AL_OK && al_st_parse(image, size, &st, &err) == AL_OK,
          "state image: %s", err.msg);
    if (st) {
        v[n - 1] = 0.25f;
        CHECK(al_trainer_import_state(t, st, 5, &err) == AL_ERR_NONFINITE && strstr(err.msg, "adamw.v[") &&
                  strstr(err.msg, "is -1e-30: a second moment"),
              "import of a negative second moment: %s", err.msg);
        CHECK(v[n - 1] == 0.0f && m[n - 1] == 0.0f && al_trainer_steps(t) == 0, "a refused state left numbers behind");
    }
    al_st_free(st);
    free(image);
    al_trainer_free(t);
}

/* The bigram baseline on counts small enough to work by hand: training ids 0 1 0 1 0 2 (V = 3)
 * give c(0,1) = 2, c(0) = 3 as a first element; the held-out pair (0, 1) then has, with add-k,
 * P = (2 + k) / (3 + 3k), largest at the grid's smallest k (1e-4); interpolated with the
 * add-one unigram P(1) = (2 + 1) / (6 + 3), λ·2/3 + (1 − λ)/3, at most 0.6633 (λ = 0.99). */
static void test_bigram(void) {
    const int32_t train[] = {0, 1, 0, 1, 0, 2}, prev[] = {0}, next[] = {1};
    al_bigram_result r;
    al_error err = {0};
    CHECK(al_bigram_loss(train, 6, prev, next, 1, 3, &r, &err) == AL_OK, "bigram: %s", err.msg);
    const double add_k = -log((2.0 + 1e-4) / (3.0 + 3e-4)), interp = -log(0.99 * 2.0 / 3.0 + 0.01 / 3.0);
    CHECK(fabs(r.add_k_loss - add_k) < 1e-12 && r.k == 1e-4, "add-k loss %.12g (k %g), by hand %.12g", r.add_k_loss, r.k, add_k);
    CHECK(fabs(r.interpolated_loss - interp) < 1e-12 && r.lambda == 0.99, "interpolated %.12g, by hand %.12g",
          r.interpolated_loss, interp);
    CHECK(r.loss == r.add_k_loss, "the better of the two");
    const int32_t bad[] = {0, 5};
    CHECK(al_bigram_loss(bad, 2, prev, next, 1, 3, &r, &err) == AL_ERR_ARG, "an id outside the vocabulary");
}

/* ---- against PyTorch autograd (tests/fixtures/train/, gen_train.py) ------------------------- */

/* The text of a file, NUL-terminated (NULL after a failed CHECK). */
static char *read_text(const char *path) {
    size_t size = 0;
    uint8_t *bytes = read_file(path, &size);
    char *text = bytes ? malloc(size + 1) : NULL;
    if (text) memcpy(text, bytes, size), text[size] = '\0';
    free(bytes);
    return text;
}

/* The number after the n-th (from 0) "key": in text, at or after `from`; NAN if absent. */
static double json_number(const char *text, const char *from, const char *key, int n) {
    char quoted[64];
    snprintf(quoted, sizeof quoted, "\"%s\":", key);
    const char *at = from ? from : text;
    for (int i = 0; at && i <= n; i++) {
        at = strstr(at, quoted);
        if (at && i < n) at += strlen(quoted);
    }
    return at ? strtod(at + strlen(quoted), NULL) : NAN;
}

static al_safetensors *open_st(const char *dir, const char *file, uint8_t **keep) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    size_t size = 0;
    *keep = read_file(path, &size);
    al_safetensors *st = NULL;
    al_error err = {0};
    if (*keep) CHECK(al_st_parse_view(*keep, size, &st, &err) == AL_OK, "%s: %s", path, err.msg);
    return st;
}

static int32_t *read_ids(const al_safetensors *st, const char *name, int64_t *rows, int64_t *cols) {
    al_st_tensor info;
    if (al_st_find(st, name, &info) != AL_OK || info.dtype != AL_DTYPE_I64 || info.ndim != 2) {
        CHECK(0, "no I64 [B, T] tensor %s", name);
        return NULL;
    }
    *rows = info.shape[0], *cols = info.shape[1];
    int32_t *out = malloc((size_t)info.numel * sizeof *out);
    for (int64_t i = 0; out && i < info.numel; i++) {
        int64_t v;
        memcpy(&v, (const uint8_t *)info.data + 8 * i, 8);
        out[i] = (int32_t)v;
    }
    return out;
}

static float scalar(const al_safetensors *st, const char *name) {
    float v = NAN;
    al_error err = {0};
    CHECK(al_st_read_f32(st, name, &v, 1, &err) == AL_OK, "%s: %s", name, err.msg);
    return v;
}

/* The largest difference relative to the largest |expected| (at least 1e-30). */
static double rel_diff(const float *got, const float *want, int64_t n) {
    double worst = 0.0, top = 1e-30;
    for (int64_t i = 0; i < n; i++) top = fabs(want[i]) > top ? fabs(want[i]) : top;
    for (int64_t i = 0; i < n; i++) worst = fmax(worst, fabs((double)got[i] - want[i]) / top);
    return worst;
}

static void test_fixture(const char *dir) {
    char path[512];
    snprintf(path, sizeof path, "%s/config.json", dir);
    char *config = read_text(path);
    snprintf(path, sizeof path, "%s/train.json", dir);
    char *train = read_text(path);
    uint8_t *model_bytes = NULL, *batch_bytes = NULL, *exp_bytes = NULL, *train_bytes = NULL;
    al_safetensors *model = open_st(dir, "model.safetensors", &model_bytes), *batch = open_st(dir, "batch.safetensors", &batch_bytes);
    al_safetensors *expected = open_st(dir, "expected.safetensors", &exp_bytes), *run = open_st(dir, "train.safetensors", &train_bytes);
    al_error err = {0};
    al_model_hparams hp;
    al_trainer *t = NULL;
    int64_t B = 0, T = 0, B2 = 0, T2 = 0;
    int32_t *ids = batch ? read_ids(batch, "input_ids", &B, &T) : NULL, *labels = batch ? read_ids(batch, "labels", &B2, &T2) : NULL;
    if (!config || !train || !model || !expected || !run || !ids || !labels) goto done;
    CHECK(al_minimind_hparams(config, strlen(config), model, &hp, &err) == AL_OK, "%s: %s", dir, err.msg);
    if (strstr(config, "\"rope_interleaved\": true")) hp.rope_style = AL_ROPE_INTERLEAVED;
    const double aux_coef = strstr(config, "\"use_moe\": true") ? json_number(config, NULL, "router_aux_loss_coef", 0) : 0.0;
    CHECK(al_trainer_create(&hp, B, T, &t, &err) == AL_OK, "%s: %s", dir, err.msg);
    if (!t) goto done;
    CHECK(al_trainer_import(t, model, &err) == AL_OK, "%s: %s", dir, err.msg);

    /* 1. one batch: the loss and every gradient */
    float loss = 0.0f, ce = 0.0f, aux = 0.0f;
    CHECK(al_trainer_forward(t, ids, labels, B, T, aux_coef, &loss, &ce, &aux, &err) == AL_OK, "%s: %s", dir, err.msg);
    const float want_loss = scalar(expected, "loss"), want_aux = scalar(expected, "aux_loss");
    CHECK(fabs(loss - want_loss) <= 1e-5 * fmax(1.0, fabs(want_loss)), "%s: loss %.8g, PyTorch %.8g", dir, loss, want_loss);
    CHECK(fabs(aux - want_aux) <= 1e-5 * fmax(1.0, fabs(want_aux)), "%s: aux loss %.8g, PyTorch %.8g", dir, aux, want_aux);
    al_trainer_zero_grad(t);
    CHECK(al_trainer_backward(t, 1.0f, &err) == AL_OK, "%s: %s", dir, err.msg);
    int grads = 0;
    for (int p = 0; p < AL_MP_COUNT; p++)
        for (int64_t l = 0; l < hp.n_layers; l++)
            for (int64_t e = 0; e < (hp.n_experts ? hp.n_experts : 1); e++) {
                int64_t n = 0;
                const float *g = al_trainer_grad(t, (al_model_param)p, l, e, &n);
                if (!g || ((p == AL_MP_EMBED || p == AL_MP_FINAL_NORM || p == AL_MP_LM_HEAD) && (l || e))) continue;
                char name[160] = "grad.";
                al_minimind_param_name(name + 5, sizeof name - 5, (al_model_param)p, l, e);
                float *want = malloc((size_t)(n ? n : 1) * sizeof *want);
                CHECK(want && al_st_read_f32(expected, name, want, n, &err) == AL_OK, "%s: %s", dir, err.msg);
                const double d = want ? rel_diff(g, want, n) : 1.0;
                CHECK(d <= 1e-4, "%s: %s differs from PyTorch's by %.3g of its largest value", dir, name, d);
                grads++;
                free(want);
            }
    CHECK(grads >= 10, "%s: %d gradients compared", dir, grads);

    /* 2. 20 optimizer steps of MiniMind's trainer: accumulation, clipping, AdamW, the schedule */
    CHECK(al_trainer_import(t, model, &err) == AL_OK, "%s: %s", dir, err.msg); /* the same start */
    al_trainer_free(t);
    t = NULL;
    CHECK(al_trainer_create(&hp, B, T, &t, &err) == AL_OK && al_trainer_import(t, model, &err) == AL_OK, "%s", err.msg);
    const char *settings = strstr(train, "\"settings\"");
    al_adamw_params ap = al_adamw_params_default();
    ap.lr = json_number(train, settings, "lr", 0), ap.eps = json_number(train, settings, "eps", 0);
    ap.weight_decay = json_number(train, settings, "weight_decay", 0), ap.clip = json_number(train, settings, "clip", 0);
    const int64_t accum = (int64_t)json_number(train, settings, "accumulation_steps", 0);
    const int64_t total = (int64_t)json_number(train, settings, "total_steps", 0);
    const int64_t steps = (int64_t)json_number(train, settings, "optimizer_steps", 0);
    const char *list = strstr(train, "\"steps\":");
    CHECK(accum >= 1 && total >= 1 && steps >= 20 && list, "%s: train.json settings", dir);
    for (int64_t s = 0; list && s < steps; s++) {
        const char *entry = list;
        char key[32];
        snprintf(key, sizeof key, "\"step\": %lld,", (long long)(s + 1));
        entry = strstr(list, key);
        if (!entry) {
            CHECK(0, "%s: train.json has no step %lld", dir, (long long)(s + 1));
            break;
        }
        double step_loss = 0.0;
        al_trainer_zero_grad(t);
        for (int64_t a = 0; a < accum; a++) {
            char name[32];
            int64_t b = 0, tt = 0;
            snprintf(name, sizeof name, "ids.%lld", (long long)(s * accum + a));
            int32_t *mi = read_ids(run, name, &b, &tt);
            snprintf(name, sizeof name, "labels.%lld", (long long)(s * accum + a));
            int32_t *ml = read_ids(run, name, &b, &tt);
            float l = 0.0f;
            if (mi && ml && al_trainer_forward(t, mi, ml, b, tt, aux_coef, &l, NULL, NULL, &err) == AL_OK)
                al_trainer_backward(t, 1.0f / (float)accum, &err);
            step_loss += l / (double)accum;
            free(mi), free(ml);
        }
        const int64_t schedule_step = (int64_t)json_number(train, entry, "schedule_step", 0);
        const double want_lr = json_number(train, entry, "lr", 0), want_step_loss = json_number(train, entry, "loss", 0);
        const double want_norm = json_number(train, entry, "grad_norm", 0);
        ap.lr = al_lr_schedule(json_number(train, settings, "lr", 0), schedule_step, total);
        CHECK(fabs(ap.lr - want_lr) <= 1e-12, "%s: step %lld lr %.12g, MiniMind's %.12g", dir, (long long)(s + 1), ap.lr, want_lr);
        float norm = 0.0f;
        CHECK(al_trainer_step(t, &ap, &norm, &err) == AL_OK, "%s: %s", dir, err.msg);
        CHECK(fabs(step_loss - want_step_loss) <= 1e-4 * fmax(1.0, fabs(want_step_loss)),
              "%s: step %lld loss %.8g, PyTorch %.8g", dir, (long long)(s + 1), step_loss, want_step_loss);
        CHECK(fabs(norm - want_norm) <= 1e-4 * fmax(1.0, want_norm), "%s: step %lld gradient norm %.8g, PyTorch %.8g", dir,
              (long long)(s + 1), norm, want_norm);
    }
    /* the weights after the run */
    for (int p = 0; p < AL_MP_COUNT; p++)
        for (int64_t l = 0; l < hp.n_layers; l++)
            for (int64_t e = 0; e < (hp.n_experts ? hp.n_experts : 1); e++) {
                int64_t n = 0;
                const float *w = al_trainer_weight(t, (al_model_param)p, l, e, &n);
                if (!w || ((p == AL_MP_EMBED || p == AL_MP_FINAL_NORM || p == AL_MP_LM_HEAD) && (l || e))) continue;
                char name[160] = "final.";
                al_minimind_param_name(name + 6, sizeof name - 6, (al_model_param)p, l, e);
                float *want = malloc((size_t)(n ? n : 1) * sizeof *want);
                CHECK(want && al_st_read_f32(run, name, want, n, &err) == AL_OK, "%s: %s", dir, err.msg);
                /* 1e-3: AdamW divides by √v, so a gradient near 0 that differs in its last digits can
                 * move its weight by a good part of lr in another direction; 20 such steps leave a
                 * few 1e-4 of the largest weight (the losses above stay within 1e-4) */
                const double d = want ? rel_diff(w, want, n) : 1.0;
                CHECK(d <= 1e-3, "%s: after the run %s differs from PyTorch's by %.3g of its largest value", dir, name, d);
                free(want);
            }
done:
    al_trainer_free(t);
    free(ids), free(labels), free(config), free(train);
    al_st_free(model), al_st_free(batch), al_st_free(expected), al_st_free(run);
    free(model_bytes), free(batch_bytes), free(exp_bytes), free(train_bytes);
}

/* Training on threads is training on one, bit for bit: two steps (forward, backward,
 * clipping and AdamW) of the same model on 1, 2 and 3 threads give the same losses, gradient
 * norms, weights, gradients and AdamW moments, byte for byte. The shapes are large enough that
 * every kind of product is split (each above AL_POOL_MIN_MACS with at least two pairs of panels
 * per thread: dx, dW of out <= in, the head's transposed dW of out > in, each head's scores'
 * gradient at seq 128), and 3 threads share 4 pairs of panels unevenly. */
static void check_threads(const char *name, al_model_hparams hp) {
    enum { B = 1, T = 128, STEPS = 2, RUNS = 3 };
    al_error err = {0};
    float loss[RUNS][STEPS], norm[RUNS][STEPS];
    float *blocks[RUNS][4] = {{0}};
    int64_t n = 0;
    static int32_t ids[B * T], labels[B * T];
    for (int i = 0; i < B * T; i++) ids[i] = (i * 37 + 11) % (int)hp.vocab, labels[i] = i % 9 == 4 ? -100 : ids[i];
    for (int r = 0; r < RUNS; r++) {
        al_trainer *t = NULL;
        CHECK(al_trainer_create(&hp, B, T, &t, &err) == AL_OK, "%s: create: %s", name, err.msg);
        if (!t) return;
        CHECK(al_trainer_set_threads(t, r + 1, &err) == AL_OK && al_trainer_threads(t) == r + 1, "%s: %d threads: %s",
              name, r + 1, err.msg);
        fill(t, 11);
        al_adamw_params p = al_adamw_params_default();
        p.lr = 1e-2; /* large steps: a difference in any weight grows visible */
        for (int s = 0; s < STEPS; s++) {
            al_trainer_zero_grad(t);
            CHECK(al_trainer_forward(t, ids, labels, B, T, 0.1, &loss[r][s], NULL, NULL, &err) == AL_OK &&
                  al_trainer_backward(t, 1.0f, &err) == AL_OK && al_trainer_step(t, &p, &norm[r][s], &err) == AL_OK,
                  "%s: %d threads, step %d: %s", name, r + 1, s, err.msg);
        }
        float *w, *g, *m, *v;
        n = al_trainer_buffers(t, &w, &g, &m, &v);
        const float *src[4] = {w, g, m, v};
        for (int k = 0; k < 4; k++) {
            blocks[r][k] = malloc((size_t)n * sizeof(float));
            if (blocks[r][k]) memcpy(blocks[r][k], src[k], (size_t)n * sizeof(float));
        }
        al_trainer_free(t);
    }
    static const char *const what[4] = {"weights", "gradients", "first moments", "second moments"};
    for (int r = 1; r < RUNS; r++) {
        CHECK(!memcmp(loss[r], loss[0], sizeof loss[0]) && !memcmp(norm[r], norm[0], sizeof norm[0]),
              "%s: %d threads: losses %.9g %.9g, gradient norms %.9g %.9g; on one %.9g %.9g, %.9g %.9g", name, r + 1,
              loss[r][0], loss[r][1], norm[r][0], norm[r][1], loss[0][0], loss[0][1], norm[0][0], norm[0][1]);
        for (int k = 0; k < 4; k++) {
            if (!blocks[r][k] || !blocks[0][k]) continue;
            int64_t differ = 0, first = -1;
            for (int64_t i = 0; i < n; i++)
                if (bits(blocks[r][k][i]) != bits(blocks[0][k][i])) differ++, first = first < 0 ? i : first;
            CHECK(differ == 0, "%s: %d threads: %lld of %lld %s differ from one thread's (the first at %lld: %.9g, not %.9g)",
                  name, r + 1, (long long)differ, (long long)n, what[k], (long long)first,
                  first >= 0 ? blocks[r][k][first] : 0.0, first >= 0 ? blocks[0][k][first] : 0.0);
        }
    }
    for (int r = 0; r < RUNS; r++)
        for (int k = 0; k < 4; k++) free(blocks[r][k]);
}

int main(int argc, char **argv) {
    al_model_hparams hp = small();
    check_gradients("dense, QK-Norm, half-split RoPE, tied", hp, 0.0, 1e-2f);
    hp.qk_norm = 0, hp.rope_style = AL_ROPE_INTERLEAVED, hp.tied = 0, hp.n_kv_heads = 4;
    check_gradients("dense, interleaved RoPE, no QK-Norm, MHA, untied", hp, 0.0, 1e-2f);
    hp = small();
    hp.ffn_hidden = 0;
    check_gradients("attention-only (no FFN), QK-Norm, tied", hp, 0.0, 1e-2f);
    hp = small();
    hp.n_experts = 3, hp.top_k = 2, hp.moe_ffn_hidden = 20, hp.norm_topk_prob = 1, hp.tied = 0;
    check_gradients("MoE top-2 of 3, renormalised, load-balancing loss", hp, 0.1, 1e-3f);
    hp = small();
    check_same_forward("trainer = model: QK-Norm, half-split RoPE, GQA, tied", hp);
    hp.qk_norm = 0, hp.rope_style = AL_ROPE_INTERLEAVED, hp.tied = 0, hp.n_kv_heads = 4;
    check_same_forward("trainer = model: dense, interleaved RoPE, no QK-Norm, untied", hp);
    hp = small();
    hp.ffn_hidden = 0;
    check_same_forward("trainer = model: attention-only", hp);
    hp = small();
    hp.n_experts = 3, hp.top_k = 2, hp.moe_ffn_hidden = 20, hp.norm_topk_prob = 1, hp.tied = 0;
    check_same_forward("trainer = model: MoE top-2 of 3", hp);
    hp.top_k = 1, hp.norm_topk_prob = 0;
    check_same_forward("trainer = model: MoE top-1 of 3", hp);
    hp = small();
    hp.vocab = 300, hp.hidden = 128, hp.n_layers = 1, hp.n_heads = 4, hp.n_kv_heads = 2, hp.head_dim = 32;
    hp.ffn_hidden = 256, hp.max_seq = 128;
    check_threads("threads: dense, QK-Norm, GQA, tied", hp);
    hp.n_experts = 3, hp.top_k = 2, hp.moe_ffn_hidden = 128, hp.norm_topk_prob = 1, hp.tied = 0;
    check_threads("threads: MoE top-2 of 3, untied", hp);
    test_refusals();
    test_state_checks();
    test_bigram();
    for (int i = 1; i < argc; i++) test_fixture(argv[i]);
    CHECK(argc > 1, "no fixture folders given");
    CHECK_DONE();
}
