//! Expected texts are written by hand from libvmaf's `output.c` format strings (checked against the
//! oracle's logs for the layout), for values whose `%.6f` / `%.16f` forms are easy to derive.

use super::*;

/// 2^-24: eight leading fractional zeros, so `%.16f`.
const TINY: f64 = 1.0 / 16_777_216.0;
/// 3 + 2^-30: a fractional part with nine leading zeros, so `%.16f`.
const NEAR3: f64 = 3.0 + 1.0 / 1_073_741_824.0;

fn columns() -> Vec<String> {
    vec!["integer_adm2".to_string(), "vmaf".to_string()]
}

fn with<R>(f: impl FnOnce(&LogData) -> R) -> R {
    let cols = columns();
    let rows: [(u64, Vec<f64>); 4] = [
        (0, vec![0.5, 76.125]),
        (1, vec![0.25, 80.0]),
        (2, vec![TINY, f64::NAN]),
        (4, vec![NEAR3, -1.5]),
    ];
    let frames: Vec<(u64, &[f64])> = rows.iter().map(|(i, v)| (*i, v.as_slice())).collect();
    let pooled = vec![
        (
            "integer_adm2".to_string(),
            PoolStats {
                min: 0.0,
                max: 3.0,
                mean: 1.0,
                harmonic_mean: 1e-9,
            },
        ),
        (
            "vmaf".to_string(),
            PoolStats {
                min: -1.5,
                max: 76.125,
                mean: 37.3125,
                harmonic_mean: f64::INFINITY,
            },
        ),
    ];
    let data = LogData {
        version: "vmaf_rs-test",
        // 2.675 is 2.67499999… in binary: %.2f gives 2.67.
        fps: 2.675,
        columns: &cols,
        frames: &frames,
        pooled: &pooled,
        aggregates: &[],
        params: LogParams {
            n_subsample: 2,
            frames_sent: 5,
            models: vec!["vmaf".to_string()],
            width: 320,
            height: 240,
        },
        libvmaf_isa: None,
    };
    f(&data)
}

fn render(fmt: LogFormat, data: &LogData) -> String {
    let mut out = Vec::new();
    write_log(&mut out, fmt, data).unwrap();
    String::from_utf8(out).unwrap()
}

#[test]
fn xml() {
    let want = r#"<VMAF version="vmaf_rs-test">
  <params qualityWidth="320" qualityHeight="240" />
  <fyi fps="2.67" />
  <frames>
    <frame frameNum="0" integer_adm2="0.500000" vmaf="76.125000" />
    <frame frameNum="2" integer_adm2="0.0000000596046448" vmaf="nan" />
    <frame frameNum="4" integer_adm2="3.0000000009313226" vmaf="-1.500000" />
  </frames>
  <pooled_metrics>
    <metric name="integer_adm2" min="0.000000" max="3.000000" mean="1.000000" harmonic_mean="0.0000000010000000" />
    <metric name="vmaf" min="-1.500000" max="76.125000" mean="37.312500" harmonic_mean="inf" />
  </pooled_metrics>
  <aggregate_metrics />
</VMAF>
"#;
    assert_eq!(with(|d| render(LogFormat::Xml, d)), want);
}

#[test]
fn json() {
    // Note libvmaf's missing line break after a null frame value.
    let want = r#"{
  "version": "vmaf_rs-test",
  "fps": 2.67,
  "frames": [
    {
      "frameNum": 0,
      "metrics": {
        "integer_adm2": 0.500000,
        "vmaf": 76.125000
      }
    },
    {
      "frameNum": 2,
      "metrics": {
        "integer_adm2": 0.0000000596046448,
        "vmaf": null      }
    },
    {
      "frameNum": 4,
      "metrics": {
        "integer_adm2": 3.0000000009313226,
        "vmaf": -1.500000
      }
    }
  ],
  "pooled_metrics": {
    "integer_adm2": {
      "min": 0.000000,
      "max": 3.000000,
      "mean": 1.000000,
      "harmonic_mean": 0.0000000010000000
    },
    "vmaf": {
      "min": -1.500000,
      "max": 76.125000,
      "mean": 37.312500,
      "harmonic_mean": null
    }
  },
  "aggregate_metrics": {
  }
}
"#;
    assert_eq!(with(|d| render(LogFormat::Json, d)), want);
}

#[test]
fn csv() {
    let want = "Frame,integer_adm2,vmaf,\n\
                0,0.500000,76.125000,\n\
                2,0.0000000596046448,nan,\n\
                4,3.0000000009313226,-1.500000,\n";
    assert_eq!(with(|d| render(LogFormat::Csv, d)), want);
}

