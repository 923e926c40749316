//! SpEED (speed_chroma, speed_temporal) on the GPU (`kernels/speed.cu`), bit-identical to
//! `feature::speed`.
//!
//! Per plane pair (speed_chroma: the Cb and the Cr planes of the reference and distorted frames,
//! straight from the CUDA frames, interleaved CbCr included; speed_temporal: the differences of
//! consecutive luma frames, from the instance's own float copies of the previous frame) the
//! kernels repeat `Speed::downscale` in its `f32` operations: `picture_copy`'s samples, the
//! `speed_prescale` scaler with the CPU scaler's own tap tables (computed on the host, uploaded
//! once), the anti-alias filter at the kept rows and columns, the local mean's filter and its
//! subtraction; then the 25 submatrix means (`f32`, one thread each) and the 325 covariance sums
//! (`f64`, one thread each) in the order of libvmaf's kernel family. The decimated plane (`f32`
//! bits, two a slot) and the sums (`f64` bits) come back in the result block, and the host
//! finishes with the CPU core itself (`Speed::score_prepared`: the covariance matrix, its
//! eigenvalues, the solve, the `log2`s and the comparison), then the extractor's own output
//! function. No option needs the CPU: every computation on the GPU is exact.

use super::super::driver::{launch, DevBuf};
use super::super::kernels::{
    blocks, SpeedCovArgs, SpeedFilterArgs, SpeedPrepArgs, SrcPlane, BX, SPEED_COV_BX,
    SPEED_MAX_TAPS,
};
use super::{Ctx, FrameIo, FrameMeta, Geometry, GpuDef, GpuPlan, HostPool, Scratch, ScratchBufs};
use crate::cpu::cpu_level;
use crate::engine::InstanceInfo;
use crate::error::{Error, Result};
use crate::feature::float_vif::scalar::filter_size;
use crate::feature::scale::DeviceTaps;
use crate::feature::speed::{chroma, temporal, Dims, Params, Speed, COV_SUMS, NUM_SCALES};
use crate::fidelity::LibvmafIsa;
use cudarc::driver::sys;
use std::sync::{Arc, Mutex};

/// speed_chroma's entry in the CUDA registry.
pub(super) static CHROMA: GpuDef = GpuDef {
    extractor: &chroma::DEF,
    create: create_chroma,
    supports,
};

/// speed_temporal's entry in the CUDA registry.
pub(super) static TEMPORAL: GpuDef = GpuDef {
    extractor: &temporal::DEF,
    create: create_temporal,
    supports,
};

/// Every instance whose filters fit the kernels' tap arrays (every kernel scale libvmaf accepts:
/// at most 35 anti-alias taps).
fn supports(info: &InstanceInfo<'_>) -> bool {
    let ks = info.opts.f64("speed_kernelscale") as f32;
    filter_size(1, ks).max(filter_size(NUM_SCALES, ks)) <= SPEED_MAX_TAPS
}

/// What an instance computes.
#[derive(Debug, Clone, Copy)]
enum Kind {
    /// speed_chroma: planes (Cb ref, Cb dis, Cr ref, Cr dis), clipped to `speed_max_val`.
    Chroma { max_val: f64 },
    /// speed_temporal: planes (ref diff, dis diff).
    Temporal { use_ref_diff: bool },
}

impl Kind {
    /// The planes scored per frame.
    fn planes(self) -> usize {
        match self {
            Kind::Chroma { .. } => 4,
            Kind::Temporal { .. } => 2,
        }
    }
}

fn create_chroma(
    info: &InstanceInfo<'_>,
    _geom: Geometry,
    offset: usize,
) -> Result<Box<dyn GpuPlan>> {
    // The CPU extractor's checks and messages (gray input, depths, sizes, prescale).
    (chroma::DEF.check)(info.opts, &info.format)?;
    let (w, h) = chroma::chroma_size(&info.format);
    let kind = Kind::Chroma {
        max_val: info.opts.f64("speed_max_val"),
    };
    Ok(Box::new(SpeedPlan::new(
        info,
        chroma::params(info.opts),
        (w, h),
        kind,
        offset,
    )))
}

fn create_temporal(
    info: &InstanceInfo<'_>,
    _geom: Geometry,
    offset: usize,
) -> Result<Box<dyn GpuPlan>> {
    (temporal::DEF.check)(info.opts, &info.format)?;
    let f = &info.format;
    let kind = Kind::Temporal {
        use_ref_diff: info.opts.bool("speed_use_ref_diff"),
    };
    Ok(Box::new(SpeedPlan::new(
        info,
        temporal::params(info.opts),
        (f.width, f.height),
        kind,
        offset,
    )))
}

