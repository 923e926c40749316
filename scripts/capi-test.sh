#!/usr/bin/env bash
# Builds the C ABI smoke test against the release staticlib and runs it twice: under valgrind
# (errors and definite leaks fail it), and built with ASan + UBSan (any report fails it; LSan,
# part of ASan, checks leaks at exit through the same malloc that Rust's allocator calls). Also
# checks that the native libs cargo reports are what vmaf_rs.pc says.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
cargo build --release --lib --quiet
libs=$(cargo rustc --release --lib --quiet -- --print native-static-libs 2>&1 | sed -n 's/.*native-static-libs: //p' | tail -1)
out=build/capi-test; mkdir -p "$out"
gcc -std=c11 -Wall -Wextra -Werror -g -Iinclude tests/c/capi_smoke.c target/release/libvmaf_rs.a $libs -o "$out/capi_smoke"
cd "$out"
valgrind --quiet --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite \
    --show-leak-kinds=definite ./capi_smoke capi_log.json
echo "capi: C ABI smoke test passed under valgrind (no errors, nothing definitely lost)"
cd "$root"
gcc -std=c11 -Wall -Wextra -Werror -g -O1 -fno-omit-frame-pointer \
    -fsanitize=address,undefined -fno-sanitize-recover=all -Iinclude tests/c/capi_smoke.c \
    target/release/libvmaf_rs.a $libs -o "$out/capi_smoke_asan"
cd "$out"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:halt_on_error=1:exitcode=98 \
    UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 ./capi_smoke_asan capi_log_asan.json
echo "capi: C ABI smoke test passed under ASan + UBSan + LSan (no report)"
if [ -f "$root/build/vmaf_rs/lib/pkgconfig/vmaf_rs.pc" ]; then
    pc_libs=$(sed -n 's/^Libs: *//p' "$root/build/vmaf_rs/lib/pkgconfig/vmaf_rs.pc")
    for l in $libs; do
        case " $pc_libs " in *" $l "*) ;; *) echo "vmaf_rs.pc Libs lacks $l (has: $pc_libs)" >&2; exit 1;; esac
    done
    echo "capi: vmaf_rs.pc lists every native static lib ($libs)"
fi
