/* checkpoint.c — a trainer's checkpoints in MiniMind's files: its weights as a model.safetensors
 * image by MiniMind's names (what `generate`, `logits` and the page load), its weights set from
 * such an image (to resume, or to go on from a model), AdamW's moments out and back, and the
 * config.json its shapes imply. */
#include "attnlab/train.h"
#include "base/internal.h"
#include "io/weights_image.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const float *trainer_weight(const void *ctx, const al_weight_ref *ref) {
    return al_trainer_weight((const al_trainer *)ctx, ref->p, ref->layer, ref->expert, NULL);
}

al_status al_trainer_export(const al_trainer *t, const char *const *meta_kv, int n_meta, uint8_t **out, size_t *size,
                            al_error *err) {
    if (!t || !out || !size) return al_fail(err, AL_ERR_ARG, "trainer export: NULL argument");
    return al_weights_image(al_trainer_hparams(t), trainer_weight, t, AL_DTYPE_F32, meta_kv, n_meta, out, size, err);
}

al_status al_trainer_import(al_trainer *t, const al_safetensors *st, al_error *err) {
    if (!t || !st) return al_fail(err, AL_ERR_ARG, "trainer import: NULL argument");
    const al_model_hparams *hp = al_trainer_hparams(t);
    const int64_t n = al_model_weights(hp, NULL);
    al_weight_ref *refs = malloc((size_t)n * sizeof *refs);
    if (!refs) return al_fail(err, AL_ERR_NOMEM, "trainer import: out of memory");
    al_model_weights(hp, refs);
    al_status s = AL_OK;
    for (int64_t i = 0; s == AL_OK && i < n; i++) {
        char name[AL_WEIGHT_NAME_CAP];
        int64_t numel = 0;
        al_minimind_param_name(name, sizeof name, refs[i].p, refs[i].layer, refs[i].expert);
        float *w = al_trainer_param(t, refs[i].p, refs[i].layer, refs[i].expert, &numel);
        al_st_tensor info;
        if (al_st_find(st, name, &info) != AL_OK) {
            s = al_fail(err, AL_ERR_MISSING, "the weights have no %s", name);
            break;
        }
        const int64_t have = info.numel;
        if (have != numel) {
            s = al_fail(err, AL_ERR_SHAPE, "%s holds %lld numbers; this model's has %lld", name, (long long)have,
                        (long long)numel);
            break;
        }
        s = al_st_read_f32(st, name, w, numel, err);
    }
    free(refs);
    return s;
}

al_status al_trainer_export_state(al_trainer *t, const char *const *meta_kv, int n_meta, uint8_t **out, size_t *size,
                                  al_error *err) {
    if (!t || !out || !size) return al_fail(err, AL_ERR_ARG, "trainer state: NULL argument");
    *out = NULL, *size = 0;
    float *m = NULL, *v = NULL;
    const int64_t n = al_trainer_moments(t, &m, &v);
    al_st_entry entries[2] = {{"adamw.m", m, 1, {n}}, {"adamw.v", v, 1, {n}}};
    size_t needed = 0;
    al_status st = al_st_serialize(entries, 2, meta_kv, n_meta, NULL, 0, &needed, err);
    if (st == AL_OK && !(*out = malloc(needed))) st = al_fail(err, AL_ERR_NOMEM, "trainer state: out of memory");
    if (st == AL_OK) st = al_st_serialize(entries, 2, meta_kv, n_meta, *out, needed, size, err);
    if (st != AL_OK) free(*out), *out = NULL, *size = 0;
    return st;
}

/* The first number of x[n] that cannot be (not finite, or with nonneg below zero), or -1. */
static int64_t first_impossible(const float *x, int64_t n, int nonneg) {
    for (int64_t i = 0; i < n; i++)
        if (!isfinite(x[i]) || (nonneg && x[i] < 0.0f)) return i;
    return -1;
}

/* The weights (with_weights) and AdamW's moments, weight by weight in the trainer's order (the
 * moments' layout): every number finite, every second moment (a mean of g²) at least 0.
 * AL_ERR_NONFINITE naming the tensor, the weight it belongs to and the value. */
