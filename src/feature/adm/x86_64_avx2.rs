//! AVX2 peers of the scalar ADM kernels, equal to them bit for bit, installed into the kernel
//! table by [`install`]:
//!
//! * the scale-0 DWT row kernels ([`scalar::dwt_s0_vertical_both`],
//!   [`scalar::dwt_s0_horizontal`]);
//! * the scale-1..3 DWT row kernels ([`scalar::dwt_s123_vertical`],
//!   [`scalar::dwt_s123_horizontal`]);
//! * [`scalar::decouple_s0`] / [`scalar::decouple_s123`]: see [`decouple_s0`] /
//!   [`decouple_s123`];
//! * [`scalar::csf_s0`] / [`scalar::csf_s123`]: see [`csf_s0`] / [`csf_s123`];
//! * [`scalar::csf_den_s0`] / [`scalar::csf_den_s123`] (the denominators' integer reductions):
//!   see [`csf_den_s0`] / [`csf_den_s123`];
//! * [`scalar::cm_s0_interior`] (the scale-0 contrast masking, libvmaf `adm_cm`): see
//!   [`cm_s0_interior`];
//! * [`scalar::cm_s123_interior`] (the scale-1..3 masking, libvmaf `i4_adm_cm`), the same
//!   shape on `i32` bands: see [`cm_s123_interior`].
//!
//! The kernels are `#[target_feature(enable = "avx2")]` functions reached only through safe
//! entry points that [`install`] puts into the table after checking that the CPU has AVX2; that
//! check is what every `unsafe` call of them relies on.

use core::arch::x86_64::*;
use std::array::from_fn;
use std::ops::Range;

use super::scalar::{
    self, half_pow2_u32, Region, DWT_S123_HORIZONTAL_ROUND, DWT_S123_VERTICAL_ROUND,
};
use super::tables::{
    COS_1DEG_SQ, DB2_HI, DB2_HI_SUM, DB2_LO, DB2_LO_SUM, FIX_ONE_BY_30, I4_FIX_ONE_BY_30,
    I4_ONE_BY_15, ONE_BY_15,
};
use super::Kernels;

/// Replaces the entries of `k` that have an AVX2 kernel, if this CPU has AVX2.
pub(super) fn install(k: &mut Kernels) {
    if !is_x86_feature_detected!("avx2") {
        return;
    }
    k.dwt_s0_vertical_u8 = dwt_s0_vertical_u8;
    k.dwt_s0_vertical_u16 = dwt_s0_vertical_u16;
    k.dwt_s0_horizontal = dwt_s0_horizontal;
    k.dwt_s123_vertical_i16 = dwt_s123_vertical_i16;
    k.dwt_s123_vertical_i32 = dwt_s123_vertical_i32;
    k.dwt_s123_horizontal = dwt_s123_horizontal;
    k.decouple_s0 = decouple_s0;
    k.decouple_s123 = decouple_s123;
    k.csf_s0 = csf_s0;
    k.csf_s123 = csf_s123;
    k.csf_den_s0 = csf_den_s0;
    k.csf_den_s123 = csf_den_s123;
    k.cm_s0_interior = cm_s0_interior;
    k.cm_s123_interior = cm_s123_interior;
}

// ---------------------------------------------------------------------------------------------
// Scale-0 contrast masking
// ---------------------------------------------------------------------------------------------

/// The AVX2 [`CmS0Interior`](super::CmS0Interior): 8 samples per step in 32-bit lanes, the
/// 64-bit square and cube as even/odd lane pairs (`_mm256_mul_epu32` / `_mm256_mul_epi32`), the
/// arithmetic 64-bit shift emulated with the sign mask; leftover columns by the scalar kernel.
#[allow(clippy::too_many_arguments)]
fn cm_s0_interior(
    x_hvd: [&[i16]; 3],
    flt: &[i32],
    centre: &[i32],
    rows: (usize, usize, usize),
    cols: Range<usize>,
    i_rfactor: [u16; 3],
    cub: [u32; 3],
    cub_add: [i64; 3],
) -> [i64; 3] {
    // SAFETY: only reachable through `install`, which checked that the CPU has AVX2.
    unsafe { cm_s0_interior_avx2(x_hvd, flt, centre, rows, cols, i_rfactor, cub, cub_add) }
}

/// 8 `i16` sign-extended to `i32` lanes.
///
/// # Safety
/// `p` must be valid for reading 8 `i16`.
#[inline]
#[target_feature(enable = "avx2")]
unsafe fn load8(p: *const i16) -> __m256i {
    // SAFETY: the caller guarantees 16 readable bytes; the load is unaligned.
    _mm256_cvtepi16_epi32(unsafe { _mm_loadu_si128(p.cast()) })
}

/// Arithmetic right shift of 64-bit lanes by `s` (< 64).
#[inline]
#[target_feature(enable = "avx2")]
fn sra_epi64(v: __m256i, s: __m128i) -> __m256i {
    let sign = _mm256_cmpgt_epi64(_mm256_setzero_si256(), v);
    _mm256_xor_si256(_mm256_srl_epi64(_mm256_xor_si256(v, sign), s), sign)
}

/// Whether every lane of the three bands' masked excesses `x` (each in `[0, 2^31)`) is below
/// 2^30: then each cubed term the masking kernels form is non-negative (the square, rounded by
/// at least 29 bits, is below 2^31 and the rounding constant is positive), so its arithmetic
/// shift is a logical one ([`cube_shift`]).
#[inline]
#[target_feature(enable = "avx2")]
fn below_2_30(xs: [__m256i; 3]) -> bool {
    let any = _mm256_or_si256(_mm256_or_si256(xs[0], xs[1]), xs[2]);
    _mm256_testz_si256(any, _mm256_set1_epi32(!((1 << 30) - 1))) != 0
}

/// The masking kernels' `t >> s` (arithmetic): a logical shift where [`below_2_30`] holds (the
/// common case; one instruction instead of the emulated arithmetic shift's four).
#[inline]
#[target_feature(enable = "avx2")]
fn cube_shift(t: __m256i, s: __m128i, small: bool) -> __m256i {
    if small {
        _mm256_srl_epi64(t, s)
    } else {
        sra_epi64(t, s)
    }
}

/// The masking threshold of 8 samples from the masker's sums (`scalar::csf_s0`): `flt` over
/// the eight neighbours plus `centre`, wrapping; `rows` are the offsets of the first sample in
/// the rows above, at and below.
///
/// # Safety
/// Both slices must hold `rows.* - 1 .. rows.* + 9`, and `centre` `rows.1 .. rows.1 + 8`.
#[inline]
#[target_feature(enable = "avx2")]
unsafe fn thr8(flt: &[i32], centre: &[i32], (u, c, d): (usize, usize, usize)) -> __m256i {
    let f = flt.as_ptr();
    // SAFETY: the caller guarantees the offsets read.
    unsafe {
        let s = [
            load_i32x8(f.add(u - 1)),
            load_i32x8(f.add(u)),
            load_i32x8(f.add(u + 1)),
            load_i32x8(f.add(c - 1)),
            load_i32x8(f.add(c + 1)),
            load_i32x8(f.add(d - 1)),
            load_i32x8(f.add(d)),
            load_i32x8(f.add(d + 1)),
        ];
        let n = _mm256_add_epi32(
            _mm256_add_epi32(_mm256_add_epi32(s[0], s[1]), _mm256_add_epi32(s[2], s[3])),
            _mm256_add_epi32(_mm256_add_epi32(s[4], s[5]), _mm256_add_epi32(s[6], s[7])),
        );
        _mm256_add_epi32(n, load_i32x8(centre.as_ptr().add(c)))
    }
}

/// `((x * rfactor + 2^27) >> 28) as i32` of the 8 `i32` lanes of `x` (the scale-1..3 CSF
/// weighting, libvmaf's `int64` product): the 64-bit products as even/odd lane pairs, the
/// unsigned weight `rfactor` (`rf`, as a signed lane) a signed product plus `x << 32` where it is
/// 2^31 or more (equal modulo 2^64, all the kept bits need), `>> 28` logical (its low 32 bits
/// are the arithmetic shift's).
#[inline]
#[target_feature(enable = "avx2")]
fn scale_q28(x: __m256i, rf: __m256i, rfactor: u32) -> __m256i {
    let r27 = _mm256_set1_epi64x(1 << 27);
    let scaled = |xs: __m256i| {
        let mut p = _mm256_mul_epi32(xs, rf);
        if rfactor >= 1 << 31 {
            p = _mm256_add_epi64(p, _mm256_slli_epi64::<32>(xs));
        }
        _mm256_srli_epi64::<28>(_mm256_add_epi64(p, r27))
    };
    _mm256_blend_epi32::<0b1010_1010>(
        scaled(x),
        _mm256_slli_epi64::<32>(scaled(_mm256_srli_epi64::<32>(x))),
    )
}

#[target_feature(enable = "avx2")]
#[allow(clippy::too_many_arguments)]
fn cm_s0_interior_avx2(
    x_hvd: [&[i16]; 3],
    flt: &[i32],
    centre: &[i32],
    rows: (usize, usize, usize),
    cols: Range<usize>,
    i_rfactor: [u16; 3],
    cub: [u32; 3],
    cub_add_s: [i64; 3],
) -> [i64; 3] {
    const SUB: [i32; 3] = [10, 10, 12];
    const SQ_SHIFT: [i32; 3] = [29, 29, 30];
    const SQ_ADD: [i64; 3] = [1 << 28, 1 << 28, 1 << 29];
    let n = cols.end.saturating_sub(cols.start);
    let n8 = n / 8 * 8;
    let (j0, jv) = (cols.start, cols.start + n8);
    if n8 > 0 {
        // The vector loop reads columns j0 - 1 ..= jv of the three rows.
        assert!(j0 >= 1);
        let top = rows.0.max(rows.1).max(rows.2) + jv + 1;
        assert!(x_hvd.iter().all(|b| b.len() >= top));
        assert!(flt.len() >= top && centre.len() >= top);
    }
    let z = _mm256_setzero_si256();
    let rf = i_rfactor.map(|r| _mm256_set1_epi32(r as i32));
    let sub = SUB.map(|s| _mm_cvtsi32_si128(s));
    let sq_add = SQ_ADD.map(|a| _mm256_set1_epi64x(a));
    let sq_shift = SQ_SHIFT.map(|s| _mm_cvtsi32_si128(s));
    let cub_add = cub_add_s.map(|a| _mm256_set1_epi64x(a));
    let cub_shift = cub.map(|s| _mm_cvtsi32_si128((s & 63) as i32));
    let mut acc = [z; 3];
    for j in (j0..jv).step_by(8) {
        let (u, c, d) = (rows.0 + j, rows.1 + j, rows.2 + j);
        // SAFETY: every offset read lies in row + j0 - 1 .. row + jv + 1 <= top (checked).
        let thr = unsafe { thr8(flt, centre, (u, c, d)) };
        let xs: [__m256i; 3] = from_fn(|b| {
            // SAFETY: as above (c + 8 <= top).
            let xv = unsafe { load8(x_hvd[b].as_ptr().add(c)) };
            let x = _mm256_mullo_epi32(xv, rf[b]);
            let x = _mm256_sub_epi32(_mm256_abs_epi32(x), _mm256_sll_epi32(thr, sub[b]));
            _mm256_max_epi32(x, z)
        });
        let small = below_2_30(xs);
        for b in 0..3 {
            for x in [xs[b], _mm256_srli_epi64::<32>(xs[b])] {
                // x in [0, 2^31): the square in u64, its low 32 bits taken as i32 (C's cast).
                let sq = _mm256_srl_epi64(
                    _mm256_add_epi64(_mm256_mul_epu32(x, x), sq_add[b]),
                    sq_shift[b],
                );
                let t = _mm256_add_epi64(_mm256_mul_epi32(sq, x), cub_add[b]);
                acc[b] = _mm256_add_epi64(acc[b], cube_shift(t, cub_shift[b], small));
            }
        }
    }
    // The lanes' wrapping sum (the same bits as signed or unsigned).
    let mut inner = acc.map(|a| sum_u64x4(a) as i64);
    let tail = scalar::cm_s0_interior(
        x_hvd,
        flt,
        centre,
        rows,
        jv.max(j0)..cols.end,
        i_rfactor,
        cub,
        cub_add_s,
    );
    for b in 0..3 {
        inner[b] = inner[b].wrapping_add(tail[b]);
    }
    inner
}

