#!/usr/bin/env bash
# Maintainer check of the FFmpeg patch series (use it after editing a series or when refreshing
# onto a new release). For each supported release line (or the ones named):
#   1. the series applies cleanly (git apply: exact context, no fuzz, no rejects) to the
#      pristine release tree, in a scratch directory;
#   2. the configure wiring is present (options, external library, filter deps, pkg-config
#      check, Makefile, allfilters.c) and configure's filter discovery finds the filters;
#   3. the files every series shares (libavfilter/vf_vmaf_rs.c, the filters.texi section) are
#      identical to the default series' (scripts/ffmpeg-sync.sh);
#   4. it builds (scripts/ffmpeg-build.sh --version <line>, cached), and the built ffmpeg lists
#      the vmaf_rs filter with all its options and inputs, and the libvmaf / libvmaf_cuda names
#      with libvmaf's options.
#
# Usage: scripts/ffmpeg-check.sh [--no-build] [LINE...]     (LINE: 7.1, 8.1, 9.0; default all)
#   --no-build  skip building; step 4 then checks an existing build, or is skipped
# Environment: FFMPEG_SOURCE (see ffmpeg-fetch.sh, for a single line), VMAF_RS_CUDA (see
#   ffmpeg-build.sh).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
ff_root=$root ff_prog=ffmpeg-check
. "$root/scripts/ffmpeg-common.sh"
build=1
lines=()
for a in "$@"; do
    case "$a" in
        --no-build) build=0 ;;
        --build) build=1 ;;  # the default; kept for older instructions
        -*) echo "ffmpeg-check: error: unknown option $a" >&2; exit 1 ;;
        *) lines+=("$a") ;;
    esac
