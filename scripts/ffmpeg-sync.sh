#!/usr/bin/env bash
# Keeps the files that every FFmpeg patch series shares identical across the series:
#   libavfilter/vf_vmaf_rs.c           the filter (one source for all releases; the version
#                                      differences are #if's in it, see its header)
#   doc/filters.texi, vmaf_rs section  (the lines the series adds there)
# Only the build wiring (configure, libavfilter/Makefile, libavfilter/allfilters.c) differs
# between series, because its context lines do.
#
# Usage:
#   scripts/ffmpeg-sync.sh [--from LINE] [LINE...]
#       Copies the shared content of series LINE (default 9.0) into the other series (default:
#       every other supported line): in each one's git tree build/ffmpeg-src/<release> (made or
#       refreshed by scripts/ffmpeg-apply.sh) as fixups of the commits that added the files,
#       squashed, then exported (scripts/ffmpeg-export.sh). Commit the regenerated patches.
#   scripts/ffmpeg-sync.sh --compare A B
#       Exit status 0 if series A and B add the same shared content, 1 (with a diff) if not.
#   scripts/ffmpeg-sync.sh --extract LINE FILE
#       Prints the lines series LINE adds to FILE (for a new file: the file).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
ff_root=$root ff_prog=ffmpeg-sync
. "$root/scripts/ffmpeg-common.sh"

shared_files=(libavfilter/vf_vmaf_rs.c doc/filters.texi)

log() { echo "ffmpeg-sync: $*" >&2; }
die() { echo "ffmpeg-sync: error: $*" >&2; exit 1; }

# extract LINE FILE: the '+' lines of every hunk of FILE in series LINE, in series order.
extract() {
    ff_resolve "$1" || exit 1
    local patches=()
    mapfile -t patches < <(ff_series_patches)
    python3 - "$2" "${patches[@]}" <<'EOF'
import sys
target, patches = sys.argv[1], sys.argv[2:]
out = sys.stdout
for p in patches:
    cur = None
    with open(p, encoding="utf-8", newline="") as f:
        for line in f:
            if line.startswith("diff --git "):
                cur = line.split()[3][2:]  # b/<path>
                continue
            if cur != target or line.startswith("+++ ") or line.startswith("--- "):
                continue
            if line.startswith("+"):
                out.write(line[1:])
EOF
}

compare() {
    local a=$1 b=$2 f rc=0
    for f in "${shared_files[@]}"; do
        if ! diff -u --label "$a/$f" --label "$b/$f" <(extract "$a" "$f") <(extract "$b" "$f"); then
            rc=1
        fi
    done
    return $rc
}

case "${1:-}" in
    --compare) [ $# -eq 3 ] || die "usage: $0 --compare A B"; compare "$2" "$3"; exit $? ;;
    --extract) [ $# -eq 3 ] || die "usage: $0 --extract LINE FILE"; extract "$2" "$3"; exit 0 ;;
esac

from=$ff_default_line
if [ "${1:-}" = "--from" ]; then from=${2:?--from needs a line}; shift 2; fi
ff_resolve "$from" || exit 1
from=$ff_line
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    mapfile -t targets < <(ff_lines | grep -vxF "$from")
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
extract "$from" libavfilter/vf_vmaf_rs.c > "$tmp/vf_vmaf_rs.c"
extract "$from" doc/filters.texi > "$tmp/section.texi"
[ -s "$tmp/vf_vmaf_rs.c" ] && [ -s "$tmp/section.texi" ] || die "series $from adds no vf_vmaf_rs.c or no filters.texi section"
head -n1 "$tmp/section.texi" | grep -qxF '@anchor{vmaf_rs}' || die "series $from: the filters.texi section does not start with @anchor{vmaf_rs}"

for t in "${targets[@]}"; do
    ff_resolve "$t" || exit 1
    [ "$ff_line" != "$from" ] || continue
    if compare "$from" "$ff_line" >/dev/null 2>&1; then
        log "$ff_line: already the same as $from"
        continue
    fi
    tree=$("$root/scripts/ffmpeg-apply.sh" --version "$ff_line")
    g() { git -C "$tree" -c commit.gpgsign=false "$@"; }
    cp "$tmp/vf_vmaf_rs.c" "$tree/libavfilter/vf_vmaf_rs.c"
    # Replace this series' section (from @anchor{vmaf_rs} to the next @section or @anchor of
    # another filter, the blank line before it included) by the source series' section.
    python3 - "$tree/doc/filters.texi" "$tmp/section.texi" <<'EOF'
import sys
path, sec = sys.argv[1], sys.argv[2]
lines = open(path, encoding="utf-8", newline="").read().splitlines(keepends=True)
new = open(sec, encoding="utf-8", newline="").read().splitlines(keepends=True)
start = lines.index("@anchor{vmaf_rs}\n")
end = start + 1
while end < len(lines) and not (lines[end].startswith(("@section ", "@anchor{"))
                                and not lines[end].startswith("@section vmaf_rs")):
    end += 1
lines[start:end] = new
open(path, "w", encoding="utf-8", newline="").writelines(lines)
EOF
    export GIT_COMMITTER_NAME=vmaf_rs GIT_COMMITTER_EMAIL=vmaf_rs@localhost
    for f in "${shared_files[@]}"; do
        if ! g diff --quiet -- "$f"; then
            owner=$(g log -n1 --format=%H pristine..HEAD -- "$f")
            [ -n "$owner" ] || die "$ff_line: no commit of the series touches $f"
            g commit -q --no-verify --fixup="$owner" -- "$f"
        fi
    done
    GIT_SEQUENCE_EDITOR=true g rebase -q -i --autosquash pristine >/dev/null
    "$root/scripts/ffmpeg-export.sh" --version "$ff_line"
    compare "$from" "$ff_line" >/dev/null || die "$ff_line still differs from $from after the sync"
    log "$ff_line: now the same as $from"
done
