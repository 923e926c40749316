#!/usr/bin/env bash
# Installs the downstream tools that hard-code FFmpeg's `libvmaf` filter, pinned, for
# tests/downstream.rs (which runs each against our ffmpeg and the oracle's):
#   - ffmpeg-quality-metrics 3.13.0 and easyVmaf 5.0.0 (pip, scripts/tools-requirements.txt with
#     sha256 hashes, into the venv build/tools-venv);
#   - ab-av1 (cargo install --locked, into build/tools/ab-av1-<version>: one directory per
#     version, so a cached build is reused until the pin changes).
# build/tools/bin/ then holds ffmpeg-quality-metrics, easyvmaf and ab-av1 (links to the pinned
# installs). Idempotent: each tool is skipped when it is installed at its pinned version.
# Prints build/tools/bin.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
ab_av1_version=0.11.7
reqs="$root/scripts/tools-requirements.txt"
venv="$root/build/tools-venv"
tools="$root/build/tools"
bin="$tools/bin"
py="${PYTHON:-python3}"
say() { echo "tools: $*" >&2; }
mkdir -p "$bin"

# pip: the stamp holds the requirements file's sha256; a changed pin reinstalls.
want=$(sha256sum "$reqs" | cut -d' ' -f1)
if [ "$(cat "$venv/.installed" 2>/dev/null)" != "$want" ] || [ ! -x "$venv/bin/easyvmaf" ]; then
    t=$(date +%s)
    say "installing ffmpeg-quality-metrics and easyVmaf (pip) into $venv"
    [ -x "$venv/bin/python" ] || "$py" -m venv "$venv"
    "$venv/bin/python" -m pip install -q --disable-pip-version-check --no-deps \
        --only-binary=:all: --require-hashes -r "$reqs" >&2
    echo "$want" >"$venv/.installed"
    say "pip: $(( $(date +%s) - t )) s"
fi
ln -sfn "$venv/bin/ffmpeg-quality-metrics" "$bin/ffmpeg-quality-metrics"
ln -sfn "$venv/bin/easyvmaf" "$bin/easyvmaf"

# cargo: its own target directory (not the crate's CARGO_TARGET_DIR), removed after install.
# A compiled tool is kept in VMAF_RS_BUILD_CACHE when set (see scripts/ffmpeg-build.sh), so
# another clone does not compile it again.
dest="${VMAF_RS_BUILD_CACHE:-$root/build}/tools/ab-av1-$ab_av1_version"
if [ "$("$dest/bin/ab-av1" --version 2>/dev/null)" != "ab-av1 $ab_av1_version" ]; then
    t=$(date +%s)
    say "building ab-av1 $ab_av1_version (cargo install --locked) into $dest"
    rm -rf "$dest" "$tools/ab-av1-target"
    CARGO_TARGET_DIR="$tools/ab-av1-target" cargo install --locked --quiet ab-av1 \
        --version "$ab_av1_version" --root "$dest" >&2
    rm -rf "$tools/ab-av1-target"
    say "ab-av1: $(( $(date +%s) - t )) s"
fi
ln -sfn "$dest/bin/ab-av1" "$bin/ab-av1"
echo "$bin"
