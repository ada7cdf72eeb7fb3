/* test_experiments.c — the experiments on the one forward, held to their invariants on real
 * models (stories260K; a MiniMind MoE folder): no head ablated is the plain run bit for bit, every
 * head of a block ablated is o_proj's weight zeroed (bit for bit, decoding with the caches too),
 * the logit lens' last row is the logits bit for bit, the attribution's parts sum to the target's
 * logit, a run from block l on the clean stream entering it is the clean run bit for bit, the
 * patches from block l give the numbers of whole forwards bit for bit, and bad arguments are
 * refused with a message naming the value. The numbers themselves are checked against the
 * PyTorch reference's hooks by tests/cli-experiments.test.mjs.
 * usage: test_experiments STORIES260K.bin MINIMIND_FOLDER */
#include "attnlab.h"
#include "check.h"
#include "read_file.h"
#include "model/forward.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const int32_t IDS[] = {1, 403, 407, 261, 378, 432, 383, 286, 261, 376, 298, 315, 421, 395, 317, 426,
                              338, 401, 396, 267, 337, 410, 408, 419};
enum { N = sizeof IDS / sizeof IDS[0] };
/* The prompt of the model under test (IDS within its vocabulary) and a second one of the same
 * length: the first with three tokens changed. */
static int32_t PROMPT[N], CORRUPT[N];

static void set_prompts(int64_t vocab) {
    for (int64_t i = 0; i < N; i++) PROMPT[i] = CORRUPT[i] = (int32_t)(IDS[i] % vocab);
    CORRUPT[4] = (int32_t)(300 % vocab), CORRUPT[9] = (int32_t)(333 % vocab), CORRUPT[17] = (int32_t)(444 % vocab);
}

static al_model *load_llama2c(const uint8_t *bytes, size_t size, int64_t max_step) {
    al_error err = {0};
    al_model *m = NULL;
    CHECK(al_model_from_llama2c(bytes, size, 0, max_step, &m, &err) == AL_OK, "load: %s", err.msg);
    return m;
}

static float *logits_of(al_model *m, const int32_t *ids, int64_t n) {
    const int64_t V = al_model_get_hparams(m)->vocab;
    float *logits = malloc((size_t)(n * V) * sizeof(float));
    al_error err = {0};
    al_model_reset(m);
    CHECK(logits && al_model_forward(m, ids, n, logits, n, n * V, NULL, 0, &err) == AL_OK, "forward: %s", err.msg);
    return logits;
}

/* Ablation: off and back on is the plain run; a whole block off is its o_proj zeroed, in one
 * pass and token by token through the caches; a bad head is refused and changes nothing. */
