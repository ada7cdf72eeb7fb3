/* rng.c — PyTorch 1.13's CPU random generator, reproduced bit for bit: the mt19937 engine that
 * torch.manual_seed resets, tensor.uniform_, tensor.exponential_ and tensor.normal_ / torch.randn
 * on float32 tensors (both paths of the CPU normal kernel), torch.multinomial (both of its paths)
 * and the nn.Linear / xavier_uniform_ initialisations.
 *
 * What PyTorch does, and therefore what this file does (sources: ATen/core/MT19937RNGEngine.h,
 * DistributionsHelper.h, TransformationHelper.h, ATen/CPUGeneratorImpl.cpp,
 * ATen/native/cpu/DistributionTemplates.h, avx_mathfun.h, torch/nn/init.py):
 *   - manual_seed(s): mt19937 initialised from the low 32 bits of s; the cached normal cleared.
 *   - float uniform in [from, to): 24 bits of one 32-bit draw, x = bits / 2^24, then
 *     x * (to - from) + from, evaluated in float with a fused multiply-add.
 *   - normal_ on >= 16 elements: n float uniforms first, then Box–Muller in blocks of 16
 *     (8 radii from the first half, 8 angles from the second) with the AVX2 build's polynomial
 *     log and sincos (avx_mathfun.h, Cephes-derived); a tail that is not a multiple of 16 is
 *     redone by drawing 16 fresh uniforms over the last 16 outputs. The cached normal is neither
 *     read nor written on this path.
 *   - normal_ on < 16 elements: one double Box–Muller per pair from two 53-bit uniforms; the
 *     sine half is cached in the generator and returned by the next small draw.
 *   - exponential_(λ): per element, in order, one 53-bit uniform double u (two 32-bit draws),
 *     q = (-1 / λ) · log(1 - u) in double, rounded to float.
 *   - multinomial without replacement: q = exponential_(1) over the whole row, then the argmax
 *     (one sample) or the top n_sample of p / q in float; with replacement: the float cumulative
 *     sum normalised by its total, one 53-bit uniform per sample, a binary search.
 *     (Sources: ATen/native/Distributions.cpp multinomial_out, native/cpu/MultinomialKernel.cpp.)
 * This matches the x86-64 AVX2 kernels that torch 1.13 runs on AVX2 machines (checked against
 * torch's output, see tests/test_rng.c; its AVX512 kernels gave the same 10^5 draws). Its
 * DEFAULT kernels (no AVX2, or ATEN_CPU_CAPABILITY=default) use libm's logf/sinf/cosf and an
 * unfused uniform instead, and differ in about 40% of normals and half of the uniforms.
 *
 * Exactness: every float operation below is a single IEEE operation, written one per statement.
 * Where PyTorch's compiled code fuses a multiply and an add, fmaf() says so explicitly; nothing
 * else may be contracted, hence FP_CONTRACT OFF for clang (GCC does not contract in -std=c11
 * mode, which is how AttnLab is built). */

#include "attnlab/torch.h"
#include "base/internal.h"

#include <assert.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#endif

/* ------------------------------------------------------------------------------------------
 * The generator state
 * ------------------------------------------------------------------------------------------ */

enum {
    MT_N = 624,       /* words of state */
    MT_M = 397,       /* offset of the word mixed in by the twist */
    NORMAL_BLOCK = 16 /* the >= 16 normal path works on blocks of 16 (8 Box–Muller pairs) */
};

struct al_rng {
    uint32_t state[MT_N];
    int next_word;          /* index of the next state word to temper; MT_N: twist first */
    int has_cached_normal;  /* PyTorch's next_double_normal_sample is set */
    double cached_normal;   /* the sine half of the last double Box–Muller pair, N(0, 1) */
};

/* mt19937's initialisation: s[0] = seed, s[i] = 1812433253 · (s[i-1] ⊕ (s[i-1] >> 30)) + i
 * (mod 2^32). PyTorch keeps the 64-bit seed for reporting but only its low 32 bits seed the
 * engine, so seeds 5 and 2^32 + 5 give the same stream. */
