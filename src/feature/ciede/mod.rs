//! `ciede`: the CIEDE2000 colour difference (`ciede2000`), as libvmaf's `ciede` extractor
//! computes it: `45 - 20 log10(mean ΔE00)` over every luma position.
//!
//! libvmaf's arithmetic, reproduced: each sample goes YUV → R'G'B' (BT.709, limited range) →
//! linear RGB → XYZ (D65) → L\*a\*b\* in `double` with results narrowed to `float` where its
//! helpers return `float`; ΔE00 mixes `float` variables with `double` expressions exactly as its
//! C does (`k_L = 0.65`, `k_C = 1`, `k_H = 4`); the per-pixel values are summed in `double` in
//! raster order. The transcendental functions inside a pixel (`pow`, `powf`, `atan2`, `sin`,
//! `cos`, `exp`) are our own ([`math`]), not the C library's: the CUDA kernel computes the same
//! bits with them, on every host, and they stay within one ulp of glibc's (libvmaf's), which the
//! `f32` narrowing after each call hides. The frame's `log10` is the host's (it runs once, on the
//! host, on both paths).
//!
//! Chroma is brought to luma resolution the way libvmaf's `scale_chroma_planes` does, which is
//! not a plain nearest-neighbour upsampling: output row `i` reads chroma row `i / 2` for 4:2:0
//! *and* 4:2:2, and output column `j` reads chroma column `j / 2` for 4:2:0 but column `j` for
//! 4:2:2, running past the row's end into libvmaf's row padding (zeros) and the following rows.
//! So reads are emulated on libvmaf's own picture layout: each chroma plane `w >> 1` samples wide
//! with rows `align32(w >> 1)` apart, the Cr plane right after the Cb plane. At 4:2:0 with an odd
//! height, or an odd width whose `w >> 1` is a multiple of 32, libvmaf reads past the end of its
//! picture buffer (uninitialised heap memory: its results vary between runs); vmaf_rs reads
//! zeros there, the value of libvmaf's padding, and scores deterministically.

pub mod math;

use super::{Extractor, ExtractorConfig, ExtractorDef, FrameInput};
use crate::error::{Error, Result};
use crate::picture::{ChromaLayout, PictureFormat, Plane, Samples};
use std::f64::consts::PI;

/// Registry entry.
pub static DEF: ExtractorDef = ExtractorDef {
    name: "ciede",
    spatial: &["ciede2000"],
    reads_chroma: |_, _| true,
    check,
    create,
    ..ExtractorDef::DEFAULTS
};

fn check(_: &crate::feature::options::OptValues, f: &PictureFormat) -> Result<()> {
    if f.layout == ChromaLayout::Gray {
        return Err(Error::Unsupported(
            "feature ciede: 4:0:0 input (CIEDE2000 needs colour; libvmaf's ciede refuses it too; \
             convert, e.g. with format=yuv420p)"
                .into(),
        ));
    }
    if !matches!(f.bpc, 8 | 10 | 12 | 16) {
        return Err(Error::Unsupported(format!(
            "feature ciede: {}-bit input (libvmaf's ciede takes 8, 10, 12 or 16 bits; convert, \
             e.g. with format=yuv420p10le)",
            f.bpc
        )));
    }
    Ok(())
}

/// Whether libvmaf's `ciede` reads past the end of its picture buffer on this format (then its
/// scores are not reproducible, not even by libvmaf; see the module docs).
pub fn libvmaf_reads_out_of_bounds(f: &PictureFormat) -> bool {
    let cw = f.width >> 1;
    f.layout == ChromaLayout::Yuv420
        && (f.height % 2 == 1 || (f.width % 2 == 1 && cw.is_multiple_of(32)))
}

struct Ciede {
    bpc: u32,
    layout: ChromaLayout,
    cache: LabCache,
}

