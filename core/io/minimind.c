/* minimind.c — a model from a MiniMind / Hugging Face checkpoint: config.json (MiniMindConfig's
 * keys, its defaults where a key is absent) and the state_dict's tensors by MiniMind's names
 * (model.embed_tokens.weight, model.layers.N.self_attn.q_proj.weight, ..., model.norm.weight,
 * lm_head.weight when untied), float32, float16 or bfloat16. QK-Norm is on when the layers have
 * q_norm and k_norm weights. Every tensor must be one the config gives a place and have the
 * shape it gives; nothing else may be in the file. For a state_dict without its config.json
 * (a .pth), al_minimind_config_from_tensors writes the config its shapes imply. */
#include "attnlab/io.h"
#include "base/internal.h"
#include "base/json.h"
#include "io/pth.h"
#include "base/text.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { KEY_MAX = 64, NAME_MAX_LEN = 128 };

/* MiniMindConfig's defaults (MiniMind-3). */
static al_model_hparams defaults(void) {
    al_model_hparams hp;
    memset(&hp, 0, sizeof hp);
    hp.vocab = 6400;
    hp.hidden = 768;
    hp.n_layers = 8;
    hp.n_heads = 8;
    hp.n_kv_heads = 4;
    hp.max_seq = 32768;
    hp.rope_base = 1e6;
    hp.eps = 1e-6f;
    hp.rope_style = AL_ROPE_HALF_SPLIT;
    hp.tied = 1;
    hp.top_k = 1;
    hp.norm_topk_prob = 1;
    return hp;
}

/* config.json's fields this reader knows: where each goes. */
typedef struct {
    int64_t hidden, layers, heads, kv_heads, head_dim, vocab, ffn, max_pos, experts, top_k, moe_ffn;
    int64_t yarn_orig;
    double eps, theta, yarn_factor, beta_fast, beta_slow, attn_factor;
    int tied, use_moe, norm_topk;
    int inference_scaling; /* inference_rope_scaling */
    int rope_scaling_given; /* a rope_scaling object; either turns YaRN on, whatever their order */
} config_fields;

static al_status bad_value(al_error *err, const char *key, const char *want) {
    return al_fail(err, AL_ERR_FORMAT, "config.json: \"%s\" must be %s", key, want);
}

/* An integer field: a plain non-negative integer, or null (the default stays). */
static al_status read_int(al_json_cursor *c, const char *key, int64_t *out, al_error *err) {
    if (al_json_peek(c) == JSON_NULL) return al_json_skip(c) == 0 ? AL_OK : bad_value(err, key, "a number");
    uint64_t v;
    const char *tok;
    size_t len;
    if (al_json_read_uint(c, (uint64_t)INT32_MAX, &v, &tok, &len) != JSON_UINT_OK)
        return bad_value(err, key, "a whole number from 0 to 2147483647");
    *out = (int64_t)v;
    return AL_OK;
}

static al_status read_real(al_json_cursor *c, const char *key, double *out, al_error *err) {
    if (al_json_peek(c) == JSON_NULL) return al_json_skip(c) == 0 ? AL_OK : bad_value(err, key, "a number");
    return al_json_read_number(c, out) == 0 ? AL_OK : bad_value(err, key, "a finite number");
}

static al_status read_flag(al_json_cursor *c, const char *key, int *out, al_error *err) {
    if (al_json_peek(c) == JSON_NULL) return al_json_skip(c) == 0 ? AL_OK : bad_value(err, key, "true or false");
    return al_json_read_bool(c, out) == 0 ? AL_OK : bad_value(err, key, "true or false");
}

/* rope_scaling: {"type": "yarn", "factor": 16, "original_max_position_embeddings": 2048,
 * "beta_fast": 32, "beta_slow": 1, "attention_factor": 1.0}, or null. */
static al_status read_rope_scaling(al_json_cursor *c, config_fields *f, al_error *err) {
    if (al_json_peek(c) == JSON_NULL) return al_json_skip(c) == 0 ? AL_OK : bad_value(err, "rope_scaling", "an object");
    if (al_json_peek(c) != JSON_OBJECT || al_json_enter(c) != 0) return bad_value(err, "rope_scaling", "an object or null");
    f->rope_scaling_given = 1;
    while (al_json_more(c)) {
        char key[KEY_MAX];
        size_t len;
        int has_nul;
        if (al_json_read_key(c, key, sizeof key, &len, &has_nul) != 0) return bad_value(err, "rope_scaling", "an object");
        if (len < sizeof key) key[len] = '\0'; /* the reader writes no terminating NUL */
        al_status st = AL_OK;
        if (len >= sizeof key || has_nul) st = al_json_skip(c) == 0 ? AL_OK : bad_value(err, "rope_scaling", "an object");
        else if (!strcmp(key, "type") || !strcmp(key, "rope_type")) {
            char type[16];
            if (al_json_read_string(c, type, sizeof type - 1, &len, &has_nul) != 0 || len >= sizeof type ||
                ((type[len] = '\0'), strcmp(type, "yarn") != 0))
                return al_fail(err, AL_ERR_FORMAT, "config.json: rope_scaling's type must be \"yarn\" (the one MiniMind uses)");
        } else if (!strcmp(key, "factor")) st = read_real(c, "rope_scaling.factor", &f->yarn_factor, err);
        else if (!strcmp(key, "original_max_position_embeddings")) st = read_int(c, "rope_scaling.original_max_position_embeddings", &f->yarn_orig, err);
        else if (!strcmp(key, "beta_fast")) st = read_real(c, "rope_scaling.beta_fast", &f->beta_fast, err);
        else if (!strcmp(key, "beta_slow")) st = read_real(c, "rope_scaling.beta_slow", &f->beta_slow, err);
        else if (!strcmp(key, "attention_factor")) st = read_real(c, "rope_scaling.attention_factor", &f->attn_factor, err);
        else st = al_json_skip(c) == 0 ? AL_OK : bad_value(err, "rope_scaling", "an object");
        if (st != AL_OK) return st;
    }
    return AL_OK;
}