void al_rng_seed(al_rng *r, uint64_t seed) {
    assert(r != NULL);
    r->state[0] = (uint32_t)(seed & 0xffffffffu);
    for (int i = 1; i < MT_N; i++) {
        uint32_t prev = r->state[i - 1];
        r->state[i] = 1812433253u * (prev ^ (prev >> 30)) + (uint32_t)i;
    }
    r->next_word = MT_N;
    r->has_cached_normal = 0;
    r->cached_normal = 0.0;
}

al_rng *al_rng_create(uint64_t seed) {
    al_rng *r = malloc(sizeof *r);
    if (r == NULL) return NULL;
    al_rng_seed(r, seed);
    return r;
}

void al_rng_free(al_rng *r) { free(r); }

al_rng *al_rng_clone(const al_rng *r) {
    if (r == NULL) return NULL;
    al_rng *copy = malloc(sizeof *copy);
    if (copy != NULL) *copy = *r;
    return copy;
}

/* Regenerates all 624 words: word i takes the top bit of s[i] and the low 31 bits of s[i+1],
 * shifted right once, xored with the matrix A's row 0x9908b0df when the dropped bit is 1, and
 * with s[i+397]. Indices wrap, so the last words already see the new first ones. */
static void mt_twist(al_rng *r) {
    for (int i = 0; i < MT_N; i++) {
        uint32_t upper_lower = (r->state[i] & 0x80000000u) | (r->state[(i + 1) % MT_N] & 0x7fffffffu);
        uint32_t mixed = upper_lower >> 1;
        if (upper_lower & 1u) mixed ^= 0x9908b0dfu;
        r->state[i] = r->state[(i + MT_M) % MT_N] ^ mixed;
    }
    r->next_word = 0;
}

uint32_t al_rng_u32(al_rng *r) {
    assert(r != NULL);
    if (r->next_word >= MT_N) mt_twist(r);
    uint32_t y = r->state[r->next_word++];
    /* Tempering, which spreads the state bits over the output word. */
    y ^= y >> 11;
    y ^= (y << 7) & 0x9d2c5680u;
    y ^= (y << 15) & 0xefc60000u;
    y ^= y >> 18;
    return y;
}

/* CPUGeneratorImpl::random64: the first 32-bit draw is the high half. */
static uint64_t rng_u64(al_rng *r) {
    uint64_t hi = al_rng_u32(r);
    uint64_t lo = al_rng_u32(r);
    return (hi << 32) | lo;
}

/* ------------------------------------------------------------------------------------------
 * Uniform draws
 * ------------------------------------------------------------------------------------------ */

/* uniform_real_distribution<float>(from, to): x = (draw mod 2^24) / 2^24, exact in float since
 * it has 24 significant bits; then x · (to - from) + from. The AVX2 build fuses the last
 * multiply-add (one rounding), the subtraction to - from is rounded on its own. */
static float uniform_float(al_rng *r, float from, float to) {
    uint32_t bits24 = al_rng_u32(r) & 0xffffffu;
    float x = (float)bits24 * 0x1p-24f;
    float width = to - from;
    return fmaf(x, width, from);
}

/* uniform_real_distribution<double>(0, 1): 53 bits of one 64-bit draw over 2^53, exact. */
static double uniform_double01(al_rng *r) {
    uint64_t bits53 = rng_u64(r) & ((UINT64_C(1) << 53) - 1);
    return (double)bits53 * 0x1p-53;
}

void al_rng_uniform(al_rng *r, float *out, int64_t n, float from, float to) {
    assert(r != NULL && (out != NULL || n <= 0));
    for (int64_t i = 0; i < n; i++) out[i] = uniform_float(r, from, to);
}

/* ------------------------------------------------------------------------------------------
 * Normal draws, path for fewer than 16 elements: at::normal_distribution<double>
 * ------------------------------------------------------------------------------------------ */