// ---------------------------------------------------------------------------------------------
// Scale-0 DWT
// ---------------------------------------------------------------------------------------------

// The AVX2 scale-0 DWT row kernels: the vertical pass 16 columns per step with
// `_mm256_madd_epi16` on interleaved row pairs (the AVX-512 peer's method), the horizontal pass
// 16 outputs per step with `_mm256_madd_epi16` on tap pairs (the taps fit `i16` and no product
// pair overflows, so the `i32` sums are the scalar's); edges and leftovers by the scalar
// kernels.

/// The db2 taps in `madd` pairs (`c[k]`, `c[k + 1]` as the low and high `i16` of each 32-bit
/// lane): low-pass taps 0-1 and 2-3, then the high-pass ones.
#[inline]
#[target_feature(enable = "avx2")]
fn db2_tap_pairs() -> [__m256i; 4] {
    let pair = |c: &[i32; 4], k: usize| _mm256_set1_epi32((c[k + 1] << 16) | (c[k] & 0xffff));
    [
        pair(&DB2_LO, 0),
        pair(&DB2_LO, 2),
        pair(&DB2_HI, 0),
        pair(&DB2_HI, 2),
    ]
}

/// Four rows of 16 `i16` columns as `madd` operands: rows 0 and 1 (2 and 3) interleaved as the
/// halves of 32-bit lanes, `[[01, 23] of columns 0-3, [01, 23] of columns 4-7]` per 128-bit half
/// (the interleave's order).
#[inline]
#[target_feature(enable = "avx2")]
fn row_pairs(s: [__m256i; 4]) -> [[__m256i; 2]; 2] {
    [
        [
            _mm256_unpacklo_epi16(s[0], s[1]),
            _mm256_unpacklo_epi16(s[2], s[3]),
        ],
        [
            _mm256_unpackhi_epi16(s[0], s[1]),
            _mm256_unpackhi_epi16(s[2], s[3]),
        ],
    ]
}

/// One filter's unrounded four-tap sums of [`row_pairs`] operands, tap pairs `c01` and `c23`.
#[inline]
#[target_feature(enable = "avx2")]
fn db2_fir(p: [__m256i; 2], c01: __m256i, c23: __m256i) -> __m256i {
    _mm256_add_epi32(_mm256_madd_epi16(p[0], c01), _mm256_madd_epi16(p[1], c23))
}

/// Stores 16 `i16` to the start of `d` (bounds-checked).
#[inline]
#[target_feature(enable = "avx2")]
fn store_i16x16(d: &mut [i16], v: __m256i) {
    let d = &mut d[..16];
    // SAFETY: `d` holds 16 `i16` (32 bytes); the store is unaligned.
    unsafe { _mm256_storeu_si256(d.as_mut_ptr().cast(), v) }
}

/// The vertical pass for one sample type, 16 columns per step: rows 0, 1 and rows 2, 3
/// interleaved and weighed by their tap pairs, one `_mm256_madd_epi16` each (the AVX-512 peer's
/// method: the taps fit `i16`, no product pair overflows, so the `i32` sums are the scalar's);
/// samples that may not fit `i16` (`$flip`) go in as `s - 2^15`, the `2^15 * sum(taps)` they
/// leave out folded into the rounding constant. The rounded values fit `i16` (see the AVX-512
/// peer), so the saturating pack is exact; per 128-bit half it puts the interleave's columns
/// 0-3 before 4-7, the column order.
macro_rules! dwt_s0_vertical_avx2 {
    ($entry:ident, $kernel:ident, $t:ty, $load:ident, $flip:expr) => {
        fn $entry(rows: [&[$t]; 4], bpc: u32, lo: &mut [i16], hi: &mut [i16]) {
            // SAFETY: only reachable through `install`, which checked that the CPU has
            // AVX2.
            unsafe { $kernel(rows, bpc, lo, hi) }
        }

        #[target_feature(enable = "avx2")]
        fn $kernel(rows: [&[$t]; 4], bpc: u32, lo: &mut [i16], hi: &mut [i16]) {
            const FLIP: bool = $flip;
            let w = lo.len();
            assert!(hi.len() == w && rows.iter().all(|r| r.len() >= w) && (8..=16).contains(&bpc));
            let w16 = w / 16 * 16;
            let add = 1i32 << (bpc - 1);
            // (fir - off + add) >> bpc, the wrapping `- off + add` folded into one constant with
            // the 2^15 * sum(taps) the flipped samples leave out.
            let rnd = |sum: i32| {
                let unflip = if FLIP { sum.wrapping_mul(1 << 15) } else { 0 };
                _mm256_set1_epi32(add.wrapping_sub(sum.wrapping_mul(add)).wrapping_add(unflip))
            };
            let (rnd_lo, rnd_hi) = (rnd(DB2_LO_SUM), rnd(DB2_HI_SUM));
            let flip = _mm256_set1_epi16(if FLIP { i16::MIN } else { 0 });
            let sh = _mm_cvtsi32_si128(bpc as i32);
            let [lo01, lo23, hi01, hi23] = db2_tap_pairs();
            let p = rows.map(|r| r.as_ptr());
            for j in (0..w16).step_by(16) {
                // SAFETY: j + 16 <= w16 <= w <= every row's length (checked above).
                let s = p.map(|r| _mm256_xor_si256(unsafe { $load(r.add(j)) }, flip));
                let pairs = row_pairs(s);
                let fir = |c01: __m256i, c23: __m256i, rnd: __m256i| {
                    let [l, h] = pairs
                        .map(|p| _mm256_sra_epi32(_mm256_add_epi32(db2_fir(p, c01, c23), rnd), sh));
                    _mm256_packs_epi32(l, h)
                };
                store_i16x16(&mut lo[j..], fir(lo01, lo23, rnd_lo));
                store_i16x16(&mut hi[j..], fir(hi01, hi23, rnd_hi));
            }
            scalar::dwt_s0_vertical_both(
                rows.map(|r| &r[w16..]),
                bpc,
                &mut lo[w16..],
                &mut hi[w16..],
            );
        }
    };
}

/// 16 `u8` widened to `u16` lanes.
///
/// # Safety
/// `p` must be valid for reading 16 `u8`.
#[inline]
#[target_feature(enable = "avx2")]
unsafe fn load_u8x16(p: *const u8) -> __m256i {
    // SAFETY: the caller guarantees 16 readable bytes; the load is unaligned.
    _mm256_cvtepu8_epi16(unsafe { _mm_loadu_si128(p.cast()) })
}

/// 16 `u16`.
///
/// # Safety
/// `p` must be valid for reading 16 `u16`.
#[inline]
#[target_feature(enable = "avx2")]
unsafe fn load_u16x16(p: *const u16) -> __m256i {
    // SAFETY: the caller guarantees 32 readable bytes; the load is unaligned.
    unsafe { _mm256_loadu_si256(p.cast()) }
}

dwt_s0_vertical_avx2!(
    dwt_s0_vertical_u8,
    dwt_s0_vertical_u8_avx2,
    u8,
    load_u8x16,
    false
);
dwt_s0_vertical_avx2!(
    dwt_s0_vertical_u16,
    dwt_s0_vertical_u16_avx2,
    u16,
    load_u16x16,
    true
);

fn dwt_s0_horizontal(tmp: &[i16], ind_x: &[[usize; 4]], lo: &mut [i16], hi: &mut [i16]) {
    // SAFETY: only reachable through `install`, which checked that the CPU has AVX2.
    unsafe { dwt_s0_horizontal_avx2(tmp, ind_x, lo, hi) }
}

/// 16 `i16`.
///
/// # Safety
/// `p` must be valid for reading 16 `i16`.
#[inline]
#[target_feature(enable = "avx2")]
unsafe fn load_i16x16(p: *const i16) -> __m256i {
    // SAFETY: the caller guarantees 32 readable bytes; the load is unaligned.
    unsafe { _mm256_loadu_si256(p.cast()) }
}

