//! End to end through FFmpeg: the patched ffmpeg's `vmaf_rs` filter (built by
//! scripts/ffmpeg-build.sh into build/ffmpeg) against the oracle's `libvmaf` filter on the same
//! generated content, fed as y4m and as encoded files decoded by each ffmpeg; log formats;
//! per-frame metadata; options; bad inputs.

mod common;

use common::*;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The patched ffmpeg (or `$VMAF_RS_FFMPEG`). Fails (never skips) when it has not been built.
fn ours() -> PathBuf {
    let p = std::env::var_os("VMAF_RS_FFMPEG")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("build/ffmpeg/bin/ffmpeg"));
    assert!(
        p.exists(),
        "{} is missing: build it with scripts/ffmpeg-build.sh (scripts/test.sh does)",
        p.display()
    );
    p
}

fn ffprobe() -> PathBuf {
    ours().with_file_name("ffprobe")
}

/// Runs our ffmpeg with `-i main -i reference -lavfi <graph> -f null -`.
fn run_ours(main: &Path, reference: &Path, graph: &str) -> Output {
    command_on(OracleCpu::Native, &ours())
        .args(["-hide_banner", "-nostdin", "-y", "-i"])
        .arg(main)
        .arg("-i")
        .arg(reference)
        .args(["-lavfi", graph, "-f", "null", "-"])
        .output()
        .expect("run ffmpeg")
}

fn ok(o: &Output) -> String {
    let text = String::from_utf8_lossy(&o.stderr).to_string();
    assert!(o.status.success(), "ffmpeg failed:\n{text}");
    text
}

/// Runs both filters on (main, reference) with the same option text and compares the JSON logs.
fn compare(case: &str, main: &Path, reference: &Path, opts: &str, models: &[&str], dir: &Path) {
    let theirs = oracle_json(reference, main, opts, dir, "oracle");
    let log = dir.join("ours.json");
    let mut graph = format!("vmaf_rs=log_fmt=json:log_path={}", log.display());
    if !opts.is_empty() {
        graph.push(':');
        graph.push_str(opts);
    }
    let text = ok(&run_ours(main, reference, &graph));
    assert!(
        text.contains("VMAF score: "),
        "no 'VMAF score' line:\n{text}"
    );
    compare_logs(&read_json(&log), &theirs, models, case);
}

/// Generates a case's pair in its own directory (`tag` keeps concurrent tests apart).
fn pair(case: &Case, tag: &str) -> (PathBuf, PathBuf, PathBuf) {
    let dir = workdir(&format!("ff-{}-{tag}", case.name));
    let (r, d) = make_pair(case, &dir);
    (dir, r, d)
}

const NOISE_420: Case = Case {
    name: "noise-420",
    source: "testsrc2=s=320x240:r=25:d=0.48",
    pix_fmt: "yuv420p",
    dist_filter: "noise=alls=18:allf=t+u",
    encode: &[],
};

#[test]
fn y4m_cases_match_libvmaf() {
    let cases = [
        NOISE_420,
        Case {
            name: "p10-x264",
            source: "mandelbrot=s=320x240:r=25,trim=end_frame=8",
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
        },
        Case {
            name: "422-blur",
            source: "testsrc2=s=352x288:r=25:d=0.32",
            pix_fmt: "yuv422p",
            dist_filter: "boxblur=2:1",
            encode: &[],
        },
        Case {
            name: "444p12-odd",
            source: "testsrc2=s=320x240:r=25:d=0.32,scale=203:157",
            pix_fmt: "yuv444p12le",
            dist_filter: "noise=alls=10:allf=t",
            encode: &[],
        },
        Case {
            name: "identical",
            source: "testsrc2=s=320x240:r=25:d=0.2",
            pix_fmt: "yuv420p",
            dist_filter: "",
            encode: &[],
        },
    ];
    for c in &cases {
        let (dir, r, d) = pair(c, "y4m");
        compare(c.name, &d, &r, "n_threads=2", &["vmaf"], &dir);
    }
}

/// Encoded distorted files, decoded by each ffmpeg's own H.264/HEVC decoder.
#[test]
fn encoded_inputs_decoded_by_each_ffmpeg() {
    for (name, codec) in [("h264", "libx264"), ("hevc", "libx265")] {
        let dir = workdir(&format!("ff-enc-{name}"));
        let r = dir.join("ref.y4m");
        ffmpeg(&[
            "-f",
            "lavfi",
            "-i",
            "testsrc2=s=320x240:r=25:d=0.4",
            "-pix_fmt",
            "yuv420p",
            r.to_str().unwrap(),
        ]);
        let enc = dir.join(format!("dis-{name}.mkv"));
        ffmpeg(&[
            "-i",
            r.to_str().unwrap(),
            "-c:v",
            codec,
            "-preset",
            "ultrafast",
            "-crf",
            "33",
            "-x265-params",
            "log-level=error",
            enc.to_str().unwrap(),
        ]);
        compare(name, &enc, &r, "", &["vmaf"], &dir);
    }
}

#[test]
fn options_match_libvmaf() {
    let (dir, r, d) = pair(&NOISE_420, "options");
    let opts = [
        ("subsample", "n_subsample=3:n_threads=3", vec!["vmaf"]),
        ("pool", "pool=harmonic_mean", vec!["vmaf"]),
        (
            "models",
            "model='version=vmaf_v0.6.1\\:name=a|version=vmaf_v0.6.1neg\\:name=b'",
            vec!["a", "b"],
        ),
        ("4k", "model=version=vmaf_4k_v0.6.1", vec!["vmaf"]),
        (
            "feature",
            "feature='name=vif\\:vif_enhn_gain_limit=1.0|name=adm\\:adm_enhn_gain_limit=1.0'",
            vec!["vmaf"],
        ),
        ("model-path", "", vec!["vmaf"]),
        // Issue 9's acceptance graph: every libvmaf feature family beside the default model.
        (
            "every-feature",
            "feature='name=psnr|name=float_ssim|name=float_ms_ssim|name=ciede|name=psnr_hvs'",
            vec!["vmaf"],
        ),
        (
            "float-features",
            "feature='name=float_vif|name=float_adm|name=float_motion|name=float_psnr|name=float_ansnr|name=float_moment'",
            vec!["vmaf"],
        ),
        ("float-model", "model=version=vmaf_float_v0.6.1", vec!["vmaf"]),
    ];
    for (tag, o, models) in opts {
        let sub = dir.join(tag);
        std::fs::create_dir_all(&sub).unwrap();
        let o = if tag == "model-path" {
            let p = root().join("src/model/builtin/vmaf_v0.6.1neg.json");
            format!("model=path={}", p.display())
        } else {
            o.to_string()
        };
        compare(tag, &d, &r, &o, &models, &sub);
    }
}

/// xml, csv and sub logs have libvmaf's structure: same lines once numbers are masked.
#[test]
fn log_formats_have_libvmaf_structure() {
    let (dir, r, d) = pair(&NOISE_420, "formats");
    let mask = |s: &str| -> Vec<String> {
        s.lines()
            .filter(|l| !l.contains("fps=") && !l.contains("<fyi") && !l.contains("version="))
            .map(|l| {
                let mut out = String::new();
                let mut in_num = false;
                for c in l.chars() {
                    if c.is_ascii_digit() || (in_num && (c == '.' || c == 'e' || c == '-')) {
                        if !in_num {
                            out.push('#');
                        }
                        in_num = true;
                    } else {
                        in_num = false;
                        out.push(c);
                    }
                }
                out
            })
            .collect()
    };
    for fmt in ["xml", "csv", "sub"] {
        let theirs = dir.join(format!("oracle.{fmt}"));
        let mine = dir.join(format!("ours.{fmt}"));
        ffmpeg_on(
            OracleCpu::Native,
            &[
                "-i",
                d.to_str().unwrap(),
                "-i",
                r.to_str().unwrap(),
                "-lavfi",
                &format!("libvmaf=log_fmt={fmt}:log_path={}", theirs.display()),
                "-f",
                "null",
                "-",
            ],
        );
        ok(&run_ours(
            &d,
            &r,
            &format!("vmaf_rs=log_fmt={fmt}:log_path={}", mine.display()),
        ));
        let (a, b) = (
            std::fs::read_to_string(&mine).unwrap(),
            std::fs::read_to_string(&theirs).unwrap(),
        );
        assert_eq!(
            mask(&a),
            mask(&b),
            "{fmt} log structure differs from libvmaf's"
        );
    }
}

