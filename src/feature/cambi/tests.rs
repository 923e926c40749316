//! Unit tests of cambi's stages: each against a direct (slow) statement of what it computes, and
//! the setup against libvmaf's rules.

use super::cvalues::{self, Params};
use super::filter::{decimate, filter_mode, mode3};
use super::luminance::{self, Eotf};
use super::mask::{mask_index, spatial_mask, MaskScratch};
use super::pooling::{quick_select, spatial_pooling, weight_scores};
use super::preprocess::{anti_dither, libvmaf_stride, nearest_map, resampling, to_10bit, validate};
use super::setup::{Band, Setup, CONTRAST_WEIGHTS};
use super::{lut, DEF};
use crate::cpu::{sweep_levels, CpuLevel};
use crate::feature::options::OptValues;
use crate::picture::{ChromaLayout, PictureFormat, Plane};

/// A small deterministic generator (xorshift).
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

fn format(w: usize, h: usize, bpc: u8) -> PictureFormat {
    PictureFormat {
        width: w,
        height: h,
        bpc,
        layout: ChromaLayout::Yuv420,
    }
}

fn opts(kv: &[(&str, &str)]) -> OptValues {
    let mut o = OptValues::defaults(DEF.options);
    for (k, v) in kv {
        o.set(k, v).unwrap();
    }
    o
}

/// Pictures of flat runs with small steps (what banding looks like), plus a little noise.
fn picture(rng: &mut Rng, w: usize, h: usize, stride: usize, base: u16) -> Vec<u16> {
    let mut p = vec![0u16; stride * h];
    for y in 0..h {
        for x in 0..w {
            let band = ((x / 7 + y / 5) % 6) as u16;
            let noise = (rng.below(23) == 0) as u16;
            p[y * stride + x] = base + band + noise;
        }
    }
    p
}

#[test]
fn reciprocal_table_is_libvmafs() {
    let t = lut::reciprocals();
    assert_eq!(t.len(), 4226);
    assert_eq!(t[0], 0.0);
    // Bit patterns of libvmaf's table (cambi.h), including entries where the 9-digit text
    // rounds to a float other than the nearest to 1/n.
    for (n, bits) in [
        (1, 0x3f800000u32),
        (2, 0x3f000000),
        (3, 0x3eaaaaab),
        (82, 0x3c47ce0d),
        (83, 0x3c4565c9),
        (244, 0x3b864b8b),
        (488, 0x3b064b8b),
        (4225, 0x39782f05),
    ] {
        assert_eq!(t[n].to_bits(), bits, "1/{n}");
    }
    assert_ne!(t[82], 1.0f32 / 82.0);
    let differ = (1..4226).filter(|&n| t[n] != 1.0f32 / n as f32).count();
    assert_eq!(differ, 42);
}

#[test]
fn luminance_follows_the_eotfs() {
    assert_eq!(
        luminance::luminance(0, Eotf::Bt1886),
        luminance::luminance(64, Eotf::Bt1886)
    );
    let black = luminance::luminance(64, Eotf::Bt1886);
    let white = luminance::luminance(940, Eotf::Bt1886);
    assert!(
        (black - 0.01).abs() < 1e-12 && (white - 300.0).abs() < 1e-9,
        "{black} {white}"
    );
    assert_eq!(luminance::luminance(64, Eotf::Pq), 0.0);
    assert!((luminance::luminance(940, Eotf::Pq) - 10000.0).abs() < 1e-6);
    // Thresholds rise with the step and stay in range, for every EOTF and a sweep of tvi.
    for eotf in [Eotf::Bt1886, Eotf::Pq] {
        for i in 1..=200 {
            let tvi = i as f64 / 200.0;
            let mut last = 0;
            for d in 1..=32 {
                let t = luminance::tvi_for_diff(d, tvi, eotf).unwrap();
                assert!(
                    t >= last && t <= 1023,
                    "{eotf:?} tvi {tvi} d {d}: {t} after {last}"
                );
                last = t;
            }
        }
    }
    assert_eq!(luminance::vlt_luma(0.0, Eotf::Bt1886).unwrap(), 0);
    let v = luminance::vlt_luma(1.0, Eotf::Bt1886).unwrap();
    assert!(luminance::luminance(v as i32, Eotf::Bt1886) >= 1.0);
    assert!(luminance::luminance(v as i32 - 1, Eotf::Bt1886) < 1.0);
    // Above white libvmaf would loop forever.
    let e = luminance::vlt_luma(300.5, Eotf::Bt1886)
        .unwrap_err()
        .to_string();
    assert!(e.contains("smaller cambi_vis_lum_threshold"), "{e}");
}

