#!/usr/bin/env bash
# Installs the reference ("oracle"): a static FFmpeg 9.0.2 with real libvmaf, shipped inside the
# imageio-ffmpeg 0.8.1 wheel, to build/oracle/ffmpeg. Prints its path. Idempotent.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dest="$root/build/oracle"
bin="$dest/ffmpeg"
if [ -x "$bin" ] && [[ "$("$bin" -hide_banner -filters 2>/dev/null)" == *" libvmaf "* ]]; then
    echo "$bin"; exit 0
fi
mkdir -p "$dest"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
python3 -m pip download --quiet --no-deps --only-binary=:all: --python-version 3.11 \
    --platform manylinux_2_28_x86_64 imageio-ffmpeg==0.8.1 -d "$tmp" >&2
python3 - "$tmp" "$bin" <<'PY'
import sys, zipfile, glob, os
whl = glob.glob(os.path.join(sys.argv[1], "imageio_ffmpeg-0.8.1-*.whl"))[0]
with zipfile.ZipFile(whl) as z:
    name = "imageio_ffmpeg/binaries/ffmpeg-linux-x86_64-v9.0.2"
    with z.open(name) as src, open(sys.argv[2] + ".part", "wb") as dst:
        dst.write(src.read())
os.chmod(sys.argv[2] + ".part", 0o755)
os.replace(sys.argv[2] + ".part", sys.argv[2])
PY
[[ "$("$bin" -hide_banner -filters 2>/dev/null)" == *" libvmaf "* ]] || { echo "oracle ffmpeg lacks libvmaf" >&2; exit 1; }
echo "$bin"
