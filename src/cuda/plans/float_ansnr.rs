//! float_ansnr on the GPU (`kernels/float_ansnr.cu`), bit-identical to `feature::float_ansnr`.
//!
//! The filter kernel smooths the reference (3×3) and the distorted picture (5×5) straight from
//! the frames, in the CPU's `f32` operations (`picture_copy`'s samples, each output's taps as
//! inner row sums from 0 added row by row, the `-i` / `2n - i - 1` mirror), into two `f32`
//! pictures in the scratch. The row kernel then sums each row's signal `Σ r²` and noise
//! `Σ (r − d)²` in one thread from left to right in `f32`, as `float_ansnr::row_energies`, into
//! `2·h` result slots. The host adds the rows in `f32` in row order and computes both values
//! (the `log10`s) with the CPU module's own `sum_rows` and `values`.

use super::super::driver::{launch, DevBuf};
use super::super::kernels::{
    blocks, FloatAnsnrFilterArgs, FloatAnsnrRowsArgs, BX, FLOAT_ANSNR_ROWS,
};
use super::{
    every_instance, Ctx, FrameIo, FrameMeta, Geometry, GpuDef, GpuPlan, Scratch, ScratchBufs,
};
use crate::engine::InstanceInfo;
use crate::error::{Error, Result};
use crate::feature::float_ansnr::{self, FILTER_DIS, FILTER_REF};
use crate::feature::float_psnr::peak_and_max;
use cudarc::driver::sys;

/// float_ansnr's entry in the CUDA registry.
pub(super) static GPU: GpuDef = GpuDef {
    extractor: &float_ansnr::DEF,
    create,
    supports: every_instance,
};

fn create(info: &InstanceInfo<'_>, _geom: Geometry, offset: usize) -> Result<Box<dyn GpuPlan>> {
    (float_ansnr::DEF.check)(info.opts, &info.format)?;
    let (peak, max) = peak_and_max(info.format.bpc);
    Ok(Box::new(FloatAnsnrPlan {
        col: info.columns.start,
        offset,
        h: info.format.height,
        peak,
        max,
    }))
}

/// The two filtered pictures (`f32`, `w·h` each), shared by every instance of the stream (the
/// work of one stream runs in order, and every instance computes the same).
struct FloatAnsnrScratch {
    reference: DevBuf,
    distorted: DevBuf,
}

impl ScratchBufs for FloatAnsnrScratch {
    fn bytes(&self) -> usize {
        self.reference.bytes + self.distorted.bytes
    }
}

struct FloatAnsnrPlan {
    /// The first of its two output columns (`float_ansnr`, `float_anpsnr`).
    col: usize,
    /// First result slot: the rows' signal energies (`f32` bits), then their noise energies.
    offset: usize,
    h: usize,
    peak: f64,
    max: f64,
}

impl GpuPlan for FloatAnsnrPlan {
    fn name(&self) -> &'static str {
        GPU.extractor.name
    }

    fn results_len(&self) -> usize {
        2 * self.h
    }

    fn alloc_scratch(&self, s: &mut Scratch, g: Geometry, _: sys::CUstream) -> Result<()> {
        s.get_or_alloc(|| {
            if g.w * g.h > i32::MAX as usize / 4 {
                return Err(Error::Unsupported(format!(
                    "float_ansnr on CUDA: a {}x{} picture is too large",
                    g.w, g.h
                )));
            }
            Ok(FloatAnsnrScratch {
                reference: DevBuf::new(g.w * g.h * 4, "float_ansnr filtered reference")?,
                distorted: DevBuf::new(g.w * g.h * 4, "float_ansnr filtered distorted")?,
            })
        })
    }

    fn enqueue(&self, io: &FrameIo, c: &Ctx<'_>) -> Result<()> {
        if !io.meta.scored {
            return Ok(());
        }
        let s = c.scratch.get::<FloatAnsnrScratch>();
        let g = c.geom;
        let k = &c.k.float_ansnr;
        let filter = if g.eight_bit() {
            k.filter_u8
        } else {
            k.filter_u16
        };
        let args = FloatAnsnrFilterArgs {
            reference: io.reference,
            distorted: io.distorted,
            ref_out: s.reference.ptr,
            dis_out: s.distorted.ptr,
            filter_ref: FILTER_REF,
            filter_dis: FILTER_DIS,
            w: g.w as i32,
            h: g.h as i32,
            bpc: g.bpc as i32,
            pad_: 0,
        };
        let rows = FloatAnsnrRowsArgs {
            reference: s.reference.ptr,
            distorted: s.distorted.ptr,
            out: c.result(self.offset),
            w: g.w as i32,
            h: g.h as i32,
        };
        // SAFETY: FloatAnsnrFilterArgs and FloatAnsnrRowsArgs mirror float_ansnr.cu; both luma
        // planes are live borrowed frames (held until the frame's event, rows checked by the
        // scorer) and the mirrored taps stay inside them (pictures are at least 16x16); both
        // scratch pictures hold w * h floats; `out` and the 2 * h - 1 slots after it are the
        // instance's, inside the result block.
        unsafe {
            launch(
                filter,
                (blocks(g.w), g.h as u32, 1),
                BX,
                c.stream,
                &args,
                "float_ansnr filters",
            )?;
            launch(
                k.rows,
                (g.h.div_ceil(FLOAT_ANSNR_ROWS) as u32, 1, 1),
                BX,
                c.stream,
                &rows,
                "float_ansnr row energies",
            )
        }
    }

    fn finish(&mut self, res: &[u64], io: FrameMeta, g: Geometry, row: &mut [f64]) {
        if !io.scored {
            return;
        }
        // The kernel stores each row's f32 bits in the low half of its slot.
        let bits = |v: u64| f32::from_bits(v as u32);
        let sig = &res[self.offset..][..self.h];
        let noise = &res[self.offset + self.h..][..self.h];
        let (sig, noise) =
            float_ansnr::sum_rows(sig.iter().zip(noise).map(|(&s, &n)| (bits(s), bits(n))));
        row[self.col..self.col + 2].copy_from_slice(&float_ansnr::values(
            sig, noise, self.peak, self.max, g.w, g.h,
        ));
    }
}
