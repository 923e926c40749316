//! Fidelity of the float VIF and float ADM extractors against the real libvmaf: each case makes
//! its own content with the oracle's FFmpeg, runs libvmaf and `vmaf-rs` with the same feature
//! options, and requires every per-frame value and every pooled value to equal libvmaf's as
//! printed (the default model runs alongside on both sides).

mod common;

use common::*;

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

/// `vif_prescale_method`: libvmaf's four scalers, down and up, at 8 and 10 bits, odd sizes, with
/// the option's `_pm_<word>` suffix (also without a prescale, where libvmaf copies).
#[test]
fn float_vif_prescale_methods() {
    let mut features = Vec::new();
    for method in ["nearest", "bilinear", "bicubic", "lanczos4"] {
        for ps in ["0.5", "1.7"] {
            features.push((
                format!("name=float_vif:vif_prescale={ps}:vif_prescale_method={method}:debug=true"),
                format!("vif-pm-{method}-{ps}"),
            ));
        }
    }
    features.push((
        "name=float_vif:vif_prescale_method=bilinear".into(),
        "vif-pm-bilinear-1".into(),
    ));
    features.push((
        "name=float_vif:vif_prescale=0.75:vif_prescale_method=lanczos4:vif_kernelscale=0.5".into(),
        "vif-pm-lanczos4-ks05".into(),
    ));
    let features: Vec<(&str, &str)> = features
        .iter()
        .map(|(f, t)| (f.as_str(), t.as_str()))
        .collect();
    for case in [
        Case {
            name: "fvif-pm-420-noise",
            source: "testsrc2=s=160x96:r=25:d=0.12",
            pix_fmt: "yuv420p",
            dist_filter: NOISE,
            encode: &[],
        },
        Case {
            name: "fvif-pm-444-10bit-odd",
            source: "testsrc2=s=97x61:r=25:d=0.12",
            pix_fmt: "yuv444p10le",
            dist_filter: "gblur=sigma=1.2",
            encode: &[],
        },
    ] {
        check_features(&case, &features);
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
    let cli = cli_path();
    for (feature, want) in [
        ("name=float_vif:vif_kernelscale=1.3", "vif_kernelscale"),
        ("name=float_vif:vif_prescale=0.2", "filter radius"),
        (
            "name=float_vif:vif_prescale_method=cubic",
            "expected one of nearest, bilinear, bicubic, lanczos4",
        ),
    ] {
        let out = std::process::Command::new(&cli)
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

const ADM_OPTIONS: &[(&str, &str)] = &[
    ("name=float_adm:debug=true", "adm-debug"),
    (
        "name=float_adm:adm_enhn_gain_limit=1.2:adm_min_val=0.99:debug=true",
        "adm-egl-min",
    ),
    (
        "name=float_adm:adm_norm_view_dist=5:adm_ref_display_height=2160:adm_noise_weight=0.1",
        "adm-geometry",
    ),
    (
        "name=float_adm:adm_csf_mode=1:adm_csf_scale=1.3:adm_csf_diag_scale=0.7:debug=true",
        "adm-barten",
    ),
    ("name=float_adm:adm_csf_mode=2", "adm-native-csf"),
    ("name=float_adm:adm_csf_mode=5", "adm-csf5"),
    ("name=float_adm:adm_bypass_cm=1", "adm-bypass"),
    (
        "name=float_adm:adm_adm3_apply_hm=true:adm_dlm_weight=0.3",
        "adm-hm",
    ),
    ("name=float_adm:adm_p_norm=2.5", "adm-pnorm"),
    ("name=float_adm:adm_dlm_weight=0.8", "adm-dlmw"),
    (
        "name=float_adm:adm_f1s0=0.01:adm_f1s1=0.02:adm_f1s2=0.03:adm_f1s3=0.04:\
         adm_f2s0=0.005:adm_f2s1=0.01:adm_f2s2=0.02:adm_f2s3=0.03",
        "adm-factors",
    ),
    ("name=float_adm:adm_skip_aim_scale=0", "adm-skip-aim0"),
    (
        "name=float_adm:adm_skip_scale0=true:debug=true",
        "adm-skip0",
    ),
];

#[test]
fn float_adm_8bit_420_noise_every_option() {
    check_features(
        &Case {
            name: "fadm-420-noise",
            source: "testsrc2=s=320x240:r=25:d=0.2",
            pix_fmt: "yuv420p",
            dist_filter: NOISE,
            encode: &[],
        },
        ADM_OPTIONS,
    );
}

#[test]
fn float_adm_odd_size_and_depths() {
    let cases = [
        Case {
            name: "fadm-420-odd",
            source: "testsrc2=s=97x61:r=25:d=0.2",
            pix_fmt: "yuv420p",
            dist_filter: NOISE,
            encode: &[],
        },
        Case {
            name: "fadm-422-10bit-x264",
            source: "mandelbrot=s=130x66:r=25,trim=end_frame=5",
            pix_fmt: "yuv422p10le",
            dist_filter: "",
            encode: &["-c:v", "libx264", "-crf", "35", "-preset", "ultrafast"],
        },
        Case {
            name: "fadm-444-12bit-blur",
            source: "testsrc2=s=96x80:r=25:d=0.2",
            pix_fmt: "yuv444p12le",
            dist_filter: "gblur=sigma=1.5",
            encode: &[],
        },
        Case {
            name: "fadm-420-16bit",
            source: "testsrc2=s=65x49:r=25:d=0.2",
            pix_fmt: "yuv420p16le",
            dist_filter: NOISE,
            encode: &[],
        },
        Case {
            name: "fadm-identical",
            source: "testsrc2=s=64x48:r=25:d=0.12",
            pix_fmt: "yuv420p",
            dist_filter: "",
            encode: &[],
        },
    ];
    for case in &cases {
        check_features(
            case,
            &[
                ("name=float_adm:debug=true", "adm-debug"),
                (
                    "name=float_adm:adm_enhn_gain_limit=1:debug=true",
                    "adm-egl1",
                ),
            ],
        );
    }
}

/// Both float features in one run, next to each other and the default model.
#[test]
fn float_vif_and_adm_together() {
    let case = Case {
        name: "fboth-420-x264",
        source: "testsrc2=s=176x144:r=25:d=0.2",
        pix_fmt: "yuv420p",
        dist_filter: "",
        encode: &["-c:v", "libx264", "-crf", "40", "-preset", "ultrafast"],
    };
    let dir = workdir(case.name);
    let (r, d) = make_pair(&case, &dir);
    let theirs = oracle_json(
        &r,
        &d,
        "feature='name=float_vif|name=float_adm\\:adm_enhn_gain_limit=1'",
        &dir,
        "both",
    );
    let log = dir.join("ours-both.json");
    vmaf_rs(
        &r,
        &d,
        &[
            "--feature",
            "name=float_vif",
            "--feature",
            "name=float_adm:adm_enhn_gain_limit=1",
        ],
        &log,
    );
    compare_logs(
        &read_json(&log),
        &theirs,
        &["vmaf"],
        "float_vif + float_adm",
    );
}

/// libvmaf appends float ADM's debug value `adm` outside its provided features, so feature
/// options rename every other output but never `adm` (the comparisons above check the values;
/// this pins the names).
#[test]
fn float_adm_debug_value_adm_is_never_suffixed() {
    let case = Case {
        name: "fadm-debug-names",
        source: "testsrc2=s=64x48:r=25:d=0.08",
        pix_fmt: "yuv420p",
        dist_filter: NOISE,
        encode: &[],
    };
    let dir = workdir(case.name);
    let (r, d) = make_pair(&case, &dir);
    let feature = "name=float_adm:debug=true:adm_enhn_gain_limit=1";
    let theirs = oracle_json(
        &r,
        &d,
        &format!("feature='{}'", feature.replace(':', "\\:")),
        &dir,
        "names",
    );
    let log = dir.join("ours-names.json");
    vmaf_rs(&r, &d, &["--feature", feature], &log);
    let ours = read_json(&log);
    for log in [&ours, &theirs] {
        let m = &frames(log)[&0];
        assert!(
            m.contains_key("adm") && m.contains_key("adm_num_egl_1"),
            "{m:?}"
        );
        assert!(!m.contains_key("adm_egl_1"), "{m:?}");
    }
    compare_logs(&ours, &theirs, &["vmaf"], "float_adm debug names");
}

/// float ADM divides with the CPU's RCPSS approximation (docs/FIDELITY.md): on content whose
/// printed values depend on its bits (found by a sweep; an exact reciprocal moves `adm_scale1`
/// and `adm_num` here), vmaf-rs equals libvmaf natively, and equals libvmaf run under qemu
/// (Westmere: float ADM has no ISA kernels), whose emulated RCPSS is exact, when it runs there too.
#[test]
fn float_adm_follows_the_cpus_reciprocal() {
    let case = Case {
        name: "fadm-rcpss-640x96",
        source: "testsrc2=s=640x96:r=25:d=0.2",
        pix_fmt: "yuv420p",
        dist_filter: NOISE,
        encode: &[],
    };
    let dir = workdir(case.name);
    let (r, d) = make_pair(&case, &dir);
    let feature = "name=float_adm:debug=true";
    let oracle = format!("feature='{}'", feature.replace(':', "\\:"));
    let mut logs = Vec::new();
    for cpu in [OracleCpu::Native, OracleCpu::C] {
        let tag = format!("{cpu:?}");
        let theirs = oracle_json_on(cpu, &r, &d, &oracle, &dir, &tag);
        let log = dir.join(format!("ours-{tag}.json"));
        vmaf_rs_on(cpu, &r, &d, &["--feature", feature], &log);
        compare_logs_as(
            &read_json(&log),
            &theirs,
            &["vmaf"],
            &format!("{} on {cpu:?}", case.name),
            cpu,
        );
        logs.push(theirs);
    }
    // For the record: how far libvmaf itself moves between the two CPUs here.
    let (a, b) = (frames(&logs[0]), frames(&logs[1]));
    let mut worst = 0f64;
    for (n, m) in &a {
        for (k, v) in m {
            if k.starts_with("adm") {
                worst = worst.max((v - b[n][k]).abs());
            }
        }
    }
    eprintln!("libvmaf float ADM, native vs qemu (exact RCPSS): max |diff| {worst:.1e}");
}

/// libvmaf convolves float VIF with AVX2 code on AVX2 hosts and with C elsewhere; both sum tap
/// for tap alike, so vmaf-rs's one implementation equals libvmaf on either CPU (both emulated).
#[test]
fn float_vif_equals_libvmaf_on_c_and_avx2_cpus() {
    let case = Case {
        name: "fvif-cpus",
        source: "testsrc2=s=97x61:r=25:d=0.12",
        pix_fmt: "yuv420p",
        dist_filter: NOISE,
        encode: &[],
    };
    let dir = workdir(case.name);
    let (r, d) = make_pair(&case, &dir);
    let feature = "name=float_vif:debug=true";
    let oracle = format!("feature='{}'", feature.replace(':', "\\:"));
    for cpu in [OracleCpu::Avx2, OracleCpu::C] {
        let tag = format!("{cpu:?}");
        let theirs = oracle_json_on(cpu, &r, &d, &oracle, &dir, &tag);
        let log = dir.join(format!("ours-{tag}.json"));
        vmaf_rs_on(cpu, &r, &d, &["--feature", feature], &log);
        compare_logs_as(
            &read_json(&log),
            &theirs,
            &["vmaf"],
            &format!("{} on {cpu:?}", case.name),
            cpu,
        );
    }
}
