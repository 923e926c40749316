//! `psnr`: per-plane PSNR (`psnr_y`, `psnr_cb`, `psnr_cr`), optionally MSE (`mse_*`) and the
//! whole-stream aggregate PSNR (`apsnr_*`), as libvmaf's integer PSNR extractor computes them.
//!
//! libvmaf's arithmetic, reproduced: integer sums of squared differences; at 8 bits the peak is
//! always 255 (`reduced_hbd_peak` only matters above 8 bits); each value is capped at
//! `6 * bpc + 12` dB, or with `min_sse` at `ceil(10 log10(peak² / (min_sse / n)))` where `n`
//! counts the plane's pixels with chroma sizes rounded down; chroma planes are libvmaf's, i.e.
//! `w >> 1` (and `h >> 1` for 4:2:0) samples, rounded down. libvmaf takes 8, 10, 12 and 16 bits
//! only.
//!
//! The sum of squared differences, the one hot loop, is dispatched through [`Kernels`], chosen
//! once per instance from [`crate::cpu::cpu_level`]; the `unsafe` of the SIMD peers stays in
//! their arch modules.
#![deny(unsafe_code)]

pub mod scalar;
#[cfg(test)]
mod tests;
#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
mod x86_64_avx2;

use super::options::{OptKind, OptSpec, OptValues};
use super::{Extractor, ExtractorConfig, ExtractorDef, FrameInput};
use crate::cpu::{cpu_level, CpuLevel};
use crate::error::{Error, Result};
use crate::picture::{ChromaLayout, PictureFormat, Plane, Samples};

/// Options, as libvmaf's `psnr` declares them (none renames the features).
pub static OPTIONS: &[OptSpec] = &[
    OptSpec {
        name: "enable_chroma",
        alias: None,
        kind: OptKind::Bool(true),
        feature_param: false,
    },
    OptSpec {
        name: "enable_mse",
        alias: None,
        kind: OptKind::Bool(false),
        feature_param: false,
    },
    OptSpec {
        name: "enable_apsnr",
        alias: None,
        kind: OptKind::Bool(false),
        feature_param: false,
    },
    OptSpec {
        name: "reduced_hbd_peak",
        alias: None,
        kind: OptKind::Bool(false),
        feature_param: false,
    },
    OptSpec {
        name: "min_sse",
        alias: None,
        kind: OptKind::Double {
            default: 0.0,
            min: 0.0,
            max: f64::MAX,
        },
        feature_param: false,
    },
];

/// Outputs in libvmaf's append order: per plane, PSNR then MSE.
const SPATIAL: &[&str] = &["psnr_y", "mse_y", "psnr_cb", "mse_cb", "psnr_cr", "mse_cr"];

/// Registry entry.
pub static DEF: ExtractorDef = ExtractorDef {
    name: "psnr",
    options: OPTIONS,
    spatial: SPATIAL,
    // libvmaf flags it temporal: it sees every frame (its aggregate counts them all).
    every_frame: true,
    reads_chroma: |o, f| planes(o, f) == 3,
    shows: Some(shows),
    check,
    aggregate: Some(aggregate),
    create,
    ..ExtractorDef::DEFAULTS
};

/// Planes computed: chroma unless disabled or absent (libvmaf turns it off for 4:0:0).
fn planes(o: &OptValues, f: &PictureFormat) -> usize {
    if o.bool("enable_chroma") && f.layout != ChromaLayout::Gray {
        3
    } else {
        1
    }
}

fn shows(o: &OptValues, f: &PictureFormat, name: &str) -> bool {
    let i = SPATIAL.iter().position(|n| *n == name).unwrap_or(0);
    i / 2 < planes(o, f) && (i % 2 == 0 || o.bool("enable_mse"))
}

fn check(_: &OptValues, f: &PictureFormat) -> Result<()> {
    if matches!(f.bpc, 8 | 10 | 12 | 16) {
        Ok(())
    } else {
        Err(Error::Unsupported(format!(
            "feature psnr: {}-bit input (libvmaf's psnr takes 8, 10, 12 or 16 bits; convert, \
             e.g. with format=yuv420p10le)",
            f.bpc
        )))
    }
}