/// The horizontal pass. `ind_x` must come from [`scalar::dwt_indices`] for `tmp.len()`: its
/// interior outputs `j` (`1 <= j`, `2j + 2 < w`) have the unmirrored taps `2j - 1 ..= 2j + 2`,
/// which the vector loop reads directly.
#[target_feature(enable = "avx2")]
fn dwt_s0_horizontal_avx2(tmp: &[i16], ind_x: &[[usize; 4]], lo: &mut [i16], hi: &mut [i16]) {
    let (w, n) = (tmp.len(), ind_x.len());
    let (lo, hi) = (&mut lo[..n], &mut hi[..n]);
    // Interior outputs: 1 <= j < jend, with 2 * (jend - 1) + 2 <= w - 1.
    let jend = if w >= 3 { ((w - 3) / 2 + 1).min(n) } else { 0 };
    let [lo01, lo23, hi01, hi23] = db2_tap_pairs();
    let rnd = _mm256_set1_epi32(32768);
    let p = tmp.as_ptr();
    let mut j = 1;
    while j + 16 <= jend {
        // Outputs j .. j + 8 take taps (2j - 1 + 2k, 2j + 2k) from `a0` and (2j + 1 + 2k,
        // 2j + 2 + 2k) from `b0`; outputs j + 8 .. j + 16 likewise from `a1`, `b1`.
        // SAFETY: the highest index read is 2j + 17 + 15 = 2(j + 15) + 2 <= 2(jend - 1) + 2 < w
        // (as j + 16 <= jend), the lowest 2j - 1 >= 1.
        let (a0, b0, a1, b1) = unsafe {
            let q = p.add(2 * j - 1);
            (
                load_i16x16(q),
                load_i16x16(q.add(2)),
                load_i16x16(q.add(16)),
                load_i16x16(q.add(18)),
            )
        };
        let fir = |a: __m256i, b: __m256i, c01: __m256i, c23: __m256i| {
            let acc = _mm256_add_epi32(_mm256_madd_epi16(a, c01), _mm256_madd_epi16(b, c23));
            _mm256_srai_epi32::<16>(_mm256_add_epi32(acc, rnd))
        };
        // The rounded values fit `i16`, so the saturating pack is exact.
        let pack = |x: __m256i, y: __m256i| {
            _mm256_permute4x64_epi64::<0b11_01_10_00>(_mm256_packs_epi32(x, y))
        };
        store_i16x16(
            &mut lo[j..],
            pack(fir(a0, b0, lo01, lo23), fir(a1, b1, lo01, lo23)),
        );
        store_i16x16(
            &mut hi[j..],
            pack(fir(a0, b0, hi01, hi23), fir(a1, b1, hi01, hi23)),
        );
        j += 16;
    }
    let first = n.min(1);
    scalar::dwt_s0_horizontal(tmp, &ind_x[..first], &mut lo[..first], &mut hi[..first]);
    let j = j.max(first);
    scalar::dwt_s0_horizontal(tmp, &ind_x[j..], &mut lo[j..], &mut hi[j..]);
}

// ---------------------------------------------------------------------------------------------
// Scale-1..3 contrast masking
// ---------------------------------------------------------------------------------------------

/// The AVX2 [`CmS123Interior`](super::CmS123Interior): 8 samples per step in 32-bit lanes, every
/// 64-bit product as even/odd lane pairs; `x * rfactor` with the unsigned `rfactor` as a signed
/// product plus `x << 32` where `rfactor >= 2^31` (equal modulo 2^64, which is all the scalar's
/// wrapping product keeps); `>> 32` as the high halves, `>> 28` logical (the low 32 bits kept
/// are the same as the arithmetic shift's).
fn cm_s123_interior(
    x_hvd: [&[i32]; 3],
    flt: &[i32],
    centre: &[i32],
    rows: (usize, usize, usize),
    cols: Range<usize>,
    rfactor: [u32; 3],
    shift_cub: u32,
) -> [i64; 3] {
    // SAFETY: only reachable through `install`, which checked that the CPU has AVX2.
    unsafe { cm_s123_interior_avx2(x_hvd, flt, centre, rows, cols, rfactor, shift_cub) }
}

/// 8 `i32`.
///
/// # Safety
/// `p` must be valid for reading 8 `i32`.
#[inline]
#[target_feature(enable = "avx2")]
unsafe fn load_i32x8(p: *const i32) -> __m256i {
    // SAFETY: the caller guarantees 32 readable bytes; the load is unaligned.
    unsafe { _mm256_loadu_si256(p.cast()) }
}

#[target_feature(enable = "avx2")]
fn cm_s123_interior_avx2(
    x_hvd: [&[i32]; 3],
    flt: &[i32],
    centre: &[i32],
    rows: (usize, usize, usize),
    cols: Range<usize>,
    rfactor: [u32; 3],
    shift_cub: u32,
) -> [i64; 3] {
    let n = cols.end.saturating_sub(cols.start);
    let n8 = n / 8 * 8;
    let (j0, jv) = (cols.start, cols.start + n8);
    if n8 > 0 {
        // The vector loop reads columns j0 - 1 ..= jv of the three rows.
        assert!(j0 >= 1);
        let top = rows.0.max(rows.1).max(rows.2) + jv + 1;
        assert!(x_hvd.iter().all(|b| b.len() >= top));
        assert!(flt.len() >= top && centre.len() >= top);
    }
    let z = _mm256_setzero_si256();
    let rf = rfactor.map(|r| _mm256_set1_epi32(r as i32));
    let sq_add = _mm256_set1_epi64x(1 << 29);
    let cub_add = _mm256_set1_epi64x(half_pow2_u32(shift_cub) as i64);
    let cub_shift = _mm_cvtsi32_si128((shift_cub & 63) as i32);
    let mut acc = [z; 3];
    for j in (j0..jv).step_by(8) {
        let (u, c, d) = (rows.0 + j, rows.1 + j, rows.2 + j);
        // SAFETY: every offset read lies in row + j0 - 1 .. row + jv + 1 <= top (checked).
        let thr = unsafe { thr8(flt, centre, (u, c, d)) };
        let xs: [__m256i; 3] = from_fn(|b| {
            // SAFETY: as above (c + 8 <= top).
            let xv = unsafe { load_i32x8(x_hvd[b].as_ptr().add(c)) };
            let x = scale_q28(xv, rf[b], rfactor[b]);
            _mm256_max_epi32(_mm256_sub_epi32(_mm256_abs_epi32(x), thr), z)
        });
        let small = below_2_30(xs);
        for b in 0..3 {
            for x in [xs[b], _mm256_srli_epi64::<32>(xs[b])] {
                // x in [0, 2^31): the square in u64, its low 32 bits taken as i32 (C's cast).
                let sq = _mm256_srli_epi64::<30>(_mm256_add_epi64(_mm256_mul_epu32(x, x), sq_add));
                let t = _mm256_add_epi64(_mm256_mul_epi32(sq, x), cub_add);
                acc[b] = _mm256_add_epi64(acc[b], cube_shift(t, cub_shift, small));
            }
        }
    }
    // The lanes' wrapping sum (the same bits as signed or unsigned).
    let mut inner = acc.map(|a| sum_u64x4(a) as i64);
    let tail = scalar::cm_s123_interior(
        x_hvd,
        flt,
        centre,
        rows,
        jv.max(j0)..cols.end,
        rfactor,
        shift_cub,
    );
    for b in 0..3 {
        inner[b] = inner[b].wrapping_add(tail[b]);
    }
    inner
}

// ---------------------------------------------------------------------------------------------
// Scale-0 decoupling
// ---------------------------------------------------------------------------------------------

/// The AVX2 [`DecoupleS0`](super::DecoupleS0): 8 samples per step in 32-bit lanes. The angle
/// test's dot products exact in `int32` (`vpmaddwd`, the one wrapping value told apart) rounded
/// to `float`, compared in `double` 4 lanes at a time, as the AVX-512 peer does; the
/// reciprocal `DIV_LOOKUP` entry from a `double` division ([`div_q30`]) and its 64-bit product
/// with `t` as even/odd lane pairs; the gain limit in `double` with `minpd`/`maxpd` (which return the second operand
/// unless the first is smaller/greater, as the scalar's comparisons) and `cvttpd2dq` (C's
/// truncation, `INT32_MIN` out of range). Columns left over by the scalar kernel.
fn decouple_s0(
    ref_hvd: [&[i16]; 3],
    dis_hvd: [&[i16]; 3],
    r_hvd: [&mut [i16]; 3],
    a_hvd: [&mut [i16]; 3],
    stride: usize,
    reg: Region,
    egl: f64,
) {
    // SAFETY: only reachable through `install`, which checked that the CPU has AVX2.
    unsafe { decouple_s0_avx2(ref_hvd, dis_hvd, r_hvd, a_hvd, stride, reg, egl) }
}

/// The 4 + 4 lane masks of two `double` comparisons as one 8 x 32-bit lane mask.
#[inline]
#[target_feature(enable = "avx2")]
fn mask_pd_to_epi32(lo: __m256d, hi: __m256d) -> __m256i {
    let pick = _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6);
    let l = _mm256_permutevar8x32_epi32(_mm256_castpd_si256(lo), pick);
    let h = _mm256_permutevar8x32_epi32(_mm256_castpd_si256(hi), pick);
    _mm256_permute2x128_si256::<0x20>(l, h)
}

