//! One method per entry of [`Kernels`]: it calls the entry and, with the `check_simd` feature and
//! a SIMD level, recomputes the call with the scalar kernel and asserts the outputs equal
//! (bands from the state before the call, so writes outside the region are caught too).

use std::ops::Range;

use super::{DwtS0Sample, DwtS123Sample, Kernels};
use crate::feature::adm::scalar::Region;

#[cfg(feature = "check_simd")]
use crate::{cpu::CpuLevel, feature::adm::scalar};

impl Kernels {
    /// The scale-0 decoupling entry ([`super::DecoupleS0`]; a whole stage over `reg`).
    #[allow(clippy::too_many_arguments)]
    pub fn decouple_s0(
        &self,
        ref_hvd: [&[i16]; 3],
        dis_hvd: [&[i16]; 3],
        mut r_hvd: [&mut [i16]; 3],
        mut a_hvd: [&mut [i16]; 3],
        stride: usize,
        reg: Region,
        egl: f64,
    ) {
        #[cfg(feature = "check_simd")]
        let before = self.checked().then(|| (owned(&r_hvd), owned(&a_hvd)));
        let (r, a) = (reborrow(&mut r_hvd), reborrow(&mut a_hvd));
        (self.decouple_s0)(ref_hvd, dis_hvd, r, a, stride, reg, egl);
        #[cfg(feature = "check_simd")]
        if let Some((mut r, mut a)) = before {
            let (wr, wa) = (muts(&mut r), muts(&mut a));
            scalar::decouple_s0(ref_hvd, dis_hvd, wr, wa, stride, reg, egl);
            assert!(
                same(&r_hvd, &r) && same(&a_hvd, &a),
                "check_simd: adm decouple_s0, {reg:?}"
            );
        }
    }

    /// The scale-1..3 decoupling entry ([`super::DecoupleS123`]; a whole stage over `reg`).
    #[allow(clippy::too_many_arguments)]
    pub fn decouple_s123(
        &self,
        ref_hvd: [&[i32]; 3],
        dis_hvd: [&[i32]; 3],
        mut r_hvd: [&mut [i32]; 3],
        mut a_hvd: [&mut [i32]; 3],
        stride: usize,
        reg: Region,
        egl: f64,
    ) {
        #[cfg(feature = "check_simd")]
        let before = self.checked().then(|| (owned(&r_hvd), owned(&a_hvd)));
        let (r, a) = (reborrow(&mut r_hvd), reborrow(&mut a_hvd));
        (self.decouple_s123)(ref_hvd, dis_hvd, r, a, stride, reg, egl);
        #[cfg(feature = "check_simd")]
        if let Some((mut r, mut a)) = before {
            let (wr, wa) = (muts(&mut r), muts(&mut a));
            scalar::decouple_s123(ref_hvd, dis_hvd, wr, wa, stride, reg, egl);
            assert!(
                same(&r_hvd, &r) && same(&a_hvd, &a),
                "check_simd: adm decouple_s123, {reg:?}"
            );
        }
    }

    /// The scale-0 CSF entry ([`super::CsfS0`]; a whole stage over `reg`).
    pub fn csf_s0(
        &self,
        src_hvd: [&[i16]; 3],
        flt: &mut [i32],
        centre: &mut [i32],
        stride: usize,
        reg: Region,
        i_rfactor: [u16; 3],
    ) {
        #[cfg(feature = "check_simd")]
        let before = self.checked().then(|| (flt.to_vec(), centre.to_vec()));
        (self.csf_s0)(src_hvd, flt, centre, stride, reg, i_rfactor);
        #[cfg(feature = "check_simd")]
        if let Some((mut f, mut c)) = before {
            scalar::csf_s0(src_hvd, &mut f, &mut c, stride, reg, i_rfactor);
            assert!(
                *flt == f[..] && *centre == c[..],
                "check_simd: adm csf_s0, {reg:?}"
            );
        }
    }

