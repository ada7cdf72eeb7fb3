/* test_model.c — the whole decoder on a real checkpoint (stories260K, llama2.c's format):
 * decoding token by token with the KV caches gives the same logits, to the bit, as one pass over
 * the whole sequence and as passes in pieces (each query sees the same keys and every product
 * is summed in the same order, so there is nothing to round differently); the attention the
 * pass captures is causal and sums to 1; and a checkpoint that lies about itself is refused
 * with a message; an attention-only shape (ffn_hidden 0) keeps its empty FFN weights in their
 * place and is refused where a width is needed (MoE's experts, llama2.c's files). The numbers
 * themselves are checked against an independent PyTorch reference by tests/llama2c.test.mjs
 * (and tests/minimind.test.mjs, attention-only included). al_model_flops_causal is checked against PyTorch's profiler on the
 * reference model (tests/fixtures/model_flops/flops.txt). */
#include "attnlab.h"
#include "check.h"
#include "read_file.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const int32_t IDS[] = {1, 403, 407, 261, 378, 432, 383, 286, 261, 376, 298, 315, 421, 395, 317, 426,
                              338, 401, 396, 267, 337, 410, 408, 419, 292, 411, 322, 265, 282, 295, 433, 426,
                              385, 328, 432, 358, 394, 261, 370, 432};
enum { N = sizeof IDS / sizeof IDS[0] };

static al_model *load(const uint8_t *bytes, size_t size, int64_t context, int64_t max_step) {
    al_error err = {0};
    al_model *m = NULL;
    CHECK(al_model_from_llama2c(bytes, size, context, max_step, &m, &err) == AL_OK, "load: %s", err.msg);
    return m;
}

