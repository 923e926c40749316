//! Scalar ADM kernels: the specification every SIMD/GPU peer must reproduce bit for bit.
//!
//! Each kernel mirrors one stage of libvmaf's integer ADM (`integer_adm.c`) with the same integer
//! widths, rounding constants, shifts and float/double conversion points:
//!
//! * [`dwt2_s0`] / [`dwt2_s0_lo`]: scale-0 DWT of 8–16 bit samples into `i16` bands;
//! * [`dwt2_s123`]: scale-1..3 DWT of the previous approximation band into `i32` bands;
//! * [`decouple_s0`] / [`decouple_s123`]: restored (`r`) and additive (`a`) signal split;
//! * [`csf_s0`] / [`csf_s123`]: contrast-sensitivity weighting plus the 1/30 filter band;
//! * [`csf_den_s0`] / [`csf_den_s123`]: the denominator's integer reduction, pooled by
//!   [`csf_den_pool_s0`] / [`csf_den_pool_s123`];
//! * [`cm_s0`] / [`cm_s123`]: contrast masking and the numerator's integer reduction, pooled by
//!   [`cm_pool_s0`] / [`cm_pool_s123`].
//!
//! Bands are plain row-major slices sharing one `stride`; `h`, `v`, `d` triples are passed in that
//! order (libvmaf's `theta` 0, 1, 2). Where C relies on implementation-defined or x86-specific
//! behaviour (narrowing casts, float-to-unsigned conversion of out-of-range values, shift counts),
//! the code reproduces what GCC emits on x86-64. Where libvmaf's x86 AVX2 or AVX-512 kernels give
//! other values than `integer_adm.c` (the last column of the scale-0 DWT at some widths, see
//! [`dwt2_s0`]), every variant is specified and a [`LibvmafIsa`] picks one.
//!
//! The `*_with` forms take the row kernels a SIMD level may replace as arguments; the ADM
//! kernel table (`adm::Kernels`) passes its entries through them.

use std::ops::Range;

use crate::fidelity::LibvmafIsa;

use super::tables::{
    COS_1DEG_SQ, DB2_HI, DB2_HI_SUM, DB2_LO, DB2_LO_SUM, DIV_LOOKUP, FIX_ONE_BY_30,
    I4_FIX_ONE_BY_30, I4_ONE_BY_15, ONE_BY_15,
};

/// A half-open band rectangle `[top, bottom) x [left, right)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Region {
    /// First row.
    pub top: usize,
    /// One past the last row.
    pub bottom: usize,
    /// First column.
    pub left: usize,
    /// One past the last column.
    pub right: usize,
}

impl Region {
    /// Number of samples inside.
    pub fn area(&self) -> usize {
        (self.bottom - self.top) * (self.right - self.left)
    }
}

/// The four mutable bands one DWT level writes.
#[derive(Debug)]
pub struct QuadMut<'a, T> {
    /// Approximation (low-pass V + low-pass H).
    pub a: &'a mut [T],
    /// High-pass V + low-pass H.
    pub h: &'a mut [T],
    /// Low-pass V + high-pass H.
    pub v: &'a mut [T],
    /// High-pass V + high-pass H.
    pub d: &'a mut [T],
}

// ---------------------------------------------------------------------------------------------
// C conversion semantics (GCC, x86-64)
// ---------------------------------------------------------------------------------------------

/// C `(int32_t)` of a double: truncation; NaN or out of range gives `INT32_MIN` (`cvttsd2si`).
#[inline]
pub fn c_f64_to_i32(x: f64) -> i32 {
    if x > -2_147_483_649.0 && x < 2_147_483_648.0 {
        x as i32
    } else {
        i32::MIN
    }
}

/// C `(uint32_t)` of a double as GCC emits it on x86-64: a 64-bit truncating conversion whose
/// low 32 bits are kept; NaN or out of `i64` range gives 0.
#[inline]
pub fn c_f64_to_u32(x: f64) -> u32 {
    if x > -9_223_372_036_854_775_809.0 && x < 9_223_372_036_854_775_808.0 {
        (x as i64) as u32
    } else {
        0
    }
}

/// C `(uint16_t)` / `(int16_t)` of a double: a 32-bit truncating conversion, low 16 bits kept.
#[inline]
pub fn c_f64_to_u16(x: f64) -> u16 {
    c_f64_to_i32(x) as u16
}

/// `(uint32_t)ceil(log2(n))` as libvmaf computes its data-dependent shift counts.
#[inline]
pub fn ceil_log2_u32(n: f64) -> u32 {
    c_f64_to_u32(n.log2().ceil())
}

/// `(uint32_t)pow(2, shift - 1)` with C's unsigned wrap when `shift` is 0 (then the result is 0).
#[inline]
pub fn half_pow2_u32(shift: u32) -> u32 {
    c_f64_to_u32(2f64.powf(shift.wrapping_sub(1) as f64))
}

// ---------------------------------------------------------------------------------------------
// Regions
// ---------------------------------------------------------------------------------------------

/// The region libvmaf's decouple and CSF stages cover in a `w x h` band: the pooling region
/// widened by the filter taps (one sample before, three after), clamped to the band.
pub fn region_decouple(w: usize, h: usize) -> Region {
    let left = (w as f64 * super::tables::BORDER_FACTOR - 0.5 - 1.0) as i64;
    let top = (h as f64 * super::tables::BORDER_FACTOR - 0.5 - 1.0) as i64;
    let right = w as i64 - left + 2;
    let bottom = h as i64 - top + 2;
    Region {
        top: top.max(0) as usize,
        bottom: bottom.min(h as i64).max(0) as usize,
        left: left.max(0) as usize,
        right: right.min(w as i64).max(0) as usize,
    }
}

/// The pooling region of a `w x h` band (libvmaf `adm_cm` / `adm_csf_den_scale`): 10% minus
/// half a sample discarded on each side, truncated toward zero.
pub fn region_pool(w: usize, h: usize) -> Region {
    let left = (w as f64 * super::tables::BORDER_FACTOR - 0.5) as usize;
    let top = (h as f64 * super::tables::BORDER_FACTOR - 0.5) as usize;
    Region {
        top,
        bottom: h - top,
        left,
        right: w - left,
    }
}

// ---------------------------------------------------------------------------------------------
// DWT
// ---------------------------------------------------------------------------------------------

/// Source rows (or columns) of the four taps for each of the `(n + 1) / 2` outputs of a DWT over
/// `n` samples: `2i - 1 .. 2i + 2`, mirrored as libvmaf's `dwt2_src_indices_filt` does
/// (`-1 -> 1`, `n + k -> n - 1 - k`). For `n < 5`, where libvmaf reads outside the plane, the
/// indices are clamped into range instead.
pub fn dwt_indices(n: usize, out: &mut [[usize; 4]]) {
    let n = n as isize;
    for (i, o) in out.iter_mut().enumerate() {
        for (k, slot) in o.iter_mut().enumerate() {
            let mut x = 2 * i as isize - 1 + k as isize;
            if x < 0 {
                x = -x;
            }
            if x >= n {
                x = 2 * n - x - 1;
            }
            *slot = x.clamp(0, n - 1) as usize;
        }
    }
}