#[test]
fn setup_follows_libvmafs_init() {
    let f = format(1920, 1080, 10);
    let s = Setup::new(&opts(&[]), &f).unwrap();
    assert_eq!((s.enc.width, s.enc.height, s.enc.window), (1920, 1080, 33));
    assert_eq!(s.num_diffs, 4);
    assert_eq!((s.enc_bitdepth, s.speedup, s.full_ref), (10, false, false));
    assert_eq!(s.topk, 0.6);
    assert_eq!(s.band.base, 0);
    assert_eq!(
        s.band.size as i32,
        s.tvi[3] as i32 + 1,
        "with vlt 0 the band starts at 0"
    );
    // The speedup halves the window; 65 at 4K stays 65.
    let s = Setup::new(&opts(&[("cambi_high_res_speedup", "1080")]), &f).unwrap();
    assert_eq!((s.speedup, s.enc.window), (true, 17));
    let s = Setup::new(&opts(&[("cambi_high_res_speedup", "1440")]), &f).unwrap();
    assert!(!s.speedup);
    let s = Setup::new(&opts(&[]), &format(3840, 2160, 8)).unwrap();
    assert_eq!(s.enc.window, 65);
    // An encode larger than the picture is ignored; a smaller one is used.
    let s = Setup::new(&opts(&[("enc_width", "4000"), ("enc_height", "200")]), &f).unwrap();
    assert_eq!((s.enc.width, s.enc.height), (1920, 1080));
    let s = Setup::new(&opts(&[("enc_width", "960"), ("enc_height", "540")]), &f).unwrap();
    assert_eq!((s.enc.width, s.enc.height, s.alloc), (960, 540, (960, 540)));
    let o = opts(&[
        ("full_ref", "true"),
        ("src_width", "3840"),
        ("src_height", "2160"),
    ]);
    let s = Setup::new(&o, &f).unwrap();
    assert_eq!(
        (s.src.width, s.src.height, s.alloc),
        (3840, 2160, (3840, 2160))
    );
    // topk wins when set, else cambi_topk.
    let s = Setup::new(&opts(&[("cambi_topk", "0.2")]), &f).unwrap();
    assert_eq!(s.topk, 0.2);
    let s = Setup::new(&opts(&[("cambi_topk", "0.2"), ("topk", "0.3")]), &f).unwrap();
    assert_eq!(s.topk, 0.3);
    // cambi_eotf wins when not the default.
    let pq = Setup::new(&opts(&[("eotf", "pq")]), &f).unwrap();
    let cpq = Setup::new(&opts(&[("cambi_eotf", "pq")]), &f).unwrap();
    assert_eq!(pq.tvi, cpq.tvi);
    assert_ne!(pq.tvi, Setup::new(&opts(&[]), &f).unwrap().tvi);
    // A dark limit above every visible step: an empty band.
    let o = opts(&[("cambi_vis_lum_threshold", "200"), ("tvi_threshold", "1")]);
    assert_eq!(Setup::new(&o, &f).unwrap().band.size, 0);

    let err = |o: OptValues, f: PictureFormat| Setup::new(&o, &f).unwrap_err().to_string();
    assert!(err(opts(&[]), format(215, 200, 8)).contains("216"));
    assert!(Setup::new(&opts(&[]), &format(216, 100, 8)).is_ok());
    let e = err(opts(&[("window_size", "127")]), format(2000, 1200, 8));
    assert!(e.contains("67-pixel window"), "{e}");
    let o = opts(&[("src_width", "2000"), ("src_height", "900")]);
    assert!(err(o, f).contains("same orientation"));
    let e = err(opts(&[]), format(2048, 24, 8));
    assert!(e.contains("512x6 at scale 2"), "{e}");
}

