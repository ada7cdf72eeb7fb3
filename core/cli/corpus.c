/* corpus.c — the corpus of `attnlab train` and `attnlab eval` (al_corpus_encode: MiniMind's
 * documents, <|im_start|> text <|im_end|> each, and the held-out part), with the command line's
 * one-line errors and the split said on stderr. */
#include "cli/cli.h"

#include <stdio.h>

int cli_encode_corpus(const al_tokenizer *tok, const char *text, size_t len, int64_t window, al_corpus *c) {
    al_error err = {0};
    if (al_corpus_encode(tok, text, len, window, c, &err) == AL_OK) return 1;
    cli_error("--corpus: %s", err.msg);
    return 0;
}

void cli_print_split(const al_corpus *c) {
    char line[256];
    al_corpus_describe(c, line, sizeof line);
    fprintf(stderr, "corpus: %s\n", line);
}
