//! Integer ADM (libvmaf's `adm` extractor): the Detail Loss Metric (`adm2`), the Additive
//! Impairment Measure (`aim`), their blend (`adm3`) and the four per-scale ratios, bit-exact with
//! libvmaf's `integer_adm.c` in each of its host variants: its C code, or its x86 AVX2 or AVX-512
//! kernels, which differ in the last column of the scale-0 DWT at some widths ([`LibvmafIsa`],
//! see [`scalar::dwt2_s0`]).
//!
//! Pipeline per frame, for scales 0..3: integer DWT of reference and distorted (scale 0 from the
//! picture into `i16` bands, scales 1..3 from the previous approximation band into `i32` bands),
//! decoupling of the distorted detail bands into restored (`r`) and additive (`a`) parts,
//! contrast-sensitivity weighting, contrast masking, and cube-root pooling. The arithmetic lives
//! in [`scalar`] (the specification for SIMD/GPU peers); this file owns the buffers, the
//! per-scale constants and the final score formulas.
//!
//! The kernels a SIMD level may replace are dispatched through [`Kernels`], chosen once per
//! instance from [`crate::cpu::cpu_level`] (the same table shape as `vif::Kernels`); the
//! `unsafe` of the SIMD peers stays in their arch modules.
#![deny(unsafe_code)]

mod kernels;
pub mod scalar;
pub mod tables;
#[cfg(test)]
mod tests;
#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
mod x86_64_avx2;

use std::f64::consts::PI;

use super::options::{OptKind, OptSpec, OptValues};
use super::{Extractor, ExtractorConfig, ExtractorDef, FrameInput};
use crate::cpu::{cpu_level, CpuLevel};
use crate::error::{Error, Result};
use crate::fidelity::LibvmafIsa;
use crate::picture::{Plane, Samples};
pub use kernels::{
    CmS0Interior, CmS123Interior, CsfS0, CsfS123, DecoupleS0, DwtS0Horizontal, DwtS0Sample,
    DwtS0Vertical, DwtS123Horizontal, DwtS123Sample, DwtS123Vertical, Kernels,
};
use scalar::{CmShiftsS0, QuadMut, Region};
use tables::*;

/// Options, as libvmaf's integer ADM defines them (same names, aliases, defaults, ranges and
/// feature-parameter flags, in libvmaf's order).
pub static OPTIONS: &[OptSpec] = &[
    OptSpec {
        name: "debug",
        alias: None,
        kind: OptKind::Bool(false),
        feature_param: false,
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
        name: "adm_enhn_gain_limit",
        alias: Some("egl"),
        kind: OptKind::Double {
            default: DEFAULT_ENHN_GAIN_LIMIT,
            min: 1.0,
            max: DEFAULT_ENHN_GAIN_LIMIT,
        },
        feature_param: true,
    },
    OptSpec {
        name: "adm_norm_view_dist",
        alias: Some("nvd"),
        kind: OptKind::Double {
            default: DEFAULT_NORM_VIEW_DIST,
            min: 0.75,
            max: 24.0,
        },
        feature_param: true,
    },
    OptSpec {
        name: "adm_ref_display_height",
        alias: Some("rdh"),
        kind: OptKind::Int {
            default: DEFAULT_REF_DISPLAY_HEIGHT,
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
            max: 3,
        },
        feature_param: true,
    },
    OptSpec {
        name: "adm_noise_weight",
        alias: Some("nw"),
        kind: OptKind::Double {
            default: DEFAULT_NOISE_WEIGHT,
            min: 0.0,
            max: 1500.0,
        },
        feature_param: true,
    },
    OptSpec {
        name: "adm_skip_aim",
        alias: None,
        kind: OptKind::Bool(false),
        feature_param: false,
    },
    OptSpec {
        name: "adm_skip_scale0",
        alias: Some("ssz"),
        kind: OptKind::Bool(false),
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
];

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
    ..ExtractorDef::DEFAULTS
};

/// libvmaf's contrast sensitivity functions (`adm_csf_mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CsfMode {
    /// 0: Watson et al. 1997 noise-floor model (the default).
    Watson97,
    /// 1: Barten's CSF as simplified in HDR-VDP 2.
    Barten,
    /// 2: tabulated Barten/Watson blend.
    BartenWatsonBlend,
    /// 3: tabulated Barten/Watson blend with the v1.0.17 L1 fix.
    BartenWatsonBlendMae,
}

