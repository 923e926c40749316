//! AVX-512 peers of the [`scalar`] VIF kernels, equal to them bit for bit: the arithmetic of the
//! AVX2 peers (the same integer widths, wrapping, rounding and `double` operations) in 512-bit
//! vectors, 16 columns of 32-bit lanes or 32 columns of 16-bit lanes per step. The columns left
//! over at the end of a row go through the same vector code under a lane mask (masked loads read
//! only the columns that exist), so no scalar tail runs. Only the order of the integer sums
//! differs, which is exact.
//!
//! Beyond AVX-512 F and BW ([`crate::cpu::CpuLevel::Avx512`]) the kernels use CD (`vplzcnt`, the
//! normalising shift of the `log2` table look-ups) and DQ (`double` to `i64` truncation), which
//! every AVX-512 CPU with BW also has. The kernels are `#[target_feature]` functions reached only
//! through [`install`], which checks all four; that check is what every `unsafe` call of them
//! relies on. A CPU without one of them keeps the AVX2 kernels.

use core::arch::x86_64::*;
use std::array::from_fn;

use super::scalar::{self, StatLine, StatShifts, VifSums, WideAcc, NARROW_COPIES, NARROW_LINE};
use super::tables::{
    self, EPS, FILTER_S0, LOG2_COMPACT_BASE, LOG2_COMPACT_LEN, LOG2_TABLE_LEN, PAD, SIGMA_NSQ,
};
use super::{
    fold_tap_pairs, fold_taps_ok, madd_vertical_ok, madd_vertical_x2_ok, Kernels, RefRow,
    RefRowMut, SplitKernels,
};

/// Replaces the entries of `k` that have an AVX-512 kernel, if this CPU has AVX-512 F, BW, CD
/// and DQ.
pub(super) fn install(k: &mut Kernels) {
    if !(is_x86_feature_detected!("avx512f")
        && is_x86_feature_detected!("avx512bw")
        && is_x86_feature_detected!("avx512cd")
        && is_x86_feature_detected!("avx512dq"))
    {
        return;
    }
    k.stat_vertical_u8 = stat_vertical_u8;
    k.stat_vertical_u8_x2 = Some(stat_vertical_u8_x2);
    k.stat_vertical_u16 = stat_vertical_u16;
    k.stat_vertical_u16_x2 = Some(stat_vertical_u16_x2);
    k.stat_horizontal = stat_horizontal;
    k.stat_rows_u8_x2 = Some(stat_rows_u8_x2);
    k.subsample_vertical_u8 = subsample_vertical_u8;
    k.subsample_vertical_u16 = subsample_vertical_u16;
    k.subsample_horizontal = subsample_horizontal;
    k.split = Some(SplitKernels {
        stat_vertical_u8_dis,
        stat_vertical_u8_dis_x2: Some(stat_vertical_u8_dis_x2),
        stat_vertical_u16_dis,
        stat_vertical_u16_dis_x2: Some(stat_vertical_u16_dis_x2),
        stat_horizontal_store,
        stat_horizontal_dis,
        max_gain_limit: TermSums::MAX_GAIN_LIMIT,
    });
}

// ---------------------------------------------------------------------------------------------
// Safe entry points (only installed after the AVX-512 check)
// ---------------------------------------------------------------------------------------------

