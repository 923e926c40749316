//! Scalar motion kernel: the specification later SIMD and CUDA kernels must equal bit for bit.
//!
//! The per-row passes ([`vertical_row`], [`horizontal_abs`]) are public so SIMD peers can use them
//! for the columns their vectors do not cover.
#![forbid(unsafe_code)]

use std::ops::Range;

use crate::picture::{Plane, Samples};

/// libvmaf's 5-tap Gaussian blur taps (integer_motion.h), summing to 65536.
pub const FILTER: [i64; 5] = [3571, 16004, 26386, 16004, 3571];

/// Mirror an index into [0, size): `-i` below, `2·size − i − 2` above (libvmaf's edge rule).
#[inline]
pub fn mirror(i: isize, size: isize) -> usize {
    if i < 0 {
        (-i) as usize
    } else if i >= size {
        (2 * size - i - 2) as usize
    } else {
        i as usize
    }
}

/// The five source rows of output row `i` of a plane of `h` rows, mirrored.
#[inline]
pub fn row_taps(i: usize, h: usize) -> [usize; 5] {
    std::array::from_fn(|k| mirror(i as isize - 2 + k as isize, h as isize))
}

/// Padding of each of [`SadScratch::split`]'s two rows beyond the plane width: the SIMD
/// horizontal passes read up to one value past the last column (multiplied by a zero tap).
pub const SPLIT_PAD: usize = 16;

/// Row buffers of the SAD kernels, sized once for a plane width (no per-frame allocation).
pub struct SadScratch {
    /// The vertical pass's output row (`w` values).
    pub y_row: Vec<i32>,
    /// The 8-bit SIMD kernels' 16-bit split of `y_row`: `y >> 8` in `[0, w + SPLIT_PAD)`, then
    /// `y & 0xff` in `[w + SPLIT_PAD, 2 (w + SPLIT_PAD))`.
    pub split: Vec<i16>,
}

impl SadScratch {
    /// Buffers for planes `w` columns wide.
    pub fn new(w: usize) -> Self {
        SadScratch {
            y_row: vec![0; w],
            split: vec![0; 2 * (w + SPLIT_PAD)],
        }
    }
}

/// Sum over the frame of |blur(prev − cur)|: vertical blur of the difference rounded by `bpc`
/// bits, horizontal blur rounded by 16 bits, absolute values summed per row in 32 bits (wrapping,
/// as libvmaf's `uint32_t row_sad`), rows summed in 64 bits.
pub fn blurred_diff_sad(prev: &Plane<'_>, cur: &Plane<'_>, s: &mut SadScratch, bpc: u8) -> u64 {
    let y_row = &mut s.y_row;
    match (prev.samples, cur.samples) {
        (Samples::U8(p), Samples::U8(c)) => {
            sad_impl(p, prev.stride, c, cur.stride, cur, y_row, bpc)
        }
        (Samples::U16(p), Samples::U16(c)) => {
            sad_impl(p, prev.stride, c, cur.stride, cur, y_row, bpc)
        }
        _ => unreachable!("planes of one stream share a sample size"),
    }
}

/// The vertical pass of one output row over the columns `cols`: `prev` / `cur` are the five
/// (mirrored) source rows; writes `y_row[cols]` and returns the OR of the values written.
pub fn vertical_row<T: Copy + Into<i64>>(
    prev: [&[T]; 5],
    cur: [&[T]; 5],
    cols: Range<usize>,
    y_row: &mut [i32],
    bpc: u8,
) -> i32 {
    let y_round = 1i64 << (bpc - 1);
    let mut any_nonzero = 0i32;
    for j in cols {
        let mut acc = 0i64;
        for k in 0..5 {
            let d = prev[k][j].into() - cur[k][j].into();
            acc += FILTER[k] * d;
        }
        y_row[j] = ((acc + y_round) >> bpc) as i32;
        any_nonzero |= y_row[j];
    }
    any_nonzero
}

/// `|horizontal blur|` of `y_row` (a full row of `w` values) at column `j`, mirrored at the edges.
#[inline]
pub fn horizontal_abs(y_row: &[i32], j: usize) -> u32 {
    let w = y_row.len() as isize;
    let mut acc = 0i64;
    for (k, f) in FILTER.iter().enumerate() {
        let c = mirror(j as isize - 2 + k as isize, w);
        acc += f * y_row[c] as i64;
    }
    (((acc + (1 << 15)) >> 16) as i32).unsigned_abs()
}

fn sad_impl<T: Copy + Into<i64>>(
    prev: &[T],
    prev_stride: usize,
    cur: &[T],
    cur_stride: usize,
    geom: &Plane<'_>,
    y_row: &mut [i32],
    bpc: u8,
) -> u64 {
    let (w, h) = (geom.width, geom.height);
    let y_row = &mut y_row[..w];
    let mut sad = 0u64;
    for i in 0..h {
        let rows = row_taps(i, h);
        let p = rows.map(|r| &prev[r * prev_stride..r * prev_stride + w]);
        let c = rows.map(|r| &cur[r * cur_stride..r * cur_stride + w]);
        if vertical_row(p, c, 0..w, y_row, bpc) == 0 {
            continue;
        }
        let mut row_sad = 0u32;
        for j in 0..w {
            row_sad = row_sad.wrapping_add(horizontal_abs(y_row, j));
        }
        sad += row_sad as u64;
    }
    sad
}
