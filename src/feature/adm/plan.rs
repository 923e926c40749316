//! The per-scale plan and the scratch bands of one ADM instance, and the CSF + masking step
//! that runs twice per scale (DLM and AIM) over them.

use super::scalar::{self, CmRows, CmShiftsS0, QuadMut, Region};
use super::{AdmParams, Kernels};

/// Per-scale geometry and constants, fixed at creation.
#[derive(Debug, Clone, Copy)]
pub(super) struct ScalePlan {
    /// Input width and height of this scale's DWT.
    pub(super) in_w: usize,
    pub(super) in_h: usize,
    /// Band width and height after the DWT.
    pub(super) w: usize,
    pub(super) h: usize,
    /// Decouple / CSF region.
    pub(super) reg_dec: Region,
    /// Pooling region.
    pub(super) reg_pool: Region,
    /// CSF weights (float).
    pub(super) rfactor: [f32; 3],
}

impl ScalePlan {
    /// The four scales of a `width x height` picture: each DWT halves the previous band (rounding
    /// up).
    pub(super) fn scales(width: usize, height: usize, params: &AdmParams) -> [ScalePlan; 4] {
        let (mut iw, mut ih) = (width, height);
        std::array::from_fn(|s| {
            let (w, h) = (iw.div_ceil(2), ih.div_ceil(2));
            let p = ScalePlan {
                in_w: iw,
                in_h: ih,
                w,
                h,
                reg_dec: scalar::region_decouple(w, h),
                reg_pool: scalar::region_pool(w, h),
                rfactor: params.rfactor(s),
            };
            (iw, ih) = (w, h);
            p
        })
    }
}

/// Four bands of one DWT level.
#[derive(Debug)]
pub(super) struct Quad<T> {
    pub(super) a: Vec<T>,
    pub(super) h: Vec<T>,
    pub(super) v: Vec<T>,
    pub(super) d: Vec<T>,
}

impl<T: Copy + Default> Quad<T> {
    pub(super) fn new(n: usize) -> Self {
        Quad {
            a: vec![T::default(); n],
            h: vec![T::default(); n],
            v: vec![T::default(); n],
            d: vec![T::default(); n],
        }
    }
    /// A whole approximation band of `n` samples and detail bands of `strip` samples (one
    /// strip's rows, as the DWT writes them strip by strip).
    pub(super) fn strips(n: usize, strip: usize) -> Self {
        Quad {
            a: vec![T::default(); n],
            h: vec![T::default(); strip],
            v: vec![T::default(); strip],
            d: vec![T::default(); strip],
        }
    }
    pub(super) fn hvd(&self) -> [&[T]; 3] {
        [&self.h, &self.v, &self.d]
    }
    pub(super) fn as_mut(&mut self) -> QuadMut<'_, T> {
        QuadMut {
            a: &mut self.a,
            h: &mut self.h,
            v: &mut self.v,
            d: &mut self.d,
        }
    }
}

fn tri<T: Copy + Default>(n: usize) -> [Vec<T>; 3] {
    [
        vec![T::default(); n],
        vec![T::default(); n],
        vec![T::default(); n],
    ]
}

pub(super) fn refs<T>(t: &[Vec<T>; 3]) -> [&[T]; 3] {
    [&t[0], &t[1], &t[2]]
}

pub(super) fn muts<T>(t: &mut [Vec<T>; 3]) -> [&mut [T]; 3] {
    let [a, b, c] = t;
    [a, b, c]
}

/// The reference's bands when an instance computes them itself, scale by scale as libvmaf does
/// (scale 0's, then one scale-1..3 level at a time).
#[derive(Debug)]
pub(super) struct RefBands {
    /// Scale 0's bands (rows [`Bufs16::stride`] apart; the detail bands one strip's rows).
    pub(super) s0: Quad<i16>,
    /// The current scale-1..3 level's bands (rows [`Bufs32::stride`] apart; the detail bands one
    /// strip's rows).
    pub(super) s123: Quad<i32>,
    /// The previous level's approximation band (ping-pong partner of `s123.a`).
    pub(super) prev_a: Vec<i32>,
}

impl RefBands {
    /// Bands for scale 0 (`s0`) and scales 1..3 (`s1`, the largest of them).
    pub(super) fn new(s0: &ScalePlan, s1: &ScalePlan) -> Self {
        let n = s1.w * s1.h;
        let strip = |p: &ScalePlan| p.w * strip_buffer_rows(p.h);
        RefBands {
            s0: Quad::strips(s0.w * s0.h, strip(s0)),
            s123: Quad::strips(n, strip(s1)),
            prev_a: vec![0; n],
        }
    }
}

