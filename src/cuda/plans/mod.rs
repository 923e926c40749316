//! The CUDA backend's half of the (extractor, backend) registry: one [`GpuDef`] per extractor that
//! has CUDA kernels, found by its CPU definition ([`find`]). A plan ([`GpuPlan`]) is one extractor
//! instance on the GPU: it sizes its result slots and scratch, queues its kernels for a frame and
//! turns the integer sums read back into the instance's row slots, with the host-side steps (in
//! `f32`/`f64`) done exactly as the CPU extractor does them.
//!
//! Adding a CUDA kernel for an extractor: its kernels in `kernels/<name>.cu` with an ABI struct and
//! a launch wrapper in `cuda/kernels.rs`, a file here with its plan, its scratch type and its
//! `GpuDef`, and one line in [`REGISTRY`]. Everything else (the fallback, the placement log, the
//! result block) follows from the registry.

mod adm;
mod cambi;
mod ciede;
mod float_adm;
mod float_ansnr;
mod float_moment;
mod float_motion;
mod float_ms_ssim;
mod float_psnr;
mod float_ssim;
mod float_vif;
mod motion;
mod psnr;
mod psnr_hvs;
mod speed;
mod vif;

use super::driver::DevBuf;
use super::kernels::{Kernels, SrcPlane};
use crate::engine::InstanceInfo;
use crate::error::Result;
use crate::feature::ExtractorDef;
use cudarc::driver::sys;
use std::any::{Any, TypeId};
use std::sync::Arc;

/// Every extractor with CUDA kernels in this build (the CUDA column of the registry).
static REGISTRY: &[&GpuDef] = &[
    &adm::GPU,
    &cambi::GPU,
    &ciede::GPU,
    &float_ansnr::GPU,
    &float_adm::GPU,
    &float_moment::GPU,
    &float_motion::GPU,
    &float_ms_ssim::GPU,
    &float_psnr::GPU,
    &float_ssim::GPU,
    &float_vif::GPU,
    &motion::GPU,
    &psnr::GPU,
    &psnr_hvs::GPU,
    &speed::CHROMA,
    &speed::TEMPORAL,
    &vif::GPU,
];

