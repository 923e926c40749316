//! float_moment on the GPU (`kernels/float_moment.cu`), bit-identical to `feature::float_moment`.
//!
//! libvmaf adds the `f32` samples `v / 2^k` (`k` = 0, 2, 4, 8 at 8, 10, 12, 16 bits) and their
//! `f32` squares in `f64`, in raster order. Each sample is `v` units of `2^-k`, each square an
//! integer count of `2^-2k` units (exact below 2^24 units, otherwise rounded to 24 bits, which
//! keeps it a multiple of the unit), and no term is negative. So while a picture's total stays
//! below 2^53 units, every partial sum of the CPU's is exact and the `f64` sum is the integer sum,
//! in any order: the kernel sums units in `u64`, the host converts them exactly (`u64` below 2^53
//! to `f64`, then a division by a power of two) and divides by the pixel count with the CPU's
//! [`float_moment::mean`].
//!
//! The bound: a sample `v` is below `2^bpc` and its square below `2^(2·bpc)` units (exact below
//! 16 bits; at 16 bits the largest, `(2^16 - 1)^2`, rounds to `2^32 - 2^17`), so `n` pixels stay
//! below `n · 2^(2·bpc)` units, at most 2^53 for `n <= 2^(53 - 2·bpc)`: 2^37, 2^33, 2^29 and 2^21
//! pixels at 8, 10, 12 and 16 bits. Only 16-bit pictures above 2^21 pixels (e.g. 4K) come near;
//! they stay on the CPU ([`supports`]). This takes the samples within the stream's depth: a 10- or
//! 12-bit sample with stray high bits has a square of up to 2^32 units, still exact in pictures of
//! at most 2^21 pixels, but not guaranteed in larger ones.

use super::super::driver::launch;
use super::super::kernels::{blocks, FloatMomentArgs, BX, FLOAT_MOMENT_ROWS};
use super::{Ctx, FrameIo, FrameMeta, Geometry, GpuDef, GpuPlan, Scratch};
use crate::engine::InstanceInfo;
use crate::error::Result;
use crate::feature::float_moment;
use cudarc::driver::sys;
use std::ops::Range;

/// float_moment's entry in the CUDA registry.
pub(super) static GPU: GpuDef = GpuDef {
    extractor: &float_moment::DEF,
    create,
    supports,
};

/// Result slots: ref Σ v, dis Σ v, ref Σ v², dis Σ v² (units of `2^-k`, `2^-2k`), in the order of
/// the extractor's outputs.
const RESULTS: usize = 4;

/// Whether every sum stays below 2^53 units (see the module comment).
fn supports(info: &InstanceInfo<'_>) -> bool {
    let f = info.format;
    let bpc = u32::from(f.bpc).min(16);
    (f.width * f.height) as u64 <= 1u64 << (53 - 2 * bpc)
}

/// `k` with `picture_copy`'s divisor `2^k` at `bpc` bits (`to_float`'s 1, 4, 16 and 256; the
/// test below checks them against it).
fn scale_log2(bpc: u8) -> u32 {
    match bpc {
        8 => 0,
        10 => 2,
        12 => 4,
        _ => 8,
    }
}

fn create(info: &InstanceInfo<'_>, _geom: Geometry, offset: usize) -> Result<Box<dyn GpuPlan>> {
    (float_moment::DEF.check)(info.opts, &info.format)?;
    Ok(Box::new(FloatMomentPlan {
        cols: info.columns.clone(),
        offset,
        scale_log2: scale_log2(info.format.bpc),
    }))
}

struct FloatMomentPlan {
    /// The instance's four output columns.
    cols: Range<usize>,
    /// The first of its [`RESULTS`] result slots.
    offset: usize,
    /// `k`: the samples are `v / 2^k`.
    scale_log2: u32,
}

