//! Thin RAII layer over the CUDA driver API (`cudarc::driver::sys`): driver probe, a push/pop
//! guard for a *borrowed* context, device and pinned host buffers, events, the kernel module.
//!
//! Nothing here creates, retains or destroys a context: the context and stream are FFmpeg's (or
//! the caller's) and stay theirs. Every function that talks to the driver must run inside a
//! [`CtxGuard`] of the context the resource belongs to.

use crate::error::{Error, Result};
use cudarc::driver::sys;
use std::ffi::c_void;
use std::sync::OnceLock;

/// Converts a driver status into our error, naming the call.
pub(crate) fn check(res: sys::CUresult, what: &str) -> Result<()> {
    if res == sys::CUresult::CUDA_SUCCESS {
        return Ok(());
    }
    let mut name: *const std::ffi::c_char = std::ptr::null();
    // SAFETY: cuGetErrorName writes a pointer to a static string (or leaves it untouched on an
    // unknown code); we pass a valid out-pointer.
    unsafe { sys::cuGetErrorName(res, &mut name) };
    let name = if name.is_null() {
        format!("{res:?}")
    } else {
        // SAFETY: the driver returned a NUL-terminated static string.
        unsafe { std::ffi::CStr::from_ptr(name) }
            .to_string_lossy()
            .into_owned()
    };
    Err(Error::Cuda(format!("{what} failed: {name}")))
}

/// Loads libcuda (once) and initialises the driver API. cudarc panics when libcuda is missing, so
/// this probes for the library first and reports its absence as an error.
pub(crate) fn ensure_driver() -> Result<()> {
    static STATE: OnceLock<std::result::Result<(), String>> = OnceLock::new();
    STATE
        .get_or_init(|| {
            // SAFETY: is_culib_present only tries to dlopen the candidate library names.
            if !unsafe { sys::is_culib_present() } {
                return Err(
                    "no CUDA driver (libcuda.so not found; is the NVIDIA driver \
                            installed and on the library path?)"
                        .into(),
                );
            }
            // SAFETY: libcuda is present (checked above); cuInit may be called any number of times.
            let r = unsafe { sys::cuInit(0) };
            check(r, "cuInit").map_err(|e| e.to_string())
        })
        .clone()
        .map_err(Error::Cuda)
}

/// Makes a borrowed context current for the guard's lifetime (cuCtxPushCurrent) and restores the
/// previous one on drop (cuCtxPopCurrent). Never destroys or releases the context.
pub(crate) struct CtxGuard {
    _not_send: std::marker::PhantomData<*mut c_void>,
}

impl CtxGuard {
    /// Pushes `ctx` onto this thread's context stack.
    pub(crate) fn push(ctx: sys::CUcontext) -> Result<Self> {
        // SAFETY: the caller owns a reference on `ctx` for the scorer's lifetime (documented
        // contract of CudaScorer::new); pushing does not take ownership.
        check(unsafe { sys::cuCtxPushCurrent_v2(ctx) }, "cuCtxPushCurrent")?;
        Ok(CtxGuard {
            _not_send: std::marker::PhantomData,
        })
    }
}

impl Drop for CtxGuard {
    fn drop(&mut self) {
        let mut popped: sys::CUcontext = std::ptr::null_mut();
        // SAFETY: pops exactly the context this guard pushed (guards are strictly scoped).
        let _ = unsafe { sys::cuCtxPopCurrent_v2(&mut popped) };
    }
}

/// A device allocation (cuMemAlloc), freed on drop. The owning context must be current when it
/// is dropped, and no queued work may still use it (the scorer synchronises first).
pub(crate) struct DevBuf {
    pub(crate) ptr: sys::CUdeviceptr,
    pub(crate) bytes: usize,
}

