//! Integer ADM (libvmaf's `adm` extractor): placeholder, being written.

use super::options::{OptKind, OptSpec};
use super::{Extractor, ExtractorConfig, ExtractorDef};
use crate::error::{Error, Result};

/// Options, as libvmaf's integer ADM defines them.
pub static OPTIONS: &[OptSpec] = &[OptSpec {
    name: "adm_enhn_gain_limit",
    alias: Some("egl"),
    kind: OptKind::Double {
        default: 100.0,
        min: 1.0,
        max: 100.0,
    },
    feature_param: true,
}];

/// Registry entry.
pub static DEF: ExtractorDef = ExtractorDef {
    name: "adm",
    options: OPTIONS,
    spatial: &[
        "VMAF_integer_feature_adm2_score",
        "VMAF_integer_feature_aim_score",
        "VMAF_integer_feature_adm3_score",
        "VMAF_integer_feature_adm_scale0_score",
        "VMAF_integer_feature_adm_scale1_score",
        "VMAF_integer_feature_adm_scale2_score",
        "VMAF_integer_feature_adm_scale3_score",
    ],
    temporal: &[],
    needs_prev_ref: false,
    create,
    create_temporal: None,
};

fn create(_cfg: &ExtractorConfig) -> Result<Box<dyn Extractor>> {
    Err(Error::Unsupported("adm: not built yet".into()))
}
