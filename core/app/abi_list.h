/* lab/abi_list.h — the one list of what a binding must agree on with the C core: the structs
 * it fills or reads (field by field, with the field's type), the enums it passes or receives,
 * and the limits. abi.c turns it into the JSON that al_abi_json returns (from which the
 * WebAssembly page's JavaScript takes every offset, value and limit); tests/test_abi.c checks
 * it against the compiler: each field's size is its type's, and the listed fields cover every
 * byte of their struct but padding, so a field added to a struct and not listed here fails.
 *
 * Each list is an X-macro: the caller defines the macros it needs, then expands the list.
 *   AL_ABI_STRUCTS(S, F): S(name, ctype) opens a struct; F(ctype, member, type) is one field
 *     (member may be a nested designator like hp.hidden); types: i32 i64 f32 f64 char.
 *   AL_ABI_ENUMS(E, V): E(name, ctype) opens an enum; V(constant, label) is one value; label is the
 *     short name a binding uses ("shapes" for AL_CHECK_SHAPES).
 *   AL_ABI_LIMITS(L): L(constant) is one limit.
 *   AL_ABI_FUNCTIONS(F): F(name, result, parameters...) is one entry point a binding may call,
 *     its parameters written as in its declaration (names included). abi.c checks each row
 *     against the declaration at compile time (a function whose declaration differs from its
 *     row fails the build, naming it) and gives each parameter its kind for the binding:
 *     i32 i64 f32 f64, ptr (an address), size (a size_t), void (results only).
 *   AL_ABI_SHAPES(A): A(function, parameter, dims) is the shape of the array that function
 *     writes through that parameter, in memory order; each dim is a limit, another parameter
 *     of the call, a field of the handle's hyper-parameters (hp.n_layers), or a function of
 *     this list called with the same-named arguments (al_model_lab_len). */
#ifndef ATTNLAB_LAB_ABI_LIST_H
#define ATTNLAB_LAB_ABI_LIST_H

#include "attnlab.h"

#define AL_ABI_HPARAMS_FIELDS(F, T)                                                            \
    F(T, hp.hidden, i64) F(T, hp.n_heads, i64) F(T, hp.n_kv_heads, i64) F(T, hp.head_dim, i64) \
    F(T, hp.rope_base, f64) F(T, hp.eps, f32) F(T, hp.qk_norm, i32)