/// The reference side of one frame at every scale, computed once for all the renditions of a
/// ladder ([`crate::feature::SharedReference`]): the bands of each scale and each scale's
/// denominator, which depends on the reference's bands only.
#[derive(Debug)]
pub(super) struct SharedBands {
    /// What it was computed for: the instance's geometry and options (an instance refuses a
    /// state of another).
    pub(super) key: RefKey,
    /// Scale 0's bands (rows [`Bufs16::stride`] apart).
    pub(super) s0: Quad<i16>,
    /// Scales 1, 2, 3's bands (rows [`Bufs32::stride`] apart).
    pub(super) s123: [Quad<i32>; 3],
    /// Each scale's denominator.
    pub(super) den: [f32; 4],
}

/// What an instance's reference side depends on.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct RefKey {
    pub(super) width: usize,
    pub(super) height: usize,
    pub(super) bpc: u32,
    pub(super) isa: crate::fidelity::LibvmafIsa,
    pub(super) params: AdmParams,
}

impl SharedBands {
    /// Empty bands for an instance of `key` whose scales 0 and 1 are `s0`, `s1`.
    pub(super) fn new(key: RefKey, s0: &ScalePlan, s1: &ScalePlan) -> Self {
        let n = s1.w * s1.h;
        SharedBands {
            key,
            s0: Quad::new(s0.w * s0.h),
            s123: std::array::from_fn(|_| Quad::new(n)),
            den: [0.0; 4],
        }
    }
}

/// Scratch of the scale-0 (`i16`) stages.
#[derive(Debug)]
pub(super) struct Bufs16 {
    pub(super) stride: usize,
    /// The distorted bands (the detail bands one strip's rows).
    pub(super) dis: Quad<i16>,
    pub(super) r: [Vec<i16>; 3],
    pub(super) a: [Vec<i16>; 3],
    /// The masker's threshold sums over a strip ([`Kernels::csf_s0`]).
    pub(super) flt: Vec<i32>,
    pub(super) centre: Vec<i32>,
    pub(super) tmp_lo: Vec<i16>,
    pub(super) tmp_hi: Vec<i16>,
}

/// Scratch of the scale-1..3 (`i32`) stages.
#[derive(Debug)]
pub(super) struct Bufs32 {
    pub(super) stride: usize,
    /// The distorted bands (the detail bands one strip's rows).
    pub(super) dis: Quad<i32>,
    /// Previous approximation band (ping-pong partner of `dis.a`).
    pub(super) prev_a_dis: Vec<i32>,
    pub(super) r: [Vec<i32>; 3],
    pub(super) a: [Vec<i32>; 3],
    /// The masker's threshold sums over a strip ([`Kernels::csf_s123`]).
    pub(super) flt: Vec<i32>,
    pub(super) centre: Vec<i32>,
    pub(super) tmp_lo: Vec<i32>,
    pub(super) tmp_hi: Vec<i32>,
}

impl Bufs16 {
    /// Scratch for scale 0 of a `width`-wide picture whose bands are `band` (the scale-0 plan).
    pub(super) fn new(width: usize, band: &ScalePlan) -> Self {
        let (n, strip) = (band.w * band.h, band.w * strip_buffer_rows(band.h));
        Bufs16 {
            stride: band.w,
            dis: Quad::strips(n, strip),
            r: tri(strip),
            a: tri(strip),
            flt: vec![0; strip],
            centre: vec![0; strip],
            tmp_lo: vec![0; width],
            tmp_hi: vec![0; width],
        }
    }

    /// CSF of the masking signal, then contrast masking of the other decoupled signal, over one
    /// strip (the buffers hold its decoupled rows): the DLM (`aim == false`) masks `r` with the
    /// weighted `a`, the AIM masks `a` with the weighted `r` (libvmaf `adm_csf` + `adm_cm` with
    /// `measure_aim`).
    pub(super) fn csf_cm(
        &mut self,
        k: &Kernels,
        aim: bool,
        pl: &ScalePlan,
        strip: &Strip,
        irf: [u16; 3],
        sh: CmShiftsS0,
    ) -> [i64; 3] {
        let (masker, masked) = if aim {
            (&self.r, &self.a)
        } else {
            (&self.a, &self.r)
        };
        let st = self.stride;
        if strip.has_decouple_rows() {
            k.csf_s0(
                refs(masker),
                &mut self.flt,
                &mut self.centre,
                st,
                strip.reg,
                irf,
            );
        }
        k.cm_s0(
            refs(masked),
            &self.flt,
            &self.centre,
            st,
            (pl.w, pl.h),
            strip.window.clone(),
            irf,
            sh,
        )
    }
}