fn stat_vertical_u8(r: &[&[u8]], d: &[&[u8]], w: usize, line: &mut StatLine) {
    // SAFETY: only reachable through `install`, which checked that the CPU has AVX-512 F, BW,
    // CD and DQ.
    unsafe { stat_vertical_u8_avx512::<false>(r, d, w, line) }
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
    // SAFETY: only reachable through `install`, which checked that the CPU has AVX-512 F, BW,
    // CD and DQ.
    unsafe { stat_vertical_u16_avx512::<false>(r, d, filt, sh, w, line, acc) }
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
    // SAFETY: only reachable through `install`, which checked that the CPU has AVX-512 F, BW,
    // CD and DQ.
    let done = unsafe {
        stat_horizontal_avx512(
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
    let mut side = RefSide::Store(row);
    // SAFETY: only reachable through `install`, which checked that the CPU has AVX-512 F, BW,
    // CD and DQ.
    unsafe { stat_horizontal_avx512(line, filt, w, gain_limit, log2, acc, sums, &mut side) }
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
    let mut side = RefSide::Load(row);
    // SAFETY: only reachable through `install`, which checked that the CPU has AVX-512 F, BW,
    // CD and DQ.
    unsafe { stat_horizontal_avx512(line, filt, w, gain_limit, log2, acc, sums, &mut side) }
}

fn stat_rows_u8_x2(
    r: &[&[u8]],
    d: &[&[u8]],
    w: usize,
    gain_limit: f64,
    log2: &[u16; LOG2_TABLE_LEN],
    acc: &mut WideAcc,
    sums: &mut VifSums,
) -> bool {
    // SAFETY: only reachable through `install`, which checked that the CPU has AVX-512 F, BW,
    // CD and DQ.
    unsafe { stat_rows_u8_x2_avx512(r, d, w, gain_limit, log2, acc, sums) }
}

fn stat_vertical_u8_x2(r: &[&[u8]], d: &[&[u8]], w: usize, lines: [&mut StatLine; 2]) {
    // SAFETY: only reachable through `install`, which checked that the CPU has AVX-512 F, BW,
    // CD and DQ.
    unsafe { stat_vertical_u8_x2_avx512::<false>(r, d, w, lines) }
}

fn stat_vertical_u8_dis_x2(r: &[&[u8]], d: &[&[u8]], w: usize, lines: [&mut StatLine; 2]) {
    // SAFETY: only reachable through `install`, which checked that the CPU has AVX-512 F, BW,
    // CD and DQ.
    unsafe { stat_vertical_u8_x2_avx512::<true>(r, d, w, lines) }
}

#[allow(clippy::too_many_arguments)]
fn stat_vertical_u16_x2(
    r: &[&[u16]],
    d: &[&[u16]],
    filt: &[u16],
    sh: StatShifts,
    w: usize,
    lines: [&mut StatLine; 2],
    acc: &mut WideAcc,
) {
    // SAFETY: only reachable through `install`, which checked that the CPU has AVX-512 F, BW,
    // CD and DQ.
    unsafe { stat_vertical_u16_x2_avx512::<false>(r, d, filt, sh, w, lines, acc) }
}

#[allow(clippy::too_many_arguments)]
fn stat_vertical_u16_dis_x2(
    r: &[&[u16]],
    d: &[&[u16]],
    filt: &[u16],
    sh: StatShifts,
    w: usize,
    lines: [&mut StatLine; 2],
    acc: &mut WideAcc,
) {
    // SAFETY: only reachable through `install`, which checked that the CPU has AVX-512 F, BW,
    // CD and DQ.
    unsafe { stat_vertical_u16_x2_avx512::<true>(r, d, filt, sh, w, lines, acc) }
}

fn stat_vertical_u8_dis(r: &[&[u8]], d: &[&[u8]], w: usize, line: &mut StatLine) {
    // SAFETY: only reachable through `install`, which checked that the CPU has AVX-512 F, BW,
    // CD and DQ.
    unsafe { stat_vertical_u8_avx512::<true>(r, d, w, line) }
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
    // SAFETY: only reachable through `install`, which checked that the CPU has AVX-512 F, BW,
    // CD and DQ.
    unsafe { stat_vertical_u16_avx512::<true>(r, d, filt, sh, w, line, acc) }
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
    // SAFETY: only reachable through `install`, which checked that the CPU has AVX-512 F, BW,
    // CD and DQ.
    unsafe {
        let done = match filt.len() {
            9 => subsample_vertical_u8_fold::<4>(r, d, filt, round, shift, w, out_r, out_d),
            5 => subsample_vertical_u8_fold::<2>(r, d, filt, round, shift, w, out_r, out_d),
            _ => false,
        };
        if !done {
            subsample_vertical_u8_avx512(r, d, filt, round, shift, w, out_r, out_d);
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
    // SAFETY: only reachable through `install`, which checked that the CPU has AVX-512 F, BW,
    // CD and DQ.
    unsafe { subsample_vertical_u16_avx512(r, d, filt, round, shift, w, out_r, out_d) }
}

fn subsample_horizontal(
    lr: &[u16],
    ld: &[u16],
    filt: &[u16],
    w: usize,
    out_r: &mut [u16],
    out_d: &mut [u16],
) {
    // SAFETY: only reachable through `install`, which checked that the CPU has AVX-512 F, BW,
    // CD and DQ.
    unsafe { subsample_horizontal_avx512(lr, ld, filt, w, out_r, out_d) }
}

// ---------------------------------------------------------------------------------------------
// Loads, stores and masks: the only raw-pointer accesses. The kernels check their slices'
// lengths once up front and then address them by pointer, keeping bounds checks out of the
// inner loops. A load of a row's last, partial vector (`TAIL`) is masked to the `n` values that
// exist; the lanes above read as 0 and are never stored or summed.
// ---------------------------------------------------------------------------------------------

/// The lowest `n` of 16 lanes (all for `n >= 16`).
#[inline]
fn mask16(n: usize) -> __mmask16 {
    if n >= 16 {
        u16::MAX
    } else {
        (1u16 << n) - 1
    }
}

/// The lowest `n` of 32 lanes (all for `n >= 32`).
#[inline]
fn mask32(n: usize) -> __mmask32 {
    if n >= 32 {
        u32::MAX
    } else {
        (1u32 << n) - 1
    }
}

/// 32 `u8` widened to `u16` lanes (with `TAIL`, the first `n < 32` only; the others are 0).
///
/// # Safety
/// `p` must be valid for reading 32 `u8` (with `TAIL`, `n`).
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512cd,avx512dq")]
unsafe fn load_u8x32<const TAIL: bool>(p: *const u8, n: usize) -> __m512i {
    let v = if TAIL {
        // SAFETY: the mask enables the first n bytes, which the caller guarantees readable;
        // masked-off bytes are not accessed.
        _mm512_castsi512_si256(unsafe { _mm512_maskz_loadu_epi8((1u64 << n) - 1, p.cast()) })
    } else {
        // SAFETY: the caller guarantees 32 readable bytes; the load is unaligned.
        unsafe { _mm256_loadu_si256(p.cast()) }
    };
    _mm512_cvtepu8_epi16(v)
}

/// 32 `u16` (with `TAIL`, the first `n < 32` only; the others are 0).
///
/// # Safety
/// `p` must be valid for reading 32 `u16` (with `TAIL`, `n`).
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512cd,avx512dq")]
unsafe fn load_u16x32<const TAIL: bool>(p: *const u16, n: usize) -> __m512i {
    if TAIL {
        // SAFETY: the mask enables the first n `u16`, which the caller guarantees readable;
        // masked-off lanes are not accessed.
        unsafe { _mm512_maskz_loadu_epi16(mask32(n), p.cast()) }
    } else {
        // SAFETY: the caller guarantees 64 readable bytes; the load is unaligned.
        unsafe { _mm512_loadu_si512(p.cast()) }
    }
}

/// 16 `u16` in the low half of a vector (with `TAIL`, the first `n < 16` only; the rest 0).
///
/// # Safety
/// `p` must be valid for reading 16 `u16` (with `TAIL`, `n`).
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512cd,avx512dq")]
unsafe fn load_u16x16_low<const TAIL: bool>(p: *const u16, n: usize) -> __m512i {
    let v = if TAIL {
        // SAFETY: the mask enables the first n `u16`, which the caller guarantees readable;
        // masked-off lanes are not accessed.
        unsafe { _mm256_maskz_loadu_epi16(mask16(n), p.cast()) }
    } else {
        // SAFETY: the caller guarantees 32 readable bytes; the load is unaligned.
        unsafe { _mm256_loadu_si256(p.cast()) }
    };
    _mm512_castsi256_si512(v)
}

/// 16 `u8` widened to `u32` lanes (with `TAIL`, the first `n < 16` only; the others are 0).
///
/// # Safety
/// `p` must be valid for reading 16 `u8` (with `TAIL`, `n`).
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512cd,avx512dq")]
unsafe fn load_u8x16<const TAIL: bool>(p: *const u8, n: usize) -> __m512i {
    let v = if TAIL {
        // SAFETY: the mask enables the first n bytes, which the caller guarantees readable;
        // masked-off bytes are not accessed.
        _mm512_castsi512_si128(unsafe { _mm512_maskz_loadu_epi8((1u64 << n) - 1, p.cast()) })
    } else {
        // SAFETY: the caller guarantees 16 readable bytes; the load is unaligned.
        unsafe { _mm_loadu_si128(p.cast()) }
    };
    _mm512_cvtepu8_epi32(v)
}

/// 16 `u16` widened to `u32` lanes (with `TAIL`, the first `n < 16` only; the others are 0).
///
/// # Safety
/// `p` must be valid for reading 16 `u16` (with `TAIL`, `n`).
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512cd,avx512dq")]
unsafe fn load_u16x16<const TAIL: bool>(p: *const u16, n: usize) -> __m512i {
    let v = if TAIL {
        // SAFETY: the mask enables the first n `u16`, which the caller guarantees readable;
        // masked-off lanes are not accessed.
        _mm512_castsi512_si256(unsafe { _mm512_maskz_loadu_epi16(mask32(n), p.cast()) })
    } else {
        // SAFETY: the caller guarantees 32 readable bytes; the load is unaligned.
        unsafe { _mm256_loadu_si256(p.cast()) }
    };
    _mm512_cvtepu16_epi32(v)
}

/// 16 `u32`, of which only the lanes in `m` are read (the others are 0).
///
/// # Safety
/// `p.add(i)` must be valid for reading one `u32` for every lane `i` in `m`.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512cd,avx512dq")]
unsafe fn load_u32x16_masked(p: *const u32, m: __mmask16) -> __m512i {
    // SAFETY: the caller guarantees the enabled lanes readable; masked-off lanes are not
    // accessed.
    unsafe { _mm512_maskz_loadu_epi32(m, p.cast()) }
}

/// Stores the first `n` (at most 16) `u32` lanes of `v` to the start of `d` (bounds-checked:
/// used once per output vector).
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512cd,avx512dq")]
fn store_u32x16(d: &mut [u32], v: __m512i, n: usize) {
    if n >= 16 {
        let d = &mut d[..16];
        // SAFETY: `d` holds 16 `u32` (64 bytes); the store is unaligned.
        unsafe { _mm512_storeu_si512(d.as_mut_ptr().cast(), v) }
    } else {
        let d = &mut d[..n];
        // SAFETY: the mask enables the first n lanes, which `d` holds; masked-off lanes are not
        // written.
        unsafe { _mm512_mask_storeu_epi32(d.as_mut_ptr().cast(), mask16(n), v) }
    }
}

/// Stores the first `n` (at most 8) `u16` of `v` to the start of `d` (bounds-checked).
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512cd,avx512dq")]
fn store_u16x8(d: &mut [u16], v: __m128i, n: usize) {
    if n >= 8 {
        let d = &mut d[..8];
        // SAFETY: `d` holds 8 `u16` (16 bytes); the store is unaligned.
        unsafe { _mm_storeu_si128(d.as_mut_ptr().cast(), v) }
    } else {
        let mut t = [0u16; 8];
        // SAFETY: `t` holds 8 `u16` (16 bytes); the store is unaligned.
        unsafe { _mm_storeu_si128(t.as_mut_ptr().cast(), v) };
        d[..n].copy_from_slice(&t[..n]);
    }
}

/// Stores the first `n` (at most 16) `u16` of `v` to the start of `d` (bounds-checked).
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512cd,avx512dq")]
fn store_u16x16(d: &mut [u16], v: __m256i, n: usize) {
    store_u16x32(d, _mm512_castsi256_si512(v), n.min(16));
}

/// Stores the first `n` (at most 32) `u16` of `v` to the start of `d` (bounds-checked).
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512cd,avx512dq")]
fn store_u16x32(d: &mut [u16], v: __m512i, n: usize) {
    if n >= 32 {
        let d = &mut d[..32];
        // SAFETY: `d` holds 32 `u16` (64 bytes); the store is unaligned.
        unsafe { _mm512_storeu_si512(d.as_mut_ptr().cast(), v) }
    } else {
        let d = &mut d[..n];
        // SAFETY: the mask enables the first n lanes, which `d` holds; masked-off lanes are not
        // written.
        unsafe { _mm512_mask_storeu_epi16(d.as_mut_ptr().cast(), mask32(n), v) }
    }
}

/// Puts the `madd` sums of interleaved rows back in column order: `lo` holds columns 0-3, 8-11,
/// 16-19, 24-27 and `hi` 4-7, 12-15, 20-23, 28-31 (the in-lane interleave of `unpacklo/hi`);
/// returns columns 0-15 and 16-31.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512cd,avx512dq")]
fn in_column_order(lo: __m512i, hi: __m512i) -> [__m512i; 2] {
    // Index 8 + q picks 64-bit element q of `hi`.
    let first = _mm512_set_epi64(11, 10, 3, 2, 9, 8, 1, 0);
    let second = _mm512_set_epi64(15, 14, 7, 6, 13, 12, 5, 4);
    [
        _mm512_permutex2var_epi64(lo, first, hi),
        _mm512_permutex2var_epi64(lo, second, hi),
    ]
}

/// Interleaves the low 32 bits of the 64-bit lanes of `even` (32-bit lanes 0, 2, …, 14) and
/// `odd` (lanes 1, 3, …, 15) back into 16 `u32` lanes.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512cd,avx512dq")]
fn merge_even_odd(even: __m512i, odd: __m512i) -> __m512i {
    _mm512_mask_blend_epi32(0xaaaa, even, _mm512_slli_epi64::<32>(odd))
}

/// Even/odd 64-bit products `a * b` of the `u32` lanes: `(lanes 0,2,…,14, lanes 1,3,…,15)`.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512cd,avx512dq")]
fn mul_wide(a: __m512i, b: __m512i) -> (__m512i, __m512i) {
    (
        _mm512_mul_epu32(a, b),
        _mm512_mul_epu32(odd_to_even(a), odd_to_even(b)),
    )
}

/// Each 64-bit lane's high 32 bits in its low half (the high half a copy of them, which the
/// users ignore): `vpshufd` on the shuffle port rather than a shift on the port the multiplies
/// and most of the VIF terms' work share.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512cd,avx512dq")]
fn odd_to_even(v: __m512i) -> __m512i {
    _mm512_shuffle_epi32::<0b11_11_01_01>(v)
}

/// Adds a pair of even/odd 64-bit products to a pair of accumulators.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512cd,avx512dq")]
fn add_wide(acc: &mut (__m512i, __m512i), p: (__m512i, __m512i)) {
    acc.0 = _mm512_add_epi64(acc.0, p.0);
    acc.1 = _mm512_add_epi64(acc.1, p.1);
}

/// The `i32` lanes of `v` summed into 8 `i64` lanes (the order of integer sums is free).
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512cd,avx512dq")]
fn widen_sum_i32(v: __m512i) -> __m512i {
    _mm512_add_epi64(
        _mm512_cvtepi32_epi64(_mm512_castsi512_si256(v)),
        _mm512_cvtepi32_epi64(_mm512_extracti64x4_epi64::<1>(v)),
    )
}

/// Tap pairs `(f[2i], f[2i + 1])` as `i16` pairs in each 32-bit lane, the last odd tap paired
/// with 0; the rows (or columns) each pair multiplies are `2i` and `min(2i + 1, taps - 1)`.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512cd,avx512dq")]
fn tap_pairs<const PAIRS: usize>(filt: &[u16]) -> [__m512i; PAIRS] {
    debug_assert_eq!(filt.len().div_ceil(2), PAIRS);
    let mut pairs = [_mm512_setzero_si512(); PAIRS];
    for (i, p) in pairs.iter_mut().enumerate() {
        let lo = filt[2 * i] as i32;
        let hi = filt.get(2 * i + 1).map_or(0, |&f| f as i32);
        *p = _mm512_set1_epi32(hi << 16 | lo);
    }
    pairs
}

/// Tap pairs `(f[2i - 1], f[2i])` (`f[-1]` and taps past the end 0) as `i16` pairs in each
/// 32-bit lane: the weights an odd output column gives the value pair that an even column
/// weighs with [`tap_pairs`] (see [`stat_horizontal_madd`]).
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512cd,avx512dq")]
fn odd_tap_pairs<const PAIRS: usize>(filt: &[u16]) -> [__m512i; PAIRS] {
    debug_assert_eq!(filt.len().div_ceil(2), PAIRS);
    let tap = |k: usize| filt.get(k).map_or(0, |&f| f as i32);
    let mut pairs = [_mm512_setzero_si512(); PAIRS];
    for (i, p) in pairs.iter_mut().enumerate() {
        let lo = if i == 0 { 0 } else { tap(2 * i - 1) };
        *p = _mm512_set1_epi32(tap(2 * i) << 16 | lo);
    }
    pairs
}

/// `acc + madd(a, b)` in wrapping `i32` lanes: in the VNNI copy one `vpdpwssd`, the same sum
/// (build.rs rewrites this body there; LLVM fuses only some of the `madd` + add pairs itself).
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512cd,avx512dq")]
fn madd_acc(acc: __m512i, a: __m512i, b: __m512i) -> __m512i {
    _mm512_add_epi32(acc, _mm512_madd_epi16(a, b))
}

/// `2^15 * sum(filt)` (wrapping): what the -2^15 offset of every `madd` operand takes away.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512cd,avx512dq")]
fn madd_offset(filt: &[u16]) -> __m512i {
    _mm512_set1_epi32(
        filt.iter()
            .map(|&f| f as u32)
            .sum::<u32>()
            .wrapping_mul(1 << 15) as i32,
    )
}

// ---------------------------------------------------------------------------------------------
// Statistic: vertical passes
// ---------------------------------------------------------------------------------------------

/// The constants of [`stat_vertical_u8_block`].
struct StatU8Consts {
    pairs: [__m512i; FILTER_S0.len().div_ceil(2)],
    /// The second row's weights in [`stat_vertical_u8_x2_avx512`] ([`odd_tap_pairs`]).
    odd: [__m512i; FILTER_S0.len().div_ceil(2)],
    offset: __m512i,
    flip: __m512i,
    round: __m512i,
}

/// The scale-0 8-bit vertical pass in 16-bit `madd` lanes, 32 columns per step, as the AVX2 peer
/// does it with 16: two rows per `_mm512_madd_epi16` (taps paired, the last with a zero tap);
/// the squares and products (at most 255^2 < 2^16, exact in 16-bit lanes) offset by -2^15 into
/// `i16` and the offset `2^15 * sum(taps)` added back. No pair sum overflows (every two taps sum
/// below 2^16) and the filtered values are below 2^32, so the wrapping `i32` sums are the
/// scalar's `u32` ones.
#[target_feature(enable = "avx512f,avx512bw,avx512cd,avx512dq")]
fn stat_vertical_u8_avx512<const DIS_ONLY: bool>(
    r: &[&[u8]],
    d: &[&[u8]],
    w: usize,
    line: &mut StatLine,
) {
    const TAPS: usize = FILTER_S0.len();
    assert!(r.len() == TAPS && d.len() == TAPS);
    assert!(r.iter().chain(d).all(|row| row.len() >= w));
    assert!([&line.mu1, &line.mu2, &line.xx, &line.yy, &line.xy]
        .iter()
        .all(|b| b.len() >= PAD + w));
    let k = StatU8Consts::new();
    let w32 = w / 32 * 32;
    for j in (0..w32).step_by(32) {
        stat_vertical_u8_block::<false, DIS_ONLY>(r, d, j, 32, &k, line);
    }
    if w32 < w {
        stat_vertical_u8_block::<true, DIS_ONLY>(r, d, w32, w - w32, &k, line);
    }
}

impl StatU8Consts {
    #[inline]
    #[target_feature(enable = "avx512f,avx512bw,avx512cd,avx512dq")]
    fn new() -> Self {
        StatU8Consts {
            pairs: tap_pairs(&FILTER_S0),
            odd: odd_tap_pairs(&FILTER_S0),
            offset: madd_offset(&FILTER_S0),
            flip: _mm512_set1_epi16(i16::MIN),
            round: _mm512_set1_epi32(128),
        }
    }
}

/// Writes a block's sums ([`U8BlockSums`]) to columns `j .. j + n` of `line` (the means rounded
/// `>> 8`), in column order. A macro: as a function LLVM left it out of line in the VNNI copy,
/// passing the sums through memory.
macro_rules! store_u8_block {
    ($dis_only:expr, $line:expr, $j:expr, $n:expr, $k:expr, $s:expr) => {{
        let (line, n, k): (&mut StatLine, usize, &StatU8Consts) = ($line, $n, $k);
        let mean = |v: __m512i| _mm512_srli_epi32::<8>(_mm512_add_epi32(v, k.round));
        let at = PAD + $j;
        let [mu1, mu2, xx, yy, xy]: U8BlockSums = $s;
        for (dst, (lo, hi), is_mean, reference) in [
            (&mut line.mu1, mu1, true, true),
            (&mut line.mu2, mu2, true, false),
            (&mut line.xx, xx, false, true),
            (&mut line.yy, yy, false, false),
            (&mut line.xy, xy, false, false),
        ] {
            if $dis_only && reference {
                continue;
            }
            let v = in_column_order(lo, hi);
            let v = if is_mean { [mean(v[0]), mean(v[1])] } else { v };
            store_u32x16(&mut dst[at..], v[0], n);
            if n > 16 {
                store_u32x16(&mut dst[at + 16..], v[1], n - 16);
            }
        }
    }};
}

/// Two output rows of [`stat_vertical_u8_avx512`] in one pass: `r` and `d` hold 18 rows,
/// `lines[0]` gets the statistic of rows 0..17 and `lines[1]` that of rows 1..18. The two
/// windows share 16 rows, so each row pair is loaded, interleaved and squared once and weighted
/// twice: by the tap pairs `(f[2i], f[2i+1])` for the first line and `(f[2i-1], f[2i])`
/// ([`odd_tap_pairs`]) for the second. The `madd` sums are the single pass's (the same
/// products, a zero tap where a window has no row), so the lines are equal to two calls'.
#[target_feature(enable = "avx512f,avx512bw,avx512cd,avx512dq")]
fn stat_vertical_u8_x2_avx512<const DIS_ONLY: bool>(
    r: &[&[u8]],
    d: &[&[u8]],
    w: usize,
    lines: [&mut StatLine; 2],
) {
    const ROWS: usize = FILTER_S0.len() + 1;
    assert!(r.len() == ROWS && d.len() == ROWS);
    assert!(r.iter().chain(d).all(|row| row.len() >= w));
    assert!(lines
        .iter()
        .flat_map(|l| [&l.mu1, &l.mu2, &l.xx, &l.yy, &l.xy])
        .all(|b| b.len() >= PAD + w));
    let k = StatU8Consts::new();
    let [l0, l1] = lines;
    let w32 = w / 32 * 32;
    for j in (0..w32).step_by(32) {
        stat_vertical_u8_block2::<false, DIS_ONLY>(r, d, j, 32, &k, l0, l1);
    }
    if w32 < w {
        stat_vertical_u8_block2::<true, DIS_ONLY>(r, d, w32, w - w32, &k, l0, l1);
    }
}

/// The five sums of a block of 32 columns (`mu1`, `mu2`, `xx`, `yy`, `xy`; lo and hi halves in
/// the `madd` column order).
type U8BlockSums = [(__m512i, __m512i); 5];

/// The sums of columns `j .. j + n` of both lines of [`stat_vertical_u8_x2_avx512`] (18 rows
/// in `r` and `d`, each holding at least `j + n` values), as `[U8BlockSums; 2]`. A macro: as a
/// function LLVM left it out of line, returning the sums through memory.
macro_rules! u8_block2_sums {
    ($tail:expr, $dis_only:expr, $r:expr, $d:expr, $j:expr, $n:expr, $k:expr) => {{
        let (r, d, j, n, k): (&[&[u8]], &[&[u8]], usize, usize, &StatU8Consts) =
            ($r, $d, $j, $n, $k);
        let (z, o) = (_mm512_setzero_si512(), k.offset);
        // (First line, second line) sums, lo and hi halves each.
        let (mut mu1, mut mu2) = (((z, z), (z, z)), ((z, z), (z, z)));
        let (mut xx, mut yy, mut xy) = (((o, o), (o, o)), ((o, o), (o, o)), ((o, o), (o, o)));
        for i in 0..FILTER_S0.len().div_ceil(2) {
            let (c0, c1) = (k.pairs[i], k.odd[i]);
            let (ra, rb, da, db) = (r[2 * i], r[2 * i + 1], d[2 * i], d[2 * i + 1]);
            assert!(ra.len().min(rb.len()).min(da.len()).min(db.len()) >= j + n);
            // SAFETY: each row holds at least j + n values (checked just above), and the loads read
            // n values from column j (32 = n without TAIL).
            let (xa, xb, ya, yb) = unsafe {
                (
                    load_u8x32::<{ $tail }>(ra.as_ptr().add(j), n),
                    load_u8x32::<{ $tail }>(rb.as_ptr().add(j), n),
                    load_u8x32::<{ $tail }>(da.as_ptr().add(j), n),
                    load_u8x32::<{ $tail }>(db.as_ptr().add(j), n),
                )
            };
            let (xl, xh) = (_mm512_unpacklo_epi16(xa, xb), _mm512_unpackhi_epi16(xa, xb));
            let (yl, yh) = (_mm512_unpacklo_epi16(ya, yb), _mm512_unpackhi_epi16(ya, yb));
            let sq = |a: __m512i, b: __m512i| _mm512_xor_si512(_mm512_mullo_epi16(a, b), k.flip);
            // Each interleaved pair weighed by both lines' taps.
            macro_rules! acc2 {
                ($s:ident, $lo:expr, $hi:expr) => {{
                    let (lo, hi) = ($lo, $hi);
                    $s.0 .0 = madd_acc($s.0 .0, lo, c0);
                    $s.0 .1 = madd_acc($s.0 .1, hi, c0);
                    $s.1 .0 = madd_acc($s.1 .0, lo, c1);
                    $s.1 .1 = madd_acc($s.1 .1, hi, c1);
                }};
            }
            if !$dis_only {
                acc2!(mu1, xl, xh);
                acc2!(xx, sq(xl, xl), sq(xh, xh));
            }
            acc2!(mu2, yl, yh);
            acc2!(yy, sq(yl, yl), sq(yh, yh));
            acc2!(xy, sq(xl, yl), sq(xh, yh));
        }
        [
            [mu1.0, mu2.0, xx.0, yy.0, xy.0],
            [mu1.1, mu2.1, xx.1, yy.1, xy.1],
        ]
    }};
}

/// Columns `j .. j + n` of [`stat_vertical_u8_x2_avx512`] (the bounds of
/// [`stat_vertical_u8_block`], for 18 rows and two lines).
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512cd,avx512dq")]
fn stat_vertical_u8_block2<const TAIL: bool, const DIS_ONLY: bool>(
    r: &[&[u8]],
    d: &[&[u8]],
    j: usize,
    n: usize,
    k: &StatU8Consts,
    l0: &mut StatLine,
    l1: &mut StatLine,
) {
    let [s0, s1]: [U8BlockSums; 2] = u8_block2_sums!(TAIL, DIS_ONLY, r, d, j, n, k);
    store_u8_block!(DIS_ONLY, l0, j, n, k, s0);
    store_u8_block!(DIS_ONLY, l1, j, n, k, s1);
}

// ---------------------------------------------------------------------------------------------
// Statistic: two rows in one kernel (`Kernels::stat_rows_u8_x2`)
// ---------------------------------------------------------------------------------------------

/// Writes a block's sums ([`U8BlockSums`]) as 32 columns from `j` on (line positions `PAD + j`
/// on, 32 of them even where fewer columns are left: the padding and the masked-off columns
/// cover the rest) of one line's 16-bit copies, `stride` apart in `line`. `packus` of the `lo`
/// and `hi` sums puts them in column order (per 128-bit lane, columns `4m .. 4m + 4` of `lo` then
/// of `hi`); every value packed is below 2^16.
/// A macro, as [`u8_block2_sums`] is.
macro_rules! store_u8_block16 {
    ($line:expr, $stride:expr, $j:expr, $k:expr, $s:expr) => {{
        let (line, stride, j, k, s): (&mut [i16], usize, usize, &StatU8Consts, U8BlockSums) =
            ($line, $stride, $j, $k, $s);
        let low16 = _mm512_set1_epi32(0xffff);
        let mean = |v: __m512i| _mm512_srli_epi32::<8>(_mm512_add_epi32(v, k.round));
        let pack = |lo: __m512i, hi: __m512i| _mm512_xor_si512(_mm512_packus_epi32(lo, hi), k.flip);
        let halves = |(lo, hi): (__m512i, __m512i)| {
            [
                pack(_mm512_and_si512(lo, low16), _mm512_and_si512(hi, low16)),
                pack(_mm512_srli_epi32::<16>(lo), _mm512_srli_epi32::<16>(hi)),
            ]
        };
        let [mu1, mu2, xx, yy, xy] = s;
        let [xl, xh] = halves(xx);
        let [yl, yh] = halves(yy);
        let [pl, ph] = halves(xy);
        let out = [
            pack(mean(mu1.0), mean(mu1.1)),
            pack(mean(mu2.0), mean(mu2.1)),
            xl,
            xh,
            yl,
            yh,
            pl,
            ph,
        ];
        let at = PAD + j;
        for (q, v) in out.into_iter().enumerate() {
            let dst = &mut line[q * stride + at..][..32];
            // SAFETY: `dst` holds 32 `i16` (64 bytes); the store is unaligned.
            unsafe { _mm512_storeu_si512(dst.as_mut_ptr().cast(), v) };
        }
    }};
}

/// [`super::StatRowsU8x2`]: the sums of [`u8_block2_sums`] written straight into 16-bit line
/// copies ([`WideAcc::rows16`]; the means rounded `>> 8`, the squares split into their low and
/// high 16 bits, all offset by -2^15 as [`stat_horizontal_madd`]'s copies are), the copies
/// padded, and [`madd_terms`] run on each line: the passes' arithmetic without the 32-bit lines
/// written and read back and narrowed again. `false` (nothing added) if `acc` was made for a
/// narrower row.
#[allow(clippy::too_many_arguments)]
#[target_feature(enable = "avx512f,avx512bw,avx512cd,avx512dq")]
fn stat_rows_u8_x2_avx512(
    r: &[&[u8]],
    d: &[&[u8]],
    w: usize,
    gain_limit: f64,
    log2: &[u16; LOG2_TABLE_LEN],
    acc: &mut WideAcc,
    sums: &mut VifSums,
) -> bool {
    const TAPS: usize = FILTER_S0.len();
    const PAIRS: usize = TAPS.div_ceil(2);
    assert!(r.len() == TAPS + 1 && d.len() == TAPS + 1);
    assert!(r.iter().chain(d).all(|row| row.len() >= w));
    let stride = scalar::rows16_stride(w);
    let line_len = NARROW_COPIES * stride;
    if acc.rows16.len() < 2 * line_len {
        return false;
    }
    let k = StatU8Consts::new();
    let (l0, l1) = acc.rows16[..2 * line_len].split_at_mut(line_len);
    let w32 = w / 32 * 32;
    for j in (0..w32).step_by(32) {
        let [s0, s1]: [U8BlockSums; 2] = u8_block2_sums!(false, false, r, d, j, 32, &k);
        store_u8_block16!(l0, stride, j, &k, s0);
        store_u8_block16!(l1, stride, j, &k, s1);
    }
    if w32 < w {
        let [s0, s1]: [U8BlockSums; 2] = u8_block2_sums!(true, false, r, d, w32, w - w32, &k);
        store_u8_block16!(l0, stride, w32, &k, s0);
        store_u8_block16!(l1, stride, w32, &k, s1);
    }
    for copy in acc.rows16[..2 * line_len].chunks_exact_mut(stride) {
        scalar::pad_line(copy, w, TAPS / 2);
    }
    let mt = MaddTaps::<PAIRS>::new(&FILTER_S0);
    let mut terms = TermSums::new(gain_limit, log2);
    let start = PAD - TAPS / 2;
    for line in acc.rows16[..2 * line_len].chunks_exact(line_len) {
        let copies: [&[i16]; NARROW_COPIES] =
            from_fn(|q| &line[q * stride + start..][..stride - start]);
        madd_terms(copies, 0, w, &mt, true, &mut terms, sums, &mut RefSide::Own);
    }
    terms.flush(sums);
    true
}

/// Columns `j .. j + n` (`n <= 32`, `n < 32` only with `TAIL`) of [`stat_vertical_u8_avx512`];
/// requires `j + n <= ` every row's length and `PAD + j + n <=` every line's length.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512cd,avx512dq")]
fn stat_vertical_u8_block<const TAIL: bool, const DIS_ONLY: bool>(
    r: &[&[u8]],
    d: &[&[u8]],
    j: usize,
    n: usize,
    k: &StatU8Consts,
    line: &mut StatLine,
) {
    const TAPS: usize = FILTER_S0.len();
    let z = _mm512_setzero_si512();
    let (mut mu1, mut mu2) = ((z, z), (z, z));
    let o = k.offset;
    let (mut xx, mut yy, mut xy) = ((o, o), (o, o), (o, o));
    for (i, &c) in k.pairs.iter().enumerate() {
        let (ka, kb) = (2 * i, (2 * i + 1).min(TAPS - 1));
        let (ra, rb, da, db) = (r[ka], r[kb], d[ka], d[kb]);
        assert!(ra.len().min(rb.len()).min(da.len()).min(db.len()) >= j + n);
        // SAFETY: each row holds at least j + n values (checked just above), and the loads read
        // n values from column j (32 = n without TAIL).
        let (xa, xb, ya, yb) = unsafe {
            (
                load_u8x32::<TAIL>(ra.as_ptr().add(j), n),
                load_u8x32::<TAIL>(rb.as_ptr().add(j), n),
                load_u8x32::<TAIL>(da.as_ptr().add(j), n),
                load_u8x32::<TAIL>(db.as_ptr().add(j), n),
            )
        };
        // The two rows interleaved once (lo: columns 0-3, 8-11, …; hi: the others, as
        // `in_column_order` expects), then squared and multiplied in that order: the pairs the
        // `madd`s take need no interleave of their own.
        let (xl, xh) = (_mm512_unpacklo_epi16(xa, xb), _mm512_unpackhi_epi16(xa, xb));
        let (yl, yh) = (_mm512_unpacklo_epi16(ya, yb), _mm512_unpackhi_epi16(ya, yb));
        let acc = |s: &mut (__m512i, __m512i), lo: __m512i, hi: __m512i| {
            s.0 = madd_acc(s.0, lo, c);
            s.1 = madd_acc(s.1, hi, c);
        };
        let sq = |a: __m512i, b: __m512i| _mm512_xor_si512(_mm512_mullo_epi16(a, b), k.flip);
        if !DIS_ONLY {
            acc(&mut mu1, xl, xh);
            acc(&mut xx, sq(xl, xl), sq(xh, xh));
        }
        acc(&mut mu2, yl, yh);
        acc(&mut yy, sq(yl, yl), sq(yh, yh));
        acc(&mut xy, sq(xl, yl), sq(xh, yh));
    }
    store_u8_block!(DIS_ONLY, line, j, n, k, [mu1, mu2, xx, yy, xy]);
}

/// The constants of [`stat_vertical_u16_block`].
struct StatU16Consts {
    mu_round: __m512i,
    mu_shift: __m128i,
    sq_round: __m512i,
    sq_shift: __m128i,
    low16: __m512i,
}

#[target_feature(enable = "avx512f,avx512bw,avx512cd,avx512dq")]
fn stat_vertical_u16_avx512<const DIS_ONLY: bool>(
    r: &[&[u16]],
    d: &[&[u16]],
    filt: &[u16],
    sh: StatShifts,
    w: usize,
    line: &mut StatLine,
    _acc: &mut WideAcc,
) {
    assert!(r.len() == filt.len() && d.len() == filt.len());
    assert!(r.iter().chain(d).all(|row| row.len() >= w));
    assert!([&line.mu1, &line.mu2, &line.xx, &line.yy, &line.xy]
        .iter()
        .all(|b| b.len() >= PAD + w));
    match (madd_vertical_ok(filt, sh), filt.len().div_ceil(2)) {
        (true, 9) => return stat_vertical_u16_madd::<9, DIS_ONLY>(r, d, filt, sh, w, line),
        (true, 5) => return stat_vertical_u16_madd::<5, DIS_ONLY>(r, d, filt, sh, w, line),
        (true, 3) => return stat_vertical_u16_madd::<3, DIS_ONLY>(r, d, filt, sh, w, line),
        (true, 2) => return stat_vertical_u16_madd::<2, DIS_ONLY>(r, d, filt, sh, w, line),
        _ => {}
    }
    let k = StatU16Consts {
        mu_round: _mm512_set1_epi32(sh.mu_round as i32),
        mu_shift: _mm_cvtsi32_si128(sh.mu_shift as i32),
        sq_round: _mm512_set1_epi64(sh.sq_round as i64),
        sq_shift: _mm_cvtsi32_si128(sh.sq_shift as i32),
        low16: _mm512_set1_epi32(0xffff),
    };
    let w16 = w / 16 * 16;
    for j in (0..w16).step_by(16) {
        stat_vertical_u16_block::<false, DIS_ONLY>(r, d, filt, j, 16, &k, line);
    }
    if w16 < w {
        stat_vertical_u16_block::<true, DIS_ONLY>(r, d, filt, w16, w - w16, &k, line);
    }
}

/// Columns `j .. j + n` (`n <= 16`, `n < 16` only with `TAIL`) of the 16-bit vertical pass:
/// 32-bit `f * x` (exact, below 2^32), their 32-bit sums for the means and 64-bit products with
/// `x` for the squares (even/odd lane pairs); requires `j + n <=` every row's length and
/// `PAD + j + n <=` every line's length.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512cd,avx512dq")]
fn stat_vertical_u16_block<const TAIL: bool, const DIS_ONLY: bool>(
    r: &[&[u16]],
    d: &[&[u16]],
    filt: &[u16],
    j: usize,
    n: usize,
    k: &StatU16Consts,
    line: &mut StatLine,
) {
    let z = _mm512_setzero_si512();
    let (mut mu1, mut mu2) = (z, z);
    let (mut xx, mut yy, mut xy) = ((z, z), (z, z), (z, z));
    for ((&f, r), d) in filt.iter().zip(r).zip(d) {
        let f = _mm512_set1_epi32(f as i32);
        assert!(r.len().min(d.len()) >= j + n);
        // SAFETY: both rows hold at least j + n values (checked just above), and the loads read
        // n values from column j (16 = n without TAIL).
        let (x, y) = unsafe {
            (
                load_u16x16::<TAIL>(r.as_ptr().add(j), n),
                load_u16x16::<TAIL>(d.as_ptr().add(j), n),
            )
        };
        let fx = _mm512_mullo_epi32(f, x);
        let fy = _mm512_mullo_epi32(f, y);
        if !DIS_ONLY {
            mu1 = _mm512_add_epi32(mu1, fx);
            add_wide(&mut xx, mul_wide(fx, x));
        }
        mu2 = _mm512_add_epi32(mu2, fy);
        add_wide(&mut yy, mul_wide(fy, y));
        add_wide(&mut xy, mul_wide(fx, y));
    }
    let mu = |v: __m512i| {
        _mm512_and_si512(
            _mm512_srl_epi32(_mm512_add_epi32(v, k.mu_round), k.mu_shift),
            k.low16,
        )
    };
    let sq = |(e, o): (__m512i, __m512i)| {
        merge_even_odd(
            _mm512_srl_epi64(_mm512_add_epi64(e, k.sq_round), k.sq_shift),
            _mm512_srl_epi64(_mm512_add_epi64(o, k.sq_round), k.sq_shift),
        )
    };
    let at = PAD + j;
    if !DIS_ONLY {
        store_u32x16(&mut line.mu1[at..], mu(mu1), n);
        store_u32x16(&mut line.xx[at..], sq(xx), n);
    }
    store_u32x16(&mut line.mu2[at..], mu(mu2), n);
    store_u32x16(&mut line.yy[at..], sq(yy), n);
    store_u32x16(&mut line.xy[at..], sq(xy), n);
}

/// The constants of the 16-bit `madd` vertical passes besides their tap pairs: the operands'
/// offset and the rounding of the sums into means and squares.
struct U16Madd {
    offset: __m512i,
    flip: __m512i,
    mu_round: __m512i,
    mu_shift: __m128i,
    sq_round: __m512i,
    sq_shift: __m128i,
    /// `16 - sq_shift`: where a square's high half lands after the rounding shift.
    hi_shift: __m128i,
    low16: __m512i,
}

impl U16Madd {
    #[inline]
    #[target_feature(enable = "avx512f,avx512bw,avx512cd,avx512dq")]
    fn new(filt: &[u16], sh: StatShifts) -> Self {
        U16Madd {
            offset: madd_offset(filt),
            flip: _mm512_set1_epi16(i16::MIN),
            mu_round: _mm512_set1_epi32(sh.mu_round as i32),
            mu_shift: _mm_cvtsi32_si128(sh.mu_shift as i32),
            sq_round: _mm512_set1_epi32(sh.sq_round as i32),
            sq_shift: _mm_cvtsi32_si128(sh.sq_shift as i32),
            hi_shift: _mm_cvtsi32_si128(16 - sh.sq_shift as i32),
            low16: _mm512_set1_epi32(0xffff),
        }
    }

    /// A mean's sum (offset included) rounded, shifted and kept to 16 bits.
    #[inline]
    #[target_feature(enable = "avx512f,avx512bw,avx512cd,avx512dq")]
    fn mean(&self, v: __m512i) -> __m512i {
        _mm512_and_si512(
            _mm512_srl_epi32(_mm512_add_epi32(v, self.mu_round), self.mu_shift),
            self.low16,
        )
    }

    /// A square from the sums of its low and high halves, rounded and shifted.
    #[inline]
    #[target_feature(enable = "avx512f,avx512bw,avx512cd,avx512dq")]
    fn sq(&self, lo: __m512i, hi: __m512i) -> __m512i {
        _mm512_add_epi32(
            _mm512_sll_epi32(hi, self.hi_shift),
            _mm512_srl_epi32(_mm512_add_epi32(lo, self.sq_round), self.sq_shift),
        )
    }
}

/// The constants of [`stat_vertical_u16_madd_block`].
struct StatU16MaddConsts<const PAIRS: usize> {
    pairs: [__m512i; PAIRS],
    m: U16Madd,
}

/// The 16-bit vertical pass in 16-bit `madd` lanes, 32 columns per step, two rows per `madd`
/// (the scale-0 8-bit method): samples offset by -2^15 into `i16` for the means; each square or
/// product split into its low and high 16 bits (`mullo`/`mulhi` of the interleaved rows), each
/// half offset likewise and filtered on its own, the offset `2^15 * sum(taps)` added back. Every
/// such sum is below 2^32 (taps summing to at most 2^16), so its wrapping `i32` value is exact,
/// and the scalar's 64-bit `(2^16 * hi + lo + sq_round) >> sq_shift`, kept to 32 bits, is
/// `(hi << (16 - sq_shift)) + ((lo + sq_round) >> sq_shift)` in wrapping 32-bit arithmetic (`lo
/// + sq_round` stays below 2^32). Requires [`madd_vertical_ok`] and the caller's length checks.
#[target_feature(enable = "avx512f,avx512bw,avx512cd,avx512dq")]
fn stat_vertical_u16_madd<const PAIRS: usize, const DIS_ONLY: bool>(
    r: &[&[u16]],
    d: &[&[u16]],
    filt: &[u16],
    sh: StatShifts,
    w: usize,
    line: &mut StatLine,
) {
    let k = StatU16MaddConsts::<PAIRS> {
        pairs: tap_pairs(filt),
        m: U16Madd::new(filt, sh),
    };
    let taps = filt.len();
    let w32 = w / 32 * 32;
    for j in (0..w32).step_by(32) {
        stat_vertical_u16_madd_block::<PAIRS, false, DIS_ONLY>(r, d, taps, j, 32, &k, line);
    }
    if w32 < w {
        stat_vertical_u16_madd_block::<PAIRS, true, DIS_ONLY>(r, d, taps, w32, w - w32, &k, line);
    }
}

/// Columns `j .. j + n` (`n <= 32`, `n < 32` only with `TAIL`) of [`stat_vertical_u16_madd`];
/// requires `j + n <=` every row's length and `PAD + j + n <=` every line's length.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512cd,avx512dq")]
fn stat_vertical_u16_madd_block<const PAIRS: usize, const TAIL: bool, const DIS_ONLY: bool>(
    r: &[&[u16]],
    d: &[&[u16]],
    taps: usize,
    j: usize,
    n: usize,
    k: &StatU16MaddConsts<PAIRS>,
    line: &mut StatLine,
) {
    let o = k.m.offset;
    // Sums of the interleaved lo (columns 0-3, 8-11, …) and hi lanes: means, then the low and
    // high halves of the three squares.
    let (mut mu1, mut mu2) = ((o, o), (o, o));
    let (mut xxl, mut xxh, mut yyl, mut yyh) = ((o, o), (o, o), (o, o), (o, o));
    let (mut xyl, mut xyh) = ((o, o), (o, o));
    for (i, &c) in k.pairs.iter().enumerate() {
        let (ka, kb) = (2 * i, (2 * i + 1).min(taps - 1));
        let (ra, rb, da, db) = (r[ka], r[kb], d[ka], d[kb]);
        assert!(ra.len().min(rb.len()).min(da.len()).min(db.len()) >= j + n);
        // SAFETY: each row holds at least j + n values (checked just above), and the loads read
        // n values from column j (32 = n without TAIL).
        let (xa, xb, ya, yb) = unsafe {
            (
                load_u16x32::<TAIL>(ra.as_ptr().add(j), n),
                load_u16x32::<TAIL>(rb.as_ptr().add(j), n),
                load_u16x32::<TAIL>(da.as_ptr().add(j), n),
                load_u16x32::<TAIL>(db.as_ptr().add(j), n),
            )
        };
        // The two rows interleaved once; squares and products taken in that order.
        let (xl, xh) = (_mm512_unpacklo_epi16(xa, xb), _mm512_unpackhi_epi16(xa, xb));
        let (yl, yh) = (_mm512_unpacklo_epi16(ya, yb), _mm512_unpackhi_epi16(ya, yb));
        let acc = |s: &mut (__m512i, __m512i), lo: __m512i, hi: __m512i| {
            let (lo, hi) = (
                _mm512_xor_si512(lo, k.m.flip),
                _mm512_xor_si512(hi, k.m.flip),
            );
            s.0 = madd_acc(s.0, lo, c);
            s.1 = madd_acc(s.1, hi, c);
        };
        let (mlo, mhi) = (_mm512_mullo_epi16, _mm512_mulhi_epu16);
        if !DIS_ONLY {
            acc(&mut mu1, xl, xh);
            acc(&mut xxl, mlo(xl, xl), mlo(xh, xh));
            acc(&mut xxh, mhi(xl, xl), mhi(xh, xh));
        }
        acc(&mut mu2, yl, yh);
        acc(&mut yyl, mlo(yl, yl), mlo(yh, yh));
        acc(&mut yyh, mhi(yl, yl), mhi(yh, yh));
        acc(&mut xyl, mlo(xl, yl), mlo(xh, yh));
        acc(&mut xyh, mhi(xl, yl), mhi(xh, yh));
    }
    let (mean, sq) = (|v| k.m.mean(v), |lo, hi| k.m.sq(lo, hi));
    let out = |dst: &mut Vec<u32>, v: [__m512i; 2]| {
        store_u32x16(&mut dst[PAD + j..], v[0], n);
        if n > 16 {
            store_u32x16(&mut dst[PAD + j + 16..], v[1], n - 16);
        }
    };
    let means = |(lo, hi): (__m512i, __m512i)| in_column_order(lo, hi).map(mean);
    let squares = |l: (__m512i, __m512i), h: (__m512i, __m512i)| {
        let (l, h) = (in_column_order(l.0, l.1), in_column_order(h.0, h.1));
        [sq(l[0], h[0]), sq(l[1], h[1])]
    };
    if !DIS_ONLY {
        out(&mut line.mu1, means(mu1));
        out(&mut line.xx, squares(xxl, xxh));
    }
    out(&mut line.mu2, means(mu2));
    out(&mut line.yy, squares(yyl, yyh));
    out(&mut line.xy, squares(xyl, xyh));
}

/// Two output rows of [`stat_vertical_u16_avx512`] in one pass: `r` and `d` hold `filt.len() + 1`
/// rows, `lines[0]` gets the statistic of rows `0..taps` and `lines[1]` that of rows
/// `1..=taps`. Where the `madd` method applies (and the second line's tap pairs `(f[2i - 1],
/// f[2i])` sum below 2^16 too), each row pair is interleaved, offset, squared and split once and
/// weighed by both lines' taps, 16 columns per step (interleaved by one permute, so the sums come
/// out in column order); elsewhere two single passes.
#[allow(clippy::too_many_arguments)]
#[target_feature(enable = "avx512f,avx512bw,avx512cd,avx512dq")]
fn stat_vertical_u16_x2_avx512<const DIS_ONLY: bool>(
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
    assert!(lines
        .iter()
        .flat_map(|l| [&l.mu1, &l.mu2, &l.xx, &l.yy, &l.xy])
        .all(|b| b.len() >= PAD + w));
    let [l0, l1] = lines;
    if madd_vertical_x2_ok(filt, sh) {
        match taps.div_ceil(2) {
            9 => return stat_vertical_u16_x2_madd::<9, DIS_ONLY>(r, d, filt, sh, w, l0, l1),
            5 => return stat_vertical_u16_x2_madd::<5, DIS_ONLY>(r, d, filt, sh, w, l0, l1),
            3 => return stat_vertical_u16_x2_madd::<3, DIS_ONLY>(r, d, filt, sh, w, l0, l1),
            2 => return stat_vertical_u16_x2_madd::<2, DIS_ONLY>(r, d, filt, sh, w, l0, l1),
            _ => {}
        }
    }
    stat_vertical_u16_avx512::<DIS_ONLY>(&r[..taps], &d[..taps], filt, sh, w, l0, acc);
    stat_vertical_u16_avx512::<DIS_ONLY>(&r[1..], &d[1..], filt, sh, w, l1, acc);
}

/// The constants of [`stat_vertical_u16_x2_block`].
struct StatU16X2Consts<const PAIRS: usize> {
    /// The first line's tap pairs ([`tap_pairs`]) and the second's ([`odd_tap_pairs`]).
    pairs: [(__m512i, __m512i); PAIRS],
    /// Interleaves 16 `u16` of two rows into (first, second) pairs, in column order.
    zip: __m512i,
    m: U16Madd,
}

/// [`stat_vertical_u16_x2_avx512`] by the `madd` method of [`stat_vertical_u16_madd`] (whose
/// bounds apply to both lines: odd taps, `PAIRS` pairs covering `taps + 1` rows).
#[target_feature(enable = "avx512f,avx512bw,avx512cd,avx512dq")]
fn stat_vertical_u16_x2_madd<const PAIRS: usize, const DIS_ONLY: bool>(
    r: &[&[u16]],
    d: &[&[u16]],
    filt: &[u16],
    sh: StatShifts,
    w: usize,
    l0: &mut StatLine,
    l1: &mut StatLine,
) {
    // Lane 2c takes value c of the first row, lane 2c + 1 value c of the second (index 32 + c).
    const ZIP: [i16; 32] = {
        let mut z = [0i16; 32];
        let mut k = 0;
        while k < 32 {
            z[k] = (k / 2 + (k % 2) * 32) as i16;
            k += 1;
        }
        z
    };
    let (even, odd) = (tap_pairs::<PAIRS>(filt), odd_tap_pairs::<PAIRS>(filt));
    let k = StatU16X2Consts::<PAIRS> {
        pairs: from_fn(|i| (even[i], odd[i])),
        // SAFETY: `ZIP` holds 32 `i16` (64 bytes); the load is unaligned.
        zip: unsafe { _mm512_loadu_si512(ZIP.as_ptr().cast()) },
        m: U16Madd::new(filt, sh),
    };
    let w16 = w / 16 * 16;
    for j in (0..w16).step_by(16) {
        stat_vertical_u16_x2_block::<PAIRS, false, DIS_ONLY>(r, d, j, 16, &k, l0, l1);
    }
    if w16 < w {
        stat_vertical_u16_x2_block::<PAIRS, true, DIS_ONLY>(r, d, w16, w - w16, &k, l0, l1);
    }
}

/// Columns `j .. j + n` (`n <= 16`, `n < 16` only with `TAIL`) of [`stat_vertical_u16_x2_madd`];
/// requires `j + n <=` every row's length and `PAD + j + n <=` every line's length.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512cd,avx512dq")]
fn stat_vertical_u16_x2_block<const PAIRS: usize, const TAIL: bool, const DIS_ONLY: bool>(
    r: &[&[u16]],
    d: &[&[u16]],
    j: usize,
    n: usize,
    k: &StatU16X2Consts<PAIRS>,
    l0: &mut StatLine,
    l1: &mut StatLine,
) {
    let o = k.m.offset;
    // (first line, second line) sums: means, then the low and high halves of the squares.
    let (mut mu1, mut mu2) = ((o, o), (o, o));
    let (mut xxl, mut xxh, mut yyl, mut yyh) = ((o, o), (o, o), (o, o), (o, o));
    let (mut xyl, mut xyh) = ((o, o), (o, o));
    for i in 0..PAIRS {
        let (c0, c1) = k.pairs[i];
        let (ra, rb, da, db) = (r[2 * i], r[2 * i + 1], d[2 * i], d[2 * i + 1]);
        assert!(ra.len().min(rb.len()).min(da.len()).min(db.len()) >= j + n);
        // SAFETY: each row holds at least j + n values (checked just above), and the loads read
        // n values from column j (16 = n without TAIL).
        let (xa, xb, ya, yb) = unsafe {
            (
                load_u16x16_low::<TAIL>(ra.as_ptr().add(j), n),
                load_u16x16_low::<TAIL>(rb.as_ptr().add(j), n),
                load_u16x16_low::<TAIL>(da.as_ptr().add(j), n),
                load_u16x16_low::<TAIL>(db.as_ptr().add(j), n),
            )
        };
        let x = _mm512_permutex2var_epi16(xa, k.zip, xb);
        let y = _mm512_permutex2var_epi16(ya, k.zip, yb);
        let flip = |v: __m512i| _mm512_xor_si512(v, k.m.flip);
        macro_rules! acc2 {
            ($s:ident, $v:expr) => {{
                let v = flip($v);
                $s.0 = madd_acc($s.0, v, c0);
                $s.1 = madd_acc($s.1, v, c1);
            }};
        }
        let (mlo, mhi) = (_mm512_mullo_epi16, _mm512_mulhi_epu16);
        if !DIS_ONLY {
            acc2!(mu1, x);
            acc2!(xxl, mlo(x, x));
            acc2!(xxh, mhi(x, x));
        }
        acc2!(mu2, y);
        acc2!(yyl, mlo(y, y));
        acc2!(yyh, mhi(y, y));
        acc2!(xyl, mlo(x, y));
        acc2!(xyh, mhi(x, y));
    }
    let (mean, sq) = (|v| k.m.mean(v), |lo, hi| k.m.sq(lo, hi));
    for (line, pick) in [(l0, 0), (l1, 1)] {
        let get = |p: (__m512i, __m512i)| if pick == 0 { p.0 } else { p.1 };
        let at = PAD + j;
        if !DIS_ONLY {
            store_u32x16(&mut line.mu1[at..], mean(get(mu1)), n);
            store_u32x16(&mut line.xx[at..], sq(get(xxl), get(xxh)), n);
        }
        store_u32x16(&mut line.mu2[at..], mean(get(mu2)), n);
        store_u32x16(&mut line.yy[at..], sq(get(yyl), get(yyh)), n);
        store_u32x16(&mut line.xy[at..], sq(get(xyl), get(xyh)), n);
    }
}

// ---------------------------------------------------------------------------------------------
// Statistic: horizontal pass and VIF terms
// ---------------------------------------------------------------------------------------------

/// Output columns per chunk of [`stat_horizontal_madd`] (its 16-bit line copies are
/// [`WideAcc::narrow`]).
const MADD_CHUNK: usize = 256;
// The copies hold values up to the chunk rounded up to a vector, plus the filter's reach.
const _: () = assert!(
    MADD_CHUNK.is_multiple_of(32)
        && MADD_CHUNK + 2 * PAD + 16 <= NARROW_LINE
        && MADD_CHUNK + 32 <= NARROW_LINE
);

/// What a horizontal pass does with the reference side of its pixels (ladder scoring,
/// [`super::SplitKernels`]).
enum RefSide<'a> {
    /// Everything from the five lines (a rendition scored alone).
    Own,
    /// Everything from the five lines, and each pixel's filtered mean `mu1` and `sigma1_sq`
    /// written to the row (in the pass's own order: per 32 columns from a multiple of 32, the
    /// 16 even then the 16 odd ones on the `madd` path, 16 in column order on the other).
    Store(RefRowMut<'a>),
    /// The distorted side only: `mu1` and `sigma1_sq` read from a row a `Store` pass wrote for
    /// the same reference (the lines' `mu1` and `xx` are not read), and only the sums that
    /// depend on the distorted picture (`num_log`, `num_non_log`) added.
    Load(RefRow<'a>),
}

impl RefSide<'_> {
    /// Checks that a row holds `w` columns rounded up to 32.
    fn fits(&self, w: usize) -> bool {
        let n = w.div_ceil(32) * 32;
        match self {
            RefSide::Own => true,
            RefSide::Store(r) => r.mu1.len() >= n && r.s1.len() >= n,
            RefSide::Load(r) => r.mu1.len() >= n && r.s1.len() >= n,
        }
    }

    /// Whether the lines' reference side (`mu1`, `xx`) is read.
    fn reads_reference_lines(&self) -> bool {
        !matches!(self, RefSide::Load(_))
    }

    /// Adds `N` groups of 16 pixels' terms, group `i` at row position `at[i]`, storing or
    /// loading their reference side as the mode says.
    #[inline]
    #[target_feature(enable = "avx512f,avx512bw,avx512cd,avx512dq")]
    fn add<const N: usize>(
        &mut self,
        at: [usize; N],
        terms: &mut TermSums<'_>,
        g: [Stats16; N],
        sums: &mut VifSums,
    ) {
        match self {
            RefSide::Own => {
                terms.add(g, sums);
            }
            RefSide::Store(row) => {
                let s1 = terms.add(g, sums);
                for i in 0..N {
                    // SAFETY: `fits` checked that the row holds at + 16 values (at + 16 <= w
                    // rounded up to 32); the stores are unaligned.
                    unsafe {
                        _mm512_storeu_si512(row.mu1.as_mut_ptr().add(at[i]).cast(), g[i].mu1);
                        _mm512_storeu_si512(row.s1.as_mut_ptr().add(at[i]).cast(), s1[i]);
                    }
                }
            }
            RefSide::Load(row) => {
                // SAFETY: as for the stores above; the loads are unaligned.
                let load =
                    |v: *const u8, i: usize| unsafe { _mm512_loadu_si512(v.add(4 * at[i]).cast()) };
                let (p_mu1, p_s1) = (row.mu1.as_ptr().cast(), row.s1.as_ptr().cast());
                let (mu1, s1) = (from_fn(|i| load(p_mu1, i)), from_fn(|i| load(p_s1, i)));
                terms.add_with(mu1, s1, g, false, sums);
            }
        }
    }
}

/// One group of 16 pixels' filtered statistics, as [`TermSums::add`] takes them: the means
/// (Q16 sums), the squares rounded by 16 bits (kept to 32 bits), and the lanes that are pixels.
#[derive(Clone, Copy)]
struct Stats16 {
    mu1: __m512i,
    mu2: __m512i,
    xx: __m512i,
    yy: __m512i,
    xy: __m512i,
    valid: __mmask16,
}

/// The horizontal pass with `side`'s handling of the reference side; `false` (with the sums
/// partial) where a split pass (`Store`, `Load`) cannot run: a filter with no vector path, a
/// gain limit outside the vector log path's range, a row too short, or 16-bit lines whose
/// means are not 16-bit (which the vertical passes never produce).
#[allow(clippy::too_many_arguments)]
#[target_feature(enable = "avx512f,avx512bw,avx512cd,avx512dq")]
fn stat_horizontal_avx512(
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
    // The 16-bit path, specialised per tap-pair count (libvmaf's 17, 9, 5 and 3 taps) so its
    // tap loop unrolls; any other filter goes to the scalar kernel.
    let done = match (madd_taps_ok(filt), filt.len().div_ceil(2)) {
        (true, 9) => stat_horizontal_madd::<9>(line, filt, w, acc, &mut terms, sums, side),
        (true, 5) => stat_horizontal_madd::<5>(line, filt, w, acc, &mut terms, sums, side),
        (true, 3) => stat_horizontal_madd::<3>(line, filt, w, acc, &mut terms, sums, side),
        (true, 2) => stat_horizontal_madd::<2>(line, filt, w, acc, &mut terms, sums, side),
        _ if filt.len() <= 2 * PAD + 1 => {
            stat_horizontal_wide(line, filt, w, &mut terms, sums, side)
        }
        _ => 0,
    };
    terms.flush(sums);
    if done < w {
        if !own {
            return false;
        }
        scalar::stat_horizontal_cols(line, filt, done..w, gain_limit, log2, acc, sums);
    }
    true
}

/// The horizontal filter with 32-bit products for the means and 64-bit sums of the squares
/// (even/odd lane pairs), 16 columns per step, for any taps (up to `2 * PAD + 1`) and line
/// values: libvmaf's scale-3 filter, whose middle tap is no `i16`. Returns the columns done
/// (all `w`).
#[target_feature(enable = "avx512f,avx512bw,avx512cd,avx512dq")]
fn stat_horizontal_wide(
    line: &StatLine,
    filt: &[u16],
    w: usize,
    terms: &mut TermSums<'_>,
    sums: &mut VifSums,
    side: &mut RefSide<'_>,
) -> usize {
    let w16 = w / 16 * 16;
    for j in (0..w16).step_by(16) {
        stat_horizontal_wide_block(line, filt, j, 16, terms, sums, side);
    }
    if w16 < w {
        stat_horizontal_wide_block(line, filt, w16, w - w16, terms, sums, side);
    }
    w
}

/// Output columns `j .. j + n` (`n <= 16`) of [`stat_horizontal_wide`].
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512cd,avx512dq")]
fn stat_horizontal_wide_block(
    line: &StatLine,
    filt: &[u16],
    j: usize,
    n: usize,
    terms: &mut TermSums<'_>,
    sums: &mut VifSums,
    side: &mut RefSide<'_>,
) {
    let start = PAD - filt.len() / 2;
    // Column j + l reads the values start + j + l + k for k < taps.
    let end = start + j + n + filt.len() - 1;
    let bufs = [&line.mu1, &line.mu2, &line.xx, &line.yy, &line.xy];
    assert!(bufs.iter().all(|b| b.len() >= end));
    let [p_mu1, p_mu2, p_xx, p_yy, p_xy] = bufs.map(|b| b.as_ptr());
    let lanes = mask16(n);
    // The reference lines are not read in a `Load` pass (they hold no values there).
    let ref_lanes = if side.reads_reference_lines() {
        lanes
    } else {
        0
    };
    let z = _mm512_setzero_si512();
    let (mut mu1, mut mu2) = (z, z);
    let (mut xx, mut yy, mut xy) = ((z, z), (z, z), (z, z));
    for (k, &f) in filt.iter().enumerate() {
        let at = start + k + j;
        let f = _mm512_set1_epi32(f as i32);
        // SAFETY: the loads read the values at + 0 .. at + n, below end <= every buffer's
        // length (checked above).
        let (m1, m2, vxx, vyy, vxy) = unsafe {
            (
                load_u32x16_masked(p_mu1.add(at), ref_lanes),
                load_u32x16_masked(p_mu2.add(at), lanes),
                load_u32x16_masked(p_xx.add(at), ref_lanes),
                load_u32x16_masked(p_yy.add(at), lanes),
                load_u32x16_masked(p_xy.add(at), lanes),
            )
        };
        mu1 = _mm512_add_epi32(mu1, _mm512_mullo_epi32(f, m1));
        mu2 = _mm512_add_epi32(mu2, _mm512_mullo_epi32(f, m2));
        add_wide(&mut xx, mul_wide(vxx, f));
        add_wide(&mut yy, mul_wide(vyy, f));
        add_wide(&mut xy, mul_wide(vxy, f));
    }
    let round16 = _mm512_set1_epi64(1 << 15);
    // `(acc + 2^15) >> 16` of 64-bit sums, kept to 32 bits.
    let rsh16 = |(e, o): (__m512i, __m512i)| {
        merge_even_odd(
            _mm512_srli_epi64::<16>(_mm512_add_epi64(e, round16)),
            _mm512_srli_epi64::<16>(_mm512_add_epi64(o, round16)),
        )
    };
    let g = Stats16 {
        mu1,
        mu2,
        xx: rsh16(xx),
        yy: rsh16(yy),
        xy: rsh16(xy),
        valid: lanes,
    };
    side.add([j], terms, [g], sums);
}

/// Whether the taps suit [`stat_horizontal_madd`]: each below 2^15 (an `i16` multiplier), every
/// two consecutive ones summing below 2^16 (so no `madd` pair sum of offset values overflows),
/// all summing to at most 2^16 (so every filtered 16-bit half fits 32 bits), an odd count
/// within the padding.
fn madd_taps_ok(filt: &[u16]) -> bool {
    filt.iter().all(|&f| f < 1 << 15)
        && filt
            .windows(2)
            .all(|p| (p[0] as u32 + p[1] as u32) < 1 << 16)
        && filt.iter().map(|&f| f as u32).sum::<u32>() <= 1 << 16
        && filt.len() % 2 == 1
        && filt.len() <= 2 * PAD + 1
}

/// The horizontal filter in 16-bit lanes, the AVX2 peer's method 32 columns at a time: per chunk
/// of [`MADD_CHUNK`] columns, the line values (means, and the low and high 16 bits of the
/// squares) are copied offset by -2^15 into `i16` ([`WideAcc::narrow`]), two taps per
/// `_mm512_madd_epi16` with the offset added back as `2^15 * sum(taps)`. Every filtered 16-bit
/// half is below 2^32, so the wrapping `i32` sums equal it; the squares' 64-bit sums are
/// `hi * 2^16 + lo`, whose `(+ 2^15) >> 16` is `hi + ((lo + 2^15) >> 16)` in 32 bits
/// (`lo <= 65535 * 2^16`, so `lo + 2^15` stays below 2^32; the `lo` sums start from the 2^15).
/// One `madd` of a window of value pairs gives 16 even output columns with the taps paired
/// `(2i, 2i + 1)`, and 16 odd ones with them paired `(2i - 1, 2i)`; the VIF terms are formed on
/// those sets (order-free integer sums), two 32-column blocks at a time where the row has them,
/// the columns past the row's end masked off. A chunk whose means are not all 16-bit (which the
/// vertical passes never produce) goes to the scalar kernel (a split pass stops there). A `Load`
/// pass copies and filters only the distorted side's lines. Returns the columns done. Requires
/// [`madd_taps_ok`].
#[target_feature(enable = "avx512f,avx512bw,avx512cd,avx512dq")]
fn stat_horizontal_madd<const PAIRS: usize>(
    line: &StatLine,
    filt: &[u16],
    w: usize,
    acc: &mut WideAcc,
    terms: &mut TermSums<'_>,
    sums: &mut VifSums,
    side: &mut RefSide<'_>,
) -> usize {
    let taps = filt.len();
    let start = PAD - taps / 2;
    // Every output column j reads the line values start + j .. start + j + taps.
    let bufs = [&line.mu1, &line.mu2, &line.xx, &line.yy, &line.xy];
    assert!(taps <= 2 * PAD + 1 && bufs.iter().all(|b| b.len() >= start + w + taps - 1));
    assert_eq!(taps.div_ceil(2), PAIRS);
    let mt = MaddTaps::<PAIRS>::new(filt);
    let flip = _mm256_set1_epi16(i16::MIN);
    let not16 = _mm512_set1_epi32(!0xffff);
    let [p_mu1, p_mu2, p_xx, p_yy, p_xy] = bufs.map(|b| b.as_ptr());
    let own = matches!(side, RefSide::Own);
    let reference = side.reads_reference_lines();
    // 16-bit copies: mu1, mu2, xx lo/hi, yy lo/hi, xy lo/hi (taken out of `acc` so the scalar
    // fallback below may use the rest of it).
    let mut narrow = std::mem::take(&mut acc.narrow);
    assert!(narrow.len() >= NARROW_COPIES * NARROW_LINE);
    let mut done = w;
    for c0 in (0..w).step_by(MADD_CHUNK) {
        let cn = MADD_CHUNK.min(w - c0);
        // The values 0 .. m of the chunk (m = cn + taps - 1): the last odd column also reads
        // value m, times a zero tap, and the masked-off columns of a partial last vector read
        // up to cn rounded up to 32, plus taps; all inside the copies, which hold stale but
        // initialised values there.
        let m = cn + taps - 1;
        let mut wide_means = _mm512_setzero_si512();
        for i in (0..m).step_by(16) {
            let at = start + c0 + i;
            let lanes = mask16(m - i);
            // The reference lines are not read in a `Load` pass (they hold no values there).
            let ref_lanes = if reference { lanes } else { 0 };
            // SAFETY: the enabled lanes are the values at + 0 .. at + min(16, m - i), below
            // start + c0 + m <= start + w + taps - 1 <= every line's length (checked above).
            let v = unsafe {
                [
                    load_u32x16_masked(p_mu1.add(at), ref_lanes),
                    load_u32x16_masked(p_mu2.add(at), lanes),
                    load_u32x16_masked(p_xx.add(at), ref_lanes),
                    load_u32x16_masked(p_yy.add(at), lanes),
                    load_u32x16_masked(p_xy.add(at), lanes),
                ]
            };
            wide_means = _mm512_or_si512(wide_means, _mm512_or_si512(v[0], v[1]));
            // Values below 2^16 narrow exactly (truncation); -2^15 offset by flipping the top bit.
            let lo = |x: __m512i| _mm256_xor_si256(_mm512_cvtepi32_epi16(x), flip);
            let hi = |x: __m512i| lo(_mm512_srli_epi32::<16>(x));
            let out = [
                (reference, v[0], false),
                (true, v[1], false),
                (reference, v[2], false),
                (reference, v[2], true),
                (true, v[3], false),
                (true, v[3], true),
                (true, v[4], false),
                (true, v[4], true),
            ];
            for (q, (used, x, high)) in out.into_iter().enumerate() {
                if !used {
                    continue;
                }
                let o = if high { hi(x) } else { lo(x) };
                let d = &mut narrow[q * NARROW_LINE + i..][..16];
                // SAFETY: `d` holds 16 `i16` (32 bytes); the store is unaligned.
                unsafe { _mm256_storeu_si256(d.as_mut_ptr().cast(), o) };
            }
        }
        if _mm512_test_epi32_mask(wide_means, not16) != 0 {
            if !own {
                done = c0;
                break;
            }
            let cols = c0..c0 + cn;
            scalar::stat_horizontal_cols(line, filt, cols, terms.gain_limit, terms.log2, acc, sums);
            continue;
        }
        let copies: [&[i16]; NARROW_COPIES] =
            from_fn(|q| &narrow[q * NARROW_LINE..][..NARROW_LINE]);
        madd_terms(copies, c0, cn, &mt, reference, terms, sums, side);
    }
    acc.narrow = narrow;
    done
}

/// The constants of [`madd_terms`]: the tap pairs of the even and the odd output columns, and
/// the offset the `-2^15` of every operand takes away.
struct MaddTaps<const PAIRS: usize> {
    pairs: [__m512i; PAIRS],
    odd: [__m512i; PAIRS],
    offset: __m512i,
    /// `offset` plus the squares' rounding constant 2^15: where the low halves' sums start.
    offset_lo: __m512i,
}

impl<const PAIRS: usize> MaddTaps<PAIRS> {
    #[inline]
    #[target_feature(enable = "avx512f,avx512bw,avx512cd,avx512dq")]
    fn new(filt: &[u16]) -> Self {
        let offset = madd_offset(filt);
        MaddTaps {
            pairs: tap_pairs(filt),
            odd: odd_tap_pairs(filt),
            offset,
            offset_lo: _mm512_add_epi32(offset, _mm512_set1_epi32(1 << 15)),
        }
    }
}

/// The `madd` filter of [`stat_horizontal_madd`] and the terms of the output columns `c0 .. c0 +
/// cn`, from 16-bit line copies (the means, the squares' low and high halves, offset by -2^15):
/// `copies[q]` holds copy `q` from the first value column `c0` reads on, at least `cn` rounded
/// up to 32, plus 32, values (the masked-off columns of a partial last vector read past the
/// row, values that must be initialised but whose terms are dropped). Without `reference` the
/// reference copies (0, 2, 3) are not read.
#[allow(clippy::too_many_arguments)]
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512cd,avx512dq")]
fn madd_terms<const PAIRS: usize>(
    copies: [&[i16]; NARROW_COPIES],
    c0: usize,
    cn: usize,
    mt: &MaddTaps<PAIRS>,
    reference: bool,
    terms: &mut TermSums<'_>,
    sums: &mut VifSums,
    side: &mut RefSide<'_>,
) {
    assert!(PAIRS <= PAD + 1 && copies.iter().all(|c| c.len() >= cn.div_ceil(32) * 32 + 32));
    // The even and odd columns' statistics of jj .. jj + 32 (those past the row masked off).
    // A macro, not a closure: LLVM left the closure out of line, its results passed through the
    // stack.
    macro_rules! block {
        ($jj:expr) => {{
            let jj: usize = $jj;
            // Filtered sums of copy q for the even (.0) and odd (.1) columns of jj .. jj + 32.
            // Window i (the values jj + 2i .. jj + 2i + 32, one unaligned load: cheaper than
            // shifting two vectors on the shuffle port, which the `madd`s share on Intel) holds
            // values jj + 2l + 2i and jj + 2l + 2i + 1 in lane l, which even column jj + 2l
            // weighs with taps (2i, 2i + 1) and odd column jj + 2l + 1 with taps (2i - 1, 2i).
            // The squares' low halves (copies 2, 4 and 6) start from `offset_lo`.
            let filtered = |q: usize| {
                let base = copies[q].as_ptr();
                let init = if matches!(q, 2 | 4 | 6) {
                    mt.offset_lo
                } else {
                    mt.offset
                };
                let (mut e, mut o) = (init, init);
                for i in 0..PAIRS {
                    // SAFETY: the values read are jj + 2i .. jj + 2i + 32 (2i <= 2 * PAD = 16),
                    // below jj + 64 <= (cn rounded up to 32) + 32 <= the copy's length (asserted
                    // above).
                    let win = unsafe { load_i16x32(base.add(jj + 2 * i)) };
                    e = madd_acc(e, win, mt.pairs[i]);
                    o = madd_acc(o, win, mt.odd[i]);
                }
                (e, o)
            };
            // (hi * 2^16 + lo + 2^15) >> 16, kept to 32 bits (`lo` holds the 2^15).
            let sq = |lo: __m512i, hi: __m512i| _mm512_add_epi32(hi, _mm512_srli_epi32::<16>(lo));
            let z = _mm512_setzero_si512();
            let ((m1, (xl, xh)), m2) = if reference {
                ((filtered(0), (filtered(2), filtered(3))), filtered(1))
            } else {
                (((z, z), ((z, z), (z, z))), filtered(1))
            };
            let (yl, yh) = (filtered(4), filtered(5));
            let (pl, ph) = (filtered(6), filtered(7));
            // Even columns jj + 2l are in the row while 2l < cn - jj, odd ones jj + 2l + 1 while
            // 2l + 1 < cn - jj.
            let left = cn - jj;
            let even = Stats16 {
                mu1: m1.0,
                mu2: m2.0,
                xx: sq(xl.0, xh.0),
                yy: sq(yl.0, yh.0),
                xy: sq(pl.0, ph.0),
                valid: mask16(left.div_ceil(2)),
            };
            let odd = Stats16 {
                mu1: m1.1,
                mu2: m2.1,
                xx: sq(xl.1, xh.1),
                yy: sq(yl.1, yh.1),
                xy: sq(pl.1, ph.1),
                valid: mask16(left / 2),
            };
            [even, odd]
        }};
    }
    // Two blocks' terms at a time where the row has them: four independent groups in flight
    // (measured faster than two).
    let mut jj = 0;
    while jj < cn {
        let at = c0 + jj;
        if jj + 32 < cn {
            let [a, b] = block!(jj);
            let [c, d] = block!(jj + 32);
            side.add([at, at + 16, at + 32, at + 48], terms, [a, b, c, d], sums);
            jj += 64;
        } else {
            side.add([at, at + 16], terms, block!(jj), sums);
            jj += 32;
        }
    }
}

/// 32 `i16`.
///
/// # Safety
/// `p` must be valid for reading 32 `i16`.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512cd,avx512dq")]
unsafe fn load_i16x32(p: *const i16) -> __m512i {
    // SAFETY: the caller guarantees 64 readable bytes; the load is unaligned.
    unsafe { _mm512_loadu_si512(p.cast()) }
}

/// The VIF terms of 16 pixels at a time from their filtered statistics, accumulated in vector
/// lanes until [`TermSums::flush`] (integer sums: the order is free).
struct TermSums<'a> {
    gain_limit: f64,
    log2: &'a [u16; LOG2_TABLE_LEN],
    /// [`tables::log2_compact`] when `log2` is [`tables::log2_table`] (always, but the kernels
    /// take any table).
    compact: Option<&'static [u16; LOG2_COMPACT_LEN]>,
    /// Whether the vector log path is exact for this gain limit (see `LogTerms`).
    vector_log: bool,
    /// The arithmetic `log2` (with `compact`): [`tables::log2_fast_consts`] in registers.
    fast: FastLog2,
    /// Per-lane sums of the non-log terms (64-bit lanes) and their count.
    non_log: __m512i,
    non_log_count: i64,
    /// Per-lane sums of the log terms (64-bit lanes), and the latest ones in 32-bit lanes
    /// (`*_32`, moved into the 64-bit sums every [`TermSums::WIDEN_EVERY`] vectors).
    den_log: __m512i,
    num_log: __m512i,
    den_log_32: __m512i,
    num_log_32: __m512i,
    /// Vectors added to the 32-bit lanes since they were last moved.
    pending: u32,
}

impl<'a> TermSums<'a> {
    /// Largest gain limit for which `g * g * sigma1_sq` (`sigma1_sq < 2^31`) stays below 2^52,
    /// so its `double` is an integer-exact product truncated like the scalar's; libvmaf's option
    /// allows at most 100.
    const MAX_GAIN_LIMIT: f64 = 1024.0;

    /// Vectors of log terms the 32-bit lane sums take before they move to the 64-bit ones: a
    /// lane's `den_log` term is in `[0, 15 * 2048]` and its `num_log` term in `[0, 35 * 2048]`
    /// (`log2` of values in `[2^17, 2^52)`), so 8192 of them stay below 2^31.
    const WIDEN_EVERY: u32 = 8192;

    /// Moves the 32-bit lane sums of the log terms into the 64-bit ones.
    #[inline]
    #[target_feature(enable = "avx512f,avx512bw,avx512cd,avx512dq")]
    fn widen(&mut self) {
        let z = _mm512_setzero_si512();
        self.den_log = _mm512_add_epi64(self.den_log, widen_sum_i32(self.den_log_32));
        self.num_log = _mm512_add_epi64(self.num_log, widen_sum_i32(self.num_log_32));
        (self.den_log_32, self.num_log_32, self.pending) = (z, z, 0);
    }

    #[inline]
    #[target_feature(enable = "avx512f,avx512bw,avx512cd,avx512dq")]
    fn new(gain_limit: f64, log2: &'a [u16; LOG2_TABLE_LEN]) -> Self {
        let z = _mm512_setzero_si512();
        let compact = std::ptr::eq(log2, tables::log2_table()).then(tables::log2_compact);
        TermSums {
            gain_limit,
            log2,
            compact,
            vector_log: (0.0..=Self::MAX_GAIN_LIMIT).contains(&gain_limit),
            fast: FastLog2::new(),
            non_log: z,
            non_log_count: 0,
            den_log: z,
            num_log: z,
            den_log_32: z,
            num_log_32: z,
            pending: 0,
        }
    }

    /// Adds the lane sums to `sums`.
    #[inline]
    #[target_feature(enable = "avx512f,avx512bw,avx512cd,avx512dq")]
    fn flush(&mut self, sums: &mut VifSums) {
        self.widen();
        sums.num_non_log += _mm512_reduce_add_epi64(self.non_log);
        sums.den_non_log += self.non_log_count;
        sums.den_log += _mm512_reduce_add_epi64(self.den_log);
        sums.num_log += _mm512_reduce_add_epi64(self.num_log);
    }

    /// Adds the terms of `N` groups of 16 pixels (each group's `valid` lanes): `mu1`, `mu2` are
    /// the filtered means (Q16 sums, `u32`), `xx`, `yy`, `xy` the filtered squares already
    /// rounded by 16 bits (kept to 32 bits), as [`scalar::stat_horizontal_cols`] forms them.
    /// Pixels whose log term goes lane by lane (gain limit out of the vector range) add to
    /// `sums` directly. Returns each group's `sigma1_sq`.
    #[inline]
    #[target_feature(enable = "avx512f,avx512bw,avx512cd,avx512dq")]
    fn add<const N: usize>(&mut self, g: [Stats16; N], sums: &mut VifSums) -> [__m512i; N] {
        let sigma1_sq = from_fn(|i| _mm512_sub_epi32(g[i].xx, rsh32(g[i].mu1, g[i].mu1)));
        self.add_with(g.map(|s| s.mu1), sigma1_sq, g, true, sums);
        sigma1_sq
    }

    /// [`TermSums::add`] from the reference side's `mu1` and `sigma1_sq` (`g`'s `mu1` and `xx`
    /// are not read); with `den` false only the sums that depend on the distorted picture
    /// (`num_log`, `num_non_log`) are added (ladder scoring: the reference side's are shared),
    /// which needs the vector log path. The `N` groups go through each step together, so that
    /// their independent dependency chains overlap (measured faster than one group at a time).
    /// (`mu1` comes apart from `g`, though `g` has a field for it: with a `Load` pass's `mu1`
    /// written into `g` instead, LLVM stopped inlining `RefSide::add`, 3 % slower overall.)
    #[inline]
    #[target_feature(enable = "avx512f,avx512bw,avx512cd,avx512dq")]
    fn add_with<const N: usize>(
        &mut self,
        mu1: [__m512i; N],
        sigma1_sq: [__m512i; N],
        g: [Stats16; N],
        den: bool,
        sums: &mut VifSums,
    ) {
        let nsq = _mm512_set1_epi32(SIGMA_NSQ);
        let z = _mm512_setzero_si512();
        let sigma2_sq: [__m512i; N] =
            from_fn(|i| _mm512_sub_epi32(g[i].yy, rsh32(g[i].mu2, g[i].mu2)));
        let sigma12: [__m512i; N] = from_fn(|i| _mm512_sub_epi32(g[i].xy, rsh32(mu1[i], g[i].mu2)));
        // Below the noise floor: add max(sigma2_sq, 0) and count (vif_term's linear branch).
        // Textured pictures have no such lane in most vectors, flat ones in runs of vectors: a
        // well-predicted branch skips the widening sums.
        let lin: [__mmask16; N] =
            from_fn(|i| _mm512_mask_cmplt_epi32_mask(g[i].valid, sigma1_sq[i], nsq));
        if lin.iter().any(|&m| m != 0) {
            for i in 0..N {
                let add = _mm512_maskz_max_epi32(lin[i], sigma2_sq[i], z);
                self.non_log = _mm512_add_epi64(self.non_log, widen_sum_i32(add));
                if den {
                    self.non_log_count += lin[i].count_ones() as i64;
                }
            }
        }
        // The log branch: 16 lanes at a time (the `double` parts 8 at a time), or lane by lane
        // where the gain limit is outside the range the vector path handles exactly.
        let log: [__mmask16; N] = from_fn(|i| g[i].valid & !lin[i]);
        if log.iter().all(|&m| m == 0) {
            return;
        }
        if self.vector_log {
            let t = LogTerms {
                log2: self.log2,
                compact: self.compact,
                fast: &self.fast,
                gain_limit: _mm512_set1_pd(self.gain_limit),
            };
            let s2: [__m512i; N] = from_fn(|i| _mm512_max_epi32(sigma2_sq[i], z));
            let cond: [__mmask16; N] = from_fn(|i| {
                _mm512_mask_cmpgt_epi32_mask(log[i], sigma12[i], z)
                    & _mm512_mask_cmpgt_epi32_mask(log[i], s2[i], z)
            });
            let (d, n) = t.terms(sigma1_sq, s2, sigma12, log, cond, den);
            if self.pending as usize + N > Self::WIDEN_EVERY as usize {
                self.widen();
            }
            for i in 0..N {
                if den {
                    self.den_log_32 = _mm512_add_epi32(self.den_log_32, d[i]);
                }
                self.num_log_32 = _mm512_add_epi32(self.num_log_32, n[i]);
            }
            self.pending += N as u32;
        } else {
            debug_assert!(den, "the split passes need the vector log path");
            for i in 0..N {
                let (mut s1, mut s2, mut s12) = ([0u32; 16], [0u32; 16], [0u32; 16]);
                store_u32x16(&mut s1, sigma1_sq[i], 16);
                store_u32x16(&mut s2, sigma2_sq[i], 16);
                store_u32x16(&mut s12, sigma12[i], 16);
                let lanes = u32::from(log[i]);
                let stats = [&s1[..], &s2[..], &s12[..]];
                scalar::vif_term_lanes(stats, lanes, self.gain_limit, self.log2, sums);
            }
        }
    }
}

/// Lanes `8h .. 8h + 8` of `v` (`h` 0 or 1).
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512cd,avx512dq")]
fn half256(v: __m512i, h: usize) -> __m256i {
    if h == 1 {
        _mm512_extracti64x4_epi64::<1>(v)
    } else {
        _mm512_castsi512_si256(v)
    }
}

/// `(a * b + 2^31) >> 32` of the `u32` lanes: the odd lanes' results are the high halves of
/// their rounded 64-bit products, in place.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512cd,avx512dq")]
fn rsh32(a: __m512i, b: __m512i) -> __m512i {
    let round32 = _mm512_set1_epi64(1 << 31);
    let (e, o) = mul_wide(a, b);
    _mm512_mask_blend_epi32(
        0xaaaa,
        odd_to_even(_mm512_add_epi64(e, round32)),
        _mm512_add_epi64(o, round32),
    )
}

/// The log branch of [`scalar::vif_term`] for `N` groups of 16 lanes, in the same `double`
/// operations (division, products and difference in the scalar's order, no fused
/// multiply-add), the same truncations and the same table look-ups.
struct LogTerms<'a> {
    log2: &'a [u16; LOG2_TABLE_LEN],
    compact: Option<&'static [u16; LOG2_COMPACT_LEN]>,
    fast: &'a FastLog2,
    gain_limit: __m512d,
}

impl LogTerms<'_> {
    /// `(den_log, num_log)` terms of each group's 16 lanes as `i32` lanes, zero where the lane
    /// is not in the log branch (`log`) or has no numerator term (`cond`: log, `sigma12 > 0`,
    /// `sigma2_sq > 0`); `den_log` zero without `den`. `s2` is `max(sigma2_sq, 0)`.
    #[inline]
    #[target_feature(enable = "avx512f,avx512bw,avx512cd,avx512dq")]
    fn terms<const N: usize>(
        &self,
        s1: [__m512i; N],
        s2: [__m512i; N],
        s12: [__m512i; N],
        log: [__mmask16; N],
        cond: [__mmask16; N],
        den: bool,
    ) -> ([__m512i; N], [__m512i; N]) {
        let nsq = _mm512_set1_epi32(SIGMA_NSQ);
        let z = _mm512_setzero_si512();
        // den_log: log2_32((u32)(sigma_nsq + sigma1_sq)) - 2048 * 17 (when asked for); the
        // look-ups add LOG2_BIAS (see `lookup!`).
        let den_t: [__m512i; N] = if den {
            let d = log2_u32!(self, N, from_fn(|i| _mm512_add_epi32(s1[i], nsq)), log);
            let off = _mm512_set1_epi32(2048 * 17 + LOG2_BIAS);
            from_fn(|i| _mm512_maskz_sub_epi32(log[i], d[i], off))
        } else {
            [z; N]
        };
        if cond.iter().all(|&m| m == 0) {
            return (den_t, [z; N]);
        }
        // g = sigma12 / (sigma1_sq + eps); sv_sq = (int32)(sigma2_sq - g * sigma12), >= 0;
        // numer1_tmp = (int64)(g' * g' * sigma1_sq) + numer1 with g' = min(g, limit). Halves
        // 2i and 2i + 1 are group i's lanes 0-7 and 8-15.
        // One group's whole chain at a time (both halves): the chains are independent, so the
        // out-of-order core overlaps them, and fewer values stay live than step by step (as on
        // the AVX2 level, where that measured faster).
        let eps = _mm512_set1_pd(EPS);
        let mut numer1 = [z; N];
        let mut numer1_tmp = [[_mm512_setzero_pd(); 2]; N];
        for i in 0..N {
            let (mut sv, mut ggd) = ([_mm256_setzero_si256(); 2], [_mm512_setzero_pd(); 2]);
            for h in 0..2 {
                let s1d = _mm512_cvtepi32_pd(half256(s1[i], h));
                let s2d = _mm512_cvtepi32_pd(half256(s2[i], h));
                let s12d = _mm512_cvtepi32_pd(half256(s12[i], h));
                let g = _mm512_div_pd(s12d, _mm512_add_pd(s1d, eps));
                // cvttpd gives INT32_MIN out of range, like the scalar's saturation (only
                // downwards).
                sv[h] = _mm512_cvttpd_epi32(_mm512_sub_pd(s2d, _mm512_mul_pd(g, s12d)));
                // g = g < limit ? g : limit (minpd returns its second operand unless first <
                // second).
                let g = _mm512_min_pd(g, self.gain_limit);
                ggd[h] = _mm512_mul_pd(_mm512_mul_pd(g, g), s1d);
            }
            let sv = _mm512_inserti64x4::<1>(_mm512_castsi256_si512(sv[0]), sv[1]);
            numer1[i] = _mm512_add_epi32(_mm512_max_epi32(sv, z), nsq);
            // numer1_tmp as an exact `double`: g'^2 sigma1_sq is below 2^52 (gain limit at most
            // 1024), so truncating it toward zero gives the scalar's integer, and adding numer1
            // (below 2^32) stays below 2^53.
            for h in 0..2 {
                numer1_tmp[i][h] = _mm512_add_pd(
                    _mm512_roundscale_pd::<{ _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC }>(ggd[h]),
                    _mm512_cvtepu32_pd(half256(numer1[i], h)),
                );
            }
        }
        // Both look-ups add the same bias, which the difference cancels.
        let a = self.log2_exact_f64x2(numer1_tmp, cond);
        let b = log2_u32!(self, N, numer1, cond);
        (
            den_t,
            from_fn(|i| _mm512_maskz_mov_epi32(cond[i], _mm512_sub_epi32(a[i], b[i]))),
        )
    }

    /// libvmaf's `log2_64` of 16 integers per group, given as two vectors of 8 exact `double`s
    /// (each in `[2^15, 2^53)`), in `m`, plus [`LOG2_BIAS`] (as [`log2_u32!`]):
    /// `table[v >> k] + 2048 * k` with `k = bits(v) - 16`, as `i32` lanes (lanes 0-7 from
    /// `v[i][0]`); other lanes are garbage. The high 32 bits of such a `double` are its biased
    /// exponent `e` and its top 20 fraction bits, so `k = e - 1023 - 15`, and the `f32` of
    /// `v >> k` (its 16 leading bits, truncated) is the top 15 fraction bits under the exponent
    /// of 2^15, its segment the top five: one permute of the high halves instead of 64-bit
    /// shifts and two narrowings.
    #[inline]
    #[target_feature(enable = "avx512f,avx512bw,avx512cd,avx512dq")]
    fn log2_exact_f64x2<const N: usize>(
        &self,
        v: [[__m512d; 2]; N],
        m: [__mmask16; N],
    ) -> [__m512i; N] {
        // Lane l takes 32-bit element 2l + 1: of the first vector for l < 8, of the second
        // (index 16 + ...) for the others.
        let high = _mm512_set_epi32(31, 29, 27, 25, 23, 21, 19, 17, 15, 13, 11, 9, 7, 5, 3, 1);
        let hw: [__m512i; N] = from_fn(|i| {
            _mm512_permutex2var_epi32(
                _mm512_castpd_si512(v[i][0]),
                high,
                _mm512_castpd_si512(v[i][1]),
            )
        });
        // (hw << 3) & 0x7fff00 | 0x4700_0000 in one ternary-logic step: bits of the second
        // operand where the mask (third) is set, the exponent's elsewhere.
        let idx_f: [__m512; N] = from_fn(|i| {
            _mm512_castsi512_ps(_mm512_ternarylogic_epi32::<0xd8>(
                _mm512_set1_epi32(0x4700_0000),
                _mm512_slli_epi32::<3>(hw[i]),
                _mm512_set1_epi32(0x7f_ff00),
            ))
        });
        let seg: [__m512i; N] = from_fn(|i| _mm512_srli_epi32::<15>(hw[i]));
        let k: [__m512i; N] =
            from_fn(|i| _mm512_sub_epi32(_mm512_srli_epi32::<20>(hw[i]), _mm512_set1_epi32(1038)));
        let e = lookup!(self, N, idx_f, seg, m);
        from_fn(|i| _mm512_add_epi32(e[i], _mm512_slli_epi32::<11>(k[i])))
    }

    /// [`tables::log2_compact`]'s entries plus [`LOG2_BIAS`] less the table's base (as
    /// [`lookup!`]) for the lanes in `m` (each index in `[2^15, 2^16)`); other lanes are garbage.
    // Inlined (no call): a call in the term loop makes LLVM spill the live vectors around it.
    #[inline]
    #[target_feature(enable = "avx512f,avx512bw,avx512cd,avx512dq")]
    fn gather_compact(
        &self,
        compact: &[u16; LOG2_COMPACT_LEN],
        idx: __m512i,
        m: __mmask16,
    ) -> __m512i {
        // Run t = idx / 8 - 2^12 of the compact table: the 32 bits at entry t hold it in
        // their high half (entry t + 1).
        let t = _mm512_sub_epi32(_mm512_srli_epi32::<3>(idx), _mm512_set1_epi32(1 << 12));
        // SAFETY: for the lanes in `m`, 0 <= t < 2^12, so each 4-byte read at byte 2t lies
        // inside the (2^12 + 1)-entry table; masked-off lanes are not read; gathers need no
        // alignment.
        let pair = unsafe {
            _mm512_mask_i32gather_epi32::<2>(_mm512_setzero_si512(), m, t, compact.as_ptr().cast())
        };
        let run = _mm512_srli_epi32::<16>(pair);
        let base = _mm512_add_epi32(
            _mm512_and_si512(run, _mm512_set1_epi32(0xfff)),
            _mm512_set1_epi32(tables::LOG2_FAST_BIAS),
        );
        // The run steps up by one from position s = run >> 12 (8: never).
        let up = _mm512_cmpge_epi32_mask(
            _mm512_and_si512(idx, _mm512_set1_epi32(7)),
            _mm512_srli_epi32::<12>(run),
        );
        _mm512_mask_add_epi32(base, up, base, _mm512_set1_epi32(1))
    }

    /// The full table's entries (as [`lookup!`]) for the lanes in `m`; other lanes are zero.
    #[inline]
    #[target_feature(enable = "avx512f,avx512bw,avx512cd,avx512dq")]
    fn gather_table(&self, idx: __m512i, m: __mmask16) -> __m512i {
        // Gather the 32 bits at entry idx - 1 and keep the high half (entry idx), so every read
        // stays inside the table.
        let at = _mm512_sub_epi32(idx, _mm512_set1_epi32(1));
        // SAFETY: for the lanes in `m`, 32767 <= idx - 1 <= 65534, so each 4-byte read at byte
        // 2 * (idx - 1) lies inside the 65536-entry (131072-byte) table; masked-off lanes are not
        // read; gathers need no alignment.
        let pair = unsafe {
            _mm512_mask_i32gather_epi32::<2>(
                _mm512_setzero_si512(),
                m,
                at,
                self.log2.as_ptr().cast(),
            )
        };
        _mm512_add_epi32(_mm512_srli_epi32::<16>(pair), _mm512_set1_epi32(LOG2_BIAS))
    }
}

/// libvmaf's `log2_32` of the `u32` lanes in `m` (each at least 2^15), per group, plus
/// [`LOG2_BIAS`]: `table[v >> k] + 2048 * k` with `k = 16 - leading_zeros(v)`; other lanes are
/// garbage. A macro, as [`lookup!`].
macro_rules! log2_u32 {
    ($t:expr, $n:expr, $v:expr, $m:expr) => {{
        let v: [__m512i; $n] = $v;
        let k: [__m512i; $n] =
            from_fn(|i| _mm512_sub_epi32(_mm512_set1_epi32(16), _mm512_lzcnt_epi32(v[i])));
        let idx: [__m512i; $n] = from_fn(|i| _mm512_srlv_epi32(v[i], k[i]));
        let idx_f: [__m512; $n] = from_fn(|i| _mm512_cvtepi32_ps(idx[i]));
        // vpermt2ps reads the low five bits of each index: idx >> 10 is 32 + j.
        let seg: [__m512i; $n] = from_fn(|i| _mm512_srli_epi32::<10>(idx[i]));
        let e = lookup!($t, $n, idx_f, seg, $m);
        let r: [__m512i; $n] = from_fn(|i| _mm512_add_epi32(e[i], _mm512_slli_epi32::<11>(k[i])));
        r
    }};
}
use log2_u32;

/// What the look-ups add to the table's entries: the arithmetic's bias, less the table's base
/// 15 * 2048 ([`LOG2_COMPACT_BASE`]); the terms fold it into their constants or cancel it.
const LOG2_BIAS: i32 = tables::LOG2_FAST_BIAS - LOG2_COMPACT_BASE as i32;

/// `table[idx] + LOG2_BIAS` per group for the lanes in `m`, from each index's exact `f32` (in
/// `[2^15, 2^16)`) and its segment (lanes whose low five bits are the five bits below the
/// leading one); other lanes are garbage. By arithmetic ([`FastLog2`]) where the table is the
/// standard one, the few lanes near a rounding boundary (about 15 in 10 000) from the compact
/// table, gathered only when a vector has one; every lane of another table gathered. A macro,
/// not a method: LLVM left the method out of line, passing its vectors through the stack.
macro_rules! lookup {
    ($t:expr, $n:expr, $idx_f:expr, $seg:expr, $m:expr) => {{
        let (t, idx_f, seg, m): (&LogTerms<'_>, [__m512; $n], [__m512i; $n], [__mmask16; $n]) =
            ($t, $idx_f, $seg, $m);
        let idx = |i: usize| _mm512_cvtps_epi32(idx_f[i]);
        match t.compact {
            Some(compact) => {
                let (mut value, near) = t.fast.entry(idx_f, seg);
                let near: [__mmask16; $n] = from_fn(|i| near[i] & m[i]);
                if near.iter().any(|&n| n != 0) {
                    for i in 0..$n {
                        if near[i] != 0 {
                            let g = t.gather_compact(compact, idx(i), near[i]);
                            value[i] = _mm512_mask_mov_epi32(value[i], near[i], g);
                        }
                    }
                }
                value
            }
            None => from_fn(|i| t.gather_table(idx(i), m[i])),
        }
    }};
}
use lookup;

/// The `log2` table's entries by arithmetic ([`tables::log2_fast_consts`]): per index `i` in
/// `[2^15, 2^16)` of segment `j` (the five bits below its leading one), `r = i * inv[j] - 1`
/// and `z = base[j] + p(r)` in `f32`, `p` the cubic of `2048 * log2(1 + r)`
/// ([`tables::LOG2_FAST_POLY3`]): `z`'s bit pattern holds the entry plus
/// [`tables::LOG2_FAST_BIAS`] above its low 12 bits, and those say how near a tie `y` lies (the
/// lane is flagged for the table where they are below the guards'
/// [`tables::LOG2_FAST_GUARD_BELOW_UNITS`] + [`tables::LOG2_FAST_GUARD_ABOVE_UNITS`]). An
/// exhaustive unit test (`fast_log2_every_index`) checks every unflagged index against the table,
/// which makes the arithmetic exact by enumeration: its operations are IEEE `f32` ones (a fused
/// multiply-add rounds once), the same on every CPU.
#[derive(Clone, Copy)]
struct FastLog2 {
    /// Per segment: `1 / (2^15 + 2^10 j)`.
    inv: [__m512; 2],
    /// Per segment: `L[j]` plus 2048, a half and the lower guard.
    base: [__m512; 2],
    /// [`tables::LOG2_FAST_POLY3`].
    poly: [__m512; 3],
}

impl FastLog2 {
    #[inline]
    #[target_feature(enable = "avx512f,avx512bw,avx512cd,avx512dq")]
    fn new() -> Self {
        let (inv, base) = tables::log2_fast_consts();
        let halves = |t: &[f32; tables::LOG2_FAST_SEGMENTS]| {
            // SAFETY: `t` holds 32 `f32`, two vectors' worth; the loads are unaligned.
            unsafe {
                [
                    _mm512_loadu_ps(t.as_ptr()),
                    _mm512_loadu_ps(t.as_ptr().add(16)),
                ]
            }
        };
        FastLog2 {
            inv: halves(inv),
            base: halves(base),
            poly: tables::LOG2_FAST_POLY3.map(|c| _mm512_set1_ps(c)),
        }
    }

    /// `(entries, near)` per group: the table entries of the 16 indices (from their `f32`s and
    /// segments, as [`lookup!`] takes them) plus [`LOG2_BIAS`], correct in every lane outside
    /// `near`.
    #[inline]
    #[target_feature(enable = "avx512f,avx512bw,avx512cd,avx512dq")]
    fn entry<const N: usize>(
        &self,
        idx_f: [__m512; N],
        seg: [__m512i; N],
    ) -> ([__m512i; N], [__mmask16; N]) {
        let inv: [__m512; N] =
            from_fn(|i| _mm512_permutex2var_ps(self.inv[0], seg[i], self.inv[1]));
        let base: [__m512; N] =
            from_fn(|i| _mm512_permutex2var_ps(self.base[0], seg[i], self.base[1]));
        let r: [__m512; N] = from_fn(|i| _mm512_fmsub_ps(idx_f[i], inv[i], _mm512_set1_ps(1.0)));
        let [c0, c1, c2] = self.poly;
        let p: [__m512; N] = from_fn(|i| _mm512_fmadd_ps(c0, r[i], c1));
        let p: [__m512; N] = from_fn(|i| _mm512_fmadd_ps(p[i], r[i], c2));
        let z: [__m512i; N] =
            from_fn(|i| _mm512_castps_si512(_mm512_fmadd_ps(p[i], r[i], base[i])));
        let entry = from_fn(|i| _mm512_srli_epi32::<12>(z[i]));
        let guards =
            (tables::LOG2_FAST_GUARD_BELOW_UNITS + tables::LOG2_FAST_GUARD_ABOVE_UNITS) as i32;
        let near = from_fn(|i| {
            _mm512_cmplt_epi32_mask(
                _mm512_and_si512(z[i], _mm512_set1_epi32(4095)),
                _mm512_set1_epi32(guards),
            )
        });
        (entry, near)
    }
}

// ---------------------------------------------------------------------------------------------
// Downsampling
// ---------------------------------------------------------------------------------------------

/// The constants of the `madd` vertical downsampling (the `madd` form of each pass the
/// downsampling macro below defines).
struct SubMaddConsts<const PAIRS: usize> {
    pairs: [__m512i; PAIRS],
    offset: __m512i,
    flip: __m512i,
    round: __m512i,
    shift: __m128i,
    low16: __m512i,
}

/// The vertical downsampling pass: the two-rows-per-`madd` method of the statistic when every
/// tap is below 2^15 (libvmaf's scale 1 and 2 filters), the samples offset by -2^15 into `i16`
/// (`|pair sum| <= 2^15 * (f_a + f_b) < 2^31`) and the offset added back; 32-bit products
/// otherwise (scale 3's 43728 tap). Either way the wrapping `u32` sums are the scalar's.
macro_rules! subsample_vertical_avx512 {
    ($name:ident, $madd:ident, $wide:ident, $t:ty, $load32:ident, $load16:ident) => {
        #[allow(clippy::too_many_arguments)]
        #[target_feature(enable = "avx512f,avx512bw,avx512cd,avx512dq")]
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
            assert!(out_r.len() >= PAD + w && out_d.len() >= PAD + w);
            let madd = filt.iter().all(|&f| f < 1 << 15);
            match (madd, filt.len().div_ceil(2)) {
                (true, 5) => $madd::<5>(r, d, filt, round, shift, w, out_r, out_d),
                (true, 3) => $madd::<3>(r, d, filt, round, shift, w, out_r, out_d),
                (true, 2) => $madd::<2>(r, d, filt, round, shift, w, out_r, out_d),
                _ => $wide(r, d, filt, round, shift, w, out_r, out_d),
            }
        }

        /// The `madd` form of the pass (all taps below 2^15, `PAIRS` tap pairs); requires the
        /// caller's length checks.
        #[allow(clippy::too_many_arguments)]
        #[target_feature(enable = "avx512f,avx512bw,avx512cd,avx512dq")]
        fn $madd<const PAIRS: usize>(
            r: &[&[$t]],
            d: &[&[$t]],
            filt: &[u16],
            round: u32,
            shift: u32,
            w: usize,
            out_r: &mut [u16],
            out_d: &mut [u16],
        ) {
            let k = SubMaddConsts::<PAIRS> {
                pairs: tap_pairs(filt),
                offset: madd_offset(filt),
                flip: _mm512_set1_epi16(i16::MIN),
                round: _mm512_set1_epi32(round as i32),
                shift: _mm_cvtsi32_si128(shift as i32),
                low16: _mm512_set1_epi32(0xffff),
            };
            let taps = filt.len();
            // One 32-column block; `n < 32` only with TAIL.
            #[inline]
            #[target_feature(enable = "avx512f,avx512bw,avx512cd,avx512dq")]
            fn block<const PAIRS: usize, const TAIL: bool>(
                r: &[&[$t]],
                d: &[&[$t]],
                taps: usize,
                j: usize,
                n: usize,
                k: &SubMaddConsts<PAIRS>,
                out: [&mut [u16]; 2],
            ) {
                let o = k.offset;
                let (mut ar, mut ad) = ((o, o), (o, o));
                for (i, &c) in k.pairs.iter().enumerate() {
                    let (ka, kb) = (2 * i, (2 * i + 1).min(taps - 1));
                    let (ra, rb, da, db) = (r[ka], r[kb], d[ka], d[kb]);
                    assert!(ra.len().min(rb.len()).min(da.len()).min(db.len()) >= j + n);
                    // SAFETY: each row holds at least j + n values (checked just above), and
                    // the loads read n values from column j (32 = n without TAIL).
                    let (xa, xb, ya, yb) = unsafe {
                        (
                            $load32::<TAIL>(ra.as_ptr().add(j), n),
                            $load32::<TAIL>(rb.as_ptr().add(j), n),
                            $load32::<TAIL>(da.as_ptr().add(j), n),
                            $load32::<TAIL>(db.as_ptr().add(j), n),
                        )
                    };
                    let acc = |s: &mut (__m512i, __m512i), a: __m512i, b: __m512i| {
                        let (a, b) = (_mm512_xor_si512(a, k.flip), _mm512_xor_si512(b, k.flip));
                        let lo = _mm512_madd_epi16(_mm512_unpacklo_epi16(a, b), c);
                        let hi = _mm512_madd_epi16(_mm512_unpackhi_epi16(a, b), c);
                        s.0 = _mm512_add_epi32(s.0, lo);
                        s.1 = _mm512_add_epi32(s.1, hi);
                    };
                    acc(&mut ar, xa, xb);
                    acc(&mut ad, ya, yb);
                }
                let fin = |v: __m512i| {
                    _mm512_and_si512(
                        _mm512_srl_epi32(_mm512_add_epi32(v, k.round), k.shift),
                        k.low16,
                    )
                };
                for (dst, (lo, hi)) in out.into_iter().zip([ar, ad]) {
                    // The in-lane pack puts each 128-bit lane's columns 8q .. 8q + 4 (`lo`) and
                    // 8q + 4 .. 8q + 8 (`hi`) side by side: column order (exact: every lane is
                    // below 2^16).
                    store_u16x32(
                        &mut dst[PAD + j..],
                        _mm512_packus_epi32(fin(lo), fin(hi)),
                        n,
                    );
                }
            }
            let w32 = w / 32 * 32;
            for j in (0..w32).step_by(32) {
                block::<PAIRS, false>(r, d, taps, j, 32, &k, [&mut *out_r, &mut *out_d]);
            }
            if w32 < w {
                block::<PAIRS, true>(r, d, taps, w32, w - w32, &k, [out_r, out_d]);
            }
        }

        /// The 32-bit-product form of the pass, 16 columns per step; requires the caller's
        /// length checks.
        #[allow(clippy::too_many_arguments)]
        #[target_feature(enable = "avx512f,avx512bw,avx512cd,avx512dq")]
        fn $wide(
            r: &[&[$t]],
            d: &[&[$t]],
            filt: &[u16],
            round: u32,
            shift: u32,
            w: usize,
            out_r: &mut [u16],
            out_d: &mut [u16],
        ) {
            let rnd = _mm512_set1_epi32(round as i32);
            let sh = _mm_cvtsi32_si128(shift as i32);
            // One 16-column block; `n < 16` only with TAIL.
            #[inline]
            #[target_feature(enable = "avx512f,avx512bw,avx512cd,avx512dq")]
            fn block<const TAIL: bool>(
                r: &[&[$t]],
                d: &[&[$t]],
                filt: &[u16],
                j: usize,
                n: usize,
            ) -> (__m512i, __m512i) {
                let (mut ar, mut ad) = (_mm512_setzero_si512(), _mm512_setzero_si512());
                for ((&f, r), d) in filt.iter().zip(r).zip(d) {
                    let f = _mm512_set1_epi32(f as i32);
                    assert!(r.len().min(d.len()) >= j + n);
                    // SAFETY: both rows hold at least j + n values (checked just above), and the
                    // loads read n values from column j (16 = n without TAIL).
                    let (x, y) = unsafe {
                        (
                            $load16::<TAIL>(r.as_ptr().add(j), n),
                            $load16::<TAIL>(d.as_ptr().add(j), n),
                        )
                    };
                    ar = _mm512_add_epi32(ar, _mm512_mullo_epi32(f, x));
                    ad = _mm512_add_epi32(ad, _mm512_mullo_epi32(f, y));
                }
                (ar, ad)
            }
            // Rounded and truncated to 16 bits (`vpmovdw` keeps each lane's low half).
            let fin =
                |v: __m512i| _mm512_cvtepi32_epi16(_mm512_srl_epi32(_mm512_add_epi32(v, rnd), sh));
            let w16 = w / 16 * 16;
            for j in (0..w16).step_by(16) {
                let (ar, ad) = block::<false>(r, d, filt, j, 16);
                store_u16x16(&mut out_r[PAD + j..], fin(ar), 16);
                store_u16x16(&mut out_d[PAD + j..], fin(ad), 16);
            }
            if w16 < w {
                let n = w - w16;
                let (ar, ad) = block::<true>(r, d, filt, w16, n);
                store_u16x16(&mut out_r[PAD + w16..], fin(ar), n);
                store_u16x16(&mut out_d[PAD + w16..], fin(ad), n);
            }
        }
    };
}

subsample_vertical_avx512!(
    subsample_vertical_u8_avx512,
    subsample_vertical_u8_madd,
    subsample_vertical_u8_wide,
    u8,
    load_u8x32,
    load_u8x16
);
/// The constants of [`subsample_vertical_u8_fold`].
struct FoldConsts {
    /// Tap pairs of the folded rows `0..=H`: `(f[2p], f[2p + 1])`, `f[H + 1]` taken as 0.
    pairs: [__m512i; 9],
    round: __m512i,
    shift: __m128i,
    low16: __m512i,
}

/// [`subsample_vertical_u8_avx512`] for symmetric taps (`2 H + 1` of them, each below 2^15):
/// the AVX2 peer's folded method (`x86_64_avx2::subsample_vertical_u8_fold`, whose notes say why
/// it is exact), 32 columns a step, the last partial step masked. `false` (nothing written) where
/// the taps are not of that form.
#[allow(clippy::too_many_arguments)]
#[target_feature(enable = "avx512f,avx512bw,avx512cd,avx512dq")]
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
    let taps = 2 * H + 1;
    if !fold_taps_ok(filt, H) {
        return false;
    }
    assert!(r.len() == taps && d.len() == taps);
    assert!(r.iter().chain(d).all(|row| row.len() >= w));
    assert!(out_r.len() >= PAD + w && out_d.len() >= PAD + w);
    let k = FoldConsts {
        pairs: fold_tap_pairs(filt, H).map(|p| _mm512_set1_epi32(p)),
        round: _mm512_set1_epi32(round as i32),
        shift: _mm_cvtsi32_si128(shift as i32),
        low16: _mm512_set1_epi32(0xffff),
    };
    let w32 = w / 32 * 32;
    for j in (0..w32).step_by(32) {
        fold_block::<H, false>(r, j, 32, &k, out_r);
        fold_block::<H, false>(d, j, 32, &k, out_d);
    }
    if w32 < w {
        fold_block::<H, true>(r, w32, w - w32, &k, out_r);
        fold_block::<H, true>(d, w32, w - w32, &k, out_d);
    }
    true
}

