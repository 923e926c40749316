#!/usr/bin/env bash
# CPU fidelity on another host (the GPU machine's AVX-512 Xeon, which has no cargo, no oracle, no
# qemu and no network), with everything built here: the golden tests (our CLI against libvmaf,
# natively and as libvmaf's C kernels under qemu and its AVX2 kernels on valgrind's CPU), the end-to-end filter tests and the
# library's unit tests (SIMD sweeps) run there as they run here.
#
# Here:
#   scripts/fidelity-check.sh --stage
#     build/fidelity-oracle/ffmpeg.xz   the oracle, xz-compressed (about 50 MB: a device call of
#                                       its own, the first)
#     build/fidelity/                   test executables, vmaf-rs, the patched ffmpeg + ffprobe,
#                                       qemu-x86_64 (static, from Debian's qemu-user-static),
#                                       valgrind's launcher and `none` tool (valgrind.tar.xz)
# There, in the repository root, two calls in a row (the machine stays warm only briefly):
#   scripts/fidelity-check.sh --unpack-oracle      (carry build/fidelity-oracle)
#   scripts/fidelity-check.sh [build/fidelity]     (carry build/fidelity; logs to $OUT)
set -euo pipefail
# The golden suites besides tests/golden.rs, each one test binary.
suites=(golden_ssim golden_ciede golden_floatsimple golden_floatvifadm golden_bootstrap golden_cambi golden_speed golden_v1)
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
oracle_xz=build/fidelity-oracle/ffmpeg.xz
oracle_bin=build/fidelity-unpacked/ffmpeg   # outside every carried folder
oracle_sha256=$(sed -n 's/^bin_sha256=//p' scripts/oracle.sh)

