/* attnlab/demos.h — the two tutorial scripts, printed as they print. Part of attnlab.h. */
#ifndef ATTNLAB_DEMOS_H
#define ATTNLAB_DEMOS_H

#include "attnlab/base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------------------------
 * The tutorial demos: every example of 02-basic-components-demo.py (AL_DEMO_BASIC) and
 * 03-attention-demo.py (AL_DEMO_ATTENTION), printed as those scripts print them.
 * ------------------------------------------------------------------------------------------ */

typedef enum { AL_DEMO_BASIC = 0, AL_DEMO_ATTENTION = 1 } al_demo;
typedef enum { AL_LANG_ZH = 0, AL_LANG_EN = 1 } al_lang;

/* seed < 0: each torch.manual_seed(...) keeps the script's value; else all use `seed`.
 * Writes the whole text to buf[cap]; returns its full length (size query with cap 0),
 * or 0 with *err set on failure. */
size_t al_demo_run(al_demo demo, al_lang lang, int64_t seed, char *buf, size_t cap,
                   al_error *err);

#ifdef __cplusplus
}
#endif
#endif /* ATTNLAB_DEMOS_H */
