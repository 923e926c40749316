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

/// A scratch directory for one test case (under tests/work, git-ignored, or `$VMAF_RS_WORK`),
/// emptied first.
pub fn workdir(name: &str) -> PathBuf {
    let d = work_base().join(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Where scratch files go: tests/work (git-ignored), or `$VMAF_RS_WORK`.
fn work_base() -> PathBuf {
    std::env::var_os("VMAF_RS_WORK")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("tests/work"))
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

/// Runs the oracle ffmpeg with arguments (quiet, overwrite), natively: for making content, which
/// no CPU difference touches (FFmpeg's and the encoders' SIMD are bit-exact with their C).
pub fn ffmpeg(args: &[&str]) -> String {
    let mut c = Command::new(oracle());
    c.args(["-hide_banner", "-loglevel", "error", "-nostdin", "-y"]);
    c.args(args);
    run(&mut c)
}

/// `VMAF_RS_TEST_HOST=avx2`: the suite plays an AVX2-only host (such as the AMD Zen 3 machines
/// this project's CI also runs on): every program whose result depends on the CPU (libvmaf, our
/// CLI, our ffmpeg) runs on an emulated AVX2 CPU ([`avx2_emulator`]), and the host's libvmaf family is
/// `avx2`. scripts/test.sh runs the fidelity tests once this way, so an AVX-512 machine also
/// checks what an AVX2-only machine sees.
pub fn emulated_avx2_host() -> bool {
    match std::env::var("VMAF_RS_TEST_HOST").as_deref() {
        Ok("avx2") => true,
        Ok("") | Err(_) => false,
        Ok(other) => panic!("VMAF_RS_TEST_HOST={other}: only avx2 is known"),
    }
}

/// The CPU the oracle's libvmaf sees, which decides the kernels it dispatches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OracleCpu {
    /// This host's CPU (an emulated AVX2 CPU under `VMAF_RS_TEST_HOST=avx2`).
    Native,
    /// An AVX2 CPU without AVX-512 (this one with AVX-512 hidden, valgrind's CPU or
    /// `qemu-x86_64 -cpu Haswell-v4`, [`avx2_emulator`]): libvmaf takes its AVX2
    /// kernels, whatever the host has.
    Avx2,
    /// An x86-64 CPU without AVX (`qemu-x86_64 -cpu Westmere`): libvmaf takes its C code.
    C,
}

impl OracleCpu {
    /// The libvmaf kernel family libvmaf takes on this CPU (`vmaf_rs`'s `libvmaf_isa` value).
    /// Neither emulator runs AVX-512, so `avx512` is only ever native.
    pub fn isa(self) -> &'static str {
        match self {
            OracleCpu::Native => host_isa(),
            OracleCpu::Avx2 => "avx2",
            OracleCpu::C => "c",
        }
    }

    /// The CPU that runs libvmaf's `isa` kernels here, if any (`None`: `avx512` on a host
    /// without AVX-512).
    pub fn for_isa(isa: &str) -> Option<OracleCpu> {
        match isa {
            _ if isa == host_isa() => Some(OracleCpu::Native),
            "avx2" => Some(OracleCpu::Avx2),
            "c" => Some(OracleCpu::C),
            _ => None,
        }
    }
}

/// qemu's user-mode x86-64 emulator (Debian's qemu-user, installed by scripts/deps.sh, or
/// `$VMAF_RS_QEMU`). Fails the test (never skips) when it is missing.
pub fn qemu() -> PathBuf {
    let p = std::env::var_os("VMAF_RS_QEMU")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/usr/bin/qemu-x86_64"));
    assert!(
        p.exists(),
        "{} is missing: install qemu-user (scripts/deps.sh does)",
        p.display()
    );
    p
}

