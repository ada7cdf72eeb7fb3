/* init.c — a trainer's fresh start: the one initialiser of model/init.c (al_weights_init)
 * writing into the trainer's weights, so `attnlab train`, the Train tab and the bench's random
 * model begin from the same weights for the same seed. */
#include "attnlab/train.h"
#include "base/internal.h"

static float *trainer_weight_for_write(void *ctx, const al_weight_ref *ref, int64_t *numel) {
    return al_trainer_param((al_trainer *)ctx, ref->p, ref->layer, ref->expert, numel);
}

al_status al_trainer_init_weights(al_trainer *t, uint64_t seed, al_error *err) {
    if (!t) return al_fail(err, AL_ERR_ARG, "trainer init: NULL argument");
    return al_weights_init(al_trainer_hparams(t), seed, trainer_weight_for_write, t, err);
}
