/* sleef_trig.c — scalar re-implementation of SLEEF's 1.0-ULP single-precision sin/cos
 * (xsinf_u1 / xcosf_u1 of SLEEF 3.5.1, Boost Software License 1.0, by Naoki Shibata and
 * contributors), one lane of the AVX2 build that PyTorch 1.13 calls, so that our cos/sin
 * tables match torch.cos / torch.sin bit for bit. See sleef_trig.h for the API and for why a
 * result can depend on the other lanes of its 8-float vector.
 *
 * Exactness rules followed throughout:
 *   - every float operation is one IEEE binary32 operation (the project builds with
 *     -ffp-contract=off; clang also gets the pragma below);
 *   - fmaf() stands exactly where the AVX2 build uses a fused multiply-add (SLEEF's mla /
 *     fma helpers and its FMA double-float products, the latter in double_float.h), nowhere
 *     else;
 *   - rintf() is the vector round-to-nearest-even, and float-to-int conversions follow the
 *     x86 ones (NaN or out of range gives INT32_MIN, the "integer indefinite").
 *
 * Both functions reduce x to d = x - q·(pi/2) (d a double-float, |d| <= pi/4 or so) and
 * evaluate sin(d) with one odd polynomial, the quadrant q choosing the sign:
 *   - small path, taken when |x| < 125 in every lane of the vector: Cody–Waite reduction with
 *     pi split in three floats, in double-float arithmetic;
 *   - Payne–Hanek path otherwise (SLEEF's "rempif"): x times 1/(2 pi) held to ~100 bits in a
 *     table indexed by x's exponent, whole turns dropped, the quarter turns counted, the
 *     fraction multiplied back by 2 pi.
 * The table was computed for this file from pi to 2048 bits with the recipe of SLEEF 3.5.1's
 * generator (checked equal to that library's table): row k holds F = frac(2^(k+2) / (2 pi)) /
 * 2^(k+2), times 2^64 for k >= 66; the first three floats are F rounded to double then to
 * float, with the 2 lowest mantissa bits then cleared, each subtracted exactly from F before
 * the next; the fourth is the rest rounded to double then to float. */
#include "attnlab/torch.h"
#include "torch/sleef_trig.h"

#include <math.h>
#include <stdint.h>

#include "torch/double_float.h" /* bits, flip_sign_by, to_i32_trunc, the double-float operations */

#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#endif

/* ---- constants ---------------------------------------------------------------------------- */

#define SMALL_LIMIT 125.0f                     /* lanes below this use the Cody–Waite path */
#define INV_PI ((float)0.318309886183790671538) /* 1/pi rounded to float */
/* pi ~ PI_HI + PI_MID + PI_LO; PI_HI and PI_MID end in 9 and 12 zero bits, so that their
 * products with the small path's multiples are exact. */
#define PI_HI 3.1414794921875f
#define PI_MID 0.00011315941810607910156f
#define PI_LO 1.9841872589410058936e-09f
/* pi as a float pair, for the Payne–Hanek path. */
#define PI_F_HI 3.1415927410125732422f
#define PI_F_LO (-8.7422776573475857731e-08f)

/* Coefficients of the odd polynomial sin(d) ~ d (1 + s (C3 + s (C5 + s (C7 + s C9)))), s = d². */
#define C9 2.6083159809786593541503e-06f
#define C7 (-0.0001981069071916863322258f)
#define C5 0.00833307858556509017944336f
#define C3 (-0.166666597127914428710938f)

/* 1/(2 pi) for the Payne–Hanek reduction: row k serves |x| with binary exponent k + 25 (row 0
 * every exponent up to 25), as four floats summing to frac(2^(k+2) / (2 pi)) / 2^(k+2), times
 * 2^64 from row 66 on (x is scaled by 2^-64 there). See the top of the file. */