#define AL_ABI_STRUCTS(S, F)                                                                   \
    S(error, al_error)                                                                         \
    F(al_error, status, i32) F(al_error, msg, char) F(al_error, file, i32)                     \
    S(attn_hparams, al_attn_hparams)                                                           \
    F(al_attn_hparams, hidden, i64) F(al_attn_hparams, n_heads, i64)                           \
    F(al_attn_hparams, n_kv_heads, i64) F(al_attn_hparams, head_dim, i64)                      \
    F(al_attn_hparams, rope_base, f64) F(al_attn_hparams, eps, f32)                            \
    F(al_attn_hparams, qk_norm, i32)                                                           \
    S(session_config, al_session_config)                                                       \
    AL_ABI_HPARAMS_FIELDS(F, al_session_config)                                                \
    F(al_session_config, seed, i64) F(al_session_config, prompt_len, i64)                      \
    F(al_session_config, decode_steps, i64)                                                    \
    S(check, al_check)                                                                         \
    F(al_check, id, i32) F(al_check, value, f64) F(al_check, threshold, f64)                   \
    F(al_check, passed, i32)                                                                   \
    S(attn_files_options, al_attn_files_options)                                               \
    F(al_attn_files_options, layer, i64) F(al_attn_files_options, rope_base, f64)              \
    F(al_attn_files_options, eps, f64) F(al_attn_files_options, prefill, i64)                  \
    F(al_attn_files_options, attn_weights, i32)                                                \
    S(attn_files_summary, al_attn_files_summary)                                               \
    AL_ABI_HPARAMS_FIELDS(F, al_attn_files_summary)                                            \
    F(al_attn_files_summary, failed_file, i32) F(al_attn_files_summary, batch, i64)            \
    F(al_attn_files_summary, seq, i64) F(al_attn_files_summary, prefill, i64)                  \
    F(al_attn_files_summary, max_diff, f64) F(al_attn_files_summary, bytes, i64)               \
    S(bench_config, al_bench_config)                                                           \
    AL_ABI_HPARAMS_FIELDS(F, al_bench_config)                                                  \
    F(al_bench_config, seq, i64) F(al_bench_config, decode_at, i64)                            \
    F(al_bench_config, repeats, i64) F(al_bench_config, seed, i64)                             \
    S(bench_result, al_bench_result)                                                           \
    F(al_bench_result, prefill_ms, f64) F(al_bench_result, decode_ms, f64)                     \
    F(al_bench_result, prefill_gflops, f64) F(al_bench_result, decode_recompute_ms, f64)       \
    S(kv_growth_row, al_kv_growth_row)                                                         \
    F(al_kv_growth_row, len, i64) F(al_kv_growth_row, bytes, i64)                              \
    F(al_kv_growth_row, bytes_mha, i64) F(al_kv_growth_row, bytes_mqa, i64)                    \
    F(al_kv_growth_row, flops_cached, i64) F(al_kv_growth_row, flops_uncached, i64)            \
    S(demo_section, al_demo_section)                                                           \
    F(al_demo_section, panel, i32) F(al_demo_section, start, i64)                              \
    F(al_demo_section, len, i64) F(al_demo_section, title, i64)                                \
    F(al_demo_section, title_len, i64) F(al_demo_section, numbers, i64)                        \
    F(al_demo_section, numbers_len, i64) F(al_demo_section, code, i64)                         \
    F(al_demo_section, code_len, i64)                                                          \
    S(model_hparams, al_model_hparams)                                                         \
    F(al_model_hparams, vocab, i64) F(al_model_hparams, hidden, i64)                           \
    F(al_model_hparams, n_layers, i64) F(al_model_hparams, n_heads, i64)                       \
    F(al_model_hparams, n_kv_heads, i64) F(al_model_hparams, head_dim, i64)                    \
    F(al_model_hparams, ffn_hidden, i64) F(al_model_hparams, max_seq, i64)                     \
    F(al_model_hparams, rope_base, f64) F(al_model_hparams, eps, f32)                          \
    F(al_model_hparams, qk_norm, i32) F(al_model_hparams, rope_style, i32)                     \
    F(al_model_hparams, tied, i32) F(al_model_hparams, n_experts, i64)                         \
    F(al_model_hparams, top_k, i64) F(al_model_hparams, moe_ffn_hidden, i64)                   \
    F(al_model_hparams, norm_topk_prob, i32) F(al_model_hparams, yarn_factor, f64)             \
    F(al_model_hparams, yarn_original_max, i64) F(al_model_hparams, yarn_beta_fast, f64)       \
    F(al_model_hparams, yarn_beta_slow, f64) F(al_model_hparams, attention_factor, f64)        \
    S(sampler_params, al_sampler_params)                                                       \
    F(al_sampler_params, temperature, f64) F(al_sampler_params, top_k, i64)                    \
    F(al_sampler_params, top_p, f64) F(al_sampler_params, repetition_penalty, f64)             \
    S(train_lab_config, al_train_lab_config)                                                   \
    F(al_train_lab_config, vocab, i64) F(al_train_lab_config, layers, i64)                     \
    F(al_train_lab_config, heads, i64) F(al_train_lab_config, kv_heads, i64)                   \
    F(al_train_lab_config, hidden, i64) F(al_train_lab_config, ffn, i64)                       \
    F(al_train_lab_config, rope_theta, f64) F(al_train_lab_config, batch, i64)                 \
    F(al_train_lab_config, seq, i64) F(al_train_lab_config, accum, i64)                        \
    F(al_train_lab_config, steps, i64)                                                         \
    F(al_train_lab_config, lr, f64) F(al_train_lab_config, seed, i64)                          \
    F(al_train_lab_config, eval_every, i64) F(al_train_lab_config, data, i32)

