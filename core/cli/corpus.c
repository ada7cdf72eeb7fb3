/* corpus.c — a text corpus as MiniMind's pretraining sees it (`attnlab train`, `attnlab eval`):
 * documents separated by a line holding only "%" (as fortune files separate them) or by an empty
 * line, each encoded as <|im_start|> text <|im_end|>, one stream of ids; the last 5% of the
 * documents held out. */
#include "cli/cli.h"

#include <stdlib.h>

/* The documents' ids, one stream: <|im_start|> text <|im_end|> each. *split: where the held-out
 * part (the last 5% of the documents) starts. NULL after printing why. */
int32_t *cli_encode_corpus(const al_tokenizer *tok, const char *text, size_t len, int64_t *n_out, int64_t *split) {
    al_error err = {0};
    int64_t cap = 1024, n = 0, docs = 0;
    int32_t *ids = malloc((size_t)cap * sizeof *ids);
    /* the document boundaries first, to know where the last 5% begins */
    size_t start = 0;
    int64_t total_docs = 0;
    for (size_t i = 0; i <= len; i++) {
        const int end = i == len || text[i] == '\n';
        if (!end) continue;
        const size_t line_len = i - start;
        const int sep = line_len == 0 || (line_len == 1 && text[start] == '%');
        total_docs += sep;
        start = i + 1;
    }
    total_docs += 1;
    const int64_t held_from = total_docs - (total_docs + 19) / 20;
    start = 0;
    size_t doc = 0;
    *split = -1;
    for (size_t i = 0; ids && i <= len; i++) {
        const int end = i == len || text[i] == '\n';
        if (!end) continue;
        const size_t line_len = i - start;
        const int sep = line_len == 0 || (line_len == 1 && text[start] == '%');
        const size_t doc_end = sep ? start : i;
        if ((sep || i == len) && doc_end > doc) {
            const int64_t m = al_tok_encode(tok, text + doc, doc_end - doc, 0, 0, NULL, 0, &err);
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
            al_tok_encode(tok, text + doc, doc_end - doc, 0, 0, ids + n, m, &err);
            n += m;
            ids[n++] = 2; /* <|im_end|> */
            docs++;
        }
        if (sep) doc = i + 1;
        start = i + 1;
    }
    if (!ids) cli_error("out of memory");
    if (*split < 0) *split = n;
    *n_out = n;
    return ids;
}

