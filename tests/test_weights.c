/* test_weights.c — a loaded model holds its weights once, in the dtype they came in: a float16
 * or bfloat16 checkpoint stays 16-bit in memory (al_model_weight_bytes counts its panels at 2
 * bytes, the float32 norms at 4) and computes, to the bit, the logits of a float32 model
 * holding the same values widened (what every model held before: widening is exact); the
 * loaders read the file piece by piece through an al_byte_source (never more than its largest
 * tensor at once) into the same model as from the whole image, and a file that cannot be read
 * to its end is refused cleanly. On 2 and 3 threads every model gives the bits of 1: logits of
 * a prefill and of each decode step, and so the ids generated. */
#include "attnlab.h"
#include "check.h"
#include "read_file.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const int32_t IDS[] = {1, 5, 7, 3, 2, 9, 4, 11, 6, 8, 10, 12};
enum { N = sizeof IDS / sizeof IDS[0], CONTEXT = 16 };

static uint8_t *read_in(const char *folder, const char *name, size_t *size) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", folder, name);
    return read_file(path, size);
}

/* Every row of logits of the ids, from empty caches. */
static float *logits_of(al_model *m) {
    const int64_t V = al_model_get_hparams(m)->vocab;
    float *out = malloc((size_t)(N * V) * sizeof(float));
    al_error err = {0};
    al_model_reset(m);
    CHECK(out && al_model_forward(m, IDS, N, out, N, N * V, NULL, 0, &err) == AL_OK, "forward: %s", err.msg);
    return out;
}

/* The reference: a float32 model to write into, each weight widened by al_st_read_f32. */
static al_model *widened(const char *config, size_t len, const al_safetensors *st) {
    al_error err = {0};
    al_model_hparams hp;
    al_model *m = NULL;
    CHECK(al_minimind_hparams(config, len, st, &hp, &err) == AL_OK && al_model_create(&hp, CONTEXT, CONTEXT, &m, &err) == AL_OK,
          "reference model: %s", err.msg);
    const int64_t n = m ? al_model_weights(&hp, NULL) : 0;
    al_weight_ref *refs = malloc((size_t)(n > 0 ? n : 1) * sizeof *refs);
    al_model_weights(&hp, refs);
    for (int64_t i = 0; i < n; i++) {
        char name[128];
        int64_t numel = 0;
        al_minimind_param_name(name, sizeof name, refs[i].p, refs[i].layer, refs[i].expert);
        float *dst = al_model_param_for_write(m, refs[i].p, refs[i].layer, refs[i].expert, &numel);
        if (dst) CHECK(al_st_read_f32(st, name, dst, numel, &err) == AL_OK, "%s: %s", name, err.msg);
    }
    free(refs);
    return m;
}

/* Of hp's weights: the norms' numbers, and the elements of every map's panels (rows padded to
 * the GEMM's 16; the head's too, which a tied embedding is). */
static int64_t norm_count(const al_model_hparams *hp) {
    return hp->hidden + hp->n_layers * (2 * hp->hidden + (hp->qk_norm ? 2 * hp->head_dim : 0));
}
static int64_t panel_count(const al_model_hparams *hp) {
    const int64_t n = al_model_weights(hp, NULL);
    al_weight_ref *refs = malloc((size_t)n * sizeof *refs);
    al_model_weights(hp, refs);
    int64_t count = (hp->vocab + 15) / 16 * 16 * hp->hidden; /* the head */
    for (int64_t i = 0; i < n; i++) {
        int64_t shape[2] = {0, 0};
        if (al_model_param_shape(hp, refs[i].p, shape) == 2 && refs[i].p != AL_MP_EMBED && refs[i].p != AL_MP_LM_HEAD)
            count += (shape[0] + 15) / 16 * 16 * shape[1];
    }
    free(refs);
    return count;
}

/* The bytes one copy of hp's weights takes: the norms as float32, then in `size`-byte elements
 * an untied embedding's rows and every map's panels. */
static int64_t one_copy_bytes(const al_model_hparams *hp, int64_t size) {
    return 4 * norm_count(hp) + size * ((hp->tied ? 0 : hp->vocab * hp->hidden) + panel_count(hp));
}

/* A file in memory read through an al_byte_source: the largest piece asked for is kept, and
 * nothing at or past fail_at can be read. */
typedef struct {
    const uint8_t *bytes;
    size_t largest;
    uint64_t fail_at;
} memory_file;

