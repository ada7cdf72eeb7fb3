/* attnlab/demos.h — the tutorial's demo scripts, printed as they print. Part of attnlab.h. */
#ifndef ATTNLAB_DEMOS_H
#define ATTNLAB_DEMOS_H

#include "attnlab/base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------------------------
 * The tutorial demos: every example of 02-basic-components-demo.py (AL_DEMO_BASIC),
 * 03-attention-demo.py (AL_DEMO_ATTENTION), 04-mlp-moe-demo.py (AL_DEMO_MLP_MOE),
 * 05-transformer-block-demo.py (AL_DEMO_BLOCK) and 10-generation-demo.py (AL_DEMO_GENERATION),
 * printed as those scripts print them (04, 05 and 10 with their wrong lines corrected). The code
 * excerpts of the sections are those of 02 and 03; 04's, 05's and 10's are the tutorial's and
 * not shipped (al_demo_sections gives them empty).
 * ------------------------------------------------------------------------------------------ */

typedef enum {
    AL_DEMO_BASIC = 0,
    AL_DEMO_ATTENTION = 1,
    AL_DEMO_MLP_MOE = 2,   /* 04-mlp-moe-demo.py */
    AL_DEMO_BLOCK = 3,     /* 05-transformer-block-demo.py */
    AL_DEMO_GENERATION = 4 /* 10-generation-demo.py */
} al_demo;
typedef enum { AL_LANG_ZH = 0, AL_LANG_EN = 1 } al_lang;

/* seed < 0: each torch.manual_seed(...) keeps the script's value; else all use `seed`.
 * Writes the whole text to buf[cap]; returns its full length (size query with cap 0),
 * or -1 with *err set on failure. */
int64_t al_demo_run(al_demo demo, al_lang lang, int64_t seed, char *buf, int64_t cap,
                   al_error *err);

/* ------------------------------------------------------------------------------------------
 * The demos as sections, for the page's walkthrough: one per example of the script, and one
 * for its closing banner, each with its title, the script's code for that example, what it
 * prints, and the panel of the page it belongs to (chosen here, never by position in JS).
 * ------------------------------------------------------------------------------------------ */

/* The panel of the page an example belongs to. */
typedef enum {
    AL_DEMO_PANEL_NONE = 0, /* the closing banner: no panel, not a step of the walkthrough */
    AL_DEMO_PANEL_MASK,     /* the causal mask */
    AL_DEMO_PANEL_ROPE,     /* RoPE: angles, one pair's rotation, the relative-distance curve */
    AL_DEMO_PANEL_ATTN,     /* attention weights: every head and the GQA map */
    AL_DEMO_PANEL_KV,       /* the KV cache's growth */
    AL_DEMO_PANEL_CHECKS,   /* the live checks */
    AL_DEMO_PANEL_TEXT,     /* no chart draws it (the embedding, RMSNorm): the listing is all */
    AL_DEMO_PANEL_FFN,      /* the feed-forward network: SwiGLU, MoE routing */
    AL_DEMO_PANEL_BLOCK,    /* the block and the whole model: norms, residuals, head, loss */
    AL_DEMO_PANEL_SAMPLER   /* the sampler's stages (the model view's next-token chart) */
} al_demo_panel;

/* One section, as byte ranges (offset, length) of the text al_demo_sections fills: the demo's
 * printed text first — al_demo_run's, byte for byte — then the code excerpts. The printed
 * ranges [start, start + len) of a demo's sections follow one another and cover its printed
 * text exactly, so their concatenation is what `attnlab demo` prints. Text is UTF-8. */
typedef struct {
    int32_t panel;       /* al_demo_panel */
    int64_t start;       /* the section's printed text: its "=" * 70 header, then its output */
    int64_t len;
    int64_t title;       /* the header's title line, without its newline */
    int64_t title_len;
    int64_t numbers;     /* what the example prints below its header, without the blank lines
                          * around it (empty for the closing banner) */
    int64_t numbers_len;
    int64_t code;        /* the example's code, verbatim from the script in this language (the
                          * lines after its header's three print calls, up to the next example;
                          * empty for the closing banner) */
    int64_t code_len;
} al_demo_section;

/* How many sections al_demo_sections gives for `demo`, or -1 for an unknown demo. */
int64_t al_demo_section_count(al_demo demo);

/* Runs the demo (seed as al_demo_run) and describes its sections.
 *   Size query: cap 0 (text may be NULL): returns the length of the text, NUL excluded.
 *   Fill: text[cap] with cap > that length, sections[max_sections] with max_sections >=
 *   al_demo_section_count(demo): writes the text (NUL-terminated) and every section, returns
 *   the text's length.
 * Returns -1 with *err set on failure: an unknown demo or language, a NULL buffer given a
 * capacity (AL_ERR_ARG), buffers too small (AL_ERR_CAPACITY). */
int64_t al_demo_sections(al_demo demo, al_lang lang, int64_t seed, al_demo_section *sections,
                         int64_t max_sections, char *text, int64_t cap, al_error *err);


/* ------------------------------------------------------------------------------------------
 * The numbers the page's charts of chapters 04, 05 and 10 draw, for a seed (as al_demo_run's:
 * < 0 keeps the scripts' own), taken from the same run that prints them: a chart of an
 * example shows exactly the numbers that example prints (at full precision where it rounds).
 * Each fills out[cap] (cap >= the shape given) and returns AL_OK, or a status with *err set:
 * a NULL out (AL_ERR_ARG), too small a cap (AL_ERR_CAPACITY).
 * ------------------------------------------------------------------------------------------ */

