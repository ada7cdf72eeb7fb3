/* attnlab/app.h — the application layer, what the page, the benchmark and the CLI run on top
 * of the model, its files and its trainer: the quantities the page draws, a stepped session
 * with the tutorial's checks, the generation loop, the model and train labs, the benchmark,
 * and the description of the structs for bindings. Part of attnlab.h. */
#ifndef ATTNLAB_APP_H
#define ATTNLAB_APP_H

#include "attnlab/io.h"
#include "attnlab/tokenizer.h"
#include "attnlab/train.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------------------------
 * Teaching views: the quantities the page draws, computed here so the page does no maths.
 * ------------------------------------------------------------------------------------------ */

/* The causal mask of `seq` new queries over past + seq keys: 0 where query s may see key t
 * (t <= past + s), -inf elsewhere — masking only the last `seq` key columns, so a multi-token
 * step on top of a cache is right. */
void al_causal_mask(float *out /* [seq, past + seq] */, int64_t seq, int64_t past);

/* RoPE angles m · freq_i wrapped to (-π, π] (what the rotation actually does). */
al_status al_rope_angles_wrapped(float *angles /* [end, head_dim/2] */, int64_t end,
                                 int64_t head_dim, double base, al_error *err);

/* The 2-D point (x_i, x_{i+d/2}) of a vector after RoPE at positions 0..end-1, for pair i:
 * shows one pair turning at its own frequency. */
al_status al_rope_pair_trace(float *points /* [end, 2] */, const float *x /* [head_dim] */,
                             int64_t pair, int64_t end, int64_t head_dim, double base,
                             al_error *err);

/* dots[d] = <R(m) v, R(m + d) v> for d = 0..n-1 at a fixed m: the same vector placed at two
 * positions d apart. Equal for every m (relative-position invariance); decays with d. */
al_status al_rope_relative_dots(float *dots /* [n] */, const float *v /* [head_dim] */,
                                int64_t m, int64_t n, int64_t head_dim, double base,
                                al_error *err);

/* GQA's repeat_kv map: kv_head[h] = h / (n_heads / n_kv_heads) for each query head h.
 * AL_ERR_CONFIG if n_heads is not a multiple of n_kv_heads. */
al_status al_gqa_map(int32_t *kv_head /* [n_heads] */, int64_t n_heads, int64_t n_kv_heads,
                     al_error *err);

/* The KV head counts that GQA allows for n_heads query heads (its divisors, ascending).
 * Returns how many there are (writing at most cap of them), or -1 if n_heads is out of range
 * or out is NULL with cap > 0. */
int al_gqa_kv_choices(int32_t *out, int cap, int64_t n_heads);
/* Of those choices, the one nearest n_kv_heads (the smaller of two as near); -1 if n_heads is
 * out of range. */
int64_t al_gqa_kv_nearest(int64_t n_heads, int64_t n_kv_heads);

/* The largest head_dim that n_heads heads may have within a query width of `width` dimensions
 * (n_heads · head_dim <= width): even (RoPE turns dimensions in pairs) and at most
 * AL_MAX_HEAD_DIM. -1 if n_heads is outside [1, AL_MAX_HEADS] or the width holds no two
 * dimensions per head. */
int64_t al_attn_head_dim_most(int64_t n_heads, int64_t width);

/* Multiply-adds ×2 (FLOPs) of one attention call: n_query new tokens against n_keys keys —
 * projections 2·n_query·hidden·head_dim·(2·n_heads + 2·n_kv_heads), scores and weights·V
 * 4·n_heads·n_query·n_keys·head_dim (the full rectangle, as PyTorch computes it). A decode step
 * with the cache is n_query = 1, n_keys = n; recomputing without it is n_query = n_keys = n. */
int64_t al_attn_flops_full(const al_attn_hparams *hp, int64_t n_query, int64_t n_keys);

/* The FLOPs of the same call that a causal layer needs: the n_query queries are the last of the
 * n_keys positions, and query s (from 0) sees n_keys − n_query + s + 1 keys — projections as
 * above, scores and weights·V 4·n_heads·head_dim·Σ_s (n_keys − n_query + s + 1), which is
 * al_attn_flops_full less the masked triangle 4·n_heads·head_dim·n_query·(n_query − 1)/2 (the count
 * al_model_flops_causal makes per layer). The core's attention computes these (its blocks of
 * AL_ATTEND_QUERY_BLOCK queries add at most block − 1 key columns each); PyTorch's eager layer
 * multiplies the whole rectangle and masks it afterwards: al_attn_flops_full is what it multiplies,
 * this is what either needs. -1 where al_attn_flops_full is, or n_query > n_keys. */
int64_t al_attn_flops_causal(const al_attn_hparams *hp, int64_t n_query, int64_t n_keys);

/* One state of the KV cache while a sequence grows (batch 1, float32). */
typedef struct {
    int64_t len;            /* tokens in the cache */
    int64_t bytes;          /* K and V for this layer: 2 · len · n_kv_heads · head_dim · 4 */
    int64_t bytes_mha;      /* the same with n_kv_heads = n_heads (MHA) */
    int64_t bytes_mqa;      /* the same with n_kv_heads = 1 (MQA) */
    int64_t flops_cached;   /* the step that reached len, with the cache: the prefill (prompt
                             * queries over prompt keys), then one query over len keys */
    int64_t flops_uncached; /* the same step recomputing the whole sequence: len over len */
} al_kv_growth_row;

/* The KV cache's growth over a prefill of `prompt` tokens and `steps` one-token decode steps:
 * one row after the prefill (len = prompt), then one after each step (len = prompt + 1, ...,
 * prompt + steps), each by al_kv_cache_bytes_for and al_attn_flops_full. Writes at most cap rows;
 * returns how many there are (steps + 1: a size query with rows NULL and cap 0), or -1 with
 * *err set (hyper-parameters refused by al_attn_hparams_check, prompt < 1, steps < 0,
 * prompt + steps beyond AL_MAX_SEQ, rows NULL with cap > 0). */
int64_t al_kv_growth(const al_attn_hparams *hp, int64_t prompt, int64_t steps,
                     al_kv_growth_row *rows, int64_t cap, al_error *err);

