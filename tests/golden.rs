//! Fidelity against the real libvmaf: every test case generates its own content with the oracle's
//! FFmpeg (lavfi sources, real encoders, rescaling, noise), runs libvmaf and `vmaf-rs` on it, and
//! requires every per-frame feature, every model score and every pooled value to equal libvmaf's
//! as printed. By default both sides compute the ADM variant libvmaf takes on this host
//! (`adm_edge=auto`); the variant tests below also check the other variant against libvmaf run on
//! an emulated AVX2 CPU (docs/FIDELITY.md).

mod common;

use common::*;
use std::path::Path;

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
        "vmaf_float_v0.6.1",
        "vmaf_float_v0.6.1neg",
        "vmaf_float_4k_v0.6.1",
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

/// A pair at a width where libvmaf's kernel families disagree in ADM (docs/FIDELITY.md), with
/// the families whose results differ from the C code's there.
struct EdgeCase {
    case: Case,
    differ_from_c: &'static [&'static str],
}

/// Small (for the emulators) pairs at every kind of width where the families differ: `ceil(w/2) - 1` a
/// multiple of 32 at 8 bits (AVX-512), of 64 above (AVX-512 and AVX2), of 16 only (AVX2).
const EDGE_CASES: [EdgeCase; 5] = [
    EdgeCase {
        case: Case {
            name: "edge-321x243-8bit",
            source: "testsrc2=s=320x240:r=25:d=0.32,scale=321:243",
            pix_fmt: "yuv420p",
            dist_filter: "scale=160:120:flags=bilinear,scale=321:243:flags=bicubic",
            encode: &[],
        },
        differ_from_c: &["avx512"],
    },
    EdgeCase {
        case: Case {
            name: "edge-194x100-8bit",
            source: "testsrc2=s=194x100:r=25:d=0.2",
            pix_fmt: "yuv420p",
            dist_filter: "scale=97:50:flags=bilinear,scale=194:100:flags=bicubic",
            encode: &[],
        },
        differ_from_c: &["avx512"],
    },
    EdgeCase {
        case: Case {
            name: "edge-257x130-10bit",
            source: "testsrc2=s=256x130:r=25:d=0.2,scale=257:130",
            pix_fmt: "yuv420p10le",
            dist_filter: "scale=128:66:flags=bilinear,scale=257:130:flags=bicubic",
            encode: &[],
        },
        differ_from_c: &["avx2", "avx512"],
    },
    EdgeCase {
        case: Case {
            name: "edge-130x96-16bit",
            source: "testsrc2=s=130x96:r=25:d=0.2",
            pix_fmt: "yuv444p16le",
            dist_filter: "scale=66:48:flags=bilinear,scale=130:96:flags=bicubic",
            encode: &[],
        },
        differ_from_c: &["avx2", "avx512"],
    },
    EdgeCase {
        case: Case {
            name: "edge-97x72-12bit",
            source: "testsrc2=s=98x72:r=25:d=0.2,scale=97:72",
            pix_fmt: "yuv444p12le",
            dist_filter: "noise=alls=20:allf=t",
            encode: &[],
        },
        differ_from_c: &["avx2"],
    },
];

/// Every libvmaf kernel family, forced with `--libvmaf_isa`, equals the libvmaf that takes those
/// kernels: C under qemu's Westmere and AVX2 under valgrind's CPU on every host, AVX-512 natively where this host
/// has it. The families must differ where the case says (and only there), so a mode that is
/// ignored, or a variant applied at the wrong width, fails.
#[test]
fn every_libvmaf_isa_matches_the_libvmaf_that_runs_it() {
    for EdgeCase {
        case,
        differ_from_c,
    } in &EDGE_CASES
    {
        let dir = workdir(&format!("{}-isa", case.name));
        let (r, d) = make_pair(case, &dir);
        let mut ours = std::collections::BTreeMap::new();
        for isa in ["c", "avx2", "avx512"] {
            let log = dir.join(format!("ours-{isa}.json"));
            vmaf_rs(&r, &d, &["--libvmaf_isa", isa], &log);
            let v = read_json(&log);
            let Some(cpu) = OracleCpu::for_isa(isa) else {
                eprintln!(
                    "{}: no libvmaf on this host takes its {isa} kernels (no emulator here runs \
                     AVX-512); libvmaf_isa={isa} is checked here against the scalar \
                     specification's unit tests only, and against libvmaf on an AVX-512 host \
                     (docs/FIDELITY.md)",
                    case.name
                );
                ours.insert(isa, frames(&v));
                continue;
            };
            let theirs = oracle_json_on(cpu, &r, &d, "", &dir, isa);
            compare_logs_as(
                &v,
                &theirs,
                &["vmaf"],
                &format!("{} [libvmaf_isa={isa} vs libvmaf on {cpu:?}]", case.name),
                cpu,
            );
            ours.insert(isa, frames(&v));
        }
        for isa in ["avx2", "avx512"] {
            assert_eq!(
                ours[isa] != ours["c"],
                differ_from_c.contains(&isa),
                "{}: libvmaf_isa={isa} should {}differ from c here",
                case.name,
                if differ_from_c.contains(&isa) {
                    ""
                } else {
                    "not "
                }
            );
        }
    }
}