#[test]
fn nearest_resampling_and_conversion() {
    assert_eq!(nearest_map(4, 2), [1, 3]);
    assert_eq!(nearest_map(3, 3), [0, 1, 2]);
    assert_eq!(nearest_map(2, 4), [0, 0, 1, 1]);
    assert_eq!(libvmaf_stride(33), 64);
    assert!(resampling((10, 10), (10, 10)).unwrap().is_none());
    let (xs, ys) = resampling((1920, 1080), (1280, 720)).unwrap().unwrap();
    assert_eq!(
        (xs.len(), ys.len(), xs[0], xs[1], xs[2]),
        (1280, 720, 0, 2, 3)
    );

    // Every depth's conversion.
    for (bpc, v, want) in [
        (8u8, 255u16, 1020u16),
        (9, 511, 1022),
        (10, 1023, 1023),
        (12, 4095, 1024),
        (12, 4093, 1023),
        (12, 4094, 1024),
        (16, 65535, 1024),
        (16, 65503, 1023),
    ] {
        let (w, h) = (3, 2);
        let data8 = vec![v as u8; w * h];
        let data16 = vec![v; w * h];
        let p = if bpc == 8 {
            Plane::new_u8(&data8, w, h, w).unwrap()
        } else {
            Plane::new_u16(&data16, w, h, w).unwrap()
        };
        let mut out = vec![0u16; 32 * h];
        to_10bit(&p, bpc, None, &mut out, 32, (w, h));
        assert_eq!(out[32 + 2], want, "{bpc}-bit {v}");
    }
    // 10 bits, unscaled, into a wider working picture: rows land at the input's stride (32).
    let data: Vec<u16> = (1..=6).collect();
    let p = Plane::new_u16(&data, 3, 2, 3).unwrap();
    let mut out = vec![7u16; 64 * 2];
    to_10bit(&p, 10, None, &mut out, 64, (3, 2));
    assert_eq!(&out[..3], &[1, 2, 3]);
    assert_eq!(&out[32..35], &[4, 5, 6]);
    assert_eq!(out[64], 7, "beyond the copy: what was there");

    // Out-of-range samples are refused, as libvmaf refuses them.
    let bad = [0u16, 1024, 5];
    let p = Plane::new_u16(&bad, 3, 1, 3).unwrap();
    assert!(validate(&p, 10).unwrap_err().to_string().contains("1024"));
    assert!(validate(&p, 12).is_ok());
}

#[test]
fn anti_dither_averages_forward() {
    let (w, h, st) = (3, 2, 4);
    let mut b = vec![0, 4, 8, 99, 12, 16, 21, 99];
    anti_dither(&mut b, st, w, h);
    assert_eq!(
        &b[..3],
        &[(4 + 12 + 16) / 4, (4 + 8 + 16 + 21) / 4, (8 + 21) / 2]
    );
    assert_eq!(&b[4..7], &[(12 + 16) / 2, (16 + 21) / 2, 21]);
}

#[test]
fn anti_dither_reads_original_samples_at_every_width() {
    let mut rng = Rng(23);
    for (w, h) in [(1, 1), (1, 3), (16, 2), (17, 3), (33, 4), (50, 5)] {
        let st = libvmaf_stride(w);
        let orig: Vec<u16> = (0..st * h).map(|_| rng.below(1024) as u16).collect();
        let mut b = orig.clone();
        anti_dither(&mut b, st, w, h);
        let o = |x: usize, y: usize| orig[y * st + x] as u32;
        for y in 0..h {
            for x in 0..w {
                let want = match (x + 1 < w, y + 1 < h) {
                    (true, true) => (o(x, y) + o(x + 1, y) + o(x, y + 1) + o(x + 1, y + 1)) >> 2,
                    (false, true) => (o(x, y) + o(x, y + 1)) >> 1,
                    (true, false) => (o(x, y) + o(x + 1, y)) >> 1,
                    (false, false) => o(x, y),
                };
                assert_eq!(b[y * st + x] as u32, want, "{w}x{h} at {x},{y}");
            }
        }
    }
}

