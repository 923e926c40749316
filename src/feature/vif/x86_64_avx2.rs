//! AVX2 peers of the [`scalar`] VIF kernels, equal to them bit for bit: the same integer widths,
//! wrapping and rounding, 8 columns per step (32-bit lanes; 64-bit sums as even/odd lane pairs),
//! the columns left over handled by the scalar `*_cols` kernels. Only the order of the integer
//! sums differs, which is exact.
//!
//! The kernels are `#[target_feature(enable = "avx2,fma")]` functions reached only through
//! [`install`], which checks that the CPU has AVX2 and FMA (every AVX2 CPU has it; the `log2`
//! arithmetic fuses its multiply-adds); that check is what every `unsafe` call of them relies on.

use core::arch::x86_64::*;
use std::array::from_fn;

use super::scalar::SplitRow;
use super::scalar::{self, StatLine, StatShifts, VifSums, WideAcc, NARROW_COPIES, NARROW_LINE};
use super::tables::{self, EPS, FILTER_S0, LOG2_COMPACT_BASE, LOG2_TABLE_LEN, PAD, SIGMA_NSQ};
use super::{
    fold_tap_pairs, fold_taps_ok, madd_vertical_ok, madd_vertical_x2_ok, Kernels, RefRow,
    RefRowMut, SplitKernels,
};

/// Replaces the entries of `k` that have an AVX2 kernel, if this CPU has AVX2 and FMA.
pub(super) fn install(k: &mut Kernels) {
    if !(is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma")) {
        return;
    }
    k.stat_vertical_u8 = stat_vertical_u8;
    k.stat_vertical_u8_x2 = Some(stat_vertical_u8_x2);
    k.stat_vertical_u16 = stat_vertical_u16;
    k.stat_vertical_u16_x2 = Some(stat_vertical_u16_x2::<false>);
    k.stat_horizontal = stat_horizontal;
    k.subsample_vertical_u8 = subsample_vertical_u8;
    k.subsample_vertical_u16 = subsample_vertical_u16;
    k.subsample_horizontal = subsample_horizontal;
    k.split = Some(SplitKernels {
        stat_vertical_u8_dis,
        stat_vertical_u8_dis_x2: Some(stat_vertical_u8_dis_x2),
        stat_vertical_u16_dis,
        stat_vertical_u16_dis_x2: Some(stat_vertical_u16_x2::<true>),
        stat_horizontal_store,
        stat_horizontal_dis,
        max_gain_limit: LogTerms::MAX_GAIN_LIMIT,
    });
}

// ---------------------------------------------------------------------------------------------
// Safe entry points (only installed after the AVX2 check)
// ---------------------------------------------------------------------------------------------

fn stat_vertical_u8(r: &[&[u8]], d: &[&[u8]], w: usize, line: &mut StatLine) {
    // SAFETY: only reachable through `install`, which checked that the CPU has AVX2 and FMA.
    unsafe { stat_vertical_u8_avx2::<false>(r, d, w, line) }
}

fn stat_vertical_u16(
    r: &[&[u16]],
    d: &[&[u16]],
    filt: &[u16],
    sh: StatShifts,
    w: usize,
    line: &mut StatLine,
    acc: &mut WideAcc,
) {
    // SAFETY: only reachable through `install`, which checked that the CPU has AVX2 and FMA.
    unsafe { stat_vertical_u16_avx2::<false>(r, d, filt, sh, w, line, acc) }
}

fn stat_horizontal(
    line: &StatLine,
    filt: &[u16],
    w: usize,
    gain_limit: f64,
    log2: &[u16; LOG2_TABLE_LEN],
    acc: &mut WideAcc,
    sums: &mut VifSums,
) {
    // SAFETY: only reachable through `install`, which checked that the CPU has AVX2 and FMA.
    let done = unsafe {
        stat_horizontal_avx2(
            line,
            filt,
            w,
            gain_limit,
            log2,
            acc,
            sums,
            &mut RefSide::Own,
        )
    };
    debug_assert!(done, "a pass of its own always completes");
}

#[allow(clippy::too_many_arguments)]
fn stat_horizontal_store(
    line: &StatLine,
    filt: &[u16],
    w: usize,
    gain_limit: f64,
    log2: &[u16; LOG2_TABLE_LEN],
    acc: &mut WideAcc,
    sums: &mut VifSums,
    row: RefRowMut<'_>,
) -> bool {
    let mut side = RefSide::Split(SplitRow::Store(row));
    // SAFETY: only reachable through `install`, which checked that the CPU has AVX2 and FMA.
    unsafe { stat_horizontal_avx2(line, filt, w, gain_limit, log2, acc, sums, &mut side) }
}

#[allow(clippy::too_many_arguments)]
fn stat_horizontal_dis(
    line: &StatLine,
    filt: &[u16],
    w: usize,
    gain_limit: f64,
    log2: &[u16; LOG2_TABLE_LEN],
    acc: &mut WideAcc,
    sums: &mut VifSums,
    row: RefRow<'_>,
) -> bool {
    let mut side = RefSide::Split(SplitRow::Load(row));
    // SAFETY: only reachable through `install`, which checked that the CPU has AVX2 and FMA.
    unsafe { stat_horizontal_avx2(line, filt, w, gain_limit, log2, acc, sums, &mut side) }
}

fn stat_vertical_u8_x2(r: &[&[u8]], d: &[&[u8]], w: usize, lines: [&mut StatLine; 2]) {
    // SAFETY: only reachable through `install`, which checked that the CPU has AVX2 and FMA.
    unsafe { stat_vertical_u8_x2_avx2::<false>(r, d, w, lines) }
}

fn stat_vertical_u8_dis_x2(r: &[&[u8]], d: &[&[u8]], w: usize, lines: [&mut StatLine; 2]) {
    // SAFETY: only reachable through `install`, which checked that the CPU has AVX2 and FMA.
    unsafe { stat_vertical_u8_x2_avx2::<true>(r, d, w, lines) }
}

/// The two-row 16-bit vertical pass, both lines' statistics (a rendition's own) or, with
/// `DIS_ONLY`, their distorted side (ladder scoring's later renditions).
#[allow(clippy::too_many_arguments)]
fn stat_vertical_u16_x2<const DIS_ONLY: bool>(
    r: &[&[u16]],
    d: &[&[u16]],
    filt: &[u16],
    sh: StatShifts,
    w: usize,
    lines: [&mut StatLine; 2],
    acc: &mut WideAcc,
) {
    // SAFETY: only reachable through `install`, which checked that the CPU has AVX2 and FMA.
    unsafe { stat_vertical_u16_x2_avx2::<DIS_ONLY>(r, d, filt, sh, w, lines, acc) }
}

fn stat_vertical_u8_dis(r: &[&[u8]], d: &[&[u8]], w: usize, line: &mut StatLine) {
    // SAFETY: only reachable through `install`, which checked that the CPU has AVX2 and FMA.
    unsafe { stat_vertical_u8_avx2::<true>(r, d, w, line) }
}

fn stat_vertical_u16_dis(
    r: &[&[u16]],
    d: &[&[u16]],
    filt: &[u16],
    sh: StatShifts,
    w: usize,
    line: &mut StatLine,
    acc: &mut WideAcc,
) {
    // SAFETY: only reachable through `install`, which checked that the CPU has AVX2 and FMA.
    unsafe { stat_vertical_u16_avx2::<true>(r, d, filt, sh, w, line, acc) }
}

