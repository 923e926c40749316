//! cambi on the GPU (`kernels/cambi.cu`), bit-identical to `feature::cambi`.
//!
//! The kernels do every integer step (validation, conversion to 10 bits with the resampling,
//! anti-dithering, the spatial mask, decimation, the mode filter) on two persistent device
//! pictures laid out and updated exactly as the CPU's, then the per-pixel c-values (sliding
//! per-column histograms, exact integer counts; the c-value in the CPU's `f32` operations). The
//! c-values of every scale come back in the result block; the host pools them with the CPU
//! module's own functions (`pooling::spatial_pooling`: libvmaf's quickselect, whose partition
//! order fixes the order of the `f64` sum; `weight_scores`), writes the heatmaps with the CPU's
//! writer and clips with `cambi::write_outputs`. Nothing transcendental runs on the device: the
//! thresholds (`Setup`, from the EOTFs) and the reciprocal table are the host's, uploaded.
//!
//! Every instance runs here. Where the CPU extractor would fail on a frame (a sample above the
//! depth's maximum, a heatmap that cannot be written) the frame's cambi values are NaN.

use super::super::driver::{launch, DevBuf};
use super::super::kernels::{blocks, CambiCvalArgs, CambiPlaneArgs, CambiPrepArgs, SrcPlane, BX};
use super::{Ctx, FrameIo, FrameMeta, Geometry, GpuDef, GpuPlan, Scratch, ScratchBufs};
use crate::engine::InstanceInfo;
use crate::error::Result;
use crate::feature::cambi::heatmap::Heatmaps;
use crate::feature::cambi::setup::{Setup, Target, CONTRAST_WEIGHTS, LUT_SIZE, NUM_SCALES};
use crate::feature::cambi::{self, cvalues, lut, mask, pooling, preprocess};
use cudarc::driver::sys;
use std::ops::Range;

/// cambi's entry in the CUDA registry.
pub(super) static GPU: GpuDef = GpuDef {
    extractor: &cambi::DEF,
    create,
    supports: super::every_instance,
};

/// Fewest rows of one c-value chunk (a thread's column slides over a chunk after building its
/// first window, `(2 pad + 1)^2` reads: longer chunks amortise that).
const MIN_CHUNK_ROWS: usize = 64;
/// Most chunks of a picture's rows (each holds its own histograms).
const MAX_CHUNKS: usize = 16;

/// Rows per chunk of an `h`-row picture.
fn chunk_rows(h: usize) -> usize {
    MIN_CHUNK_ROWS.max(h.div_ceil(MAX_CHUNKS))
}

/// Chunks of an `h`-row picture.
fn chunks(h: usize) -> usize {
    h.div_ceil(chunk_rows(h))
}

/// One picture scored: the distorted one at the encoding size, the reference at the source size.
struct TargetPlan {
    t: Target,
    /// The size at each scale.
    sizes: [(usize, usize); NUM_SCALES],
    /// The first of each scale's c-values in the instance's `f32` region of the result block.
    first: [usize; NUM_SCALES],
    /// The resampling's index maps (`None`: same size as the input).
    map: Option<(Vec<i32>, Vec<i32>)>,
    is_src: bool,
}

fn create(info: &InstanceInfo<'_>, _geom: Geometry, offset: usize) -> Result<Box<dyn GpuPlan>> {
    (cambi::DEF.check)(info.opts, &info.format)?;
    let f = &info.format;
    let setup = Setup::new(info.opts, f)?;
    let mut targets = vec![(setup.enc, false)];
    if setup.full_ref {
        targets.push((setup.src, true));
    }
    let mut floats = 0;
    let targets = targets
        .into_iter()
        .map(|(t, is_src)| -> Result<TargetPlan> {
            let map = preprocess::resampling((f.width, f.height), (t.width, t.height))?;
            let sizes = t.scale_sizes(setup.speedup);
            let mut first = [0; NUM_SCALES];
            for (s, &(w, h)) in sizes.iter().enumerate() {
                first[s] = floats;
                floats += w * h;
            }
            let to_i32 = |v: Vec<usize>| v.into_iter().map(|x| x as i32).collect();
            Ok(TargetPlan {
                t,
                sizes,
                first,
                map: map.map(|(xs, ys)| (to_i32(xs), to_i32(ys))),
                is_src,
            })
        })
        .collect::<Result<Vec<_>>>()?;
    let heatmaps = match info.opts.text("heatmaps_path") {
        Some(dir) => Some(Heatmaps::create(dir, &setup)?),
        None => None,
    };
    let largest = targets
        .iter()
        .map(|t| t.sizes[0].0 * t.sizes[0].1)
        .max()
        .unwrap_or(0);
    Ok(Box::new(CambiPlan {
        cols: info.columns.clone(),
        offset,
        stride: preprocess::libvmaf_stride(setup.alloc.0),
        input: (f.width, f.height),
        bpc: f.bpc,
        active: cvalues::active_steps(setup.band, &setup.tvi, setup.vlt_luma),
        targets,
        floats,
        c: vec![0.0; largest],
        heatmaps,
        setup,
    }))
}