#[target_feature(enable = "avx2")]
fn decouple_s0_avx2(
    ref_hvd: [&[i16]; 3],
    dis_hvd: [&[i16]; 3],
    r_hvd: [&mut [i16]; 3],
    a_hvd: [&mut [i16]; 3],
    stride: usize,
    reg: Region,
    egl: f64,
) {
    let [r_h, r_v, r_d] = r_hvd;
    let [a_h, a_v, a_d] = a_hvd;
    let (rb, ab) = ([r_h, r_v, r_d], [a_h, a_v, a_d]);
    let n = reg.right.saturating_sub(reg.left);
    let n8 = n / 8 * 8;
    if reg.bottom > reg.top && n8 > 0 {
        // The vector loop touches [i * stride + left, i * stride + left + n8) for rows i < bottom.
        let top = (reg.bottom - 1) * stride + reg.left + n8;
        assert!(ref_hvd.iter().chain(&dis_hvd).all(|b| b.len() >= top));
        assert!(rb.iter().chain(&ab).all(|b| b.len() >= top));
    }
    let z = _mm256_setzero_si256();
    let k32768 = _mm256_set1_epi32(32768);
    let r16384 = _mm256_set1_epi32(16384);
    let r16384x = _mm256_set1_epi64x(16384);
    let cos = _mm256_set1_pd(COS_1DEG_SQ as f64);
    let zd = _mm256_setzero_pd();
    let egl_v = _mm256_set1_pd(egl);
    // The gain limit in `float`, 8 lanes a step, where that is exact: `egl` a `float` of at most
    // 9 significant bits and below 2^100, so `r * egl` (|r| <= 2^15) is exact in `float` as in
    // `double`, and `min`/`max` with `t` and the truncation give the same values.
    let egl_ps = scalar::f32_exact_gain(egl).map(|e| _mm256_set1_ps(e));
    let int_min = _mm256_set1_epi32(i32::MIN);
    let two31 = _mm256_set1_ps(2_147_483_648.0);
    for i in reg.top..reg.bottom {
        for j in (reg.left..reg.left + n8).step_by(8) {
            let p = i * stride + j;
            // SAFETY: p + 8 <= (bottom - 1) * stride + left + n8 = top <= every band's length
            // (checked above).
            let (o, t) = unsafe {
                (
                    ref_hvd
                        .map(|b| _mm256_cvtepi16_epi32(_mm_loadu_si128(b.as_ptr().add(p).cast()))),
                    dis_hvd
                        .map(|b| _mm256_cvtepi16_epi32(_mm_loadu_si128(b.as_ptr().add(p).cast()))),
                )
            };
            let half = |v: __m256i, hi: bool| {
                _mm256_cvtepi32_pd(if hi {
                    _mm256_extracti128_si256::<1>(v)
                } else {
                    _mm256_castsi256_si128(v)
                })
            };
            // The angle flag: the dot products of the (h, v) pairs in `int32` by `madd`, exact
            // but for 2^31 (both products 2^30), which wraps to INT32_MIN, a value no exact sum
            // takes; `(float)` of them by `vcvtdq2ps` (correctly rounded, as C's of the
            // `int64`); the comparisons in `double`, 4 lanes per half, without the scalar's
            // `/ 4096` of each operand (both sides scale by 2^-24 exactly, which changes no
            // rounding and so no comparison).
            let pair = |a: __m256i, b: __m256i| {
                _mm256_blend_epi16::<0b1010_1010>(a, _mm256_slli_epi32::<16>(b))
            };
            let (op, tp) = (pair(o[0], o[1]), pair(t[0], t[1]));
            let to_f32 = |d: __m256i| {
                let wrapped = _mm256_castsi256_ps(_mm256_cmpeq_epi32(d, int_min));
                _mm256_blendv_ps(_mm256_cvtepi32_ps(d), two31, wrapped)
            };
            let ot = to_f32(_mm256_madd_epi16(op, tp));
            let om = to_f32(_mm256_madd_epi16(op, op));
            let tm = to_f32(_mm256_madd_epi16(tp, tp));
            let flag_half = |hi: bool| {
                let half_ps = |v: __m256| {
                    _mm256_cvtps_pd(if hi {
                        _mm256_extractf128_ps::<1>(v)
                    } else {
                        _mm256_castps256_ps128(v)
                    })
                };
                let (ot, om, tm) = (half_ps(ot), half_ps(om), half_ps(tm));
                let rhs = _mm256_mul_pd(_mm256_mul_pd(cos, om), tm);
                _mm256_and_pd(
                    _mm256_cmp_pd::<_CMP_GE_OQ>(ot, zd),
                    _mm256_cmp_pd::<_CMP_GE_OQ>(_mm256_mul_pd(ot, ot), rhs),
                )
            };
            // In `float` first, 8 lanes: each side within 3 roundings (2^-24 each) of its exact
            // value, and the `double` right side within 2^-53 of it, so a margin of 2^-20
            // decides as `double` does. Nearer (a pair at about 1 degree, rare) the step takes
            // the `double` test.
            let flag = angle_flag_ps(ot, om, tm, MARGIN_S0)
                .unwrap_or_else(|| mask_pd_to_epi32(flag_half(false), flag_half(true)));
            for b in 0..3 {
                let (ob, tb) = (o[b], t[b]);
                // k = clamp((DIV_LOOKUP[o + 32768] * t + 16384) >> 15, 0, 32768), 32768 for o = 0.
                // (Lanes with o = 0 get garbage, replaced by k = 32768 below.)
                let dv = _mm256_set_m128i(
                    div_q30(_mm256_cvtepi32_pd(_mm256_extracti128_si256::<1>(ob))),
                    div_q30(_mm256_cvtepi32_pd(_mm256_castsi256_si128(ob))),
                );
                let q = |d: __m256i, tt: __m256i| {
                    _mm256_srli_epi64::<15>(_mm256_add_epi64(_mm256_mul_epi32(d, tt), r16384x))
                };
                let qe = q(dv, tb);
                let qo = q(_mm256_srli_epi64::<32>(dv), _mm256_srli_epi64::<32>(tb));
                let q = _mm256_blend_epi32::<0b1010_1010>(qe, _mm256_slli_epi64::<32>(qo));
                let q = _mm256_max_epi32(_mm256_min_epi32(q, k32768), z);
                let o_zero = _mm256_cmpeq_epi32(ob, z);
                let k = _mm256_blendv_epi8(q, k32768, o_zero);
                // r = (i16)((k * o + 16384) >> 15): already in the `i16` range (|k * o| <= 2^30,
                // and 32767 * 32768 + 16384 rounds down to 32767), so the cast changes nothing.
                let mut r =
                    _mm256_srai_epi32::<15>(_mm256_add_epi32(_mm256_mullo_epi32(k, ob), r16384));
                // The gain limit where the angles agree and the restoration has a sign.
                let kpos = _mm256_cmpgt_epi32(k, z);
                let pos = _mm256_and_si256(kpos, _mm256_cmpgt_epi32(ob, z));
                let neg = _mm256_and_si256(kpos, _mm256_cmpgt_epi32(z, ob));
                let apply = _mm256_and_si256(flag, _mm256_or_si256(pos, neg));
                if _mm256_movemask_epi8(apply) != 0 {
                    let (lp, ln) = if let Some(egl_s) = egl_ps {
                        // All 8 lanes in `float`: the same exact values (see `egl_ps`).
                        let g = _mm256_mul_ps(_mm256_cvtepi32_ps(r), egl_s);
                        let tt = _mm256_cvtepi32_ps(tb);
                        (
                            _mm256_cvttps_epi32(_mm256_min_ps(g, tt)),
                            _mm256_cvttps_epi32(_mm256_max_ps(g, tt)),
                        )
                    } else {
                        let limit = |hi: bool| {
                            let g = _mm256_mul_pd(half(r, hi), egl_v);
                            let tt = half(tb, hi);
                            let lo_pos = _mm256_cvttpd_epi32(_mm256_min_pd(g, tt));
                            let lo_neg = _mm256_cvttpd_epi32(_mm256_max_pd(g, tt));
                            (lo_pos, lo_neg)
                        };
                        let ((p0, n0), (p1, n1)) = (limit(false), limit(true));
                        (_mm256_set_m128i(p1, p0), _mm256_set_m128i(n1, n0))
                    };
                    let lim = _mm256_blendv_epi8(ln, lp, pos);
                    let lim = _mm256_srai_epi32::<16>(_mm256_slli_epi32::<16>(lim));
                    r = _mm256_blendv_epi8(r, lim, apply);
                }
                // a = (i16)(t - r), wrapping; r is in the `i16` range, so one saturating pack
                // narrows both, and the qword permute puts r's 8 in the low half, a's in the high.
                let a = _mm256_sub_epi32(tb, r);
                let a = _mm256_srai_epi32::<16>(_mm256_slli_epi32::<16>(a));
                let ra = _mm256_permute4x64_epi64::<0b11_01_10_00>(_mm256_packs_epi32(r, a));
                let (rd, ad) = (&mut rb[b][p..p + 8], &mut ab[b][p..p + 8]);
                // SAFETY: `rd` and `ad` hold 8 `i16` (16 bytes); the stores are unaligned.
                unsafe {
                    _mm_storeu_si128(rd.as_mut_ptr().cast(), _mm256_castsi256_si128(ra));
                    _mm_storeu_si128(ad.as_mut_ptr().cast(), _mm256_extracti128_si256::<1>(ra));
                }
            }
        }
    }
    if n8 < n {
        let [r_h, r_v, r_d] = rb;
        let [a_h, a_v, a_d] = ab;
        let tail = Region {
            left: reg.left + n8,
            ..reg
        };
        scalar::decouple_s0(
            ref_hvd,
            dis_hvd,
            [r_h, r_v, r_d],
            [a_h, a_v, a_d],
            stride,
            tail,
            egl,
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Scale-1..3 DWT
// ---------------------------------------------------------------------------------------------

// The AVX2 scale-1..3 DWT row kernels: every `int64` four-tap sum as even/odd lane pairs of
// `_mm256_mul_epi32` products (exact: `i32` samples times `i16` taps), the rounding shift (at
// most 16) logical, which keeps the same low 32 bits as the scalar's arithmetic one; vertical 8
// columns per step (`i16` samples: 16 columns per step, two taps per `madd`, in `int32`),
// horizontal 4 outputs per step from two loads of the tap run; edges and leftovers by the scalar
// kernels.

/// `sum_k c[k] * x[k]` of the low 32-bit halves of the 64-bit lanes, in 64 bits.
#[inline]
#[target_feature(enable = "avx2")]
fn fir4_epi64(c: &[__m256i; 4], x: &[__m256i; 4]) -> __m256i {
    _mm256_add_epi64(
        _mm256_add_epi64(_mm256_mul_epi32(x[0], c[0]), _mm256_mul_epi32(x[1], c[1])),
        _mm256_add_epi64(_mm256_mul_epi32(x[2], c[2]), _mm256_mul_epi32(x[3], c[3])),
    )
}

/// The scale-1..3 vertical pass for one sample type.
macro_rules! dwt_s123_vertical_avx2 {
    ($entry:ident, $kernel:ident, $t:ty, $load:ident) => {
        fn $entry(rows: [&[$t]; 4], scale: usize, lo: &mut [i32], hi: &mut [i32]) {
            // SAFETY: only reachable through `install`, which checked that the CPU has
            // AVX2.
            unsafe { $kernel(rows, scale, lo, hi) }
        }

        #[target_feature(enable = "avx2")]
        fn $kernel(rows: [&[$t]; 4], scale: usize, lo: &mut [i32], hi: &mut [i32]) {
            let w = lo.len();
            assert!(hi.len() == w && rows.iter().all(|r| r.len() >= w));
            let (add, shift) = DWT_S123_VERTICAL_ROUND[scale - 1];
            let w8 = w / 8 * 8;
            let add = _mm256_set1_epi64x(add);
            let sh = _mm_cvtsi32_si128(shift as i32);
            let clo = DB2_LO.map(|c| _mm256_set1_epi32(c));
            let chi = DB2_HI.map(|c| _mm256_set1_epi32(c));
            let p = rows.map(|r| r.as_ptr());
            for j in (0..w8).step_by(8) {
                // SAFETY: j + 8 <= w8 <= w <= every row's length (checked above).
                let e = p.map(|r| unsafe { $load(r.add(j)) });
                let o = e.map(|v| _mm256_srli_epi64::<32>(v));
                let round = |c: &[__m256i; 4]| {
                    let f = |x: &[__m256i; 4]| {
                        _mm256_srl_epi64(_mm256_add_epi64(fir4_epi64(c, x), add), sh)
                    };
                    _mm256_blend_epi32::<0b1010_1010>(f(&e), _mm256_slli_epi64::<32>(f(&o)))
                };
                store_i32x8(&mut lo[j..], round(&clo));
                store_i32x8(&mut hi[j..], round(&chi));
            }
            scalar::dwt_s123_vertical(rows.map(|r| &r[w8..]), scale, &mut lo[w8..], &mut hi[w8..]);
        }
    };
}

fn dwt_s123_vertical_i16(rows: [&[i16]; 4], scale: usize, lo: &mut [i32], hi: &mut [i32]) {
    // SAFETY: only reachable through `install`, which checked that the CPU has AVX2.
    unsafe { dwt_s123_vertical_i16_avx2(rows, scale, lo, hi) }
}

/// The scale-1..3 vertical pass of `i16` samples (the scale-0 approximation band), 16 columns
/// per step in `int32` (the AVX-512 peer's method): rows 0 and 1 (2 and 3) interleaved as the
/// halves of 32-bit lanes, each pair filtered by one `_mm256_madd_epi16`. The scalar's `int64`
/// sum fits `int32` here (`|sum| <= 2^15 * sum(|taps|) = 2^15 * 54822 < 2^31 - 2^15`, rounding
/// term included), so the `int32` sum and arithmetic shift are the scalar's exactly.
#[target_feature(enable = "avx2")]
fn dwt_s123_vertical_i16_avx2(rows: [&[i16]; 4], scale: usize, lo: &mut [i32], hi: &mut [i32]) {
    let w = lo.len();
    assert!(hi.len() == w && rows.iter().all(|r| r.len() >= w));
    let (add, shift) = DWT_S123_VERTICAL_ROUND[scale - 1];
    let add = _mm256_set1_epi32(add as i32);
    let sh = _mm_cvtsi32_si128(shift as i32);
    let [lo01, lo23, hi01, hi23] = db2_tap_pairs();
    let w16 = w / 16 * 16;
    let p = rows.map(|r| r.as_ptr());
    for j in (0..w16).step_by(16) {
        // SAFETY: j + 16 <= w16 <= w <= every row's length (checked above); unaligned loads.
        let s = p.map(|r| unsafe { _mm256_loadu_si256(r.add(j).cast()) });
        let pairs = row_pairs(s);
        for (out, c01, c23) in [(&mut *lo, lo01, lo23), (&mut *hi, hi01, hi23)] {
            let [l, h] =
                pairs.map(|p| _mm256_sra_epi32(_mm256_add_epi32(db2_fir(p, c01, c23), add), sh));
            store_i32x8(&mut out[j..], _mm256_permute2x128_si256::<0x20>(l, h));
            store_i32x8(&mut out[j + 8..], _mm256_permute2x128_si256::<0x31>(l, h));
        }
    }
    scalar::dwt_s123_vertical(
        rows.map(|r| &r[w16..]),
        scale,
        &mut lo[w16..],
        &mut hi[w16..],
    );
}
dwt_s123_vertical_avx2!(
    dwt_s123_vertical_i32,
    dwt_s123_vertical_i32_avx2,
    i32,
    load_i32x8
);

/// Stores 8 `i32` to the start of `d` (bounds-checked).
#[inline]
#[target_feature(enable = "avx2")]
fn store_i32x8(d: &mut [i32], v: __m256i) {
    let d = &mut d[..8];
    // SAFETY: `d` holds 8 `i32` (32 bytes); the store is unaligned.
    unsafe { _mm256_storeu_si256(d.as_mut_ptr().cast(), v) }
}

/// Stores the 4 `i32` of `v` to the start of `d` (bounds-checked).
#[inline]
#[target_feature(enable = "avx2")]
fn store_i32x4(d: &mut [i32], v: __m128i) {
    let d = &mut d[..4];
    // SAFETY: `d` holds 4 `i32` (16 bytes); the store is unaligned.
    unsafe { _mm_storeu_si128(d.as_mut_ptr().cast(), v) }
}

fn dwt_s123_horizontal(
    tmp: &[i32],
    ind_x: &[[usize; 4]],
    scale: usize,
    lo: &mut [i32],
    hi: &mut [i32],
) {
    // SAFETY: only reachable through `install`, which checked that the CPU has AVX2.
    unsafe { dwt_s123_horizontal_avx2(tmp, ind_x, scale, lo, hi) }
}

/// The scale-1..3 horizontal pass. `ind_x` must come from [`scalar::dwt_indices`] for
/// `tmp.len()`: its interior outputs `j` (`1 <= j`, `2j + 2 < w`) have the unmirrored taps
/// `2j - 1 ..= 2j + 2`, which the vector loop reads directly.
#[target_feature(enable = "avx2")]
fn dwt_s123_horizontal_avx2(
    tmp: &[i32],
    ind_x: &[[usize; 4]],
    scale: usize,
    lo: &mut [i32],
    hi: &mut [i32],
) {
    let (w, n) = (tmp.len(), ind_x.len());
    let (lo, hi) = (&mut lo[..n], &mut hi[..n]);
    let jend = if w >= 3 { ((w - 3) / 2 + 1).min(n) } else { 0 };
    let (add, shift) = DWT_S123_HORIZONTAL_ROUND[scale - 1];
    let add = _mm256_set1_epi64x(add);
    let sh = _mm_cvtsi32_si128(shift as i32);
    let clo = DB2_LO.map(|c| _mm256_set1_epi32(c));
    let chi = DB2_HI.map(|c| _mm256_set1_epi32(c));
    let even = _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6);
    let p = tmp.as_ptr();
    let mut j = 1;
    while j + 4 <= jend {
        // Outputs j .. j + 4: taps 0 and 1 are the even and odd lanes of the run from 2j - 1,
        // taps 2 and 3 those of the run from 2j + 1.
        // SAFETY: the highest index read is 2j + 1 + 7 = 2(j + 3) + 2 <= 2(jend - 1) + 2 < w
        // (as j + 4 <= jend), the lowest 2j - 1 >= 1.
        let (a, b) = unsafe {
            let q = p.add(2 * j - 1);
            (load_i32x8(q), load_i32x8(q.add(2)))
        };
        let taps = [a, _mm256_srli_epi64::<32>(a), b, _mm256_srli_epi64::<32>(b)];
        let round = |c: &[__m256i; 4]| {
            let r = _mm256_srl_epi64(_mm256_add_epi64(fir4_epi64(c, &taps), add), sh);
            _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(r, even))
        };
        store_i32x4(&mut lo[j..], round(&clo));
        store_i32x4(&mut hi[j..], round(&chi));
        j += 4;
    }
    let first = n.min(1);
    scalar::dwt_s123_horizontal(
        tmp,
        &ind_x[..first],
        scale,
        &mut lo[..first],
        &mut hi[..first],
    );
    let j = j.max(first);
    scalar::dwt_s123_horizontal(tmp, &ind_x[j..], scale, &mut lo[j..], &mut hi[j..]);
}

// ---------------------------------------------------------------------------------------------
// CSF
// ---------------------------------------------------------------------------------------------

/// The AVX2 [`CsfS0`](super::CsfS0), 16 samples per step: `csf` in `int32` lanes (the
/// products wrap as the scalar's `int32` ones) on the even and odd samples of a 16-bit vector
/// sign-extended in place, put back together from their low 16 bits (C's narrowing cast); then
/// the filter and centre values in 16-bit lanes ([`csf_s0_parts`]), the band sums in 32-bit
/// lanes; leftover columns by the scalar kernel.
fn csf_s0(
    src: [&[i16]; 3],
    flt: &mut [i32],
    centre: &mut [i32],
    stride: usize,
    reg: Region,
    i_rfactor: [u16; 3],
) {
    // SAFETY: only reachable through `install`, which checked that the CPU has AVX2.
    unsafe { csf_s0_avx2(src, flt, centre, stride, reg, i_rfactor) }
}

/// Asserts that `reg` (its vector part, `n8` columns from `reg.left`) lies inside bands of
/// `len` values with rows `stride` apart.
fn check_region(reg: Region, n8: usize, stride: usize, lens: &[usize]) {
    if reg.bottom > reg.top && n8 > 0 {
        let top = (reg.bottom - 1) * stride + reg.left + n8;
        assert!(lens.iter().all(|&l| l >= top));
    }
}

/// The AVX-512 peer's `csf_s0_parts` for 16 lanes: the scale-0 filter and centre values
/// `((k * a + 2048) >> 12) as i16` of `a = |csf|` (`u16`, at most 2^15) as `a + |(2184 a + 2^14)
/// >> 15|` and `2a + |(4368 a + 2^14) >> 15|`, wrapping, `vpmulhrsw` for the rounding shifts
/// (the absolute value right for `a = 2^15`, which `vpmulhrsw` takes as `-2^15`).
#[inline]
#[target_feature(enable = "avx2")]
fn csf_s0_parts(a: __m256i) -> (__m256i, __m256i) {
    const { assert!(FIX_ONE_BY_30 == 4369 && ONE_BY_15 == 2 * FIX_ONE_BY_30) };
    let k30 = _mm256_abs_epi16(_mm256_mulhrs_epi16(a, _mm256_set1_epi16(2184)));
    let k15 = _mm256_abs_epi16(_mm256_mulhrs_epi16(a, _mm256_set1_epi16(4368)));
    (
        _mm256_add_epi16(a, k30),
        _mm256_add_epi16(_mm256_add_epi16(a, a), k15),
    )
}

#[target_feature(enable = "avx2")]
fn csf_s0_avx2(
    src_hvd: [&[i16]; 3],
    flt: &mut [i32],
    centre: &mut [i32],
    stride: usize,
    reg: Region,
    i_rfactor: [u16; 3],
) {
    const SHIFT: [i32; 3] = [15, 15, 17];
    const ADD: [i32; 3] = [16384, 16384, 65535];
    let n = reg.right.saturating_sub(reg.left);
    let n16 = n / 16 * 16;
    let lens = [
        src_hvd.map(|b| b.len()),
        [flt.len(), centre.len(), flt.len()],
    ];
    check_region(reg, n16, stride, lens.as_flattened());
    let rf = i_rfactor.map(|r| _mm256_set1_epi32(r as i32));
    let add = ADD.map(|a| _mm256_set1_epi32(a));
    let sh = SHIFT.map(|s| _mm_cvtsi32_si128(s));
    // The 16 `i16` lanes of `v` sign-extended, as two vectors of 8 `i32` in order.
    let widen = |v: __m256i| {
        (
            _mm256_cvtepi16_epi32(_mm256_castsi256_si128(v)),
            _mm256_cvtepi16_epi32(_mm256_extracti128_si256::<1>(v)),
        )
    };
    for i in reg.top..reg.bottom {
        for j in (reg.left..reg.left + n16).step_by(16) {
            let p = i * stride + j;
            let z = _mm256_setzero_si256();
            let (mut f0, mut f1, mut c0, mut c1) = (z, z, z, z);
            for b in 0..3 {
                // SAFETY: p + 16 <= (bottom - 1) * stride + left + n16 <= the band's length
                // (checked above); the load is unaligned.
                let s = unsafe { _mm256_loadu_si256(src_hvd[b].as_ptr().add(p).cast()) };
                let csf = |x: __m256i| {
                    let v = _mm256_add_epi32(_mm256_mullo_epi32(rf[b], x), add[b]);
                    _mm256_sra_epi32(v, sh[b])
                };
                let even = csf(_mm256_srai_epi32::<16>(_mm256_slli_epi32::<16>(s)));
                let odd = csf(_mm256_srai_epi32::<16>(s));
                // The odd lanes' low 16 bits over the even ones'.
                let c16 = _mm256_blend_epi16::<0b1010_1010>(even, _mm256_slli_epi32::<16>(odd));
                let (f, c) = csf_s0_parts(_mm256_abs_epi16(c16));
                let ((fl, fh), (cl, ch)) = (widen(f), widen(c));
                f0 = _mm256_add_epi32(f0, fl);
                f1 = _mm256_add_epi32(f1, fh);
                c0 = _mm256_add_epi32(c0, cl);
                c1 = _mm256_add_epi32(c1, ch);
            }
            store_i32x8(&mut flt[p..], f0);
            store_i32x8(&mut flt[p + 8..], f1);
            store_i32x8(&mut centre[p..], c0);
            store_i32x8(&mut centre[p + 8..], c1);
        }
    }
    if n16 < n {
        let tail = Region {
            left: reg.left + n16,
            ..reg
        };
        scalar::csf_s0(src_hvd, flt, centre, stride, tail, i_rfactor);
    }
}

/// The AVX2 [`CsfS123`](super::CsfS123): 8 samples per step, the 64-bit products as
/// even/odd lane pairs as in [`cm_s123_interior`] (the unsigned Q32 weight as a signed product
/// plus `x << 32`; `>> 28` logical, `>> 32` as the high halves); leftover columns by the scalar
/// kernel.
fn csf_s123(
    src: [&[i32]; 3],
    flt: &mut [i32],
    centre: &mut [i32],
    stride: usize,
    reg: Region,
    i_rfactor: [u32; 3],
) {
    // SAFETY: only reachable through `install`, which checked that the CPU has AVX2.
    unsafe { csf_s123_avx2(src, flt, centre, stride, reg, i_rfactor) }
}

#[target_feature(enable = "avx2")]
fn csf_s123_avx2(
    src_hvd: [&[i32]; 3],
    flt: &mut [i32],
    centre: &mut [i32],
    stride: usize,
    reg: Region,
    i_rfactor: [u32; 3],
) {
    let n = reg.right.saturating_sub(reg.left);
    let n8 = n / 8 * 8;
    let lens = [
        src_hvd.map(|b| b.len()),
        [flt.len(), centre.len(), flt.len()],
    ];
    check_region(reg, n8, stride, lens.as_flattened());
    // Both Q32 weights are below 2^31: valid signed 32-bit multipliers.
    let k30 = _mm256_set1_epi32(I4_FIX_ONE_BY_30 as i32);
    let k15 = _mm256_set1_epi32(I4_ONE_BY_15 as i32);
    let add32 = _mm256_set1_epi64x(i32::MIN as i64);
    let rf = i_rfactor.map(|r| _mm256_set1_epi32(r as i32));
    // (k * |c| - 2^31) >> 32 as i32 of the lanes of `a = |c|`: the high halves.
    let q32 = |a: __m256i, k: __m256i| {
        let e = _mm256_add_epi64(_mm256_mul_epi32(a, k), add32);
        let o = _mm256_add_epi64(_mm256_mul_epi32(_mm256_srli_epi64::<32>(a), k), add32);
        _mm256_blend_epi32::<0b1010_1010>(_mm256_srli_epi64::<32>(e), o)
    };
    for i in reg.top..reg.bottom {
        for j in (reg.left..reg.left + n8).step_by(8) {
            let p = i * stride + j;
            let (mut fs, mut cs) = (_mm256_setzero_si256(), _mm256_setzero_si256());
            for b in 0..3 {
                // SAFETY: p + 8 <= (bottom - 1) * stride + left + n8 <= the band's length
                // (checked above).
                let s = unsafe { load_i32x8(src_hvd[b].as_ptr().add(p)) };
                let c = scale_q28(s, rf[b], i_rfactor[b]);
                let a = _mm256_abs_epi32(c);
                fs = _mm256_add_epi32(fs, q32(a, k30));
                cs = _mm256_add_epi32(cs, q32(a, k15));
            }
            store_i32x8(&mut flt[p..], fs);
            store_i32x8(&mut centre[p..], cs);
        }
    }
    if n8 < n {
        let tail = Region {
            left: reg.left + n8,
            ..reg
        };
        scalar::csf_s123(src_hvd, flt, centre, stride, tail, i_rfactor);
    }
}

// ---------------------------------------------------------------------------------------------
// Scale-1..3 decoupling
// ---------------------------------------------------------------------------------------------

/// The AVX2 [`scalar::decouple_s123`]: 4 samples per step, every `int64` of the scalar kernel a
/// 64-bit lane. Steps whose six samples are all below 2^30 in magnitude run in vectors: the
/// angle test decided from `double` approximations of its dot products (AVX2 has no `(float)`
/// of an `int64`; see [`decouple_s123_step`]); the 15 leading bits of `|o|` from the exponent of
/// its exact `double`, their `DIV_LOOKUP` reciprocal by [`div_q30`], the rounding constant
/// `1 << (14 + shift)` (at most 2^29 here, so C's `int` does not wrap), the arithmetic 64-bit
/// shift emulated with the sign mask; the gain limit in `double` with `minpd`/`maxpd` and
/// `cvttpd2dq`, as the AVX-512 peer. Other steps (wider samples, an angle test too close to
/// call) and a row's last `< 4` samples go to the scalar kernel.
fn decouple_s123(
    ref_hvd: [&[i32]; 3],
    dis_hvd: [&[i32]; 3],
    r_hvd: [&mut [i32]; 3],
    a_hvd: [&mut [i32]; 3],
    stride: usize,
    reg: Region,
    egl: f64,
) {
    // SAFETY: only reachable through `install`, which checked that the CPU has AVX2.
    unsafe { decouple_s123_avx2(ref_hvd, dis_hvd, r_hvd, a_hvd, stride, reg, egl) }
}

#[target_feature(enable = "avx2")]
fn decouple_s123_avx2(
    ref_hvd: [&[i32]; 3],
    dis_hvd: [&[i32]; 3],
    r_hvd: [&mut [i32]; 3],
    a_hvd: [&mut [i32]; 3],
    stride: usize,
    reg: Region,
    egl: f64,
) {
    if reg.bottom <= reg.top || reg.right <= reg.left {
        return;
    }
    let [r_h, r_v, r_d] = r_hvd;
    let [a_h, a_v, a_d] = a_hvd;
    let mut out = [r_h, r_v, r_d, a_h, a_v, a_d];
    // Every step reads and writes [i * stride + j, i * stride + j + 4) with j + 4 <= right.
    let end = (reg.bottom - 1) * stride + reg.right;
    assert!(ref_hvd.iter().chain(&dis_hvd).all(|b| b.len() >= end));
    assert!(out.iter().all(|b| b.len() >= end));
    let egl_v = _mm256_set1_pd(egl);
    // Columns `cols` of row `i` by the scalar kernel.
    let scalar_cols = |out: &mut [&mut [i32]; 6], i: usize, cols: Range<usize>| {
        let one = Region {
            top: i,
            bottom: i + 1,
            left: cols.start,
            right: cols.end,
        };
        let [r0, r1, r2, a0, a1, a2] = out;
        scalar::decouple_s123(
            ref_hvd,
            dis_hvd,
            [r0, r1, r2],
            [a0, a1, a2],
            stride,
            one,
            egl,
        );
    };
    let wide = _mm256_set1_epi32(!((1 << 30) - 1));
    let store = |out: &mut [&mut [i32]; 6], p: usize, (r, a): ([__m128i; 3], [__m128i; 3])| {
        for b in 0..3 {
            // SAFETY: the callers' p + 4 <= i * stride + right <= end <= every band's length
            // (checked above); the stores are unaligned.
            unsafe {
                _mm_storeu_si128(out[b].as_mut_ptr().add(p).cast(), r[b]);
                _mm_storeu_si128(out[3 + b].as_mut_ptr().add(p).cast(), a[b]);
            }
        }
    };
    // Samples j .. j + 4 of row i: in vectors where all six values are below 2^30 and the
    // `double` angle test decides every pair, else by the scalar kernel.
    let quad = |out: &mut [&mut [i32]; 6], i: usize, j: usize| {
        let p = i * stride + j;
        // SAFETY: p + 4 <= i * stride + right <= end <= every band's length (checked above);
        // the loads are unaligned.
        let load = |b: &[i32]| unsafe { _mm_loadu_si128(b.as_ptr().add(p).cast()) };
        let o = ref_hvd.map(load);
        let t = dis_hvd.map(load);
        let any = [o[0], o[1], o[2], t[0], t[1], t[2]]
            .iter()
            .fold(_mm_setzero_si128(), |m, &v| {
                _mm_or_si128(m, _mm_abs_epi32(v))
            });
        // |v| < 2^30 for all six (|INT32_MIN| keeps bit 31 set), and an angle test the
        // vectors can decide.
        let step = if _mm_testz_si128(any, _mm256_castsi256_si128(wide)) == 0 {
            None
        } else {
            decouple_s123_step(o, t, egl_v)
        };
        match step {
            Some(ra) => store(out, p, ra),
            None => scalar_cols(out, i, j..j + 4),
        }
    };
    let n8 = (reg.right - reg.left) / 8 * 8;
    for i in reg.top..reg.bottom {
        // 8 samples a step where the `float` angle test decides them all (almost always), each
        // half's bands in 64-bit lanes; otherwise two 4-sample steps.
        for j in (reg.left..reg.left + n8).step_by(8) {
            let p = i * stride + j;
            // SAFETY: p + 8 <= i * stride + right <= end <= every band's length (checked above);
            // the loads are unaligned.
            let load = |b: &[i32]| unsafe { _mm256_loadu_si256(b.as_ptr().add(p).cast()) };
            let (o, t) = (ref_hvd.map(load), dis_hvd.map(load));
            let any = [o[0], o[1], o[2], t[0], t[1], t[2]]
                .iter()
                .fold(_mm256_setzero_si256(), |m, &v| {
                    _mm256_or_si256(m, _mm256_abs_epi32(v))
                });
            let flag = if _mm256_testz_si256(any, wide) == 0 {
                None
            } else {
                angle_flag_f32(o, t)
            };
            let Some(flag) = flag else {
                quad(&mut out, i, j);
                quad(&mut out, i, j + 4);
                continue;
            };
            for h in 0..2 {
                let half = |v: __m256i| {
                    if h == 0 {
                        _mm256_castsi256_si128(v)
                    } else {
                        _mm256_extracti128_si256::<1>(v)
                    }
                };
                let fl = _mm256_cvtepi32_epi64(half(flag));
                store(
                    &mut out,
                    p + 4 * h,
                    decouple_s123_bands(o.map(half), t.map(half), fl, egl_v),
                );
            }
        }
        let mut j = reg.left + n8;
        if j + 4 <= reg.right {
            quad(&mut out, i, j);
            j += 4;
        }
        if j < reg.right {
            scalar_cols(&mut out, i, j..reg.right);
        }
    }
}

/// The scale-1..3 angle flags of 8 samples (all six values below 2^30 in magnitude) as `i32`
/// lane masks, in `float`; `None` where a pair is too near the edge to call (the caller takes
/// the `double` test). The `float` dot products and magnitudes are within 4 roundings (2^-24
/// each) of the exact `int64` ones relative to `|o| |t|` (no cancellation matters near the
/// edge, where `ot` is within 0.1 % of `|o| |t|`), and C's `(float)` of them within one, so the
/// two sides of the test move by less than 2^-19 in all, against a margin of 2^-16
/// ([`angle_flag_ps`]); wherever the test holds `ot` is far from 0, so its sign is the exact
/// one's.
#[inline]
#[target_feature(enable = "avx2")]
fn angle_flag_f32(o: [__m256i; 3], t: [__m256i; 3]) -> Option<__m256i> {
    let [o0, o1, t0, t1] = [o[0], o[1], t[0], t[1]].map(|v| _mm256_cvtepi32_ps(v));
    let dot = |a0: __m256, a1: __m256, b0: __m256, b1: __m256| {
        _mm256_add_ps(_mm256_mul_ps(a0, b0), _mm256_mul_ps(a1, b1))
    };
    let (ot, om, tm) = (
        dot(o0, o1, t0, t1),
        dot(o0, o1, o0, o1),
        dot(t0, t1, t0, t1),
    );
    angle_flag_ps(ot, om, tm, MARGIN_S123)
}

/// The margins of the `float` angle tests, relative to the right side: scale 0's `float` sides
/// are within three roundings of the exact ones, scales 1..3's within about twenty.
const MARGIN_S0: f32 = 1.0 / (1 << 20) as f32;
const MARGIN_S123: f32 = 1.0 / (1 << 16) as f32;

/// The angle test `ot >= 0 && ot^2 >= cos^2(1°) * om * tm` of 8 lanes from `float`
/// approximations of its operands, as `i32` lane masks: a left side above the right one by more
/// than `margin` of it is above in C's `double` too, one below by more is below, provided the
/// approximations' errors stay well inside the margin (each caller shows its own). `None` where
/// a lane with `ot >= 0` lies within the margin (the caller takes the `double` test).
#[inline]
#[target_feature(enable = "avx2")]
fn angle_flag_ps(ot: __m256, om: __m256, tm: __m256, margin: f32) -> Option<__m256i> {
    let lhs = _mm256_mul_ps(ot, ot);
    let rhs = _mm256_mul_ps(_mm256_mul_ps(_mm256_set1_ps(COS_1DEG_SQ), om), tm);
    let above = _mm256_cmp_ps::<_CMP_GE_OQ>(lhs, _mm256_mul_ps(rhs, _mm256_set1_ps(1.0 + margin)));
    let below = _mm256_cmp_ps::<_CMP_LT_OQ>(lhs, _mm256_mul_ps(rhs, _mm256_set1_ps(1.0 - margin)));
    let ot_pos = _mm256_cmp_ps::<_CMP_GE_OQ>(ot, _mm256_setzero_ps());
    let undecided = _mm256_andnot_ps(_mm256_or_ps(above, below), ot_pos);
    (_mm256_testz_ps(undecided, undecided) != 0)
        .then(|| _mm256_castps_si256(_mm256_and_ps(ot_pos, above)))
}

/// The `double` of 4 `int64` lanes, rounded once: the exact `double`s of the signed high and
/// unsigned low 32-bit halves, combined by one addition.
#[inline]
#[target_feature(enable = "avx2")]
fn i64_to_f64_approx(v: __m256i) -> __m256d {
    let two52 = _mm256_set1_pd(4_503_599_627_370_496.0);
    let lo = _mm256_sub_pd(
        _mm256_castsi256_pd(_mm256_or_si256(
            _mm256_and_si256(v, _mm256_set1_epi64x(0xffff_ffff)),
            _mm256_castpd_si256(two52),
        )),
        two52,
    );
    let hi = _mm256_cvtepi32_pd(_mm256_castsi256_si128(_mm256_permutevar8x32_epi32(
        v,
        _mm256_setr_epi32(1, 3, 5, 7, 1, 3, 5, 7),
    )));
    _mm256_add_pd(_mm256_mul_pd(hi, _mm256_set1_pd(4_294_967_296.0)), lo)
}

/// The 4 `i32` in the low halves of the 64-bit lanes of `v`, in order.
#[inline]
#[target_feature(enable = "avx2")]
fn low_halves(v: __m256i) -> __m128i {
    _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(
        v,
        _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6),
    ))
}

