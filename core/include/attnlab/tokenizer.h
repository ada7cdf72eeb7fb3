/* attnlab/tokenizer.h — text to token ids and back: llama2.c's tokenizer.bin (score-ordered
 * merges, byte fallback) and Hugging Face's tokenizer.json for byte-level BPE as MiniMind's
 * (GPT-2's scheme: merges by rank). Part of attnlab.h. */
#ifndef ATTNLAB_TOKENIZER_H
#define ATTNLAB_TOKENIZER_H

#include "attnlab/base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------------------------
 * A tokenizer: one opaque handle whatever file it came from (llama2.c's tokenizer.bin or a
 * Hugging Face tokenizer.json); every call below takes either. Ids are int32; a piece is the
 * byte string a token stands for, not necessarily UTF-8.
 * ------------------------------------------------------------------------------------------ */

typedef struct al_tokenizer al_tokenizer;

/* The ids llama2.c's format reserves: <unk>, <s> (BOS) and </s> (EOS); ids 3..258 are the
 * byte pieces <0x00>..<0xFF>, so byte b falls back to id b + 3. */
#define AL_TOK_UNK 0
#define AL_TOK_BOS 1
#define AL_TOK_EOS 2
#define AL_TOK_BYTE0 3

#define AL_TOK_MAX_VOCAB (1 << 21)            /* tokens in one file (Gemma's 256K fits) */
#define AL_TOK_MAX_PIECE 4096                 /* bytes of max_token_length, so of any piece */
#define AL_TOK_MAX_TEXT ((int64_t)1 << 24)    /* bytes of text one encode call accepts */
#define AL_TOK_MAX_ADDED_BYTES ((int64_t)1 << 30) /* bytes of a tokenizer.json's added tokens together */

/* Reads a tokenizer.bin image (llama2.c's export.py / tokenizer.py format): a little-endian
 * int32 max_token_length, then per token a float32 score, an int32 byte length and the bytes.
 * vocab_size is how many tokens the file must hold (512 for stories260K's tok512.bin; the file
 * does not say), or 0 to take as many as it holds. Everything is checked before it is used,
 * and a malformed image is AL_ERR_FORMAT with a message naming the token and the field:
 * a length that is negative, zero, longer than max_token_length or past the end of the file, a
 * NaN or infinite score, a piece with a NUL byte (llama2.c reads pieces as C strings), a file
 * holding more or fewer tokens than vocab_size, fewer than 259 tokens, or ids 3..258 that are
 * not the byte pieces <0x00>..<0xFF>. Pieces need not be UTF-8. The image is copied: the caller
 * may free `bytes` after. Where two tokens have the same piece, text maps to the lower id. */
al_status al_tok_llama2c_create(const uint8_t *bytes, size_t size, int64_t vocab_size,
                                al_tokenizer **out, al_error *err);