#[test]
fn sub() {
    let want = "{0}{1}frame: 0|integer_adm2: 0.500000|vmaf: 76.125000|\n\
                {2}{3}frame: 2|integer_adm2: 0.0000000596046448|vmaf: nan|\n\
                {4}{5}frame: 4|integer_adm2: 3.0000000009313226|vmaf: -1.500000|\n";
    assert_eq!(with(|d| render(LogFormat::Sub, d)), want);
}

/// The JSON log records the host variant in a top-level object of its own, which a libvmaf-log
/// parser (keys looked up by name) never reads; the other formats stay as libvmaf's.
#[test]
fn json_records_the_host_variant() {
    use crate::fidelity::{LibvmafIsa, LibvmafIsaMode};
    let data = LogData {
        version: "v",
        fps: 1.0,
        columns: &[],
        frames: &[],
        pooled: &[],
        aggregates: &[],
        params: LogParams::default(),
        libvmaf_isa: Some((LibvmafIsa::Avx2, LibvmafIsaMode::Auto)),
    };
    let json = render(LogFormat::Json, &data);
    assert!(
        json.contains(
            "  \"fps\": 1.00,\n  \"vmaf_rs\": {\n    \"libvmaf_isa\": \"avx2\",\n    \
             \"libvmaf_isa_requested\": \"auto\"\n  },\n  \"frames\""
        ),
        "{json}"
    );
    let v: serde_json::Value = serde_json::from_str(&json).expect("valid JSON");
    assert_eq!(v["vmaf_rs"]["libvmaf_isa"], "avx2");
    for fmt in [LogFormat::Xml, LogFormat::Csv, LogFormat::Sub] {
        assert!(!render(fmt, &data).contains("libvmaf_isa"), "{fmt:?}");
    }
}

#[test]
fn empty_logs() {
    let data = LogData {
        version: "v",
        fps: f64::NAN,
        columns: &[],
        frames: &[],
        pooled: &[],
        aggregates: &[],
        params: LogParams::default(),
        libvmaf_isa: None,
    };
    assert_eq!(
        render(LogFormat::Json, &data),
        "{\n  \"version\": \"v\",\n  \"fps\": null,\n  \"frames\": [\n  ],\n  \
         \"pooled_metrics\": {\n  },\n  \"aggregate_metrics\": {\n  }\n}\n"
    );
    assert_eq!(
        render(LogFormat::Xml, &data),
        "<VMAF version=\"v\">\n  <params qualityWidth=\"0\" qualityHeight=\"0\" />\n  \
         <fyi fps=\"nan\" />\n  <frames>\n  </frames>\n  <pooled_metrics>\n  \
         </pooled_metrics>\n  <aggregate_metrics />\n</VMAF>\n"
    );
    assert_eq!(render(LogFormat::Csv, &data), "Frame,\n");
    assert_eq!(render(LogFormat::Sub, &data), "");
}

#[test]
fn partial_rows_and_a_first_frame_other_than_0() {
    let cols = columns();
    let a = [0.5];
    let frames: Vec<(u64, &[f64])> = vec![(3, &[][..]), (5, &a[..])];
    let data = LogData {
        version: "v",
        fps: 1.0,
        columns: &cols,
        frames: &frames,
        pooled: &[],
        aggregates: &[],
        params: LogParams::default(),
        libvmaf_isa: None,
    };
    // Frame 3 has no value: not written. Frame 5 has only the first column.
    assert_eq!(
        render(LogFormat::Csv, &data),
        "Frame,integer_adm2,vmaf,\n5,0.500000,\n"
    );
    // libvmaf starts the frame list with ",\n" when the first frame written is not frame 0, an
    // invalid JSON log; vmaf_rs does not reproduce that (docs/FIDELITY.md).
    let json = render(LogFormat::Json, &data);
    assert!(
        json.contains("  \"frames\": [\n    {\n      \"frameNum\": 5,\n      \"metrics\": {\n        \"integer_adm2\": 0.500000\n      }\n    }\n  ],\n"),
        "{json}"
    );
}

#[test]
fn number_formatting() {
    assert_eq!(leading_zeros(0.0), 0);
    assert_eq!(leading_zeros(-0.25), 1);
    assert_eq!(leading_zeros(1234.05), 2);
    assert_eq!(leading_zeros(TINY), 8);
    assert_eq!(leading_zeros(f64::NAN), 0);
    assert_eq!(leading_zeros(f64::INFINITY), 0);
    assert_eq!(leading_zeros(1e300), 0);
    // Six leading zeros still print with %.6f; seven switch to %.16f.
    assert_eq!(value(0.0000015), "0.000002");
    assert_eq!(value(0.00000015), "0.0000001500000000");
    assert_eq!(value(-0.00000015), "-0.0000001500000000");
    assert_eq!(value(2.5), "2.500000");
    // Round half to even on the exact binary value, as glibc: 2^-7 = 0.0078125.
    assert_eq!(value(0.0078125), "0.007812");
    assert_eq!(value(f64::NEG_INFINITY), "-inf");
    assert_eq!(value(-f64::NAN), "-nan");
    assert_eq!(value(-0.0), "-0.000000");
}

