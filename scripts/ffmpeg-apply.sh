#!/usr/bin/env bash
# Applies our FFmpeg patch series (ffmpeg-patches/<major.minor>/series).
#
# Usage:
#   scripts/ffmpeg-apply.sh [--version 7.1|8.1|9.0|<release>] [--force]
#       Unpacks the pristine release (scripts/ffmpeg-fetch.sh) into build/ffmpeg-src/<release>
#       and applies the series there. Prints the tree's path on stdout. When git is available
#       the tree is a git repository: one commit with the pristine release (tag `pristine`) and
#       one commit per patch (git am), so that scripts/ffmpeg-export.sh can regenerate the patch
#       files after you edit the tree. Without git the patches are applied with patch(1). Any
#       rejected hunk is an error. A tree already holding exactly this release and series is
#       left as it is ("up to date"); a tree with local changes is never overwritten without
#       --force (exit status 3).
#   scripts/ffmpeg-apply.sh --src DIR [--series 7.1|8.1|9.0] [--check]
#       Applies the series to your own FFmpeg source tree DIR, in place: a release tarball
#       unpacked, or a git checkout (also one carrying your own patches). The release is read
#       from DIR/VERSION (tarballs) or DIR/RELEASE (git checkouts) and must belong to a
#       supported line; anything else is refused (exit status 2) unless --series names the
#       series to try. In a git checkout (clean work tree required) the patches become commits
#       (git am --3way), on top of whatever is checked out; otherwise they are applied with git
#       apply, or patch(1) (offsets and fuzz allowed, reported) when exact context does not
#       match. Nothing is changed unless every patch applies. A tree that already holds this
#       filter is reported and left alone. --check only says whether the series would apply.
#       Then configure it with --enable-libvmaf-rs (see ffmpeg-patches/README.md).
#
# Environment: FFMPEG_VERSION (as --version; default 9.0), FFMPEG_SOURCE (see ffmpeg-fetch.sh),
#   FFMPEG_SRC_DIR=<dir>  unpack there instead of build/ffmpeg-src/<release>
#   FFMPEG_PATCH_DIR=<dir> use this patch series instead of ffmpeg-patches/<major.minor>
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
ff_root=$root ff_prog=ffmpeg-apply
. "$root/scripts/ffmpeg-common.sh"

log() { echo "ffmpeg-apply: $*" >&2; }
die() { echo "ffmpeg-apply: error: $*" >&2; exit 1; }
# Exit status 3: the tree holds local work that this script will not overwrite.
die_local() { echo "ffmpeg-apply: error: $*" >&2; exit 3; }
# Exit status 2: the user's tree is not a release this project supports.
die_unsupported() { echo "ffmpeg-apply: error: $*" >&2; exit 2; }

force=0 check=0 user_src= series_override= want=${FFMPEG_VERSION:-}
while [ $# -gt 0 ]; do
    case "$1" in
        --force) force=1 ;;
        --check) check=1 ;;
        --version) want=${2:?--version needs a value}; shift ;;
        --src) user_src=${2:?--src needs a directory}; shift ;;
        --series) series_override=${2:?--series needs a release line}; shift ;;
        -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) die "unknown argument '$1' (see --help)" ;;
    esac
    shift
done

have_git=0
command -v git >/dev/null && have_git=1