/* Reads a Hugging Face tokenizer.json (the `tokenizers` library's format, UTF-8 JSON) of the
 * kind MiniMind's is: model BPE, pre-tokenizer ByteLevel (alone, or the only member of a
 * Sequence), decoder ByteLevel, no normalizer, post-processor none or ByteLevel. Text encodes
 * as the library encodes it with add_special_tokens (the reference in the tests is its
 * JavaScript port, @huggingface/tokenizers):
 *   1. the added tokens (special or not) are found in the text first, the longest at the
 *      leftmost place where one starts, and each becomes its id (in one pass over the text
 *      whatever their number: an automaton of their contents, built with the handle, a node
 *      per byte of them at most);
 *   2. each section of text between them (a space put in front when the pre-tokenizer's
 *      add_prefix_space is true and the section does not start with one) is split by GPT-2's
 *      pattern 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
 *      (unless use_regex is false), letters, numbers and white space as JavaScript's regular
 *      expressions class them (its \s: with U+FEFF, without U+0085); a byte that is not part
 *      of well-formed UTF-8 counts as one character that is neither;
 *   3. each piece's bytes are ByteLevel's characters (byte b is U+00bb for the 188 printable
 *      ones, U+0100 + k for the k-th other), and pairs merge by rank, the lowest first, the
 *      leftmost first among equal ranks.
 * Nothing is added around the text: a tokenizer.json defines no BOS or EOS of its own (MiniMind's
 * <|im_start|> and <|im_end|> belong to its chat format; its post-processor is null), so
 * al_tok_bos_id and al_tok_eos_id give -1 and encode refuses bos or eos. A piece is the text a
 * token decodes to: an added token's content as it is, any other token's characters mapped back
 * to their bytes (which may be part of a character, or NUL). Score: 0 for every token.
 * The file is checked whole before anything is kept, each problem AL_ERR_FORMAT with a message
 * naming the field or the token: JSON syntax, a missing or mistyped field; a model, pre-
 * tokenizer or decoder of another type, a normalizer, a post-processor other than ByteLevel,
 * truncation or padding; the options no tokenizer of this kind uses (byte_fallback,
 * ignore_merges, dropout, a continuing-subword prefix or end-of-word suffix, an added token's
 * lstrip, rstrip or single_word); vocabulary ids that are not 0..n-1 each once, a token that is
 * not a string of ByteLevel characters, a byte with no token of its own; a merge whose halves or
 * result are not in the vocabulary, or a merge given twice; an unk_token not in the vocabulary;
 * an added token whose content is empty, repeated, or in the vocabulary under another id, or
 * whose id is taken or leaves a gap (added tokens outside the vocabulary take the ids after
 * it); more than AL_TOK_MAX_VOCAB tokens or merges, a piece longer than AL_TOK_MAX_PIECE bytes.
 * vocab_size: how many ids the file must define (vocabulary and added tokens; another count is
 * AL_ERR_FORMAT), or 0 for as many as it does; outside [0, AL_TOK_MAX_VOCAB] it is AL_ERR_ARG.
 * bytes is not kept: the caller may free it after. AL_ERR_LIMIT: the added tokens' contents
 * above AL_TOK_MAX_ADDED_BYTES together, or a tokenizer too large for the address space;
 * AL_ERR_NOMEM if memory runs out. */
al_status al_tok_hf_create(const uint8_t *bytes, size_t size, int64_t vocab_size,
                           al_tokenizer **out, al_error *err);
void al_tok_free(al_tokenizer *t);

int64_t al_tok_vocab_size(const al_tokenizer *t); /* -1 if t is NULL */
/* The id encode puts first when asked for BOS, and last for EOS: llama2.c's 1 and 2; -1 for a
 * tokenizer.json (which has neither) or a NULL t. */
int32_t al_tok_bos_id(const al_tokenizer *t);
int32_t al_tok_eos_id(const al_tokenizer *t);
/* The piece of `id` (NUL-terminated, inside the handle) and its length in *len (may be NULL);
 * NULL if t is NULL or id is outside [0, vocab size). */
const char *al_tok_piece(const al_tokenizer *t, int32_t id, size_t *len);
/* The piece's score (finite: the file is checked; 0 for a tokenizer.json), or NaN if t is NULL
 * or id out of range. */
float al_tok_score(const al_tokenizer *t, int32_t id);

/* Encodes text[0, len): a tokenizer.json's as al_tok_hf_create says (bos and eos must be 0);
 * llama2.c's as its run.c `encode` does: BOS (if bos) first; for non-empty
 * text a dummy-prefix " " token; each UTF-8 character (a lead byte and the continuation
 * bytes after it, 4 bytes at most, exactly as run.c groups them) looked up as a piece, or else
 * each of its bytes as byte + 3; then repeatedly the adjacent pair whose concatenated piece is
 * in the vocabulary with the highest score (above -1e10, the first such pair on ties) merged
 * into that token; EOS (if eos) last. Two places where run.c has no defined answer: a NUL byte
 * in the text is the byte <0x00> (run.c stops there), and a vocabulary without a " " piece
 * gets the byte <0x20> as the prefix (run.c writes id -1). O(n log n) with a heap over the
 * pairs. Writes the ids to ids[cap] and returns their count; ids NULL with cap 0 is a size
 * query (the count, nothing written). -1 with *err set on failure (ids untouched):
 * AL_ERR_ARG (also bos or eos for a tokenizer that has none), AL_ERR_LIMIT
 * (len > AL_TOK_MAX_TEXT), AL_ERR_CAPACITY (cap below the count, which the message gives),
 * AL_ERR_NOMEM. Allocates (and frees before returning) scratch of 28 bytes per text byte for
 * llama2.c's (plus the longest piece's length); for a tokenizer.json 9 bytes per text byte plus
 * 24 per byte of the longest piece the split gives. */
int64_t al_tok_encode(const al_tokenizer *t, const char *text, size_t len, int bos, int eos,
                      int32_t *ids, int64_t cap, al_error *err);