/* Box–Muller in double: u1, u2 ~ U[0, 1) (u1 drawn first),
 *   r = √(-2 ln(1 - u2)),  θ = 2π · u1,  returns r cos θ and caches r sin θ.
 * 1 - u2 is exact (u2 is a multiple of 2^-53) and lies in (0, 1], so the log is finite.
 * log, sin and cos are the platform's double libm (glibc for torch; GCC merges sin and cos into
 * sincos, which glibc computes identically); a different libm could move a last double bit, which
 * the final rounding to float hides except in very rare cases. */
static double normal_double(al_rng *r) {
    if (r->has_cached_normal) {
        r->has_cached_normal = 0;
        return r->cached_normal;
    }
    double u1 = uniform_double01(r);
    double u2 = uniform_double01(r);
    double radius = sqrt(-2.0 * log(1.0 - u2));
    double theta = 2.0 * 3.14159265358979323846 * u1; /* (2 · π) · u1, 2π exact in double */
    r->cached_normal = radius * sin(theta);
    r->has_cached_normal = 1;
    return radius * cos(theta);
}

/* ------------------------------------------------------------------------------------------
 * Normal draws, path for 16 elements or more: normal_fill with the AVX2 kernel
 *
 * log256_ps and sincos256_ps of avx_mathfun.h evaluated one lane at a time. The constants are
 * given by their float bit patterns, which are what PyTorch's tables hold (decimal literals
 * rounded through double); the multiply-adds fused below are the ones GCC fused in torch's
 * AVX2 object code (vfmadd/vfmsub in normal_fill_16_AVX2), found by disassembly and confirmed
 * on 2^20 draws.
 * ------------------------------------------------------------------------------------------ */

/* Natural log of x > 0 for the radius (Cephes logf):
 * x = m · 2^e with m in [√½, √2), ln x = e·ln 2 + ln m, and with t = m - 1,
 * ln m ≈ t - t²/2 + t³·P(t), P a degree-8 polynomial. ln 2 is split as q2 + q1 with
 * q2 = 0.693359375 (few bits, so e·q2 is exact) and q1 = -2.12194440e-4, to keep the sum accurate. */
static float log_avx2(float x) {
    static const uint32_t poly_bits[9] = {
        0x3d9021bbu, /*  7.0376836292e-2 */
        0xbdebd1b8u, /* -1.1514610310e-1 */
        0x3def251au, /*  1.1676998740e-1 */
        0xbdfe5d4fu, /* -1.2420140846e-1 */
        0x3e11e9bfu, /*  1.4249322787e-1 */
        0xbe2aae50u, /* -1.6668057665e-1 */
        0x3e4cceacu, /*  2.0000714765e-1 */
        0xbe7ffffcu, /* -2.4999993993e-1 */
        0x3eaaaaaau, /*  3.3333331174e-1 */
    };
    const float sqrt_half = al_float_of_bits(0x3f3504f3u);  /* 0.707106781186547524 */
    const float ln2_low = al_float_of_bits(0xb95e8083u);    /* -2.12194440e-4 */
    const float ln2_high = al_float_of_bits(0x3f318000u);   /* 0.693359375 */
    const float smallest_normal = al_float_of_bits(0x00800000u);

    int non_positive = x <= 0.0f;                  /* the kernel returns NaN there */
    if (x < smallest_normal) x = smallest_normal;  /* max(x, FLT_MIN), denormals cut off */

    /* Split x into exponent and a mantissa m0 in [0.5, 1). */
    uint32_t bits = al_bits_of_float(x);
    int32_t biased_exponent = (int32_t)(bits >> 23);
    float m0 = al_float_of_bits((bits & ~0x7f800000u) | 0x3f000000u);
    float e = (float)(biased_exponent - 0x7f);
    e = e + 1.0f;

    /* m0 < √½: use 2·m0 - 1 and e - 1, so that t = m - 1 stays in [√½ - 1, √2 - 1). */
    int below = m0 < sqrt_half;
    float t = m0 - 1.0f;
    if (below) {
        e = e - 1.0f;
        t = t + m0;
    }

    float e_ln2_low = e * ln2_low;
    float poly = al_float_of_bits(poly_bits[0]);
    for (int k = 1; k < 9; k++) poly = fmaf(poly, t, al_float_of_bits(poly_bits[k])); /* Horner */
    float t2 = t * t;
    float poly_t = poly * t;
    float y = fmaf(poly_t, t2, e_ln2_low);  /* t³·P(t) + e·q1 */
    y = fmaf(-t2, 0.5f, y);                 /* - t²/2 (t²·½ is exact) */
    float result = t + y;
    result = fmaf(e, ln2_high, result);     /* + e·q2 (exact product) */
    if (non_positive) return NAN;
    return result;
}

