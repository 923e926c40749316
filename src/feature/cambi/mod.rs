//! `cambi`: libvmaf's Contrast Aware Multiscale Banding Index of the distorted luma (and with
//! `full_ref` also of the reference: `cambi_source`, and `cambi_full_reference`, the distorted
//! score less the source's, at least 0).
//!
//! As libvmaf (`feature/cambi.c`), per picture: resample to the encoding size (nearest
//! neighbour) and convert to 10 bits, anti-dither below 10-bit encodes (`preprocess`); mark
//! the flat pixels (`mask`); then at five scales (halving between them): the 3x3 mode filter
//! (`filter`), every masked pixel's c-value from window histograms (`cvalues`), and the mean
//! of the top `topk` share (`pooling`); the scales are weighted into the score, clipped to
//! `cambi_max_val`. libvmaf's AVX2 kernels for cambi are integer or repeat its C code's float
//! operations, so the result is the same on every host.
//!
//! The c-value rows, the hot loop, are dispatched through `cvalues::Kernels`, chosen once per
//! instance from [`crate::cpu::cpu_level`]; the `unsafe` of the AVX2 peer stays in its module.
#![deny(unsafe_code)]

pub(crate) mod cvalues;
mod filter;
pub(crate) mod heatmap;
mod luminance;
pub(crate) mod lut;
pub(crate) mod mask;
pub(crate) mod pooling;
pub(crate) mod preprocess;
pub(crate) mod setup;
#[cfg(test)]
mod tests;
#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
mod x86_64_avx2;

use super::options::{OptKind, OptSpec};
use super::{Extractor, ExtractorConfig, ExtractorDef, FrameInput};
use crate::error::Result;
use crate::picture::{PictureFormat, Plane};
use heatmap::Heatmaps;
use setup::{Setup, Target, NUM_SCALES};

/// Options, in libvmaf's order with its names, aliases, defaults and ranges.
pub static OPTIONS: &[OptSpec] = &[
    OptSpec {
        name: "cambi_max_val",
        alias: Some("cmxv"),
        kind: OptKind::Double {
            default: 1000.0,
            min: 0.0,
            max: 1000.0,
        },
        feature_param: true,
    },
    OptSpec {
        name: "enc_width",
        alias: Some("encw"),
        kind: OptKind::Int {
            default: 0,
            min: 180,
            max: 7680,
        },
        feature_param: true,
    },
    OptSpec {
        name: "enc_height",
        alias: Some("ench"),
        kind: OptKind::Int {
            default: 0,
            min: 150,
            max: 7680,
        },
        feature_param: true,
    },
    OptSpec {
        name: "enc_bitdepth",
        alias: Some("encbd"),
        kind: OptKind::Int {
            default: 0,
            min: 6,
            max: 16,
        },
        feature_param: true,
    },
    OptSpec {
        name: "src_width",
        alias: Some("srcw"),
        kind: OptKind::Int {
            default: 0,
            min: 320,
            max: 7680,
        },
        feature_param: true,
    },
    OptSpec {
        name: "src_height",
        alias: Some("srch"),
        kind: OptKind::Int {
            default: 0,
            min: 200,
            max: 4320,
        },
        feature_param: true,
    },
    OptSpec {
        name: "window_size",
        alias: Some("ws"),
        kind: OptKind::Int {
            default: 65,
            min: 15,
            max: 127,
        },
        feature_param: true,
    },
    OptSpec {
        name: "topk",
        alias: None,
        kind: OptKind::Double {
            default: setup::DEFAULT_TOPK,
            min: 0.0001,
            max: 1.0,
        },
        feature_param: true,
    },
    OptSpec {
        name: "cambi_topk",
        alias: Some("ctpk"),
        kind: OptKind::Double {
            default: setup::DEFAULT_TOPK,
            min: 0.0001,
            max: 1.0,
        },
        feature_param: true,
    },
    OptSpec {
        name: "tvi_threshold",
        alias: Some("tvit"),
        kind: OptKind::Double {
            default: 0.019,
            min: 0.0001,
            max: 1.0,
        },
        feature_param: true,
    },
    OptSpec {
        name: "cambi_vis_lum_threshold",
        alias: Some("vlt"),
        kind: OptKind::Double {
            default: 0.0,
            min: 0.0,
            max: 300.0,
        },
        feature_param: true,
    },
    OptSpec {
        name: "max_log_contrast",
        alias: Some("mlc"),
        kind: OptKind::Int {
            default: 2,
            min: 0,
            max: 5,
        },
        feature_param: true,
    },
    OptSpec {
        name: "heatmaps_path",
        alias: None,
        kind: OptKind::Text,
        feature_param: false,
    },
    OptSpec {
        name: "full_ref",
        alias: None,
        kind: OptKind::Bool(false),
        feature_param: false,
    },
    OptSpec {
        name: "eotf",
        alias: None,
        kind: OptKind::Choice {
            default: "bt1886",
            choices: &["bt1886", "pq"],
        },
        feature_param: true,
    },
    OptSpec {
        name: "cambi_eotf",
        alias: Some("ceot"),
        kind: OptKind::Choice {
            default: "bt1886",
            choices: &["bt1886", "pq"],
        },
        feature_param: true,
    },
    OptSpec {
        name: "cambi_high_res_speedup",
        alias: Some("hrs"),
        kind: OptKind::Int {
            default: 0,
            min: 0,
            max: 2160,
        },
        feature_param: true,
    },
];

