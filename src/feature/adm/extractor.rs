//! One integer ADM instance ([`Adm`]): the per-frame walk over the four scales (DWT, decouple,
//! denominator, DLM and AIM masking, pooling) through the kernel table and the scratch it owns.

use std::num::Wrapping;
use std::ops::{Add, Range};

use super::plan::{muts, Bufs16, Bufs32, Quad, RefBands, RefKey, ScalePlan, SharedBands, Strip};
use super::scalar::{self, CmShiftsS0, QuadMut};
use super::tables::{DEFAULT_NORM_VIEW_DIST, DEFAULT_REF_DISPLAY_HEIGHT};
use super::{AdmParams, AdmScores, DwtS123Sample, Kernels};
use crate::cpu::{cpu_level, CpuLevel};
use crate::error::{Error, Result};
use crate::feature::SharedReference;
use crate::fidelity::LibvmafIsa;
use crate::picture::{Plane, Samples};

/// One integer ADM instance: parameters, per-scale plan, kernels and all scratch, allocated once.
#[derive(Debug)]
pub struct Adm {
    params: AdmParams,
    /// Whose scale-0 DWT last column to compute.
    isa: LibvmafIsa,
    width: usize,
    height: usize,
    bpc: u32,
    i_rfactor_s0: [u16; 3],
    i_rfactor_s123: [[u32; 3]; 3],
    plan: [ScalePlan; 4],
    ind_y: Vec<[usize; 4]>,
    ind_x: Vec<[usize; 4]>,
    /// The reference's bands when computed here (not shared, [`Adm::compute`]).
    own_ref: RefBands,
    b16: Bufs16,
    b32: Bufs32,
    /// The kernels of [`cpu_level`] (or of [`Adm::with_cpu_level`]'s level).
    kernels: Kernels,
}

impl Adm {
    /// Allocates an instance for `width x height` pictures of `bpc` bits (8..=16) computing what
    /// libvmaf's `isa` kernels compute.
    pub fn new(
        width: usize,
        height: usize,
        bpc: u32,
        params: AdmParams,
        isa: LibvmafIsa,
    ) -> Result<Self> {
        if !(8..=16).contains(&bpc) {
            return Err(Error::Unsupported(format!("adm: bit depth {bpc}")));
        }
        if width < 16 || height < 16 {
            return Err(Error::Unsupported(format!(
                "adm: picture size {width}x{height} (minimum 16x16)"
            )));
        }
        // libvmaf: "current implementation is limited by the 16-bit data pipeline, thus cannot
        // handle an angular frequency smaller than 1080p * 3H".
        if params.norm_view_dist * (params.ref_display_height as f64)
            < DEFAULT_NORM_VIEW_DIST * DEFAULT_REF_DISPLAY_HEIGHT as f64
        {
            return Err(Error::InvalidOption(format!(
                "adm: adm_norm_view_dist * adm_ref_display_height = {} * {} is below 3 * 1080, \
                 which libvmaf's integer ADM does not support",
                params.norm_view_dist, params.ref_display_height
            )));
        }
        let plan = ScalePlan::scales(width, height, &params);
        Ok(Adm {
            params,
            isa,
            width,
            height,
            bpc,
            i_rfactor_s0: params.i_rfactor_s0(),
            i_rfactor_s123: [1, 2, 3].map(|s| params.i_rfactor_s123(s)),
            ind_y: vec![[0; 4]; plan[0].h],
            ind_x: vec![[0; 4]; plan[0].w],
            own_ref: RefBands::new(&plan[0], &plan[1]),
            b16: Bufs16::new(width, &plan[0]),
            b32: Bufs32::new(&plan[0], &plan[1]),
            plan,
            kernels: Kernels::for_level(cpu_level()),
        })
    }

