/* demo_generation.c — the tutorial's 10-generation-demo.py, example by example: greedy
 * decoding, temperature, top-k, top-p, the repetition penalty, the whole sampler over 8 steps,
 * and EOS in a batch. The toy model (nn.Embedding then nn.Linear, drawn as PyTorch draws them),
 * its logits, the draws (torch.multinomial, randn) and every printed number come from the core;
 * the distributions are the sampler's own stages (al_sampler_stages), the ones the model view
 * draws. */
#include "attnlab/demos.h"
#include "attnlab/model.h"
#include "demos/demo.h"
#include "torch/softmax.h"

#include <math.h>
#include <string.h>

enum { VOCAB = 12, HIDDEN = 16 };
enum { MAX_IDS = 16 }; /* example 6: a prompt of 3 and 8 new tokens */
_Static_assert((int)VOCAB == (int)AL_DEMO_GEN_VOCAB, "the charts' vocabulary (demos.h) is the script's");
_Static_assert(AL_SAMPLER_STAGES + 5 == AL_DEMO_GEN_STAGE_ROWS, "al_demo_sampler_stages' rows: the stages and 5 more");

/* The script's ToyLogitModel: logits = linear(embed(input_ids)), no bias. */
typedef struct {
    float embed[VOCAB * HIDDEN]; /* [vocab, hidden] nn.Embedding.weight */
    float w[VOCAB * HIDDEN];     /* [vocab, hidden] nn.Linear.weight */
} toy_model;

/* In the order the constructor draws them: nn.Embedding's normal_(0, 1), then nn.Linear's
 * kaiming_uniform_. */
static void toy_init(toy_model *m, al_rng *rng) {
    al_rng_normal(rng, m->embed, VOCAB * HIDDEN, 0.0f, 1.0f);
    al_rng_linear_init(rng, m->w, VOCAB, HIDDEN);
}

/* model(input_ids)[:, -1, :]: only the last id's row matters. nn.Linear is one sgemm, which in
 * the reference BLAS sums each output over hidden left to right in float32 (al_dot_f32). */
static void toy_logits(const toy_model *m, int64_t last_id, float logits[VOCAB]) {
    const float *h = m->embed + last_id * HIDDEN;
    for (int v = 0; v < VOCAB; v++) logits[v] = al_dot_f32(h, m->w + v * HIDDEN, HIDDEN);
}

/* Python's repr(round(v, digits)): v correctly rounded to `digits` decimals (ties to even, as
 * round does), trailing zeros dropped down to one ("0.0", "-0.0" when a negative v rounds to
 * zero, "1.0"). Exact for |v| < 10^15, where the rounded decimal is the shortest one that reads
 * back as the rounded double. */
static void print_round(al_text *o, double v, int digits) {
    char buf[64];
    al_snprintf(buf, sizeof buf, "%.*f", digits, v);
    size_t n = strlen(buf);
    while (n > 0 && buf[n - 1] == '0' && buf[n - 2] != '.') n--;
    al_text_put(o, buf, n);
}

/* [round(v, digits) for v in values] as Python prints the list. */
static void print_rounded(al_text *o, const float *v, int n, int digits) {
    al_text_puts(o, "[");
    for (int i = 0; i < n; i++) {
        if (i) al_text_puts(o, ", ");
        print_round(o, (double)v[i], digits);
    }
    al_text_puts(o, "]");
}

static void print_ids(al_text *o, const int32_t *ids, int n) {
    al_text_puts(o, "[");
    for (int i = 0; i < n; i++) al_text_printf(o, i ? ", %d" : "%d", (int)ids[i]);
    al_text_puts(o, "]");
}

static void print_bools(al_text *o, const int *v, int n) {
    al_text_puts(o, "[");
    for (int i = 0; i < n; i++) al_text_printf(o, i ? ", %s" : "%s", al_demo_bool(v[i]));
    al_text_puts(o, "]");
}

/* The sampler's stages [AL_SAMPLER_STAGES, VOCAB]: raw, tempered, penalised, top-k, top-p. */
enum { RAW = 0, TEMPERED = 1, PENALISED = 2, TOP_K = 3, TOP_P = 4 };
static al_status stages_of(float stages[AL_SAMPLER_STAGES * VOCAB], const float logits[VOCAB],
                           const int32_t *seen, int64_t n_seen, al_sampler_params p,
                           al_error *err) {
    return al_sampler_stages(logits, VOCAB, seen, n_seen, &p, stages, AL_SAMPLER_STAGES * VOCAB,
                             err);
}