/// The peak and the per-plane caps, as libvmaf's `init` derives them.
fn limits(o: &OptValues, f: &PictureFormat) -> (u32, [f64; 3]) {
    let bpc = f.bpc as u32;
    let peak = if o.bool("reduced_hbd_peak") {
        255 << (bpc - 8)
    } else {
        (1u32 << bpc) - 1
    };
    let min_sse = o.f64("min_sse");
    let mut max = [(6 * bpc + 12) as f64; 3];
    if min_sse != 0.0 {
        let ss_hor = f.layout != ChromaLayout::Yuv444;
        let ss_ver = f.layout == ChromaLayout::Yuv420;
        for (i, m) in max.iter_mut().enumerate() {
            let w = if i > 0 && ss_hor {
                f.width / 2
            } else {
                f.width
            };
            let h = if i > 0 && ss_ver {
                f.height / 2
            } else {
                f.height
            };
            // C: unsigned product, then double division; peak * peak in uint32_t.
            let mse = min_sse / ((w * h) as u32) as f64;
            *m = (10.0 * (peak.wrapping_mul(peak) as f64 / mse).log10()).ceil();
        }
    }
    (peak, max)
}

/// How one instance turns a plane's sum of squared differences into its values, shared by the
/// CPU extractor and the CUDA plan (`cuda::plans::psnr`), so both backends compute them alike.
#[derive(Debug, Clone, Copy)]
pub(crate) struct PsnrValues {
    /// Planes scored: 1 (luma) or 3.
    pub planes: usize,
    /// Whether `mse_*` is written.
    mse: bool,
    /// Peak used per frame: 255 at 8 bits whatever the option (libvmaf's 8-bit path).
    frame_peak: u32,
    max: [f64; 3],
}

impl PsnrValues {
    /// The instance's constants (after [`DEF`]'s `check` accepted the format).
    pub(crate) fn new(o: &OptValues, f: &PictureFormat) -> Self {
        let (peak, max) = limits(o, f);
        PsnrValues {
            planes: planes(o, f),
            mse: o.bool("enable_mse"),
            frame_peak: if f.bpc == 8 { 255 } else { peak },
            max,
        }
    }

    /// Writes plane `p`'s `psnr_*` (and `mse_*`) into the instance's row `out` from its sum of
    /// squared differences `sse` over `n` samples.
    pub(crate) fn write(&self, p: usize, sse: u64, n: u64, out: &mut [f64]) {
        let peak2 = self.frame_peak.wrapping_mul(self.frame_peak) as f64;
        let mse = sse as f64 / n as f64;
        let floored = if mse > 1e-16 { mse } else { 1e-16 };
        let psnr = 10.0 * (peak2 / floored).log10();
        out[2 * p] = if psnr < self.max[p] {
            psnr
        } else {
            self.max[p]
        };
        if self.mse {
            out[2 * p + 1] = mse;
        }
    }
}

/// libvmaf's size of plane `p` (0 luma, 1 and 2 chroma): chroma `w >> 1` (and `h >> 1` for
/// 4:2:0), rounded down.
#[cfg_attr(not(feature = "cuda"), allow(dead_code))]
pub(crate) fn plane_size(f: &PictureFormat, p: usize) -> (usize, usize) {
    if p == 0 {
        (f.width, f.height)
    } else {
        f.layout.libvmaf_chroma_size(f.width, f.height)
    }
}

struct Psnr {
    values: PsnrValues,
    /// (sse, pixels) per plane, summed over the frames extracted (the aggregate's totals).
    totals: [u64; 6],
    kernels: Kernels,
}

fn create(cfg: &ExtractorConfig) -> Result<Box<dyn Extractor>> {
    check(&cfg.opts, &cfg.format)?;
    Ok(Box::new(Psnr {
        values: PsnrValues::new(&cfg.opts, &cfg.format),
        totals: [0; 6],
        kernels: Kernels::for_level(cpu_level()),
    }))
}

/// Sum of squared differences of a `w`x`h` plane pair, strides in samples ([`scalar::sse`]).
pub type Sse<T> = fn(&[T], usize, &[T], usize, usize, usize) -> u64;

/// The PSNR kernels of one CPU level: the scalar specification, with the entries a SIMD level
/// provides replaced (a level without its own kernel keeps the best lower one's).
///
/// With the `check_simd` feature every call through a SIMD entry is recomputed with the scalar
/// kernel and the results asserted equal.
#[derive(Clone, Copy)]
pub struct Kernels {
    level: CpuLevel,
    /// 8-bit samples.
    pub sse_u8: Sse<u8>,
    /// 9- to 16-bit samples.
    pub sse_u16: Sse<u16>,
}

impl Kernels {
    /// The scalar specification kernels.
    pub const SCALAR: Kernels = Kernels {
        level: CpuLevel::Scalar,
        sse_u8: scalar::sse::<u8>,
        sse_u16: scalar::sse::<u16>,
    };