#[allow(clippy::too_many_arguments)]
fn subsample_vertical_u8(
    r: &[&[u8]],
    d: &[&[u8]],
    filt: &[u16],
    round: u32,
    shift: u32,
    w: usize,
    out_r: &mut [u16],
    out_d: &mut [u16],
) {
    // SAFETY: only reachable through `install`, which checked that the CPU has AVX2 and FMA.
    unsafe {
        let done = match filt.len() {
            9 => subsample_vertical_u8_fold::<4>(r, d, filt, round, shift, w, out_r, out_d),
            5 => subsample_vertical_u8_fold::<2>(r, d, filt, round, shift, w, out_r, out_d),
            _ => false,
        };
        if !done {
            subsample_vertical_u8_avx2(r, d, filt, round, shift, w, out_r, out_d);
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn subsample_vertical_u16(
    r: &[&[u16]],
    d: &[&[u16]],
    filt: &[u16],
    round: u32,
    shift: u32,
    w: usize,
    out_r: &mut [u16],
    out_d: &mut [u16],
) {
    // SAFETY: only reachable through `install`, which checked that the CPU has AVX2 and FMA.
    unsafe { subsample_vertical_u16_avx2(r, d, filt, round, shift, w, out_r, out_d) }
}

fn subsample_horizontal(
    lr: &[u16],
    ld: &[u16],
    filt: &[u16],
    w: usize,
    out_r: &mut [u16],
    out_d: &mut [u16],
) {
    // SAFETY: only reachable through `install`, which checked that the CPU has AVX2 and FMA.
    unsafe {
        let done = match filt.len().div_ceil(2) {
            5 => subsample_horizontal_madd::<5>(lr, ld, filt, w, out_r, out_d),
            3 => subsample_horizontal_madd::<3>(lr, ld, filt, w, out_r, out_d),
            2 => subsample_horizontal_madd::<2>(lr, ld, filt, w, out_r, out_d),
            _ => false,
        };
        if !done {
            subsample_horizontal_avx2(lr, ld, filt, w, out_r, out_d);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Loads and stores: the only raw-pointer accesses. The kernels check their slices' lengths once
// up front and then address them by pointer, keeping bounds checks out of the inner loops.
// ---------------------------------------------------------------------------------------------

/// 8 `u8` widened to `u32` lanes.
///
/// # Safety
/// `p` must be valid for reading 8 `u8`.
#[inline]
#[target_feature(enable = "avx2,fma")]
unsafe fn load_u8x8(p: *const u8) -> __m256i {
    // SAFETY: the caller guarantees 8 readable bytes; the load is unaligned.
    _mm256_cvtepu8_epi32(unsafe { _mm_loadl_epi64(p.cast()) })
}

/// 8 `u16` widened to `u32` lanes.
///
/// # Safety
/// `p` must be valid for reading 8 `u16`.
#[inline]
#[target_feature(enable = "avx2,fma")]
unsafe fn load_u16x8(p: *const u16) -> __m256i {
    // SAFETY: the caller guarantees 16 readable bytes; the load is unaligned.
    _mm256_cvtepu16_epi32(unsafe { _mm_loadu_si128(p.cast()) })
}

/// 8 `u32`.
///
/// # Safety
/// `p` must be valid for reading 8 `u32`.
#[inline]
#[target_feature(enable = "avx2,fma")]
unsafe fn load_u32x8(p: *const u32) -> __m256i {
    // SAFETY: the caller guarantees 32 readable bytes; the load is unaligned.
    unsafe { _mm256_loadu_si256(p.cast()) }
}

/// Stores 8 `u32` to the start of `d` (bounds-checked: used once per output vector).
#[inline]
#[target_feature(enable = "avx2,fma")]
fn store_u32x8(d: &mut [u32], v: __m256i) {
    let d = &mut d[..8];
    // SAFETY: `d` holds 8 `u32` (32 bytes); the store is unaligned.
    unsafe { _mm256_storeu_si256(d.as_mut_ptr().cast(), v) }
}

/// Stores 8 `u16` to the start of `d` (bounds-checked: used once per output vector).
#[inline]
#[target_feature(enable = "avx2,fma")]
fn store_u16x8(d: &mut [u16], v: __m128i) {
    let d = &mut d[..8];
    // SAFETY: `d` holds 8 `u16` (16 bytes); the store is unaligned.
    unsafe { _mm_storeu_si128(d.as_mut_ptr().cast(), v) }
}

/// Stores 16 `u16` to the start of `d` (bounds-checked).
#[inline]
#[target_feature(enable = "avx2,fma")]
fn store_u16x16(d: &mut [u16], v: __m256i) {
    let d = &mut d[..16];
    // SAFETY: `d` holds 16 `u16` (32 bytes); the store is unaligned.
    unsafe { _mm256_storeu_si256(d.as_mut_ptr().cast(), v) }
}

/// Interleaves the low 32 bits of the 64-bit lanes of `even` (lanes 0, 2, 4, 6) and `odd`
/// (lanes 1, 3, 5, 7) back into 8 `u32` lanes.
#[inline]
#[target_feature(enable = "avx2,fma")]
fn merge_even_odd(even: __m256i, odd: __m256i) -> __m256i {
    _mm256_blend_epi32::<0b1010_1010>(even, _mm256_slli_epi64::<32>(odd))
}

/// Even/odd 64-bit products `a * b` of the `u32` lanes: `(lanes 0,2,4,6, lanes 1,3,5,7)`.
#[inline]
#[target_feature(enable = "avx2,fma")]
fn mul_wide(a: __m256i, b: __m256i) -> (__m256i, __m256i) {
    (
        _mm256_mul_epu32(a, b),
        _mm256_mul_epu32(odd_to_even(a), odd_to_even(b)),
    )
}

/// Each 64-bit lane's high 32 bits in its low half (the high half a copy of them, which the
/// users ignore): `vpshufd` on the shuffle port rather than a shift on the ports the multiplies
/// share.
#[inline]
#[target_feature(enable = "avx2,fma")]
fn odd_to_even(v: __m256i) -> __m256i {
    _mm256_shuffle_epi32::<0b11_11_01_01>(v)
}

/// Adds a pair of even/odd 64-bit products to a pair of accumulators.
#[inline]
#[target_feature(enable = "avx2,fma")]
fn add_wide(acc: &mut (__m256i, __m256i), p: (__m256i, __m256i)) {
    acc.0 = _mm256_add_epi64(acc.0, p.0);
    acc.1 = _mm256_add_epi64(acc.1, p.1);
}

// ---------------------------------------------------------------------------------------------
// Statistic
// ---------------------------------------------------------------------------------------------

/// The scale-0 8-bit vertical pass in 16-bit madd lanes, 16 columns per step: two rows per
/// `_mm256_madd_epi16` (taps paired, the last with a zero tap); the squares and products
/// (at most 255^2 < 2^16, exact in 16-bit lanes) offset by -2^15 into `i16` and the offset
/// `2^15 * sum(taps)` added back. No pair sum overflows (every two taps sum below 2^16) and the
/// filtered values are below 2^32, so the wrapping `i32` sums are the scalar's `u32` ones. The
/// in-lane interleave leaves columns 0-3, 8-11 in the `lo` sums and 4-7, 12-15 in the `hi` sums,
/// put back in order at the store.
#[target_feature(enable = "avx2,fma")]
fn stat_vertical_u8_avx2<const DIS_ONLY: bool>(
    r: &[&[u8]],
    d: &[&[u8]],
    w: usize,
    line: &mut StatLine,
) {
    const TAPS: usize = FILTER_S0.len();
    const PAIRS: usize = TAPS.div_ceil(2);
    assert!(r.len() == TAPS && d.len() == TAPS);
    assert!(r.iter().chain(d).all(|row| row.len() >= w));
    let w16 = w / 16 * 16;
    let pairs: [__m256i; PAIRS] = tap_pairs(&FILTER_S0);
    // Row indices of each pair (the last tap pairs with itself, times a zero tap).
    let rows = |i: usize| (2 * i, (2 * i + 1).min(TAPS - 1));
    let offset = madd_offset(&FILTER_S0);
    let flip = _mm256_set1_epi16(i16::MIN);
    let round = _mm256_set1_epi32(128);
    for j in (0..w16).step_by(16) {
        let z = _mm256_setzero_si256();
        let (mut mu1, mut mu2) = ((z, z), (z, z));
        let (mut xx, mut yy, mut xy) = ((offset, offset), (offset, offset), (offset, offset));
        for (i, &c) in pairs.iter().enumerate() {
            let (ka, kb) = rows(i);
            // SAFETY: j + 16 <= w16 <= w <= every row's length (checked above).
            let (xa, xb, ya, yb) = unsafe {
                (
                    load_u8x16(r[ka].as_ptr().add(j)),
                    load_u8x16(r[kb].as_ptr().add(j)),
                    load_u8x16(d[ka].as_ptr().add(j)),
                    load_u8x16(d[kb].as_ptr().add(j)),
                )
            };
            // The two rows interleaved once, then squared and multiplied in that order: the
            // pairs the `madd`s take need no interleave of their own.
            let (xl, xh) = (_mm256_unpacklo_epi16(xa, xb), _mm256_unpackhi_epi16(xa, xb));
            let (yl, yh) = (_mm256_unpacklo_epi16(ya, yb), _mm256_unpackhi_epi16(ya, yb));
            let acc = |s: &mut (__m256i, __m256i), lo: __m256i, hi: __m256i| {
                s.0 = madd_acc(s.0, lo, c);
                s.1 = madd_acc(s.1, hi, c);
            };
            let sq = |a: __m256i, b: __m256i| _mm256_xor_si256(_mm256_mullo_epi16(a, b), flip);
            if !DIS_ONLY {
                acc(&mut mu1, xl, xh);
                acc(&mut xx, sq(xl, xl), sq(xh, xh));
            }
            acc(&mut mu2, yl, yh);
            acc(&mut yy, sq(yl, yl), sq(yh, yh));
            acc(&mut xy, sq(xl, yl), sq(xh, yh));
        }
        let o = PAD + j;
        // In column order; the means rounded by 8 bits.
        let ordered = |(lo, hi): (__m256i, __m256i), mean: bool| {
            let v = [
                _mm256_permute2x128_si256::<0x20>(lo, hi),
                _mm256_permute2x128_si256::<0x31>(lo, hi),
            ];
            if mean {
                v.map(|v| _mm256_srli_epi32::<8>(_mm256_add_epi32(v, round)))
            } else {
                v
            }
        };
        for (dst, v, reference) in [
            (&mut line.mu1, ordered(mu1, true), true),
            (&mut line.mu2, ordered(mu2, true), false),
            (&mut line.xx, ordered(xx, false), true),
            (&mut line.yy, ordered(yy, false), false),
            (&mut line.xy, ordered(xy, false), false),
        ] {
            if DIS_ONLY && reference {
                continue;
            }
            store_u32x8(&mut dst[o..], v[0]);
            store_u32x8(&mut dst[o + 8..], v[1]);
        }
    }
    scalar::stat_vertical_u8_cols::<DIS_ONLY>(r, d, w16..w, line);
}

/// Two output rows of [`stat_vertical_u8_avx2`] in one pass (the AVX-512 level's method): `r`
/// and `d` hold 18 rows, `lines[0]` gets the statistic of rows 0..17 and `lines[1]` that of rows
/// 1..18. Each row pair is interleaved (bytes, then widened: 8 columns in column order) and
/// squared once and weighed by both lines' taps, `(f[2i], f[2i+1])` and `(f[2i-1], f[2i])`; 8
/// columns a step keeps both lines' 10 sums in registers. The `madd` sums are the single pass's,
/// so the lines are equal to two calls'.
#[target_feature(enable = "avx2,fma")]
fn stat_vertical_u8_x2_avx2<const DIS_ONLY: bool>(
    r: &[&[u8]],
    d: &[&[u8]],
    w: usize,
    lines: [&mut StatLine; 2],
) {
    const TAPS: usize = FILTER_S0.len();
    const PAIRS: usize = TAPS.div_ceil(2);
    assert!(r.len() == TAPS + 1 && d.len() == TAPS + 1);
    assert!(r.iter().chain(d).all(|row| row.len() >= w));
    let [l0, l1] = lines;
    assert!([&*l0, &*l1]
        .iter()
        .flat_map(|l| [&l.mu1, &l.mu2, &l.xx, &l.yy, &l.xy])
        .all(|b| b.len() >= PAD + w));
    let (even, odd): ([__m256i; PAIRS], [__m256i; PAIRS]) =
        (tap_pairs(&FILTER_S0), odd_tap_pairs(&FILTER_S0));
    let offset = madd_offset(&FILTER_S0);
    let flip = _mm256_set1_epi16(i16::MIN);
    let round = _mm256_set1_epi32(128);
    let w8 = w / 8 * 8;
    for j in (0..w8).step_by(8) {
        let z = _mm256_setzero_si256();
        let o = offset;
        // (first line, second line) sums, 8 columns each.
        let (mut mu1, mut mu2) = ((z, z), (z, z));
        let (mut xx, mut yy, mut xy) = ((o, o), (o, o), (o, o));
        for i in 0..PAIRS {
            let (c0, c1) = (even[i], odd[i]);
            // SAFETY: j + 8 <= w8 <= w <= every row's length (checked above); each load reads
            // 8 bytes from column j.
            let (x, y) = unsafe {
                let ld = |row: &[u8]| _mm_loadl_epi64(row.as_ptr().add(j).cast());
                (
                    _mm256_cvtepu8_epi16(_mm_unpacklo_epi8(ld(r[2 * i]), ld(r[2 * i + 1]))),
                    _mm256_cvtepu8_epi16(_mm_unpacklo_epi8(ld(d[2 * i]), ld(d[2 * i + 1]))),
                )
            };
            let sq = |a: __m256i, b: __m256i| _mm256_xor_si256(_mm256_mullo_epi16(a, b), flip);
            macro_rules! acc2 {
                ($s:ident, $v:expr) => {{
                    let v = $v;
                    $s.0 = madd_acc($s.0, v, c0);
                    $s.1 = madd_acc($s.1, v, c1);
                }};
            }
            if !DIS_ONLY {
                acc2!(mu1, x);
                acc2!(xx, sq(x, x));
            }
            acc2!(mu2, y);
            acc2!(yy, sq(y, y));
            acc2!(xy, sq(x, y));
        }
        let mean = |v: __m256i| _mm256_srli_epi32::<8>(_mm256_add_epi32(v, round));
        let at = PAD + j;
        for (line, first) in [(&mut *l0, true), (&mut *l1, false)] {
            let get = |p: (__m256i, __m256i)| if first { p.0 } else { p.1 };
            if !DIS_ONLY {
                store_u32x8(&mut line.mu1[at..], mean(get(mu1)));
                store_u32x8(&mut line.xx[at..], get(xx));
            }
            store_u32x8(&mut line.mu2[at..], mean(get(mu2)));
            store_u32x8(&mut line.yy[at..], get(yy));
            store_u32x8(&mut line.xy[at..], get(xy));
        }
    }
    if w8 < w {
        scalar::stat_vertical_u8_cols::<DIS_ONLY>(&r[..TAPS], &d[..TAPS], w8..w, l0);
        scalar::stat_vertical_u8_cols::<DIS_ONLY>(&r[1..], &d[1..], w8..w, l1);
    }
}

/// `acc + madd(a, b)` in wrapping `i32` lanes: in the AVX-VNNI copy one `vpdpwssd`, the same
/// sum (build.rs rewrites this body there, as for the AVX-512 VNNI copy).
#[inline]
#[target_feature(enable = "avx2,fma")]
fn madd_acc(acc: __m256i, a: __m256i, b: __m256i) -> __m256i {
    _mm256_add_epi32(acc, _mm256_madd_epi16(a, b))
}

/// Tap pairs `(f[2i], f[2i + 1])` as `i16` pairs in each 32-bit lane, the last odd tap paired
/// with 0 (the `madd` weights of two rows or columns).
#[inline]
#[target_feature(enable = "avx2,fma")]
fn tap_pairs<const PAIRS: usize>(filt: &[u16]) -> [__m256i; PAIRS] {
    debug_assert_eq!(filt.len().div_ceil(2), PAIRS);
    std::array::from_fn(|i| {
        let lo = filt[2 * i] as i32;
        let hi = filt.get(2 * i + 1).map_or(0, |&f| f as i32);
        _mm256_set1_epi32(hi << 16 | lo)
    })
}

/// Tap pairs `(f[2i - 1], f[2i])` (`f[-1]` and taps past the end 0): the weights of a value
/// pair for the output one column (or row) after the pair [`tap_pairs`] weighs.
#[inline]
#[target_feature(enable = "avx2,fma")]
fn odd_tap_pairs<const PAIRS: usize>(filt: &[u16]) -> [__m256i; PAIRS] {
    debug_assert_eq!(filt.len().div_ceil(2), PAIRS);
    let tap = |k: usize| filt.get(k).map_or(0, |&f| f as i32);
    std::array::from_fn(|i| {
        let lo = if i == 0 { 0 } else { tap(2 * i - 1) };
        _mm256_set1_epi32(tap(2 * i) << 16 | lo)
    })
}

/// `2^15 * sum(filt)` (wrapping): what the -2^15 offset of every `madd` operand takes away.
#[inline]
#[target_feature(enable = "avx2,fma")]
fn madd_offset(filt: &[u16]) -> __m256i {
    _mm256_set1_epi32(
        filt.iter()
            .map(|&f| f as u32)
            .sum::<u32>()
            .wrapping_mul(1 << 15) as i32,
    )
}

/// 16 `u8` widened to `u16` lanes.
///
/// # Safety
/// `p` must be valid for reading 16 `u8`.
#[inline]
#[target_feature(enable = "avx2,fma")]
unsafe fn load_u8x16(p: *const u8) -> __m256i {
    // SAFETY: the caller guarantees 16 readable bytes; the load is unaligned.
    _mm256_cvtepu8_epi16(unsafe { _mm_loadu_si128(p.cast()) })
}

#[target_feature(enable = "avx2,fma")]
fn stat_vertical_u16_avx2<const DIS_ONLY: bool>(
    r: &[&[u16]],
    d: &[&[u16]],
    filt: &[u16],
    sh: StatShifts,
    w: usize,
    line: &mut StatLine,
    acc: &mut WideAcc,
) {
    assert!(r.len() == filt.len() && d.len() == filt.len());
    assert!(r.iter().chain(d).all(|row| row.len() >= w));
    match (madd_vertical_ok(filt, sh), filt.len().div_ceil(2)) {
        (true, 9) => return stat_vertical_u16_madd::<9, DIS_ONLY>(r, d, filt, sh, w, line, acc),
        (true, 5) => return stat_vertical_u16_madd::<5, DIS_ONLY>(r, d, filt, sh, w, line, acc),
        (true, 3) => return stat_vertical_u16_madd::<3, DIS_ONLY>(r, d, filt, sh, w, line, acc),
        (true, 2) => return stat_vertical_u16_madd::<2, DIS_ONLY>(r, d, filt, sh, w, line, acc),
        _ => {}
    }
    let w8 = w / 8 * 8;
    let mu_round = _mm256_set1_epi32(sh.mu_round as i32);
    let mu_shift = _mm_cvtsi32_si128(sh.mu_shift as i32);
    let sq_round = _mm256_set1_epi64x(sh.sq_round as i64);
    let sq_shift = _mm_cvtsi32_si128(sh.sq_shift as i32);
    let low16 = _mm256_set1_epi32(0xffff);
    let mu = |v: __m256i| {
        _mm256_and_si256(
            _mm256_srl_epi32(_mm256_add_epi32(v, mu_round), mu_shift),
            low16,
        )
    };
    let sq = |(e, o): (__m256i, __m256i)| {
        merge_even_odd(
            _mm256_srl_epi64(_mm256_add_epi64(e, sq_round), sq_shift),
            _mm256_srl_epi64(_mm256_add_epi64(o, sq_round), sq_shift),
        )
    };
    for j in (0..w8).step_by(8) {
        let z = _mm256_setzero_si256();
        let (mut mu1, mut mu2) = (z, z);
        let (mut xx, mut yy, mut xy) = ((z, z), (z, z), (z, z));
        for ((&f, r), d) in filt.iter().zip(r).zip(d) {
            let f = _mm256_set1_epi32(f as i32);
            // SAFETY: j + 8 <= w8 <= w <= every row's length (checked above).
            let (x, y) = unsafe { (load_u16x8(r.as_ptr().add(j)), load_u16x8(d.as_ptr().add(j))) };
            // f * x < 2^32: the products are exact in 32 bits, as in the scalar kernel.
            let fx = _mm256_mullo_epi32(f, x);
            let fy = _mm256_mullo_epi32(f, y);
            if !DIS_ONLY {
                mu1 = _mm256_add_epi32(mu1, fx);
                add_wide(&mut xx, mul_wide(fx, x));
            }
            mu2 = _mm256_add_epi32(mu2, fy);
            add_wide(&mut yy, mul_wide(fy, y));
            add_wide(&mut xy, mul_wide(fx, y));
        }
        let o = PAD + j;
        if !DIS_ONLY {
            store_u32x8(&mut line.mu1[o..], mu(mu1));
            store_u32x8(&mut line.xx[o..], sq(xx));
        }
        store_u32x8(&mut line.mu2[o..], mu(mu2));
        store_u32x8(&mut line.yy[o..], sq(yy));
        store_u32x8(&mut line.xy[o..], sq(xy));
    }
    scalar::stat_vertical_u16_cols::<DIS_ONLY>(r, d, filt, sh, w8..w, line, acc);
}

/// How [`stat_vertical_u16_madd`] and [`stat_vertical_u16_x2_madd`] round their sums into a
/// line's values ([`store_u16_madd`]).
struct U16MaddOut {
    mu_round: __m256i,
    mu_shift: __m128i,
    sq_round: __m256i,
    sq_shift: __m128i,
    /// `16 - sq_shift`: where a square's high half lands after the rounding shift.
    hi_shift: __m128i,
    low16: __m256i,
}

impl U16MaddOut {
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    fn new(sh: StatShifts) -> Self {
        U16MaddOut {
            mu_round: _mm256_set1_epi32(sh.mu_round as i32),
            mu_shift: _mm_cvtsi32_si128(sh.mu_shift as i32),
            sq_round: _mm256_set1_epi32(sh.sq_round as i32),
            sq_shift: _mm_cvtsi32_si128(sh.sq_shift as i32),
            hi_shift: _mm_cvtsi32_si128(16 - sh.sq_shift as i32),
            low16: _mm256_set1_epi32(0xffff),
        }
    }
}

/// Writes columns `j .. j + 16` of `line` from one line's `madd` sums `[mu1, mu2, xx lo, xx hi,
/// yy lo, yy hi, xy lo, xy hi]`, each as its interleaved (lo: columns 0-3 and 8-11, hi: 4-7 and
/// 12-15) pair: the means rounded, shifted and kept to 16 bits, each square recombined from the
/// sums of its halves, in column order. A macro, as the block sums elsewhere in this file: as a
/// function LLVM may leave it out of line, its sums passed through memory.
macro_rules! store_u16_madd {
    ($dis_only:expr, $line:expr, $j:expr, $k:expr, $sums:expr) => {{
        let (line, j, k, s): (&mut StatLine, usize, &U16MaddOut, [(__m256i, __m256i); 8]) =
            ($line, $j, $k, $sums);
        let ordered = |(lo, hi): (__m256i, __m256i)| {
            [
                _mm256_permute2x128_si256::<0x20>(lo, hi),
                _mm256_permute2x128_si256::<0x31>(lo, hi),
            ]
        };
        let mean = |v: __m256i| {
            _mm256_and_si256(
                _mm256_srl_epi32(_mm256_add_epi32(v, k.mu_round), k.mu_shift),
                k.low16,
            )
        };
        let squares = |l: (__m256i, __m256i), h: (__m256i, __m256i)| {
            let (l, h) = (ordered(l), ordered(h));
            let sq = |lo: __m256i, hi: __m256i| {
                _mm256_add_epi32(
                    _mm256_sll_epi32(hi, k.hi_shift),
                    _mm256_srl_epi32(_mm256_add_epi32(lo, k.sq_round), k.sq_shift),
                )
            };
            [sq(l[0], h[0]), sq(l[1], h[1])]
        };
        let at = PAD + j;
        let out = |dst: &mut Vec<u32>, v: [__m256i; 2]| {
            store_u32x8(&mut dst[at..], v[0]);
            store_u32x8(&mut dst[at + 8..], v[1]);
        };
        if !$dis_only {
            out(&mut line.mu1, ordered(s[0]).map(mean));
            out(&mut line.xx, squares(s[2], s[3]));
        }
        out(&mut line.mu2, ordered(s[1]).map(mean));
        out(&mut line.yy, squares(s[4], s[5]));
        out(&mut line.xy, squares(s[6], s[7]));
    }};
}

/// The 16-bit vertical pass in 16-bit `madd` lanes, 16 columns per step, two rows per `madd`
/// (the scale-0 8-bit method): samples offset by -2^15 into `i16` for the means; each square or
/// product split into its low and high 16 bits (`mullo`/`mulhi` of the interleaved rows), each
/// half offset likewise and filtered on its own, the offset `2^15 * sum(taps)` added back. Every
/// such sum is below 2^32 (taps summing to at most 2^16), so its wrapping `i32` value is exact,
/// and the scalar's 64-bit `(2^16 * hi + lo + sq_round) >> sq_shift`, kept to 32 bits, is
/// `(hi << (16 - sq_shift)) + ((lo + sq_round) >> sq_shift)` in wrapping 32-bit arithmetic (`lo
/// + sq_round` stays below 2^32). Requires [`madd_vertical_ok`] and the caller's length checks;
/// the last `w % 16` columns go to the scalar kernel.
#[target_feature(enable = "avx2,fma")]
fn stat_vertical_u16_madd<const PAIRS: usize, const DIS_ONLY: bool>(
    r: &[&[u16]],
    d: &[&[u16]],
    filt: &[u16],
    sh: StatShifts,
    w: usize,
    line: &mut StatLine,
    acc: &mut WideAcc,
) {
    let taps = filt.len();
    let pairs: [__m256i; PAIRS] = tap_pairs(filt);
    // Row indices of each pair (an odd last tap pairs with itself, times a zero tap).
    let rows = |i: usize| (2 * i, (2 * i + 1).min(taps - 1));
    let offset = madd_offset(filt);
    let flip = _mm256_set1_epi16(i16::MIN);
    let k = U16MaddOut::new(sh);
    let w16 = w / 16 * 16;
    for j in (0..w16).step_by(16) {
        let o = offset;
        // Sums of the interleaved lo (columns 0-3, 8-11) and hi lanes: means, then the low
        // and high halves of the three squares.
        let (mut mu1, mut mu2) = ((o, o), (o, o));
        let (mut xxl, mut xxh, mut yyl, mut yyh) = ((o, o), (o, o), (o, o), (o, o));
        let (mut xyl, mut xyh) = ((o, o), (o, o));
        for (i, &c) in pairs.iter().enumerate() {
            let (ka, kb) = rows(i);
            // SAFETY: j + 16 <= w16 <= w <= every row's length (checked by the caller); each
            // load reads 16 `u16` (32 bytes), unaligned.
            let (xa, xb, ya, yb) = unsafe {
                (
                    _mm256_loadu_si256(r[ka].as_ptr().add(j).cast()),
                    _mm256_loadu_si256(r[kb].as_ptr().add(j).cast()),
                    _mm256_loadu_si256(d[ka].as_ptr().add(j).cast()),
                    _mm256_loadu_si256(d[kb].as_ptr().add(j).cast()),
                )
            };
            // The two rows interleaved once; squares and products taken in that order.
            let (xl, xh) = (_mm256_unpacklo_epi16(xa, xb), _mm256_unpackhi_epi16(xa, xb));
            let (yl, yh) = (_mm256_unpacklo_epi16(ya, yb), _mm256_unpackhi_epi16(ya, yb));
            let add = |s: &mut (__m256i, __m256i), lo: __m256i, hi: __m256i| {
                let (lo, hi) = (_mm256_xor_si256(lo, flip), _mm256_xor_si256(hi, flip));
                s.0 = madd_acc(s.0, lo, c);
                s.1 = madd_acc(s.1, hi, c);
            };
            let (mlo, mhi) = (_mm256_mullo_epi16, _mm256_mulhi_epu16);
            if !DIS_ONLY {
                add(&mut mu1, xl, xh);
                add(&mut xxl, mlo(xl, xl), mlo(xh, xh));
                add(&mut xxh, mhi(xl, xl), mhi(xh, xh));
            }
            add(&mut mu2, yl, yh);
            add(&mut yyl, mlo(yl, yl), mlo(yh, yh));
            add(&mut yyh, mhi(yl, yl), mhi(yh, yh));
            add(&mut xyl, mlo(xl, yl), mlo(xh, yh));
            add(&mut xyh, mhi(xl, yl), mhi(xh, yh));
        }
        let sums = [mu1, mu2, xxl, xxh, yyl, yyh, xyl, xyh];
        store_u16_madd!(DIS_ONLY, line, j, &k, sums);
    }
    scalar::stat_vertical_u16_cols::<DIS_ONLY>(r, d, filt, sh, w16..w, line, acc);
}

/// Two output rows of [`stat_vertical_u16_avx2`] in one pass: `r` and `d` hold `taps + 1` rows,
/// `lines[0]` gets the statistic of rows `0..taps` and `lines[1]` that of rows `1..=taps`. On
/// the `madd` path (odd taps, every tap pair of either line summing below 2^16) each row pair is
/// loaded, interleaved, squared and multiplied once and weighed by both lines' taps, `(f[2i],
/// f[2i+1])` and `(f[2i-1], f[2i])` ([`odd_tap_pairs`]), with the sums of one pass
/// ([`stat_vertical_u16_madd`]'s), so the lines equal two calls'; otherwise two calls.
#[allow(clippy::too_many_arguments)]
#[target_feature(enable = "avx2,fma")]
fn stat_vertical_u16_x2_avx2<const DIS_ONLY: bool>(
    r: &[&[u16]],
    d: &[&[u16]],
    filt: &[u16],
    sh: StatShifts,
    w: usize,
    lines: [&mut StatLine; 2],
    acc: &mut WideAcc,
) {
    let taps = filt.len();
    assert!(r.len() == taps + 1 && d.len() == taps + 1);
    assert!(r.iter().chain(d).all(|row| row.len() >= w));
    let [l0, l1] = lines;
    let madd = madd_vertical_x2_ok(filt, sh) && w >= 16;
    // The `madd` path, specialised per tap-pair count (libvmaf's 17, 9, 5 and 3 taps).
    let done = madd && matches!(taps.div_ceil(2), 2 | 3 | 5 | 9);
    if done {
        let lines = [&mut *l0, &mut *l1];
        match taps.div_ceil(2) {
            9 => stat_vertical_u16_x2_madd::<9, DIS_ONLY>(r, d, filt, sh, w, lines),
            5 => stat_vertical_u16_x2_madd::<5, DIS_ONLY>(r, d, filt, sh, w, lines),
            3 => stat_vertical_u16_x2_madd::<3, DIS_ONLY>(r, d, filt, sh, w, lines),
            _ => stat_vertical_u16_x2_madd::<2, DIS_ONLY>(r, d, filt, sh, w, lines),
        }
    }
    // The columns the `madd` path left (the last `w % 16`) by the scalar kernel, or the whole
    // rows by the one-row pass, line by line.
    let (r0, d0) = (&r[..taps], &d[..taps]);
    if done {
        let cols = w / 16 * 16..w;
        scalar::stat_vertical_u16_cols::<DIS_ONLY>(r0, d0, filt, sh, cols.clone(), l0, acc);
        scalar::stat_vertical_u16_cols::<DIS_ONLY>(&r[1..], &d[1..], filt, sh, cols, l1, acc);
    } else {
        stat_vertical_u16_avx2::<DIS_ONLY>(r0, d0, filt, sh, w, l0, acc);
        stat_vertical_u16_avx2::<DIS_ONLY>(&r[1..], &d[1..], filt, sh, w, l1, acc);
    }
}

/// The `madd` path of [`stat_vertical_u16_x2_avx2`] for columns `0 .. w / 16 * 16`, 16 a step.
/// Requires its conditions and length checks.
#[target_feature(enable = "avx2,fma")]
fn stat_vertical_u16_x2_madd<const PAIRS: usize, const DIS_ONLY: bool>(
    r: &[&[u16]],
    d: &[&[u16]],
    filt: &[u16],
    sh: StatShifts,
    w: usize,
    lines: [&mut StatLine; 2],
) {
    let (even, odd): ([__m256i; PAIRS], [__m256i; PAIRS]) = (tap_pairs(filt), odd_tap_pairs(filt));
    let offset = madd_offset(filt);
    let flip = _mm256_set1_epi16(i16::MIN);
    let k = U16MaddOut::new(sh);
    let w16 = w / 16 * 16;
    let [l0, l1] = lines;
    for j in (0..w16).step_by(16) {
        let o = offset;
        // Per line, the sums of the interleaved lo (columns 0-3, 8-11) and hi lanes: means,
        // then the low and high halves of the three squares.
        let mut sums = [[(o, o); 8]; 2];
        for i in 0..PAIRS {
            let c = [even[i], odd[i]];
            let (ka, kb) = (2 * i, 2 * i + 1);
            // SAFETY: j + 16 <= w16 <= w <= every row's length (checked by the caller); each
            // load reads 16 `u16` (32 bytes), unaligned.
            let (xa, xb, ya, yb) = unsafe {
                (
                    _mm256_loadu_si256(r[ka].as_ptr().add(j).cast()),
                    _mm256_loadu_si256(r[kb].as_ptr().add(j).cast()),
                    _mm256_loadu_si256(d[ka].as_ptr().add(j).cast()),
                    _mm256_loadu_si256(d[kb].as_ptr().add(j).cast()),
                )
            };
            let (xl, xh) = (_mm256_unpacklo_epi16(xa, xb), _mm256_unpackhi_epi16(xa, xb));
            let (yl, yh) = (_mm256_unpacklo_epi16(ya, yb), _mm256_unpackhi_epi16(ya, yb));
            let (mlo, mhi) = (_mm256_mullo_epi16, _mm256_mulhi_epu16);
            // Each quantity's interleaved values, offset once, weighed by both lines' taps.
            let mut add = |q: usize, lo: __m256i, hi: __m256i| {
                let (lo, hi) = (_mm256_xor_si256(lo, flip), _mm256_xor_si256(hi, flip));
                for (s, &c) in sums.iter_mut().zip(&c) {
                    s[q].0 = madd_acc(s[q].0, lo, c);
                    s[q].1 = madd_acc(s[q].1, hi, c);
                }
            };
            if !DIS_ONLY {
                add(0, xl, xh);
                add(2, mlo(xl, xl), mlo(xh, xh));
                add(3, mhi(xl, xl), mhi(xh, xh));
            }
            add(1, yl, yh);
            add(4, mlo(yl, yl), mlo(yh, yh));
            add(5, mhi(yl, yl), mhi(yh, yh));
            add(6, mlo(xl, yl), mlo(xh, yh));
            add(7, mhi(xl, yl), mhi(xh, yh));
        }
        let [s0, s1] = sums;
        store_u16_madd!(DIS_ONLY, &mut *l0, j, &k, s0);
        store_u16_madd!(DIS_ONLY, &mut *l1, j, &k, s1);
    }
}

/// What a horizontal pass does with the reference side of its pixels (ladder scoring,
/// [`super::SplitKernels`]).
enum RefSide<'a> {
    /// Everything from the five lines (a rendition scored alone).
    Own,
    /// A split pass: [`SplitRow::Store`] computes everything and writes each pixel's filtered
    /// mean `mu1` and `sigma1_sq` to the row (in the pass's own order: per 16 columns of the
    /// `madd` path the 8 even then the 8 odd ones, elsewhere column `j` at `j`);
    /// [`SplitRow::Load`] reads them instead of the lines' `mu1` and `xx` and adds only the
    /// sums that depend on the distorted picture.
    Split(SplitRow<'a>),
}

impl RefSide<'_> {
    /// Checks that a row holds `w` columns rounded up to 32.
    fn fits(&self, w: usize) -> bool {
        let n = w.div_ceil(32) * 32;
        match self {
            RefSide::Own => true,
            RefSide::Split(SplitRow::Store(r)) => r.mu1.len() >= n && r.s1.len() >= n,
            RefSide::Split(SplitRow::Load(r)) => r.mu1.len() >= n && r.s1.len() >= n,
        }
    }

    /// Whether the lines' reference side (`mu1`, `xx`) is read.
    fn reads_reference_lines(&self) -> bool {
        !matches!(self, RefSide::Split(SplitRow::Load(_)))
    }

    /// Adds `N` groups of 8 pixels' terms, group `i` at row position `at[i]`, storing or
    /// loading their reference side as the mode says.
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    fn add<const N: usize>(
        &mut self,
        at: [usize; N],
        terms: &mut TermSums<'_>,
        g: [Stats8; N],
        sums: &mut VifSums,
    ) {
        match self {
            RefSide::Own => {
                terms.add(g, sums);
            }
            RefSide::Split(SplitRow::Store(row)) => {
                let s1 = terms.add(g, sums);
                for i in 0..N {
                    // SAFETY: `fits` checked that the row holds at + 8 values (at + 8 <= w
                    // rounded up to 32); the stores are unaligned.
                    unsafe {
                        _mm256_storeu_si256(row.mu1.as_mut_ptr().add(at[i]).cast(), g[i].mu1);
                        _mm256_storeu_si256(row.s1.as_mut_ptr().add(at[i]).cast(), s1[i]);
                    }
                }
            }
            RefSide::Split(SplitRow::Load(row)) => {
                let (p_mu1, p_s1) = (row.mu1.as_ptr(), row.s1.as_ptr());
                // SAFETY: as for the stores above; the loads are unaligned.
                let (mu1, s1) = unsafe {
                    (
                        from_fn(|i| _mm256_loadu_si256(p_mu1.add(at[i]).cast())),
                        from_fn(|i| _mm256_loadu_si256(p_s1.add(at[i]).cast())),
                    )
                };
                terms.add_with(mu1, s1, g, false, sums);
            }
        }
    }
}

/// One group of 8 pixels' filtered statistics, as [`TermSums::add`] takes them: the means (Q16
/// sums) and the squares rounded by 16 bits (kept to 32 bits).
#[derive(Clone, Copy)]
struct Stats8 {
    mu1: __m256i,
    mu2: __m256i,
    xx: __m256i,
    yy: __m256i,
    xy: __m256i,
}

/// The horizontal pass with `side`'s handling of the reference side; `false` (with the sums
/// partial) where a split pass cannot run: a gain limit outside the vector log path's range, a
/// row too short, or means not 16-bit on the `madd` path (which the vertical passes never
/// produce). A split pass picks its path from the taps and the width only, so the pass that
/// writes a row and those that read it agree on its order.
#[allow(clippy::too_many_arguments)]
#[target_feature(enable = "avx2,fma")]
fn stat_horizontal_avx2(
    line: &StatLine,
    filt: &[u16],
    w: usize,
    gain_limit: f64,
    log2: &[u16; LOG2_TABLE_LEN],
    acc: &mut WideAcc,
    sums: &mut VifSums,
    side: &mut RefSide<'_>,
) -> bool {
    let mut terms = TermSums::new(gain_limit, log2);
    let own = matches!(side, RefSide::Own);
    if !(own || (terms.vector_log && side.fits(w))) {
        return false;
    }
    let madd = madd_taps_ok(filt) && w >= 16;
    let l16 = &mut acc.narrow;
    // The 16-bit path, specialised per tap-pair count (libvmaf's 17, 9 and 5 taps) so its tap
    // loop unrolls.
    let done = match (madd, filt.len().div_ceil(2)) {
        (true, 9) => stat_horizontal_madd::<9>(line, filt, w, l16, &mut terms, sums, side),
        (true, 5) => stat_horizontal_madd::<5>(line, filt, w, l16, &mut terms, sums, side),
        (true, 3) => stat_horizontal_madd::<3>(line, filt, w, l16, &mut terms, sums, side),
        _ => stat_horizontal_wide(line, filt, w, &mut terms, sums, side),
    };
    terms.flush(sums);
    // The `madd` path stops short only at means that are not 16-bit: the scalar finishes an own
    // pass; a split one cannot change its columns' order mid-row.
    if madd && done < w / 16 * 16 && !own {
        return false;
    }
    let cols = done..w;
    match side {
        RefSide::Own => {
            scalar::stat_horizontal_cols(line, filt, cols, gain_limit, log2, acc, sums);
        }
        RefSide::Split(row) => {
            scalar::stat_horizontal_cols_split(line, filt, cols, gain_limit, log2, acc, sums, row);
        }
    }
    true
}

/// The VIF terms of 8 pixels at a time from their filtered statistics, accumulated in vector
/// lanes until [`TermSums::flush`] (integer sums: the order is free).
struct TermSums<'a> {
    gain_limit: f64,
    log2: &'a [u16; LOG2_TABLE_LEN],
    /// Whether the vector log path is exact for this gain limit (see `LogTerms`).
    vector_log: bool,
    /// Per-lane sums of the non-log terms (64-bit lanes) and their count; the latest ones in
    /// 32-bit lanes (`non_log_lo_32`: the terms' low 16 bits, `non_log_hi_32`: the bits above,
    /// `non_log_count_32`: the count), moved with the log terms' (see below).
    non_log: __m256i,
    non_log_count: i64,
    non_log_lo_32: __m256i,
    non_log_hi_32: __m256i,
    non_log_count_32: __m256i,
    /// Per-lane sums of the log terms (64-bit lanes), and the latest ones in 32-bit lanes
    /// (`*_32`, moved into the 64-bit sums every [`TermSums::WIDEN_EVERY`] vectors).
    den_log: __m256i,
    num_log: __m256i,
    den_log_32: __m256i,
    num_log_32: __m256i,
    /// Vectors added to the 32-bit lanes since they were last moved.
    pending: u32,
    /// The arithmetic `log2` of the standard table (`None` for another table: every look-up
    /// then gathers).
    fast: Option<FastLog2>,
}

impl<'a> TermSums<'a> {
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    fn new(gain_limit: f64, log2: &'a [u16; LOG2_TABLE_LEN]) -> Self {
        let z = _mm256_setzero_si256();
        TermSums {
            gain_limit,
            log2,
            vector_log: (0.0..=LogTerms::MAX_GAIN_LIMIT).contains(&gain_limit),
            non_log: z,
            non_log_count: 0,
            non_log_lo_32: z,
            non_log_hi_32: z,
            non_log_count_32: z,
            den_log: z,
            num_log: z,
            den_log_32: z,
            num_log_32: z,
            pending: 0,
            fast: std::ptr::eq(log2, tables::log2_table()).then(|| FastLog2::new()),
        }
    }

    /// Vectors of terms the 32-bit lane sums take before they move to the 64-bit ones: a
    /// lane's `den_log` term is in `[0, 15 * 2048]` and its `num_log` term in `[0, 35 * 2048]`
    /// (`log2` of values in `[2^17, 2^52)`), a non-log term's low 16 bits below 2^16 and the
    /// bits above below 2^15 (the term is below 2^31), so 8192 of them stay below 2^31.
    const WIDEN_EVERY: u32 = 8192;

    /// Moves the 32-bit lane sums into the 64-bit ones.
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    fn widen(&mut self) {
        let wide = |v: __m256i| {
            _mm256_add_epi64(
                _mm256_cvtepi32_epi64(_mm256_castsi256_si128(v)),
                _mm256_cvtepi32_epi64(_mm256_extracti128_si256::<1>(v)),
            )
        };
        self.den_log = _mm256_add_epi64(self.den_log, wide(self.den_log_32));
        self.num_log = _mm256_add_epi64(self.num_log, wide(self.num_log_32));
        let non_log = _mm256_add_epi64(
            _mm256_slli_epi64::<16>(wide(self.non_log_hi_32)),
            wide(self.non_log_lo_32),
        );
        self.non_log = _mm256_add_epi64(self.non_log, non_log);
        self.non_log_count += sum_i64x4(wide(self.non_log_count_32));
        let z = _mm256_setzero_si256();
        (self.den_log_32, self.num_log_32, self.pending) = (z, z, 0);
        (
            self.non_log_lo_32,
            self.non_log_hi_32,
            self.non_log_count_32,
        ) = (z, z, z);
    }

    /// Adds the lane sums to `sums`.
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    fn flush(&mut self, sums: &mut VifSums) {
        self.widen();
        sums.num_non_log += sum_i64x4(self.non_log);
        sums.den_non_log += self.non_log_count;
        sums.den_log += sum_i64x4(self.den_log);
        sums.num_log += sum_i64x4(self.num_log);
    }

    /// Adds the terms of `N` groups of 8 pixels: `mu1`, `mu2` are the filtered means (Q16
    /// sums, `u32`), `xx`, `yy`, `xy` the filtered squares already rounded by 16 bits (kept to
    /// 32 bits), as [`scalar::stat_horizontal_cols`] forms them. Pixels whose log term goes lane
    /// by lane (gain limit out of the vector range) add to `sums` directly. Returns each
    /// group's `sigma1_sq`.
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    fn add<const N: usize>(&mut self, g: [Stats8; N], sums: &mut VifSums) -> [__m256i; N] {
        let sigma1_sq = from_fn(|i| _mm256_sub_epi32(g[i].xx, rsh32(g[i].mu1, g[i].mu1)));
        self.add_with(g.map(|s| s.mu1), sigma1_sq, g, true, sums);
        sigma1_sq
    }

    /// [`TermSums::add`] from the reference side's `mu1` and `sigma1_sq` (`g`'s `mu1` and `xx`
    /// are not read); with `den` false only the sums that depend on the distorted picture
    /// (`num_log`, `num_non_log`) are added (ladder scoring: the reference side's are shared),
    /// which needs the vector log path. The `N` groups go through each step together, so that
    /// their independent dependency chains overlap (measured faster than one group at a time).
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    fn add_with<const N: usize>(
        &mut self,
        mu1: [__m256i; N],
        sigma1_sq: [__m256i; N],
        g: [Stats8; N],
        den: bool,
        sums: &mut VifSums,
    ) {
        let nsq = _mm256_set1_epi32(SIGMA_NSQ);
        let z = _mm256_setzero_si256();
        let sigma2_sq: [__m256i; N] =
            from_fn(|i| _mm256_sub_epi32(g[i].yy, rsh32(g[i].mu2, g[i].mu2)));
        let sigma12: [__m256i; N] = from_fn(|i| _mm256_sub_epi32(g[i].xy, rsh32(mu1[i], g[i].mu2)));
        if self.pending as usize + N > Self::WIDEN_EVERY as usize {
            self.widen();
        }
        self.pending += N as u32;
        // Below the noise floor: add max(sigma2_sq, 0) and count (vif_term's linear branch),
        // in 32-bit lanes (the count: less the all-ones lanes).
        let lin: [__m256i; N] = from_fn(|i| _mm256_cmpgt_epi32(nsq, sigma1_sq[i]));
        let s2: [__m256i; N] = from_fn(|i| _mm256_max_epi32(sigma2_sq[i], z));
        // Most groups of textured pictures have no pixel below the floor: one test skips them.
        let any_lin = lin[1..].iter().fold(lin[0], |a, &b| _mm256_or_si256(a, b));
        if _mm256_testz_si256(any_lin, any_lin) == 0 {
            for i in 0..N {
                let add = _mm256_and_si256(lin[i], s2[i]);
                let low = _mm256_and_si256(add, _mm256_set1_epi32(0xffff));
                self.non_log_lo_32 = _mm256_add_epi32(self.non_log_lo_32, low);
                self.non_log_hi_32 =
                    _mm256_add_epi32(self.non_log_hi_32, _mm256_srli_epi32::<16>(add));
                if den {
                    self.non_log_count_32 = _mm256_sub_epi32(self.non_log_count_32, lin[i]);
                }
            }
            let all_lin = lin[1..].iter().fold(lin[0], |a, &b| _mm256_and_si256(a, b));
            if _mm256_testc_si256(all_lin, _mm256_cmpeq_epi32(z, z)) != 0 {
                return;
            }
        }
        // The log branch: 4 lanes at a time in double, or lane by lane where the gain limit
        // is outside the range the vector conversion handles exactly.
        if self.vector_log {
            let t = LogTerms {
                log2: self.log2,
                fast: self.fast.as_ref(),
                gain_limit: _mm256_set1_pd(self.gain_limit),
            };
            let cond: [__m256i; N] = from_fn(|i| {
                _mm256_andnot_si256(
                    lin[i],
                    _mm256_and_si256(
                        _mm256_cmpgt_epi32(sigma12[i], z),
                        _mm256_cmpgt_epi32(s2[i], z),
                    ),
                )
            });
            let (d, n) = t.terms(sigma1_sq, s2, sigma12, lin, cond, den);
            for i in 0..N {
                if den {
                    self.den_log_32 = _mm256_add_epi32(self.den_log_32, d[i]);
                }
                self.num_log_32 = _mm256_add_epi32(self.num_log_32, n[i]);
            }
        } else {
            debug_assert!(den, "the split passes need the vector log path");
            for i in 0..N {
                let (mut s1, mut s2, mut s12) = ([0u32; 8], [0u32; 8], [0u32; 8]);
                store_u32x8(&mut s1, sigma1_sq[i]);
                store_u32x8(&mut s2, sigma2_sq[i]);
                store_u32x8(&mut s12, sigma12[i]);
                let stats = [&s1[..], &s2[..], &s12[..]];
                let log_lanes = !_mm256_movemask_ps(_mm256_castsi256_ps(lin[i])) as u32 & 0xff;
                scalar::vif_term_lanes(stats, log_lanes, self.gain_limit, self.log2, sums);
            }
        }
    }
}

/// The high 32 bits of the 4 `double` lanes of `a`, then those of `b`, as 8 `u32` lanes.
#[inline]
#[target_feature(enable = "avx2,fma")]
fn high_words(a: __m256d, b: __m256d) -> __m256i {
    // Per 128-bit half: a's odd words, then b's; the qword permute puts the halves in order.
    let s = _mm256_shuffle_ps::<0b11_01_11_01>(_mm256_castpd_ps(a), _mm256_castpd_ps(b));
    _mm256_permute4x64_epi64::<0b11_01_10_00>(_mm256_castps_si256(s))
}

/// Lanes `4h .. 4h + 4` of `v` (`h` 0 or 1).
#[inline]
#[target_feature(enable = "avx2,fma")]
fn half128(v: __m256i, h: usize) -> __m128i {
    if h == 1 {
        _mm256_extracti128_si256::<1>(v)
    } else {
        _mm256_castsi256_si128(v)
    }
}

/// `(a * b + 2^31) >> 32` of the `u32` lanes.
#[inline]
#[target_feature(enable = "avx2,fma")]
fn rsh32(a: __m256i, b: __m256i) -> __m256i {
    let round32 = _mm256_set1_epi64x(1 << 31);
    let (e, o) = mul_wide(a, b);
    // The odd lanes' results are the high halves of their rounded products, in place.
    _mm256_blend_epi32::<0b1010_1010>(
        odd_to_even(_mm256_add_epi64(e, round32)),
        _mm256_add_epi64(o, round32),
    )
}

/// The horizontal filter with 64-bit sums of the squares (even/odd lane pairs), 8 columns per
/// step, for any taps and line values. Returns the columns done (`0 .. w / 8 * 8`).
#[target_feature(enable = "avx2,fma")]
fn stat_horizontal_wide(
    line: &StatLine,
    filt: &[u16],
    w: usize,
    terms: &mut TermSums<'_>,
    sums: &mut VifSums,
    side: &mut RefSide<'_>,
) -> usize {
    let w8 = w / 8 * 8;
    let start = PAD - filt.len() / 2;
    // The vector loop reads `start + k + j .. + 8` for k < taps, j + 8 <= w8.
    let end = start + filt.len() - 1 + w8;
    let bufs = [&line.mu1, &line.mu2, &line.xx, &line.yy, &line.xy];
    assert!(filt.len() <= 2 * PAD + 1 && bufs.iter().all(|b| b.len() >= end));
    let [p_mu1, p_mu2, p_xx, p_yy, p_xy] = bufs.map(|b| b.as_ptr());
    let round16 = _mm256_set1_epi64x(1 << 15);
    let z = _mm256_setzero_si256();
    // `(acc + 2^15) >> 16` of 64-bit sums, kept to 32 bits.
    let rsh16 = |(e, o): (__m256i, __m256i)| {
        merge_even_odd(
            _mm256_srli_epi64::<16>(_mm256_add_epi64(e, round16)),
            _mm256_srli_epi64::<16>(_mm256_add_epi64(o, round16)),
        )
    };
    for j in (0..w8).step_by(8) {
        let (mut mu1, mut mu2) = (z, z);
        let (mut xx, mut yy, mut xy) = ((z, z), (z, z), (z, z));
        for (k, &f) in filt.iter().enumerate() {
            let at = start + k + j;
            let f = _mm256_set1_epi32(f as i32);
            // SAFETY: at + 8 <= end <= every buffer's length (checked above).
            let (m1, m2, vxx, vyy, vxy) = unsafe {
                (
                    load_u32x8(p_mu1.add(at)),
                    load_u32x8(p_mu2.add(at)),
                    load_u32x8(p_xx.add(at)),
                    load_u32x8(p_yy.add(at)),
                    load_u32x8(p_xy.add(at)),
                )
            };
            mu1 = _mm256_add_epi32(mu1, _mm256_mullo_epi32(f, m1));
            mu2 = _mm256_add_epi32(mu2, _mm256_mullo_epi32(f, m2));
            add_wide(&mut xx, mul_wide(vxx, f));
            add_wide(&mut yy, mul_wide(vyy, f));
            add_wide(&mut xy, mul_wide(vxy, f));
        }
        let g = Stats8 {
            mu1,
            mu2,
            xx: rsh16(xx),
            yy: rsh16(yy),
            xy: rsh16(xy),
        };
        side.add([j], terms, [g], sums);
    }
    w8
}

/// Output columns per chunk of [`stat_horizontal_madd`] (its 16-bit line copies are
/// [`WideAcc::narrow`]).
const MADD_CHUNK: usize = 256;
/// Length of one 16-bit line copy: a chunk plus the filter reach and one spare value.
const MADD_LINE: usize = MADD_CHUNK + 2 * PAD + 2;
const _: () = assert!(MADD_LINE <= NARROW_LINE);

/// Whether [`stat_horizontal_madd`] takes these taps: every tap and every sum of two taps
/// below 2^15 and 2^16 (so they are `i16` multipliers and no `_mm256_madd_epi16` pair sum of
/// offset samples overflows), the taps summing to at most 2^16 (so every filtered 16-bit half
/// fits 32 bits), an odd count within the padding.
fn madd_taps_ok(filt: &[u16]) -> bool {
    filt.iter().all(|&f| f < 1 << 15)
        && filt
            .windows(2)
            .all(|p| (p[0] as u32 + p[1] as u32) < 1 << 16)
        && filt.iter().map(|&f| f as u32).sum::<u32>() <= 1 << 16
        && filt.len() % 2 == 1
        && filt.len() <= 2 * PAD + 1
}

/// The horizontal filter in 16-bit lanes: the line values (means, and the low and high 16 bits of
/// the squares) offset by -2^15 into `i16`, two taps per `_mm256_madd_epi16`, the offset added
/// back as `2^15 * sum(taps)`. Every filtered 16-bit half is below 2^32, so the wrapping `i32`
/// sums equal it; the squares' 64-bit sums are `hi * 2^16 + lo`, whose `(+ 2^15) >> 16` is
/// `hi + ((lo + 2^15) >> 16)` in 32 bits (`lo <= 65535 * 2^16`, so `lo + 2^15` stays below 2^32;
/// the `lo` sums start from the rounding constant). One `madd` of a window of value pairs gives
/// 8 even output columns with the taps paired `(2i, 2i + 1)`, and another of the same window 8
/// odd ones with them paired `(2i - 1, 2i)`; the VIF terms are formed on those 8-column sets
/// (order-free integer sums), two 16-column blocks at a time where the chunk has them. Returns the
/// columns done: `0 .. w / 16 * 16`, or fewer where a chunk's means are not all below 2^16 (the
/// vertical passes never give such means; the check is fused into the copies): the pass stops
/// before that chunk. Requires [`madd_taps_ok`]; `narrow`
/// is the scratch of [`WideAcc::narrow`] (its contents on entry do not matter). A `Load` pass
/// filters only the distorted side's copies.
#[target_feature(enable = "avx2,fma")]
fn stat_horizontal_madd<const PAIRS: usize>(
    line: &StatLine,
    filt: &[u16],
    w: usize,
    narrow: &mut [i16],
    terms: &mut TermSums<'_>,
    sums: &mut VifSums,
    side: &mut RefSide<'_>,
) -> usize {
    let reference = side.reads_reference_lines();
    let taps = filt.len();
    let start = PAD - taps / 2;
    let w16 = w / 16 * 16;
    // The copies read line values start .. start + w16 + taps - 1.
    let bufs = [&line.mu1, &line.mu2, &line.xx, &line.yy, &line.xy];
    assert!(taps <= 2 * PAD + 1 && bufs.iter().all(|b| b.len() >= start + w16 + taps - 1));
    assert_eq!(taps.div_ceil(2), PAIRS);
    let (pairs, odd): ([__m256i; PAIRS], [__m256i; PAIRS]) = (tap_pairs(filt), odd_tap_pairs(filt));
    let offset = madd_offset(filt);
    let flip = _mm256_set1_epi16(i16::MIN);
    let low16 = _mm256_set1_epi32(0xffff);
    // The low halves' sums start from the squares' rounding constant 2^15 as well.
    let offset_lo = _mm256_add_epi32(offset, _mm256_set1_epi32(1 << 15));
    let [p_mu1, p_mu2, p_xx, p_yy, p_xy] = bufs.map(|b| b.as_ptr());
    // 16-bit copies: mu1, mu2, xx lo/hi, yy lo/hi, xy lo/hi.
    // Fixed-size views, so the copies' indexing needs no bounds checks the stack arrays they
    // replace did not.
    let mut l16: [&mut [i16; MADD_LINE]; NARROW_COPIES] = {
        let mut it = narrow.chunks_exact_mut(NARROW_LINE);
        std::array::from_fn(|_| {
            let line = it.next().expect("WideAcc::narrow holds 8 line copies");
            (&mut line[..MADD_LINE])
                .try_into()
                .expect("MADD_LINE <= NARROW_LINE")
        })
    };
    for c0 in (0..w16).step_by(MADD_CHUNK) {
        let cn = MADD_CHUNK.min(w16 - c0);
        // Values 0 .. n - 1 from the line; value n - 1 is only ever multiplied by a zero tap.
        let n = cn + taps;
        let mut i = 0;
        // The means' bits, to check that they are 16-bit (the packs saturate).
        let mut means = _mm256_setzero_si256();
        let mut means_tail = 0u32;
        while i + 16 < n {
            let at = start + c0 + i;
            // Values 0-3 and 8-11 in the first vector, 4-7 and 12-15 in the second: the pack
            // (per 128-bit half) then leaves the 16 in order, with no permute on the shuffle
            // port (the inserts of the high halves take any vector port).
            // SAFETY: the four 4-value loads read at .. at + 16 <= start + c0 + n - 1 <=
            // start + w16 + taps - 1 <= every line's length (checked above).
            let v = unsafe {
                [p_mu1, p_mu2, p_xx, p_yy, p_xy].map(|p| {
                    let half = |k: usize| _mm_loadu_si128(p.add(at + k).cast());
                    (
                        _mm256_inserti128_si256::<1>(_mm256_castsi128_si256(half(0)), half(8)),
                        _mm256_inserti128_si256::<1>(_mm256_castsi128_si256(half(4)), half(12)),
                    )
                })
            };
            // Values below 2^16 pack exactly (unsigned saturation); -2^15 offset by flipping the
            // top bit.
            let pack = |a: __m256i, b: __m256i| _mm256_xor_si256(_mm256_packus_epi32(a, b), flip);
            let lo = |x: __m256i| _mm256_and_si256(x, low16);
            let hi = |x: __m256i| _mm256_srli_epi32::<16>(x);
            means = _mm256_or_si256(means, _mm256_or_si256(v[1].0, v[1].1));
            if reference {
                means = _mm256_or_si256(means, _mm256_or_si256(v[0].0, v[0].1));
            }
            let out = [
                pack(v[0].0, v[0].1),
                pack(v[1].0, v[1].1),
                pack(lo(v[2].0), lo(v[2].1)),
                pack(hi(v[2].0), hi(v[2].1)),
                pack(lo(v[3].0), lo(v[3].1)),
                pack(hi(v[3].0), hi(v[3].1)),
                pack(lo(v[4].0), lo(v[4].1)),
                pack(hi(v[4].0), hi(v[4].1)),
            ];
            for (d, o) in l16.iter_mut().zip(out) {
                let d = &mut d[i..i + 16];
                // SAFETY: `d` holds 16 `i16` (32 bytes); the store is unaligned.
                unsafe { _mm256_storeu_si256(d.as_mut_ptr().cast(), o) };
            }
            i += 16;
        }
        for i in i..n - 1 {
            let at = start + c0 + i;
            means_tail |= line.mu2[at] | if reference { line.mu1[at] } else { 0 };
            let (xx, yy, xy) = (line.xx[at], line.yy[at], line.xy[at]);
            let v = [
                line.mu1[at],
                line.mu2[at],
                xx & 0xffff,
                xx >> 16,
                yy & 0xffff,
                yy >> 16,
                xy & 0xffff,
                xy >> 16,
            ];
            for (d, v) in l16.iter_mut().zip(v) {
                d[i] = (v as u16 ^ 0x8000) as i16;
            }
        }
        for d in l16.iter_mut() {
            d[n - 1] = 0;
        }
        if _mm256_testz_si256(means, _mm256_set1_epi32(!0xffff)) == 0 || means_tail >= 1 << 16 {
            return c0;
        }
        // The even and odd columns' statistics of jj .. jj + 16. A macro, not a closure: LLVM
        // left the closure out of line, its ten result vectors passed through the stack.
        macro_rules! block {
            ($jj:expr) => {{
                let jj: usize = $jj;
                // Filtered sums of copy q for the even (.0) and odd (.1) columns of jj .. jj + 16,
                // plus 2^15 for the squares' low halves (copies 2, 4 and 6).
                let filtered = |q: usize| {
                    let base = l16[q].as_ptr();
                    let init = if matches!(q, 2 | 4 | 6) {
                        offset_lo
                    } else {
                        offset
                    };
                    let (mut e, mut o) = (init, init);
                    // Window i (values jj + 2i .. jj + 2i + 16) holds values jj + 2l + 2i and
                    // jj + 2l + 2i + 1 in lane l, which even column jj + 2l weighs with taps
                    // (2i, 2i + 1) and odd column jj + 2l + 1 with taps (2i - 1, 2i).
                    for i in 0..PAIRS {
                        // SAFETY: the highest value read is jj + 2i + 15
                        // <= cn - 16 + taps - 1 + 15 < cn + taps = n <= MADD_LINE (jj + 16 <= cn,
                        // 2i <= taps - 1), all set above.
                        let win = unsafe { load_i16x16(base.add(jj + 2 * i)) };
                        e = madd_acc(e, win, pairs[i]);
                        o = madd_acc(o, win, odd[i]);
                    }
                    (e, o)
                };
                // (hi * 2^16 + lo + 2^15) >> 16, kept to 32 bits (`lo` holds the 2^15).
                let sq =
                    |lo: __m256i, hi: __m256i| _mm256_add_epi32(hi, _mm256_srli_epi32::<16>(lo));
                let z = _mm256_setzero_si256();
                let (m1, (xl, xh)) = if reference {
                    (filtered(0), (filtered(2), filtered(3)))
                } else {
                    ((z, z), ((z, z), (z, z)))
                };
                let m2 = filtered(1);
                let (yl, yh) = (filtered(4), filtered(5));
                let (pl, ph) = (filtered(6), filtered(7));
                let even = Stats8 {
                    mu1: m1.0,
                    mu2: m2.0,
                    xx: sq(xl.0, xh.0),
                    yy: sq(yl.0, yh.0),
                    xy: sq(pl.0, ph.0),
                };
                let odd = Stats8 {
                    mu1: m1.1,
                    mu2: m2.1,
                    xx: sq(xl.1, xh.1),
                    yy: sq(yl.1, yh.1),
                    xy: sq(pl.1, ph.1),
                };
                [even, odd]
            }};
        }
        // Two blocks' terms at a time where the chunk has them: four independent groups in
        // flight (measured faster than two).
        let mut jj = 0;
        while jj < cn {
            let at = c0 + jj;
            if jj + 16 < cn {
                let [a, b] = block!(jj);
                let [c, d] = block!(jj + 16);
                side.add([at, at + 8, at + 16, at + 24], terms, [a, b, c, d], sums);
                jj += 32;
            } else {
                side.add([at, at + 8], terms, block!(jj), sums);
                jj += 16;
            }
        }
    }
    w16
}

/// 16 `i16`.
///
/// # Safety
/// `p` must be valid for reading 16 `i16`.
#[inline]
#[target_feature(enable = "avx2,fma")]
unsafe fn load_i16x16(p: *const i16) -> __m256i {
    // SAFETY: the caller guarantees 32 readable bytes; the load is unaligned.
    unsafe { _mm256_loadu_si256(p.cast()) }
}

/// Sum of the four `i64` lanes.
#[inline]
#[target_feature(enable = "avx2,fma")]
fn sum_i64x4(v: __m256i) -> i64 {
    let mut l = [0i64; 4];
    // SAFETY: `l` holds 4 `i64` (32 bytes); the store is unaligned.
    unsafe { _mm256_storeu_si256(l.as_mut_ptr().cast(), v) };
    l.iter().fold(0i64, |s, &x| s.wrapping_add(x))
}

/// libvmaf's `log2_64` of 8 integers per group held exactly in `double`, given as the
/// `double`s' high words (as [`high_words`] gives them; each value in `[2^15, 2^53)`), in `m`,
/// plus `LOG2_F64_BIAS` (its tests' constant): `table[v >> k] + 2048 * k` with
/// `k = floor(log2(v)) - 15`, as `i32` lanes; other lanes are garbage. Everything comes from the
/// high word: its exponent is `k + 1023 + 15`, and the 15 fraction bits of `v >> k` below its
/// leading one sit at bits 5..20 (the `f32` of the index is those bits under the exponent of
/// 2^15; its segment, the top three). A macro, not a method: LLVM left the method out of line,
/// passing its vectors through the stack.
macro_rules! log2_high {
    ($t:expr, $n:expr, $hi:expr, $m:expr) => {{
        let hi: [__m256i; $n] = $hi;
        let idx_f: [__m256; $n] = from_fn(|i| {
            let frac =
                _mm256_and_si256(_mm256_slli_epi32::<3>(hi[i]), _mm256_set1_epi32(0x7f_ff00));
            _mm256_castsi256_ps(_mm256_or_si256(frac, _mm256_set1_epi32(0x4700_0000)))
        });
        let seg: [__m256i; $n] = from_fn(|i| _mm256_srli_epi32::<17>(hi[i]));
        let e = $t.lookup(idx_f, seg, $m);
        // 2048 times the exponent: 2048 * (k + 1038), the constant part in LOG2_F64_BIAS.
        let r: [__m256i; $n] = from_fn(|i| {
            _mm256_add_epi32(
                e[i],
                _mm256_slli_epi32::<11>(_mm256_srli_epi32::<20>(hi[i])),
            )
        });
        r
    }};
}

/// What [`LogTerms::log2_u32`] adds to libvmaf's `log2_32`: the look-up's bias
/// ([`LogTerms::lookup`]).
const LOG2_U32_BIAS: i32 = tables::LOG2_FAST_BIAS - LOG2_COMPACT_BASE as i32;

/// What [`log2_high!`] adds to libvmaf's `log2_64`: the look-up's bias and 2048 times the
/// exponent's `1023 + 15`. (The terms' differences of two look-ups cancel it.)
#[cfg(test)]
const LOG2_F64_BIAS: i32 = LOG2_U32_BIAS + 2048 * (1023 + 15);

/// The log branch of [`scalar::vif_term`] for `N` groups of 8 lanes, in the same `double`
/// operations (division, products and difference in the scalar's order, no fused multiply-add;
/// 4 lanes at a time), the same truncations (toward zero, kept in `double` where the value is an
/// integer below 2^53) and the same table entries.
struct LogTerms<'a> {
    log2: &'a [u16; LOG2_TABLE_LEN],
    fast: Option<&'a FastLog2>,
    gain_limit: __m256d,
}

impl LogTerms<'_> {
    /// Largest gain limit for which `g * g * sigma1_sq` (`sigma1_sq < 2^31`) stays below 2^52,
    /// where its truncation and the sums after it are exact; libvmaf's option allows at most 100.
    const MAX_GAIN_LIMIT: f64 = 1024.0;

    /// `(den_log, num_log)` terms of each group's 8 lanes as `i32` lanes, zero where the lane
    /// is not in the log branch (in `lin`, all ones per lane) or has no numerator term (`cond`:
    /// not `lin`, `sigma12 > 0`, `sigma2_sq > 0`); `den_log` zero without `den`. `s2` is
    /// `max(sigma2_sq, 0)`. Lanes outside the masks compute garbage that reads no memory.
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    fn terms<const N: usize>(
        &self,
        s1: [__m256i; N],
        s2: [__m256i; N],
        s12: [__m256i; N],
        lin: [__m256i; N],
        cond: [__m256i; N],
        den: bool,
    ) -> ([__m256i; N], [__m256i; N]) {
        let nsq = _mm256_set1_epi32(SIGMA_NSQ);
        let z = _mm256_setzero_si256();
        // den_log: log2_32((u32)(sigma_nsq + sigma1_sq)) - 2048 * 17; the look-ups add
        // LOG2_U32_BIAS.
        let den_t: [__m256i; N] = if den {
            let log: [__m256i; N] = from_fn(|i| _mm256_xor_si256(lin[i], _mm256_cmpeq_epi32(z, z)));
            let d = self.log2_u32(from_fn(|i| _mm256_add_epi32(s1[i], nsq)), log);
            let off = _mm256_set1_epi32(2048 * 17 + LOG2_U32_BIAS);
            from_fn(|i| _mm256_andnot_si256(lin[i], _mm256_sub_epi32(d[i], off)))
        } else {
            [z; N]
        };
        if cond.iter().all(|&c| _mm256_testz_si256(c, c) != 0) {
            return (den_t, [z; N]);
        }
        // g = sigma12 / (sigma1_sq + eps); sv_sq = (int32)(sigma2_sq - g * sigma12), >= 0;
        // g' = min(g, limit) and (int64)(g' * g' * sigma1_sq), per 4 lanes (half h of group i).
        // (The `chain` closure is inlined: checked in the disassembly.)
        let eps = _mm256_set1_pd(EPS);
        let zd = _mm256_setzero_pd();
        let nsqd = _mm256_set1_pd(SIGMA_NSQ as f64);
        // One group's whole chain at a time (both halves): the chains are independent, so the
        // out-of-order core overlaps them, and fewer values stay live than step by step.
        let mut hi_a = [z; N];
        let mut hi_b = [z; N];
        for i in 0..N {
            let chain = |h: usize| {
                let s1d = _mm256_cvtepi32_pd(half128(s1[i], h));
                let s2d = _mm256_cvtepi32_pd(half128(s2[i], h));
                let s12d = _mm256_cvtepi32_pd(half128(s12[i], h));
                let g = _mm256_div_pd(s12d, _mm256_add_pd(s1d, eps));
                // numer1 = max((int32)(sigma2_sq - g * sigma12), 0) + sigma_nsq, kept in
                // `double`: the truncation toward zero is exact, and where C's conversion
                // leaves the int32 range (only downwards: g * sigma12 > 0) its INT_MIN and the
                // truncated value both become 0 at the max. Every value is an integer below
                // 2^53, so the sums below are exact too.
                let sv = _mm256_sub_pd(s2d, _mm256_mul_pd(g, s12d));
                let sv = _mm256_round_pd::<{ _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC }>(sv);
                let numer1 = _mm256_add_pd(_mm256_max_pd(sv, zd), nsqd);
                // g = g < limit ? g : limit (minpd returns its second operand unless first <
                // second); (int64)(g * g * sigma1_sq) + numer1: below 2^52 + 2^32
                // (MAX_GAIN_LIMIT).
                let g = _mm256_min_pd(g, self.gain_limit);
                let ggs = _mm256_mul_pd(_mm256_mul_pd(g, g), s1d);
                let ggs = _mm256_round_pd::<{ _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC }>(ggs);
                (_mm256_add_pd(ggs, numer1), numer1)
            };
            let (t0, n0) = chain(0);
            let (t1, n1) = chain(1);
            (hi_a[i], hi_b[i]) = (high_words(t0, t1), high_words(n0, n1));
        }
        // Both look-ups add the same bias, which the difference cancels.
        let a = log2_high!(self, N, hi_a, cond);
        let b = log2_high!(self, N, hi_b, cond);
        (
            den_t,
            from_fn(|i| _mm256_and_si256(_mm256_sub_epi32(a[i], b[i]), cond[i])),
        )
    }

    /// libvmaf's `log2_32` of the `u32` lanes in `m` (each in `[2^15, 2^32)`), per group, plus
    /// [`LOG2_U32_BIAS`]: `table[v >> k] + 2048 * k` with `k = floor(log2(v)) - 15`; other lanes
    /// are garbage.
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    fn log2_u32<const N: usize>(&self, v: [__m256i; N], m: [__m256i; N]) -> [__m256i; N] {
        // floor(log2(v)) is the exponent of the exact float of v >> 8 (below 2^24) plus 8.
        let k: [__m256i; N] = from_fn(|i| {
            let f = _mm256_castps_si256(_mm256_cvtepi32_ps(_mm256_srli_epi32::<8>(v[i])));
            _mm256_sub_epi32(_mm256_srli_epi32::<23>(f), _mm256_set1_epi32(127 - 8 + 15))
        });
        let idx: [__m256i; N] = from_fn(|i| _mm256_srlv_epi32(v[i], k[i]));
        let (idx_f, seg) = index_parts(idx);
        let e = self.lookup(idx_f, seg, m);
        from_fn(|i| _mm256_add_epi32(e[i], _mm256_slli_epi32::<11>(k[i])))
    }

    /// `table[idx] - 15 * 2048 + LOG2_FAST_BIAS` (the table's base, [`LOG2_COMPACT_BASE`], out
    /// and the arithmetic's bias in, both folded into the terms' constants or cancelled) for
    /// the lanes in `m`, per group, from each index's exact `f32` (in `[2^15, 2^16)`) and its
    /// segment (lanes whose low three bits are the three bits below the leading one); other lanes
    /// are garbage. By arithmetic ([`FastLog2`]) where the table is the standard one, gathered
    /// for the lanes near a rounding boundary (about 13 in 10 000) and for every lane of another
    /// table.
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    fn lookup<const N: usize>(
        &self,
        idx_f: [__m256; N],
        seg: [__m256i; N],
        m: [__m256i; N],
    ) -> [__m256i; N] {
        let (mut value, near) = match self.fast {
            Some(f) => f.entry(idx_f, seg),
            None => ([_mm256_setzero_si256(); N], m),
        };
        // One test for all groups, before the lanes outside `m` are masked off: near a
        // boundary is rare (in the lanes outside `m` too, whose garbage rarely lands there).
        let any = near[1..]
            .iter()
            .fold(near[0], |a, &b| _mm256_or_si256(a, b));
        if _mm256_testz_si256(any, any) != 0 {
            return value;
        }
        for i in 0..N {
            let near = _mm256_and_si256(near[i], m[i]);
            if _mm256_testz_si256(near, near) != 0 {
                continue;
            }
            // Gather the 32 bits at entry idx - 1 and keep the high half (entry idx), so every
            // read stays inside the table. (The index's float is an integer: exact.)
            let at = _mm256_sub_epi32(_mm256_cvtps_epi32(idx_f[i]), _mm256_set1_epi32(1));
            // SAFETY: for the lanes in `near` (a subset of `m`), 32767 <= idx - 1 <= 65534, so
            // each 4-byte read at byte 2 * (idx - 1) lies inside the 65536-entry (131072-byte)
            // table; the other lanes are not read; gathers need no alignment.
            let pair = unsafe {
                _mm256_mask_i32gather_epi32::<2>(value[i], self.log2.as_ptr().cast(), at, near)
            };
            let entry = _mm256_sub_epi32(
                _mm256_srli_epi32::<16>(pair),
                _mm256_set1_epi32(LOG2_COMPACT_BASE as i32 - tables::LOG2_FAST_BIAS),
            );
            value[i] = _mm256_blendv_epi8(value[i], entry, near);
        }
        value
    }
}

/// The `f32` of each integer index lane (exact: below 2^16) and its segment (the index shifted
/// right by 12: its low three bits are the three below the leading one), as
/// [`LogTerms::lookup`] takes them.
#[inline]
#[target_feature(enable = "avx2,fma")]
fn index_parts<const N: usize>(idx: [__m256i; N]) -> ([__m256; N], [__m256i; N]) {
    (
        from_fn(|i| _mm256_cvtepi32_ps(idx[i])),
        from_fn(|i| _mm256_srli_epi32::<12>(idx[i])),
    )
}

/// The `log2` table's entries by arithmetic, 8 lanes, on eight segments
/// ([`tables::log2_fast8_consts`]): per index `i` in `[2^15, 2^16)` of segment `j` (the three
/// bits below its leading one), `r = i * inv[j] - 1` and `z = base[j] + p(r)` in `f32`, `p` the
/// degree-4 fit [`tables::LOG2_FAST8_POLY`] of `2048 * log2(1 + r)`. The base puts `z` where an
/// `f32` has 12 fraction bits and adds a half and the lower guard, so that `z`'s bit pattern
/// holds the rounded entry above its low 12 bits, and those bits say how near a tie `y` lies:
/// an index is flagged for the table where they are below
/// [`tables::LOG2_FAST_GUARD_BELOW_UNITS`] + [`tables::LOG2_FAST_GUARD_ABOVE_UNITS`]. Eight
/// segments keep each constant table in one register, picked by one `vpermps`; the polynomial
/// runs in fused multiply-adds. The exhaustive unit test `fast_log2_every_index` checks every
/// unflagged index against the table: its operations are IEEE `f32` ones (a fused multiply-add
/// rounds once), the same on every CPU.
#[derive(Clone, Copy)]
struct FastLog2 {
    /// Per segment: `1 / (2^15 + 2^12 j)`.
    inv: __m256,
    /// Per segment: `L[j]` plus 2048, a half and the lower guard.
    base: __m256,
    /// [`tables::LOG2_FAST8_POLY`].
    poly: [__m256; 4],
}

impl FastLog2 {
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    fn new() -> Self {
        let (inv, base) = tables::log2_fast8_consts();
        // SAFETY: each table holds 8 `f32`, one vector; the loads are unaligned.
        let (inv, base) = unsafe {
            (
                _mm256_loadu_ps(inv.as_ptr()),
                _mm256_loadu_ps(base.as_ptr()),
            )
        };
        FastLog2 {
            inv,
            base,
            poly: tables::LOG2_FAST8_POLY.map(|c| _mm256_set1_ps(c)),
        }
    }

    /// `(entries, near)` per group: the table entries of the 8 indices (from their `f32`s
    /// and segments, as [`LogTerms::lookup`] takes them) less the table's base 15 * 2048 plus
    /// [`tables::LOG2_FAST_BIAS`], correct in every lane outside `near` (all ones where near a
    /// rounding boundary).
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    fn entry<const N: usize>(
        &self,
        idx_f: [__m256; N],
        seg: [__m256i; N],
    ) -> ([__m256i; N], [__m256i; N]) {
        let inv: [__m256; N] = from_fn(|i| _mm256_permutevar8x32_ps(self.inv, seg[i]));
        let base: [__m256; N] = from_fn(|i| _mm256_permutevar8x32_ps(self.base, seg[i]));
        let r: [__m256; N] = from_fn(|i| _mm256_fmsub_ps(idx_f[i], inv[i], _mm256_set1_ps(1.0)));
        // Horner's scheme: one multiply-add a step, the fewest operations (these look-ups are
        // bound by throughput, with several groups in flight).
        let [c0, c1, c2, c3] = self.poly;
        let p: [__m256; N] = from_fn(|i| _mm256_fmadd_ps(c0, r[i], c1));
        let p: [__m256; N] = from_fn(|i| _mm256_fmadd_ps(p[i], r[i], c2));
        let p: [__m256; N] = from_fn(|i| _mm256_fmadd_ps(p[i], r[i], c3));
        let z: [__m256i; N] =
            from_fn(|i| _mm256_castps_si256(_mm256_fmadd_ps(p[i], r[i], base[i])));
        let entry = from_fn(|i| _mm256_srli_epi32::<12>(z[i]));
        let guards =
            (tables::LOG2_FAST_GUARD_BELOW_UNITS + tables::LOG2_FAST_GUARD_ABOVE_UNITS) as i32;
        let near = from_fn(|i| {
            let frac = _mm256_and_si256(z[i], _mm256_set1_epi32(4095));
            _mm256_cmpgt_epi32(_mm256_set1_epi32(guards), frac)
        });
        (entry, near)
    }
}

// ---------------------------------------------------------------------------------------------
// Downsampling
// ---------------------------------------------------------------------------------------------

/// The vertical downsampling pass, generic over the row loader.
macro_rules! subsample_vertical_avx2 {
    ($name:ident, $t:ty, $load:ident) => {
        #[allow(clippy::too_many_arguments)]
        #[target_feature(enable = "avx2,fma")]
        fn $name(
            r: &[&[$t]],
            d: &[&[$t]],
            filt: &[u16],
            round: u32,
            shift: u32,
            w: usize,
            out_r: &mut [u16],
            out_d: &mut [u16],
        ) {
            assert!(r.len() == filt.len() && d.len() == filt.len());
            assert!(r.iter().chain(d).all(|row| row.len() >= w));
            let w8 = w / 8 * 8;
            let rnd = _mm256_set1_epi32(round as i32);
            let sh = _mm_cvtsi32_si128(shift as i32);
            let low16 = _mm256_set1_epi32(0xffff);
            // Rounded, truncated to 16 bits and packed (exactly: every lane is below 2^16).
            let fin = |v: __m256i| {
                let v = _mm256_and_si256(_mm256_srl_epi32(_mm256_add_epi32(v, rnd), sh), low16);
                _mm_packus_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256::<1>(v))
            };
            for j in (0..w8).step_by(8) {
                let (mut ar, mut ad) = (_mm256_setzero_si256(), _mm256_setzero_si256());
                for ((&f, r), d) in filt.iter().zip(r).zip(d) {
                    let f = _mm256_set1_epi32(f as i32);
                    // SAFETY: j + 8 <= w8 <= w <= every row's length (checked above).
                    let (x, y) = unsafe { ($load(r.as_ptr().add(j)), $load(d.as_ptr().add(j))) };
                    ar = _mm256_add_epi32(ar, _mm256_mullo_epi32(f, x));
                    ad = _mm256_add_epi32(ad, _mm256_mullo_epi32(f, y));
                }
                store_u16x8(&mut out_r[PAD + j..], fin(ar));
                store_u16x8(&mut out_d[PAD + j..], fin(ad));
            }
            scalar::subsample_vertical_cols(r, d, filt, round, shift, w8..w, out_r, out_d);
        }
    };
}

subsample_vertical_avx2!(subsample_vertical_u8_avx2, u8, load_u8x8);

/// [`subsample_vertical_u8_avx2`] for symmetric taps (`2 H + 1` of them, each below 2^15), 16
/// columns a step: the rows at equal distance from the centre added first (two samples, at most
/// 510: an `i16`), then two folded rows per `_mm256_madd_epi16` with their tap pair (the centre
/// row paired with a zero tap when `H + 1` is odd). The sums are the scalar's modulo 2^32 (a
/// wrapping `i32` add is a `u32` one), rounded and shifted logically as it does. `false` (nothing
/// written) where the taps are not of that form.
#[allow(clippy::too_many_arguments)]
#[target_feature(enable = "avx2,fma")]
fn subsample_vertical_u8_fold<const H: usize>(
    r: &[&[u8]],
    d: &[&[u8]],
    filt: &[u16],
    round: u32,
    shift: u32,
    w: usize,
    out_r: &mut [u16],
    out_d: &mut [u16],
) -> bool {
    let n = 2 * H + 1;
    if !fold_taps_ok(filt, H) {
        return false;
    }
    assert!(r.len() == n && d.len() == n);
    assert!(r.iter().chain(d).all(|row| row.len() >= w));
    assert!(out_r.len() >= PAD + w && out_d.len() >= PAD + w);
    let pairs = fold_tap_pairs(filt, H).map(|p| _mm256_set1_epi32(p));
    let rnd = _mm256_set1_epi32(round as i32);
    let sh = _mm_cvtsi32_si128(shift as i32);
    let low16 = _mm256_set1_epi32(0xffff);
    let z = _mm256_setzero_si256();
    let w16 = w / 16 * 16;
    for j in (0..w16).step_by(16) {
        for (rows, out) in [(r, &mut *out_r), (d, &mut *out_d)] {
            let x: [__m256i; 17] = from_fn(|k| {
                if k < n {
                    // SAFETY: j + 16 <= w16 <= w <= every row's length (checked above); the load
                    // is unaligned.
                    unsafe { _mm256_cvtepu8_epi16(_mm_loadu_si128(rows[k].as_ptr().add(j).cast())) }
                } else {
                    z
                }
            });
            let folded: [__m256i; 10] = from_fn(|k| match k.cmp(&H) {
                std::cmp::Ordering::Less => _mm256_add_epi16(x[k], x[n - 1 - k]),
                std::cmp::Ordering::Equal => x[H],
                std::cmp::Ordering::Greater => z,
            });
            // In-lane interleaves: columns 0-3 and 8-11 in `lo`, 4-7 and 12-15 in `hi`.
            let (mut lo, mut hi) = (z, z);
            for p in 0..(H + 1).div_ceil(2) {
                let (a, b) = (folded[2 * p], folded[2 * p + 1]);
                lo = madd_acc(lo, _mm256_unpacklo_epi16(a, b), pairs[p]);
                hi = madd_acc(hi, _mm256_unpackhi_epi16(a, b), pairs[p]);
            }
            let fin = |v: __m256i| {
                _mm256_and_si256(_mm256_srl_epi32(_mm256_add_epi32(v, rnd), sh), low16)
            };
            // The in-lane pack puts columns 0-3 | 4-7 and 8-11 | 12-15 side by side: column
            // order (exact: every lane is below 2^16).
            store_u16x16(&mut out[PAD + j..], _mm256_packus_epi32(fin(lo), fin(hi)));
        }
    }
    scalar::subsample_vertical_cols(r, d, filt, round, shift, w16..w, out_r, out_d);
    true
}
subsample_vertical_avx2!(subsample_vertical_u16_avx2, u16, load_u16x8);

/// The even-indexed elements of `p[0..16]` widened to `u32` lanes: `p[0], p[2], …, p[14]`.
///
/// # Safety
/// `p` must be valid for reading 16 `u16`.
#[inline]
#[target_feature(enable = "avx2,fma")]
unsafe fn load_even_u16x8(p: *const u16) -> __m256i {
    // SAFETY: the caller guarantees 16 readable `u16` (32 bytes); the load is unaligned.
    let v = unsafe { _mm256_loadu_si256(p.cast()) };
    // Each 32-bit lane holds p[2l] in its low half (little-endian).
    _mm256_and_si256(v, _mm256_set1_epi32(0xffff))
}

#[target_feature(enable = "avx2,fma")]
fn subsample_horizontal_avx2(
    lr: &[u16],
    ld: &[u16],
    filt: &[u16],
    w: usize,
    out_r: &mut [u16],
    out_d: &mut [u16],
) {
    let taps = filt.len();
    let start = PAD - taps / 2;
    let half = w / 2;
    // The last output a vector step covers reads up to `start + 2 * m + taps - 1 + 16`, which
    // stays inside the padded line only while `2 * m + 16 <= w`.
    let n8 = half / 8 * 8;
    let end = start + 2 * n8 + taps - 1;
    assert!(taps <= 2 * PAD + 1 && lr.len() >= end && ld.len() >= end);
    let round = _mm256_set1_epi32(32768);
    let fin = |v: __m256i| {
        let v = _mm256_srli_epi32::<16>(_mm256_add_epi32(v, round));
        _mm_packus_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256::<1>(v))
    };
    for m in (0..n8).step_by(8) {
        let (mut ar, mut ad) = (_mm256_setzero_si256(), _mm256_setzero_si256());
        for (k, &f) in filt.iter().enumerate() {
            let at = start + 2 * m + k;
            let f = _mm256_set1_epi32(f as i32);
            // SAFETY: at + 16 <= end <= both lines' lengths (checked above).
            let (x, y) = unsafe {
                (
                    load_even_u16x8(lr.as_ptr().add(at)),
                    load_even_u16x8(ld.as_ptr().add(at)),
                )
            };
            ar = _mm256_add_epi32(ar, _mm256_mullo_epi32(f, x));
            ad = _mm256_add_epi32(ad, _mm256_mullo_epi32(f, y));
        }
        store_u16x8(&mut out_r[m..], fin(ar));
        store_u16x8(&mut out_d[m..], fin(ad));
    }
    scalar::subsample_horizontal_cols(lr, ld, filt, n8..half, out_r, out_d);
}