static void test_ablation(const uint8_t *bytes, size_t size) {
    al_model *m = load_llama2c(bytes, size, N), *zeroed = load_llama2c(bytes, size, N);
    if (!m || !zeroed) return;
    const al_model_hparams *hp = al_model_get_hparams(m);
    const int64_t V = hp->vocab, H = hp->n_heads;
    al_error err = {0};
    float *plain = logits_of(m, PROMPT, N);
    const int32_t some[] = {1, 3, 4, 0, 1, 3};
    CHECK(al_model_set_ablation(m, some, 3, &err) == AL_OK, "ablate: %s", err.msg);
    int32_t back[8];
    CHECK(al_model_ablation(m, back, 4) == 2 && back[0] == 1 && back[1] == 3 && back[2] == 4 && back[3] == 0,
          "the ablated heads read back in order, the one named twice once");
    float *ablated = logits_of(m, PROMPT, N);
    CHECK(memcmp(plain, ablated, (size_t)(N * V) * sizeof(float)) != 0, "ablating three heads changes nothing");
    CHECK(al_model_set_ablation(m, NULL, 0, &err) == AL_OK, "clear: %s", err.msg);
    float *cleared = logits_of(m, PROMPT, N);
    CHECK(memcmp(plain, cleared, (size_t)(N * V) * sizeof(float)) == 0, "no head ablated is not the plain run");

    /* Every head of block 2 off = o_proj of block 2 zeroed. */
    int32_t block[2 * 8];
    for (int64_t h = 0; h < H; h++) block[2 * h] = 2, block[2 * h + 1] = (int32_t)h;
    CHECK(al_model_set_ablation(m, block, H, &err) == AL_OK, "ablate block 2: %s", err.msg);
    const int64_t numel = al_model_read_param(zeroed, AL_MP_WO, 2, 0, NULL, 0);
    float *wo = calloc((size_t)numel, sizeof(float));
    CHECK(wo && al_model_set_param(zeroed, AL_MP_WO, 2, 0, wo, AL_WEIGHTS_F32, numel, &err) == AL_OK, "o_proj zeroed: %s",
          err.msg);
    free(wo);
    float *off = logits_of(m, PROMPT, N), *zero_wo = logits_of(zeroed, PROMPT, N);
    CHECK(memcmp(off, zero_wo, (size_t)(N * V) * sizeof(float)) == 0, "block 2 ablated is not its o_proj zeroed");
    /* The ablated model's own caches: token by token, the same logits. */
    al_model_reset(m);
    float *row = malloc((size_t)V * sizeof(float));
    int same = 1;
    for (int64_t t = 0; t < N; t++) {
        CHECK(al_model_forward(m, &PROMPT[t], 1, row, 1, V, NULL, 0, &err) == AL_OK, "step: %s", err.msg);
        same &= memcmp(row, off + t * V, (size_t)V * sizeof(float)) == 0;
    }
    CHECK(same, "the ablated model decoding with its caches differs from its one pass");

    /* Refusals name the value and leave the ablation as it was. */
    const int32_t bad_layer[] = {5, 0}, bad_head[] = {0, 8}, neg[] = {-1, 0};
    CHECK(al_model_set_ablation(m, bad_layer, 1, &err) == AL_ERR_ARG && strstr(err.msg, "layer 5"), "layer 5: %s", err.msg);
    CHECK(al_model_set_ablation(m, bad_head, 1, &err) == AL_ERR_ARG && strstr(err.msg, "head 8"), "head 8: %s", err.msg);
    CHECK(al_model_set_ablation(m, neg, 1, &err) == AL_ERR_ARG && strstr(err.msg, "layer -1"), "layer -1: %s", err.msg);
    CHECK(al_model_set_ablation(m, block, -1, &err) == AL_ERR_ARG, "a negative count");
    CHECK(al_model_ablation(m, NULL, 0) == H, "a refused list changed the ablation");
    free(plain), free(ablated), free(cleared), free(off), free(zero_wo), free(row);
    al_model_free(m);
    al_model_free(zeroed);
}

/* The lens' last row is the logits, bit for bit, and its first the head on the embeddings; the
 * summary's rows are each lens row's argmax. The model is left holding the ids. */
