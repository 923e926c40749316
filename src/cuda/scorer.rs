//! The CUDA scorer: a bounded pipeline of frames in flight in a borrowed context, on its own
//! streams (a main one and side streams it forks to and joins back each frame) ordered after the
//! producer's.

use super::driver::{
    ensure_driver, CtxGuard, DevBuf, Event, Module, PinnedBytes, PinnedU64, Stream,
};
use super::fallback::Fallback;
use super::kernels::{Kernels, SrcPlane};
use super::plans::{self, ChromaIo, Ctx, FrameIo, FrameMeta, Geometry, GpuPlan, HostPool, Scratch};
use super::streams::{parse_streams, StreamPlan};
use super::CudaFrame;
use crate::engine::{Engine, InstanceInfo};
use crate::error::{Error, Result};
use crate::picture::PictureFormat;
use cudarc::driver::sys;
use std::collections::VecDeque;
use std::ffi::c_void;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{mpsc, Arc, Mutex};
use std::thread::JoinHandle;

/// Frames in flight by default (submitted, results not yet read back).
pub const DEFAULT_DEPTH: usize = 4;

/// Most pooling threads (and result slots pooling at once) of a scorer whose plans have host
/// pooling ([`HostPool`]).
const MAX_POOL_THREADS: usize = 12;
/// Most pinned memory the pooling slots may take together (each holds a frame's result block).
const POOL_SLOTS_BYTES: usize = 256 << 20;

/// GPU state made on the first frame.
struct Runtime {
    // Dropped in this order: buffers first, then our stream, the module last.
    scratch: Scratch,
    results: DevBuf,
    slots: Vec<Slot>,
    free_slots: Vec<usize>,
    /// Where each frame's work starts and ends: ordered after the producer's stream by each
    /// frame's `input` event, never serialised with the producer's later work (the decoder's
    /// next frames).
    stream: Stream,
    /// Side streams that run some plan kinds' kernels beside the others' (see
    /// [`StreamPlan`]): each waits for `fork`, recorded on `stream` when a frame starts, and
    /// `stream` waits for each one's `joins` event before the frame's results are downloaded,
    /// so the frame's `event` still covers all of its work.
    side: Vec<Stream>,
    fork: Event,
    joins: Vec<Event>,
    kernels: Kernels,
    _module: Module,
}

struct Slot {
    pinned: PinnedU64,
    /// Downloaded planes for the CPU fallback, if the plan has one.
    staging: Option<PinnedBytes>,
    /// Recorded on the producer's stream when the frame is submitted: our stream waits for it.
    input: Event,
    /// Recorded on our stream after the frame's last operation.
    event: Event,
}

/// Makes `main` wait for the work queued so far on each side stream (`joins`: one event each).
fn join_side_streams(main: &Stream, side: &[Stream], joins: &[Event]) -> Result<()> {
    for (st, ev) in side.iter().zip(joins) {
        ev.record(st.0)?;
        main.wait_event(ev)?;
    }
    Ok(())
}

struct InFlight {
    index: u64,
    scored: bool,
    slot: usize,
    /// Held until the frame's event completes.
    distorted: Option<CudaFrame>,
}

/// A frame the GPU is done with (its planes released), whose row waits for its host pooling.
struct Pooling {
    index: u64,
    scored: bool,
    slot: usize,
    /// The values of the plans' [`HostPool`]s, in plan order (empty when none ran); `None`
    /// while a pooling thread computes them.
    values: Option<Vec<f64>>,
}

/// A slot's result block handed to a pooling thread, which may reorder the parts its pools
/// own ([`HostPool::run`]).
struct ResultView {
    ptr: *mut u64,
    len: usize,
}

// SAFETY: while a frame pools, its slot's pinned block is touched by nothing but the one
// pooling job holding this view: the scorer neither reads, reuses nor frees the slot until that
// job's answer has come back (`Pooling`), and the GPU's copy into it finished before the job
// was made (`retire` waits for the slot's event).
unsafe impl Send for ResultView {}

impl ResultView {
    fn of(p: &mut PinnedU64) -> Self {
        let s = p.as_mut_slice();
        ResultView {
            ptr: s.as_mut_ptr(),
            len: s.len(),
        }
    }

