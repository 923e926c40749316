#!/usr/bin/env bash
# GPU check of the CUDA backend and of the FFmpeg filter's CUDA path, run ON the GPU machine with
# everything built elsewhere (the GPU machine has no network, no cargo, no oracle).
#
# Here (build machine, no GPU needed; needs the oracle for the encoded media):
#   scripts/gpu-check.sh --stage
#     builds and copies into build/gpu/ (git-ignored; about 96 MB, over the 64 MiB a device call
#     carries, so it is also packed into build/gpu-carry/gpu.tar.xz, about 25 MB: carry that):
#       ffmpeg             the patched static ffmpeg, CUDA-enabled (VMAF_RS_CUDA=1 ffmpeg-build.sh)
#       cuda-tests         tests/cuda.rs        (cargo test --features cuda --no-run)
#       ffmpeg-cuda-tests  tests/ffmpeg_cuda.rs (cargo test --no-run)
#       vmaf-rs            the CLI with the cuda feature (tests/cuda.rs runs its --backend cuda)
#       cuda_reducer       tests/cuda_reducer.c linked against build/ffmpeg/lib/*.a (libcuda dlopen'd)
#       media/             H.264 8-bit and HEVC 10-bit 1080p, AV1 and VP9 720p pairs (the oracle's
#                          libx264/libx265/libsvtav1/libvpx)
# There (device machine; carry build/gpu-carry), in the repository root:
#   scripts/gpu-check.sh [build/gpu]        # logs go to $OUT when set, else build/gpu/logs;
#                                           # a missing build/gpu is unpacked from
#                                           # build/gpu-carry/gpu.tar.xz first
#   GPU_CHECK_PART=main | floats            # in two device calls: all but the float kernels'
#                                           # sanitizer runs, then only those (each fits 600 s)
#   GPU_CHECK_PART=each                     # the float/new kernel tests one by one under each
#                                           # sanitizer tool, small cases, a step (and a limit,
#                                           # GPU_CHECK_STEP s, default 60, racecheck 240) per
#                                           # test and tool, so
#                                           # one slow test cannot starve the others;
#                                           # GPU_CHECK_TESTS / GPU_CHECK_TOOLS narrow the set
#                                           # (e.g. "speed psnr_hvs ciede", "racecheck initcheck")
#   VMAF_RS_REDUCER_OPTS=…                  # cuda_reducer's vmaf_rs options (the reducer-v1 step)
#
# Runs, in this order (each step under a timeout; the whole fits one 10-minute device call):
#   ffmpeg-cuda    CUDA == CPU per-frame values through the filter (hwupload 8/10/16-bit, NVDEC
#                  H.264 8-bit, HEVC 10-bit, AV1, VP9; the libvmaf_cuda name), error cases;
#   throughput     the filter with frames already on the GPU, 1080p and 4K;
#   rust-tests     the CUDA scorer's tests (bit identity, lifecycle/leak, threads);
#   reducer        100 cycles of device + graph (2x hwupload 4K -> vmaf_rs) + 10 frames + free:
#                  GPU free memory must not change after the warm-up, RSS and heap grow <= 1 MiB;
#   reducer-ctl    (information only) the same 100 cycles creating and freeing the CUDA device
#                  alone: what the driver and FFmpeg's CUDA device cost without vmaf_rs;
#   san-reducer    compute-sanitizer memcheck --leak-check full on a short reducer run;
#   bench          scripts/bench.sh --cuda: fps at 1080p and 4K, CUDA vs the CPU path;
#   then, while time is left (GPU_CHECK_BUDGET seconds in all, default 540): the Rust bench and
#   compute-sanitizer memcheck/initcheck/racecheck on a subset of the Rust tests.
# GPU_CHECK_QUICK=1: reducer 10 cycles, no Rust tests, no optional steps (a smoke test).
# Prints a summary table last (also in summary.txt); exit status 0 only if every step that ran
# passed (information-only steps aside). $OUT gets summary.txt, the main logs and logs.tar.gz
# (every log; a device call brings back at most 8 files).
set -u
root="$(cd "$(dirname "$0")/.." && pwd)"

