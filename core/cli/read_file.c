/* read_file.c — the commands' reading: a safetensors file header first (checked before its data
 * is read), other files and standard input whole, each with a size cap, a regular file checked
 * before it is opened (a FIFO cannot block). */
#define _POSIX_C_SOURCE 200809L
#include "cli/cli.h"
#include "base/internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- reading -------------------------------------------------------------------------------- */

/* Reads exactly n bytes (fewer only at end of file); returns the count, or -1 on error. */
static int64_t read_full(int fd, uint8_t *buf, size_t n) {
    size_t done = 0;
    while (done < n) {
        ssize_t r = read(fd, buf + done, n - done);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) return -1;
        if (r == 0) break;
        done += (size_t)r;
    }
    return (int64_t)done;
}

/* Reads to the end of the file, at most max_bytes: `hint` is the size stat gave (0 when the
 * system does not know it, as for /proc files). */
static uint8_t *read_unsized(int fd, const char *path, size_t max_bytes, size_t hint, size_t *size) {
    size_t cap = hint ? hint + 1 : 1 << 16, len = 0; /* one byte more than expected: sees the end */
    uint8_t *buf = malloc(cap);
    for (;;) {
        if (!buf) {
            cli_error("out of memory reading '%s'", cli_show(path));
            return NULL;
        }
        int64_t got = read_full(fd, buf + len, cap - len);
        if (got < 0) {
            cli_error("cannot read '%s': %s", cli_show(path), strerror(errno));
            free(buf);
            return NULL;
        }
        len += (size_t)got;
        if (len < cap) break;
        if (cap >= max_bytes) {
            cli_error("'%s' is larger than %zu MiB; larger files are refused", cli_show(path), max_bytes >> 20);
            free(buf);
            return NULL;
        }
        cap = cap * 2 < max_bytes ? cap * 2 : max_bytes;
        uint8_t *grown = realloc(buf, cap);
        if (!grown) free(buf);
        buf = grown;
    }
    *size = len;
    return buf;
}

/* Opens a regular file for reading, checked before opening (a FIFO would block the open) and
 * again once open, and no larger than max_bytes; its size in *sb. -1 after printing why. */
static int open_regular(const char *path, size_t max_bytes, struct stat *sb) {
    if (stat(path, sb) != 0) {
        cli_error("cannot open '%s': %s", cli_show(path), strerror(errno));
        return -1;
    }
    if (!S_ISREG(sb->st_mode)) {
        cli_error("'%s' is not a regular file", cli_show(path));
        return -1;
    }
    int fd = open(path, O_RDONLY | O_NONBLOCK);
    if (fd < 0 || fstat(fd, sb) != 0 || !S_ISREG(sb->st_mode)) { /* replaced since the stat */
        cli_error(fd < 0 ? "cannot open '%s': %s" : "'%s' is not a regular file%s", cli_show(path),
                  fd < 0 ? strerror(errno) : "");
        if (fd >= 0) close(fd);
        return -1;
    }
    if ((uint64_t)sb->st_size > (uint64_t)max_bytes) {
        cli_error("'%s' is %lld bytes; files larger than %zu MiB are refused", cli_show(path),
                  (long long)sb->st_size, max_bytes >> 20);
        close(fd);
        return -1;
    }
    return fd;
}

uint8_t *cli_read_file(const char *path, size_t max_bytes, size_t *size) {
    struct stat sb;
    const int fd = open_regular(path, max_bytes, &sb);
    if (fd < 0) return NULL;
    /* Read to the end whatever stat says (a /proc file says 0), at most max_bytes. */
    uint8_t *buf = read_unsized(fd, path, max_bytes, (size_t)sb.st_size, size);
    close(fd);
    return buf;
}

