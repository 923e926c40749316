//! The covariance sums of SpEED's 25×25 matrix, as each libvmaf kernel family computes them
//! (`speed.c` `compute_cov_kernel_scalar`, `x86/speed_avx2.c`, `x86/speed_avx512.c`): the sum
//! over a submatrix of `(x - mean_x)(y - mean_y)`, in `double`.
//!
//! The families add in different orders, so their sums differ in the last bits, and through the
//! `float` covariance matrix and its eigenvalues libvmaf's scores differ from host to host
//! (docs/FIDELITY.md). Each family has a portable model here, the specification for that family:
//!
//! - `c`: one accumulator, row by row, multiply then add.
//! - `avx2`: per row, 8 columns a step into two 4-lane accumulators (columns `j..j+4` into the
//!   first, `j+4..j+8` into the second), then 4 columns a step into the first, each lane a fused
//!   multiply-add; the row's leftover columns into a separate scalar sum (multiply then add).
//!   The accumulators run on across rows; at the end the two are added lane by lane, the four
//!   lanes left to right, and the scalar sum last.
//! - `avx512`: likewise with two 8-lane accumulators (16 columns a step, then 8 into the first)
//!   and the compiler's `_mm512_reduce_add_pd` tree: lanes `l + 4` onto `l`, then `2, 3` onto
//!   `0, 1`, then lane 1 onto lane 0.
//!
//! The `f64::mul_add` of the models is a correctly rounded fused multiply-add, as the hardware's.
//! [`CovKernel`] runs a faster peer of the chosen family's model where the CPU allows
//! (`x86_64_avx2`: AVX2 + FMA for both vector families), equal to the model bit for bit.

use crate::cpu::CpuLevel;
use crate::fidelity::LibvmafIsa;

/// One covariance sum: `x` and `y` start at the submatrices' first samples, rows `stride`
/// apart, `h` rows of `w` samples; the means are the `float` means widened.
pub type CovSum =
    fn(x: &[f32], y: &[f32], stride: usize, h: usize, w: usize, mx: f64, my: f64) -> f64;

/// libvmaf's C kernel (`compute_cov_kernel_scalar`).
pub fn sum_c(x: &[f32], y: &[f32], stride: usize, h: usize, w: usize, mx: f64, my: f64) -> f64 {
    let mut acc = 0f64;
    for i in 0..h {
        let (rx, ry) = (
            &x[i * stride..i * stride + w],
            &y[i * stride..i * stride + w],
        );
        for (&a, &b) in rx.iter().zip(ry) {
            acc += (a as f64 - mx) * (b as f64 - my);
        }
    }
    acc
}

/// One row's part of a vector kernel: `lanes`-wide steps into `acc[..2 * lanes]` (two
/// accumulators side by side), then `lanes`-wide steps into the first, fused; the rest into
/// `tail`, unfused.
#[inline]
fn row_model(
    rx: &[f32],
    ry: &[f32],
    mx: f64,
    my: f64,
    lanes: usize,
    acc: &mut [f64],
    tail: &mut f64,
) {
    let w = rx.len();
    let mut j = 0;
    while j + 2 * lanes <= w {
        for (l, a) in acc[..2 * lanes].iter_mut().enumerate() {
            *a = (rx[j + l] as f64 - mx).mul_add(ry[j + l] as f64 - my, *a);
        }
        j += 2 * lanes;
    }
    while j + lanes <= w {
        for (l, a) in acc[..lanes].iter_mut().enumerate() {
            *a = (rx[j + l] as f64 - mx).mul_add(ry[j + l] as f64 - my, *a);
        }
        j += lanes;
    }
    for (&a, &b) in rx[j..].iter().zip(&ry[j..]) {
        *tail += (a as f64 - mx) * (b as f64 - my);
    }
}

