/* sleef_pow.h — float32 power function that matches PyTorch 1.13 (CPU, AVX2 kernels) bit for bit.
 *
 * torch.pow on float32 tensors runs, for each block of 16 contiguous elements, SLEEF's
 * vectorised Sleef_powf8_u10 (the "xpowf" algorithm of SLEEF's sleefsimdsp.c: a double-float
 * logarithm and exponential, ~1 ULP), and for the elements left over after the last full block
 * the scalar std::pow(float, float), i.e. the C library's powf. al_powf_torch() is one lane of
 * the AVX2 (FMA) build of that SLEEF routine, re-implemented in portable scalar C; the algorithm,
 * its polynomial coefficients and its special-case rules are SLEEF's (Naoki Shibata, Boost
 * Software License 1.0, https://sleef.org). No SLEEF code or library is used. */
#ifndef ATTNLAB_SLEEF_POW_H
#define ATTNLAB_SLEEF_POW_H

#include <stdint.h>

/* One lane of Sleef_powf8_u10 (AVX2/FMA), special values included: this is what torch.pow gives
 * for an element computed by the vectorised kernel. */
float al_powf_torch(float base, float exponent);

/* torch.pow(Scalar base, Tensor exponent) — e.g. `base ** exps` — for one contiguous float32
 * exponent vector of n elements handled in a single kernel call (n < 32768 or one thread):
 * out[i] = al_powf_torch(base, exponent[i]) for i < 16 * (n / 16) and the C library's powf for
 * the remaining n % 16 elements (torch's scalar tail, std::pow(float, float)); the tail matches
 * torch only where this libm's powf is the one torch uses (glibc on the reference machine).
 * `base` is the Python scalar already rounded to float32, as torch does. out may alias exponent. */
void al_powf_torch_scalar_tensor(float *out, float base, const float *exponent, int64_t n);

#endif
