#!/usr/bin/env bash
# The main job on a built-in sample: builds what is needed, makes a reference/distorted pair,
# scores it with `ffmpeg -lavfi vmaf_rs` (the patched FFmpeg) when it is built, otherwise with the
# `vmaf-rs` CLI, and prints per-frame and pooled scores.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
scripts/deps.sh
oracle=$(scripts/oracle.sh)
work=build/demo; mkdir -p "$work"

ff=build/ffmpeg/bin/ffmpeg
if [ "${VMAF_RS_DEMO_CLI:-0}" != 1 ] && [ -x scripts/ffmpeg-build.sh ]; then
    scripts/ffmpeg-build.sh >&2
fi
gen=$oracle; [ -x "$ff" ] && gen=$ff
echo "demo: making a 2-second 640x360 sample pair (reference + x264-like degraded copy)" >&2
"$oracle" -hide_banner -loglevel error -y -f lavfi -i "testsrc2=s=640x360:r=25:d=2" -pix_fmt yuv420p "$work/ref.y4m"
"$oracle" -hide_banner -loglevel error -y -i "$work/ref.y4m" -c:v libx264 -preset veryfast -crf 35 "$work/dis.mp4"
"$oracle" -hide_banner -loglevel error -y -i "$work/dis.mp4" -pix_fmt yuv420p "$work/dis.y4m"

if [ -x "$ff" ] && [ "${VMAF_RS_DEMO_CLI:-0}" != 1 ]; then
    echo "demo: $ff -i dis -i ref -lavfi vmaf_rs=log_fmt=json:log_path=$work/vmaf.json -f null -" >&2
    "$ff" -hide_banner -nostdin -i "$work/dis.y4m" -i "$work/ref.y4m" \
        -lavfi "vmaf_rs=log_fmt=json:log_path=$work/vmaf.json:n_threads=2" -f null - 2>&1 | grep -E "VMAF score" || true
else
    cargo build --release --quiet --bin vmaf-rs
    target/release/vmaf-rs -r "$work/ref.y4m" -d "$work/dis.y4m" --json -o "$work/vmaf.json" --threads 2
fi
python3 - "$work/vmaf.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
print("frame   vmaf      vif_s0    adm2      motion2")
for f in d["frames"]:
    m = f["metrics"]
    print(f'{f["frameNum"]:5d} {m["vmaf"]:9.4f} {m["integer_vif_scale0"]:9.6f} {m["integer_adm2"]:9.6f} {m["integer_motion2"]:9.4f}')
p = d["pooled_metrics"]["vmaf"]
print(f'pooled VMAF: mean {p["mean"]:.6f}  harmonic_mean {p["harmonic_mean"]:.6f}  min {p["min"]:.6f}  max {p["max"]:.6f}')
PY
