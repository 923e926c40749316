//! The engine: configure with a picture format and models, send (reference, distorted) pairs,
//! receive per-frame scores in order, flush, pool.
//!
//! Per-frame features run on a batch of up to `n_threads` frames in parallel (each worker slot owns
//! its extractor instances and scratch, allocated once); temporal stages (motion2/motion3) and model
//! prediction then run in frame order, so results are identical for any thread count. Buffers are
//! allocated on the first frame, not at configuration, so a configured engine that never sees a
//! frame (FFmpeg's probe graph) costs nothing.

use crate::backend::{Backend, GpuSide};
use crate::error::{Error, Result};
use crate::feature::options::OptValues;
use crate::feature::{
    self, names, Extractor, ExtractorConfig, ExtractorDef, FrameInput, SharedReference, Temporal,
};
use crate::fidelity::{LibvmafIsa, LibvmafIsaMode};
use crate::model::{FeatureSpec, Loaded, Model, ModelSpec, PoolMethod, PoolStats};
use crate::picture::{LentPicture, OwnedPicture, Picture, PictureFormat};
use std::collections::VecDeque;
use std::sync::{mpsc, Arc};
use std::time::Instant;

/// What to compute and how.
#[derive(Debug, Clone)]
pub struct EngineConfig {
    /// Format of both streams.
    pub format: PictureFormat,
    /// Models to evaluate (libvmaf's default `version=vmaf_v0.6.1` when empty).
    pub models: Vec<ModelSpec>,
    /// Extra features to compute and log (`feature=name=…`).
    pub features: Vec<FeatureSpec>,
    /// Worker threads; 0 computes on the calling thread. One worker, like libvmaf's thread pool
    /// of one, computes while the caller reads and sends the next frames.
    pub n_threads: usize,
    /// Score every n-th frame (libvmaf's `n_subsample`); motion still sees every frame.
    pub n_subsample: u32,
    /// Pooling method for the headline score.
    pub pool: PoolMethod,
    /// The libvmaf kernel family whose host-dependent results to reproduce (`auto`: the one
    /// libvmaf takes on this host).
    pub libvmaf_isa: LibvmafIsaMode,
    /// Which backend computes features (`cuda`: host pictures are uploaded to the GPU).
    pub backend: Backend,
}

impl EngineConfig {
    /// A configuration with libvmaf's defaults for a format.
    pub fn new(format: PictureFormat) -> Self {
        EngineConfig {
            format,
            models: Vec::new(),
            features: Vec::new(),
            n_threads: 0,
            n_subsample: 1,
            pool: PoolMethod::Mean,
            libvmaf_isa: LibvmafIsaMode::Auto,
            backend: Backend::Auto,
        }
    }
}

/// One extractor instance of an engine's plan (see [`Engine::instances`]).
#[derive(Debug, Clone)]
pub struct InstanceInfo<'a> {
    /// Extractor name (`vif`, `adm`, `motion`).
    pub extractor: &'static str,
    /// Its option values.
    pub opts: &'a OptValues,
    /// The row columns its per-frame values go to, in the extractor's output order.
    pub columns: std::ops::Range<usize>,
    /// Whether it runs on every frame and needs previous reference frames.
    pub needs_prev_ref: bool,
    /// The resolved libvmaf kernel family every backend reproduces.
    pub libvmaf_isa: LibvmafIsa,
    /// Its registry entry (a backend without a kernel for it runs this CPU extractor).
    pub def: &'static ExtractorDef,
    /// The stream format.
    pub format: PictureFormat,
}

/// Scores of one frame: one value per entry of [`Engine::columns`].
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FrameScores {
    /// Frame index in the stream (counting every pair sent).
    pub index: u64,
    /// Values, in [`Engine::columns`] order (features, then model scores).
    pub values: Vec<f64>,
}

/// Pooled results over all scored frames.
#[derive(Debug, Clone)]
pub struct PooledResults {
    /// (column name, statistics) for every column.
    pub columns: Vec<(String, PoolStats)>,
    /// Frames scored.
    pub frames: u64,
}

/// One extractor instance kind with its options (deduplicated across models).
struct Instance {
    def: &'static ExtractorDef,
    opts: OptValues,
    /// Row slot of its first spatial value (every spatial output has a slot, shown or not).
    spatial_col: usize,
    /// Row slot of its first temporal value, if it has a temporal stage.
    temporal_col: Option<usize>,
}

/// The compiled plan: instances, columns, models.
///
/// Extractors write a row of slots (each instance's spatial outputs, then temporal outputs); the
/// feature columns are the slots instances show (`col_slot`), followed by one column per model.
struct Plan {
    instances: Vec<Instance>,
    columns: Vec<String>,
    n_feature_cols: usize,
    n_slots: usize,
    col_slot: Vec<usize>,
    /// Each model with the row slots of its inputs: the requested models (a bootstrap
    /// collection's member "0" among them), then every collection's members.
    models: Vec<(Model, Vec<usize>)>,
    /// How many of `models` are requested models (the rest are collection members).
    n_headline: usize,
    /// Bootstrap collections: their members' range in `models` (each member's column is
    /// followed, after the last member, by the four statistics columns).
    collections: Vec<std::ops::Range<usize>>,
    /// Whether any instance reads chroma (then the engine keeps chroma planes).
    chroma: bool,
    /// Every row slot's log name (spatial slots first, then temporal ones).
    slot_names: Vec<String>,
}

impl Instance {
    /// Whether it runs on frames `n_subsample` skips.
    fn runs_every_frame(&self) -> bool {
        self.def.needs_prev_ref || self.def.needs_prev_dis || self.def.every_frame
    }
}

impl Plan {
    /// Slots written per frame by extractors (the temporal slots follow).
    fn spatial_slots(&self) -> usize {
        self.instances
            .iter()
            .map(|i| i.spatial_col + i.def.spatial.len())
            .max()
            .unwrap_or(0)
    }

    /// Whether some extractor reads the distorted picture of frames `n_subsample` skips.
    fn every_frame(&self) -> bool {
        self.instances
            .iter()
            .any(|i| i.def.every_frame || i.def.needs_prev_dis)
    }

    /// Whether some extractor reads previous distorted frames (then the engine keeps them).
    fn dist_history(&self) -> bool {
        self.instances.iter().any(|i| i.def.needs_prev_dis)
    }

    /// Frames before a frame that its extraction reads: [`FrameInput`] hands extractors that
    /// declare `needs_prev_ref` or `needs_prev_dis` up to two previous frames.
    fn context_frames(&self) -> u64 {
        let reads_history = self
            .instances
            .iter()
            .any(|i| i.def.needs_prev_ref || i.def.needs_prev_dis);
        if reads_history {
            2
        } else {
            0
        }
    }
}

/// Extractor instances and output row of one worker slot.
struct Slot {
    extractors: Vec<Box<dyn Extractor>>,
    row: Vec<f64>,
}

/// A frame whose features are computed but whose temporal values may still be pending.
struct Pending {
    index: u64,
    row: Vec<f64>,
    missing: usize,
}

/// One frame handed to a worker: its pictures (shared with the rings, which wait for the
/// worker to let go before they reuse an entry) and the slot that extracts it.
struct Job {
    index: u64,
    scored: bool,
    /// The reference pictures `back` frames before (0: the current one), where held.
    refs: [Option<Arc<OwnedPicture>>; 3],
    /// The distorted pictures, likewise (history only when some extractor reads it).
    dists: [Option<Arc<OwnedPicture>>; 3],
    /// Values of reference-only instances shared with other engines (ladder scoring).
    ref_values: Option<Arc<ReferenceValues>>,
    slot: Slot,
}

/// A frame's answer kept until its row is accepted: scored, its row, the outcome.
type Answered = (bool, Vec<f64>, Result<()>);

/// A worker's answer: the frame, its slot (row written) and the outcome.
struct Done {
    index: u64,
    scored: bool,
    slot: Slot,
    result: Result<()>,
}

