//! Motion on the GPU: the SAD of the blurred reference against the previous (or, in five-frame
//! mode, two-back) reference, summed per row in integers and reduced on the device; the host
//! scales it as `feature::motion` does.

use super::super::driver::{launch, DevBuf};
use super::super::kernels::{blocks, MotionArgs, MotionFinishArgs, MOTION_ROWS, MOTION_THREADS};
use super::{Ctx, FrameIo, FrameMeta, Geometry, GpuDef, GpuPlan, Scratch, ScratchBufs};
use crate::engine::InstanceInfo;
use crate::error::{Error, Result};
use crate::feature::options::OptValues;
use cudarc::driver::sys;
use std::ops::Range;

/// Motion's entry in the CUDA registry.
pub(super) static GPU: GpuDef = GpuDef {
    extractor: &crate::feature::motion::DEF,
    create,
    supports: super::every_instance,
};

fn create(info: &InstanceInfo<'_>, _geom: Geometry, offset: usize) -> Result<Box<dyn GpuPlan>> {
    Ok(Box::new(MotionPlan::new(
        info.opts,
        info.columns.clone(),
        offset,
    )?))
}

/// Result slots: the frame's SAD sum.
const RESULTS: usize = 1;

/// Per-row SAD sums (`u32` per row).
struct MotionScratch {
    rows: DevBuf,
}

impl ScratchBufs for MotionScratch {
    fn bytes(&self) -> usize {
        self.rows.bytes
    }
}

struct MotionPlan {
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

    fn enqueue_impl(&self, io: &FrameIo, c: &Ctx<'_>) -> Result<()> {
        if self.force_zero || io.meta.index < self.min_idx {
            return Ok(());
        }
        let prev = if self.five_frame {
            io.prev_prev
        } else {
            io.prev
        };
        let prev =
            prev.ok_or_else(|| Error::Internal("motion: previous reference missing".into()))?;
        let rows = &c.scratch.get::<MotionScratch>().rows;
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
            launch(
                f,
                (blocks(g.w), g.h.div_ceil(MOTION_ROWS) as u32, 1),
                MOTION_THREADS,
                c.stream,
                &args,
                "motion sad",
            )?
        };
        let fin = MotionFinishArgs {
            row_sums: rows.ptr,
            out: c.result(self.offset),
            h: g.h as i32,
            pad_: 0,
        };
        // SAFETY: MotionFinishArgs mirrors motion.cu; `out` is inside the result block.
        unsafe {
            launch(
                c.k.motion_finish,
                (1, 1, 1),
                256,
                c.stream,
                &fin,
                "motion finish",
            )
        }
    }

    fn finish_impl(&self, res: &[u64], index: u64, g: Geometry, row: &mut [f64]) {
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

impl GpuPlan for MotionPlan {
    fn name(&self) -> &'static str {
        GPU.extractor.name
    }

    fn results_len(&self) -> usize {
        RESULTS
    }

    fn ref_lag(&self) -> u64 {
        if self.force_zero {
            0
        } else {
            self.min_idx
        }
    }

    fn alloc_scratch(&self, s: &mut Scratch, g: Geometry, _stream: sys::CUstream) -> Result<()> {
        s.get_or_alloc(|| {
            Ok(MotionScratch {
                rows: DevBuf::new(g.h * 4, "motion row sums")?,
            })
        })
    }

    fn enqueue(&self, io: &FrameIo, c: &Ctx<'_>) -> Result<()> {
        // Every frame, scored or not: motion2/motion3 need every frame's value.
        self.enqueue_impl(io, c)
    }

    fn finish(&mut self, res: &[u64], io: FrameMeta, g: Geometry, row: &mut [f64]) {
        self.finish_impl(res, io.index, g, row)
    }
}
