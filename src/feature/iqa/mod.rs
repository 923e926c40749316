//! The SSIM machinery libvmaf's `float_ssim` and `float_ms_ssim` share (libvmaf's `iqa/`
//! directory, a modified IQA library): luma to floats, the 11x11 Gaussian window applied as two
//! 1-D passes over the "valid" region only, low-pass decimation with mirrored borders, and the
//! per-pixel SSIM terms with their means.
//!
//! libvmaf has no SIMD code for these; its C is the specification, reproduced operation by
//! operation in [`scalar`] (see there for the `f32`/`f64` types). The kernels are dispatched
//! through [`Kernels`], chosen once per instance from [`crate::cpu::cpu_level`]; SIMD peers
//! vectorise across output pixels only, so every pixel sees the scalar operations in the scalar
//! order, and the sums over the SSIM map stay sequential. The `unsafe` of the SIMD peers stays
//! in their arch modules.
#![deny(unsafe_code)]

pub mod scalar;
#[cfg(test)]
mod tests;
#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
mod x86_64_avx2;

use crate::cpu::{cpu_level, CpuLevel};

/// Side of the Gaussian window.
pub const WINDOW: usize = 11;

/// IQA's decimated size: `n / factor`, plus one when `n` is odd (whatever the factor).
pub fn decimated(n: usize, factor: usize) -> usize {
    n / factor + (n & 1)
}

/// Whether [`Kernels::decimate_in_place`] of a `w`x`h` image reads only pixels it has not yet
/// overwritten, so that it equals [`Kernels::decimate`] into a separate buffer (the CUDA kernels
/// decimate out of place, and decline when this is false). Output `(x, y)` is stored at
/// `y * sw + x` after its taps are read, in raster order, so it reads only original pixels when
/// its lowest tap index, lowest row times `w` plus lowest column, is at least that position.
pub fn decimate_in_place_reads_originals(w: usize, h: usize, factor: usize, kw: usize) -> bool {
    let (sw, sh) = (decimated(w, factor), decimated(h, factor));
    let c = (kw / 2) as isize;
    let even = kw.is_multiple_of(2) as isize;
    let lowest = |p: usize, n: usize| {
        (-c..=c - even)
            .map(|t| scalar::mirror((p * factor) as isize + t, n) as isize)
            .min()
            .unwrap_or(0)
    };
    let behind = (0..sw)
        .map(|x| x as isize - lowest(x, w))
        .max()
        .unwrap_or(0);
    (0..sh).all(|y| lowest(y, h) * w as isize - (y * sw) as isize >= behind)
}

/// One output row of the decimation ([`scalar::decimate_row`]):
/// `(src, w, h, factor, kernel, kw, y, out)`.
pub type DecimateRow = fn(&[f32], usize, usize, usize, &[f32], usize, usize, &mut [f32]);
/// Horizontal Gaussian pass ([`scalar::convolve_rows`]): `(img, w, h, cache)`.
pub type ConvolveRows = fn(&[f32], usize, usize, &mut [f32]);
/// Vertical Gaussian pass ([`scalar::convolve_cols`]): `(cache, w, h, dst)`.
pub type ConvolveCols = fn(&[f32], usize, usize, &mut [f32]);
/// Second-moment maps ([`scalar::squares`]): `(r, d, rr, dd, rd)`.
pub type Squares = fn(&[f32], &[f32], &mut [f32], &mut [f32], &mut [f32]);
/// The SSIM map's sums ([`scalar::ssim_sums`]): `(mu_r, mu_d, rr, dd, rd)`.
pub type SsimSums = fn(&[f32], &[f32], &[f32], &[f32], &[f32]) -> [f64; 4];

/// The IQA kernels of one CPU level: the scalar specification, with the entries a SIMD level
/// provides replaced (a level without its own kernel keeps the best lower one's).
///
/// With the `check_simd` feature every call through a SIMD entry is recomputed with the scalar
/// kernel and the outputs asserted equal, bit for bit.
#[derive(Clone, Copy, Debug)]
pub struct Kernels {
    level: CpuLevel,
    /// See [`DecimateRow`].
    pub decimate_row: DecimateRow,
    /// See [`ConvolveRows`].
    pub convolve_rows: ConvolveRows,
    /// See [`ConvolveCols`].
    pub convolve_cols: ConvolveCols,
    /// See [`Squares`].
    pub squares: Squares,
    /// See [`SsimSums`].
    pub ssim_sums: SsimSums,
}

