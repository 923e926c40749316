//! Fidelity of the float VIF and float ADM extractors against the real libvmaf: each case makes
//! its own content with the oracle's FFmpeg, runs libvmaf and `vmaf-rs` with the same feature
//! options, and requires every per-frame value and every pooled value to equal libvmaf's as
//! printed (the default model runs alongside on both sides).

mod common;

use common::*;
use std::path::Path;

fn vmaf_rs(reference: &Path, distorted: &Path, extra: &[&str], log: &Path) -> String {
    let cli = std::env::var_os("VMAF_RS_CLI")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| env!("CARGO_BIN_EXE_vmaf-rs").into());
    let mut c = std::process::Command::new(cli);
    c.arg("-r").arg(reference).arg("-d").arg(distorted);
    c.args(["--json", "-o"]).arg(log).args(extra);
    run(&mut c)
}

/// Makes the pair of `case` once, then for each (feature string, tag) runs libvmaf and our CLI
/// with that feature and compares the logs exactly.
fn check_features(case: &Case, features: &[(&str, &str)]) {
    let dir = workdir(case.name);
    let (r, d) = make_pair(case, &dir);
    for (feature, tag) in features {
        // libvmaf's filter option: the feature string with its ':' escaped.
        let oracle = format!("feature='{}'", feature.replace(':', "\\:"));
        let theirs = oracle_json(&r, &d, &oracle, &dir, tag);
        let log = dir.join(format!("ours-{tag}.json"));
        vmaf_rs(&r, &d, &["--threads", "2", "--feature", feature], &log);
        compare_logs(
            &read_json(&log),
            &theirs,
            &["vmaf"],
            &format!("{} [{tag}]", case.name),
        );
    }
}

const NOISE: &str = "noise=alls=18:allf=t+u";

const VIF_OPTIONS: &[(&str, &str)] = &[
    ("name=float_vif:debug=true", "vif-debug"),
    (
        "name=float_vif:vif_enhn_gain_limit=1.2:vif_sigma_nsq=1.5",
        "vif-egl-snsq",
    ),
    ("name=float_vif:vif_kernelscale=0.5:debug=true", "vif-ks05"),
    ("name=float_vif:vif_kernelscale=2", "vif-ks2"),
    ("name=float_vif:vif_kernelscale=3", "vif-ks3"),
    ("name=float_vif:vif_kernelscale=0.711111", "vif-ks0711"),
    (
        "name=float_vif:vif_skip_scale0=true:debug=true",
        "vif-skip0",
    ),
    (
        "name=float_vif:vif_scale1_min_val=0.97:vif_scale2_min_val=0.99:vif_scale3_min_val=0.995",
        "vif-minval",
    ),
    ("name=float_vif:vif_prescale=0.5", "vif-ps05"),
    ("name=float_vif:vif_prescale=1.5", "vif-ps15"),
];

#[test]
fn float_vif_8bit_420_noise_every_option() {
    check_features(
        &Case {
            name: "fvif-420-noise",
            source: "testsrc2=s=320x240:r=25:d=0.2",
            pix_fmt: "yuv420p",
            dist_filter: NOISE,
            encode: &[],
        },
        VIF_OPTIONS,
    );
}

#[test]
fn float_vif_odd_size_and_depths() {
    let cases = [
        Case {
            name: "fvif-420-odd",
            source: "testsrc2=s=97x61:r=25:d=0.2",
            pix_fmt: "yuv420p",
            dist_filter: NOISE,
            encode: &[],
        },
        Case {
            name: "fvif-422-10bit-x264",
            source: "mandelbrot=s=130x66:r=25,trim=end_frame=5",
            pix_fmt: "yuv422p10le",
            dist_filter: "",
            encode: &["-c:v", "libx264", "-crf", "35", "-preset", "ultrafast"],
        },
        Case {
            name: "fvif-444-12bit-blur",
            source: "testsrc2=s=96x80:r=25:d=0.2",
            pix_fmt: "yuv444p12le",
            dist_filter: "gblur=sigma=1.5",
            encode: &[],
        },
        Case {
            name: "fvif-420-16bit",
            source: "testsrc2=s=65x49:r=25:d=0.2",
            pix_fmt: "yuv420p16le",
            dist_filter: NOISE,
            encode: &[],
        },
    ];
    for case in &cases {
        check_features(
            case,
            &[
                ("name=float_vif:debug=true", "vif-debug"),
                ("name=float_vif:vif_enhn_gain_limit=1", "vif-egl1"),
            ],
        );
    }
}

/// Options and pictures libvmaf cannot take are refused with the feature's name and the fix.
#[test]
fn float_vif_refuses_what_libvmaf_cannot_take() {
    let dir = workdir("fvif-refuse");
    let (r, d) = make_pair(
        &Case {
            name: "fvif-refuse",
            source: "testsrc2=s=64x48:r=25:d=0.08",
            pix_fmt: "yuv420p",
            dist_filter: "",
            encode: &[],
        },
        &dir,
    );
    let cli = env!("CARGO_BIN_EXE_vmaf-rs");
    for (feature, want) in [
        ("name=float_vif:vif_kernelscale=1.3", "vif_kernelscale"),
        ("name=float_vif:vif_prescale=0.2", "filter radius"),
        (
            "name=float_vif:vif_prescale_method=bicubic",
            "unknown option",
        ),
    ] {
        let out = std::process::Command::new(cli)
            .arg("-r")
            .arg(&r)
            .arg("-d")
            .arg(&d)
            .args(["--feature", feature, "-q"])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{feature}: accepted");
        assert!(
            err.contains(want),
            "{feature}: message '{err}' lacks '{want}'"
        );
    }
}