static al_status read_config(const char *json, size_t len, config_fields *f, al_error *err) {
    char why[160];
    if (al_json_validate(json, len, why, sizeof why) != 0)
        return al_fail(err, AL_ERR_FORMAT, "config.json is not valid JSON: %s", why);
    al_json_cursor c;
    al_json_cursor_init(&c, json, len);
    if (al_json_peek(&c) != JSON_OBJECT || al_json_enter(&c) != 0)
        return al_fail(err, AL_ERR_FORMAT, "config.json must hold one object");
    while (al_json_more(&c)) {
        char key[KEY_MAX];
        size_t klen;
        int has_nul;
        if (al_json_read_key(&c, key, sizeof key, &klen, &has_nul) != 0)
            return al_fail(err, AL_ERR_FORMAT, "config.json: a key could not be read");
        if (klen < sizeof key) key[klen] = '\0'; /* the reader writes no terminating NUL */
        al_status st = AL_OK;
        if (klen >= sizeof key || has_nul) st = al_json_skip(&c) == 0 ? AL_OK : AL_ERR_FORMAT;
#define INT_KEY(name, field) else if (!strcmp(key, name)) st = read_int(&c, name, &f->field, err);
#define REAL_KEY(name, field) else if (!strcmp(key, name)) st = read_real(&c, name, &f->field, err);
#define FLAG_KEY(name, field) else if (!strcmp(key, name)) st = read_flag(&c, name, &f->field, err);
        INT_KEY("hidden_size", hidden)
        INT_KEY("num_hidden_layers", layers)
        INT_KEY("num_attention_heads", heads)
        INT_KEY("num_key_value_heads", kv_heads)
        INT_KEY("head_dim", head_dim)
        INT_KEY("vocab_size", vocab)
        INT_KEY("intermediate_size", ffn)
        INT_KEY("max_position_embeddings", max_pos)
        INT_KEY("num_experts", experts)
        INT_KEY("n_routed_experts", experts)
        INT_KEY("num_experts_per_tok", top_k)
        INT_KEY("moe_intermediate_size", moe_ffn)
        REAL_KEY("rms_norm_eps", eps)
        REAL_KEY("rope_theta", theta)
        FLAG_KEY("tie_word_embeddings", tied)
        FLAG_KEY("use_moe", use_moe)
        FLAG_KEY("norm_topk_prob", norm_topk)
        FLAG_KEY("inference_rope_scaling", inference_scaling)
        else if (!strcmp(key, "rope_scaling")) st = read_rope_scaling(&c, f, err);
        else st = al_json_skip(&c) == 0 ? AL_OK : al_fail(err, AL_ERR_FORMAT, "config.json: the value of \"%s\" could not be read", key);
#undef INT_KEY
#undef REAL_KEY
#undef FLAG_KEY
        if (st != AL_OK) return st;
    }
    return AL_OK;
}

/* A field's value refused: the field, what it must be, and what it is. */
static al_status bad_number(al_error *err, const char *key, const char *want, double v) {
    char shown[AL_SHORTEST_MAX];
    return al_fail(err, AL_ERR_CONFIG, "config.json: \"%s\" must be %s (got %s)", key, want, al_format_shortest(shown, v));
}

/* MoE's fields with use_moe: a router over num_experts >= 1 experts, each token sent to
 * num_experts_per_tok of them (MiniMind's topk(scores, k), which needs 1 <= k <= experts). */
static al_status check_experts(const config_fields *f, al_error *err) {
    if (f->experts < 1) return bad_number(err, "num_experts", "at least 1 with use_moe", (double)f->experts);
    if (f->top_k < 1 || f->top_k > f->experts) {
        char want[64];
        al_snprintf(want, sizeof want, "from 1 to num_experts (%lld)", (long long)f->experts);
        return bad_number(err, "num_experts_per_tok", want, (double)f->top_k);
    }
    return AL_OK;
}

/* rope_scaling's fields as MiniMind's precompute_freqs_cis uses them (a field absent takes its
 * default there and here): f_i · (1 − ramp_i + ramp_i / factor) needs factor >= 1 (0 divides by
 * zero); inv_dim(b) = dim · ln(orig_max / (b · 2π)) / (2 · ln base) needs orig_max >= 1 and
 * b > 0, and its ramp runs from inv_dim(beta_fast) up to inv_dim(beta_slow) only when
 * beta_fast > beta_slow; cos and sin are multiplied by attention_factor > 0. */
