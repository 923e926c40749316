#!/usr/bin/env bash
# Builds FFmpeg with the vmaf_rs filter: build/ffmpeg/bin/{ffmpeg,ffprobe} (FFmpeg 9.0.2, the
# default), build/ffmpeg-8.1.2/bin/..., build/ffmpeg-7.1.5/bin/... (--version 8.1, 7.1).
#
#   1. installs missing build tools with apt (nasm, pkg-config, make, gcc, xz-utils);
#   2. builds the crate's static library (cargo, features `capi,cuda`; see VMAF_RS_CUDA) and lays
#      it out as a pkg-config package in build/vmaf_rs/{include,lib,lib/pkgconfig};
#   3. installs nv-codec-headers into build/nv-codec-headers (headers and ffnvcodec.pc only);
#   4. unpacks the pristine FFmpeg release and applies ffmpeg-patches/<major.minor>/
#      (scripts/ffmpeg-apply.sh) into build/ffmpeg-src/<version>;
#   5. configures a small static FFmpeg out of tree in build/ffmpeg-obj/<version>, runs make and
#      installs it into the prefix (build/ffmpeg for 9.0, build/ffmpeg-<version> otherwise).
#
# Usage: scripts/ffmpeg-build.sh [--version 7.1|8.1|9.0|<release>] [--force]
#   Each release has its own source, object and install directories, so the builds of several
#   releases are cached side by side. Nothing is done ("up to date") unless the FFmpeg version,
#   its patch series, the crate's sources (src/, kernels/, build.rs, Cargo.toml, Cargo.lock,
#   include/vmaf_rs.h) or this script changed. FFmpeg is reconfigured only when the version,
#   the series, the configure line or vmaf_rs.pc changed; otherwise make recompiles what changed
#   and relinks the programs when libvmaf_rs.a changed. --force rebuilds FFmpeg from a fresh
#   configure.
#
# Environment:
#   FFMPEG_VERSION=9.0       release line or release, as --version (ffmpeg-patches/<line>/)
#   FFMPEG_PREFIX=<dir>      install there instead of the default prefix
#   FFMPEG_SOURCE=...        see scripts/ffmpeg-fetch.sh
#   VMAF_RS_CUDA=auto|1|0    the crate's `cuda` feature (the GPU backend of the filter). Default
#                            auto: on whenever nvcc is found (NVCC, build/cuda-venv, PATH,
#                            /usr/local/cuda) or can be installed by scripts/cuda-toolchain.sh
#                            (pip, once); off with a warning otherwise. 1: on, fail without nvcc.
#                            0: off (the filter then refuses CUDA frames with a clear message).
#                            Building with CUDA needs no GPU (libcuda is loaded at run time) and
#                            costs about the same as without (see docs/BENCHMARKS.md).
#   VMAF_RS_LIBVMAF_NAMES=1  also register the filter as libvmaf and libvmaf_cuda
#                            (--enable-vmaf-rs-as-libvmaf), for tools that hard-code those
#                            names: ab-av1, ffmpeg-quality-metrics, easyVmaf, Av1an. Default 1;
#                            0 leaves only the vmaf_rs name.
#   VMAF_RS_DAV1D=auto|1|0   AV1 decoding with libdav1d, built static from Debian's dav1d source
#                            package (scripts/ffmpeg-fetch.sh dav1d; meson and ninja from apt)
#                            into build/dav1d. auto (default): on when it can be built, else a
#                            warning (AV1 then decodes only through NVDEC); 1: required; 0: off.
#   FFMPEG_CONFIGURE_EXTRA="--enable-decoder=... ..."
#                            more FFmpeg configure flags of your own, appended (split at blanks)
#   VMAF_RS_FFMPEG_GPL=1     configure FFmpeg with --enable-gpl and add the (GPL) boxblur filter
#   VMAF_RS_BUILD_CACHE=<dir> build FFmpeg (sources, objects, dav1d, nv-codec-headers) there,
#                            outside the checkout, and copy the result into the prefix: a new
#                            clone of the same release + patches only relinks (scripts/test.sh
#                            uses ~/.cache/vmaf_rs under CI=true). Unset: everything in build/.
#   VMAF_RS_PREFIX=<dir>     use a prebuilt vmaf_rs (<dir>/include/vmaf_rs.h,
#                            <dir>/lib/libvmaf_rs.a, <dir>/lib/pkgconfig/vmaf_rs.pc); skips cargo
#   JOBS=<n>                 parallel make jobs (default: nproc)
#
# A modified tree in build/ffmpeg-src/<version> (edited by hand, see scripts/ffmpeg-export.sh) is
# built as it is, with a warning.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
ff_root=$root ff_prog=ffmpeg-build
. "$root/scripts/ffmpeg-common.sh"
vr_root=$root
. "$root/scripts/crate-common.sh"
force=0 want=${FFMPEG_VERSION:-}
while [ $# -gt 0 ]; do
    case "$1" in
        --force) force=1 ;;
        --version) want=${2:?--version needs a value}; shift ;;
        *) echo "ffmpeg-build: error: unknown argument '$1' (usage: $0 [--version 7.1|8.1|9.0] [--force])" >&2; exit 1 ;;
    esac
    shift