/// Vertical pass of the scale-0 DWT for one output row: centred low/high-pass of four source
/// rows, rounded by `bpc` bits into `i16` (libvmaf `adm_dwt2_8` / `adm_dwt2_16`).
#[inline]
fn dwt_s0_vertical<S: Copy + Into<i32>>(
    rows: [&[S]; 4],
    bpc: u32,
    tmp_lo: &mut [i16],
    tmp_hi: Option<&mut [i16]>,
) {
    let add = 1i32 << (bpc - 1);
    let off_lo = DB2_LO_SUM.wrapping_mul(add);
    let off_hi = DB2_HI_SUM.wrapping_mul(add);
    let w = tmp_lo.len();
    let (r0, r1, r2, r3) = (&rows[0][..w], &rows[1][..w], &rows[2][..w], &rows[3][..w]);
    match tmp_hi {
        Some(tmp_hi) => {
            for j in 0..w {
                let s = [r0[j].into(), r1[j].into(), r2[j].into(), r3[j].into()];
                let lo = fir4_i32(&DB2_LO, s).wrapping_sub(off_lo);
                tmp_lo[j] = (lo.wrapping_add(add) >> bpc) as i16;
                let hi = fir4_i32(&DB2_HI, s).wrapping_sub(off_hi);
                tmp_hi[j] = (hi.wrapping_add(add) >> bpc) as i16;
            }
        }
        None => {
            for j in 0..w {
                let s = [r0[j].into(), r1[j].into(), r2[j].into(), r3[j].into()];
                let lo = fir4_i32(&DB2_LO, s).wrapping_sub(off_lo);
                tmp_lo[j] = (lo.wrapping_add(add) >> bpc) as i16;
            }
        }
    }
}

/// Four-tap filter in wrapping `int32` arithmetic (C accumulates in `int32_t`).
#[inline(always)]
fn fir4_i32(c: &[i32; 4], s: [i32; 4]) -> i32 {
    c[0].wrapping_mul(s[0])
        .wrapping_add(c[1].wrapping_mul(s[1]))
        .wrapping_add(c[2].wrapping_mul(s[2]))
        .wrapping_add(c[3].wrapping_mul(s[3]))
}

/// Rounds a scale-0 horizontal-pass accumulation by 16 bits into `i16`.
#[inline(always)]
fn round_h16(acc: i32) -> i16 {
    (acc.wrapping_add(32768) >> 16) as i16
}

/// Four-tap filter of `i16` samples, rounded by 16 bits (scale-0 horizontal pass).
#[inline(always)]
fn fir4_h16(c: &[i32; 4], t: &[i16], idx: &[usize; 4]) -> i16 {
    round_h16(fir4_i32(
        c,
        [
            t[idx[0]] as i32,
            t[idx[1]] as i32,
            t[idx[2]] as i32,
            t[idx[3]] as i32,
        ],
    ))
}

/// Whether libvmaf's `isa` kernels compute the last output column of the scale-0 DWT of a
/// `w`-wide plane of `bpc`-bit samples in their vector loop, without the mirrored right edge.
///
/// The vector loops of `adm_dwt2_16_avx2` (9..16-bit, 16 outputs at a time), `adm_dwt2_8_avx512`
/// (32) and `adm_dwt2_16_avx512` (64 outputs, in steps of 32) run over outputs
/// `1 .. half_w - (half_w - 1) % n` (`half_w = (w + 1) / 2`); the remaining outputs go to a
/// scalar tail that uses the mirrored indices. When `half_w - 1` is a multiple of `n` the vector
/// loop ends exactly at the last output, `half_w - 1`, whose taps `2 * half_w - 3 ..= 2 * half_w`
/// run one or two samples past the row (columns `w` and, for odd `w`, `w + 1`): see [`dwt2_s0`]
/// for what is read there. Every other output column is the same in all variants. libvmaf's C
/// code always mirrors, and so does `adm_dwt2_8_avx2` (8-bit), whose vector loop stops short of
/// the right edge (and which libvmaf only takes when `w % 8 == 0`).
pub fn s0_last_column_unmirrored(isa: LibvmafIsa, w: usize, bpc: u32) -> bool {
    let n = match (isa, bpc) {
        (LibvmafIsa::C, _) | (LibvmafIsa::Avx2, 8) => return false,
        (LibvmafIsa::Avx2, _) => 16,
        (LibvmafIsa::Avx512, 8) => 32,
        (LibvmafIsa::Avx512, _) => 64,
    };
    let half = w.div_ceil(2);
    half > 1 && (half - 1).is_multiple_of(n)
}

/// Scale-0 DWT of one plane into the four `i16` bands (libvmaf `adm_dwt2_8` / `adm_dwt2_16`),
/// as libvmaf's `isa` kernels compute them.
///
/// `src` holds `w`-wide rows `src_stride` apart with `bpc`-bit samples; `ind_y` / `ind_x` come
/// from [`dwt_indices`] for the plane's height / width; `tmp_lo` / `tmp_hi` hold `w` values.
///
/// # The SIMD last column
///
/// libvmaf's scalar C mirrors the right edge (tap `w -> w - 1`, `w + 1 -> w - 2`). Its x86
/// kernels `adm_dwt2_16_avx2` (9..16-bit widths 33, 34, 65, 66, 97, ...), `adm_dwt2_8_avx512`
/// (8-bit widths 65, 66, 129, 130, 193, ..., 321, 322, ...) and `adm_dwt2_16_avx512` (9..16-bit
/// widths 129, 130, 257, 258, ...) do not where [`s0_last_column_unmirrored`] holds: their vector
/// loop then also computes the last output column, loading its four taps as one contiguous run of
/// the row's vertical pass, and that is reproduced here for those `isa`s. libvmaf keeps the
/// vertical low-pass row `tmplo` and high-pass row `tmphi` back to back in one scratch buffer
/// (`tmphi = tmplo + w`), so the low-pass taps past the row read `tmphi[0]` (and `tmphi[1]` for
/// odd `w`): the last column of the approximation (`a`) and vertical (`v`) bands
/// is filtered from `tmplo[w - 2], tmplo[w - 1], tmphi[0], tmphi[1]` (odd `w`) or
/// `tmplo[w - 3], tmplo[w - 2], tmplo[w - 1], tmphi[0]` (even `w`). Everything else in those
/// kernels gives the scalar C's values (their logical shifts and unsigned packs keep the same
/// low 16 bits). This is reproduced here because the approximation band feeds the next scale:
/// the last one or two scale-1 columns take it in, the mirrored scale-1..3 DWTs carry it inwards,
/// and it reaches the pooled region at scale 3 (or earlier for narrow pictures); for 321x243
/// 8-bit the C and AVX-512 scale-3 ratios differ by up to 3e-5.
///
/// The high-pass taps past the row (last column of `h` and `d`) read whatever follows `tmphi` in
/// libvmaf's scratch buffer: data left by the previous frame's scale-1..3 DWTs, uninitialised on
/// the first frame. That cannot be reproduced and keeps the mirrored taps here. It never reaches
/// a score: only `a` feeds scale 1, and for `half_w >= 33` the scale-0 pooling region and the
/// masking threshold's neighbourhood end at least one column before the last (checked against
/// libvmaf with random data in that scratch memory). The one exception is the AVX2 9..16-bit
/// width 33 or 34 (`half_w = 17`), where the masking neighbourhood reaches the last column:
/// there libvmaf's result depends on that stale memory (docs/FIDELITY.md).
///
/// libvmaf's scale-1..3 `adm_dwt2_s123_combined_avx512` in the sources at hand has the same loop
/// shape (8 outputs at a time), but the reference build's scale-1..3 values equal the scalar C's
/// wherever that would show (e.g. widths 65, 196, 321), so only the scale-0 kernels are followed.
#[allow(clippy::too_many_arguments)]
pub fn dwt2_s0<S: Copy + Into<i32>>(
    src: &[S],
    src_stride: usize,
    w: usize,
    bpc: u32,
    ind_y: &[[usize; 4]],
    ind_x: &[[usize; 4]],
    tmp_lo: &mut [i16],
    tmp_hi: &mut [i16],
    out: QuadMut<'_, i16>,
    dst_stride: usize,
    isa: LibvmafIsa,
) {
    dwt2_s0_with(
        src,
        src_stride,
        w,
        bpc,
        ind_y,
        ind_x,
        tmp_lo,
        tmp_hi,
        out,
        dst_stride,
        isa,
        dwt_s0_vertical_both,
        dwt_s0_horizontal,
    );
}