static int memory_read(void *ctx, uint64_t offset, void *dst, size_t n) {
    memory_file *f = ctx;
    if (offset + n > f->fail_at) return -1;
    memcpy(dst, f->bytes + offset, n);
    if (n > f->largest) f->largest = n;
    return 0;
}

static void test_fixture(const char *root, const char *name, int want_dtype) {
    char folder[512];
    snprintf(folder, sizeof folder, "%s/%s", root, name);
    size_t config_len = 0, size = 0;
    char *config = (char *)read_in(folder, "config.json", &config_len);
    uint8_t *bytes = read_in(folder, "model.safetensors", &size);
    al_safetensors *st = NULL;
    al_error err = {0};
    if (!config || !bytes || al_st_parse_view(bytes, size, &st, &err) != AL_OK) {
        CHECK(0, "%s: %s", name, err.msg);
        free(config), free(bytes);
        return;
    }
    al_model *loaded = NULL, *streamed = NULL, *ref = widened(config, config_len, st);
    CHECK(al_model_load(bytes, size, AL_MODEL_FILE_SAFETENSORS, config, config_len, NULL, CONTEXT, CONTEXT, &loaded, &err) == AL_OK,
          "%s: load: %s", name, err.msg);
    memory_file f = {bytes, 0, size};
    const al_byte_source src = {memory_read, &f, size};
    CHECK(al_model_load_source(&src, AL_MODEL_FILE_UNKNOWN, config, config_len, NULL, CONTEXT, CONTEXT, &streamed, &err) == AL_OK,
          "%s: load piece by piece: %s", name, err.msg);
    if (loaded && streamed && ref) {
        const al_model_hparams *hp = al_model_get_hparams(loaded);
        const int64_t V = hp->vocab;
        /* 1. the dtype kept, and its bytes: one copy (the reference holds two, in float32) */
        const al_weight_dtype dt = al_model_weight_dtype(loaded);
        if (want_dtype >= 0) CHECK((int)dt == want_dtype, "%s: held as dtype %d, not %d", name, (int)dt, want_dtype);
        const int64_t size_of = dt == AL_WEIGHTS_F32 ? 4 : 2;
        CHECK(al_model_weight_bytes(loaded) == one_copy_bytes(hp, size_of), "%s: %lld bytes of weights, one copy is %lld", name,
              (long long)al_model_weight_bytes(loaded), (long long)one_copy_bytes(hp, size_of));
        CHECK(al_model_weight_bytes(ref) == 4 * (al_model_param_count(hp) + panel_count(hp)),
              "%s: the float32 model's weights and their packed copies", name);
        /* 2. the same numbers as the float32 model, and piece by piece as from the image */
        float *a = logits_of(loaded), *b = logits_of(ref), *c = logits_of(streamed);
        CHECK(a && b && memcmp(a, b, (size_t)(N * V) * sizeof(float)) == 0, "%s: logits differ from the widened float32 model's",
              name);
        CHECK(a && c && memcmp(a, c, (size_t)(N * V) * sizeof(float)) == 0, "%s: read piece by piece, other logits", name);
        /*    and token by token through the caches (a decode step's few rows take the kernels'
         *    other path through 16-bit weights) */
        float *steps = malloc((size_t)(N * V) * sizeof(float));
        al_model_reset(loaded);
        for (int64_t t = 0; steps && t < N; t++)
            CHECK(al_model_forward(loaded, &IDS[t], 1, steps + t * V, 1, V, NULL, 0, &err) == AL_OK, "%s: step: %s", name, err.msg);
        CHECK(steps && b && memcmp(steps, b, (size_t)(N * V) * sizeof(float)) == 0,
              "%s: decoded token by token, logits differ from the widened float32 model's", name);
        free(steps);
        /* 3. no piece larger than the largest tensor */
        size_t largest = 0;
        for (int i = 0; i < al_st_count(st); i++) {
            al_st_tensor t;
            al_st_get(st, i, &t);
            if ((size_t)t.nbytes > largest) largest = (size_t)t.nbytes;
        }
        CHECK(f.largest <= largest && f.largest < size, "%s: a piece of %zu bytes read, the largest tensor has %zu", name,
              f.largest, largest);
        /* 4. every weight reads back as the reference holds it */
        const int64_t n = al_model_weights(hp, NULL);
        al_weight_ref *refs = malloc((size_t)n * sizeof *refs);
        al_model_weights(hp, refs);
        int same = 1;
        for (int64_t i = 0; i < n; i++) {
            const int64_t numel = al_model_read_param(ref, refs[i].p, refs[i].layer, refs[i].expert, NULL, 0);
            if (numel <= 0) continue;
            float *x = malloc((size_t)numel * sizeof(float)), *y = malloc((size_t)numel * sizeof(float));
            same &= al_model_read_param(loaded, refs[i].p, refs[i].layer, refs[i].expert, x, numel) == numel &&
                    al_model_read_param(ref, refs[i].p, refs[i].layer, refs[i].expert, y, numel) == numel &&
                    memcmp(x, y, (size_t)numel * sizeof(float)) == 0;
            free(x), free(y);
        }
        CHECK(same, "%s: a weight read back differs from the float32 model's", name);
        free(refs), free(a), free(b), free(c);
    }
    /* 5. a file that ends early (a read fails half-way) is refused, nothing made */
    al_model *cut = (al_model *)&cut;
    memory_file half = {bytes, 0, size / 2 + size / 4};
    const al_byte_source short_src = {memory_read, &half, size};
    CHECK(al_model_load_source(&short_src, AL_MODEL_FILE_SAFETENSORS, config, config_len, NULL, CONTEXT, CONTEXT, &cut, &err) ==
                  AL_ERR_IO && cut == NULL,
          "%s: a read failing half-way: %s", name, err.msg);
    CHECK(err.file == AL_FILE_WEIGHTS, "%s: a read failing half-way is put on file %d, not the weights", name, (int)err.file);
    /* 6. a config.json that is refused is the file at fault, read whole or piece by piece */
    static const char bad_config[] = "{\"num_attention_heads\": 8, \"num_key_value_heads\": 3}";
    CHECK(al_model_load(bytes, size, AL_MODEL_FILE_SAFETENSORS, bad_config, sizeof bad_config - 1, NULL, CONTEXT, CONTEXT, &cut,
                        &err) == AL_ERR_CONFIG && err.file == AL_FILE_CONFIG,
          "%s: a bad config.json: file %d: %s", name, (int)err.file, err.msg);
    CHECK(al_model_load_source(&src, AL_MODEL_FILE_SAFETENSORS, bad_config, sizeof bad_config - 1, NULL, CONTEXT, CONTEXT, &cut,
                               &err) == AL_ERR_CONFIG && err.file == AL_FILE_CONFIG,
          "%s: a bad config.json piece by piece: file %d: %s", name, (int)err.file, err.msg);
    al_model_free(loaded), al_model_free(streamed), al_model_free(ref);
    al_st_free(st);
    free(config), free(bytes);
}

