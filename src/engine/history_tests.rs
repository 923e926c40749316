//! The engine's frame history: an extractor that declares `needs_prev_dis` sees the right
//! previous distorted frames (luma and chroma) for any thread count and `n_subsample`, and the
//! engine keeps no distorted history when no extractor asks for it.

use super::*;
use crate::error::Result;
use crate::feature::{Extractor, ExtractorConfig, ExtractorDef, FrameInput};
use crate::picture::{Chroma, ChromaLayout, Plane};
use std::sync::Arc;

/// Reports the planes it was given as one number: base-256 digits of the first sample of the
/// current distorted luma, the previous and the one before, the previous distorted Cb and the
/// previous reference luma (0: not given).
struct Probe;

fn first(p: Option<Plane<'_>>) -> f64 {
    p.map_or(0.0, |p| p.get(0, 0) as f64)
}

impl Extractor for Probe {
    fn extract(&mut self, input: &FrameInput<'_>, out: &mut [f64]) -> Result<()> {
        out[0] = first(Some(input.distorted))
            + 256.0 * first(input.prev_distorted)
            + 65536.0 * first(input.prev_prev_distorted)
            + 16777216.0 * first(input.prev_distorted_chroma.map(|[u, _]| u))
            + 4294967296.0 * first(input.prev_reference);
        Ok(())
    }
}

fn create_probe(_: &ExtractorConfig) -> Result<Box<dyn Extractor>> {
    Ok(Box::new(Probe))
}

fn reads_chroma(_: &OptValues, _: &PictureFormat) -> bool {
    true
}

/// The probe with distorted history, standing in for float_psnr (one spatial output).
static WITH_HISTORY: ExtractorDef = ExtractorDef {
    name: "history_probe",
    spatial: &["float_psnr"],
    needs_prev_ref: true,
    needs_prev_dis: true,
    reads_chroma,
    create: create_probe,
    ..ExtractorDef::DEFAULTS
};

/// The same probe without: it must see no previous distorted frame.
static WITHOUT_HISTORY: ExtractorDef = ExtractorDef {
    needs_prev_dis: false,
    ..WITH_HISTORY
};

const W: usize = 64;
const H: usize = 48;

/// Frame `i`: distorted luma 10 + 3i, distorted Cb 100 + i, reference luma 200 - i (flat).
fn values(i: u64) -> (u8, u8, u8) {
    (10 + 3 * i as u8, 100 + i as u8, 200 - i as u8)
}

/// Runs `frames` frames through an engine whose float_psnr instance is replaced by `probe`;
/// returns (index, probe value) of the scored frames and the number of distorted pictures the
/// engine kept.
fn run(probe: &'static ExtractorDef, threads: usize, n_subsample: u32) -> (Vec<(u64, f64)>, usize) {
    run_with(probe, threads, n_subsample, false)
}

/// [`run`], with every other frame (`fill`) written into the engine's buffers by
/// [`Engine::send_filled`] instead of sent.
fn run_with(
    probe: &'static ExtractorDef,
    threads: usize,
    n_subsample: u32,
    fill: bool,
) -> (Vec<(u64, f64)>, usize) {
    let format = PictureFormat {
        width: W,
        height: H,
        bpc: 8,
        layout: ChromaLayout::Yuv420,
    };
    let mut cfg = EngineConfig::new(format);
    cfg.features = vec![FeatureSpec {
        name: "float_psnr".into(),
        opts: Vec::new(),
    }];
    cfg.n_threads = threads;
    cfg.n_subsample = n_subsample;
    let mut engine = Engine::new(cfg).unwrap();
    let col = engine
        .columns()
        .iter()
        .position(|c| c == "float_psnr")
        .unwrap();
    let inst = Arc::get_mut(&mut engine.plan)
        .expect("no job yet")
        .instances
        .iter_mut()
        .find(|i| i.def.name == "float_psnr")
        .unwrap();
    inst.def = probe;
    // The plan was built for float_psnr, which reads luma only.
    Arc::get_mut(&mut engine.plan).expect("no job yet").chroma = true;
    let (cw, ch) = (W / 2, H / 2);
    let mut out = Vec::new();
    for i in 0..11u64 {
        let (d, u, r) = values(i);
        let (dl, du, rl, rc) = (
            vec![d; W * H],
            vec![u; cw * ch],
            vec![r; W * H],
            vec![128; cw * ch],
        );
        let (pr, pd) = (pic(format, &rl, &rc, &rc), pic(format, &dl, &du, &rc));
        if fill && i % 2 == 1 {
            let sent = engine
                .send_filled(|r, d| {
                    r.copy_from(&pr)?;
                    d.copy_from(&pd)?;
                    Ok(true)
                })
                .unwrap();
            assert!(sent);
            // A fill that finds no frame sends nothing.
            assert!(!engine.send_filled(|_, _| Ok(false)).unwrap());
        } else {
            engine.send(&pr, &pd).unwrap();
        }
        while let Some(s) = engine.receive() {
            out.push((s.index, s.values[col]));
        }
    }
    engine.flush().unwrap();
    while let Some(s) = engine.receive() {
        out.push((s.index, s.values[col]));
    }
    let kept = engine.rt.as_ref().unwrap().dists.len();
    (out, kept)
}

/// A flat 4:2:0 picture over the planes given.
fn pic<'a>(format: PictureFormat, luma: &'a [u8], cb: &'a [u8], cr: &'a [u8]) -> Picture<'a> {
    let (cw, ch) = (W / 2, H / 2);
    Picture::new(format, Plane::new_u8(luma, W, H, W).unwrap())
        .unwrap()
        .with_chroma(Chroma::Planar(
            Plane::new_u8(cb, cw, ch, cw).unwrap(),
            Plane::new_u8(cr, cw, ch, cw).unwrap(),
        ))
        .unwrap()
}

