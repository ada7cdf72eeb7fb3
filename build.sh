#!/usr/bin/env bash
# build.sh — builds AttnLab.
#   bash build.sh          native CLI and tests, their ASan+UBSan variants, and the web build
#   bash build.sh native   build/attnlab and build/tests/* only
#   bash build.sh asan     build/asan/attnlab and build/asan/tests/* (AddressSanitizer + UBSan)
#   bash build.sh wasm     web/gen/attnlab.wasm with Emscripten, and dist/attnlab.html
#   bash build.sh fuzz     build/fuzz/fuzz_safetensors and fuzz_decimal, the libFuzzer harnesses (clang, ASan+UBSan)
#   bash build.sh deps     install what the build and tests need and is missing (Debian, root)
# The core is C11 with libc/libm only. -ffp-contract=off keeps every float operation a single
# IEEE operation, as the PyTorch kernels we reproduce do (no silent multiply-add fusion).
set -euo pipefail
cd "$(dirname "$0")"

CC=${CC:-gcc}
WARN=(-Wall -Wextra -Wshadow -Wstrict-prototypes -Werror=implicit-function-declaration)
BASE=(-std=c11 -ffp-contract=off "${WARN[@]}" -Icore)
CORE_SRC=(core/*.c)
CLI_SRC=(core/cli/*.c)
TEST_SRC=(tests/test_*.c)

# build_variant <out-dir> <flags...>: the core as a static library, the CLI and each test.
build_variant() {
    local out=$1
    shift
    local flags=("$@")
    mkdir -p "$out/obj" "$out/tests"
    local objs=()
    for src in "${CORE_SRC[@]}"; do
        local obj="$out/obj/$(basename "${src%.c}").o"
        "$CC" "${BASE[@]}" "${flags[@]}" -c "$src" -o "$obj"
        objs+=("$obj")
    done
    rm -f "$out/libattnlab.a"
    ar rcs "$out/libattnlab.a" "${objs[@]}"
    "$CC" "${BASE[@]}" "${flags[@]}" "${CLI_SRC[@]}" "$out/libattnlab.a" -lm -o "$out/attnlab"
    for src in "${TEST_SRC[@]}"; do
        "$CC" "${BASE[@]}" "${flags[@]}" "$src" "$out/libattnlab.a" -lm \
            -o "$out/tests/$(basename "${src%.c}")"
    done
}

native() {
    build_variant build -O3 -g
    echo "built build/attnlab and build/tests/"
}

asan() {
    build_variant build/asan -O1 -g -fno-omit-frame-pointer \
        -fsanitize=address,undefined -fno-sanitize-recover=undefined
    echo "built build/asan/attnlab and build/asan/tests/"
}

# The C entry points the page calls (web/attnlab-api.js wraps each one).
WASM_EXPORTS=(
    al_status_str al_struct_layout al_demo_run
    al_session_create al_session_free al_session_prefill al_session_step al_session_reset
    al_session_len al_session_total al_session_outputs al_session_weights al_session_mask
    al_session_verify al_session_attn_config al_attn_flops al_kv_cache_bytes_for
    al_rope_angles al_rope_angles_wrapped al_rope_pair_trace al_rope_relative_dots
    al_gqa_map al_gqa_kv_choices al_forward_safetensors al_buffer_free al_bench_run
    mallinfo
    malloc free
)

# The forward pass's two inner loops, the GEMM and the softmax, are built for speed (-O2;
# -O3's extra unrolling bought nothing measurable under V8 and cost 6 KB); the rest of the
# forward pass (attention, norm, rope, kv_cache) at -Os, which costs a few percent on tiny
# layers and nothing measurable at MiniMind sizes, and saves 7 KB; everything else (loaders,
# demos, text, checks) at -Oz. The download stays under 100 KB.
WASM_SPEED=(gemm softmax)
WASM_FORWARD=(attention norm rope kv_cache)

wasm() {
    local exports
    exports=$(printf '"_%s",' "${WASM_EXPORTS[@]}")
    mkdir -p web/gen build/wasm
    rm -f web/gen/attnlab.js
    # Emscripten 3.1.6's JS optimizer needs Debian's node modules (acorn) on NODE_PATH.
    export NODE_PATH=/usr/share/nodejs
    local objs=()
    for src in "${CORE_SRC[@]}"; do
        local name opt=-Oz
        name=$(basename "${src%.c}")
        [[ " ${WASM_SPEED[*]} " == *" $name "* ]] && opt=-O2
        [[ " ${WASM_FORWARD[*]} " == *" $name "* ]] && opt=-Os
        emcc -std=c11 "$opt" -msimd128 -ffp-contract=off -DNDEBUG "${WARN[@]}" -Icore -c "$src" -o "build/wasm/$name.o"
        objs+=("build/wasm/$name.o")
    done
    # A standalone module with no Emscripten JS runtime: web/wasm-loader.js instantiates it.
    # emmalloc is a small allocator (the core allocates only when a session or file changes).
    # Linked with -Oz (Binaryen's size passes): -O3 here was at most ~5% faster on MiniMind
    # prefill, within run-to-run noise, and 7 KB larger.
    emcc -Oz -msimd128 "${objs[@]}" -o web/gen/attnlab.wasm --no-entry -sSTANDALONE_WASM=1 \
        -sMALLOC=emmalloc -sALLOW_MEMORY_GROWTH=1 -sINITIAL_MEMORY=16MB -sMAXIMUM_MEMORY=2GB \
        -sTOTAL_STACK=1MB -sEXPORTED_FUNCTIONS="[${exports%,}]"
    echo "built web/gen/attnlab.wasm"
    # Front-end packages are vendored from node_modules: the page loads nothing from the network.
    mkdir -p web/vendor
    cp node_modules/chart.js/dist/chart.umd.js web/vendor/chart.umd.js
    node web/bundle.mjs
}

fuzz() {
    mkdir -p build/fuzz
    clang -std=c11 -O1 -g -ffp-contract=off "${WARN[@]}" -Icore \
        -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
        "${CORE_SRC[@]}" tests/fuzz/fuzz_safetensors.c -lm -o build/fuzz/fuzz_safetensors
    clang -std=c11 -O1 -g -ffp-contract=off "${WARN[@]}" -Icore \
        -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
        "${CORE_SRC[@]}" tests/fuzz/fuzz_decimal.c -lm -o build/fuzz/fuzz_decimal
    echo "built build/fuzz/fuzz_safetensors and build/fuzz/fuzz_decimal"
}

# Debian packages behind each command the build and the tests use.
deps() {
    local missing=()
    command -v gcc >/dev/null || missing+=(gcc libc6-dev)
    command -v ar >/dev/null || missing+=(binutils)
    # The sanitizer runtimes come with gcc's libasan/libubsan.
    [ -n "$(gcc -print-file-name=libasan.so 2>/dev/null | grep /)" ] || missing+=(libasan8)
    command -v emcc >/dev/null || missing+=(emscripten)
    command -v clang >/dev/null || missing+=(clang)
    [ -n "$(find /usr/lib/llvm-*/lib/clang -name 'libclang_rt.fuzzer-x86_64.a' 2>/dev/null | head -1)" ] ||
        missing+=(libclang-rt-dev) # libFuzzer for `build.sh fuzz`
    command -v valgrind >/dev/null || missing+=(valgrind)
    command -v chromium >/dev/null || missing+=(chromium) # browser tests, driven by playwright-core
    if [ ${#missing[@]} -gt 0 ]; then
        echo "installing: ${missing[*]}"
        if [ "$(id -u)" != 0 ]; then
            echo "build.sh deps: need root to install ${missing[*]}" >&2
            exit 1
        fi
        apt-get update -q
        DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}"
    fi
    # npm packages (Chart.js for the page, playwright-core for the browser tests).
    [ -d node_modules/chart.js ] && [ -d node_modules/playwright-core ] || npm ci --no-audit --no-fund
}

case "${1:-all}" in
    deps) deps ;;
    native) native ;;
    asan) asan ;;
    wasm) wasm ;;
    fuzz) fuzz ;;
    all) native; asan; wasm ;;
    *) echo "usage: bash build.sh [all|native|asan|wasm|fuzz|deps]" >&2; exit 2 ;;
esac