impl Bufs32 {
    /// Scratch for scales 1..3, sized by scale 1 (`band`), fed by scale 0 (`prev`).
    pub(super) fn new(prev: &ScalePlan, band: &ScalePlan) -> Self {
        let (n, strip) = (band.w * band.h, band.w * strip_buffer_rows(band.h));
        Bufs32 {
            stride: band.w,
            dis: Quad::strips(n, strip),
            prev_a_dis: vec![0; n],
            r: tri(strip),
            a: tri(strip),
            flt: vec![0; strip],
            centre: vec![0; strip],
            tmp_lo: vec![0; prev.w],
            tmp_hi: vec![0; prev.w],
        }
    }

    /// Scale-1..3 analogue of [`Bufs16::csf_cm`] (libvmaf `i4_adm_csf` + `i4_adm_cm`).
    pub(super) fn csf_cm(
        &mut self,
        k: &Kernels,
        aim: bool,
        pl: &ScalePlan,
        strip: &Strip,
        irf: [u32; 3],
        sh: (u32, u32),
    ) -> [i64; 3] {
        let (masker, masked) = if aim {
            (&self.r, &self.a)
        } else {
            (&self.a, &self.r)
        };
        let st = self.stride;
        if strip.has_decouple_rows() {
            k.csf_s123(
                refs(masker),
                &mut self.flt,
                &mut self.centre,
                st,
                strip.reg,
                irf,
            );
        }
        k.cm_s123(
            refs(masked),
            &self.flt,
            &self.centre,
            st,
            (pl.w, pl.h),
            strip.window.clone(),
            irf,
            sh,
        )
    }
}

/// Band rows masked per strip: the decouple, CSF and masking stages run strip by strip, so that
/// what one writes is still in cache when the next reads it (whole bands of a 1080p picture
/// are megabytes each; a strip's buffers fit the L2 cache).
const STRIP_ROWS: usize = 32;

/// Strip height for a band of `h` rows: [`STRIP_ROWS`], or the whole band where it is short
/// (no overlap recomputed).
fn strip_height(h: usize) -> usize {
    if h <= 2 * STRIP_ROWS {
        h.max(1)
    } else {
        STRIP_ROWS
    }
}

/// Rows of the strip buffers (`r`, `a`, `flt`, `centre`) for bands of at most `h` rows (scales 2
/// and 3 share scale 1's): a strip and the row on each side its masking reads, `strip_height +
/// 2` clamped to the band, is at most this for any band height up to `h`.
fn strip_buffer_rows(h: usize) -> usize {
    h.min(2 * STRIP_ROWS)
}

/// One strip of a band: the rows it masks and the decouple/CSF rows (with one neighbour row
/// each side, recomputed by both strips that need it) the strip buffers hold.
#[derive(Debug, Clone)]
pub(super) struct Strip {
    /// The rows masked, and the band row at offset 0 of the strip buffers.
    pub(super) window: CmRows,
    /// The decouple region's part in this strip, in strip-buffer rows (may be empty).
    pub(super) reg: Region,
}

impl Strip {
    /// The strips of a band of `h` rows whose decouple region is `reg_dec`.
    pub(super) fn all(h: usize, reg_dec: Region) -> impl Iterator<Item = Strip> {
        let step = strip_height(h);
        (0..h).step_by(step).map(move |y0| {
            let rows = y0..(y0 + step).min(h);
            let base = y0.saturating_sub(1);
            let end = (rows.end + 1).min(h);
            let top = reg_dec.top.clamp(base, end);
            let bottom = reg_dec.bottom.clamp(top, end);
            let reg = Region {
                top: top - base,
                bottom: bottom - base,
                ..reg_dec
            };
            Strip {
                window: CmRows { rows, base },
                reg,
            }
        })
    }

    /// Whether any decouple row falls in this strip.
    pub(super) fn has_decouple_rows(&self) -> bool {
        self.reg.top < self.reg.bottom && self.reg.left < self.reg.right
    }

    /// The band rows this strip's buffers hold (a band of `h` rows): `window.base` on to the row
    /// after the last one masked.
    pub(super) fn buffered(&self, h: usize) -> std::ops::Range<usize> {
        self.window.base..(self.window.rows.end + 1).min(h)
    }

    /// The rows of pooling region `pool` that this strip masks (each band row is masked by one
    /// strip), in strip-buffer rows; `None` if there are none.
    pub(super) fn pool_part(&self, pool: Region) -> Option<Region> {
        let top = pool.top.max(self.window.rows.start);
        let bottom = pool.bottom.min(self.window.rows.end);
        (top < bottom).then(|| Region {
            top: top - self.window.base,
            bottom: bottom - self.window.base,
            ..pool
        })
    }
}
