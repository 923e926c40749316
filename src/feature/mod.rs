//! Feature extractors and their registry.
//!
//! As in libvmaf, an extractor is looked up by the feature names a model asks for; a future CUDA or
//! SIMD extractor registers as a peer providing the same names. Each extractor computes per-frame
//! ("spatial") values; an extractor may also have a [`Temporal`] stage that turns per-frame values
//! into values that depend on neighbouring frames (motion2/motion3), emitted with a small lag.

pub mod adm;
pub mod cambi;
pub mod ciede;
pub mod float_adm;
pub mod float_ansnr;
pub mod float_moment;
pub mod float_motion;
pub mod float_ms_ssim;
pub mod float_psnr;
pub mod float_ssim;
pub mod float_vif;
pub mod iqa;
pub mod motion;
pub mod names;
pub mod options;
pub mod picture_copy;
pub mod psnr;
pub mod psnr_hvs;
pub mod scale;
pub mod speed;
pub mod vif;

use crate::error::{Error, Result};
use crate::picture::{PictureFormat, Plane};
use options::{OptSpec, OptValues};

/// The planes an extractor sees for one frame.
#[derive(Debug, Clone, Copy)]
pub struct FrameInput<'a> {
    /// Reference luma.
    pub reference: Plane<'a>,
    /// Distorted luma.
    pub distorted: Plane<'a>,
    /// Reference luma of the previous frame (`None` for frame 0); only for `needs_prev_ref`.
    pub prev_reference: Option<Plane<'a>>,
    /// Reference Cb and Cr of the previous frame, for `needs_prev_ref` extractors whose
    /// `reads_chroma` says so (else `None`).
    pub prev_reference_chroma: Option<[Plane<'a>; 2]>,
    /// Reference luma two frames back (`None` for frames 0 and 1); only for `needs_prev_ref`.
    pub prev_prev_reference: Option<Plane<'a>>,
    /// Reference Cb and Cr, for extractors whose `reads_chroma` says so (else `None`).
    pub reference_chroma: Option<[Plane<'a>; 2]>,
    /// Distorted Cb and Cr, likewise.
    pub distorted_chroma: Option<[Plane<'a>; 2]>,
    /// Distorted luma of the previous frame (`None` for frame 0); only for `needs_prev_dis`.
    pub prev_distorted: Option<Plane<'a>>,
    /// Distorted luma two frames back (`None` for frames 0 and 1); only for `needs_prev_dis`.
    pub prev_prev_distorted: Option<Plane<'a>>,
    /// Distorted Cb and Cr of the previous frame, for `needs_prev_dis` extractors whose
    /// `reads_chroma` says so (else `None`).
    pub prev_distorted_chroma: Option<[Plane<'a>; 2]>,
    /// Frame index in the stream.
    pub index: u64,
}

impl<'a> FrameInput<'a> {
    /// Frame `index` with luma planes only and no history (what a luma-only extractor without
    /// temporal needs sees; tests build inputs with it).
    pub fn luma(reference: Plane<'a>, distorted: Plane<'a>, index: u64) -> Self {
        FrameInput {
            reference,
            distorted,
            prev_reference: None,
            prev_reference_chroma: None,
            prev_prev_reference: None,
            reference_chroma: None,
            distorted_chroma: None,
            prev_distorted: None,
            prev_prev_distorted: None,
            prev_distorted_chroma: None,
            index,
        }
    }
}

/// A per-frame feature extractor instance. One instance per worker: it owns its scratch buffers,
/// allocated in `create`, so `extract` allocates nothing.
pub trait Extractor: Send {
    /// Writes one value per entry of [`ExtractorDef::spatial`] (in that order) into `out`
    /// (entries its instance does not show may be left as they are).
    fn extract(&mut self, input: &FrameInput<'_>, out: &mut [f64]) -> Result<()>;

    /// Integer totals accumulated over the frames this instance extracted, for
    /// [`ExtractorDef::aggregate`]. Sums are order-free, so the engine adds up the totals of
    /// every worker's instance exactly (wrapping, as libvmaf's `uint64_t`).
    fn totals(&self) -> &[u64] {
        &[]
    }

    /// Like [`Extractor::extract`], for an instance whose [`ExtractorDef::shares_reference`] is
    /// set, scoring a reference that other engines of the same configuration score too (a
    /// ladder, [`crate::ladder`]): the instance computes its reference-side state into `shared`
    /// only if no other engine has for this frame ([`SharedReference::get`]), and its
    /// distorted-side and joint terms itself. The values must equal [`Extractor::extract`]'s.
    fn extract_shared(
        &mut self,
        input: &FrameInput<'_>,
        shared: &SharedReference,
        out: &mut [f64],
    ) -> Result<()> {
        let _ = shared;
        self.extract(input, out)
    }
}

/// One extractor instance's reference-side state for one frame, shared by the engines of a
/// ladder (every engine's instance at the same plan position has the same options, so the
/// state one computes is the state the others would): a typed value kept between frames, so
/// that refilling it allocates nothing, behind a lock.
#[derive(Default)]
pub struct SharedReference {
    state: std::sync::RwLock<SharedState>,
}

#[derive(Default)]
struct SharedState {
    /// Whether `value` holds this frame's state.
    ready: bool,
    /// The state, kept (with its buffers) from frame to frame.
    value: Option<Box<dyn std::any::Any + Send + Sync>>,
}

impl std::fmt::Debug for SharedReference {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SharedReference").finish_non_exhaustive()
    }
}

impl SharedReference {
    /// Forgets the frame's state (for the next frame), keeping the value and its buffers.
    pub fn clear(&mut self) {
        // A poisoned lock (a panic while filling) holds nothing valid either.
        self.state.clear_poison();
        let s = self.state.get_mut().unwrap_or_else(|e| e.into_inner());
        s.ready = false;
    }

    /// This frame's state: the first caller fills it (`fill` on the kept value, or on `make()`
    /// the first time or when the kept value is of another type), holding the write lock so
    /// that the others wait for it rather than compute it again; then everyone reads it
    /// together. An error or a panic in `fill` leaves it unfilled for the next caller.
    pub fn get<T: std::any::Any + Send + Sync>(
        &self,
        make: impl FnOnce() -> T,
        fill: impl FnOnce(&mut T) -> Result<()>,
    ) -> Result<SharedGuard<'_, T>> {
        let got = self.get_with(true, make, fill)?;
        Ok(got.expect("a waiting caller always gets the state"))
    }

    /// Like [`SharedReference::get`], but never waits for another caller's `fill`: when one is
    /// filling the state this returns `None` (the caller computes what it needs on its own, as
    /// it would unshared). For states whose filling is long (VIF's is a rendition's whole
    /// statistic), so that renditions running at the same time do not stand idle.
    pub fn get_or_skip<T: std::any::Any + Send + Sync>(
        &self,
        make: impl FnOnce() -> T,
        fill: impl FnOnce(&mut T) -> Result<()>,
    ) -> Result<Option<SharedGuard<'_, T>>> {
        self.get_with(false, make, fill)
    }

    /// [`SharedReference::get`] (`wait`) or [`SharedReference::get_or_skip`]: without `wait`
    /// the locks are only tried, and a lock held by a filler gives `None`.
    fn get_with<T: std::any::Any + Send + Sync>(
        &self,
        wait: bool,
        make: impl FnOnce() -> T,
        fill: impl FnOnce(&mut T) -> Result<()>,
    ) -> Result<Option<SharedGuard<'_, T>>> {
        use std::sync::TryLockError;
        let ready = |s: &SharedState| s.ready && s.value.as_ref().is_some_and(|v| v.is::<T>());
        let guard = if wait {
            self.state.read().unwrap_or_else(|e| e.into_inner())
        } else {
            match self.state.try_read() {
                Ok(g) => g,
                Err(TryLockError::Poisoned(e)) => e.into_inner(),
                // Another caller holds the write lock: it is filling the state.
                Err(TryLockError::WouldBlock) => return Ok(None),
            }
        };
        if ready(&guard) {
            return Ok(Some(SharedGuard {
                guard,
                _t: std::marker::PhantomData,
            }));
        }
        drop(guard);
        let mut w = if wait {
            self.state.write().unwrap_or_else(|e| e.into_inner())
        } else {
            match self.state.try_write() {
                Ok(w) => w,
                Err(TryLockError::Poisoned(e)) => e.into_inner(),
                // Another caller is filling it (readers only come once it is ready).
                Err(TryLockError::WouldBlock) => return Ok(None),
            }
        };
        if !ready(&w) {
            w.ready = false;
            if !w.value.as_ref().is_some_and(|v| v.is::<T>()) {
                w.value = Some(Box::new(make()));
            }
            let v = w.value.as_mut().and_then(|v| v.downcast_mut::<T>());
            fill(v.expect("a value of type T (just made)"))?;
            w.ready = true;
        }
        drop(w);
        // Nobody clears it while `self` is borrowed (clearing takes `&mut`): it stays filled.
        Ok(Some(SharedGuard {
            guard: self.state.read().unwrap_or_else(|e| e.into_inner()),
            _t: std::marker::PhantomData,
        }))
    }
}

