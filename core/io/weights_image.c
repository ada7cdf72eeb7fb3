/* weights_image.c — a model's weights (al_model_weights' order) as a safetensors image by MiniMind's names:
 * what a trainer saves (train/checkpoint.c) and what a model is written out as (al_model_export). */
#include "attnlab/io.h"
#include "io/weights_image.h"

#include <stdlib.h>

al_status al_weights_image(const al_model_hparams *hp, const float *(*get)(const void *ctx, const al_weight_ref *ref),
                           const void *ctx, al_dtype dtype, const char *const *meta_kv, int n_meta, uint8_t **out,
                           size_t *size, al_error *err) {
    *out = NULL, *size = 0;
    const int64_t n = al_model_weights(hp, NULL);
    al_weight_ref *refs = malloc((size_t)n * sizeof *refs);
    al_st_entry *entries = malloc((size_t)n * sizeof *entries);
    char *names = malloc((size_t)n * AL_WEIGHT_NAME_CAP);
    al_status st = refs && entries && names ? AL_OK : al_fail(err, AL_ERR_NOMEM, "weights: out of memory");
    if (st == AL_OK) {
        al_model_weights(hp, refs);
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

static const float *model_weight(const void *ctx, const al_weight_ref *ref) {
    return al_model_get_param((const al_model *)ctx, ref->p, ref->layer, ref->expert, NULL);
}

al_status al_model_export(const al_model *m, al_dtype dtype, const char *const *meta_kv, int n_meta, uint8_t **out,
                          size_t *size, al_error *err) {
    if (!m || !out || !size) return al_fail(err, AL_ERR_ARG, "model export: NULL argument");
    return al_weights_image(al_model_get_hparams(m), model_weight, m, dtype, meta_kv, n_meta, out, size, err);
}