impl DevBuf {
    /// Allocates `bytes` (at least 1) of device memory.
    pub(crate) fn new(bytes: usize, what: &str) -> Result<Self> {
        let bytes = bytes.max(1);
        let mut ptr: sys::CUdeviceptr = 0;
        // SAFETY: valid out-pointer; a context is current (caller holds a CtxGuard).
        let r = unsafe { sys::cuMemAlloc_v2(&mut ptr, bytes) };
        if r == sys::CUresult::CUDA_ERROR_OUT_OF_MEMORY {
            return Err(Error::OutOfMemory(format!(
                "CUDA: {bytes} bytes of device memory for {what}"
            )));
        }
        check(r, &format!("cuMemAlloc({bytes} bytes, {what})"))?;
        Ok(DevBuf { ptr, bytes })
    }

    /// Queues a zero fill of the first `bytes` bytes on `stream`.
    pub(crate) fn zero_async(&self, bytes: usize, stream: sys::CUstream) -> Result<()> {
        debug_assert!(bytes <= self.bytes);
        // SAFETY: the range lies inside this allocation; stream belongs to the current context.
        let r = unsafe { sys::cuMemsetD8Async(self.ptr, 0, bytes, stream) };
        check(r, "cuMemsetD8Async")
    }

    /// Queues a copy of `src` into the start of this buffer on `stream`. `src` must stay valid
    /// until the copy is done; callers pass `'static` tables.
    pub(crate) fn upload_async<T: Copy>(
        &self,
        src: &'static [T],
        stream: sys::CUstream,
    ) -> Result<()> {
        let n = std::mem::size_of_val(src);
        assert!(n <= self.bytes, "upload larger than the buffer");
        // SAFETY: `src` is 'static and `n` bytes long; the destination holds `n` bytes.
        let r = unsafe {
            sys::cuMemcpyHtoDAsync_v2(self.ptr, src.as_ptr() as *const c_void, n, stream)
        };
        check(r, "cuMemcpyHtoDAsync")
    }
}

impl DevBuf {
    /// Copies `src` (a table built per configuration, not `'static`) into the start of this
    /// buffer on `stream` and waits for the copy, so `src` may be dropped on return.
    pub(crate) fn upload_now<T: Copy>(&self, src: &[T], stream: sys::CUstream) -> Result<()> {
        let n = std::mem::size_of_val(src);
        assert!(n <= self.bytes, "upload larger than the buffer");
        if n == 0 {
            return Ok(());
        }
        // SAFETY: `src` is `n` bytes long and outlives the copy (synchronised below); the
        // destination holds `n` bytes.
        let r = unsafe {
            sys::cuMemcpyHtoDAsync_v2(self.ptr, src.as_ptr() as *const c_void, n, stream)
        };
        check(r, "cuMemcpyHtoDAsync")?;
        // SAFETY: `stream` belongs to the current context.
        check(
            unsafe { sys::cuStreamSynchronize(stream) },
            "cuStreamSynchronize",
        )
    }
}

impl Drop for DevBuf {
    fn drop(&mut self) {
        // SAFETY: allocated by cuMemAlloc in the current context and no longer used (see type doc).
        let _ = unsafe { sys::cuMemFree_v2(self.ptr) };
    }
}

/// Page-locked host memory (cuMemHostAlloc) holding `len` u64 values, freed on drop.
pub(crate) struct PinnedU64 {
    ptr: *mut u64,
    len: usize,
}

impl PinnedU64 {
    /// Allocates `len` (at least 1) zeroed values.
    pub(crate) fn new(len: usize) -> Result<Self> {
        let len = len.max(1);
        let mut p: *mut c_void = std::ptr::null_mut();
        // SAFETY: valid out-pointer; a context is current.
        let r = unsafe { sys::cuMemHostAlloc(&mut p, len * 8, 0) };
        check(r, "cuMemHostAlloc")?;
        let ptr = p as *mut u64;
        // SAFETY: cuMemHostAlloc returned `len * 8` writable, suitably aligned bytes.
        unsafe { std::ptr::write_bytes(ptr, 0, len) };
        Ok(PinnedU64 { ptr, len })
    }

