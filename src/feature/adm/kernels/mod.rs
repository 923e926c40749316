//! The ADM kernel table: every kernel a SIMD level may replace, chosen once per instance (the
//! shape of `vif::Kernels`). The stage methods here run a stage of [`scalar`] with this level's
//! entries; `entries.rs` calls each entry and, with the `check_simd` feature, recomputes every
//! call through an entry of a SIMD level with the scalar kernel and asserts the outputs equal.

mod entries;

use std::ops::Range;

use super::scalar::{self, CmRows, CmShiftsS0, QuadMut, Region};
#[cfg(target_arch = "x86_64")]
use super::{x86_64_avx2, x86_64_avx512, x86_64_avx512_vnni};
use crate::cpu::CpuLevel;
use crate::fidelity::LibvmafIsa;

/// Vertical row kernel of the scale-0 DWT ([`scalar::dwt_s0_vertical_both`]): four source rows
/// (at least `tmp_lo.len()` samples each) and `bpc` into the low-pass and high-pass rows
/// `tmp_lo`, `tmp_hi` (same length).
pub type DwtS0Vertical<S> = fn([&[S]; 4], u32, &mut [i16], &mut [i16]);

/// Horizontal row kernel of the scale-0 DWT ([`scalar::dwt_s0_horizontal`]): the vertical-pass
/// row `tmp` (`w` values) filtered at the columns of `ind_x` (from [`scalar::dwt_indices`] for
/// `w`) into `lo` (low-pass, `ind_x.len()` values) and `hi` (high-pass).
pub type DwtS0Horizontal = fn(&[i16], &[[usize; 4]], &mut [i16], &mut [i16]);

/// Vertical row kernel of the scale-1..3 DWT ([`scalar::dwt_s123_vertical`]): four source rows
/// (at least `tmp_lo.len()` values each) and the scale (1..=3) into the low-pass and high-pass
/// rows `tmp_lo`, `tmp_hi`.
pub type DwtS123Vertical<S> = fn([&[S]; 4], usize, &mut [i32], &mut [i32]);

/// Horizontal row kernel of the scale-1..3 DWT ([`scalar::dwt_s123_horizontal`]): the
/// vertical-pass row `tmp` (`w` values) filtered at the columns of `ind_x` with the scale's
/// rounding into `lo` (low-pass, `ind_x.len()` values) and `hi` (high-pass).
pub type DwtS123Horizontal = fn(&[i32], &[[usize; 4]], usize, &mut [i32], &mut [i32]);

/// Scale-0 decoupling ([`scalar::decouple_s0`]).
pub type DecoupleS0 =
    fn([&[i16]; 3], [&[i16]; 3], [&mut [i16]; 3], [&mut [i16]; 3], usize, Region, f64);

/// Scale-1..3 decoupling ([`scalar::decouple_s123`]).
pub type DecoupleS123 =
    fn([&[i32]; 3], [&[i32]; 3], [&mut [i32]; 3], [&mut [i32]; 3], usize, Region, f64);

/// Scale-0 CSF of the masker's bands into the threshold's filter and centre sums
/// ([`scalar::csf_s0`]).
pub type CsfS0 = fn([&[i16]; 3], &mut [i32], &mut [i32], usize, Region, [u16; 3]);

/// Scale-1..3 CSF of the masker's bands into the threshold's sums ([`scalar::csf_s123`]).
pub type CsfS123 = fn([&[i32]; 3], &mut [i32], &mut [i32], usize, Region, [u32; 3]);

/// Integer part of the scale-0 denominator ([`scalar::csf_den_s0`]): the bands, their stride,
/// the pooling region and the row shift.
pub type CsfDenS0 = fn([&[i16]; 3], usize, Region, u32) -> [u64; 3];

/// Integer part of the scale-1..3 denominator ([`scalar::csf_den_s123`]): the bands, their
/// stride, the pooling region, the scale (1..=3), the cube shift and the row shift.
pub type CsfDenS123 = fn([&[i32]; 3], usize, Region, usize, u32, u32) -> [u64; 3];

