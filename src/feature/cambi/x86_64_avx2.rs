//! AVX2 peer of the scalar c-value row ([`cvalues::c_values_row`]), equal to it bit for bit:
//! 8 pixels a step, the histogram counts and reciprocals gathered, the same integer product
//! converted to `float` and multiplied once (`cvtdq2ps`, `mulps`: the scalar `as f32` and `*`),
//! the largest value kept with `maxps` (the scalar `if val > c`, as no value is NaN). The
//! columns left over go through the scalar code.
//!
//! The kernel is a `#[target_feature(enable = "avx2")]` function reached only through
//! [`install`], which checks that the CPU has AVX2; that check is what its `unsafe` call relies
//! on. Every gather index is clamped into its table, so no read leaves the slices whatever the
//! counts are.

use core::arch::x86_64::*;

use super::cvalues::{self, Kernels, Params, HIST_PAD};
use super::setup::{CONTRAST_WEIGHTS, LUT_SIZE};

/// Installs the AVX2 row kernel into `k`, if this CPU has AVX2.
pub(super) fn install(k: &mut Kernels) {
    if is_x86_feature_detected!("avx2") {
        k.c_values_row = c_values_row;
    }
}

fn c_values_row(out: &mut [f32], hist: &[u16], row: &[u16], mask: &[u16], p: &Params<'_>) {
    // SAFETY: only reachable through `install`, which checked that the CPU has AVX2.
    unsafe { c_values_row_avx2(out, hist, row, mask, p) }
}

/// Gathers the 16-bit counts `hist[idx]` of the lanes in `lanes` (0 elsewhere), each index
/// clamped to `[0, max]`.
///
/// # Safety
/// AVX2 must be available; `max + 1` must be a valid index of `hist` (each lane reads 32 bits).
#[inline]
#[target_feature(enable = "avx2")]
unsafe fn gather_counts(hist: &[u16], idx: __m256i, lanes: __m256i, max: __m256i) -> __m256i {
    let idx = _mm256_min_epi32(_mm256_max_epi32(idx, _mm256_setzero_si256()), max);
    // SAFETY: every index is within [0, max], and reading the 32 bits at `2 * max` bytes stays
    // inside `hist` (the caller's contract); the slice outlives the call.
    let v = unsafe {
        _mm256_mask_i32gather_epi32::<2>(
            _mm256_setzero_si256(),
            hist.as_ptr() as *const i32,
            idx,
            lanes,
        )
    };
    _mm256_and_si256(v, _mm256_set1_epi32(0xFFFF))
}

