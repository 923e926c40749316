//! ADM on the GPU: the DWT, decoupling, CSF and contrast masking of every scale (the kernels of
//! `kernels/adm.cu`), reduced to per-scale integer sums; the host pools them with the CPU's own
//! functions (`feature::adm::scalar`), so both backends share every constant.

use super::super::driver::{launch, DevBuf};
use super::super::kernels::{blocks, AdmCmArgs, AdmDwtArgs, AdmFinishArgs, BX};
use super::{
    packed_plane, Ctx, FrameIo, FrameMeta, Geometry, GpuDef, GpuPlan, Scratch, ScratchBufs,
};
use crate::engine::InstanceInfo;
use crate::error::{Error, Result};
use crate::feature::adm::scalar::{self as adm_scalar, CmShiftsS0, Region};
use crate::feature::adm::tables::{DEFAULT_NORM_VIEW_DIST, DEFAULT_REF_DISPLAY_HEIGHT};
use crate::feature::adm::AdmParams;
use crate::feature::options::OptValues;
use crate::fidelity::LibvmafIsa;
use cudarc::driver::sys;
use std::ops::Range;

/// ADM's entry in the CUDA registry.
pub(super) static GPU: GpuDef = GpuDef {
    extractor: &crate::feature::adm::DEF,
    create,
    supports: super::every_instance,
};

fn create(info: &InstanceInfo<'_>, geom: Geometry, offset: usize) -> Result<Box<dyn GpuPlan>> {
    Ok(Box::new(AdmPlan::new(
        info.opts,
        info.columns.clone(),
        offset,
        geom,
        info.libvmaf_isa,
    )?))
}

/// Scales computed.
const SCALES: usize = 4;
/// Sums per scale: CM numerator and AIM of the three bands (6), then the CSF denominators (3).
const QUANTITIES: usize = 9;
/// The CM/AIM part of [`QUANTITIES`].
const CM_QUANTITIES: usize = 6;

/// Bands, decoupled bands, per-row sums and the reciprocal table.
struct AdmScratch {
    /// band a of even scales ([0]) and odd scales ([1]): (reference, distorted), `i32`.
    band_a: [(DevBuf, DevBuf); 2],
    r: [DevBuf; 3],
    a: [DevBuf; 3],
    /// Per-row sums of every scale: [`QUANTITIES`] × band height, `u64`.
    rows: DevBuf,
    rows_off: [usize; SCALES],
    rows_len: usize,
    div: DevBuf,
}

impl ScratchBufs for AdmScratch {
    fn bytes(&self) -> usize {
        let bands: usize = self.band_a.iter().map(|(x, y)| x.bytes + y.bytes).sum();
        let dec: usize = self.r.iter().chain(self.a.iter()).map(|b| b.bytes).sum();
        bands + dec + self.rows.bytes + self.div.bytes
    }
}

/// Geometry and constants of one ADM scale, all computed by `feature::adm` (`AdmParams`,
/// `scalar::{region_pool, CmShiftsS0, den_s0_shift, ...}`), so the GPU uses the CPU's values.
#[derive(Debug, Clone, Copy)]
struct AdmScale {
    /// Input size (picture at scale 0, band a of the previous scale otherwise).
    in_w: usize,
    in_h: usize,
    /// Band size.
    w: usize,
    h: usize,
    /// Pooling region (CM and denominator).
    reg: Region,
    /// Scale 0: CM shifts.
    cm_s0: CmShiftsS0,
    /// Scales 1..3: CM `(shift_cub, shift_inner)`.
    cm_s123: (u32, u32),
    /// Scale 0: denominator row shift.
    den_s0: u32,
    /// Scales 1..3: denominator `(shift_cub, shift_accum)`.
    den_s123: (u32, u32),
    /// CSF factors (float) for h, v, d.
    rfactor: [f32; 3],
    /// Fixed-point CSF factors: scale 0 `i_rfactor` (u16 values), else Q32.
    i_rfactor: [u32; 3],
}

struct AdmPlan {
    cols: Range<usize>,
    offset: usize,
    params: AdmParams,
    isa: LibvmafIsa,
    scales: [AdmScale; SCALES],
}

