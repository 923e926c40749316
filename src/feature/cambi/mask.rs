//! CAMBI's spatial mask (libvmaf's `get_spatial_mask`): a pixel counts when more than a
//! size-dependent number of the 7x7 pixels around it (zero outside the picture) have a zero
//! derivative, i.e. equal their right and lower neighbours (the last column and row count as
//! equal). Integer counts; libvmaf sums with a rolling summed-area table, this with a rolling
//! column sum, which gives the same counts.

/// Side of the mask's square (libvmaf's `MASK_FILTER_SIZE`).
const FILTER: usize = 7;
const PAD: usize = FILTER / 2;

/// Scratch for [`spatial_mask`], sized for pictures up to `width` wide.
#[derive(Debug)]
pub struct MaskScratch {
    /// The derivative rows in the window, cyclically.
    deriv: Vec<u8>,
    /// Per column, the derivative count over the window's rows.
    colsum: Vec<u32>,
    width: usize,
}

impl MaskScratch {
    /// Scratch for pictures up to `width` wide.
    pub fn new(width: usize) -> Self {
        MaskScratch {
            deriv: vec![0; FILTER * width],
            colsum: vec![0; width],
            width,
        }
    }
}

/// libvmaf's `ceil_log2` (0 for 0).
fn ceil_log2(n: u32) -> i32 {
    if n == 0 {
        0
    } else {
        32 - (n - 1).leading_zeros() as i32
    }
}

/// The count a pixel's window must exceed (libvmaf's `get_mask_index`: it grows with the
/// picture's area in 64x64 blocks).
pub fn mask_index(w: usize, h: usize) -> u32 {
    let blocks = ((w >> 6) * (h >> 6)) as u32;
    let f = FILTER as i32;
    ((f * f + 3 * (ceil_log2(blocks) - 11) - 1) >> 1) as u16 as u32
}

/// Zero-derivative flags of row `y` into `out`.
fn derivative_row(img: &[u16], stride: usize, w: usize, h: usize, y: usize, out: &mut [u8]) {
    let row = &img[y * stride..y * stride + w];
    if y + 1 == h {
        for x in 0..w - 1 {
            out[x] = (row[x] == row[x + 1]) as u8;
        }
    } else {
        let below = &img[(y + 1) * stride..(y + 1) * stride + w];
        for x in 0..w - 1 {
            out[x] = ((row[x] == row[x + 1]) & (row[x] == below[x])) as u8;
        }
    }
    out[w - 1] = (y + 1 == h || row[w - 1] == img[(y + 1) * stride + w - 1]) as u8;
}

/// Writes the mask (0 or 1) of the `w` x `h` picture `img` into `mask`, both at `stride`.
pub fn spatial_mask(
    img: &[u16],
    mask: &mut [u16],
    stride: usize,
    w: usize,
    h: usize,
    s: &mut MaskScratch,
) {
    debug_assert!(w <= s.width);
    let index = mask_index(w, h);
    let colsum = &mut s.colsum[..w];
    colsum.fill(0);
    // Rows 0..PAD enter before the first output row.
    for y in 0..PAD.min(h) {
        let d = &mut s.deriv[(y % FILTER) * w..(y % FILTER + 1) * w];
        derivative_row(img, stride, w, h, y, d);
        for (c, &v) in colsum.iter_mut().zip(d.iter()) {
            *c += v as u32;
        }
    }
    for y in 0..h {
        // The window of row y spans rows y - PAD ..= y + PAD; the row leaving frees the slot
        // of the row entering.
        if y > PAD {
            let leave = y - PAD - 1;
            let d = &s.deriv[(leave % FILTER) * w..(leave % FILTER + 1) * w];
            for (c, &v) in colsum.iter_mut().zip(d.iter()) {
                *c -= v as u32;
            }
        }
        let enter = y + PAD;
        if enter < h {
            let d = &mut s.deriv[(enter % FILTER) * w..(enter % FILTER + 1) * w];
            derivative_row(img, stride, w, h, enter, d);
            for (c, &v) in colsum.iter_mut().zip(d.iter()) {
                *c += v as u32;
            }
        }
        let out = &mut mask[y * stride..y * stride + w];
        let mut sum: u32 = colsum[..PAD.min(w)].iter().sum();
        for x in 0..w {
            if x + PAD < w {
                sum += colsum[x + PAD];
            }
            if x > PAD {
                sum -= colsum[x - PAD - 1];
            }
            out[x] = (sum > index) as u16;
        }
    }
}
