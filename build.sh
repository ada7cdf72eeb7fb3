#!/usr/bin/env bash
# build.sh — builds AttnLab, rebuilding only what changed since the last build (sources, the
# headers they include, flags; the rules and flags are in ./Makefile, run with GNU make). The
# library is the layers of core/LAYERS, bottom first; each layer's files see only the public
# headers of the layers below it there, so a call up the table fails to compile.
#   bash build.sh          native CLI and tests, their ASan+UBSan variants, the faults test, the web build
#   bash build.sh native   build/attnlab and build/tests/* only
#   bash build.sh asan     build/asan/attnlab and build/asan/tests/* (AddressSanitizer + UBSan)
#   bash build.sh wasm     web/gen/attnlab.wasm and attnlab-threads.wasm with Emscripten, and dist/attnlab.html
#   bash build.sh page     what `npm start` needs: build/attnlab, web/gen/attnlab.wasm, dist/attnlab.html
#   bash build.sh faults   build/faults/test_faults: the live checks run on a core with deliberate bugs
#   bash build.sh fuzz     build/fuzz/fuzz_safetensors, fuzz_decimal, fuzz_llama2c, fuzz_pth and fuzz_tokenizer_json,
#                          the libFuzzer harnesses (clang, ASan+UBSan)
#   bash build.sh deps     install what the build and tests need and is missing (Debian, root)
# CC=clang picks another compiler for the native and ASan builds (a change of compiler or flags
# rebuilds what they built); V=1 prints every command.
set -euo pipefail
cd "$(dirname "$0")"

# make <goal>: two jobs (the machine has two cores); -Otarget keeps each command's output,
# the compiler's messages included, in one piece.
build() {
    if ! command -v make >/dev/null; then
        echo "build.sh: GNU make is missing: run bash build.sh deps" >&2
        exit 1
    fi
    make -j2 -Otarget --no-print-directory "$1"
}

# apt-get update, waiting while another apt-get holds the package lists: DPkg::Lock::Timeout
# makes apt-get install wait for dpkg's lock, but apt-get update gives up at once on the lists'
# own lock (/var/lib/apt/lists/lock), so it is tried again every 5 s, for up to 10 minutes.
apt_update() {
    local out waited=0
    until out=$(apt-get update -q 2>&1); do
        if ! grep -q 'Could not get lock' <<<"$out" || [ "$waited" -ge 600 ]; then
            echo "$out" >&2
            return 1
        fi
        [ "$waited" -gt 0 ] || echo "build.sh deps: another apt-get holds the package lists; waiting"
        sleep 5
        waited=$((waited + 5))
    done
    echo "$out"
}

# Debian packages behind each command the build and the tests use.
deps() {
    local missing=()
    command -v gcc >/dev/null || missing+=(gcc libc6-dev)
    command -v ar >/dev/null || missing+=(binutils)
    command -v make >/dev/null || missing+=(make)
    # The sanitizer runtimes come with gcc's libasan/libubsan.
    [ -n "$(gcc -print-file-name=libasan.so 2>/dev/null | grep /)" ] || missing+=(libasan8)
    command -v emcc >/dev/null || missing+=(emscripten)
    command -v clang >/dev/null || missing+=(clang)
    [ -n "$(find /usr/lib/llvm-*/lib/clang -name 'libclang_rt.fuzzer-x86_64.a' 2>/dev/null | head -1)" ] ||
        missing+=(libclang-rt-dev) # libFuzzer for `build.sh fuzz`
    command -v valgrind >/dev/null || missing+=(valgrind)
    command -v /usr/bin/time >/dev/null || missing+=(time) # peak memory in tests/pth-memory.test.mjs
    command -v chromium >/dev/null || missing+=(chromium) # browser tests, driven by playwright-core
    if [ ${#missing[@]} -gt 0 ]; then
        echo "installing: ${missing[*]}"
        if [ "$(id -u)" != 0 ]; then
            echo "build.sh deps: need root to install ${missing[*]}" >&2
            exit 1
        fi
        apt_update
        DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -q "${missing[@]}"
    fi
    # npm packages (Chart.js for the page, playwright-core for the browser tests, axe-core for
    # the accessibility audit in tests/a11y.test.mjs, the reference tokenizer
    # @huggingface/tokenizers for tests/hf-tokenizer.test.mjs, onnxruntime-web and TensorFlow.js
    # for the bench's peers in tests/bench/peers.mjs).
    [ -d node_modules/chart.js ] && [ -d node_modules/playwright-core ] && [ -d node_modules/axe-core ] &&
        [ -d node_modules/@huggingface/tokenizers ] && [ -d node_modules/onnxruntime-web ] &&
        [ -d node_modules/@tensorflow/tfjs-backend-wasm ] || npm ci --no-audit --no-fund
}

case "${1:-all}" in
    deps) deps ;;
    all | native | asan | wasm | page | fuzz | faults) build "${1:-all}" ;;
    *) echo "usage: bash build.sh [all|native|asan|wasm|page|faults|fuzz|deps]" >&2; exit 2 ;;
esac