/* ------------------------------------------------------------------------------------------
 * Session: one layer, one sequence, stepped through prefill and decode — what the page drives.
 * Weights and tokens are drawn as the tutorial's example 6 draws them: torch.manual_seed(seed),
 * SimpleAttention init, randn(1, prompt_len, hidden), then randn(1, 1, hidden) per step.
 * ------------------------------------------------------------------------------------------ */

typedef struct al_session al_session;

typedef struct {
    al_attn_hparams hp;   /* the layer */
    int64_t seed;         /* torch.manual_seed value, >= 0 */
    int64_t prompt_len;   /* tokens of the prefill, >= 1 */
    int64_t decode_steps; /* one-token steps after it, >= 0 */
} al_session_config;

al_status al_session_create(const al_session_config *cfg, al_session **out, al_error *err);
void al_session_free(al_session *s);
const al_attn_hparams *al_session_hparams(const al_session *s); /* NULL if s is NULL */

/* Runs the prefill (if not done yet) / the next decode step. AL_ERR_CAPACITY when all
 * decode_steps have run. */
al_status al_session_prefill(al_session *s, al_error *err);
al_status al_session_step(al_session *s, al_error *err);
void al_session_reset(al_session *s); /* back to before the prefill, same weights and tokens */

/* Runs the prefill if needed, then the decode steps up to `len` tokens (prompt_len <= len <=
 * total, not fewer than have run) in as few calls as possible: every output, weight and cache
 * entry is bit for bit what that many al_session_step calls give (tests/test_core.c checks). */
al_status al_session_run_to(al_session *s, int64_t len, al_error *err);

int64_t al_session_len(const al_session *s);   /* tokens processed = cache length; -1 if NULL */
int64_t al_session_total(const al_session *s); /* prompt_len + decode_steps; -1 if NULL */

/* Outputs of the tokens processed so far, as computed with the cache: [len, hidden]. */
al_status al_session_outputs(const al_session *s, float *out, int64_t cap, al_error *err);

/* Attention weights of every query processed so far for one head, as a square
 * [len, len] matrix (query row q over keys 0..len-1; masked cells are 0). */
al_status al_session_attention(const al_session *s, int64_t head, float *out, int64_t cap,
                               al_error *err);

/* A small picture of one head's weights for the page's grid of heads: [size, size] with
 * size = min(len, max_size) (al_session_thumb_size, -1 for a NULL session or max_size < 1),
 * each cell the largest weight among the queries and keys it covers (max-pooling), so a thin
 * pattern stays visible. */
int64_t al_session_thumb_size(const al_session *s, int64_t max_size);
al_status al_session_attention_thumb(const al_session *s, int64_t head, int64_t max_size, float *out,
                                     int64_t cap, al_error *err);

/* The mask actually applied to every processed query: [len, len], 0 or -inf. Prefill rows
 * have the causal triangle; a decode row sees all cached keys. */
al_status al_session_mask(const al_session *s, float *out, int64_t cap, al_error *err);

/* The RoPE relative-distance curve of the tutorial's own test vector (03-attention-demo.py,
 * example 3): v_test = randn(1, 1, n_kv_heads, head_dim), drawn as the script draws it, for
 * this session's layer and seed — torch.manual_seed(seed), SimpleAttention init, example 1's
 * x = randn(2, 5, hidden), example 3's k_raw = randn(1, 2, n_kv_heads, head_dim), then v_test —
 * placed at positions m and m + d, rotated as the script rotates it (a cos/sin table of
 * m + n rows, computed whole), and multiplied and summed as (v0 * v1).sum() is:
 *   dots[d] = Σ_{kv head, i} (R(m) v_test)[i] · (R(m + d) v_test)[i]   for d = 0..n-1.
 * At the script's layer (hidden 16, 4 heads, 2 KV heads, head_dim 8, base 10000), dots[1] is
 * the <v(0), v(1)> the script prints for m = 0, and its <v(1), v(2)> for m = 1. */
al_status al_session_rope_relative(const al_session *s, int64_t m, float *dots /* [n] */,
                                   int64_t n, al_error *err);

/* The checks of the tutorial run on the session's current state. */
typedef enum {
    AL_CHECK_SHAPES = 0,     /* cache length, batch and bytes, and each weight's size, as the
                              * hyper-parameters imply (value: mismatches; limit 0) */
    AL_CHECK_REPEAT_KV,      /* the newest 4 queries' outputs against an explicit repeat_kv path
                              * (K/V copied per query head, plain MHA): max |diff| / max(1, |out|) */
    AL_CHECK_ROPE_NORM,      /* |‖R(m)k‖ − ‖k‖| / max(1, ‖k‖), max over cached keys */
    AL_CHECK_ROPE_RELATIVE,  /* |<R(0)v,R(1)v> − <R(1)v,R(2)v>| / max(1, |<R(0)v,R(1)v>|) */
    AL_CHECK_MASK_ZERO,      /* largest weight on a masked cell (limit exactly 0) */
    AL_CHECK_ROWS_SUM,       /* max |Σ weights − 1| over rows */
    AL_CHECK_CACHE_DIFF,     /* max |cached − uncached output| (bit-identical: limit exactly 0) */
    AL_CHECK_COUNT
} al_check_id;

typedef struct {
    int32_t id;       /* al_check_id */
    double value;     /* the measured number */
    double threshold; /* passes when value <= threshold */
    int32_t passed;   /* 1 or 0 */
} al_check;

/* Fills checks[AL_CHECK_COUNT]. Needs at least the prefill. */
al_status al_session_verify(al_session *s, al_check *checks, al_error *err);

/* ------------------------------------------------------------------------------------------
 * Benchmark: the core alone on random (PyTorch-initialised) weights, timed with a monotonic
 * clock: median of repeated runs after a warm-up. The CLI's `bench` and the WASM build use it.
 * ------------------------------------------------------------------------------------------ */

typedef struct {
    al_attn_hparams hp; /* the layer (QK-Norm and eps as given) */
    int64_t seq;       /* prefill length to time (0: skip) */
    int64_t decode_at; /* cache length before the timed decode step (0: skip) */
    int64_t repeats;   /* timed runs of each (>= 1); a warm-up run comes first */
    int64_t seed;
} al_bench_config;

/* The settings a caller starts from: the tutorial's layer (al_attn_hparams_default), nothing
 * timed yet (seq and decode_at 0), 5 timed runs of each, seed 0. */
void al_bench_config_default(al_bench_config *b);

