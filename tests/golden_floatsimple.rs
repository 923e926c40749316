//! Fidelity of the simple float extractors (`float_psnr`, `float_moment`, `float_ansnr`,
//! `float_motion`) against the real libvmaf: generated content at every bit depth libvmaf's
//! float features take, odd sizes, every layout, options; every per-frame and pooled value must
//! equal libvmaf's as printed.

mod common;

use common::*;
use std::path::Path;

fn vmaf_rs(reference: &Path, distorted: &Path, extra: &[&str], log: &Path) -> String {
    let cli = std::env::var_os("VMAF_RS_CLI")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| env!("CARGO_BIN_EXE_vmaf-rs").into());
    let mut c = command_on(OracleCpu::Native, &cli);
    c.arg("-r").arg(reference).arg("-d").arg(distorted);
    c.args(["--json", "-o"]).arg(log).args(extra);
    run(&mut c)
}

/// Runs both on a pair and compares. `oracle_opts` are libvmaf filter options, `ours` the
/// equivalent CLI arguments.
fn check(case: &Case, oracle_opts: &str, ours: &[&str], tag: &str) {
    let dir = workdir(&format!("{}-{tag}", case.name));
    let (r, d) = make_pair(case, &dir);
    let theirs = oracle_json(&r, &d, oracle_opts, &dir, tag);
    let log = dir.join(format!("ours-{tag}.json"));
    vmaf_rs(&r, &d, ours, &log);
    compare_logs(
        &read_json(&log),
        &theirs,
        &["vmaf"],
        &format!("{} [{tag}]", case.name),
    );
}

/// The oracle's `feature=` option for one of our `--feature` strings (its ':' escaped).
fn oracle_feature(feature: &str) -> String {
    format!("feature='{}'", feature.replace(':', "\\:"))
}

const NOISE: &str = "noise=alls=18:allf=t+u";

/// Content: 8-bit 4:2:0 at an odd size and at 320x240, 10-bit 4:2:2 through x264, 12-bit 4:4:4
/// blurred, 16-bit 4:2:0 with noise.
fn cases() -> [Case; 5] {
    [
        Case {
            name: "fs-420-odd",
            source: "testsrc2=s=97x61:r=25:d=0.4",
            pix_fmt: "yuv420p",
            dist_filter: NOISE,
            encode: &[],
        },
        Case {
            name: "fs-420-noise",
            source: "testsrc2=s=320x240:r=25:d=0.32",
            pix_fmt: "yuv420p",
            dist_filter: NOISE,
            encode: &[],
        },
        Case {
            name: "fs-422-10bit-x264",
            source: "mandelbrot=s=130x66:r=25,trim=end_frame=6",
            pix_fmt: "yuv422p10le",
            dist_filter: "",
            encode: &["-c:v", "libx264", "-crf", "35", "-preset", "ultrafast"],
        },
        Case {
            name: "fs-444-12bit-blur",
            source: "testsrc2=s=96x80:r=25:d=0.24",
            pix_fmt: "yuv444p12le",
            dist_filter: "gblur=sigma=1.5",
            encode: &[],
        },
        Case {
            name: "fs-420-16bit",
            source: "testsrc2=s=65x49:r=25:d=0.24",
            pix_fmt: "yuv420p16le",
            dist_filter: NOISE,
            encode: &[],
        },
    ]
}

/// Runs `feature` (our `--feature` grammar) on every case.
fn every_case(feature: &str, tag: &str) {
    for case in cases() {
        check(
            &case,
            &oracle_feature(feature),
            &["--feature", feature],
            tag,
        );
    }
}

#[test]
fn float_psnr_every_depth() {
    every_case("name=float_psnr", "float_psnr");
}

#[test]
fn float_moment_every_depth() {
    every_case("name=float_moment", "float_moment");
}

#[test]
fn float_ansnr_every_depth() {
    every_case("name=float_ansnr", "float_ansnr");
}