static void test_cache_identity(const uint8_t *bytes, size_t size) {
    al_model *whole = load(bytes, size, 0, N), *steps = load(bytes, size, 0, 1), *pieces = load(bytes, size, 0, 7);
    if (!whole || !steps || !pieces) return;
    const al_model_hparams *hp = al_model_get_hparams(whole);
    const int64_t V = hp->vocab, L = hp->n_layers, H = hp->n_heads;
    CHECK(hp->vocab == 512 && hp->hidden == 64 && L == 5 && H == 8 && hp->n_kv_heads == 4 && hp->head_dim == 8 &&
          hp->ffn_hidden == 172 && hp->max_seq == 512 && hp->tied == 1 && hp->rope_style == AL_ROPE_INTERLEAVED,
          "stories260K's hyper-parameters");
    float *all = malloc((size_t)(N * V) * sizeof(float)), *one = malloc((size_t)(N * V) * sizeof(float));
    float *chunked = malloc((size_t)(N * V) * sizeof(float)), *attn = malloc((size_t)(L * H * N * N) * sizeof(float));
    al_error err = {0};
    /* The residual stream's norms [L + 1, N], captured in the one pass and in the pieces. */
    float norms_whole[6 * N], norms_pieces[6 * N];
    al_model_capture_resid_norms(whole, norms_whole, (L + 1) * N);
    al_model_capture_resid_norms(pieces, norms_pieces, (L + 1) * N);
    CHECK(al_model_forward(whole, IDS, N, all, N, N * V, attn, L * H * N * N, &err) == AL_OK, "one pass: %s", err.msg);
    for (int64_t t = 0; t < N; t++)
        CHECK(al_model_forward(steps, &IDS[t], 1, one + t * V, 1, V, NULL, 0, &err) == AL_OK, "step %lld: %s", (long long)t, err.msg);
    CHECK(al_model_forward(pieces, IDS, N, chunked, N, N * V, NULL, 0, &err) == AL_OK, "in pieces: %s", err.msg);
    CHECK(memcmp(norms_whole, norms_pieces, sizeof norms_whole) == 0, "residual norms: pieces of 7 differ from one pass");
    double worst_norm = 0.0; /* row 0: the embedding rows' norms */
    for (int64_t t = 0; t < N; t++) {
        float e[512]; /* the embedding's row, read out of the loaded model */
        CHECK(hp->hidden <= 512 && al_model_read_rows(whole, AL_MP_EMBED, 0, 0, IDS[t], 1, e, 512) == hp->hidden,
              "embedding row %d", (int)IDS[t]);
        double ss = 0.0;
        for (int64_t i = 0; i < hp->hidden; i++) ss += (double)e[i] * e[i];
        worst_norm = fmax(worst_norm, fabs(norms_whole[t] - sqrt(ss)) / sqrt(ss));
    }
    CHECK(worst_norm < 1e-6, "residual norms: row 0 is not the embeddings' norms (off by %g)", worst_norm);
    float one_row[512];
    al_model_capture_resid_norms(steps, norms_pieces, L); /* one float short for one token */
    CHECK(al_model_forward(steps, IDS, 1, one_row, 1, 512, NULL, 0, &err) == AL_ERR_CAPACITY && strstr(err.msg, "residual norms"),
          "a capture buffer too small: %s", err.msg);
    al_model_capture_resid_norms(steps, NULL, 0);
    al_model_capture_resid_norms(whole, NULL, 0);
    al_model_capture_resid_norms(pieces, NULL, 0);
    CHECK(memcmp(all, one, (size_t)(N * V) * sizeof(float)) == 0, "token by token differs from one pass");
    CHECK(memcmp(all, chunked, (size_t)(N * V) * sizeof(float)) == 0, "pieces of 7 differ from one pass");
    CHECK(al_model_len(whole) == N && al_model_len(steps) == N, "cache lengths");

    /* The captured attention: causal rows that sum to 1. */
    double worst_sum = 0.0, masked = 0.0;
    for (int64_t r = 0; r < L * H * N; r++) {
        const int64_t q = r % N;
        double sum = 0.0;
        for (int64_t t = 0; t < N; t++) {
            const float w = attn[r * N + t];
            if (t > q) masked = fmax(masked, fabs(w));
            else sum += w;
        }
        worst_sum = fmax(worst_sum, fabs(sum - 1.0));
    }
    CHECK(masked == 0.0 && worst_sum < 1e-5, "attention: masked %g, rows off by %g", masked, worst_sum);

    /* The last logits only, and greedy decoding's first choice. */
    float last[512];
    al_model_reset(whole);
    CHECK(al_model_forward(whole, IDS, N, last, 1, 512, NULL, 0, &err) == AL_OK && memcmp(last, all + (N - 1) * V, sizeof last) == 0,
          "the last row alone");
    CHECK(al_sample_greedy(all, V) == IDS[1], "after BOS the model says 'Once' (id 403), greedy gives %lld",
          (long long)al_sample_greedy(all, V));

    /* Refusals: ids outside the vocabulary, past the context, buffers too small. */
    const int32_t bad[2] = {1, 512};
    al_model_reset(whole);
    CHECK(al_model_forward(whole, bad, 2, last, 1, 512, NULL, 0, &err) == AL_ERR_ARG && strstr(err.msg, "512"), "id 512: %s", err.msg);
    CHECK(al_model_len(whole) == 0, "a refused call changed the cache");
    al_model *small = load(bytes, size, 8, 8);
    if (small) {
        CHECK(al_model_forward(small, IDS, 9, last, 1, 512, NULL, 0, &err) == AL_ERR_CAPACITY && strstr(err.msg, "context"),
              "past the context: %s", err.msg);
        CHECK(al_model_forward(small, IDS, 4, attn, 4, L * H * N * N, attn, 10, &err) == AL_ERR_CAPACITY, "short attention buffer");
    }
    al_model_free(small);
    free(all), free(one), free(chunked), free(attn);
    al_model_free(whole), al_model_free(steps), al_model_free(pieces);
}

