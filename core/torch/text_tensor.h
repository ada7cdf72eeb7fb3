/* torch/text_tensor.h — PyTorch's tensor and size reprs appended to a bounded text writer
 * (base/text.h), for the demos. Not public API. */
#ifndef ATTNLAB_TORCH_TEXT_TENSOR_H
#define ATTNLAB_TORCH_TEXT_TENSOR_H

#include "base/text.h"

/* Appends the PyTorch repr of a float32 tensor (suffix may be NULL). */
void al_text_tensor(al_text *t, const float *data, const int64_t *shape, int ndim,
                    const char *suffix);
/* Appends the repr of an int64 tensor. */
void al_text_int_tensor(al_text *t, const int64_t *data, const int64_t *shape, int ndim);
/* Appends "torch.Size([...])". */
void al_text_size(al_text *t, const int64_t *shape, int ndim);

#endif
