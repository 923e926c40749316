//! A host mirror of the CUDA kernels' decomposition (`kernels/float_vif.cu`): all five vertical
//! passes of a row at once, the horizontal passes and the statistic per pixel, decimation that
//! filters only the samples `dec2` keeps, one row's terms summed left to right, then the rows in
//! order, and the NaN of an f64 log2 argument made the CPU's. It must equal the extractor bit for
//! bit, which checks the kernels' order of operations without a GPU.

use super::scalar::{self, log2f_approx, sigma_max_inv, EPS};
use crate::feature::options::OptValues;
use crate::feature::ExtractorConfig;
use crate::feature::FrameInput;
use crate::picture::{ChromaLayout, PictureFormat, Plane};

fn mirror(i: isize, n: isize) -> usize {
    (if i < 0 {
        -i
    } else if i >= n {
        2 * n - i - 2
    } else {
        i
    }) as usize
}

fn hpass(f: &[f32], row: &[f32], j: usize, w: usize) -> f32 {
    let r = (f.len() / 2) as isize;
    let mut acc = 0f32;
    for (k, &fk) in f.iter().enumerate() {
        acc += fk * row[mirror(j as isize - r + k as isize, w as isize)];
    }
    acc
}

/// `fvif_arg`: the CPU's f32 NaN for a NaN argument.
fn arg(q: f64) -> f32 {
    if q.is_nan() {
        f32::from_bits(0x7fc0_0000)
    } else {
        q as f32
    }
}

/// vpass + stat + rowsum + the host's sum over rows.
#[allow(clippy::too_many_arguments)]
fn scale_sums(
    f: &[f32],
    r: &[f32],
    d: &[f32],
    w: usize,
    h: usize,
    gain_limit: f32,
    nsq: f64,
) -> (f32, f32) {
    let rad = (f.len() / 2) as isize;
    let mut tmp = vec![[0f32; 5]; w * h];
    for i in 0..h {
        for x in 0..w {
            let mut a = [0f32; 5];
            for (k, &fk) in f.iter().enumerate() {
                let at = mirror(i as isize - rad + k as isize, h as isize) * w + x;
                let (u, v) = (r[at], d[at]);
                a[0] += fk * u;
                a[1] += fk * v;
                a[2] += fk * (u * u);
                a[3] += fk * (v * v);
                a[4] += fk * (u * v);
            }
            tmp[i * w + x] = a;
        }
    }
    let smi = sigma_max_inv(nsq);
    let (mut acc_num, mut acc_den) = (0f32, 0f32);
    for i in 0..h {
        let rows: Vec<Vec<f32>> = (0..5)
            .map(|p| (0..w).map(|x| tmp[i * w + x][p]).collect())
            .collect();
        let (mut row_num, mut row_den) = (0f32, 0f32);
        for j in 0..w {
            let [m1, m2, xx, yy, xy] = std::array::from_fn(|p| hpass(f, &rows[p], j, w));
            let mut s1 = xx - m1 * m1;
            let mut s2 = yy - m2 * m2;
            let s12 = xy - m1 * m2;
            s1 = if s1 > 0.0 { s1 } else { 0.0 };
            s2 = if s2 > 0.0 { s2 } else { 0.0 };
            let mut gain = s12 / (s1 + EPS);
            let mut sv = s2 - gain * s12;
            if s1 < EPS {
                gain = 0.0;
                sv = s2;
                s1 = 0.0;
            }
            if s2 < EPS {
                gain = 0.0;
                sv = 0.0;
            }
            if gain < 0.0 {
                sv = s2;
                gain = 0.0;
            }
            sv = if sv > EPS { sv } else { EPS };
            gain = if gain < gain_limit { gain } else { gain_limit };
            let g2s = (gain * gain * s1) as f64;
            let mut num = log2f_approx(arg(1.0 + g2s / (sv as f64 + nsq)));
            let mut den = log2f_approx(arg(1.0 + s1 as f64 / nsq));
            if s12 < 0.0 {
                num = 0.0;
            }
            if (s1 as f64) < nsq {
                num = 1.0 - s2 * smi;
                den = 1.0;
            }
            row_num += num;
            row_den += den;
        }
        acc_num += row_num;
        acc_den += row_den;
    }
    (acc_num, acc_den)
}