/* A checkpoint that lies about itself: each change refused with its own message. */
static void test_refusals(const uint8_t *bytes, size_t size) {
    uint8_t *copy = malloc(size);
    al_error err = {0};
    al_model *m = NULL;
    const struct {
        int field;      /* header int to overwrite, or -1 to truncate */
        int32_t value;
        const char *message;
    } cases[] = {
        {-1, 0, "implies 1056540 bytes but the file has 1056536"},
        {0, 0, "dim is 0"},
        {2, -3, "n_layers is -3"},
        {3, 7, "not a multiple of n_heads"},
        {4, 3, "multiple of n_kv_heads"},
        {5, -512, "implies"},
        {6, 70000, "max_seq must be between 1 and 65536"},
        {1, 0, "header field hidden_dim is 0"}, /* llama2.c's files have an FFN */
        {2, 6, "implies"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        memcpy(copy, bytes, size);
        size_t n = size;
        if (cases[i].field < 0) n = size - 4;
        else memcpy(copy + 4 * cases[i].field, &cases[i].value, 4); /* little-endian host */
        const al_status st = al_model_from_llama2c(copy, n, 0, 16, &m, &err);
        CHECK(st != AL_OK && m == NULL && strstr(err.msg, cases[i].message), "case %zu: %s", i, err.msg);
    }
    /* A value with every exponent bit set is refused, naming the array and the value's index in
     * it (in the loader's first block of values, a later block, the array's last value, a later
     * array, the last of an array shorter than a block); the largest finite floats are not.
     * Float offsets from the data's start: the embedding [512, 64], then rms_att [layers, 64]. */
    const struct {
        int64_t at;
        uint32_t bits;
        const char *message; /* NULL: loads */
    } values[] = {
        {100, 0x7FC00000u, "token_embedding holds a non-finite value at index 100"},
        {1029, 0x7F800000u, "token_embedding holds a non-finite value at index 1029"},
        {32767, 0xFF800000u, "token_embedding holds a non-finite value at index 32767"},
        {32768 + 64 + 3, 0xFFC00001u, "rms_att holds a non-finite value at index 3"},
        {32768 + 63, 0x7F800001u, "rms_att holds a non-finite value at index 63"},
        {100, 0x7F7FFFFFu, NULL},
        {2047, 0xFF7FFFFFu, NULL},
        {3000, 0xFEFFFFFFu, NULL}, /* exponent bits 11111101 */
    };
    for (size_t i = 0; i < sizeof values / sizeof values[0]; i++) {
        memcpy(copy, bytes, size);
        memcpy(copy + 28 + 4 * values[i].at, &values[i].bits, 4); /* little-endian host */
        const al_status st = al_model_from_llama2c(copy, size, 0, 16, &m, &err);
        if (values[i].message)
            CHECK(st == AL_ERR_NONFINITE && m == NULL && strstr(err.msg, values[i].message), "value %zu: %s", i, err.msg);
        else
            CHECK(st == AL_OK, "value %zu (finite): %s", i, err.msg);
        al_model_free(m);
        m = NULL;
    }
    CHECK(al_model_from_llama2c(copy, 10, 0, 16, &m, &err) == AL_ERR_FORMAT && strstr(err.msg, "28-byte header"), "short file");
    free(copy);
}

/* Each decode step's operations as PyTorch's profiler counted them on the reference model
 * (gen_model_flops.py); and a prefill, whose query s sees s + 1 keys, counts what its decode
 * steps one at a time would (the causal sum), plus its rows of logits. */
static void test_flops(const char *path) {
    size_t size = 0;
    uint8_t *bytes = read_file(path, &size);
    char *text = bytes ? malloc(size + 1) : NULL;
    if (!text) {
        free(bytes);
        return;
    }
    memcpy(text, bytes, size);
    text[size] = '\0';
    free(bytes);
    int cases = 0;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        if (line[0] == '#') continue;
        al_model_hparams hp = {0};
        long long v[14];
        CHECK(sscanf(line, "%lld %lld %lld %lld %lld %lld %lld %lld %lld %lld %lld %lld %lld %lld", &v[0], &v[1],
                     &v[2], &v[3], &v[4], &v[5], &v[6], &v[7], &v[8], &v[9], &v[10], &v[11], &v[12], &v[13]) == 14,
              "flops fixture line: %s", line);
        hp.vocab = v[0], hp.hidden = v[1], hp.n_layers = v[2], hp.n_heads = v[3], hp.n_kv_heads = v[4];
        hp.head_dim = v[5], hp.ffn_hidden = v[6], hp.n_experts = v[7], hp.top_k = v[8], hp.moe_ffn_hidden = v[9];
        hp.max_seq = 64, hp.rope_base = 1e6, hp.eps = 1e-6f, hp.qk_norm = 1, hp.tied = 1, hp.norm_topk_prob = 1;
        const int64_t ours = al_model_flops_causal(&hp, v[10], v[11], v[12]);
        CHECK(ours == v[13], "%s: al_model_flops_causal %lld", line, (long long)ours);
        int64_t steps = 0;
        for (int64_t i = 0; i < 9; i++) steps += al_model_flops_causal(&hp, 1, i, 0);
        CHECK(al_model_flops_causal(&hp, 9, 0, 2) == steps + 2 * 2 * hp.hidden * hp.vocab,
              "%s: a prefill of 9 is not its 9 steps", line);
        CHECK(al_model_flops_causal(&hp, 3, 0, 4) == -1 && al_model_flops_causal(&hp, 60, 5, 1) == -1 &&
                  al_model_flops_causal(&hp, -1, 0, 0) == -1 && al_model_flops_causal(NULL, 1, 0, 1) == -1,
              "%s: out-of-range counts accepted", line);
        cases++;
    }
    CHECK(cases >= 10, "%s holds %d cases", path, cases);
    free(text);
}

