//! `cambi` against the real libvmaf: banding-prone content generated with the oracle's FFmpeg
//! (quantised ramps, dark scenes, dithered and blurred or x264-encoded versions of them), 8, 10, 12
//! and 16 bits, 4:2:0/4:2:2/4:4:4, odd sizes, 1080p and a 4K frame pair; every option; every
//! per-frame key (`cambi…`, `cambi_source`, `cambi_full_reference`) and every pooled value equal
//! as printed; the heatmap files equal byte for byte; configurations libvmaf fails on refused at
//! configure time.

mod common;

use common::*;
use std::path::Path;
use std::process::Command;

/// The oracle's `feature=` option for one of our `--feature` strings (its ':' escaped).
fn oracle_feature(feature: &str) -> String {
    format!("feature='{}'", feature.replace(':', "\\:"))
}

/// Runs libvmaf and our CLI (`threads` workers) with one cambi feature string on a case and
/// compares the logs; returns the log keys naming cambi outputs.
fn check_threads(case: &Case, feature: &str, tag: &str, threads: &str) -> Vec<String> {
    let dir = workdir(&format!("{}-{tag}", case.name));
    let (r, d) = make_pair(case, &dir);
    let theirs = oracle_json(&r, &d, &oracle_feature(feature), &dir, tag);
    let log = dir.join(format!("ours-{tag}.json"));
    vmaf_rs(&r, &d, &["--threads", threads, "--feature", feature], &log);
    let worst = compare_logs(
        &read_json(&log),
        &theirs,
        &["vmaf"],
        &format!("{} [{tag}]", case.name),
    );
    let keys: Vec<String> = worst
        .keys()
        .filter(|k| k.contains("cambi") && !k.starts_with("pooled "))
        .cloned()
        .collect();
    assert!(!keys.is_empty(), "{tag}: no cambi key in the logs");
    // Equal zeros prove little: every case but the ones meant to score 0 must score something.
    let largest = frames(&theirs)
        .values()
        .flat_map(|m| keys.iter().map(move |k| m[k]))
        .fold(0.0f64, f64::max);
    let meant_zero =
        ["empty-band", "mlc0"].contains(&tag) || (case.name == RAMP_8.name && tag == "default");
    assert!(
        meant_zero || largest > 0.0,
        "{} [{tag}]: every cambi value is 0",
        case.name
    );
    keys
}

fn check(case: &Case, feature: &str, tag: &str) -> Vec<String> {
    check_threads(case, feature, tag, "2")
}

/// 8-bit ramp in steps a few pixels wide, drifting over time; the distorted version dithered.
const RAMP_8: Case = Case {
    name: "cambi-420-640x360-ramp",
    source: "nullsrc=s=640x360:r=25:d=0.2,geq=lum='40+X*30/W+Y*10/H+T*20':cb=128:cr=128",
    pix_fmt: "yuv420p",
    dist_filter: "noise=alls=3:allf=t",
    encode: &[],
};

/// The other way round: the banded picture is the distorted one.
const RAMP_8_BANDED: Case = Case {
    name: "cambi-420-640x360-banded",
    source: "nullsrc=s=640x360:r=25:d=0.2,geq=lum='40+X*30/W+Y*10/H+T*20':cb=128:cr=128,\
             noise=alls=3:allf=t",
    pix_fmt: "yuv420p",
    dist_filter: "geq=lum='40+X*30/W+Y*10/H+T*20':cb=128:cr=128",
    encode: &[],
};

/// A dark scene (16..24) through x264.
const DARK_X264: Case = Case {
    name: "cambi-420-480x270-dark-x264",
    source: "nullsrc=s=480x270:r=25:d=0.2,geq=lum='16+Y*8/H+X*3/W+T*5':cb=128:cr=128",
    pix_fmt: "yuv420p",
    dist_filter: "",
    encode: &["-c:v", "libx264", "-crf", "38", "-preset", "ultrafast"],
};

/// 4:4:4 at an odd size, just above libvmaf's 216-pixel minimum height.
const ODD_444: Case = Case {
    name: "cambi-444-333x217",
    source: "nullsrc=s=333x217:r=25:d=0.16,geq=lum='20+X*25/W+T*40':cb=128:cr=128",
    pix_fmt: "yuv444p",
    dist_filter: "noise=alls=2:allf=t",
    encode: &[],
};

