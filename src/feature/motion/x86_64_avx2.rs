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
//! 8-bit planes take [`sad_u8`], which pairs the taps instead (two products per `vpmaddwd`,
//! 16 columns per step): the vertical pass folds the symmetric taps (`d0 + d4`, `d1 + d3`, at
//! most 510 in magnitude) and writes each row's `yh` and `yl` as 16-bit rows
//! ([`scalar::SadScratch::split`]) besides `y_row`; the horizontal pass filters those rows with
//! tap pairs, one `vpmaddwd` run for the even output columns and one a column later for the odd
//! ones (the row sum is order-free).
//!
//! The kernels are `#[target_feature(enable = "avx2")]` functions reached only through
//! [`kernel`], which checks that the CPU has AVX2.

use core::arch::x86_64::*;
use std::ops::Range;

use super::scalar::{self, SadScratch, FILTER, SPLIT_PAD};
use super::SadKernel;
use crate::picture::{Plane, Samples};

/// The AVX2 kernel, if this CPU has AVX2.
pub(super) fn kernel() -> Option<SadKernel> {
    is_x86_feature_detected!("avx2").then_some(blurred_diff_sad as SadKernel)
}

fn blurred_diff_sad(prev: &Plane<'_>, cur: &Plane<'_>, s: &mut SadScratch, bpc: u8) -> u64 {
    // SAFETY: only reachable through `kernel`, which checked that the CPU has AVX2.
    unsafe { run_planes(prev, cur, s, bpc, sad_u8, sad_u16) }
}

/// A SIMD plane kernel of one sample size: `(prev, prev_stride, cur, cur_stride, w, h, scratch,
/// bpc) -> sad`, a `#[target_feature]` function (hence `unsafe` to call through the pointer).
pub(super) type PlaneSad<T> =
    unsafe fn(&[T], usize, &[T], usize, usize, usize, &mut SadScratch, u8) -> u64;

/// [`scalar::blurred_diff_sad`] through a SIMD level's plane kernels: 16-bit input (whose
/// vertical sums need more than 32 bits), 8-bit samples of another depth and buffers too short
/// for the plane go to the scalar kernel, the rest by sample size.
///
/// # Safety
/// The CPU must have every feature `k8` and `k16` enable.
pub(super) unsafe fn run_planes(
    prev: &Plane<'_>,
    cur: &Plane<'_>,
    s: &mut SadScratch,
    bpc: u8,
    k8: PlaneSad<u8>,
    k16: PlaneSad<u16>,
) -> u64 {
    let (w, h) = (cur.width, cur.height);
    // The 8-bit kernels need 8-bit depth (their 16-bit bounds) and buffers of this width.
    let fits = s.y_row.len() >= w && s.split.len() >= 2 * (w + SPLIT_PAD);
    if bpc > 15 || !fits || matches!(prev.samples, Samples::U8(_)) && bpc != 8 {
        return scalar::blurred_diff_sad(prev, cur, s, bpc);
    }
    match (prev.samples, cur.samples) {
        // SAFETY: the caller guarantees the kernels' CPU features.
        (Samples::U8(p), Samples::U8(c)) => unsafe {
            k8(p, prev.stride, c, cur.stride, w, h, s, bpc)
        },
        // SAFETY: as above.
        (Samples::U16(p), Samples::U16(c)) => unsafe {
            k16(p, prev.stride, c, cur.stride, w, h, s, bpc)
        },
        _ => unreachable!("planes of one stream share a sample size"),
    }
}

/// 16 `u8` widened to `i16` lanes.
///
/// # Safety
/// `p` must be valid for reading 16 `u8`.
#[inline]
#[target_feature(enable = "avx2")]
unsafe fn load_u8x16(p: *const u8) -> __m256i {
    // SAFETY: the caller guarantees 16 readable bytes; the load is unaligned.
    _mm256_cvtepu8_epi16(unsafe { _mm_loadu_si128(p.cast()) })
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
            s: &mut SadScratch,
            bpc: u8,
        ) -> u64 {
            let y_row = &mut s.y_row[..w];
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
    let end = interior_end(w, 8);
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
    lane_sum(sum).wrapping_add(edges_sad(y_row, end))
}

/// Taps `(lo, hi)` as an `i16` pair in each 32-bit lane (every tap is below 2^15).
#[inline]
#[target_feature(enable = "avx2")]
fn tap_pair(lo: i64, hi: i64) -> __m256i {
    _mm256_set1_epi32(((hi as i32) << 16) | lo as i32)
}

