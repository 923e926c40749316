//! SpEED (`speed_chroma`, `speed_temporal`) against the real libvmaf: content generated with the
//! oracle's FFmpeg (8-bit 4:2:0 at an odd size, 10-bit 4:2:2 through x264, 12-bit 4:4:4 blurred,
//! 16-bit 4:2:0 with noise, 8-bit 4:4:4), every option (every `speed_weight_var_mode`, every
//! prescale method, the v1.0.16 models' option sets), every per-frame key and every pooled value
//! equal as printed; each libvmaf kernel family against the libvmaf that takes it, on a pair
//! where their covariance sums print differently; refusals where libvmaf fails or is undefined.

mod common;

use common::*;
use std::path::Path;
use std::process::Command;

/// Runs libvmaf and our CLI with one feature string (`name=…:opt=…`) plus our extra arguments
/// (and the oracle's extra filter options) and compares the logs (the default model included on
/// both sides). Returns the largest difference per key.
fn check_with(
    case: &Case,
    feature: &str,
    tag: &str,
    ours_extra: &[&str],
    oracle_extra: &str,
) -> std::collections::BTreeMap<String, f64> {
    let name = feature
        .split(':')
        .next()
        .unwrap()
        .trim_start_matches("name=");
    // Tests run in parallel: one directory per case, feature and tag.
    let dir = workdir(&format!("{}-{name}-{tag}", case.name));
    let (r, d) = make_pair(case, &dir);
    let oracle = format!("feature='{}'{oracle_extra}", feature.replace(':', "\\:"));
    let theirs = oracle_json(&r, &d, &oracle, &dir, tag);
    let log = dir.join(format!("ours-{tag}.json"));
    let mut args = vec!["--feature", feature];
    args.extend_from_slice(ours_extra);
    vmaf_rs(&r, &d, &args, &log);
    let worst = compare_logs(
        &read_json(&log),
        &theirs,
        &["vmaf"],
        &format!("{} [{tag}]", case.name),
    );
    // The feature's keys must be there (the comparison alone would pass if both lacked them).
    assert!(
        worst.keys().any(|k| k.starts_with("speed_")),
        "{tag}: no SpEED key in the logs"
    );
    worst
}

fn check(case: &Case, feature: &str, tag: &str) {
    check_with(case, feature, tag, &["--threads", "2"], "");
}

const NOISE: &str = "noise=alls=18:allf=t+u";

/// 4:2:0 odd both ways (from a rescale: testsrc2 rounds 4:2:0 sizes to even): chroma 243x181.
const ODD_420: Case = Case {
    name: "speed-420-487x363",
    source: "testsrc2=s=480x360:r=25:d=0.24,scale=487:363",
    pix_fmt: "yuv420p",
    dist_filter: NOISE,
    encode: &[],
};

const X264_422_10: Case = Case {
    name: "speed-422p10-x264",
    source: "mandelbrot=s=400x240:r=25,trim=end_frame=6",
    pix_fmt: "yuv422p10le",
    dist_filter: "",
    encode: &["-c:v", "libx264", "-crf", "35", "-preset", "ultrafast"],
};

const BLUR_444_12: Case = Case {
    name: "speed-444p12-blur",
    source: "testsrc2=s=321x257:r=25:d=0.24",
    pix_fmt: "yuv444p12le",
    dist_filter: "gblur=sigma=1.5",
    encode: &[],
};

const NOISE_420_16: Case = Case {
    name: "speed-420p16-noise",
    source: "testsrc2=s=480x360:r=25:d=0.2",
    pix_fmt: "yuv420p16le",
    dist_filter: NOISE,
    encode: &[],
};

const NOISE_444: Case = Case {
    name: "speed-444-noise",
    source: "mandelbrot=s=320x240:r=25,trim=end_frame=6",
    pix_fmt: "yuv444p",
    dist_filter: "noise=alls=10:allf=t,gblur=sigma=0.6",
    encode: &[],
};

/// 4:2:0 large enough for the v1.0.16 models' prescales (chroma 320x240, 0.5 of it is 160x120).
const VGA_420: Case = Case {
    name: "speed-420-640x480",
    source: "testsrc2=s=640x480:r=25:d=0.2",
    pix_fmt: "yuv420p",
    dist_filter: NOISE,
    encode: &[],
};

