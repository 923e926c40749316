//! float_ssim on the GPU (the kernels of `kernels/ssim.cu`), bit-identical to
//! `feature::float_ssim`:
//!
//! * scale above 1: the box low-pass decimation of both frames into packed `f32` pictures, out of
//!   place; libvmaf decimates in place, which reads only original pixels for every size it can
//!   score (`iqa::decimate_in_place_reads_originals`; an instance where it would not stays on the
//!   CPU);
//! * the per-pixel SSIM terms (both Gaussian passes of the five maps, `iqa::scalar::ssim_terms`)
//!   in parallel, in the CPU's `f32`/`f64` operations and order, into an `f64` buffer, in chunks
//!   of output rows so that the buffer stays small whatever the scale;
//! * after each chunk one thread adds its terms to the four sums in raster order, the CPU's
//!   sequential `f64` sums exactly, kept as `f64` bits in the instance's four result slots;
//! * the host divides them and writes the outputs with the CPU extractor's own code
//!   (`iqa::Lcs::from_sums`, `float_ssim::Outputs`).

use super::super::driver::{launch, DevBuf};
use super::super::kernels::{
    blocks, FloatSsimDecimateArgs, FloatSsimSumArgs, FloatSsimTermsArgs, SrcPlane, BX,
    SSIM_THREADS, SSIM_TILE,
};
use super::{
    packed_plane, Ctx, FrameIo, FrameMeta, Geometry, GpuDef, GpuPlan, Scratch, ScratchBufs,
};
use crate::engine::InstanceInfo;
use crate::error::{Error, Result};
use crate::feature::float_ssim::{self, Outputs};
use crate::feature::iqa::{self, scalar, Lcs, WINDOW};
use cudarc::driver::sys;
use std::ops::Range;

/// float_ssim's entry in the CUDA registry.
pub(super) static GPU: GpuDef = GpuDef {
    extractor: &float_ssim::DEF,
    create,
    supports,
};

/// Result slots: the four sums of the SSIM map (`f64` bits).
const RESULTS: usize = 4;
/// Pixels of the SSIM map whose terms one chunk holds (at least one row of the map).
const CHUNK_PIXELS: usize = 1 << 18;

fn supports(info: &InstanceInfo<'_>) -> bool {
    let f = info.format;
    let s = float_ssim::scale(info.opts, &f);
    s == 1 || iqa::decimate_in_place_reads_originals(f.width, f.height, s, s)
}

fn create(info: &InstanceInfo<'_>, _geom: Geometry, offset: usize) -> Result<Box<dyn GpuPlan>> {
    // The CPU extractor's checks and messages (bit depths, the size after decimation).
    (float_ssim::DEF.check)(info.opts, &info.format)?;
    let (o, f) = (info.opts, &info.format);
    let scale = float_ssim::scale(o, f);
    let (sw, sh) = float_ssim::scaled_size(o, f);
    Ok(Box::new(FloatSsimPlan {
        cols: info.columns.clone(),
        offset,
        scale,
        sw,
        sh,
        outputs: Outputs::new(o, f),
    }))
}

/// The terms capacity (pixels) of the chunk buffer for a `w`x`h` stream: enough for every scale's
/// map in chunks of whole rows, so instances of any scale share it.
pub(super) fn chunk_capacity(w: usize, h: usize) -> usize {
    let (dw, dh) = (w + 1 - WINDOW, h + 1 - WINDOW);
    (dw * dh).min(CHUNK_PIXELS.max(dw))
}

/// The decimated pictures (for any scale above 1) and the chunk's terms.
struct FloatSsimScratch {
    /// `f32` reference and distorted pictures, packed, sized for scale 2 (the largest).
    pictures: (DevBuf, DevBuf),
    /// `f64[4][cap]`: the terms `(l c s, l, c, s)` of one chunk.
    terms: DevBuf,
    cap: usize,
}

impl ScratchBufs for FloatSsimScratch {
    fn bytes(&self) -> usize {
        self.pictures.0.bytes + self.pictures.1.bytes + self.terms.bytes
    }
}

struct FloatSsimPlan {
    cols: Range<usize>,
    /// First of the four result slots.
    offset: usize,
    scale: usize,
    /// The SSIM picture's size (after decimation).
    sw: usize,
    sh: usize,
    outputs: Outputs,
}

/// `picture_copy::to_float`'s divisor for `bpc`-bit samples.
pub(super) fn divisor(bpc: u8) -> f32 {
    match bpc {
        8 => 1.0,
        10 => 4.0,
        12 => 16.0,
        _ => 256.0,
    }
}

