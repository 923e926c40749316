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
use super::{Ctx, FrameIo, FrameMeta, Geometry, GpuDef, GpuPlan, HostPool, Scratch, ScratchBufs};
use crate::engine::InstanceInfo;
use crate::error::Result;
use crate::feature::cambi::heatmap::Heatmaps;
use crate::feature::cambi::setup::{Setup, Target, CONTRAST_WEIGHTS, LUT_SIZE, NUM_SCALES};
use crate::feature::cambi::{self, cvalues, lut, mask, pooling, preprocess};
use cudarc::driver::sys;
use std::ops::Range;
use std::sync::Arc;

/// cambi's entry in the CUDA registry.
pub(super) static GPU: GpuDef = GpuDef {
    extractor: &cambi::DEF,
    create,
    supports: super::every_instance,
};

/// Threads the c-value kernel should have per scale: each thread's slide down its column is a
/// serial chain, so a scale with few columns (960 and less at 1080p) is cut into more, shorter
/// chunks of rows. About 64 Ki threads measured best on an H200 (1080p `vmaf_v1.0.16_3d0h`:
/// 859 fps with at most 16 chunks of at least 64 rows, 1491 fps with this; sweep in
/// docs/device-runs/2026-12-02-s4-pooling-threads.txt).
const CVALUE_THREADS: usize = 65536;
/// Fewest rows of one chunk: each chunk first builds its window, `(2 pad + 1)^2` reads, which
/// longer chunks amortise.
const MIN_CHUNK_ROWS: usize = 4;

/// Rows per chunk of a `w` x `h` picture.
fn chunk_rows(w: usize, h: usize) -> usize {
    let want = CVALUE_THREADS.div_ceil(w.max(1));
    MIN_CHUNK_ROWS.max(h.div_ceil(want))
}

/// Chunks of a `w` x `h` picture.
fn chunks(w: usize, h: usize) -> usize {
    h.div_ceil(chunk_rows(w, h))
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
    Ok(Box::new(build(info, offset)?))
}

fn build(info: &InstanceInfo<'_>, offset: usize) -> Result<CambiPlan> {
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
    let pooler = Arc::new(CambiPool {
        offset,
        topk: setup.topk,
        targets: targets
            .iter()
            .map(|t| (t.sizes, t.first, t.t.window))
            .collect(),
    });
    Ok(CambiPlan {
        cols: info.columns.clone(),
        offset,
        pooler,
        stride: preprocess::libvmaf_stride(setup.alloc.0),
        input: (f.width, f.height),
        bpc: f.bpc,
        active: cvalues::active_steps(setup.band, &setup.tvi, setup.vlt_luma),
        targets,
        floats,
        c: vec![0.0; largest],
        heatmaps,
        setup,
    })
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
    /// One scale's c-values on the host, for pooling inline (which reorders them).
    c: Vec<f32>,
    heatmaps: Option<Heatmaps>,
    pooler: Arc<CambiPool>,
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
        // SAFETY: for every launch below: the args mirror cambi.cu. `src` is a live borrowed luma
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
                rows: chunk_rows(sw, sh) as i32,
                pad_: 0,
                weights,
            };
            // SAFETY: see above.
            unsafe {
                launch(
                    k.cvalues,
                    (blocks(sw), chunks(sw, sh) as u32, 1),
                    BX,
                    c.stream,
                    &a,
                    "cambi c-values",
                )?
            };
        }
        Ok(())
    }

    /// One picture's score (unclipped) from its c-values, writing the distorted one's heatmaps
    /// (the inline path: with heatmaps, which are written in frame order).
    fn pool_inline(&mut self, t: usize, res: &[u64], frame: u64) -> Result<f64> {
        let is_src = self.targets[t].is_src;
        let heatmaps = self.heatmaps.as_mut().filter(|_| !is_src);
        self.pooler.score(t, res, &mut self.c, heatmaps, frame)
    }
}

/// What pooling a frame's c-values needs, shared with the pooling threads.
struct CambiPool {
    /// The instance's first result slot (see [`CambiPlan::offset`]).
    offset: usize,
    topk: f64,
    /// Per target: its size at each scale, where each scale's c-values start, its window.
    targets: Vec<PoolTarget>,
}

/// See [`CambiPool::targets`].
type PoolTarget = ([(usize, usize); NUM_SCALES], [usize; NUM_SCALES], u16);

// The pooling threads select in place in the result block, read as `f32`: c-value `2i` is
// the low half of slot `i` ([`CambiPool::c_value`]), which comes first in memory only on a
// little-endian host.
const _: () = assert!(
    cfg!(target_endian = "little"),
    "cambi's in-place pooling reads u64 slots as f32 pairs"
);