/// Per-frame metadata: read back through ffprobe, equal to the log's values.
#[test]
fn metadata_reaches_ffprobe() {
    let (dir, r, d) = pair(&NOISE_420, "metadata");
    let log = dir.join("meta.json");
    let graph = format!(
        "movie={}[m];movie={}[r];[m][r]vmaf_rs=log_fmt=json:feature=name=psnr:log_path={}",
        d.display(),
        r.display(),
        log.display()
    );
    let out = Command::new(ffprobe())
        .args([
            "-hide_banner",
            "-v",
            "error",
            "-f",
            "lavfi",
            "-i",
            &graph,
            "-show_entries",
            "frame_tags",
            "-of",
            "json",
        ])
        .output()
        .expect("run ffprobe");
    assert!(
        out.status.success(),
        "ffprobe failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let frames = v["frames"].as_array().expect("frames");
    let logged = common::frames(&read_json(&log));
    assert_eq!(frames.len(), logged.len(), "one metadata set per frame");
    for (i, f) in frames.iter().enumerate() {
        let tags = &f["tags"];
        let want = &logged[&(i as u64)];
        for key in [
            "vmaf",
            "integer_adm2",
            "integer_vif_scale0",
            "integer_motion2",
            "psnr_y",
            "psnr_cr",
        ] {
            let got: f64 = tags[format!("lavfi.vmaf_rs.{key}")]
                .as_str()
                .unwrap_or_else(|| panic!("frame {i}: lavfi.vmaf_rs.{key} missing: {tags}"))
                .parse()
                .unwrap();
            assert!(
                (got - want[key]).abs() < 1e-6,
                "frame {i} {key}: metadata {got}, log {}",
                want[key]
            );
        }
    }
}

/// Frames `n_subsample` skips get no scores, so the filter passes them on at once instead of
/// holding them until the next scored frame's scores: with a large `n_subsample` it used to hold
/// every frame of the stream (1.9 GB for 200 1080p frames; with NVDEC input its frame pool ran
/// dry and the pipeline stalled). Peak RSS (`-benchmark`) with one scored frame in 150 stays
/// near that of scoring every frame, every frame still comes out, in order, and the scored
/// ones carry their metadata.
#[test]
fn subsampled_frames_are_not_held() {
    let src = "testsrc2=s=1280x720:r=25:d=6";
    let run = |n_subsample: u32| {
        let o = command_on(OracleCpu::Native, &ours())
            .args([
                "-hide_banner",
                "-nostdin",
                "-nostats",
                "-benchmark",
                "-f",
                "lavfi",
                "-i",
            ])
            .arg(format!("{src},noise=alls=12:allf=t"))
            .args(["-f", "lavfi", "-i", src, "-lavfi"])
            .arg(format!(
                "[0:v][1:v]vmaf_rs=n_subsample={n_subsample},metadata=print:file=-,showinfo"
            ))
            .args(["-f", "null", "-"])
            .output()
            .expect("run ffmpeg");
        let err = ok(&o);
        let rss: u64 = err
            .lines()
            .find_map(|l| {
                l.strip_prefix("bench: maxrss=")?
                    .strip_suffix("KiB")?
                    .parse()
                    .ok()
            })
            .unwrap_or_else(|| panic!("no maxrss line in:\n{err}"));
        // showinfo: "[Parsed_showinfo_2 @ 0x…] n:  12 pts: …" for every frame that leaves.
        let frames: Vec<u64> = err
            .lines()
            .filter(|l| l.contains("Parsed_showinfo"))
            .filter_map(|l| {
                l.split_once(" n:")?
                    .1
                    .split_whitespace()
                    .next()?
                    .parse()
                    .ok()
            })
            .collect();
        let out = String::from_utf8_lossy(&o.stdout).to_string();
        let scored = out
            .lines()
            .filter(|l| l.starts_with("lavfi.vmaf_rs.vmaf="))
            .count();
        (rss, frames, scored)
    };
    let (every, frames, scored) = run(1);
    assert_eq!(frames.len(), 150, "every frame comes out");
    assert_eq!(scored, 150);
    let (sparse, frames, scored) = run(150);
    assert_eq!(
        frames,
        (0..150).collect::<Vec<u64>>(),
        "every frame, in order"
    );
    assert_eq!(scored, 1, "only frame 0 is scored");
    // 150 held 1280x720 frames would be 200 MiB more.
    assert!(
        sparse < every + 48 * 1024,
        "n_subsample=150 peaked at {sparse} KiB, scoring every frame at {every} KiB"
    );
    eprintln!("peak RSS: n_subsample=1 {every} KiB, n_subsample=150 {sparse} KiB");
}

#[test]
fn zero_frame_graph_writes_nothing() {
    // Inputs without frames: the graph is configured, sees nothing, and must stay silent.
    let dir = workdir("ff-zero");
    let log = dir.join("never.json");
    let src = "testsrc2=s=64x64:d=0";
    let o = command_on(OracleCpu::Native, &ours())
        .args([
            "-hide_banner",
            "-nostdin",
            "-f",
            "lavfi",
            "-i",
            src,
            "-f",
            "lavfi",
            "-i",
            src,
        ])
        .args([
            "-lavfi",
            &format!("vmaf_rs=log_path={}", log.display()),
            "-f",
            "null",
            "-",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{text}");
    assert!(!log.exists(), "a graph that saw no frame wrote a log");
    assert!(
        !text.contains("VMAF score"),
        "a graph that saw no frame printed a score:\n{text}"
    );

    // A normal run: ffmpeg 9 first builds and frees a probe graph (a second filter instance,
    // visible at verbose level); only the real graph reports, once.
    let (dir, r, d) = pair(&NOISE_420, "probe");
    let log = dir.join("once.json");
    let o = command_on(OracleCpu::Native, &ours())
        .args(["-hide_banner", "-nostdin", "-loglevel", "verbose", "-i"])
        .arg(&d)
        .arg("-i")
        .arg(&r)
        .args([
            "-lavfi",
            &format!("vmaf_rs=log_path={}", log.display()),
            "-f",
            "null",
            "-",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{text}");
    assert_eq!(text.matches("VMAF score: ").count(), 1, "{text}");
    assert!(log.exists());
}

/// Bad inputs: a clear message and a normal non-zero exit, never a crash.
#[test]
fn bad_inputs_fail_cleanly() {
    let (dir, r, d) = pair(&NOISE_420, "bad");
    let small = dir.join("small.y4m");
    ffmpeg(&[
        "-i",
        r.to_str().unwrap(),
        "-vf",
        "scale=160:120",
        small.to_str().unwrap(),
    ]);
    let p10 = dir.join("p10.y4m");
    ffmpeg(&[
        "-i",
        r.to_str().unwrap(),
        "-pix_fmt",
        "yuv420p10le",
        "-strict",
        "-1",
        p10.to_str().unwrap(),
    ]);
    let cases: Vec<(&str, PathBuf, String, &str)> = vec![
        ("size", small.clone(), "vmaf_rs".into(), "160x120"),
        ("format", p10.clone(), "vmaf_rs".into(), "yuv420p10le"),
        (
            "model path",
            d.clone(),
            "vmaf_rs=model=path=/nonexistent/model.json".into(),
            "/nonexistent/model.json",
        ),
        (
            "model version",
            d.clone(),
            "vmaf_rs=model=version=vmaf_v9".into(),
            "vmaf_v9",
        ),
        (
            "log path",
            d.clone(),
            "vmaf_rs=log_path=/nonexistent-dir/x.json".into(),
            "/nonexistent-dir/x.json",
        ),
        ("log fmt", d.clone(), "vmaf_rs=log_fmt=yaml".into(), "yaml"),
        ("pool", d.clone(), "vmaf_rs=pool=median".into(), "median"),
        (
            "n_subsample",
            d.clone(),
            "vmaf_rs=n_subsample=0".into(),
            "n_subsample",
        ),
        (
            "feature",
            d.clone(),
            "vmaf_rs=feature=name=nosuch".into(),
            "nosuch",
        ),
    ];
    for (what, main, graph, needle) in cases {
        let o = run_ours(&main, &r, &graph);
        let text = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success(), "{what}: bad input accepted:\n{text}");
        assert!(
            o.status.code().is_some(),
            "{what}: killed by a signal (crash):\n{text}"
        );
        assert!(
            text.contains(needle),
            "{what}: message does not name '{needle}':\n{text}"
        );
    }
}

/// One short run under valgrind: nothing definitely lost, no invalid accesses.
#[test]
fn valgrind_short_run_is_clean() {
    let (dir, r, d) = pair(&NOISE_420, "valgrind");
    let log = dir.join("vg.json");
    let o = Command::new("valgrind")
        .args([
            "--error-exitcode=99",
            "--leak-check=full",
            "--errors-for-leak-kinds=definite",
            "--show-leak-kinds=definite",
        ])
        .arg(ours())
        .args(["-hide_banner", "-nostdin", "-i"])
        .arg(&d)
        .arg("-i")
        .arg(&r)
        .args([
            "-lavfi",
            &format!(
                "vmaf_rs=log_fmt=json:log_path={}:n_threads=2",
                log.display()
            ),
            "-frames:v",
            "4",
            "-f",
            "null",
            "-",
        ])
        .output()
        .expect("valgrind (installed by scripts/deps.sh)");
    let text = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "valgrind reported errors:\n{text}");
    assert!(text.contains("VMAF score"), "{text}");
}

/// Every input format the filter accepts scores exactly like libvmaf on the planar format with
/// the same luma (libvmaf itself takes only planar YUV).
#[test]
fn every_pixel_format_matches_libvmaf() {
    let dir = workdir("ff-formats");
    // One 4:4:4 source per bit depth, so converting to each format only drops or subsamples
    // chroma and leaves luma untouched.
    let mut pairs = std::collections::HashMap::new();
    for (depth, fmt) in [
        (8, "yuv444p"),
        (10, "yuv444p10le"),
        (12, "yuv444p12le"),
        (16, "yuv444p16le"),
    ] {
        let src = dir.join(format!("src{depth}.y4m"));
        let dis = dir.join(format!("dis{depth}.y4m"));
        ffmpeg(&[
            "-f",
            "lavfi",
            "-i",
            "testsrc2=s=160x96:r=25:d=0.2",
            "-pix_fmt",
            fmt,
            "-strict",
            "-1",
            src.to_str().unwrap(),
        ]);
        ffmpeg(&[
            "-i",
            src.to_str().unwrap(),
            "-vf",
            "noise=alls=25:allf=t",
            "-pix_fmt",
            fmt,
            "-strict",
            "-1",
            dis.to_str().unwrap(),
        ]);
        pairs.insert(depth, (src, dis));
    }
    // (our input format, its depth, the planar format libvmaf gets)
    let formats = [
        ("nv12", 8, "yuv420p"),
        ("p010le", 10, "yuv420p10le"),
        ("p016le", 16, "yuv420p16le"),
        ("yuv420p12le", 12, "yuv420p12le"),
        ("yuv422p10le", 10, "yuv422p10le"),
        ("yuv444p16le", 16, "yuv444p16le"),
    ];
    for (ours_fmt, depth, planar) in formats {
        let (src, dis) = &pairs[&depth];
        let sub = dir.join(ours_fmt);
        std::fs::create_dir_all(&sub).unwrap();
        let theirs_log = sub.join("oracle.json");
        ffmpeg_on(OracleCpu::Native, &[
            "-i", dis.to_str().unwrap(), "-i", src.to_str().unwrap(), "-lavfi",
            &format!("[0:v]format={planar}[m];[1:v]format={planar}[r];[m][r]libvmaf=log_fmt=json:log_path={}", theirs_log.display()),
            "-f", "null", "-",
        ]);
        let log = sub.join("ours.json");
        ok(&run_ours(
            dis,
            src,
            &format!("[0:v]format={ours_fmt}[m];[1:v]format={ours_fmt}[r];[m][r]vmaf_rs=log_fmt=json:log_path={}", log.display()),
        ));
        compare_logs(
            &read_json(&log),
            &read_json(&theirs_log),
            &["vmaf"],
            ours_fmt,
        );
    }
}

/// Gray input: swscale expands the range when converting YUV to gray, so the luma-only files are
/// cut out of planar raw files byte for byte, and libvmaf scores the planar originals.
#[test]
fn gray_formats_match_libvmaf() {
    let dir = workdir("ff-gray");
    let (w, h, n) = (160usize, 96usize, 5usize);
    for (gray, planar, bytes) in [
        ("gray", "yuv420p", 1usize),
        ("gray10le", "yuv420p10le", 2),
        ("gray12le", "yuv420p12le", 2),
        ("gray16le", "yuv420p16le", 2),
    ] {
        let sub = dir.join(gray);
        std::fs::create_dir_all(&sub).unwrap();
        let mut files = Vec::new();
        for (tag, vf) in [("ref", "null"), ("dis", "noise=alls=25:allf=t")] {
            let raw = sub.join(format!("{tag}.yuv"));
            ffmpeg(&[
                "-f",
                "lavfi",
                "-i",
                &format!("testsrc2=s={w}x{h}:r=25,trim=end_frame={n}"),
                "-vf",
                &format!("{vf},format={planar}"),
                "-f",
                "rawvideo",
                raw.to_str().unwrap(),
            ]);
            let data = std::fs::read(&raw).unwrap();
            let frame = w * h * bytes * 3 / 2;
            assert_eq!(data.len(), frame * n);
            let luma: Vec<u8> = data
                .chunks(frame)
                .flat_map(|f| f[..w * h * bytes].to_vec())
                .collect();
            let g = sub.join(format!("{tag}.gray"));
            std::fs::write(&g, luma).unwrap();
            files.push((raw, g));
        }
        let size = format!("{w}x{h}");
        let theirs = sub.join("oracle.json");
        ffmpeg_on(
            OracleCpu::Native,
            &[
                "-f",
                "rawvideo",
                "-pix_fmt",
                planar,
                "-s",
                &size,
                "-i",
                files[1].0.to_str().unwrap(),
                "-f",
                "rawvideo",
                "-pix_fmt",
                planar,
                "-s",
                &size,
                "-i",
                files[0].0.to_str().unwrap(),
                "-lavfi",
                &format!("libvmaf=log_fmt=json:log_path={}", theirs.display()),
                "-f",
                "null",
                "-",
            ],
        );
        let log = sub.join("ours.json");
        let o = command_on(OracleCpu::Native, &ours())
            .args(["-hide_banner", "-nostdin", "-y"])
            .args(["-f", "rawvideo", "-pix_fmt", gray, "-s", &size, "-i"])
            .arg(&files[1].1)
            .args(["-f", "rawvideo", "-pix_fmt", gray, "-s", &size, "-i"])
            .arg(&files[0].1)
            .args([
                "-lavfi",
                &format!("vmaf_rs=log_fmt=json:log_path={}", log.display()),
                "-f",
                "null",
                "-",
            ])
            .output()
            .unwrap();
        ok(&o);
        compare_logs(&read_json(&log), &read_json(&theirs), &["vmaf"], gray);
    }
}

/// A log that cannot be written at the end (disk full) still leaves the score printed, and the
/// failure is named.
#[test]
fn failing_log_write_keeps_the_score() {
    let (_dir, r, d) = pair(&NOISE_420, "logfull");
    let o = run_ours(&d, &r, "vmaf_rs=log_path=/dev/full");
    let text = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.code().is_some(), "crashed:\n{text}");
    assert!(text.contains("VMAF score: "), "{text}");
    assert!(text.contains("cannot write log /dev/full"), "{text}");
}

/// `libvmaf_isa` reaches the library through the filter: each libvmaf kernel family's results
/// equal libvmaf on a CPU that takes those kernels (natively, or emulated), at a width
/// where all three families are not alike; the choice shows at verbose level; a bad value fails
/// init and names the choices.
#[test]
fn libvmaf_isa_option_matches_each_libvmaf() {
    let case = Case {
        name: "isa-257x130-10bit",
        source: "testsrc2=s=256x130:r=25:d=0.2,scale=257:130",
        pix_fmt: "yuv420p10le",
        dist_filter: "scale=128:66:flags=bilinear,scale=257:130:flags=bicubic",
        encode: &[],
    };
    let (dir, r, d) = pair(&case, "isa");
    for isa in ["c", "avx2", "avx512"] {
        let Some(cpu) = OracleCpu::for_isa(isa) else {
            eprintln!(
                "{}: no libvmaf on this host takes its {isa} kernels (no emulator here runs \
                 AVX-512): libvmaf_isa={isa} is compared with libvmaf on AVX-512 hosts only",
                case.name
            );
            continue;
        };
        let theirs = oracle_json_on(cpu, &r, &d, "", &dir, isa);
        let log = dir.join(format!("ours-{isa}.json"));
        let graph = format!(
            "vmaf_rs=libvmaf_isa={isa}:log_fmt=json:log_path={}",
            log.display()
        );
        let o = command_on(OracleCpu::Native, &ours())
            .args(["-hide_banner", "-nostdin", "-y", "-v", "verbose", "-i"])
            .arg(&d)
            .arg("-i")
            .arg(&r)
            .args(["-lavfi", &graph, "-f", "null", "-"])
            .output()
            .unwrap();
        let text = ok(&o);
        assert!(
            text.contains(&format!("libvmaf_isa={isa} (requested)")),
            "{text}"
        );
        compare_logs_as(
            &read_json(&log),
            &theirs,
            &["vmaf"],
            &format!("{} [libvmaf_isa={isa}]", case.name),
            cpu,
        );
    }
    let o = run_ours(&d, &r, "vmaf_rs=libvmaf_isa=sse4");
    let text = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success() && o.status.code().is_some(), "{text}");
    assert!(text.contains("libvmaf_isa='sse4'"), "{text}");
}

/// A picture with a side of 32 px or less is scored with the library's warning, through FFmpeg.
#[test]
fn tiny_pictures_warn_through_the_filter() {
    let case = Case {
        name: "tiny-32x48",
        source: "testsrc2=s=32x48:r=25:d=0.12",
        pix_fmt: "yuv420p",
        dist_filter: "noise=alls=9",
        encode: &[],
    };
    let (_dir, r, d) = pair(&case, "tiny");
    let text = ok(&run_ours(&d, &r, "vmaf_rs"));
    assert!(text.contains("32x48 has a side of 32 px or less"), "{text}");
}

/// `feature=name=psnr` with every output through the filter: planar and interleaved (nv12, p010)
/// chroma, odd sizes, 8 and 10 bits; per-frame values, pooled values and `apsnr_*` equal
/// libvmaf's, which gets the same pictures as planar formats.
#[test]
fn psnr_through_the_filter_matches_libvmaf() {
    let dir = workdir("ff-psnr");
    let feature = "feature='name=psnr\\:enable_mse=true\\:enable_apsnr=true'";
    for (depth, src_fmt, formats) in [
        (
            8,
            "yuv444p",
            &[
                ("yuv420p", "yuv420p"),
                ("nv12", "yuv420p"),
                ("yuv422p", "yuv422p"),
                ("yuv444p", "yuv444p"),
            ][..],
        ),
        (
            10,
            "yuv444p10le",
            &[("p010le", "yuv420p10le"), ("yuv422p10le", "yuv422p10le")][..],
        ),
    ] {
        let src = dir.join(format!("src{depth}.y4m"));
        let dis = dir.join(format!("dis{depth}.y4m"));
        ffmpeg(&[
            "-f",
            "lavfi",
            "-i",
            "testsrc2=s=161x97:r=25:d=0.2",
            "-pix_fmt",
            src_fmt,
            "-strict",
            "-1",
            src.to_str().unwrap(),
        ]);
        ffmpeg(&[
            "-i",
            src.to_str().unwrap(),
            "-vf",
            "noise=alls=25:allf=t",
            "-pix_fmt",
            src_fmt,
            "-strict",
            "-1",
            dis.to_str().unwrap(),
        ]);
        for &(ours_fmt, planar) in formats {
            let sub = dir.join(ours_fmt);
            std::fs::create_dir_all(&sub).unwrap();
            let theirs_log = sub.join("oracle.json");
            ffmpeg_on(OracleCpu::Native, &[
                "-i", dis.to_str().unwrap(), "-i", src.to_str().unwrap(), "-lavfi",
                &format!("[0:v]format={planar}[m];[1:v]format={planar}[r];[m][r]libvmaf=log_fmt=json:{feature}:log_path={}", theirs_log.display()),
                "-f", "null", "-",
            ]);
            let log = sub.join("ours.json");
            ok(&run_ours(
                &dis,
                &src,
                // Through the planar format first: swscale's direct 4:4:4 -> nv12 path subsamples
                // chroma differently; planar -> interleaved is an exact reshuffle.
                &format!("[0:v]format={planar},format={ours_fmt}[m];[1:v]format={planar},format={ours_fmt}[r];[m][r]vmaf_rs=log_fmt=json:{feature}:log_path={}", log.display()),
            ));
            compare_logs(
                &read_json(&log),
                &read_json(&theirs_log),
                &["vmaf"],
                ours_fmt,
            );
        }
    }
}

/// A bootstrap collection through the filter (FFmpeg's own `libvmaf` refuses it with -22): the
/// same per-frame columns and pooled values as the CLI (itself checked against libvmaf's members
/// and formulas in tests/golden_bootstrap.rs), one "VMAF score" line for member "0", and the
/// collection's columns in the per-frame metadata.
#[test]
fn bootstrap_collection_in_the_filter() {
    let case = Case {
        name: "ff-bootstrap",
        source: "testsrc2=s=176x144:r=25:d=0.24",
        pix_fmt: "yuv420p",
        dist_filter: "noise=alls=24:allf=t+u",
        encode: &[],
    };
    let (dir, r, d) = pair(&case, "boot");
    let log = dir.join("filter.json");
    let meta = dir.join("meta.txt");
    let text = ok(&run_ours(
        &d,
        &r,
        &format!(
            "vmaf_rs=model=version=vmaf_b_v0.6.3:log_fmt=json:log_path={},metadata=print:file={}",
            log.display(),
            meta.display()
        ),
    ));
    assert_eq!(text.matches("VMAF score: ").count(), 1, "{text}");
    let cli = dir.join("cli.json");
    vmaf_rs(&r, &d, &["-m", "version=vmaf_b_v0.6.3"], &cli);
    let (a, b) = (read_json(&log), read_json(&cli));
    assert_eq!(frames(&a), frames(&b));
    assert_eq!(a["pooled_metrics"], b["pooled_metrics"]);
    let m = std::fs::read_to_string(&meta).unwrap();
    assert_eq!(m.matches("lavfi.vmaf_rs.vmaf_ci_p95_lo=").count(), 6, "{m}");
    assert_eq!(m.matches("lavfi.vmaf_rs.vmaf_0020=").count(), 6);
}

/// The v1.0.16 models through the filter (CAMBI, SpEED, adm3, motion3, HFR motion options), two
/// at once with an overload, against libvmaf's filter on the same options.
#[test]
fn v1_models_match_libvmaf() {
    let case = Case {
        name: "ff-v1",
        source: "testsrc2=s=352x320:r=25:d=0.28,eq=brightness=-0.25",
        pix_fmt: "yuv420p",
        dist_filter: "gblur=sigma=1,noise=alls=8:allf=t",
        encode: &[],
    };
    let (dir, r, d) = pair(&case, "v1");
    compare(
        "v1.0.16 3d0h + hfr_5d0h",
        &d,
        &r,
        "model='version=vmaf_v1.0.16_3d0h\\:name=a\\:cambi.enc_width=1280\\:cambi.enc_height=720|\
         version=vmaf_v1.0.16_hfr_5d0h\\:name=b':n_threads=2",
        &["a", "b"],
        &dir,
    );
}

// ---- the filter under libvmaf's names (--enable-vmaf-rs-as-libvmaf) ------------------------

/// Runs our ffmpeg with extra arguments before the output (`-frames:v`, …).
fn run_ours_with(main: &Path, reference: &Path, graph: &str, extra: &[&str]) -> Output {
    command_on(OracleCpu::Native, &ours())
        .args(["-hide_banner", "-nostdin", "-y", "-i"])
        .arg(main)
        .arg("-i")
        .arg(reference)
        .args(["-lavfi", graph])
        .args(extra)
        .args(["-f", "null", "-"])
        .output()
        .expect("run ffmpeg")
}

/// The release line of an ffmpeg: "ffmpeg version 9.0.2" or "… n9.0.2-17-g…" → "9.0".
fn version_line(ffmpeg: &Path) -> String {
    let o = Command::new(ffmpeg).arg("-version").output().unwrap();
    let text = String::from_utf8_lossy(&o.stdout);
    let v = text.split_whitespace().nth(2).unwrap_or("");
    let v = v.trim_start_matches('n');
    v.split(['.', '-']).take(2).collect::<Vec<_>>().join(".")
}

/// The `VMAF score: …` lines of ffmpeg's stderr, without the `[Parsed_… @ 0x…]` prefix.
fn score_lines(stderr: &str) -> Vec<String> {
    stderr
        .lines()
        .filter_map(|l| l.find("VMAF score: ").map(|i| l[i..].to_string()))
        .collect()
}

/// `graph` (a `libvmaf=…` filter) through our ffmpeg and the oracle's, on the same files: same
/// per-frame and pooled values, same `VMAF score` lines.
fn compare_libvmaf_graph(tag: &str, main: &Path, reference: &Path, graph: &str, dir: &Path) {
    let (theirs, mine) = (
        dir.join(format!("{tag}-oracle.json")),
        dir.join(format!("{tag}-ours.json")),
    );
    let with_log =
        |log: &Path| graph.replace("LOG", &format!("log_fmt=json:log_path={}", log.display()));
    let o = command_on(OracleCpu::Native, &oracle())
        .args(["-hide_banner", "-nostdin", "-y", "-i"])
        .arg(main)
        .arg("-i")
        .arg(reference)
        .args(["-lavfi", &with_log(&theirs), "-f", "null", "-"])
        .output()
        .expect("run the oracle");
    let oracle_text = String::from_utf8_lossy(&o.stderr).to_string();
    assert!(
        o.status.success(),
        "{tag}: the oracle failed:\n{oracle_text}"
    );
    let text = ok(&run_ours(main, reference, &with_log(&mine)));
    assert!(
        !text.contains("vmaf_rs @"),
        "{tag}: the graph did not run under the libvmaf name:\n{text}"
    );
    assert_eq!(
        score_lines(&text),
        score_lines(&oracle_text),
        "{tag}: VMAF score lines"
    );
    assert!(
        !score_lines(&text).is_empty(),
        "{tag}: no VMAF score line:\n{text}"
    );
    compare_logs(&read_json(&mine), &read_json(&theirs), &["vmaf"], tag);
}

/// What tools see before they run anything: both names listed, libvmaf's exact option set
/// (names, types, defaults, as `-h filter=libvmaf` prints them), and `--enable-libvmaf` in the
/// banner (Av1an's check).
#[test]
fn libvmaf_names_are_registered_with_libvmaf_options() {
    let o = Command::new(ours())
        .args(["-hide_banner", "-filters"])
        .output()
        .unwrap();
    assert!(o.status.success());
    let filters = String::from_utf8_lossy(&o.stdout).to_string();
    for name in ["libvmaf", "libvmaf_cuda", "vmaf_rs"] {
        assert!(
            filters
                .lines()
                .any(|l| l.split_whitespace().nth(1) == Some(name)),
            "ffmpeg -filters lacks {name}:\n{filters}"
        );
    }
    let banner = String::from_utf8_lossy(
        &Command::new(ours())
            .arg("-version")
            .output()
            .unwrap()
            .stdout,
    )
    .to_string();
    assert!(banner.contains("--enable-libvmaf"), "{banner}");
    assert!(banner.contains("--enable-vmaf-rs-as-libvmaf"), "{banner}");

    // The option lines of `-h filter=NAME` (name, type, flags, help, default).
    let options = |ffmpeg: &Path, name: &str| -> Vec<String> {
        let o = Command::new(ffmpeg)
            .args(["-hide_banner", "-h", &format!("filter={name}")])
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&o.stdout);
        let mut v: Vec<String> = text
            .lines()
            .filter(|l| {
                l.starts_with("  ")
                    && l.trim_start()
                        .chars()
                        .next()
                        .is_some_and(|c| c.is_ascii_lowercase())
            })
            .filter(|l| l.contains(" <"))
            .map(|l| {
                l.split_whitespace().take(2).collect::<Vec<_>>().join(" ")
                    + l.find("(default").map_or("", |i| &l[i..])
            })
            .collect();
        v.sort();
        v
    };
    let theirs = options(&oracle(), "libvmaf");
    assert!(theirs.len() >= 11, "oracle's libvmaf options: {theirs:?}");
    for name in ["libvmaf", "libvmaf_cuda"] {
        assert_eq!(
            options(&ours(), name),
            theirs,
            "{name}: options differ from libvmaf's"
        );
    }
    let mine = options(&ours(), "vmaf_rs");
    for extra in ["backend", "libvmaf_isa"] {
        assert!(
            mine.iter().any(|l| l.starts_with(&format!("{extra} "))),
            "{mine:?}"
        );
    }
}