/// Read access to a filled [`SharedReference`] of type `T` (other engines may read it at the
/// same time).
pub struct SharedGuard<'a, T> {
    guard: std::sync::RwLockReadGuard<'a, SharedState>,
    _t: std::marker::PhantomData<fn() -> T>,
}

impl<T: 'static> std::ops::Deref for SharedGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        self.guard
            .value
            .as_ref()
            .and_then(|v| v.downcast_ref::<T>())
            .expect("a filled state of type T (checked by SharedReference::get)")
    }
}

/// A stage that turns the per-frame values of its extractor into values depending on later frames.
pub trait Temporal: Send {
    /// Feeds frame `index`'s spatial values (frames arrive in order, all of them); calls `emit` for
    /// every frame whose temporal values are now final, in order.
    fn push(&mut self, index: u64, spatial: &[f64], emit: &mut dyn FnMut(u64, &[f64]));
    /// End of stream: emits the remaining frames.
    fn flush(&mut self, emit: &mut dyn FnMut(u64, &[f64]));
}

/// What an extractor needs to be created.
#[derive(Debug, Clone)]
pub struct ExtractorConfig {
    /// Stream format.
    pub format: PictureFormat,
    /// Option values.
    pub opts: OptValues,
    /// The libvmaf kernel family whose host-dependent results to reproduce (resolved by the
    /// engine).
    pub libvmaf_isa: crate::fidelity::LibvmafIsa,
}