    /// The scale-1..3 CSF entry ([`super::CsfS123`]; a whole stage over `reg`).
    pub fn csf_s123(
        &self,
        src_hvd: [&[i32]; 3],
        flt: &mut [i32],
        centre: &mut [i32],
        stride: usize,
        reg: Region,
        i_rfactor: [u32; 3],
    ) {
        #[cfg(feature = "check_simd")]
        let before = self.checked().then(|| (flt.to_vec(), centre.to_vec()));
        (self.csf_s123)(src_hvd, flt, centre, stride, reg, i_rfactor);
        #[cfg(feature = "check_simd")]
        if let Some((mut f, mut c)) = before {
            scalar::csf_s123(src_hvd, &mut f, &mut c, stride, reg, i_rfactor);
            assert!(
                *flt == f[..] && *centre == c[..],
                "check_simd: adm csf_s123, {reg:?}"
            );
        }
    }

    /// The scale-0 denominator entry ([`super::CsfDenS0`]).
    pub fn csf_den_s0(
        &self,
        ref_hvd: [&[i16]; 3],
        stride: usize,
        reg: Region,
        shift: u32,
    ) -> [u64; 3] {
        let got = (self.csf_den_s0)(ref_hvd, stride, reg, shift);
        #[cfg(feature = "check_simd")]
        if self.checked() {
            let want = scalar::csf_den_s0(ref_hvd, stride, reg, shift);
            assert_eq!(got, want, "check_simd: adm csf_den_s0, {reg:?}");
        }
        got
    }

    /// The scale-1..3 denominator entry ([`super::CsfDenS123`]).
    pub fn csf_den_s123(
        &self,
        ref_hvd: [&[i32]; 3],
        stride: usize,
        reg: Region,
        scale: usize,
        shift_cub: u32,
        shift_accum: u32,
    ) -> [u64; 3] {
        let got = (self.csf_den_s123)(ref_hvd, stride, reg, scale, shift_cub, shift_accum);
        #[cfg(feature = "check_simd")]
        if self.checked() {
            let want = scalar::csf_den_s123(ref_hvd, stride, reg, scale, shift_cub, shift_accum);
            assert_eq!(
                got, want,
                "check_simd: adm csf_den_s123, {reg:?} scale {scale}"
            );
        }
        got
    }

    pub(super) fn dwt_s0_vertical<S: DwtS0Sample>(
        &self,
        rows: [&[S]; 4],
        bpc: u32,
        lo: &mut [i16],
        hi: &mut [i16],
    ) {
        (S::vertical(self))(rows, bpc, lo, hi);
        #[cfg(feature = "check_simd")]
        if self.checked() {
            check_rows("dwt_s0_vertical", lo, hi, |wl, wh| {
                scalar::dwt_s0_vertical_both(rows, bpc, wl, wh)
            });
        }
    }

    pub(super) fn dwt_s0_horizontal(
        &self,
        tmp: &[i16],
        ind_x: &[[usize; 4]],
        lo: &mut [i16],
        hi: &mut [i16],
    ) {
        (self.dwt_s0_horizontal)(tmp, ind_x, lo, hi);
        #[cfg(feature = "check_simd")]
        if self.checked() {
            check_rows("dwt_s0_horizontal", lo, hi, |wl, wh| {
                scalar::dwt_s0_horizontal(tmp, ind_x, wl, wh)
            });
        }
    }

    pub(super) fn dwt_s123_vertical<S: DwtS123Sample>(
        &self,
        rows: [&[S]; 4],
        scale: usize,
        lo: &mut [i32],
        hi: &mut [i32],
    ) {
        (S::vertical(self))(rows, scale, lo, hi);
        #[cfg(feature = "check_simd")]
        if self.checked() {
            check_rows("dwt_s123_vertical", lo, hi, |wl, wh| {
                scalar::dwt_s123_vertical(rows, scale, wl, wh)
            });
        }
    }

