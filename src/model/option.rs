//! The FFmpeg `libvmaf` filter's `model` and `feature` option grammars, parsed exactly as
//! `vf_libvmaf.c` does (`delimited_dict_parse`: split on `|`, then `av_dict_parse_string` with
//! `=` and `:`), including FFmpeg's quoting (`'…'`), backslash escapes, whitespace trimming,
//! case-insensitive duplicate keys (the last one wins) and libvmaf's normalisation of numeric
//! feature-option values.
//!
//! The text handed to these functions is the option's value, after the filter-graph parser has
//! removed its own level of escaping (on an FFmpeg command line,
//! `model='version=vmaf_v0.6.1\:name=a|version=vmaf_v0.6.1neg\:name=b'` reaches the filter as
//! `version=vmaf_v0.6.1:name=a|version=vmaf_v0.6.1neg:name=b`).

use std::path::PathBuf;

use super::cnum::normalize_numeric;
use super::collection::Bootstrap;
use super::Model;
use crate::error::{Error, Result};

/// Where a model comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModelSource {
    /// A built-in model by version, e.g. `vmaf_v0.6.1` (see [`super::builtin_versions`]).
    Version(String),
    /// A libvmaf JSON model file.
    Path(PathBuf),
}

/// One model of the `model` option.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelSpec {
    /// The model to load. When the option gives both `version` and `path`, FFmpeg uses the
    /// version, and so do we.
    pub source: ModelSource,
    /// `name=`: the key of the model's score in the logs; `None` means libvmaf's default, `vmaf`.
    pub name: Option<String>,
    /// `disable_clip=true`: do not clip the score to the model's `score_clip` range.
    pub disable_clip: bool,
    /// `enable_transform=true`: apply the model's `score_transform` even where the model does not
    /// enable it.
    pub enable_transform: bool,
    /// Feature-option overloads `(extractor, option, value)` from keys of the form
    /// `extractor.option=value` (e.g. `vif.vif_enhn_gain_limit=1.0`), in FFmpeg's dictionary
    /// order; values as written (normalised when applied, see [`Model::overload_feature`]).
    pub overloads: Vec<(String, String, String)>,
}

impl ModelSpec {
    /// A spec for built-in model `version` with no other settings.
    pub fn version(version: &str) -> Self {
        ModelSpec {
            source: ModelSource::Version(version.to_string()),
            name: None,
            disable_clip: false,
            enable_transform: false,
            overloads: Vec::new(),
        }
    }

    /// Loads the model and applies the spec: name, flags, then the overloads in order (as
    /// `vmaf_model_load` with the spec's flags followed by `vmaf_model_feature_overload` calls).
    /// For a bootstrap collection this is its member `"0"` (see [`ModelSpec::load_set`]).
    pub fn load(&self) -> Result<Model> {
        Ok(match self.load_set()? {
            Loaded::Model(m) => m,
            Loaded::Collection(c) => c.into_parts().1,
        })
    }

    /// Loads a model or a bootstrap model collection (libvmaf's `vmaf_model_collection_load`
    /// fallback) and applies the spec to every model of it.
    pub fn load_set(&self) -> Result<Loaded> {
        let mut loaded = match &self.source {
            ModelSource::Version(v) => match Bootstrap::builtin(v) {
                Some(c) => Loaded::Collection(c?),
                None => Loaded::Model(Model::builtin(v)?),
            },
            ModelSource::Path(p) => Model::from_path_any(p)?,
        };
        let name = self.name.as_deref().unwrap_or(super::DEFAULT_MODEL_NAME);
        let models: Vec<&mut Model> = match &mut loaded {
            Loaded::Model(m) => {
                m.set_name(name);
                vec![m]
            }
            Loaded::Collection(c) => {
                c.set_name(name);
                c.models_mut().collect()
            }
        };
        for m in models {
            m.set_flag("disable_clip", self.disable_clip)?;
            m.set_flag("enable_transform", self.enable_transform)?;
            for (feature, key, value) in &self.overloads {
                m.overload_feature(feature, key, value)?;
            }
        }
        Ok(loaded)
    }
}

/// What a model option loads: one model or a bootstrap collection.
#[derive(Debug, Clone, PartialEq)]
pub enum Loaded {
    /// An ordinary model.
    Model(Model),
    /// A bootstrap model collection.
    Collection(Bootstrap),
}

