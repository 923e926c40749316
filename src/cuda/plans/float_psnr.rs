//! float_psnr on the GPU. libvmaf sums `f32` squares of `f32` differences in `f64`, in raster
//! order; every one of those terms and partial sums is exact here, so an integer sum gives the
//! same `f64`:
//!
//! * 8, 10 and 12 bits: the samples divided by 1, 4 or 16 are exact, their difference `k / s` too,
//!   and its square `k² / s²` has at most 24 significant bits, so the sum is `SSE / s²` with the
//!   integer SSE of the raw samples (psnr's kernel) below 2^53;
//! * 16 bits: the `f32` square rounds; `vmaf_float_psnr_sq_u16` rounds it as the CPU does and sums
//!   it in units of 2^-16, exact while the total stays below 2^53 units, which pictures of at
//!   most 2^21 samples guarantee (larger 16-bit pictures run on the CPU fallback).
//!
//! The value then comes from the CPU extractor's own `float_psnr::value`.

use super::super::driver::launch;
use super::super::kernels::{blocks, PsnrArgs, BX, PSNR_ROWS};
use super::{Ctx, FrameIo, FrameMeta, Geometry, GpuDef, GpuPlan, Scratch};
use crate::engine::InstanceInfo;
use crate::error::Result;
use crate::feature::float_psnr;
use cudarc::driver::sys;

/// float_psnr's entry in the CUDA registry.
pub(super) static GPU: GpuDef = GpuDef {
    extractor: &float_psnr::DEF,
    create,
    supports,
};

/// Most samples of a 16-bit picture whose sum stays exact (see the module comment).
const MAX_SAMPLES_16BIT: usize = 1 << 21;

fn supports(info: &InstanceInfo<'_>) -> bool {
    let f = info.format;
    f.bpc <= 12 || f.width * f.height <= MAX_SAMPLES_16BIT
}

fn create(info: &InstanceInfo<'_>, _geom: Geometry, offset: usize) -> Result<Box<dyn GpuPlan>> {
    (float_psnr::DEF.check)(info.opts, &info.format)?;
    let (peak, max) = float_psnr::peak_and_max(info.format.bpc);
    Ok(Box::new(FloatPsnrPlan {
        col: info.columns.start,
        offset,
        peak,
        max,
    }))
}

struct FloatPsnrPlan {
    col: usize,
    /// Result slot: the frame's sum (SSE, or 2^-16 units at 16 bits).
    offset: usize,
    peak: f64,
    max: f64,
}

impl GpuPlan for FloatPsnrPlan {
    fn name(&self) -> &'static str {
        GPU.extractor.name
    }

    fn results_len(&self) -> usize {
        1
    }

    fn alloc_scratch(&self, _: &mut Scratch, _: Geometry, _: sys::CUstream) -> Result<()> {
        Ok(()) // the sum goes straight to the result block
    }

    fn enqueue(&self, io: &FrameIo, c: &Ctx<'_>) -> Result<()> {
        if !io.meta.scored {
            return Ok(());
        }
        let g = c.geom;
        let f = match g.bpc {
            8 => c.k.psnr_sse_u8,
            16 => c.k.float_psnr_sq_u16,
            _ => c.k.psnr_sse_u16,
        };
        let args = PsnrArgs {
            reference: io.reference,
            distorted: io.distorted,
            out: c.result(self.offset),
            w: g.w as i32,
            h: g.h as i32,
            step: 1,
            pad_: 0,
        };
        // SAFETY: PsnrArgs mirrors psnr.cu; both luma planes are live borrowed frames (held until
        // the frame's event, rows checked by the scorer); `out` is inside the result block.
        unsafe {
            launch(
                f,
                (blocks(g.w), g.h.div_ceil(PSNR_ROWS) as u32, 1),
                BX,
                c.stream,
                &args,
                "float_psnr",
            )
        }
    }

    fn finish(&mut self, res: &[u64], io: FrameMeta, g: Geometry, row: &mut [f64]) {
        if !io.scored {
            return;
        }
        // Exact conversions: the sums are below 2^53 and the divisors powers of two.
        let units = res[self.offset] as f64;
        let noise = match g.bpc {
            8 => units,
            10 => units / 16.0,
            12 => units / 256.0,
            _ => units / 65536.0,
        };
        row[self.col] = float_psnr::value(noise, g.w * g.h, self.peak, self.max);
    }
}
