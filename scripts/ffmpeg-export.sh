#!/usr/bin/env bash
# Regenerates ffmpeg-patches/<major.minor>/ (NNNN-*.patch and series) from the commits on top of
# the pristine release in build/ffmpeg-src/<version> (the git tree made by scripts/ffmpeg-apply.sh).
#
# Workflow: edit the tree, commit each logical change there (`git commit`, or
# `git commit --fixup` + `GIT_SEQUENCE_EDITOR=true git rebase -i --autosquash pristine` to fold a
# fix into an existing patch), then run this script and commit the regenerated patch files in
# this repository. Uncommitted changes in the tree are refused, so nothing is silently left out.
# libavfilter/vf_vmaf_rs.c and the vmaf_rs section of doc/filters.texi are the same in every
# series: after changing them, carry them to the other series with scripts/ffmpeg-sync.sh
# (scripts/ffmpeg-check.sh fails while they differ).
#
# Usage: scripts/ffmpeg-export.sh [--version 7.1|8.1|9.0|<release>]
# Environment: FFMPEG_VERSION (as --version; default 9.0), FFMPEG_SRC_DIR, FFMPEG_PATCH_DIR (as
#   for scripts/ffmpeg-apply.sh).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
ff_root=$root ff_prog=ffmpeg-export
. "$root/scripts/ffmpeg-common.sh"
want=${FFMPEG_VERSION:-}
if [ "${1:-}" = "--version" ]; then want=${2:?--version needs a value}; fi
ff_resolve "$want" || exit 1
version=$ff_version
line=$ff_line
patchdir=$ff_patchdir
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
# The shared files: say where the other series' copies differ.
for other in $(ff_lines); do
    [ "$other" = "$line" ] && continue
    if ! "$root/scripts/ffmpeg-sync.sh" --compare "$line" "$other" >/dev/null 2>&1; then
        echo "ffmpeg-export: the shared files differ in ffmpeg-patches/$other: scripts/ffmpeg-sync.sh --from $line" >&2
    fi
done