    fn as_mut_slice(&mut self) -> &mut [u64] {
        // SAFETY: `len` initialised values of a pinned buffer that outlives this view and that
        // nothing else accesses while the frame pools (see the `Send` impl).
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) }
    }
}

type PoolJob = Box<dyn FnOnce() + Send>;

/// The threads that run frames' host pooling, taking jobs in order from one queue.
struct PoolThreads {
    jobs: Option<mpsc::Sender<PoolJob>>,
    handles: Vec<JoinHandle<()>>,
}

impl PoolThreads {
    fn new(n: usize) -> Result<Self> {
        let (tx, rx) = mpsc::channel::<PoolJob>();
        let rx = Arc::new(Mutex::new(rx));
        let mut handles = Vec::with_capacity(n);
        for i in 0..n {
            let rx = Arc::clone(&rx);
            let h = std::thread::Builder::new()
                .name(format!("vmaf_rs-pool{i}"))
                .spawn(move || loop {
                    // The lock is held only to take a job, not while it runs.
                    let job = match rx.lock() {
                        Ok(q) => q.recv(),
                        Err(_) => break,
                    };
                    match job {
                        Ok(job) => job(),
                        Err(_) => break, // the scorer is gone
                    }
                })
                .map_err(|e| Error::Internal(format!("cannot start a pooling thread: {e}")))?;
            handles.push(h);
        }
        Ok(PoolThreads {
            jobs: Some(tx),
            handles,
        })
    }

    fn run(&self, job: PoolJob) -> Result<()> {
        self.jobs
            .as_ref()
            .and_then(|j| j.send(job).ok())
            .ok_or_else(|| Error::Internal("the pooling threads stopped".into()))
    }
}

impl Drop for PoolThreads {
    fn drop(&mut self) {
        self.jobs = None;
        for h in self.handles.drain(..) {
            let _ = h.join();
        }
    }
}

/// Scores (reference, distorted) CUDA frames of one stream on the GPU, inside a context and
/// stream it borrows (FFmpeg's `AVCUDADeviceContext`).
///
/// Frames are borrowed device planes ([`CudaFrame`]); each frame's release callback runs exactly
/// once, as soon as the GPU no longer reads it (a reference frame is kept until the motion of the
/// frames that compare against it is done). Results come back in frame order through
/// [`CudaScorer::poll`] / [`CudaScorer::drain`] as per-frame rows for [`Engine::push_spatial`].
///
/// Lifecycle (docs/LIFECYCLE.md): `new` allocates nothing on the GPU; the module, device buffers
/// and pinned memory are made on the first [`CudaScorer::submit`] and reused; dropping the scorer
/// waits for its queued work, frees everything it allocated, unloads its module and releases every
/// frame it still holds. The borrowed context is never created, retained or destroyed.
pub struct CudaScorer {
    ctx: sys::CUcontext,
    stream: sys::CUstream,
    geom: Geometry,
    plans: Vec<Box<dyn GpuPlan>>,
    /// The engine instance index of each plan (for its totals).
    plan_instances: Vec<usize>,
    /// Extractors without a CUDA kernel, run on the CPU from downloaded planes.
    fallback: Option<Fallback>,
    row_len: usize,
    n_subsample: u64,
    lag: u64,
    depth: usize,
    /// Which of our streams runs each plan.
    streams: StreamPlan,
    results_len: usize,
    rt: Option<Runtime>,
    /// How long the first frame's start-up took: (kernel module, device and pinned buffers).
    startup: Option<(std::time::Duration, std::time::Duration)>,
    next_index: u64,
    in_flight: VecDeque<InFlight>,
    /// Frames done on the GPU whose rows wait for their host pooling, in frame order.
    pooling: VecDeque<Pooling>,
    /// Each plan's host pooling, if it has one.
    pools: Vec<Option<Arc<dyn HostPool>>>,
    /// The pools of `pools`, in plan order (what a pooling job runs).
    pool_set: Arc<[Arc<dyn HostPool>]>,
    /// Values of `pool_set` per frame.
    pooled_len: usize,
    /// Pooling threads and their result slots beyond `depth` (none without pools; made with the
    /// runtime).
    pool_threads: Option<PoolThreads>,
    pool_depth: usize,
    /// The pooling threads' answers: (frame index, values).
    pool_tx: mpsc::Sender<(u64, Vec<f64>)>,
    pool_rx: mpsc::Receiver<(u64, Vec<f64>)>,
    spare_pooled: Vec<Vec<f64>>,
    ready: VecDeque<Vec<f64>>,
    spare_rows: Vec<Vec<f64>>,
    /// Reference frames still needed (by in-flight work or by the motion of later frames).
    refs: VecDeque<(u64, CudaFrame)>,
}