/// A filter's taps in the kernels' array.
fn taps(f: &[f32]) -> ([f32; SPEED_MAX_TAPS], i32) {
    let mut t = [0.0f32; SPEED_MAX_TAPS];
    t[..f.len()].copy_from_slice(f);
    (t, f.len() as i32)
}

/// A filter pass's arguments: `[src, dst, sub]`, the taps, the source's and the output's size
/// and the step between kept rows or columns.
fn filter_args(
    [src, dst, sub]: [u64; 3],
    f: &([f32; SPEED_MAX_TAPS], i32),
    (w, h): (usize, usize),
    (ow, oh): (usize, usize),
    step: i32,
) -> SpeedFilterArgs {
    SpeedFilterArgs {
        src,
        dst,
        sub,
        taps: f.0,
        ntaps: f.1,
        w: w as i32,
        h: h as i32,
        ow: ow as i32,
        oh: oh as i32,
        step,
    }
}

/// Result slots of one plane: its covariance sums, then its decimated plane less its local mean
/// (`f32` bits, two a slot: element `2 i` in the low half, as the kernels store a float array).
fn plane_slots(d: &Dims) -> usize {
    COV_SUMS + (d.dw * d.dh).div_ceil(2)
}

/// One plane's values from its result slots: the covariance sums' `f64` bits, then the small
/// plane's `f32` bits, two a slot (the kernels' float array on a little-endian device: element
/// `2 i` in the low half).
fn read_plane(res: &[u64], small: &mut [f32], sums: &mut [f64; COV_SUMS]) {
    for (v, &r) in sums.iter_mut().zip(&res[..COV_SUMS]) {
        *v = f64::from_bits(r);
    }
    let packed = &res[COV_SUMS..];
    for (i, v) in small.iter_mut().enumerate() {
        *v = f32::from_bits((packed[i / 2] >> (32 * (i % 2))) as u32);
    }
}

struct SpeedPlan {
    kind: Kind,
    /// The instance's first output column.
    col: usize,
    /// Its first result slot: [`plane_slots`] per plane, in [`Kind`]'s plane order.
    offset: usize,
    d: Dims,
    /// The CPU core that finishes each frame inline (its scratch is allocated once, here).
    core: Speed,
    /// The same host work for the pooling threads.
    pool: Arc<SpeedPool>,
    /// The scaler's tap tables (when rescaling and the size changes).
    scaler: Option<DeviceTaps>,
    antialias: ([f32; SPEED_MAX_TAPS], i32),
    mean: ([f32; SPEED_MAX_TAPS], i32),
    /// libvmaf's covariance family: 0 C, 1 AVX2, 2 AVX-512.
    family: i32,
}

impl SpeedPlan {
    fn new(
        info: &InstanceInfo<'_>,
        p: Params,
        (w, h): (usize, usize),
        kind: Kind,
        offset: usize,
    ) -> Self {
        let core = Speed::new(p, w, h, info.libvmaf_isa, cpu_level());
        let (aa, mean) = core.filters();
        let (antialias, mean) = (taps(aa), taps(mean));
        SpeedPlan {
            kind,
            col: info.columns.start,
            offset,
            d: *core.dims(),
            scaler: core.scaler().and_then(|s| s.device_taps()),
            antialias,
            mean,
            family: match core.family() {
                LibvmafIsa::C => 0,
                LibvmafIsa::Avx2 => 1,
                LibvmafIsa::Avx512 => 2,
            },
            pool: Arc::new(SpeedPool {
                kind,
                offset,
                d: *core.dims(),
                template: core.clone(),
                cores: Mutex::new(Vec::new()),
            }),
            core,
        }
    }

    /// Result slot of plane `q`'s first value.
    fn plane_slot(&self, q: usize) -> usize {
        self.offset + q * plane_slots(&self.d)
    }

    /// Device address of plane `q`'s decimated plane (in the result block).
    fn small(&self, c: &Ctx<'_>, q: usize) -> u64 {
        c.result(self.plane_slot(q) + COV_SUMS)
    }

    /// `prep`'s arguments for the instance's plane size, with the scaler's tables, into `dst`.
    fn prep_args(&self, s: &SpeedScratch, src: SrcPlane, step: i32, bpc: u8) -> SpeedPrepArgs {
        let d = &self.d;
        let (method, ntaps, t) = match (&self.scaler, &s.tables) {
            (Some(f), Some(t)) => (f.method + 1, f.ntaps as i32, Some(t)),
            _ => (0, 1, None),
        };
        let ptr = |i: usize| t.map_or(0, |t| t.dev[i].ptr);
        let (sw, sh) = if t.is_some() {
            (d.sw, d.sh)
        } else {
            (d.w, d.h)
        };
        SpeedPrepArgs {
            src,
            a: 0,
            b: 0,
            col_idx: ptr(0),
            col_w: ptr(1),
            row_idx: ptr(2),
            row_w: ptr(3),
            dst: s.scaled.ptr,
            w: d.w as i32,
            h: d.h as i32,
            sw: sw as i32,
            sh: sh as i32,
            step,
            bpc: bpc as i32,
            method,
            ntaps,
        }
    }

