#!/usr/bin/env bash
# Scores one title in K segments at once on this machine with GNU parallel, then merges them
# exactly: the log equals a single `vmaf-rs` run's (docs/SEGMENTS.md).
#
#   scripts/segments-parallel.sh -r REF -d DIS -o LOG [-k K] [-j JOBS] [--json|--xml|--csv|--sub]
#                                [--reproducible] [--work DIR] [-- VMAF_RS_OPTIONS...]
#
# REF and DIS: anything ffmpeg reads (y4m, H.264/HEVC in mp4/mkv, ...), decoded frame-exactly per
# segment by scripts/segment.sh. K (default: the number of cores) segments, JOBS (default: K) at a
# time; each segment runs `vmaf-rs --segment` with VMAF_RS_OPTIONS (models, features, --threads,
# --subsample, ...). A failed segment is retried once (GNU parallel --retries 2). The parts and
# parallel's job log stay in the work directory (default: a temporary one, removed after a
# success). GNU parallel comes from apt when missing (as root). VMAF_RS_BIN and FFMPEG choose the
# programs (scripts/segment.sh).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
seg="$here/segment.sh"

die() {
    echo "segments-parallel: $*" >&2
    exit 1
}

ref="" dis="" out="" k="" jobs="" fmt="--xml" work="" repro=() extra=()
while [ $# -gt 0 ]; do
    case "$1" in
    -r) ref="$2"; shift 2 ;;
    -d) dis="$2"; shift 2 ;;
    -o) out="$2"; shift 2 ;;
    -k) k="$2"; shift 2 ;;
    -j) jobs="$2"; shift 2 ;;
    --json | --xml | --csv | --sub) fmt="$1"; shift ;;
    --reproducible) repro=(--reproducible); shift ;;
    --work) work="$2"; shift 2 ;;
    --) shift; extra=("$@"); break ;;
    -h | --help) sed -n '2,/^set /p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument $1 (see --help)" ;;
    esac
done
[ -n "$ref" ] && [ -n "$dis" ] && [ -n "$out" ] || die "need -r REF -d DIS -o LOG (see --help)"

# moreutils has a `parallel` too, with other options: GNU's says so in --version.
if ! parallel --version 2>/dev/null | grep -q "GNU parallel"; then
    [ "$(id -u)" = 0 ] || die "GNU parallel is missing; install it (apt-get install parallel)"
    echo "segments-parallel: installing GNU parallel (apt)" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >&2 || true
    apt-get install -y -qq --no-install-recommends parallel >&2 ||
        die "cannot install GNU parallel with apt"
fi

keep=1
if [ -z "$work" ]; then
    work="$(mktemp -d)"
    keep=0
fi
mkdir -p "$work"
rm -f "$work"/part-*.json

t0=$(date +%s.%N)
# Both frame tables at once: they read the whole files (no decoding).
"$seg" probe "$ref" >"$work/ref.probe" &
p1=$!
"$seg" probe "$dis" >"$work/dis.probe" || die "cannot probe $dis"
wait "$p1" || die "cannot probe $ref"
n="$("$seg" frames "$work/ref.probe")"
nd="$("$seg" frames "$work/dis.probe")"
[ "$n" = "$nd" ] || die "$ref has $n frames, $dis has $nd; score equal-length videos"
[ -n "$k" ] || k="$(nproc)"
[ -n "$jobs" ] || jobs="$k"
"$seg" plan "$n" "$k" >"$work/segments"
k="$(wc -l <"$work/segments")"
echo "segments-parallel: $n frames in $k segments, $jobs at a time" >&2

# -q: every argument reaches segment.sh as it is (no shell re-parsing of the options).
parallel --will-cite -q -j "$jobs" --colsep ' ' --halt now,fail=1 --retries 2 \
    --joblog "$work/jobs.log" \
    "$seg" run -r "$ref" -d "$dis" -s '{1}' -e '{2}' -o "$work/part-{#}.json" \
    --ref-probe "$work/ref.probe" --dis-probe "$work/dis.probe" --title-frames "$n" \
    -- -q "${extra[@]}" :::: "$work/segments" ||
    die "a segment failed (job log: $work/jobs.log)"
t1=$(date +%s.%N)

vmaf_rs="${VMAF_RS_BIN:-}"
if [ -z "$vmaf_rs" ]; then
    if [ -x "$here/../target/release/vmaf-rs" ]; then vmaf_rs="$here/../target/release/vmaf-rs"; else vmaf_rs=vmaf-rs; fi
fi
"$vmaf_rs" merge "$work"/part-*.json -o "$out" "$fmt" "${repro[@]}"
t2=$(date +%s.%N)
awk -v a="$t0" -v b="$t1" -v c="$t2" -v n="$n" -v k="$k" -v o="$out" 'BEGIN {
    printf "segments-parallel: %d frames, %d segments: scored in %.2f s, merged in %.2f s, %s\n",
        n, k, b - a, c - b, o > "/dev/stderr" }'
[ "$keep" = 1 ] || rm -rf "$work"
