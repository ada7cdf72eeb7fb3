/* test_null_err.c — "every public call accepts err == NULL": each function of
 * core/include/attnlab/ that takes an `al_error *` is called here with err == NULL on inputs it
 * must refuse (its error path runs with nowhere to write the message) and on a valid one, and
 * the status it returns is checked. native.test.mjs checks that every such function of the
 * headers is called here with NULL for its error, so a new one cannot go without.
 * usage: test_null_err */
#include "attnlab.h"
#include "check.h"
#include "tok_image.h"
#include "tok_json.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The call's status must be `want`. */
#define EXPECT(call, want)                                                                   \
    do {                                                                                     \
        const al_status got_ = (call);                                                       \
        CHECK(got_ == (want), "%s: got '%s', want '%s'", #call, al_status_str(got_),         \
              al_status_str(want));                                                          \
    } while (0)

/* The seeds' layer: hidden 16, 4 heads, 2 KV heads, head_dim 8. */
#define HIDDEN 16
#define Q_DIM (4 * 8)
#define KV_DIM (2 * 8)

/* A file image of al_st_serialize in a new buffer; NULL after a failed check. */
static uint8_t *serialize(const al_st_entry *entries, int n, size_t *size) {
    EXPECT(al_st_serialize(entries, n, NULL, 0, NULL, 0, size, NULL), AL_OK); /* size query */
    uint8_t *buf = malloc(*size);
    if (buf) EXPECT(al_st_serialize(entries, n, NULL, 0, buf, *size, size, NULL), AL_OK);
    return buf;
}

/* A MiniMind-named layer (model.layers.0.self_attn.*) of the seeds' sizes: random projections,
 * norm weights of 1. */
static uint8_t *minimind_weights(size_t *size) {
    static float q[Q_DIM * HIDDEN], k[KV_DIM * HIDDEN], v[KV_DIM * HIDDEN], o[HIDDEN * Q_DIM],
        norm[8];
    al_rng *r = al_rng_create(3);
    al_rng_randn(r, q, Q_DIM * HIDDEN);
    al_rng_randn(r, k, KV_DIM * HIDDEN);
    al_rng_randn(r, v, KV_DIM * HIDDEN);
    al_rng_randn(r, o, HIDDEN * Q_DIM);
    al_rng_free(r);
    for (int i = 0; i < 8; i++) norm[i] = 1.0f;
    const al_st_entry e[6] = {
        {"model.layers.0.self_attn.q_proj.weight", q, 2, {Q_DIM, HIDDEN}},
        {"model.layers.0.self_attn.k_proj.weight", k, 2, {KV_DIM, HIDDEN}},
        {"model.layers.0.self_attn.v_proj.weight", v, 2, {KV_DIM, HIDDEN}},
        {"model.layers.0.self_attn.o_proj.weight", o, 2, {HIDDEN, Q_DIM}},
        {"model.layers.0.self_attn.q_norm.weight", norm, 1, {8}},
        {"model.layers.0.self_attn.k_norm.weight", norm, 1, {8}},
    };
    return serialize(e, 6, size);
}

/* An input file: x [1, 3, hidden] under `name` ("x" is what the run reads). */
static uint8_t *input_file(const char *name, size_t *size) {
    static float x[3 * HIDDEN];
    for (int i = 0; i < 3 * HIDDEN; i++) x[i] = (float)(i % 7) * 0.25f - 0.75f;
    const al_st_entry e = {name, x, 3, {1, 3, HIDDEN}};
    return serialize(&e, 1, size);
}

/* ---- model.h ------------------------------------------------------------------------------ */

static void test_model(void) {
    const al_attn_hparams hp = al_attn_hparams_default();
    al_attn_hparams bad = hp;
    bad.n_kv_heads = 3;
    al_attn_hparams huge = hp;
    huge.hidden = AL_MAX_HIDDEN + 1;
    const al_attn_capacity cap = {1, 4}, no_seq = {1, 0};

    float angles[4 * 4];
    EXPECT(al_rope_angles(NULL, 4, 8, 10000.0, NULL), AL_ERR_ARG);
    EXPECT(al_rope_angles(angles, 4, 7, 10000.0, NULL), AL_ERR_ARG);
    EXPECT(al_rope_angles(angles, 4, 8, 10000.0, NULL), AL_OK);

    EXPECT(al_attn_hparams_check(NULL, NULL), AL_ERR_ARG);
    EXPECT(al_attn_hparams_check(&bad, NULL), AL_ERR_CONFIG);
    EXPECT(al_attn_hparams_check(&huge, NULL), AL_ERR_LIMIT);
    EXPECT(al_attn_hparams_check(&hp, NULL), AL_OK);

    EXPECT(al_attn_check(&hp, NULL, NULL), AL_ERR_ARG);
    EXPECT(al_attn_check(&hp, &no_seq, NULL), AL_ERR_CONFIG);
    EXPECT(al_attn_check(&hp, &cap, NULL), AL_OK);

    al_kv_cache *cache = (al_kv_cache *)&cache; /* not NULL: a refusal must reset it */
    EXPECT(al_kv_cache_create(&hp, &cap, NULL, NULL), AL_ERR_ARG);
    EXPECT(al_kv_cache_create(&bad, &cap, &cache, NULL), AL_ERR_CONFIG);
    CHECK(cache == NULL, "a refused cache is not NULL");
    EXPECT(al_kv_cache_create(&hp, &cap, &cache, NULL), AL_OK);

    al_attn *a = (al_attn *)&a;
    EXPECT(al_attn_create(&hp, &cap, NULL, NULL), AL_ERR_ARG);
    EXPECT(al_attn_create(&bad, &cap, &a, NULL), AL_ERR_CONFIG);
    CHECK(a == NULL, "a refused layer is not NULL");
    EXPECT(al_attn_create(&hp, &cap, &a, NULL), AL_OK);
    if (!a || !cache) {
        al_kv_cache_free(cache);
        al_attn_free(a);
        return;
    }

    float x[4 * HIDDEN], out[4 * HIDDEN], weights[4 * 4 * 4], q[4 * Q_DIM];
    for (int i = 0; i < 4 * HIDDEN; i++) x[i] = (float)(i % 5) - 2.0f;
    EXPECT(al_attn_project_qkv(a, q, NULL, NULL, NULL, 1, 2, NULL), AL_ERR_ARG);
    EXPECT(al_attn_project_qkv(a, q, NULL, NULL, x, 1, 0, NULL), AL_ERR_ARG);
    EXPECT(al_attn_project_qkv(a, q, NULL, NULL, x, 1, 2, NULL), AL_OK);

    EXPECT(al_attn_forward(NULL, cache, out, NULL, 0, x, 1, 2, NULL), AL_ERR_ARG);
    EXPECT(al_attn_forward(a, cache, out, weights, 4 * 2 * 2 - 1, x, 1, 2, NULL), AL_ERR_CAPACITY);
    EXPECT(al_attn_forward(a, cache, out, NULL, 0, x, 2, 1, NULL), AL_ERR_CAPACITY); /* batch > max_batch */
    EXPECT(al_attn_forward(a, cache, out, weights, 4 * 2 * 2, x, 1, 2, NULL), AL_OK);
    EXPECT(al_attn_forward(a, cache, out, NULL, 0, x, 1, 3, NULL), AL_ERR_CAPACITY); /* 2 + 3 > max_seq */
    x[1] = NAN;
    EXPECT(al_attn_forward(a, cache, out, NULL, 0, x, 1, 1, NULL), AL_ERR_NONFINITE);
    EXPECT(al_attn_project_qkv(a, q, NULL, NULL, x, 1, 1, NULL), AL_ERR_NONFINITE);
    al_kv_cache_free(cache);
    al_attn_free(a);
}

/* ---- io.h --------------------------------------------------------------------------------- */

