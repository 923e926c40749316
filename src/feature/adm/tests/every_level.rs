//! Every SIMD level against the scalar kernels, kernel by kernel on random and extreme bands,
//! and whole pictures through the extractor.

use super::super::scalar::{self, QuadMut};
use super::{compute, pattern};
use crate::cpu::{cpu_level, sweep_levels, CpuLevel};
use crate::feature::adm::{Adm, AdmParams, CsfS0, CsfS123, DecoupleS0, DecoupleS123, Kernels};
use crate::fidelity::LibvmafIsa;

/// Every SIMD level's scale-0 masking kernel equals the scalar one on random bands (full `i16`
/// range and small values; threshold sums of three such values a band) of many widths,
/// including the widths where libvmaf's AVX-512 DWT quirk applies.
#[test]
fn cm_s0_kernels_match_scalar_at_every_level() {
    fn tri(v: &[Vec<i16>]) -> [&[i16]; 3] {
        [&v[0], &v[1], &v[2]]
    }
    let mut s = 0x2545_f491_4f6c_dd1du64;
    let mut rnd = move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    };
    for w in (1..=70).chain([129, 321, 960]) {
        for h in [1usize, 2, 5, 9] {
            for small in [false, true] {
                let n = w * h;
                let mut band = || -> Vec<i16> {
                    (0..n)
                        .map(|_| {
                            let v = rnd() as i16;
                            if small {
                                v % 300
                            } else {
                                v
                            }
                        })
                        .collect()
                };
                let x: Vec<Vec<i16>> = (0..3).map(|_| band()).collect();
                // What csf_s0 writes: sums of three i16 values.
                let mut sum3 = || -> Vec<i32> {
                    let b: Vec<Vec<i16>> = (0..3).map(|_| band()).collect();
                    (0..n)
                        .map(|i| b.iter().map(|v| v[i] as i32).sum())
                        .collect()
                };
                let (f, c) = (sum3(), sum3());
                let irf = [(rnd() as u16) | 1, rnd() as u16, 40000];
                for isa in LibvmafIsa::ALL {
                    let shifts = scalar::CmShiftsS0::new(w, h, isa);
                    let want = scalar::cm_s0(tri(&x), &f, &c, w, w, h, irf, shifts);
                    for level in sweep_levels("cm_s0_kernels_match_scalar_at_every_level") {
                        let got = Kernels::for_level(level).cm_s0(
                            tri(&x),
                            &f,
                            &c,
                            w,
                            (w, h),
                            scalar::CmRows::all(h),
                            irf,
                            shifts,
                        );
                        assert_eq!(got, want, "{level:?} {w}x{h} small {small} {isa}");
                        // By strips of rows, each call given only its rows and their
                        // neighbours (buffers from the row above the strip), as the extractor
                        // masks.
                        for strip in [1, 2, 4] {
                            let mut acc = [0i64; 3];
                            for y0 in (0..h).step_by(strip) {
                                let base = y0.saturating_sub(1);
                                let xs: Vec<Vec<i16>> =
                                    x.iter().map(|b| b[base * w..].to_vec()).collect();
                                let (fs, cs) = (&f[base * w..], &c[base * w..]);
                                let rows = scalar::CmRows {
                                    rows: y0..(y0 + strip).min(h),
                                    base,
                                };
                                let part = Kernels::for_level(level).cm_s0(
                                    tri(&xs),
                                    fs,
                                    cs,
                                    w,
                                    (w, h),
                                    rows,
                                    irf,
                                    shifts,
                                );
                                for b in 0..3 {
                                    acc[b] = acc[b].wrapping_add(part[b]);
                                }
                            }
                            assert_eq!(acc, want, "{level:?} {w}x{h} strips of {strip}");
                        }
                    }
                }
            }
        }
    }
}

