//! Scale-0 DWT (libvmaf `adm_dwt2_8` / `adm_dwt2_16`): 8–16 bit samples into four `i16` bands,
//! with the last-column variants of libvmaf's x86 kernels; and the tap indices every DWT uses.

use super::{vertical_prefetched, QuadMut};
use crate::feature::adm::tables::{DB2_HI, DB2_HI_SUM, DB2_LO, DB2_LO_SUM};
use crate::fidelity::LibvmafIsa;

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
    for i in 0..ind_y.len() {
        let (input, tmp) = ((src, src_stride, w), (&mut *tmp_lo, &mut *tmp_hi));
        vertical_prefetched(input, ind_y, i, tmp, |r, l, h| vertical(r, bpc, l, h));
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