/* The bytes token `id` stands for when it follows `prev_id` (-1 at the start). A tokenizer.json's:
 * its piece, whatever prev_id (joined, the pieces give the library's decode, whose ByteLevel
 * decoder maps the characters back to bytes and passes added tokens through). llama2.c's, as
 * run.c's `decode`: after BOS a piece drops its leading space; a byte piece <0xNN> (exactly "<0x",
 * two hex digits of either case, ">") is the one byte 0xNN. *text points inside the handle
 * (NUL-terminated, valid until al_tok_free) and *len receives its length, which may be 0.
 * AL_ERR_ARG for an id or prev_id out of range. Nothing is skipped: BOS gives its piece. */
al_status al_tok_decode(const al_tokenizer *t, int32_t prev_id, int32_t id, const char **text,
                        size_t *len, al_error *err);

/* ------------------------------------------------------------------------------------------
 * The tokenizer as a GGUF file holds it (llama.cpp's tokenizer.ggml.* keys), for the GGUF
 * writer: llama2.c's as the SentencePiece vocabulary it was exported from ("llama"), a
 * tokenizer.json's as byte-level BPE ("gpt2").
 * ------------------------------------------------------------------------------------------ */

/* tokenizer.ggml.token_type's values (llama.cpp's llama_token_type). */
typedef enum {
    AL_TOK_GGUF_NORMAL = 1,
    AL_TOK_GGUF_UNKNOWN = 2,
    AL_TOK_GGUF_CONTROL = 3,
    AL_TOK_GGUF_USER_DEFINED = 4,
    AL_TOK_GGUF_BYTE = 6
} al_tok_gguf_type;

/* tokenizer.ggml.model: "llama" for llama2.c's tokenizer.bin, "gpt2" for a tokenizer.json; NULL
 * for a NULL t. */
const char *al_tok_gguf_model(const al_tokenizer *t);

/* Token id's text as tokenizer.ggml.tokens holds it, into out[cap] (no NUL), and its
 * tokenizer.ggml.token_type in *type (may be NULL). llama2.c's: SentencePiece's piece, each space
 * written back as U+2581 '▁' and ids 1 and 2 as "<s>" and "</s>" (llama2.c's export turned them
 * into spaces and "\n<s>\n", "\n</s>\n"); id 0 UNKNOWN, 1 and 2 CONTROL, the pieces <0xNN>
 * BYTE, the rest NORMAL. A tokenizer.json's: an added token's content, CONTROL if it is
 * "special", else USER_DEFINED; any other token its bytes as ByteLevel's characters (its text in
 * the file), NORMAL. Returns the text's length (out NULL with cap 0: a size query), -1 for a
 * NULL t, an id out of range or a cap below the length. */
int64_t al_tok_gguf_token(const al_tokenizer *t, int32_t id, char *out, int64_t cap, int32_t *type);

/* A tokenizer.json's merges in rank order, pairs [n, 2] of the halves' ids (cap ints); returns n
 * (0 for llama2.c's, which merges by score; pairs NULL with cap 0: a count), -1 for a NULL t or
 * a cap below 2n. */
int64_t al_tok_merges(const al_tokenizer *t, int32_t *pairs, int64_t cap);

/* ------------------------------------------------------------------------------------------
 * Streaming decoder, for display: ids in one at a time, text out that is always whole UTF-8
 * characters. Bytes of a character split over several byte tokens (a Chinese character as
 * <0xE4><0xB8><0xAD>) are held until the character is complete; a byte that cannot be part of
 * well-formed UTF-8 (or a sequence cut short by the next byte, or by the end) is written as the
 * four characters \xNN (hex upper case), so the output is valid UTF-8 and never holds U+FFFD.
 * (Text that itself contains "\x41" looks the same: this is for reading, not round trips.)
 * llama2.c's BOS and EOS write nothing (they still count as the previous token: a piece after
 * BOS drops its leading space); every other id writes al_tok_decode's bytes, a tokenizer.json's
 * added tokens (<|im_start|>, ...) included, as the library's decode writes them. Control
 * characters such as newlines are written as they are. On the ids of valid UTF-8 text the
 * output is that text, pushed one id at a time, never a character split.
 * ------------------------------------------------------------------------------------------ */

typedef struct al_tok_stream al_tok_stream;