static al_status check_yarn(const config_fields *f, al_error *err) {
    if (!(f->yarn_factor >= 1.0)) return bad_number(err, "rope_scaling.factor", "at least 1", f->yarn_factor);
    if (f->yarn_orig < 1)
        return bad_number(err, "rope_scaling.original_max_position_embeddings", "at least 1", (double)f->yarn_orig);
    if (!(f->beta_slow > 0.0)) return bad_number(err, "rope_scaling.beta_slow", "above 0", f->beta_slow);
    if (!(f->beta_fast > f->beta_slow)) {
        char want[64], slow[AL_SHORTEST_MAX];
        al_snprintf(want, sizeof want, "above beta_slow (%s)", al_format_shortest(slow, f->beta_slow));
        return bad_number(err, "rope_scaling.beta_fast", want, f->beta_fast);
    }
    if (!(f->attn_factor > 0.0)) return bad_number(err, "rope_scaling.attention_factor", "above 0", f->attn_factor);
    return AL_OK;
}

static int param_name(char out[NAME_MAX_LEN], al_model_param p, int64_t l, int64_t e);

int64_t al_minimind_ffn_hidden(int64_t hidden) {
    return (int64_t)ceil((double)hidden * 3.141592653589793 / 64.0) * 64; /* ceil(hidden · π / 64) · 64 */
}

al_model_hparams al_minimind_hparams_for(int64_t vocab, int64_t hidden, int64_t layers, int64_t heads, int64_t kv_heads) {
    al_model_hparams hp;
    memset(&hp, 0, sizeof hp);
    hp.vocab = vocab, hp.hidden = hidden, hp.n_layers = layers, hp.n_heads = heads, hp.n_kv_heads = kv_heads;
    hp.head_dim = heads > 0 ? hidden / heads : 0, hp.ffn_hidden = al_minimind_ffn_hidden(hidden);
    hp.max_seq = 32768, hp.rope_base = 1e6, hp.eps = 1e-6f, hp.qk_norm = 1, hp.tied = 1;
    hp.rope_style = AL_ROPE_HALF_SPLIT;
    return hp;
}

int al_minimind_param_name(char *out, size_t cap, al_model_param p, int64_t l, int64_t e) {
    if (!out || cap < 1 || (int)p < 0 || p >= AL_MP_COUNT) return -1;
    char name[NAME_MAX_LEN];
    const int n = param_name(name, p, l, e);
    if (n < 0 || (size_t)n >= cap) return -1;
    al_snprintf(out, cap, "%s", name);
    return n;
}

/* The tensor names of a weight in MiniMind's state_dict. */
static int param_name(char out[NAME_MAX_LEN], al_model_param p, int64_t l, int64_t e) {
    static const char *const LAYER[] = {"input_layernorm.weight", "self_attn.q_proj.weight", "self_attn.k_proj.weight",
                                        "self_attn.v_proj.weight", "self_attn.o_proj.weight", "self_attn.q_norm.weight",
                                        "self_attn.k_norm.weight", "post_attention_layernorm.weight", "mlp.gate_proj.weight",
                                        "mlp.up_proj.weight", "mlp.down_proj.weight"};
    static const char *const EXPERT[] = {"gate_proj", "up_proj", "down_proj"};
    switch (p) {
    case AL_MP_EMBED: return al_snprintf(out, NAME_MAX_LEN, "model.embed_tokens.weight");
    case AL_MP_FINAL_NORM: return al_snprintf(out, NAME_MAX_LEN, "model.norm.weight");
    case AL_MP_LM_HEAD: return al_snprintf(out, NAME_MAX_LEN, "lm_head.weight");
    case AL_MP_ROUTER: return al_snprintf(out, NAME_MAX_LEN, "model.layers.%lld.mlp.gate.weight", (long long)l);
    case AL_MP_EXPERT_GATE:
    case AL_MP_EXPERT_UP:
    case AL_MP_EXPERT_DOWN:
        return al_snprintf(out, NAME_MAX_LEN, "model.layers.%lld.mlp.experts.%lld.%s.weight", (long long)l,
                           (long long)e, EXPERT[p - AL_MP_EXPERT_GATE]);
    default: return al_snprintf(out, NAME_MAX_LEN, "model.layers.%lld.%s", (long long)l, LAYER[p - AL_MP_ATTN_NORM]);
    }
}

/* The number at s[*at, len) (below `limit`, as written without leading zeros: param_name's
 * spelling is compared after), or -1. */
static int64_t index_at(const uint8_t *s, size_t len, size_t *at, int64_t limit) {
    int64_t v = 0;
    const size_t from = *at;
    for (; *at < len && s[*at] >= '0' && s[*at] <= '9'; (*at)++)
        if ((v = 10 * v + (s[*at] - '0')) >= limit) return -1;
    return *at > from ? v : -1;
}

