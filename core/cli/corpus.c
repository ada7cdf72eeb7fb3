/* corpus.c — a text corpus as MiniMind's pretraining sees it (`attnlab train`, `attnlab eval`):
 * documents separated by a line holding only "%" (as fortune files separate them) or by an empty
 * line, each encoded as <|im_start|> text <|im_end|>, one stream of ids; held out, the last 5% of
 * the documents, or for a corpus of fewer than 20 documents (where 5% of them is less than one:
 * a plain text file with no empty line is one document) the last 5% of the tokens. */
#include "cli/cli.h"

#include <stdio.h>
#include <stdlib.h>

/* The next document from *pos on: its bytes [*begin, *end), up to the line holding only "%" or
 * nothing that ends it (the newline before that line included), or to the end of the text.
 * Empty documents (separators in a row) are skipped. 0 when none is left. */
static int next_document(const char *text, size_t len, size_t *pos, size_t *begin, size_t *end) {
    size_t doc = *pos, line = *pos;
    for (size_t i = *pos; i <= len; i++) {
        if (i < len && text[i] != '\n') continue;
        const size_t line_len = i - line;
        const int sep = line_len == 0 || (line_len == 1 && text[line] == '%');
        const size_t doc_end = sep ? line : i;
        if ((sep || i == len) && doc_end > doc) {
            *begin = doc, *end = doc_end, *pos = i + 1;
            return 1;
        }
        if (sep) doc = i + 1;
        line = i + 1;
    }
    *pos = len + 1;
    return 0;
}

enum { SPLIT_BY_DOCUMENTS_FROM = 20 }; /* documents: from here on 5% of them is at least one */

/* The documents' ids, one stream: <|im_start|> text <|im_end|> each; the split as cli.h says. */
int32_t *cli_encode_corpus(const al_tokenizer *tok, const char *text, size_t len, int64_t window, cli_corpus *c) {
    al_error err = {0};
    int64_t cap = 1024, n = 0, docs = 0, total_docs = 0;
    size_t pos, b, e;
    for (pos = 0; next_document(text, len, &pos, &b, &e);) total_docs++;
    const int by_docs = total_docs >= SPLIT_BY_DOCUMENTS_FROM;
    const int64_t held_docs = (total_docs + 19) / 20, held_from = total_docs - held_docs;
    int32_t *ids = malloc((size_t)cap * sizeof *ids);
    int64_t split = -1;
    for (pos = 0; ids && next_document(text, len, &pos, &b, &e); docs++) {
        const int64_t m = al_tok_encode(tok, text + b, e - b, 0, 0, NULL, 0, &err);
        if (m < 0) {
            cli_error("--corpus: %s", err.msg);
            free(ids);
            return NULL;
        }
        if (docs == held_from && split < 0) split = n;
        while (n + m + 2 > cap) {
            cap *= 2;
            int32_t *grown = realloc(ids, (size_t)cap * sizeof *ids);
            if (!grown) {
                free(ids);
                ids = NULL;
                break;
            }
            ids = grown;
        }
        if (!ids) break;
        ids[n++] = 1; /* <|im_start|> */
        al_tok_encode(tok, text + b, e - b, 0, 0, ids + n, m, &err);
        n += m;
        ids[n++] = 2; /* <|im_end|> */
    }
    if (!ids) {
        cli_error("out of memory");
        return NULL;
    }
    if (split < 0) split = n;
    if (!by_docs) {
        /* the last 5% of the tokens (rounded up), at least one window; as much left to train on */
        const int64_t held = (n + 19) / 20 > window ? (n + 19) / 20 : window;
        if (n < 2 * window) {
            cli_error("--corpus: %lld tokens are too few: a corpus of fewer than %d documents needs at least %lld "
                      "(a window of %lld tokens to train on and one held out)",
                      (long long)n, SPLIT_BY_DOCUMENTS_FROM, (long long)(2 * window), (long long)window);
            free(ids);
            return NULL;
        }
        split = n - held;
    }
    c->n_tokens = n, c->split = split, c->n_docs = total_docs, c->held_docs = by_docs ? held_docs : 0;
    return ids;
}

void cli_print_split(const cli_corpus *c) {
    if (c->held_docs)
        fprintf(stderr, "corpus: %lld documents, %lld tokens; held out: the last %lld documents (%lld tokens)\n",
                (long long)c->n_docs, (long long)c->n_tokens, (long long)c->held_docs, (long long)(c->n_tokens - c->split));
    else
        fprintf(stderr, "corpus: %lld document%s, %lld tokens; held out: the last %lld tokens (5%% of them or one "
                "window, whichever is more), as it has fewer than %d documents\n", (long long)c->n_docs,
                c->n_docs == 1 ? "" : "s", (long long)c->n_tokens, (long long)(c->n_tokens - c->split),
                SPLIT_BY_DOCUMENTS_FROM);
}