/// 10-bit bands of one level; the distorted version blurred smooth.
const BANDS_10: Case = Case {
    name: "cambi-420p10-330x240",
    source: "nullsrc=s=330x240:r=25:d=0.2,format=yuv420p10le,geq=lum='floor(120+X*24/W+T*30)*4+Y/H':cb=512:cr=512",
    pix_fmt: "yuv420p10le",
    dist_filter: "gblur=sigma=3",
    encode: &[],
};

/// The 10-bit bands as the distorted picture too.
const BANDS_10_SAME: Case = Case {
    name: "cambi-420p10-330x240-same",
    dist_filter: "",
    ..BANDS_10
};

/// 12-bit 4:2:2 bands.
const BANDS_12: Case = Case {
    name: "cambi-422p12-400x300",
    source: "nullsrc=s=400x300:r=25:d=0.16,format=yuv422p12le,\
             geq=lum='floor(200+X*12/W+T*10)*4':cb=2048:cr=2048",
    pix_fmt: "yuv422p12le",
    dist_filter: "gblur=sigma=4",
    encode: &[],
};

/// 16-bit 4:4:4 bands, dithered.
const BANDS_16: Case = Case {
    name: "cambi-444p16-400x300",
    source: "nullsrc=s=400x300:r=25:d=0.16,format=yuv444p16le,\
             geq=lum='floor(200+X*12/W+T*10)*64'",
    pix_fmt: "yuv444p16le",
    dist_filter: "noise=alls=1:allf=t",
    encode: &[],
};

/// 1080p 10-bit through x264 (3 frames).
const HD_10: Case = Case {
    name: "cambi-420p10-1920x1080-x264",
    source: "nullsrc=s=1920x1080:r=25:d=0.12,format=yuv420p10le,geq=lum='(30+X*40/W+Y*6/H+T*30)*4':cb=512:cr=512",
    pix_fmt: "yuv420p10le",
    dist_filter: "",
    encode: &["-c:v", "libx264", "-crf", "30", "-preset", "ultrafast"],
};

/// A 4K frame pair, 8-bit, the distorted version blurred.
const UHD_8: Case = Case {
    name: "cambi-420-3840x2160",
    source: "nullsrc=s=3840x2160:r=25:d=0.08,geq=lum='floor(40+X*12/W+Y*4/H)':cb=128:cr=128",
    pix_fmt: "yuv420p",
    dist_filter: "gblur=sigma=3",
    encode: &[],
};

/// Every depth and layout with the defaults and in full-reference mode.
#[test]
fn cambi_every_depth_and_layout() {
    for case in [
        &RAMP_8,
        &RAMP_8_BANDED,
        &DARK_X264,
        &ODD_444,
        &BANDS_10,
        &BANDS_12,
        &BANDS_16,
    ] {
        assert_eq!(check(case, "name=cambi", "default"), ["cambi"]);
        assert_eq!(
            check(case, "name=cambi:full_ref=true", "full-ref"),
            ["cambi", "cambi_full_reference", "cambi_source"]
        );
    }
}

