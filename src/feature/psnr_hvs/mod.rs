//! `psnr_hvs`: PSNR-HVS (Xiph/Daala's masked DCT PSNR) per plane (`psnr_hvs_y`, `psnr_hvs_cb`,
//! `psnr_hvs_cr`) and their weighted combination (`psnr_hvs`), as libvmaf's `psnr_hvs` extractor
//! computes them.
//!
//! libvmaf's arithmetic, reproduced: 8x8 blocks every 7 samples (overlapping) while a whole block
//! fits; per block the sample means and variances (whole block and its four 4x4 quarters) in
//! `float`, the integer Daala 8x8 DCT, a contrast-masking threshold in `float` (its square root
//! taken in `double`), and the CSF-weighted squared masked errors summed over the plane in one
//! `float`. Chroma planes are libvmaf's (`w >> 1`, and `h >> 1` for 4:2:0, rounded down) and take
//! the 4:2:0 tables whatever the layout. libvmaf refuses more than 12 bits (its integer DCT
//! products would overflow) and 4:0:0.

use super::{Extractor, ExtractorConfig, ExtractorDef, FrameInput};
use crate::error::{Error, Result};
use crate::picture::{ChromaLayout, PictureFormat, Plane, Samples};

mod dct;
mod tables;

/// Outputs in libvmaf's append order.
const SPATIAL: &[&str] = &["psnr_hvs_y", "psnr_hvs_cb", "psnr_hvs_cr", "psnr_hvs"];

/// Registry entry.
pub static DEF: ExtractorDef = ExtractorDef {
    name: "psnr_hvs",
    spatial: SPATIAL,
    reads_chroma: |_, _| true,
    check,
    create,
    ..ExtractorDef::DEFAULTS
};

fn check(_: &crate::feature::options::OptValues, f: &PictureFormat) -> Result<()> {
    if f.bpc > 12 {
        return Err(Error::Unsupported(format!(
            "feature psnr_hvs: {}-bit input (libvmaf's psnr_hvs takes at most 12 bits; convert, \
             e.g. with format=yuv420p12le)",
            f.bpc
        )));
    }
    if f.layout == ChromaLayout::Gray {
        return Err(Error::Unsupported(
            "feature psnr_hvs: 4:0:0 input (libvmaf's psnr_hvs needs chroma planes; convert, \
             e.g. with format=yuv420p)"
                .into(),
        ));
    }
    // Every plane needs one whole 8x8 block, else libvmaf divides 0 by 0.
    let (cw, ch) = chroma_size(f);
    if cw < 8 || ch < 8 {
        return Err(Error::Unsupported(format!(
            "feature psnr_hvs: {f} has {cw}x{ch} chroma planes, smaller than one 8x8 block \
             (scale the input up)"
        )));
    }
    Ok(())
}

/// libvmaf's chroma plane size (rounded down).
pub(crate) fn chroma_size(f: &PictureFormat) -> (usize, usize) {
    match f.layout {
        ChromaLayout::Yuv420 => (f.width >> 1, f.height >> 1),
        ChromaLayout::Yuv422 => (f.width >> 1, f.height),
        _ => (f.width, f.height),
    }
}

struct PsnrHvs {
    bpc: u32,
    /// The CSF tables per plane (luma, Cb, Cr), as C's `float` arrays hold them.
    csfs: [[[f32; 8]; 8]; 3],
    /// Masking weights per plane, derived from the CSF tables once.
    masks: [[[f32; 8]; 8]; 3],
}

/// The CSF tables (as C's `float` arrays hold them) and the masking weights derived from them,
/// per plane (luma, Cb, Cr).
pub(crate) type Tables = ([[[f32; 8]; 8]; 3], [[[f32; 8]; 8]; 3]);

/// libvmaf's `psnr_hvs` tables: the CSFs and masking weights of every plane.
pub(crate) fn tables() -> Tables {
    let mut csfs = [[[0f32; 8]; 8]; 3];
    let mut masks = [[[0f32; 8]; 8]; 3];
    let tables = [&tables::CSF_Y, &tables::CSF_CB420, &tables::CSF_CR420];
    for p in 0..3 {
        for i in 0..8 {
            for j in 0..8 {
                // C: a double literal stored in a float array.
                let c = tables[p][i][j] as f32;
                csfs[p][i][j] = c;
                // C: the float value promoted, the products in double, stored as float.
                let s = c as f64 * 0.3885746225901003;
                masks[p][i][j] = (s * s) as f32;
            }
        }
    }
    (csfs, masks)
}

