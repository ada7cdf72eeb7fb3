/* cmd_inspect.c — `attnlab inspect --model PATH`: what a checkpoint holds: its kind, the
 * model's hyper-parameters, the number of parameters and their bytes, and every tensor with its
 * dtype and shape (a MiniMind folder's safetensors or .pth) or every array (a llama2.c checkpoint). */
#include "cli/cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void print_hparams(const al_model_hparams *hp, const char *kind, const char *weights_dtype) {
    printf("%s\n", kind);
    printf("vocab %lld, hidden %lld, layers %lld, heads %lld, kv heads %lld (GQA x%lld), head_dim %lld\n",
           (long long)hp->vocab, (long long)hp->hidden, (long long)hp->n_layers, (long long)hp->n_heads,
           (long long)hp->n_kv_heads, (long long)(hp->n_heads / hp->n_kv_heads), (long long)hp->head_dim);
    char ffn[64];
    if (hp->ffn_hidden || hp->n_experts)
        snprintf(ffn, sizeof ffn, "%lld (SwiGLU)%s", (long long)hp->ffn_hidden, hp->n_experts ? " per dense layer; MoE below" : "");
    else
        snprintf(ffn, sizeof ffn, "none (attention-only)");
    printf("ffn %s, context %lld, rope_theta %g (%s%s), eps %g, qk_norm %s, lm_head %s\n", ffn, (long long)hp->max_seq,
           hp->rope_base, hp->rope_style == AL_ROPE_INTERLEAVED ? "interleaved pairs" : "half-split",
           hp->yarn_factor != 0.0 ? ", YaRN" : "", (double)hp->eps, hp->qk_norm ? "on" : "off",
           hp->tied ? "tied to the embedding" : "its own");
    if (hp->n_experts)
        printf("MoE: %lld experts of %lld, top-%lld per token, norm_topk_prob %s\n", (long long)hp->n_experts,
               (long long)hp->moe_ffn_hidden, (long long)hp->top_k, hp->norm_topk_prob ? "on" : "off");
    if (hp->yarn_factor != 0.0)
        printf("YaRN: factor %g, original context %lld, beta_fast %g, beta_slow %g, attention factor %g\n",
               hp->yarn_factor, (long long)hp->yarn_original_max, hp->yarn_beta_fast, hp->yarn_beta_slow,
               hp->attention_factor);
    const int64_t params = al_model_param_count(hp);
    printf("parameters %lld (%.2f M), %s\n", (long long)params, (double)params / 1e6, weights_dtype);
}

/* The header line and every tensor as the file lists them, each in its dtype. */
static void print_tensors(const al_model_hparams *hp, const char *kind, const char *where, const al_safetensors *st) {
    int64_t file_bytes = 0;
    const char *dtype = NULL;
    int mixed = 0;
    for (int i = 0; i < al_st_count(st); i++) {
        al_st_tensor t;
        al_st_get(st, i, &t);
        file_bytes += t.nbytes;
        if (dtype && strcmp(dtype, t.dtype_name)) mixed = 1;
        dtype = t.dtype_name;
    }
    char what[96];
    snprintf(what, sizeof what, "%s in the %s, %.2f MiB", mixed ? "mixed dtypes" : dtype ? dtype : "no tensors", where,
             (double)file_bytes / (1 << 20));
    print_hparams(hp, kind, what);
    printf("tensors: %d\n", al_st_count(st));
    for (int i = 0; i < al_st_count(st); i++) {
        al_st_tensor t;
        al_st_get(st, i, &t);
        printf("  %s %s [", cli_show(t.name), t.dtype_name);
        for (int d = 0; d < t.ndim; d++) printf("%s%lld", d ? ", " : "", (long long)t.shape[d]);
        printf("]\n");
    }
}

int cmd_inspect(int argc, char **argv) {
    const char *path = NULL;
    cli_pth_options pth;
    cli_pth_options_init(&pth);
    int usage = 0;
    for (int i = 0; i < argc && !usage; i++) {
        const int took = cli_parse_pth_flag(argc, argv, i, &pth);
        if (took < 0) return EXIT_BAD_INPUT;
        if (took > 0) i += took - 1;
        else if (!strcmp(argv[i], "--model") && i + 1 < argc && !path) path = argv[++i];
        else usage = 1;
    }
    if (usage || !path) {
        cli_error("inspect needs --model PATH (a MiniMind folder or .pth, or a llama2.c .bin)");
        return EXIT_BAD_INPUT;
    }
    int status = EXIT_OK;
    al_model_file_kind kind;
    /* Loading checks everything; one position of context keeps it small. */
    al_model *m = cli_load_model(path, 1, 1, &pth, &kind, &status);
    if (!m) return status;
    const al_model_hparams hp = *al_model_get_hparams(m);
    al_model_free(m);
    if (kind == AL_MODEL_FILE_LLAMA2C) {
        print_hparams(&hp, "llama2.c checkpoint (float32: legacy or version 1)", "float32 in the file");
        printf("arrays: token_embedding [%lld, %lld]; per layer rms_att, wq, wk, wv, wo, rms_ffn, w1, w2, w3; "
               "rms_final; freq_cis_real, freq_cis_imag%s\n",
               (long long)hp.vocab, (long long)hp.hidden, hp.tied ? "" : "; wcls");
        return EXIT_OK;
    }
    if (kind == AL_MODEL_FILE_PTH) {
        /* The .pth's tensors, indexed again (loading kept nothing but the model), each in the
         * dtype its storage holds. */
        al_pth_model pm;
        if (!cli_read_pth(path, &pth.flags, &pm, &status)) return status;
        print_tensors(&hp, "MiniMind .pth (torch.save of a state_dict; configuration from its shapes and the flags)", ".pth",
                      pm.tensors);
        al_pth_model_free(&pm);
        return EXIT_OK;
    }
    /* The folder's tensors, as the file lists them. */
    char weights_path[4096];
    snprintf(weights_path, sizeof weights_path, "%s/model.safetensors", path);
    size_t size = 0;
    uint8_t *bytes = cli_read_safetensors(weights_path, (size_t)2 << 30, &size);
    al_safetensors *st = NULL;
    al_error err = {0};
    if (!bytes || al_st_parse_view(bytes, size, &st, &err) != AL_OK) {
        if (bytes) cli_error("%s: %s", cli_show(weights_path), err.msg);
        free(bytes);
        return EXIT_BAD_INPUT;
    }
    print_tensors(&hp, "MiniMind / Hugging Face folder (config.json + model.safetensors)", "file", st);
    al_st_free(st);
    free(bytes);
    return EXIT_OK;
}