#[test]
fn mask_counts_flat_neighbourhoods() {
    let mut rng = Rng(7);
    for (w, h) in [(1, 1), (5, 3), (40, 31), (70, 66), (130, 70)] {
        let st = libvmaf_stride(w);
        let img = picture(&mut rng, w, h, st, 100);
        let mut mask = vec![9u16; st * h];
        spatial_mask(&img, &mut mask, st, w, h, &mut MaskScratch::new(w));
        let index = mask_index(w, h);
        let flat = |x: usize, y: usize| {
            let v = img[y * st + x];
            (x + 1 == w || v == img[y * st + x + 1]) && (y + 1 == h || v == img[(y + 1) * st + x])
        };
        for y in 0..h {
            for x in 0..w {
                let mut n = 0;
                for yy in y.saturating_sub(3)..(y + 4).min(h) {
                    for xx in x.saturating_sub(3)..(x + 4).min(w) {
                        n += flat(xx, yy) as u32;
                    }
                }
                assert_eq!(mask[y * st + x], (n > index) as u16, "{w}x{h} at {x},{y}");
            }
        }
    }
    assert_eq!(mask_index(3840, 2160), 24);
    assert_eq!(mask_index(216, 216), 13);
    assert_eq!(mask_index(63, 1000), 7);
}

#[test]
fn mode_filter_and_decimation() {
    assert_eq!(mode3(1, 2, 1), 1);
    assert_eq!(mode3(2, 1, 1), 1);
    assert_eq!(mode3(3, 1, 2), 1);
    let mut rng = Rng(3);
    for (w, h) in [(1, 1), (2, 5), (9, 7), (33, 20)] {
        let st = libvmaf_stride(w);
        let orig: Vec<u16> = (0..st * h).map(|_| rng.below(4) as u16).collect();
        let mut b = orig.clone();
        filter_mode(&mut b, st, w, h, &mut vec![0; 3 * w]);
        let hm = |x: usize, y: usize| {
            let r = &orig[y * st..];
            if x == 0 || x + 1 == w {
                r[x]
            } else {
                mode3(r[x - 1], r[x], r[x + 1])
            }
        };
        for y in 0..h {
            for x in 0..w {
                let want = if y == 0 || y + 1 == h {
                    orig[y * st + x]
                } else {
                    mode3(hm(x, y - 1), hm(x, y), hm(x, y + 1))
                };
                assert_eq!(b[y * st + x], want, "{w}x{h} at {x},{y}");
            }
        }
        let (dw, dh) = (w.div_ceil(2), h.div_ceil(2));
        decimate(&mut b, st, dw, dh);
        for y in 0..dh {
            for x in 0..dw {
                let src = if y == 0 || 2 * y + 1 == h {
                    orig[2 * y * st + 2 * x]
                } else {
                    mode3(hm(2 * x, 2 * y - 1), hm(2 * x, 2 * y), hm(2 * x, 2 * y + 1))
                };
                assert_eq!(b[y * st + x], src);
            }
        }
    }
}

/// The c-value of (x, y) from its window counted directly (libvmaf's `c_value_pixel` on
/// whole-window histograms).
#[allow(clippy::too_many_arguments)]
fn c_value_direct(
    img: &[u16],
    mask: &[u16],
    st: usize,
    (w, h): (usize, usize),
    pad: usize,
    p: &Params<'_>,
    (tvi, vlt): (&[u16], u16),
    x: usize,
    y: usize,
) -> f32 {
    if mask[y * st + x] == 0 {
        return 0.0;
    }
    let count = |v: i32| -> u16 {
        if v < p.band.base as i32 || v >= p.band.base as i32 + p.band.size as i32 {
            return 0;
        }
        let mut n = 0;
        for yy in y.saturating_sub(pad)..(y + pad + 1).min(h) {
            for xx in x.saturating_sub(pad)..(x + pad + 1).min(w) {
                n += (mask[yy * st + xx] != 0 && img[yy * st + xx] as i32 == v) as u16;
            }
        }
        n
    };
    let v = img[y * st + x] as i32;
    if p.band.row(v as u16).is_none() {
        return 0.0;
    }
    let nd = tvi.len() as i32;
    let p0 = count(v);
    let mut c = 0.0f32;
    for d in 0..nd {
        if v + nd <= tvi[d as usize] as i32 && v + nd + d + 1 > vlt as i32 {
            let (p1, p2) = (count(v + d + 1), count(v - d - 1));
            let pm = p1.max(p2);
            let val = (CONTRAST_WEIGHTS[d as usize] * p0 as i32 * pm as i32) as f32
                * p.lut[(pm + p0) as usize];
            c = c.max(val);
        }
    }
    c
}

