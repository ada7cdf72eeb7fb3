/* byte_level.h — GPT-2's byte-level scheme, as Hugging Face's ByteLevel pre-tokenizer has it: the
 * 256-character alphabet that writes any byte as a printable character, and the split pattern
 * that cuts text into words. One copy for the tokenizer.json reader and encoder
 * (tokenizer_hf.c) and the BPE trainer (tokenizer_train.c), so both split text the same way.
 * Internal to the core, not public API. */
#ifndef ATTNLAB_BYTE_LEVEL_H
#define ATTNLAB_BYTE_LEVEL_H

#include <stddef.h>
#include <stdint.h>

/* ByteLevel's character for byte b (GPT-2's bytes_to_unicode): the 188 printable bytes
 * ('!'..'~', 0xA1..0xAC, 0xAE..0xFF) stand for themselves; the other 68 (0x00..0x20,
 * 0x7F..0xA0, 0xAD), in byte order, are U+0100..U+0143: the space 0x20 is U+0120 'Ġ', the
 * newline 0x0A is U+010A 'Ċ'. */
uint32_t al_byte_level_char(unsigned b);

/* The byte ByteLevel's character cp stands for, or -1 if cp is not one of the 256. */
int al_byte_level_byte(uint32_t cp);

/* Byte b's character as UTF-8 into out (at most 2 bytes: the characters stop at U+0143); the
 * count. */
size_t al_byte_level_utf8(unsigned b, char out[2]);

/* The bytes the ByteLevel text s[0, n) (well-formed UTF-8) stands for, into out (at most n
 * bytes; out may be NULL to count); their count, or -1 with *bad at the first character that
 * is not one of the alphabet's. */
int64_t al_byte_level_decode(const char *s, size_t n, char *out, size_t *bad);

/* Where the word of GPT-2's pattern that starts at s[i] (i < n) ends:
 *   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
 * the first alternative that matches at i, each run as long as it goes; letters, numbers and
 * white space as JavaScript's regular expressions class them (unicode_class.h), a byte that is
 * not part of well-formed UTF-8 one character that is none of them. Always past i. Splitting a
 * text is calling it from 0, then from each end, until n. */
size_t al_byte_level_word_end(const unsigned char *s, size_t n, size_t i);

#endif /* ATTNLAB_BYTE_LEVEL_H */