    /// Reads the values. Only call when no copy into this buffer is pending (after its event).
    pub(crate) fn as_slice(&self) -> &[u64] {
        // SAFETY: `len` initialised values owned by self; no device write is pending (caller).
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }

    /// The values, writable. Only call when no copy into this buffer is pending.
    pub(crate) fn as_mut_slice(&mut self) -> &mut [u64] {
        // SAFETY: `len` initialised values owned by self, borrowed mutably; no device write is
        // pending (caller).
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) }
    }

    /// Queues a copy of `len` values from device memory into this buffer.
    pub(crate) fn download_async(
        &mut self,
        src: sys::CUdeviceptr,
        stream: sys::CUstream,
    ) -> Result<()> {
        // SAFETY: the destination holds `len` values; `src` is a device buffer of at least that
        // size (the scorer's result buffer); the buffer is not read until the event after this.
        check(
            unsafe {
                sys::cuMemcpyDtoHAsync_v2(self.ptr as *mut c_void, src, self.len * 8, stream)
            },
            "cuMemcpyDtoHAsync",
        )
    }
}

impl Drop for PinnedU64 {
    fn drop(&mut self) {
        // SAFETY: allocated by cuMemHostAlloc; no copy into it is pending (the scorer synchronises).
        let _ = unsafe { sys::cuMemFreeHost(self.ptr as *mut c_void) };
    }
}

/// Page-locked host bytes (cuMemHostAlloc), freed on drop: staging for planes a CPU extractor
/// reads from CUDA frames (the per-feature fallback).
pub(crate) struct PinnedBytes {
    ptr: *mut u8,
    len: usize,
}

impl PinnedBytes {
    /// Allocates `len` (at least 1) zeroed bytes.
    pub(crate) fn new(len: usize) -> Result<Self> {
        let len = len.max(1);
        let mut p: *mut c_void = std::ptr::null_mut();
        // SAFETY: valid out-pointer; a context is current.
        let r = unsafe { sys::cuMemHostAlloc(&mut p, len, 0) };
        check(r, "cuMemHostAlloc")?;
        let ptr = p as *mut u8;
        // SAFETY: cuMemHostAlloc returned `len` writable bytes.
        unsafe { std::ptr::write_bytes(ptr, 0, len) };
        Ok(PinnedBytes { ptr, len })
    }

    /// Reads the bytes. Only call when no copy into this buffer is pending (after its event).
    pub(crate) fn as_slice(&self) -> &[u8] {
        // SAFETY: `len` initialised bytes owned by self; no device write is pending (caller).
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }

    /// Queues a copy of a `width_bytes` x `height` device region (rows `src_pitch` apart) into
    /// this buffer at `offset`, rows packed.
    pub(crate) fn download_2d_async(
        &mut self,
        offset: usize,
        src: sys::CUdeviceptr,
        src_pitch: usize,
        width_bytes: usize,
        height: usize,
        stream: sys::CUstream,
    ) -> Result<()> {
        if offset + width_bytes * height > self.len || src_pitch < width_bytes {
            return Err(Error::Internal(format!(
                "staging copy of {width_bytes}x{height} at {offset} into {} bytes",
                self.len
            )));
        }
        // Every field set: the memory-type enums have no zero value, so no zeroed() shortcut.
        let c = sys::CUDA_MEMCPY2D {
            srcXInBytes: 0,
            srcY: 0,
            srcMemoryType: sys::CUmemorytype::CU_MEMORYTYPE_DEVICE,
            srcHost: std::ptr::null(),
            srcDevice: src,
            srcArray: std::ptr::null_mut(),
            srcPitch: src_pitch,
            dstXInBytes: 0,
            dstY: 0,
            dstMemoryType: sys::CUmemorytype::CU_MEMORYTYPE_HOST,
            // SAFETY: offset + width_bytes * height <= len was checked above.
            dstHost: unsafe { self.ptr.add(offset) } as *mut c_void,
            dstDevice: 0,
            dstArray: std::ptr::null_mut(),
            dstPitch: width_bytes,
            WidthInBytes: width_bytes,
            Height: height,
        };
        // SAFETY: the destination region is inside this buffer (checked); the source is a device
        // plane of the caller's frame, readable at this pitch and size (the frame's contract);
        // the buffer is not read until the event recorded after this copy completes.
        check(
            unsafe { sys::cuMemcpy2DAsync_v2(&c, stream) },
            "cuMemcpy2DAsync",
        )
    }
}

