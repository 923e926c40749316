//! GPU end to end through FFmpeg: the patched ffmpeg's `vmaf_rs` filter on CUDA frames (hwupload,
//! NVDEC) must give the same per-frame values, bit for bit, as the same filter on the same samples
//! in host memory (the CPU path, itself checked against libvmaf by tests/ffmpeg.rs); plus the
//! errors for inputs in two CUDA contexts, mixed memory kinds, mismatched formats and refused
//! backends, and a throughput measurement with the frames already on the GPU.
//!
//! Runs on the GPU machine from a prebuilt binary (scripts/gpu-check.sh --stage builds it, the
//! patched ffmpeg and the encoded media; scripts/gpu-check.sh runs it there). Without a GPU or
//! libcuda every GPU test prints why and passes ("skipped: ..."), unless VMAF_RS_REQUIRE_GPU=1.
//!
//! Environment: VMAF_RS_FFMPEG (default build/ffmpeg/bin/ffmpeg), VMAF_RS_CUDA_MEDIA (default
//! build/gpu/media: the H.264/HEVC files made with the oracle's encoders by
//! `scripts/gpu-check.sh --stage`), VMAF_RS_WORK (scratch, default $TMPDIR/vmaf_rs_ffmpeg_cuda).

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;
use std::time::Instant;

fn root() -> PathBuf {
    std::env::var_os("VMAF_RS_ROOT")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")))
}

fn ffmpeg_path() -> PathBuf {
    std::env::var_os("VMAF_RS_FFMPEG")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("build/ffmpeg/bin/ffmpeg"))
}

fn media() -> PathBuf {
    std::env::var_os("VMAF_RS_CUDA_MEDIA")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("build/gpu/media"))
}