    /// Queues one plane's work from `prep` (its sample source set) to its decimated plane less
    /// its local mean in plane `q`'s result slots.
    fn run_plane(
        &self,
        prep_fn: sys::CUfunction,
        prep: &SpeedPrepArgs,
        q: usize,
        c: &Ctx<'_>,
    ) -> Result<()> {
        let s = c.scratch.for_instance::<SpeedScratch>(self.offset);
        let d = &self.d;
        let k = &c.k.speed;
        let (sw, sh) = (prep.sw as usize, prep.sh as usize);
        let step = 1 << NUM_SCALES;
        let aa_rows = filter_args(
            [s.scaled.ptr, s.rows.ptr, 0],
            &self.antialias,
            (sw, sh),
            (sw, d.dh),
            step,
        );
        let aa_cols = filter_args(
            [s.rows.ptr, s.raw.ptr, 0],
            &self.antialias,
            (sw, d.dh),
            (d.dw, d.dh),
            step,
        );
        let mean_rows = filter_args(
            [s.raw.ptr, s.tmp.ptr, 0],
            &self.mean,
            (d.dw, d.dh),
            (d.dw, d.dh),
            1,
        );
        let small = self.small(c, q);
        let mean_cols = filter_args(
            [s.tmp.ptr, small, s.raw.ptr],
            &self.mean,
            (d.dw, d.dh),
            (d.dw, d.dh),
            1,
        );
        // SAFETY: SpeedPrepArgs and SpeedFilterArgs mirror speed.cu. `prep`'s source is a live
        // borrowed plane (held until the frame's event; chroma rows checked in `chroma_source`,
        // luma by the scorer) or the instance's float frames (w * h floats each); its tables
        // hold `ntaps` entries per output column and row (uploaded in `alloc_scratch`, indices
        // inside the plane); `scaled` holds sw * sh floats (the larger of the plane and its
        // rescaled size), `rows` dh * sw, `raw` and `tmp` dw * dh; `small` is plane q's
        // dw * dh floats inside the result block. Every tap stays inside its plane (mirrored
        // once: the planes are larger than the filters' radii, checked by the CPU's `check`).
        unsafe {
            launch(
                prep_fn,
                (blocks(sw), sh as u32, 1),
                BX,
                c.stream,
                prep,
                "speed prescale",
            )?;
            launch(
                k.vfilter,
                (blocks(sw), d.dh as u32, 1),
                BX,
                c.stream,
                &aa_rows,
                "speed anti-alias rows",
            )?;
            launch(
                k.hfilter,
                (blocks(d.dw), d.dh as u32, 1),
                BX,
                c.stream,
                &aa_cols,
                "speed anti-alias columns",
            )?;
            launch(
                k.vfilter,
                (blocks(d.dw), d.dh as u32, 1),
                BX,
                c.stream,
                &mean_rows,
                "speed local mean rows",
            )?;
            launch(
                k.hfilter,
                (blocks(d.dw), d.dh as u32, 1),
                BX,
                c.stream,
                &mean_cols,
                "speed local mean columns",
            )?;
        }
        Ok(())
    }

    /// Queues the means and covariance sums of every plane of the frame.
    fn run_cov(&self, c: &Ctx<'_>) -> Result<()> {
        let s = c.scratch.for_instance::<SpeedScratch>(self.offset);
        let d = &self.d;
        let planes = self.kind.planes();
        let mut args = SpeedCovArgs {
            small: [0; 4],
            sums: [0; 4],
            means: s.means.ptr,
            dw: d.dw as i32,
            subw: d.subw as i32,
            subh: d.subh as i32,
            family: self.family,
            n_sub: (d.subw * d.subh) as f32,
            pad_: 0,
        };
        for q in 0..planes {
            args.small[q] = self.small(c, q);
            args.sums[q] = c.result(self.plane_slot(q));
        }
        let k = &c.k.speed;
        let sum_blocks = COV_SUMS.div_ceil(SPEED_COV_BX as usize) as u32;
        // SAFETY: SpeedCovArgs mirrors speed.cu; each of the `planes` small planes holds dw * dh
        // floats (written by `run_plane` earlier on this stream) and the submatrices stay inside
        // them (subw + 4 <= dw, subh + 4 <= dh); each `sums` is COV_SUMS slots of the result
        // block; `means` holds 4 * 25 floats.
        unsafe {
            launch(
                k.means,
                (1, planes as u32, 1),
                SPEED_COV_BX,
                c.stream,
                &args,
                "speed means",
            )?;
            launch(
                k.cov,
                (sum_blocks, planes as u32, 1),
                SPEED_COV_BX,
                c.stream,
                &args,
                "speed covariance sums",
            )?;
        }
        Ok(())
    }

