/* pth.h — what the .pth reader (pth.c) shares with the MiniMind loader (model_load.c): a
 * state_dict read as float32 views that share their storages as the file does (tied weights
 * point at the same floats), the index over them (safetensors.c) and the test of a MiniMind
 * weight name (minimind.c). Internal to the core, not public API. */
#ifndef ATTNLAB_PTH_H
#define ATTNLAB_PTH_H

#include "attnlab/io.h"

#include <stddef.h>
#include <stdint.h>

/* A .pth's state_dict: every storage element some tensor views, widened to float32 once
 * (views that overlap share them), and the tensors as entries pointing into that block. */
typedef struct {
    float *weights;         /* [n_weights] */
    int64_t n_weights;
    al_st_entry *entries;   /* [n_entries], in the state_dict's order; data inside weights */
    int n_entries;
    char *names;            /* the entries' names, NUL-terminated, one after another */
    const char *torch_dtype; /* "float16", "bfloat16", "float32" or "mixed": what the storages hold */
} al_pth_views;

/* Reads the archive bytes[size] (which the views do not point into). With minimind_names,
 * a key that is not one of MiniMind's weight names is refused before anything is converted.
 * The cost is counted before anything is widened: AL_ERR_LIMIT if the tensors would hold more
 * than AL_MAX_MODEL_BYTES of float32 numbers. Free with al_pth_views_free (also after a
 * failure, when every field is NULL). */
al_status al_pth_read_views(const uint8_t *bytes, size_t size, int minimind_names, al_pth_views *out,
                            al_error *err);
void al_pth_views_free(al_pth_views *v);

/* An index over float32 tensors held by the caller in data[n_floats] (entries' data inside
 * it; tensors may share floats, as tied weights do), with metadata pairs meta_kv[2 * n_meta].
 * The names and metadata are copied; data must outlive the index. Names must be unique. */
al_status al_st_index_f32(const al_st_entry *entries, int n, const char *const *meta_kv, int n_meta,
                          const float *data, int64_t n_floats, al_safetensors **out, al_error *err);

/* 1 if name[len] is a weight of MiniMind's state_dict (al_minimind_param_name's names, with a
 * layer index below AL_MAX_LAYERS and an expert index below AL_MAX_EXPERTS), else 0. */
int al_minimind_is_param_name(const uint8_t *name, size_t len);

#endif
