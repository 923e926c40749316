//! PSNR on the GPU: the sum of squared differences of each plane (luma, and Cb/Cr straight from
//! the CUDA frames, planar or interleaved), reduced to one `u64` per plane on the device (the
//! kernels of `kernels/psnr.cu`); the host turns them into values and stream totals with the CPU
//! extractor's own code (`feature::psnr::PsnrValues`), so `psnr_*`, `mse_*` and `apsnr_*` are the
//! CPU's.

use super::super::driver::launch;
use super::super::kernels::{blocks, PsnrArgs, SrcPlane, BX, PSNR_ROWS};
use super::{ChromaIo, Ctx, FrameIo, FrameMeta, Geometry, GpuDef, GpuPlan, Scratch};
use crate::engine::InstanceInfo;
use crate::error::{Error, Result};
use crate::feature::psnr::{self, PsnrValues};
use cudarc::driver::sys;
use std::ops::Range;

/// PSNR's entry in the CUDA registry.
pub(super) static GPU: GpuDef = GpuDef {
    extractor: &psnr::DEF,
    create,
    supports: super::every_instance,
};

fn create(info: &InstanceInfo<'_>, _geom: Geometry, offset: usize) -> Result<Box<dyn GpuPlan>> {
    // The CPU extractor's checks and messages (supported bit depths).
    (psnr::DEF.check)(info.opts, &info.format)?;
    let values = PsnrValues::new(info.opts, &info.format);
    Ok(Box::new(PsnrPlan {
        cols: info.columns.clone(),
        offset,
        sizes: [0, 1, 2].map(|p| psnr::plane_size(&info.format, p)),
        values,
        totals: [0; 6],
    }))
}

struct PsnrPlan {
    cols: Range<usize>,
    /// First result slot: one `u64` SSE per plane scored.
    offset: usize,
    /// libvmaf's size of each plane (chroma rounded down).
    sizes: [(usize, usize); 3],
    values: PsnrValues,
    /// (sse, samples) per plane over every frame: the `apsnr_*` aggregate's totals.
    totals: [u64; 6],
}

impl PsnrPlan {
    /// The plane pair `p` (0 luma, 1 Cb, 2 Cr) and its sample step, checked against the size read.
    fn pair(&self, io: &FrameIo, p: usize, bps: usize) -> Result<(SrcPlane, SrcPlane, i32)> {
        if p == 0 {
            return Ok((io.reference, io.distorted, 1));
        }
        let missing = || {
            Error::InvalidOption(
                "psnr reads chroma on the GPU, but a CUDA frame came without chroma planes".into(),
            )
        };
        let (r, d): (ChromaIo, ChromaIo) = (
            io.reference_chroma.ok_or_else(missing)?,
            io.distorted_chroma.ok_or_else(missing)?,
        );
        let w = self.sizes[p].0;
        for c in [&r, &d] {
            let need = (w as u64 - 1) * c.step as u64 * bps as u64 + bps as u64;
            let plane = &c.planes[p - 1];
            if plane.ptr == 0 || plane.pitch < need {
                return Err(Error::InvalidOption(format!(
                    "psnr: a CUDA frame's chroma plane is missing or its pitch {} is below the \
                     {need} bytes a row needs",
                    plane.pitch
                )));
            }
        }
        Ok((r.planes[p - 1], d.planes[p - 1], r.step))
    }
}

impl GpuPlan for PsnrPlan {
    fn name(&self) -> &'static str {
        GPU.extractor.name
    }

    fn results_len(&self) -> usize {
        self.values.planes
    }

    fn reads_unscored_distorted(&self) -> bool {
        // Every frame counts in the aggregate, as on the CPU (`every_frame`).
        true
    }

    fn alloc_scratch(&self, _: &mut Scratch, _: Geometry, _: sys::CUstream) -> Result<()> {
        Ok(()) // the sums go straight to the result block
    }

    fn enqueue(&self, io: &FrameIo, c: &Ctx<'_>) -> Result<()> {
        let bps = c.geom.bytes_per_sample();
        let f = if c.geom.eight_bit() {
            c.k.psnr_sse_u8
        } else {
            c.k.psnr_sse_u16
        };
        for p in 0..self.values.planes {
            let (reference, distorted, step) = self.pair(io, p, bps)?;
            let (w, h) = self.sizes[p];
            let args = PsnrArgs {
                reference,
                distorted,
                out: c.result(self.offset + p),
                w: w as i32,
                h: h as i32,
                step,
                pad_: 0,
            };
            // SAFETY: PsnrArgs mirrors psnr.cu; both planes are live borrowed frames (held until
            // the frame's event) whose rows hold the `w` samples read (checked in `pair` for
            // chroma, by the scorer for luma); `out` is inside the result block.
            unsafe {
                launch(
                    f,
                    (blocks(w), h.div_ceil(PSNR_ROWS) as u32, 1),
                    BX,
                    c.stream,
                    &args,
                    "psnr sse",
                )?
            };
        }
        Ok(())
    }

    fn finish(&mut self, res: &[u64], _: FrameMeta, _: Geometry, row: &mut [f64]) {
        let out = &mut row[self.cols.clone()];
        for p in 0..self.values.planes {
            let sse = res[self.offset + p];
            let (w, h) = self.sizes[p];
            let n = (w * h) as u64;
            psnr::add_totals(&mut self.totals, p, sse, n);
            self.values.write(p, sse, n, out);
        }
    }

    fn totals(&self) -> &[u64] {
        &self.totals
    }
}
