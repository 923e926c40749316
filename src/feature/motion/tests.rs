use super::*;
use crate::feature::options::OptValues;
use crate::picture::{ChromaLayout, PictureFormat, Plane};

/// libvmaf's flush-time motion2/motion3 computation over the whole SAD sequence, written plainly:
/// the streaming stage must produce exactly this.
fn batch(sads: &[f64], five: bool, mbf: f64, mbo: f64, mma: bool) -> Vec<[f64; 2]> {
    let n = sads.len();
    let min_idx = if five { 2 } else { 1 };
    let stride = if five { 2 } else { 1 };
    let max_val = 10000.0;
    let stamp = if n > min_idx {
        blend(sads[min_idx], mbf, mbo).min(max_val)
    } else {
        0.0
    };
    let mut prev = 0.0;
    let mut out = vec![];
    for i in 0..n {
        let m2 = if i < min_idx {
            0.0
        } else if i + 1 >= n {
            sads[i]
        } else {
            let lo = i as i64 - (stride as i64 - 1);
            let hi = sads[i + 1];
            if lo >= min_idx as i64 {
                sads[lo as usize].min(hi)
            } else {
                hi
            }
        };
        let m3 = if i < min_idx {
            prev = stamp;
            stamp
        } else {
            let p = blend(m2, mbf, mbo).min(max_val);
            let v = if mma { (p + prev) / 2.0 } else { p };
            prev = p;
            v
        };
        out.push([m2, m3]);
    }
    out
}

fn stream(sads: &[f64], opts: &OptValues) -> Vec<(u64, [f64; 2])> {
    let mut t = create_temporal(opts);
    let mut out = vec![];
    let mut max_lag = 0;
    for (i, s) in sads.iter().enumerate() {
        let before = out.len();
        t.push(i as u64, &[*s], &mut |idx, v| out.push((idx, [v[0], v[1]])));
        let _ = before;
        let emitted = out.len() as i64;
        max_lag = max_lag.max(i as i64 + 1 - emitted);
    }
    t.flush(&mut |idx, v| out.push((idx, [v[0], v[1]])));
    // One frame of lag (two for frame 0 in five-frame mode).
    let five = opts.bool("motion_five_frame_window");
    assert!(max_lag <= if five { 2 } else { 1 }, "lag {max_lag}");
    out
}

#[test]
fn streaming_matches_flush_time_computation() {
    let mut seed = 12345u64;
    let mut rnd = move || {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((seed >> 33) % 1000) as f64 / 37.0
    };
    for &(five, mma, mbf) in &[
        (false, false, 1.0),
        (true, false, 1.0),
        (false, true, 0.5),
        (true, true, 0.3),
    ] {
        let mut opts = OptValues::defaults(OPTIONS);
        opts.set(
            "motion_five_frame_window",
            if five { "true" } else { "false" },
        )
        .unwrap();
        opts.set("motion_moving_average", if mma { "true" } else { "false" })
            .unwrap();
        opts.set("motion_blend_factor", &mbf.to_string()).unwrap();
        opts.set("motion_blend_offset", "5").unwrap();
        for n in 1..10 {
            let mut sads: Vec<f64> = (0..n).map(|_| rnd()).collect();
            // Frames before min_idx have SAD 0, as the extractor writes.
            for s in sads.iter_mut().take(if five { 2 } else { 1 }) {
                *s = 0.0;
            }
            let got = stream(&sads, &opts);
            let want = batch(&sads, five, mbf, 5.0, mma);
            assert_eq!(got.len(), n);
            for (i, (idx, v)) in got.iter().enumerate() {
                assert_eq!(*idx, i as u64);
                assert_eq!(
                    v[0].to_bits(),
                    want[i][0].to_bits(),
                    "motion2 n={n} i={i} five={five}"
                );
                assert_eq!(
                    v[1].to_bits(),
                    want[i][1].to_bits(),
                    "motion3 n={n} i={i} five={five}"
                );
            }
        }
    }
}

