//! Unit tests of the integer ADM extractor.
//!
//! The reference values in `matches_libvmaf_*` were printed by libvmaf (FFmpeg 9.0.2 `libvmaf`
//! filter, libvmaf git 86da14d) for the synthetic pictures [`pattern`] builds, written to y4m with
//! neutral chroma; libvmaf prints 6 decimals (16 for values within 1e-6 of an integer).

mod dwt;
mod every_level;
mod timings;

use super::scalar;
use super::tables::{COS_1DEG_SQ, DIV_LOOKUP};
use super::{Adm, AdmParams, AdmScores, CsfMode, DEF, OPTIONS};
use crate::feature::options::OptValues;
use crate::feature::{ExtractorConfig, FrameInput};
use crate::fidelity::LibvmafIsa;
use crate::picture::{ChromaLayout, PictureFormat, Plane};

/// Reference and distorted luma of the synthetic test pictures: a quadratic texture with a
/// checkerboard, and the same plus LCG noise in `[-noise, noise]` (scaled to `bpc`).
fn pattern(w: usize, h: usize, bpc: u32, noise: i64) -> (Vec<u16>, Vec<u16>) {
    let max = (1i64 << bpc) - 1;
    let mut st: u32 = 1;
    let (mut r, mut d) = (Vec::with_capacity(w * h), Vec::with_capacity(w * h));
    for y in 0..h as i64 {
        for x in 0..w as i64 {
            let v =
                ((x * x + 3 * y * y + 7 * x * y) / 5 + 40 * (((x / 8) + (y / 8)) % 2)) % 220 + 16;
            let v = v << (bpc - 8);
            st = st.wrapping_mul(1_103_515_245).wrapping_add(12345);
            let n = if noise > 0 {
                ((st >> 16) as i64 % (2 * noise + 1)) - noise
            } else {
                0
            };
            r.push(v as u16);
            d.push((v + (n << (bpc - 8))).clamp(0, max) as u16);
        }
    }
    (r, d)
}

/// Runs the extractor through the registry on one frame with the given options.
fn run(w: usize, h: usize, bpc: u32, noise: i64, opts: &[(&str, &str)]) -> [f64; 7] {
    let (r, d) = pattern(w, h, bpc, noise);
    let mut o = OptValues::defaults(OPTIONS);
    for (k, v) in opts {
        o.set(k, v).unwrap();
    }
    let cfg = ExtractorConfig {
        format: PictureFormat {
            width: w,
            height: h,
            bpc: bpc as u8,
            layout: ChromaLayout::Yuv420,
        },
        opts: o,
        libvmaf_isa: LibvmafIsa::Avx512,
    };
    let mut ex = (DEF.create)(&cfg).unwrap();
    let mut out = [0f64; 7];
    if bpc == 8 {
        let (r8, d8): (Vec<u8>, Vec<u8>) = (
            r.iter().map(|&v| v as u8).collect(),
            d.iter().map(|&v| v as u8).collect(),
        );
        let input = FrameInput::luma(
            Plane::new_u8(&r8, w, h, w).unwrap(),
            Plane::new_u8(&d8, w, h, w).unwrap(),
            0,
        );
        ex.extract(&input, &mut out).unwrap();
    } else {
        let input = FrameInput::luma(
            Plane::new_u16(&r, w, h, w).unwrap(),
            Plane::new_u16(&d, w, h, w).unwrap(),
            0,
        );
        ex.extract(&input, &mut out).unwrap();
    }
    out
}

/// Compares with libvmaf's JSON text of each value: `%.6f`, or `%.16f` when the fractional part
/// has more than 6 leading zeros (libvmaf `count_leading_zeros_d`); the expected string's length
/// tells which.
fn assert_printed(got: [f64; 7], want: [&str; 7]) {
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        let g_s = if w.len() > 8 {
            format!("{g:.16}")
        } else {
            format!("{g:.6}")
        };
        assert_eq!(g_s, w, "output {} ({}): got {g}", i, DEF.spatial[i]);
    }
}

#[test]
fn matches_libvmaf_8bit_noise() {
    assert_printed(
        run(96, 64, 8, 10, &[]),
        [
            "0.969711", "0.000304", "0.984703", "0.965851", "0.963344", "0.984299", "0.964830",
        ],
    );
}

