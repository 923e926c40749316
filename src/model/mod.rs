//! libvmaf JSON models: loading (built-in or from a file), feature-option overloads, prediction
//! bit-identical to libvmaf, pooling, and the FFmpeg filter's `model=` / `feature=` option
//! grammars.
//!
//! # Model names
//!
//! A model's name is the key of its score in the logs. As in libvmaf
//! (`vmaf_model_generate_name`) and FFmpeg's `libvmaf` filter, it is the `name=` given in the
//! `model` option, and otherwise **`vmaf`** — whatever the version, and for every unnamed model.
//! With several unnamed models all are called `vmaf`; libvmaf then stores only one series under
//! that name, the first model's (the later models find a `vmaf` score already present and reuse
//! it), so the log has a single `vmaf` column holding the first model's scores. Give each model a
//! `name=` to log them all.
//!
//! # Prediction
//!
//! [`Model::predict`] follows libvmaf's `vmaf_predict_score_at_index` step by step, in double
//! precision and in the same order of operations: each feature is normalised
//! (`slope * x + intercept`, for `linear_rescale`), the libsvm model is evaluated as libsvm's
//! `svm_predict` does (`k_function` with the same summation order, `Σ coef·k − rho`), the result is
//! denormalised (`(y − intercept) / slope`), transformed (polynomial `p0 + p1·y + p2·y·y`,
//! piecewise-linear `knots`, then `out_lte_in` / `out_gte_in` rectification) when the transform is
//! enabled, and clipped to `score_clip` unless clipping is disabled.
#![forbid(unsafe_code)]

mod cnum;
pub mod collection;
mod json;
mod option;
pub mod pool;
mod svm;

use std::path::Path;
use std::sync::OnceLock;

use crate::error::{Error, Result};
use json::Json;

pub use cnum::{c_fmt_g, normalize_numeric};
pub use option::{
    parse_feature_option, parse_model_option, FeatureSpec, Loaded, ModelSource, ModelSpec,
    DEFAULT_MODEL_OPTION,
};
pub use pool::{pool, PoolMethod, PoolStats};

/// The name a model gets when none is given (libvmaf's `vmaf_model_generate_name`).
pub const DEFAULT_MODEL_NAME: &str = "vmaf";

/// The built-in model used when none is requested.
pub const DEFAULT_MODEL_VERSION: &str = "vmaf_v0.6.1";

const VMAF_V061: &str = include_str!("builtin/vmaf_v0.6.1.json");
const VMAF_V061_NEG: &str = include_str!("builtin/vmaf_v0.6.1neg.json");
const VMAF_4K_V061: &str = include_str!("builtin/vmaf_4k_v0.6.1.json");
const VMAF_FLOAT_V061: &str = include_str!("builtin/vmaf_float_v0.6.1.json");
const VMAF_FLOAT_V061_NEG: &str = include_str!("builtin/vmaf_float_v0.6.1neg.json");
const VMAF_FLOAT_4K_V061: &str = include_str!("builtin/vmaf_float_4k_v0.6.1.json");
const VMAF_V1_3D0H: &str = include_str!("builtin/vmaf_v1.0.16_3d0h.json");
const VMAF_V1_5D0H: &str = include_str!("builtin/vmaf_v1.0.16_5d0h.json");
const VMAF_V1_1D5H_2160: &str = include_str!("builtin/vmaf_v1.0.16_1d5h_2160.json");
const VMAF_V1_3D0H_2160: &str = include_str!("builtin/vmaf_v1.0.16_3d0h_2160.json");
const VMAF_V1_HFR_3D0H: &str = include_str!("builtin/vmaf_v1.0.16_hfr_3d0h.json");
const VMAF_V1_HFR_5D0H: &str = include_str!("builtin/vmaf_v1.0.16_hfr_5d0h.json");
const VMAF_V1_HFR_1D5H_2160: &str = include_str!("builtin/vmaf_v1.0.16_hfr_1d5h_2160.json");
const VMAF_V1_HFR_3D0H_2160: &str = include_str!("builtin/vmaf_v1.0.16_hfr_3d0h_2160.json");