/// Option strings as the tools pass them, through `libvmaf=` on our ffmpeg and on the oracle.
#[test]
fn libvmaf_name_matches_libvmaf() {
    let (dir, r, d) = pair(&NOISE_420, "libvmaf-name");
    let model = root().join("src/model/builtin/vmaf_v0.6.1.json");
    let graphs = [
        ("default", "libvmaf=LOG".to_string()),
        // ab-av1
        ("ab-av1", "libvmaf=shortest=true:ts_sync_mode=nearest:n_threads=2:LOG".to_string()),
        // ffmpeg-quality-metrics: a model file, framesync options
        (
            "fqm",
            format!(
                "[0:v]setpts=PTS-STARTPTS[d];[1:v]setpts=PTS-STARTPTS[r];[d][r]libvmaf=model='path={}':LOG:n_threads=0:shortest=1:repeatlast=0",
                model.display()
            ),
        ),
        // Av1an: a feature option inside the model string, eof_action
        (
            "av1an",
            "libvmaf=model='version=vmaf_v0.6.1\\:motion.motion_force_zero=true':eof_action=endall:n_threads=2:LOG"
                .to_string(),
        ),
        // easyVmaf: fps on both inputs, which emit their last frame together with EOF (and
        // filters before libvmaf, freed after the sink): the last frame is scored too.
        (
            "fps",
            "[0:v]fps=fps=25[m];[1:v]fps=fps=25[r];[m][r]libvmaf=n_threads=2:LOG".to_string(),
        ),
        ("subsample", "libvmaf=n_subsample=2:n_threads=3:pool=harmonic_mean:LOG".to_string()),
        (
            "features",
            "libvmaf=feature='name=psnr|name=float_ssim':model='version=vmaf_v0.6.1\\:name=a|version=vmaf_v0.6.1neg\\:name=b':LOG"
                .to_string(),
        ),
    ];
    for (tag, g) in &graphs {
        compare_libvmaf_graph(tag, &d, &r, g, &dir);
    }
    // easyVmaf (--vmaf-version 0.6): an HD and a phone model at 10 bits in one pass, PSNR for
    // its sync. (Its default v1.0.16 models need CAMBI, which vmaf_rs does not compute yet.)
    let case = Case {
        name: "libvmaf-name-10bit",
        source: "testsrc2=s=320x240:r=25:d=0.32",
        pix_fmt: "yuv420p10le",
        dist_filter: "noise=alls=12:allf=t",
        encode: &[],
    };
    let (dir, r, d) = pair(&case, "easyvmaf");
    compare_libvmaf_graph(
        "easyvmaf",
        &d,
        &r,
        "libvmaf=model='version=vmaf_v0.6.1\\:name=vmaf_hd|version=vmaf_v0.6.1\\:name=vmaf_phone\\:enable_transform=true':feature=name=psnr:n_threads=2:LOG",
        &dir,
    );
    // libvmaf_cuda on frames in host memory: scored on the CPU, the same values.
    let log = dir.join("cuda-name.json");
    let text = ok(&run_ours(
        &d,
        &r,
        &format!("libvmaf_cuda=log_fmt=json:log_path={}", log.display()),
    ));
    let theirs = oracle_json(&r, &d, "", &dir, "cuda-name");
    compare_logs(&read_json(&log), &theirs, &["vmaf"], "libvmaf_cuda name");
    assert_eq!(score_lines(&text).len(), 1, "{text}");
}

