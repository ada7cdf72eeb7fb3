/* test_fuzz_replay.c — replays the fuzzer's regression inputs (tests/malformed/fuzz: each once
 * crashed a build) and its seed corpus (tests/fuzz/seeds) through the fuzz harness itself, so
 * the plain and sanitizer test builds check them on every run.
 * usage: test_fuzz_replay DIR... */
#define _DEFAULT_SOURCE /* opendir */
#include "fuzz/fuzz_safetensors.c"

#include "replay.h"