/// Every SIMD level's scale-0 DWT equals the scalar one on random and extreme pictures of many
/// widths and every bit depth, including the widths where libvmaf's AVX-512 last column applies
/// (8-bit 65, 66, 129, 130, 321, 322; 9..16-bit 129, 130, 257, 258).
#[test]
fn dwt_s0_kernels_match_scalar_at_every_level() {
    let mut s = 0x9e37_79b9_7f4a_7c15u64;
    let mut rnd = move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    };
    let widths = (1..=70).chain([
        95, 96, 97, 127, 128, 129, 130, 193, 255, 256, 257, 258, 321, 322, 961,
    ]);
    for w in widths {
        for h in [1usize, 2, 5, 8] {
            for bpc in [8u32, 10, 12, 16] {
                let max = (1u32 << bpc) - 1;
                for kind in 0..4 {
                    let stride = w + 3;
                    let src: Vec<u16> = (0..stride * h)
                        .map(|i| match kind {
                            0 => (rnd() as u32 & max) as u16,
                            1 => max as u16,
                            2 => (if (i + i / stride) % 2 == 0 { max } else { 0 }) as u16,
                            _ => (if rnd() % 3 == 0 { max } else { 0 }) as u16,
                        })
                        .collect();
                    let (hw, hh) = (w.div_ceil(2), h.div_ceil(2));
                    let (mut iy, mut ix) = (vec![[0; 4]; hh], vec![[0; 4]; hw]);
                    scalar::dwt_indices(h, &mut iy);
                    scalar::dwt_indices(w, &mut ix);
                    let run = |k: Option<&Kernels>, e: LibvmafIsa| {
                        let n = hw * hh;
                        let mut q = [vec![0i16; n], vec![0; n], vec![0; n], vec![0; n]];
                        let (mut lo, mut hi) = (vec![0i16; w], vec![0i16; w]);
                        let [a, hb, v, d] = &mut q;
                        let out = QuadMut { a, h: hb, v, d };
                        let src8: Vec<u8> = src.iter().map(|&x| x as u8).collect();
                        match (k, bpc) {
                            (None, 8) => scalar::dwt2_s0(
                                &src8, stride, w, bpc, &iy, &ix, &mut lo, &mut hi, out, hw, e,
                            ),
                            (None, _) => scalar::dwt2_s0(
                                &src, stride, w, bpc, &iy, &ix, &mut lo, &mut hi, out, hw, e,
                            ),
                            (Some(k), 8) => k.dwt2_s0(
                                &src8, stride, w, bpc, &iy, &ix, &mut lo, &mut hi, out, hw, e,
                            ),
                            (Some(k), _) => k.dwt2_s0(
                                &src, stride, w, bpc, &iy, &ix, &mut lo, &mut hi, out, hw, e,
                            ),
                        }
                        q
                    };
                    for edge in LibvmafIsa::ALL {
                        let want = run(None, edge);
                        for level in sweep_levels("dwt_s0_kernels_match_scalar_at_every_level") {
                            let got = run(Some(&Kernels::for_level(level)), edge);
                            assert_eq!(got, want, "{level:?} {w}x{h} {bpc}-bit kind {kind} {edge}");
                        }
                    }
                }
            }
        }
    }
}

/// Every SIMD level's scale-1..3 masking kernel equals the scalar one on random bands (full `i32`
/// range and small values) of many widths, with CSF weights on both sides of 2^31.
#[test]
fn cm_s123_kernels_match_scalar_at_every_level() {
    fn tri(v: &[Vec<i32>]) -> [&[i32]; 3] {
        [&v[0], &v[1], &v[2]]
    }
    let mut s = 0x2545_f491_4f6c_dd1du64;
    let mut rnd = move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    };
    for w in (1..=70).chain([129, 321, 480]) {
        for h in [1usize, 2, 5, 9] {
            for range in [0u32, 1, 2] {
                let n = w * h;
                let mut band = || -> Vec<i32> {
                    (0..n)
                        .map(|_| {
                            let v = rnd() as i32;
                            match range {
                                0 => v,
                                1 => v % 5000,
                                _ => [i32::MIN, i32::MAX, 0, -1][(v & 3) as usize],
                            }
                        })
                        .collect()
                };
                let x: Vec<Vec<i32>> = (0..3).map(|_| band()).collect();
                let (f, c) = (band(), band());
                let irf = [rnd() as u32 | 1 << 31, rnd() as u32 >> 1, 0x3000_0000];
                let shifts = scalar::cm_s123_shifts(w, h);
                let want = scalar::cm_s123(tri(&x), &f, &c, w, w, h, irf, shifts);
                for level in sweep_levels("cm_s123_kernels_match_scalar_at_every_level") {
                    let got = Kernels::for_level(level).cm_s123(
                        tri(&x),
                        &f,
                        &c,
                        w,
                        (w, h),
                        scalar::CmRows::all(h),
                        irf,
                        shifts,
                    );
                    assert_eq!(got, want, "{level:?} {w}x{h} range {range}");
                }
            }
        }
    }
}

