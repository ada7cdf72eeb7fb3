/* layout.c — field offsets of the public structs, for bindings that must fill or read them
 * from raw memory (the WebAssembly page's JavaScript wrapper). */
#include "attnlab.h"

#include <stddef.h>

#define PUT(value)                                  \
    do {                                            \
        if (n >= cap) return 0;                     \
        offsets[n++] = (int32_t)(value);            \
    } while (0)

int al_struct_layout(al_layout_id which, int32_t *offsets, int cap) {
    int n = 0;
    if (!offsets) return 0;
    switch (which) {
    case AL_LAYOUT_SESSION_CONFIG:
        PUT(offsetof(al_session_config, hidden));
        PUT(offsetof(al_session_config, n_heads));
        PUT(offsetof(al_session_config, n_kv_heads));
        PUT(offsetof(al_session_config, head_dim));
        PUT(offsetof(al_session_config, rope_base));
        PUT(offsetof(al_session_config, qk_norm));
        PUT(offsetof(al_session_config, seed));
        PUT(offsetof(al_session_config, prompt_len));
        PUT(offsetof(al_session_config, decode_steps));
        PUT(sizeof(al_session_config));
        return n;
    case AL_LAYOUT_CHECK:
        PUT(offsetof(al_check, id));
        PUT(offsetof(al_check, value));
        PUT(offsetof(al_check, threshold));
        PUT(offsetof(al_check, passed));
        PUT(sizeof(al_check));
        return n;
    case AL_LAYOUT_FORWARD_OPTIONS:
        PUT(offsetof(al_forward_options, layer));
        PUT(offsetof(al_forward_options, rope_base));
        PUT(offsetof(al_forward_options, eps));
        PUT(offsetof(al_forward_options, prefill));
        PUT(sizeof(al_forward_options));
        return n;
    case AL_LAYOUT_FORWARD_SUMMARY:
        PUT(offsetof(al_forward_summary, hidden));
        PUT(offsetof(al_forward_summary, n_heads));
        PUT(offsetof(al_forward_summary, n_kv_heads));
        PUT(offsetof(al_forward_summary, head_dim));
        PUT(offsetof(al_forward_summary, rope_base));
        PUT(offsetof(al_forward_summary, eps));
        PUT(offsetof(al_forward_summary, qk_norm));
        PUT(offsetof(al_forward_summary, failed_file));
        PUT(offsetof(al_forward_summary, batch));
        PUT(offsetof(al_forward_summary, seq));
        PUT(offsetof(al_forward_summary, prefill));
        PUT(offsetof(al_forward_summary, max_diff));
        PUT(offsetof(al_forward_summary, bytes));
        PUT(sizeof(al_forward_summary));
        return n;
    case AL_LAYOUT_BENCH_CONFIG:
        PUT(offsetof(al_bench_config, hidden));
        PUT(offsetof(al_bench_config, n_heads));
        PUT(offsetof(al_bench_config, n_kv_heads));
        PUT(offsetof(al_bench_config, head_dim));
        PUT(offsetof(al_bench_config, rope_base));
        PUT(offsetof(al_bench_config, seq));
        PUT(offsetof(al_bench_config, decode_at));
        PUT(offsetof(al_bench_config, repeats));
        PUT(offsetof(al_bench_config, seed));
        PUT(sizeof(al_bench_config));
        return n;
    case AL_LAYOUT_BENCH_RESULT:
        PUT(offsetof(al_bench_result, prefill_ms));
        PUT(offsetof(al_bench_result, decode_ms));
        PUT(offsetof(al_bench_result, prefill_gflops));
        PUT(offsetof(al_bench_result, decode_recompute_ms));
        PUT(sizeof(al_bench_result));
        return n;
    case AL_LAYOUT_ERROR:
        PUT(offsetof(al_error, status));
        PUT(offsetof(al_error, msg));
        PUT(sizeof(al_error));
        return n;
    }
    return 0;
}