// SAFETY: the raw handles (context, stream, device pointers, pinned memory) are plain driver
// handles usable from any thread; every method pushes the borrowed context on the calling thread
// first. `&mut self` methods only, and the type is not Sync, so there is no concurrent use. The
// release callbacks are `Send`.
unsafe impl Send for CudaScorer {}

impl std::fmt::Debug for CudaScorer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CudaScorer")
            .field("geometry", &self.geom)
            .field("next_index", &self.next_index)
            .field("in_flight", &self.in_flight.len())
            .finish()
    }
}

impl CudaScorer {
    /// Configures a scorer. Checks the driver and the plan; allocates nothing on the GPU.
    ///
    /// * `ctx`: the `CUcontext` to work in (FFmpeg's `AVCUDADeviceContext.cuda_ctx`), borrowed:
    ///   the caller keeps it alive (holds its device reference) until the scorer is dropped.
    /// * `stream`: the producer's `CUstream` (may be NULL, the legacy default stream): each
    ///   frame's work waits for what is queued on it when the frame is submitted, then runs on
    ///   the scorer's own non-blocking stream, so the producer's later work never waits for ours.
    /// * `format`: the stream's luma size and bit depth; `shift`: right shift of stored samples
    ///   (`16 - bpc` for MSB-aligned p010/p012/p016, yuv444p10msb/12msb; 0 otherwise).
    /// * `instances`, `row_len`, `n_subsample`: from the engine ([`Engine::instances`],
    ///   [`Engine::spatial_row_len`], its configuration); see [`CudaScorer::for_engine`].
    pub fn new(
        ctx: *mut c_void,
        stream: *mut c_void,
        format: PictureFormat,
        shift: u8,
        instances: &[InstanceInfo<'_>],
        row_len: usize,
        n_subsample: u32,
    ) -> Result<Self> {
        format.validate()?;
        if ctx.is_null() {
            return Err(Error::InvalidOption(
                "CUDA context is NULL (pass the frames' AVCUDADeviceContext.cuda_ctx)".into(),
            ));
        }
        if shift as u32 + format.bpc as u32 > 16 || (format.bpc == 8 && shift != 0) {
            return Err(Error::InvalidOption(format!(
                "sample shift {shift} with {} bits per sample",
                format.bpc
            )));
        }
        if n_subsample == 0 {
            return Err(Error::InvalidOption(
                "n_subsample must be at least 1".into(),
            ));
        }
        ensure_driver()?;
        let geom = Geometry {
            w: format.width,
            h: format.height,
            bpc: format.bpc,
            shift,
        };
        let mut plans = Vec::new();
        let mut plan_instances = Vec::new();
        let mut offset = 0;
        for (i, info) in instances.iter().enumerate() {
            if info.columns.end > row_len {
                return Err(Error::Internal(format!(
                    "instance {} writes column {} of a {row_len}-column row",
                    info.extractor, info.columns.end
                )));
            }
            let Some(gpu) = plans::find_for(info) else {
                continue; // no CUDA kernel: the fallback runs it on the CPU
            };
            let p = (gpu.create)(info, geom, offset)?;
            offset += p.results_len();
            plans.push(p);
            plan_instances.push(i);
        }
        let lag = plans.iter().map(|p| p.ref_lag()).max().unwrap_or(0);
        let fallback = Fallback::new(instances, shift)?;
        let pools: Vec<Option<Arc<dyn HostPool>>> = plans.iter().map(|p| p.host_pool()).collect();
        let pool_set: Arc<[Arc<dyn HostPool>]> = pools.iter().flatten().cloned().collect();
        let pooled_len = pool_set.iter().map(|p| p.len()).sum();
        let results_len = offset.max(1);
        let pool_depth = if pool_set.is_empty() {
            0
        } else {
            let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
            threads
                .min(MAX_POOL_THREADS)
                .min(POOL_SLOTS_BYTES / (results_len * 8))
                .max(1)
        };
        // Which stream runs each plan (`VMAF_RS_CUDA_STREAMS`: how many at most).
        let most = parse_streams(std::env::var("VMAF_RS_CUDA_STREAMS").ok().as_deref())?;
        let streams = StreamPlan::deal(plans.iter().map(|p| p.name()), most);
        let (pool_tx, pool_rx) = mpsc::channel();
        Ok(CudaScorer {
            ctx: ctx as sys::CUcontext,
            stream: stream as sys::CUstream,
            geom,
            plans,
            plan_instances,
            fallback,
            row_len,
            n_subsample: n_subsample as u64,
            lag,
            depth: DEFAULT_DEPTH,
            streams,
            results_len,
            rt: None,
            startup: None,
            next_index: 0,
            in_flight: VecDeque::new(),
            pooling: VecDeque::new(),
            pools,
            pool_set,
            pooled_len,
            pool_threads: None,
            pool_depth,
            pool_tx,
            pool_rx,
            spare_pooled: Vec::new(),
            ready: VecDeque::new(),
            spare_rows: Vec::new(),
            refs: VecDeque::new(),
        })
    }

    /// A scorer for `engine`'s plan (its instances, row length, format and `n_subsample`).
    pub fn for_engine(
        ctx: *mut c_void,
        stream: *mut c_void,
        engine: &Engine,
        shift: u8,
    ) -> Result<Self> {
        let instances: Vec<InstanceInfo<'_>> = engine.instances().collect();
        let cfg = engine.config();
        Self::new(
            ctx,
            stream,
            cfg.format,
            shift,
            &instances,
            engine.spatial_row_len(),
            cfg.n_subsample,
        )
    }

    /// Sets the most frames in flight (1..=16, default [`DEFAULT_DEPTH`]); only before the first
    /// frame. More overlap hides read-back latency; every frame in flight holds its two planes.
    pub fn set_depth(&mut self, depth: usize) -> Result<()> {
        if self.rt.is_some() {
            return Err(Error::State("set_depth after the first frame".into()));
        }
        if !(1..=16).contains(&depth) {
            return Err(Error::InvalidOption(format!(
                "pipeline depth {depth} (1 to 16)"
            )));
        }
        self.depth = depth;
        Ok(())
    }

    /// Where each feature runs and, after the first frame, what start-up cost (verbose log).
    pub fn placement(&self) -> String {
        let gpu: Vec<&str> = self.plans.iter().map(|p| p.name()).collect();
        let mut s = format!("vmaf_rs: on CUDA: {}", gpu.join(", "));
        if let Some(f) = &self.fallback {
            s.push_str(&format!(
                "; on the CPU from downloaded planes (no CUDA kernel yet): {}",
                f.names().join(", ")
            ));
        }
        // Start-up is where short clips lose to the CPU path (docs/BENCHMARKS.md): say its cost.
        if let Some((module, buffers)) = self.startup {
            s.push_str(&format!(
                "; start-up {:.1} ms (kernel module {:.1} ms, buffers {:.1} ms)",
                (module + buffers).as_secs_f64() * 1e3,
                module.as_secs_f64() * 1e3,
                buffers.as_secs_f64() * 1e3
            ));
        }
        if self.streams.count() > 1 {
            s.push_str(&format!("; {} streams", self.streams.count()));
        }
        s
    }

    /// Integer totals of the extractors, on CUDA and on the CPU fallback (instance index,
    /// totals), for [`Engine::add_totals`] at the end of the stream.
    pub fn totals(&self) -> Vec<(usize, Vec<u64>)> {
        let mut t = self
            .fallback
            .as_ref()
            .map_or_else(Vec::new, Fallback::totals);
        for (p, &i) in self.plans.iter().zip(&self.plan_instances) {
            if !p.totals().is_empty() {
                t.push((i, p.totals().to_vec()));
            }
        }
        t
    }

    /// Frames submitted so far (the next frame's index).
    pub fn frames_submitted(&self) -> u64 {
        self.next_index
    }

    /// Frames whose planes the scorer still holds (in flight, or kept for motion).
    pub fn frames_held(&self) -> usize {
        self.in_flight
            .iter()
            .filter(|f| f.distorted.is_some())
            .count()
            + self.refs.len()
    }

    /// Device memory allocated by this scorer, in bytes (0 before the first frame).
    pub fn device_bytes(&self) -> usize {
        self.rt
            .as_ref()
            .map_or(0, |rt| rt.scratch.bytes() + rt.results.bytes)
    }

    fn check_frame(&self, what: &str, f: &CudaFrame) -> Result<()> {
        let bps = self.geom.bytes_per_sample();
        if f.luma == 0 {
            return Err(Error::InvalidOption(format!(
                "{what} frame: luma pointer is NULL"
            )));
        }
        if f.pitch < self.geom.w * bps {
            return Err(Error::InvalidOption(format!(
                "{what} frame: pitch {} is smaller than {} bytes ({} samples of {bps} bytes)",
                f.pitch,
                self.geom.w * bps,
                self.geom.w
            )));
        }
        if bps == 2 && (!f.luma.is_multiple_of(2) || !f.pitch.is_multiple_of(2)) {
            return Err(Error::InvalidOption(format!(
                "{what} frame: 16-bit plane pointer or pitch is not 2-byte aligned"
            )));
        }
        Ok(())
    }

    fn plane(&self, f: &CudaFrame) -> SrcPlane {
        SrcPlane {
            ptr: f.luma,
            pitch: f.pitch as u64,
            shift: self.geom.shift as i32,
            pad_: 0,
        }
    }

    /// The chroma planes of `f` for the kernels (None when the frame has none).
    fn chroma(&self, f: &CudaFrame) -> Option<ChromaIo> {
        let plane = |ptr: u64, pitch: usize| SrcPlane {
            ptr,
            pitch: pitch as u64,
            shift: self.geom.shift as i32,
            pad_: 0,
        };
        if f.chroma[0] == 0 {
            None
        } else if f.interleaved {
            let bps = self.geom.bytes_per_sample() as u64;
            let p = f.chroma_pitch[0];
            Some(ChromaIo {
                planes: [plane(f.chroma[0], p), plane(f.chroma[0] + bps, p)],
                step: 2,
            })
        } else if f.chroma[1] == 0 {
            None
        } else {
            Some(ChromaIo {
                planes: [
                    plane(f.chroma[0], f.chroma_pitch[0]),
                    plane(f.chroma[1], f.chroma_pitch[1]),
                ],
                step: 1,
            })
        }
    }

    fn runtime(&mut self) -> Result<&mut Runtime> {
        if self.rt.is_none() {
            let t0 = std::time::Instant::now();
            let module = Module::load()?;
            let kernels = Kernels::resolve(&module)?;
            let t1 = std::time::Instant::now();
            let stream = Stream::new()?;
            let side = (1..self.streams.count())
                .map(|_| Stream::new())
                .collect::<Result<Vec<_>>>()?;
            let joins = side
                .iter()
                .map(|_| Event::new())
                .collect::<Result<Vec<_>>>()?;
            let scratch = Scratch::alloc(&self.plans, self.geom, stream.0)?;
            let results = DevBuf::new(self.results_len * 8, "per-frame results")?;
            let n_slots = self.depth + self.pool_depth;
            let mut slots = Vec::with_capacity(n_slots);
            for _ in 0..n_slots {
                let staging = match &self.fallback {
                    Some(f) => Some(PinnedBytes::new(f.staging_len())?),
                    None => None,
                };
                slots.push(Slot {
                    pinned: PinnedU64::new(self.results_len)?,
                    staging,
                    input: Event::new()?,
                    event: Event::new()?,
                });
            }
            if self.pool_depth > 0 {
                self.pool_threads = Some(PoolThreads::new(self.pool_depth)?);
                for p in self.pool_set.iter() {
                    p.prepare(self.pool_depth);
                }
            }
            self.startup = Some((t1 - t0, t1.elapsed()));
            self.rt = Some(Runtime {
                scratch,
                results,
                free_slots: (0..n_slots).rev().collect(),
                slots,
                stream,
                side,
                fork: Event::new()?,
                joins,
                kernels,
                _module: module,
            });
        }
        Ok(self.rt.as_mut().expect("just made"))
    }

    /// Queues the next frame pair (frame index = frames submitted so far). Asynchronous: returns
    /// once the work is queued, blocking only while the pipeline is full. The frames are held
    /// until the GPU is done with them, then released (their `release` callback runs).
    pub fn submit(&mut self, reference: CudaFrame, distorted: CudaFrame) -> Result<()> {
        self.check_frame("reference", &reference)?;
        self.check_frame("distorted", &distorted)?;
        let _g = CtxGuard::push(self.ctx)?;
        self.runtime()?;
        // Wait for a place on the GPU (at most `depth` frames there) and a free result slot
        // (the others may be pooling).
        loop {
            while self.retire(false)? {}
            let free = self.rt.as_ref().map_or(0, |rt| rt.free_slots.len());
            if self.in_flight.len() < self.depth && free > 0 {
                break;
            }
            if self.in_flight.len() >= self.depth {
                self.retire(true)?;
            } else {
                self.finish_front(true)?;
            }
        }
        let index = self.next_index;
        let scored = index.is_multiple_of(self.n_subsample);
        let plane_at = |back: u64| -> Option<SrcPlane> {
            let want = index.checked_sub(back)?;
            self.refs
                .iter()
                .find(|(i, _)| *i == want)
                .map(|(_, f)| self.plane(f))
        };
        let io = FrameIo {
            reference: self.plane(&reference),
            distorted: self.plane(&distorted),
            reference_chroma: self.chroma(&reference),
            distorted_chroma: self.chroma(&distorted),
            prev: plane_at(1),
            prev_prev: plane_at(2),
            meta: FrameMeta { index, scored },
        };
        let rt = self.rt.as_mut().expect("runtime");
        let slot = rt.free_slots.pop().expect("a slot is free below depth");
        let stream = rt.stream.0;
        let fallback = &mut self.fallback;
        let plans = &self.plans;
        let streams = &self.streams;
        let queued = (|| -> Result<()> {
            let s = &mut rt.slots[slot];
            // Our stream starts on this frame once the producer's work queued so far (the
            // decoder's or upload's writes of these planes) is done.
            s.input.record(self.stream)?;
            rt.stream.wait_event(&s.input)?;
            rt.results.zero_async(self.results_len * 8, stream)?;
            if !rt.side.is_empty() {
                rt.fork.record(stream)?;
                for side in &rt.side {
                    side.wait_event(&rt.fork)?;
                }
            }
            let enqueued = plans.iter().enumerate().try_for_each(|(i, p)| {
                let ctx = Ctx {
                    k: &rt.kernels,
                    stream: match streams.of(i) {
                        0 => stream,
                        n => rt.side[n - 1].0,
                    },
                    results: rt.results.ptr,
                    scratch: &rt.scratch,
                    geom: self.geom,
                };
                p.enqueue(&io, &ctx)
            });
            // Joined even when a plan failed, so that the frame's event below covers whatever
            // was queued on the side streams before the frames are released.
            join_side_streams(&rt.stream, &rt.side, &rt.joins)?;
            enqueued?;
            if let (Some(fb), Some(staging)) = (fallback.as_mut(), s.staging.as_mut()) {
                if fb.needed(scored) {
                    fb.enqueue(staging, [&reference, &distorted], stream)?;
                }
            }
            s.pinned.download_async(rt.results.ptr, stream)?;
            s.event.record(stream)
        })();
        if let Err(e) = queued {
            // Some kernels may be queued on these frames: wait for them before releasing (the
            // side streams directly, in case their join is what failed).
            for side in &rt.side {
                let _ = side.synchronize();
            }
            let s = &rt.slots[slot];
            if s.event.record(stream).is_ok() {
                let _ = s.event.wait();
            }
            rt.free_slots.push(slot);
            return Err(e);
        }
        // A distorted frame nothing reads (not scored, no every-frame plan or fallback) can go
        // right away.
        let needed = scored
            || self.plans.iter().any(|p| p.reads_unscored_distorted())
            || self.fallback.as_ref().is_some_and(|f| f.needed(false));
        let distorted = if needed { Some(distorted) } else { None };
        self.in_flight.push_back(InFlight {
            index,
            scored,
            slot,
            distorted,
        });
        self.refs.push_back((index, reference));
        self.next_index += 1;
        Ok(())
    }

    /// Finishes the oldest frame: waits for it (`block`) or returns `false` if it is not done
    /// (or nothing is in flight or pooling).
    fn complete_oldest(&mut self, block: bool) -> Result<bool> {
        loop {
            while self.retire(false)? {}
            if self.finish_front(false)? {
                return Ok(true);
            }
            if !block {
                return Ok(false);
            }
            if !self.pooling.is_empty() {
                return self.finish_front(true);
            }
            if !self.retire(true)? {
                return Ok(false);
            }
        }
    }

    /// Takes the oldest frame off the GPU once its work is done (waiting for it if `block`):
    /// releases what it no longer needs and starts its host pooling. Returns `false` if it is
    /// not done (or nothing is in flight).
    fn retire(&mut self, block: bool) -> Result<bool> {
        let Some(front) = self.in_flight.front() else {
            return Ok(false);
        };
        let rt = self.rt.as_mut().expect("frames in flight imply a runtime");
        let slot = &rt.slots[front.slot];
        if block {
            slot.event.wait()?;
        } else if !slot.event.is_done()? {
            return Ok(false);
        }
        let f = self.in_flight.pop_front().expect("checked");
        // The kernels have read the frame's planes (the fallback's were downloaded): release
        // them now, not after the pooling.
        drop(f.distorted);
        // Reference j is read by frames up to j + lag; all frames up to f.index are done.
        while self
            .refs
            .front()
            .is_some_and(|(j, _)| j + self.lag <= f.index)
        {
            self.refs.pop_front();
        }
        let values = match &self.pool_threads {
            Some(threads) if f.scored => {
                let mut out = self.spare_pooled.pop().unwrap_or_default();
                out.clear();
                out.resize(self.pooled_len, f64::NAN);
                let mut view = ResultView::of(&mut rt.slots[f.slot].pinned);
                let (set, tx, index) = (Arc::clone(&self.pool_set), self.pool_tx.clone(), f.index);
                let meta = FrameMeta {
                    index,
                    scored: true,
                };
                let job = threads.run(Box::new(move || {
                    let res = view.as_mut_slice();
                    let ran = catch_unwind(AssertUnwindSafe(|| {
                        let mut at = 0;
                        for p in set.iter() {
                            p.run(res, meta, &mut out[at..at + p.len()]);
                            at += p.len();
                        }
                    }));
                    if ran.is_err() {
                        out.fill(f64::NAN);
                    }
                    let _ = tx.send((index, out));
                }));
                // Without a pooling thread the plans pool inline, in `finish_front`.
                job.is_err().then(Vec::new)
            }
            _ => Some(Vec::new()),
        };
        self.pooling.push_back(Pooling {
            index: f.index,
            scored: f.scored,
            slot: f.slot,
            values,
        });
        Ok(true)
    }

    /// Takes the pooling threads' answers that have come (waiting for one if `block`).
    fn collect_answers(&mut self, block: bool) -> Result<()> {
        let mut next = if block {
            Some(
                self.pool_rx
                    .recv()
                    .map_err(|_| Error::Internal("the pooling threads stopped".into()))?,
            )
        } else {
            self.pool_rx.try_recv().ok()
        };
        while let Some((index, values)) = next {
            if let Some(p) = self.pooling.iter_mut().find(|p| p.index == index) {
                p.values = Some(values);
            }
            next = self.pool_rx.try_recv().ok();
        }
        Ok(())
    }

    /// Computes the row of the oldest frame off the GPU once its pooling is done (waiting for
    /// it if `block`) and frees its slot. Returns `false` if it is not done (or none is there).
    fn finish_front(&mut self, block: bool) -> Result<bool> {
        let pending = |s: &Self| s.pooling.front().map(|p| p.values.is_none());
        match pending(self) {
            None => return Ok(false),
            Some(true) => {
                self.collect_answers(false)?;
                while block && pending(self) == Some(true) {
                    self.collect_answers(true)?;
                }
                if pending(self) == Some(true) {
                    return Ok(false);
                }
            }
            Some(false) => {}
        }
        let f = self.pooling.pop_front().expect("checked");
        let pooled = f.values.expect("checked");
        let rt = self.rt.as_mut().expect("frames in flight imply a runtime");
        let slot = &rt.slots[f.slot];
        let mut row = self.spare_rows.pop().unwrap_or_default();
        row.clear();
        row.resize(self.row_len, f64::NAN);
        let res = slot.pinned.as_slice();
        let meta = FrameMeta {
            index: f.index,
            scored: f.scored,
        };
        let mut at = 0;
        for (p, pool) in self.plans.iter_mut().zip(&self.pools) {
            let n = match pool {
                Some(pool) if !pooled.is_empty() => pool.len(),
                _ => 0,
            };
            p.finish_pooled(res, meta, self.geom, &pooled[at..at + n], &mut row);
            at += n;
        }
        let host = match (&mut self.fallback, &slot.staging) {
            (Some(fb), Some(staging)) if fb.needed(f.scored) => {
                fb.run(staging, f.index, f.scored, &mut row)
            }
            _ => Ok(()),
        };
        rt.free_slots.push(f.slot);
        self.spare_pooled.push(pooled);
        host?;
        self.ready.push_back(row);
        Ok(true)
    }

    /// The next finished frame's row (frame order), without blocking. Returns `false` when the
    /// oldest frame in flight is not done yet (or nothing is in flight).
    pub fn poll(&mut self, out: &mut Vec<f64>) -> Result<bool> {
        if self.ready.is_empty() && !(self.in_flight.is_empty() && self.pooling.is_empty()) {
            let _g = CtxGuard::push(self.ctx)?;
            self.complete_oldest(false)?;
        }
        match self.ready.pop_front() {
            Some(row) => {
                out.clear();
                out.extend_from_slice(&row);
                self.spare_rows.push(row);
                Ok(true)
            }
            None => Ok(false),
        }
    }

    /// Waits for every frame in flight and hands each remaining row to `out`, in frame order.
    /// Reference frames that later frames' motion would compare against stay held (until the
    /// next frames or the drop).
    pub fn drain(&mut self, out: &mut dyn FnMut(&[f64])) -> Result<()> {
        if !(self.in_flight.is_empty() && self.pooling.is_empty()) {
            let _g = CtxGuard::push(self.ctx)?;
            while self.complete_oldest(true)? {}
        }
        while let Some(row) = self.ready.pop_front() {
            out(&row);
            self.spare_rows.push(row);
        }
        Ok(())
    }
}

impl Drop for CudaScorer {
    fn drop(&mut self) {
        // 0. Let the pooling threads finish the frames they read (pinned memory freed below).
        while self.pooling.iter().any(|p| p.values.is_none()) {
            if self.collect_answers(true).is_err() {
                break;
            }
        }
        self.pool_threads = None;
        match CtxGuard::push(self.ctx) {
            Ok(_g) => {
                // 1. Wait for our queued work (only our events: no device-wide synchronisation).
                if let Some(rt) = &self.rt {
                    for f in &self.in_flight {
                        let _ = rt.slots[f.slot].event.wait();
                    }
                }
                // 2. Free device and pinned buffers, then unload the module (Runtime's field order).
                self.rt = None;
                // 3. Release every frame still held (the GPU no longer reads any of them).
                self.in_flight.clear();
                self.refs.clear();
            }
            Err(_) => {
                // The context is gone (caller broke the contract): nothing of ours can still run
                // in it. Leak the handles rather than call the driver on a dead context.
                if let Some(rt) = self.rt.take() {
                    std::mem::forget(rt);
                }
                self.in_flight.clear();
                self.refs.clear();
            }
        }
    }
}
