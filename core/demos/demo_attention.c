/* demo_attention.c — the tutorial's 03-attention-demo.py, example by example: Q/K/V projections
 * and the head split, GQA's repeat_kv, RoPE, the causal mask, the full forward pass, prefill +
 * decode with a KV cache, and the check that the cache does not change the result. The layer,
 * the random inputs (same draws as PyTorch) and every printed number come from the core. */
#include "attnlab/demos.h"
#include "attnlab/model.h"
#include "demos/demo.h"
#include "torch/reduce.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { HIDDEN = 16, N_HEADS = 4, N_KV_HEADS = 2, HEAD_DIM = 8, N_REP = N_HEADS / N_KV_HEADS };
enum { MAX_SEQ = 16, MAX_BATCH = 2 };

/* Example 1: projections, viewed as [batch, seq, heads, head_dim]. */
static void example_projections(al_demo_out *d, al_lang lang, al_attn *attn, al_rng *rng,
                                float *k /* [2, 5, n_kv_heads, head_dim], kept for example 2 */) {
    enum { B = 2, S = 5 };
    al_text *o = &d->text;
    al_demo_header(d, AL_DEMO_PANEL_ATTN,
                   L("示例 1：Q/K/V 线性投影与多头拆分",
                     "Example 1: Q/K/V linear projections and the split into heads"));
    float x[B * S * HIDDEN], q[B * S * N_HEADS * HEAD_DIM], v[B * S * N_KV_HEADS * HEAD_DIM];
    al_rng_randn(rng, x, B * S * HIDDEN);
    al_attn_project_qkv(attn, q, k, v, x, B, S, NULL);

    const int64_t x_shape[3] = {B, S, HIDDEN};
    const int64_t q_shape[4] = {B, S, N_HEADS, HEAD_DIM};
    const int64_t kv_shape[4] = {B, S, N_KV_HEADS, HEAD_DIM};
    char comment[128];
    al_text_printf(o, "\n");
    al_demo_shape(o, L("输入 x shape: ", "Input x shape: "), x_shape, 3,
                "  # [batch, seq, hidden_size]");
    al_snprintf(comment, sizeof comment, "  # [batch, seq, n_heads=%d, head_dim=%d]", N_HEADS,
                HEAD_DIM);
    al_demo_shape(o, "Q shape: ", q_shape, 4, comment);
    al_snprintf(comment, sizeof comment, "  # [batch, seq, n_kv_heads=%d, head_dim=%d]",
                N_KV_HEADS, HEAD_DIM);
    al_demo_shape(o, "K shape: ", kv_shape, 4, comment);
    al_demo_shape(o, "V shape: ", kv_shape, 4, comment);
    al_text_printf(o, L("\nGQA 配置：Q 头数 %d 是 KV 头数 %d 的 %d 倍\n",
                        "\nGQA configuration: %d Q heads for %d KV heads, a ratio of %d\n"),
                   N_HEADS, N_KV_HEADS, N_REP);
    al_text_printf(o, L("  → 每个 KV 头会被复制 %d 次供 %d 个 Q 头共享\n",
                        "  → each KV head is copied %d times, shared by %d Q heads\n"),
                   N_REP, N_REP);
    al_text_printf(o, "\n%s\n\n", L("验证通过：多头拆分 shape 正确",
                                    "Check passed: the shapes after the split into heads are correct"));
}

/* Returns the head slice [b, s, h, :] of a [B, S, heads, D] tensor. */
static const float *head_slice(const float *t, int64_t b, int64_t s, int64_t h, int64_t S,
                               int64_t heads) {
    return t + ((b * S + s) * heads + h) * HEAD_DIM;
}

/* torch.allclose(t[:, :, h1, :], t[:, :, h2, :]) on a [B, S, heads, D] tensor. */
static int heads_allclose(const float *t, int64_t B, int64_t S, int64_t heads, int64_t h1,
                          int64_t h2) {
    for (int64_t b = 0; b < B; b++)
        for (int64_t s = 0; s < S; s++)
            if (!al_demo_allclose(head_slice(t, b, s, h1, S, heads),
                                  head_slice(t, b, s, h2, S, heads), HEAD_DIM, 1e-8f))
                return 0;
    return 1;
}