#[test]
fn matches_libvmaf_8bit_noise_egl1() {
    assert_printed(
        run(96, 64, 8, 10, &[("adm_enhn_gain_limit", "1")]),
        [
            "0.960803", "0.000348", "0.980227", "0.959644", "0.956387", "0.964601", "0.963512",
        ],
    );
}

#[test]
fn matches_libvmaf_10bit_odd_size() {
    assert_printed(
        run(67, 45, 10, 6, &[]),
        [
            "0.981887", "0.001072", "0.990408", "0.981835", "0.980376", "0.984339", "0.980892",
        ],
    );
    assert_printed(
        run(67, 45, 10, 6, &[("adm_enhn_gain_limit", "1.0")]),
        [
            "0.975840", "0.001072", "0.987384", "0.974903", "0.973724", "0.976659", "0.978664",
        ],
    );
}

#[test]
fn matches_libvmaf_16bit() {
    assert_printed(
        run(50, 40, 16, 20, &[]),
        [
            "0.931805", "0.012027", "0.959889", "0.937229", "0.927540", "0.941896", "0.920657",
        ],
    );
}

#[test]
fn identical_input_gives_libvmafs_values() {
    // libvmaf does not give exactly 1 for identical pictures: the noise floor and the integer
    // pipeline leave adm2 slightly above 1, and aim is exactly 0.
    let got = run(96, 64, 8, 0, &[]);
    assert_eq!(got[1], 0.0);
    assert_printed(
        got,
        [
            "1.000008",
            "0.000000",
            "1.000004",
            "1.000028",
            "1.0000002861231148",
            "1.0000006075484247",
            "1.0000003914843796",
        ],
    );
    assert_printed(
        run(96, 64, 8, 0, &[("adm_enhn_gain_limit", "1")]),
        [
            "0.999997", "0.000000", "0.999999", "1.000028", "0.999985", "0.999985", "0.999990",
        ],
    );
}

/// One frame of `adm` on the `w x h` luma planes `r`, `d` (`bpc`-bit values; narrowed to `u8`
/// samples for 8 bits).
fn compute(adm: &mut Adm, r: &[u16], d: &[u16], w: usize, h: usize, bpc: u32) -> AdmScores {
    if bpc == 8 {
        let (r8, d8): (Vec<u8>, Vec<u8>) = (
            r.iter().map(|&v| v as u8).collect(),
            d.iter().map(|&v| v as u8).collect(),
        );
        let (rp, dp) = (Plane::new_u8(&r8, w, h, w), Plane::new_u8(&d8, w, h, w));
        adm.compute(&rp.unwrap(), &dp.unwrap()).unwrap()
    } else {
        let (rp, dp) = (Plane::new_u16(r, w, h, w), Plane::new_u16(d, w, h, w));
        adm.compute(&rp.unwrap(), &dp.unwrap()).unwrap()
    }
}

#[test]
fn odd_and_tiny_sizes_do_not_panic() {
    for &(w, h) in &[
        (16, 16),
        (17, 31),
        (33, 17),
        (35, 35),
        (101, 57),
        (16, 200),
        (199, 16),
    ] {
        for bpc in [8, 10, 16] {
            let out = run(w, h, bpc, 12, &[]);
            assert_eq!(out.len(), 7);
            let out = run(
                w,
                h,
                bpc,
                12,
                &[("adm_skip_scale0", "true"), ("adm_enhn_gain_limit", "1")],
            );
            assert_eq!(out.len(), 7);
        }
    }
    // Extreme options (Barten weights overflow libvmaf's fixed point) must not panic either.
    for opts in [
        &[
            ("adm_csf_mode", "1"),
            ("adm_csf_scale", "50"),
            ("adm_csf_diag_scale", "50"),
        ][..],
        &[("adm_csf_mode", "2"), ("adm_norm_view_dist", "24")][..],
        &[
            ("adm_noise_weight", "1500"),
            ("adm_enhn_gain_limit", "1.5"),
            ("adm_skip_aim", "true"),
        ][..],
    ] {
        for bpc in [8, 12] {
            run(61, 47, bpc, 100, opts);
        }
    }
}

