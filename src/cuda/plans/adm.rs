//! ADM on the GPU: the DWT, decoupling, CSF and contrast masking of every scale (the kernels of
//! `kernels/adm.cu`), reduced to per-scale integer sums; the host pools them with the CPU's own
//! functions (`feature::adm::scalar`), so both backends share every constant.

use super::super::driver::{launch, DevBuf};
use super::super::kernels::{blocks, AdmCmArgs, AdmDwtArgs, AdmFinishArgs, ADM_CM_ROWS, BX};
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
use std::cell::Cell;
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

/// Bands, decoupled bands, the reciprocal table, and the instances grouped by decomposition.
struct AdmScratch {
    /// band a of even scales ([0]) and odd scales ([1]): (reference, distorted), `i32`.
    band_a: [(DevBuf, DevBuf); 2],
    r: [DevBuf; 3],
    a: [DevBuf; 3],
    /// Where each scale's rows start in a member's row sums, and their total (`u64` values).
    rows_off: [usize; SCALES],
    rows_len: usize,
    div: DevBuf,
    groups: Vec<DwtGroup>,
}

impl ScratchBufs for AdmScratch {
    fn bytes(&self) -> usize {
        let bands: usize = self.band_a.iter().map(|(x, y)| x.bytes + y.bytes).sum();
        let dec: usize = self.r.iter().chain(self.a.iter()).map(|b| b.bytes).sum();
        let rows: usize = self
            .groups
            .iter()
            .flat_map(|g| &g.members)
            .map(|m| m.rows.bytes)
            .sum();
        bands + dec + rows + self.div.bytes
    }
}

impl AdmScratch {
    /// The group of the instance at `offset` and its entry there.
    fn member(&self, offset: usize) -> (&DwtGroup, &Member) {
        self.groups
            .iter()
            .find_map(|g| {
                g.members
                    .iter()
                    .find(|m| m.offset == offset)
                    .map(|m| (g, m))
            })
            .expect("every ADM plan joins a group when its scratch is allocated")
    }
}

/// What the DWT, the decoupled bands and the CSF denominators of every scale depend on besides
/// the picture: instances that agree on it (the v1.0.16 models and v0.6.1 differ only in CSF,
/// masking and pooling options) share one decomposition a frame.
#[derive(Debug, Clone, Copy, PartialEq)]
struct DwtKey {
    gain_limit: u64,
    skip_scale0: bool,
    isa: LibvmafIsa,
}

/// Instances with one [`DwtKey`]: the first one's `enqueue` decomposes each scale once and runs
/// every member's contrast masking on it, the members' own `enqueue`s only finish their sums.
struct DwtGroup {
    key: DwtKey,
    members: Vec<Member>,
}