fn create(cfg: &ExtractorConfig) -> Result<Box<dyn Extractor>> {
    check(&cfg.opts, &cfg.format)?;
    Ok(Box::new(Ciede {
        bpc: cfg.format.bpc as u32,
        layout: cfg.format.layout,
        cache: LabCache::new(),
    }))
}

/// libvmaf's chroma planes as its `VmafPicture` lays them out: Cb then Cr, rows `pitch` apart,
/// zeros after each row's samples; anything past the Cr plane reads as zero.
struct ChromaBuf<'a, T> {
    planes: [&'a [T]; 2],
    strides: [usize; 2],
    width: usize,
    height: usize,
    pitch: usize,
}

impl<T: Copy + Into<u32>> ChromaBuf<'_, T> {
    /// The sample at linear offset `off` from the start of plane `p` (0: Cb, 1: Cr).
    fn at(&self, p: usize, off: usize) -> u32 {
        let plane_len = self.pitch * self.height;
        let (p, off) = if off >= plane_len {
            (p + 1, off - plane_len)
        } else {
            (p, off)
        };
        if p >= 2 || off >= plane_len {
            return 0;
        }
        let (row, col) = (off / self.pitch, off % self.pitch);
        if col >= self.width {
            return 0;
        }
        self.planes[p][row * self.strides[p] + col].into()
    }
}

fn samples<'a, T>(p: &Plane<'a>, pick: fn(Samples<'a>) -> Option<&'a [T]>) -> Result<&'a [T]> {
    pick(p.samples).ok_or_else(|| Error::Internal("ciede: planes of mixed sample sizes".into()))
}

impl Ciede {
    fn score<'a, T: Copy + Into<u32>>(
        &mut self,
        input: &FrameInput<'a>,
        pick: fn(Samples<'a>) -> Option<&'a [T]>,
    ) -> Result<f64> {
        let missing = || Error::Internal("ciede: chroma planes missing".into());
        let rc = input.reference_chroma.ok_or_else(missing)?;
        let dc = input.distorted_chroma.ok_or_else(missing)?;
        let (ry, dy) = (&input.reference, &input.distorted);
        let (w, h) = (ry.width, ry.height);
        let buf = |c: &[Plane<'a>; 2]| -> Result<ChromaBuf<'a, T>> {
            Ok(ChromaBuf {
                planes: [samples(&c[0], pick)?, samples(&c[1], pick)?],
                strides: [c[0].stride, c[1].stride],
                width: c[0].width,
                height: c[0].height,
                pitch: libvmaf_chroma_pitch(c[0].width),
            })
        };
        let (rb, db) = (buf(&rc)?, buf(&dc)?);
        let (rys, dys) = (samples(ry, pick)?, samples(dy, pick)?);
        let mut sum = 0f64;
        for i in 0..h {
            for j in 0..w {
                // The chroma offset libvmaf's upsampling (or its 4:4:4 shortcut) reads.
                let off = match self.layout {
                    ChromaLayout::Yuv420 => (i / 2) * rb.pitch + j / 2,
                    ChromaLayout::Yuv422 => (i / 2) * rb.pitch + j,
                    _ => i * rb.pitch + j,
                };
                let r = self.cache.get(
                    rys[i * ry.stride + j].into(),
                    rb.at(0, off),
                    rb.at(1, off),
                    self.bpc,
                );
                let d = self.cache.get(
                    dys[i * dy.stride + j].into(),
                    db.at(0, off),
                    db.at(1, off),
                    self.bpc,
                );
                sum += ciede2000(r, d) as f64;
            }
        }
        Ok(score_of_sum(sum, w, h))
    }
}

impl Extractor for Ciede {
    fn extract(&mut self, input: &FrameInput<'_>, out: &mut [f64]) -> Result<()> {
        out[0] = match input.reference.samples {
            Samples::U8(_) => self.score(input, |s| match s {
                Samples::U8(v) => Some(v),
                _ => None,
            })?,
            Samples::U16(_) => self.score(input, |s| match s {
                Samples::U16(v) => Some(v),
                _ => None,
            })?,
        };
        Ok(())
    }
}

/// The frame's score from the sum of its per-pixel ΔE00 (`f32` values added in raster order
/// into an `f64` from 0); the CUDA plan finishes its device sum with it.
pub(crate) fn score_of_sum(sum: f64, w: usize, h: usize) -> f64 {
    // C: an unsigned product of the luma size, then double.
    45.0 - 20.0 * (sum / ((w as u32).wrapping_mul(h as u32)) as f64).log10()
}

/// libvmaf's chroma row pitch in samples for a chroma plane `cw` wide (32-sample aligned).
pub(crate) fn libvmaf_chroma_pitch(cw: usize) -> usize {
    (cw + 31) & !31
}

/// A colour in CIE L\*a\*b\*, as libvmaf's `float` struct holds it.
#[derive(Clone, Copy)]
struct Lab {
    l: f32,
    a: f32,
    b: f32,
}

/// Slots of a [`LabCache`] (log2): 32 Ki entries of 24 bytes (768 KiB), about a core's L2.
const LAB_CACHE_BITS: u32 = 15;

/// The L\*a\*b\* of recently seen (Y, Cb, Cr) samples. [`lab`] is a function of the three
/// integer samples alone and costs six `pow`s, while pictures repeat their colours, so a slot
/// that holds the key returns the very value `lab` would compute (direct-mapped, no eviction
/// policy to get wrong).
struct LabCache {
    /// (key, value); the key packs the samples (each below 2^16) into 48 bits, so `u64::MAX`
    /// marks an empty slot.
    slots: Vec<(u64, Lab)>,
}

impl LabCache {
    fn new() -> Self {
        let empty = (
            u64::MAX,
            Lab {
                l: 0.0,
                a: 0.0,
                b: 0.0,
            },
        );
        LabCache {
            slots: vec![empty; 1 << LAB_CACHE_BITS],
        }
    }