/// Scalar vertical row kernel (`adm::DwtS0Vertical`).
pub fn dwt_s0_vertical_both<S: Copy + Into<i32>>(
    rows: [&[S]; 4],
    bpc: u32,
    tmp_lo: &mut [i16],
    tmp_hi: &mut [i16],
) {
    dwt_s0_vertical(rows, bpc, tmp_lo, Some(tmp_hi));
}

/// Scalar horizontal row kernel (`adm::DwtS0Horizontal`).
pub fn dwt_s0_horizontal(tmp: &[i16], ind_x: &[[usize; 4]], lo: &mut [i16], hi: &mut [i16]) {
    let (lo, hi) = (&mut lo[..ind_x.len()], &mut hi[..ind_x.len()]);
    for (j, ix) in ind_x.iter().enumerate() {
        lo[j] = fir4_h16(&DB2_LO, tmp, ix);
        hi[j] = fir4_h16(&DB2_HI, tmp, ix);
    }
}

/// [`dwt2_s0`] with the row passes done by `vertical` (a peer of [`dwt_s0_vertical_both`]) and
/// `horizontal` (a peer of [`dwt_s0_horizontal`]), as a SIMD level's kernel table passes them;
/// the row loop and the SIMD last column stay here.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub fn dwt2_s0_with<S: Copy + Into<i32>>(
    src: &[S],
    src_stride: usize,
    w: usize,
    bpc: u32,
    ind_y: &[[usize; 4]],
    ind_x: &[[usize; 4]],
    tmp_lo: &mut [i16],
    tmp_hi: &mut [i16],
    out: QuadMut<'_, i16>,
    dst_stride: usize,
    isa: LibvmafIsa,
    vertical: impl Fn([&[S]; 4], u32, &mut [i16], &mut [i16]),
    horizontal: impl Fn(&[i16], &[[usize; 4]], &mut [i16], &mut [i16]),
) {
    let (tmp_lo, tmp_hi) = (&mut tmp_lo[..w], &mut tmp_hi[..w]);
    let unmirrored = s0_last_column_unmirrored(isa, w, bpc) && ind_x.len() == w.div_ceil(2);
    for (i, iy) in ind_y.iter().enumerate() {
        let rows = iy.map(|r| &src[r * src_stride..r * src_stride + w]);
        vertical(rows, bpc, tmp_lo, tmp_hi);
        let o = i * dst_stride;
        let n = ind_x.len();
        let (a, h) = (&mut out.a[o..o + n], &mut out.h[o..o + n]);
        let (v, d) = (&mut out.v[o..o + n], &mut out.d[o..o + n]);
        horizontal(tmp_lo, ind_x, a, v);
        horizontal(tmp_hi, ind_x, h, d);
        if unmirrored {
            // The SIMD last column: the low-pass row runs on into the high-pass row.
            let j = n - 1;
            let taps = [0, 1, 2, 3].map(|k| {
                let x = 2 * j + k - 1;
                if x < w {
                    tmp_lo[x]
                } else {
                    tmp_hi[x - w]
                }
            });
            a[j] = round_h16(fir4_i32(&DB2_LO, taps.map(i32::from)));
            v[j] = round_h16(fir4_i32(&DB2_HI, taps.map(i32::from)));
        }
    }
}

/// Scale-0 DWT computing only the approximation band (libvmaf `adm_dwt2_8_lo` /
/// `adm_dwt2_16_lo`, used with `adm_skip_scale0`).
#[allow(clippy::too_many_arguments)]
pub fn dwt2_s0_lo<S: Copy + Into<i32>>(
    src: &[S],
    src_stride: usize,
    w: usize,
    bpc: u32,
    ind_y: &[[usize; 4]],
    ind_x: &[[usize; 4]],
    tmp_lo: &mut [i16],
    a: &mut [i16],
    dst_stride: usize,
) {
    let tmp_lo = &mut tmp_lo[..w];
    for (i, iy) in ind_y.iter().enumerate() {
        let rows = iy.map(|r| &src[r * src_stride..r * src_stride + w]);
        dwt_s0_vertical(rows, bpc, tmp_lo, None);
        let o = i * dst_stride;
        let a = &mut a[o..o + ind_x.len()];
        for (j, ix) in ind_x.iter().enumerate() {
            a[j] = fir4_h16(&DB2_LO, tmp_lo, ix);
        }
    }
}

/// Four-tap filter in `int64`, rounded by `shift` bits and narrowed to `int32`.
#[inline(always)]
fn fir4_i64(c: &[i32; 4], s: [i64; 4], add: i64, shift: u32) -> i32 {
    let acc = c[0] as i64 * s[0] + c[1] as i64 * s[1] + c[2] as i64 * s[2] + c[3] as i64 * s[3];
    (acc.wrapping_add(add) >> shift) as i32
}

/// Scale-1..3 DWT of the previous approximation band into four `i32` bands (libvmaf
/// `adm_dwt2_s123_combined`, one image at a time). `scale` is 1, 2 or 3; `tmp_lo` / `tmp_hi`
/// hold `w` values.
#[allow(clippy::too_many_arguments)]
pub fn dwt2_s123<S: Copy + Into<i64>>(
    src: &[S],
    src_stride: usize,
    w: usize,
    scale: usize,
    ind_y: &[[usize; 4]],
    ind_x: &[[usize; 4]],
    tmp_lo: &mut [i32],
    tmp_hi: &mut [i32],
    out: QuadMut<'_, i32>,
    dst_stride: usize,
) {
    dwt2_s123_with(
        src,
        src_stride,
        w,
        scale,
        ind_y,
        ind_x,
        tmp_lo,
        tmp_hi,
        out,
        dst_stride,
        dwt_s123_vertical,
        dwt_s123_horizontal,
    );
}