#[test]
fn deterministic_and_stride_independent() {
    let (w, h) = (75usize, 49usize);
    let (r, d) = pattern(w, h, 10, 9);
    let mut adm = Adm::new(w, h, 10, AdmParams::default(), LibvmafIsa::Avx512).unwrap();
    let (rt, dt) = (
        Plane::new_u16(&r, w, h, w).unwrap(),
        Plane::new_u16(&d, w, h, w).unwrap(),
    );
    let a = adm.compute(&rt, &dt).unwrap();
    // A different frame in between must not leak into the next result.
    let _ = adm.compute(&dt, &rt).unwrap();
    let b = adm.compute(&rt, &dt).unwrap();
    assert_eq!(a, b);
    // Same pictures with a padded stride.
    let st = w + 13;
    let pad = |v: &Vec<u16>| {
        let mut o = vec![0xFFFFu16; st * h];
        for y in 0..h {
            o[y * st..y * st + w].copy_from_slice(&v[y * w..(y + 1) * w]);
        }
        o
    };
    let (rp, dp) = (pad(&r), pad(&d));
    let mut fresh = Adm::new(w, h, 10, AdmParams::default(), LibvmafIsa::Avx512).unwrap();
    let c = fresh
        .compute(
            &Plane::new_u16(&rp, w, h, st).unwrap(),
            &Plane::new_u16(&dp, w, h, st).unwrap(),
        )
        .unwrap();
    assert_eq!(a, c);
    assert!(a.adm2 > 0.5 && a.adm2 < 1.0);
}

#[test]
fn options_and_names_follow_libvmaf() {
    let mut o = OptValues::defaults(OPTIONS);
    assert_eq!(
        o.feature_name("VMAF_integer_feature_adm2_score"),
        "VMAF_integer_feature_adm2_score"
    );
    // adm_skip_aim and debug are not feature parameters.
    o.set("adm_skip_aim", "true").unwrap();
    o.set("debug", "true").unwrap();
    assert_eq!(
        o.feature_name("VMAF_integer_feature_aim_score"),
        "VMAF_integer_feature_aim_score"
    );
    o.set("adm_enhn_gain_limit", "1").unwrap();
    o.set("adm_skip_scale0", "true").unwrap();
    assert_eq!(
        o.feature_name("VMAF_integer_feature_adm2_score"),
        "integer_adm2_egl_1_ssz"
    );
    let mut o = OptValues::defaults(OPTIONS);
    o.set("adm_csf_mode", "1").unwrap();
    o.set("adm_csf_scale", "2").unwrap();
    o.set("adm_csf_diag_scale", "0.5").unwrap();
    assert_eq!(
        o.feature_name("VMAF_integer_feature_adm_scale3_score"),
        "integer_adm_scale3_scfd_0.5_csf_1_scf_2"
    );
    let mut o = OptValues::defaults(OPTIONS);
    o.set("adm_ref_display_height", "2160").unwrap();
    o.set("adm_norm_view_dist", "1.5").unwrap();
    assert_eq!(
        o.feature_name("VMAF_integer_feature_adm3_score"),
        "integer_adm3_nvd_1.5_rdh_2160"
    );
    assert!(o.set("adm_enhn_gain_limit", "0.5").is_err());
    assert!(o.set("adm_csf_mode", "4").is_err());
    assert!(o.set("adm_dlm_weight", "1.5").is_err());
    let p = AdmParams::from_opts(&OptValues::defaults(OPTIONS));
    assert_eq!(p, AdmParams::default());
}

