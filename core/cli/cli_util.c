/* cli_util.c — number parsing, file reading and atomic file writing for the command line. */
#define _POSIX_C_SOURCE 200809L
#include "cli/cli.h"
#include "base/internal.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void cli_error(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fputs("attnlab: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

int cli_parse_int(const char *s, int64_t lo, int64_t hi, int64_t *out) {
    if (!s || !*s) return 0;
    char *end = NULL;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno != 0 || *end != '\0' || v < lo || v > hi) return 0;
    *out = (int64_t)v;
    return 1;
}

int cli_parse_double(const char *s, double *out) { return al_parse_finite(s, out); }

uint8_t *cli_read_file(const char *path, size_t max_bytes, size_t *size) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        cli_error("cannot open '%s': %s", path, strerror(errno));
        return NULL;
    }
    struct stat sb;
    if (fstat(fileno(f), &sb) != 0 || !S_ISREG(sb.st_mode)) {
        cli_error("'%s' is not a regular file", path);
        fclose(f);
        return NULL;
    }
    if ((uint64_t)sb.st_size > (uint64_t)max_bytes) {
        cli_error("'%s' is %lld bytes; files larger than %zu MiB are refused", path,
                  (long long)sb.st_size, max_bytes >> 20);
        fclose(f);
        return NULL;
    }
    size_t n = (size_t)sb.st_size;
    uint8_t *buf = malloc(n ? n : 1);
    if (!buf) {
        cli_error("out of memory reading '%s' (%zu bytes)", path, n);
        fclose(f);
        return NULL;
    }
    if (n && fread(buf, 1, n, f) != n) {
        cli_error("cannot read '%s'", path);
        free(buf);
        fclose(f);
        return NULL;
    }
    fclose(f);
    *size = n;
    return buf;
}

int cli_write_file_atomic(const char *path, const uint8_t *bytes, size_t size) {
    size_t len = strlen(path);
    char *tmp = malloc(len + 16);
    if (!tmp) {
        cli_error("out of memory");
        return 0;
    }
    snprintf(tmp, len + 16, "%s.tmp.XXXXXX", path);
    int fd = mkstemp(tmp);
    if (fd < 0) {
        cli_error("cannot create '%s': %s", tmp, strerror(errno));
        free(tmp);
        return 0;
    }
    size_t done = 0;
    while (done < size) {
        ssize_t w = write(fd, bytes + done, size - done);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) break;
        done += (size_t)w;
    }
    int ok = done == size && fsync(fd) == 0;
    int saved = errno;
    if (close(fd) != 0) ok = 0;
    if (ok) chmod(tmp, 0644); /* mkstemp creates 0600; give the result a normal file mode */
    if (!ok || rename(tmp, path) != 0) {
        if (ok) saved = errno;
        cli_error("cannot write '%s': %s", path, strerror(saved));
        unlink(tmp);
        free(tmp);
        return 0;
    }
    free(tmp);
    return 1;
}