/// Every SIMD level's scale-0 decoupling equals the scalar one on random bands (full `i16` range,
/// small values, near-parallel reference/distorted pairs that take the gain limit, extremes) of
/// many widths and regions, for several enhancement gain limits.
#[test]
fn decouple_s0_kernels_match_scalar_at_every_level() {
    let mut s = 0x1234_5678_9abc_def1u64;
    let mut rnd = move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    };
    for w in (1..=40).chain([63, 64, 65, 129, 331]) {
        let h = 4;
        let n = w * h;
        for kind in 0..4 {
            let mut o: Vec<Vec<i16>> = Vec::new();
            let mut t: Vec<Vec<i16>> = Vec::new();
            for _ in 0..3 {
                let (mut ob, mut tb) = (Vec::with_capacity(n), Vec::with_capacity(n));
                for idx in 0..n {
                    let (a, b) = (rnd() as i16, rnd() as i16);
                    let (x, y) = match kind {
                        0 => (a, b),
                        1 => (a % 200, b % 200),
                        // Distorted = reference scaled, plus a little noise: the gain limit.
                        2 => {
                            let x = (a % 3000) as i32;
                            let f = 1 + (idx % 4) as i32;
                            (x as i16, (x * f / 2 + (b % 2) as i32) as i16)
                        }
                        _ => {
                            let e = [i16::MIN, i16::MAX, 0, -1, 1];
                            (e[(a as u16 % 5) as usize], e[(b as u16 % 5) as usize])
                        }
                    };
                    ob.push(x);
                    tb.push(y);
                }
                o.push(ob);
                t.push(tb);
            }
            let regs = [
                scalar::region_decouple(w, h),
                scalar::Region {
                    top: 0,
                    bottom: h,
                    left: 0,
                    right: w,
                },
                scalar::Region {
                    top: 1,
                    bottom: 3,
                    left: w.min(3),
                    right: w,
                },
            ];
            for reg in regs {
                // 511 (9 significant bits) and 0.75 take the AVX2 `float` gain limit at its
                // widest and below 1; 1.2 the `double` one.
                for egl in [1.0, 1.2, 100.0, 511.0, 0.75] {
                    let run = |k: DecoupleS0| {
                        let mut r = vec![vec![7i16; n]; 3];
                        let mut a = vec![vec![7i16; n]; 3];
                        {
                            let [r0, r1, r2] = &mut r[..] else {
                                unreachable!()
                            };
                            let [a0, a1, a2] = &mut a[..] else {
                                unreachable!()
                            };
                            k(
                                [&o[0], &o[1], &o[2]],
                                [&t[0], &t[1], &t[2]],
                                [r0, r1, r2],
                                [a0, a1, a2],
                                w,
                                reg,
                                egl,
                            );
                        }
                        (r, a)
                    };
                    let want = run(scalar::decouple_s0);
                    for level in sweep_levels("decouple_s0_kernels_match_scalar_at_every_level") {
                        let got = run(Kernels::for_level(level).decouple_s0);
                        assert!(got == want, "{level:?} w {w} kind {kind} {reg:?} egl {egl}");
                    }
                }
            }
        }
    }
}

/// Every SIMD level's scale-0 decoupling equals the scalar one on every combination of extreme
/// values of the three reference and three distorted bands (dot products and magnitudes up to
/// 2^31, with and without the gain limit taking effect in each band).
#[test]
fn decouple_s0_extreme_orientations_match_scalar_at_every_level() {
    let e = [i16::MIN, i16::MIN + 1, -1, 0, 1, 2, i16::MAX];
    let mut o: [Vec<i16>; 3] = Default::default();
    let mut t: [Vec<i16>; 3] = Default::default();
    for mut idx in 0..e.len().pow(6) {
        for b in o.iter_mut().chain(t.iter_mut()) {
            b.push(e[idx % e.len()]);
            idx /= e.len();
        }
    }
    let name = "decouple_s0_extreme_orientations_match_scalar_at_every_level";
    decouple_s0_row_matches_scalar(name, &o, &t, &[1.0, 100.0, 511.0, 1.2]);
}