typedef struct {
    double prefill_ms;     /* median time of one prefill of seq tokens (no cache) */
    double decode_ms;      /* median time of one decode step against decode_at cached tokens */
    double prefill_gflops; /* al_attn_flops_causal(cfg, seq, seq) / prefill time: the work done */
    double decode_recompute_ms; /* the same step by recomputing decode_at + 1 tokens, no cache */
} al_bench_result;

al_status al_bench_run(const al_bench_config *cfg, al_bench_result *out, al_error *err);

/* The whole model timed: a prefill of `prompt` tokens (logits of the last), then `decode`
 * one-token steps with their logits; medians of `repeats` runs after one warm-up. The memory
 * read speed behind the bandwidth bound is measured over a buffer of read_bytes (0: 1 GiB;
 * else 1 MiB to 16 GiB), which must be well past the last-level cache to measure memory
 * (the CLI sizes it from the cache's size); halved until it can be allocated. */
typedef struct {
    double prefill_ms;           /* the prefill */
    double decode_ms;            /* one decode step */
    double prefill_tokens_per_s;
    double decode_tokens_per_s;
    int64_t weight_bytes_per_token;      /* weights a decode step reads (see bench.c) */
    double read_gb_per_s;                /* memory read speed: the fastest of 5 passes over a buffer
                                          * of read_buffer_bytes, with the widest loads */
    int64_t read_buffer_bytes;           /* that buffer (read_bytes asked, or less if refused) */
    int32_t read_lanes;                  /* float lanes of one load: 16 AVX-512, 8 AVX2, 4 SSE2 */
    int32_t fma_lanes;                   /* float lanes of fma_peak_gflops's multiply-adds */
    double bandwidth_bound_tokens_per_s; /* read_gb_per_s / weight_bytes_per_token */
    float read_checksum;                 /* the sum read (so the reads are not optimised away) */
    int64_t prefill_flops;               /* al_model_flops_causal of the prefill (last token's logits) */
    double fma_peak_gflops;              /* the machine's measured fused multiply-add ceiling */
    double compute_bound_prefill_tokens_per_s; /* prompt tokens at that ceiling */
} al_model_bench_result;

al_status al_model_bench_run(al_model *m, int64_t prompt, int64_t decode, int64_t repeats, int64_t read_bytes,
                             al_model_bench_result *out, al_error *err);

/* The training step timed (forward with labels, backward, clipping, AdamW) on a model of shape
 * hp, batch × seq tokens: the median of `steps` steps after two warm-up steps, in *step_ms. */
al_status al_train_bench_run(const al_model_hparams *hp, int64_t batch, int64_t seq, int64_t steps, double *step_ms,
                             al_error *err);

/* The matrix kernel alone, and the ceiling it runs under. al_gemm_bench_run: C[m, n] = A[m, k]
 * · Wᵀ, W [n, k] packed as the model packs its weights (a projection of m tokens), the median
 * of `repeats` runs after a warm-up, in GFLOP/s (2·m·n·k per run). al_bench_fma_peak_gflops:
 * independent multiply-adds on the vectors the kernel uses, no memory traffic (AVX-512 or AVX2
 * fused natively; SIMD128's multiply then add in WebAssembly), the best of five ~20 ms runs;
 * the lanes used in *lanes (may be NULL). */
al_status al_gemm_bench_run(int64_t m, int64_t n, int64_t k, int64_t repeats, double *gflops, al_error *err);
double al_bench_fma_peak_gflops(int32_t *lanes);


/* ------------------------------------------------------------------------------------------
 * The binary interface for bindings: every struct a binding fills or reads (each field's name,
 * byte offset, type and size, and the struct's size), every enum a binding passes or receives, and
 * the limits — as one JSON text generated from one list in C (core/app/abi_list.h), so the
 * WebAssembly page's JavaScript never hard-codes a layout, an enum value or a limit.
 *   {"structs": {"error": {"ctype": "al_error", "size": 264,
 *                          "fields": {"status": [0, "i32", 4], "msg": [4, "char", 256], "file": [260, "i32", 4]}}, ...},
 *    "enums": {"status": {"ok": 0, "arg": 1, ...}, "check": {"shapes": 0, ...}, ...},
 *    "limits": {"AL_MAX_HIDDEN": 16384, ...}}
 * Writes it to buf[cap] (NUL-terminated, truncated if cap is short) and returns its full
 * length, or -1 if buf is NULL with cap > 0.
 * ------------------------------------------------------------------------------------------ */

int64_t al_abi_json(char *buf, int64_t cap);

/* Bytes allocated on the WebAssembly heap now, for the binding's leak checks (its allocator's
 * mallinfo, read here so no binding knows that struct's layout); -1 in a native build, whose
 * leak checks are AddressSanitizer's. */
int64_t al_heap_in_use(void);

/* ------------------------------------------------------------------------------------------
 * Generation: the one loop that `attnlab generate` and the model lab run (llama2.c's generate).
 * A prompt's ids, then steps: each runs the tokens the model has not seen yet (the whole prompt
 * first, then the token drawn last, one at a time with the KV caches), draws the next token with
 * MiniMind's sampler (al_sample) from the last position's logits, and ends the text at the stop
 * token (al_model_file_stop_token: llama2.c's BOS, MiniMind's eos; not appended), at max_new new
 * tokens or at the context's end. A drawn token waits until the next step (or al_gen_forward)
 * to go through the model, so the last one of a text is never run for nothing.
 * ------------------------------------------------------------------------------------------ */

typedef struct al_generator al_generator;

typedef struct {
    al_sampler_params sampler; /* MiniMind's settings (al_sampler_params_default) */
    int64_t max_new;           /* new tokens at most per prompt; -1: no limit but the context */
    int ignore_eos;            /* 1: the stop token is appended like any other and the text goes on */
} al_gen_options;

al_gen_options al_gen_options_default(void); /* MiniMind's sampler, no limit, the stop token kept */

/* Why the next step would draw nothing (al_gen_finished): AL_GEN_GOING if it would draw. */
typedef enum {
    AL_GEN_GOING,      /* a step draws a token */
    AL_GEN_NO_PROMPT,  /* no prompt yet (or the last forward failed) */
    AL_GEN_STOP_TOKEN, /* the last step drew the stop token: the text has ended */
    AL_GEN_LENGTH,     /* max_new tokens drawn since the prompt */
    AL_GEN_CONTEXT     /* the context is full */
} al_gen_finish;