/// Creates an extractor's temporal stage from its options.
pub type CreateTemporal = fn(&OptValues) -> Box<dyn Temporal>;

/// Whether an instance with these options, on this format, shows a spatial output (by full name)
/// as a log column; outputs it does not show are not computed into the log.
pub type Shows = fn(&OptValues, &PictureFormat, &str) -> bool;

/// Turns the summed [`Extractor::totals`] into whole-stream values (libvmaf's "aggregate
/// metrics", e.g. `apsnr_y`), by name.
pub type Aggregate = fn(&OptValues, &PictureFormat, &[u64]) -> Vec<(String, f64)>;

/// A registered extractor kind.
pub struct ExtractorDef {
    /// Name used in `feature=name=…` (libvmaf's extractor name).
    pub name: &'static str,
    /// Options accepted.
    pub options: &'static [OptSpec],
    /// Full names of the per-frame values written by [`Extractor::extract`], in order.
    pub spatial: &'static [&'static str],
    /// Full names of values written by the temporal stage, in order (empty if none).
    pub temporal: &'static [&'static str],
    /// Spatial outputs libvmaf logs under their bare name whatever the options: names missing
    /// from its `provided_features`, which its feature-name dictionary therefore never renames
    /// (float_adm's `adm`).
    pub unsuffixed: &'static [&'static str],
    /// Needs the previous reference frames; then it runs on every frame, even with `n_subsample`.
    pub needs_prev_ref: bool,
    /// Needs the previous distorted frames (the same depth as the references: two back); then it
    /// runs on every frame, even with `n_subsample`, and the engine keeps distorted history,
    /// which it copies for no other extractor.
    pub needs_prev_dis: bool,
    /// Runs on every frame, even with `n_subsample` (libvmaf's `VMAF_FEATURE_EXTRACTOR_TEMPORAL`).
    pub every_frame: bool,
    /// Its per-frame values depend on the reference pictures only (the current one and those
    /// before it), never on the distorted: a ladder of renditions computes them once per frame
    /// and gives every rendition the same values ([`crate::ladder`]).
    pub reference_only: bool,
    /// Part of its work depends on the reference only: in a ladder of renditions each frame's
    /// instance computes it once into a [`SharedReference`] that every rendition's instance
    /// reads ([`Extractor::extract_shared`]; ADM's reference decomposition and denominator).
    pub shares_reference: bool,
    /// Whether an instance reads the chroma planes (then the engine keeps them).
    pub reads_chroma: fn(&OptValues, &PictureFormat) -> bool,
    /// Which spatial outputs an instance shows (`None`: all).
    pub shows: Option<Shows>,
    /// Refuses options or formats the extractor cannot take, at configure time.
    pub check: fn(&OptValues, &PictureFormat) -> Result<()>,
    /// Whole-stream values from the instance's totals, if it has any.
    pub aggregate: Option<Aggregate>,
    /// Creates a per-frame instance.
    pub create: fn(&ExtractorConfig) -> Result<Box<dyn Extractor>>,
    /// Creates the temporal stage, if the extractor has one.
    pub create_temporal: Option<CreateTemporal>,
}