/// # Safety
/// AVX2 must be available.
#[target_feature(enable = "avx2")]
unsafe fn c_values_row_avx2(
    out: &mut [f32],
    hist: &[u16],
    row: &[u16],
    mask: &[u16],
    p: &Params<'_>,
) {
    let w = out.len();
    let (row, mask) = (&row[..w], &mask[..w]);
    let band = p.band;
    let size = band.size as usize;
    assert!(size > 0 && hist.len() >= size * w + HIST_PAD && p.active.len() >= size);
    assert!(size * w + HIST_PAD <= i32::MAX as usize && p.lut.len() == LUT_SIZE);
    let zero = _mm256_setzero_si256();
    let base = _mm256_set1_epi32(band.base as i32);
    let size_v = _mm256_set1_epi32(size as i32);
    let width = _mm256_set1_epi32(w as i32);
    let lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    let hist_max = _mm256_set1_epi32((hist.len() - HIST_PAD) as i32 - 1);
    let lut_max = _mm256_set1_epi32(LUT_SIZE as i32 - 1);
    let row_max = _mm256_set1_epi32(size as i32 - 1);
    let mut x = 0;
    while x + 8 <= w {
        // SAFETY: x + 8 <= w, the length of `row` and `mask`: 16-byte loads inside them.
        let (m, v) = unsafe {
            (
                _mm_loadu_si128(mask.as_ptr().add(x) as *const __m128i),
                _mm_loadu_si128(row.as_ptr().add(x) as *const __m128i),
            )
        };
        let masked = _mm256_cmpgt_epi32(_mm256_cvtepu16_epi32(m), zero);
        let r = _mm256_sub_epi32(_mm256_cvtepu16_epi32(v), base);
        let in_band = _mm256_and_si256(
            _mm256_cmpgt_epi32(size_v, r),
            _mm256_cmpgt_epi32(r, _mm256_set1_epi32(-1)),
        );
        let ok = _mm256_and_si256(masked, in_band);
        if _mm256_testz_si256(ok, ok) != 0 {
            // SAFETY: x + 8 <= w = out.len().
            unsafe { _mm256_storeu_ps(out.as_mut_ptr().add(x), _mm256_setzero_ps()) };
            x += 8;
            continue;
        }
        let r = _mm256_min_epi32(_mm256_and_si256(r, ok), row_max);
        // SAFETY: every index is in [0, size - 1] and `active` holds `size` entries.
        let steps = unsafe {
            _mm256_mask_i32gather_epi32::<4>(zero, p.active.as_ptr() as *const i32, r, ok)
        };
        let mut all = [0u32; 8];
        // SAFETY: `all` holds 8 u32.
        unsafe { _mm256_storeu_si256(all.as_mut_ptr() as *mut __m256i, steps) };
        let mut union = all.iter().fold(0, |a, &s| a | s);
        let at = _mm256_add_epi32(
            _mm256_mullo_epi32(r, width),
            _mm256_add_epi32(_mm256_set1_epi32(x as i32), lanes),
        );
        // SAFETY: AVX2 is on; hist holds HIST_PAD samples past hist_max.
        let p0 = unsafe { gather_counts(hist, at, ok, hist_max) };
        let mut c = _mm256_setzero_ps();
        while union != 0 {
            let d = union.trailing_zeros() as usize;
            union &= union - 1;
            let bit = _mm256_set1_epi32(1 << d);
            let on = _mm256_cmpeq_epi32(_mm256_and_si256(steps, bit), bit);
            let off = _mm256_set1_epi32(((d + 1) * w) as i32);
            let below = _mm256_and_si256(on, _mm256_cmpgt_epi32(r, _mm256_set1_epi32(d as i32)));
            // SAFETY: as for p0.
            let (p1, p2) = unsafe {
                (
                    gather_counts(hist, _mm256_add_epi32(at, off), on, hist_max),
                    gather_counts(hist, _mm256_sub_epi32(at, off), below, hist_max),
                )
            };
            let pm = _mm256_max_epi32(p1, p2);
            let num = _mm256_mullo_epi32(
                _mm256_mullo_epi32(_mm256_set1_epi32(CONTRAST_WEIGHTS[d]), p0),
                pm,
            );
            let li = _mm256_min_epi32(_mm256_add_epi32(pm, p0), lut_max);
            // SAFETY: every index is in [0, LUT_SIZE - 1], the length of `lut`.
            let rcp = unsafe {
                _mm256_mask_i32gather_ps::<4>(
                    _mm256_setzero_ps(),
                    p.lut.as_ptr(),
                    li,
                    _mm256_castsi256_ps(on),
                )
            };
            let val = _mm256_mul_ps(_mm256_cvtepi32_ps(num), rcp);
            let val = _mm256_and_ps(val, _mm256_castsi256_ps(on));
            c = _mm256_max_ps(c, val);
        }
        // SAFETY: x + 8 <= w = out.len().
        unsafe { _mm256_storeu_ps(out.as_mut_ptr().add(x), c) };
        x += 8;
    }
    for x in x..w {
        out[x] = if mask[x] != 0 {
            cvalues::c_value(hist, w, x, row[x], p)
        } else {
            0.0
        };
    }
}
