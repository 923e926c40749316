#!/usr/bin/env bash
# Unpacks the pristine FFmpeg release into build/ffmpeg-src/<version> and applies our patch series
# (ffmpeg-patches/<major.minor>/series). Prints the tree's path on stdout.
#
# Usage: scripts/ffmpeg-apply.sh [--force]
#   --force  recreate the tree even if it holds local changes (they are lost)
#
# Environment: FFMPEG_VERSION (default 9.0.2), FFMPEG_SOURCE (see ffmpeg-fetch.sh),
#   FFMPEG_SRC_DIR=<dir>  unpack there instead of build/ffmpeg-src/<version>
#   FFMPEG_PATCH_DIR=<dir> use this patch series instead of ffmpeg-patches/<major.minor>
#
# When git is available the tree is a git repository: one commit with the pristine release (tag
# `pristine`) and one commit per patch (git am), so that scripts/ffmpeg-export.sh can regenerate
# the patch files after you edit the tree. Without git the patches are applied with patch(1).
# Any rejected hunk is an error. A tree already holding exactly this release and series is left
# as it is ("up to date"); a tree with local changes is never overwritten without --force (exit
# status 3).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
force=0
[ "${1:-}" = "--force" ] && force=1

version=${FFMPEG_VERSION:-9.0.2}
line=$(echo "$version" | cut -d. -f1-2)
patchdir=${FFMPEG_PATCH_DIR:-$root/ffmpeg-patches/$line}
dest=${FFMPEG_SRC_DIR:-$root/build/ffmpeg-src/$version}

log() { echo "ffmpeg-apply: $*" >&2; }
die() { echo "ffmpeg-apply: error: $*" >&2; exit 1; }
# Exit status 3: the tree holds local work that this script will not overwrite.
die_local() { echo "ffmpeg-apply: error: $*" >&2; exit 3; }

[ -f "$patchdir/series" ] || die "no patch series for FFmpeg $line: $patchdir/series"

# The patches, in series order (blank lines and # comments ignored).
patches=()
while IFS= read -r p || [ -n "$p" ]; do
    p=${p%%#*}; p=$(echo "$p" | tr -d '[:space:]')
    [ -n "$p" ] || continue
    [ -f "$patchdir/$p" ] || die "series names $p, which is not in $patchdir"
    patches+=("$patchdir/$p")
done < "$patchdir/series"

# Identity of what the tree should hold: release, source, and the series' content.
key=$( { echo "ffmpeg $version"; echo "source ${FFMPEG_SOURCE:-release}";
         for p in "${patches[@]}"; do echo "$(basename "$p") $(sha256sum < "$p" | cut -d' ' -f1)"; done; } \
       | sha256sum | cut -d' ' -f1)
stamp_name=.vmaf_rs-applied

have_git=0
command -v git >/dev/null && have_git=1

tree_clean() {
    if [ -d "$dest/.git" ] && [ "$have_git" = 1 ]; then
        [ -z "$(git -C "$dest" status --porcelain --untracked-files=normal)" ]
    else
        return 0
    fi
}

stamp_file() {
    if [ -d "$dest/.git" ]; then echo "$dest/.git/$stamp_name"; else echo "$dest/$stamp_name"; fi
}

if [ -d "$dest" ]; then
    if [ -f "$(stamp_file)" ] && [ "$(cat "$(stamp_file)")" = "$key" ] && tree_clean; then
        log "up to date: $dest"
        echo "$dest"; exit 0
    fi
    if [ "$force" != 1 ]; then
        if ! tree_clean; then
            die_local "$dest has uncommitted changes; export them (scripts/ffmpeg-export.sh) or rerun with --force to discard them"
        fi
        if [ -d "$dest/.git" ] && [ "$have_git" = 1 ] && git -C "$dest" rev-parse -q --verify pristine >/dev/null; then
            n_commits=$(git -C "$dest" rev-list --count pristine..HEAD)
            if [ "$n_commits" != "${#patches[@]}" ] || [ ! -f "$(stamp_file)" ]; then
                die_local "$dest holds commits that are not the current series; export them (scripts/ffmpeg-export.sh) or rerun with --force"
            fi
        fi
    fi
    log "recreating $dest"
    rm -rf "$dest"
fi

src=$("$root/scripts/ffmpeg-fetch.sh" ffmpeg)

mkdir -p "$(dirname "$dest")"
tmp=$(mktemp -d "$(dirname "$dest")/.unpack.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
if [ -d "$src" ]; then
    log "copying $src"
    mkdir "$tmp/tree"
    tar -C "$src" --exclude=.git -cf - . | tar -C "$tmp/tree" --no-same-owner -xf -
else
    log "unpacking $(basename "$src")"
    tar -C "$tmp" --no-same-owner -xf "$src"
    top=$(find "$tmp" -mindepth 1 -maxdepth 1 -type d)
    [ "$(echo "$top" | wc -l)" = 1 ] || die "$src does not hold exactly one top-level directory"
    mv "$top" "$tmp/tree"
fi
[ -f "$tmp/tree/configure" ] && [ -f "$tmp/tree/libavfilter/allfilters.c" ] || die "$src is not an FFmpeg source tree"
if [ -f "$tmp/tree/VERSION" ] && [ "$(cat "$tmp/tree/VERSION")" != "$version" ]; then
    die "$src is FFmpeg $(cat "$tmp/tree/VERSION"), expected $version (set FFMPEG_VERSION)"
fi

if [ "$have_git" = 1 ]; then
    export GIT_AUTHOR_NAME=vmaf_rs GIT_AUTHOR_EMAIL=vmaf_rs@localhost
    export GIT_COMMITTER_NAME=vmaf_rs GIT_COMMITTER_EMAIL=vmaf_rs@localhost
    export GIT_AUTHOR_DATE="2000-01-01T00:00:00Z" GIT_COMMITTER_DATE="2000-01-01T00:00:00Z"
    g() { git -C "$tmp/tree" -c core.autocrlf=false -c gc.auto=0 -c commit.gpgsign=false "$@"; }
    g init -q
    g add -A -f
    g commit -q --no-verify -m "FFmpeg $version (pristine release)"
    g tag pristine
    unset GIT_AUTHOR_NAME GIT_AUTHOR_EMAIL GIT_AUTHOR_DATE
    for p in "${patches[@]}"; do
        log "applying $(basename "$p")"
        if ! g am -q --keep-cr --whitespace=nowarn "$p" >&2; then
            g apply --check --verbose "$p" >&2 || true
            g am --abort >/dev/null 2>&1 || true
            die "$(basename "$p") does not apply to FFmpeg $version (see the hunks above); refresh the series (ffmpeg-patches/$line/README.md)"
        fi
    done
else
    for p in "${patches[@]}"; do
        log "applying $(basename "$p") (patch)"
        if ! patch -d "$tmp/tree" -p1 --forward --batch --no-backup-if-mismatch -r - < "$p" >&2; then
            die "$(basename "$p") does not apply to FFmpeg $version; refresh the series (ffmpeg-patches/$line/README.md)"
        fi
    done
fi

mv "$tmp/tree" "$dest"
echo "$key" > "$(stamp_file)"
log "ready: $dest (${#patches[@]} patches)"
echo "$dest"
