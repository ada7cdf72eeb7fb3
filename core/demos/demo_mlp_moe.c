/* demo_mlp_moe.c — the tutorial's 04-mlp-moe-demo.py, example by example: the SwiGLU FFN, SiLU
 * against ReLU, MoE routing (the router's softmax and top-k), the MoE forward, parameter counts,
 * the renormalised top-2 weights and the load-balancing loss. The weights and inputs are
 * PyTorch's own draws, and every printed number is computed here in PyTorch's float32 order
 * (nn.Linear as the reference BLAS, torch.topk's order, the sums of its reduction kernels).
 *
 * Three lines of the script are corrected (tests/fixtures/gen_demo.py makes the same changes
 * to the script it runs): its experts are as wide as the dense FFN, so a token that runs k of
 * them does k times the dense FFN's work, not less; and MoEFFN's aux_loss counts the load per
 * top-k slot, k times the product of the per-expert load it prints. */
#include "attnlab/demos.h"
#include "attnlab/model.h"
#include "demos/demo.h"
#include "torch/reduce.h"
#include "torch/topk.h"

#include <stdlib.h>
#include <string.h>

enum { HIDDEN = 16, INTER = 32, N_EXPERTS = 4, TOP_K = 2, MAX_TOKENS = 10 };
_Static_assert((int)N_EXPERTS == (int)AL_DEMO_MOE_EXPERTS && (int)TOP_K == (int)AL_DEMO_MOE_TOP_K,
               "the charts' sizes (demos.h) are the script's");
static const double AUX_LOSS_COEF = 0.01; /* MoEFFN's aux_loss_coef; multiplied as a float32 */

/* The script's SwiGLUFFN: down(silu(gate(x)) · up(x)), nn.Linear layout [out, in]. */
typedef struct {
    float gate[INTER * HIDDEN]; /* [intermediate, hidden] */
    float up[INTER * HIDDEN];   /* [intermediate, hidden] */
    float down[HIDDEN * INTER]; /* [hidden, intermediate] */
} swiglu_ffn;

/* The script's MoEFFN: a router over N_EXPERTS SwiGLU experts, TOP_K of them per token. */
typedef struct {
    float router[N_EXPERTS * HIDDEN]; /* [num_experts, hidden]: self.gate */
    swiglu_ffn experts[N_EXPERTS];
    float aux_loss; /* of the last forward */
} moe_ffn;

/* SwiGLUFFN(hidden, intermediate): its three nn.Linear inits, in the order they are created. */
static void ffn_init(swiglu_ffn *f, al_rng *rng) {
    al_rng_linear_init(rng, f->gate, INTER, HIDDEN);
    al_rng_linear_init(rng, f->up, INTER, HIDDEN);
    al_rng_linear_init(rng, f->down, HIDDEN, INTER);
}

/* out [n, hidden] = down(silu(gate(x)) * up(x)) for x [n, hidden], n <= MAX_TOKENS. */
static void ffn_forward(const swiglu_ffn *f, float *out, const float *x, int64_t n) {
    float gate[MAX_TOKENS * INTER], up[MAX_TOKENS * INTER];
    al_demo_linear(gate, x, f->gate, n, HIDDEN, INTER);
    al_demo_linear(up, x, f->up, n, HIDDEN, INTER);
    for (int64_t i = 0; i < n * INTER; i++) gate[i] = al_demo_silu(gate[i]) * up[i];
    al_demo_linear(out, gate, f->down, n, INTER, HIDDEN);
}

/* scores [n, num_experts] = softmax(router(x)), and the top-k ids and weights of each token in
 * torch.topk(sorted=False)'s order. */
static void moe_route(const moe_ffn *m, float *scores, int64_t *ids, float *weights,
                      const float *x, int64_t n) {
    al_demo_linear(scores, x, m->router, n, HIDDEN, N_EXPERTS);
    al_softmax_forward(scores, scores, n, N_EXPERTS);
    for (int64_t t = 0; t < n; t++)
        al_topk_torch(ids + t * TOP_K, weights + t * TOP_K, scores + t * N_EXPERTS, N_EXPERTS,
                      TOP_K, 0);
}