/// Lazily allocated per-stream state.
struct Runtime {
    /// The worker threads (none with one thread: frames are extracted inline).
    workers: Option<Workers>,
    /// Worker slots not extracting a frame (every slot between frames with one worker, and
    /// after a flush).
    slots: Vec<Slot>,
    /// Reference pictures by frame index modulo its length: the frames in flight and the
    /// history they read.
    refs: Vec<Arc<OwnedPicture>>,
    /// Distorted pictures by frame index modulo its length, likewise.
    dists: Vec<Arc<OwnedPicture>>,
    temporals: Vec<(usize, Box<dyn Temporal>)>,
    /// Frames handed to workers whose answer has not come back.
    in_flight: usize,
    /// Answers of the workers (bounded by the slots in flight: no allocation per frame).
    done_tx: mpsc::SyncSender<Done>,
    done_rx: mpsc::Receiver<Done>,
    /// The frames handed to workers and not yet accepted, in frame order from `first_waiting`
    /// (every `send` hands one over, so they are consecutive): (scored, row, outcome) once the
    /// answer is in, `None` before.
    waiting: VecDeque<Option<Answered>>,
    /// Index of `waiting`'s first frame.
    first_waiting: u64,
    /// Pooled rows (a frame's slot values, or its scores), each made with `row_cap` room so
    /// that reusing one for either never grows it.
    spare_rows: Vec<Vec<f64>>,
    /// The longest a row gets: `n_slots`, or a frame's scores (every column, every model,
    /// four statistics per model collection).
    row_cap: usize,
    model_inputs: Vec<f64>,
    /// Every model's raw score of the frame being completed (bootstrap statistics).
    raw_scores: Vec<f64>,
}

impl Runtime {
    /// Takes one worker answer (waiting for it if `block`): its row is copied out and its slot
    /// freed at once, so frames finish in any order while rows are accepted in frame order.
    /// Returns whether an answer came.
    fn take_done(&mut self, block: bool) -> bool {
        if self.in_flight == 0 {
            return false;
        }
        let done = if block {
            self.done_rx.recv().ok()
        } else {
            self.done_rx.try_recv().ok()
        };
        let Some(d) = done else {
            return false;
        };
        self.store_done(d);
        true
    }

    /// A pooled row, or a new one with room for any use.
    fn spare_row(&mut self) -> Vec<f64> {
        self.spare_rows
            .pop()
            .unwrap_or_else(|| Vec::with_capacity(self.row_cap))
    }

    fn store_done(&mut self, d: Done) {
        self.in_flight -= 1;
        let mut row = self.spare_row();
        row.clear();
        row.extend_from_slice(&d.slot.row);
        self.slots.push(d.slot);
        let at = (d.index - self.first_waiting) as usize;
        self.waiting[at] = Some((d.scored, row, d.result));
    }

    /// Waits until no worker holds the reference and distorted ring entries of frame `index`,
    /// then borrows both.
    fn ring_pair(&mut self, index: usize) -> (&mut OwnedPicture, &mut OwnedPicture) {
        let (i, j) = (index % self.refs.len(), index % self.dists.len());
        // Jobs only ever let go of entries, so once both are free in turn they stay free.
        self.ring_entry(false, i);
        self.ring_entry(true, j);
        // (ring_entry gave back what was lent to either entry.)
        (
            Arc::get_mut(&mut self.refs[i]).expect("freed above"),
            Arc::get_mut(&mut self.dists[j]).expect("freed above"),
        )
    }

    /// Waits until no worker holds ring entry `i` of `ring` (refs or dists), then borrows it.
    fn ring_entry(&mut self, dists: bool, i: usize) -> &mut OwnedPicture {
        loop {
            let ring = if dists {
                &mut self.dists
            } else {
                &mut self.refs
            };
            if Arc::get_mut(&mut ring[i]).is_some() {
                break;
            }
            // A job still reads it: its answer frees it (jobs drop their pictures first).
            assert!(
                self.take_done(true),
                "a ring entry is shared with no job in flight"
            );
        }
        let ring = if dists {
            &mut self.dists
        } else {
            &mut self.refs
        };
        let entry = Arc::get_mut(&mut ring[i]).expect("checked above");
        // Whatever the caller puts there replaces the picture lent to it, which goes back now.
        entry.release_lent();
        entry
    }

    /// Gives back every picture lent to the rings (no job may hold an entry: after a flush).
    fn release_lent(&mut self) {
        for e in self.refs.iter_mut().chain(self.dists.iter_mut()) {
            if let Some(p) = Arc::get_mut(e) {
                p.release_lent();
            }
        }
    }
}

impl Drop for Runtime {
    fn drop(&mut self) {
        // Jobs own what they use, but the caller may unload this code after dropping the
        // engine: wait for every job, then stop and join the threads.
        while self.take_done(true) {}
        if let Some(w) = self.workers.take() {
            drop(w.jobs);
            for h in w.handles {
                let _ = h.join();
            }
        }
    }
}

/// The worker threads: each takes the next job from one shared queue (bounded, so handing a
/// frame over allocates nothing) and sends its answer back.
struct Workers {
    jobs: mpsc::SyncSender<Job>,
    handles: Vec<std::thread::JoinHandle<()>>,
}

impl Workers {
    /// Starts `n` threads extracting with `plan`, answering on `done`.
    fn start(n: usize, plan: &Arc<Plan>, done: &mpsc::SyncSender<Done>) -> Result<Self> {
        let (jobs, queue) = mpsc::sync_channel::<Job>(n);
        let queue = Arc::new(std::sync::Mutex::new(queue));
        let mut handles = Vec::with_capacity(n);
        for i in 0..n {
            let (plan, queue, done) = (Arc::clone(plan), Arc::clone(&queue), done.clone());
            let h = std::thread::Builder::new()
                .name(format!("vmaf_rs-{i}"))
                .spawn(move || loop {
                    // One thread waits on the queue at a time; the others wait for the lock.
                    let job = match queue.lock() {
                        Ok(q) => q.recv(),
                        Err(_) => return,
                    };
                    let Ok(job) = job else {
                        return; // the engine is gone
                    };
                    if done.send(run_job(&plan, job)).is_err() {
                        return;
                    }
                })
                .map_err(|e| {
                    Error::Resource(format!(
                        "cannot start {n} worker threads (n_threads={n}): {e}; use fewer threads"
                    ))
                })?;
            handles.push(h);
        }
        Ok(Workers { jobs, handles })
    }
}

/// Extracts one frame into its slot's row: every instance on scored frames, only the
/// every-frame ones on frames `n_subsample` skips.
fn extract_frame(plan: &Plan, job: &mut Job) -> Result<()> {
    let missing = || Error::Internal("a frame's own pictures are not held".into());
    let current = job.refs[0].as_deref().ok_or_else(missing)?;
    let dist = job.dists[0].as_deref().ok_or_else(missing)?;
    let back = |k: usize| job.refs[k].as_deref();
    let dback = |k: usize| job.dists[k].as_deref();
    let input = FrameInput {
        reference: current.luma_plane(),
        distorted: dist.luma_plane(),
        prev_reference: back(1).map(|p| p.luma_plane()),
        prev_reference_chroma: back(1).and_then(|p| p.chroma_planes()),
        prev_prev_reference: back(2).map(|p| p.luma_plane()),
        reference_chroma: current.chroma_planes(),
        distorted_chroma: dist.chroma_planes(),
        prev_distorted: dback(1).map(|p| p.luma_plane()),
        prev_prev_distorted: dback(2).map(|p| p.luma_plane()),
        prev_distorted_chroma: dback(1).and_then(|p| p.chroma_planes()),
        index: job.index,
    };
    let slot = &mut job.slot;
    let shared = job.ref_values.as_deref();
    // With shared values, the reference-only instances go last: by then another engine's job
    // has often computed them.
    for pass in [false, true] {
        let iter = plan.instances.iter().zip(slot.extractors.iter_mut());
        for (i, (inst, ex)) in iter.enumerate() {
            let from_shared = shared.is_some() && inst.def.reference_only;
            if from_shared != pass || (!job.scored && !inst.runs_every_frame()) {
                continue;
            }
            let out = &mut slot.row[inst.spatial_col..inst.spatial_col + inst.def.spatial.len()];
            match shared.filter(|_| from_shared) {
                None => match shared.filter(|_| inst.def.shares_reference) {
                    Some(v) => ex.extract_shared(&input, &v.shared[i], out)?,
                    None => ex.extract(&input, out)?,
                },
                Some(v) => {
                    let mut cell = v.slots[i].lock().unwrap_or_else(|e| e.into_inner());
                    if !cell.0 {
                        ex.extract(&input, out)?;
                        cell.1.clear();
                        cell.1.extend_from_slice(out);
                        cell.0 = true;
                    } else {
                        out.copy_from_slice(&cell.1);
                    }
                }
            }
        }
    }
    Ok(())
}

