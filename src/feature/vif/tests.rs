//! Unit tests of the integer VIF extractor.

use super::scalar::{self, StatLine, StatShifts, VifSums, WideAcc};
use super::tables::{self, FILTERS, FILTER_S0, FILTER_S1, PAD};
use super::{mirror, NumDen, Vif, DEF};
use crate::feature::options::OptValues;
use crate::feature::{ExtractorConfig, FrameInput};
use crate::picture::{ChromaLayout, PictureFormat, Plane};

/// Deterministic pseudo-random samples (xorshift), `bits` wide.
fn noise(n: usize, bits: u32, seed: u64) -> Vec<u16> {
    let mut s = seed | 1;
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s >> 11) as u16 & ((1u32 << bits) - 1) as u16
        })
        .collect()
}

/// A smooth textured image plus noise, in `bits` bits.
fn texture(w: usize, h: usize, bits: u32, seed: u64, amp: u32) -> Vec<u16> {
    let n = noise(w * h, 16, seed);
    let max = (1u32 << bits) - 1;
    (0..w * h)
        .map(|k| {
            let (x, y) = ((k % w) as f64, (k / w) as f64);
            let base =
                0.5 + 0.3 * (x * 0.21).sin() * (y * 0.13).cos() + 0.1 * ((x + y) * 0.05).sin();
            let v = base * max as f64 + (n[k] as u32 % (2 * amp + 1)) as f64 - amp as f64;
            v.clamp(0.0, max as f64) as u16
        })
        .collect()
}

fn run_u16(w: usize, h: usize, bpc: u8, r: &[u16], d: &[u16], stride: usize) -> [NumDen; 4] {
    let mut v = Vif::new(w, h, bpc, 100.0, false).unwrap();
    let rp = Plane::new_u16(r, w, h, stride).unwrap();
    let dp = Plane::new_u16(d, w, h, stride).unwrap();
    v.compute(&rp, &dp).unwrap()
}

fn run_u8(w: usize, h: usize, r: &[u8], d: &[u8], stride: usize) -> [NumDen; 4] {
    let mut v = Vif::new(w, h, 8, 100.0, false).unwrap();
    let rp = Plane::new_u8(r, w, h, stride).unwrap();
    let dp = Plane::new_u8(d, w, h, stride).unwrap();
    v.compute(&rp, &dp).unwrap()
}

fn to_u8(v: &[u16]) -> Vec<u8> {
    v.iter().map(|&x| x as u8).collect()
}

#[test]
fn flat_pictures_score_exactly_one() {
    // No local variance anywhere: every pixel takes the linear branch with sigma2 = 0, so
    // num == den == pixel count at every scale (libvmaf reports 1.0 for flat pairs).
    let (w, h) = (40, 30);
    let r = vec![90u8; w * h];
    let d = vec![140u8; w * h];
    let nd = run_u8(w, h, &r, &d, w);
    let mut n = (w * h) as f32;
    let (mut sw, mut sh) = (w, h);
    for s in nd {
        assert_eq!(s.num, n);
        assert_eq!(s.den, n);
        assert_eq!(s.num / s.den, 1.0);
        sw /= 2;
        sh /= 2;
        n = (sw * sh) as f32;
    }
}

#[test]
fn identical_textured_pictures_score_nearly_one() {
    // libvmaf's fixed point leaves identical pairs a hair below 1 at coarse scales (e.g.
    // 0.999998), never above 1 + 1e-6.
    let (w, h) = (96, 64);
    let r = to_u8(&texture(w, h, 8, 7, 20));
    for s in run_u8(w, h, &r, &r, w) {
        let score = s.num / s.den;
        assert!((score - 1.0).abs() < 1e-5, "{score}");
    }
}

#[test]
fn distortion_lowers_the_score() {
    let (w, h) = (96, 64);
    let r = texture(w, h, 8, 3, 10);
    let d: Vec<u16> = r
        .iter()
        .zip(noise(w * h, 6, 99))
        .map(|(&x, n)| (x as i32 + n as i32 - 32).clamp(0, 255) as u16)
        .collect();
    for s in run_u8(w, h, &to_u8(&r), &to_u8(&d), w) {
        let score = s.num / s.den;
        assert!(score > 0.0 && score < 0.99, "{score}");
    }
}

#[test]
fn high_bit_depth_of_scaled_8_bit_content_matches_8_bit() {
    // Scaling 8-bit samples by 2^(bpc-8) is undone exactly by the bpc-dependent shifts at scale 0
    // (means: (2^k a + 2^(k+7)) >> (k+8) == (a + 128) >> 8; squares likewise), so the 16-bit
    // path must reproduce the 8-bit path's num/den bit for bit.
    let (w, h) = (67, 45);
    let r = texture(w, h, 8, 11, 12);
    let d = texture(w, h, 8, 12, 25);
    let want = run_u8(w, h, &to_u8(&r), &to_u8(&d), w);
    for bpc in 9..=16u8 {
        let k = bpc - 8;
        let r2: Vec<u16> = r.iter().map(|&x| x << k).collect();
        let d2: Vec<u16> = d.iter().map(|&x| x << k).collect();
        assert_eq!(run_u16(w, h, bpc, &r2, &d2, w), want, "bpc {bpc}");
    }
}

#[test]
fn vertical_u8_and_u16_kernels_agree_for_8_bit_data() {
    let w = 37;
    let rows_r: Vec<Vec<u16>> = (0..17).map(|k| noise(w, 8, 100 + k)).collect();
    let rows_d: Vec<Vec<u16>> = (0..17).map(|k| noise(w, 8, 200 + k)).collect();
    let r8: Vec<Vec<u8>> = rows_r.iter().map(|r| to_u8(r)).collect();
    let d8: Vec<Vec<u8>> = rows_d.iter().map(|r| to_u8(r)).collect();
    let rr8: Vec<&[u8]> = r8.iter().map(|r| r.as_slice()).collect();
    let dr8: Vec<&[u8]> = d8.iter().map(|r| r.as_slice()).collect();
    let rr16: Vec<&[u16]> = rows_r.iter().map(|r| r.as_slice()).collect();
    let dr16: Vec<&[u16]> = rows_d.iter().map(|r| r.as_slice()).collect();
    let mut a = StatLine::new(w);
    let mut b = StatLine::new(w);
    scalar::stat_vertical_u8(&rr8, &dr8, w, &mut a);
    let sh = StatShifts::for_scale(0, 8);
    scalar::stat_vertical_u16(
        &rr16,
        &dr16,
        &FILTER_S0,
        sh,
        w,
        &mut b,
        &mut WideAcc::new(w),
    );
    assert_eq!(a.mu1, b.mu1);
    assert_eq!(a.mu2, b.mu2);
    assert_eq!(a.xx, b.xx);
    assert_eq!(a.yy, b.yy);
    assert_eq!(a.xy, b.xy);
}

