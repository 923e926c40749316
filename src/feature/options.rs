//! Feature-extractor options: a declarative table per extractor (name, alias, type, default, range),
//! libvmaf's `key=value` grammar, and libvmaf's rule for naming features computed with non-default
//! options (`integer_vif_scale0_egl_1`).

use crate::error::{Error, Result};

/// The type and default of an option.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum OptKind {
    /// Boolean (`true`/`false`/`1`/`0`).
    Bool(bool),
    /// Integer with inclusive range.
    Int {
        /// Default value.
        default: i64,
        /// Minimum.
        min: i64,
        /// Maximum.
        max: i64,
    },
    /// Double with inclusive range.
    Double {
        /// Default value.
        default: f64,
        /// Minimum.
        min: f64,
        /// Maximum.
        max: f64,
    },
    /// One of a fixed set of words (libvmaf's string options, e.g. `vif_prescale_method`;
    /// libvmaf refuses other words in the extractor's `init`, vmaf_rs when the option is set).
    Choice {
        /// Default value.
        default: &'static str,
        /// The words accepted.
        choices: &'static [&'static str],
    },
    /// Free text, unset by default (libvmaf's string options with a `NULL` default, e.g. cambi's
    /// `heatmaps_path`).
    Text,
}

/// One option of an extractor.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OptSpec {
    /// Full name, e.g. `vif_enhn_gain_limit`.
    pub name: &'static str,
    /// Short alias used in feature names, e.g. `egl`.
    pub alias: Option<&'static str>,
    /// Type, default and range.
    pub kind: OptKind,
    /// Whether a non-default value changes the feature's name (libvmaf's FEATURE_PARAM flag).
    pub feature_param: bool,
}

/// A resolved option value.
#[derive(Debug, Clone, PartialEq)]
pub enum OptValue {
    /// Boolean.
    Bool(bool),
    /// Integer.
    Int(i64),
    /// Double.
    Double(f64),
    /// A word of a [`OptKind::Choice`] option.
    Choice(&'static str),
    /// A [`OptKind::Text`] option's text (`None`: not set).
    Text(Option<String>),
}

/// The option values of one extractor instance (every option of its table, defaults filled in).
#[derive(Debug, Clone, PartialEq)]
pub struct OptValues {
    specs: &'static [OptSpec],
    values: Vec<OptValue>,
}

impl OptValues {
    /// All defaults.
    pub fn defaults(specs: &'static [OptSpec]) -> Self {
        let values = specs
            .iter()
            .map(|s| match s.kind {
                OptKind::Bool(b) => OptValue::Bool(b),
                OptKind::Int { default, .. } => OptValue::Int(default),
                OptKind::Double { default, .. } => OptValue::Double(default),
                OptKind::Choice { default, .. } => OptValue::Choice(default),
                OptKind::Text => OptValue::Text(None),
            })
            .collect();
        OptValues { specs, values }
    }

    fn index(&self, key: &str) -> Option<usize> {
        self.specs.iter().position(|s| s.name == key)
    }

