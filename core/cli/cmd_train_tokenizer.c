/* cmd_train_tokenizer.c — `attnlab train-tokenizer --corpus FILE --vocab N --out tokenizer.json
 * [--min-frequency F]`: a byte-level BPE tokenizer trained on a UTF-8 text file as MiniMind's
 * train_tokenizer.py trains its own (core/io/tokenizer_train.c), written all or nothing. A
 * corpus that runs out of pairs before N tokens writes nothing: the message gives the size it
 * reaches, which --vocab can then ask for (a model's vocabulary must match its tokenizer's, so a
 * smaller file than asked for is never written in its place). */
#include "cli/cli.h"

#include <stdio.h>
#include <stdlib.h>

int cmd_train_tokenizer(int argc, char **argv) {
    const char *corpus = NULL, *vocab_text = NULL, *out = NULL, *min_text = NULL;
    const cli_flag flags[] = {{"--corpus", &corpus}, {"--vocab", &vocab_text}, {"--out", &out},
                              {"--min-frequency", &min_text}};
    if (!cli_parse_flags(argc, argv, "train-tokenizer", flags, 4)) return EXIT_BAD_INPUT;
    if (!corpus || !vocab_text || !out) {
        cli_error("train-tokenizer needs --corpus, --vocab and --out");
        return EXIT_BAD_INPUT;
    }
    int64_t vocab = 0, min_frequency = 0;
    if (!cli_parse_int(vocab_text, AL_TOK_TRAIN_MIN_VOCAB, AL_TOK_MAX_VOCAB, &vocab)) {
        cli_error("--vocab expects a whole number between %d (MiniMind's %d added tokens and the 256 bytes) "
                  "and %d, got '%s'", AL_TOK_TRAIN_MIN_VOCAB, AL_TOK_TRAIN_SPECIALS, AL_TOK_MAX_VOCAB,
                  cli_show(vocab_text));
        return EXIT_BAD_INPUT;
    }
    if (min_text && !cli_parse_int(min_text, 0, INT64_MAX, &min_frequency)) {
        cli_error("--min-frequency expects a whole number from 0, got '%s'", cli_show(min_text));
        return EXIT_BAD_INPUT;
    }
    const char *inputs[1] = {corpus};
    if (!cli_check_output(out, inputs, 1)) return EXIT_BAD_INPUT;

    size_t size = 0;
    uint8_t *text = cli_read_file(corpus, (size_t)AL_TOK_MAX_CORPUS, &size);
    if (!text) return EXIT_BAD_INPUT;
    if (size == 0) {
        cli_error("the corpus '%s' is empty", cli_show(corpus));
        free(text);
        return EXIT_BAD_INPUT;
    }
    char *json = NULL;
    size_t json_len = 0;
    al_tok_train_summary sum;
    al_error err = {0};
    const al_status st = al_tok_train_bpe((const char *)text, size, vocab, min_frequency, &json, &json_len, &sum, &err);
    free(text);
    int status = EXIT_OK;
    if (st != AL_OK) {
        cli_error("%s: %s", cli_show(corpus), err.msg);
        status = st == AL_ERR_NOMEM ? EXIT_FAILURE_ENV : EXIT_BAD_INPUT;
    } else if (sum.vocab_size < vocab) {
        char why[64];
        snprintf(why, sizeof why, min_frequency > 1 ? "occurs %lld times or more" : "is left to merge",
                 (long long)min_frequency);
        cli_error("%s: the corpus gives only %lld tokens (%d added, 256 bytes, %lld merged), short of --vocab "
                  "%lld: then no pair of tokens %s; nothing written (use a larger corpus or --vocab %lld)",
                  cli_show(corpus), (long long)sum.vocab_size, AL_TOK_TRAIN_SPECIALS,
                  (long long)(sum.vocab_size - AL_TOK_TRAIN_MIN_VOCAB), (long long)vocab, why,
                  (long long)sum.vocab_size);
        status = EXIT_BAD_INPUT;
    } else if (!cli_write_file_atomic(out, (const uint8_t *)json, json_len)) {
        status = EXIT_FAILURE_ENV;
    } else {
        printf("wrote %s: %lld tokens (%d added, 256 bytes, %lld merged) and %lld merges, from %zu bytes: %lld "
               "words (%lld distinct); the last merge's pair occurred %lld times\n",
               cli_show(out), (long long)sum.vocab_size, AL_TOK_TRAIN_SPECIALS,
               (long long)(sum.vocab_size - AL_TOK_TRAIN_MIN_VOCAB), (long long)sum.n_merges, size,
               (long long)sum.n_words, (long long)sum.n_distinct, (long long)sum.last_count);
    }
    al_buffer_free(json);
    return status;
}