/// 4:2:0 with chroma 192x144, for upscaling.
const SMALL_420: Case = Case {
    name: "speed-420-384x288",
    source: "testsrc2=s=384x288:r=25:d=0.16",
    pix_fmt: "yuv420p",
    dist_filter: NOISE,
    encode: &[],
};

const LAYOUTS: [Case; 5] = [ODD_420, X264_422_10, BLUR_444_12, NOISE_420_16, NOISE_444];

/// The options of the v1.0.16 models' `speed_chroma` (3d0h; 5d0h and 2160 add a bilinear
/// prescale).
const V1016: &str = "speed_kernelscale=1.0:speed_nn_floor=0.1:speed_sigma_nn=0.19:\
                     speed_weight_var_mode=5:speed_max_val=45";

#[test]
fn speed_chroma_every_layout_and_depth() {
    for case in &LAYOUTS {
        check(case, "name=speed_chroma", "default");
        check(case, &format!("name=speed_chroma:{V1016}"), "v1016");
    }
}

/// Every weighting mode, each with other options changed too (noise floor, noise, a clipping
/// maximum, a kernel scale).
#[test]
fn speed_chroma_every_weight_var_mode() {
    let extra = [
        "speed_nn_floor=0.3",
        "speed_sigma_nn=0.5",
        "speed_max_val=2.5",
        "speed_kernelscale=1.5",
        "speed_nn_floor=0.05:speed_sigma_nn=0.19",
        "speed_max_val=45:speed_kernelscale=0.5",
        "speed_sigma_nn=1.2:speed_nn_floor=1",
    ];
    for (mode, extra) in extra.iter().enumerate() {
        let feature = format!("name=speed_chroma:speed_weight_var_mode={mode}:{extra}");
        check(&NOISE_444, &feature, &format!("wvm{mode}"));
        check(&ODD_420, &feature, &format!("wvm{mode}"));
    }
}

/// `speed_prescale` with every method, down and up: the 5d0h (0.6) and 2160 (0.5) models' sets
/// with bilinear, and other kernel scales.
#[test]
fn speed_chroma_prescale_methods() {
    let down = [
        format!("{V1016}:speed_prescale=0.5:speed_prescale_method=bilinear"),
        format!("{V1016}:speed_prescale=0.6:speed_prescale_method=bilinear"),
        "speed_prescale=0.7".into(),
        "speed_prescale=0.8:speed_prescale_method=lanczos4:speed_kernelscale=2".into(),
    ];
    for (i, set) in down.iter().enumerate() {
        check(
            &VGA_420,
            &format!("name=speed_chroma:{set}"),
            &format!("down{i}"),
        );
    }
    let up = [
        "speed_prescale=1.5:speed_prescale_method=bicubic",
        "speed_prescale=1.3:speed_prescale_method=bilinear:speed_kernelscale=0.666667",
        "speed_prescale=2:speed_prescale_method=lanczos4",
        "speed_prescale=1.25:speed_prescale_method=nearest:speed_weight_var_mode=3",
    ];
    for (i, set) in up.iter().enumerate() {
        check(
            &SMALL_420,
            &format!("name=speed_chroma:{set}"),
            &format!("up{i}"),
        );
    }
    check(
        &X264_422_10,
        "name=speed_chroma:speed_prescale=1.7:speed_prescale_method=bicubic",
        "up-422",
    );
}

/// A flat Cb plane: its covariance matrix is singular, and libvmaf gives `uv` the Cr score.
#[test]
fn speed_chroma_one_flat_channel() {
    let case = Case {
        name: "speed-444-flat-cb",
        source: "testsrc2=s=320x240:r=25:d=0.2,format=yuv444p,geq=lum='lum(X,Y)':cb=100:\
                 cr='cr(X,Y)'",
        pix_fmt: "yuv444p",
        dist_filter: "noise=c0s=12:c2s=12:allf=t",
        encode: &[],
    };
    check(&case, "name=speed_chroma", "flat-cb");
}

#[test]
fn speed_temporal_every_layout_and_depth() {
    for case in &LAYOUTS {
        check(case, "name=speed_temporal", "default");
        check(case, "name=speed_temporal:speed_use_ref_diff=true", "urd");
    }
}