/* mean(0) of a [rows, cols] tensor as PyTorch reduces a short outer dimension (rows < 16):
 * each column summed top to bottom from 0, then divided by rows. */
static void column_means(float *mean, const float *x, int64_t rows, int64_t cols) {
    for (int64_t c = 0; c < cols; c++) {
        float s = 0.0f;
        for (int64_t r = 0; r < rows; r++) s += x[r * cols + c];
        mean[c] = s / (float)rows;
    }
}

/* MoEFFN.forward: out [n, hidden] and m->aux_loss.
 *   1. scores = softmax(gate(x)); top-k weights and ids; weights / (their sum + 1e-20);
 *   2. per expert i in order, the tokens that chose it (ascending) through the expert, times
 *      their weight for it, added into y by index_add_ (one row after the other);
 *   3. load [k, num_experts] = one_hot(ids).mean(0): per slot j, the share of tokens whose
 *      j-th choice is expert i; aux = (load * scores.mean(0)).sum() · num_experts · coef. */
static void moe_forward(moe_ffn *m, float *out, const float *x, int64_t n) {
    float scores[MAX_TOKENS * N_EXPERTS], weights[MAX_TOKENS * TOP_K];
    int64_t ids[MAX_TOKENS * TOP_K];
    moe_route(m, scores, ids, weights, x, n);
    for (int64_t t = 0; t < n; t++) {
        const float sum = al_sum_f32(weights + t * TOP_K, TOP_K) + 1e-20f;
        for (int j = 0; j < TOP_K; j++) weights[t * TOP_K + j] /= sum;
    }

    memset(out, 0, (size_t)(n * HIDDEN) * sizeof(float));
    for (int e = 0; e < N_EXPERTS; e++) {
        float rows[MAX_TOKENS * HIDDEN], expert_out[MAX_TOKENS * HIDDEN], row_w[MAX_TOKENS];
        int64_t token[MAX_TOKENS], count = 0;
        for (int64_t t = 0; t < n; t++)
            for (int j = 0; j < TOP_K; j++)
                if (ids[t * TOP_K + j] == e) {
                    memcpy(rows + count * HIDDEN, x + t * HIDDEN, HIDDEN * sizeof(float));
                    row_w[count] = weights[t * TOP_K + j];
                    token[count++] = t;
                }
        if (!count) continue;
        ffn_forward(&m->experts[e], expert_out, rows, count);
        for (int64_t r = 0; r < count; r++)
            for (int i = 0; i < HIDDEN; i++)
                out[token[r] * HIDDEN + i] += expert_out[r * HIDDEN + i] * row_w[r];
    }

    float one_hot[MAX_TOKENS * TOP_K * N_EXPERTS] = {0}, load[TOP_K * N_EXPERTS];
    float prob_mean[N_EXPERTS], product[TOP_K * N_EXPERTS];
    for (int64_t t = 0; t < n; t++)
        for (int j = 0; j < TOP_K; j++) one_hot[(t * TOP_K + j) * N_EXPERTS + ids[t * TOP_K + j]] = 1.0f;
    column_means(load, one_hot, n, TOP_K * N_EXPERTS);
    column_means(prob_mean, scores, n, N_EXPERTS);
    for (int j = 0; j < TOP_K; j++)
        for (int e = 0; e < N_EXPERTS; e++)
            product[j * N_EXPERTS + e] = load[j * N_EXPERTS + e] * prob_mean[e];
    m->aux_loss = al_sum_f32(product, TOP_K * N_EXPERTS) * (float)N_EXPERTS * (float)AUX_LOSS_COEF;
}