/// [`subsample_horizontal_avx2`] in 16-bit lanes, 8 outputs per step, two taps per
/// `_mm256_madd_epi16`: output `m` reads the line at `2m + k`, so 16 values loaded from
/// `start + 2m + 2p` pair taps `2p` and `2p + 1` of 8 consecutive outputs; the values are offset
/// by -2^15 into `i16` at the load and the offset added back as `2^15 * sum(taps)`, so the
/// wrapping `i32` sums are the scalar's `u32` ones. `false` (nothing written) where the taps do
/// not fit ([`madd_taps_ok`]).
#[target_feature(enable = "avx2,fma")]
fn subsample_horizontal_madd<const PAIRS: usize>(
    lr: &[u16],
    ld: &[u16],
    filt: &[u16],
    w: usize,
    out_r: &mut [u16],
    out_d: &mut [u16],
) -> bool {
    let taps = filt.len();
    if !madd_taps_ok(filt) || taps.div_ceil(2) != PAIRS {
        return false;
    }
    let start = PAD - taps / 2;
    let half = w / 2;
    let n8 = half / 8 * 8;
    // A step at m reads the values start + 2m .. start + 2m + 2 PAIRS + 14 (the last one or two
    // times a zero tap), below this end for every m < n8.
    let end = start + 2 * n8 + 2 * PAIRS - 2;
    assert!(lr.len() >= end && ld.len() >= end && out_r.len() >= half && out_d.len() >= half);
    let pairs: [__m256i; PAIRS] = tap_pairs(filt);
    let offset = madd_offset(filt);
    let flip = _mm256_set1_epi16(i16::MIN);
    let round = _mm256_set1_epi32(32768);
    let filtered = |line: &[u16], m: usize| {
        let mut acc = offset;
        for (p, &t) in pairs.iter().enumerate() {
            // SAFETY: the values read, start + 2m + 2p .. + 16, lie below `end` <= the line's
            // length (m <= n8 - 8, p < PAIRS; checked above); the load is unaligned.
            let v = unsafe { _mm256_loadu_si256(line.as_ptr().add(start + 2 * m + 2 * p).cast()) };
            acc = madd_acc(acc, _mm256_xor_si256(v, flip), t);
        }
        let v = _mm256_srli_epi32::<16>(_mm256_add_epi32(acc, round));
        _mm_packus_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256::<1>(v))
    };
    for m in (0..n8).step_by(8) {
        store_u16x8(&mut out_r[m..], filtered(lr, m));
        store_u16x8(&mut out_d[m..], filtered(ld, m));
    }
    scalar::subsample_horizontal_cols(lr, ld, filt, n8..half, out_r, out_d);
    true
}

