//! Ladder scoring: one reference, several distorted renditions of it (an encoding ladder),
//! scored in one pass.
//!
//! Each rendition has its own [`Engine`] (its own extractors, temporal stages, models, pooling
//! and log), so its scores are exactly those of a separate run. What the renditions share is the
//! reference side:
//!
//! * the reference is read and copied once per frame into an [`OwnedPicture`] every engine keeps
//!   a handle on ([`Engine::send_shared`]), instead of once per rendition (the callers, the CLI
//!   and the filter, read or decode it once too); [`Ladder::send_filled`] lets a caller read it,
//!   and each rendition's picture, straight into those buffers, with no copy at all (the CLI
//!   does after the first frame);
//! * the extractors whose values depend on the reference only
//!   ([`crate::feature::ExtractorDef::reference_only`]: motion, float_motion) run once per frame:
//!   the first engine's job to reach one computes it into the frame's [`ReferenceValues`], the
//!   other renditions copy its values;
//! * the reference-side work of extractors that read both pictures and opt in
//!   ([`crate::feature::ExtractorDef::shares_reference`]: integer ADM's reference DWT bands and
//!   denominators; integer VIF's per-pixel reference statistics, filtered mean and variance, and
//!   its denominator's sums, with its split kernels at every CPU level) is done once per
//!   frame into the instance's [`crate::feature::SharedReference`], which every rendition's
//!   instance reads.
//!
//! On CUDA frames ([`Ladder::send_cuda`]: the filter's inputs from NVDEC or hwupload) each
//! rendition's engine has its own scorer, and what the renditions share is the reference frame:
//! decoded (or uploaded) once by the caller, read in place by every rendition's kernels, released
//! when the last of them is done. The reference-side statistics are computed per rendition
//! there: the GPU kernels compute both sides in one fused pass over the two planes.
//!
//! The worker threads are divided between the engines, so a ladder uses the threads one run
//! would; with fewer threads than renditions (but more than one) each engine still computes on
//! a thread of its own, so the renditions run at the same time. VIF's shared reference side
//! includes its downsampled reference planes (the other renditions downsample their distorted
//! plane alone). A one-rendition ladder shares nothing (its extractors run as a plain run's).

use std::sync::Arc;

use crate::backend::{Backend, CudaTarget};
use crate::cuda::CudaFrame;
use crate::engine::{Engine, EngineConfig, FrameScores, ReferenceValues};
use crate::error::{Error, Result};
use crate::picture::{OwnedPicture, Picture};

/// Most renditions one ladder scores (each holds its own engine and worker slots).
pub const MAX_RENDITIONS: usize = 64;

/// A reference scored against several renditions; see the module documentation.
#[derive(Debug)]
pub struct Ladder {
    engines: Vec<Engine>,
    /// Reference copies: each frame takes one no engine holds any more (a pool, so that once
    /// the rings have filled no frame allocates).
    pictures: Vec<Arc<OwnedPicture>>,
    /// Shared reference values and state, pooled likewise; apart from the pictures because
    /// only the frame's jobs hold them (the rings keep pictures longer, for motion's history).
    values: Vec<Arc<ReferenceValues>>,
}

/// Worker threads of rendition `r` of `n` when a ladder may use `threads`: none (every engine
/// computes on the calling thread, one rendition after another) for 0, or for 1 shared by
/// several renditions; otherwise an even split, the remainder to the first renditions, at least
/// one each (fewer threads than renditions run more threads than asked rather than one
/// rendition at a time).
fn threads_of(threads: usize, n: usize, r: usize) -> usize {
    if threads == 0 || (threads == 1 && n > 1) {
        return 0;
    }
    let (each, extra) = (threads / n, threads % n);
    (each + usize::from(r < extra)).max(1)
}