/// `libvmaf_isa=auto` resolves to what libvmaf does on the CPU it runs on: on an emulated
/// AVX2-only CPU, our CLI and libvmaf both take the AVX2 variant and agree exactly, on any host.
#[test]
fn auto_follows_the_cpu_it_runs_on() {
    let case = &EDGE_CASES[2].case;
    let dir = workdir(&format!("{}-auto-avx2", case.name));
    let (r, d) = make_pair(case, &dir);
    let theirs = oracle_json_on(OracleCpu::Avx2, &r, &d, "", &dir, "avx2");
    let log = dir.join("ours-avx2.json");
    let out = vmaf_rs_on(OracleCpu::Avx2, &r, &d, &["--verbose"], &log);
    assert!(
        out.contains(
            "libvmaf_isa=avx2 (auto: libvmaf's kernels on this host, x86-64 with AVX2, no AVX-512)"
        ),
        "{out}"
    );
    let ours = read_json(&log);
    assert_eq!(ours["vmaf_rs"]["libvmaf_isa_requested"], "auto");
    compare_logs_as(
        &ours,
        &theirs,
        &["vmaf"],
        &format!("{} [auto on an AVX2 CPU]", case.name),
        OracleCpu::Avx2,
    );
}

/// `psnr` with every option, on every layout and the bit depths libvmaf's psnr takes: per-frame
/// `psnr_*`/`mse_*`, pooled values and the `apsnr_*` aggregates equal libvmaf's as printed.
#[test]
fn psnr_every_layout_depth_and_option() {
    let all = "name=psnr:enable_mse=true:enable_apsnr=true";
    let cases: [(Case, &str, &str); 5] = [
        (
            Case {
                name: "psnr-420-odd",
                source: "testsrc2=s=97x61:r=25:d=0.4",
                pix_fmt: "yuv420p",
                dist_filter: NOISE,
                encode: &[],
            },
            all,
            "base",
        ),
        (
            Case {
                name: "psnr-422-10bit-x264",
                source: "mandelbrot=s=130x66:r=25,trim=end_frame=6",
                pix_fmt: "yuv422p10le",
                dist_filter: "",
                encode: &["-c:v", "libx264", "-crf", "35", "-preset", "ultrafast"],
            },
            all,
            "base",
        ),
        (
            Case {
                name: "psnr-444-12bit",
                source: "testsrc2=s=96x80:r=25:d=0.24",
                pix_fmt: "yuv444p12le",
                dist_filter: "gblur=sigma=1.5",
                encode: &[],
            },
            "name=psnr:reduced_hbd_peak=true:min_sse=0.5:enable_apsnr=true",
            "hbdpeak",
        ),
        (
            Case {
                name: "psnr-420-16bit-luma",
                source: "testsrc2=s=65x49:r=25:d=0.24",
                pix_fmt: "yuv420p16le",
                dist_filter: NOISE,
                encode: &[],
            },
            "name=psnr:enable_chroma=false:enable_apsnr=true:enable_mse=true",
            "luma",
        ),
        (
            Case {
                name: "psnr-identical",
                source: "testsrc2=s=64x48:r=25:d=0.2",
                pix_fmt: "yuv420p",
                dist_filter: "",
                encode: &[],
            },
            "name=psnr:min_sse=2:enable_apsnr=true",
            "minsse",
        ),
    ];
    for (case, feature, tag) in cases {
        // libvmaf's filter option: the feature string with its ':' escaped.
        let oracle = format!("feature='{}'", feature.replace(':', "\\:"));
        check(&case, &oracle, &["--feature", feature], &["vmaf"], tag);
    }
    // With n_subsample the aggregate still counts every frame (libvmaf runs psnr on all).
    check(
        &NOISY,
        "n_subsample=3:feature='name=psnr\\:enable_apsnr=true'",
        &[
            "--subsample",
            "3",
            "--threads",
            "2",
            "--feature",
            "name=psnr:enable_apsnr=true",
        ],
        &["vmaf"],
        "psnr-subsample3",
    );
}