impl std::fmt::Debug for ExtractorDef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExtractorDef")
            .field("name", &self.name)
            .finish()
    }
}

fn no_chroma(_: &OptValues, _: &PictureFormat) -> bool {
    false
}

fn accept_all(_: &OptValues, _: &PictureFormat) -> Result<()> {
    Ok(())
}

fn not_creatable(_: &ExtractorConfig) -> Result<Box<dyn Extractor>> {
    Err(Error::Internal(
        "extractor definition without create".into(),
    ))
}

impl ExtractorDef {
    /// The defaults a definition starts from (`..ExtractorDef::DEFAULTS`): luma only, every
    /// output shown, no checks, no temporal stage, no aggregates.
    pub const DEFAULTS: ExtractorDef = ExtractorDef {
        name: "",
        options: &[],
        spatial: &[],
        temporal: &[],
        unsuffixed: &[],
        needs_prev_ref: false,
        needs_prev_dis: false,
        every_frame: false,
        reference_only: false,
        shares_reference: false,
        reads_chroma: no_chroma,
        shows: None,
        check: accept_all,
        aggregate: None,
        create: not_creatable,
        create_temporal: None,
    };

    /// The log name of output `full_name` under `opts`: libvmaf's alias with a suffix per
    /// non-default feature parameter ([`OptValues::feature_name`]), or the bare name of an
    /// [`ExtractorDef::unsuffixed`] output.
    pub fn output_name(&self, opts: &OptValues, full_name: &str) -> String {
        if self.unsuffixed.contains(&full_name) {
            return full_name.to_string();
        }
        names::alias(&opts.feature_name(full_name)).to_string()
    }

    /// Whether an instance shows spatial output `full_name`.
    pub fn shows(&self, opts: &OptValues, format: &PictureFormat, full_name: &str) -> bool {
        self.shows.is_none_or(|f| f(opts, format, full_name))
    }