impl FloatSsimPlan {
    fn enqueue_impl(&self, io: &FrameIo, c: &Ctx<'_>) -> Result<()> {
        let g = c.geom;
        let sc = c.scratch.get::<FloatSsimScratch>();
        let eight = g.eight_bit();
        let div = divisor(g.bpc);
        let (reference, distorted, terms_fn) = if self.scale > 1 {
            let (pr, pd) = &sc.pictures;
            let args = FloatSsimDecimateArgs {
                reference: io.reference,
                distorted: io.distorted,
                out_ref: pr.ptr,
                out_dis: pd.ptr,
                w: g.w as i32,
                h: g.h as i32,
                sw: self.sw as i32,
                sh: self.sh as i32,
                factor: self.scale as i32,
                pad_: 0,
                divisor: div,
                tap: float_ssim::low_pass_tap(self.scale),
            };
            let f = c.k.float_ssim.decimate[usize::from(!eight)];
            // SAFETY: FloatSsimDecimateArgs mirrors ssim.cu; both luma planes are live borrowed
            // frames of w x h samples (held until the frame's event, rows checked by the
            // scorer), read at mirrored coordinates inside them; the outputs hold sw x sh floats
            // (sized for scale 2, the largest decimated picture).
            unsafe {
                launch(
                    f,
                    (blocks(self.sw), self.sh as u32, 1),
                    BX,
                    c.stream,
                    &args,
                    "float_ssim decimate",
                )?
            };
            (
                packed_plane(pr, self.sw, 4),
                packed_plane(pd, self.sw, 4),
                c.k.float_ssim.terms[2],
            )
        } else {
            (
                io.reference,
                io.distorted,
                c.k.float_ssim.terms[usize::from(!eight)],
            )
        };
        let out = c.result(self.offset);
        let src = SsimPicture {
            reference,
            distorted,
            terms_fn,
            w: self.sw,
            h: self.sh,
            divisor: div,
        };
        enqueue_ssim_sums(c, &src, &sc.terms, sc.cap, out, "float_ssim")
    }
}

/// One picture pair whose SSIM map [`enqueue_ssim_sums`] sums.
pub(super) struct SsimPicture {
    pub reference: SrcPlane,
    pub distorted: SrcPlane,
    /// `vmaf_float_ssim_terms_*` for the source's samples (frame `u8`/`u16`, or our `f32`).
    pub terms_fn: sys::CUfunction,
    /// The picture's size (at least [`WINDOW`] each way).
    pub w: usize,
    pub h: usize,
    /// `picture_copy::to_float`'s divisor (frame sources).
    pub divisor: f32,
}

/// Queues the SSIM map of `p` in chunks of output rows: each chunk's terms into `terms`
/// (`f64[4][cap]`), then one thread adds them in raster order to the four `f64` sums at device
/// address `out` (zeroed with the result block): the CPU's `iqa::scalar::ssim_sums` exactly.
/// Shared by float_ssim and float_ms_ssim (one call per scale).
pub(super) fn enqueue_ssim_sums(
    c: &Ctx<'_>,
    p: &SsimPicture,
    terms: &DevBuf,
    cap: usize,
    out: u64,
    what: &'static str,
) -> Result<()> {
    let (dw, dh) = (p.w + 1 - WINDOW, p.h + 1 - WINDOW);
    let k = scalar::Constants::new();
    let chunk_rows = (cap / dw).clamp(1, dh);
    for y0 in (0..dh).step_by(chunk_rows) {
        let rows = chunk_rows.min(dh - y0);
        let args = FloatSsimTermsArgs {
            reference: p.reference,
            distorted: p.distorted,
            terms: terms.ptr,
            w: p.w as i32,
            h: p.h as i32,
            y0: y0 as i32,
            rows: rows as i32,
            cap: cap as i32,
            divisor: p.divisor,
            c1: k.c1,
            c2: k.c2,
            c3: k.c3,
            gauss: scalar::GAUSSIAN,
        };
        // SAFETY: FloatSsimTermsArgs mirrors ssim.cu; the sources are live borrowed frames of
        // w x h samples or our packed w x h pictures written before on this stream; rows
        // y0 .. y0 + rows + 10 < h are read; the kernel writes rows * dw <= cap terms into each
        // of the four arrays of `terms` (4 * cap f64).
        unsafe {
            launch(
                p.terms_fn,
                (
                    dw.div_ceil(SSIM_TILE) as u32,
                    rows.div_ceil(SSIM_TILE) as u32,
                    1,
                ),
                SSIM_THREADS,
                c.stream,
                &args,
                what,
            )?
        };
        let sum = FloatSsimSumArgs {
            terms: terms.ptr,
            out,
            n: (rows * dw) as i32,
            cap: cap as i32,
        };
        // SAFETY: FloatSsimSumArgs mirrors ssim.cu; it reads the n terms just written on this
        // stream and updates four f64 (u64) slots at `out`, inside the result block.
        unsafe {
            launch(
                c.k.float_ssim.sum,
                (1, 1, 1),
                SSIM_THREADS,
                c.stream,
                &sum,
                what,
            )?
        };
    }
    Ok(())
}

impl GpuPlan for FloatSsimPlan {
    fn name(&self) -> &'static str {
        GPU.extractor.name
    }

    fn results_len(&self) -> usize {
        RESULTS
    }

    fn alloc_scratch(&self, s: &mut Scratch, g: Geometry, _stream: sys::CUstream) -> Result<()> {
        s.get_or_alloc(|| {
            // The same sizes for every instance of the stream (any scale): they share them.
            let pic = iqa::decimated(g.w, 2) * iqa::decimated(g.h, 2) * 4;
            let cap = chunk_capacity(g.w, g.h);
            if cap > i32::MAX as usize / 4 || g.w * g.h > i32::MAX as usize {
                return Err(Error::Unsupported(format!(
                    "float_ssim on CUDA: a {}x{} picture is too large",
                    g.w, g.h
                )));
            }
            Ok(FloatSsimScratch {
                pictures: (
                    DevBuf::new(pic, "float_ssim picture")?,
                    DevBuf::new(pic, "float_ssim picture")?,
                ),
                terms: DevBuf::new(4 * cap * 8, "float_ssim terms")?,
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
        let sums = [0, 1, 2, 3].map(|i| f64::from_bits(s[i]));
        let pixels = (self.sw + 1 - WINDOW) * (self.sh + 1 - WINDOW);
        let v = Lcs::from_sums(sums, pixels);
        self.outputs.write(v, &mut row[self.cols.clone()]);
    }
}
