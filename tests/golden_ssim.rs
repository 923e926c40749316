//! `float_ssim` and `float_ms_ssim` against the real libvmaf: content generated with the oracle's
//! FFmpeg (8-bit 4:2:0 incl. odd sizes, 10-bit 4:2:2 x264, 12-bit 4:4:4 blur, 16-bit), every
//! option, every per-frame key and every pooled value equal as printed; pictures too small for a
//! feature refused at configure time, as libvmaf fails on them.

mod common;

use common::*;
use std::process::Command;

/// Runs libvmaf and our CLI with one feature string (`name=…:opt=…`) and compares the logs
/// (the default model included on both sides).
fn check(case: &Case, feature: &str, tag: &str) {
    let name = feature
        .split(':')
        .next()
        .unwrap()
        .trim_start_matches("name=");
    // Tests run in parallel: one directory per case, feature and tag.
    let dir = workdir(&format!("{}-{name}-{tag}", case.name));
    let (r, d) = make_pair(case, &dir);
    // libvmaf's filter option: the feature string with its ':' escaped.
    let oracle = format!("feature='{}'", feature.replace(':', "\\:"));
    let theirs = oracle_json(&r, &d, &oracle, &dir, tag);
    let log = dir.join(format!("ours-{tag}.json"));
    vmaf_rs(&r, &d, &["--threads", "2", "--feature", feature], &log);
    let worst = compare_logs(
        &read_json(&log),
        &theirs,
        &["vmaf"],
        &format!("{} [{tag}]", case.name),
    );
    // The feature's keys must be there (the comparison alone would pass if both lacked them).
    let name = feature
        .split(':')
        .next()
        .unwrap()
        .trim_start_matches("name=");
    assert!(worst.contains_key(name), "{tag}: no {name} in the logs");
}

const NOISE: &str = "noise=alls=18:allf=t+u";

/// 97x61 4:2:0 (odd both ways, from a rescale: testsrc2 itself rounds 4:2:0 sizes to even).
const ODD: Case = Case {
    name: "ssim-420-97x61",
    source: "testsrc2=s=96x60:r=25:d=0.32,scale=97:61",
    pix_fmt: "yuv420p",
    dist_filter: NOISE,
    encode: &[],
};

const QVGA: Case = Case {
    name: "ssim-420-320x240",
    source: "testsrc2=s=320x240:r=25:d=0.2",
    pix_fmt: "yuv420p",
    dist_filter: NOISE,
    encode: &[],
};

const X264_10: Case = Case {
    name: "ssim-422p10-x264",
    source: "mandelbrot=s=200x180:r=25,trim=end_frame=5",
    pix_fmt: "yuv422p10le",
    dist_filter: "",
    encode: &["-c:v", "libx264", "-crf", "35", "-preset", "ultrafast"],
};

const BLUR_12: Case = Case {
    name: "ssim-444p12-blur",
    source: "testsrc2=s=181x177:r=25:d=0.2",
    pix_fmt: "yuv444p12le",
    dist_filter: "gblur=sigma=1.5",
    encode: &[],
};

const DEEP_16: Case = Case {
    name: "ssim-420p16-noise",
    source: "testsrc2=s=192x176:r=25:d=0.16",
    pix_fmt: "yuv420p16le",
    dist_filter: NOISE,
    encode: &[],
};

/// libvmaf's automatic scale is 2 here (`round(384 / 256)`).
const AUTO_SCALE: Case = Case {
    name: "ssim-420-400x384",
    source: "testsrc2=s=400x384:r=25:d=0.12",
    pix_fmt: "yuv420p",
    dist_filter: "scale=200:192,scale=400:384:flags=bicubic",
    encode: &[],
};

const IDENTICAL: Case = Case {
    name: "ssim-identical",
    source: "testsrc2=s=192x180:r=25:d=0.12",
    pix_fmt: "yuv420p",
    dist_filter: "",
    encode: &[],
};

/// `float_ssim` on every layout and depth, with every option and explicit scales (odd sizes
/// decimate to `n / scale + (n & 1)`, libvmaf's rule, in place).
#[test]
fn float_ssim_every_depth_layout_and_option() {
    let lcs = "name=float_ssim:enable_lcs=true";
    for case in [&ODD, &QVGA, &X264_10, &BLUR_12, &DEEP_16, &IDENTICAL] {
        check(case, lcs, "lcs");
    }
    check(&AUTO_SCALE, lcs, "auto-scale");
    check(&QVGA, "name=float_ssim:scale=1:enable_lcs=true", "scale1");
    check(&ODD, "name=float_ssim:scale=2:enable_lcs=true", "scale2");
    check(&ODD, "name=float_ssim:scale=3:enable_lcs=true", "scale3");
    check(&QVGA, "name=float_ssim:scale=10:enable_lcs=true", "scale10");
    check(&X264_10, "name=float_ssim:scale=4", "scale4");
    check(&ODD, "name=float_ssim:enable_db=true", "db");
    check(
        &BLUR_12,
        "name=float_ssim:enable_db=true:clip_db=true",
        "clip-db",
    );
    // Identical pictures: SSIM 1, so the dB value is the cap.
    check(
        &IDENTICAL,
        "name=float_ssim:enable_db=true:clip_db=true",
        "clip-db",
    );
    check(
        &QVGA,
        "name=float_ssim:enable_db=true:clip_db=true:enable_lcs=true:scale=2",
        "all",
    );
}

