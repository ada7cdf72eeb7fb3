/* tok_image.h — small llama2.c tokenizer.bin images built in memory for the native tests: the
 * 259 tokens every such file starts with (<unk>, <s>, </s>, <0x00>..<0xFF>, score 0), then
 * the pieces a test needs, with their scores. */
#ifndef ATTNLAB_TOK_IMAGE_H
#define ATTNLAB_TOK_IMAGE_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static inline void tok_image_put32(uint8_t *p, uint32_t v) {
    p[0] = (uint8_t)v, p[1] = (uint8_t)(v >> 8), p[2] = (uint8_t)(v >> 16), p[3] = (uint8_t)(v >> 24);
}

/* Appends one token (score, length, bytes) at *o when buf is not NULL; counts either way. */
static inline void tok_image_token(uint8_t *buf, size_t *o, float score, const char *piece) {
    const size_t len = strlen(piece);
    if (buf) {
        uint32_t bits;
        memcpy(&bits, &score, 4);
        tok_image_put32(buf + *o, bits);
        tok_image_put32(buf + *o + 4, (uint32_t)len);
        memcpy(buf + *o + 8, piece, len);
    }
    *o += 8 + len;
}

/* A new image (free it) of the 259 standard tokens and pieces[0, n) scored scores[0, n);
 * max_token_length is that of the longest piece. */
static inline uint8_t *tok_image(const char *const *pieces, const float *scores, int n, size_t *size) {
    static const char *const special[3] = {"<unk>", "\n<s>\n", "\n</s>\n"};
    uint8_t *buf = NULL;
    size_t longest = 6;
    for (int i = 0; i < n; i++)
        if (strlen(pieces[i]) > longest) longest = strlen(pieces[i]);
    for (int pass = 0; pass < 2; pass++) { /* count, then write */
        size_t o = 4;
        char byte[8];
        for (int i = 0; i < 3; i++) tok_image_token(buf, &o, 0.0f, special[i]);
        for (int b = 0; b < 256; b++) {
            snprintf(byte, sizeof byte, "<0x%02X>", b);
            tok_image_token(buf, &o, 0.0f, byte);
        }
        for (int i = 0; i < n; i++) tok_image_token(buf, &o, scores[i], pieces[i]);
        if (buf) break;
        *size = o;
        buf = malloc(o);
        if (!buf) return NULL;
        tok_image_put32(buf, (uint32_t)longest);
    }
    return buf;
}

#endif