    /// Uses the kernels of `level` (at most what this machine runs) instead of
    /// [`cpu_level`]'s.
    pub fn with_cpu_level(mut self, level: CpuLevel) -> Self {
        self.kernels = Kernels::for_level(level.min(cpu_level()));
        self
    }

    /// The parameters in use.
    pub fn params(&self) -> &AdmParams {
        &self.params
    }

    fn check_plane(&self, p: &Plane<'_>, what: &str) -> Result<()> {
        if p.width != self.width || p.height != self.height {
            return Err(Error::Mismatch(format!(
                "adm: {what} luma is {}x{}, expected {}x{}",
                p.width, p.height, self.width, self.height
            )));
        }
        let sixteen = matches!(p.samples, Samples::U16(_));
        if sixteen != (self.bpc > 8) {
            return Err(Error::Mismatch(format!(
                "adm: {what} has {} samples for a {}-bit stream",
                if sixteen { "16-bit" } else { "8-bit" },
                self.bpc
            )));
        }
        Ok(())
    }

    /// Scale-0 DWT of one plane into `out` (only the approximation band when `lo_only`).
    #[allow(clippy::too_many_arguments)]
    fn dwt_s0(
        k: &Kernels,
        plane: &Plane<'_>,
        bpc: u32,
        ind_y: &[[usize; 4]],
        ind_x: &[[usize; 4]],
        tmp_lo: &mut [i16],
        tmp_hi: &mut [i16],
        out: &mut Quad<i16>,
        stride: usize,
        lo_only: bool,
        isa: LibvmafIsa,
    ) {
        let (w, ps) = (plane.width, plane.stride);
        macro_rules! run {
            ($src:expr) => {
                if lo_only {
                    scalar::dwt2_s0_lo($src, ps, w, bpc, ind_y, ind_x, tmp_lo, &mut out.a, stride)
                } else {
                    let q = out.as_mut();
                    k.dwt2_s0(
                        $src, ps, w, bpc, ind_y, ind_x, tmp_lo, tmp_hi, q, stride, isa,
                    )
                }
            };
        }
        match plane.samples {
            Samples::U8(s) => run!(s),
            Samples::U16(s) => run!(s),
        }
    }

    /// Scale 0: DWT of the pictures, then (unless skipped) decouple, denominator, DLM and AIM.
    /// Returns `(num, den, aim_num)` of the scale.
    ///
    /// The DWT runs strip by strip ([`Strip`]) ahead of the stages that read it: the detail bands
    /// of both pictures live only in the first rows of their buffers, one strip at a time, so
    /// they are still in the cache when the denominator and the decoupling read them; only the
    /// approximation bands, which scale 1 reads, are written whole. (Whole detail bands of a
    /// 1080p picture are 6 MiB a picture, written and read back from memory.)
    fn scale0(&mut self, reference: &Plane<'_>, distorted: &Plane<'_>) -> (f32, f32, f32) {
        let pl = self.plan[0];
        let prm = self.params;
        let k = &self.kernels;
        let (ind_y, ind_x) = (&mut self.ind_y[..pl.h], &mut self.ind_x[..pl.w]);
        scalar::dwt_indices(pl.in_h, ind_y);
        scalar::dwt_indices(pl.in_w, ind_x);
        let (ind_y, ind_x) = (&*ind_y, &*ind_x);
        let (b, r, bpc, isa) = (&mut self.b16, &mut self.own_ref, self.bpc, self.isa);
        let st = b.stride;
        if prm.skip_scale0 {
            for (plane, out) in [(reference, &mut r.s0), (distorted, &mut b.dis)] {
                let (lo, hi) = (&mut b.tmp_lo, &mut b.tmp_hi);
                Self::dwt_s0(k, plane, bpc, ind_y, ind_x, lo, hi, out, st, true, isa);
            }
            return SKIPPED_SCALE0;
        }
        let area = pl.reg_pool.area();
        let shift = scalar::den_s0_shift(area);
        let mut den_acc = [0u64; 3];
        // Band rows `held` are in the detail buffers, from row 0.
        let mut held = 0..0;
        let (num, aim) = joint_s0(k, &pl, &prm, self.i_rfactor_s0, isa, b, |strip, b| {
            let rows = strip.buffered(pl.h);
            for (plane, out) in [(reference, &mut r.s0), (distorted, &mut b.dis)] {
                let (lo, hi) = (&mut b.tmp_lo, &mut b.tmp_hi);
                dwt_s0_strip(
                    k, plane, bpc, ind_y, ind_x, lo, hi, out, st, isa, &held, &rows,
                );
            }
            held = rows;
            if let Some(reg) = strip.pool_part(pl.reg_pool) {
                add_wrapping(&mut den_acc, k.csf_den_s0(r.s0.hvd(), st, reg, shift));
            }
            decouple_strip_s0(k, strip, r.s0.hvd(), held.start, b, prm.enhn_gain_limit);
        });
        let den = scalar::csf_den_pool_s0(den_acc, shift, pl.rfactor, area, prm.noise_weight);
        (num, den, aim)
    }

