/* weight_list.c — a model's weights in order, and as a safetensors image by MiniMind's names. */
#include "lab/weight_list.h"

#include <stdlib.h>

int64_t al_list_weights(const al_model_hparams *hp, al_weight_ref *out) {
    int64_t n = 0;
    const al_model_param globals[] = {AL_MP_EMBED, AL_MP_FINAL_NORM, AL_MP_LM_HEAD};
    for (size_t i = 0; i < sizeof globals / sizeof globals[0]; i++) {
        int64_t shape[2];
        if (al_model_param_shape(hp, globals[i], shape) <= 0) continue;
        if (out) out[n] = (al_weight_ref){globals[i], 0, 0};
        n++;
    }
    for (int64_t l = 0; l < hp->n_layers; l++)
        for (int p = AL_MP_ATTN_NORM; p < AL_MP_COUNT; p++) {
            int64_t shape[2];
            if (p == AL_MP_FINAL_NORM || p == AL_MP_LM_HEAD || al_model_param_shape(hp, (al_model_param)p, shape) <= 0)
                continue;
            const int expert = p >= AL_MP_EXPERT_GATE && p <= AL_MP_EXPERT_DOWN;
            for (int64_t e = 0; e < (expert ? hp->n_experts : 1); e++) {
                if (out) out[n] = (al_weight_ref){(al_model_param)p, l, e};
                n++;
            }
        }
    return n;
}

al_status al_weights_image(const al_model_hparams *hp, const float *(*get)(const void *ctx, const al_weight_ref *ref),
                           const void *ctx, al_dtype dtype, const char *const *meta_kv, int n_meta, uint8_t **out,
                           size_t *size, al_error *err) {
    *out = NULL, *size = 0;
    const int64_t n = al_list_weights(hp, NULL);
    al_weight_ref *refs = malloc((size_t)n * sizeof *refs);
    al_st_entry *entries = malloc((size_t)n * sizeof *entries);
    char *names = malloc((size_t)n * AL_WEIGHT_NAME_CAP);
    al_status st = refs && entries && names ? AL_OK : al_fail(err, AL_ERR_NOMEM, "weights: out of memory");
    if (st == AL_OK) {
        al_list_weights(hp, refs);
        for (int64_t i = 0; i < n; i++) {
            int64_t shape[2] = {0, 0};
            char *name = names + i * AL_WEIGHT_NAME_CAP;
            al_minimind_param_name(name, AL_WEIGHT_NAME_CAP, refs[i].p, refs[i].layer, refs[i].expert);
            entries[i].name = name;
            entries[i].data = get(ctx, &refs[i]);
            entries[i].ndim = al_model_param_shape(hp, refs[i].p, shape);
            entries[i].shape[0] = shape[0], entries[i].shape[1] = shape[1];
        }
        size_t needed = 0;
        st = al_st_serialize_as(entries, (int)n, dtype, meta_kv, n_meta, NULL, 0, &needed, err);
        if (st == AL_OK && !(*out = malloc(needed))) st = al_fail(err, AL_ERR_NOMEM, "weights: out of memory");
        if (st == AL_OK) st = al_st_serialize_as(entries, (int)n, dtype, meta_kv, n_meta, *out, needed, size, err);
        if (st != AL_OK) free(*out), *out = NULL, *size = 0;
    }
    free(refs), free(entries), free(names);
    return st;
}
