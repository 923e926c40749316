//! Contrast-sensitivity weighting (libvmaf `adm_csf` / `i4_adm_csf`) and the integer reduction
//! of the CSF-weighted reference that becomes a scale's denominator (`adm_csf_den_scale` /
//! `adm_csf_den_s123`; pooled in `pool.rs`).

use super::{half_pow2_u32, Region};
use crate::feature::adm::tables::{FIX_ONE_BY_30, I4_FIX_ONE_BY_30};

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
pub(super) const ADD_SHIFT_32: i64 = i32::MIN as i64;

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
