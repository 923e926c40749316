//! `psnr`: per-plane PSNR (`psnr_y`, `psnr_cb`, `psnr_cr`), optionally MSE (`mse_*`) and the
//! whole-stream aggregate PSNR (`apsnr_*`), as libvmaf's integer PSNR extractor computes them.
//!
//! libvmaf's arithmetic, reproduced: integer sums of squared differences; at 8 bits the peak is
//! always 255 (`reduced_hbd_peak` only matters above 8 bits); each value is capped at
//! `6 * bpc + 12` dB, or with `min_sse` at `ceil(10 log10(peak² / (min_sse / n)))` where `n`
//! counts the plane's pixels with chroma sizes rounded down; chroma planes are libvmaf's, i.e.
//! `w >> 1` (and `h >> 1` for 4:2:0) samples, rounded down. libvmaf takes 8, 10, 12 and 16 bits
//! only.

use super::options::{OptKind, OptSpec, OptValues};
use super::{Extractor, ExtractorConfig, ExtractorDef, FrameInput};
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

struct Psnr {
    planes: usize,
    mse: bool,
    /// Peak used per frame: 255 at 8 bits whatever the option (libvmaf's 8-bit path).
    frame_peak: u32,
    max: [f64; 3],
    /// (sse, pixels) per plane, summed over the frames extracted (the aggregate's totals).
    totals: [u64; 6],
}

fn create(cfg: &ExtractorConfig) -> Result<Box<dyn Extractor>> {
    check(&cfg.opts, &cfg.format)?;
    let (peak, max) = limits(&cfg.opts, &cfg.format);
    Ok(Box::new(Psnr {
        planes: planes(&cfg.opts, &cfg.format),
        mse: cfg.opts.bool("enable_mse"),
        frame_peak: if cfg.format.bpc == 8 { 255 } else { peak },
        max,
        totals: [0; 6],
    }))
}

/// Sum of squared differences (u64, as libvmaf's accumulator; every term fits 32 bits).
fn sse(r: &Plane<'_>, d: &Plane<'_>) -> u64 {
    fn rows<T: Copy + Into<u32>>(
        r: &[T],
        rs: usize,
        d: &[T],
        ds: usize,
        w: usize,
        h: usize,
    ) -> u64 {
        let mut total = 0u64;
        for y in 0..h {
            let (rr, dr) = (&r[y * rs..y * rs + w], &d[y * ds..y * ds + w]);
            let row: u64 = rr
                .iter()
                .zip(dr)
                .map(|(&a, &b)| {
                    let e = a.into().abs_diff(b.into()) as u64;
                    e * e
                })
                .sum();
            total = total.wrapping_add(row);
        }
        total
    }
    let (w, h) = (r.width, r.height);
    match (r.samples, d.samples) {
        (Samples::U8(a), Samples::U8(b)) => rows(a, r.stride, b, d.stride, w, h),
        (Samples::U16(a), Samples::U16(b)) => rows(a, r.stride, b, d.stride, w, h),
        _ => unreachable!("the engine gives both inputs one sample size"),
    }
}

impl Extractor for Psnr {
    fn extract(&mut self, input: &FrameInput<'_>, out: &mut [f64]) -> Result<()> {
        fn chroma<'a>(c: Option<[Plane<'a>; 2]>) -> Result<[Plane<'a>; 2]> {
            c.ok_or_else(|| Error::Internal("psnr: chroma planes missing".into()))
        }
        let mut pairs = [(input.reference, input.distorted); 3];
        if self.planes == 3 {
            let ([ru, rv], [du, dv]) = (
                chroma(input.reference_chroma)?,
                chroma(input.distorted_chroma)?,
            );
            pairs[1] = (ru, du);
            pairs[2] = (rv, dv);
        }
        let peak2 = self.frame_peak.wrapping_mul(self.frame_peak) as f64;
        for (p, (r, d)) in pairs.iter().take(self.planes).enumerate() {
            let sse = sse(r, d);
            let n = (r.width * r.height) as u64;
            self.totals[2 * p] = self.totals[2 * p].wrapping_add(sse);
            self.totals[2 * p + 1] = self.totals[2 * p + 1].wrapping_add(n);
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
        Ok(())
    }

    fn totals(&self) -> &[u64] {
        &self.totals
    }
}

/// `apsnr_y/_cb/_cr` from the summed (sse, pixels), as libvmaf's `flush`: all three, even when
/// chroma was not computed (its sums are then 0 and so is the value's meaning: -inf).
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