if [ "${1:-}" = "--stage" ]; then
    set -eo pipefail
    cd "$root"
    g="$root/build/gpu"
    mkdir -p "$g/media"
    VMAF_RS_CUDA=1 scripts/ffmpeg-build.sh
    cp build/ffmpeg/bin/ffmpeg "$g/ffmpeg"
    exe() { scripts/test-exe.sh "$@"; }
    t=$(exe cuda --features cuda)
    [ -x "$t" ] || { echo "gpu-check: no cuda test binary" >&2; exit 1; }
    cp "$t" "$g/cuda-tests"
    strip --strip-debug "$g/cuda-tests"     # symbols stay (backtraces); the carry is 64 MiB
    cargo build --release --features cuda --bin vmaf-rs
    cp target/release/vmaf-rs "$g/vmaf-rs"
    strip --strip-debug "$g/vmaf-rs"
    t=$(exe ffmpeg_cuda)
    [ -x "$t" ] || { echo "gpu-check: no ffmpeg_cuda test binary" >&2; exit 1; }
    cp "$t" "$g/ffmpeg-cuda-tests"
    strip --strip-debug "$g/ffmpeg-cuda-tests"
    "$g/cuda-tests" --list >/dev/null && "$g/ffmpeg-cuda-tests" --list >/dev/null  # test harnesses
    pc="$root/build/ffmpeg/lib/pkgconfig:$root/build/vmaf_rs/lib/pkgconfig:$root/build/nv-codec-headers/lib/pkgconfig"
    # shellcheck disable=SC2046
    cc -O2 -g -Wall -Wextra -o "$g/cuda_reducer" tests/cuda_reducer.c -I build/ffmpeg/include \
        $(PKG_CONFIG_PATH="$pc" pkg-config --static --libs libavfilter) -ldl
    strip --strip-debug "$g/cuda_reducer"   # symbols stay (sanitizer backtraces); 40 -> ~12 MB
    # The host side under AddressSanitizer + LeakSanitizer (the Rust code is not instrumented,
    # but every malloc/free of the process, ours included, is checked for leaks).
    # shellcheck disable=SC2046
    cc -O1 -g -fsanitize=address -fno-omit-frame-pointer -Wall -o "$g/cuda_reducer_asan" \
        tests/cuda_reducer.c -I build/ffmpeg/include \
        $(PKG_CONFIG_PATH="$pc" pkg-config --static --libs libavfilter) -ldl
    strip --strip-debug "$g/cuda_reducer_asan"
    rm -f "$g/gpu-check.sh"                 # the scripts travel with the working tree
    if [ ! -s "$g/media/dis_hevc10_1080p.mkv" ]; then
        o=$(scripts/oracle.sh)
        src="testsrc2=s=1920x1080:r=25:d=1.2"
        q=(-hide_banner -loglevel error -nostdin -y -f lavfi -i "$src")
        "$o" "${q[@]}" -c:v libx264 -preset veryfast -crf 14 -pix_fmt yuv420p "$g/media/ref_h264_1080p.mkv"
        "$o" "${q[@]}" -c:v libx264 -preset veryfast -crf 38 -pix_fmt yuv420p "$g/media/dis_h264_1080p.mkv"
        "$o" "${q[@]}" -c:v libx265 -preset fast -crf 12 -pix_fmt yuv420p10le -x265-params log-level=error \
            "$g/media/ref_hevc10_1080p.mkv"
        "$o" "${q[@]}" -c:v libx265 -preset fast -crf 36 -pix_fmt yuv420p10le -x265-params log-level=error \
            "$g/media/dis_hevc10_1080p.mkv"
    fi
    if [ ! -s "$g/media/dis_vp9_720p.webm" ]; then
        o=$(scripts/oracle.sh)
        q=(-hide_banner -loglevel error -nostdin -y -f lavfi -i "testsrc2=s=1280x720:r=25:d=0.8")
        for c in 18:ref 50:dis; do
            "$o" "${q[@]}" -c:v libsvtav1 -preset 12 -crf "${c%%:*}" -pix_fmt yuv420p "$g/media/${c##*:}_av1_720p.mkv"
            "$o" "${q[@]}" -c:v libvpx-vp9 -deadline realtime -cpu-used 8 -b:v 0 -crf "${c%%:*}" \
                -pix_fmt yuv420p "$g/media/${c##*:}_vp9_720p.webm"
        done
    fi
    ls -la "$g" "$g/media"
    du -sh "$g"
    # One archive under the carry limit (the binaries compress about 4:1).
    mkdir -p "$root/build/gpu-carry"
    tar -C "$root/build" -cf - gpu | xz -T2 -6 >"$root/build/gpu-carry/gpu.tar.xz"
    ls -la "$root/build/gpu-carry/gpu.tar.xz"
    exit 0