/* Example 2: repeat_kv copies KV head j to query heads j·n_rep .. j·n_rep + n_rep − 1. */
static void example_repeat_kv(al_demo_out *d, al_lang lang, const float *k /* [2, 5, KV, D] */) {
    enum { B = 2, S = 5 };
    al_text *o = &d->text;
    al_demo_header(d, AL_DEMO_PANEL_ATTN,
                   L("示例 2：repeat_kv（把 KV 头复制到与 Q 头数一致）",
                     "Example 2: repeat_kv (copy the KV heads until there are as many as Q heads)"));
    float k_expanded[B * S * N_HEADS * HEAD_DIM];
    al_repeat_kv(k_expanded, k, B, S, N_KV_HEADS, N_REP, HEAD_DIM);
    const int64_t k_shape[4] = {B, S, N_KV_HEADS, HEAD_DIM};
    const int64_t k_exp_shape[4] = {B, S, N_HEADS, HEAD_DIM};
    char comment[128];
    al_text_printf(o, "\n");
    al_snprintf(comment, sizeof comment, "  # [batch, seq, n_kv_heads=%d, head_dim]", N_KV_HEADS);
    al_demo_shape(o, L("原始 K shape: ", "Original K shape: "), k_shape, 4, comment);
    al_snprintf(comment, sizeof comment, "  # [batch, seq, n_heads=%d, head_dim]", N_HEADS);
    al_demo_shape(o, L("repeat_kv 后 K shape: ", "K shape after repeat_kv: "), k_exp_shape, 4,
                comment);
    const int same = heads_allclose(k_expanded, B, S, N_HEADS, 0, 1);
    const int same2 = heads_allclose(k_expanded, B, S, N_HEADS, 2, 3);
    al_text_printf(o, L("\n验证：KV 头 0 被复制给 Q 头 0 和 1 → 两者相同？%s\n",
                        "\nCheck: KV head 0 is copied to Q heads 0 and 1 → are they identical? %s\n"),
                   al_demo_bool(same));
    al_text_printf(o, L("验证：KV 头 1 被复制给 Q 头 2 和 3 → 两者相同？%s\n",
                        "Check: KV head 1 is copied to Q heads 2 and 3 → are they identical? %s\n"),
                   al_demo_bool(same2));
    al_text_printf(o, "  %s\n\n",
                   L("（GQA 通过共享 KV 头显著减少 KV Cache 显存占用）",
                     "(by sharing KV heads, GQA greatly reduces the memory used by the KV cache)"));
}