fn create(cfg: &ExtractorConfig) -> Result<Box<dyn Extractor>> {
    check(&cfg.opts, &cfg.format)?;
    let (csfs, masks) = tables();
    Ok(Box::new(PsnrHvs {
        bpc: cfg.format.bpc as u32,
        csfs,
        masks,
    }))
}

/// The number of 8x8 blocks libvmaf scores along a side of `n` samples: one every 7 samples
/// while a whole block fits (the CUDA plan's block grid; `score` walks the same positions).
#[cfg_attr(not(feature = "cuda"), allow(dead_code))]
pub(crate) fn blocks_along(n: usize) -> usize {
    if n < 8 {
        0
    } else {
        (n - 8) / 7 + 1
    }
}

/// One plane's masked, CSF-weighted mean squared error, normalised by the peak (libvmaf's
/// `calc_psnrhvs`).
fn plane_score(
    r: &Plane<'_>,
    d: &Plane<'_>,
    bpc: u32,
    csf: &[[f32; 8]; 8],
    mask: &[[f32; 8]; 8],
) -> f64 {
    match (r.samples, d.samples) {
        (Samples::U8(a), Samples::U8(b)) => score(a, r.stride, b, d.stride, r, bpc, csf, mask),
        (Samples::U16(a), Samples::U16(b)) => score(a, r.stride, b, d.stride, r, bpc, csf, mask),
        _ => unreachable!("the engine gives both inputs one sample size"),
    }
}

/// Means and variances of one 8x8 block, in libvmaf's float order: the whole-block variance
/// becomes the ratio of the quarters' summed variances to it (when positive).
fn block_stats(px: &[i32; 64]) -> f32 {
    // Quarter index of sample (i, j): bit 0 for the lower half, bit 1 for the right half.
    let sub = |i: usize, j: usize| ((i & 12) >> 2) + ((j & 12) >> 1);
    let mut gmean = 0f32;
    let mut means = [0f32; 4];
    for i in 0..8 {
        for j in 0..8 {
            let v = px[i * 8 + j] as f32;
            gmean += v;
            means[sub(i, j)] += v;
        }
    }
    gmean /= 64.0;
    for m in &mut means {
        *m /= 16.0;
    }
    let mut gvar = 0f32;
    let mut vars = [0f32; 4];
    for i in 0..8 {
        for j in 0..8 {
            let v = px[i * 8 + j] as f32;
            let s = sub(i, j);
            gvar += (v - gmean) * (v - gmean);
            vars[s] += (v - means[s]) * (v - means[s]);
        }
    }
    // C: `*= 1 / 63.f * 64`, a float constant folded left to right.
    gvar *= 1.0f32 / 63.0 * 64.0;
    for v in &mut vars {
        *v *= 1.0f32 / 15.0 * 16.0;
    }
    if gvar > 0.0 {
        gvar = (vars[0] + vars[1] + vars[2] + vars[3]) / gvar;
    }
    gvar
}

/// The block's masking energy (AC coefficients only), scaled as libvmaf: `sqrt` in double.
fn mask_of(dct: &[i32; 64], mask: &[[f32; 8]; 8], gvar: f32) -> f32 {
    let mut m = 0f32;
    for i in 0..8 {
        for j in usize::from(i == 0)..8 {
            let c = dct[i * 8 + j];
            // C: int * int (fits for <= 12 bits), converted, times the float weight.
            m += c.wrapping_mul(c) as f32 * mask[i][j];
        }
    }
    (((m * gvar) as f64).sqrt() / 32.0) as f32
}