/// One feature of the `feature` option.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FeatureSpec {
    /// The extractor name (`name=`), e.g. `psnr`, `float_ssim`, `vif`.
    pub name: String,
    /// The other `key=value` pairs, in FFmpeg's dictionary order. Numeric values are normalised as
    /// libvmaf's `vmaf_feature_dictionary_set` does (`strtof`, then `%g`: `1.0` → `1`).
    pub opts: Vec<(String, String)>,
}

/// The default `model` option of FFmpeg's `libvmaf` filter.
pub const DEFAULT_MODEL_OPTION: &str = "version=vmaf_v0.6.1";

/// A model name becomes a JSON key and an XML attribute name in the log: letters, digits, `_`,
/// `-` and `.`, starting with a letter or `_` (libvmaf takes anything and writes a broken log).
fn check_model_name(name: &str) -> Result<String> {
    let mut chars = name.chars();
    let ok = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'));
    if !ok {
        return Err(Error::InvalidOption(format!(
            "model name '{name}': use letters, digits, '_', '-' and '.', starting with a letter \
             or '_' (the name is a key in the JSON log and an attribute in the XML log)"
        )));
    }
    Ok(name.to_string())
}

/// Parses the filter's `model` option: models separated by `|`, each a `key=value:key=value`
/// list with keys `version`, `path`, `name`, `disable_clip` and `enable_transform` (only the
/// exact value `true` sets a flag), and feature overloads `extractor.option=value`. Other keys are
/// ignored, as FFmpeg ignores them; keys are case-sensitive but, as in an `AVDictionary`, a later
/// key equal to an earlier one ignoring ASCII case replaces it.
///
/// An empty (or all-whitespace) `text` yields the default, [`DEFAULT_MODEL_OPTION`]. (FFmpeg
/// itself, given an explicitly empty `model=''`, loads no model at all; callers wanting that can
/// skip this function.)
///
/// Errors: a malformed `key=value` pair (missing `=`, empty key or value), and a model with
/// neither `version` nor `path` (FFmpeg logs "could not load libvmaf model"), and a `name`
/// that would break the log (see `check_model_name`).
pub fn parse_model_option(text: &str) -> Result<Vec<ModelSpec>> {
    let text = if text.trim().is_empty() {
        DEFAULT_MODEL_OPTION
    } else {
        text
    };
    let dicts = delimited_dict_parse(text)
        .map_err(|e| Error::InvalidOption(format!("could not parse model config '{text}': {e}")))?;
    let mut specs = Vec::with_capacity(dicts.len());
    for dict in dicts {
        let (mut version, mut path, mut name) = (None, None, None);
        let (mut disable_clip, mut enable_transform) = (false, false);
        for (k, v) in &dict {
            match k.as_str() {
                "disable_clip" => disable_clip |= v == "true",
                "enable_transform" => enable_transform |= v == "true",
                "name" => name = Some(check_model_name(v)?),
                "version" => version = Some(v.clone()),
                "path" => path = Some(v.clone()),
                _ => {}
            }
        }
        let mut overloads = Vec::new();
        for (k, v) in &dict {
            // av_strtok(key, "."): leading dots skipped; the rest after the first dot that
            // follows the extractor name is the option (possibly empty or dotted).
            let trimmed = k.trim_start_matches('.');
            if let Some(dot) = trimmed.find('.') {
                overloads.push((
                    trimmed[..dot].to_string(),
                    trimmed[dot + 1..].to_string(),
                    v.clone(),
                ));
            }
        }
        let source = match (version, path) {
            (Some(v), _) => ModelSource::Version(v),
            (None, Some(p)) => ModelSource::Path(PathBuf::from(p)),
            (None, None) => {
                let what = dict
                    .iter()
                    .map(|(k, v)| format!("{k}={v}"))
                    .collect::<Vec<_>>()
                    .join(":");
                return Err(Error::InvalidOption(format!(
                    "model '{what}' has neither version= nor path= (built-in versions: {})",
                    super::builtin_versions().join(", ")
                )));
            }
        };
        specs.push(ModelSpec {
            source,
            name,
            disable_clip,
            enable_transform,
            overloads,
        });
    }
    Ok(specs)
}