static void test_lens(al_model *m, const char *what) {
    const al_model_hparams *hp = al_model_get_hparams(m);
    const int64_t V = hp->vocab, L = hp->n_layers, E = hp->hidden;
    al_error err = {0};
    float *logits = logits_of(m, PROMPT, N);
    float *lens = malloc((size_t)((L + 1) * N * V) * sizeof(float));
    CHECK(al_model_logit_lens(m, PROMPT, N, lens, (L + 1) * N * V, &err) == AL_OK, "%s lens: %s", what, err.msg);
    CHECK(memcmp(lens + L * N * V, logits, (size_t)(N * V) * sizeof(float)) == 0, "%s: the lens' last row is not the logits", what);
    CHECK(al_model_len(m) == N, "%s: the lens leaves %lld tokens in the caches", what, (long long)al_model_len(m));
    /* Row 0: RMSNorm(embedding) · headᵀ, in double. */
    float *emb = malloc((size_t)(V * E) * sizeof(float)), *head = malloc((size_t)(V * E) * sizeof(float));
    const float *w = al_model_get_param(m, AL_MP_FINAL_NORM, 0, 0, NULL);
    CHECK(emb && head && al_model_read_param(m, AL_MP_EMBED, 0, 0, emb, V * E) == V * E &&
              al_model_read_param(m, hp->tied ? AL_MP_EMBED : AL_MP_LM_HEAD, 0, 0, head, V * E) == V * E,
          "%s: the embedding and the head read out", what);
    double worst = 0.0;
    for (int64_t s = 0; s < N; s += 7) {
        const float *x = emb + (int64_t)PROMPT[s] * E;
        double ss = 0.0;
        for (int64_t i = 0; i < E; i++) ss += (double)x[i] * x[i];
        const double rms = sqrt(ss / (double)E + hp->eps);
        for (int64_t v = 0; v < V; v++) {
            double acc = 0.0;
            for (int64_t i = 0; i < E; i++) acc += w[i] * x[i] / rms * head[v * E + i];
            worst = fmax(worst, fabs(acc - lens[s * V + v]));
        }
    }
    CHECK(worst < 1e-4, "%s: the lens' first row is not the head on the embeddings (off by %g)", what, worst);
    free(emb), free(head);
    int32_t *top = malloc((size_t)((L + 1) * N) * sizeof(int32_t));
    float *prob = malloc((size_t)((L + 1) * N) * sizeof(float));
    CHECK(al_model_logit_lens_top(m, PROMPT, N, top, prob, (L + 1) * N, &err) == AL_OK, "%s lens top: %s", what, err.msg);
    int argmax = 1, probs = 1;
    for (int64_t r = 0; r < (L + 1) * N; r++) {
        argmax &= top[r] == al_sample_greedy(lens + r * V, V);
        double z = 0.0;
        for (int64_t v = 0; v < V; v++) z += exp((double)lens[r * V + v] - lens[r * V + top[r]]);
        probs &= fabs(prob[r] - 1.0 / z) < 1e-6;
    }
    CHECK(argmax && probs, "%s: the lens' summary is not each row's argmax and its probability", what);
    CHECK(al_model_logit_lens(m, PROMPT, N, lens, (L + 1) * N * V - 1, &err) == AL_ERR_CAPACITY, "%s: a short lens buffer", what);
    free(logits), free(lens), free(top), free(prob);
}

/* The parts sum to the target's logit at each position, within 1e-5 of their magnitudes. */
static void test_dla(al_model *m, const char *what, int32_t target) {
    const al_model_hparams *hp = al_model_get_hparams(m);
    const int64_t V = hp->vocab, L = hp->n_layers, H = hp->n_heads, rows = L * H + 1 + L;
    al_error err = {0};
    float *logits = logits_of(m, PROMPT, N);
    float *parts = malloc((size_t)(rows * N) * sizeof(float));
    CHECK(al_model_dla(m, PROMPT, N, target, parts, rows * N, &err) == AL_OK, "%s dla: %s", what, err.msg);
    double worst = 0.0;
    for (int64_t s = 0; s < N; s++) {
        double sum = 0.0, mag = 0.0;
        for (int64_t r = 0; r < rows; r++) sum += parts[r * N + s], mag += fabs(parts[r * N + s]);
        worst = fmax(worst, fabs(sum - logits[s * V + target]) / mag);
    }
    CHECK(worst < 1e-5, "%s: the attribution's parts miss the logit by %g of their magnitudes", what, worst);
    int32_t off[2];
    if (al_model_ablation(m, off, 1) > 0) /* an ablated head writes nothing */
        CHECK(parts[(off[0] * H + off[1]) * N] == 0.0f, "%s: an ablated head has a share", what);
    CHECK(al_model_dla(m, PROMPT, N, (int32_t)V, parts, rows * N, &err) == AL_ERR_ARG && strstr(err.msg, "target"),
          "%s: a target outside the vocabulary: %s", what, err.msg);
    free(logits), free(parts);
}

