#!/usr/bin/env bash
# Benchmark: vmaf_rs against libvmaf (the oracle's FFmpeg) on the same 1080p input, in one run.
# Prints fps for each and the ratio (ours / libvmaf) last: the commands run in alternated rounds
# (libvmaf, CLI, filter, then again), each ratio the median of the rounds' own, their range
# beside it. Not a test: numbers go to docs/BENCHMARKS.md.
#   scripts/bench.sh [--frames N] [--noise N] [--threads "1 2"] [--runs R] [--features "psnr|float_ssim"]
#                    [--model vmaf_v1.0.16_3d0h]
# (--noise N: textured content, testsrc2 with temporal grain of strength N (the issue's rows use
#  20); --features: extra features for both sides, beside the model; --model: a built-in model version
#  for both sides instead of vmaf_v0.6.1; VMAF_RS_BENCH_PREBUILT=1 with VMAF_RS_ORACLE, VMAF_RS_CLI
#  and VMAF_RS_FFMPEG: use those binaries, build nothing)
#
# --cuda (on the GPU machine; needs only the patched ffmpeg, no cargo or oracle): the vmaf_rs
# filter at 1080p and 4K (nv12) with the frames already on the GPU (8 frames of each input
# uploaded once, then replayed by the loop filter) against the same graph on the CPU path with
# n_threads = all cores, frames in host memory. fps = (N2 - N1) / (t(N2) - t(N1)), each t the
# median of 3 runs, which cancels the setup (device, graph, first frames).
#   scripts/bench.sh --cuda [--runs R] [--features F] [--model V]
#                                           (VMAF_RS_FFMPEG=<ffmpeg>, default build/ffmpeg/bin/ffmpeg)
#
# --nvdec DIR (on the GPU machine): the decoder pipeline, both 1080p H.264 inputs decoded by NVDEC
# (DIR/ref.mkv, DIR/dis.mkv, 600 frames, made here by --nvdec-stage DIR with the oracle's x264,
# looped with -stream_loop to --nvdec-frames N, default 1200, so that the process's start-up noise
# is small beside the run): decode alone against decode + vmaf_rs (fps by the difference of a
# 100-frame and an N-frame run, of each mode's minimum over alternated runs), 4 such
# pipelines at once against 4 decode-only ones (wall time of the 4), and on a 48-frame clip the
# time to the first score (a 1-frame run) and the total, NVDEC + CUDA against software decoding +
# the CPU path (n_threads = all cores), and a ladder of 3 renditions in one filter against 3
# separate pipelines. Control rows locate a difference: both decoders through a
# filtergraph without sync, vmaf_rs scoring only frame 0, each decoder alone.
#   scripts/bench.sh --nvdec-stage DIR ; scripts/bench.sh --nvdec DIR [--runs R] [--nvdec-frames N]
#
# --ladder "1 3 6": ladder scoring, one reference against N renditions (the same distorted file N
# times) in one `vmaf-rs -d ... -d ...` run, against N separate vmaf-rs runs and N separate libvmaf
# runs (libvmaf scores one pair per run), each at --threads T (the first of --threads); prints the
# seconds per rendition and the speed-up of the ladder over N separate runs.
#   scripts/bench.sh --ladder "1 3 6" [--threads 1] [--frames N] [--runs R]
#
# --all: every row above in one run, the ratios repeated together last (see below).
#   scripts/bench.sh --all [--frames N] [--noise N] [--threads "1 2"] [--runs R]
#
# --no-avx512 (with the CPU rows or --ladder): every program timed (libvmaf's FFmpeg, our CLI, our
# FFmpeg) runs under scripts/cpuid-mask.c (built into build/cpuid-mask), which hides AVX-512 from
# CPUID, so both sides take the kernels they take on an AVX2-only host of the same cores (needs
# CPUID faulting: /proc/cpuinfo flag cpuid_fault). The mask leaves AVX-VNNI (the VEX-encoded form
# of Alder Lake and later, Sapphire Rapids and later), so ours runs its `avx2vnni` kernels where
# the cores have it; VMAF_RS_CPU=avx2 gives the plain AVX2 ones (a CPU without it, e.g. Zen 3).
set -euo pipefail
shopt -s inherit_errexit  # a failed run inside $(...) stops the script
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
frames=120; noise=0; threads="1 2"; runs=3; cuda=0; runs_set=0; features=""; model=""; nvdec=""; nvdec_stage=""; ladder=""; nvdec_frames=1200
all=0; noavx=0; args=("$@")
while [ $# -gt 0 ]; do
    case "$1" in
        --frames) frames=$2; shift 2;;
        --noise) noise=$2; shift 2;;
        --threads) threads=$2; shift 2;;
        --runs) runs=$2; runs_set=1; shift 2;;
        --cuda) cuda=1; shift;;
        --nvdec) nvdec=$2; shift 2;;
        --nvdec-stage) nvdec_stage=$2; shift 2;;
        --nvdec-frames) nvdec_frames=$2; shift 2;;
        --features) features=$2; shift 2;;
        --model) model=$2; shift 2;;
        --ladder) ladder=$2; shift 2;;
        --all) all=1; shift;;
        --no-avx512) noavx=1; shift;;
        *) echo "usage: $0 [--frames N] [--noise N] [--threads \"1 2\"] [--runs R] [--features F] [--model V] [--no-avx512] [--all] | --cuda [--runs R] | --nvdec DIR | --ladder \"1 3 6\"" >&2; exit 2;;
    esac
