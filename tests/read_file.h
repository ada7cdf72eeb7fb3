/* read_file.h — the native tests' one whole-file reader. A file that cannot be read is a failed
 * CHECK naming the file and the reason (no such file, a directory, a read error, out of
 * memory), never an empty or short input that a test would then wave through. */
#ifndef ATTNLAB_READ_FILE_H
#define ATTNLAB_READ_FILE_H

#include "check.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The bytes of `path` in a new buffer of exactly *size bytes (as libFuzzer hands its inputs, so
 * ASan catches a read one byte past the end), for the caller to free. On failure: a failed
 * CHECK that says why, *size 0 and NULL. */
static inline uint8_t *read_file(const char *path, size_t *size) {
    *size = 0;
    FILE *f = fopen(path, "rb");
    if (!f) {
        CHECK(f != NULL, "cannot open %s: %s", path, strerror(errno));
        return NULL;
    }
    size_t n = 0, cap = 4096;
    uint8_t *buf = malloc(cap);
    const char *why = buf ? NULL : "out of memory";
    /* Read until the end of the file, doubling the buffer. */
    while (!why) {
        n += fread(buf + n, 1, cap - n, f);
        if (ferror(f)) {
            why = strerror(errno); /* EISDIR for a directory, EIO, ... */
            break;
        }
        if (feof(f)) break;
        uint8_t *grown = cap <= SIZE_MAX / 2 ? realloc(buf, cap * 2) : NULL;
        if (!grown) why = "out of memory";
        else buf = grown, cap *= 2;
    }
    fclose(f);
    CHECK(why == NULL, "cannot read %s: %s", path, why);
    if (why) {
        free(buf);
        return NULL;
    }
    uint8_t *exact = realloc(buf, n ? n : 1);
    *size = n;
    return exact ? exact : buf;
}

#endif