static BUILTIN_VERSIONS: [&str; 15] = [
    "vmaf_v0.6.1",
    "vmaf_v0.6.1neg",
    "vmaf_4k_v0.6.1",
    "vmaf_4k_v0.6.1neg",
    "vmaf_float_v0.6.1",
    "vmaf_float_v0.6.1neg",
    "vmaf_float_4k_v0.6.1",
    "vmaf_v1.0.16_3d0h",
    "vmaf_v1.0.16_5d0h",
    "vmaf_v1.0.16_1d5h_2160",
    "vmaf_v1.0.16_3d0h_2160",
    "vmaf_v1.0.16_hfr_3d0h",
    "vmaf_v1.0.16_hfr_5d0h",
    "vmaf_v1.0.16_hfr_1d5h_2160",
    "vmaf_v1.0.16_hfr_3d0h_2160",
];

/// The versions [`Model::builtin`] knows, default first.
pub fn builtin_versions() -> &'static [&'static str] {
    &BUILTIN_VERSIONS
}

/// libvmaf reads at most this many features (and slopes, intercepts, option dictionaries).
const MAX_FEATURE_COUNT: usize = 64;
/// libvmaf reads at most this many score-transform knots.
const MAX_KNOT_COUNT: usize = 10;

/// One input feature of a model.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelFeature {
    /// Full name as in the model, e.g. `VMAF_integer_feature_vif_scale0_score`.
    pub name: String,
    /// Options for the extractor computing it: the model's `feature_opts_dicts` entry plus any
    /// overloads, in libvmaf's dictionary order. Values are as libvmaf stores them: JSON numbers
    /// and numeric overload values normalised through `strtof` and `%g` (`1.0` → `1`), held as
    /// JSON integers where that text is an integer, as JSON floats otherwise (so
    /// `Value::to_string` parses back to the same number); booleans as JSON booleans; other
    /// strings as JSON strings.
    pub opts: Vec<(String, serde_json::Value)>,
}

/// libvmaf's model types; all predict alike through [`Model::predict`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModelType {
    /// No `model_type` in the file.
    Unknown,
    /// `LIBSVMNUSVR`.
    SvmNuSvr,
    /// `BOOTSTRAP_LIBSVMNUSVR`.
    BootstrapSvmNuSvr,
    /// `RESIDUEBOOTSTRAP_LIBSVMNUSVR`.
    ResidueBootstrapSvmNuSvr,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Norm {
    None,
    LinearRescale,
}

#[derive(Debug, Clone, PartialEq, Default)]
struct Transform {
    /// The model's own `enabled` (false when absent).
    enabled: bool,
    p0: Option<f64>,
    p1: Option<f64>,
    p2: Option<f64>,
    /// `Some` when the model has a `knots` list (possibly empty or malformed, as libvmaf).
    knots: Option<Vec<(f64, f64)>>,
    out_lte_in: bool,
    out_gte_in: bool,
}

/// A VMAF model (libvmaf's `VmafModel`): features with their normalisation, a libsvm regression,
/// and the score transform and clip.
#[derive(Debug, Clone, PartialEq)]
pub struct Model {
    name: String,
    model_type: ModelType,
    features: Vec<ModelFeature>,
    norm: Norm,
    slope: f64,
    intercept: f64,
    feature_slope: Vec<f64>,
    feature_intercept: Vec<f64>,
    score_clip: Option<(f64, f64)>,
    transform: Option<Transform>,
    chroma_correction: Option<f64>,
    svm: svm::Svm,
    disable_clip: bool,
    enable_transform: bool,
    disable_transform: bool,
}

fn model_err(context: &str, msg: impl std::fmt::Display) -> Error {
    Error::Model(format!("{context}: {msg}"))
}

