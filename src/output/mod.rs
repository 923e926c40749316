//! libvmaf-shaped logs: the XML, JSON, CSV and SUB files libvmaf's `vmaf_write_output` writes
//! (and FFmpeg's `libvmaf` filter produces with `log_path` / `log_fmt`), byte for byte in
//! structure, key names, ordering, spacing and number formatting, so that any parser of libvmaf
//! logs reads ours unchanged.
//!
//! Formatting rules (libvmaf `output.c`):
//! * a value prints as `%.6f`, or as `%.16f` when its fractional part has more than six leading
//!   zeros (`count_leading_zeros_d`: e.g. `0.0000001`, or `3.0000000001`); non-finite values print
//!   as C does (`nan`, `-nan`, `inf`, `-inf`) except in JSON, where they are `null`;
//! * `fps` prints as `%.2f` (JSON: `null` when not finite);
//! * with `n_subsample > 1`, only frames whose number is a multiple of it are written;
//! * pooled metrics list `min`, `max`, `mean`, `harmonic_mean` in that order (XML and JSON only);
//! * `aggregate_metrics` holds whole-stream values some features set (PSNR's `apsnr_*` with
//!   `enable_apsnr`), formatted as frame values, XML attributes or JSON keys;
//! * JSON only: a top-level `"vmaf_rs"` object (absent from libvmaf's logs, ignored by their
//!   parsers, which look keys up by name) records the libvmaf kernel family whose host-dependent
//!   results were computed (`libvmaf_isa`) and the one requested, so two logs can be compared
//!   knowingly;
//! * libvmaf's quirk is kept: in JSON a non-finite frame value is written as `null` without the
//!   line break that follows other values. Not kept: libvmaf precedes the first frame with `,`
//!   when its number is not 0, which is not JSON (docs/FIDELITY.md). Names are escaped where the format allows it (JSON strings, XML attribute values,
//!   CSV fields); a name libvmaf's own names never need escaping, so such logs are byte-identical.
//!   A name in a position nothing can escape (an XML attribute *name*) is refused when the model
//!   is configured (`model::option`).
#![forbid(unsafe_code)]

use std::fmt;
use std::io::{self, Write};
use std::str::FromStr;

use crate::error::{Error, Result};
use crate::model::{PoolMethod, PoolStats};

/// A log format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LogFormat {
    /// libvmaf's XML log (FFmpeg's default `log_fmt`).
    Xml,
    /// libvmaf's JSON log.
    Json,
    /// Comma-separated values: a header line, then one line per frame.
    Csv,
    /// MicroDVD subtitles (`{frame}{frame+1}…`), one line per frame.
    Sub,
}

impl LogFormat {
    /// The format's `log_fmt` name.
    pub fn as_str(self) -> &'static str {
        match self {
            LogFormat::Xml => "xml",
            LogFormat::Json => "json",
            LogFormat::Csv => "csv",
            LogFormat::Sub => "sub",
        }
    }
}

impl fmt::Display for LogFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for LogFormat {
    type Err = Error;

    /// Parses `xml`, `json`, `csv` or `sub`. (FFmpeg's filter silently falls back to XML for
    /// anything else; we refuse instead.)
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "xml" => Ok(LogFormat::Xml),
            "json" => Ok(LogFormat::Json),
            "csv" => Ok(LogFormat::Csv),
            "sub" => Ok(LogFormat::Sub),
            _ => Err(Error::InvalidOption(format!(
                "unknown log format '{s}' (known: xml, json, csv, sub)"
            ))),
        }
    }
}

/// Run parameters a log may show.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LogParams {
    /// libvmaf's `n_subsample`: only frames whose number is a multiple of it are written (0 and 1
    /// write every frame given).
    pub n_subsample: u32,
    /// Frames sent to the engine (informational; libvmaf's formats do not print it).
    pub frames_sent: u64,
    /// Model names (informational; the scores are ordinary columns).
    pub models: Vec<String>,
    /// Picture width (XML `qualityWidth`).
    pub width: usize,
    /// Picture height (XML `qualityHeight`).
    pub height: usize,
}

