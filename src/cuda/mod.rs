//! The CUDA backend: scores CUDA frames (NVDEC output, `hwupload_cuda`) inside a borrowed CUDA
//! context and stream, zero-copy, with per-frame values bit-identical to the CPU extractors.
//!
//! Layout (after candle's CUDA backend): `kernels/*.cu` are compiled by build.rs into one fatbin
//! embedded in the library; [`CudaScorer`] loads it lazily on the first frame, owns its device
//! buffers, launches asynchronously on the given stream and reads results back through pinned
//! memory and events; the CPU then runs temporal stages, models and pooling through
//! [`crate::Engine::push_spatial`]. Without the `cuda` feature the same API exists and every
//! constructor returns [`crate::Error::Cuda`] ("built without CUDA").
//!
//! ```no_run
//! # fn demo(ctx: *mut std::ffi::c_void, stream: *mut std::ffi::c_void,
//! #         engine: &mut vmaf_rs::Engine, frames: Vec<(u64, usize, u64, usize)>)
//! #         -> vmaf_rs::Result<()> {
//! use vmaf_rs::cuda::{CudaFrame, CudaScorer};
//! let mut gpu = CudaScorer::for_engine(ctx, stream, engine, 0)?;
//! let mut row = Vec::new();
//! for (r, rp, d, dp) in frames {
//!     gpu.submit(CudaFrame::new(r, rp), CudaFrame::new(d, dp))?;
//!     while gpu.poll(&mut row)? {
//!         engine.push_spatial(&row)?;
//!     }
//! }
//! let mut err = Ok(());
//! gpu.drain(&mut |row| if err.is_ok() { err = engine.push_spatial(row) })?;
//! err?;
//! engine.flush()?;
//! # Ok(()) }
//! ```
//!
//! See docs/LIFECYCLE.md for the audited order of allocation and teardown.

/// A borrowed device luma plane and the callback that gives it back.
///
/// `luma` is a `CUdeviceptr` in the scorer's context, `pitch` the row distance in bytes (NVDEC
/// frames are allocated at coded size, e.g. 1088 rows for 1080p: only `width x height` of the
/// stream are read, always through this pointer and pitch). Samples are bytes for 8-bit streams,
/// native-endian `u16` otherwise, value in the low bits unless the scorer was given a shift.
///
/// `release` runs exactly once: when the scorer no longer needs the plane, or when the
/// `CudaFrame` is dropped unused (e.g. `submit` refused it).
pub struct CudaFrame {
    /// Device address of the first luma sample.
    pub luma: u64,
    /// Bytes between rows.
    pub pitch: usize,
    /// Device addresses of the Cb and Cr planes (0: none given). With `interleaved`, `chroma[0]`
    /// is the CbCr plane (nv12, p010) and `chroma[1]` is unused. Read by the CUDA kernels of
    /// features that score chroma (psnr), and downloaded for those without a kernel.
    pub chroma: [u64; 2],
    /// Bytes between rows of the chroma planes.
    pub chroma_pitch: [usize; 2],
    /// Whether chroma is one interleaved CbCr plane.
    pub interleaved: bool,
    /// Called once the GPU no longer reads the plane.
    pub release: Option<Box<dyn FnOnce() + Send>>,
}

impl CudaFrame {
    /// A plane with nothing to release.
    pub fn new(luma: u64, pitch: usize) -> Self {
        CudaFrame {
            luma,
            pitch,
            chroma: [0; 2],
            chroma_pitch: [0; 2],
            interleaved: false,
            release: None,
        }
    }

    /// Adds the chroma planes (see [`CudaFrame::chroma`]).
    pub fn with_chroma(mut self, chroma: [u64; 2], pitch: [usize; 2], interleaved: bool) -> Self {
        self.chroma = chroma;
        self.chroma_pitch = pitch;
        self.interleaved = interleaved;
        self
    }

    /// A plane whose owner is notified (once) when the scorer is done with it.
    pub fn with_release(luma: u64, pitch: usize, release: impl FnOnce() + Send + 'static) -> Self {
        let mut f = CudaFrame::new(luma, pitch);
        f.release = Some(Box::new(release));
        f
    }

