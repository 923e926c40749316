//! Float ADM (libvmaf's `float_adm` extractor, `float_adm.c` + `adm.c` + `adm_tools.c`): the
//! detail-loss measure in single precision, `VMAF_feature_adm2_score` (`adm2`), `aim`, `adm3`
//! and `adm_scale0..3`, with libvmaf's debug values under `debug=true`.
//!
//! Per frame, luma becomes `float` as for float VIF ([`super::picture_copy::to_float`]),
//! then four db2 DWT levels; at each, the distorted detail bands are split into restored detail
//! and additive impairment (decoupling), weighted by the CSF, masked, and pooled with a p-norm
//! over the picture less a 10% border.
//!
//! Host dependence: libvmaf's decoupling divides with RCPSS (an approximate reciprocal) and one
//! Newton step ([`scalar::divs`]). RCPSS's bits are the CPU model's (Intel and AMD differ; qemu
//! computes it exactly), so this uses the instruction itself: the values equal libvmaf run on
//! the same machine, and may differ in the last printed digits between CPU models, as libvmaf's
//! own do.

#![deny(unsafe_code)]

#[cfg(target_arch = "x86_64")]
pub mod rcp;
pub mod scalar;
#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
mod x86_64;

use super::adm::{barten_csf, dwt_quant_step};
use super::options::{OptKind, OptSpec, OptValues};
use super::picture_copy::{check_depth, to_float};
use super::{Extractor, ExtractorConfig, ExtractorDef, FrameInput};
use crate::error::Result;
use crate::picture::PictureFormat;
use scalar::{Bands, Region};

