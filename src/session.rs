//! FFmpeg-agnostic lifecycle behind the C ABI: options as `key=value` strings (the filter passes
//! its option strings straight through), lazy configuration, send/receive, and the end-of-stream
//! report (log file + "VMAF score" lines).

pub use crate::backend::Backend;
use crate::backend::CudaTarget;
use crate::cuda::CudaFrame;
use crate::engine::{Engine, EngineConfig, FrameScores};
use crate::error::{Error, Result};
use crate::fidelity::LibvmafIsaMode;
use crate::ladder::Ladder;
use crate::model::{
    parse_feature_option, parse_model_option, Loaded, Model, ModelSource, ModelSpec, PoolMethod,
};
use crate::output::LogFormat;
use crate::picture::{LentPicture, Picture, PictureFormat};
use crate::segment::{PartialLog, RunConfig, SegmentInfo};
use std::path::PathBuf;

/// Log severity, numerically equal to FFmpeg's `AV_LOG_*` levels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
#[repr(i32)]
pub enum LogLevel {
    /// Something failed.
    Error = 16,
    /// Something looks wrong but work goes on.
    Warning = 24,
    /// Normal results (the pooled score).
    Info = 32,
    /// Details.
    Verbose = 40,
    /// Debugging.
    Debug = 48,
}

/// Options of a session, with libvmaf's filter defaults.
#[derive(Debug, Clone)]
pub struct SessionOptions {
    /// `model` option text.
    pub model: String,
    /// `feature` option text.
    pub feature: String,
    /// `log_path`.
    pub log_path: Option<PathBuf>,
    /// `log_fmt`.
    pub log_fmt: LogFormat,
    /// `pool`.
    pub pool: PoolMethod,
    /// `n_threads`.
    pub n_threads: usize,
    /// `n_subsample`.
    pub n_subsample: u32,
    /// `backend`.
    pub backend: Backend,
    /// `libvmaf_isa`: the libvmaf kernel family whose host-dependent results to reproduce.
    pub libvmaf_isa: LibvmafIsaMode,
    /// `segment=A:B` (or `A:`): score title frames A to B-1 only and write a partial log for
    /// `vmaf-rs merge` (docs/SEGMENTS.md) to `log_path`.
    pub segment: Option<(u64, Option<u64>)>,
    /// `input_start`: the title index of the first frame the filter receives (segment mode).
    pub input_start: u64,
    /// `title_frames`: the title's frame count, recorded in the partial log (0: unknown).
    pub title_frames: Option<u64>,
    /// `renditions`: distorted inputs scored against the one reference (ladder scoring,
    /// [`crate::ladder`]); above 1, pairs go through [`Session::send_ladder`] and each rendition
    /// writes its own log (`log_path` with `%v`, replaced by the rendition's number).
    pub renditions: usize,
}

impl Default for SessionOptions {
    fn default() -> Self {
        SessionOptions {
            model: "version=vmaf_v0.6.1".into(),
            feature: String::new(),
            log_path: None,
            log_fmt: LogFormat::Xml,
            pool: PoolMethod::Mean,
            n_threads: 0,
            n_subsample: 1,
            backend: Backend::Auto,
            libvmaf_isa: LibvmafIsaMode::Auto,
            segment: None,
            input_start: 0,
            title_frames: None,
            renditions: 1,
        }
    }
}

/// Where a segment session is in its title.
#[derive(Debug, Clone, Copy)]
struct SegmentState {
    /// First scored title frame.
    start: u64,
    /// End of the scored range, if given.
    end: Option<u64>,
    /// First title frame kept as context (earlier frames are dropped).
    context_start: u64,
    /// Title index of the next frame sent.
    next: u64,
}

/// A borrowed CUDA context and stream (FFmpeg's `AVCUDADeviceContext.cuda_ctx` / `.stream`).
#[derive(Debug, Clone, Copy)]
struct CudaHandles {
    ctx: usize,
    stream: usize,
}

/// A scoring session.
pub struct Session {
    opts: SessionOptions,
    engine: Option<Engine>,
    /// With `renditions` above 1, instead of `engine`.
    ladder: Option<Ladder>,
    finished: bool,
    cuda: Option<CudaHandles>,
    segment: Option<SegmentState>,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("opts", &self.opts)
            .field("engine", &self.engine)
            .field("cuda", &self.cuda)
            .finish()
    }
}

impl Default for Session {
    fn default() -> Self {
        Self::new()
    }
}