/// How an AVX2-only CPU is emulated: `cpuid-mask` (preferred: this CPU itself, running natively,
/// with AVX-512 hidden from CPUID by `scripts/cpuid-mask.c`, which needs the kernel's CPUID
/// faulting), `valgrind` (its CPU hides AVX-512 and its AVX2 is exact) or `qemu` (`-cpu
/// Haswell-v4`). `$VMAF_RS_AVX2_EMULATOR` chooses; by default the mask where CPUID faulting works,
/// else valgrind where it is installed (scripts/deps.sh installs it), else qemu. qemu 7.2 (Debian
/// 12) mis-executes some AVX2 code: our CLI's VIF came out wrong under it at some builds while
/// valgrind and the real CPU agreed (docs/FIDELITY.md).
pub fn avx2_emulator() -> &'static str {
    static V: OnceLock<&'static str> = OnceLock::new();
    V.get_or_init(|| {
        let v = match std::env::var("VMAF_RS_AVX2_EMULATOR").as_deref() {
            Ok("cpuid-mask") => {
                assert!(
                    cpuid_mask().is_some(),
                    "VMAF_RS_AVX2_EMULATOR=cpuid-mask, but CPUID faulting does not work here"
                );
                "cpuid-mask"
            }
            Ok("valgrind") => "valgrind",
            Ok("qemu") => "qemu",
            Ok("") | Err(_) if cpuid_mask().is_some() => "cpuid-mask",
            Ok("") | Err(_) if valgrind().exists() => "valgrind",
            Ok("") | Err(_) => "qemu",
            Ok(other) => panic!("VMAF_RS_AVX2_EMULATOR={other}: cpuid-mask, valgrind or qemu"),
        };
        eprintln!("an AVX2-only CPU is emulated by {v}");
        v
    })
}

/// `scripts/cpuid-mask.c` built into the scratch directory (once per test binary; `cc`, which the
/// FFmpeg build needs anyway), if CPUID faulting works on this machine (`cpuid-mask --check`).
fn cpuid_mask() -> Option<&'static Path> {
    static P: OnceLock<Option<PathBuf>> = OnceLock::new();
    P.get_or_init(|| {
        let dir = work_base();
        std::fs::create_dir_all(&dir).ok()?;
        // Built under a name of its own, then renamed: test binaries may build it at once.
        let tmp = dir.join(format!("cpuid-mask.{}", std::process::id()));
        let built = Command::new("cc")
            .args(["-O2", "-o"])
            .arg(&tmp)
            .arg(root().join("scripts/cpuid-mask.c"))
            .status()
            .is_ok_and(|s| s.success());
        if !built {
            eprintln!("cpuid-mask: could not build scripts/cpuid-mask.c with cc");
            return None;
        }
        let p = dir.join("cpuid-mask");
        std::fs::rename(&tmp, &p).ok()?;
        let works = Command::new(&p)
            .arg("--check")
            .status()
            .is_ok_and(|s| s.success());
        works.then_some(p)
    })
    .as_deref()
}

/// valgrind (`$VMAF_RS_VALGRIND`, else /usr/bin/valgrind).
fn valgrind() -> PathBuf {
    std::env::var_os("VMAF_RS_VALGRIND")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/usr/bin/valgrind"))
}

/// A command running `program` on `cpu`: directly, under the CPUID mask, valgrind's CPU (AVX2, no
/// AVX-512) or qemu's Haswell for an AVX2-only CPU, or under qemu's Westmere for one without AVX (with the
/// features qemu's TCG lacks turned off, so it prints no warnings).
pub fn command_on(cpu: OracleCpu, program: &Path) -> Command {
    let model = match cpu {
        OracleCpu::Native if emulated_avx2_host() => return command_on(OracleCpu::Avx2, program),
        OracleCpu::Native => return Command::new(program),
        OracleCpu::Avx2 if avx2_emulator() == "cpuid-mask" => {
            let mut c = Command::new(cpuid_mask().expect("checked by avx2_emulator"));
            c.arg(program);
            return c;
        }
        OracleCpu::Avx2 if avx2_emulator() == "valgrind" => {
            let mut c = Command::new(valgrind());
            c.args(["--tool=none", "-q"]).arg(program);
            return c;
        }
        OracleCpu::Avx2 => "Haswell-v4,-pcid,-x2apic,-tsc-deadline,-invpcid,-spec-ctrl",
        OracleCpu::C => "Westmere,-x2apic,-tsc-deadline",
    };
    let mut c = Command::new(qemu());
    c.args(["-cpu", model]).arg(program);
    c
}