#define AL_ABI_ENUMS(E, V)                                                                     \
    E(status, al_status)                                                                       \
    V(AL_OK, ok) V(AL_ERR_ARG, arg) V(AL_ERR_CONFIG, config) V(AL_ERR_LIMIT, limit)            \
    V(AL_ERR_NOMEM, nomem) V(AL_ERR_SHAPE, shape) V(AL_ERR_CAPACITY, capacity)                 \
    V(AL_ERR_FORMAT, format) V(AL_ERR_DTYPE, dtype) V(AL_ERR_MISSING, missing)                 \
    V(AL_ERR_NONFINITE, nonfinite) V(AL_ERR_IO, io)                                            \
    E(check, al_check_id)                                                                      \
    V(AL_CHECK_SHAPES, shapes) V(AL_CHECK_REPEAT_KV, repeat_kv)                                \
    V(AL_CHECK_ROPE_NORM, rope_norm) V(AL_CHECK_ROPE_RELATIVE, rope_relative)                  \
    V(AL_CHECK_MASK_ZERO, mask_zero) V(AL_CHECK_ROWS_SUM, rows_sum)                            \
    V(AL_CHECK_CACHE_DIFF, cache_diff) V(AL_CHECK_COUNT, count)                                \
    E(file_role, al_file_role)                                                                 \
    V(AL_FILE_NONE, none) V(AL_FILE_WEIGHTS, weights) V(AL_FILE_INPUT, input)                  \
    V(AL_FILE_CONFIG, config)                                                                  \
    E(demo, al_demo)                                                                           \
    V(AL_DEMO_BASIC, basic) V(AL_DEMO_ATTENTION, attention)                                    \
    V(AL_DEMO_MLP_MOE, mlp_moe) V(AL_DEMO_BLOCK, block)                                        \
    V(AL_DEMO_GENERATION, generation)                                                          \
    E(lang, al_lang)                                                                           \
    V(AL_LANG_ZH, zh) V(AL_LANG_EN, en)                                                        \
    E(demo_panel, al_demo_panel)                                                               \
    V(AL_DEMO_PANEL_NONE, none) V(AL_DEMO_PANEL_MASK, mask) V(AL_DEMO_PANEL_ROPE, rope)        \
    V(AL_DEMO_PANEL_ATTN, attn) V(AL_DEMO_PANEL_KV, kv) V(AL_DEMO_PANEL_CHECKS, checks)        \
    V(AL_DEMO_PANEL_TEXT, text)                                                                \
    V(AL_DEMO_PANEL_FFN, ffn) V(AL_DEMO_PANEL_BLOCK, block)                                    \
    V(AL_DEMO_PANEL_SAMPLER, sampler)                                                          \
    E(model_file_kind, al_model_file_kind)                                                     \
    V(AL_MODEL_FILE_UNKNOWN, unknown) V(AL_MODEL_FILE_LLAMA2C, llama2c)                        \
    V(AL_MODEL_FILE_SAFETENSORS, safetensors) V(AL_MODEL_FILE_PTH, pth)                        \
    E(rope_style, al_rope_style)                                                               \
    V(AL_ROPE_HALF_SPLIT, half_split) V(AL_ROPE_INTERLEAVED, interleaved)                      \
    E(gen_finish, al_gen_finish)                                                               \
    V(AL_GEN_GOING, going) V(AL_GEN_NO_PROMPT, no_prompt) V(AL_GEN_STOP_TOKEN, stop_token)     \
    V(AL_GEN_LENGTH, length) V(AL_GEN_CONTEXT, context)                                        \
    E(lab_role, al_lab_role)                                                                   \
    V(AL_LAB_ROLE_PREVIOUS, previous) V(AL_LAB_ROLE_FIRST, first) V(AL_LAB_ROLE_LOCAL, local)  \
    V(AL_LAB_ROLE_INDUCTION, induction) V(AL_LAB_ROLES, count)                                 \
    E(train_data, al_train_data)                                                               \
    V(AL_TRAIN_DATA_REPEAT, repeat) V(AL_TRAIN_DATA_TEXT, text)                                \
    E(train_column, al_train_column)                                                           \
    V(AL_TRAIN_LOSS, loss) V(AL_TRAIN_FIRST_HALF, first_half)                                  \
    V(AL_TRAIN_REPEATED_HALF, repeated_half) V(AL_TRAIN_LR, lr) V(AL_TRAIN_COLUMNS, count)     \
    E(train_probe_column, al_train_probe_column)                                               \
    V(AL_PROBE_STEP, step) V(AL_PROBE_FIRST_HALF, first_half)                                  \
    V(AL_PROBE_REPEATED_HALF, repeated_half) V(AL_PROBE_FIRST_HALF_OFF, first_half_off)        \
    V(AL_PROBE_REPEATED_HALF_OFF, repeated_half_off) V(AL_PROBE_COLUMNS, count)                \
    E(kv_sharing, al_kv_sharing)                                                               \
    V(AL_KV_MHA, mha) V(AL_KV_GQA, gqa) V(AL_KV_MQA, mqa) V(AL_KV_INVALID, invalid)            \
    E(train_lab_file_kind, al_train_lab_file_kind)                                             \
    V(AL_TRAIN_FILE_CONFIG, config) V(AL_TRAIN_FILE_MODEL, model) V(AL_TRAIN_FILE_TOKENIZER, tokenizer)