#[test]
fn formats_parse() {
    for f in [
        LogFormat::Xml,
        LogFormat::Json,
        LogFormat::Csv,
        LogFormat::Sub,
    ] {
        assert_eq!(f.as_str().parse::<LogFormat>().unwrap(), f);
        assert_eq!(f.to_string(), f.as_str());
    }
    let e = "yaml".parse::<LogFormat>().unwrap_err().to_string();
    assert!(
        e.contains("yaml") && e.contains("xml, json, csv, sub"),
        "{e}"
    );
}

/// Issue 8, item 6: names are escaped wherever the format allows it, so a hostile name cannot make
/// the JSON invalid or inject XML (libvmaf's own names are unchanged by it).
#[test]
fn names_are_escaped() {
    let cols = vec!["a\"b\\c".to_string(), "x<&'>,y".to_string()];
    let row = [1.0, 2.0];
    let frames: Vec<(u64, &[f64])> = vec![(0, &row[..])];
    let stats = PoolStats {
        min: 1.0,
        max: 1.0,
        mean: 1.0,
        harmonic_mean: 1.0,
    };
    let pooled = vec![(cols[0].clone(), stats), (cols[1].clone(), stats)];
    let data = LogData {
        version: "v\"1",
        fps: 1.0,
        columns: &cols,
        frames: &frames,
        pooled: &pooled,
        aggregates: &[],
        params: LogParams::default(),
        libvmaf_isa: None,
    };
    let json = render(LogFormat::Json, &data);
    let v: serde_json::Value = serde_json::from_str(&json).expect("valid JSON");
    assert_eq!(v["version"], "v\"1");
    assert_eq!(v["frames"][0]["metrics"]["a\"b\\c"], 1.0);
    assert_eq!(v["pooled_metrics"]["x<&'>,y"]["mean"], 1.0);
    // Per-frame XML values are attributes named by column: such names are refused (found by
    // fuzzing: the log was not XML).
    let mut out = Vec::new();
    let e = write_log(&mut out, LogFormat::Xml, &data).expect_err("not XML names");
    assert_eq!(e.kind(), io::ErrorKind::InvalidInput);
    assert!(out.is_empty(), "nothing written before the refusal");
    let good = vec!["vmaf".to_string(), "vmaf.b-2".to_string()];
    let pooled = vec![(good[0].clone(), stats), (good[1].clone(), stats)];
    let xml = render(
        LogFormat::Xml,
        &LogData {
            version: "v\"<1>\t\n\x01",
            columns: &good,
            pooled: &pooled,
            aggregates: &[],
            ..data.clone()
        },
    );
    assert!(
        xml.contains("<frame frameNum=\"0\" vmaf=\"1.000000\" vmaf.b-2=\"2.000000\" />")
            && xml.contains("version=\"v&quot;&lt;1&gt;&#9;&#10;\u{FFFD}\""),
        "{xml}"
    );
    for dup in [["vmaf", "vmaf"], ["frameNum", "vmaf"]] {
        let dup: Vec<String> = dup.iter().map(|s| s.to_string()).collect();
        let d = LogData {
            columns: &dup,
            ..data.clone()
        };
        assert!(
            write_log(&mut Vec::new(), LogFormat::Xml, &d).is_err(),
            "{dup:?}"
        );
    }
    let csv = render(LogFormat::Csv, &data);
    assert!(
        csv.starts_with("Frame,\"a\"\"b\\c\",\"x<&'>,y\",\n"),
        "{csv}"
    );
}

/// Found by fuzzing: JSON placed its separators by frame number, so a log whose first frame is
/// not frame 0 was invalid; SUB overflowed on the last possible frame number.
#[test]
fn frames_need_not_start_at_zero() {
    let cols = columns();
    let row = [1.0, 2.0];
    let frames: Vec<(u64, &[f64])> = vec![(7, &row[..]), (u64::MAX, &row[..])];
    let data = LogData {
        version: "v",
        fps: 1.0,
        columns: &cols,
        frames: &frames,
        pooled: &[],
        aggregates: &[],
        params: LogParams::default(),
        libvmaf_isa: None,
    };
    let json = render(LogFormat::Json, &data);
    let v: serde_json::Value = serde_json::from_str(&json).expect("valid JSON");
    assert_eq!(v["frames"][0]["frameNum"], 7);
    assert_eq!(v["frames"][1]["frameNum"], u64::MAX);
    let sub = render(LogFormat::Sub, &data);
    assert!(sub.contains(&format!("{{{}}}{{0}}", u64::MAX)), "{sub}");
}
