/* sleef_pow.c — float32 pow reproducing PyTorch 1.13's CPU results bit for bit.
 *
 * What it is for: RoPE frequencies are computed in PyTorch as 1 / base ** (arange(0, d, 2) / d),
 * and torch.pow on float32 does not round correctly: its AVX2 kernel calls SLEEF's
 * Sleef_powf8_u10. This file re-implements one lane of that routine in portable scalar C.
 *
 * Algorithm: SLEEF's single-precision "xpowf" (u10) from src/libm/sleefsimdsp.c — SLEEF by
 * Naoki Shibata, Boost Software License 1.0 — as built for AVX2, where ENABLE_FMA_SP makes the
 * multiply-adds fused; every such step is an fmaf() here, every other step a plain float
 * operation. The structure, polynomial coefficients and special-value rules are SLEEF's; the
 * code is written anew.
 *
 *   pow(x, y) = exp(y · log|x|), both log and exp carried in "double-float" (an unevaluated sum
 *   hi + lo of two floats, about 48 significant bits; the operations are in double_float.h):
 *   - log: |x| = m · 2^e with m in [0.75, 1.5); z = (m − 1)/(m + 1) as a double-float;
 *     log|x| = e·ln2 + 2z + z³·(c + z²·P(z²)).
 *   - exp: q = round(v / ln2); r = v − q·ln2 (ln2 split in two parts);
 *     exp(r) = 1 + r + r²·P(r); the float result is scaled by 2^q without intermediate overflow.
 *   - signs and special cases follow C99 pow (negative base with integer exponent, ±0, ±inf,
 *     NaN, y = 0, x = 1), with SLEEF's bit patterns (a NaN operand gives 0xffffffff).
 *
 * Build with -ffp-contract=off (and no -ffast-math): the double-float steps depend on every
 * product and sum being rounded exactly where written. */
#include "attnlab/torch.h"
#include "torch/sleef_pow.h"

#include <float.h>
#include <math.h>
#include <stdint.h>

#include "torch/double_float.h" /* bits, to_i32_trunc, double-float ops; FLT_EVAL_METHOD check */

#ifdef __clang__
#pragma STDC FP_CONTRACT OFF
#endif

/* ---- the integer steps of the AVX2 code, with two's-complement wrap ---- */

static int32_t u2i(uint32_t u) {
    return u < 0x80000000u ? (int32_t)u : (int32_t)(u - 0x80000000u) - INT32_MAX - 1;
}
static int32_t wadd(int32_t a, int32_t b) { return u2i((uint32_t)a + (uint32_t)b); }
static int32_t wsub(int32_t a, int32_t b) { return u2i((uint32_t)a - (uint32_t)b); }
static int32_t shl(int32_t a, int k) { return u2i((uint32_t)a << k); }
static int32_t sar(int32_t a, int k) { return a >= 0 ? a >> k : -1 - ((-1 - a) >> k); }

/* cvtps2dq: NaN and values outside int32 give INT32_MIN ("integer indefinite"); cvttps2dq is
 * to_i32_trunc in double_float.h. */
static int32_t to_i32_nearest(float f) {
    if (!(f >= -2147483648.0f && f < 2147483648.0f)) return INT32_MIN;
    const float r = nearbyintf(f); /* default rounding mode: nearest, ties to even */
    return (int32_t)r;
}

/* x · 2^q for any int32 q, as SLEEF's vldexp: four equal power-of-two factors (each clamped to
 * the normal range) then a final one, so huge |q| saturates to 0 or inf instead of wrapping. */
static float scale_pow2(float x, int32_t q) {
    int32_t m = sar(q, 31);
    m = shl(wsub(sar(wadd(m, q), 6), m), 4);
    q = wsub(q, shl(m, 2));
    m = wadd(m, 0x7f);
    if (m < 0) m = 0;
    if (m > 0xff) m = 0xff;
    const float f = al_float_of_bits((uint32_t)m << 23);
    x = x * f * f * f * f;
    return x * al_float_of_bits((uint32_t)wadd(q, 0x7f) << 23);
}

/* ---- log and exp kernels ---- */