#define AL_ABI_LIMITS(L)                                                                       \
    L(AL_MAX_HIDDEN) L(AL_MAX_HEADS) L(AL_MAX_HEAD_DIM) L(AL_MAX_SEQ) L(AL_MAX_BATCH)          \
    L(AL_MAX_BYTES) L(AL_ERROR_MSG_MAX) L(AL_LAB_DEFAULT_CONTEXT) L(AL_LAB_MAX_CONTEXT)        \
    L(AL_SAMPLER_STAGES) L(AL_LAB_ROLES) L(AL_CHECK_COUNT) L(AL_TRAIN_COLUMNS)                 \
    L(AL_TRAIN_JUMP_FROM) L(AL_TRAIN_JUMP_TO) L(AL_PROBE_COLUMNS)                              \
    L(AL_DEMO_MOE_TOKENS) L(AL_DEMO_MOE_EXPERTS) L(AL_DEMO_MOE_TOP_K) L(AL_DEMO_BLOCK_DEPTH)  \
    L(AL_DEMO_BLOCK_POINTS) L(AL_DEMO_LOSS_SEQ) L(AL_DEMO_CURVE_MAX)                       \
    L(AL_DEMO_GEN_VOCAB) L(AL_DEMO_GEN_TEMPS) L(AL_DEMO_GEN_DRAWS) L(AL_DEMO_GEN_BATCH)         \
    L(AL_DEMO_GEN_MAX_NEW) L(AL_DEMO_GEN_STAGE_ROWS)