    /// Sets `key` from its text form, checking type and range. Like libvmaf, only full option
    /// names set options (libvmaf silently ignores an alias such as `egl`; we refuse it).
    pub fn set(&mut self, key: &str, value: &str) -> Result<()> {
        if let Some(s) = self.specs.iter().find(|s| s.alias == Some(key)) {
            return Err(Error::InvalidOption(format!(
                "'{key}' is only the short name used in feature names; set '{}' instead",
                s.name
            )));
        }
        let i = self.index(key).ok_or_else(|| {
            let known: Vec<_> = self.specs.iter().map(|s| s.name).collect();
            if known.is_empty() {
                return Error::InvalidOption(format!(
                    "unknown option '{key}' (this feature takes no options)"
                ));
            }
            Error::InvalidOption(format!(
                "unknown option '{key}' (known: {})",
                known.join(", ")
            ))
        })?;
        let spec = self.specs[i];
        let bad = |what: &str| {
            Error::InvalidOption(format!("option '{}' = '{value}': {what}", spec.name))
        };
        self.values[i] = match spec.kind {
            OptKind::Bool(_) => OptValue::Bool(match value {
                "true" | "1" => true,
                "false" | "0" => false,
                _ => return Err(bad("expected true or false")),
            }),
            OptKind::Int { min, max, .. } => {
                let v: i64 = value.parse().map_err(|_| bad("expected an integer"))?;
                if v < min || v > max {
                    return Err(bad(&format!("out of range [{min}, {max}]")));
                }
                OptValue::Int(v)
            }
            OptKind::Double { min, max, .. } => {
                let v: f64 = value.parse().map_err(|_| bad("expected a number"))?;
                if !(v >= min && v <= max) {
                    return Err(bad(&format!("out of range [{min}, {max}]")));
                }
                OptValue::Double(v)
            }
            OptKind::Choice { choices, .. } => match choices.iter().find(|c| **c == value) {
                Some(c) => OptValue::Choice(c),
                None => return Err(bad(&format!("expected one of {}", choices.join(", ")))),
            },
            OptKind::Text => OptValue::Text(Some(value.to_string())),
        };
        Ok(())
    }

    /// Sets a value given as JSON (models' `feature_opts_dicts`).
    pub fn set_json(&mut self, key: &str, value: &serde_json::Value) -> Result<()> {
        let text = match value {
            serde_json::Value::Bool(b) => b.to_string(),
            serde_json::Value::Number(n) => n.to_string(),
            serde_json::Value::String(s) => s.clone(),
            other => {
                return Err(Error::Model(format!(
                    "option '{key}' has an unsupported JSON value {other}"
                )))
            }
        };
        self.set(key, &text)
    }

    /// A double option's value. Panics if `key` is not a double option of this table (a bug).
    pub fn f64(&self, key: &str) -> f64 {
        match self.index(key).map(|i| &self.values[i]) {
            Some(OptValue::Double(v)) => *v,
            _ => panic!("no double option {key}"),
        }
    }

    /// A boolean option's value. Panics if `key` is not a bool option of this table (a bug).
    pub fn bool(&self, key: &str) -> bool {
        match self.index(key).map(|i| &self.values[i]) {
            Some(OptValue::Bool(v)) => *v,
            _ => panic!("no bool option {key}"),
        }
    }

    /// An integer option's value. Panics if `key` is not an int option of this table (a bug).
    pub fn int(&self, key: &str) -> i64 {
        match self.index(key).map(|i| &self.values[i]) {
            Some(OptValue::Int(v)) => *v,
            _ => panic!("no int option {key}"),
        }
    }

    /// A choice option's word. Panics if `key` is not a choice option of this table (a bug).
    pub fn choice(&self, key: &str) -> &'static str {
        match self.index(key).map(|i| &self.values[i]) {
            Some(OptValue::Choice(v)) => v,
            _ => panic!("no choice option {key}"),
        }
    }

    /// A text option's value (`None`: not set). Panics if `key` is not a text option of this
    /// table (a bug).
    pub fn text(&self, key: &str) -> Option<&str> {
        match self.index(key).map(|i| &self.values[i]) {
            Some(OptValue::Text(v)) => v.as_deref(),
            _ => panic!("no text option {key}"),
        }
    }

