//! AVX2 peer of [`scalar::blurred_diff_sad`], equal to it bit for bit: 8 columns per step in
//! 32-bit lanes, edges and leftover columns by the scalar row kernels.
//!
//! Exactness of the 32-bit lanes: the vertical sum `Σ f·(prev − cur)` is below `65536 · 32767 +
//! 2^14 < 2^31` in magnitude for `bpc <= 15` (16-bit input takes the scalar kernel); the
//! horizontal sum `Σ f·y` can reach `65536 · 65535`, so it is split as `y = 256·yh + yl`
//! (`0 <= yl < 256`) into `A = Σ f·yh` and `B = Σ f·yl`, both below 2^25, and
//! `(256·A + B + 2^15) >> 16 == (A + ((B + 2^15) >> 8)) >> 8` (floor division twice).
//!
//! Every tap product is a `vpmaddwd` of a lane whose value fits an `i16` (a difference of two
//! samples of at most 15 bits; `yh` and `yl`, as `|y| < 2^16`) by the tap paired with 0 (every
//! tap is below 2^15): the exact 32-bit product in one µop instead of `vpmulld`'s two.
//!
//! The kernel is a `#[target_feature(enable = "avx2")]` function reached only through
//! [`kernel`], which checks that the CPU has AVX2.

use core::arch::x86_64::*;

use super::scalar::{self, FILTER};
use super::SadKernel;
use crate::picture::{Plane, Samples};

/// The AVX2 kernel, if this CPU has AVX2.
pub(super) fn kernel() -> Option<SadKernel> {
    is_x86_feature_detected!("avx2").then_some(blurred_diff_sad as SadKernel)
}

fn blurred_diff_sad(prev: &Plane<'_>, cur: &Plane<'_>, y_row: &mut [i32], bpc: u8) -> u64 {
    // SAFETY: only reachable through `kernel`, which checked that the CPU has AVX2.
    unsafe { run_planes(prev, cur, y_row, bpc, sad_u8, sad_u16) }
}

/// A SIMD plane kernel of one sample size: `(prev, prev_stride, cur, cur_stride, w, h, y_row,
/// bpc) -> sad`, a `#[target_feature]` function (hence `unsafe` to call through the pointer).
pub(super) type PlaneSad<T> =
    unsafe fn(&[T], usize, &[T], usize, usize, usize, &mut [i32], u8) -> u64;

/// [`scalar::blurred_diff_sad`] through a SIMD level's plane kernels: 16-bit input (whose
/// vertical sums need more than 32 bits) goes to the scalar kernel, the rest by sample size.
///
/// # Safety
/// The CPU must have every feature `k8` and `k16` enable.
pub(super) unsafe fn run_planes(
    prev: &Plane<'_>,
    cur: &Plane<'_>,
    y_row: &mut [i32],
    bpc: u8,
    k8: PlaneSad<u8>,
    k16: PlaneSad<u16>,
) -> u64 {
    if bpc > 15 {
        return scalar::blurred_diff_sad(prev, cur, y_row, bpc);
    }
    let (w, h) = (cur.width, cur.height);
    let y_row = &mut y_row[..w];
    match (prev.samples, cur.samples) {
        // SAFETY: the caller guarantees the kernels' CPU features.
        (Samples::U8(p), Samples::U8(c)) => unsafe {
            k8(p, prev.stride, c, cur.stride, w, h, y_row, bpc)
        },
        // SAFETY: as above.
        (Samples::U16(p), Samples::U16(c)) => unsafe {
            k16(p, prev.stride, c, cur.stride, w, h, y_row, bpc)
        },
        _ => unreachable!("planes of one stream share a sample size"),
    }
}

/// 8 `u8` widened to `i32` lanes.
///
/// # Safety
/// `p` must be valid for reading 8 `u8`.
#[inline]
#[target_feature(enable = "avx2")]
unsafe fn load8(p: *const u8) -> __m256i {
    // SAFETY: the caller guarantees 8 readable bytes; the load is unaligned.
    _mm256_cvtepu8_epi32(unsafe { _mm_loadl_epi64(p.cast()) })
}

/// 8 `u16` widened to `i32` lanes.
///
/// # Safety
/// `p` must be valid for reading 8 `u16`.
#[inline]
#[target_feature(enable = "avx2")]
unsafe fn load16(p: *const u16) -> __m256i {
    // SAFETY: the caller guarantees 16 readable bytes; the load is unaligned.
    _mm256_cvtepu16_epi32(unsafe { _mm_loadu_si128(p.cast()) })
}