/// Resolved option values of one ADM instance.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AdmParams {
    /// `adm_enhn_gain_limit`.
    pub enhn_gain_limit: f64,
    /// `adm_norm_view_dist`.
    pub norm_view_dist: f64,
    /// `adm_ref_display_height`.
    pub ref_display_height: i32,
    /// `adm_csf_mode`.
    pub csf_mode: CsfMode,
    /// `adm_csf_scale` (Barten only, as in libvmaf).
    pub csf_scale: f64,
    /// `adm_csf_diag_scale` (Barten only, as in libvmaf).
    pub csf_diag_scale: f64,
    /// `adm_dlm_weight`.
    pub dlm_weight: f64,
    /// `adm_noise_weight`.
    pub noise_weight: f64,
    /// `adm_skip_aim`.
    pub skip_aim: bool,
    /// `adm_skip_scale0`.
    pub skip_scale0: bool,
    /// `adm_min_val`.
    pub min_val: f64,
}

impl Default for AdmParams {
    fn default() -> Self {
        AdmParams {
            enhn_gain_limit: DEFAULT_ENHN_GAIN_LIMIT,
            norm_view_dist: DEFAULT_NORM_VIEW_DIST,
            ref_display_height: DEFAULT_REF_DISPLAY_HEIGHT as i32,
            csf_mode: CsfMode::Watson97,
            csf_scale: 1.0,
            csf_diag_scale: 1.0,
            dlm_weight: 0.5,
            noise_weight: DEFAULT_NOISE_WEIGHT,
            skip_aim: false,
            skip_scale0: false,
            min_val: 0.0,
        }
    }
}

impl AdmParams {
    /// Reads the values from an option table built from [`OPTIONS`].
    pub fn from_opts(o: &OptValues) -> Self {
        AdmParams {
            enhn_gain_limit: o.f64("adm_enhn_gain_limit"),
            norm_view_dist: o.f64("adm_norm_view_dist"),
            ref_display_height: o.int("adm_ref_display_height") as i32,
            csf_mode: match o.int("adm_csf_mode") {
                1 => CsfMode::Barten,
                2 => CsfMode::BartenWatsonBlend,
                3 => CsfMode::BartenWatsonBlendMae,
                _ => CsfMode::Watson97,
            },
            csf_scale: o.f64("adm_csf_scale"),
            csf_diag_scale: o.f64("adm_csf_diag_scale"),
            dlm_weight: o.f64("adm_dlm_weight"),
            noise_weight: o.f64("adm_noise_weight"),
            skip_aim: o.bool("adm_skip_aim"),
            skip_scale0: o.bool("adm_skip_scale0"),
            min_val: o.f64("adm_min_val"),
        }
    }

    /// The CSF weights `[h, v, d]` of a scale (libvmaf computes `factor1` for h and v, `factor2`
    /// for d, in `float`).
    pub fn rfactor(&self, scale: usize) -> [f32; 3] {
        let (nvd, rdh, s) = (self.norm_view_dist, self.ref_display_height, scale as i32);
        let (f1, f2) = match self.csf_mode {
            CsfMode::Barten => (
                barten_csf(s, nvd, rdh, DEFAULT_CSF_LUM, self.csf_scale),
                barten_csf(s, nvd, rdh, DEFAULT_CSF_LUM, self.csf_diag_scale),
            ),
            CsfMode::BartenWatsonBlend => (
                blend_csf(&BLENDED_CSF, scale, 0, nvd, rdh),
                blend_csf(&BLENDED_CSF, scale, 1, nvd, rdh),
            ),
            CsfMode::BartenWatsonBlendMae => (
                blend_csf(&BLENDED_CSF_MAE, scale, 0, nvd, rdh),
                blend_csf(&BLENDED_CSF_MAE, scale, 1, nvd, rdh),
            ),
            CsfMode::Watson97 => (
                1.0f32 / dwt_quant_step(s, 1, nvd, rdh),
                1.0f32 / dwt_quant_step(s, 2, nvd, rdh),
            ),
        };
        [f1, f1, f2]
    }

