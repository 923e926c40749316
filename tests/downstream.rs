//! Downstream tools that hard-code FFmpeg's `libvmaf` filter, run unchanged: each tool once with
//! our ffmpeg (whose `libvmaf` is vmaf_rs, scripts/ffmpeg-build.sh) and once with the oracle's
//! (the real libvmaf), on the same generated files; each must print the same numbers.
//!
//! The tools are installed, pinned, by scripts/tools.sh into build/tools/bin (scripts/test.sh
//! runs it); a missing tool fails the test with that command. The oracle ships no ffprobe, so
//! both runs probe with ours: ffprobe only reads the containers, it never scores.

mod common;

/// Everything in one module, so that scripts/test.sh can run these tests in their own step
/// after installing the tools (and `--skip downstream::` in the step that runs the others).
mod downstream {
    use super::common::*;
    use serde_json::Value;
    use std::path::{Path, PathBuf};
    use std::process::Command;
    use std::time::Instant;

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

    /// A pinned tool from build/tools/bin. Fails (never skips) when scripts/tools.sh has not run.
    fn tool(name: &str) -> PathBuf {
        let p = root().join("build/tools/bin").join(name);
        assert!(
            p.exists(),
            "{} is missing: install the downstream tools with `scripts/tools.sh` (scripts/test.sh does)",
            p.display()
        );
        p
    }