fi

if [ -z "${1:-}" ] && [ ! -d "$root/build/gpu" ] && [ -s "$root/build/gpu-carry/gpu.tar.xz" ]; then
    echo "gpu-check: unpacking build/gpu-carry/gpu.tar.xz"
    tar -C "$root/build" -xJf "$root/build/gpu-carry/gpu.tar.xz" || { echo "gpu-check: cannot unpack" >&2; exit 1; }
fi

dir="$(cd "${1:-$root/build/gpu}" && pwd)"
out="${OUT:-$dir/logs}"
logs="$(mktemp -d)"
mkdir -p "$out"
export LD_LIBRARY_PATH="/usr/local/nvidia/lib64:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
export RUST_BACKTRACE=1
export VMAF_RS_FFMPEG="$dir/ffmpeg" VMAF_RS_CUDA_MEDIA="$dir/media" VMAF_RS_REQUIRE_GPU=1
export VMAF_RS_WORK="${TMPDIR:-/tmp}/vmaf_rs_gpu_check"
export VMAF_RS_CLI="$dir/vmaf-rs"
quick="${GPU_CHECK_QUICK:-0}"
budget="${GPU_CHECK_BUDGET:-580}"
for f in ffmpeg cuda-tests ffmpeg-cuda-tests vmaf-rs cuda_reducer media/dis_hevc10_1080p.mkv media/dis_vp9_720p.webm; do
    [ -e "$dir/$f" ] || { echo "missing $dir/$f (scripts/gpu-check.sh --stage)" >&2; exit 1; }
done
SAN="$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)"
T="$dir/cuda-tests"
F="$dir/ffmpeg-cuda-tests"
R="$dir/cuda_reducer"

nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$logs/gpu.txt"

declare -a names=() results=()
step() {  # step NAME TIMEOUT LOGFILE CMD...
    local name="$1" limit="$2" log="$3"; shift 3
    local t0=$SECONDS
    echo "=== $name (at ${t0}s, limit ${limit}s): $*"
    timeout -k 5 "$limit" "$@" >"$log" 2>&1
    local rc=$?
    tail -n 25 "$log"
    names+=("$name"); results+=("rc=$rc $((SECONDS - t0))s")
    return $rc
}
left() { echo $((budget - SECONDS)); }

# GPU_CHECK_PART: all (default), main (everything but the float kernels' sanitizer runs) or
# floats (only those): with every kernel the whole check no longer fits one 600 s device call.
part="${GPU_CHECK_PART:-all}"
# The float/new kernels' tests (shared-memory tiles, one-thread sums).
floats=(gpu::float_ssim_kernel_every_depth_and_option gpu::float_ms_ssim_kernel_every_depth_and_option
        gpu::float_motion_kernel_every_depth_and_option gpu::float_moment_kernel_every_depth_and_layout
        gpu::float_vif_kernel_every_depth_and_option
        gpu::cambi_kernel_every_depth_and_option
        gpu::float_ansnr_kernel_every_depth_and_option gpu::psnr_hvs_kernel_every_depth_and_option
        gpu::ciede_kernel_every_depth_and_layout
        gpu::float_adm_kernel_every_depth_and_option
        gpu::speed_kernel_every_depth_and_option)
