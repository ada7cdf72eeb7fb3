/* demo.h — shared pieces of the two tutorial demos (demo_basic.c, demo_attention.c):
 * the bilingual string picker, the separator rule, Python's printing of booleans and the
 * torch.allclose test the scripts print. */
#ifndef ATTNLAB_DEMO_H
#define ATTNLAB_DEMO_H

#include "torch/text.h"

/* The Chinese or English form of a line; needs a variable `lang` in scope. */
#define L(zh, en) ((lang) == AL_LANG_EN ? (en) : (zh))

/* print("=" * 70) */
void al_demo_rule(al_text *o);
/* Python's str(bool) */
const char *al_demo_bool(int value);
/* '通过' / '失败' (passed / failed) */
const char *al_demo_pass(al_lang lang, int passed);
/* torch.allclose(a, b, rtol=1e-5, atol): every |a − b| <= atol + rtol·|b|, in float32. */
int al_demo_allclose(const float *a, const float *b, int64_t n, float atol);

void al_demo_basic(al_text *o, al_lang lang, int64_t seed, al_rng *rng);
al_status al_demo_attention(al_text *o, al_lang lang, int64_t seed, al_rng *rng, al_error *err);

#endif