/* Example 3: RoPE keeps norms and makes dot products depend only on relative position. */
static void example_rope(al_demo_out *d, al_lang lang, al_rng *rng) {
    al_text *o = &d->text;
    al_demo_header(d, AL_DEMO_PANEL_ROPE,
                   L("示例 3：RoPE 旋转位置编码",
                     "Example 3: RoPE rotary position embedding"));
    float cos_t[MAX_SEQ * HEAD_DIM], sin_t[MAX_SEQ * HEAD_DIM];
    al_rope_table(cos_t, sin_t, MAX_SEQ, HEAD_DIM, 10000.0);
    const int64_t table_shape[2] = {MAX_SEQ, HEAD_DIM}, vec_shape[1] = {HEAD_DIM};
    al_text_printf(o, "\n");
    al_demo_shape(o, L("预计算 cos/sin shape: ", "Precomputed cos/sin shape: "), table_shape, 2,
                "  # [max_seq, head_dim]");

    /* k_raw [1, 2, n_kv_heads, head_dim]: token 0 rotated at position 0, token 1 at 1. */
    enum { KV_ROW = N_KV_HEADS * HEAD_DIM };
    float k_raw[2 * KV_ROW], k0_rot[KV_ROW], k1_rot[KV_ROW];
    al_rng_randn(rng, k_raw, 2 * KV_ROW);
    memcpy(k0_rot, k_raw, sizeof k0_rot);
    memcpy(k1_rot, k_raw + KV_ROW, sizeof k1_rot);
    al_rope_apply(k0_rot, cos_t, sin_t, 1, N_KV_HEADS, HEAD_DIM);
    al_rope_apply(k1_rot, cos_t + HEAD_DIM, sin_t + HEAD_DIM, 1, N_KV_HEADS, HEAD_DIM);

    al_text_printf(o, "\n%s ", L("位置 0 旋转前 K[0,0,0]:", "Position 0, K[0,0,0] before rotation:"));
    al_text_tensor(o, k_raw, vec_shape, 1, NULL);
    al_text_printf(o, "\n%s ", L("位置 0 旋转后 K[0,0,0]:", "Position 0, K[0,0,0] after rotation:"));
    al_text_tensor(o, k0_rot, vec_shape, 1, NULL);
    al_text_printf(o, "\n  %s\n", L("位置 0 旋转角度为 0，所以旋转前后模长不变",
                                     "The rotation angle at position 0 is 0, so the norm is the same before and after"));
    const double norm_before = al_norm2_f32(k_raw, HEAD_DIM);
    const double norm_after = al_norm2_f32(k0_rot, HEAD_DIM);
    al_text_printf(o, "  %s %.6f\n", L("旋转前模长:", "norm before rotation:"), norm_before);
    al_text_printf(o, "  %s %.6f\n", L("旋转后模长:", "norm after rotation:"), norm_after);
    al_text_printf(o, "  %s%s\n", L("模长不变？", "norm unchanged? "),
                   al_demo_bool(fabs(norm_before - norm_after) < 1e-5));

    /* The same vector at positions 0, 1, 2: <v(0), v(1)> should equal <v(1), v(2)>. */
    float v_at[3][KV_ROW];
    al_rng_randn(rng, v_at[0], KV_ROW);
    memcpy(v_at[1], v_at[0], sizeof v_at[0]);
    memcpy(v_at[2], v_at[0], sizeof v_at[0]);
    for (int m = 0; m < 3; m++)
        al_rope_apply(v_at[m], cos_t + m * HEAD_DIM, sin_t + m * HEAD_DIM, 1, N_KV_HEADS, HEAD_DIM);
    /* (v0 * v1).sum(): float32 products, summed in PyTorch's order. */
    float prod[KV_ROW];
    for (int i = 0; i < KV_ROW; i++) prod[i] = v_at[0][i] * v_at[1][i];
    const double dot_01 = al_sum_f32(prod, KV_ROW);
    for (int i = 0; i < KV_ROW; i++) prod[i] = v_at[1][i] * v_at[2][i];
    const double dot_12 = al_sum_f32(prod, KV_ROW);
    al_text_printf(o, "\n%s\n", L("相对位置不变性验证（同一向量，相邻位置点积）：",
                                  "Relative position invariance check (same vector, dot products of neighbouring positions):"));
    al_text_printf(o, "  <v(0), v(1)> = %.6f\n", dot_01);
    al_text_printf(o, "  <v(1), v(2)> = %.6f\n", dot_12);
    al_text_printf(o, "  %s %.2e  → %s\n\n", L("差异:", "difference:"), fabs(dot_01 - dot_12),
                   al_demo_pass(lang, fabs(dot_01 - dot_12) < 1e-5));
}