if [ "$part" = each ]; then
    for test in "${floats[@]}"; do
        short="${test#gpu::}"; short="${short%%_kernel_*}"
        if [ -n "${GPU_CHECK_TESTS:-}" ] && [[ " $GPU_CHECK_TESTS " != *" $short "* ]]; then
            continue
        fi
        for tool in ${GPU_CHECK_TOOLS:-memcheck racecheck initcheck}; do
            # racecheck runs the shared-memory kernels far slower (float_ms_ssim's small cases
            # took 184 s on an H100, the others at most 26 s under memcheck / initcheck).
            limit=60
            [ "$tool" = racecheck ] && limit=240
            limit="${GPU_CHECK_STEP:-$limit}"
            if [ "$(left)" -lt $((limit + 10)) ]; then
                names+=("$tool:$short"); results+=("not run: no time left")
                continue
            fi
            VMAF_RS_GPU_SMALL_CASES=1 step "$tool:$short" "$limit" "$logs/$tool-$short-check.log" \
                "$SAN" --tool "$tool" --error-exitcode 9 "$T" --test-threads=1 "$test"
        done
    done
fi
if [ "$part" != floats ] && [ "$part" != each ]; then
    step ffmpeg-cuda 240 "$logs/ffmpeg-cuda.log" "$F" --test-threads=3 --nocapture --skip throughput
    step throughput 60 "$logs/throughput.log" "$F" --test-threads=1 --nocapture throughput
    if [ "$quick" != 1 ]; then
        step rust-tests 150 "$logs/rust-tests.log" "$T" --test-threads=1 --nocapture
        step reducer 200 "$logs/reducer.log" "$R" 100 10 3840 2160 5
        step info:reducer-ctl 100 "$logs/reducer-ctl.log" "$R" 100 1 64 64 5 device
        # A v1 model + psnr + float_ssim (cambi, speed_chroma, adm3, motion3 and the float
        # kernels' buffers): 100 graph cycles at 4K.
        VMAF_RS_REDUCER_OPTS="model='version=vmaf_v1.0.16_3d0h\:name=vmaf':feature='name=psnr|name=float_ssim|name=ciede'" \
            step reducer-v1 150 "$logs/reducer-v1.log" "$R" 100 4 3840 2160 5
    else
        step reducer 60 "$logs/reducer.log" "$R" 10 10 3840 2160 5
    fi
    step san-reducer 120 "$logs/san-reducer.log" "$SAN" --tool memcheck --leak-check full --error-exitcode 9 \
        "$R" 3 5 1920 1080 3
    # Under ASan the reducer's own RSS verdict is meaningless (the quarantine keeps freed memory):
    # pass = no AddressSanitizer/LeakSanitizer report (the CUDA driver is not instrumented).
    if [ -x "$dir/cuda_reducer_asan" ]; then
        ASAN_OPTIONS=protect_shadow_gap=0:detect_leaks=1:halt_on_error=1 \
            step info:asan-run 120 "$logs/asan-reducer.log" "$dir/cuda_reducer_asan" 10 5 1920 1080 2 || true
        names+=(asan-reducer)
        if grep -q "Sanitizer" "$logs/asan-reducer.log"; then
            results+=("rc=1 AddressSanitizer/LeakSanitizer report")
        else
            results+=("rc=0 no AddressSanitizer/LeakSanitizer report")
        fi
    fi
    step bench 150 "$logs/bench.log" "$root/scripts/bench.sh" --cuda
    if [ "$quick" != 1 ]; then
        subset=(gpu::bit_identical_8bit_padded gpu::bit_identical_odd_and_tiny_sizes gpu::refused_frames_are_released gpu::bit_identical_10bit_msb_p010)
        [ "$(left)" -gt 60 ] && step rust-bench 50 "$logs/rust-bench.log" "$T" --ignored --nocapture bench
        [ "$(left)" -gt 60 ] && step memcheck 55 "$logs/memcheck.log" "$SAN" --tool memcheck --leak-check full --error-exitcode 9 \
            "$T" --test-threads=1 "${subset[@]}"
        [ "$(left)" -gt 45 ] && step initcheck 40 "$logs/initcheck.log" "$SAN" --tool initcheck --error-exitcode 9 \
            "$T" --test-threads=1 gpu::bit_identical_odd_and_tiny_sizes
        [ "$(left)" -gt 45 ] && step racecheck 40 "$logs/racecheck.log" "$SAN" --tool racecheck --error-exitcode 9 \
            "$T" --test-threads=1 gpu::bit_identical_8bit_padded
    fi