impl Model {
    /// A built-in model by version (see [`builtin_versions`]): `vmaf_v0.6.1` (the default),
    /// `vmaf_v0.6.1neg`, `vmaf_4k_v0.6.1`, `vmaf_4k_v0.6.1neg`, the float models
    /// `vmaf_float_v0.6.1`, `vmaf_float_v0.6.1neg`, `vmaf_float_4k_v0.6.1`, and the eight v1
    /// models `vmaf_v1.0.16_{3d0h,5d0h,1d5h_2160,3d0h_2160}` and their `_hfr` variants. Named
    /// `vmaf`.
    pub fn builtin(version: &str) -> Result<Model> {
        let (text, neg) = match version {
            "vmaf_v0.6.1" => (VMAF_V061, false),
            "vmaf_v0.6.1neg" => (VMAF_V061_NEG, false),
            "vmaf_4k_v0.6.1" => (VMAF_4K_V061, false),
            "vmaf_4k_v0.6.1neg" => (VMAF_4K_V061, true),
            "vmaf_float_v0.6.1" => (VMAF_FLOAT_V061, false),
            "vmaf_float_v0.6.1neg" => (VMAF_FLOAT_V061_NEG, false),
            "vmaf_float_4k_v0.6.1" => (VMAF_FLOAT_4K_V061, false),
            "vmaf_v1.0.16_3d0h" => (VMAF_V1_3D0H, false),
            "vmaf_v1.0.16_5d0h" => (VMAF_V1_5D0H, false),
            "vmaf_v1.0.16_1d5h_2160" => (VMAF_V1_1D5H_2160, false),
            "vmaf_v1.0.16_3d0h_2160" => (VMAF_V1_3D0H_2160, false),
            "vmaf_v1.0.16_hfr_3d0h" => (VMAF_V1_HFR_3D0H, false),
            "vmaf_v1.0.16_hfr_5d0h" => (VMAF_V1_HFR_5D0H, false),
            "vmaf_v1.0.16_hfr_1d5h_2160" => (VMAF_V1_HFR_1D5H_2160, false),
            "vmaf_v1.0.16_hfr_3d0h_2160" => (VMAF_V1_HFR_3D0H_2160, false),
            _ => {
                return Err(Error::Model(format!(
                    "no such built-in model: '{version}' (built-in versions: {}, and the bootstrap \
                     collections {}; use path= for a model file)",
                    BUILTIN_VERSIONS.join(", "),
                    collection::BUILTIN_COLLECTIONS.join(", ")
                )))
            }
        };
        // Parsed once per process: every graph (FFmpeg builds probe graphs too) and every
        // model of a request reuses it.
        type Parsed = std::result::Result<Model, String>;
        static PARSED: [OnceLock<Parsed>; BUILTIN_VERSIONS.len()] =
            [const { OnceLock::new() }; BUILTIN_VERSIONS.len()];
        let slot = BUILTIN_VERSIONS
            .iter()
            .position(|v| *v == version)
            .expect("matched above");
        PARSED[slot]
            .get_or_init(|| {
                let mut m = Self::parse(
                    text,
                    DEFAULT_MODEL_NAME,
                    &format!("built-in model {version}"),
                )
                .map_err(|e| e.to_string())?;
                if neg {
                    m.apply_neg_overlay().map_err(|e| e.to_string())?;
                }
                Ok(m)
            })
            .clone()
            .map_err(Error::Internal)
    }

    /// `vmaf_4k_v0.6.1neg` is `vmaf_4k_v0.6.1` with the NEG `feature_opts_dicts` of
    /// `vmaf_v0.6.1neg` (see `src/model/builtin/PROVENANCE.md`).
    fn apply_neg_overlay(&mut self) -> Result<()> {
        for f in &mut self.features {
            let key = match f.name.as_str() {
                "VMAF_integer_feature_adm2_score" => "adm_enhn_gain_limit",
                "VMAF_integer_feature_vif_scale0_score"
                | "VMAF_integer_feature_vif_scale1_score"
                | "VMAF_integer_feature_vif_scale2_score"
                | "VMAF_integer_feature_vif_scale3_score" => "vif_enhn_gain_limit",
                "VMAF_integer_feature_motion2_score" => continue,
                other => {
                    return Err(Error::Internal(format!(
                        "unexpected feature {other} in the 4K model"
                    )))
                }
            };
            // As the JSON number 1.0 reads: strtof, %g → "1".
            f.opts = vec![(key.to_string(), opt_value(&normalize_numeric("1.0")))];
        }
        Ok(())
    }

    /// Loads a libvmaf JSON model file (`{"model_dict": {...}}`, at most [`MAX_MODEL_BYTES`]).
    /// Named `vmaf`.
    pub fn from_path(path: &Path) -> Result<Model> {
        let context = format!("model file '{}'", path.display());
        let text = read_capped(path, MAX_MODEL_BYTES).map_err(|e| model_err(&context, e))?;
        let text = String::from_utf8(text).map_err(|_| model_err(&context, "not UTF-8 text"))?;
        if path.extension().is_some_and(|e| e == "pkl") {
            return Err(model_err(
                &context,
                "pkl models are not supported (libvmaf dropped them too); use the JSON model",
            ));
        }
        Self::parse(&text, DEFAULT_MODEL_NAME, &context)
    }

