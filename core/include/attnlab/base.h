/* attnlab/base.h — what every part of the API shares: status codes, the error record filled by
 * calls that can fail, and the limits on sizes. Part of attnlab.h. */
#ifndef ATTNLAB_BASE_H
#define ATTNLAB_BASE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------------------------
 * Status codes and errors
 * ------------------------------------------------------------------------------------------ */

typedef enum {
    AL_OK = 0,
    AL_ERR_ARG,       /* a NULL pointer or an out-of-range argument */
    AL_ERR_CONFIG,    /* an impossible configuration (odd head_dim, heads % kv_heads != 0, ...) */
    AL_ERR_LIMIT,     /* sizes beyond what AttnLab agrees to allocate (see AL_MAX_*) */
    AL_ERR_NOMEM,     /* malloc failed */
    AL_ERR_SHAPE,     /* a tensor has the wrong shape for its role */
    AL_ERR_CAPACITY,  /* caller's buffer too small, or the KV cache is full */
    AL_ERR_FORMAT,    /* a malformed file (safetensors header, JSON, offsets, byte counts) */
    AL_ERR_DTYPE,     /* a tensor dtype AttnLab cannot use */
    AL_ERR_MISSING,   /* a required tensor is absent */
    AL_ERR_NONFINITE, /* NaN or infinity in an input or weight */
    AL_ERR_IO         /* reading or writing a file failed (CLI only) */
} al_status;

/* The file an error is in, for a call that reads more than one: the caller knows their paths,
 * the core only their roles (a layer's weights and its input; a model's weights file and the
 * config.json beside it). */
typedef enum { AL_FILE_NONE = 0, AL_FILE_WEIGHTS = 1, AL_FILE_INPUT = 2, AL_FILE_CONFIG = 3 } al_file_role;

/* A one-line, human-readable explanation filled in by calls that take `al_error *`
 * (may be NULL when the caller only wants the status). Always NUL-terminated. */
#define AL_ERROR_MSG_MAX 256
typedef struct {
    al_status status;
    char msg[AL_ERROR_MSG_MAX];
    int32_t file; /* an al_file_role: the file at fault where the call says (al_model_load_source), else AL_FILE_NONE */
} al_error;

/* Static, English name of a status ("shape mismatch", ...). Never NULL. */
const char *al_status_str(al_status s);

/* ------------------------------------------------------------------------------------------
 * Limits: anything larger is refused with AL_ERR_LIMIT before any allocation.
 * They keep one attention layer plus its cache within what a browser tab may use.
 * ------------------------------------------------------------------------------------------ */

#define AL_MAX_HIDDEN   16384
#define AL_MAX_HEADS    256
#define AL_MAX_HEAD_DIM 1024
#define AL_MAX_SEQ      65536
#define AL_MAX_BATCH    64
#define AL_MAX_BYTES    ((int64_t)1 << 30)  /* weights + cache + scratch of one layer: 1 GiB */
#define AL_MAX_VOCAB    (1 << 20)           /* tokens of a model or tokenizer */
#define AL_MAX_LAYERS   256                 /* blocks of a model */
#define AL_MAX_EXPERTS  256                 /* experts of a MoE layer */
#define AL_MAX_FFN      (1 << 17)           /* SwiGLU's inner width */
#define AL_MAX_MODEL_BYTES ((int64_t)3 << 30) /* a whole model: weights, packed copies, caches, scratch */

#ifdef __cplusplus
}
#endif
#endif /* ATTNLAB_BASE_H */