fi
if [ "$quick" != 1 ] && [ "$part" != main ] && [ "$part" != each ]; then
    # memcheck on the small pictures too when the part has its own call (VMAF_RS_GPU_SMALL_CASES).
    [ "$(left)" -gt 60 ] && VMAF_RS_GPU_SMALL_CASES=1 step new-memcheck 240 "$logs/new-memcheck.log" "$SAN" --tool memcheck --error-exitcode 9 \
        "$T" --test-threads=1 "${floats[@]}"
    # racecheck is slower: the small pictures only (VMAF_RS_GPU_SMALL_CASES, printed per case).
    [ "$(left)" -gt 60 ] && VMAF_RS_GPU_SMALL_CASES=1 step new-racecheck 240 "$logs/new-racecheck.log" \
        "$SAN" --tool racecheck --error-exitcode 9 "$T" --test-threads=1 "${floats[@]}"
fi

summary() {
    echo "=== summary ($(cat "$logs/gpu.txt"); ${SECONDS}s)"
    grep -sh "^bit-identical:\|throughput: .*fps\|differ\|panicked\|FAILED\|test result" "$logs/ffmpeg-cuda.log" "$logs/throughput.log" | sed 's/^/  /'
    [ -f "$logs/rust-tests.log" ] && grep -h "lifecycle:\|test result\|panicked" "$logs/rust-tests.log" | sed 's/^/  rust: /'
    [ -f "$logs/rust-bench.log" ] && grep -h "^bench:" "$logs/rust-bench.log" | sed 's/^/  rust: /'
    [ -f "$logs/reducer.log" ] && grep -h "^cuda_reducer: \(over\|PASS\|FAIL\)" "$logs/reducer.log" | sed 's/^/  reducer: /'
    [ -f "$logs/reducer-v1.log" ] && grep -h "^cuda_reducer: \(over\|PASS\|FAIL\)" "$logs/reducer-v1.log" | sed 's/^/  reducer (v1 + psnr + float_ssim + ciede): /'
    [ -f "$logs/reducer-ctl.log" ] && grep -h "^cuda_reducer: \(over\|PASS\|FAIL\)" "$logs/reducer-ctl.log" | sed 's/^/  reducer-ctl (device only): /'
    for f in "$logs"/san-reducer.log "$logs"/*check.log; do
        [ -f "$f" ] && grep -h "ERROR SUMMARY\|LEAK SUMMARY\|RACECHECK SUMMARY" "$f" | sed "s/^/  $(basename "$f" .log): /"
    done
    [ -f "$logs/bench.log" ] && grep -h "^bench:" "$logs/bench.log" | sed 's/^/  /'
    status=0
    for i in "${!names[@]}"; do
        printf '  %-18s %s\n' "${names[$i]}" "${results[$i]}"
        case "${names[$i]}:${results[$i]}" in info:*|*:rc=0*) ;; *) status=1 ;; esac
    done
    echo "  gpu-check: $([ $status = 0 ] && echo PASS || echo FAIL)"
    return $status
}
echo
summary | tee "$logs/summary.txt"
status=${PIPESTATUS[0]}
cp "$logs/summary.txt" "$logs/ffmpeg-cuda.log" "$logs/reducer.log" "$logs/bench.log" "$out/" 2>/dev/null
tar -C "$logs" -czf "$out/logs.tar.gz" .
rm -rf "$logs"
exit $status