    /// Scale 1, 2 or 3: DWT of the previous approximation bands, decouple, denominator, DLM and
    /// AIM, strip by strip as [`Adm::scale0`]. Returns `(num, den, aim_num)` of the scale.
    fn scale123(&mut self, s: usize) -> (f32, f32, f32) {
        let pl = self.plan[s];
        let prm = self.params;
        let k = &self.kernels;
        let (ind_y, ind_x) = (&mut self.ind_y[..pl.h], &mut self.ind_x[..pl.w]);
        scalar::dwt_indices(pl.in_h, ind_y);
        scalar::dwt_indices(pl.in_w, ind_x);
        let (ind_y, ind_x) = (&*ind_y, &*ind_x);
        let (b16, b, r) = (&self.b16, &mut self.b32, &mut self.own_ref);
        let st = b.stride;
        if s > 1 {
            // This level reads the previous one's approximation band (libvmaf filters in place).
            std::mem::swap(&mut r.s123.a, &mut r.prev_a);
            std::mem::swap(&mut b.dis.a, &mut b.prev_a_dis);
        }
        let area = pl.reg_pool.area();
        let shifts = scalar::den_s123_shifts(pl.reg_pool);
        let mut den_acc = [0u64; 3];
        // Band rows `held` are in the detail buffers, from row 0.
        let mut held = 0..0;
        let irf = self.i_rfactor_s123[s - 1];
        let (num, aim) = joint_s123(k, &pl, s, &prm, irf, b, |strip, b| {
            let rows = strip.buffered(pl.h);
            let (lo, hi) = (&mut b.tmp_lo, &mut b.tmp_hi);
            let strip_dwt = StripDwt {
                pl: &pl,
                s,
                ind_y,
                ind_x,
                held: &held,
                rows: &rows,
            };
            if s == 1 {
                let st16 = b16.stride;
                dwt_s123_strip(k, &r.s0.a, st16, lo, hi, &mut r.s123, st, strip_dwt);
                dwt_s123_strip(k, &b16.dis.a, st16, lo, hi, &mut b.dis, st, strip_dwt);
            } else {
                dwt_s123_strip(k, &r.prev_a, st, lo, hi, &mut r.s123, st, strip_dwt);
                dwt_s123_strip(k, &b.prev_a_dis, st, lo, hi, &mut b.dis, st, strip_dwt);
            }
            held = rows;
            if let Some(reg) = strip.pool_part(pl.reg_pool) {
                let part = k.csf_den_s123(r.s123.hvd(), st, reg, s, shifts.0, shifts.1);
                add_wrapping(&mut den_acc, part);
            }
            decouple_strip_s123(k, strip, r.s123.hvd(), held.start, b, prm.enhn_gain_limit);
        });
        let den = scalar::csf_den_pool_s123(den_acc, s, shifts, pl.rfactor, area, prm.noise_weight);
        (num, den, aim)
    }

