//! Fidelity of the simple float extractors (`float_psnr`, `float_moment`, `float_ansnr`,
//! `float_motion`) against the real libvmaf: generated content at every bit depth libvmaf's
//! float features take, odd sizes, every layout, options; every per-frame and pooled value must
//! equal libvmaf's as printed.

mod common;

use common::*;

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

#[test]
fn float_motion_every_depth() {
    every_case("name=float_motion", "float_motion");
}

/// Every option of float_motion (names renamed as libvmaf renames them), one option set per
/// content case.
#[test]
fn float_motion_options() {
    let sets = [
        "name=float_motion:motion_force_zero=true",
        "name=float_motion:motion_fps_weight=2.5:motion_max_val=3.5",
        "name=float_motion:motion_blend_factor=0.3:motion_blend_offset=2:debug=false",
        "name=float_motion:motion_filter_size=3:motion_add_scale1=true",
        "name=float_motion:motion_filter_size=1:motion_add_scale1=true:motion_fps_weight=0.5",
    ];
    for (case, feature) in cases().iter().zip(sets) {
        check(
            case,
            &oracle_feature(feature),
            &["--feature", feature],
            "opts",
        );
    }
    // Sizes other than 1 and 3 take the 5-tap filter, but still rename the features.
    let feature = "name=float_motion:motion_filter_size=0:motion_max_val=0.25";
    check(
        &cases()[0],
        &oracle_feature(feature),
        &["--feature", feature],
        "mfs0",
    );
}

/// `motion_add_uv`: the chroma planes' motion added to luma's, at every depth and layout (4:2:0,
/// odd 4:2:0, 4:2:2, 4:4:4); three workers, so most frames read the previous reference's chroma
/// from the engine's ring rather than from the instance's own last blur; with n_subsample, and
/// with motion_add_scale1 on 4:4:4 (8 and 10 bits).
#[test]
fn float_motion_add_uv() {
    let feature = "name=float_motion:motion_add_uv=true";
    for case in cases() {
        check(
            &case,
            &oracle_feature(feature),
            &["--feature", feature, "--threads", "3"],
            "mau",
        );
    }
    let feature = "name=float_motion:motion_add_uv=true:motion_filter_size=3:motion_fps_weight=1.5";
    check(
        &cases()[0],
        &format!("n_subsample=2:{}", oracle_feature(feature)),
        &["--feature", feature, "--threads", "2", "--subsample", "2"],
        "mau-sub2",
    );
    let feature = "name=float_motion:motion_add_uv=true:motion_add_scale1=true";
    for (name, pix_fmt) in [
        ("fs-444-mau", "yuv444p"),
        ("fs-444-10bit-mau", "yuv444p10le"),
    ] {
        let case = Case {
            name,
            source: "testsrc2=s=97x61:r=25:d=0.24",
            pix_fmt,
            dist_filter: NOISE,
            encode: &[],
        };
        check(
            &case,
            &oracle_feature(feature),
            &["--feature", feature, "--threads", "2"],
            "mau-mdc",
        );
    }
}

/// With n_subsample the motion of every frame is still computed (libvmaf runs float_motion on
/// every frame) and the scored frames show it; two workers see non-consecutive frames.
#[test]
fn float_motion_subsampled() {
    let feature = "name=float_motion|name=float_psnr|name=float_ansnr|name=float_moment";
    for (case, threads) in cases().iter().take(3).zip(["1", "2", "3"]) {
        let ours: Vec<&str> = feature
            .split('|')
            .flat_map(|f| ["--feature", f])
            .chain(["--subsample", "3", "--threads", threads])
            .collect();
        let oracle = format!("n_subsample=3:feature='{feature}'");
        check(case, &oracle, &ours, &format!("sub3-t{threads}"));
    }
}

/// Streams of one and two frames (libvmaf's flush writes the last frame's motion2/motion3), and
/// identical pictures (PSNR at its cap), flat mid-grey ones (ANSNR at its cap, zero motion).
#[test]
fn short_and_identical_streams() {
    let feature = "name=float_motion|name=float_psnr|name=float_ansnr|name=float_moment";
    let ours: Vec<&str> = feature.split('|').flat_map(|f| ["--feature", f]).collect();
    for (name, source, dist_filter) in [
        ("fs-one-frame", "testsrc2=s=64x48:r=25:d=0.04", NOISE),
        ("fs-two-frames", "testsrc2=s=64x48:r=5:d=0.4", NOISE),
        ("fs-identical", "testsrc2=s=64x48:r=5:d=0.8", ""),
        // Mid-grey everywhere: zero after libvmaf's -128, so ANSNR's noise is 0 (its cap).
        (
            "fs-flat",
            "color=s=64x48:r=25:d=0.12,format=yuv420p,geq=lum=128:cb=128:cr=128",
            "",
        ),
    ] {
        let case = Case {
            name,
            source,
            pix_fmt: "yuv420p",
            dist_filter,
            encode: &[],
        };
        check(&case, &format!("feature='{feature}'"), &ours, "short");
    }
}