impl AdmPlan {
    fn new(
        opts: &OptValues,
        cols: Range<usize>,
        offset: usize,
        g: Geometry,
        isa: LibvmafIsa,
    ) -> Result<Self> {
        let params = AdmParams::from_opts(opts);
        // Same checks (and messages) as the CPU extractor (feature::adm::Adm::new).
        if g.w < 16 || g.h < 16 {
            return Err(Error::Unsupported(format!(
                "adm: picture size {}x{} (minimum 16x16)",
                g.w, g.h
            )));
        }
        if params.norm_view_dist * (params.ref_display_height as f64)
            < DEFAULT_NORM_VIEW_DIST * DEFAULT_REF_DISPLAY_HEIGHT as f64
        {
            return Err(Error::InvalidOption(format!(
                "adm: adm_norm_view_dist * adm_ref_display_height = {} * {} is below 3 * 1080, \
                 which libvmaf's integer ADM does not support",
                params.norm_view_dist, params.ref_display_height
            )));
        }
        let (mut in_w, mut in_h) = (g.w, g.h);
        let mut scales = Vec::with_capacity(4);
        for s in 0..SCALES {
            let (w, h) = (in_w.div_ceil(2), in_h.div_ceil(2));
            let reg = adm_scalar::region_pool(w, h);
            scales.push(AdmScale {
                in_w,
                in_h,
                w,
                h,
                reg,
                cm_s0: CmShiftsS0::new(w, h, isa),
                cm_s123: adm_scalar::cm_s123_shifts(w, h),
                den_s0: adm_scalar::den_s0_shift(reg.area()),
                den_s123: adm_scalar::den_s123_shifts(reg),
                rfactor: params.rfactor(s),
                i_rfactor: if s == 0 {
                    params.i_rfactor_s0().map(u32::from)
                } else {
                    params.i_rfactor_s123(s)
                },
            });
            (in_w, in_h) = (w, h);
        }
        Ok(AdmPlan {
            cols,
            offset,
            params,
            isa,
            scales: [scales[0], scales[1], scales[2], scales[3]],
        })
    }

