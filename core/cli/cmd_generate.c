/* cmd_generate.c — `attnlab generate`: a model continues a prompt, token by token, with the
 * core's generator (core/app/generate.c, the loop the page's model view runs too): each step one
 * forward pass over the new token with every layer's KV cache, the next token chosen by
 * MiniMind's sampler (temperature, repetition penalty, top-k, top-p; temperature 0 is greedy),
 * seeded, until the stop token (or past it with --ignore-eos), --max-new-tokens or the context's
 * end, with the heads --ablate names switched off; the ids (or, with a tokenizer, the text) as they come, and a last line on stderr with the
 * counts and the speed. The prompt is ids (--ids), text (--prompt, BOS first where the tokenizer
 * has one) or one user message in MiniMind's chat format (--chat, the reply alone streamed); a
 * MiniMind folder's tokenizer.json is the default tokenizer. */
#define _POSIX_C_SOURCE 199309L
#include "cli/cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* tokenizer_config.json's chat_template for one user message and add_generation_prompt, no
 * system message and no tools: the message, then the assistant's turn opened, its thinking
 * closed empty unless open_thinking (--think) leaves it open. */
static char *chat_prompt(const char *message, int think, size_t *len) {
    static const char head[] = "<|im_start|>user\n";
    static const char tail[] = "<|im_end|>\n<|im_start|>assistant\n";
    const char *thinking = think ? "<think>\n" : "<think>\n\n</think>\n\n";
    const size_t n = strlen(message), n_think = strlen(thinking);
    char *out = malloc(sizeof head - 1 + n + sizeof tail - 1 + n_think + 1);
    if (!out) return NULL;
    char *p = out;
    memcpy(p, head, sizeof head - 1), p += sizeof head - 1;
    memcpy(p, message, n), p += n;
    memcpy(p, tail, sizeof tail - 1), p += sizeof tail - 1;
    memcpy(p, thinking, n_think), p += n_think;
    *p = '\0';
    *len = (size_t)(p - out);
    return out;
}

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