/// One step of [`decouple_s123_avx2`]: the restored and additive values of the three bands of 4
/// samples whose values are all below 2^30 in magnitude, or `None` where an angle test is too
/// close to call in `double` (the caller runs the scalar kernel).
#[inline]
#[target_feature(enable = "avx2")]
fn decouple_s123_step(
    o32: [__m128i; 3],
    t32: [__m128i; 3],
    egl: __m256d,
) -> Option<([__m128i; 3], [__m128i; 3])> {
    let o = o32.map(|v| _mm256_cvtepi32_epi64(v));
    let t = t32.map(|v| _mm256_cvtepi32_epi64(v));
    // The angle flag, `ot >= 0 && ot^2 >= cos^2(1°) * om * tm` of the `(float)`s of the int64
    // dot products (then `/ 4096` in `double`): the sign of `ot` from the exact int64; the
    // comparison from `double` approximations (relative error below 2^-52) of the unrounded
    // products, which decide it wherever the two sides differ by more than 2^-20 of the right
    // side, more than the float roundings (2^-24 each) can move them. Nearer than that the
    // step is undecided and goes to the scalar kernel (`None`).
    let dot = |a0: __m256i, a1: __m256i, b0: __m256i, b1: __m256i| {
        _mm256_add_epi64(_mm256_mul_epi32(a0, b0), _mm256_mul_epi32(a1, b1))
    };
    let ot = dot(o[0], o[1], t[0], t[1]);
    let ot_d = i64_to_f64_approx(ot);
    let (o0, o1) = (_mm256_cvtepi32_pd(o32[0]), _mm256_cvtepi32_pd(o32[1]));
    let (t0, t1) = (_mm256_cvtepi32_pd(t32[0]), _mm256_cvtepi32_pd(t32[1]));
    let om = _mm256_add_pd(_mm256_mul_pd(o0, o0), _mm256_mul_pd(o1, o1));
    let tm = _mm256_add_pd(_mm256_mul_pd(t0, t0), _mm256_mul_pd(t1, t1));
    let lhs = _mm256_mul_pd(ot_d, ot_d);
    let rhs = _mm256_mul_pd(_mm256_mul_pd(_mm256_set1_pd(COS_1DEG_SQ as f64), om), tm);
    let margin = 1.0 / (1 << 20) as f64;
    let above = _mm256_cmp_pd::<_CMP_GE_OQ>(lhs, _mm256_mul_pd(rhs, _mm256_set1_pd(1.0 + margin)));
    let below = _mm256_cmp_pd::<_CMP_LT_OQ>(lhs, _mm256_mul_pd(rhs, _mm256_set1_pd(1.0 - margin)));
    let ot_neg = _mm256_cmpgt_epi64(_mm256_setzero_si256(), ot);
    let undecided = _mm256_andnot_si256(
        ot_neg,
        _mm256_castpd_si256(_mm256_andnot_pd(
            _mm256_or_pd(above, below),
            _mm256_castsi256_pd(_mm256_cmpeq_epi64(ot, ot)),
        )),
    );
    if _mm256_testz_si256(undecided, undecided) == 0 {
        return None;
    }
    let flag = _mm256_andnot_si256(ot_neg, _mm256_castpd_si256(above));
    Some(decouple_s123_bands(o32, t32, flag, egl))
}

