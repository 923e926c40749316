//! The scalar specification of the IQA kernels: libvmaf's C, operation by operation. Products of
//! two `float`s are `f32`, filter sums accumulate those products in `f64` in the kernel's order,
//! `2.0 * …` promotes to `f64`, and the structure term is divided in `f32`.
#![forbid(unsafe_code)]

use super::WINDOW;

/// The separable 11-tap Gaussian (sigma 1.5), as libvmaf's `g_gaussian_window_h/_v`.
pub const GAUSSIAN: [f32; WINDOW] = [
    0.001028, 0.007599, 0.036001, 0.109361, 0.213006, 0.266012, 0.213006, 0.109361, 0.036001,
    0.007599, 0.001028,
];

/// IQA's `KBND_SYMMETRIC`: an out-of-range coordinate mirrored about the border (edge repeated).
pub fn mirror(i: isize, n: usize) -> usize {
    let n = n as isize;
    let m = if i < 0 {
        -1 - i
    } else if i >= n {
        n - (i - n) - 1
    } else {
        i
    };
    m as usize
}

/// IQA's `_iqa_filter_pixel`: the `kw`x`kw` kernel `k` (row-major) centred on (`x`, `y`) of the
/// `w`x`h` image, borders mirrored; `f32` products summed in `f64`, rows outer.
pub fn filter_pixel(
    img: &[f32],
    w: usize,
    h: usize,
    x: usize,
    y: usize,
    k: &[f32],
    kw: usize,
) -> f32 {
    let c = (kw / 2) as isize;
    let even = kw.is_multiple_of(2) as isize;
    let mut sum = 0.0f64;
    let mut taps = k.iter();
    for v in -c..=c - even {
        let row = mirror(y as isize + v, h) * w;
        for u in -c..=c - even {
            let kv = *taps.next().expect("kernel has kw*kw taps");
            sum += (img[row + mirror(x as isize + u, w)] * kv) as f64;
        }
    }
    sum as f32
}

/// One output row `y` of IQA's `_iqa_decimate` (every `factor`-th pixel of the low-passed
/// `w`x`h` image `src`) into `out` (the decimated width).
#[allow(clippy::too_many_arguments)]
pub fn decimate_row(
    src: &[f32],
    w: usize,
    h: usize,
    factor: usize,
    k: &[f32],
    kw: usize,
    y: usize,
    out: &mut [f32],
) {
    for (x, o) in out.iter_mut().enumerate() {
        *o = filter_pixel(src, w, h, x * factor, y * factor, k, kw);
    }
}

/// IQA's `_iqa_decimate` into its own buffer, the whole picture at once: the specification the
/// row-wise drivers are tested against. Returns the new size.
pub fn decimate(
    src: &[f32],
    w: usize,
    h: usize,
    factor: usize,
    k: &[f32],
    kw: usize,
    dst: &mut [f32],
) -> (usize, usize) {
    let (sw, sh) = (super::decimated(w, factor), super::decimated(h, factor));
    for y in 0..sh {
        decimate_row(src, w, h, factor, k, kw, y, &mut dst[y * sw..(y + 1) * sw]);
    }
    (sw, sh)
}

/// One output row `y` of [`decimate_in_place`]: each result overwrites the buffer while later
/// pixels are still read from it.
pub fn decimate_row_in_place(
    img: &mut [f32],
    w: usize,
    h: usize,
    factor: usize,
    k: &[f32],
    kw: usize,
    y: usize,
) {
    let sw = super::decimated(w, factor);
    for x in 0..sw {
        let v = filter_pixel(img, w, h, x * factor, y * factor, k, kw);
        img[y * sw + x] = v;
    }
}

/// IQA's `_iqa_decimate` in place, as libvmaf's `float_ssim` calls it, in libvmaf's order.
pub fn decimate_in_place(
    img: &mut [f32],
    w: usize,
    h: usize,
    factor: usize,
    k: &[f32],
    kw: usize,
) -> (usize, usize) {
    let (sw, sh) = (super::decimated(w, factor), super::decimated(h, factor));
    for y in 0..sh {
        decimate_row_in_place(img, w, h, factor, k, kw, y);
    }
    (sw, sh)
}

/// The Gaussian over `win` (11 samples), in the window's order.
#[inline]
pub fn gaussian_dot<'a>(win: impl Iterator<Item = &'a f32>) -> f32 {
    let mut sum = 0.0f64;
    for (p, k) in win.zip(&GAUSSIAN) {
        sum += (p * k) as f64;
    }
    sum as f32
}

