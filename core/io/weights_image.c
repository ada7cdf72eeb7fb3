/* weights_image.c — a model's weights (al_model_weights' order) as a safetensors image by MiniMind's names:
 * what a trainer saves (train/checkpoint.c) and what a model is written out as (al_model_export). */
#include "attnlab/io.h"
#include "io/weights_image.h"

#include <stdint.h>
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

/* A model's weights read out as float32 (al_model_read_param: whatever layout and dtype the
 * model holds them in), one after the other into `floats` as al_weights_image asks for them. */
typedef struct {
    const al_model *m;
    float *floats; /* [al_model_param_count] */
    int64_t used;
} unpacked;

static const float *unpacked_weight(const void *ctx, const al_weight_ref *ref) {
    unpacked *u = (unpacked *)ctx; /* this file's own, passed through al_weights_image */
    float *w = u->floats + u->used;
    const int64_t n = al_model_read_param(u->m, ref->p, ref->layer, ref->expert, w, INT64_MAX);
    u->used += n > 0 ? n : 0;
    return w;
}

al_status al_model_export(const al_model *m, al_dtype dtype, const char *const *meta_kv, int n_meta, uint8_t **out,
                          size_t *size, al_error *err) {
    if (!m || !out || !size) return al_fail(err, AL_ERR_ARG, "model export: NULL argument");
    const int64_t count = al_model_param_count(al_model_get_hparams(m));
    unpacked u = {m, malloc((size_t)(count > 0 ? count : 1) * sizeof(float)), 0};
    if (!u.floats) return al_fail(err, AL_ERR_NOMEM, "model export: out of memory for %lld floats", (long long)count);
    const al_status st = al_weights_image(al_model_get_hparams(m), unpacked_weight, &u, dtype, meta_kv, n_meta, out, size, err);
    free(u.floats);
    return st;
}