static const float rempi_tab[103][4] = {
    {0x1.45f3p-3f, 0x1.b7272p-25f, 0x1.054a8p-48f, -0x1.ec5418p-73f},  /* 0 */
    {0x1.17cc18p-5f, 0x1.b9391p-28f, 0x1.529fcp-54f, 0x1.3abe9p-77f},  /* 1 */
    {0x1.17cc18p-5f, 0x1.b9391p-28f, 0x1.529fcp-54f, 0x1.3abe9p-77f},  /* 2 */
    {0x1.7cc1b8p-9f, -0x1.b1bbe8p-34f, -0x1.6b01e8p-57f, -0x1.1505c2p-79f},  /* 3 */
    {0x1.7cc1b8p-9f, -0x1.b1bbe8p-34f, -0x1.6b01e8p-57f, -0x1.1505c2p-79f},  /* 4 */
    {0x1.7cc1b8p-9f, -0x1.b1bbe8p-34f, -0x1.6b01e8p-57f, -0x1.1505c2p-79f},  /* 5 */
    {0x1.7cc1b8p-9f, -0x1.b1bbe8p-34f, -0x1.6b01e8p-57f, -0x1.1505c2p-79f},  /* 6 */
    {0x1.f306d8p-11f, 0x1.272208p-33f, 0x1.4a7f08p-56f, 0x1.d5f47ep-80f},  /* 7 */
    {0x1.f306d8p-11f, 0x1.272208p-33f, 0x1.4a7f08p-56f, 0x1.d5f47ep-80f},  /* 8 */
    {0x1.e60db8p-12f, 0x1.39105p-36f, 0x1.29fc28p-58f, -0x1.505c16p-83f},  /* 9 */
    {0x1.cc1b7p-13f, 0x1.39105p-36f, 0x1.29fc28p-58f, -0x1.505c16p-83f},  /* 10 */
    {0x1.9836ep-14f, 0x1.39105p-36f, 0x1.29fc28p-58f, -0x1.505c16p-83f},  /* 11 */
    {0x1.306dc8p-15f, 0x1.c882ap-39f, 0x1.4fe138p-61f, 0x1.5f47d4p-84f},  /* 12 */
    {0x1.836e48p-18f, 0x1.910548p-40f, 0x1.3f84e8p-63f, 0x1.7d1f54p-86f},  /* 13 */
    {0x1.836e48p-18f, 0x1.910548p-40f, 0x1.3f84e8p-63f, 0x1.7d1f54p-86f},  /* 14 */
    {0x1.836e48p-18f, 0x1.910548p-40f, 0x1.3f84e8p-63f, 0x1.7d1f54p-86f},  /* 15 */
    {0x1.06dc98p-19f, 0x1.220a9p-41f, 0x1.3f84e8p-63f, 0x1.7d1f54p-86f},  /* 16 */
    {0x1.b7272p-25f, 0x1.054a8p-48f, -0x1.ec5418p-73f, 0x1.f534dep-98f},  /* 17 */
    {0x1.b7272p-25f, 0x1.054a8p-48f, -0x1.ec5418p-73f, 0x1.f534dep-98f},  /* 18 */
    {0x1.b7272p-25f, 0x1.054a8p-48f, -0x1.ec5418p-73f, 0x1.f534dep-98f},  /* 19 */
    {0x1.b7272p-25f, 0x1.054a8p-48f, -0x1.ec5418p-73f, 0x1.f534dep-98f},  /* 20 */
    {0x1.b7272p-25f, 0x1.054a8p-48f, -0x1.ec5418p-73f, 0x1.f534dep-98f},  /* 21 */
    {0x1.b7272p-25f, 0x1.054a8p-48f, -0x1.ec5418p-73f, 0x1.f534dep-98f},  /* 22 */
    {0x1.6e4e4p-26f, 0x1.054a8p-48f, -0x1.ec5418p-73f, 0x1.f534dep-98f},  /* 23 */
    {0x1.b9391p-28f, 0x1.529fcp-54f, 0x1.3abe9p-77f, -0x1.596448p-103f},  /* 24 */
    {0x1.b9391p-28f, 0x1.529fcp-54f, 0x1.3abe9p-77f, -0x1.596448p-103f},  /* 25 */
    {0x1.72722p-29f, 0x1.529fcp-54f, 0x1.3abe9p-77f, -0x1.596448p-103f},  /* 26 */
    {0x1.c9c88p-31f, 0x1.529fcp-54f, 0x1.3abe9p-77f, -0x1.596448p-103f},  /* 27 */
    {0x1.c9c88p-31f, 0x1.529fcp-54f, 0x1.3abe9p-77f, -0x1.596448p-103f},  /* 28 */
    {0x1.9391p-32f, 0x1.529fcp-54f, 0x1.3abe9p-77f, -0x1.596448p-103f},  /* 29 */
    {0x1.272208p-33f, 0x1.4a7f08p-56f, 0x1.d5f478p-80f, 0x1.534ddcp-102f},  /* 30 */
    {0x1.39105p-36f, 0x1.29fc28p-58f, -0x1.505c1p-83f, -0x1.65912p-105f},  /* 31 */
    {0x1.39105p-36f, 0x1.29fc28p-58f, -0x1.505c1p-83f, -0x1.65912p-105f},  /* 32 */
    {0x1.39105p-36f, 0x1.29fc28p-58f, -0x1.505c1p-83f, -0x1.65912p-105f},  /* 33 */
    {0x1.c882ap-39f, 0x1.4fe138p-61f, 0x1.5f47dp-84f, 0x1.34ddcp-106f},  /* 34 */
    {0x1.c882ap-39f, 0x1.4fe138p-61f, 0x1.5f47dp-84f, 0x1.34ddcp-106f},  /* 35 */
    {0x1.c882ap-39f, 0x1.4fe138p-61f, 0x1.5f47dp-84f, 0x1.34ddcp-106f},  /* 36 */
    {0x1.910548p-40f, 0x1.3f84e8p-63f, 0x1.7d1f5p-86f, 0x1.a6ee06p-109f},  /* 37 */
    {0x1.220a9p-41f, 0x1.3f84e8p-63f, 0x1.7d1f5p-86f, 0x1.a6ee06p-109f},  /* 38 */
    {0x1.1054a8p-44f, -0x1.ec5418p-73f, 0x1.f534d8p-98f, 0x1.7036d8p-120f},  /* 39 */
    {0x1.1054a8p-44f, -0x1.ec5418p-73f, 0x1.f534d8p-98f, 0x1.7036d8p-120f},  /* 40 */
    {0x1.1054a8p-44f, -0x1.ec5418p-73f, 0x1.f534d8p-98f, 0x1.7036d8p-120f},  /* 41 */
    {0x1.054a8p-48f, -0x1.ec5418p-73f, 0x1.f534d8p-98f, 0x1.7036d8p-120f},  /* 42 */
    {0x1.054a8p-48f, -0x1.ec5418p-73f, 0x1.f534d8p-98f, 0x1.7036d8p-120f},  /* 43 */
    {0x1.054a8p-48f, -0x1.ec5418p-73f, 0x1.f534d8p-98f, 0x1.7036d8p-120f},  /* 44 */
    {0x1.054a8p-48f, -0x1.ec5418p-73f, 0x1.f534d8p-98f, 0x1.7036d8p-120f},  /* 45 */
    {0x1.529fcp-54f, 0x1.3abe9p-77f, -0x1.596448p-103f, 0x1.b6c54p-131f},  /* 46 */
    {0x1.529fcp-54f, 0x1.3abe9p-77f, -0x1.596448p-103f, 0x1.b6c54p-131f},  /* 47 */
    {0x1.529fcp-54f, 0x1.3abe9p-77f, -0x1.596448p-103f, 0x1.b6c54p-131f},  /* 48 */
    {0x1.529fcp-54f, 0x1.3abe9p-77f, -0x1.596448p-103f, 0x1.b6c54p-131f},  /* 49 */
    {0x1.529fcp-54f, 0x1.3abe9p-77f, -0x1.596448p-103f, 0x1.b6c54p-131f},  /* 50 */
    {0x1.529fcp-54f, 0x1.3abe9p-77f, -0x1.596448p-103f, 0x1.b6c54p-131f},  /* 51 */
    {0x1.4a7f08p-56f, 0x1.d5f478p-80f, 0x1.534dd8p-102f, 0x1.036d8ap-124f},  /* 52 */
    {0x1.4a7f08p-56f, 0x1.d5f478p-80f, 0x1.534dd8p-102f, 0x1.036d8ap-124f},  /* 53 */
    {0x1.29fc28p-58f, -0x1.505c1p-83f, -0x1.65912p-105f, 0x1.b6c54p-131f},  /* 54 */
    {0x1.29fc28p-58f, -0x1.505c1p-83f, -0x1.65912p-105f, 0x1.b6c54p-131f},  /* 55 */
    {0x1.4fe138p-61f, 0x1.5f47dp-84f, 0x1.34ddcp-106f, 0x1.b6c54p-131f},  /* 56 */
    {0x1.4fe138p-61f, 0x1.5f47dp-84f, 0x1.34ddcp-106f, 0x1.b6c54p-131f},  /* 57 */
    {0x1.4fe138p-61f, 0x1.5f47dp-84f, 0x1.34ddcp-106f, 0x1.b6c54p-131f},  /* 58 */
    {0x1.3f84e8p-63f, 0x1.7d1f5p-86f, 0x1.a6eep-109f, 0x1.b6c54p-131f},  /* 59 */
    {0x1.3f84e8p-63f, 0x1.7d1f5p-86f, 0x1.a6eep-109f, 0x1.b6c54p-131f},  /* 60 */
    {0x1.fc2758p-66f, -0x1.705658p-93f, -0x1.11f92p-117f, -0x1.3acp-139f},  /* 61 */
    {0x1.fc2758p-66f, -0x1.705658p-93f, -0x1.11f92p-117f, -0x1.3acp-139f},  /* 62 */
    {0x1.fc2758p-66f, -0x1.705658p-93f, -0x1.11f92p-117f, -0x1.3acp-139f},  /* 63 */
    {0x1.f84ebp-67f, -0x1.705658p-93f, -0x1.11f92p-117f, -0x1.3acp-139f},  /* 64 */
    {0x1.f09d6p-68f, -0x1.705658p-93f, -0x1.11f92p-117f, -0x1.3acp-139f},  /* 65 */
    {0x1.e13ab8p-5f, 0x1.a3ea68p-27f, 0x1.bb81bp-51f, 0x1.b14accp-73f},  /* 66 */
    {0x1.c27578p-6f, 0x1.47d4dp-28f, 0x1.bb81bp-51f, 0x1.b14accp-73f},  /* 67 */
    {0x1.84eaf8p-7f, 0x1.1f5348p-30f, 0x1.770368p-52f, 0x1.62959ap-74f},  /* 68 */
    {0x1.09d5fp-8f, 0x1.1f5348p-30f, 0x1.770368p-52f, 0x1.62959ap-74f},  /* 69 */
    {0x1.3abe9p-13f, -0x1.596448p-39f, 0x1.b6c528p-67f, 0x1.993c44p-90f},  /* 70 */
    {0x1.3abe9p-13f, -0x1.596448p-39f, 0x1.b6c528p-67f, 0x1.993c44p-90f},  /* 71 */
    {0x1.3abe9p-13f, -0x1.596448p-39f, 0x1.b6c528p-67f, 0x1.993c44p-90f},  /* 72 */
    {0x1.3abe9p-13f, -0x1.596448p-39f, 0x1.b6c528p-67f, 0x1.993c44p-90f},  /* 73 */
    {0x1.3abe9p-13f, -0x1.596448p-39f, 0x1.b6c528p-67f, 0x1.993c44p-90f},  /* 74 */
    {0x1.d5f478p-16f, 0x1.534dd8p-38f, 0x1.036d88p-60f, 0x1.2b3278p-83f},  /* 75 */
    {0x1.d5f478p-16f, 0x1.534dd8p-38f, 0x1.036d88p-60f, 0x1.2b3278p-83f},  /* 76 */
    {0x1.d5f478p-16f, 0x1.534dd8p-38f, 0x1.036d88p-60f, 0x1.2b3278p-83f},  /* 77 */
    {0x1.abe8f8p-17f, 0x1.4d377p-40f, 0x1.b6c528p-67f, 0x1.993c44p-90f},  /* 78 */
    {0x1.57d1fp-18f, 0x1.4d377p-40f, 0x1.b6c528p-67f, 0x1.993c44p-90f},  /* 79 */
    {0x1.5f47dp-20f, 0x1.34ddcp-42f, 0x1.b6c528p-67f, 0x1.993c44p-90f},  /* 80 */
    {0x1.5f47dp-20f, 0x1.34ddcp-42f, 0x1.b6c528p-67f, 0x1.993c44p-90f},  /* 81 */
    {0x1.7d1f5p-22f, 0x1.a6eep-45f, 0x1.b6c528p-67f, 0x1.993c44p-90f},  /* 82 */
    {0x1.7d1f5p-22f, 0x1.a6eep-45f, 0x1.b6c528p-67f, 0x1.993c44p-90f},  /* 83 */
    {0x1.f47d48p-24f, 0x1.4ddc08p-46f, 0x1.6d8a5p-68f, 0x1.993c44p-90f},  /* 84 */
    {0x1.f47d48p-24f, 0x1.4ddc08p-46f, 0x1.6d8a5p-68f, 0x1.993c44p-90f},  /* 85 */
    {0x1.e8fa98p-25f, 0x1.37703p-48f, 0x1.b62958p-70f, 0x1.93c43ap-94f},  /* 86 */
    {0x1.d1f53p-26f, 0x1.37703p-48f, 0x1.b62958p-70f, 0x1.93c43ap-94f},  /* 87 */
    {0x1.a3ea68p-27f, 0x1.bb81bp-51f, 0x1.b14ac8p-73f, 0x1.278872p-95f},  /* 88 */
    {0x1.47d4dp-28f, 0x1.bb81bp-51f, 0x1.b14ac8p-73f, 0x1.278872p-95f},  /* 89 */
    {0x1.1f5348p-30f, 0x1.770368p-52f, 0x1.629598p-74f, 0x1.3c439p-98f},  /* 90 */
    {0x1.1f5348p-30f, 0x1.770368p-52f, 0x1.629598p-74f, 0x1.3c439p-98f},  /* 91 */
    {0x1.f534d8p-34f, 0x1.7036d8p-56f, 0x1.4acc98p-81f, 0x1.887208p-103f},  /* 92 */
    {0x1.f534d8p-34f, 0x1.7036d8p-56f, 0x1.4acc98p-81f, 0x1.887208p-103f},  /* 93 */
    {0x1.f534d8p-34f, 0x1.7036d8p-56f, 0x1.4acc98p-81f, 0x1.887208p-103f},  /* 94 */
    {0x1.f534d8p-34f, 0x1.7036d8p-56f, 0x1.4acc98p-81f, 0x1.887208p-103f},  /* 95 */
    {0x1.ea69b8p-35f, 0x1.c0db6p-58f, 0x1.4acc98p-81f, 0x1.887208p-103f},  /* 96 */
    {0x1.d4d378p-36f, -0x1.f924e8p-61f, -0x1.a99b08p-84f, -0x1.bc6fbep-106f},  /* 97 */
    {0x1.a9a6e8p-37f, 0x1.81b6cp-59f, 0x1.4acc98p-81f, 0x1.887208p-103f},  /* 98 */
    {0x1.534dd8p-38f, 0x1.036d88p-60f, 0x1.2b3278p-83f, 0x1.0e4108p-108f},  /* 99 */
    {0x1.4d377p-40f, 0x1.b6c528p-67f, 0x1.993c4p-90f, 0x1.c821p-113f},  /* 100 */
    {0x1.4d377p-40f, 0x1.b6c528p-67f, 0x1.993c4p-90f, 0x1.c821p-113f},  /* 101 */
    {0x1.34ddcp-42f, 0x1.b6c528p-67f, 0x1.993c4p-90f, 0x1.c821p-113f},  /* 102 */
};