/* llama2.c: array by array from a source, the same model as from the image. */
static void test_llama2c(const char *path) {
    size_t size = 0;
    uint8_t *bytes = read_file(path, &size);
    if (!bytes) return;
    al_error err = {0};
    al_model *whole = NULL, *streamed = NULL;
    memory_file f = {bytes, 0, size};
    const al_byte_source src = {memory_read, &f, size};
    CHECK(al_model_load(bytes, size, AL_MODEL_FILE_LLAMA2C, NULL, 0, NULL, CONTEXT, CONTEXT, &whole, &err) == AL_OK, "%s", err.msg);
    CHECK(al_model_load_source(&src, AL_MODEL_FILE_UNKNOWN, NULL, 0, NULL, CONTEXT, CONTEXT, &streamed, &err) == AL_OK, "%s", err.msg);
    if (whole && streamed) {
        const int64_t V = al_model_get_hparams(whole)->vocab;
        float *a = logits_of(whole), *b = logits_of(streamed);
        CHECK(memcmp(a, b, (size_t)(N * V) * sizeof(float)) == 0, "llama2.c: read array by array, other logits");
        CHECK(f.largest < size / 2, "llama2.c: a piece of %zu of %zu bytes read at once", f.largest, size);
        CHECK(al_model_weight_dtype(whole) == AL_WEIGHTS_F32 &&
                  al_model_weight_bytes(whole) == one_copy_bytes(al_model_get_hparams(whole), 4),
              "llama2.c: one float32 copy");
        free(a), free(b);
    }
    al_model *cut = (al_model *)&cut;
    memory_file half = {bytes, 0, size / 2};
    const al_byte_source short_src = {memory_read, &half, size};
    CHECK(al_model_load_source(&short_src, AL_MODEL_FILE_LLAMA2C, NULL, 0, NULL, CONTEXT, CONTEXT, &cut, &err) == AL_ERR_IO &&
              cut == NULL,
          "llama2.c: a read failing half-way: %s", err.msg);
    al_model_free(whole), al_model_free(streamed);
    free(bytes);
}