/* Patching: from block l on the clean stream is the clean run; the patches from block l are the
 * whole forwards' numbers; a prompt patched into itself changes nothing; a one-token prompt's
 * stream patched at block 0 is the clean run. */
static void test_patch(al_model *m, const char *what, int32_t answer, int32_t wrong) {
    const al_model_hparams *hp = al_model_get_hparams(m);
    const int64_t V = hp->vocab, L = hp->n_layers, H = hp->n_heads, E = hp->hidden;
    al_error err = {0};
    /* 1. The probe's entry point: blocks l .. L-1 on the clean stream entering l. */
    float *stream = malloc((size_t)((L + 1) * N * E) * sizeof(float)), *from = malloc((size_t)(N * V) * sizeof(float));
    float *clean = logits_of(m, PROMPT, N);
    al_model_probe p;
    memset(&p, 0, sizeof p);
    p.patch_layer = p.resid_layer = -1;
    p.stream = stream;
    al_model_reset(m);
    CHECK(al_model_forward_probe(m, PROMPT, N, &p, NULL, 0, 0, &err) == AL_OK, "%s probe: %s", what, err.msg);
    for (int64_t l = 0; l < L; l++) {
        al_model_probe q;
        memset(&q, 0, sizeof q);
        q.patch_layer = q.resid_layer = -1;
        q.first_layer = l, q.x0 = stream + l * N * E;
        al_model_reset(m);
        CHECK(al_model_forward_probe(m, CORRUPT, N, &q, from, N, N * V, &err) == AL_OK, "%s from %lld: %s", what,
              (long long)l, err.msg);
        CHECK(memcmp(from, clean, (size_t)(N * V) * sizeof(float)) == 0,
              "%s: the clean stream entering block %lld, run from there, is not the clean run", what, (long long)l);
        CHECK(al_model_len(m) == (l ? 0 : N), "%s: a run from block %lld leaves the caches at %lld", what, (long long)l,
              (long long)al_model_len(m));
    }
    /* 2. From block l and whole forwards: the same numbers. */
    const int64_t size = L * H + L * N + 2;
    float *fast = malloc((size_t)size * sizeof(float)), *full = malloc((size_t)size * sizeof(float));
    CHECK(al_model_patch(m, PROMPT, CORRUPT, N, answer, wrong, 0, fast, size, &err) == AL_OK, "%s patch: %s", what, err.msg);
    CHECK(al_model_patch(m, PROMPT, CORRUPT, N, answer, wrong, 1, full, size, &err) == AL_OK, "%s full: %s", what, err.msg);
    CHECK(memcmp(fast, full, (size_t)size * sizeof(float)) == 0, "%s: patches from block l differ from whole forwards", what);
    CHECK(fast[size - 2] == clean[(N - 1) * V + answer] - clean[(N - 1) * V + wrong], "%s: the clean metric", what);
    CHECK(fast[size - 2] != fast[size - 1], "%s: the two prompts have the same metric", what);
    /* The clean stream at the last block's last position: that position's stream is the clean
     * one up to the last block's attention, which still reads the corrupted keys before it. */
    int recovered = 0, moved = 0;
    for (int64_t l = 0; l < L; l++) recovered |= fast[L * H + l * N + N - 1] != fast[size - 1];
    for (int64_t i = 0; i < L * H; i++) moved |= fast[i] != fast[size - 1];
    CHECK(recovered, "%s: patching the last position's stream changes nothing", what);
    CHECK(moved, "%s: patching a head's output changes nothing", what);
    /* 3. Into itself: every patch is the clean metric. */
    CHECK(al_model_patch(m, PROMPT, PROMPT, N, answer, wrong, 0, fast, size, &err) == AL_OK, "%s self: %s", what, err.msg);
    int same = 1;
    for (int64_t i = 0; i < size; i++) same &= fast[i] == fast[size - 1];
    CHECK(same, "%s: a prompt patched into itself changes its metric", what);
    /* 4. One token: its whole stream entering block 0 from the clean run is the clean run. */
    CHECK(al_model_patch(m, PROMPT + 3, CORRUPT + 3, 1, answer, wrong, 0, fast, L * H + L + 2, &err) == AL_OK, "%s one: %s",
          what, err.msg);
    CHECK(fast[L * H] == fast[L * H + L], "%s: the one token's clean stream at block 0 is not the clean run", what);
    CHECK(al_model_len(m) == 0, "%s: patching leaves tokens in the caches", what);
    /* 5. Refusals. */
    CHECK(al_model_patch(m, PROMPT, CORRUPT, N, answer, answer, 0, fast, size, &err) == AL_ERR_ARG && strstr(err.msg, "same"),
          "%s: answer == wrong: %s", what, err.msg);
    CHECK(al_model_patch(m, PROMPT, CORRUPT, N, -1, wrong, 0, fast, size, &err) == AL_ERR_ARG && strstr(err.msg, "answer -1"),
          "%s: answer -1: %s", what, err.msg);
    CHECK(al_model_patch(m, PROMPT, CORRUPT, N, answer, (int32_t)V, 0, fast, size, &err) == AL_ERR_ARG &&
          strstr(err.msg, "wrong"), "%s: wrong = vocab: %s", what, err.msg);
    CHECK(al_model_patch(m, PROMPT, CORRUPT, N, answer, wrong, 0, fast, size - 1, &err) == AL_ERR_CAPACITY, "%s: short", what);
    int32_t bad[N];
    memcpy(bad, CORRUPT, sizeof bad);
    bad[5] = (int32_t)V;
    CHECK(al_model_patch(m, PROMPT, bad, N, answer, wrong, 0, fast, size, &err) == AL_ERR_ARG && strstr(err.msg, "corrupted"),
          "%s: an id outside the vocabulary: %s", what, err.msg);
    free(stream), free(from), free(clean), free(fast), free(full);
}