/// libvmaf's AVX-512 masking rounds the h/v cubes of 9..16-wide bands (pictures 17..32 wide) with
/// `(uint32_t)inf` as `vcvttsd2usi` gives it (`0xFFFFFFFF`), its C and AVX2 code with 0; wider
/// bands have the same constants everywhere.
#[test]
fn cm_s0_rounding_of_narrow_bands_follows_each_kernel_family() {
    for w in 9..=16 {
        let c = scalar::CmShiftsS0::new(w, 20, LibvmafIsa::C);
        let a2 = scalar::CmShiftsS0::new(w, 20, LibvmafIsa::Avx2);
        let a5 = scalar::CmShiftsS0::new(w, 20, LibvmafIsa::Avx512);
        assert_eq!(c.cub[..2], [0, 0]);
        assert_eq!((c.cub_add, a2.cub_add), ([0, 0, 1], [0, 0, 1]), "{w}");
        assert_eq!(a5.cub_add, [0xFFFF_FFFF, 0xFFFF_FFFF, 1], "{w}");
    }
    for w in [17usize, 33, 960] {
        let [c, a5] = [LibvmafIsa::C, LibvmafIsa::Avx512].map(|i| scalar::CmShiftsS0::new(w, 9, i));
        assert_eq!(c.cub_add, a5.cub_add, "{w}");
    }
    // A 24x24 picture: its 12-wide band takes the quirk, and the AVX-512 result differs.
    let [c, a5] = [LibvmafIsa::C, LibvmafIsa::Avx512].map(|isa| {
        let (r, d) = pattern(24, 24, 8, 20);
        let (r8, d8): (Vec<u8>, Vec<u8>) = (
            r.iter().map(|&v| v as u8).collect(),
            d.iter().map(|&v| v as u8).collect(),
        );
        let mut adm = Adm::new(24, 24, 8, AdmParams::default(), isa).unwrap();
        let (rp, dp) = (
            Plane::new_u8(&r8, 24, 24, 24),
            Plane::new_u8(&d8, 24, 24, 24),
        );
        adm.compute(&rp.unwrap(), &dp.unwrap()).unwrap()
    });
    assert_ne!(c.aim, a5.aim);
}

#[test]
fn rejects_what_libvmaf_rejects() {
    // nvd * rdh below 3 * 1080.
    let p = AdmParams {
        norm_view_dist: 1.0,
        ..AdmParams::default()
    };
    assert!(Adm::new(64, 64, 8, p, LibvmafIsa::C).is_err());
    assert!(Adm::new(64, 64, 7, AdmParams::default(), LibvmafIsa::C).is_err());
    // Sample type must match the bit depth.
    let mut adm = Adm::new(32, 32, 10, AdmParams::default(), LibvmafIsa::C).unwrap();
    let v = vec![0u8; 32 * 32];
    let p8 = Plane::new_u8(&v, 32, 32, 32).unwrap();
    assert!(adm.compute(&p8, &p8).is_err());
}

#[test]
fn constants_match_their_c_expressions() {
    let c = (1.0f64 * std::f64::consts::PI / 180.0).cos();
    assert_eq!(COS_1DEG_SQ.to_bits(), ((c * c) as f32).to_bits());
    assert_eq!(COS_1DEG_SQ.to_bits(), 0x3F7F_EC0A);
    assert_eq!(DIV_LOOKUP[32768], 0);
    assert_eq!(DIV_LOOKUP[32769], 1 << 30);
    assert_eq!(DIV_LOOKUP[32768 + 3], 357_913_941);
    assert_eq!(DIV_LOOKUP[32768 - 3], -357_913_941);
    assert_eq!(DIV_LOOKUP[0], -32768);
    assert_eq!(DIV_LOOKUP[65536], 32768);
    // libvmaf's hard-coded scale-0 weights are close to, but not exactly, the Watson weights in
    // Q21 / Q23 (36451 and 49414 when computed); the default geometry must use the constants.
    let p = AdmParams::default();
    let rf = p.rfactor(0);
    assert_eq!((rf[0] as f64 * 2f64.powi(21)) as u32, 36451);
    assert_eq!(p.i_rfactor_s0(), [36453, 36453, 49417]);
    let p5 = AdmParams {
        norm_view_dist: 5.0,
        ..p
    };
    let rf5 = p5.rfactor(0);
    assert_eq!(p5.i_rfactor_s0()[0], (rf5[0] as f64 * 2f64.powi(21)) as u16);
    let blend = AdmParams {
        csf_mode: CsfMode::BartenWatsonBlend,
        ..p
    };
    assert_eq!(blend.rfactor(2), [0.04295, 0.04295, 0.023918]);
}