/// The restored and additive values of [`decouple_s123_step`]'s three bands of 4 samples (all
/// below 2^30 in magnitude), given the angle flag of each (all ones in its 64-bit lane).
#[inline]
#[target_feature(enable = "avx2")]
fn decouple_s123_bands(
    o32: [__m128i; 3],
    t32: [__m128i; 3],
    flag: __m256i,
    egl: __m256d,
) -> ([__m128i; 3], [__m128i; 3]) {
    let o = o32.map(|v| _mm256_cvtepi32_epi64(v));
    let t = t32.map(|v| _mm256_cvtepi32_epi64(v));
    let z = _mm256_setzero_si256();
    let one = _mm256_set1_epi64x(1);
    let k32768 = _mm256_set1_epi64x(32768);
    let two52 = _mm256_set1_pd(4_503_599_627_370_496.0);
    let mut r_out = [_mm_setzero_si128(); 3];
    let mut a_out = [_mm_setzero_si128(); 3];
    for b in 0..3 {
        let (ob, tb) = (o[b], t[b]);
        let zero = _mm256_cmpeq_epi64(ob, z);
        let negative = _mm256_cmpgt_epi64(z, ob);
        let abs = _mm256_sub_epi64(_mm256_xor_si256(ob, negative), negative);
        // From 2^15 up, the 15 leading bits of |o|, rounded: (|o| + 2^(s-1)) >> s with s =
        // floor(log2 |o|) - 14 (at most 15), the floor from the exponent of the exact double of
        // |o| (< 2^30).
        let big = _mm256_cmpgt_epi64(abs, _mm256_set1_epi64x(32767));
        let exact = _mm256_sub_pd(
            _mm256_castsi256_pd(_mm256_or_si256(abs, _mm256_castpd_si256(two52))),
            two52,
        );
        let s = _mm256_sub_epi64(
            _mm256_srli_epi64::<52>(_mm256_castpd_si256(exact)),
            _mm256_set1_epi64x(1023 + 14),
        );
        let shift = _mm256_and_si256(big, s);
        let half = _mm256_srli_epi64::<1>(_mm256_sllv_epi64(one, shift));
        let msb = _mm256_srlv_epi64(_mm256_add_epi64(abs, half), shift);
        // DIV_LOOKUP[msb + 32768] * t * sign, exact in int64; lanes with o = 0 (msb 0: the
        // division gives garbage) take k = 32768 below. `msb` is exact in double (< 2^16).
        let msb_d = _mm256_sub_pd(
            _mm256_castsi256_pd(_mm256_or_si256(msb, _mm256_castpd_si256(two52))),
            two52,
        );
        let div = div_q30(msb_d);
        let num = _mm256_mul_epi32(_mm256_cvtepi32_epi64(div), tb);
        let num = _mm256_blendv_epi8(num, _mm256_sub_epi64(z, num), negative);
        // The rounding 1 << (14 + shift), at most 2^29 (the scalar's `int` wraps only at shift
        // 17, which needs |o| of 2^31).
        let round = _mm256_sllv_epi64(one, _mm256_add_epi64(shift, _mm256_set1_epi64x(14)));
        // Arithmetic shift right by 15 + shift (< 64): a logical one of the value with its sign
        // folded away, the sign folded back.
        let x = _mm256_add_epi64(num, round);
        let sign = _mm256_cmpgt_epi64(z, x);
        let q = _mm256_xor_si256(
            _mm256_srlv_epi64(
                _mm256_xor_si256(x, sign),
                _mm256_add_epi64(shift, _mm256_set1_epi64x(15)),
            ),
            sign,
        );
        let q = _mm256_blendv_epi8(q, z, _mm256_cmpgt_epi64(z, q));
        let q = _mm256_blendv_epi8(q, k32768, _mm256_cmpgt_epi64(q, k32768));
        let k = _mm256_blendv_epi8(q, k32768, zero);
        // r = (int32)((k * o + 16384) >> 15): bits 15..46 of the sum, which a logical shift
        // gives as well as an arithmetic one.
        let r = low_halves(_mm256_srli_epi64::<15>(_mm256_add_epi64(
            _mm256_mul_epi32(k, ob),
            _mm256_set1_epi64x(16384),
        )));
        // The gain limit where the angles agree and the restoration has a sign (k > 0, o != 0).
        let apply = low_halves(_mm256_andnot_si256(
            zero,
            _mm256_and_si256(flag, _mm256_cmpgt_epi64(k, z)),
        ));
        let r = if _mm_testz_si128(apply, apply) == 0 {
            let g = _mm256_mul_pd(_mm256_cvtepi32_pd(r), egl);
            let tt = _mm256_cvtepi32_pd(t32[b]);
            let lim_pos = _mm256_cvttpd_epi32(_mm256_min_pd(g, tt));
            let lim_neg = _mm256_cvttpd_epi32(_mm256_max_pd(g, tt));
            let lim = _mm_blendv_epi8(
                lim_neg,
                lim_pos,
                _mm_cmpgt_epi32(o32[b], _mm_setzero_si128()),
            );
            _mm_blendv_epi8(r, lim, apply)
        } else {
            r
        };
        r_out[b] = r;
        // a = t - r, wrapping in 32 bits.
        a_out[b] = _mm_sub_epi32(t32[b], r);
    }
    (r_out, a_out)
}

