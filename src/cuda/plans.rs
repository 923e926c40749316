//! Per-extractor GPU plans: which kernels run for a frame, with which constants, and the host-side
//! steps (in `f32`/`f64`, exactly as the CPU extractors do them) that turn the integer sums read
//! back from the GPU into the extractor's per-frame values.

use super::driver::DevBuf;
use super::kernels::{
    blocks, AdmCmArgs, AdmDwtArgs, AdmFinishArgs, Kernels, MotionArgs, MotionFinishArgs, SrcPlane,
    VifDownArgs, VifStatArgs, BX,
};
use crate::engine::InstanceInfo;
use crate::error::{Error, Result};
use crate::feature::adm::scalar::{self as adm_scalar, CmShiftsS0, Region};
use crate::feature::adm::tables::{DEFAULT_NORM_VIEW_DIST, DEFAULT_REF_DISPLAY_HEIGHT};
use crate::feature::adm::AdmParams;
use crate::feature::options::OptValues;
use crate::feature::vif::scalar::{StatShifts, VifSums};
use crate::fidelity::LibvmafIsa;
use cudarc::driver::sys;
use std::ops::Range;

/// Size and sample layout of the stream.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Geometry {
    pub w: usize,
    pub h: usize,
    pub bpc: u8,
    /// Right shift of every stored sample (MSB-aligned formats).
    pub shift: u8,
}

impl Geometry {
    /// Whether samples are bytes (8-bit) rather than 16-bit words.
    pub fn eight_bit(&self) -> bool {
        self.bpc == 8
    }
    /// Bytes per stored sample.
    pub fn bytes_per_sample(&self) -> usize {
        if self.eight_bit() {
            1
        } else {
            2
        }
    }
}

/// The planes of one frame as the kernels see them.
pub(crate) struct FrameIo {
    pub reference: SrcPlane,
    pub distorted: SrcPlane,
    pub prev: Option<SrcPlane>,
    pub prev_prev: Option<SrcPlane>,
    pub index: u64,
    pub scored: bool,
}

/// What the plans share while enqueueing one frame.
pub(crate) struct Ctx<'a> {
    pub k: &'a Kernels,
    pub stream: sys::CUstream,
    /// Device address of the frame's result block (`u64` values).
    pub results: u64,
    pub scratch: &'a Scratch,
    pub geom: Geometry,
}

/// Device scratch shared by every instance of a kind (the work of one stream runs in order, so
/// instances and frames can reuse the same buffers). Allocated on the first frame.
#[derive(Default)]
pub(crate) struct Scratch {
    motion_rows: Option<DevBuf>,
    vif: Option<VifScratch>,
    adm: Option<AdmScratch>,
}

struct VifScratch {
    /// (reference, distorted) of scales 1..=3, `u16`, tightly packed.
    levels: Vec<(DevBuf, DevBuf)>,
    log2: DevBuf,
}

struct AdmScratch {
    /// band a of even scales ([0]) and odd scales ([1]): (reference, distorted), `i32`.
    band_a: [(DevBuf, DevBuf); 2],
    r: [DevBuf; 3],
    a: [DevBuf; 3],
    /// Per-row sums of every scale: 9 quantities × band height, `u64`.
    rows: DevBuf,
    rows_off: [usize; 4],
    rows_len: usize,
    div: DevBuf,
}

