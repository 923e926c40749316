//! `float_ms_ssim`: libvmaf's floating-point multi-scale SSIM (Wang's) of the luma plane, with
//! `enable_lcs` also the luminance, contrast and structure means of each of the five scales
//! (`float_ms_ssim_l_scale0` … `float_ms_ssim_s_scale4`).
//!
//! As libvmaf: samples on the 8-bit scale; each scale is the previous one low-passed by the 9x9
//! 9/7 biorthogonal wavelet kernel (mirrored borders) and decimated by two (`n / 2 + (n & 1)`);
//! each scale's SSIM terms come from the shared IQA code (`src/feature/iqa/`), and the score is
//! the product of `l^alpha * c^beta * s^gamma` over the scales in `f64`. `enable_db` and
//! `clip_db` convert the score as for `float_ssim`.

use super::iqa::{self, Lcs, Ssim};
use super::options::{OptKind, OptSpec, OptValues};
use super::{Extractor, ExtractorConfig, ExtractorDef, FrameInput};
use crate::error::{Error, Result};
use crate::picture::PictureFormat;

/// Options, as libvmaf's `float_ms_ssim` declares them (none renames the features).
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
];

/// Number of scales.
pub(crate) const SCALES: usize = 5;

/// Outputs in libvmaf's append order: the score, then every scale's l, then c, then s.
const SPATIAL: &[&str] = &[
    "float_ms_ssim",
    "float_ms_ssim_l_scale0",
    "float_ms_ssim_l_scale1",
    "float_ms_ssim_l_scale2",
    "float_ms_ssim_l_scale3",
    "float_ms_ssim_l_scale4",
    "float_ms_ssim_c_scale0",
    "float_ms_ssim_c_scale1",
    "float_ms_ssim_c_scale2",
    "float_ms_ssim_c_scale3",
    "float_ms_ssim_c_scale4",
    "float_ms_ssim_s_scale0",
    "float_ms_ssim_s_scale1",
    "float_ms_ssim_s_scale2",
    "float_ms_ssim_s_scale3",
    "float_ms_ssim_s_scale4",
];

/// Registry entry.
pub static DEF: ExtractorDef = ExtractorDef {
    name: "float_ms_ssim",
    options: OPTIONS,
    spatial: SPATIAL,
    shows: Some(|o, _, name| name == "float_ms_ssim" || o.bool("enable_lcs")),
    check,
    create,
    ..ExtractorDef::DEFAULTS
};

/// Per-scale exponents of l, c and s (libvmaf's `g_alphas`, `g_betas`, `g_gammas`).
const ALPHAS: [f32; SCALES] = [0.0, 0.0, 0.0, 0.0, 0.1333];
const BETAS: [f32; SCALES] = [0.0448, 0.2856, 0.3001, 0.2363, 0.1333];
const GAMMAS: [f32; SCALES] = [0.0448, 0.2856, 0.3001, 0.2363, 0.1333];

/// Side of the decimation low-pass.
pub(crate) const LPF_LEN: usize = 9;

/// The 9x9 low-pass (9/7 biorthogonal wavelet), row-major, as libvmaf's `g_lpf` (applied as a
/// 2-D kernel: it is not exactly the product of its 1-D version).
#[rustfmt::skip]
pub(crate) const LPF: [f32; LPF_LEN * LPF_LEN] = [
     0.000714, -0.000450, -0.002090,  0.007132,  0.016114,  0.007132, -0.002090, -0.000450,  0.000714,
    -0.000450,  0.000283,  0.001316, -0.004490, -0.010146, -0.004490,  0.001316,  0.000283, -0.000450,
    -0.002090,  0.001316,  0.006115, -0.020867, -0.047149, -0.020867,  0.006115,  0.001316, -0.002090,
     0.007132, -0.004490, -0.020867,  0.071207,  0.160885,  0.071207, -0.020867, -0.004490,  0.007132,
     0.016114, -0.010146, -0.047149,  0.160885,  0.363505,  0.160885, -0.047149, -0.010146,  0.016114,
     0.007132, -0.004490, -0.020867,  0.071207,  0.160885,  0.071207, -0.020867, -0.004490,  0.007132,
    -0.002090,  0.001316,  0.006115, -0.020867, -0.047149, -0.020867,  0.006115,  0.001316, -0.002090,
    -0.000450,  0.000283,  0.001316, -0.004490, -0.010146, -0.004490,  0.001316,  0.000283, -0.000450,
     0.000714, -0.000450, -0.002090,  0.007132,  0.016114,  0.007132, -0.002090, -0.000450,  0.000714,
];

/// The smallest side libvmaf accepts: its check halves the size four times, rounding down, and
/// wants the window at every scale (`11 << 4`).
const MIN_SIDE: usize = iqa::WINDOW << (SCALES - 1);

