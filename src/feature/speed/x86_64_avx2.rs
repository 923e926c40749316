//! AVX2 + FMA peers of the vector families' covariance models ([`super::cov`]), equal to them bit
//! for bit: the same lanes, the same fused multiply-adds, the same final sums. libvmaf's AVX-512
//! kernel's 8-lane accumulators are two 4-lane registers here; each lane's sequence of
//! operations is unchanged, so the lanes' values are too.
//!
//! The kernels are `#[target_feature(enable = "avx2,fma")]` functions reached only through
//! [`sum`], which checks that the CPU has AVX2 and FMA; that check is what every `unsafe` call of
//! them relies on.

use core::arch::x86_64::*;

use super::cov::{reduce_avx2, reduce_avx512, CovSum};
use crate::fidelity::LibvmafIsa;

/// The AVX2 + FMA peer of `family`'s model, if it has one and this CPU runs it.
pub(super) fn sum(family: LibvmafIsa) -> Option<CovSum> {
    if !(is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma")) {
        return None;
    }
    match family {
        LibvmafIsa::C => None,
        LibvmafIsa::Avx2 => Some(sum_avx2),
        LibvmafIsa::Avx512 => Some(sum_avx512),
    }
}

/// Checks the bounds every row access below relies on.
fn check_bounds(x: &[f32], y: &[f32], stride: usize, h: usize, w: usize) {
    if h > 0 {
        let need = (h - 1) * stride + w;
        assert!(
            x.len() >= need && y.len() >= need,
            "covariance rows out of bounds"
        );
    }
}

fn sum_avx2(x: &[f32], y: &[f32], stride: usize, h: usize, w: usize, mx: f64, my: f64) -> f64 {
    check_bounds(x, y, stride, h, w);
    // SAFETY: only reachable through `sum`, which checked that the CPU has AVX2 and FMA; the
    // bounds were checked above.
    unsafe { sum_avx2_impl(x, y, stride, h, w, mx, my) }
}

fn sum_avx512(x: &[f32], y: &[f32], stride: usize, h: usize, w: usize, mx: f64, my: f64) -> f64 {
    check_bounds(x, y, stride, h, w);
    // SAFETY: as in `sum_avx2`.
    unsafe { sum_avx512_impl(x, y, stride, h, w, mx, my) }
}

/// Four samples of `x` and `y` from `j`, widened, minus the means.
///
/// # Safety
/// AVX2; `x[j..j + 4]` and `y[j..j + 4]` in bounds.
#[inline]
#[target_feature(enable = "avx2,fma")]
unsafe fn centred(x: *const f32, y: *const f32, mx: __m256d, my: __m256d) -> (__m256d, __m256d) {
    // SAFETY: the caller guarantees four readable floats at each pointer.
    let (fx, fy) = unsafe { (_mm_loadu_ps(x), _mm_loadu_ps(y)) };
    (
        _mm256_sub_pd(_mm256_cvtps_pd(fx), mx),
        _mm256_sub_pd(_mm256_cvtps_pd(fy), my),
    )
}

/// # Safety
/// AVX2 and FMA; `x` and `y` hold `h` rows of `w` samples `stride` apart.
#[target_feature(enable = "avx2,fma")]
unsafe fn sum_avx2_impl(
    x: &[f32],
    y: &[f32],
    stride: usize,
    h: usize,
    w: usize,
    mx: f64,
    my: f64,
) -> f64 {
    let (vmx, vmy) = (_mm256_set1_pd(mx), _mm256_set1_pd(my));
    let (mut acc0, mut acc1) = (_mm256_setzero_pd(), _mm256_setzero_pd());
    let mut tail = 0f64;
    for i in 0..h {
        let o = i * stride;
        let (px, py) = (x[o..o + w].as_ptr(), y[o..o + w].as_ptr());
        let mut j = 0;
        while j + 8 <= w {
            // SAFETY: j + 8 <= w, within the row checked by the slices above.
            unsafe {
                let (cx0, cy0) = centred(px.add(j), py.add(j), vmx, vmy);
                let (cx1, cy1) = centred(px.add(j + 4), py.add(j + 4), vmx, vmy);
                acc0 = _mm256_fmadd_pd(cx0, cy0, acc0);
                acc1 = _mm256_fmadd_pd(cx1, cy1, acc1);
            }
            j += 8;
        }
        while j + 4 <= w {
            // SAFETY: j + 4 <= w.
            unsafe {
                let (cx, cy) = centred(px.add(j), py.add(j), vmx, vmy);
                acc0 = _mm256_fmadd_pd(cx, cy, acc0);
            }
            j += 4;
        }
        for k in j..w {
            tail += (x[o + k] as f64 - mx) * (y[o + k] as f64 - my);
        }
    }
    let mut acc = [0f64; 8];
    // SAFETY: `acc` holds eight doubles.
    unsafe {
        _mm256_storeu_pd(acc.as_mut_ptr(), acc0);
        _mm256_storeu_pd(acc.as_mut_ptr().add(4), acc1);
    }
    reduce_avx2(&acc, tail)
}

/// # Safety
/// AVX2 and FMA; `x` and `y` hold `h` rows of `w` samples `stride` apart.
#[target_feature(enable = "avx2,fma")]
unsafe fn sum_avx512_impl(
    x: &[f32],
    y: &[f32],
    stride: usize,
    h: usize,
    w: usize,
    mx: f64,
    my: f64,
) -> f64 {
    let (vmx, vmy) = (_mm256_set1_pd(mx), _mm256_set1_pd(my));
    // libvmaf's acc0 (lanes 0..8) is a[0], a[1]; its acc1 (lanes 8..16) is a[2], a[3].
    let mut a = [_mm256_setzero_pd(); 4];
    let mut tail = 0f64;
    for i in 0..h {
        let o = i * stride;
        let (px, py) = (x[o..o + w].as_ptr(), y[o..o + w].as_ptr());
        let mut j = 0;
        while j + 16 <= w {
            for (q, acc) in a.iter_mut().enumerate() {
                // SAFETY: j + 4 q + 4 <= j + 16 <= w.
                unsafe {
                    let (cx, cy) = centred(px.add(j + 4 * q), py.add(j + 4 * q), vmx, vmy);
                    *acc = _mm256_fmadd_pd(cx, cy, *acc);
                }
            }
            j += 16;
        }
        while j + 8 <= w {
            for (q, acc) in a[..2].iter_mut().enumerate() {
                // SAFETY: j + 4 q + 4 <= j + 8 <= w.
                unsafe {
                    let (cx, cy) = centred(px.add(j + 4 * q), py.add(j + 4 * q), vmx, vmy);
                    *acc = _mm256_fmadd_pd(cx, cy, *acc);
                }
            }
            j += 8;
        }
        for k in j..w {
            tail += (x[o + k] as f64 - mx) * (y[o + k] as f64 - my);
        }
    }
    let mut acc = [0f64; 16];
    for (q, v) in a.iter().enumerate() {
        // SAFETY: `acc` holds sixteen doubles; 4 q + 4 <= 16.
        unsafe { _mm256_storeu_pd(acc.as_mut_ptr().add(4 * q), *v) };
    }
    reduce_avx512(&acc, tail)
}