/// Options, with libvmaf's names, aliases, defaults, ranges and FEATURE_PARAM flags
/// (`float_adm.c` `options[]`; `adm_skip_aim_scale` defaults to -1, "none", below its range as
/// in libvmaf).
pub static OPTIONS: &[OptSpec] = &[
    OptSpec {
        name: "debug",
        alias: None,
        kind: OptKind::Bool(false),
        feature_param: false,
    },
    OptSpec {
        name: "adm_enhn_gain_limit",
        alias: Some("egl"),
        kind: OptKind::Double {
            default: 100.0,
            min: 1.0,
            max: 100.0,
        },
        feature_param: true,
    },
    OptSpec {
        name: "adm_norm_view_dist",
        alias: Some("nvd"),
        kind: OptKind::Double {
            default: 3.0,
            min: 0.75,
            max: 24.0,
        },
        feature_param: true,
    },
    OptSpec {
        name: "adm_noise_weight",
        alias: Some("nw"),
        kind: OptKind::Double {
            default: 0.03125,
            min: 0.0,
            max: 1500.0,
        },
        feature_param: true,
    },
    OptSpec {
        name: "adm_csf_scale",
        alias: Some("scf"),
        kind: OptKind::Double {
            default: 1.0,
            min: 0.0,
            max: 50.0,
        },
        feature_param: true,
    },
    OptSpec {
        name: "adm_csf_diag_scale",
        alias: Some("scfd"),
        kind: OptKind::Double {
            default: 1.0,
            min: 0.0,
            max: 50.0,
        },
        feature_param: true,
    },
    OptSpec {
        name: "adm_ref_display_height",
        alias: Some("rdf"),
        kind: OptKind::Int {
            default: 1080,
            min: 1,
            max: 4320,
        },
        feature_param: true,
    },
    OptSpec {
        name: "adm_csf_mode",
        alias: Some("csf"),
        kind: OptKind::Int {
            default: 0,
            min: 0,
            max: 9,
        },
        feature_param: true,
    },
    OptSpec {
        name: "adm_bypass_cm",
        alias: Some("bcm"),
        kind: OptKind::Int {
            default: 0,
            min: 0,
            max: 1,
        },
        feature_param: true,
    },
    OptSpec {
        name: "adm_adm3_apply_hm",
        alias: Some("aah"),
        kind: OptKind::Bool(false),
        feature_param: true,
    },
    OptSpec {
        name: "adm_p_norm",
        alias: Some("apn"),
        kind: OptKind::Double {
            default: 3.0,
            min: 1.0,
            max: 20.0,
        },
        feature_param: true,
    },
    OptSpec {
        name: "adm_dlm_weight",
        alias: Some("dlmw"),
        kind: OptKind::Double {
            default: 0.5,
            min: 0.0,
            max: 1.0,
        },
        feature_param: true,
    },
    OptSpec {
        name: "adm_min_val",
        alias: Some("min"),
        kind: OptKind::Double {
            default: 0.0,
            min: 0.0,
            max: 1.0,
        },
        feature_param: true,
    },
    OptSpec {
        name: "adm_f1s0",
        alias: Some("f1s0"),
        kind: OptKind::Double {
            default: -1.0,
            min: -1.0,
            max: 10.0,
        },
        feature_param: true,
    },
    OptSpec {
        name: "adm_f1s1",
        alias: Some("f1s1"),
        kind: OptKind::Double {
            default: -1.0,
            min: -1.0,
            max: 10.0,
        },
        feature_param: true,
    },
    OptSpec {
        name: "adm_f1s2",
        alias: Some("f1s2"),
        kind: OptKind::Double {
            default: -1.0,
            min: -1.0,
            max: 10.0,
        },
        feature_param: true,
    },
    OptSpec {
        name: "adm_f1s3",
        alias: Some("f1s3"),
        kind: OptKind::Double {
            default: -1.0,
            min: -1.0,
            max: 10.0,
        },
        feature_param: true,
    },
    OptSpec {
        name: "adm_f2s0",
        alias: Some("f2s0"),
        kind: OptKind::Double {
            default: -1.0,
            min: -1.0,
            max: 10.0,
        },
        feature_param: true,
    },
    OptSpec {
        name: "adm_f2s1",
        alias: Some("f2s1"),
        kind: OptKind::Double {
            default: -1.0,
            min: -1.0,
            max: 10.0,
        },
        feature_param: true,
    },
    OptSpec {
        name: "adm_f2s2",
        alias: Some("f2s2"),
        kind: OptKind::Double {
            default: -1.0,
            min: -1.0,
            max: 10.0,
        },
        feature_param: true,
    },
    OptSpec {
        name: "adm_f2s3",
        alias: Some("f2s3"),
        kind: OptKind::Double {
            default: -1.0,
            min: -1.0,
            max: 10.0,
        },
        feature_param: true,
    },
    OptSpec {
        name: "adm_skip_aim_scale",
        alias: Some("sasc"),
        kind: OptKind::Int {
            default: -1,
            min: 0,
            max: 3,
        },
        feature_param: true,
    },
    OptSpec {
        name: "adm_skip_scale0",
        alias: Some("ssz"),
        kind: OptKind::Bool(false),
        feature_param: true,
    },
];

/// Outputs in libvmaf's append order: the scores, then the debug values.
const SPATIAL: &[&str] = &[
    "VMAF_feature_adm2_score",
    "VMAF_feature_aim_score",
    "VMAF_feature_adm3_score",
    "VMAF_feature_adm_scale0_score",
    "VMAF_feature_adm_scale1_score",
    "VMAF_feature_adm_scale2_score",
    "VMAF_feature_adm_scale3_score",
    "adm",
    "adm_num",
    "adm_den",
    "adm_num_scale0",
    "adm_den_scale0",
    "adm_num_scale1",
    "adm_den_scale1",
    "adm_num_scale2",
    "adm_den_scale2",
    "adm_num_scale3",
    "adm_den_scale3",
];

/// Registry entry.
pub static DEF: ExtractorDef = ExtractorDef {
    name: "float_adm",
    options: OPTIONS,
    spatial: SPATIAL,
    // libvmaf appends its debug value `adm` outside its provided features, so options never
    // rename it (`adm`, but `adm_num_egl_1`).
    unsuffixed: &["adm"],
    shows: Some(shows),
    check,
    create,
    ..ExtractorDef::DEFAULTS
};