    /// Scale-0 fixed-point CSF weights (h, v in Q21, d in Q23); libvmaf hard-codes them for the
    /// default geometry with the Watson CSF.
    pub fn i_rfactor_s0(&self) -> [u16; 3] {
        let dvr = self.norm_view_dist * self.ref_display_height as f64;
        let def = DEFAULT_NORM_VIEW_DIST * DEFAULT_REF_DISPLAY_HEIGHT as f64;
        if (dvr - def).abs() < 1.0e-8 && self.csf_mode == CsfMode::Watson97 {
            return DEFAULT_I_RFACTOR_S0;
        }
        let rf = self.rfactor(0);
        let (p21, p23) = (2f64.powf(21.0), 2f64.powf(23.0));
        [
            scalar::c_f64_to_u16(rf[0] as f64 * p21),
            scalar::c_f64_to_u16(rf[1] as f64 * p21),
            scalar::c_f64_to_u16(rf[2] as f64 * p23),
        ]
    }

    /// Scale-1..3 fixed-point CSF weights in Q32.
    pub fn i_rfactor_s123(&self, scale: usize) -> [u32; 3] {
        let p32 = 2f64.powf(32.0);
        self.rfactor(scale)
            .map(|f| scalar::c_f64_to_u32(f as f64 * p32))
    }
}

/// Watson et al.'s DWT quantisation step `Q(lambda, theta)` for luma (libvmaf `dwt_quant_step`,
/// with its float/double conversion points).
pub fn dwt_quant_step(lambda: i32, theta: usize, nvd: f64, rdh: i32) -> f32 {
    let p = &WATSON_Y;
    let r = (nvd * rdh as f64 * PI / 180.0) as f32;
    let temp = (2f64.powf((lambda + 1) as f64) * p.f0 as f64 * p.g[theta] as f64 / r as f64).log10()
        as f32;
    let kt = p.k * temp * temp;
    (2.0 * p.a as f64 * 10f64.powf(kt as f64) / BASIS_AMPLITUDES[lambda as usize][theta] as f64)
        as f32
}

fn linear_interpolate(lp: f32, lv: f32, rp: f32, rv: f32, sp: f32) -> f32 {
    lv + ((rv - lv) / (rp - lp)) * (sp - lp)
}

fn barten_rod_cone_sens(lum: f32) -> f32 {
    let base = (BARTEN_SA[1] / lum) as f64;
    (BARTEN_SA[0] as f64 * (base.powf(BARTEN_SA[2] as f64) + 1.0).powf((-BARTEN_SA[3]) as f64))
        as f32
}

fn barten_mtf(sf: f32) -> f32 {
    let mut mtf = 0f32;
    for i in 0..4 {
        mtf = (mtf as f64 + BARTEN_MTF_A[i] as f64 * ((-BARTEN_MTF_B[i] * sf) as f64).exp()) as f32;
    }
    mtf
}

/// Barten's CSF as libvmaf evaluates it (`barten_csf_tools.h`, `barten_csf`).
pub fn barten_csf(lambda: i32, nvd: f64, rdh: i32, lum: f64, csf_scale: f64) -> f32 {
    let r = (nvd * rdh as f64 * PI / 180.0) as f32;
    let sf = (r as f64 / 2f64.powf((lambda + 1) as f64)) as f32;
    let (lo, hi) = (
        BARTEN_PARAM_ANCHORS[0] as f64,
        BARTEN_PARAM_ANCHORS[5] as f64,
    );
    let clamped = if lum > hi {
        hi
    } else if lum < lo {
        lo
    } else {
        lum
    };
    let (mut li, mut ri) = (0usize, 0usize);
    for i in 0..5 {
        if clamped >= BARTEN_PARAM_ANCHORS[i] as f64
            && clamped <= BARTEN_PARAM_ANCHORS[i + 1] as f64
        {
            li = i;
            ri = i + 1;
            break;
        }
    }
    let lp = (BARTEN_PARAM_ANCHORS[li] as f64).log10() as f32;
    let rp = (BARTEN_PARAM_ANCHORS[ri] as f64).log10() as f32;
    let sp = clamped.log10() as f32;
    let p = |k: usize| linear_interpolate(lp, BARTEN_PARAMS[li][k], rp, BARTEN_PARAMS[ri][k], sp);
    let (p0, p1, p2, p3) = (p(1), p(2), p(3), p(4));
    let a = (1.0 + ((p0 * sf) as f64).powf(p1 as f64)) as f32;
    let e = (1.0 - (-((sf / 7.0) as f64).powf(2.0)).exp()).powf(p2 as f64);
    let b = (1.0 / e) as f32;
    let csf = (p3 as f64 / ((a * b) as f64).powf(0.5)) as f32;
    ((csf * barten_mtf(sf) * barten_rod_cone_sens(lum as f32)) as f64 * csf_scale) as f32
}

