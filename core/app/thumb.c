/* thumb.c — max-pooled thumbnails of attention matrices (see thumb.h). */
#include "attnlab/app.h"
#include "app/thumb.h"

void al_thumb_max_pool(const float *m, int64_t n, int64_t ld, int64_t size, float *out) {
    for (int64_t i = 0; i < size; i++)
        for (int64_t j = 0; j < size; j++) {
            float most = 0.0f;
            for (int64_t q = i * n / size; q < (i + 1) * n / size; q++) {
                const float *row = m + q * ld;
                for (int64_t k = j * n / size; k < (j + 1) * n / size; k++)
                    if (row[k] > most) most = row[k];
            }
            out[i * size + j] = most;
        }
}