    /// Computes one frame's ADM values from the reference and distorted luma planes.
    pub fn compute(&mut self, reference: &Plane<'_>, distorted: &Plane<'_>) -> Result<AdmScores> {
        self.check_plane(reference, "reference")?;
        self.check_plane(distorted, "distorted")?;
        let mut scales = [(0f32, 0f32, 0f32); 4];
        for (s, out) in scales.iter_mut().enumerate() {
            *out = if s == 0 {
                self.scale0(reference, distorted)
            } else {
                self.scale123(s)
            };
        }
        Ok(self.scores(scales))
    }

    fn scores(&self, scales: [(f32, f32, f32); 4]) -> AdmScores {
        AdmScores::from_scales(scales, self.width, self.height, &self.params)
    }

    /// What this instance's reference side depends on.
    fn ref_key(&self) -> RefKey {
        RefKey {
            width: self.width,
            height: self.height,
            bpc: self.bpc,
            isa: self.isa,
            params: self.params,
        }
    }

    /// Like [`Adm::compute`], with the reference side (its bands at every scale and the
    /// denominators) taken from `shared`, which the first instance to get there for this frame
    /// computes ([`SharedReference::get`]); only the distorted side and the joint terms are
    /// computed here. The values are [`Adm::compute`]'s.
    pub fn compute_shared(
        &mut self,
        reference: &Plane<'_>,
        distorted: &Plane<'_>,
        shared: &SharedReference,
    ) -> Result<AdmScores> {
        self.check_plane(reference, "reference")?;
        self.check_plane(distorted, "distorted")?;
        let (key, s0, s1) = (self.ref_key(), self.plan[0], self.plan[1]);
        let bands = shared.get(
            || SharedBands::new(key, &s0, &s1),
            |r| {
                self.fill_reference(reference, r);
                Ok(())
            },
        )?;
        if bands.key != key {
            return Err(Error::Internal(
                "adm: a shared reference state computed with other options".into(),
            ));
        }
        let mut scales = [(0f32, 0f32, 0f32); 4];
        for (s, out) in scales.iter_mut().enumerate() {
            *out = self.scale_shared(s, distorted, &bands);
        }
        Ok(self.scores(scales))
    }

    /// The reference side of every scale into `r` (with this instance's scratch).
    fn fill_reference(&mut self, reference: &Plane<'_>, r: &mut SharedBands) {
        let (prm, k) = (self.params, &self.kernels);
        let (b16, b32) = (&mut self.b16, &mut self.b32);
        for s in 0..4 {
            let pl = self.plan[s];
            let (ind_y, ind_x) = (&mut self.ind_y[..pl.h], &mut self.ind_x[..pl.w]);
            scalar::dwt_indices(pl.in_h, ind_y);
            scalar::dwt_indices(pl.in_w, ind_x);
            if s == 0 {
                let (lo, hi) = (&mut b16.tmp_lo, &mut b16.tmp_hi);
                let (bpc, skip) = (self.bpc, prm.skip_scale0);
                Self::dwt_s0(
                    k, reference, bpc, ind_y, ind_x, lo, hi, &mut r.s0, b16.stride, skip, self.isa,
                );
                r.den[0] = if skip {
                    SKIPPED_SCALE0.1
                } else {
                    den_s0(k, &pl, prm.noise_weight, r.s0.hvd(), b16.stride)
                };
                continue;
            }
            let st = b32.stride;
            let (done, rest) = r.s123.split_at_mut(s - 1);
            let out = &mut rest[0];
            let (lo, hi) = (&mut b32.tmp_lo, &mut b32.tmp_hi);
            match done.last() {
                None => dwt_s123(
                    k, &r.s0.a, b16.stride, &pl, s, ind_y, ind_x, lo, hi, out, st,
                ),
                Some(prev) => dwt_s123(k, &prev.a, st, &pl, s, ind_y, ind_x, lo, hi, out, st),
            }
            r.den[s] = den_s123(k, &pl, s, prm.noise_weight, out.hvd(), st);
        }
    }