impl GpuPlan for FloatMomentPlan {
    fn name(&self) -> &'static str {
        GPU.extractor.name
    }

    fn results_len(&self) -> usize {
        RESULTS
    }

    fn alloc_scratch(&self, _: &mut Scratch, _: Geometry, _: sys::CUstream) -> Result<()> {
        Ok(()) // the sums go straight to the result block
    }

    fn enqueue(&self, io: &FrameIo, c: &Ctx<'_>) -> Result<()> {
        if !io.meta.scored {
            return Ok(());
        }
        let g = c.geom;
        let f = if g.eight_bit() {
            c.k.float_moment.u8
        } else {
            c.k.float_moment.u16
        };
        let args = FloatMomentArgs {
            reference: io.reference,
            distorted: io.distorted,
            out: c.result(self.offset),
            w: g.w as i32,
            h: g.h as i32,
            scale_log2: self.scale_log2 as i32,
            pad_: 0,
        };
        // SAFETY: FloatMomentArgs mirrors float_moment.cu; both luma planes are live borrowed
        // frames (held until the frame's event, rows checked by the scorer); `out` and the three
        // slots after it are the instance's, inside the result block.
        unsafe {
            launch(
                f,
                (blocks(g.w), g.h.div_ceil(FLOAT_MOMENT_ROWS) as u32, 1),
                BX,
                c.stream,
                &args,
                "float_moment",
            )
        }
    }

    fn finish(&mut self, res: &[u64], io: FrameMeta, g: Geometry, row: &mut [f64]) {
        if !io.scored {
            return;
        }
        let n = g.w * g.h;
        let s = &res[self.offset..self.offset + RESULTS];
        // Exact: the unit counts are below 2^53 ([`supports`]), the divisors powers of two.
        let unit = [
            (1u64 << self.scale_log2) as f64,
            (1u64 << (2 * self.scale_log2)) as f64,
        ];
        for (i, (v, &units)) in row[self.cols.clone()].iter_mut().zip(s).enumerate() {
            *v = float_moment::mean(units as f64 / unit[i / 2], n);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::feature::picture_copy::to_float;
    use crate::picture::Plane;

    /// The kernel's sums on the host: the same `f32` operations per sample, `u64` unit counts.
    fn kernel_units(v: &[u16], k: u32) -> (u64, u64) {
        let (scale, scale_sq) = ((1u32 << k) as f32, (1u32 << (2 * k)) as f32);
        v.iter().fold((0, 0), |(s1, s2), &v| {
            let f = v as f32 / scale;
            (s1 + v as u64, s2 + (f * f * scale_sq) as u64)
        })
    }

    /// The plan's result: the CPU's moments exactly, for the brightest pictures [`supports`]
    /// takes at each depth (2^21 pixels at 16 bits) and 10/12-bit samples with stray high bits.
    #[test]
    fn unit_sums_equal_the_cpus_f64_sums_at_the_bound() {
        let n = 1usize << 21;
        let mut h = 1u32;
        let mut noise = || {
            h ^= h << 13;
            h ^= h >> 17;
            h ^= h << 5;
            h
        };
        for (bpc, lo, hi) in [
            (8, 0, 255),
            (8, 250, 255),
            (10, 1000, 1023),
            (10, 60000, 65535),
            (12, 4000, 4095),
            (12, 0, 65535),
            (16, 65535, 65535),
            (16, 65000, 65535),
        ] {
            let v: Vec<u16> = (0..n)
                .map(|_| (lo as u32 + noise() % (hi as u32 - lo as u32 + 1)) as u16)
                .collect();
            let k = scale_log2(bpc);
            let (s1, s2) = kernel_units(&v, k);
            assert!(s2 < 1 << 53, "{bpc}-bit {lo}..={hi}");
            // The CPU's samples (as bytes at 8 bits), 2048 x 1024.
            let (w, h) = (2048, n / 2048);
            let bytes: Vec<u8> = v.iter().map(|&x| x as u8).collect();
            let plane = if bpc == 8 {
                Plane::new_u8(&bytes, w, h, w)
            } else {
                Plane::new_u16(&v, w, h, w)
            }
            .unwrap();
            let mut pic = vec![0.0f32; n];
            to_float(&plane, bpc, 0, &mut pic);
            let (first, second) = float_moment::moments(&pic);
            let gpu = (
                float_moment::mean(s1 as f64 / (1u64 << k) as f64, n),
                float_moment::mean(s2 as f64 / (1u64 << (2 * k)) as f64, n),
            );
            assert_eq!(first.to_bits(), gpu.0.to_bits(), "{bpc}-bit {lo}..={hi}");
            assert_eq!(second.to_bits(), gpu.1.to_bits(), "{bpc}-bit {lo}..={hi}");
        }
    }
}
