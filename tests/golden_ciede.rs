//! Fidelity of `psnr_hvs` and `ciede` against the real libvmaf: each case generates its content
//! with the oracle's FFmpeg, runs libvmaf and `vmaf-rs`, and requires every per-frame value and
//! every pooled value to equal libvmaf's as printed.

mod common;

use common::*;

/// Runs both on a pair with one feature (no model) and compares every key.
fn check(case: &Case, feature: &str, tag: &str) {
    let dir = workdir(&format!("{}-{tag}", case.name));
    let (r, d) = make_pair(case, &dir);
    // lavfi sources round odd sizes to even: a size in the name must be the pair's.
    fn size(p: &str) -> Option<(&str, &str)> {
        p.split_once('x')
            .filter(|(w, h)| w.parse::<u32>().is_ok() && h.parse::<u32>().is_ok())
    }
    if let Some((w, h)) = case.name.split('-').find_map(size) {
        let header = std::fs::read(&r).unwrap();
        let want = format!("W{w} H{h} ");
        assert!(
            header.windows(want.len()).any(|x| x == want.as_bytes()),
            "{}: not {w}x{h}",
            case.name
        );
    }
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
            source: "testsrc2=s=160x120:r=25:d=0.32,scale=97:61",
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
            name: "hvs-444-8bit-odd-101x75",
            source: "testsrc2=s=160x120:r=25:d=0.32,scale=101:75",
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
            name: "hvs-422-10bit-odd-131x67",
            source: "testsrc2=s=160x120:r=25:d=0.32,scale=131:67",
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
            name: "hvs-420-12bit-odd-83x47",
            source: "testsrc2=s=160x120:r=25:d=0.24,scale=83:47",
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

/// `ciede` on every layout and depth libvmaf takes, including odd sizes where libvmaf stays
/// inside its picture buffer (4:2:2 and 4:4:4 always; 4:2:0 with an even height and, for odd
/// widths, `w >> 1` not a multiple of 32): 4:2:2 exercises libvmaf's row-overrunning chroma reads.
#[test]
fn ciede_every_layout_and_depth() {
    let cases = [
        Case {
            name: "ciede-420-320x240",
            source: "testsrc2=s=320x240:r=25:d=0.4",
            pix_fmt: "yuv420p",
            dist_filter: NOISE,
            encode: &[],
        },
        Case {
            name: "ciede-420-160x96",
            source: "mandelbrot=s=160x96:r=25,trim=end_frame=8",
            pix_fmt: "yuv420p",
            dist_filter: "gblur=sigma=1.2",
            encode: &[],
        },
        Case {
            name: "ciede-420-odd-width-97x60",
            source: "testsrc2=s=160x120:r=25:d=0.32,scale=97:60",
            pix_fmt: "yuv420p",
            dist_filter: NOISE,
            encode: &[],
        },
        Case {
            name: "ciede-422-8bit-x264",
            source: "testsrc2=s=176x144:r=25:d=0.4",
            pix_fmt: "yuv422p",
            dist_filter: "",
            encode: &["-c:v", "libx264", "-crf", "35", "-preset", "ultrafast"],
        },
        Case {
            // w >> 1 = 64 = the row pitch: the overrun reads the next chroma row.
            name: "ciede-422-128x96",
            source: "testsrc2=s=128x96:r=25:d=0.32",
            pix_fmt: "yuv422p",
            dist_filter: NOISE,
            encode: &[],
        },
        Case {
            name: "ciede-422-odd-101x75",
            source: "testsrc2=s=160x120:r=25:d=0.32,scale=101:75",
            pix_fmt: "yuv422p",
            dist_filter: NOISE,
            encode: &[],
        },
        Case {
            name: "ciede-444-8bit-odd-101x75",
            source: "testsrc2=s=160x120:r=25:d=0.32,scale=101:75",
            pix_fmt: "yuv444p",
            dist_filter: "boxblur=1:1",
            encode: &[],
        },
        Case {
            name: "ciede-420-10bit-x264",
            source: "mandelbrot=s=192x108:r=25,trim=end_frame=8",
            pix_fmt: "yuv420p10le",
            dist_filter: "",
            encode: &["-c:v", "libx264", "-crf", "30", "-preset", "ultrafast"],
        },
        Case {
            name: "ciede-420-10bit-odd-131x68",
            source: "testsrc2=s=160x120:r=25:d=0.24,scale=131:68",
            pix_fmt: "yuv420p10le",
            dist_filter: NOISE,
            encode: &[],
        },
        Case {
            name: "ciede-422-10bit-odd-65x75",
            source: "testsrc2=s=160x120:r=25:d=0.24,scale=65:75",
            pix_fmt: "yuv422p10le",
            dist_filter: NOISE,
            encode: &[],
        },
        Case {
            name: "ciede-444-12bit",
            source: "testsrc2=s=128x96:r=25:d=0.32",
            pix_fmt: "yuv444p12le",
            dist_filter: "gblur=sigma=1.5,noise=alls=8:allf=t",
            encode: &[],
        },
        Case {
            name: "ciede-420-16bit",
            source: "testsrc2=s=96x80:r=25:d=0.24",
            pix_fmt: "yuv420p16le",
            dist_filter: NOISE,
            encode: &[],
        },
    ];
    for case in &cases {
        check(case, "name=ciede", "ciede");
    }
}

/// Where libvmaf's `ciede` reads past the end of its picture buffer (4:2:0 with an odd height,
/// or an odd width whose `w >> 1` is a multiple of 32), its scores vary between runs; vmaf_rs
/// reads zeros there and is deterministic. Checks the predicate against the layouts measured, and
/// that ours gives one answer.
#[test]
fn ciede_where_libvmaf_reads_out_of_bounds() {
    use vmaf_rs::feature::ciede::libvmaf_reads_out_of_bounds as oob;
    use vmaf_rs::picture::{ChromaLayout, PictureFormat};
    let f = |width, height, layout| PictureFormat {
        width,
        height,
        bpc: 8,
        layout,
    };
    for (w, h, l, expect) in [
        (96, 61, ChromaLayout::Yuv420, true),
        (97, 61, ChromaLayout::Yuv420, true),
        (129, 60, ChromaLayout::Yuv420, true),
        (65, 68, ChromaLayout::Yuv420, true),
        (97, 60, ChromaLayout::Yuv420, false),
        (131, 68, ChromaLayout::Yuv420, false),
        (101, 75, ChromaLayout::Yuv422, false),
        (129, 75, ChromaLayout::Yuv422, false),
        (101, 75, ChromaLayout::Yuv444, false),
    ] {
        assert_eq!(oob(&f(w, h, l)), expect, "{w}x{h} {l:?}");
    }
    let case = Case {
        name: "ciede-420-odd-height",
        source: "testsrc2=s=160x120:r=25:d=0.16,scale=97:61",
        pix_fmt: "yuv420p",
        dist_filter: NOISE,
        encode: &[],
    };
    let dir = workdir("ciede-420-odd-height");
    let (r, d) = make_pair(&case, &dir);
    let (a, b) = (dir.join("a.json"), dir.join("b.json"));
    vmaf_rs(&r, &d, &["--feature", "name=ciede", "--threads", "2"], &a);
    vmaf_rs(&r, &d, &["--feature", "name=ciede"], &b);
    assert_eq!(read_json(&a)["frames"], read_json(&b)["frames"]);
}