    /// The best kernels at or below `level` that this machine runs.
    pub fn for_level(level: CpuLevel) -> Self {
        #[allow(unused_mut)]
        let mut k = Self::SCALAR;
        #[cfg(target_arch = "x86_64")]
        if level >= CpuLevel::Avx2 {
            x86_64_avx2::install(&mut k);
        }
        k.level = level;
        k
    }

    /// The level these kernels were chosen for.
    pub fn level(&self) -> CpuLevel {
        self.level
    }

    /// Sum of squared differences of two planes of one size and sample width (`u64`, wrapping
    /// as libvmaf's accumulator).
    pub fn sse(&self, r: &Plane<'_>, d: &Plane<'_>) -> u64 {
        let (w, h) = (r.width, r.height);
        let (rs, ds) = (r.stride, d.stride);
        match (r.samples, d.samples) {
            (Samples::U8(a), Samples::U8(b)) => {
                let sse = (self.sse_u8)(a, rs, b, ds, w, h);
                #[cfg(feature = "check_simd")]
                if self.level > CpuLevel::Scalar {
                    let want = scalar::sse(a, rs, b, ds, w, h);
                    assert_eq!(sse, want, "check_simd: psnr sse_u8, {w}x{h}");
                }
                sse
            }
            (Samples::U16(a), Samples::U16(b)) => {
                let sse = (self.sse_u16)(a, rs, b, ds, w, h);
                #[cfg(feature = "check_simd")]
                if self.level > CpuLevel::Scalar {
                    let want = scalar::sse(a, rs, b, ds, w, h);
                    assert_eq!(sse, want, "check_simd: psnr sse_u16, {w}x{h}");
                }
                sse
            }
            _ => unreachable!("the engine gives both inputs one sample size"),
        }
    }
}

impl Extractor for Psnr {
    fn extract(&mut self, input: &FrameInput<'_>, out: &mut [f64]) -> Result<()> {
        fn chroma<'a>(c: Option<[Plane<'a>; 2]>) -> Result<[Plane<'a>; 2]> {
            c.ok_or_else(|| Error::Internal("psnr: chroma planes missing".into()))
        }
        let mut pairs = [(input.reference, input.distorted); 3];
        let planes = self.values.planes;
        if planes == 3 {
            let ([ru, rv], [du, dv]) = (
                chroma(input.reference_chroma)?,
                chroma(input.distorted_chroma)?,
            );
            pairs[1] = (ru, du);
            pairs[2] = (rv, dv);
        }
        for (p, (r, d)) in pairs.iter().take(planes).enumerate() {
            let sse = self.kernels.sse(r, d);
            let n = (r.width * r.height) as u64;
            add_totals(&mut self.totals, p, sse, n);
            self.values.write(p, sse, n, out);
        }
        Ok(())
    }

    fn totals(&self) -> &[u64] {
        &self.totals
    }
}

/// `apsnr_y/_cb/_cr` from the summed (sse, pixels), as libvmaf's `flush`: all three, even when
/// chroma was not computed (its sums are then 0 and so is the value's meaning: -inf).
/// Adds one plane's `(sse, n)` to an instance's totals (wrapping, as libvmaf's `u64` sums).
pub(crate) fn add_totals(totals: &mut [u64; 6], p: usize, sse: u64, n: u64) {
    totals[2 * p] = totals[2 * p].wrapping_add(sse);
    totals[2 * p + 1] = totals[2 * p + 1].wrapping_add(n);
}

fn aggregate(o: &OptValues, f: &PictureFormat, totals: &[u64]) -> Vec<(String, f64)> {
    if !o.bool("enable_apsnr") {
        return Vec::new();
    }
    let (peak, _) = limits(o, f);
    let peak2 = peak.wrapping_mul(peak);
    ["apsnr_y", "apsnr_cb", "apsnr_cr"]
        .iter()
        .enumerate()
        .map(|(i, name)| {
            let (sse, n) = (totals[2 * i], totals[2 * i + 1]);
            let apsnr = 10.0 * ((peak2 as f64).log10() + (n as f64).log10() - (sse as f64).log10());
            // C: peak * peak * n_pixels * 2 in uint64_t.
            let max =
                (10.0 * ((peak2 as u64).wrapping_mul(n).wrapping_mul(2) as f64).log10()).ceil();
            (name.to_string(), if apsnr < max { apsnr } else { max })
        })
        .collect()
}