/// The 8-bit kernel: [`vertical_split`] and [`horizontal_split_sad`] per row, the columns their
/// vectors leave and the edges by the scalar row kernels. Needs `bpc == 8` (checked by
/// [`run_planes`]).
#[allow(clippy::too_many_arguments)]
#[target_feature(enable = "avx2")]
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
    let w16 = w / 16 * 16;
    let (yh, yl) = s.split.split_at_mut(w + SPLIT_PAD);
    let y_row = &mut s.y_row[..w];
    let mut sad = 0u64;
    for i in 0..h {
        let rows = scalar::row_taps(i, h);
        let p = rows.map(|r| &prev[r * prev_stride..r * prev_stride + w]);
        let c = rows.map(|r| &cur[r * cur_stride..r * cur_stride + w]);
        let nz = vertical_split(p, c, 0..w16, y_row, yh, yl);
        let tail = scalar::vertical_row(p, c, w16..w, y_row, bpc);
        if !nz && tail == 0 {
            continue;
        }
        split_cols(y_row, yh, yl, w16..w);
        sad += horizontal_split_sad(y_row, yh, yl) as u64;
    }
    sad
}

/// `yh[j] = y >> 8`, `yl[j] = y & 0xff` of `y_row[j]` for the columns `cols` (as the vector
/// passes write them).
pub(super) fn split_cols(y_row: &[i32], yh: &mut [i16], yl: &mut [i16], cols: Range<usize>) {
    for j in cols {
        (yh[j], yl[j]) = ((y_row[j] >> 8) as i16, (y_row[j] & 0xff) as i16);
    }
}

/// The 8-bit vertical pass over `cols` (16 columns a step, `cols.start` and its length multiples
/// of 16): `y_row[j]`, `yh[j]`, `yl[j]` as [`scalar::vertical_row`] and [`split_cols`] give them.
/// `Σ f·d` is `f0 (d0 + d4) + f1 (d1 + d3) + f2 d2` (symmetric taps), each sum at most 510 in
/// magnitude: an `i16`. Returns whether any `y` is nonzero.
#[target_feature(enable = "avx2")]
pub(super) fn vertical_split(
    p: [&[u8]; 5],
    c: [&[u8]; 5],
    cols: Range<usize>,
    y_row: &mut [i32],
    yh: &mut [i16],
    yl: &mut [i16],
) -> bool {
    assert!(cols.start.is_multiple_of(16) && cols.len().is_multiple_of(16));
    assert!(p.iter().chain(&c).all(|r| r.len() >= cols.end));
    assert!(y_row.len() >= cols.end && yh.len() >= cols.end && yl.len() >= cols.end);
    const { assert!(FILTER[0] == FILTER[4] && FILTER[1] == FILTER[3]) };
    let f01 = tap_pair(FILTER[0], FILTER[1]);
    let f2 = tap_pair(FILTER[2], 0);
    let round = _mm256_set1_epi32(128);
    let low8 = _mm256_set1_epi32(0xff);
    let z = _mm256_setzero_si256();
    let mut nz = z;
    for j in cols.step_by(16) {
        // SAFETY: j + 16 <= cols.end <= every row's length (checked above).
        let d: [__m256i; 5] = std::array::from_fn(|k| unsafe {
            _mm256_sub_epi16(
                load_u8x16(p[k].as_ptr().add(j)),
                load_u8x16(c[k].as_ptr().add(j)),
            )
        });
        let (s04, s13) = (_mm256_add_epi16(d[0], d[4]), _mm256_add_epi16(d[1], d[3]));
        // In-lane interleaves: columns 0-3 and 8-11 in `lo`, 4-7 and 12-15 in `hi`.
        let sum = |a: __m256i, b: __m256i| {
            _mm256_add_epi32(_mm256_madd_epi16(a, f01), _mm256_madd_epi16(b, f2))
        };
        let lo = sum(
            _mm256_unpacklo_epi16(s04, s13),
            _mm256_unpacklo_epi16(d[2], z),
        );
        let hi = sum(
            _mm256_unpackhi_epi16(s04, s13),
            _mm256_unpackhi_epi16(d[2], z),
        );
        let y_lo = _mm256_srai_epi32::<8>(_mm256_add_epi32(lo, round));
        let y_hi = _mm256_srai_epi32::<8>(_mm256_add_epi32(hi, round));
        nz = _mm256_or_si256(nz, _mm256_or_si256(y_lo, y_hi));
        // |y| <= 65280: y >> 8 and y & 0xff are i16 values, which the packs keep; per 128-bit
        // half they put lo's 4 columns before hi's, the column order.
        let h16 = _mm256_packs_epi32(_mm256_srai_epi32::<8>(y_lo), _mm256_srai_epi32::<8>(y_hi));
        let l16 = _mm256_packs_epi32(_mm256_and_si256(y_lo, low8), _mm256_and_si256(y_hi, low8));
        // SAFETY: j + 16 <= cols.end <= each buffer's length (checked above); unaligned stores.
        unsafe {
            let y = y_row.as_mut_ptr().add(j);
            _mm256_storeu_si256(y.cast(), _mm256_permute2x128_si256::<0x20>(y_lo, y_hi));
            _mm256_storeu_si256(
                y.add(8).cast(),
                _mm256_permute2x128_si256::<0x31>(y_lo, y_hi),
            );
            _mm256_storeu_si256(yh.as_mut_ptr().add(j).cast(), h16);
            _mm256_storeu_si256(yl.as_mut_ptr().add(j).cast(), l16);
        }
    }
    _mm256_testz_si256(nz, nz) == 0
}