/// Interior columns of the scale-0 masking ([`scalar::cm_s0_interior`]): the per-row sums of
/// [`scalar::cm_s0`] over columns `cols` (`1 <= j`, `j + 1 < w`) of the row at offset `rows.1`,
/// whose neighbour rows start at `rows.0` / `rows.2`; `cub` and `cub_add` are the cube shifts and
/// their rounding constants ([`CmShiftsS0`]).
pub type CmS0Interior = fn(
    [&[i16]; 3],
    &[i32],
    &[i32],
    (usize, usize, usize),
    Range<usize>,
    [u16; 3],
    [u32; 3],
    [i64; 3],
) -> [i64; 3];

/// Interior columns of the scale-1..3 masking ([`scalar::cm_s123_interior`]), the `i32` analogue
/// of [`CmS0Interior`]; the last argument is the cube shift.
pub type CmS123Interior =
    fn([&[i32]; 3], &[i32], &[i32], (usize, usize, usize), Range<usize>, [u32; 3], u32) -> [i64; 3];

/// The ADM kernels of one CPU level: the scalar specification, with the entries a SIMD level
/// provides replaced (a level without its own kernel keeps the best lower one's).
#[derive(Debug, Clone, Copy)]
pub struct Kernels {
    level: CpuLevel,
    /// See [`DwtS0Vertical`] (8-bit samples).
    pub dwt_s0_vertical_u8: DwtS0Vertical<u8>,
    /// See [`DwtS0Vertical`] (9..16-bit samples).
    pub dwt_s0_vertical_u16: DwtS0Vertical<u16>,
    /// See [`DwtS0Horizontal`].
    pub dwt_s0_horizontal: DwtS0Horizontal,
    /// See [`DwtS123Vertical`] (the scale-0 approximation band, for scale 1).
    pub dwt_s123_vertical_i16: DwtS123Vertical<i16>,
    /// See [`DwtS123Vertical`] (a scale-1..2 approximation band, for scales 2, 3).
    pub dwt_s123_vertical_i32: DwtS123Vertical<i32>,
    /// See [`DwtS123Horizontal`].
    pub dwt_s123_horizontal: DwtS123Horizontal,
    /// See [`DecoupleS0`].
    pub decouple_s0: DecoupleS0,
    /// See [`DecoupleS123`].
    pub decouple_s123: DecoupleS123,
    /// See [`CsfS0`].
    pub csf_s0: CsfS0,
    /// See [`CsfS123`].
    pub csf_s123: CsfS123,
    /// See [`CsfDenS0`].
    pub csf_den_s0: CsfDenS0,
    /// See [`CsfDenS123`].
    pub csf_den_s123: CsfDenS123,
    /// See [`CmS0Interior`].
    pub cm_s0_interior: CmS0Interior,
    /// See [`CmS123Interior`].
    pub cm_s123_interior: CmS123Interior,
}

impl Kernels {
    /// The scalar specification kernels.
    pub const SCALAR: Kernels = Kernels {
        level: CpuLevel::Scalar,
        dwt_s0_vertical_u8: scalar::dwt_s0_vertical_both::<u8>,
        dwt_s0_vertical_u16: scalar::dwt_s0_vertical_both::<u16>,
        dwt_s0_horizontal: scalar::dwt_s0_horizontal,
        dwt_s123_vertical_i16: scalar::dwt_s123_vertical::<i16>,
        dwt_s123_vertical_i32: scalar::dwt_s123_vertical::<i32>,
        dwt_s123_horizontal: scalar::dwt_s123_horizontal,
        decouple_s0: scalar::decouple_s0,
        decouple_s123: scalar::decouple_s123,
        csf_s0: scalar::csf_s0,
        csf_s123: scalar::csf_s123,
        csf_den_s0: scalar::csf_den_s0,
        csf_den_s123: scalar::csf_den_s123,
        cm_s0_interior: scalar::cm_s0_interior,
        cm_s123_interior: scalar::cm_s123_interior,
    };

    /// The best kernels at or below `level` that this machine runs.
    pub fn for_level(level: CpuLevel) -> Self {
        #[allow(unused_mut)]
        let mut k = Self::SCALAR;
        #[cfg(target_arch = "x86_64")]
        {
            if level >= CpuLevel::Avx2 {
                x86_64_avx2::install(&mut k);
            }
            if level >= CpuLevel::Avx512 {
                x86_64_avx512::install(&mut k);
            }
            if level >= CpuLevel::Avx512Vnni {
                x86_64_avx512_vnni::install(&mut k);
            }
        }
        k.level = level;
        k
    }