/* Example 1: the SwiGLU FFN's tensors, step by step. */
static void example_swiglu(al_demo_out *d, al_lang lang, al_rng *rng) {
    enum { B = 2, S = 5, N = B * S };
    al_text *o = &d->text;
    al_demo_header(d, AL_DEMO_PANEL_FFN, L("示例 1：SwiGLU FFN 前向传播",
                                           "Example 1: The SwiGLU FFN forward pass"));
    swiglu_ffn ffn;
    ffn_init(&ffn, rng);
    float x[N * HIDDEN], out[N * HIDDEN];
    al_rng_randn(rng, x, N * HIDDEN);
    ffn_forward(&ffn, out, x, N);

    const int64_t x_shape[3] = {B, S, HIDDEN}, mid_shape[3] = {B, S, INTER};
    char comment[96];
    al_text_printf(o, "\n");
    al_snprintf(comment, sizeof comment, "  # [batch, seq, hidden_size=%d]", HIDDEN);
    al_demo_shape(o, L("输入 x shape: ", "Input x shape: "), x_shape, 3, comment);
    al_snprintf(comment, sizeof comment, "  # [batch, seq, intermediate=%d]", INTER);
    al_demo_shape(o, "gate_proj(x) shape: ", mid_shape, 3, comment);
    al_demo_shape(o, "up_proj(x) shape: ", mid_shape, 3, comment);
    al_demo_shape(o, "silu(gate) shape: ", mid_shape, 3, "");
    al_demo_shape(o, "silu(gate) * up shape: ", mid_shape, 3,
                  L("  # 门控后逐元素相乘", "  # gated: multiplied element by element"));
    al_snprintf(comment, sizeof comment,
                L("  # [batch, seq, hidden_size=%d]（回到原维度）",
                  "  # [batch, seq, hidden_size=%d] (back to the input width)"), HIDDEN);
    al_demo_shape(o, "down_proj(...) shape: ", x_shape, 3, comment);
    al_text_printf(o, "\n%s\n\n", L("验证通过：SwiGLU 输出 shape 与输入相同",
                                    "Check passed: the SwiGLU output has the input's shape"));
}

/* Example 2: SiLU and ReLU at -3 .. 3 (torch.linspace(-3, 3, 7): whole numbers, exact). */
static void example_silu(al_demo_out *d, al_lang lang) {
    enum { N = 7 };
    al_text *o = &d->text;
    al_demo_header(d, AL_DEMO_PANEL_FFN, L("示例 2：SiLU 门控与 ReLU 对比",
                                           "Example 2: The SiLU gate against ReLU"));
    float vals[N], silu[N], relu[N];
    for (int i = 0; i < N; i++) {
        vals[i] = (float)(i - 3);
        silu[i] = al_demo_silu(vals[i]);
        relu[i] = vals[i] > 0.0f ? vals[i] : 0.0f;
    }
    al_text_printf(o, "\n%s", L("输入值:    ", "Inputs:    "));
    al_text_printf(o, "[");
    for (int i = 0; i < N; i++) {
        al_text_printf(o, "%s", i ? ", " : "");
        al_demo_py_float(o, vals[i]);
    }
    al_text_printf(o, "]\nSiLU(x):   ");
    al_demo_py_rounded(o, silu, N, 4);
    al_text_printf(o, "\nReLU(x):   ");
    al_demo_py_rounded(o, relu, N, 4);
    al_text_printf(o, "\n\n%s\n", L("观察：SiLU 在负值区域平滑过渡（有微小负值），ReLU 直接截断为 0",
                                    "Observe: SiLU passes smoothly through the negative side (slightly below zero), ReLU cuts it to 0"));
    al_text_printf(o, "  SiLU(0) = ");
    al_demo_py_float(o, al_demo_silu(0.0f));
    al_text_printf(o, "%s\n", L("  （过原点）", "  (through the origin)"));
    al_text_printf(o, "  %s\n", L("SiLU 最小值出现在 x≈-1.278 附近，SiLU(-1.278)≈-0.278",
                                  "SiLU's minimum is near x≈-1.278, SiLU(-1.278)≈-0.278"));
    al_text_printf(o, "  %s\n\n", L("门控机制 silu(gate) 允许少量负信号通过，比 ReLU 更平滑、梯度更稳定",
                                    "The gate silu(gate) lets a little negative signal through: smoother than ReLU, with steadier gradients"));
}