/// Columns `j .. j + n` of one picture's [`subsample_vertical_u8_fold`] (`n < 32` only with
/// `TAIL`); requires its length checks.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512cd,avx512dq")]
fn fold_block<const H: usize, const TAIL: bool>(
    rows: &[&[u8]],
    j: usize,
    n: usize,
    k: &FoldConsts,
    out: &mut [u16],
) {
    let taps = 2 * H + 1;
    let z = _mm512_setzero_si512();
    let x: [__m512i; 17] = from_fn(|i| {
        if i < taps {
            // SAFETY: j + n <= every row's length (the caller's checks); the load reads n bytes.
            unsafe { load_u8x32::<TAIL>(rows[i].as_ptr().add(j), n) }
        } else {
            z
        }
    });
    let folded: [__m512i; 10] = from_fn(|i| match i.cmp(&H) {
        std::cmp::Ordering::Less => _mm512_add_epi16(x[i], x[taps - 1 - i]),
        std::cmp::Ordering::Equal => x[H],
        std::cmp::Ordering::Greater => z,
    });
    // Per 128-bit lane q, columns 8q .. 8q + 4 in `lo` and 8q + 4 .. 8q + 8 in `hi`.
    let (mut lo, mut hi) = (z, z);
    for p in 0..(H + 1).div_ceil(2) {
        let (a, b) = (folded[2 * p], folded[2 * p + 1]);
        lo = madd_acc(lo, _mm512_unpacklo_epi16(a, b), k.pairs[p]);
        hi = madd_acc(hi, _mm512_unpackhi_epi16(a, b), k.pairs[p]);
    }
    let fin = |v: __m512i| {
        _mm512_and_si512(
            _mm512_srl_epi32(_mm512_add_epi32(v, k.round), k.shift),
            k.low16,
        )
    };
    // The in-lane pack puts columns 8q .. 8q + 4 and 8q + 4 .. 8q + 8 side by side: column
    // order (exact: every lane is below 2^16).
    store_u16x32(
        &mut out[PAD + j..],
        _mm512_packus_epi32(fin(lo), fin(hi)),
        n,
    );
}