/// The CUDA implementation of one extractor.
pub(crate) struct GpuDef {
    /// The extractor it computes (its options, outputs and CPU twin).
    pub extractor: &'static ExtractorDef,
    /// Builds the plan of an engine instance; `offset` is its first slot in the result block.
    pub create: fn(&InstanceInfo<'_>, Geometry, usize) -> Result<Box<dyn GpuPlan>>,
    /// Whether the kernels cover this instance (format, options); one they do not runs on the
    /// CPU fallback.
    pub supports: fn(&InstanceInfo<'_>) -> bool,
}

/// [`GpuDef::supports`] of kernels that cover every instance.
pub(crate) fn every_instance(_: &InstanceInfo<'_>) -> bool {
    true
}

/// The CUDA implementation of an extractor, if it has one (looked up by definition, not name).
pub(crate) fn find(def: &ExtractorDef) -> Option<&'static GpuDef> {
    REGISTRY
        .iter()
        .copied()
        .find(|g| std::ptr::eq(g.extractor, def))
}

/// The CUDA implementation that runs this instance, if any: its extractor has one, it covers the
/// instance's format and options, and the extractor is not named in `VMAF_RS_CUDA_ON_CPU`.
pub(crate) fn find_for(info: &InstanceInfo<'_>) -> Option<&'static GpuDef> {
    find(info.def).filter(|g| (g.supports)(info) && !forced_to_cpu(info.def.name))
}

/// Whether `VMAF_RS_CUDA_ON_CPU` (extractor names, comma-separated) sends `name` to the CPU
/// fallback although it has kernels: to compare the two paths on the same CUDA frames, or to
/// step around a kernel; the tests use it to keep the fallback's chroma downloads covered now
/// that every chroma feature has kernels.
fn forced_to_cpu(name: &str) -> bool {
    std::env::var("VMAF_RS_CUDA_ON_CPU").is_ok_and(|v| v.split(',').any(|n| n.trim() == name))
}

/// One extractor instance on the GPU.
pub(crate) trait GpuPlan: Send {
    /// The extractor it computes.
    fn name(&self) -> &'static str;
    /// Number of `u64` result slots it writes in each frame's result block.
    fn results_len(&self) -> usize;
    /// Frames back it reads reference frames from (motion: 1, or 2 in five-frame mode).
    fn ref_lag(&self) -> u64 {
        0
    }
    /// Allocates its scratch in `scratch` unless an instance of the same kind already did
    /// (instances of one kind share it: the work of one stream runs in order), queuing any table
    /// uploads on `stream`.
    fn alloc_scratch(
        &self,
        scratch: &mut Scratch,
        geom: Geometry,
        stream: sys::CUstream,
    ) -> Result<()>;
    /// Whether it reads the distorted frame on frames `n_subsample` skips too (so the scorer
    /// holds those frames until the kernels are done).
    fn reads_unscored_distorted(&self) -> bool {
        false
    }
    /// Queues the frame's kernels.
    fn enqueue(&self, io: &FrameIo, c: &Ctx<'_>) -> Result<()>;
    /// Writes the instance's per-frame values into `row` from the frame's result block (frames
    /// complete in order, so a plan may keep stream totals here).
    fn finish(&mut self, res: &[u64], io: FrameMeta, geom: Geometry, row: &mut [f64]);
    /// The part of `finish` that may run on another thread, if the plan splits one off.
    fn host_pool(&self) -> Option<Arc<dyn HostPool>> {
        None
    }
    /// `finish` given the values its [`HostPool`] computed for the frame (`pooled`: empty
    /// without one, or for a frame it did not run on).
    fn finish_pooled(
        &mut self,
        res: &[u64],
        io: FrameMeta,
        geom: Geometry,
        pooled: &[f64],
        row: &mut [f64],
    ) {
        debug_assert!(
            pooled.is_empty(),
            "{}: pooled values without a pool",
            self.name()
        );
        self.finish(res, io, geom, row);
    }
    /// The extractor's integer totals over the frames finished ([`crate::Engine::add_totals`]),
    /// the same values as the CPU extractor's `totals`; empty when it has none.
    fn totals(&self) -> &[u64] {
        &[]
    }
}

/// Host work of a plan that needs only a scored frame's result block and the plan's fixed
/// set-up, split off [`GpuPlan::finish`] so that frames are pooled on other threads while the
/// scorer goes on: cambi's quickselects take longer than the GPU's whole frame.
pub(crate) trait HostPool: Send + Sync {
    /// Values computed per scored frame.
    fn len(&self) -> usize;
    /// Computes them from the frame's result block into `out` (`len` values); runs on any
    /// thread, frames in any order. It may reorder its own part of `res` (cambi selects in
    /// place): nothing reads that part after the pooling.
    fn run(&self, res: &mut [u64], io: FrameMeta, out: &mut [f64]);
    /// Called once, on the scorer's thread, when `threads` pooling threads start: makes what
    /// each of them needs there, not on whichever thread first pools a frame, so a graph's
    /// host memory is the same every time it runs (the reducer's RSS stays flat).
    fn prepare(&self, threads: usize) {
        let _ = threads;
    }
}

/// Size and sample layout of the stream.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Geometry {
    pub w: usize,
    pub h: usize,
    pub bpc: u8,
    /// Right shift of every stored sample (MSB-aligned formats).
    pub shift: u8,
}

impl Geometry {
    /// Whether samples are bytes (8-bit) rather than 16-bit words.
    pub fn eight_bit(&self) -> bool {
        self.bpc == 8
    }
    /// Bytes per stored sample.
    pub fn bytes_per_sample(&self) -> usize {
        if self.eight_bit() {
            1
        } else {
            2
        }
    }
}

/// Which frame a result block belongs to.
#[derive(Debug, Clone, Copy)]
pub(crate) struct FrameMeta {
    pub index: u64,
    /// Whether `n_subsample` scores it (otherwise only every-frame work ran).
    pub scored: bool,
}

/// The Cb and Cr planes of one frame as the kernels see them: sample `x` of a row is element
/// `x * step` (`step` 2 in an interleaved CbCr plane, whose Cr plane starts one sample in).
#[derive(Debug, Clone, Copy)]
pub(crate) struct ChromaIo {
    pub planes: [SrcPlane; 2],
    pub step: i32,
}

/// The planes of one frame as the kernels see them.
pub(crate) struct FrameIo {
    pub reference: SrcPlane,
    pub distorted: SrcPlane,
    /// Chroma, when the frames came with chroma planes.
    pub reference_chroma: Option<ChromaIo>,
    pub distorted_chroma: Option<ChromaIo>,
    pub prev: Option<SrcPlane>,
    pub prev_prev: Option<SrcPlane>,
    pub meta: FrameMeta,
}

/// What the plans share while enqueueing one frame.
pub(crate) struct Ctx<'a> {
    pub k: &'a Kernels,
    pub stream: sys::CUstream,
    /// Device address of the frame's result block (`u64` values).
    pub results: u64,
    pub scratch: &'a Scratch,
    pub geom: Geometry,
}

impl Ctx<'_> {
    /// Device address of result slot `slot`.
    pub fn result(&self, slot: usize) -> u64 {
        self.results + 8 * slot as u64
    }
}