    /// libvmaf's name for a provided feature under these options: the full name when every
    /// feature parameter is at its default; otherwise the short alias followed by
    /// `_<alias>_<%g value>` (`_<alias>` for booleans, `_<alias>_<word>` for choices) per
    /// non-default parameter, sorted by option name (libvmaf's `vmaf_feature_name_from_options`).
    pub fn feature_name(&self, full_name: &str) -> String {
        let mut changed: Vec<(&OptSpec, &OptValue)> = self
            .specs
            .iter()
            .zip(&self.values)
            .filter(|(s, v)| s.feature_param && !is_default(s, v))
            .collect();
        if changed.is_empty() {
            return full_name.to_string();
        }
        changed.sort_by(|a, b| a.0.name.cmp(b.0.name));
        let mut out = super::names::alias(full_name).to_string();
        for (spec, v) in changed {
            let key = spec.alias.unwrap_or(spec.name);
            match v {
                OptValue::Bool(_) => {
                    out.push('_');
                    out.push_str(key);
                }
                OptValue::Int(i) => out.push_str(&format!("_{key}_{i}")),
                OptValue::Double(d) => out.push_str(&format!("_{key}_{}", fmt_g(*d))),
                OptValue::Choice(w) => out.push_str(&format!("_{key}_{w}")),
                OptValue::Text(t) => {
                    out.push_str(&format!("_{key}_{}", t.as_deref().unwrap_or("")))
                }
            }
        }
        out
    }
}

fn is_default(spec: &OptSpec, v: &OptValue) -> bool {
    match (spec.kind, v) {
        (OptKind::Bool(d), OptValue::Bool(b)) => d == *b,
        (OptKind::Int { default, .. }, OptValue::Int(i)) => default == *i,
        (OptKind::Double { default, .. }, OptValue::Double(x)) => default == *x,
        (OptKind::Choice { default, .. }, OptValue::Choice(w)) => default == *w,
        (OptKind::Text, OptValue::Text(t)) => t.is_none(),
        _ => false,
    }
}

/// C's `%g` (6 significant digits, trailing zeros removed, exponent form for very small/large).
pub fn fmt_g(v: f64) -> String {
    if v == 0.0 {
        return "0".into();
    }
    let exp = v.abs().log10().floor() as i32;
    if !(-4..6).contains(&exp) {
        let s = format!("{:.5e}", v);
        let (mant, e) = s.split_once('e').unwrap_or((&s, "0"));
        let mant = trim_zeros(mant);
        let e: i32 = e.parse().unwrap_or(0);
        return format!("{mant}e{}{:02}", if e < 0 { '-' } else { '+' }, e.abs());
    }
    let decimals = (5 - exp).max(0) as usize;
    trim_zeros(&format!("{:.*}", decimals, v)).to_string()
}

fn trim_zeros(s: &str) -> &str {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.')
    } else {
        s
    }
}

/// Splits libvmaf's `key=value:key=value` option text (also accepting `\:` escapes) into pairs.
pub fn split_kv(text: &str, sep: char) -> Result<Vec<(String, String)>> {
    let mut out = Vec::new();
    for part in split_escaped(text, sep) {
        if part.is_empty() {
            continue;
        }
        let (k, v) = part.split_once('=').ok_or_else(|| {
            Error::InvalidOption(format!("'{part}' is not of the form key=value"))
        })?;
        out.push((k.trim().to_string(), v.trim().to_string()));
    }
    Ok(out)
}

/// Splits on `sep`, honouring backslash escapes (`\:` stays `:`).
pub fn split_escaped(text: &str, sep: char) -> Vec<String> {
    let mut parts = vec![String::new()];
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            if let Some(n) = chars.next() {
                parts.last_mut().expect("non-empty").push(n);
            }
        } else if c == sep {
            parts.push(String::new());
        } else {
            parts.last_mut().expect("non-empty").push(c);
        }
    }
    parts
}

#[cfg(test)]
mod tests {
    use super::*;

    static SPECS: &[OptSpec] = &[
        OptSpec {
            name: "vif_enhn_gain_limit",
            alias: Some("egl"),
            kind: OptKind::Double {
                default: 100.0,
                min: 1.0,
                max: 100.0,
            },
            feature_param: true,
        },
        OptSpec {
            name: "debug",
            alias: None,
            kind: OptKind::Bool(false),
            feature_param: false,
        },
        OptSpec {
            name: "vif_prescale_method",
            alias: Some("pm"),
            kind: OptKind::Choice {
                default: "nearest",
                choices: &["nearest", "bilinear"],
            },
            feature_param: true,
        },
    ];