/// The debug values only with `debug=true`, as libvmaf appends them.
fn shows(o: &OptValues, _: &PictureFormat, name: &str) -> bool {
    o.bool("debug") || SPATIAL[..7].contains(&name)
}

fn check(_: &OptValues, f: &PictureFormat) -> Result<()> {
    check_depth("float_adm", f.bpc)
}

/// libvmaf's `adm_native_csf` (the DLM paper's CSF), with its float/double conversion points.
fn adm_native_csf(lambda: i32, nvd: f64, rdh: i32, theta: i32) -> f32 {
    let r = (nvd * rdh as f64 * std::f64::consts::PI / 180.0) as f32;
    let mut sf = (r as f64 / 2f64.powf((lambda + 1) as f64)) as f32;
    if theta == 45 {
        sf = (sf as f64 / 0.7) as f32;
    }
    ((0.31 + 0.69 * sf as f64) * (-0.29 * sf as f64).exp()) as f32
}

/// The CSF weights `[h, v, d]` of each scale (`factor1`, `factor1`, `factor2`), with the
/// per-scale overrides `adm_f1sN`/`adm_f2sN` when not negative.
pub(crate) fn rfactors(o: &OptValues) -> [[f32; 3]; 4] {
    let nvd = o.f64("adm_norm_view_dist");
    let rdh = o.int("adm_ref_display_height") as i32;
    let lum = 100.0;
    std::array::from_fn(|scale| {
        let s = scale as i32;
        let (mut f1, mut f2) = match o.int("adm_csf_mode") {
            1 => (
                barten_csf(s, nvd, rdh, lum, o.f64("adm_csf_scale")),
                barten_csf(s, nvd, rdh, lum, o.f64("adm_csf_diag_scale")),
            ),
            2 => (
                adm_native_csf(s, nvd, rdh, 0),
                adm_native_csf(s, nvd, rdh, 45),
            ),
            _ => (
                1.0f32 / dwt_quant_step(s, 1, nvd, rdh),
                1.0f32 / dwt_quant_step(s, 2, nvd, rdh),
            ),
        };
        let (o1, o2) = (
            o.f64(&format!("adm_f1s{scale}")),
            o.f64(&format!("adm_f2s{scale}")),
        );
        if o1 >= 0.0 {
            f1 = o1 as f32;
        }
        if o2 >= 0.0 {
            f2 = o2 as f32;
        }
        [f1, f1, f2]
    })
}

/// One instance: options, per-scale geometry and every band buffer of one frame.
struct FloatAdm {
    /// Bit depth (for the float conversion).
    bpc: u8,
    w: usize,
    h: usize,
    /// Band stride and rows (`ceil(w/2)`, `ceil(h/2)`).
    bs: usize,
    gain_limit: f64,
    bypass_cm: bool,
    skip_scale0: bool,
    pooling: Pooling,
    rfactor: [[f32; 3]; 4],
    /// Float pictures (reference, distorted).
    pic: [Vec<f32>; 2],
    /// The previous level's approximation band, the source of the next DWT.
    level: [Vec<f32>; 2],
    dwt: [Bands; 2],
    dec_r: [Vec<f32>; 3],
    dec_a: [Vec<f32>; 3],
    csf_a: [Vec<f32>; 3],
    csf_f: [Vec<f32>; 3],
    tmp: [Vec<f32>; 2],
}