/// Runs a job (on a worker thread or inline) and makes its answer; a panic in an extractor
/// becomes an error of that frame, never an unwind out of the worker.
fn run_job(plan: &Plan, mut job: Job) -> Done {
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        extract_frame(plan, &mut job)
    }))
    .unwrap_or_else(|_| {
        Err(Error::Internal(format!(
            "an extractor panicked on frame {}",
            job.index
        )))
    });
    let Job {
        index,
        scored,
        slot,
        ..
    } = job; // the pictures go back to the rings here, before the answer is sent
    Done {
        index,
        scored,
        slot,
        result,
    }
}

/// What a segment-scoring engine ([`Engine::begin_segment`]) keeps instead of scores.
#[derive(Default)]
struct SegmentRows {
    /// Title index of each frame sent with [`Engine::send`], in order.
    indices: Vec<u64>,
    /// Their spatial rows, [`Plan::spatial_slots`] values each, as [`Engine::push_spatial`]
    /// takes them.
    rows: Vec<f64>,
}

/// The VMAF engine.
pub struct Engine {
    cfg: EngineConfig,
    libvmaf_isa: LibvmafIsa,
    warnings: Vec<String>,
    /// Shared with the worker threads' jobs.
    plan: Arc<Plan>,
    rt: Option<Runtime>,
    next_index: u64,
    pending: VecDeque<Pending>,
    ready: VecDeque<FrameScores>,
    /// Flat per-frame values of every scored frame (for pooling and logs).
    history: Vec<f64>,
    history_index: Vec<u64>,
    flushed: bool,
    elapsed: f64,
    /// Integer totals of extractor instances run by another backend ([`Engine::add_totals`]).
    external_totals: Vec<Vec<u64>>,
    /// The GPU side (crate::backend), made on the first CUDA frame.
    pub(crate) gpu: Option<GpuSide>,
    /// Index of the first frame whose pictures the rings hold (a segment's first context
    /// frame; 0 for a whole stream): extractors never see frames before it.
    first_held: u64,
    /// Segment scoring: the spatial rows recorded instead of temporal stages and models.
    segment: Option<SegmentRows>,
    /// Whether the references are shared (`send_shared`) or copied (`send`), once one came.
    shared_refs: Option<bool>,
}

/// Where a sent frame's reference comes from.
enum RefSource<'a, 'p> {
    /// Borrowed for the call: copied into the engine's ring.
    Borrowed(&'a Picture<'p>),
    /// Lent until released: read in place from the ring where its planes allow.
    Lent(LentPicture),
    /// Already copied, shared with other engines: the ring keeps a handle.
    Shared(&'a Arc<OwnedPicture>, Option<&'a Arc<ReferenceValues>>),
}

/// Where a sent frame's distorted picture comes from.
enum DistSource<'a, 'p> {
    /// Borrowed for the call: copied into the engine's ring when a job reads it.
    Borrowed(&'a Picture<'p>),
    /// Lent until released: read in place from the ring where its planes allow, released at
    /// once when no job reads it.
    Lent(LentPicture),
    /// Written by the caller straight into the ring's entry (always: the caller's reader must
    /// move on to its next frame).
    Fill(&'a mut dyn FnMut(&mut OwnedPicture) -> Result<()>),
}

impl RefSource<'_, '_> {
    /// The caller's own picture (borrowed or lent); `None` for a shared one.
    fn picture(&self) -> Option<&Picture<'_>> {
        match self {
            RefSource::Borrowed(p) => Some(p),
            RefSource::Lent(l) => Some(l.picture()),
            RefSource::Shared(..) => None,
        }
    }
}

impl DistSource<'_, '_> {
    /// The caller's picture (borrowed or lent); `None` when the caller fills the ring's entry.
    fn picture(&self) -> Option<&Picture<'_>> {
        match self {
            DistSource::Borrowed(p) => Some(p),
            DistSource::Lent(l) => Some(l.picture()),
            DistSource::Fill(_) => None,
        }
    }
}

/// What engines of one configuration that score renditions of the same reference (a
/// [`crate::ladder::Ladder`]) share of one reference frame: the values of its
/// [`ExtractorDef::reference_only`] instances (the first engine's job to reach an instance
/// computes them, the others copy them) and the reference-side state of its
/// [`ExtractorDef::shares_reference`] instances (likewise, but read in place). Its buffers are
/// kept when it is reused for another frame.
#[derive(Debug)]
pub struct ReferenceValues {
    /// Per plan instance: whether the values are in, and the values.
    slots: Vec<std::sync::Mutex<(bool, Vec<f64>)>>,
    /// Per plan instance: its reference-side state (empty for instances that share none).
    shared: Vec<SharedReference>,
}

impl ReferenceValues {
    /// Empty values for the instances of `engine`'s plan.
    pub fn new(engine: &Engine) -> Self {
        let n = engine.plan.instances.len();
        ReferenceValues {
            slots: (0..n)
                .map(|_| std::sync::Mutex::new((false, Vec::new())))
                .collect(),
            shared: (0..n).map(|_| SharedReference::default()).collect(),
        }
    }

    /// Forgets the values (for the next frame), keeping the buffers.
    pub fn clear(&mut self) {
        for s in &mut self.slots {
            // A poisoned slot (a panic while computing) holds nothing valid either.
            let v = s.get_mut().unwrap_or_else(|e| e.into_inner());
            v.0 = false;
        }
        for s in &mut self.shared {
            s.clear();
        }
    }
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine")
            .field("format", &self.cfg.format)
            .field("columns", &self.plan.columns)
            .field("next_index", &self.next_index)
            .finish()
    }
}

/// Pictures with a side this small or smaller: libvmaf's scale-3 DWT has fewer than 5 samples and
/// reads outside the band (undefined); vmaf_rs clamps (`adm::scalar::dwt_indices`).
pub const TINY_SIDE: usize = 32;

