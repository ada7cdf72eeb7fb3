/* demo_basic.c — the tutorial's 02-basic-components-demo.py, example by example: token
 * embedding, RMSNorm against LayerNorm, and RoPE (cos/sin table, rotating a vector, relative
 * position invariance). Every number is computed here by the core, in PyTorch's order of
 * random draws and float32 operations, and printed as the script prints it. */
#include "attnlab/demos.h"
#include "attnlab/model.h"
#include "demos/demo.h"
#include "torch/reduce.h"

#include <math.h>
#include <string.h>

/* Example 1: nn.Embedding(10, 4) with xavier_uniform_ weights, looked up for two sentences. */
static void example_embedding(al_demo_out *d, al_lang lang, al_rng *rng, int64_t seed) {
    enum { VOCAB = 10, HIDDEN = 4, BATCH = 2, SEQ = 3 };
    al_text *o = &d->text;
    al_demo_header(d, AL_DEMO_PANEL_TEXT,
                   L("示例 1：Token Embedding（词嵌入层）",
                     "Example 1: Token Embedding (word embedding layer)"));

    float weight[VOCAB * HIDDEN];
    al_rng_seed(rng, seed >= 0 ? (uint64_t)seed : 42);
    al_rng_xavier_uniform(rng, weight, VOCAB, HIDDEN, 1.0);

    const int64_t ids[BATCH * SEQ] = {1, 3, 5, 2, 4, 6};
    const int64_t ids_shape[2] = {BATCH, SEQ};
    al_text_printf(o, "\n%s\n", L("输入 input_ids:", "Input input_ids:"));
    al_text_printf(o, "  shape: ");
    al_text_size(o, ids_shape, 2);
    al_text_printf(o, "\n  dtype: torch.int64\n  %s\n", L("内容:", "values:"));
    al_text_int_tensor(o, ids, ids_shape, 2);

    float hidden[BATCH * SEQ * HIDDEN];
    al_embedding_forward(hidden, ids, weight, BATCH * SEQ, VOCAB, HIDDEN);
    const int64_t hidden_shape[3] = {BATCH, SEQ, HIDDEN};
    al_text_printf(o, "\n\n%s\n", L("输出 hidden_states:", "Output hidden_states:"));
    al_text_printf(o, "  shape: ");
    al_text_size(o, hidden_shape, 3);
    al_text_printf(o, "  # [batch_size, seq_len, hidden_size]\n  dtype: torch.float32\n  %s\n",
                   L("内容:", "values:"));
    al_text_tensor(o, hidden, hidden_shape, 3, ", grad_fn=<EmbeddingBackward0>");

    const int64_t token_id = 3, vec_shape[1] = {HIDDEN};
    al_text_printf(o, "\n\n%s %lld%s\n", L("Token", "Embedding vector of token"), (long long)token_id,
                   L(" 的词向量:", ":"));
    al_text_printf(o, "  shape: ");
    al_text_size(o, vec_shape, 1);
    al_text_printf(o, "\n  %s ", L("值:", "value:"));
    al_text_tensor(o, weight + token_id * HIDDEN, vec_shape, 1, ", grad_fn=<SelectBackward0>");

    /* The lookup of input_ids[0, 1] and the forward output at [0, 1] are the same row. */
    const float *looked_up = weight + ids[1] * HIDDEN, *forward = hidden + 1 * HIDDEN;
    al_text_printf(o, "\n\n%s input_ids[0, 1]%s%lld%s\n",
                   L("验证：从", "Check: does the table lookup for"), L("（token ", " (token "),
                   (long long)ids[1],
                   L("）查表结果与前向传播一致？", ") match the forward pass?"));
    al_text_printf(o, "  %s ", L("查表:", "lookup:"));
    al_text_tensor(o, looked_up, vec_shape, 1, ", grad_fn=<SelectBackward0>");
    al_text_printf(o, "\n  %s ", L("前向:", "forward:"));
    al_text_tensor(o, forward, vec_shape, 1, ", grad_fn=<SelectBackward0>");
    al_text_printf(o, "\n  %s %s\n\n", L("一致:", "Match:"),
                   al_demo_bool(al_demo_allclose(looked_up, forward, HIDDEN, 1e-8f)));
}