/// Outputs in libvmaf's append order. Only the first is one of its `provided_features`, so
/// only it carries option suffixes.
const SPATIAL: &[&str] = &[
    "Cambi_feature_cambi_score",
    "cambi_source",
    "cambi_full_reference",
];

/// Registry entry.
pub static DEF: ExtractorDef = ExtractorDef {
    name: "cambi",
    options: OPTIONS,
    spatial: SPATIAL,
    unsuffixed: &SPATIAL_PLAIN,
    shows: Some(|o, _, name| name == SPATIAL[0] || o.bool("full_ref")),
    check,
    create,
    ..ExtractorDef::DEFAULTS
};

const SPATIAL_PLAIN: [&str; 2] = ["cambi_source", "cambi_full_reference"];

fn check(o: &super::options::OptValues, f: &PictureFormat) -> Result<()> {
    let s = Setup::new(o, f)?;
    preprocess::resampling((f.width, f.height), (s.enc.width, s.enc.height))?;
    if s.full_ref {
        preprocess::resampling((f.width, f.height), (s.src.width, s.src.height))?;
    }
    Ok(())
}

/// Index maps of a resampling (`None`: same size).
type Resampling = Option<(Vec<usize>, Vec<usize>)>;

struct Cambi {
    setup: Setup,
    bpc: u8,
    /// The working picture, in libvmaf's layout (`stride` samples a row, `alloc` rows): what
    /// libvmaf's unscaled 10-bit copy leaves in it depends on that layout.
    image: Vec<u16>,
    /// The mask, same layout.
    mask: Vec<u16>,
    stride: usize,
    c: Vec<f32>,
    hist: Vec<u16>,
    /// Two rows of band keys for the histogram slide.
    keys: Vec<u16>,
    lines: Vec<u16>,
    mask_scratch: mask::MaskScratch,
    enc_map: Resampling,
    src_map: Resampling,
    heatmaps: Option<Heatmaps>,
    lut: &'static [f32],
    /// Per band row, the contrast steps that count ([`cvalues::active_steps`]).
    active: Vec<u32>,
    kernels: cvalues::Kernels,
}

fn create(cfg: &ExtractorConfig) -> Result<Box<dyn Extractor>> {
    Ok(Box::new(Cambi::new(cfg)?))
}