impl CambiPool {
    /// c-value `k` of the instance's region from the result block.
    fn c_value(&self, res: &[u64], k: usize) -> f32 {
        let slot = res[self.offset + 1 + k / 2];
        f32::from_bits((slot >> (32 * (k % 2))) as u32)
    }

    /// Target `t`'s score (unclipped) from its c-values, with `c` as scratch (at least
    /// the largest scale's length), writing `heatmaps` if given.
    fn score(
        &self,
        t: usize,
        res: &[u64],
        c: &mut [f32],
        mut heatmaps: Option<&mut Heatmaps>,
        frame: u64,
    ) -> Result<f64> {
        let (sizes, first, window) = &self.targets[t];
        let mut scores = [0.0f64; NUM_SCALES];
        for (s, score) in scores.iter_mut().enumerate() {
            let (w, h) = sizes[s];
            let n = w * h;
            for (i, v) in c[..n].iter_mut().enumerate() {
                *v = self.c_value(res, first[s] + i);
            }
            if let Some(hm) = heatmaps.as_deref_mut() {
                hm.write(s, frame, &c[..n], w, h)?;
            }
            *score = pooling::spatial_pooling(&mut c[..n], self.topk);
        }
        Ok(pooling::weight_scores(&scores, *window))
    }

    /// [`CambiPool::score`] without heatmaps, selecting in the instance's region of the
    /// result block itself (`region`: its c-values as `f32`, in the order the copy would have
    /// them, so the quickselect and its sum go exactly as over a copy).
    fn score_in_place(&self, t: usize, region: &mut [f32]) -> f64 {
        let (sizes, first, window) = &self.targets[t];
        let scores: [f64; NUM_SCALES] = std::array::from_fn(|s| {
            let n = sizes[s].0 * sizes[s].1;
            pooling::spatial_pooling(&mut region[first[s]..first[s] + n], self.topk)
        });
        pooling::weight_scores(&scores, *window)
    }
}

impl HostPool for CambiPool {
    fn len(&self) -> usize {
        self.targets.len()
    }

