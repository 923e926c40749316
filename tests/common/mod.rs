//! Shared test support: the oracle (real libvmaf inside a static FFmpeg, installed by
//! scripts/oracle.sh), content generation with it, and libvmaf-JSON-log comparison.
#![allow(dead_code)]

use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// Repository root.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The oracle ffmpeg. Installs it if missing; fails the test (never skips) if it cannot.
pub fn oracle() -> PathBuf {
    static P: OnceLock<PathBuf> = OnceLock::new();
    P.get_or_init(|| {
        if let Ok(p) = std::env::var("VMAF_RS_ORACLE") {
            return PathBuf::from(p);
        }
        let out = Command::new("bash")
            .arg(root().join("scripts/oracle.sh"))
            .output()
            .expect("run scripts/oracle.sh");
        assert!(
            out.status.success(),
            "the oracle (libvmaf) could not be installed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        PathBuf::from(String::from_utf8_lossy(&out.stdout).trim().to_string())
    })
    .clone()
}

/// A scratch directory for one test case (under tests/work, git-ignored), emptied first.
pub fn workdir(name: &str) -> PathBuf {
    let d = root().join("tests/work").join(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Runs a command, panicking with its stderr on failure; returns stdout+stderr.
pub fn run(cmd: &mut Command) -> String {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{cmd:?} failed:\n{text}");
    text
}

/// Runs the oracle ffmpeg with arguments (quiet, overwrite).
pub fn ffmpeg(args: &[&str]) -> String {
    let mut c = Command::new(oracle());
    c.args(["-hide_banner", "-loglevel", "error", "-nostdin", "-y"]);
    c.args(args);
    run(&mut c)
}

/// How a test pair is made: a lavfi source for the reference, and a transformation (filters or
/// an encode/decode round trip) for the distorted video.
#[derive(Clone, Debug)]
pub struct Case {
    /// Name (directory).
    pub name: &'static str,
    /// lavfi source graph for the reference (its frame count must be finite).
    pub source: &'static str,
    /// Pixel format of both videos.
    pub pix_fmt: &'static str,
    /// Filters turning the reference into the distorted video (empty: none).
    pub dist_filter: &'static str,
    /// Encoder arguments for an encode/decode round trip (empty: none).
    pub encode: &'static [&'static str],
}

/// Generates `ref.y4m` and `dis.y4m` for a case; returns their paths.
pub fn make_pair(case: &Case, dir: &Path) -> (PathBuf, PathBuf) {
    let r = dir.join("ref.y4m");
    let d = dir.join("dis.y4m");
    let rs = r.to_str().unwrap();
    ffmpeg(&[
        "-f",
        "lavfi",
        "-i",
        case.source,
        "-pix_fmt",
        case.pix_fmt,
        "-strict",
        "-1",
        rs,
    ]);
    let mut src = rs.to_string();
    if !case.encode.is_empty() {
        let enc = dir.join("enc.mkv");
        let mut a = vec!["-i", rs];
        a.extend_from_slice(case.encode);
        a.push(enc.to_str().unwrap());
        ffmpeg(&a);
        src = enc.to_str().unwrap().to_string();
    }
    let mut a = vec!["-i", src.as_str()];
    if !case.dist_filter.is_empty() {
        a.extend(["-vf", case.dist_filter]);
    }
    a.extend([
        "-pix_fmt",
        case.pix_fmt,
        "-strict",
        "-1",
        d.to_str().unwrap(),
    ]);
    ffmpeg(&a);
    (r, d)
}

/// Runs libvmaf (the oracle) on a pair with extra filter options; returns the JSON log.
pub fn oracle_json(reference: &Path, distorted: &Path, opts: &str, dir: &Path, tag: &str) -> Value {
    let log = dir.join(format!("oracle-{tag}.json"));
    let mut filter = format!("libvmaf=log_fmt=json:log_path={}", log.display());
    if !opts.is_empty() {
        filter.push(':');
        filter.push_str(opts);
    }
    ffmpeg(&[
        "-i",
        distorted.to_str().unwrap(),
        "-i",
        reference.to_str().unwrap(),
        "-lavfi",
        &filter,
        "-f",
        "null",
        "-",
    ]);
    read_json(&log)
}

/// Parses a JSON file.
pub fn read_json(p: &Path) -> Value {
    let text = std::fs::read_to_string(p).unwrap_or_else(|e| panic!("read {}: {e}", p.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("parse {}: {e}", p.display()))
}

/// Per-frame metrics of a libvmaf-shaped JSON log: frameNum → (metric → value).
pub fn frames(log: &Value) -> BTreeMap<u64, BTreeMap<String, f64>> {
    let mut out = BTreeMap::new();
    for f in log["frames"].as_array().expect("frames array") {
        let n = f["frameNum"].as_u64().expect("frameNum");
        let m = f["metrics"]
            .as_object()
            .expect("metrics")
            .iter()
            .map(|(k, v)| (k.clone(), v.as_f64().expect("number")))
            .collect();
        out.insert(n, m);
    }
    out
}

/// Tolerances: features within libvmaf's printed precision, model scores within 1e-4.
pub fn tolerance(metric: &str, model_names: &[&str]) -> f64 {
    if model_names.contains(&metric) {
        1e-4
    } else {
        1e-6 + 1e-12
    }
}

/// Compares two libvmaf-shaped JSON logs: same frames, same metric names, every value within
/// tolerance, pooled metrics too. Returns the largest difference per metric (for the report).
pub fn compare_logs(
    ours: &Value,
    theirs: &Value,
    model_names: &[&str],
    what: &str,
) -> BTreeMap<String, f64> {
    let (a, b) = (frames(ours), frames(theirs));
    assert_eq!(
        a.keys().collect::<Vec<_>>(),
        b.keys().collect::<Vec<_>>(),
        "{what}: frame numbers differ"
    );
    let mut worst: BTreeMap<String, f64> = BTreeMap::new();
    let mut failures = Vec::new();
    for (n, theirs_m) in &b {
        let ours_m = &a[n];
        let mut ka: Vec<_> = ours_m.keys().collect();
        let mut kb: Vec<_> = theirs_m.keys().collect();
        ka.sort();
        kb.sort();
        assert_eq!(ka, kb, "{what}: frame {n}: metric names differ");
        for (k, tv) in theirs_m {
            let d = (ours_m[k] - tv).abs();
            let w = worst.entry(k.clone()).or_insert(0.0);
            *w = w.max(d);
            if d > tolerance(k, model_names) {
                failures.push(format!(
                    "frame {n} {k}: ours {} libvmaf {tv} (diff {d:.3e})",
                    ours_m[k]
                ));
            }
        }
    }
    let (pa, pb) = (&ours["pooled_metrics"], &theirs["pooled_metrics"]);
    for (k, stats) in pb.as_object().expect("pooled_metrics") {
        for s in ["min", "max", "mean", "harmonic_mean"] {
            let tv = stats[s].as_f64().unwrap();
            let ov = pa[k][s]
                .as_f64()
                .unwrap_or_else(|| panic!("{what}: pooled {k}.{s} missing"));
            let d = (ov - tv).abs();
            if d > tolerance(k, model_names) {
                failures.push(format!(
                    "pooled {k}.{s}: ours {ov} libvmaf {tv} (diff {d:.3e})"
                ));
            }
        }
    }
    eprintln!("{what}: max |diff| per metric vs libvmaf:");
    for (k, d) in &worst {
        eprintln!("  {k:<40} {d:.1e}");
    }
    assert!(
        failures.is_empty(),
        "{what}: {} mismatches:\n{}",
        failures.len(),
        failures.join("\n")
    );
    worst
}