impl Ladder {
    /// `renditions` engines of the same configuration (`cfg.n_threads` is the ladder's total).
    pub fn new(cfg: EngineConfig, renditions: usize) -> Result<Self> {
        if renditions == 0 || renditions > MAX_RENDITIONS {
            return Err(Error::InvalidOption(format!(
                "a ladder scores 1 to {MAX_RENDITIONS} renditions, not {renditions}"
            )));
        }
        let engines = (0..renditions)
            .map(|r| {
                let mut c = cfg.clone();
                c.n_threads = threads_of(cfg.n_threads, renditions, r);
                Engine::new(c)
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Ladder {
            engines,
            pictures: Vec::new(),
            values: Vec::new(),
        })
    }

    /// How many renditions it scores.
    pub fn renditions(&self) -> usize {
        self.engines.len()
    }

    /// Rendition `r`'s engine (columns, scored frames, pooling, logs).
    pub fn engine(&self, r: usize) -> &Engine {
        &self.engines[r]
    }

    /// Every rendition's engine, in rendition order.
    pub fn engines(&self) -> &[Engine] {
        &self.engines
    }

    /// Scores one reference frame against the same frame of every rendition (`distorted[r]`
    /// for rendition `r`). Pictures are only borrowed for the call.
    pub fn send(&mut self, reference: &Picture<'_>, distorted: &[Picture<'_>]) -> Result<()> {
        self.host_pictures()?;
        if distorted.len() != self.engines.len() {
            return Err(Error::Mismatch(format!(
                "{} distorted pictures for a ladder of {} renditions",
                distorted.len(),
                self.engines.len()
            )));
        }
        for (r, d) in distorted.iter().enumerate() {
            if d.format != reference.format {
                return Err(Error::Mismatch(format!(
                    "rendition {r} is {}, the reference {}",
                    d.format, reference.format
                )));
            }
        }
        let (pic, values) = self.reference_copy(reference)?;
        // One rendition has no one to share with: its extractors run whole, as a plain run's,
        // rather than also storing their reference side.
        let values = (self.engines.len() > 1).then_some(&values);
        for (r, (e, d)) in self.engines.iter_mut().zip(distorted).enumerate() {
            e.send_shared(&pic, values, d)
                .map_err(|e| in_rendition(r, e))?;
        }
        Ok(())
    }

    /// Like [`Ladder::send`], with the pictures read straight into the buffers the engines keep
    /// (which saves a copy of every picture: the CLI reads its files into them): `reference`
    /// fills a pooled reference picture and returns `false` when there is no frame (then
    /// nothing is sent, and `Ok(false)` returned), then `distorted(r, picture)` fills rendition
    /// `r`'s. The pictures are made by `OwnedPicture::new` with the engines'
    /// [`Engine::reference_layout`]. The closures' errors are returned as they are.
    pub fn send_filled(
        &mut self,
        reference: impl FnOnce(&mut OwnedPicture) -> Result<bool>,
        mut distorted: impl FnMut(usize, &mut OwnedPicture) -> Result<()>,
    ) -> Result<bool> {
        self.host_pictures()?;
        let Some((pic, values)) = self.reference_entry(reference)? else {
            return Ok(false);
        };
        let values = (self.engines.len() > 1).then_some(&values);
        for (r, e) in self.engines.iter_mut().enumerate() {
            let mut fill_err = None;
            // The caller's error comes back as it is; the engine's own are named by rendition.
            let sent = e.send_shared_filled(&pic, values, |d| {
                distorted(r, d).map_err(|err| {
                    fill_err = Some(err);
                    Error::Internal("rendition picture not filled".into())
                })
            });
            if let Err(err) = sent {
                return Err(fill_err.unwrap_or_else(|| in_rendition(r, err)));
            }
        }
        Ok(true)
    }

    /// Scores one reference CUDA frame against the same frame of every rendition, as
    /// [`Engine::send_cuda`] does for one pair: each rendition's scorer reads the one reference
    /// (decoded once by the caller), whose release runs once, when every scorer is done with it;
    /// each distorted frame's release runs when its scorer is done. Every frame is released
    /// exactly once, also on error.
    pub fn send_cuda(
        &mut self,
        target: CudaTarget,
        reference: CudaFrame,
        distorted: Vec<CudaFrame>,
    ) -> Result<()> {
        if distorted.len() != self.engines.len() {
            return Err(Error::Mismatch(format!(
                "{} distorted CUDA frames for a ladder of {} renditions",
                distorted.len(),
                self.engines.len()
            )));
        }
        let references = reference.into_shared(self.engines.len());
        for (r, ((e, f), d)) in self
            .engines
            .iter_mut()
            .zip(references)
            .zip(distorted)
            .enumerate()
        {
            e.send_cuda(target, f, d).map_err(|e| in_rendition(r, e))?;
        }
        Ok(())
    }