/* ids by decreasing logit (torch.sort(descending=True) and torch.topk; ties, which a float
 * draw does not produce, to the smaller id). */
static void order_by_logit(int32_t order[VOCAB], const float logits[VOCAB]) {
    for (int i = 0; i < VOCAB; i++) {
        int at = i;
        while (at > 0 && logits[order[at - 1]] < logits[i]) {
            order[at] = order[at - 1];
            at--;
        }
        order[at] = (int32_t)i;
    }
}

/* Example 4's view of a distribution: the ids by decreasing logit, F.softmax of the sorted
 * logits (the same distribution as the stage's, summed in sorted order, which can change a last
 * bit) and its torch.cumsum, which accumulates a float32 row in double, each partial sum rounded
 * to float. */
static void sorted_cumulative(int32_t order[VOCAB], float sorted_probs[VOCAB], float cumulative[VOCAB],
                              const float logits[VOCAB]) {
    float sorted_logits[VOCAB];
    order_by_logit(order, logits);
    for (int i = 0; i < VOCAB; i++) sorted_logits[i] = logits[order[i]];
    al_softmax_torch_f32(sorted_probs, sorted_logits, VOCAB);
    double sum = 0.0;
    for (int i = 0; i < VOCAB; i++) cumulative[i] = (float)(sum += sorted_probs[i]);
}

/* Keeps what the chart of example 1, 3, 4 or 5 (slot 0 to 3) draws, al_demo_sampler_stages'
 * rows: its stages, its logits, the penalised ones (NULL: none), their order and cumulative
 * probability, and its marks. */
static void keep_stages(al_demo_out *d, int slot, const float st[AL_SAMPLER_STAGES * VOCAB],
                        const float logits[VOCAB], const float *penalised, const float marks[VOCAB]) {
    if (!d->fig) return;
    float *row = d->fig->gen_stages[slot];
    int32_t order[VOCAB];
    float sorted[VOCAB], cumulative[VOCAB];
    sorted_cumulative(order, sorted, cumulative, logits);
    memcpy(row, st, AL_SAMPLER_STAGES * VOCAB * sizeof(float));
    row += AL_SAMPLER_STAGES * VOCAB;
    for (int i = 0; i < VOCAB; i++) {
        row[i] = logits[i];
        row[VOCAB + i] = penalised ? penalised[i] : logits[i];
        row[2 * VOCAB + i] = (float)order[i];
        row[3 * VOCAB + i] = cumulative[i];
        row[4 * VOCAB + i] = marks[i];
    }
}

/* Example 1: greedy decoding, the argmax of the last position's logits. */
static al_status example_greedy(al_demo_out *d, al_lang lang, const toy_model *m,
                                float logits[VOCAB], al_error *err) {
    al_text *o = &d->text;
    al_demo_header(d, AL_DEMO_PANEL_SAMPLER,
                   L("示例 1：贪心解码（argmax）", "Example 1: Greedy decoding (argmax)"));
    const int32_t input_ids[3] = {1, 3, 5};
    toy_logits(m, input_ids[2], logits);
    float st[AL_SAMPLER_STAGES * VOCAB];
    al_status s = stages_of(st, logits, NULL, 0, (al_sampler_params){1.0, 0, 1.0, 1.0}, err);
    if (s != AL_OK) return s;
    const int64_t greedy = al_sample_greedy(logits, VOCAB);
    const int64_t shape[2] = {1, VOCAB};
    float marks[VOCAB] = {0};
    marks[greedy] = 1.0f;
    keep_stages(d, 0, st, logits, NULL, marks);

    al_text_printf(o, "\n%s[", L("输入 input_ids: ", "Input input_ids: "));
    print_ids(o, input_ids, 3);
    al_text_printf(o, "]\n%s", L("最后位置 logits shape: ", "Logits shape at the last position: "));
    al_text_size(o, shape, 2);
    al_text_printf(o, "  # [batch=1, vocab_size=%d]\nlogits: ", VOCAB);
    print_rounded(o, logits, VOCAB, 3);
    al_text_printf(o, "\n\n%s", L("softmax 后概率: ", "Probabilities after softmax: "));
    print_rounded(o, st + RAW * VOCAB, VOCAB, 4);
    al_text_printf(o, L("\n贪心解码选择的 token: %lld（概率最高的）\n",
                        "\nToken chosen by greedy decoding: %lld (the most probable one)\n"),
                   (long long)greedy);
    al_text_printf(o, "%s%.4f\n", L("该 token 概率: ", "Its probability: "),
                   (double)st[RAW * VOCAB + greedy]);
    al_text_printf(o, "\n%s\n\n",
                   L("特点：贪心解码每步取概率最大的 token，输出确定但容易重复、缺乏多样性",
                     "Trait: greedy decoding takes the most probable token at every step; its output is deterministic but repeats easily and lacks diversity"));
    return AL_OK;
}