impl Cambi {
    /// An instance with its scratch for the stream, and the heatmap files created.
    fn new(cfg: &ExtractorConfig) -> Result<Cambi> {
        let (o, f) = (&cfg.opts, &cfg.format);
        let setup = Setup::new(o, f)?;
        let enc_map =
            preprocess::resampling((f.width, f.height), (setup.enc.width, setup.enc.height))?;
        let src_map = if setup.full_ref {
            preprocess::resampling((f.width, f.height), (setup.src.width, setup.src.height))?
        } else {
            None
        };
        let (aw, ah) = setup.alloc;
        let stride = preprocess::libvmaf_stride(aw);
        let heatmaps = match o.text("heatmaps_path") {
            Some(dir) => Some(Heatmaps::create(dir, &setup)?),
            None => None,
        };
        Ok(Cambi {
            bpc: f.bpc,
            image: vec![0; stride * ah],
            mask: vec![0; stride * ah],
            stride,
            c: vec![0.0; aw * ah],
            hist: vec![0; setup.band.size as usize * aw + cvalues::HIST_PAD],
            lines: vec![0; 3 * aw],
            keys: vec![0; 2 * aw],
            mask_scratch: mask::MaskScratch::new(aw),
            enc_map,
            src_map,
            heatmaps,
            lut: lut::reciprocals(),
            active: cvalues::active_steps(setup.band, &setup.tvi, setup.vlt_luma),
            kernels: cvalues::Kernels::for_level(crate::cpu::cpu_level()),
            setup,
        })
    }

    /// The CAMBI score of one picture (unclipped), writing the heatmaps for the distorted one.
    fn score(&mut self, pic: &Plane<'_>, is_src: bool, frame: u64) -> Result<f64> {
        preprocess::validate(pic, self.bpc)?;
        let (t, map): (Target, _) = if is_src {
            (self.setup.src, self.src_map.as_ref())
        } else {
            (self.setup.enc, self.enc_map.as_ref())
        };
        let (w, h, st) = (t.width, t.height, self.stride);
        preprocess::to_10bit(pic, self.bpc, map, &mut self.image, st, (w, h));
        if self.setup.enc_bitdepth < 10 {
            preprocess::anti_dither(&mut self.image, st, w, h);
        }
        mask::spatial_mask(
            &self.image,
            &mut self.mask,
            st,
            w,
            h,
            &mut self.mask_scratch,
        );
        let params = cvalues::Params {
            band: self.setup.band,
            active: &self.active,
            lut: self.lut,
        };
        let pad = (t.window >> 1) as usize;
        let mut scores = [0.0f64; NUM_SCALES];
        for (s, (sw, sh)) in t.scale_sizes(self.setup.speedup).into_iter().enumerate() {
            if s > 0 || self.setup.speedup {
                filter::decimate(&mut self.image, st, sw, sh);
                filter::decimate(&mut self.mask, st, sw, sh);
            }
            filter::filter_mode(&mut self.image, st, sw, sh, &mut self.lines);
            cvalues::c_values(
                &self.kernels,
                &mut self.c,
                &mut self.hist,
                &mut self.keys,
                &self.image,
                &self.mask,
                st,
                (sw, sh),
                pad,
                &params,
            );
            if let (Some(hm), false) = (self.heatmaps.as_mut(), is_src) {
                hm.write(s, frame, &self.c, sw, sh)?;
            }
            scores[s] = pooling::spatial_pooling(&mut self.c[..sw * sh], self.setup.topk);
        }
        Ok(pooling::weight_scores(&scores, t.window))
    }
}

/// C's `MIN(x, y)`.
fn min(x: f64, y: f64) -> f64 {
    if x < y {
        x
    } else {
        y
    }
}

/// The outputs from the unclipped scores of the distorted picture and, with `full_ref`, of the
/// reference (shared with the CUDA plan): each clipped to `max`, the difference at least 0.
pub(crate) fn write_outputs(max: f64, dist: f64, src: Option<f64>, out: &mut [f64]) {
    out[0] = min(dist, max);
    if let Some(src) = src {
        out[1] = min(src, max);
        let diff = dist - src;
        out[2] = min(if 0.0 > diff { 0.0 } else { diff }, max);
    }
}

impl Extractor for Cambi {
    fn extract(&mut self, input: &FrameInput<'_>, out: &mut [f64]) -> Result<()> {
        let dist = self.score(&input.distorted, false, input.index)?;
        let src = if self.setup.full_ref {
            Some(self.score(&input.reference, true, input.index)?)
        } else {
            None
        };
        write_outputs(self.setup.max_val, dist, src, out);
        Ok(())
    }
}