subsample_vertical_avx512!(
    subsample_vertical_u16_avx512,
    subsample_vertical_u16_madd,
    subsample_vertical_u16_wide,
    u16,
    load_u16x32,
    load_u16x16
);

/// The horizontal downsampling pass, 16 outputs per step: output `m` reads the line at
/// `start + 2m + k`, so 16 values widened from `start + 2m + k` hold those of 8 consecutive
/// outputs in the low halves of their 64-bit lanes, which `_mm512_mul_epu32` multiplies by the
/// tap directly (64-bit products whose low 32 bits are the scalar's wrapping `u32` ones). The
/// last step's values past the row's end are masked off at the loads.
#[target_feature(enable = "avx512f,avx512bw,avx512cd,avx512dq")]
fn subsample_horizontal_avx512(
    lr: &[u16],
    ld: &[u16],
    filt: &[u16],
    w: usize,
    out_r: &mut [u16],
    out_d: &mut [u16],
) {
    let taps = filt.len();
    let half = w / 2;
    assert!(taps <= 2 * PAD + 1);
    assert!(out_r.len() >= half && out_d.len() >= half);
    let len = lr.len().min(ld.len());
    let start = PAD - taps / 2;
    let round = _mm512_set1_epi64(32768);
    let low32 = _mm512_set1_epi64(0xffff_ffff);
    // ((acc mod 2^32) + 2^15) mod 2^32 >> 16, as u16.
    let fin = |v: __m512i| {
        let v = _mm512_and_si512(_mm512_add_epi64(v, round), low32);
        _mm512_cvtepi64_epi16(_mm512_srli_epi64::<16>(v))
    };
    // The 16-bit path where the taps allow it (libvmaf's scale-1, 2 and 3 filters' pairs), then
    // the 64-bit products for the rest of the row.
    let done = match (madd_taps_ok(filt), taps.div_ceil(2)) {
        (true, 5) => subsample_horizontal_madd::<5>(lr, ld, filt, w, out_r, out_d),
        (true, 3) => subsample_horizontal_madd::<3>(lr, ld, filt, w, out_r, out_d),
        (true, 2) => subsample_horizontal_madd::<2>(lr, ld, filt, w, out_r, out_d),
        _ => 0,
    };
    for m in (done..half).step_by(16) {
        let cnt = (half - m).min(16);
        // A whole step also reads the odd value after its last output's, which every padded
        // line but the shortest has.
        let [ar0, ar1, ad0, ad1] = if cnt == 16 && start + 2 * m + taps + 31 <= len {
            subsample_horizontal_step::<false>(lr, ld, filt, m, cnt)
        } else {
            subsample_horizontal_step::<true>(lr, ld, filt, m, cnt)
        };
        store_u16x8(&mut out_r[m..], fin(ar0), cnt);
        store_u16x8(&mut out_d[m..], fin(ad0), cnt);
        if cnt > 8 {
            store_u16x8(&mut out_r[m + 8..], fin(ar1), cnt - 8);
            store_u16x8(&mut out_d[m + 8..], fin(ad1), cnt - 8);
        }
    }
}

