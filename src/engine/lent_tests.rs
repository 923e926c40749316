//! Lent pictures ([`Engine::send_lent`]): read in place, they score exactly as copied ones, and
//! each is released exactly once, on the calling thread: while the engine still reads it, never;
//! at once when it is copied (samples stored shifted, interleaved chroma a feature reads) or no
//! job reads it; and by the flush at the latest.

use super::*;
use crate::model::FeatureSpec;
use crate::picture::{Chroma, ChromaLayout, LentPicture, Plane};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread::ThreadId;

const W: usize = 72;
const H: usize = 40;
/// Row pitch of the test planes, in samples: wider than the picture, so strides are honoured.
const PITCH: usize = 80;
const FRAMES: usize = 12;

/// Counts its drop (the picture's release) and records whether it ran on the thread that made
/// it (the engine's caller).
struct Token {
    released: Arc<AtomicUsize>,
    caller: ThreadId,
    wrong_thread: Arc<AtomicUsize>,
}

/// The releases of one run: how many ran, and how many on another thread than their maker's.
#[derive(Default)]
struct Releases {
    released: Arc<AtomicUsize>,
    wrong_thread: Arc<AtomicUsize>,
}

impl Releases {
    /// A release for one lent picture, made on the engine's caller's thread.
    fn token(&self) -> Box<dyn Send + Sync> {
        Box::new(Token {
            released: Arc::clone(&self.released),
            caller: std::thread::current().id(),
            wrong_thread: Arc::clone(&self.wrong_thread),
        })
    }

    fn released(&self) -> usize {
        self.released.load(Ordering::SeqCst)
    }
}

impl Drop for Token {
    fn drop(&mut self) {
        self.released.fetch_add(1, Ordering::SeqCst);
        if std::thread::current().id() != self.caller {
            self.wrong_thread.fetch_add(1, Ordering::SeqCst);
        }
    }
}

/// Samples of one picture: luma and planar Cb, Cr at `PITCH` samples a row (or one interleaved
/// CbCr plane when `interleaved`), stored `shift` bits up.
struct Frame {
    luma: Vec<u16>,
    cb: Vec<u16>,
    cr: Vec<u16>,
    cbcr: Vec<u16>,
}

/// Frame `f` of the reference (`noise` 0) or the distorted stream: textured, moving, chroma
/// differing, values below 2^10.
fn frame(f: usize, noise: usize, shift: u8) -> Frame {
    let v = |x: usize, y: usize, k: usize| {
        let base = (x * 7 + y * 13 + f * 11 + k * 101) % 1000;
        let n = noise * ((x * 7919 + y * 104729 + f * 31 + k) % 9);
        (((base + n) % 1021) as u16) << shift
    };
    let plane = |w: usize, h: usize, k: usize| {
        let mut p = vec![0u16; PITCH * h];
        for y in 0..h {
            for x in 0..w {
                p[y * PITCH + x] = v(x, y, k);
            }
        }
        p
    };
    let (cw, ch) = (W / 2, H / 2);
    let (cb, cr) = (plane(cw, ch, 1), plane(cw, ch, 2));
    let mut cbcr = vec![0u16; 2 * PITCH * ch];
    for y in 0..ch {
        for x in 0..cw {
            cbcr[y * 2 * PITCH + 2 * x] = cb[y * PITCH + x];
            cbcr[y * 2 * PITCH + 2 * x + 1] = cr[y * PITCH + x];
        }
    }
    Frame {
        luma: plane(W, H, 0),
        cb,
        cr,
        cbcr,
    }
}

fn picture<'a>(format: PictureFormat, fr: &'a Frame, shift: u8, interleaved: bool) -> Picture<'a> {
    let (cw, ch) = (W / 2, H / 2);
    let luma = Plane::new_u16(&fr.luma, W, H, PITCH).unwrap();
    let chroma = if interleaved {
        Chroma::Interleaved(Plane::new_u16(&fr.cbcr, 2 * cw, ch, 2 * PITCH).unwrap())
    } else {
        Chroma::Planar(
            Plane::new_u16(&fr.cb, cw, ch, PITCH).unwrap(),
            Plane::new_u16(&fr.cr, cw, ch, PITCH).unwrap(),
        )
    };
    Picture::with_shift(format, luma, shift)
        .unwrap()
        .with_chroma(chroma)
        .unwrap()
}

/// What a run of [`run`] saw.
struct Outcome {
    /// Every frame's scores, as bits.
    scores: Vec<(u64, Vec<u64>)>,
    /// Releases counted right after each send.
    released_after_send: Vec<usize>,
    /// Releases after the flush, and after the engine was dropped.
    released_after_flush: usize,
    released_at_end: usize,
    wrong_thread: usize,
}

