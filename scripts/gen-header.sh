#!/usr/bin/env bash
# Regenerates include/vmaf_rs.h from src/capi/mod.rs with cbindgen: that file alone, since the C
# ABI's types all live there and the crate's other public types must not leak into the header.
# With --check, fails if the committed header differs from what cbindgen generates (CI runs this).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
command -v cbindgen >/dev/null || scripts/deps.sh
tmp=$(mktemp); trap 'rm -f "$tmp"' EXIT
cbindgen --quiet --config include/cbindgen.toml --output "$tmp" src/capi/mod.rs
if [ "${1:-}" = "--check" ]; then
    if ! diff -u include/vmaf_rs.h "$tmp"; then
        echo "include/vmaf_rs.h is stale: run scripts/gen-header.sh and commit it" >&2
        exit 1
    fi
    echo "header: include/vmaf_rs.h is current"
else
    cp "$tmp" include/vmaf_rs.h
    echo "wrote include/vmaf_rs.h"
fi
