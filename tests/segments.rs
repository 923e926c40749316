//! Segment-parallel scoring: `vmaf-rs --segment A:B` parts merged by `vmaf-rs merge` give the
//! log a single run writes, byte for byte (`--reproducible`: fps 0), in all four formats; for
//! several tilings (K = 1, 2, 3, 7, seams on scene cuts, in still stretches, at frames 1 and 2
//! where the motion context is partial), `n_subsample` 2 and 3, two models and a bootstrap
//! collection at once with aggregates, the v1.0.16 models (cambi, SpEED, motion3 with its
//! options, the five-frame window and moving average) and threads. Merge errors name the part.
//! Compressed titles (H.264 with B-frames in mp4, HEVC with open GOPs in mkv) are decoded per
//! segment by scripts/segment.sh exactly (keyframe seek, timestamp select); the GNU parallel
//! driver and the Ray driver (a local cluster on 127.0.0.1 with 2 workers, one killed in the
//! middle of a segment, which is retried) end to end. Content is made with the oracle ffmpeg.

mod common;

use common::*;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// Frames of the title.
const N: u64 = 28;

/// The title: testsrc2 (moving, frames 0-9), still SMPTE bars (10-17), testsrc with a hue turn
/// (moving, 18-27): scene cuts at 10 and 18, a still stretch between. 448x272: SpEED's chroma
/// planes (the v1.0.16 models) need 80x80 after their 0.6 prescale. The distorted video: noise
/// and a blur.
fn title() -> &'static (PathBuf, PathBuf) {
    static T: OnceLock<(PathBuf, PathBuf)> = OnceLock::new();
    T.get_or_init(|| {
        let dir = workdir("segments-title");
        let (r, d) = (dir.join("ref.y4m"), dir.join("dis.y4m"));
        ffmpeg(&[
            "-filter_complex",
            "testsrc2=s=448x272:r=25:d=0.4[a];smptehdbars=s=448x272:r=25:d=0.32[b];\
             testsrc=s=448x272:r=25:d=0.4,hue=h=90[c];[a][b][c]concat=n=3:v=1:a=0,\
             format=yuv420p[v]",
            "-map",
            "[v]",
            r.to_str().unwrap(),
        ]);
        ffmpeg(&[
            "-i",
            r.to_str().unwrap(),
            "-vf",
            "noise=alls=14:allf=t,boxblur=1:1",
            "-pix_fmt",
            "yuv420p",
            d.to_str().unwrap(),
        ]);
        let mut v = vmaf_rs::video::VideoReader::open_y4m(&r).unwrap();
        let mut n = 0;
        while v.next_frame().unwrap().is_some() {
            n += 1;
        }
        assert_eq!(n, N, "the generated title's frame count");
        (r, d)
    })
}

/// The log formats and their flags.
const FORMATS: [&str; 4] = ["--json", "--xml", "--csv", "--sub"];

fn cli() -> Command {
    Command::new(cli_path())
}

/// A single run's logs in every format.
fn single(dir: &Path, r: &Path, d: &Path, opts: &[&str]) -> Vec<Vec<u8>> {
    FORMATS
        .iter()
        .map(|f| {
            let log = dir.join(format!("single.{}", &f[2..]));
            let mut c = cli();
            c.arg("-r").arg(r).arg("-d").arg(d).args(opts);
            c.args([f, "--reproducible", "-q", "-o"]).arg(&log);
            run(&mut c);
            std::fs::read(&log).unwrap()
        })
        .collect()
}

/// Parts for the segments between consecutive `cuts`, each from the whole y4m (the CLI skips to
/// its context), written as `<tag>-<a>.json`.
fn parts(dir: &Path, r: &Path, d: &Path, opts: &[&str], cuts: &[u64], tag: &str) -> Vec<PathBuf> {
    cuts.windows(2)
        .map(|w| {
            let p = dir.join(format!("{tag}-{}.json", w[0]));
            let mut c = cli();
            c.arg("-r").arg(r).arg("-d").arg(d).args(opts);
            c.args(["--segment", &format!("{}:{}", w[0], w[1]), "-q", "-o"])
                .arg(&p);
            run(&mut c);
            p
        })
        .collect()
}