fn parse_u64(key: &str, value: &str) -> Result<u64> {
    value.trim().parse().map_err(|_| {
        Error::InvalidOption(format!("{key}='{value}': expected a non-negative integer"))
    })
}

fn parse_uint(key: &str, value: &str, min: u64) -> Result<u64> {
    let v: u64 = value.trim().parse().map_err(|_| {
        Error::InvalidOption(format!("{key}='{value}': expected a non-negative integer"))
    })?;
    if v < min || v > u32::MAX as u64 {
        return Err(Error::InvalidOption(format!(
            "{key}={v}: out of range [{min}, {}]",
            u32::MAX
        )));
    }
    Ok(v)
}

impl Session {
    /// A session with default options. Allocates nothing else.
    pub fn new() -> Self {
        Session {
            opts: SessionOptions::default(),
            engine: None,
            ladder: None,
            finished: false,
            cuda: None,
            segment: None,
        }
    }

    /// The options.
    pub fn options(&self) -> &SessionOptions {
        &self.opts
    }

    /// Sets one option from its text (libvmaf filter names and grammar); validated at once.
    pub fn set_option(&mut self, key: &str, value: &str) -> Result<()> {
        if self.engine.is_some() || self.ladder.is_some() {
            return Err(Error::State(format!("option '{key}' set after configure")));
        }
        match key {
            "model" => {
                parse_model_option(value)?;
                self.opts.model = value.to_string();
            }
            "feature" => {
                parse_feature_option(value)?;
                self.opts.feature = value.to_string();
            }
            "log_path" => {
                self.opts.log_path = (!value.is_empty()).then(|| PathBuf::from(value));
            }
            "log_fmt" => self.opts.log_fmt = value.parse()?,
            "pool" => self.opts.pool = value.parse()?,
            "n_threads" => self.opts.n_threads = parse_uint(key, value, 0)? as usize,
            "n_subsample" => self.opts.n_subsample = parse_uint(key, value, 1)? as u32,
            "libvmaf_isa" => self.opts.libvmaf_isa = value.parse()?,
            "backend" => self.opts.backend = value.parse()?,
            "segment" => {
                self.opts.segment = match value.trim() {
                    "" => None,
                    v => Some(crate::segment::parse_range("segment", v)?),
                }
            }
            "input_start" => self.opts.input_start = parse_u64(key, value)?,
            "title_frames" => {
                self.opts.title_frames = Some(parse_u64(key, value)?).filter(|&n| n > 0)
            }
            "renditions" => {
                let n = parse_uint(key, value, 1)? as usize;
                if n > crate::ladder::MAX_RENDITIONS {
                    return Err(Error::InvalidOption(format!(
                        "renditions={n}: at most {}",
                        crate::ladder::MAX_RENDITIONS
                    )));
                }
                self.opts.renditions = n;
            }
            _ => {
                return Err(Error::InvalidOption(format!(
                    "unknown option '{key}' (known: model, feature, log_path, log_fmt, pool, \
                     n_threads, n_subsample, backend, libvmaf_isa, segment, input_start, \
                     title_frames, renditions)"
                )))
            }
        }
        Ok(())
    }

    /// Validates everything for a stream format and loads the models; checks the log path can be
    /// written. Allocates no frame buffers (FFmpeg builds a probe graph that sees no frame).
    pub fn configure(&mut self, format: PictureFormat) -> Result<()> {
        let mut cfg = EngineConfig::new(format);
        cfg.models = parse_model_option(&self.opts.model)?;
        check_models(&cfg.models)?;
        cfg.features = parse_feature_option(&self.opts.feature)?;
        cfg.n_threads = self.opts.n_threads;
        cfg.n_subsample = self.opts.n_subsample;
        cfg.pool = self.opts.pool;
        cfg.libvmaf_isa = self.opts.libvmaf_isa;
        cfg.backend = self.opts.backend;
        if self.opts.renditions > 1 {
            return self.configure_ladder(cfg);
        }
        if let Some(p) = &self.opts.log_path {
            check_writable(p)?;
        }
        let mut engine = Engine::new(cfg)?;
        self.segment = match self.opts.segment {
            None if self.opts.input_start != 0 || self.opts.title_frames.is_some() => {
                return Err(Error::InvalidOption(
                    "input_start and title_frames describe a segment: use them with segment=A:B"
                        .into(),
                ))
            }
            None => None,
            Some((start, end)) => {
                if self.opts.log_path.is_none() {
                    return Err(Error::InvalidOption(
                        "segment writes a partial log: give its path with log_path".into(),
                    ));
                }
                if self.opts.input_start > start {
                    return Err(Error::InvalidOption(format!(
                        "input_start={}: the input starts after the segment's first frame {start}",
                        self.opts.input_start
                    )));
                }
                let context_start = start
                    .saturating_sub(engine.context_frames())
                    .max(self.opts.input_start);
                engine.begin_segment(context_start)?;
                Some(SegmentState {
                    start,
                    end,
                    context_start,
                    next: self.opts.input_start,
                })
            }
        };
        self.engine = Some(engine);
        self.finished = false;
        Ok(())
    }

