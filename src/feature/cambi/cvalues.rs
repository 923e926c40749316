//! CAMBI's c-values (libvmaf's `calculate_c_values`): for every masked pixel, the banding
//! contrast against the values `d + 1` levels above and below, from the histograms of masked
//! pixels in the window around it.
//!
//! The histograms are libvmaf's: one row of `width` counts per sample value of the [`Band`]
//! (counts of the column's window), updated as the window slides down; the counts are integers,
//! so any update order gives libvmaf's. The c-value itself is `float`, as libvmaf computes it:
//! `(float)(weight * p0 * p) * reciprocal[p + p0]`, the largest over the steps.

use super::setup::{Band, CONTRAST_WEIGHTS};

/// The per-stream constants of the c-value.
#[derive(Debug, Clone, Copy)]
pub struct Params<'a> {
    /// Useful sample values.
    pub band: Band,
    /// Per step, the largest visible sample plus `num_diffs`.
    pub tvi: &'a [u16],
    /// Darkness limit.
    pub vlt_luma: u16,
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

/// One step of the slide: row `sub` leaves the window and row `add` enters. A pixel leaving
/// and the one entering below it cancel when they have the same in-band value (libvmaf skips
/// them too).
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
) {
    let (srow, smask) = (&img[sub * stride..sub * stride + w], &mask[sub * stride..]);
    let (arow, amask) = (&img[add * stride..add * stride + w], &mask[add * stride..]);
    for x in 0..w {
        let s = if smask[x] != 0 {
            band.row(srow[x])
        } else {
            None
        };
        let a = if amask[x] != 0 {
            band.row(arow[x])
        } else {
            None
        };
        if s.is_some() && s == a {
            continue;
        }
        let (lo, hi) = (x.saturating_sub(pad), (x + pad + 1).min(w));
        if let Some(r) = s {
            update(&mut hist[r * w + lo..r * w + hi], u16::MAX);
        }
        if let Some(r) = a {
            update(&mut hist[r * w + lo..r * w + hi], 1);
        }
    }
}

/// The c-value of one pixel of value `v` in column `x` (libvmaf's `c_value_pixel`).
#[inline(always)]
fn c_value(hist: &[u16], w: usize, x: usize, v: u16, p: &Params<'_>) -> f32 {
    let num_diffs = p.tvi.len();
    let Some(row) = p.band.row(v) else {
        return 0.0;
    };
    // libvmaf compares in "adjusted" values, the sample plus num_diffs.
    let value = v + num_diffs as u16;
    let p0 = hist[row * w + x];
    let mut c = 0.0f32;
    for d in 0..num_diffs {
        if value <= p.tvi[d] && value as i32 + d as i32 + 1 > p.vlt_luma as i32 {
            // Setup checked that larger steps have higher thresholds, so row + d + 1 is in the
            // band here (as libvmaf's band assumes).
            let p1 = hist[(row + d + 1) * w + x];
            let p2 = if row > d {
                hist[(row - d - 1) * w + x]
            } else {
                0
            };
            let pm = if p1 > p2 { p1 } else { p2 };
            let num = (CONTRAST_WEIGHTS[d] * p0 as i32 * pm as i32) as f32;
            let val = num * p.lut[pm as usize + p0 as usize];
            if val > c {
                c = val;
            }
        }
    }
    c
}

/// Writes the c-values of row `y` (0 where the mask is 0).
#[allow(clippy::too_many_arguments)]
fn c_values_row(
    c: &mut [f32],
    hist: &[u16],
    img: &[u16],
    mask: &[u16],
    stride: usize,
    w: usize,
    y: usize,
    p: &Params<'_>,
) {
    let (row, mrow) = (
        &img[y * stride..y * stride + w],
        &mask[y * stride..y * stride + w],
    );
    let out = &mut c[y * w..(y + 1) * w];
    for x in 0..w {
        out[x] = if mrow[x] != 0 {
            c_value(hist, w, x, row[x], p)
        } else {
            0.0
        };
    }
}

/// The c-values of the `w` x `h` picture `img` (mask `mask`, both at `stride`) with a window of
/// `2 * pad + 1`, into `c[..w * h]` (row after row, `w` wide). `hist` holds
/// `band.size * w` counts. Setup guarantees `pad <= w` and `pad <= h`.
#[allow(clippy::too_many_arguments)]
pub fn c_values(
    c: &mut [f32],
    hist: &mut [u16],
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
    let hist = &mut hist[..band.size as usize * w];
    hist.fill(0);
    for y in 0..pad {
        update_row(hist, img, mask, stride, w, pad, band, y, 1);
    }
    for y in 0..h {
        // The window of row y spans rows y - pad ..= y + pad.
        let add = y + pad;
        match (y > pad, add < h) {
            (true, true) => slide_row(hist, img, mask, stride, w, pad, band, y - pad - 1, add),
            (true, false) => {
                update_row(hist, img, mask, stride, w, pad, band, y - pad - 1, u16::MAX)
            }
            (false, true) => update_row(hist, img, mask, stride, w, pad, band, add, 1),
            (false, false) => {}
        }
        c_values_row(c, hist, img, mask, stride, w, y, p);
    }
}
