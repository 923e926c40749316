//! Integer motion: placeholder, being written.
use super::options::OptSpec;
use super::{Extractor, ExtractorConfig, ExtractorDef};
use crate::error::{Error, Result};
/// Options.
pub static OPTIONS: &[OptSpec] = &[];
/// Registry entry.
pub static DEF: ExtractorDef = ExtractorDef {
    name: "motion",
    options: OPTIONS,
    spatial: &["VMAF_integer_feature_motion_sad_score"],
    temporal: &["VMAF_integer_feature_motion2_score", "VMAF_integer_feature_motion3_score"],
    needs_prev_ref: true,
    create,
    create_temporal: None,
};
fn create(_cfg: &ExtractorConfig) -> Result<Box<dyn Extractor>> {
    Err(Error::Unsupported("motion: not built yet".into()))
}