// ---------------------------------------------------------------------------------------------
// Denominators
// ---------------------------------------------------------------------------------------------

/// The AVX2 [`CsfDenS0`](super::CsfDenS0): 8 samples per step, `|x|` (2^15 for `i16::MIN`, as
/// the scalar's `unsigned_abs`) squared in 32 bits (at most 2^30) and cubed in 64 as even/odd
/// lane pairs (`_mm256_mul_epu32`), summed with the scalar's wrapping `u64` additions (their
/// order does not change the sum); each row's sum rounded as the scalar does; a row's last
/// `< 8` samples by the scalar kernel.
fn csf_den_s0(ref_hvd: [&[i16]; 3], stride: usize, reg: Region, shift: u32) -> [u64; 3] {
    // SAFETY: only reachable through `install`, which checked that the CPU has AVX2.
    unsafe { csf_den_s0_avx2(ref_hvd, stride, reg, shift) }
}

#[target_feature(enable = "avx2")]
fn csf_den_s0_avx2(ref_hvd: [&[i16]; 3], stride: usize, reg: Region, shift: u32) -> [u64; 3] {
    let add: u64 = if shift > 0 { 1 << (shift - 1) } else { 0 };
    let mut accum = [0u64; 3];
    let n8 = (reg.right - reg.left) / 8 * 8;
    for (b, src) in ref_hvd.into_iter().enumerate() {
        for i in reg.top..reg.bottom {
            let row = &src[i * stride + reg.left..i * stride + reg.right];
            let (mut even, mut odd) = (_mm256_setzero_si256(), _mm256_setzero_si256());
            for j in (0..n8).step_by(8) {
                // SAFETY: j + 8 <= n8 <= row.len().
                let x = _mm256_abs_epi32(unsafe { load8(row.as_ptr().add(j)) });
                let sq = _mm256_mullo_epi32(x, x);
                even = _mm256_add_epi64(even, _mm256_mul_epu32(sq, x));
                let (sq, x) = (_mm256_srli_epi64::<32>(sq), _mm256_srli_epi64::<32>(x));
                odd = _mm256_add_epi64(odd, _mm256_mul_epu32(sq, x));
            }
            let mut inner = sum_u64x4(_mm256_add_epi64(even, odd));
            for &x in &row[n8..] {
                inner = inner.wrapping_add(scalar::den_s0_term(x));
            }
            accum[b] = accum[b].wrapping_add(inner.wrapping_add(add) >> shift);
        }
    }
    accum
}

