#!/usr/bin/env bash
# GPU check of the CUDA backend, run ON the GPU machine with test binaries built elsewhere.
#
# Here (build machine, no GPU needed):
#   CARGO_TARGET_DIR=/tmp/target-cuda cargo test --release --features cuda --no-run --test cuda
#   scripts/gpu-check.sh --stage        # copies the test binary to build/gpu/ (git-ignored)
# There (device machine; carry build/gpu):
#   scripts/gpu-check.sh [build/gpu]    # logs go to $OUT when set, else build/gpu/logs
#
# Runs: the CUDA tests (bit-identity CPU vs GPU, lifecycle/leak), the throughput bench, and
# compute-sanitizer (memcheck with leak check, initcheck, racecheck) on a subset of the tests.
# Prints a summary table last; exit status 0 only if everything passed.
set -u
root="$(cd "$(dirname "$0")/.." && pwd)"

if [ "${1:-}" = "--stage" ]; then
    target="${CARGO_TARGET_DIR:-$root/target}"
    bin="$(ls -t "$target"/release/deps/cuda-* 2>/dev/null | grep -v '\.d$' | head -n1)"
    [ -n "$bin" ] || { echo "no test binary: run cargo test --release --features cuda --no-run --test cuda" >&2; exit 1; }
    mkdir -p "$root/build/gpu"
    cp "$bin" "$root/build/gpu/cuda-tests"
    cp "$0" "$root/build/gpu/gpu-check.sh"
    ls -la "$root/build/gpu"
    exit 0
fi

dir="${1:-$root/build/gpu}"
logs="${OUT:-$dir/logs}"
mkdir -p "$logs"
export LD_LIBRARY_PATH="/usr/local/nvidia/lib64:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
export RUST_BACKTRACE=1
T="$dir/cuda-tests"
[ -x "$T" ] || { echo "missing $T (stage it with scripts/gpu-check.sh --stage)" >&2; exit 1; }
SAN="$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)"

nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$logs/gpu.txt"

declare -a names=() results=()
step() {  # step NAME LOGFILE CMD...
    local name="$1" log="$2"; shift 2
    local t0=$SECONDS
    echo "=== $name: $*"
    "$@" >"$log" 2>&1
    local rc=$?
    tail -n 40 "$log"
    names+=("$name"); results+=("rc=$rc $((SECONDS - t0))s")
    return $rc
}

step tests "$logs/tests.log" "$T" --test-threads=1 --nocapture
step bench "$logs/bench.log" "$T" --ignored --nocapture bench
subset=(gpu::bit_identical_8bit_padded gpu::bit_identical_odd_and_tiny_sizes gpu::refused_frames_are_released gpu::bit_identical_10bit_msb_p010)
step memcheck "$logs/memcheck.log" "$SAN" --tool memcheck --leak-check full --error-exitcode 9 \
    "$T" --test-threads=1 "${subset[@]}"
step initcheck "$logs/initcheck.log" "$SAN" --tool initcheck --error-exitcode 9 \
    "$T" --test-threads=1 gpu::bit_identical_odd_and_tiny_sizes
step racecheck "$logs/racecheck.log" "$SAN" --tool racecheck --error-exitcode 9 \
    "$T" --test-threads=1 gpu::bit_identical_8bit_padded

echo
echo "=== summary ($(cat "$logs/gpu.txt"))"
grep -h "bit-identical\|lifecycle:\|bench:\|differ\|panicked" "$logs/tests.log" "$logs/bench.log" | sed 's/^/  /'
grep -h "ERROR SUMMARY\|LEAK SUMMARY\|RACECHECK SUMMARY" "$logs"/*check.log | sed 's/^/  /'
status=0
for i in "${!names[@]}"; do
    printf '  %-10s %s\n' "${names[$i]}" "${results[$i]}"
    case "${results[$i]}" in rc=0*) ;; *) status=1 ;; esac
done
exit $status