static al_status check_numbers(al_trainer *t, int with_weights, al_error *err) {
    const al_model_hparams *hp = al_trainer_hparams(t);
    float *m = NULL, *v = NULL;
    al_trainer_moments(t, &m, &v);
    const int64_t n = al_model_weights(hp, NULL);
    al_weight_ref *refs = malloc((size_t)n * sizeof *refs);
    if (!refs) return al_fail(err, AL_ERR_NOMEM, "trainer check: out of memory");
    al_model_weights(hp, refs);
    al_status s = AL_OK;
    int64_t at = 0; /* where this weight's moments start */
    for (int64_t i = 0; s == AL_OK && i < n; i++) {
        char name[AL_WEIGHT_NAME_CAP];
        int64_t numel = 0, bad;
        const float *w = al_trainer_weight(t, refs[i].p, refs[i].layer, refs[i].expert, &numel);
        al_minimind_param_name(name, sizeof name, refs[i].p, refs[i].layer, refs[i].expert);
        if (with_weights && (bad = first_impossible(w, numel, 0)) >= 0)
            s = al_fail(err, AL_ERR_NONFINITE, "the weights are not finite: %s[%lld] is %g", name, (long long)bad,
                        (double)w[bad]);
        else if ((bad = first_impossible(m + at, numel, 0)) >= 0)
            s = al_fail(err, AL_ERR_NONFINITE, "adamw.m[%lld] (%s[%lld]) is %g: a first moment is finite",
                        (long long)(at + bad), name, (long long)bad, (double)m[at + bad]);
        else if ((bad = first_impossible(v + at, numel, 1)) >= 0)
            s = al_fail(err, AL_ERR_NONFINITE, "adamw.v[%lld] (%s[%lld]) is %g: a second moment is finite and never negative",
                        (long long)(at + bad), name, (long long)bad, (double)v[at + bad]);
        at += numel;
    }
    free(refs);
    return s;
}

al_status al_trainer_check(al_trainer *t, al_error *err) {
    if (!t) return al_fail(err, AL_ERR_ARG, "trainer check: NULL argument");
    return check_numbers(t, 1, err);
}

al_status al_trainer_import_state(al_trainer *t, const al_safetensors *st, int64_t steps, al_error *err) {
    if (!t || !st || steps < 0) return al_fail(err, AL_ERR_ARG, "trainer state: NULL argument or negative steps");
    float *m = NULL, *v = NULL;
    const int64_t n = al_trainer_moments(t, &m, &v);
    al_st_tensor info;
    if (al_st_find(st, "adamw.m", &info) != AL_OK || info.numel != n || al_st_find(st, "adamw.v", &info) != AL_OK ||
        info.numel != n)
        return al_fail(err, AL_ERR_SHAPE, "the optimizer state does not fit this model (%lld weights)", (long long)n);
    /* finite (al_st_read_f32 refuses NaN and inf), then each second moment at least 0; a state
     * refused leaves a fresh optimizer (both moments 0) */
    al_status s = al_st_read_f32(st, "adamw.m", m, n, err);
    if (s == AL_OK) s = al_st_read_f32(st, "adamw.v", v, n, err);
    if (s == AL_OK) s = check_numbers(t, 0, err);
    if (s != AL_OK) {
        memset(m, 0, (size_t)n * sizeof *m), memset(v, 0, (size_t)n * sizeof *v);
        return s;
    }
    al_trainer_set_steps(t, steps);
    return AL_OK;
}

al_status al_trainer_config_json(const al_trainer *t, char **out, size_t *len, al_error *err) {
    if (!t || !out || !len) return al_fail(err, AL_ERR_ARG, "trainer config.json: NULL argument");
    *out = NULL, *len = 0;
    const al_model_hparams *hp = al_trainer_hparams(t);
    al_pth_flags flags = al_pth_flags_default();
    flags.rope_theta = hp->rope_base;
    flags.moe_top_k = hp->n_experts ? hp->top_k : 1;
    flags.n_heads = hp->qk_norm ? 0 : hp->n_heads; /* without QK-Norm the shapes cannot say it */
    uint8_t *image = NULL;
    size_t size = 0;
    al_safetensors *st = NULL;
    char *text = NULL;
    int64_t n = -1;
    al_status s = al_trainer_export(t, NULL, 0, &image, &size, err);
    if (s == AL_OK) s = al_st_parse_view(image, size, &st, err);
    if (s == AL_OK && (n = al_minimind_config_from_tensors(st, &flags, NULL, 0, err)) < 0) s = err ? err->status : AL_ERR_FORMAT;
    if (s == AL_OK && !(text = malloc((size_t)n + 1))) s = al_fail(err, AL_ERR_NOMEM, "trainer config.json: out of memory");
    if (s == AL_OK && al_minimind_config_from_tensors(st, &flags, text, n + 1, err) != n) s = err ? err->status : AL_ERR_FORMAT;
    al_st_free(st);
    free(image);
    if (s != AL_OK) {
        free(text);
        return s;
    }
    *out = text, *len = (size_t)n;
    return AL_OK;
}