    /// Cb (`ch` 0) or Cr of a frame's chroma and its sample step, checked against the row read.
    fn chroma_source(
        &self,
        io: &FrameIo,
        distorted: bool,
        ch: usize,
        bps: usize,
    ) -> Result<(SrcPlane, i32)> {
        let c = if distorted {
            io.distorted_chroma
        } else {
            io.reference_chroma
        }
        .ok_or_else(|| {
            Error::InvalidOption(
                "speed_chroma reads chroma on the GPU, but a CUDA frame came without chroma \
                 planes"
                    .into(),
            )
        })?;
        let need = (self.d.w as u64 - 1) * c.step as u64 * bps as u64 + bps as u64;
        let plane = c.planes[ch];
        if plane.ptr == 0 || plane.pitch < need {
            return Err(Error::InvalidOption(format!(
                "speed_chroma: a CUDA frame's chroma plane is missing or its pitch {} is below \
                 the {need} bytes a row needs",
                plane.pitch
            )));
        }
        Ok((plane, c.step))
    }
}

/// The scaler's tap tables on the device (uploaded once, synchronously).
struct Tables {
    /// Columns' indices and weights, rows' indices and weights.
    dev: [DevBuf; 4],
}

/// One instance's device buffers (its float frames are state between frames, and its sizes
/// and tables depend on its options).
struct SpeedScratch {
    /// The prepared (rescaled) plane: the larger of `w × h` and `sw × sh` floats.
    scaled: DevBuf,
    /// The anti-alias filter's vertical pass at the kept rows (`dh × sw`).
    rows: DevBuf,
    /// The decimated plane (`dh × dw`) and the local mean's vertical pass.
    raw: DevBuf,
    tmp: DevBuf,
    /// The submatrices' means, 25 per plane.
    means: DevBuf,
    tables: Option<Tables>,
    /// speed_temporal: each frame's float luma, `[reference, distorted][frame parity]`.
    frames: Vec<[DevBuf; 2]>,
}

impl ScratchBufs for SpeedScratch {
    fn bytes(&self) -> usize {
        let t = self
            .tables
            .as_ref()
            .map_or(0, |t| t.dev.iter().map(|b| b.bytes).sum());
        let f: usize = self.frames.iter().flatten().map(|b| b.bytes).sum();
        self.scaled.bytes
            + self.rows.bytes
            + self.raw.bytes
            + self.tmp.bytes
            + self.means.bytes
            + t
            + f
    }
}

