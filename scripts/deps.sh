#!/usr/bin/env bash
# Installs what building and testing vmaf_rs needs on Debian/Ubuntu (apt), only what is missing.
# Cargo and Python 3 are expected (the machine's toolchains); everything else comes from here.
set -euo pipefail
need=()
# qemu-user: runs the oracle as an AVX2-only or pre-AVX CPU (libvmaf's other kernel families).
for pkg in bc nasm pkg-config make gcc g++ xz-utils valgrind dpkg-dev git ca-certificates python3 python3-venv python3-pip qemu-user; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || need+=("$pkg")
done
if [ ${#need[@]} -gt 0 ]; then
    echo "deps: installing ${need[*]}" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >&2 || true
    apt-get install -y -qq --no-install-recommends "${need[@]}" >&2
fi
if ! command -v cbindgen >/dev/null 2>&1 || [ "$(cbindgen --version 2>/dev/null | awk '{print $2}')" != "0.29.4" ]; then
    echo "deps: installing cbindgen 0.29.4 (cargo)" >&2
    cargo install --locked --quiet cbindgen --version 0.29.4 >&2
fi