uint8_t *cli_read_stdin(size_t max_bytes, size_t *size) {
    size_t cap = 1 << 16, len = 0;
    uint8_t *buf = NULL;
    for (;;) {
        /* One byte more than the limit allows, to tell "exactly max_bytes" from "more". */
        if (cap > max_bytes + 1) cap = max_bytes + 1;
        uint8_t *grown = realloc(buf, cap + 1);
        if (!grown) {
            cli_error("out of memory reading standard input");
            free(buf);
            return NULL;
        }
        buf = grown;
        const int64_t got = read_full(STDIN_FILENO, buf + len, cap - len);
        if (got < 0) {
            cli_error("cannot read standard input: %s", strerror(errno));
            free(buf);
            return NULL;
        }
        len += (size_t)got;
        if (len > max_bytes) {
            cli_error("standard input holds more than %zu MiB; larger input is refused", max_bytes >> 20);
            free(buf);
            return NULL;
        }
        if (len < cap) break;
        cap *= 2;
    }
    buf[len] = '\0';
    *size = len;
    return buf;
}

uint8_t *cli_read_safetensors(const char *path, size_t max_bytes, size_t *size) {
    /* 1. Only a regular file. */
    struct stat sb;
    const int fd = open_regular(path, max_bytes, &sb);
    if (fd < 0) return NULL;
    if (sb.st_size == 0) {
        uint8_t *buf = read_unsized(fd, path, max_bytes, 0, size);
        close(fd);
        return buf;
    }

    /* 2. The header first (length field, then the JSON), checked against the file's size
     *    before the data is read: a huge file with a broken header costs one small read. */
    const uint64_t file_size = (uint64_t)sb.st_size;
    al_error err = {0};
    uint8_t first[8] = {0};
    uint64_t header_end = 0;
    int64_t got = read_full(fd, first, file_size < 8 ? (size_t)file_size : 8);
    uint8_t *buf = NULL;
    if (got < 0) {
        cli_error("cannot read '%s': %s", cli_show(path), strerror(errno));
    } else if ((uint64_t)got < (file_size < 8 ? file_size : 8)) {
        cli_error("'%s' changed while being read", cli_show(path));
    } else if (al_st_header_size(first, 8, file_size, &header_end, &err) != AL_OK) {
        cli_error("%s: %s", cli_show(path), err.msg);
    } else if (!(buf = malloc((size_t)file_size))) {
        cli_error("out of memory reading '%s' (%llu bytes)", cli_show(path), (unsigned long long)file_size);
    } else {
        memcpy(buf, first, 8);
        got = read_full(fd, buf + 8, (size_t)(header_end - 8));
        if (got != (int64_t)(header_end - 8)) {
            cli_error("cannot read the header of '%s'", cli_show(path));
        } else if (al_st_check_header(buf, (size_t)header_end, file_size, &err) != AL_OK) {
            cli_error("%s: %s", cli_show(path), err.msg);
        } else {
            /* 3. The data, read straight into place after the header. */
            got = read_full(fd, buf + header_end, (size_t)(file_size - header_end));
            if (got == (int64_t)(file_size - header_end)) {
                close(fd);
                *size = (size_t)file_size;
                return buf;
            }
            cli_error("cannot read '%s': %s", cli_show(path), got < 0 ? strerror(errno) : "it is shorter than its size");
        }
    }
    free(buf);
    close(fd);
    return NULL;
}

/* ---- reading piece by piece ------------------------------------------------------------------ */

/* al_byte_source's read: the n bytes at offset, all of them or -1 (an error, or a file that
 * became shorter than its size). */
static int read_at(void *ctx, uint64_t offset, void *dst, size_t n) {
    const int fd = *(const int *)ctx;
    size_t done = 0;
    while (done < n) {
        const ssize_t r = pread(fd, (uint8_t *)dst + done, n - done, (off_t)(offset + done));
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return -1;
        done += (size_t)r;
    }
    return 0;
}

int cli_source_open(cli_source *s, const char *path, size_t max_bytes) {
    struct stat sb;
    s->fd = open_regular(path, max_bytes, &sb);
    if (s->fd < 0) return -1;
    s->src = (al_byte_source){read_at, &s->fd, (uint64_t)sb.st_size};
    return 0;
}

void cli_source_close(cli_source *s) {
    if (s->fd >= 0) close(s->fd);
    s->fd = -1;
}
