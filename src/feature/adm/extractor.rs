//! One integer ADM instance ([`Adm`]): the per-frame walk over the four scales (DWT, decouple,
//! denominator, DLM and AIM masking, pooling) through the kernel table and the scratch it owns.

use super::plan::{muts, Bufs16, Bufs32, Quad, RefBands, RefKey, ScalePlan, SharedBands, Strip};
use super::scalar::{self, CmShiftsS0};
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
    fn scale0(&mut self, reference: &Plane<'_>, distorted: &Plane<'_>) -> (f32, f32, f32) {
        let pl = self.plan[0];
        let prm = self.params;
        let k = &self.kernels;
        let (ind_y, ind_x) = (&mut self.ind_y[..pl.h], &mut self.ind_x[..pl.w]);
        scalar::dwt_indices(pl.in_h, ind_y);
        scalar::dwt_indices(pl.in_w, ind_x);
        let b = &mut self.b16;
        let r = &mut self.own_ref;
        for (plane, out) in [(reference, &mut r.s0), (distorted, &mut b.dis)] {
            Self::dwt_s0(
                k,
                plane,
                self.bpc,
                ind_y,
                ind_x,
                &mut b.tmp_lo,
                &mut b.tmp_hi,
                out,
                b.stride,
                prm.skip_scale0,
                self.isa,
            );
        }
        if prm.skip_scale0 {
            return SKIPPED_SCALE0;
        }
        let st = b.stride;
        let den = den_s0(k, &pl, prm.noise_weight, r.s0.hvd(), st);
        joint_s0(
            k,
            &pl,
            &prm,
            self.i_rfactor_s0,
            self.isa,
            r.s0.hvd(),
            den,
            b,
        )
    }

    /// Scale 1, 2 or 3: DWT of the previous approximation bands, decouple, denominator, DLM and
    /// AIM. Returns `(num, den, aim_num)` of the scale.
    fn scale123(&mut self, s: usize) -> (f32, f32, f32) {
        let pl = self.plan[s];
        let prm = self.params;
        let k = &self.kernels;
        let (ind_y, ind_x) = (&mut self.ind_y[..pl.h], &mut self.ind_x[..pl.w]);
        scalar::dwt_indices(pl.in_h, ind_y);
        scalar::dwt_indices(pl.in_w, ind_x);
        let b16 = &self.b16;
        let b = &mut self.b32;
        let r = &mut self.own_ref;
        let st = b.stride;
        let sides = [
            (&r.s0.a, &mut r.s123, &mut r.prev_a),
            (&b16.dis.a, &mut b.dis, &mut b.prev_a_dis),
        ];
        for (a0, out, prev_a) in sides {
            let (lo, hi) = (&mut b.tmp_lo, &mut b.tmp_hi);
            dwt_level(
                k, a0, b16.stride, &pl, s, ind_y, ind_x, lo, hi, out, prev_a, st,
            );
        }
        let den = den_s123(k, &pl, s, prm.noise_weight, r.s123.hvd(), st);
        let irf = self.i_rfactor_s123[s - 1];
        joint_s123(k, &pl, s, &prm, irf, r.s123.hvd(), den, b)
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
        let b16 = &mut self.b16;
        if s == 0 {
            let (lo, hi) = (&mut b16.tmp_lo, &mut b16.tmp_hi);
            let (bpc, skip, st) = (self.bpc, prm.skip_scale0, b16.stride);
            let out = &mut b16.dis;
            Self::dwt_s0(
                k, distorted, bpc, ind_y, ind_x, lo, hi, out, st, skip, self.isa,
            );
            if skip {
                return SKIPPED_SCALE0;
            }
            let den = r.den[0];
            return joint_s0(
                k,
                &pl,
                &prm,
                self.i_rfactor_s0,
                self.isa,
                r.s0.hvd(),
                den,
                b16,
            );
        }
        let b = &mut self.b32;
        let st = b.stride;
        let (lo, hi) = (&mut b.tmp_lo, &mut b.tmp_hi);
        let (out, prev_a) = (&mut b.dis, &mut b.prev_a_dis);
        dwt_level(
            k, &b16.dis.a, b16.stride, &pl, s, ind_y, ind_x, lo, hi, out, prev_a, st,
        );
        let irf = self.i_rfactor_s123[s - 1];
        let ref_hvd = r.s123[s - 1].hvd();
        joint_s123(k, &pl, s, &prm, irf, ref_hvd, r.den[s], b)
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

/// Scale 0's joint terms: decouple `b.dis` against the reference's detail bands, then DLM and
/// AIM masking, strip by strip ([`Strip`]: the masking's row sums are added per row, so the
/// strips' sums are the whole band's). Returns `(num, den, aim_num)`, `den` (the denominator,
/// computed or shared) passed through.
#[allow(clippy::too_many_arguments)]
fn joint_s0(
    k: &Kernels,
    pl: &ScalePlan,
    prm: &AdmParams,
    irf: [u16; 3],
    isa: LibvmafIsa,
    ref_hvd: [&[i16]; 3],
    den: f32,
    b: &mut Bufs16,
) -> (f32, f32, f32) {
    let st = b.stride;
    let shifts = CmShiftsS0::new(pl.w, pl.h, isa);
    let (dlm, aim) = mask_strips(pl, prm.skip_aim, |strip, aim| {
        if !aim && strip.has_decouple_rows() {
            let dis_hvd = b.dis.hvd();
            k.decouple_s0(
                ref_hvd.map(|x| strip.at_base(x, st)),
                dis_hvd.map(|x| strip.at_base(x, st)),
                muts(&mut b.r),
                muts(&mut b.a),
                st,
                strip.reg,
                prm.enhn_gain_limit,
            );
        }
        b.csf_cm(k, aim, pl, strip, irf, shifts)
    });
    let num = scalar::cm_pool_s0(dlm, shifts, pl.w, pl.h, prm.noise_weight);
    let aim = if prm.skip_aim {
        0.0
    } else {
        scalar::cm_pool_s0(aim, shifts, pl.w, pl.h, 0.0)
    };
    (num, den, aim)
}

/// Scale `s`'s (1..3) joint terms, as [`joint_s0`].
#[allow(clippy::too_many_arguments)]
fn joint_s123(
    k: &Kernels,
    pl: &ScalePlan,
    s: usize,
    prm: &AdmParams,
    irf: [u32; 3],
    ref_hvd: [&[i32]; 3],
    den: f32,
    b: &mut Bufs32,
) -> (f32, f32, f32) {
    let st = b.stride;
    let shifts = scalar::cm_s123_shifts(pl.w, pl.h);
    let (dlm, aim) = mask_strips(pl, prm.skip_aim, |strip, aim| {
        if !aim && strip.has_decouple_rows() {
            let dis_hvd = b.dis.hvd();
            k.decouple_s123(
                ref_hvd.map(|x| strip.at_base(x, st)),
                dis_hvd.map(|x| strip.at_base(x, st)),
                muts(&mut b.r),
                muts(&mut b.a),
                st,
                strip.reg,
                prm.enhn_gain_limit,
            );
        }
        b.csf_cm(k, aim, pl, strip, irf, shifts)
    });
    let num = scalar::cm_pool_s123(dlm, s, shifts, pl.w, pl.h, prm.noise_weight);
    let aim = if prm.skip_aim {
        0.0
    } else {
        scalar::cm_pool_s123(aim, s, shifts, pl.w, pl.h, 0.0)
    };
    (num, den, aim)
}

/// The DLM and AIM masking sums of a band (the AIM's zero when skipped), strip by strip:
/// `strip_sums(strip, aim)` masks one strip, and decouples it first on its DLM call, which comes
/// first. The per-band sums add wrapping, as the per-row sums within a strip do.
fn mask_strips(
    pl: &ScalePlan,
    skip_aim: bool,
    mut strip_sums: impl FnMut(&Strip, bool) -> [i64; 3],
) -> ([i64; 3], [i64; 3]) {
    let add = |acc: &mut [i64; 3], part: [i64; 3]| {
        for (a, p) in acc.iter_mut().zip(part) {
            *a = a.wrapping_add(p);
        }
    };
    let (mut dlm, mut aim) = ([0i64; 3], [0i64; 3]);
    for strip in Strip::all(pl.h, pl.reg_dec) {
        add(&mut dlm, strip_sums(&strip, false));
        if !skip_aim {
            add(&mut aim, strip_sums(&strip, true));
        }
    }
    (dlm, aim)
}

/// One side's scale-`s` (1..3) DWT level into `out`: from scale 0's approximation band `a0`
/// (rows `a0_stride` apart) at scale 1, else from the previous level's, which moves to its
/// ping-pong partner `prev_a` first (libvmaf filters it in place).
#[allow(clippy::too_many_arguments)]
fn dwt_level(
    k: &Kernels,
    a0: &[i16],
    a0_stride: usize,
    pl: &ScalePlan,
    s: usize,
    ind_y: &[[usize; 4]],
    ind_x: &[[usize; 4]],
    tmp_lo: &mut [i32],
    tmp_hi: &mut [i32],
    out: &mut Quad<i32>,
    prev_a: &mut Vec<i32>,
    stride: usize,
) {
    if s == 1 {
        dwt_s123(
            k, a0, a0_stride, pl, s, ind_y, ind_x, tmp_lo, tmp_hi, out, stride,
        );
    } else {
        std::mem::swap(&mut out.a, prev_a);
        dwt_s123(
            k, prev_a, stride, pl, s, ind_y, ind_x, tmp_lo, tmp_hi, out, stride,
        );
    }
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