/// Our CLI's result and message for a feature string on a case.
fn refused(case: &Case, feature: &str) -> String {
    let dir = workdir(&format!("{}-refused", case.name));
    let (r, d) = make_pair(case, &dir);
    let out = Command::new(cli_path())
        .arg("-r")
        .arg(&r)
        .arg("-d")
        .arg(&d)
        .args(["--json", "-o"])
        .arg(dir.join("ours.json"))
        .args(["--feature", feature])
        .output()
        .unwrap();
    assert!(!out.status.success(), "{feature} accepted on {}", case.name);
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// A picture smaller than the 11x11 window after `float_ssim`'s decimation is refused at
/// configure time, naming the feature and the fix.
#[test]
fn float_ssim_refuses_too_small() {
    let msg = refused(&ODD, "name=float_ssim:scale=10");
    assert!(
        msg.contains("float_ssim") && msg.contains("10x7") && msg.contains("smaller scale"),
        "{msg}"
    );
    let tiny = Case {
        name: "ssim-tiny",
        source: "testsrc2=s=24x16:r=25:d=0.08",
        pix_fmt: "yuv444p",
        dist_filter: NOISE,
        encode: &[],
    };
    let msg = refused(&tiny, "name=float_ssim:scale=2");
    assert!(msg.contains("float_ssim") && msg.contains("12x8"), "{msg}");
}

/// 177x179 4:2:0, odd both ways (above `float_ms_ssim`'s 176x176 minimum).
const ODD_MS: Case = Case {
    name: "ms-ssim-420-177x179",
    source: "testsrc2=s=176x180:r=25:d=0.2,scale=177:179",
    pix_fmt: "yuv420p",
    dist_filter: NOISE,
    encode: &[],
};

/// Exactly the minimum libvmaf accepts.
const MIN_MS: Case = Case {
    name: "ms-ssim-444-176x176",
    source: "mandelbrot=s=176x176:r=25,trim=end_frame=4",
    pix_fmt: "yuv444p",
    dist_filter: "gblur=sigma=1",
    encode: &[],
};

/// `float_ms_ssim` on every layout and depth with every option: the score and, with
/// `enable_lcs`, the 15 per-scale terms.
#[test]
fn float_ms_ssim_every_depth_layout_and_option() {
    let lcs = "name=float_ms_ssim:enable_lcs=true";
    for case in [
        &ODD_MS, &MIN_MS, &QVGA, &X264_10, &BLUR_12, &DEEP_16, &IDENTICAL,
    ] {
        check(case, lcs, "lcs");
    }
    check(&ODD_MS, "name=float_ms_ssim", "default");
    check(&X264_10, "name=float_ms_ssim:enable_db=true", "db");
    check(
        &BLUR_12,
        "name=float_ms_ssim:enable_db=true:clip_db=true:enable_lcs=true",
        "clip-db",
    );
    // Identical pictures: MS-SSIM 1, so the dB value is the cap.
    check(
        &IDENTICAL,
        "name=float_ms_ssim:enable_db=true:clip_db=true",
        "clip-db",
    );
}

/// Below 176 pixels on either side libvmaf fails the run ("scale below 1x1"); we refuse the
/// configuration, naming the feature and the minimum.
#[test]
fn float_ms_ssim_refuses_too_small() {
    for (name, source) in [
        ("ms-ssim-175x200", "testsrc2=s=175x200:r=25:d=0.08"),
        ("ms-ssim-200x175", "testsrc2=s=200x175:r=25:d=0.08"),
    ] {
        let case = Case {
            name,
            source,
            pix_fmt: "yuv444p",
            dist_filter: NOISE,
            encode: &[],
        };
        let msg = refused(&case, "name=float_ms_ssim");
        assert!(
            msg.contains("float_ms_ssim") && msg.contains("176x176"),
            "{msg}"
        );
        // libvmaf fails on it too.
        let dir = workdir(&format!("{name}-oracle"));
        let (r, d) = make_pair(&case, &dir);
        let log = dir.join("oracle.json");
        let out = Command::new(oracle())
            .args(["-hide_banner", "-loglevel", "error", "-nostdin", "-y", "-i"])
            .arg(&d)
            .arg("-i")
            .arg(&r)
            .arg("-lavfi")
            .arg(format!(
                "libvmaf=feature=name=float_ms_ssim:log_fmt=json:log_path={}",
                log.display()
            ))
            .args(["-f", "null", "-"])
            .output()
            .unwrap();
        assert!(!out.status.success(), "libvmaf accepted {name}");
    }
}