/// Everything a log shows.
#[derive(Debug, Clone)]
pub struct LogData<'a> {
    /// The `version` written in XML and JSON. libvmaf writes its git revision (`86da14d` for the
    /// oracle); vmaf_rs callers pass their own, e.g. `vmaf_rs-0.1.0`.
    pub version: &'a str,
    /// Frames per second of the run (libvmaf: frames / CPU seconds), written in XML and JSON.
    pub fps: f64,
    /// Column names as logs print them, already aliased (`integer_adm2`,
    /// `integer_vif_scale0_egl_1`, `vmaf`), in libvmaf's column order.
    pub columns: &'a [String],
    /// (frame number, one value per column), in frame order. A row shorter than `columns` leaves
    /// the remaining columns unwritten for that frame, as libvmaf does for scores it lacks; a
    /// frame with no value is not written.
    pub frames: &'a [(u64, &'a [f64])],
    /// Pooled statistics, one entry per column, in column order (XML and JSON).
    pub pooled: &'a [(String, PoolStats)],
    /// Whole-stream values (`aggregate_metrics`, XML and JSON), in order.
    pub aggregates: &'a [(String, f64)],
    /// Run parameters.
    pub params: LogParams,
    /// The libvmaf kernel family reproduced, and the one requested (JSON `"vmaf_rs"`; `None`:
    /// not written).
    pub libvmaf_isa: Option<(crate::fidelity::LibvmafIsa, crate::fidelity::LibvmafIsaMode)>,
}

/// Writes `data` as a libvmaf log in format `fmt`. Fails on a write error, and (XML only, before
/// writing anything) on columns that cannot be XML attribute names (`InvalidInput`).
pub fn write_log(w: &mut dyn Write, fmt: LogFormat, data: &LogData) -> io::Result<()> {
    match fmt {
        LogFormat::Xml => write_xml(w, data),
        LogFormat::Json => write_json(w, data),
        LogFormat::Csv => write_csv(w, data),
        LogFormat::Sub => write_sub(w, data),
    }
}

/// libvmaf's `count_leading_zeros_d`: zeros after the decimal point of `|x|`'s fractional part,
/// counted by repeated multiplication by 10 in double precision. `(int)x` is emulated as x86's
/// conversion does it: NaN, infinities and values beyond `i32` give `INT_MIN`.
fn leading_zeros(x: f64) -> u32 {
    let x = if x < 0.0 { x.abs() } else { x };
    let int_part = if x.is_nan() || x >= 2_147_483_648.0 {
        -2_147_483_648.0
    } else {
        x.trunc()
    };
    let mut frac = x - int_part;
    let mut n = 0;
    while frac < 1.0 && frac != 0.0 {
        frac *= 10.0;
        n += 1;
    }
    n
}

/// C's `%.*f`, including glibc's spelling of non-finite values.
fn c_fixed(v: f64, prec: usize) -> String {
    if v.is_nan() {
        if v.is_sign_negative() { "-nan" } else { "nan" }.to_string()
    } else if v.is_infinite() {
        if v < 0.0 { "-inf" } else { "inf" }.to_string()
    } else {
        format!("{v:.prec$}")
    }
}

/// A value as libvmaf prints it: `%.6f`, or `%.16f` with more than six leading fractional zeros.
fn value(v: f64) -> String {
    c_fixed(v, if leading_zeros(v) <= 6 { 6 } else { 16 })
}

/// A JSON string's content: `"`, `\` and control characters escaped.
fn json_str(s: &str) -> std::borrow::Cow<'_, str> {
    if !s.chars().any(|c| c == '"' || c == '\\' || c.is_control()) {
        return s.into();
    }
    let mut o = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '"' => o.push_str("\\\""),
            '\\' => o.push_str("\\\\"),
            c if c.is_control() => o.push_str(&format!("\\u{:04x}", c as u32)),
            c => o.push(c),
        }
    }
    o.into()
}

