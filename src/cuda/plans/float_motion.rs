//! float_motion on the GPU. Each frame's reference planes (luma, and Cb/Cr straight from the CUDA
//! frames with `motion_add_uv`) are blurred as the CPU blurs them, in the same `f32` operations
//! (`kernels/float_motion.cu`), into one of the instance's two blurred buffers per plane (frame
//! `i` into buffer `i % 2`), so the previous frame's blur stays on the device for the next frame;
//! one thread per row sums `|prev - cur|` from left to right in `f32`, and those row sums come
//! back in the result block. The host finishes with the CPU extractor's own functions (the `f32`
//! sum over rows and the division, the planes' `f64` sum, `motion`'s weight and clip); the
//! temporal stage (`motion2`, `motion3`) is the engine's, as on the CPU.
//!
//! With `motion_add_scale1` each blurred frame is also halved with the bilinear scaler's taps and
//! sum (`vmaf_float_motion_half`, kept by frame parity like the blur) and the halves' row sums
//! follow the plane's.

use super::super::driver::{launch, DevBuf};
use super::super::kernels::{
    blocks, FloatMotionBlurArgs, FloatMotionHalfArgs, FloatMotionSadArgs, SrcPlane, BX,
    FLOAT_MOTION_SAD_ROWS,
};
use super::{Ctx, FrameIo, FrameMeta, Geometry, GpuDef, GpuPlan, Scratch, ScratchBufs};
use crate::engine::InstanceInfo;
use crate::error::{Error, Result};
use crate::feature::float_motion::{self, scaled};
use crate::feature::scale::axis_ratio;
use cudarc::driver::sys;

/// float_motion's entry in the CUDA registry.
pub(super) static GPU: GpuDef = GpuDef {
    extractor: &float_motion::DEF,
    create,
    supports,
};

/// The sizes of the planes an instance blurs: luma, then Cb and Cr with `motion_add_uv`.
fn plane_sizes(info: &InstanceInfo<'_>) -> Vec<(usize, usize)> {
    let f = &info.format;
    let mut sizes = vec![(f.width, f.height)];
    if info.opts.bool("motion_add_uv") {
        let c = float_motion::chroma_size(f);
        sizes.extend([c, c]);
    }
    sizes
}

/// Every instance, but a halving that would keep a size (the scaler then copies; no picture of
/// at least 16x16 samples, chroma 8x8, has one).
fn supports(info: &InstanceInfo<'_>) -> bool {
    !info.opts.bool("motion_add_scale1")
        || plane_sizes(info)
            .iter()
            .all(|&(w, h)| scaled(w) != w && scaled(h) != h)
}

fn create(info: &InstanceInfo<'_>, _geom: Geometry, offset: usize) -> Result<Box<dyn GpuPlan>> {
    // The CPU extractor's checks and messages (bit depths, motion_add_uv on gray input, the
    // scaler's widest output, motion_add_scale1 with subsampled chroma).
    (float_motion::DEF.check)(info.opts, &info.format)?;
    let add_scale1 = info.opts.bool("motion_add_scale1");
    let mut first_row = 0;
    let planes = plane_sizes(info)
        .into_iter()
        .map(|(w, h)| {
            let at = first_row;
            first_row += h;
            let half = add_scale1.then(|| {
                let (sw, sh) = (scaled(w), scaled(h));
                let half = Half {
                    w: sw,
                    h: sh,
                    first_row,
                    ratio_x: axis_ratio(w, sw),
                    ratio_y: axis_ratio(h, sh),
                };
                first_row += sh;
                half
            });
            PlaneSpec {
                w,
                h,
                first_row: at,
                half,
            }
        })
        .collect();
    let taps = float_motion::filter(info.opts.int("motion_filter_size"));
    let mut filter = [0.0f32; 5];
    filter[..taps.len()].copy_from_slice(taps);
    let force_zero = info.opts.bool("motion_force_zero");
    Ok(Box::new(FloatMotionPlan {
        col: info.columns.start,
        offset,
        results: if force_zero { 0 } else { first_row },
        planes,
        filter,
        ntaps: taps.len() as i32,
        force_zero,
        fps_weight: info.opts.f64("motion_fps_weight"),
        max_val: info.opts.f64("motion_max_val"),
    }))
}