#define AL_ABI_FUNCTIONS(F)                                                                    \
    F(al_attn_hparams_fill_default, void, al_attn_hparams *hp)                                 \
    F(al_sampler_params_fill_default, void, al_sampler_params *p)                              \
    F(al_kv_sharing_of, al_kv_sharing, int64_t n_heads, int64_t n_kv_heads)                    \
    F(al_gqa_kv_nearest, int64_t, int64_t n_heads, int64_t n_kv_heads)                         \
    F(al_attn_head_dim_most, int64_t, int64_t n_heads, int64_t width)                          \
    F(al_rope_pairs, int64_t, int64_t head_dim)                                                \
    F(al_rope_pair_dims, al_status, int32_t *dims, int64_t head_dim, al_rope_style style, al_error *err) \
    F(al_model_lab_resid_points, int64_t, const al_model_lab *lab)                             \
    F(al_train_lab_tokens_per_second, double, const al_train_lab *lab, double ms)              \
    F(al_train_lab_eval_width, int64_t, const al_train_lab *lab)                               \
    F(al_status_str, const char *, al_status s)                                                \
    F(al_abi_json, int64_t, char *buf, int64_t cap)                                            \
    F(al_heap_in_use, int64_t, void)                                                           \
    F(al_demo_run, int64_t, al_demo demo, al_lang lang, int64_t seed, char *buf, int64_t cap,  \
        al_error *err)                                                                         \
    F(al_demo_section_count, int64_t, al_demo demo)                                            \
    F(al_demo_sections, int64_t, al_demo demo, al_lang lang, int64_t seed,                     \
        al_demo_section *sections, int64_t max_sections, char *text, int64_t cap, al_error *err)   \
    F(al_demo_ffn_curves, al_status, float *out, int64_t n, int64_t cap, al_error *err)        \
    F(al_demo_router, al_status, int64_t seed, float *out, int64_t cap, al_error *err)         \
    F(al_demo_expert_load, al_status, int64_t seed, float *out, int64_t cap, al_error *err)    \
    F(al_demo_block_stream, al_status, int64_t seed, float *out, int64_t cap, al_error *err)   \
    F(al_demo_shifted_labels, al_status, int64_t seed, float *out, int64_t cap, al_error *err) \
    F(al_demo_sampler_stages, al_status, int64_t seed, int32_t example, float *out, int64_t cap, \
        al_error *err)                                                                         \
    F(al_demo_temperatures, al_status, int64_t seed, float *out, int64_t cap, al_error *err)   \
    F(al_demo_draws, al_status, int64_t seed, float *out, int64_t cap, al_error *err)          \
    F(al_demo_eos, al_status, int64_t seed, float *out, int64_t cap, al_error *err)            \
    F(al_session_create, al_status, const al_session_config *cfg, al_session **out, al_error *err) \
    F(al_session_free, void, al_session *s)                                                    \
    F(al_session_prefill, al_status, al_session *s, al_error *err)                             \
    F(al_session_step, al_status, al_session *s, al_error *err)                                \
    F(al_session_run_to, al_status, al_session *s, int64_t len, al_error *err)                 \
    F(al_session_reset, void, al_session *s)                                                   \
    F(al_session_len, int64_t, const al_session *s)                                            \
    F(al_session_total, int64_t, const al_session *s)                                          \
    F(al_session_outputs, al_status, const al_session *s, float *out, int64_t cap, al_error *err)  \
    F(al_session_attention, al_status, const al_session *s, int64_t head, float *out, int64_t cap, \
        al_error *err)                                                                         \
    F(al_session_mask, al_status, const al_session *s, float *out, int64_t cap, al_error *err) \
    F(al_session_thumb_size, int64_t, const al_session *s, int64_t max_size)                   \
    F(al_session_attention_thumb, al_status, const al_session *s, int64_t head, int64_t max_size, \
        float *out, int64_t cap, al_error *err)                                                \
    F(al_session_verify, al_status, al_session *s, al_check *checks, al_error *err)            \
    F(al_session_hparams, const al_attn_hparams *, const al_session *s)                        \
    F(al_session_rope_relative, al_status, const al_session *s, int64_t m, float *dots, int64_t n, \
        al_error *err)                                                                         \
    F(al_attn_flops_full, int64_t, const al_attn_hparams *hp, int64_t n_query, int64_t n_keys) \
    F(al_kv_cache_bytes_for, int64_t, int64_t batch, int64_t len, int64_t n_kv_heads,          \
        int64_t head_dim)                                                                      \
    F(al_kv_growth, int64_t, const al_attn_hparams *hp, int64_t prompt, int64_t steps,         \
        al_kv_growth_row *rows, int64_t cap, al_error *err)                                    \
    F(al_rope_angles, al_status, float *angles, int64_t end, int64_t head_dim, double base,    \
        al_error *err)                                                                         \
    F(al_rope_angles_wrapped, al_status, float *angles, int64_t end, int64_t head_dim,         \
        double base, al_error *err)                                                            \
    F(al_rope_pair_trace, al_status, float *points, const float *x, int64_t pair, int64_t end, \
        int64_t head_dim, double base, al_error *err)                                          \
    F(al_gqa_map, al_status, int32_t *kv_head, int64_t n_heads, int64_t n_kv_heads, al_error *err) \
    F(al_gqa_kv_choices, int, int32_t *out, int cap, int64_t n_heads)                          \
    F(al_attn_files_run, al_status, const uint8_t *weights, size_t weights_size,               \
        const uint8_t *input, size_t input_size, const al_attn_files_options *opt, uint8_t **out,  \
        al_attn_files_summary *summary, al_error *err)                                         \
    F(al_buffer_free, void, void *p)                                                           \
    F(al_bench_config_default, void, al_bench_config *b)                                       \
    F(al_bench_run, al_status, const al_bench_config *cfg, al_bench_result *out, al_error *err)    \
    F(al_train_bench_run, al_status, const al_model_hparams *hp, int64_t batch, int64_t seq,   \
        int64_t steps, double *step_ms, al_error *err)                                         \
    F(al_gemm_bench_run, al_status, int64_t m, int64_t n, int64_t k, int64_t repeats,          \
        double *gflops, al_error *err)                                                         \
    F(al_bench_fma_peak_gflops, double, int32_t *lanes)                                        \
    F(al_model_lab_create, al_status, const uint8_t *model, size_t model_size,                 \
        al_model_file_kind kind, const uint8_t *config, size_t config_size,                    \
        const uint8_t *tokenizer, size_t tokenizer_size, int64_t context, al_model_lab **out,  \
        al_error *err)                                                                         \
    F(al_model_lab_free, void, al_model_lab *lab)                                              \
    F(al_model_lab_hparams, const al_model_hparams *, const al_model_lab *lab)                 \
    F(al_model_lab_kind, al_model_file_kind, const al_model_lab *lab)                          \
    F(al_model_lab_context, int64_t, const al_model_lab *lab)                                  \
    F(al_model_lab_set_threads, al_status, al_model_lab *lab, int64_t threads, al_error *err)  \
    F(al_model_lab_threads, int64_t, const al_model_lab *lab)                                  \
    F(al_model_lab_len, int64_t, const al_model_lab *lab)                                      \
    F(al_model_lab_prompt_len, int64_t, const al_model_lab *lab)                               \
    F(al_model_lab_finished, int, const al_model_lab *lab)                                     \
    F(al_model_lab_chosen, int64_t, const al_model_lab *lab)                                   \
    F(al_model_lab_prompt, int64_t, al_model_lab *lab, const char *text, size_t len,           \
        uint64_t seed, al_error *err)                                                          \
    F(al_model_lab_prompt_ids, int64_t, al_model_lab *lab, const int32_t *ids, int64_t n,      \
        uint64_t seed, al_error *err)                                                          \
    F(al_model_lab_step, int64_t, al_model_lab *lab, const al_sampler_params *p, al_error *err)    \
    F(al_model_lab_ids, int64_t, const al_model_lab *lab, int32_t *out, int64_t cap)           \
    F(al_model_lab_token_text, int64_t, const al_model_lab *lab, int64_t i, char *out,         \
        int64_t cap, al_error *err)                                                            \
    F(al_model_lab_token_bytes, int64_t, const al_model_lab *lab, int64_t i, uint8_t *out,     \
        int64_t cap, al_error *err)                                                            \
    F(al_model_lab_piece, int64_t, const al_model_lab *lab, int32_t id, uint8_t *out, int64_t cap, \
        al_error *err)                                                                         \
    F(al_model_lab_attention, al_status, const al_model_lab *lab, int64_t layer, int64_t head, \
        float *out, int64_t cap, al_error *err)                                                \
    F(al_model_lab_thumb_size, int64_t, const al_model_lab *lab, int64_t max_size)             \
    F(al_model_lab_thumbs, al_status, const al_model_lab *lab, int64_t max_size, float *out,   \
        int64_t cap, al_error *err)                                                            \
    F(al_model_lab_stages, al_status, const al_model_lab *lab, float *out, int64_t cap,        \
        al_error *err)                                                                         \
    F(al_model_lab_top_ids, int64_t, const al_model_lab *lab, int64_t count, int32_t *out,     \
        al_error *err)                                                                         \
    F(al_model_lab_pending, int64_t, const al_model_lab *lab, const al_sampler_params *p,      \
        float *stages, int64_t cap, int32_t *top, int64_t count, al_error *err)                \
    F(al_model_lab_roles, al_status, const al_model_lab *lab, float *out, int64_t cap,         \
        al_error *err)                                                                         \
    F(al_model_lab_role_ranking, int64_t, const al_model_lab *lab, al_lab_role role,           \
        int32_t *heads, int64_t cap, al_error *err)                                            \
    F(al_lab_role_threshold, double, void)                                                     \
    F(al_lab_role_ideal_size, int64_t, int64_t repeat)                                         \
    F(al_lab_role_ideal, al_status, al_lab_role role, int64_t repeat, float *out, int64_t cap, \
        al_error *err)                                                                         \
    F(al_file_fingerprint, int64_t, const uint8_t *data, size_t size)                          \
    F(al_model_lab_routing, int64_t, const al_model_lab *lab, int64_t layer, int32_t *ids,     \
        float *weights, int64_t cap, al_error *err)                                            \
    F(al_model_lab_resid_norms, al_status, const al_model_lab *lab, float *out, int64_t cap,   \
        al_error *err)                                                                         \
    F(al_model_lab_kv, int64_t, const al_model_lab *lab, al_kv_growth_row *rows, int64_t cap,  \
        al_error *err)                                                                         \
    F(al_model_lab_rope, al_status, const al_model_lab *lab, float *scaled, float *plain,      \
        int64_t cap, al_error *err)                                                            \
    F(al_model_lab_set_charts, al_status, al_model_lab *lab, int on, al_error *err)            \
    F(al_model_lab_mask, al_status, const al_model_lab *lab, float *out, int64_t cap,          \
        al_error *err)                                                                         \
    F(al_model_lab_set_ignore_eos, void, al_model_lab *lab, int on)                            \
    F(al_model_lab_resume, al_status, al_model_lab *lab, al_error *err)                        \
    F(al_model_lab_finish, al_gen_finish, const al_model_lab *lab)                             \
    F(al_model_lab_set_ablation, al_status, al_model_lab *lab, const int32_t *heads, int64_t n, \
        al_error *err)                                                                         \
    F(al_model_lab_ablation, int64_t, const al_model_lab *lab, int32_t *heads, int64_t cap)    \
    F(al_model_lab_lens, al_status, al_model_lab *lab, int32_t *top, float *prob, int64_t cap, \
        al_error *err)                                                                         \
    F(al_model_lab_dla_rows, int64_t, const al_model_lab *lab)                                 \
    F(al_model_lab_dla, al_status, al_model_lab *lab, int32_t target, float *out, int64_t cap, \
        al_error *err)                                                                         \
    F(al_model_lab_encode, int64_t, const al_model_lab *lab, const char *text, size_t len,     \
        int32_t *ids, int64_t cap, al_error *err)                                              \
    F(al_model_lab_patch_size, int64_t, const al_model_lab *lab, int64_t n)                    \
    F(al_model_lab_patch, al_status, al_model_lab *lab, const int32_t *clean,                  \
        const int32_t *corrupt, int64_t n, int32_t answer, int32_t wrong, float *out,          \
        int64_t cap, al_error *err)                                                            \
    F(al_model_lab_ahead, int64_t, al_model_lab *lab, const al_sampler_params *p, int all_heads, \
        int32_t *ids, int64_t count, float *probs, int64_t cap, al_error *err)                 \
    F(al_model_lab_prompt_loss, double, al_model_lab *lab, int all_heads, al_error *err)       \
    F(al_model_lab_ids_text, int64_t, const al_model_lab *lab, const int32_t *ids, int64_t n,  \
        char *out, int64_t cap, al_error *err)                                                 \
    F(al_model_lab_token_id, int64_t, const al_model_lab *lab, const char *text, size_t len,   \
        al_error *err)                                                                         \
    F(al_patch_recovered, int64_t, const float *map, int64_t n, float clean, float corrupt,    \
        float *out, int64_t cap, al_error *err)                                                \
    F(al_train_lab_config_default, void, al_train_lab_config *c)                               \
    F(al_train_lab_create, al_status, const al_train_lab_config *cfg, const uint8_t *tokenizer,    \
        size_t tokenizer_size, const char *text, size_t text_len, al_train_lab **out,          \
        al_error *err)                                                                         \
    F(al_train_lab_free, void, al_train_lab *lab)                                              \
    F(al_train_lab_step, int64_t, al_train_lab *lab, int64_t n, al_error *err)                 \
    F(al_train_lab_hparams, const al_model_hparams *, const al_train_lab *lab)                 \
    F(al_train_lab_steps_done, int64_t, const al_train_lab *lab)                               \
    F(al_train_lab_tokens_done, int64_t, const al_train_lab *lab)                              \
    F(al_train_lab_param_count, int64_t, const al_train_lab *lab)                              \
    F(al_train_lab_history, int64_t, const al_train_lab *lab, int64_t from, float *out,        \
        int64_t cap, al_error *err)                                                            \
    F(al_train_lab_evals, int64_t, const al_train_lab *lab, int64_t from, float *out, int64_t cap, \
        al_error *err)                                                                         \
    F(al_train_lab_induction_max, float, const al_train_lab *lab)                              \
    F(al_train_lab_strongest_head, int64_t, const al_train_lab *lab, al_lab_role role)         \
    F(al_train_lab_role_passed, int64_t, const al_train_lab *lab, al_lab_role role, double threshold) \
    F(al_train_lab_held_out_loss, double, const al_train_lab *lab)                             \
    F(al_train_lab_last_batch, int64_t, const al_train_lab *lab, int32_t *ids, int64_t cap)    \
    F(al_train_lab_probe, int64_t, const al_train_lab *lab, int32_t *ids, int64_t cap)         \
    F(al_train_lab_attention, al_status, const al_train_lab *lab, int64_t layer, int64_t head, \
        float *out, int64_t cap, al_error *err)                                                \
    F(al_train_lab_piece, int64_t, const al_train_lab *lab, int32_t id, uint8_t *out, int64_t cap, \
        al_error *err)                                                                         \
    F(al_train_lab_file, al_status, const al_train_lab *lab, al_train_lab_file_kind which,     \
        uint8_t **out, size_t *size, al_error *err)                                            \
    F(al_train_lab_set_threads, al_status, al_train_lab *lab, int64_t threads, al_error *err)  \
    F(al_train_lab_threads, int64_t, const al_train_lab *lab)                                  \
    F(al_train_lab_set_ablation, al_status, al_train_lab *lab, const int32_t *heads, int64_t n, \
        al_error *err)                                                                         \
    F(al_train_lab_ablation, int64_t, const al_train_lab *lab, int32_t *heads, int64_t cap)    \
    F(al_train_lab_probe_loss, al_status, const al_train_lab *lab, float *out, int64_t cap,    \
        al_error *err)