/* sin and cos of x together (Cephes sinf/cosf; here x = θ >= 0): j = trunc(|x|·4/π) rounded up
 * to even, r = |x| - j·π/4 subtracted in three exactly representable pieces of π/4, then
 *   cos r ≈ 1 - r²/2 + r⁴·C(r²),   sin r ≈ r + r³·S(r²)
 * and the octant j picks which polynomial gives sin and cos and their signs. */
static void sincos_avx2(float x, float *sin_out, float *cos_out) {
    const float four_over_pi = al_float_of_bits(0x3fa2f983u);    /* 1.27323954473516 */
    const float pio4_part1 = al_float_of_bits(0xbf490000u);      /* -0.78515625 */
    const float pio4_part2 = al_float_of_bits(0xb97da000u);      /* -2.4187564849853515625e-4 */
    const float pio4_part3 = al_float_of_bits(0xb3222169u);      /* -3.77489497744594108e-8 */
    const float cos_c0 = al_float_of_bits(0x37ccf5ceu);          /*  2.443315711809948e-5 */
    const float cos_c1 = al_float_of_bits(0xbab6061au);          /* -1.388731625493765e-3 */
    const float cos_c2 = al_float_of_bits(0x3d2aaaa5u);          /*  4.166664568298827e-2 */
    const float sin_s0 = al_float_of_bits(0xb94ca1f9u);          /* -1.9515295891e-4 */
    const float sin_s1 = al_float_of_bits(0x3c08839eu);          /*  8.3321608736e-3 */
    const float sin_s2 = al_float_of_bits(0xbe2aaaa3u);          /* -1.6666654611e-1 */

    uint32_t sin_sign = al_bits_of_float(x) & 0x80000000u;
    float ax = fabsf(x);

    float scaled = ax * four_over_pi;
    int32_t octant = (int32_t)scaled;           /* truncation, as cvttps2dq */
    octant = (octant + 1) & ~1;                 /* j = (j + 1) & ~1 */
    float j = (float)octant;

    sin_sign ^= ((uint32_t)octant & 4u) << 29;                   /* octants 4..7 flip sin */
    uint32_t cos_sign = ((uint32_t)~(octant - 2) & 4u) << 29;    /* and (j - 2) & 4 == 0 flips cos */
    int sin_uses_sin_poly = (octant & 2) == 0;

    /* r = x - j·π/4, each product fused with its add */
    float red = fmaf(j, pio4_part1, ax);
    red = fmaf(j, pio4_part2, red);
    red = fmaf(j, pio4_part3, red);
    float z = red * red;

    float c = fmaf(cos_c0, z, cos_c1);
    c = fmaf(c, z, cos_c2);
    float c_z = c * z;
    float half_z = z * 0.5f;
    c = fmaf(c_z, z, -half_z);                  /* r⁴·C - r²/2 in one rounding */
    c = c + 1.0f;

    float s = fmaf(z, sin_s0, sin_s1);
    s = fmaf(s, z, sin_s2);
    float s_z = s * z;
    s = fmaf(s_z, red, red);                    /* r + r³·S */

    /* The kernel blends with masks and additions of +0; those additions are kept because
     * they turn -0 into +0 exactly as the vector code does. */
    float sin_from_s = sin_uses_sin_poly ? s : 0.0f;
    float sin_from_c = sin_uses_sin_poly ? 0.0f : c;
    float s_rest = s - sin_from_s;
    float c_rest = c - sin_from_c;
    float sin_val = sin_from_s + sin_from_c;
    float cos_val = s_rest + c_rest;

    *sin_out = al_float_of_bits(al_bits_of_float(sin_val) ^ sin_sign);
    *cos_out = al_float_of_bits(al_bits_of_float(cos_val) ^ cos_sign);
}