fn build_plan(cfg: &EngineConfig) -> Result<Plan> {
    let specs = if cfg.models.is_empty() {
        crate::model::parse_model_option("")?
    } else {
        cfg.models.clone()
    };
    let mut models = Vec::new();
    let mut members = Vec::new();
    for s in &specs {
        match s.load_set()? {
            Loaded::Model(m) => models.push(m),
            Loaded::Collection(c) => {
                let (_, head, ms) = c.into_parts();
                models.push(head);
                members.push(ms);
            }
        }
    }
    let n_headline = models.len();
    let mut collections = Vec::new();
    for ms in members {
        let start = models.len();
        models.extend(ms);
        collections.push(start..models.len());
    }
    let mut names_seen = std::collections::HashSet::new();
    for m in &models {
        if !names_seen.insert(m.name().to_string()) {
            return Err(Error::InvalidOption(format!(
                "two models are named '{}' (an unnamed model is called 'vmaf'); give each a \
                 distinct name, e.g. model='version=vmaf_v0.6.1:name=a|version=vmaf_v0.6.1neg:name=b' \
                 (libvmaf would silently report only the first model's scores)",
                m.name()
            )));
        }
    }

    // Instances, deduplicated by (extractor, options), in order of first request.
    let mut instances: Vec<Instance> = Vec::new();
    let mut instance_of = |def: &'static ExtractorDef, opts: OptValues| -> usize {
        if let Some(i) = instances
            .iter()
            .position(|x| std::ptr::eq(x.def, def) && x.opts == opts)
        {
            return i;
        }
        instances.push(Instance {
            def,
            opts,
            spatial_col: 0,
            temporal_col: None,
        });
        instances.len() - 1
    };
    let mut model_features: Vec<Vec<(usize, String)>> = Vec::new();
    for m in &models {
        let mut feats = Vec::new();
        for f in m.features() {
            let def = feature::find_by_provided(&f.name)?;
            let mut opts = OptValues::defaults(def.options);
            for (k, v) in &f.opts {
                opts.set_json(k, v).map_err(|e| {
                    Error::Model(format!("model '{}', feature '{}': {e}", m.name(), f.name))
                })?;
            }
            let inst = instance_of(def, opts);
            feats.push((inst, names::full_name(&f.name).to_string()));
        }
        model_features.push(feats);
    }
    for fs in &cfg.features {
        let def = feature::find_by_name(&fs.name)?;
        let mut opts = OptValues::defaults(def.options);
        for (k, v) in &fs.opts {
            opts.set(k, v)
                .map_err(|e| Error::InvalidOption(format!("feature '{}': {e}", fs.name)))?;
        }
        instance_of(def, opts);
    }
    let f = &cfg.format;
    for inst in &instances {
        (inst.def.check)(&inst.opts, f)?;
    }

    // Slots: every instance's spatial values, then temporal values; columns are the shown ones,
    // in slot order (libvmaf's log order).
    let (mut columns, mut col_slot, mut slot_names) = (Vec::new(), Vec::new(), Vec::new());
    for inst in instances.iter_mut() {
        inst.spatial_col = slot_names.len();
        for n in inst.def.spatial {
            let name = inst.def.output_name(&inst.opts, n);
            if inst.def.shows(&inst.opts, f, n) {
                col_slot.push(slot_names.len());
                columns.push(name.clone());
            }
            slot_names.push(name);
        }
    }
    for inst in instances.iter_mut() {
        if inst.def.create_temporal.is_some() {
            inst.temporal_col = Some(slot_names.len());
            for n in inst.def.temporal {
                let name = inst.def.output_name(&inst.opts, n);
                col_slot.push(slot_names.len());
                columns.push(name.clone());
                slot_names.push(name);
            }
        }
    }
    let n_feature_cols = columns.len();
    let mut out_models = Vec::new();
    for (m, feats) in models.into_iter().zip(model_features) {
        let mut slots = Vec::new();
        for (inst, full) in feats {
            let want = instances[inst]
                .def
                .output_name(&instances[inst].opts, &full);
            let slot = slot_names
                .iter()
                .position(|c| *c == want)
                .ok_or_else(|| Error::Internal(format!("slot {want} missing")))?;
            slots.push(slot);
        }
        out_models.push((m, slots));
    }
    // Requested models first, then each collection's members and its statistics (libvmaf's
    // CLI scores models, then collections).
    for (m, _) in &out_models[..n_headline] {
        columns.push(m.name().to_string());
    }
    for r in &collections {
        for (m, _) in &out_models[r.clone()] {
            columns.push(m.name().to_string());
        }
        let prefix = &out_models[r.start].0.name();
        let prefix = prefix.strip_suffix("_0001").unwrap_or(prefix);
        for suffix in crate::model::collection::STAT_SUFFIXES {
            columns.push(format!("{prefix}{suffix}"));
        }
    }
    let chroma = instances.iter().any(|i| (i.def.reads_chroma)(&i.opts, f));
    Ok(Plan {
        instances,
        columns,
        n_feature_cols,
        n_slots: slot_names.len(),
        col_slot,
        models: out_models,
        n_headline,
        collections,
        chroma,
        slot_names,
    })
}

impl Engine {
    /// Validates the configuration and loads the models. Allocates no frame buffers.
    pub fn new(cfg: EngineConfig) -> Result<Self> {
        cfg.format.validate()?;
        if cfg.n_subsample == 0 {
            return Err(Error::InvalidOption(
                "n_subsample must be at least 1".into(),
            ));
        }
        let plan = build_plan(&cfg)?;
        let mut warnings = Vec::new();
        let f = cfg.format;
        if f.width <= TINY_SIDE || f.height <= TINY_SIDE {
            warnings.push(format!(
                "{}x{} has a side of {TINY_SIDE} px or less: libvmaf reads outside the picture \
                 there (its ADM scores are undefined) and vmaf_rs clamps, so scores can differ \
                 from libvmaf's (docs/FIDELITY.md); scale the inputs up to compare",
                f.width, f.height
            ));
        }
        Ok(Engine {
            warnings,
            libvmaf_isa: cfg.libvmaf_isa.resolve(),
            cfg,
            plan: Arc::new(plan),
            rt: None,
            next_index: 0,
            pending: VecDeque::new(),
            ready: VecDeque::new(),
            history: Vec::new(),
            history_index: Vec::new(),
            flushed: false,
            elapsed: 0.0,
            external_totals: Vec::new(),
            gpu: None,
            first_held: 0,
            segment: None,
            shared_refs: None,
        })
    }

    /// Output names, in [`FrameScores::values`] order: log names of features, then model names.
    pub fn columns(&self) -> &[String] {
        &self.plan.columns
    }

    /// Names of the models, in configuration order.
    pub fn model_names(&self) -> Vec<&str> {
        self.plan.models[..self.plan.n_headline]
            .iter()
            .map(|(m, _)| m.name())
            .collect()
    }

    /// The configuration.
    pub fn config(&self) -> &EngineConfig {
        &self.cfg
    }

    /// The libvmaf kernel family this engine reproduces (its configuration's `auto` resolved
    /// for this host when it was made).
    pub fn libvmaf_isa(&self) -> LibvmafIsa {
        self.libvmaf_isa
    }

    /// Warnings about the configuration (e.g. pictures where libvmaf's own result is undefined),
    /// for the caller to show.
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// Pairs sent so far.
    pub fn frames_sent(&self) -> u64 {
        self.next_index
    }

    /// Whether the pair sent as frame `index` gets scores (`n_subsample` keeps every n-th);
    /// callers holding frames for their scores release the others at once.
    pub fn scores_frame(&self, index: u64) -> bool {
        index.is_multiple_of(self.cfg.n_subsample as u64)
    }

    /// Frames scored so far (subsampled frames only).
    pub fn frames_scored(&self) -> u64 {
        self.history_index.len() as u64
    }

    /// Wall-clock seconds spent computing (for the log's fps).
    pub fn elapsed_seconds(&self) -> f64 {
        self.elapsed
    }

    /// Per-stream state shared by every backend (temporal stages, row buffers), made on the first
    /// frame.
    fn runtime(&mut self) -> Result<&mut Runtime> {
        if self.rt.is_none() {
            let temporals = self
                .plan
                .instances
                .iter()
                .enumerate()
                .filter_map(|(i, inst)| inst.def.create_temporal.map(|c| (i, c(&inst.opts))))
                .collect();
            let n_inputs = self
                .plan
                .models
                .iter()
                .map(|(_, c)| c.len())
                .max()
                .unwrap_or(0);
            // Room for one answer per worker slot: workers never wait to answer.
            let (done_tx, done_rx) = mpsc::sync_channel(self.cfg.n_threads.max(1));
            let plan = &self.plan;
            let row_cap = plan
                .n_slots
                .max(plan.col_slot.len() + plan.models.len() + 4 * plan.collections.len());
            // As many rows as can be alive at once when the caller receives every frame's
            // scores (one per slot answered, waiting for its temporal values, scored), made
            // now: how many frames a worker has in flight when varies with timing, and a pool
            // grown on demand would allocate at each new high. Frames answered out of order wait
            // for a straggler: up to the distorted ring's depth (two per worker) of them. The
            // in-order queue holds as many.
            let workers = self.cfg.n_threads.max(1);
            let alive = 4 * workers + 8;
            let spare_rows = (0..alive).map(|_| Vec::with_capacity(row_cap)).collect();
            self.rt = Some(Runtime {
                workers: None,
                slots: Vec::new(),
                refs: Vec::new(),
                dists: Vec::new(),
                temporals,
                in_flight: 0,
                done_tx,
                done_rx,
                waiting: VecDeque::with_capacity(alive),
                first_waiting: 0,
                spare_rows,
                row_cap,
                model_inputs: vec![0.0; n_inputs],
                raw_scores: Vec::with_capacity(self.plan.models.len()),
            });
        }
        Ok(self.rt.as_mut().expect("just created"))
    }