int al_minimind_is_param_name(const uint8_t *name, size_t len) {
    static const char LAYERS[] = "model.layers.", EXPERTS[] = ".mlp.experts.";
    const size_t nl = sizeof LAYERS - 1, ne = sizeof EXPERTS - 1;
    if (!name || len >= NAME_MAX_LEN) return 0;
    /* 1. the layer and expert indices the name gives, then 2. every name param_name writes
     * for them: the name is MiniMind's if it is one of those. */
    int64_t l = 0, e = 0;
    size_t at = nl;
    if (len > nl && !memcmp(name, LAYERS, nl)) {
        if ((l = index_at(name, len, &at, AL_MAX_LAYERS)) < 0) return 0;
        if (len - at > ne && !memcmp(name + at, EXPERTS, ne)) {
            at += ne;
            if ((e = index_at(name, len, &at, AL_MAX_EXPERTS)) < 0) return 0;
        }
    }
    for (int p = 0; p < AL_MP_COUNT; p++) {
        char want[NAME_MAX_LEN];
        const int n = param_name(want, (al_model_param)p, l, e);
        if (n == (int)len && !memcmp(want, name, len)) return 1;
    }
    return 0;
}

static al_status config_hparams(const char *config_json, size_t config_len, const al_safetensors *st,
                                al_model_hparams *hp, al_error *err) {
    const al_model_hparams d = defaults();
    /* ffn -1: intermediate_size absent (or null) */
    config_fields f = {d.hidden, d.n_layers, d.n_heads, d.n_kv_heads, 0, d.vocab, -1, d.max_seq, 4, 1, 0,
                       2048, 1e-6, 1e6, 16.0, 32.0, 1.0, 1.0, 1, 0, 1, 0, 0};
    al_status s = read_config(config_json, config_len, &f, err);
    if (s != AL_OK) return s;
    *hp = d;
    hp->hidden = f.hidden;
    hp->n_layers = f.layers;
    hp->n_heads = f.heads;
    hp->n_kv_heads = f.kv_heads;
    hp->vocab = f.vocab;
    hp->max_seq = f.max_pos;
    hp->eps = (float)f.eps;
    hp->rope_base = f.theta;
    hp->tied = f.tied;
    if (f.heads < 1) return bad_value(err, "num_attention_heads", "at least 1");
    hp->head_dim = f.head_dim ? f.head_dim : f.hidden / f.heads;
    /* intermediate_size: absent or null means MiniMind's ceil(hidden · π / 64) · 64; 0 an
     * attention-only model (MiniMind's FeedForward of width 0 adds zeros). */
    hp->ffn_hidden = f.ffn >= 0 ? f.ffn : al_minimind_ffn_hidden(f.hidden);
    if (f.use_moe) {
        if ((s = check_experts(&f, err)) != AL_OK) return s;
        hp->n_experts = f.experts;
        hp->top_k = f.top_k;
        /* MiniMind's experts: FeedForward(moe_intermediate_size or intermediate_size) */
        hp->moe_ffn_hidden = f.moe_ffn ? f.moe_ffn : hp->ffn_hidden;
        if (!hp->moe_ffn_hidden)
            return bad_value(err, "moe_intermediate_size", "at least 1 with use_moe (absent or 0, it is intermediate_size)");
        hp->norm_topk_prob = f.norm_topk;
    }
    if (f.inference_scaling || f.rope_scaling_given) {
        if ((s = check_yarn(&f, err)) != AL_OK) return s;
        hp->yarn_factor = f.yarn_factor;
        hp->yarn_original_max = f.yarn_orig;
        hp->yarn_beta_fast = f.beta_fast;
        hp->yarn_beta_slow = f.beta_slow;
        hp->attention_factor = f.attn_factor;
    }
    /* QK-Norm if the first layer has it. */
    al_st_tensor t;
    hp->qk_norm = al_st_find(st, "model.layers.0.self_attn.q_norm.weight", &t) == AL_OK;
    if ((s = al_model_hparams_check(hp, err)) != AL_OK && err) {
        char why[AL_ERROR_MSG_MAX];
        memcpy(why, err->msg, sizeof why);
        al_fail(err, s, "config.json: %s", why);
    }
    return s;
}

/* Every failure here is config.json's: its text, or the model it describes (the tensors say
 * only whether there is QK-Norm). */
al_status al_minimind_hparams(const char *config_json, size_t config_len, const al_safetensors *st,
                              al_model_hparams *hp, al_error *err) {
    if (!config_json || !st || !hp) return al_fail(err, AL_ERR_ARG, "MiniMind checkpoint: NULL argument");
    return al_fail_in(err, AL_FILE_CONFIG, config_hparams(config_json, config_len, st, hp, err));
}

/* The dtype an inference model holds the checkpoint's weights in: theirs if every matrix (each
 * 2-D weight the model reads) has the same 16-bit one, float32 otherwise (norms are float32 in
 * the model whatever the file holds). In WebAssembly float32 always: it has no instruction to
 * widen a half, and the widening in the GEMM's loop would cost more than the bytes it saves. */
