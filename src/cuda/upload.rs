//! Host frames onto the GPU for `backend=cuda` (the CLI's `--backend cuda`, or the filter given
//! software frames with `backend=cuda`): our own reference on the device's primary context, our
//! own stream, and a pool of device frames that the scorer gives back through the frames'
//! release callbacks. The uploaded frames then take exactly the path of FFmpeg's CUDA frames.

use super::driver::{check, ensure_driver, CtxGuard, DevBuf};
use super::CudaFrame;
use crate::error::{Error, Result};
use crate::picture::{Chroma, Picture, Plane, Samples};
use cudarc::driver::sys;
use std::ffi::c_void;
use std::sync::{Arc, Mutex};

/// Device planes of one uploaded frame: luma, then up to two chroma planes, packed rows.
struct DevFrame {
    planes: Vec<(DevBuf, usize)>,
}

/// Frames the scorer has given back, ready for the next upload.
type Pool = Arc<Mutex<Vec<DevFrame>>>;

/// Uploads host pictures into device frames of the primary context of one device.
///
/// Lifecycle: `new` retains the primary context and creates a stream; frames are allocated on
/// demand and reused (the scorer holds at most its pipeline depth plus the motion lag, so the pool
/// stops growing after a few frames); dropping frees the pooled frames, destroys the stream and
/// releases the context. Drop the scorer first: it releases the frames it holds into the pool.
pub(crate) struct HostUpload {
    ctx: sys::CUcontext,
    device: sys::CUdevice,
    stream: sys::CUstream,
    pool: Pool,
}

// SAFETY: the handles are driver handles usable from any thread (every call pushes the context);
// the pool is behind a mutex; `&mut self` methods only.
unsafe impl Send for HostUpload {}

impl HostUpload {
    /// Retains device `ordinal`'s primary context and creates a non-blocking stream in it.
    pub(crate) fn new(ordinal: i32) -> Result<Self> {
        ensure_driver()?;
        let mut device: sys::CUdevice = 0;
        // SAFETY: valid out-pointer; the driver is initialised.
        let r = unsafe { sys::cuDeviceGet(&mut device, ordinal) };
        check(r, "cuDeviceGet").map_err(|e| Error::Cuda(format!("CUDA device {ordinal}: {e}")))?;
        let mut ctx: sys::CUcontext = std::ptr::null_mut();
        // SAFETY: valid out-pointer and device; balanced by cuDevicePrimaryCtxRelease in drop.
        let r = unsafe { sys::cuDevicePrimaryCtxRetain(&mut ctx, device) };
        check(r, "cuDevicePrimaryCtxRetain")?;
        let mut up = HostUpload {
            ctx,
            device,
            stream: std::ptr::null_mut(),
            pool: Arc::default(),
        };
        let _g = CtxGuard::push(ctx)?;
        let flags = sys::CUstream_flags::CU_STREAM_NON_BLOCKING as u32;
        // SAFETY: valid out-pointer; our context is current; destroyed in drop.
        let r = unsafe { sys::cuStreamCreate(&mut up.stream, flags) };
        check(r, "cuStreamCreate")?;
        Ok(up)
    }

    /// The context frames live in.
    pub(crate) fn context(&self) -> *mut c_void {
        self.ctx as *mut c_void
    }

    /// The stream uploads (and the scorer's work) are queued on.
    pub(crate) fn stream(&self) -> *mut c_void {
        self.stream as *mut c_void
    }