/// dec_vpass + dec_hpass: (w / 2) x (h / 2).
fn decimate(f: &[f32], src: &[f32], w: usize, h: usize) -> Vec<f32> {
    let rad = (f.len() / 2) as isize;
    let (ow, oh) = (w / 2, h / 2);
    let mut out = vec![0f32; ow * oh];
    for i in 0..oh {
        let row: Vec<f32> = (0..w)
            .map(|x| {
                let mut acc = 0f32;
                for (k, &fk) in f.iter().enumerate() {
                    acc += fk * src[mirror(2 * i as isize - rad + k as isize, h as isize) * w + x];
                }
                acc
            })
            .collect();
        for j in 0..ow {
            out[i * ow + j] = hpass(f, &row, 2 * j, w);
        }
    }
    out
}

/// The eight (num, den) values of the mirror, as the extractor's debug outputs hold them.
fn mirror_scores(o: &OptValues, r: &[f32], d: &[f32], w: usize, h: usize) -> [f64; 8] {
    let ks = o.f64("vif_kernelscale") as f32;
    let gain_limit = o.f64("vif_enhn_gain_limit") as f32;
    let nsq = o.f64("vif_sigma_nsq");
    let skip0 = o.bool("vif_skip_scale0");
    let mut s = [0f64; 8];
    let (mut r, mut d, mut w, mut h) = (r.to_vec(), d.to_vec(), w, h);
    for scale in 0..4 {
        let f = scalar::filter(scale, ks);
        if scale > 0 {
            r = decimate(&f, &r, w, h);
            d = decimate(&f, &d, w, h);
            w /= 2;
            h /= 2;
        }
        if scale == 0 && skip0 {
            continue;
        }
        let (num, den) = scale_sums(&f, &r, &d, w, h, gain_limit, nsq);
        s[2 * scale] = num as f64;
        s[2 * scale + 1] = den as f64;
    }
    if skip0 {
        s[1] = -1.0; // the extractor's debug output for the skipped scale
    }
    s
}

fn lcg(seed: &mut u64) -> u32 {
    *seed = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    (*seed >> 33) as u32
}

#[test]
fn kernel_decomposition_equals_the_extractor() {
    // (width, height, options, the reference's top half flat)
    type Case<'a> = (usize, usize, &'a [(&'a str, &'a str)], bool);
    let cases: &[Case] = &[
        (61, 45, &[], false),
        (64, 48, &[("vif_kernelscale", "0.5")], false),
        (
            70,
            66,
            &[("vif_kernelscale", "1.5"), ("vif_enhn_gain_limit", "1.2")],
            false,
        ),
        (
            97,
            65,
            &[("vif_kernelscale", "3"), ("vif_skip_scale0", "true")],
            false,
        ),
        (56, 57, &[("vif_sigma_nsq", "0")], true),
        (56, 57, &[("vif_sigma_nsq", "5")], true),
        (60, 41, &[], true),
    ];
    let mut seed = 7u64;
    for &(w, h, opts, flat) in cases {
        let mut o = OptValues::defaults(super::OPTIONS);
        o.set("debug", "true").unwrap();
        for (k, v) in opts {
            o.set(k, v).unwrap();
        }
        let format = PictureFormat {
            width: w,
            height: h,
            bpc: 8,
            layout: ChromaLayout::Gray,
        };
        let cfg = ExtractorConfig {
            format,
            opts: o.clone(),
            libvmaf_isa: crate::fidelity::LibvmafIsa::C,
        };
        let mut ex = (super::DEF.create)(&cfg).unwrap();
        for _ in 0..2 {
            let mut r: Vec<u8> = (0..w * h).map(|_| (lcg(&mut seed) % 256) as u8).collect();
            let d: Vec<u8> = r
                .iter()
                .map(|&v| (v as u32 + lcg(&mut seed) % 9).min(255) as u8)
                .collect();
            if flat {
                r[..w * h / 2].fill(128);
            }
            let (pr, pd) = (
                Plane::new_u8(&r, w, h, w).unwrap(),
                Plane::new_u8(&d, w, h, w).unwrap(),
            );
            let mut out = [0f64; 15];
            ex.extract(&FrameInput::luma(pr, pd, 0), &mut out).unwrap();
            let (mut fr, mut fd) = (vec![0f32; w * h], vec![0f32; w * h]);
            crate::feature::picture_copy::to_float(&pr, 8, -128, &mut fr);
            crate::feature::picture_copy::to_float(&pd, 8, -128, &mut fd);
            let m = mirror_scores(&o, &fr, &fd, w, h);
            let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            let mut got = m;
            if o.bool("vif_skip_scale0") {
                got[0] = 0.0;
            }
            assert_eq!(
                bits(&got),
                bits(&out[7..15]),
                "{w}x{h} {opts:?} flat={flat}: mirror {got:?} cpu {:?}",
                &out[7..15]
            );
        }
    }
}
