//! Bootstrap model collections (`vmaf_b_v0.6.3`, `vmaf_float_b_v0.6.3`) against the real libvmaf.
//! FFmpeg's `libvmaf` filter cannot load a collection, so the oracle runs each member as its own
//! `path=` model (the member files are cut from the built-in collection's text, byte for byte):
//! every member's per-frame and pooled score must equal ours as printed, and our bagging, stddev
//! and 95 % interval must equal libvmaf's formulas (`predict.c`) applied to the oracle's raw
//! (unclipped) member scores, to the precision those printed inputs allow.

mod common;

use common::*;
use serde_json::Value;
use std::path::Path;

/// The member objects `"0"`, `"1"`, … of a collection's JSON text, each as its exact source text.
fn split_members(text: &str) -> Vec<String> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut depth = 0;
    let (mut in_str, mut esc) = (false, false);
    let mut start = 0;
    for (i, &c) in b.iter().enumerate() {
        if in_str {
            match (esc, c) {
                (true, _) => esc = false,
                (false, b'\\') => esc = true,
                (false, b'"') => in_str = false,
                _ => {}
            }
            continue;
        }
        match c {
            b'"' => in_str = true,
            b'{' => {
                depth += 1;
                if depth == 2 {
                    start = i;
                }
            }
            b'}' => {
                if depth == 2 {
                    out.push(text[start..=i].to_string());
                }
                depth -= 1;
            }
            _ => {}
        }
    }
    out
}

/// libvmaf's `percentile` on sorted scores.
fn percentile(s: &[f64], perc: f64) -> f64 {
    let p = perc * (s.len() - 1) as f64 / 100.0;
    let (l, r) = (p.floor(), p.ceil());
    if l == r {
        s[l as usize]
    } else {
        s[l as usize] * (r - p) + s[r as usize] * (p - l)
    }
}

fn clip(v: f64) -> f64 {
    v.clamp(0.0, 100.0)
}

fn check(case: &Case, version: &str, file: &str) {
    let tag = version;
    let dir = workdir(&format!("{}-{tag}", case.name));
    let (r, d) = make_pair(case, &dir);
    let text = std::fs::read_to_string(root().join("src/model/builtin").join(file)).unwrap();
    let members = split_members(&text);
    assert_eq!(members.len(), 21, "{file}: members");
    let mut models = Vec::new();
    for (i, m) in members.iter().enumerate() {
        let p = dir.join(format!("member{i}.json"));
        std::fs::write(&p, m).unwrap();
        let name = if i == 0 {
            "vmaf".to_string()
        } else {
            format!("vmaf_{i:04}")
        };
        models.push(format!("path={}\\:name={name}", p.display()));
        models.push(format!(
            "path={}\\:name=raw_{i:04}\\:disable_clip=true",
            p.display()
        ));
    }
    let theirs = oracle_json(&r, &d, &format!("model='{}'", models.join("|")), &dir, tag);
    let log = dir.join(format!("ours-{tag}.json"));
    vmaf_rs(&r, &d, &["-m", &format!("version={version}")], &log);
    let ours = read_json(&log);
    let (of, tf) = (frames(&ours), frames(&theirs));
    assert_eq!(
        of.keys().collect::<Vec<_>>(),
        tf.keys().collect::<Vec<_>>(),
        "{tag}: frames"
    );
    let stat = [
        "vmaf_bagging",
        "vmaf_stddev",
        "vmaf_ci_p95_lo",
        "vmaf_ci_p95_hi",
    ];
    let mut worst_stat = 0f64;
    for (n, o) in &of {
        let t = &tf[n];
        for (k, v) in t {
            if k.starts_with("raw_") {
                continue;
            }
            assert_eq!(o.get(k), Some(v), "{tag}: frame {n} {k}: ours vs libvmaf");
        }
        // Every feature, every member, and the four statistics; nothing else.
        assert_eq!(o.len(), t.len() - 21 + stat.len(), "{tag}: frame {n} keys");
        // The statistics by libvmaf's formulas from its raw member scores ("0001".."0020").
        let mut raw: Vec<f64> = (1..21).map(|i| t[&format!("raw_{i:04}")]).collect();
        let mean = raw.iter().sum::<f64>() / 20.0;
        let sd = (raw.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / 20.0).sqrt();
        raw.sort_by(f64::total_cmp);
        let slope = (clip(mean + 0.01) - clip(mean - 0.01)) / 0.02;
        let want = [
            clip(mean),
            sd * slope,
            clip(percentile(&raw, 2.5)),
            clip(percentile(&raw, 97.5)),
        ];
        for (k, w) in stat.iter().zip(want) {
            let got = o[*k];
            worst_stat = worst_stat.max((got - w).abs());
            // Inputs printed to 1e-6: the recomputation is that close, no closer.
            assert!(
                (got - w).abs() <= 2e-6,
                "{tag}: frame {n} {k}: ours {got}, libvmaf's formula {w}"
            );
        }
    }
    // Pooled: every member as libvmaf pools it; the statistics as the mean of their columns.
    let (op, tp) = (&ours["pooled_metrics"], &theirs["pooled_metrics"]);
    for (k, v) in tp.as_object().unwrap() {
        if !k.starts_with("raw_") {
            assert_eq!(&op[k], v, "{tag}: pooled {k}");
        }
    }
    for k in stat {
        let mean = of.values().map(|f| f[k]).sum::<f64>() / of.len() as f64;
        let got = op[k]["mean"].as_f64().unwrap();
        assert!(
            (got - mean).abs() <= 1e-6,
            "{tag}: pooled {k} {got} vs {mean}"
        );
    }
    eprintln!(
        "{tag} on {}: {} frames, 21 members equal to libvmaf as printed, statistics within \
         {worst_stat:.1e} of libvmaf's formulas on its printed raw scores",
        case.name,
        of.len()
    );
}

