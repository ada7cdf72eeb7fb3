/* train/trainer_internal.h — what the optimizer and the tests need of the trainer. Not public
 * API. */
#ifndef ATTNLAB_TRAINER_INTERNAL_H
#define ATTNLAB_TRAINER_INTERNAL_H

#include "attnlab/train.h"

/* The weights, gradients and moments, each [n] floats; returns n. */
int64_t al_trainer_buffers(al_trainer *t, float **w, float **g, float **m, float **v);
/* Counts one optimizer step (the weights change: repacked before the next forward); returns
 * its number, from 1. */
int64_t al_trainer_count_step(al_trainer *t);

/* The trainer's forward without the loss: the logits [batch · seq, vocab] (cap floats) of ids
 * [batch, seq], as al_trainer_forward computes them before its loss. Leaves nothing to go back
 * through. AL_ERR_ARG / AL_ERR_CAPACITY as al_trainer_forward. */
al_status al_trainer_logits(al_trainer *t, const int32_t *ids, int64_t batch, int64_t seq, float *logits, int64_t cap,
                            al_error *err);

#endif
