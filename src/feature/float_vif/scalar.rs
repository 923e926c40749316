//! The float VIF kernels, in libvmaf's operation order and types (`vif_tools.c`, and the AVX2
//! convolution of `common/convolution_avx.c` it dispatches to, which computes the same sums in
//! the same order: `accum = 0; accum += f[k] * x` for each tap, mirrored borders).
//!
//! All planes here are row-major `f32` with an explicit stride (in samples).

/// libvmaf's `valid_kernelscales` (`vif_tools.h`), as the `float` values C computes.
pub const VALID_KERNELSCALES: [f32; 21] = [
    1.0,
    1.0 / 2.0,
    3.0 / 2.0,
    2.0,
    2.0 / 3.0,
    24.0 / 10.0,
    360.0 / 97.0,
    4.0 / 3.0,
    3.5 / 3.0,
    3.75 / 3.0,
    4.25 / 3.0,
    5.0 / 3.0,
    3.0,
    1.0 / 2.25,
    1.4746,
    1.54,
    1.6,
    1.06667,
    0.711111,
    0.740740,
    1.111111,
];

/// Whether libvmaf accepts a kernel scale (`vif_validate_kernelscale`: within 1e-3 of a listed
/// value, compared in `float`).
pub fn kernelscale_is_valid(ks: f64) -> bool {
    let ks = ks as f32;
    VALID_KERNELSCALES
        .iter()
        .any(|v| (((ks - v).abs()) as f64) < 1e-3)
}

/// C's `ceil` to odd (`round_up_to_odd`).
fn round_up_to_odd(f: f32) -> i32 {
    let c = (f as f64).ceil() as i32;
    if c % 2 == 0 {
        c + 1
    } else {
        c
    }
}

/// Filter width of a scale (`vif_get_filter_size`).
pub fn filter_size(scale: usize, kernelscale: f32) -> usize {
    let n = (1i32 << (4 - scale)) + 1;
    round_up_to_odd(n as f32 * kernelscale).max(3) as usize
}

/// `get_gaussian_pdf`: the exponent in `double`, the result in `float`.
fn gaussian_pdf(x: f32, mean: f32, stdev: f32) -> f32 {
    let d = (x - mean) as f64;
    let num = (-0.5 * d / stdev as f64 * d / stdev as f64).exp() as f32;
    let den = (1.0 / (stdev as f64 * (2.0 * std::f64::consts::PI).sqrt())) as f32;
    num / den
}

/// The normalised Gaussian of a scale (`vif_get_filter`: sigma = width / 5).
pub fn filter(scale: usize, kernelscale: f32) -> Vec<f32> {
    let size = filter_size(scale, kernelscale);
    gaussian(size, size as f32 / 5.0)
}

/// A normalised Gaussian of `size` (odd) taps (`get_1d_gaussian_kernel`): each tap's density in
/// `float`, divided by their `float` sum.
pub fn gaussian(size: usize, stdev: f32) -> Vec<f32> {
    let k = (size as i32 - 1) / 2;
    let mut out: Vec<f32> = (0..size as i32)
        .map(|i| gaussian_pdf((i - k) as f32, 0.0, stdev))
        .collect();
    let mut sum = 0f32;
    for v in &out {
        sum += v;
    }
    for v in &mut out {
        *v /= sum;
    }
    out
}

/// libvmaf's mirror for filter taps: `-i` before the start, `2n - i - 2` past the end.
#[inline]
fn mirror(i: isize, n: isize) -> usize {
    let m = if i < 0 {
        -i
    } else if i >= n {
        2 * n - i - 2
    } else {
        i
    };
    m as usize
}

