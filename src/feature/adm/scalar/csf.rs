//! Contrast-sensitivity weighting (libvmaf `adm_csf` / `i4_adm_csf`) and the integer reduction
//! of the CSF-weighted reference that becomes a scale's denominator (`adm_csf_den_scale` /
//! `adm_csf_den_s123`; pooled in `pool.rs`).

use super::{half_pow2_u32, Region};
use crate::feature::adm::tables::{FIX_ONE_BY_30, I4_FIX_ONE_BY_30, I4_ONE_BY_15, ONE_BY_15};

/// Scale-0 CSF (libvmaf `adm_csf`) of the masker's bands, kept as the two sums the masking
/// threshold reads ([`cm_s0`](super::cm_s0)), over `reg`. Per band, `csf = src * i_rfactor`
/// rounded to Q16 (`i16`), its filter value `|csf| / 30` and its centre value `|csf| / 15` (both
/// rounded from Q12 and narrowed to `i16`, [`masker_s0`]); `flt` gets the three filter values
/// summed and `centre` the three centre values. A sample's threshold, libvmaf's sum over the
/// bands of its eight neighbours' filter values and its own centre value, is then the sum of
/// `flt` over the eight neighbours plus `centre`: integer sums, in any order (one sum a sample
/// instead of three, and no `csf` band kept).
pub fn csf_s0(
    src_hvd: [&[i16]; 3],
    flt: &mut [i32],
    centre: &mut [i32],
    stride: usize,
    reg: Region,
    i_rfactor: [u16; 3],
) {
    for i in reg.top..reg.bottom {
        let o = i * stride;
        for p in o + reg.left..o + reg.right {
            let (mut f, mut c) = (0i32, 0i32);
            for b in 0..3 {
                let (fb, cb) = masker_s0(csf_s0_value(src_hvd[b][p], i_rfactor[b], b));
                (f, c) = (f + fb, c + cb);
            }
            (flt[p], centre[p]) = (f, c);
        }
    }
}

/// One band-`b` (h, v, d) sample's scale-0 CSF value: `src * i_rfactor` rounded to Q16 (`>> 15`,
/// or `>> 17` for the diagonal band) and narrowed to `i16`, as libvmaf's `adm_csf`.
#[inline(always)]
pub fn csf_s0_value(src: i16, i_rfactor: u16, b: usize) -> i16 {
    const SHIFT: [u32; 3] = [15, 15, 17];
    const ADD: [i32; 3] = [16384, 16384, 65535];
    let v = (i_rfactor as i32).wrapping_mul(src as i32);
    (v.wrapping_add(ADD[b]) >> SHIFT[b]) as i16
}

/// The masking threshold's parts of one scale-0 CSF value: `(|csf| / 30, |csf| / 15)`, each
/// `(k * |csf| + 2048) >> 12` narrowed to `i16` (libvmaf's `flt` band and `adm_cm`'s centre).
#[inline(always)]
pub fn masker_s0(csf: i16) -> (i32, i32) {
    let a = (csf as i32).abs();
    let f = ((FIX_ONE_BY_30 * a + 2048) >> 12) as i16;
    let c = ((ONE_BY_15 * a + 2048) >> 12) as i16;
    (f as i32, c as i32)
}

/// Rounding term of libvmaf's scale-1..3 `>> 32` steps: `(int32_t)(1u << 31)`, i.e. `-2^31`.
pub(super) const ADD_SHIFT_32: i64 = i32::MIN as i64;

/// Scale-1..3 CSF (libvmaf `i4_adm_csf`) of the masker's bands, as [`csf_s0`] keeps it: per band
/// `csf = src * i_rfactor >> 28` (rounded), its filter value `|csf| / 30` and centre value
/// `|csf| / 15` in Q32 with libvmaf's `-2^31` rounding term ([`masker_s123`]); `flt` and `centre`
/// get the bands' sums, wrapping in 32 bits as libvmaf's threshold sum does (so in any order).
pub fn csf_s123(
    src_hvd: [&[i32]; 3],
    flt: &mut [i32],
    centre: &mut [i32],
    stride: usize,
    reg: Region,
    i_rfactor: [u32; 3],
) {
    for i in reg.top..reg.bottom {
        let o = i * stride;
        for p in o + reg.left..o + reg.right {
            let (mut f, mut c) = (0i32, 0i32);
            for b in 0..3 {
                let (fb, cb) = masker_s123(csf_s123_value(src_hvd[b][p], i_rfactor[b]));
                (f, c) = (f.wrapping_add(fb), c.wrapping_add(cb));
            }
            (flt[p], centre[p]) = (f, c);
        }
    }
}

