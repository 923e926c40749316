//! Turns an engine's results into a libvmaf-shaped log (see [`crate::output`]).

use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::output::{write_log as write_fmt, LogData, LogFormat};
use std::io::Write;
use std::path::Path;

/// How a log is written beyond its format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LogOptions {
    /// Write `fps` as 0: the one measured field, so that a log depends on its inputs only (two
    /// runs, or a merge of segments and a single run, give byte-identical files).
    pub reproducible: bool,
}

/// Writes the log of every scored frame and the pooled metrics in `fmt` to `w`.
pub fn write_log(engine: &Engine, fmt: LogFormat, w: &mut dyn Write) -> std::io::Result<()> {
    write_log_with(engine, fmt, LogOptions::default(), w)
}

/// [`write_log`] with options.
pub fn write_log_with(
    engine: &Engine,
    fmt: LogFormat,
    opts: LogOptions,
    w: &mut dyn Write,
) -> std::io::Result<()> {
    let frames: Vec<(u64, &[f64])> = engine.scored_frames().collect();
    let pooled = engine.pooled();
    let aggregates = engine.aggregates();
    let secs = engine.elapsed_seconds();
    let fps = if opts.reproducible {
        0.0
    } else if secs > 0.0 {
        engine.frames_sent() as f64 / secs
    } else {
        0.0
    };
    let version = concat!("vmaf_rs-", env!("CARGO_PKG_VERSION"));
    let data = LogData {
        version,
        fps,
        columns: engine.columns(),
        frames: &frames,
        pooled: &pooled.columns,
        aggregates: &aggregates,
        params: crate::output::LogParams {
            n_subsample: engine.config().n_subsample,
            frames_sent: engine.frames_sent(),
            models: engine.model_names().iter().map(|s| s.to_string()).collect(),
            width: engine.config().format.width,
            height: engine.config().format.height,
        },
        libvmaf_isa: Some((engine.libvmaf_isa(), engine.config().libvmaf_isa)),
    };
    write_fmt(w, fmt, &data)
}

/// The verbose line saying which libvmaf kernel family an engine reproduces, and why.
pub fn isa_line(engine: &Engine) -> String {
    let got = engine.libvmaf_isa();
    let why = match engine.config().libvmaf_isa {
        crate::fidelity::LibvmafIsaMode::Auto => {
            format!("auto: libvmaf's kernels on this host, {}", got.hosts())
        }
        crate::fidelity::LibvmafIsaMode::Fixed(_) => "requested".to_string(),
    };
    format!(
        "libvmaf_isa={got} ({why}), kernels={} ({})",
        crate::cpu::cpu_level().name(),
        if crate::cpu::cpu_level_lowered() {
            "lowered by VMAF_RS_CPU"
        } else {
            "this CPU's SIMD level"
        }
    )
}

/// Writes the log to a file (created or truncated).
pub fn write_log_file(engine: &Engine, fmt: LogFormat, path: &Path) -> Result<()> {
    let ctx = |e| Error::io(format!("cannot write log {}", path.display()), e);
    let f = std::fs::File::create(path).map_err(ctx)?;
    let mut w = std::io::BufWriter::new(f);
    write_log(engine, fmt, &mut w).map_err(ctx)?;
    w.flush().map_err(ctx)
}
