//! Segment-parallel scoring: a title's frame range `[a, b)` scored on its own into a partial log,
//! and the exact merge of the partial logs that tile the title into the log a single run writes.
//!
//! A segment engine ([`Engine::begin_segment`]) is given the context frames its extractors read
//! before `a` (motion's previous reference, SpEED temporal's previous frames: at most two,
//! [`Engine::context_frames`]) and records each frame's *spatial* row: every per-frame value the
//! extractors write, before temporal derivation and models. Everything that depends on
//! neighbouring frames or on the whole title — motion2, motion3 and its moving average, the
//! model scores, the bootstrap statistics, pooling, `n_subsample`'s selection, the aggregates —
//! is computed by the merge, which feeds every row of every part, in title order, through
//! [`Engine::push_spatial`]: the engine's own temporal stages, models and pooling, the code a
//! single run uses. The rows are written exactly (each value as Rust's shortest round-trip
//! decimal), so the merged log equals a single run's byte for byte (`fps`, the one measured
//! field, aside: it is frames over the parts' summed compute seconds, and
//! [`crate::report::LogOptions::reproducible`] writes it as 0 for both).
#![forbid(unsafe_code)]

use crate::engine::{Engine, EngineConfig};
use crate::error::{Error, Result};
use crate::fidelity::LibvmafIsaMode;
use crate::model::{parse_feature_option, parse_model_option, PoolMethod};
use crate::picture::{ChromaLayout, PictureFormat};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// The `format` a partial log declares (bumped when its meaning changes).
pub const PARTIAL_FORMAT: &str = "vmaf_rs-partial-1";

/// A scoring configuration as the CLI's options spell it, enough to rebuild the engine
/// configuration at the merge (the CLI builds its own from it too, so both agree).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunConfig {
    /// Picture width.
    pub width: usize,
    /// Picture height.
    pub height: usize,
    /// Bits per component.
    pub bitdepth: u8,
    /// Chroma layout (`400`, `420`, `422`, `444`).
    pub pixel_format: String,
    /// `--model` values, in order (empty: the default model).
    pub models: Vec<String>,
    /// `--feature` values, in order.
    pub features: Vec<String>,
    /// `--subsample`.
    pub n_subsample: u32,
    /// `--pool`.
    pub pool: String,
    /// `--libvmaf_isa` as requested (`auto` included).
    pub libvmaf_isa: String,
}

impl RunConfig {
    /// The stream format.
    pub fn format(&self) -> Result<PictureFormat> {
        let layout = ChromaLayout::parse(&self.pixel_format).ok_or_else(|| {
            Error::InvalidOption(format!(
                "pixel format '{}': expected 420, 422, 444 or 400",
                self.pixel_format
            ))
        })?;
        Ok(PictureFormat {
            width: self.width,
            height: self.height,
            bpc: self.bitdepth,
            layout,
        })
    }

    /// The engine configuration (one thread, the default backend: callers set their own).
    /// A `--feature` value without `=` in its first part is a bare name (`adm` is `name=adm`).
    pub fn engine_config(&self) -> Result<EngineConfig> {
        let mut cfg = EngineConfig::new(self.format()?);
        for m in &self.models {
            cfg.models.extend(parse_model_option(m)?);
        }
        for f in &self.features {
            let text = if f.split(':').next().is_some_and(|t| !t.contains('=')) {
                format!("name={f}")
            } else {
                f.clone()
            };
            cfg.features.extend(parse_feature_option(&text)?);
        }
        cfg.n_subsample = self.n_subsample;
        cfg.pool = self.pool.parse::<PoolMethod>()?;
        cfg.libvmaf_isa = self.libvmaf_isa.parse()?;
        Ok(cfg)
    }

    /// The fields in which `other` differs from `self`, by option name.
    fn differences(&self, other: &RunConfig) -> Vec<String> {
        let mut d = Vec::new();
        let mut cmp = |name: &str, a: String, b: String| {
            if a != b {
                d.push(format!("{name} {a} vs {b}"));
            }
        };
        cmp(
            "format",
            format!("{:?}", self.format().ok()),
            format!("{:?}", other.format().ok()),
        );
        cmp(
            "--model",
            format!("{:?}", self.models),
            format!("{:?}", other.models),
        );
        cmp(
            "--feature",
            format!("{:?}", self.features),
            format!("{:?}", other.features),
        );
        cmp(
            "--subsample",
            self.n_subsample.to_string(),
            other.n_subsample.to_string(),
        );
        cmp("--pool", self.pool.clone(), other.pool.clone());
        cmp(
            "--libvmaf_isa",
            self.libvmaf_isa.clone(),
            other.libvmaf_isa.clone(),
        );
        d
    }
}

