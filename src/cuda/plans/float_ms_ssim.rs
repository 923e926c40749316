//! float_ms_ssim on the GPU (kernels of `kernels/ssim.cu`), bit-identical to
//! `feature::float_ms_ssim`:
//!
//! * scales 1 to 4: the 9x9 low-pass decimation by two of the scale above (the frames for
//!   scale 1, then our packed `f32` pictures), out of place as the CPU does it, one thread per
//!   output pixel in `iqa::scalar::filter_pixel`'s `f32`/`f64` operations and tap order;
//! * every scale's SSIM map through float_ssim's terms and sum kernels
//!   ([`super::float_ssim::enqueue_ssim_sums`]): the per-pixel terms in parallel, then one
//!   thread adding them in raster order, the CPU's sequential `f64` sums exactly, kept as `f64`
//!   bits in the scale's four result slots;
//! * the host turns each scale's sums into its means (`iqa::Lcs::from_sums`) and writes the
//!   outputs with the CPU extractor's own code (`float_ms_ssim::Outputs`: the powers, their
//!   product over the scales, dB and clip).

use super::super::driver::{launch, DevBuf};
use super::super::kernels::{blocks, FloatMsSsimDecimateArgs, SrcPlane, BX};
use super::float_ssim::{chunk_capacity, divisor, enqueue_ssim_sums, SsimPicture};
use super::{
    packed_plane, Ctx, FrameIo, FrameMeta, Geometry, GpuDef, GpuPlan, Scratch, ScratchBufs,
};
use crate::engine::InstanceInfo;
use crate::error::{Error, Result};
use crate::feature::float_ms_ssim::{self, Outputs, LPF, SCALES};
use crate::feature::iqa::{Lcs, WINDOW};
use cudarc::driver::sys;
use std::ops::Range;

/// float_ms_ssim's entry in the CUDA registry.
pub(super) static GPU: GpuDef = GpuDef {
    extractor: &float_ms_ssim::DEF,
    create,
    supports: super::every_instance,
};

/// Result slots per scale: the four sums of its SSIM map (`f64` bits), as float_ssim's.
const SUMS: usize = 4;
/// Result slots: [`SUMS`] per scale, scale 0 first.
const RESULTS: usize = SUMS * SCALES;

fn create(info: &InstanceInfo<'_>, _geom: Geometry, offset: usize) -> Result<Box<dyn GpuPlan>> {
    // The CPU extractor's checks and messages (bit depths, the smallest size).
    (float_ms_ssim::DEF.check)(info.opts, &info.format)?;
    let f = &info.format;
    Ok(Box::new(FloatMsSsimPlan {
        cols: info.columns.clone(),
        offset,
        sizes: float_ms_ssim::scale_sizes(f.width, f.height),
        outputs: Outputs::new(info.opts, f),
    }))
}

/// The pictures of scales 1 to 4 and one chunk's terms.
struct FloatMsSsimScratch {
    /// `f32` reference and distorted pictures of scales 1 to 4, packed.
    pictures: Vec<(DevBuf, DevBuf)>,
    /// `f64[4][cap]`: the terms `(l c s, l, c, s)` of one chunk of a scale's map.
    terms: DevBuf,
    cap: usize,
}

impl ScratchBufs for FloatMsSsimScratch {
    fn bytes(&self) -> usize {
        let pics: usize = self.pictures.iter().map(|(r, d)| r.bytes + d.bytes).sum();
        pics + self.terms.bytes
    }
}

struct FloatMsSsimPlan {
    cols: Range<usize>,
    /// First of the [`RESULTS`] result slots.
    offset: usize,
    /// Every scale's picture size.
    sizes: [(usize, usize); SCALES],
    outputs: Outputs,
}