/* A prompt's text as generation reads it: encoded with tok, BOS first where the tokenizer has
 * one (llama2.c's, as run.c; a tokenizer.json has none). As al_tok_encode: ids NULL with cap 0
 * is a size query; the count, or -1 with *err set. For a caller that needs the count before
 * there is a model (to size its context) or a generator. */
int64_t al_gen_encode_prompt(const al_tokenizer *tok, const char *text, size_t len, int32_t *ids, int64_t cap,
                             al_error *err);

/* A generator over `model` (borrowed, its context the generator's; its caches are the
 * generator's to fill and empty until al_gen_free) and `tok` (borrowed, may be NULL: only
 * checked to have the model's vocabulary), ending texts at kind's stop token. */
al_status al_gen_create(al_model *model, const al_tokenizer *tok, al_model_file_kind kind, const al_gen_options *opt,
                        al_generator **out, al_error *err);
void al_gen_free(al_generator *g);

/* The options from the next step on (the sampler, ignore_eos) or the next prompt (max_new
 * counts from it). Refused (nothing changed) if max_new is out of range; the sampler's settings
 * are checked by the step that uses them. */
al_status al_gen_set_options(al_generator *g, const al_gen_options *opt, al_error *err);
al_gen_options al_gen_get_options(const al_generator *g); /* the defaults for a NULL g */

/* The forward pass the generator runs, for a caller that keeps what each pass shows (the model
 * lab: attention, routing, residual norms): ids [n] at positions past .. past+n-1 through the
 * model, with every layer's cache, and the last one's logits into logits [vocab]. NULL (the
 * default): al_model_forward alone. */
typedef al_status (*al_gen_forward_fn)(void *user, const int32_t *ids, int64_t past, int64_t n, float *logits,
                                       al_error *err);
void al_gen_set_forward(al_generator *g, al_gen_forward_fn fn, void *user);

/* A new prompt (the tokens before forgotten, the caches emptied), the sampler's generator seeded
 * with `seed`. The count, or -1 with *err set and the tokens before kept: no tokens, more than
 * the context (AL_ERR_LIMIT), an id outside the vocabulary. */
int64_t al_gen_prompt(al_generator *g, const int32_t *ids, int64_t n, uint64_t seed, al_error *err);

/* The tokens not yet through the model (the prompt, or the last drawn) run now; nothing if none.
 * With none through it yet, the model's caches are emptied first (another caller may have used
 * them since). On failure the generator is back to no prompt. */
al_status al_gen_forward(al_generator *g, al_error *err);

/* One step: the pending tokens through the model, the next token drawn (the stages kept for
 * al_gen_stages), appended unless it is the stop token (then the text ends: al_gen_finished).
 * Returns the token drawn, or -1 with *err set: al_gen_finished is not AL_GEN_GOING (the message
 * says why), bad sampler settings or a failed forward. */
int64_t al_gen_step(al_generator *g, al_error *err);
al_gen_finish al_gen_finished(const al_generator *g); /* AL_GEN_NO_PROMPT for a NULL g */
/* A text that ended at the stop token goes on past it: the stop token appended (pending, as
 * with ignore_eos), so the next step draws again. Refused unless al_gen_finished is
 * AL_GEN_STOP_TOKEN, or when the context is full. */
al_status al_gen_resume(al_generator *g, al_error *err);

/* Empties the caches and leaves every token so far pending: the next forward runs them again
 * (the same numbers: a pass with the cache equals one without it). Empty again: al_gen_reset. */
void al_gen_rewind(al_generator *g);
void al_gen_reset(al_generator *g);
/* into (over the same model) takes from's tokens, options and random numbers, so that its steps
 * draw what from's would, and the model's caches with from's tokens in them (what from had not
 * run yet, into's next forward runs); from runs its tokens again at its next forward. */
al_status al_gen_copy(al_generator *into, al_generator *from, al_error *err);

int64_t al_gen_len(const al_generator *g);        /* tokens so far, prompt included; -1 for NULL */
int64_t al_gen_prompt_len(const al_generator *g);
int64_t al_gen_generated(const al_generator *g);  /* tokens appended since the prompt */
int64_t al_gen_context(const al_generator *g);
int64_t al_gen_last(const al_generator *g);       /* the last step's draw, -1 since the prompt */
int32_t al_gen_stop_token(const al_generator *g);
/* Views into the generator, valid until its next call that changes it (NULL for a NULL g):
 * the ids so far [len]; the logits [vocab] the next draw reads (after a step, before the next
 * forward, those the step drew from); the last draw's stages [AL_SAMPLER_STAGES, vocab], as
 * al_sample leaves them (at temperature 0 only the penalised logits, in the first row). */
const int32_t *al_gen_ids(const al_generator *g);
const float *al_gen_logits(const al_generator *g);
const float *al_gen_stages(const al_generator *g);

/* ------------------------------------------------------------------------------------------
 * The model lab: what the page's model view shows of a real model. A model (any file
 * al_model_load reads) and its tokenizer; a prompt, then one generated token per step by the
 * generator above (the same tokens as `attnlab generate` with the same settings and seed);
 * every layer's attention over all tokens so far, MoE routing, the residual stream's norms, the
 * sampler's stages at the last step, the KV cache's cost, and each head's role scores. The
 * stores for AL_LAB_MAX_CONTEXT tokens at most are allocated at create; nothing after.
 * ------------------------------------------------------------------------------------------ */

typedef struct al_model_lab al_model_lab;

#define AL_LAB_DEFAULT_CONTEXT 512
#define AL_LAB_MAX_CONTEXT 1024

/* Head roles, in this order per layer and head (al_model_lab_roles). */
typedef enum { AL_LAB_ROLE_PREVIOUS, AL_LAB_ROLE_FIRST, AL_LAB_ROLE_LOCAL, AL_LAB_ROLE_INDUCTION, AL_LAB_ROLES } al_lab_role;

/* Bytes a lab over a model of this shape with `context` tokens keeps besides the model; -1 if
 * out of range. */
int64_t al_model_lab_bytes_needed(const al_model_hparams *hp, int64_t context);

