//! `float_ansnr`: libvmaf's anti-noise SNR (`float_ansnr`) and its PSNR form (`float_anpsnr`):
//! the reference is smoothed with a 3×3 filter, the distorted picture with a 5×5 one (both on
//! `picture_copy` samples minus 128), and the signal and noise energies of the filtered pair give
//! the two values.
//!
//! libvmaf's arithmetic, reproduced: `f32` filter taps rounded from their `f64` fractions, each
//! output summed row of taps by row of taps in `f32`; borders mirrored without repeating the edge
//! at the top/left and repeating it at the bottom/right (`-i` and `2n - i - 1`); energies summed
//! per row in `f32`, then over rows in `f32`.

use super::float_psnr::peak_and_max;
use super::options::{OptSpec, OptValues};
use super::picture_copy::{check_depth, to_float};
use super::{Extractor, ExtractorConfig, ExtractorDef, FrameInput};
use crate::error::Result;
use crate::picture::PictureFormat;

/// Registry entry; outputs in libvmaf's append order.
pub static DEF: ExtractorDef = ExtractorDef {
    name: "float_ansnr",
    options: OPTIONS,
    spatial: &["float_ansnr", "float_anpsnr"],
    check,
    create,
    ..ExtractorDef::DEFAULTS
};

/// libvmaf's `float_ansnr` has no options.
static OPTIONS: &[OptSpec] = &[];

fn check(_: &OptValues, f: &PictureFormat) -> Result<()> {
    check_depth("float_ansnr", f.bpc)
}

/// The reference's 3×3 filter (libvmaf's `ansnr_filter2d_ref_s`).
pub(crate) static FILTER_REF: [f32; 9] = [
    (1.0 / 16.0) as f32,
    (2.0 / 16.0) as f32,
    (1.0 / 16.0) as f32,
    (2.0 / 16.0) as f32,
    (4.0 / 16.0) as f32,
    (2.0 / 16.0) as f32,
    (1.0 / 16.0) as f32,
    (2.0 / 16.0) as f32,
    (1.0 / 16.0) as f32,
];

/// The distorted picture's 5×5 filter (libvmaf's `ansnr_filter2d_dis_s`): `f64` fractions of 571
/// rounded to `f32`.
pub(crate) static FILTER_DIS: [f32; 25] = {
    const K: [f64; 25] = [
        2.0, 7.0, 12.0, 7.0, 2.0, //
        7.0, 31.0, 52.0, 31.0, 7.0, //
        12.0, 52.0, 127.0, 52.0, 12.0, //
        7.0, 31.0, 52.0, 31.0, 7.0, //
        2.0, 7.0, 12.0, 7.0, 2.0,
    ];
    let mut f = [0.0f32; 25];
    let mut i = 0;
    while i < 25 {
        f[i] = (K[i] / 571.0) as f32;
        i += 1;
    }
    f
};

/// Border padding of the mirrored copies (the 5×5 filter's radius).
const PAD: usize = 2;

/// libvmaf's ANSNR mirror of index `i` (may be out of range by up to `PAD`) into `0..n`.
fn mirror(i: isize, n: usize) -> usize {
    let n = n as isize;
    (if i < 0 {
        -i
    } else if i >= n {
        2 * n - i - 1
    } else {
        i
    }) as usize
}

struct FloatAnsnr {
    bpc: u8,
    peak: f64,
    max: f64,
    width: usize,
    height: usize,
    /// `picture_copy` output (minus 128).
    pic: Vec<f32>,
    /// The picture with `PAD` mirrored samples on every side.
    padded: Vec<f32>,
    ref_filtered: Vec<f32>,
    dis_filtered: Vec<f32>,
}

fn create(cfg: &ExtractorConfig) -> Result<Box<dyn Extractor>> {
    check(&cfg.opts, &cfg.format)?;
    let (peak, max) = peak_and_max(cfg.format.bpc);
    let (w, h) = (cfg.format.width, cfg.format.height);
    Ok(Box::new(FloatAnsnr {
        bpc: cfg.format.bpc,
        peak,
        max,
        width: w,
        height: h,
        pic: vec![0.0; w * h],
        padded: vec![0.0; (w + 2 * PAD) * (h + 2 * PAD)],
        ref_filtered: vec![0.0; w * h],
        dis_filtered: vec![0.0; w * h],
    }))
}