    /// The CPU workers: worker threads, per-slot extractors and scratch, frame buffers. Made on the
    /// first picture sent.
    fn cpu_runtime(&mut self) -> Result<&mut Runtime> {
        let workers = self.cfg.n_threads.max(1);
        let f = self.cfg.format;
        let libvmaf_isa = self.libvmaf_isa;
        // Shared references replace the ring's entries before any job reads them: no planes.
        let shared = self.shared_refs == Some(true);
        let ref_format = match self.shared_refs {
            Some(true) => PictureFormat {
                width: 0,
                height: 0,
                ..f
            },
            _ => f,
        };
        self.runtime()?;
        let plan = &self.plan;
        let rt = self.rt.as_mut().expect("runtime");
        // Made once (the slots may all be out with workers later, the rings never go).
        if rt.refs.is_empty() {
            if self.cfg.n_threads > 0 {
                rt.workers = Some(Workers::start(workers, plan, &rt.done_tx)?);
            }
            for _ in 0..workers {
                let mut extractors = Vec::new();
                for inst in &plan.instances {
                    extractors.push((inst.def.create)(&ExtractorConfig {
                        format: f,
                        opts: inst.opts.clone(),
                        libvmaf_isa,
                    })?);
                }
                rt.slots.push(Slot {
                    extractors,
                    row: vec![0.0; plan.n_slots],
                });
            }
            // The frames in flight (one per worker), the two before the oldest that it reads,
            // one more, and as many again as there are workers: jobs finish out of order, and the
            // next frame must not wait for an entry a straggler still reads while other workers
            // idle (the Xeon's filter: 7 % faster at 4 threads, 3 % at 16; the device record
            // `2026-12-07-s20-ring-depth-xeon.txt`). The cost is memory: a lent entry keeps its
            // frame alive longer, a copied or filled one is a plane the caller writes (the CLI at
            // 16 threads, 1080p: peak RSS 232 -> 297 MB).
            // A ladder's engines keep the shallower rings: the ladder's pooled reference-side
            // states (made on an entry's first use) would grow with the frames let through.
            let slack = if shared { 0 } else { workers };
            rt.refs = (0..workers + slack + 3)
                .map(|_| Arc::new(OwnedPicture::new(ref_format, plan.chroma)))
                .collect();
            let dist_history = if plan.dist_history() { 3 } else { 0 };
            rt.dists = (0..workers + slack + dist_history)
                .map(|_| Arc::new(OwnedPicture::new(f, plan.chroma)))
                .collect();
        }
        Ok(rt)
    }

    /// Refuses a segment whose first frame, `first`, lacks context frames its extractors read
    /// (frames before the title's start do not exist, so they are not needed).
    fn check_context(&self, first: u64) -> Result<()> {
        let need = self.plan.context_frames().min(first);
        let have = first - self.first_held;
        if have < need {
            return Err(Error::InvalidOption(format!(
                "the segment starting at frame {first} needs {need} frame(s) of context before \
                 it (title frames {} to {}), it was given {have}; start the input at frame {} \
                 or earlier",
                first - need,
                first - 1,
                first - need
            )));
        }
        Ok(())
    }

    fn check_picture(&self, what: &str, p: &Picture<'_>) -> Result<()> {
        if p.format != self.cfg.format {
            return Err(Error::Mismatch(format!(
                "{what} picture is {}, the stream was configured as {}",
                p.format, self.cfg.format
            )));
        }
        Ok(())
    }

    /// Scores one (reference, distorted) pair. Pictures are only borrowed for the call. May
    /// compute a batch of frames; results become available through [`Engine::receive`].
    pub fn send(&mut self, reference: &Picture<'_>, distorted: &Picture<'_>) -> Result<()> {
        self.send_with(
            RefSource::Borrowed(reference),
            DistSource::Borrowed(distorted),
        )
    }

    /// Like [`Engine::send`], with pictures lent until the engine no longer reads them. On the
    /// CPU they are read in place, without [`Engine::send`]'s copy, where their planes allow
    /// ([`OwnedPicture::lend`]), and released when the ring entry that holds them is reused (a
    /// few frames later), at [`Engine::flush`], or when the engine is dropped; otherwise (a
    /// distorted picture no job reads, planes that need converting, GPU upload) they are copied
    /// if needed and released before this returns. Each is released exactly once, also on error,
    /// on the thread that calls the engine.
    pub fn send_lent(&mut self, reference: LentPicture, distorted: LentPicture) -> Result<()> {
        self.send_with(RefSource::Lent(reference), DistSource::Lent(distorted))
    }

    /// Like [`Engine::send`], with the reference already copied into an [`OwnedPicture`] that
    /// several engines share (ladder scoring, [`crate::ladder::Ladder`]): the engine keeps a
    /// handle on it instead of copying it. Its format and planes must be what
    /// [`Engine::reference_layout`] says. An engine takes shared references only, or borrowed
    /// ones only (its rings are either shared or its own).
    ///
    /// With `values`, the [`ExtractorDef::reference_only`] instances take their values from it,
    /// computing them only if no other engine has yet (it must come from
    /// [`ReferenceValues::new`] of an engine with this configuration).
    pub fn send_shared(
        &mut self,
        reference: &Arc<OwnedPicture>,
        values: Option<&Arc<ReferenceValues>>,
        distorted: &Picture<'_>,
    ) -> Result<()> {
        self.check_shared(reference, values)?;
        self.send_with(
            RefSource::Shared(reference, values),
            DistSource::Borrowed(distorted),
        )
    }

    /// Like [`Engine::send_shared`], with the distorted picture written by `fill` straight into
    /// the engine's own buffer (made by `OwnedPicture::new` with this engine's format), which
    /// saves the copy: the CLI reads a ladder's renditions into them. `fill`'s error is
    /// returned as is and nothing is sent.
    pub fn send_shared_filled(
        &mut self,
        reference: &Arc<OwnedPicture>,
        values: Option<&Arc<ReferenceValues>>,
        fill: impl FnMut(&mut OwnedPicture) -> Result<()>,
    ) -> Result<()> {
        self.check_shared(reference, values)?;
        self.check_shared_send()?;
        self.shared_refs = Some(true);
        let mut fill = fill;
        self.send_cpu(
            RefSource::Shared(reference, values),
            DistSource::Fill(&mut fill),
        )
    }

    /// Checks a shared reference picture (and shared values) against this engine's layout.
    fn check_shared(
        &self,
        reference: &OwnedPicture,
        values: Option<&Arc<ReferenceValues>>,
    ) -> Result<()> {
        if values.is_some_and(|v| v.slots.len() != self.plan.instances.len()) {
            return Err(Error::Mismatch(
                "shared reference values of an engine with other features".into(),
            ));
        }
        let (f, chroma) = self.reference_layout();
        let want_chroma = chroma && f.layout != crate::picture::ChromaLayout::Gray;
        let wide = matches!(reference.luma.buf, crate::picture::PlaneBuf::U16(_));
        if reference.luma.width != f.width
            || reference.luma.height != f.height
            || wide != (f.bpc > 8)
            || reference.chroma.is_some() != want_chroma
        {
            return Err(Error::Mismatch(format!(
                "a shared reference of {}x{}{} for a stream configured as {f}{}",
                reference.luma.width,
                reference.luma.height,
                if reference.chroma.is_some() {
                    " with chroma"
                } else {
                    ""
                },
                if want_chroma { " with chroma" } else { "" }
            )));
        }
        Ok(())
    }

    /// Whether a frame with a shared reference may be sent now: the engine has taken none with
    /// its own reference, runs on the CPU outside segments, has had no CUDA frames, and is not
    /// flushed.
    fn check_shared_send(&self) -> Result<()> {
        if self.shared_refs == Some(false) {
            return Err(Error::State(
                "an engine takes shared references (send_shared) or borrowed ones (send), not both"
                    .into(),
            ));
        }
        if self.cfg.backend == Backend::Cuda || self.segment.is_some() {
            return Err(Error::Unsupported(
                "shared references (ladder scoring) run on the CPU backend, without segments"
                    .into(),
            ));
        }
        if self.gpu.is_some() {
            return Err(Error::State(
                "software frames after CUDA frames in one stream".into(),
            ));
        }
        if self.flushed {
            return Err(Error::State("frame sent after flush".into()));
        }
        Ok(())
    }