/// Every option, with libvmaf's names for the outputs (option suffixes on `cambi` only).
#[test]
fn cambi_options_and_names() {
    let cases: &[(&Case, &str, &str, &[&str])] = &[
        (
            &RAMP_8_BANDED,
            "name=cambi:window_size=15",
            "ws15",
            &["cambi_ws_15"],
        ),
        (
            &RAMP_8_BANDED,
            "name=cambi:window_size=127",
            "ws127",
            &["cambi_ws_127"],
        ),
        (
            &RAMP_8_BANDED,
            "name=cambi:topk=0.05",
            "topk",
            &["cambi_topk_0.05"],
        ),
        (
            &RAMP_8_BANDED,
            "name=cambi:topk=1",
            "topk1",
            &["cambi_topk_1"],
        ),
        (
            &RAMP_8_BANDED,
            "name=cambi:cambi_topk=0.9:topk=0.3",
            "ctpk",
            &["cambi_ctpk_0.9_topk_0.3"],
        ),
        (
            &RAMP_8_BANDED,
            "name=cambi:eotf=pq",
            "pq",
            &["cambi_eotf_pq"],
        ),
        (
            &BANDS_10,
            "name=cambi:cambi_eotf=pq:full_ref=true",
            "ceot",
            &["cambi_ceot_pq", "cambi_full_reference", "cambi_source"],
        ),
        (
            &DARK_X264,
            "name=cambi:max_log_contrast=0",
            "mlc0",
            &["cambi_mlc_0"],
        ),
        (
            &DARK_X264,
            "name=cambi:max_log_contrast=5",
            "mlc5",
            &["cambi_mlc_5"],
        ),
        (
            &RAMP_8_BANDED,
            "name=cambi:tvi_threshold=0.004",
            "tvi",
            &["cambi_tvit_0.004"],
        ),
        (
            &DARK_X264,
            "name=cambi:cambi_vis_lum_threshold=0.06",
            "vlt",
            &["cambi_vlt_0.06"],
        ),
        // A darkness limit above the brightest visible step: no value can score (libvmaf's
        // band size wraps), all c-values 0.
        (
            &RAMP_8_BANDED,
            "name=cambi:cambi_vis_lum_threshold=200:tvi_threshold=1",
            "empty-band",
            &["cambi_vlt_200_tvit_1"],
        ),
        (
            &RAMP_8_BANDED,
            "name=cambi:cambi_max_val=3",
            "cmxv",
            &["cambi_cmxv_3"],
        ),
        (
            &BANDS_10,
            "name=cambi:enc_bitdepth=8",
            "encbd8",
            &["cambi_encbd_8"],
        ),
        (
            &RAMP_8,
            "name=cambi:enc_bitdepth=10",
            "encbd10",
            &["cambi_encbd_10"],
        ),
        // A smaller encoding size, by a ratio that is not a power of two.
        (
            &RAMP_8_BANDED,
            "name=cambi:enc_width=301:enc_height=217:full_ref=true",
            "enc",
            &[
                "cambi_ench_217_encw_301",
                "cambi_full_reference",
                "cambi_source",
            ],
        ),
        // A larger one is ignored (the name still says it).
        (
            &ODD_444,
            "name=cambi:enc_width=1000:enc_height=800",
            "enc-up",
            &["cambi_ench_800_encw_1000"],
        ),
        // The source at another size (upsampled here), the encode downsampled.
        (
            &BANDS_12,
            "name=cambi:enc_width=350:enc_height=250:full_ref=true:src_width=333:src_height=222",
            "src",
            &[
                "cambi_ench_250_encw_350_srch_222_srcw_333",
                "cambi_full_reference",
                "cambi_source",
            ],
        ),
        // Below 1080p the speedup does not apply (only the name changes).
        (
            &RAMP_8_BANDED,
            "name=cambi:cambi_high_res_speedup=1080",
            "hrs-small",
            &["cambi_hrs_1080"],
        ),
        (
            &HD_10,
            "name=cambi:cambi_high_res_speedup=1080:full_ref=true",
            "hrs1080",
            &["cambi_full_reference", "cambi_hrs_1080", "cambi_source"],
        ),
        // The options of the vmaf_v1.0.16 models.
        (
            &HD_10,
            "name=cambi:cambi_high_res_speedup=1080:cambi_vis_lum_threshold=0.06:cambi_max_val=17",
            "v1016",
            &["cambi_hrs_1080_cmxv_17_vlt_0.06"],
        ),
        (
            &HD_10,
            "name=cambi:cambi_high_res_speedup=1440",
            "hrs1440",
            &["cambi_hrs_1440"],
        ),
        (&UHD_8, "name=cambi", "4k", &["cambi"]),
        (
            &UHD_8,
            "name=cambi:cambi_high_res_speedup=2160:full_ref=true",
            "hrs2160",
            &["cambi_full_reference", "cambi_hrs_2160", "cambi_source"],
        ),
    ];
    for (case, feature, tag, keys) in cases {
        assert_eq!(check(case, feature, tag), *keys, "{tag}");
    }
}