/// Runs the oracle ffmpeg with arguments (quiet, overwrite) on `cpu`.
pub fn ffmpeg_on(cpu: OracleCpu, args: &[&str]) -> String {
    let mut c = command_on(cpu, &oracle());
    c.args(["-hide_banner", "-loglevel", "error", "-nostdin", "-y"]);
    c.args(args);
    run(&mut c)
}

/// The libvmaf kernel family the native oracle's libvmaf takes on this host, read from
/// /proc/cpuinfo independently of the crate's own detection: `avx512` when the CPU and kernel give
/// everything libvmaf's AVX-512 dispatch checks (AVX2, BMI1, BMI2, AVX-512 F/CD/DQ/BW/VL; the
/// kernel lists AVX-512 flags only when it saves their state), `avx2` with AVX2, BMI1 and BMI2,
/// else `c`.
pub fn host_isa() -> &'static str {
    static V: OnceLock<&'static str> = OnceLock::new();
    V.get_or_init(|| {
        if emulated_avx2_host() {
            eprintln!("host: an emulated AVX2-only CPU (VMAF_RS_TEST_HOST=avx2)");
            return "avx2";
        }
        let info = std::fs::read_to_string("/proc/cpuinfo").expect("read /proc/cpuinfo");
        let flags: Vec<&str> = info
            .lines()
            .find(|l| l.starts_with("flags"))
            .map(|l| l.split_whitespace().collect())
            .unwrap_or_default();
        let all = |need: &[&str]| need.iter().all(|f| flags.contains(f));
        let avx2 = all(&["avx2", "bmi1", "bmi2"]);
        let v = if avx2 && all(&["avx512f", "avx512cd", "avx512dq", "avx512bw", "avx512vl"]) {
            "avx512"
        } else if avx2 {
            "avx2"
        } else {
            "c"
        };
        eprintln!("host: libvmaf takes its {v} kernels here (from /proc/cpuinfo)");
        v
    })
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

/// Runs libvmaf (the oracle) natively on a pair with extra filter options; returns the JSON log.
pub fn oracle_json(reference: &Path, distorted: &Path, opts: &str, dir: &Path, tag: &str) -> Value {
    oracle_json_on(OracleCpu::Native, reference, distorted, opts, dir, tag)
}