struct CambiPlan {
    /// The instance's three output columns.
    cols: Range<usize>,
    /// Its first result slot: the count of invalid samples, then the c-values (`f32`, two a
    /// slot, the lower address in the low half).
    offset: usize,
    setup: Setup,
    /// Samples a row of the working pictures (libvmaf's layout for the allocation size).
    stride: usize,
    input: (usize, usize),
    bpc: u8,
    /// Per band row, the steps that count ([`cvalues::active_steps`]).
    active: Vec<u32>,
    targets: Vec<TargetPlan>,
    /// c-values per frame, every scale of every target.
    floats: usize,
    /// One scale's c-values on the host, for pooling (which reorders them).
    c: Vec<f32>,
    heatmaps: Option<Heatmaps>,
}

/// The instance's device buffers (per instance: the tables and the pictures' leftovers between
/// frames depend on its options).
struct CambiScratch {
    /// The working picture and the mask, `stride` x alloc rows, zeroed once (as the CPU's).
    image: DevBuf,
    mask: DevBuf,
    /// A packed picture of the allocation size (the in-place steps' gathers).
    tmp: DevBuf,
    /// Zero-derivative flags, `u8`, packed.
    deriv: DevBuf,
    /// `u16 [chunks][band size][w]` histograms.
    hist: DevBuf,
    active: DevBuf,
    lut: DevBuf,
    /// Per target, its resampling maps (xs, ys).
    maps: Vec<Option<(DevBuf, DevBuf)>>,
}

impl ScratchBufs for CambiScratch {
    fn bytes(&self) -> usize {
        [
            &self.image,
            &self.mask,
            &self.tmp,
            &self.deriv,
            &self.hist,
            &self.active,
            &self.lut,
        ]
        .iter()
        .map(|b| b.bytes)
        .sum::<usize>()
            + self
                .maps
                .iter()
                .flatten()
                .map(|(a, b)| a.bytes + b.bytes)
                .sum::<usize>()
    }
}

impl CambiPlan {
    /// Device address of c-value `k` of the instance's region.
    fn c_addr(&self, c: &Ctx<'_>, k: usize) -> u64 {
        c.result(self.offset + 1) + 4 * k as u64
    }

    /// c-value `k` of the instance's region from the result block.
    fn c_value(&self, res: &[u64], k: usize) -> f32 {
        let slot = res[self.offset + 1 + k / 2];
        f32::from_bits((slot >> (32 * (k % 2))) as u32)
    }