    /// `n` handles on these planes (a ladder's reference, read by every rendition's scorer):
    /// the frame's own release runs once, when the last handle is gone (at once for `n` = 0).
    pub fn into_shared(mut self, n: usize) -> Vec<CudaFrame> {
        let last = std::sync::Arc::new(ReleaseWhenLast(std::sync::Mutex::new(self.release.take())));
        (0..n)
            .map(|_| {
                let hold = std::sync::Arc::clone(&last);
                CudaFrame {
                    luma: self.luma,
                    pitch: self.pitch,
                    chroma: self.chroma,
                    chroma_pitch: self.chroma_pitch,
                    interleaved: self.interleaved,
                    release: Some(Box::new(move || drop(hold))),
                }
            })
            .collect()
    }
}

/// A shared frame's release, run when the last handle holding it drops.
struct ReleaseWhenLast(std::sync::Mutex<Option<Box<dyn FnOnce() + Send>>>);

impl Drop for ReleaseWhenLast {
    fn drop(&mut self) {
        let slot = self.0.get_mut().unwrap_or_else(|e| e.into_inner());
        if let Some(r) = slot.take() {
            r();
        }
    }
}

impl std::fmt::Debug for CudaFrame {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CudaFrame")
            .field("luma", &format_args!("{:#x}", self.luma))
            .field("pitch", &self.pitch)
            .field("chroma", &format_args!("{:#x?}", self.chroma))
            .field("interleaved", &self.interleaved)
            .field("release", &self.release.is_some())
            .finish()
    }
}

impl Drop for CudaFrame {
    fn drop(&mut self) {
        if let Some(r) = self.release.take() {
            r();
        }
    }
}

#[cfg(feature = "cuda")]
mod driver;
#[cfg(feature = "cuda")]
mod fallback;
#[cfg(feature = "cuda")]
mod kernels;
#[cfg(feature = "cuda")]
mod plans;
#[cfg(feature = "cuda")]
mod scorer;
mod streams;
#[cfg(feature = "cuda")]
mod upload;
#[cfg(feature = "cuda")]
pub use scorer::{CudaScorer, DEFAULT_DEPTH};
#[cfg(feature = "cuda")]
pub(crate) use upload::HostUpload;

#[cfg(not(feature = "cuda"))]
mod stub;
#[cfg(not(feature = "cuda"))]
pub(crate) use stub::HostUpload;
#[cfg(not(feature = "cuda"))]
pub use stub::{CudaScorer, DEFAULT_DEPTH};

/// Whether this build has CUDA kernels for an extractor (its row in the CUDA column of the
/// registry; without one it runs on the CPU from downloaded planes).
pub(crate) fn has_kernel(def: &crate::feature::ExtractorDef) -> bool {
    #[cfg(feature = "cuda")]
    return plans::find(def).is_some();
    #[cfg(not(feature = "cuda"))]
    {
        let _ = def;
        false
    }
}

/// Whether this build has the CUDA backend (feature `cuda`).
pub const AVAILABLE: bool = cfg!(feature = "cuda");

/// Free and total memory of the device of the current CUDA context (`cuMemGetInfo`), for leak
/// checks. Needs a current context.
#[cfg(feature = "cuda")]
pub fn device_memory_info() -> crate::Result<(usize, usize)> {
    driver::ensure_driver()?;
    driver::mem_info()
}

/// Free and total device memory; always an error without the `cuda` feature.
#[cfg(not(feature = "cuda"))]
pub fn device_memory_info() -> crate::Result<(usize, usize)> {
    Err(stub::unavailable())
}

/// Checks that a CUDA driver can be loaded and initialised (without touching any context).
#[cfg(feature = "cuda")]
pub fn probe_driver() -> crate::Result<()> {
    driver::ensure_driver()
}

/// Checks that a CUDA driver can be used; always an error without the `cuda` feature.
#[cfg(not(feature = "cuda"))]
pub fn probe_driver() -> crate::Result<()> {
    Err(stub::unavailable())
}