/* A decoder for `t`, which must outlive it. */
al_status al_tok_stream_create(const al_tokenizer *t, al_tok_stream **out, al_error *err);
void al_tok_stream_free(al_tok_stream *s);
/* into takes from's state (the last id, the bytes held), so that both write the same text for
 * the same ids from here on; both must decode the same tokenizer. */
al_status al_tok_stream_copy(al_tok_stream *into, const al_tok_stream *from, al_error *err);

/* Feeds one id; writes the text it completes to out[cap] (not NUL-terminated) and returns its
 * length. out NULL with cap 0 is a size query: the length, and the decoder unchanged. -1 with
 * *err set on failure, the decoder unchanged: AL_ERR_ARG (id out of range), AL_ERR_CAPACITY.
 * At most 4 * (longest piece + 3) bytes. */
int64_t al_tok_stream_push(al_tok_stream *s, int32_t id, char *out, int64_t cap, al_error *err);
/* Ends the text: writes the bytes still held (an incomplete character, escaped) and starts
 * over (no previous token). Same returns and size query as push; at most 12 bytes. */
int64_t al_tok_stream_finish(al_tok_stream *s, char *out, int64_t cap, al_error *err);

/* ------------------------------------------------------------------------------------------
 * Training a byte-level BPE tokenizer as MiniMind trains its own (trainer/train_tokenizer.py:
 * Hugging Face's BpeTrainer behind a ByteLevel pre-tokenizer), or cutting one to its first ids,
 * written as a tokenizer.json that al_tok_hf_create and the `tokenizers` library read.
 * ------------------------------------------------------------------------------------------ */

#define AL_TOK_TRAIN_SPECIALS 36                           /* MiniMind's added tokens, ids 0..35 */
#define AL_TOK_TRAIN_MIN_VOCAB (AL_TOK_TRAIN_SPECIALS + 256) /* the added tokens and the bytes */
#define AL_TOK_MAX_CORPUS ((int64_t)64 << 20)              /* bytes of text one training reads */

typedef struct {
    int64_t vocab_size; /* tokens of the result: the added tokens, the 256 bytes and each new
                         * token a merge made (fewer than asked if the corpus ran out of pairs) */
    int64_t n_merges;   /* merges learned (one more than new tokens where two merges made the
                         * same token, as "ab"+"c" and "a"+"bc") */
    int64_t n_words;    /* words the split gave */
    int64_t n_distinct; /* distinct words among them */
    int64_t last_count; /* how often the last merge's pair occurred (0: no merge) */
} al_tok_train_summary;

/* Trains on the UTF-8 text[0, len) and writes the tokenizer.json, laid out as MiniMind's file
 * is (Python's json.dump with indent 2 and ensure_ascii off), to a malloc'd *json_out of
 * *json_len bytes, to release with al_buffer_free. The steps, as MiniMind's script has the
 * library take them:
 *   1. the vocabulary starts with MiniMind's 36 added tokens (ids 0..35: <|endoftext|>,
 *      <|im_start|>, <|im_end|>, ... <tts_text_bos_single> special; <tool_call>, </tool_call>,
 *      <tool_response>, </tool_response>, <think>, </think>, <|buffer1|>..<|buffer9|> not), then
 *      ByteLevel's 256 characters in code point order (ids 36..291: '!' first, U+0143 last);
 *   2. the text is split into words by GPT-2's pattern as al_tok_hf_create encodes (the added
 *      tokens are not looked for: the library trains before it adds them), each distinct word
 *      kept once with its count, as a list of its bytes' tokens;
 *   3. every adjacent pair of tokens inside a word is counted (a word's pairs times its count,
 *      overlapping ones included: "aaa" counts a+a twice);
 *   4. the most frequent pair is merged into a new token (its id the next; a token the
 *      vocabulary already has keeps its id), in every word left to right, and the counts of the
 *      pairs around each merge are updated; ties go to the pair with the lowest left id, then
 *      the lowest right id (BpeTrainer's order), so the result never depends on the order of
 *      the words; repeated until vocab_size tokens, or no pair occurs min_frequency times (at
 *      least once: min_frequency 0, as MiniMind leaves it, is 1).
 * One rule the library does not have: a pair whose token would stand for more than
 * AL_TOK_MAX_PIECE bytes is never counted, so al_tok_hf_create reads every result. A pair is
 * merged once: if a later merge brings it back (only where two merges make the same token) its
 * rank already covers it. *summary (may be NULL) says what came of it; fewer tokens than
 * vocab_size is not an error here (the caller decides). O(merges × length of the words they
 * touch), with a heap over the pairs' counts and each pair's list of words; memory a few times
 * the corpus for natural text, some 20 bytes a byte at worst (nothing but distinct words).
 * AL_ERR_ARG: a NULL pointer, len 0 (an empty corpus), vocab_size outside
 * [AL_TOK_TRAIN_MIN_VOCAB, AL_TOK_MAX_VOCAB], min_frequency < 0; AL_ERR_LIMIT: len above
 * AL_TOK_MAX_CORPUS; AL_ERR_FORMAT: text that is not UTF-8 (the message gives the offset);
 * AL_ERR_NOMEM. On failure *json_out is NULL. */