/* model: a llama2.c .bin, a model.safetensors (then config: its config.json) or a .pth;
 * tokenizer: tokenizer.bin (llama2.c) or tokenizer.json (MiniMind), whose vocabulary must be
 * the model's; kind: what the file is said to be (its name: .bin, .safetensors, .pth), or
 * AL_MODEL_FILE_UNKNOWN to go by its bytes (al_model_file_detect). context: tokens kept (0:
 * AL_LAB_DEFAULT_CONTEXT), at most the model's own. The
 * bytes are not kept. Every problem is an error naming it; *out stays NULL. */
al_status al_model_lab_create(const uint8_t *model, size_t model_size, al_model_file_kind kind, const uint8_t *config,
                              size_t config_size, const uint8_t *tokenizer, size_t tokenizer_size, int64_t context,
                              al_model_lab **out, al_error *err);
void al_model_lab_free(al_model_lab *lab);

const al_model_hparams *al_model_lab_hparams(const al_model_lab *lab); /* NULL if lab is NULL */
al_model_file_kind al_model_lab_kind(const al_model_lab *lab);
int64_t al_model_lab_context(const al_model_lab *lab);
/* The threads the lab's model computes on (al_model_set_threads: the same numbers on any). */
al_status al_model_lab_set_threads(al_model_lab *lab, int64_t threads, al_error *err);
int64_t al_model_lab_threads(const al_model_lab *lab); /* -1 if lab is NULL */
int64_t al_model_lab_len(const al_model_lab *lab);        /* tokens so far, prompt included */
int64_t al_model_lab_prompt_len(const al_model_lab *lab);
int al_model_lab_finished(const al_model_lab *lab);       /* 1 once a step chose the stop token */
al_gen_finish al_model_lab_finish(const al_model_lab *lab); /* why a step would draw nothing (al_gen_finished) */
int64_t al_model_lab_chosen(const al_model_lab *lab);     /* the last step's token, -1 before any */

/* A new prompt (everything before forgotten): text encoded as `attnlab generate --prompt`
 * encodes it (BOS first where the tokenizer has one), or ids given; run through the model with
 * every capture kept; the sampler's generator seeded with `seed`. The prompt's token count, or
 * -1 with *err set (no tokens, more than the context, an id outside the vocabulary). */
int64_t al_model_lab_prompt(al_model_lab *lab, const char *text, size_t len, uint64_t seed, al_error *err);
int64_t al_model_lab_prompt_ids(al_model_lab *lab, const int32_t *ids, int64_t n, uint64_t seed, al_error *err);

/* One step: the next token drawn by MiniMind's sampler with `p` from the last logits (the
 * stages kept for al_model_lab_stages; at temperature 0 the raw softmax, then one-hot on the
 * token chosen, as al_model_lab_pending shows them before the step), appended
 * and run through the model. Returns the token; the stop token (llama2.c: BOS, MiniMind: eos)
 * is returned but not appended, and ends the text (unless al_model_lab_set_ignore_eos). -1
 * with *err set: no prompt, the text ended, the context full, bad sampler settings. */
int64_t al_model_lab_step(al_model_lab *lab, const al_sampler_params *p, al_error *err);

/* On: the stop token is appended like any other token and the text goes on past it (`attnlab
 * generate --ignore-eos`), from the next step. Off by default. */
void al_model_lab_set_ignore_eos(al_model_lab *lab, int on);
/* The text that ended at the stop token goes on past it (al_gen_resume): the stop token
 * appended and run through the model, as a run with ignore_eos on would have. */
al_status al_model_lab_resume(al_model_lab *lab, al_error *err);

/* Charts off: steps run the model alone (no attention, routing or norms kept, no stages drawn
 * at temperature 0), for speed. Turning them on again runs every token so far once more with
 * the captures, so the stores hold every step (the same numbers). On by default. */
al_status al_model_lab_set_charts(al_model_lab *lab, int on, al_error *err);

/* Ids so far into out[cap]; returns how many there are (-1 for a NULL lab). */
int64_t al_model_lab_ids(const al_model_lab *lab, int32_t *out, int64_t cap);
/* Token i's text as the streaming decoder shows it (whole characters; empty for a token that
 * holds only part of one, whose character then comes with the token completing it), or with
 * i = -1 the whole text so far; written NUL-terminated into out[cap] (truncated), its full
 * length returned (out NULL and cap 0: a size query); -1 with *err set for i out of range. */
int64_t al_model_lab_token_text(const al_model_lab *lab, int64_t i, char *out, int64_t cap, al_error *err);
/* The bytes token i stands for where it stands (al_tok_decode), and any id's piece: written to
 * out[cap] (truncated), their length returned, -1 with *err set if out of range. */
int64_t al_model_lab_token_bytes(const al_model_lab *lab, int64_t i, uint8_t *out, int64_t cap, al_error *err);
int64_t al_model_lab_piece(const al_model_lab *lab, int32_t id, uint8_t *out, int64_t cap, al_error *err);

/* One layer's head: [len, len] weights, row q over keys 0..len-1 (0 past q). */
al_status al_model_lab_attention(const al_model_lab *lab, int64_t layer, int64_t head, float *out, int64_t cap,
                                 al_error *err);
/* The causal mask every query so far was computed with: [len, len], 0 where query q sees key
 * k (k <= q), -inf where it does not. */
al_status al_model_lab_mask(const al_model_lab *lab, float *out, int64_t cap, al_error *err);
/* Every layer's and head's weights as [n_layers, n_heads, size, size] max-pooled thumbnails,
 * size = min(len, max_size) (al_model_lab_thumb_size; -1 for a NULL lab or max_size < 1). */
int64_t al_model_lab_thumb_size(const al_model_lab *lab, int64_t max_size);
al_status al_model_lab_thumbs(const al_model_lab *lab, int64_t max_size, float *out, int64_t cap, al_error *err);

/* The last step's distributions [AL_SAMPLER_STAGES, vocab] (al_sampler_stages' rows: raw,
 * after temperature, after the repetition penalty, after top-k, after top-p); zeros before a
 * step. */
al_status al_model_lab_stages(const al_model_lab *lab, float *out, int64_t cap, al_error *err);
/* The ids the next-token chart shows: the `count` most likely after the repetition penalty (at
 * temperature 1 for a greedy draw; ties by id), the chosen one put last if it is not among them.
 * Returns how many (<= count). */
