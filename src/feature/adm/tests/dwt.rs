//! The DWT: a hand-checked case, libvmaf's last-column variants against an independent model,
//! and the oracle's values where those variants reach the scores.

use super::super::scalar::{self, QuadMut};
use super::{assert_printed, compute, pattern, run};
use crate::feature::adm::{Adm, AdmParams};
use crate::fidelity::LibvmafIsa;

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
    use crate::feature::adm::tables::{DB2_HI, DB2_LO, DB2_LO_SUM};
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
