//! Unit tests of the PSNR kernels.

use super::{scalar, Kernels};
use crate::cpu::sweep_levels;
use crate::picture::Plane;

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

/// Every SIMD level's sums equal the scalar ones on planes of many widths (odd ones, and ones
/// around the vector widths), strides wider than the width, every bit depth, and full-range
/// differences (the largest squares).
#[test]
fn sse_kernels_match_scalar_at_every_level() {
    const SITE: &str = "sse_kernels_match_scalar_at_every_level";
    let mut rnd = rng(0x2545_f491_4f6c_dd1d);
    let widths = (1..=70).chain([95, 96, 97, 127, 321, 1919, 1920]);
    for w in widths {
        let h = if w > 200 { 3 } else { 1 + (rnd() % 7) as usize };
        let rs = w + (rnd() % 9) as usize;
        let ds = w + (rnd() % 9) as usize;
        for bpc in [8u32, 10, 12, 16] {
            let max = (1u64 << bpc) - 1;
            for pattern in 0..3 {
                // 0: random, 1: black against white (the largest terms), 2: mostly equal.
                let mut gen = |stride: usize, first: bool| -> Vec<u16> {
                    (0..stride * h)
                        .map(|_| match pattern {
                            0 => (rnd() & max) as u16,
                            1 => (if first { max } else { 0 }) as u16,
                            _ => {
                                (if rnd().is_multiple_of(13) {
                                    rnd() & max
                                } else {
                                    max / 2
                                }) as u16
                            }
                        })
                        .collect()
                };
                let (a, b) = (gen(rs, true), gen(ds, false));
                if bpc == 8 {
                    let a: Vec<u8> = a.iter().map(|&x| x as u8).collect();
                    let b: Vec<u8> = b.iter().map(|&x| x as u8).collect();
                    let want = scalar::sse(&a, rs, &b, ds, w, h);
                    let (pa, pb) = (
                        Plane::new_u8(&a, w, h, rs).unwrap(),
                        Plane::new_u8(&b, w, h, ds).unwrap(),
                    );
                    for level in sweep_levels(SITE) {
                        let k = Kernels::for_level(level);
                        assert_eq!(
                            (k.sse_u8)(&a, rs, &b, ds, w, h),
                            want,
                            "{level:?} {w}x{h} 8-bit pattern {pattern}"
                        );
                        assert_eq!(k.sse(&pa, &pb), want, "{level:?} {w}x{h} 8-bit");
                    }
                } else {
                    let want = scalar::sse(&a, rs, &b, ds, w, h);
                    let (pa, pb) = (
                        Plane::new_u16(&a, w, h, rs).unwrap(),
                        Plane::new_u16(&b, w, h, ds).unwrap(),
                    );
                    for level in sweep_levels(SITE) {
                        let k = Kernels::for_level(level);
                        assert_eq!(
                            (k.sse_u16)(&a, rs, &b, ds, w, h),
                            want,
                            "{level:?} {w}x{h} {bpc}-bit pattern {pattern}"
                        );
                        assert_eq!(k.sse(&pa, &pb), want, "{level:?} {w}x{h} {bpc}-bit");
                    }
                }
            }
        }
    }
}

/// A row long enough that 8-bit lane sums of the largest squares would pass 32 bits without the
/// periodic widening (over `16384 * 32` samples of difference 255).
#[test]
fn sse_u8_long_rows_match_scalar_at_every_level() {
    const SITE: &str = "sse_u8_long_rows_match_scalar_at_every_level";
    let w = 600_007;
    let a = vec![255u8; w];
    let b = vec![0u8; w];
    let want = scalar::sse(&a, w, &b, w, w, 1);
    assert_eq!(want, w as u64 * 255 * 255);
    for level in sweep_levels(SITE) {
        let k = Kernels::for_level(level);
        assert_eq!((k.sse_u8)(&a, w, &b, w, w, 1), want, "{level:?}");
    }
}

/// A known value: differences 0..=3 in every row.
#[test]
fn sse_counts_squares() {
    let a = [10u8, 11, 12, 13, 0, 0, 10, 11, 12, 13];
    let b = [10u8, 10, 10, 10, 0, 0, 10, 10, 10, 10];
    // Two rows of 4 (stride 6): 2 * (0 + 1 + 4 + 9).
    assert_eq!(scalar::sse(&a, 6, &b, 6, 4, 2), 28);
}
