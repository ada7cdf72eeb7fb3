/* attnlab.h — public API of the AttnLab core: the attention block of a MiniMind-style
 * decoder (embedding, RMSNorm, RoPE, GQA attention with QK-Norm, KV cache), computed the way
 * PyTorch computes it, plus the pieces needed to reproduce PyTorch's numbers bit for bit
 * (its random generator, its tensor printing) and to read/write safetensors files.
 *
 * Conventions: prefix `al_`; opaque handles with create/free (free(NULL) is a no-op); a status
 * code from everything that touches outside input, with an `al_error *err` that may be NULL and
 * otherwise receives a one-line message; caller-owned output buffers with their capacity; shapes
 * in comments in memory order; row-major float32 everywhere. Getters take const handles and
 * change nothing. Size and count queries (int64_t) return -1 when they fail (a NULL handle, an
 * invalid argument): 0 is a valid size. The native CLI and the WebAssembly page use this same
 * header; the layers below are one header each, from the bottom up (core/LAYERS). */
#ifndef ATTNLAB_H
#define ATTNLAB_H

#include "attnlab/base.h"      /* status codes, errors, limits */
#include "attnlab/torch.h"     /* PyTorch's random generator, reduction order and printing */
#include "attnlab/kernels.h"   /* the matrix kernels' public part: the row-wise softmax */
#include "attnlab/model.h"     /* the model's ops, RoPE, the attention layer, its KV cache, the decoder */
#include "attnlab/demos.h"     /* the tutorial scripts */
#include "attnlab/tokenizer.h" /* text to token ids and back, MiniMind's corpus */
#include "attnlab/io.h"        /* safetensors, .pth, config.json, a layer or a model from its files */
#include "attnlab/train.h"     /* the backward pass, AdamW, the training step, checkpoints */
#include "attnlab/app.h"       /* views for the page, the session, generation, the labs, benchmarks, the ABI */

#endif /* ATTNLAB_H */