impl Drop for PinnedBytes {
    fn drop(&mut self) {
        // SAFETY: allocated by cuMemHostAlloc; no copy into it is pending (the scorer synchronises).
        let _ = unsafe { sys::cuMemFreeHost(self.ptr as *mut c_void) };
    }
}

/// A CUDA event without timing, destroyed on drop.
pub(crate) struct Event(pub(crate) sys::CUevent);

impl Event {
    /// Creates an event (timing disabled: cheapest to record and query).
    pub(crate) fn new() -> Result<Self> {
        let mut e: sys::CUevent = std::ptr::null_mut();
        // SAFETY: valid out-pointer; a context is current.
        let r = unsafe {
            sys::cuEventCreate(&mut e, sys::CUevent_flags::CU_EVENT_DISABLE_TIMING as u32)
        };
        check(r, "cuEventCreate")?;
        Ok(Event(e))
    }

    /// Records the event at the current end of `stream`.
    pub(crate) fn record(&self, stream: sys::CUstream) -> Result<()> {
        // SAFETY: valid event and stream of the current context.
        let r = unsafe { sys::cuEventRecord(self.0, stream) };
        check(r, "cuEventRecord")
    }

    /// Whether the work before the last record is done (non-blocking).
    pub(crate) fn is_done(&self) -> Result<bool> {
        // SAFETY: valid event.
        let r = unsafe { sys::cuEventQuery(self.0) };
        if r == sys::CUresult::CUDA_ERROR_NOT_READY {
            return Ok(false);
        }
        check(r, "cuEventQuery").map(|_| true)
    }

    /// Blocks until the work before the last record is done.
    pub(crate) fn wait(&self) -> Result<()> {
        // SAFETY: valid event.
        let r = unsafe { sys::cuEventSynchronize(self.0) };
        check(r, "cuEventSynchronize")
    }
}

impl Drop for Event {
    fn drop(&mut self) {
        // SAFETY: created by cuEventCreate; destroying a pending event is allowed by the driver.
        let _ = unsafe { sys::cuEventDestroy_v2(self.0) };
    }
}

/// A stream of our own in the current context, non-blocking (never implicitly ordered with the
/// legacy default stream, so our kernels do not serialise with a producer's work there);
/// destroyed on drop (the driver lets queued work finish first).
pub(crate) struct Stream(pub(crate) sys::CUstream);

impl Stream {
    /// Creates a non-blocking stream in the current context.
    pub(crate) fn new() -> Result<Self> {
        let mut s: sys::CUstream = std::ptr::null_mut();
        // SAFETY: valid out-pointer; a context is current.
        let r = unsafe {
            sys::cuStreamCreate(&mut s, sys::CUstream_flags::CU_STREAM_NON_BLOCKING as u32)
        };
        check(r, "cuStreamCreate")?;
        Ok(Stream(s))
    }

    /// Blocks until the work queued on this stream is done.
    pub(crate) fn synchronize(&self) -> Result<()> {
        // SAFETY: valid stream of the current context.
        let r = unsafe { sys::cuStreamSynchronize(self.0) };
        check(r, "cuStreamSynchronize")
    }

    /// Makes work queued on this stream from now on wait for `event`'s last record.
    pub(crate) fn wait_event(&self, event: &Event) -> Result<()> {
        // SAFETY: valid stream and event of the current context.
        let r = unsafe { sys::cuStreamWaitEvent(self.0, event.0, 0) };
        check(r, "cuStreamWaitEvent")
    }
}

