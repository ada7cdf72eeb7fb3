/* head_roles.c — each head's role scores on a repeated random sequence (see head_roles.h). */
#include "attnlab/app.h"
#include "app/head_roles.h"

enum { LOCAL_WINDOW = 4 };

al_status al_role_probe_ids(int32_t *ids, int64_t vocab, int32_t bos, int64_t context, al_role_probe *probe,
                            al_error *err) {
    al_role_probe p = {bos >= 0 ? 1 : 0, AL_ROLE_REPEAT, 0};
    if (p.start + 2 * p.repeat > context) p.repeat = (context - p.start) / 2;
    *probe = (al_role_probe){p.start, 0, 0};
    if (p.repeat < 2) return AL_OK; /* too short a context to measure */
    const int64_t s = p.start, R = p.repeat, lo = vocab > 8 ? 3 : 0;
    al_rng *rng = al_rng_create(1234);
    if (!rng) return al_fail(err, AL_ERR_NOMEM, "head roles: out of memory");
    float u[AL_ROLE_REPEAT];
    al_rng_uniform(rng, u, R, 0.0f, 1.0f);
    al_rng_free(rng);
    if (s) ids[0] = bos;
    for (int64_t j = 0; j < R; j++) {
        int64_t id = lo + (int64_t)(u[j] * (float)(vocab - lo));
        if (id >= vocab) id = vocab - 1;
        ids[s + j] = ids[s + R + j] = (int32_t)id;
    }
    p.len = s + 2 * R;
    *probe = p;
    return AL_OK;
}

void al_head_role_scores(const al_role_probe *probe, const float *a, int64_t ld, float *out) {
    const int64_t s = probe->start, R = probe->repeat, T = probe->len;
    double prev = 0.0, sink = 0.0, local = 0.0, induction = 0.0;
    for (int64_t i = 1; i < T; i++) {
        prev += a[i * ld + i - 1];
        sink += a[i * ld];
        for (int64_t j = i - LOCAL_WINDOW + 1 > 0 ? i - LOCAL_WINDOW + 1 : 0; j <= i; j++) local += a[i * ld + j];
    }
    for (int64_t j = 0; j < R; j++) induction += a[(s + R + j) * ld + s + j + 1];
    out[AL_LAB_ROLE_PREVIOUS] = (float)(prev / (double)(T - 1));
    out[AL_LAB_ROLE_FIRST] = (float)(sink / (double)(T - 1));
    out[AL_LAB_ROLE_LOCAL] = (float)(local / (double)(T - 1));
    out[AL_LAB_ROLE_INDUCTION] = (float)(induction / (double)R);
}

double al_lab_role_threshold(void) { return 0.5; }

int64_t al_lab_role_ideal_size(int64_t repeat) {
    return repeat >= 2 && repeat <= AL_ROLE_REPEAT ? 1 + 2 * repeat : -1;
}

al_status al_lab_role_ideal(al_lab_role role, int64_t repeat, float *out, int64_t cap, al_error *err) {
    if (!out) return al_fail(err, AL_ERR_ARG, "ideal role pattern: NULL argument");
    if (role < 0 || role >= AL_LAB_ROLES)
        return al_fail(err, AL_ERR_ARG, "ideal role pattern: role %d is not in [0, %d)", (int)role, AL_LAB_ROLES);
    const int64_t T = al_lab_role_ideal_size(repeat), R = repeat;
    if (T < 0)
        return al_fail(err, AL_ERR_ARG, "ideal role pattern: repeat %lld is not in [2, %d]", (long long)repeat,
                       AL_ROLE_REPEAT);
    if (cap < T * T)
        return al_fail(err, AL_ERR_CAPACITY, "ideal role pattern: %lld values, room for %lld", (long long)(T * T),
                       (long long)cap);
    memset(out, 0, (size_t)(T * T) * sizeof *out);
    /* The probe's layout: BOS at 0, the first copy at 1 .. R, the second at R+1 .. 2R. */
    for (int64_t q = 0; q < T; q++) {
        float *row = out + q * T;
        switch (role) {
        case AL_LAB_ROLE_PREVIOUS: row[q ? q - 1 : 0] = 1.0f; break;
        case AL_LAB_ROLE_FIRST: row[0] = 1.0f; break;
        case AL_LAB_ROLE_LOCAL: {
            const int64_t from = q - LOCAL_WINDOW + 1 > 0 ? q - LOCAL_WINDOW + 1 : 0;
            for (int64_t k = from; k <= q; k++) row[k] = 1.0f / (float)(q - from + 1);
            break;
        }
        case AL_LAB_ROLE_INDUCTION: row[q > R ? q - R + 1 : 0] = 1.0f; break; /* r_j again → what followed r_j */
        default: break;
        }
    }
    return AL_OK;
}
