#!/usr/bin/env bash
# run.sh SECONDS — fuzzes the safetensors loader and the attention layer built from a file for
# SECONDS (default 60), starting from tests/fuzz/seeds and tests/malformed. New inputs go to
# build/fuzz/corpus, crashes to build/fuzz/crashes (each one belongs in tests/malformed once
# fixed). Exits non-zero if the fuzzer found anything.
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds=${1:-60}
[[ "$seconds" =~ ^[0-9]+$ ]] || { echo "usage: npm run fuzz -- SECONDS" >&2; exit 2; }
mkdir -p build/fuzz/corpus build/fuzz/crashes
exec build/fuzz/fuzz_safetensors -max_total_time="$seconds" -timeout=10 -rss_limit_mb=4096 \
    -max_len=262144 -print_final_stats=1 -artifact_prefix=build/fuzz/crashes/ \
    build/fuzz/corpus tests/fuzz/seeds