/* normal_fill_16_AVX2 on data[0..15] holding U[0, 1) floats, for j < 8:
 *   r = √(-2 ln(1 - data[j])),  θ = float(2π) · data[j + 8],
 *   data[j] = fma(r cos θ, std, mean),  data[j + 8] = fma(r sin θ, std, mean). */
static void normal_block16(float *data, float mean, float std) {
    const float two_pi = al_float_of_bits(0x40c90fdbu); /* (float)(2.0f * pi<double>) */
    for (int j = 0; j < NORMAL_BLOCK / 2; j++) {
        float u1 = 1.0f - data[j];
        float theta = two_pi * data[j + NORMAL_BLOCK / 2];
        float log_u1 = log_avx2(u1);
        float radius = sqrtf(log_u1 * -2.0f);
        float sin_t, cos_t;
        sincos_avx2(theta, &sin_t, &cos_t);
        float n_cos = radius * cos_t;
        float n_sin = radius * sin_t;
        data[j] = fmaf(n_cos, std, mean);
        data[j + NORMAL_BLOCK / 2] = fmaf(n_sin, std, mean);
    }
}

static void normal_fill(al_rng *r, float *out, int64_t n, float mean, float std) {
    for (int64_t i = 0; i < n; i++) out[i] = uniform_float(r, 0.0f, 1.0f);
    for (int64_t i = 0; i + NORMAL_BLOCK <= n; i += NORMAL_BLOCK) normal_block16(out + i, mean, std);
    if (n % NORMAL_BLOCK != 0) {
        /* PyTorch's tail: the last 16 outputs (some already normal, the rest still uniform) are
         * overwritten with 16 fresh uniforms and transformed as one more block. */
        float *last = out + n - NORMAL_BLOCK;
        for (int i = 0; i < NORMAL_BLOCK; i++) last[i] = uniform_float(r, 0.0f, 1.0f);
        normal_block16(last, mean, std);
    }
}

void al_rng_normal(al_rng *r, float *out, int64_t n, float mean, float std) {
    assert(r != NULL && (out != NULL || n <= 0));
    if (n >= NORMAL_BLOCK) {
        normal_fill(r, out, n, mean, std); /* mean, std: static_cast<float> of the doubles */
        return;
    }
    /* Small tensors: each value is normal_distribution<double>(mean, std), i.e. z · std + mean
     * in double (fused, as in the AVX2 build), then rounded to float. */
    for (int64_t i = 0; i < n; i++) {
        double z = normal_double(r);
        out[i] = (float)fma(z, (double)std, (double)mean);
    }
}

void al_rng_randn(al_rng *r, float *out, int64_t n) { al_rng_normal(r, out, n, 0.0f, 1.0f); }

/* ------------------------------------------------------------------------------------------
 * Initialisations (torch/nn/init.py, evaluated in Python doubles, then uniform_ on float32)
 * ------------------------------------------------------------------------------------------ */

/* kaiming_uniform_(w, a=√5, mode='fan_in', nonlinearity='leaky_relu'):
 *   gain = √(2 / (1 + a²)),  std = gain / √fan_in,  bound = √3 · std,  w ~ U(-bound, bound).
 * Mathematically bound = 1/√fan_in; the double roundings above are what fix the last bit.
 * (Python's a ** 2 equals a * a for a = √5.) */