/// `vmaf-rs merge` of `parts` in format flag `fmt`: (success, log bytes or stderr).
fn merge(dir: &Path, parts: &[PathBuf], fmt: &str) -> (bool, Vec<u8>) {
    let log = dir.join(format!("merged.{}", &fmt[2..]));
    let _ = std::fs::remove_file(&log);
    let out = cli()
        .arg("merge")
        .args(parts)
        .args([fmt, "--reproducible", "-q", "-o"])
        .arg(&log)
        .output()
        .unwrap();
    if out.status.success() {
        (true, std::fs::read(&log).unwrap())
    } else {
        (false, out.stderr)
    }
}

/// Panics with the first differing line of two logs.
fn assert_same(ours: &[u8], want: &[u8], what: &str) {
    if ours == want {
        return;
    }
    let (a, b) = (String::from_utf8_lossy(ours), String::from_utf8_lossy(want));
    let (la, lb): (Vec<_>, Vec<_>) = (a.lines().collect(), b.lines().collect());
    let i = la
        .iter()
        .zip(&lb)
        .position(|(x, y)| x != y)
        .unwrap_or(la.len().min(lb.len()));
    panic!(
        "{what}: the merged log differs from the single run at line {}:\n merged: {:?}\n single: {:?}\n({} vs {} lines)",
        i + 1,
        la.get(i),
        lb.get(i),
        la.len(),
        lb.len()
    );
}

/// Scores `opts` once and in every tiling (segments run with `seg_opts` added), and checks the
/// merged logs equal the single run's in all formats.
fn check(tag: &str, opts: &[&str], seg_opts: &[&str], tilings: &[&[u64]]) {
    let dir = workdir(&format!("segments-{tag}"));
    let (r, d) = title();
    let want = single(&dir, r, d, opts);
    let mut sopts: Vec<&str> = opts.to_vec();
    sopts.extend_from_slice(seg_opts);
    for cuts in tilings {
        let ps = parts(&dir, r, d, &sopts, cuts, "part");
        for (f, want) in FORMATS.iter().zip(&want) {
            let (ok, got) = merge(&dir, &ps, f);
            assert!(
                ok,
                "{tag} {cuts:?}: merge failed: {}",
                String::from_utf8_lossy(&got)
            );
            assert_same(&got, want, &format!("{tag}, cuts {cuts:?}, {f}"));
        }
        for p in ps {
            std::fs::remove_file(p).unwrap();
        }
    }
    eprintln!(
        "{tag}: {} tilings x 4 formats byte-identical",
        tilings.len()
    );
}

#[test]
fn segments_equal_single_run_k_1_2_3_7() {
    check(
        "k",
        &[],
        &[],
        &[
            &[0, N],
            // On the first scene cut.
            &[0, 10, N],
            // In the still stretch, on the second cut.
            &[0, 13, 18, N],
            // Frames 1 and 2 (partial context), both cuts, the still's inside and its last frame.
            &[0, 1, 2, 10, 14, 17, 18, N],
        ],
    );
}

#[test]
fn segments_subsample_2_and_3() {
    check("sub2", &["--subsample", "2"], &[], &[&[0, 5, 10, 17, N]]);
    check(
        "sub3",
        &["--subsample", "3"],
        &[],
        &[&[0, 4, 11, 18, 27, N]],
    );
}

#[test]
fn segments_two_models_collection_aggregates_threads() {
    check(
        "models",
        &[
            "-m",
            "version=vmaf_v0.6.1:name=vmaf",
            "-m",
            "version=vmaf_v0.6.1neg:name=neg",
            "-m",
            "version=vmaf_b_v0.6.3:name=boot",
            "--feature",
            "name=psnr:enable_apsnr=true",
            "--feature",
            "float_ssim",
        ],
        &["--threads", "2"],
        &[&[0, 9, 18, N], &[0, 2, 3, 25, N]],
    );
}

