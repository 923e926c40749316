//! FFmpeg-agnostic lifecycle behind the C ABI: options as `key=value` strings (the filter passes
//! its option strings straight through), lazy configuration, send/receive, and the end-of-stream
//! report (log file + "VMAF score" lines).

use crate::engine::{Engine, EngineConfig, FrameScores};
use crate::error::{Error, Result};
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
        }
    }
}

/// A scoring session.
#[derive(Debug)]
pub struct Session {
    opts: SessionOptions,
    engine: Option<Engine>,
    finished: bool,
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
                     n_threads, n_subsample, backend)"
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

    /// Scores one pair.
    pub fn send(&mut self, reference: &Picture<'_>, distorted: &Picture<'_>) -> Result<()> {
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
        self.engine()?.flush()
    }

    /// Flushes, writes the log (if `log_path` is set) and returns the "VMAF score" lines to log,
    /// if at least one frame was scored; a session that saw no frame does nothing. Idempotent.
    pub fn finish(&mut self) -> Result<Vec<String>> {
        if self.finished {
            return Ok(Vec::new());
        }
        self.finished = true;
        let Some(engine) = self.engine.as_mut() else {
            return Ok(Vec::new());
        };
        if engine.frames_sent() == 0 {
            return Ok(Vec::new());
        }
        engine.flush()?;
        let mut lines = Vec::new();
        for i in 0..engine.model_names().len() {
            if let Some(s) = engine.pooled_model_score(i) {
                lines.push(format!("VMAF score: {s:.6}"));
            }
        }
        if let Some(p) = &self.opts.log_path {
            crate::report::write_log_file(engine, self.opts.log_fmt, p)?;
        }
        Ok(lines)
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
