//! The engine's hot path allocates nothing per frame: after warm-up, scoring more frames only
//! costs the amortised growth of the per-frame history (a handful of reallocations).

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};
use vmaf_rs::{
    ChromaLayout, Engine, EngineConfig, FrameScores, Ladder, LentPicture, Picture, PictureFormat,
    Plane,
};

struct Counting;
static ALLOCS: AtomicUsize = AtomicUsize::new(0);

// SAFETY: forwards to the system allocator, only counting calls.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, n: usize) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: same contract as the caller's.
        unsafe { System.realloc(p, l, n) }
    }
}

#[global_allocator]
static A: Counting = Counting;

/// The count is global: the tests take turns (another test's allocations would count too).
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn frames(n: usize, w: usize, h: usize) -> Vec<(Vec<u8>, Vec<u8>)> {
    (0..n)
        .map(|f| {
            let r: Vec<u8> = (0..w * h)
                .map(|i| ((i % w) * 3 + (i / w) + f * 5) as u8)
                .collect();
            let d: Vec<u8> = r
                .iter()
                .enumerate()
                .map(|(i, v)| v.wrapping_add(((i * 7919 + f) % 13) as u8))
                .collect();
            (r, d)
        })
        .collect()
}

/// A lent picture's release that has nothing to give back (the test's frames outlive the engine).
unsafe extern "C" fn keep(_: *mut std::ffi::c_void) {}

/// Allocations over 256 frames after warm-up, the pictures sent borrowed (copied) or, with
/// `lent`, lent with a C callback as FFmpeg's filter lends them (read in place).
fn allocations_for(threads: usize, lent: bool) -> usize {
    let (w, h) = (96, 64);
    let fmt = PictureFormat {
        width: w,
        height: h,
        bpc: 8,
        layout: ChromaLayout::Yuv420,
    };
    let mut cfg = EngineConfig::new(fmt);
    cfg.n_threads = threads;
    let mut e = Engine::new(cfg).unwrap();
    let data = frames(8, w, h);
    let mut out = FrameScores::default();
    let mut send = |e: &mut Engine, i: usize| {
        let (r, d) = &data[i % data.len()];
        let pr = Picture::new(fmt, Plane::new_u8(r, w, h, w).unwrap()).unwrap();
        let pd = Picture::new(fmt, Plane::new_u8(d, w, h, w).unwrap()).unwrap();
        if lent {
            // SAFETY: `data` outlives every lent picture (the flush below releases them all);
            // nothing writes it; `keep` does nothing.
            let (lr, ld) = unsafe {
                (
                    LentPicture::with_callback(pr, keep, std::ptr::null_mut()),
                    LentPicture::with_callback(pd, keep, std::ptr::null_mut()),
                )
            };
            e.send_lent(lr, ld).unwrap();
        } else {
            e.send(&pr, &pd).unwrap();
        }
        while e.receive_into(&mut out) {}
    };
    for i in 0..16 {
        send(&mut e, i);
    }
    let before = ALLOCS.load(Ordering::Relaxed);
    for i in 16..16 + 256 {
        send(&mut e, i);
    }
    let n = ALLOCS.load(Ordering::Relaxed) - before;
    e.flush().unwrap();
    n
}

#[test]
fn hot_path_does_not_allocate_per_frame() {
    let _turn = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    // 256 frames: only the two history vectors doubling (≈ 2·log2 growth) may allocate.
    for lent in [false, true] {
        let how = if lent { "lent" } else { "borrowed" };
        let single = allocations_for(0, lent);
        assert!(
            single <= 16,
            "{single} allocations over 256 frames (single thread, {how})"
        );
        let multi = allocations_for(2, lent);
        assert!(
            multi <= 16,
            "{multi} allocations over 256 frames (2 threads, {how})"
        );
        eprintln!(
            "allocations over 256 frames, {how}: {single} (n_threads=0), {multi} (n_threads=2)"
        );
    }
}

/// Allocations of a ladder of 3 renditions (the default model: ADM's shared reference side,
/// motion's shared values) over 256 frames after warm-up.
fn ladder_allocations_for(threads: usize) -> usize {
    let (w, h) = (96, 64);
    let fmt = PictureFormat {
        width: w,
        height: h,
        bpc: 8,
        layout: ChromaLayout::Yuv420,
    };
    let mut cfg = EngineConfig::new(fmt);
    cfg.n_threads = threads;
    let mut l = Ladder::new(cfg, 3).unwrap();
    let data = frames(8, w, h);
    let mut out = FrameScores::default();
    let mut send = |l: &mut Ladder, i: usize| {
        fn pic(v: &[u8], fmt: PictureFormat) -> Picture<'_> {
            let (w, h) = (fmt.width, fmt.height);
            Picture::new(fmt, Plane::new_u8(v, w, h, w).unwrap()).unwrap()
        }
        let (r, d) = &data[i % data.len()];
        let (_, d2) = &data[(i + 3) % data.len()];
        let pr = pic(r, fmt);
        let ds = [pic(d, fmt), pic(d2, fmt), pic(r, fmt)];
        l.send(&pr, &ds).unwrap();
        for k in 0..3 {
            while l.receive_into(k, &mut out) {}
        }
    };
    for i in 0..16 {
        send(&mut l, i);
    }
    let before = ALLOCS.load(Ordering::Relaxed);
    for i in 16..16 + 256 {
        send(&mut l, i);
    }
    ALLOCS.load(Ordering::Relaxed) - before
}

#[test]
fn ladder_does_not_allocate_per_frame() {
    let _turn = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    // Three engines' history vectors doubling, as above; the pooled references, values and
    // shared reference-side states are reused.
    // 2 threads for 3 renditions: each engine on a worker thread of its own.
    for threads in [0, 2, 6] {
        let n = ladder_allocations_for(threads);
        assert!(
            n <= 48,
            "{n} allocations over 256 ladder frames (n_threads={threads})"
        );
        eprintln!("ladder allocations over 256 frames: {n} (n_threads={threads})");
    }
}
