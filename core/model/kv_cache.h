/* model/kv_cache.h — the KV cache's storage as the attention layer reads and writes it. Not
 * public API. */
#ifndef ATTNLAB_MODEL_KV_CACHE_H
#define ATTNLAB_MODEL_KV_CACHE_H

#include "kernels/gemm.h"

/* K is stored for the scores product as packed panels: for each (sequence, KV head), panels of
 * 16 tokens laid out [head_dim][16]; V as padded panels of 16 of its head_dim columns, laid
 * out [max_seq][16]. */
/* Floats a cache of that shape holds, K's and V's panels. */
int64_t al_kv_cache_floats(int64_t n_kv_heads, int64_t head_dim, int64_t max_batch, int64_t max_seq);
al_status al_kv_cache_check_append(const al_kv_cache *c, int64_t n_kv_heads, int64_t head_dim,
                                   int64_t batch, int64_t seq, al_error *err);
/* Stores token t of sequence b: k and v are [n_kv_heads, head_dim]. */
void al_kv_cache_store(al_kv_cache *c, int64_t b, int64_t t, const float *k, const float *v);
void al_kv_cache_commit(al_kv_cache *c, int64_t batch, int64_t seq);
/* Kᵀ of sequence b, KV head h as a GEMM operand (k = head_dim, n = tokens). */
al_bmat al_kv_cache_keys(const al_kv_cache *c, int64_t b, int64_t h);
/* V of sequence b, KV head h as a GEMM operand (k = tokens, n = head_dim). */
al_bmat al_kv_cache_values(const al_kv_cache *c, int64_t b, int64_t h);
/* Floats from KV head h's operand to KV head h + 1's, of one sequence: K's (which_v 0) or V's. */
int64_t al_kv_cache_head_step(const al_kv_cache *c, int which_v);
/* Packs k [tokens, n_kv_heads, head_dim] into the same panel layout (for the uncached pass):
 * panels for KV head h start at out + h·panels·16·head_dim, panels = ceil(tokens / 16). */
void al_pack_keys(float *out, const float *k, int64_t tokens, int64_t n_kv_heads, int64_t head_dim);

#endif