    /// One scale of [`Adm::compute_shared`]: the distorted DWT (scale 1..3 from the previous
    /// approximation band), then the joint terms against the shared reference bands.
    fn scale_shared(
        &mut self,
        s: usize,
        distorted: &Plane<'_>,
        r: &SharedBands,
    ) -> (f32, f32, f32) {
        let pl = self.plan[s];
        let prm = self.params;
        let k = &self.kernels;
        let (ind_y, ind_x) = (&mut self.ind_y[..pl.h], &mut self.ind_x[..pl.w]);
        scalar::dwt_indices(pl.in_h, ind_y);
        scalar::dwt_indices(pl.in_w, ind_x);
        let (ind_y, ind_x) = (&*ind_y, &*ind_x);
        let (b16, isa) = (&mut self.b16, self.isa);
        let egl = prm.enhn_gain_limit;
        // Band rows `held` are in the distorted detail buffers, from row 0 (as in `scale0`).
        let mut held = 0..0;
        if s == 0 {
            let (bpc, st) = (self.bpc, b16.stride);
            if prm.skip_scale0 {
                let (lo, hi, out) = (&mut b16.tmp_lo, &mut b16.tmp_hi, &mut b16.dis);
                Self::dwt_s0(k, distorted, bpc, ind_y, ind_x, lo, hi, out, st, true, isa);
                return SKIPPED_SCALE0;
            }
            let (irf, ref_hvd) = (self.i_rfactor_s0, r.s0.hvd());
            let (num, aim) = joint_s0(k, &pl, &prm, irf, isa, b16, |strip, b| {
                let rows = strip.buffered(pl.h);
                let (lo, hi, out) = (&mut b.tmp_lo, &mut b.tmp_hi, &mut b.dis);
                dwt_s0_strip(
                    k, distorted, bpc, ind_y, ind_x, lo, hi, out, st, isa, &held, &rows,
                );
                held = rows;
                let ref_at = ref_hvd.map(|x| &x[held.start * st..]);
                decouple_strip_s0(k, strip, ref_at, held.start, b, egl);
            });
            return (num, r.den[0], aim);
        }
        let b = &mut self.b32;
        let st = b.stride;
        if s > 1 {
            std::mem::swap(&mut b.dis.a, &mut b.prev_a_dis);
        }
        let irf = self.i_rfactor_s123[s - 1];
        let ref_hvd = r.s123[s - 1].hvd();
        let (num, aim) = joint_s123(k, &pl, s, &prm, irf, b, |strip, b| {
            let rows = strip.buffered(pl.h);
            let (lo, hi) = (&mut b.tmp_lo, &mut b.tmp_hi);
            let strip_dwt = StripDwt {
                pl: &pl,
                s,
                ind_y,
                ind_x,
                held: &held,
                rows: &rows,
            };
            if s == 1 {
                let st16 = b16.stride;
                dwt_s123_strip(k, &b16.dis.a, st16, lo, hi, &mut b.dis, st, strip_dwt);
            } else {
                dwt_s123_strip(k, &b.prev_a_dis, st, lo, hi, &mut b.dis, st, strip_dwt);
            }
            held = rows;
            let ref_at = ref_hvd.map(|x| &x[held.start * st..]);
            decouple_strip_s123(k, strip, ref_at, held.start, b, egl);
        });
        (num, r.den[s], aim)
    }
}

/// Scale 0's `(num, den, aim_num)` when `adm_skip_scale0` is set: libvmaf "skip[s] scale 0 by
/// downsampling by 2 using low-pass filters in DWT2", with a denominator of 1e-10 to avoid a
/// division by zero.
const SKIPPED_SCALE0: (f32, f32, f32) = (0.0, 1e-10, 0.0);

