//! `speed_temporal`: SpEED of consecutive luma frames' differences
//! (`Speed_temporal_feature_speed_temporal_score`, logged as `speed_temporal`): the core compares
//! `previous - current` of the reference with `previous - current` of the distorted video (with
//! `speed_use_ref_diff`, the previous distorted frame less the *current reference*, as libvmaf
//! subtracts). Frame 0 scores 0. libvmaf applies neither `speed_max_val` (it only names the
//! feature) nor a weighting mode here (`speed_weight_var_mode` is not an option: mode 0).
#![forbid(unsafe_code)]

use super::{check as check_plane, Params, Speed, KERNELSCALE, MAX_VAL, NN_FLOOR, PRESCALE};
use super::{Dims, PRESCALE_METHOD, SIGMA_NN};
use crate::cpu::cpu_level;
use crate::error::{Error, Result};
use crate::feature::options::{fmt_g, OptKind, OptSpec, OptValues};
use crate::feature::picture_copy::{check_depth, to_float};
use crate::feature::{Extractor, ExtractorConfig, ExtractorDef, FrameInput};
use crate::picture::PictureFormat;

/// Options, with libvmaf's names, aliases, defaults, ranges and FEATURE_PARAM flags
/// (`speed.c` `options[]`, in its order).
pub static OPTIONS: &[OptSpec] = &[
    KERNELSCALE,
    PRESCALE,
    PRESCALE_METHOD,
    SIGMA_NN,
    NN_FLOOR,
    MAX_VAL,
    OptSpec {
        name: "speed_use_ref_diff",
        alias: Some("urd"),
        kind: OptKind::Bool(false),
        feature_param: true,
    },
];

/// Registry entry: reads the previous reference and distorted luma (libvmaf's
/// `VMAF_FEATURE_EXTRACTOR_TEMPORAL`, two frame buffers of each).
pub static DEF: ExtractorDef = ExtractorDef {
    name: "speed_temporal",
    options: OPTIONS,
    spatial: &["Speed_temporal_feature_speed_temporal_score"],
    needs_prev_ref: true,
    needs_prev_dis: true,
    check,
    create,
    ..ExtractorDef::DEFAULTS
};

/// The core's parameters of an instance's options.
pub fn params(o: &OptValues) -> Params {
    Params::from_opts(o, 0)
}

fn check(o: &OptValues, f: &PictureFormat) -> Result<()> {
    check_depth("speed_temporal", f.bpc)?;
    let p = params(o);
    check_plane("speed_temporal", &p, f.width, f.height, "luma")?;
    let d = Dims::new(f.width, f.height, p.prescale);
    if d.sh > f.height {
        // speed_temporal's frame buffers hold the input's rows only; the rescale writes past them
        // into the neighbouring frame buffers.
        return Err(Error::Unsupported(format!(
            "feature speed_temporal: speed_prescale={} makes the picture {} rows high, more \
             than the {} libvmaf's speed_temporal keeps a frame in (it writes past its frame \
             buffers, so its scores are not defined); use a speed_prescale of at most 1",
            fmt_g(p.prescale),
            d.sh,
            f.height
        )));
    }
    Ok(())
}

/// One instance: the core and the float differences of the reference and distorted frames.
struct SpeedTemporal {
    bpc: u8,
    use_ref_diff: bool,
    core: Speed,
    /// The previous frame's float luma, then its difference with the current one (reference,
    /// distorted), and the current frame's float luma.
    diff: [Vec<f32>; 2],
    current: Vec<f32>,
}

fn create(cfg: &ExtractorConfig) -> Result<Box<dyn Extractor>> {
    check(&cfg.opts, &cfg.format)?;
    let (w, h) = (cfg.format.width, cfg.format.height);
    Ok(Box::new(SpeedTemporal {
        bpc: cfg.format.bpc,
        use_ref_diff: cfg.opts.bool("speed_use_ref_diff"),
        core: Speed::new(params(&cfg.opts), w, h, cfg.libvmaf_isa, cpu_level()),
        diff: [vec![0.0; w * h], vec![0.0; w * h]],
        current: vec![0.0; w * h],
    }))
}

/// `subtract_image`: `a -= b`, in `float`.
fn subtract(a: &mut [f32], b: &[f32]) {
    for (x, &y) in a.iter_mut().zip(b) {
        *x -= y;
    }
}

impl Extractor for SpeedTemporal {
    fn extract(&mut self, input: &FrameInput<'_>, out: &mut [f64]) -> Result<()> {
        let (Some(prev_ref), Some(prev_dis)) = (input.prev_reference, input.prev_distorted) else {
            out[0] = 0.0;
            return Ok(());
        };
        let [dr, dd] = &mut self.diff;
        to_float(&prev_ref, self.bpc, -128, dr);
        to_float(&prev_dis, self.bpc, -128, dd);
        to_float(&input.reference, self.bpc, -128, &mut self.current);
        subtract(dr, &self.current);
        if !self.use_ref_diff {
            to_float(&input.distorted, self.bpc, -128, &mut self.current);
        }
        subtract(dd, &self.current);
        out[0] = self.core.score(dr, dd).0 as f64;
        Ok(())
    }
}