/// The decimating horizontal filter in 16-bit lanes: per 16 outputs `m .. m + 16`, each tap pair
/// `i` multiplies the 32 line values from `start + 2m + 2i` (one unaligned load: lane `l` holds
/// the values `2(m + l) + 2i` and `+ 1`, output `m + l`'s taps `2i` and `2i + 1`), offset by
/// -2^15 into `i16`, the offset added back as `2^15 * sum(taps)`. The sums are below 2^32 (the
/// taps sum to at most 2^16), so the wrapping `i32` lanes are the scalar's `u32` ones. Returns
/// the outputs done, a multiple of 16: it stops at the last block whose values lie inside both
/// lines, and the caller finishes the row. Requires [`madd_taps_ok`].
#[target_feature(enable = "avx512f,avx512bw,avx512cd,avx512dq")]
fn subsample_horizontal_madd<const PAIRS: usize>(
    lr: &[u16],
    ld: &[u16],
    filt: &[u16],
    w: usize,
    out_r: &mut [u16],
    out_d: &mut [u16],
) -> usize {
    let taps = filt.len();
    assert_eq!(taps.div_ceil(2), PAIRS);
    let (half, start, len) = (w / 2, PAD - taps / 2, lr.len().min(ld.len()));
    assert!(out_r.len() >= half && out_d.len() >= half);
    let pairs: [__m512i; PAIRS] = tap_pairs(filt);
    let offset = madd_offset(filt);
    let flip = _mm512_set1_epi16(i16::MIN);
    let round = _mm512_set1_epi32(1 << 15);
    let filtered = |line: &[u16], at: usize| {
        assert!(at + 2 * PAIRS + 30 <= line.len());
        let mut acc = offset;
        for (i, &c) in pairs.iter().enumerate() {
            // SAFETY: the load reads the values at + 2i .. at + 2i + 32, inside `line` (i <
            // PAIRS; checked just above); it is unaligned.
            let v = unsafe { _mm512_loadu_si512(line.as_ptr().add(at + 2 * i).cast()) };
            acc = madd_acc(acc, _mm512_xor_si512(v, flip), c);
        }
        // (acc + 2^15) >> 16, kept to 16 bits.
        _mm512_cvtepi32_epi16(_mm512_srli_epi32::<16>(_mm512_add_epi32(acc, round)))
    };
    let mut m = 0;
    while m + 16 <= half && start + 2 * m + 2 * PAIRS + 30 <= len {
        let at = start + 2 * m;
        let (or, od) = (&mut out_r[m..m + 16], &mut out_d[m..m + 16]);
        // SAFETY: `or` and `od` hold 16 `u16` (32 bytes) each; the stores are unaligned.
        unsafe {
            _mm256_storeu_si256(or.as_mut_ptr().cast(), filtered(lr, at));
            _mm256_storeu_si256(od.as_mut_ptr().cast(), filtered(ld, at));
        }
        m += 16;
    }
    m
}

