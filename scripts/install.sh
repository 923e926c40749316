#!/usr/bin/env bash
# Installs vmaf_rs under a prefix, for users who link it themselves (their own FFmpeg build with
# scripts/ffmpeg-apply.sh, or any C program):
#
#   PREFIX/bin/vmaf-rs                   the CLI (cargo build --release)
#   PREFIX/bin/vmaf-rs-segment           scripts/segment.sh: one segment of a title (docs/SEGMENTS.md)
#   PREFIX/lib/libvmaf_rs.a              the C library (features capi, and cuda when nvcc is there)
#   PREFIX/include/vmaf_rs.h             its header
#   PREFIX/lib/pkgconfig/vmaf_rs.pc      `pkg-config --static --libs vmaf_rs` gives the link line
#   PREFIX/bin/ffmpeg, PREFIX/bin/ffprobe   with --with-ffmpeg: our FFmpeg (scripts/ffmpeg-build.sh,
#                                        built or reused from build/ffmpeg); it is a static binary
#
# Usage: scripts/install.sh --prefix DIR [--with-ffmpeg] [--no-cli]
# Environment: VMAF_RS_CUDA=auto|1|0 (see scripts/ffmpeg-build.sh), CARGO_TARGET_DIR.
# `cargo install --path .` installs the CLI alone.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
log() { echo "install: $*" >&2; }
die() { echo "install: error: $*" >&2; exit 1; }
vr_root=$root
. "$root/scripts/crate-common.sh"

prefix= with_ffmpeg=0 cli=1
while [ $# -gt 0 ]; do
    case "$1" in
        --prefix) prefix=${2:?--prefix needs a directory}; shift ;;
        --with-ffmpeg) with_ffmpeg=1 ;;
        --no-cli) cli=0 ;;
        -h|--help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) die "unknown argument '$1' (usage: $0 --prefix DIR [--with-ffmpeg] [--no-cli])" ;;
    esac
    shift
done
[ -n "$prefix" ] || die "--prefix DIR is required (e.g. --prefix \$HOME/.local)"
mkdir -p "$prefix" 2>/dev/null || die "cannot create $prefix"
prefix=$(cd "$prefix" && pwd)
[ -w "$prefix" ] || die "$prefix is not writable"

vr_resolve_cuda "${VMAF_RS_CUDA:-auto}"
vr_build_staticlib "$vr_cuda" "$prefix/lib" "$prefix/include"
vr_write_pc "$prefix" "$vr_native_libs" "$prefix/lib/pkgconfig/vmaf_rs.pc"

if [ "$cli" = 1 ]; then
    log "building the vmaf-rs CLI"
    features=cli,capi
    [ "$vr_cuda" = 1 ] && features=cli,capi,cuda
    cargo build --manifest-path "$root/Cargo.toml" --release --bin vmaf-rs --features "$features" >&2 ||
        die "cargo build of the CLI failed"
    mkdir -p "$prefix/bin"
    vr_install_if_changed "${CARGO_TARGET_DIR:-$root/target}/release/vmaf-rs" "$prefix/bin/vmaf-rs"
    vr_install_if_changed "$root/scripts/segment.sh" "$prefix/bin/vmaf-rs-segment"
fi

if [ "$with_ffmpeg" = 1 ]; then
    VMAF_RS_CUDA=$vr_cuda "$root/scripts/ffmpeg-build.sh" >&2
    for p in ffmpeg ffprobe; do
        vr_install_if_changed "$root/build/ffmpeg/bin/$p" "$prefix/bin/$p"
    done
fi

log "installed into $prefix:"
for f in bin/vmaf-rs bin/ffmpeg bin/ffprobe lib/libvmaf_rs.a include/vmaf_rs.h lib/pkgconfig/vmaf_rs.pc; do
    if [ -e "$prefix/$f" ]; then echo "  $f" >&2; fi
done
log "link with: PKG_CONFIG_PATH=$prefix/lib/pkgconfig pkg-config --static --cflags --libs vmaf_rs"