fn workdir(name: &str) -> PathBuf {
    let base = std::env::var_os("VMAF_RS_WORK")
        .map(PathBuf::from)
        .unwrap_or_else(|| std::env::temp_dir().join("vmaf_rs_ffmpeg_cuda"));
    let d = base.join(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Why the GPU tests cannot run here, if they cannot: no libcuda, no device.
fn gpu_missing() -> Option<String> {
    static R: OnceLock<Option<String>> = OnceLock::new();
    R.get_or_init(|| {
        // SAFETY: dlopen/dlsym with NUL-terminated names; the symbols are called with their
        // documented signatures (cuInit(unsigned), cuDeviceGetCount(int*)).
        let why = unsafe {
            let h = libc::dlopen(c"libcuda.so.1".as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL);
            if h.is_null() {
                Some("no CUDA driver (libcuda.so.1 not found)".to_string())
            } else {
                let init = libc::dlsym(h, c"cuInit".as_ptr());
                let count = libc::dlsym(h, c"cuDeviceGetCount".as_ptr());
                if init.is_null() || count.is_null() {
                    Some("libcuda lacks cuInit/cuDeviceGetCount".into())
                } else {
                    let init: extern "C" fn(u32) -> i32 = std::mem::transmute(init);
                    let count: extern "C" fn(*mut i32) -> i32 = std::mem::transmute(count);
                    let mut n = 0;
                    let r = init(0);
                    if r != 0 {
                        Some(format!("cuInit failed ({r})"))
                    } else if count(&mut n) != 0 || n == 0 {
                        Some("no CUDA device".into())
                    } else {
                        None
                    }
                }
            }
        };
        why
    })
    .clone()
}

/// Fails (never skips) when the patched ffmpeg has not been built.
fn require_ffmpeg() {
    assert!(
        ffmpeg_path().exists(),
        "{} is missing: build it with scripts/ffmpeg-build.sh (scripts/test.sh does)",
        ffmpeg_path().display()
    );
}

/// True (after printing why) when the GPU tests must be skipped: only without a GPU, and never
/// under `VMAF_RS_REQUIRE_GPU=1`.
fn skip() -> bool {
    require_ffmpeg();
    match gpu_missing() {
        None => false,
        Some(why) => {
            assert!(
                std::env::var("VMAF_RS_REQUIRE_GPU").as_deref() != Ok("1"),
                "VMAF_RS_REQUIRE_GPU=1 but: {why}"
            );
            eprintln!("skipped: {why}");
            true
        }
    }
}

fn ffmpeg(args: &[&str]) -> Output {
    let mut c = Command::new(ffmpeg_path());
    c.args(["-hide_banner", "-nostdin", "-y", "-loglevel", "verbose"]);
    c.args(args);
    c.env(
        "LD_LIBRARY_PATH",
        format!(
            "/usr/local/nvidia/lib64:{}",
            std::env::var("LD_LIBRARY_PATH").unwrap_or_default()
        ),
    );
    c.output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", ffmpeg_path().display()))
}

fn text(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).to_string()
}

fn ok(o: &Output, what: &str) -> String {
    let t = text(o);
    assert!(o.status.success(), "{what}: ffmpeg failed:\n{t}");
    t
}

fn fails_with(o: &Output, needle: &str, what: &str) {
    let t = text(o);
    assert!(!o.status.success(), "{what}: ffmpeg succeeded:\n{t}");
    assert!(
        t.contains(needle),
        "{what}: no '{needle}' in the output:\n{t}"
    );
}

fn read_json(p: &Path) -> Value {
    let s = std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    serde_json::from_str(&s).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// Per-frame values and pooled metrics must be identical (same printed text, so same bits at the
/// log's precision; the metadata check below compares the %f values too).
fn assert_same_logs(cuda: &Value, cpu: &Value, case: &str) -> usize {
    let fc = cuda["frames"].as_array().expect("frames (cuda)");
    let fp = cpu["frames"].as_array().expect("frames (cpu)");
    assert!(!fp.is_empty(), "{case}: no frames scored");
    assert_eq!(fc.len(), fp.len(), "{case}: frame count");
    for (i, (a, b)) in fc.iter().zip(fp).enumerate() {
        assert_eq!(a["frameNum"], b["frameNum"], "{case}: frame {i} number");
        let (ma, mb) = (
            a["metrics"].as_object().unwrap(),
            b["metrics"].as_object().unwrap(),
        );
        assert_eq!(
            ma.keys().collect::<Vec<_>>(),
            mb.keys().collect::<Vec<_>>(),
            "{case}: frame {i} metric names"
        );
        for (k, va) in ma {
            let vb = &mb[k];
            assert!(
                va.as_f64().map(f64::to_bits) == vb.as_f64().map(f64::to_bits),
                "{case}: frame {i} {k}: cuda {va} != cpu {vb}"
            );
        }
    }
    assert_eq!(
        cuda["pooled_metrics"], cpu["pooled_metrics"],
        "{case}: pooled metrics"
    );
    assert_eq!(
        cuda["aggregate_metrics"], cpu["aggregate_metrics"],
        "{case}: aggregate metrics"
    );
    fp.len()
}

/// How both runs get their inputs: lavfi sources (uploaded for CUDA) or encoded files (NVDEC).
enum Input {
    /// lavfi graphs for the distorted and the reference video, ending in a software format;
    /// the CUDA run appends `hwupload`.
    Lavfi { dis: String, reference: String },
    /// Encoded files under media(): decoded by NVDEC (CUDA run) or in software (CPU run).
    Files {
        dis: &'static str,
        reference: &'static str,
    },
    /// Encoded files under media() decoded in software by both runs; the CUDA run uploads the
    /// decoded frames (`hwupload`), for codecs this GPU's NVDEC cannot decode.
    FilesUploaded {
        dis: &'static str,
        reference: &'static str,
    },
}

/// The two encoded files of a case, checked to exist.
fn media_pair(dis: &str, reference: &str) -> (String, String) {
    let (d, r) = (media().join(dis), media().join(reference));
    assert!(
        d.exists() && r.exists(),
        "{} / {} missing: make them with scripts/gpu-check.sh --stage",
        d.display(),
        r.display()
    );
    (d.display().to_string(), r.display().to_string())
}

/// Why NVDEC cannot decode `file` on this GPU, from the driver's capability answer that FFmpeg
/// prints (e.g. the H100/H200 have no AV1 decoder); None when it decodes a frame.
fn nvdec_cannot_decode(file: &str) -> Option<String> {
    let (d, _) = media_pair(file, file);
    let o = ffmpeg(&[
        "-hwaccel",
        "cuda",
        "-hwaccel_output_format",
        "cuda",
        "-i",
        &d,
        "-frames:v",
        "1",
        "-f",
        "null",
        "-",
    ]);
    let t = text(&o);
    let lacks = [
        "Hardware is lacking required capabilities",
        "doesn't support hardware accelerated",
    ];
    if o.status.success() {
        None
    } else if let Some(line) = t.lines().find(|l| lacks.iter().any(|k| l.contains(k))) {
        Some(line.trim().to_string())
    } else {
        panic!("NVDEC probe of {file} failed for another reason:\n{t}")
    }
}

/// Scores a case on CUDA frames and on host frames; asserts identical logs and that the CUDA
/// run's output frames are CUDA frames with per-frame metadata. Returns the frames compared.
/// `sw` is the CUDA frames' sw_format (for `hwdownload,format=`).
fn cuda_vs_cpu(case: &str, input: &Input, sw: &str, opts: &str) -> usize {
    cuda_vs_cpu_placed(case, input, sw, opts).0
}

/// [`cuda_vs_cpu`], also returning the CUDA run's placement line (where each feature ran).
fn cuda_vs_cpu_placed(case: &str, input: &Input, sw: &str, opts: &str) -> (usize, String) {
    let dir = workdir(case);
    let (cuda_log, cpu_log, meta) = (
        dir.join("cuda.json"),
        dir.join("cpu.json"),
        dir.join("meta.txt"),
    );
    let extra = if opts.is_empty() {
        String::new()
    } else {
        format!(":{opts}")
    };
    // The reference run on the CPU uses every core: the whole-request cases (ciede, cambi,
    // psnr_hvs at 1080p) took minutes on one.
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let (cuda_out, cpu_out) = match input {
        Input::Lavfi { dis, reference } => {
            let cuda_graph = format!(
                "{dis},hwupload[m];{reference},hwupload[r];\
                 [m][r]vmaf_rs=backend=cuda:log_fmt=json:log_path={}{extra},\
                 hwdownload,format={sw},metadata=print:file={}",
                cuda_log.display(),
                meta.display()
            );
            let cpu_graph = format!(
                "{dis}[m];{reference}[r];[m][r]vmaf_rs=backend=cpu:n_threads={threads}:log_fmt=json:log_path={}{extra}",
                cpu_log.display()
            );
            (
                ffmpeg(&[
                    "-init_hw_device",
                    "cuda=cu",
                    "-filter_hw_device",
                    "cu",
                    "-filter_complex",
                    &cuda_graph,
                    "-f",
                    "null",
                    "-",
                ]),
                ffmpeg(&["-filter_complex", &cpu_graph, "-f", "null", "-"]),
            )
        }
        Input::FilesUploaded { dis, reference } => {
            let (d, r) = media_pair(dis, reference);
            let cuda_graph = format!(
                "[0:v]hwupload[m];[1:v]hwupload[r];\
                 [m][r]vmaf_rs=backend=cuda:log_fmt=json:log_path={}{extra},\
                 hwdownload,format={sw},metadata=print:file={}",
                cuda_log.display(),
                meta.display()
            );
            let cpu_graph = format!(
                "[0:v][1:v]vmaf_rs=backend=cpu:n_threads={threads}:log_fmt=json:log_path={}{extra}",
                cpu_log.display()
            );
            (
                ffmpeg(&[
                    "-init_hw_device",
                    "cuda=cu",
                    "-filter_hw_device",
                    "cu",
                    "-i",
                    &d,
                    "-i",
                    &r,
                    "-filter_complex",
                    &cuda_graph,
                    "-f",
                    "null",
                    "-",
                ]),
                ffmpeg(&["-i", &d, "-i", &r, "-lavfi", &cpu_graph, "-f", "null", "-"]),
            )
        }
        Input::Files { dis, reference } => {
            let (d, r) = media_pair(dis, reference);
            let (d, r) = (d.as_str(), r.as_str());
            let hw = ["-hwaccel", "cuda", "-hwaccel_output_format", "cuda"];
            let cuda_graph = format!(
                "[0:v][1:v]vmaf_rs=backend=cuda:log_fmt=json:log_path={}{extra},\
                 hwdownload,format={sw},metadata=print:file={}",
                cuda_log.display(),
                meta.display()
            );
            let mut a: Vec<&str> = hw.to_vec();
            a.extend(["-i", d]);
            a.extend(hw);
            a.extend(["-i", r, "-lavfi", &cuda_graph, "-f", "null", "-"]);
            let cpu_graph = format!(
                "[0:v][1:v]vmaf_rs=backend=cpu:n_threads={threads}:log_fmt=json:log_path={}{extra}",
                cpu_log.display()
            );
            (
                ffmpeg(&a),
                ffmpeg(&["-i", d, "-i", r, "-lavfi", &cpu_graph, "-f", "null", "-"]),
            )
        }
    };
    let t = ok(&cuda_out, &format!("{case} (cuda)"));
    assert!(
        t.contains("scoring CUDA frames"),
        "{case}: the CUDA run did not take the GPU path:\n{t}"
    );
    assert!(t.contains("VMAF score: "), "{case}: no score:\n{t}");
    ok(&cpu_out, &format!("{case} (cpu)"));
    let n = assert_same_logs(&read_json(&cuda_log), &read_json(&cpu_log), case);
    // The CUDA run's output: CUDA frames (hwdownload accepted them) carrying the metadata.
    let m = std::fs::read_to_string(&meta).unwrap();
    let tagged = m.matches("lavfi.vmaf_rs.vmaf=").count();
    assert_eq!(tagged, n, "{case}: frames with lavfi.vmaf_rs.vmaf metadata");
    eprintln!("{case}: {n} frames bit-identical (CUDA == CPU)");
    println!("bit-identical: {case}: {n} frames");
    let placement = t
        .lines()
        .find(|l| l.contains("on CUDA: "))
        .unwrap_or_else(|| panic!("{case}: no placement line:\n{t}"))
        .trim()
        .to_string();
    (n, placement)
}

fn lavfi(src: &str, chain: &str) -> String {
    if chain.is_empty() {
        src.to_string()
    } else {
        format!("{src},{chain}")
    }
}

#[test]
fn hwupload_nv12_8bit_1080p() {
    if skip() {
        return;
    }
    let src = "testsrc2=s=1920x1080:r=25:d=0.64";
    cuda_vs_cpu(
        "hwupload-nv12-1080p",
        &Input::Lavfi {
            dis: lavfi(src, "noise=alls=14:allf=t+u,format=nv12"),
            reference: lavfi(src, "format=nv12"),
        },
        "nv12",
        "",
    );
}

#[test]
fn hwupload_yuv420p_odd_width_subsample() {
    if skip() {
        return;
    }
    // 854 is no multiple of 16 (ADM/VIF edge columns); n_subsample=2 releases unscored frames.
    let src = "testsrc2=s=854x480:r=25:d=0.8";
    cuda_vs_cpu(
        "hwupload-yuv420p-854x480-sub2",
        &Input::Lavfi {
            dis: lavfi(src, "format=yuv420p,gblur=sigma=1.3"),
            reference: lavfi(src, "format=yuv420p"),
        },
        "yuv420p",
        "n_subsample=2",
    );
}

#[test]
fn hwupload_p010_10bit() {
    if skip() {
        return;
    }
    // Real 10-bit values (blurred in 10 bits), MSB-aligned in p010 (shift 6).
    let src = "testsrc2=s=1280x720:r=25:d=0.64,format=yuv420p10le";
    cuda_vs_cpu(
        "hwupload-p010-720p",
        &Input::Lavfi {
            dis: lavfi(src, "gblur=sigma=1.1,format=p010le"),
            reference: lavfi(src, "format=p010le"),
        },
        "p010le",
        "",
    );
}

#[test]
fn hwupload_yuv444p16_two_models() {
    if skip() {
        return;
    }
    let src = "testsrc2=s=640x360:r=25:d=0.4,format=yuv444p16le";
    cuda_vs_cpu(
        "hwupload-yuv444p16-2models",
        &Input::Lavfi {
            dis: lavfi(src, "gblur=sigma=0.8"),
            reference: src.to_string(),
        },
        "yuv444p16le",
        // quoted: the graph parser keeps '\:' for the filter's own option parser
        "model='version=vmaf_v0.6.1\\:name=vmaf|version=vmaf_v0.6.1neg\\:name=vmaf_neg'",
    );
}

/// The eight v1.0.16 models (cambi, speed_chroma, adm3, motion3 with the HFR options) entirely
/// on CUDA (nothing on the CPU fallback) and CUDA == CPU: hwupload 4:2:0 nv12 and an odd-size
/// 4:4:4, then with v0.6.1, psnr and float_ssim in the same pass on NVDEC H.264 and HEVC 10-bit.
#[test]
fn v1_models_and_a_whole_request_entirely_on_cuda() {
    if skip() {
        return;
    }
    const MODELS: [&str; 8] = [
        "vmaf_v1.0.16_1d5h_2160",
        "vmaf_v1.0.16_3d0h",
        "vmaf_v1.0.16_3d0h_2160",
        "vmaf_v1.0.16_5d0h",
        "vmaf_v1.0.16_hfr_1d5h_2160",
        "vmaf_v1.0.16_hfr_3d0h",
        "vmaf_v1.0.16_hfr_3d0h_2160",
        "vmaf_v1.0.16_hfr_5d0h",
    ];
    let all = MODELS
        .iter()
        .enumerate()
        // The first is named vmaf: its per-frame metadata (lavfi.vmaf_rs.vmaf) is checked.
        .map(|(i, m)| match i {
            0 => format!("version={m}\\:name=vmaf"),
            _ => format!("version={m}\\:name=m{i}"),
        })
        .collect::<Vec<_>>()
        .join("|");
    let on_gpu_only = |case: &str, line: &str| {
        assert!(
            !line.contains("on the CPU from"),
            "{case}: something ran on the CPU fallback: {line}"
        );
        println!("{case}: {line}");
    };
    for (case, src, chain, sw) in [
        (
            "v1-models-nv12-720p",
            "testsrc2=s=1280x720:r=25:d=0.4",
            "format=nv12",
            "nv12",
        ),
        (
            "v1-models-yuv444p-481x271",
            "testsrc2=s=481x271:r=25:d=0.4",
            "format=yuv444p",
            "yuv444p",
        ),
    ] {
        let (_, line) = cuda_vs_cpu_placed(
            case,
            &Input::Lavfi {
                dis: lavfi(src, &format!("noise=alls=14:allf=t+u,{chain}")),
                reference: lavfi(src, chain),
            },
            sw,
            &format!("model='{all}'"),
        );
        on_gpu_only(case, &line);
    }
    // On NVDEC frames (pitched, 1088 coded rows; p010 MSB-aligned): the eight models again, with
    // v0.6.1, psnr and float_ssim in the same pass.
    let request = format!(
        "model='{all}|version=vmaf_v0.6.1\\:name=v061':feature='name=psnr|name=float_ssim'"
    );
    for (case, dis, reference, sw) in [
        (
            "v1-request-nvdec-h264-1080p",
            "dis_h264_1080p.mkv",
            "ref_h264_1080p.mkv",
            "nv12",
        ),
        (
            "v1-request-nvdec-hevc10-1080p",
            "dis_hevc10_1080p.mkv",
            "ref_hevc10_1080p.mkv",
            "p010le",
        ),
    ] {
        let (_, line) = cuda_vs_cpu_placed(case, &Input::Files { dis, reference }, sw, &request);
        on_gpu_only(case, &line);
    }
}

/// Every extra feature libvmaf has, in one request with the v1.0.16 model and the default one,
/// runs on CUDA with nothing on the CPU fallback, and CUDA == CPU: NVDEC H.264 8-bit and HEVC
/// 10-bit (interleaved chroma), hwupload 4:4:4 and 4:2:0 (planar) at odd sizes.
#[test]
fn every_feature_in_one_pass_entirely_on_cuda() {
    if skip() {
        return;
    }
    let request = "model='version=vmaf_v1.0.16_3d0h\\:name=v1|version=vmaf_v0.6.1\\:name=vmaf':\
                   feature='name=psnr|name=psnr_hvs|name=float_ssim|name=float_ms_ssim|\
                   name=ciede|name=cambi|name=speed_chroma|name=speed_temporal|name=float_vif|\
                   name=float_adm|name=float_motion|name=float_psnr|name=float_ansnr|\
                   name=float_moment'";
    let on_gpu_only = |case: &str, line: &str| {
        assert!(
            !line.contains("on the CPU from"),
            "{case}: something ran on the CPU fallback: {line}"
        );
        for f in [
            "ciede",
            "psnr_hvs",
            "float_ms_ssim",
            "cambi",
            "speed_chroma",
        ] {
            assert!(line.contains(f), "{case}: {f} is not on CUDA: {line}");
        }
        println!("{case}: {line}");
    };
    for (case, dis, reference, sw) in [
        (
            "all-features-nvdec-h264-1080p",
            "dis_h264_1080p.mkv",
            "ref_h264_1080p.mkv",
            "nv12",
        ),
        (
            "all-features-nvdec-hevc10-1080p",
            "dis_hevc10_1080p.mkv",
            "ref_hevc10_1080p.mkv",
            "p010le",
        ),
    ] {
        let (n, line) = cuda_vs_cpu_placed(case, &Input::Files { dis, reference }, sw, request);
        on_gpu_only(case, &line);
        println!("bit-identical: {case}: {n} frames");
    }
    for (case, src, chain, sw) in [
        (
            "all-features-yuv444p-481x271",
            "testsrc2=s=481x271:r=25:d=0.4",
            "format=yuv444p",
            "yuv444p",
        ),
        (
            "all-features-yuv420p-641x361",
            "testsrc2=s=641x361:r=25:d=0.4",
            "format=yuv420p",
            "yuv420p",
        ),
    ] {
        let (n, line) = cuda_vs_cpu_placed(
            case,
            &Input::Lavfi {
                dis: lavfi(src, &format!("noise=alls=14:allf=t+u,{chain}")),
                reference: lavfi(src, chain),
            },
            sw,
            request,
        );
        on_gpu_only(case, &line);
        println!("bit-identical: {case}: {n} frames");
    }
}

#[test]
fn nvdec_h264_8bit_1080p() {
    if skip() {
        return;
    }
    // NVDEC frames are allocated at the coded height (1088 rows).
    cuda_vs_cpu(
        "nvdec-h264-1080p",
        &Input::Files {
            dis: "dis_h264_1080p.mkv",
            reference: "ref_h264_1080p.mkv",
        },
        "nv12",
        "",
    );
}

#[test]
fn nvdec_hevc_10bit_1080p() {
    if skip() {
        return;
    }
    // NVDEC gives p010 (MSB-aligned); the software decoder yuv420p10le (LSB): same samples.
    cuda_vs_cpu(
        "nvdec-hevc10-1080p",
        &Input::Files {
            dis: "dis_hevc10_1080p.mkv",
            reference: "ref_hevc10_1080p.mkv",
        },
        "p010le",
        "",
    );
}

#[test]
fn nvdec_av1_8bit_720p() {
    if skip() {
        return;
    }
    // AV1 from SVT-AV1: NVDEC on the CUDA side, libdav1d on the CPU side. Some GPUs have NVDEC
    // without AV1 (the H100/H200 among them): there the AV1 frames are decoded by libdav1d and
    // uploaded, so AV1 content still meets the CUDA path, and the test says which it ran.
    let (dis, reference) = ("dis_av1_720p.mkv", "ref_av1_720p.mkv");
    match nvdec_cannot_decode(dis) {
        None => {
            cuda_vs_cpu(
                "nvdec-av1-720p",
                &Input::Files { dis, reference },
                "nv12",
                "",
            );
        }
        Some(why) => {
            assert!(
                std::env::var("VMAF_RS_REQUIRE_NVDEC_AV1").as_deref() != Ok("1"),
                "VMAF_RS_REQUIRE_NVDEC_AV1=1 but NVDEC cannot decode AV1 here: {why}"
            );
            println!("nvdec-av1-720p: NVDEC on this GPU has no AV1 decoder ({why}); AV1 decoded by libdav1d and uploaded instead");
            cuda_vs_cpu(
                "hwupload-av1-720p",
                &Input::FilesUploaded { dis, reference },
                "yuv420p",
                "",
            );
        }
    }
}

#[test]
fn nvdec_vp9_8bit_720p() {
    if skip() {
        return;
    }
    cuda_vs_cpu(
        "nvdec-vp9-720p",
        &Input::Files {
            dis: "dis_vp9_720p.webm",
            reference: "ref_vp9_720p.webm",
        },
        "nv12",
        "",
    );
}

/// Tools that ask for `libvmaf_cuda` (easyVmaf's `-gpu`) on NVDEC frames get our CUDA path under
/// that name: libvmaf's `VMAF score:` line and the CPU run's values.
#[test]
fn libvmaf_cuda_name_on_nvdec_frames() {
    if skip() {
        return;
    }
    let dir = workdir("libvmaf-cuda-name");
    let (cuda_log, cpu_log) = (dir.join("cuda.json"), dir.join("cpu.json"));
    let (d, r) = (
        media().join("dis_h264_1080p.mkv"),
        media().join("ref_h264_1080p.mkv"),
    );
    let (d, r) = (d.to_str().unwrap(), r.to_str().unwrap());
    let hw = ["-hwaccel", "cuda", "-hwaccel_output_format", "cuda"];
    let graph = format!(
        "[0:v][1:v]libvmaf_cuda=log_fmt=json:log_path={}",
        cuda_log.display()
    );
    let mut a: Vec<&str> = hw.to_vec();
    a.extend(["-i", d]);
    a.extend(hw);
    a.extend(["-i", r, "-lavfi", &graph, "-f", "null", "-"]);
    let t = ok(&ffmpeg(&a), "libvmaf_cuda on NVDEC frames");
    assert!(t.contains("VMAF score: "), "no libvmaf score line:\n{t}");
    let cpu_graph = format!(
        "[0:v][1:v]vmaf_rs=backend=cpu:log_fmt=json:log_path={}",
        cpu_log.display()
    );
    ok(
        &ffmpeg(&["-i", d, "-i", r, "-lavfi", &cpu_graph, "-f", "null", "-"]),
        "vmaf_rs on the CPU",
    );
    let n = assert_same_logs(&read_json(&cuda_log), &read_json(&cpu_log), "libvmaf_cuda");
    println!("bit-identical: libvmaf_cuda name on NVDEC frames: {n} frames");
}

const SMALL: &str = "testsrc2=s=320x240:r=25:d=0.2";

#[test]
fn error_two_cuda_contexts() {
    if skip() {
        return;
    }
    // Two hwupload_cuda filters create two CUDA contexts.
    let g = format!(
        "{SMALL},format=nv12,hwupload_cuda[m];{SMALL},format=nv12,hwupload_cuda[r];[m][r]vmaf_rs"
    );
    let o = ffmpeg(&["-filter_complex", &g, "-f", "null", "-"]);
    fails_with(&o, "two different CUDA contexts", "two contexts");
    fails_with(
        &o,
        "-hwaccel cuda -hwaccel_output_format cuda",
        "two contexts (advice)",
    );
}

#[test]
fn error_backend_cpu_with_cuda_frames() {
    if skip() {
        return;
    }
    let g = format!(
        "{SMALL},format=nv12,hwupload[m];{SMALL},format=nv12,hwupload[r];[m][r]vmaf_rs=backend=cpu"
    );
    let o = ffmpeg(&[
        "-init_hw_device",
        "cuda=cu",
        "-filter_hw_device",
        "cu",
        "-filter_complex",
        &g,
        "-f",
        "null",
        "-",
    ]);
    fails_with(
        &o,
        "backend=cpu but the inputs are CUDA frames",
        "backend=cpu",
    );
}

#[test]
fn error_mixed_memory_and_formats() {
    if skip() {
        return;
    }
    let dev = ["-init_hw_device", "cuda=cu", "-filter_hw_device", "cu"];
    // main on the GPU, reference in host memory
    let g = format!("{SMALL},format=nv12,hwupload[m];{SMALL},format=nv12[r];[m][r]vmaf_rs");
    let mut a = dev.to_vec();
    a.extend(["-filter_complex", &g, "-f", "null", "-"]);
    fails_with(
        &ffmpeg(&a),
        "both inputs must be CUDA frames",
        "mixed memory",
    );
    // both CUDA, different sw_format
    let g =
        format!("{SMALL},format=nv12,hwupload[m];{SMALL},format=p010le,hwupload[r];[m][r]vmaf_rs");
    let mut a = dev.to_vec();
    a.extend(["-filter_complex", &g, "-f", "null", "-"]);
    fails_with(
        &ffmpeg(&a),
        "inputs differ: main 320x240 cuda(nv12), reference 320x240 cuda(p010le)",
        "sw_format mismatch",
    );
}

/// Ladder scoring on CUDA frames (`inputs=4`: three renditions and the reference, uploaded by
/// one device): every rendition scored on CUDA, reading the one reference frame, and each
/// rendition's log identical to the CPU ladder's (which tests/ffmpeg.rs holds equal to separate
/// filters); inputs that are not all CUDA frames are refused by name, with the fix.
#[test]
fn ladder_on_cuda_frames_equals_the_cpu_ladder() {
    if skip() {
        return;
    }
    let dir = workdir("cuda-ladder");
    let src = "testsrc2=s=321x241:r=25:d=0.4";
    let inputs = |up: &str| {
        let mut g = String::new();
        for (k, pad) in ["a", "b", "c"].iter().enumerate() {
            g += &format!(
                "{src},noise=alls={}:allf=t,format=nv12{up}[{pad}];",
                7 * (k + 1)
            );
        }
        g + &format!("{src},format=nv12{up}[r];[a][b][c][r]")
    };
    let opts = "inputs=4:log_fmt=json:feature=name=psnr|name=float_ssim|name=ciede";
    let log = |tag: &str| dir.join(format!("{tag}_%v.json"));
    let dev = ["-init_hw_device", "cuda=cu", "-filter_hw_device", "cu"];
    let cuda_graph = format!(
        "{}vmaf_rs=backend=cuda:{opts}:log_path={}",
        inputs(",hwupload"),
        log("cuda").display()
    );
    let mut a = dev.to_vec();
    a.extend(["-filter_complex", &cuda_graph, "-f", "null", "-"]);
    let cuda = ok(&ffmpeg(&a), "ladder on CUDA");
    assert!(
        cuda.contains("vmaf_rs: on CUDA:") && !cuda.contains("on the CPU from"),
        "every feature on CUDA:\n{cuda}"
    );
    let cpu_graph = format!(
        "{}vmaf_rs=backend=cpu:{opts}:log_path={}",
        inputs(""),
        log("cpu").display()
    );
    ok(
        &ffmpeg(&["-filter_complex", &cpu_graph, "-f", "null", "-"]),
        "ladder on the CPU",
    );
    for r in 0..3 {
        let read = |tag: &str| read_json(&dir.join(format!("{tag}_{r}.json")));
        let (g, c) = (read("cuda"), read("cpu"));
        assert_eq!(g["frames"], c["frames"], "rendition {r}: per-frame values");
        assert_eq!(
            g["pooled_metrics"], c["pooled_metrics"],
            "rendition {r}: pooled"
        );
        assert_eq!(g["frames"].as_array().map_or(0, Vec::len), 10);
    }
    println!("bit-identical: ladder on CUDA frames, 3 renditions x 10 frames");
    for (what, g, needle) in [
        (
            "only the reference on the GPU",
            format!("{SMALL},format=nv12[a];{SMALL},format=nv12[b];{SMALL},format=nv12,hwupload[r];[a][b][r]vmaf_rs=inputs=3"),
            "main1 is nv12, reference is cuda(nv12): every input must be CUDA frames",
        ),
        (
            "a rendition in another format",
            format!("{SMALL},format=nv12,hwupload[a];{SMALL},format=p010le,hwupload[b];{SMALL},format=nv12,hwupload[r];[a][b][r]vmaf_rs=inputs=3"),
            "inputs differ: main1 320x240 cuda(p010le), reference 320x240 cuda(nv12)",
        ),
    ] {
        let mut a = dev.to_vec();
        a.extend(["-filter_complex", &g, "-f", "null", "-"]);
        fails_with(&ffmpeg(&a), needle, what);
    }
}

/// Host frames with backend=cuda: the library uploads them itself and scores them on the GPU,
/// with the CPU's values; without a GPU (or a CUDA build) a clear error, never a crash.
#[test]
fn backend_cuda_with_host_frames_uploads() {
    require_ffmpeg();
    let dir = workdir("backend_cuda_host");
    let (cuda_log, cpu_log) = (dir.join("cuda.json"), dir.join("cpu.json"));
    let graph = |backend: &str, log: &Path| {
        format!(
            "{SMALL},format=yuv420p[m];{SMALL},format=yuv420p,noise=alls=12:allf=t[r];\
             [m][r]vmaf_rs=backend={backend}:\
             feature=name=psnr:log_fmt=json:log_path={}",
            log.display()
        )
    };
    let o = ffmpeg(&[
        "-filter_complex",
        &graph("cuda", &cuda_log),
        "-f",
        "null",
        "-",
    ]);
    if gpu_missing().is_some() {
        fails_with(&o, "CUDA", "backend=cuda without a GPU");
        assert!(skip(), "gpu_missing() said so");
        return;
    }
    let t = ok(&o, "backend=cuda with host frames");
    assert!(
        t.contains("on CUDA: adm, motion, vif") && t.contains("psnr"),
        "the verbose log says where each feature runs:\n{t}"
    );
    let g = graph("cpu", &cpu_log);
    ok(
        &ffmpeg(&["-filter_complex", &g, "-f", "null", "-"]),
        "backend=cpu",
    );
    let n = assert_same_logs(&read_json(&cuda_log), &read_json(&cpu_log), "host upload");
    println!("bit-identical: backend=cuda, host frames uploaded by vmaf_rs: {n} frames");
}

/// Seconds for `frames` frames of vmaf_rs on WxH nv12 frames that are already on the GPU (8 of
/// each uploaded once, then replayed by `loop`) or in host memory (same graph, no upload).
fn time_run(w: u32, h: u32, frames: u32, cuda: bool, threads: usize) -> f64 {
    let k = 8;
    let src = |extra: &str| {
        format!(
            "testsrc2=s={w}x{h}:r=25,trim=end_frame={k}{extra},format=nv12{}\
             ,loop=loop={}:size={k},trim=end_frame={frames}",
            if cuda { ",hwupload" } else { "" },
            frames / k + 1
        )
    };
    let g = format!(
        "{}[m];{}[r];[m][r]vmaf_rs=n_threads={threads}",
        src(",noise=alls=10:allf=t"),
        src("")
    );
    let mut a = vec![];
    if cuda {
        a.extend(["-init_hw_device", "cuda=cu", "-filter_hw_device", "cu"]);
    }
    a.extend(["-filter_complex", &g, "-f", "null", "-"]);
    let t = Instant::now();
    let o = ffmpeg(&a);
    let s = t.elapsed().as_secs_f64();
    ok(&o, "throughput");
    s
}

/// fps from two lengths (the difference cancels the setup: device, graph, first uploads).
fn fps(w: u32, h: u32, n1: u32, n2: u32, cuda: bool, threads: usize) -> f64 {
    let t1 = time_run(w, h, n1, cuda, threads);
    let t2 = time_run(w, h, n2, cuda, threads);
    (n2 - n1) as f64 / (t2 - t1).max(1e-6)
}

#[test]
fn throughput_frames_on_gpu() {
    if skip() {
        return;
    }
    for (w, h, n1, n2) in [(1920, 1080, 200, 2200), (3840, 2160, 100, 1100)] {
        let f = fps(w, h, n1, n2, true, 0);
        println!("throughput: {w}x{h} nv12 on the GPU through the filter: {f:.0} fps");
        assert!(f > 10.0, "{w}x{h}: {f} fps");
    }
}

/// The cases of the chroma tests: interleaved chroma (nv12, p010 with its 6-bit shift) and planar
/// chroma with n_subsample, at an odd size (chroma rounded down as libvmaf does).
const CHROMA_CASES: [(&str, &str, &str, &str); 3] = [
    ("nv12", "nv12", "format=nv12", ""),
    (
        "yuv420p-sub3",
        "yuv420p",
        "format=yuv420p",
        ":n_subsample=3",
    ),
    ("p010", "p010le", "format=yuv420p10le,format=p010le", ""),
];

/// Runs `feature` on the CHROMA_CASES (CUDA == CPU), and returns each case's placement line.
fn chroma_cases(prefix: &str, feature: &str) -> Vec<String> {
    let mut lines = Vec::new();
    for (name, fmt, chain, sub) in CHROMA_CASES {
        let case = format!("{prefix}-{name}");
        let src = "testsrc2=s=641x361:r=25:d=0.48";
        let dis = lavfi(src, &format!("noise=alls=14:allf=t+u,{chain}"));
        let reference = lavfi(src, chain);
        cuda_vs_cpu(
            &case,
            &Input::Lavfi {
                dis: dis.clone(),
                reference: reference.clone(),
            },
            fmt,
            &format!("{feature}{sub}"),
        );
        // The placement line (a separate run: cuda_vs_cpu keeps only the logs).
        let graph = format!(
            "{dis},hwupload[m];{reference},hwupload[r];[m][r]vmaf_rs=backend=cuda:{feature}"
        );
        let o = ffmpeg(&[
            "-init_hw_device",
            "cuda=cu",
            "-filter_hw_device",
            "cu",
            "-filter_complex",
            &graph,
            "-f",
            "null",
            "-",
        ]);
        let t = ok(&o, &case);
        std::fs::write(workdir(&case).join("verbose.txt"), &t).unwrap();
        let line = t
            .lines()
            .find(|l| l.contains("on CUDA: "))
            .unwrap_or_else(|| {
                panic!("{case}: no placement line:\n{t}");
            });
        lines.push(line.to_string());
    }
    lines
}

/// psnr on CUDA frames runs its own kernel, reading chroma straight from the frames (no
/// download), and float_psnr its own: values and `apsnr_*` (every frame, also with
/// n_subsample) identical to the CPU path, and the verbose log says so.
#[test]
fn psnr_kernel_reads_chroma_from_cuda_frames() {
    if skip() {
        return;
    }
    let psnr = "feature='name=psnr\\:enable_mse=true\\:enable_apsnr=true|name=float_psnr'";
    for line in chroma_cases("psnr-kernel", psnr) {
        assert!(
            line.contains(" psnr")
                && line.contains("float_psnr")
                && !line.contains("downloaded planes"),
            "psnr and float_psnr are not both on CUDA: {line}"
        );
    }
}

/// float_motion on CUDA frames runs its own kernels, with motion_add_uv reading Cb/Cr straight
/// from the frames (planar, and interleaved nv12/p010), also with n_subsample: identical to the
/// CPU path, and the verbose log says it ran on CUDA.
#[test]
fn float_motion_kernel_reads_chroma_from_cuda_frames() {
    if skip() {
        return;
    }
    let feature = "feature='name=float_motion\\:motion_add_uv=true'";
    for line in chroma_cases("float-motion-kernel", feature) {
        assert!(
            line.contains("float_motion") && !line.contains("downloaded planes"),
            "float_motion is not on CUDA: {line}"
        );
    }
}

/// ciede on CUDA frames runs its own kernels, reading Cb/Cr straight from the frames (planar,
/// and interleaved nv12/p010), also with n_subsample: identical to the CPU path, and the verbose
/// log says it ran on CUDA.
#[test]
fn ciede_kernel_reads_chroma_from_cuda_frames() {
    if skip() {
        return;
    }
    for line in chroma_cases("ciede-kernel", "feature=name=ciede") {
        assert!(
            line.contains("ciede") && !line.contains("downloaded planes"),
            "ciede is not on CUDA: {line}"
        );
    }
}

/// An instance no kernel covers (float_adm with adm_p_norm 2: a per-sample powf) on CUDA frames
/// runs on the CPU from downloaded planes, identical to the CPU path, and the verbose log says
/// where it ran.
#[test]
fn feature_without_kernel_runs_on_the_cpu_fallback() {
    if skip() {
        return;
    }
    for line in chroma_cases(
        "fallback-float-adm",
        "feature='name=float_adm\\:adm_p_norm=2'",
    ) {
        assert!(
            line.contains("on the CPU from downloaded planes (no CUDA kernel yet): float_adm"),
            "float_adm is not on the fallback: {line}"
        );
    }
}

/// Features with previous frames beside the fallback: speed_temporal (previous references and
/// distorted frames, its own kernels), float_ssim, ciede and the float model (whose float_motion
/// runs here with motion_add_scale1 too) on CUDA, float_adm with adm_p_norm 2 on the CPU
/// fallback, on NVDEC-like nv12 CUDA frames, with n_subsample=2; identical to the CPU path.
#[test]
fn fallback_with_previous_frames_and_a_float_model() {
    if skip() {
        return;
    }
    let src = "testsrc2=s=480x270:r=25:d=0.6";
    cuda_vs_cpu(
        "fallback-speed-temporal-ssim-ciede-nv12-sub2",
        &Input::Lavfi {
            dis: lavfi(src, "noise=alls=14:allf=t+u,format=nv12"),
            reference: lavfi(src, "format=nv12"),
        },
        "nv12",
        "model='version=vmaf_v0.6.1\\:name=vmaf|version=vmaf_float_v0.6.1\\:name=vmaf_float':\
         feature='name=speed_temporal|name=float_motion\\:motion_add_scale1=true|\
         name=float_ssim|name=ciede|name=float_adm\\:adm_p_norm=2':n_subsample=2",
    );
}
