/* rope.c — rotary position embedding (RoPE), MiniMind's half-split convention.
 *
 * Dimension i < head_dim/2 is paired with i + head_dim/2; at position m the pair is rotated by
 * the angle m · freq_i, freq_i = base^(−2i/head_dim):
 *     x'_i          = x_i · cos(m·freq_i) − x_{i+d/2} · sin(m·freq_i)
 *     x'_{i+d/2}    = x_{i+d/2} · cos(m·freq_i) + x_i · sin(m·freq_i)
 * written, as the seeds do, as x·cos + rotate_half(x)·sin with rotate_half(x) = [−x2, x1] and
 * the cos/sin tables duplicated over both halves. A rotation keeps norms, and the dot product
 * of two rotated vectors depends only on their distance: <R(m)q, R(n)k> = <q, R(n−m)k>.
 *
 * Rounding follows PyTorch: exponent 2i/d in float32, base^e as torch.pow computes it
 * (torch/sleef_pow.c), 1/x in float32, angle m·freq as a float32 product, cos/sin of that float angle
 * as torch.cos/sin compute it. */
#include "attnlab/model.h"
#include "model/rope.h"
#include "base/fault.h"
#include "torch/sleef_pow.h"
#include "torch/sleef_trig.h"

#include <math.h>
#include <string.h>

al_status al_rope_freqs(float *freq, int64_t head_dim, double base) {
    if (!freq || head_dim <= 0 || head_dim % 2 != 0 || !(base > 0.0) || !isfinite(base))
        return AL_ERR_ARG;
    /* exponent_i = float(2i) / float(head_dim); base ** exponents as torch.pow computes it on
     * float32 (SLEEF in blocks of 16, libm powf for the rest); then 1 / x in float32. The Python
     * float base meets a float32 tensor, so it is rounded to float32 first. */
    const int64_t half = head_dim / 2;
    for (int64_t i = 0; i < half; i++) freq[i] = (float)(2 * i) / (float)head_dim;
    al_powf_torch_scalar_tensor(freq, (float)base, freq, half);
    for (int64_t i = 0; i < half; i++) freq[i] = 1.0f / freq[i];
    return AL_OK;
}

/* The float32 angle m · freq_i shared by the table and the angle chart. */
static float rope_angle(int64_t m, float freq) {
    if (AL_FAULT(AL_FAULT_ROPE_ABSOLUTE)) return (float)(m * m) * freq;
    return (float)m * freq;
}

/* The cos/sin tables from the angle table [rows, half], which the caller has written at the
 * start of cos_out: computed in place, then each row spread over both halves [rows, 2·half].
 * torch.cos/sin run over the whole contiguous angle table 8 floats at a time, and a value's
 * last bit can depend on its 7 neighbours (torch/sleef_trig.h), so the table is computed whole. */
static void tables_from_angles(float *cos_out, float *sin_out, int64_t rows, int64_t half) {
    memcpy(sin_out, cos_out, (size_t)(rows * half) * sizeof(float));
    al_cosf_torch_n(cos_out, cos_out, rows * half);
    al_sinf_torch_n(sin_out, sin_out, rows * half);
    /* From the last row down, so no row is overwritten before it has moved. */
    for (int64_t m = rows - 1; m >= 0; m--) {
        float *c = cos_out + m * 2 * half, *s = sin_out + m * 2 * half;
        memmove(c, cos_out + m * half, (size_t)half * sizeof(float));
        memmove(s, sin_out + m * half, (size_t)half * sizeof(float));
        memcpy(c + half, c, (size_t)half * sizeof(float));
        memcpy(s + half, s, (size_t)half * sizeof(float));
    }
}

void al_rope_table_row(float *cos_row, float *sin_row, int64_t m, const float *freq,
                       int64_t head_dim) {
    for (int64_t i = 0; i < head_dim / 2; i++) cos_row[i] = rope_angle(m, freq[i]);
    tables_from_angles(cos_row, sin_row, 1, head_dim / 2);
}