al_status al_tok_train_bpe(const char *text, size_t len, int64_t vocab_size, int64_t min_frequency,
                           char **json_out, size_t *json_len, al_tok_train_summary *summary,
                           al_error *err);

/* MiniMind's tokenizer.json (or one trained above) cut to its first `vocab` ids, for a model
 * with a smaller vocabulary: the tokens 0..vocab-1, and the merges whose two halves and result
 * are all among them, in their rank order; written as al_tok_train_bpe writes its file, to a
 * malloc'd *json_out of *json_len bytes, to release with al_buffer_free. The file is read with
 * al_tok_hf_create's checks (each failure its status and message), and must then be of the kind
 * the writer writes: MiniMind's 36 added tokens with their contents at ids 0..35 and no other
 * added token, the 256 bytes' tokens at ids 36..291, a pre-tokenizer with add_prefix_space
 * false and use_regex true; anything else is AL_ERR_FORMAT. What the writer sets whatever the
 * file says (none of it changes an encoding): the added tokens' "special" flags as MiniMind's
 * (the first 21), a ByteLevel pre-tokenizer alone rather than in a Sequence, the post-processor
 * null, the merges as pairs of strings. vocab equal to the file's size gives a file that
 * encodes every text as the file does (MiniMind's tokenizer.json comes back byte for byte).
 * AL_ERR_ARG: a NULL pointer, vocab below AL_TOK_TRAIN_MIN_VOCAB or above the file's size;
 * AL_ERR_NOMEM. On failure *json_out is NULL. */
al_status al_tok_hf_cut(const uint8_t *json, size_t size, int64_t vocab, char **json_out, size_t *json_len,
                        al_error *err);

/* ------------------------------------------------------------------------------------------
 * A corpus as MiniMind's pretraining sees it (io/corpus.c), for `attnlab train`, `attnlab eval`
 * and the page's Train tab alike.
 * ------------------------------------------------------------------------------------------ */

typedef struct {
    int32_t *ids;      /* [n_tokens] malloc'd (al_corpus_free): <|im_start|> doc <|im_end|> each */
    int64_t n_tokens;  /* the stream's length */
    int64_t split;     /* where the held-out part starts: ids [0, split) train, [split, n_tokens) held out */
    int64_t n_docs;    /* the documents */
    int64_t held_docs; /* the documents held out; 0: the corpus is split by tokens */
} al_corpus;

/* The documents of text[0, len) (separated by a line holding only "%" or by an empty line;
 * separators in a row make no empty document) as one stream of ids, each as <|im_start|> text
 * <|im_end|>, the two ids the tokenizer's own (AL_ERR_ARG naming the one it lacks), split into a
 * training part and a held-out part: the last 5% of the documents (at least one) from 20
 * documents on; with fewer, the last 5% of the tokens, at least one window of `window` tokens,
 * the rest (at least as much) for training (AL_ERR_ARG, saying so, for fewer than 2·window
 * tokens). An encoding failure is the tokenizer's status and message. *out is zero on failure. */
al_status al_corpus_encode(const al_tokenizer *tok, const char *text, size_t len, int64_t window, al_corpus *out,
                           al_error *err);
void al_corpus_free(al_corpus *c); /* the ids freed, *c zeroed; NULL: nothing */
/* Which split was used, one line ("40 documents, 51234 tokens; held out: the last 2 documents
 * (2345 tokens)"), written as al_snprintf writes (at most cap - 1 bytes, then a NUL); returns its
 * full length, -1 for a NULL c (or out NULL with cap > 0). */
int64_t al_corpus_describe(const al_corpus *c, char *out, int64_t cap);

#ifdef __cplusplus
}
#endif
#endif /* ATTNLAB_TOKENIZER_H */