/// What the probe should report for frame `i`.
fn expected(i: u64, history: bool) -> f64 {
    let (d, _, _) = values(i);
    let mut v = d as f64;
    if i >= 1 {
        let (pd, pu, pr) = values(i - 1);
        if history {
            v += 256.0 * pd as f64 + 16777216.0 * pu as f64;
        }
        v += 4294967296.0 * pr as f64;
    }
    if i >= 2 && history {
        v += 65536.0 * values(i - 2).0 as f64;
    }
    v
}

#[test]
fn extractors_see_the_previous_distorted_frames() {
    for threads in [1, 2, 3] {
        for n_subsample in [1, 2, 3] {
            let (got, kept) = run(&WITH_HISTORY, threads, n_subsample);
            let want: Vec<(u64, f64)> = (0..11u64)
                .filter(|i| i % n_subsample as u64 == 0)
                .map(|i| (i, expected(i, true)))
                .collect();
            assert_eq!(got, want, "{threads} threads, n_subsample {n_subsample}");
            assert_eq!(
                kept,
                2 * threads.max(1) + 3,
                "the frames in flight, the two before the oldest, one spare, one per worker more"
            );
        }
    }
}

#[test]
fn filled_pictures_are_history_like_sent_ones() {
    for threads in [1, 3] {
        for n_subsample in [1, 2] {
            let want = run(&WITH_HISTORY, threads, n_subsample);
            let got = run_with(&WITH_HISTORY, threads, n_subsample, true);
            assert_eq!(got, want, "{threads} threads, n_subsample {n_subsample}");
        }
    }
}

#[test]
fn no_distorted_history_is_kept_unless_asked() {
    for threads in [1, 3] {
        let (got, kept) = run(&WITHOUT_HISTORY, threads, 2);
        let want: Vec<(u64, f64)> = (0..11u64)
            .filter(|i| i % 2 == 0)
            .map(|i| (i, expected(i, false)))
            .collect();
        assert_eq!(got, want, "{threads} threads");
        assert_eq!(
            kept,
            2 * threads.max(1),
            "two distorted pictures per worker slot (one for a frame waiting on a straggler)"
        );
    }
}

/// Scores frames [a, b) of the 11-frame stream as a segment: context frames from
/// `context_start` (history only), then the segment; returns the recorded (index, probe value).
fn run_segment(
    threads: usize,
    n_subsample: u32,
    context_start: u64,
    a: u64,
    b: u64,
) -> Result<Vec<(u64, f64)>> {
    let format = PictureFormat {
        width: W,
        height: H,
        bpc: 8,
        layout: ChromaLayout::Yuv420,
    };
    let mut cfg = EngineConfig::new(format);
    cfg.features = vec![FeatureSpec {
        name: "float_psnr".into(),
        opts: Vec::new(),
    }];
    cfg.n_threads = threads;
    cfg.n_subsample = n_subsample;
    let mut engine = Engine::new(cfg).unwrap();
    let slot = engine
        .spatial_slot_names()
        .iter()
        .position(|c| c == "float_psnr")
        .unwrap();
    let inst = Arc::get_mut(&mut engine.plan)
        .expect("no job yet")
        .instances
        .iter_mut()
        .find(|i| i.def.name == "float_psnr")
        .unwrap();
    inst.def = &WITH_HISTORY;
    Arc::get_mut(&mut engine.plan).expect("no job yet").chroma = true;
    assert_eq!(engine.context_frames(), 2);
    engine.begin_segment(context_start)?;
    let (cw, ch) = (W / 2, H / 2);
    for i in context_start..b {
        let (d, u, r) = values(i);
        let (dl, du, rl, rc) = (
            vec![d; W * H],
            vec![u; cw * ch],
            vec![r; W * H],
            vec![128; cw * ch],
        );
        let (pr, pd) = (pic(format, &rl, &rc, &rc), pic(format, &dl, &du, &rc));
        if i < a {
            engine.send_context(&pr, &pd)?;
        } else {
            engine.send(&pr, &pd)?;
        }
        assert!(
            engine.receive().is_none(),
            "a segment engine scores nothing"
        );
    }
    engine.flush()?;
    Ok(engine
        .segment_rows()
        .map(|(i, row)| (i, row[slot]))
        .collect())
}

#[test]
fn segments_see_the_history_a_whole_stream_sees() {
    for threads in [1, 3] {
        for n_subsample in [1, 2] {
            for a in 0..6u64 {
                let b = a + 4;
                let got = run_segment(threads, n_subsample, a.saturating_sub(2), a, b).unwrap();
                // Every frame (the probe runs on frames n_subsample skips too, as motion does).
                let want: Vec<(u64, f64)> = (a..b).map(|i| (i, expected(i, true))).collect();
                assert_eq!(
                    got, want,
                    "[{a}, {b}), {threads} threads, n_subsample {n_subsample}"
                );
            }
        }
    }
}

#[test]
fn a_segment_without_its_context_is_refused() {
    let e = run_segment(2, 1, 3, 3, 6).unwrap_err();
    assert!(e.to_string().contains("needs 2 frame(s) of context"), "{e}");
    let e = run_segment(2, 1, 2, 3, 6).unwrap_err();
    assert!(e.to_string().contains("it was given 1"), "{e}");
    // Frame 1 needs only frame 0.
    assert_eq!(
        run_segment(1, 1, 0, 1, 2).unwrap(),
        vec![(1, expected(1, true))]
    );
}
