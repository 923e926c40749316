//! Pooling: the regions each stage covers, the data-dependent shifts of the two integer
//! reductions, and the float pooling of their accumulations into a scale's numerator and
//! denominator (libvmaf `adm_csf_den_scale` / `adm_csf_den_s123` / `adm_cm` / `i4_adm_cm` tails).

use super::{c_f64_to_i32, c_f64_to_u32, ceil_log2_u32, half_pow2_u32, Region};
use crate::feature::adm::tables::BORDER_FACTOR;
use crate::fidelity::LibvmafIsa;

/// The region libvmaf's decouple and CSF stages cover in a `w x h` band: the pooling region
/// widened by the filter taps (one sample before, three after), clamped to the band.
pub fn region_decouple(w: usize, h: usize) -> Region {
    let left = (w as f64 * BORDER_FACTOR - 0.5 - 1.0) as i64;
    let top = (h as f64 * BORDER_FACTOR - 0.5 - 1.0) as i64;
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
    let left = (w as f64 * BORDER_FACTOR - 0.5) as usize;
    let top = (h as f64 * BORDER_FACTOR - 0.5) as usize;
    Region {
        top,
        bottom: h - top,
        left,
        right: w - left,
    }
}

/// Row-accumulation shift of the scale-0 denominator for a pooling region of `area` samples
/// (libvmaf `adm_csf_den_scale`, `shift_accum`).
pub fn den_s0_shift(area: usize) -> u32 {
    let s = c_f64_to_i32((((area as i32) as f64).log2() - 20.0).ceil());
    s.max(0) as u32
}

/// Shifts of the scale-1..3 denominator for a pooling region: `(shift_cub, shift_accum)` =
/// `ceil(log2(width))`, `ceil(log2(height))` (libvmaf `adm_csf_den_s123`).
pub fn den_s123_shifts(reg: Region) -> (u32, u32) {
    (
        ceil_log2_u32((reg.right - reg.left) as f64),
        ceil_log2_u32((reg.bottom - reg.top) as f64),
    )
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

/// Data-dependent shifts of the scale-1..3 masking reduction: `(ceil(log2(w)), ceil(log2(h)))`
/// (libvmaf `i4_adm_cm`).
pub fn cm_s123_shifts(w: usize, h: usize) -> (u32, u32) {
    (ceil_log2_u32(w as f64), ceil_log2_u32(h as f64))
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
