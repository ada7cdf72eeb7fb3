/* train/trainer_internal.h — what the optimizer needs of the trainer. Not public API. */
#ifndef ATTNLAB_TRAINER_INTERNAL_H
#define ATTNLAB_TRAINER_INTERNAL_H

#include "attnlab/train.h"

/* The weights, gradients and moments, each [n] floats; returns n. */
int64_t al_trainer_buffers(al_trainer *t, float **w, float **g, float **m, float **v);
/* Counts one optimizer step (the weights change: repacked before the next forward); returns
 * its number, from 1. */
int64_t al_trainer_count_step(al_trainer *t);

#endif