    fn enqueue_impl(&self, io: &FrameIo, c: &Ctx<'_>) -> Result<()> {
        use adm_scalar::half_pow2_u32;
        let g = c.geom;
        let sc = c.scratch.get::<AdmScratch>();
        sc.rows.zero_async(sc.rows_len * 8, c.stream)?;
        let rows_ptr = |s: usize| sc.rows.ptr + 8 * sc.rows_off[s] as u64;
        let r = [sc.r[0].ptr, sc.r[1].ptr, sc.r[2].ptr];
        let a = [sc.a[0].ptr, sc.a[1].ptr, sc.a[2].ptr];
        let mut fin = AdmFinishArgs {
            rows: [rows_ptr(0), rows_ptr(1), rows_ptr(2), rows_ptr(3)],
            out: c.result(self.offset),
            h: self.scales.map(|x| x.h as i32),
            shift: [[0; QUANTITIES]; SCALES],
            add: [[0; QUANTITIES]; SCALES],
        };
        for (s, x) in self.scales.iter().enumerate() {
            let (src_r, src_d) = if s == 0 {
                (io.reference, io.distorted)
            } else {
                let (pr, pd) = &sc.band_a[(s - 1) % 2];
                (packed_plane(pr, x.in_w, 4), packed_plane(pd, x.in_w, 4))
            };
            let (out_r, out_d) = &sc.band_a[s % 2];
            let (vp_add, vp_shift, hp_add, hp_shift) = match s {
                0 => (1i32 << (g.bpc - 1), g.bpc as i32, 32768, 16),
                1 => (0, 0, 16384, 15),
                2 => (32768, 16, 32768, 16),
                _ => (32768, 16, 16384, 15),
            };
            // Denominator constants (scalar::csf_den_s0 / csf_den_s123).
            let (den_shift_sq, den_add_sq, den_shift_cub, den_add_cub, den_shift_row, den_add_row) =
                if s == 0 {
                    let sh = x.den_s0;
                    (0, 0, 0, 0, sh, if sh > 0 { 1u32 << (sh - 1) } else { 0 })
                } else {
                    let (cub, acc) = x.den_s123;
                    let sq = [31u32, 30, 31][s - 1];
                    (
                        sq,
                        1u32 << sq,
                        cub & 63,
                        half_pow2_u32(cub),
                        acc & 63,
                        half_pow2_u32(acc),
                    )
                };
            let dwt = AdmDwtArgs {
                reference: src_r,
                distorted: src_d,
                out_a_ref: out_r.ptr,
                out_a_dis: out_d.ptr,
                r,
                a,
                den_rows: rows_ptr(s) + 8 * CM_QUANTITIES as u64 * x.h as u64,
                div_lookup: sc.div.ptr,
                gain_limit: self.params.enhn_gain_limit,
                cos1_sq: crate::feature::adm::tables::COS_1DEG_SQ,
                w: x.in_w as i32,
                h: x.in_h as i32,
                ow: x.w as i32,
                oh: x.h as i32,
                vp_add,
                vp_shift,
                hp_add,
                hp_shift,
                den_left: x.reg.left as i32,
                den_right: x.reg.right as i32,
                den_top: x.reg.top as i32,
                den_bottom: x.reg.bottom as i32,
                den_add_sq,
                den_shift_sq,
                den_add_cub,
                den_shift_cub,
                scale: s as i32,
                s0_unmirrored: (s == 0
                    && !self.params.skip_scale0
                    && adm_scalar::s0_last_column_unmirrored(self.isa, g.w, g.bpc as u32))
                    as i32,
            };
            let f = match s {
                0 if g.eight_bit() => c.k.adm_dwt_u8_s0,
                0 => c.k.adm_dwt_u16_s0,
                _ => c.k.adm_dwt_s123,
            };
            // SAFETY: AdmDwtArgs mirrors adm.cu; inputs hold in_w x in_h samples, every output
            // buffer at least w x h values (sized for scale 0/1), row sums 9 x h values.
            unsafe {
                launch(
                    f,
                    (blocks(x.w), x.h as u32, 1),
                    BX,
                    c.stream,
                    &dwt,
                    "adm dwt",
                )?
            };
            // CM constants (scalar::cm_s0 / cm_s123).
            let (cub, cub_add, inner) = if s == 0 {
                (
                    x.cm_s0.cub,
                    x.cm_s0.cub_add.map(|a| a as u32),
                    x.cm_s0.inner,
                )
            } else {
                let c = x.cm_s123.0;
                ([c; 3], [half_pow2_u32(c); 3], x.cm_s123.1)
            };
            for q in 0..CM_QUANTITIES {
                fin.shift[s][q] = inner & 63;
                fin.add[s][q] = half_pow2_u32(inner);
            }
            for q in CM_QUANTITIES..QUANTITIES {
                fin.shift[s][q] = den_shift_row;
                fin.add[s][q] = den_add_row;
            }
            if s == 0 && self.params.skip_scale0 {
                continue; // only band a is needed (libvmaf adm_dwt2_*_lo)
            }
            let cm = AdmCmArgs {
                r,
                a,
                rows: rows_ptr(s),
                w: x.w as i32,
                h: x.h as i32,
                left: x.reg.left as i32,
                right: x.reg.right as i32,
                top: x.reg.top as i32,
                bottom: x.reg.bottom as i32,
                rfactor: x.i_rfactor,
                add_cub: cub_add,
                shift_cub: cub.map(|v| v & 63),
                scale: s as i32,
                pad_: 0,
            };
            let f = if s == 0 {
                c.k.adm_cm_s0
            } else {
                c.k.adm_cm_s123
            };
            let grid = (
                blocks(x.reg.right - x.reg.left),
                (x.reg.bottom - x.reg.top) as u32,
                1,
            );
            // SAFETY: AdmCmArgs mirrors adm.cu; r/a hold w x h values written by the dwt above.
            unsafe { launch(f, grid, BX, c.stream, &cm, "adm cm")? };
        }
        // SAFETY: AdmFinishArgs mirrors adm.cu; rows were filled above, `out` is 36 u64 of the
        // result block.
        unsafe { launch(c.k.adm_finish, (9, 4, 1), 256, c.stream, &fin, "adm finish") }
    }

