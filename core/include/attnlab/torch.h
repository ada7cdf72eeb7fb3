/* attnlab/torch.h — PyTorch's exact arithmetic where it is observable: its random generator,
 * its reduction order and its tensor printing. Part of attnlab.h. */
#ifndef ATTNLAB_TORCH_H
#define ATTNLAB_TORCH_H

#include "attnlab/base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------------------------
 * Random numbers, identical to PyTorch's CPU generator
 * ------------------------------------------------------------------------------------------ */

typedef struct al_rng al_rng;

al_rng *al_rng_create(uint64_t seed); /* torch.manual_seed(seed); NULL on out of memory */
void al_rng_free(al_rng *r);
void al_rng_seed(al_rng *r, uint64_t seed); /* torch.manual_seed again (clears cached normals) */
/* A second generator in r's state (get_state / set_state): the two then draw the same
 * numbers. NULL if r is NULL or on out of memory. */
al_rng *al_rng_clone(const al_rng *r);
uint32_t al_rng_u32(al_rng *r);             /* next raw mt19937 output */

/* tensor.uniform_(from, to) on a float32 tensor of n elements. */
void al_rng_uniform(al_rng *r, float *out, int64_t n, float from, float to);

/* tensor.normal_(mean, std) on a float32 tensor of n elements (torch.randn: mean 0, std 1).
 * n >= 16: blocks of 16 by Box–Muller over float uniforms; n < 16: double normals one at a
 * time, the second of each pair cached for the next draw — PyTorch's two paths. */
void al_rng_normal(al_rng *r, float *out, int64_t n, float mean, float std);
void al_rng_randn(al_rng *r, float *out, int64_t n);

/* tensor.exponential_(lambda) on a float32 tensor of n elements: per element one double
 * uniform u (two 32-bit draws), (-1 / lambda) · log(1 - u), rounded to float. */
void al_rng_exponential(al_rng *r, float *out, int64_t n, double lambda);

/* torch.multinomial(probs, n_sample, replacement) on one row of n float32 weights (any positive
 * total; they need not sum to 1), the sampled ids into out [n_sample]. Without replacement:
 * q = exponential_(1) over all n, then argmax (one sample) or topk (ids by decreasing p / q) of
 * p / q; with replacement: the normalised float cumulative sum and one double uniform per sample.
 * work [n] is scratch, needed unless n_sample is 1 without replacement (then it may be NULL).
 * AL_ERR_ARG for a weight that is negative, NaN or infinite, all weights 0, n outside
 * [1, 2^24], n_sample < 1, or more samples than categories without replacement. Ties of p / q
 * go to the smaller id (argmax's rule; topk leaves them to its sort). */
al_status al_rng_multinomial(al_rng *r, int64_t *out /* [n_sample] */, const float *probs /* [n] */, int64_t n,
                             int64_t n_sample, int replacement, float *work /* [n] */, al_error *err);

/* nn.Linear's default weight init: kaiming_uniform_(a=√5) = U(-1/√in, 1/√in). */
void al_rng_linear_init(al_rng *r, float *w /* [out_dim, in_dim] */, int64_t out_dim,
                        int64_t in_dim);

/* nn.init.xavier_uniform_(w, gain): U(-a, a), a = gain·√(6 / (fan_in + fan_out)). */
void al_rng_xavier_uniform(al_rng *r, float *w /* [fan_out, fan_in] */, int64_t fan_out,
                           int64_t fan_in, double gain);

/* torch.randint(low, high, (n,)) on int64: n values in [low, high), low < high; one 32-bit
 * draw each when high - low < 2^32, one 64-bit draw each otherwise — PyTorch's two paths. */
void al_rng_randint(al_rng *r, int64_t *out, int64_t n, int64_t low, int64_t high);

/* ------------------------------------------------------------------------------------------
 * PyTorch's reduction order
 * ------------------------------------------------------------------------------------------ */

/* Sum of n floats in the order PyTorch 1.13's CPU sum kernel uses for a contiguous row
 * (AVX2 build), so printed sums and means carry the same last digit. */
float al_sum_f32(const float *x, int64_t n);

/* Dot product with a plain left-to-right float32 accumulation (reference BLAS sdot). */
float al_dot_f32(const float *a, const float *b, int64_t n);

/* ------------------------------------------------------------------------------------------
 * PyTorch-style text: tensor repr exactly as torch 1.13 prints it (precision 4, linewidth 80,
 * sci mode and integer mode chosen the same way), for the demos.
 * ------------------------------------------------------------------------------------------ */

/* Writes the repr of a float32 (or int64 if `ints` != NULL) tensor into buf[cap], e.g.
 * "tensor([ 0.4837,  0.0887], grad_fn=<SelectBackward0>)". `suffix` (may be NULL) is the text
 * placed before the closing parenthesis, such as ", grad_fn=<SelectBackward0>".
 * Returns the full length (like snprintf; output is truncated but terminated if cap is small),
 * or -1 for a negative dimension, a NULL shape or data, or too many elements. */
int64_t al_format_tensor(char *buf, size_t cap, const float *data, const int64_t *ints,
                        const int64_t *shape, int ndim, const char *suffix);

/* "torch.Size([2, 3, 4])". Same return convention. */
int64_t al_format_size(char *buf, size_t cap, const int64_t *shape, int ndim);

#ifdef __cplusplus
}
#endif
#endif /* ATTNLAB_TORCH_H */
