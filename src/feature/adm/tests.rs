//! Unit tests of the integer ADM extractor.
//!
//! The reference values in `matches_libvmaf_*` were printed by libvmaf (FFmpeg 9.0.2 `libvmaf`
//! filter, libvmaf git 86da14d) for the synthetic pictures [`pattern`] builds, written to y4m with
//! neutral chroma; libvmaf prints 6 decimals (16 for values within 1e-6 of an integer).

use super::scalar::{self, QuadMut};
use super::tables::{COS_1DEG_SQ, DIV_LOOKUP};
use super::{Adm, AdmParams, AdmScores, CsfMode, Kernels, DEF, OPTIONS};
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
        let input = FrameInput {
            reference: Plane::new_u8(&r8, w, h, w).unwrap(),
            distorted: Plane::new_u8(&d8, w, h, w).unwrap(),
            prev_reference: None,
            prev_reference_chroma: None,
            prev_prev_reference: None,
            reference_chroma: None,
            distorted_chroma: None,
            prev_distorted: None,
            prev_prev_distorted: None,
            prev_distorted_chroma: None,
            index: 0,
        };
        ex.extract(&input, &mut out).unwrap();
    } else {
        let input = FrameInput {
            reference: Plane::new_u16(&r, w, h, w).unwrap(),
            distorted: Plane::new_u16(&d, w, h, w).unwrap(),
            prev_reference: None,
            prev_reference_chroma: None,
            prev_prev_reference: None,
            reference_chroma: None,
            distorted_chroma: None,
            prev_distorted: None,
            prev_prev_distorted: None,
            prev_distorted_chroma: None,
            index: 0,
        };
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

#[test]
fn dwt_hand_checked() {
    // 8x8 8-bit picture: rows 0..4 are 100, rows 4..8 are 200 (a horizontal edge).
    let (w, h) = (8usize, 8usize);
    let src: Vec<u8> = (0..w * h)
        .map(|i| if i / w < 4 { 100 } else { 200 })
        .collect();
    let mut ind_y = vec![[0usize; 4]; 4];
    let mut ind_x = vec![[0usize; 4]; 4];
    scalar::dwt_indices(h, &mut ind_y);
    scalar::dwt_indices(w, &mut ind_x);
    assert_eq!(
        ind_y,
        vec![[1, 0, 1, 2], [1, 2, 3, 4], [3, 4, 5, 6], [5, 6, 7, 7]]
    );
    let (mut tl, mut th) = (vec![0i16; w], vec![0i16; w]);
    let mut q = [
        vec![0i16; 16],
        vec![0i16; 16],
        vec![0i16; 16],
        vec![0i16; 16],
    ];
    let [a, hb, v, d] = &mut q;
    scalar::dwt2_s0(
        &src,
        w,
        w,
        8,
        &ind_y,
        &ind_x,
        &mut tl,
        &mut th,
        QuadMut { a, h: hb, v, d },
        4,
        LibvmafIsa::C,
    );
    // Output row 1 reads rows 1..=4 = (100, 100, 100, 200):
    //   vertical lo = 15826*100 + 27411*100 + 7345*100 - 4240*200 - 46342*128 = -1721576,
    //     (-1721576 + 128) >> 8 = -6725;
    //   vertical hi = -4240*100 - 7345*100 + 27411*100 - 15826*200 = -1582600,
    //     (-1582600 + 128) >> 8 = -6182;
    //   rows are constant, so horizontally lo gives (46342 * t + 32768) >> 16 and hi gives 0:
    //   a = (46342 * -6725 + 32768) >> 16 = -4755, h = (46342 * -6182 + 32768) >> 16 = -4371.
    for j in 0..4 {
        assert_eq!(q[0][4 + j], -4755, "a");
        assert_eq!(q[1][4 + j], -4371, "h");
        assert_eq!(q[2][4 + j], 0, "v");
        assert_eq!(q[3][4 + j], 0, "d");
    }
    // Output row 0 reads rows (1, 0, 1, 2), all 100: lo = (46342*(100-128) + 128) >> 8 = -5069,
    // hi = (0 + 128) >> 8 = 0; a = (46342 * -5069 + 32768) >> 16 = -3584.
    assert_eq!(q[0][0], -3584);
    assert_eq!(q[1][0], 0);
    // A constant 200 picture: lo = (46342*72 + 128) >> 8 = 13034, a = 9217, details 0.
    let flat = vec![200u8; w * h];
    scalar::dwt2_s0(
        &flat,
        w,
        w,
        8,
        &ind_y,
        &ind_x,
        &mut tl,
        &mut th,
        {
            let [a, hb, v, d] = &mut q;
            QuadMut { a, h: hb, v, d }
        },
        4,
        LibvmafIsa::C,
    );
    assert!(q[0].iter().all(|&x| x == 9217));
    assert!(q[1..].iter().all(|b| b.iter().all(|&x| x == 0)));
}

/// A reference model of libvmaf's scale-0 DWT as each of its kernel families computes it
/// (`adm_dwt2_8` / `adm_dwt2_16` in C, `adm_dwt2_16_avx2`, `adm_dwt2_8_avx512`,
/// `adm_dwt2_16_avx512`), written independently of `scalar::dwt2_s0`: the vertical pass of each
/// output row goes into one scratch row `lo ++ hi` (libvmaf's `tmplo`, then `tmphi = tmplo + w`);
/// the horizontal pass uses mirrored taps, except that a vector loop of `n` outputs that reaches
/// the last output column (`(half_w - 1) % n == 0`: AVX2 `n = 16` above 8 bits, AVX-512 32 at 8
/// bits and 64 above) reads that column's low-pass taps straight from the scratch row, past `lo`
/// into `hi`. The high-pass taps past `hi` are stale memory in libvmaf; the model leaves that
/// column of `h` and `d` mirrored. libvmaf's C, and its 8-bit AVX2 kernel, mirror every tap.
fn dwt_s0_model(src: &[u16], w: usize, h: usize, bpc: u32, isa: LibvmafIsa) -> [Vec<i16>; 4] {
    use super::tables::{DB2_HI, DB2_LO, DB2_LO_SUM};
    let (ow, oh) = (w.div_ceil(2), h.div_ceil(2));
    let mirror = |x: isize, n: usize| -> usize {
        let n = n as isize;
        (if x < 0 {
            -x
        } else if x >= n {
            2 * n - x - 1
        } else {
            x
        }) as usize
    };
    let n = match (isa, bpc) {
        (LibvmafIsa::C, _) | (LibvmafIsa::Avx2, 8) => usize::MAX,
        (LibvmafIsa::Avx2, _) => 16,
        (LibvmafIsa::Avx512, 8) => 32,
        (LibvmafIsa::Avx512, _) => 64,
    };
    let vector_last = ow > 1 && (ow - 1) % n == 0;
    let mut out = [
        vec![0i16; ow * oh],
        vec![0i16; ow * oh],
        vec![0i16; ow * oh],
        vec![0i16; ow * oh],
    ];
    let add = 1i32 << (bpc - 1);
    for i in 0..oh {
        let mut row = vec![0i16; 2 * w];
        for x in 0..w {
            let s = |k: usize| src[mirror(2 * i as isize - 1 + k as isize, h) * w + x] as i32;
            let (mut lo, mut hi) = (-DB2_LO_SUM * add, 0i32);
            for k in 0..4 {
                lo += DB2_LO[k] * s(k);
                hi += DB2_HI[k] * s(k);
            }
            row[x] = ((lo + add) >> bpc) as i16;
            row[w + x] = ((hi + add) >> bpc) as i16;
        }
        for j in 0..ow {
            let raw = j == ow - 1 && vector_last;
            let tap = |k: usize, hi: bool| -> i32 {
                let x = 2 * j as isize - 1 + k as isize;
                let x = if raw && !hi { x as usize } else { mirror(x, w) };
                row[x + if hi { w } else { 0 }] as i32
            };
            let f = |c: &[i32; 4], hi: bool| -> i16 {
                let acc: i32 = (0..4).map(|k| c[k] * tap(k, hi)).sum();
                ((acc + 32768) >> 16) as i16
            };
            let p = i * ow + j;
            out[0][p] = f(&DB2_LO, false);
            out[1][p] = f(&DB2_LO, true);
            out[2][p] = f(&DB2_HI, false);
            out[3][p] = f(&DB2_HI, true);
        }
    }
    out
}

#[test]
fn dwt_s0_last_column_follows_each_libvmaf_kernel_family() {
    use LibvmafIsa::{Avx2, Avx512, C};
    // Widths whose last output column a libvmaf vector loop computes unmirrored.
    for (w, bpc, isa, expect) in [
        (65, 8, Avx512, true),
        (66, 8, Avx512, true),
        (67, 8, Avx512, false),
        (64, 8, Avx512, false),
        (129, 8, Avx512, true),
        (321, 8, Avx512, true),
        (322, 8, Avx512, true),
        (320, 8, Avx512, false),
        (321, 8, Avx2, false),
        (321, 8, C, false),
        (65, 10, Avx512, false),
        (65, 10, Avx2, true),
        (33, 10, Avx2, true),
        (97, 12, Avx2, true),
        (98, 16, Avx2, true),
        (99, 16, Avx2, false),
        (129, 10, Avx512, true),
        (129, 10, Avx2, true),
        (129, 10, C, false),
        (130, 16, Avx512, true),
        (193, 12, Avx512, false),
        (193, 12, Avx2, true),
        (257, 12, Avx512, true),
    ] {
        assert_eq!(
            scalar::s0_last_column_unmirrored(isa, w, bpc),
            expect,
            "{w} wide, {bpc}-bit, {isa}"
        );
    }
    for (w, h, bpc) in [
        (65, 20, 8),
        (66, 19, 8),
        (67, 18, 8),
        (129, 17, 8),
        (194, 9, 8),
        (321, 7, 8),
        (322, 6, 8),
        (33, 17, 10),
        (66, 16, 12),
        (97, 9, 16),
        (129, 17, 10),
        (130, 16, 16),
        (257, 9, 12),
        (258, 8, 16),
        (385, 5, 10),
        (65, 16, 10),
        (193, 8, 16),
        (99, 8, 10),
    ] {
        let (r, d) = pattern(w, h, bpc, 30);
        for src in [r, d] {
            let (ow, oh) = (w.div_ceil(2), h.div_ceil(2));
            let (mut ind_y, mut ind_x) = (vec![[0usize; 4]; oh], vec![[0usize; 4]; ow]);
            scalar::dwt_indices(h, &mut ind_y);
            scalar::dwt_indices(w, &mut ind_x);
            let c = dwt_s0_model(&src, w, h, bpc, C);
            for isa in LibvmafIsa::ALL {
                let (mut tl, mut th) = (vec![0i16; w], vec![0i16; w]);
                let mut q = [
                    vec![0i16; ow * oh],
                    vec![0i16; ow * oh],
                    vec![0i16; ow * oh],
                    vec![0i16; ow * oh],
                ];
                let [a, hb, v, dd] = &mut q;
                let bands = QuadMut { a, h: hb, v, d: dd };
                let (it, ix) = (&ind_y, &ind_x);
                if bpc == 8 {
                    let s8: Vec<u8> = src.iter().map(|&x| x as u8).collect();
                    scalar::dwt2_s0(&s8, w, w, bpc, it, ix, &mut tl, &mut th, bands, ow, isa);
                } else {
                    scalar::dwt2_s0(&src, w, w, bpc, it, ix, &mut tl, &mut th, bands, ow, isa);
                }
                let want = dwt_s0_model(&src, w, h, bpc, isa);
                for (b, name) in ["a", "h", "v", "d"].iter().enumerate() {
                    assert_eq!(q[b], want[b], "band {name}, {w}x{h} {bpc}-bit, {isa}");
                }
                // The C result differs exactly where the vector loop reaches the last column:
                // the last column of `a` and `v`.
                let last_col_differs =
                    (0..oh).any(|i| c[0][i * ow + ow - 1] != q[0][i * ow + ow - 1]);
                assert_eq!(
                    last_col_differs,
                    scalar::s0_last_column_unmirrored(isa, w, bpc),
                    "{w}x{h} {bpc}-bit, {isa}"
                );
                for (b, band) in c.iter().enumerate() {
                    for (p, (&x, &y)) in band.iter().zip(&q[b]).enumerate() {
                        assert!(x == y || (p % ow == ow - 1 && (b == 0 || b == 2)));
                    }
                }
            }
        }
    }
}

/// Per-scale numerators and denominators (libvmaf's `integer_adm_num_scale*` /
/// `integer_adm_den_scale*` debug features) of the [`pattern`] pictures, printed `%.6f`.
fn num_den(w: usize, h: usize, bpc: u32, noise: i64) -> Vec<String> {
    let (r, d) = pattern(w, h, bpc, noise);
    let mut adm = Adm::new(w, h, bpc, AdmParams::default(), LibvmafIsa::Avx512).unwrap();
    let s = compute(&mut adm, &r, &d, w, h, bpc);
    s.num_den.iter().map(|x| format!("{x:.6}")).collect()
}

/// Widths whose last scale-0 DWT column libvmaf's AVX-512 kernels leave unmirrored (see
/// `scalar::dwt2_s0`), computed as [`LibvmafIsa::Avx512`]; the scalar C gives other scale-1..3 values for all of them (e.g. 65x48
/// 8-bit: scale-1 num 35.905327 instead of 35.889004, scale-3 num 28.518007 instead of
/// 28.429085). Reference values from the oracle (FFmpeg 9.0.2 + libvmaf 86da14d on an AVX-512
/// host) for the [`pattern`] pictures written as one-frame y4m with neutral chroma
/// (`ref.y4m`, `dis.y4m`), with:
///
/// ```text
/// ffmpeg -i dis.y4m -i ref.y4m -lavfi "libvmaf=log_fmt=json:log_path=o.json:\
///   feature='name=adm\:debug=true\:adm_csf_scale=2'" -f null -
/// ```
///
/// (`adm_csf_scale` only affects the Barten CSF: it changes the feature names, so that this debug
/// instance is not merged with the model's `adm`, but not the values.) The per-scale values are
/// `integer_adm_{num,den}_scale{0..3}_scf_2`, the scores `integer_adm2` etc. of the model's `adm`.
#[test]
fn matches_libvmaf_avx512_dwt_last_column() {
    let cases = [
        (
            (65, 48, 8, 10),
            [
                "31.724598",
                "32.639416",
                "35.889004",
                "37.156631",
                "34.906574",
                "35.415127",
                "28.429085",
                "28.658222",
            ],
            [
                "0.978187", "0.001521", "0.988333", "0.971972", "0.965884", "0.985640", "0.992004",
            ],
        ),
        (
            (66, 40, 8, 10),
            [
                "29.497276",
                "30.534138",
                "35.085197",
                "36.097107",
                "33.537971",
                "34.872116",
                "28.164745",
                "29.216228",
            ],
            [
                "0.966077", "0.002581", "0.981748", "0.966043", "0.971967", "0.961742", "0.964010",
            ],
        ),
        (
            (129, 40, 10, 6),
            [
                "37.923550",
                "38.567547",
                "39.965397",
                "40.576263",
                "32.506069",
                "32.968750",
                "33.987453",
                "34.313126",
            ],
            [
                "0.986046", "0.000000", "0.993023", "0.983302", "0.984945", "0.985966", "0.990509",
            ],
        ),
        (
            (130, 36, 16, 20),
            [
                "34.667496",
                "36.993259",
                "37.282066",
                "39.895195",
                "30.735123",
                "33.072338",
                "33.759239",
                "34.582573",
            ],
            [
                "0.943965", "0.010507", "0.966729", "0.937130", "0.934500", "0.929330", "0.976192",
            ],
        ),
    ];
    for ((w, h, bpc, noise), nd, scores) in cases {
        assert_eq!(num_den(w, h, bpc, noise), nd, "{w}x{h} {bpc}-bit");
        assert_printed(run(w, h, bpc, noise, &[]), scores);
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

/// Every SIMD level's scale-0 masking kernel equals the scalar one on random bands (full `i16`
/// range and small values) of many widths, including the widths where libvmaf's AVX-512 DWT
/// quirk applies.
#[test]
fn cm_s0_kernels_match_scalar_at_every_level() {
    use crate::cpu::sweep_levels;
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
                let c: Vec<Vec<i16>> = (0..3).map(|_| band()).collect();
                let f: Vec<Vec<i16>> = (0..3).map(|_| band()).collect();
                let irf = [(rnd() as u16) | 1, rnd() as u16, 40000];
                for isa in LibvmafIsa::ALL {
                    let shifts = scalar::CmShiftsS0::new(w, h, isa);
                    let want = scalar::cm_s0(tri(&x), tri(&c), tri(&f), w, w, h, irf, shifts);
                    for level in sweep_levels("cm_s0_kernels_match_scalar_at_every_level") {
                        let got = Kernels::for_level(level).cm_s0(
                            tri(&x),
                            tri(&c),
                            tri(&f),
                            w,
                            w,
                            h,
                            irf,
                            shifts,
                        );
                        assert_eq!(got, want, "{level:?} {w}x{h} small {small} {isa}");
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
    use crate::cpu::sweep_levels;
    let mut s = 0x9e37_79b9_7f4a_7c15u64;
    let mut rnd = move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    };
    let widths = (1..=70).chain([95, 96, 97, 129, 130, 193, 257, 258, 321, 322, 961]);
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
    use crate::cpu::sweep_levels;
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
                let c: Vec<Vec<i32>> = (0..3).map(|_| band()).collect();
                let f: Vec<Vec<i32>> = (0..3).map(|_| band()).collect();
                let irf = [rnd() as u32 | 1 << 31, rnd() as u32 >> 1, 0x3000_0000];
                let shifts = scalar::cm_s123_shifts(w, h);
                let want = scalar::cm_s123(tri(&x), tri(&c), tri(&f), w, w, h, irf, shifts);
                for level in sweep_levels("cm_s123_kernels_match_scalar_at_every_level") {
                    let got = Kernels::for_level(level).cm_s123(
                        tri(&x),
                        tri(&c),
                        tri(&f),
                        w,
                        w,
                        h,
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
    use crate::cpu::sweep_levels;
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
                for egl in [1.0, 1.2, 100.0] {
                    let run = |k: super::DecoupleS0| {
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

/// Every SIMD level's scale-1..3 DWT equals the scalar one on random and extreme bands of many
/// widths, for `i16` (scale 1) and `i32` (scales 1..3) sources.
#[test]
fn dwt_s123_kernels_match_scalar_at_every_level() {
    use crate::cpu::sweep_levels;
    let mut s = 0x0bad_cafe_dead_beefu64;
    let mut rnd = move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    };
    for w in (1..=40).chain([63, 64, 65, 66, 129, 241]) {
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

/// Every SIMD level's CSF kernels equal the scalar ones on random and extreme bands of many
/// widths and regions, with weights on both sides of 2^15 / 2^31.
#[test]
fn csf_kernels_match_scalar_at_every_level() {
    use crate::cpu::sweep_levels;
    let mut s = 0x5151_f00d_1234_4321u64;
    let mut rnd = move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    };
    for w in (1..=40).chain([63, 64, 65, 331]) {
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
                let run16 = |k: super::CsfS0| {
                    let (mut c, mut f) = (vec![vec![5i16; n]; 3], vec![vec![5i16; n]; 3]);
                    {
                        let [c0, c1, c2] = &mut c[..] else {
                            unreachable!()
                        };
                        let [f0, f1, f2] = &mut f[..] else {
                            unreachable!()
                        };
                        let src = [&src16[0][..], &src16[1][..], &src16[2][..]];
                        k(src, [c0, c1, c2], [f0, f1, f2], w, reg, irf16);
                    }
                    (c, f)
                };
                let run32 = |k: super::CsfS123| {
                    let (mut c, mut f) = (vec![vec![5i32; n]; 3], vec![vec![5i32; n]; 3]);
                    {
                        let [c0, c1, c2] = &mut c[..] else {
                            unreachable!()
                        };
                        let [f0, f1, f2] = &mut f[..] else {
                            unreachable!()
                        };
                        let src = [&src32[0][..], &src32[1][..], &src32[2][..]];
                        k(src, [c0, c1, c2], [f0, f1, f2], w, reg, irf32);
                    }
                    (c, f)
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

/// Whole pictures through the extractor give the scalar kernels' values at every SIMD level, for
/// every bit depth, libvmaf variant and a few option sets (widths where libvmaf's AVX2 and
/// AVX-512 last DWT column applies included).
#[test]
fn whole_pictures_match_scalar_at_every_level() {
    use crate::cpu::{sweep_levels, CpuLevel};
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