#[test]
fn filter_steps_by_hand() {
    // A constant 100 through the scale-1 downsampling taps (sum 65536): vertical
    // (100 * 65536 + 128) >> 8 = 25600, horizontal (25600 * 65536 + 32768) >> 16 = 25600.
    let w = 6;
    let row = [100u8; 6];
    let rows: Vec<&[u8]> = vec![&row; 9];
    let (mut tr, mut td) = (vec![0u16; w + 2 * PAD], vec![0u16; w + 2 * PAD]);
    scalar::subsample_vertical(&rows, &rows, &FILTER_S1, 128, 8, w, &mut tr, &mut td);
    assert_eq!(&tr[PAD..PAD + w], &[25600; 6]);
    scalar::pad_line(&mut tr, w, 4);
    scalar::pad_line(&mut td, w, 4);
    let (mut or, mut od) = ([0u16; 3], [0u16; 3]);
    scalar::subsample_horizontal(&tr, &td, &FILTER_S1, w, &mut or, &mut od);
    assert_eq!(or, [25600; 3]);

    // An impulse of 1 on the centre row: vertical (14692 + 128) >> 8 = 57 in that column only.
    let zero = [0u8; 6];
    let mut imp = [0u8; 6];
    imp[2] = 1;
    let mut rows: Vec<&[u8]> = vec![&zero; 9];
    rows[4] = &imp;
    scalar::subsample_vertical(&rows, &rows, &FILTER_S1, 128, 8, w, &mut tr, &mut td);
    assert_eq!(&tr[PAD..PAD + w], &[0, 0, 57, 0, 0, 0]);
    // Horizontally at even columns 0, 2, 4, where the mirror padding puts copies of the impulse
    // at columns -2 and 8: 57 * (7925 + 7925), 57 * (14692 + 1244), 57 * (7925 + 1244), each
    // rounded by 16 bits.
    scalar::pad_line(&mut tr, w, 4);
    scalar::pad_line(&mut td, w, 4);
    scalar::subsample_horizontal(&tr, &td, &FILTER_S1, w, &mut or, &mut od);
    let q = |f: u32| ((57 * f + 32768) >> 16) as u16;
    assert_eq!(or, [q(7925 + 7925), q(14692 + 1244), q(7925 + 1244)]);
    assert_eq!(or, [14, 14, 8]);

    // 16-bit vertical statistic at scale 0, 10-bit: constant 1000 gives mu = (65536000 + 512)
    // >> 10 = 64000 and squares (65536 * 10^6 + 8) >> 4 = 4096 * 10^6.
    let c = [1000u16; 4];
    let rows: Vec<&[u16]> = vec![&c; 17];
    let mut line = StatLine::new(4);
    let sh = StatShifts::for_scale(0, 10);
    assert_eq!(
        (sh.mu_round, sh.mu_shift, sh.sq_round, sh.sq_shift),
        (512, 10, 8, 4)
    );
    scalar::stat_vertical_u16(
        &rows,
        &rows,
        &FILTER_S0,
        sh,
        4,
        &mut line,
        &mut WideAcc::new(4),
    );
    assert_eq!(&line.mu1[PAD..PAD + 4], &[64000; 4]);
    assert_eq!(&line.xx[PAD..PAD + 4], &[4_096_000_000; 4]);
}

#[test]
fn vif_term_branches() {
    let t = tables::log2_table();
    // Below the noise floor: linear term.
    let mut s = VifSums::default();
    scalar::vif_term(1000, -5, 10, 100.0, t, &mut s);
    scalar::vif_term(1000, 700, 10, 100.0, t, &mut s);
    assert_eq!(
        s,
        VifSums {
            num_log: 0,
            den_log: 0,
            num_non_log: 700,
            den_non_log: 2
        }
    );
    // sigma1 = sigma2 = sigma12 = 2^18: den term log2(2^18 + 2^17) - 17 in Q11; the gain is
    // just below 1 and sv_sq truncates to 0, so numerator = log2(2^17 + (g^2 * 2^18 as int)).
    let mut s = VifSums::default();
    let x = 1 << 18;
    scalar::vif_term(x, x, x, 100.0, t, &mut s);
    let den = tables::log2_32(t, (1 << 18) + (1 << 17)) - 2048 * 17;
    // 393216 = 49152 << 3: table entry of 49152 plus 3 in Q11, i.e. log2(1.5) + 1 = 3246 / 2048.
    assert_eq!(den, t[49152] as i32 + 2048 * 3 - 2048 * 17);
    assert_eq!(den, 3246);
    assert_eq!(s.den_log, den as i64);
    let g = x as f64 / (x as f64 + tables::EPS);
    let n = tables::log2_64(t, (g * g * x as f64) as u64 + (1 << 17)) - tables::log2_64(t, 1 << 17);
    assert_eq!(s.num_log, n as i64);
    assert_eq!((s.num_non_log, s.den_non_log), (0, 0));
}

#[test]
fn log2_table_matches_log2f() {
    let t = tables::log2_table();
    assert_eq!(t[32766], 0);
    assert_eq!(t[32767], 30720); // round(log2(32767) * 2048) = round(30719.91)
    assert_eq!(t[32768], 30720);
    assert_eq!(t[65535], 32768);
    // The table is defined through correctly rounded log2f; the platform's log2f (glibc, whose
    // results libvmaf's table is built from) agrees on every entry.
    for i in 32767u32..65536 {
        let platform = (((i as f32).log2() * 2048.0) as f64).round() as u16;
        assert_eq!(t[i as usize], platform, "entry {i}");
    }
}

#[test]
fn compact_log2_table_matches_the_table() {
    let (t, c) = (tables::log2_table(), tables::log2_compact());
    assert_eq!(c[0], 0);
    for i in 1usize << 15..1 << 16 {
        let run = c[1 + (i >> 3) - (1 << 12)];
        let (s, b) = (
            (run >> 12) as usize,
            (run & 0xfff) + tables::LOG2_COMPACT_BASE,
        );
        let e = b + ((i & 7) >= s) as u16;
        assert_eq!(e, t[i], "index {i}");
    }
}

#[test]
fn padding_reflects_repeatedly() {
    // [a, b, c] padded by 4: libvmaf's copy order ([-f] = [f], then [w-1+f] = [w-1-f], for
    // f = 1..=4) yields a b c b | a b c | b a b c.
    let w = 3;
    let mut v = vec![0u32; w + 2 * PAD];
    v[PAD..PAD + 3].copy_from_slice(&[1, 2, 3]);
    scalar::pad_line(&mut v, w, 4);
    assert_eq!(&v[PAD - 4..PAD + w + 4], &[1, 2, 3, 2, 1, 2, 3, 2, 1, 2, 3]);
    // Row mirroring follows the same rule.
    let rows: Vec<usize> = (-4..7).map(|y| mirror(y, 3)).collect();
    assert_eq!(rows, [0, 1, 2, 1, 0, 1, 2, 1, 0, 1, 2]);
    // and the simple reflection for tall planes
    assert_eq!(mirror(-8, 16), 8);
    assert_eq!(mirror(15 + 8, 16), 7);
}