    /// The format and whether chroma planes are kept of the reference pictures this engine
    /// holds: what an [`OwnedPicture`] given to [`Engine::send_shared`] must be made with
    /// (`OwnedPicture::new(format, chroma)`).
    pub fn reference_layout(&self) -> (PictureFormat, bool) {
        (self.cfg.format, self.plan.chroma)
    }

    /// A send of the caller's own pictures (borrowed or lent: uploaded with `backend=cuda`) or
    /// of a shared reference with a borrowed distorted picture, after the checks they share.
    fn send_with(
        &mut self,
        reference: RefSource<'_, '_>,
        distorted: DistSource<'_, '_>,
    ) -> Result<()> {
        let shared = matches!(reference, RefSource::Shared(..));
        if shared {
            self.check_shared_send()?;
        } else if self.shared_refs == Some(true) {
            return Err(Error::State(
                "an engine takes shared references (send_shared) or borrowed ones (send), not both"
                    .into(),
            ));
        } else if self.flushed {
            return Err(Error::State("frame sent after flush".into()));
        }
        self.shared_refs = Some(shared);
        let own = reference.picture().zip(distorted.picture());
        if let (Some((r, d)), Backend::Cuda) = (own, self.cfg.backend) {
            // Lent pictures go back when this returns: the upload copied them.
            return self.send_uploaded(r, d);
        }
        if self.gpu.is_some() {
            return Err(Error::State(
                "software frames after CUDA frames in one stream".into(),
            ));
        }
        if let Some((r, d)) = own {
            if r.format != d.format {
                return Err(Error::Mismatch(format!(
                    "reference {}, distorted {}",
                    r.format, d.format
                )));
            }
            self.check_picture("reference", r)?;
        }
        self.send_cpu(reference, distorted)
    }

    /// The CPU path of a send: a borrowed reference is copied into the ring, a shared one put
    /// there (with the shared values of reference-only instances); the distorted picture is
    /// copied in or filled there.
    fn send_cpu(
        &mut self,
        reference: RefSource<'_, '_>,
        distorted: DistSource<'_, '_>,
    ) -> Result<()> {
        if let Some(d) = distorted.picture() {
            self.check_picture("distorted", d)?;
        }
        let t0 = Instant::now();
        let index = self.next_index;
        if self.segment.as_ref().is_some_and(|s| s.indices.is_empty()) {
            self.check_context(index)?;
        }
        let scored = self.scores_frame(index);
        let every_frame = self.plan.every_frame();
        let rt = self.cpu_runtime()?;
        let (nref, ndist) = (rt.refs.len(), rt.dists.len());
        let ref_values = match reference {
            RefSource::Borrowed(r) => {
                rt.ring_entry(false, index as usize % nref).copy_from(r)?;
                None
            }
            RefSource::Lent(r) => {
                rt.ring_entry(false, index as usize % nref).lend(r)?;
                None
            }
            RefSource::Shared(r, values) => {
                // Jobs still reading the entry's old picture keep their own handle on it.
                rt.refs[index as usize % nref] = Arc::clone(r);
                values.cloned()
            }
        };
        match distorted {
            DistSource::Borrowed(d) if scored || every_frame => {
                rt.ring_entry(true, index as usize % ndist).copy_from(d)?;
            }
            DistSource::Lent(d) if scored || every_frame => {
                rt.ring_entry(true, index as usize % ndist).lend(d)?;
            }
            DistSource::Borrowed(_) | DistSource::Lent(_) => {}
            DistSource::Fill(fill) => fill(rt.ring_entry(true, index as usize % ndist))?,
        }
        self.dispatch(index, scored, ref_values, t0)
    }

    /// Scores the next frame pair with its pictures written by `fill` straight into the
    /// engine's own picture buffers (the reference's, then the distorted's, each made by
    /// `OwnedPicture::new` with [`Engine::reference_layout`]), which saves [`Engine::send`]'s
    /// copy: the CLI reads its files into them. `fill` returns `false` when there is no frame
    /// (nothing is sent; what it wrote is unused), and its error is returned as is.
    ///
    /// CPU backend only, outside segments and ladders ([`Engine::fills_pictures`]); returns
    /// whether a frame was sent.
    pub fn send_filled(
        &mut self,
        fill: impl FnOnce(&mut OwnedPicture, &mut OwnedPicture) -> Result<bool>,
    ) -> Result<bool> {
        if !self.fills_pictures() {
            return Err(Error::State(
                "send_filled: only on the CPU backend, outside segments and ladders".into(),
            ));
        }
        if self.flushed {
            return Err(Error::State("frame sent after flush".into()));
        }
        self.shared_refs = Some(false);
        let t0 = Instant::now();
        let index = self.next_index;
        let scored = self.scores_frame(index);
        let rt = self.cpu_runtime()?;
        let (r, d) = rt.ring_pair(index as usize);
        if !fill(r, d)? {
            return Ok(false);
        }
        self.dispatch(index, scored, None, t0)?;
        Ok(true)
    }

    /// Whether [`Engine::send_filled`] may be used: the CPU backend, no segment, and not an
    /// engine of a ladder (shared references).
    pub fn fills_pictures(&self) -> bool {
        self.cfg.backend != Backend::Cuda
            && self.segment.is_none()
            && self.gpu.is_none()
            && self.shared_refs != Some(true)
    }

    /// Hands frame `index`, whose pictures are in the rings, to a worker (or extracts it inline).
    fn dispatch(
        &mut self,
        index: u64,
        scored: bool,
        ref_values: Option<Arc<ReferenceValues>>,
        t0: Instant,
    ) -> Result<()> {
        let history = self.plan.dist_history();
        let first_held = self.first_held;
        let plan = Arc::clone(&self.plan);
        let rt = self.rt.as_mut().expect("the caller made the runtime");
        while rt.slots.is_empty() {
            rt.take_done(true);
        }
        let slot = rt.slots.pop().expect("a slot is free");
        // Frames before `first_held` were never stored: a segment's extractors see exactly the
        // context it was given.
        let held = |back: u64| index >= back && index - back >= first_held;
        let pic = |ring: &[Arc<OwnedPicture>], back: u64| {
            held(back).then(|| Arc::clone(&ring[((index - back) as usize) % ring.len()]))
        };
        let job = Job {
            index,
            scored,
            refs: [0, 1, 2].map(|b| pic(&rt.refs, b)),
            dists: [0, 1, 2].map(|b| {
                if b == 0 || history {
                    pic(&rt.dists, b)
                } else {
                    None
                }
            }),
            ref_values,
            slot,
        };
        if rt.waiting.is_empty() {
            rt.first_waiting = index;
        }
        rt.waiting.push_back(None);
        rt.in_flight += 1;
        match &rt.workers {
            Some(w) => w
                .jobs
                .send(job)
                .map_err(|_| Error::Internal("the worker threads stopped".into()))?,
            None => {
                let done = run_job(&plan, job);
                rt.store_done(done);
            }
        }
        self.next_index += 1;
        self.accept_finished(false)?;
        self.elapsed += t0.elapsed().as_secs_f64();
        Ok(())
    }

    /// Feeds the rows of finished frames, in frame order, to the temporal stages and models;
    /// with `wait`, first waits for every frame in flight.
    fn accept_finished(&mut self, wait: bool) -> Result<()> {
        let Some(rt) = self.rt.as_mut() else {
            return Ok(());
        };
        if wait {
            while rt.take_done(true) {}
        } else {
            while rt.take_done(false) {}
        }
        loop {
            let rt = self.rt.as_mut().expect("runtime");
            let Some(Some(_)) = rt.waiting.front() else {
                break;
            };
            let (scored, row, result) = rt.waiting.pop_front().flatten().expect("checked");
            let next = rt.first_waiting;
            rt.first_waiting += 1;
            if let Err(e) = result {
                rt.spare_rows.push(row);
                return Err(e);
            }
            self.accept_row(next, scored, &row);
            self.rt.as_mut().expect("runtime").spare_rows.push(row);
        }
        self.complete_ready();
        Ok(())
    }