done

if [ "$noavx" = 1 ] && { [ "$cuda" = 1 ] || [ -n "$nvdec" ] || [ -n "$nvdec_stage" ]; }; then
    echo "bench: --no-avx512 applies to the CPU rows and --ladder, not to --cuda or --nvdec" >&2; exit 2
fi

# --all: every row in one run (the single pair at each --threads, the same with --no-avx512 where
# AVX-512 can be hidden, the ladder at N = 1, 3, 6, and,
# where a GPU answers, --cuda and --nvdec on VMAF_RS_BENCH_NVDEC_DIR, default
# build/gpu-carry/pipe), their ratio lines repeated together at the end.
if [ "$all" = 1 ]; then
    rest=(); for a in "${args[@]}"; do [ "$a" = --all ] || rest+=("$a"); done
    log=$(mktemp); trap 'rm -f "$log"' EXIT
    "$0" "${rest[@]}" | tee -a "$log"
    # The AVX2-only rows too, where AVX-512 can be hidden (CPUID faulting) and there is some to hide.
    if grep -qw avx512f /proc/cpuinfo && grep -qw cpuid_fault /proc/cpuinfo; then
        "$0" "${rest[@]}" --no-avx512 | tee -a "$log"
    else
        echo "bench --all: no AVX-512 to hide, or no CPUID faulting: the AVX2-only rows are the rows above or left out"
    fi
    "$0" "${rest[@]}" --ladder "1 3 6" | tee -a "$log"
    if nvidia-smi -L >/dev/null 2>&1; then
        "$0" --cuda | tee -a "$log"
        dir=${VMAF_RS_BENCH_NVDEC_DIR:-build/gpu-carry/pipe}
        if [ -f "$dir/ref.mkv" ]; then "$0" --nvdec "$dir" | tee -a "$log"; fi
    else
        echo "bench --all: no GPU answers (nvidia-smi): the --cuda and --nvdec rows are left out"
    fi
    echo; echo "=== bench --all: every ratio"
    grep -E '^(ratio|speed-up|bench: (nvdec decode only|4 concurrent|ladder of|[0-9]+x[0-9]+ cuda|CPU ))' "$log"
    exit 0
fi

# wall seconds of one run of a command
time_once() {
    local a b
    a=$(date +%s.%N); "$@" >/dev/null 2>&1 || { echo "bench: command failed: $*" >&2; "$@" 2>&1 | tail -n 5 >&2; exit 1; }; b=$(date +%s.%N)
    awk -v a="$a" -v b="$b" 'BEGIN {printf "%.3f", b - a}'
}
# the median of its arguments
median() {
    printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'
}
# "median (lowest-highest)" of its arguments: a ratio with how far the rounds spread
spread() {
    printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {printf "%sx (%s-%s)", a[int((NR+1)/2)], a[1], a[NR]}'
}
# median wall seconds of $runs runs of a command
time_cmd() {
    local ts=()
    for _ in $(seq "$runs"); do
        ts+=("$(time_once "$@")")
    done
    median "${ts[@]}"
}

