//! Unit tests of the IQA kernels: every SIMD level against the scalar specification, bit for bit.

use super::{decimated, scalar, Kernels, Ssim, WINDOW};
use crate::cpu::{sweep_levels, CpuLevel};

/// Deterministic pseudo-random numbers (xorshift).
fn rng(seed: u64) -> impl FnMut() -> u64 {
    let mut s = seed | 1;
    move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    }
}

/// A `w`x`h` picture on libvmaf's 8-bit float scale from `bpc`-bit samples: a smooth pattern
/// plus noise of amplitude `amp` (in samples).
fn picture(rnd: &mut impl FnMut() -> u64, w: usize, h: usize, bpc: u32, amp: u64) -> Vec<f32> {
    let max = (1u64 << bpc) - 1;
    let scale = (1u32 << (bpc - 8)) as f32;
    let phase = (rnd() % 100) as f64 * 0.1;
    (0..w * h)
        .map(|i| {
            let (x, y) = ((i % w) as f64, (i / w) as f64);
            let base = 0.5 + 0.35 * (x * 0.19 + phase).sin() * (y * 0.11).cos();
            let noise = if amp == 0 {
                0
            } else {
                (rnd() % (2 * amp + 1)) as i64 - amp as i64
            };
            let v = ((base * max as f64) as i64 + noise).clamp(0, max as i64);
            v as f32 / scale
        })
        .collect()
}

fn assert_bits(got: &[f32], want: &[f32], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    for (i, (g, e)) in got.iter().zip(want).enumerate() {
        assert_eq!(g.to_bits(), e.to_bits(), "{what}: at {i}: {g} against {e}");
    }
}

/// Sizes from the window's minimum up, odd ones and ones around the vector width included.
fn sizes(rnd: &mut impl FnMut() -> u64) -> Vec<(usize, usize)> {
    let mut s: Vec<(usize, usize)> = (WINDOW..WINDOW + 20)
        .map(|w| (w, WINDOW + (rnd() % 12) as usize))
        .collect();
    s.extend([(97, 61), (128, 13), (177, 23), (321, 17), (1920, 12)]);
    s
}

/// Both Gaussian passes at every level equal the scalar ones (the written part of the row pass's
/// cache, all of the column pass's output).
#[test]
fn convolve_kernels_match_scalar_at_every_level() {
    const SITE: &str = "convolve_kernels_match_scalar_at_every_level";
    let mut rnd = rng(0x9e37_79b9_7f4a_7c15);
    for (w, h) in sizes(&mut rnd) {
        for bpc in [8, 10, 16] {
            let img = picture(&mut rnd, w, h, bpc, 40);
            let mut want_cache = vec![0.0f32; w * h];
            scalar::convolve_rows(&img, w, h, &mut want_cache);
            let (dw, dh) = (w + 1 - WINDOW, h + 1 - WINDOW);
            let mut want = vec![0.0f32; dw * dh];
            scalar::convolve_cols(&want_cache, w, h, &mut want);
            for level in sweep_levels(SITE) {
                let k = Kernels::for_level(level);
                let mut cache = vec![0.0f32; w * h];
                (k.convolve_rows)(&img, w, h, &mut cache);
                assert_bits(&cache, &want_cache, &format!("{level:?} rows {w}x{h}"));
                let mut got = vec![0.0f32; dw * dh];
                (k.convolve_cols)(&want_cache, w, h, &mut got);
                assert_bits(&got, &want, &format!("{level:?} cols {w}x{h}"));
            }
        }
    }
}

