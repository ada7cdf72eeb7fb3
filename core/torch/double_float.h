/* double_float.h — the scalar building blocks shared by sleef_pow.c and sleef_trig.c, which
 * reproduce PyTorch's float32 pow / sin / cos bit for bit by re-implementing one lane of the
 * AVX2 (FMA) build of SLEEF routines in portable C.
 *
 * What it holds:
 *   - SLEEF's mulsign (flip_sign_by), on the float bit access of internal.h;
 *   - to_i32_trunc, the x86 float-to-int32 conversion both files need;
 *   - SLEEF's "double-float" arithmetic (src/libm/df.h of SLEEF — SLEEF by Naoki Shibata and
 *     contributors, Boost Software License 1.0, https://sleef.org): a value carried as the
 *     unevaluated sum hi + lo of two floats (about 48 significant bits), in the form the
 *     ENABLE_FMA_SP build compiles to. The operations, their order and where a multiply-add is
 *     fused are SLEEF's; the code is written anew. No SLEEF code or library is used.
 *
 * Exactness: every float operation below is one IEEE binary32 operation, rounded exactly where
 * written, and fmaf() stands exactly where SLEEF's FMA build fuses (vfma / vfmapn / vfmanp).
 * Build with -ffp-contract=off (clang also gets the pragma below) and no -ffast-math, with
 * FLT_EVAL_METHOD 0. Two operations that look alike but differ in the order of their steps or in
 * where a product is fused are different SLEEF functions here too, and give different bits:
 * never substitute one for another.
 *
 * Naming: the double-float type is dfloat, built with df_make(hi, lo). A binary operation ends
 * in its operand kinds, in order, f for a float and d for a dfloat: df_add_df(a, b) is
 * dfloat a + float b. "add" is the two-sum form (SLEEF's dfadd2_*: exact whatever the
 * magnitudes); "fastadd" the fast form (SLEEF's dfadd_*: exact only when |first| >= |second|,
 * cheaper, and rounding differently otherwise). Below, s, p and q name the rounded hi part
 * each operation computes first, and fma(a, b, c) is a·b + c rounded once. */
#ifndef ATTNLAB_DOUBLE_FLOAT_H
#define ATTNLAB_DOUBLE_FLOAT_H

#include "base/internal.h" /* al_bits_of_float, al_float_of_bits */

#include <float.h>
#include <math.h>
#include <stdint.h>

#ifdef __clang__
#pragma STDC FP_CONTRACT OFF
#endif

/* Every float operation must round to float32 once (no x87 excess precision). */
#if defined(FLT_EVAL_METHOD) && FLT_EVAL_METHOD != 0 && FLT_EVAL_METHOD != -1
#error "double_float.h needs FLT_EVAL_METHOD 0 (on 32-bit x86 build with -msse2 -mfpmath=sse)"
#endif

/* ---- bit access and x86-style conversion ------------------------------------------------- */

/* x with its sign flipped when s has its sign bit set (SLEEF's vmulsign_vf_vf_vf). */
static inline float flip_sign_by(float x, float s) {
    return al_float_of_bits(al_bits_of_float(x) ^ (al_bits_of_float(s) & 0x80000000u));
}

/* x86 cvttps2dq: v truncated toward zero; NaN and values outside int32 give INT32_MIN (the
 * "integer indefinite"). Also serves as cvtps2dq on a v that is already integral. */
static inline int32_t to_i32_trunc(float v) {
    if (!(v >= -2147483648.0f && v < 2147483648.0f)) return INT32_MIN;
    return (int32_t)v;
}

/* ---- double-float arithmetic: value = hi + lo, |lo| <= ulp(hi)/2 or so --------------------- */

typedef struct {
    float hi, lo;
} dfloat;

static inline dfloat df_make(float hi, float lo) {
    dfloat r = {hi, lo};
    return r;
}

/* Re-split so that hi is the rounded sum (dfnormalize_vf2_vf2):
 *   s = a.hi + a.lo;  (s, (a.hi - s) + a.lo) */
static inline dfloat df_renorm(dfloat a) {
    const float s = a.hi + a.lo;
    return df_make(s, (a.hi - s) + a.lo);
}

/* a · k, both parts (dfscale_vf2_vf2_vf; exact when k is a power of two):
 *   (a.hi · k, a.lo · k) */
static inline dfloat df_scale_df(dfloat a, float k) { return df_make(a.hi * k, a.lo * k); }

/* -- sums, two-sum form: exact whatever the magnitudes -- */

/* a + b, exactly (dfadd2_vf2_vf_vf, Knuth's two-sum):
 *   s = a + b;  v = s - a;  (s, (a - (s - v)) + (b - v)) */
static inline dfloat df_add_ff(float a, float b) {
    const float s = a + b, v = s - a;
    return df_make(s, (a - (s - v)) + (b - v));
}

