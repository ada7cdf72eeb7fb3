/* attn_load.c — builds an attention layer from a safetensors file: finds the six tensors by
 * their PyTorch state_dict names (the seeds' names, or a MiniMind checkpoint's under a prefix
 * such as "model.layers.3.self_attn."), infers hidden, heads, KV heads and head_dim from their
 * shapes, checks that all six agree, and loads them as float32. */
#include "attnlab/io.h"
#include "base/internal.h"

#include <string.h>

enum { NAME_MAX_LEN = 512 };

/* Looks up prefix + name; the tensor must exist and have rank `ndim`. */
static al_status find_param(const al_safetensors *st, const char *prefix, al_attn_param p,
                            int ndim, al_st_tensor *info, char name[NAME_MAX_LEN],
                            al_error *err) {
    int len = al_snprintf(name, NAME_MAX_LEN, "%s%s", prefix, al_attn_param_name(p));
    if (len < 0 || len >= NAME_MAX_LEN)
        return al_fail(err, AL_ERR_ARG, "tensor name prefix is too long");
    if (al_st_find(st, name, info) != AL_OK)
        return al_fail(err, AL_ERR_MISSING, "tensor '%s' not found in the weights file", name);
    if (info->ndim != ndim)
        return al_fail(err, AL_ERR_SHAPE, "tensor '%s' has %d dimensions, expected %d", name,
                       info->ndim, ndim);
    for (int i = 0; i < ndim; i++)
        if (info->shape[i] <= 0)
            return al_fail(err, AL_ERR_SHAPE, "tensor '%s' has an empty dimension", name);
    return AL_OK;
}

static al_status shape_error(al_error *err, const char *name, const al_st_tensor *t,
                             int64_t rows, int64_t cols) {
    if (t->ndim == 1)
        return al_fail(err, AL_ERR_SHAPE, "tensor '%s' has shape [%lld], expected [%lld]", name,
                       (long long)t->shape[0], (long long)rows);
    return al_fail(err, AL_ERR_SHAPE, "tensor '%s' has shape [%lld, %lld], expected [%lld, %lld]",
                   name, (long long)t->shape[0], (long long)t->shape[1], (long long)rows,
                   (long long)cols);
}

/* The tensors of a layer as found in the file, with their full names. */
typedef struct {
    al_st_tensor t[AL_PARAM_COUNT];
    char names[AL_PARAM_COUNT][NAME_MAX_LEN];
    int have_norms; /* q_norm and k_norm present (else QK-Norm is off) */
} found_params;

static al_status infer(const al_safetensors *st, const char *prefix, const al_attn_hparams *base,
                       al_attn_hparams *hp, found_params *f, al_error *err) {
    al_st_tensor *t = f->t;
    char (*names)[NAME_MAX_LEN] = f->names;
    al_status s;
    for (int p = AL_PARAM_Q_PROJ; p <= AL_PARAM_O_PROJ; p++)
        if ((s = find_param(st, prefix, (al_attn_param)p, 2, &t[p], names[p], err)) != AL_OK)
            return s;

    /* head_dim comes from the QK-Norm weights [head_dim]; without them (a model trained
     * without QK-Norm) the caller must say head_dim, and QK-Norm is off. */
    al_attn_hparams cfg = *base;
    int have_norms = 1;
    for (int p = AL_PARAM_Q_NORM; p <= AL_PARAM_K_NORM; p++) {
        s = find_param(st, prefix, (al_attn_param)p, 1, &t[p], names[p], err);
        if (s == AL_ERR_MISSING && base->head_dim > 0 && p == AL_PARAM_Q_NORM) {
            have_norms = 0;
            break;
        }
        if (s != AL_OK) return s;
    }
    if (have_norms) {
        cfg.head_dim = t[AL_PARAM_Q_NORM].shape[0];
        cfg.qk_norm = 1;
    } else {
        cfg.qk_norm = 0;
    }
    const int64_t D = cfg.head_dim;
    if (D < 2 || D > AL_MAX_HEAD_DIM || D % 2 != 0)
        return al_fail(err, AL_ERR_CONFIG, "head_dim %lld (from '%s') must be even and in [2, %d]",
                       (long long)D, names[have_norms ? AL_PARAM_Q_NORM : AL_PARAM_Q_PROJ],
                       AL_MAX_HEAD_DIM);

    const al_st_tensor *q = &t[AL_PARAM_Q_PROJ], *k = &t[AL_PARAM_K_PROJ];
    if (q->shape[0] % D != 0)
        return al_fail(err, AL_ERR_SHAPE,
                       "tensor '%s' has %lld rows, not a multiple of head_dim %lld",
                       names[AL_PARAM_Q_PROJ], (long long)q->shape[0], (long long)D);
    if (k->shape[0] % D != 0)
        return al_fail(err, AL_ERR_SHAPE,
                       "tensor '%s' has %lld rows, not a multiple of head_dim %lld",
                       names[AL_PARAM_K_PROJ], (long long)k->shape[0], (long long)D);
    cfg.hidden = q->shape[1];
    cfg.n_heads = q->shape[0] / D;
    cfg.n_kv_heads = k->shape[0] / D;

    /* Every tensor must have the shape these four numbers imply. */
    for (int p = 0; p < AL_PARAM_COUNT; p++) {
        if (!have_norms && p >= AL_PARAM_Q_NORM) break;
        int64_t want[2];
        int nd = al_attn_param_shape(&cfg, (al_attn_param)p, want);
        if (t[p].shape[0] != want[0] || (nd == 2 && t[p].shape[1] != want[1]))
            return shape_error(err, names[p], &t[p], want[0], want[1]);
    }

    f->have_norms = have_norms;
    *hp = cfg;
    return al_attn_hparams_check(hp, err);
}

al_status al_attn_hparams_from_safetensors(const al_safetensors *st, const char *prefix,
                                           const al_attn_hparams *base, al_attn_hparams *hp,
                                           al_error *err) {
    if (!st || !base || !hp) return al_fail(err, AL_ERR_ARG, "attention load: NULL argument");
    found_params f;
    return infer(st, prefix ? prefix : "", base, hp, &f, err);
}

al_status al_attn_from_safetensors(const al_safetensors *st, const char *prefix,
                                   const al_attn_hparams *base, const al_attn_capacity *cap,
                                   al_attn **out, al_error *err) {
    if (!out) return al_fail(err, AL_ERR_ARG, "attention load: NULL argument");
    *out = NULL;
    if (!st || !base || !cap) return al_fail(err, AL_ERR_ARG, "attention load: NULL argument");
    found_params f;
    al_attn_hparams cfg;
    al_status s = infer(st, prefix ? prefix : "", base, &cfg, &f, err);
    if (s != AL_OK) return s;
    const int have_norms = f.have_norms;
    char (*names)[NAME_MAX_LEN] = f.names;
    al_attn *a = NULL;
    if ((s = al_attn_create(&cfg, cap, &a, err)) != AL_OK) return s;
    for (int p = 0; p < AL_PARAM_COUNT; p++) {
        if (!have_norms && p >= AL_PARAM_Q_NORM) break; /* norms stay at 1, unused */
        int64_t numel = 0;
        float *dst = al_attn_param_for_write(a, (al_attn_param)p, &numel);
        if ((s = al_st_read_f32(st, names[p], dst, numel, err)) != AL_OK) {
            al_attn_free(a);
            return s;
        }
    }
    *out = a;
    return AL_OK;
}
