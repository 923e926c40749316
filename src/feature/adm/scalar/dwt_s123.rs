//! Scale-1..3 DWT (libvmaf `adm_dwt2_s123_combined`): the previous approximation band into
//! four `i32` bands.

use super::{vertical_prefetched, QuadMut};
use crate::feature::adm::tables::{DB2_HI, DB2_LO};

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
    for i in 0..ind_y.len() {
        let (input, tmp) = ((src, src_stride, w), (&mut *tmp_lo, &mut *tmp_hi));
        vertical_prefetched(input, ind_y, i, tmp, |r, l, h| vertical(r, scale, l, h));
        let o = i * dst_stride;
        let n = ind_x.len();
        let (a, h) = (&mut out.a[o..o + n], &mut out.h[o..o + n]);
        let (v, d) = (&mut out.v[o..o + n], &mut out.d[o..o + n]);
        horizontal(tmp_lo, ind_x, scale, a, v);
        horizontal(tmp_hi, ind_x, scale, h, d);
    }
}