    /// Whether this extractor provides a feature (by full name).
    pub fn provides(&self, full_name: &str) -> bool {
        self.spatial.contains(&full_name) || self.temporal.contains(&full_name)
    }
}

/// Every extractor this build knows, in registry order.
pub static REGISTRY: &[&ExtractorDef] = &[
    &adm::DEF,
    &cambi::DEF,
    &ciede::DEF,
    &float_adm::DEF,
    &float_ansnr::DEF,
    &float_moment::DEF,
    &float_motion::DEF,
    &float_ms_ssim::DEF,
    &float_psnr::DEF,
    &float_ssim::DEF,
    &float_vif::DEF,
    &motion::DEF,
    &psnr::DEF,
    &psnr_hvs::DEF,
    &speed::chroma::DEF,
    &speed::temporal::DEF,
    &vif::DEF,
];

/// Looks an extractor up by its `feature=name=…` name (accepting libvmaf's `float_`-less aliases
/// `integer_vif` etc.).
pub fn find_by_name(name: &str) -> Result<&'static ExtractorDef> {
    let n = name.strip_prefix("integer_").unwrap_or(name);
    let n = if n == "adm2" { "adm" } else { n };
    REGISTRY
        .iter()
        .copied()
        .find(|d| d.name == n)
        .ok_or_else(|| {
            let known: Vec<_> = REGISTRY.iter().map(|d| d.name).collect();
            Error::InvalidOption(format!(
                "unknown feature '{name}' (this build computes: {})",
                known.join(", ")
            ))
        })
}

/// Finds the extractor providing a feature a model asks for (full name or alias).
pub fn find_by_provided(feature: &str) -> Result<&'static ExtractorDef> {
    let full = names::full_name(feature);
    REGISTRY
        .iter()
        .copied()
        .find(|d| d.provides(full))
        .ok_or_else(|| {
            Error::Model(format!(
                "the model needs feature '{feature}', which vmaf_rs does not compute yet"
            ))
        })
}

#[cfg(test)]
mod shared_reference_tests {
    use super::SharedReference;

    /// `get_or_skip` fills an empty state, answers `None` at once while another caller is
    /// filling it (instead of waiting), and hands out the filled state afterwards and to
    /// `get`; `clear` empties it for the next frame.
    #[test]
    fn get_or_skip_does_not_wait_for_a_filler() {
        use std::sync::mpsc::channel;
        let shared = SharedReference::default();
        let (filling_tx, filling_rx) = channel::<()>();
        let (done_tx, done_rx) = channel::<()>();
        std::thread::scope(|s| {
            let shared = &shared;
            let filler = s.spawn(move || {
                let g = shared
                    .get_or_skip(
                        || 0u32,
                        |v| {
                            filling_tx.send(()).unwrap();
                            done_rx.recv().unwrap();
                            *v = 7;
                            Ok(())
                        },
                    )
                    .unwrap();
                *g.unwrap()
            });
            filling_rx.recv().unwrap();
            let skipped = shared
                .get_or_skip(|| 0u32, |_| panic!("a second filler"))
                .unwrap();
            assert!(
                skipped.is_none(),
                "a caller waited for or repeated the fill"
            );
            done_tx.send(()).unwrap();
            assert_eq!(filler.join().unwrap(), 7);
        });
        let g = shared.get_or_skip(|| 0u32, |_| panic!("refilled")).unwrap();
        assert_eq!(g.map(|g| *g), Some(7));
        assert_eq!(*shared.get(|| 0u32, |_| panic!("refilled")).unwrap(), 7);
        let mut shared = shared;
        shared.clear();
        let g = shared
            .get_or_skip(
                || 0u32,
                |v| {
                    *v += 1;
                    Ok(())
                },
            )
            .unwrap();
        assert_eq!(g.map(|g| *g), Some(8), "the kept value, refilled");
    }
}
