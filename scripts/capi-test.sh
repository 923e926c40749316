#!/usr/bin/env bash
# Builds the C ABI smoke test against the release staticlib and runs it under valgrind (errors and
# definite leaks fail it); also checks that the native libs cargo reports are what vmaf_rs.pc says.
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
if [ -f "$root/build/vmaf_rs/lib/pkgconfig/vmaf_rs.pc" ]; then
    pc_libs=$(sed -n 's/^Libs: *//p' "$root/build/vmaf_rs/lib/pkgconfig/vmaf_rs.pc")
    for l in $libs; do
        case " $pc_libs " in *" $l "*) ;; *) echo "vmaf_rs.pc Libs lacks $l (has: $pc_libs)" >&2; exit 1;; esac
    done
    echo "capi: vmaf_rs.pc lists every native static lib ($libs)"
fi