/// Every option of `speed_temporal` (`speed_max_val` only names it), downscaling with every
/// method; three workers and `n_subsample` (it still sees every frame's predecessor).
#[test]
fn speed_temporal_options() {
    let sets = [
        "speed_prescale=0.5:speed_prescale_method=bilinear:speed_sigma_nn=0.19",
        "speed_prescale=0.75:speed_prescale_method=bicubic:speed_nn_floor=0.2",
        "speed_prescale=0.8:speed_prescale_method=lanczos4:speed_max_val=1",
        "speed_prescale=0.9:speed_kernelscale=1.5:speed_use_ref_diff=true",
        "speed_kernelscale=2:speed_sigma_nn=0.5:speed_nn_floor=0.1:speed_max_val=45",
    ];
    for (i, set) in sets.iter().enumerate() {
        check(
            &VGA_420,
            &format!("name=speed_temporal:{set}"),
            &format!("o{i}"),
        );
    }
    for n in [2, 3] {
        let ns = n.to_string();
        check_with(
            &NOISE_444,
            "name=speed_temporal:speed_nn_floor=0.1",
            &format!("sub{n}"),
            &["--threads", "3", "--subsample", &ns],
            &format!(":n_subsample={n}"),
        );
    }
}

/// Both extractors at once, with the v1.0.16 option set, on 16-bit 4:2:0.
#[test]
fn speed_chroma_and_temporal_together() {
    let dir = workdir("speed-both");
    let (r, d) = make_pair(&NOISE_420_16, &dir);
    let (fc, ft) = (
        format!("name=speed_chroma:{V1016}"),
        "name=speed_temporal:speed_sigma_nn=0.19".to_string(),
    );
    let oracle = format!(
        "feature='{}|{}'",
        fc.replace(':', "\\:"),
        ft.replace(':', "\\:")
    );
    let theirs = oracle_json(&r, &d, &oracle, &dir, "both");
    let log = dir.join("ours-both.json");
    vmaf_rs(&r, &d, &["--feature", &fc, "--feature", &ft], &log);
    let worst = compare_logs(&read_json(&log), &theirs, &["vmaf"], "speed-both");
    assert!(worst.contains_key("speed_temporal_snn_0.19"), "{worst:?}");
}

/// Writes an 8-bit 4:4:4 y4m, one frame per plane: grey luma, the plane as both Cb and Cr.
fn write_y4m_444(path: &Path, w: usize, h: usize, planes: &[Vec<u8>]) {
    let mut out = format!("YUV4MPEG2 W{w} H{h} F25:1 Ip A1:1 C444\n").into_bytes();
    for p in planes {
        out.extend_from_slice(b"FRAME\n");
        out.extend(std::iter::repeat_n(128u8, w * h));
        out.extend_from_slice(p);
        out.extend_from_slice(p);
    }
    std::fs::write(path, out).unwrap();
}

/// Noise planes from a seed (xorshift64): the reference uniform in 0..=254, the distorted one
/// within ±10 of it.
fn noise_pair(seed: u64, n: usize) -> (Vec<u8>, Vec<u8>) {
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut rnd = move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        (s >> 40) as u32
    };
    let r: Vec<u8> = (0..n).map(|_| (rnd() % 255) as u8).collect();
    let d = r
        .iter()
        .map(|&v| (v as i32 + (rnd() % 21) as i32 - 10).clamp(0, 255) as u8)
        .collect();
    (r, d)
}

/// Seeds of [`noise_pair`] at 640x480 whose `speed_chroma` prints differently for one of
/// libvmaf's kernel families, found by searching seeds 0..120 000 with the families' models
/// (docs/FIDELITY.md row E), and what each family prints: (seed, [c, avx2, avx512]).
const ISA_SEEDS: [(u64, [f64; 3]); 3] = [
    (21009, [4.553406, 4.553408, 4.553406]),
    (44621, [6.368283, 6.368277, 6.368277]),
    (51932, [5.337550, 5.337550, 5.337546]),
];