    /// The level these kernels were chosen for.
    pub fn level(&self) -> CpuLevel {
        self.level
    }

    /// [`scalar::dwt2_s0`] with this level's row kernels.
    #[allow(clippy::too_many_arguments)]
    pub fn dwt2_s0<S: DwtS0Sample>(
        &self,
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
        scalar::dwt2_s0_with(
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
            |rows, bpc, lo, hi| self.dwt_s0_vertical(rows, bpc, lo, hi),
            |tmp, ind_x, lo, hi| self.dwt_s0_horizontal(tmp, ind_x, lo, hi),
        );
    }

    /// [`scalar::dwt2_s123`] with this level's row kernels.
    #[allow(clippy::too_many_arguments)]
    pub fn dwt2_s123<S: DwtS123Sample>(
        &self,
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
        scalar::dwt2_s123_with(
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
            |rows, scale, lo, hi| self.dwt_s123_vertical(rows, scale, lo, hi),
            |tmp, ind_x, scale, lo, hi| self.dwt_s123_horizontal(tmp, ind_x, scale, lo, hi),
        );
    }

    /// [`scalar::cm_s0`] with this level's interior-column kernel, over the rows of `window`.
    #[allow(clippy::too_many_arguments)]
    pub fn cm_s0(
        &self,
        x_hvd: [&[i16]; 3],
        flt: &[i32],
        centre: &[i32],
        stride: usize,
        (w, h): (usize, usize),
        window: CmRows,
        i_rfactor: [u16; 3],
        shifts: CmShiftsS0,
    ) -> [i64; 3] {
        scalar::cm_s0_with(
            |x, f, c, rows, cols, rf, cub, cub_add| {
                self.cm_s0_interior(x, f, c, rows, cols, rf, cub, cub_add)
            },
            x_hvd,
            flt,
            centre,
            stride,
            (w, h),
            window,
            i_rfactor,
            shifts,
        )
    }

    /// [`scalar::cm_s123`] with this level's interior-column kernel, over the rows of `window`.
    #[allow(clippy::too_many_arguments)]
    pub fn cm_s123(
        &self,
        x_hvd: [&[i32]; 3],
        flt: &[i32],
        centre: &[i32],
        stride: usize,
        (w, h): (usize, usize),
        window: CmRows,
        rfactor: [u32; 3],
        shifts: (u32, u32),
    ) -> [i64; 3] {
        scalar::cm_s123_with(
            |x, f, c, rows, cols, rf, cub| self.cm_s123_interior(x, f, c, rows, cols, rf, cub),
            x_hvd,
            flt,
            centre,
            stride,
            (w, h),
            window,
            rfactor,
            shifts,
        )
    }
}

/// Samples the scale-0 DWT reads (8-bit or 9..16-bit), with their vertical entry of [`Kernels`].
pub trait DwtS0Sample: Copy + Into<i32> {
    /// This type's vertical row kernel.
    fn vertical(k: &Kernels) -> DwtS0Vertical<Self>;
}

impl DwtS0Sample for u8 {
    fn vertical(k: &Kernels) -> DwtS0Vertical<u8> {
        k.dwt_s0_vertical_u8
    }
}

impl DwtS0Sample for u16 {
    fn vertical(k: &Kernels) -> DwtS0Vertical<u16> {
        k.dwt_s0_vertical_u16
    }
}

/// Samples the scale-1..3 DWT reads (the scale-0 `i16` or a later `i32` approximation band), with
/// their vertical entry of [`Kernels`].
pub trait DwtS123Sample: Copy + Into<i64> {
    /// This type's vertical row kernel.
    fn vertical(k: &Kernels) -> DwtS123Vertical<Self>;
}

impl DwtS123Sample for i16 {
    fn vertical(k: &Kernels) -> DwtS123Vertical<i16> {
        k.dwt_s123_vertical_i16
    }
}

impl DwtS123Sample for i32 {
    fn vertical(k: &Kernels) -> DwtS123Vertical<i32> {
        k.dwt_s123_vertical_i32
    }
}