/* Example 2: SimpleRMSNorm against nn.LayerNorm on the same random input. */
static void example_rmsnorm(al_demo_out *d, al_lang lang, al_rng *rng, int64_t seed) {
    enum { B = 2, S = 3, H = 4, ROWS = B * S, N = B * S * H };
    al_text *o = &d->text;
    al_demo_header(d, AL_DEMO_PANEL_TEXT,
                   L("示例 2：RMSNorm（均方根层归一化）",
                     "Example 2: RMSNorm (root mean square layer normalization)"));

    float x[N];
    al_rng_seed(rng, seed >= 0 ? (uint64_t)seed : 123);
    al_rng_randn(rng, x, N);
    const int64_t shape[3] = {B, S, H}, row_shape[1] = {H};

    al_text_printf(o, "\n%s\n", L("输入 x:", "Input x:"));
    al_text_printf(o, "  shape: ");
    al_text_size(o, shape, 3);
    al_text_printf(o, "\n  %s ", L("第 0 个样本第 0 个位置的值:", "values at sample 0, position 0:"));
    al_text_tensor(o, x, row_shape, 1, NULL);
    al_text_printf(o, "\n  %s %.6f\n", L("原始均值:", "original mean:"),
                   (double)(al_sum_f32(x, H) / (float)H));
    al_text_printf(o, "  %s %.6f\n", L("原始均方根:", "original root mean square:"),
                   (double)sqrtf(al_sum_squares_f32(x, H) / (float)H));

    float ones[H], zeros[H];
    for (int i = 0; i < H; i++) ones[i] = 1.0f, zeros[i] = 0.0f;
    float rms_out[N], ln_out[N];
    al_rmsnorm_forward(rms_out, x, ones, ROWS, H, 1e-6f);

    al_text_printf(o, "\n%s\n", L("RMSNorm 输出:", "RMSNorm output:"));
    al_text_printf(o, "  shape: ");
    al_text_size(o, shape, 3);
    al_text_printf(o, "\n  %s ", L("第 0 个样本第 0 个位置的值:", "values at sample 0, position 0:"));
    al_text_tensor(o, rms_out, row_shape, 1, ", grad_fn=<SelectBackward0>");
    al_text_printf(o, "\n  %s %.6f  %s\n", L("输出均值:", "output mean:"),
                   (double)(al_sum_f32(rms_out, H) / (float)H),
                   L("# 注意：RMSNorm 不主动减均值", "# note: RMSNorm does not subtract the mean"));
    al_text_printf(o, "  %s %.6f  %s\n", L("输出均方根:", "output root mean square:"),
                   (double)sqrtf(al_sum_squares_f32(rms_out, H) / (float)H),
                   L("# 约等于 1（weight 全 1 时）", "# about 1 (when every weight is 1)"));

    al_layernorm_forward(ln_out, x, ones, zeros, ROWS, H, 1e-6f);
    al_text_printf(o, "\n%s\n", L("LayerNorm 输出:", "LayerNorm output:"));
    al_text_printf(o, "  %s ", L("第 0 个样本第 0 个位置的值:", "values at sample 0, position 0:"));
    al_text_tensor(o, ln_out, row_shape, 1, ", grad_fn=<SelectBackward0>");
    al_text_printf(o, "\n  %s %.6f  %s\n", L("输出均值:", "output mean:"),
                   (double)(al_sum_f32(ln_out, H) / (float)H),
                   L("# LayerNorm 均值为 0", "# LayerNorm's mean is 0"));
    al_text_printf(o, "  %s %.6f\n", L("输出均方根:", "output root mean square:"),
                   (double)sqrtf(al_sum_squares_f32(ln_out, H) / (float)H));

    float abs_diff[N];
    for (int i = 0; i < N; i++) abs_diff[i] = fabsf(rms_out[i] - ln_out[i]);
    al_text_printf(o, "\n%s %.6f\n",
                   L("RMSNorm 与 LayerNorm 的平均绝对差异:",
                     "Mean absolute difference between RMSNorm and LayerNorm:"),
                   (double)(al_sum_f32(abs_diff, N) / (float)N));
    al_text_printf(o, "  %s\n", L("差异的原因：LayerNorm 会减去均值，而 RMSNorm 不会",
                                  "Why they differ: LayerNorm subtracts the mean, RMSNorm does not"));

    /* With weight 1, RMSNorm divides every element by rms, so mean(y) / mean(x) = 1 / rms. */
    float ratio[ROWS], inv_rms[ROWS];
    for (int r = 0; r < ROWS; r++) {
        const float x_mean = al_sum_f32(x + r * H, H) / (float)H;
        const float y_mean = al_sum_f32(rms_out + r * H, H) / (float)H;
        ratio[r] = y_mean / x_mean;
        inv_rms[r] = 1.0f / sqrtf(al_sum_squares_f32(x + r * H, H) / (float)H + 1e-6f);
    }
    al_text_printf(o, "\n%s\n", L("验证：均值缩放比例 ≈ 1/rms 吗？",
                                  "Check: is the scaling ratio of the mean ≈ 1/rms?"));
    al_text_printf(o, "  %s %.6f\n", L("实际比例:", "actual ratio:"), (double)ratio[0]);
    al_text_printf(o, "  1 / rms: %.6f\n", (double)inv_rms[0]);
    al_text_printf(o, "  %s %s\n\n", L("一致:", "Match:"),
                   al_demo_bool(al_demo_allclose(ratio, inv_rms, ROWS, 1e-5f)));
}

