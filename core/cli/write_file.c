/* write_file.c — a result written all or nothing: a temporary file renamed into place, removed
 * if a signal ends the process first, and an output checked not to be one of the inputs. */
#define _POSIX_C_SOURCE 200809L
#include "cli/cli.h"
#include "base/internal.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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
