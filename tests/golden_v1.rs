//! The eight VMAF v1.0.16 models against the real libvmaf: every feature they use (`cambi`,
//! `speed_chroma_uv`, `adm3`, `motion3` with the HFR options) and every model score, per frame and
//! pooled, equal as printed, on banding-prone gradients and dark scenes at 8 and 10 bits, 4:2:0,
//! 4:2:2 and 4:4:4, an odd size, 1080p- and 4K-shaped frames (SpEED's 2160 options halve the
//! planes and need 80x80 after that, so 4:2:0 cases are at least 320 rows high); plus model-string feature overloads
//! (`cambi.enc_width=…`) as libvmaf merges them.

mod common;

use common::*;

/// The built-in versions, with the short names both logs give them.
const MODELS: [(&str, &str); 8] = [
    ("vmaf_v1.0.16_3d0h", "v3d0h"),
    ("vmaf_v1.0.16_5d0h", "v5d0h"),
    ("vmaf_v1.0.16_1d5h_2160", "v1d5h_2160"),
    ("vmaf_v1.0.16_3d0h_2160", "v3d0h_2160"),
    ("vmaf_v1.0.16_hfr_3d0h", "hfr3d0h"),
    ("vmaf_v1.0.16_hfr_5d0h", "hfr5d0h"),
    ("vmaf_v1.0.16_hfr_1d5h_2160", "hfr1d5h_2160"),
    ("vmaf_v1.0.16_hfr_3d0h_2160", "hfr3d0h_2160"),
];

/// Runs `models` (version, name, extra model-string keys as `key=value` pairs joined by ':') on
/// both and compares every key.
fn check(case: &Case, models: &[(&str, &str, &str)], tag: &str) {
    let dir = workdir(&format!("{}-{tag}", case.name));
    let (r, d) = make_pair(case, &dir);
    let oracle_models: Vec<String> = models
        .iter()
        .map(|(v, n, extra)| {
            let mut s = format!("version={v}\\:name={n}");
            if !extra.is_empty() {
                s.push_str("\\:");
                s.push_str(&extra.replace(':', "\\:"));
            }
            s
        })
        .collect();
    let theirs = oracle_json(
        &r,
        &d,
        &format!("model='{}'", oracle_models.join("|")),
        &dir,
        tag,
    );
    let mut args = Vec::new();
    for (v, n, extra) in models {
        let mut s = format!("version={v}:name={n}");
        if !extra.is_empty() {
            s.push(':');
            s.push_str(extra);
        }
        args.push("-m".to_string());
        args.push(s);
    }
    args.push("--threads".into());
    args.push("2".into());
    let log = dir.join(format!("ours-{tag}.json"));
    let a: Vec<&str> = args.iter().map(String::as_str).collect();
    vmaf_rs(&r, &d, &a, &log);
    let names: Vec<&str> = models.iter().map(|m| m.1).collect();
    let worst = compare_logs(
        &read_json(&log),
        &theirs,
        &names,
        &format!("{} [{tag}]", case.name),
    );
    let max = worst.values().fold(0f64, |a, &b| a.max(b));
    eprintln!(
        "{} [{tag}]: {} keys equal to libvmaf as printed (largest difference {max})",
        case.name,
        worst.len()
    );
}

fn all_models() -> Vec<(&'static str, &'static str, &'static str)> {
    MODELS.iter().map(|&(v, n)| (v, n, "")).collect()
}

/// A dark, slowly varying gradient quantised by an encode: CAMBI's banding case.
const GRADIENT: &str = "gradients=s=W:c0=0x101018:c1=0x303040:x0=0:y0=0:x1=W:y1=H:d=0.2:r=25";

fn gradient(size: &str) -> String {
    let (w, h) = size.split_once('x').unwrap();
    GRADIENT
        .replace("s=W", &format!("s={size}"))
        .replace("x1=W", &format!("x1={w}"))
        .replace("y1=H", &format!("y1={h}"))
}

#[test]
fn all_eight_models_8bit_420_gradient_x264() {
    let src: &'static str = Box::leak(gradient("720x404").into_boxed_str());
    let case = Case {
        name: "v1-420-8bit-gradient",
        source: src,
        pix_fmt: "yuv420p",
        dist_filter: "",
        encode: &["-c:v", "libx264", "-crf", "30", "-preset", "ultrafast"],
    };
    check(&case, &all_models(), "all");
}

#[test]
fn all_eight_models_10bit_422_and_444() {
    for (name, pix) in [
        ("v1-422-10bit", "yuv422p10le"),
        ("v1-444-10bit", "yuv444p10le"),
    ] {
        let case = Case {
            name,
            source: "testsrc2=s=322x182:r=25:d=0.2,eq=brightness=-0.3",
            pix_fmt: pix,
            dist_filter: "gblur=sigma=1.2,noise=alls=6:allf=t",
            encode: &[],
        };
        check(&case, &all_models(), "all");
    }
}

#[test]
fn all_eight_models_odd_size_8bit() {
    let case = Case {
        name: "v1-odd-8bit",
        source: "mandelbrot=s=331x323:r=25,trim=end_frame=6",
        pix_fmt: "yuv420p",
        dist_filter: "noise=alls=14:allf=t+u",
        encode: &[],
    };
    check(&case, &all_models(), "all");
}

/// 1080p- and 4K-shaped frames (few frames): CAMBI's high-resolution speed-up and the 2160
/// models' display heights at the sizes they are made for.
#[test]
fn full_sizes_1080p_and_2160p() {
    for (name, size, models) in [
        ("v1-1080p", "1920x1080", vec![MODELS[0], MODELS[4]]),
        (
            "v1-2160p",
            "3840x2160",
            vec![MODELS[2], MODELS[3], MODELS[7]],
        ),
    ] {
        let src: &'static str =
            Box::leak(format!("{},trim=end_frame=2", gradient(size)).into_boxed_str());
        let case = Case {
            name,
            source: src,
            pix_fmt: "yuv420p10le",
            dist_filter: "",
            encode: &["-c:v", "libx264", "-crf", "34", "-preset", "ultrafast"],
        };
        let ms: Vec<_> = models.into_iter().map(|(v, n)| (v, n, "")).collect();
        check(&case, &ms, "full");
    }
}

/// Feature overloads in the model string, as libvmaf merges them into the model's own options.
#[test]
fn model_string_feature_overloads() {
    let case = Case {
        name: "v1-overloads",
        source: "testsrc2=s=320x180:r=25:d=0.2",
        pix_fmt: "yuv420p",
        dist_filter: "noise=alls=10:allf=t",
        encode: &[],
    };
    check(
        &case,
        &[
            (
                "vmaf_v1.0.16_3d0h",
                "enc",
                "cambi.enc_width=1280:cambi.enc_height=720",
            ),
            (
                "vmaf_v1.0.16_hfr_3d0h",
                "mfz",
                "motion.motion_force_zero=true",
            ),
        ],
        "overloads",
    );
}
