/* cli_util.c — what the commands share: one-line messages that show user text safely,
 * number parsing, reading a safetensors file header first (and other files and standard input
 * whole, with a size cap), and writing a result all or nothing (a temporary file renamed into place, removed if the process is interrupted). */
#define _POSIX_C_SOURCE 200809L
#include "cli/cli.h"
#include "base/internal.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- messages ------------------------------------------------------------------------------- */

enum { SHOW_MAX = 160, MESSAGE_MAX = 1024 };

size_t cli_utf8_len(const unsigned char *s, size_t n, uint32_t *cp) {
    if (s[0] < 0x80) return *cp = s[0], 1;
    size_t len = s[0] >= 0xF0 && s[0] <= 0xF4 ? 4 : s[0] >= 0xE0 ? 3 : s[0] >= 0xC2 && s[0] < 0xE0 ? 2 : 0;
    if (!len || len > n) return 0;
    uint32_t v = s[0] & (0xFF >> (len + 1));
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80) return 0;
        v = v << 6 | (s[i] & 0x3F);
    }
    static const uint32_t min[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (v < min[len] || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) return 0;
    *cp = v;
    return len;
}

int cli_hidden_char(uint32_t cp) {
    return cp < 0x20 || (cp >= 0x7F && cp < 0xA0) || (cp >= 0x200B && cp <= 0x200F) ||
           (cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2060 && cp <= 0x2069) || cp == 0xFEFF;
}

/* Appends s[0, n) to out[cap] with every hidden character and every byte that is not UTF-8
 * escaped (\n, \xNN, \u{NNNN}); stops at `limit` bytes of output and adds "...". */
static void escape_into(char *out, size_t cap, const char *s, size_t n, size_t limit) {
    size_t o = strlen(out);
    const unsigned char *u = (const unsigned char *)s;
    for (size_t i = 0; i < n;) {
        char piece[16];
        uint32_t cp = 0;
        size_t len = cli_utf8_len(u + i, n - i, &cp);
        if (len == 0) snprintf(piece, sizeof piece, "\\x%02X", u[i]), len = 1;
        else if (cp == '\n') snprintf(piece, sizeof piece, "\\n");
        else if (cp == '\t') snprintf(piece, sizeof piece, "\\t");
        else if (cp == '\r') snprintf(piece, sizeof piece, "\\r");
        else if (cli_hidden_char(cp)) snprintf(piece, sizeof piece, cp < 0x100 ? "\\x%02X" : "\\u{%04X}", (unsigned)cp);
        else memcpy(piece, s + i, len), piece[len] = '\0';
        const size_t plen = strlen(piece);
        if (o + plen + 4 > cap || o + plen > limit) {
            if (o + 4 <= cap) memcpy(out + o, "...", 4), o += 3;
            return;
        }
        memcpy(out + o, piece, plen + 1);
        o += plen;
        i += len;
    }
}

const char *cli_show(const char *s) {
    /* A few rotating buffers: one message may show several arguments. */
    static char bufs[4][4 * SHOW_MAX + 8];
    static int next;
    char *out = bufs[next++ % 4];
    out[0] = '\0';
    if (!s) return "(none)";
    escape_into(out, sizeof bufs[0], s, strlen(s), SHOW_MAX);
    return out;
}

void cli_error(const char *fmt, ...) {
    char text[MESSAGE_MAX], line[MESSAGE_MAX + 16] = "";
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    escape_into(line, sizeof line, text, strlen(text), MESSAGE_MAX - 32); /* still one line */
    fprintf(stderr, "attnlab: %s\n", line);
}

/* ---- numbers -------------------------------------------------------------------------------- */

int cli_parse_int(const char *s, int64_t lo, int64_t hi, int64_t *out) {
    if (!s || !*s) return 0;
    char *end = NULL;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno != 0 || *end != '\0' || v < lo || v > hi) return 0;
    *out = (int64_t)v;
    return 1;
}

int cli_parse_double(const char *s, double *out) { return s && al_parse_finite(s, out); }

/* "1 2 3" into ids[cap]; the count, or -1 after printing why. */
int64_t cli_parse_ids(const char *text, int32_t *ids, int64_t cap) {
    int64_t n = 0;
    const char *p = text;
    while (*p) {
        while (*p == ' ' || *p == ',') p++;
        if (!*p) break;
        const char *start = p;
        while (*p && *p != ' ' && *p != ',') p++;
        char token[24];
        const size_t len = (size_t)(p - start);
        int64_t v = 0;
        if (len >= sizeof token) {
            cli_error("--ids: '%.20s...' is not a token id", start);
            return -1;
        }
        memcpy(token, start, len);
        token[len] = '\0';
        if (!cli_parse_int(token, 0, INT32_MAX, &v)) {
            cli_error("--ids: '%s' is not a token id (a whole number >= 0)", cli_show(token));
            return -1;
        }
        if (n == cap) {
            cli_error("--ids: more than %lld ids", (long long)cap);
            return -1;
        }
        ids[n++] = (int32_t)v;
    }
    return n;
}

