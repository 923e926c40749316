//! libvmaf's `picture_copy`, the one conversion every float extractor starts from: samples as
//! `f32` on the 8-bit scale (divided by 4, 16 or 256 at 10, 12 or 16 bits), plus an offset. Other
//! depths it reads as bytes, so the float features refuse them ([`check_depth`]).

use crate::error::{Error, Result};
use crate::picture::{Plane, Samples};

/// Refuses the bit depths libvmaf's float extractors cannot take: their `init` knows only 8, 10,
/// 12 and 16 bits.
pub fn check_depth(feature: &str, bpc: u8) -> Result<()> {
    if matches!(bpc, 8 | 10 | 12 | 16) {
        Ok(())
    } else {
        Err(Error::Unsupported(format!(
            "feature {feature}: {bpc}-bit input (libvmaf's {feature} takes 8, 10, 12 or 16 bits; \
             convert, e.g. with format=yuv420p10le)"
        )))
    }
}

/// libvmaf's `picture_copy`: each sample as `f32`, divided by 4, 16 or 256 at 10, 12 or 16 bits
/// (an `f32` division), plus `offset` (an `f32` addition; libvmaf's float features use 0 or -128).
/// Writes a dense `width × height` image into `out`.
pub fn to_float(plane: &Plane<'_>, bpc: u8, offset: i32, out: &mut [f32]) {
    let (w, h, s) = (plane.width, plane.height, plane.stride);
    let off = offset as f32;
    match plane.samples {
        Samples::U8(data) => {
            for y in 0..h {
                let src = &data[y * s..y * s + w];
                for (d, &v) in out[y * w..(y + 1) * w].iter_mut().zip(src) {
                    *d = v as f32 + off;
                }
            }
        }
        Samples::U16(data) => {
            let scaler: f32 = match bpc {
                10 => 4.0,
                12 => 16.0,
                _ => 256.0,
            };
            for y in 0..h {
                let src = &data[y * s..y * s + w];
                for (d, &v) in out[y * w..(y + 1) * w].iter_mut().zip(src) {
                    *d = v as f32 / scaler + off;
                }
            }
        }
    }
}