#[test]
fn odd_sizes_and_strides_do_not_panic() {
    for &(w, h) in &[(16, 16), (17, 19), (33, 16), (16, 47), (31, 17), (18, 33)] {
        for bpc in [8u8, 10, 12, 16] {
            let stride = w + 5;
            let r = texture(stride, h, bpc as u32, 5, 40);
            let d = texture(stride, h, bpc as u32, 6, 90);
            let nd = if bpc == 8 {
                run_u8(w, h, &to_u8(&r), &to_u8(&d), stride)
            } else {
                run_u16(w, h, bpc, &r, &d, stride)
            };
            for s in nd {
                assert!(
                    s.den > 0.0 && (s.num / s.den).is_finite(),
                    "{w}x{h} {bpc}: {s:?}"
                );
            }
        }
    }
    assert!(Vif::new(15, 40, 8, 100.0, false).is_err());
    assert!(Vif::new(40, 15, 8, 100.0, false).is_err());
    assert!(Vif::new(40, 40, 17, 100.0, false).is_err());
}

#[test]
fn extreme_16_bit_values_do_not_overflow() {
    // Full-range noise maximises every variance term; debug builds would panic on an overflow
    // the C code does not have.
    let (w, h) = (48, 40);
    let r = noise(w * h, 16, 1);
    let d = noise(w * h, 16, 2);
    let z = vec![0u16; w * h];
    let m = vec![u16::MAX; w * h];
    for (a, b) in [(&r, &d), (&r, &r), (&z, &m), (&m, &r)] {
        for s in run_u16(w, h, 16, a, b, w) {
            assert!(s.den > 0.0);
        }
    }
    let r8 = to_u8(&noise(w * h, 8, 3));
    let d8 = to_u8(&noise(w * h, 8, 4));
    for s in run_u8(w, h, &r8, &d8, w) {
        assert!(s.den > 0.0);
    }
}

#[test]
fn extractor_options_names_and_skip_scale0() {
    let (w, h) = (64, 48);
    let r = to_u8(&texture(w, h, 8, 21, 10));
    let d = to_u8(&texture(w, h, 8, 22, 30));
    let format = PictureFormat {
        width: w,
        height: h,
        bpc: 8,
        layout: ChromaLayout::Yuv420,
    };
    let run = |opts: OptValues| {
        let mut ex = (DEF.create)(&ExtractorConfig {
            format,
            opts,
            libvmaf_isa: crate::fidelity::LibvmafIsa::C,
        })
        .unwrap();
        let input = FrameInput::luma(
            Plane::new_u8(&r, w, h, w).unwrap(),
            Plane::new_u8(&d, w, h, w).unwrap(),
            0,
        );
        let mut out = [f64::NAN; 4];
        ex.extract(&input, &mut out).unwrap();
        out
    };
    let base = run(OptValues::defaults(DEF.options));
    let nd = run_u8(w, h, &r, &d, w);
    for s in 0..4 {
        assert_eq!(base[s], (nd[s].num / nd[s].den) as f64);
    }

    let mut o = OptValues::defaults(DEF.options);
    o.set("vif_skip_scale0", "true").unwrap();
    assert_eq!(
        o.feature_name("VMAF_integer_feature_vif_scale0_score"),
        "integer_vif_scale0_ssclz"
    );
    let skipped = run(o);
    assert_eq!(skipped[0], 0.0);
    assert_eq!(&skipped[1..], &base[1..]);

    let mut o = OptValues::defaults(DEF.options);
    o.set("vif_enhn_gain_limit", "1").unwrap();
    o.set("debug", "true").unwrap();
    assert_eq!(
        o.feature_name("VMAF_integer_feature_vif_scale2_score"),
        "integer_vif_scale2_egl_1"
    );
    let limited = run(o);
    for s in 0..4 {
        assert!(limited[s] <= base[s]);
    }
    assert!(OptValues::defaults(DEF.options).set("egl", "0.5").is_err());
    assert_eq!(
        FILTERS.iter().map(|f| f.len()).collect::<Vec<_>>(),
        [17, 9, 5, 3]
    );
    for f in FILTERS {
        assert_eq!(f.iter().map(|&c| c as u32).sum::<u32>(), 65536);
    }
}

/// The 8-bit samples' plane at 8 bits, else the 16-bit ones'.
fn plane_of<'a>(bpc: u8, v8: &'a [u8], v16: &'a [u16], w: usize, h: usize) -> Plane<'a> {
    if bpc == 8 {
        Plane::new_u8(v8, w, h, w).unwrap()
    } else {
        Plane::new_u16(v16, w, h, w).unwrap()
    }
}

/// Ladder scoring: two renditions' instances, the first filling the frame's shared reference
/// side and the second reading it, give each rendition's own [`Vif::compute`] values, frame
/// after frame (the state is refilled, not stale), at every CPU level (those without split
/// kernels compute whole), for options that change the reference side or only the distorted
/// one; an instance refuses a state filled with other options.
#[test]
fn shared_reference_side_equals_own() {
    use crate::cpu::sweep_levels;
    use crate::feature::SharedReference;
    for level in sweep_levels("vif shared reference side") {
        for (w, h) in [(83usize, 51usize), (300, 40)] {
            for bpc in [8u8, 10] {
                for (egl, skip) in [(100.0, false), (1.5, false), (100.0, true)] {
                    let mk = || {
                        Vif::new(w, h, bpc, egl, skip)
                            .unwrap()
                            .with_cpu_level(level)
                    };
                    let (mut own, mut a, mut b) = (mk(), mk(), mk());
                    let mut shared = SharedReference::default();
                    for f in 0..3u64 {
                        shared.clear();
                        let bits = bpc as u32;
                        let r = texture(w, h, bits, 11 + f, 6 + 3 * f as u32);
                        let d1 = texture(w, h, bits, 40 + f, 20);
                        let d2: Vec<u16> = r.iter().map(|&x| x >> 1).collect();
                        let (r8, d18, d28) = (to_u8(&r), to_u8(&d1), to_u8(&d2));
                        let (rp, p1, p2) = (
                            plane_of(bpc, &r8, &r, w, h),
                            plane_of(bpc, &d18, &d1, w, h),
                            plane_of(bpc, &d28, &d2, w, h),
                        );
                        let got1 = a.compute_shared(&rp, &p1, &shared).unwrap();
                        let got2 = b.compute_shared(&rp, &p2, &shared).unwrap();
                        let what = format!("{level:?} {w}x{h} bpc {bpc} egl {egl} skip {skip}");
                        assert_eq!(got1, own.compute(&rp, &p1).unwrap(), "{what}");
                        assert_eq!(got2, own.compute(&rp, &p2).unwrap(), "{what}");
                    }
                }
            }
        }
        // A state filled by an instance with other options is refused, not misread (at levels
        // with split kernels; the others compute whole and read no state).
        if super::Kernels::for_level(level).split.is_some() {
            let (w, h) = (64, 32);
            let r = texture(w, h, 8, 3, 10);
            let r8 = to_u8(&r);
            let rp = Plane::new_u8(&r8, w, h, w).unwrap();
            let shared = SharedReference::default();
            let mut a = Vif::new(w, h, 8, 100.0, false)
                .unwrap()
                .with_cpu_level(level);
            let mut b = Vif::new(w, h, 8, 100.0, true)
                .unwrap()
                .with_cpu_level(level);
            a.compute_shared(&rp, &rp, &shared).unwrap();
            let e = b.compute_shared(&rp, &rp, &shared).unwrap_err();
            assert!(e.to_string().contains("other options"), "{e}");
        }
    }
}