/* ---- Payne–Hanek reduction ----------------------------------------------------------------- */

typedef struct {
    dfloat r;  /* x - q' (pi/2), |r| <= pi/4 (as a double-float) */
    int32_t q; /* quarter turns, modulo 4 at least */
} reduced;

/* Splits v into its nearest quarter-integer multiple and the rest: *quarters gets
 * round(4v) - 4 round(v) (in -2..2), the result is v - round(4v)/4. */
static float split_quarters(float v, int32_t *quarters) {
    float y = rintf(v * 4.0f);
    *quarters = to_i32_trunc(y - rintf(v) * 4.0f);
    return v - y * 0.25f;
}

static reduced payne_hanek(float a) {
    uint32_t bits = al_bits_of_float(a);
    int32_t e = (int32_t)((bits >> 23) & 0xffu) - 0x7f - 25;
    if (e > 65) bits += (uint32_t)(-64) << 23; /* a · 2^-64, the table compensates */
    a = al_float_of_bits(bits);
    if (e < 0) e = 0;
    const float *t = rempi_tab[e];
    int32_t q, dq;

    dfloat x = df_mul_ff(a, t[0]);
    x.hi = split_quarters(x.hi, &q);
    x = df_renorm(x);
    x = df_add_dd(x, df_mul_ff(a, t[1]));
    x.hi = split_quarters(x.hi, &dq);
    q += dq;
    x = df_renorm(x);
    x = df_add_dd(x, df_mul_df(df_make(t[2], t[3]), a));
    x = df_renorm(x);
    x = df_mul_dd(x, df_make(PI_F_HI * 2, PI_F_LO * 2));
    if (fabsf(a) < 0.7f) x = df_make(a, 0.0f); /* small lanes of a wide vector: no reduction */
    reduced r = {x, q};
    return r;
}