/* Example 4: softmax over all-zero scores with the causal mask. */
static void example_causal_mask(al_demo_out *d, al_lang lang) {
    enum { S = 5 };
    al_text *o = &d->text;
    al_demo_header(d, AL_DEMO_PANEL_MASK,
                   L("示例 4：因果掩码（causal mask）",
                     "Example 4: Causal mask"));
    float scores[S * S] = {0}, mask[S * S], masked[S * S], weights[S * S];
    for (int i = 0; i < S; i++)
        for (int j = 0; j < S; j++) {
            mask[i * S + j] = j > i ? -INFINITY : 0.0f; /* triu(1) of -inf */
            masked[i * S + j] = scores[i * S + j] + mask[i * S + j];
        }
    al_softmax_forward(weights, masked, S, S);
    const int64_t shape[2] = {S, S};
    al_text_printf(o, "\n%s\n", L("原始 scores（全 0，假设未归一化）:",
                                  "Raw scores (all 0, assumed unnormalized):"));
    al_text_tensor(o, scores, shape, 2, NULL);
    al_text_printf(o, "\n\n%s\n", L("因果掩码（上三角为 -inf）:",
                                    "Causal mask (-inf above the diagonal):"));
    al_text_tensor(o, mask, shape, 2, NULL);
    al_text_printf(o, "\n\n%s\n", L("施加掩码后 softmax 的注意力权重:",
                                    "Attention weights after masking and softmax:"));
    al_text_tensor(o, weights, shape, 2, NULL);
    al_text_printf(o, "\n\n%s\n", L("观察：下三角（含对角线）权重均匀，上三角为 0",
                                    "Observe: the weights are uniform on and below the diagonal, 0 above it"));
    int upper_zero = 1;
    float row_sums[S], ones[S];
    for (int i = 0; i < S; i++) {
        for (int j = i + 1; j < S; j++) upper_zero &= weights[i * S + j] == 0.0f;
        row_sums[i] = al_sum_f32(weights + i * S, S);
        ones[i] = 1.0f;
    }
    al_text_printf(o, "%s%s\n", L("验证：上三角（未来 token）权重全为 0？",
                                  "Check: are all weights above the diagonal (future tokens) 0? "),
                   al_demo_bool(upper_zero));
    al_text_printf(o, "%s%s\n\n", L("验证：每行权重和为 1？", "Check: does every row of weights sum to 1? "),
                   al_demo_bool(al_demo_allclose(row_sums, ones, S, 1e-8f)));
}

/* Example 5: the whole layer on [2, 6, 16], keeping the KV cache. */
static al_status example_forward(al_demo_out *d, al_lang lang, al_attn *attn, al_rng *rng,
                                 al_kv_cache *cache, al_error *err) {
    enum { B = 2, S = 6 };
    al_text *o = &d->text;
    al_demo_header(d, AL_DEMO_PANEL_ATTN,
                   L("示例 5：完整注意力前向传播（GQA + RoPE + QK-Norm + 因果掩码）",
                     "Example 5: The complete attention forward pass (GQA + RoPE + QK-Norm + causal mask)"));
    float x[B * S * HIDDEN], out[B * S * HIDDEN];
    al_rng_randn(rng, x, B * S * HIDDEN);
    al_kv_cache_reset(cache);
    al_status st = al_attn_forward(attn, cache, out, NULL, 0, x, B, S, err);
    if (st != AL_OK) return st;
    const int64_t x_shape[3] = {B, S, HIDDEN};
    const int64_t kv_shape[4] = {al_kv_cache_batch(cache), al_kv_cache_len(cache), N_KV_HEADS,
                                 HEAD_DIM};
    char comment[128];
    al_text_printf(o, "\n");
    al_snprintf(comment, sizeof comment, "  # [batch=%d, seq=%d, hidden_size=%d]", B, S, HIDDEN);
    al_demo_shape(o, L("输入 x shape: ", "Input x shape: "), x_shape, 3, comment);
    al_demo_shape(o, L("输出 shape: ", "Output shape: "), x_shape, 3,
                L("  # [batch, seq, hidden_size]（与输入相同）",
                  "  # [batch, seq, hidden_size] (same as the input)"));
    al_snprintf(comment, sizeof comment, "  # [batch, seq, n_kv_heads=%d, head_dim=%d]", N_KV_HEADS,
                HEAD_DIM);
    al_demo_shape(o, L("KV Cache K shape: ", "KV cache K shape: "), kv_shape, 4, comment);
    al_demo_shape(o, L("KV Cache V shape: ", "KV cache V shape: "), kv_shape, 4, comment);
    al_text_printf(o, "\n%s\n\n", L("验证通过：前向输出 shape 与输入一致，KV Cache 已保存",
                                    "Check passed: the output shape matches the input, and the KV cache has been saved"));
    return AL_OK;
}