/// A tabulated blended CSF value; `-EINVAL` (as a float) for geometries without a table, as in
/// libvmaf.
fn blend_csf(
    tables: &[(i32, f64, BlendTable)],
    scale: usize,
    theta: usize,
    nvd: f64,
    rdh: i32,
) -> f32 {
    tables
        .iter()
        .find(|(h, d, _)| *h == rdh && *d == nvd)
        .map(|(_, _, t)| t[theta][scale])
        .unwrap_or(-22.0)
}

/// Per-scale geometry and constants, fixed at creation.
#[derive(Debug, Clone, Copy)]
struct ScalePlan {
    /// Input width and height of this scale's DWT.
    in_w: usize,
    in_h: usize,
    /// Band width and height after the DWT.
    w: usize,
    h: usize,
    /// Decouple / CSF region.
    reg_dec: Region,
    /// Pooling region.
    reg_pool: Region,
    /// CSF weights (float).
    rfactor: [f32; 3],
}

/// Four bands of one DWT level.
#[derive(Debug)]
struct Quad<T> {
    a: Vec<T>,
    h: Vec<T>,
    v: Vec<T>,
    d: Vec<T>,
}

impl<T: Copy + Default> Quad<T> {
    fn new(n: usize) -> Self {
        Quad {
            a: vec![T::default(); n],
            h: vec![T::default(); n],
            v: vec![T::default(); n],
            d: vec![T::default(); n],
        }
    }
    fn hvd(&self) -> [&[T]; 3] {
        [&self.h, &self.v, &self.d]
    }
    fn as_mut(&mut self) -> QuadMut<'_, T> {
        QuadMut {
            a: &mut self.a,
            h: &mut self.h,
            v: &mut self.v,
            d: &mut self.d,
        }
    }
}

fn tri<T: Copy + Default>(n: usize) -> [Vec<T>; 3] {
    [
        vec![T::default(); n],
        vec![T::default(); n],
        vec![T::default(); n],
    ]
}

fn refs<T>(t: &[Vec<T>; 3]) -> [&[T]; 3] {
    [&t[0], &t[1], &t[2]]
}

fn muts<T>(t: &mut [Vec<T>; 3]) -> [&mut [T]; 3] {
    let [a, b, c] = t;
    [a, b, c]
}

/// Scratch of the scale-0 (`i16`) stages.
#[derive(Debug)]
struct Bufs16 {
    stride: usize,
    ref_: Quad<i16>,
    dis: Quad<i16>,
    r: [Vec<i16>; 3],
    a: [Vec<i16>; 3],
    csf: [Vec<i16>; 3],
    flt: [Vec<i16>; 3],
    tmp_lo: Vec<i16>,
    tmp_hi: Vec<i16>,
}

/// Scratch of the scale-1..3 (`i32`) stages.
#[derive(Debug)]
struct Bufs32 {
    stride: usize,
    ref_: Quad<i32>,
    dis: Quad<i32>,
    /// Previous approximation bands (ping-pong partners of `ref_.a` / `dis.a`).
    prev_a_ref: Vec<i32>,
    prev_a_dis: Vec<i32>,
    r: [Vec<i32>; 3],
    a: [Vec<i32>; 3],
    csf: [Vec<i32>; 3],
    flt: [Vec<i32>; 3],
    tmp_lo: Vec<i32>,
    tmp_hi: Vec<i32>,
}

impl Bufs16 {
    /// CSF of the masking signal, then contrast masking of the other decoupled signal: the DLM
    /// (`aim == false`) masks `r` with the weighted `a`, the AIM masks `a` with the weighted `r`
    /// (libvmaf `adm_csf` + `adm_cm` with `measure_aim`).
    fn csf_cm(
        &mut self,
        k: &Kernels,
        aim: bool,
        pl: &ScalePlan,
        irf: [u16; 3],
        sh: CmShiftsS0,
    ) -> [i64; 3] {
        let (masker, masked) = if aim {
            (&self.r, &self.a)
        } else {
            (&self.a, &self.r)
        };
        let st = self.stride;
        k.csf_s0(
            refs(masker),
            muts(&mut self.csf),
            muts(&mut self.flt),
            st,
            pl.reg_dec,
            irf,
        );
        k.cm_s0(
            refs(masked),
            refs(&self.csf),
            refs(&self.flt),
            st,
            pl.w,
            pl.h,
            irf,
            sh,
        )
    }
}