int64_t al_model_lab_top_ids(const al_model_lab *lab, int64_t count, int32_t *out, al_error *err);
/* The next draw's distributions with the settings `p`, computed without drawing (no random
 * number used: the tokens a seed gives stay the same): stages [AL_SAMPLER_STAGES, vocab] from
 * the logits the next step reads, over the ids it will see; at temperature 0 the stages after
 * the first are one-hot on greedy's choice. top[count]: the ids to show, the `count` most likely
 * after the repetition penalty at temperature 1 (the order every temperature keeps; ties by id).
 * Returns how many ids were written; 0 with the stages all 0 when no step would draw (no
 * prompt, the text ended, the context full); -1 with *err set (bad settings, count < 1). */
int64_t al_model_lab_pending(const al_model_lab *lab, const al_sampler_params *p, float *stages, int64_t cap,
                             int32_t *top, int64_t count, al_error *err);

/* Each head's role scores [n_layers, n_heads, AL_LAB_ROLES], measured at create on BOS (where
 * the tokenizer has one) and 24 random ids repeated once: the mean weight on the previous
 * token, on the first token, on the 4 keys up to the query itself, and (second copy only) on
 * the token after the query's first occurrence (induction). */
al_status al_model_lab_roles(const al_model_lab *lab, float *out, int64_t cap, al_error *err);
/* The heads ranked by one role's score, strongest first (ties: the lower layer, then head):
 * heads[n_layers * n_heads] as layer * n_heads + head. Returns n_layers * n_heads, -1 with *err
 * set (role out of range, cap short). */
int64_t al_model_lab_role_ranking(const al_model_lab *lab, al_lab_role role, int32_t *heads, int64_t cap,
                                  al_error *err);
/* The score above which a head clearly has a role (0.5: more than half its weight where the
 * role puts it). */
double al_lab_role_threshold(void);
/* A role's ideal pattern, for drawing: the attention [T, T] (row q over keys, rows summing to 1,
 * none past q) of a head that does exactly what the role measures, on a probe of BOS and R ids
 * repeated once (T = al_lab_role_ideal_size(R) = 1 + 2R): the previous token (the first query
 * itself), the first token, the 4 keys up to the query shared equally, or (induction) from the
 * second copy the token after the first occurrence, the first token before it. R in [2, 24]. */
int64_t al_lab_role_ideal_size(int64_t repeat);
al_status al_lab_role_ideal(al_lab_role role, int64_t repeat, float *out, int64_t cap, al_error *err);

/* A fingerprint of a file's bytes (their CRC-32, as zip computes it), with which the page tells a
 * shipped model among the learner's files; -1 for NULL data with a size. */
int64_t al_file_fingerprint(const uint8_t *data, size_t size);

/* MoE routing of every token so far in one layer: ids and weights [len, top_k]; returns len,
 * -1 with *err set (no experts, layer out of range, cap short). */
int64_t al_model_lab_routing(const al_model_lab *lab, int64_t layer, int32_t *ids, float *weights, int64_t cap,
                             al_error *err);
/* ‖x‖₂ of every token before layer 0 and after each layer: [n_layers + 1, len]. */
al_status al_model_lab_resid_norms(const al_model_lab *lab, float *out, int64_t cap, al_error *err);
/* The rows of al_model_lab_resid_norms: n_layers + 1 (-1 if lab is NULL). */
int64_t al_model_lab_resid_points(const al_model_lab *lab);

/* The experiments (model.h's, on the lab's model) for the page's Experiments panel.
 * al_model_lab_set_ablation: those heads (layer, head) switched off (n 0: none) for every
 * forward from now on; the tokens so far are run again at once, so that every chart, the next
 * draw's logits and al_model_lab_pending show the ablated model. Refused (nothing changed): a
 * layer or head out of range. al_model_lab_ablation: the heads off, [cap, 2]; returns their
 * count (-1 for NULL). */
al_status al_model_lab_set_ablation(al_model_lab *lab, const int32_t *heads, int64_t n, al_error *err);
int64_t al_model_lab_ablation(const al_model_lab *lab, int32_t *heads, int64_t cap);
/* The logit lens over the tokens so far: top [n_layers + 1, len] each row's most likely token,
 * prob [n_layers + 1, len] its probability (cap: each array's count). */
al_status al_model_lab_lens(al_model_lab *lab, int32_t *top, float *prob, int64_t cap, al_error *err);
/* Direct logit attribution of token `target` over the tokens so far: out
 * [al_model_lab_dla_rows, len] as al_model_dla's parts (the heads [n_layers · n_heads], the
 * embedding, each block's FFN). */
int64_t al_model_lab_dla_rows(const al_model_lab *lab);
al_status al_model_lab_dla(al_model_lab *lab, int32_t target, float *out, int64_t cap, al_error *err);
/* Text to ids with the lab's tokenizer as a prompt is encoded (al_gen_encode_prompt), for the
 * two prompts of a patch: the count (ids written up to cap), -1 with *err set. */
int64_t al_model_lab_encode(const al_model_lab *lab, const char *text, size_t len, int32_t *ids, int64_t cap,
                            al_error *err);
/* Activation patching of clean [n] into corrupt [n] (al_model_patch: out
 * [al_model_lab_patch_size(lab, n)] = the heads' map [n_layers, n_heads], the stream's
 * [n_layers, n], then the clean and corrupted metrics). The tokens so far are run again at the
 * next step. al_model_lab_patch_size: -1 for NULL or n < 1. */
int64_t al_model_lab_patch_size(const al_model_lab *lab, int64_t n);
al_status al_model_lab_patch(al_model_lab *lab, const int32_t *clean, const int32_t *corrupt, int64_t n,
                             int32_t answer, int32_t wrong, float *out, int64_t cap, al_error *err);

/* What the heads switched off change, for the Experiments panel. Each runs the lab's model from
 * empty caches, the tokens so far run again at the next step (their numbers unchanged); with
 * all_heads 1 every head is on for the call (the heads off are put back after), 0: as set.
 * al_model_lab_ahead: the next `count` draws of the lab's generator (its tokens, the sampler
 * settings p, its random numbers as they stand, the stop token ending them), made by a second
 * generator so nothing of the lab changes: ids [count] (the stop token last when drawn),
 * returned how many (0 when no step would draw, al_model_lab_finish); probs [vocab]: the
 * model's softmax for the next token (the sampler's raw stage). -1 with *err set. */
int64_t al_model_lab_ahead(al_model_lab *lab, const al_sampler_params *p, int all_heads, int32_t *ids, int64_t count,
                           float *probs, int64_t cap, al_error *err);