fn create(cfg: &ExtractorConfig) -> Result<Box<dyn Extractor>> {
    check(&cfg.opts, &cfg.format)?;
    let o = &cfg.opts;
    let (w, h) = (cfg.format.width, cfg.format.height);
    let bs = w.div_ceil(2);
    let n = bs * h.div_ceil(2);
    let bands = || std::array::from_fn(|_| vec![0f32; n]);
    Ok(Box::new(FloatAdm {
        bpc: cfg.format.bpc,
        w,
        h,
        bs,
        gain_limit: o.f64("adm_enhn_gain_limit"),
        bypass_cm: o.int("adm_bypass_cm") != 0,
        skip_scale0: o.bool("adm_skip_scale0"),
        pooling: Pooling::new(o),
        rfactor: rfactors(o),
        pic: [vec![0.0; w * h], vec![0.0; w * h]],
        level: [vec![0.0; n], vec![0.0; n]],
        dwt: [Bands::new(n), Bands::new(n)],
        dec_r: bands(),
        dec_a: bands(),
        csf_a: bands(),
        csf_f: bands(),
        tmp: [vec![0.0; w], vec![0.0; w]],
    }))
}

/// The options that act on the sums of a scale and after them: the pooling (`adm_noise_weight`,
/// `adm_p_norm`) and the combination into the outputs. Shared with the CUDA plan, which
/// finishes its device sums with [`scalar::pool`], [`Pooling::combine`] and [`Pooling::write`].
#[derive(Debug, Clone)]
pub(crate) struct Pooling {
    pub(crate) noise_weight: f64,
    pub(crate) p_norm: f64,
    apply_hm: bool,
    dlm_weight: f64,
    min_val: f64,
    skip_aim_scale: i64,
    debug: bool,
}

/// One scale's pooled numerator (DLM), denominator and AIM numerator (`num_scale`, `den_scale`,
/// `aim_scale` of `compute_adm`); `None` for a scale `adm_skip_scale0` skips.
pub(crate) type ScaleValues = Option<(f32, f32, f32)>;

/// What `compute_adm` returns.
pub(crate) struct AdmScores {
    score: f64,
    aim: f64,
    num: f64,
    den: f64,
    scales: [f64; 8],
}

impl Pooling {
    /// From the instance's options.
    pub(crate) fn new(o: &OptValues) -> Self {
        Pooling {
            noise_weight: o.f64("adm_noise_weight"),
            p_norm: o.f64("adm_p_norm"),
            apply_hm: o.bool("adm_adm3_apply_hm"),
            dlm_weight: o.f64("adm_dlm_weight"),
            min_val: o.f64("adm_min_val"),
            skip_aim_scale: o.int("adm_skip_aim_scale"),
            debug: o.bool("debug"),
        }
    }

    /// The end of `compute_adm` for a `w x h` picture: the scales' values summed in `double`
    /// in scale order, the limits and the ratios.
    pub(crate) fn combine(&self, w: usize, h: usize, per_scale: [ScaleValues; 4]) -> AdmScores {
        let numden_limit = 1e-10 * (w * h) as f64 / (1920.0 * 1080.0);
        let (mut num, mut den, mut aim_num, mut aim_den) = (0f64, 0f64, 0f64, 0f64);
        let mut scales = [0f64; 8];
        for (scale, v) in per_scale.into_iter().enumerate() {
            let (num_scale, den_scale, aim_scale) = v.unwrap_or((0f32, 1e-10f64 as f32, 0f32));
            num += num_scale as f64;
            den += den_scale as f64;
            if self.skip_aim_scale != scale as i64 {
                aim_den += den_scale as f64;
                aim_num += aim_scale as f64;
            }
            scales[2 * scale] = num_scale as f64;
            scales[2 * scale + 1] = den_scale as f64;
        }
        let num = if num < numden_limit { 0.0 } else { num };
        let den = if den < numden_limit { 0.0 } else { den };
        let (score, aim) = if den == 0.0 {
            // libvmaf leaves the AIM score unset (uninitialised) here; 0 is reported.
            (1.0, 0.0)
        } else {
            let a = aim_num / aim_den;
            (num / den, if a < 1.0 { a } else { 1.0 })
        };
        AdmScores {
            score,
            aim,
            num,
            den,
            scales,
        }
    }