#[test]
fn c_values_equal_the_windows_counted_directly() {
    let mut rng = Rng(11);
    let lut = lut::reciprocals();
    let mut nonzero = [0usize; 3];
    let tvi_sets: [&[u16]; 3] = [
        &[110, 120, 125, 130],
        &[104],
        &[103, 104, 104, 108, 110, 111, 111, 200],
    ];
    for (w, h, pad) in [
        (9, 9, 4),
        (20, 13, 3),
        (31, 40, 7),
        (5, 30, 2),
        (12, 12, 0),
        (67, 19, 9),
    ] {
        for (t, tvi) in tvi_sets.iter().enumerate() {
            let nd = tvi.len() as i32;
            let vlt = [0u16, 102, 104][t];
            let base = (vlt as i32 - 3 * nd + 1).max(0);
            let band = Band {
                base: base as u16,
                size: (tvi[tvi.len() - 1] as i32 + 1 - base).max(0) as u16,
            };
            let active = cvalues::active_steps(band, tvi, vlt);
            let p = Params {
                band,
                active: &active,
                lut,
            };
            let st = libvmaf_stride(w);
            let img = picture(&mut rng, w, h, st, 98);
            let mask: Vec<u16> = (0..st * h).map(|_| (rng.below(5) != 0) as u16).collect();
            let mut c = vec![-1.0f32; w * h];
            let mut hist = vec![0u16; band.size as usize * w + cvalues::HIST_PAD];
            let k = cvalues::Kernels::SCALAR;
            cvalues::c_values(
                &k,
                &mut c,
                &mut hist,
                &mut vec![0; 2 * w],
                &img,
                &mask,
                st,
                (w, h),
                pad,
                &p,
            );
            for level in sweep_levels("c_values_equal_the_windows_counted_directly") {
                let mut c2 = vec![-2.0f32; w * h];
                let k = cvalues::Kernels::for_level(level);
                cvalues::c_values(
                    &k,
                    &mut c2,
                    &mut hist,
                    &mut vec![0; 2 * w],
                    &img,
                    &mask,
                    st,
                    (w, h),
                    pad,
                    &p,
                );
                let bits = |v: &[f32]| v.iter().map(|f| f.to_bits()).collect::<Vec<_>>();
                assert_eq!(bits(&c2), bits(&c), "{level:?} {w}x{h} pad {pad} set {t}");
            }
            for y in 0..h {
                for x in 0..w {
                    let want = c_value_direct(&img, &mask, st, (w, h), pad, &p, (tvi, vlt), x, y);
                    assert_eq!(c[y * w + x], want, "{w}x{h} pad {pad} set {t} at {x},{y}");
                    nonzero[t] += (want != 0.0) as usize;
                }
            }
        }
    }
    assert!(nonzero.iter().all(|&n| n > 0), "{nonzero:?}");
}

#[test]
fn pooling_selects_libvmafs_top_values() {
    let mut rng = Rng(5);
    for n in [1usize, 2, 3, 10, 101, 1000] {
        let orig: Vec<f32> = (0..n).map(|_| (rng.below(50) as f32) * 0.37).collect();
        for topk in [0.0001, 0.1, 0.6, 1.0] {
            let mut a = orig.clone();
            let k = ((topk * n as f64) as usize).clamp(1, n);
            quick_select(&mut a, k);
            let mut sorted = orig.clone();
            sorted.sort_by(|x, y| y.partial_cmp(x).unwrap());
            let mut top = a[..k].to_vec();
            top.sort_by(|x, y| y.partial_cmp(x).unwrap());
            assert_eq!(top, sorted[..k], "n {n} k {k}");
            let mut b = orig.clone();
            let mean = spatial_pooling(&mut b, topk);
            let direct = a[..k].iter().map(|&v| v as f64).sum::<f64>() / k as f64;
            assert_eq!(mean, direct);
        }
    }
    // 16+8+4+2+1 = 31, over a 5x5 window.
    assert_eq!(weight_scores(&[1.0; 5], 5), 31.0 / 25.0);
    assert_eq!(
        weight_scores(&[25.0, 0.0, 0.0, 0.0, 0.0], 4),
        16.0 * 25.0 / 25.0
    );
}