/// [`oracle_json`] with libvmaf on `cpu`.
pub fn oracle_json_on(
    cpu: OracleCpu,
    reference: &Path,
    distorted: &Path,
    opts: &str,
    dir: &Path,
    tag: &str,
) -> Value {
    let log = dir.join(format!("oracle-{tag}.json"));
    let mut filter = format!("libvmaf=log_fmt=json:log_path={}", log.display());
    if !opts.is_empty() {
        filter.push(':');
        filter.push_str(opts);
    }
    ffmpeg_on(
        cpu,
        &[
            "-i",
            distorted.to_str().unwrap(),
            "-i",
            reference.to_str().unwrap(),
            "-lavfi",
            &filter,
            "-f",
            "null",
            "-",
        ],
    );
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

/// Compares two libvmaf-shaped JSON logs, ours against the native oracle's: see
/// [`compare_logs_as`].
pub fn compare_logs(
    ours: &Value,
    theirs: &Value,
    model_names: &[&str],
    what: &str,
) -> BTreeMap<String, f64> {
    compare_logs_as(ours, theirs, model_names, what, OracleCpu::Native)
}

/// Compares our JSON log with libvmaf's, run on `cpu`: our log must say it reproduced the kernel
/// family libvmaf takes there; then same frames, same metric names, and every per-frame and
/// pooled value **equal as printed** (both logs print `%.6f`, or `%.16f` near integers, so equal
/// parsed doubles are equal printed values). docs/FIDELITY.md lists no exception. The model
/// names label the report. Returns the largest difference per metric (for the report).
pub fn compare_logs_as(
    ours: &Value,
    theirs: &Value,
    model_names: &[&str],
    what: &str,
    cpu: OracleCpu,
) -> BTreeMap<String, f64> {
    assert_eq!(
        ours["vmaf_rs"]["libvmaf_isa"].as_str(),
        Some(cpu.isa()),
        "{what}: our log reproduced libvmaf_isa {} but libvmaf on this CPU ({cpu:?}) takes {}",
        ours["vmaf_rs"]["libvmaf_isa"],
        cpu.isa()
    );
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
            if ours_m[k] != *tv {
                failures.push(format!(
                    "frame {n} {k}: ours {} libvmaf {tv} (diff {d:.3e})",
                    ours_m[k]
                ));
            }
        }
    }
    let (pa, pb) = (&ours["pooled_metrics"], &theirs["pooled_metrics"]);
    let keys = |v: &Value| -> Vec<String> {
        let mut k: Vec<String> = v
            .as_object()
            .expect("pooled_metrics")
            .keys()
            .cloned()
            .collect();
        k.sort();
        k
    };
    assert_eq!(keys(pa), keys(pb), "{what}: pooled metric names differ");
    for (k, stats) in pb.as_object().expect("pooled_metrics") {
        for s in ["min", "max", "mean", "harmonic_mean"] {
            let tv = stats[s].as_f64().unwrap();
            let ov = pa[k][s]
                .as_f64()
                .unwrap_or_else(|| panic!("{what}: pooled {k}.{s} missing"));
            let d = (ov - tv).abs();
            let w = worst.entry(format!("pooled {k}.{s}")).or_insert(0.0);
            *w = w.max(d);
            if ov != tv {
                failures.push(format!(
                    "pooled {k}.{s}: ours {ov} libvmaf {tv} (diff {d:.3e})"
                ));
            }
        }
    }
    // Whole-stream values (PSNR's apsnr_*): same names, equal values (null: not finite).
    let (aa, ab) = (&ours["aggregate_metrics"], &theirs["aggregate_metrics"]);
    assert_eq!(keys(aa), keys(ab), "{what}: aggregate metric names differ");
    for (k, tv) in ab.as_object().expect("aggregate_metrics") {
        if aa[k] != *tv {
            failures.push(format!("aggregate {k}: ours {} libvmaf {tv}", aa[k]));
        }
    }
    eprintln!("{what}: max |diff| per metric vs libvmaf:");
    for (k, d) in &worst {
        let tag = if model_names.contains(&k.as_str()) {
            " (model score)"
        } else {
            ""
        };
        eprintln!("  {k:<40} {d:.1e}{tag}");
    }
    assert!(
        failures.is_empty(),
        "{what}: {} mismatches:\n{}",
        failures.len(),
        failures.join("\n")
    );
    worst
}

/// Runs our CLI on a pair natively, writing a JSON log; see [`vmaf_rs_on`].
pub fn vmaf_rs(reference: &Path, distorted: &Path, extra: &[&str], log: &Path) -> String {
    vmaf_rs_on(OracleCpu::Native, reference, distorted, extra, log)
}

/// Runs our CLI on `cpu` (natively, or emulated as another CPU) with `-r`, `-d`, `--json -o
/// log` and `extra`; returns its stderr. `$VMAF_RS_CLI` selects another build of the CLI (e.g.
/// when these tests run on another host, scripts/fidelity-check.sh).
pub fn vmaf_rs_on(
    cpu: OracleCpu,
    reference: &Path,
    distorted: &Path,
    extra: &[&str],
    log: &Path,
) -> String {
    let mut c = command_on(cpu, &cli_path());
    c.arg("-r").arg(reference).arg("-d").arg(distorted);
    c.args(["--json", "-o"]).arg(log).args(extra);
    run(&mut c)
}

/// Our CLI: `$VMAF_RS_CLI` (another build, e.g. on another host), else this build's.
pub fn cli_path() -> PathBuf {
    std::env::var_os("VMAF_RS_CLI")
        .map(PathBuf::from)
        .unwrap_or_else(|| env!("CARGO_BIN_EXE_vmaf-rs").into())
}