/// The map kernels at every level equal the scalar ones, on real filtered maps (textured,
/// noisy, identical and flat pairs: the negative-covariance clamp and zero variances) and on
/// raw random values (the NaN-free extremes of the terms).
#[test]
fn ssim_map_kernels_match_scalar_at_every_level() {
    const SITE: &str = "ssim_map_kernels_match_scalar_at_every_level";
    let mut rnd = rng(0x2545_f491_4f6c_dd1d);
    for (w, h) in sizes(&mut rnd) {
        for case in 0..4 {
            let r = picture(&mut rnd, w, h, 10, if case == 3 { 0 } else { 30 });
            let d = match case {
                0 => picture(&mut rnd, w, h, 10, 30),
                1 | 3 => r.clone(),
                _ => r.iter().map(|&v| (v * 0.75 + 16.0).floor()).collect(),
            };
            let n = w * h;
            let (mut rr, mut dd, mut rd) = (vec![0.0; n], vec![0.0; n], vec![0.0; n]);
            scalar::squares(&r, &d, &mut rr, &mut dd, &mut rd);
            for level in sweep_levels(SITE) {
                let k = Kernels::for_level(level);
                let (mut a, mut b, mut c) = (vec![0.0; n], vec![0.0; n], vec![0.0; n]);
                (k.squares)(&r, &d, &mut a, &mut b, &mut c);
                assert_bits(&a, &rr, &format!("{level:?} squares rr"));
                assert_bits(&b, &dd, &format!("{level:?} squares dd"));
                assert_bits(&c, &rd, &format!("{level:?} squares rd"));
            }
            // The filtered maps, as Ssim::compute makes them.
            let mut cache = vec![0.0f32; n];
            let filt = |img: &[f32], cache: &mut [f32]| {
                let mut out = vec![0.0f32; n];
                scalar::convolve_rows(img, w, h, cache);
                scalar::convolve_cols(cache, w, h, &mut out);
                out.truncate((w + 1 - WINDOW) * (h + 1 - WINDOW));
                out
            };
            let maps = [
                filt(&r, &mut cache),
                filt(&d, &mut cache),
                filt(&rr, &mut cache),
                filt(&dd, &mut cache),
                filt(&rd, &mut cache),
            ];
            let want = scalar::ssim_sums(&maps[0], &maps[1], &maps[2], &maps[3], &maps[4]);
            for level in sweep_levels(SITE) {
                let k = Kernels::for_level(level);
                let got = (k.ssim_sums)(&maps[0], &maps[1], &maps[2], &maps[3], &maps[4]);
                assert_eq!(
                    got.map(f64::to_bits),
                    want.map(f64::to_bits),
                    "{level:?} ssim_sums {w}x{h} case {case}: {got:?} against {want:?}"
                );
            }
        }
    }
    // Raw values: means, moments and covariances anywhere in range, signs mixed, zeros.
    for n in (0..40).chain([1000, 4099]) {
        let mut val = |span: f64| -> f32 {
            match rnd() % 8 {
                0 => 0.0,
                1 => -0.0,
                _ => ((rnd() % 2_000_001) as f64 / 1_000_000.0 - 0.3) as f32 * span as f32,
            }
        };
        let maps: Vec<Vec<f32>> = [255.0, 255.0, 65025.0, 65025.0, 65025.0]
            .iter()
            .map(|&s| (0..n).map(|_| val(s)).collect())
            .collect();
        let want = scalar::ssim_sums(&maps[0], &maps[1], &maps[2], &maps[3], &maps[4]);
        for level in sweep_levels(SITE) {
            let k = Kernels::for_level(level);
            let got = (k.ssim_sums)(&maps[0], &maps[1], &maps[2], &maps[3], &maps[4]);
            assert_eq!(
                got.map(f64::to_bits),
                want.map(f64::to_bits),
                "{level:?} ssim_sums raw n {n}: {got:?} against {want:?}"
            );
        }
    }
}