static al_weight_dtype held_dtype(const al_safetensors *st, const al_model_hparams *hp) {
#if defined(__wasm__)
    (void)st, (void)hp;
    return AL_WEIGHTS_F32;
#else
    int dtype = -1;
    for (int p = 0; p < AL_MP_COUNT; p++) {
        int64_t shape[2];
        if (al_model_param_shape(hp, (al_model_param)p, shape) != 2) continue;
        const int per_layer = p != AL_MP_EMBED && p != AL_MP_LM_HEAD, per_expert = p >= AL_MP_EXPERT_GATE;
        for (int64_t l = 0; l < (per_layer ? hp->n_layers : 1); l++)
            for (int64_t e = 0; e < (per_expert ? hp->n_experts : 1); e++) {
                char name[NAME_MAX_LEN];
                al_st_tensor t;
                param_name(name, (al_model_param)p, l, e);
                if (al_st_find(st, name, &t) != AL_OK) continue;
                if (dtype < 0) dtype = (int)t.dtype;
                else if (dtype != (int)t.dtype) return AL_WEIGHTS_F32;
            }
    }
    /* al_dtype and al_weight_dtype number float32, float16 and bfloat16 alike */
    return dtype == AL_DTYPE_F16 ? AL_WEIGHTS_F16 : dtype == AL_DTYPE_BF16 ? AL_WEIGHTS_BF16 : AL_WEIGHTS_F32;
#endif
}

/* Tensor `name`'s bytes: in the index's data, or read from src into *buf (grown to fit). */
static al_status tensor_bytes(const al_st_tensor *t, const al_byte_source *src, uint8_t **buf, size_t *cap,
                              const void **bytes, al_error *err) {
    if (!src) {
        *bytes = t->data;
        return AL_OK;
    }
    if ((uint64_t)t->nbytes > *cap) {
        free(*buf);
        *cap = 0;
        if (!(*buf = malloc((size_t)t->nbytes ? (size_t)t->nbytes : 1)))
            return al_fail(err, AL_ERR_NOMEM, "MiniMind checkpoint: out of memory for tensor '%.80s'", t->name);
        *cap = (size_t)t->nbytes;
    }
    if (src->read(src->ctx, t->offset, *buf, (size_t)t->nbytes) != 0)
        return al_fail(err, AL_ERR_IO, "MiniMind checkpoint: tensor '%.80s' could not be read", t->name);
    *bytes = *buf;
    return AL_OK;
}

al_status al_model_from_minimind(const char *config_json, size_t config_len, const al_safetensors *st,
                                 int64_t context, int64_t max_step, al_model **out, al_error *err) {
    return al_model_from_minimind_source(config_json, config_len, st, NULL, context, max_step, out, err);
}

al_status al_model_from_minimind_source(const char *config_json, size_t config_len, const al_safetensors *st,
                                        const al_byte_source *src, int64_t context, int64_t max_step, al_model **out,
                                        al_error *err) {
    if (!out) return al_fail(err, AL_ERR_ARG, "MiniMind checkpoint: no output pointer");
    *out = NULL;
    al_model_hparams hp;
    al_status s = al_minimind_hparams(config_json, config_len, st, &hp, err);
    if (s != AL_OK) return s;

    /* Every weight the config gives a place must be in the file with its shape, and nothing
     * else may be: checked before the model is allocated. The file's tensors less the
     * weights, marked in `placed` [tensors of the file] by one O(log n) lookup per weight:
     * n log n in all, for up to 256 layers of 256 experts (200k names). A tied model may still
     * carry lm_head.weight (some exports write it): it is then not read. */
    const int n_tensors = al_st_count(st);
    unsigned char *placed = calloc(n_tensors > 0 ? (size_t)n_tensors : 1, 1);
    if (!placed) return al_fail(err, AL_ERR_NOMEM, "MiniMind checkpoint: out of memory for %d tensor marks", n_tensors);
    uint8_t *buf = NULL; /* one tensor's bytes read from src */
    size_t buf_cap = 0;
    for (int pass = 0; pass < 2; pass++) {
        al_model *m = NULL;
        if (pass == 1) {
            s = al_model_create_inference(&hp, context > 0 ? context : hp.max_seq, max_step, held_dtype(st, &hp), &m, err);
            if (s != AL_OK) return s;
        }
        for (int p = 0; p < AL_MP_COUNT && s == AL_OK; p++) {
            int64_t shape[2] = {0, 0};
            const int nd = al_model_param_shape(&hp, (al_model_param)p, shape);
            if (nd <= 0) continue;
            const int per_layer = p != AL_MP_EMBED && p != AL_MP_FINAL_NORM && p != AL_MP_LM_HEAD;
            const int per_expert = p >= AL_MP_EXPERT_GATE;
            for (int64_t l = 0; l < (per_layer ? hp.n_layers : 1) && s == AL_OK; l++)
                for (int64_t e = 0; e < (per_expert ? hp.n_experts : 1) && s == AL_OK; e++) {
                    char name[NAME_MAX_LEN];
                    param_name(name, (al_model_param)p, l, e);
                    al_st_tensor t;
                    if (pass == 0) {
                        const int at = al_st_index(st, name);
                        if (at < 0) {
                            s = al_fail(err, AL_ERR_MISSING, "tensor '%s' not found (config.json gives the model %lld layers%s)",
                                        name, (long long)hp.n_layers, hp.n_experts ? " with experts" : "");
                            continue;
                        }
                        placed[at] = 1;
                        al_st_get(st, at, &t);
                        if (t.ndim != nd || t.shape[0] != shape[0] || (nd == 2 && t.shape[1] != shape[1]))
                            s = al_fail(err, AL_ERR_SHAPE, "tensor '%s' has %d dimensions [%lld%s%lld], config.json implies [%lld%s%lld]",
                                        name, t.ndim, (long long)t.shape[0], t.ndim > 1 ? ", " : "", t.ndim > 1 ? (long long)t.shape[1] : 0LL,
                                        (long long)shape[0], nd > 1 ? ", " : "", nd > 1 ? (long long)shape[1] : 0LL);
                    } else {
                        /* read (from src, piece by piece), checked, then packed into the model */
                        const void *bytes = NULL;
                        al_st_find(st, name, &t);
                        if ((s = tensor_bytes(&t, src, &buf, &buf_cap, &bytes, err)) == AL_OK &&
                            (s = al_st_check_values(st, name, bytes, err)) == AL_OK)
                            s = al_model_set_param(m, (al_model_param)p, l, e, bytes, (al_weight_dtype)t.dtype, t.numel, err);
                    }
                }
        }
        if (pass == 0) {
            /* Nothing the model has no place for (a typo'd name would otherwise go unread): the
             * first such tensor in the file's order. */
            const int head = hp.tied ? al_st_index(st, "lm_head.weight") : -1;
            if (head >= 0) placed[head] = 1;
            for (int i = 0; i < n_tensors && s == AL_OK; i++) {
                al_st_tensor t;
                if (!placed[i] && al_st_get(st, i, &t) == AL_OK)
                    s = al_fail(err, AL_ERR_FORMAT, "tensor '%.80s' has no place in the model config.json describes", t.name);
            }
            free(placed);
        } else {
            free(buf);
            if (s != AL_OK) al_model_free(m);
            else *out = m;
        }
        if (s != AL_OK) return s;
    }
    return AL_OK;
}