/* Greedy decoding of `steps` tokens after the ids: every step's logits into out [steps + 1,
 * vocab] (row 0 the prefill's last). */
static void decode_run(al_model *m, int64_t steps, float *out) {
    const int64_t V = al_model_get_hparams(m)->vocab;
    al_error err = {0};
    al_model_reset(m);
    CHECK(al_model_forward(m, IDS, N, out, 1, V, NULL, 0, &err) == AL_OK, "prefill: %s", err.msg);
    for (int64_t s = 0; s < steps; s++) {
        const int32_t next = (int32_t)al_sample_greedy(out + s * V, V);
        CHECK(al_model_forward(m, &next, 1, out + (s + 1) * V, 1, V, NULL, 0, &err) == AL_OK, "step: %s", err.msg);
    }
}

/* The model on 1, 2 and 3 threads: the same logits, prefill and decode, bit for bit. */
static void check_threads(al_model *m, const char *what) {
    enum { STEPS = 3 };
    const int64_t V = al_model_get_hparams(m)->vocab;
    float *one = malloc((size_t)((STEPS + 1) * V) * sizeof(float)), *more = malloc((size_t)((STEPS + 1) * V) * sizeof(float));
    al_error err = {0};
    CHECK(al_model_set_threads(m, 1, &err) == AL_OK && al_model_threads(m) == 1, "%s: 1 thread: %s", what, err.msg);
    float *all_one = logits_of(m);
    decode_run(m, STEPS, one);
    for (int threads = 2; threads <= 3; threads++) {
        CHECK(al_model_set_threads(m, threads, &err) == AL_OK && al_model_threads(m) == threads, "%s: %d threads: %s", what,
              threads, err.msg);
        float *all = logits_of(m);
        decode_run(m, STEPS, more);
        CHECK(memcmp(all, all_one, (size_t)(N * V) * sizeof(float)) == 0, "%s: the prefill's logits on %d threads differ", what,
              threads);
        CHECK(memcmp(one, more, (size_t)((STEPS + 1) * V) * sizeof(float)) == 0, "%s: decoding on %d threads differs", what,
              threads);
        free(all);
    }
    CHECK(al_model_set_threads(m, 0, &err) == AL_ERR_ARG && al_model_set_threads(m, AL_MAX_THREADS + 1, &err) == AL_ERR_ARG,
          "%s: 0 and too many threads refused", what);
    free(all_one), free(one), free(more);
}

/* A longer run on 1, 2 and 3 threads, where the attention's heads are shared out too
 * (model/attend.c): a prefill of `prefill` tokens in one pass, its attention weights captured
 * (every query head's rows written by the thread that computed them), then greedy decode
 * steps, past 2^18 multiply-adds of attention each after 341 tokens, whose KV heads are then
 * shared out. The logits and the weights bit for bit. prefill: at most MAX_PREFILL. */
static void check_threads_attention(al_model *m, const char *what, int prefill) {
    enum { MAX_PREFILL = 360, STEPS = 4 };
    const al_model_hparams *hp = al_model_get_hparams(m);
    const int64_t V = hp->vocab, A = hp->n_layers * hp->n_heads * prefill * prefill;
    int32_t ids[MAX_PREFILL + STEPS];
    for (int i = 0; i < prefill; i++) ids[i] = (int32_t)((i * 37 + 11) % V);
    float *logits[2], *attn[2];
    al_error err = {0};
    for (int threads = 1; threads <= 3; threads++) {
        const int r = threads > 1;
        if (threads <= 2) logits[r] = malloc((size_t)((STEPS + 1) * V) * sizeof(float)), attn[r] = malloc((size_t)A * sizeof(float));
        CHECK(al_model_set_threads(m, threads, &err) == AL_OK, "%s: %d threads: %s", what, threads, err.msg);
        al_model_reset(m);
        CHECK(al_model_forward(m, ids, prefill, logits[r], 1, V, attn[r], A, &err) == AL_OK, "%s: prefill: %s", what, err.msg);
        for (int64_t s = 0; s < STEPS; s++) {
            ids[prefill + s] = (int32_t)al_sample_greedy(logits[r] + s * V, V);
            CHECK(al_model_forward(m, ids + prefill + s, 1, logits[r] + (s + 1) * V, 1, V, NULL, 0, &err) == AL_OK,
                  "%s: step: %s", what, err.msg);
        }
        if (!r) continue;
        CHECK(memcmp(attn[0], attn[1], (size_t)A * sizeof(float)) == 0, "%s: the prefill's attention on %d threads differs",
              what, threads);
        CHECK(memcmp(logits[0], logits[1], (size_t)((STEPS + 1) * V) * sizeof(float)) == 0,
              "%s: the prefill's and the steps' logits on %d threads differ", what, threads);
    }
    for (int r = 0; r < 2; r++) free(logits[r]), free(attn[r]);
}

