#!/usr/bin/env bash
# Runs every test of vmaf_rs on a fresh Debian machine: installs what is missing (apt, pip, cargo),
# checks formatting, lints and the generated C header, runs unit tests and the fidelity tests
# against the real libvmaf (natively, and as libvmaf's other kernel families on CPUs emulated by
# qemu), builds the patched FFmpeg 9.0, 8.1 and 7.1 and runs the end-to-end filter tests (all of
# them on 9.0, a smoke subset on 8.1 and 7.1), installs the downstream tools (scripts/tools.sh)
# and runs them on our ffmpeg and the oracle's (tests/downstream.rs), re-runs golden cases on
# the scalar kernels and with check_simd, the C ABI test under valgrind and sanitizers, a fuzz
# smoke run of every fuzz target, and builds the CUDA
# kernels (no GPU needed to build; GPU tests skip with a message when no GPU is present, and
# fail instead under VMAF_RS_REQUIRE_GPU=1).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
export CARGO_TERM_COLOR=never
step() { printf '\n==> %s\n' "$*"; }
t0=$(date +%s)

# CI: FFmpeg's objects and compiled tools are kept outside the clone (keyed by release, patches
# and versions; scripts/ffmpeg-build.sh VMAF_RS_BUILD_CACHE), so a new clone relinks instead of
# rebuilding. VMAF_RS_BUILD_CACHE= (empty) builds everything from scratch in build/.
if [ "${CI:-}" = true ]; then
    export VMAF_RS_BUILD_CACHE=${VMAF_RS_BUILD_CACHE-$HOME/.cache/vmaf_rs}
fi

step "dependencies"
scripts/deps.sh
scripts/oracle.sh >/dev/null

step "format, lints, header"
cargo fmt --all -- --check
cargo clippy --release --all-targets -- -D warnings
scripts/gen-header.sh --check

step "FFmpeg 9.0.2, 8.1.2 and 7.1.5 with the vmaf_rs filter (each cached by release + patches + crate)"
for v in 9.0 8.1 7.1; do
    t=$(date +%s)
    scripts/ffmpeg-build.sh --version "$v"
    echo "FFmpeg $v: $(( $(date +%s) - t )) s"
done

step "unit tests, fidelity vs libvmaf (CLI), end-to-end vs libvmaf (ffmpeg filter)"
# The downstream tools' tests have their own step below.
cargo test --release -- --test-threads=2 --skip downstream::

step "FFmpeg 8.1.2 and 7.1.5: smoke subset of the end-to-end tests (fidelity, decoders, metadata, bad inputs, CUDA build, libvmaf names, ladder)"
smoke=(y4m_cases_match_libvmaf encoded_inputs_decoded_by_each_ffmpeg practical_build_decodes_what_users_meet
       metadata_reaches_ffprobe bad_inputs_fail_cleanly cuda_build_is_complete
       libvmaf_names_are_registered_with_libvmaf_options libvmaf_name_matches_libvmaf
       libvmaf_name_scores_exactly_the_frames_that_pass ladder_of_renditions_equals_separate_filters)
for line in 8.1 7.1; do
    v=$(sed -n 's/^version=//p' "ffmpeg-patches/$line/base")
    VMAF_RS_FFMPEG="$root/build/ffmpeg-$v/bin/ffmpeg" cargo test --release --test ffmpeg -- \
        --test-threads=2 --exact "${smoke[@]}"
done

step "downstream tools unchanged on our ffmpeg vs the oracle's: ffmpeg-quality-metrics, easyVmaf, ab-av1"
t=$(date +%s)
scripts/tools.sh >/dev/null
echo "tools: $(( $(date +%s) - t )) s"
cargo test --release --test downstream -- --test-threads=2

step "peers kept honest: scalar kernels only (VMAF_RS_CPU=scalar), and every SIMD call re-checked (check_simd)"
# --nocapture: a SIMD sweep with nothing to sweep says so.
VMAF_RS_CPU=scalar cargo test --release --lib every_level -- --test-threads=2 --nocapture 2>&1 |
    grep -E "no SIMD level|test result|panicked|FAILED"
lane_cases=(odd_size_rescaled_8bit testsrc2_12bit_444_blur sixteen_bit_420_noise every_libvmaf_isa)
VMAF_RS_CPU=scalar cargo test --release --test golden -- --test-threads=2 "${lane_cases[@]}"
cargo test --release --features check_simd --test golden -- --test-threads=2 "${lane_cases[@]}"

step "fidelity as an AVX2-only host sees it (libvmaf, our CLI and our ffmpeg with AVX-512 hidden: scripts/cpuid-mask.c, or valgrind's CPU where CPUID faulting is missing)"
VMAF_RS_TEST_HOST=avx2 cargo test --release --test golden --test ffmpeg -- --test-threads=2 \
    --skip valgrind_short_run_is_clean

step "C ABI under valgrind, and under ASan + UBSan + LSan"
scripts/capi-test.sh

step "install: scripts/install.sh into a prefix (a C program linked through its vmaf_rs.pc), cargo install, cargo package --list, docs"
inst="$root/build/install-test"
rm -rf "$inst"
scripts/install.sh --prefix "$inst"
# shellcheck disable=SC2046  # pkg-config prints several words on purpose
gcc -std=c11 -Wall -Werror -o "$inst/capi_smoke" tests/c/capi_smoke.c \
    $(PKG_CONFIG_PATH="$inst/lib/pkgconfig" pkg-config --static --cflags --libs vmaf_rs)
(cd "$inst" && ./capi_smoke capi_log.json >/dev/null 2>&1) || { echo "capi_smoke linked from $inst failed"; exit 1; }
"$inst/bin/vmaf-rs" --version
CARGO_TARGET_DIR="$root/target" cargo install --quiet --locked --path . --root "$inst/cargo"
"$inst/cargo/bin/vmaf-rs" --version
pkg_files=$(cargo package --list --locked)
for f in src/model/builtin/PROVENANCE.md kernels include/vmaf_rs.h LICENSE.models; do
    grep -q "^$f" <<<"$pkg_files" || { echo "cargo package lacks $f"; exit 1; }
done
if grep -q "^tests/work\|^build/\|^target/" <<<"$pkg_files"; then echo "cargo package holds build output"; exit 1; fi
RUSTDOCFLAGS="-D warnings" cargo doc --release --no-deps --quiet
echo "install: prefix, pkg-config link, cargo install, package list ($(wc -l <<<"$pkg_files") files) and docs OK"

step "fuzzing: saved crashes and seeds replayed, then every target for 60 s (scripts/fuzz.sh)"
cargo fmt --manifest-path tests/fuzz/Cargo.toml -- --check
CARGO_TARGET_DIR=build/fuzz/target-replay cargo clippy --release --manifest-path tests/fuzz/Cargo.toml \
    --all-targets -- -D warnings
scripts/fuzz.sh replay
scripts/fuzz.sh smoke 60

step "CUDA: kernels compiled and embedded (no GPU needed); GPU tests skip without a GPU"
scripts/cuda-toolchain.sh >/dev/null
cargo clippy --release --features cuda --all-targets -- -D warnings
# --nocapture: without a GPU these tests print why they skip.
cargo test --release --features cuda --test cuda --test ffmpeg_cuda -- --test-threads=1 --nocapture

elapsed=$(( $(date +%s) - t0 ))
printf '\nall tests passed in %d s\n' "$elapsed"