/* The mean loss −log P(token | the tokens before) over the prompt's tokens after the first; -1
 * with *err set (no prompt, or a prompt of one token). */
double al_model_lab_prompt_loss(al_model_lab *lab, int all_heads, al_error *err);
/* The text ids [n] write after the tokens so far (the streaming decoder's, as the chips show
 * it), NUL-terminated into out[cap] (truncated), its full length returned (out NULL and cap 0:
 * a size query); -1 with *err set (an id outside the vocabulary). */
int64_t al_model_lab_ids_text(const al_model_lab *lab, const int32_t *ids, int64_t n, char *out, int64_t cap,
                              al_error *err);
/* The token a text names, for a patch's answer and wrong token: the id whose piece is the text
 * (as the page shows tokens), else the one token the text encodes to (no BOS); -1 with *err
 * set when it is none or several. */
int64_t al_model_lab_token_id(const al_model_lab *lab, const char *text, size_t len, al_error *err);
/* A patching map [n] as the share of the metric it recovers, (m − corrupt) / (clean − corrupt):
 * 1 is the clean run, 0 the corrupted one. Returns 1; or 0 when the two metrics are equal
 * within float rounding (|clean − corrupt| <= 1e-6 · max(1, |clean|, |corrupt|)): nothing to
 * recover, out is the raw map; -1 with *err set (non-finite metrics, cap short). out may be map. */
int64_t al_patch_recovered(const float *map, int64_t n, float clean, float corrupt, float *out, int64_t cap,
                           al_error *err);

/* The whole model's KV cache after the prompt (row 0) and after each step: len, bytes of all
 * layers' caches, the same with MHA and with MQA, and the step's FLOPs with the cache against
 * recomputing every token (al_model_flops_causal, the last token's logits). Writes min(cap, rows) and
 * returns the number of rows, -1 with *err set. */
int64_t al_model_lab_kv(const al_model_lab *lab, al_kv_growth_row *rows, int64_t cap, al_error *err);

/* RoPE frequencies [head_dim / 2]: as the model rotates (YaRN-scaled where it is) and plain. */
al_status al_model_lab_rope(const al_model_lab *lab, float *scaled, float *plain, int64_t cap, al_error *err);

/* ------------------------------------------------------------------------------------------
 * The train lab: what the page's Train tab runs. A small MiniMind trained from scratch on the
 * learner's text or on the repeated task (random ids, the same ids again, then fresh ones: only
 * an induction head predicts the second copy), each head's roles (al_model_lab_roles' probe and
 * scores) measured every eval_every steps. Everything is allocated at create.
 * ------------------------------------------------------------------------------------------ */

typedef struct al_train_lab al_train_lab;

typedef enum { AL_TRAIN_DATA_REPEAT = 0, AL_TRAIN_DATA_TEXT = 1 } al_train_data;

typedef struct {
    int64_t vocab;            /* MiniMind's tokenizer cut to its first vocab ids (>= 292) */
    int64_t layers, heads, kv_heads, hidden;
    int64_t ffn;              /* 0: attention-only; -1: MiniMind's ceil(hidden·π/64)·64 */
    double rope_theta;
    int64_t batch, seq;       /* sequences per micro-batch, tokens per sequence */
    int64_t accum;            /* micro-batches per step (gradient accumulation, `attnlab train --accum`) */
    int64_t steps;            /* the run's length (the schedule's) */
    double lr;                /* peak learning rate of MiniMind's cosine schedule */
    uint64_t seed;            /* weights (al_trainer_init_weights) and batches (al_batch_rng) */
    int64_t eval_every;       /* steps between role measurements */
    al_train_data data;
} al_train_lab_config;

/* The Train tab's default into *c: a 2-layer attention-only model (hidden 64, 2 heads of 32,
 * RoPE base 1e6, MiniMind's tokenizer cut to its 292 added and byte tokens) on the repeated
 * task, batch 16 × 64, no accumulation, peak learning rate 1e-3, 3000 steps. Its induction head
 * forms between steps AL_TRAIN_JUMP_FROM and AL_TRAIN_JUMP_TO (the first evaluation with some
 * head's induction score above 0.5, al_train_lab_role_passed: 575, 600, 625, 625, 650, 675,
 * 675 for seeds 1–7 and 675 for the default 42, each run natively with these settings and the
 * seed changed, al_train_lab_role_passed(lab, AL_LAB_ROLE_INDUCTION, al_lab_role_threshold())
 * asked every 25 steps); at a peak of
 * 1.5e-3 and above the model learns another circuit that
 * solves the task as well (layer 0 copying the tokens 5 and 6 back, layer 1 matching on the
 * farther copy and reading the nearer), whose induction score stays near 0. */
void al_train_lab_config_default(al_train_lab_config *c);
#define AL_TRAIN_JUMP_FROM 575
#define AL_TRAIN_JUMP_TO 675

/* tokenizer: MiniMind's tokenizer.json (cut to cfg->vocab ids); text: the training text (UTF-8;
 * only for AL_TRAIN_DATA_TEXT), a corpus as `attnlab train --corpus` reads one
 * (al_corpus_encode: documents, each <|im_start|> text <|im_end|>, the held-out part), whose
 * training and held-out parts must each hold a window of seq + 1 tokens. Every setting out of
 * range is an error naming it; *out stays NULL. */
al_status al_train_lab_create(const al_train_lab_config *cfg, const uint8_t *tokenizer, size_t tokenizer_size,
                              const char *text, size_t text_len, al_train_lab **out, al_error *err);
void al_train_lab_free(al_train_lab *lab);

/* Up to n more steps (none past cfg->steps), each al_train_step (`attnlab train`'s: the same
 * settings, text and seed give the CLI's run bit for bit); returns the steps done so far, -1
 * with *err set. */
int64_t al_train_lab_step(al_train_lab *lab, int64_t n, al_error *err);

const al_model_hparams *al_train_lab_hparams(const al_train_lab *lab);
int64_t al_train_lab_steps_done(const al_train_lab *lab);
int64_t al_train_lab_tokens_done(const al_train_lab *lab); /* steps · accum · batch · seq */
/* Training speed: the tokens done over ms milliseconds of training (as its caller timed the
 * steps); 0 before any step or for ms <= 0, -1 if lab is NULL. */