/// The 64-bit sums of outputs `m .. m + cnt` (`cnt <= 16`) of [`subsample_horizontal_avx512`]:
/// `[ref m..m+8, ref m+8..m+16, dis m..m+8, dis m+8..m+16]`. Without `TAIL` (`cnt == 16`, both
/// lines holding the values up to `start + 2m + taps + 31`) it loads 16 values at a time; with
/// it, only the values the outputs read.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512cd,avx512dq")]
fn subsample_horizontal_step<const TAIL: bool>(
    lr: &[u16],
    ld: &[u16],
    filt: &[u16],
    m: usize,
    cnt: usize,
) -> [__m512i; 4] {
    let taps = filt.len();
    let start = PAD - taps / 2;
    let len = lr.len().min(ld.len());
    // Output m + l reads the values start + 2 (m + l) + k, k < taps.
    if !TAIL {
        assert!(cnt == 16 && start + 2 * m + taps + 31 <= len);
    } else {
        assert!(cnt >= 1 && start + 2 * (m + cnt - 1) + taps <= len);
    }
    // Value 2l of load h is output m + 8h + l's: the first 2c - 1 values of a load serve its c
    // outputs.
    let values = |h: usize| (2 * cnt.saturating_sub(8 * h).min(8)).saturating_sub(1);
    let (na, nb) = (values(0), values(1));
    let z = _mm512_setzero_si512();
    let (mut ar, mut ad) = ((z, z), (z, z));
    for (k, &f) in filt.iter().enumerate() {
        let at = start + 2 * m + k;
        let f = _mm512_set1_epi64(f as i64);
        let (pr, pd) = (lr.as_ptr(), ld.as_ptr());
        // SAFETY: without TAIL the loads read the values at .. at + 32 <= start + 2m + taps + 31 <=
        // both lines' lengths (checked above). Otherwise they read the values at + 2l for
        // outputs m + l < m + cnt (and the odd values between), at most
        // start + 2 (m + cnt - 1) + taps - 1 < both lines' lengths (checked above); a load of
        // no values reads nothing (its address, formed by wrapping, may lie past the line).
        let (xa, xb, ya, yb) = unsafe {
            (
                load_u16x16::<TAIL>(pr.wrapping_add(at), na),
                load_u16x16::<TAIL>(pr.wrapping_add(at + 16), nb),
                load_u16x16::<TAIL>(pd.wrapping_add(at), na),
                load_u16x16::<TAIL>(pd.wrapping_add(at + 16), nb),
            )
        };
        ar.0 = _mm512_add_epi64(ar.0, _mm512_mul_epu32(xa, f));
        ar.1 = _mm512_add_epi64(ar.1, _mm512_mul_epu32(xb, f));
        ad.0 = _mm512_add_epi64(ad.0, _mm512_mul_epu32(ya, f));
        ad.1 = _mm512_add_epi64(ad.1, _mm512_mul_epu32(yb, f));
    }
    [ar.0, ar.1, ad.0, ad.1]
}