impl Bufs32 {
    /// Scale-1..3 analogue of [`Bufs16::csf_cm`] (libvmaf `i4_adm_csf` + `i4_adm_cm`).
    fn csf_cm(
        &mut self,
        k: &Kernels,
        aim: bool,
        pl: &ScalePlan,
        irf: [u32; 3],
        sh: (u32, u32),
    ) -> [i64; 3] {
        let (masker, masked) = if aim {
            (&self.r, &self.a)
        } else {
            (&self.a, &self.r)
        };
        let st = self.stride;
        k.csf_s123(
            refs(masker),
            muts(&mut self.csf),
            muts(&mut self.flt),
            st,
            pl.reg_dec,
            irf,
        );
        k.cm_s123(
            refs(masked),
            refs(&self.csf),
            refs(&self.flt),
            st,
            pl.w,
            pl.h,
            irf,
            sh,
        )
    }
}

/// One integer ADM instance: parameters, per-scale plan, kernels and all scratch, allocated once.
#[derive(Debug)]
pub struct Adm {
    params: AdmParams,
    /// Whose scale-0 DWT last column to compute.
    isa: LibvmafIsa,
    width: usize,
    height: usize,
    bpc: u32,
    i_rfactor_s0: [u16; 3],
    i_rfactor_s123: [[u32; 3]; 3],
    plan: [ScalePlan; 4],
    ind_y: Vec<[usize; 4]>,
    ind_x: Vec<[usize; 4]>,
    b16: Bufs16,
    b32: Bufs32,
    /// The kernels of [`cpu_level`] (or of [`Adm::with_cpu_level`]'s level).
    kernels: Kernels,
}

/// Scale-1..3 DWT of one approximation band (`src`, rows `src_stride` apart) into `out`.
#[allow(clippy::too_many_arguments)]
fn dwt_s123<S: DwtS123Sample>(
    k: &Kernels,
    src: &[S],
    src_stride: usize,
    pl: &ScalePlan,
    scale: usize,
    ind_y: &[[usize; 4]],
    ind_x: &[[usize; 4]],
    tmp_lo: &mut [i32],
    tmp_hi: &mut [i32],
    out: &mut Quad<i32>,
    stride: usize,
) {
    let q = out.as_mut();
    k.dwt2_s123(
        src, src_stride, pl.in_w, scale, ind_y, ind_x, tmp_lo, tmp_hi, q, stride,
    );
}

/// Per-frame results of [`Adm::compute`] before they are turned into features.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AdmScores {
    /// DLM (`adm2`).
    pub adm2: f64,
    /// AIM.
    pub aim: f64,
    /// `max(adm2 * w + (1 - aim) * (1 - w), min_val)`.
    pub adm3: f64,
    /// Per-scale numerator and denominator (`scores[2s]`, `scores[2s + 1]` in libvmaf).
    pub num_den: [f64; 8],
    /// Total numerator after the noise floor.
    pub num: f64,
    /// Total denominator after the noise floor.
    pub den: f64,
}