/* ---- config.json from a state_dict's shapes ------------------------------------------------ */

al_pth_flags al_pth_flags_default(void) {
    al_pth_flags f;
    memset(&f, 0, sizeof f);
    f.moe_top_k = 1;
    f.norm_topk_prob = 1;
    f.rope_theta = 1e6;
    f.eps = 1e-6;
    return f;
}

/* The shape of tensor `name` if it has `ndim` dimensions, none of size 0 (but the first when
 * `empty_rows`): AL_OK, AL_ERR_MISSING (message only if `required`) or AL_ERR_SHAPE. */
static al_status shape_of(const al_safetensors *st, const char *name, int ndim, int required, int empty_rows,
                          int64_t shape[2], al_error *err) {
    al_st_tensor t;
    if (al_st_find(st, name, &t) != AL_OK)
        return required ? al_fail(err, AL_ERR_MISSING, "tensor '%s' not found: not a MiniMind state_dict", name) : AL_ERR_MISSING;
    if (t.ndim != ndim)
        return al_fail(err, AL_ERR_SHAPE, "tensor '%s' has %d dimensions, a MiniMind state_dict %d", name, t.ndim, ndim);
    for (int d = 0; d < ndim; d++)
        if ((shape[d] = t.shape[d]) < (d == 0 && empty_rows ? 0 : 1))
            return al_fail(err, AL_ERR_SHAPE, "tensor '%s' has a dimension of size 0", name);
    return AL_OK;
}

/* rows = count · size, or a message naming both tensors. */
static al_status divide(int64_t rows, int64_t size, const char *what, const char *rows_of, const char *size_of,
                        int64_t *count, al_error *err) {
    if (rows % size != 0)
        return al_fail(err, AL_ERR_CONFIG, "%s's %lld rows are not a whole number of %s of %lld (%s): no %s fits",
                       rows_of, (long long)rows, what, (long long)size, size_of, what);
    *count = rows / size;
    return AL_OK;
}

/* The highest N of "model.layers.N." names, plus one; -1 (with a message) past AL_MAX_LAYERS. */
static int64_t count_layers(const al_safetensors *st, al_error *err) {
    static const char PREFIX[] = "model.layers.";
    int64_t layers = 0;
    for (int i = 0; i < al_st_count(st); i++) {
        al_st_tensor t;
        al_st_get(st, i, &t);
        if (strncmp(t.name, PREFIX, sizeof PREFIX - 1) != 0) continue;
        const char *p = t.name + sizeof PREFIX - 1;
        int64_t n = 0;
        for (; *p >= '0' && *p <= '9' && n <= AL_MAX_LAYERS; p++) n = 10 * n + (*p - '0');
        if (n >= AL_MAX_LAYERS)
            return al_fail(err, AL_ERR_LIMIT, "tensor '%.80s': layer index above the limit of %d layers", t.name, AL_MAX_LAYERS), -1;
        if (p > t.name + sizeof PREFIX - 1 && *p == '.' && n + 1 > layers) layers = n + 1;
    }
    return layers;
}

/* Whether tensors h and e hold the same bytes: compared in their data, or read from src a
 * chunk of each at a time (the same place in the file is the same bytes: a tied .pth's shared
 * storage). -1 with *err set if they cannot be read. */
