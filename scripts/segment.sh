#!/usr/bin/env bash
# One title's segments, the pieces every driver (segments-parallel.sh, segments-ray.py, the
# Kubernetes Indexed Job in docs/SEGMENTS.md) is made of:
#
#   scripts/segment.sh probe IN > IN.probe        frame table of a video: "tb NUM DEN", then one
#                                                 "pts key" line per frame in display order
#   scripts/segment.sh frames PROBE               its frame count
#   scripts/segment.sh plan N K                   K segments tiling N frames: "A B" lines
#   scripts/segment.sh run -r REF -d DIS -s A -e B -o PART [--ref-probe P] [--dis-probe P]
#                      [--title-frames N] [-- VMAF_RS_OPTIONS...]
#                                                 scores title frames [A, B) into a partial log
#   scripts/segment.sh decode IN [A B [PROBE]]    writes frames [A, B) of IN as y4m to stdout
#
# `run` decodes exactly the frames [S, B) of each input, S = A - 2 (the most context any feature
# reads: two previous frames; vmaf-rs skips what its features do not need), with ffmpeg: an input
# seek (-ss) to the last keyframe at or before S, then `select` on presentation timestamps
# between the frames' midpoints, so decoding from a keyframe in any GOP structure (B-frames,
# open GOPs whose leading pictures precede the keyframe) yields exactly those frames; `-frames:v`
# stops the decoder at B. The y4m goes through named pipes into `vmaf-rs --segment A:B
# --input_start S`. Inputs: anything ffmpeg reads with one frame per packet (y4m, H.264/HEVC/AV1
# in mp4 or mkv, ...); the frame table comes from `ffmpeg -c copy -f framecrc` (no decoding).
#
# Programs: VMAF_RS_BIN (default target/release/vmaf-rs here, else vmaf-rs on PATH) and FFMPEG
# (default ffmpeg on PATH, else build/oracle/ffmpeg).
#
# Installed by scripts/install.sh as PREFIX/bin/vmaf-rs-segment, it takes the vmaf-rs and ffmpeg
# beside it first.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"

die() {
    echo "segment.sh: $*" >&2
    exit 1
}

vmaf_rs_bin() {
    if [ -n "${VMAF_RS_BIN:-}" ]; then
        echo "$VMAF_RS_BIN"
    elif [ -x "$here/vmaf-rs" ]; then
        echo "$here/vmaf-rs"
    elif [ -x "$root/target/release/vmaf-rs" ]; then
        echo "$root/target/release/vmaf-rs"
    elif command -v vmaf-rs >/dev/null; then
        command -v vmaf-rs
    else
        die "no vmaf-rs: build it (cargo build --release) or set VMAF_RS_BIN"
    fi
}

ffmpeg_bin() {
    if [ -n "${FFMPEG:-}" ]; then
        echo "$FFMPEG"
    elif [ -x "$here/ffmpeg" ]; then
        echo "$here/ffmpeg"
    elif command -v ffmpeg >/dev/null; then
        command -v ffmpeg
    elif [ -x "$root/build/oracle/ffmpeg" ]; then
        echo "$root/build/oracle/ffmpeg"
    else
        die "no ffmpeg: install one or set FFMPEG"
    fi
}

# The frame table of IN's first video stream, from its packets (keyframe: flags bit 0; framecrc
# prints flags only when they are not exactly "key").
probe() {
    local in="$1" ff crc tb
    [ -e "$in" ] || die "probe: $in does not exist"
    ff="$(ffmpeg_bin)"
    crc="$(mktemp)"
    "$ff" -hide_banner -loglevel error -nostdin -i "$in" -map 0:v:0 -c copy -f framecrc - >"$crc" ||
        { rm -f "$crc"; die "probe: ffmpeg cannot read $in"; }
    tb="$(sed -n 's/^#tb 0: *\([0-9]*\)\/\([0-9]*\).*/\1 \2/p' "$crc")"
    [ -n "$tb" ] || { rm -f "$crc"; die "probe: $in has no video stream"; }
    echo "tb $tb"
    awk -F', *' '
        /^#/ { next }
        $3 == "NOPTS" { print "segment.sh: a packet without a timestamp" > "/dev/stderr"; exit 1 }
        {
            key = 1
            if (NF >= 7 && $7 ~ /^F=0x/) {
                d = tolower(substr($7, length($7)))
                key = index("13579bdf", d) > 0 ? 1 : 0
            }
            print $3, key
        }' "$crc" | sort -n -k1,1
    rm -f "$crc"
}

frames() {
    local n
    n=$(($(wc -l <"$1") - 1))
    [ "$n" -gt 0 ] || die "$1: no frames (not a probe file?)"
    echo "$n"
}

plan() {
    local n="$1" k="$2" i
    [ "$n" -gt 0 ] && [ "$k" -gt 0 ] || die "plan: need N > 0 frames and K > 0 segments"
    [ "$k" -le "$n" ] || k="$n"
    for ((i = 0; i < k; i++)); do
        echo "$((i * n / k)) $(((i + 1) * n / k))"
    done
}

