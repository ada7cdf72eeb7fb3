/* fuzz_safetensors.c — libFuzzer harness for what AttnLab reads from outside: the safetensors
 * loader, and an attention layer built from a loaded file plus a configuration.
 * The first byte picks the path and the next four the configuration; the rest is the file.
 *   path 0: parse, list, read every tensor as float32, look up metadata;
 *   path 1: al_attn_files_run with the file as both weights and input (a file holding a
 *           layer and an `x` runs the whole forward: loader, shape inference, config checks,
 *           prefill + decode with the KV cache, serialisation of the result).
 * Any crash, leak, sanitizer report or timeout is a bug; every error must come back as a status.
 * Build: bash build.sh fuzz. Run: npm run fuzz -- SECONDS. */
#include "attnlab.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void read_everything(const al_safetensors *st) {
    const int n = al_st_count(st);
    for (int i = 0; i < n; i++) {
        al_st_tensor t;
        if (al_st_get(st, i, &t) != AL_OK) abort(); /* every listed index must be readable */
        if (al_st_find(st, t.name, &t) != AL_OK) abort();
        if (t.numel > (1 << 22)) continue;
        float *buf = malloc((size_t)(t.numel ? t.numel : 1) * sizeof(float));
        al_error err;
        if (buf && al_st_read_f32(st, t.name, buf, t.numel, &err) != AL_OK && !err.msg[0]) abort();
        free(buf);
    }
    al_st_metadata(st, "rope_base");
    al_st_metadata(st, "eps");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 5) return 0;
    const uint8_t path = data[0] & 1;
    const uint8_t *file = data + 5;
    const size_t file_size = size - 5;
    al_error err;
    if (path == 0) {
        al_safetensors *st = NULL;
        if (al_st_parse(file, file_size, &st, &err) == AL_OK) read_everything(st);
        else if (!err.msg[0]) abort(); /* an error always says what it is */
        al_st_free(st);
        return 0;
    }
    static const double bases[4] = {NAN, 10000.0, 1e6, 1.0};
    static const double epss[4] = {NAN, 1e-6, 1e-5, 0.0};
    al_attn_files_options opt = al_attn_files_options_default();
    opt.layer = (int64_t)(data[1] % 5) - 1; /* -1..3 */
    opt.rope_base = bases[data[2] % 4];
    opt.eps = epss[data[3] % 4];
    opt.prefill = data[4] % 9;               /* 0 (all) .. 8 */
    uint8_t *out = NULL;
    al_attn_files_summary sum;
    if (al_attn_files_run(file, file_size, file, file_size, &opt, &out, &sum, &err) == AL_OK) {
        if (!out || sum.bytes <= 0) abort();
        al_safetensors *result = NULL;
        if (al_st_parse(out, (size_t)sum.bytes, &result, &err) != AL_OK) abort(); /* we must read our own output */
        al_st_free(result);
    } else if (!err.msg[0] || out) {
        abort();
    }
    al_buffer_free(out);
    return 0;
}