/// At exactly 10 bits libvmaf copies an unscaled picture with one `memcpy` of the input's rows;
/// with `full_ref` and a wider source size its working picture has longer rows, so the distorted
/// picture lands skewed and its lower rows come from the previous frame's reference. vmaf_rs
/// reproduces that on one worker (docs/FIDELITY.md).
#[test]
fn cambi_ten_bit_copy_into_a_wider_picture() {
    for threads in ["0", "1"] {
        check_threads(
            &BANDS_10,
            "name=cambi:full_ref=true:src_width=640:src_height=480",
            &format!("wide-src-{threads}"),
            threads,
        );
    }
}

/// A model asking for cambi with options (the vmaf_v1.0.16 models' cambi options, in a
/// v0.6.1-shaped model in place of motion2): the model finds the renamed feature.
#[test]
fn cambi_in_a_model_with_feature_options() {
    let dir = workdir("cambi-model");
    let text = std::fs::read_to_string(root().join("src/model/builtin/vmaf_v0.6.1.json")).unwrap();
    let mut m: serde_json::Value = serde_json::from_str(&text).unwrap();
    let names = m["model_dict"]["feature_names"].as_array_mut().unwrap();
    let i = names
        .iter()
        .position(|n| n == "VMAF_integer_feature_motion2_score")
        .unwrap();
    names[i] = "Cambi_feature_cambi_score".into();
    let n = names.len();
    let mut opts = vec![serde_json::json!({}); n];
    opts[i] = serde_json::json!({
        "cambi_high_res_speedup": 1080,
        "cambi_vis_lum_threshold": 0.06,
        "cambi_max_val": 17.0
    });
    m["model_dict"]["feature_opts_dicts"] = opts.into();
    let path = dir.join("cambi_model.json");
    std::fs::write(&path, serde_json::to_string_pretty(&m).unwrap()).unwrap();
    let (r, d) = make_pair(&RAMP_8_BANDED, &dir);
    let model = format!("path={}:name=cambi_model", path.display());
    let oracle = format!("model='{}'", model.replace(':', "\\:"));
    let theirs = oracle_json(&r, &d, &oracle, &dir, "model");
    let log = dir.join("ours-model.json");
    vmaf_rs(&r, &d, &["-m", &model], &log);
    let worst = compare_logs(&read_json(&log), &theirs, &["cambi_model"], "cambi model");
    assert!(worst.contains_key("cambi_hrs_1080_cmxv_17_vlt_0.06"));
}

/// The files under `dir`, sorted, with their bytes.
fn files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| {
            let e = e.unwrap();
            (
                e.file_name().to_string_lossy().into_owned(),
                std::fs::read(e.path()).unwrap(),
            )
        })
        .collect();
    out.sort();
    out
}

/// `heatmaps_path`: the same five files, byte for byte, with subsampling (frames left out are
/// holes of zeros), several workers, a directory that does not exist yet, and the speedup
/// (which halves the pictures but not libvmaf's file names).
#[test]
fn cambi_heatmaps_equal_libvmafs_byte_for_byte() {
    for (case, extra, sub, tag) in [
        (&RAMP_8_BANDED, "", "2", "hm-sub2"),
        (
            &BANDS_10_SAME,
            ":window_size=33:max_log_contrast=4",
            "1",
            "hm-ws33",
        ),
        (&HD_10, ":cambi_high_res_speedup=1080", "1", "hm-hrs"),
    ] {
        let dir = workdir(&format!("{}-{tag}", case.name));
        let (r, d) = make_pair(case, &dir);
        let (theirs, ours) = (dir.join("theirs/a/b"), dir.join("ours/a/b"));
        let feature = |p: &Path| format!("name=cambi:heatmaps_path={}{extra}", p.display());
        let oracle = format!("n_subsample={sub}:{}", oracle_feature(&feature(&theirs)));
        let tlog = oracle_json(&r, &d, &oracle, &dir, tag);
        let log = dir.join(format!("ours-{tag}.json"));
        vmaf_rs(
            &r,
            &d,
            &[
                "--threads",
                "2",
                "--subsample",
                sub,
                "--feature",
                &feature(&ours),
            ],
            &log,
        );
        compare_logs(&read_json(&log), &tlog, &["vmaf"], tag);
        let (a, b) = (files(&ours), files(&theirs));
        assert_eq!(
            a.len(),
            5,
            "{tag}: {:?}",
            a.iter().map(|f| &f.0).collect::<Vec<_>>()
        );
        for ((na, da), (nb, db)) in a.iter().zip(&b) {
            assert_eq!(na, nb, "{tag}: file names");
            assert!(
                da == db,
                "{tag}: {na} differs ({} vs {} bytes)",
                da.len(),
                db.len()
            );
        }
        assert!(
            a.iter().any(|(_, d)| d.iter().any(|&x| x != 0)),
            "{tag}: every heatmap is all zeros"
        );
        eprintln!(
            "{tag}: heatmaps equal: {:?}",
            a.iter().map(|f| (&f.0, f.1.len())).collect::<Vec<_>>()
        );
    }
}

