//! ADM's options resolved ([`AdmParams`]) and the contrast sensitivity maths behind the per-scale
//! CSF weights: Watson's DWT quantisation step, Barten's CSF and the tabulated blends, with
//! libvmaf's float/double conversion points.

use std::f64::consts::PI;

use super::scalar;
use super::tables::*;
use crate::feature::options::OptValues;

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
    /// Reads the values from an option table built from [`OPTIONS`](super::OPTIONS).
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