impl GpuPlan for SpeedPlan {
    fn name(&self) -> &'static str {
        match self.kind {
            Kind::Chroma { .. } => CHROMA.extractor.name,
            Kind::Temporal { .. } => TEMPORAL.extractor.name,
        }
    }

    fn results_len(&self) -> usize {
        self.kind.planes() * plane_slots(&self.d)
    }

    fn reads_unscored_distorted(&self) -> bool {
        // speed_temporal keeps every frame's float luma for the next frame.
        matches!(self.kind, Kind::Temporal { .. })
    }

    fn alloc_scratch(&self, s: &mut Scratch, _: Geometry, stream: sys::CUstream) -> Result<()> {
        s.alloc_for_instance(self.offset, || {
            let d = &self.d;
            let f32s = |n: usize, what: &str| DevBuf::new(n * 4, what);
            let tables = match &self.scaler {
                None => None,
                Some(f) => {
                    let dev = [
                        f32s(f.cols.idx.len(), "speed scaler columns")?,
                        f32s(f.cols.wt.len(), "speed scaler column weights")?,
                        f32s(f.rows.idx.len(), "speed scaler rows")?,
                        f32s(f.rows.wt.len(), "speed scaler row weights")?,
                    ];
                    dev[0].upload_now(&f.cols.idx, stream)?;
                    dev[1].upload_now(&f.cols.wt, stream)?;
                    dev[2].upload_now(&f.rows.idx, stream)?;
                    dev[3].upload_now(&f.rows.wt, stream)?;
                    Some(Tables { dev })
                }
            };
            let frames = match self.kind {
                Kind::Chroma { .. } => Vec::new(),
                Kind::Temporal { .. } => {
                    let pair = || -> Result<[DevBuf; 2]> {
                        Ok([
                            f32s(d.w * d.h, "speed_temporal float frame")?,
                            f32s(d.w * d.h, "speed_temporal float frame")?,
                        ])
                    };
                    vec![pair()?, pair()?]
                }
            };
            Ok(SpeedScratch {
                scaled: f32s((d.w * d.h).max(d.sw * d.sh), "speed prescaled plane")?,
                rows: f32s(d.dh * d.sw.max(d.w), "speed anti-alias rows")?,
                raw: f32s(d.dw * d.dh, "speed decimated plane")?,
                tmp: f32s(d.dw * d.dh, "speed local mean rows")?,
                means: f32s(4 * 25, "speed submatrix means")?,
                tables,
                frames,
            })
        })
    }

    fn enqueue(&self, io: &FrameIo, c: &Ctx<'_>) -> Result<()> {
        let g = c.geom;
        let k = &c.k.speed;
        let prep_frame = if g.eight_bit() { k.prep[0] } else { k.prep[1] };
        let s = c.scratch.for_instance::<SpeedScratch>(self.offset);
        match self.kind {
            Kind::Chroma { .. } => {
                if !io.meta.scored {
                    return Ok(());
                }
                for ch in 0..2 {
                    for side in 0..2 {
                        let (src, step) =
                            self.chroma_source(io, side == 1, ch, g.bytes_per_sample())?;
                        let prep = self.prep_args(s, src, step, g.bpc);
                        self.run_plane(prep_frame, &prep, 2 * ch + side, c)?;
                    }
                }
            }
            Kind::Temporal { use_ref_diff } => {
                // Every frame: its float luma, kept for the next frame's differences.
                let cur = (io.meta.index % 2) as usize;
                let d = &self.d;
                for (side, src) in [io.reference, io.distorted].into_iter().enumerate() {
                    let conv = SpeedPrepArgs {
                        method: 0,
                        ntaps: 1,
                        sw: d.w as i32,
                        sh: d.h as i32,
                        dst: s.frames[side][cur].ptr,
                        ..self.prep_args(s, src, 1, g.bpc)
                    };
                    // SAFETY: SpeedPrepArgs mirrors speed.cu; `src` is a live borrowed luma
                    // plane (held until the frame's event, rows checked by the scorer); method
                    // 0 reads no table; `dst` holds w * h floats.
                    unsafe {
                        launch(
                            prep_frame,
                            (blocks(d.w), d.h as u32, 1),
                            BX,
                            c.stream,
                            &conv,
                            "speed_temporal float frame",
                        )?;
                    }
                }
                if io.meta.index == 0 || !io.meta.scored {
                    return Ok(()); // frame 0 scores 0
                }
                let prev = 1 - cur;
                let (rf, df) = (&s.frames[0], &s.frames[1]);
                let dis_cur = if use_ref_diff {
                    rf[cur].ptr
                } else {
                    df[cur].ptr
                };
                for (q, (a, b)) in [(rf[prev].ptr, rf[cur].ptr), (df[prev].ptr, dis_cur)]
                    .into_iter()
                    .enumerate()
                {
                    let prep = SpeedPrepArgs {
                        a,
                        b,
                        ..self.prep_args(s, SrcPlane::default(), 1, g.bpc)
                    };
                    self.run_plane(k.prep[2], &prep, q, c)?;
                }
            }
        }
        self.run_cov(c)
    }

    fn finish(&mut self, res: &[u64], io: FrameMeta, _: Geometry, row: &mut [f64]) {
        if io.scored {
            let n = self.pool.len();
            self.pool
                .values(&mut self.core, res, io, &mut row[self.col..self.col + n]);
        }
    }

    fn host_pool(&self) -> Option<Arc<dyn HostPool>> {
        Some(Arc::clone(&self.pool) as Arc<dyn HostPool>)
    }

    fn finish_pooled(
        &mut self,
        res: &[u64],
        io: FrameMeta,
        geom: Geometry,
        pooled: &[f64],
        row: &mut [f64],
    ) {
        if pooled.is_empty() {
            self.finish(res, io, geom, row);
        } else if io.scored {
            row[self.col..self.col + pooled.len()].copy_from_slice(pooled);
        }
    }
}

/// The host half of a frame (the CPU core's estimation and comparison from the decimated planes
/// and covariance sums read back), shared with the pooling threads.
struct SpeedPool {
    kind: Kind,
    /// The instance's first result slot and its planes' layout (see [`SpeedPlan`]).
    offset: usize,
    d: Dims,
    /// A core to copy for each pooling thread that needs one.
    template: Speed,
    /// The pooling threads' cores (each takes one for a frame and puts it back).
    cores: Mutex<Vec<Speed>>,
}

