# Sourced by scripts/ffmpeg-*.sh: which FFmpeg release and patch series to use.
#
# Supported release lines: one directory per line under ffmpeg-patches/ (7.1, 8.1, 9.0), each with
#   base    the release the series is made against: version, Debian source version, tarball
#           name and sha256 (checked by scripts/ffmpeg-fetch.sh), libavfilter major version;
#   series  the patches in order, NNNN-*.patch.
#
# ff_resolve VERSION sets:
#   ff_version  full release (7.1.5, 8.1.2, 9.0.2) - a line ("8.1") means its base release
#   ff_line     release line (major.minor) = the patch series directory name
#   ff_patchdir ffmpeg-patches/<line> (or $FFMPEG_PATCH_DIR)
# and fails with the list of supported lines when there is no series for VERSION.
# Set ff_root (the repository root) before sourcing.

ff_default_line=9.0

# Supported lines, in ascending order.
ff_lines() {
    local d
    for d in "$ff_root"/ffmpeg-patches/*/; do
        [ -f "$d/series" ] && [ -f "$d/base" ] && basename "$d"
    done | sort -V
}

# ff_base_field LINE KEY: a value of ffmpeg-patches/LINE/base ("key=value" lines).
ff_base_field() {
    sed -n "s/^$2=//p" "$ff_root/ffmpeg-patches/$1/base" | head -n1
}

ff_resolve() {
    local want=${1:-$ff_default_line}
    case "$want" in
        [0-9]*.[0-9]*.[0-9]*) ff_line=$(echo "$want" | cut -d. -f1-2); ff_version=$want ;;
        [0-9]*.[0-9]*) ff_line=$want; ff_version= ;;
        *) echo "${ff_prog:-ffmpeg}: error: FFmpeg version '$want': expected a release line (e.g. 8.1) or a release (e.g. 8.1.2)" >&2
           return 1 ;;
    esac
    ff_patchdir=${FFMPEG_PATCH_DIR:-$ff_root/ffmpeg-patches/$ff_line}
    if [ ! -f "$ff_patchdir/series" ]; then
        echo "${ff_prog:-ffmpeg}: error: FFmpeg $want is not supported: there is no patch series ffmpeg-patches/$ff_line/ (supported release lines: $(ff_lines | tr '\n' ' ' | sed 's/ $//'))" >&2
        return 1
    fi
    if [ -z "$ff_version" ]; then
        ff_version=$(ff_base_field "$ff_line" version)
        [ -n "$ff_version" ] || { echo "${ff_prog:-ffmpeg}: error: ffmpeg-patches/$ff_line/base names no version" >&2; return 1; }
    fi
}

# ff_series_patches: the patch files of $ff_patchdir/series, in order, one per line (absolute).
ff_series_patches() {
    local p
    while IFS= read -r p || [ -n "$p" ]; do
        p=${p%%#*}; p=$(echo "$p" | tr -d '[:space:]')
        [ -n "$p" ] || continue
        echo "$ff_patchdir/$p"
    done < "$ff_patchdir/series"
}

# ff_series_hash: identity of the series' content (names and bytes).
ff_series_hash() {
    local p
    while IFS= read -r p; do
        echo "$(basename "$p") $(sha256sum < "$p" | cut -d' ' -f1)"
    done < <(ff_series_patches) | sha256sum | cut -d' ' -f1
}

# ff_tree_release DIR: the release an FFmpeg source tree declares: VERSION (release tarballs)
# or else RELEASE (git checkouts: "8.1.2" on a release tag or branch, "8.1.git" / "9.1.git" on
# master between releases).
ff_tree_release() {
    local v
    for f in VERSION RELEASE; do
        if [ -f "$1/$f" ]; then
            v=$(head -n1 "$1/$f" | tr -d '[:space:]')
            [ -n "$v" ] && { echo "$v"; return 0; }
        fi
    done
    return 1
}

# ff_tree_libavfilter_major DIR: LIBAVFILTER_VERSION_MAJOR of a source tree.
ff_tree_libavfilter_major() {
    sed -n 's/^#define LIBAVFILTER_VERSION_MAJOR *\([0-9]*\).*/\1/p' \
        "$1/libavfilter/version_major.h" "$1/libavfilter/version.h" 2>/dev/null | head -n1 || true
}