#[test]
fn segments_v1_0_16_3d0h() {
    check(
        "v3d0h",
        &["-m", "version=vmaf_v1.0.16_3d0h", "--subsample", "2"],
        &["--threads", "2"],
        &[&[0, 10, N], &[0, 1, 2, 3, 10, 18, N]],
    );
}

#[test]
fn segments_v1_0_16_hfr_5d0h() {
    check(
        "hfr5d0h",
        &["-m", "version=vmaf_v1.0.16_hfr_5d0h"],
        &["--threads", "2"],
        &[&[0, 10, N], &[0, 1, 2, 3, 11, 17, 18, N]],
    );
}

/// Runs `vmaf-rs merge` expecting failure; returns its stderr.
fn merge_err(dir: &Path, parts: &[&PathBuf]) -> String {
    let ps: Vec<PathBuf> = parts.iter().map(|p| p.to_path_buf()).collect();
    let (ok, err) = merge(dir, &ps, "--json");
    assert!(!ok, "merge of {parts:?} succeeded");
    String::from_utf8_lossy(&err).into_owned()
}

#[test]
fn merge_errors_name_the_part() {
    let dir = workdir("segments-errors");
    let (r, d) = title();
    let p = parts(&dir, r, d, &["--title_frames", "28"], &[0, 10, 20, N], "p");
    let name = |i: usize| p[i].display().to_string();

    let e = merge_err(&dir, &[&p[0], &p[2]]);
    assert!(
        e.contains("gap: frames [10, 20)") && e.contains(&name(0)) && e.contains(&name(2)),
        "{e}"
    );
    let e = merge_err(&dir, &[&p[1], &p[2]]);
    assert!(
        e.contains("frames [0, 10) are in no part") && e.contains(&name(1)),
        "{e}"
    );
    let e = merge_err(&dir, &[&p[0], &p[1]]);
    assert!(
        e.contains("says the title has 28 frames") && e.contains("[20, 28) are missing"),
        "{e}"
    );
    let e = merge_err(&dir, &[&p[0], &p[1], &p[1], &p[2]]);
    assert!(e.contains("overlap") && e.contains(&name(1)), "{e}");
    let over = parts(&dir, r, d, &[], &[5, 15], "over");
    let e = merge_err(&dir, &[&p[0], &over[0], &p[1], &p[2]]);
    assert!(
        e.contains("overlap") && e.contains(&over[0].display().to_string()),
        "{e}"
    );

    let sub = parts(&dir, r, d, &["--subsample", "2"], &[10, 20], "sub");
    let e = merge_err(&dir, &[&p[0], &sub[0], &p[2]]);
    assert!(
        e.contains("different configuration")
            && e.contains(&sub[0].display().to_string())
            && e.contains("--subsample 1 vs 2"),
        "{e}"
    );
    let neg = parts(
        &dir,
        r,
        d,
        &["-m", "version=vmaf_v0.6.1neg:name=vmaf"],
        &[10, 20],
        "neg",
    );
    let e = merge_err(&dir, &[&p[0], &neg[0], &p[2]]);
    assert!(
        e.contains("different configuration") && e.contains("--model"),
        "{e}"
    );

    let junk = dir.join("junk.json");
    std::fs::write(&junk, "{\"frames\": []}").unwrap();
    let e = merge_err(&dir, &[&junk]);
    assert!(
        e.contains("not a vmaf_rs partial log") && e.contains("junk.json"),
        "{e}"
    );

    // A segment whose input lacks the context its motion reads is refused when scored.
    let late = dir.join("late.y4m");
    ffmpeg(&[
        "-i",
        r.to_str().unwrap(),
        "-vf",
        "trim=start_frame=10",
        late.to_str().unwrap(),
    ]);
    let late_d = dir.join("late_d.y4m");
    ffmpeg(&[
        "-i",
        d.to_str().unwrap(),
        "-vf",
        "trim=start_frame=10",
        late_d.to_str().unwrap(),
    ]);
    let out = cli()
        .args(["-r", late.to_str().unwrap(), "-d", late_d.to_str().unwrap()])
        .args(["--segment", "10:20", "--input_start", "10", "-o"])
        .arg(dir.join("late.json"))
        .output()
        .unwrap();
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && e.contains("needs 2 frame(s) of context"),
        "{e}"
    );
    // With them, it is a valid part.
    let ctx = dir.join("ctx.y4m");
    let ctx_d = dir.join("ctx_d.y4m");
    ffmpeg(&[
        "-i",
        r.to_str().unwrap(),
        "-vf",
        "trim=start_frame=8",
        ctx.to_str().unwrap(),
    ]);
    ffmpeg(&[
        "-i",
        d.to_str().unwrap(),
        "-vf",
        "trim=start_frame=8",
        ctx_d.to_str().unwrap(),
    ]);
    let mid = dir.join("mid.json");
    run(cli()
        .args(["-r", ctx.to_str().unwrap(), "-d", ctx_d.to_str().unwrap()])
        .args([
            "--segment",
            "10:20",
            "--input_start",
            "8",
            "--title_frames",
            "28",
            "-q",
            "-o",
        ])
        .arg(&mid));
    let want = single(&dir, r, d, &[]);
    let (ok, got) = merge(&dir, &[p[0].clone(), mid, p[2].clone()], "--json");
    assert!(ok, "{}", String::from_utf8_lossy(&got));
    assert_same(&got, &want[0], "part from a trimmed input");
}