    /// Queues one picture's kernels: from the frame's luma `src` to its c-values.
    fn enqueue_target(
        &self,
        tp: &TargetPlan,
        map: Option<&(DevBuf, DevBuf)>,
        src: SrcPlane,
        c: &Ctx<'_>,
        s: &CambiScratch,
    ) -> Result<()> {
        let k = &c.k.cambi;
        let g = c.geom;
        let st = self.stride;
        let (w, h) = (tp.t.width, tp.t.height);
        let (in_w, in_h) = self.input;
        let eight = g.eight_bit();
        // libvmaf copies unscaled 10-bit rows with the input's stride (its zeroed padding
        // included), whatever the working picture's stride.
        let memcpy = !eight && self.bpc == 10 && map.is_none();
        let (dst_stride, row_len) = if memcpy {
            let s = preprocess::libvmaf_stride(w);
            (s, s)
        } else {
            (st, w)
        };
        let prep = CambiPrepArgs {
            src,
            image: s.image.ptr,
            xs: map.map_or(0, |m| m.0.ptr),
            ys: map.map_or(0, |m| m.1.ptr),
            flag: c.result(self.offset),
            in_w: in_w as i32,
            in_h: in_h as i32,
            w: w as i32,
            h: h as i32,
            dst_stride: dst_stride as i32,
            row_len: row_len as i32,
            bpc: self.bpc as i32,
            max: if self.bpc >= 16 {
                0xffff
            } else {
                (1i32 << self.bpc) - 1
            },
        };
        // SAFETY (every launch below): the args mirror cambi.cu. `src` is a live borrowed luma
        // plane of in_w x in_h samples (held until the frame's event, rows checked by the
        // scorer), the maps' indices lie inside it (`preprocess::resampling` checked them);
        // `image` and `mask` hold `stride` x alloc rows samples with `stride >= dst_stride`
        // and alloc rows >= h (alloc is the largest target), `tmp` and `deriv` a packed
        // picture of the allocation size, `hist` the chunks' histograms of every scale
        // (sized in `alloc_scratch`), `active` band size entries, `lut` LUT_SIZE floats; the
        // c-values of a scale are its w x h floats inside the instance's result slots.
        unsafe {
            if !eight && self.bpc < 16 {
                launch(
                    k.validate_u16,
                    (blocks(in_w), in_h as u32, 1),
                    BX,
                    c.stream,
                    &prep,
                    "cambi validate",
                )?;
            }
            launch(
                k.to10[usize::from(!eight)],
                (blocks(row_len), h as u32, 1),
                BX,
                c.stream,
                &prep,
                "cambi to 10 bits",
            )?;
        }
        let plane = |f: sys::CUfunction,
                     src: &DevBuf,
                     src_stride: usize,
                     dst: &DevBuf,
                     dst_stride: usize,
                     (w, h): (usize, usize),
                     factor: i32,
                     index: u32,
                     what: &str|
         -> Result<()> {
            let a = CambiPlaneArgs {
                src: src.ptr,
                dst: dst.ptr,
                src_stride: src_stride as i32,
                dst_stride: dst_stride as i32,
                w: w as i32,
                h: h as i32,
                factor,
                index: index as i32,
            };
            // SAFETY: see above; each call's strides and size are those of its buffers.
            unsafe { launch(f, (blocks(w), h as u32, 1), BX, c.stream, &a, what) }
        };
        if self.setup.enc_bitdepth < 10 {
            plane(
                k.antidither,
                &s.image,
                st,
                &s.tmp,
                w,
                (w, h),
                1,
                0,
                "cambi anti-dither",
            )?;
            plane(
                k.gather,
                &s.tmp,
                w,
                &s.image,
                st,
                (w, h),
                1,
                0,
                "cambi copy",
            )?;
        }
        plane(
            k.deriv,
            &s.image,
            st,
            &s.deriv,
            w,
            (w, h),
            1,
            0,
            "cambi derivative",
        )?;
        let index = mask::mask_index(w, h);
        plane(
            k.mask,
            &s.deriv,
            w,
            &s.mask,
            st,
            (w, h),
            1,
            index,
            "cambi mask",
        )?;
        let pad = (tp.t.window >> 1) as usize;
        let band = self.setup.band;
        let mut weights = [0i32; 32];
        weights.copy_from_slice(&CONTRAST_WEIGHTS);
        for (sc, &(sw, sh)) in tp.sizes.iter().enumerate() {
            if sc > 0 || self.setup.speedup {
                plane(
                    k.gather,
                    &s.mask,
                    st,
                    &s.tmp,
                    sw,
                    (sw, sh),
                    2,
                    0,
                    "cambi decimate",
                )?;
                plane(
                    k.gather,
                    &s.tmp,
                    sw,
                    &s.mask,
                    st,
                    (sw, sh),
                    1,
                    0,
                    "cambi copy",
                )?;
                plane(
                    k.gather,
                    &s.image,
                    st,
                    &s.tmp,
                    sw,
                    (sw, sh),
                    2,
                    0,
                    "cambi decimate",
                )?;
            } else {
                plane(
                    k.gather,
                    &s.image,
                    st,
                    &s.tmp,
                    sw,
                    (sw, sh),
                    1,
                    0,
                    "cambi copy",
                )?;
            }
            plane(
                k.filter,
                &s.tmp,
                sw,
                &s.image,
                st,
                (sw, sh),
                1,
                0,
                "cambi mode filter",
            )?;
            let a = CambiCvalArgs {
                image: s.image.ptr,
                mask: s.mask.ptr,
                hist: s.hist.ptr,
                active: s.active.ptr,
                lut: s.lut.ptr,
                out: self.c_addr(c, tp.first[sc]),
                stride: st as i32,
                w: sw as i32,
                h: sh as i32,
                pad: pad as i32,
                base: band.base as i32,
                size: band.size as i32,
                rows: chunk_rows(sh) as i32,
                pad_: 0,
                weights,
            };
            // SAFETY: see above.
            unsafe {
                launch(
                    k.cvalues,
                    (blocks(sw), chunks(sh) as u32, 1),
                    BX,
                    c.stream,
                    &a,
                    "cambi c-values",
                )?
            };
        }
        Ok(())
    }

