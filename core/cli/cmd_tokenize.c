/* cmd_tokenize.c — `attnlab tokenize`: text to token ids, or to their pieces, with a tokenizer
 * file (llama2.c's tokenizer.bin or a Hugging Face tokenizer.json, core/io/tokenizer*.c), and
 * ids back to text with --decode. The file is read by cli_load_tokenizer
 * (cli/tokenizer_files.c), which tells its kind from its first bytes. BOS is added by default
 * where the tokenizer has one (llama2.c's); a tokenizer.json has none (Hugging Face's encode
 * adds nothing to MiniMind's text), so nothing is added with or without --no-bos, and --eos
 * is refused. */
#include "cli/cli.h"
#include "base/text.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const char *tokenizer, *text; /* text NULL: standard input */
    int64_t vocab_size;           /* 0: as many tokens as the file holds */
    int pieces, bos, eos, decode;
} tokenize_args;

/* ---- arguments ----------------------------------------------------------------------------- */

static int parse_args(int argc, char **argv, tokenize_args *a) {
    memset(a, 0, sizeof *a);
    a->bos = 1;
    for (int i = 0; i < argc; i++) {
        const char *flag = argv[i];
        if (!strcmp(flag, "--pieces")) a->pieces = 1;
        else if (!strcmp(flag, "--no-bos")) a->bos = 0;
        else if (!strcmp(flag, "--eos")) a->eos = 1;
        else if (!strcmp(flag, "--decode")) a->decode = 1;
        else if (!strcmp(flag, "--tokenizer") || !strcmp(flag, "--text") || !strcmp(flag, "--vocab-size")) {
            const char *value = i + 1 < argc ? argv[++i] : NULL;
            if (!value) {
                cli_error("%s expects %s", flag, !strcmp(flag, "--tokenizer") ? "a file path"
                                                 : !strcmp(flag, "--text")   ? "the text (or leave it out to read standard input)"
                                                                             : "a whole number");
                return 0;
            }
            if (!strcmp(flag, "--tokenizer")) a->tokenizer = value;
            else if (!strcmp(flag, "--text")) a->text = value;
            else if (!cli_parse_int(value, 0, AL_TOK_MAX_VOCAB, &a->vocab_size)) {
                cli_error("--vocab-size expects a whole number between 0 and %d (0: as many tokens "
                          "as the file holds), got '%s'", AL_TOK_MAX_VOCAB, cli_show(value));
                return 0;
            }
        } else {
            cli_error("unknown option '%s' for tokenize (see 'attnlab help')", cli_show(flag));
            return 0;
        }
    }
    if (!a->tokenizer) {
        cli_error("tokenize needs --tokenizer (a tokenizer.bin such as models/stories260K/tok512.bin)");
        return 0;
    }
    if (a->decode && (a->pieces || !a->bos || a->eos)) {
        cli_error("--decode reads ids and prints their text; --pieces, --no-bos and --eos are for "
                  "encoding");
        return 0;
    }
    return 1;
}

/* ---- output -------------------------------------------------------------------------------- */

/* A piece on the one line of --pieces: a space shown as U+2581 '▁' (as SentencePiece shows
 * one), so spaces only separate pieces; a backslash as \\ and a real U+2581 as \u{2581}, so
 * the line reads back unambiguously; \n, \t, \r; the characters al_hidden_char names and bytes that
 * are not UTF-8 as \xNN or \u{NNNN}. */
static void put_piece(const char *p, size_t n) {
    const unsigned char *u = (const unsigned char *)p;
    for (size_t i = 0; i < n;) {
        uint32_t cp = 0;
        size_t len = al_utf8_char(u + i, n - i, &cp);
        if (len == 0) printf("\\x%02X", u[i]), len = 1;
        else if (cp == ' ') fputs("\xE2\x96\x81", stdout);
        else if (cp == '\\') fputs("\\\\", stdout);
        else if (cp == 0x2581) fputs("\\u{2581}", stdout);
        else if (cp == '\n') fputs("\\n", stdout);
        else if (cp == '\t') fputs("\\t", stdout);
        else if (cp == '\r') fputs("\\r", stdout);
        else if (al_hidden_char(cp)) printf(cp < 0x100 ? "\\x%02X" : "\\u{%04X}", (unsigned)cp);
        else fwrite(p + i, 1, len, stdout);
        i += len;
    }
}

static int encode(const al_tokenizer *t, const tokenize_args *a, const char *text, size_t len) {
    al_error err = {0};
    const int64_t count = al_tok_encode(t, text, len, a->bos, a->eos, NULL, 0, &err);
    int32_t *ids = count >= 0 ? malloc((size_t)(count ? count : 1) * sizeof *ids) : NULL;
    if (!ids || al_tok_encode(t, text, len, a->bos, a->eos, ids, count, &err) != count) {
        const int env = (count >= 0 && !ids) || err.status == AL_ERR_NOMEM;
        cli_error("%s", count >= 0 && !ids ? "out of memory" : err.msg);
        free(ids);
        return env ? EXIT_FAILURE_ENV : EXIT_BAD_INPUT;
    }
    for (int64_t i = 0; i < count; i++) {
        if (i) putchar(' ');
        if (a->pieces) {
            size_t n = 0;
            const char *piece = al_tok_piece(t, ids[i], &n);
            put_piece(piece, n);
        } else {
            printf("%ld", (long)ids[i]);
        }
    }
    putchar('\n');
    free(ids);
    return EXIT_OK;
}