/// Scores `FRAMES` 10-bit 4:2:0 frames with psnr (reads chroma) beside VMAF (motion reads
/// the previous references), sending them lent (`lent`) or borrowed.
fn run(threads: usize, n_subsample: u32, shift: u8, interleaved: bool, lent: bool) -> Outcome {
    let format = PictureFormat {
        width: W,
        height: H,
        bpc: 10,
        layout: ChromaLayout::Yuv420,
    };
    let mut cfg = EngineConfig::new(format);
    cfg.features = vec![FeatureSpec {
        name: "psnr".into(),
        opts: Vec::new(),
    }];
    cfg.n_threads = threads;
    cfg.n_subsample = n_subsample;
    let mut engine = Engine::new(cfg).unwrap();
    // Every frame's samples live to the end of the run: a lent picture's must outlive its
    // release, which may come from the flush.
    let frames: Vec<(Frame, Frame)> = (0..FRAMES)
        .map(|f| (frame(f, 0, shift), frame(f, 1, shift)))
        .collect();
    let rel = Releases::default();
    let token = || rel.token();
    let mut out = Outcome {
        scores: Vec::new(),
        released_after_send: Vec::new(),
        released_after_flush: 0,
        released_at_end: 0,
        wrong_thread: 0,
    };
    let take = |engine: &mut Engine, out: &mut Outcome| {
        while let Some(s) = engine.receive() {
            out.scores
                .push((s.index, s.values.iter().map(|v| v.to_bits()).collect()));
        }
    };
    for (r, d) in &frames {
        let (pr, pd) = (
            picture(format, r, shift, interleaved),
            picture(format, d, shift, interleaved),
        );
        if lent {
            // SAFETY: `frames` outlives the engine, which drops every lent picture (the
            // tokens) at the latest when it is dropped below; nothing writes the samples.
            let (lr, ld) =
                unsafe { (LentPicture::new(pr, token()), LentPicture::new(pd, token())) };
            engine.send_lent(lr, ld).unwrap();
        } else {
            engine.send(&pr, &pd).unwrap();
        }
        out.released_after_send.push(rel.released());
        take(&mut engine, &mut out);
    }
    engine.flush().unwrap();
    take(&mut engine, &mut out);
    out.released_after_flush = rel.released();
    drop(engine);
    out.released_at_end = rel.released();
    out.wrong_thread = rel.wrong_thread.load(Ordering::SeqCst);
    out
}

#[test]
fn lent_pictures_score_as_copies_and_are_released_once() {
    for threads in [1, 3] {
        for n_subsample in [1, 3] {
            let copied = run(threads, n_subsample, 0, false, false);
            let lent = run(threads, n_subsample, 0, false, true);
            let what = format!("{threads} threads, n_subsample {n_subsample}");
            assert!(!copied.scores.is_empty(), "{what}");
            assert_eq!(lent.scores, copied.scores, "{what}: lent scores differ");
            // Read in place: the engine holds some of them after the sends...
            let held = 2 * FRAMES - lent.released_after_send[FRAMES - 1];
            assert!(
                held >= 2,
                "{what}: only {held} pictures held before the flush"
            );
            // ...and gives every one back, exactly once, by the flush, on the caller's thread.
            assert_eq!(lent.released_after_flush, 2 * FRAMES, "{what}");
            assert_eq!(lent.released_at_end, 2 * FRAMES, "{what}");
            assert_eq!(lent.wrong_thread, 0, "{what}: released on a worker thread");
        }
    }
}

#[test]
fn lent_pictures_that_need_converting_are_copied_and_released_at_once() {
    // Samples stored 6 bits up (p010), and interleaved chroma that psnr reads: copied.
    for (shift, interleaved) in [(6, false), (0, true)] {
        let want = run(2, 1, 0, false, false);
        let lent = run(2, 1, shift, interleaved, true);
        let what = format!("shift {shift}, interleaved {interleaved}");
        assert_eq!(lent.scores, want.scores, "{what}: scores differ");
        let expect: Vec<usize> = (1..=FRAMES).map(|f| 2 * f).collect();
        assert_eq!(
            lent.released_after_send, expect,
            "{what}: not released at once"
        );
        assert_eq!(lent.wrong_thread, 0, "{what}");
    }
}

#[test]
fn lent_pictures_are_released_on_error_too() {
    let run_err = |shift: u8| {
        let format = PictureFormat {
            width: W,
            height: H,
            bpc: 10,
            layout: ChromaLayout::Yuv420,
        };
        let mut engine = Engine::new(EngineConfig::new(format)).unwrap();
        let (r, d) = (frame(0, 0, shift), frame(0, 1, shift));
        let rel = Releases::default();
        let token = || rel.token();
        // A distorted picture of another format: refused, both released.
        let other = PictureFormat { bpc: 12, ..format };
        let (pr, pd) = (
            picture(format, &r, shift, false),
            picture(other, &d, shift, false),
        );
        // SAFETY: `r` and `d` outlive the engine; nothing writes them.
        let (lr, ld) = unsafe { (LentPicture::new(pr, token()), LentPicture::new(pd, token())) };
        assert!(engine.send_lent(lr, ld).is_err());
        assert_eq!(rel.released(), 2);
        // After a flush, refused and released likewise.
        engine.flush().unwrap();
        let pd = picture(format, &d, shift, false);
        let pr = picture(format, &r, shift, false);
        // SAFETY: as above.
        let (lr, ld) = unsafe { (LentPicture::new(pr, token()), LentPicture::new(pd, token())) };
        assert!(engine.send_lent(lr, ld).is_err());
        assert_eq!(rel.released(), 4);
    };
    run_err(0);
}