impl Adm {
    /// Allocates an instance for `width x height` pictures of `bpc` bits (8..=16) computing what
    /// libvmaf's `isa` kernels compute.
    pub fn new(
        width: usize,
        height: usize,
        bpc: u32,
        params: AdmParams,
        isa: LibvmafIsa,
    ) -> Result<Self> {
        if !(8..=16).contains(&bpc) {
            return Err(Error::Unsupported(format!("adm: bit depth {bpc}")));
        }
        if width < 16 || height < 16 {
            return Err(Error::Unsupported(format!(
                "adm: picture size {width}x{height} (minimum 16x16)"
            )));
        }
        // libvmaf: "current implementation is limited by the 16-bit data pipeline, thus cannot
        // handle an angular frequency smaller than 1080p * 3H".
        if params.norm_view_dist * (params.ref_display_height as f64)
            < DEFAULT_NORM_VIEW_DIST * DEFAULT_REF_DISPLAY_HEIGHT as f64
        {
            return Err(Error::InvalidOption(format!(
                "adm: adm_norm_view_dist * adm_ref_display_height = {} * {} is below 3 * 1080, \
                 which libvmaf's integer ADM does not support",
                params.norm_view_dist, params.ref_display_height
            )));
        }
        let mut plan = [ScalePlan {
            in_w: 0,
            in_h: 0,
            w: 0,
            h: 0,
            reg_dec: Region {
                top: 0,
                bottom: 0,
                left: 0,
                right: 0,
            },
            reg_pool: Region {
                top: 0,
                bottom: 0,
                left: 0,
                right: 0,
            },
            rfactor: [0.0; 3],
        }; 4];
        let (mut iw, mut ih) = (width, height);
        for (s, p) in plan.iter_mut().enumerate() {
            let (w, h) = (iw.div_ceil(2), ih.div_ceil(2));
            *p = ScalePlan {
                in_w: iw,
                in_h: ih,
                w,
                h,
                reg_dec: scalar::region_decouple(w, h),
                reg_pool: scalar::region_pool(w, h),
                rfactor: params.rfactor(s),
            };
            (iw, ih) = (w, h);
        }
        let (w0, h0) = (plan[0].w, plan[0].h);
        let (w1, h1) = (plan[1].w, plan[1].h);
        let n16 = w0 * h0;
        let n32 = w1 * h1;
        Ok(Adm {
            params,
            isa,
            width,
            height,
            bpc,
            i_rfactor_s0: params.i_rfactor_s0(),
            i_rfactor_s123: [1, 2, 3].map(|s| params.i_rfactor_s123(s)),
            plan,
            ind_y: vec![[0; 4]; h0],
            ind_x: vec![[0; 4]; w0],
            kernels: Kernels::for_level(cpu_level()),
            b16: Bufs16 {
                stride: w0,
                ref_: Quad::new(n16),
                dis: Quad::new(n16),
                r: tri(n16),
                a: tri(n16),
                csf: tri(n16),
                flt: tri(n16),
                tmp_lo: vec![0; width],
                tmp_hi: vec![0; width],
            },
            b32: Bufs32 {
                stride: w1,
                ref_: Quad::new(n32),
                dis: Quad::new(n32),
                prev_a_ref: vec![0; n32],
                prev_a_dis: vec![0; n32],
                r: tri(n32),
                a: tri(n32),
                csf: tri(n32),
                flt: tri(n32),
                tmp_lo: vec![0; w0],
                tmp_hi: vec![0; w0],
            },
        })
    }

    /// Uses the kernels of `level` (at most what this machine runs) instead of
    /// [`cpu_level`]'s.
    pub fn with_cpu_level(mut self, level: CpuLevel) -> Self {
        self.kernels = Kernels::for_level(level.min(cpu_level()));
        self
    }

    /// The parameters in use.
    pub fn params(&self) -> &AdmParams {
        &self.params
    }

    fn check_plane(&self, p: &Plane<'_>, what: &str) -> Result<()> {
        if p.width != self.width || p.height != self.height {
            return Err(Error::Mismatch(format!(
                "adm: {what} luma is {}x{}, expected {}x{}",
                p.width, p.height, self.width, self.height
            )));
        }
        let sixteen = matches!(p.samples, Samples::U16(_));
        if sixteen != (self.bpc > 8) {
            return Err(Error::Mismatch(format!(
                "adm: {what} has {} samples for a {}-bit stream",
                if sixteen { "16-bit" } else { "8-bit" },
                self.bpc
            )));
        }
        Ok(())
    }

    /// Scale-0 DWT of one plane into `out` (only the approximation band when `lo_only`).
    #[allow(clippy::too_many_arguments)]
    fn dwt_s0(
        k: &Kernels,
        plane: &Plane<'_>,
        bpc: u32,
        ind_y: &[[usize; 4]],
        ind_x: &[[usize; 4]],
        tmp_lo: &mut [i16],
        tmp_hi: &mut [i16],
        out: &mut Quad<i16>,
        stride: usize,
        lo_only: bool,
        isa: LibvmafIsa,
    ) {
        let (w, ps) = (plane.width, plane.stride);
        macro_rules! run {
            ($src:expr) => {
                if lo_only {
                    scalar::dwt2_s0_lo($src, ps, w, bpc, ind_y, ind_x, tmp_lo, &mut out.a, stride)
                } else {
                    let q = out.as_mut();
                    k.dwt2_s0(
                        $src, ps, w, bpc, ind_y, ind_x, tmp_lo, tmp_hi, q, stride, isa,
                    )
                }
            };
        }
        match plane.samples {
            Samples::U8(s) => run!(s),
            Samples::U16(s) => run!(s),
        }
    }

