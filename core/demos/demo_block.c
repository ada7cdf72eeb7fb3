/* demo_block.c — placeholder */
#include "demos/demo.h"
al_status al_demo_block(al_demo_out *d, al_lang lang, int64_t seed, al_rng *rng, al_error *err) {
    (void)d; (void)lang; (void)seed; (void)rng;
    return al_fail(err, AL_ERR_ARG, "todo");
}