/// Parses the filter's `feature` option: features separated by `|`, each `name=extractor`
/// followed by its options (`name=psnr|name=float_ssim:enable_db=true`). An empty `text` means no
/// extra features. Errors: malformed pairs, and a feature without `name`.
pub fn parse_feature_option(text: &str) -> Result<Vec<FeatureSpec>> {
    let dicts = delimited_dict_parse(text).map_err(|e| {
        Error::InvalidOption(format!("could not parse feature config '{text}': {e}"))
    })?;
    dicts
        .into_iter()
        .map(|dict| {
            let mut name = None;
            let mut opts = Vec::new();
            for (k, v) in dict {
                if k == "name" {
                    name = Some(v);
                } else {
                    let v = normalize_numeric(&v);
                    opts.push((k, v));
                }
            }
            let name = name.ok_or_else(|| {
                Error::InvalidOption(format!(
                    "feature config '{text}': a feature has no name= (e.g. name=psnr)"
                ))
            })?;
            Ok(FeatureSpec { name, opts })
        })
        .collect()
}

/// An `AVDictionary` as FFmpeg keeps it: insertion order, and replacing an entry moves the last
/// entry into its slot before appending the new one.
type Dict = Vec<(String, String)>;

/// `av_dict_set(pm, key, value, 0)`.
fn dict_set(d: &mut Dict, key: String, value: String) {
    if let Some(i) = d.iter().position(|(k, _)| k.eq_ignore_ascii_case(&key)) {
        d.swap_remove(i);
    }
    d.push((key, value));
}

const WHITESPACES: &[u8] = b" \n\t\r";

/// `av_get_token`: reads up to a byte of `term`, honouring `\x` escapes and `'…'` quoting, with
/// leading and (unescaped, unquoted) trailing whitespace removed.
fn get_token(s: &[u8], pos: &mut usize, term: &[u8]) -> Vec<u8> {
    let mut p = *pos;
    while p < s.len() && WHITESPACES.contains(&s[p]) {
        p += 1;
    }
    let mut out = Vec::new();
    let mut end = 0;
    while p < s.len() && !term.contains(&s[p]) {
        let c = s[p];
        p += 1;
        if c == b'\\' && p < s.len() {
            out.push(s[p]);
            p += 1;
            end = out.len();
        } else if c == b'\'' {
            while p < s.len() && s[p] != b'\'' {
                out.push(s[p]);
                p += 1;
            }
            if p < s.len() {
                p += 1;
                end = out.len();
            }
        } else {
            out.push(c);
        }
    }
    while out.len() > end && out.last().is_some_and(|c| WHITESPACES.contains(c)) {
        out.pop();
    }
    *pos = p;
    out
}

fn utf8(b: Vec<u8>) -> std::result::Result<String, String> {
    String::from_utf8(b).map_err(|_| "invalid UTF-8".to_string())
}

/// `av_dict_parse_string(&d, text, "=", ":", 0)`.
fn dict_parse_string(text: &str) -> std::result::Result<Dict, String> {
    let s = text.as_bytes();
    let mut pos = 0;
    let mut d = Dict::new();
    while pos < s.len() {
        let key = get_token(s, &mut pos, b"=");
        let mut val = None;
        if !key.is_empty() && pos < s.len() && s[pos] == b'=' {
            pos += 1;
            val = Some(get_token(s, &mut pos, b":"));
        }
        match val {
            Some(v) if !v.is_empty() => dict_set(&mut d, utf8(key)?, utf8(v)?),
            _ => {
                let key = String::from_utf8_lossy(&key);
                return Err(if key.is_empty() {
                    "empty key in a key=value pair".to_string()
                } else {
                    format!("'{key}' has no value (expected {key}=value)")
                });
            }
        }
        if pos < s.len() {
            pos += 1;
        }
    }
    Ok(d)
}