    /// Loads a model file that may also be a bootstrap collection (libvmaf's CLI tries
    /// `vmaf_model_load_from_path`, then `vmaf_model_collection_load_from_path`).
    pub fn from_path_any(path: &Path) -> Result<Loaded> {
        let context = format!("model file '{}'", path.display());
        let text = read_capped(path, MAX_MODEL_BYTES).map_err(|e| model_err(&context, e))?;
        let text = String::from_utf8(text).map_err(|_| model_err(&context, "not UTF-8 text"))?;
        if collection::Bootstrap::is_collection_text(&text) {
            return collection::Bootstrap::parse(&text, DEFAULT_MODEL_NAME, &context)
                .map(Loaded::Collection);
        }
        Self::from_path(path).map(Loaded::Model)
    }

    /// Parses a libvmaf JSON model from text; `name` becomes its name.
    pub fn from_json_str(text: &str, name: &str) -> Result<Model> {
        Self::parse(text, name, &format!("model '{name}'"))
    }

    fn parse(text: &str, name: &str, context: &str) -> Result<Model> {
        let doc = json::parse(text).map_err(|e| model_err(context, format!("bad JSON: {e}")))?;
        let Json::Obj(top) = doc else {
            return Err(model_err(context, "the model is not a JSON object"));
        };
        if collection::is_collection(&top) {
            return Err(model_err(
                context,
                "this is a bootstrap model collection; load it with ModelSpec::load_set \
                 (model=path=… or version=… in the filter and the CLI do)",
            ));
        }
        Self::from_doc(&top, name, context)
    }

    /// A model from its parsed top-level object (`{"model_dict": …}`).
    fn from_doc(top: &[(String, Json)], name: &str, context: &str) -> Result<Model> {
        let mut b = Builder::default();
        let mut found = false;
        for (k, v) in top {
            if k == "model_dict" {
                b.model_dict(v).map_err(|e| model_err(context, e))?;
                found = true;
            }
        }
        if !found {
            return Err(model_err(
                context,
                "no \"model_dict\" (a bootstrap model collection or not a VMAF model?)",
            ));
        }
        b.finish(name).map_err(|e| model_err(context, e))
    }

    /// Everything that decides the model's scores, as text (every number exactly, the support
    /// vectors included), for configuration fingerprints.
    pub fn fingerprint_text(&self) -> String {
        format!("{self:?}|{:?}|{:?}", self.svm.coef, self.svm.sv)
    }

    /// The model's name: the key of its scores in the logs.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Renames the model.
    pub fn set_name(&mut self, name: &str) {
        self.name = name.to_string();
    }

    /// The model's type.
    pub fn model_type(&self) -> ModelType {
        self.model_type
    }

    /// The features [`Model::predict`] takes, in order.
    pub fn features(&self) -> &[ModelFeature] {
        &self.features
    }

    /// Sets a flag as libvmaf's `VmafModelFlags`: `disable_clip` (no `score_clip`),
    /// `enable_transform` (apply the `score_transform` even if the model does not enable it; no
    /// effect on a model without one, such as the 4K models), `disable_transform` (never apply
    /// it).
    pub fn set_flag(&mut self, key: &str, value: bool) -> Result<()> {
        match key {
            "disable_clip" => self.disable_clip = value,
            "enable_transform" => self.enable_transform = value,
            "disable_transform" => self.disable_transform = value,
            _ => {
                return Err(Error::InvalidOption(format!(
                    "unknown model flag '{key}' (known: disable_clip, enable_transform, \
                     disable_transform)"
                )))
            }
        }
        Ok(())
    }

    /// `vmaf_model_feature_overload`: for every model feature computed by the extractor named
    /// `feature` (e.g. `vif`, `adm`, `motion`), sets option `key` to `value` in its options,
    /// replacing an existing value in place or appending. A numeric `value` is normalised as
    /// libvmaf does (`1.0` → `1`). Features of other extractors, and features no registered
    /// extractor provides, are left alone; an extractor name matching nothing is not an error
    /// (as in libvmaf). Whether `key` is a valid option is checked when the extractor is
    /// configured.
    pub fn overload_feature(&mut self, feature: &str, key: &str, value: &str) -> Result<()> {
        let v = opt_value(&normalize_numeric(value));
        for f in &mut self.features {
            let Ok(def) = crate::feature::find_by_provided(&f.name) else {
                continue;
            };
            if def.name != feature {
                continue;
            }
            match f.opts.iter_mut().find(|(k, _)| k == key) {
                Some(slot) => slot.1 = v.clone(),
                None => f.opts.push((key.to_string(), v.clone())),
            }
        }
        Ok(())
    }