    pub(super) fn dwt_s123_horizontal(
        &self,
        tmp: &[i32],
        ind_x: &[[usize; 4]],
        scale: usize,
        lo: &mut [i32],
        hi: &mut [i32],
    ) {
        (self.dwt_s123_horizontal)(tmp, ind_x, scale, lo, hi);
        #[cfg(feature = "check_simd")]
        if self.checked() {
            check_rows("dwt_s123_horizontal", lo, hi, |wl, wh| {
                scalar::dwt_s123_horizontal(tmp, ind_x, scale, wl, wh)
            });
        }
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn cm_s0_interior(
        &self,
        x_hvd: [&[i16]; 3],
        flt: &[i32],
        centre: &[i32],
        rows: (usize, usize, usize),
        cols: Range<usize>,
        i_rfactor: [u16; 3],
        cub: [u32; 3],
        cub_add: [i64; 3],
    ) -> [i64; 3] {
        let (x, f, c) = (x_hvd, flt, centre);
        let got = (self.cm_s0_interior)(x, f, c, rows, cols.clone(), i_rfactor, cub, cub_add);
        #[cfg(feature = "check_simd")]
        if self.checked() {
            let want = scalar::cm_s0_interior(x, f, c, rows, cols.clone(), i_rfactor, cub, cub_add);
            assert_eq!(
                got, want,
                "check_simd: adm cm_s0_interior, {rows:?} {cols:?}"
            );
        }
        got
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn cm_s123_interior(
        &self,
        x_hvd: [&[i32]; 3],
        flt: &[i32],
        centre: &[i32],
        rows: (usize, usize, usize),
        cols: Range<usize>,
        rfactor: [u32; 3],
        shift_cub: u32,
    ) -> [i64; 3] {
        let (x, f, c) = (x_hvd, flt, centre);
        let got = (self.cm_s123_interior)(x, f, c, rows, cols.clone(), rfactor, shift_cub);
        #[cfg(feature = "check_simd")]
        if self.checked() {
            let want = scalar::cm_s123_interior(x, f, c, rows, cols.clone(), rfactor, shift_cub);
            assert_eq!(
                got, want,
                "check_simd: adm cm_s123_interior, {rows:?} {cols:?}"
            );
        }
        got
    }

    /// Whether `check_simd` recomputes this table's calls with the scalar kernels.
    #[cfg(feature = "check_simd")]
    fn checked(&self) -> bool {
        self.level > CpuLevel::Scalar
    }
}

/// Shorter-lived mutable borrows of three bands, to pass them on and keep them.
fn reborrow<'a, T>(t: &'a mut [&mut [T]; 3]) -> [&'a mut [T]; 3] {
    let [a, b, c] = t;
    [a, b, c]
}

/// Copies of three bands (the state a checked entry starts from).
#[cfg(feature = "check_simd")]
fn owned<T: Clone>(t: &[&mut [T]; 3]) -> [Vec<T>; 3] {
    [t[0].to_vec(), t[1].to_vec(), t[2].to_vec()]
}

#[cfg(feature = "check_simd")]
fn muts<T>(t: &mut [Vec<T>; 3]) -> [&mut [T]; 3] {
    let [a, b, c] = t;
    [a, b, c]
}

#[cfg(feature = "check_simd")]
fn same<T: PartialEq>(got: &[&mut [T]; 3], want: &[Vec<T>; 3]) -> bool {
    got.iter().zip(want).all(|(g, w)| **g == w[..])
}

/// Asserts that a row kernel's outputs `lo`, `hi` equal what `scalar` writes into copies of them.
#[cfg(feature = "check_simd")]
fn check_rows<T: Clone + PartialEq>(
    what: &str,
    lo: &[T],
    hi: &[T],
    scalar: impl FnOnce(&mut [T], &mut [T]),
) {
    let (mut wl, mut wh) = (lo.to_vec(), hi.to_vec());
    scalar(&mut wl, &mut wh);
    assert!(
        *lo == wl[..] && *hi == wh[..],
        "check_simd: adm {what}, {} outputs",
        lo.len()
    );
}