void al_rng_linear_init(al_rng *r, float *w, int64_t out_dim, int64_t in_dim) {
    assert(r != NULL);
    if (out_dim <= 0 || in_dim <= 0) return; /* PyTorch: zero-element init is a no-op */
    double a = sqrt(5.0);
    double gain = sqrt(2.0 / (1.0 + a * a));
    double std = gain / sqrt((double)in_dim);
    double bound = sqrt(3.0) * std;
    /* uniform_ receives ±bound as doubles and casts each to float. */
    al_rng_uniform(r, w, out_dim * in_dim, (float)-bound, (float)bound);
}

/* xavier_uniform_(w, gain): std = gain · √(2 / (fan_in + fan_out)), a = √3 · std,
 * w ~ U(-a, a); for a 2-D weight [fan_out, fan_in]. */
void al_rng_xavier_uniform(al_rng *r, float *w, int64_t fan_out, int64_t fan_in, double gain) {
    assert(r != NULL);
    if (fan_out <= 0 || fan_in <= 0) return;
    double std = gain * sqrt(2.0 / (double)(fan_in + fan_out));
    double bound = sqrt(3.0) * std;
    al_rng_uniform(r, w, fan_out * fan_in, (float)-bound, (float)bound);
}

/* ------------------------------------------------------------------------------------------
 * Exponential draws and torch.multinomial
 * ------------------------------------------------------------------------------------------ */

/* at::exponential_distribution<double>(λ), cast to float: u ~ U[0, 1) from 53 bits, then
 * transformation::exponential's CPU formula, static_cast<double>(-1.0) / λ · log(1 - u).
 * 1 - u is exact and in (0, 1]; u = 0 gives -0 (PyTorch does not guard it; the chance is 2^-53). */
static float exponential_float(al_rng *r, double lambda) {
    double u = uniform_double01(r);
    double scale = -1.0 / lambda;
    return (float)(scale * log(1.0 - u));
}

void al_rng_exponential(al_rng *r, float *out, int64_t n, double lambda) {
    assert(r != NULL && (out != NULL || n <= 0));
    for (int64_t i = 0; i < n; i++) out[i] = exponential_float(r, lambda);
}

/* The order of argmax and topk over p / q: NaN first (both treat it as the largest), then larger
 * values, then the smaller index (argmax's first maximum; for topk's ties, which only values that
 * are equal exactly make, PyTorch's order is its sort's, not specified). 1 if (a, i) comes first. */
static int comes_before(float a, int64_t i, float b, int64_t j) {
    int a_nan = a != a, b_nan = b != b;
    if (a_nan != b_nan) return a_nan;
    if (!a_nan && a != b) return a > b;
    return i < j;
}

/* multinomial_out's fast path (without replacement): s = argmax(p / q), q ~ Exp(1) — the
 * Gumbel-max trick with exp applied, argmax(log p - log(-log u)) = argmax(p / -log u). All n
 * exponentials are drawn first (exponential_ on the whole row), then p / q is one float
 * division per element. One sample needs no buffer: draws and argmax run in the same order. */
static void multinomial_exponential(al_rng *r, int64_t *out, const float *probs, int64_t n,
                                    int64_t n_sample, float *work) {
    if (n_sample == 1) {
        int64_t best = 0;
        float best_v = 0.0f;
        for (int64_t i = 0; i < n; i++) {
            float q = exponential_float(r, 1.0);
            float v = probs[i] / q;
            if (i == 0 || comes_before(v, i, best_v, best)) best = i, best_v = v;
        }
        out[0] = best;
        return;
    }
    for (int64_t i = 0; i < n; i++) work[i] = exponential_float(r, 1.0);
    for (int64_t i = 0; i < n; i++) work[i] = probs[i] / work[i];
    /* topk(p / q, n_sample), sorted: pick k is the first element after pick k - 1. */
    for (int64_t k = 0; k < n_sample; k++) {
        int64_t best = -1;
        for (int64_t i = 0; i < n; i++) {
            if (k > 0 && !comes_before(work[out[k - 1]], out[k - 1], work[i], i)) continue;
            if (best < 0 || comes_before(work[i], i, work[best], best)) best = i;
        }
        out[k] = best;
    }
}

