#!/usr/bin/env bash
# Fetches the pristine sources the FFmpeg build needs into build/cache/ and checks their sha256:
#   - the FFmpeg release tarball (official release, shipped as Debian's ffmpeg_<ver>.orig.tar.xz),
#   - nv-codec-headers (Debian 12's libffmpeg-nvenc-dev is too old for FFmpeg >= 7.1);
#   - dav1d (AV1 decoding; Debian ships no static library, so scripts/ffmpeg-build.sh builds one).
#
# Usage: scripts/ffmpeg-fetch.sh [--version 7.1|8.1|9.0|<release>] [all|ffmpeg|nv-codec-headers|dav1d]
#   Prints the path of each requested source on stdout (a tarball, or a directory when one was
#   supplied), one per line, in the order ffmpeg, nv-codec-headers. Progress goes to stderr.
#   The releases, their Debian source versions and sha256 sums are recorded in
#   ffmpeg-patches/<line>/base (one per supported release line).
#
# Environment:
#   FFMPEG_VERSION=9.0                   release line or release (as --version; default 9.0)
#   FFMPEG_SOURCE=<tarball|dir>          use this FFmpeg source instead of downloading; a tarball
#                                        is checked against the recorded sha256 (a directory is not)
#   NV_CODEC_HEADERS_SOURCE=<tarball|dir> the same for nv-codec-headers
#   DAV1D_SOURCE=<tarball|dir>           the same for dav1d
#   VMAF_RS_SKIP_SHA256=1                accept a supplied tarball whose sha256 is not recorded
#
# Downloads go through apt (`apt-get source --download-only`). When apt knows no deb-src entry
# that carries the package, one is added for bookworm, trixie and sid, derived from the mirror the
# machine already uses (/etc/apt/sources.list.d/debian.sources or /etc/apt/sources.list; apt's
# Dir::Etc settings are honoured); this needs root (or sudo). No host name is written into this
# repository.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
ff_root=$root ff_prog=ffmpeg-fetch
. "$root/scripts/ffmpeg-common.sh"
cache="$root/build/cache"
want_version=${FFMPEG_VERSION:-}
if [ "${1:-}" = "--version" ]; then
    want_version=${2:?--version needs a value}; shift 2
fi
what=${1:-all}
# nv-codec-headers 12.1.14.0: sha256 of nv-codec-headers_12.1.14.0.orig.tar.xz (from its .dsc).
nv_version=12.1.14.0
nv_debian_version=12.1.14.0-1
nv_sha256=0ca1a0c85b149646fa6ce4d600584507fdccf5a23d58e668d8701e89cee0c3fb
# dav1d 1.0.0 (Debian 12): sha256 of dav1d_1.0.0.orig.tar.xz (from the Debian Sources index).
dav1d_version=1.0.0
dav1d_debian_version=1.0.0-2+deb12u1
dav1d_sha256=51737db7e4897e599684f873a4725176dd3c779e639411d7c4fce134bb5ebb82

log() { echo "ffmpeg-fetch: $*" >&2; }
die() { echo "ffmpeg-fetch: error: $*" >&2; exit 1; }

sha256_of() { sha256sum "$1" | cut -d' ' -f1; }

as_root() {
    if [ "$(id -u)" -eq 0 ]; then "$@"
    elif command -v sudo >/dev/null; then sudo "$@"
    else die "need root to run: $* (or supply the source with FFMPEG_SOURCE / NV_CODEC_HEADERS_SOURCE)"
    fi
}

# True when apt knows source package $1 at exactly version $2.
apt_knows_source() {
    apt-cache showsrc "$1" 2>/dev/null | grep -xF "Version: $2" >/dev/null  # no -q: SIGPIPE + pipefail
}

# apt's source list locations (normally /etc/apt/sources.list and /etc/apt/sources.list.d/).
apt_dirs() {
    APT_SOURCEPARTS=/etc/apt/sources.list.d/ APT_SOURCELIST=/etc/apt/sources.list
    if command -v apt-config >/dev/null; then
        eval "$(apt-config shell APT_SOURCEPARTS Dir::Etc::sourceparts/d APT_SOURCELIST Dir::Etc::sourcelist/f)"
    fi
    APT_SOURCEPARTS=${APT_SOURCEPARTS%/}
}