static float *trainer_weight(void *ctx, const al_weight_ref *ref, int64_t *numel) {
    return al_trainer_param((al_trainer *)ctx, ref->p, ref->layer, ref->expert, numel);
}

/* The trainer's batch forward with a block's heads all off: q, k and v of that block get no
 * gradient (nothing flows back through a head that writes zeros), o_proj none (its input is
 * zero), and the loss is that of o_proj zeroed; the other blocks' gradients stay. */
static void test_trainer_ablation(void) {
    al_model_hparams hp = {0};
    hp.vocab = 32, hp.hidden = 16, hp.n_layers = 2, hp.n_heads = 4, hp.n_kv_heads = 2, hp.head_dim = 4;
    hp.ffn_hidden = 24, hp.max_seq = 16, hp.rope_base = 10000.0, hp.eps = 1e-6f, hp.qk_norm = 1, hp.tied = 1;
    al_trainer *t = NULL;
    al_error err = {0};
    if (al_trainer_create(&hp, 1, 8, &t, &err) != AL_OK || al_weights_init(&hp, 3, trainer_weight, t, &err) != AL_OK) {
        CHECK(0, "trainer: %s", err.msg);
        al_trainer_free(t);
        return;
    }
    const int32_t ids[8] = {1, 5, 9, 2, 7, 30, 4, 11}, off[] = {0, 0, 0, 1, 0, 2, 0, 3};
    float plain = 0.0f, ablated = 0.0f, zeroed = 0.0f;
    CHECK(al_trainer_set_ablation(t, off, 4, &err) == AL_OK, "trainer ablation: %s", err.msg);
    al_trainer_zero_grad(t);
    CHECK(al_trainer_forward(t, ids, ids, 1, 8, 0.0, &ablated, NULL, NULL, &err) == AL_OK &&
          al_trainer_backward(t, 1.0f, &err) == AL_OK, "ablated step: %s", err.msg);
    const al_model_param none[] = {AL_MP_WQ, AL_MP_WK, AL_MP_WV, AL_MP_WO};
    for (int i = 0; i < 4; i++) {
        int64_t numel = 0;
        const float *g0 = al_trainer_grad(t, none[i], 0, 0, &numel), *g1 = al_trainer_grad(t, none[i], 1, 0, NULL);
        double sum0 = 0.0, sum1 = 0.0;
        for (int64_t j = 0; j < numel; j++) sum0 += fabs(g0[j]), sum1 += fabs(g1[j]);
        CHECK(sum0 == 0.0 && sum1 > 0.0, "weight %d: block 0's gradient %g (want 0), block 1's %g", i, sum0, sum1);
    }
    CHECK(al_trainer_set_ablation(t, NULL, 0, &err) == AL_OK, "clear: %s", err.msg);
    CHECK(al_trainer_forward(t, ids, ids, 1, 8, 0.0, &plain, NULL, NULL, &err) == AL_OK, "plain: %s", err.msg);
    int64_t numel = 0;
    float *wo = al_trainer_param(t, AL_MP_WO, 0, 0, &numel);
    memset(wo, 0, (size_t)numel * sizeof(float));
    CHECK(al_trainer_forward(t, ids, ids, 1, 8, 0.0, &zeroed, NULL, NULL, &err) == AL_OK, "zeroed: %s", err.msg);
    CHECK(ablated == zeroed && ablated != plain, "trainer loss: ablated %.9g, o_proj zeroed %.9g, plain %.9g", ablated,
          zeroed, plain);
    const int32_t bad[] = {2, 0};
    CHECK(al_trainer_set_ablation(t, bad, 1, &err) == AL_ERR_ARG && strstr(err.msg, "layer 2"), "layer 2: %s", err.msg);
    al_trainer_free(t);
}

