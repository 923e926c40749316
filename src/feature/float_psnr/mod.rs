//! `float_psnr`: libvmaf's floating-point luma PSNR (`float_psnr`), computed on pictures converted
//! to `f32` the way libvmaf's `picture_copy` converts them (above 8 bits, divided down to the 8-bit
//! range), with a peak and a cap per bit depth.
//!
//! Also home of [`to_float`], the `picture_copy` conversion the other simple float extractors
//! (`float_moment`, `float_ansnr`, `float_motion`) share.

use super::options::{OptSpec, OptValues};
use super::picture_copy::{check_depth, to_float};
use super::{Extractor, ExtractorConfig, ExtractorDef, FrameInput};
use crate::error::Result;
use crate::picture::PictureFormat;

/// Registry entry.
pub static DEF: ExtractorDef = ExtractorDef {
    name: "float_psnr",
    options: OPTIONS,
    spatial: &["float_psnr"],
    check,
    create,
    ..ExtractorDef::DEFAULTS
};

/// libvmaf's `float_psnr` has no options.
static OPTIONS: &[OptSpec] = &[];

fn check(_: &OptValues, f: &PictureFormat) -> Result<()> {
    check_depth("float_psnr", f.bpc)
}

/// The peak (of the 8-bit range the samples are scaled to) and the cap per bit depth, as
/// libvmaf's `float_psnr` and `float_ansnr` set them in `init`.
pub fn peak_and_max(bpc: u8) -> (f64, f64) {
    match bpc {
        8 => (255.0, 60.0),
        10 => (255.75, 72.0),
        12 => (255.9375, 84.0),
        _ => (255.99609375, 108.0),
    }
}

struct FloatPsnr {
    bpc: u8,
    peak: f64,
    max: f64,
    reference: Vec<f32>,
    distorted: Vec<f32>,
}

fn create(cfg: &ExtractorConfig) -> Result<Box<dyn Extractor>> {
    check(&cfg.opts, &cfg.format)?;
    let (peak, max) = peak_and_max(cfg.format.bpc);
    let n = cfg.format.width * cfg.format.height;
    Ok(Box::new(FloatPsnr {
        bpc: cfg.format.bpc,
        peak,
        max,
        reference: vec![0.0; n],
        distorted: vec![0.0; n],
    }))
}

impl Extractor for FloatPsnr {
    fn extract(&mut self, input: &FrameInput<'_>, out: &mut [f64]) -> Result<()> {
        let (r, d) = (&input.reference, &input.distorted);
        to_float(r, self.bpc, 0, &mut self.reference);
        to_float(d, self.bpc, 0, &mut self.distorted);
        // libvmaf: the squared difference in f32, summed in f64 in raster order.
        let mut noise = 0.0f64;
        for (&a, &b) in self.reference.iter().zip(&self.distorted) {
            let diff = a - b;
            noise += (diff * diff) as f64;
        }
        out[0] = value(noise, r.width * r.height, self.peak, self.max);
        Ok(())
    }
}

/// The frame's value from its summed squared differences `noise` (the `f64` sum of the `f32`
/// squares) over `n` samples; shared with the CUDA plan (`cuda::plans::float_psnr`).
pub(crate) fn value(noise: f64, n: usize, peak: f64, max: f64) -> f64 {
    let noise = noise / n as i32 as f64;
    let floored = if noise > 1e-10 { noise } else { 1e-10 };
    let psnr = 10.0 * (peak * peak / floored).log10();
    if psnr < max {
        psnr
    } else {
        max
    }
}