static void test_io(void) {
    size_t w_size = 0, x_size = 0, no_x_size = 0;
    uint8_t *weights = minimind_weights(&w_size), *input = input_file("x", &x_size);
    uint8_t *no_x = input_file("y", &no_x_size);
    if (!weights || !input || !no_x) {
        free(weights), free(input), free(no_x);
        return;
    }

    /* al_st_serialize refusals (its valid calls made the files above). */
    const float one = 1.0f;
    const al_st_entry e = {"t", &one, 1, {1}}, reserved = {"__metadata__", &one, 1, {1}};
    uint8_t small[8];
    size_t needed = 0;
    EXPECT(al_st_serialize(NULL, 1, NULL, 0, small, sizeof small, &needed, NULL), AL_ERR_ARG);
    EXPECT(al_st_serialize(&reserved, 1, NULL, 0, NULL, 0, &needed, NULL), AL_ERR_ARG);
    EXPECT(al_st_serialize(&e, 1, NULL, 0, small, sizeof small, &needed, NULL), AL_ERR_CAPACITY);

    al_safetensors *st = (al_safetensors *)&st;
    const uint8_t junk[16] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f, '{'};
    EXPECT(al_st_parse(junk, sizeof junk, &st, NULL), AL_ERR_FORMAT);
    CHECK(st == NULL, "a refused file is not NULL");
    EXPECT(al_st_parse_view(junk, sizeof junk, &st, NULL), AL_ERR_FORMAT);
    EXPECT(al_st_parse_view(weights, w_size, NULL, NULL), AL_ERR_ARG);
    EXPECT(al_st_parse_view(weights, w_size, &st, NULL), AL_OK);
    al_st_free(st);
    uint64_t header_end = 0;
    EXPECT(al_st_header_size(junk, 8, sizeof junk, &header_end, NULL), AL_ERR_FORMAT);
    EXPECT(al_st_header_size(junk, 4, sizeof junk, &header_end, NULL), AL_ERR_ARG);
    EXPECT(al_st_header_size(weights, 8, w_size, &header_end, NULL), AL_OK);
    EXPECT(al_st_check_header(junk, sizeof junk, sizeof junk, NULL), AL_ERR_FORMAT);
    EXPECT(al_st_check_header(weights, 8, w_size, NULL), AL_ERR_ARG); /* the header is not all there */
    EXPECT(al_st_check_header(weights, (size_t)header_end, w_size, NULL), AL_OK);
    EXPECT(al_st_parse_header(weights, 8, w_size, &st, NULL), AL_ERR_ARG);
    EXPECT(al_st_parse_header(weights, (size_t)header_end, w_size, NULL, NULL), AL_ERR_ARG);
    EXPECT(al_st_parse_header(weights, (size_t)header_end, w_size, &st, NULL), AL_OK);
    EXPECT(al_st_check_values(st, "model.layers.0.self_attn.q_proj.weight", NULL, NULL), AL_ERR_ARG); /* no data */
    al_st_free(st);
    EXPECT(al_st_parse(weights, w_size, &st, NULL), AL_OK);
    if (st) {
        EXPECT(al_st_check_values(st, "q_proj.weight", NULL, NULL), AL_ERR_MISSING);
        EXPECT(al_st_check_values(st, "model.layers.0.self_attn.q_proj.weight", NULL, NULL), AL_OK);
        float q[Q_DIM * HIDDEN];
        const char *q_name = "model.layers.0.self_attn.q_proj.weight";
        EXPECT(al_st_read_f32(st, NULL, q, Q_DIM * HIDDEN, NULL), AL_ERR_ARG);
        EXPECT(al_st_read_f32(st, "q_proj.weight", q, Q_DIM * HIDDEN, NULL), AL_ERR_MISSING);
        EXPECT(al_st_read_f32(st, q_name, q, Q_DIM * HIDDEN - 1, NULL), AL_ERR_CAPACITY);
        EXPECT(al_st_read_f32(st, q_name, q, Q_DIM * HIDDEN, NULL), AL_OK);

        const al_attn_hparams base = al_attn_hparams_default();
        const al_attn_capacity cap = {1, 3};
        al_attn *a = (al_attn *)&a;
        EXPECT(al_attn_from_safetensors(st, "", &base, &cap, NULL, NULL), AL_ERR_ARG);
        EXPECT(al_attn_from_safetensors(st, "", &base, &cap, &a, NULL), AL_ERR_MISSING);
        CHECK(a == NULL, "a refused layer is not NULL");
        EXPECT(al_attn_from_safetensors(st, "model.layers.0.self_attn.", &base, &cap, &a, NULL), AL_OK);
        al_attn_hparams hp;
        EXPECT(al_attn_hparams_from_safetensors(st, "", &base, &hp, NULL), AL_ERR_MISSING);
        EXPECT(al_attn_hparams_from_safetensors(st, "", &base, NULL, NULL), AL_ERR_ARG);
        EXPECT(al_attn_hparams_from_safetensors(st, "model.layers.0.self_attn.", &base, &hp, NULL), AL_OK);
        al_attn_free(a);
        al_st_free(st);
    }

    /* A MiniMind file run without a layer: the error path appends a hint to the message, which
     * must not need the caller's error record. */
    uint8_t *out = (uint8_t *)&out;
    al_attn_files_options opt = al_attn_files_options_default();
    EXPECT(al_attn_files_run(weights, w_size, input, x_size, NULL, &out, NULL, NULL), AL_ERR_MISSING);
    CHECK(out == NULL, "no result after a refusal");
    al_attn_files_summary sum;
    EXPECT(al_attn_files_run(weights, w_size, input, x_size, &opt, &out, &sum, NULL), AL_ERR_MISSING);
    CHECK(sum.failed_file == AL_FILE_WEIGHTS, "the weights are to blame, not file %d", (int)sum.failed_file);
    EXPECT(al_attn_files_run(weights, w_size, input, x_size, NULL, NULL, NULL, NULL), AL_ERR_ARG);
    EXPECT(al_attn_files_run(weights, w_size, junk, sizeof junk, NULL, &out, NULL, NULL), AL_ERR_FORMAT);
    opt.layer = 0;
    EXPECT(al_attn_files_run(weights, w_size, no_x, no_x_size, &opt, &out, NULL, NULL), AL_ERR_MISSING);
    opt.prefill = 4;
    EXPECT(al_attn_files_run(weights, w_size, input, x_size, &opt, &out, NULL, NULL), AL_ERR_ARG);
    opt.prefill = 2;
    EXPECT(al_attn_files_run(weights, w_size, input, x_size, &opt, &out, NULL, NULL), AL_OK);
    CHECK(out != NULL, "no result");
    al_buffer_free(out);
    free(weights), free(input), free(no_x);
}

/* ---- tokenizer.h -------------------------------------------------------------------------- */

