#!/usr/bin/env bash
# Coverage-guided fuzzing of vmaf_rs's parsers and C ABI with libFuzzer, on the stable toolchain:
# libfuzzer-sys builds libFuzzer with the system C++ compiler, and rustc's stable
# SanitizerCoverage pass (-Cpasses=sancov-module) instruments our code for it. Targets are in
# tests/fuzz/ (bodies in tests/fuzz/src/lib.rs).
#
#   scripts/fuzz.sh build                    build every target (build/fuzz/)
#   scripts/fuzz.sh run TARGET [ARGS...]     fuzz one target; ARGS go to libFuzzer
#                                            (e.g. -runs=10000000, -max_total_time=600)
#   scripts/fuzz.sh smoke [SECONDS]          every target for SECONDS (default 60); fails on any
#                                            crash, leak, timeout or out-of-memory
#   scripts/fuzz.sh replay                   the saved crashes and seeds, in a normal build
#   scripts/fuzz.sh list                     the targets
#
# A crash leaves its input in build/fuzz/artifacts/TARGET/; once fixed, copy it to
# tests/fuzz/regressions/TARGET/ so that `replay` (run by scripts/test.sh) keeps it fixed.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
targets=(model_json options y4m log_writers capi)
manifest=tests/fuzz/Cargo.toml
out=build/fuzz
triple=$(rustc -vV | sed -n 's/^host: //p')

build() {
    # --target keeps these flags off build scripts and proc macros (they would not link).
    RUSTFLAGS="-Cpasses=sancov-module -Cllvm-args=-sanitizer-coverage-level=4 \
-Cllvm-args=-sanitizer-coverage-inline-8bit-counters -Cllvm-args=-sanitizer-coverage-pc-table \
-Cllvm-args=-sanitizer-coverage-trace-compares --cfg fuzzing -Cdebug-assertions \
-Coverflow-checks" \
        CARGO_TARGET_DIR="$out/target" \
        cargo build --release --quiet --manifest-path "$manifest" --target "$triple" --bins
}

# Seeds: the checked-in ones, plus the built-in models for the model loader.
corpus() {
    local t=$1 c="$out/corpus/$1"
    mkdir -p "$c" "$out/artifacts/$t"
    if [ -d "tests/fuzz/seeds/$t" ]; then cp -n "tests/fuzz/seeds/$t"/* "$c"/ 2>/dev/null || true; fi
    if [ "$t" = model_json ]; then cp -n src/model/builtin/*.json "$c"/; fi
    echo "$c"
}

run() {
    local t=$1; shift
    local bin="$out/target/$triple/release/$t"
    [ -x "$bin" ] || { echo "fuzz: $t is not built (scripts/fuzz.sh build)" >&2; exit 2; }
    local c; c=$(corpus "$t")
    local dict=()
    [ -f "tests/fuzz/dict/$t.dict" ] && dict=(-dict="tests/fuzz/dict/$t.dict")
    # 2 GiB RSS and 10 s per input are libFuzzer's defaults, stated so a change is deliberate;
    # -malloc_limit_mb catches a single huge allocation even when the kernel would grant it.
    "$bin" "${dict[@]}" -rss_limit_mb=2048 -malloc_limit_mb=1024 -timeout=10 \
        -max_len=65536 -artifact_prefix="$out/artifacts/$t/" -print_final_stats=1 "$@" "$c"
}

case "${1:-}" in
    build) build ;;
    run) shift; [ $# -ge 1 ] || { echo "usage: $0 run TARGET [ARGS]" >&2; exit 2; }; run "$@" ;;
    smoke)
        secs=${2:-60}
        build
        for t in "${targets[@]}"; do
            log="$out/smoke-$t.log"
            if ! run "$t" -max_total_time="$secs" >"$log" 2>&1; then
                tail -40 "$log" >&2
                echo "fuzz smoke: $t FAILED (input in $out/artifacts/$t/, log $log)" >&2
                exit 1
            fi
            printf 'fuzz smoke: %-12s %s\n' "$t" \
                "$(grep -E '^(stat::number_of_executed_units|#[0-9]+ *DONE)' "$log" | tr -s ' ' | paste -sd' ')"
        done
        ;;
    replay)
        CARGO_TARGET_DIR="$out/target-replay" cargo test --release --quiet --manifest-path "$manifest"
        ;;
    list) printf '%s\n' "${targets[@]}" ;;
    *) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
esac