/* Example 6: prefill a 4-token prompt, then decode 3 tokens one at a time. */
static al_status example_prefill_decode(al_demo_out *d, al_lang lang, al_attn *attn, al_rng *rng,
                                        al_kv_cache *cache, al_error *err) {
    enum { PROMPT = 4, STEPS = 3 };
    al_text *o = &d->text;
    al_demo_header(d, AL_DEMO_PANEL_KV,
                   L("示例 6：prefill + decode 两阶段生成（使用 KV Cache）",
                     "Example 6: Two-phase generation: prefill + decode (with the KV cache)"));
    float prompt[PROMPT * HIDDEN], out[PROMPT * HIDDEN];
    al_rng_randn(rng, prompt, PROMPT * HIDDEN);
    al_kv_cache_reset(cache);
    al_status st = al_attn_forward(attn, cache, out, NULL, 0, prompt, 1, PROMPT, err);
    if (st != AL_OK) return st;
    const int64_t prompt_shape[3] = {1, PROMPT, HIDDEN}, token_shape[3] = {1, 1, HIDDEN};
    al_text_printf(o, "\n");
    al_demo_shape(o, L("[Prefill] 输入 prompt shape: ", "[Prefill] input prompt shape: "),
                prompt_shape, 3, "");
    al_demo_shape(o, L("[Prefill] 输出 shape: ", "[Prefill] output shape: "), prompt_shape, 3, "");
    al_text_printf(o, L("[Prefill] KV Cache 长度: %lld  # = prompt_len=%d\n",
                        "[Prefill] KV cache length: %lld  # = prompt_len=%d\n"),
                   (long long)al_kv_cache_len(cache), PROMPT);

    al_text_printf(o, L("\n[Decode] 逐 token 解码 %d 步：\n",
                        "\n[Decode] decoding token by token for %d steps:\n"), STEPS);
    for (int step = 0; step < STEPS; step++) {
        float token[HIDDEN], token_out[HIDDEN];
        al_rng_randn(rng, token, HIDDEN); /* stands for the token generated by the last step */
        if ((st = al_attn_forward(attn, cache, token_out, NULL, 0, token, 1, 1, err)) != AL_OK)
            return st;
        al_text_printf(o, L("  步骤 %d: 输入 1 token，KV Cache 长度 %lld，输出 shape ",
                            "  step %d: input 1 token, KV cache length %lld, output shape "),
                       step + 1, (long long)al_kv_cache_len(cache));
        al_text_size(o, token_shape, 3);
        al_text_printf(o, "\n");
    }
    al_text_printf(o, L("\n最终 KV Cache 长度: %lld  # = prompt_len + decode_steps = %d\n",
                        "\nFinal KV cache length: %lld  # = prompt_len + decode_steps = %d\n"),
                   (long long)al_kv_cache_len(cache), PROMPT + STEPS);
    /* The tutorial says O(1) here; the new token's query still reads all n cached keys. */
    al_text_printf(o, "%s\n\n",
                   L("  → decode 阶段每步只需为 1 个新 token 计算 Q/K/V，历史 K/V 从缓存读取：注意力要读 n 个缓存的 K，每步 O(n)；不用缓存则每步重算整段，O(n²)",
                     "  → each decode step computes Q/K/V for the 1 new token only and reads past K/V from the cache: attention still reads all n cached keys, O(n) per step, against O(n²) to recompute the whole sequence without a cache"));
    return AL_OK;
}