impl FloatMsSsimPlan {
    fn enqueue_impl(&self, io: &FrameIo, c: &Ctx<'_>) -> Result<()> {
        let g = c.geom;
        let sc = c.scratch.get::<FloatMsSsimScratch>();
        let eight = g.eight_bit();
        let div = divisor(g.bpc);
        let frame_terms = c.k.float_ssim.terms[usize::from(!eight)];
        let float_terms = c.k.float_ssim.terms[2];
        // Scale 0 reads the frames; scale s > 0 our pictures, decimated from scale s - 1.
        let mut src: (SrcPlane, SrcPlane) = (io.reference, io.distorted);
        for (s, &(w, h)) in self.sizes.iter().enumerate() {
            if s > 0 {
                let (pw, ph) = self.sizes[s - 1];
                let (pr, pd) = &sc.pictures[s - 1];
                let args = FloatMsSsimDecimateArgs {
                    reference: src.0,
                    distorted: src.1,
                    out_ref: pr.ptr,
                    out_dis: pd.ptr,
                    w: pw as i32,
                    h: ph as i32,
                    sw: w as i32,
                    sh: h as i32,
                    divisor: div,
                    pad_: 0,
                    lpf: LPF,
                    pad2_: 0,
                };
                let f = if s == 1 {
                    c.k.float_ms_ssim.decimate[usize::from(!eight)]
                } else {
                    c.k.float_ms_ssim.decimate[2]
                };
                // SAFETY: FloatMsSsimDecimateArgs mirrors ssim.cu; the sources are the live
                // borrowed frames of w x h luma samples (scale 1; held until the frame's event,
                // rows checked by the scorer) or our packed pw x ph picture of scale s - 1
                // written before on this stream, read at mirrored coordinates inside them (every
                // scale is at least 11 x 11: the extractor's check); the outputs hold w x h
                // floats of scale s (allocated from the same sizes).
                unsafe {
                    launch(
                        f,
                        (blocks(w), h as u32, 1),
                        BX,
                        c.stream,
                        &args,
                        "float_ms_ssim decimate",
                    )?
                };
                src = (packed_plane(pr, w, 4), packed_plane(pd, w, 4));
            }
            let pic = SsimPicture {
                reference: src.0,
                distorted: src.1,
                terms_fn: if s == 0 { frame_terms } else { float_terms },
                w,
                h,
                divisor: div,
            };
            let out = c.result(self.offset + SUMS * s);
            enqueue_ssim_sums(c, &pic, &sc.terms, sc.cap, out, "float_ms_ssim")?;
        }
        Ok(())
    }
}

impl GpuPlan for FloatMsSsimPlan {
    fn name(&self) -> &'static str {
        GPU.extractor.name
    }

    fn results_len(&self) -> usize {
        RESULTS
    }

    fn alloc_scratch(&self, s: &mut Scratch, g: Geometry, _stream: sys::CUstream) -> Result<()> {
        s.get_or_alloc(|| {
            // The same sizes for every instance of the stream: they share them.
            let cap = chunk_capacity(g.w, g.h);
            if cap > i32::MAX as usize / 4 || g.w * g.h > i32::MAX as usize {
                return Err(Error::Unsupported(format!(
                    "float_ms_ssim on CUDA: a {}x{} picture is too large",
                    g.w, g.h
                )));
            }
            let sizes = float_ms_ssim::scale_sizes(g.w, g.h);
            let mut pictures = Vec::with_capacity(SCALES - 1);
            for &(w, h) in &sizes[1..] {
                pictures.push((
                    DevBuf::new(w * h * 4, "float_ms_ssim picture")?,
                    DevBuf::new(w * h * 4, "float_ms_ssim picture")?,
                ));
            }
            Ok(FloatMsSsimScratch {
                pictures,
                terms: DevBuf::new(4 * cap * 8, "float_ms_ssim terms")?,
                cap,
            })
        })
    }

    fn enqueue(&self, io: &FrameIo, c: &Ctx<'_>) -> Result<()> {
        if io.meta.scored {
            self.enqueue_impl(io, c)?;
        }
        Ok(())
    }

    fn finish(&mut self, res: &[u64], io: FrameMeta, _geom: Geometry, row: &mut [f64]) {
        if !io.scored {
            return;
        }
        let s = &res[self.offset..self.offset + RESULTS];
        let values: [Lcs; SCALES] = std::array::from_fn(|i| {
            let sums = std::array::from_fn(|k| f64::from_bits(s[SUMS * i + k]));
            let (w, h) = self.sizes[i];
            Lcs::from_sums(sums, (w + 1 - WINDOW) * (h + 1 - WINDOW))
        });
        // The CPU fails the frame when the product becomes infinite, which cannot happen: every
        // mean is of finite terms bounded near 1 (their denominators are at least C1, C2 or
        // C3 > 0) and is raised to a power below 1, so `Err` is unreachable here (were it
        // reached, the score slot would keep the row's previous value).
        let _ = self.outputs.write(&values, &mut row[self.cols.clone()]);
    }
}