/// One frame of a partial log: its title index and its spatial row, each value as text that
/// reads back exactly ([`encode_value`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PartFrame {
    /// Title frame index.
    pub frame: u64,
    /// The spatial row, in [`PartialLog::slots`] order.
    pub values: Vec<String>,
}

/// A segment's partial log (JSON): the frames `[range[0], range[1])` of a title, scored from
/// the context frames `[context[0], context[1])` on, with everything the merge needs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PartialLog {
    /// [`PARTIAL_FORMAT`].
    pub format: String,
    /// The vmaf_rs version that wrote it.
    pub version: String,
    /// [`Engine::fingerprint`] of the scoring engine: parts merge only when theirs are equal.
    pub fingerprint: String,
    /// The scoring configuration.
    pub config: RunConfig,
    /// The libvmaf kernel family computed (`auto` resolved on the host that scored it).
    pub libvmaf_isa_computed: String,
    /// The frames scored, `[first, end)`, title indices.
    pub range: [u64; 2],
    /// The context frames read before them, `[first, end)` (empty at the title's start or when
    /// no extractor reads previous frames).
    pub context: [u64; 2],
    /// The title's frame count, when the caller knew it (the merge checks the parts reach it).
    pub title_frames: Option<u64>,
    /// Whether the input ended before the requested end (then this part ends the title).
    pub input_ended: bool,
    /// Seconds the engine computed.
    pub elapsed_seconds: f64,
    /// Log names of the spatial row's slots.
    pub slots: Vec<String>,
    /// The frames, in order.
    pub frames: Vec<PartFrame>,
    /// Every extractor instance's integer totals over the frames scored (aggregates).
    pub totals: Vec<Vec<u64>>,
}

/// Parses a segment range `A:B` (frames A to B-1 of the title) or `A:` (A to the end); `what`
/// names the option in errors (`--segment`, `segment`).
pub fn parse_range(what: &str, s: &str) -> Result<(u64, Option<u64>)> {
    let bad = || {
        Error::InvalidOption(format!(
            "{what} {s}: expected A:B (frames A to B-1 of the title) or A: (A to the end)"
        ))
    };
    let (a, b) = s.split_once(':').ok_or_else(bad)?;
    let a: u64 = a.trim().parse().map_err(|_| bad())?;
    let b = match b.trim() {
        "" => None,
        b => Some(b.parse::<u64>().map_err(|_| bad())?),
    };
    if b.is_some_and(|b| b <= a) {
        return Err(Error::InvalidOption(format!(
            "{what} {s}: the segment holds no frames (B must exceed A)"
        )));
    }
    Ok((a, b))
}

/// Where a segment lies in its title.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SegmentInfo {
    /// First scored frame.
    pub start: u64,
    /// First context frame (`start` when none).
    pub context_start: u64,
    /// The title's frame count, if known.
    pub title_frames: Option<u64>,
    /// Whether the input ended before the requested end.
    pub input_ended: bool,
}

/// A value as a partial log writes it: Rust's shortest decimal that parses back to the same
/// `f64` (JSON numbers are not read back exactly by every parser, and cannot hold NaN), or
/// `nan`, `-nan`, `inf`, `-inf` (the sign of a NaN is kept: logs print it).
pub fn encode_value(v: f64) -> String {
    if v.is_nan() {
        if v.is_sign_negative() { "-nan" } else { "nan" }.to_string()
    } else if v.is_infinite() {
        if v < 0.0 { "-inf" } else { "inf" }.to_string()
    } else {
        format!("{v:?}")
    }
}

/// Reads a value [`encode_value`] wrote.
pub fn decode_value(s: &str) -> Option<f64> {
    match s {
        "nan" => Some(f64::NAN),
        "-nan" => Some(-f64::NAN),
        "inf" => Some(f64::INFINITY),
        "-inf" => Some(f64::NEG_INFINITY),
        _ => s.parse().ok().filter(|v: &f64| v.is_finite()),
    }
}