/// Under libvmaf's names FFmpeg converts an input in another pixel format, as for libvmaf
/// (vmaf_rs refuses it): the same scores as the oracle's libvmaf on the same inputs.
#[test]
fn libvmaf_name_converts_formats_like_libvmaf() {
    let (dir, r, d) = pair(&NOISE_420, "libvmaf-formats");
    let mut files = std::collections::HashMap::new();
    for fmt in ["yuv444p", "yuv420p10le"] {
        let f = dir.join(format!("ref-{fmt}.y4m"));
        ffmpeg(&[
            "-i",
            r.to_str().unwrap(),
            "-pix_fmt",
            fmt,
            "-strict",
            "-1",
            f.to_str().unwrap(),
        ]);
        files.insert(fmt, f);
    }
    // (tag, reference file, graph): inputs that differ in format, or in a format libvmaf lacks.
    let variants = [
        ("ref-444", &files["yuv444p"], "libvmaf=LOG"),
        ("ref-10bit", &files["yuv420p10le"], "libvmaf=LOG"),
        ("main-nv12", &r, "[0:v]format=nv12[m];[m][1:v]libvmaf=LOG"),
        (
            "both-p010",
            &r,
            "[0:v]format=p010le[m];[1:v]format=p010le[r];[m][r]libvmaf=LOG",
        ),
    ];
    // Which format FFmpeg converts to, and how, is FFmpeg's own and changed between releases
    // (7.1 takes another path for p010 than 9.0): the oracle (9.0) says what FFmpeg 9.0's
    // libvmaf gets; with another release only the conversions that did not change compare.
    let same_release = version_line(&ours()) == version_line(&oracle());
    for (tag, reference, graph) in variants {
        if tag == "both-p010" && !same_release {
            eprintln!("{tag}: skipped, our ffmpeg is not the oracle's release");
            continue;
        }
        let sub = dir.join(tag);
        std::fs::create_dir_all(&sub).unwrap();
        compare_libvmaf_graph(tag, &d, reference, graph, &sub);
        // Under vmaf_rs, inputs in different formats are refused.
        if !graph.contains("p010") {
            let strict = graph.replace("libvmaf=LOG", "vmaf_rs");
            assert!(
                !run_ours(&d, reference, &strict).status.success(),
                "{tag}: vmaf_rs converted an input silently"
            );
        }
    }
}

