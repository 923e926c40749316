//! Fidelity against the real libvmaf: every test case generates its own content with the oracle's
//! FFmpeg (lavfi sources, real encoders, rescaling, noise), runs libvmaf and `vmaf-rs` on it, and
//! compares every per-frame feature (within 1e-6, libvmaf's printed precision) and VMAF (within
//! 1e-4), plus the pooled metrics.

mod common;

use common::*;
use std::path::Path;
use std::process::Command;

fn vmaf_rs(reference: &Path, distorted: &Path, extra: &[&str], log: &Path) -> String {
    let mut c = Command::new(env!("CARGO_BIN_EXE_vmaf-rs"));
    c.arg("-r").arg(reference).arg("-d").arg(distorted);
    c.args(["--json", "-o"]).arg(log).args(extra);
    run(&mut c)
}

/// Runs both on a pair and compares. `oracle_opts` are libvmaf filter options, `ours` the
/// equivalent CLI arguments.
fn check(case: &Case, oracle_opts: &str, ours: &[&str], models: &[&str], tag: &str) {
    let dir = workdir(&format!("{}-{tag}", case.name));
    let (r, d) = make_pair(case, &dir);
    let theirs = oracle_json(&r, &d, oracle_opts, &dir, tag);
    let log = dir.join(format!("ours-{tag}.json"));
    vmaf_rs(&r, &d, ours, &log);
    compare_logs(
        &read_json(&log),
        &theirs,
        models,
        &format!("{} [{tag}]", case.name),
    );
}

fn default_model(case: &Case) {
    check(case, "", &["--threads", "2"], &["vmaf"], "default");
}

const NOISE: &str = "noise=alls=18:allf=t+u";

#[test]
fn testsrc2_8bit_420_noise() {
    default_model(&Case {
        name: "testsrc2-420-noise",
        source: "testsrc2=s=320x240:r=25:d=0.48",
        pix_fmt: "yuv420p",
        dist_filter: NOISE,
        encode: &[],
    });
}

#[test]
fn mandelbrot_10bit_420_x264() {
    default_model(&Case {
        name: "mandelbrot-420p10-x264",
        source: "mandelbrot=s=320x240:r=25,trim=end_frame=10",
        pix_fmt: "yuv420p10le",
        dist_filter: "",
        encode: &[
            "-c:v",
            "libx264",
            "-preset",
            "veryfast",
            "-crf",
            "30",
            "-pix_fmt",
            "yuv420p10le",
        ],
    });
}

#[test]
fn gradients_8bit_422_x264_low_quality() {
    default_model(&Case {
        name: "gradients-422-x264",
        source: "gradients=s=352x288:r=25:speed=0.05,trim=end_frame=10",
        pix_fmt: "yuv422p",
        dist_filter: "",
        encode: &[
            "-c:v",
            "libx264",
            "-preset",
            "ultrafast",
            "-crf",
            "40",
            "-pix_fmt",
            "yuv422p",
        ],
    });
}

#[test]
fn testsrc2_12bit_444_blur() {
    default_model(&Case {
        name: "testsrc2-444p12-blur",
        source: "testsrc2=s=256x192:r=25:d=0.4",
        pix_fmt: "yuv444p12le",
        dist_filter: "boxblur=2:1",
        encode: &[],
    });
}

#[test]
fn odd_size_rescaled_8bit() {
    default_model(&Case {
        name: "odd-321x243-rescale",
        source: "testsrc2=s=320x240:r=25:d=0.4,scale=321:243",
        pix_fmt: "yuv420p",
        dist_filter: "scale=160:120:flags=bilinear,scale=321:243:flags=bicubic",
        encode: &[],
    });
}

#[test]
fn scene_cut_x265() {
    default_model(&Case {
        name: "scene-cut-x265",
        source: "testsrc2=s=320x240:r=25:d=0.24[a];mandelbrot=s=320x240:r=25,trim=end_frame=6[b];[a][b]concat=n=2:v=1",
        pix_fmt: "yuv420p",
        dist_filter: "",
        encode: &["-c:v", "libx265", "-preset", "ultrafast", "-crf", "32", "-x265-params", "log-level=error"],
    });
}

#[test]
fn still_segment_with_noise() {
    default_model(&Case {
        name: "still-noise",
        source: "testsrc2=s=320x240:r=25:d=0.04,loop=loop=9:size=1,setpts=N/25/TB",
        pix_fmt: "yuv420p",
        dist_filter: NOISE,
        encode: &[],
    });
}

#[test]
fn identical_pair() {
    default_model(&Case {
        name: "identical",
        source: "mandelbrot=s=320x240:r=25,trim=end_frame=6",
        pix_fmt: "yuv420p",
        dist_filter: "",
        encode: &[],
    });
}

#[test]
fn libaom_10bit_odd_size() {
    default_model(&Case {
        name: "aom-420p10-odd",
        source: "testsrc2=s=200x160:r=25:d=0.32,scale=203:157",
        pix_fmt: "yuv420p10le",
        dist_filter: "",
        encode: &[
            "-c:v",
            "libaom-av1",
            "-cpu-used",
            "8",
            "-crf",
            "45",
            "-pix_fmt",
            "yuv420p10le",
        ],
    });
}

#[test]
fn sixteen_bit_420_noise() {
    default_model(&Case {
        name: "testsrc2-420p16-noise",
        source: "testsrc2=s=256x160:r=25:d=0.24",
        pix_fmt: "yuv420p16le",
        dist_filter: NOISE,
        encode: &[],
    });
}

const NOISY: Case = Case {
    name: "models",
    source: "testsrc2=s=320x240:r=25:d=0.4",
    pix_fmt: "yuv420p",
    dist_filter: "noise=alls=30:allf=t,boxblur=1:1",
    encode: &[],
};

#[test]
fn every_builtin_model_matches() {
    for v in [
        "vmaf_v0.6.1",
        "vmaf_v0.6.1neg",
        "vmaf_4k_v0.6.1",
        "vmaf_4k_v0.6.1neg",
    ] {
        let spec = format!("version={v}");
        check(
            &NOISY,
            &format!("model={spec}"),
            &["-m", &spec],
            &["vmaf"],
            v,
        );
    }
}

#[test]
fn two_models_named() {
    check(
        &NOISY,
        "model='version=vmaf_v0.6.1\\:name=a|version=vmaf_v0.6.1neg\\:name=b'",
        &[
            "-m",
            "version=vmaf_v0.6.1:name=a",
            "-m",
            "version=vmaf_v0.6.1neg:name=b",
        ],
        &["a", "b"],
        "two-models",
    );
}

#[test]
fn subsample_and_threads() {
    check(
        &NOISY,
        "n_subsample=3:n_threads=3",
        &["--subsample", "3", "--threads", "3"],
        &["vmaf"],
        "subsample3",
    );
}

#[test]
fn thread_counts_give_identical_logs() {
    let dir = workdir("threads-identical");
    let (r, d) = make_pair(&NOISY, &dir);
    let mut logs = Vec::new();
    for t in ["0", "1", "2", "5"] {
        let log = dir.join(format!("t{t}.json"));
        vmaf_rs(&r, &d, &["--threads", t], &log);
        let v = read_json(&log);
        logs.push((v["frames"].clone(), v["pooled_metrics"].clone()));
    }
    for l in &logs[1..] {
        assert_eq!(l, &logs[0], "results differ between thread counts");
    }
}
