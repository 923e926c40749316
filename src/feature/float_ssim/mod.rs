//! `float_ssim`: libvmaf's floating-point SSIM of the luma plane (`float_ssim`, with `enable_lcs`
//! also its luminance, contrast and structure means `float_ssim_l/_c/_s`).
//!
//! As libvmaf: samples on the 8-bit scale (see [`super::picture_copy::to_float`]); a box low-pass and
//! decimation by `scale` first when it is above 1 (`scale=0`, the default, picks
//! `max(1, round(min(w, h) / 256))`); then the 11x11 Gaussian SSIM over the window's valid
//! region (shared code in `src/feature/iqa/`). `enable_db` turns the SSIM value (only) into
//! `-10 log10(1 - ssim)`, capped by `clip_db`.

use super::iqa::{self, Lcs, Ssim};
use super::options::{OptKind, OptSpec, OptValues};
use super::{Extractor, ExtractorConfig, ExtractorDef, FrameInput};
use crate::error::{Error, Result};
use crate::picture::PictureFormat;

/// Options, as libvmaf's `float_ssim` declares them (none renames the features).
pub static OPTIONS: &[OptSpec] = &[
    OptSpec {
        name: "enable_lcs",
        alias: None,
        kind: OptKind::Bool(false),
        feature_param: false,
    },
    OptSpec {
        name: "enable_db",
        alias: None,
        kind: OptKind::Bool(false),
        feature_param: false,
    },
    OptSpec {
        name: "clip_db",
        alias: None,
        kind: OptKind::Bool(false),
        feature_param: false,
    },
    OptSpec {
        name: "scale",
        alias: None,
        kind: OptKind::Int {
            default: 0,
            min: 0,
            max: 10,
        },
        feature_param: false,
    },
];

/// Outputs in libvmaf's append order.
const SPATIAL: &[&str] = &["float_ssim", "float_ssim_l", "float_ssim_c", "float_ssim_s"];

/// Registry entry.
pub static DEF: ExtractorDef = ExtractorDef {
    name: "float_ssim",
    options: OPTIONS,
    spatial: SPATIAL,
    shows: Some(|o, _, name| name == "float_ssim" || o.bool("enable_lcs")),
    check,
    create,
    ..ExtractorDef::DEFAULTS
};

/// IQA's `_round` of a `float`: halves away from zero, via the `float` fraction.
fn iqa_round(a: f32) -> i64 {
    let sign = if a > 0.0 { 1 } else { -1 };
    let t = a as i32;
    if (a - t as f32) as f64 >= 0.5 {
        (t + sign) as i64
    } else {
        t as i64
    }
}

/// The decimation factor libvmaf uses: the option, or when 0 `max(1, round(min(w, h) / 256))`.
pub(crate) fn scale(o: &OptValues, f: &PictureFormat) -> usize {
    match o.int("scale") {
        0 => iqa_round(f.width.min(f.height) as i32 as f32 / 256.0).max(1) as usize,
        s => s as usize,
    }
}

/// The picture SSIM runs on: after decimation when the factor is above 1.
pub(crate) fn scaled_size(o: &OptValues, f: &PictureFormat) -> (usize, usize) {
    match scale(o, f) {
        1 => (f.width, f.height),
        s => (iqa::decimated(f.width, s), iqa::decimated(f.height, s)),
    }
}

fn check(o: &OptValues, f: &PictureFormat) -> Result<()> {
    super::picture_copy::check_depth("float_ssim", f.bpc)?;
    let s = scale(o, f);
    let (w, h) = scaled_size(o, f);
    if w < iqa::WINDOW || h < iqa::WINDOW {
        return Err(Error::Unsupported(format!(
            "feature float_ssim: a {}x{} picture is {w}x{h} after its scale-{s} downsampling, \
             smaller than SSIM's {n}x{n} window (libvmaf would give no valid score); use a \
             picture at least {n}x{n} after downsampling{}",
            f.width,
            f.height,
            if s > 1 { ", or a smaller scale" } else { "" },
            n = iqa::WINDOW,
        )));
    }
    Ok(())
}

/// libvmaf's `1 / (scale * scale)` box kernel tap (every tap of the `scale`x`scale` low-pass).
pub(crate) fn low_pass_tap(scale: usize) -> f32 {
    1.0f32 / (scale * scale) as i32 as f32
}

/// How one picture's SSIM means become the instance's outputs (shared with the CUDA plan).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Outputs {
    lcs: bool,
    db: bool,
    max_db: f64,
}

impl Outputs {
    /// From the instance's options and format.
    pub(crate) fn new(o: &OptValues, f: &PictureFormat) -> Self {
        Outputs {
            lcs: o.bool("enable_lcs"),
            db: o.bool("enable_db"),
            max_db: iqa::max_db(o.bool("clip_db"), f.bpc, f.width, f.height),
        }
    }

    /// Writes `float_ssim` (in dB under `enable_db`) and, with `enable_lcs`, the three means.
    pub(crate) fn write(&self, v: Lcs, out: &mut [f64]) {
        let score = v.ssim as f64;
        out[0] = if self.db {
            iqa::to_db(score, self.max_db)
        } else {
            score
        };
        if self.lcs {
            out[1] = v.l as f64;
            out[2] = v.c as f64;
            out[3] = v.s as f64;
        }
    }
}

struct FloatSsim {
    scale: usize,
    outputs: Outputs,
    bpc: u8,
    r: Vec<f32>,
    d: Vec<f32>,
    /// libvmaf's `1 / (scale * scale)` box kernel.
    low_pass: Vec<f32>,
    ssim: Ssim,
}

fn create(cfg: &ExtractorConfig) -> Result<Box<dyn Extractor>> {
    let (o, f) = (&cfg.opts, &cfg.format);
    check(o, f)?;
    let s = scale(o, f);
    let (sw, sh) = scaled_size(o, f);
    let n = f.width * f.height;
    Ok(Box::new(FloatSsim {
        scale: s,
        outputs: Outputs::new(o, f),
        bpc: f.bpc,
        r: vec![0.0; n],
        d: vec![0.0; n],
        low_pass: vec![low_pass_tap(s); s * s],
        ssim: Ssim::new(sw, sh),
    }))
}

impl Extractor for FloatSsim {
    fn extract(&mut self, input: &FrameInput<'_>, out: &mut [f64]) -> Result<()> {
        let (mut w, mut h) = (input.reference.width, input.reference.height);
        super::picture_copy::to_float(&input.reference, self.bpc, 0, &mut self.r);
        super::picture_copy::to_float(&input.distorted, self.bpc, 0, &mut self.d);
        if self.scale > 1 {
            let s = self.scale;
            let k = self.ssim.kernels();
            k.decimate_in_place(&mut self.r, w, h, s, &self.low_pass, s);
            (w, h) = k.decimate_in_place(&mut self.d, w, h, s, &self.low_pass, s);
        }
        let v = self.ssim.compute(&self.r, &self.d, w, h);
        self.outputs.write(v, out);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::iqa_round;

    #[test]
    fn round_like_iqa() {
        assert_eq!(iqa_round(0.4375), 0);
        assert_eq!(iqa_round(1.5), 2);
        assert_eq!(iqa_round(4.21875), 4);
        assert_eq!(iqa_round(2.5), 3);
    }
}
