/* sleef_trig.h — float32 cos/sin that return exactly what PyTorch 1.13 (Debian python3-torch,
 * AVX2 kernels) returns for torch.cos / torch.sin on a float32 tensor.
 *
 * PyTorch computes these with SLEEF 3.5.1 (the Debian libsleef3 it links), through
 * Sleef_cosf8_u10 / Sleef_sinf8_u10, i.e. the 1.0-ULP single-precision algorithm xcosf_u1 /
 * xsinf_u1 of SLEEF (SIMD Library for Evaluating Elementary Functions, by Naoki Shibata and
 * contributors, Boost Software License 1.0). sleef_trig.c is an independent scalar C
 * re-implementation of that algorithm: Cody–Waite reduction in double-float arithmetic for
 * small arguments, Payne–Hanek reduction ("rempif", with its 2/pi table) otherwise, the same
 * minimax polynomial, and fmaf() exactly where the AVX2 build fuses a multiply-add.
 * correctly rounded cos((double)x) differs from it by one ULP in a few percent of angles.
 *
 * One property of the vectorised library matters for bit-exactness: SLEEF takes the small-
 * argument path only when ALL 8 lanes of an AVX2 vector have |x| < 125; if any lane is larger
 * (or NaN/inf), every lane of that vector goes through the Payne–Hanek path, which gives a
 * different last bit for roughly 1% of small arguments. PyTorch feeds a contiguous tensor to
 * SLEEF 8 floats at a time from the start of each chunk a thread processes (the last vector
 * zero-padded), so a value's result can depend on its 7 neighbours.
 *   - al_cosf_torch_n / al_sinf_torch_n reproduce that over an array treated as one chunk:
 *     this is torch.cos(t) for a contiguous t when one thread computes it (torch's default
 *     here: at::get_num_threads() == 1) or when the per-thread chunks start at multiples of 8.
 *   - al_cosf_torch / al_sinf_torch give the value for a vector in which x's path is the one
 *     x alone selects; they equal torch whenever x's 8-float vector is homogeneous (all < 125
 *     in magnitude, or x itself >= 125, NaN or inf) — e.g. for tensors of one repeated value.
 *   - the _lane forms take that choice explicitly: wide != 0 means "some lane of the vector
 *     has |v| >= 125 or is NaN", i.e. the Payne–Hanek path. */
#ifndef ATTNLAB_SLEEF_TRIG_H
#define ATTNLAB_SLEEF_TRIG_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* torch.cos / torch.sin of x when x's vector takes the path x alone would select. */
float al_cosf_torch(float x);
float al_sinf_torch(float x);

/* Explicit path: wide == 0 is the small-argument path (only valid, and only used by SLEEF,
 * when |x| < 125), wide != 0 the Payne–Hanek path (valid for every x). When wide == 0 and
 * |x| >= 125 or x is NaN, the Payne–Hanek path is used anyway, as SLEEF would. */
float al_cosf_torch_lane(float x, int wide);
float al_sinf_torch_lane(float x, int wide);

/* out[i] = torch.cos(in)[i] (resp. sin) for in[0..n) processed as torch's vectorised loop
 * does: vectors of 8 from in[0], the path chosen per vector. out may equal in. n <= 0 does
 * nothing. */
void al_cosf_torch_n(float *out, const float *in, int64_t n);
void al_sinf_torch_n(float *out, const float *in, int64_t n);

#ifdef __cplusplus
}
#endif

#endif