/// libvmaf's covariance kernels print differently on these frames, each family once the odd one
/// out: each `libvmaf_isa` equals the libvmaf that takes it (qemu `Westmere` for `c`,
/// `Haswell-v4` for `avx2`, native for `avx512` on a host that has it), and prints the values the
/// search found.
#[test]
fn every_libvmaf_isa_matches_the_libvmaf_that_runs_it() {
    let (w, h) = (640, 480);
    let dir = workdir("speed-isa");
    let (pr, pd): (Vec<_>, Vec<_>) = ISA_SEEDS
        .iter()
        .map(|&(seed, _)| noise_pair(seed, w * h))
        .unzip();
    let (r, d) = (dir.join("ref.y4m"), dir.join("dis.y4m"));
    write_y4m_444(&r, w, h, &pr);
    write_y4m_444(&d, w, h, &pd);
    for (k, isa) in ["c", "avx2", "avx512"].into_iter().enumerate() {
        let log = dir.join(format!("ours-{isa}.json"));
        vmaf_rs(
            &r,
            &d,
            &["--feature", "name=speed_chroma", "--libvmaf_isa", isa],
            &log,
        );
        let v = read_json(&log);
        let got: Vec<f64> = frames(&v).values().map(|m| m["speed_chroma_u"]).collect();
        let want: Vec<f64> = ISA_SEEDS.iter().map(|(_, p)| p[k]).collect();
        assert_eq!(
            got, want,
            "libvmaf_isa={isa}: the seeds no longer tell the families apart"
        );
        let Some(cpu) = OracleCpu::for_isa(isa) else {
            eprintln!(
                "speed-isa: no libvmaf on this host takes its {isa} kernels (qemu cannot \
                 emulate AVX-512); libvmaf_isa={isa} is checked against the values libvmaf \
                 printed on an AVX-512 host only here"
            );
            continue;
        };
        let theirs = oracle_json_on(cpu, &r, &d, "feature=name=speed_chroma", &dir, isa);
        compare_logs_as(
            &v,
            &theirs,
            &["vmaf"],
            &format!("speed-isa [libvmaf_isa={isa} vs libvmaf on {cpu:?}]"),
            cpu,
        );
    }
}

/// Our CLI's stderr for a feature string on a case (which must fail).
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

/// Whether libvmaf (natively) fails on a feature string.
fn libvmaf_fails(case: &Case, feature: &str) -> bool {
    let dir = workdir(&format!("{}-oracle-refused", case.name));
    let (r, d) = make_pair(case, &dir);
    let out = Command::new(oracle())
        .args(["-hide_banner", "-loglevel", "error", "-nostdin", "-y", "-i"])
        .arg(&d)
        .arg("-i")
        .arg(&r)
        .arg("-lavfi")
        .arg(format!(
            "libvmaf=feature='{}':log_fmt=json:log_path={}",
            feature.replace(':', "\\:"),
            dir.join("oracle.json").display()
        ))
        .args(["-f", "null", "-"])
        .output()
        .unwrap();
    !out.status.success()
}

/// Formats and options libvmaf fails on (or computes from memory it never wrote) are refused at
/// configure time, with the fix in the message.
#[test]
fn speed_refusals() {
    let gray = Case {
        name: "speed-gray",
        source: "testsrc2=s=320x240:r=25:d=0.08",
        pix_fmt: "gray",
        dist_filter: "",
        encode: &[],
    };
    // libvmaf's init refuses 4:0:0 (its FFmpeg filter converts gray to 4:2:0 first, with flat
    // chroma: singular, every score 0).
    let msg = refused(&gray, "name=speed_chroma");
    assert!(msg.contains("4:0:0") && msg.contains("yuv420p"), "{msg}");

    let small = Case {
        name: "speed-small",
        source: "testsrc2=s=158x240:r=25:d=0.08",
        pix_fmt: "yuv420p",
        dist_filter: "",
        encode: &[],
    };
    let msg = refused(&small, "name=speed_chroma");
    assert!(
        msg.contains("79x120") && msg.contains("at least 80x80"),
        "{msg}"
    );
    let msg = refused(&small, "name=speed_temporal:speed_prescale=0.5");
    assert!(
        msg.contains("79x120") && msg.contains("speed_prescale"),
        "{msg}"
    );

    // libvmaf's speed_temporal writes the upscaled frame past its frame buffers (heap
    // corruption: wrong scores, then a failed free).
    let msg = refused(&NOISE_444, "name=speed_temporal:speed_prescale=1.5");
    assert!(msg.contains("at most 1"), "{msg}");

    // libvmaf logs "invalid speed_kernelscale" and then fails.
    let msg = refused(&NOISE_444, "name=speed_chroma:speed_kernelscale=1.3");
    assert!(msg.contains("speed_kernelscale=1.3"), "{msg}");
    assert!(libvmaf_fails(
        &NOISE_444,
        "name=speed_chroma:speed_kernelscale=1.3"
    ));
}