/// One plane an instance blurs (luma, Cb, Cr) and where its row sums go.
struct PlaneSpec {
    w: usize,
    h: usize,
    /// Its first row-sum slot, counted from the instance's first result slot.
    first_row: usize,
    /// `motion_add_scale1`'s halving.
    half: Option<Half>,
}

/// A plane's halved size, its row sums' first slot and the scaler's steps.
struct Half {
    w: usize,
    h: usize,
    first_row: usize,
    ratio_x: f32,
    ratio_y: f32,
}

/// One instance's device buffers: the vertical pass (luma-sized, reused for every plane) and two
/// blurred frames per plane (this frame's and the previous one's, by frame parity), and as many
/// halved ones with `motion_add_scale1`.
struct FloatMotionScratch {
    tmp: DevBuf,
    blurred: Vec<[DevBuf; 2]>,
    halves: Vec<[DevBuf; 2]>,
}

impl ScratchBufs for FloatMotionScratch {
    fn bytes(&self) -> usize {
        let sum = |v: &[[DevBuf; 2]]| v.iter().flatten().map(|b| b.bytes).sum::<usize>();
        self.tmp.bytes + sum(&self.blurred) + sum(&self.halves)
    }
}

struct FloatMotionPlan {
    col: usize,
    /// First result slot: each plane's row sums (`f32` bits), luma, then Cb and Cr.
    offset: usize,
    results: usize,
    planes: Vec<PlaneSpec>,
    /// The taps, `ntaps` of them.
    filter: [f32; 5],
    ntaps: i32,
    force_zero: bool,
    fps_weight: f64,
    max_val: f64,
}

impl FloatMotionPlan {
    /// Plane `p` (0 luma, 1 Cb, 2 Cr) of this frame's reference and its sample step, checked
    /// against the row read.
    fn source(&self, io: &FrameIo, p: usize, bps: usize) -> Result<(SrcPlane, i32)> {
        if p == 0 {
            return Ok((io.reference, 1));
        }
        let c = io.reference_chroma.ok_or_else(|| {
            Error::InvalidOption(
                "float_motion reads chroma on the GPU (motion_add_uv), but a CUDA frame came \
                 without chroma planes"
                    .into(),
            )
        })?;
        let w = self.planes[p].w;
        let need = (w as u64 - 1) * c.step as u64 * bps as u64 + bps as u64;
        let plane = c.planes[p - 1];
        if plane.ptr == 0 || plane.pitch < need {
            return Err(Error::InvalidOption(format!(
                "float_motion: a CUDA frame's chroma plane is missing or its pitch {} is below \
                 the {need} bytes a row needs",
                plane.pitch
            )));
        }
        Ok((plane, c.step))
    }
}

