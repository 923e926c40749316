//! ciede on the GPU (`kernels/ciede.cu`), bit-identical to `feature::ciede`.
//!
//! One thread per luma position reads the chroma samples libvmaf's upsampling reads (straight
//! from the CUDA frames, interleaved CbCr included, on libvmaf's own buffer layout as the CPU
//! emulates it), converts both colours to L\*a\*b\* and computes their ΔE00 with the CPU's
//! operations and our own elementary functions (`feature::ciede::math`, repeated in
//! `kernels/ciede_math.cuh`), into a term buffer in raster order. The CPU adds the terms into
//! one `f64` running sum, so the sum kernel adds them from 0 in that order on one thread; the
//! host turns the sum into the score with the CPU module's `score_of_sum`.

use super::super::driver::{launch, DevBuf};
use super::super::kernels::{CiedeArgs, CiedeSumArgs, SrcPlane, BX, CIEDE_SUM_THREADS};
use super::{
    every_instance, ChromaIo, Ctx, FrameIo, FrameMeta, Geometry, GpuDef, GpuPlan, Scratch,
    ScratchBufs,
};
use crate::engine::InstanceInfo;
use crate::error::{Error, Result};
use crate::feature::ciede;
use crate::picture::ChromaLayout;
use cudarc::driver::sys;

/// ciede's entry in the CUDA registry.
pub(super) static GPU: GpuDef = GpuDef {
    extractor: &ciede::DEF,
    create,
    supports: every_instance,
};

fn create(info: &InstanceInfo<'_>, geom: Geometry, offset: usize) -> Result<Box<dyn GpuPlan>> {
    // The CPU extractor's checks and messages (gray input, bit depths).
    (ciede::DEF.check)(info.opts, &info.format)?;
    let f = &info.format;
    if geom.w * geom.h > i32::MAX as usize / 4 {
        return Err(Error::Unsupported(format!(
            "ciede on CUDA: a {}x{} picture is too large",
            geom.w, geom.h
        )));
    }
    let (cw, ch) = f.layout.libvmaf_chroma_size(f.width, f.height);
    Ok(Box::new(CiedePlan {
        col: info.columns.start,
        offset,
        cw,
        ch,
        layout: match f.layout {
            ChromaLayout::Yuv420 => 0,
            ChromaLayout::Yuv422 => 1,
            _ => 2,
        },
        bpc: i32::from(f.bpc),
    }))
}

/// The per-pixel term buffer (`f32`, `w * h`), shared by every instance of the stream (they
/// compute the same, one after another on one stream).
struct CiedeScratch {
    terms: DevBuf,
}

impl ScratchBufs for CiedeScratch {
    fn bytes(&self) -> usize {
        self.terms.bytes
    }
}

struct CiedePlan {
    /// Its one output column (`ciede2000`).
    col: usize,
    /// Its result slot: the sum's `f64` bits.
    offset: usize,
    /// libvmaf's chroma plane size.
    cw: usize,
    ch: usize,
    /// `CiedeArgs::layout`: 0 4:2:0, 1 4:2:2, 2 4:4:4.
    layout: i32,
    bpc: i32,
}

impl CiedePlan {
    /// A frame's chroma planes, checked to hold the `cw` samples a row of libvmaf's plane reads.
    fn chroma(&self, c: Option<ChromaIo>, bps: usize) -> Result<([SrcPlane; 2], i32)> {
        let c = c.ok_or_else(|| {
            Error::InvalidOption(
                "ciede reads chroma on the GPU, but a CUDA frame came without chroma planes".into(),
            )
        })?;
        let need = (self.cw as u64 - 1) * c.step as u64 * bps as u64 + bps as u64;
        for plane in &c.planes {
            if plane.ptr == 0 || plane.pitch < need {
                return Err(Error::InvalidOption(format!(
                    "ciede: a CUDA frame's chroma plane is missing or its pitch {} is below the \
                     {need} bytes a row needs",
                    plane.pitch
                )));
            }
        }
        Ok((c.planes, c.step))
    }
}

impl GpuPlan for CiedePlan {
    fn name(&self) -> &'static str {
        GPU.extractor.name
    }

    fn results_len(&self) -> usize {
        1
    }

    fn alloc_scratch(&self, s: &mut Scratch, g: Geometry, _: sys::CUstream) -> Result<()> {
        s.get_or_alloc(|| {
            Ok(CiedeScratch {
                terms: DevBuf::new(g.w * g.h * 4, "ciede terms")?,
            })
        })
    }

    fn enqueue(&self, io: &FrameIo, c: &Ctx<'_>) -> Result<()> {
        if !io.meta.scored {
            return Ok(());
        }
        let g = c.geom;
        let bps = g.bytes_per_sample();
        let (ref_chroma, step_ref) = self.chroma(io.reference_chroma, bps)?;
        let (dis_chroma, step_dis) = self.chroma(io.distorted_chroma, bps)?;
        let terms = c.scratch.get::<CiedeScratch>().terms.ptr;
        let k = &c.k.ciede;
        let args = CiedeArgs {
            reference: io.reference,
            distorted: io.distorted,
            ref_chroma,
            dis_chroma,
            terms,
            w: g.w as i32,
            h: g.h as i32,
            cw: self.cw as i32,
            ch: self.ch as i32,
            pitch: ciede::libvmaf_chroma_pitch(self.cw) as i32,
            step_ref,
            step_dis,
            bpc: self.bpc,
            layout: self.layout,
            pad_: 0,
        };
        let pixel = if g.eight_bit() {
            k.pixel_u8
        } else {
            k.pixel_u16
        };
        // SAFETY: CiedeArgs mirrors ciede.cu; the luma planes are live borrowed frames (held
        // until the frame's event) of the stream's size (checked by the scorer), the chroma
        // planes hold `cw` samples a row (checked in `chroma`) and `ch` rows (the frame's
        // format); `terms` holds w * h floats.
        unsafe {
            launch(
                pixel,
                (g.w.div_ceil(BX as usize) as u32, g.h as u32, 1),
                BX,
                c.stream,
                &args,
                "ciede pixels",
            )?
        };
        let sum = CiedeSumArgs {
            terms,
            out: c.result(self.offset),
            n: (g.w * g.h) as i32,
            pad_: 0,
        };
        // SAFETY: CiedeSumArgs mirrors ciede.cu; `terms` holds the n floats the pixel kernel
        // wrote before on this stream; the slot is the instance's, inside the result block.
        unsafe {
            launch(
                k.sum,
                (1, 1, 1),
                CIEDE_SUM_THREADS,
                c.stream,
                &sum,
                "ciede sum",
            )
        }
    }

    fn finish(&mut self, res: &[u64], io: FrameMeta, g: Geometry, row: &mut [f64]) {
        if io.scored {
            row[self.col] = ciede::score_of_sum(f64::from_bits(res[self.offset]), g.w, g.h);
        }
    }
}
