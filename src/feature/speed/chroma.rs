//! `speed_chroma`: SpEED of the Cb and Cr planes (`Speed_chroma_feature_speed_chroma_u_score`,
//! `_v_score`, `_uv_score`, logged as `speed_chroma_u`, `_v`, `_uv`), each clipped to
//! `speed_max_val`. `uv` is the mean of the two, or the one plane's score when the other's
//! covariance matrix could not be inverted (libvmaf's imputation for flat planes).
#![forbid(unsafe_code)]

use super::{check as check_plane, Params, Speed, KERNELSCALE, MAX_VAL, NN_FLOOR, PRESCALE};
use super::{PRESCALE_METHOD, SIGMA_NN};
use crate::cpu::cpu_level;
use crate::error::{Error, Result};
use crate::feature::options::{OptKind, OptSpec, OptValues};
use crate::feature::picture_copy::{check_depth, to_float};
use crate::feature::{Extractor, ExtractorConfig, ExtractorDef, FrameInput};
use crate::picture::{ChromaLayout, PictureFormat};

/// Options, with libvmaf's names, aliases, defaults, ranges and FEATURE_PARAM flags
/// (`speed.c` `options_chroma[]`, in its order).
pub static OPTIONS: &[OptSpec] = &[
    KERNELSCALE,
    PRESCALE,
    PRESCALE_METHOD,
    SIGMA_NN,
    NN_FLOOR,
    MAX_VAL,
    OptSpec {
        name: "speed_weight_var_mode",
        alias: Some("wvm"),
        kind: OptKind::Int {
            default: 0,
            min: 0,
            max: 6,
        },
        feature_param: true,
    },
];

/// Outputs, in libvmaf's append order.
const SPATIAL: &[&str] = &[
    "Speed_chroma_feature_speed_chroma_u_score",
    "Speed_chroma_feature_speed_chroma_v_score",
    "Speed_chroma_feature_speed_chroma_uv_score",
];

/// Registry entry.
pub static DEF: ExtractorDef = ExtractorDef {
    name: "speed_chroma",
    options: OPTIONS,
    spatial: SPATIAL,
    reads_chroma: |_, _| true,
    check,
    create,
    ..ExtractorDef::DEFAULTS
};

/// libvmaf's chroma plane size (`init_chroma`: `w / 2` and, for 4:2:0, `h / 2`).
pub fn chroma_size(f: &PictureFormat) -> (usize, usize) {
    match f.layout {
        ChromaLayout::Yuv420 => (f.width / 2, f.height / 2),
        ChromaLayout::Yuv422 => (f.width / 2, f.height),
        _ => (f.width, f.height),
    }
}

/// The core's parameters of an instance's options.
pub fn params(o: &OptValues) -> Params {
    Params::from_opts(o, o.int("speed_weight_var_mode"))
}

fn check(o: &OptValues, f: &PictureFormat) -> Result<()> {
    if f.layout == ChromaLayout::Gray {
        return Err(Error::Unsupported(
            "feature speed_chroma: 4:0:0 input, which has no chroma (libvmaf's speed_chroma \
             refuses it too; its FFmpeg filter first makes it 4:2:0 with flat chroma, where \
             every score is 0); give 4:2:0, 4:2:2 or 4:4:4 input, e.g. with format=yuv420p"
                .into(),
        ));
    }
    check_depth("speed_chroma", f.bpc)?;
    let (w, h) = chroma_size(f);
    check_plane("speed_chroma", &params(o), w, h, "chroma")
}

/// One instance: the core and the two float planes of one chroma channel.
struct SpeedChroma {
    bpc: u8,
    max_val: f64,
    core: Speed,
    planes: [Vec<f32>; 2],
}

fn create(cfg: &ExtractorConfig) -> Result<Box<dyn Extractor>> {
    check(&cfg.opts, &cfg.format)?;
    let (w, h) = chroma_size(&cfg.format);
    Ok(Box::new(SpeedChroma {
        bpc: cfg.format.bpc,
        max_val: cfg.opts.f64("speed_max_val"),
        core: Speed::new(params(&cfg.opts), w, h, cfg.libvmaf_isa, cpu_level()),
        planes: [vec![0.0; w * h], vec![0.0; w * h]],
    }))
}

/// C's `MIN(x, y)`: `x < y ? x : y`, in `double`.
fn c_min(x: f64, y: f64) -> f64 {
    if x < y {
        x
    } else {
        y
    }
}

/// The three outputs (u, v, uv) from the Cb and Cr planes' (score, error) pairs: one singular
/// channel's score stands for both in uv; each clipped to `speed_max_val`.
pub fn outputs(scores: [(f32, bool); 2], max_val: f64) -> [f64; 3] {
    let [(u, err_u), (v, err_v)] = scores;
    let uv = match (err_u, err_v) {
        (true, false) => v,
        (false, true) => u,
        _ => ((u + v) as f64 / 2.0) as f32,
    };
    [u, v, uv].map(|s| c_min(s as f64, max_val))
}

impl Extractor for SpeedChroma {
    fn extract(&mut self, input: &FrameInput<'_>, out: &mut [f64]) -> Result<()> {
        let missing = || Error::Internal("speed_chroma: the engine passed no chroma".into());
        let r = input.reference_chroma.ok_or_else(missing)?;
        let d = input.distorted_chroma.ok_or_else(missing)?;
        let mut scores = [(0f32, false); 2];
        for (c, s) in scores.iter_mut().enumerate() {
            let [pr, pd] = &mut self.planes;
            to_float(&r[c], self.bpc, -128, pr);
            to_float(&d[c], self.bpc, -128, pd);
            *s = self.core.score(pr, pd);
        }
        out[..3].copy_from_slice(&outputs(scores, self.max_val));
        Ok(())
    }
}