impl GpuPlan for FloatMotionPlan {
    fn name(&self) -> &'static str {
        GPU.extractor.name
    }

    fn results_len(&self) -> usize {
        self.results
    }

    fn alloc_scratch(&self, s: &mut Scratch, _: Geometry, _: sys::CUstream) -> Result<()> {
        if self.force_zero {
            return Ok(()); // nothing to compute
        }
        // Per instance: its blurred frames are state between frames (filters differ).
        s.alloc_for_instance(self.offset, || {
            let luma = &self.planes[0];
            let pair = |w: usize, h: usize, what: &str| -> Result<[DevBuf; 2]> {
                Ok([DevBuf::new(w * h * 4, what)?, DevBuf::new(w * h * 4, what)?])
            };
            Ok(FloatMotionScratch {
                tmp: DevBuf::new(luma.w * luma.h * 4, "float_motion vertical pass")?,
                blurred: self
                    .planes
                    .iter()
                    .map(|p| pair(p.w, p.h, "float_motion blurred frame"))
                    .collect::<Result<_>>()?,
                halves: self
                    .planes
                    .iter()
                    .filter_map(|p| p.half.as_ref())
                    .map(|q| pair(q.w, q.h, "float_motion halved frame"))
                    .collect::<Result<_>>()?,
            })
        })
    }

    fn enqueue(&self, io: &FrameIo, c: &Ctx<'_>) -> Result<()> {
        // Every frame, scored or not: motion2/motion3 need every frame's value, and the next
        // frame the blur.
        if self.force_zero {
            return Ok(());
        }
        let s = c.scratch.for_instance::<FloatMotionScratch>(self.offset);
        let g = c.geom;
        let cur = (io.meta.index % 2) as usize;
        let k = &c.k.float_motion;
        let vblur = if g.eight_bit() {
            k.vblur_u8
        } else {
            k.vblur_u16
        };
        for (p, plane) in self.planes.iter().enumerate() {
            let (src, step) = self.source(io, p, g.bytes_per_sample())?;
            let (w, h) = (plane.w, plane.h);
            let args = FloatMotionBlurArgs {
                src,
                tmp: s.tmp.ptr,
                dst: s.blurred[p][cur].ptr,
                filter: self.filter,
                ntaps: self.ntaps,
                w: w as i32,
                h: h as i32,
                step,
                bpc: g.bpc as i32,
            };
            // SAFETY: FloatMotionBlurArgs mirrors float_motion.cu; `src` is a live borrowed plane
            // (held until the frame's event) whose rows hold the samples read (checked in
            // `source` for chroma, by the scorer for luma); `tmp` holds the luma size, at least
            // w * h floats, and `dst` w * h floats.
            unsafe {
                launch(
                    vblur,
                    (blocks(w), h as u32, 1),
                    BX,
                    c.stream,
                    &args,
                    "float_motion vertical blur",
                )?;
                launch(
                    k.hblur,
                    (blocks(w), h as u32, 1),
                    BX,
                    c.stream,
                    &args,
                    "float_motion horizontal blur",
                )?;
            }
            // (buffers, size, first row slot) of the blurred frames, then of their halves.
            let mut diffs = vec![(&s.blurred[p], w, h, plane.first_row)];
            if let Some(q) = &plane.half {
                // motion_add_scale1 is per instance: every plane has a half, in plane order.
                let halves = &s.halves[p];
                let args = FloatMotionHalfArgs {
                    src: s.blurred[p][cur].ptr,
                    dst: halves[cur].ptr,
                    ratio_x: q.ratio_x,
                    ratio_y: q.ratio_y,
                    w: w as i32,
                    h: h as i32,
                    sw: q.w as i32,
                    sh: q.h as i32,
                };
                // SAFETY: FloatMotionHalfArgs mirrors float_motion.cu; `src` holds the w * h
                // floats just blurred, `dst` q.w * q.h floats; the taps stay inside the plane
                // (mirrored once, as in `Scaler::new`).
                unsafe {
                    launch(
                        k.half,
                        (blocks(q.w), q.h as u32, 1),
                        BX,
                        c.stream,
                        &args,
                        "float_motion halving",
                    )?
                };
                diffs.push((halves, q.w, q.h, q.first_row));
            }
            if io.meta.index == 0 {
                continue; // frame 0 has no previous blur; its values are 0
            }
            for (bufs, w, h, first_row) in diffs {
                let sad = FloatMotionSadArgs {
                    prev: bufs[1 - cur].ptr,
                    cur: bufs[cur].ptr,
                    out: c.result(self.offset + first_row),
                    w: w as i32,
                    h: h as i32,
                };
                // SAFETY: FloatMotionSadArgs mirrors float_motion.cu; both buffers hold w * h
                // floats (the previous frame's, written by its kernels earlier on this stream);
                // `out` is the h slots of these row sums inside the result block.
                unsafe {
                    launch(
                        k.sad,
                        (h.div_ceil(FLOAT_MOTION_SAD_ROWS) as u32, 1, 1),
                        BX,
                        c.stream,
                        &sad,
                        "float_motion row sums",
                    )?
                };
            }
        }
        Ok(())
    }

    fn finish(&mut self, res: &[u64], io: FrameMeta, _: Geometry, row: &mut [f64]) {
        let score = (!self.force_zero && io.index > 0).then(|| {
            // The kernel stores each row's f32 bits in the low half of its slot.
            let mean = |first_row: usize, w: usize, h: usize| {
                let rows = &res[self.offset + first_row..][..h];
                float_motion::mean_of_row_sums(rows.iter().map(|&v| f32::from_bits(v as u32)), w, h)
            };
            float_motion::frame_score(self.planes.iter().map(|p| {
                let scale0 = mean(p.first_row, p.w, p.h);
                match &p.half {
                    None => scale0,
                    Some(q) => float_motion::with_scale1(scale0, mean(q.first_row, q.w, q.h)),
                }
            }))
        });
        row[self.col..self.col + 2].copy_from_slice(&float_motion::spatial_values(
            score,
            self.fps_weight,
            self.max_val,
        ));
    }
}