    /// Queues the upload of `pic`'s planes (chroma only with `chroma`) into a free device frame;
    /// the returned frame goes back to the pool when the scorer releases it. The host planes may
    /// be reused as soon as this returns (pageable copies are staged by the driver).
    pub(crate) fn upload(&mut self, pic: &Picture<'_>, chroma: bool) -> Result<CudaFrame> {
        let _g = CtxGuard::push(self.ctx)?;
        let mut planes: Vec<Plane<'_>> = vec![pic.luma];
        let mut interleaved = false;
        if chroma {
            match pic.chroma {
                Some(Chroma::Planar(u, v)) => planes.extend([u, v]),
                Some(Chroma::Interleaved(uv)) => {
                    planes.push(uv);
                    interleaved = true;
                }
                None => {
                    return Err(Error::InvalidOption(
                        "a feature reads chroma but the picture has no chroma planes".into(),
                    ))
                }
            }
        }
        let popped = self.pool.lock().map_err(|_| poisoned())?.pop();
        let mut frame = match popped {
            Some(f) if fits(&f, &planes) => f,
            _ => DevFrame {
                planes: planes
                    .iter()
                    .map(|p| Ok((DevBuf::new(row_bytes(p) * p.height, "uploaded frame")?, 0)))
                    .collect::<Result<_>>()?,
            },
        };
        for (p, (buf, pitch)) in planes.iter().zip(frame.planes.iter_mut()) {
            *pitch = row_bytes(p);
            self.copy_plane(p, buf)?;
        }
        let ptr = |i: usize| frame.planes.get(i).map_or(0, |(b, _)| b.ptr);
        let pitch = |i: usize| frame.planes.get(i).map_or(0, |(_, p)| *p);
        let (luma, luma_pitch) = (ptr(0), pitch(0));
        let chroma_ptrs = [ptr(1), ptr(2)];
        let chroma_pitch = [pitch(1), pitch(2)];
        let pool = Arc::clone(&self.pool);
        let f = CudaFrame::with_release(luma, luma_pitch, move || {
            if let Ok(mut p) = pool.lock() {
                p.push(frame);
            }
        });
        Ok(f.with_chroma(chroma_ptrs, chroma_pitch, interleaved))
    }

    fn copy_plane(&self, p: &Plane<'_>, dst: &DevBuf) -> Result<()> {
        let (src, bps) = match p.samples {
            Samples::U8(s) => (s.as_ptr() as *const c_void, 1),
            Samples::U16(s) => (s.as_ptr() as *const c_void, 2),
        };
        let width_bytes = p.width * bps;
        let c = sys::CUDA_MEMCPY2D {
            srcXInBytes: 0,
            srcY: 0,
            srcMemoryType: sys::CUmemorytype::CU_MEMORYTYPE_HOST,
            srcHost: src,
            srcDevice: 0,
            srcArray: std::ptr::null_mut(),
            srcPitch: p.stride * bps,
            dstXInBytes: 0,
            dstY: 0,
            dstMemoryType: sys::CUmemorytype::CU_MEMORYTYPE_DEVICE,
            dstHost: std::ptr::null_mut(),
            dstDevice: dst.ptr,
            dstArray: std::ptr::null_mut(),
            dstPitch: width_bytes,
            WidthInBytes: width_bytes,
            Height: p.height,
        };
        // SAFETY: the source is a checked plane (stride * (height - 1) + width samples, so every
        // row read lies inside it); the destination holds width_bytes * height bytes (sized from
        // this plane or checked by `fits`); from pageable memory the call returns once the source
        // is staged, so the borrow may end; our context is current and the stream is ours.
        check(
            unsafe { sys::cuMemcpy2DAsync_v2(&c, self.stream) },
            "cuMemcpy2DAsync (upload)",
        )
    }
}

fn row_bytes(p: &Plane<'_>) -> usize {
    match p.samples {
        Samples::U8(_) => p.width,
        Samples::U16(_) => 2 * p.width,
    }
}

/// Whether a pooled frame has buffers for these planes (one stream has one layout, so this holds
/// unless the caller changed what it sends).
fn fits(f: &DevFrame, planes: &[Plane<'_>]) -> bool {
    f.planes.len() == planes.len()
        && f.planes
            .iter()
            .zip(planes)
            .all(|((b, _), p)| b.bytes >= row_bytes(p) * p.height)
}

fn poisoned() -> Error {
    Error::Internal("upload pool lock poisoned".into())
}

impl std::fmt::Debug for HostUpload {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HostUpload")
            .field("device", &self.device)
            .finish()
    }
}

impl Drop for HostUpload {
    fn drop(&mut self) {
        if let Ok(_g) = CtxGuard::push(self.ctx) {
            // SAFETY: our stream, in our context; nothing queued on it is still needed (the
            // scorer, dropped before us, waited for its work). Synchronise so pooled frames are
            // no longer read, then free them.
            unsafe {
                let _ = sys::cuStreamSynchronize(self.stream);
            }
            if let Ok(mut p) = self.pool.lock() {
                p.clear();
            }
            if !self.stream.is_null() {
                // SAFETY: created by cuStreamCreate in new, destroyed once.
                let _ = unsafe { sys::cuStreamDestroy_v2(self.stream) };
            }
        }
        // SAFETY: balances the retain in new; after the guard popped the context.
        let _ = unsafe { sys::cuDevicePrimaryCtxRelease_v2(self.device) };
    }
}
