# Sourced by scripts/ffmpeg-build.sh and scripts/install.sh: the crate's C library as FFmpeg (or
# any C program) links it. The caller defines log() and die() and sets vr_root (the repository
# root) before sourcing.
#
#   vr_resolve_cuda MODE       MODE auto|1|0 (VMAF_RS_CUDA); sets vr_cuda to 1 or 0. auto: 1 when
#                              nvcc is found (NVCC, build/cuda-venv, PATH, /usr/local/cuda) or can
#                              be installed by scripts/cuda-toolchain.sh (pip), else 0 with a
#                              warning; 1: fails without nvcc.
#   vr_build_staticlib CUDA LIBDIR INCDIR
#                              builds libvmaf_rs.a (features capi, plus cuda when CUDA is 1) and
#                              copies it and vmaf_rs.h there; sets vr_native_libs (the system
#                              libraries a static link needs, as rustc prints them).
#   vr_write_pc PREFIX NATIVE_LIBS DEST
#                              writes vmaf_rs.pc for PREFIX/{include,lib} to DEST.
#   vr_install_if_changed SRC DEST
#                              copies unless identical (keeps mtimes, so make rebuilds nothing).

vr_install_if_changed() {
    mkdir -p "$(dirname "$2")"
    cmp -s "$1" "$2" || cp "$1" "$2"
}

vr_find_nvcc() {
    local c
    for c in "${NVCC:-}" "$vr_root"/build/cuda-venv/lib/python3*/site-packages/nvidia/cu13/bin/nvcc \
             "$(command -v nvcc 2>/dev/null || true)" /usr/local/cuda/bin/nvcc; do
        [ -n "$c" ] && [ -x "$c" ] && { echo "$c"; return 0; }
    done
    return 1
}

vr_resolve_cuda() {
    local mode=$1 nvcc_path=
    case "$mode" in auto|0|1) ;; *) die "VMAF_RS_CUDA=$mode (expected auto, 1 or 0)" ;; esac
    vr_cuda=0
    [ "$mode" = 0 ] && return 0
    if ! nvcc_path=$(vr_find_nvcc); then
        log "no nvcc found: installing CUDA 13.0's compiler with scripts/cuda-toolchain.sh (pip)"
        nvcc_path=$("$vr_root/scripts/cuda-toolchain.sh") || nvcc_path=
    fi
    if [ -n "$nvcc_path" ]; then
        vr_cuda=1
    elif [ "$mode" = 1 ]; then
        die "VMAF_RS_CUDA=1 but nvcc could not be found or installed (scripts/cuda-toolchain.sh); set NVCC=/path/to/nvcc"
    else
        log "warning: no nvcc: building vmaf_rs WITHOUT its CUDA backend (CUDA frames are refused with a clear message); set NVCC or run scripts/cuda-toolchain.sh, or VMAF_RS_CUDA=0 to silence this"
    fi
}

vr_build_staticlib() {
    local cuda=$1 libdir=$2 incdir=$3 features=capi t0 cargo_log target_dir
    command -v cargo >/dev/null || die "cargo not found: install Rust (https://rustup.rs), then rerun"
    [ "$cuda" = 1 ] && features=capi,cuda
    target_dir=${CARGO_TARGET_DIR:-$vr_root/target}
    log "building the vmaf_rs static library (cargo, features: $features)"
    t0=$(date +%s)
    cargo_log=$(mktemp)
    # One build that also prints the native libraries the staticlib needs (cargo replays the
    # note when the build is fresh).
    if ! cargo rustc --manifest-path "$vr_root/Cargo.toml" --release --lib --no-default-features \
            --features "$features" -- --print native-static-libs >"$cargo_log" 2>&1; then
        cat "$cargo_log" >&2
        rm -f "$cargo_log"
        die "cargo build failed"
    fi
    grep -v "native-static-libs\|link against the following native" "$cargo_log" | grep -v '^$' >&2 || true
    vr_native_libs=$(sed -n 's/.*note: native-static-libs: //p' "$cargo_log" | tail -n1)
    rm -f "$cargo_log"
    [ -n "$vr_native_libs" ] || die "cargo did not print the native static libraries (try: cargo clean -p vmaf_rs --release)"
    vr_install_if_changed "$target_dir/release/libvmaf_rs.a" "$libdir/libvmaf_rs.a"
    vr_install_if_changed "$vr_root/include/vmaf_rs.h" "$incdir/vmaf_rs.h"
    log "crate built in $(( $(date +%s) - t0 )) s; native libs: $vr_native_libs"
}

vr_write_pc() {
    local prefix=$1 native=$2 dest=$3 version tmp
    version=$(sed -n 's/^version *= *"\(.*\)"/\1/p' "$vr_root/Cargo.toml" | head -n1)
    tmp=$(mktemp)
    cat > "$tmp" <<PC
prefix=$prefix
includedir=\${prefix}/include
libdir=\${prefix}/lib

Name: vmaf_rs
Description: VMAF in Rust (libvmaf-compatible scores), C ABI for FFmpeg's vmaf_rs filter
Version: ${version:-0}
Libs: -L\${libdir} -lvmaf_rs $native
Cflags: -I\${includedir}
PC
    vr_install_if_changed "$tmp" "$dest"
    rm -f "$tmp"
}