fn cases() -> [Case; 2] {
    [
        Case {
            name: "boot-420-noise",
            source: "testsrc2=s=176x144:r=25:d=0.32",
            pix_fmt: "yuv420p",
            dist_filter: "noise=alls=24:allf=t+u",
            encode: &[],
        },
        Case {
            name: "boot-10bit-x264",
            source: "mandelbrot=s=130x98:r=25,trim=end_frame=6",
            pix_fmt: "yuv420p10le",
            dist_filter: "",
            encode: &["-c:v", "libx264", "-crf", "38", "-preset", "ultrafast"],
        },
    ]
}

#[test]
fn vmaf_b_v063_members_and_statistics() {
    for c in cases() {
        check(&c, "vmaf_b_v0.6.3", "vmaf_b_v0.6.3.json");
    }
}

#[test]
fn vmaf_float_b_v063_members_and_statistics() {
    for c in cases() {
        check(&c, "vmaf_float_b_v0.6.3", "vmaf_float_b_v0.6.3.json");
    }
}

/// A collection given by path loads like the built-in one (the CLI and the filter share the
/// model grammar), and a renamed collection renames every column it adds.
#[test]
fn collection_by_path_and_name() {
    let case = &cases()[0];
    let dir = workdir("boot-path");
    let (r, d) = make_pair(case, &dir);
    let file = root().join("src/model/builtin/vmaf_b_v0.6.3.json");
    let (a, b) = (dir.join("builtin.json"), dir.join("path.json"));
    vmaf_rs(&r, &d, &["-m", "version=vmaf_b_v0.6.3:name=b"], &a);
    vmaf_rs(
        &r,
        &d,
        &["-m", &format!("path={}:name=b", file.display())],
        &b,
    );
    let (fa, fb) = (frames(&read_json(&a)), frames(&read_json(&b)));
    assert_eq!(fa, fb);
    let keys: Vec<&String> = fa[&0].keys().filter(|k| k.starts_with("b")).collect();
    assert!(keys.iter().any(|k| *k == "b_bagging") && keys.iter().any(|k| *k == "b_0020"));
    assert!(!fa[&0].contains_key("vmaf"), "{keys:?}");
    let _: &Path = &dir;
    let v: Value = read_json(&a);
    assert!(v["pooled_metrics"]["b_ci_p95_hi"].is_object());
}