    /// The model's score for one frame, from that frame's feature values in [`Model::features`]
    /// order; bit-identical to libvmaf. Panics if `features` has the wrong length (a caller bug).
    pub fn predict(&self, features: &[f64]) -> f64 {
        self.finish(self.predict_raw(features))
    }

    /// The score before the score transform and the clip (libvmaf's prediction with
    /// `VMAF_MODEL_FLAG_DISABLE_CLIP | VMAF_MODEL_FLAG_DISABLE_TRANSFORM`, what bootstrap
    /// statistics are computed on).
    pub fn predict_raw(&self, features: &[f64]) -> f64 {
        assert_eq!(
            features.len(),
            self.features.len(),
            "model '{}' takes {} features",
            self.name,
            self.features.len()
        );
        // Per-frame hot path: the libsvm nodes live on the stack for any usual model size.
        const STACK: usize = 32;
        let mut stack = [(0i32, 0f64); STACK];
        let mut heap = Vec::new();
        let x: &mut [(i32, f64)] = if features.len() <= STACK {
            &mut stack[..features.len()]
        } else {
            heap.resize(features.len(), (0, 0.0));
            &mut heap
        };
        for (i, (slot, &v)) in x.iter_mut().zip(features).enumerate() {
            *slot = (i as i32 + 1, self.normalize(i, v));
        }
        if let Some(param) = self.chroma_correction {
            self.correct_chroma(x, param);
        }
        let mut y = self.svm.predict(x);
        if self.norm == Norm::LinearRescale {
            y = (y - self.intercept) / self.slope;
        }
        y
    }

    /// Applies the score transform (when enabled) and the clip (unless disabled) to a raw score,
    /// as libvmaf's `transform` then `clip` with the model's own flags.
    pub fn finish(&self, mut y: f64) -> f64 {
        if let Some(t) = &self.transform {
            if (t.enabled || self.enable_transform) && !self.disable_transform {
                y = t.apply(y);
            }
        }
        if let Some((min, max)) = self.score_clip {
            if !self.disable_clip {
                y = if y < min { min } else { y };
                y = if y > max { max } else { y };
            }
        }
        y
    }

    fn normalize(&self, i: usize, v: f64) -> f64 {
        match self.norm {
            Norm::None => v,
            Norm::LinearRescale => self.feature_slope[i] * v + self.feature_intercept[i],
        }
    }

    fn denormalize(&self, i: usize, v: f64) -> f64 {
        match self.norm {
            Norm::None => v,
            Norm::LinearRescale => (v - self.feature_intercept[i]) / self.feature_slope[i],
        }
    }

    /// libvmaf's `post_process_feature_from_another(…, 0.0, "adm3", "speed_chroma")`: when the
    /// (denormalised) `speed_chroma` feature is exactly 0, replace it by
    /// `−param · adm3 + param`. (libvmaf skips prediction when the parameter is 0; we then skip
    /// only the correction.) Load checks that each substring names exactly one feature.
    fn correct_chroma(&self, x: &mut [(i32, f64)], param: f64) {
        if param == 0.0 {
            return;
        }
        let find = |s: &str| self.features.iter().position(|f| f.name.contains(s));
        let (Some(gi), Some(di)) = (find("adm3"), find("speed_chroma")) else {
            return;
        };
        let guiding = self.denormalize(gi, x[gi].1);
        let guided = self.denormalize(di, x[di].1);
        if guided != 0.0 {
            return;
        }
        let corrected = (-param * guiding) + param;
        x[di].1 = self.normalize(di, corrected);
    }
}

impl Transform {
    /// libvmaf's `transform()` for an enabled transform.
    fn apply(&self, y_in: f64) -> f64 {
        let mut y_out = if self.p0.is_some() || self.p1.is_some() || self.p2.is_some() {
            let mut o = 0.0;
            if let Some(p0) = self.p0 {
                o += p0;
            }
            if let Some(p1) = self.p1 {
                o += p1 * y_in;
            }
            if let Some(p2) = self.p2 {
                o += p2 * y_in * y_in;
            }
            o
        } else {
            y_in
        };
        if let Some(knots) = &self.knots {
            y_out = piecewise_linear(y_out, knots);
        }
        if self.out_lte_in && y_out > y_in {
            y_out = y_in;
        }
        if self.out_gte_in && y_out < y_in {
            y_out = y_in;
        }
        y_out
    }
}

