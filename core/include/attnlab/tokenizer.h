/* attnlab/tokenizer.h — text to token ids and back: llama2.c's tokenizer.bin (score-ordered
 * merges, byte fallback) and, later, Hugging Face's tokenizer.json as MiniMind's. Part of
 * attnlab.h. */
#ifndef ATTNLAB_TOKENIZER_H
#define ATTNLAB_TOKENIZER_H

#include "attnlab/base.h"

#ifdef __cplusplus
extern "C" {
#endif

#ifdef __cplusplus
}
#endif
#endif /* ATTNLAB_TOKENIZER_H */
