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
 *   AL_ABI_ENUMS(E, V): E(name) opens an enum; V(constant, label) is one value; label is the
 *     short name a binding uses ("shapes" for AL_CHECK_SHAPES).
 *   AL_ABI_LIMITS(L): L(constant) is one limit. */
#ifndef ATTNLAB_LAB_ABI_LIST_H
#define ATTNLAB_LAB_ABI_LIST_H

#include "attnlab.h"

#define AL_ABI_HPARAMS_FIELDS(F, T)                                                            \
    F(T, hp.hidden, i64) F(T, hp.n_heads, i64) F(T, hp.n_kv_heads, i64) F(T, hp.head_dim, i64) \
    F(T, hp.rope_base, f64) F(T, hp.eps, f32) F(T, hp.qk_norm, i32)

#define AL_ABI_STRUCTS(S, F)                                                                   \
    S(error, al_error)                                                                         \
    F(al_error, status, i32) F(al_error, msg, char)                                            \
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
    F(al_sampler_params, top_p, f64) F(al_sampler_params, repetition_penalty, f64)           \
    S(train_lab_config, al_train_lab_config)                                                   \
    F(al_train_lab_config, vocab, i64) F(al_train_lab_config, layers, i64)                     \
    F(al_train_lab_config, heads, i64) F(al_train_lab_config, kv_heads, i64)                   \
    F(al_train_lab_config, hidden, i64) F(al_train_lab_config, ffn, i64)                       \
    F(al_train_lab_config, rope_theta, f64) F(al_train_lab_config, batch, i64)                 \
    F(al_train_lab_config, seq, i64) F(al_train_lab_config, accum, i64)                      \
    F(al_train_lab_config, steps, i64)                                                         \
    F(al_train_lab_config, lr, f64) F(al_train_lab_config, seed, i64)                          \
    F(al_train_lab_config, eval_every, i64) F(al_train_lab_config, data, i32)

#define AL_ABI_ENUMS(E, V)                                                                     \
    E(status)                                                                                  \
    V(AL_OK, ok) V(AL_ERR_ARG, arg) V(AL_ERR_CONFIG, config) V(AL_ERR_LIMIT, limit)            \
    V(AL_ERR_NOMEM, nomem) V(AL_ERR_SHAPE, shape) V(AL_ERR_CAPACITY, capacity)                 \
    V(AL_ERR_FORMAT, format) V(AL_ERR_DTYPE, dtype) V(AL_ERR_MISSING, missing)                 \
    V(AL_ERR_NONFINITE, nonfinite) V(AL_ERR_IO, io)                                            \
    E(check)                                                                                   \
    V(AL_CHECK_SHAPES, shapes) V(AL_CHECK_REPEAT_KV, repeat_kv)                                \
    V(AL_CHECK_ROPE_NORM, rope_norm) V(AL_CHECK_ROPE_RELATIVE, rope_relative)                  \
    V(AL_CHECK_MASK_ZERO, mask_zero) V(AL_CHECK_ROWS_SUM, rows_sum)                            \
    V(AL_CHECK_CACHE_DIFF, cache_diff) V(AL_CHECK_COUNT, count)                                \
    E(file_role)                                                                               \
    V(AL_FILE_NONE, none) V(AL_FILE_WEIGHTS, weights) V(AL_FILE_INPUT, input)                  \
    E(demo)                                                                                    \
    V(AL_DEMO_BASIC, basic) V(AL_DEMO_ATTENTION, attention)                                    \
    E(lang)                                                                                    \
    V(AL_LANG_ZH, zh) V(AL_LANG_EN, en)                                                        \
    E(demo_panel)                                                                              \
    V(AL_DEMO_PANEL_NONE, none) V(AL_DEMO_PANEL_MASK, mask) V(AL_DEMO_PANEL_ROPE, rope)        \
    V(AL_DEMO_PANEL_ATTN, attn) V(AL_DEMO_PANEL_KV, kv) V(AL_DEMO_PANEL_CHECKS, checks)        \
    E(model_file_kind)                                                                         \
    V(AL_MODEL_FILE_UNKNOWN, unknown) V(AL_MODEL_FILE_LLAMA2C, llama2c)                        \
    V(AL_MODEL_FILE_SAFETENSORS, safetensors) V(AL_MODEL_FILE_PTH, pth)                        \
    E(rope_style)                                                                              \
    V(AL_ROPE_HALF_SPLIT, half_split) V(AL_ROPE_INTERLEAVED, interleaved)                      \
    E(gen_finish)                                                                              \
    V(AL_GEN_GOING, going) V(AL_GEN_NO_PROMPT, no_prompt) V(AL_GEN_STOP_TOKEN, stop_token)     \
    V(AL_GEN_LENGTH, length) V(AL_GEN_CONTEXT, context)                                        \
    E(lab_role)                                                                                \
    V(AL_LAB_ROLE_PREVIOUS, previous) V(AL_LAB_ROLE_FIRST, first) V(AL_LAB_ROLE_LOCAL, local)  \
    V(AL_LAB_ROLE_INDUCTION, induction) V(AL_LAB_ROLES, count)                                  \
    E(train_data)                                                                              \
    V(AL_TRAIN_DATA_REPEAT, repeat) V(AL_TRAIN_DATA_TEXT, text)                                \
    E(train_column)                                                                            \
    V(AL_TRAIN_LOSS, loss) V(AL_TRAIN_FIRST_HALF, first_half)                                  \
    V(AL_TRAIN_REPEATED_HALF, repeated_half) V(AL_TRAIN_LR, lr) V(AL_TRAIN_COLUMNS, count)     \
    E(train_lab_file_kind)                                                                     \
    V(AL_TRAIN_FILE_CONFIG, config) V(AL_TRAIN_FILE_MODEL, model) V(AL_TRAIN_FILE_TOKENIZER, tokenizer)

#define AL_ABI_LIMITS(L)                                                                       \
    L(AL_MAX_HIDDEN) L(AL_MAX_HEADS) L(AL_MAX_HEAD_DIM) L(AL_MAX_SEQ) L(AL_MAX_BATCH)          \
    L(AL_MAX_BYTES) L(AL_ERROR_MSG_MAX) L(AL_LAB_DEFAULT_CONTEXT) L(AL_LAB_MAX_CONTEXT)       \
    L(AL_SAMPLER_STAGES) L(AL_LAB_ROLES)

#endif
