/* cmd_cut_tokenizer.c — `attnlab cut-tokenizer --tokenizer T --vocab N --out tokenizer.json`:
 * MiniMind's tokenizer.json (or one train-tokenizer wrote) cut to its first N ids and the merges
 * among them (al_tok_hf_cut), for a model whose vocabulary is smaller; written all or nothing. */
#include "cli/cli.h"

#include <stdio.h>
#include <stdlib.h>

int cmd_cut_tokenizer(int argc, char **argv) {
    const char *from = NULL, *vocab_text = NULL, *out = NULL;
    const cli_flag flags[] = {{"--tokenizer", &from}, {"--vocab", &vocab_text}, {"--out", &out}};
    if (!cli_parse_flags(argc, argv, "cut-tokenizer", flags, 3)) return EXIT_BAD_INPUT;
    if (!from || !vocab_text || !out) {
        cli_error("cut-tokenizer needs --tokenizer, --vocab and --out");
        return EXIT_BAD_INPUT;
    }
    int64_t vocab = 0;
    if (!cli_parse_int(vocab_text, AL_TOK_TRAIN_MIN_VOCAB, AL_TOK_MAX_VOCAB, &vocab)) {
        cli_error("--vocab expects a whole number from %d (MiniMind's %d added tokens and the 256 bytes) up to "
                  "the tokenizer's size, got '%s'", AL_TOK_TRAIN_MIN_VOCAB, AL_TOK_TRAIN_SPECIALS,
                  cli_show(vocab_text));
        return EXIT_BAD_INPUT;
    }
    const char *inputs[1] = {from};
    if (!cli_check_output(out, inputs, 1)) return EXIT_BAD_INPUT;

    size_t size = 0;
    uint8_t *bytes = cli_read_file(from, CLI_MAX_TOKENIZER_BYTES, &size);
    if (!bytes) return EXIT_BAD_INPUT;
    char *json = NULL;
    size_t json_len = 0;
    al_error err = {0};
    const al_status st = al_tok_hf_cut(bytes, size, vocab, &json, &json_len, &err);
    free(bytes);
    int status = EXIT_OK;
    if (st != AL_OK) {
        cli_error("%s: %s", cli_show(from), err.msg);
        status = st == AL_ERR_NOMEM ? EXIT_FAILURE_ENV : EXIT_BAD_INPUT;
    } else if (!cli_write_file_atomic(out, (const uint8_t *)json, json_len)) {
        status = EXIT_FAILURE_ENV;
    } else {
        printf("wrote %s: the first %lld tokens of %s (%d added, 256 bytes, %lld merged)\n", cli_show(out),
               (long long)vocab, cli_show(from), AL_TOK_TRAIN_SPECIALS, (long long)(vocab - AL_TOK_TRAIN_MIN_VOCAB));
    }
    al_buffer_free(json);
    return status;
}