/* multinomial_with_replacement_apply for float: cum[j] = (p_0 + … + p_j) summed in float, each
 * divided by the total; cum[n-1] set to 1; per sample one uniform double u and the first j with
 * cum[j] >= u (compared in double), by binary search. */
static void multinomial_cumulative(al_rng *r, int64_t *out, const float *probs, int64_t n,
                                   int64_t n_sample, float *cum) {
    float sum = 0.0f;
    for (int64_t j = 0; j < n; j++) {
        sum = sum + probs[j];
        cum[j] = sum;
    }
    for (int64_t j = 0; j < n; j++) cum[j] = cum[j] / sum;
    for (int64_t k = 0; k < n_sample; k++) {
        double u = uniform_double01(r);
        cum[n - 1] = 1.0f;
        int64_t left = 0, right = n;
        while (right - left > 0) {
            int64_t mid = left + (right - left) / 2;
            if ((double)cum[mid] < u) left = mid + 1;
            else right = mid;
        }
        out[k] = left;
    }
}

al_status al_rng_multinomial(al_rng *r, int64_t *out, const float *probs, int64_t n, int64_t n_sample,
                             int replacement, float *work, al_error *err) {
    if (r == NULL || out == NULL || probs == NULL)
        return al_fail(err, AL_ERR_ARG, "multinomial: NULL argument");
    if (n < 1 || n > (INT64_C(1) << 24))
        return al_fail(err, AL_ERR_ARG, "multinomial: %" PRId64 " categories (must be 1 to 2^24)", n);
    if (n_sample < 1 || (!replacement && n_sample > n))
        return al_fail(err, AL_ERR_ARG, "multinomial: %" PRId64 " samples of %" PRId64 " categories %s", n_sample, n,
                       replacement ? "(must be >= 1)" : "without replacement (must be 1 to the categories)");
    if (work == NULL && (replacement || n_sample > 1))
        return al_fail(err, AL_ERR_ARG, "multinomial: NULL work buffer for %" PRId64 " samples", n_sample);
    int any_positive = 0;
    for (int64_t i = 0; i < n; i++) {
        if (!(probs[i] >= 0.0f && probs[i] < INFINITY))
            return al_fail(err, AL_ERR_ARG, "multinomial: probability %" PRId64 " is %g (must be finite and >= 0)", i,
                           (double)probs[i]);
        any_positive |= probs[i] > 0.0f;
    }
    if (!any_positive) return al_fail(err, AL_ERR_ARG, "multinomial: every probability is 0");
    if (replacement) multinomial_cumulative(r, out, probs, n, n_sample, work);
    else multinomial_exponential(r, out, probs, n, n_sample, work);
    return AL_OK;
}

/* ------------------------------------------------------------------------------------------
 * Integer draws: torch.randint(low, high, size) on an int64 tensor
 * ------------------------------------------------------------------------------------------ */

/* random_from_to_kernel (ATen/native/cpu/DistributionTemplates.h), a serial loop over the
 * elements: range = high - low as an unsigned 64-bit number; each value is
 * (draw mod range) + low with one 32-bit draw when range < 2^32, otherwise one 64-bit draw
 * (random64: the first 32-bit draw is the high half). The modulo's slight bias is PyTorch's. */
void al_rng_randint(al_rng *r, int64_t *out, int64_t n, int64_t low, int64_t high) {
    assert(r != NULL && (out != NULL || n <= 0) && low < high);
    const uint64_t range = (uint64_t)high - (uint64_t)low;
    for (int64_t i = 0; i < n; i++) {
        const uint64_t draw = range >= (UINT64_C(1) << 32) ? rng_u64(r) : al_rng_u32(r);
        out[i] = (int64_t)(draw % range + (uint64_t)low);
    }
}