impl Kernels {
    /// The scalar specification kernels.
    pub const SCALAR: Kernels = Kernels {
        level: CpuLevel::Scalar,
        decimate_row: scalar::decimate_row,
        convolve_rows: scalar::convolve_rows,
        convolve_cols: scalar::convolve_cols,
        squares: scalar::squares,
        ssim_sums: scalar::ssim_sums,
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

    /// IQA's `_iqa_decimate` into its own buffer: every `factor`-th pixel of the `w`x`h` image
    /// low-passed by the `kw`x`kw` kernel `k` (row-major), borders mirrored. Returns the new
    /// size.
    #[allow(clippy::too_many_arguments)]
    pub fn decimate(
        &self,
        src: &[f32],
        w: usize,
        h: usize,
        factor: usize,
        k: &[f32],
        kw: usize,
        dst: &mut [f32],
    ) -> (usize, usize) {
        let (sw, sh) = (decimated(w, factor), decimated(h, factor));
        for y in 0..sh {
            let out = &mut dst[y * sw..(y + 1) * sw];
            self.decimate_row(src, w, h, factor, k, kw, y, out);
        }
        (sw, sh)
    }

    /// [`Kernels::decimate`] in place, as libvmaf's `float_ssim` calls it: each result overwrites
    /// the buffer while later pixels are still read from it, in libvmaf's order. A row whose
    /// reads all lie outside the part of the buffer it writes is computed whole and then stored
    /// (the same values, as nothing it reads changes meanwhile); the others run in place.
    pub fn decimate_in_place(
        &self,
        img: &mut [f32],
        w: usize,
        h: usize,
        factor: usize,
        k: &[f32],
        kw: usize,
    ) -> (usize, usize) {
        let (sw, sh) = (decimated(w, factor), decimated(h, factor));
        let mut row = vec![0.0f32; sw];
        let c = (kw / 2) as isize;
        for y in 0..sh {
            let written = y * sw..(y + 1) * sw;
            let clear = (0..kw as isize).all(|v| {
                let r = scalar::mirror((y * factor) as isize + v - c, h) * w;
                r >= written.end || r + w <= written.start
            });
            if clear {
                self.decimate_row(img, w, h, factor, k, kw, y, &mut row);
                img[written].copy_from_slice(&row);
            } else {
                scalar::decimate_row_in_place(img, w, h, factor, k, kw, y);
            }
        }
        (sw, sh)
    }

    #[allow(clippy::too_many_arguments)]
    fn decimate_row(
        &self,
        src: &[f32],
        w: usize,
        h: usize,
        factor: usize,
        k: &[f32],
        kw: usize,
        y: usize,
        out: &mut [f32],
    ) {
        (self.decimate_row)(src, w, h, factor, k, kw, y, out);
        #[cfg(feature = "check_simd")]
        if self.level > CpuLevel::Scalar {
            let mut want = vec![0.0f32; out.len()];
            scalar::decimate_row(src, w, h, factor, k, kw, y, &mut want);
            assert_bits_eq(out, &want, "decimate_row");
        }
    }

    fn convolve_rows(&self, img: &[f32], w: usize, h: usize, cache: &mut [f32]) {
        (self.convolve_rows)(img, w, h, cache);
        #[cfg(feature = "check_simd")]
        if self.level > CpuLevel::Scalar {
            let mut want = vec![0.0f32; w * h];
            scalar::convolve_rows(img, w, h, &mut want);
            let c = WINDOW / 2;
            for y in 0..h {
                let cols = y * w + c..(y + 1) * w - c;
                assert_bits_eq(&cache[cols.clone()], &want[cols], "convolve_rows");
            }
        }
    }

    fn convolve_cols(&self, cache: &[f32], w: usize, h: usize, dst: &mut [f32]) {
        (self.convolve_cols)(cache, w, h, dst);
        #[cfg(feature = "check_simd")]
        if self.level > CpuLevel::Scalar {
            let n = (w + 1 - WINDOW) * (h + 1 - WINDOW);
            let mut want = vec![0.0f32; n];
            scalar::convolve_cols(cache, w, h, &mut want);
            assert_bits_eq(&dst[..n], &want, "convolve_cols");
        }
    }

    fn squares(&self, r: &[f32], d: &[f32], rr: &mut [f32], dd: &mut [f32], rd: &mut [f32]) {
        (self.squares)(r, d, rr, dd, rd);
        #[cfg(feature = "check_simd")]
        if self.level > CpuLevel::Scalar {
            let n = r.len();
            let (mut wr, mut wd, mut wx) = (vec![0.0; n], vec![0.0; n], vec![0.0; n]);
            scalar::squares(r, d, &mut wr, &mut wd, &mut wx);
            assert_bits_eq(&rr[..n], &wr, "squares rr");
            assert_bits_eq(&dd[..n], &wd, "squares dd");
            assert_bits_eq(&rd[..n], &wx, "squares rd");
        }
    }

    fn ssim_sums(
        &self,
        mu_r: &[f32],
        mu_d: &[f32],
        rr: &[f32],
        dd: &[f32],
        rd: &[f32],
    ) -> [f64; 4] {
        let sums = (self.ssim_sums)(mu_r, mu_d, rr, dd, rd);
        #[cfg(feature = "check_simd")]
        if self.level > CpuLevel::Scalar {
            let want = scalar::ssim_sums(mu_r, mu_d, rr, dd, rd);
            assert_eq!(
                sums.map(f64::to_bits),
                want.map(f64::to_bits),
                "check_simd: iqa ssim_sums ({sums:?} against {want:?})"
            );
        }
        sums
    }
}

/// Asserts two float slices equal bit for bit (NaNs and signed zeros included).
#[cfg(feature = "check_simd")]
fn assert_bits_eq(got: &[f32], want: &[f32], what: &str) {
    assert_eq!(got.len(), want.len(), "check_simd: iqa {what} length");
    if let Some(i) = (0..got.len()).find(|&i| got[i].to_bits() != want[i].to_bits()) {
        panic!(
            "check_simd: iqa {what} at {i}: {} against scalar {}",
            got[i], want[i]
        );
    }
}

/// SSIM of one picture pair: the mean SSIM and its luminance, contrast and structure means, each
/// rounded to `f32` as libvmaf returns them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Lcs {
    /// Mean SSIM.
    pub ssim: f32,
    /// Mean luminance term.
    pub l: f32,
    /// Mean contrast term.
    pub c: f32,
    /// Mean structure term.
    pub s: f32,
}