    /// Takes one frame's per-frame values (in frame order) and feeds the temporal stages.
    fn accept_row(&mut self, index: u64, scored: bool, spatial_row: &[f64]) {
        let plan = &self.plan;
        let rt = self.rt.as_mut().expect("runtime");
        let mut row = rt.spare_row();
        row.clear();
        let n_spatial = plan.spatial_slots();
        row.extend_from_slice(&spatial_row[..n_spatial]);
        if !scored {
            // Only every-frame extractors ran; the rest of the row is unused.
            for inst in &plan.instances {
                if !inst.runs_every_frame() {
                    let n = inst.def.spatial.len();
                    row[inst.spatial_col..inst.spatial_col + n].fill(f64::NAN);
                }
            }
        }
        if let Some(seg) = self.segment.as_mut() {
            // A segment's temporal values and scores depend on frames it does not have: they
            // are derived at the merge, from every segment's rows (Engine::push_spatial).
            seg.indices.push(index);
            seg.rows.extend_from_slice(&row);
            rt.spare_rows.push(row);
            return;
        }
        row.resize(plan.n_slots, f64::NAN);
        self.pending.push_back(Pending {
            index,
            row,
            missing: rt.temporals.len(),
        });
        for (inst_i, stage) in rt.temporals.iter_mut() {
            let inst = &plan.instances[*inst_i];
            let n = inst.def.spatial.len();
            let tcol = inst.temporal_col.expect("temporal instance has columns");
            let spatial = &spatial_row[inst.spatial_col..inst.spatial_col + n];
            let pending = &mut self.pending;
            stage.push(index, spatial, &mut |idx, vals| {
                if let Some(p) = pending.iter_mut().find(|p| p.index == idx) {
                    p.row[tcol..tcol + vals.len()].copy_from_slice(vals);
                    p.missing -= 1;
                }
            });
        }
    }