/// `-frames:v N` scores exactly the N frames that pass, for any n_threads, under libvmaf's
/// names: the log equals libvmaf's on inputs cut to N frames (libvmaf itself, at the end of a
/// graph that ffmpeg cuts short, scores N or N+1 frames depending on thread timing).
#[test]
fn libvmaf_name_scores_exactly_the_frames_that_pass() {
    let case = Case {
        name: "frames-v",
        source: "testsrc2=s=320x240:r=25:d=1",
        pix_fmt: "yuv420p",
        dist_filter: "noise=alls=18:allf=t+u",
        encode: &[],
    };
    let (dir, r, d) = pair(&case, "frames");
    for n in [1usize, 6] {
        let cut = dir.join(format!("oracle-{n}.json"));
        ffmpeg(&[
            "-i",
            d.to_str().unwrap(),
            "-i",
            r.to_str().unwrap(),
            "-lavfi",
            &format!(
                "[0:v]trim=end_frame={n}[m];[1:v]trim=end_frame={n}[r];[m][r]libvmaf=log_fmt=json:log_path={}",
                cut.display()
            ),
            "-f",
            "null",
            "-",
        ]);
        let theirs = read_json(&cut);
        assert_eq!(frames(&theirs).len(), n);
        for threads in [0, 1, 2, 4] {
            for run in 0..2 {
                let log = dir.join(format!("ours-{n}-{threads}-{run}.json"));
                let text = ok(&run_ours_with(
                    &d,
                    &r,
                    &format!(
                        "libvmaf=n_threads={threads}:log_fmt=json:log_path={}",
                        log.display()
                    ),
                    &["-frames:v", &n.to_string()],
                ));
                let mine = read_json(&log);
                assert_eq!(
                    frames(&mine).len(),
                    n,
                    "-frames:v {n}, n_threads={threads}, run {run}: scored {} frames\n{text}",
                    frames(&mine).len()
                );
                compare_logs(
                    &mine,
                    &theirs,
                    &["vmaf"],
                    &format!("-frames:v {n} n_threads={threads}"),
                );
            }
        }
    }
}

