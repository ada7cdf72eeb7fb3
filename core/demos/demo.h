/* demo.h — shared pieces of the tutorial demos (demo_basic.c, demo_attention.c,
 * demo_mlp_moe.c, demo_block.c, demo_generation.c): the
 * writer they print into (the text and where each section of it begins, and the numbers the
 * page's charts draw, kept as they are printed), the bilingual string picker, Python's
 * printing of booleans, the torch.allclose test the scripts print, and the scripts' code for
 * each example (demo_code.c). */
#ifndef ATTNLAB_DEMO_H
#define ATTNLAB_DEMO_H

#include "attnlab/demos.h"
#include "attnlab/torch.h"
#include "torch/text_tensor.h"

/* The Chinese or English form of a line; needs a variable `lang` in scope. */
#define L(zh, en) ((lang) == AL_LANG_EN ? (en) : (zh))

/* Sections of the longer demo: its 7 examples and the closing banner. */
#define AL_DEMO_MAX_SECTIONS 8

/* The numbers of chapters 04, 05 and 10 that the page's charts draw (demo_figures.c), kept by
 * the examples that print them, from the same values. */
typedef struct {
    /* 04, examples 3 and 6: the router's softmax, each token's top-k experts (torch.topk's
     * order), and their weights renormalised (example 6's sorted top-k, ids beside them) */
    float router[AL_DEMO_MOE_TOKENS * AL_DEMO_MOE_EXPERTS];
    int64_t chosen[AL_DEMO_MOE_TOKENS * AL_DEMO_MOE_TOP_K];
    int64_t renorm_ids[AL_DEMO_MOE_TOKENS * AL_DEMO_MOE_TOP_K];
    float renorm[AL_DEMO_MOE_TOKENS * AL_DEMO_MOE_TOP_K];
    /* 04, example 7: f_i, P_i and the auxiliary loss */
    float load[AL_DEMO_MOE_EXPERTS], prob_mean[AL_DEMO_MOE_EXPERTS], aux_loss;
    /* 05, example 2: the norm of the stream after 0 .. depth pre-norm and post-norm blocks */
    float pre_norm[AL_DEMO_BLOCK_POINTS], post_norm[AL_DEMO_BLOCK_POINTS];
    /* 05, example 6: input_ids, labels, −log p of each position's shifted target (0 where it
     * has none) and the loss */
    int64_t ids[AL_DEMO_LOSS_SEQ], labels[AL_DEMO_LOSS_SEQ];
    float nll[AL_DEMO_LOSS_SEQ], loss;
    /* 10, examples 1, 3, 4 and 5 in that order: al_demo_sampler_stages' rows */
    float gen_stages[4][AL_DEMO_GEN_STAGE_ROWS * AL_DEMO_GEN_VOCAB];
    /* 10, example 2: each temperature's distribution, highest probability and entropy */
    float temp_probs[AL_DEMO_GEN_TEMPS * AL_DEMO_GEN_VOCAB];
    float temp_top[AL_DEMO_GEN_TEMPS], temp_entropy[AL_DEMO_GEN_TEMPS];
    /* 10, example 6: the distribution of each draw and the token drawn */
    float draw_probs[AL_DEMO_GEN_DRAWS * AL_DEMO_GEN_VOCAB];
    int32_t drawn[AL_DEMO_GEN_DRAWS];
    /* 10, example 7: [batch, max_new] each sequence's token and finished flag per step; the
     * steps run */
    int32_t eos_next[AL_DEMO_GEN_BATCH * AL_DEMO_GEN_MAX_NEW];
    int32_t eos_finished[AL_DEMO_GEN_BATCH * AL_DEMO_GEN_MAX_NEW];
    int eos_steps;
} al_demo_figures;

/* What a demo prints into: the text, and where each section begins in it. Offsets are counted
 * whether or not the text fits its buffer (al_text keeps the full length). */
typedef struct {
    al_text text;
    al_demo_figures *fig; /* NULL, or what the charts draw, filled as the demo runs */
    int count; /* sections begun */
    struct {
        size_t start; /* the header's first "=" */
        size_t title; /* the title line */
        size_t title_end;
        size_t body;  /* just after the header */
        al_demo_panel panel;
    } at[AL_DEMO_MAX_SECTIONS];
} al_demo_out;

/* Begins a section: print("=" * 70), print(title), print("=" * 70), recording where. */
void al_demo_header(al_demo_out *d, al_demo_panel panel, const char *title);
/* Python's str(bool) */
const char *al_demo_bool(int value);
/* '通过' / '失败' (passed / failed) */
const char *al_demo_pass(al_lang lang, int passed);
/* torch.allclose(a, b, rtol=1e-5, atol): every |a − b| <= atol + rtol·|b|, in float32. */
int al_demo_allclose(const float *a, const float *b, int64_t n, float atol);

/* "<label>torch.Size([...])<comment>\n" */
void al_demo_shape(al_text *o, const char *label, const int64_t *shape, int ndim,
                   const char *comment);
/* Python's repr of a float (shortest digits that read back, at least one decimal: "0.0",
 * "-3.0", "0.7310585975646973"), for |v| in [1e-4, 1e16) or 0. */
void al_demo_py_float(al_text *o, double v);
/* Python's repr of [round(v, digits) for v in values]: "[0.3756, 0.312]". */
void al_demo_py_rounded(al_text *o, const float *values, int64_t n, int digits);
/* nn.Linear without bias under the reference BLAS (sgemm): every output a plain left-to-right
 * float32 dot product of its input row and weight row, each product rounded, then added. */
void al_demo_linear(float *y,       /* [n, out_dim] */
                    const float *x, /* [n, in_dim] */
                    const float *w, /* [out_dim, in_dim] */
                    int64_t n, int64_t in_dim, int64_t out_dim);
/* F.silu on the CPU: x / (1 + exp(-x)). */
float al_demo_silu(float x);

/* The code of section `section` (0-based) of the script in language `lang`, verbatim; "" for
 * the closing banner or a section the script does not have. */
const char *al_demo_code(al_demo demo, al_lang lang, int section);

/* Runs one demo into d (whose text and fig the caller has set up). */
al_status al_demo_write(al_demo demo, al_lang lang, int64_t seed, al_demo_out *d, al_error *err);

void al_demo_basic(al_demo_out *d, al_lang lang, int64_t seed, al_rng *rng);
al_status al_demo_attention(al_demo_out *d, al_lang lang, int64_t seed, al_rng *rng,
                            al_error *err);
al_status al_demo_mlp_moe(al_demo_out *d, al_lang lang, int64_t seed, al_rng *rng, al_error *err);
al_status al_demo_block(al_demo_out *d, al_lang lang, int64_t seed, al_rng *rng, al_error *err);
al_status al_demo_generation(al_demo_out *d, al_lang lang, int64_t seed, al_rng *rng,
                             al_error *err);

#endif