/// Shared reference state (ladder scoring): two renditions' instances reading one reference
/// side filled by the first give each rendition's own [`Adm::compute`] values, bit for bit,
/// frame after frame (the state is refilled, not stale), for options that change the reference
/// side or the joint terms; an instance refuses a state filled with other options. The shared
/// reference side computes whole bands, [`Adm::compute`] strip by strip: at 83x300 scales 0 and
/// 1 have several strips (150 and 75 band rows), so the strips' seams are compared too.
#[test]
fn shared_reference_side_equals_own() {
    use crate::feature::SharedReference;
    let (w, h) = (83usize, 51usize);
    let params = [
        AdmParams::default(),
        AdmParams {
            enhn_gain_limit: 1.2,
            ..AdmParams::default()
        },
        AdmParams {
            csf_mode: CsfMode::Barten,
            csf_scale: 2.0,
            ..AdmParams::default()
        },
        AdmParams {
            csf_mode: CsfMode::BartenWatsonBlendMae,
            noise_weight: 3.0,
            skip_aim: true,
            ..AdmParams::default()
        },
        AdmParams {
            skip_scale0: true,
            ..AdmParams::default()
        },
    ];
    for (bpc, (w, h)) in [(8, (w, h)), (10, (w, h)), (8, (w, 300)), (12, (w, 300))] {
        for prm in params {
            let mk = || Adm::new(w, h, bpc, prm, LibvmafIsa::Avx2).unwrap();
            let (mut own, mut a, mut b) = (mk(), mk(), mk());
            let mut shared = SharedReference::default();
            for f in 0..3u16 {
                shared.clear();
                let (r, d1) = pattern(w, h, bpc, 5 + 4 * f as i64);
                let (_, d2) = pattern(w, h, bpc, 30 - 7 * f as i64);
                // Another reference each frame (a stale state would show).
                let r: Vec<u16> = r.iter().map(|&x| x ^ (3 * f)).collect();
                let (r, d1, d2) = (
                    Samples::of(&r, bpc),
                    Samples::of(&d1, bpc),
                    Samples::of(&d2, bpc),
                );
                let (rp, p1, p2) = (r.plane(w, h), d1.plane(w, h), d2.plane(w, h));
                let got1 = a.compute_shared(&rp, &p1, &shared).unwrap();
                let got2 = b.compute_shared(&rp, &p2, &shared).unwrap();
                // As printed: some of these options give NaN at scale 3, and NaN != NaN.
                let mut same = |got: AdmScores, d: &Plane<'_>| {
                    let want = own.compute(&rp, d).unwrap();
                    assert_eq!(
                        format!("{got:?}"),
                        format!("{want:?}"),
                        "{prm:?} {bpc} {w}x{h}"
                    );
                };
                same(got1, &p1);
                same(got2, &p2);
            }
        }
    }
    // A state filled by an instance with other options is refused, not misread.
    let (r, d) = pattern(w, h, 10, 9);
    let (rp, dp) = (
        Plane::new_u16(&r, w, h, w).unwrap(),
        Plane::new_u16(&d, w, h, w).unwrap(),
    );
    let shared = SharedReference::default();
    let mut a = Adm::new(w, h, 10, params[0], LibvmafIsa::Avx2).unwrap();
    let mut b = Adm::new(w, h, 10, params[2], LibvmafIsa::Avx2).unwrap();
    a.compute_shared(&rp, &dp, &shared).unwrap();
    let e = b.compute_shared(&rp, &dp, &shared).unwrap_err();
    assert!(e.to_string().contains("other options"), "{e}");
}

/// Luma samples, 8-bit ones narrowed to `u8` (as the engine holds them).
enum Samples {
    U8(Vec<u8>),
    U16(Vec<u16>),
}

impl Samples {
    fn of(v: &[u16], bpc: u32) -> Self {
        if bpc == 8 {
            Samples::U8(v.iter().map(|&x| x as u8).collect())
        } else {
            Samples::U16(v.to_vec())
        }
    }

    fn plane(&self, w: usize, h: usize) -> Plane<'_> {
        match self {
            Samples::U8(v) => Plane::new_u8(v, w, h, w).unwrap(),
            Samples::U16(v) => Plane::new_u16(v, w, h, w).unwrap(),
        }
    }
}