/// Rounding `(add, shift)` of the scale-1..3 vertical pass, per scale 1, 2, 3.
pub const DWT_S123_VERTICAL_ROUND: [(i64, u32); 3] = [(0, 0), (32768, 16), (32768, 16)];
/// Rounding `(add, shift)` of the scale-1..3 horizontal pass, per scale 1, 2, 3.
pub const DWT_S123_HORIZONTAL_ROUND: [(i64, u32); 3] = [(16384, 15), (32768, 16), (16384, 15)];

/// Scalar vertical row kernel (`adm::DwtS123Vertical`).
pub fn dwt_s123_vertical<S: Copy + Into<i64>>(
    rows: [&[S]; 4],
    scale: usize,
    tmp_lo: &mut [i32],
    tmp_hi: &mut [i32],
) {
    let (avp, svp) = DWT_S123_VERTICAL_ROUND[scale - 1];
    let w = tmp_lo.len();
    let tmp_hi = &mut tmp_hi[..w];
    let (r0, r1, r2, r3) = (&rows[0][..w], &rows[1][..w], &rows[2][..w], &rows[3][..w]);
    for j in 0..w {
        let s = [r0[j].into(), r1[j].into(), r2[j].into(), r3[j].into()];
        tmp_lo[j] = fir4_i64(&DB2_LO, s, avp, svp);
        tmp_hi[j] = fir4_i64(&DB2_HI, s, avp, svp);
    }
}

/// Scalar horizontal row kernel (`adm::DwtS123Horizontal`).
pub fn dwt_s123_horizontal(
    tmp: &[i32],
    ind_x: &[[usize; 4]],
    scale: usize,
    lo: &mut [i32],
    hi: &mut [i32],
) {
    let (ahp, shp) = DWT_S123_HORIZONTAL_ROUND[scale - 1];
    let (lo, hi) = (&mut lo[..ind_x.len()], &mut hi[..ind_x.len()]);
    for (j, ix) in ind_x.iter().enumerate() {
        let t = ix.map(|k| tmp[k] as i64);
        lo[j] = fir4_i64(&DB2_LO, t, ahp, shp);
        hi[j] = fir4_i64(&DB2_HI, t, ahp, shp);
    }
}

/// [`dwt2_s123`] with the row passes done by `vertical` (a peer of [`dwt_s123_vertical`]) and
/// `horizontal` (a peer of [`dwt_s123_horizontal`]), as a SIMD level's kernel table passes them.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub fn dwt2_s123_with<S: Copy>(
    src: &[S],
    src_stride: usize,
    w: usize,
    scale: usize,
    ind_y: &[[usize; 4]],
    ind_x: &[[usize; 4]],
    tmp_lo: &mut [i32],
    tmp_hi: &mut [i32],
    out: QuadMut<'_, i32>,
    dst_stride: usize,
    vertical: impl Fn([&[S]; 4], usize, &mut [i32], &mut [i32]),
    horizontal: impl Fn(&[i32], &[[usize; 4]], usize, &mut [i32], &mut [i32]),
) {
    let (tmp_lo, tmp_hi) = (&mut tmp_lo[..w], &mut tmp_hi[..w]);
    for (i, iy) in ind_y.iter().enumerate() {
        let rows = iy.map(|r| &src[r * src_stride..r * src_stride + w]);
        vertical(rows, scale, tmp_lo, tmp_hi);
        let o = i * dst_stride;
        let n = ind_x.len();
        let (a, h) = (&mut out.a[o..o + n], &mut out.h[o..o + n]);
        let (v, d) = (&mut out.v[o..o + n], &mut out.d[o..o + n]);
        horizontal(tmp_lo, ind_x, scale, a, v);
        horizontal(tmp_hi, ind_x, scale, h, d);
    }
}

// ---------------------------------------------------------------------------------------------
// Decouple
// ---------------------------------------------------------------------------------------------

/// libvmaf's test whether the (h, v) orientation of reference and distorted differ by less than
/// one degree, evaluated with its float/double conversions.
#[inline(always)]
fn angle_flag(ot_dp: i64, o_mag_sq: i64, t_mag_sq: i64) -> bool {
    let ot = ot_dp as f32 as f64 / 4096.0;
    let o = o_mag_sq as f32 as f64 / 4096.0;
    let t = t_mag_sq as f32 as f64 / 4096.0;
    ot >= 0.0 && ot * ot >= COS_1DEG_SQ as f64 * o * t
}

/// Sign of libvmaf's `rst_f = ((float)k / 32768) * ((float)o / 64)`: 1, -1 or 0.
#[inline(always)]
fn rst_sign(k: i64, o: i32) -> i32 {
    if k > 0 {
        o.signum()
    } else {
        0
    }
}

/// Applies the enhancement gain limit to a restored value `rst` against the distorted value `t`
/// (`MIN(rst * egl, t)` for a positive restoration, `MAX` for a negative one, in double, then
/// truncated back to an integer).
#[inline(always)]
fn gain_limit(rst: i32, t: i32, sign: i32, egl: f64) -> i32 {
    let g = rst as f64 * egl;
    let t = t as f64;
    if sign > 0 {
        c_f64_to_i32(if g < t { g } else { t })
    } else {
        c_f64_to_i32(if g > t { g } else { t })
    }
}

/// Scale-0 decoupling (libvmaf `adm_decouple`): for every sample of `reg`, the restored band
/// `r = clamp(t / o, 0, 1) * o` (gain-limited where the orientations agree) and the additive band
/// `a = t - r`, for the h, v, d bands of reference `o` and distorted `t`.
#[allow(clippy::too_many_arguments)]
pub fn decouple_s0(
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
    for i in reg.top..reg.bottom {
        for j in reg.left..reg.right {
            let p = i * stride + j;
            let o = [ref_hvd[0][p], ref_hvd[1][p], ref_hvd[2][p]].map(|x| x as i32);
            let t = [dis_hvd[0][p], dis_hvd[1][p], dis_hvd[2][p]].map(|x| x as i32);
            let ot_dp = o[0] as i64 * t[0] as i64 + o[1] as i64 * t[1] as i64;
            let o_mag_sq = o[0] as i64 * o[0] as i64 + o[1] as i64 * o[1] as i64;
            let t_mag_sq = t[0] as i64 * t[0] as i64 + t[1] as i64 * t[1] as i64;
            let flag = angle_flag(ot_dp, o_mag_sq, t_mag_sq);
            let mut rst = [0i16; 3];
            for b in 0..3 {
                let k = if o[b] == 0 {
                    32768
                } else {
                    let q = ((DIV_LOOKUP[(o[b] + 32768) as usize] as i64 * t[b] as i64 + 16384)
                        >> 15) as i32;
                    q.clamp(0, 32768)
                };
                let mut r = ((k * o[b] + 16384) >> 15) as i16;
                let sign = rst_sign(k as i64, o[b]);
                if flag && sign != 0 {
                    r = gain_limit(r as i32, t[b], sign, egl) as i16;
                }
                rst[b] = r;
            }
            r_h[p] = rst[0];
            r_v[p] = rst[1];
            r_d[p] = rst[2];
            a_h[p] = (t[0] - rst[0] as i32) as i16;
            a_v[p] = (t[1] - rst[1] as i32) as i16;
            a_d[p] = (t[2] - rst[2] as i32) as i16;
        }
    }
}

