//! The SSIM machinery libvmaf's `float_ssim` and `float_ms_ssim` share (libvmaf's `iqa/`
//! directory, a modified IQA library): luma to floats, the 11x11 Gaussian window applied as two
//! 1-D passes over the "valid" region only, low-pass decimation with mirrored borders, and the
//! per-pixel SSIM terms with their means.
//!
//! libvmaf has no SIMD code for these; its C runs everywhere, so this is the only path. The
//! arithmetic types follow libvmaf's C operation by operation: products of two `float`s are `f32`,
//! filter sums accumulate those products in `f64`, `2.0 * …` promotes to `f64`, and the structure
//! term is divided in `f32`.

/// Side of the Gaussian window.
pub const WINDOW: usize = 11;

/// The separable 11-tap Gaussian (sigma 1.5), as libvmaf's `g_gaussian_window_h/_v`.
const GAUSSIAN: [f32; WINDOW] = [
    0.001028, 0.007599, 0.036001, 0.109361, 0.213006, 0.266012, 0.213006, 0.109361, 0.036001,
    0.007599, 0.001028,
];

/// IQA's `KBND_SYMMETRIC`: an out-of-range coordinate mirrored about the border (edge repeated).
fn mirror(i: isize, n: usize) -> usize {
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
fn filter_pixel(img: &[f32], w: usize, h: usize, x: usize, y: usize, k: &[f32], kw: usize) -> f32 {
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

/// IQA's decimated size: `n / factor`, plus one when `n` is odd (whatever the factor).
pub fn decimated(n: usize, factor: usize) -> usize {
    n / factor + (n & 1)
}

/// IQA's `_iqa_decimate` into its own buffer: every `factor`-th pixel of the low-passed image.
/// Returns the new size.
pub fn decimate(
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
        for x in 0..sw {
            dst[y * sw + x] = filter_pixel(src, w, h, x * factor, y * factor, k, kw);
        }
    }
    (sw, sh)
}

/// [`decimate`] in place, as libvmaf's `float_ssim` calls it: each result overwrites the buffer
/// while later pixels are still read from it, in the same order as libvmaf.
pub fn decimate_in_place(
    img: &mut [f32],
    w: usize,
    h: usize,
    factor: usize,
    k: &[f32],
    kw: usize,
) -> (usize, usize) {
    let (sw, sh) = (decimated(w, factor), decimated(h, factor));
    for y in 0..sh {
        for x in 0..sw {
            let v = filter_pixel(img, w, h, x * factor, y * factor, k, kw);
            img[y * sw + x] = v;
        }
    }
    (sw, sh)
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

/// Scratch for [`Ssim::compute`] on pictures up to a given size.
#[derive(Debug)]
pub struct Ssim {
    mu_r: Vec<f32>,
    mu_d: Vec<f32>,
    rr: Vec<f32>,
    dd: Vec<f32>,
    rd: Vec<f32>,
    cache: Vec<f32>,
}

/// Horizontal pass of IQA's separable convolution: for every row, the window's valid columns,
/// written at the window centre's position (stride `w`).
fn convolve_rows(img: &[f32], w: usize, h: usize, cache: &mut [f32]) {
    let c = WINDOW / 2;
    for y in 0..h {
        let row = &img[y * w..(y + 1) * w];
        for (x, win) in row.windows(WINDOW).enumerate() {
            let mut sum = 0.0f64;
            for (p, k) in win.iter().zip(&GAUSSIAN) {
                sum += (p * k) as f64;
            }
            cache[y * w + x + c] = sum as f32;
        }
    }
}

/// Vertical pass: the valid `(w - 10) x (h - 10)` region, compact (stride `w - 10`).
fn convolve_cols(cache: &[f32], w: usize, h: usize, dst: &mut [f32]) {
    let c = WINDOW / 2;
    let (dw, dh) = (w + 1 - WINDOW, h + 1 - WINDOW);
    for y in 0..dh {
        for x in 0..dw {
            let mut sum = 0.0f64;
            for (v, k) in GAUSSIAN.iter().enumerate() {
                sum += (cache[(y + v) * w + x + c] * k) as f64;
            }
            dst[y * dw + x] = sum as f32;
        }
    }
}

impl Ssim {
    /// Scratch for pictures of at most `w * h` pixels.
    pub fn new(w: usize, h: usize) -> Self {
        let n = w * h;
        Ssim {
            mu_r: vec![0.0; n],
            mu_d: vec![0.0; n],
            rr: vec![0.0; n],
            dd: vec![0.0; n],
            rd: vec![0.0; n],
            cache: vec![0.0; n],
        }
    }

    /// IQA's `_iqa_ssim` with libvmaf's default arguments (Gaussian window, K1 0.01, K2 0.03,
    /// L 255, exponents 1) on compact `w`x`h` pictures, `w` and `h` at least [`WINDOW`].
    pub fn compute(&mut self, r: &[f32], d: &[f32], w: usize, h: usize) -> Lcs {
        let n = w * h;
        let (r, d) = (&r[..n], &d[..n]);
        let cache = &mut self.cache;
        convolve_rows(r, w, h, cache);
        convolve_cols(cache, w, h, &mut self.mu_r);
        convolve_rows(d, w, h, cache);
        convolve_cols(cache, w, h, &mut self.mu_d);
        for i in 0..n {
            self.rr[i] = r[i] * r[i];
            self.dd[i] = d[i] * d[i];
            self.rd[i] = r[i] * d[i];
        }
        // In place, as libvmaf: the row pass reads the whole map before the column pass writes.
        for map in [&mut self.rr, &mut self.dd, &mut self.rd] {
            convolve_rows(map, w, h, cache);
            convolve_cols(cache, w, h, map);
        }
        let (w, h) = (w + 1 - WINDOW, h + 1 - WINDOW);
        let n = w * h;

        let l = 255.0f32;
        let c1 = (0.01f32 * l) * (0.01f32 * l);
        let c2 = (0.03f32 * l) * (0.03f32 * l);
        let c3 = c2 / 2.0f32;
        // libvmaf's MAX(0.0, x): a double comparison, so NaN stays NaN.
        let floor0 = |x: f32| if 0.0f64 > x as f64 { 0.0f32 } else { x };
        let (mut ssim_sum, mut l_sum, mut c_sum, mut s_sum) = (0.0f64, 0.0f64, 0.0f64, 0.0f64);
        for i in 0..n {
            let (mr, md) = (self.mu_r[i], self.mu_d[i]);
            let rr = floor0(self.rr[i] - mr * mr);
            let dd = floor0(self.dd[i] - md * md);
            let rd = self.rd[i] - mr * md;
            let sigma = ((rr * dd) as f64).sqrt() as f32;
            let lum = (2.0 * mr as f64 * md as f64 + c1 as f64) / ((mr * mr + md * md + c1) as f64);
            let con = (2.0 * sigma as f64 + c2 as f64) / ((rr + dd + c2) as f64);
            // A flat, identical region can leave a tiny negative covariance: libvmaf clamps it.
            let rd = if rd < 0.0 && sigma <= 0.0 { 0.0 } else { rd };
            let st = ((rd + c3) / (sigma + c3)) as f64;
            ssim_sum += lum * con * st;
            l_sum += lum;
            c_sum += con;
            s_sum += st;
        }
        let n = n as f64;
        Lcs {
            ssim: (ssim_sum / n) as f32,
            l: (l_sum / n) as f32,
            c: (c_sum / n) as f32,
            s: (s_sum / n) as f32,
        }
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
