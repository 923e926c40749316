//! The `vmaf-rs` CLI: inputs (y4m of every layout, raw yuv), log formats, options and clear errors
//! for bad input.

mod common;

use common::*;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn cli(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_vmaf-rs"))
        .args(args)
        .output()
        .expect("run vmaf-rs")
}

fn make(dir: &Path, name: &str, src: &str, pix_fmt: &str) -> PathBuf {
    let p = dir.join(name);
    ffmpeg(&[
        "-f",
        "lavfi",
        "-i",
        src,
        "-pix_fmt",
        pix_fmt,
        "-strict",
        "-1",
        p.to_str().unwrap(),
    ]);
    p
}

fn fails_with(o: &Output, needles: &[&str]) {
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(
        o.status.code(),
        Some(1),
        "expected a clean failure, got {:?}: {err}",
        o.status
    );
    for n in needles {
        assert!(err.contains(n), "message lacks '{n}': {err}");
    }
}

#[test]
fn mismatched_and_unreadable_inputs_fail_clearly() {
    let dir = workdir("cli-errors");
    let src = "testsrc2=s=64x48:r=25:d=0.2";
    let a = make(&dir, "a.y4m", src, "yuv420p");
    let small = make(&dir, "small.y4m", "testsrc2=s=48x48:r=25:d=0.2", "yuv420p");
    let p10 = make(&dir, "p10.y4m", src, "yuv420p10le");
    let c444 = make(&dir, "c444.y4m", src, "yuv444p");
    let short = make(&dir, "short.y4m", "testsrc2=s=64x48:r=25:d=0.08", "yuv420p");
    let (a, small, p10, c444, short) = (
        a.to_str().unwrap(),
        small.to_str().unwrap(),
        p10.to_str().unwrap(),
        c444.to_str().unwrap(),
        short.to_str().unwrap(),
    );
    fails_with(&cli(&["-r", a, "-d", small]), &["64x48", "48x48"]);
    fails_with(&cli(&["-r", a, "-d", p10]), &["10-bit"]);
    fails_with(&cli(&["-r", a, "-d", c444]), &["420", "444"]);
    fails_with(&cli(&["-r", a, "-d", short]), &["ends after 2 frames"]);
    fails_with(
        &cli(&["-r", "/nonexistent.y4m", "-d", a]),
        &["/nonexistent.y4m"],
    );
    fails_with(&cli(&["-r", a, "-d", "/tmp/x.yuv"]), &["--width"]);
    fails_with(&cli(&["-r", a, "-d", a, "-m", "version=nope"]), &["nope"]);
    fails_with(
        &cli(&["-r", a, "-d", a, "-m", "path=/nonexistent/m.json"]),
        &["/nonexistent/m.json"],
    );
    fails_with(
        &cli(&["-r", a, "-d", a, "-o", "/nonexistent-dir/log.xml"]),
        &["/nonexistent-dir/log.xml"],
    );
    fails_with(&cli(&["-r", a, "-d", a, "--pool", "median"]), &["median"]);
    let corrupt = dir.join("corrupt.json");
    std::fs::write(&corrupt, "{\"model_dict\": {").unwrap();
    fails_with(
        &cli(&[
            "-r",
            a,
            "-d",
            a,
            "-m",
            &format!("path={}", corrupt.display()),
        ]),
        &["corrupt.json"],
    );
    // frame_cnt limits a longer input to the shorter one's length
    let o = cli(&["-r", a, "-d", short, "--frame_cnt", "2", "-q"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

#[test]
fn raw_yuv_equals_y4m_and_every_log_format_is_written() {
    let dir = workdir("cli-raw");
    let r = make(&dir, "r.y4m", "testsrc2=s=96x64:r=25:d=0.2", "yuv422p10le");
    let d = dir.join("d.y4m");
    ffmpeg(&[
        "-i",
        r.to_str().unwrap(),
        "-vf",
        "noise=alls=20:allf=t",
        "-pix_fmt",
        "yuv422p10le",
        "-strict",
        "-1",
        d.to_str().unwrap(),
    ]);
    let (ry, dy) = (dir.join("r.yuv"), dir.join("d.yuv"));
    ffmpeg(&[
        "-i",
        r.to_str().unwrap(),
        "-f",
        "rawvideo",
        ry.to_str().unwrap(),
    ]);
    ffmpeg(&[
        "-i",
        d.to_str().unwrap(),
        "-f",
        "rawvideo",
        dy.to_str().unwrap(),
    ]);
    let j1 = dir.join("y4m.json");
    let j2 = dir.join("raw.json");
    let o = cli(&[
        "-r",
        r.to_str().unwrap(),
        "-d",
        d.to_str().unwrap(),
        "--json",
        "-o",
        j1.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        stdout.starts_with("vmaf: "),
        "prints the pooled score: {stdout}"
    );
    let o = cli(&[
        "-r",
        ry.to_str().unwrap(),
        "-d",
        dy.to_str().unwrap(),
        "-w",
        "96",
        "-h",
        "64",
        "-p",
        "422",
        "-b",
        "10",
        "--json",
        "-o",
        j2.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(read_json(&j1)["frames"], read_json(&j2)["frames"]);
    for (flag, probe) in [
        ("--xml", "<VMAF version="),
        ("--csv", "Frame,"),
        ("--sub", "{0}{1}"),
    ] {
        let out = dir.join(format!("log{flag}"));
        let o = cli(&[
            "-r",
            r.to_str().unwrap(),
            "-d",
            d.to_str().unwrap(),
            flag,
            "-o",
            out.to_str().unwrap(),
            "-q",
        ]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        assert!(o.stdout.is_empty(), "--quiet prints nothing");
        let text = std::fs::read_to_string(&out).unwrap();
        assert!(text.contains(probe), "{flag} log lacks {probe}: {text}");
    }
}

/// A model asking for a feature vmaf_rs does not compute yet fails, naming that feature.
#[test]
fn model_with_unknown_feature_is_refused_by_name() {
    let dir = workdir("cli-unknown-feature");
    let a = make(&dir, "a.y4m", "testsrc2=s=64x48:r=25:d=0.12", "yuv420p");
    let text = std::fs::read_to_string(root().join("src/model/builtin/vmaf_v0.6.1.json")).unwrap();
    assert!(text.contains("VMAF_integer_feature_motion2_score"));
    // A feature no extractor provides (every libvmaf feature has one now).
    let m = dir.join("unknown.json");
    std::fs::write(
        &m,
        text.replace(
            "VMAF_integer_feature_motion2_score",
            "Future_feature_sharpness_score",
        ),
    )
    .unwrap();
    let a = a.to_str().unwrap();
    fails_with(
        &cli(&["-r", a, "-d", a, "-m", &format!("path={}", m.display())]),
        &["Future_feature_sharpness_score", "does not compute"],
    );
}

/// Issue 8, items 1, 2, 4, 5, 6: hostile inputs get clear errors, never a panic, an abort or a
/// lost file. Each case failed before the fix (panic, 48 GB reservation, truncated log or video,
/// whole-file reads, invalid XML).
#[test]
fn hostile_inputs_fail_cleanly_and_lose_nothing() {
    let dir = workdir("cli-hostile");
    let a = make(&dir, "a.y4m", "testsrc2=s=64x48:r=25:d=0.12", "yuv420p");
    let b = make(
        &dir,
        "b.y4m",
        "testsrc2=s=64x48:r=25:d=0.12,noise=alls=9",
        "yuv420p",
    );
    let (a_s, b_s) = (a.to_str().unwrap(), b.to_str().unwrap());
    let video = std::fs::read(&a).unwrap();
    let no_panic = |o: &Output| {
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!err.contains("panicked"), "{err}");
    };

    // A y4m header token starting with a multi-byte character (used to panic in split_at).
    let y = dir.join("utf8.y4m");
    let mut bytes = b"YUV4MPEG2 W64 H48 F25:1 C420jpeg \xc3\xa9x\n".to_vec();
    bytes.extend_from_slice(&video[video.iter().position(|&c| c == b'\n').unwrap() + 1..]);
    std::fs::write(&y, &bytes).unwrap();
    let o = cli(&["-r", y.to_str().unwrap(), "-d", a_s, "-q"]);
    no_panic(&o);
    assert!(o.status.success(), "an unknown tag is ignored: {:?}", o);
    // A bad colour space, and a header line with no end (read up to the cap, not whole).
    for (name, head, needle) in [
        (
            "badc.y4m",
            b"YUV4MPEG2 W64 H48 C420pXX\n".to_vec(),
            "unsupported colorspace C420pXX",
        ),
        (
            "mixed.y4m",
            b"YUV4MPEG2 W64 H48 Im\n".to_vec(),
            "unsupported interlacing Im",
        ),
        (
            "long.y4m",
            [b"YUV4MPEG2 ".to_vec(), vec![b'x'; 100_000]].concat(),
            "longer than 4096 bytes",
        ),
    ] {
        let p = dir.join(name);
        std::fs::write(&p, head).unwrap();
        fails_with(&cli(&["-r", p.to_str().unwrap(), "-d", a_s]), &[needle]);
    }

    // -o naming an input is refused, and the video is untouched.
    fails_with(
        &cli(&["-r", a_s, "-d", b_s, "-o", a_s]),
        &["refusing to overwrite"],
    );
    assert_eq!(
        std::fs::read(&a).unwrap(),
        video,
        "the reference video was changed"
    );
    // A run that fails leaves an existing log as it was (it used to be truncated first).
    let log = dir.join("keep.json");
    std::fs::write(&log, "previous log\n").unwrap();
    fails_with(
        &cli(&[
            "-r",
            a_s,
            "-d",
            y.to_str().unwrap(),
            "--json",
            "-o",
            log.to_str().unwrap(),
            "-m",
            "version=nope",
        ]),
        &["nope"],
    );
    assert_eq!(std::fs::read_to_string(&log).unwrap(), "previous log\n");
    // A successful run replaces it, with no temporary file left behind.
    let o = cli(&[
        "-r",
        a_s,
        "-d",
        b_s,
        "--json",
        "-o",
        log.to_str().unwrap(),
        "-q",
    ]);
    assert!(o.status.success(), "{o:?}");
    read_json(&log);
    let leftovers: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with(".vmaf-rs-log-"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
    // A new log gets the permissions any new file gets here (not the temporary file's 0600).
    use std::os::unix::fs::PermissionsExt;
    let fresh = dir.join("fresh.json");
    let o = cli(&[
        "-r",
        a_s,
        "-d",
        b_s,
        "--json",
        "-o",
        fresh.to_str().unwrap(),
        "-q",
    ]);
    assert!(o.status.success(), "{o:?}");
    let probe = dir.join("probe");
    std::fs::File::create(&probe).unwrap();
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&fresh), mode(&probe));
    // A log that cannot be written still leaves the score printed, then names the failure.
    let o = cli(&["-r", a_s, "-d", b_s, "-o", "/dev/full"]);
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("vmaf: "),
        "{o:?}"
    );
    fails_with(&o, &["cannot write log /dev/full"]);

    // Model files: a huge support-vector count (used to abort on a 48 GB reservation, or panic),
    // a file with no end (used to be read whole), a name that breaks the log.
    let text = std::fs::read_to_string(root().join("src/model/builtin/vmaf_v0.6.1.json")).unwrap();
    assert!(text.contains("total_sv 211"));
    for n in ["2000000000", "9223372036854775807"] {
        let m = dir.join(format!("sv{n}.json"));
        std::fs::write(&m, text.replace("total_sv 211", &format!("total_sv {n}"))).unwrap();
        let o = cli(&["-r", a_s, "-d", b_s, "-m", &format!("path={}", m.display())]);
        no_panic(&o);
        fails_with(&o, &["failed to read support vector 212 of"]);
    }
    fails_with(
        &cli(&["-r", a_s, "-d", b_s, "-m", "path=/dev/zero"]),
        &["larger than 64 MiB"],
    );
    fails_with(
        &cli(&[
            "-r",
            a_s,
            "-d",
            b_s,
            "-m",
            "version=vmaf_v0.6.1:name=<&\"x>",
        ]),
        &["model name '<&\"x>'"],
    );
}

/// Issue 8, item 7: pictures where libvmaf's own result is undefined (a side of 32 px or less)
/// are scored with a warning saying so; one pixel more, none.
#[test]
fn tiny_pictures_are_scored_with_a_warning() {
    let dir = workdir("cli-tiny");
    for (size, warned) in [("32x64", true), ("64x32", true), ("33x64", false)] {
        let (w, h) = size.split_once('x').unwrap();
        let src = format!("testsrc2=s=64x64:r=25:d=0.12,crop={w}:{h}:0:0:exact=1");
        let a = make(&dir, &format!("{size}.y4m"), &src, "yuv444p");
        let a = a.to_str().unwrap();
        let o = cli(&["-r", a, "-d", a, "-q"]);
        assert!(o.status.success(), "{o:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(
            err.contains("side of 32 px or less"),
            warned,
            "{size}: {err}"
        );
    }
}

/// Issue 8: a failing thread start names the count and the fix. RLIMIT_NPROC makes it fail; root
/// ignores that limit, so as root the CLI runs as `nobody` from a world-readable copy.
#[test]
fn failing_thread_start_names_the_thread_count() {
    let dir = workdir("cli-nproc");
    let a = make(&dir, "a.y4m", "testsrc2=s=64x64:r=25:d=0.12", "yuv420p");
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    let o = if root {
        let t = tempfile::Builder::new()
            .prefix("vmaf_rs-nproc")
            .tempdir_in("/var/tmp")
            .expect("temp dir");
        let (bin, input) = (t.path().join("vmaf-rs"), t.path().join("a.y4m"));
        std::fs::copy(env!("CARGO_BIN_EXE_vmaf-rs"), &bin).unwrap();
        std::fs::copy(&a, &input).unwrap();
        use std::os::unix::fs::PermissionsExt;
        for (p, mode) in [(t.path(), 0o755), (&bin, 0o755), (&input, 0o644)] {
            std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
        }
        let i = input.to_str().unwrap();
        Command::new("setpriv")
            .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
            .args(["prlimit", "--nproc=1"])
            .arg(&bin)
            .args(["-r", i, "-d", i, "--threads", "4", "-q"])
            .output()
            .expect("run setpriv (util-linux)")
    } else {
        let i = a.to_str().unwrap();
        Command::new("prlimit")
            .arg("--nproc=1")
            .arg(env!("CARGO_BIN_EXE_vmaf-rs"))
            .args(["-r", i, "-d", i, "--threads", "4", "-q"])
            .output()
            .expect("run prlimit (util-linux)")
    };
    fails_with(
        &o,
        &[
            "cannot start 4 worker threads (n_threads=4)",
            "use fewer threads",
        ],
    );
}

/// psnr takes 8, 10, 12 and 16 bits only (libvmaf fails mid-stream on others): refused at
/// configure, naming the feature and a fix; bad psnr options are refused by name.
#[test]
fn psnr_refuses_what_libvmaf_cannot_take() {
    let dir = workdir("cli-psnr");
    let a = make(&dir, "a9.y4m", "testsrc2=s=64x64:r=25:d=0.08", "yuv420p9le");
    let a = a.to_str().unwrap();
    let o = cli(&["-r", a, "-d", a, "--feature", "psnr", "-q"]);
    fails_with(&o, &["feature psnr: 9-bit input", "format="]);
    let o = cli(&["-r", a, "-d", a, "-q"]);
    assert!(o.status.success(), "9-bit without psnr still scores: {o:?}");
    let b = make(&dir, "b.y4m", "testsrc2=s=64x64:r=25:d=0.08", "yuv420p");
    let b = b.to_str().unwrap();
    let o = cli(&["-r", b, "-d", b, "--feature", "name=psnr:min_sse=-1", "-q"]);
    fails_with(&o, &["psnr", "min_sse"]);
}

#[test]
fn ladder_equals_separate_runs_and_refuses_what_it_cannot_do() {
    let dir = workdir("cli-ladder");
    // ADM and VIF (the model's, and instances of other options, which must not share each
    // other's reference side) share their reference side between renditions; more threads than
    // renditions make the engines' jobs fill and read the shared state concurrently.
    let adm = [
        "name=adm:adm_enhn_gain_limit=1.2",
        "name=adm:adm_csf_mode=1:adm_csf_scale=2",
        "name=adm:adm_skip_scale0=true:adm_noise_weight=2",
        // VIF shares its reference side too (on CPUs with its split kernels); another gain
        // limit shares the same side, a skipped scale 0 another.
        "name=vif:vif_enhn_gain_limit=1.5",
        "name=vif:vif_skip_scale0=true",
    ];
    // 2 threads for 3 renditions: each engine computes on a worker thread of its own.
    for (pix_fmt, threads, extra) in [("yuv420p", "2", "psnr"), ("yuv444p10le", "7", "float_ssim")]
    {
        let size = "s=96x64:r=25:d=0.4";
        let r = make(
            &dir,
            &format!("r-{pix_fmt}.y4m"),
            &format!("testsrc2={size}"),
            pix_fmt,
        );
        let ds: Vec<PathBuf> = (1..=3)
            .map(|k| {
                let src = format!("testsrc2={size},noise=alls={}:allf=t", 6 * k);
                make(&dir, &format!("d{k}-{pix_fmt}.y4m"), &src, pix_fmt)
            })
            .collect();
        let pattern = dir.join(format!("ladder-{pix_fmt}-%v.json"));
        let mut args = vec!["-r", r.to_str().unwrap()];
        for d in &ds {
            args.extend(["-d", d.to_str().unwrap()]);
        }
        let mut common = vec![
            "--json",
            "--reproducible",
            "--threads",
            threads,
            "--feature",
            extra,
            // Reference-only: computed once for the three renditions.
            "--feature",
            "float_motion",
        ];
        for a in adm {
            common.extend(["--feature", a]);
        }
        args.extend(&common);
        args.extend(["-o", pattern.to_str().unwrap()]);
        let o = cli(&args);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let out = String::from_utf8_lossy(&o.stdout);
        for (k, d) in ds.iter().enumerate() {
            // The same log, byte for byte, as a run of that rendition alone.
            let alone = dir.join(format!("alone-{pix_fmt}-{k}.json"));
            let mut one = vec!["-q", "-r", r.to_str().unwrap(), "-d", d.to_str().unwrap()];
            one.extend(&common);
            one.extend(["-o", alone.to_str().unwrap()]);
            let o = cli(&one);
            assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
            let got = std::fs::read(dir.join(format!("ladder-{pix_fmt}-{k}.json"))).unwrap();
            assert!(
                got == std::fs::read(&alone).unwrap(),
                "{pix_fmt}: rendition {k}'s log differs from its own run's"
            );
            assert!(
                out.contains(&format!("{}: vmaf: ", d.display())),
                "no score line for {}: {out}",
                d.display()
            );
        }
    }
    let r = dir.join("r-yuv420p.y4m");
    let d = dir.join("d1-yuv420p.y4m");
    let (r, d) = (r.to_str().unwrap(), d.to_str().unwrap());
    let short = make(&dir, "short.y4m", "testsrc2=s=96x64:r=25:d=0.08", "yuv420p");
    let p10 = dir.join("d1-yuv444p10le.y4m");
    fails_with(
        &cli(&["-r", r, "-d", d, "-d", d, "-o", "/tmp/one.json"]),
        &["%v", "2 renditions"],
    );
    fails_with(
        &cli(&["-r", r, "-d", d, "-d", short.to_str().unwrap()]),
        &["short.y4m", "ends after 2 frames"],
    );
    fails_with(
        &cli(&["-r", r, "-d", d, "-d", p10.to_str().unwrap()]),
        &["d1-yuv444p10le.y4m"],
    );
    fails_with(
        &cli(&[
            "-r",
            r,
            "-d",
            d,
            "-d",
            d,
            "--segment",
            "0:2",
            "-o",
            "/tmp/p.json",
        ]),
        &["single -d"],
    );
}