#[test]
fn wrong_sample_width_or_size_is_an_error() {
    let (w, h) = (32, 32);
    let mut v = Vif::new(w, h, 10, 100.0, false).unwrap();
    let b8 = vec![0u8; w * h];
    let p8 = Plane::new_u8(&b8, w, h, w).unwrap();
    assert!(v.compute(&p8, &p8).is_err());
    let b16 = vec![0u16; w * h];
    let small = Plane::new_u16(&b16, w - 1, h, w).unwrap();
    assert!(v.compute(&small, &small).is_err());
}

// ---------------------------------------------------------------------------------------------
// SIMD kernels against the scalar specification
// ---------------------------------------------------------------------------------------------

mod simd {
    use super::super::Kernels;
    use super::*;
    use crate::cpu::{sweep_levels, CpuLevel};

    /// Widths covering every vector remainder (of 8, 16 and 32 columns), odd sizes, libvmaf's
    /// trigger widths and the 256-column chunks of the horizontal passes' 16-bit copies.
    fn widths() -> impl Iterator<Item = usize> {
        (1..=70).chain([95, 127, 128, 129, 255, 256, 257, 289, 321, 322, 543, 1920])
    }

    #[test]
    fn each_simd_level_installs_its_own_kernels() {
        // A level with kernels of its own must not silently fall back to the lower level's (the
        // sweeps below would then compare the same code twice).
        let (avx2, avx512) = (
            Kernels::for_level(CpuLevel::Avx2),
            Kernels::for_level(CpuLevel::Avx512),
        );
        #[cfg(target_arch = "x86_64")]
        if crate::cpu::cpu_level() >= CpuLevel::Avx512
            && is_x86_feature_detected!("avx512cd")
            && is_x86_feature_detected!("avx512dq")
        {
            assert_ne!(
                avx2.stat_horizontal as usize,
                avx512.stat_horizontal as usize
            );
            assert_ne!(
                avx2.stat_vertical_u8 as usize,
                avx512.stat_vertical_u8 as usize
            );
        }
        let _ = (avx2, avx512);
        // The VNNI copies are other functions than the plain AVX2 and AVX-512 ones.
        #[cfg(target_arch = "x86_64")]
        if crate::cpu::supported_levels().any(|l| l == CpuLevel::Avx2Vnni) {
            let vnni = Kernels::for_level(CpuLevel::Avx2Vnni);
            assert_ne!(avx2.stat_horizontal as usize, vnni.stat_horizontal as usize);
            assert_ne!(
                avx2.stat_vertical_u8_x2.map(|f| f as usize),
                vnni.stat_vertical_u8_x2.map(|f| f as usize)
            );
        }
        #[cfg(target_arch = "x86_64")]
        if crate::cpu::cpu_level() >= CpuLevel::Avx512Vnni {
            let vnni = Kernels::for_level(CpuLevel::Avx512Vnni);
            assert_ne!(
                avx512.stat_horizontal as usize,
                vnni.stat_horizontal as usize
            );
            assert_ne!(
                avx512.stat_vertical_u8 as usize,
                vnni.stat_vertical_u8 as usize
            );
        }
    }

    /// The SIMD levels this machine runs, with their kernels.
    fn simd_kernels() -> Vec<Kernels> {
        sweep_levels("vif simd kernel sweeps")
            .filter(|&l| l > CpuLevel::Scalar)
            .map(Kernels::for_level)
            .collect()
    }

    /// Rows of random `bits`-bit samples; `seed` odd values lean to the top of the range (to
    /// exercise the widest sums).
    fn rows(n: usize, w: usize, bits: u32, seed: u64) -> Vec<Vec<u16>> {
        let max = ((1u32 << bits) - 1) as u16;
        (0..n as u64)
            .map(|k| {
                // `noise` ORs its seed with 1: even offsets keep the rows distinct.
                let v = noise(w, bits, seed * 1000 + 2 * k);
                if seed % 2 == 1 {
                    v.iter().map(|&x| max - (x & 7)).collect()
                } else {
                    v
                }
            })
            .collect()
    }

    fn lines_eq(a: &StatLine, b: &StatLine, w: usize) -> bool {
        let c = PAD..PAD + w;
        a.mu1[c.clone()] == b.mu1[c.clone()]
            && a.mu2[c.clone()] == b.mu2[c.clone()]
            && a.xx[c.clone()] == b.xx[c.clone()]
            && a.yy[c.clone()] == b.yy[c.clone()]
            && a.xy[c.clone()] == b.xy[c]
    }

    /// `got` (a distorted-side vertical pass) holds `want`'s distorted-side lines (its
    /// reference-side lines mean nothing).
    fn dis_lines_eq(got: &StatLine, want: &StatLine, w: usize) -> bool {
        let c = PAD..PAD + w;
        got.mu2[c.clone()] == want.mu2[c.clone()]
            && got.yy[c.clone()] == want.yy[c.clone()]
            && got.xy[c.clone()] == want.xy[c]
    }