int cmd_generate(int argc, char **argv) {
    const char *model_path = NULL, *ids_text = NULL, *prompt = NULL, *chat = NULL, *tokenizer_path = NULL;
    const char *ablate = NULL;
    int64_t max_new = 256, print_ids = 0, seed = 0, think = 0, ignore_eos = 0, threads = 0;
    al_sampler_params sp = al_sampler_params_default();
    cli_pth_options pth;
    cli_pth_options_init(&pth);
    for (int i = 0; i < argc; i++) {
        const char *flag = argv[i], *value = i + 1 < argc ? argv[i + 1] : NULL;
        int ok = 1;
        if (!strcmp(flag, "--print-ids") || !strcmp(flag, "--think") || !strcmp(flag, "--ignore-eos")) {
            *(!strcmp(flag, "--think") ? &think : !strcmp(flag, "--ignore-eos") ? &ignore_eos : &print_ids) = 1;
            continue;
        }
        const int took = cli_parse_pth_flag(argc, argv, i, &pth);
        if (took < 0) return EXIT_BAD_INPUT;
        if (took > 0) {
            i += took - 1;
            continue;
        }
        if (!strcmp(flag, "--model")) model_path = value;
        else if (!strcmp(flag, "--ids")) ids_text = value;
        else if (!strcmp(flag, "--prompt")) prompt = value;
        else if (!strcmp(flag, "--chat")) chat = value;
        else if (!strcmp(flag, "--tokenizer")) tokenizer_path = value;
        else if (!strcmp(flag, "--ablate")) ablate = value;
        else if (!strcmp(flag, "--max-new-tokens")) ok = cli_parse_int(value, 0, AL_MAX_SEQ, &max_new);
        else if (!strcmp(flag, "--temperature")) ok = cli_parse_double(value, &sp.temperature) && sp.temperature >= 0.0 && sp.temperature <= 100.0;
        else if (!strcmp(flag, "--top-k")) ok = cli_parse_int(value, 0, AL_MAX_VOCAB, &sp.top_k);
        else if (!strcmp(flag, "--top-p")) ok = cli_parse_double(value, &sp.top_p) && sp.top_p > 0.0 && sp.top_p <= 1.0;
        else if (!strcmp(flag, "--repetition-penalty"))
            ok = cli_parse_double(value, &sp.repetition_penalty) && sp.repetition_penalty > 0.0 && sp.repetition_penalty <= 100.0;
        else if (!strcmp(flag, "--seed")) ok = cli_parse_int(value, 0, INT64_MAX, &seed);
        else if (!strcmp(flag, "--threads")) {
            if (!cli_parse_threads(value, &threads)) return EXIT_BAD_INPUT;
        }
        else {
            cli_error("unknown option '%s' for generate (see 'attnlab help')", cli_show(flag));
            return EXIT_BAD_INPUT;
        }
        if (!value || !ok) {
            cli_error("%s expects %s", flag,
                      !strcmp(flag, "--max-new-tokens") ? "a token count from 0 to 65536"
                      : !strcmp(flag, "--temperature") ? "a number from 0 (greedy) to 100"
                      : !strcmp(flag, "--top-k") ? "a count >= 0 (0: off)"
                      : !strcmp(flag, "--top-p") ? "a number in (0, 1] (1: off)"
                      : !strcmp(flag, "--repetition-penalty") ? "a number in (0, 100] (1: off)"
                      : !strcmp(flag, "--seed") ? "a whole number >= 0"
                                                        : "a value");
            return EXIT_BAD_INPUT;
        }
        i++;
    }
    if (!model_path || (ids_text != NULL) + (prompt != NULL) + (chat != NULL) != 1) {
        cli_error("generate needs --model and one of --ids (token ids, e.g. \"1\" for BOS), --prompt TEXT or --chat TEXT");
        return EXIT_BAD_INPUT;
    }
    if (think && !chat) {
        cli_error("--think opens the reply's thinking in the chat format: it goes with --chat");
        return EXIT_BAD_INPUT;
    }
    /* A MiniMind model's tokenizer.json (in its folder, or beside its .pth), unless --tokenizer says. */
    char *folder_tokenizer = cli_model_tokenizer(model_path);
    if (chat && !folder_tokenizer) {
        cli_error("--chat writes MiniMind's chat format: --model must be a MiniMind folder (config.json, "
                  "model.safetensors) or .pth");
        return EXIT_BAD_INPUT;
    }
    if ((prompt || chat) && !tokenizer_path) {
        if (!folder_tokenizer) {
            cli_error("--prompt needs --tokenizer (llama2.c's tokenizer.bin, e.g. models/stories260K/tok512.bin)");
            return EXIT_BAD_INPUT;
        }
        if (!cli_is_file(folder_tokenizer)) {
            cli_error("%s needs a tokenizer: '%s' has no tokenizer.json (give --tokenizer)", chat ? "--chat" : "--prompt",
                      cli_show(model_path));
            free(folder_tokenizer);
            return EXIT_BAD_INPUT;
        }
        tokenizer_path = folder_tokenizer;
    }

    /* 1. The tokenizer if any, the prompt's ids, then the model with the context they and the
     *    new tokens need. */
    al_tokenizer *tok = tokenizer_path ? cli_load_tokenizer(tokenizer_path, 0) : NULL;
    const int tok_failed = tokenizer_path && !tok;
    free(folder_tokenizer); /* tokenizer_path may be it: not used after this */
    int32_t *ids = malloc((size_t)AL_MAX_SEQ * sizeof *ids);
    if (tok_failed || !ids) {
        if (!ids) cli_error("out of memory");
        al_tok_free(tok);
        free(ids);
        return ids ? EXIT_BAD_INPUT : EXIT_FAILURE_ENV;
    }
    al_error err = {0};
    int64_t n_prompt;
    if (prompt) {
        n_prompt = al_gen_encode_prompt(tok, prompt, strlen(prompt), ids, AL_MAX_SEQ, &err);
        if (n_prompt < 0) cli_error("--prompt: %s", err.msg);
    } else if (chat) { /* the template's own tokens: no BOS */
        size_t len = 0;
        char *text = chat_prompt(chat, (int)think, &len);
        n_prompt = text ? al_tok_encode(tok, text, len, 0, 0, ids, AL_MAX_SEQ, &err) : -1;
        if (n_prompt < 0) cli_error("--chat: %s", text ? err.msg : "out of memory");
        free(text);
    } else {
        n_prompt = cli_parse_ids(ids_text, ids, AL_MAX_SEQ);
        if (n_prompt == 0) cli_error("--ids: give at least one token id");
    }
    if (n_prompt == 0 && (prompt || chat)) cli_error("%s: the prompt has no tokens", prompt ? "--prompt" : "--chat");
    if (n_prompt < 1) {
        al_tok_free(tok);
        free(ids);
        return EXIT_BAD_INPUT;
    }
    int status = EXIT_OK;
    al_model_file_kind kind;
    al_model *m = cli_load_model(model_path, n_prompt + max_new, 64, &pth, &kind, &status);
    if (m && (!cli_set_threads(m, threads) || (ablate && !cli_set_ablation(m, ablate)))) { /* those heads off for every step */
        al_model_free(m);
        m = NULL;
        status = EXIT_BAD_INPUT;
    }
    if (!m) {
        al_tok_free(tok);
        free(ids);
        return status;
    }
    /* 2. The generator (core/app/generate.c, the model view's loop too) over the prompt. */
    al_gen_options opt = al_gen_options_default();
    opt.sampler = sp;
    opt.max_new = max_new;
    opt.ignore_eos = (int)ignore_eos;
    al_generator *gen = NULL;
    al_status st = al_gen_create(m, tok, kind, &opt, &gen, &err);
    if (st == AL_OK && al_gen_prompt(gen, ids, n_prompt, (uint64_t)seed, &err) < 0) st = err.status;
    if (st != AL_OK) {
        cli_error("%s", err.msg);
        status = st == AL_ERR_NOMEM ? EXIT_FAILURE_ENV : EXIT_BAD_INPUT;
    }
    /* Text out, when there is a tokenizer: the prompt's, then each token's as it comes. */
    al_tok_stream *stream = NULL;
    char text[4096];
    if (status == EXIT_OK && tok && !print_ids) {
        if (al_tok_stream_create(tok, &stream, &err) != AL_OK) {
            cli_error("%s", err.msg);
            status = EXIT_FAILURE_ENV;
        }
        for (int64_t i = 0; stream && !chat && i < n_prompt; i++) { /* a chat shows the reply only */
            const int64_t len = al_tok_stream_push(stream, ids[i], text, sizeof text, &err);
            if (len > 0) fwrite(text, 1, (size_t)len, stdout);
        }
        fflush(stdout);
    }

    /* 3. The prompt in one pass (timed apart), then one token per step until the generator
     *    says the text is over: the limit, the context's end or the stop token. */
    double t0 = now_ms(), t_prompt = 0.0;
    if (status == EXIT_OK && al_gen_forward(gen, &err) != AL_OK) {
        cli_error("%s", err.msg);
        status = EXIT_BAD_INPUT;
    }
    t_prompt = now_ms() - t0;
    t0 = now_ms();
    while (status == EXIT_OK && al_gen_finished(gen) == AL_GEN_GOING) {
        const int64_t next = al_gen_step(gen, &err);
        if (next < 0) {
            cli_error("%s", err.msg);
            status = err.status == AL_ERR_ARG ? EXIT_BAD_INPUT : EXIT_FAILURE_ENV;
            break;
        }
        if (al_gen_finished(gen) == AL_GEN_STOP_TOKEN) break;
        if (stream) {
            const int64_t len = al_tok_stream_push(stream, (int32_t)next, text, sizeof text, &err);
            if (len > 0) fwrite(text, 1, (size_t)len, stdout);
            fflush(stdout);
        } else if (!print_ids) {
            printf("%d%s", (int)next, al_gen_finished(gen) == AL_GEN_GOING ? " " : "");
        }
    }
    const double t_gen = now_ms() - t0;
    const int64_t generated = al_gen_generated(gen);
    if (status == EXIT_OK) {
        const int32_t *all = al_gen_ids(gen);
        const int64_t n = al_gen_len(gen);
        if (print_ids)
            for (int64_t i = n_prompt; i < n; i++) printf("%d%s", (int)all[i], i + 1 < n ? " " : "");
        if (stream) {
            const int64_t len = al_tok_stream_finish(stream, text, sizeof text, &err);
            if (len > 0) fwrite(text, 1, (size_t)len, stdout);
        }
        printf("\n");
        fprintf(stderr, "prompt %lld tokens (%.2f ms), generated %lld tokens, %.3f ms/token, %.0f tokens/s\n",
                (long long)n_prompt, t_prompt, (long long)generated, generated ? t_gen / (double)generated : 0.0,
                generated && t_gen > 0 ? 1e3 * (double)generated / t_gen : 0.0);
    }
    al_tok_stream_free(stream);
    al_gen_free(gen);
    al_tok_free(tok);
    free(ids);
    al_model_free(m);
    return status;
}