    fn finish_impl(&self, res: &[u64], g: Geometry, row: &mut [f64]) {
        let prm = &self.params;
        let mut scales = [(0f32, 0f32, 0f32); 4];
        for (s, x) in self.scales.iter().enumerate() {
            let t = &res[self.offset + QUANTITIES * s..self.offset + QUANTITIES * (s + 1)];
            let cm = |o: usize| [t[o] as i64, t[o + 1] as i64, t[o + 2] as i64];
            let dn = [t[6], t[7], t[8]];
            let area = x.reg.area();
            let (num_s, den_s, aim_s) = if s == 0 {
                if prm.skip_scale0 {
                    (0.0f32, 1e-10f32, 0.0f32)
                } else {
                    let d = adm_scalar::csf_den_pool_s0(
                        dn,
                        x.den_s0,
                        x.rfactor,
                        area,
                        prm.noise_weight,
                    );
                    let n = adm_scalar::cm_pool_s0(cm(0), x.cm_s0, x.w, x.h, prm.noise_weight);
                    let a = if prm.skip_aim {
                        0.0
                    } else {
                        adm_scalar::cm_pool_s0(cm(3), x.cm_s0, x.w, x.h, 0.0)
                    };
                    (n, d, a)
                }
            } else {
                let d = adm_scalar::csf_den_pool_s123(
                    dn,
                    s,
                    x.den_s123,
                    x.rfactor,
                    area,
                    prm.noise_weight,
                );
                let n = adm_scalar::cm_pool_s123(cm(0), s, x.cm_s123, x.w, x.h, prm.noise_weight);
                let a = if prm.skip_aim {
                    0.0
                } else {
                    adm_scalar::cm_pool_s123(cm(3), s, x.cm_s123, x.w, x.h, 0.0)
                };
                (n, d, a)
            };
            scales[s] = (num_s, den_s, aim_s);
        }
        // The same combination as the CPU path (one function, so the two cannot drift).
        crate::feature::adm::AdmScores::from_scales(scales, g.w, g.h, prm)
            .write(&mut row[self.cols.clone()]);
    }
}

impl GpuPlan for AdmPlan {
    fn name(&self) -> &'static str {
        GPU.extractor.name
    }

    fn results_len(&self) -> usize {
        SCALES * QUANTITIES
    }

    fn alloc_scratch(&self, s: &mut Scratch, _g: Geometry, stream: sys::CUstream) -> Result<()> {
        // Band sizes depend on the geometry only, so every ADM instance fits these buffers.
        let g = &self.scales;
        s.get_or_alloc(|| {
            let n0 = g[0].w * g[0].h * 4;
            let n1 = g[1].w * g[1].h * 4;
            let band_a = [
                (DevBuf::new(n0, "adm band")?, DevBuf::new(n0, "adm band")?),
                (DevBuf::new(n1, "adm band")?, DevBuf::new(n1, "adm band")?),
            ];
            let mk = || DevBuf::new(n0, "adm decoupled band");
            let r = [mk()?, mk()?, mk()?];
            let a = [mk()?, mk()?, mk()?];
            let mut rows_off = [0usize; SCALES];
            let mut total = 0usize;
            for (o, sc) in rows_off.iter_mut().zip(g.iter()) {
                *o = total;
                total += QUANTITIES * sc.h;
            }
            let rows = DevBuf::new(total * 8, "adm row sums")?;
            let table: &'static [i32] = &crate::feature::adm::tables::DIV_LOOKUP[..];
            let div = DevBuf::new(std::mem::size_of_val(table), "adm reciprocal table")?;
            div.upload_async(table, stream)?;
            Ok(AdmScratch {
                band_a,
                r,
                a,
                rows,
                rows_off,
                rows_len: total,
                div,
            })
        })
    }

    fn enqueue(&self, io: &FrameIo, c: &Ctx<'_>) -> Result<()> {
        if io.meta.scored {
            self.enqueue_impl(io, c)?;
        }
        Ok(())
    }

    fn finish(&mut self, res: &[u64], io: FrameMeta, g: Geometry, row: &mut [f64]) {
        if io.scored {
            self.finish_impl(res, g, row);
        }
    }
}