    /// `configure` of a ladder session (`renditions` above 1).
    fn configure_ladder(&mut self, cfg: EngineConfig) -> Result<()> {
        let n = self.opts.renditions;
        if self.opts.segment.is_some() {
            return Err(Error::InvalidOption(format!(
                "segment scores one distorted input, not renditions={n}"
            )));
        }
        for r in 0..n {
            if let Some(p) = self.rendition_log(r)? {
                check_writable(&p)?;
            }
        }
        self.ladder = Some(Ladder::new(cfg, n)?);
        self.finished = false;
        Ok(())
    }

    /// Rendition `r`'s log path (`log_path` with `%v` replaced by `r`), if `log_path` is set.
    fn rendition_log(&self, r: usize) -> Result<Option<PathBuf>> {
        let n = self.opts.renditions;
        self.opts
            .log_path
            .as_deref()
            .map(|p| crate::ladder::rendition_log_path(p, "log_path=", n, r))
            .transpose()
    }

    fn engine(&mut self) -> Result<&mut Engine> {
        if self.ladder.is_some() {
            return Err(Error::State(format!(
                "renditions={}: pairs go through send_ladder and receive_rendition",
                self.opts.renditions
            )));
        }
        self.engine
            .as_mut()
            .ok_or_else(|| Error::State("not configured".into()))
    }

    /// The engine, once configured (a ladder session's first rendition's).
    pub fn engine_ref(&self) -> Option<&Engine> {
        match &self.ladder {
            Some(l) => Some(l.engine(0)),
            None => self.engine.as_ref(),
        }
    }

    fn ladder_mut(&mut self) -> Result<&mut Ladder> {
        self.ladder.as_mut().ok_or_else(|| {
            Error::State("send_ladder and receive_rendition need renditions above 1".into())
        })
    }