/// One instance of a [`DwtGroup`].
struct Member {
    /// Its first result slot.
    offset: usize,
    /// Its per-row sums of every scale: [`QUANTITIES`] × band height, `u64` (the denominators'
    /// only in the first member's: the others read them from its result slots).
    rows: DevBuf,
    scales: [AdmScale; SCALES],
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
    /// First result slot of the group's first member, whose slots hold the CSF denominators
    /// (set when the scratch is allocated).
    den_offset: Cell<usize>,
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
            den_offset: Cell::new(offset),
        })
    }

    fn dwt_key(&self) -> DwtKey {
        DwtKey {
            gain_limit: self.params.enhn_gain_limit.to_bits(),
            skip_scale0: self.params.skip_scale0,
            isa: self.isa,
        }
    }

    /// Queues the frame: the group's decomposition and every member's masking when this is the
    /// group's first member, then this instance's sums.
    fn enqueue_impl(&self, io: &FrameIo, c: &Ctx<'_>) -> Result<()> {
        let sc = c.scratch.get::<AdmScratch>();
        let (group, me) = sc.member(self.offset);
        if group.members[0].offset == self.offset {
            for m in &group.members {
                m.rows.zero_async(sc.rows_len * 8, c.stream)?;
            }
            for s in 0..SCALES {
                self.enqueue_dwt(io, c, sc, me, s)?;
                if s == 0 && self.params.skip_scale0 {
                    continue; // only band a is needed (libvmaf adm_dwt2_*_lo)
                }
                for m in &group.members {
                    enqueue_cm(c, sc, m, s)?;
                }
            }
        }
        let rows = |s: usize| me.rows.ptr + 8 * sc.rows_off[s] as u64;
        let mut fin = AdmFinishArgs {
            rows: [rows(0), rows(1), rows(2), rows(3)],
            out: c.result(self.offset),
            h: self.scales.map(|x| x.h as i32),
            shift: [[0; QUANTITIES]; SCALES],
            add: [[0; QUANTITIES]; SCALES],
        };
        for (s, x) in self.scales.iter().enumerate() {
            // CM rows: the inner shift (scalar::cm_s0 / cm_s123); denominators: the row shift.
            let inner = if s == 0 { x.cm_s0.inner } else { x.cm_s123.1 };
            let den_row = den_consts(s, x).row_shift;
            let (den_shift, den_add) = if s == 0 {
                (
                    den_row,
                    if den_row > 0 {
                        1u32 << (den_row - 1)
                    } else {
                        0
                    },
                )
            } else {
                (den_row & 63, adm_scalar::half_pow2_u32(den_row))
            };
            for q in 0..CM_QUANTITIES {
                fin.shift[s][q] = inner & 63;
                fin.add[s][q] = adm_scalar::half_pow2_u32(inner);
            }
            for q in CM_QUANTITIES..QUANTITIES {
                fin.shift[s][q] = den_shift;
                fin.add[s][q] = den_add;
            }
        }
        // SAFETY: AdmFinishArgs mirrors adm.cu; rows were zeroed and filled above (by this
        // enqueue or the group's first member's, earlier on the same stream), `out` is 36 u64 of
        // the result block.
        unsafe { launch(c.k.adm_finish, (9, 4, 1), 256, c.stream, &fin, "adm finish") }
    }

    /// Scale `s`'s DWT, decoupling and CSF denominators (into the rows of `me`, this
    /// instance's entry in its group).
    fn enqueue_dwt(
        &self,
        io: &FrameIo,
        c: &Ctx<'_>,
        sc: &AdmScratch,
        me: &Member,
        s: usize,
    ) -> Result<()> {
        let g = c.geom;
        let x = &self.scales[s];
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
        let den = den_consts(s, x);
        let rows = me.rows.ptr + 8 * sc.rows_off[s] as u64;
        let dwt = AdmDwtArgs {
            reference: src_r,
            distorted: src_d,
            out_a_ref: out_r.ptr,
            out_a_dis: out_d.ptr,
            r: [sc.r[0].ptr, sc.r[1].ptr, sc.r[2].ptr],
            a: [sc.a[0].ptr, sc.a[1].ptr, sc.a[2].ptr],
            den_rows: rows + 8 * CM_QUANTITIES as u64 * x.h as u64,
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
            den_add_sq: den.add_sq,
            den_shift_sq: den.shift_sq,
            den_add_cub: den.add_cub,
            den_shift_cub: den.shift_cub,
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
            )
        }
    }

    fn finish_impl(&self, res: &[u64], g: Geometry, row: &mut [f64]) {
        let prm = &self.params;
        let mut scales = [(0f32, 0f32, 0f32); 4];
        for (s, x) in self.scales.iter().enumerate() {
            let t = &res[self.offset + QUANTITIES * s..self.offset + QUANTITIES * (s + 1)];
            let cm = |o: usize| [t[o] as i64, t[o + 1] as i64, t[o + 2] as i64];
            // The denominators are the group's: its first member's slots.
            let d = self.den_offset.get() + QUANTITIES * s + CM_QUANTITIES;
            let dn = [res[d], res[d + 1], res[d + 2]];
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

/// Denominator constants of one scale (`scalar::csf_den_s0` / `csf_den_s123`).
struct DenConsts {
    shift_sq: u32,
    add_sq: u32,
    shift_cub: u32,
    add_cub: u32,
    /// The per-row shift (its rounding term is the finish kernel's).
    row_shift: u32,
}

fn den_consts(s: usize, x: &AdmScale) -> DenConsts {
    if s == 0 {
        let row_shift = x.den_s0;
        DenConsts {
            shift_sq: 0,
            add_sq: 0,
            shift_cub: 0,
            add_cub: 0,
            row_shift,
        }
    } else {
        let (cub, acc) = x.den_s123;
        let sq = [31u32, 30, 31][s - 1];
        DenConsts {
            shift_sq: sq,
            add_sq: 1u32 << sq,
            shift_cub: cub & 63,
            add_cub: adm_scalar::half_pow2_u32(cub),
            row_shift: acc,
        }
    }
}

/// Member `m`'s contrast masking of scale `s` on the decoupled bands the DWT just wrote.
fn enqueue_cm(c: &Ctx<'_>, sc: &AdmScratch, m: &Member, s: usize) -> Result<()> {
    use adm_scalar::half_pow2_u32;
    let x = &m.scales[s];
    let (cub, cub_add) = if s == 0 {
        (x.cm_s0.cub, x.cm_s0.cub_add.map(|a| a as u32))
    } else {
        let cb = x.cm_s123.0;
        ([cb; 3], [half_pow2_u32(cb); 3])
    };
    let cm = AdmCmArgs {
        r: [sc.r[0].ptr, sc.r[1].ptr, sc.r[2].ptr],
        a: [sc.a[0].ptr, sc.a[1].ptr, sc.a[2].ptr],
        rows: m.rows.ptr + 8 * sc.rows_off[s] as u64,
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
        (x.reg.bottom - x.reg.top).div_ceil(ADM_CM_ROWS) as u32,
        1,
    );
    // SAFETY: AdmCmArgs mirrors adm.cu; r/a hold w x h values written by the scale's dwt, queued
    // just before on the same stream; the member's rows hold 9 x h values per scale.
    unsafe { launch(f, grid, BX, c.stream, &cm, "adm cm") }
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
        let make = || {
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
            let table: &'static [i32] = &crate::feature::adm::tables::DIV_LOOKUP[..];
            let div = DevBuf::new(std::mem::size_of_val(table), "adm reciprocal table")?;
            div.upload_async(table, stream)?;
            Ok(AdmScratch {
                band_a,
                r,
                a,
                rows_off,
                rows_len: total,
                div,
                groups: Vec::new(),
            })
        };
        // Join the group of instances that decompose the same way (or start one).
        let join = |sc: &mut AdmScratch| {
            let key = self.dwt_key();
            let member = Member {
                offset: self.offset,
                rows: DevBuf::new(sc.rows_len * 8, "adm row sums")?,
                scales: self.scales,
            };
            match sc.groups.iter_mut().find(|x| x.key == key) {
                Some(group) => {
                    self.den_offset.set(group.members[0].offset);
                    group.members.push(member);
                }
                None => {
                    self.den_offset.set(self.offset);
                    sc.groups.push(DwtGroup {
                        key,
                        members: vec![member],
                    });
                }
            }
            Ok(())
        };
        s.get_or_alloc_join(make, join)
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