/// [`horizontal_row_sad`] of a row whose [`split_cols`] halves are `yh` and `yl` (each at least
/// `y_row.len() + 3` long): the interior by [`horizontal_split_sum`], the edges by [`edges_sad`].
#[target_feature(enable = "avx2")]
fn horizontal_split_sad(y_row: &[i32], yh: &[i16], yl: &[i16]) -> u32 {
    let end = interior_end(y_row.len(), 16);
    let sum = lane_sum(horizontal_split_sum(yh, yl, 2..end));
    sum.wrapping_add(edges_sad(y_row, end))
}

/// The end of the output columns `2 ..` that steps of `step` columns cover in a row of `w`
/// (each output reads 2 columns on either side).
pub(super) fn interior_end(w: usize, step: usize) -> usize {
    2 + w.saturating_sub(4) / step * step
}

/// `Σ |horizontal blur|` of the columns outside `2 .. end` (the mirrored edges and what the
/// vectors left), wrapping in 32 bits.
pub(super) fn edges_sad(y_row: &[i32], end: usize) -> u32 {
    let w = y_row.len();
    (0..2.min(w))
        .chain(end.max(2.min(w))..w)
        .fold(0u32, |s, j| {
            s.wrapping_add(scalar::horizontal_abs(y_row, j))
        })
}

/// The wrapping sum of the 8 `u32` lanes.
#[inline]
#[target_feature(enable = "avx2")]
pub(super) fn lane_sum(v: __m256i) -> u32 {
    let mut lanes = [0u32; 8];
    // SAFETY: `lanes` holds 8 `u32` (32 bytes); the store is unaligned.
    unsafe { _mm256_storeu_si256(lanes.as_mut_ptr().cast(), v) };
    lanes.iter().fold(0u32, |s, &x| s.wrapping_add(x))
}

/// Per-lane wrapping sums of `|horizontal blur|` at the output columns `cols` (16 a step, its
/// length a multiple of 16, `cols.start >= 2`) from the split rows: `A = Σ f·yh` and `B = Σ f·yl`
/// with the taps in pairs, the even output columns from runs starting 2 columns left of the
/// step, the odd from a column later; `(A + ((B + 2^15) >> 8)) >> 8` as in the module notes.
/// Reads `yh`, `yl` at `cols.start - 2 .. cols.end + 3`.
#[target_feature(enable = "avx2")]
pub(super) fn horizontal_split_sum(yh: &[i16], yl: &[i16], cols: Range<usize>) -> __m256i {
    assert!(cols.start >= 2 && cols.len().is_multiple_of(16));
    assert!(yh.len() >= cols.end + 3 && yl.len() >= cols.end + 3);
    let pairs = [
        tap_pair(FILTER[0], FILTER[1]),
        tap_pair(FILTER[2], FILTER[3]),
        tap_pair(FILTER[4], 0),
    ];
    let round = _mm256_set1_epi32(1 << 15);
    let mut sum = _mm256_setzero_si256();
    for c0 in cols.step_by(16) {
        let filter = |row: &[i16], first: usize| {
            let mut acc = _mm256_setzero_si256();
            for (i, f) in pairs.iter().enumerate() {
                // SAFETY: first + 2i + 16 <= c0 + 3 + 16 <= cols.end + 3 <= row.len() (checked
                // above); the load is unaligned.
                let v = unsafe { _mm256_loadu_si256(row.as_ptr().add(first + 2 * i).cast()) };
                acc = _mm256_add_epi32(acc, _mm256_madd_epi16(v, *f));
            }
            acc
        };
        for first in [c0 - 2, c0 - 1] {
            let (a, b) = (filter(yh, first), filter(yl, first));
            let b = _mm256_srai_epi32::<8>(_mm256_add_epi32(b, round));
            let v = _mm256_srai_epi32::<8>(_mm256_add_epi32(a, b));
            sum = _mm256_add_epi32(sum, _mm256_abs_epi32(v));
        }
    }
    sum
}