impl SpeedPool {
    /// The instance's values of a scored frame (3 for speed_chroma, 1 for speed_temporal) into
    /// `out`, with `core` as the CPU core.
    fn values(&self, core: &mut Speed, res: &[u64], io: FrameMeta, out: &mut [f64]) {
        let first = |q: usize| self.offset + q * plane_slots(&self.d);
        let read = |at: usize, small: &mut [f32], sums: &mut [f64; COV_SUMS]| {
            read_plane(&res[at..], small, sums)
        };
        match self.kind {
            Kind::Chroma { max_val } => {
                let at: [usize; 4] = std::array::from_fn(first);
                let mut scores = [(0f32, false); 2];
                for (ch, sc) in scores.iter_mut().enumerate() {
                    *sc = core
                        .score_prepared(|side, small, sums| read(at[2 * ch + side], small, sums));
                }
                out.copy_from_slice(&chroma::outputs(scores, max_val));
            }
            Kind::Temporal { .. } => {
                out[0] = if io.index == 0 {
                    0.0
                } else {
                    let at = [first(0), first(1)];
                    core.score_prepared(|side, small, sums| read(at[side], small, sums))
                        .0 as f64
                };
            }
        }
    }
}

impl HostPool for SpeedPool {
    fn len(&self) -> usize {
        match self.kind {
            Kind::Chroma { .. } => 3,
            Kind::Temporal { .. } => 1,
        }
    }

    fn run(&self, res: &mut [u64], io: FrameMeta, out: &mut [f64]) {
        let taken = self.cores.lock().ok().and_then(|mut c| c.pop());
        let mut core = taken.unwrap_or_else(|| self.template.clone());
        self.values(&mut core, res, io, out);
        if let Ok(mut c) = self.cores.lock() {
            c.push(core);
        }
    }

