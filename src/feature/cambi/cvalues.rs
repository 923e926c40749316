//! CAMBI's c-values (libvmaf's `calculate_c_values`): for every masked pixel, the banding
//! contrast against the values `d + 1` levels above and below, from the histograms of masked
//! pixels in the window around it.
//!
//! The histograms are libvmaf's: one row of `width` counts per sample value of the [`Band`]
//! (counts of the column's window), updated as the window slides down; the counts are integers,
//! so any update order gives libvmaf's. The c-value itself is `float`, as libvmaf computes it:
//! `(float)(weight * p0 * p) * reciprocal[p + p0]`, the largest over the steps.

use super::setup::{Band, CONTRAST_WEIGHTS};
use crate::cpu::CpuLevel;

/// The per-stream constants of the c-value.
#[derive(Debug, Clone, Copy)]
pub struct Params<'a> {
    /// Useful sample values.
    pub band: Band,
    /// Per band row, the steps `d` whose contrast counts for that value (bit `d`; from
    /// [`active_steps`]).
    pub active: &'a [u32],
    /// libvmaf's reciprocal table (`1 / n` as printed with 9 digits).
    pub lut: &'a [f32],
}

/// Adds `delta` (1 or `u16::MAX` for -1, wrapping) to the counts of columns `lo..hi`.
#[inline(always)]
fn update(counts: &mut [u16], delta: u16) {
    for c in counts {
        *c = c.wrapping_add(delta);
    }
}

/// Adds (`delta` 1) or removes (`u16::MAX`) the masked in-band pixels of row `y` to the
/// histograms of the columns within `pad` of them.
#[allow(clippy::too_many_arguments)]
fn update_row(
    hist: &mut [u16],
    img: &[u16],
    mask: &[u16],
    stride: usize,
    w: usize,
    pad: usize,
    band: Band,
    y: usize,
    delta: u16,
) {
    let (row, mrow) = (
        &img[y * stride..y * stride + w],
        &mask[y * stride..y * stride + w],
    );
    for x in 0..w {
        if mrow[x] == 0 {
            continue;
        }
        if let Some(r) = band.row(row[x]) {
            let (lo, hi) = (x.saturating_sub(pad), (x + pad + 1).min(w));
            update(&mut hist[r * w + lo..r * w + hi], delta);
        }
    }
}

/// Per pixel of row `y`: its band row plus one when it is masked and in the band, else 0.
fn band_keys(
    img: &[u16],
    mask: &[u16],
    stride: usize,
    w: usize,
    band: Band,
    y: usize,
    out: &mut [u16],
) {
    let (row, mrow) = (
        &img[y * stride..y * stride + w],
        &mask[y * stride..y * stride + w],
    );
    for ((k, &v), &m) in out[..w].iter_mut().zip(row).zip(mrow) {
        let r = v.wrapping_sub(band.base);
        *k = if m != 0 && r < band.size { r + 1 } else { 0 };
    }
}

/// One step of the slide: row `sub` leaves the window and row `add` enters. A pixel leaving
/// and the one entering below it cancel when they have the same in-band value (libvmaf skips
/// them too), as do two pixels that both do not count; the keys ([`band_keys`], in `keys`:
/// `2 * w`) find the others without a branch per pixel.
#[allow(clippy::too_many_arguments)]
fn slide_row(
    hist: &mut [u16],
    img: &[u16],
    mask: &[u16],
    stride: usize,
    w: usize,
    pad: usize,
    band: Band,
    sub: usize,
    add: usize,
    keys: &mut [u16],
) {
    let (ks, ka) = keys[..2 * w].split_at_mut(w);
    band_keys(img, mask, stride, w, band, sub, ks);
    band_keys(img, mask, stride, w, band, add, ka);
    const CHUNK: usize = 16;
    for (c, (cs, ca)) in ks.chunks(CHUNK).zip(ka.chunks(CHUNK)).enumerate() {
        if cs == ca {
            continue;
        }
        for (i, (&s, &a)) in cs.iter().zip(ca).enumerate() {
            if s == a {
                continue;
            }
            let x = c * CHUNK + i;
            let (lo, hi) = (x.saturating_sub(pad), (x + pad + 1).min(w));
            if s != 0 {
                let r = (s - 1) as usize;
                update(&mut hist[r * w + lo..r * w + hi], u16::MAX);
            }
            if a != 0 {
                let r = (a - 1) as usize;
                update(&mut hist[r * w + lo..r * w + hi], 1);
            }
        }
    }
}

/// Per band row, the steps libvmaf's `c_value_pixel` looks at for that value: step `d` (bit
/// `d`) when the value plus `num_diffs` is at most its visibility threshold and plus `d + 1`
/// more is above the darkness limit.
pub fn active_steps(band: Band, tvi: &[u16], vlt_luma: u16) -> Vec<u32> {
    let nd = tvi.len() as i32;
    (0..band.size as i32)
        .map(|r| {
            let value = band.base as i32 + r + nd;
            (0..nd)
                .filter(|&d| value <= tvi[d as usize] as i32 && value + d + 1 > vlt_luma as i32)
                .fold(0u32, |m, d| m | 1 << d)
        })
        .collect()
}

