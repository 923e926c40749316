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
use std::ops::Range;

use super::scalar::{self, SadScratch, FILTER, SPLIT_PAD};
use super::x86_64_avx2::{self as avx2, run_planes};
use super::SadKernel;
use crate::picture::Plane;

/// The AVX-512 kernel, if this CPU has AVX-512 F and BW (and AVX2, whose 16-column steps
/// finish the 8-bit rows).
pub(super) fn kernel() -> Option<SadKernel> {
    (is_x86_feature_detected!("avx512f")
        && is_x86_feature_detected!("avx512bw")
        && is_x86_feature_detected!("avx2"))
    .then_some(blurred_diff_sad as SadKernel)
}

fn blurred_diff_sad(prev: &Plane<'_>, cur: &Plane<'_>, s: &mut SadScratch, bpc: u8) -> u64 {
    // SAFETY: only reachable through `kernel`, which checked that the CPU has AVX-512 F and BW
    // and AVX2.
    unsafe { run_planes(prev, cur, s, bpc, sad_u8, sad_u16) }
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
            s: &mut SadScratch,
            bpc: u8,
        ) -> u64 {
            let y_row = &mut s.y_row[..w];
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
    let end = avx2::interior_end(w, 16);
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
    (_mm512_reduce_add_epi32(sum) as u32).wrapping_add(avx2::edges_sad(y_row, end))
}

/// `(lo, hi)` as an `i16` pair in each 32-bit lane (every tap is below 2^15).
#[inline]
#[target_feature(enable = "avx512f,avx512bw")]
fn tap_pair(lo: i64, hi: i64) -> __m512i {
    _mm512_set1_epi32(((hi as i32) << 16) | lo as i32)
}

/// The AVX2 peer's 8-bit kernel (`x86_64_avx2::sad_u8`, whose notes say why it is exact) 32
/// columns a step, a 16-column AVX2 step and the scalar row kernels for what is left.
#[allow(clippy::too_many_arguments)]
#[target_feature(enable = "avx512f,avx512bw,avx2")]
fn sad_u8(
    prev: &[u8],
    prev_stride: usize,
    cur: &[u8],
    cur_stride: usize,
    w: usize,
    h: usize,
    s: &mut SadScratch,
    bpc: u8,
) -> u64 {
    debug_assert_eq!(bpc, 8);
    let (w32, w16) = (w / 32 * 32, w / 16 * 16);
    let (yh, yl) = s.split.split_at_mut(w + SPLIT_PAD);
    let y_row = &mut s.y_row[..w];
    let (end32, end16) = (avx2::interior_end(w, 32), avx2::interior_end(w, 16));
    let mut sad = 0u64;
    for i in 0..h {
        let rows = scalar::row_taps(i, h);
        let p = rows.map(|r| &prev[r * prev_stride..r * prev_stride + w]);
        let c = rows.map(|r| &cur[r * cur_stride..r * cur_stride + w]);
        let nz = vertical_split(p, c, 0..w32, y_row, yh, yl)
            | avx2::vertical_split(p, c, w32..w16, y_row, yh, yl);
        let tail = scalar::vertical_row(p, c, w16..w, y_row, bpc);
        if !nz && tail == 0 {
            continue;
        }
        avx2::split_cols(y_row, yh, yl, w16..w);
        let wide = _mm512_reduce_add_epi32(horizontal_split_sum(yh, yl, 2..end32)) as u32;
        let rest = avx2::lane_sum(avx2::horizontal_split_sum(yh, yl, end32..end16));
        sad += wide
            .wrapping_add(rest)
            .wrapping_add(avx2::edges_sad(y_row, end16)) as u64;
    }
    sad
}