impl Scratch {
    /// Allocates what `plans` need and queues the table uploads on `stream`.
    pub(crate) fn alloc(plans: &[Plan], geom: Geometry, stream: sys::CUstream) -> Result<Self> {
        let mut s = Scratch::default();
        let (w, h) = (geom.w, geom.h);
        if plans.iter().any(|p| matches!(p, Plan::Motion(_))) {
            s.motion_rows = Some(DevBuf::new(h * 4, "motion row sums")?);
        }
        if plans.iter().any(|p| matches!(p, Plan::Vif(_))) {
            let mut levels = Vec::new();
            for sc in 1..4 {
                let n = (w >> sc) * (h >> sc) * 2;
                levels.push((DevBuf::new(n, "vif scale")?, DevBuf::new(n, "vif scale")?));
            }
            let table: &'static [u16] = &crate::feature::vif::tables::log2_table()[..];
            let log2 = DevBuf::new(std::mem::size_of_val(table), "vif log2 table")?;
            log2.upload_async(table, stream)?;
            s.vif = Some(VifScratch { levels, log2 });
        }
        if let Some(Plan::Adm(p)) = plans.iter().find(|p| matches!(p, Plan::Adm(_))) {
            let g = &p.scales;
            let n0 = g[0].w * g[0].h * 4;
            let n1 = g[1].w * g[1].h * 4;
            let band_a = [
                (DevBuf::new(n0, "adm band")?, DevBuf::new(n0, "adm band")?),
                (DevBuf::new(n1, "adm band")?, DevBuf::new(n1, "adm band")?),
            ];
            let mk = || DevBuf::new(n0, "adm decoupled band");
            let r = [mk()?, mk()?, mk()?];
            let a = [mk()?, mk()?, mk()?];
            let mut rows_off = [0usize; 4];
            let mut total = 0usize;
            for (o, sc) in rows_off.iter_mut().zip(g.iter()) {
                *o = total;
                total += 9 * sc.h;
            }
            let rows = DevBuf::new(total * 8, "adm row sums")?;
            let table: &'static [i32] = &crate::feature::adm::tables::DIV_LOOKUP[..];
            let div = DevBuf::new(std::mem::size_of_val(table), "adm reciprocal table")?;
            div.upload_async(table, stream)?;
            s.adm = Some(AdmScratch {
                band_a,
                r,
                a,
                rows,
                rows_off,
                rows_len: total,
                div,
            });
        }
        Ok(s)
    }

    /// Device bytes held.
    pub(crate) fn bytes(&self) -> usize {
        let mut n = self.motion_rows.as_ref().map_or(0, |b| b.bytes);
        if let Some(v) = &self.vif {
            n += v.log2.bytes
                + v.levels
                    .iter()
                    .map(|(a, b)| a.bytes + b.bytes)
                    .sum::<usize>();
        }
        if let Some(a) = &self.adm {
            n += a
                .band_a
                .iter()
                .map(|(x, y)| x.bytes + y.bytes)
                .sum::<usize>();
            n += a.r.iter().chain(a.a.iter()).map(|b| b.bytes).sum::<usize>();
            n += a.rows.bytes + a.div.bytes;
        }
        n
    }
}

/// One extractor instance on the GPU.
pub(crate) enum Plan {
    Motion(MotionPlan),
    Vif(VifPlan),
    Adm(Box<AdmPlan>),
}

impl Plan {
    /// Builds the plan of an engine instance; `offset` is its first slot in the result block.
    pub(crate) fn new(info: &InstanceInfo<'_>, geom: Geometry, offset: usize) -> Result<Self> {
        let cols = info.columns.clone();
        match info.extractor {
            "motion" => Ok(Plan::Motion(MotionPlan::new(info.opts, cols, offset)?)),
            "vif" => Ok(Plan::Vif(VifPlan::new(info.opts, cols, offset, geom)?)),
            "adm" => Ok(Plan::Adm(Box::new(AdmPlan::new(
                info.opts,
                cols,
                offset,
                geom,
                info.libvmaf_isa,
            )?))),
            other => Err(Error::Unsupported(format!(
                "the CUDA backend does not compute '{other}' (it computes vif, adm and motion)"
            ))),
        }
    }