/// The AVX2 [`CsfDenS123`](super::CsfDenS123): 4 samples per step in 64-bit lanes, so every
/// `u64` of the scalar kernel is a lane: `|x|` (2^31 for `i32::MIN`, as the scalar's
/// `wrapping_abs() as u32`), its square exact (`_mm256_mul_epu32`), the wrapping 64-bit product
/// of the rounded square and `|x|` from two 32 x 32-bit products (`|x| < 2^32`), the scalar's
/// wrapping sums; each row's sum rounded as the scalar does; a row's last `< 4` samples by the
/// scalar kernel.
fn csf_den_s123(
    ref_hvd: [&[i32]; 3],
    stride: usize,
    reg: Region,
    scale: usize,
    shift_cub: u32,
    shift_accum: u32,
) -> [u64; 3] {
    // SAFETY: only reachable through `install`, which checked that the CPU has AVX2.
    unsafe { csf_den_s123_avx2(ref_hvd, stride, reg, scale, shift_cub, shift_accum) }
}

#[target_feature(enable = "avx2")]
fn csf_den_s123_avx2(
    ref_hvd: [&[i32]; 3],
    stride: usize,
    reg: Region,
    scale: usize,
    shift_cub: u32,
    shift_accum: u32,
) -> [u64; 3] {
    const SHIFT_SQ: [u32; 3] = [31, 30, 31];
    let shift_sq = SHIFT_SQ[scale - 1];
    let add_sq = _mm256_set1_epi64x(1i64 << shift_sq);
    let sh_sq = _mm_cvtsi32_si128(shift_sq as i32);
    let add_cub_s = half_pow2_u32(shift_cub) as u64;
    let add_cub = _mm256_set1_epi64x(add_cub_s as i64);
    let sh_cub = _mm_cvtsi32_si128((shift_cub & 63) as i32);
    let add_accum = half_pow2_u32(shift_accum) as u64;
    let (sc, sa) = (shift_cub & 63, shift_accum & 63);
    let mut accum = [0u64; 3];
    let n4 = (reg.right - reg.left) / 4 * 4;
    for (b, src) in ref_hvd.into_iter().enumerate() {
        for i in reg.top..reg.bottom {
            let row = &src[i * stride + reg.left..i * stride + reg.right];
            let mut acc = _mm256_setzero_si256();
            for j in (0..n4).step_by(4) {
                // SAFETY: j + 4 <= n4 <= row.len(); the load is unaligned.
                let v = unsafe { _mm_loadu_si128(row.as_ptr().add(j).cast()) };
                // |x| as u32 (INT32_MIN's abs is 2^31 read unsigned), zero-extended.
                let x = _mm256_cvtepu32_epi64(_mm_abs_epi32(v));
                let sq = _mm256_srl_epi64(_mm256_add_epi64(_mm256_mul_epu32(x, x), add_sq), sh_sq);
                // sq * x mod 2^64 = lo(sq) * x + (hi(sq) * x << 32) for x < 2^32.
                let prod = _mm256_add_epi64(
                    _mm256_mul_epu32(sq, x),
                    _mm256_slli_epi64::<32>(_mm256_mul_epu32(_mm256_srli_epi64::<32>(sq), x)),
                );
                acc = _mm256_add_epi64(
                    acc,
                    _mm256_srl_epi64(_mm256_add_epi64(prod, add_cub), sh_cub),
                );
            }
            let mut inner = sum_u64x4(acc);
            for &x in &row[n4..] {
                inner = inner.wrapping_add(scalar::den_s123_term(x, shift_sq, add_cub_s, sc));
            }
            accum[b] = accum[b].wrapping_add(inner.wrapping_add(add_accum) >> sa);
        }
    }
    accum
}

/// The wrapping sum of the four `u64` lanes.
#[inline]
#[target_feature(enable = "avx2")]
fn sum_u64x4(v: __m256i) -> u64 {
    let mut l = [0u64; 4];
    // SAFETY: `l` holds 4 `u64` (32 bytes); the store is unaligned.
    unsafe { _mm256_storeu_si256(l.as_mut_ptr().cast(), v) };
    l.iter().fold(0u64, |s, &x| s.wrapping_add(x))
}

/// `DIV_LOOKUP[32768 + v]` (libvmaf's reciprocal table, `2^30 / v` in C's truncating integer
/// division, negated for negative `v`) for 4 lanes holding nonzero integers `v` with
/// `|v| <= 2^15`, by one `double` division instead of a gather from the 256 KiB table (exact:
/// see the AVX-512 peer's `div_q30`; the unit test `div_q30_is_the_table` checks every `v`).
#[inline]
#[target_feature(enable = "avx2")]
fn div_q30(v: __m256d) -> __m128i {
    _mm256_cvttpd_epi32(_mm256_div_pd(_mm256_set1_pd((1u32 << 30) as f64), v))
}

#[cfg(test)]
mod div_q30_tests {
    use super::super::tables::DIV_LOOKUP;
    use super::*;

    #[test]
    fn div_q30_is_the_table() {
        if !is_x86_feature_detected!("avx2") {
            eprintln!("div_q30_is_the_table: this CPU has no AVX2: not run");
            return;
        }
        // SAFETY: the CPU has AVX2 (checked just above).
        unsafe { check() };
    }

    #[target_feature(enable = "avx2")]
    fn check() {
        let values: Vec<i32> = (-32768..=32768).filter(|&v| v != 0).collect();
        for chunk in values.chunks(4) {
            let v: [f64; 4] = std::array::from_fn(|l| chunk[l.min(chunk.len() - 1)] as f64);
            // SAFETY: `v` holds 4 `f64`; the load is unaligned.
            let q = div_q30(unsafe { _mm256_loadu_pd(v.as_ptr()) });
            let mut got = [0i32; 4];
            // SAFETY: `got` holds 4 `i32` (16 bytes); the store is unaligned.
            unsafe { _mm_storeu_si128(got.as_mut_ptr().cast(), q) };
            for l in 0..4 {
                let want = DIV_LOOKUP[(32768 + v[l] as i32) as usize];
                assert_eq!(got[l], want, "2^30 / {}", v[l]);
            }
        }
    }
}