#[test]
fn outputs_are_named_as_libvmaf_names_them() {
    let f = format(1920, 1080, 8);
    let o = opts(&[
        ("cambi_high_res_speedup", "1080"),
        ("cambi_vis_lum_threshold", "0.06"),
        ("cambi_max_val", "17"),
        ("full_ref", "true"),
        ("heatmaps_path", "/nonexistent"),
    ]);
    let names: Vec<String> = DEF.spatial.iter().map(|n| DEF.output_name(&o, n)).collect();
    assert_eq!(
        names,
        [
            "cambi_hrs_1080_cmxv_17_vlt_0.06",
            "cambi_source",
            "cambi_full_reference"
        ]
    );
    assert_eq!(DEF.output_name(&opts(&[]), DEF.spatial[0]), "cambi");
    assert!(DEF.shows(&o, &f, "cambi_source"));
    assert!(!DEF.shows(&opts(&[]), &f, "cambi_full_reference"));
    let o = opts(&[
        ("eotf", "pq"),
        ("cambi_eotf", "pq"),
        ("topk", "0.5"),
        ("cambi_topk", "0.3"),
    ]);
    assert_eq!(
        DEF.output_name(&o, DEF.spatial[0]),
        "cambi_ceot_pq_ctpk_0.3_eotf_pq_topk_0.5"
    );
}

#[test]
fn whole_pictures_match_scalar_at_every_level() {
    use super::ExtractorConfig;
    use crate::feature::FrameInput;
    let mut rng = Rng(19);
    for (w, h, bpc, kv) in [
        (333usize, 217usize, 8u8, &[("full_ref", "true")][..]),
        (
            400,
            240,
            10,
            &[("max_log_contrast", "5"), ("topk", "0.2")][..],
        ),
        (256, 230, 12, &[("window_size", "127")][..]),
    ] {
        let max = (1u32 << bpc) - 1;
        let shift = bpc as u32 - 8;
        let r: Vec<u16> = picture(&mut rng, w, h, w, 60)
            .iter()
            .map(|&v| ((v as u32) << shift).min(max) as u16)
            .collect();
        let d: Vec<u16> = r.iter().map(|&v| v ^ (rng.below(50) == 0) as u16).collect();
        let (r8, d8): (Vec<u8>, Vec<u8>) = (
            r.iter().map(|&v| v as u8).collect(),
            d.iter().map(|&v| v as u8).collect(),
        );
        let (rp, dp) = if bpc == 8 {
            (
                Plane::new_u8(&r8, w, h, w).unwrap(),
                Plane::new_u8(&d8, w, h, w).unwrap(),
            )
        } else {
            (
                Plane::new_u16(&r, w, h, w).unwrap(),
                Plane::new_u16(&d, w, h, w).unwrap(),
            )
        };
        let input = FrameInput::luma(rp, dp, 0);
        let cfg = ExtractorConfig {
            format: format(w, h, bpc),
            opts: opts(kv),
            libvmaf_isa: crate::fidelity::LibvmafIsa::C,
        };
        let score = |level: CpuLevel| {
            let mut c = super::Cambi::new(&cfg).unwrap();
            c.kernels = cvalues::Kernels::for_level(level);
            let mut out = [0.0f64; 3];
            super::Extractor::extract(&mut c, &input, &mut out).unwrap();
            out
        };
        let want = score(CpuLevel::Scalar);
        assert!(want[0] > 0.0 || want[1] > 0.0, "{w}x{h}: {want:?}");
        for level in sweep_levels("whole_pictures_match_scalar_at_every_level") {
            assert_eq!(score(level), want, "{level:?} {w}x{h} {bpc}-bit");
        }
    }
}
