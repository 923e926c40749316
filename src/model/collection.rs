//! libvmaf's bootstrap model collections (`BOOTSTRAP_LIBSVMNUSVR`, e.g. `vmaf_b_v0.6.3`): a JSON
//! object `{"0": model, "1": model, …}`. As libvmaf reads one, member `"0"` becomes an ordinary
//! model under the collection's name (its score is the headline `vmaf`), and members `"1"`…
//! become the collection proper, named `<name>_0001`…; every frame then also gets, over those
//! members only, `<name>_bagging` (mean), `<name>_stddev` and the 95 % interval
//! `<name>_ci_p95_lo/_hi`, computed on the untransformed, unclipped scores and then mapped through
//! the first member's transform and clip (`predict.c`, `vmaf_bootstrap_predict_score_at_index`).
//! Pooled values are these per-frame columns pooled like any other.

use super::json::{self, Json};
use super::{model_err, Model, DEFAULT_MODEL_NAME};
use crate::error::Result;

/// The four statistics' name suffixes, in libvmaf's append order.
pub const STAT_SUFFIXES: [&str; 4] = ["_bagging", "_stddev", "_ci_p95_lo", "_ci_p95_hi"];

const VMAF_B_V063: &str = include_str!("builtin/vmaf_b_v0.6.3.json");
const VMAF_FLOAT_B_V063: &str = include_str!("builtin/vmaf_float_b_v0.6.3.json");

/// The built-in collections (`version=`).
pub const BUILTIN_COLLECTIONS: [&str; 2] = ["vmaf_b_v0.6.3", "vmaf_float_b_v0.6.3"];

/// A bootstrap model collection.
#[derive(Debug, Clone, PartialEq)]
pub struct Bootstrap {
    name: String,
    /// Member `"0"`, named `name`.
    head: Model,
    /// Members `"1"`…, named `name_0001`…
    members: Vec<Model>,
}

/// Whether a parsed top-level object is a collection (its first key is `"0"`).
pub(crate) fn is_collection(top: &[(String, Json)]) -> bool {
    top.first().is_some_and(|(k, _)| k == "0")
}

impl Bootstrap {
    /// A built-in collection by version, or `None` if `version` is not one.
    pub fn builtin(version: &str) -> Option<Result<Bootstrap>> {
        let text = match version {
            "vmaf_b_v0.6.3" => VMAF_B_V063,
            "vmaf_float_b_v0.6.3" => VMAF_FLOAT_B_V063,
            _ => return None,
        };
        Some(Self::parse(
            text,
            DEFAULT_MODEL_NAME,
            &format!("built-in model collection {version}"),
        ))
    }

    /// Whether `text` is a collection (cheap check on the first key, without a full parse).
    pub fn is_collection_text(text: &str) -> bool {
        let t = text.trim_start();
        t.strip_prefix('{')
            .is_some_and(|r| r.trim_start().starts_with("\"0\""))
    }

    /// Parses a collection named `name`. As libvmaf, only keys `"0"`, `"1"`, … in sequence are
    /// members (other keys are skipped); a collection needs at least two members.
    pub fn parse(text: &str, name: &str, context: &str) -> Result<Bootstrap> {
        let doc = json::parse(text).map_err(|e| model_err(context, format!("bad JSON: {e}")))?;
        let Json::Obj(top) = doc else {
            return Err(model_err(
                context,
                "the model collection is not a JSON object",
            ));
        };
        let mut models = Vec::new();
        for (k, v) in &top {
            if *k != models.len().to_string() {
                continue;
            }
            let Json::Obj(member) = v else {
                return Err(model_err(
                    context,
                    format!("member \"{k}\" is not an object"),
                ));
            };
            let member_name = if models.is_empty() {
                name.to_string()
            } else {
                format!("{name}_{:04}", models.len())
            };
            let ctx = format!("{context}, member \"{k}\"");
            models.push(Model::from_doc(member, &member_name, &ctx)?);
        }
        if models.len() < 2 {
            return Err(model_err(
                context,
                "a model collection needs members \"0\" and \"1\" at least",
            ));
        }
        let head = models.remove(0);
        let kind = models[0].model_type();
        if models.iter().any(|m| m.model_type() != kind) {
            return Err(model_err(context, "members of different model types"));
        }
        if !matches!(
            kind,
            super::ModelType::BootstrapSvmNuSvr | super::ModelType::ResidueBootstrapSvmNuSvr
        ) {
            return Err(model_err(
                context,
                "a model collection's members must be BOOTSTRAP_LIBSVMNUSVR or \
                 RESIDUEBOOTSTRAP_LIBSVMNUSVR models",
            ));
        }
        Ok(Bootstrap {
            name: name.to_string(),
            head,
            members: models,
        })
    }

    /// The collection's name (the prefix of every column it adds).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Member `"0"`: an ordinary model named [`Bootstrap::name`].
    pub fn head(&self) -> &Model {
        &self.head
    }

    /// Members `"1"`…, in order.
    pub fn members(&self) -> &[Model] {
        &self.members
    }

    /// Every model of the collection, head first, mutably (for names, flags and overloads).
    pub fn models_mut(&mut self) -> impl Iterator<Item = &mut Model> {
        std::iter::once(&mut self.head).chain(self.members.iter_mut())
    }

    /// Renames the collection and its members (`name`, `name_0001`, …).
    pub fn set_name(&mut self, name: &str) {
        self.name = name.to_string();
        self.head.set_name(name);
        for (i, m) in self.members.iter_mut().enumerate() {
            m.set_name(&format!("{name}_{:04}", i + 1));
        }
    }

    /// Splits into the head and the members (for the engine's plan).
    pub fn into_parts(self) -> (String, Model, Vec<Model>) {
        (self.name, self.head, self.members)
    }
}

/// libvmaf's bootstrap statistics of one frame from the members' raw (untransformed, unclipped)
/// scores, in [`STAT_SUFFIXES`] order; `first` is the first member, whose transform and clip map
/// them. `raw` is sorted in place.
pub fn stats(first: &Model, raw: &mut [f64]) -> [f64; 4] {
    let n = raw.len() as f64;
    let mut sum = 0.0;
    for v in raw.iter() {
        sum += *v;
    }
    let mean = sum / n;
    let delta = 0.01;
    let mut ssd = 0.0;
    for v in raw.iter() {
        let d = *v - mean;
        ssd += d * d; // pow(d, 2) is exact: the correctly rounded square
    }
    let mut stddev = (ssd / n).sqrt();
    // qsort with a three-way compare; scores are never NaN (libsvm sums of finite values).
    raw.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
    let lo = percentile(raw, 2.5);
    let hi = percentile(raw, 97.5);
    let bagging = first.finish(mean);
    let (lo, hi) = (first.finish(lo), first.finish(hi));
    let plus = first.finish(mean + delta);
    let minus = first.finish(mean - delta);
    let slope = (plus - minus) / (2.0 * delta);
    stddev *= slope;
    [bagging, stddev, lo, hi]
}

/// Linear interpolation between the closest ranks (libvmaf's `percentile`).
fn percentile(sorted: &[f64], perc: f64) -> f64 {
    let p = perc * (sorted.len() - 1) as f64 / 100.0;
    let (l, r) = (p.floor(), p.ceil());
    let (il, ir) = (l as usize, r as usize);
    if il == ir {
        sorted[il]
    } else {
        sorted[il] * (r - p) + sorted[ir] * (p - l)
    }
}