/* Example 2: softmax(logits / T) for T = 0.5, 1, 2: its largest probability and its entropy. */
static al_status example_temperature(al_demo_out *d, al_lang lang, const float logits[VOCAB],
                                     al_error *err) {
    al_text *o = &d->text;
    al_demo_header(d, AL_DEMO_PANEL_SAMPLER,
                   L("示例 2：温度采样（temperature）", "Example 2: Temperature sampling"));
    al_text_printf(o, "\n%s", L("原始 logits: ", "Raw logits: "));
    print_rounded(o, logits, VOCAB, 3);
    al_text_puts(o, "\n");
    static const struct { double t; const char *shown; } TEMPS[3] = {
        {0.5, "0.5"}, {1.0, "1.0"}, {2.0, "2.0"}}; /* shown: Python's str(float) */
    for (int k = 0; k < 3; k++) {
        float st[AL_SAMPLER_STAGES * VOCAB];
        al_status s = stages_of(st, logits, NULL, 0, (al_sampler_params){TEMPS[k].t, 0, 1.0, 1.0},
                                err);
        if (s != AL_OK) return s;
        const float *p = st + TEMPERED * VOCAB;
        /* -(p * (p + 1e-20).log()).sum(), every step in float32, the sum in PyTorch's order;
         * logf may differ from PyTorch's SLEEF log by an ulp (in 2.5% of such rows), which
         * changed no printed entropy in 20000 rows tried */
        float terms[VOCAB], top1 = p[0];
        for (int i = 0; i < VOCAB; i++) {
            terms[i] = p[i] * logf(p[i] + 1e-20f);
            top1 = p[i] > top1 ? p[i] : top1;
        }
        const float entropy = -al_sum_f32(terms, VOCAB);
        if (d->fig) {
            memcpy(d->fig->temp_probs + k * VOCAB, p, VOCAB * sizeof(float));
            d->fig->temp_top[k] = top1;
            d->fig->temp_entropy[k] = entropy;
        }
        al_text_printf(o, "\n  temperature=%s:\n    %s", TEMPS[k].shown, L("概率: ", "probabilities: "));
        print_rounded(o, p, VOCAB, 4);
        al_text_printf(o, L("\n    最高概率: %.4f，熵: %.4f\n",
                            "\n    highest probability: %.4f, entropy: %.4f\n"),
                       (double)top1, (double)entropy);
    }
    al_text_printf(o, "\n%s\n", L("观察：", "Observe:"));
    al_text_printf(o, "%s\n", L("  temperature < 1 → 分布更尖锐（倾向高概率 token），确定性增强",
                                "  temperature < 1 → a sharper distribution (favouring likely tokens), more deterministic"));
    al_text_printf(o, "%s\n", L("  temperature > 1 → 分布更平坦（低概率 token 机会增加），多样性增强",
                                "  temperature > 1 → a flatter distribution (unlikely tokens get more chances), more diverse"));
    al_text_printf(o, "%s\n\n", L("  temperature → 0  → 退化为贪心解码",
                                  "  temperature → 0  → it becomes greedy decoding"));
    return AL_OK;
}