/* The sizes of the examples the charts draw: 04's router (6 tokens, 4 experts, top-2), 05's
 * stacks of 6 blocks and its 5-token loss; the most points of a curve; 10's vocabulary of 12
 * tokens, its 3 temperatures, the 8 draws of its whole sampler, its batch of 3 sequences and
 * their 8 new tokens at most, and the rows al_demo_sampler_stages gives per example. */
enum {
    AL_DEMO_MOE_TOKENS = 6,
    AL_DEMO_MOE_EXPERTS = 4,
    AL_DEMO_MOE_TOP_K = 2,
    AL_DEMO_BLOCK_DEPTH = 6,
    AL_DEMO_BLOCK_POINTS = AL_DEMO_BLOCK_DEPTH + 1, /* the stream before and after each block */
    AL_DEMO_LOSS_SEQ = 5,
    AL_DEMO_CURVE_MAX = 1001,
    AL_DEMO_GEN_VOCAB = 12,
    AL_DEMO_GEN_TEMPS = 3,
    AL_DEMO_GEN_DRAWS = 8,
    AL_DEMO_GEN_BATCH = 3,
    AL_DEMO_GEN_MAX_NEW = 8,
    AL_DEMO_GEN_STAGE_ROWS = 10
};

/* 04, example 2: out [3, n]: x at n evenly spaced points of [-3, 3] (both ends included),
 * F.silu(x) and F.relu(x) there; n in [2, AL_DEMO_CURVE_MAX]. With n = 6k + 1 the whole
 * numbers the example prints are among the points. */
al_status al_demo_ffn_curves(float *out, int64_t n, int64_t cap, al_error *err);

/* 04, examples 3 and 6: out [3, AL_DEMO_MOE_TOKENS, AL_DEMO_MOE_EXPERTS]: the router's
 * softmax for each token over the experts; 1 where the token's top-k chose the expert, else 0;
 * the chosen experts' weights renormalised to sum 1 (0 elsewhere). */
al_status al_demo_router(int64_t seed, float *out, int64_t cap, al_error *err);

/* 04, example 7: out [4, AL_DEMO_MOE_EXPERTS]: each expert's load f_i (the share of top-k
 * choices that went to it), its mean routing probability P_i, the balanced share 1/num_experts,
 * and the load-balancing loss (the same value in every column). */
al_status al_demo_expert_load(int64_t seed, float *out, int64_t cap, al_error *err);

/* 05, example 2: out [2, AL_DEMO_BLOCK_POINTS]: the norm of the residual stream (all of
 * the batch) after 0, 1, .. AL_DEMO_BLOCK_DEPTH pre-norm blocks, then post-norm blocks. */
al_status al_demo_block_stream(int64_t seed, float *out, int64_t cap, al_error *err);

/* 05, example 6: out [5, AL_DEMO_LOSS_SEQ], one column per position t: input_ids[t],
 * labels[t] (-100: ignored), the label position t is trained to predict after the shift
 * (labels[t + 1]; -100 where that label is ignored and at the last position, which predicts
 * nothing), −log p of that label (0 where there is none), and the loss, their mean (the same
 * value in every column). */
al_status al_demo_shifted_labels(int64_t seed, float *out, int64_t cap, al_error *err);

/* 10, example 1 (greedy), 3 (top-k 5), 4 (top-p 0.6) or 5 (repetition penalty 1.3; another
 * example is refused, AL_ERR_ARG): out [AL_DEMO_GEN_STAGE_ROWS, AL_DEMO_GEN_VOCAB], by id
 * unless said: the sampler's five stages as the example runs them (al_sampler_stages: raw
 * softmax, tempered, penalised, top-k, top-p); the logits; the logits after the repetition
 * penalty (the logits again where the example has none); the ids by decreasing logit
 * (torch.sort's order); in that order, the cumulative probability (torch.cumsum of the sorted
 * softmax, as example 4 prints it); and the example's marks, 1 or 0: example 1 the greedy
 * token, 3 and 4 the ids their filter keeps, 5 the ids already generated. */
al_status al_demo_sampler_stages(int64_t seed, int32_t example, float *out, int64_t cap,
                                 al_error *err);

/* 10, example 2: out [AL_DEMO_GEN_TEMPS, 4, AL_DEMO_GEN_VOCAB], for temperatures 0.5, 1 and 2:
 * softmax(logits / T) by id, then T, the highest probability and the entropy (each the same
 * value in every column). */
al_status al_demo_temperatures(int64_t seed, float *out, int64_t cap, al_error *err);

/* 10, example 6: out [2, AL_DEMO_GEN_DRAWS, AL_DEMO_GEN_VOCAB]: at each step of the whole
 * sampler, the distribution torch.multinomial draws from (its last stage, top-p's), and 1 at
 * the token drawn (else 0). */
al_status al_demo_draws(int64_t seed, float *out, int64_t cap, al_error *err);

/* 10, example 7: out [2, AL_DEMO_GEN_BATCH, AL_DEMO_GEN_MAX_NEW]: each sequence's new token at
 * each step, then 1 once it has finished (EOS drawn at that step or before), else 0; -1 in
 * both for the steps not run (the loop stops once every sequence has ended). */
al_status al_demo_eos(int64_t seed, float *out, int64_t cap, al_error *err);

#ifdef __cplusplus
}
#endif
#endif /* ATTNLAB_DEMOS_H */