if [ -n "$nvdec_stage" ]; then
    o=$(scripts/oracle.sh)
    mkdir -p "$nvdec_stage"
    q=(-hide_banner -loglevel error -nostdin -y)
    "$o" "${q[@]}" -f lavfi -i "testsrc2=s=1920x1080:r=25,trim=end_frame=600" \
        -c:v libx264 -preset veryfast -crf 26 -pix_fmt yuv420p "$nvdec_stage/ref.mkv"
    "$o" "${q[@]}" -i "$nvdec_stage/ref.mkv" -vf "noise=alls=8:allf=t" \
        -c:v libx264 -preset veryfast -crf 35 -pix_fmt yuv420p "$nvdec_stage/dis.mkv"
    ls -la "$nvdec_stage"
    exit 0
fi

if [ -n "$nvdec" ]; then
    [ "$runs_set" = 1 ] || runs=5
    ff=${VMAF_RS_FFMPEG:-$root/build/ffmpeg/bin/ffmpeg}
    [ -x "$ff" ] || { echo "bench: $ff is missing (scripts/ffmpeg-build.sh)" >&2; exit 1; }
    export LD_LIBRARY_PATH="/usr/local/nvidia/lib64:${LD_LIBRARY_PATH:-}"
    cores=$(nproc)
    hw=(-hwaccel cuda -hwaccel_output_format cuda -stream_loop -1)
    # VMAF_RS_BENCH_SOFTWARE=1: software decoding and the CPU path (a dry run without a GPU)
    [ -n "${VMAF_RS_BENCH_SOFTWARE:-}" ] && hw=(-stream_loop -1)
    long=$nvdec_frames
    # pipe MODE N: MODE decode (both streams to the null muxer), vmaf (both into vmaf_rs), or the
    # controls that say where a difference comes from: graph (both through a filtergraph, no
    # sync: [0:v]null and [1:v]null), sync (vmaf_rs scoring only frame 0: framesync and the
    # filter's plumbing without GPU work), ref / dis (one decoder alone)
    pipe() {
        local mode=$1 n=$2 two=("${hw[@]}" -i "$nvdec/dis.mkv" "${hw[@]}" -i "$nvdec/ref.mkv")
        local q=(-nostdin -hide_banner -loglevel error)
        case $mode in
            decode) "$ff" "${q[@]}" "${two[@]}" -map 0:v -map 1:v -frames:v "$n" -f null - ;;
            vmaf) "$ff" "${q[@]}" "${two[@]}" -lavfi "[0:v][1:v]vmaf_rs" -frames:v "$n" -f null - ;;
            graph) "$ff" "${q[@]}" "${two[@]}" -lavfi "[0:v]null[o];[1:v]null[p]" -map "[o]" -map "[p]" -frames:v "$n" -f null - ;;
            sync) "$ff" "${q[@]}" "${two[@]}" -lavfi "[0:v][1:v]vmaf_rs=n_subsample=100000" -frames:v "$n" -f null - ;;
            ref|dis) "$ff" "${q[@]}" "${hw[@]}" -i "$nvdec/$mode.mkv" -map 0:v -frames:v "$n" -f null - ;;
        esac
    }
    # Whole-process times of these pipelines are bimodal on the H200 (some runs of every mode,
    # plain decoding included, take ≈ 0.25 s longer), so each mode's time is the minimum of its
    # runs, the modes alternated round by round: fps = (N - 100) / (min t(N) - min t(100)).
    declare -A best
    tmin() {  # KEY CMD...: one timed run of CMD, the minimum so far kept in best[KEY]
        local key=$1 a b t
        shift
        a=$(date +%s.%N); "$@" >/dev/null 2>&1 || { echo "bench: command failed: $*" >&2; "$@" 2>&1 | tail -n 5 >&2; exit 1; }; b=$(date +%s.%N)
        t=$(awk -v a="$a" -v b="$b" 'BEGIN {printf "%.3f", b - a}')
        best[$key]=$(awk -v t="$t" -v o="${best[$key]:-1e9}" 'BEGIN {print (t < o) ? t : o}')
    }
    four() { pipe "$1" "$2" & pipe "$1" "$2" & pipe "$1" "$2" & pipe "$1" "$2" & wait; }
    # VMAF_RS_BENCH_NVDEC_MODES="decode vmaf": only these one-pipeline modes, then the 4
    # concurrent pipelines, nothing after; VMAF_RS_BENCH_FOUR_ONLY=1: only the 4 concurrent
    # pipelines (e.g. again under CUDA MPS)
    read -ra modes <<<"${VMAF_RS_BENCH_NVDEC_MODES:-decode vmaf graph sync ref dis}"
    four_only=${VMAF_RS_BENCH_FOUR_ONLY:-}
    [ -n "$four_only" ] && modes=()
    short=${four_only}${VMAF_RS_BENCH_NVDEC_MODES:-}
    for r in $(seq "$runs"); do
        for m in "${modes[@]}"; do tmin "$m,100" pipe "$m" 100; tmin "$m,$long" pipe "$m" "$long"; done
        for m in decode vmaf; do tmin "four-$m,100" four "$m" 100; tmin "four-$m,$long" four "$m" "$long"; done
        echo "bench: nvdec round $r done: minimums so far: $(for k in "${!best[@]}"; do printf '%s=%s ' "$k" "${best[$k]}"; done)" >&2
    done
    pfps() { awk -v a="${best[$1,100]}" -v b="${best[$1,$long]}" -v n=$((long - 100)) 'BEGIN {printf "%.1f", n / (b - a)}'; }
    gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n1 || true)
    echo "bench --nvdec: 1080p H.264 pair, NVDEC; GPU: ${gpu:-?}; CPU: $cores cores; minimum of $runs alternated runs"
    for m in "${modes[@]}"; do
        echo "bench: nvdec $m: 100 frames ${best[$m,100]} s, $long frames ${best[$m,$long]} s, $(pfps "$m") fps"
    done
    if [ -n "${best[decode,100]:-}" ] && [ -n "${best[vmaf,100]:-}" ]; then
        d=$(pfps decode); v=$(pfps vmaf)
        echo "bench: nvdec decode only ${d} fps, decode + vmaf_rs ${v} fps, ratio $(awk -v a="$v" -v b="$d" 'BEGIN {printf "%.3f", a / b}')"
    fi
    t4d=${best[four-decode,$long]}; t4v=${best[four-vmaf,$long]}
    echo "bench: 4 concurrent pipelines x $long frames: decode only ${t4d} s, decode + vmaf_rs ${t4v} s, ratio $(awk -v a="$t4d" -v b="$t4v" 'BEGIN {printf "%.3f", a / b}') (whole processes)"
    d=$(pfps four-decode); v=$(pfps four-vmaf)
    echo "bench: 4 concurrent pipelines by difference (100 and $long frames): decode only $d fps each, decode + vmaf_rs $v fps each, ratio $(awk -v a="$v" -v b="$d" 'BEGIN {printf "%.3f", a / b}')"
    [ -n "$short" ] && exit 0
    clip() {  # MODE N: the first N frames scored, NVDEC + CUDA (cuda) or software + CPU (cpu)
        if [ "$1" = cuda ]; then
            "$ff" -nostdin -hide_banner -loglevel error "${hw[@]}" -i "$nvdec/dis.mkv" "${hw[@]}" -i "$nvdec/ref.mkv" \
                -lavfi "[0:v][1:v]vmaf_rs" -frames:v "$2" -f null -
        else
            "$ff" -nostdin -hide_banner -loglevel error -threads "$cores" -i "$nvdec/dis.mkv" -threads "$cores" -i "$nvdec/ref.mkv" \
                -lavfi "[0:v][1:v]vmaf_rs=n_threads=$cores" -frames:v "$2" -f null -
        fi
    }
    for m in cuda cpu; do
        echo "bench: 48-frame clip, $m: first score $(time_cmd clip $m 1) s, all 48 $(time_cmd clip $m 48) s"
    done
    # A ladder on NVDEC frames: the distorted file as 3 renditions of the reference in one
    # vmaf_rs=inputs=4 (the reference decoded once), against 3 separate pipelines one after another.
    ladder3() {
        "$ff" -nostdin -hide_banner -loglevel error "${hw[@]}" -i "$nvdec/dis.mkv" "${hw[@]}" -i "$nvdec/dis.mkv" \
            "${hw[@]}" -i "$nvdec/dis.mkv" "${hw[@]}" -i "$nvdec/ref.mkv" \
            -lavfi "[0:v][1:v][2:v][3:v]vmaf_rs=inputs=4" -frames:v "$long" -f null -
    }
    separate3() { pipe vmaf "$long"; pipe vmaf "$long"; pipe vmaf "$long"; }
    tl=$(time_cmd ladder3); ts=$(time_cmd separate3)
    echo "bench: ladder of 3 renditions on NVDEC x $long frames: one vmaf_rs=inputs=4 ${tl} s, 3 separate pipelines ${ts} s, speed-up $(awk -v a="$ts" -v b="$tl" 'BEGIN {printf "%.2f", a / b}')x ($(awk -v t="$tl" 'BEGIN {printf "%.3f", t / 3}') s per rendition)"
    exit 0