/// An XML attribute value's content: `&`, `<`, `>`, `"` and `'` as entities.
fn xml_attr(s: &str) -> std::borrow::Cow<'_, str> {
    let plain =
        |c: char| !matches!(c, '&' | '<' | '>' | '"' | '\'' | '\u{FFFE}' | '\u{FFFF}') && c >= ' ';
    if s.chars().all(plain) {
        return s.into();
    }
    let mut o = String::with_capacity(s.len() + 16);
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&apos;"),
            // Character references, or a parser's attribute-value normalisation turns them into
            // spaces.
            '\t' => o.push_str("&#9;"),
            '\n' => o.push_str("&#10;"),
            '\r' => o.push_str("&#13;"),
            // XML 1.0 cannot hold these at all, not even as references.
            c if c < ' ' || c == '\u{FFFE}' || c == '\u{FFFF}' => o.push('\u{FFFD}'),
            c => o.push(c),
        }
    }
    o.into()
}

/// A CSV field: quoted (quotes doubled) when it holds a separator, a quote or a line break.
fn csv_field(s: &str) -> std::borrow::Cow<'_, str> {
    if !s.contains([',', '"', '\n', '\r']) {
        return s.into();
    }
    format!("\"{}\"", s.replace('"', "\"\"")).into()
}

/// The frames libvmaf writes, each with its written (column, value) pairs.
fn frames<'a>(data: &'a LogData<'a>) -> impl Iterator<Item = (u64, Vec<(&'a str, f64)>)> + 'a {
    let sub = u64::from(data.params.n_subsample);
    data.frames.iter().filter_map(move |(idx, vals)| {
        if sub > 1 && idx % sub != 0 {
            return None;
        }
        let written: Vec<(&str, f64)> = data
            .columns
            .iter()
            .map(String::as_str)
            .zip(vals.iter().copied())
            .collect();
        (!written.is_empty()).then_some((*idx, written))
    })
}

/// Per-frame XML values are attributes named by their column, so each column must be an XML
/// name (here: an ASCII letter or `_`, then letters, digits, `_`, `-`, `.`; every name the engine
/// makes is one) and distinct from the others and from `frameNum`. Anything else is refused
/// rather than written as a log no parser reads.
fn check_xml_names(columns: &[String]) -> io::Result<()> {
    let mut seen = std::collections::HashSet::from(["frameNum"]);
    for name in columns {
        let mut chars = name.chars();
        let ok = chars
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'));
        if !ok || !seen.insert(name.as_str()) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "column '{}' cannot be an XML attribute name ({}); use the JSON or CSV log",
                    name.escape_debug(),
                    if ok {
                        "it appears twice"
                    } else {
                        "not an XML name"
                    }
                ),
            ));
        }
    }
    Ok(())
}

fn write_xml(w: &mut dyn Write, data: &LogData) -> io::Result<()> {
    check_xml_names(data.columns)?;
    let agg: Vec<String> = data.aggregates.iter().map(|a| a.0.clone()).collect();
    check_xml_names(&agg)?;
    writeln!(w, "<VMAF version=\"{}\">", xml_attr(data.version))?;
    writeln!(
        w,
        "  <params qualityWidth=\"{}\" qualityHeight=\"{}\" />",
        data.params.width, data.params.height
    )?;
    writeln!(w, "  <fyi fps=\"{}\" />", c_fixed(data.fps, 2))?;
    writeln!(w, "  <frames>")?;
    for (idx, vals) in frames(data) {
        write!(w, "    <frame frameNum=\"{idx}\" ")?;
        for (name, v) in vals {
            write!(w, "{name}=\"{}\" ", value(v))?;
        }
        writeln!(w, "/>")?;
    }
    writeln!(w, "  </frames>")?;
    writeln!(w, "  <pooled_metrics>")?;
    for (name, stats) in data.pooled {
        write!(w, "    <metric name=\"{}\" ", xml_attr(name))?;
        for m in PoolMethod::LOG_ORDER {
            write!(w, "{m}=\"{}\" ", value(stats.get(m)))?;
        }
        writeln!(w, "/>")?;
    }
    writeln!(w, "  </pooled_metrics>")?;
    write!(w, "  <aggregate_metrics ")?;
    for (name, v) in data.aggregates {
        write!(w, "{name}=\"{}\" ", value(*v))?;
    }
    writeln!(w, "/>")?;
    writeln!(w, "</VMAF>")
}