/// 9 bits: FFmpeg hands libvmaf 9-bit pictures as 10-bit ones (its filter takes no 9-bit
/// format), shifted up one bit. libvmaf's own 9-bit path shifts up too and anti-dithers (the
/// encode is below 10 bits), so ours at 9 bits equals libvmaf at 10 bits with `enc_bitdepth=9`,
/// and with `enc_bitdepth=10` without it.
#[test]
fn cambi_nine_bit_equals_libvmafs_shifted_ten_bit() {
    let nine = Case {
        name: "cambi-420p9",
        // Below 256, where FFmpeg's 9-to-10-bit conversion is exactly a shift.
        source: "nullsrc=s=400x300:r=25:d=0.16,format=yuv420p9le,\
                 geq=lum='(16+Y*10/H+T*5)*2':cb=256:cr=256",
        pix_fmt: "yuv420p9le",
        dist_filter: "noise=alls=2:allf=t",
        encode: &[],
    };
    for (ours_opts, theirs_opts) in [
        ("name=cambi", "name=cambi:enc_bitdepth=9"),
        ("name=cambi:enc_bitdepth=10", "name=cambi:enc_bitdepth=10"),
    ] {
        let dir = workdir(&format!("cambi-9bit-{}", ours_opts.len()));
        let (r, d) = make_pair(&nine, &dir);
        let theirs = oracle_json(&r, &d, &oracle_feature(theirs_opts), &dir, "9");
        let log = dir.join("ours.json");
        vmaf_rs(&r, &d, &["--feature", ours_opts], &log);
        let (a, b) = (frames(&read_json(&log)), frames(&theirs));
        let key_a = if ours_opts.contains("enc_bitdepth") {
            "cambi_encbd_10"
        } else {
            "cambi"
        };
        let key_b = if theirs_opts.contains("=9") {
            "cambi_encbd_9"
        } else {
            "cambi_encbd_10"
        };
        assert_eq!(a.len(), b.len());
        let mut nonzero = false;
        for (n, m) in &b {
            assert_eq!(a[n][key_a], m[key_b], "{ours_opts}: frame {n}");
            nonzero |= m[key_b] != 0.0;
        }
        assert!(nonzero, "{ours_opts}: every score is 0");
    }
}

/// libvmaf's cambi AVX2 kernels are integer or repeat its C code's float operations: the
/// oracle run as a C-only and as an AVX2 CPU (under qemu) prints our values.
#[test]
fn cambi_same_values_on_every_cpu() {
    for (case, feature) in [
        (
            &RAMP_8_BANDED,
            "name=cambi:full_ref=true:max_log_contrast=3",
        ),
        (&BANDS_10, "name=cambi:full_ref=true:topk=0.2"),
    ] {
        let dir = workdir(&format!("{}-cpus", case.name));
        let (r, d) = make_pair(case, &dir);
        let log = dir.join("ours.json");
        vmaf_rs(&r, &d, &["--feature", feature], &log);
        let ours = frames(&read_json(&log));
        for cpu in [OracleCpu::C, OracleCpu::Avx2] {
            let tag = format!("{cpu:?}");
            let theirs = frames(&oracle_json_on(
                cpu,
                &r,
                &d,
                &oracle_feature(feature),
                &dir,
                &tag,
            ));
            assert_eq!(ours.len(), theirs.len());
            let mut nonzero = false;
            for (n, m) in &theirs {
                for (k, v) in m.iter().filter(|(k, _)| k.contains("cambi")) {
                    assert_eq!(ours[n][k], *v, "{}: frame {n} {k} on {cpu:?}", case.name);
                    nonzero |= *v != 0.0;
                }
            }
            assert!(nonzero, "{}: all zero on {cpu:?}", case.name);
        }
    }
}