# Prints "URI SIGNED_BY" of the first Debian archive entry on this machine (not -security),
# from deb822 or one-line sources.
debian_mirror() {
    local f
    for f in "$APT_SOURCEPARTS"/debian.sources "$APT_SOURCEPARTS"/*.sources; do
        [ -f "$f" ] || continue
        awk '
            function flush() {
                if (uri != "" && suites ~ /(bookworm|trixie|forky|sid|stable|testing|unstable)/ &&
                    suites !~ /security/ && types ~ /deb/ && !done) {
                    print uri, (signed == "" ? "-" : signed); done = 1
                }
                uri = ""; suites = ""; types = ""; signed = ""
            }
            /^[[:space:]]*$/ { flush(); next }
            /^[[:space:]]*#/ { next }
            tolower($1) == "uris:"      { uri = $2 }
            tolower($1) == "suites:"    { $1 = ""; suites = $0 }
            tolower($1) == "types:"     { $1 = ""; types = $0 }
            tolower($1) == "signed-by:" { signed = $2 }
            END { flush() }
        ' "$f" | head -n1 | grep . && return 0
    done
    if [ -f "$APT_SOURCELIST" ]; then
        awk '$1 == "deb" && $0 !~ /security/ &&
             $0 ~ /[[:space:]](bookworm|trixie|forky|sid|stable|testing|unstable)[[:space:]]/ {
                 for (i = 2; i <= NF; i++) if ($i ~ /^[a-z]+:\/\//) { print $i, "-"; exit }
             }' "$APT_SOURCELIST" | grep . && return 0
    fi
    return 1
}

# Makes sure apt can fetch source package $1=$2: apt-get update if some deb-src entry exists,
# otherwise (or if that is not enough) add one for bookworm, trixie and sid derived from the
# machine's Debian mirror.
ensure_deb_src() {
    local pkg=$1 ver=$2
    apt_knows_source "$pkg" "$ver" && return 0
    command -v apt-get >/dev/null || die "apt-get not found; supply the source with FFMPEG_SOURCE / NV_CODEC_HEADERS_SOURCE"
    apt_dirs
    if grep -qsE '^[[:space:]]*(Types:.*deb-src|deb-src[[:space:]])' "$APT_SOURCELIST" \
            "$APT_SOURCEPARTS"/*.sources "$APT_SOURCEPARTS"/*.list; then
        log "apt-get update (refreshing deb-src indexes)"
        as_root apt-get update -qq >&2 || log "apt-get update reported errors (continuing)"
        apt_knows_source "$pkg" "$ver" && return 0
    fi
    local listfile=$APT_SOURCEPARTS/vmaf-rs-deb-src.sources
    if [ ! -f "$listfile" ]; then
        local mirror uri signed
        mirror=$(debian_mirror) || die "no Debian mirror found in $APT_SOURCEPARTS/*.sources or $APT_SOURCELIST"
        uri=${mirror% *}; signed=${mirror#* }
        [ "$signed" != "-" ] || signed=/usr/share/keyrings/debian-archive-keyring.gpg
        log "adding deb-src entry (bookworm trixie sid) for the machine's mirror: $listfile"
        printf 'Types: deb-src\nURIs: %s\nSuites: bookworm trixie sid\nComponents: main\nSigned-By: %s\n' \
            "$uri" "$signed" | as_root tee "$listfile" >/dev/null
    fi
    log "apt-get update"
    as_root apt-get update -qq >&2 || log "apt-get update reported errors (continuing)"
    apt_knows_source "$pkg" "$ver" || die "apt does not know source package $pkg=$ver; supply it with FFMPEG_SOURCE / NV_CODEC_HEADERS_SOURCE"
}

# fetch_apt PKG DEBVER FILE SHA256: leaves $cache/FILE (checked) and prints its path.
fetch_apt() {
    local pkg=$1 debver=$2 file=$3 sum=$4
    local dest="$cache/$file"
    if [ -f "$dest" ] && [ "$(sha256_of "$dest")" = "$sum" ]; then
        echo "$dest"; return 0
    fi
    rm -f "$dest"
    mkdir -p "$cache"
    ensure_deb_src "$pkg" "$debver"
    local tmp
    tmp=$(mktemp -d "$cache/apt.XXXXXX")
    log "apt-get source --download-only $pkg=$debver"
    # apt-get exits 100 when the .dsc or the debian tarball is missing from the mirror, even though
    # the orig tarball (all we need) arrived: judge by the file, not by the exit code.
    (cd "$tmp" && apt-get source --download-only "$pkg=$debver" >&2) || true
    if [ ! -f "$tmp/$file" ]; then
        rm -rf "$tmp"
        die "apt-get source did not deliver $file"
    fi
    local got
    got=$(sha256_of "$tmp/$file")
    if [ "$got" != "$sum" ]; then
        rm -rf "$tmp"
        die "$file: sha256 $got, expected $sum"
    fi
    mv "$tmp/$file" "$dest"
    rm -rf "$tmp"
    log "$file: sha256 ok"
    echo "$dest"
}

# use_supplied PATH SHA256 NAME: a user-supplied tarball (checked) or directory.
use_supplied() {
    local path=$1 sum=$2 name=$3
    [ -e "$path" ] || die "$name source $path does not exist"
    path=$(cd "$(dirname "$path")" && echo "$PWD/$(basename "$path")")
    if [ -d "$path" ]; then
        log "using $name source directory $path (not checksummed)"
    else
        local got
        got=$(sha256_of "$path")
        if [ "$got" != "$sum" ]; then
            [ "${VMAF_RS_SKIP_SHA256:-0}" = 1 ] || die "$path: sha256 $got, expected $sum (VMAF_RS_SKIP_SHA256=1 to accept it)"
            log "$path: sha256 $got not the recorded one; accepted (VMAF_RS_SKIP_SHA256=1)"
        fi
    fi
    echo "$path"
}

fetch_ffmpeg() {
    local debver sum file
    ff_resolve "$want_version" || exit 1
    if [ "$ff_version" = "$(ff_base_field "$ff_line" version)" ]; then
        debver=$(ff_base_field "$ff_line" debian)
        file=$(ff_base_field "$ff_line" file)
        sum=$(ff_base_field "$ff_line" sha256)
        [ -n "$debver" ] && [ -n "$file" ] && [ -n "$sum" ] || die "ffmpeg-patches/$ff_line/base lacks debian=, file= or sha256="
    else
        # Another release of a supported line: usable from a supplied source only.
        [ -n "${FFMPEG_SOURCE:-}" ] || die "FFmpeg $ff_version: no recorded tarball (ffmpeg-patches/$ff_line/base records $(ff_base_field "$ff_line" version)); supply it with FFMPEG_SOURCE=<tarball|dir> (and VMAF_RS_SKIP_SHA256=1 for a tarball)"
        sum=unrecorded
    fi
    if [ -n "${FFMPEG_SOURCE:-}" ]; then
        use_supplied "$FFMPEG_SOURCE" "$sum" FFmpeg
    else
        fetch_apt ffmpeg "$debver" "$file" "$sum"
    fi
}

fetch_nv() {
    if [ -n "${NV_CODEC_HEADERS_SOURCE:-}" ]; then
        use_supplied "$NV_CODEC_HEADERS_SOURCE" "$nv_sha256" nv-codec-headers
    else
        fetch_apt nv-codec-headers "$nv_debian_version" "nv-codec-headers_$nv_version.orig.tar.xz" "$nv_sha256"
    fi
}

fetch_dav1d() {
    if [ -n "${DAV1D_SOURCE:-}" ]; then
        use_supplied "$DAV1D_SOURCE" "$dav1d_sha256" dav1d
    else
        fetch_apt dav1d "$dav1d_debian_version" "dav1d_$dav1d_version.orig.tar.xz" "$dav1d_sha256"
    fi
}

case "$what" in
    all) fetch_ffmpeg; fetch_nv; fetch_dav1d ;;
    ffmpeg) fetch_ffmpeg ;;
    nv-codec-headers) fetch_nv ;;
    dav1d) fetch_dav1d ;;
    *) die "usage: $0 [--version 7.1|8.1|9.0|<release>] [all|ffmpeg|nv-codec-headers|dav1d]" ;;
esac
