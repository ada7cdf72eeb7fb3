/* unicode_class.h — the character classes of GPT-2's split pattern (letter, number, white
 * space, anything else), as the reference tokenizer's JavaScript regular expressions see them.
 * The table behind it (unicode_class.c) is generated; internal to the core, not public API. */
#ifndef ATTNLAB_UNICODE_CLASS_H
#define ATTNLAB_UNICODE_CLASS_H

#include <stddef.h>
#include <stdint.h>

typedef enum {
    AL_UC_OTHER = 0, /* [^\s\p{L}\p{N}]: punctuation, symbols, emoji, marks, controls, unassigned */
    AL_UC_LETTER,    /* \p{L} */
    AL_UC_NUMBER,    /* \p{N} */
    AL_UC_SPACE      /* JavaScript's \s (with U+FEFF, without U+0085) */
} al_uc_class;

/* The class of code point cp; AL_UC_OTHER beyond U+10FFFF. */
al_uc_class al_unicode_class(uint32_t cp);

#endif /* ATTNLAB_UNICODE_CLASS_H */