# The ffmpeg input and filter arguments that decode frames [S, B) of a video with frame table
# PROBE, one per line: seek to the keyframe, select between midpoints, stop after B - S frames.
decode_args() {
    local probe="$1" s="$2" b="$3"
    awk -v s="$s" -v b="$b" '
        NR == 1 { num = $2; den = $3; next }
        { i = NR - 2; pts[i] = $1; key[i] = $2; n = i + 1 }
        END {
            if (s >= n || b > n || s >= b) {
                printf "segment.sh: frames [%d, %d) outside the title'"'"'s %d\n", s, b, n > "/dev/stderr"
                exit 1
            }
            k = s; while (k > 0 && !key[k]) k--
            if (k > 0) {
                # Microseconds after the first frame, rounded up: ffmpeg seeks to the last
                # keyframe at or before it, which is this one.
                us = (pts[k] - pts[0]) * num * 1000000 / den
                c = int(us); if (c < us) c++
                printf "-ss\n%d.%06d\n", int(c / 1000000), c % 1000000
            }
            lo = s > 0 ? (pts[s - 1] + pts[s]) / 2 * num / den : -1e300
            hi = b < n ? (pts[b - 1] + pts[b]) / 2 * num / den : 1e300
            printf "SELECT\nselect=gte(t\\,%.12g)*lt(t\\,%.12g)\n", lo, hi
            printf "FRAMES\n%d\n", b - s
        }' "$probe"
}

# decode IN A B PROBE: frames [A, B) of IN as y4m on stdout (all frames without A B).
decode() {
    local in="$1" a="${2:-}" b="${3:-}" probe="${4:-}" ff args=() sel="" nfr="" tmp=""
    ff="$(ffmpeg_bin)"
    if [ -n "$a" ]; then
        if [ -z "$probe" ]; then
            tmp="$(mktemp)"
            probe "$in" >"$tmp"
            probe="$tmp"
        fi
        local mode=seek
        while IFS= read -r l; do
            case "$l" in
            SELECT) mode=select ;;
            FRAMES) mode=frames ;;
            *) case "$mode" in
                seek) args+=("$l") ;;
                select) sel="$l" ;;
                frames) nfr="$l" ;;
                esac ;;
            esac
        done < <(decode_args "$probe" "$a" "$b")
        [ -n "$tmp" ] && rm -f "$tmp"
        [ -n "$nfr" ] || die "decode: cannot plan frames [$a, $b) of $in"
    fi
    local filt=()
    [ -n "$sel" ] && filt=(-vf "$sel" -frames:v "$nfr")
    # -copyts: the filter sees the stream's own timestamps (those of the frame table);
    # -noaccurate_seek: no frame is dropped by time, select alone chooses;
    # -fps_mode passthrough: the muxer neither drops nor duplicates frames.
    exec "$ff" -hide_banner -loglevel error -nostdin -copyts "${args[@]}" -noaccurate_seek \
        -i "$in" -map 0:v:0 "${filt[@]}" -fps_mode passthrough -f yuv4mpegpipe -strict -1 -
}

run() {
    local ref="" dis="" a="" b="" out="" rp="" dp="" tf="" extra=()
    while [ $# -gt 0 ]; do
        case "$1" in
        -r) ref="$2"; shift 2 ;;
        -d) dis="$2"; shift 2 ;;
        -s) a="$2"; shift 2 ;;
        -e) b="$2"; shift 2 ;;
        -o) out="$2"; shift 2 ;;
        --ref-probe) rp="$2"; shift 2 ;;
        --dis-probe) dp="$2"; shift 2 ;;
        --title-frames) tf="$2"; shift 2 ;;
        --) shift; extra=("$@"); break ;;
        *) die "run: unknown argument $1" ;;
        esac
    done
    [ -n "$ref" ] && [ -n "$dis" ] && [ -n "$a" ] && [ -n "$b" ] && [ -n "$out" ] ||
        die "run: need -r REF -d DIS -s A -e B -o PART"
    local tmp
    tmp="$(mktemp -d)"
    # shellcheck disable=SC2064
    trap "rm -rf '$tmp'" EXIT
    [ -n "$rp" ] || { rp="$tmp/ref.probe"; probe "$ref" >"$rp"; }
    [ -n "$dp" ] || { dp="$tmp/dis.probe"; probe "$dis" >"$dp"; }
    local n
    n="$(frames "$rp")"
    [ "$n" = "$(frames "$dp")" ] || die "run: $ref has $n frames, $dis $(frames "$dp")"
    [ -n "$tf" ] || tf="$n"
    [ "$tf" = "$n" ] || die "run: --title-frames $tf, but $ref has $n frames"
    local s=$((a > 2 ? a - 2 : 0))
    mkfifo "$tmp/ref.y4m" "$tmp/dis.y4m"
    decode "$ref" "$s" "$b" "$rp" >"$tmp/ref.y4m" &
    local pr=$!
    decode "$dis" "$s" "$b" "$dp" >"$tmp/dis.y4m" &
    local pd=$!
    local rc=0
    "$(vmaf_rs_bin)" -r "$tmp/ref.y4m" -d "$tmp/dis.y4m" --segment "$a:$b" --input_start "$s" \
        --title_frames "$tf" -o "$out" "${extra[@]}" || rc=$?
    if [ "$rc" -ne 0 ]; then
        # Unblock and end the decoders (ours, by id).
        kill "$pr" "$pd" 2>/dev/null || true
        wait "$pr" "$pd" 2>/dev/null || true
        die "run: vmaf-rs failed on frames [$a, $b) (exit $rc)"
    fi
    wait "$pr" || die "run: decoding $ref failed"
    wait "$pd" || die "run: decoding $dis failed"
}

cmd="${1:-}"
shift || true
case "$cmd" in
probe) probe "$@" ;;
frames) frames "$@" ;;
plan) plan "$@" ;;
decode) decode "$@" ;;
run) run "$@" ;;
*) die "usage: segment.sh probe|frames|plan|decode|run ... (see the top of this script)" ;;
esac
