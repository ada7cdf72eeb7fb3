/* pth.h — what the .pth reader (pth.c) shares with the MiniMind loader (model_load.c): a
 * state_dict read from a source as an index of the file (each tensor's place and dtype), or as
 * float32 views that share their storages as the file does (tied weights point at the same
 * floats), and the test of a MiniMind weight name (minimind.c). Internal to the core, not
 * public API. */
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

/* Reads the archive src: its directory, its data.pkl whole, every storage it names checked
 * against its CRC-32 a chunk at a time; *out receives an index of the header kind
 * (al_st_parse_header's: data NULL, each tensor's offset in the file, its bytes in its
 * storage's dtype, F32, F16 or BF16), metadata "format": "pt" and "torch_dtype". With
 * minimind_names, a key that is not one of MiniMind's weight names is refused. AL_ERR_LIMIT if
 * the tensors would hold more than AL_MAX_MODEL_BYTES of float32 numbers. */
al_status al_pth_read_index(const al_byte_source *src, int minimind_names, al_safetensors **out, al_error *err);

/* Reads the archive bytes[size] (which the views do not point into). With minimind_names,
 * a key that is not one of MiniMind's weight names is refused before anything is converted.
 * The cost is counted before anything is widened: AL_ERR_LIMIT if the tensors would hold more
 * than AL_MAX_MODEL_BYTES of float32 numbers. Free with al_pth_views_free (also after a
 * failure, when every field is NULL). */
al_status al_pth_read_views(const uint8_t *bytes, size_t size, int minimind_names, al_pth_views *out,
                            al_error *err);
void al_pth_views_free(al_pth_views *v);
/* An index over v's float32 tensors (the names copied; v->weights must outlive it), with
 * metadata "format": "pt" and "torch_dtype" as v gives it. */
al_status al_pth_views_index(const al_pth_views *v, al_safetensors **out, al_error *err);

/* al_minimind_config_from_tensors of an index whose data is NULL (al_pth_read_index's): the
 * bytes it compares (an lm_head against the embedding) read from src. src NULL: st's data. */
int64_t al_minimind_config_from_source(const al_safetensors *st, const al_byte_source *src, const al_pth_flags *flags,
                                       char *buf, int64_t cap, al_error *err);

/* 1 if name[len] is a weight of MiniMind's state_dict (al_minimind_param_name's names, with a
 * layer index below AL_MAX_LAYERS and an expert index below AL_MAX_EXPERTS), else 0. */
int al_minimind_is_param_name(const uint8_t *name, size_t len);

#endif