impl Drop for Stream {
    fn drop(&mut self) {
        // SAFETY: created by cuStreamCreate in the context current at drop (the owners drop it
        // inside their context guard).
        let _ = unsafe { sys::cuStreamDestroy_v2(self.0) };
    }
}

/// The fatbin built by build.rs, 16-byte aligned as cuModuleLoadData expects.
#[repr(C, align(16))]
struct Aligned<B: ?Sized>(B);
static FATBIN: &Aligned<[u8]> = &Aligned(*include_bytes!(concat!(
    env!("OUT_DIR"),
    "/vmaf_rs_kernels.fatbin"
)));

/// The loaded kernel module, unloaded on drop (its context must be current then).
pub(crate) struct Module(sys::CUmodule);

impl Module {
    /// Loads the embedded fatbin (the driver picks the SASS for this GPU or JIT-compiles PTX).
    pub(crate) fn load() -> Result<Self> {
        let mut m: sys::CUmodule = std::ptr::null_mut();
        // SAFETY: FATBIN is a complete, aligned fatbin image that lives for the whole program.
        let r = unsafe { sys::cuModuleLoadData(&mut m, FATBIN.0.as_ptr() as *const c_void) };
        check(
            r,
            "cuModuleLoadData (vmaf_rs kernels; a driver for CUDA 13.0 or newer is needed)",
        )?;
        Ok(Module(m))
    }

    /// Looks a kernel up by its `extern "C"` name.
    pub(crate) fn function(&self, name: &'static str) -> Result<sys::CUfunction> {
        let c = std::ffi::CString::new(name).expect("kernel names have no NUL");
        let mut f: sys::CUfunction = std::ptr::null_mut();
        // SAFETY: valid module and NUL-terminated name.
        let r = unsafe { sys::cuModuleGetFunction(&mut f, self.0, c.as_ptr()) };
        check(r, &format!("cuModuleGetFunction({name})"))?;
        Ok(f)
    }
}

impl Drop for Module {
    fn drop(&mut self) {
        kernel_times::report();
        // SAFETY: loaded by cuModuleLoadData in the current context; no launch is pending.
        let _ = unsafe { sys::cuModuleUnload(self.0) };
    }
}

/// Launches `f` with a single by-value parameter struct `args` (the kernels' ABI, see
/// kernels/README.md).
///
/// # Safety
/// `A` must be `#[repr(C)]` with exactly the layout of the kernel's parameter struct, and every
/// device pointer inside it must be valid for what the kernel reads and writes until the launch
/// completes in stream order.
pub(crate) unsafe fn launch<A>(
    f: sys::CUfunction,
    grid: (u32, u32, u32),
    block: u32,
    stream: sys::CUstream,
    args: &A,
    what: &str,
) -> Result<()> {
    if grid.0 == 0 || grid.1 == 0 || grid.2 == 0 {
        return Ok(());
    }
    let mut params = [args as *const A as *mut c_void];
    let timing = kernel_times::start(stream)?;
    // SAFETY: per this function's contract; cuLaunchKernel copies the parameter bytes before it
    // returns, so `args` need not outlive the call.
    let r = unsafe {
        sys::cuLaunchKernel(
            f,
            grid.0,
            grid.1,
            grid.2,
            block,
            1,
            1,
            0,
            stream,
            params.as_mut_ptr(),
            std::ptr::null_mut(),
        )
    };
    check(r, what)?;
    match timing {
        Some(t) => kernel_times::stop(t, stream, what, grid),
        None => Ok(()),
    }
}

/// The diagnostic behind `VMAF_RS_CUDA_KERNEL_TIMES=1`: every launch timed between two timing
/// events and waited for (which serialises the streams, so it measures each kernel alone, not
/// the pipeline), summed per kernel label and grid height and printed to stderr when a scorer's
/// module is unloaded. Off, it costs one cached environment look-up per launch.
pub(crate) mod kernel_times {
    use super::{check, sys, Result};
    use std::collections::BTreeMap;
    use std::sync::{Mutex, OnceLock};