#[cfg(test)]
mod fast_log2_tests {
    use super::*;

    /// Whether `install` takes this module's kernels here: it checks the CPU for every feature
    /// the module enables (the AVX-VNNI copy's included).
    fn module_runs() -> bool {
        let mut k = Kernels::SCALAR;
        install(&mut k);
        k.stat_horizontal as usize != Kernels::SCALAR.stat_horizontal as usize
    }

    /// The arithmetic `log2` against the table at every index it can be given: the lanes it
    /// trusts must hold the table's entry (which makes it exact: its operations are IEEE ones),
    /// the look-up (arithmetic, or the table near a boundary) must give every entry, and the
    /// table must be left to few enough lanes to be worth having.
    #[test]
    fn fast_log2_every_index() {
        if !module_runs() {
            eprintln!(
                "fast_log2_every_index (AVX2): this CPU lacks the module's features: not run"
            );
            return;
        }
        // SAFETY: `install` replaced the kernels, so the CPU has every feature `check` enables.
        let (trusted, near) = unsafe { check() };
        eprintln!("fast_log2_every_index (AVX2): {trusted} by arithmetic, {near} near a boundary");
        assert_eq!(trusted + near, 1 << 15);
        assert!(
            near < (1 << 15) / 100,
            "{near} of 2^15 indices near a boundary"
        );
    }