fn write_json(w: &mut dyn Write, data: &LogData) -> io::Result<()> {
    writeln!(w, "{{")?;
    writeln!(w, "  \"version\": \"{}\",", json_str(data.version))?;
    if data.fps.is_finite() {
        writeln!(w, "  \"fps\": {:.2},", data.fps)?;
    } else {
        writeln!(w, "  \"fps\": null,")?;
    }
    if let Some((got, asked)) = data.libvmaf_isa {
        writeln!(w, "  \"vmaf_rs\": {{")?;
        writeln!(w, "    \"libvmaf_isa\": \"{got}\",")?;
        writeln!(w, "    \"libvmaf_isa_requested\": \"{asked}\"")?;
        writeln!(w, "  }},")?;
    }
    write!(w, "  \"frames\": [")?;
    // Separated by written position, not frame number: the first frame written need not be 0.
    for (k, (idx, vals)) in frames(data).enumerate() {
        write!(w, "{}", if k > 0 { ",\n" } else { "\n" })?;
        writeln!(w, "    {{")?;
        writeln!(w, "      \"frameNum\": {idx},")?;
        writeln!(w, "      \"metrics\": {{")?;
        let cnt = vals.len();
        for (j, (name, v)) in vals.into_iter().enumerate() {
            let comma = if j + 1 < cnt { "," } else { "" };
            if v.is_finite() {
                writeln!(w, "        \"{}\": {}{comma}", json_str(name), value(v))?;
            } else {
                // libvmaf writes no line break here.
                write!(w, "        \"{}\": null{comma}", json_str(name))?;
            }
        }
        writeln!(w, "      }}")?;
        write!(w, "    }}")?;
    }
    write!(w, "\n  ],\n")?;
    write!(w, "  \"pooled_metrics\": {{")?;
    for (i, (name, stats)) in data.pooled.iter().enumerate() {
        write!(w, "{}", if i > 0 { ",\n" } else { "\n" })?;
        write!(w, "    \"{}\": {{", json_str(name))?;
        for (j, m) in PoolMethod::LOG_ORDER.into_iter().enumerate() {
            write!(w, "{}", if j > 0 { ",\n" } else { "\n" })?;
            let v = stats.get(m);
            if v.is_finite() {
                write!(w, "      \"{m}\": {}", value(v))?;
            } else {
                write!(w, "      \"{m}\": null")?;
            }
        }
        writeln!(w)?;
        write!(w, "    }}")?;
    }
    write!(w, "\n  }},\n")?;
    write!(w, "  \"aggregate_metrics\": {{")?;
    for (i, (name, v)) in data.aggregates.iter().enumerate() {
        let comma = if i + 1 < data.aggregates.len() {
            ","
        } else {
            ""
        };
        if v.is_finite() {
            write!(w, "\n    \"{}\": {}{comma}", json_str(name), value(*v))?;
        } else {
            write!(w, "\n    \"{}\": null{comma}", json_str(name))?;
        }
    }
    write!(w, "\n  }}\n")?;
    writeln!(w, "}}")
}

fn write_csv(w: &mut dyn Write, data: &LogData) -> io::Result<()> {
    write!(w, "Frame,")?;
    for name in data.columns {
        write!(w, "{},", csv_field(name))?;
    }
    writeln!(w)?;
    for (idx, vals) in frames(data) {
        write!(w, "{idx},")?;
        for (_, v) in vals {
            write!(w, "{},", value(v))?;
        }
        writeln!(w)?;
    }
    Ok(())
}

fn write_sub(w: &mut dyn Write, data: &LogData) -> io::Result<()> {
    for (idx, vals) in frames(data) {
        write!(w, "{{{idx}}}{{{}}}frame: {idx}|", idx.wrapping_add(1))?;
        for (name, v) in vals {
            write!(w, "{name}: {}|", value(v))?;
        }
        writeln!(w)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests;