    /// The extractor it computes.
    pub(crate) fn name(&self) -> &'static str {
        match self {
            Plan::Motion(_) => "motion",
            Plan::Vif(_) => "vif",
            Plan::Adm(_) => "adm",
        }
    }

    /// Number of `u64` result slots.
    pub(crate) fn results_len(&self) -> usize {
        match self {
            Plan::Motion(_) => 1,
            Plan::Vif(_) => 16,
            Plan::Adm(_) => 36,
        }
    }

    /// Frames back this instance reads reference frames from (motion: 1, or 2 in five-frame mode).
    pub(crate) fn ref_lag(&self) -> u64 {
        match self {
            Plan::Motion(m) if !m.force_zero => m.min_idx,
            _ => 0,
        }
    }

    /// Queues the frame's kernels.
    pub(crate) fn enqueue(&self, io: &FrameIo, c: &Ctx<'_>) -> Result<()> {
        match self {
            Plan::Motion(p) => p.enqueue(io, c),
            Plan::Vif(p) if io.scored => p.enqueue(io, c),
            Plan::Adm(p) if io.scored => p.enqueue(io, c),
            _ => Ok(()),
        }
    }

    /// Writes the instance's per-frame values into `row` from the frame's result block.
    pub(crate) fn finish(
        &self,
        res: &[u64],
        index: u64,
        scored: bool,
        geom: Geometry,
        row: &mut [f64],
    ) {
        match self {
            Plan::Motion(p) => p.finish(res, index, geom, row),
            Plan::Vif(p) if scored => p.finish(res, row),
            Plan::Adm(p) if scored => p.finish(res, geom, row),
            _ => {}
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Motion

pub(crate) struct MotionPlan {
    cols: Range<usize>,
    offset: usize,
    force_zero: bool,
    fps_weight: f64,
    max_val: f64,
    five_frame: bool,
    min_idx: u64,
}

impl MotionPlan {
    fn new(opts: &OptValues, cols: Range<usize>, offset: usize) -> Result<Self> {
        let five_frame = opts.bool("motion_five_frame_window");
        Ok(MotionPlan {
            cols,
            offset,
            force_zero: opts.bool("motion_force_zero"),
            fps_weight: opts.f64("motion_fps_weight"),
            max_val: opts.f64("motion_max_val"),
            five_frame,
            min_idx: if five_frame { 2 } else { 1 },
        })
    }

    fn enqueue(&self, io: &FrameIo, c: &Ctx<'_>) -> Result<()> {
        if self.force_zero || io.index < self.min_idx {
            return Ok(());
        }
        let prev = if self.five_frame {
            io.prev_prev
        } else {
            io.prev
        };
        let prev =
            prev.ok_or_else(|| Error::Internal("motion: previous reference missing".into()))?;
        let rows = c
            .scratch
            .motion_rows
            .as_ref()
            .expect("allocated with the plan");
        let g = c.geom;
        rows.zero_async(g.h * 4, c.stream)?;
        let args = MotionArgs {
            prev,
            cur: io.reference,
            row_sums: rows.ptr,
            w: g.w as i32,
            h: g.h as i32,
            bpc: g.bpc as i32,
            pad_: 0,
        };
        let f = if g.eight_bit() {
            c.k.motion_sad_u8
        } else {
            c.k.motion_sad_u16
        };
        // SAFETY: MotionArgs mirrors motion.cu; the planes are live borrowed frames (held until the
        // frame's event) and `rows` holds h u32 values.
        unsafe {
            super::driver::launch(
                f,
                (blocks(g.w), g.h as u32, 1),
                BX,
                c.stream,
                &args,
                "motion sad",
            )?
        };
        let fin = MotionFinishArgs {
            row_sums: rows.ptr,
            out: c.results + 8 * self.offset as u64,
            h: g.h as i32,
            pad_: 0,
        };
        // SAFETY: MotionFinishArgs mirrors motion.cu; `out` is inside the result block.
        unsafe {
            super::driver::launch(
                c.k.motion_finish,
                (1, 1, 1),
                256,
                c.stream,
                &fin,
                "motion finish",
            )
        }
    }

    fn finish(&self, res: &[u64], index: u64, g: Geometry, row: &mut [f64]) {
        let mut score = 0.0;
        if !self.force_zero && index >= self.min_idx {
            let sad = res[self.offset];
            // As feature::motion: sad / 256 / (w*h) (a 32-bit unsigned product), then weight/clip.
            let area = (g.w as u32).wrapping_mul(g.h as u32) as f64;
            score = (sad as f64 / 256.0 / area * self.fps_weight).min(self.max_val);
        }
        row[self.cols.start] = score;
    }
}

// ---------------------------------------------------------------------------------------------
// VIF

pub(crate) struct VifPlan {
    cols: Range<usize>,
    offset: usize,
    gain_limit: f64,
    skip_scale0: bool,
}

impl VifPlan {
    fn new(opts: &OptValues, cols: Range<usize>, offset: usize, g: Geometry) -> Result<Self> {
        let min = crate::feature::vif::MIN_SIZE;
        if g.w < min || g.h < min {
            return Err(Error::Unsupported(format!(
                "vif: picture size {}x{} (minimum {min}x{min})",
                g.w, g.h
            )));
        }
        Ok(VifPlan {
            cols,
            offset,
            gain_limit: opts.f64("vif_enhn_gain_limit"),
            skip_scale0: opts.bool("vif_skip_scale0"),
        })
    }

    fn enqueue(&self, io: &FrameIo, c: &Ctx<'_>) -> Result<()> {
        let g = c.geom;
        let vs = c.scratch.vif.as_ref().expect("allocated with the plan");
        let bpc = g.bpc as u32;
        let eight = g.eight_bit();
        let sums = |s: usize| c.results + 8 * (self.offset + 4 * s) as u64;
        let stat = |s: usize, r: SrcPlane, d: SrcPlane, w: usize, h: usize| -> Result<()> {
            let sh = StatShifts::for_scale(s, bpc);
            let args = VifStatArgs {
                reference: r,
                distorted: d,
                log2_table: vs.log2.ptr,
                sums: sums(s),
                gain_limit: self.gain_limit,
                eps: crate::feature::vif::tables::EPS,
                sq_round: sh.sq_round,
                w: w as i32,
                h: h as i32,
                mu_round: sh.mu_round,
                mu_shift: sh.mu_shift,
                sq_shift: sh.sq_shift,
                pad_: 0,
            };
            let f = if s == 0 {
                c.k.vif_stat[if eight { 0 } else { 1 }]
            } else {
                c.k.vif_stat[s + 1]
            };
            // SAFETY: VifStatArgs mirrors vif.cu; planes are live (borrowed frames or our scale
            // buffers of w x h samples); `sums` points at 4 i64 of the result block.
            unsafe {
                super::driver::launch(f, (blocks(w), h as u32, 1), BX, c.stream, &args, "vif stat")
            }
        };
        let level = |s: usize| -> (SrcPlane, SrcPlane, usize, usize) {
            let (w, h) = (g.w >> s, g.h >> s);
            let (r, d) = &vs.levels[s - 1];
            let p = |b: &DevBuf| SrcPlane {
                ptr: b.ptr,
                pitch: (w * 2) as u64,
                shift: 0,
                pad_: 0,
            };
            (p(r), p(d), w, h)
        };
        let down = |s: usize, r: SrcPlane, d: SrcPlane, w: usize, h: usize| -> Result<()> {
            let (round, shift) = if s > 1 {
                (32768, 16)
            } else if eight {
                (128, 8)
            } else {
                (1u32 << (bpc - 1), bpc)
            };
            let (or, od, wo, ho) = level(s);
            let args = VifDownArgs {
                reference: r,
                distorted: d,
                out_ref: or.ptr,
                out_dis: od.ptr,
                w: w as i32,
                h: h as i32,
                round,
                shift,
            };
            let f = if s == 1 {
                c.k.vif_down[if eight { 0 } else { 1 }]
            } else {
                c.k.vif_down[s]
            };
            // SAFETY: VifDownArgs mirrors vif.cu; the source holds w x h samples, the outputs
            // (w/2) x (h/2).
            unsafe {
                super::driver::launch(
                    f,
                    (blocks(wo), ho as u32, 1),
                    BX,
                    c.stream,
                    &args,
                    "vif downsample",
                )
            }
        };
        if !self.skip_scale0 {
            stat(0, io.reference, io.distorted, g.w, g.h)?;
        }
        down(1, io.reference, io.distorted, g.w, g.h)?;
        for s in 1..4 {
            if s > 1 {
                let (r, d, w, h) = level(s - 1);
                down(s, r, d, w, h)?;
            }
            let (r, d, w, h) = level(s);
            stat(s, r, d, w, h)?;
        }
        Ok(())
    }

    fn finish(&self, res: &[u64], row: &mut [f64]) {
        for s in 0..4 {
            let v = &res[self.offset + 4 * s..self.offset + 4 * s + 4];
            let sums = VifSums {
                num_log: v[0] as i64,
                den_log: v[1] as i64,
                num_non_log: v[2] as i64,
                den_non_log: v[3] as i64,
            };
            row[self.cols.start + s] = if s == 0 && self.skip_scale0 {
                0.0
            } else {
                let (num, den) = sums.num_den();
                (num / den) as f64
            };
        }
    }
}

// ---------------------------------------------------------------------------------------------
// ADM

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

pub(crate) struct AdmPlan {
    cols: Range<usize>,
    offset: usize,
    params: AdmParams,
    isa: LibvmafIsa,
    scales: [AdmScale; 4],
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
        for s in 0..4 {
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

    fn enqueue(&self, io: &FrameIo, c: &Ctx<'_>) -> Result<()> {
        use adm_scalar::half_pow2_u32;
        let g = c.geom;
        let sc = c.scratch.adm.as_ref().expect("allocated with the plan");
        sc.rows.zero_async(sc.rows_len * 8, c.stream)?;
        let rows_ptr = |s: usize| sc.rows.ptr + 8 * sc.rows_off[s] as u64;
        let r = [sc.r[0].ptr, sc.r[1].ptr, sc.r[2].ptr];
        let a = [sc.a[0].ptr, sc.a[1].ptr, sc.a[2].ptr];
        let mut fin = AdmFinishArgs {
            rows: [rows_ptr(0), rows_ptr(1), rows_ptr(2), rows_ptr(3)],
            out: c.results + 8 * self.offset as u64,
            h: self.scales.map(|x| x.h as i32),
            shift: [[0; 9]; 4],
            add: [[0; 9]; 4],
        };
        for (s, x) in self.scales.iter().enumerate() {
            let (src_r, src_d) = if s == 0 {
                (io.reference, io.distorted)
            } else {
                let (pr, pd) = &sc.band_a[(s - 1) % 2];
                let p = |b: &DevBuf| SrcPlane {
                    ptr: b.ptr,
                    pitch: (x.in_w * 4) as u64,
                    shift: 0,
                    pad_: 0,
                };
                (p(pr), p(pd))
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
                den_rows: rows_ptr(s) + 8 * 6 * x.h as u64,
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
                super::driver::launch(
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
            for q in 0..6 {
                fin.shift[s][q] = inner & 63;
                fin.add[s][q] = half_pow2_u32(inner);
            }
            for q in 6..9 {
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
            unsafe { super::driver::launch(f, grid, BX, c.stream, &cm, "adm cm")? };
        }
        // SAFETY: AdmFinishArgs mirrors adm.cu; rows were filled above, `out` is 36 u64 of the
        // result block.
        unsafe {
            super::driver::launch(c.k.adm_finish, (9, 4, 1), 256, c.stream, &fin, "adm finish")
        }
    }

    fn finish(&self, res: &[u64], g: Geometry, row: &mut [f64]) {
        let prm = &self.params;
        let mut scales = [(0f32, 0f32, 0f32); 4];
        for (s, x) in self.scales.iter().enumerate() {
            let t = &res[self.offset + 9 * s..self.offset + 9 * s + 9];
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