    /// `(trusted, near)` over every index of `[2^15, 2^16)`; panics at a wrong entry.
    #[target_feature(enable = "avx2,fma")]
    fn check() -> (usize, usize) {
        let table = tables::log2_table();
        let fast = FastLog2::new();
        let terms = LogTerms {
            log2: table,
            fast: Some(&fast),
            gain_limit: _mm256_set1_pd(100.0),
        };
        let all = _mm256_set1_epi32(-1);
        let (mut trusted, mut near_count) = (0, 0);
        // Two vectors per step, as the term code looks them up.
        for i0 in ((1u32 << 15)..(1 << 16)).step_by(16) {
            let idx: [u32; 16] = std::array::from_fn(|l| i0 + l as u32);
            // SAFETY: `idx` holds 16 `u32`; the loads are unaligned.
            let v = unsafe {
                [
                    _mm256_loadu_si256(idx.as_ptr().cast()),
                    _mm256_loadu_si256(idx.as_ptr().add(8).cast()),
                ]
            };
            let (idx_f, seg) = index_parts(v);
            let (entry, near) = fast.entry(idx_f, seg);
            let looked_up = terms.lookup(idx_f, seg, [all; 2]);
            for h in 0..2 {
                let (mut e, mut l, mut n) = ([0u32; 8], [0u32; 8], [0u32; 8]);
                store_u32x8(&mut e, entry[h]);
                store_u32x8(&mut l, looked_up[h]);
                store_u32x8(&mut n, near[h]);
                for lane in 0..8 {
                    let i = idx[8 * h + lane];
                    let want = (table[i as usize] as i32 + LOG2_U32_BIAS) as u32;
                    assert_eq!(l[lane], want, "lookup of index {i}");
                    if n[lane] == 0 {
                        assert_eq!(e[lane], want, "arithmetic log2 of index {i}");
                        trusted += 1;
                    } else {
                        near_count += 1;
                    }
                }
            }
        }
        (trusted, near_count)
    }