static int same_bytes(const al_st_tensor *h, const al_st_tensor *e, const al_byte_source *src, al_error *err) {
    if (!src) return h->data && e->data ? memcmp(h->data, e->data, (size_t)e->nbytes) == 0
                                        : (al_fail(err, AL_ERR_ARG, "MiniMind config: an index without data, and no file to read"), -1);
    if (h->offset == e->offset) return 1;
    enum { CHUNK = 1 << 16 };
    uint8_t *a = malloc(2 * CHUNK);
    if (!a) return al_fail(err, AL_ERR_NOMEM, "MiniMind config: out of memory for %d bytes", 2 * CHUNK), -1;
    int same = 1;
    for (int64_t at = 0; at < e->nbytes && same == 1; at += CHUNK) {
        const size_t n = e->nbytes - at < CHUNK ? (size_t)(e->nbytes - at) : CHUNK;
        if (src->read(src->ctx, h->offset + (uint64_t)at, a, n) != 0 || src->read(src->ctx, e->offset + (uint64_t)at, a + CHUNK, n) != 0)
            same = (al_fail(err, AL_ERR_IO, "MiniMind config: lm_head.weight or model.embed_tokens.weight could not be read"), -1);
        else if (memcmp(a, a + CHUNK, n) != 0)
            same = 0;
    }
    free(a);
    return same;
}

int64_t al_minimind_config_from_tensors(const al_safetensors *st, const al_pth_flags *flags, char *buf, int64_t cap,
                                        al_error *err) {
    return al_minimind_config_from_source(st, NULL, flags, buf, cap, err);
}