    fn prepare(&self, threads: usize) {
        // One core per thread, made here: a core cloned on a pooling thread would live in that
        // thread's malloc arena, a different one each graph.
        if let Ok(mut c) = self.cores.lock() {
            while c.len() < threads {
                c.push(self.template.clone());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    //! The kernels' decomposition on the host, step for step as speed.cu computes it (each
    //! thread's loop, the tables, the packing of the result block), against the CPU core.
    use super::*;
    use crate::feature::scale::Method;

    /// `vmaf_speed_prep_*` of a float plane (`sample(x, y)`), with the plan's tables.
    fn prep(t: Option<&DeviceTaps>, d: &Dims, plane: &[f32]) -> Vec<f32> {
        let sample = |x: i32, y: i32| plane[y as usize * d.w + x as usize];
        let Some(t) = t else {
            return plane.to_vec();
        };
        let n = t.ntaps;
        let mut out = vec![0f32; d.sw * d.sh];
        for y in 0..d.sh {
            for x in 0..d.sw {
                let (ci, cw) = (&t.cols.idx[x * n..][..n], &t.cols.wt[x * n..][..n]);
                let (ri, rw) = (&t.rows.idx[y * n..][..n], &t.rows.wt[y * n..][..n]);
                out[y * d.sw + x] = match t.method + 1 {
                    1 => sample(ci[0], ri[0]),
                    2 => {
                        let (dx, dy) = (cw[0], rw[0]);
                        let (odx, ody) = (1.0 - dx, 1.0 - dy);
                        let t1 = (ody * odx) * sample(ci[0], ri[0]);
                        let t2 = (ody * dx) * sample(ci[1], ri[0]);
                        let t3 = (dy * odx) * sample(ci[0], ri[1]);
                        let t4 = (dy * dx) * sample(ci[1], ri[1]);
                        ((t1 + t2) + t3) + t4
                    }
                    3 => {
                        let mut v = 0f32;
                        for ky in 0..n {
                            for kx in 0..n {
                                v += sample(ci[kx], ri[ky]) * (cw[kx] * rw[ky]);
                            }
                        }
                        v
                    }
                    _ => {
                        let (mut v, mut sum) = (0f32, 0f32);
                        for ky in 0..n {
                            for kx in 0..n {
                                let w = cw[kx] * rw[ky];
                                sum += w;
                                v += sample(ci[kx], ri[ky]) * w;
                            }
                        }
                        v / sum
                    }
                };
            }
        }
        out
    }

    fn mirror(i: i32, n: i32) -> usize {
        (if i < 0 {
            -i
        } else if i >= n {
            2 * n - i - 2
        } else {
            i
        }) as usize
    }

    /// `vmaf_speed_vfilter`.
    fn vfilter(a: &SpeedFilterArgs, src: &[f32]) -> Vec<f32> {
        let r = a.ntaps / 2;
        let mut out = vec![0f32; (a.w * a.oh) as usize];
        for oi in 0..a.oh {
            for x in 0..a.w {
                let mut acc = 0f32;
                for k in 0..a.ntaps {
                    let y = mirror(oi * a.step - r + k, a.h);
                    acc += a.taps[k as usize] * src[y * a.w as usize + x as usize];
                }
                out[(oi * a.w + x) as usize] = acc;
            }
        }
        out
    }

    /// `vmaf_speed_hfilter`.
    fn hfilter(a: &SpeedFilterArgs, src: &[f32], sub: Option<&[f32]>) -> Vec<f32> {
        let r = a.ntaps / 2;
        let mut out = vec![0f32; (a.ow * a.oh) as usize];
        for i in 0..a.oh {
            let row = &src[(i * a.w) as usize..];
            for oj in 0..a.ow {
                let mut acc = 0f32;
                for k in 0..a.ntaps {
                    acc += a.taps[k as usize] * row[mirror(oj * a.step - r + k, a.w)];
                }
                let at = (i * a.ow + oj) as usize;
                out[at] = sub.map_or(acc, |s| s[at] - acc);
            }
        }
        out
    }

    /// `vmaf_speed_means` and `vmaf_speed_cov` of one plane.
    fn cov(d: &Dims, small: &[f32], family: i32) -> [f64; COV_SUMS] {
        let n_sub = (d.subw * d.subh) as f32;
        let means: Vec<f32> = (0..25)
            .map(|t| {
                let (r0, c0) = (t / 5, t % 5);
                let mut acc = 0f32;
                for i in 0..d.subh {
                    for j in 0..d.subw {
                        acc += small[(r0 + i) * d.dw + c0 + j];
                    }
                }
                acc / n_sub
            })
            .collect();
        let mut sums = [0f64; COV_SUMS];
        for (p, out) in sums.iter_mut().enumerate() {
            let mut xi = 0;
            while (xi + 1) * (xi + 2) / 2 <= p {
                xi += 1;
            }
            let yi = p - xi * (xi + 1) / 2;
            let x = &small[(xi / 5) * d.dw + xi % 5..];
            let y = &small[(yi / 5) * d.dw + yi % 5..];
            let (mx, my) = (means[xi] as f64, means[yi] as f64);
            let term = |i: usize, j: usize| {
                let o = i * d.dw + j;
                (x[o] as f64 - mx, y[o] as f64 - my)
            };
            *out = if family == 0 {
                let mut acc = 0f64;
                for i in 0..d.subh {
                    for j in 0..d.subw {
                        let (a, b) = term(i, j);
                        acc += a * b;
                    }
                }
                acc
            } else {
                let l = if family == 1 { 4 } else { 8 };
                let mut acc = [0f64; 16];
                let mut tail = 0f64;
                for i in 0..d.subh {
                    let mut j = 0;
                    while j + 2 * l <= d.subw {
                        for (q, a) in acc[..2 * l].iter_mut().enumerate() {
                            let (u, v) = term(i, j + q);
                            *a = u.mul_add(v, *a);
                        }
                        j += 2 * l;
                    }
                    while j + l <= d.subw {
                        for (q, a) in acc[..l].iter_mut().enumerate() {
                            let (u, v) = term(i, j + q);
                            *a = u.mul_add(v, *a);
                        }
                        j += l;
                    }
                    while j < d.subw {
                        let (u, v) = term(i, j);
                        tail += u * v;
                        j += 1;
                    }
                }
                if l == 4 {
                    let t: Vec<f64> = (0..4).map(|q| acc[q] + acc[q + 4]).collect();
                    (((t[0] + t[1]) + t[2]) + t[3]) + tail
                } else {
                    let s: Vec<f64> = (0..8).map(|q| acc[q] + acc[q + 8]).collect();
                    let t: Vec<f64> = (0..4).map(|q| s[q + 4] + s[q]).collect();
                    ((t[2] + t[0]) + (t[3] + t[1])) + tail
                }
            };
        }
        sums
    }

    /// One plane through every kernel as `SpeedPlan::run_plane` and `run_cov` queue them, into
    /// its result slots as the device writes them.
    fn plane_slots_of(
        core: &Speed,
        t: Option<&DeviceTaps>,
        family: i32,
        plane: &[f32],
    ) -> Vec<u64> {
        let d = *core.dims();
        let (aa, mean) = core.filters();
        let (aa, mean) = (taps(aa), taps(mean));
        let (sw, sh) = if t.is_some() {
            (d.sw, d.sh)
        } else {
            (d.w, d.h)
        };
        let scaled = prep(t, &d, plane);
        let step = 1 << NUM_SCALES;
        let rows = vfilter(
            &filter_args([0; 3], &aa, (sw, sh), (sw, d.dh), step),
            &scaled,
        );
        let raw = hfilter(
            &filter_args([0; 3], &aa, (sw, d.dh), (d.dw, d.dh), step),
            &rows,
            None,
        );
        let g = (d.dw, d.dh);
        let tmp = vfilter(&filter_args([0; 3], &mean, g, g, 1), &raw);
        let small = hfilter(&filter_args([0; 3], &mean, g, g, 1), &tmp, Some(&raw));
        let sums = cov(&d, &small, family);
        let mut res: Vec<u64> = sums.iter().map(|s| s.to_bits()).collect();
        res.resize(plane_slots(&d), 0);
        for (i, v) in small.iter().enumerate() {
            res[COV_SUMS + i / 2] |= (v.to_bits() as u64) << (32 * (i % 2));
        }
        res
    }

    fn noise_plane(w: usize, h: usize, seed: u32) -> Vec<f32> {
        let mut s = seed.wrapping_mul(2_654_435_761) | 1;
        (0..w * h)
            .map(|i| {
                s ^= s << 13;
                s ^= s >> 17;
                s ^= s << 5;
                // Smooth structure plus noise, as picture_copy's values (-128..128).
                let (x, y) = ((i % w) as f32, (i / w) as f32);
                ((x * 0.07).sin() * 60.0 + (y * 0.05).cos() * 40.0 + (s % 41) as f32 - 20.0)
                    .round()
                    .clamp(-128.0, 127.0)
            })
            .collect()
    }

    /// The kernels' values, finished by `score_prepared`, equal `Speed::score` bit for bit in
    /// every scaling method, kernel scale, family and size class (odd sizes, no rescale, up- and
    /// downscaling, identical planes).
    #[test]
    fn kernel_decomposition_equals_the_cpu_core() {
        let methods = [
            Method::Nearest,
            Method::Bilinear,
            Method::Bicubic,
            Method::Lanczos4,
        ];
        let cases: &[(usize, usize, f64, f32)] = &[
            (181, 163, 1.0, 1.0),
            (240, 170, 0.5, 1.0),
            (321, 181, 0.6, 1.0),
            (97, 90, 1.5, 0.5),
            (171, 161, 1.0, 360.0 / 97.0),
            (200, 170, 0.75, 2.0),
            (161, 163, 1.0005, 1.0),
            (161, 163, 1.002, 1.0),
        ];
        let families = [LibvmafIsa::C, LibvmafIsa::Avx2, LibvmafIsa::Avx512];
        let (mut ran, mut nonzero) = (0, 0);
        for &(w, h, prescale, ks) in cases {
            for (mi, &method) in methods.iter().enumerate() {
                for (fi, &fam) in families.iter().enumerate() {
                    let p = Params {
                        kernelscale: ks,
                        prescale,
                        method,
                        sigma_nn: 0.29,
                        nn_floor: 0.2,
                        weight_var_mode: (mi + fi) as i64 % 7,
                    };
                    if crate::feature::speed::check("speed_chroma", &p, w, h, "test").is_err() {
                        continue;
                    }
                    let r = noise_plane(w, h, (w + mi) as u32);
                    let dis = noise_plane(w, h, (h + 7 * fi) as u32 + 3);
                    for (a, b) in [(&r, &dis), (&r, &r)] {
                        let mut cpu = Speed::new(p, w, h, fam, crate::cpu::CpuLevel::Scalar);
                        let want = cpu.score(a, b);
                        let mut gpu = Speed::new(p, w, h, fam, crate::cpu::CpuLevel::Scalar);
                        let t = gpu.scaler().and_then(|s| s.device_taps());
                        let slots =
                            [a, b].map(|pl| plane_slots_of(&gpu, t.as_ref(), fi as i32, pl));
                        let mut copy = gpu.clone();
                        let got = gpu.score_prepared(|side, small, sums| {
                            read_plane(&slots[side], small, sums)
                        });
                        // A pooling thread's copy of the core (SpeedPool) scores the same.
                        let pooled = copy.score_prepared(|side, small, sums| {
                            read_plane(&slots[side], small, sums)
                        });
                        assert_eq!((got.0.to_bits(), got.1), (pooled.0.to_bits(), pooled.1));
                        ran += 1;
                        nonzero += usize::from(want.0 != 0.0);
                        assert_eq!(
                            (want.0.to_bits(), want.1),
                            (got.0.to_bits(), got.1),
                            "{w}x{h} prescale {prescale} ks {ks} {method:?} {fam:?}: {want:?} vs {got:?}"
                        );
                    }
                }
            }
        }
        // Every case is scored (none fails the CPU's check); the distinct pairs mostly to nonzero
        // values (identical pairs score 0).
        assert_eq!(ran, cases.len() * methods.len() * families.len() * 2);
        assert!(nonzero >= ran / 4, "{nonzero} of {ran}");
    }
}