done
ff_resolve "$want" || exit 1
version=$ff_version
line=$ff_line
patchdir=$ff_patchdir
srcdir=$root/build/ffmpeg-src/$version
objdir=$root/build/ffmpeg-obj/$version
if [ "$line" = "$ff_default_line" ]; then
    prefix=${FFMPEG_PREFIX:-$root/build/ffmpeg}
else
    prefix=${FFMPEG_PREFIX:-$root/build/ffmpeg-$version}
fi
vmafdir=$root/build/vmaf_rs
nvdir=$root/build/nv-codec-headers
davdir=$root/build/dav1d
# VMAF_RS_BUILD_CACHE: FFmpeg's sources, objects and dependencies live there, outside this
# checkout, at paths that do not depend on it, so another clone (CI) reuses the objects and only
# relinks; the programs are then copied into the prefix. Builds there take turns (flock).
cache=${VMAF_RS_BUILD_CACHE:-}
inst=$prefix
if [ -n "$cache" ]; then
    mkdir -p "$cache" && cache=$(cd "$cache" && pwd) || { echo "ffmpeg-build: error: cannot use VMAF_RS_BUILD_CACHE=$cache" >&2; exit 1; }
    srcdir=$cache/ffmpeg-src/$version
    objdir=$cache/ffmpeg-obj/$version
    inst=$cache/ffmpeg-inst/$version
    vmafdir=$cache/vmaf_rs
    nvdir=$cache/nv-codec-headers
    davdir=$cache/dav1d
    exec 9>"$cache/.lock"
    flock 9
fi
nv_version=12.1.14.0
cuda=${VMAF_RS_CUDA:-auto}
case "$cuda" in auto|0|1) ;; *) echo "ffmpeg-build: error: VMAF_RS_CUDA=$cuda (expected auto, 1 or 0)" >&2; exit 1;; esac
jobs=${JOBS:-$(nproc)}
stamp=$prefix/.vmaf_rs-build-stamp

log() { echo "ffmpeg-build: $*" >&2; }
die() { echo "ffmpeg-build: error: $*" >&2; exit 1; }
sha() { sha256sum | cut -d' ' -f1; }

[ -f "$patchdir/series" ] || die "no patch series for FFmpeg $line ($patchdir/series)"