/// libvmaf's `find_linear_function_parameters` for points already known to be increasing.
fn line_through(p1: (f64, f64), p2: (f64, f64)) -> (f64, f64) {
    if p1.0 == 0.0 {
        let beta = p1.1;
        ((p2.1 - beta) / p2.0, beta)
    } else {
        let alpha = (p2.1 - p1.1) / (p2.0 - p1.0);
        (alpha, p1.1 - (p1.0 * alpha))
    }
}

/// libvmaf's `piecewise_linear_mapping`, including its handling of malformed knot lists (fewer
/// than two knots: `x` unchanged; a non-increasing segment: the value computed so far).
fn piecewise_linear(x: f64, knots: &[(f64, f64)]) -> f64 {
    if knots.len() <= 1 {
        return x;
    }
    let n_seg = knots.len() - 1;
    let mut y = 0.0;
    for idx in 0..n_seg {
        let (k0, k1) = (knots[idx], knots[idx + 1]);
        if !(k0.0 < k1.0 && k0.1 <= k1.1) {
            return y;
        }
        let in_seg = k0.0 <= x && x <= k1.0;
        let below = idx == 0 && x < k0.0;
        let above = idx == n_seg - 1 && x > k1.0;
        if k0.1 == k1.1 {
            if in_seg || below || above {
                y = k0.1;
            }
        } else {
            let (slope, offset) = line_through(k0, k1);
            if in_seg || below || above {
                y = slope * x + offset;
            }
        }
    }
    y
}

/// The JSON value a normalised option text is held as (see [`ModelFeature::opts`]).
fn opt_value(text: &str) -> serde_json::Value {
    if let Ok(i) = text.parse::<i64>() {
        return serde_json::Value::from(i);
    }
    if let Ok(f) = text.parse::<f64>() {
        if let Some(n) = serde_json::Number::from_f64(f) {
            return serde_json::Value::Number(n);
        }
    }
    serde_json::Value::String(text.to_string())
}

/// Accumulates a `model_dict` as libvmaf's `parse_model_dict` does.
#[derive(Default)]
struct Builder {
    model_type: Option<ModelType>,
    norm: Option<Norm>,
    names: Vec<String>,
    opts: Vec<Vec<(String, serde_json::Value)>>,
    slopes: Option<Vec<f64>>,
    intercepts: Option<Vec<f64>>,
    score_clip: Option<(f64, f64)>,
    transform: Option<Transform>,
    chroma_correction: Option<f64>,
    svm: Option<svm::Svm>,
}

fn num(v: &Json, what: &str) -> std::result::Result<f64, String> {
    v.as_f64()
        .ok_or_else(|| format!("{what} must be a number, not {}", v.kind()))
}

fn arr<'a>(v: &'a Json, what: &str) -> std::result::Result<&'a [Json], String> {
    match v {
        Json::Arr(a) => Ok(a),
        _ => Err(format!("{what} must be an array, not {}", v.kind())),
    }
}

fn string<'a>(v: &'a Json, what: &str) -> std::result::Result<&'a str, String> {
    match v {
        Json::Str(s) => Ok(s),
        _ => Err(format!("{what} must be a string, not {}", v.kind())),
    }
}

/// `slopes` / `intercepts`: the model's value, then one per feature.
fn numbers(v: &Json, what: &str) -> std::result::Result<Vec<f64>, String> {
    let a = arr(v, what)?;
    if a.is_empty() {
        return Err(format!("{what} is empty"));
    }
    if a.len() > MAX_FEATURE_COUNT + 1 {
        return Err(format!(
            "{what} has more than {MAX_FEATURE_COUNT} feature entries"
        ));
    }
    a.iter().map(|x| num(x, what)).collect()
}