    /// The extractor's outputs (in [`SPATIAL`] order) from the scores.
    pub(crate) fn write(&self, s: &AdmScores, out: &mut [f64]) {
        let max = |x: f64, y: f64| if x > y { x } else { y };
        out[0] = s.score;
        out[1] = s.aim;
        out[2] = if self.apply_hm {
            max(2.0 * s.score * s.aim / (s.score + s.aim), self.min_val)
        } else {
            max(
                s.score * self.dlm_weight + (1.0 - s.aim) * (1.0 - self.dlm_weight),
                self.min_val,
            )
        };
        for k in 0..4 {
            out[3 + k] = s.scales[2 * k] / s.scales[2 * k + 1];
        }
        if self.debug {
            out[7] = s.score;
            out[8] = s.num;
            out[9] = s.den;
            out[10..18].copy_from_slice(&s.scales);
        }
    }
}

impl FloatAdm {
    /// libvmaf's `compute_adm`.
    fn compute(&mut self) -> AdmScores {
        let (mut w, mut h) = (self.w, self.h);
        let bs = self.bs;
        let p = self.pooling.p_norm;
        let noise_weight = self.pooling.noise_weight;
        let mut per_scale: [ScaleValues; 4] = [None; 4];
        for (scale, values) in per_scale.iter_mut().enumerate() {
            let iy = scalar::src_indices(h);
            let ix = scalar::src_indices(w);
            let lo_only = scale == 0 && self.skip_scale0;
            for k in 0..2 {
                let (src, stride) = if scale == 0 {
                    (&self.pic[k], self.w)
                } else {
                    std::mem::swap(&mut self.level[k], &mut self.dwt[k].a);
                    (&self.level[k], bs)
                };
                scalar::dwt2(
                    src,
                    stride,
                    w,
                    &iy,
                    &ix,
                    &mut self.dwt[k],
                    bs,
                    &mut self.tmp,
                    lo_only,
                );
            }
            w = w.div_ceil(2);
            h = h.div_ceil(2);
            if lo_only {
                continue;
            }
            let rf = self.rfactor[scale];
            let reg = Region::taps(w, h);
            let [rd, dd] = &self.dwt;
            scalar::decouple(
                rd,
                dd,
                &mut self.dec_r,
                &mut self.dec_a,
                reg,
                bs,
                self.gain_limit,
            );
            let den_scale = scalar::den_scale(rd, rf, w, h, bs, p, noise_weight);
            // DLM: the restored detail, masked by the CSF-weighted impairment.
            scalar::csf(&self.dec_a, &mut self.csf_a, &mut self.csf_f, rf, reg, bs);
            let num_scale = scalar::cm(
                &self.dec_r,
                &self.csf_f,
                &self.csf_a,
                rf,
                w,
                h,
                bs,
                p,
                noise_weight,
                self.bypass_cm,
            );
            // AIM: the impairment, masked by the CSF-weighted restored detail (the two
            // buffers swap roles, as in libvmaf).
            scalar::csf(&self.dec_r, &mut self.csf_f, &mut self.csf_a, rf, reg, bs);
            let aim_scale = scalar::cm(
                &self.dec_a,
                &self.csf_a,
                &self.csf_f,
                rf,
                w,
                h,
                bs,
                p,
                0.0,
                self.bypass_cm,
            );
            *values = Some((num_scale, den_scale, aim_scale));
        }
        self.pooling.combine(self.w, self.h, per_scale)
    }
}

impl Extractor for FloatAdm {
    fn extract(&mut self, input: &FrameInput<'_>, out: &mut [f64]) -> Result<()> {
        to_float(&input.reference, self.bpc, -128, &mut self.pic[0]);
        to_float(&input.distorted, self.bpc, -128, &mut self.pic[1]);
        let s = self.compute();
        self.pooling.write(&s, out);
        Ok(())
    }
}
