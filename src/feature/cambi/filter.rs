//! CAMBI's per-scale picture operations, in place as libvmaf does them: the 2:1 decimation
//! between scales (`decimate`) and the 3x3 separable mode filter (`filter_mode`).

/// Keeps every other sample of every other row: `(x, y) <- (2x, 2y)` for the new `w` x `h`
/// (reads stay ahead of writes).
pub fn decimate(buf: &mut [u16], stride: usize, w: usize, h: usize) {
    if h == 0 {
        return;
    }
    // Row 0 reads itself, ahead of its writes.
    for x in 0..w {
        buf[x] = buf[2 * x];
    }
    // Row y >= 1 reads row 2y, below the row it writes.
    for y in 1..h {
        let (top, bottom) = buf.split_at_mut(2 * y * stride);
        let dst = &mut top[y * stride..y * stride + w];
        for (d, s) in dst.iter_mut().zip(bottom.chunks_exact(2)) {
            *d = s[0];
        }
    }
}

/// The repeated value of three, else their minimum (libvmaf's `mode3`).
#[inline(always)]
pub fn mode3(a: u16, b: u16, c: u16) -> u16 {
    if a == b || a == c {
        a
    } else if b == c {
        b
    } else {
        a.min(b).min(c)
    }
}

/// libvmaf's `filter_mode`: rows 1..h-1 become the vertical [`mode3`] of the horizontal
/// `mode3` of the rows around them (the first and last column copied); the first and last rows
/// keep their samples. `lines` holds three horizontal results (`3 * w`).
pub fn filter_mode(buf: &mut [u16], stride: usize, w: usize, h: usize, lines: &mut [u16]) {
    let lines = &mut lines[..3 * w];
    for y in 0..h {
        let line = &mut lines[(y % 3) * w..(y % 3 + 1) * w];
        let row = &buf[y * stride..y * stride + w];
        line[0] = row[0];
        for x in 1..w.saturating_sub(1) {
            line[x] = mode3(row[x - 1], row[x], row[x + 1]);
        }
        line[w - 1] = row[w - 1];
        if y > 1 {
            // mode3 is symmetric, so the lines' cyclic order does not matter.
            let (l0, rest) = lines.split_at(w);
            let (l1, l2) = rest.split_at(w);
            let out = &mut buf[(y - 1) * stride..(y - 1) * stride + w];
            for x in 0..w {
                out[x] = mode3(l0[x], l1[x], l2[x]);
            }
        }
    }
}