    /// `lab(y, u, v, bpc)` of integer samples (each below 2^16; `bpc` fixed per cache).
    fn get(&mut self, y: u32, u: u32, v: u32, bpc: u32) -> Lab {
        let key = y as u64 | (u as u64) << 16 | (v as u64) << 32;
        let slot = (key.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> (64 - LAB_CACHE_BITS)) as usize;
        let e = &mut self.slots[slot];
        if e.0 != key {
            *e = (key, lab(y as f32, u as f32, v as f32, bpc));
        }
        e.1
    }
}

/// sRGB transfer function inverse (libvmaf's `rgb_to_xyz_map`).
fn linearise(c: f64) -> f64 {
    if c > 10.0 / 255.0 {
        math::pow((c + 0.055) * (1.0 / 1.055), 2.4)
    } else {
        c * (1.0 / 12.92)
    }
}

/// CIE's `f(t)` (libvmaf's `xyz_to_lab_map`), narrowed to float as libvmaf returns it.
fn lab_f(c: f64) -> f32 {
    const KAPPA: f64 = 24389.0 / 27.0;
    const EPSILON: f64 = 216.0 / 24389.0;
    if c > EPSILON {
        math::pow(c, 1.0 / 3.0) as f32
    } else {
        ((KAPPA * c + 16.0) * (1.0 / 116.0)) as f32
    }
}

/// libvmaf's `get_lab_color`: limited-range BT.709 YUV (samples as floats) to L\*a\*b\*.
fn lab(y: f32, u: f32, v: f32, bpc: u32) -> Lab {
    let scale = (1u32 << (bpc - 8)) as f64;
    let y = (y as f64 - 16.0 * scale) * (1.0 / (219.0 * scale));
    let u = (u as f64 - 128.0 * scale) * (1.0 / (224.0 * scale));
    let v = (v as f64 - 128.0 * scale) * (1.0 / (224.0 * scale));
    let r = linearise(y + 1.28033 * v);
    let g = linearise(y - 0.21482 * u - 0.38059 * v);
    let b = linearise(y + 2.12798 * u);
    let x = r * 0.4124564390896921 + g * 0.357576077643909 + b * 0.18043748326639894;
    let yy = r * 0.21267285140562248 + g * 0.715152155287818 + b * 0.07217499330655958;
    let z = r * 0.019333895582329317 + g * 0.119192025881303 + b * 0.9503040785363677;
    let x = lab_f(x * (1.0 / 0.95047)) as f64;
    let yy = lab_f(yy) as f64;
    let z = lab_f(z * (1.0 / 1.08883)) as f64;
    Lab {
        l: ((116.0 * yy) - 16.0) as f32,
        a: (500.0 * (x - yy)) as f32,
        b: (200.0 * (yy - z)) as f32,
    }
}

/// Hue angle in [0, 2π) (`atan2` in double, kept as float).
fn h_prime(b: f32, a: f32) -> f32 {
    if b == 0.0 && a == 0.0 {
        return 0.0;
    }
    let mut h = math::atan2(b as f64, a as f64) as f32;
    if h < 0.0 {
        h = (h as f64 + 2.0 * PI) as f32;
    }
    h
}

fn delta_h_prime(c1: f32, c2: f32, h1: f32, h2: f32) -> f32 {
    if c1 == 0.0 || c2 == 0.0 {
        return 0.0;
    }
    let d = h2 - h1;
    if ((h1 - h2).abs() as f64) <= PI {
        d
    } else if h2 <= h1 {
        (d as f64 + 2.0 * PI) as f32
    } else {
        (d as f64 - 2.0 * PI) as f32
    }
}

fn h_bar_prime(h1: f32, h2: f32) -> f32 {
    let s = (h1 + h2) as f64;
    if ((h1 - h2).abs() as f64) > PI {
        ((s + 2.0 * PI) / 2.0) as f32
    } else {
        (s / 2.0) as f32
    }
}

fn upcase_t(h: f32) -> f32 {
    let h = h as f64;
    (1.0 - 0.17 * math::cos(h - PI / 6.0)
        + 0.24 * math::cos(2.0 * h)
        + 0.32 * math::cos(3.0 * h + PI / 30.0)
        - 0.20 * math::cos(4.0 * h - 7.0 * PI / 20.0)) as f32
}

/// 25⁷ as a float constant (C folds `powf(25., 7)`, correctly rounded).
const POW25_7_F32: f32 = 6103515625.0;
/// 25⁷, exact in double.
const POW25_7: f64 = 6103515625.0;

fn r_sub_t(c_bar_prime: f32, h_bar_prime: f32) -> f32 {
    let deg = (h_bar_prime as f64 * (180.0 / PI)) as f32;
    let t = ((deg as f64 - 275.0) * (1.0 / 25.0)) as f32;
    let c7 = math::powf(c_bar_prime, 7.0);
    let ratio = c7 / (c7 + POW25_7_F32);
    let angle = (60.0 * math::exp(-(t * t) as f64)) as f32;
    let rad = (angle as f64 * (PI / 180.0)) as f32;
    (-2.0 * (ratio as f64).sqrt() * math::sin(rad as f64)) as f32
}

/// ΔE00 with libvmaf's weights (k_L 0.65, k_C 1, k_H 4), in its mix of float and double.
fn ciede2000(c1: Lab, c2: Lab) -> f32 {
    let sq = |v: f32| (v as f64) * (v as f64);
    let (kl, kc, kh) = (0.65f64 as f32, 1.0f32, 4.0f32);
    let dl = c2.l - c1.l;
    let l_bar = (c1.l + c2.l) / 2.0;
    let ch1 = (sq(c1.a) + sq(c1.b)).sqrt() as f32;
    let ch2 = (sq(c2.a) + sq(c2.b)).sqrt() as f32;
    let c_bar = (ch1 + ch2) / 2.0;
    let c7 = math::pow(c_bar as f64, 7.0);
    let g = 1.0 - (c7 / (c7 + POW25_7)).sqrt();
    let a1 = (c1.a as f64 + ((c1.a / 2.0) as f64) * g) as f32;
    let a2 = (c2.a as f64 + ((c2.a / 2.0) as f64) * g) as f32;
    let cp1 = (sq(a1) + sq(c1.b)).sqrt() as f32;
    let cp2 = (sq(a2) + sq(c2.b)).sqrt() as f32;
    let c_bar_prime = (cp1 + cp2) / 2.0;
    let dc = cp2 - cp1;
    let l50 = sq(l_bar - 50.0);
    let s_l = (1.0 + (0.015 * l50) / (20.0 + l50).sqrt()) as f32;
    let s_c = (1.0 + 0.045 * c_bar_prime as f64) as f32;
    let h1 = h_prime(c1.b, a1);
    let h2 = h_prime(c2.b, a2);
    let dh = delta_h_prime(ch1, ch2, h1, h2);
    let d_upper_h = (2.0 * ((cp1 * cp2) as f64).sqrt() * math::sin(dh as f64 / 2.0)) as f32;
    let h_bar = h_bar_prime(h1, h2);
    let t = upcase_t(h_bar);
    let s_h = (1.0 + 0.015 * c_bar_prime as f64 * t as f64) as f32;
    let rt = r_sub_t(c_bar_prime, h_bar);
    let lightness = dl / (kl * s_l);
    let chroma = dc / (kc * s_c);
    let hue = d_upper_h / (kh * s_h);
    (sq(lightness) + sq(chroma) + sq(hue) + (rt * chroma * hue) as f64).sqrt() as f32
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::feature::options::OptValues;

    #[test]
    fn lab_cache_returns_lab() {
        // Random samples of every depth, a cache much smaller than the keys so slots are
        // evicted and refilled; every value must be `lab`'s to the bit.
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for bpc in [8u32, 10, 12, 16] {
            let mut cache = LabCache::new();
            let max = (1u64 << bpc) - 1;
            for n in 0..200_000 {
                // Small ranges repeat keys (hits), full ones spread them (misses).
                let m = if n % 2 == 0 { max } else { 7 };
                let (y, u, v) = (next() & m, next() & m, next() & m);
                let (y, u, v) = (y as u32, u as u32, v as u32);
                let got = cache.get(y, u, v, bpc);
                let want = lab(y as f32, u as f32, v as f32, bpc);
                assert_eq!(
                    [got.l, got.a, got.b].map(f32::to_bits),
                    [want.l, want.a, want.b].map(f32::to_bits),
                    "bpc {bpc}: ({y}, {u}, {v})"
                );
            }
        }
    }

    #[test]
    fn refuses_what_libvmaf_refuses() {
        let o = OptValues::defaults(&[]);
        let f = |bpc, layout| PictureFormat {
            width: 64,
            height: 48,
            bpc,
            layout,
        };
        for bpc in [8, 10, 12, 16] {
            assert!(check(&o, &f(bpc, ChromaLayout::Yuv422)).is_ok());
        }
        let e = check(&o, &f(8, ChromaLayout::Gray)).unwrap_err();
        assert!(e.to_string().contains("4:0:0"), "{e}");
        let e = check(&o, &f(9, ChromaLayout::Yuv444)).unwrap_err();
        assert!(e.to_string().contains("9-bit"), "{e}");
    }

    /// Identical colours differ by zero; a pure lightness step is `ΔL / (k_L S_L)`.
    #[test]
    fn ciede2000_basics() {
        let c = lab(120.0, 100.0, 150.0, 8);
        assert_eq!(ciede2000(c, c), 0.0);
        let (a, b) = (lab(80.0, 128.0, 128.0, 8), lab(90.0, 128.0, 128.0, 8));
        assert!(a.a.abs() < 1e-3 && a.b.abs() < 1e-3);
        assert!(ciede2000(a, b) > 0.0);
    }
}
