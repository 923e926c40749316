#!/usr/bin/env bash
# Runs every test of vmaf_rs on a fresh Debian machine: installs what is missing (apt, pip, cargo),
# checks formatting, lints and the generated C header, runs unit tests and the fidelity tests
# against the real libvmaf, builds the patched FFmpeg and runs the end-to-end filter tests, the C
# ABI test under valgrind, and builds the CUDA kernels (no GPU needed to build; GPU tests skip
# with a message when no GPU is present).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
export CARGO_TERM_COLOR=never
step() { printf '\n==> %s\n' "$*"; }
t0=$(date +%s)

step "dependencies"
scripts/deps.sh
scripts/oracle.sh >/dev/null

step "format, lints, header"
cargo fmt --all -- --check
cargo clippy --release --all-targets -- -D warnings
scripts/gen-header.sh --check

step "FFmpeg 9.0.2 with the vmaf_rs filter (cached by version + patches + crate)"
scripts/ffmpeg-build.sh

step "unit tests, fidelity vs libvmaf (CLI), end-to-end vs libvmaf (ffmpeg filter)"
cargo test --release -- --test-threads=2

step "C ABI under valgrind"
scripts/capi-test.sh

step "CUDA: kernels compiled and embedded (no GPU needed); GPU tests skip without a GPU"
scripts/cuda-toolchain.sh >/dev/null
cargo clippy --release --features cuda --all-targets -- -D warnings
# --nocapture: without a GPU these tests print why they skip.
cargo test --release --features cuda --test cuda --test ffmpeg_cuda -- --test-threads=1 --nocapture

elapsed=$(( $(date +%s) - t0 ))
printf '\nall tests passed in %d s\n' "$elapsed"