/* A + b (dfadd2_vf2_vf2_vf):
 *   s = a.hi + b;  v = s - a.hi;  (s, ((a.hi - (s - v)) + (b - v)) + a.lo) */
static inline dfloat df_add_df(dfloat a, float b) {
    const float s = a.hi + b, v = s - a.hi;
    const float t = (a.hi - (s - v)) + (b - v);
    return df_make(s, t + a.lo);
}

/* A + B (dfadd2_vf2_vf2_vf2):
 *   s = a.hi + b.hi;  v = s - a.hi;  (s, ((a.hi - (s - v)) + (b.hi - v)) + (a.lo + b.lo)) */
static inline dfloat df_add_dd(dfloat a, dfloat b) {
    const float s = a.hi + b.hi, v = s - a.hi;
    const float t = (a.hi - (s - v)) + (b.hi - v);
    return df_make(s, t + (a.lo + b.lo));
}

/* -- sums, fast form: exact only when |first operand| >= |second| -- */

/* a + b (dfadd_vf2_vf_vf, fast two-sum):
 *   s = a + b;  (s, (a - s) + b) */
static inline dfloat df_fastadd_ff(float a, float b) {
    const float s = a + b;
    return df_make(s, (a - s) + b);
}

/* A + b (dfadd_vf2_vf2_vf):
 *   s = a.hi + b;  (s, ((a.hi - s) + b) + a.lo) */
static inline dfloat df_fastadd_df(dfloat a, float b) {
    const float s = a.hi + b;
    return df_make(s, ((a.hi - s) + b) + a.lo);
}

/* a + B (dfadd_vf2_vf_vf2):
 *   s = a + b.hi;  (s, ((a - s) + b.hi) + b.lo) */
static inline dfloat df_fastadd_fd(float a, dfloat b) {
    const float s = a + b.hi;
    return df_make(s, ((a - s) + b.hi) + b.lo);
}

/* A + B (dfadd_vf2_vf2_vf2):
 *   s = a.hi + b.hi;  (s, (((a.hi - s) + b.hi) + a.lo) + b.lo) */
static inline dfloat df_fastadd_dd(dfloat a, dfloat b) {
    const float s = a.hi + b.hi;
    return df_make(s, (((a.hi - s) + b.hi) + a.lo) + b.lo);
}

/* -- products, with the FMA steps of the AVX2 build -- */

/* a · b, exactly (dfmul_vf2_vf_vf):
 *   p = a · b;  (p, fma(a, b, -p)) */
static inline dfloat df_mul_ff(float a, float b) {
    const float p = a * b;
    return df_make(p, fmaf(a, b, -p));
}

/* A · b (dfmul_vf2_vf2_vf):
 *   p = a.hi · b;  (p, fma(a.lo, b, fma(a.hi, b, -p))) */
static inline dfloat df_mul_df(dfloat a, float b) {
    const float p = a.hi * b;
    return df_make(p, fmaf(a.lo, b, fmaf(a.hi, b, -p)));
}

/* A · B (dfmul_vf2_vf2_vf2):
 *   p = a.hi · b.hi;  (p, fma(a.hi, b.lo, fma(a.lo, b.hi, fma(a.hi, b.hi, -p)))) */
static inline dfloat df_mul_dd(dfloat a, dfloat b) {
    const float p = a.hi * b.hi;
    return df_make(p, fmaf(a.hi, b.lo, fmaf(a.lo, b.hi, fmaf(a.hi, b.hi, -p))));
}

/* A · B rounded to one float (dfmul_vf_vf2_vf2):
 *   fma(a.hi, b.hi, fma(a.lo, b.hi, a.hi · b.lo)) */
static inline float df_mul_dd_to_f(dfloat a, dfloat b) {
    return fmaf(a.hi, b.hi, fmaf(a.lo, b.hi, a.hi * b.lo));
}

/* A² (dfsqu_vf2_vf2):
 *   p = a.hi · a.hi;  (p, fma(a.hi + a.hi, a.lo, fma(a.hi, a.hi, -p))) */
static inline dfloat df_square(dfloat a) {
    const float p = a.hi * a.hi;
    return df_make(p, fmaf(a.hi + a.hi, a.lo, fmaf(a.hi, a.hi, -p)));
}

/* N / D (dfdiv_vf2_vf2_vf2, FMA form):
 *   r = 1 / d.hi;  q = n.hi · r;  e = fma(r, n.hi, -q);  c = fma(-d.lo, r, fma(-d.hi, r, 1));
 *   (q, fma(q, c, fma(n.lo, r, e))) */
static inline dfloat df_div_dd(dfloat n, dfloat d) {
    const float r = 1.0f / d.hi;
    const float q = n.hi * r;
    const float err = fmaf(r, n.hi, -q);
    const float corr = fmaf(-d.lo, r, fmaf(-d.hi, r, 1.0f));
    return df_make(q, fmaf(q, corr, fmaf(n.lo, r, err)));
}

#endif