/// Every SIMD level's scale-0 decoupling of one row (`o` and `t`, three bands each) equals the
/// scalar one, for each gain limit in `egls`.
fn decouple_s0_row_matches_scalar(
    name: &'static str,
    o: &[Vec<i16>; 3],
    t: &[Vec<i16>; 3],
    egls: &[f64],
) {
    let w = o[0].len();
    let reg = scalar::Region {
        top: 0,
        bottom: 1,
        left: 0,
        right: w,
    };
    for &egl in egls {
        let run = |k: DecoupleS0| {
            let (mut r, mut a) = (vec![vec![7i16; w]; 3], vec![vec![7i16; w]; 3]);
            {
                let [r0, r1, r2] = &mut r[..] else {
                    unreachable!()
                };
                let [a0, a1, a2] = &mut a[..] else {
                    unreachable!()
                };
                let (ob, tb) = ([&o[0][..], &o[1], &o[2]], [&t[0][..], &t[1], &t[2]]);
                k(ob, tb, [r0, r1, r2], [a0, a1, a2], w, reg, egl);
            }
            (r, a)
        };
        let want = run(scalar::decouple_s0);
        for level in sweep_levels(name) {
            let got = run(Kernels::for_level(level).decouple_s0);
            assert!(got == want, "{level:?} egl {egl}");
        }
    }
}

/// Every SIMD level's scale-0 decoupling equals the scalar one where the angle test is on a
/// knife's edge: distorted (h, v) vectors turned by one degree, give or take up to 2^-12 radian,
/// from reference ones of magnitudes 2^6 to 2^15, so that some pairs' two sides of the test lie
/// within 2^-20 of each other (checked), where a SIMD peer deciding it in `float` must fall back
/// to `double`.
#[test]
fn decouple_s0_one_degree_edge_matches_scalar_at_every_level() {
    let mut s = 0x0fed_cba9_8765_4321u64;
    let mut rnd = move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    };
    let n = 8192;
    let mut o: [Vec<i16>; 3] = Default::default();
    let mut t: [Vec<i16>; 3] = Default::default();
    let one_degree = std::f64::consts::PI / 180.0;
    let mut near = 0;
    for i in 0..n {
        let a = (rnd() % 6283) as f64 / 1000.0;
        let eps = ((rnd() % 2001) as f64 - 1000.0) / 1000.0 / 4096.0;
        let turn = if i % 2 == 0 { one_degree } else { -one_degree };
        let mut mag = || (1u64 << (6 + rnd() % 9)) as f64 * (1.0 + (rnd() % 1000) as f64 / 1000.0);
        let (ro, rt) = (mag(), mag());
        let b = a + turn + eps;
        let q = |v: f64| v.round().clamp(-32768.0, 32767.0) as i16;
        let (oh, ov, th, tv) = (
            q(ro * a.cos()),
            q(ro * a.sin()),
            q(rt * b.cos()),
            q(rt * b.sin()),
        );
        let dot =
            |x0: i16, x1: i16, y0: i16, y1: i16| x0 as i64 * y0 as i64 + x1 as i64 * y1 as i64;
        let f = |v: i64| v as f32 as f64;
        let (ot, om, tm) = (
            f(dot(oh, ov, th, tv)),
            f(dot(oh, ov, oh, ov)),
            f(dot(th, tv, th, tv)),
        );
        let rhs = crate::feature::adm::tables::COS_1DEG_SQ as f64 * om * tm;
        if ot > 0.0 && (ot * ot - rhs).abs() <= rhs / (1 << 20) as f64 {
            near += 1;
        }
        o[0].push(oh);
        o[1].push(ov);
        t[0].push(th);
        t[1].push(tv);
        o[2].push((rnd() as i16) >> 3);
        t[2].push((rnd() as i16) >> 3);
    }
    assert!(near > 0, "no pair within 2^-20 of the edge");
    let name = "decouple_s0_one_degree_edge_matches_scalar_at_every_level";
    decouple_s0_row_matches_scalar(name, &o, &t, &[1.0, 100.0, 1.2]);
}