    /// The two-row vertical pass equals two single passes (its windows: rows 0..17, 1..18), in
    /// full and distorted-side-only forms, at every width class (tails included).
    #[test]
    fn stat_vertical_x2_matches_scalar() {
        let mut ran = 0;
        for k in simd_kernels() {
            let Some(x2) = k.stat_vertical_u8_x2 else {
                continue;
            };
            let dis_x2 = k.split.and_then(|sp| sp.stat_vertical_u8_dis_x2);
            for w in widths() {
                for seed in 1..=3 {
                    let (r, d) = (rows(18, w, 8, seed), rows(18, w, 8, seed + 10));
                    let (r8, d8): (Vec<Vec<u8>>, Vec<Vec<u8>>) = (
                        r.iter().map(|x| to_u8(x)).collect(),
                        d.iter().map(|x| to_u8(x)).collect(),
                    );
                    let rr: Vec<&[u8]> = r8.iter().map(|x| x.as_slice()).collect();
                    let dr: Vec<&[u8]> = d8.iter().map(|x| x.as_slice()).collect();
                    let (mut a0, mut a1) = (StatLine::new(w), StatLine::new(w));
                    x2(&rr, &dr, w, [&mut a0, &mut a1]);
                    for (line, got) in [(0, &a0), (1, &a1)] {
                        let mut want = StatLine::new(w);
                        let win = line..line + 17;
                        scalar::stat_vertical_u8(&rr[win.clone()], &dr[win], w, &mut want);
                        assert!(
                            lines_eq(got, &want, w),
                            "{:?} x2 line {line} w {w}",
                            k.level()
                        );
                        if let Some(f) = dis_x2 {
                            let (mut c0, mut c1) = (StatLine::new(w), StatLine::new(w));
                            f(&rr, &dr, w, [&mut c0, &mut c1]);
                            let c = if line == 0 { &c0 } else { &c1 };
                            assert!(dis_lines_eq(c, &want, w), "{:?} dis x2 w {w}", k.level());
                        }
                    }
                    for (scale, bits) in
                        [(0, 8), (0, 10), (0, 12), (0, 16), (1, 16), (2, 16), (3, 16)]
                    {
                        let filt = FILTERS[scale];
                        let n = filt.len() + 1;
                        let (r, d) = (rows(n, w, bits, seed), rows(n, w, bits, seed + 20));
                        let rr: Vec<&[u16]> = r.iter().map(|x| x.as_slice()).collect();
                        let dr: Vec<&[u16]> = d.iter().map(|x| x.as_slice()).collect();
                        let sh = StatShifts::for_scale(scale, bits);
                        let mut acc = WideAcc::new(w);
                        let Some(x2) = k.stat_vertical_u16_x2 else {
                            // (A level without a 16-bit two-row pass.)
                            continue;
                        };
                        let (mut a0, mut a1) = (StatLine::new(w), StatLine::new(w));
                        x2(&rr, &dr, filt, sh, w, [&mut a0, &mut a1], &mut acc);
                        let dis = k.split.and_then(|sp| sp.stat_vertical_u16_dis_x2);
                        let (mut c0, mut c1) = (StatLine::new(w), StatLine::new(w));
                        if let Some(f) = dis {
                            f(&rr, &dr, filt, sh, w, [&mut c0, &mut c1], &mut acc);
                        }
                        for (line, got, dgot) in [(0, &a0, &c0), (1, &a1, &c1)] {
                            let win = line..line + filt.len();
                            let mut want = StatLine::new(w);
                            let (rs, ds) = (&rr[win.clone()], &dr[win]);
                            scalar::stat_vertical_u16(rs, ds, filt, sh, w, &mut want, &mut acc);
                            let what = format!("w {w} scale {scale} bits {bits} line {line}");
                            assert!(lines_eq(got, &want, w), "{:?} u16 x2 {what}", k.level());
                            if dis.is_some() {
                                let ok = dis_lines_eq(dgot, &want, w);
                                assert!(ok, "{:?} u16 dis x2 {what}", k.level());
                            }
                        }
                    }
                    ran += 1;
                }
            }
        }
        if crate::cpu::cpu_level() >= crate::cpu::CpuLevel::Avx2 {
            assert!(
                ran > 0,
                "the SIMD levels have two-row passes and none was tested"
            );
        } else {
            println!(
                "stat_vertical_x2_matches_scalar: no AVX2 on this host, no two-row pass to test"
            );
        }
    }

    /// The two-row statistic kernel adds what the scalar passes of its two rows add, at every
    /// width class, on random rows (some at the top of the range) and on flat ones (every pixel
    /// below the noise floor), with the default and a small gain limit, one scratch reused
    /// across the widths, widest first; a scratch made for a narrower row is refused with
    /// nothing added.
    #[test]
    fn stat_rows_x2_matches_scalar() {
        let log2 = tables::log2_table();
        let mut ran = 0;
        for k in simd_kernels() {
            let Some(rows_x2) = k.stat_rows_u8_x2 else {
                continue;
            };
            let mut shared = WideAcc::new(widths().max().unwrap_or(0));
            let mut ws: Vec<usize> = widths().filter(|&w| w >= 16).collect();
            ws.reverse();
            for w in ws {
                for seed in 0..=3 {
                    let (r, d) = if seed == 0 {
                        (vec![vec![90; w]; 18], vec![vec![91; w]; 18])
                    } else {
                        (rows(18, w, 8, seed), rows(18, w, 8, seed + 10))
                    };
                    let (r8, d8): (Vec<Vec<u8>>, Vec<Vec<u8>>) = (
                        r.iter().map(|x| to_u8(x)).collect(),
                        d.iter().map(|x| to_u8(x)).collect(),
                    );
                    let rr: Vec<&[u8]> = r8.iter().map(|x| x.as_slice()).collect();
                    let dr: Vec<&[u8]> = d8.iter().map(|x| x.as_slice()).collect();
                    for gain in [100.0, 1.5] {
                        let mut want = VifSums::default();
                        for line in 0..2 {
                            let win = line..line + 17;
                            let mut l = StatLine::new(w);
                            scalar::stat_vertical_u8(&rr[win.clone()], &dr[win], w, &mut l);
                            scalar::pad_stat_line(&mut l, w, 8);
                            let mut acc = WideAcc::new(w);
                            scalar::stat_horizontal(
                                &l, &FILTER_S0, w, gain, log2, &mut acc, &mut want,
                            );
                        }
                        // One scratch for every width, as an instance keeps it from row to
                        // row: the values a wider row left past this one's end are read by the
                        // masked-off columns, and must not count.
                        let mut got = VifSums::default();
                        let ok = rows_x2(&rr, &dr, w, gain, log2, &mut shared, &mut got);
                        assert!(ok, "{:?} refused a scratch that fits, w {w}", k.level());
                        assert_eq!(got, want, "{:?} w {w} seed {seed} gain {gain}", k.level());
                        ran += 1;
                    }
                }
            }
            let w = 64;
            let r8 = vec![vec![7u8; w]; 18];
            let rr: Vec<&[u8]> = r8.iter().map(|x| x.as_slice()).collect();
            let mut got = VifSums::default();
            let narrow = &mut WideAcc::new(w / 2);
            assert!(!rows_x2(&rr, &rr, w, 100.0, log2, narrow, &mut got));
            assert_eq!(got, VifSums::default());
        }
        if crate::cpu::cpu_level() >= crate::cpu::CpuLevel::Avx512 {
            assert!(
                ran > 0,
                "the AVX-512 level has a two-row kernel and none was tested"
            );
        }
    }

    #[test]
    fn stat_vertical_matches_scalar() {
        for k in simd_kernels() {
            for w in widths() {
                for seed in 1..=2 {
                    let (r, d) = (rows(17, w, 8, seed), rows(17, w, 8, seed + 10));
                    let (r8, d8): (Vec<Vec<u8>>, Vec<Vec<u8>>) = (
                        r.iter().map(|x| to_u8(x)).collect(),
                        d.iter().map(|x| to_u8(x)).collect(),
                    );
                    let rr: Vec<&[u8]> = r8.iter().map(|x| x.as_slice()).collect();
                    let dr: Vec<&[u8]> = d8.iter().map(|x| x.as_slice()).collect();
                    let (mut a, mut b) = (StatLine::new(w), StatLine::new(w));
                    (k.stat_vertical_u8)(&rr, &dr, w, &mut a);
                    scalar::stat_vertical_u8(&rr, &dr, w, &mut b);
                    assert!(lines_eq(&a, &b, w), "{:?} u8 w {w}", k.level());
                    if let Some(sp) = k.split {
                        let mut c = StatLine::new(w);
                        (sp.stat_vertical_u8_dis)(&rr, &dr, w, &mut c);
                        assert!(dis_lines_eq(&c, &b, w), "{:?} u8 dis w {w}", k.level());
                    }
                    for (scale, bits) in
                        [(0, 9), (0, 10), (0, 12), (0, 16), (1, 16), (2, 16), (3, 16)]
                    {
                        let filt = FILTERS[scale];
                        let (r, d) = (
                            rows(filt.len(), w, bits, seed),
                            rows(filt.len(), w, bits, seed + 20),
                        );
                        let rr: Vec<&[u16]> = r.iter().map(|x| x.as_slice()).collect();
                        let dr: Vec<&[u16]> = d.iter().map(|x| x.as_slice()).collect();
                        let sh = StatShifts::for_scale(scale, bits);
                        let (mut a, mut b) = (StatLine::new(w), StatLine::new(w));
                        let mut acc = WideAcc::new(w);
                        (k.stat_vertical_u16)(&rr, &dr, filt, sh, w, &mut a, &mut acc);
                        scalar::stat_vertical_u16(&rr, &dr, filt, sh, w, &mut b, &mut acc);
                        assert!(
                            lines_eq(&a, &b, w),
                            "{:?} u16 w {w} scale {scale} bits {bits}",
                            k.level()
                        );
                        if let Some(sp) = k.split {
                            let mut c = StatLine::new(w);
                            (sp.stat_vertical_u16_dis)(&rr, &dr, filt, sh, w, &mut c, &mut acc);
                            assert!(
                                dis_lines_eq(&c, &b, w),
                                "{:?} u16 dis w {w} scale {scale} bits {bits}",
                                k.level()
                            );
                        }
                    }
                }
            }
        }
    }

