/* corpus.c — a text corpus as MiniMind's pretraining sees it (`attnlab train`, `attnlab eval`):
 * documents separated by a line holding only "%" (as fortune files separate them) or by an empty
 * line, each encoded as <|im_start|> text <|im_end|>, one stream of ids; the last 5% of the
 * documents held out. */
#include "cli/cli.h"

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

/* The documents' ids, one stream: <|im_start|> text <|im_end|> each. *split: where the held-out
 * part (the last 5% of the documents, at least one) starts. NULL after printing why. */
int32_t *cli_encode_corpus(const al_tokenizer *tok, const char *text, size_t len, int64_t *n_out, int64_t *split) {
    al_error err = {0};
    int64_t cap = 1024, n = 0, docs = 0, total_docs = 0;
    size_t pos, b, e;
    for (pos = 0; next_document(text, len, &pos, &b, &e);) total_docs++;
    const int64_t held_from = total_docs - (total_docs + 19) / 20;
    int32_t *ids = malloc((size_t)cap * sizeof *ids);
    *split = -1;
    for (pos = 0; ids && next_document(text, len, &pos, &b, &e); docs++) {
        const int64_t m = al_tok_encode(tok, text + b, e - b, 0, 0, NULL, 0, &err);
        if (m < 0) {
            cli_error("--corpus: %s", err.msg);
            free(ids);
            return NULL;
        }
        if (docs == held_from && *split < 0) *split = n;
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
    if (!ids) cli_error("out of memory");
    if (*split < 0) *split = n;
    *n_out = n;
    return ids;
}