    /// Scale 0: DWT of the pictures, then (unless skipped) decouple, denominator, DLM and AIM.
    /// Returns `(num, den, aim_num)` of the scale.
    fn scale0(&mut self, reference: &Plane<'_>, distorted: &Plane<'_>) -> (f32, f32, f32) {
        let pl = self.plan[0];
        let prm = self.params;
        let k = &self.kernels;
        let (ind_y, ind_x) = (&mut self.ind_y[..pl.h], &mut self.ind_x[..pl.w]);
        scalar::dwt_indices(pl.in_h, ind_y);
        scalar::dwt_indices(pl.in_w, ind_x);
        let b = &mut self.b16;
        for (plane, out) in [(reference, &mut b.ref_), (distorted, &mut b.dis)] {
            Self::dwt_s0(
                k,
                plane,
                self.bpc,
                ind_y,
                ind_x,
                &mut b.tmp_lo,
                &mut b.tmp_hi,
                out,
                b.stride,
                prm.skip_scale0,
                self.isa,
            );
        }
        if prm.skip_scale0 {
            // libvmaf: "skip scale 0 by downsampling by 2 using low-pass filters in DWT2",
            // with a denominator of 1e-10 to avoid a division by zero.
            return (0.0, 1e-10, 0.0);
        }
        let st = b.stride;
        k.decouple_s0(
            b.ref_.hvd(),
            b.dis.hvd(),
            muts(&mut b.r),
            muts(&mut b.a),
            st,
            pl.reg_dec,
            prm.enhn_gain_limit,
        );
        let area = pl.reg_pool.area();
        let shift = scalar::den_s0_shift(area);
        let acc = scalar::csf_den_s0(b.ref_.hvd(), st, pl.reg_pool, shift);
        let den = scalar::csf_den_pool_s0(acc, shift, pl.rfactor, area, prm.noise_weight);
        let shifts = CmShiftsS0::new(pl.w, pl.h, self.isa);
        let acc = b.csf_cm(k, false, &pl, self.i_rfactor_s0, shifts);
        let num = scalar::cm_pool_s0(acc, shifts, pl.w, pl.h, prm.noise_weight);
        let aim = if prm.skip_aim {
            0.0
        } else {
            let acc = b.csf_cm(k, true, &pl, self.i_rfactor_s0, shifts);
            scalar::cm_pool_s0(acc, shifts, pl.w, pl.h, 0.0)
        };
        (num, den, aim)
    }

    /// Scale 1, 2 or 3: DWT of the previous approximation bands, decouple, denominator, DLM and
    /// AIM. Returns `(num, den, aim_num)` of the scale.
    fn scale123(&mut self, s: usize) -> (f32, f32, f32) {
        let pl = self.plan[s];
        let prm = self.params;
        let k = &self.kernels;
        let (ind_y, ind_x) = (&mut self.ind_y[..pl.h], &mut self.ind_x[..pl.w]);
        scalar::dwt_indices(pl.in_h, ind_y);
        scalar::dwt_indices(pl.in_w, ind_x);
        let b16 = &self.b16;
        let b = &mut self.b32;
        let st = b.stride;
        if s == 1 {
            for (src, out) in [(&b16.ref_.a, &mut b.ref_), (&b16.dis.a, &mut b.dis)] {
                let (lo, hi) = (&mut b.tmp_lo, &mut b.tmp_hi);
                dwt_s123(k, src, b16.stride, &pl, s, ind_y, ind_x, lo, hi, out, st);
            }
        } else {
            // libvmaf filters the approximation band in place; here the previous one moves to
            // its ping-pong partner first.
            std::mem::swap(&mut b.ref_.a, &mut b.prev_a_ref);
            std::mem::swap(&mut b.dis.a, &mut b.prev_a_dis);
            for (src, out) in [(&b.prev_a_ref, &mut b.ref_), (&b.prev_a_dis, &mut b.dis)] {
                let (lo, hi) = (&mut b.tmp_lo, &mut b.tmp_hi);
                dwt_s123(k, src, st, &pl, s, ind_y, ind_x, lo, hi, out, st);
            }
        }
        scalar::decouple_s123(
            b.ref_.hvd(),
            b.dis.hvd(),
            muts(&mut b.r),
            muts(&mut b.a),
            st,
            pl.reg_dec,
            prm.enhn_gain_limit,
        );
        let area = pl.reg_pool.area();
        let den_shifts = scalar::den_s123_shifts(pl.reg_pool);
        let acc =
            scalar::csf_den_s123(b.ref_.hvd(), st, pl.reg_pool, s, den_shifts.0, den_shifts.1);
        let den = scalar::csf_den_pool_s123(acc, s, den_shifts, pl.rfactor, area, prm.noise_weight);
        let irf = self.i_rfactor_s123[s - 1];
        let shifts = scalar::cm_s123_shifts(pl.w, pl.h);
        let acc = b.csf_cm(k, false, &pl, irf, shifts);
        let num = scalar::cm_pool_s123(acc, s, shifts, pl.w, pl.h, prm.noise_weight);
        let aim = if prm.skip_aim {
            0.0
        } else {
            let acc = b.csf_cm(k, true, &pl, irf, shifts);
            scalar::cm_pool_s123(acc, s, shifts, pl.w, pl.h, 0.0)
        };
        (num, den, aim)
    }