/// The texts tools look for when a model cannot be used, and libvmaf's leniency about log_fmt
/// and pool values, under libvmaf's names.
#[test]
fn libvmaf_name_errors_and_lenient_values() {
    let (dir, r, d) = pair(&NOISE_420, "libvmaf-errors");
    // A valid model that asks for a feature nobody computes.
    let bad_model = dir.join("nosuch-feature.json");
    let mut m: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(root().join("src/model/builtin/vmaf_v0.6.1.json")).unwrap(),
    )
    .unwrap();
    m["model_dict"]["feature_names"][0] = "nosuch_feature".into();
    std::fs::write(&bad_model, m.to_string()).unwrap();
    let cases = [
        (
            "libvmaf=model=version=vmaf_v9".to_string(),
            "could not load libvmaf model with version: vmaf_v9",
        ),
        (
            "libvmaf=model=path=/nonexistent/m.json".to_string(),
            "could not load libvmaf model with path: /nonexistent/m.json",
        ),
        (
            format!("libvmaf=model=path={}", bad_model.display()),
            "could not initialize feature extractor \"nosuch_feature\"",
        ),
    ];
    for (graph, needle) in &cases {
        // libvmaf's own words, from the oracle, so the test follows libvmaf.
        let o = command_on(OracleCpu::Native, &oracle())
            .args(["-hide_banner", "-nostdin", "-i"])
            .arg(&d)
            .arg("-i")
            .arg(&r)
            .args(["-lavfi", graph, "-f", "null", "-"])
            .output()
            .unwrap();
        let theirs = String::from_utf8_lossy(&o.stderr);
        assert!(
            theirs.contains(needle),
            "the oracle no longer says '{needle}':\n{theirs}"
        );
        let o = run_ours(&d, &r, graph);
        let text = String::from_utf8_lossy(&o.stderr);
        assert!(
            !o.status.success() && o.status.code().is_some(),
            "{graph}:\n{text}"
        );
        assert!(text.contains(needle), "{graph}: no '{needle}' in:\n{text}");
    }
    // Unknown log_fmt / pool values: libvmaf uses xml and mean; so do we, with a warning.
    let theirs = dir.join("oracle.xml");
    let mine = dir.join("ours.xml");
    let g = |p: &Path| format!("libvmaf=log_fmt=yaml:pool=median:log_path={}", p.display());
    let o = command_on(OracleCpu::Native, &oracle())
        .args(["-hide_banner", "-nostdin", "-i"])
        .arg(&d)
        .arg("-i")
        .arg(&r)
        .args(["-lavfi", &g(&theirs), "-f", "null", "-"])
        .output()
        .unwrap();
    assert!(o.status.success());
    let text = ok(&run_ours(&d, &r, &g(&mine)));
    assert_eq!(
        score_lines(&text),
        score_lines(&String::from_utf8_lossy(&o.stderr))
    );
    let head = |p: &Path| {
        std::fs::read_to_string(p)
            .unwrap()
            .lines()
            .take(2)
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert!(head(&mine).contains("<VMAF version="), "{}", head(&mine));
    assert!(
        head(&theirs).contains("<VMAF version="),
        "{}",
        head(&theirs)
    );
    // The same values under vmaf_rs are errors.
    for g in ["vmaf_rs=log_fmt=yaml", "vmaf_rs=pool=median"] {
        assert!(!run_ours(&d, &r, g).status.success(), "{g} accepted");
    }
}