    /// A padded line of random values: `mu` lines 16-bit, squares full 32-bit.
    fn random_line(w: usize, seed: u64, narrow_sq: bool) -> StatLine {
        let n = w + 2 * PAD;
        let r32 = |s: u64, bits: u32| -> Vec<u32> {
            let (a, b) = (noise(n, 16, s), noise(n, 16, s + 7));
            a.iter()
                .zip(&b)
                .map(|(&a, &b)| ((a as u32) << 16 | b as u32) >> (32 - bits))
                .collect()
        };
        // Narrow squares give small variances (the linear branch); wide ones mostly the log one.
        let sq_bits = if narrow_sq { 28 } else { 32 };
        StatLine {
            mu1: r32(seed, 16),
            mu2: r32(seed + 1, 16),
            xx: r32(seed + 2, sq_bits),
            yy: r32(seed + 3, sq_bits),
            xy: r32(seed + 4, sq_bits),
        }
    }

    /// A padded line whose squares are all `sq` and means all 65535: the largest sums the
    /// `madd` path's 32-bit halves take (`sq` with all low 16 bits set maxes the low half,
    /// whose rounding constant is added in the same 32 bits).
    fn constant_line(w: usize, sq: u32) -> StatLine {
        let n = w + 2 * PAD;
        StatLine {
            mu1: vec![0xffff; n],
            mu2: vec![0xffff; n],
            xx: vec![sq; n],
            yy: vec![sq; n],
            xy: vec![sq; n],
        }
    }

    #[test]
    fn stat_horizontal_matches_scalar() {
        let log2 = tables::log2_table();
        for k in simd_kernels() {
            for w in widths() {
                let lines = [(1, false), (2, true), (3, true)]
                    .map(|(seed, narrow)| random_line(w, seed * 100 + w as u64, narrow))
                    .into_iter()
                    .chain([u32::MAX, 0xffff, 0xffff_0000].map(|sq| constant_line(w, sq)));
                for line in lines {
                    for filt in FILTERS {
                        // 2000 exceeds what the vector log path converts exactly: its fallback.
                        for gain in [1.0, 2.5, 100.0, 2000.0] {
                            let mut acc = WideAcc::new(w);
                            let (mut a, mut b) = (VifSums::default(), VifSums::default());
                            (k.stat_horizontal)(&line, filt, w, gain, log2, &mut acc, &mut a);
                            scalar::stat_horizontal(&line, filt, w, gain, log2, &mut acc, &mut b);
                            assert_eq!(a, b, "{:?} w {w} taps {}", k.level(), filt.len());
                        }
                    }
                }
            }
        }
    }

    /// Ladder scoring's split horizontal pass: the first rendition's pass (which writes the
    /// reference side) gives the whole statistic's sums; another rendition's pass, reading that
    /// side with its own lines' reference side scrambled (it must not read them), gives the
    /// sums that depend on the distorted picture and nothing else. Means above 16 bits stop a
    /// split pass instead of being misread.
    #[test]
    fn split_horizontal_equals_whole() {
        use super::super::{RefRow, RefRowMut, SHARED_ROW_ALIGN};
        let log2 = tables::log2_table();
        let mut ran = false;
        for k in simd_kernels() {
            let Some(sp) = k.split else { continue };
            ran = true;
            for w in widths() {
                let n = w.div_ceil(SHARED_ROW_ALIGN) * SHARED_ROW_ALIGN;
                for (seed, narrow) in [(1, false), (2, true), (3, true)] {
                    let line = random_line(w, seed * 100 + w as u64, narrow);
                    let mut other = random_line(w, seed * 100 + w as u64 + 5, narrow);
                    (other.mu1, other.xx) = (line.mu1.clone(), line.xx.clone());
                    let mut scrambled = other.clone();
                    scrambled.mu1.iter_mut().for_each(|v| *v = !*v);
                    scrambled.xx.iter_mut().for_each(|v| *v ^= 0x5a5a_5a5a);
                    for filt in FILTERS {
                        for gain in [1.0, 2.5, 100.0] {
                            let mut acc = WideAcc::new(w);
                            let (mut mu1, mut s1) = (vec![0u32; n], vec![0i32; n]);
                            let mut stored = VifSums::default();
                            let row = RefRowMut {
                                mu1: &mut mu1,
                                s1: &mut s1,
                            };
                            let ok = (sp.stat_horizontal_store)(
                                &line,
                                filt,
                                w,
                                gain,
                                log2,
                                &mut acc,
                                &mut stored,
                                row,
                            );
                            let mut whole = VifSums::default();
                            scalar::stat_horizontal(
                                &line, filt, w, gain, log2, &mut acc, &mut whole,
                            );
                            let what =
                                format!("{:?} w {w} taps {} gain {gain}", k.level(), filt.len());
                            assert!(ok && stored == whole, "store: {what}");
                            let mut want = VifSums::default();
                            scalar::stat_horizontal(
                                &other, filt, w, gain, log2, &mut acc, &mut want,
                            );
                            let mut got = VifSums::default();
                            let row = RefRow { mu1: &mu1, s1: &s1 };
                            let ok = (sp.stat_horizontal_dis)(
                                &scrambled, filt, w, gain, log2, &mut acc, &mut got, row,
                            );
                            let want = VifSums {
                                den_log: 0,
                                den_non_log: 0,
                                ..want
                            };
                            assert!(ok && got == want, "dis: {what}: {got:?} {want:?}");
                        }
                    }
                }
            }
            // Wide means (never produced by the vertical passes) stop a split pass.
            let w = 300;
            let mut line = random_line(w, 9, false);
            line.mu2[PAD + 280] = 70_000;
            let n = w.div_ceil(SHARED_ROW_ALIGN) * SHARED_ROW_ALIGN;
            let (mut mu1, mut s1) = (vec![0u32; n], vec![0i32; n]);
            let row = RefRowMut {
                mu1: &mut mu1,
                s1: &mut s1,
            };
            let mut acc = WideAcc::new(w);
            let mut sums = VifSums::default();
            let f = FILTERS[0];
            assert!(!(sp.stat_horizontal_store)(
                &line, f, w, 100.0, log2, &mut acc, &mut sums, row
            ));
            // So does a row too short for the width.
            let row = RefRow {
                mu1: &mu1[..w - 1],
                s1: &s1,
            };
            assert!(!(sp.stat_horizontal_dis)(
                &line, f, w, 100.0, log2, &mut acc, &mut sums, row
            ));
        }
        if !ran {
            eprintln!("split_horizontal_equals_whole: no level of this host has split kernels");
        }
    }

