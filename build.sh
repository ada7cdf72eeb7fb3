#!/usr/bin/env bash
# build.sh — builds AttnLab.
#   bash build.sh          native CLI, native tests, and the ASan+UBSan variants
#   bash build.sh native   build/attnlab and build/tests/* only
#   bash build.sh asan     build/asan/attnlab and build/asan/tests/* (AddressSanitizer + UBSan)
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
    build_variant build -O2 -g
    echo "built build/attnlab and build/tests/"
}

asan() {
    build_variant build/asan -O1 -g -fno-omit-frame-pointer \
        -fsanitize=address,undefined -fno-sanitize-recover=undefined
    echo "built build/asan/attnlab and build/asan/tests/"
}

# Debian packages behind each command the build and the tests use.
deps() {
    local missing=()
    command -v gcc >/dev/null || missing+=(gcc libc6-dev)
    command -v ar >/dev/null || missing+=(binutils)
    # The sanitizer runtimes come with gcc's libasan/libubsan.
    [ -n "$(gcc -print-file-name=libasan.so 2>/dev/null | grep /)" ] || missing+=(libasan8)
    if [ ${#missing[@]} -gt 0 ]; then
        echo "installing: ${missing[*]}"
        if [ "$(id -u)" != 0 ]; then
            echo "build.sh deps: need root to install ${missing[*]}" >&2
            exit 1
        fi
        apt-get update -q
        DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}"
    fi
}

case "${1:-all}" in
    deps) deps ;;
    native) native ;;
    asan) asan ;;
    all) native; asan ;;
    *) echo "usage: bash build.sh [all|native|asan|deps]" >&2; exit 2 ;;
esac