/// Every SIMD level's scale-1..3 decoupling equals the scalar one where the angle test is on a
/// knife's edge: distorted (h, v) vectors turned by one degree, give or take up to 2^-16 or 2^-10
/// radian, from wide reference ones (magnitudes 2^10 to 2^29), so the `float` roundings of the dot
/// products decide the test (a SIMD peer that decides it in another precision must hand these
/// to the scalar kernel).
#[test]
fn decouple_s123_one_degree_edge_matches_scalar_at_every_level() {
    let mut s = 0x0123_4567_89ab_cdefu64;
    let mut rnd = move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    };
    let n = 4096;
    let mut o: [Vec<i32>; 3] = Default::default();
    let mut t: [Vec<i32>; 3] = Default::default();
    let one_degree = std::f64::consts::PI / 180.0;
    for i in 0..n {
        let a = (rnd() % 6283) as f64 / 1000.0;
        // Within 2^-16 radian (where `float` cannot call it) or 2^-10 (around the margin of the
        // AVX2 peer's `float` test).
        let spread = if i % 4 < 2 { 65536.0 } else { 1024.0 };
        let eps = ((rnd() % 2001) as f64 - 1000.0) / 1000.0 / spread;
        let turn = if i % 2 == 0 { one_degree } else { -one_degree };
        let (ro, rt) = (
            (1u64 << (10 + rnd() % 20)) as f64 * (1.0 + (rnd() % 1000) as f64 / 1000.0),
            (1u64 << (10 + rnd() % 20)) as f64 * (1.0 + (rnd() % 1000) as f64 / 1000.0),
        );
        let b = a + turn + eps;
        o[0].push((ro * a.cos()).round().clamp(-1e9, 1e9) as i32);
        o[1].push((ro * a.sin()).round().clamp(-1e9, 1e9) as i32);
        t[0].push((rt * b.cos()).round().clamp(-1e9, 1e9) as i32);
        t[1].push((rt * b.sin()).round().clamp(-1e9, 1e9) as i32);
        o[2].push((rnd() as i32) >> 4);
        t[2].push((rnd() as i32) >> 4);
    }
    let reg = scalar::Region {
        top: 0,
        bottom: 1,
        left: 0,
        right: n,
    };
    for egl in [1.0, 100.0] {
        let run = |k: DecoupleS123| {
            let (mut r, mut a) = (vec![vec![7i32; n]; 3], vec![vec![7i32; n]; 3]);
            {
                let [r0, r1, r2] = &mut r[..] else {
                    unreachable!()
                };
                let [a0, a1, a2] = &mut a[..] else {
                    unreachable!()
                };
                let (ob, tb) = ([&o[0][..], &o[1], &o[2]], [&t[0][..], &t[1], &t[2]]);
                k(ob, tb, [r0, r1, r2], [a0, a1, a2], n, reg, egl);
            }
            (r, a)
        };
        let want = run(scalar::decouple_s123);
        for level in sweep_levels("decouple_s123_one_degree_edge_matches_scalar_at_every_level") {
            let got = run(Kernels::for_level(level).decouple_s123);
            assert!(got == want, "{level:?} egl {egl}");
        }
    }
}

/// Every SIMD level's scale-1..3 decoupling equals the scalar one on random bands (wide `i32`
/// values, values around 2^15 where the reciprocal switches to the 15 leading bits, near-parallel
/// pairs that take the gain limit, extremes up to `INT32_MIN` where the rounding constant wraps)
/// of many widths and regions, for several enhancement gain limits.
#[test]
fn decouple_s123_kernels_match_scalar_at_every_level() {
    let mut s = 0x5eed_1234_0bad_f00du64;
    let mut rnd = move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    };
    for w in (1..=20).chain([31, 33, 64, 129]) {
        let h = 3;
        let n = w * h;
        for kind in 0..5 {
            let mut o: Vec<Vec<i32>> = Vec::new();
            let mut t: Vec<Vec<i32>> = Vec::new();
            for band in 0..3 {
                let (mut ob, mut tb) = (Vec::with_capacity(n), Vec::with_capacity(n));
                for idx in 0..n {
                    let (a, b) = (rnd() as i32, rnd() as i32);
                    let (x, y) = match kind {
                        // Below 2^30, so the h/v dot products of the angle test stay in int64.
                        0 => (a >> 2, b >> 2),
                        1 => (a % 70_000, b % 70_000),
                        // Distorted = reference scaled, plus a little noise: the gain limit.
                        2 => {
                            let x = (a % 300_000) as i64;
                            let f = 1 + (idx % 4) as i64;
                            (x as i32, (x * f / 2 + (b % 2) as i64) as i32)
                        }
                        3 => {
                            let e = [32767, 32768, -32768, 65535, 65536, -65537, 1, -1, 0];
                            let pick = |v: i32| e[(v as u32 % e.len() as u32) as usize];
                            (pick(a), pick(b))
                        }
                        _ => {
                            // INT32_MIN only in the d band, which the angle test does not read.
                            let e = [i32::MAX, -i32::MAX, 0, -1, 1, 1 << 30];
                            let (x, y) = (
                                e[(a as u32 % e.len() as u32) as usize],
                                e[(b as u32 % e.len() as u32) as usize],
                            );
                            if band == 2 && idx % 3 == 0 {
                                (i32::MIN, y)
                            } else {
                                (x, y)
                            }
                        }
                    };
                    ob.push(x);
                    tb.push(y);
                }
                o.push(ob);
                t.push(tb);
            }
            let regs = [
                scalar::Region {
                    top: 0,
                    bottom: h,
                    left: 0,
                    right: w,
                },
                scalar::Region {
                    top: 1,
                    bottom: 3,
                    left: w.min(3),
                    right: w,
                },
            ];
            for reg in regs {
                for egl in [1.0, 1.2, 100.0] {
                    let run = |k: DecoupleS123| {
                        let mut r = vec![vec![7i32; n]; 3];
                        let mut a = vec![vec![7i32; n]; 3];
                        {
                            let [r0, r1, r2] = &mut r[..] else {
                                unreachable!()
                            };
                            let [a0, a1, a2] = &mut a[..] else {
                                unreachable!()
                            };
                            k(
                                [&o[0], &o[1], &o[2]],
                                [&t[0], &t[1], &t[2]],
                                [r0, r1, r2],
                                [a0, a1, a2],
                                w,
                                reg,
                                egl,
                            );
                        }
                        (r, a)
                    };
                    let want = run(scalar::decouple_s123);
                    for level in sweep_levels("decouple_s123_kernels_match_scalar_at_every_level") {
                        let got = run(Kernels::for_level(level).decouple_s123);
                        assert!(got == want, "{level:?} w {w} kind {kind} {reg:?} egl {egl}");
                    }
                }
            }
        }
    }
}

