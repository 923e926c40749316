#!/usr/bin/env bash
# Benchmark: vmaf_rs against libvmaf (the oracle's FFmpeg) on the same 1080p input, in one run.
# Prints fps for each and the ratio (ours / libvmaf) last. Not a test: numbers go to
# docs/BENCHMARKS.md.
#   scripts/bench.sh [--frames N] [--threads "1 2"] [--runs R]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
frames=120; threads="1 2"; runs=3
while [ $# -gt 0 ]; do
    case "$1" in
        --frames) frames=$2; shift 2;;
        --threads) threads=$2; shift 2;;
        --runs) runs=$2; shift 2;;
        *) echo "usage: $0 [--frames N] [--threads \"1 2\"] [--runs R]" >&2; exit 2;;
    esac
done
oracle=$(scripts/oracle.sh)
cargo build --release --quiet --bin vmaf-rs
ff=build/ffmpeg/bin/ffmpeg
w=build/bench; mkdir -p "$w"
if [ ! -f "$w/ref-$frames.yuv" ]; then
    echo "bench: generating 1920x1080 yuv420p, $frames frames" >&2
    "$oracle" -hide_banner -loglevel error -y -f lavfi -i "testsrc2=s=1920x1080:r=25,trim=end_frame=$frames" \
        -pix_fmt yuv420p -f rawvideo "$w/ref-$frames.yuv"
    "$oracle" -hide_banner -loglevel error -y -f rawvideo -s 1920x1080 -pix_fmt yuv420p -i "$w/ref-$frames.yuv" \
        -c:v libx264 -preset ultrafast -crf 32 "$w/dis.mkv"
    "$oracle" -hide_banner -loglevel error -y -i "$w/dis.mkv" -pix_fmt yuv420p -f rawvideo "$w/dis-$frames.yuv"
fi
raw="-f rawvideo -s 1920x1080 -pix_fmt yuv420p"

# median wall seconds of $runs runs of a command
time_cmd() {
    local ts=()
    for _ in $(seq "$runs"); do
        local a b
        a=$(date +%s.%N); "$@" >/dev/null 2>&1 || { echo "bench: command failed: $*" >&2; exit 1; }; b=$(date +%s.%N)
        ts+=("$(echo "$b - $a" | bc -l)")
    done
    printf '%s\n' "${ts[@]}" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'
}
fps() { echo "scale=1; $frames / $1" | bc -l; }

printf '%-34s %8s %8s\n' "what (1080p, $frames frames)" "seconds" "fps"
summary=()
for t in $threads; do
    lt=$(time_cmd "$oracle" -nostdin -hide_banner $raw -i "$w/dis-$frames.yuv" $raw -i "$w/ref-$frames.yuv" \
        -lavfi "libvmaf=n_threads=$t" -f null -)
    ot=$(time_cmd target/release/vmaf-rs -q -r "$w/ref-$frames.yuv" -d "$w/dis-$frames.yuv" -w 1920 -h 1080 -p 420 -b 8 --threads "$t")
    printf '%-34s %8.2f %8s\n' "libvmaf (ffmpeg) n_threads=$t" "$lt" "$(fps "$lt")"
    printf '%-34s %8.2f %8s\n' "vmaf-rs CLI --threads $t" "$ot" "$(fps "$ot")"
    line="threads=$t: vmaf-rs CLI / libvmaf = $(echo "scale=2; $lt / $ot" | bc -l)x"
    if [ -x "$ff" ] && "$ff" -hide_banner -filters 2>/dev/null | grep -q vmaf_rs; then
        ft=$(time_cmd "$ff" -nostdin -hide_banner $raw -i "$w/dis-$frames.yuv" $raw -i "$w/ref-$frames.yuv" \
            -lavfi "vmaf_rs=n_threads=$t" -f null -)
        printf '%-34s %8.2f %8s\n' "vmaf_rs (ffmpeg) n_threads=$t" "$ft" "$(fps "$ft")"
        line="$line; -lavfi vmaf_rs / libvmaf = $(echo "scale=2; $lt / $ft" | bc -l)x"
    fi
    summary+=("$line")
done
echo
printf 'ratio (fps, higher is faster): %s\n' "${summary[@]}"
