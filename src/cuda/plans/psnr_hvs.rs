//! psnr_hvs on the GPU (`kernels/psnr_hvs.cu`), bit-identical to `feature::psnr_hvs`.
//!
//! For each plane (luma, then Cb and Cr straight from the CUDA frames, interleaved CbCr
//! included, at libvmaf's chroma size) one thread per 8x8 block computes what the CPU's `score`
//! computes for it: the `f32` means and variances, the integer DCT, the masking threshold (its
//! square root in `f64`) and the block's 64 weighted squared errors, written to the plane's term
//! buffer in the CPU's order (blocks in raster order, coefficients row by row). The CPU adds
//! those terms into one running `f32` sum over the plane, so the sum kernel adds them from 0 in
//! that order in one thread per plane. The host turns each plane's sum into its score and the
//! four outputs (the `log10`s) with the CPU module's `plane_value` and `outputs`.

use super::super::driver::{launch, DevBuf};
use super::super::kernels::{PsnrHvsBlockArgs, PsnrHvsSumArgs, SrcPlane, BX, PSNR_HVS_SUM_THREADS};
use super::{
    every_instance, ChromaIo, Ctx, FrameIo, FrameMeta, Geometry, GpuDef, GpuPlan, Scratch,
    ScratchBufs,
};
use crate::engine::InstanceInfo;
use crate::error::{Error, Result};
use crate::feature::psnr_hvs::{self, blocks_along, chroma_size};
use cudarc::driver::sys;
use std::ops::Range;

/// psnr_hvs's entry in the CUDA registry.
pub(super) static GPU: GpuDef = GpuDef {
    extractor: &psnr_hvs::DEF,
    create,
    supports: every_instance,
};

/// One plane's size and block grid.
#[derive(Clone, Copy)]
struct PlaneGrid {
    w: usize,
    nbx: usize,
    nby: usize,
}

impl PlaneGrid {
    fn new((w, h): (usize, usize)) -> Self {
        PlaneGrid {
            w,
            nbx: blocks_along(w),
            nby: blocks_along(h),
        }
    }
    /// Terms the plane's blocks give (64 each).
    fn terms(&self) -> usize {
        self.nbx * self.nby * 64
    }
}

/// The planes (luma, Cb, Cr) of a format.
fn grids(g: Geometry, f: &crate::picture::PictureFormat) -> [PlaneGrid; 3] {
    let c = chroma_size(f);
    [
        PlaneGrid::new((g.w, g.h)),
        PlaneGrid::new(c),
        PlaneGrid::new(c),
    ]
}

fn create(info: &InstanceInfo<'_>, geom: Geometry, offset: usize) -> Result<Box<dyn GpuPlan>> {
    (psnr_hvs::DEF.check)(info.opts, &info.format)?;
    let planes = grids(geom, &info.format);
    if planes.iter().any(|p| p.terms() > i32::MAX as usize / 4) {
        return Err(Error::Unsupported(format!(
            "psnr_hvs on CUDA: a {}x{} picture is too large",
            geom.w, geom.h
        )));
    }
    let (csfs, masks) = psnr_hvs::tables();
    let flat = |t: &[[f32; 8]; 8]| -> [f32; 64] {
        let mut f = [0f32; 64];
        for (d, s) in f.iter_mut().zip(t.iter().flatten()) {
            *d = *s;
        }
        f
    };
    Ok(Box::new(PsnrHvsPlan {
        cols: info.columns.clone(),
        offset,
        planes,
        csfs: [0, 1, 2].map(|p| flat(&csfs[p])),
        masks: [0, 1, 2].map(|p| flat(&masks[p])),
        bpc: u32::from(info.format.bpc),
    }))
}

/// Every plane's term buffer (`f32`, 64 per block), shared by every instance of the stream (the
/// work of one stream runs in order, and every instance computes the same).
struct PsnrHvsScratch {
    terms: [DevBuf; 3],
}

impl ScratchBufs for PsnrHvsScratch {
    fn bytes(&self) -> usize {
        self.terms.iter().map(|b| b.bytes).sum()
    }
}

struct PsnrHvsPlan {
    /// Its four output columns.
    cols: Range<usize>,
    /// First of its three result slots: each plane's sum (`f32` bits).
    offset: usize,
    planes: [PlaneGrid; 3],
    /// The CSF tables and masking weights per plane, row-major.
    csfs: [[f32; 64]; 3],
    masks: [[f32; 64]; 3],
    bpc: u32,
}