/// Fills `padded` from the dense `pic` with libvmaf's mirrored borders.
fn pad(pic: &[f32], w: usize, h: usize, padded: &mut [f32]) {
    let pw = w + 2 * PAD;
    for py in 0..h + 2 * PAD {
        let y = mirror(py as isize - PAD as isize, h);
        let row = &pic[y * w..(y + 1) * w];
        let dst = &mut padded[py * pw..(py + 1) * pw];
        for (px, d) in dst.iter_mut().enumerate() {
            *d = row[mirror(px as isize - PAD as isize, w)];
        }
    }
}

/// libvmaf's `ansnr_filter2d_s` on a padded picture with a square filter of width `fw`.
fn filter2d(f: &[f32], fw: usize, padded: &[f32], w: usize, h: usize, out: &mut [f32]) {
    let pw = w + 2 * PAD;
    let base = PAD - fw / 2;
    for i in 0..h {
        for j in 0..w {
            let mut accum = 0.0f32;
            for fi in 0..fw {
                let row = &padded[(i + base + fi) * pw + j + base..];
                let mut inner = 0.0f32;
                for fj in 0..fw {
                    inner += f[fi * fw + fj] * row[fj];
                }
                accum += inner;
            }
            out[i * w + j] = accum;
        }
    }
}

/// One row's signal and noise energies: `Σ r²` and `Σ (r − d)²` of the filtered rows, each an
/// `f32` sum from 0 in column order (libvmaf's `ansnr_mse` inner loop).
pub(crate) fn row_energies(r: &[f32], d: &[f32]) -> (f32, f32) {
    let (mut sig_row, mut noise_row) = (0.0f32, 0.0f32);
    for (&a, &b) in r.iter().zip(d) {
        sig_row += a * a;
        noise_row += (a - b) * (a - b);
    }
    (sig_row, noise_row)
}

/// The picture's energies from its rows' (`row_energies`): `f32` sums from 0 in row order.
pub(crate) fn sum_rows(rows: impl IntoIterator<Item = (f32, f32)>) -> (f32, f32) {
    let (mut sig, mut noise) = (0.0f32, 0.0f32);
    for (s, n) in rows {
        sig += s;
        noise += n;
    }
    (sig, noise)
}

/// `float_ansnr` and `float_anpsnr` from the picture's energies (`peak`, `max` from
/// `peak_and_max`, `w`×`h` the picture's size).
pub(crate) fn values(sig: f32, noise: f32, peak: f64, max: f64, w: usize, h: usize) -> [f64; 2] {
    let ansnr = if noise == 0.0 {
        max
    } else {
        10.0 * ((sig / noise) as f64).log10()
    };
    let floored = if noise as f64 > 1e-10 {
        noise as f64
    } else {
        1e-10
    };
    let anpsnr = 10.0 * (peak * peak * (w as i32 as f64) * (h as i32 as f64) / floored).log10();
    [ansnr, if anpsnr < max { anpsnr } else { max }]
}

impl Extractor for FloatAnsnr {
    fn extract(&mut self, input: &FrameInput<'_>, out: &mut [f64]) -> Result<()> {
        let (w, h) = (self.width, self.height);
        to_float(&input.reference, self.bpc, -128, &mut self.pic);
        pad(&self.pic, w, h, &mut self.padded);
        filter2d(&FILTER_REF, 3, &self.padded, w, h, &mut self.ref_filtered);
        to_float(&input.distorted, self.bpc, -128, &mut self.pic);
        pad(&self.pic, w, h, &mut self.padded);
        filter2d(&FILTER_DIS, 5, &self.padded, w, h, &mut self.dis_filtered);

        // libvmaf's ansnr_mse: f32 sums per row, then over rows.
        let rows = self
            .ref_filtered
            .chunks_exact(w)
            .zip(self.dis_filtered.chunks_exact(w))
            .map(|(r, d)| row_energies(r, d));
        let (sig, noise) = sum_rows(rows);
        out[..2].copy_from_slice(&values(sig, noise, self.peak, self.max, w, h));
        Ok(())
    }
}