/* Example 3: the router's probabilities for 6 tokens and the 2 experts each picks. */
static void example_routing(al_demo_out *d, al_lang lang, const moe_ffn *moe, al_rng *rng,
                            float *scores /* [6, num_experts], kept for example 6 */) {
    enum { N = 6 };
    al_text *o = &d->text;
    al_demo_header(d, AL_DEMO_PANEL_FFN, L("示例 3：MoE 路由（gate 打分 + top-k 选择）",
                                           "Example 3: MoE routing (the gate's scores + the top-k choice)"));
    float x[N * HIDDEN], weights[N * TOP_K];
    int64_t ids[N * TOP_K];
    al_rng_randn(rng, x, N * HIDDEN);
    moe_route(moe, scores, ids, weights, x, N);
    if (d->fig) {
        _Static_assert((int)N == (int)AL_DEMO_MOE_TOKENS, "the router chart's tokens are this example's");
        memcpy(d->fig->router, scores, sizeof d->fig->router);
        memcpy(d->fig->chosen, ids, sizeof d->fig->chosen);
    }

    const int64_t scores_shape[2] = {N, N_EXPERTS};
    al_text_printf(o, L("\n配置：num_experts=%d, top-k=%d\n", "\nConfiguration: num_experts=%d, top-k=%d\n"),
                   N_EXPERTS, TOP_K);
    al_text_printf(o, L("输入 token 数: %d\n", "Input tokens: %d\n"), N);
    al_demo_shape(o, L("gate 输出 scores shape: ", "gate output scores shape: "), scores_shape, 2,
                  "  # [n_tokens, num_experts]");
    al_text_printf(o, "\n%s\n", L("每个 token 对各专家的路由概率（softmax 后）:",
                                  "Each token's routing probabilities over the experts (after softmax):"));
    for (int t = 0; t < N; t++) {
        al_text_printf(o, "  token %d: [", t);
        for (int e = 0; e < N_EXPERTS; e++)
            al_text_printf(o, "%s%.3f", e ? ", " : "", (double)scores[t * N_EXPERTS + e]);
        /* sorted(topk_idx[t].tolist()) */
        int64_t a = ids[t * TOP_K], b = ids[t * TOP_K + 1];
        if (a > b) a = ids[t * TOP_K + 1], b = ids[t * TOP_K];
        al_text_printf(o, L("]  → 选中专家 [%lld, %lld]\n", "]  → experts chosen [%lld, %lld]\n"),
                       (long long)a, (long long)b);
    }
    al_text_printf(o, L("\n观察：每个 token 选 %d 个概率最高的专家，其余专家不参与该 token 计算\n\n",
                        "\nObserve: each token picks the %d most likely experts; the others do no work for it\n\n"),
                   TOP_K);
}

/* Example 4: the MoE forward on [2, 5, 16]: each token runs only its top-k experts. */
static void example_moe_forward(al_demo_out *d, al_lang lang, moe_ffn *moe, al_rng *rng,
                                float *x /* [2, 5, hidden], kept for example 7 */) {
    enum { B = 2, S = 5, N = B * S };
    al_text *o = &d->text;
    al_demo_header(d, AL_DEMO_PANEL_FFN, L("示例 4：MoE 前向传播（条件计算）",
                                           "Example 4: The MoE forward pass (conditional computation)"));
    float out[N * HIDDEN];
    al_rng_randn(rng, x, N * HIDDEN);
    moe_forward(moe, out, x, N);
    const int64_t shape[3] = {B, S, HIDDEN};
    char comment[96];
    al_text_printf(o, "\n");
    al_snprintf(comment, sizeof comment, "  # [batch=%d, seq=%d, hidden_size=%d]", B, S, HIDDEN);
    al_demo_shape(o, L("输入 x shape: ", "Input x shape: "), shape, 3, comment);
    al_demo_shape(o, L("MoE 输出 shape: ", "MoE output shape: "), shape, 3,
                  L("  # [batch, seq, hidden_size]（与输入相同）", "  # [batch, seq, hidden_size] (same as the input)"));
    al_text_printf(o, L("\n条件计算说明：每个 token 只激活 %d/%d 个专家\n",
                        "\nConditional computation: each token activates only %d/%d experts\n"), TOP_K, N_EXPERTS);
    al_text_printf(o, L("  总 token 数 = %d，每个 token 仅前向 %d 个专家的 FFN\n",
                        "  tokens in all = %d, each runs the FFN of only %d experts\n"), N, TOP_K);
    /* The script says each token computes less than with the dense FFN; its experts are as
     * wide as the dense FFN, so a token's k experts cost k times as much. */
    al_text_printf(o, L("  相比 Dense FFN（所有 token 过同一个 FFN），MoE 参数更多，每个 token 只算选中的专家；本例专家与 Dense FFN 同宽，每 token 计算量是 Dense 的 %d 倍\n\n",
                        "  Against a dense FFN (every token through the same FFN), MoE has more parameters and each token computes only its chosen experts; here each expert is as wide as the dense FFN, so a token costs %d times the dense FFN's work\n\n"),
                   TOP_K);
}