#define AL_ABI_SHAPES(A)                                                                       \
    A(al_session_outputs, out, "al_session_len hidden")                                        \
    A(al_session_attention, out, "al_session_len al_session_len")                              \
    A(al_session_mask, out, "al_session_len al_session_len")                                   \
    A(al_session_attention_thumb, out, "al_session_thumb_size al_session_thumb_size")          \
    A(al_session_verify, checks, "AL_CHECK_COUNT")                                             \
    A(al_session_rope_relative, dots, "n")                                                     \
    A(al_rope_angles, angles, "end al_rope_pairs")                                             \
    A(al_rope_angles_wrapped, angles, "end al_rope_pairs")                                     \
    A(al_rope_pair_trace, points, "end 2")                                                     \
    A(al_rope_pair_dims, dims, "al_rope_pairs 2")                                              \
    A(al_gqa_map, kv_head, "n_heads")                                                          \
    A(al_gqa_kv_choices, out, "result")                                                        \
    A(al_kv_growth, rows, "result")                                                            \
    A(al_demo_run, buf, "result")                                                              \
    A(al_demo_ffn_curves, out, "3 n")                                                          \
    A(al_demo_router, out, "3 AL_DEMO_MOE_TOKENS AL_DEMO_MOE_EXPERTS")                         \
    A(al_demo_expert_load, out, "4 AL_DEMO_MOE_EXPERTS")                                       \
    A(al_demo_block_stream, out, "2 AL_DEMO_BLOCK_POINTS")                                     \
    A(al_demo_shifted_labels, out, "5 AL_DEMO_LOSS_SEQ")                                       \
    A(al_demo_sampler_stages, out, "AL_DEMO_GEN_STAGE_ROWS AL_DEMO_GEN_VOCAB")                 \
    A(al_demo_temperatures, out, "AL_DEMO_GEN_TEMPS 4 AL_DEMO_GEN_VOCAB")                      \
    A(al_demo_draws, out, "2 AL_DEMO_GEN_DRAWS AL_DEMO_GEN_VOCAB")                             \
    A(al_demo_eos, out, "2 AL_DEMO_GEN_BATCH AL_DEMO_GEN_MAX_NEW")                             \
    A(al_abi_json, buf, "result")                                                              \
    A(al_model_lab_ids, out, "al_model_lab_len")                                               \
    A(al_model_lab_token_text, out, "result")                                                  \
    A(al_model_lab_token_bytes, out, "result")                                                 \
    A(al_model_lab_piece, out, "result")                                                       \
    A(al_model_lab_attention, out, "al_model_lab_len al_model_lab_len")                        \
    A(al_model_lab_mask, out, "al_model_lab_len al_model_lab_len")                             \
    A(al_model_lab_thumbs, out, "n_layers n_heads al_model_lab_thumb_size al_model_lab_thumb_size")\
    A(al_model_lab_stages, out, "AL_SAMPLER_STAGES vocab")                                     \
    A(al_model_lab_top_ids, out, "count")                                                      \
    A(al_model_lab_roles, out, "n_layers n_heads AL_LAB_ROLES")                                \
    A(al_model_lab_pending, stages, "AL_SAMPLER_STAGES vocab")                                 \
    A(al_model_lab_pending, top, "count")                                                      \
    A(al_model_lab_role_ranking, heads, "n_layers n_heads")                                    \
    A(al_lab_role_ideal, out, "al_lab_role_ideal_size al_lab_role_ideal_size")                 \
    A(al_model_lab_routing, ids, "al_model_lab_len top_k")                                     \
    A(al_model_lab_routing, weights, "al_model_lab_len top_k")                                 \
    A(al_model_lab_resid_norms, out, "al_model_lab_resid_points al_model_lab_len")             \
    A(al_model_lab_kv, rows, "result")                                                         \
    A(al_model_lab_rope, scaled, "al_rope_pairs")                                              \
    A(al_model_lab_rope, plain, "al_rope_pairs")                                               \
    A(al_model_lab_ablation, heads, "result 2")                                                \
    A(al_model_lab_lens, top, "al_model_lab_resid_points al_model_lab_len")                    \
    A(al_model_lab_lens, prob, "al_model_lab_resid_points al_model_lab_len")                   \
    A(al_model_lab_dla, out, "al_model_lab_dla_rows al_model_lab_len")                         \
    A(al_model_lab_encode, ids, "result")                                                      \
    A(al_model_lab_patch, out, "al_model_lab_patch_size")                                      \
    A(al_model_lab_ahead, ids, "count")                                                        \
    A(al_model_lab_ahead, probs, "vocab")                                                      \
    A(al_model_lab_ids_text, out, "result")                                                    \
    A(al_patch_recovered, out, "n")                                                            \
    A(al_train_lab_history, out, "result AL_TRAIN_COLUMNS")                                    \
    A(al_train_lab_evals, out, "result al_train_lab_eval_width")                               \
    A(al_train_lab_last_batch, ids, "result")                                                  \
    A(al_train_lab_probe, ids, "result")                                                       \
    A(al_train_lab_attention, out, "al_train_lab_probe al_train_lab_probe")                    \
    A(al_train_lab_piece, out, "result")                                                       \
    A(al_train_lab_ablation, heads, "result 2")                                                \
    A(al_train_lab_probe_loss, out, "AL_PROBE_COLUMNS")

#endif