done
[ ${#lines[@]} -gt 0 ] || mapfile -t lines < <(ff_lines)
fail=0
summary=()

ok()  { echo "ok   $*"; }
bad() { echo "FAIL $*"; fail=1; line_fail=1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

for want in "${lines[@]}"; do
    ff_resolve "$want" || exit 1
    line=$ff_line version=$ff_version line_fail=0
    echo "== FFmpeg $version (ffmpeg-patches/$line)"
    if [ "$line" = "$ff_default_line" ]; then prefix=$root/build/ffmpeg; else prefix=$root/build/ffmpeg-$version; fi

    # 1. Apply to a pristine tree with git apply, which refuses fuzz and offsets nothing silently.
    src=$("$root/scripts/ffmpeg-fetch.sh" --version "$version" ffmpeg)
    t=$tmp/$version
    mkdir -p "$t"
    if [ -d "$src" ]; then
        tar -C "$src" --exclude=.git -cf - . | tar -C "$t" --no-same-owner -xf -
    else
        tar -C "$t" --no-same-owner --strip-components=1 -xf "$src"
    fi
    mapfile -t patches < <(ff_series_patches)
    for p in "${patches[@]}"; do
        if [ ! -f "$p" ]; then bad "series names missing file $(basename "$p")"; continue; fi
        if out=$(cd "$t" && git apply --check --verbose "$p" 2>&1) && (cd "$t" && git apply "$p" 2>/dev/null); then
            ok "applies cleanly: $(basename "$p")"
        else
            bad "does not apply: $(basename "$p")"; echo "$out" | sed 's/^/     /'
            break
        fi
    done
    for f in "$ff_patchdir"/[0-9][0-9][0-9][0-9]-*.patch; do
        grep -qxF "$(basename "$f")" "$ff_patchdir/series" || bad "$(basename "$f") is not listed in series"
    done

    # 2. The wiring, as configure and the build system see it.
    lavfi=$(ff_base_field "$line" libavfilter)
    if [ "${lavfi:-0}" -ge 11 ]; then ftype=FFFilter; else ftype=AVFilter; fi
    [ "$(ff_tree_libavfilter_major "$t")" = "$lavfi" ] && ok "libavfilter $lavfi, as ffmpeg-patches/$line/base says" || bad "the release has libavfilter $(ff_tree_libavfilter_major "$t"), ffmpeg-patches/$line/base says $lavfi"
    grep -q '^    libvmaf_rs$' "$t/configure"                         && ok "configure: EXTERNAL_LIBRARY_LIST has libvmaf_rs" || bad "configure: libvmaf_rs not in EXTERNAL_LIBRARY_LIST"
    grep -q -- '--enable-libvmaf-rs ' "$t/configure"                   && ok "configure: --enable-libvmaf-rs help line"      || bad "configure: no --enable-libvmaf-rs help line"
    grep -q '^vmaf_rs_filter_deps="libvmaf_rs"$' "$t/configure"        && ok "configure: vmaf_rs_filter_deps"                || bad "configure: no vmaf_rs_filter_deps"
    grep -q 'require_pkg_config libvmaf_rs vmaf_rs vmaf_rs.h vmaf_rs_new' "$t/configure" && ok "configure: require_pkg_config" || bad "configure: no require_pkg_config for vmaf_rs"
    grep -q 'CONFIG_VMAF_RS_FILTER.*vf_vmaf_rs.o' "$t/libavfilter/Makefile" && ok "libavfilter/Makefile"                     || bad "libavfilter/Makefile lacks vf_vmaf_rs.o"
    grep -q "^extern const $ftype ff_vf_vmaf_rs;" "$t/libavfilter/allfilters.c" && ok "libavfilter/allfilters.c ($ftype)"   || bad "libavfilter/allfilters.c lacks 'extern const $ftype ff_vf_vmaf_rs;'"
    grep -q '^@section vmaf_rs' "$t/doc/filters.texi"                  && ok "doc/filters.texi"                              || bad "doc/filters.texi lacks the vmaf_rs section"
    # The libvmaf names: the switch, its dependencies, two more filter entries.
    grep -q -- '--enable-vmaf-rs-as-libvmaf ' "$t/configure" && grep -q '^    vmaf_rs_as_libvmaf$' "$t/configure" &&
        ok "configure: --enable-vmaf-rs-as-libvmaf (help line, CONFIG_LIST)" || bad "configure: no --enable-vmaf-rs-as-libvmaf switch"
    grep -q '^vmaf_rs_as_libvmaf_deps="libvmaf_rs"$' "$t/configure" && grep -q '^vmaf_rs_as_libvmaf_conflict="libvmaf"$' "$t/configure" &&
        grep -q '^enabled vmaf_rs_as_libvmaf && enable vmaf_rs_libvmaf_filter vmaf_rs_libvmaf_cuda_filter$' "$t/configure" &&
        ok "configure: the switch needs libvmaf_rs, conflicts with libvmaf, enables the two filters" || bad "configure: the switch's dependencies are incomplete"
    grep -q 'CONFIG_VMAF_RS_LIBVMAF_FILTER.*vf_vmaf_rs.o' "$t/libavfilter/Makefile" && grep -q 'CONFIG_VMAF_RS_LIBVMAF_CUDA_FILTER.*vf_vmaf_rs.o' "$t/libavfilter/Makefile" &&
        ok "libavfilter/Makefile: the libvmaf-named filters" || bad "libavfilter/Makefile lacks the libvmaf-named filters"
    # configure's own filter discovery (find_filters_extern) must find the filters.
    found=$(sed -n "s/^extern const $ftype ff_[avfsinkrc]\{2,5\}_\([[:alnum:]_]\{1,\}\);/\1_filter/p" "$t/libavfilter/allfilters.c")
    for f in vmaf_rs_filter vmaf_rs_libvmaf_filter vmaf_rs_libvmaf_cuda_filter; do
        echo "$found" | grep -x "$f" >/dev/null && ok "configure discovers $f" || bad "configure's filter regex does not find $f in libavfilter/allfilters.c"
    done

    # 3. Shared content.
    if [ "$line" != "$ff_default_line" ]; then
        if out=$("$root/scripts/ffmpeg-sync.sh" --compare "$ff_default_line" "$line" 2>&1); then
            ok "vf_vmaf_rs.c and the filters.texi section are those of the $ff_default_line series"
        else
            bad "shared files differ from the $ff_default_line series (scripts/ffmpeg-sync.sh --from <line>):"
            echo "$out" | head -n 40 | sed 's/^/     /'
        fi
    fi

    # 4. Build and inspect.
    if [ $build = 1 ]; then
        t0=$(date +%s)
        if "$root/scripts/ffmpeg-build.sh" --version "$version" > "$tmp/build-$version.log" 2>&1; then
            ok "builds ($(( $(date +%s) - t0 )) s; $(grep -c 'warning: ' "$root/build/ffmpeg-obj/$version/make.out" 2>/dev/null || echo 0) compiler warnings in make.out)"
            if grep -q "holds local changes" "$tmp/build-$version.log"; then
                bad "build/ffmpeg-src/$version holds local changes: the build is not of the committed series (export or discard them)"
            fi
            grep -E "vf_vmaf_rs\.c:[0-9]+:[0-9]+: warning" "$root/build/ffmpeg-obj/$version/make.out" | sed 's/^/     /' || true
        else
            bad "does not build:"; tail -n 30 "$tmp/build-$version.log" | sed 's/^/     /'
        fi
    fi
    ffmpeg=$prefix/bin/ffmpeg
    if [ -x "$ffmpeg" ]; then
        help=$("$ffmpeg" -hide_banner -h filter=vmaf_rs 2>&1 || true)
        if echo "$help" | grep "^Filter vmaf_rs" >/dev/null; then
            ok "$ffmpeg has the vmaf_rs filter"
            missing=
            for o in model feature log_path log_fmt pool n_threads n_subsample backend libvmaf_isa \
                     eof_action shortest repeatlast ts_sync_mode; do
                echo "$help" | grep -E "^ +$o +<" >/dev/null || missing="$missing $o"
            done
            [ -z "$missing" ] && ok "vmaf_rs options" || bad "options missing from -h filter=vmaf_rs:$missing"
            echo "$help" | grep "#0: main (video)" >/dev/null && echo "$help" | grep "#1: reference (video)" >/dev/null &&
                ok "inputs main, reference" || bad "inputs are not main, reference"
        else
            bad "$ffmpeg has no vmaf_rs filter"; echo "$help" | head -5 | sed 's/^/     /'
        fi
        buildconf=$("$ffmpeg" -hide_banner -buildconf 2>/dev/null || true)
        if echo "$buildconf" | grep -- '--enable-vmaf-rs-as-libvmaf' >/dev/null; then
            for name in libvmaf libvmaf_cuda; do
                help=$("$ffmpeg" -hide_banner -h filter=$name 2>&1 || true)
                missing= extra=
                for o in model feature log_path log_fmt pool n_threads n_subsample \
                         eof_action shortest repeatlast ts_sync_mode; do
                    echo "$help" | grep -E "^ +$o +<" >/dev/null || missing="$missing $o"
                done
                for o in backend libvmaf_isa; do
                    echo "$help" | grep -E "^ +$o +<" >/dev/null && extra="$extra $o"
                done
                if ! echo "$help" | grep "^Filter $name" >/dev/null; then
                    bad "built with --enable-vmaf-rs-as-libvmaf but has no $name filter"
                elif [ -n "$missing$extra" ]; then
                    bad "$name: options missing:${missing:- none}; not libvmaf's:${extra:- none}"
                else
                    ok "$name: vmaf_rs under libvmaf's name, with exactly libvmaf's options"
                fi
            done
        fi
    else
        echo "skip no ffmpeg build at $ffmpeg (run without --no-build)"
    fi
    summary+=("FFmpeg $version: $( [ $line_fail = 0 ] && echo ok || echo FAILED )")
done

echo
printf '%s\n' "${summary[@]}"
if [ $fail = 0 ]; then echo "ffmpeg-check: all good"; else echo "ffmpeg-check: FAILED"; fi
exit $fail