/// Scale 0's denominator from the reference's detail bands (rows `stride` apart).
fn den_s0(
    k: &Kernels,
    pl: &ScalePlan,
    noise_weight: f64,
    ref_hvd: [&[i16]; 3],
    stride: usize,
) -> f32 {
    let area = pl.reg_pool.area();
    let shift = scalar::den_s0_shift(area);
    let acc = k.csf_den_s0(ref_hvd, stride, pl.reg_pool, shift);
    scalar::csf_den_pool_s0(acc, shift, pl.rfactor, area, noise_weight)
}

/// Scale `s`'s (1..3) denominator from the reference's detail bands (rows `stride` apart).
fn den_s123(
    k: &Kernels,
    pl: &ScalePlan,
    s: usize,
    noise_weight: f64,
    ref_hvd: [&[i32]; 3],
    stride: usize,
) -> f32 {
    let area = pl.reg_pool.area();
    let shifts = scalar::den_s123_shifts(pl.reg_pool);
    let acc = k.csf_den_s123(ref_hvd, stride, pl.reg_pool, s, shifts.0, shifts.1);
    scalar::csf_den_pool_s123(acc, s, shifts, pl.rfactor, area, noise_weight)
}

/// Scale 0's joint terms: DLM and AIM masking, strip by strip ([`Strip`]: the masking's row sums
/// are added per row, so the strips' sums are the whole band's), each strip's decoupled signals
/// written into `b.r`, `b.a` first by `prepare` (on the strip's DLM call, which comes first).
/// Returns `(num, aim_num)`.
fn joint_s0(
    k: &Kernels,
    pl: &ScalePlan,
    prm: &AdmParams,
    irf: [u16; 3],
    isa: LibvmafIsa,
    b: &mut Bufs16,
    mut prepare: impl FnMut(&Strip, &mut Bufs16),
) -> (f32, f32) {
    let shifts = CmShiftsS0::new(pl.w, pl.h, isa);
    let (dlm, aim) = mask_strips(pl, prm.skip_aim, |strip, aim| {
        if !aim {
            prepare(strip, b);
        }
        b.csf_cm(k, aim, pl, strip, irf, shifts)
    });
    let num = scalar::cm_pool_s0(dlm, shifts, pl.w, pl.h, prm.noise_weight);
    let aim = if prm.skip_aim {
        0.0
    } else {
        scalar::cm_pool_s0(aim, shifts, pl.w, pl.h, 0.0)
    };
    (num, aim)
}

/// Decouples one strip of `b.dis`'s detail bands against the reference's into `b.r`, `b.a`:
/// `ref_hvd` from the strip's first band row (`strip.window.base`) on, `b.dis` holding band row
/// `held_from` at row 0 (rows `b.stride` apart).
fn decouple_strip_s0(
    k: &Kernels,
    strip: &Strip,
    ref_hvd: [&[i16]; 3],
    held_from: usize,
    b: &mut Bufs16,
    enhn_gain_limit: f64,
) {
    if !strip.has_decouple_rows() {
        return;
    }
    let (st, at) = (b.stride, (strip.window.base - held_from) * b.stride);
    k.decouple_s0(
        ref_hvd,
        b.dis.hvd().map(|x| &x[at..]),
        muts(&mut b.r),
        muts(&mut b.a),
        st,
        strip.reg,
        enhn_gain_limit,
    );
}

