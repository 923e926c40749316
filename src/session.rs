//! FFmpeg-agnostic lifecycle behind the C ABI: options as `key=value` strings (the filter passes
//! its option strings straight through), lazy configuration, send/receive, and the end-of-stream
//! report (log file + "VMAF score" lines).

use crate::cuda::{CudaFrame, CudaScorer};
use crate::engine::{Engine, EngineConfig, FrameScores};
use crate::error::{Error, Result};
use crate::fidelity::LibvmafIsaMode;
use crate::model::{parse_feature_option, parse_model_option, PoolMethod};
use crate::output::LogFormat;
use crate::picture::{Picture, PictureFormat};
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

/// Which backend computes features.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// CUDA for CUDA frames, CPU otherwise.
    Auto,
    /// Always the CPU (CUDA frames are refused).
    Cpu,
    /// Always CUDA (software frames are refused).
    Cuda,
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
        }
    }
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
    finished: bool,
    cuda: Option<CudaHandles>,
    scorer: Option<CudaScorer>,
    row: Vec<f64>,
    /// Where each feature runs, set with the scorer, logged once.
    placement: Option<String>,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("opts", &self.opts)
            .field("engine", &self.engine)
            .field("cuda", &self.cuda)
            .field("scorer", &self.scorer.is_some())
            .finish()
    }
}

impl Default for Session {
    fn default() -> Self {
        Self::new()
    }
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
            finished: false,
            cuda: None,
            scorer: None,
            placement: None,
            row: Vec::new(),
        }
    }

    /// The options.
    pub fn options(&self) -> &SessionOptions {
        &self.opts
    }

    /// Sets one option from its text (libvmaf filter names and grammar); validated at once.
    pub fn set_option(&mut self, key: &str, value: &str) -> Result<()> {
        if self.engine.is_some() {
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
            "backend" => {
                self.opts.backend = match value {
                    "auto" => Backend::Auto,
                    "cpu" => Backend::Cpu,
                    "cuda" => Backend::Cuda,
                    _ => {
                        return Err(Error::InvalidOption(format!(
                            "backend='{value}': expected auto, cpu or cuda"
                        )))
                    }
                }
            }
            _ => {
                return Err(Error::InvalidOption(format!(
                    "unknown option '{key}' (known: model, feature, log_path, log_fmt, pool, \
                     n_threads, n_subsample, backend, libvmaf_isa)"
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
        cfg.features = parse_feature_option(&self.opts.feature)?;
        cfg.n_threads = self.opts.n_threads;
        cfg.n_subsample = self.opts.n_subsample;
        cfg.pool = self.opts.pool;
        cfg.libvmaf_isa = self.opts.libvmaf_isa;
        if let Some(p) = &self.opts.log_path {
            check_writable(p)?;
        }
        self.engine = Some(Engine::new(cfg)?);
        self.finished = false;
        Ok(())
    }

    fn engine(&mut self) -> Result<&mut Engine> {
        self.engine
            .as_mut()
            .ok_or_else(|| Error::State("not configured".into()))
    }

    /// The engine, once configured.
    pub fn engine_ref(&self) -> Option<&Engine> {
        self.engine.as_ref()
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
        if self.scorer.is_some() {
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
        if self.opts.backend == Backend::Cpu {
            return Err(Error::Cuda(
                "backend=cpu was requested but the frames are CUDA frames; download them \
                 (hwdownload,format=…) or use backend=auto"
                    .into(),
            ));
        }
        let cuda = self.cuda.ok_or_else(|| {
            Error::Cuda("CUDA frames arrived but no CUDA context was given".into())
        })?;
        let engine = self
            .engine
            .as_mut()
            .ok_or_else(|| Error::State("not configured".into()))?;
        if format != engine.config().format {
            return Err(Error::Mismatch(format!(
                "CUDA frame is {format}, the stream was configured as {}",
                engine.config().format
            )));
        }
        if self.scorer.is_none() {
            if engine.frames_sent() > 0 {
                return Err(Error::State(
                    "CUDA frames after software frames in one stream".into(),
                ));
            }
            let scorer = CudaScorer::for_engine(
                cuda.ctx as *mut std::ffi::c_void,
                cuda.stream as *mut std::ffi::c_void,
                engine,
                shift,
            )?;
            self.placement = Some(scorer.placement());
            self.scorer = Some(scorer);
        }
        let scorer = self.scorer.as_mut().expect("just made");
        scorer.submit(reference, distorted)?;
        while scorer.poll(&mut self.row)? {
            engine.push_spatial(&self.row)?;
        }
        Ok(())
    }

    /// Waits for the GPU's pending frames and hands their values to the engine.
    fn drain_cuda(&mut self) -> Result<()> {
        if let (Some(scorer), Some(engine)) = (self.scorer.as_mut(), self.engine.as_mut()) {
            let mut err = None;
            scorer.drain(&mut |row| {
                if err.is_none() {
                    if let Err(e) = engine.push_spatial(row) {
                        err = Some(e);
                    }
                }
            })?;
            if let Some(e) = err {
                return Err(e);
            }
        }
        Ok(())
    }

    /// Scores one pair.
    pub fn send(&mut self, reference: &Picture<'_>, distorted: &Picture<'_>) -> Result<()> {
        if self.scorer.is_some() {
            return Err(Error::State(
                "software frames after CUDA frames in one stream".into(),
            ));
        }
        if self.opts.backend == Backend::Cuda {
            return Err(Error::Cuda(
                "backend=cuda was requested but the frames are in host memory; upload them \
                 (hwupload_cuda) or use backend=auto"
                    .into(),
            ));
        }
        self.engine()?.send(reference, distorted)
    }

    /// The next frame's scores, reusing `out`'s buffers.
    pub fn receive_into(&mut self, out: &mut FrameScores) -> Result<bool> {
        Ok(self.engine()?.receive_into(out))
    }

    /// End of stream.
    pub fn flush(&mut self) -> Result<()> {
        self.drain_cuda()?;
        self.engine()?.flush()
    }

    /// Releases the GPU side (drains, frees device and pinned memory, unloads kernels, releases
    /// held frames). Idempotent; the session stays usable for its CPU-side results.
    pub fn release_cuda(&mut self) -> Result<()> {
        let r = self.drain_cuda();
        if let (Some(scorer), Some(engine)) = (self.scorer.take(), self.engine.as_mut()) {
            for (i, t) in scorer.fallback_totals() {
                engine.add_totals(i, &t);
            }
        }
        r
    }

    /// Once, after the first CUDA frame: which features run on CUDA and which on the CPU
    /// fallback (for the verbose log).
    pub fn take_placement(&mut self) -> Option<String> {
        self.placement.take()
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
        let Some(engine) = self.engine.as_mut() else {
            return Ok(());
        };
        if engine.frames_sent() == 0 {
            return Ok(());
        }
        engine.flush()?;
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