/// `delimited_dict_parse`: one dictionary per non-empty `|`-separated part.
fn delimited_dict_parse(text: &str) -> std::result::Result<Vec<Dict>, String> {
    text.split('|')
        .filter(|p| !p.is_empty())
        .map(dict_parse_string)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kv(d: &Dict) -> Vec<(&str, &str)> {
        d.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect()
    }

    /// Issue 8: a model name that would make the XML/JSON log invalid is refused, by name.
    #[test]
    fn model_names_that_break_logs_are_refused() {
        for bad in ["<&\"x>", "a b", "1st", "x\"y", "é"] {
            let e = parse_model_option(&format!("version=vmaf_v0.6.1:name='{bad}'"))
                .map(|_| ())
                .unwrap_err()
                .to_string();
            assert!(e.contains("model name"), "{bad:?}: {e}");
        }
        for good in ["vmaf", "vmaf_neg", "v1.0-hd", "_x"] {
            let s = parse_model_option(&format!("version=vmaf_v0.6.1:name={good}")).unwrap();
            assert_eq!(s.len(), 1);
        }
    }

    #[test]
    fn av_dict_grammar() {
        let d = dict_parse_string("version=vmaf_v0.6.1:name=a").unwrap();
        assert_eq!(kv(&d), [("version", "vmaf_v0.6.1"), ("name", "a")]);
        // Whitespace trimmed, quotes and escapes kept literally.
        let d = dict_parse_string(" path = 'a b:c.json' :name=x\\:y ").unwrap();
        assert_eq!(kv(&d), [("path", "a b:c.json"), ("name", "x:y")]);
        // Escaped trailing whitespace survives.
        let d = dict_parse_string("name=a\\ ").unwrap();
        assert_eq!(kv(&d), [("name", "a ")]);
        // A trailing ':' is fine; a duplicate key (any case) replaces, moving the last entry.
        let d = dict_parse_string("a=1:b=2:c=3:A=4:").unwrap();
        assert_eq!(kv(&d), [("c", "3"), ("b", "2"), ("A", "4")]);
        for bad in ["a", "a=", "=1", "a=1::b", "a=1:b", " =x"] {
            assert!(dict_parse_string(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn model_option() {
        let specs =
            parse_model_option("version=vmaf_v0.6.1:name=a|version=vmaf_v0.6.1neg:name=b").unwrap();
        assert_eq!(specs.len(), 2);
        assert_eq!(specs[0].source, ModelSource::Version("vmaf_v0.6.1".into()));
        assert_eq!(specs[0].name.as_deref(), Some("a"));
        assert_eq!(
            specs[1].source,
            ModelSource::Version("vmaf_v0.6.1neg".into())
        );

        let d = parse_model_option("").unwrap();
        assert_eq!(d, vec![ModelSpec::version("vmaf_v0.6.1")]);
        assert_eq!(parse_model_option(DEFAULT_MODEL_OPTION).unwrap(), d);

        let s = &parse_model_option(
            "path=/m.json:disable_clip=true:enable_transform=1:vif.vif_enhn_gain_limit=1.0:\
             adm.x.y=2:foo=bar",
        )
        .unwrap()[0];
        assert_eq!(s.source, ModelSource::Path("/m.json".into()));
        assert!(s.disable_clip);
        assert!(
            !s.enable_transform,
            "only the exact value 'true' sets a flag"
        );
        assert_eq!(
            s.overloads,
            vec![
                ("vif".into(), "vif_enhn_gain_limit".into(), "1.0".into()),
                ("adm".into(), "x.y".into(), "2".into()),
            ]
        );
        // version wins over path; empty segments are skipped.
        let s = parse_model_option("||path=p.json:version=v||").unwrap();
        assert_eq!(s.len(), 1);
        assert_eq!(s[0].source, ModelSource::Version("v".into()));
        // Keys are case-sensitive: VERSION is not version.
        assert!(parse_model_option("VERSION=vmaf_v0.6.1").is_err());
        assert!(parse_model_option("name=a").is_err());
        assert!(parse_model_option("version").is_err());
        assert!(parse_model_option("version=a|name").is_err());
    }

    #[test]
    fn feature_option() {
        let f = parse_feature_option("name=psnr|name=float_ssim:enable_db=true:x=1.0").unwrap();
        assert_eq!(f.len(), 2);
        assert_eq!(f[0].name, "psnr");
        assert!(f[0].opts.is_empty());
        assert_eq!(f[1].name, "float_ssim");
        assert_eq!(
            f[1].opts,
            vec![
                ("enable_db".into(), "true".into()),
                ("x".into(), "1".into())
            ]
        );
        assert!(parse_feature_option("").unwrap().is_empty());
        assert!(parse_feature_option("enable_db=true").is_err());
        assert!(parse_feature_option("name=").is_err());
    }
}