/// Device memory a plan kind keeps between frames.
pub(crate) trait ScratchBufs: Any + Send {
    /// Device bytes held.
    fn bytes(&self) -> usize;
}

/// Device scratch of every plan kind, one value per type (allocated on the first frame).
#[derive(Default)]
pub(crate) struct Scratch {
    items: Vec<(TypeId, Box<dyn Any + Send>, usize)>,
}

impl Scratch {
    /// Allocates what `plans` need and queues the table uploads on `stream`.
    pub(crate) fn alloc(
        plans: &[Box<dyn GpuPlan>],
        geom: Geometry,
        stream: sys::CUstream,
    ) -> Result<Self> {
        let mut s = Scratch::default();
        for p in plans {
            p.alloc_scratch(&mut s, geom, stream)?;
        }
        Ok(s)
    }

    /// Stores `make()`'s buffers unless buffers of type `T` are already there.
    pub(crate) fn get_or_alloc<T: ScratchBufs>(
        &mut self,
        make: impl FnOnce() -> Result<T>,
    ) -> Result<()> {
        if self.items.iter().all(|(t, _, _)| *t != TypeId::of::<T>()) {
            let v = make()?;
            let bytes = v.bytes();
            self.items.push((TypeId::of::<T>(), Box::new(v), bytes));
        }
        Ok(())
    }

    /// [`Scratch::get_or_alloc`], then `join(buffers)`: for a kind whose instances add buffers
    /// of their own to the shared value (ADM's groups); the bytes held are counted after it.
    pub(crate) fn get_or_alloc_join<T: ScratchBufs>(
        &mut self,
        make: impl FnOnce() -> Result<T>,
        join: impl FnOnce(&mut T) -> Result<()>,
    ) -> Result<()> {
        self.get_or_alloc(make)?;
        let (_, b, bytes) = self
            .items
            .iter_mut()
            .find(|(t, _, _)| *t == TypeId::of::<T>())
            .expect("stored just above");
        let v = b.downcast_mut::<T>().expect("stored under its own type");
        join(v)?;
        *bytes = v.bytes();
        Ok(())
    }

    /// The buffers of type `T` (allocated by the plan's `alloc_scratch` before any frame).
    pub(crate) fn get<T: ScratchBufs>(&self) -> &T {
        self.items
            .iter()
            .find_map(|(_, b, _)| b.downcast_ref::<T>())
            .expect("scratch is allocated with the plans, before the first frame")
    }

    /// Device bytes held.
    pub(crate) fn bytes(&self) -> usize {
        self.items.iter().map(|(_, _, n)| n).sum()
    }

    /// Stores `make()`'s buffers for the one instance whose first result slot is `offset`: for a
    /// kind whose instances keep state between frames (float_motion's blurred frames), which
    /// instances of the kind cannot share.
    pub(crate) fn alloc_for_instance<T: ScratchBufs>(
        &mut self,
        offset: usize,
        make: impl FnOnce() -> Result<T>,
    ) -> Result<()> {
        let bufs = make()?;
        let bytes = bufs.bytes();
        let item = PerInstance { offset, bufs };
        self.items
            .push((TypeId::of::<PerInstance<T>>(), Box::new(item), bytes));
        Ok(())
    }

    /// The buffers [`Scratch::alloc_for_instance`] made for the instance at `offset`.
    pub(crate) fn for_instance<T: ScratchBufs>(&self, offset: usize) -> &T {
        self.items
            .iter()
            .find_map(|(_, b, _)| {
                b.downcast_ref::<PerInstance<T>>()
                    .filter(|p| p.offset == offset)
            })
            .map(|p| &p.bufs)
            .expect("scratch is allocated with the plans, before the first frame")
    }
}

/// One instance's buffers in [`Scratch`], under its first result slot.
struct PerInstance<T> {
    offset: usize,
    bufs: T,
}

/// A tightly packed scratch plane as a kernel source (`bytes_per_sample` per sample).
pub(crate) fn packed_plane(b: &DevBuf, w: usize, bytes_per_sample: usize) -> SrcPlane {
    SrcPlane {
        ptr: b.ptr,
        pitch: (w * bytes_per_sample) as u64,
        shift: 0,
        pad_: 0,
    }
}