# What FFmpeg is configured with: what a VMAF user meets, and no more (the build stays small and
# fast). Native decoders for H.264, HEVC, VP8/VP9, MPEG-1/2, MPEG-4, ProRes, DNxHD, FFV1, PNG and
# raw video, AV1 through libdav1d (below); the containers mov/mp4, matroska/webm, ivf, mpegts,
# y4m, image2 (and raw streams); NVDEC for H.264, HEVC, AV1 and VP9 (no CUDA needed at build
# time: libcuda is loaded at run time, only nv-codec-headers); the filters people put around
# VMAF (yadif and setparams: easyVmaf deinterlaces interlaced inputs, and with --gpu resets
# their colour tags before hwupload), and those the tests and demos use. FFMPEG_CONFIGURE_EXTRA
# adds your own flags.
configure_args=(
    --disable-everything --disable-autodetect --disable-doc --disable-ffplay --disable-network
    --enable-static --disable-shared --pkg-config-flags=--static
    --enable-ffnvcodec --enable-cuda --enable-nvdec
    --enable-hwaccel=h264_nvdec,hevc_nvdec,av1_nvdec,vp9_nvdec
    --enable-decoder=h264,hevc,vp8,vp9,av1,mpeg1video,mpeg2video,mpeg4,prores,dnxhd,ffv1,png
    --enable-decoder=rawvideo,wrapped_avframe
    --enable-encoder=wrapped_avframe,rawvideo
    --enable-parser=h264,hevc,vp8,vp9,av1,mpegvideo,mpeg4video,dnxhd,png
    --enable-demuxer=mov,matroska,ivf,mpegts,mpegps,yuv4mpegpipe,image2,h264,hevc,obu,m4v,mpegvideo,rawvideo
    --enable-muxer=null,rawvideo,yuv4mpegpipe
    --enable-protocol=file,pipe
    --enable-indev=lavfi
    --enable-zlib
    --enable-filter=scale,format,fps,setpts,settb,crop,pad,split,trim,select,psnr,ssim,null
    --enable-filter=yadif,setparams
    --enable-filter=hwupload_cuda,hwupload,hwdownload
    --enable-filter=testsrc,testsrc2,nullsrc,color,noise,avgblur,gblur,metadata,showinfo,movie,concat,loop
    --enable-libvmaf-rs --enable-filter=vmaf_rs
)
libvmaf_names=${VMAF_RS_LIBVMAF_NAMES:-1}
case "$libvmaf_names" in 0|1) ;; *) echo "ffmpeg-build: error: VMAF_RS_LIBVMAF_NAMES=$libvmaf_names (expected 1 or 0)" >&2; exit 1;; esac
if [ "$libvmaf_names" = 1 ]; then
    configure_args+=(--enable-vmaf-rs-as-libvmaf)
fi
# scale_cuda needs a CUDA compiler for FFmpeg's own kernels: clang (cuda_llvm, free); FFmpeg's
# nvcc route is --enable-nonfree, so it is left to FFMPEG_CONFIGURE_EXTRA.
if command -v clang >/dev/null; then
    configure_args+=(--enable-cuda-llvm --enable-filter=scale_cuda)
    scale_cuda=1
else
    scale_cuda=0
fi
dav1d=${VMAF_RS_DAV1D:-auto}
case "$dav1d" in auto|0|1) ;; *) echo "ffmpeg-build: error: VMAF_RS_DAV1D=$dav1d (expected auto, 1 or 0)" >&2; exit 1;; esac
extra_args=()
if [ -n "${FFMPEG_CONFIGURE_EXTRA:-}" ]; then
    read -r -a extra_args <<< "$FFMPEG_CONFIGURE_EXTRA"
fi
# boxblur is GPL in FFmpeg: VMAF_RS_FFMPEG_GPL=1 builds a GPL ffmpeg that has it.
if [ "${VMAF_RS_FFMPEG_GPL:-0}" = 1 ]; then
    configure_args+=(--enable-gpl --enable-filter=boxblur)
fi

# --- CUDA: is nvcc there (build.rs looks in the same places)? ------------------------------------
if [ -n "${VMAF_RS_PREFIX:-}" ]; then
    cuda=prebuilt
else
    vr_resolve_cuda "$cuda"
    cuda=$vr_cuda
fi