# --- a user's tree -----------------------------------------------------------------------------
if [ -n "$user_src" ]; then
    [ -d "$user_src" ] || die "--src $user_src: no such directory"
    src=$(cd "$user_src" && pwd)
    [ -f "$src/configure" ] && [ -f "$src/libavfilter/allfilters.c" ] || die "$src is not an FFmpeg source tree (no configure, libavfilter/allfilters.c)"
    release=$(ff_tree_release "$src") || die "$src has neither VERSION nor RELEASE: cannot tell its FFmpeg release (pass --series 7.1|8.1|9.0 to choose the series yourself)"
    lavfi=$(ff_tree_libavfilter_major "$src")
    supported=$(ff_lines | tr '\n' ' ' | sed 's/ $//')
    if [ -n "$series_override" ]; then
        ff_resolve "$series_override" || exit 2
        log "$src is FFmpeg $release (libavfilter $lavfi); applying the $ff_line series as asked (--series)"
    else
        line=$(echo "$release" | sed -n 's/^\([0-9]\{1,\}\.[0-9]\{1,\}\)\(\.[0-9]\{1,\}\)*$/\1/p')
        if [ -z "$line" ]; then
            die_unsupported "$src is FFmpeg '$release' (libavfilter $lavfi), not a release: the patch series are made for the release lines $supported (release tarballs, or git checkouts of the release/X.Y branches and nX.Y.Z tags). Pass --series <line> to try the nearest series anyway."
        fi
        if [ ! -f "$root/ffmpeg-patches/$line/series" ]; then
            die_unsupported "$src is FFmpeg $release, which is not supported: there are patch series for the release lines $supported only. Pass --series <line> to try one of them anyway."
        fi
        ff_resolve "$line" || exit 2
    fi
    want_lavfi=$(ff_base_field "$ff_line" libavfilter)
    if [ -z "$series_override" ] && [ -n "$want_lavfi" ] && [ -n "$lavfi" ] && [ "$lavfi" != "$want_lavfi" ]; then
        die_unsupported "$src says FFmpeg $release but has libavfilter $lavfi; the $ff_line series is for libavfilter $want_lavfi (pass --series to override)"
    fi
    mapfile -t patches < <(ff_series_patches)
    tmpd=$(mktemp -d)
    trap 'rm -rf "$tmpd"' EXIT

    # Already applied?
    if [ -f "$src/libavfilter/vf_vmaf_rs.c" ]; then
        if cmp -s "$src/libavfilter/vf_vmaf_rs.c" <("$root/scripts/ffmpeg-sync.sh" --extract "$ff_line" libavfilter/vf_vmaf_rs.c); then
            log "$src already holds this vmaf_rs filter (libavfilter/vf_vmaf_rs.c is the series' one): nothing to do"
            echo "$src"; exit 0
        fi
        die_local "$src already holds a different libavfilter/vf_vmaf_rs.c (another version of this series): remove that version first (git revert / git checkout, or a fresh tree), then apply"
    fi

    is_git=0
    if [ "$have_git" = 1 ] && git -C "$src" rev-parse --is-inside-work-tree >/dev/null 2>&1 &&
       [ "$(cd "$(git -C "$src" rev-parse --show-toplevel)" && pwd)" = "$src" ]; then
        is_git=1
    fi
    log "FFmpeg $release in $src: ${#patches[@]} patches of ffmpeg-patches/$ff_line ($( [ $is_git = 1 ] && echo "git checkout, git am --3way" || echo "plain tree" ))"

    if [ $is_git = 1 ]; then
        if [ -n "$(git -C "$src" status --porcelain --untracked-files=no)" ]; then
            die_local "$src has uncommitted changes to tracked files; commit or stash them first (git am needs a clean tree)"
        fi
        if [ -d "$(git -C "$src" rev-parse --git-path rebase-apply)" ]; then
            die_local "$src: a git am or rebase is in progress; finish or abort it first"
        fi
        if [ $check = 1 ]; then
            # Exact context first, then what git am --3way could merge: try it on a scratch branch.
            if git -C "$src" apply --check "${patches[@]}" 2>/dev/null; then
                log "the series applies cleanly to $src"; exit 0
            fi
            head=$(git -C "$src" rev-parse HEAD)
            wt=$tmpd/worktree
            trap 'git -C "$src" worktree remove --force "$wt" >/dev/null 2>&1; rm -rf "$tmpd"' EXIT
            git -C "$src" worktree add -q --detach "$wt" "$head"
            if git -C "$wt" -c user.name=vmaf_rs -c user.email=vmaf_rs@localhost am -q --3way "${patches[@]}" >/dev/null 2>&1; then
                log "the series applies to $src with a 3-way merge"; exit 0
            fi
            git -C "$wt" am --abort >/dev/null 2>&1 || true
            ok=1
            for p in "${patches[@]}"; do
                patch -d "$src" -p1 --dry-run --forward --batch -s < "$p" >/dev/null 2>&1 || ok=0
            done
            if [ $ok = 1 ]; then
                log "the series applies to $src with patch(1) offsets/fuzz (your own changes sit next to its hunks)"; exit 0
            fi
            git -C "$src" apply --check --verbose "${patches[@]}" >&2 || true
            die "the series does not apply to $src (see the hunks above)"
        fi
        if git -C "$src" -c commit.gpgsign=false am -q --3way --keep-cr --whitespace=nowarn "${patches[@]}" >/dev/null 2>&1; then
            log "applied as ${#patches[@]} commits on top of your HEAD in $src (git am --3way)"
            echo "$src"; exit 0
        fi
        git -C "$src" am --abort >/dev/null 2>&1 || true
        # git's merge refuses changes next to each other (e.g. your own filter added beside ours
        # in allfilters.c); patch(1) places such hunks by offset and fuzz. All or nothing again.
        ok=1
        for p in "${patches[@]}"; do
            patch -d "$src" -p1 --dry-run --forward --batch -s < "$p" >/dev/null 2>&1 || ok=0
        done
        if [ $ok = 0 ]; then
            git -C "$src" apply --check --verbose "${patches[@]}" >&2 || true
            die "the series does not apply to your tree $src (hunks above; nothing was changed). The conflicting files are probably ones your own patches touch: apply the series by hand (git am --3way, then resolve), see ffmpeg-patches/README.md"
        fi
        head_before=$(git -C "$src" rev-parse HEAD)
        for p in "${patches[@]}"; do
            out=$(patch -d "$src" -p1 --forward --batch --no-backup-if-mismatch < "$p") || {
                echo "$out" >&2; git -C "$src" reset -q --hard "$head_before"
                die "$(basename "$p") failed to apply although its dry run passed; $src is back at $head_before"; }
            echo "$out" | grep -E "offset|fuzz" | sed "s/^/ffmpeg-apply: $(basename "$p"): /" >&2 || true
            # The commit as git am would make it: author, date and message from the patch.
            info=$(git mailinfo "$tmpd/msg" /dev/null < "$p")
            author=$(echo "$info" | sed -n 's/^Author: //p'); email=$(echo "$info" | sed -n 's/^Email: //p')
            date=$(echo "$info" | sed -n 's/^Date: //p'); subject=$(echo "$info" | sed -n 's/^Subject: //p')
            { echo "$subject"; [ -s "$tmpd/msg" ] && { echo; cat "$tmpd/msg"; }; } > "$tmpd/commitmsg"
            git -C "$src" add -A -- $(sed -n 's|^+++ b/||p' "$p")
            GIT_AUTHOR_NAME=$author GIT_AUTHOR_EMAIL=$email GIT_AUTHOR_DATE=$date \
                git -C "$src" -c commit.gpgsign=false commit -q --no-verify -F "$tmpd/commitmsg"
        done
        log "applied as ${#patches[@]} commits on top of your HEAD in $src (patch(1): context shifted by your own changes)"
        echo "$src"; exit 0
    fi

    # A plain tree: all or nothing.
    mode=
    if [ "$have_git" = 1 ] && (cd "$src" && git apply --check "${patches[@]}") 2>/dev/null; then
        mode=git
    else
        ok=1
        for p in "${patches[@]}"; do
            if ! out=$(patch -d "$src" -p1 --dry-run --forward --batch -s < "$p" 2>&1); then
                ok=0; echo "$out" >&2
            elif [ -n "$out" ]; then
                log "$(basename "$p"): $out"
            fi
        done
        [ $ok = 1 ] || die "the series does not apply to $src (hunks above; nothing was changed)"
        mode=patch
    fi
    if [ $check = 1 ]; then
        log "the series applies to $src ($( [ $mode = git ] && echo "exact context" || echo "with patch(1) offsets/fuzz" ))"; exit 0
    fi
    if [ $mode = git ]; then
        (cd "$src" && git apply --whitespace=nowarn "${patches[@]}")
    else
        for p in "${patches[@]}"; do
            out=$(patch -d "$src" -p1 --forward --batch --no-backup-if-mismatch < "$p") || { echo "$out" >&2; die "$(basename "$p") failed to apply although its dry run passed"; }
            echo "$out" | grep -E "offset|fuzz" | sed "s/^/ffmpeg-apply: $(basename "$p"): /" >&2 || true
        done
    fi
    log "applied ${#patches[@]} patches to $src ($( [ $mode = git ] && echo "exact context" || echo "patch(1)" ))"
    echo "$src"; exit 0