fi

if [ "$cuda" = 1 ]; then
    [ "$runs_set" = 1 ] || runs=3
    ff=${VMAF_RS_FFMPEG:-$root/build/ffmpeg/bin/ffmpeg}
    [ -x "$ff" ] || { echo "bench: $ff is missing (scripts/ffmpeg-build.sh)" >&2; exit 1; }
    export LD_LIBRARY_PATH="/usr/local/nvidia/lib64:${LD_LIBRARY_PATH:-}"
    cores=$(nproc)
    # --features / --model: the same request on both paths (e.g. "psnr|float_ssim", all on CUDA)
    copt=""
    [ -n "$features" ] && copt=":feature='name=${features//|/|name=}'"
    [ -n "$model" ] && copt="$copt:model=version=$model"
    # run W H FRAMES cuda|cpu: the filter on FRAMES frames replayed from 8 per input
    run() {
        local w=$1 h=$2 n=$3 mode=$4 up="" dev=() nt=$cores k=8
        if [ "$mode" = cuda ]; then up=",hwupload"; dev=(-init_hw_device cuda=cu -filter_hw_device cu); nt=0; fi
        local src="testsrc2=s=${w}x${h}:r=25,trim=end_frame=$k"
        local tail="format=nv12$up,loop=loop=$((n / k + 1)):size=$k,trim=end_frame=$n"
        time_cmd "$ff" -nostdin -hide_banner "${dev[@]}" -filter_complex \
            "$src,noise=alls=10:allf=t,$tail[m];$src,$tail[r];[m][r]vmaf_rs=n_threads=$nt$copt" -f null -
    }
    fps2() {  # W H N1 N2 MODE
        local t1 t2
        t1=$(run "$1" "$2" "$3" "$5"); t2=$(run "$1" "$2" "$4" "$5")
        awk -v n1="$3" -v n2="$4" -v t1="$t1" -v t2="$t2" 'BEGIN {printf "%.1f", (n2 - n1) / (t2 - t1)}'
    }
    gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n1 || true)
    cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n1)
    echo "bench --cuda: vmaf_rs filter, ${model:-vmaf_v0.6.1}${features:+ + $features}, nv12 8-bit; GPU: ${gpu:-?}; CPU: $cores cores (${cpu:-?})"
    printf '%-12s %14s %14s %8s\n' "size" "cuda fps" "cpu fps" "ratio"
    # W H  cuda N1 N2  cpu N1 N2: about one second of difference each at the speeds seen on an H200
    for spec in "1920 1080 200 3200 50 250" "3840 2160 100 1100 20 100"; do
        set -- $spec
        g=$(fps2 "$1" "$2" "$3" "$4" cuda)
        c=$(fps2 "$1" "$2" "$5" "$6" cpu)
        printf '%-12s %14s %14s %7sx\n' "${1}x${2}" "$g" "$c" "$(awk -v g="$g" -v c="$c" 'BEGIN {printf "%.1f", g / c}')"
        echo "bench: ${1}x${2} cuda ${g} fps, cpu (n_threads=$cores) ${c} fps"
    done
    exit 0