/* Example 7: the same 7 tokens with and without the cache give the same outputs. */
static al_status example_cache_check(al_demo_out *d, al_lang lang, al_attn *attn, al_rng *rng,
                                     al_kv_cache *cache, al_error *err) {
    enum { PROMPT = 4, TOTAL = 7, OVERLAP = TOTAL - PROMPT + 1 };
    al_text *o = &d->text;
    al_demo_header(d, AL_DEMO_PANEL_CHECKS,
                   L("示例 7：KV Cache 正确性验证（有/无 cache 结果应一致）",
                     "Example 7: Checking that the KV cache is correct (results with and without the cache should match)"));
    float tokens[TOTAL * HIDDEN], no_cache[TOTAL * HIDDEN], prefill[PROMPT * HIDDEN];
    float with_cache[OVERLAP * HIDDEN];
    al_rng_randn(rng, tokens, TOTAL * HIDDEN);
    al_status st = al_attn_forward(attn, NULL, no_cache, NULL, 0, tokens, 1, TOTAL, err);
    if (st != AL_OK) return st;
    al_kv_cache_reset(cache);
    if ((st = al_attn_forward(attn, cache, prefill, NULL, 0, tokens, 1, PROMPT, err)) != AL_OK)
        return st;
    memcpy(with_cache, prefill + (PROMPT - 1) * HIDDEN, HIDDEN * sizeof(float));
    for (int i = PROMPT; i < TOTAL; i++)
        if ((st = al_attn_forward(attn, cache, with_cache + (i - PROMPT + 1) * HIDDEN, NULL, 0,
                                  tokens + i * HIDDEN, 1, 1, err)) != AL_OK)
            return st;
    float max_diff = 0.0f;
    for (int i = 0; i < OVERLAP * HIDDEN; i++) {
        const float diff = fabsf(no_cache[(PROMPT - 1) * HIDDEN + i] - with_cache[i]);
        if (diff > max_diff) max_diff = diff;
    }
    const int64_t shape[3] = {1, OVERLAP, HIDDEN};
    char label[160];
    al_snprintf(label, sizeof label,
                L("\n无 cache 一次性前向（位置 %d~%d）shape: ",
                  "\nNo cache, single forward pass (positions %d to %d) shape: "),
                PROMPT - 1, TOTAL - 1);
    al_demo_shape(o, label, shape, 3, "");
    al_demo_shape(o, L("有 cache 分步前向输出 shape: ", "With cache, step-by-step forward output shape: "),
                shape, 3, "");
    al_text_printf(o, "%s %.2e\n", L("两者最大绝对差异:", "Maximum absolute difference between the two:"),
                   (double)max_diff);
    al_text_printf(o, "%s%s\n", L("验证通过（差异 < 1e-5）？", "Check passed (difference < 1e-5)? "),
                   al_demo_bool(max_diff < 1e-5));
    al_text_printf(o, "  %s\n\n", L("→ KV Cache 是纯加速优化，不改变计算结果",
                                    "→ the KV cache is purely a speed optimization; it does not change the results"));
    return AL_OK;
}

al_status al_demo_attention(al_demo_out *d, al_lang lang, int64_t seed, al_rng *rng, al_error *err) {
    const al_attn_hparams hp = al_attn_hparams_default();
    const al_attn_capacity cap = {MAX_BATCH, MAX_SEQ};
    al_attn *attn = NULL;
    al_kv_cache *cache = NULL;
    al_status st = al_attn_create(&hp, &cap, &attn, err);
    if (st == AL_OK) st = al_kv_cache_create(&hp, &cap, &cache, err);
    if (st != AL_OK) {
        al_attn_free(attn);
        return st;
    }
    al_rng_seed(rng, seed >= 0 ? (uint64_t)seed : 42);
    al_attn_init_torch(attn, rng);

    float k[2 * 5 * N_KV_HEADS * HEAD_DIM]; /* example 1's K, reused by example 2 */
    example_projections(d, lang, attn, rng, k);
    example_repeat_kv(d, lang, k);
    example_rope(d, lang, rng);
    example_causal_mask(d, lang);
    st = example_forward(d, lang, attn, rng, cache, err);
    if (st == AL_OK) st = example_prefill_decode(d, lang, attn, rng, cache, err);
    if (st == AL_OK) st = example_cache_check(d, lang, attn, rng, cache, err);
    if (st == AL_OK)
        al_demo_header(d, AL_DEMO_PANEL_NONE, L("所有示例运行完毕！", "All examples finished!"));
    al_kv_cache_free(cache);
    al_attn_free(attn);
    return st;
}