/* Example 5: parameters of the dense FFN, the whole MoE, and what one token activates. */
static void example_params(al_demo_out *d, al_lang lang, al_rng *rng) {
    al_text *o = &d->text;
    al_demo_header(d, AL_DEMO_PANEL_FFN, L("示例 5：参数量对比", "Example 5: Parameter counts compared"));
    swiglu_ffn dense; /* created by the script for the comparison: its init draws */
    ffn_init(&dense, rng);
    const int dense_params = 3 * HIDDEN * INTER, expert_params = dense_params;
    const int gate_params = HIDDEN * N_EXPERTS;
    const int moe_total = N_EXPERTS * expert_params + gate_params;
    const int active = expert_params * TOP_K + gate_params;
    al_text_printf(o, L("\nDense FFN 参数量: %d\n", "\nDense FFN parameters: %d\n"), dense_params);
    al_text_printf(o, L("  = 3 个 Linear: gate(%dx%d) + up(%dx%d) + down(%dx%d)\n",
                        "  = 3 Linear layers: gate(%dx%d) + up(%dx%d) + down(%dx%d)\n"),
                   HIDDEN, INTER, HIDDEN, INTER, INTER, HIDDEN);
    al_text_printf(o, "  = 3 x %d x %d = %d\n", HIDDEN, INTER, 3 * HIDDEN * INTER);
    al_text_printf(o, L("\nMoE 总参数量（%d 个专家 + gate）: %d\n",
                        "\nMoE parameters in all (%d experts + gate): %d\n"), N_EXPERTS, moe_total);
    al_text_printf(o, L("  = %d x 专家参数 + gate(%dx%d)\n", "  = %d x expert parameters + gate(%dx%d)\n"),
                   N_EXPERTS, HIDDEN, N_EXPERTS);
    al_text_printf(o, "  = %d x %d + %d\n", N_EXPERTS, expert_params, gate_params);
    al_text_printf(o, L("\nMoE 每 token 激活参数量（%d 个专家 + gate）: %d\n",
                        "\nMoE parameters active per token (%d experts + gate): %d\n"), TOP_K, active);
    al_text_printf(o, "\n%s\n", L("对比：", "Compared:"));
    const double total_ratio = (double)moe_total / dense_params;
    al_text_printf(o, L("  MoE 总参数 / Dense 参数 = %.2f 倍  （容量更大）\n",
                        "  MoE parameters / dense parameters = %.2f times  (more capacity)\n"), total_ratio);
    /* The script calls this the smaller cost per token; with experts as wide as the dense
     * FFN it is the larger one. */
    al_text_printf(o, L("  MoE 激活参数 / Dense 参数 = %.2f 倍  （专家与 Dense 同宽，单 token 计算量更大）\n",
                        "  MoE active parameters / dense parameters = %.2f times  (experts as wide as the dense FFN: more work per token)\n"),
                   (double)active / dense_params);
    al_text_printf(o, L("  → MoE 用 %.1fx 参数，每个 token 只算其中 %d/%d = %.0f%% 的专家\n\n",
                        "  → MoE holds %.1fx the parameters, and each token computes only %d/%d = %.0f%% of its experts\n\n"),
                   total_ratio, TOP_K, N_EXPERTS, 100.0 * TOP_K / N_EXPERTS);
}

