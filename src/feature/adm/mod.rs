//! Integer ADM (libvmaf's `adm` extractor): the Detail Loss Metric (`adm2`), the Additive
//! Impairment Measure (`aim`), their blend (`adm3`) and the four per-scale ratios, bit-exact with
//! libvmaf's `integer_adm.c` in each of its host variants: its C code, or its x86 AVX2 or AVX-512
//! kernels, which differ in the last column of the scale-0 DWT at some widths
//! ([`LibvmafIsa`](crate::fidelity::LibvmafIsa), see [`scalar::dwt2_s0`]).
//!
//! Pipeline per frame, for scales 0..3: integer DWT of reference and distorted (scale 0 from the
//! picture into `i16` bands, scales 1..3 from the previous approximation band into `i32` bands),
//! decoupling of the distorted detail bands into restored (`r`) and additive (`a`) parts,
//! contrast-sensitivity weighting, contrast masking, and cube-root pooling.
//!
//! Where things live: the arithmetic of every stage in [`scalar`] (the specification for SIMD
//! and GPU peers, one stage per file); the dispatch table in `kernels/` ([`Kernels`], chosen
//! once per instance from [`crate::cpu::cpu_level`], the same shape as `vif::Kernels`); the
//! options and CSF maths in `params.rs`; the per-scale plan and scratch in `plan.rs`; the frame
//! walk in `extractor.rs` ([`Adm`]); the score formulas in `scores.rs` ([`AdmScores`]). The
//! `unsafe` of the SIMD peers stays in their arch modules.
#![deny(unsafe_code)]

mod extractor;
mod kernels;
mod params;
mod plan;
pub mod scalar;
mod scores;
pub mod tables;
#[cfg(test)]
mod tests;
#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
mod x86_64_avx2;
#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
mod x86_64_avx512;
/// The AVX-512 kernels compiled with VNNI as well ([`crate::cpu::CpuLevel::Avx512Vnni`]):
/// `x86_64_avx512.rs` with VNNI added to its target features, copied by build.rs.
#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
mod x86_64_avx512_vnni {
    include!(concat!(env!("OUT_DIR"), "/adm_x86_64_avx512_vnni.rs"));
}

pub use extractor::Adm;
pub use kernels::{
    CmS0Interior, CmS123Interior, CsfDenS0, CsfDenS123, CsfS0, CsfS123, DecoupleS0, DecoupleS123,
    DwtS0Horizontal, DwtS0Sample, DwtS0Vertical, DwtS123Horizontal, DwtS123Sample, DwtS123Vertical,
    Kernels,
};
pub use params::{barten_csf, dwt_quant_step, AdmParams, CsfMode};
pub use scores::AdmScores;

use super::options::{OptKind, OptSpec};
use super::{Extractor, ExtractorConfig, ExtractorDef, FrameInput, SharedReference};
use crate::error::{Error, Result};
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
    // The reference's DWT bands and each scale's denominator.
    shares_reference: true,
    create,
    create_temporal: None,
    ..ExtractorDef::DEFAULTS
};

impl Extractor for Adm {
    fn extract(&mut self, input: &FrameInput<'_>, out: &mut [f64]) -> Result<()> {
        check_out(out)?;
        self.compute(&input.reference, &input.distorted)?.write(out);
        Ok(())
    }

    fn extract_shared(
        &mut self,
        input: &FrameInput<'_>,
        shared: &SharedReference,
        out: &mut [f64],
    ) -> Result<()> {
        check_out(out)?;
        self.compute_shared(&input.reference, &input.distorted, shared)?
            .write(out);
        Ok(())
    }
}

fn check_out(out: &[f64]) -> Result<()> {
    if out.len() < DEF.spatial.len() {
        return Err(Error::State(format!(
            "adm: output slice holds {} values, {} needed",
            out.len(),
            DEF.spatial.len()
        )));
    }
    Ok(())
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