/// 4:0:0: libvmaf's psnr turns chroma off for it (its `init`), so only `psnr_y`/`mse_y` exist and
/// `apsnr_cb/_cr` are `-inf` (null in JSON). FFmpeg's `libvmaf` filter takes no gray format, so
/// libvmaf scores the 4:2:0 pair and we score its luma planes (extracted exactly with
/// `extractplanes=y`): luma values must be equal, and libvmaf's chroma keys are the ones it
/// leaves out itself for 4:0:0.
#[test]
fn psnr_gray_has_luma_only() {
    let feature = "name=psnr:enable_mse=true:enable_apsnr=true";
    for (pix_fmt, gray) in [("yuv420p", "gray"), ("yuv420p10le", "gray10le")] {
        let case = Case {
            name: "psnr-gray",
            source: "testsrc2=s=64x48:r=25:d=0.24",
            pix_fmt,
            dist_filter: NOISE,
            encode: &[],
        };
        let dir = workdir(&format!("psnr-{gray}"));
        let (r, d) = make_pair(&case, &dir);
        let luma = |p: &Path, name: &str| {
            let out = dir.join(name);
            ffmpeg(&[
                "-i",
                p.to_str().unwrap(),
                "-vf",
                "extractplanes=y",
                "-pix_fmt",
                gray,
                "-strict",
                "-1",
                out.to_str().unwrap(),
            ]);
            out
        };
        let (gr, gd) = (luma(&r, "ref-y.y4m"), luma(&d, "dis-y.y4m"));
        let oracle = format!("feature='{}'", feature.replace(':', "\\:"));
        let mut theirs = oracle_json(&r, &d, &oracle, &dir, "gray");
        let chroma = ["psnr_cb", "psnr_cr", "mse_cb", "mse_cr"];
        for f in theirs["frames"].as_array_mut().unwrap() {
            let m = f["metrics"].as_object_mut().unwrap();
            chroma
                .iter()
                .for_each(|k| assert!(m.remove(*k).is_some(), "{k}"));
        }
        let pooled = theirs["pooled_metrics"].as_object_mut().unwrap();
        chroma
            .iter()
            .for_each(|k| assert!(pooled.remove(*k).is_some()));
        for k in ["apsnr_cb", "apsnr_cr"] {
            theirs["aggregate_metrics"][k] = serde_json::Value::Null;
        }
        let log = dir.join("ours.json");
        vmaf_rs(&gr, &gd, &["--feature", feature], &log);
        compare_logs(&read_json(&log), &theirs, &["vmaf"], gray);
    }
}

/// The float model on more content: 10-bit 4:2:2 x264, an odd size, 12-bit blur, with threads.
#[test]
fn float_model_on_every_depth() {
    for case in [
        Case {
            name: "float-model-422-10bit-x264",
            source: "mandelbrot=s=130x66:r=25,trim=end_frame=6",
            pix_fmt: "yuv422p10le",
            dist_filter: "",
            encode: &["-c:v", "libx264", "-crf", "35", "-preset", "ultrafast"],
        },
        Case {
            name: "float-model-odd",
            source: "testsrc2=s=97x61:r=25:d=0.4",
            pix_fmt: "yuv420p",
            dist_filter: NOISE,
            encode: &[],
        },
        Case {
            name: "float-model-444-12bit",
            source: "testsrc2=s=96x80:r=25:d=0.24",
            pix_fmt: "yuv444p12le",
            dist_filter: "gblur=sigma=1.5",
            encode: &[],
        },
    ] {
        check(
            &case,
            "model=version=vmaf_float_v0.6.1:n_threads=2",
            &["-m", "version=vmaf_float_v0.6.1", "--threads", "2"],
            &["vmaf"],
            "float",
        );
    }
}
