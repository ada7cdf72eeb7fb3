/* lab/thumb.h — small pictures of attention matrices for the page's grids. Not public API. */
#ifndef ATTNLAB_LAB_THUMB_H
#define ATTNLAB_LAB_THUMB_H

#include <stdint.h>

/* out [size, size] from the top-left n × n of m (row stride ld): cell (i, j) covers queries
 * [i·n/size, (i+1)·n/size) and keys [j·n/size, (j+1)·n/size) and holds the largest weight among
 * them (max-pooling), so a thin diagonal or a single strong key stays visible. size <= n. */
void al_thumb_max_pool(const float *m, int64_t n, int64_t ld, int64_t size, float *out);

#endif