al_status al_rope_table(float *cos_out, float *sin_out, int64_t end, int64_t head_dim,
                        double base) {
    if (!cos_out || !sin_out) return AL_ERR_ARG;
    /* The angle table [end, head_dim/2] goes into the start of cos_out, then both are spread. */
    al_status st = al_rope_angles(cos_out, end, head_dim, base, NULL);
    if (st != AL_OK) return st;
    tables_from_angles(cos_out, sin_out, end, head_dim / 2);
    return AL_OK;
}

al_status al_rope_check(int64_t head_dim, double base, al_error *err) {
    if (head_dim < 2 || head_dim > AL_MAX_HEAD_DIM || head_dim % 2 != 0)
        return al_fail(err, AL_ERR_ARG, "RoPE: head_dim must be even and in [2, %d] (got %lld)",
                       AL_MAX_HEAD_DIM, (long long)head_dim);
    if (!(base > 0.0) || !isfinite(base))
        return al_fail(err, AL_ERR_ARG, "RoPE: the base must be a finite number > 0 (got %g)", base);
    return AL_OK;
}

int64_t al_rope_pairs(int64_t head_dim) {
    return head_dim >= 2 && head_dim <= AL_MAX_HEAD_DIM && head_dim % 2 == 0 ? head_dim / 2 : -1;
}

al_status al_rope_pair_dims(int32_t *dims, int64_t head_dim, al_rope_style style, al_error *err) {
    if (!dims) return al_fail(err, AL_ERR_ARG, "RoPE pairs: no output buffer");
    const int64_t half = al_rope_pairs(head_dim);
    if (half < 0)
        return al_fail(err, AL_ERR_ARG, "RoPE pairs: head_dim must be even and in [2, %d] (got %lld)",
                       AL_MAX_HEAD_DIM, (long long)head_dim);
    if (style != AL_ROPE_HALF_SPLIT && style != AL_ROPE_INTERLEAVED)
        return al_fail(err, AL_ERR_ARG, "RoPE pairs: unknown style %d", (int)style);
    for (int64_t i = 0; i < half; i++) {
        dims[2 * i] = (int32_t)(style == AL_ROPE_HALF_SPLIT ? i : 2 * i);
        dims[2 * i + 1] = (int32_t)(style == AL_ROPE_HALF_SPLIT ? i + half : 2 * i + 1);
    }
    return AL_OK;
}

al_status al_rope_angles(float *angles, int64_t end, int64_t head_dim, double base,
                         al_error *err) {
    if (!angles) return al_fail(err, AL_ERR_ARG, "RoPE angles: no output buffer");
    if (end < 0) return al_fail(err, AL_ERR_ARG, "RoPE angles: negative position count %lld", (long long)end);
    al_status st = al_rope_check(head_dim, base, err);
    if (st != AL_OK) return st;
    float freq[AL_MAX_HEAD_DIM / 2];
    al_rope_freqs(freq, head_dim, base);
    const int64_t half = head_dim / 2;
    for (int64_t m = 0; m < end; m++)
        for (int64_t i = 0; i < half; i++) angles[m * half + i] = rope_angle(m, freq[i]);
    return AL_OK;
}

void al_rope_apply(float *x, const float *cos_t, const float *sin_t, int64_t n_tok,
                   int64_t n_heads, int64_t head_dim) {
    const int64_t half = head_dim / 2;
    for (int64_t t = 0; t < n_tok; t++) {
        const float *c = cos_t + t * head_dim, *s = sin_t + t * head_dim;
        for (int64_t h = 0; h < n_heads; h++) {
            float *v = x + (t * n_heads + h) * head_dim;
            for (int64_t i = 0; i < half; i++) {
                const float x1 = v[i], x2 = v[i + half];
                /* (x·cos) + (rotate_half(x)·sin), each product rounded, then the sum. */
                v[i] = x1 * c[i] + (-x2) * s[i];
                v[i + half] = x2 * c[i + half] + x1 * s[i + half];
                if (AL_FAULT(AL_FAULT_ROPE_SCALE)) v[i] *= 1.001f, v[i + half] *= 1.001f;
            }
        }
    }
}

