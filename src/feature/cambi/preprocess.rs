//! Turning an input luma plane into CAMBI's 10-bit working picture (libvmaf's
//! `cambi_preprocessing`): nearest-neighbour resampling to the working size, conversion to 10 bits
//! (a shift up, or a rounded shift down), then, for encodes below 10 bits, the anti-dithering
//! 2x2 average.
//!
//! The working picture has libvmaf's layout (rows of `align32(width)` samples), because at 10 bits
//! libvmaf copies an unscaled input with one `memcpy` of the input's rows, stride included.

use crate::error::{Error, Result};
use crate::picture::{Plane, Samples};

/// Row length of a libvmaf picture of `width` samples (`vmaf_picture_alloc`'s `DATA_ALIGN`).
pub fn libvmaf_stride(width: usize) -> usize {
    (width + 31) & !31
}

/// Source index of every output column (or row) of libvmaf's nearest-neighbour resampling:
/// positions stepped in `float` from `ratio / 2 - 0.5`, rounded by adding 0.5 in `double` and
/// truncating.
pub fn nearest_map(input: usize, output: usize) -> Vec<usize> {
    let ratio = input as f32 / output as f32;
    let start = ((ratio / 2.0) as f64 - 0.5) as f32;
    let mut x = start;
    let mut out = Vec::with_capacity(output);
    for _ in 0..output {
        out.push((x as f64 + 0.5) as i32 as usize);
        x += ratio;
    }
    out
}

/// The resampling from `(in_w, in_h)` to a target, or `None` when the sizes are equal (libvmaf
/// copies then). Fails where libvmaf's stepping would read past the input.
pub fn resampling(
    (in_w, in_h): (usize, usize),
    (out_w, out_h): (usize, usize),
) -> Result<Option<(Vec<usize>, Vec<usize>)>> {
    if (in_w, in_h) == (out_w, out_h) {
        return Ok(None);
    }
    let (xs, ys) = (nearest_map(in_w, out_w), nearest_map(in_h, out_h));
    if xs.iter().any(|&x| x >= in_w) || ys.iter().any(|&y| y >= in_h) {
        return Err(Error::Unsupported(format!(
            "feature cambi: resampling {in_w}x{in_h} to {out_w}x{out_h}, libvmaf's \
             nearest-neighbour stepping reads past the picture; use sizes closer to the input's"
        )));
    }
    Ok(Some((xs, ys)))
}

/// Refuses a picture with samples above its bit depth's maximum, as libvmaf's cambi does.
pub fn validate(p: &Plane<'_>, bpc: u8) -> Result<()> {
    let Samples::U16(d) = p.samples else {
        return Ok(());
    };
    if bpc >= 16 {
        return Ok(());
    }
    let max = (1u16 << bpc) - 1;
    for y in 0..p.height {
        let row = &d[y * p.stride..y * p.stride + p.width];
        if let Some(v) = row.iter().find(|&&v| v > max) {
            return Err(Error::Unsupported(format!(
                "feature cambi: the picture holds the value {v}, above the {bpc}-bit maximum \
                 {max} (libvmaf refuses it); give the input's real bit depth"
            )));
        }
    }
    Ok(())
}

/// Writes the 10-bit working picture `out` (row stride `stride`) of `w` x `h` from `p` (bit depth
/// `bpc`), resampled by `map` when given.
pub fn to_10bit(
    p: &Plane<'_>,
    bpc: u8,
    map: Option<&(Vec<usize>, Vec<usize>)>,
    out: &mut [u16],
    stride: usize,
    (w, h): (usize, usize),
) {
    match (p.samples, map) {
        (Samples::U8(d), None) => {
            for y in 0..h {
                let src = &d[y * p.stride..y * p.stride + w];
                for (o, &v) in out[y * stride..y * stride + w].iter_mut().zip(src) {
                    *o = (v as u16) << 2;
                }
            }
        }
        (Samples::U8(d), Some((xs, ys))) => {
            for (y, &sy) in ys.iter().enumerate() {
                let src = &d[sy * p.stride..];
                for (o, &sx) in out[y * stride..y * stride + w].iter_mut().zip(xs) {
                    *o = (src[sx] as u16) << 2;
                }
            }
        }
        (Samples::U16(d), None) if bpc == 10 => {
            // libvmaf: memcpy(out, in, in_stride * h): input rows land at the input's stride,
            // its (zeroed) padding included; at another output stride the rows shift.
            let in_stride = libvmaf_stride(w);
            for y in 0..h {
                let dst = &mut out[y * in_stride..(y + 1) * in_stride];
                dst[..w].copy_from_slice(&d[y * p.stride..y * p.stride + w]);
                dst[w..].fill(0);
            }
        }
        (Samples::U16(d), map) => {
            let (shift, round) = match bpc {
                9 => (0, 0),
                b => (b as u32 - 10, if b == 10 { 0 } else { 1u32 << (b - 11) }),
            };
            // 9 bits shift up by one; 10..16 bits shift down with rounding.
            let conv = |v: u16| -> u16 {
                if bpc == 9 {
                    v << 1
                } else {
                    ((v as u32 + round) >> shift) as u16
                }
            };
            match map {
                None => {
                    for y in 0..h {
                        let src = &d[y * p.stride..y * p.stride + w];
                        for (o, &v) in out[y * stride..y * stride + w].iter_mut().zip(src) {
                            *o = conv(v);
                        }
                    }
                }
                Some((xs, ys)) => {
                    for (y, &sy) in ys.iter().enumerate() {
                        let src = &d[sy * p.stride..];
                        for (o, &sx) in out[y * stride..y * stride + w].iter_mut().zip(xs) {
                            *o = conv(src[sx]);
                        }
                    }
                }
            }
        }
    }
}

/// libvmaf's `anti_dithering_filter`, in place: each sample becomes the mean (truncated) of the
/// 2x2 block it starts, 1x2 or 2x1 on the last column and row; the last sample stays. Every
/// mean reads the original samples (the next column's is overwritten only after).
pub fn anti_dither(buf: &mut [u16], stride: usize, w: usize, h: usize) {
    const CHUNK: usize = 16;
    for y in 0..h - 1 {
        let (top, bottom) = buf[y * stride..].split_at_mut(stride);
        let mut x = 0;
        // A copy of the chunk and the sample after it keeps the reads on original samples.
        while x + CHUNK < w {
            let t: [u16; CHUNK + 1] = top[x..x + CHUNK + 1].try_into().expect("chunk");
            let b = &bottom[x..x + CHUNK + 1];
            for i in 0..CHUNK {
                let s = t[i] as u32 + t[i + 1] as u32 + b[i] as u32 + b[i + 1] as u32;
                top[x + i] = (s >> 2) as u16;
            }
            x += CHUNK;
        }
        for x in x..w - 1 {
            let s = top[x] as u32 + top[x + 1] as u32 + bottom[x] as u32 + bottom[x + 1] as u32;
            top[x] = (s >> 2) as u16;
        }
        top[w - 1] = ((top[w - 1] as u32 + bottom[w - 1] as u32) >> 1) as u16;
    }
    let last = &mut buf[(h - 1) * stride..];
    for x in 0..w - 1 {
        last[x] = ((last[x] as u32 + last[x + 1] as u32) >> 1) as u16;
    }
}