macro_rules! sad_avx2 {
    ($name:ident, $t:ty, $load:ident) => {
        #[allow(clippy::too_many_arguments)]
        #[target_feature(enable = "avx2")]
        fn $name(
            prev: &[$t],
            prev_stride: usize,
            cur: &[$t],
            cur_stride: usize,
            w: usize,
            h: usize,
            y_row: &mut [i32],
            bpc: u8,
        ) -> u64 {
            let w8 = w / 8 * 8;
            let y_round = _mm256_set1_epi32(1 << (bpc - 1));
            let y_shift = _mm_cvtsi32_si128(bpc as i32);
            let f = FILTER.map(|f| _mm256_set1_epi32(f as i32));
            let mut sad = 0u64;
            for i in 0..h {
                let rows = scalar::row_taps(i, h);
                let p = rows.map(|r| &prev[r * prev_stride..r * prev_stride + w]);
                let c = rows.map(|r| &cur[r * cur_stride..r * cur_stride + w]);
                let mut nz = _mm256_setzero_si256();
                for j in (0..w8).step_by(8) {
                    let mut acc = _mm256_setzero_si256();
                    for k in 0..5 {
                        let (pk, ck) = (p[k].as_ptr(), c[k].as_ptr());
                        // SAFETY: j + 8 <= w8 <= w, the length of every row slice.
                        let (a, b) = unsafe { ($load(pk.add(j)), $load(ck.add(j))) };
                        let d = _mm256_sub_epi32(a, b);
                        acc = _mm256_add_epi32(acc, _mm256_madd_epi16(d, f[k]));
                    }
                    let y = _mm256_sra_epi32(_mm256_add_epi32(acc, y_round), y_shift);
                    nz = _mm256_or_si256(nz, y);
                    // SAFETY: j + 8 <= w = y_row.len(); the store is unaligned.
                    unsafe { _mm256_storeu_si256(y_row[j..j + 8].as_mut_ptr().cast(), y) };
                }
                let tail = scalar::vertical_row(p, c, w8..w, y_row, bpc);
                if _mm256_testz_si256(nz, nz) == 1 && tail == 0 {
                    continue;
                }
                sad += horizontal_row_sad(y_row) as u64;
            }
            sad
        }
    };
}

sad_avx2!(sad_u8, u8, load8);
sad_avx2!(sad_u16, u16, load16);

/// `Σ_j |horizontal blur of y_row at j|`, wrapping in 32 bits.
#[target_feature(enable = "avx2")]
fn horizontal_row_sad(y_row: &[i32]) -> u32 {
    let w = y_row.len();
    let f = FILTER.map(|f| _mm256_set1_epi32(f as i32));
    let low8 = _mm256_set1_epi32(0xff);
    let round = _mm256_set1_epi32(1 << 15);
    let mut sum = _mm256_setzero_si256();
    // Vector columns j in 2..end read y_row[j - 2 .. j + 10], no mirroring needed.
    let n = w.saturating_sub(4) / 8 * 8;
    let end = 2 + n;
    let base = y_row.as_ptr();
    for j in (2..end).step_by(8) {
        let (mut a, mut b) = (_mm256_setzero_si256(), _mm256_setzero_si256());
        for (k, f) in f.iter().enumerate() {
            // SAFETY: j - 2 + k + 8 <= end + 2 <= w = y_row.len(); the load is unaligned.
            let y = unsafe { _mm256_loadu_si256(base.add(j - 2 + k).cast()) };
            a = _mm256_add_epi32(a, _mm256_madd_epi16(_mm256_srai_epi32::<8>(y), *f));
            b = _mm256_add_epi32(b, _mm256_madd_epi16(_mm256_and_si256(y, low8), *f));
        }
        let b = _mm256_srai_epi32::<8>(_mm256_add_epi32(b, round));
        let v = _mm256_srai_epi32::<8>(_mm256_add_epi32(a, b));
        sum = _mm256_add_epi32(sum, _mm256_abs_epi32(v));
    }
    let mut lanes = [0u32; 8];
    // SAFETY: `lanes` holds 8 `u32` (32 bytes); the store is unaligned.
    unsafe { _mm256_storeu_si256(lanes.as_mut_ptr().cast(), sum) };
    let mut row_sad = lanes.iter().fold(0u32, |s, &x| s.wrapping_add(x));
    for j in (0..2.min(w)).chain(end.max(2.min(w))..w) {
        row_sad = row_sad.wrapping_add(scalar::horizontal_abs(y_row, j));
    }
    row_sad
}