/* MiniMind's intermediate_size 0: a dense model without FFN. Its gate, up and down stay in the
 * weight list with no numbers (MiniMind's state_dict holds them as [0, hidden] and [hidden, 0]);
 * the model holds none of them; MoE's experts still need a width. */
static void test_attention_only(void) {
    al_model_hparams hp = {0};
    hp.vocab = 50, hp.hidden = 16, hp.n_layers = 2, hp.n_heads = 4, hp.n_kv_heads = 2, hp.head_dim = 4;
    hp.ffn_hidden = 24, hp.max_seq = 32, hp.rope_base = 1e6, hp.eps = 1e-6f, hp.qk_norm = 1, hp.tied = 1;
    const int64_t dense_weights = al_model_weights(&hp, NULL), dense_params = al_model_param_count(&hp);
    hp.ffn_hidden = 0;
    al_error err = {0};
    CHECK(al_model_hparams_check(&hp, &err) == AL_OK, "attention-only refused: %s", err.msg);
    int64_t shape[2] = {-1, -1};
    CHECK(al_model_param_shape(&hp, AL_MP_UP, shape) == 2 && shape[0] == 0 && shape[1] == 16, "up [%lld, %lld]",
          (long long)shape[0], (long long)shape[1]);
    CHECK(al_model_param_shape(&hp, AL_MP_DOWN, shape) == 2 && shape[0] == 16 && shape[1] == 0, "down [%lld, %lld]",
          (long long)shape[0], (long long)shape[1]);
    CHECK(al_model_weights(&hp, NULL) == dense_weights, "%lld weights, the dense model's %lld",
          (long long)al_model_weights(&hp, NULL), (long long)dense_weights);
    CHECK(al_model_param_count(&hp) == dense_params - 2 * 3 * 24 * 16, "%lld parameters", (long long)al_model_param_count(&hp));
    al_model *m = NULL;
    CHECK(al_model_create(&hp, 8, 8, &m, &err) == AL_OK, "create: %s", err.msg);
    int64_t numel = -1;
    CHECK(m && al_model_get_param(m, AL_MP_GATE, 1, 0, &numel) == NULL && al_model_get_param(m, AL_MP_FFN_NORM, 1, 0, &numel),
          "the empty gate_proj held, or the FFN norm missing");
    float logits[2 * 50];
    const int32_t ids[2] = {1, 7};
    CHECK(m && al_model_forward(m, ids, 2, logits, 2, 2 * 50, NULL, 0, &err) == AL_OK, "forward: %s", err.msg);
    al_model_free(m);
    hp.n_experts = 4, hp.top_k = 1, hp.moe_ffn_hidden = 0;
    CHECK(al_model_hparams_check(&hp, &err) == AL_ERR_CONFIG && strstr(err.msg, "moe_ffn_hidden must be between 1 and"),
          "experts of width 0: %s", err.msg);
}