/// What the vertical pass filters: the plane, its square, or the product of two planes.
#[derive(Clone, Copy)]
pub enum Source<'a> {
    /// `x`.
    Plain(&'a [f32]),
    /// `x * x`.
    Square(&'a [f32]),
    /// `x * y`.
    Product(&'a [f32], &'a [f32]),
}

pub use crate::feature::scale::Geom;

/// Separable filter (`vif_filter1d_s`, `_sq_s`, `_xy_s`): vertical pass into `tmp` (one row),
/// then horizontal into `dst`, both with mirrored borders. The caller guarantees every scale is
/// larger than the filter radius (checked at configure time), so mirrored taps stay inside.
pub fn filter1d(f: &[f32], src: Source<'_>, g: Geom, dst: &mut [f32], tmp: &mut [f32]) {
    let (w, h, s) = (g.w, g.h, g.stride);
    let r = (f.len() / 2) as isize;
    let tmp = &mut tmp[..w];
    for i in 0..h {
        tmp.fill(0.0);
        for (k, &fk) in f.iter().enumerate() {
            let ii = mirror(i as isize - r + k as isize, h as isize) * s;
            match src {
                Source::Plain(x) => {
                    for (t, &v) in tmp.iter_mut().zip(&x[ii..ii + w]) {
                        *t += fk * v;
                    }
                }
                Source::Square(x) => {
                    for (t, &v) in tmp.iter_mut().zip(&x[ii..ii + w]) {
                        *t += fk * (v * v);
                    }
                }
                Source::Product(x, y) => {
                    for ((t, &a), &b) in tmp.iter_mut().zip(&x[ii..ii + w]).zip(&y[ii..ii + w]) {
                        *t += fk * (a * b);
                    }
                }
            }
        }
        let row = &mut dst[i * s..i * s + w];
        for (j, out) in row.iter_mut().enumerate() {
            let mut acc = 0f32;
            for (k, &fk) in f.iter().enumerate() {
                acc += fk * tmp[mirror(j as isize - r + k as isize, w as isize)];
            }
            *out = acc;
        }
    }
}

/// Decimation by two (`vif_dec2_s`): every other sample of every other row, `w / 2` by `h / 2`.
pub fn dec2(src: &[f32], g: Geom, dst: &mut [f32], dst_stride: usize) {
    for i in 0..g.h / 2 {
        for j in 0..g.w / 2 {
            dst[i * dst_stride + j] = src[2 * i * g.stride + 2 * j];
        }
    }
}

/// The coefficients of libvmaf's polynomial `log2f` (`VIF_OPT_FAST_LOG2`), highest degree first:
/// double literals in C, rounded to `float` where they are used (`c as f32`).
#[allow(clippy::excessive_precision)]
pub const LOG2_POLY: [f64; 9] = [
    -0.012671635276421,
    0.064841182402670,
    -0.157048836463065,
    0.257167726303123,
    -0.353800560300520,
    0.480131410397451,
    -0.721314327952201,
    1.442694803896991,
    0.0,
];

/// `statistic`'s epsilon (`1.0e-10f` in libvmaf).
pub const EPS: f32 = 1.0e-10;

/// `statistic`'s `sigma_max_inv`: `powf(sigma_nsq, 2) / (255 * 255)`, the power in `float`.
pub fn sigma_max_inv(sigma_nsq: f64) -> f32 {
    ((sigma_nsq as f32).powf(2.0) as f64 / (255.0 * 255.0)) as f32
}

/// libvmaf's polynomial `log2f` (`VIF_OPT_FAST_LOG2`): exponent plus a degree-8 Horner
/// polynomial of the mantissa ([`LOG2_POLY`]), in `float`.
pub fn log2f_approx(x: f32) -> f32 {
    if x == 0.0 {
        return f32::NEG_INFINITY;
    }
    if x < 0.0 {
        return f32::NAN;
    }
    let u = x.to_bits();
    let exponent = (u & 0x7F80_0000) >> 23;
    let remain = f32::from_bits((u & 0x007F_FFFF) | 0x3F80_0000);
    let log_base = (exponent as i32 - 127) as f32;
    let t = remain - 1.0;
    let mut var = 0f32;
    for c in LOG2_POLY {
        var = var * t + c as f32;
    }
    log_base + var
}

/// The per-scale VIF statistic (`vif_statistic_s`, libvmaf's 'matching_matlab' mode): returns
/// (num, den), each summed per row in `float` and the rows in `float`.
#[allow(clippy::too_many_arguments)]
pub fn statistic(
    mu1: &[f32],
    mu2: &[f32],
    xx: &[f32],
    yy: &[f32],
    xy: &[f32],
    g: Geom,
    gain_limit: f64,
    sigma_nsq: f64,
) -> (f32, f32) {
    let sigma_max_inv = sigma_max_inv(sigma_nsq);
    let eps = EPS;
    let gain_limit = gain_limit as f32;
    let (mut acc_num, mut acc_den) = (0f32, 0f32);
    for i in 0..g.h {
        let (mut row_num, mut row_den) = (0f32, 0f32);
        let o = i * g.stride;
        for j in o..o + g.w {
            let (m1, m2) = (mu1[j], mu2[j]);
            let mut sigma1_sq = xx[j] - m1 * m1;
            let mut sigma2_sq = yy[j] - m2 * m2;
            let sigma12 = xy[j] - m1 * m2;
            sigma1_sq = if sigma1_sq > 0.0 { sigma1_sq } else { 0.0 };
            sigma2_sq = if sigma2_sq > 0.0 { sigma2_sq } else { 0.0 };
            let mut gain = sigma12 / (sigma1_sq + eps);
            let mut sv_sq = sigma2_sq - gain * sigma12;
            if sigma1_sq < eps {
                gain = 0.0;
                sv_sq = sigma2_sq;
                sigma1_sq = 0.0;
            }
            if sigma2_sq < eps {
                gain = 0.0;
                sv_sq = 0.0;
            }
            if gain < 0.0 {
                sv_sq = sigma2_sq;
                gain = 0.0;
            }
            sv_sq = if sv_sq > eps { sv_sq } else { eps };
            gain = if gain < gain_limit { gain } else { gain_limit };
            // The divisions mix float and the double sigma_nsq: computed in double, then the
            // log2 argument is rounded to float.
            let mut num = log2f_approx(
                (1.0 + (gain * gain * sigma1_sq) as f64 / (sv_sq as f64 + sigma_nsq)) as f32,
            );
            let mut den = log2f_approx((1.0 + sigma1_sq as f64 / sigma_nsq) as f32);
            if sigma12 < 0.0 {
                num = 0.0;
            }
            if (sigma1_sq as f64) < sigma_nsq {
                num = 1.0 - sigma2_sq * sigma_max_inv;
                den = 1.0;
            }
            row_num += num;
            row_den += den;
        }
        acc_num += row_num;
        acc_den += row_den;
    }
    (acc_num, acc_den)
}
