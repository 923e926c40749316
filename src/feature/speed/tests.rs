//! SpEED unit tests: each libvmaf family's covariance order and fusing (from its machine code in
//! the oracle), the faster peers against the models at every level, the dimensions and checks.

use super::cov::{model, sum_avx2, sum_avx512, sum_c, CovKernel};
use super::*;
use crate::cpu::sweep_levels;
use crate::picture::{ChromaLayout, PictureFormat};

fn one_row(x: &[f32]) -> [f64; 3] {
    let y = vec![1.0f32; x.len()];
    let w = x.len();
    [
        sum_c(x, &y, w, 1, w, 0.0, 0.0),
        sum_avx2(x, &y, w, 1, w, 0.0, 0.0),
        sum_avx512(x, &y, w, 1, w, 0.0, 0.0),
    ]
}

/// Terms of 2^54 swallow a 1 unless they cancel first: which one survives shows each family's
/// order of additions.
#[test]
fn families_add_in_their_own_order() {
    let big = (1u64 << 54) as f32;
    // C adds left to right: 2^54 + 1 loses the 1.
    // AVX2: lane 0 = x0 + x4 cancels, lane 1 keeps the 1.
    // AVX-512: eight lanes of one accumulator; lanes 4 and 0 cancel first.
    assert_eq!(
        one_row(&[big, 1.0, 0.0, 0.0, -big, 0.0, 0.0, 0.0]),
        [0.0, 1.0, 1.0]
    );
    // AVX2 adds its four lanes left to right (lane 0 + lane 1 loses the 1); AVX-512's tree adds
    // lane 2 onto lane 0 first.
    assert_eq!(
        one_row(&[big, 1.0, -big, 0.0, 0.0, 0.0, 0.0, 0.0]),
        [0.0, 0.0, 1.0]
    );
    // Fewer than four (eight) columns are the scalar tail, added after the lanes.
    assert_eq!(one_row(&[big, 1.0, -big]), [0.0, 0.0, 0.0]);
    // At width 7 AVX2 has one 4-column step and a 3-column tail, AVX-512 only a tail.
    assert_eq!(
        one_row(&[1.0, 0.0, 0.0, 0.0, big, 1.0, -big]),
        [0.0, 1.0, 0.0]
    );
    // At width 12 AVX2's 4-column step adds x8 into lane 0 (cancelling x0) and x4 stays in the
    // second accumulator; AVX-512 has x0..x8 in its lanes (x4 + x0 loses the 1) and x8 in its
    // tail.
    let mut x = [0f32; 12];
    x[0] = big;
    x[8] = -big;
    x[4] = 1.0;
    assert_eq!(one_row(&x), [0.0, 1.0, 0.0]);
}

/// The vector loops fuse each product into its lane (`vfmadd231pd`); the scalar tail and libvmaf's
/// C code multiply, round, then add.
#[test]
fn vector_lanes_fuse_their_multiply_adds() {
    // (x - mx)(y - my) needs more than 53 bits, so fused and unfused sums differ: row 0 puts the
    // rounded product into the lane, row 1 adds its negation (exactly the rounding error if
    // fused, exactly 0 if not).
    let a = 1.0 + f32::EPSILON;
    let mx = -(2f64.powi(-30));
    let (w, h) = (8, 2);
    let mut x = vec![0f32; w * h];
    let mut y = vec![0f32; w * h];
    x[0] = a;
    y[0] = a;
    x[w] = a;
    y[w] = -a - 2.0 * (2f32.powi(-30));
    let c = sum_c(&x, &y, w, h, w, mx, 0.0);
    let v2 = sum_avx2(&x, &y, w, h, w, mx, 0.0);
    let v5 = sum_avx512(&x, &y, w, h, w, mx, 0.0);
    let p0 = (a as f64 - mx) * a as f64;
    let want_unfused = p0 + (a as f64 - mx) * y[w] as f64;
    let want_fused = (a as f64 - mx).mul_add(y[w] as f64, p0);
    assert_ne!(
        want_fused, want_unfused,
        "the test data must tell them apart"
    );
    // The other seven lanes add (-mx)(0) = 0 each.
    assert_eq!(c, want_unfused);
    assert_eq!(v2, want_fused);
    assert_eq!(v5, want_fused);
    // In the tail (width 3) every family rounds each product.
    let xt = [a, 0.0, 0.0, a, 0.0, 0.0];
    let yt = [a, 0.0, 0.0, y[w], 0.0, 0.0];
    for f in LibvmafIsa::ALL {
        assert_eq!(model(f)(&xt, &yt, 3, 2, 3, mx, 0.0), want_unfused, "{f:?}");
    }
}

