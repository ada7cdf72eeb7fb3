#!/usr/bin/env bash
# run.sh SECONDS — runs each libFuzzer harness for SECONDS (default 60):
#   fuzz_safetensors  the safetensors loader and the attention layer built from a file, from
#                     tests/fuzz/seeds (valid files, layers, every malformed file);
#   fuzz_decimal      the core's number parsing and printing against glibc's, from
#                     tests/fuzz/seeds_decimal;
#   fuzz_llama2c      llama2.c checkpoints (legacy and version 1) and the model built from
#                     them, from tests/fuzz/seeds_llama2c.
#   fuzz_pth          the .pth reader (zip, pickle, tensors) and the model built from what it
#                     reads, from the fixtures' .pth files (tests/fixtures/minimind/pth_*);
#   fuzz_tokenizer_json  the tokenizer.json reader and what a tokenizer it reads does with text
#                     and ids, and the file's cut to its first ids, from tests/fuzz/seeds_tokenizer
#                     (MiniMind's file and small ones).
# New inputs go to build/fuzz/corpus*, failing inputs to build/fuzz/crashes (each one belongs in
# tests/malformed/fuzz once fixed). Exits non-zero if a fuzzer found anything.
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds=${1:-60}
[[ "$seconds" =~ ^[0-9]+$ ]] || { echo "usage: npm run fuzz -- SECONDS" >&2; exit 2; }
mkdir -p build/fuzz/corpus build/fuzz/corpus_decimal build/fuzz/corpus_llama2c build/fuzz/corpus_pth build/fuzz/seeds_pth build/fuzz/corpus_tokenizer build/fuzz/crashes
build/fuzz/fuzz_safetensors -max_total_time="$seconds" -timeout=10 -rss_limit_mb=4096 \
    -max_len=262144 -print_final_stats=1 -artifact_prefix=build/fuzz/crashes/ \
    build/fuzz/corpus tests/fuzz/seeds
build/fuzz/fuzz_decimal -max_total_time="$seconds" -timeout=10 -rss_limit_mb=4096 \
    -max_len=4096 -print_final_stats=1 -artifact_prefix=build/fuzz/crashes/ \
    build/fuzz/corpus_decimal tests/fuzz/seeds_decimal
build/fuzz/fuzz_llama2c -max_total_time="$seconds" -timeout=10 -rss_limit_mb=4096 \
    -max_len=8192 -print_final_stats=1 -artifact_prefix=build/fuzz/crashes/ \
    build/fuzz/corpus_llama2c tests/fuzz/seeds_llama2c
for f in tests/fixtures/minimind/pth_*/model.pth; do cp "$f" "build/fuzz/seeds_pth/$(basename "$(dirname "$f")").pth"; done
build/fuzz/fuzz_pth -max_total_time="$seconds" -timeout=10 -rss_limit_mb=4096 \
    -max_len=262144 -print_final_stats=1 -artifact_prefix=build/fuzz/crashes/ \
    build/fuzz/corpus_pth build/fuzz/seeds_pth
build/fuzz/fuzz_tokenizer_json -max_total_time="$seconds" -timeout=10 -rss_limit_mb=4096 \
    -max_len=524288 -print_final_stats=1 -artifact_prefix=build/fuzz/crashes/ \
    build/fuzz/corpus_tokenizer tests/fuzz/seeds_tokenizer