    /// The extractor instances of the plan, for backends that compute per-frame values elsewhere
    /// (the CUDA backend): each writes `columns` of the row given to [`Engine::push_spatial`].
    pub fn instances(&self) -> impl Iterator<Item = InstanceInfo<'_>> {
        self.plan.instances.iter().map(|i| InstanceInfo {
            extractor: i.def.name,
            opts: &i.opts,
            columns: i.spatial_col..i.spatial_col + i.def.spatial.len(),
            needs_prev_ref: i.runs_every_frame(),
            libvmaf_isa: self.libvmaf_isa,
            def: i.def,
            format: self.cfg.format,
        })
    }

    /// Length of the per-frame row [`Engine::push_spatial`] takes.
    pub fn spatial_row_len(&self) -> usize {
        self.plan.spatial_slots()
    }

    /// Feeds the per-frame values of the next frame (index [`Engine::frames_sent`]), computed by
    /// an external backend, instead of sending pictures. For frames skipped by `n_subsample` only
    /// the `needs_prev_ref` instances' columns are read. Must not be mixed with
    /// [`Engine::send`] in one stream.
    pub fn push_spatial(&mut self, row: &[f64]) -> Result<()> {
        if self.flushed {
            return Err(Error::State("frame sent after flush".into()));
        }
        if row.len() < self.plan.spatial_slots() {
            return Err(Error::Internal(format!(
                "push_spatial: row of {} values, the plan has {}",
                row.len(),
                self.plan.spatial_slots()
            )));
        }
        let rt = self.runtime()?;
        if !rt.refs.is_empty() {
            return Err(Error::State(
                "push_spatial mixed with send in one stream".into(),
            ));
        }
        let index = self.next_index;
        let scored = self.scores_frame(index);
        self.next_index += 1;
        self.accept_row(index, scored, row);
        self.complete_ready();
        Ok(())
    }

    /// Moves frames whose temporal values are all in from `pending` to `ready`, scoring models.
    fn complete_ready(&mut self) {
        let n_sub = self.cfg.n_subsample as u64;
        while self.pending.front().is_some_and(|p| p.missing == 0) {
            let Pending { index, row, .. } = self.pending.pop_front().expect("checked");
            let rt = self.rt.as_mut().expect("runtime");
            if !index.is_multiple_of(n_sub) {
                rt.spare_rows.push(row);
                continue;
            }
            let mut values = rt.spare_row();
            values.clear();
            values.extend(self.plan.col_slot.iter().map(|&s| row[s]));
            let (raw, inputs) = (&mut rt.raw_scores, &mut rt.model_inputs);
            raw.clear();
            let models = &self.plan.models;
            let mut predict = |m: usize, values: &mut Vec<f64>, raw: &mut Vec<f64>| {
                let (model, slots) = &models[m];
                let inputs = &mut inputs[..slots.len()];
                for (dst, &s) in inputs.iter_mut().zip(slots) {
                    *dst = row[s];
                }
                let y = model.predict_raw(inputs);
                raw.push(y); // index m: models are predicted in plan order
                values.push(model.finish(y));
            };
            for m in 0..self.plan.n_headline {
                predict(m, &mut values, raw);
            }
            // Each collection's members, then its statistics (over those members only).
            for r in &self.plan.collections {
                for m in r.clone() {
                    predict(m, &mut values, raw);
                }
                let first = &models[r.start].0;
                values.extend(crate::model::collection::stats(first, &mut raw[r.clone()]));
            }
            rt.spare_rows.push(row);
            self.history.extend_from_slice(&values);
            self.history_index.push(index);
            self.ready.push_back(FrameScores { index, values });
        }
    }

    /// The next frame's scores, in order, if ready.
    pub fn receive(&mut self) -> Option<FrameScores> {
        self.ready.pop_front()
    }

    /// Like [`Engine::receive`], but reuses `out`'s buffer (no allocation on the hot path).
    pub fn receive_into(&mut self, out: &mut FrameScores) -> bool {
        match self.ready.pop_front() {
            Some(mut s) => {
                std::mem::swap(out, &mut s);
                if let Some(rt) = self.rt.as_mut() {
                    rt.spare_rows.push(s.values);
                }
                true
            }
            None => false,
        }
    }

    /// End of stream: computes everything pending. Afterwards `receive` drains the rest.
    pub fn flush(&mut self) -> Result<()> {
        if self.flushed {
            return Ok(());
        }
        // The GPU's frames in flight reach the pending rows first; nothing is sent afterwards.
        self.release_gpu()?;
        self.flushed = true;
        if self.rt.is_none() {
            return Ok(());
        }
        let t0 = Instant::now();
        self.accept_finished(true)?;
        let rt = self.rt.as_mut().expect("runtime");
        // No job reads them any more: the caller gets its pictures back now, not at drop.
        rt.release_lent();
        let pending = &mut self.pending;
        for (inst_i, stage) in rt.temporals.iter_mut() {
            let tcol = self.plan.instances[*inst_i]
                .temporal_col
                .expect("temporal instance has columns");
            stage.flush(&mut |idx, vals| {
                if let Some(p) = pending.iter_mut().find(|p| p.index == idx) {
                    p.row[tcol..tcol + vals.len()].copy_from_slice(vals);
                    p.missing -= 1;
                }
            });
        }
        self.complete_ready();
        self.elapsed += t0.elapsed().as_secs_f64();
        if !self.pending.is_empty() {
            return Err(Error::Internal("frames left pending after flush".into()));
        }
        Ok(())
    }

    /// Whether flush has been called.
    pub fn is_flushed(&self) -> bool {
        self.flushed
    }

    /// Every scored frame so far: (index, values) in order.
    pub fn scored_frames(&self) -> impl Iterator<Item = (u64, &[f64])> {
        let n = self.plan.columns.len();
        self.history_index
            .iter()
            .copied()
            .zip(self.history.chunks_exact(n.max(1)))
    }

    /// Pooled statistics of every column over the scored frames (libvmaf's pooling).
    pub fn pooled(&self) -> PooledResults {
        let n = self.plan.columns.len();
        let columns = self
            .plan
            .columns
            .iter()
            .enumerate()
            .map(|(c, name)| {
                let vals = self.history.chunks_exact(n.max(1)).map(|r| r[c]);
                (name.clone(), crate::model::pool(vals))
            })
            .collect();
        PooledResults {
            columns,
            frames: self.frames_scored(),
        }
    }

    /// Adds integer totals that a backend's own instance of extractor instance `instance` (in
    /// [`Engine::instances`] order) accumulated, for [`Engine::aggregates`].
    pub fn add_totals(&mut self, instance: usize, totals: &[u64]) {
        if self.external_totals.len() <= instance {
            self.external_totals.resize(instance + 1, Vec::new());
        }
        let sum = &mut self.external_totals[instance];
        sum.resize(sum.len().max(totals.len()), 0);
        for (s, v) in sum.iter_mut().zip(totals) {
            *s = s.wrapping_add(*v);
        }
    }

    /// Whether some feature of the plan reads the chroma planes (callers may pass luma only
    /// otherwise).
    pub fn reads_chroma(&self) -> bool {
        self.plan.chroma
    }

    /// Whole-stream values of the extractors that have them (libvmaf's `aggregate_metrics`, e.g.
    /// `apsnr_y`), from every frame extracted so far; complete after [`Engine::flush`].
    pub fn aggregates(&self) -> Vec<(String, f64)> {
        let mut out = Vec::new();
        for (inst, sum) in self.plan.instances.iter().zip(self.instance_totals()) {
            if let Some(agg) = inst.def.aggregate {
                out.extend(agg(&inst.opts, &self.cfg.format, &sum));
            }
        }
        out
    }

    /// Every extractor instance's integer totals (in [`Engine::instances`] order), summed over
    /// the worker slots and [`Engine::add_totals`]: what [`Engine::aggregates`] is made from.
    /// Sums are order-free, so a segment's totals added to the others' at the merge give the
    /// whole title's.
    pub fn instance_totals(&self) -> Vec<Vec<u64>> {
        let slots = self.rt.as_ref().map_or(&[][..], |rt| &rt.slots[..]);
        (0..self.plan.instances.len())
            .map(|i| {
                let mut sum: Vec<u64> = self.external_totals.get(i).cloned().unwrap_or_default();
                for slot in slots {
                    let t = slot.extractors[i].totals();
                    sum.resize(sum.len().max(t.len()), 0);
                    for (s, v) in sum.iter_mut().zip(t) {
                        *s = s.wrapping_add(*v);
                    }
                }
                sum
            })
            .collect()
    }

    /// Frames of context a segment needs before its first frame: the previous frames the plan's
    /// extractors read (those declaring `needs_prev_ref` or `needs_prev_dis` get up to two; 0
    /// when none does). Temporal stages (motion2, motion3, its moving average) need none: they
    /// are derived at the merge from every frame's spatial values.
    pub fn context_frames(&self) -> u64 {
        self.plan.context_frames()
    }

    /// Makes this engine score one segment of a title: the next frame sent is title frame
    /// `first` (a context frame given with [`Engine::send_context`], or the segment's first
    /// frame given with [`Engine::send`]). Instead of scores, the engine then records each sent
    /// frame's spatial row ([`Engine::segment_rows`]); frames before `first` are never read, so
    /// a segment without enough context is refused at [`Engine::send`]. Call before any frame;
    /// the CPU backend only.
    pub fn begin_segment(&mut self, first: u64) -> Result<()> {
        if self.next_index != 0 || self.rt.is_some() || self.flushed {
            return Err(Error::State(
                "begin_segment after frames were sent; call it first".into(),
            ));
        }
        if self.cfg.backend == Backend::Cuda {
            return Err(Error::Unsupported(
                "segment scoring runs on the CPU backend; drop backend=cuda for segments".into(),
            ));
        }
        self.next_index = first;
        self.first_held = first;
        self.segment = Some(SegmentRows::default());
        Ok(())
    }

    /// Gives a segment's context frame (title frame [`Engine::frames_sent`]): kept as the
    /// history later frames read, never extracted or scored, so it adds nothing to the totals.
    /// Only after [`Engine::begin_segment`] and before the first [`Engine::send`].
    pub fn send_context(&mut self, reference: &Picture<'_>, distorted: &Picture<'_>) -> Result<()> {
        if self.segment.as_ref().is_none_or(|s| !s.indices.is_empty()) || self.flushed {
            return Err(Error::State(
                "send_context outside a segment's start (begin_segment, then context frames, \
                 then send)"
                    .into(),
            ));
        }
        if reference.format != distorted.format {
            return Err(Error::Mismatch(format!(
                "reference {}, distorted {}",
                reference.format, distorted.format
            )));
        }
        self.check_picture("reference", reference)?;
        self.check_picture("distorted", distorted)?;
        let index = self.next_index;
        let history = self.plan.dist_history();
        let rt = self.cpu_runtime()?;
        if !rt.waiting.is_empty() {
            return Err(Error::State("send_context after send".into()));
        }
        let (nref, ndist) = (rt.refs.len(), rt.dists.len());
        rt.ring_entry(false, index as usize % nref)
            .copy_from(reference)?;
        if history {
            rt.ring_entry(true, index as usize % ndist)
                .copy_from(distorted)?;
        }
        self.next_index += 1;
        Ok(())
    }

    /// A segment's recorded frames (after [`Engine::flush`]: all of them): (title index,
    /// spatial row) in order, each row [`Engine::spatial_row_len`] values, as
    /// [`Engine::push_spatial`] takes them. Empty for an engine not scoring a segment.
    pub fn segment_rows(&self) -> impl Iterator<Item = (u64, &[f64])> {
        let n = self.plan.spatial_slots().max(1);
        let (indices, rows) = match &self.segment {
            Some(s) => (&s.indices[..], &s.rows[..]),
            None => (&[][..], &[][..]),
        };
        indices.iter().copied().zip(rows.chunks_exact(n))
    }

    /// Log names of the spatial row's slots ([`Engine::spatial_row_len`] of them), shown or not.
    pub fn spatial_slot_names(&self) -> &[String] {
        &self.plan.slot_names[..self.plan.spatial_slots()]
    }

    /// A fingerprint of everything that decides a log's content besides the pictures: this
    /// crate's version, the format, `n_subsample`, the pool method, the libvmaf kernel family
    /// (requested and reproduced), every extractor instance with its options, the row slots and
    /// columns, and every model's full content (so two model files of one name differ). Segments
    /// merge only with equal fingerprints. 16 hex digits (FNV-1a, a consistency check, not a
    /// cryptographic one).
    pub fn fingerprint(&self) -> String {
        use std::fmt::Write;
        let mut text = String::new();
        let c = &self.cfg;
        let _ = write!(
            text,
            "{}|{:?}|{}|{:?}|{}|{}|",
            env!("CARGO_PKG_VERSION"),
            c.format,
            c.n_subsample,
            c.pool,
            self.libvmaf_isa,
            c.libvmaf_isa
        );
        for i in &self.plan.instances {
            let _ = write!(text, "{}:{:?}:{}|", i.def.name, i.opts, i.spatial_col);
        }
        let _ = write!(text, "{:?}|{:?}|", self.plan.slot_names, self.plan.columns);
        for (m, slots) in &self.plan.models {
            let _ = write!(text, "{}:{slots:?}|", m.fingerprint_text());
        }
        let _ = write!(text, "{}|{:?}", self.plan.n_headline, self.plan.collections);
        // FNV-1a 64 (its published offset basis and prime).
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in text.bytes() {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
        format!("{h:016x}")
    }

    /// Makes the engine reproduce (and report) `isa`, whatever its configuration resolved to on
    /// this host: a merge reports the family its segments were computed with.
    pub(crate) fn set_libvmaf_isa(&mut self, isa: LibvmafIsa) {
        self.libvmaf_isa = isa;
    }

    /// Adds seconds computed elsewhere (a merge's segments) to [`Engine::elapsed_seconds`].
    pub(crate) fn add_elapsed(&mut self, secs: f64) {
        self.elapsed += secs;
    }

    /// The headline score of model `i` with the configured pool method.
    pub fn pooled_model_score(&self, i: usize) -> Option<f64> {
        if self.history_index.is_empty() || i >= self.plan.n_headline {
            return None;
        }
        let col = self.plan.n_feature_cols + i;
        let n = self.plan.columns.len();
        let stats = crate::model::pool(self.history.chunks_exact(n).map(|r| r[col]));
        Some(stats.get(self.cfg.pool))
    }
}

#[cfg(test)]
mod history_tests;

#[cfg(test)]
mod lent_tests;