    /// Whose `libvmaf` a tool run uses.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    enum Side {
        /// Our ffmpeg: `libvmaf` is vmaf_rs under libvmaf's name.
        Ours,
        /// The oracle's ffmpeg: the real libvmaf.
        Oracle,
    }

    impl Side {
        fn name(self) -> &'static str {
            match self {
                Side::Ours => "ours",
                Side::Oracle => "oracle",
            }
        }
    }

    /// `dir/<side>/bin` with `ffmpeg` and `ffprobe` as the tools look them up (PATH, or next to the
    /// ffmpeg they are given): the side's ffmpeg, and our ffprobe for both.
    fn bin_dir(side: Side, dir: &Path) -> PathBuf {
        let bin = dir.join(side.name()).join("bin");
        std::fs::create_dir_all(&bin).unwrap();
        let ffmpeg = match side {
            Side::Ours => ours(),
            Side::Oracle => oracle(),
        };
        let ffprobe = ours().with_file_name("ffprobe");
        assert!(ffprobe.exists(), "{} is missing", ffprobe.display());
        for (name, target) in [("ffmpeg", ffmpeg), ("ffprobe", ffprobe)] {
            let link = bin.join(name);
            let _ = std::fs::remove_file(&link);
            std::os::unix::fs::symlink(&target, &link).unwrap();
        }
        bin
    }

    /// PATH with `bin` first.
    fn path_with(bin: &Path) -> std::ffi::OsString {
        let mut dirs = vec![bin.to_path_buf()];
        if let Some(p) = std::env::var_os("PATH") {
            dirs.extend(std::env::split_paths(&p));
        }
        std::env::join_paths(dirs).unwrap()
    }

    /// Runs a tool to completion; panics with its output on failure. Returns (stdout, stderr) and
    /// prints the command and its time.
    fn run_tool(what: &str, cmd: &mut Command) -> (String, String) {
        let t = Instant::now();
        let out = cmd
            .output()
            .unwrap_or_else(|e| panic!("{what}: cannot run {cmd:?}: {e}"));
        let (stdout, stderr) = (
            String::from_utf8_lossy(&out.stdout).to_string(),
            String::from_utf8_lossy(&out.stderr).to_string(),
        );
        assert!(
            out.status.success(),
            "{what}: {cmd:?} failed ({}):\n{stdout}\n{stderr}",
            out.status
        );
        eprintln!("{what}: {:.1} s: {cmd:?}", t.elapsed().as_secs_f64());
        (stdout, stderr)
    }

    /// The generated pair: a lossless H.264 reference (testsrc2 with temporal noise, 320x180,
    /// 25 fps, 40 frames, in mp4 as tools usually get it) and a lossy x264 encode of it, both made by
    /// the oracle's ffmpeg. Returns (dir, reference, distorted).
    fn content(tag: &str) -> (PathBuf, PathBuf, PathBuf) {
        let dir = workdir(&format!("downstream-{tag}"));
        let (r, d) = (dir.join("ref.mp4"), dir.join("dis.mp4"));
        ffmpeg(&[
            "-f",
            "lavfi",
            "-i",
            "testsrc2=s=320x180:r=25:d=1.6",
            "-vf",
            "noise=alls=10:allf=t",
            "-pix_fmt",
            "yuv420p",
            "-c:v",
            "libx264",
            "-preset",
            "ultrafast",
            "-qp",
            "0",
            r.to_str().unwrap(),
        ]);
        ffmpeg(&[
            "-i",
            r.to_str().unwrap(),
            "-c:v",
            "libx264",
            "-preset",
            "veryfast",
            "-crf",
            "35",
            d.to_str().unwrap(),
        ]);
        (dir, r, d)
    }

    /// A copy of the distorted file in `dir/<side>/`, for tools that write their logs next to it.
    fn side_copy(side: Side, dir: &Path, distorted: &Path) -> PathBuf {
        let sub = dir.join(side.name());
        std::fs::create_dir_all(&sub).unwrap();
        let p = sub.join(distorted.file_name().unwrap());
        std::fs::copy(distorted, &p).unwrap();
        p
    }

    /// A JSON value with every string's occurrence of `from` replaced by `to` (paths that differ
    /// between the two runs).
    fn replace_in(v: &Value, from: &str, to: &str) -> Value {
        match v {
            Value::String(s) => Value::String(s.replace(from, to)),
            Value::Array(a) => Value::Array(a.iter().map(|x| replace_in(x, from, to)).collect()),
            Value::Object(o) => Value::Object(
                o.iter()
                    .map(|(k, x)| (k.clone(), replace_in(x, from, to)))
                    .collect(),
            ),
            other => other.clone(),
        }
    }

    /// The model files ffmpeg-quality-metrics ships (its `vmaf_models` directory in the venv).
    fn fqm_models() -> PathBuf {
        let lib = root().join("build/tools-venv/lib");
        let dirs: Vec<PathBuf> = std::fs::read_dir(&lib)
            .unwrap_or_else(|e| panic!("{}: {e}: run scripts/tools.sh", lib.display()))
            .filter_map(|e| e.ok())
            .map(|e| {
                e.path()
                    .join("site-packages/ffmpeg_quality_metrics/vmaf_models")
            })
            .filter(|p| p.is_dir())
            .collect();
        assert_eq!(
            dirs.len(),
            1,
            "ffmpeg_quality_metrics/vmaf_models in {}: {dirs:?}",
            lib.display()
        );
        dirs[0].clone()
    }

    /// ffmpeg-quality-metrics with its per-frame JSON, on one side; `-k` keeps libvmaf's log in
    /// `dir/<side>/tmp`. Returns (the tool's JSON output, libvmaf's log).
    fn fqm_run(side: Side, dir: &Path, r: &Path, d: &Path, extra: &[&str]) -> (Value, Value) {
        let bin = bin_dir(side, dir);
        let tmp = dir.join(side.name()).join("tmp");
        std::fs::create_dir_all(&tmp).unwrap();
        let mut c = Command::new(tool("ffmpeg-quality-metrics"));
        c.arg(d).arg(r).args(["-m", "vmaf"]).args(extra);
        c.arg("--ffmpeg-path").arg(bin.join("ffmpeg"));
        c.arg("--tmp-dir").arg(&tmp).args(["-k", "-of", "json"]);
        let (stdout, _) = run_tool(&format!("ffmpeg-quality-metrics ({side:?})"), &mut c);
        let out: Value = serde_json::from_str(&stdout).unwrap_or_else(|e| {
            panic!("ffmpeg-quality-metrics output is not JSON ({e}):\n{stdout}")
        });
        let logs: Vec<PathBuf> = std::fs::read_dir(&tmp)
            .unwrap()
            .filter_map(|e| e.ok())
            .map(|e| e.path())
            .filter(|p| p.to_string_lossy().contains("_libvmaf_"))
            .collect();
        assert_eq!(logs.len(), 1, "libvmaf logs in {}: {logs:?}", tmp.display());
        (out, read_json(&logs[0]))
    }

    /// Asserts the two tool outputs are equal and reports a few of the compared numbers.
    fn fqm_compare(what: &str, ours: &Value, theirs: &Value, metrics: &[&str]) {
        let (a, b) = (
            ours["vmaf"].as_array().expect("vmaf frames"),
            theirs["vmaf"].as_array().expect("vmaf frames"),
        );
        assert!(!b.is_empty(), "{what}: the oracle scored no frame");
        assert_eq!(a.len(), b.len(), "{what}: frame counts differ");
        for (fa, fb) in a.iter().zip(b) {
            assert_eq!(fa, fb, "{what}: frame {} differs", fb["n"]);
        }
        for m in metrics {
            assert!(b[0].get(*m).is_some(), "{what}: no {m} in {}", b[0]);
            eprintln!(
                "{what}: {m} frame 1: ours {} oracle {}; average: ours {} oracle {}",
                a[0][*m],
                b[0][*m],
                ours["global"]["vmaf"][*m]["average"],
                theirs["global"]["vmaf"][*m]["average"]
            );
        }
        assert_eq!(
            ours["global"], theirs["global"],
            "{what}: global stats differ"
        );
    }

    /// ffmpeg-quality-metrics 3.13.0 `-m vmaf` with a model file (the vmaf_v0.6.1.json it ships) and
    /// `--vmaf-features psnr`: its per-frame JSON (every libvmaf metric, 6 decimals as libvmaf's log
    /// prints them) and its global stats equal the oracle's, and so do the logs it reads.
    #[test]
    fn ffmpeg_quality_metrics_model_file_and_psnr() {
        let (dir, r, d) = content("fqm");
        let model = fqm_models().join("vmaf_v0.6.1.json");
        let m = model.to_str().unwrap();
        let extra = ["--vmaf-model-path", m, "--vmaf-features", "psnr"];
        let (ours_out, ours_log) = fqm_run(Side::Ours, &dir, &r, &d, &extra);
        let (theirs_out, theirs_log) = fqm_run(Side::Oracle, &dir, &r, &d, &extra);
        fqm_compare("fqm v0.6.1", &ours_out, &theirs_out, &["vmaf", "psnr_y"]);
        compare_logs(&ours_log, &theirs_log, &["vmaf"], "fqm v0.6.1 log");
    }

    /// ffmpeg-quality-metrics with a VMAF v1 model file (vmaf_v1.0.16_3d0h.json) at 10 bits
    /// (`--vmaf-10bit`, its advice for v1 models).
    #[test]
    fn ffmpeg_quality_metrics_v1_model_file_10bit() {
        let (dir, r, d) = content("fqm-v1");
        let model = fqm_models().join("vmaf_v1.0.16_3d0h.json");
        let m = model.to_str().unwrap();
        let extra = ["--vmaf-model-path", m, "--vmaf-10bit"];
        let (ours_out, ours_log) = fqm_run(Side::Ours, &dir, &r, &d, &extra);
        let (theirs_out, theirs_log) = fqm_run(Side::Oracle, &dir, &r, &d, &extra);
        fqm_compare("fqm v1.0.16_3d0h", &ours_out, &theirs_out, &["vmaf"]);
        compare_logs(&ours_log, &theirs_log, &["vmaf"], "fqm v1.0.16_3d0h log");
    }

    /// easyVmaf on one side (FFMPEG / FFPROBE, as its docs say), on a copy of the distorted file in
    /// `dir/<side>/` (it writes `<distorted>_vmaf.json` and `<distorted>_vmaf_summary.json` there).
    /// Returns (summary with the side's directory replaced by `SIDE`, libvmaf's log, stdout with
    /// the directory replaced).
    fn easyvmaf_run(
        side: Side,
        dir: &Path,
        r: &Path,
        d: &Path,
        extra: &[&str],
    ) -> (Value, Value, String) {
        let bin = bin_dir(side, dir);
        let dist = side_copy(side, dir, d);
        let mut c = Command::new(tool("easyvmaf"));
        c.env("FFMPEG", bin.join("ffmpeg"))
            .env("FFPROBE", bin.join("ffprobe"))
            .env("PATH", path_with(&bin));
        c.arg("-d").arg(&dist).arg("-r").arg(r).args(extra);
        let (stdout, stderr) = run_tool(&format!("easyVmaf ({side:?})"), &mut c);
        let sub = dist.parent().unwrap().to_str().unwrap().to_string();
        let stem = dist.with_extension("");
        let log = PathBuf::from(format!("{}_vmaf.json", stem.display()));
        let summary = PathBuf::from(format!("{}_vmaf_summary.json", stem.display()));
        assert!(
            summary.exists(),
            "easyVmaf ({side:?}) wrote no {}:\n{stdout}\n{stderr}",
            summary.display()
        );
        (
            replace_in(&read_json(&summary), &sub, "SIDE"),
            read_json(&log),
            stdout.replace(&sub, "SIDE"),
        )
    }

    /// Runs easyVmaf on both sides and compares: the summary (model scores rounded to 6 decimals,
    /// sync, models, pixel format) and the printed results are equal, and so is every value of the
    /// libvmaf log it reads.
    fn easyvmaf_compare(dir: &Path, r: &Path, d: &Path, extra: &[&str], models: &[&str]) {
        let dir = dir.to_path_buf();
        let (r, d) = (r.to_path_buf(), d.to_path_buf());
        let (ours_sum, ours_log, ours_text) = easyvmaf_run(Side::Ours, &dir, &r, &d, extra);
        let (theirs_sum, theirs_log, theirs_text) = easyvmaf_run(Side::Oracle, &dir, &r, &d, extra);
        let what = format!("easyVmaf {extra:?}");
        let names: Vec<&str> = theirs_sum["vmaf"]["models"]
            .as_array()
            .expect("models")
            .iter()
            .map(|m| m["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, models, "{what}: the models easyVmaf chose");
        for m in models {
            eprintln!(
                "{what}: {m}: ours {} oracle {}",
                ours_sum["vmaf"]["scores"][*m], theirs_sum["vmaf"]["scores"][*m]
            );
        }
        assert_eq!(ours_sum, theirs_sum, "{what}: summaries differ");
        let results = |t: &str| -> Vec<String> {
            t.lines()
                .map(|l| l.trim().to_string())
                .filter(|l| !l.is_empty())
                .collect()
        };
        assert_eq!(
            results(&ours_text),
            results(&theirs_text),
            "{what}: printed results differ"
        );
        compare_logs(&ours_log, &theirs_log, models, &what);
    }

    /// easyVmaf 5.0.0's default run: the VMAF v1.0.16 models `vmaf_v1_hd` (3d0h) and
    /// `vmaf_v1_phone` (5d0h) at 10 bits on the inputs scaled to 1920x1080, CAMBI told the encoding
    /// size, plus `psnr`.
    #[test]
    fn easyvmaf_default_v1_models() {
        let (dir, r, d) = content("easyvmaf-v1");
        easyvmaf_compare(&dir, &r, &d, &[], &["vmaf_v1_hd", "vmaf_v1_phone"]);
    }

    /// easyVmaf `--vmaf-version 0.6`: `vmaf_hd`, `vmaf_hd_neg` and `vmaf_hd_phone` (v0.6.1 with
    /// `enable_transform`), named models in one libvmaf, at the reference's 8 bits.
    #[test]
    fn easyvmaf_v0_6_models() {
        let (dir, r, d) = content("easyvmaf-v06");
        easyvmaf_compare(
            &dir,
            &r,
            &d,
            &["--vmaf-version", "0.6"],
            &["vmaf_hd", "vmaf_hd_neg", "vmaf_hd_phone"],
        );
    }

    /// easyVmaf on an interlaced distorted video (the reference's fields woven into 12.5 fps frames,
    /// encoded interlaced, top field first) against the 25 fps progressive reference: it
    /// deinterlaces one frame per field with `yadif` before scoring (our build must have it).
    #[test]
    fn easyvmaf_interlaced_distorted() {
        let (dir, r, _) = content("easyvmaf-interlaced");
        let d = dir.join("dis-interlaced.mp4");
        ffmpeg(&[
            "-i",
            r.to_str().unwrap(),
            "-vf",
            "tinterlace=interleave_top,fieldorder=tff",
            "-c:v",
            "libx264",
            "-preset",
            "veryfast",
            "-crf",
            "30",
            "-flags",
            "+ildct+ilme",
            "-x264opts",
            "tff=1",
            d.to_str().unwrap(),
        ]);
        easyvmaf_compare(
            &dir,
            &r,
            &d,
            &["--vmaf-version", "0.6"],
            &["vmaf_hd", "vmaf_hd_neg", "vmaf_hd_phone"],
        );
    }

    /// ab-av1's `vmaf` subcommand (PATH's ffmpeg and ffprobe; it upscales to 1080p, passes
    /// `libvmaf=shortest=true:ts_sync_mode=nearest:n_threads=…` and prints the last `VMAF score:`
    /// line's value): the same printed score with our ffmpeg first in PATH as with the oracle's. A
    /// second run adds a JSON log through its `--vmaf` passthrough, compared value by value.
    #[test]
    fn ab_av1_vmaf() {
        let (dir, r, d) = content("ab-av1");
        let score = |side: Side, extra: &[&str]| -> String {
            let bin = bin_dir(side, &dir);
            let mut c = Command::new(tool("ab-av1"));
            c.env("PATH", path_with(&bin))
                .current_dir(dir.join(side.name()));
            c.arg("vmaf")
                .arg("--reference")
                .arg(&r)
                .arg("--distorted")
                .arg(&d);
            c.args(extra);
            let (stdout, _) = run_tool(&format!("ab-av1 vmaf ({side:?})"), &mut c);
            let s = stdout.trim().to_string();
            let v: f32 = s
                .parse()
                .unwrap_or_else(|e| panic!("ab-av1 ({side:?}) printed {s:?}, not a score: {e}"));
            assert!(v > 0.0 && v <= 100.0, "ab-av1 ({side:?}): {v}");
            s
        };
        let (a, b) = (score(Side::Ours, &[]), score(Side::Oracle, &[]));
        eprintln!("ab-av1 vmaf: ours {a} oracle {b}");
        assert_eq!(a, b, "ab-av1 vmaf: printed scores differ");

        let log = |side: Side| dir.join(side.name()).join("vmaf.json");
        let with_log = |side: Side| {
            let opt = format!("log_fmt=json:log_path={}", log(side).display());
            score(side, &["--vmaf", &opt])
        };
        let (a, b) = (with_log(Side::Ours), with_log(Side::Oracle));
        eprintln!("ab-av1 vmaf --vmaf log_fmt=json:…: ours {a} oracle {b}");
        assert_eq!(a, b, "ab-av1 vmaf with a log: printed scores differ");
        compare_logs(
            &read_json(&log(Side::Ours)),
            &read_json(&log(Side::Oracle)),
            &["vmaf"],
            "ab-av1 log",
        );
    }
}