/// Every SIMD level's scale-1..3 DWT equals the scalar one on random and extreme bands of many
/// widths, for `i16` (scale 1) and `i32` (scales 1..3) sources.
#[test]
fn dwt_s123_kernels_match_scalar_at_every_level() {
    let mut s = 0x0bad_cafe_dead_beefu64;
    let mut rnd = move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    };
    for w in (1..=40).chain([47, 48, 49, 63, 64, 65, 66, 95, 96, 97, 127, 128, 129, 241]) {
        for h in [1usize, 2, 5, 8] {
            for kind in 0..3 {
                let stride = w + 2;
                let src: Vec<i32> = (0..stride * h)
                    .map(|_| {
                        let v = rnd() as i32;
                        match kind {
                            0 => v,
                            1 => v % 70000,
                            _ => {
                                [i32::MIN, i32::MAX, 0, -1, 32767, -32768][(v as u32 % 6) as usize]
                            }
                        }
                    })
                    .collect();
                let src16: Vec<i16> = src.iter().map(|&x| x as i16).collect();
                let (hw, hh) = (w.div_ceil(2), h.div_ceil(2));
                let (mut iy, mut ix) = (vec![[0; 4]; hh], vec![[0; 4]; hw]);
                scalar::dwt_indices(h, &mut iy);
                scalar::dwt_indices(w, &mut ix);
                for scale in 1..=3 {
                    for sixteen in [false, true] {
                        let run = |k: Option<&Kernels>| {
                            let n = hw * hh;
                            let mut q = [vec![0i32; n], vec![0; n], vec![0; n], vec![0; n]];
                            let (mut lo, mut hi) = (vec![0i32; w], vec![0i32; w]);
                            let [a, hb, v, d] = &mut q;
                            let out = QuadMut { a, h: hb, v, d };
                            let (lo, hi) = (&mut lo, &mut hi);
                            match (k, sixteen) {
                                (None, true) => scalar::dwt2_s123(
                                    &src16, stride, w, scale, &iy, &ix, lo, hi, out, hw,
                                ),
                                (None, false) => scalar::dwt2_s123(
                                    &src, stride, w, scale, &iy, &ix, lo, hi, out, hw,
                                ),
                                (Some(k), true) => {
                                    k.dwt2_s123(&src16, stride, w, scale, &iy, &ix, lo, hi, out, hw)
                                }
                                (Some(k), false) => {
                                    k.dwt2_s123(&src, stride, w, scale, &iy, &ix, lo, hi, out, hw)
                                }
                            }
                            q
                        };
                        let want = run(None);
                        for level in sweep_levels("dwt_s123_kernels_match_scalar_at_every_level") {
                            let got = run(Some(&Kernels::for_level(level)));
                            assert_eq!(
                                got, want,
                                "{level:?} {w}x{h} kind {kind} scale {scale} i16 {sixteen}"
                            );
                        }
                    }
                }
            }
        }
    }
}