impl PartialLog {
    /// The partial log of a flushed segment engine ([`Engine::begin_segment`]) that scored
    /// with `config`.
    pub fn from_engine(engine: &Engine, config: &RunConfig, info: SegmentInfo) -> Result<Self> {
        if !engine.is_flushed() {
            return Err(Error::State("partial log of an engine not flushed".into()));
        }
        let frames: Vec<PartFrame> = engine
            .segment_rows()
            .map(|(frame, row)| PartFrame {
                frame,
                values: row.iter().map(|&v| encode_value(v)).collect(),
            })
            .collect();
        let end = frames.last().map_or(info.start, |f| f.frame + 1);
        Ok(PartialLog {
            format: PARTIAL_FORMAT.to_string(),
            version: concat!("vmaf_rs-", env!("CARGO_PKG_VERSION")).to_string(),
            fingerprint: engine.fingerprint(),
            config: config.clone(),
            libvmaf_isa_computed: engine.libvmaf_isa().to_string(),
            range: [info.start, end],
            context: [info.context_start, info.start],
            title_frames: info.title_frames,
            input_ended: info.input_ended,
            elapsed_seconds: engine.elapsed_seconds(),
            slots: engine.spatial_slot_names().to_vec(),
            frames,
            totals: engine.instance_totals(),
        })
    }

    /// Reads a partial log file.
    pub fn read(path: &Path) -> Result<Self> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| Error::io(format!("cannot read part {}", path.display()), e))?;
        Self::parse(&text, &path.display().to_string())
    }

    /// Parses a partial log; `name` names it in errors.
    pub fn parse(text: &str, name: &str) -> Result<Self> {
        let log: PartialLog = serde_json::from_str(text).map_err(|e| {
            Error::InvalidOption(format!(
                "part {name} is not a vmaf_rs partial log ({e}); write parts with \
                 `vmaf-rs --segment A:B -o part.json`"
            ))
        })?;
        if log.format != PARTIAL_FORMAT {
            return Err(Error::InvalidOption(format!(
                "part {name} has format '{}', this vmaf_rs reads '{PARTIAL_FORMAT}'; score the \
                 segments again with this version",
                log.format
            )));
        }
        Ok(log)
    }

    /// Writes the partial log as JSON.
    pub fn write(&self, w: &mut dyn std::io::Write) -> std::io::Result<()> {
        serde_json::to_writer_pretty(&mut *w, self)?;
        writeln!(w)
    }
}