# --- identity of the wanted result -------------------------------------------------------------
series_hash() { ff_series_hash; }
crate_hash() {
    if [ -n "${VMAF_RS_PREFIX:-}" ]; then
        cat "$VMAF_RS_PREFIX/lib/libvmaf_rs.a" "$VMAF_RS_PREFIX/lib/pkgconfig/vmaf_rs.pc" \
            "$VMAF_RS_PREFIX/include/vmaf_rs.h" | sha
        return
    fi
    (cd "$root" && find src kernels build.rs Cargo.toml Cargo.lock include/vmaf_rs.h \
        -type f ! -name '*.orig' ! -name '*.rej' ! -name '*~' 2>/dev/null | LC_ALL=C sort | xargs sha256sum) | sha
}
tree_state() {
    # A hand-edited tree is always rebuilt (make is incremental).
    if [ -d "$srcdir/.git" ] && [ -n "$(git -C "$srcdir" status --porcelain 2>/dev/null)" ]; then
        echo "modified $(date +%s%N)"
    fi
}
want=$( { echo "ffmpeg $version"; echo "series $(series_hash)"; echo "crate $(crate_hash)";
          echo "cuda $cuda"; echo "gpl ${VMAF_RS_FFMPEG_GPL:-0}"; echo "prefix ${VMAF_RS_PREFIX:-cargo}"; echo "script $(sha < "$0")";
          echo "dav1d $dav1d"; echo "scale_cuda $scale_cuda"; echo "extra ${extra_args[*]}";
          tree_state; } | sha)

if [ "$force" != 1 ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] &&
   [ -x "$prefix/bin/ffmpeg" ] && [ -x "$prefix/bin/ffprobe" ]; then
    echo "ffmpeg-build: up to date ($prefix/bin/ffmpeg)"
    exit 0
fi
start=$(date +%s)