/* ---- the shared tail: sin of the reduced argument d (a double-float) ----------------------- */

static float sin_poly(dfloat d) {
    dfloat s = df_square(d);
    float u = C9;
    u = fmaf(u, s.hi, C7);
    u = fmaf(u, s.hi, C5);
    dfloat x = df_fastadd_fd(1.0f, df_mul_dd(df_fastadd_ff(C3, u * s.hi), s));
    return df_mul_dd_to_f(d, x);
}

/* torch returns the NaN with every bit set for any NaN or infinite input: SLEEF ORs an
 * all-ones mask into their reduced argument, and the quadrant it computes for them (from the
 * word past the end of its table) leaves that sign bit alone. The fixture checks it. */
#define NAN_ALL_ONES 0xffffffffu

float al_sinf_torch_lane(float x, int wide) {
    int32_t q;
    dfloat d;
    if (!wide && fabsf(x) < SMALL_LIMIT) {
        float k = rintf(x * INV_PI);
        q = to_i32_trunc(k);
        float v = fmaf(k, -PI_HI, x);
        d = df_add_ff(v, k * -PI_MID);
        d = df_fastadd_df(d, k * -PI_LO);
    } else {
        if (isnan(x) || isinf(x)) return al_float_of_bits(NAN_ALL_ONES);
        reduced r = payne_hanek(x);
        q = (((r.q & 3) * 2) + (r.r.hi > 0 ? 2 : 1)) >> 2;
        if ((r.q & 1) == 1) {
            dfloat half = df_make(flip_sign_by(PI_F_HI * -0.5f, r.r.hi),
                                  flip_sign_by(PI_F_LO * -0.5f, r.r.hi));
            r.r = df_add_dd(r.r, half);
        }
        d = df_renorm(r.r);
    }
    float u = sin_poly(d);
    if (q & 1) u = -u;
    if (al_bits_of_float(x) == 0x80000000u) u = x; /* sin(-0) = -0 */
    return u;
}