fn script(name: &str) -> PathBuf {
    root().join("scripts").join(name)
}

/// scripts/segment.sh with the oracle ffmpeg and this build's CLI.
fn segment_sh() -> Command {
    let mut c = Command::new(script("segment.sh"));
    c.env("FFMPEG", oracle()).env("VMAF_RS_BIN", cli_path());
    c
}

/// The title encoded with B-frames: H.264 in mp4 (keyframes every 7 frames, not on the seams)
/// and HEVC in mkv (open GOPs: leading pictures before each CRA keyframe).
fn compressed(dir: &Path) -> [PathBuf; 2] {
    let (r, _) = title();
    let mp4 = dir.join("h264.mp4");
    let mkv = dir.join("hevc.mkv");
    ffmpeg(&[
        "-i",
        r.to_str().unwrap(),
        "-c:v",
        "libx264",
        "-bf",
        "3",
        "-g",
        "7",
        "-keyint_min",
        "7",
        "-sc_threshold",
        "0",
        "-crf",
        "32",
        mp4.to_str().unwrap(),
    ]);
    ffmpeg(&[
        "-i",
        r.to_str().unwrap(),
        "-c:v",
        "libx265",
        "-x265-params",
        "bframes=4:keyint=9:min-keyint=9:open-gop=1:scenecut=0:log-level=0",
        "-crf",
        "32",
        mkv.to_str().unwrap(),
    ]);
    [mp4, mkv]
}

/// All frames of a video as y4m, as segment.sh decodes them.
fn decode_all(input: &Path, out: &Path) {
    let o = segment_sh().arg("decode").arg(input).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    std::fs::write(out, o.stdout).unwrap();
}

