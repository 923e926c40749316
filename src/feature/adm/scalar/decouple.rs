//! Decoupling (libvmaf `adm_decouple` / `adm_decouple_s123`): the distorted detail bands split
//! into the part restored from the reference (`r`) and the additive impairment (`a`).

use super::{c_f64_to_i32, Region};
use crate::feature::adm::tables::{COS_1DEG_SQ, DIV_LOOKUP};

/// libvmaf's test whether the (h, v) orientation of reference and distorted differ by less than
/// one degree, evaluated with its float/double conversions.
#[inline(always)]
fn angle_flag(ot_dp: i64, o_mag_sq: i64, t_mag_sq: i64) -> bool {
    let ot = ot_dp as f32 as f64 / 4096.0;
    let o = o_mag_sq as f32 as f64 / 4096.0;
    let t = t_mag_sq as f32 as f64 / 4096.0;
    ot >= 0.0 && ot * ot >= COS_1DEG_SQ as f64 * o * t
}

/// The SIMD peers' gain limit in `float`: `egl` as a `float` where every product of it with an
/// integer of at most 16 bits is exact in `float` (finite, at most 9 significant bits, between
/// 2^-100 and 2^100 in magnitude; libvmaf's default 100 and 1 qualify); `None` otherwise.
pub fn f32_exact_gain(egl: f64) -> Option<f32> {
    let bits = egl.to_bits();
    let significand = (bits & ((1 << 52) - 1)) | (1 << 52);
    let ok = egl.is_finite()
        && egl.abs() < 2f64.powi(100)
        && egl.abs() >= 2f64.powi(-100)
        && significand.trailing_zeros() >= 44;
    ok.then_some(egl as f32)
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

#[cfg(test)]
mod f32_gain_tests {
    use super::f32_exact_gain;

    /// The `float` gain limit is taken exactly where `float` products are exact.
    #[test]
    fn f32_exact_gain_takes_short_significands_only() {
        for (egl, want) in [
            (100.0, Some(100.0f32)),
            (1.0, Some(1.0)),
            (0.75, Some(0.75)),
            (511.0, Some(511.0)),
            (1.2, None),
            (513.0, None),
            (f64::NAN, None),
            (f64::INFINITY, None),
            (1e200, None),
            (0.0, None),
        ] {
            assert_eq!(f32_exact_gain(egl), want, "egl {egl}");
        }
    }
}