/// The AVX2 peer's `vertical_split`, 32 columns a step (`cols.start` and its length multiples
/// of 32).
#[target_feature(enable = "avx512f,avx512bw")]
fn vertical_split(
    p: [&[u8]; 5],
    c: [&[u8]; 5],
    cols: Range<usize>,
    y_row: &mut [i32],
    yh: &mut [i16],
    yl: &mut [i16],
) -> bool {
    assert!(cols.start.is_multiple_of(32) && cols.len().is_multiple_of(32));
    assert!(p.iter().chain(&c).all(|r| r.len() >= cols.end));
    assert!(y_row.len() >= cols.end && yh.len() >= cols.end && yl.len() >= cols.end);
    const { assert!(FILTER[0] == FILTER[4] && FILTER[1] == FILTER[3]) };
    let f01 = tap_pair(FILTER[0], FILTER[1]);
    let f2 = tap_pair(FILTER[2], 0);
    let round = _mm512_set1_epi32(128);
    let low8 = _mm512_set1_epi32(0xff);
    let z = _mm512_setzero_si512();
    // Qwords of (lo, hi) in column order: columns 0-15, then 16-31 (see below).
    let first = _mm512_setr_epi64(0, 1, 8, 9, 2, 3, 10, 11);
    let second = _mm512_setr_epi64(4, 5, 12, 13, 6, 7, 14, 15);
    let mut nz = z;
    for j in cols.step_by(32) {
        // SAFETY: j + 32 <= cols.end <= every row's length (checked above); unaligned loads.
        let d: [__m512i; 5] = std::array::from_fn(|k| unsafe {
            let ld = |r: &[u8]| _mm512_cvtepu8_epi16(_mm256_loadu_si256(r.as_ptr().add(j).cast()));
            _mm512_sub_epi16(ld(p[k]), ld(c[k]))
        });
        let (s04, s13) = (_mm512_add_epi16(d[0], d[4]), _mm512_add_epi16(d[1], d[3]));
        // Per 128-bit lane q, columns 8q .. 8q + 4 in `lo` and 8q + 4 .. 8q + 8 in `hi`.
        let sum = |a: __m512i, b: __m512i| {
            _mm512_add_epi32(_mm512_madd_epi16(a, f01), _mm512_madd_epi16(b, f2))
        };
        let lo = sum(
            _mm512_unpacklo_epi16(s04, s13),
            _mm512_unpacklo_epi16(d[2], z),
        );
        let hi = sum(
            _mm512_unpackhi_epi16(s04, s13),
            _mm512_unpackhi_epi16(d[2], z),
        );
        let y_lo = _mm512_srai_epi32::<8>(_mm512_add_epi32(lo, round));
        let y_hi = _mm512_srai_epi32::<8>(_mm512_add_epi32(hi, round));
        nz = _mm512_or_si512(nz, _mm512_or_si512(y_lo, y_hi));
        let h16 = _mm512_packs_epi32(_mm512_srai_epi32::<8>(y_lo), _mm512_srai_epi32::<8>(y_hi));
        let l16 = _mm512_packs_epi32(_mm512_and_si512(y_lo, low8), _mm512_and_si512(y_hi, low8));
        // SAFETY: j + 32 <= cols.end <= each buffer's length (checked above); unaligned stores.
        unsafe {
            let y = y_row.as_mut_ptr().add(j);
            _mm512_storeu_si512(y.cast(), _mm512_permutex2var_epi64(y_lo, first, y_hi));
            _mm512_storeu_si512(
                y.add(16).cast(),
                _mm512_permutex2var_epi64(y_lo, second, y_hi),
            );
            _mm512_storeu_si512(yh.as_mut_ptr().add(j).cast(), h16);
            _mm512_storeu_si512(yl.as_mut_ptr().add(j).cast(), l16);
        }
    }
    _mm512_test_epi32_mask(nz, nz) != 0
}

/// The AVX2 peer's `horizontal_split_sum`, 32 output columns a step (`cols.len()` a multiple of
/// 32, `cols.start >= 2`); reads `yh`, `yl` at `cols.start - 2 .. cols.end + 3`.
#[target_feature(enable = "avx512f,avx512bw")]
fn horizontal_split_sum(yh: &[i16], yl: &[i16], cols: Range<usize>) -> __m512i {
    assert!(cols.start >= 2 && cols.len().is_multiple_of(32));
    assert!(yh.len() >= cols.end + 3 && yl.len() >= cols.end + 3);
    let pairs = [
        tap_pair(FILTER[0], FILTER[1]),
        tap_pair(FILTER[2], FILTER[3]),
        tap_pair(FILTER[4], 0),
    ];
    let round = _mm512_set1_epi32(1 << 15);
    let mut sum = _mm512_setzero_si512();
    for c0 in cols.step_by(32) {
        let filter = |row: &[i16], first: usize| {
            let mut acc = _mm512_setzero_si512();
            for (i, f) in pairs.iter().enumerate() {
                // SAFETY: first + 2i + 32 <= c0 + 3 + 32 <= cols.end + 3 <= row.len() (checked
                // above); the load is unaligned.
                let v = unsafe { _mm512_loadu_si512(row.as_ptr().add(first + 2 * i).cast()) };
                acc = _mm512_add_epi32(acc, _mm512_madd_epi16(v, *f));
            }
            acc
        };
        for first in [c0 - 2, c0 - 1] {
            let (a, b) = (filter(yh, first), filter(yl, first));
            let b = _mm512_srai_epi32::<8>(_mm512_add_epi32(b, round));
            let v = _mm512_srai_epi32::<8>(_mm512_add_epi32(a, b));
            sum = _mm512_add_epi32(sum, _mm512_abs_epi32(v));
        }
    }
    sum
}
