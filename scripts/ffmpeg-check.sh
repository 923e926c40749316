#!/usr/bin/env bash
# Maintainer check of the FFmpeg patch series (use it when refreshing onto a new release):
#   1. the series applies cleanly (git apply: exact context, no fuzz, no rejects) to
#      the pristine release tree, in a scratch directory;
#   2. the configure wiring is present (option, external library, filter deps, pkg-config check);
#   3. a built ffmpeg (build/ffmpeg/bin/ffmpeg, or $FFMPEG) lists the vmaf_rs filter and all its
#      options in `ffmpeg -h filter=vmaf_rs`.
#
# Usage: scripts/ffmpeg-check.sh [--build]
#   --build  run scripts/ffmpeg-build.sh first (otherwise step 3 is skipped when no build exists)
# Environment: FFMPEG_VERSION (default 9.0.2), FFMPEG_SOURCE, FFMPEG=<path to ffmpeg>.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
version=${FFMPEG_VERSION:-9.0.2}
line=$(echo "$version" | cut -d. -f1-2)
patchdir=$root/ffmpeg-patches/$line
ffmpeg=${FFMPEG:-$root/build/ffmpeg/bin/ffmpeg}
fail=0

ok()  { echo "ok   $*"; }
bad() { echo "FAIL $*"; fail=1; }

if [ "${1:-}" = "--build" ]; then
    "$root/scripts/ffmpeg-build.sh"
fi

# 1. Apply to a pristine tree with git apply, which refuses fuzz and offsets nothing silently.
src=$("$root/scripts/ffmpeg-fetch.sh" ffmpeg)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [ -d "$src" ]; then
    mkdir "$tmp/tree" && tar -C "$src" --exclude=.git -cf - . | tar -C "$tmp/tree" --no-same-owner -xf -
else
    tar -C "$tmp" --no-same-owner -xf "$src" && mv "$tmp"/ffmpeg-* "$tmp/tree"
fi
while IFS= read -r p || [ -n "$p" ]; do
    p=${p%%#*}; p=$(echo "$p" | tr -d '[:space:]'); [ -n "$p" ] || continue
    if [ ! -f "$patchdir/$p" ]; then bad "series names missing file $p"; continue; fi
    if out=$(cd "$tmp/tree" && git apply --check --verbose "$patchdir/$p" 2>&1) &&
       (cd "$tmp/tree" && git apply "$patchdir/$p" 2>/dev/null); then
        ok "applies cleanly: $p"
    else
        bad "does not apply: $p"; echo "$out" | sed 's/^/     /'
        break
    fi
done < "$patchdir/series"
for f in "$patchdir"/[0-9][0-9][0-9][0-9]-*.patch; do
    grep -qxF "$(basename "$f")" "$patchdir/series" || bad "$(basename "$f") is not listed in series"
done

# 2. The wiring, as configure and the build system see it.
t=$tmp/tree
grep -q '^    libvmaf_rs$' "$t/configure"                         && ok "configure: EXTERNAL_LIBRARY_LIST has libvmaf_rs" || bad "configure: libvmaf_rs not in EXTERNAL_LIBRARY_LIST"
grep -q -- '--enable-libvmaf-rs' "$t/configure"                    && ok "configure: --enable-libvmaf-rs help line"      || bad "configure: no --enable-libvmaf-rs help line"
grep -q '^vmaf_rs_filter_deps="libvmaf_rs"$' "$t/configure"        && ok "configure: vmaf_rs_filter_deps"                || bad "configure: no vmaf_rs_filter_deps"
grep -q 'require_pkg_config libvmaf_rs vmaf_rs vmaf_rs.h vmaf_rs_new' "$t/configure" && ok "configure: require_pkg_config" || bad "configure: no require_pkg_config for vmaf_rs"
grep -q 'CONFIG_VMAF_RS_FILTER.*vf_vmaf_rs.o' "$t/libavfilter/Makefile" && ok "libavfilter/Makefile"                     || bad "libavfilter/Makefile lacks vf_vmaf_rs.o"
grep -q '^extern const FFFilter ff_vf_vmaf_rs;' "$t/libavfilter/allfilters.c" && ok "libavfilter/allfilters.c"          || bad "libavfilter/allfilters.c lacks ff_vf_vmaf_rs"
grep -q '^@section vmaf_rs' "$t/doc/filters.texi"                  && ok "doc/filters.texi"                              || bad "doc/filters.texi lacks the vmaf_rs section"
# configure's own filter discovery must find the filter.
if (cd "$t" && sed -n 's/^extern const FFFilter ff_[avfsinkrc]\{2,5\}_\([[:alnum:]_]\{1,\}\);/\1_filter/p' \
        libavfilter/allfilters.c | grep -x vmaf_rs_filter >/dev/null); then
    ok "configure discovers vmaf_rs_filter"
else
    bad "configure's filter regex does not find vmaf_rs"
fi

# 3. The built filter and its options.
if [ -x "$ffmpeg" ]; then
    help=$("$ffmpeg" -hide_banner -h filter=vmaf_rs 2>&1 || true)
    if echo "$help" | grep "^Filter vmaf_rs" >/dev/null; then
        ok "$ffmpeg has the vmaf_rs filter"
        for o in model feature log_path log_fmt pool n_threads n_subsample backend \
                 eof_action shortest repeatlast ts_sync_mode; do
            echo "$help" | grep -E "^ +$o +<" >/dev/null && ok "option $o" || bad "option $o missing from -h filter=vmaf_rs"
        done
        echo "$help" | grep "#0: main (video)" >/dev/null && echo "$help" | grep "#1: reference (video)" >/dev/null &&
            ok "inputs main, reference" || bad "inputs are not main, reference"
    else
        bad "$ffmpeg has no vmaf_rs filter"; echo "$help" | head -5 | sed 's/^/     /'
    fi
else
    echo "skip no ffmpeg build at $ffmpeg (run scripts/ffmpeg-build.sh or pass --build)"
fi

if [ $fail = 0 ]; then echo "ffmpeg-check: all good (FFmpeg $version)"; else echo "ffmpeg-check: FAILED"; fi
exit $fail