    /// One picture's score (unclipped) from its c-values, writing the distorted one's heatmaps.
    fn pool(&mut self, t: usize, res: &[u64], frame: u64) -> Result<f64> {
        let mut scores = [0.0f64; NUM_SCALES];
        for s in 0..NUM_SCALES {
            let tp = &self.targets[t];
            let (w, h) = tp.sizes[s];
            let (first, is_src) = (tp.first[s], tp.is_src);
            let n = w * h;
            for i in 0..n {
                self.c[i] = self.c_value(res, first + i);
            }
            if let (Some(hm), false) = (self.heatmaps.as_mut(), is_src) {
                hm.write(s, frame, &self.c, w, h)?;
            }
            scores[s] = pooling::spatial_pooling(&mut self.c[..n], self.setup.topk);
        }
        Ok(pooling::weight_scores(&scores, self.targets[t].t.window))
    }
}

impl GpuPlan for CambiPlan {
    fn name(&self) -> &'static str {
        GPU.extractor.name
    }

    fn results_len(&self) -> usize {
        1 + self.floats.div_ceil(2)
    }

    fn alloc_scratch(&self, s: &mut Scratch, _: Geometry, stream: sys::CUstream) -> Result<()> {
        s.alloc_for_instance(self.offset, || {
            let (aw, ah) = self.setup.alloc;
            let pic = self.stride * ah * 2;
            let size = self.setup.band.size as usize;
            let hist = self
                .targets
                .iter()
                .flat_map(|t| t.sizes)
                .map(|(w, h)| chunks(h) * size * w * 2)
                .max()
                .unwrap_or(0);
            let image = DevBuf::new(pic, "cambi picture")?;
            let mask = DevBuf::new(pic, "cambi mask")?;
            // The CPU's pictures start zeroed; what a frame leaves in them stays for the next.
            image.zero_async(pic, stream)?;
            mask.zero_async(pic, stream)?;
            let active = DevBuf::new(self.active.len() * 4, "cambi active steps")?;
            active.upload_now(&self.active, stream)?;
            let lut = DevBuf::new(LUT_SIZE * 4, "cambi reciprocal table")?;
            lut.upload_async(lut::reciprocals(), stream)?;
            let maps = self
                .targets
                .iter()
                .map(|t| -> Result<Option<(DevBuf, DevBuf)>> {
                    let Some((xs, ys)) = &t.map else {
                        return Ok(None);
                    };
                    let bx = DevBuf::new(xs.len() * 4, "cambi resampling map")?;
                    let by = DevBuf::new(ys.len() * 4, "cambi resampling map")?;
                    bx.upload_now(xs, stream)?;
                    by.upload_now(ys, stream)?;
                    Ok(Some((bx, by)))
                })
                .collect::<Result<_>>()?;
            Ok(CambiScratch {
                image,
                mask,
                tmp: DevBuf::new(aw * ah * 2, "cambi packed picture")?,
                deriv: DevBuf::new(aw * ah, "cambi derivative flags")?,
                hist: DevBuf::new(hist, "cambi histograms")?,
                active,
                lut,
                maps,
            })
        })
    }

    fn enqueue(&self, io: &FrameIo, c: &Ctx<'_>) -> Result<()> {
        if !io.meta.scored {
            return Ok(());
        }
        let s = c.scratch.for_instance::<CambiScratch>(self.offset);
        // The distorted picture, then (full_ref) the reference, as the CPU scores them.
        for (tp, map) in self.targets.iter().zip(&s.maps) {
            let src = if tp.is_src {
                io.reference
            } else {
                io.distorted
            };
            self.enqueue_target(tp, map.as_ref(), src, c, s)?;
        }
        Ok(())
    }

    fn finish(&mut self, res: &[u64], io: FrameMeta, _: Geometry, row: &mut [f64]) {
        if !io.scored {
            return;
        }
        let out = &mut row[self.cols.clone()];
        if res[self.offset] != 0 {
            // The CPU refuses a sample above the depth's maximum.
            out.fill(f64::NAN);
            return;
        }
        let scores = (|| -> Result<(f64, Option<f64>)> {
            let dist = self.pool(0, res, io.index)?;
            let src = if self.targets.len() > 1 {
                Some(self.pool(1, res, io.index)?)
            } else {
                None
            };
            Ok((dist, src))
        })();
        match scores {
            Ok((dist, src)) => cambi::write_outputs(self.setup.max_val, dist, src, out),
            Err(e) => {
                eprintln!("vmaf_rs: cambi on CUDA, frame {}: {e}", io.index);
                out.fill(f64::NAN);
            }
        }
    }
}