#[allow(clippy::too_many_arguments)]
fn score<T: Copy + Into<i32>>(
    r: &[T],
    rs: usize,
    d: &[T],
    ds: usize,
    p: &Plane<'_>,
    bpc: u32,
    csf: &[[f32; 8]; 8],
    mask: &[[f32; 8]; 8],
) -> f64 {
    let (w, h) = (p.width, p.height);
    let mut ret = 0f32;
    let mut pixels: i32 = 0;
    let mut bs = [0i32; 64];
    let mut bd = [0i32; 64];
    let mut y = 0;
    while y + 7 < h {
        let mut x = 0;
        while x + 7 < w {
            for i in 0..8 {
                let (ro, dof) = ((y + i) * rs + x, (y + i) * ds + x);
                for j in 0..8 {
                    bs[i * 8 + j] = r[ro + j].into();
                    bd[i * 8 + j] = d[dof + j].into();
                }
            }
            let s_gvar = block_stats(&bs);
            let d_gvar = block_stats(&bd);
            dct::fdct8x8(&mut bs);
            dct::fdct8x8(&mut bd);
            let mut s_mask = mask_of(&bs, mask, s_gvar);
            let d_mask = mask_of(&bd, mask, d_gvar);
            if d_mask > s_mask {
                s_mask = d_mask;
            }
            for i in 0..8 {
                for j in 0..8 {
                    let mut err = bs[i * 8 + j].wrapping_sub(bd[i * 8 + j]).wrapping_abs() as f32;
                    if i != 0 || j != 0 {
                        let t = s_mask / mask[i][j];
                        err = if err < t { 0.0 } else { err - t };
                    }
                    ret += (err * csf[i][j]) * (err * csf[i][j]);
                    pixels += 1;
                }
            }
            x += 7;
        }
        y += 7;
    }
    plane_value(ret, pixels, bpc)
}

/// A plane's score from its `f32` sum of weighted squared errors over `pixels` coefficients:
/// the sum divided by the count, then by the squared peak, in `f32`.
pub(crate) fn plane_value(mut ret: f32, pixels: i32, bpc: u32) -> f64 {
    ret /= pixels as f32;
    let samplemax: i32 = (1 << bpc) - 1;
    ret /= samplemax.wrapping_mul(samplemax) as f32;
    ret as f64
}

/// The four outputs (per plane in dB, then their weighted combination) from the planes' scores.
pub(crate) fn outputs(s: [f64; 3]) -> [f64; 4] {
    [
        db(s[0]),
        db(s[1]),
        db(s[2]),
        db(s[0] * 0.8 + 0.1 * (s[1] + s[2])),
    ]
}

/// libvmaf's `convert_score_db` with weight 1.
fn db(score: f64) -> f64 {
    // C: `10 * (-1 * log10(1.0 * score))`; both products are exact.
    10.0 * -score.log10()
}

impl Extractor for PsnrHvs {
    fn extract(&mut self, input: &FrameInput<'_>, out: &mut [f64]) -> Result<()> {
        let missing = || Error::Internal("psnr_hvs: chroma planes missing".into());
        let [ru, rv] = input.reference_chroma.ok_or_else(missing)?;
        let [du, dv] = input.distorted_chroma.ok_or_else(missing)?;
        let pairs = [(input.reference, input.distorted), (ru, du), (rv, dv)];
        let mut s = [0f64; 3];
        for p in 0..3 {
            let (r, d) = &pairs[p];
            s[p] = plane_score(r, d, self.bpc, &self.csfs[p], &self.masks[p]);
        }
        out[..4].copy_from_slice(&outputs(s));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::feature::options::OptValues;

    fn format(bpc: u8, layout: ChromaLayout) -> PictureFormat {
        PictureFormat {
            width: 64,
            height: 48,
            bpc,
            layout,
        }
    }

    /// `blocks_along` counts the positions `score`'s loop visits (`x + 7 < n`, step 7).
    #[test]
    fn blocks_along_counts_the_block_positions() {
        for n in 0..200 {
            let mut count = 0;
            let mut x = 0;
            while x + 7 < n {
                count += 1;
                x += 7;
            }
            assert_eq!(blocks_along(n), count, "{n}");
        }
    }

    #[test]
    fn refuses_what_libvmaf_refuses() {
        let o = OptValues::defaults(&[]);
        for bpc in 8..=12 {
            assert!(check(&o, &format(bpc, ChromaLayout::Yuv420)).is_ok());
        }
        let e = check(&o, &format(16, ChromaLayout::Yuv444)).unwrap_err();
        assert!(e.to_string().contains("at most 12 bits"), "{e}");
        let e = check(&o, &format(8, ChromaLayout::Gray)).unwrap_err();
        assert!(e.to_string().contains("4:0:0"), "{e}");
    }
}
