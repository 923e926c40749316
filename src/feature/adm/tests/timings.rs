//! Per-kernel timings (`cargo test --release --lib adm_kernel_timings -- --ignored --nocapture`).

use super::super::scalar::{self, Region};
use crate::cpu::supported_levels;
use crate::feature::adm::Kernels;

/// Prints the time per call of every ADM kernel entry at every level this machine runs, on the
/// rows and bands of a 1920-wide picture (scale-0 bands 960 wide, scale 1 480; min over
/// rounds that alternate the levels: a shared machine makes single runs noisy). `ADM_TIMING_ONLY=<name prefix>` times
/// only those kernels, `ADM_TIMING_REPEATS=<n>` longer (for a profiler).
fn tri16(v: &[Vec<i16>]) -> [&[i16]; 3] {
    [&v[0], &v[1], &v[2]]
}

fn tri32(v: &[Vec<i32>]) -> [&[i32]; 3] {
    [&v[0], &v[1], &v[2]]
}

#[test]
#[ignore = "a benchmark: run with --ignored --nocapture"]
fn adm_kernel_timings() {
    use std::hint::black_box;
    use std::time::Instant;

    let mut s = 0x1234_5678_9abc_def1u64;
    let mut rnd = move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    };
    let w = 1920;
    let (w0, w1) = (w / 2, w / 4);
    let rows8: Vec<Vec<u8>> = (0..4)
        .map(|_| (0..w).map(|_| rnd() as u8).collect())
        .collect();
    let rows16: Vec<Vec<u16>> = (0..4)
        .map(|_| (0..w).map(|_| rnd() as u16 & 1023).collect())
        .collect();
    let rowsi16: Vec<Vec<i16>> = (0..4)
        .map(|_| (0..w0).map(|_| (rnd() as i16) >> 2).collect())
        .collect();
    let rowsi32: Vec<Vec<i32>> = (0..4)
        .map(|_| (0..w1).map(|_| (rnd() as i32) >> 8).collect())
        .collect();
    let tmp16: Vec<i16> = (0..w).map(|_| (rnd() as i16) >> 2).collect();
    let tmp32: Vec<i32> = (0..w0).map(|_| (rnd() as i32) >> 8).collect();
    let (mut ix0, mut ix1) = (vec![[0usize; 4]; w0], vec![[0usize; 4]; w1]);
    scalar::dwt_indices(w, &mut ix0);
    scalar::dwt_indices(w0, &mut ix1);
    // Three 8-row bands per scale, for the region kernels.
    let h = 8;
    let band16 = |r: &mut dyn FnMut() -> u64| -> Vec<Vec<i16>> {
        (0..3)
            .map(|_| (0..w0 * h).map(|_| (r() as i16) >> 3).collect())
            .collect()
    };
    let band32 = |r: &mut dyn FnMut() -> u64| -> Vec<Vec<i32>> {
        (0..3)
            .map(|_| (0..w1 * h).map(|_| (r() as i32) >> 6).collect())
            .collect()
    };
    let (b16a, b16b, b16c) = (band16(&mut rnd), band16(&mut rnd), band16(&mut rnd));
    let (b32a, b32b, b32c) = (band32(&mut rnd), band32(&mut rnd), band32(&mut rnd));
    let reg = |bw: usize| Region {
        top: 0,
        bottom: h,
        left: 0,
        right: bw,
    };
    let only = std::env::var("ADM_TIMING_ONLY").unwrap_or_default();
    let repeats: usize = std::env::var("ADM_TIMING_REPEATS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(7);
    // Minimum per (kernel, level) over rounds that alternate the levels, so that a busy spell of
    // the machine does not land on one level alone.
    let best = std::cell::RefCell::new(Vec::<(String, crate::cpu::CpuLevel, f64)>::new());
    let time = |name: &str, level: crate::cpu::CpuLevel, f: &mut dyn FnMut()| {
        if !name.starts_with(only.as_str()) {
            return;
        }
        let t = Instant::now();
        for _ in 0..200 {
            f();
        }
        let us = t.elapsed().as_secs_f64() / 200.0 * 1e6;
        let mut best = best.borrow_mut();
        match best.iter_mut().find(|(n, l, _)| n == name && *l == level) {
            Some(e) => e.2 = e.2.min(us),
            None => best.push((name.to_string(), level, us)),
        }
    };
    for level in (0..repeats).flat_map(|_| supported_levels()) {
        let k = Kernels::for_level(level);
        let (mut lo16, mut hi16) = (vec![0i16; w], vec![0i16; w]);
        let (mut lo32, mut hi32) = (vec![0i32; w0], vec![0i32; w0]);
        let r8: [&[u8]; 4] = [&rows8[0], &rows8[1], &rows8[2], &rows8[3]];
        time("dwt_s0_vertical_u8", level, &mut || {
            (k.dwt_s0_vertical_u8)(r8, 8, &mut lo16, &mut hi16);
            black_box(&lo16);
        });
        let r16: [&[u16]; 4] = [&rows16[0], &rows16[1], &rows16[2], &rows16[3]];
        time("dwt_s0_vertical_u16", level, &mut || {
            (k.dwt_s0_vertical_u16)(r16, 10, &mut lo16, &mut hi16);
            black_box(&lo16);
        });
        let (mut o1, mut o2) = (vec![0i16; w0], vec![0i16; w0]);
        time("dwt_s0_horizontal", level, &mut || {
            (k.dwt_s0_horizontal)(&tmp16, &ix0, &mut o1, &mut o2);
            black_box(&o1);
        });
        let ri16: [&[i16]; 4] = [&rowsi16[0], &rowsi16[1], &rowsi16[2], &rowsi16[3]];
        time("dwt_s123_vertical_i16", level, &mut || {
            (k.dwt_s123_vertical_i16)(ri16, 1, &mut lo32[..w0], &mut hi32[..w0]);
            black_box(&lo32);
        });
        let ri32: [&[i32]; 4] = [&rowsi32[0], &rowsi32[1], &rowsi32[2], &rowsi32[3]];
        time("dwt_s123_vertical_i32", level, &mut || {
            (k.dwt_s123_vertical_i32)(ri32, 2, &mut lo32[..w1], &mut hi32[..w1]);
            black_box(&lo32);
        });
        let (mut p1, mut p2) = (vec![0i32; w1], vec![0i32; w1]);
        time("dwt_s123_horizontal", level, &mut || {
            (k.dwt_s123_horizontal)(&tmp32, &ix1, 1, &mut p1, &mut p2);
            black_box(&p1);
        });
        // The masker's threshold sums of scale 0 (1 and 2 bands' worth of them for scale 1).
        let (mut f16, mut c16) = (vec![0i32; w0 * h], vec![0i32; w0 * h]);
        time("csf_s0", level, &mut || {
            let irf = [40000, 40000, 30000];
            (k.csf_s0)(tri16(&b16a), &mut f16, &mut c16, w0, reg(w0), irf);
            black_box(&c16);
        });
        let (mut f32, mut c32) = (vec![0i32; w1 * h], vec![0i32; w1 * h]);
        time("csf_s123", level, &mut || {
            let rf = [1 << 30, 1 << 30, 3 << 29];
            (k.csf_s123)(tri32(&b32a), &mut f32, &mut c32, w1, reg(w1), rf);
            black_box(&c32);
        });
        time("csf_den_s0", level, &mut || {
            black_box((k.csf_den_s0)(tri16(&b16a), w0, reg(w0), 0));
        });
        time("csf_den_s123", level, &mut || {
            black_box((k.csf_den_s123)(tri32(&b32a), w1, reg(w1), 1, 9, 3));
        });
        time("cm_s0_interior", level, &mut || {
            let rows = (0, w0, 2 * w0);
            let irf = [40000, 40000, 30000];
            let (sa, sb) = ([20, 20, 22], [1 << 19, 1 << 19, 1 << 21]);
            let x = (k.cm_s0_interior)(tri16(&b16a), &f16, &c16, rows, 1..w0 - 1, irf, sa, sb);
            black_box(x);
        });
        time("cm_s123_interior", level, &mut || {
            let rows = (0, w1, 2 * w1);
            let rf = [1 << 30, 1 << 30, 3 << 29];
            let x = (k.cm_s123_interior)(tri32(&b32a), &f32, &c32, rows, 1..w1 - 1, rf, 20);
            black_box(x);
        });
        let (mut r16o, mut a16o) = (b16b.clone(), b16c.clone());
        time("decouple_s0", level, &mut || {
            let [r0, r1, r2] = &mut r16o[..] else {
                unreachable!()
            };
            let [a0, a1, a2] = &mut a16o[..] else {
                unreachable!()
            };
            let (rf, df) = (tri16(&b16a), tri16(&b16c));
            (k.decouple_s0)(rf, df, [r0, r1, r2], [a0, a1, a2], w0, reg(w0), 100.0);
            black_box(&r16o);
        });
        let (mut r32o, mut a32o) = (b32b.clone(), b32c.clone());
        time("decouple_s123", level, &mut || {
            let [r0, r1, r2] = &mut r32o[..] else {
                unreachable!()
            };
            let [a0, a1, a2] = &mut a32o[..] else {
                unreachable!()
            };
            let (rf, df) = (tri32(&b32a), tri32(&b32c));
            (k.decouple_s123)(rf, df, [r0, r1, r2], [a0, a1, a2], w1, reg(w1), 100.0);
            black_box(&r32o);
        });
    }
    for (name, level, us) in best.borrow().iter() {
        println!("{name:<28} {level:?}: {us:8.2} us");
    }
}