impl PsnrHvsPlan {
    /// Plane `p` (0 luma, 1 Cb, 2 Cr) of a frame and its sample step, checked against the row
    /// read.
    fn source(
        &self,
        luma: SrcPlane,
        chroma: Option<ChromaIo>,
        p: usize,
        bps: usize,
    ) -> Result<(SrcPlane, i32)> {
        if p == 0 {
            return Ok((luma, 1));
        }
        let c = chroma.ok_or_else(|| {
            Error::InvalidOption(
                "psnr_hvs reads chroma on the GPU, but a CUDA frame came without chroma planes"
                    .into(),
            )
        })?;
        let w = self.planes[p].w;
        let need = (w as u64 - 1) * c.step as u64 * bps as u64 + bps as u64;
        let plane = c.planes[p - 1];
        if plane.ptr == 0 || plane.pitch < need {
            return Err(Error::InvalidOption(format!(
                "psnr_hvs: a CUDA frame's chroma plane is missing or its pitch {} is below the \
                 {need} bytes a row needs",
                plane.pitch
            )));
        }
        Ok((plane, c.step))
    }
}

impl GpuPlan for PsnrHvsPlan {
    fn name(&self) -> &'static str {
        GPU.extractor.name
    }

    fn results_len(&self) -> usize {
        3
    }

    fn alloc_scratch(&self, s: &mut Scratch, _: Geometry, _: sys::CUstream) -> Result<()> {
        s.get_or_alloc(|| {
            let buf = |p: &PlaneGrid| DevBuf::new(p.terms() * 4, "psnr_hvs block terms");
            Ok(PsnrHvsScratch {
                terms: [
                    buf(&self.planes[0])?,
                    buf(&self.planes[1])?,
                    buf(&self.planes[2])?,
                ],
            })
        })
    }

    fn enqueue(&self, io: &FrameIo, c: &Ctx<'_>) -> Result<()> {
        if !io.meta.scored {
            return Ok(());
        }
        let s = c.scratch.get::<PsnrHvsScratch>();
        let g = c.geom;
        let bps = g.bytes_per_sample();
        let k = &c.k.psnr_hvs;
        let block = if g.eight_bit() {
            k.block_u8
        } else {
            k.block_u16
        };
        for (p, grid) in self.planes.iter().enumerate() {
            let (reference, step_ref) = self.source(io.reference, io.reference_chroma, p, bps)?;
            let (distorted, step_dis) = self.source(io.distorted, io.distorted_chroma, p, bps)?;
            let args = PsnrHvsBlockArgs {
                reference,
                distorted,
                terms: s.terms[p].ptr,
                csf: self.csfs[p],
                mask: self.masks[p],
                nbx: grid.nbx as i32,
                nby: grid.nby as i32,
                step_ref,
                step_dis,
            };
            // SAFETY: PsnrHvsBlockArgs mirrors psnr_hvs.cu; both planes are live borrowed frames
            // (held until the frame's event) whose rows hold the samples read (the blocks lie
            // inside libvmaf's plane size; checked in `source` for chroma, by the scorer for
            // luma); `terms` holds the plane's nbx * nby * 64 floats.
            unsafe {
                launch(
                    block,
                    (grid.nbx.div_ceil(BX as usize) as u32, grid.nby as u32, 1),
                    BX,
                    c.stream,
                    &args,
                    "psnr_hvs blocks",
                )?
            };
        }
        let sum = PsnrHvsSumArgs {
            terms: [0, 1, 2].map(|p| s.terms[p].ptr),
            out: [0, 1, 2].map(|p| c.result(self.offset + p)),
            n: [0, 1, 2].map(|p| self.planes[p].terms() as i32),
            pad_: 0,
        };
        // SAFETY: PsnrHvsSumArgs mirrors psnr_hvs.cu; each term buffer holds n[p] floats written
        // by the block kernels before on this stream; the three slots are the instance's,
        // inside the result block.
        unsafe {
            launch(
                k.sum,
                (3, 1, 1),
                PSNR_HVS_SUM_THREADS,
                c.stream,
                &sum,
                "psnr_hvs sums",
            )
        }
    }

    fn finish(&mut self, res: &[u64], io: FrameMeta, _: Geometry, row: &mut [f64]) {
        if !io.scored {
            return;
        }
        // The sum kernel stores each plane's f32 bits in the low half of its slot; the CPU
        // counts 64 coefficients per block in an i32.
        let s = [0, 1, 2].map(|p| {
            let ret = f32::from_bits(res[self.offset + p] as u32);
            psnr_hvs::plane_value(ret, self.planes[p].terms() as i32, self.bpc)
        });
        row[self.cols.clone()].copy_from_slice(&psnr_hvs::outputs(s));
    }
}
