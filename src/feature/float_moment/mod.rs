//! `float_moment`: libvmaf's first and second moments (mean, mean square) of the reference and
//! distorted luma, on pictures converted to `f32` as libvmaf's `picture_copy` does.

use super::options::{OptSpec, OptValues};
use super::picture_copy::{check_depth, to_float};
use super::{Extractor, ExtractorConfig, ExtractorDef, FrameInput};
use crate::error::Result;
use crate::picture::PictureFormat;

/// Registry entry; outputs in libvmaf's append order.
pub static DEF: ExtractorDef = ExtractorDef {
    name: "float_moment",
    options: OPTIONS,
    spatial: &[
        "float_moment_ref1st",
        "float_moment_dis1st",
        "float_moment_ref2nd",
        "float_moment_dis2nd",
    ],
    check,
    create,
    ..ExtractorDef::DEFAULTS
};

/// libvmaf's `float_moment` has no options.
static OPTIONS: &[OptSpec] = &[];

fn check(_: &OptValues, f: &PictureFormat) -> Result<()> {
    check_depth("float_moment", f.bpc)
}

struct FloatMoment {
    bpc: u8,
    reference: Vec<f32>,
    distorted: Vec<f32>,
}

fn create(cfg: &ExtractorConfig) -> Result<Box<dyn Extractor>> {
    check(&cfg.opts, &cfg.format)?;
    let n = cfg.format.width * cfg.format.height;
    Ok(Box::new(FloatMoment {
        bpc: cfg.format.bpc,
        reference: vec![0.0; n],
        distorted: vec![0.0; n],
    }))
}

/// libvmaf's moments: each sample (first) or its `f32` square (second) summed in `f64` in raster
/// order, divided by the pixel count (the CUDA plan's tests compare with it).
pub(crate) fn moments(pic: &[f32]) -> (f64, f64) {
    let first: f64 = pic.iter().fold(0.0, |acc, &v| acc + v as f64);
    let second: f64 = pic.iter().fold(0.0, |acc, &v| acc + (v * v) as f64);
    (mean(first, pic.len()), mean(second, pic.len()))
}

/// A moment from its `f64` sum over `samples` pixels, as libvmaf divides (by the `int` count
/// converted to `double`); the CUDA plan finishes with it too.
pub(crate) fn mean(sum: f64, samples: usize) -> f64 {
    sum / samples as i32 as f64
}

impl Extractor for FloatMoment {
    fn extract(&mut self, input: &FrameInput<'_>, out: &mut [f64]) -> Result<()> {
        to_float(&input.reference, self.bpc, 0, &mut self.reference);
        to_float(&input.distorted, self.bpc, 0, &mut self.distorted);
        let (r1, r2) = moments(&self.reference);
        let (d1, d2) = moments(&self.distorted);
        out.copy_from_slice(&[r1, d1, r2, d2]);
        Ok(())
    }
}