impl Builder {
    fn model_dict(&mut self, v: &Json) -> std::result::Result<(), String> {
        let Json::Obj(members) = v else {
            return Err(format!("model_dict must be an object, not {}", v.kind()));
        };
        for (key, v) in members {
            match key.as_str() {
                "score_transform" => self.transform = Some(parse_transform(v)?),
                "model_type" => {
                    self.model_type = Some(match string(v, "model_type")? {
                        "LIBSVMNUSVR" => ModelType::SvmNuSvr,
                        "BOOTSTRAP_LIBSVMNUSVR" => ModelType::BootstrapSvmNuSvr,
                        "RESIDUEBOOTSTRAP_LIBSVMNUSVR" => ModelType::ResidueBootstrapSvmNuSvr,
                        other => {
                            return Err(format!(
                                "unsupported model_type '{other}' (supported: LIBSVMNUSVR, \
                                 BOOTSTRAP_LIBSVMNUSVR, RESIDUEBOOTSTRAP_LIBSVMNUSVR)"
                            ))
                        }
                    })
                }
                "norm_type" => {
                    self.norm = Some(match string(v, "norm_type")? {
                        "linear_rescale" => Norm::LinearRescale,
                        "none" => Norm::None,
                        other => {
                            return Err(format!(
                                "unsupported norm_type '{other}' (supported: linear_rescale, none)"
                            ))
                        }
                    })
                }
                "score_clip" => {
                    let a = arr(v, "score_clip")?;
                    if a.len() < 2 {
                        return Err("score_clip must be [min, max]".into());
                    }
                    self.score_clip = Some((num(&a[0], "score_clip")?, num(&a[1], "score_clip")?));
                }
                "chroma_correction_parameter" => {
                    self.chroma_correction = Some(num(v, "chroma_correction_parameter")?)
                }
                "slopes" => self.slopes = Some(numbers(v, "slopes")?),
                "intercepts" => self.intercepts = Some(numbers(v, "intercepts")?),
                "feature_names" => {
                    let a = arr(v, "feature_names")?;
                    if a.len() > MAX_FEATURE_COUNT {
                        return Err(format!("more than {MAX_FEATURE_COUNT} features"));
                    }
                    self.names = a
                        .iter()
                        .map(|n| string(n, "a feature name").map(str::to_string))
                        .collect::<std::result::Result<_, _>>()?;
                }
                "feature_opts_dicts" => {
                    let a = arr(v, "feature_opts_dicts")?;
                    if a.len() > MAX_FEATURE_COUNT {
                        return Err(format!("more than {MAX_FEATURE_COUNT} feature_opts_dicts"));
                    }
                    self.opts = a
                        .iter()
                        .map(parse_opts_dict)
                        .collect::<std::result::Result<_, _>>()?;
                }
                "model" => {
                    let text = string(v, "model")?;
                    self.svm =
                        Some(svm::parse(text).map_err(|e| format!("bad libsvm model: {e}"))?);
                }
                _ => {}
            }
        }
        Ok(())
    }

    fn finish(self, name: &str) -> std::result::Result<Model, String> {
        let n = self.names.len();
        let norm = self
            .norm
            .ok_or("model_dict has no norm_type (linear_rescale or none)")?;
        let svm = self.svm.ok_or("model_dict has no libsvm \"model\"")?;
        // libvmaf leaves absent slopes and intercepts at 0.
        let split = |v: Option<Vec<f64>>| {
            let v = v.unwrap_or_default();
            let model = v.first().copied().unwrap_or(0.0);
            let per: Vec<f64> = (0..n)
                .map(|i| v.get(i + 1).copied().unwrap_or(0.0))
                .collect();
            (model, per)
        };
        let (slope, feature_slope) = split(self.slopes);
        let (intercept, feature_intercept) = split(self.intercepts);
        let mut opts = self.opts;
        opts.resize(n, Vec::new());
        let features = self
            .names
            .into_iter()
            .zip(opts)
            .map(|(name, opts)| ModelFeature { name, opts })
            .collect::<Vec<_>>();
        if self.chroma_correction.is_some() {
            for s in ["adm3", "speed_chroma"] {
                let c = features.iter().filter(|f| f.name.contains(s)).count();
                if c != 1 {
                    return Err(format!(
                        "chroma_correction_parameter needs exactly one feature named like '{s}', \
                         found {c}"
                    ));
                }
            }
        }
        Ok(Model {
            name: name.to_string(),
            model_type: self.model_type.unwrap_or(ModelType::Unknown),
            features,
            norm,
            slope,
            intercept,
            feature_slope,
            feature_intercept,
            score_clip: self.score_clip,
            transform: self.transform,
            chroma_correction: self.chroma_correction,
            svm,
            disable_clip: false,
            enable_transform: false,
            disable_transform: false,
        })
    }
}