/* Example 3: top-k with k = 5: the logits below the 5th largest set to -inf, then softmax. */
static al_status example_top_k(al_demo_out *d, al_lang lang, const float logits[VOCAB],
                               al_error *err) {
    enum { K = 5 };
    al_text *o = &d->text;
    al_demo_header(d, AL_DEMO_PANEL_SAMPLER, L("示例 3：Top-K 采样", "Example 3: Top-K sampling"));
    float st[AL_SAMPLER_STAGES * VOCAB];
    al_status s = stages_of(st, logits, NULL, 0, (al_sampler_params){1.0, K, 1.0, 1.0}, err);
    if (s != AL_OK) return s;
    const float *probs = st + RAW * VOCAB, *probs_topk = st + TOP_K * VOCAB;
    int32_t order[VOCAB];
    order_by_logit(order, logits);
    float top_probs[K], kept[VOCAB];
    int n_kept = 0;
    for (int i = 0; i < K; i++) top_probs[i] = probs[order[i]];
    float marks[VOCAB];
    for (int i = 0; i < VOCAB; i++) {
        marks[i] = probs_topk[i] > 0.0f;
        if (probs_topk[i] > 0.0f) kept[n_kept++] = probs_topk[i]; /* in id order, as printed */
    }
    keep_stages(d, 1, st, logits, NULL, marks);

    al_text_printf(o, L("\n原始概率（%d 个 token）: ", "\nRaw probabilities (%d tokens): "), VOCAB);
    print_rounded(o, probs, VOCAB, 4);
    al_text_printf(o, L("\nTop-%d 的 token 索引: ", "\nTop-%d token ids: "), K);
    print_ids(o, order, K);
    al_text_printf(o, L("\nTop-%d 概率（未归一化）: ", "\nTop-%d probabilities (not renormalized): "), K);
    print_rounded(o, top_probs, K, 4);
    al_text_printf(o, L("\nTop-%d 重新归一化后概率: ", "\nTop-%d probabilities after renormalization: "), K);
    print_rounded(o, kept, n_kept, 4);
    al_text_printf(o, L("\n\n被屏蔽的 token 概率变为 0，保留的 %d 个 token 概率重新归一化（和为 1）\n",
                        "\n\nThe masked tokens' probabilities become 0; the %d kept tokens' probabilities are renormalized (they sum to 1)\n"),
                   K);
    al_text_printf(o, L("验证：非 top-%d 的 logits 已设为 -inf\n\n",
                        "Check: the logits outside the top-%d are set to -inf\n\n"),
                   K);
    return AL_OK;
}

/* Example 4: top-p with p = 0.6: in decreasing order, a token out once the probability before
 * it exceeds p (MiniMind's mask shifted right by one, so the first is always kept). */
static al_status example_top_p(al_demo_out *d, al_lang lang, const float logits[VOCAB],
                               al_error *err) {
    al_text *o = &d->text;
    al_demo_header(d, AL_DEMO_PANEL_SAMPLER,
                   L("示例 4：Top-P（nucleus）采样", "Example 4: Top-P (nucleus) sampling"));
    float st[AL_SAMPLER_STAGES * VOCAB];
    al_status s = stages_of(st, logits, NULL, 0, (al_sampler_params){1.0, 0, 0.6, 1.0}, err);
    if (s != AL_OK) return s;
    const float *probs_topp = st + TOP_P * VOCAB;
    int32_t order[VOCAB], kept_ids[VOCAB];
    float sorted_probs[VOCAB], cumulative[VOCAB], kept_probs[VOCAB], marks[VOCAB];
    int mask[VOCAB], n_kept = 0;
    sorted_cumulative(order, sorted_probs, cumulative, logits);
    for (int i = 0; i < VOCAB; i++) {
        mask[i] = !(probs_topp[order[i]] > 0.0f); /* the sampler's top-p stage: out is 0 */
        marks[order[i]] = !mask[i];
        if (!mask[i]) kept_ids[n_kept] = order[i], kept_probs[n_kept++] = sorted_probs[i];
    }
    keep_stages(d, 2, st, logits, NULL, marks);

    al_text_printf(o, "\n%s\n%s", L("按概率降序排列:", "Sorted by decreasing probability:"),
                   L("  排序后 token 索引: ", "  token ids, sorted: "));
    print_ids(o, order, VOCAB);
    al_text_printf(o, "\n%s", L("  排序后概率: ", "  probabilities, sorted: "));
    print_rounded(o, sorted_probs, VOCAB, 4);
    al_text_printf(o, "\n%s", L("  累计概率:   ", "  cumulative:   "));
    print_rounded(o, cumulative, VOCAB, 4);
    al_text_printf(o, "\n\n%s", L("  屏蔽掩码（True=移除）: ", "  mask (True = removed): "));
    print_bools(o, mask, VOCAB);
    al_text_printf(o, L("\n  Top-P=%s 保留的 token 索引: ", "\n  token ids kept by Top-P=%s: "), "0.6");
    print_ids(o, kept_ids, n_kept);
    al_text_printf(o, "\n%s", L("  保留 token 概率: ", "  probabilities of the kept tokens: "));
    print_rounded(o, kept_probs, n_kept, 4);
    al_text_printf(o, "\n\n%s", L("  Top-P 采样后概率（原始顺序）: ",
                                  "  probabilities after Top-P (in the original order): "));
    print_rounded(o, probs_topp, VOCAB, 4);
    al_text_printf(o, "\n\n%s\n\n",
                   L("观察：Top-P 保留的高概率 token 数量是动态的，概率分布越集中保留越少",
                     "Observe: the number of likely tokens Top-P keeps varies; the more concentrated the distribution, the fewer it keeps"));
    return AL_OK;
}