/// The CUDA pieces of the build, checked without needing a GPU (GPU runs: tests/ffmpeg_cuda.rs):
/// NVDEC and hwupload_cuda in FFmpeg, and a vmaf_rs library with its CUDA backend (which, on a
/// machine without a GPU, fails for want of a driver, not for want of support).
#[test]
fn cuda_build_is_complete() {
    let out = |args: &[&str]| -> String {
        let o = Command::new(ours()).args(args).output().unwrap();
        format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        )
    };
    assert!(
        out(&["-hide_banner", "-hwaccels"])
            .lines()
            .any(|l| l.trim() == "cuda"),
        "no cuda hwaccel"
    );
    let conf = out(&["-hide_banner", "-buildconf"]);
    for flag in ["--enable-cuda", "--enable-nvdec", "--enable-ffnvcodec"] {
        assert!(
            conf.contains(flag),
            "{flag} missing from the build:\n{conf}"
        );
    }
    assert!(out(&["-hide_banner", "-filters"]).contains(" hwupload_cuda "));
    let (_dir, r, d) = pair(&NOISE_420, "cuda-build");
    let o = run_ours_with(&d, &r, "vmaf_rs=backend=cuda", &["-frames:v", "2"]);
    let text = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.code().is_some(), "crashed:\n{text}");
    assert!(
        !text.contains("built without CUDA"),
        "the vmaf_rs library of this build has no CUDA backend:\n{text}"
    );
    if !o.status.success() {
        assert!(text.contains("CUDA"), "{text}");
    }
}

/// The practical build (scripts/ffmpeg-build.sh) decodes what VMAF users meet: each codec in a
/// container it usually comes in, encoded by the oracle, decoded by each ffmpeg (decoders are
/// bit-exact), scored under the libvmaf name (which converts 4:2:2 / RGB inputs as libvmaf
/// would) against the oracle's libvmaf.
#[test]
fn practical_build_decodes_what_users_meet() {
    let case = Case {
        name: "codecs",
        // DNxHR needs at least 256x120.
        source: "testsrc2=s=320x240:r=25:d=0.24",
        pix_fmt: "yuv420p",
        dist_filter: "",
        encode: &[],
    };
    let (dir, r, _d) = pair(&case, "codecs");
    let same_release = version_line(&ours()) == version_line(&oracle());
    let encodings: &[(&str, &str, &[&str])] = &[
        (
            "vp9",
            "webm",
            &[
                "-c:v",
                "libvpx-vp9",
                "-b:v",
                "150k",
                "-deadline",
                "realtime",
                "-cpu-used",
                "8",
            ],
        ),
        (
            "vp8",
            "ivf",
            &["-c:v", "libvpx", "-b:v", "200k", "-deadline", "realtime"],
        ),
        (
            "av1",
            "mp4",
            &[
                "-c:v",
                "libaom-av1",
                "-cpu-used",
                "8",
                "-crf",
                "45",
                "-usage",
                "realtime",
            ],
        ),
        ("mpeg2", "ts", &["-c:v", "mpeg2video", "-q:v", "10"]),
        ("mpeg4", "mp4", &["-c:v", "mpeg4", "-q:v", "10"]),
        (
            "h264",
            "ts",
            &["-c:v", "libx264", "-preset", "ultrafast", "-crf", "35"],
        ),
        (
            "hevc",
            "mp4",
            &[
                "-c:v",
                "libx265",
                "-preset",
                "ultrafast",
                "-crf",
                "35",
                "-x265-params",
                "log-level=error",
            ],
        ),
        ("prores", "mov", &["-c:v", "prores_ks", "-profile:v", "0"]),
        (
            "dnxhr",
            "mov",
            &[
                "-c:v",
                "dnxhd",
                "-profile:v",
                "dnxhr_lb",
                "-pix_fmt",
                "yuv422p",
            ],
        ),
        ("ffv1", "mkv", &["-c:v", "ffv1"]),
        ("png", "png", &["-c:v", "png"]),
    ];
    for (tag, ext, args) in encodings {
        // Format conversions (4:2:2, 10-bit, RGB) are FFmpeg's and changed between releases.
        if !same_release && ["prores", "dnxhr", "png"].contains(tag) {
            eprintln!("{tag}: skipped, our ffmpeg is not the oracle's release");
            continue;
        }
        let sub = dir.join(tag);
        std::fs::create_dir_all(&sub).unwrap();
        let out = if *ext == "png" {
            sub.join("dis-%03d.png")
        } else {
            sub.join(format!("dis.{ext}"))
        };
        let mut a = vec!["-i", r.to_str().unwrap()];
        a.extend_from_slice(args);
        a.push(out.to_str().unwrap());
        ffmpeg(&a);
        compare_libvmaf_graph(tag, &out, &r, "libvmaf=LOG", &sub);
    }
}

