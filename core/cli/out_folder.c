/* out_folder.c — what a command that writes into a folder checks of it first: whether two paths
 * name one file (the same device and inode, whatever the names, links included), which of the
 * files it writes the folder already holds, that no other run is writing into it (a lock the
 * system drops when the process ends, however it ends), and what a run killed in the middle of
 * a write left there (NAME.next, NAME.tmp.XXXXXX), removed before a new write. */
#define _DEFAULT_SOURCE /* flock */
#include "cli/cli.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

int cli_same_file(const char *a, const char *b) {
    struct stat sa, sb;
    return a && b && stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

char *cli_path_in(const char *dir, const char *name) {
    const size_t n = strlen(dir) + strlen(name) + 2;
    char *p = malloc(n);
    if (p) snprintf(p, n, "%s/%s", dir, name);
    else cli_error("out of memory");
    return p;
}

const char *cli_folder_holds(const char *dir, const char *const *names, int n) {
    for (int i = 0; i < n; i++) {
        char *p = cli_path_in(dir, names[i]);
        struct stat sb;
        const int there = p && lstat(p, &sb) == 0;
        free(p);
        if (there) return names[i];
    }
    return NULL;
}

const char *cli_folder_has_model(const char *dir) {
    static const char *const model_files[] = {"config.json", "model.safetensors", "tokenizer.json"};
    struct stat sb;
    if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode)) return NULL;
    return cli_folder_holds(dir, model_files, 3);
}

int cli_folder_lock(const char *dir) {
    const int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) {
        cli_error("--out '%s': %s", cli_show(dir), strerror(errno));
        return -1;
    }
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        if (errno == EWOULDBLOCK) cli_error("--out '%s': another attnlab run is writing into this folder now", cli_show(dir));
        else cli_error("--out '%s': cannot lock the folder: %s", cli_show(dir), strerror(errno));
        close(fd);
        return -1;
    }
    return fd;
}

/* "NAME.next", "NAME.tmp.XXXXXX" or "NAME.next.tmp.XXXXXX" (mkstemp's six letters and digits):
 * what a write of NAME leaves when the process is killed before its rename. */
static int is_leftover(const char *entry, const char *name) {
    const size_t n = strlen(name);
    if (strncmp(entry, name, n) != 0) return 0;
    const char *rest = entry + n;
    if (!strcmp(rest, ".next")) return 1;
    if (!strncmp(rest, ".next", 5)) rest += 5;
    if (strncmp(rest, ".tmp.", 5) != 0 || strlen(rest + 5) != 6) return 0;
    for (const char *c = rest + 5; *c; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9'))) return 0;
    return 1;
}

int cli_remove_leftovers(const char *dir, const char *const *names, int n, const char *const *keep, int n_keep) {
    DIR *d = opendir(dir);
    if (!d && errno == ENOENT) return 0;
    if (!d) {
        cli_error("cannot read the folder '%s': %s", cli_show(dir), strerror(errno));
        return -1;
    }
    int removed = 0, status = 0;
    for (struct dirent *e; status == 0 && (e = readdir(d));) {
        int match = 0;
        for (int i = 0; i < n && !match; i++) match = is_leftover(e->d_name, names[i]);
        if (!match) continue;
        char *p = cli_path_in(dir, e->d_name);
        int kept = !p;
        for (int k = 0; p && k < n_keep && !kept; k++) kept = cli_same_file(p, keep[k]);
        if (!kept && unlink(p) != 0) {
            cli_error("cannot remove '%s' (left by an earlier run): %s", cli_show(p), strerror(errno));
            status = -1;
        } else if (!kept) {
            removed++;
        }
        if (!p) status = -1;
        free(p);
    }
    closedir(d);
    return status < 0 ? -1 : removed;
}