    #[test]
    fn names_follow_libvmaf() {
        let mut o = OptValues::defaults(SPECS);
        assert_eq!(
            o.feature_name("VMAF_integer_feature_vif_scale0_score"),
            "VMAF_integer_feature_vif_scale0_score"
        );
        assert!(o.set("egl", "1").is_err());
        o.set("vif_enhn_gain_limit", "1").unwrap();
        o.set("debug", "true").unwrap();
        assert_eq!(
            o.feature_name("VMAF_integer_feature_vif_scale0_score"),
            "integer_vif_scale0_egl_1"
        );
        o.set("vif_enhn_gain_limit", "1.5").unwrap();
        assert_eq!(
            o.feature_name("VMAF_integer_feature_vif_scale0_score"),
            "integer_vif_scale0_egl_1.5"
        );
    }

    #[test]
    fn choices_are_named_by_their_word() {
        let mut o = OptValues::defaults(SPECS);
        assert_eq!(o.choice("vif_prescale_method"), "nearest");
        o.set("vif_prescale_method", "nearest").unwrap();
        assert_eq!(
            o.feature_name("VMAF_feature_vif_scale0_score"),
            "VMAF_feature_vif_scale0_score"
        );
        o.set("vif_prescale_method", "bilinear").unwrap();
        assert_eq!(o.choice("vif_prescale_method"), "bilinear");
        o.set("vif_enhn_gain_limit", "1").unwrap();
        // Sorted by option name, as libvmaf's dictionary sort does.
        assert_eq!(
            o.feature_name("VMAF_feature_vif_scale0_score"),
            "vif_scale0_egl_1_pm_bilinear"
        );
        let e = o
            .set("vif_prescale_method", "cubic")
            .unwrap_err()
            .to_string();
        assert!(e.contains("nearest, bilinear"), "{e}");
        o.set_json("vif_prescale_method", &serde_json::json!("nearest"))
            .unwrap();
        assert_eq!(o.choice("vif_prescale_method"), "nearest");
    }

    #[test]
    fn text_is_unset_until_set_and_taken_verbatim() {
        static TEXT: &[OptSpec] = &[OptSpec {
            name: "heatmaps_path",
            alias: None,
            kind: OptKind::Text,
            feature_param: false,
        }];
        let mut o = OptValues::defaults(TEXT);
        assert_eq!(o.text("heatmaps_path"), None);
        assert_eq!(o, OptValues::defaults(TEXT));
        o.set("heatmaps_path", "/tmp/a b:c").unwrap();
        assert_eq!(o.text("heatmaps_path"), Some("/tmp/a b:c"));
        assert_ne!(o, OptValues::defaults(TEXT));
        // Not a feature parameter: the name stays.
        assert_eq!(o.feature_name("x"), "x");
        o.set_json("heatmaps_path", &serde_json::json!("d"))
            .unwrap();
        assert_eq!(o.text("heatmaps_path"), Some("d"));
    }

    #[test]
    fn bad_values_are_rejected() {
        let mut o = OptValues::defaults(SPECS);
        assert!(o.set("vif_enhn_gain_limit", "0.5").is_err());
        assert!(o.set("vif_enhn_gain_limit", "abc").is_err());
        assert!(o.set("nope", "1").is_err());
        assert!(o.set("debug", "maybe").is_err());
    }

    #[test]
    fn g_format() {
        assert_eq!(fmt_g(1.0), "1");
        assert_eq!(fmt_g(1.5), "1.5");
        assert_eq!(fmt_g(100.0), "100");
        assert_eq!(fmt_g(0.0001), "0.0001");
        assert_eq!(fmt_g(1e-5), "1e-05");
        assert_eq!(fmt_g(1234567.0), "1.23457e+06");
    }

    #[test]
    fn kv_split() {
        let kv = split_kv("version=vmaf_v0.6.1\\:x:name=a", ':').unwrap();
        assert_eq!(kv[0], ("version".into(), "vmaf_v0.6.1:x".into()));
        assert_eq!(kv[1], ("name".into(), "a".into()));
        assert!(split_kv("novalue", ':').is_err());
    }
}
