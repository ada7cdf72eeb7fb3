/* corpus.c — a text corpus as MiniMind's pretraining sees it, for `attnlab train`, `attnlab
 * eval` and the page's Train tab alike: documents separated by a line holding only "%" (as
 * fortune files separate them) or by an empty line, each encoded as <|im_start|> text
 * <|im_end|> (the two ids looked up in the tokenizer), one stream of ids; held out, the last 5%
 * of the documents, or for a corpus of fewer than 20 documents (where 5% of them is less than
 * one: a plain text file with no empty line is one document) the last 5% of the tokens, at
 * least one window. */
#include "attnlab/tokenizer.h"
#include "base/internal.h"

#include <stdlib.h>
#include <string.h>

enum { SPLIT_BY_DOCUMENTS_FROM = 20 }; /* documents: from here on 5% of them is at least one */

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

/* The id of an added token such as "<|im_start|>": the text encodes to that one token and its
 * piece is the text; -1 if the tokenizer has no such token. */
static int32_t added_token_id(const al_tokenizer *tok, const char *name) {
    int32_t id = -1;
    const size_t n = strlen(name);
    if (al_tok_encode(tok, name, n, 0, 0, NULL, 0, NULL) != 1 || al_tok_encode(tok, name, n, 0, 0, &id, 1, NULL) != 1)
        return -1;
    size_t len = 0;
    const char *piece = al_tok_piece(tok, id, &len);
    return piece && len == n && !memcmp(piece, name, n) ? id : -1;
}

void al_corpus_free(al_corpus *c) {
    if (!c) return;
    free(c->ids);
    memset(c, 0, sizeof *c);
}

al_status al_corpus_encode(const al_tokenizer *tok, const char *text, size_t len, int64_t window, al_corpus *out,
                           al_error *err) {
    if (!out) return al_fail(err, AL_ERR_ARG, "corpus: NULL argument");
    memset(out, 0, sizeof *out);
    if (!tok || (!text && len)) return al_fail(err, AL_ERR_ARG, "corpus: NULL argument");
    if (window < 1) return al_fail(err, AL_ERR_ARG, "corpus: window must be at least 1 (got %lld)", (long long)window);
    /* 1. the two ids around each document, from the tokenizer */
    const int32_t start = added_token_id(tok, "<|im_start|>"), end_id = added_token_id(tok, "<|im_end|>");
    if (start < 0 || end_id < 0)
        return al_fail(err, AL_ERR_ARG, "the tokenizer has no %s token: a corpus is MiniMind's documents, each as "
                       "<|im_start|> text <|im_end|>", start < 0 ? "<|im_start|>" : "<|im_end|>");
    /* 2. the documents, and where the held-out ones begin */
    int64_t cap = 1024, n = 0, docs = 0, total_docs = 0;
    size_t pos, b, e;
    for (pos = 0; next_document(text, len, &pos, &b, &e);) total_docs++;
    const int by_docs = total_docs >= SPLIT_BY_DOCUMENTS_FROM;
    const int64_t held_docs = (total_docs + 19) / 20, held_from = total_docs - held_docs;
    int32_t *ids = malloc((size_t)cap * sizeof *ids);
    if (!ids) return al_fail(err, AL_ERR_NOMEM, "out of memory for the corpus's ids");
    int64_t split = -1;
    /* 3. each document's ids: <|im_start|> text <|im_end|> */
    for (pos = 0; next_document(text, len, &pos, &b, &e); docs++) {
        const int64_t m = al_tok_encode(tok, text + b, e - b, 0, 0, NULL, 0, err);
        if (m < 0) {
            free(ids);
            return err ? err->status : AL_ERR_ARG;
        }
        if (docs == held_from && split < 0) split = n;
        while (n + m + 2 > cap) {
            int32_t *grown = realloc(ids, (size_t)cap * 2 * sizeof *ids);
            if (!grown) {
                free(ids);
                return al_fail(err, AL_ERR_NOMEM, "out of memory for the corpus's ids");
            }
            ids = grown, cap *= 2;
        }
        ids[n++] = start;
        al_tok_encode(tok, text + b, e - b, 0, 0, ids + n, m, NULL);
        n += m;
        ids[n++] = end_id;
    }
    if (split < 0) split = n;
    /* 4. fewer than 20 documents: the last 5% of the tokens (rounded up), at least one window;
     *    as much left to train on */
    if (!by_docs) {
        const int64_t held = (n + 19) / 20 > window ? (n + 19) / 20 : window;
        if (n < 2 * window) {
            free(ids);
            return al_fail(err, AL_ERR_ARG, "%lld tokens are too few: a corpus of fewer than %d documents needs at least "
                           "%lld (a window of %lld tokens to train on and one held out)", (long long)n,
                           SPLIT_BY_DOCUMENTS_FROM, (long long)(2 * window), (long long)window);
        }
        split = n - held;
    }
    out->ids = ids, out->n_tokens = n, out->split = split, out->n_docs = total_docs;
    out->held_docs = by_docs ? held_docs : 0;
    return AL_OK;
}

int64_t al_corpus_describe(const al_corpus *c, char *out, int64_t cap) {
    if (!c || (!out && cap > 0) || cap < 0) return -1;
    char line[256];
    int n;
    if (c->held_docs)
        n = al_snprintf(line, sizeof line, "%lld documents, %lld tokens; held out: the last %lld documents (%lld tokens)",
                     (long long)c->n_docs, (long long)c->n_tokens, (long long)c->held_docs,
                     (long long)(c->n_tokens - c->split));
    else
        n = al_snprintf(line, sizeof line, "%lld document%s, %lld tokens; held out: the last %lld tokens (5%% of them or "
                     "one window, whichever is more), as it has fewer than %d documents", (long long)c->n_docs,
                     c->n_docs == 1 ? "" : "s", (long long)c->n_tokens, (long long)(c->n_tokens - c->split),
                     SPLIT_BY_DOCUMENTS_FROM);
    if (cap > 0) al_snprintf(out, (size_t)cap, "%s", line);
    return n;
}