    /// Scores one reference frame against the same frame of every rendition (`renditions`
    /// above 1).
    pub fn send_ladder(
        &mut self,
        reference: &Picture<'_>,
        distorted: &[Picture<'_>],
    ) -> Result<()> {
        self.ladder_mut()?.send(reference, distorted)
    }

    /// Rendition `r`'s next frame's scores, reusing `out`'s buffers.
    pub fn receive_rendition(&mut self, r: usize, out: &mut FrameScores) -> Result<bool> {
        let l = self.ladder_mut()?;
        if r >= l.renditions() {
            return Err(Error::InvalidOption(format!(
                "rendition {r} of a ladder of {}",
                l.renditions()
            )));
        }
        Ok(l.receive_into(r, out))
    }

    /// Sets the CUDA context and stream CUDA frames live in (borrowed: the caller keeps them alive
    /// until the session is dropped or finished). Nothing is allocated on the GPU here.
    pub fn set_cuda(
        &mut self,
        ctx: *mut std::ffi::c_void,
        stream: *mut std::ffi::c_void,
    ) -> Result<()> {
        if ctx.is_null() {
            return Err(Error::InvalidOption("CUDA context is NULL".into()));
        }
        if self.opts.segment.is_some() {
            return Err(Error::Unsupported(
                "segment scoring runs on the CPU: download both inputs first (e.g. \
                 hwdownload,format=nv12), or score CUDA frames without segment"
                    .into(),
            ));
        }
        if self.opts.backend == Backend::Cpu {
            return Err(Error::InvalidOption(
                "backend=cpu but the inputs are CUDA frames: use backend=auto (or cuda), or \
                 download both inputs first (e.g. hwdownload,format=nv12)"
                    .into(),
            ));
        }
        if self.engine_ref().is_some_and(|e| e.frames_sent() > 0) {
            return Err(Error::State(
                "CUDA context changed after the first CUDA frame".into(),
            ));
        }
        self.cuda = Some(CudaHandles {
            ctx: ctx as usize,
            stream: stream as usize,
        });
        Ok(())
    }

    /// Scores one pair of CUDA frames (device luma planes), asynchronously: each frame's release
    /// callback runs once the GPU no longer reads it. `format` and `shift` describe the samples
    /// (`shift` = 16 − bpc for MSB-aligned p010/p012/p016).
    pub fn send_cuda(
        &mut self,
        format: PictureFormat,
        shift: u8,
        reference: CudaFrame,
        distorted: CudaFrame,
    ) -> Result<()> {
        let target = self.cuda_target(format, shift)?;
        match self.engine.as_mut() {
            Some(engine) => engine.send_cuda(target, reference, distorted),
            None => Err(Error::State(
                "renditions above 1: CUDA frames go through send_ladder_cuda".into(),
            )),
        }
    }

    /// Ladder scoring on CUDA frames: one reference frame against the same frame of each
    /// rendition (see [`Ladder::send_cuda`]); releases as in [`Session::send_cuda`].
    pub fn send_ladder_cuda(
        &mut self,
        format: PictureFormat,
        shift: u8,
        reference: CudaFrame,
        distorted: Vec<CudaFrame>,
    ) -> Result<()> {
        let target = self.cuda_target(format, shift)?;
        self.ladder_mut()?.send_cuda(target, reference, distorted)
    }

    /// Where CUDA frames of `format` are scored: the context and stream given by
    /// [`Session::set_cuda`] (none needed for `backend=cpu`, which then refuses the frames).
    fn cuda_target(&self, format: PictureFormat, shift: u8) -> Result<CudaTarget> {
        let engine = self
            .engine_ref()
            .ok_or_else(|| Error::State("not configured".into()))?;
        if format != engine.config().format {
            return Err(Error::Mismatch(format!(
                "CUDA frame is {format}, the stream was configured as {}",
                engine.config().format
            )));
        }
        let cuda = match self.cuda {
            Some(c) => c,
            None if engine.config().backend == Backend::Cpu => CudaHandles { ctx: 0, stream: 0 },
            None => {
                return Err(Error::Cuda(
                    "CUDA frames arrived but no CUDA context was given".into(),
                ))
            }
        };
        Ok(CudaTarget {
            ctx: cuda.ctx as *mut std::ffi::c_void,
            stream: cuda.stream as *mut std::ffi::c_void,
            shift,
        })
    }

    /// Scores one pair.
    /// In segment mode, frames before the context are dropped, context frames only fill the
    /// features' history, and frames past the segment's end are ignored.
    pub fn send(&mut self, reference: &Picture<'_>, distorted: &Picture<'_>) -> Result<()> {
        let Some(seg) = self.segment.as_mut() else {
            return self.engine()?.send(reference, distorted);
        };
        let t = seg.next;
        seg.next += 1;
        let (start, context_start, end) = (seg.start, seg.context_start, seg.end);
        if t < context_start || end.is_some_and(|e| t >= e) {
            Ok(())
        } else if t < start {
            self.engine()?.send_context(reference, distorted)
        } else {
            self.engine()?.send(reference, distorted)
        }
    }

    /// Scores one pair lent until released ([`Engine::send_lent`]: read in place, no copy). A
    /// segment session copies them (its context frames are copied) and releases them at once.
    pub fn send_lent(&mut self, reference: LentPicture, distorted: LentPicture) -> Result<()> {
        if self.segment.is_some() {
            return self.send(reference.picture(), distorted.picture());
        }
        self.engine()?.send_lent(reference, distorted)
    }

    /// Whether the pair sent as frame `index` (0-based, counting every pair sent; a ladder's
    /// reference frames likewise) will get scores from a receive call: not for frames
    /// `n_subsample` skips, nor in a segment session. A caller holding frames until their scores
    /// arrive lets the others go at once, so that it holds at most a few frames whatever
    /// `n_subsample` is.
    pub fn frame_scored(&self, index: u64) -> Result<bool> {
        let engine = self
            .engine_ref()
            .ok_or_else(|| Error::State("frame_scored before configure".into()))?;
        Ok(self.segment.is_none() && engine.scores_frame(index))
    }

    /// The next frame's scores, reusing `out`'s buffers.
    /// A segment session has none (its values go to the partial log).
    pub fn receive_into(&mut self, out: &mut FrameScores) -> Result<bool> {
        let segment = self.segment.is_some();
        let engine = self.engine()?;
        if segment {
            while engine.receive_into(out) {}
            return Ok(false);
        }
        Ok(engine.receive_into(out))
    }

    /// End of stream.
    pub fn flush(&mut self) -> Result<()> {
        if let Some(l) = self.ladder.as_mut() {
            return l.flush();
        }
        self.engine()?.flush()
    }

    /// Releases the GPU side (drains, frees device and pinned memory, unloads kernels, releases
    /// held frames). Idempotent; the session stays usable for its CPU-side results.
    pub fn release_cuda(&mut self) -> Result<()> {
        if let Some(l) = self.ladder.as_mut() {
            return l.release_gpu();
        }
        match self.engine.as_mut() {
            Some(e) => e.release_gpu(),
            None => Ok(()),
        }
    }

    /// Once, after the first CUDA frame: which features run on CUDA and which on the CPU
    /// fallback (for the verbose log).
    pub fn take_placement(&mut self) -> Option<String> {
        match self.ladder.as_mut() {
            // Every rendition has the same configuration, so the same placement.
            Some(l) => l.take_placement(),
            None => self.engine.as_mut().and_then(Engine::take_placement),
        }
    }

    /// Flushes and, if at least one frame was scored, hands each model's "VMAF score" line to
    /// `on_score` (before the log, as libvmaf does, so a failing log write cannot swallow the
    /// score) and writes the log if `log_path` is set. A session that saw no frame does nothing.
    /// Idempotent.
    pub fn finish(&mut self, on_score: &mut dyn FnMut(&str)) -> Result<()> {
        if self.finished {
            return Ok(());
        }
        self.finished = true;
        // CUDA frames reach the engine only when the GPU side drains; no-op without one.
        self.release_cuda()?;
        if self.ladder.is_some() {
            return self.finish_ladder(on_score);
        }
        let Some(engine) = self.engine.as_mut() else {
            return Ok(());
        };
        if engine.frames_sent() == 0 {
            return Ok(());
        }
        engine.flush()?;
        if let Some(seg) = self.segment {
            return self.write_partial_log(seg);
        }
        for i in 0..engine.model_names().len() {
            if let Some(s) = engine.pooled_model_score(i) {
                on_score(&format!("VMAF score: {s:.6}"));
            }
        }
        if let Some(p) = &self.opts.log_path {
            crate::report::write_log_file(engine, self.opts.log_fmt, p)?;
        }
        Ok(())
    }
}

impl Session {
    /// `finish` of a ladder session: every rendition's score lines (named by rendition), then
    /// every rendition's log.
    fn finish_ladder(&mut self, on_score: &mut dyn FnMut(&str)) -> Result<()> {
        let ladder = self.ladder.as_mut().expect("a ladder session");
        if ladder.engine(0).frames_sent() == 0 {
            return Ok(());
        }
        ladder.flush()?;
        let ladder = self.ladder.as_ref().expect("a ladder session");
        for (r, e) in ladder.engines().iter().enumerate() {
            for i in 0..e.model_names().len() {
                if let Some(s) = e.pooled_model_score(i) {
                    on_score(&format!("rendition {r}: VMAF score: {s:.6}"));
                }
            }
        }
        for (r, e) in ladder.engines().iter().enumerate() {
            if let Some(p) = self.rendition_log(r)? {
                crate::report::write_log_file(e, self.opts.log_fmt, &p)?;
            }
        }
        Ok(())
    }