#[test]
fn sad_of_identical_frames_is_zero_and_shift_is_exact() {
    let w = 33;
    let h = 17;
    let a: Vec<u8> = (0..w * h).map(|i| (i * 7 % 251) as u8).collect();
    let pa = Plane::new_u8(&a, w, h, w).unwrap();
    let mut row = scalar::SadScratch::new(w);
    assert_eq!(scalar::blurred_diff_sad(&pa, &pa, &mut row, 8), 0);
    // A constant offset of d: the taps sum to 65536, so every pixel gives
    // round(round(d·65536/2^bpc)·65536/65536) = 10·256 / 2^(bpc-8).
    let b: Vec<u8> = a
        .iter()
        .map(|v| v.saturating_add(0))
        .map(|v| v / 2)
        .collect();
    let c: Vec<u8> = b.iter().map(|v| v + 10).collect();
    let pb = Plane::new_u8(&b, w, h, w).unwrap();
    let pc = Plane::new_u8(&c, w, h, w).unwrap();
    let y = (10 * 65536 + 128) >> 8;
    let x = (y as i64 * 65536 + 32768) >> 16;
    assert_eq!(x, 2560);
    assert_eq!(
        scalar::blurred_diff_sad(&pc, &pb, &mut row, 8),
        (x as u64) * (w * h) as u64
    );
    // 10-bit: the same difference scaled by 4 rounds by 10 bits instead of 8.
    let b16: Vec<u16> = b.iter().map(|&v| v as u16 * 4).collect();
    let c16: Vec<u16> = c.iter().map(|&v| v as u16 * 4).collect();
    let pb16 = Plane::new_u16(&b16, w, h, w).unwrap();
    let pc16 = Plane::new_u16(&c16, w, h, w).unwrap();
    assert_eq!(
        scalar::blurred_diff_sad(&pc16, &pb16, &mut row, 10),
        (x as u64) * (w * h) as u64
    );
}

#[test]
fn extractor_scores_zero_on_first_frame() {
    let fmt = PictureFormat {
        width: 16,
        height: 16,
        bpc: 8,
        layout: ChromaLayout::Yuv420,
    };
    let mut ex = create(&crate::feature::ExtractorConfig {
        format: fmt,
        opts: OptValues::defaults(OPTIONS),
        libvmaf_isa: crate::fidelity::LibvmafIsa::C,
    })
    .unwrap();
    let d = vec![9u8; 256];
    let p = Plane::new_u8(&d, 16, 16, 16).unwrap();
    let mut out = [f64::NAN];
    let input = crate::feature::FrameInput::luma(p, p, 0);
    ex.extract(&input, &mut out).unwrap();
    assert_eq!(out[0], 0.0);
}

/// Every SIMD level's SAD kernel equals the scalar one on random planes of many widths and
/// every bit depth, including full-range differences (the widest sums).
#[test]
fn sad_kernels_match_scalar_at_every_level() {
    use crate::cpu::sweep_levels;
    let mut s = 0x9e37_79b9_7f4a_7c15u64;
    let mut rnd = move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    };
    let widths = (3..=70).chain([127, 321, 1920]);
    for w in widths {
        let h = if w > 200 { 6 } else { 7 };
        for bpc in [8u8, 10, 12, 15, 16] {
            let max = (1u64 << bpc) - 1;
            for pattern in 0..4 {
                // 0: random, 1: white against black, 2: sparse differences, 3: black against
                // white (the most negative differences).
                let gen = |rnd: &mut dyn FnMut() -> u64, first: bool| -> Vec<u16> {
                    (0..w * h)
                        .map(|_| match pattern {
                            0 => (rnd() & max) as u16,
                            1 => (if first { max } else { 0 }) as u16,
                            3 => (if first { 0 } else { max }) as u16,
                            _ => {
                                (if rnd().is_multiple_of(17) {
                                    rnd() & max
                                } else {
                                    100
                                }) as u16
                            }
                        })
                        .collect()
                };
                let a = gen(&mut rnd, true);
                let b = gen(&mut rnd, false);
                let mut y = scalar::SadScratch::new(w);
                let (a8, b8): (Vec<u8>, Vec<u8>) = (
                    a.iter().map(|&x| x as u8).collect(),
                    b.iter().map(|&x| x as u8).collect(),
                );
                let (pa, pb) = if bpc == 8 {
                    (
                        Plane::new_u8(&a8, w, h, w).unwrap(),
                        Plane::new_u8(&b8, w, h, w).unwrap(),
                    )
                } else {
                    (
                        Plane::new_u16(&a, w, h, w).unwrap(),
                        Plane::new_u16(&b, w, h, w).unwrap(),
                    )
                };
                let want = scalar::blurred_diff_sad(&pa, &pb, &mut y, bpc);
                for level in sweep_levels("sad_kernels_match_scalar_at_every_level") {
                    let got = sad_kernel(level)(&pa, &pb, &mut y, bpc);
                    assert_eq!(got, want, "{level:?} w {w} bpc {bpc} pattern {pattern}");
                }
            }
        }
    }
}