/* Example 5: the repetition penalty 1.3 on the ids of [1, 3, 5, 1, 3]. */
static al_status example_penalty(al_demo_out *d, al_lang lang, const toy_model *m,
                                 al_error *err) {
    enum { N = 5 };
    const double penalty = 1.3;
    al_text *o = &d->text;
    al_demo_header(d, AL_DEMO_PANEL_SAMPLER,
                   L("示例 5：重复惩罚（repetition penalty）", "Example 5: Repetition penalty"));
    const int32_t generated[N] = {1, 3, 5, 1, 3};
    /* torch.unique: the distinct ids, sorted */
    int32_t seen[N];
    int n_seen = 0;
    for (int32_t id = 0; id < VOCAB; id++)
        for (int i = 0; i < N; i++)
            if (generated[i] == id) {
                seen[n_seen++] = id;
                break;
            }
    float raw[VOCAB], penalized[VOCAB], st[AL_SAMPLER_STAGES * VOCAB];
    toy_logits(m, generated[N - 1], raw);
    memcpy(penalized, raw, sizeof raw);
    al_status s = al_sampler_penalise(penalized, VOCAB, seen, n_seen, penalty, err);
    if (s == AL_OK)
        s = stages_of(st, raw, seen, n_seen, (al_sampler_params){1.0, 0, 1.0, penalty}, err);
    if (s != AL_OK) return s;
    float marks[VOCAB] = {0};
    for (int i = 0; i < n_seen; i++) marks[seen[i]] = 1.0f;
    keep_stages(d, 3, st, raw, penalized, marks);

    al_text_printf(o, "\n%s", L("已生成 token: ", "Generated tokens: "));
    print_ids(o, generated, N);
    al_text_printf(o, "\n%s", L("原始 logits: ", "Raw logits: "));
    print_rounded(o, raw, VOCAB, 3);
    al_text_printf(o, "\n\n%s", L("已出现过的 token: ", "Tokens seen so far: "));
    print_ids(o, seen, n_seen);
    al_text_printf(o, "\n%s", L("惩罚后 logits: ", "Logits after the penalty: "));
    print_rounded(o, penalized, VOCAB, 3);
    al_text_printf(o, "\n\n%s\n", L("对比（已出现 token 的 logits 变化）:",
                                    "Compared (how the logits of the seen tokens change):"));
    for (int i = 0; i < n_seen; i++) {
        const float before = raw[seen[i]], after = penalized[seen[i]];
        /* The script prints '降低' (lowered) in both branches; a logit of exactly 0 stays 0, so
         * the other branch says unchanged. */
        al_text_printf(o, L("  token %d: %.3f → %.3f（%s）\n", "  token %d: %.3f → %.3f (%s)\n"),
                       (int)seen[i], (double)before, (double)after,
                       after < before ? L("降低", "lowered") : L("不变", "unchanged"));
    }
    al_text_printf(o, "\n%s\n", L("惩罚前后已出现 token 的概率:",
                                  "Probabilities of the seen tokens before and after the penalty:"));
    for (int i = 0; i < n_seen; i++)
        al_text_printf(o, "  token %d: %.4f → %.4f\n", (int)seen[i],
                       (double)st[RAW * VOCAB + seen[i]], (double)st[PENALISED * VOCAB + seen[i]]);
    al_text_printf(o, "\n%s\n", L("观察：重复惩罚降低已出现 token 的概率，减少模型重复同一内容的倾向",
                                  "Observe: the repetition penalty lowers the probabilities of the tokens already seen, so the model repeats itself less"));
    al_text_printf(o, "%s\n\n", L("  非对称处理：正 logit 除以系数（缩小），负 logit 乘以系数（更负），保证单调性",
                                  "  Asymmetric: a positive logit is divided by the factor (smaller), a negative one multiplied (more negative), so the penalty always lowers it"));
    return AL_OK;
}