/* ---- flags --------------------------------------------------------------------------------- */

int cli_parse_flags(int argc, char **argv, const char *cmd, const cli_flag *flags, int n) {
    for (int i = 0; i < argc; i += 2) {
        int k = 0;
        while (k < n && strcmp(argv[i], flags[k].name) != 0) k++;
        if (k == n) {
            cli_error("unknown option '%s' for %s (see 'attnlab help')", cli_show(argv[i]), cmd);
            return 0;
        }
        if (i + 1 >= argc) {
            cli_error("%s expects a value", flags[k].name);
            return 0;
        }
        *flags[k].value = argv[i + 1];
    }
    return 1;
}

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

/* ---- writing -------------------------------------------------------------------------------- */

/* The temporary file being written, removed if a signal ends the process before the rename. */
static char pending_tmp[4096];
static volatile sig_atomic_t have_pending;

static void remove_pending(int sig) {
    if (have_pending) unlink(pending_tmp); /* async-signal-safe */
    signal(sig, SIG_DFL);
    raise(sig);
}

static const int WATCHED[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE};

/* The handlers, installed before the temporary file exists, with the watched signals held back
 * (*held, restored by release) until its name is recorded: a signal in between would
 * otherwise find a file it does not know of. */
static void hold_signals(sigset_t *held) {
    sigset_t block;
    sigemptyset(&block);
    for (size_t i = 0; i < sizeof WATCHED / sizeof WATCHED[0]; i++) sigaddset(&block, WATCHED[i]);
    sigprocmask(SIG_BLOCK, &block, held);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = remove_pending;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < sizeof WATCHED / sizeof WATCHED[0]; i++) sigaction(WATCHED[i], &sa, NULL);
}

static void release_signals(const sigset_t *held) { sigprocmask(SIG_SETMASK, held, NULL); }

static void watch_pending(const char *tmp) {
    snprintf(pending_tmp, sizeof pending_tmp, "%s", tmp);
    have_pending = 1;
}

static void unwatch_pending(void) { have_pending = 0; }

int cli_check_output(const char *out, const char *const *inputs, int n_inputs) {
    if (!out || !*out) {
        cli_error("--out needs a file path (got an empty one)");
        return 0;
    }
    const size_t len = strlen(out);
    if (out[len - 1] == '/') {
        cli_error("cannot write '%s': it names a folder, not a file", cli_show(out));
        return 0;
    }
    struct stat so;
    if (stat(out, &so) == 0) {
        if (S_ISDIR(so.st_mode)) {
            cli_error("cannot write '%s': it is a folder", cli_show(out));
            return 0;
        }
        if (!S_ISREG(so.st_mode)) {
            cli_error("cannot write '%s': it exists and is not a regular file (a device, FIFO or "
                      "socket), and will not be replaced", cli_show(out));
            return 0;
        }
        for (int i = 0; i < n_inputs; i++) {
            if (cli_same_file(inputs[i], out)) {
                cli_error("--out '%s' is the same file as the input '%s': refusing to overwrite an input",
                          cli_show(out), cli_show(inputs[i]));
                return 0;
            }
        }
    } else if (errno != ENOENT) {
        cli_error("cannot write '%s': %s", cli_show(out), strerror(errno));
        return 0;
    } else {
        /* Its folder must exist and be a folder. */
        char *dir = strdup(out);
        if (!dir) {
            cli_error("out of memory");
            return 0;
        }
        char *slash = strrchr(dir, '/');
        if (slash) slash == dir ? (void)(slash[1] = '\0') : (void)(*slash = '\0');
        struct stat sd;
        const int ok = stat(slash ? dir : ".", &sd) == 0 && S_ISDIR(sd.st_mode);
        const int saved = errno;
        free(dir);
        if (!ok) {
            cli_error("cannot write '%s': its folder %s", cli_show(out),
                      saved == ENOENT || saved == 0 ? "does not exist" : strerror(saved));
            return 0;
        }
    }
    return 1;
}

int cli_write_file_atomic(const char *path, const uint8_t *bytes, size_t size) {
    size_t len = strlen(path);
    char *tmp = malloc(len + 16);
    if (!tmp) {
        cli_error("out of memory");
        return 0;
    }
    snprintf(tmp, len + 16, "%s.tmp.XXXXXX", path);
    sigset_t held;
    hold_signals(&held);
    int fd = mkstemp(tmp);
    if (fd >= 0) watch_pending(tmp);
    const int saved_create = errno;
    release_signals(&held); /* a signal that came meanwhile is handled now, file and all */
    if (fd < 0) {
        cli_error("cannot create a file beside '%s': %s", cli_show(path), strerror(saved_create));
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
        cli_error("cannot write '%s': %s", cli_show(path), strerror(saved));
        unlink(tmp);
        unwatch_pending();
        free(tmp);
        return 0;
    }
    unwatch_pending();
    free(tmp);
    return 1;
}