/* log(d) for d = |x| (also 0, inf, NaN: the result is then replaced by the caller). */
static dfloat log_df(float d) {
    const int tiny = d < FLT_MIN;
    if (tiny) d *= 0x1p64f;
    /* exponent of d·(4/3), so that the reduced m = d·2^-e lies in [0.75, 1.5) */
    int32_t e = (int32_t)((al_bits_of_float(d * 0x1.555556p+0f) >> 23) & 0xff) - 0x7f;
    const float m = al_float_of_bits(al_bits_of_float(d) + ((uint32_t)wsub(0, e) << 23));
    if (tiny) e -= 64;

    const dfloat z = df_div_dd(df_add_ff(-1.0f, m), df_add_ff(1.0f, m));
    const dfloat z2 = df_square(z);

    float p = 0x1.ec2d14p-3f;
    p = fmaf(p, z2.hi, 0x1.23f494p-2f);
    p = fmaf(p, z2.hi, 0x1.999bb2p-2f);
    const dfloat c = df_make(0x1.555554p-1f, 0x1.fb6706p-29f); /* ~2/3 */

    dfloat s = df_mul_df(df_make(0x1.62e43p-1f, -0x1.05c61p-29f), (float)e); /* e · ln 2 */
    s = df_fastadd_dd(s, df_scale_df(z, 2.0f));
    s = df_fastadd_dd(s, df_mul_dd(df_mul_dd(z2, z), df_add_dd(df_mul_df(z2, p), c)));
    return s;
}

/* exp(v) rounded to float, v a double-float. */
static float exp_df(dfloat v) {
    const int32_t q = to_i32_nearest((v.hi + v.lo) * 0x1.715476p+0f); /* v / ln 2 */
    const float qf = (float)q;

    dfloat r = df_add_df(v, qf * -0x1.62e4p-1f);  /* ln 2, high part */
    r = df_add_df(r, qf * -0x1.7f7d1cp-20f);       /* ln 2, low part */
    r = df_renorm(r);

    float p = 0x1.655decp-10f;
    p = fmaf(p, r.hi, 0x1.1222d6p-7f);
    p = fmaf(p, r.hi, 0x1.555e98p-5f);
    p = fmaf(p, r.hi, 0x1.5554bcp-3f);
    p = fmaf(p, r.hi, 0x1.fffff6p-2f);

    dfloat t = df_fastadd_dd(r, df_mul_df(df_square(r), p));
    t = df_fastadd_fd(1.0f, t);
    const float y = scale_pow2(t.hi + t.lo, q);
    return v.hi < -104.0f ? 0.0f : y;
}

/* ---- pow ---- */

float al_powf_torch(float x, float y) {
    const float ay = fabsf(y);
    const int y_int = truncf(y) == y || ay > 0x1p24f;
    const int y_odd = (to_i32_trunc(y) & 1) != 0 && y_int && ay < 0x1p24f;

    float r = exp_df(df_mul_df(log_df(fabsf(x)), y));
    if (isnan(r)) r = INFINITY;

    if (!(x > 0.0f)) {
        if (!y_int) r = al_float_of_bits(0x7fc00000u); /* r · NaN on x86 gives that default quiet NaN */
        else if (y_odd) r = -r;
    }

    if (isinf(y)) {
        /* |x| − 1 with the sign of y flipped when y is negative */
        const float efx = flip_sign_by(fabsf(x) - 1.0f, y);
        r = efx < 0.0f ? 0.0f : efx == 0.0f ? 1.0f : INFINITY;
    }

    if (isinf(x) || x == 0.0f) {
        const int zero_result = ((al_bits_of_float(y) >> 31) != 0) != (x == 0.0f);
        const float mag = zero_result ? 0.0f : INFINITY;
        const float sign_src = y_odd ? x : 1.0f;
        r = flip_sign_by(mag, sign_src);
    }

    if (isnan(x) || isnan(y)) r = al_float_of_bits(0xffffffffu);
    if (y == 0.0f || x == 1.0f) r = 1.0f;
    return r;
}

void al_powf_torch_scalar_tensor(float *out, float base, const float *exponent, int64_t n) {
    if (!out || !exponent || n <= 0) return;
    const int64_t vec_end = n - n % 16;
    for (int64_t i = 0; i < vec_end; i++) out[i] = al_powf_torch(base, exponent[i]);
    for (int64_t i = vec_end; i < n; i++) out[i] = powf(base, exponent[i]);
}
