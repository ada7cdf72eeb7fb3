/* io/weights_image.h — a model's weights (al_model_weights) as a safetensors image by their
 * MiniMind names: what a trainer saves and what a model is written out as. Not public API. */
#ifndef ATTNLAB_IO_WEIGHTS_IMAGE_H
#define ATTNLAB_IO_WEIGHTS_IMAGE_H

#include "attnlab/io.h"
#include "base/internal.h"

enum { AL_WEIGHT_NAME_CAP = 128 };

/* The weights as a safetensors image by MiniMind's names, stored as dtype (F32 or F16), each
 * weight's floats from get(ctx, ref) [its numel]; *out malloc'd. */
al_status al_weights_image(const al_model_hparams *hp, const float *(*get)(const void *ctx, const al_weight_ref *ref),
                           const void *ctx, al_dtype dtype, const char *const *meta_kv, int n_meta, uint8_t **out,
                           size_t *size, al_error *err);

#endif