static void test_threads(const char *fixtures, const char *stories, int short_run) {
    /* 1. loaded models: float32, 16-bit and MoE fixtures, and stories260K */
    const char *names[] = {"dense_f32", "dense_f16", "dense_bf16", "moe_top2_norm", "moe_top1_nonorm_bf16", "untied"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char folder[512];
        snprintf(folder, sizeof folder, "%s/%s", fixtures, names[i]);
        size_t config_len = 0, size = 0;
        char *config = (char *)read_in(folder, "config.json", &config_len);
        uint8_t *bytes = read_in(folder, "model.safetensors", &size);
        al_model *m = NULL;
        al_error err = {0};
        if (config && bytes)
            CHECK(al_model_load(bytes, size, AL_MODEL_FILE_SAFETENSORS, config, config_len, NULL, CONTEXT, CONTEXT, &m, &err) == AL_OK,
                  "%s: %s", names[i], err.msg);
        if (m) check_threads(m, names[i]);
        al_model_free(m);
        free(config), free(bytes);
    }
    size_t size = 0;
    uint8_t *bytes = read_file(stories, &size);
    al_model *m = NULL;
    al_error err = {0};
    if (bytes) CHECK(al_model_load(bytes, size, AL_MODEL_FILE_LLAMA2C, NULL, 0, NULL, CONTEXT, CONTEXT, &m, &err) == AL_OK, "%s", err.msg);
    if (m) check_threads(m, "stories260K");
    al_model_free(m);
    free(bytes);
    /* 2. wider random models, every projection of the prefill split (a MoE too), in pieces of 5
     *    tokens: each piece's q, k, v and o reach the pool's threshold (5 · 192 · 384 multiply-adds,
     *    k and v, against 2^18), and a decode step's FFN and head do */
    for (int moe = 0; moe <= 1; moe++) {
        al_model_hparams hp = al_minimind_hparams_for(1000, 384, 2, 6, 3);
        if (moe) hp.n_experts = 3, hp.top_k = 2, hp.moe_ffn_hidden = 160, hp.norm_topk_prob = 1;
        al_model *r = NULL;
        CHECK(al_model_create(&hp, CONTEXT, 5, &r, &err) == AL_OK && al_model_fill_random(r, 7, &err) == AL_OK, "random: %s",
              err.msg);
        if (r) check_threads(r, moe ? "random MoE" : "random dense");
        al_model_free(r);
    }
    /* 3. the attention's heads shared out: GQA (6 query heads on 3 KV heads, head_dim 64); a
     *    short run (under valgrind) shares out the prefill's alone (384 · 40² multiply-adds) */
    {
        const al_model_hparams hp = al_minimind_hparams_for(500, 384, 1, 6, 3);
        al_model *r = NULL;
        CHECK(al_model_create(&hp, 384, 384, &r, &err) == AL_OK && al_model_fill_random(r, 11, &err) == AL_OK, "random: %s",
              err.msg);
        if (r) check_threads_attention(r, short_run ? "random GQA, 40 tokens" : "random GQA, 360 tokens", short_run ? 40 : 360);
        al_model_free(r);
    }
}

int main(int argc, char **argv) {
    const char *fixtures = argc > 1 ? argv[1] : "tests/fixtures/minimind";
    test_fixture(fixtures, "dense_f32", AL_WEIGHTS_F32);
    test_fixture(fixtures, "dense_f16", AL_WEIGHTS_F16);
    test_fixture(fixtures, "dense_bf16", AL_WEIGHTS_BF16);
    test_fixture(fixtures, "moe_top1_nonorm_bf16", AL_WEIGHTS_BF16);
    test_fixture(fixtures, "untied", -1);
    test_fixture(fixtures, "attn_only", -1);
    test_fixture(fixtures, "gqa_4x2", -1);
    test_llama2c(argc > 2 ? argv[2] : "models/stories260K/stories260K.bin");
    /* a third argument "short": the attention's threads checked on a short run alone */
    test_threads(fixtures, argc > 2 ? argv[2] : "models/stories260K/stories260K.bin", argc > 3 && !strcmp(argv[3], "short"));
    CHECK_DONE();
}