#[test]
fn compressed_titles_decode_exact_frames() {
    let dir = workdir("segments-compressed");
    let (r, _) = title();
    for enc in compressed(&dir) {
        let full = dir.join("full.y4m");
        decode_all(&enc, &full);
        let want = single(&dir, r, &full, &[]);
        let mut ps = Vec::new();
        for w in [0u64, 5, 12, 19, N].windows(2) {
            let p = dir.join(format!("part-{}.json", w[0]));
            run(segment_sh()
                .args([
                    "run",
                    "-r",
                    r.to_str().unwrap(),
                    "-d",
                    enc.to_str().unwrap(),
                ])
                .args(["-s", &w[0].to_string(), "-e", &w[1].to_string(), "-o"])
                .arg(&p)
                .args(["--", "-q"]));
            ps.push(p);
        }
        let (ok, got) = merge(&dir, &ps, "--json");
        assert!(ok, "{}", String::from_utf8_lossy(&got));
        assert_same(&got, &want[0], &enc.display().to_string());
        // The compressed reference too (both inputs seek).
        let p = dir.join("both.json");
        run(segment_sh()
            .args([
                "run",
                "-r",
                enc.to_str().unwrap(),
                "-d",
                enc.to_str().unwrap(),
            ])
            .args(["-s", "9", "-e", "23", "-o"])
            .arg(&p)
            .args(["--", "-q"]));
        let part: serde_json::Value = serde_json::from_slice(&std::fs::read(&p).unwrap()).unwrap();
        assert_eq!(part["range"], serde_json::json!([9, 23]));
        assert_eq!(part["context"], serde_json::json!([7, 9]));
        eprintln!("{}: segments decode exactly their frames", enc.display());
    }
}

#[test]
fn gnu_parallel_driver() {
    let dir = workdir("segments-parallel");
    let (r, _) = title();
    let [mp4, _] = compressed(&dir);
    let full = dir.join("full.y4m");
    decode_all(&mp4, &full);
    let opts = [
        "-m",
        "version=vmaf_v0.6.1:name=vmaf",
        "--feature",
        "name=psnr:enable_apsnr=true",
    ];
    let want = single(&dir, r, &full, &opts);
    let log = dir.join("title.json");
    let mut c = Command::new(script("segments-parallel.sh"));
    c.env("FFMPEG", oracle()).env("VMAF_RS_BIN", cli_path());
    c.args(["-r", r.to_str().unwrap(), "-d", mp4.to_str().unwrap(), "-o"])
        .arg(&log)
        .args(["-k", "3", "--json", "--reproducible", "--work"])
        .arg(dir.join("work"))
        .arg("--")
        .args(opts);
    let out = run(&mut c);
    eprintln!("{out}");
    assert_same(
        &std::fs::read(&log).unwrap(),
        &want[0],
        "segments-parallel.sh",
    );
    assert_eq!(
        std::fs::read_dir(dir.join("work"))
            .unwrap()
            .filter(|e| e
                .as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .starts_with("part-"))
            .count(),
        3
    );
}

/// A Ray head started by this test: `ray start --head --block` in its own process group, ended
/// by that group's id when dropped.
struct RayHead {
    child: std::process::Child,
}

