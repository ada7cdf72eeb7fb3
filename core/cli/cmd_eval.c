/* cmd_eval.c — `attnlab eval`: a model's loss on the held-out part of a corpus (split as
 * `attnlab train` splits it, with the same --seq; the split named on stderr), beside the best bigram model counted on the training part and
 * scored on the same targets. One JSON line. */
#include "cli/cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_CORPUS_BYTES ((size_t)256 << 20)

int cmd_eval(int argc, char **argv) {
    const char *model_path = NULL, *corpus_path = NULL, *tokenizer_path = NULL;
    int64_t seq = 128;
    for (int i = 0; i < argc; i += 2) {
        const char *flag = argv[i], *value = i + 1 < argc ? argv[i + 1] : NULL;
        if (!value) {
            cli_error("%s expects a value", flag);
            return EXIT_BAD_INPUT;
        }
        if (!strcmp(flag, "--model")) model_path = value;
        else if (!strcmp(flag, "--corpus")) corpus_path = value;
        else if (!strcmp(flag, "--tokenizer")) tokenizer_path = value;
        else if (!strcmp(flag, "--seq")) {
            if (!cli_parse_int(value, 2, 4096, &seq)) {
                cli_error("--seq expects a whole number from 2 to 4096");
                return EXIT_BAD_INPUT;
            }
        } else {
            cli_error("unknown option '%s' for eval (see 'attnlab help')", cli_show(flag));
            return EXIT_BAD_INPUT;
        }
    }
    if (!model_path || !corpus_path) {
        cli_error("eval needs --model PATH and --corpus FILE");
        return EXIT_BAD_INPUT;
    }
    char *default_tok = tokenizer_path ? NULL : cli_model_tokenizer(model_path);
    if (!tokenizer_path) tokenizer_path = default_tok;
    if (!tokenizer_path) {
        cli_error("eval needs --tokenizer for this model");
        return EXIT_BAD_INPUT;
    }
    al_tokenizer *tok = cli_load_tokenizer(tokenizer_path, 0);
    free(default_tok);
    int status = tok ? EXIT_OK : EXIT_BAD_INPUT;
    /* the model first: a tokenizer that is not the model's is said as such, before the corpus
     * is read with it */
    al_model_file_kind kind;
    al_model *m = status == EXIT_OK ? cli_load_model(model_path, seq, seq, NULL, &kind, &status) : NULL;
    if (m && al_model_get_hparams(m)->vocab != al_tok_vocab_size(tok)) {
        cli_error("the tokenizer has %lld tokens but the model's vocabulary has %lld", (long long)al_tok_vocab_size(tok),
                  (long long)al_model_get_hparams(m)->vocab);
        status = EXIT_BAD_INPUT;
    }
    size_t size = 0;
    char *text = status == EXIT_OK ? (char *)cli_read_file(corpus_path, MAX_CORPUS_BYTES, &size) : NULL;
    al_corpus corpus = {0};
    if (status == EXIT_OK && !(text && cli_encode_corpus(tok, text, size, seq + 1, &corpus))) status = EXIT_BAD_INPUT;
    const int32_t *ids = corpus.ids;
    const int64_t n = corpus.n_tokens, split = corpus.split;
    free(text);
    if (status == EXIT_OK && (split < 2 || n - split < 2)) {
        cli_error("--corpus: too few tokens to split (%lld)", (long long)n);
        status = EXIT_BAD_INPUT;
    }
    /* the held-out part in consecutive windows of seq tokens: the model's loss, and the pairs the
     * bigram is scored on (the same targets) */
    double sum = 0.0;
    int64_t count = 0, pairs = 0;
    const int64_t held = n - split;
    int32_t *prev = status == EXIT_OK ? malloc((size_t)held * sizeof *prev) : NULL;
    int32_t *next = status == EXIT_OK ? malloc((size_t)held * sizeof *next) : NULL;
    al_error err = {0};
    if (status == EXIT_OK && (!prev || !next)) status = EXIT_FAILURE_ENV;
    for (int64_t at = split; status == EXIT_OK && at + 1 < n; at += seq) {
        const int64_t len = n - at < seq ? n - at : seq;
        if (al_model_nll(m, ids + at, len, &sum, &count, &err) != AL_OK) {
            cli_error("%s", err.msg);
            status = EXIT_BAD_INPUT;
        }
        for (int64_t t = 0; t + 1 < len; t++) prev[pairs] = ids[at + t], next[pairs] = ids[at + t + 1], pairs++;
    }
    al_bigram_result bigram;
    if (status == EXIT_OK && al_bigram_loss(ids, split, prev, next, pairs, al_tok_vocab_size(tok), &bigram, &err) != AL_OK) {
        cli_error("%s", err.msg);
        status = EXIT_BAD_INPUT;
    }
    if (status == EXIT_OK) cli_print_split(&corpus);
    if (status == EXIT_OK)
        printf("{\"train_tokens\": %lld, \"held_out_tokens\": %lld, \"targets\": %lld, \"model_loss\": %.5f, "
               "\"bigram_loss\": %.5f, \"bigram_add_k_loss\": %.5f, \"bigram_k\": %g, \"bigram_interpolated_loss\": %.5f, "
               "\"bigram_lambda\": %g}\n",
               (long long)split, (long long)held, (long long)count, sum / (double)count, bigram.loss, bigram.add_k_loss,
               bigram.k, bigram.interpolated_loss, bigram.lambda);
    free(prev), free(next);
    al_corpus_free(&corpus);
    al_model_free(m);
    al_tok_free(tok);
    return status;
}