/// Every SIMD level's scale-0 CSF equals the scalar one where the CSF value takes every `i16`
/// value (a weight of 2^15 on the h and v bands makes it the sample itself), the narrowed
/// filter and centre values of `|-2^15|` included, on the whole band and on a ragged region.
#[test]
fn csf_s0_every_value_at_every_level() {
    let (w, h) = (256usize, 256usize);
    let src: Vec<i16> = (0..w * h).map(|i| i as u16 as i16).collect();
    let regs = [
        scalar::Region {
            top: 0,
            bottom: h,
            left: 0,
            right: w,
        },
        scalar::Region {
            top: 1,
            bottom: h - 2,
            left: 3,
            right: w - 5,
        },
    ];
    for irf in [[32768u16, 32768, 32768], [65535, 1, 40000]] {
        for reg in regs {
            let run = |k: CsfS0| {
                let (mut f, mut c) = (vec![5i32; w * h], vec![5i32; w * h]);
                k([&src, &src, &src], &mut f, &mut c, w, reg, irf);
                (f, c)
            };
            let want = run(scalar::csf_s0);
            for level in sweep_levels("csf_s0_every_value_at_every_level") {
                let got = run(Kernels::for_level(level).csf_s0);
                assert!(got == want, "{level:?} {irf:?} {reg:?}");
            }
        }
    }
}

/// Every SIMD level's CSF kernels equal the scalar ones on random and extreme bands of many
/// widths and regions, with weights on both sides of 2^15 / 2^31.
#[test]
fn csf_kernels_match_scalar_at_every_level() {
    let mut s = 0x5151_f00d_1234_4321u64;
    let mut rnd = move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    };
    for w in (1..=40).chain([47, 48, 49, 63, 64, 65, 127, 128, 331]) {
        let h = 3;
        let n = w * h;
        let regs = [
            scalar::Region {
                top: 0,
                bottom: h,
                left: 0,
                right: w,
            },
            scalar::Region {
                top: 1,
                bottom: 2,
                left: w.min(3),
                right: w - w / 5,
            },
        ];
        for kind in 0..2 {
            let src16: Vec<Vec<i16>> = (0..3)
                .map(|_| {
                    (0..n)
                        .map(|_| {
                            let v = rnd() as i16;
                            if kind == 0 {
                                v
                            } else {
                                [i16::MIN, i16::MAX, 0, -1][(v & 3) as usize]
                            }
                        })
                        .collect()
                })
                .collect();
            let src32: Vec<Vec<i32>> = (0..3)
                .map(|_| {
                    (0..n)
                        .map(|_| {
                            let v = rnd() as i32;
                            if kind == 0 {
                                v
                            } else {
                                [i32::MIN, i32::MAX, 0, -1][(v & 3) as usize]
                            }
                        })
                        .collect()
                })
                .collect();
            let irf16 = [rnd() as u16 | 0x8000, rnd() as u16 & 0x7fff, u16::MAX];
            let irf32 = [rnd() as u32 | 1 << 31, rnd() as u32 >> 1, u32::MAX];
            for reg in regs {
                // Outputs start as 5, so that a sample written outside `reg` shows.
                let run16 = |k: CsfS0| {
                    let (mut f, mut c) = (vec![5i32; n], vec![5i32; n]);
                    let src = [&src16[0][..], &src16[1][..], &src16[2][..]];
                    k(src, &mut f, &mut c, w, reg, irf16);
                    (f, c)
                };
                let run32 = |k: CsfS123| {
                    let (mut f, mut c) = (vec![5i32; n], vec![5i32; n]);
                    let src = [&src32[0][..], &src32[1][..], &src32[2][..]];
                    k(src, &mut f, &mut c, w, reg, irf32);
                    (f, c)
                };
                let (want16, want32) = (run16(scalar::csf_s0), run32(scalar::csf_s123));
                for level in sweep_levels("csf_kernels_match_scalar_at_every_level") {
                    let k = Kernels::for_level(level);
                    let (k0, k123) = (k.csf_s0, k.csf_s123);
                    assert!(
                        run16(k0) == want16,
                        "{level:?} s0 w {w} kind {kind} {reg:?}"
                    );
                    assert!(
                        run32(k123) == want32,
                        "{level:?} s123 w {w} kind {kind} {reg:?}"
                    );
                }
            }
        }
    }
}