fi

if [ -n "${VMAF_RS_BENCH_PREBUILT:-}" ]; then
    # On a machine without cargo (the device machine): binaries staged by fidelity-check.sh.
    oracle=${VMAF_RS_ORACLE:?VMAF_RS_ORACLE: the oracle ffmpeg}
    cli=${VMAF_RS_CLI:?VMAF_RS_CLI: the vmaf-rs CLI}
    ff=${VMAF_RS_FFMPEG:?VMAF_RS_FFMPEG: our ffmpeg}
else
    oracle=$(scripts/oracle.sh)
    cargo build --release --quiet --bin vmaf-rs
    cli=target/release/vmaf-rs
    # The filter row must measure the current code: relink ffmpeg if the crate changed.
    scripts/ffmpeg-build.sh >&2
    ff=build/ffmpeg/bin/ffmpeg
fi
echo "bench: CPU $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n1), $(nproc) cores"
# --no-avx512: every timed program behind the CPUID mask (an AVX2-only host of these cores).
mask=()
if [ "$noavx" = 1 ]; then
    if [ ! -x build/cpuid-mask ] || [ scripts/cpuid-mask.c -nt build/cpuid-mask ]; then
        mkdir -p build && cc -O2 -Wall -o build/cpuid-mask scripts/cpuid-mask.c
    fi
    build/cpuid-mask --check || exit 1
    mask=(build/cpuid-mask)
    echo "bench: AVX-512 hidden from every program (build/cpuid-mask): both sides run their AVX2 kernels"