    /// Once, after the first CUDA frames: where each feature runs (the first rendition's line;
    /// the others' are the same and are taken with it).
    pub fn take_placement(&mut self) -> Option<String> {
        let line = self.engines[0].take_placement();
        for e in &mut self.engines[1..] {
            e.take_placement();
        }
        line
    }

    /// Releases every rendition's GPU side (see [`Engine::release_gpu`]).
    pub fn release_gpu(&mut self) -> Result<()> {
        let mut first = Ok(());
        for (r, e) in self.engines.iter_mut().enumerate() {
            let done = e.release_gpu().map_err(|e| in_rendition(r, e));
            if first.is_ok() {
                first = done;
            }
        }
        first
    }

    /// Host pictures go to a ladder on the CPU backend (`auto` or `cpu`).
    fn host_pictures(&self) -> Result<()> {
        if self.engines[0].config().backend == Backend::Cuda {
            return Err(Error::Unsupported(
                "a ladder on backend=cuda scores CUDA frames (NVDEC, hwupload); for host \
                 pictures use backend=cpu (or auto)"
                    .into(),
            ));
        }
        Ok(())
    }

    /// Pool entries holding `reference` and no values yet: ones no engine keeps, else new ones.
    fn reference_copy(
        &mut self,
        reference: &Picture<'_>,
    ) -> Result<(Arc<OwnedPicture>, Arc<ReferenceValues>)> {
        let format = self.engines[0].reference_layout().0;
        if reference.format != format {
            return Err(Error::Mismatch(format!(
                "reference picture is {}, the ladder was configured as {format}",
                reference.format
            )));
        }
        let entry = self.reference_entry(|p| p.copy_from(reference).map(|()| true))?;
        Ok(entry.expect("a copy always gives a picture"))
    }

    /// Pool entries with the picture `fill` writes (`None` if it says there is none) and no
    /// values yet: ones no engine keeps, else new ones.
    fn reference_entry(
        &mut self,
        fill: impl FnOnce(&mut OwnedPicture) -> Result<bool>,
    ) -> Result<Option<(Arc<OwnedPicture>, Arc<ReferenceValues>)>> {
        let (format, chroma) = self.engines[0].reference_layout();
        let p = free_entry(&mut self.pictures, || OwnedPicture::new(format, chroma));
        if !fill(Arc::get_mut(p).expect("no other handle (free_entry)"))? {
            return Ok(None);
        }
        let pic = Arc::clone(p);
        let engine = &self.engines[0];
        let v = free_entry(&mut self.values, || ReferenceValues::new(engine));
        Arc::get_mut(v)
            .expect("no other handle (free_entry)")
            .clear();
        Ok(Some((pic, Arc::clone(v))))
    }

    /// Rendition `r`'s next frame's scores, in order, reusing `out`'s buffer, if ready.
    pub fn receive_into(&mut self, r: usize, out: &mut FrameScores) -> bool {
        self.engines[r].receive_into(out)
    }

    /// End of stream for every rendition (see [`Engine::flush`]).
    pub fn flush(&mut self) -> Result<()> {
        for (r, e) in self.engines.iter_mut().enumerate() {
            e.flush().map_err(|e| in_rendition(r, e))?;
        }
        Ok(())
    }
}

/// An entry of `pool` no one else holds (a new one from `make` if there is none).
fn free_entry<T>(pool: &mut Vec<Arc<T>>, make: impl FnOnce() -> T) -> &mut Arc<T> {
    match pool.iter().position(|e| Arc::strong_count(e) == 1) {
        Some(i) => &mut pool[i],
        None => {
            pool.push(Arc::new(make()));
            pool.last_mut().expect("just pushed")
        }
    }
}

/// Rendition `r`'s log path of a ladder of `n`: `pattern` with `%v` replaced by `r` (the
/// rendition's number). A pattern without `%v` is refused, since every rendition would write
/// the same file; `option` names the option in the message (`-o`, `log_path=`).
pub fn rendition_log_path(
    pattern: &std::path::Path,
    option: &str,
    n: usize,
    r: usize,
) -> Result<std::path::PathBuf> {
    let text = pattern.to_string_lossy();
    if !text.contains("%v") {
        return Err(Error::InvalidOption(format!(
            "{option}{text}: {n} renditions write {n} logs; put %v in the path for the \
             rendition's number (e.g. {option}vmaf_%v.xml)"
        )));
    }
    Ok(text.replace("%v", &r.to_string()).into())
}

