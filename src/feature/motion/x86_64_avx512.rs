//! AVX-512 peer of [`scalar::blurred_diff_sad`], equal to it bit for bit: the AVX2 peer's
//! arithmetic (see `x86_64_avx2.rs` for why 32-bit lanes are exact) 16 columns per step, with
//! every tap product a `vpmaddwd` of a lane value that fits an `i16` (the difference of two
//! samples of at most 15 bits, and `y >> 8`, `y & 0xff` of the vertical results) by the tap, the
//! lane's high half multiplied by 0: one cheap multiply instead of a two-µop `vpmulld`.
//! Edges and leftover columns go through the scalar row kernels.
//!
//! The kernels are `#[target_feature(enable = "avx512f,avx512bw")]` functions reached only through
//! [`kernel`], which checks that the CPU has AVX-512 F and BW.

use core::arch::x86_64::*;

use super::scalar::{self, FILTER};
use super::x86_64_avx2::run_planes;
use super::SadKernel;
use crate::picture::Plane;

/// The AVX-512 kernel, if this CPU has AVX-512 F and BW.
pub(super) fn kernel() -> Option<SadKernel> {
    (is_x86_feature_detected!("avx512f") && is_x86_feature_detected!("avx512bw"))
        .then_some(blurred_diff_sad as SadKernel)
}

fn blurred_diff_sad(prev: &Plane<'_>, cur: &Plane<'_>, y_row: &mut [i32], bpc: u8) -> u64 {
    // SAFETY: only reachable through `kernel`, which checked that the CPU has AVX-512 F and BW.
    unsafe { run_planes(prev, cur, y_row, bpc, sad_u8, sad_u16) }
}

/// 16 `u8` widened to `i32` lanes.
///
/// # Safety
/// `p` must be valid for reading 16 `u8`.
#[inline]
#[target_feature(enable = "avx512f,avx512bw")]
unsafe fn load8(p: *const u8) -> __m512i {
    // SAFETY: the caller guarantees 16 readable bytes; the load is unaligned.
    _mm512_cvtepu8_epi32(unsafe { _mm_loadu_si128(p.cast()) })
}

/// 16 `u16` widened to `i32` lanes.
///
/// # Safety
/// `p` must be valid for reading 16 `u16`.
#[inline]
#[target_feature(enable = "avx512f,avx512bw")]
unsafe fn load16(p: *const u16) -> __m512i {
    // SAFETY: the caller guarantees 32 readable bytes; the load is unaligned.
    _mm512_cvtepu16_epi32(unsafe { _mm256_loadu_si256(p.cast()) })
}

/// The taps as `(tap, 0)` `i16` pairs: `vpmaddwd` of a lane holding an `i16`-range `i32` by one
/// of them is the exact 32-bit product.
#[inline]
#[target_feature(enable = "avx512f,avx512bw")]
fn taps() -> [__m512i; 5] {
    // Every tap is below 2^15, so it is its own `i16`.
    const { assert!(FILTER[2] < 1 << 15) };
    FILTER.map(|f| _mm512_set1_epi32(f as i32))
}

macro_rules! sad_avx512 {
    ($name:ident, $t:ty, $load:ident) => {
        #[allow(clippy::too_many_arguments)]
        #[target_feature(enable = "avx512f,avx512bw")]
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
            let w16 = w / 16 * 16;
            let y_round = _mm512_set1_epi32(1 << (bpc - 1));
            let y_shift = _mm_cvtsi32_si128(bpc as i32);
            let f = taps();
            let mut sad = 0u64;
            for i in 0..h {
                let rows = scalar::row_taps(i, h);
                let p = rows.map(|r| &prev[r * prev_stride..r * prev_stride + w]);
                let c = rows.map(|r| &cur[r * cur_stride..r * cur_stride + w]);
                let mut nz = _mm512_setzero_si512();
                for j in (0..w16).step_by(16) {
                    let mut acc = _mm512_setzero_si512();
                    for k in 0..5 {
                        let (pk, ck) = (p[k].as_ptr(), c[k].as_ptr());
                        // SAFETY: j + 16 <= w16 <= w, the length of every row slice.
                        let (a, b) = unsafe { ($load(pk.add(j)), $load(ck.add(j))) };
                        // |a - b| < 2^15 (bpc <= 15): an i16 in each lane.
                        let d = _mm512_sub_epi32(a, b);
                        acc = _mm512_add_epi32(acc, _mm512_madd_epi16(d, f[k]));
                    }
                    let y = _mm512_sra_epi32(_mm512_add_epi32(acc, y_round), y_shift);
                    nz = _mm512_or_si512(nz, y);
                    // SAFETY: j + 16 <= w = y_row.len(); the store is unaligned.
                    unsafe { _mm512_storeu_si512(y_row[j..j + 16].as_mut_ptr().cast(), y) };
                }
                let tail = scalar::vertical_row(p, c, w16..w, y_row, bpc);
                if _mm512_test_epi32_mask(nz, nz) == 0 && tail == 0 {
                    continue;
                }
                sad += horizontal_row_sad(y_row) as u64;
            }
            sad
        }
    };
}

sad_avx512!(sad_u8, u8, load8);
sad_avx512!(sad_u16, u16, load16);

/// `Σ_j |horizontal blur of y_row at j|`, wrapping in 32 bits.
#[target_feature(enable = "avx512f,avx512bw")]
fn horizontal_row_sad(y_row: &[i32]) -> u32 {
    let w = y_row.len();
    let f = taps();
    let low8 = _mm512_set1_epi32(0xff);
    let round = _mm512_set1_epi32(1 << 15);
    let mut sum = _mm512_setzero_si512();
    // Vector columns j in 2..end read y_row[j - 2 .. j + 18], no mirroring needed.
    let n = w.saturating_sub(4) / 16 * 16;
    let end = 2 + n;
    let base = y_row.as_ptr();
    for j in (2..end).step_by(16) {
        let (mut a, mut b) = (_mm512_setzero_si512(), _mm512_setzero_si512());
        for (k, f) in f.iter().enumerate() {
            // SAFETY: j - 2 + k + 16 <= end + 2 <= w = y_row.len(); the load is unaligned.
            let y = unsafe { _mm512_loadu_si512(base.add(j - 2 + k).cast()) };
            // |y| < 2^16 (see the AVX2 peer), so y >> 8 and y & 0xff are i16 values.
            a = _mm512_add_epi32(a, _mm512_madd_epi16(_mm512_srai_epi32::<8>(y), *f));
            b = _mm512_add_epi32(b, _mm512_madd_epi16(_mm512_and_si512(y, low8), *f));
        }
        let b = _mm512_srai_epi32::<8>(_mm512_add_epi32(b, round));
        let v = _mm512_srai_epi32::<8>(_mm512_add_epi32(a, b));
        sum = _mm512_add_epi32(sum, _mm512_abs_epi32(v));
    }
    let mut row_sad = _mm512_reduce_add_epi32(sum) as u32;
    for j in (0..2.min(w)).chain(end.max(2.min(w))..w) {
        row_sad = row_sad.wrapping_add(scalar::horizontal_abs(y_row, j));
    }
    row_sad
}