/* Example 6: example 3's top-2 weights (sorted) before and after dividing by their sum. */
static void example_renormalise(al_demo_out *d, al_lang lang, const float *scores /* [6, E] */) {
    enum { N = 6, SHOWN = 3 };
    al_text *o = &d->text;
    al_demo_header(d, AL_DEMO_PANEL_FFN, L("示例 6：top-2 路由权重归一化",
                                           "Example 6: Renormalising the top-2 routing weights"));
    float raw[N * TOP_K], normed[N * TOP_K], sums[N], ones[N];
    int64_t ids[N * TOP_K];
    for (int t = 0; t < N; t++) {
        al_topk_torch(ids + t * TOP_K, raw + t * TOP_K, scores + t * N_EXPERTS, N_EXPERTS, TOP_K, 1);
        const float sum = al_sum_f32(raw + t * TOP_K, TOP_K) + 1e-20f;
        for (int j = 0; j < TOP_K; j++) normed[t * TOP_K + j] = raw[t * TOP_K + j] / sum;
        sums[t] = al_sum_f32(normed + t * TOP_K, TOP_K);
        ones[t] = 1.0f;
    }
    if (d->fig) {
        memcpy(d->fig->renorm_ids, ids, sizeof d->fig->renorm_ids);
        memcpy(d->fig->renorm, normed, sizeof d->fig->renorm);
    }
    for (int pass = 0; pass < 2; pass++) {
        const float *w = pass ? normed : raw;
        if (pass) al_text_printf(o, "\n%s\n", L("归一化后（除以权重和）:", "After (divided by their sum):"));
        else
            al_text_printf(o, L("\n归一化前（softmax 后的 top-%d 原始权重）:\n",
                                "\nBefore (the raw top-%d weights after softmax):\n"), TOP_K);
        for (int t = 0; t < SHOWN; t++) {
            al_text_printf(o, L("  token %d: 选中专家 [%lld, %lld], 权重 ", "  token %d: experts [%lld, %lld], weights "),
                           t, (long long)ids[t * TOP_K], (long long)ids[t * TOP_K + 1]);
            al_demo_py_rounded(o, w + t * TOP_K, TOP_K, 4);
            al_text_printf(o, L(", 和=%.4f\n", ", sum=%.4f\n"), (double)al_sum_f32(w + t * TOP_K, TOP_K));
        }
    }
    al_text_printf(o, L("\n验证：归一化后每个 token 的 top-%d 权重和均为 1？%s\n",
                        "\nCheck: do every token's top-%d weights sum to 1 after renormalising? %s\n"),
                   TOP_K, al_demo_bool(al_demo_allclose(sums, ones, N, 1e-5f)));
    al_text_printf(o, "  %s\n\n", L("→ 归一化保证被选中专家的加权输出不改变整体量级",
                                    "→ renormalising keeps the weighted sum of the chosen experts at the same scale"));
}