impl Drop for RayHead {
    fn drop(&mut self) {
        // SIGTERM: --block shuts its Ray processes down; then whatever is left of the group.
        let pg = format!("-{}", self.child.id());
        let _ = Command::new("kill").args(["-TERM", "--", &pg]).status();
        for _ in 0..100 {
            if self.child.try_wait().ok().flatten().is_some() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        let _ = Command::new("kill").args(["-KILL", "--", &pg]).status();
        let _ = self.child.wait();
    }
}

/// Environment for a Ray on 127.0.0.1 only: no token (a local test cluster), and Ray's
/// "local only" mode, in which it keeps the loopback address instead of replacing it by the
/// host's own.
fn ray_env(c: &mut Command) -> &mut Command {
    c.env("RAY_AUTH_MODE", "disabled")
        .env("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
        .env("RAY_USAGE_STATS_ENABLED", "0")
        .env("FFMPEG", oracle())
        .env("VMAF_RS_BIN", cli_path())
}

#[test]
fn ray_driver_retries_a_killed_worker() {
    use std::os::unix::process::CommandExt;
    let dir = workdir("segments-ray");
    let env = Command::new(script("ray-env.sh")).output().unwrap();
    assert!(
        env.status.success(),
        "Ray cannot be installed here (scripts/ray-env.sh failed), so the Ray driver is untested:\n{}",
        String::from_utf8_lossy(&env.stderr)
    );
    let py = PathBuf::from(String::from_utf8_lossy(&env.stdout).trim().to_string());
    let ray = py.with_file_name("ray");
    let (r, d) = title();
    let [mp4, _] = compressed(&dir);
    let full = dir.join("full.y4m");
    decode_all(&mp4, &full);
    let want_y4m = single(&dir, r, d, &[]);
    let want_mp4 = single(&dir, r, &full, &[]);

    // A port of our own, and a short temp dir (Ray's socket paths must fit 107 bytes).
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let tmp = PathBuf::from(format!("/tmp/vmaf-rs-ray-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    let mut c = Command::new(&ray);
    ray_env(&mut c)
        .args(["start", "--head", "--block", "--node-ip-address=127.0.0.1"])
        .arg(format!("--port={port}"))
        .args([
            "--num-cpus=2",
            "--include-dashboard=false",
            "--disable-usage-stats",
        ])
        .args(["--object-store-memory=100000000"])
        .arg(format!("--temp-dir={}", tmp.display()))
        .stdout(std::fs::File::create(dir.join("head.log")).unwrap())
        .stderr(std::fs::File::create(dir.join("head.err")).unwrap())
        .process_group(0);
    let head = RayHead {
        child: c
            .spawn()
            .unwrap_or_else(|e| panic!("cannot run {}: {e}", ray.display())),
    };
    let t0 = std::time::Instant::now();
    loop {
        let log = ["head.log", "head.err"]
            .iter()
            .map(|f| std::fs::read_to_string(dir.join(f)).unwrap_or_default())
            .collect::<String>();
        if log.contains("Ray runtime started") {
            break;
        }
        assert!(
            t0.elapsed().as_secs() < 120,
            "the Ray head did not start in 120 s:\n{log}"
        );
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    let pids = dir.join("pids");
    std::fs::create_dir_all(&pids).unwrap();
    let mut c = Command::new(&py);
    ray_env(&mut c)
        .arg(script("segments-ray.py"))
        .args(["--pair", d.to_str().unwrap(), r.to_str().unwrap()])
        .args(["--pair", mp4.to_str().unwrap(), r.to_str().unwrap()])
        .arg("--out-dir")
        .arg(dir.join("out"))
        .args([
            "--address",
            &format!("127.0.0.1:{port}"),
            "--segments",
            "3",
            "--json",
        ])
        .args(["--reproducible", "--hold", "3", "--pid-dir"])
        .arg(&pids)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let driver = c.spawn().unwrap();
    // Kill the first worker that starts a segment, while it holds it.
    let t0 = std::time::Instant::now();
    let killed = loop {
        let first = std::fs::read_dir(&pids)
            .unwrap()
            .filter_map(|e| e.ok())
            .map(|e| e.path())
            .find(|p| p.extension().is_some_and(|x| x == "pid"));
        if let Some(p) = first {
            let pid = std::fs::read_to_string(&p).unwrap();
            run(Command::new("kill").args(["-KILL", pid.trim()]));
            break p;
        }
        assert!(
            t0.elapsed().as_secs() < 120,
            "no Ray task started in 120 s; head log: {}",
            std::fs::read_to_string(dir.join("head.err")).unwrap_or_default()
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    };
    let out = driver.wait_with_output().unwrap();
    drop(head);
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    println!("killed the worker of {}\n{text}", killed.display());
    assert!(out.status.success(), "segments-ray.py failed:\n{text}");
    assert!(
        text.contains("WorkerCrashedError") && text.contains("retry 1/2"),
        "{text}"
    );
    assert!(text.contains("2 of 2 titles"), "{text}");
    assert_same(
        &std::fs::read(dir.join("out/dis.json")).unwrap(),
        &want_y4m[0],
        "ray, y4m title",
    );
    assert_same(
        &std::fs::read(dir.join("out/h264.json")).unwrap(),
        &want_mp4[0],
        "ray, mp4 title",
    );
    let _ = std::fs::remove_dir_all(&tmp);
}