impl Lcs {
    /// The means from the SSIM map's sums ([`scalar::ssim_sums`]) over its `pixels` pixels.
    pub fn from_sums(sums: [f64; 4], pixels: usize) -> Self {
        let [ssim_sum, l_sum, c_sum, s_sum] = sums;
        let n = pixels as f64;
        Lcs {
            ssim: (ssim_sum / n) as f32,
            l: (l_sum / n) as f32,
            c: (c_sum / n) as f32,
            s: (s_sum / n) as f32,
        }
    }
}

/// Scratch for [`Ssim::compute`] on pictures up to a given size, and the kernels it uses.
#[derive(Debug)]
pub struct Ssim {
    mu_r: Vec<f32>,
    mu_d: Vec<f32>,
    rr: Vec<f32>,
    dd: Vec<f32>,
    rd: Vec<f32>,
    cache: Vec<f32>,
    kernels: Kernels,
}

impl Ssim {
    /// Scratch for pictures of at most `w * h` pixels, with [`cpu_level`]'s kernels.
    pub fn new(w: usize, h: usize) -> Self {
        let n = w * h;
        Ssim {
            mu_r: vec![0.0; n],
            mu_d: vec![0.0; n],
            rr: vec![0.0; n],
            dd: vec![0.0; n],
            rd: vec![0.0; n],
            cache: vec![0.0; n],
            kernels: Kernels::for_level(cpu_level()),
        }
    }

    /// Uses the kernels of `level` (at most what this machine runs) instead of
    /// [`cpu_level`]'s.
    pub fn with_cpu_level(mut self, level: CpuLevel) -> Self {
        self.kernels = Kernels::for_level(level.min(cpu_level()));
        self
    }

    /// The kernels in use (also for the callers' decimation).
    pub fn kernels(&self) -> &Kernels {
        &self.kernels
    }

    /// IQA's `_iqa_ssim` with libvmaf's default arguments (Gaussian window, K1 0.01, K2 0.03,
    /// L 255, exponents 1) on compact `w`x`h` pictures, `w` and `h` at least [`WINDOW`].
    pub fn compute(&mut self, r: &[f32], d: &[f32], w: usize, h: usize) -> Lcs {
        let n = w * h;
        let (r, d) = (&r[..n], &d[..n]);
        let k = &self.kernels;
        let cache = &mut self.cache;
        k.convolve_rows(r, w, h, cache);
        k.convolve_cols(cache, w, h, &mut self.mu_r);
        k.convolve_rows(d, w, h, cache);
        k.convolve_cols(cache, w, h, &mut self.mu_d);
        k.squares(
            r,
            d,
            &mut self.rr[..n],
            &mut self.dd[..n],
            &mut self.rd[..n],
        );
        // In place, as libvmaf: the row pass reads the whole map before the column pass writes.
        for map in [&mut self.rr, &mut self.dd, &mut self.rd] {
            k.convolve_rows(map, w, h, cache);
            k.convolve_cols(cache, w, h, map);
        }
        let n = (w + 1 - WINDOW) * (h + 1 - WINDOW);
        let sums = k.ssim_sums(
            &self.mu_r[..n],
            &self.mu_d[..n],
            &self.rr[..n],
            &self.dd[..n],
            &self.rd[..n],
        );
        Lcs::from_sums(sums, n)
    }
}

/// libvmaf's dB cap under `clip_db`: `ceil(10 log10(peak² / (0.5 / (w h))))`, else infinity.
pub fn max_db(clip: bool, bpc: u8, w: usize, h: usize) -> f64 {
    if !clip {
        return f64::INFINITY;
    }
    let peak = (1u32 << bpc) - 1;
    // C: unsigned products, double division.
    let mse = 0.5 / ((w * h) as u32) as f64;
    (10.0 * (peak.wrapping_mul(peak) as f64 / mse).log10()).ceil()
}

/// libvmaf's `convert_to_db`: `MIN(-10 log10(1 - score), max_db)`.
pub fn to_db(score: f64, max_db: f64) -> f64 {
    let db = -10.0 * (1.0 - score).log10();
    if db < max_db {
        db
    } else {
        max_db
    }
}