fn noise(n: usize, seed: u64) -> Vec<f32> {
    let mut s = seed | 1;
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s >> 40) as f32 / (1u32 << 24) as f32 * 40.0 - 20.0
        })
        .collect()
}

/// Every implementation of every family at every level this host runs equals the family's model
/// bit for bit, at widths around the 4-, 8- and 16-column steps and with a stride.
#[test]
fn covariance_sums_match_the_models_at_every_level() {
    let stride = 70;
    let x = noise(stride * 9, 7);
    let y = noise(stride * 9, 11);
    for level in sweep_levels("covariance_sums_match_the_models_at_every_level") {
        for family in LibvmafIsa::ALL {
            let k = CovKernel::new(family, level);
            assert_eq!(k.family(), family);
            for w in 0..=stride - 3 {
                for h in [0, 1, 2, 7] {
                    let (mx, my) = (0.37, -1.25);
                    let got = k.sum(&x[3..], &y[1..], stride, h, w, mx, my);
                    let want = model(family)(&x[3..], &y[1..], stride, h, w, mx, my);
                    assert_eq!(
                        got.to_bits(),
                        want.to_bits(),
                        "{family:?} {level:?} {w}x{h}"
                    );
                }
            }
        }
    }
}

#[test]
fn dimensions_follow_speed_init_dimensions() {
    let d = Dims::new(1920, 1080, 1.0);
    assert_eq!((d.sw, d.sh, d.dw, d.dh), (1920, 1080, 120, 67));
    assert_eq!((d.nbh, d.nbv, d.subw, d.subh), (24, 13, 116, 61));
    assert!(!d.rescaled);
    let d = Dims::new(960, 540, 0.6);
    assert_eq!((d.sw, d.sh, d.dw, d.dh), (576, 324, 36, 20));
    assert!(d.rescaled);
    assert_eq!(Dims::new(100, 100, 1.0004).sw, 100);
}

fn params(o: &OptValues) -> Params {
    Params::from_opts(o, 0)
}

#[test]
fn checks_name_the_fix() {
    let mut o = OptValues::defaults(chroma::OPTIONS);
    let p = params(&o);
    assert!(check("speed_chroma", &p, 80, 80, "chroma").is_ok());
    let e = check("speed_chroma", &p, 79, 200, "chroma")
        .unwrap_err()
        .to_string();
    assert!(e.contains("at least 80x80"), "{e}");
    o.set("speed_prescale", "2").unwrap();
    assert!(check("speed_chroma", &params(&o), 40, 40, "chroma").is_ok());
    o.set("speed_kernelscale", "1.3").unwrap();
    let e = check("speed_chroma", &params(&o), 400, 400, "chroma")
        .unwrap_err()
        .to_string();
    assert!(e.contains("speed_kernelscale=1.3"), "{e}");
    o.set("speed_kernelscale", "1.5").unwrap();
    o.set("speed_prescale", "1.0005").unwrap();
    // 1.0005 is "equal to 1" for libvmaf's rescale, but not for its size at 1000 wide.
    assert!(check("speed_chroma", &params(&o), 400, 400, "chroma").is_ok());
    let e = check("speed_chroma", &params(&o), 1000, 400, "chroma")
        .unwrap_err()
        .to_string();
    assert!(e.contains("within 1e-3 of 1"), "{e}");
}

#[test]
fn chroma_refuses_gray_and_small_chroma() {
    let o = OptValues::defaults(chroma::OPTIONS);
    let f = |w, h, layout| PictureFormat {
        width: w,
        height: h,
        bpc: 8,
        layout,
    };
    let e = (chroma::DEF.check)(&o, &f(640, 480, ChromaLayout::Gray)).unwrap_err();
    assert!(e.to_string().contains("4:0:0"), "{e}");
    // 4:2:0 halves both sides: 160x160 luma is the smallest.
    assert!((chroma::DEF.check)(&o, &f(160, 160, ChromaLayout::Yuv420)).is_ok());
    assert!((chroma::DEF.check)(&o, &f(159, 160, ChromaLayout::Yuv420)).is_err());
    assert!((chroma::DEF.check)(&o, &f(160, 80, ChromaLayout::Yuv422)).is_ok());
    assert!((chroma::DEF.check)(&o, &f(80, 80, ChromaLayout::Yuv444)).is_ok());
    let e = (chroma::DEF.check)(
        &o,
        &PictureFormat {
            bpc: 9,
            ..f(640, 480, ChromaLayout::Yuv444)
        },
    )
    .unwrap_err();
    assert!(e.to_string().contains("9-bit"), "{e}");
}