/// Scale-0 DWT of band rows `rows` of `plane` for a strip: the approximation band `out.a` at
/// those rows, the detail bands from row 0 (`rows.start` at row 0), where the rows already
/// `held` there (the previous strip's, its last rows overlapping this one's first) move up
/// instead of being computed again.
#[allow(clippy::too_many_arguments)]
fn dwt_s0_strip(
    k: &Kernels,
    plane: &Plane<'_>,
    bpc: u32,
    ind_y: &[[usize; 4]],
    ind_x: &[[usize; 4]],
    tmp_lo: &mut [i16],
    tmp_hi: &mut [i16],
    out: &mut Quad<i16>,
    stride: usize,
    isa: LibvmafIsa,
    held: &Range<usize>,
    rows: &Range<usize>,
) {
    let (from, q) = strip_quad(out, stride, held, rows);
    let (w, ps) = (plane.width, plane.stride);
    let iy = &ind_y[from..rows.end];
    match plane.samples {
        Samples::U8(s) => k.dwt2_s0(s, ps, w, bpc, iy, ind_x, tmp_lo, tmp_hi, q, stride, isa),
        Samples::U16(s) => k.dwt2_s0(s, ps, w, bpc, iy, ind_x, tmp_lo, tmp_hi, q, stride, isa),
    }
}

/// Scale `s`'s (1..3) joint terms, as [`joint_s0`].
#[allow(clippy::too_many_arguments)]
fn joint_s123(
    k: &Kernels,
    pl: &ScalePlan,
    s: usize,
    prm: &AdmParams,
    irf: [u32; 3],
    b: &mut Bufs32,
    mut prepare: impl FnMut(&Strip, &mut Bufs32),
) -> (f32, f32) {
    let shifts = scalar::cm_s123_shifts(pl.w, pl.h);
    let (dlm, aim) = mask_strips(pl, prm.skip_aim, |strip, aim| {
        if !aim {
            prepare(strip, b);
        }
        b.csf_cm(k, aim, pl, strip, irf, shifts)
    });
    let num = scalar::cm_pool_s123(dlm, s, shifts, pl.w, pl.h, prm.noise_weight);
    let aim = if prm.skip_aim {
        0.0
    } else {
        scalar::cm_pool_s123(aim, s, shifts, pl.w, pl.h, 0.0)
    };
    (num, aim)
}

/// [`decouple_strip_s0`] for scales 1..3.
fn decouple_strip_s123(
    k: &Kernels,
    strip: &Strip,
    ref_hvd: [&[i32]; 3],
    held_from: usize,
    b: &mut Bufs32,
    enhn_gain_limit: f64,
) {
    if !strip.has_decouple_rows() {
        return;
    }
    let (st, at) = (b.stride, (strip.window.base - held_from) * b.stride);
    k.decouple_s123(
        ref_hvd,
        b.dis.hvd().map(|x| &x[at..]),
        muts(&mut b.r),
        muts(&mut b.a),
        st,
        strip.reg,
        enhn_gain_limit,
    );
}

/// Adds `part` to `acc` per band, wrapping as libvmaf's sums do (the masking's and the
/// denominator's per-row sums add in any order).
fn add_wrapping<T: Copy>(acc: &mut [T; 3], part: [T; 3])
where
    Wrapping<T>: Add<Output = Wrapping<T>>,
{
    for (a, p) in acc.iter_mut().zip(part) {
        *a = (Wrapping(*a) + Wrapping(p)).0;
    }
}

/// Where a strip's DWT writes band rows `rows` (of which `held` are in the detail buffers from
/// row 0): the first row still to compute ([`keep_overlap`] moves the others up), and `out` from
/// that row on, the approximation band at its band row, the detail bands at its strip row.
fn strip_quad<'a, T: Copy>(
    out: &'a mut Quad<T>,
    stride: usize,
    held: &Range<usize>,
    rows: &Range<usize>,
) -> (usize, QuadMut<'a, T>) {
    let from = keep_overlap([&mut out.h, &mut out.v, &mut out.d], stride, held, rows);
    let at = (from - rows.start) * stride;
    let q = QuadMut {
        a: &mut out.a[from * stride..],
        h: &mut out.h[at..],
        v: &mut out.v[at..],
        d: &mut out.d[at..],
    };
    (from, q)
}