/// The c-value of one pixel of value `v` in column `x` (libvmaf's `c_value_pixel`): over the
/// active steps, the largest `(float)(weight * p0 * p) * reciprocal[p + p0]`, `p0` the count of
/// `v` and `p` the larger count of `v + d + 1` and `v - d - 1` (0 below the band).
#[inline(always)]
pub(super) fn c_value(hist: &[u16], w: usize, x: usize, v: u16, p: &Params<'_>) -> f32 {
    let Some(row) = p.band.row(v) else {
        return 0.0;
    };
    let mut steps = p.active[row];
    if steps == 0 {
        return 0.0;
    }
    let at = row * w + x;
    let p0 = hist[at];
    let mut c = 0.0f32;
    while steps != 0 {
        let d = steps.trailing_zeros() as usize;
        steps &= steps - 1;
        // Setup checked that larger steps have higher thresholds, so row + d + 1 is in the
        // band here (as libvmaf's band assumes).
        let off = (d + 1) * w;
        let p1 = hist[at + off];
        let p2 = if row > d { hist[at - off] } else { 0 };
        let pm = if p1 > p2 { p1 } else { p2 };
        let num = (CONTRAST_WEIGHTS[d] * p0 as i32 * pm as i32) as f32;
        let val = num * p.lut[pm as usize + p0 as usize];
        if val > c {
            c = val;
        }
    }
    c
}

/// A row kernel: the c-values of one picture row into `out` (0 where the mask is 0), from
/// the row's samples and mask and the histograms (`band.size` rows of `w = out.len()` counts,
/// followed by at least one more sample: SIMD peers read 32 bits at a time).
pub type CValuesRow = fn(&mut [f32], &[u16], &[u16], &[u16], &Params<'_>);

/// The scalar [`CValuesRow`], the specification.
pub fn c_values_row(out: &mut [f32], hist: &[u16], row: &[u16], mask: &[u16], p: &Params<'_>) {
    let w = out.len();
    for x in 0..w {
        out[x] = if mask[x] != 0 {
            c_value(hist, w, x, row[x], p)
        } else {
            0.0
        };
    }
}

/// Histogram padding past the counts, for the SIMD row kernels' 32-bit reads.
pub const HIST_PAD: usize = 2;

/// The c-value row kernel of one CPU level (the scalar specification unless a SIMD level has
/// its own). With the `check_simd` feature every SIMD row is recomputed with the scalar kernel
/// and asserted bit-identical.
#[derive(Clone, Copy)]
pub struct Kernels {
    level: CpuLevel,
    /// See [`CValuesRow`].
    pub c_values_row: CValuesRow,
}

impl std::fmt::Debug for Kernels {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Kernels")
            .field("level", &self.level)
            .finish()
    }
}

impl Kernels {
    /// The scalar specification.
    pub const SCALAR: Kernels = Kernels {
        level: CpuLevel::Scalar,
        c_values_row,
    };

    /// The best kernels at or below `level` that this machine runs.
    pub fn for_level(level: CpuLevel) -> Self {
        #[allow(unused_mut)]
        let mut k = Self::SCALAR;
        #[cfg(target_arch = "x86_64")]
        if level >= CpuLevel::Avx2 {
            super::x86_64_avx2::install(&mut k);
        }
        k.level = level;
        k
    }

    fn row(&self, out: &mut [f32], hist: &[u16], row: &[u16], mask: &[u16], p: &Params<'_>) {
        (self.c_values_row)(out, hist, row, mask, p);
        #[cfg(feature = "check_simd")]
        if self.level > CpuLevel::Scalar {
            let mut want = out.to_vec();
            c_values_row(&mut want, hist, row, mask, p);
            let bits = |v: &[f32]| v.iter().map(|f| f.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(out), bits(&want), "check_simd: cambi c_values_row");
        }
    }
}

/// The c-values of the `w` x `h` picture `img` (mask `mask`, both at `stride`) with a window of
/// `2 * pad + 1`, into `c[..w * h]` (row after row, `w` wide). `hist` holds at least
/// `band.size * w + HIST_PAD` counts, `keys` at least `2 * w`. Setup guarantees `pad <= w` and
/// `pad <= h`.
#[allow(clippy::too_many_arguments)]
pub fn c_values(
    k: &Kernels,
    c: &mut [f32],
    hist: &mut [u16],
    keys: &mut [u16],
    img: &[u16],
    mask: &[u16],
    stride: usize,
    (w, h): (usize, usize),
    pad: usize,
    p: &Params<'_>,
) {
    let band = p.band;
    let c = &mut c[..w * h];
    if band.size == 0 {
        // No value can have a non-zero c-value (libvmaf computes the same zeros).
        c.fill(0.0);
        return;
    }
    let n = band.size as usize * w;
    let hist = &mut hist[..n + HIST_PAD];
    hist.fill(0);
    for y in 0..pad {
        update_row(&mut hist[..n], img, mask, stride, w, pad, band, y, 1);
    }
    for y in 0..h {
        // The window of row y spans rows y - pad ..= y + pad.
        let add = y + pad;
        let counts = &mut hist[..n];
        match (y > pad, add < h) {
            (true, true) => slide_row(
                counts,
                img,
                mask,
                stride,
                w,
                pad,
                band,
                y - pad - 1,
                add,
                keys,
            ),
            (true, false) => update_row(
                counts,
                img,
                mask,
                stride,
                w,
                pad,
                band,
                y - pad - 1,
                u16::MAX,
            ),
            (false, true) => update_row(counts, img, mask, stride, w, pad, band, add, 1),
            (false, false) => {}
        }
        let at = y * stride;
        k.row(
            &mut c[y * w..(y + 1) * w],
            hist,
            &img[at..at + w],
            &mask[at..at + w],
            p,
        );
    }
}