/// libvmaf's `get_best15_from32`: rounds `temp >= 2^15` to its 15 leading bits; returns them and
/// the shift applied.
#[inline(always)]
fn best15_from32(temp: u32) -> (u16, u32) {
    let k = 17 - temp.leading_zeros();
    let t = temp.wrapping_add(1u32.wrapping_shl(k.wrapping_sub(1))) >> k;
    (t as u16, k)
}

/// Scale-1..3 decoupling (libvmaf `adm_decouple_s123`), the `i32` analogue of [`decouple_s0`]
/// with the reciprocal taken of the 15 leading bits of `|o|`.
#[allow(clippy::too_many_arguments)]
pub fn decouple_s123(
    ref_hvd: [&[i32]; 3],
    dis_hvd: [&[i32]; 3],
    r_hvd: [&mut [i32]; 3],
    a_hvd: [&mut [i32]; 3],
    stride: usize,
    reg: Region,
    egl: f64,
) {
    let [r_h, r_v, r_d] = r_hvd;
    let [a_h, a_v, a_d] = a_hvd;
    for i in reg.top..reg.bottom {
        for j in reg.left..reg.right {
            let p = i * stride + j;
            let o = [ref_hvd[0][p], ref_hvd[1][p], ref_hvd[2][p]];
            let t = [dis_hvd[0][p], dis_hvd[1][p], dis_hvd[2][p]];
            let ot_dp = o[0] as i64 * t[0] as i64 + o[1] as i64 * t[1] as i64;
            let o_mag_sq = o[0] as i64 * o[0] as i64 + o[1] as i64 * o[1] as i64;
            let t_mag_sq = t[0] as i64 * t[0] as i64 + t[1] as i64 * t[1] as i64;
            let flag = angle_flag(ot_dp, o_mag_sq, t_mag_sq);
            let mut rst = [0i32; 3];
            for b in 0..3 {
                let ob = o[b];
                let k: i64 = if ob == 0 {
                    32768
                } else {
                    let abs = ob.unsigned_abs();
                    let (msb, shift) = if abs < 32768 {
                        (abs as u16, 0)
                    } else {
                        best15_from32(abs)
                    };
                    let sign: i64 = if ob < 0 { -1 } else { 1 };
                    let round = 1i32.wrapping_shl(14 + shift) as i64;
                    let num = (DIV_LOOKUP[msb as usize + 32768] as i64)
                        .wrapping_mul(t[b] as i64)
                        .wrapping_mul(sign);
                    (num.wrapping_add(round) >> ((15 + shift) & 63)).clamp(0, 32768)
                };
                let mut r = ((k * ob as i64 + 16384) >> 15) as i32;
                let sign = rst_sign(k, ob);
                if flag && sign != 0 {
                    r = gain_limit(r, t[b], sign, egl);
                }
                rst[b] = r;
            }
            r_h[p] = rst[0];
            r_v[p] = rst[1];
            r_d[p] = rst[2];
            a_h[p] = t[0].wrapping_sub(rst[0]);
            a_v[p] = t[1].wrapping_sub(rst[1]);
            a_d[p] = t[2].wrapping_sub(rst[2]);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// CSF
// ---------------------------------------------------------------------------------------------

/// Scale-0 CSF (libvmaf `adm_csf`): `csf = src * i_rfactor` rounded to Q16 (`i16`), and the
/// filter band `flt = |csf| / 30` used by the masking threshold, over `reg`.
pub fn csf_s0(
    src_hvd: [&[i16]; 3],
    csf_hvd: [&mut [i16]; 3],
    flt_hvd: [&mut [i16]; 3],
    stride: usize,
    reg: Region,
    i_rfactor: [u16; 3],
) {
    const SHIFT: [u32; 3] = [15, 15, 17];
    const ADD: [i32; 3] = [16384, 16384, 65535];
    for (b, ((src, csf), flt)) in src_hvd.into_iter().zip(csf_hvd).zip(flt_hvd).enumerate() {
        let rf = i_rfactor[b] as i32;
        for i in reg.top..reg.bottom {
            let o = i * stride;
            for p in o + reg.left..o + reg.right {
                let v = rf.wrapping_mul(src[p] as i32);
                let c = (v.wrapping_add(ADD[b]) >> SHIFT[b]) as i16;
                csf[p] = c;
                flt[p] = ((FIX_ONE_BY_30 * (c as i32).abs() + 2048) >> 12) as i16;
            }
        }
    }
}

/// Rounding term of libvmaf's scale-1..3 `>> 32` steps: `(int32_t)(1u << 31)`, i.e. `-2^31`.
const ADD_SHIFT_32: i64 = i32::MIN as i64;

/// Scale-1..3 CSF (libvmaf `i4_adm_csf`): `csf = src * i_rfactor >> 28` (rounded) and
/// `flt = |csf| / 30` in Q32 with libvmaf's `-2^31` rounding term.
pub fn csf_s123(
    src_hvd: [&[i32]; 3],
    csf_hvd: [&mut [i32]; 3],
    flt_hvd: [&mut [i32]; 3],
    stride: usize,
    reg: Region,
    i_rfactor: [u32; 3],
) {
    for (b, ((src, csf), flt)) in src_hvd.into_iter().zip(csf_hvd).zip(flt_hvd).enumerate() {
        let rf = i_rfactor[b] as i64;
        for i in reg.top..reg.bottom {
            let o = i * stride;
            for p in o + reg.left..o + reg.right {
                let c = (rf.wrapping_mul(src[p] as i64).wrapping_add(1 << 27) >> 28) as i32;
                csf[p] = c;
                flt[p] = ((I4_FIX_ONE_BY_30 * c.wrapping_abs() as i64 + ADD_SHIFT_32) >> 32) as i32;
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// CSF denominator
// ---------------------------------------------------------------------------------------------

/// Row-accumulation shift of the scale-0 denominator for a pooling region of `area` samples
/// (libvmaf `adm_csf_den_scale`, `shift_accum`).
pub fn den_s0_shift(area: usize) -> u32 {
    let s = c_f64_to_i32((((area as i32) as f64).log2() - 20.0).ceil());
    s.max(0) as u32
}

/// Integer part of the scale-0 denominator (libvmaf `adm_csf_den_scale`): per band, the sum over
/// `reg` of `|ref|^3`, each row's sum rounded down by `shift` bits (see [`den_s0_shift`]).
pub fn csf_den_s0(ref_hvd: [&[i16]; 3], stride: usize, reg: Region, shift: u32) -> [u64; 3] {
    let add: u64 = if shift > 0 { 1 << (shift - 1) } else { 0 };
    let mut accum = [0u64; 3];
    for (b, src) in ref_hvd.into_iter().enumerate() {
        for i in reg.top..reg.bottom {
            let row = &src[i * stride + reg.left..i * stride + reg.right];
            let mut inner = 0u64;
            for &x in row {
                let x = (x as i32).unsigned_abs() as u16 as u64;
                inner = inner.wrapping_add(x * x * x);
            }
            accum[b] = accum[b].wrapping_add(inner.wrapping_add(add) >> shift);
        }
    }
    accum
}

/// `powf(x, 1.0f / 3.0f)`, libvmaf's pooling root.
#[inline]
fn cbrt_powf(x: f32) -> f32 {
    x.powf(1.0f32 / 3.0f32)
}

/// The noise term `powf(area * noise_weight, 1/3)` added to every band's pooled value.
#[inline]
fn noise_term(area: usize, noise_weight: f64) -> f32 {
    cbrt_powf((area as i32 as f64 * noise_weight) as f32)
}

/// Pools a scale-0 denominator accumulation (libvmaf `adm_csf_den_scale` tail): per band
/// `cbrt(accum / 2^(18 - shift) * rfactor^3) + cbrt(area * noise_weight)`, summed in float.
pub fn csf_den_pool_s0(
    accum: [u64; 3],
    shift: u32,
    rfactor: [f32; 3],
    area: usize,
    noise_weight: f64,
) -> f32 {
    let shift_csf = 2f64.powf((18 - shift as i32) as f64);
    pool_den(accum, shift_csf, rfactor, area, noise_weight)
}

fn pool_den(accum: [u64; 3], shift_csf: f64, rfactor: [f32; 3], area: usize, nw: f64) -> f32 {
    let add = noise_term(area, nw);
    let mut sum = 0f32;
    for b in 0..3 {
        let csf = (accum[b] as f64 / shift_csf) * (rfactor[b] as f64).powf(3.0);
        let den = cbrt_powf(csf as f32) + add;
        sum = if b == 0 { den } else { sum + den };
    }
    sum
}

/// Shifts of the scale-1..3 denominator for a pooling region: `(shift_cub, shift_accum)` =
/// `ceil(log2(width))`, `ceil(log2(height))` (libvmaf `adm_csf_den_s123`).
pub fn den_s123_shifts(reg: Region) -> (u32, u32) {
    (
        ceil_log2_u32((reg.right - reg.left) as f64),
        ceil_log2_u32((reg.bottom - reg.top) as f64),
    )
}

/// Integer part of the scale-1..3 denominator (libvmaf `adm_csf_den_s123`): per band the sum of
/// `((x^2 + 2^s) >> s) * x` rounded by `shift_cub`, rows rounded by `shift_accum`.
pub fn csf_den_s123(
    ref_hvd: [&[i32]; 3],
    stride: usize,
    reg: Region,
    scale: usize,
    shift_cub: u32,
    shift_accum: u32,
) -> [u64; 3] {
    const SHIFT_SQ: [u32; 3] = [31, 30, 31];
    let shift_sq = SHIFT_SQ[scale - 1];
    let add_sq = 1u64 << shift_sq;
    let add_cub = half_pow2_u32(shift_cub) as u64;
    let add_accum = half_pow2_u32(shift_accum) as u64;
    let (sc, sa) = (shift_cub & 63, shift_accum & 63);
    let mut accum = [0u64; 3];
    for (b, src) in ref_hvd.into_iter().enumerate() {
        for i in reg.top..reg.bottom {
            let row = &src[i * stride + reg.left..i * stride + reg.right];
            let mut inner = 0u64;
            for &x in row {
                let x = x.wrapping_abs() as u32 as u64;
                let sq = x.wrapping_mul(x).wrapping_add(add_sq) >> shift_sq;
                let val = sq.wrapping_mul(x).wrapping_add(add_cub) >> sc;
                inner = inner.wrapping_add(val);
            }
            accum[b] = accum[b].wrapping_add(inner.wrapping_add(add_accum) >> sa);
        }
    }
    accum
}

/// Pools a scale-1..3 denominator accumulation (libvmaf `adm_csf_den_s123` tail).
pub fn csf_den_pool_s123(
    accum: [u64; 3],
    scale: usize,
    shifts: (u32, u32),
    rfactor: [f32; 3],
    area: usize,
    noise_weight: f64,
) -> f32 {
    const CONVERT: [u32; 3] = [32, 27, 23];
    let e = CONVERT[scale - 1]
        .wrapping_sub(shifts.1)
        .wrapping_sub(shifts.0);
    pool_den(accum, 2f64.powf(e as f64), rfactor, area, noise_weight)
}

// ---------------------------------------------------------------------------------------------
// Contrast masking
// ---------------------------------------------------------------------------------------------

/// The rows (or columns) libvmaf's `adm_cm` visits in a band of `n` with pooling bounds
/// `[lo, hi)`: the edge sample 0 if `lo == 0`, the interior `max(lo, 1) .. min(hi, n - 1)`, and
/// the edge sample `n - 1` if `hi > n - 1`.
fn cm_span(lo: usize, hi: usize, n: usize) -> impl Iterator<Item = usize> {
    let first = (lo == 0).then_some(0);
    let last = (hi > n - 1).then_some(n - 1);
    first
        .into_iter()
        .chain(lo.max(1)..hi.min(n - 1))
        .chain(last)
}

/// Neighbours `(before, after)` of index `i` in a band of `n` as libvmaf's masking threshold
/// mirrors them: `0 -> (1, 1)`, `n - 1 -> (n - 2, n - 1)`.
#[inline(always)]
fn cm_neighbours(i: usize, n: usize) -> (usize, usize) {
    let m = n - 1;
    if i == 0 {
        (1.min(m), 1.min(m))
    } else if i == m {
        (i - 1, m)
    } else {
        (i - 1, i + 1)
    }
}

/// Sum of the eight neighbours of `(i, j)` in a filter band, mirrored at the edges.
#[inline(always)]
fn neighbours8<T: Copy + Into<i32>>(
    flt: &[T],
    stride: usize,
    rows: (usize, usize, usize),
    cols: (usize, usize, usize),
) -> i32 {
    let (u, c, d) = (rows.0 * stride, rows.1 * stride, rows.2 * stride);
    let (l, m, r) = cols;
    let s = [
        flt[u + l],
        flt[u + m],
        flt[u + r],
        flt[c + l],
        flt[c + r],
        flt[d + l],
        flt[d + m],
        flt[d + r],
    ];
    s.iter().fold(0i32, |acc, &x| acc.wrapping_add(x.into()))
}

/// One contrast-masked term: `max(|x| - (thr << sub), 0)` cubed with libvmaf's rounding.
#[inline(always)]
fn cm_term(
    x: i32,
    thr: i32,
    sub: u32,
    sq_add: i64,
    sq_shift: u32,
    cub_add: i64,
    cub_shift: u32,
) -> i64 {
    let x = x.wrapping_abs().wrapping_sub(thr.wrapping_shl(sub)).max(0);
    let x_sq = ((x as i64 * x as i64 + sq_add) >> sq_shift) as i32;
    (x_sq as i64 * x as i64).wrapping_add(cub_add) >> (cub_shift & 63)
}

/// Data-dependent shifts of the scale-0 masking reduction for a `w x h` band: the cube shifts
/// for h, v, d and the row shift (libvmaf `adm_cm`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CmShiftsS0 {
    /// `ceil(log2(w) - 4)`, `ceil(log2(w) - 4)`, `ceil(log2(w) - 3)` for h, v, d.
    pub cub: [u32; 3],
    /// The rounding constants added before the `cub` shifts (`add_shift_xhcub` etc.).
    pub cub_add: [i64; 3],
    /// `ceil(log2(h))`.
    pub inner: u32,
}

impl CmShiftsS0 {
    /// The shifts for a `w x h` band, as libvmaf's `isa` kernels compute them.
    ///
    /// For bands 9..=16 wide (pictures 17..=32 wide) the h and v cube shifts are 0, and libvmaf's
    /// rounding constant `(uint32_t)pow(2, shift - 1)` converts `pow(2, 4294967295)`, infinity,
    /// to `uint32_t` (undefined in C): its C and AVX2 code compile that to a 64-bit truncation
    /// whose low half is 0, its AVX-512 code (`adm_cm_avx512`) to `vcvttsd2usi`, which gives
    /// `0xFFFFFFFF`. Both are reproduced.
    pub fn new(w: usize, h: usize, isa: LibvmafIsa) -> Self {
        let lw = (w as f64).log2();
        let cub = [
            c_f64_to_u32((lw - 4.0).ceil()),
            c_f64_to_u32((lw - 4.0).ceil()),
            c_f64_to_u32((lw - 3.0).ceil()),
        ];
        let cub_add = cub.map(|s| match (s, isa) {
            (0, LibvmafIsa::Avx512) => u32::MAX as i64,
            _ => half_pow2_u32(s) as i64,
        });
        CmShiftsS0 {
            cub,
            cub_add,
            inner: ceil_log2_u32(h as f64),
        }
    }
}

/// Integer part of the scale-0 numerator (libvmaf `adm_cm`): for every visited sample, the
/// masking threshold from the 3x3 neighbourhood of `flt` (centre replaced by `|csf| / 15`) is
/// subtracted from `|x * i_rfactor|`, the excess cubed and summed per band, each row's sum rounded
/// by `shifts.inner` bits.
#[allow(clippy::too_many_arguments)]
pub fn cm_s0(
    x_hvd: [&[i16]; 3],
    csf_hvd: [&[i16]; 3],
    flt_hvd: [&[i16]; 3],
    stride: usize,
    w: usize,
    h: usize,
    i_rfactor: [u16; 3],
    shifts: CmShiftsS0,
) -> [i64; 3] {
    cm_s0_with(
        cm_s0_interior,
        x_hvd,
        csf_hvd,
        flt_hvd,
        stride,
        w,
        h,
        i_rfactor,
        shifts,
    )
}

/// [`cm_s0`] with the interior columns of each row computed by `interior` (a peer of
/// [`cm_s0_interior`], as a SIMD level's kernel table passes it); the edge columns and the row
/// rounding stay here.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub fn cm_s0_with(
    interior: impl Fn(
        [&[i16]; 3],
        [&[i16]; 3],
        [&[i16]; 3],
        (usize, usize, usize),
        Range<usize>,
        [u16; 3],
        [u32; 3],
        [i64; 3],
    ) -> [i64; 3],
    x_hvd: [&[i16]; 3],
    csf_hvd: [&[i16]; 3],
    flt_hvd: [&[i16]; 3],
    stride: usize,
    w: usize,
    h: usize,
    i_rfactor: [u16; 3],
    shifts: CmShiftsS0,
) -> [i64; 3] {
    let inner_add = half_pow2_u32(shifts.inner) as i64;
    let inner_shift = shifts.inner & 63;
    let cub_add = shifts.cub_add;
    let reg = region_pool(w, h);
    let mut accum = [0i64; 3];
    // The visited columns: edge 0, the interior run, edge w - 1 (see `cm_span`).
    let first = (reg.left == 0).then_some(0);
    let mid = reg.left.max(1)..reg.right.min(w - 1);
    let last = (reg.right > w - 1).then_some(w - 1);
    for i in cm_span(reg.top, reg.bottom, h) {
        let (up, down) = cm_neighbours(i, h);
        let rows = (up * stride, i * stride, down * stride);
        let mut inner = interior(
            x_hvd,
            csf_hvd,
            flt_hvd,
            rows,
            mid.clone(),
            i_rfactor,
            shifts.cub,
            cub_add,
        );
        for j in first.into_iter().chain(last) {
            let (l, r) = cm_neighbours(j, w);
            let t = cm_s0_pixel(
                x_hvd,
                csf_hvd,
                flt_hvd,
                rows,
                (l, j, r),
                i_rfactor,
                shifts.cub,
                cub_add,
            );
            for b in 0..3 {
                inner[b] = inner[b].wrapping_add(t[b]);
            }
        }
        for b in 0..3 {
            accum[b] = accum[b].wrapping_add(inner[b].wrapping_add(inner_add) >> inner_shift);
        }
    }
    accum
}

/// Scalar interior-column kernel of [`cm_s0`] (`adm::CmS0Interior`): one row's sums over the
/// columns `cols`.
#[allow(clippy::too_many_arguments)]
pub fn cm_s0_interior(
    x_hvd: [&[i16]; 3],
    csf_hvd: [&[i16]; 3],
    flt_hvd: [&[i16]; 3],
    rows: (usize, usize, usize),
    cols: Range<usize>,
    i_rfactor: [u16; 3],
    cub: [u32; 3],
    cub_add: [i64; 3],
) -> [i64; 3] {
    let mut inner = [0i64; 3];
    for j in cols {
        let t = cm_s0_pixel(
            x_hvd,
            csf_hvd,
            flt_hvd,
            rows,
            (j - 1, j, j + 1),
            i_rfactor,
            cub,
            cub_add,
        );
        for b in 0..3 {
            inner[b] = inner[b].wrapping_add(t[b]);
        }
    }
    inner
}

/// One sample's three masked, cubed terms of [`cm_s0`] (before the row rounding): `rows` are the
/// offsets of the rows above, at and below, `cols` the columns left, at and right.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub fn cm_s0_pixel(
    x_hvd: [&[i16]; 3],
    csf_hvd: [&[i16]; 3],
    flt_hvd: [&[i16]; 3],
    rows: (usize, usize, usize),
    cols: (usize, usize, usize),
    i_rfactor: [u16; 3],
    cub: [u32; 3],
    cub_add: [i64; 3],
) -> [i64; 3] {
    const SUB: [u32; 3] = [10, 10, 12];
    const SQ_SHIFT: [u32; 3] = [29, 29, 30];
    const SQ_ADD: [i64; 3] = [1 << 28, 1 << 28, 1 << 29];
    let p = rows.1 + cols.1;
    let mut thr = 0i32;
    for b in 0..3 {
        let n = neighbours8(flt_hvd[b], 1, rows, cols);
        let c = ((ONE_BY_15 * (csf_hvd[b][p] as i32).abs() + 2048) >> 12) as i16;
        thr = thr.wrapping_add(n.wrapping_add(c as i32));
    }
    std::array::from_fn(|b| {
        let x = (x_hvd[b][p] as i32).wrapping_mul(i_rfactor[b] as i32);
        cm_term(x, thr, SUB[b], SQ_ADD[b], SQ_SHIFT[b], cub_add[b], cub[b])
    })
}

/// Pools a scale-0 numerator accumulation (libvmaf `adm_cm` tail): per band
/// `cbrt((float)(accum / 2^(52|57 - shifts))) + cbrt(area * noise_weight)`, summed in float.
pub fn cm_pool_s0(
    accum: [i64; 3],
    shifts: CmShiftsS0,
    w: usize,
    h: usize,
    noise_weight: f64,
) -> f32 {
    const BASE: [u32; 3] = [52, 52, 57];
    let add = noise_term(region_pool(w, h).area(), noise_weight);
    let mut sum = 0f32;
    for b in 0..3 {
        let e = BASE[b]
            .wrapping_sub(shifts.cub[b])
            .wrapping_sub(shifts.inner);
        let f = (accum[b] as f64 / 2f64.powf(e as f64)) as f32;
        let num = cbrt_powf(f) + add;
        sum = if b == 0 { num } else { sum + num };
    }
    sum
}

/// Data-dependent shifts of the scale-1..3 masking reduction: `(ceil(log2(w)), ceil(log2(h)))`
/// (libvmaf `i4_adm_cm`).
pub fn cm_s123_shifts(w: usize, h: usize) -> (u32, u32) {
    (ceil_log2_u32(w as f64), ceil_log2_u32(h as f64))
}

/// Integer part of the scale-1..3 numerator (libvmaf `i4_adm_cm`), the `i32` analogue of
/// [`cm_s0`]: `x = src * rfactor >> 28`, threshold centre `|csf| / 15` in Q32 with the `-2^31`
/// rounding term, cube rounded by `shifts.0`, rows by `shifts.1`.
#[allow(clippy::too_many_arguments)]
pub fn cm_s123(
    x_hvd: [&[i32]; 3],
    csf_hvd: [&[i32]; 3],
    flt_hvd: [&[i32]; 3],
    stride: usize,
    w: usize,
    h: usize,
    rfactor: [u32; 3],
    shifts: (u32, u32),
) -> [i64; 3] {
    cm_s123_with(
        cm_s123_interior,
        x_hvd,
        csf_hvd,
        flt_hvd,
        stride,
        w,
        h,
        rfactor,
        shifts,
    )
}

/// [`cm_s123`] with the interior columns of each row computed by `interior` (a peer of
/// [`cm_s123_interior`], as a SIMD level's kernel table passes it); the edge columns and the row
/// rounding stay here.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub fn cm_s123_with(
    interior: impl Fn(
        [&[i32]; 3],
        [&[i32]; 3],
        [&[i32]; 3],
        (usize, usize, usize),
        Range<usize>,
        [u32; 3],
        u32,
    ) -> [i64; 3],
    x_hvd: [&[i32]; 3],
    csf_hvd: [&[i32]; 3],
    flt_hvd: [&[i32]; 3],
    stride: usize,
    w: usize,
    h: usize,
    rfactor: [u32; 3],
    shifts: (u32, u32),
) -> [i64; 3] {
    let (shift_cub, shift_inner) = shifts;
    let cub_add = half_pow2_u32(shift_cub) as i64;
    let inner_add = half_pow2_u32(shift_inner) as i64;
    let inner_shift = shift_inner & 63;
    let reg = region_pool(w, h);
    let mut accum = [0i64; 3];
    // The visited columns: edge 0, the interior run, edge w - 1 (see `cm_span`).
    let first = (reg.left == 0).then_some(0);
    let mid = reg.left.max(1)..reg.right.min(w - 1);
    let last = (reg.right > w - 1).then_some(w - 1);
    for i in cm_span(reg.top, reg.bottom, h) {
        let (up, down) = cm_neighbours(i, h);
        let rows = (up * stride, i * stride, down * stride);
        let mut inner = interior(
            x_hvd,
            csf_hvd,
            flt_hvd,
            rows,
            mid.clone(),
            rfactor,
            shift_cub,
        );
        for j in first.into_iter().chain(last) {
            let (l, r) = cm_neighbours(j, w);
            let t = cm_s123_pixel(
                x_hvd,
                csf_hvd,
                flt_hvd,
                rows,
                (l, j, r),
                rfactor,
                shift_cub,
                cub_add,
            );
            for b in 0..3 {
                inner[b] = inner[b].wrapping_add(t[b]);
            }
        }
        for b in 0..3 {
            accum[b] = accum[b].wrapping_add(inner[b].wrapping_add(inner_add) >> inner_shift);
        }
    }
    accum
}

/// Scalar interior-column kernel of [`cm_s123`] (`adm::CmS123Interior`): one row's sums over
/// the columns `cols`.
pub fn cm_s123_interior(
    x_hvd: [&[i32]; 3],
    csf_hvd: [&[i32]; 3],
    flt_hvd: [&[i32]; 3],
    rows: (usize, usize, usize),
    cols: Range<usize>,
    rfactor: [u32; 3],
    shift_cub: u32,
) -> [i64; 3] {
    let cub_add = half_pow2_u32(shift_cub) as i64;
    let mut inner = [0i64; 3];
    for j in cols {
        let t = cm_s123_pixel(
            x_hvd,
            csf_hvd,
            flt_hvd,
            rows,
            (j - 1, j, j + 1),
            rfactor,
            shift_cub,
            cub_add,
        );
        for b in 0..3 {
            inner[b] = inner[b].wrapping_add(t[b]);
        }
    }
    inner
}

/// One sample's three masked, cubed terms of [`cm_s123`] (before the row rounding): `rows` are
/// the offsets of the rows above, at and below, `cols` the columns left, at and right.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub fn cm_s123_pixel(
    x_hvd: [&[i32]; 3],
    csf_hvd: [&[i32]; 3],
    flt_hvd: [&[i32]; 3],
    rows: (usize, usize, usize),
    cols: (usize, usize, usize),
    rfactor: [u32; 3],
    shift_cub: u32,
    cub_add: i64,
) -> [i64; 3] {
    let p = rows.1 + cols.1;
    let mut thr = 0i32;
    for b in 0..3 {
        let n = neighbours8(flt_hvd[b], 1, rows, cols);
        let a = csf_hvd[b][p].wrapping_abs() as i64;
        let c = ((I4_ONE_BY_15 * a + ADD_SHIFT_32) >> 32) as i32;
        thr = thr.wrapping_add(n.wrapping_add(c));
    }
    std::array::from_fn(|b| {
        let x = ((x_hvd[b][p] as i64)
            .wrapping_mul(rfactor[b] as i64)
            .wrapping_add(1 << 27)
            >> 28) as i32;
        cm_term(x, thr, 0, 1 << 29, 30, cub_add, shift_cub)
    })
}

/// Pools a scale-1..3 numerator accumulation (libvmaf `i4_adm_cm` tail): the accumulation is
/// converted to float and divided by the float `2^(45|39|36 - shifts)`.
pub fn cm_pool_s123(
    accum: [i64; 3],
    scale: usize,
    shifts: (u32, u32),
    w: usize,
    h: usize,
    noise_weight: f64,
) -> f32 {
    const BASE: [u32; 3] = [45, 39, 36];
    let e = BASE[scale - 1]
        .wrapping_sub(shifts.0)
        .wrapping_sub(shifts.1);
    let final_shift = 2f64.powf(e as f64) as f32;
    let add = noise_term(region_pool(w, h).area(), noise_weight);
    let mut sum = 0f32;
    for (b, &acc) in accum.iter().enumerate() {
        let f = acc as f32 / final_shift;
        let num = cbrt_powf(f) + add;
        sum = if b == 0 { num } else { sum + num };
    }
    sum
}
