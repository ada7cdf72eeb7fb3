/* pickle.h — the restricted pickle machine (pickle.c) the .pth reader (pth.c) runs: values,
 * the stack, MARKs, the memo, tuples, dicts and their items, the opcodes a state_dict of tensors
 * needs, and no others. The host (pth.c) names the globals the pickle may use and says what
 * BINPERSID and REDUCE make; nothing is ever called. Internal to the core, not public API. */
#ifndef ATTNLAB_PICKLE_H
#define ATTNLAB_PICKLE_H

#include "base/internal.h"

#include <stddef.h>
#include <stdint.h>

/* Bounds on what a pickle may make the machine hold. A state_dict nests three MARKs deep and
 * its stack holds at most pickle's batch of 1000 items (2000 values) plus a few. A tensor
 * takes about 17 values and 15 tuple elements (fewer with the memo), and MiniMind's largest
 * state_dicts hold a few hundred tensors; the bounds keep all the machine holds under 45 MB
 * (values 12, elements 8, memo 8, tensors 11.5, items 3), however the pickle repeats itself
 * through the memo. */
enum {
    PK_MAX_STACK = 1 << 16,   /* values on the stack */
    PK_MAX_MARKS = 64,        /* open MARKs */
    PK_MAX_MEMO = 1 << 20,    /* memo indices */
    PK_MAX_LINE = 256,        /* bytes of a GLOBAL's module or name line */
    PK_MAX_KEY = 1024,        /* bytes of a storage key */
    PK_MAX_VALUES = 1 << 19,  /* values made */
    PK_MAX_KIDS = 1 << 20,    /* elements of all tuples */
    PK_MAX_ITEMS = 1 << 17,   /* dict items set */
    PK_MAX_TENSORS = 1 << 17  /* tensors rebuilt */
};

/* What a value is; PK_STORAGE and PK_TENSOR are made by the host's BINPERSID and REDUCE. */
typedef enum { PK_NONE, PK_BOOL, PK_INT, PK_STR, PK_TUPLE, PK_GLOBAL, PK_DICT, PK_STORAGE, PK_TENSOR } pk_kind;

/* A value; what `a` and `n` hold depends on the kind:
 * PK_BOOL, PK_INT: a = the number; PK_STR: a = offset in the pickle, n = bytes;
 * PK_TUPLE: a = first element in kids, n = elements; PK_GLOBAL: a = the host's index of it;
 * PK_DICT: n = items set; PK_STORAGE, PK_TENSOR: a = the host's index of it. */
typedef struct {
    pk_kind kind;
    int64_t a, n;
} pk_value;

typedef struct {
    int64_t dict, key, value; /* value indices: one SETITEM, in order */
} pk_item;

typedef struct pk_machine pk_machine;

/* Every resource of one run, freed in one place (al_pickle_free); the host's hooks and state. */
struct pk_machine {
    const uint8_t *pk; /* the pickle [len] */
    size_t len, at;    /* at: the opcode being run, for messages */

    /* GLOBAL module.name: the host's index of that global, or -1 to refuse it. */
    int (*find_global)(const uint8_t *module, size_t module_len, const uint8_t *name, size_t name_len);
    /* BINPERSID on the persistent id pid (popped): pushes the object it names. */
    al_status (*persistent_load)(pk_machine *m, int64_t pid, al_error *err);
    /* REDUCE of the global `global` (the host's index) on the tuple args (both popped): pushes
     * the result. */
    al_status (*reduce)(pk_machine *m, int global, int64_t args, al_error *err);
    void *host;

    pk_value *values;
    int64_t n_values, cap_values;
    int64_t *stack;
    int64_t depth, cap_stack;
    int64_t marks[PK_MAX_MARKS];
    int n_marks;
    int64_t *memo; /* [cap_memo], -1 where unset */
    int64_t cap_memo;
    int64_t *kids; /* the elements of every tuple */
    int64_t n_kids, cap_kids;
    pk_item *items;
    int64_t n_items, cap_items;
};

/* 1 if bytes[size] starts as a pickle does (PROTO 0 to 5). */
int al_pickle_starts(const uint8_t *bytes, size_t size);

/* Runs m->pk to its STOP; *result is the one value left on the stack. */
al_status al_pickle_run(pk_machine *m, int64_t *result, al_error *err);
/* Frees the machine's arrays (not the host's). */
void al_pickle_free(pk_machine *m);

/* For the host's hooks: */
al_status al_pickle_no_memory(al_error *err);
/* "pickle: <what> at byte <at>", AL_ERR_FORMAT. */
al_status al_pickle_error(const pk_machine *m, al_error *err, const char *what);
/* Room for one more element in a growing array (doubling), of at most `limit` elements. */
al_status al_pickle_grow(const pk_machine *m, void **array, int64_t *cap, int64_t used, size_t elem, int64_t limit,
                         const char *what, al_error *err);
#define AL_PICKLE_GROW(m, owner, arr, cap, used, limit, what, err) \
    al_pickle_grow(m, (void **)&(owner)->arr, &(owner)->cap, (owner)->used, sizeof *(owner)->arr, limit, what, err)
/* Pushes a new value of kind k. */
al_status al_pickle_push_new(pk_machine *m, pk_kind k, int64_t a, int64_t n, al_error *err);
/* The i-th element of tuple value t into *out; it must be of kind k (else a message naming what). */
al_status al_pickle_element(const pk_machine *m, int64_t t, int64_t i, pk_kind k, const char *what, int64_t *out,
                            al_error *err);
/* "a tensor", "None", ... for value v. */
const char *al_pickle_kind_name(const pk_machine *m, int64_t v);
/* A string value's bytes; whether value v is the string s. */
const uint8_t *al_pickle_str_bytes(const pk_machine *m, const pk_value *v);
int al_pickle_str_is(const pk_machine *m, int64_t v, const char *s);
/* The n-byte little-endian number at p (n <= 4). */
uint32_t al_pickle_rd_le(const uint8_t *p, int n);

#endif /* ATTNLAB_PICKLE_H */
