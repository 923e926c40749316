//! Fidelity of `psnr_hvs` and `ciede` against the real libvmaf: each case generates its content
//! with the oracle's FFmpeg, runs libvmaf and `vmaf-rs`, and requires every per-frame value and
//! every pooled value to equal libvmaf's as printed.

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

/// Runs both on a pair with one feature (no model) and compares every key.
fn check(case: &Case, feature: &str, tag: &str) {
    let dir = workdir(&format!("{}-{tag}", case.name));
    let (r, d) = make_pair(case, &dir);
    // libvmaf's filter option: the feature string with its ':' escaped (both run the default
    // model too).
    let oracle = format!("feature='{}'", feature.replace(':', "\\:"));
    let theirs = oracle_json(&r, &d, &oracle, &dir, tag);
    let log = dir.join(format!("ours-{tag}.json"));
    vmaf_rs(&r, &d, &["--feature", feature], &log);
    compare_logs(
        &read_json(&log),
        &theirs,
        &["vmaf"],
        &format!("{} [{tag}]", case.name),
    );
}

const NOISE: &str = "noise=alls=18:allf=t+u";

/// `psnr_hvs` on every layout, 8/10/12 bits (libvmaf's limit), encodes, blur, noise, odd sizes.
#[test]
fn psnr_hvs_every_layout_and_depth() {
    let cases = [
        Case {
            name: "hvs-420-320x240",
            source: "testsrc2=s=320x240:r=25:d=0.4",
            pix_fmt: "yuv420p",
            dist_filter: NOISE,
            encode: &[],
        },
        Case {
            name: "hvs-420-160x96",
            source: "mandelbrot=s=160x96:r=25,trim=end_frame=8",
            pix_fmt: "yuv420p",
            dist_filter: "gblur=sigma=1.2",
            encode: &[],
        },
        Case {
            name: "hvs-420-odd-97x61",
            source: "testsrc2=s=97x61:r=25:d=0.32",
            pix_fmt: "yuv420p",
            dist_filter: NOISE,
            encode: &[],
        },
        Case {
            name: "hvs-422-8bit-x264",
            source: "testsrc2=s=176x144:r=25:d=0.4",
            pix_fmt: "yuv422p",
            dist_filter: "",
            encode: &["-c:v", "libx264", "-crf", "35", "-preset", "ultrafast"],
        },
        Case {
            name: "hvs-444-8bit-odd",
            source: "testsrc2=s=101x75:r=25:d=0.32",
            pix_fmt: "yuv444p",
            dist_filter: "boxblur=1:1",
            encode: &[],
        },
        Case {
            name: "hvs-420-10bit-x264",
            source: "mandelbrot=s=192x108:r=25,trim=end_frame=8",
            pix_fmt: "yuv420p10le",
            dist_filter: "",
            encode: &["-c:v", "libx264", "-crf", "30", "-preset", "ultrafast"],
        },
        Case {
            name: "hvs-422-10bit-odd",
            source: "testsrc2=s=131x67:r=25:d=0.32",
            pix_fmt: "yuv422p10le",
            dist_filter: NOISE,
            encode: &[],
        },
        Case {
            name: "hvs-444-12bit",
            source: "testsrc2=s=128x96:r=25:d=0.32",
            pix_fmt: "yuv444p12le",
            dist_filter: "gblur=sigma=1.5,noise=alls=8:allf=t",
            encode: &[],
        },
        Case {
            name: "hvs-420-12bit-odd",
            source: "testsrc2=s=83x47:r=25:d=0.24",
            pix_fmt: "yuv420p12le",
            dist_filter: NOISE,
            encode: &[],
        },
    ];
    for case in &cases {
        check(case, "name=psnr_hvs", "hvs");
    }
}

/// Identical inputs: libvmaf's psnr_hvs is `10 * -log10(0)` = inf, printed as null, per frame and
/// pooled; ours must print the same.
#[test]
fn psnr_hvs_identical_pair_is_null_like_libvmaf() {
    let case = Case {
        name: "hvs-identical",
        source: "testsrc2=s=64x48:r=25:d=0.2",
        pix_fmt: "yuv420p",
        dist_filter: "",
        encode: &[],
    };
    let dir = workdir("hvs-identical");
    let (r, _) = make_pair(&case, &dir);
    let theirs = oracle_json(&r, &r, "feature='name=psnr_hvs'", &dir, "id");
    let log = dir.join("ours-id.json");
    vmaf_rs(&r, &r, &["--feature", "name=psnr_hvs"], &log);
    let ours = read_json(&log);
    let keys = ["psnr_hvs_y", "psnr_hvs_cb", "psnr_hvs_cr", "psnr_hvs"];
    let (fo, ft) = (
        ours["frames"].as_array().unwrap(),
        theirs["frames"].as_array().unwrap(),
    );
    assert_eq!(fo.len(), ft.len());
    for (a, b) in fo.iter().zip(ft) {
        for k in keys {
            assert!(
                b["metrics"][k].is_null(),
                "libvmaf {k}: {}",
                b["metrics"][k]
            );
            assert_eq!(
                a["metrics"][k], b["metrics"][k],
                "frame {}: {k}",
                b["frameNum"]
            );
        }
    }
    for k in keys {
        assert_eq!(
            ours["pooled_metrics"][k], theirs["pooled_metrics"][k],
            "pooled {k}"
        );
    }
}