/* The count an encode or stream call returns must be `want` (-1 for a refusal). */
#define EXPECT_COUNT(call, want)                                                             \
    do {                                                                                     \
        const int64_t got_ = (call);                                                         \
        CHECK(got_ == (want), "%s: got %lld, want %lld", #call, (long long)got_, (long long)(want)); \
    } while (0)

static void test_tokenizer(void) {
    const char *pieces[] = {" ", "a", " a"};
    const float scores[] = {-1, -2, -3};
    size_t size = 0;
    uint8_t *image = tok_image(pieces, scores, 3, &size);
    al_tokenizer *t = NULL;
    EXPECT(al_tok_llama2c_create(image, 3, 0, &t, NULL), AL_ERR_FORMAT);
    EXPECT(al_tok_llama2c_create(image, size, 100, &t, NULL), AL_ERR_ARG);
    EXPECT(al_tok_llama2c_create(image, size, 0, &t, NULL), AL_OK);
    free(image);
    if (!t) return;

    int32_t ids[4];
    EXPECT_COUNT(al_tok_encode(t, "a", 1, 1, 0, ids, 1, NULL), -1); /* needs 2 */
    EXPECT_COUNT(al_tok_encode(NULL, "a", 1, 1, 0, ids, 4, NULL), -1);
    EXPECT_COUNT(al_tok_encode(t, "a", 1, 1, 0, ids, 4, NULL), 2);
    CHECK(ids[0] == AL_TOK_BOS && ids[1] == 261, "' a' is id 261, got %d", (int)ids[1]);

    const char *text = NULL;
    size_t len = 0;
    EXPECT(al_tok_decode(t, -1, 262, &text, &len, NULL), AL_ERR_ARG);
    EXPECT(al_tok_decode(t, AL_TOK_BOS, 261, &text, &len, NULL), AL_OK);
    CHECK(len == 1 && text[0] == 'a', "' a' after BOS");

    al_tok_stream *s = NULL;
    EXPECT(al_tok_stream_create(NULL, &s, NULL), AL_ERR_ARG);
    EXPECT(al_tok_stream_create(t, &s, NULL), AL_OK);
    char out[8];
    EXPECT_COUNT(al_tok_stream_push(s, 262, out, sizeof out, NULL), -1);
    EXPECT_COUNT(al_tok_stream_push(s, AL_TOK_BYTE0 + 0xC3, out, sizeof out, NULL), 0);
    EXPECT_COUNT(al_tok_stream_finish(s, out, 2, NULL), -1); /* "\xC3" needs 4 */
    EXPECT_COUNT(al_tok_stream_finish(s, out, sizeof out, NULL), 4);
    EXPECT_COUNT(al_tok_stream_finish(NULL, out, sizeof out, NULL), -1);
    al_tok_stream_free(s);
    al_tok_free(t);

    /* A tokenizer.json: the 256 bytes and the merge "a b" -> 256. */
    const char *tokens[] = {"ab"};
    const char *const merges[][2] = {{"a", "b"}};
    char *json = tok_json(tokens, 1, merges, 1, NULL, 0, 0, 1, 0);
    if (!json) return;
    const uint8_t *bytes = (const uint8_t *)json;
    t = (al_tokenizer *)&t;
    EXPECT(al_tok_hf_create(bytes, 5, 0, &t, NULL), AL_ERR_FORMAT);
    CHECK(t == NULL, "a refused tokenizer.json is not NULL");
    EXPECT(al_tok_hf_create(bytes, strlen(json), 0, NULL, NULL), AL_ERR_ARG);
    EXPECT(al_tok_hf_create(bytes, strlen(json), 300, &t, NULL), AL_ERR_FORMAT); /* it holds 257 */
    EXPECT(al_tok_hf_create(bytes, strlen(json), 0, &t, NULL), AL_OK);
    free(json);
    if (!t) return;
    EXPECT_COUNT(al_tok_encode(t, "ab", 2, 1, 0, ids, 4, NULL), -1); /* no BOS */
    EXPECT_COUNT(al_tok_encode(t, "ab", 2, 0, 0, ids, 4, NULL), 1);
    CHECK(ids[0] == 256, "'ab' is id 256, got %d", (int)ids[0]);
    al_corpus corpus;
    EXPECT(al_corpus_encode(t, "ab", 2, 1, &corpus, NULL), AL_ERR_ARG); /* no <|im_start|> */
    al_tok_free(t);

    /* Training: a refused corpus, vocabulary size and text, then one that trains. */
    char *trained = NULL;
    size_t trained_len = 0;
    EXPECT(al_tok_train_bpe("ab ab", 0, 300, 0, &trained, &trained_len, NULL, NULL), AL_ERR_ARG);
    EXPECT(al_tok_train_bpe("ab ab", 5, 100, 0, &trained, &trained_len, NULL, NULL), AL_ERR_ARG);
    EXPECT(al_tok_train_bpe("a\xFF", 2, 300, 0, &trained, &trained_len, NULL, NULL), AL_ERR_FORMAT);
    EXPECT(al_tok_train_bpe("ab ab", 5, 300, 0, NULL, &trained_len, NULL, NULL), AL_ERR_ARG);
    EXPECT(al_tok_train_bpe("ab ab", 5, 300, 0, &trained, &trained_len, NULL, NULL), AL_OK);
    CHECK(trained && trained_len > 0, "no tokenizer.json from training");
    /* A corpus with it (MiniMind's added tokens): one document of "ab ab" is too few tokens for
     * windows of 4, enough for windows of 1. */
    EXPECT(al_tok_hf_create((const uint8_t *)trained, trained_len, 0, &t, NULL), AL_OK);
    EXPECT(al_corpus_encode(t, "ab ab", 5, 4, &corpus, NULL), AL_ERR_ARG);
    EXPECT(al_corpus_encode(NULL, "ab ab", 5, 1, &corpus, NULL), AL_ERR_ARG);
    EXPECT(al_corpus_encode(t, "ab ab", 5, 1, &corpus, NULL), AL_OK);
    CHECK(corpus.n_tokens >= 3 && corpus.split < corpus.n_tokens, "a corpus of %lld tokens", (long long)corpus.n_tokens);
    al_corpus_free(&corpus);
    al_tok_free(t);

    /* Cutting the trained file: below 292, above its size, not a tokenizer.json, then to 292. */
    char *cut = (char *)&cut;
    size_t cut_len = 0;
    const uint8_t *tr = (const uint8_t *)trained;
    EXPECT(al_tok_hf_cut(tr, trained_len, 291, &cut, &cut_len, NULL), AL_ERR_ARG);
    EXPECT(al_tok_hf_cut(tr, trained_len, AL_TOK_MAX_VOCAB, &cut, &cut_len, NULL), AL_ERR_ARG);
    EXPECT(al_tok_hf_cut(tr, trained_len - 1, 292, &cut, &cut_len, NULL), AL_ERR_FORMAT);
    EXPECT(al_tok_hf_cut(tr, trained_len, 292, NULL, &cut_len, NULL), AL_ERR_ARG);
    CHECK(cut == NULL, "a refused cut's output is not NULL");
    EXPECT(al_tok_hf_cut(tr, trained_len, 292, &cut, &cut_len, NULL), AL_OK);
    CHECK(cut && cut_len > 0 && cut_len < trained_len, "no smaller tokenizer.json from the cut");
    al_buffer_free(cut);
    al_buffer_free(trained);
}

/* ---- lab.h -------------------------------------------------------------------------------- */

static void test_views(void) {
    float angles[4 * 4], points[4 * 2], v[8] = {1, 2, 3, 4, 5, 6, 7, 8}, dots[4];
    int32_t map[8];
    EXPECT(al_rope_angles_wrapped(angles, 4, 7, 10000.0, NULL), AL_ERR_ARG);
    EXPECT(al_rope_angles_wrapped(angles, 4, 8, 10000.0, NULL), AL_OK);
    EXPECT(al_rope_pair_trace(points, v, 4, 4, 8, 10000.0, NULL), AL_ERR_ARG); /* pair 4 of 4 */
    EXPECT(al_rope_pair_trace(points, v, 3, 4, 8, 10000.0, NULL), AL_OK);
    EXPECT(al_rope_relative_dots(dots, v, -1, 4, 8, 10000.0, NULL), AL_ERR_ARG);
    EXPECT(al_rope_relative_dots(dots, v, 2, 4, 8, 10000.0, NULL), AL_OK);
    int32_t pair_dims[8];
    EXPECT(al_rope_pair_dims(NULL, 8, AL_ROPE_HALF_SPLIT, NULL), AL_ERR_ARG);
    EXPECT(al_rope_pair_dims(pair_dims, 7, AL_ROPE_HALF_SPLIT, NULL), AL_ERR_ARG);
    EXPECT(al_rope_pair_dims(pair_dims, 8, (al_rope_style)9, NULL), AL_ERR_ARG);
    EXPECT(al_rope_pair_dims(pair_dims, 8, AL_ROPE_INTERLEAVED, NULL), AL_OK);
    EXPECT(al_gqa_map(NULL, 8, 2, NULL), AL_ERR_ARG);
    EXPECT(al_gqa_map(map, 8, 3, NULL), AL_ERR_CONFIG);
    EXPECT(al_gqa_map(map, 8, 2, NULL), AL_OK);
}

static void test_session(void) {
    const al_session_config cfg = {al_attn_hparams_default(), 42, 3, 2};
    al_session_config bad = cfg;
    bad.prompt_len = 0;
    al_session *s = (al_session *)&s;
    EXPECT(al_session_create(&cfg, NULL, NULL), AL_ERR_ARG);
    EXPECT(al_session_create(&bad, &s, NULL), AL_ERR_CONFIG);
    CHECK(s == NULL, "a refused session is not NULL");
    bad.prompt_len = AL_MAX_SEQ + 1;
    EXPECT(al_session_create(&bad, &s, NULL), AL_ERR_LIMIT);
    EXPECT(al_session_create(&cfg, &s, NULL), AL_OK);
    if (!s) return;

    al_check checks[AL_CHECK_COUNT];
    float buf[5 * 5 * HIDDEN];
    EXPECT(al_session_verify(s, checks, NULL), AL_ERR_ARG); /* before the prefill */
    EXPECT(al_session_prefill(NULL, NULL), AL_ERR_ARG);
    EXPECT(al_session_prefill(s, NULL), AL_OK);
    EXPECT(al_session_step(NULL, NULL), AL_ERR_ARG);
    EXPECT(al_session_step(s, NULL), AL_OK);
    EXPECT(al_session_step(s, NULL), AL_OK);
    EXPECT(al_session_step(s, NULL), AL_ERR_CAPACITY); /* both decode steps have run */
    EXPECT(al_session_outputs(s, buf, 5 * HIDDEN - 1, NULL), AL_ERR_CAPACITY);
    EXPECT(al_session_outputs(s, buf, 5 * HIDDEN, NULL), AL_OK);
    EXPECT(al_session_attention(s, 4, buf, 5 * 5, NULL), AL_ERR_ARG); /* head 4 of 4 */
    EXPECT(al_session_attention(s, 3, buf, 5 * 5, NULL), AL_OK);
    EXPECT(al_session_mask(s, buf, 5 * 5 - 1, NULL), AL_ERR_CAPACITY);
    EXPECT(al_session_mask(s, buf, 5 * 5, NULL), AL_OK);
    EXPECT(al_session_verify(s, NULL, NULL), AL_ERR_ARG);
    EXPECT(al_session_verify(s, checks, NULL), AL_OK);
    float thumb[4];
    EXPECT(al_session_attention_thumb(s, 9, 2, thumb, 4, NULL), AL_ERR_ARG);
    EXPECT(al_session_attention_thumb(s, 0, 2, thumb, 3, NULL), AL_ERR_CAPACITY);
    EXPECT(al_session_attention_thumb(s, 0, 2, thumb, 4, NULL), AL_OK);
    EXPECT(al_session_run_to(s, 99, NULL), AL_ERR_ARG);
    float dots[8];
    EXPECT(al_session_rope_relative(s, 0, NULL, 8, NULL), AL_ERR_ARG);
    EXPECT(al_session_rope_relative(s, -1, dots, 8, NULL), AL_ERR_ARG);
    EXPECT(al_session_rope_relative(s, 0, dots, 8, NULL), AL_OK);
    al_session_free(s);

    const al_attn_hparams hp = al_attn_hparams_default();
    al_kv_growth_row rows[4];
    CHECK(al_kv_growth(&hp, 0, 3, rows, 4, NULL) == -1, "kv growth: an empty prompt accepted");
    CHECK(al_kv_growth(NULL, 4, 3, rows, 4, NULL) == -1, "kv growth: NULL hyper-parameters accepted");
    CHECK(al_kv_growth(&hp, 4, 3, NULL, 4, NULL) == -1, "kv growth: NULL rows with a capacity accepted");
    CHECK(al_kv_growth(&hp, 4, 3, rows, 4, NULL) == 4, "kv growth failed");
}

/* al_byte_source reads of a byte array (ctx: a struct bytes), and of a file that cannot be read. */
struct bytes {
    const uint8_t *p;
    size_t n;
};
static int bytes_read(void *ctx, uint64_t offset, void *dst, size_t n) {
    const struct bytes *b = ctx;
    if (offset > b->n || n > b->n - offset) return -1;
    memcpy(dst, b->p + offset, n);
    return 0;
}
static int failing_read(void *ctx, uint64_t offset, void *dst, size_t n) {
    (void)ctx, (void)offset, (void)dst, (void)n;
    return -1;
}

/* A .pth: the smallest torch.save could write (an empty dict, "\x80\x02}.", stored as
 * archive/data.pkl, its CRC left 0), then a state_dict's shapes for config.json. */
static void test_pth(void) {
    static const char NAME[] = "archive/data.pkl", PICKLE[] = "\x80\x02}.";
    uint8_t pth[30 + 16 + 4 + 46 + 16 + 22] = {0};
    uint8_t *local = pth, *central = pth + 30 + 16 + 4, *end = central + 46 + 16;
    memcpy(local, "PK\3\4", 4), local[26] = 16;
    memcpy(local + 30, NAME, 16), memcpy(local + 46, PICKLE, 4);
    memcpy(central, "PK\1\2", 4), central[20] = central[24] = 4, central[28] = 16;
    memcpy(central + 46, NAME, 16);
    memcpy(end, "PK\5\6", 4), end[8] = end[10] = 1, end[12] = 46 + 16, end[16] = (uint8_t)(central - pth);
    uint8_t *out = (uint8_t *)&out;
    size_t out_size = 1;
    EXPECT(al_pth_to_safetensors(pth, sizeof pth - 1, &out, &out_size, NULL), AL_ERR_FORMAT);
    CHECK(out == NULL && out_size == 0, "a refused .pth leaves an output");
    EXPECT(al_pth_to_safetensors(pth, sizeof pth, NULL, &out_size, NULL), AL_ERR_ARG);
    EXPECT(al_pth_to_safetensors(pth, sizeof pth, &out, &out_size, NULL), AL_OK);
    al_buffer_free(out);
    /* A state_dict with no tensors: read, but no config.json to infer; nothing kept. */
    al_pth_model pm;
    EXPECT(al_pth_model_read(pth, sizeof pth, NULL, &pm, NULL), AL_ERR_MISSING);
    CHECK(!pm.weights && !pm.tensors && !pm.config, "a refused .pth leaves its parts");
    EXPECT(al_pth_model_read(pth, sizeof pth, NULL, NULL, NULL), AL_ERR_ARG);
    al_model *lm = (al_model *)&lm;
    /* The same read from a source: its index and config.json only. */
    struct bytes whole = {pth, sizeof pth};
    const al_byte_source src = {bytes_read, &whole, sizeof pth}, broken = {failing_read, NULL, sizeof pth};
    EXPECT(al_pth_model_read_source(&src, NULL, &pm, NULL), AL_ERR_MISSING);
    CHECK(!pm.weights && !pm.tensors && !pm.config, "a refused .pth source leaves its parts");
    EXPECT(al_pth_model_read_source(&broken, NULL, &pm, NULL), AL_ERR_IO);
    EXPECT(al_pth_model_read_source(NULL, NULL, &pm, NULL), AL_ERR_ARG);
    EXPECT(al_pth_model_read_source(&src, NULL, NULL, NULL), AL_ERR_ARG);
    EXPECT(al_model_load_source(&src, AL_MODEL_FILE_UNKNOWN, NULL, 0, NULL, 0, 1, &lm, NULL), AL_ERR_MISSING);
    EXPECT(al_model_load_source(&broken, AL_MODEL_FILE_PTH, NULL, 0, NULL, 0, 1, &lm, NULL), AL_ERR_IO);
    EXPECT(al_model_load(pth, sizeof pth, AL_MODEL_FILE_UNKNOWN, NULL, 0, NULL, 0, 1, &lm, NULL), AL_ERR_MISSING);
    CHECK(lm == NULL, "a refused model leaves an output");
    EXPECT(al_model_load(pth, 7, AL_MODEL_FILE_UNKNOWN, NULL, 0, NULL, 0, 1, &lm, NULL), AL_ERR_FORMAT);
    EXPECT(al_model_load(pth, sizeof pth, AL_MODEL_FILE_SAFETENSORS, NULL, 0, NULL, 0, 1, &lm, NULL), AL_ERR_MISSING);
    EXPECT(al_model_load(NULL, 0, AL_MODEL_FILE_UNKNOWN, NULL, 0, NULL, 0, 1, &lm, NULL), AL_ERR_ARG);
    EXPECT(al_model_load_source(NULL, AL_MODEL_FILE_UNKNOWN, NULL, 0, NULL, 0, 1, &lm, NULL), AL_ERR_ARG);
    EXPECT(al_model_from_llama2c_source(NULL, 0, 1, &lm, NULL), AL_ERR_ARG);
    EXPECT(al_model_from_minimind_source("{}", 2, NULL, NULL, 0, 1, &lm, NULL), AL_ERR_ARG);

    static const float w[8] = {0};
    const al_st_entry e[5] = {
        {"model.embed_tokens.weight", w, 2, {4, 2}},
        {"model.layers.0.self_attn.q_proj.weight", w, 2, {2, 2}},
        {"model.layers.0.self_attn.k_proj.weight", w, 2, {2, 2}},
        {"model.layers.0.self_attn.q_norm.weight", w, 1, {2}},
        {"model.layers.0.mlp.gate_proj.weight", w, 2, {3, 2}},
    };
    size_t size = 0;
    uint8_t *bytes = serialize(e, 5, &size);
    al_safetensors *st = NULL;
    EXPECT(al_st_parse(bytes, size, &st, NULL), AL_OK);
    al_pth_flags f = al_pth_flags_default();
    f.moe_top_k = 2;
    CHECK(al_minimind_config_from_tensors(st, &f, NULL, 0, NULL) == -1, "top-2 of a dense model");
    CHECK(al_minimind_config_from_tensors(st, NULL, NULL, 0, NULL) > 0, "a config's size query");
    al_st_free(st);
    free(bytes);
}

/* The whole decoder, on a small model made here, and the llama2.c reader on bytes. */
static void test_whole_model(void) {
    al_model_hparams hp = {32, 16, 2, 4, 2, 4, 24, 16, 10000.0, 1e-5f, 0, AL_ROPE_INTERLEAVED, 1, 0, 0, 0, 0, 0.0, 0, 0.0, 0.0, 0.0};
    EXPECT(al_model_hparams_check(NULL, NULL), AL_ERR_ARG);
    al_model_hparams bad = hp;
    bad.n_layers = 0;
    EXPECT(al_model_hparams_check(&bad, NULL), AL_ERR_CONFIG);
    EXPECT(al_model_hparams_check(&hp, NULL), AL_OK);
    al_model *m = (al_model *)&m;
    EXPECT(al_model_create(&hp, 99, 4, &m, NULL), AL_ERR_ARG); /* beyond max_seq */
    CHECK(m == NULL, "a refused model is not NULL");
    EXPECT(al_model_create(&hp, 16, 4, NULL, NULL), AL_ERR_ARG);
    EXPECT(al_model_create_inference(&hp, 16, 4, (al_weight_dtype)7, &m, NULL), AL_ERR_ARG);
    EXPECT(al_model_create_inference(&hp, 16, 4, AL_WEIGHTS_F16, &m, NULL), AL_OK);
    const float zero = 0.0f;
    EXPECT(al_model_set_param(m, AL_MP_FINAL_NORM, 0, 0, &zero, AL_WEIGHTS_F32, 1, NULL), AL_ERR_SHAPE);
    EXPECT(al_model_set_param(m, AL_MP_WQ, 0, 0, NULL, AL_WEIGHTS_F32, 1, NULL), AL_ERR_ARG);
    EXPECT(al_model_set_threads(m, 0, NULL), AL_ERR_ARG);
    EXPECT(al_model_set_threads(NULL, 2, NULL), AL_ERR_ARG);
    EXPECT(al_model_set_threads(m, 2, NULL), AL_OK);
    al_model_free(m);
    EXPECT(al_model_create(&hp, 16, 4, &m, NULL), AL_OK);
    const int32_t ids[3] = {1, 2, 99};
    float logits[32];
    EXPECT(al_model_forward(m, ids, 3, logits, 1, 32, NULL, 0, NULL), AL_ERR_ARG); /* id 99 */
    EXPECT(al_model_forward(m, ids, 2, logits, 2, 32, NULL, 0, NULL), AL_ERR_CAPACITY);
    EXPECT(al_model_forward(m, ids, 2, logits, 1, 32, NULL, 0, NULL), AL_OK);
    al_model_free(m);

    al_model_bench_result bench;
    EXPECT(al_model_bench_run(NULL, 4, 4, 1, 1 << 20, &bench, NULL), AL_ERR_ARG);
    EXPECT(al_model_fill_random(NULL, 1, NULL), AL_ERR_ARG);
    EXPECT(al_model_create(&hp, 16, 4, &m, NULL), AL_OK);
    EXPECT(al_model_fill_random(m, 1, NULL), AL_OK);
    EXPECT(al_model_bench_run(m, 12, 8, 1, 1 << 20, &bench, NULL), AL_ERR_ARG); /* past the context */
    EXPECT(al_model_bench_run(m, 4, 4, 1, 1 << 20, &bench, NULL), AL_OK);
    al_model_free(m);

    al_sampler_params sp = al_sampler_params_default();
    float stages[AL_SAMPLER_STAGES * 32];
    EXPECT(al_sampler_stages(logits, 32, NULL, 0, &sp, stages, 10, NULL), AL_ERR_CAPACITY);
    EXPECT(al_sampler_stages(logits, 32, NULL, 0, &sp, stages, AL_SAMPLER_STAGES * 32, NULL), AL_OK);
    CHECK(al_sample(logits, 32, NULL, 0, &sp, NULL, stages, AL_SAMPLER_STAGES * 32, NULL) == -1, "no generator");
    const int32_t seen_bad[1] = {32};
    EXPECT(al_sampler_penalise(logits, 32, seen_bad, 1, 1.2, NULL), AL_ERR_ARG);
    EXPECT(al_sampler_penalise(logits, 32, NULL, 0, 0.0, NULL), AL_ERR_ARG);

    al_rng *draw = al_rng_create(1);
    const float weights[3] = {0.5f, -1.0f, 2.0f};
    int64_t drawn[2];
    EXPECT(al_rng_multinomial(draw, drawn, weights, 3, 1, 0, NULL, NULL), AL_ERR_ARG); /* -1 */
    EXPECT(al_rng_multinomial(draw, drawn, weights + 2, 1, 2, 0, stages, NULL), AL_ERR_ARG);
    EXPECT(al_rng_multinomial(draw, drawn, weights + 2, 1, 2, 1, stages, NULL), AL_OK);
    al_rng_free(draw);

    const uint8_t junk[40] = {4, 0, 0, 0};
    EXPECT(al_llama2c_hparams(junk, 10, &hp, NULL), AL_ERR_FORMAT);
    EXPECT(al_llama2c_hparams(junk, sizeof junk, &hp, NULL), AL_ERR_FORMAT);
    EXPECT(al_llama2c_hparams(NULL, 0, &hp, NULL), AL_ERR_ARG);
    EXPECT(al_model_from_llama2c(junk, sizeof junk, 0, 4, &m, NULL), AL_ERR_FORMAT);
    EXPECT(al_model_from_llama2c(junk, sizeof junk, 0, 4, NULL, NULL), AL_ERR_ARG);

    /* A MiniMind config over a file with no tensors: the config reads, the model is missing. */
    uint8_t empty[64];
    size_t empty_size = 0;
    al_safetensors *st = NULL;
    EXPECT(al_st_serialize(NULL, 0, NULL, 0, empty, sizeof empty, &empty_size, NULL), AL_OK);
    EXPECT(al_st_parse(empty, empty_size, &st, NULL), AL_OK);
    const char config[] = "{\"hidden_size\": 16, \"num_hidden_layers\": 1, \"num_attention_heads\": 2, "
                          "\"num_key_value_heads\": 1, \"vocab_size\": 10, \"max_position_embeddings\": 8}";
    EXPECT(al_minimind_hparams("{", 1, st, &hp, NULL), AL_ERR_FORMAT);
    EXPECT(al_minimind_hparams(config, sizeof config - 1, NULL, &hp, NULL), AL_ERR_ARG);
    EXPECT(al_minimind_hparams(config, sizeof config - 1, st, &hp, NULL), AL_OK);
    EXPECT(al_model_from_minimind(config, sizeof config - 1, st, 0, 4, &m, NULL), AL_ERR_MISSING);
    EXPECT(al_model_from_minimind(config, sizeof config - 1, st, 0, 4, NULL, NULL), AL_ERR_ARG);
    CHECK(al_minimind_config_from_tensors(st, NULL, NULL, 0, NULL) == -1, "a config from no tensors");
    CHECK(al_minimind_config_from_tensors(NULL, NULL, NULL, 0, NULL) == -1, "a config from NULL");
    al_st_free(st);
    test_pth();
}

static void test_bench(void) {
    al_bench_config cfg = {al_attn_hparams_default(), 4, 4, 1, 0};
    al_bench_result res;
    EXPECT(al_bench_run(NULL, &res, NULL), AL_ERR_ARG);
    cfg.repeats = 0;
    EXPECT(al_bench_run(&cfg, &res, NULL), AL_ERR_ARG);
    cfg.repeats = 1, cfg.hp.n_kv_heads = 3;
    EXPECT(al_bench_run(&cfg, &res, NULL), AL_ERR_CONFIG);
    cfg.hp.n_kv_heads = 2;
    EXPECT(al_bench_run(&cfg, &res, NULL), AL_OK);
    double gflops = -1.0;
    EXPECT(al_gemm_bench_run(0, 16, 16, 1, &gflops, NULL), AL_ERR_ARG);
    EXPECT(al_gemm_bench_run(4, 16, 16, 0, &gflops, NULL), AL_ERR_ARG);
    EXPECT(al_gemm_bench_run(4, 16, 16, 1, NULL, NULL), AL_ERR_ARG);
    EXPECT(al_gemm_bench_run(4, 16, 16, 1, &gflops, NULL), AL_OK);
    CHECK(gflops > 0.0, "gemm bench: %g GFLOP/s", gflops);
}

/* The model lab with no model: every call refused without an error to fill. */
static void test_model_lab(void) {
    al_model_lab *lab = (al_model_lab *)&lab;
    const uint8_t junk[40] = {4, 0, 0, 0};
    EXPECT(al_model_lab_create(NULL, 0, AL_MODEL_FILE_UNKNOWN, NULL, 0, junk, sizeof junk, 0, &lab, NULL), AL_ERR_ARG);
    CHECK(lab == NULL, "a refused lab leaves an output");
    EXPECT(al_model_lab_create(junk, sizeof junk, AL_MODEL_FILE_UNKNOWN, NULL, 0, NULL, 0, 0, &lab, NULL), AL_ERR_MISSING);
    EXPECT(al_model_lab_create(junk, sizeof junk, AL_MODEL_FILE_UNKNOWN, NULL, 0, junk, sizeof junk, 0, &lab, NULL), AL_ERR_FORMAT);
    EXPECT(al_model_lab_create(junk, sizeof junk, AL_MODEL_FILE_UNKNOWN, NULL, 0, junk, sizeof junk, -1, &lab, NULL), AL_ERR_ARG);
    al_sampler_params sp = al_sampler_params_default();
    const int32_t ids[1] = {1};
    float f[4];
    int32_t i32[4];
    al_kv_growth_row rows[1];
    CHECK(al_model_lab_prompt(NULL, "a", 1, 0, NULL) == -1, "prompt");
    CHECK(al_model_lab_prompt_ids(NULL, ids, 1, 0, NULL) == -1, "prompt ids");
    CHECK(al_model_lab_step(NULL, &sp, NULL) == -1, "step");
    EXPECT(al_model_lab_set_charts(NULL, 1, NULL), AL_ERR_ARG);
    EXPECT(al_model_lab_set_threads(NULL, 1, NULL), AL_ERR_ARG);
    EXPECT(al_model_lab_attention(NULL, 0, 0, f, 4, NULL), AL_ERR_ARG);
    EXPECT(al_model_lab_thumbs(NULL, 4, f, 4, NULL), AL_ERR_ARG);
    EXPECT(al_model_lab_mask(NULL, f, 4, NULL), AL_ERR_ARG);
    EXPECT(al_model_lab_stages(NULL, f, 4, NULL), AL_ERR_ARG);
    CHECK(al_model_lab_top_ids(NULL, 2, i32, NULL) == -1, "top ids");
    EXPECT(al_model_lab_roles(NULL, f, 4, NULL), AL_ERR_ARG);
    CHECK(al_model_lab_routing(NULL, 0, i32, f, 4, NULL) == -1, "routing");
    EXPECT(al_model_lab_resid_norms(NULL, f, 4, NULL), AL_ERR_ARG);
    CHECK(al_model_lab_kv(NULL, rows, 1, NULL) == -1, "kv");
    char text[4];
    uint8_t bytes[4];
    CHECK(al_model_lab_token_text(NULL, 0, text, 4, NULL) == -1, "token text");
    CHECK(al_model_lab_token_bytes(NULL, 0, bytes, 4, NULL) == -1, "token bytes");
    CHECK(al_model_lab_piece(NULL, 0, bytes, 4, NULL) == -1, "piece");
    EXPECT(al_model_lab_rope(NULL, f, f, 4, NULL), AL_ERR_ARG);
    EXPECT(al_model_lab_resume(NULL, NULL), AL_ERR_ARG);
    CHECK(al_model_lab_pending(NULL, &sp, f, 4, i32, 1, NULL) == -1, "pending");
    CHECK(al_model_lab_role_ranking(NULL, AL_LAB_ROLE_PREVIOUS, i32, 4, NULL) == -1, "role ranking");
    float ideal[25];
    EXPECT(al_lab_role_ideal(AL_LAB_ROLE_PREVIOUS, 2, NULL, 25, NULL), AL_ERR_ARG);
    EXPECT(al_lab_role_ideal((al_lab_role)99, 2, ideal, 25, NULL), AL_ERR_ARG);
    EXPECT(al_lab_role_ideal(AL_LAB_ROLE_PREVIOUS, 1, ideal, 25, NULL), AL_ERR_ARG);
    EXPECT(al_lab_role_ideal(AL_LAB_ROLE_PREVIOUS, 2, ideal, 25, NULL), AL_OK);
    al_model_hparams hp = {0};
    EXPECT(al_model_rope_freqs(&hp, f, 4, NULL), AL_ERR_CONFIG);
}

/* The generator on a small model of zeroed weights, every call with no error to fill. */
static void test_generator(void) {
    al_model_hparams hp = {32, 16, 2, 4, 2, 4, 24, 16, 10000.0, 1e-5f, 0, AL_ROPE_INTERLEAVED, 1, 0, 0, 0, 0, 0.0, 0, 0.0, 0.0, 0.0};
    al_model *m = NULL;
    EXPECT(al_model_create(&hp, 8, 4, &m, NULL), AL_OK);
    al_gen_options opt = al_gen_options_default();
    al_generator *g = (al_generator *)&g;
    EXPECT(al_gen_create(NULL, NULL, AL_MODEL_FILE_LLAMA2C, &opt, &g, NULL), AL_ERR_ARG);
    CHECK(g == NULL, "a refused generator is not NULL");
    opt.max_new = -2;
    EXPECT(al_gen_create(m, NULL, AL_MODEL_FILE_LLAMA2C, &opt, &g, NULL), AL_ERR_ARG);
    opt.max_new = 2;
    opt.ignore_eos = 1; /* zeroed weights draw any id, the stop token too */
    EXPECT(al_gen_create(m, NULL, AL_MODEL_FILE_LLAMA2C, &opt, &g, NULL), AL_OK);
    EXPECT(al_gen_set_options(NULL, &opt, NULL), AL_ERR_ARG);
    EXPECT(al_gen_forward(NULL, NULL), AL_ERR_ARG);
    CHECK(al_gen_encode_prompt(NULL, "a", 1, NULL, 0, NULL) == -1, "encode with no tokenizer");
    const int32_t ids[3] = {1, 2, 99};
    CHECK(al_gen_step(g, NULL) == -1, "a step before a prompt");
    CHECK(al_gen_prompt(g, ids, 3, 0, NULL) == -1, "id 99");
    CHECK(al_gen_prompt(g, ids, 0, 0, NULL) == -1, "no ids");
    CHECK(al_gen_prompt(g, ids, 2, 0, NULL) == 2, "a prompt");
    EXPECT(al_gen_forward(g, NULL), AL_OK);
    CHECK(al_gen_step(g, NULL) >= 0 && al_gen_step(g, NULL) >= 0, "two steps");
    CHECK(al_gen_step(g, NULL) == -1 && al_gen_finished(g) != AL_GEN_GOING, "past max_new");
    EXPECT(al_gen_resume(NULL, NULL), AL_ERR_ARG);
    EXPECT(al_gen_resume(g, NULL), AL_ERR_ARG); /* ended by its length, not the stop token */
    al_gen_free(g);
    al_model_free(m);
}

static float *trainer_weight_for_write(void *ctx, const al_weight_ref *ref, int64_t *numel) {
    return al_trainer_param((al_trainer *)ctx, ref->p, ref->layer, ref->expert, numel);
}

/* The trainer and its files with no error to fill. */
static void test_trainer(void) {
    al_model_hparams hp = {0};
    hp.vocab = 16, hp.hidden = 8, hp.n_layers = 1, hp.n_heads = 2, hp.n_kv_heads = 1, hp.head_dim = 4;
    hp.ffn_hidden = 8, hp.max_seq = 8, hp.rope_base = 10000.0, hp.eps = 1e-6f, hp.tied = 1;
    al_trainer *t = (al_trainer *)&t;
    EXPECT(al_trainer_create(&hp, 0, 4, &t, NULL), AL_ERR_ARG);
    CHECK(t == NULL, "a refused trainer leaves an output");
    EXPECT(al_trainer_create(&hp, 1, 4, &t, NULL), AL_OK);
    EXPECT(al_trainer_set_threads(t, AL_MAX_THREADS + 1, NULL), AL_ERR_ARG);
    EXPECT(al_trainer_set_threads(t, 2, NULL), AL_OK);
    CHECK(al_trainer_threads(t) == 2 && al_trainer_threads(NULL) == -1, "trainer threads");
    EXPECT(al_trainer_init_weights(NULL, 1, NULL), AL_ERR_ARG);
    EXPECT(al_trainer_init_weights(t, 1, NULL), AL_OK);
    EXPECT(al_weights_init(NULL, 1, trainer_weight_for_write, t, NULL), AL_ERR_ARG);
    EXPECT(al_weights_init(&hp, 1, trainer_weight_for_write, t, NULL), AL_OK);
    const int32_t ids[4] = {1, 2, 3, 4}, none[4] = {-100, -100, -100, -100};
    EXPECT(al_trainer_forward(t, ids, none, 1, 4, 0.0, NULL, NULL, NULL, NULL), AL_ERR_ARG);
    EXPECT(al_trainer_backward(t, 1.0f, NULL), AL_ERR_ARG); /* no forward yet */
    EXPECT(al_trainer_forward(t, ids, ids, 1, 4, 0.0, NULL, NULL, NULL, NULL), AL_OK);
    EXPECT(al_trainer_backward(t, 1.0f, NULL), AL_OK);
    al_adamw_params p = al_adamw_params_default();
    p.beta1 = 1.5;
    EXPECT(al_trainer_step(t, &p, NULL, NULL), AL_ERR_ARG);
    uint8_t *image = NULL;
    size_t size = 0;
    EXPECT(al_trainer_export(NULL, NULL, 0, &image, &size, NULL), AL_ERR_ARG);
    EXPECT(al_trainer_export(t, NULL, 0, &image, &size, NULL), AL_OK);
    al_safetensors *st = NULL;
    EXPECT(al_st_parse(image, size, &st, NULL), AL_OK);
    EXPECT(al_trainer_import(t, st, NULL), AL_OK);
    EXPECT(al_trainer_import(NULL, st, NULL), AL_ERR_ARG);
    al_st_free(st);
    free(image);
    uint8_t empty[64];
    size_t empty_size = 0;
    EXPECT(al_st_serialize(NULL, 0, NULL, 0, empty, sizeof empty, &empty_size, NULL), AL_OK);
    EXPECT(al_st_parse(empty, empty_size, &st, NULL), AL_OK);
    EXPECT(al_trainer_import(t, st, NULL), AL_ERR_MISSING);
    EXPECT(al_trainer_import_state(t, st, 0, NULL), AL_ERR_SHAPE);
    EXPECT(al_trainer_import_state(NULL, st, 0, NULL), AL_ERR_ARG);
    al_st_free(st);
    EXPECT(al_trainer_export_state(NULL, NULL, 0, &image, &size, NULL), AL_ERR_ARG);
    EXPECT(al_trainer_export_state(t, NULL, 0, &image, &size, NULL), AL_OK);
    EXPECT(al_st_parse(image, size, &st, NULL), AL_OK);
    EXPECT(al_trainer_import_state(t, st, 3, NULL), AL_OK);
    EXPECT(al_trainer_check(t, NULL), AL_OK);
    EXPECT(al_trainer_check(NULL, NULL), AL_ERR_ARG);
    CHECK(al_trainer_steps(t) == 3, "the step count came back as %lld", (long long)al_trainer_steps(t));
    al_st_free(st);
    free(image);
    /* the one training step on a stream of 20 ids: too few for windows of 12, enough for 4 */
    int32_t stream[20], batch_ids[4];
    for (int i = 0; i < 20; i++) stream[i] = 1 + i % 15;
    al_stream_batches sb;
    EXPECT(al_stream_batches_init(&sb, stream, 20, 10, 1, 12, 7, NULL), AL_ERR_ARG);
    EXPECT(al_stream_batches_init(&sb, stream, 20, 10, 1, 4, 7, NULL), AL_OK);
    const al_batch_source src = al_stream_batch_source(&sb);
    al_train_settings ts = {1, 4, 2, 3, 1e-3, 0.0, al_adamw_params_default()};
    EXPECT(al_train_step(NULL, &ts, &src, 0, batch_ids, NULL, NULL), AL_ERR_ARG);
    EXPECT(al_train_step(t, &ts, &src, 3, batch_ids, NULL, NULL), AL_ERR_ARG); /* past the run */
    EXPECT(al_train_step(t, &ts, &src, 0, batch_ids, NULL, NULL), AL_OK);
    CHECK(isfinite(al_train_held_out_loss(t, &ts, &src, batch_ids)), "no held-out loss");
    EXPECT(al_trainer_init_weights(t, 1, NULL), AL_OK);
    /* the model's export and NLL, the bigram baseline, float16 writing */
    al_model *m = NULL;
    EXPECT(al_model_create(&hp, 4, 4, &m, NULL), AL_OK);
    EXPECT(al_model_export(NULL, AL_DTYPE_F16, NULL, 0, &image, &size, NULL), AL_ERR_ARG);
    EXPECT(al_model_export(m, AL_DTYPE_BF16, NULL, 0, &image, &size, NULL), AL_ERR_ARG);
    EXPECT(al_model_export(m, AL_DTYPE_F16, NULL, 0, &image, &size, NULL), AL_OK);
    free(image);
    double nll = 0.0;
    int64_t count = 0;
    EXPECT(al_model_nll(m, ids, 1, &nll, &count, NULL), AL_ERR_ARG);
    EXPECT(al_model_nll(m, ids, 4, &nll, &count, NULL), AL_OK);
    CHECK(count == 3, "%lld targets", (long long)count);
    al_model_free(m);
    al_bigram_result bigram;
    EXPECT(al_bigram_loss(ids, 1, ids, ids, 1, 16, &bigram, NULL), AL_ERR_ARG);
    EXPECT(al_bigram_loss(ids, 4, ids, ids + 1, 2, 16, &bigram, NULL), AL_OK);
    const float one = 1.0f;
    const al_st_entry entry = {"x", &one, 1, {1}};
    EXPECT(al_st_serialize_as(&entry, 1, AL_DTYPE_I64, NULL, 0, NULL, 0, &size, NULL), AL_ERR_ARG);
    EXPECT(al_st_serialize_as(&entry, 1, AL_DTYPE_F16, NULL, 0, NULL, 0, &size, NULL), AL_OK);
    double ms = 0.0;
    EXPECT(al_train_bench_run(NULL, 1, 4, 1, &ms, NULL), AL_ERR_ARG);
    EXPECT(al_train_bench_run(&hp, 1, 4, 0, &ms, NULL), AL_ERR_ARG);
    EXPECT(al_train_bench_run(&hp, 1, 4, 1, &ms, NULL), AL_OK);
    char *config = NULL;
    size_t config_len = 0;
    EXPECT(al_trainer_config_json(NULL, &config, &config_len, NULL), AL_ERR_ARG);
    EXPECT(al_trainer_config_json(t, &config, &config_len, NULL), AL_OK);
    CHECK(config && strstr(config, "\"intermediate_size\""), "no config.json from the trainer");
    free(config);
    al_trainer_free(t);
}

/* ---- demos.h: returns a length, -1 on failure --------------------------------------------- */

/* The Train tab's lab on a tokenizer trained here: a refused shape, then a run; a refused head
 * (its pattern, its ablation), the probe's losses in too little room and a refused file, then
 * one of each that is there. */
static void test_train_lab(void) {
    char *tj = NULL;
    size_t tj_len = 0;
    EXPECT(al_tok_train_bpe("ab ab ab cd", 11, 300, 0, &tj, &tj_len, NULL, NULL), AL_OK);
    al_train_lab_config c;
    al_train_lab_config_default(&c);
    c.vocab = 292, c.batch = 1, c.seq = 8, c.steps = 2, c.eval_every = 1, c.heads = 3;
    al_train_lab *lab = NULL;
    EXPECT(al_train_lab_create(&c, (const uint8_t *)tj, tj_len, NULL, 0, &lab, NULL), AL_ERR_ARG);
    c.heads = 2;
    EXPECT(al_train_lab_create(&c, (const uint8_t *)tj, tj_len, NULL, 0, &lab, NULL), AL_OK);
    CHECK(al_train_lab_step(lab, -1, NULL) == -1 && al_train_lab_step(lab, 5, NULL) == 2, "steps");
    float pattern[64];
    EXPECT(al_train_lab_attention(lab, 5, 0, pattern, 64, NULL), AL_ERR_ARG);
    EXPECT(al_train_lab_attention(lab, 0, 0, pattern, 64, NULL), AL_OK);
    CHECK(al_train_lab_history(lab, 3, NULL, 0, NULL) == -1 && al_train_lab_history(lab, 0, NULL, 0, NULL) == 2,
          "history");
    CHECK(al_train_lab_evals(lab, 9, NULL, 0, NULL) == -1 && al_train_lab_evals(lab, 0, NULL, 0, NULL) == 3, "evals");
    uint8_t piece[8];
    CHECK(al_train_lab_piece(lab, -1, piece, 8, NULL) == -1 && al_train_lab_piece(lab, 97, piece, 8, NULL) == 1,
          "piece");
    const int32_t bad_head[2] = {0, 2}, head[2] = {1, 0};
    float probe[AL_PROBE_COLUMNS];
    EXPECT(al_train_lab_set_threads(NULL, 1, NULL), AL_ERR_ARG);
    EXPECT(al_train_lab_set_threads(lab, 0, NULL), AL_ERR_ARG);
    EXPECT(al_train_lab_set_threads(lab, 2, NULL), AL_OK);
    CHECK(al_train_lab_threads(lab) == 2 && al_train_lab_threads(NULL) == -1, "train lab threads");
    EXPECT(al_train_lab_set_ablation(lab, bad_head, 1, NULL), AL_ERR_ARG);
    EXPECT(al_train_lab_set_ablation(lab, head, 1, NULL), AL_OK);
    EXPECT(al_train_lab_probe_loss(lab, probe, AL_PROBE_COLUMNS - 1, NULL), AL_ERR_CAPACITY);
    EXPECT(al_train_lab_probe_loss(lab, probe, AL_PROBE_COLUMNS, NULL), AL_OK);
    uint8_t *file = NULL;
    size_t file_len = 0;
    EXPECT(al_train_lab_file(lab, (al_train_lab_file_kind)9, &file, &file_len, NULL), AL_ERR_ARG);
    EXPECT(al_train_lab_file(lab, AL_TRAIN_FILE_CONFIG, &file, &file_len, NULL), AL_OK);
    al_buffer_free(file);
    al_train_lab_free(lab);
    al_buffer_free(tj);
}

static void test_demos(void) {
    CHECK(al_demo_run((al_demo)7, AL_LANG_EN, -1, NULL, 0, NULL) == -1, "unknown demo accepted");
    CHECK(al_demo_run(AL_DEMO_BASIC, (al_lang)7, -1, NULL, 0, NULL) == -1, "unknown language accepted");
    CHECK(al_demo_run(AL_DEMO_BASIC, AL_LANG_EN, -1, NULL, 5, NULL) == -1, "NULL buffer with a capacity accepted");
    CHECK(al_demo_run(AL_DEMO_ATTENTION, AL_LANG_EN, -1, NULL, 0, NULL) > 0, "the attention demo's size query failed");
    al_demo_section sections[16];
    CHECK(al_demo_sections((al_demo)7, AL_LANG_EN, -1, sections, 16, NULL, 0, NULL) == -1, "sections of an unknown demo");
    const int64_t len = al_demo_sections(AL_DEMO_BASIC, AL_LANG_EN, -1, sections, 16, NULL, 0, NULL);
    CHECK(len > 0, "sections size query failed");
    char *text = len > 0 ? malloc((size_t)len + 1) : NULL;
    CHECK(al_demo_sections(AL_DEMO_BASIC, AL_LANG_EN, -1, sections, 1, text, len + 1, NULL) == -1,
          "too few sections accepted");
    CHECK(text && al_demo_sections(AL_DEMO_BASIC, AL_LANG_EN, -1, sections, 16, text, len + 1, NULL) == len,
          "sections fill failed");
    free(text);
    /* the charts' numbers of chapters 04 and 05: refused, then given */
    float out[72];
    EXPECT(al_demo_ffn_curves(out, 1, 72, NULL), AL_ERR_ARG);
    EXPECT(al_demo_ffn_curves(out, 7, 21, NULL), AL_OK);
    EXPECT(al_demo_router(-1, NULL, 72, NULL), AL_ERR_ARG);
    EXPECT(al_demo_router(-1, out, 72, NULL), AL_OK);
    EXPECT(al_demo_expert_load(7, out, 15, NULL), AL_ERR_CAPACITY);
    EXPECT(al_demo_expert_load(7, out, 16, NULL), AL_OK);
    EXPECT(al_demo_block_stream(7, out, 13, NULL), AL_ERR_CAPACITY);
    EXPECT(al_demo_block_stream(7, out, 14, NULL), AL_OK);
    EXPECT(al_demo_shifted_labels(0, NULL, 25, NULL), AL_ERR_ARG);
    EXPECT(al_demo_shifted_labels(0, out, 25, NULL), AL_OK);
    /* chapter 10's: refused, then given */
    float gen[192];
    EXPECT(al_demo_sampler_stages(-1, 6, gen, 144, NULL), AL_ERR_ARG);
    EXPECT(al_demo_sampler_stages(-1, 4, gen, 119, NULL), AL_ERR_CAPACITY);
    EXPECT(al_demo_sampler_stages(-1, 4, gen, 120, NULL), AL_OK);
    EXPECT(al_demo_temperatures(7, gen, 143, NULL), AL_ERR_CAPACITY);
    EXPECT(al_demo_temperatures(7, gen, 144, NULL), AL_OK);
    EXPECT(al_demo_draws(0, NULL, 192, NULL), AL_ERR_ARG);
    EXPECT(al_demo_draws(0, gen, 191, NULL), AL_ERR_CAPACITY);
    EXPECT(al_demo_draws(0, gen, 192, NULL), AL_OK);
    EXPECT(al_demo_eos(0, gen, 47, NULL), AL_ERR_CAPACITY);
    EXPECT(al_demo_eos(0, gen, 48, NULL), AL_OK);
}

/* The experiments on a small model of zeroed weights, and the lab's and the trainer's ablation,
 * every call with no error to fill. */
static void test_experiments(void) {
    al_model_hparams hp = {32, 16, 2, 4, 2, 4, 24, 16, 10000.0, 1e-5f, 0, AL_ROPE_INTERLEAVED, 1, 0, 0, 0, 0, 0.0, 0, 0.0, 0.0, 0.0};
    al_model *m = NULL;
    EXPECT(al_model_create(&hp, 8, 4, &m, NULL), AL_OK);
    const int32_t heads[4] = {1, 3, 2, 0}, ids[3] = {1, 2, 3}, other[3] = {1, 5, 3}, bad[3] = {1, 2, 32};
    EXPECT(al_model_set_ablation(NULL, heads, 1, NULL), AL_ERR_ARG);
    EXPECT(al_model_set_ablation(m, heads + 2, 1, NULL), AL_ERR_ARG); /* layer 2 of 2 */
    EXPECT(al_model_set_ablation(m, heads, 1, NULL), AL_OK);
    static float out[3 * 3 * 32];
    int32_t top[9];
    float prob[9];
    EXPECT(al_model_logit_lens(m, bad, 3, out, 3 * 3 * 32, NULL), AL_ERR_ARG);
    EXPECT(al_model_logit_lens(m, ids, 3, out, 3, NULL), AL_ERR_CAPACITY);
    EXPECT(al_model_logit_lens(m, ids, 3, out, 3 * 3 * 32, NULL), AL_OK);
    EXPECT(al_model_logit_lens_top(m, ids, 0, top, prob, 9, NULL), AL_ERR_ARG);
    EXPECT(al_model_logit_lens_top(m, ids, 3, top, prob, 9, NULL), AL_OK);
    EXPECT(al_model_dla(m, ids, 3, 32, out, 11 * 3, NULL), AL_ERR_ARG);
    EXPECT(al_model_dla(m, ids, 3, 5, out, 11 * 3, NULL), AL_OK);
    static float stream[3 * 8 * 16], hz[2 * 8 * 16], ffn[2 * 8 * 16];
    const al_model_parts parts = {stream, hz, ffn, 8}, none = {NULL, NULL, NULL, 8};
    al_model_keep_parts(m, &parts);
    al_model_reset(m);
    EXPECT(al_model_forward(m, ids, 3, out, 1, 32, NULL, 0, NULL), AL_OK);
    al_model_keep_parts(m, NULL);
    EXPECT(al_model_lens_top_of(m, &none, 3, top, prob, 9, NULL), AL_ERR_ARG);
    EXPECT(al_model_lens_top_of(m, &parts, 9, top, prob, 9, NULL), AL_ERR_ARG); /* 9 of 8 kept */
    EXPECT(al_model_lens_top_of(m, &parts, 3, top, prob, 8, NULL), AL_ERR_CAPACITY);
    EXPECT(al_model_lens_top_of(m, &parts, 3, top, prob, 9, NULL), AL_OK);
    EXPECT(al_model_dla_of(m, ids, 3, &none, 5, out, 11 * 3, NULL), AL_ERR_ARG);
    EXPECT(al_model_dla_of(m, ids, 3, &parts, 32, out, 11 * 3, NULL), AL_ERR_ARG);
    EXPECT(al_model_dla_of(m, ids, 3, &parts, 5, out, 11 * 3, NULL), AL_OK);
    EXPECT(al_model_patch(m, ids, other, 3, 4, 4, 0, out, 16, NULL), AL_ERR_ARG);
    EXPECT(al_model_patch(m, ids, bad, 3, 4, 5, 0, out, 16, NULL), AL_ERR_ARG);
    EXPECT(al_model_patch(m, ids, other, 3, 4, 5, 0, out, 15, NULL), AL_ERR_CAPACITY);
    EXPECT(al_model_patch(m, ids, other, 3, 4, 5, 1, out, 16, NULL), AL_OK);
    al_model_free(m);
    EXPECT(al_trainer_set_ablation(NULL, heads, 1, NULL), AL_ERR_ARG);
    EXPECT(al_trainer_set_threads(NULL, 1, NULL), AL_ERR_ARG);
    EXPECT(al_model_lab_set_ablation(NULL, heads, 1, NULL), AL_ERR_ARG);
    EXPECT(al_model_lab_lens(NULL, top, prob, 9, NULL), AL_ERR_ARG);
    EXPECT(al_model_lab_dla(NULL, 1, out, 9, NULL), AL_ERR_ARG);
    EXPECT(al_model_lab_patch(NULL, ids, other, 3, 4, 5, out, 16, NULL), AL_ERR_ARG);
    CHECK(al_model_lab_encode(NULL, "a", 1, top, 9, NULL) == -1, "encode");
    const al_sampler_params sp = al_sampler_params_default();
    CHECK(al_model_lab_ahead(NULL, &sp, 0, top, 9, out, 9, NULL) == -1, "ahead");
    CHECK(al_model_lab_prompt_loss(NULL, 1, NULL) == -1.0, "prompt loss");
    CHECK(al_model_lab_ids_text(NULL, top, 1, NULL, 0, NULL) == -1, "ids text");
    CHECK(al_model_lab_token_id(NULL, "a", 1, NULL) == -1, "token id");
    CHECK(al_patch_recovered(NULL, 3, 1.0f, 0.0f, out, 9, NULL) == -1, "patch share");
    CHECK(al_patch_recovered(out, 3, 1.0f, NAN, out, 9, NULL) == -1, "patch share of NaN");
    CHECK(al_gen_copy(NULL, NULL, NULL) == AL_ERR_ARG, "generator copy");
    CHECK(al_tok_stream_copy(NULL, NULL, NULL) == AL_ERR_ARG, "decoder copy");
}

/* GGUF: a MiniMind of 262 tokens with a tokenizer.bin of 262 (the 259 standard tokens and 3). */
static void test_gguf(void) {
    const char *pieces[] = {" ", "a", " a"};
    const float scores[] = {-1, -2, -3};
    size_t size = 0;
    uint8_t *image = tok_image(pieces, scores, 3, &size);
    al_tokenizer *t = NULL;
    EXPECT(al_tok_llama2c_create(image, size, 0, &t, NULL), AL_OK);
    free(image);
    al_model_hparams hp = al_minimind_hparams_for(262, 16, 1, 2, 1);
    al_model *m = NULL, *moe = NULL;
    EXPECT(al_model_create(&hp, 4, 4, &m, NULL), AL_OK);
    hp.n_experts = 2, hp.top_k = 1, hp.moe_ffn_hidden = 32, hp.norm_topk_prob = 0;
    EXPECT(al_model_create(&hp, 4, 4, &moe, NULL), AL_OK);
    image = NULL;
    EXPECT(al_model_export_gguf(NULL, t, AL_DTYPE_F32, NULL, &image, &size, NULL), AL_ERR_ARG);
    EXPECT(al_model_export_gguf(moe, t, AL_DTYPE_F32, NULL, &image, &size, NULL), AL_ERR_CONFIG);
    EXPECT(al_model_export_gguf(m, t, AL_DTYPE_BF16, NULL, &image, &size, NULL), AL_ERR_ARG);
    EXPECT(al_model_export_gguf(m, t, AL_DTYPE_F16, "m", &image, &size, NULL), AL_OK);
    CHECK(image && size > 4 && !memcmp(image, "GGUF", 4), "no GGUF image");
    al_buffer_free(image);
    al_model_free(m), al_model_free(moe), al_tok_free(t);
}

int main(void) {
    test_train_lab();
    test_model();
    test_io();
    test_tokenizer();
    test_views();
    test_session();
    test_bench();
    test_whole_model();
    test_model_lab();
    test_generator();
    test_trainer();
    test_experiments();
    test_demos();
    test_gguf();
    CHECK_DONE();
}