/// One scale-1..3 sample's CSF value: `src * i_rfactor >> 28`, rounded, as libvmaf's
/// `i4_adm_csf`.
#[inline(always)]
pub fn csf_s123_value(src: i32, i_rfactor: u32) -> i32 {
    ((i_rfactor as i64)
        .wrapping_mul(src as i64)
        .wrapping_add(1 << 27)
        >> 28) as i32
}

/// The masking threshold's parts of one scale-1..3 CSF value: `(|csf| / 30, |csf| / 15)` in Q32,
/// `(k * |csf| - 2^31) >> 32` (`|i32::MIN|` taken as `i32::MIN`, as C's `abs` gives it).
#[inline(always)]
pub fn masker_s123(csf: i32) -> (i32, i32) {
    let a = csf.wrapping_abs() as i64;
    let f = ((I4_FIX_ONE_BY_30 * a + ADD_SHIFT_32) >> 32) as i32;
    let c = ((I4_ONE_BY_15 * a + ADD_SHIFT_32) >> 32) as i32;
    (f, c)
}

/// One sample's term of [`csf_den_s0`]: `|x|^3` (`|i16::MIN|` is 2^15).
#[inline]
pub fn den_s0_term(x: i16) -> u64 {
    let x = (x as i32).unsigned_abs() as u16 as u64;
    x * x * x
}

/// One sample's term of [`csf_den_s123`]: `((|x|^2 + 2^shift_sq) >> shift_sq) * |x|`, rounded
/// by `add_cub` and `sc` (`|i32::MIN|` is 2^31; products wrapping in 64 bits).
#[inline]
pub fn den_s123_term(x: i32, shift_sq: u32, add_cub: u64, sc: u32) -> u64 {
    let x = x.wrapping_abs() as u32 as u64;
    let sq = x.wrapping_mul(x).wrapping_add(1u64 << shift_sq) >> shift_sq;
    sq.wrapping_mul(x).wrapping_add(add_cub) >> sc
}

/// Integer part of the scale-0 denominator (libvmaf `adm_csf_den_scale`): per band, the sum over
/// `reg` of `|ref|^3`, each row's sum rounded down by `shift` bits (see
/// [`den_s0_shift`](super::den_s0_shift)).
pub fn csf_den_s0(ref_hvd: [&[i16]; 3], stride: usize, reg: Region, shift: u32) -> [u64; 3] {
    let add: u64 = if shift > 0 { 1 << (shift - 1) } else { 0 };
    let mut accum = [0u64; 3];
    for (b, src) in ref_hvd.into_iter().enumerate() {
        for i in reg.top..reg.bottom {
            let row = &src[i * stride + reg.left..i * stride + reg.right];
            let mut inner = 0u64;
            for &x in row {
                inner = inner.wrapping_add(den_s0_term(x));
            }
            accum[b] = accum[b].wrapping_add(inner.wrapping_add(add) >> shift);
        }
    }
    accum
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
    let add_cub = half_pow2_u32(shift_cub) as u64;
    let add_accum = half_pow2_u32(shift_accum) as u64;
    let (sc, sa) = (shift_cub & 63, shift_accum & 63);
    let mut accum = [0u64; 3];
    for (b, src) in ref_hvd.into_iter().enumerate() {
        for i in reg.top..reg.bottom {
            let row = &src[i * stride + reg.left..i * stride + reg.right];
            let mut inner = 0u64;
            for &x in row {
                inner = inner.wrapping_add(den_s123_term(x, shift_sq, add_cub, sc));
            }
            accum[b] = accum[b].wrapping_add(inner.wrapping_add(add_accum) >> sa);
        }
    }
    accum
}
