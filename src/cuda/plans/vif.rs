//! VIF on the GPU: the four statistics of every scale as integer sums (the kernels of
//! `kernels/vif.cu`), downsampled scales kept in device scratch; the host divides the sums as
//! `feature::vif` does.

use super::super::driver::{launch, DevBuf};
use super::super::kernels::{
    blocks, vif_rows, SrcPlane, VifDownArgs, VifStatArgs, VIF_DOWN_THREADS, VIF_THREADS,
};
use super::{
    packed_plane, Ctx, FrameIo, FrameMeta, Geometry, GpuDef, GpuPlan, Scratch, ScratchBufs,
};
use crate::engine::InstanceInfo;
use crate::error::{Error, Result};
use crate::feature::options::OptValues;
use crate::feature::vif::scalar::{StatShifts, VifSums};
use cudarc::driver::sys;
use std::ops::Range;

/// VIF's entry in the CUDA registry.
pub(super) static GPU: GpuDef = GpuDef {
    extractor: &crate::feature::vif::DEF,
    create,
    supports: super::every_instance,
};

fn create(info: &InstanceInfo<'_>, geom: Geometry, offset: usize) -> Result<Box<dyn GpuPlan>> {
    Ok(Box::new(VifPlan::new(
        info.opts,
        info.columns.clone(),
        offset,
        geom,
    )?))
}

/// Scales computed.
const SCALES: usize = 4;
/// Result slots per scale: the four sums of [`VifSums`].
const SUMS: usize = 4;

/// Downsampled planes and the log2 table.
struct VifScratch {
    /// (reference, distorted) of scales 1..=3, `u16`, tightly packed.
    levels: Vec<(DevBuf, DevBuf)>,
    log2: DevBuf,
}

impl ScratchBufs for VifScratch {
    fn bytes(&self) -> usize {
        self.log2.bytes
            + self
                .levels
                .iter()
                .map(|(a, b)| a.bytes + b.bytes)
                .sum::<usize>()
    }
}

struct VifPlan {
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

    fn enqueue_impl(&self, io: &FrameIo, c: &Ctx<'_>) -> Result<()> {
        let g = c.geom;
        let vs = c.scratch.get::<VifScratch>();
        let bpc = g.bpc as u32;
        let eight = g.eight_bit();
        let sums = |s: usize| c.result(self.offset + SUMS * s);
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
                launch(
                    f,
                    (blocks(w), h.div_ceil(vif_rows(s)) as u32, 1),
                    VIF_THREADS,
                    c.stream,
                    &args,
                    "vif stat",
                )
            }
        };
        let level = |s: usize| -> (SrcPlane, SrcPlane, usize, usize) {
            let (w, h) = (g.w >> s, g.h >> s);
            let (r, d) = &vs.levels[s - 1];
            (packed_plane(r, w, 2), packed_plane(d, w, 2), w, h)
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
                launch(
                    f,
                    (blocks(wo), ho.div_ceil(vif_rows(s)) as u32, 1),
                    VIF_DOWN_THREADS,
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
        for s in 1..SCALES {
            if s > 1 {
                let (r, d, w, h) = level(s - 1);
                down(s, r, d, w, h)?;
            }
            let (r, d, w, h) = level(s);
            stat(s, r, d, w, h)?;
        }
        Ok(())
    }

    fn finish_impl(&self, res: &[u64], row: &mut [f64]) {
        for s in 0..SCALES {
            let v = &res[self.offset + SUMS * s..self.offset + SUMS * (s + 1)];
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

impl GpuPlan for VifPlan {
    fn name(&self) -> &'static str {
        GPU.extractor.name
    }

    fn results_len(&self) -> usize {
        SCALES * SUMS
    }

    fn alloc_scratch(&self, s: &mut Scratch, g: Geometry, stream: sys::CUstream) -> Result<()> {
        s.get_or_alloc(|| {
            let mut levels = Vec::new();
            for sc in 1..SCALES {
                let n = (g.w >> sc) * (g.h >> sc) * 2;
                levels.push((DevBuf::new(n, "vif scale")?, DevBuf::new(n, "vif scale")?));
            }
            let table: &'static [u16] = &crate::feature::vif::tables::log2_table()[..];
            let log2 = DevBuf::new(std::mem::size_of_val(table), "vif log2 table")?;
            log2.upload_async(table, stream)?;
            Ok(VifScratch { levels, log2 })
        })
    }

    fn enqueue(&self, io: &FrameIo, c: &Ctx<'_>) -> Result<()> {
        if io.meta.scored {
            self.enqueue_impl(io, c)?;
        }
        Ok(())
    }

    fn finish(&mut self, res: &[u64], io: FrameMeta, _geom: Geometry, row: &mut [f64]) {
        if io.scored {
            self.finish_impl(res, row);
        }
    }
}
