/* test_fuzz_tokenizer.c — replays the tokenizer.json fuzzer's seed corpus
 * (tests/fuzz/seeds_tokenizer: MiniMind's file and small hand-made ones, read or refused) and
 * any regression inputs (tests/malformed/fuzz_tokenizer) through the harness itself, so the
 * plain and sanitizer test builds check them on every run.
 * usage: test_fuzz_tokenizer DIR... */
#define _DEFAULT_SOURCE /* opendir */
#include "fuzz/fuzz_tokenizer_json.c"

#include "replay.h"