/// What our CLI prints when it refuses a feature string on a case.
fn refused(case: &Case, feature: &str, tag: &str) -> String {
    let dir = workdir(&format!("{}-refused-{tag}", case.name));
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

/// Does libvmaf fail on this case and feature?
fn libvmaf_fails(case: &Case, feature: &str, tag: &str) -> bool {
    let dir = workdir(&format!("{}-oracle-fails-{tag}", case.name));
    let (r, d) = make_pair(case, &dir);
    let filter = format!(
        "libvmaf=log_fmt=json:log_path={}:{}",
        dir.join("x.json").display(),
        oracle_feature(feature)
    );
    let out = Command::new(oracle())
        .args(["-hide_banner", "-loglevel", "error", "-nostdin", "-y", "-i"])
        .arg(&d)
        .arg("-i")
        .arg(&r)
        .args(["-lavfi", &filter, "-f", "null", "-"])
        .output()
        .unwrap();
    !out.status.success()
}

/// What libvmaf refuses (`-EINVAL` from its init) is refused at configure time with a message
/// naming the fix; and so are the sizes where libvmaf would read outside its picture.
#[test]
fn cambi_refusals_name_the_fix() {
    let small = Case {
        name: "cambi-200x200",
        source: "testsrc2=s=200x200:r=25:d=0.08",
        pix_fmt: "yuv420p",
        dist_filter: "",
        encode: &[],
    };
    assert!(libvmaf_fails(&small, "name=cambi", "small"));
    let msg = refused(&small, "name=cambi", "small");
    assert!(msg.contains("cambi") && msg.contains("216"), "{msg}");

    // A 67-pixel window holds more pixels than libvmaf's reciprocal table covers.
    let wide = Case {
        name: "cambi-2000x1200",
        source: "testsrc2=s=2000x1200:r=25:d=0.04",
        pix_fmt: "yuv420p",
        dist_filter: "",
        encode: &[],
    };
    assert!(libvmaf_fails(&wide, "name=cambi:window_size=127", "lut"));
    let msg = refused(&wide, "name=cambi:window_size=127", "lut");
    assert!(
        msg.contains("67-pixel window") && msg.contains("smaller window_size"),
        "{msg}"
    );

    // Source and encoding sizes of opposite orientations.
    assert!(libvmaf_fails(
        &RAMP_8,
        "name=cambi:full_ref=true:src_width=700:src_height=300",
        "orient"
    ));
    let msg = refused(
        &RAMP_8,
        "name=cambi:full_ref=true:src_width=700:src_height=300",
        "orient",
    );
    assert!(msg.contains("same orientation"), "{msg}");

    // Too elongated: at scale 2 the picture is 6 rows high, under half its 23-pixel window.
    let strip = Case {
        name: "cambi-2048x24",
        source: "testsrc2=s=2048x24:r=25:d=0.04",
        pix_fmt: "yuv420p",
        dist_filter: "",
        encode: &[],
    };
    let msg = refused(&strip, "name=cambi", "strip");
    assert!(
        msg.contains("6 at scale 2") && msg.contains("less elongated"),
        "{msg}"
    );

    // Libvmaf's option checks, at set time.
    for (feature, want) in [
        ("name=cambi:eotf=hlg", "bt1886, pq"),
        ("name=cambi:window_size=14", "out of range"),
        ("name=cambi:enc_width=0", "out of range"),
        ("name=cambi:topk=0", "out of range"),
    ] {
        let msg = refused(&RAMP_8, feature, "opt");
        assert!(msg.contains(want), "{feature}: {msg}");
    }
}
