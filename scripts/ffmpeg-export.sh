#!/usr/bin/env bash
# Regenerates ffmpeg-patches/<major.minor>/ (NNNN-*.patch and series) from the commits on top of
# the pristine release in build/ffmpeg-src/<version> (the git tree made by scripts/ffmpeg-apply.sh).
#
# Workflow: edit the tree, commit each logical change there (`git commit`, or
# `git commit --amend` / `git rebase -i pristine` to fold a fix into an existing patch), then run
# this script and commit the regenerated patch files in this repository. Uncommitted changes in
# the tree are refused, so nothing is silently left out.
#
# Usage: scripts/ffmpeg-export.sh
# Environment: FFMPEG_VERSION (default 9.0.2), FFMPEG_SRC_DIR, FFMPEG_PATCH_DIR (as for
#   scripts/ffmpeg-apply.sh).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
version=${FFMPEG_VERSION:-9.0.2}
line=$(echo "$version" | cut -d. -f1-2)
patchdir=${FFMPEG_PATCH_DIR:-$root/ffmpeg-patches/$line}
tree=${FFMPEG_SRC_DIR:-$root/build/ffmpeg-src/$version}

die() { echo "ffmpeg-export: error: $*" >&2; exit 1; }

[ -d "$tree/.git" ] || die "$tree is not a git tree made by scripts/ffmpeg-apply.sh"
g() { git -C "$tree" "$@"; }
g rev-parse -q --verify pristine >/dev/null || die "$tree has no 'pristine' tag"
[ -z "$(g status --porcelain --untracked-files=normal)" ] ||
    die "$tree has uncommitted changes; commit them there first (git -C $tree status)"
n=$(g rev-list --count pristine..HEAD)
[ "$n" -gt 0 ] || die "no commits on top of pristine in $tree"

mkdir -p "$patchdir"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Stable output: no commit hashes in the From line, no git version signature, full context of
# renames off (plain diffs apply with patch(1) too).
g -c diff.noprefix=false -c diff.renames=false -c core.abbrev=12 format-patch -q --zero-commit --no-signature \
    --no-renames -N -o "$tmp" pristine..HEAD >/dev/null

head_comment=$(grep '^#' "$patchdir/series" 2>/dev/null ||
               echo "# FFmpeg $line.x patch series for the vmaf_rs filter, applied in this order.")
rm -f "$patchdir"/[0-9][0-9][0-9][0-9]-*.patch
cp "$tmp"/*.patch "$patchdir/"
{ echo "$head_comment"; (cd "$tmp" && ls -1 ./*.patch | sed 's|^\./||'); } > "$patchdir/series"

# The tree now corresponds to the exported series: mark it so ffmpeg-apply.sh keeps it.
key=$( { echo "ffmpeg $version"; echo "source ${FFMPEG_SOURCE:-release}";
         while IFS= read -r p; do
             p=${p%%#*}; p=$(echo "$p" | tr -d '[:space:]'); [ -n "$p" ] || continue
             echo "$p $(sha256sum < "$patchdir/$p" | cut -d' ' -f1)"
         done < "$patchdir/series"; } | sha256sum | cut -d' ' -f1)
echo "$key" > "$tree/.git/.vmaf_rs-applied"

echo "ffmpeg-export: wrote $n patches to $patchdir:" >&2
sed 's/^/  /' "$patchdir/series" >&2