/// No host dependence: libvmaf's float_motion convolves with its AVX2 code on AVX2 and AVX-512
/// hosts and with its C code elsewhere, which compute every pixel alike; the four extractors'
/// values equal libvmaf's on an emulated C-only CPU and an emulated AVX2 CPU too (our values are
/// the same on every host; only the model's ADM/VIF family follows the CPU).
#[test]
fn same_values_on_every_cpu() {
    let feature = "name=float_motion|name=float_psnr|name=float_ansnr|name=float_moment";
    let case = &cases()[0];
    let dir = workdir(&format!("{}-cpus", case.name));
    let (r, d) = make_pair(case, &dir);
    let log = dir.join("ours.json");
    let ours: Vec<&str> = feature.split('|').flat_map(|f| ["--feature", f]).collect();
    vmaf_rs(&r, &d, &ours, &log);
    let ours = frames(&read_json(&log));
    for cpu in [OracleCpu::C, OracleCpu::Avx2] {
        let theirs = frames(&oracle_json_on(
            cpu,
            &r,
            &d,
            &format!("feature='{feature}'"),
            &dir,
            &format!("{cpu:?}"),
        ));
        assert_eq!(ours.len(), theirs.len());
        let mut compared = 0;
        for (n, m) in &theirs {
            for (k, v) in m {
                if k.starts_with("float_") || k.starts_with("motion") {
                    assert_eq!(ours[n][k], *v, "frame {n} {k} on {cpu:?}");
                    compared += 1;
                }
            }
        }
        assert_eq!(compared, theirs.len() * 10, "{cpu:?}: every key compared");
    }
}

/// What libvmaf cannot compute is refused at configure time, naming the feature and the fix:
/// depths other than 8/10/12/16 bits, motion_add_uv without chroma or with motion_add_scale1 on
/// subsampled chroma (where libvmaf reads outside the chroma planes), out-of-range options.
#[test]
fn refusals_name_the_feature_and_the_fix() {
    let case = Case {
        name: "fs-9bit",
        source: "testsrc2=s=64x48:r=25:d=0.08",
        pix_fmt: "yuv420p9le",
        dist_filter: NOISE,
        encode: &[],
    };
    let dir = workdir("fs-refusals");
    let (r9, d9) = make_pair(&case, &dir);
    let dir8 = workdir("fs-refusals-8bit");
    let (r8, d8) = make_pair(
        &Case {
            pix_fmt: "yuv420p",
            ..case.clone()
        },
        &dir8,
    );
    let cli = cli_path();
    let fails = |nine_bit: bool, feature: &str, want: &[&str]| {
        let (r, d) = if nine_bit { (&r9, &d9) } else { (&r8, &d8) };
        let out = std::process::Command::new(&cli)
            .arg("-r")
            .arg(r)
            .arg("-d")
            .arg(d)
            .args(["--feature", feature, "--json", "-o"])
            .arg(dir.join("x.json"))
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stderr).to_string();
        assert!(!out.status.success(), "{feature}: accepted");
        for w in want {
            assert!(text.contains(w), "{feature}: {text}");
        }
    };
    for f in ["float_psnr", "float_moment", "float_ansnr", "float_motion"] {
        fails(
            true,
            &format!("name={f}"),
            &[&format!("feature {f}: 9-bit"), "8, 10, 12 or 16"],
        );
    }
    fails(
        false,
        "name=float_motion:motion_add_uv=true:motion_add_scale1=true",
        &["motion_add_uv with motion_add_scale1", "use 4:4:4 input"],
    );
    let dir_gray = workdir("fs-refusals-gray");
    let (rg, dg) = make_pair(
        &Case {
            pix_fmt: "gray",
            ..case.clone()
        },
        &dir_gray,
    );
    let out = std::process::Command::new(&cli)
        .arg("-r")
        .arg(&rg)
        .arg("-d")
        .arg(&dg)
        .args(["--feature", "name=float_motion:motion_add_uv=true", "-q"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "motion_add_uv on gray: accepted");
    assert!(text.contains("gray (4:0:0)"), "{text}");
    fails(
        false,
        "name=float_motion:motion_filter_size=10",
        &["motion_filter_size"],
    );
    fails(
        false,
        "name=float_motion:motion_fps_weight=6",
        &["motion_fps_weight"],
    );
}