/* The YaRN and MoE fields a model may have, whoever fills them in (config.json, a .pth's
 * flags, the page): the values MiniMind's precompute_freqs_cis and topk can use, no others. */
static void test_yarn_and_moe_rules(void) {
    al_model_hparams hp = {0};
    hp.vocab = 50, hp.hidden = 16, hp.n_layers = 2, hp.n_heads = 4, hp.n_kv_heads = 2, hp.head_dim = 4;
    hp.ffn_hidden = 24, hp.max_seq = 32, hp.rope_base = 1e6, hp.eps = 1e-6f, hp.qk_norm = 1, hp.tied = 1;
    /* MiniMind's rope_scaling: factor 16, original 2048, beta_fast 32, beta_slow 1, attention 1 */
    hp.yarn_factor = 16, hp.yarn_original_max = 2048, hp.yarn_beta_fast = 32, hp.yarn_beta_slow = 1, hp.attention_factor = 1;
    al_error err = {0};
    CHECK(al_model_hparams_check(&hp, &err) == AL_OK, "MiniMind's YaRN refused: %s", err.msg);
    const struct {
        double factor, fast, slow, attention;
        int64_t original;
        const char *message;
    } bad[] = {
        {0.5, 32, 1, 1, 2048, "YaRN factor must be in [1, 1e6] (got 0.5)"},
        {-4, 32, 1, 1, 2048, "YaRN factor must be in [1, 1e6] (got -4)"},
        {NAN, 32, 1, 1, 2048, "YaRN factor must be in [1, 1e6]"},
        {16, 32, 1, 1, 0, "yarn_original_max must be between 1 and"},
        {16, 1, 1, 1, 2048, "0 < beta_slow < beta_fast < 1e6 (got beta_slow 1, beta_fast 1)"},
        {16, 1, 32, 1, 2048, "0 < beta_slow < beta_fast < 1e6 (got beta_slow 32, beta_fast 1)"},
        {16, 32, 0, 1, 2048, "0 < beta_slow < beta_fast < 1e6 (got beta_slow 0, beta_fast 32)"},
        {16, -1, -2, 1, 2048, "0 < beta_slow < beta_fast < 1e6 (got beta_slow -2, beta_fast -1)"},
        {16, 32, 1, 0, 2048, "attention factor must be in (0, 1000) (got 0)"},
        {16, 32, 1, INFINITY, 2048, "attention factor must be in (0, 1000) (got inf)"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        al_model_hparams b = hp;
        b.yarn_factor = bad[i].factor, b.yarn_beta_fast = bad[i].fast, b.yarn_beta_slow = bad[i].slow;
        b.attention_factor = bad[i].attention, b.yarn_original_max = bad[i].original;
        err.msg[0] = '\0';
        CHECK(al_model_hparams_check(&b, &err) == AL_ERR_CONFIG && strstr(err.msg, bad[i].message), "YaRN case %zu: %s", i,
              err.msg);
    }
    hp.n_experts = 4, hp.top_k = 1, hp.moe_ffn_hidden = 8;
    CHECK(al_model_hparams_check(&hp, &err) == AL_OK, "MoE of 4 experts, top-1, refused: %s", err.msg);
    const int64_t top_k[] = {0, 5};
    for (size_t i = 0; i < 2; i++) {
        al_model_hparams b = hp;
        b.top_k = top_k[i];
        CHECK(al_model_hparams_check(&b, &err) != AL_OK && strstr(err.msg, "top_k must be between 1 and 4"),
              "top-%lld of 4 experts: %s", (long long)top_k[i], err.msg);
    }
}

int main(int argc, char **argv) {
    const char *path = argc > 1 ? argv[1] : "models/stories260K/stories260K.bin";
    size_t size = 0;
    uint8_t *bytes = read_file(path, &size);
    if (bytes) {
        test_cache_identity(bytes, size);
        test_refusals(bytes, size);
    }
    free(bytes);
    test_flops(argc > 2 ? argv[2] : "tests/fixtures/model_flops/flops.txt");
    test_attention_only();
    test_yarn_and_moe_rules();
    CHECK_DONE();
}