float al_cosf_torch_lane(float x, int wide) {
    int32_t q;
    dfloat d;
    if (!wide && fabsf(x) < SMALL_LIMIT) {
        /* odd multiples of pi/2: dq = 2 round(x/pi - 1/2) + 1 */
        float dq = fmaf(rintf(fmaf(x, INV_PI, -0.5f)), 2.0f, 1.0f);
        q = to_i32_trunc(dq);
        d = df_add_ff(x, dq * (-PI_HI * 0.5f));
        d = df_add_df(d, dq * (-PI_MID * 0.5f));
        d = df_add_df(d, dq * (-PI_LO * 0.5f));
    } else {
        if (isnan(x) || isinf(x)) return al_float_of_bits(NAN_ALL_ONES);
        reduced r = payne_hanek(x);
        q = (((r.q & 3) * 2) + (r.r.hi > 0 ? 8 : 7)) >> 1;
        if ((r.q & 1) == 0) {
            float sgn = r.r.hi > 0 ? 0.0f : -1.0f;
            dfloat half = df_make(flip_sign_by(PI_F_HI * -0.5f, sgn),
                                  flip_sign_by(PI_F_LO * -0.5f, sgn));
            r.r = df_add_dd(r.r, half);
        }
        d = df_renorm(r.r);
    }
    float u = sin_poly(d);
    if ((q & 2) == 0) u = -u;
    return u;
}

float al_cosf_torch(float x) { return al_cosf_torch_lane(x, 0); }
float al_sinf_torch(float x) { return al_sinf_torch_lane(x, 0); }

/* ---- arrays, 8 lanes at a time like Sleef_cosf8_u10 --------------------------------------- */

#define LANES 8

static void torch_vector_loop(float *out, const float *in, int64_t n, float (*f)(float, int)) {
    for (int64_t i = 0; i < n; i += LANES) {
        int m = (n - i) < LANES ? (int)(n - i) : LANES;
        float v[LANES];
        int wide = 0;
        for (int j = 0; j < m; j++) {
            v[j] = in[i + j];
            if (!(fabsf(v[j]) < SMALL_LIMIT)) wide = 1;
        }
        /* the zero padding of a partial vector never widens it */
        for (int j = 0; j < m; j++) out[i + j] = f(v[j], wide);
    }
}

void al_cosf_torch_n(float *out, const float *in, int64_t n) {
    if (out && in && n > 0) torch_vector_loop(out, in, n, al_cosf_torch_lane);
}

void al_sinf_torch_n(float *out, const float *in, int64_t n) {
    if (out && in && n > 0) torch_vector_loop(out, in, n, al_sinf_torch_lane);
}