int64_t al_minimind_config_from_source(const al_safetensors *st, const al_byte_source *src, const al_pth_flags *flags,
                                       char *buf, int64_t cap, al_error *err) {
    if (!st || cap < 0 || (!buf && cap > 0))
        return al_fail(err, AL_ERR_ARG, "MiniMind config: NULL tensors, or a NULL buffer with a capacity"), -1;
    const al_pth_flags f = flags ? *flags : al_pth_flags_default();
    if (f.n_heads < 0 || f.n_heads > AL_MAX_HEADS)
        return al_fail(err, AL_ERR_ARG, "heads must be from 1 to %d (0: from q_norm), got %lld", AL_MAX_HEADS, (long long)f.n_heads), -1;
    if (f.moe_top_k < 1 || f.moe_top_k > 256 || (f.norm_topk_prob != 0 && f.norm_topk_prob != 1) || (f.yarn != 0 && f.yarn != 1))
        return al_fail(err, AL_ERR_ARG, "MoE top-k must be from 1 to 256, norm_topk_prob and yarn 0 or 1"), -1;
    if (!(isfinite(f.rope_theta) && f.rope_theta > 0.0) || !(isfinite(f.eps) && f.eps > 0.0))
        return al_fail(err, AL_ERR_ARG, "rope_theta and eps must be positive finite numbers"), -1;

    /* hidden, vocab: the embedding [vocab, hidden]; head_dim: q_norm [head_dim]; heads and kv
     * heads: q_proj [heads · head_dim, hidden] and k_proj [kv_heads · head_dim, hidden]. */
    int64_t embed[2] = {0, 0}, q[2] = {0, 0}, k[2] = {0, 0}, qn[2] = {0, 0}, head_dim = 0, heads = 0, kv_heads = 0;
    al_status s;
    if ((s = shape_of(st, "model.embed_tokens.weight", 2, 1, 0, embed, err)) != AL_OK) return -1;
    const int64_t layers = count_layers(st, err);
    if (layers < 0) return -1;
    if (layers == 0) return al_fail(err, AL_ERR_MISSING, "no tensor named model.layers.N.*: not a MiniMind state_dict"), -1;
    if ((s = shape_of(st, "model.layers.0.self_attn.q_proj.weight", 2, 1, 0, q, err)) != AL_OK ||
        (s = shape_of(st, "model.layers.0.self_attn.k_proj.weight", 2, 1, 0, k, err)) != AL_OK)
        return -1;
    s = shape_of(st, "model.layers.0.self_attn.q_norm.weight", 1, 0, 0, qn, err);
    if (s == AL_OK) {
        head_dim = qn[0];
        if (divide(q[0], head_dim, "heads", "q_proj", "q_norm's length", &heads, err) != AL_OK) return -1;
        if (f.n_heads && f.n_heads != heads)
            return al_fail(err, AL_ERR_CONFIG, "%lld heads given, but q_proj's %lld rows and q_norm's head_dim %lld make %lld",
                           (long long)f.n_heads, (long long)q[0], (long long)head_dim, (long long)heads), -1;
    } else if (s == AL_ERR_MISSING) {
        /* Without QK-Norm only the product heads · head_dim is in the shapes. */
        if (!f.n_heads)
            return al_fail(err, AL_ERR_CONFIG, "no q_norm (QK-Norm) in the checkpoint, so its number of heads cannot be read "
                                               "from the shapes: give it (--heads)"), -1;
        heads = f.n_heads;
        if (divide(q[0], heads, "heads", "q_proj", "the given number of heads", &head_dim, err) != AL_OK) return -1;
    } else {
        return -1;
    }
    if (divide(k[0], head_dim, "key/value heads", "k_proj", "head_dim", &kv_heads, err) != AL_OK) return -1;

    /* The feed-forward: dense gate_proj [ffn, hidden] ([0, hidden]: attention-only), or MoE's
     * router mlp.gate [experts, hidden] and each expert's gate_proj [moe_ffn, hidden]. */
    int64_t router[2] = {0, 0}, ffn[2] = {0, 0}, moe_ffn[2] = {0, 0};
    s = shape_of(st, "model.layers.0.mlp.gate.weight", 2, 0, 0, router, err);
    const int moe = s == AL_OK;
    if (s != AL_OK && s != AL_ERR_MISSING) return -1;
    if (moe && shape_of(st, "model.layers.0.mlp.experts.0.gate_proj.weight", 2, 1, 0, moe_ffn, err) != AL_OK) return -1;
    if (!moe && shape_of(st, "model.layers.0.mlp.gate_proj.weight", 2, 1, 1, ffn, err) != AL_OK) return -1;
    if (!moe && (f.moe_top_k != 1 || f.norm_topk_prob != 1))
        return al_fail(err, AL_ERR_CONFIG, "MoE routing given (top-k %lld, norm_topk_prob %s), but the checkpoint has no experts "
                                           "(no model.layers.0.mlp.gate.weight)",
                       (long long)f.moe_top_k, f.norm_topk_prob ? "on" : "off"), -1;
    if (moe && f.moe_top_k > router[0])
        return al_fail(err, AL_ERR_CONFIG, "MoE top-k %lld given, but the checkpoint has %lld experts", (long long)f.moe_top_k,
                       (long long)router[0]), -1;

    /* Tied: no lm_head.weight, or one that holds the embedding's bytes (MiniMind's trainer saves
     * the tied head as its own copy). */
    al_st_tensor e, h;
    int tied = al_st_find(st, "lm_head.weight", &h) != AL_OK;
    if (!tied) {
        al_st_find(st, "model.embed_tokens.weight", &e);
        tied = h.dtype == e.dtype && h.ndim == e.ndim && h.nbytes == e.nbytes && h.shape[0] == e.shape[0] &&
               h.shape[1] == e.shape[1];
        if (tied && (tied = same_bytes(&h, &e, src, err)) < 0) return -1;
    }

    char num[AL_SHORTEST_MAX];
    al_text t;
    al_text_init(&t, buf, (size_t)cap);
    al_text_printf(&t, "{\n  \"architectures\": [\"MiniMindForCausalLM\"],\n  \"model_type\": \"minimind\",\n");
    const char *dtype = al_st_metadata(st, "torch_dtype");
    if (dtype && (!strcmp(dtype, "float32") || !strcmp(dtype, "float16") || !strcmp(dtype, "bfloat16")))
        al_text_printf(&t, "  \"torch_dtype\": \"%s\",\n", dtype);
    al_text_printf(&t, "  \"vocab_size\": %lld,\n  \"hidden_size\": %lld,\n  \"num_hidden_layers\": %lld,\n",
                   (long long)embed[0], (long long)embed[1], (long long)layers);
    al_text_printf(&t, "  \"num_attention_heads\": %lld,\n  \"num_key_value_heads\": %lld,\n  \"head_dim\": %lld,\n",
                   (long long)heads, (long long)kv_heads, (long long)head_dim);
    if (moe) {
        /* intermediate_size is left out: MiniMindConfig's default, which no MoE layer uses. */
        al_text_printf(&t, "  \"use_moe\": true,\n  \"num_experts\": %lld,\n  \"num_experts_per_tok\": %lld,\n",
                       (long long)router[0], (long long)f.moe_top_k);
        al_text_printf(&t, "  \"moe_intermediate_size\": %lld,\n  \"norm_topk_prob\": %s,\n", (long long)moe_ffn[0],
                       f.norm_topk_prob ? "true" : "false");
    } else {
        al_text_printf(&t, "  \"use_moe\": false,\n  \"intermediate_size\": %lld,\n", (long long)ffn[0]);
    }
    al_text_printf(&t, "  \"max_position_embeddings\": 32768,\n  \"rms_norm_eps\": %s,\n", al_format_shortest(num, f.eps));
    al_text_printf(&t, "  \"rope_theta\": %s,\n  \"inference_rope_scaling\": %s,\n", al_format_shortest(num, f.rope_theta),
                   f.yarn ? "true" : "false");
    if (f.yarn)
        al_text_printf(&t, "  \"rope_scaling\": {\"type\": \"yarn\", \"factor\": 16, \"original_max_position_embeddings\": 2048, "
                           "\"beta_fast\": 32, \"beta_slow\": 1, \"attention_factor\": 1.0},\n");
    else
        al_text_printf(&t, "  \"rope_scaling\": null,\n");
    al_text_printf(&t, "  \"tie_word_embeddings\": %s,\n  \"hidden_act\": \"silu\",\n  \"bos_token_id\": 1,\n  \"eos_token_id\": 2\n}\n",
                   tied ? "true" : "false");
    return (int64_t)t.len;
}