/// Segment scoring in the filter (`segment_start`/`segment_end`, `input_start`, `title_frames`):
/// partial logs of a title's segments, one of them from an input cut from the title (`trim`),
/// merged by `vmaf-rs merge`, give byte for byte the log of one CLI run over the whole title,
/// and the values of one filter run; frames still pass through; CUDA-less misuse is refused.
#[test]
fn segments_through_the_filter_merge_to_the_single_run() {
    let case = Case {
        name: "ff-seg",
        source: "testsrc2=s=256x144:r=25:d=1.2,split[a][b];[b]negate[c];[a][c]concat=n=2",
        pix_fmt: "yuv420p",
        dist_filter: "noise=alls=14:allf=t",
        encode: &[],
    };
    let (dir, r, d) = pair(&case, "segments");
    // 60 frames, a scene cut at 30: seams at 17 (inside a scene) and 30 (on the cut).
    let part = |name: &str| dir.join(format!("part-{name}.json"));
    let run = |graph: String| {
        let o = run_ours_with(&d, &r, &graph, &[]);
        assert!(
            o.status.success(),
            "{graph}:\n{}",
            String::from_utf8_lossy(&o.stderr)
        );
        String::from_utf8_lossy(&o.stderr).into_owned()
    };
    run(format!(
        "vmaf_rs=segment_start=0:segment_end=17:title_frames=60:log_path={}",
        part("a").display()
    ));
    // The input starts at title frame 15 (two context frames before 17).
    run(format!(
        "[0:v]trim=start_frame=15[m];[1:v]trim=start_frame=15[r];\
         [m][r]vmaf_rs=segment_start=17:segment_end=30:input_start=15:title_frames=60:log_path={}",
        part("b").display()
    ));
    let out = run(format!(
        "vmaf_rs=segment_start=30:title_frames=60:log_path={},metadata=print:file={}",
        part("c").display(),
        dir.join("meta.txt").display()
    ));
    assert!(
        !out.contains("VMAF score"),
        "a segment prints no pooled score:\n{out}"
    );
    let merged = dir.join("merged.json");
    // Our CLI on the same (possibly emulated) CPU as our ffmpeg: libvmaf_isa=auto resolves alike.
    let mut m = command_on(OracleCpu::Native, &cli_path());
    m.arg("merge")
        .args([part("c"), part("a"), part("b")])
        .arg("-o")
        .arg(&merged)
        .args(["--json", "--reproducible"]);
    run_cmd_ok(&mut m, "vmaf-rs merge");
    let single = dir.join("single.json");
    vmaf_rs(&r, &d, &["--reproducible", "-q"], &single);
    assert_eq!(
        std::fs::read_to_string(&merged).unwrap(),
        std::fs::read_to_string(&single).unwrap(),
        "merged filter segments != one run over the title"
    );
    let whole = dir.join("filter.json");
    run(format!("vmaf_rs=log_fmt=json:log_path={}", whole.display()));
    let (a, b) = (read_json(&merged), read_json(&whole));
    assert_eq!(
        a["frames"], b["frames"],
        "per-frame values vs one filter run"
    );
    assert_eq!(a["pooled_metrics"], b["pooled_metrics"]);
    assert_eq!(a["frames"].as_array().unwrap().len(), 60);
    // Frames pass on (without metadata) in segment mode.
    let meta = std::fs::read_to_string(dir.join("meta.txt")).unwrap_or_default();
    assert!(!meta.contains("lavfi.vmaf_rs"), "{meta}");
    // Misuse: no log_path; input_start after the segment.
    let o = run_ours_with(&d, &r, "vmaf_rs=segment_start=3", &[]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("log_path"));
    let o = run_ours_with(
        &d,
        &r,
        &format!(
            "vmaf_rs=segment_start=3:input_start=5:log_path={}",
            part("x").display()
        ),
        &[],
    );
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("input_start=5"));
}

fn run_cmd_ok(c: &mut Command, what: &str) {
    let o = c.output().unwrap_or_else(|e| panic!("{what}: {e}"));
    assert!(
        o.status.success(),
        "{what} failed:\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

#[test]
fn ladder_of_renditions_equals_separate_filters() {
    let dir = workdir("ff-ladder");
    let src = "testsrc2=s=160x96:r=25:d=0.4";
    let make = |name: &str, filter: &str| {
        let p = dir.join(name);
        let graph = if filter.is_empty() {
            src.to_string()
        } else {
            format!("{src},{filter}")
        };
        ffmpeg(&[
            "-f",
            "lavfi",
            "-i",
            &graph,
            "-pix_fmt",
            "yuv420p",
            p.to_str().unwrap(),
        ]);
        p
    };
    let r = make("ref.y4m", "");
    let ds: Vec<PathBuf> = (1..=3)
        .map(|k| {
            make(
                &format!("d{k}.y4m"),
                &format!("noise=alls={}:allf=t", 7 * k),
            )
        })
        .collect();
    let opts = "log_fmt=json:n_threads=3:feature=name=psnr|name=float_motion";
    let meta = dir.join("meta.txt");
    let pattern = dir.join("ladder_%v.json");
    let graph = format!(
        "vmaf_rs=inputs=4:{opts}:log_path={},metadata=print:file={}",
        pattern.display(),
        meta.display()
    );
    let mut cmd = command_on(OracleCpu::Native, &ours());
    cmd.args(["-hide_banner", "-nostdin", "-y"]);
    for p in ds.iter().chain([&r]) {
        cmd.arg("-i").arg(p);
    }
    let text = ok(&cmd
        .args(["-lavfi", &graph, "-f", "null", "-"])
        .output()
        .unwrap());
    let meta = std::fs::read_to_string(&meta).unwrap();
    for (k, d) in ds.iter().enumerate() {
        assert!(
            text.contains(&format!("rendition {k}: VMAF score: ")),
            "no score line of rendition {k}:\n{text}"
        );
        // Exactly what a filter of its own gives that rendition.
        let alone = dir.join(format!("alone_{k}.json"));
        ok(&run_ours(
            d,
            &r,
            &format!("vmaf_rs={opts}:log_path={}", alone.display()),
        ));
        let got = read_json(&dir.join(format!("ladder_{k}.json")));
        let want = read_json(&alone);
        assert_eq!(frames(&got), frames(&want), "rendition {k}'s frames");
        assert_eq!(
            got["pooled_metrics"], want["pooled_metrics"],
            "rendition {k}"
        );
        assert_eq!(
            got["aggregate_metrics"], want["aggregate_metrics"],
            "rendition {k}"
        );
        // Its metadata, under its number, on main0's frames.
        let first = format!("lavfi.vmaf_rs.{k}.vmaf={:.6}", frames(&want)[&0]["vmaf"]);
        assert!(meta.contains(&first), "no {first} in the metadata:\n{meta}");
    }
    // A log path without %v, and a rendition of another size, are refused by name.
    let mut cmd = command_on(OracleCpu::Native, &ours());
    cmd.args(["-hide_banner", "-nostdin", "-y", "-i"])
        .arg(&ds[0]);
    cmd.arg("-i").arg(&ds[1]).arg("-i").arg(&r);
    let o = cmd
        .args([
            "-lavfi",
            "vmaf_rs=inputs=3:log_path=/tmp/one.xml",
            "-f",
            "null",
            "-",
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success() && err.contains("%v"), "{err}");
    let small = dir.join("small.y4m");
    ffmpeg(&[
        "-f",
        "lavfi",
        "-i",
        "testsrc2=s=96x64:r=25:d=0.4",
        small.to_str().unwrap(),
    ]);
    let mut cmd = command_on(OracleCpu::Native, &ours());
    cmd.args(["-hide_banner", "-nostdin", "-y", "-i"])
        .arg(&ds[0]);
    cmd.arg("-i").arg(&small).arg("-i").arg(&r);
    let o = cmd
        .args(["-lavfi", "vmaf_rs=inputs=3", "-f", "null", "-"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        !o.status.success() && err.contains("inputs differ: main1 96x64"),
        "{err}"
    );
}
