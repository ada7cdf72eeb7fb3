/* cli.h — shared pieces of the attnlab command line: strict number parsing, whole-file reading
 * with a size cap, all-or-nothing file writing, and the exit codes. */
#ifndef ATTNLAB_CLI_H
#define ATTNLAB_CLI_H

#include "attnlab.h"

#include <stddef.h>
#include <stdint.h>

enum {
    EXIT_OK = 0,
    EXIT_FAILURE_ENV = 1, /* out of memory, cannot write the output */
    EXIT_BAD_INPUT = 2    /* bad flags, bad files, bad sizes */
};

/* Prints "attnlab: <message>" on one line to stderr. */
void cli_error(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;

/* Whole-string parses; 0 on any junk, overflow or value outside [lo, hi]. */
int cli_parse_int(const char *s, int64_t lo, int64_t hi, int64_t *out);
int cli_parse_double(const char *s, double *out); /* finite values only */

/* Reads a whole file (at most max_bytes) into a malloc'd buffer. On failure prints the error
 * and returns NULL. */
uint8_t *cli_read_file(const char *path, size_t max_bytes, size_t *size);

/* Writes bytes to path via a temporary file in the same directory and rename(2), so the path
 * either holds the complete new file or is untouched. Prints the error and returns 0 on
 * failure. */
int cli_write_file_atomic(const char *path, const uint8_t *bytes, size_t size);

int cmd_demo(int argc, char **argv);
int cmd_forward(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_kv_growth(int argc, char **argv);

#endif