/// One `feature_opts_dicts` entry: numbers normalised (`strtof`, `%g`), booleans and strings kept;
/// a repeated key must repeat the same value (libvmaf's `VMAF_DICT_DO_NOT_OVERWRITE`).
fn parse_opts_dict(v: &Json) -> std::result::Result<Vec<(String, serde_json::Value)>, String> {
    let Json::Obj(members) = v else {
        return Err(format!(
            "feature_opts_dicts entries must be objects, not {}",
            v.kind()
        ));
    };
    let mut texts: Vec<(String, String, serde_json::Value)> = Vec::new();
    for (k, v) in members {
        let (text, value) = match v {
            Json::Num(s) => {
                let t = normalize_numeric(s);
                let val = opt_value(&t);
                (t, val)
            }
            Json::Bool(b) => (b.to_string(), serde_json::Value::Bool(*b)),
            Json::Str(s) => (s.clone(), serde_json::Value::String(s.clone())),
            other => {
                return Err(format!(
                    "feature option '{k}' must be a number, boolean or string, not {}",
                    other.kind()
                ))
            }
        };
        match texts.iter().find(|(key, _, _)| key == k) {
            Some((_, t, _)) if *t != text => {
                return Err(format!(
                    "feature option '{k}' given twice with different values"
                ))
            }
            Some(_) => {}
            None => texts.push((k.clone(), text, value)),
        }
    }
    Ok(texts.into_iter().map(|(k, _, v)| (k, v)).collect())
}

fn parse_transform(v: &Json) -> std::result::Result<Transform, String> {
    let Json::Obj(members) = v else {
        return Err(format!(
            "score_transform must be an object, not {}",
            v.kind()
        ));
    };
    let mut t = Transform::default();
    let coef = |v: &Json, what: &str| -> std::result::Result<Option<f64>, String> {
        match v {
            Json::Null => Ok(None),
            _ => num(v, what).map(Some),
        }
    };
    for (key, v) in members {
        match key.as_str() {
            "enabled" => match v {
                Json::Bool(b) => t.enabled = *b,
                _ => return Err("score_transform.enabled must be true or false".into()),
            },
            "p0" => t.p0 = coef(v, "score_transform.p0")?,
            "p1" => t.p1 = coef(v, "score_transform.p1")?,
            "p2" => t.p2 = coef(v, "score_transform.p2")?,
            "knots" => {
                t.knots = match v {
                    Json::Null => None,
                    _ => {
                        let list = arr(v, "score_transform.knots")?;
                        if list.len() > MAX_KNOT_COUNT {
                            return Err(format!("more than {MAX_KNOT_COUNT} knots"));
                        }
                        let knots = list
                            .iter()
                            .map(|k| {
                                let p = arr(k, "a knot")?;
                                if p.len() > 2 {
                                    return Err("a knot must be [x, y]".to_string());
                                }
                                let get = |i: usize| {
                                    p.get(i).map_or(Ok(0.0), |v| num(v, "a knot coordinate"))
                                };
                                Ok((get(0)?, get(1)?))
                            })
                            .collect::<std::result::Result<Vec<_>, String>>()?;
                        Some(knots)
                    }
                }
            }
            "out_lte_in" | "out_gte_in" => {
                let on = match v {
                    Json::Str(s) => s == "true",
                    Json::Bool(b) => *b,
                    _ => {
                        return Err(format!(
                            "score_transform.{key} must be \"true\" or \"false\""
                        ))
                    }
                };
                if key == "out_lte_in" {
                    t.out_lte_in |= on;
                } else {
                    t.out_gte_in |= on;
                }
            }
            _ => {}
        }
    }
    Ok(t)
}

#[cfg(test)]
mod tests;

/// The largest model file accepted: libvmaf's largest models are about 1 MB; the cap keeps a
/// wrong path (`/dev/zero`, a video) from being read whole into memory.
pub const MAX_MODEL_BYTES: u64 = 64 << 20;

/// Reads at most `cap` bytes of a file; a longer file is an error naming the cap.
fn read_capped(path: &Path, cap: u64) -> std::result::Result<Vec<u8>, String> {
    use std::io::Read;
    let f = std::fs::File::open(path).map_err(|e| e.to_string())?;
    let mut buf = Vec::new();
    f.take(cap + 1)
        .read_to_end(&mut buf)
        .map_err(|e| e.to_string())?;
    if buf.len() as u64 > cap {
        return Err(format!(
            "larger than {} MiB, which no VMAF model is (is it the right file?)",
            cap >> 20
        ));
    }
    Ok(buf)
}