# --- 1. build tools -------------------------------------------------------------------------------
missing=()
command -v nasm >/dev/null       || missing+=(nasm)
command -v pkg-config >/dev/null || missing+=(pkg-config)
command -v make >/dev/null       || missing+=(make)
command -v cc >/dev/null         || missing+=(gcc libc6-dev)
command -v xz >/dev/null         || missing+=(xz-utils)
[ -f /usr/include/zlib.h ]       || missing+=(zlib1g-dev)   # png
command -v git >/dev/null || command -v patch >/dev/null || missing+=(patch)  # ffmpeg-apply.sh
if [ ${#missing[@]} -gt 0 ]; then
    log "installing ${missing[*]}"
    if [ "$(id -u)" -eq 0 ]; then sudo=(); else sudo=(sudo); fi
    "${sudo[@]}" apt-get install -y --no-install-recommends "${missing[@]}" >&2 ||
        { "${sudo[@]}" apt-get update -qq >&2 &&
          "${sudo[@]}" apt-get install -y --no-install-recommends "${missing[@]}" >&2; } ||
        die "could not install ${missing[*]}"
fi

# --- 2. the crate ---------------------------------------------------------------------------------
if [ -n "${VMAF_RS_PREFIX:-}" ]; then
    log "using prebuilt vmaf_rs from $VMAF_RS_PREFIX"
    vr_install_if_changed "$VMAF_RS_PREFIX/include/vmaf_rs.h" "$vmafdir/include/vmaf_rs.h"
    vr_install_if_changed "$VMAF_RS_PREFIX/lib/libvmaf_rs.a" "$vmafdir/lib/libvmaf_rs.a"
    native_libs=$(sed -n 's/^Libs:.*-lvmaf_rs//p' "$VMAF_RS_PREFIX/lib/pkgconfig/vmaf_rs.pc")
else
    vr_build_staticlib "$cuda" "$vmafdir/lib" "$vmafdir/include"
    native_libs=$vr_native_libs
fi
vr_write_pc "$vmafdir" "$native_libs" "$vmafdir/lib/pkgconfig/vmaf_rs.pc"

# --- 3. nv-codec-headers --------------------------------------------------------------------------
# (Re)installed when the version differs or the .pc file points elsewhere (a copied build/).
if [ "$(cat "$nvdir/.version" 2>/dev/null)" != "$nv_version" ] ||
   ! grep -qxF "prefix=$nvdir" "$nvdir/lib/pkgconfig/ffnvcodec.pc" 2>/dev/null; then
    nvsrc=$("$root/scripts/ffmpeg-fetch.sh" nv-codec-headers)
    nvtmp=$(mktemp -d)
    if [ -d "$nvsrc" ]; then cp -a "$nvsrc/." "$nvtmp/"; else tar -C "$nvtmp" --no-same-owner --strip-components=1 -xf "$nvsrc"; fi
    rm -rf "$nvdir"
    make -C "$nvtmp" install PREFIX="$nvdir" >&2
    rm -rf "$nvtmp"
    echo "$nv_version" > "$nvdir/.version"
fi

# --- 3b. dav1d (AV1), static, from Debian's source package -------------------------------------
dav1d_version=1.0.0
build_dav1d() {
    local need=() davsrc davtmp
    command -v meson >/dev/null || need+=(meson)
    command -v ninja >/dev/null || need+=(ninja-build)
    if [ ${#need[@]} -gt 0 ]; then
        log "installing ${need[*]} (to build dav1d)"
        local sudo=(); [ "$(id -u)" -eq 0 ] || sudo=(sudo)
        "${sudo[@]}" apt-get install -y --no-install-recommends "${need[@]}" >&2 ||
            { "${sudo[@]}" apt-get update -qq >&2 &&
              "${sudo[@]}" apt-get install -y --no-install-recommends "${need[@]}" >&2; } || return 1
    fi
    davsrc=$("$root/scripts/ffmpeg-fetch.sh" dav1d) || return 1
    davtmp=$(mktemp -d)
    if [ -d "$davsrc" ]; then cp -a "$davsrc/." "$davtmp/src"; else mkdir "$davtmp/src" && tar -C "$davtmp/src" --no-same-owner --strip-components=1 -xf "$davsrc"; fi
    rm -rf "$davdir"
    if ! (meson setup "$davtmp/build" "$davtmp/src" --prefix="$davdir" --libdir=lib \
              --buildtype=release --default-library=static -Denable_tools=false \
              -Denable_tests=false -Denable_examples=false >"$davtmp/meson.log" 2>&1 &&
          ninja -C "$davtmp/build" -j"$jobs" install >>"$davtmp/meson.log" 2>&1); then
        tail -n 20 "$davtmp/meson.log" >&2; rm -rf "$davtmp" "$davdir"; return 1
    fi
    rm -rf "$davtmp"
    echo "$dav1d_version" > "$davdir/.version"
}
if [ "$dav1d" != 0 ]; then
    if [ "$(cat "$davdir/.version" 2>/dev/null)" != "$dav1d_version" ] ||
       ! grep -qxF "prefix=$davdir" "$davdir/lib/pkgconfig/dav1d.pc" 2>/dev/null; then
        log "building dav1d $dav1d_version (static) into $davdir"
        t0=$(date +%s)
        if build_dav1d; then
            log "dav1d built in $(( $(date +%s) - t0 )) s"
        elif [ "$dav1d" = 1 ]; then
            die "VMAF_RS_DAV1D=1 but dav1d could not be built (see above)"
        else
            log "warning: dav1d could not be built: FFmpeg without libdav1d (AV1 decodes only through NVDEC); VMAF_RS_DAV1D=0 to silence this"
        fi
    fi
    if [ -f "$davdir/lib/pkgconfig/dav1d.pc" ]; then
        configure_args+=(--enable-libdav1d --enable-decoder=libdav1d)
    fi
fi

# --- 4. FFmpeg sources ------------------------------------------------------------------------------
set +e
FFMPEG_SRC_DIR=$srcdir "$root/scripts/ffmpeg-apply.sh" --version "$version" >/dev/null
rc=$?
set -e
if [ $rc -ne 0 ]; then
    if [ $rc -eq 3 ]; then
        log "warning: $srcdir holds local changes; building it as it is (scripts/ffmpeg-export.sh turns them into patches)"
    else
        die "could not prepare the FFmpeg sources"
    fi
fi

# --- 5. configure, make, install ------------------------------------------------------------------
export PKG_CONFIG_PATH="$vmafdir/lib/pkgconfig:$nvdir/lib/pkgconfig:$davdir/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
configure_args+=("${extra_args[@]}")
cfg_want=$( { echo "${configure_args[*]}"; echo "prefix $inst"; cat "$vmafdir/lib/pkgconfig/vmaf_rs.pc";
              echo "nv $nv_version"; cat "$nvdir/lib/pkgconfig/ffnvcodec.pc";
              cat "$davdir/lib/pkgconfig/dav1d.pc" 2>/dev/null;
              sha256sum "$srcdir/configure" "$srcdir/libavfilter/allfilters.c"; } | sha)
if [ "$force" = 1 ] || [ "$(cat "$objdir/.vmaf_rs-configure-stamp" 2>/dev/null)" != "$cfg_want" ]; then
    log "configuring FFmpeg $version in $objdir"
    t0=$(date +%s)
    rm -rf "$objdir"
    mkdir -p "$objdir"
    if ! (cd "$objdir" && "$srcdir/configure" --prefix="$inst" "${configure_args[@]}" >configure.out 2>&1); then
        tail -n 30 "$objdir/configure.out" >&2
        [ -f "$objdir/ffbuild/config.log" ] && tail -n 40 "$objdir/ffbuild/config.log" >&2
        die "FFmpeg configure failed (full log: $objdir/ffbuild/config.log)"
    fi
    # A component name configure does not know (a typo, or one that a release lacks) is only a
    # warning there: make it an error, so the build never silently lacks a decoder or filter.
    if grep -i "did not match anything\|unknown option" "$objdir/configure.out" >&2; then
        die "FFmpeg $version configure did not know the options above (FFMPEG_CONFIGURE_EXTRA?)"
    fi
    echo "$cfg_want" > "$objdir/.vmaf_rs-configure-stamp"
    log "configured in $(( $(date +%s) - t0 )) s"
fi

# FFmpeg's makefiles do not know about libvmaf_rs.a: relink the programs when it changed.
lib_sha=$(sha < "$vmafdir/lib/libvmaf_rs.a")
if [ "$(cat "$objdir/.vmaf_rs-lib-sha" 2>/dev/null)" != "$lib_sha" ]; then
    rm -f "$objdir"/ffmpeg "$objdir"/ffmpeg_g "$objdir"/ffprobe "$objdir"/ffprobe_g
fi

log "make -j$jobs (FFmpeg $version)"
t0=$(date +%s)
if ! make -C "$objdir" -j"$jobs" >"$objdir/make.out" 2>&1; then
    grep -E "error|Error" -A3 "$objdir/make.out" | head -n 60 >&2 || tail -n 40 "$objdir/make.out" >&2
    die "FFmpeg make failed (full log: $objdir/make.out)"
fi
make -C "$objdir" install >"$objdir/install.out" 2>&1 || { tail -n 20 "$objdir/install.out" >&2; die "make install failed"; }
echo "$lib_sha" > "$objdir/.vmaf_rs-lib-sha"
if [ -n "$cache" ]; then
    # The programs and libraries into this checkout's prefix; the crate's package and the
    # source tree (a link, for ffmpeg-export.sh and ffmpeg-sync.sh) where scripts look for them.
    mkdir -p "$prefix" && cp -a "$inst/." "$prefix/"
    rm -rf "$root/build/vmaf_rs" && cp -a "$vmafdir" "$root/build/vmaf_rs"
    mkdir -p "$root/build/ffmpeg-src"
    [ -L "$root/build/ffmpeg-src/$version" ] || [ ! -e "$root/build/ffmpeg-src/$version" ] &&
        ln -sfn "$srcdir" "$root/build/ffmpeg-src/$version"
fi
log "make + install in $(( $(date +%s) - t0 )) s"

"$prefix/bin/ffmpeg" -hide_banner -filters 2>/dev/null | grep " vmaf_rs " >/dev/null ||
    die "the built ffmpeg has no vmaf_rs filter"
if [ "$libvmaf_names" = 1 ]; then
    "$prefix/bin/ffmpeg" -hide_banner -filters 2>/dev/null | grep " libvmaf " >/dev/null ||
        die "the built ffmpeg has no libvmaf filter although configured with --enable-vmaf-rs-as-libvmaf"
fi
echo "$want" > "$stamp"
log "done in $(( $(date +%s) - start )) s: $prefix/bin/ffmpeg, $prefix/bin/ffprobe"