/// Decimation at every level equals the scalar specification, into its own buffer and in place
/// (libvmaf's order of overwrites), for box kernels of every factor libvmaf's `float_ssim`
/// takes, a 9x9 kernel by two as `float_ms_ssim`'s, and odd sizes (IQA's `n / f + (n & 1)`,
/// whose last window can be centred past the edge).
#[test]
fn decimate_kernels_match_scalar_at_every_level() {
    const SITE: &str = "decimate_kernels_match_scalar_at_every_level";
    let mut rnd = rng(0x1234_5678_9abc_def1);
    let mut cases: Vec<(usize, Vec<f32>, usize)> = (2..=10)
        .map(|f| (f, vec![1.0f32 / (f * f) as i32 as f32; f * f], f))
        .collect();
    let lpf: Vec<f32> = (0..81)
        .map(|_| ((rnd() % 2001) as f32 - 1000.0) / 4096.0)
        .collect();
    cases.push((2, lpf, 9));
    cases.push((3, vec![0.2; 25], 5));
    for (factor, kernel, kw) in &cases {
        let (factor, kw) = (*factor, *kw);
        let mut dims: Vec<(usize, usize)> = (0..6)
            .map(|_| {
                let w = kw.max(2) + (rnd() % 90) as usize;
                (w, kw.max(2) + (rnd() % 40) as usize)
            })
            .collect();
        dims.extend([(9 * factor, 11 * factor + 1), (193, 67), (1921, 5)]);
        for (w, h) in dims {
            let bpc = 8 + (rnd() % 9) as u32;
            let img = picture(&mut rnd, w, h, bpc, 25);
            let (sw, sh) = (decimated(w, factor), decimated(h, factor));
            let mut want = vec![0.0f32; sw * sh];
            scalar::decimate(&img, w, h, factor, kernel, kw, &mut want);
            let mut want_in_place = img.clone();
            scalar::decimate_in_place(&mut want_in_place, w, h, factor, kernel, kw);
            for level in sweep_levels(SITE) {
                let k = Kernels::for_level(level);
                let what = format!("{level:?} {w}x{h} factor {factor} kw {kw}");
                let mut got = vec![0.0f32; sw * sh];
                assert_eq!(
                    k.decimate(&img, w, h, factor, kernel, kw, &mut got),
                    (sw, sh)
                );
                assert_bits(&got, &want, &what);
                let mut got = img.clone();
                k.decimate_in_place(&mut got, w, h, factor, kernel, kw);
                assert_bits(&got, &want_in_place, &format!("{what} in place"));
            }
        }
    }
}

/// Whole SSIM computations at every level equal the scalar one, bit for bit.
#[test]
fn whole_ssim_matches_scalar_at_every_level() {
    const SITE: &str = "whole_ssim_matches_scalar_at_every_level";
    let mut rnd = rng(0x0bad_cafe_dead_beef);
    for (w, h) in sizes(&mut rnd) {
        let r = picture(&mut rnd, w, h, 8, 20);
        let d = picture(&mut rnd, w, h, 8, 35);
        let want = Ssim::new(w, h)
            .with_cpu_level(CpuLevel::Scalar)
            .compute(&r, &d, w, h);
        for level in sweep_levels(SITE) {
            let got = Ssim::new(w, h).with_cpu_level(level).compute(&r, &d, w, h);
            assert_eq!(
                [got.ssim, got.l, got.c, got.s].map(f32::to_bits),
                [want.ssim, want.l, want.c, want.s].map(f32::to_bits),
                "{level:?} {w}x{h}: {got:?} against {want:?}"
            );
        }
    }
}

/// `decimate_in_place_reads_originals` against a replay of the in-place order that checks every
/// tap read against the write position; where it holds, the in-place decimation equals the
/// decimation into a separate buffer, bit for bit (what the CUDA kernels compute).
#[test]
fn in_place_decimation_reads_originals_where_predicted() {
    let mut rnd = rng(0x1234_5678_9abc_def1);
    for factor in 2..=6usize {
        let kernel = vec![1.0f32 / (factor * factor) as f32; factor * factor];
        for w in factor..factor * 12 {
            for h in (factor..factor * 12).step_by(5) {
                let (sw, sh) = (decimated(w, factor), decimated(h, factor));
                let c = (factor / 2) as isize;
                let taps = -c..=c - factor.is_multiple_of(2) as isize;
                let mut replay = true;
                for y in 0..sh {
                    for x in 0..sw {
                        for v in taps.clone() {
                            let row = scalar::mirror((y * factor) as isize + v, h);
                            for u in taps.clone() {
                                let col = scalar::mirror((x * factor) as isize + u, w);
                                replay &= row * w + col >= y * sw + x;
                            }
                        }
                    }
                }
                let predicted = super::decimate_in_place_reads_originals(w, h, factor, factor);
                assert_eq!(predicted, replay, "{w}x{h} factor {factor}");
                if predicted {
                    let img = picture(&mut rnd, w, h, 10, 30);
                    let mut apart = vec![0.0f32; sw * sh];
                    scalar::decimate(&img, w, h, factor, &kernel, factor, &mut apart);
                    let mut in_place = img.clone();
                    scalar::decimate_in_place(&mut in_place, w, h, factor, &kernel, factor);
                    assert_bits(&in_place[..sw * sh], &apart, &format!("{w}x{h} /{factor}"));
                }
            }
        }
    }
}