/// Merges named partial logs that tile a title into a flushed engine holding the whole title's
/// scores, as if it had scored the title in one run: write its log with
/// [`crate::report::write_log`]. Refuses, naming the part, parts of different configurations
/// (fingerprints), gaps, overlaps, a missing last part (when the title's length is known) and
/// malformed rows.
pub fn merge(parts: &[(String, PartialLog)]) -> Result<Engine> {
    let Some((first_name, first)) = parts.first() else {
        return Err(Error::InvalidOption(
            "merge: no parts given (vmaf-rs merge part*.json -o title.json)".into(),
        ));
    };
    let mut cfg = first.config.engine_config()?;
    let requested: LibvmafIsaMode = first.config.libvmaf_isa.parse()?;
    let computed = match first.libvmaf_isa_computed.parse::<LibvmafIsaMode>()? {
        LibvmafIsaMode::Fixed(isa) => isa,
        LibvmafIsaMode::Auto => {
            return Err(Error::InvalidOption(format!(
                "part {first_name}: libvmaf_isa_computed must name a family, not auto"
            )))
        }
    };
    cfg.libvmaf_isa = requested;
    let mut engine = Engine::new(cfg)?;
    engine.set_libvmaf_isa(computed);
    let fingerprint = engine.fingerprint();
    if fingerprint != first.fingerprint {
        return Err(Error::Mismatch(format!(
            "part {first_name}: its configuration rebuilt here has fingerprint {fingerprint}, \
             the part says {} (a model file differs from the one it was scored with, or another \
             vmaf_rs version scored it); merge where the same models are, with the same vmaf_rs",
            first.fingerprint
        )));
    }
    for (name, p) in &parts[1..] {
        if p.fingerprint != first.fingerprint {
            let mut why = first.config.differences(&p.config);
            if p.libvmaf_isa_computed != first.libvmaf_isa_computed {
                why.push(format!(
                    "libvmaf kernels computed {} vs {}",
                    first.libvmaf_isa_computed, p.libvmaf_isa_computed
                ));
            }
            if p.version != first.version {
                why.push(format!("version {} vs {}", first.version, p.version));
            }
            if why.is_empty() {
                why.push("model contents".into());
            }
            return Err(Error::Mismatch(format!(
                "part {name} was scored with a different configuration than {first_name} \
                 (fingerprint {} vs {}: {}); score every segment with the same options",
                p.fingerprint,
                first.fingerprint,
                why.join("; ")
            )));
        }
    }

    // Title order; then the parts must tile [0, end) exactly.
    let mut order: Vec<&(String, PartialLog)> = parts.iter().collect();
    order.sort_by_key(|(_, p)| (p.range[0], p.range[1]));
    let mut next = 0u64;
    let mut prev: Option<&str> = None;
    for (name, p) in &order {
        let [a, b] = p.range;
        if b <= a {
            return Err(Error::InvalidOption(format!(
                "part {name} holds no frames (range [{a}, {b}))"
            )));
        }
        if a > next {
            return Err(Error::InvalidOption(match prev {
                None => format!(
                    "frames [0, {a}) are in no part: the first part, {name}, starts at frame {a}; \
                     score the missing segment"
                ),
                Some(pn) => format!(
                    "gap: frames [{next}, {a}) are in no part (between {pn}, which ends at \
                     {next}, and {name}, which starts at {a}); score the missing segment"
                ),
            }));
        }
        if a < next {
            return Err(Error::InvalidOption(format!(
                "overlap: {name} [{a}, {b}) and {} both hold frames [{a}, {})",
                prev.unwrap_or("?"),
                next.min(b)
            )));
        }
        next = b;
        prev = Some(name);
    }
    let end = next;
    for (name, p) in &order {
        if let Some(n) = p.title_frames.filter(|&n| n != end) {
            return Err(Error::InvalidOption(format!(
                "part {name} says the title has {n} frames, the parts cover [0, {end}){}",
                if n > end {
                    format!("; frames [{end}, {n}) are missing")
                } else {
                    String::new()
                }
            )));
        }
        if p.input_ended && p.range[1] != end {
            return Err(Error::InvalidOption(format!(
                "part {name}: its input ended at frame {}, yet other parts hold later frames \
                 (to {end}); its input was cut short",
                p.range[1]
            )));
        }
    }

    // Every frame in title order through the engine's own temporal stages and models.
    let slots = engine.spatial_slot_names().to_vec();
    let mut row = vec![0.0; slots.len()];
    let mut elapsed = 0.0;
    for (name, p) in &order {
        if p.slots != slots {
            return Err(Error::Mismatch(format!(
                "part {name}: its row slots {:?} are not this configuration's {slots:?}",
                p.slots
            )));
        }
        if p.frames.len() as u64 != p.range[1] - p.range[0] {
            return Err(Error::InvalidOption(format!(
                "part {name}: range [{}, {}) but {} frames",
                p.range[0],
                p.range[1],
                p.frames.len()
            )));
        }
        for (k, f) in p.frames.iter().enumerate() {
            let want = p.range[0] + k as u64;
            if f.frame != want || f.values.len() != slots.len() {
                return Err(Error::InvalidOption(format!(
                    "part {name}: frame entry {k} is frame {} with {} values, expected frame \
                     {want} with {}",
                    f.frame,
                    f.values.len(),
                    slots.len()
                )));
            }
            for (dst, v) in row.iter_mut().zip(&f.values) {
                *dst = decode_value(v).ok_or_else(|| {
                    Error::InvalidOption(format!("part {name}: frame {want}: bad value '{v}'"))
                })?;
            }
            engine.push_spatial(&row)?;
        }
        let n_inst = engine.instances().count();
        if p.totals.len() != n_inst {
            return Err(Error::InvalidOption(format!(
                "part {name}: totals for {} extractor instances, the configuration has {n_inst}",
                p.totals.len()
            )));
        }
        for (i, t) in p.totals.iter().enumerate() {
            engine.add_totals(i, t);
        }
        elapsed += p.elapsed_seconds;
    }
    engine.add_elapsed(elapsed);
    engine.flush()?;
    Ok(engine)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_read_back_exactly() {
        let vals = [
            0.0,
            -0.0,
            1.0 / 3.0,
            0.1 + 0.2,
            f64::MIN_POSITIVE,
            5e-324,
            f64::MAX,
            -1.7976931348623157e308,
            97.42889018549292,
            f64::INFINITY,
            f64::NEG_INFINITY,
        ];
        for v in vals {
            let back = decode_value(&encode_value(v)).unwrap();
            assert_eq!(back.to_bits(), v.to_bits(), "{v:e}");
        }
        for nan in [f64::NAN, -f64::NAN] {
            let back = decode_value(&encode_value(nan)).unwrap();
            assert!(back.is_nan() && back.is_sign_negative() == nan.is_sign_negative());
        }
        assert_eq!(decode_value("NaN"), None);
        assert_eq!(decode_value("1e999"), None);
    }
}