fi
w=build/bench; mkdir -p "$w"
# The input: testsrc2, with --noise N grain (temporal noise of strength N) on the reference too.
tag=$frames; grain=""
if [ "$noise" != 0 ]; then tag="$frames-n$noise"; grain=",noise=alls=$noise:allf=t"; fi
if [ ! -f "$w/ref-$tag.yuv" ]; then
    echo "bench: generating 1920x1080 yuv420p, $frames frames${grain:+ (grain $noise)}" >&2
    "$oracle" -hide_banner -loglevel error -y -f lavfi -i "testsrc2=s=1920x1080:r=25,trim=end_frame=$frames$grain" \
        -pix_fmt yuv420p -f rawvideo "$w/ref-$tag.yuv"
    "$oracle" -hide_banner -loglevel error -y -f rawvideo -s 1920x1080 -pix_fmt yuv420p -i "$w/ref-$tag.yuv" \
        -c:v libx264 -preset ultrafast -crf 32 "$w/dis-$tag.mkv"
    "$oracle" -hide_banner -loglevel error -y -i "$w/dis-$tag.mkv" -pix_fmt yuv420p -f rawvideo "$w/dis-$tag.yuv"
fi
raw="-f rawvideo -s 1920x1080 -pix_fmt yuv420p"
# Our CLI's verbose line says what CPU libvmaf would see and which of our kernel levels runs (an
# AVX2 host with AVX-VNNI runs `avx2vnni`; VMAF_RS_CPU=avx2 in the environment lowers ours to the
# plain AVX2 kernels, those of a CPU without AVX-VNNI such as Zen 3; libvmaf ignores it).
vline=$("${mask[@]}" "$cli" -v -r "$w/ref-$tag.yuv" -d "$w/dis-$tag.yuv" -w 1920 -h 1080 -p 420 -b 8 \
    --frame_cnt 1 2>&1 >/dev/null)
echo "bench: our kernels: $(grep -o 'kernels=[a-z0-9]*' <<<"$vline" | head -n1 | cut -d= -f2)${VMAF_RS_CPU:+ (VMAF_RS_CPU=$VMAF_RS_CPU)}"
if [ "$noavx" = 1 ]; then
    # Under the mask, libvmaf's CPU must be the masked one.
    seen=$(grep -o 'libvmaf_isa=[a-z0-9]*' <<<"$vline" | head -n1)
    [ "$seen" = libvmaf_isa=avx2 ] || { echo "bench: under the mask the CLI saw ${seen:-nothing}, not an AVX2-only CPU" >&2; exit 1; }
fi

fps() { awk -v n="$frames" -v t="$1" 'BEGIN {printf "%.1f", n / t}'; }
# a / b to two decimals (awk: bc is not on every machine)
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", a / b}'; }
# The same features for libvmaf's and our filter (one option) and our CLI (one --feature each).
fopt=""; cli_feat=()
if [ -n "$features" ]; then
    fopt=":feature='name=${features//|/|name=}'"
    IFS='|' read -ra fl <<<"$features"
    for f in "${fl[@]}"; do cli_feat+=(--feature "$f"); done
    echo "bench: features $features beside ${model:-vmaf_v0.6.1} on both sides"
fi
if [ -n "$model" ]; then
    fopt="$fopt:model=version=$model"
    cli_feat+=(-m "version=$model")
    echo "bench: model $model on both sides"
fi