/// Every SIMD level's denominator reductions equal the scalar ones on random and extreme bands
/// of many widths and regions, at the shifts the extractor uses and a few others.
#[test]
fn csf_den_kernels_match_scalar_at_every_level() {
    let mut s = 0x7a3c_0ffe_e15b_2d49u64;
    let mut rnd = move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    };
    for w in (1..=40).chain([47, 48, 49, 63, 64, 65, 127, 128, 331]) {
        let h = 4;
        let n = w * h;
        let regs = [
            scalar::Region {
                top: 0,
                bottom: h,
                left: 0,
                right: w,
            },
            scalar::Region {
                top: 1,
                bottom: 3,
                left: w.min(3),
                right: w - w / 5,
            },
        ];
        for kind in 0..3 {
            let src16: Vec<Vec<i16>> = (0..3)
                .map(|_| {
                    (0..n)
                        .map(|_| {
                            let v = rnd() as i16;
                            match kind {
                                0 => v,
                                1 => v % 500,
                                _ => [i16::MIN, i16::MAX, 0, -1][(v & 3) as usize],
                            }
                        })
                        .collect()
                })
                .collect();
            let src32: Vec<Vec<i32>> = (0..3)
                .map(|_| {
                    (0..n)
                        .map(|_| {
                            let v = rnd() as i32;
                            match kind {
                                0 => v,
                                1 => v % 70000,
                                _ => [i32::MIN, i32::MAX, 0, -1][(v & 3) as usize],
                            }
                        })
                        .collect()
                })
                .collect();
            let t16 = [&src16[0][..], &src16[1][..], &src16[2][..]];
            let t32 = [&src32[0][..], &src32[1][..], &src32[2][..]];
            for reg in regs {
                let (sc, sa) = scalar::den_s123_shifts(reg);
                for level in sweep_levels("csf_den_kernels_match_scalar_at_every_level") {
                    let k = Kernels::for_level(level);
                    for shift in [scalar::den_s0_shift(reg.area()), 0, 3, 20] {
                        assert_eq!(
                            (k.csf_den_s0)(t16, w, reg, shift),
                            scalar::csf_den_s0(t16, w, reg, shift),
                            "{level:?} s0 w {w} kind {kind} {reg:?} shift {shift}"
                        );
                    }
                    for scale in 1..=3 {
                        for (sc, sa) in [(sc, sa), (0, 0), (5, 1), (9, 2)] {
                            assert_eq!(
                                (k.csf_den_s123)(t32, w, reg, scale, sc, sa),
                                scalar::csf_den_s123(t32, w, reg, scale, sc, sa),
                                "{level:?} s123 w {w} kind {kind} {reg:?} scale {scale} {sc} {sa}"
                            );
                        }
                    }
                }
            }
        }
    }
}

/// Whole pictures through the extractor give the scalar kernels' values at every SIMD level, for
/// every bit depth, libvmaf variant and a few option sets (widths where libvmaf's AVX2 and
/// AVX-512 last DWT column applies included).
#[test]
fn whole_pictures_match_scalar_at_every_level() {
    let sets = [
        AdmParams::default(),
        AdmParams {
            enhn_gain_limit: 1.0,
            ..AdmParams::default()
        },
        AdmParams {
            skip_scale0: true,
            skip_aim: true,
            ..AdmParams::default()
        },
    ];
    for (w, h) in [(16, 16), (37, 23), (65, 48), (130, 36), (321, 35)] {
        for bpc in [8u32, 10, 12, 16] {
            let (r, d) = pattern(w, h, bpc, 25);
            for isa in LibvmafIsa::ALL {
                for (i, params) in sets.iter().enumerate() {
                    let run = |level: CpuLevel| {
                        let adm = Adm::new(w, h, bpc, *params, isa).unwrap();
                        compute(&mut adm.with_cpu_level(level), &r, &d, w, h, bpc)
                    };
                    let want = run(CpuLevel::Scalar);
                    for level in sweep_levels("whole_pictures_match_scalar_at_every_level") {
                        let got = run(level);
                        assert_eq!(got, want, "{level:?} {w}x{h} {bpc}-bit {isa} options {i}");
                    }
                }
            }
        }
    }
}

#[test]
fn vnni_level_installs_the_vnni_copies() {
    // The VNNI level must not silently keep the plain AVX-512 kernels (its sweeps would then
    // compare the same code twice).
    if cpu_level() >= CpuLevel::Avx512Vnni {
        let (plain, vnni) = (
            Kernels::for_level(CpuLevel::Avx512),
            Kernels::for_level(CpuLevel::Avx512Vnni),
        );
        assert_ne!(plain.csf_s0 as usize, vnni.csf_s0 as usize);
        assert_ne!(
            plain.dwt_s0_vertical_u8 as usize,
            vnni.dwt_s0_vertical_u8 as usize
        );
    }
}