    /// Computes one frame's ADM values from the reference and distorted luma planes.
    pub fn compute(&mut self, reference: &Plane<'_>, distorted: &Plane<'_>) -> Result<AdmScores> {
        self.check_plane(reference, "reference")?;
        self.check_plane(distorted, "distorted")?;
        let mut scales = [(0f32, 0f32, 0f32); 4];
        for (s, out) in scales.iter_mut().enumerate() {
            *out = if s == 0 {
                self.scale0(reference, distorted)
            } else {
                self.scale123(s)
            };
        }
        Ok(AdmScores::from_scales(
            scales,
            self.width,
            self.height,
            &self.params,
        ))
    }
}

impl AdmScores {
    /// libvmaf's combination of the four scales' (numerator, denominator, AIM numerator) into
    /// the frame's values; shared by the CPU path and the CUDA backend so they cannot drift.
    pub fn from_scales(
        scales: [(f32, f32, f32); 4],
        width: usize,
        height: usize,
        prm: &AdmParams,
    ) -> Self {
        let mut num_den = [0f64; 8];
        let (mut num, mut den, mut aim_num) = (0f64, 0f64, 0f64);
        for (s, &(num_s, den_s, aim_s)) in scales.iter().enumerate() {
            // libvmaf sums the float per-scale values in double.
            num += num_s as f64;
            den += den_s as f64;
            aim_num += aim_s as f64;
            num_den[2 * s] = num_s as f64;
            num_den[2 * s + 1] = den_s as f64;
        }
        let limit = 1e-10 * (width * height) as i32 as f64 / (1920.0 * 1080.0);
        let num = if num < limit { 0.0 } else { num };
        let den = if den < limit { 0.0 } else { den };
        // libvmaf leaves the AIM score uninitialised when the denominator vanishes (only possible
        // with adm_noise_weight = 0 on flat content); 0 is used here.
        let (adm2, aim) = if den == 0.0 {
            (1.0, 0.0)
        } else {
            (num / den, aim_num / den)
        };
        let blend = adm2 * prm.dlm_weight + (1.0 - aim) * (1.0 - prm.dlm_weight);
        let adm3 = if blend > prm.min_val {
            blend
        } else {
            prm.min_val
        };
        AdmScores {
            adm2,
            aim,
            adm3,
            num_den,
            num,
            den,
        }
    }

    /// Writes the extractor's outputs, in [`DEF`]`.spatial` order.
    pub fn write(&self, out: &mut [f64]) {
        out[0] = self.adm2;
        out[1] = self.aim;
        out[2] = self.adm3;
        for s in 0..4 {
            out[3 + s] = self.num_den[2 * s] / self.num_den[2 * s + 1];
        }
    }
}

impl Extractor for Adm {
    fn extract(&mut self, input: &FrameInput<'_>, out: &mut [f64]) -> Result<()> {
        if out.len() < DEF.spatial.len() {
            return Err(Error::State(format!(
                "adm: output slice holds {} values, {} needed",
                out.len(),
                DEF.spatial.len()
            )));
        }
        self.compute(&input.reference, &input.distorted)?.write(out);
        Ok(())
    }
}

fn create(cfg: &ExtractorConfig) -> Result<Box<dyn Extractor>> {
    let f = cfg.format;
    let params = AdmParams::from_opts(&cfg.opts);
    Ok(Box::new(Adm::new(
        f.width,
        f.height,
        f.bpc as u32,
        params,
        cfg.libvmaf_isa,
    )?))
}