void al_rope_apply_interleaved(float *x, const float *cos_t, const float *sin_t, int64_t n_tok,
                               int64_t n_heads, int64_t head_dim) {
    const int64_t half = head_dim / 2;
    for (int64_t t = 0; t < n_tok; t++) {
        const float *c = cos_t + t * head_dim, *s = sin_t + t * head_dim; /* pair i at [i] */
        for (int64_t h = 0; h < n_heads; h++) {
            float *v = x + (t * n_heads + h) * head_dim;
            for (int64_t i = 0; i < half; i++) {
                const float x0 = v[2 * i], x1 = v[2 * i + 1];
                /* (x0 + i·x1)·(cos + i·sin), each product rounded, then the sum (llama2.c). */
                v[2 * i] = x0 * c[i] - x1 * s[i];
                v[2 * i + 1] = x0 * s[i] + x1 * c[i];
            }
        }
    }
}

void al_rope_yarn(float *freq, int64_t head_dim, double base, double factor, int64_t original_max,
                  double beta_fast, double beta_slow) {
    /* MiniMind's precompute_freqs_cis: the dimensions that turn fewer than beta_slow times over
     * the original context are slowed by `factor`, those that turn more than beta_fast times
     * are kept, and a linear ramp blends between. inv_dim(b) is the dimension that turns b
     * times: dim · ln(orig / (b · 2π)) / (2 · ln base), in double as Python computes it. */
    const double two_pi = 6.283185307179586;
    const double inv_fast = (double)head_dim * log((double)original_max / (beta_fast * two_pi)) / (2.0 * log(base));
    const double inv_slow = (double)head_dim * log((double)original_max / (beta_slow * two_pi)) / (2.0 * log(base));
    double low = floor(inv_fast), high = ceil(inv_slow);
    if (low < 0.0) low = 0.0;
    if (high > (double)(head_dim / 2 - 1)) high = (double)(head_dim / 2 - 1);
    const float span = (float)(high - low > 0.001 ? high - low : 0.001);
    for (int64_t i = 0; i < head_dim / 2; i++) {
        /* ramp = clamp((i - low) / span, 0, 1), then f · (1 − ramp + ramp / factor), float32 */
        float ramp = ((float)i - (float)low) / span;
        ramp = ramp < 0.0f ? 0.0f : ramp > 1.0f ? 1.0f : ramp;
        freq[i] = freq[i] * ((1.0f - ramp) + ramp / (float)factor);
    }
}

void al_rope_table_freqs(float *cos_out, float *sin_out, int64_t end, int64_t head_dim,
                         const float *freq) {
    const int64_t half = head_dim / 2;
    for (int64_t m = 0; m < end; m++)
        for (int64_t i = 0; i < half; i++) cos_out[m * half + i] = rope_angle(m, freq[i]);
    tables_from_angles(cos_out, sin_out, end, half);
}

/* ---- a model's RoPE ------------------------------------------------------------------------- */

void al_model_rope_table(const al_model_hparams *hp, float *cos, float *sin, int64_t end) {
    float freq[AL_MAX_HEAD_DIM / 2];
    al_model_rope_freqs(hp, freq, AL_MAX_HEAD_DIM / 2, NULL);
    al_rope_table_freqs(cos, sin, end, hp->head_dim, freq);
    if (hp->yarn_factor != 0.0) /* MiniMind multiplies whenever rope_scaling is set */
        for (int64_t i = 0; i < end * hp->head_dim; i++) {
            cos[i] = cos[i] * (float)hp->attention_factor;
            sin[i] = sin[i] * (float)hp->attention_factor;
        }
}
