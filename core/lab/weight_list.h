/* lab/weight_list.h — every weight of a model of a given shape, in the model's order, with its
 * MiniMind name: what a trainer saves and loads and what a model is written out as. Not public
 * API. */
#ifndef ATTNLAB_LAB_WEIGHT_LIST_H
#define ATTNLAB_LAB_WEIGHT_LIST_H

#include "base/internal.h"

enum { AL_WEIGHT_NAME_CAP = 128 };

typedef struct {
    al_model_param p;
    int64_t layer, expert;
} al_weight_ref;

/* The model's weights (the embedding, the final norm, the head if untied, then layer by layer
 * each weight, the experts' by expert) into out (NULL: counts them); returns how many. */
int64_t al_list_weights(const al_model_hparams *hp, al_weight_ref *out);

/* The weights as a safetensors image by MiniMind's names, stored as dtype (F32 or F16), each
 * weight's floats from get(ctx, ref) [its numel]; *out malloc'd. */
al_status al_weights_image(const al_model_hparams *hp, const float *(*get)(const void *ctx, const al_weight_ref *ref),
                           const void *ctx, al_dtype dtype, const char *const *meta_kv, int n_meta, uint8_t **out,
                           size_t *size, al_error *err);

#endif
