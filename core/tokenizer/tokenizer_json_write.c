/* tokenizer_json_write.c — a tokenizer.json laid out as MiniMind's (tokenizer_json_write.h):
 * written field by field as Python's json.dump writes them with indent 2 and ensure_ascii off,
 * so a trained or cut tokenizer reads like the file MiniMind ships. */
#include "attnlab/tokenizer.h"
#include "tokenizer/tokenizer_json_write.h"
#include "tokenizer/byte_level.h"

#include <assert.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

const char *const al_tok_minimind_added[AL_TOK_TRAIN_SPECIALS] = {
    "<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|object_ref_start|>", "<|object_ref_end|>",
    "<|box_start|>", "<|box_end|>", "<|quad_start|>", "<|quad_end|>", "<|vision_start|>",
    "<|vision_end|>", "<|vision_pad|>", "<|image_pad|>", "<|video_pad|>", "<|audio_start|>",
    "<|audio_end|>", "<|audio_pad|>", "<tts_pad>", "<tts_text_bos>", "<tts_text_eod>",
    "<tts_text_bos_single>",
    "<tool_call>", "</tool_call>", "<tool_response>", "</tool_response>", "<think>", "</think>",
    "<|buffer1|>", "<|buffer2|>", "<|buffer3|>", "<|buffer4|>", "<|buffer5|>", "<|buffer6|>",
    "<|buffer7|>", "<|buffer8|>", "<|buffer9|>",
};
/* The first 21 are "special": true; MiniMind's script marks the others not special. */
#define N_SPECIAL_TRUE 21

typedef struct {
    char *p;
    size_t len, cap;
    int failed;
} text_out;

static void put(text_out *o, const char *s, size_t n) {
    if (o->failed) return;
    if (o->len + n > o->cap) {
        size_t want = o->cap ? 2 * o->cap : 1 << 16;
        while (want < o->len + n) want *= 2;
        char *q = realloc(o->p, want);
        if (!q) {
            o->failed = 1;
            return;
        }
        o->p = q, o->cap = want;
    }
    memcpy(o->p + o->len, s, n);
    o->len += n;
}

static void puts_(text_out *o, const char *s) { put(o, s, strlen(s)); }

static void put_int(text_out *o, int64_t v) {
    char buf[24];
    put(o, buf, (size_t)al_snprintf(buf, sizeof buf, "%" PRId64, v));
}

/* A JSON string as Python's json.dump writes it with ensure_ascii off: " and \ escaped, the
 * control characters as \n, \r, \t, \b, \f or \u00XX, everything else as it is. */
static void put_string(text_out *o, const char *s, size_t n) {
    put(o, "\"", 1);
    for (size_t i = 0; i < n; i++) {
        const unsigned char c = (unsigned char)s[i];
        const char *esc = c == '"' ? "\\\"" : c == '\\' ? "\\\\" : c == '\n' ? "\\n" : c == '\r' ? "\\r"
                          : c == '\t' ? "\\t" : c == '\b' ? "\\b" : c == '\f' ? "\\f" : NULL;
        if (esc) {
            puts_(o, esc);
        } else if (c < 0x20) {
            char buf[8];
            put(o, buf, (size_t)al_snprintf(buf, sizeof buf, "\\u%04x", c));
        } else {
            put(o, s + i, 1);
        }
    }
    put(o, "\"", 1);
}

/* Token id's text in the file: an added token's content, any other's bytes as ByteLevel's
 * characters (none of which JSON escapes but " and \). */
static void put_token(text_out *o, const char *const *piece, const int32_t *len, int32_t id) {
    if (id < AL_TOK_TRAIN_SPECIALS) {
        put_string(o, al_tok_minimind_added[id], strlen(al_tok_minimind_added[id]));
        return;
    }
    char *chars = malloc(2 * (size_t)len[id]);
    if (!chars) {
        o->failed = 1;
        return;
    }
    size_t n = 0;
    for (int32_t k = 0; k < len[id]; k++) n += al_byte_level_utf8((unsigned char)piece[id][k], chars + n);
    put_string(o, chars, n);
    free(chars);
}

al_status al_tok_json_write(const char *const *piece, const int32_t *len, int32_t n_tok, const int32_t *merges,
                            int32_t n_merges, char **out, size_t *out_len, al_error *err) {
    assert(n_tok >= AL_TOK_TRAIN_SPECIALS && n_merges >= 0);
    text_out o = {NULL, 0, 0, 0};
    puts_(&o, "{\n  \"version\": \"1.0\",\n  \"truncation\": null,\n  \"padding\": null,\n  \"added_tokens\": [");
    for (int32_t id = 0; id < AL_TOK_TRAIN_SPECIALS; id++) {
        puts_(&o, id ? ",\n    {\n      \"id\": " : "\n    {\n      \"id\": ");
        put_int(&o, id);
        puts_(&o, ",\n      \"content\": ");
        put_token(&o, piece, len, id);
        puts_(&o, ",\n      \"single_word\": false,\n      \"lstrip\": false,\n      \"rstrip\": false,\n"
                  "      \"normalized\": false,\n      \"special\": ");
        puts_(&o, id < N_SPECIAL_TRUE ? "true\n    }" : "false\n    }");
    }
    puts_(&o, "\n  ],\n  \"normalizer\": null,\n  \"pre_tokenizer\": {\n    \"type\": \"ByteLevel\",\n"
              "    \"add_prefix_space\": false,\n    \"trim_offsets\": true,\n    \"use_regex\": true\n  },\n"
              "  \"post_processor\": null,\n  \"decoder\": {\n    \"type\": \"ByteLevel\",\n"
              "    \"add_prefix_space\": true,\n    \"trim_offsets\": true,\n    \"use_regex\": true\n  },\n"
              "  \"model\": {\n    \"type\": \"BPE\",\n    \"dropout\": null,\n    \"unk_token\": null,\n"
              "    \"continuing_subword_prefix\": null,\n    \"end_of_word_suffix\": null,\n"
              "    \"fuse_unk\": false,\n    \"byte_fallback\": false,\n    \"ignore_merges\": false,\n"
              "    \"vocab\": {");
    for (int32_t id = 0; id < n_tok; id++) {
        puts_(&o, id ? ",\n      " : "\n      ");
        put_token(&o, piece, len, id);
        puts_(&o, ": ");
        put_int(&o, id);
    }
    puts_(&o, "\n    },\n    \"merges\": [");
    for (int32_t m = 0; m < n_merges; m++) {
        puts_(&o, m ? ",\n      [\n        " : "\n      [\n        ");
        put_token(&o, piece, len, merges[2 * m]);
        puts_(&o, ",\n        ");
        put_token(&o, piece, len, merges[2 * m + 1]);
        puts_(&o, "\n      ]");
    }
    puts_(&o, n_merges ? "\n    ]\n  }\n}" : "]\n  }\n}");
    if (o.failed) {
        free(o.p);
        *out = NULL, *out_len = 0;
        return al_fail(err, AL_ERR_NOMEM, "out of memory for the tokenizer.json");
    }
    *out = o.p, *out_len = o.len;
    return AL_OK;
}
