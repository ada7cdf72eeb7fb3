/* model/rope.h — RoPE's table rows for the core's other files (the public RoPE calls are in
 * attnlab.h). Not public API. */
#ifndef ATTNLAB_MODEL_ROPE_H
#define ATTNLAB_MODEL_ROPE_H

#include "base/internal.h"

/* AL_OK if RoPE can run with this head_dim and base, else AL_ERR_ARG with a message. */
al_status al_rope_check(int64_t head_dim, double base, al_error *err);

/* Row m of the RoPE cos/sin tables from precomputed frequencies [head_dim/2]. */
void al_rope_table_row(float *cos_row, float *sin_row, int64_t m, const float *freq,
                       int64_t head_dim);

/* YaRN (MiniMind's precompute_freqs_cis with rope_scaling): freq [head_dim/2] stretched in
 * place for a model made for original_max positions. */
void al_rope_yarn(float *freq, int64_t head_dim, double base, double factor, int64_t original_max,
                  double beta_fast, double beta_slow);

/* The cos/sin tables [end, head_dim] (each row's halves equal) from given frequencies, as
 * al_rope_table computes them from the base's. */
void al_rope_table_freqs(float *cos, float *sin, int64_t end, int64_t head_dim, const float *freq);

/* The cos/sin tables [end, head_dim] a model of shape hp rotates by: its frequencies
 * (al_model_rope_freqs, YaRN where it applies), times attention_factor when YaRN is set. */
void al_model_rope_table(const al_model_hparams *hp, float *cos, float *sin, int64_t end);

#endif
