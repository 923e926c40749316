//! The crate's one error type; every variant maps mechanically to a negative errno for the C ABI.

use std::fmt;

/// Result alias used across the crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong in vmaf_rs. Messages name the thing and, where possible, the fix.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// An option key or value is malformed or out of range.
    #[error("invalid option: {0}")]
    InvalidOption(String),
    /// The picture format, size or layout is not supported.
    #[error("unsupported input: {0}")]
    Unsupported(String),
    /// The two inputs (or a frame and the configured format) do not agree.
    #[error("inputs differ: {0}")]
    Mismatch(String),
    /// A model could not be found, parsed, or asks for something we do not compute.
    #[error("model error: {0}")]
    Model(String),
    /// An I/O operation failed (reading inputs, writing logs).
    #[error("{context}: {source}")]
    Io {
        /// What we were doing, naming the path.
        context: String,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// The API was used out of order (e.g. a frame sent after flush).
    #[error("invalid state: {0}")]
    State(String),
    /// The CUDA backend failed or is unavailable.
    #[error("CUDA: {0}")]
    Cuda(String),
    /// Memory could not be allocated.
    #[error("out of memory: {0}")]
    OutOfMemory(String),
    /// A system resource other than memory ran out (threads, under a process limit).
    #[error("out of system resources: {0}")]
    Resource(String),
    /// A bug: an internal invariant was violated (also used for caught panics at the C boundary).
    #[error("internal error: {0}")]
    Internal(String),
}

impl Error {
    /// The negative errno FFmpeg's `AVERROR()` convention expects for this error.
    pub fn to_errno(&self) -> i32 {
        let e = match self {
            Error::InvalidOption(_) | Error::Mismatch(_) | Error::Model(_) => libc::EINVAL,
            Error::Unsupported(_) => libc::ENOSYS,
            Error::Io { source, .. } => source.raw_os_error().unwrap_or(libc::EIO),
            Error::State(_) => libc::EINVAL,
            Error::Cuda(_) => libc::ENODEV,
            Error::OutOfMemory(_) => libc::ENOMEM,
            Error::Resource(_) => libc::EAGAIN,
            Error::Internal(_) => libc::EFAULT,
        };
        -e
    }

    /// Wraps an I/O error with a description of what was being done.
    pub fn io(context: impl fmt::Display, source: std::io::Error) -> Self {
        Error::Io {
            context: context.to_string(),
            source,
        }
    }
}