case "${1:-}" in
--stage)
    g=build/fidelity
    rm -rf "$g"; mkdir -p "$g" build/fidelity-oracle
    o=$(scripts/oracle.sh)
    [ -s "$oracle_xz" ] && [ "$oracle_xz" -nt "$o" ] || xz -6 -T2 -c "$o" >"$oracle_xz"
    scripts/ffmpeg-build.sh >/dev/null
    cargo build --release --bin vmaf-rs
    cp target/release/vmaf-rs build/ffmpeg/bin/ffmpeg build/ffmpeg/bin/ffprobe "$g/"
    for t in golden "${suites[@]}" ffmpeg lib; do
        cp "$(scripts/test-exe.sh "$t")" "$g/$t-tests"
    done
    strip --strip-debug "$g"/*
    deb=$(mktemp -d); trap 'rm -rf "$deb"' EXIT
    (cd "$deb" && apt-get download qemu-user-static >/dev/null && dpkg -x qemu-user-static_*.deb x)
    xz -6 -c "$deb/x/usr/bin/qemu-x86_64-static" >"$g/qemu-x86_64.xz"
    # valgrind's CPU (AVX2, no AVX-512) plays the AVX2-only host (tests/common avx2_emulator):
    # its launcher and the `none` tool, from Debian's package.
    (cd "$deb" && apt-get download valgrind >/dev/null && dpkg -x valgrind_*.deb v)
    mkdir -p "$deb/vg/lib"
    cp "$deb/v/usr/bin/valgrind.bin" "$deb/vg/valgrind"
    cp "$deb/v/usr/libexec/valgrind/"{none-amd64-linux,vgpreload_core-amd64-linux.so,default.supp} "$deb/vg/lib/"
    tar -C "$deb" -cJf "$g/valgrind.tar.xz" vg
    du -sh "$g" "$oracle_xz"
    exit 0 ;;
--unpack-oracle)
    mkdir -p "$(dirname "$oracle_bin")"
    xz -dc "$oracle_xz" >"$oracle_bin.part"
    chmod +x "$oracle_bin.part"
    got=$(sha256sum "$oracle_bin.part" | cut -d' ' -f1)
    [ "$got" = "$oracle_sha256" ] || { echo "oracle sha256 $got, expected $oracle_sha256" >&2; exit 1; }
    mv "$oracle_bin.part" "$oracle_bin"
    echo "oracle unpacked: $oracle_bin"
    exit 0 ;;
esac

dir="$(cd "${1:-build/fidelity}" && pwd)"
out="${OUT:-$dir/logs}"
mkdir -p "$out"
[ -x "$oracle_bin" ] || { echo "no $oracle_bin: run --unpack-oracle first (same warm machine)" >&2; exit 1; }
work="${TMPDIR:-/tmp}/vmaf_rs_fidelity"
rm -rf "$work"; mkdir -p "$work"
xz -dc "$dir/qemu-x86_64.xz" >"$work/qemu-x86_64"; chmod +x "$work/qemu-x86_64"
export VMAF_RS_ORACLE="$root/$oracle_bin" VMAF_RS_CLI="$dir/vmaf-rs" VMAF_RS_FFMPEG="$dir/ffmpeg"
export VMAF_RS_QEMU="$work/qemu-x86_64" VMAF_RS_WORK="$work/cases" RUST_BACKTRACE=1
tar -C "$work" -xJf "$dir/valgrind.tar.xz"
export VALGRIND_LIB="$work/vg/lib" VMAF_RS_VALGRIND="$work/vg/valgrind"
if "$VMAF_RS_VALGRIND" --tool=none -q /bin/true; then
    export VMAF_RS_AVX2_EMULATOR=valgrind
else
    echo "valgrind does not run here: the AVX2-only CPU is qemu's Haswell (docs/FIDELITY.md)"
    export VMAF_RS_AVX2_EMULATOR=qemu
fi
{
    grep -m1 "model name" /proc/cpuinfo
    grep -m1 "^flags" /proc/cpuinfo | tr ' ' '\n' | grep -E "^(avx2|bmi1|bmi2|avx512(f|cd|dq|bw|vl))$" | tr '\n' ' '
    echo; nproc
} | tee "$out/host.txt"
rc=0
run() {  # NAME CMD...: runs a test executable, log to $OUT/NAME.log
    local name=$1; shift
    echo "=== $name: $*"
    if "$@" >"$out/$name.log" 2>&1; then echo "$name: PASS"; else echo "$name: FAIL"; rc=1; fi
    grep -E "^test result|panicked|mismatches" "$out/$name.log" | head -n 20
}
run lib "$dir/lib-tests" --test-threads=8
run golden "$dir/golden-tests" --test-threads=8 --nocapture
for t in "${suites[@]}"; do
    run "$t" "$dir/$t-tests" --test-threads=8 --nocapture
done
VMAF_RS_CPU=scalar run golden-scalar "$dir/golden-tests" --test-threads=8 --nocapture \
    odd_size_rescaled_8bit sixteen_bit_420_noise every_libvmaf_isa
# valgrind is not on that machine; every other end-to-end test runs.
run ffmpeg "$dir/ffmpeg-tests" --test-threads=8 --nocapture --skip valgrind_short_run_is_clean
# The largest difference per key over every comparison (expected: 0 everywhere).
cat "$out"/golden*.log "$out"/ffmpeg.log | python3 -c '
import re, sys
worst = {}
for line in sys.stdin:
    m = re.match(r"^  (\S+(?: \S+)?)\s+([0-9.e+-]+)( \(model score\))?$", line.rstrip())
    if m:
        k, d = re.sub(r"^(pooled \S+)\.\w+$", r"\1", m.group(1)), float(m.group(2))
        worst[k] = max(worst.get(k, 0.0), d)
print("largest |ours - libvmaf| per key over all comparisons (%d keys):" % len(worst))
for k in sorted(worst):
    print("  %-44s %.1e" % (k, worst[k]))' | tee "$out/worst.txt"
echo "fidelity-check: $([ $rc = 0 ] && echo PASS || echo FAIL)" | tee -a "$out/host.txt"
exit $rc