/// The model of libvmaf's AVX2 kernel (`compute_cov_kernel_avx2`).
pub fn sum_avx2(x: &[f32], y: &[f32], stride: usize, h: usize, w: usize, mx: f64, my: f64) -> f64 {
    let mut acc = [0f64; 8];
    let mut tail = 0f64;
    for i in 0..h {
        let o = i * stride;
        row_model(&x[o..o + w], &y[o..o + w], mx, my, 4, &mut acc, &mut tail);
    }
    reduce_avx2(&acc, tail)
}

/// The AVX2 kernel's final sum: the accumulators lane by lane, the lanes left to right, then
/// the scalar part.
#[inline]
pub fn reduce_avx2(acc: &[f64; 8], tail: f64) -> f64 {
    let t: [f64; 4] = std::array::from_fn(|l| acc[l] + acc[l + 4]);
    t[0] + t[1] + t[2] + t[3] + tail
}

/// The model of libvmaf's AVX-512 kernel (`compute_cov_kernel_avx512`).
pub fn sum_avx512(
    x: &[f32],
    y: &[f32],
    stride: usize,
    h: usize,
    w: usize,
    mx: f64,
    my: f64,
) -> f64 {
    let mut acc = [0f64; 16];
    let mut tail = 0f64;
    for i in 0..h {
        let o = i * stride;
        row_model(&x[o..o + w], &y[o..o + w], mx, my, 8, &mut acc, &mut tail);
    }
    reduce_avx512(&acc, tail)
}

/// The AVX-512 kernel's final sum: the accumulators lane by lane, GCC's
/// `_mm512_reduce_add_pd` tree over the eight lanes, then the scalar part.
#[inline]
pub fn reduce_avx512(acc: &[f64; 16], tail: f64) -> f64 {
    let a: [f64; 8] = std::array::from_fn(|l| acc[l] + acc[l + 8]);
    let t: [f64; 4] = std::array::from_fn(|l| a[l + 4] + a[l]);
    let u = [t[2] + t[0], t[3] + t[1]];
    (u[0] + u[1]) + tail
}

/// The model of a family (the specification its faster peers must equal).
pub fn model(family: LibvmafIsa) -> CovSum {
    match family {
        LibvmafIsa::C => sum_c,
        LibvmafIsa::Avx2 => sum_avx2,
        LibvmafIsa::Avx512 => sum_avx512,
    }
}

/// The covariance sum of one libvmaf family, computed by the fastest implementation of it at or
/// below a CPU level. With the `check_simd` feature every call of a faster peer is recomputed
/// with the family's model and asserted equal.
#[derive(Clone, Copy)]
pub struct CovKernel {
    family: LibvmafIsa,
    level: CpuLevel,
    sum: CovSum,
}

impl std::fmt::Debug for CovKernel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CovKernel")
            .field("family", &self.family)
            .field("level", &self.level)
            .finish()
    }
}

impl CovKernel {
    /// `family`'s sum at the best implementation this machine runs at or below `level`.
    pub fn new(family: LibvmafIsa, level: CpuLevel) -> Self {
        #[allow(unused_mut)]
        let mut sum = model(family);
        #[cfg(target_arch = "x86_64")]
        if level >= CpuLevel::Avx2 {
            if let Some(fast) = super::x86_64_avx2::sum(family) {
                sum = fast;
            }
        }
        CovKernel { family, level, sum }
    }

    /// The libvmaf family this kernel reproduces.
    pub fn family(&self) -> LibvmafIsa {
        self.family
    }

    /// See [`CovSum`].
    #[allow(clippy::too_many_arguments)]
    pub fn sum(
        &self,
        x: &[f32],
        y: &[f32],
        stride: usize,
        h: usize,
        w: usize,
        mx: f64,
        my: f64,
    ) -> f64 {
        let s = (self.sum)(x, y, stride, h, w, mx, my);
        #[cfg(feature = "check_simd")]
        if self.level > CpuLevel::Scalar {
            let want = model(self.family)(x, y, stride, h, w, mx, my);
            assert_eq!(
                s.to_bits(),
                want.to_bits(),
                "check_simd: speed covariance ({:?} family) {w}x{h}: {s} vs {want}",
                self.family
            );
        }
        s
    }
}
