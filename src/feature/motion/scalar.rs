//! Scalar motion kernel: the specification later SIMD and CUDA kernels must equal bit for bit.

use crate::picture::{Plane, Samples};

/// libvmaf's 5-tap Gaussian blur taps (integer_motion.h), summing to 65536.
pub const FILTER: [i64; 5] = [3571, 16004, 26386, 16004, 3571];

/// Mirror an index into [0, size): `-i` below, `2·size − i − 2` above (libvmaf's edge rule).
#[inline]
fn mirror(i: isize, size: isize) -> usize {
    if i < 0 {
        (-i) as usize
    } else if i >= size {
        (2 * size - i - 2) as usize
    } else {
        i as usize
    }
}

/// Sum over the frame of |blur(prev − cur)|: vertical blur of the difference rounded by `bpc`
/// bits, horizontal blur rounded by 16 bits, absolute values summed per row in 32 bits (wrapping,
/// as libvmaf's `uint32_t row_sad`), rows summed in 64 bits.
pub fn blurred_diff_sad(prev: &Plane<'_>, cur: &Plane<'_>, y_row: &mut [i32], bpc: u8) -> u64 {
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
    let y_round = 1i64 << (bpc - 1);
    let x_round = 1i64 << 15;
    let y_row = &mut y_row[..w];
    let mut sad = 0u64;
    for i in 0..h {
        let rows: [usize; 5] =
            std::array::from_fn(|k| mirror(i as isize - 2 + k as isize, h as isize));
        let mut any_nonzero = 0i32;
        for (j, out) in y_row.iter_mut().enumerate() {
            let mut acc = 0i64;
            for (k, &r) in rows.iter().enumerate() {
                let d = prev[r * prev_stride + j].into() - cur[r * cur_stride + j].into();
                acc += FILTER[k] * d;
            }
            *out = ((acc + y_round) >> bpc) as i32;
            any_nonzero |= *out;
        }
        if any_nonzero == 0 {
            continue;
        }
        let mut row_sad = 0u32;
        for j in 0..w {
            let mut acc = 0i64;
            for (k, f) in FILTER.iter().enumerate() {
                let c = mirror(j as isize - 2 + k as isize, w as isize);
                acc += f * y_row[c] as i64;
            }
            let v = ((acc + x_round) >> 16) as i32;
            row_sad = row_sad.wrapping_add(v.unsigned_abs());
        }
        sad += row_sad as u64;
    }
    sad
}
