/* tokenizer_json_write.c — a tokenizer.json laid out as MiniMind's (tokenizer_json_write.h):
 * written field by field as Python's json.dump writes them with indent 2 and ensure_ascii off,
 * so a trained or cut tokenizer reads like the file MiniMind ships. */
#include "attnlab/tokenizer.h"
#include "base/json.h"
#include "base/text.h"
#include "tokenizer/byte_level.h"
#include "tokenizer/tokenizer_json_write.h"

#include <assert.h>
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

/* Token id's text in the file: an added token's content, any other's bytes as ByteLevel's
 * characters (none of which JSON escapes but " and \). */
static void put_token(al_text *o, const char *const *piece, const int32_t *len, int32_t id) {
    if (id < AL_TOK_TRAIN_SPECIALS) {
        al_json_write_string(o, al_tok_minimind_added[id], strlen(al_tok_minimind_added[id]));
        return;
    }
    char *chars = malloc(2 * (size_t)len[id]);
    if (!chars) {
        o->failed = 1;
        return;
    }
    size_t n = 0;
    for (int32_t k = 0; k < len[id]; k++) n += al_byte_level_utf8((unsigned char)piece[id][k], chars + n);
    al_json_write_string(o, chars, n);
    free(chars);
}

al_status al_tok_json_write(const char *const *piece, const int32_t *len, int32_t n_tok, const int32_t *merges,
                            int32_t n_merges, char **out, size_t *out_len, al_error *err) {
    assert(n_tok >= AL_TOK_TRAIN_SPECIALS && n_merges >= 0);
    al_text o;
    al_text_init_grow(&o);
    al_text_puts(&o, "{\n  \"version\": \"1.0\",\n  \"truncation\": null,\n  \"padding\": null,\n  \"added_tokens\": [");
    for (int32_t id = 0; id < AL_TOK_TRAIN_SPECIALS; id++) {
        al_text_puts(&o, id ? ",\n    {\n      \"id\": " : "\n    {\n      \"id\": ");
        al_text_int(&o, id);
        al_text_puts(&o, ",\n      \"content\": ");
        put_token(&o, piece, len, id);
        al_text_puts(&o, ",\n      \"single_word\": false,\n      \"lstrip\": false,\n      \"rstrip\": false,\n"
                  "      \"normalized\": false,\n      \"special\": ");
        al_text_puts(&o, id < N_SPECIAL_TRUE ? "true\n    }" : "false\n    }");
    }
    al_text_puts(&o, "\n  ],\n  \"normalizer\": null,\n  \"pre_tokenizer\": {\n    \"type\": \"ByteLevel\",\n"
              "    \"add_prefix_space\": false,\n    \"trim_offsets\": true,\n    \"use_regex\": true\n  },\n"
              "  \"post_processor\": null,\n  \"decoder\": {\n    \"type\": \"ByteLevel\",\n"
              "    \"add_prefix_space\": true,\n    \"trim_offsets\": true,\n    \"use_regex\": true\n  },\n"
              "  \"model\": {\n    \"type\": \"BPE\",\n    \"dropout\": null,\n    \"unk_token\": null,\n"
              "    \"continuing_subword_prefix\": null,\n    \"end_of_word_suffix\": null,\n"
              "    \"fuse_unk\": false,\n    \"byte_fallback\": false,\n    \"ignore_merges\": false,\n"
              "    \"vocab\": {");
    for (int32_t id = 0; id < n_tok; id++) {
        al_text_puts(&o, id ? ",\n      " : "\n      ");
        put_token(&o, piece, len, id);
        al_text_puts(&o, ": ");
        al_text_int(&o, id);
    }
    al_text_puts(&o, "\n    },\n    \"merges\": [");
    for (int32_t m = 0; m < n_merges; m++) {
        al_text_puts(&o, m ? ",\n      [\n        " : "\n      [\n        ");
        put_token(&o, piece, len, merges[2 * m]);
        al_text_puts(&o, ",\n        ");
        put_token(&o, piece, len, merges[2 * m + 1]);
        al_text_puts(&o, "\n      ]");
    }
    al_text_puts(&o, n_merges ? "\n    ]\n  }\n}" : "]\n  }\n}");
    if (o.failed) {
        free(o.buf);
        *out = NULL, *out_len = 0;
        return al_fail(err, AL_ERR_NOMEM, "out of memory for the tokenizer.json");
    }
    *out = o.buf, *out_len = (size_t)o.len;
    return AL_OK;
}
