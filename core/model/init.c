/* init.c — the one fresh start of a model's weights, whoever holds them (a model, a trainer):
 * every matrix N(0, 0.02²) from PyTorch's generator seeded once, drawn weight after weight in
 * al_model_weights' order (the embedding, the final norm, the head if untied, then layer by
 * layer); every norm 1. The order is the one that made models/minimind-fortunes, so its recipe
 * still gives its weights. */
#include "attnlab/model.h"
#include "base/internal.h"

#include <stdlib.h>

al_status al_weights_init(const al_model_hparams *hp, uint64_t seed, al_weight_writer at, void *ctx, al_error *err) {
    if (!hp || !at) return al_fail(err, AL_ERR_ARG, "weights init: NULL argument");
    const int64_t n = al_model_weights(hp, NULL);
    if (n < 0) return al_model_hparams_check(hp, err);
    al_weight_ref *refs = malloc((size_t)(n > 0 ? n : 1) * sizeof *refs);
    al_rng *rng = refs ? al_rng_create(seed) : NULL;
    if (!rng) {
        free(refs);
        return al_fail(err, AL_ERR_NOMEM, "weights init: out of memory");
    }
    al_model_weights(hp, refs);
    for (int64_t i = 0; i < n; i++) {
        int64_t numel = 0, shape[2];
        float *w = at(ctx, &refs[i], &numel);
        if (!w || numel <= 0) continue; /* a weight that holds no numbers draws none */
        if (al_model_param_shape(hp, refs[i].p, shape) == 2) al_rng_normal(rng, w, numel, 0.0f, 0.02f);
        else
            for (int64_t j = 0; j < numel; j++) w[j] = 1.0f;
    }
    al_rng_free(rng);
    free(refs);
    return AL_OK;
}

static float *model_weight_for_write(void *ctx, const al_weight_ref *ref, int64_t *numel) {
    return al_model_param_for_write((al_model *)ctx, ref->p, ref->layer, ref->expert, numel);
}

al_status al_model_fill_random(al_model *m, uint64_t seed, al_error *err) {
    if (!m) return al_fail(err, AL_ERR_ARG, "random weights: no model");
    /* the one fresh start above: the trainer's, so one seed gives one model */
    return al_weights_init(al_model_get_hparams(m), seed, model_weight_for_write, m, err);
}