    /// A launch being timed: its start event, destroyed on drop.
    pub(crate) struct Started(sys::CUevent);

    impl Drop for Started {
        fn drop(&mut self) {
            // SAFETY: created by `timed_event`; destroyed only here.
            let _ = unsafe { sys::cuEventDestroy_v2(self.0) };
        }
    }

    type Table = BTreeMap<(String, u32), (u64, f64)>;

    fn on() -> bool {
        static ON: OnceLock<bool> = OnceLock::new();
        *ON.get_or_init(|| std::env::var_os("VMAF_RS_CUDA_KERNEL_TIMES").is_some_and(|v| v == "1"))
    }

    fn table() -> &'static Mutex<Table> {
        static T: OnceLock<Mutex<Table>> = OnceLock::new();
        T.get_or_init(|| Mutex::new(BTreeMap::new()))
    }

    fn timed_event() -> Result<sys::CUevent> {
        let mut e: sys::CUevent = std::ptr::null_mut();
        // SAFETY: valid out-pointer; a context is current (launches run under the scorer's guard).
        let r = unsafe { sys::cuEventCreate(&mut e, sys::CUevent_flags::CU_EVENT_DEFAULT as u32) };
        check(r, "cuEventCreate (kernel times)")?;
        Ok(e)
    }

    /// With the diagnostic on, records a start event on `stream`.
    pub(crate) fn start(stream: sys::CUstream) -> Result<Option<Started>> {
        if !on() {
            return Ok(None);
        }
        let started = Started(timed_event()?);
        // SAFETY: the event was just created in the current context; `stream` belongs to it.
        let r = unsafe { sys::cuEventRecord(started.0, stream) };
        check(r, "cuEventRecord (kernel times)")?;
        Ok(Some(started))
    }

    /// Records the end, waits for it and adds the elapsed time to the kernel's row.
    pub(crate) fn stop(
        s: Started,
        stream: sys::CUstream,
        what: &str,
        grid: (u32, u32, u32),
    ) -> Result<()> {
        let end = Started(timed_event()?);
        let mut ms = 0f32;
        // SAFETY: both events were created in the current context and recorded on `stream`
        // (the end just below); their drops destroy them after this last use.
        let r = unsafe {
            let mut r = sys::cuEventRecord(end.0, stream);
            if r == sys::CUresult::CUDA_SUCCESS {
                r = sys::cuEventSynchronize(end.0);
            }
            if r == sys::CUresult::CUDA_SUCCESS {
                r = sys::cuEventElapsedTime(&mut ms, s.0, end.0);
            }
            r
        };
        check(r, "kernel times")?;
        let mut t = table().lock().unwrap_or_else(|p| p.into_inner());
        let row = t.entry((what.to_string(), grid.1)).or_insert((0, 0.0));
        row.0 += 1;
        row.1 += f64::from(ms);
        Ok(())
    }

    /// Prints and clears the table (stderr), if the diagnostic is on and anything was timed.
    pub(crate) fn report() {
        if !on() {
            return;
        }
        let mut t = table().lock().unwrap_or_else(|p| p.into_inner());
        let total: f64 = t.values().map(|r| r.1).sum();
        for ((what, rows), (n, ms)) in t.iter() {
            eprintln!(
                "vmaf_rs kernel times: {what:<24} grid.y {rows:>5} launches {n:>7} mean {:>9.2} us total {:>9.2} ms ({:>4.1} %)",
                ms * 1e3 / *n as f64,
                ms,
                100.0 * ms / total.max(1e-9)
            );
        }
        t.clear();
    }
}

/// Free and total device memory of the current context's device (cuMemGetInfo).
pub(crate) fn mem_info() -> Result<(usize, usize)> {
    let (mut free, mut total) = (0usize, 0usize);
    // SAFETY: valid out-pointers; a context is current (caller holds a CtxGuard).
    let r = unsafe { sys::cuMemGetInfo_v2(&mut free, &mut total) };
    check(r, "cuMemGetInfo")?;
    Ok((free, total))
}