double al_train_lab_tokens_per_second(const al_train_lab *lab, double ms);
/* On text, the held-out loss (al_train_held_out_loss, `attnlab train`'s loss.csv column) at the
 * last evaluation; NaN on the repeated task (or a NULL lab). */
double al_train_lab_held_out_loss(const al_train_lab *lab);
int64_t al_train_lab_param_count(const al_train_lab *lab);

/* Per step, these columns: the loss, the mean loss of the repeated task's first copies
 * (targets r_2..r_R) and of its second copies (NaN on text), the learning rate. */
typedef enum { AL_TRAIN_LOSS, AL_TRAIN_FIRST_HALF, AL_TRAIN_REPEATED_HALF, AL_TRAIN_LR, AL_TRAIN_COLUMNS } al_train_column;
/* Steps from..done-1 as rows [count, AL_TRAIN_COLUMNS] (as many whole rows as cap holds);
 * returns the rows written (out NULL and cap 0: the rows there are), -1 with *err set for from
 * out of range. */
int64_t al_train_lab_history(const al_train_lab *lab, int64_t from, float *out, int64_t cap, al_error *err);
/* Evaluations from..n-1 as rows [count, 1 + n_layers · n_heads · AL_LAB_ROLES]: the step, then
 * each head's role scores (layer by layer); the first is step 0. Same returns. */
int64_t al_train_lab_evals(const al_train_lab *lab, int64_t from, float *out, int64_t cap, al_error *err);
int64_t al_train_lab_eval_width(const al_train_lab *lab); /* the evals' row width; -1 if NULL */
/* The highest induction score of any head at the last evaluation. */
float al_train_lab_induction_max(const al_train_lab *lab);
/* The head highest on role at the last evaluation, as layer · n_heads + head (the lower on a
 * tie); -1 for a NULL lab or a role out of range. */
int64_t al_train_lab_strongest_head(const al_train_lab *lab, al_lab_role role);
/* The step of the first evaluation at which some head's score on role is above threshold (the
 * page's: al_lab_role_threshold); -1 if none has been yet, for a NULL lab or a role out of range. */
int64_t al_train_lab_role_passed(const al_train_lab *lab, al_lab_role role, double threshold);
/* The last step's batch [batch, seq] (what the model saw); returns batch · seq, 0 before any
 * step (-1 for a NULL lab). */
int64_t al_train_lab_last_batch(const al_train_lab *lab, int32_t *ids, int64_t cap);
/* The probe's ids (the roles' repeated sequence); returns its length T. */
int64_t al_train_lab_probe(const al_train_lab *lab, int32_t *ids, int64_t cap);
/* One head's attention [T, T] over the probe at the last evaluation. */
al_status al_train_lab_attention(const al_train_lab *lab, int64_t layer, int64_t head, float *out, int64_t cap,
                                 al_error *err);
/* The bytes id stands for (al_tok_piece of the cut tokenizer): written to out[cap], its length
 * returned, -1 with *err set out of range. */
int64_t al_train_lab_piece(const al_train_lab *lab, int32_t id, uint8_t *out, int64_t cap, al_error *err);

/* The threads the lab's trainer computes on (al_trainer_set_threads: the same steps, bit for
 * bit, on any number). */
al_status al_train_lab_set_threads(al_train_lab *lab, int64_t threads, al_error *err);
int64_t al_train_lab_threads(const al_train_lab *lab); /* -1 if lab is NULL */

/* Heads switched off: the causal test of a role. The probe's loss is measured at every
 * evaluation and at each al_train_lab_set_ablation, twice: as the model is, and with the heads
 * set here switched off (al_trainer_set_ablation for that one forward of the probe, then
 * cleared). Training never sees the ablation: the steps, their losses and the roles are the
 * same as with no head switched off, so a run paused, probed and resumed is still the CLI's.
 * al_train_lab_set_ablation: heads [n, 2] (layer, head), n 0 for none (a head named twice
 * counts once); a layer or head out of range is refused, naming it, and nothing changes; the
 * losses are measured again at once, at the weights of the step done last.
 * al_train_lab_ablation: the heads off, layer by layer then head by head, into heads [cap, 2];
 * returns how many there are, -1 for a NULL lab (or heads NULL with cap > 0). */
al_status al_train_lab_set_ablation(al_train_lab *lab, const int32_t *heads, int64_t n, al_error *err);
int64_t al_train_lab_ablation(const al_train_lab *lab, int32_t *heads, int64_t cap);
/* The probe's losses at the last measurement, out [AL_PROBE_COLUMNS]: the step it was made at,
 * then the mean −log p(target) over the first copy's targets r_2..r_R and over the second's
 * (which only copying predicts), as the model is and with the heads of al_train_lab_ablation
 * off (with none off, the same numbers bit for bit). NaN where the probe is too short. */
typedef enum {
    AL_PROBE_STEP, AL_PROBE_FIRST_HALF, AL_PROBE_REPEATED_HALF, AL_PROBE_FIRST_HALF_OFF, AL_PROBE_REPEATED_HALF_OFF,
    AL_PROBE_COLUMNS
} al_train_probe_column;
al_status al_train_lab_probe_loss(const al_train_lab *lab, float *out, int64_t cap, al_error *err);

/* The trained model as a MiniMind folder's files, each malloc'd (al_buffer_free). */
typedef enum { AL_TRAIN_FILE_CONFIG, AL_TRAIN_FILE_MODEL, AL_TRAIN_FILE_TOKENIZER } al_train_lab_file_kind;
al_status al_train_lab_file(const al_train_lab *lab, al_train_lab_file_kind which, uint8_t **out, size_t *size,
                            al_error *err);


/* The baseline a trained model must beat: a bigram model counted on the training ids train
 * [n_train], scored on the held-out targets next[i] after prev[i] (n_pairs): the mean negative
 * log-likelihood (nats) with add-k smoothing and with interpolation against the unigram, each
 * with its parameter picked from a grid on these targets (the baseline at its best). */
typedef struct {
    double loss;              /* the better of the two */
    double add_k_loss, k;
    double interpolated_loss, lambda;
} al_bigram_result;
al_status al_bigram_loss(const int32_t *train, int64_t n_train, const int32_t *prev, const int32_t *next, int64_t n_pairs,
                         int64_t vocab, al_bigram_result *out, al_error *err);


#ifdef __cplusplus
}
#endif
#endif /* ATTNLAB_APP_H */