/// Horizontal pass of IQA's separable convolution: for every row, the window's valid columns,
/// written at the window centre's position (stride `w`; the `WINDOW / 2` columns at each end
/// are left as they are).
pub fn convolve_rows(img: &[f32], w: usize, h: usize, cache: &mut [f32]) {
    let c = WINDOW / 2;
    for y in 0..h {
        let row = &img[y * w..(y + 1) * w];
        for (x, win) in row.windows(WINDOW).enumerate() {
            cache[y * w + x + c] = gaussian_dot(win.iter());
        }
    }
}

/// The vertical pass at one output pixel: column `x + WINDOW / 2` of rows `y..y + WINDOW`.
#[inline]
pub fn convolve_col_pixel(cache: &[f32], w: usize, x: usize, y: usize) -> f32 {
    let mut sum = 0.0f64;
    for (v, k) in GAUSSIAN.iter().enumerate() {
        sum += (cache[(y + v) * w + x + WINDOW / 2] * k) as f64;
    }
    sum as f32
}

/// Vertical pass: the valid `(w - 10) x (h - 10)` region, compact (stride `w - 10`).
pub fn convolve_cols(cache: &[f32], w: usize, h: usize, dst: &mut [f32]) {
    let (dw, dh) = (w + 1 - WINDOW, h + 1 - WINDOW);
    for y in 0..dh {
        for x in 0..dw {
            dst[y * dw + x] = convolve_col_pixel(cache, w, x, y);
        }
    }
}

/// The second-moment maps of libvmaf's SSIM: `r * r`, `d * d` and `r * d` per pixel.
pub fn squares(r: &[f32], d: &[f32], rr: &mut [f32], dd: &mut [f32], rd: &mut [f32]) {
    for i in 0..r.len() {
        rr[i] = r[i] * r[i];
        dd[i] = d[i] * d[i];
        rd[i] = r[i] * d[i];
    }
}

/// libvmaf's SSIM constants for its default arguments (K1 0.01, K2 0.03, L 255), in `f32`.
#[derive(Debug, Clone, Copy)]
pub struct Constants {
    /// `(K1 L)²`.
    pub c1: f32,
    /// `(K2 L)²`.
    pub c2: f32,
    /// `C2 / 2`.
    pub c3: f32,
}

impl Constants {
    /// As libvmaf's `_iqa_ssim` derives them.
    pub fn new() -> Self {
        let l = 255.0f32;
        let c1 = (0.01f32 * l) * (0.01f32 * l);
        let c2 = (0.03f32 * l) * (0.03f32 * l);
        Constants {
            c1,
            c2,
            c3: c2 / 2.0f32,
        }
    }
}

impl Default for Constants {
    fn default() -> Self {
        Self::new()
    }
}

/// One pixel's SSIM terms `(l * c * s, l, c, s)` from its means `mr`, `md` and filtered second
/// moments `rr`, `dd`, `rd` (before the means are taken off).
#[inline]
pub fn ssim_terms(mr: f32, md: f32, rr: f32, dd: f32, rd: f32, k: Constants) -> [f64; 4] {
    let Constants { c1, c2, c3 } = k;
    // libvmaf's MAX(0.0, x): a double comparison, so NaN stays NaN.
    let floor0 = |x: f32| if 0.0f64 > x as f64 { 0.0f32 } else { x };
    let rr = floor0(rr - mr * mr);
    let dd = floor0(dd - md * md);
    let rd = rd - mr * md;
    let sigma = ((rr * dd) as f64).sqrt() as f32;
    let lum = (2.0 * mr as f64 * md as f64 + c1 as f64) / ((mr * mr + md * md + c1) as f64);
    let con = (2.0 * sigma as f64 + c2 as f64) / ((rr + dd + c2) as f64);
    // A flat, identical region can leave a tiny negative covariance: libvmaf clamps it.
    let rd = if rd < 0.0 && sigma <= 0.0 { 0.0 } else { rd };
    let st = ((rd + c3) / (sigma + c3)) as f64;
    [lum * con * st, lum, con, st]
}

/// The SSIM map's sums `(Σ l c s, Σ l, Σ c, Σ s)` over the pixels of the filtered maps, each
/// in `f64` in pixel order.
pub fn ssim_sums(mu_r: &[f32], mu_d: &[f32], rr: &[f32], dd: &[f32], rd: &[f32]) -> [f64; 4] {
    let k = Constants::new();
    let mut sums = [0.0f64; 4];
    for i in 0..mu_r.len() {
        let t = ssim_terms(mu_r[i], mu_d[i], rr[i], dd[i], rd[i], k);
        add_terms(&mut sums, t);
    }
    sums
}

/// Adds one pixel's terms to the running sums (the order the sums must keep).
#[inline]
pub fn add_terms(sums: &mut [f64; 4], t: [f64; 4]) {
    for (s, t) in sums.iter_mut().zip(t) {
        *s += t;
    }
}