/// Moves the rows of `held` that a strip of band rows `rows` needs (the previous strip's last
/// rows, which overlap this one's first) to the top of the detail bands `hvd` (rows `stride`
/// apart, band row `held.start` at row 0); returns the first band row still to compute.
fn keep_overlap<T: Copy>(
    hvd: [&mut Vec<T>; 3],
    stride: usize,
    held: &Range<usize>,
    rows: &Range<usize>,
) -> usize {
    let kept = rows.start.max(held.start)..rows.end.min(held.end);
    if kept.start != rows.start || kept.is_empty() {
        return rows.start;
    }
    let src = (kept.start - held.start) * stride..(kept.end - held.start) * stride;
    for band in hvd {
        band.copy_within(src.clone(), 0);
    }
    kept.end
}

/// Where a strip's scale-1..3 DWT runs: the scale's plan and number, its row and column
/// indices, the band rows the detail buffers hold (`held`) and those the strip needs (`rows`).
#[derive(Clone, Copy)]
struct StripDwt<'a> {
    pl: &'a ScalePlan,
    s: usize,
    ind_y: &'a [[usize; 4]],
    ind_x: &'a [[usize; 4]],
    held: &'a Range<usize>,
    rows: &'a Range<usize>,
}

/// One side's scale-`s` (1..3) DWT of band rows `at.rows` for a strip, from the previous level's
/// approximation band `src` (rows `src_stride` apart): the approximation band `out.a` at those
/// rows, the detail bands from row 0, as [`dwt_s0_strip`].
#[allow(clippy::too_many_arguments)]
fn dwt_s123_strip<S: DwtS123Sample>(
    k: &Kernels,
    src: &[S],
    src_stride: usize,
    tmp_lo: &mut [i32],
    tmp_hi: &mut [i32],
    out: &mut Quad<i32>,
    stride: usize,
    at: StripDwt<'_>,
) {
    let StripDwt {
        pl,
        s,
        ind_y,
        ind_x,
        held,
        rows,
    } = at;
    let (from, q) = strip_quad(out, stride, held, rows);
    let iy = &ind_y[from..rows.end];
    k.dwt2_s123(
        src, src_stride, pl.in_w, s, iy, ind_x, tmp_lo, tmp_hi, q, stride,
    );
}

/// The DLM and AIM masking sums of a band (the AIM's zero when skipped), strip by strip:
/// `strip_sums(strip, aim)` masks one strip, and decouples it first on its DLM call, which comes
/// first. The per-band sums add wrapping, as the per-row sums within a strip do.
fn mask_strips(
    pl: &ScalePlan,
    skip_aim: bool,
    mut strip_sums: impl FnMut(&Strip, bool) -> [i64; 3],
) -> ([i64; 3], [i64; 3]) {
    let (mut dlm, mut aim) = ([0i64; 3], [0i64; 3]);
    for strip in Strip::all(pl.h, pl.reg_dec) {
        add_wrapping(&mut dlm, strip_sums(&strip, false));
        if !skip_aim {
            add_wrapping(&mut aim, strip_sums(&strip, true));
        }
    }
    (dlm, aim)
}

/// Scale-1..3 DWT of one approximation band (`src`, rows `src_stride` apart) into `out`.
#[allow(clippy::too_many_arguments)]
fn dwt_s123<S: DwtS123Sample>(
    k: &Kernels,
    src: &[S],
    src_stride: usize,
    pl: &ScalePlan,
    scale: usize,
    ind_y: &[[usize; 4]],
    ind_x: &[[usize; 4]],
    tmp_lo: &mut [i32],
    tmp_hi: &mut [i32],
    out: &mut Quad<i32>,
    stride: usize,
) {
    let q = out.as_mut();
    k.dwt2_s123(
        src, src_stride, pl.in_w, scale, ind_y, ind_x, tmp_lo, tmp_hi, q, stride,
    );
}
