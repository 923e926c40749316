#!/usr/bin/env bash
# Builds integration test NAME (cargo test --release --no-run, with any extra cargo arguments) and
# prints the path of its executable, so it can be copied to a machine without cargo.
# Usage: scripts/test-exe.sh NAME [CARGO-ARGS...]   (NAME "lib": the library's unit tests)
set -eo pipefail
name=$1; shift
if [ "$name" = lib ]; then sel=(--lib); else sel=(--test "$name"); fi
cargo test --release --no-run --message-format=json "$@" "${sel[@]}" | python3 -c '
import json, sys
name = sys.argv[1]
for line in sys.stdin:
    try:
        m = json.loads(line)
    except ValueError:
        continue
    t = m.get("target") or {}
    if m.get("reason") != "compiler-artifact" or not m.get("executable"):
        continue
    if (name == "lib" and t.get("name") == "vmaf_rs" and (m.get("profile") or {}).get("test")) or (
            t.get("name") == name and "test" in t.get("kind", [])):
        print(m["executable"])' "$name" | tail -n1