    /// Writes the partial log of a flushed segment session to `log_path`.
    fn write_partial_log(&self, seg: SegmentState) -> Result<()> {
        let engine = self
            .engine
            .as_ref()
            .ok_or_else(|| Error::State("not configured".into()))?;
        if engine.segment_rows().next().is_none() {
            return Err(Error::Unsupported(format!(
                "the input ends at title frame {}, before the segment's first frame {}",
                seg.next, seg.start
            )));
        }
        let f = engine.config().format;
        let o = &self.opts;
        let run = RunConfig {
            width: f.width,
            height: f.height,
            bitdepth: f.bpc,
            pixel_format: f.layout.as_str().to_string(),
            models: vec![o.model.clone()],
            features: (!o.feature.is_empty())
                .then(|| o.feature.clone())
                .into_iter()
                .collect(),
            n_subsample: o.n_subsample,
            pool: o.pool.as_str().to_string(),
            libvmaf_isa: o.libvmaf_isa.to_string(),
        };
        let info = SegmentInfo {
            start: seg.start,
            context_start: seg.context_start,
            title_frames: o.title_frames,
            // The stream ended here: before the segment's end, or with no end given.
            input_ended: seg.end.is_none_or(|e| seg.next < e),
        };
        let part = PartialLog::from_engine(engine, &run, info)?;
        let path = o
            .log_path
            .as_ref()
            .ok_or_else(|| Error::InvalidOption("segment needs log_path".into()))?;
        let write = || -> std::io::Result<()> {
            let mut w = std::io::BufWriter::new(std::fs::File::create(path)?);
            part.write(&mut w)?;
            std::io::Write::flush(&mut w)
        };
        write().map_err(|e| Error::io(format!("cannot write {}", path.display()), e))
    }
}

/// Loads each model once before the engine does, so that a model that cannot be loaded, or that
/// needs a feature we do not compute, fails with the words of libvmaf's FFmpeg filter ("could not
/// load libvmaf model with version: …" / "… with path: …", libvmaf's "could not initialize
/// feature extractor \"…\""): tools look for them in ffmpeg's output. Loading is cheap (a few
/// kilobytes of JSON), so the second load by the engine costs nothing that matters.
fn check_models(specs: &[ModelSpec]) -> Result<()> {
    for spec in specs {
        let loaded = spec.load_set().map_err(|e| {
            let what = match &spec.source {
                ModelSource::Version(v) => format!("version: {v}"),
                ModelSource::Path(p) => format!("path: {}", p.display()),
            };
            Error::Model(format!("could not load libvmaf model with {what} ({e})"))
        })?;
        let models: Vec<&Model> = match &loaded {
            Loaded::Model(m) => vec![m],
            Loaded::Collection(c) => std::iter::once(c.head()).chain(c.members()).collect(),
        };
        for f in models.iter().flat_map(|m| m.features()) {
            crate::feature::find_by_provided(&f.name).map_err(|e| {
                Error::Model(format!(
                    "could not initialize feature extractor \"{}\" ({e})",
                    f.name
                ))
            })?;
        }
    }
    Ok(())
}

/// Fails early (at configuration, before any frame) when a log cannot be created at `path`.
fn check_writable(path: &std::path::Path) -> Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let meta = std::fs::metadata(&dir).map_err(|e| {
        Error::io(
            format!(
                "cannot write log {}: directory {}",
                path.display(),
                dir.display()
            ),
            e,
        )
    })?;
    if !meta.is_dir() {
        return Err(Error::InvalidOption(format!(
            "cannot write log {}: {} is not a directory",
            path.display(),
            dir.display()
        )));
    }
    if path.is_dir() {
        return Err(Error::InvalidOption(format!(
            "cannot write log {}: it is a directory",
            path.display()
        )));
    }
    let c = std::ffi::CString::new(dir.as_os_str().as_encoded_bytes())
        .map_err(|_| Error::InvalidOption("log path contains a NUL byte".into()))?;
    // SAFETY: `c` is a valid NUL-terminated string for the duration of the call.
    if unsafe { libc::access(c.as_ptr(), libc::W_OK) } != 0 {
        return Err(Error::io(
            format!("cannot write log {}", path.display()),
            std::io::Error::last_os_error(),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::picture::ChromaLayout;

    fn configure_with_model(model: &str) -> String {
        let mut s = Session::new();
        s.set_option("model", model).unwrap();
        let format = PictureFormat {
            width: 64,
            height: 64,
            bpc: 8,
            layout: ChromaLayout::Yuv420,
        };
        s.configure(format).unwrap_err().to_string()
    }

    /// Tools look for libvmaf's words in ffmpeg's output.
    #[test]
    fn model_errors_use_libvmafs_words() {
        let e = configure_with_model("version=vmaf_v9");
        assert!(
            e.contains("could not load libvmaf model with version: vmaf_v9"),
            "{e}"
        );
        let e = configure_with_model("path=/nonexistent/m.json");
        assert!(
            e.contains("could not load libvmaf model with path: /nonexistent/m.json"),
            "{e}"
        );
        let dir = std::env::temp_dir().join(format!("vmaf_rs-session-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("nosuch.json");
        let model = include_str!("model/builtin/vmaf_v0.6.1.json")
            .replace("VMAF_integer_feature_adm2_score", "nosuch_feature");
        std::fs::write(&path, model).unwrap();
        let e = configure_with_model(&format!("path={}", path.display()));
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(
            e.contains("could not initialize feature extractor \"nosuch_feature\""),
            "{e}"
        );
    }
}