/* A MiniMind folder: config.json and model.safetensors. */
static al_model *load_minimind(const char *dir) {
    char path[1024];
    size_t config_size = 0, size = 0;
    snprintf(path, sizeof path, "%s/config.json", dir);
    uint8_t *config = read_file(path, &config_size);
    snprintf(path, sizeof path, "%s/model.safetensors", dir);
    uint8_t *bytes = config ? read_file(path, &size) : NULL;
    al_model *m = NULL;
    al_error err = {0};
    if (bytes)
        CHECK(al_model_load(bytes, size, AL_MODEL_FILE_SAFETENSORS, (const char *)config, config_size, NULL, 64, 8, &m,
                            &err) == AL_OK, "%s: %s", dir, err.msg);
    free(config), free(bytes);
    return m;
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: test_experiments STORIES260K.bin MINIMIND_FOLDER\n");
        return 2;
    }
    size_t size = 0;
    uint8_t *bytes = read_file(argv[1], &size);
    if (bytes) {
        test_ablation(bytes, size);
        /* in pieces of 7 tokens (max_step), as the page's lab runs them */
        al_model *m = load_llama2c(bytes, size, 7);
        set_prompts(512);
        if (m) {
            test_lens(m, "stories260K");
            test_dla(m, "stories260K", 261);
            test_patch(m, "stories260K", 261, 300);
            const int32_t off[] = {0, 2, 3, 5};
            CHECK(al_model_set_ablation(m, off, 2, NULL) == AL_OK, "ablate");
            test_lens(m, "stories260K ablated");
            test_dla(m, "stories260K ablated", 261);
            test_patch(m, "stories260K ablated", 261, 300);
        }
        al_model_free(m);
    }
    free(bytes);
    test_trainer_ablation();
    al_model *moe = load_minimind(argv[2]);
    if (moe) {
        set_prompts(al_model_get_hparams(moe)->vocab);
        test_lens(moe, "MoE");
        test_dla(moe, "MoE", 7);
        test_patch(moe, "MoE", 7, 11);
    }
    al_model_free(moe);
    CHECK_DONE();
}
