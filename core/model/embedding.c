/* embedding.c — token embedding lookup (nn.Embedding): each id selects one row of the table.
 * The lookup is a copy, so the looked-up vector equals the table row bit for bit. */
#include "attnlab/model.h"
#include "base/internal.h"

#include <string.h>

al_status al_embedding_forward(float *out, const int64_t *ids, const float *table, int64_t n,
                               int64_t vocab, int64_t dim) {
    if (!out || !ids || !table || n < 0 || vocab <= 0 || dim <= 0) return AL_ERR_ARG;
    for (int64_t i = 0; i < n; i++)
        if (ids[i] < 0 || ids[i] >= vocab) return AL_ERR_ARG;
    for (int64_t i = 0; i < n; i++)
        memcpy(out + i * dim, table + ids[i] * dim, (size_t)dim * sizeof(float));
    return AL_OK;
}