if [ -n "$ladder" ]; then
    t=${threads%% *}
    # N separate runs, one after the other, as a pipeline without ladder scoring does them.
    separate() {
        for _ in $(seq "$2"); do
            if [ "$1" = ours ]; then
                "${mask[@]}" "$cli" -q -r "$w/ref-$tag.yuv" -d "$w/dis-$tag.yuv" -w 1920 -h 1080 -p 420 -b 8 --threads "$t"
            else
                "${mask[@]}" "$oracle" -nostdin -hide_banner $raw -i "$w/dis-$tag.yuv" $raw -i "$w/ref-$tag.yuv" \
                    -lavfi "libvmaf=n_threads=$t" -f null -
            fi
        done
    }
    printf '%-40s %8s %14s\n' "what (1080p, $frames frames, threads $t)" "seconds" "s / rendition"
    summary=()
    for n in $ladder; do
        ds=(); for _ in $(seq "$n"); do ds+=(-d "$w/dis-$tag.yuv"); done
        lt=$(time_cmd "${mask[@]}" "$cli" -q -r "$w/ref-$tag.yuv" "${ds[@]}" -w 1920 -h 1080 -p 420 -b 8 --threads "$t")
        st=$(time_cmd separate ours "$n")
        vt=$(time_cmd separate libvmaf "$n")
        per() { awk -v a="$1" -v n="$n" 'BEGIN {printf "%.3f", a / n}'; }
        printf '%-40s %8.2f %14s\n' "vmaf-rs ladder, N=$n" "$lt" "$(per "$lt")"
        printf '%-40s %8.2f %14s\n' "vmaf-rs, $n separate runs" "$st" "$(per "$st")"
        printf '%-40s %8.2f %14s\n' "libvmaf (ffmpeg), $n separate runs" "$vt" "$(per "$vt")"
        summary+=("N=$n: ladder / $n separate vmaf-rs runs = $(ratio "$st" "$lt")x; / $n separate libvmaf runs = $(ratio "$vt" "$lt")x")
    done
    echo
    printf 'speed-up (higher is faster): %s\n' "${summary[@]}"
    exit 0
fi

printf '%-34s %8s %8s\n' "what (1080p, $frames frames)" "seconds" "fps"
summary=()
have_filter=0
if [ -x "$ff" ] && "$ff" -hide_banner -filters 2>/dev/null | grep -q vmaf_rs; then have_filter=1; fi
for t in $threads; do
    # Rounds of libvmaf, our CLI, our filter, one run each, so that a slow spell of a shared
    # machine lands on all three; each ratio is the median of the rounds' own ratios.
    lts=(); ots=(); fts=(); rcli=(); rfilter=()
    for _ in $(seq "$runs"); do
        l=$(time_once "${mask[@]}" "$oracle" -nostdin -hide_banner $raw -i "$w/dis-$tag.yuv" $raw -i "$w/ref-$tag.yuv" \
            -lavfi "libvmaf=n_threads=$t$fopt" -f null -)
        o=$(time_once "${mask[@]}" "$cli" -q -r "$w/ref-$tag.yuv" -d "$w/dis-$tag.yuv" -w 1920 -h 1080 -p 420 -b 8 --threads "$t" "${cli_feat[@]}")
        lts+=("$l"); ots+=("$o"); rcli+=("$(ratio "$l" "$o")")
        if [ "$have_filter" = 1 ]; then
            f=$(time_once "${mask[@]}" "$ff" -nostdin -hide_banner $raw -i "$w/dis-$tag.yuv" $raw -i "$w/ref-$tag.yuv" \
                -lavfi "vmaf_rs=n_threads=$t$fopt" -f null -)
            fts+=("$f"); rfilter+=("$(ratio "$l" "$f")")
        fi
    done
    lt=$(median "${lts[@]}"); ot=$(median "${ots[@]}")
    printf '%-34s %8.2f %8s\n' "libvmaf (ffmpeg) n_threads=$t" "$lt" "$(fps "$lt")"
    printf '%-34s %8.2f %8s\n' "vmaf-rs CLI --threads $t" "$ot" "$(fps "$ot")"
    line="threads=$t: vmaf-rs CLI / libvmaf = $(spread "${rcli[@]}")"
    if [ "$have_filter" = 1 ]; then
        ft=$(median "${fts[@]}")
        printf '%-34s %8.2f %8s\n' "vmaf_rs (ffmpeg) n_threads=$t" "$ft" "$(fps "$ft")"
        line="$line; -lavfi vmaf_rs / libvmaf = $(spread "${rfilter[@]}")"
    fi
    summary+=("$line")
done
echo
hidden=""; [ "$noavx" = 1 ] && hidden=", AVX-512 hidden"
for l in "${summary[@]}"; do
    printf 'ratio (fps, higher is faster; the median of %s alternated rounds, their range in brackets%s): %s\n' "$runs" "$hidden" "$l"
done