#[test]
fn chroma_names_follow_libvmaf() {
    let mut o = OptValues::defaults(chroma::OPTIONS);
    for (k, v) in [
        ("speed_kernelscale", "1.0"),
        ("speed_nn_floor", "0.1"),
        ("speed_sigma_nn", "0.19"),
        ("speed_weight_var_mode", "5"),
        ("speed_max_val", "45"),
    ] {
        o.set(k, v).unwrap();
    }
    let name = |o: &OptValues| {
        crate::feature::names::alias(&o.feature_name("Speed_chroma_feature_speed_chroma_uv_score"))
            .to_string()
    };
    assert_eq!(name(&o), "speed_chroma_uv_mxv_45_nnf_0.1_snn_0.19_wvm_5");
    o.set("speed_prescale", "0.5").unwrap();
    o.set("speed_prescale_method", "bilinear").unwrap();
    assert_eq!(
        name(&o),
        "speed_chroma_uv_mxv_45_nnf_0.1_ps_0.5_psm_bilinear_snn_0.19_wvm_5"
    );
    assert_eq!(
        name(&OptValues::defaults(chroma::OPTIONS)),
        "speed_chroma_uv"
    );
}

/// A flat plane has a singular covariance matrix: libvmaf's error path (score 0 for a pair with
/// one such side, the other channel standing in for `uv`).
#[test]
fn flat_planes_are_singular() {
    let o = OptValues::defaults(chroma::OPTIONS);
    let (w, h) = (256, 256);
    let mut core = Speed::new(params(&o), w, h, LibvmafIsa::C, CpuLevel::Scalar);
    let flat = vec![3.0f32; w * h];
    let busy = noise(w * h, 5);
    assert_eq!(core.score(&flat, &flat), (0.0, true));
    assert_eq!(core.score(&busy, &flat), (0.0, true));
    let (s, err) = core.score(&busy, &busy);
    assert!(!err);
    assert_eq!(s, 0.0, "identical planes have equal entropies");
}

#[test]
fn log2_2pie_is_the_correctly_rounded_constant() {
    let x = 2.0 * std::f64::consts::PI * std::f64::consts::E;
    assert_eq!(LOG2_2PIE.to_bits(), 0x4010_6073_a671_183d);
    assert!((x.log2() - LOG2_2PIE).abs() <= f64::EPSILON * 4.0);
}

#[test]
fn temporal_refuses_upscaling_and_names_its_options() {
    let f = PictureFormat {
        width: 320,
        height: 240,
        bpc: 10,
        layout: ChromaLayout::Gray,
    };
    let mut o = OptValues::defaults(temporal::OPTIONS);
    assert!((temporal::DEF.check)(&o, &f).is_ok(), "luma only");
    o.set("speed_prescale", "0.5").unwrap();
    assert!((temporal::DEF.check)(&o, &f).is_ok());
    // 1.002 keeps 240 rows (and makes 321 columns, which libvmaf's stride holds).
    o.set("speed_prescale", "1.002").unwrap();
    assert!((temporal::DEF.check)(&o, &f).is_ok());
    o.set("speed_prescale", "1.5").unwrap();
    let e = (temporal::DEF.check)(&o, &f).unwrap_err().to_string();
    assert!(e.contains("360 rows") && e.contains("at most 1"), "{e}");
    let mut o = OptValues::defaults(temporal::OPTIONS);
    o.set("speed_use_ref_diff", "true").unwrap();
    o.set("speed_max_val", "45").unwrap();
    let full = temporal::DEF.spatial[0];
    assert_eq!(
        crate::feature::names::alias(&o.feature_name(full)),
        "speed_temporal_mxv_45_urd"
    );
    assert!(temporal::DEF.needs_prev_ref && temporal::DEF.needs_prev_dis);
}