/* Example 3: RoPE's cos/sin table, a rotated unit vector, relative-position invariance. */
static void example_rope(al_demo_out *d, al_lang lang, al_rng *rng) {
    enum { HEAD_DIM = 8, SEQ = 4 };
    al_text *o = &d->text;
    al_demo_header(d, AL_DEMO_PANEL_ROPE,
                   L("示例 3：RoPE（旋转位置编码）",
                     "Example 3: RoPE (rotary position embedding)"));

    float cos_t[SEQ * HEAD_DIM], sin_t[SEQ * HEAD_DIM];
    al_rope_table(cos_t, sin_t, SEQ, HEAD_DIM, 10000.0);
    const int64_t table_shape[2] = {SEQ, HEAD_DIM}, vec_shape[1] = {HEAD_DIM};

    al_text_printf(o, "\n%s\n", L("3.1 预计算 cos/sin 表", "3.1 Precompute the cos/sin tables"));
    al_text_printf(o, "  head_dim: %d, seq_len: %d\n", HEAD_DIM, SEQ);
    al_text_printf(o, "  freqs_cos shape: ");
    al_text_size(o, table_shape, 2);
    al_text_printf(o, "\n  freqs_sin shape: ");
    al_text_size(o, table_shape, 2);
    al_text_printf(o, "\n  %s ", L("位置 0 的 cos 值:", "cos at position 0:"));
    al_text_tensor(o, cos_t, vec_shape, 1, NULL);
    al_text_printf(o, "\n  %s ", L("位置 1 的 cos 值:", "cos at position 1:"));
    al_text_tensor(o, cos_t + HEAD_DIM, vec_shape, 1, NULL);
    al_text_printf(o, "\n  %s ", L("位置 0 的 sin 值:", "sin at position 0:"));
    al_text_tensor(o, sin_t, vec_shape, 1, NULL);
    al_text_printf(o, "  %s\n", L("# 全 0，因为 sin(0) = 0", "# all 0, because sin(0) = 0"));

    al_text_printf(o, "\n%s\n", L("3.2 用一个简单的 Q 向量测试旋转效果",
                                  "3.2 Test the rotation on a simple Q vector"));
    float q[SEQ * HEAD_DIM] = {0};
    for (int m = 0; m < SEQ; m++) q[m * HEAD_DIM] = 1.0f;
    al_text_printf(o, "  %s ", L("原始 Q (所有位置相同):", "original Q (same at every position):"));
    al_text_tensor(o, q, vec_shape, 1, NULL);
    al_rope_apply(q, cos_t, sin_t, SEQ, 1, HEAD_DIM);
    al_text_printf(o, "\n\n  %s\n", L("旋转后的 Q:", "Q after rotation:"));
    for (int m = 0; m < SEQ; m++) {
        al_text_printf(o, "    %s %d: ", L("位置", "position"), m);
        al_text_tensor(o, q + m * HEAD_DIM, vec_shape, 1, NULL);
        al_text_printf(o, "\n");
    }
    al_text_printf(o, "\n  %s\n", L("观察：位置 0 的向量不变（旋转角度为 0）",
                                     "Observe: the vector at position 0 is unchanged (rotation angle 0)"));
    al_text_printf(o, "  %s\n", L("观察：位置越远，旋转角度越大",
                                   "Observe: the further the position, the larger the rotation angle"));

    al_text_printf(o, "\n%s\n", L("3.3 验证相对位置不变性",
                                  "3.3 Check relative position invariance"));
    al_text_printf(o, "  %s\n",
                   L("验证：位置 0 和 1 的点积 ≈ 位置 1 和 2 的点积 ≈ 位置 2 和 3 的点积",
                     "Check: dot product of positions 0 and 1 ≈ that of positions 1 and 2 ≈ that of positions 2 and 3"));
    float v[HEAD_DIM];
    al_rng_randn(rng, v, HEAD_DIM); /* no reseed: continues after example 2's draws */
    al_text_printf(o, "  %s ", L("测试向量 v:", "test vector v:"));
    al_text_tensor(o, v, vec_shape, 1, NULL);
    al_text_printf(o, "\n");

    float v_at[SEQ][HEAD_DIM];
    for (int m = 0; m < SEQ; m++) {
        memcpy(v_at[m], v, sizeof v);
        al_rope_apply(v_at[m], cos_t + m * HEAD_DIM, sin_t + m * HEAD_DIM, 1, 1, HEAD_DIM);
    }
    /* torch.dot goes to BLAS sdot: a left-to-right float32 sum; .item() makes it a double. */
    const double d01 = al_dot_f32(v_at[0], v_at[1], HEAD_DIM);
    const double d12 = al_dot_f32(v_at[1], v_at[2], HEAD_DIM);
    const double d23 = al_dot_f32(v_at[2], v_at[3], HEAD_DIM);
    al_text_printf(o, "\n  %s\n", L("点积结果:", "Dot products:"));
    al_text_printf(o, "    <v(0), v(1)> = %.6f\n", d01);
    al_text_printf(o, "    <v(1), v(2)> = %.6f\n", d12);
    al_text_printf(o, "    <v(2), v(3)> = %.6f\n", d23);
    const double diff_01_12 = fabs(d01 - d12), diff_12_23 = fabs(d12 - d23);
    al_text_printf(o, "\n  %s\n", L("差异:", "Differences:"));
    al_text_printf(o, "    |<0,1> - <1,2>| = %.2e\n", diff_01_12);
    al_text_printf(o, "    |<1,2> - <2,3>| = %.2e\n", diff_12_23);
    al_text_printf(o, "\n  %s %s\n", L("相对位置不变性验证:", "Relative position invariance check:"),
                   al_demo_pass(lang, diff_01_12 < 1e-5 && diff_12_23 < 1e-5));
    al_text_printf(o, "  %s\n", L("（差异在 1e-5 以内视为通过，浮点精度误差范围内）",
                                   "(a difference within 1e-5 counts as passed: floating-point rounding error)"));

    al_text_printf(o, "\n  %s\n", L("额外验证：距离为 2 的点积也相等",
                                     "Extra check: dot products at distance 2 are equal too"));
    const double d02 = al_dot_f32(v_at[0], v_at[2], HEAD_DIM);
    const double d13 = al_dot_f32(v_at[1], v_at[3], HEAD_DIM);
    al_text_printf(o, "    <v(0), v(2)> = %.6f\n", d02);
    al_text_printf(o, "    <v(1), v(3)> = %.6f\n", d13);
    al_text_printf(o, "    %s %.2e\n", L("差异:", "difference:"), fabs(d02 - d13));
    al_text_printf(o, "    %s %s\n", L("验证:", "check:"), al_demo_pass(lang, fabs(d02 - d13) < 1e-5));
}

void al_demo_basic(al_demo_out *d, al_lang lang, int64_t seed, al_rng *rng) {
    example_embedding(d, lang, rng, seed);
    example_rmsnorm(d, lang, rng, seed);
    example_rope(d, lang, rng);
    al_text_printf(&d->text, "\n");
    al_demo_header(d, AL_DEMO_PANEL_NONE, L("所有示例运行完毕！", "All examples finished!"));
}
