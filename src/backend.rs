//! The engine's backend layer: which backend computes each extractor (the registry is keyed by
//! (extractor, backend): every [`ExtractorDef`] is its CPU implementation, `cuda::plans` holds the
//! CUDA column), the backend choice of a stream, and the GPU side of an engine. CUDA frames — the
//! caller's (FFmpeg's hwframes) or host pictures we upload for `backend=cuda` — are scored by the
//! CUDA scorer, whose rows this layer feeds into the engine's shared temporal, model and pooling
//! stages ([`Engine::push_spatial`]), so callers (the session, the CLI) never see the pipeline.

use crate::cuda::{self, CudaFrame, CudaScorer, HostUpload};
use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::feature::{ExtractorDef, REGISTRY};
use crate::picture::Picture;
use std::ffi::c_void;

/// Which backend computes features (the `backend` option).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Backend {
    /// CUDA for CUDA frames, the CPU for host frames.
    #[default]
    Auto,
    /// Always the CPU (CUDA frames are refused).
    Cpu,
    /// Always CUDA: host frames are uploaded to the GPU (device 0's primary context) first.
    Cuda,
}

impl std::str::FromStr for Backend {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "auto" => Ok(Backend::Auto),
            "cpu" => Ok(Backend::Cpu),
            "cuda" => Ok(Backend::Cuda),
            _ => Err(Error::InvalidOption(format!(
                "backend='{s}': expected auto, cpu or cuda"
            ))),
        }
    }
}

/// A backend an extractor can run on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BackendKind {
    /// Host code (scalar or SIMD kernels).
    Cpu,
    /// CUDA kernels.
    Cuda,
}

/// Whether `def` has an implementation on `kind` (on CUDA, an extractor without one runs on the
/// CPU from downloaded planes).
pub fn implements(def: &ExtractorDef, kind: BackendKind) -> bool {
    match kind {
        BackendKind::Cpu => true,
        BackendKind::Cuda => cuda::has_kernel(def),
    }
}

/// Every extractor with the backends it has kernels on, in registry order.
pub fn implementations() -> impl Iterator<Item = (&'static str, Vec<BackendKind>)> {
    REGISTRY.iter().map(|d| {
        let on = [BackendKind::Cpu, BackendKind::Cuda]
            .into_iter()
            .filter(|&k| implements(d, k))
            .collect();
        (d.name, on)
    })
}

/// A borrowed CUDA context and stream that CUDA frames live in (FFmpeg's
/// `AVCUDADeviceContext.cuda_ctx` / `.stream`), and the right shift of their stored samples
/// (`16 - bpc` for MSB-aligned p010/p012/p016; 0 otherwise).
#[derive(Debug, Clone, Copy)]
pub struct CudaTarget {
    /// `CUcontext`, borrowed: the caller keeps it alive until [`Engine::release_gpu`] or the drop.
    pub ctx: *mut c_void,
    /// `CUstream` (NULL: the legacy default stream).
    pub stream: *mut c_void,
    /// Sample shift.
    pub shift: u8,
}

/// The GPU side of an engine, made on the first CUDA frame (or upload).
pub(crate) struct GpuSide {
    // Dropped in this order: the scorer gives every frame back (into the upload pool), then the
    // uploader frees its frames and releases its context.
    scorer: CudaScorer,
    upload: Option<HostUpload>,
    row: Vec<f64>,
    /// Whether the placement line was taken (it is told once).
    placement_told: bool,
}

impl std::fmt::Debug for GpuSide {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GpuSide")
            .field("scorer", &self.scorer)
            .field("uploads", &self.upload.is_some())
            .finish()
    }
}

impl Engine {
    /// Scores one pair of CUDA frames asynchronously (each frame's release callback runs once the
    /// GPU no longer reads it); finished frames' scores become available through
    /// [`Engine::receive`]. Every CUDA frame of a stream must live in `target`'s context.
    pub fn send_cuda(
        &mut self,
        target: CudaTarget,
        reference: CudaFrame,
        distorted: CudaFrame,
    ) -> Result<()> {
        if self.config().backend == Backend::Cpu {
            return Err(Error::Cuda(
                "backend=cpu was requested but the frames are CUDA frames; download them \
                 (hwdownload,format=…) or use backend=auto"
                    .into(),
            ));
        }
        if self.gpu.as_ref().is_some_and(|g| g.upload.is_some()) {
            return Err(Error::State(
                "CUDA frames after uploaded host frames in one stream".into(),
            ));
        }
        self.gpu_side(target, None)?;
        self.submit(reference, distorted)
    }