/* Example 7: the load-balancing loss of example 4's forward, and its parts. */
static void example_aux_loss(al_demo_out *d, al_lang lang, moe_ffn *moe, const float *x /* [10, E] */) {
    enum { N = 10 };
    al_text *o = &d->text;
    al_demo_header(d, AL_DEMO_PANEL_FFN, L("示例 7：负载均衡辅助损失", "Example 7: The load-balancing auxiliary loss"));
    float out[N * HIDDEN], scores[N * N_EXPERTS], weights[N * TOP_K];
    int64_t ids[N * TOP_K];
    moe_forward(moe, out, x, N);
    const double aux = moe->aux_loss;

    /* load: one_hot(ids) as [n·k, num_experts], mean(0); P: scores.mean(0). */
    moe_route(moe, scores, ids, weights, x, N);
    float one_hot[N * TOP_K * N_EXPERTS] = {0}, load[N_EXPERTS], prob_mean[N_EXPERTS], product[N_EXPERTS];
    for (int r = 0; r < N * TOP_K; r++) one_hot[r * N_EXPERTS + ids[r]] = 1.0f;
    column_means(load, one_hot, N * TOP_K, N_EXPERTS);
    column_means(prob_mean, scores, N, N_EXPERTS);
    for (int e = 0; e < N_EXPERTS; e++) product[e] = load[e] * prob_mean[e];
    if (d->fig) {
        memcpy(d->fig->load, load, sizeof load);
        memcpy(d->fig->prob_mean, prob_mean, sizeof prob_mean);
        d->fig->aux_loss = moe->aux_loss;
    }

    al_text_printf(o, "\n%s", L("每个专家被选中的频率 f_i（load）: ", "How often each expert is chosen, f_i (load): "));
    al_demo_py_rounded(o, load, N_EXPERTS, 4);
    al_text_printf(o, L("\n  （理想情况下每个专家 = %.2f = 1/num_experts）\n",
                        "\n  (ideally every expert = %.2f = 1/num_experts)\n"), 1.0 / N_EXPERTS);
    al_text_printf(o, "\n%s", L("每个专家的平均路由概率 P_i: ", "Each expert's mean routing probability P_i: "));
    al_demo_py_rounded(o, prob_mean, N_EXPERTS, 4);
    al_text_printf(o, L("\n  （理想情况下每个专家 = %.2f = 1/num_experts）\n",
                        "\n  (ideally every expert = %.2f = 1/num_experts)\n"), 1.0 / N_EXPERTS);
    al_text_printf(o, "\n%s\n", L("辅助损失 = (f_i * P_i).sum() * num_experts * aux_loss_coef",
                                  "Auxiliary loss = (f_i * P_i).sum() * num_experts * aux_loss_coef"));
    /* The script leaves out the factor k: aux_loss sums the load of each top-k slot. */
    al_text_printf(o, L("  = (%.4f) * %d * ", "  = (%.4f) * %d * "),
                   (double)al_sum_f32(product, N_EXPERTS), N_EXPERTS);
    al_demo_py_float(o, AUX_LOSS_COEF);
    al_text_printf(o, L(" * %d  （load 按 top-%d 的每个位置各算一次）\n",
                        " * %d  (the load is counted once for each of the top-%d slots)\n"), TOP_K, TOP_K);
    al_text_printf(o, "  = %.6f\n", aux);
    al_text_printf(o, "\n%s\n", L("作用：当某个专家被过度使用时 f_i 和 P_i 都变大，损失增大 → 反向传播惩罚 → 鼓励均衡",
                                  "Why: when an expert is overused, f_i and P_i both grow and so does the loss → backpropagation penalises it → balance is encouraged"));
    al_text_printf(o, L("  理想均衡时损失 = (1/%d)^2 * %d^2 * %d * ", "  At perfect balance the loss = (1/%d)^2 * %d^2 * %d * "),
                   N_EXPERTS, N_EXPERTS, TOP_K);
    al_demo_py_float(o, AUX_LOSS_COEF);
    al_text_printf(o, "%s\n", L(" ... 的下界", " ... (its lower bound)"));
    al_text_printf(o, L("  当前损失 %.6f（越接近均衡越小）\n", "  loss now %.6f (the closer to balance, the smaller)\n"), aux);
    al_text_printf(o, L("\n验证：辅助损失非负？%s\n\n", "\nCheck: is the auxiliary loss non-negative? %s\n\n"),
                   al_demo_bool(aux >= 0));
}

al_status al_demo_mlp_moe(al_demo_out *d, al_lang lang, int64_t seed, al_rng *rng, al_error *err) {
    moe_ffn *moe = malloc(sizeof *moe); /* 25 KB: on the heap, not the WebAssembly stack */
    if (!moe) return al_fail(err, AL_ERR_NOMEM, "out of memory");
    al_rng_seed(rng, seed >= 0 ? (uint64_t)seed : 42);
    example_swiglu(d, lang, rng);
    example_silu(d, lang);

    /* MoEFFN(hidden, intermediate, 4, 2): the router's init, then each expert's. */
    al_rng_linear_init(rng, moe->router, N_EXPERTS, HIDDEN);
    for (int e = 0; e < N_EXPERTS; e++) ffn_init(&moe->experts[e], rng);
    float scores[6 * N_EXPERTS], x[10 * HIDDEN];
    example_routing(d, lang, moe, rng, scores);
    example_moe_forward(d, lang, moe, rng, x);
    example_params(d, lang, rng);
    example_renormalise(d, lang, scores);
    example_aux_loss(d, lang, moe, x);
    al_demo_header(d, AL_DEMO_PANEL_NONE, L("所有示例运行完毕！", "All examples finished!"));
    free(moe);
    return AL_OK;
}
