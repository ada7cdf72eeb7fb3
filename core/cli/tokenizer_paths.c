/* tokenizer_files.c — `--tokenizer PATH` for the commands that read text: the file's kind
 * recognised from its first bytes (one table row per kind a command may be given), then read
 * and checked by the core. */
#include "cli/cli.h"

#include <stdlib.h>
#include <string.h>

/* A JSON object: '{' first after white space, and no NUL byte near the start. A tokenizer.bin
 * starts with its max_token_length (at most 4096, little-endian), so its third byte is 0 even
 * when the first is '{' (max_token_length 123). */
static int is_json(const uint8_t *b, size_t n) {
    size_t i = 0;
    while (i < n && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r')) i++;
    return i < n && b[i] == '{' && !memchr(b, 0, n < 64 ? n : 64);
}

static int is_anything(const uint8_t *b, size_t n) { return (void)b, (void)n, 1; }

static const struct {
    const char *name;
    int (*sniff)(const uint8_t *bytes, size_t size);
    al_status (*create)(const uint8_t *bytes, size_t size, int64_t vocab_size, al_tokenizer **out,
                        al_error *err);
} KINDS[] = {
    {"a Hugging Face tokenizer.json", is_json, al_tok_hf_create},
    {"llama2.c's tokenizer.bin", is_anything, al_tok_llama2c_create}, /* the last: anything else */
};

al_tokenizer *cli_load_tokenizer(const char *path, int64_t vocab_size) {
    size_t size = 0;
    uint8_t *bytes = cli_read_file(path, CLI_MAX_TOKENIZER_BYTES, &size);
    if (!bytes) return NULL;
    size_t k = 0;
    while (!KINDS[k].sniff(bytes, size)) k++;
    al_tokenizer *t = NULL;
    al_error err = {0};
    if (KINDS[k].create(bytes, size, vocab_size, &t, &err) != AL_OK)
        cli_error("%s (read as %s): %s", cli_show(path), KINDS[k].name, err.msg);
    free(bytes);
    return t;
}

