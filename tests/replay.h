/* replay.h — the main of the fuzz-replay test programs: every file of each folder on the command
 * line goes through the LLVMFuzzerTestOneInput of the harness the program includes before this
 * header (a bug aborts, or a sanitizer stops the program), and each folder must hold at least
 * one input. The summary names the program (argv[0]). */
#ifndef ATTNLAB_REPLAY_H
#define ATTNLAB_REPLAY_H

#include "check.h"
#include "read_file.h"

#include <dirent.h>
#include <stdio.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay_dir(const char *dir) {
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "cannot open %s\n", dir);
        return 0;
    }
    int count = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        size_t n;
        uint8_t *buf = read_file(path, &n); /* a corpus file that cannot be read is a failure */
        if (!buf) continue;
        LLVMFuzzerTestOneInput(buf, n); /* aborts (or a sanitizer stops) on a bug */
        count++;
        free(buf);
    }
    closedir(d);
    return count;
}

int main(int argc, char **argv) {
    for (int i = 1; i < argc; i++) {
        const int n = replay_dir(argv[i]);
        CHECK(n > 0, "no inputs replayed from %s", argv[i]);
        printf("%s: %d inputs replayed\n", argv[i], n);
    }
    CHECK(argc > 1, "usage: %s DIR...", argv[0]);
    printf("%s: %d checks, %d failed\n", argv[0], check_count, check_failures);
    return check_failures ? 1 : 0;
}

#endif