/* Example 6: 8 steps of the whole sampler (temperature 0.8, top-k 5, top-p 0.8, repetition
 * penalty 1.2), each token drawn by torch.multinomial from the last stage. */
static al_status example_sampler(al_demo_out *d, al_lang lang, const toy_model *m, al_rng *rng,
                                 al_error *err) {
    enum { PROMPT = 3, STEPS = 8 };
    _Static_assert((int)STEPS == (int)AL_DEMO_GEN_DRAWS, "the draws' chart has this example's steps");
    const al_sampler_params p = {0.8, 5, 0.8, 1.2};
    al_text *o = &d->text;
    al_demo_header(d, AL_DEMO_PANEL_SAMPLER,
                   L("示例 6：组合策略（完整采样流程）", "Example 6: Everything together (the whole sampling procedure)"));
    int32_t ids[MAX_IDS] = {1, 3, 5};
    int n = PROMPT;
    al_text_printf(o, "\n%s", L("初始 input_ids: ", "Initial input_ids: "));
    print_ids(o, ids, n);
    al_text_printf(o, "\n%s\n\n%s\n",
                   L("采样参数: temperature=0.8, top_k=5, top_p=0.8, repetition_penalty=1.2",
                     "Sampler settings: temperature=0.8, top_k=5, top_p=0.8, repetition_penalty=1.2"),
                   L("生成过程:", "Generation:"));
    for (int step = 0; step < STEPS; step++) {
        float logits[VOCAB], st[AL_SAMPLER_STAGES * VOCAB];
        toy_logits(m, ids[n - 1], logits);
        const int64_t next = al_sample(logits, VOCAB, ids, n, &p, rng, st, AL_SAMPLER_STAGES * VOCAB, err);
        if (next < 0) return err && err->status != AL_OK ? err->status : AL_ERR_ARG;
        const float *probs = st + TOP_P * VOCAB;
        int candidates = 0; /* (probs > 0).sum() */
        for (int i = 0; i < VOCAB; i++) candidates += probs[i] > 0.0f;
        if (d->fig) {
            memcpy(d->fig->draw_probs + step * VOCAB, probs, VOCAB * sizeof(float));
            d->fig->drawn[step] = (int32_t)next;
        }
        al_text_printf(o, L("  步骤 %d: 候选数=%d, 选中 token=%lld, 其概率=%.4f\n",
                            "  step %d: candidates=%d, token chosen=%lld, its probability=%.4f\n"),
                       step + 1, candidates, (long long)next, (double)probs[next]);
        ids[n++] = (int32_t)next;
    }
    al_text_printf(o, "\n%s", L("最终生成序列: ", "Final sequence: "));
    print_ids(o, ids, n);
    al_text_printf(o, "\n\n%s\n\n",
                   L("完整流程顺序：logits → /temperature → 重复惩罚 → top-k → top-p → softmax → 多项分布采样",
                     "The whole order: logits → /temperature → repetition penalty → top-k → top-p → softmax → multinomial sampling"));
    return AL_OK;
}

/* Example 7: three sequences of a batch ending at different steps: random logits (randn),
 * EOS forced for sequence 0 at step 2 and sequence 1 at step 4, argmax, and every finished
 * sequence given EOS from then on. */