fi

# --- our own tree in build/ffmpeg-src/<release> ------------------------------------------------
[ -z "$series_override" ] || die "--series is for --src trees; use --version"
ff_resolve "$want" || exit 1
version=$ff_version
line=$ff_line
patchdir=$ff_patchdir
dest=${FFMPEG_SRC_DIR:-$root/build/ffmpeg-src/$version}
mapfile -t patches < <(ff_series_patches)
for p in "${patches[@]}"; do
    [ -f "$p" ] || die "series names $(basename "$p"), which is not in $patchdir"
done

# Identity of what the tree should hold: release, source, and the series' content.
key=$( { echo "ffmpeg $version"; echo "source ${FFMPEG_SOURCE:-release}";
         for p in "${patches[@]}"; do echo "$(basename "$p") $(sha256sum < "$p" | cut -d' ' -f1)"; done; } \
       | sha256sum | cut -d' ' -f1)
stamp_name=.vmaf_rs-applied

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
            die_local "$dest has uncommitted changes; export them (scripts/ffmpeg-export.sh --version $line) or rerun with --force to discard them"
        fi
        if [ -d "$dest/.git" ] && [ "$have_git" = 1 ] && git -C "$dest" rev-parse -q --verify pristine >/dev/null; then
            n_commits=$(git -C "$dest" rev-list --count pristine..HEAD)
            if [ "$n_commits" != "${#patches[@]}" ] || [ ! -f "$(stamp_file)" ]; then
                die_local "$dest holds commits that are not the current series; export them (scripts/ffmpeg-export.sh --version $line) or rerun with --force"
            fi
        fi
    fi
    log "recreating $dest"
    rm -rf "$dest"
fi

src=$("$root/scripts/ffmpeg-fetch.sh" --version "$version" ffmpeg)

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
if got=$(ff_tree_release "$tmp/tree") && [ "$got" != "$version" ]; then
    die "$src is FFmpeg $got, expected $version (set FFMPEG_VERSION / --version)"
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
            die "$(basename "$p") does not apply to FFmpeg $version (see the hunks above); refresh the series (ffmpeg-patches/README.md)"
        fi
    done
else
    for p in "${patches[@]}"; do
        log "applying $(basename "$p") (patch)"
        if ! patch -d "$tmp/tree" -p1 --forward --batch --no-backup-if-mismatch -r - < "$p" >&2; then
            die "$(basename "$p") does not apply to FFmpeg $version; refresh the series (ffmpeg-patches/README.md)"
        fi
    done
fi

mv "$tmp/tree" "$dest"
echo "$key" > "$(stamp_file)"
log "ready: $dest (${#patches[@]} patches)"
echo "$dest"