    /// `log2_u32` (its exponent from the `float` of `v >> 8`) and `log2_high!` against the
    /// scalar `log2_32` / `log2_64` at powers of two, their neighbours, and values whose top bits
    /// are all ones (where a rounded `float` would step up a power), over the whole range.
    #[test]
    fn log2_wide_values_match_scalar() {
        if !module_runs() {
            eprintln!(
                "log2_wide_values_match_scalar (AVX2): this CPU lacks the module's features: not run"
            );
            return;
        }
        // SAFETY: `install` replaced the kernels, so the CPU has every feature `check_wide`
        // enables.
        unsafe { check_wide() };
    }

    #[target_feature(enable = "avx2,fma")]
    fn check_wide() {
        let table = tables::log2_table();
        let fast = FastLog2::new();
        let all = _mm256_set1_epi32(-1);
        let mut vals: Vec<u64> = Vec::new();
        for b in 15..53u32 {
            let p = 1u64 << b;
            vals.extend([
                p,
                p + 1,
                p - 1,
                p + p / 2,
                (p << 1) - 1,
                (p << 1) - (p >> 9),
            ]);
        }
        vals.retain(|&v| (1 << 15..1 << 53).contains(&v));
        // The `u32` ones on their own, so no chunk of 8 mixes them with wider ones.
        let vals32: Vec<u64> = vals.iter().copied().filter(|&v| v < 1 << 32).collect();
        for t in [Some(&fast), None] {
            let terms = LogTerms {
                log2: table,
                fast: t,
                gain_limit: _mm256_set1_pd(100.0),
            };
            for c in vals.chunks(8) {
                let v: [u64; 8] = std::array::from_fn(|l| c[l.min(c.len() - 1)]);
                let load = |s: &[u64]| {
                    let d: [f64; 4] = std::array::from_fn(|l| s[l] as f64);
                    // SAFETY: `d` holds 4 `f64` (32 bytes); the load is unaligned.
                    unsafe { _mm256_loadu_pd(d.as_ptr()) }
                };
                let mut got = [0u32; 8];
                store_u32x8(
                    &mut got,
                    log2_high!(terms, 1, [high_words(load(&v[..4]), load(&v[4..]))], [all])[0],
                );
                for l in 0..8 {
                    assert_eq!(
                        got[l] as i32 - LOG2_F64_BIAS,
                        tables::log2_64(table, v[l]),
                        "log2_64({})",
                        v[l]
                    );
                }
            }
            for c in vals32.chunks(8) {
                let v32: [u32; 8] = std::array::from_fn(|l| c[l.min(c.len() - 1)] as u32);
                // SAFETY: `v32` holds 8 `u32`; the load is unaligned.
                let x = unsafe { _mm256_loadu_si256(v32.as_ptr().cast()) };
                let mut got = [0u32; 8];
                store_u32x8(&mut got, terms.log2_u32([x], [all])[0]);
                for l in 0..8 {
                    assert_eq!(
                        got[l] as i32 - LOG2_U32_BIAS,
                        tables::log2_32(table, v32[l]),
                        "log2_32({})",
                        v32[l]
                    );
                }
            }
        }
    }
}