    /// `backend=cuda` with host pictures: uploads both (chroma only when a feature reads it) and
    /// scores them on the GPU like CUDA frames.
    pub(crate) fn send_uploaded(
        &mut self,
        reference: &Picture<'_>,
        distorted: &Picture<'_>,
    ) -> Result<()> {
        if self.gpu.is_none() {
            if self.frames_sent() > 0 {
                return Err(Error::State(
                    "host frames for backend=cuda after frames scored on the CPU".into(),
                ));
            }
            let up = HostUpload::new(0)?;
            let target = CudaTarget {
                ctx: up.context(),
                stream: up.stream(),
                shift: reference.luma_shift,
            };
            self.gpu_side(target, Some(up))?;
        }
        let chroma = self.reads_chroma();
        let gpu = self.gpu.as_mut().expect("made above");
        let up = gpu
            .upload
            .as_mut()
            .ok_or_else(|| Error::State("host frames after CUDA frames in one stream".into()))?;
        let r = up.upload(reference, chroma)?;
        let d = up.upload(distorted, chroma)?;
        self.submit(r, d)
    }

    /// Makes the GPU side on the first frame.
    fn gpu_side(&mut self, target: CudaTarget, upload: Option<HostUpload>) -> Result<()> {
        if self.gpu.is_some() {
            return Ok(());
        }
        if self.frames_sent() > 0 {
            return Err(Error::State(
                "CUDA frames after software frames in one stream".into(),
            ));
        }
        let scorer = CudaScorer::for_engine(target.ctx, target.stream, self, target.shift)?;
        self.gpu = Some(GpuSide {
            placement_told: false,
            scorer,
            upload,
            row: Vec::new(),
        });
        Ok(())
    }

    /// Queues a pair on the scorer and moves every finished row into the engine.
    fn submit(&mut self, reference: CudaFrame, distorted: CudaFrame) -> Result<()> {
        let gpu = self.gpu.as_mut().expect("GPU side made first");
        gpu.scorer.submit(reference, distorted)?;
        let mut row = std::mem::take(&mut gpu.row);
        let r = self.poll_gpu(&mut row);
        self.gpu.as_mut().expect("still there").row = row;
        r
    }

    fn poll_gpu(&mut self, row: &mut Vec<f64>) -> Result<()> {
        while self.gpu.as_mut().expect("GPU side").scorer.poll(row)? {
            self.push_spatial(row)?;
        }
        Ok(())
    }

    /// Waits for the GPU's pending frames and hands their values to the engine (a no-op without
    /// a GPU side). [`Engine::flush`] does this first.
    pub(crate) fn drain_gpu(&mut self) -> Result<()> {
        let Some(gpu) = self.gpu.as_mut() else {
            return Ok(());
        };
        let mut rows = Vec::new();
        gpu.scorer.drain(&mut |row| rows.push(row.to_vec()))?;
        for row in &rows {
            self.push_spatial(row)?;
        }
        Ok(())
    }

    /// Releases the GPU side: drains it, adds the extractors' totals (CUDA plans and CPU
    /// fallback), frees device and pinned memory, unloads kernels and releases held frames (and
    /// our uploads' context). Idempotent; the engine stays usable for its results. Call it while
    /// the frames' context is still alive (FFmpeg: in the filter's uninit, before the hw device
    /// goes).
    pub fn release_gpu(&mut self) -> Result<()> {
        let r = self.drain_gpu();
        if let Some(gpu) = self.gpu.take() {
            for (i, t) in gpu.scorer.totals() {
                self.add_totals(i, &t);
            }
        }
        r
    }

    /// Once, after the first GPU frame: which features run on CUDA and which on the CPU fallback
    /// (for the verbose log).
    pub fn take_placement(&mut self) -> Option<String> {
        let g = self.gpu.as_mut()?;
        if std::mem::replace(&mut g.placement_told, true) {
            return None;
        }
        Some(g.scorer.placement())
    }

    /// Device memory the GPU side holds, in bytes (0 without one).
    pub fn gpu_device_bytes(&self) -> usize {
        self.gpu.as_ref().map_or(0, |g| g.scorer.device_bytes())
    }
}