fn check(_: &super::options::OptValues, f: &PictureFormat) -> Result<()> {
    super::picture_copy::check_depth("float_ms_ssim", f.bpc)?;
    // libvmaf's own test ("scale below 1x1"), which fails the run.
    let (mut w, mut h) = (f.width, f.height);
    for _ in 0..SCALES {
        if w < iqa::WINDOW || h < iqa::WINDOW {
            return Err(Error::Unsupported(format!(
                "feature float_ms_ssim: a {}x{} picture is too small for its {SCALES} scales \
                 (libvmaf fails with \"scale below 1x1\"); it needs at least \
                 {MIN_SIDE}x{MIN_SIDE}: upscale the input or use float_ssim",
                f.width, f.height
            )));
        }
        w /= 2;
        h /= 2;
    }
    Ok(())
}

/// The picture size at every scale: the frame's, then each halved as IQA's decimation does
/// ([`iqa::decimated`]).
pub(crate) fn scale_sizes(w: usize, h: usize) -> [(usize, usize); SCALES] {
    let mut sizes = [(w, h); SCALES];
    for i in 1..SCALES {
        let (w, h) = sizes[i - 1];
        sizes[i] = (iqa::decimated(w, 2), iqa::decimated(h, 2));
    }
    sizes
}

/// How the five scales' SSIM means become the instance's outputs (shared with the CUDA plan).
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

    /// Writes `float_ms_ssim` (the product of `l^alpha c^beta s^gamma` over the scales, in `f64`
    /// in scale order; in dB under `enable_db`) and, with `enable_lcs`, every scale's means.
    /// `Err(scale)` when the product becomes infinite at that scale (libvmaf fails the frame).
    pub(crate) fn write(
        &self,
        v: &[Lcs; SCALES],
        out: &mut [f64],
    ) -> std::result::Result<(), usize> {
        let mut score = 1.0f64;
        for (i, v) in v.iter().enumerate() {
            score *= (v.l as f64).powf(ALPHAS[i] as f64)
                * (v.c as f64).powf(BETAS[i] as f64)
                * (v.s as f64).powf(GAMMAS[i] as f64);
            if self.lcs {
                out[1 + i] = v.l as f64;
                out[1 + SCALES + i] = v.c as f64;
                out[1 + 2 * SCALES + i] = v.s as f64;
            }
            if score == f64::INFINITY {
                return Err(i);
            }
        }
        out[0] = if self.db {
            iqa::to_db(score, self.max_db)
        } else {
            score
        };
        Ok(())
    }
}

struct FloatMsSsim {
    outputs: Outputs,
    bpc: u8,
    /// Reference and distorted pictures at every scale, compact.
    r: [Vec<f32>; SCALES],
    d: [Vec<f32>; SCALES],
    ssim: Ssim,
}

fn create(cfg: &ExtractorConfig) -> Result<Box<dyn Extractor>> {
    let (o, f) = (&cfg.opts, &cfg.format);
    check(o, f)?;
    let sizes = scale_sizes(f.width, f.height).map(|(w, h)| w * h);
    Ok(Box::new(FloatMsSsim {
        outputs: Outputs::new(o, f),
        bpc: f.bpc,
        r: sizes.map(|n| vec![0.0; n]),
        d: sizes.map(|n| vec![0.0; n]),
        ssim: Ssim::new(f.width, f.height),
    }))
}

impl Extractor for FloatMsSsim {
    fn extract(&mut self, input: &FrameInput<'_>, out: &mut [f64]) -> Result<()> {
        super::picture_copy::to_float(&input.reference, self.bpc, 0, &mut self.r[0]);
        super::picture_copy::to_float(&input.distorted, self.bpc, 0, &mut self.d[0]);
        let mut sizes = [(input.reference.width, input.reference.height); SCALES];
        for i in 1..SCALES {
            let (w, h) = sizes[i - 1];
            let k = self.ssim.kernels();
            for pics in [&mut self.r, &mut self.d] {
                let (done, rest) = pics.split_at_mut(i);
                sizes[i] = k.decimate(&done[i - 1], w, h, 2, &LPF, LPF_LEN, &mut rest[0]);
            }
        }
        let mut values = [Lcs {
            ssim: 0.0,
            l: 0.0,
            c: 0.0,
            s: 0.0,
        }; SCALES];
        for (i, &(w, h)) in sizes.iter().enumerate() {
            values[i] = self.ssim.compute(&self.r[i], &self.d[i], w, h);
        }
        self.outputs.write(&values, out).map_err(|i| {
            // libvmaf fails the frame ("ms_ssim is INFINITY").
            Error::Internal(format!(
                "float_ms_ssim: the score is infinite at scale {i} (frame {})",
                input.index
            ))
        })
    }
}
