/* tok_json.h — small Hugging Face tokenizer.json files built in memory for the native tests, of
 * MiniMind's kind (BPE, ByteLevel): the 256 bytes as the tokens 0..255 in byte order, then the
 * tokens, merges and added tokens a test needs. */
#ifndef ATTNLAB_TOK_JSON_H
#define ATTNLAB_TOK_JSON_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ByteLevel's character for byte b (GPT-2's bytes_to_unicode, written out independently of the
 * core: the printable bytes as themselves, the 68 others from U+0100 in byte order), as UTF-8. */
static inline size_t tok_json_char(unsigned b, char out[3]) {
    unsigned cp = b;
    if (!((b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE)) {
        unsigned k = 0;
        for (unsigned x = 0; x < b; x++)
            if (!((x >= 0x21 && x <= 0x7E) || (x >= 0xA1 && x <= 0xAC) || x >= 0xAE)) k++;
        cp = 0x100 + k;
    }
    if (cp < 0x80) return out[0] = (char)cp, 1;
    out[0] = (char)(0xC0 | cp >> 6), out[1] = (char)(0x80 | (cp & 0x3F));
    return 2;
}

/* text with each byte as ByteLevel's character, JSON-escaped where needed, appended to buf. */
static inline void tok_json_put(char *buf, size_t cap, const char *text) {
    size_t o = strlen(buf);
    for (const unsigned char *p = (const unsigned char *)text; *p && o + 8 < cap; p++) {
        char ch[3];
        const size_t n = tok_json_char(*p, ch);
        if (n == 1 && (ch[0] == '"' || ch[0] == '\\')) buf[o++] = '\\';
        memcpy(buf + o, ch, n);
        o += n;
    }
    buf[o] = '\0';
}

/* A tokenizer.json: the 256 bytes as ids 0..255 (byte order), then `tokens` (byte strings,
 * written in ByteLevel's characters) as 256.., the merges ("a b" byte strings, as pairs or,
 * with old_merges, as one string), added tokens (content as given, new ids after the
 * vocabulary), and the pre-tokenizer's two options. */
static inline char *tok_json(const char *const *tokens, int n_tokens, const char *const (*merges)[2],
                                int n_merges, const char *const *added, int n_added, int add_prefix_space,
                                int use_regex, int old_merges) {
    const size_t cap = 1 << 16;
    char *j = malloc(cap);
    if (!j) return NULL;
    strcpy(j, "{\"version\": \"1.0\", \"truncation\": null, \"padding\": null, \"added_tokens\": [");
    for (int i = 0; i < n_added; i++)
        snprintf(j + strlen(j), cap - strlen(j),
                 "%s{\"id\": %d, \"content\": \"%s\", \"single_word\": false, \"lstrip\": false, "
                 "\"rstrip\": false, \"normalized\": false, \"special\": true}",
                 i ? ", " : "", 256 + n_tokens + i, added[i]);
    snprintf(j + strlen(j), cap - strlen(j),
             "], \"normalizer\": null, \"pre_tokenizer\": {\"type\": \"ByteLevel\", \"add_prefix_space\": %s, "
             "\"trim_offsets\": true, \"use_regex\": %s}, \"post_processor\": null, \"decoder\": {\"type\": "
             "\"ByteLevel\", \"add_prefix_space\": true, \"trim_offsets\": true, \"use_regex\": true}, "
             "\"model\": {\"type\": \"BPE\", \"dropout\": null, \"unk_token\": null, "
             "\"continuing_subword_prefix\": null, \"end_of_word_suffix\": null, \"fuse_unk\": false, "
             "\"byte_fallback\": false, \"ignore_merges\": false, \"vocab\": {",
             add_prefix_space ? "true" : "false", use_regex ? "true" : "false");
    for (int b = 0; b < 256 + n_tokens; b++) {
        strcat(j, b ? ", \"" : "\"");
        if (b < 256) {
            const char one[2] = {(char)(b ? b : ' '), '\0'};
            if (b == 0) { /* the NUL byte cannot go through a C string: U+0100 */
                strcat(j, "\xC4\x80");
            } else {
                tok_json_put(j, cap, one);
            }
        } else {
            tok_json_put(j, cap, tokens[b - 256]);
        }
        snprintf(j + strlen(j), cap - strlen(j), "\": %d", b);
    }
    strcat(j, "}, \"merges\": [");
    for (int m = 0; m < n_merges; m++) {
        strcat(j, m ? (old_merges ? ", \"" : ", [\"") : (old_merges ? "\"" : "[\""));
        tok_json_put(j, cap, merges[m][0]);
        strcat(j, old_merges ? " " : "\", \"");
        tok_json_put(j, cap, merges[m][1]);
        strcat(j, old_merges ? "\"" : "\"]");
    }
    strcat(j, "]}}");
    return j;
}

#endif