#[cfg(test)]
mod fast_log2_tests {
    use super::*;

    /// The arithmetic `log2` against the table at every index it can be given: the lanes it
    /// trusts must hold the table's entry (which makes it exact: its operations are IEEE ones),
    /// and the table look-up must be left to few enough lanes to be worth having.
    #[test]
    fn fast_log2_every_index() {
        // `install` checks this copy's CPU features (the VNNI copy's too).
        let mut k = Kernels::SCALAR;
        install(&mut k);
        if k.stat_horizontal as usize == Kernels::SCALAR.stat_horizontal as usize {
            eprintln!(
                "fast_log2_every_index: this CPU lacks the module's AVX-512 features: not run"
            );
            return;
        }
        // SAFETY: `install` replaced the kernel, so the CPU has every feature `check` enables.
        let (trusted, near) = unsafe { check() };
        eprintln!("fast_log2_every_index: {trusted} indices by arithmetic, {near} near a boundary");
        assert_eq!(trusted + near, 1 << 15);
        assert!(
            near < (1 << 15) / 100,
            "{near} of 2^15 indices near a boundary"
        );
    }

    /// `(trusted, near)` over every index of `[2^15, 2^16)`; panics at a trusted wrong entry.
    #[target_feature(enable = "avx512f,avx512bw,avx512cd,avx512dq")]
    fn check() -> (usize, usize) {
        let table = tables::log2_table();
        let fast = FastLog2::new();
        let terms = LogTerms {
            log2: table,
            compact: Some(tables::log2_compact()),
            fast: &fast,
            gain_limit: _mm512_set1_pd(100.0),
        };
        let (mut trusted, mut near_count) = (0, 0);
        // Two vectors per step, as the term code looks them up.
        for i0 in ((1u32 << 15)..(1 << 16)).step_by(32) {
            let idx: [u32; 32] = std::array::from_fn(|l| i0 + l as u32);
            // SAFETY: `idx` holds 32 `u32`; the loads are unaligned.
            let v = unsafe {
                [
                    _mm512_loadu_si512(idx.as_ptr().cast()),
                    _mm512_loadu_si512(idx.as_ptr().add(16).cast()),
                ]
            };
            let idx_f = v.map(|v| _mm512_cvtepi32_ps(v));
            let seg = v.map(|v| _mm512_srli_epi32::<10>(v));
            let (entry, near) = fast.entry(idx_f, seg);
            let looked_up = lookup!(&terms, 2, idx_f, seg, [0xffff; 2]);
            for h in 0..2 {
                let (mut e, mut l) = ([0u32; 16], [0u32; 16]);
                store_u32x16(&mut e, entry[h], 16);
                store_u32x16(&mut l, looked_up[h], 16);
                for lane in 0..16 {
                    let i = idx[16 * h + lane];
                    let want = (table[i as usize] as i32 + LOG2_BIAS) as u32;
                    assert_eq!(l[lane], want, "lookup of index {i}");
                    if near[h] >> lane & 1 == 0 {
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
}