static void example_eos(al_demo_out *d, al_lang lang, int64_t seed, al_rng *rng) {
    enum { BATCH = 3, PROMPT = 2, EOS = 11, MAX_NEW = 8 };
    _Static_assert((int)BATCH == (int)AL_DEMO_GEN_BATCH && (int)MAX_NEW == (int)AL_DEMO_GEN_MAX_NEW,
                   "the EOS chart's batch and steps are this example's");
    al_text *o = &d->text;
    al_demo_header(d, AL_DEMO_PANEL_SAMPLER,
                   L("示例 7：EOS 批量处理（不同序列异步结束）",
                     "Example 7: EOS in a batch (sequences that end at different steps)"));
    int32_t seqs[BATCH][PROMPT + MAX_NEW] = {{1, 2}, {3, 4}, {5, 6}};
    int finished[BATCH] = {0}, len = PROMPT;
    al_text_printf(o, L("\n批次大小: %d, EOS token id: %d, 最大生成长度: %d\n",
                        "\nBatch size: %d, EOS token id: %d, max new tokens: %d\n"),
                   BATCH, EOS, MAX_NEW);
    al_text_printf(o, "%s", L("初始 finished: ", "Initial finished: "));
    print_bools(o, finished, BATCH);
    al_text_puts(o, "\n\n");

    al_rng_seed(rng, seed >= 0 ? (uint64_t)seed : 7);
    for (int step = 0; step < MAX_NEW; step++) {
        float logits[BATCH * VOCAB];
        int32_t next[BATCH];
        al_rng_randn(rng, logits, BATCH * VOCAB);
        if (step == 1) logits[0 * VOCAB + EOS] = 100.0f;
        if (step == 3) logits[1 * VOCAB + EOS] = 100.0f;
        int all = 1;
        for (int b = 0; b < BATCH; b++) {
            next[b] = finished[b] ? EOS : (int32_t)al_sample_greedy(logits + b * VOCAB, VOCAB);
            finished[b] |= next[b] == EOS;
            seqs[b][len] = next[b];
            all &= finished[b];
            if (d->fig) {
                d->fig->eos_next[b * MAX_NEW + step] = next[b];
                d->fig->eos_finished[b * MAX_NEW + step] = finished[b];
            }
        }
        len++;
        if (d->fig) d->fig->eos_steps = step + 1;
        al_text_printf(o, L("  步骤 %d: next_tokens=", "  step %d: next_tokens="), step + 1);
        print_ids(o, next, BATCH);
        al_text_puts(o, ", finished=");
        print_bools(o, finished, BATCH);
        al_text_puts(o, "\n");
        if (all) {
            al_text_printf(o, "%s\n", L("  → 所有序列已结束，提前停止",
                                        "  → every sequence has ended: stopping early"));
            break;
        }
    }
    al_text_printf(o, "\n%s\n", L("最终序列:", "Final sequences:"));
    for (int b = 0; b < BATCH; b++) {
        /* seq.index(eos) if eos in seq[2:] else len(seq) */
        int ended = 0, eos_at = len;
        for (int i = PROMPT; i < len; i++) ended |= seqs[b][i] == EOS;
        for (int i = 0; ended && i < len && eos_at == len; i++)
            if (seqs[b][i] == EOS) eos_at = i;
        al_text_printf(o, L("  序列 %d: ", "  sequence %d: "), b);
        print_ids(o, seqs[b], len);
        al_text_printf(o, L("  （实际内容到位置 %d，之后为 EOS 占位）\n",
                            "  (real content up to position %d, EOS placeholders after it)\n"),
                       eos_at);
    }
    /* The script says finished sequences are skipped ("用 finished 标记跳过，避免影响后续计算");
     * they are not: every row still gets its logits and its argmax each step, and the flag only
     * replaces a finished row's new token with EOS, so that nothing follows its end. */
    al_text_printf(o, "\n%s\n", L("观察：不同序列在不同步生成 EOS，已结束的序列仍在批次中参与计算，finished 标记把它们的新 token 换成 EOS 占位，结束后不再生成内容",
                                  "Observe: the sequences produce EOS at different steps; finished sequences are still computed with the batch, and the finished flag replaces their new tokens with EOS placeholders, so nothing is generated after their end"));
    al_text_printf(o, "%s\n\n", L("  → 全部序列结束后提前 break，节省计算",
                                  "  → once every sequence has ended, the loop breaks early to save compute"));
}

al_status al_demo_generation(al_demo_out *d, al_lang lang, int64_t seed, al_rng *rng,
                             al_error *err) {
    toy_model m;
    float logits[VOCAB]; /* example 1's, the input of examples 2 to 4 */
    al_rng_seed(rng, seed >= 0 ? (uint64_t)seed : 42);
    toy_init(&m, rng);
    al_status st = example_greedy(d, lang, &m, logits, err);
    if (st == AL_OK) st = example_temperature(d, lang, logits, err);
    if (st == AL_OK) st = example_top_k(d, lang, logits, err);
    if (st == AL_OK) st = example_top_p(d, lang, logits, err);
    if (st == AL_OK) st = example_penalty(d, lang, &m, err);
    if (st == AL_OK) st = example_sampler(d, lang, &m, rng, err);
    if (st != AL_OK) return st;
    example_eos(d, lang, seed, rng);
    al_demo_header(d, AL_DEMO_PANEL_NONE, L("所有示例运行完毕！", "All examples finished!"));
    return AL_OK;
}