    fn run(&self, res: &mut [u64], _: FrameMeta, out: &mut [f64]) {
        if res[self.offset] != 0 {
            out.fill(f64::NAN); // finish writes NaN for the frame anyway
            return;
        }
        // No copy and no scratch: each target's scales are disjoint parts of the region, and
        // nothing reads them after this.
        let region: &mut [f32] = bytemuck::cast_slice_mut(&mut res[self.offset + 1..]);
        for (t, v) in out.iter_mut().enumerate() {
            *v = self.score_in_place(t, region);
        }
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
                .map(|(w, h)| chunks(w, h) * size * w * 2)
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

    fn finish(&mut self, res: &[u64], io: FrameMeta, geom: Geometry, row: &mut [f64]) {
        self.finish_pooled(res, io, geom, &[], row);
    }

    fn host_pool(&self) -> Option<Arc<dyn HostPool>> {
        // Heatmaps are written in frame order: an instance with them pools inline.
        match self.heatmaps {
            None => Some(Arc::clone(&self.pooler) as Arc<dyn HostPool>),
            Some(_) => None,
        }
    }

    fn finish_pooled(
        &mut self,
        res: &[u64],
        io: FrameMeta,
        _: Geometry,
        pooled: &[f64],
        row: &mut [f64],
    ) {
        if !io.scored {
            return;
        }
        let out = &mut row[self.cols.clone()];
        if res[self.offset] != 0 {
            // The CPU refuses a sample above the depth's maximum.
            out.fill(f64::NAN);
            return;
        }
        let scores = if !pooled.is_empty() {
            Ok((pooled[0], pooled.get(1).copied()))
        } else {
            (|| -> Result<(f64, Option<f64>)> {
                let dist = self.pool_inline(0, res, io.index)?;
                let src = if self.targets.len() > 1 {
                    Some(self.pool_inline(1, res, io.index)?)
                } else {
                    None
                };
                Ok((dist, src))
            })()
        };
        match scores {
            Ok((dist, src)) => cambi::write_outputs(self.setup.max_val, dist, src, out),
            Err(e) => {
                eprintln!("vmaf_rs: cambi on CUDA, frame {}: {e}", io.index);
                out.fill(f64::NAN);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    //! The kernels' decomposition on the host: every kernel of `enqueue_target` restated over
    //! host buffers one thread at a time (the same indices, the same persistent pictures, the
    //! c-values chunked per column as on the device), its values put in a result block as the
    //! device writes them and finished by the plan, against the CPU extractor, f64 bit for bit.
    use super::*;
    use crate::feature::options::OptValues;
    use crate::feature::{ExtractorConfig, FrameInput};
    use crate::picture::{ChromaLayout, PictureFormat, Plane};

    struct Host {
        image: Vec<u16>,
        mask: Vec<u16>,
        tmp: Vec<u16>,
        deriv: Vec<u8>,
        hist: Vec<u16>,
        res: Vec<u64>,
    }

    fn mode3(a: u16, b: u16, c: u16) -> u16 {
        if a == b || a == c {
            a
        } else if b == c {
            b
        } else {
            a.min(b).min(c)
        }
    }

    fn gather(
        src: &[u16],
        ss: usize,
        dst: &mut [u16],
        ds: usize,
        (w, h): (usize, usize),
        f: usize,
    ) {
        for y in 0..h {
            for x in 0..w {
                dst[y * ds + x] = src[f * y * ss + f * x];
            }
        }
    }

    /// `enqueue_target` and its kernels on the host; `pic` holds the input's samples
    /// (`in_w` a row).
    fn target(p: &CambiPlan, t: usize, pic: &[u16], hs: &mut Host) {
        let tp = &p.targets[t];
        let st = p.stride;
        let (w, h) = (tp.t.width, tp.t.height);
        let (in_w, in_h) = p.input;
        let eight = p.bpc == 8;
        if !eight && p.bpc < 16 {
            let max = (1u32 << p.bpc) - 1;
            hs.res[p.offset] += pic[..in_w * in_h]
                .iter()
                .filter(|&&v| v as u32 > max)
                .count() as u64;
        }
        let memcpy = !eight && p.bpc == 10 && tp.map.is_none();
        let (ds, row_len) = if memcpy {
            let s = preprocess::libvmaf_stride(w);
            (s, s)
        } else {
            (st, w)
        };
        for y in 0..h {
            for x in 0..row_len {
                let mut v = 0u16;
                if x < w {
                    let (sx, sy) = match &tp.map {
                        Some((xs, ys)) => (xs[x] as usize, ys[y] as usize),
                        None => (x, y),
                    };
                    let s = pic[sy * in_w + sx] as u32;
                    v = match p.bpc {
                        8 => (s << 2) as u16,
                        9 => (s << 1) as u16,
                        b => ((s + if b == 10 { 0 } else { 1 << (b - 11) }) >> (b - 10)) as u16,
                    };
                }
                hs.image[y * ds + x] = v;
            }
        }
        if p.setup.enc_bitdepth < 10 {
            for y in 0..h {
                for x in 0..w {
                    let top = |x: usize| hs.image[y * st + x] as u32;
                    let bot = |x: usize| hs.image[(y + 1) * st + x] as u32;
                    let v = if y + 1 < h {
                        if x + 1 < w {
                            (top(x) + top(x + 1) + bot(x) + bot(x + 1)) >> 2
                        } else {
                            (top(x) + bot(x)) >> 1
                        }
                    } else if x + 1 < w {
                        (top(x) + top(x + 1)) >> 1
                    } else {
                        top(x)
                    };
                    hs.tmp[y * w + x] = v as u16;
                }
            }
            gather(&hs.tmp, w, &mut hs.image, st, (w, h), 1);
        }
        for y in 0..h {
            for x in 0..w {
                let v = hs.image[y * st + x];
                let right = x + 1 == w || v == hs.image[y * st + x + 1];
                let below = y + 1 == h || v == hs.image[(y + 1) * st + x];
                hs.deriv[y * w + x] = (right && below) as u8;
            }
        }
        let index = mask::mask_index(w, h);
        for y in 0..h {
            for x in 0..w {
                let mut sum = 0u32;
                for i in y.saturating_sub(3)..=(y + 3).min(h - 1) {
                    for j in x.saturating_sub(3)..=(x + 3).min(w - 1) {
                        sum += hs.deriv[i * w + j] as u32;
                    }
                }
                hs.mask[y * st + x] = (sum > index) as u16;
            }
        }
        let pad = (tp.t.window >> 1) as usize;
        let band = p.setup.band;
        let lut = lut::reciprocals();
        for (sc, &(sw, sh)) in tp.sizes.iter().enumerate() {
            if sc > 0 || p.setup.speedup {
                gather(&hs.mask, st, &mut hs.tmp, sw, (sw, sh), 2);
                gather(&hs.tmp, sw, &mut hs.mask, st, (sw, sh), 1);
                gather(&hs.image, st, &mut hs.tmp, sw, (sw, sh), 2);
            } else {
                gather(&hs.image, st, &mut hs.tmp, sw, (sw, sh), 1);
            }
            for y in 0..sh {
                for x in 0..sw {
                    let hm = |r: usize, x: usize| {
                        let row = &hs.tmp[r * sw..];
                        if x == 0 || x == sw - 1 {
                            row[x]
                        } else {
                            mode3(row[x - 1], row[x], row[x + 1])
                        }
                    };
                    hs.image[y * st + x] = if y == 0 || y == sh - 1 {
                        hs.tmp[y * sw + x]
                    } else {
                        mode3(hm(y - 1, x), hm(y, x), hm(y + 1, x))
                    };
                }
            }
            let size = band.size as usize;
            let rows = chunk_rows(sw, sh);
            for chunk in 0..chunks(sw, sh) {
                let y0 = chunk * rows;
                let y1 = (y0 + rows).min(sh);
                for x in 0..sw {
                    let col0 = chunk * size * sw + x;
                    let (image, mask, hist) = (&hs.image, &hs.mask, &mut hs.hist);
                    let row = |hist: &mut [u16], i: usize, delta: u16| {
                        for j in x.saturating_sub(pad)..=(x + pad).min(sw - 1) {
                            if mask[i * st + j] == 0 {
                                continue;
                            }
                            let r = image[i * st + j].wrapping_sub(band.base);
                            if r < band.size {
                                let e = &mut hist[col0 + r as usize * sw];
                                *e = e.wrapping_add(delta);
                            }
                        }
                    };
                    for r in 0..size {
                        hist[col0 + r * sw] = 0;
                    }
                    for i in y0.saturating_sub(pad)..=(y0 + pad).min(sh - 1) {
                        row(hist, i, 1);
                    }
                    for y in y0..y1 {
                        if y > y0 {
                            if y > pad {
                                row(hist, y - pad - 1, u16::MAX);
                            }
                            if y + pad < sh {
                                row(hist, y + pad, 1);
                            }
                        }
                        let at = y * st + x;
                        let mut c = 0.0f32;
                        let r = image[at].wrapping_sub(band.base);
                        if mask[at] != 0 && r < band.size {
                            let r = r as usize;
                            let mut steps = p.active[r];
                            let p0 = hist[col0 + r * sw] as i32;
                            while steps != 0 {
                                let d = steps.trailing_zeros() as usize;
                                steps &= steps - 1;
                                let p1 = hist[col0 + (r + d + 1) * sw] as i32;
                                let p2 = if r > d {
                                    hist[col0 + (r - d - 1) * sw] as i32
                                } else {
                                    0
                                };
                                let pm = p1.max(p2);
                                let num = (CONTRAST_WEIGHTS[d] * p0 * pm) as f32;
                                let val = num * lut[(pm + p0) as usize];
                                if val > c {
                                    c = val;
                                }
                            }
                        }
                        let k = tp.first[sc] + y * sw + x;
                        let slot = &mut hs.res[p.offset + 1 + k / 2];
                        *slot |= (c.to_bits() as u64) << (32 * (k % 2));
                    }
                }
            }
        }
    }

    fn picture(w: usize, h: usize, t: usize, bpc: u8, distorted: bool) -> Vec<u16> {
        let mut v = Vec::with_capacity(w * h);
        let mut n = 0x9e37_79b9u32 ^ t as u32 ^ (distorted as u32) << 7;
        for y in 0..h {
            for x in 0..w {
                n ^= n << 13;
                n ^= n >> 17;
                n ^= n << 5;
                // Wide flat bands a level or two apart (banding), noise on the right third.
                let mut s = 60 + ((x + 2 * y + 3 * t) / 23 % 40) as u32;
                if x > 2 * w / 3 || (distorted && n.is_multiple_of(31)) {
                    s += n % 3;
                }
                let lo = bpc as u32 - 8;
                let low = if x > 2 * w / 3 {
                    (n >> 8) & ((1 << lo) - 1)
                } else {
                    0
                };
                v.push(((s << lo) | low).min((1 << bpc) - 1) as u16);
            }
        }
        v
    }

    #[test]
    fn host_mirror_of_the_kernels_equals_the_cpu() {
        type Case<'a> = (usize, usize, u8, &'a [(&'a str, &'a str)]);
        let cases: &[Case] = &[
            (333, 217, 8, &[]),
            (301, 229, 10, &[("full_ref", "true")]),
            (
                320,
                240,
                10,
                &[
                    ("full_ref", "true"),
                    ("src_width", "400"),
                    ("src_height", "300"),
                ],
            ),
            (
                400,
                250,
                12,
                &[
                    ("enc_width", "350"),
                    ("enc_height", "220"),
                    ("enc_bitdepth", "8"),
                ],
            ),
            (256, 230, 16, &[("max_log_contrast", "5"), ("topk", "0.2")]),
            (
                260,
                218,
                10,
                &[
                    ("cambi_vis_lum_threshold", "0.06"),
                    ("cambi_max_val", "17.0"),
                    ("window_size", "31"),
                ],
            ),
            (217, 1, 8, &[]),
        ];
        for &(w, h, bpc, kv) in cases {
            let format = PictureFormat {
                width: w,
                height: h,
                bpc,
                layout: ChromaLayout::Gray,
            };
            let mut opts = OptValues::defaults(cambi::DEF.options);
            for (k, v) in kv {
                opts.set(k, v).unwrap();
            }
            let info = InstanceInfo {
                extractor: "cambi",
                opts: &opts,
                columns: 0..3,
                needs_prev_ref: false,
                libvmaf_isa: crate::fidelity::LibvmafIsa::C,
                def: &cambi::DEF,
                format,
            };
            let mut plan = build(&info, 0).unwrap();
            let (aw, ah) = plan.setup.alloc;
            let size = plan.setup.band.size as usize;
            let columns = (plan.targets.iter().flat_map(|t| t.sizes))
                .map(|(w, h)| chunks(w, h) * w)
                .max()
                .unwrap_or(0);
            let mut hs = Host {
                image: vec![0; plan.stride * ah],
                mask: vec![0; plan.stride * ah],
                tmp: vec![0; aw * ah],
                deriv: vec![0; aw * ah],
                hist: vec![0; columns * size],
                res: vec![0; plan.results_len()],
            };
            let cfg = ExtractorConfig {
                format,
                opts: opts.clone(),
                libvmaf_isa: crate::fidelity::LibvmafIsa::C,
            };
            let mut cpu = (cambi::DEF.create)(&cfg).unwrap();
            let geom = Geometry {
                w,
                h,
                bpc,
                shift: 0,
            };
            let mut nonzero = false;
            for t in 0..3 {
                let (r, d) = (picture(w, h, t, bpc, false), picture(w, h, t, bpc, true));
                let (r8, d8): (Vec<u8>, Vec<u8>) = (
                    r.iter().map(|&v| v as u8).collect(),
                    d.iter().map(|&v| v as u8).collect(),
                );
                let (rp, dp) = if bpc == 8 {
                    (
                        Plane::new_u8(&r8, w, h, w).unwrap(),
                        Plane::new_u8(&d8, w, h, w).unwrap(),
                    )
                } else {
                    (
                        Plane::new_u16(&r, w, h, w).unwrap(),
                        Plane::new_u16(&d, w, h, w).unwrap(),
                    )
                };
                let mut want = [f64::NAN; 3];
                cpu.extract(&FrameInput::luma(rp, dp, t as u64), &mut want)
                    .unwrap();
                hs.res.fill(0);
                for k in 0..plan.targets.len() {
                    let src = if plan.targets[k].is_src { &r } else { &d };
                    target(&plan, k, src, &mut hs);
                }
                let mut got = [f64::NAN; 3];
                let meta = FrameMeta {
                    index: t as u64,
                    scored: true,
                };
                plan.finish(&hs.res, meta, geom, &mut got);
                let bits = |v: &[f64; 3]| v.map(f64::to_bits);
                assert_eq!(
                    bits(&got),
                    bits(&want),
                    "{w}x{h} {bpc}-bit {kv:?} frame {t}"
                );
                // The same frame pooled as the scorer's pooling threads do it.
                if let Some(pool) = plan.host_pool() {
                    let mut pooled = vec![f64::NAN; pool.len()];
                    let mut block = hs.res.clone();
                    std::thread::scope(|s| {
                        s.spawn(|| pool.run(&mut block, meta, &mut pooled));
                    });
                    let mut got = [f64::NAN; 3];
                    plan.finish_pooled(&hs.res, meta, geom, &pooled, &mut got);
                    assert_eq!(bits(&got), bits(&want), "pooled: {w}x{h} {kv:?} frame {t}");
                }
                nonzero |= want[0] > 0.0 || want[1] > 0.0;
            }
            assert!(nonzero || h < 8, "{w}x{h} {kv:?}: no banding found");
        }
    }
}