    #[test]
    fn stat_horizontal_with_wide_means_matches_scalar() {
        // Means above 16 bits (which the vertical passes never produce) in some 256-column chunks
        // only: the SIMD peers take their exact fallback there and their fast path elsewhere.
        let log2 = tables::log2_table();
        for k in simd_kernels() {
            for w in [40, 300, 700] {
                let mut line = random_line(w, 77 + w as u64, false);
                let n = line.mu1.len();
                for (i, v) in noise(n, 16, 5).iter().enumerate() {
                    if i == 3 {
                        line.mu1[i] |= (*v as u32 | 1) << 16;
                    }
                    if (280..300).contains(&i) {
                        line.mu2[i] = 70_000 + *v as u32;
                    }
                }
                for filt in FILTERS {
                    let mut acc = WideAcc::new(w);
                    let (mut a, mut b) = (VifSums::default(), VifSums::default());
                    (k.stat_horizontal)(&line, filt, w, 100.0, log2, &mut acc, &mut a);
                    scalar::stat_horizontal(&line, filt, w, 100.0, log2, &mut acc, &mut b);
                    assert_eq!(a, b, "{:?} w {w} taps {}", k.level(), filt.len());
                }
            }
        }
    }

    #[test]
    fn subsample_matches_scalar() {
        for k in simd_kernels() {
            for w in widths() {
                for seed in 1..=2 {
                    for (scale, bits) in [(1, 8), (1, 10), (1, 12), (1, 16), (2, 16), (3, 16)] {
                        let filt = FILTERS[scale];
                        let (round, shift) = if scale == 1 {
                            (1 << (bits - 1), bits)
                        } else {
                            (32768, 16)
                        };
                        let (r, d) = (
                            rows(filt.len(), w, bits, seed),
                            rows(filt.len(), w, bits, seed + 5),
                        );
                        let n = w + 2 * PAD;
                        let (mut ar, mut ad) = (vec![0u16; n], vec![0u16; n]);
                        let (mut br, mut bd) = (vec![0u16; n], vec![0u16; n]);
                        if bits == 8 {
                            // Seed 2's distorted rows at the extremes (255 on the rows the
                            // symmetric taps fold together, 0 on the others): the largest sums.
                            let extreme =
                                |i: usize| vec![if i.is_multiple_of(2) { 255 } else { 0 }; w];
                            let r8: Vec<Vec<u8>> = r.iter().map(|x| to_u8(x)).collect();
                            let d8: Vec<Vec<u8>> = if seed == 2 {
                                (0..filt.len()).map(extreme).collect()
                            } else {
                                d.iter().map(|x| to_u8(x)).collect()
                            };
                            let rr: Vec<&[u8]> = r8.iter().map(|x| x.as_slice()).collect();
                            let dr: Vec<&[u8]> = d8.iter().map(|x| x.as_slice()).collect();
                            (k.subsample_vertical_u8)(&rr, &dr, filt, 128, 8, w, &mut ar, &mut ad);
                            scalar::subsample_vertical(&rr, &dr, filt, 128, 8, w, &mut br, &mut bd);
                        } else {
                            let rr: Vec<&[u16]> = r.iter().map(|x| x.as_slice()).collect();
                            let dr: Vec<&[u16]> = d.iter().map(|x| x.as_slice()).collect();
                            (k.subsample_vertical_u16)(
                                &rr, &dr, filt, round, shift, w, &mut ar, &mut ad,
                            );
                            scalar::subsample_vertical(
                                &rr, &dr, filt, round, shift, w, &mut br, &mut bd,
                            );
                        }
                        assert_eq!(
                            (&ar, &ad),
                            (&br, &bd),
                            "{:?} vertical w {w} bits {bits}",
                            k.level()
                        );
                        // Horizontal: random 16-bit padded lines.
                        let lr = noise(n, 16, seed + w as u64);
                        let ld = noise(n, 16, seed + 99);
                        let (mut or_a, mut od_a) = (vec![0u16; w / 2], vec![0u16; w / 2]);
                        let (mut or_b, mut od_b) = (vec![0u16; w / 2], vec![0u16; w / 2]);
                        (k.subsample_horizontal)(&lr, &ld, filt, w, &mut or_a, &mut od_a);
                        scalar::subsample_horizontal(&lr, &ld, filt, w, &mut or_b, &mut od_b);
                        assert_eq!(
                            (&or_a, &od_a),
                            (&or_b, &od_b),
                            "{:?} horizontal w {w}",
                            k.level()
                        );
                        // The extreme lines (every value 0 or 65535): the largest sums, and the
                        // ends of the 16-bit paths' offset range.
                        let (hi, lo) = (vec![u16::MAX; n], vec![0u16; n]);
                        (k.subsample_horizontal)(&hi, &lo, filt, w, &mut or_a, &mut od_a);
                        scalar::subsample_horizontal(&hi, &lo, filt, w, &mut or_b, &mut od_b);
                        assert_eq!(
                            (or_a, od_a),
                            (or_b, od_b),
                            "{:?} horizontal w {w}, extreme values",
                            k.level()
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn whole_pictures_match_scalar_at_every_level() {
        for (w, h) in [
            (16, 16),
            (37, 23),
            (64, 40),
            (321, 35),
            (130, 66),
            (97, 18),
            (257, 20),
        ] {
            for bpc in [8u8, 10, 12, 16] {
                let r = texture(w, h, bpc as u32, 7, 9);
                let d = texture(w, h, bpc as u32, 8, 40);
                let run = |level: CpuLevel| {
                    let v = Vif::new(w, h, bpc, 100.0, false)
                        .unwrap()
                        .with_cpu_level(level);
                    let mut v = v;
                    if bpc == 8 {
                        let (r8, d8) = (to_u8(&r), to_u8(&d));
                        let rp = Plane::new_u8(&r8, w, h, w).unwrap();
                        let dp = Plane::new_u8(&d8, w, h, w).unwrap();
                        v.compute(&rp, &dp).unwrap()
                    } else {
                        let rp = Plane::new_u16(&r, w, h, w).unwrap();
                        let dp = Plane::new_u16(&d, w, h, w).unwrap();
                        v.compute(&rp, &dp).unwrap()
                    }
                };
                let want = run(CpuLevel::Scalar);
                for level in sweep_levels("whole_pictures_match_scalar_at_every_level") {
                    assert_eq!(run(level), want, "{level:?} {w}x{h} {bpc}-bit");
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Per-kernel timings (`cargo test --release --lib vif_kernel_timings -- --ignored --nocapture`)
// ---------------------------------------------------------------------------------------------

/// Prints the time per call of every row kernel at every level this machine runs, on the rows
/// of a 1920-wide textured pair (min over repeats; a shared machine makes single runs noisy).
#[test]
#[ignore = "a benchmark: run with --ignored --nocapture"]
fn vif_kernel_timings() {
    use super::Kernels;
    use crate::cpu::supported_levels;
    use std::hint::black_box;
    use std::time::Instant;

    let w = 1920;
    let (r16, d16) = (texture(w, 18, 8, 31, 12), texture(w, 18, 8, 32, 30));
    let (r8, d8) = (to_u8(&r16), to_u8(&d16));
    let rows8 = |v: &[u8]| -> Vec<Vec<u8>> { v.chunks(w).map(|c| c.to_vec()).collect() };
    let rows16 = |v: &[u16]| -> Vec<Vec<u16>> { v.chunks(w).map(|c| c.to_vec()).collect() };
    let (rr8, dr8, rr16, dr16) = (rows8(&r8), rows8(&d8), rows16(&r16), rows16(&d16));
    let r8s_18: Vec<&[u8]> = rr8.iter().map(|x| x.as_slice()).collect();
    let d8s_18: Vec<&[u8]> = dr8.iter().map(|x| x.as_slice()).collect();
    let (r8s, d8s) = (&r8s_18[..17], &d8s_18[..17]);
    // 16-bit rows at the scale-1 range (`<< 8`, like a downsampled 8-bit scale).
    let r16s: Vec<Vec<u16>> = rr16
        .iter()
        .map(|r| r.iter().map(|&x| x << 8).collect())
        .collect();
    let d16s: Vec<Vec<u16>> = dr16
        .iter()
        .map(|r| r.iter().map(|&x| x << 8).collect())
        .collect();
    let r16r: Vec<&[u16]> = r16s.iter().map(|x| x.as_slice()).collect();
    let d16r: Vec<&[u16]> = d16s.iter().map(|x| x.as_slice()).collect();
    let log2 = tables::log2_table();
    let mut line0 = StatLine::new(w);
    scalar::stat_vertical_u8(r8s, d8s, w, &mut line0);
    scalar::pad_stat_line(&mut line0, w, 8);
    // VIF_TIMING_ONLY=<name prefix> times only those kernels, VIF_TIMING_REPEATS=<n> longer
    // (for a profiler).
    let only = std::env::var("VIF_TIMING_ONLY").unwrap_or_default();
    let repeats: usize = std::env::var("VIF_TIMING_REPEATS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(7);
    let time = |name: &str, level: crate::cpu::CpuLevel, f: &mut dyn FnMut()| {
        if !name.starts_with(only.as_str()) {
            return;
        }
        let mut best = f64::INFINITY;
        for _ in 0..repeats {
            let t = Instant::now();
            for _ in 0..200 {
                f();
            }
            best = best.min(t.elapsed().as_secs_f64() / 200.0);
        }
        println!("{name:<28} {level:?}: {:8.2} us", best * 1e6);
    };
    for level in supported_levels() {
        let k = Kernels::for_level(level);
        let mut line = StatLine::new(w);
        let mut acc = WideAcc::new(w);
        time("stat_vertical_u8", level, &mut || {
            (k.stat_vertical_u8)(r8s, d8s, w, &mut line);
            black_box(&line);
        });
        if let Some(x2) = k.stat_vertical_u8_x2 {
            let mut line2 = StatLine::new(w);
            let (r18, d18) = (&r8s_18[..], &d8s_18[..]);
            time("stat_vertical_u8_x2 (2 rows)", level, &mut || {
                x2(r18, d18, w, [&mut line, &mut line2]);
                black_box((&line, &line2));
            });
            // The two passes of two rows, against the two-row kernel below.
            time("stat_u8 passes (2 rows)", level, &mut || {
                let mut s = VifSums::default();
                x2(r18, d18, w, [&mut line, &mut line2]);
                for l in [&mut line, &mut line2] {
                    scalar::pad_stat_line(l, w, 8);
                    (k.stat_horizontal)(l, &FILTER_S0, w, 100.0, log2, &mut acc, &mut s);
                }
                black_box(s);
            });
        }
        if let Some(rows) = k.stat_rows_u8_x2 {
            let (r18, d18) = (&r8s_18[..], &d8s_18[..]);
            time("stat_rows_u8_x2 (2 rows)", level, &mut || {
                let mut s = VifSums::default();
                assert!(rows(r18, d18, w, 100.0, log2, &mut acc, &mut s));
                black_box(s);
            });
        }
        for scale in [0, 1] {
            let filt = FILTERS[scale];
            let n = filt.len();
            let sh = StatShifts::for_scale(scale, 16);
            time(&format!("stat_vertical_u16 s{scale}"), level, &mut || {
                (k.stat_vertical_u16)(&r16r[..n], &d16r[..n], filt, sh, w, &mut line, &mut acc);
                black_box(&line);
            });
            if let Some(x2) = k.stat_vertical_u16_x2 {
                let mut line2 = StatLine::new(w);
                let (rs, ds) = (&r16r[..n + 1], &d16r[..n + 1]);
                time(
                    &format!("stat_vertical_u16_x2 s{scale} (2 rows)"),
                    level,
                    &mut || {
                        x2(rs, ds, filt, sh, w, [&mut line, &mut line2], &mut acc);
                        black_box((&line, &line2));
                    },
                );
            }
        }
        for (scale, filt) in FILTERS.iter().enumerate() {
            let ws = w >> scale;
            time(&format!("stat_horizontal s{scale}"), level, &mut || {
                let mut s = VifSums::default();
                (k.stat_horizontal)(&line0, filt, ws, 100.0, log2, &mut acc, &mut s);
                black_box(s);
            });
        }
        let n = w + 2 * PAD;
        let (mut tr, mut td) = (vec![0u16; n], vec![0u16; n]);
        time("subsample_vertical_u8", level, &mut || {
            (k.subsample_vertical_u8)(
                &r8s[..9],
                &d8s[..9],
                &FILTER_S1,
                128,
                8,
                w,
                &mut tr,
                &mut td,
            );
            black_box(&tr);
        });
        time("subsample_vertical_u16 s2", level, &mut || {
            let f = FILTERS[2];
            (k.subsample_vertical_u16)(&r16r[..5], &d16r[..5], f, 32768, 16, w, &mut tr, &mut td);
            black_box(&tr);
        });
        let (mut or, mut od) = (vec![0u16; w / 2], vec![0u16; w / 2]);
        // The 16-bit lines the vertical pass writes.
        let narrow = |v: &[u32]| v.iter().map(|&x| x as u16).collect::<Vec<u16>>();
        let (mu1, mu2) = (narrow(&line0.mu1), narrow(&line0.mu2));
        time("subsample_horizontal s1", level, &mut || {
            (k.subsample_horizontal)(&mu1, &mu2, &FILTER_S1, w, &mut or, &mut od);
            black_box(&or);
        });
    }
}