/// Names the rendition an engine's error came from (only ladders of several renditions do).
fn in_rendition(r: usize, e: Error) -> Error {
    match e {
        Error::Mismatch(m) => Error::Mismatch(format!("rendition {r}: {m}")),
        Error::InvalidOption(m) => Error::InvalidOption(format!("rendition {r}: {m}")),
        Error::State(m) => Error::State(format!("rendition {r}: {m}")),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn threads_are_split_between_renditions() {
        assert_eq!(threads_of(0, 3, 0), 0);
        // One thread for several renditions: all on the calling thread; for one, its worker.
        assert_eq!(threads_of(1, 3, 2), 0);
        assert_eq!(threads_of(1, 1, 0), 1);
        let split: Vec<usize> = (0..3).map(|r| threads_of(8, 3, r)).collect();
        assert_eq!(split, [3, 3, 2]);
        // More renditions than threads: one each.
        assert_eq!(threads_of(2, 6, 5), 1);
    }

    /// CUDA frames a ladder refuses (a count that does not match, `backend=cpu`, host pictures
    /// on `backend=cuda`) are errors, and every frame is still released exactly once; the
    /// reference's handles release it once, after the last. Needs no GPU: each refusal comes
    /// before any device work.
    #[test]
    fn refused_cuda_frames_are_released_once() {
        use crate::picture::{ChromaLayout, PictureFormat, Plane};
        use std::sync::atomic::{AtomicUsize, Ordering};
        let f = PictureFormat {
            width: 64,
            height: 48,
            bpc: 8,
            layout: ChromaLayout::Gray,
        };
        let released = Arc::new(AtomicUsize::new(0));
        let frame = || {
            let n = Arc::clone(&released);
            CudaFrame::with_release(0x1000, 64, move || {
                n.fetch_add(1, Ordering::SeqCst);
            })
        };
        let target = CudaTarget {
            ctx: std::ptr::null_mut(),
            stream: std::ptr::null_mut(),
            shift: 0,
        };
        let mut cfg = EngineConfig::new(f);
        cfg.backend = Backend::Cpu;
        let mut l = Ladder::new(cfg.clone(), 3).unwrap();
        let e = l.send_cuda(target, frame(), vec![frame()]).unwrap_err();
        assert!(e.to_string().contains("1 distorted CUDA frames"), "{e}");
        assert_eq!(released.load(Ordering::SeqCst), 2);
        let e = l
            .send_cuda(target, frame(), vec![frame(), frame(), frame()])
            .unwrap_err();
        assert!(e.to_string().contains("backend=cpu"), "{e}");
        assert_eq!(released.load(Ordering::SeqCst), 6);
        // The shared reference: released when its last handle goes, not before.
        let mut handles = frame().into_shared(3);
        let last = handles.pop().expect("three handles");
        drop(handles);
        assert_eq!(released.load(Ordering::SeqCst), 6, "one handle is left");
        drop(last);
        assert_eq!(released.load(Ordering::SeqCst), 7);
        drop(frame().into_shared(0));
        assert_eq!(released.load(Ordering::SeqCst), 8);
        cfg.backend = Backend::Cuda;
        let mut l = Ladder::new(cfg, 2).unwrap();
        let px = vec![128u8; 64 * 48];
        let pic = || Picture::new(f, Plane::new_u8(&px, 64, 48, 64).unwrap()).unwrap();
        let e = l.send(&pic(), &[pic(), pic()]).unwrap_err();
        assert!(e.to_string().contains("CUDA frames"), "{e}");
    }

    /// Pictures filled straight into the engines' buffers score exactly as copied ones, with
    /// the reference's end and a filler's error handed back as they are.
    #[test]
    fn filled_pictures_score_as_copied_ones() {
        use crate::output::LogFormat;
        use crate::picture::{ChromaLayout, PictureFormat, Plane, PlaneBuf};
        use crate::report::{write_log_with, LogOptions};
        let f = PictureFormat {
            width: 96,
            height: 64,
            bpc: 8,
            layout: ChromaLayout::Gray,
        };
        // Frame t of rendition r (r = 3: the reference), a different texture each.
        let px = |r: usize, t: usize| -> Vec<u8> {
            (0..96 * 64)
                .map(|i| ((i * (3 + r) + t * 7 + (i / 96) * (i % 5 + r)) % 251) as u8)
                .collect()
        };
        fn pic(f: PictureFormat, v: &[u8]) -> Picture<'_> {
            Picture::new(f, Plane::new_u8(v, 96, 64, 96).unwrap()).unwrap()
        }
        let logs = |l: &Ladder| -> Vec<Vec<u8>> {
            l.engines()
                .iter()
                .map(|e| {
                    let mut w = Vec::new();
                    let opts = LogOptions { reproducible: true };
                    write_log_with(e, LogFormat::Json, opts, &mut w).unwrap();
                    w
                })
                .collect()
        };
        let fill = |v: &[u8], p: &mut OwnedPicture| match &mut p.luma.buf {
            PlaneBuf::U8(b) => b.copy_from_slice(v),
            PlaneBuf::U16(_) => unreachable!("8-bit"),
        };
        let (frames, n) = (5, 3);
        let mut copied = Ladder::new(EngineConfig::new(f), n).unwrap();
        let mut filled = Ladder::new(EngineConfig::new(f), n).unwrap();
        for t in 0..frames {
            let ds: Vec<Vec<u8>> = (0..n).map(|r| px(r, t)).collect();
            let reference = px(3, t);
            let pics: Vec<Picture<'_>> = ds.iter().map(|d| pic(f, d)).collect();
            copied.send(&pic(f, &reference), &pics).unwrap();
            let sent = filled
                .send_filled(
                    |p| {
                        fill(&reference, p);
                        Ok(true)
                    },
                    |r, p| {
                        fill(&ds[r], p);
                        Ok(())
                    },
                )
                .unwrap();
            assert!(sent);
        }
        // The reference's end: nothing sent, no rendition asked for a picture.
        let end = filled.send_filled(|_| Ok(false), |_, _| panic!("no frame to fill"));
        assert!(!end.unwrap());
        copied.flush().unwrap();
        filled.flush().unwrap();
        assert_eq!(filled.engine(2).frames_scored(), frames as u64);
        assert_eq!(logs(&copied), logs(&filled));
        // A filler's own error comes back unchanged (not named by rendition).
        let mut l = Ladder::new(EngineConfig::new(f), 2).unwrap();
        let e = l
            .send_filled(
                |_| Ok(true),
                |r, _| match r {
                    0 => Ok(()),
                    _ => Err(Error::Mismatch("short input".into())),
                },
            )
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            Error::Mismatch("short input".into()).to_string()
        );
    }

    #[test]
    fn misuse_is_an_error_not_a_hang() {
        use crate::picture::{ChromaLayout, PictureFormat, Plane};
        let f = PictureFormat {
            width: 64,
            height: 48,
            bpc: 8,
            layout: ChromaLayout::Gray,
        };
        let px = vec![128u8; 64 * 48];
        let pic = || Picture::new(f, Plane::new_u8(&px, 64, 48, 64).unwrap()).unwrap();
        assert!(Ladder::new(EngineConfig::new(f), 0).is_err());
        let mut l = Ladder::new(EngineConfig::new(f), 2).unwrap();
        let e = l.send(&pic(), &[pic()]).unwrap_err();
        assert!(e.to_string().contains("1 distorted pictures"), "{e}");
        l.send(&pic(), &[pic(), pic()]).unwrap();
        // An engine fed shared references refuses borrowed ones, and the reverse.
        let mut e = Engine::new(EngineConfig::new(f)).unwrap();
        e.send(&pic(), &pic()).unwrap();
        let shared = Arc::new(OwnedPicture::new(f, false));
        let err = e.send_shared(&shared, None, &pic()).unwrap_err();
        assert!(err.to_string().contains("not both"), "{err}");
        let wrong = Arc::new(OwnedPicture::new(PictureFormat { width: 32, ..f }, false));
        let err = l.engines[0].send_shared(&wrong, None, &pic()).unwrap_err();
        assert!(err.to_string().contains("32x48"), "{err}");
        l.flush().unwrap();
        assert_eq!(l.engine(1).frames_scored(), 1);
    }
}