static int is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

/* The ids of `text`, whole numbers separated by white space, all read and checked before any
 * is decoded (a bad one prints nothing but the error); NULL after printing why. */
static int32_t *parse_ids(const al_tokenizer *t, const char *text, size_t len, size_t *count) {
    int32_t *ids = malloc((len / 2 + 1) * sizeof *ids); /* each id takes a digit and a space */
    if (!ids) {
        cli_error("out of memory");
        return NULL;
    }
    const int64_t vocab = al_tok_vocab_size(t);
    size_t n = 0;
    for (size_t i = 0;; n++) {
        while (i < len && is_space(text[i])) i++;
        if (i == len) break;
        size_t j = i;
        while (j < len && !is_space(text[j])) j++;
        char word[24];
        int64_t id = -1;
        const int fits = j - i < sizeof word;
        memcpy(word, text + i, fits ? j - i : sizeof word - 4);
        memcpy(word + (fits ? j - i : sizeof word - 4), fits ? "" : "...", fits ? 1 : 4);
        if (!fits || !cli_parse_int(word, 0, INT32_MAX, &id)) {
            cli_error("--decode: '%s' is not a token id (whole numbers from 0, separated by spaces)",
                      cli_show(word));
            free(ids);
            return NULL;
        }
        if (id >= vocab) {
            cli_error("--decode: token id %lld is outside [0, %lld)", (long long)id, (long long)vocab);
            free(ids);
            return NULL;
        }
        ids[n] = (int32_t)id;
        i = j;
    }
    *count = n;
    return ids;
}

/* The text of the ids through the streaming decoder, written as it comes, then a newline. */
static int decode(const al_tokenizer *t, const char *text, size_t len) {
    size_t n = 0;
    int32_t *ids = parse_ids(t, text, len, &n);
    if (!ids) return EXIT_BAD_INPUT;
    al_error err = {0};
    al_tok_stream *s = NULL;
    size_t cap = 256;
    char *out = malloc(cap);
    if (!out || al_tok_stream_create(t, &s, &err) != AL_OK) {
        cli_error("%s", out ? err.msg : "out of memory");
        free(out);
        free(ids);
        return EXIT_FAILURE_ENV;
    }
    int status = EXIT_OK;
    for (size_t i = 0; i <= n; i++) {
        /* The text this id completes (after the last, what is still held): its size first. */
        const int64_t need = i < n ? al_tok_stream_push(s, ids[i], NULL, 0, &err)
                                   : al_tok_stream_finish(s, NULL, 0, &err);
        char *grown = need >= 0 && (size_t)need > cap ? realloc(out, (size_t)need) : out;
        if (grown != out && grown) out = grown, cap = (size_t)need;
        const int64_t wrote = need < 0 || !grown ? -1
                              : i < n ? al_tok_stream_push(s, ids[i], out, (int64_t)cap, &err)
                                      : al_tok_stream_finish(s, out, (int64_t)cap, &err);
        if (wrote < 0) { /* the ids were checked: only memory can run out */
            cli_error("--decode: %s", grown ? err.msg : "out of memory");
            status = EXIT_FAILURE_ENV;
            break;
        }
        fwrite(out, 1, (size_t)wrote, stdout);
    }
    if (status == EXIT_OK) putchar('\n');
    free(out);
    free(ids);
    al_tok_stream_free(s);
    return status;
}

int cmd_tokenize(int argc, char **argv) {
    tokenize_args args;
    if (!parse_args(argc, argv, &args)) return EXIT_BAD_INPUT;
    al_tokenizer *t = cli_load_tokenizer(args.tokenizer, args.vocab_size);
    if (!t) return EXIT_BAD_INPUT;
    if (args.eos && al_tok_eos_id(t) < 0) {
        cli_error("--eos: '%s' defines no EOS token of its own (a tokenizer.json adds none)", cli_show(args.tokenizer));
        al_tok_free(t);
        return EXIT_BAD_INPUT;
    }
    if (al_tok_bos_id(t) < 0) args.bos = 0;
    size_t len = 0;
    uint8_t *input = NULL;
    if (args.text) len = strlen(args.text);
    else if (!(input = cli_read_stdin((size_t)AL_TOK_MAX_TEXT, &len))) {
        al_tok_free(t);
        return EXIT_BAD_INPUT;
    }
    const char *text = args.text ? args.text : (const char *)input;
    const int status = args.decode ? decode(t, text, len) : encode(t, &args, text, len);
    free(input);
    al_tok_free(t);
    return status; /* main checks that standard output was written */
}
