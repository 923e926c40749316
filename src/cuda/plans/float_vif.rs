//! float_vif on the GPU (`kernels/float_vif.cu`). Each scored frame's luma pair becomes
//! `picture_copy`'s floats, is rescaled with `vif_prescale` (the scaler's own taps, uploaded
//! once), and every scale repeats the CPU's `f32` operations: the separable Gaussian of the scale
//! (vertical then horizontal pass, taps from 0 in tap order, mirrored borders), decimation (only
//! the samples `dec2` keeps are filtered), and the per-pixel statistic with libvmaf's polynomial
//! `log2` (bit manipulation and `f32` arithmetic, no libm call, so it is exact on the device).
//! One thread per row adds that row's num and den terms from left to right in `f32`; those row
//! sums come back in the result block and the host adds the rows in order in `f32` (the CPU's
//! `statistic`) and finishes with the CPU extractor's [`float_vif::write_outputs`].

use super::super::driver::{launch, DevBuf};
use super::super::kernels::{
    blocks, FloatVifArgs, FloatVifConvertArgs, FloatVifScaleArgs, BX, FLOAT_VIF_MAX_TAPS,
    FLOAT_VIF_ROWSUM_ROWS,
};
use super::{Ctx, FrameIo, FrameMeta, Geometry, GpuDef, GpuPlan, Scratch, ScratchBufs};
use crate::engine::InstanceInfo;
use crate::error::Result;
use crate::feature::float_vif::{self, scalar};
use crate::feature::scale::{DeviceTaps, Method, Scaler};
use cudarc::driver::sys;

/// float_vif's entry in the CUDA registry: every instance (every option is computed exactly).
pub(super) static GPU: GpuDef = GpuDef {
    extractor: &float_vif::DEF,
    create,
    supports: super::every_instance,
};

/// Outputs of the extractor (its row slots, shown or not).
const OUTPUTS: usize = 15;

/// One scale an instance scores: its size, filter and row-sum slots.
struct ScaleSpec {
    /// 0..=3.
    scale: usize,
    w: usize,
    h: usize,
    /// First row-sum slot from the instance's first result slot: h num sums, then h den sums.
    first: usize,
    filter: [f32; FLOAT_VIF_MAX_TAPS],
    ntaps: i32,
}

struct FloatVifPlan {
    col: usize,
    /// First result slot.
    offset: usize,
    results: usize,
    /// Input size, VIF's (prescaled) size.
    w: usize,
    h: usize,
    sw: usize,
    sh: usize,
    /// The prescale's taps when the size changes.
    taps: Option<DeviceTaps>,
    /// The scales scored (from 1 with `vif_skip_scale0`).
    scales: Vec<ScaleSpec>,
    /// Every scale's taps (decimation into scale `s` uses filter `s`).
    filters: Vec<([f32; FLOAT_VIF_MAX_TAPS], i32)>,
    sigma_nsq: f64,
    gain_limit: f32,
    sigma_max_inv: f32,
    poly: [f32; 9],
    skip_scale0: bool,
    min_val: [f64; 3],
    debug: bool,
}

fn create(info: &InstanceInfo<'_>, _geom: Geometry, offset: usize) -> Result<Box<dyn GpuPlan>> {
    // The CPU extractor's checks and messages (bit depths, kernel scale, bilinear width, scales
    // larger than their filters).
    float_vif::check(info.opts, &info.format)?;
    let (o, f) = (info.opts, &info.format);
    let (w, h) = (f.width, f.height);
    let (sw, sh) = float_vif::scaled_size(o, f);
    let ks = o.f64("vif_kernelscale") as f32;
    let taps = Scaler::new(
        Method::from_word(o.choice("vif_prescale_method")),
        (w, h),
        (sw, sh),
    )
    .device_taps();
    let filters: Vec<_> = (0..4)
        .map(|s| {
            let taps = scalar::filter(s, ks);
            assert!(
                taps.len() <= FLOAT_VIF_MAX_TAPS,
                "filter_size is at most 65"
            );
            let mut a = [0.0f32; FLOAT_VIF_MAX_TAPS];
            a[..taps.len()].copy_from_slice(&taps);
            (a, taps.len() as i32)
        })
        .collect();
    let skip_scale0 = o.bool("vif_skip_scale0");
    let (mut cw, mut ch) = (sw, sh);
    let mut first = 0;
    let mut scales = Vec::new();
    for (scale, &(filter, ntaps)) in filters.iter().enumerate() {
        if scale > 0 {
            cw /= 2;
            ch /= 2;
        }
        if scale == 0 && skip_scale0 {
            continue;
        }
        scales.push(ScaleSpec {
            scale,
            w: cw,
            h: ch,
            first,
            filter,
            ntaps,
        });
        first += 2 * ch;
    }
    let sigma_nsq = o.f64("vif_sigma_nsq");
    Ok(Box::new(FloatVifPlan {
        col: info.columns.start,
        offset,
        results: first,
        w,
        h,
        sw,
        sh,
        taps,
        scales,
        filters,
        sigma_nsq,
        gain_limit: o.f64("vif_enhn_gain_limit") as f32,
        sigma_max_inv: scalar::sigma_max_inv(sigma_nsq),
        poly: scalar::LOG2_POLY.map(|c| c as f32),
        skip_scale0,
        min_val: [
            o.f64("vif_scale1_min_val"),
            o.f64("vif_scale2_min_val"),
            o.f64("vif_scale3_min_val"),
        ],
        debug: o.bool("debug"),
    }))
}

/// One instance's device buffers (sized by its prescale, so not shared between instances).
struct FloatVifScratch {
    /// Full-size float pictures (reference, distorted), only when prescaled.
    full: Option<[DevBuf; 2]>,
    /// Scale 0's pictures (sw x sh).
    pic: [DevBuf; 2],
    /// Scales 1..=3's decimated pictures.
    levels: Vec<[DevBuf; 2]>,
    /// The vertical passes: five sw x sh planes.
    tmp: DevBuf,
    /// Per-pixel num and den terms of the scale (sw x sh each).
    num: DevBuf,
    den: DevBuf,
    /// The prescale's column and row tables (indices, weights), when prescaled.
    tables: Option<[DevBuf; 4]>,
}

impl ScratchBufs for FloatVifScratch {
    fn bytes(&self) -> usize {
        let pair = |p: &[DevBuf; 2]| p[0].bytes + p[1].bytes;
        self.full.as_ref().map_or(0, pair)
            + pair(&self.pic)
            + self.levels.iter().map(pair).sum::<usize>()
            + self.tmp.bytes
            + self.num.bytes
            + self.den.bytes
            + self
                .tables
                .as_ref()
                .map_or(0, |t| t.iter().map(|b| b.bytes).sum())
    }
}

impl FloatVifPlan {
    /// The filter/statistic kernels' parameters for a `w` x `h` pass with filter `filter`.
    fn args(&self, filter: &([f32; FLOAT_VIF_MAX_TAPS], i32), w: usize, h: usize) -> FloatVifArgs {
        FloatVifArgs {
            reference: 0,
            distorted: 0,
            tmp: 0,
            out: 0,
            out2: 0,
            sums: 0,
            sigma_nsq: self.sigma_nsq,
            filter: filter.0,
            poly: self.poly,
            gain_limit: self.gain_limit,
            sigma_max_inv: self.sigma_max_inv,
            eps: scalar::EPS,
            ntaps: filter.1,
            w: w as i32,
            h: h as i32,
            pad_: 0,
        }
    }
}

impl GpuPlan for FloatVifPlan {
    fn name(&self) -> &'static str {
        GPU.extractor.name
    }

    fn results_len(&self) -> usize {
        self.results
    }

    fn alloc_scratch(&self, s: &mut Scratch, _: Geometry, stream: sys::CUstream) -> Result<()> {
        s.alloc_for_instance(self.offset, || {
            let floats = |n: usize, what: &str| DevBuf::new(n * 4, what);
            let pair = |w: usize, h: usize, what: &str| -> Result<[DevBuf; 2]> {
                Ok([floats(w * h, what)?, floats(w * h, what)?])
            };
            let n = self.sw * self.sh;
            let full = match self.taps {
                Some(_) => Some(pair(self.w, self.h, "float_vif full-size picture")?),
                None => None,
            };
            let tables = match &self.taps {
                Some(t) => {
                    let bufs = [
                        DevBuf::new(t.cols.idx.len() * 4, "float_vif prescale columns")?,
                        DevBuf::new(t.cols.wt.len() * 4, "float_vif prescale column weights")?,
                        DevBuf::new(t.rows.idx.len() * 4, "float_vif prescale rows")?,
                        DevBuf::new(t.rows.wt.len() * 4, "float_vif prescale row weights")?,
                    ];
                    bufs[0].upload_now(&t.cols.idx, stream)?;
                    bufs[1].upload_now(&t.cols.wt, stream)?;
                    bufs[2].upload_now(&t.rows.idx, stream)?;
                    bufs[3].upload_now(&t.rows.wt, stream)?;
                    Some(bufs)
                }
                None => None,
            };
            let (mut w, mut h) = (self.sw, self.sh);
            let mut levels = Vec::new();
            for _ in 1..4 {
                w /= 2;
                h /= 2;
                levels.push(pair(w, h, "float_vif scale")?);
            }
            Ok(FloatVifScratch {
                full,
                pic: pair(self.sw, self.sh, "float_vif picture")?,
                levels,
                tmp: floats(5 * n, "float_vif vertical passes")?,
                num: floats(n, "float_vif num terms")?,
                den: floats(n, "float_vif den terms")?,
                tables,
            })
        })
    }

    fn enqueue(&self, io: &FrameIo, c: &Ctx<'_>) -> Result<()> {
        if !io.meta.scored {
            return Ok(()); // no temporal state: skipped frames compute nothing
        }
        let s = c.scratch.for_instance::<FloatVifScratch>(self.offset);
        let k = &c.k.float_vif;
        let g = c.geom;
        let convert_to = s.full.as_ref().unwrap_or(&s.pic);
        let conv = FloatVifConvertArgs {
            reference: io.reference,
            distorted: io.distorted,
            out_ref: convert_to[0].ptr,
            out_dis: convert_to[1].ptr,
            w: self.w as i32,
            h: self.h as i32,
            bpc: g.bpc as i32,
            pad_: 0,
        };
        let convert = if g.eight_bit() {
            k.convert_u8
        } else {
            k.convert_u16
        };
        // SAFETY: FloatVifConvertArgs mirrors float_vif.cu; the luma planes are live borrowed
        // frames of w x h samples (checked by the scorer, held until the frame's event); the
        // outputs hold w * h floats each.
        unsafe {
            launch(
                convert,
                (blocks(self.w), self.h as u32, 1),
                BX,
                c.stream,
                &conv,
                "float_vif conversion",
            )?
        };
        if let (Some(t), Some(full), Some(tables)) = (&self.taps, &s.full, &s.tables) {
            for (src, dst) in full.iter().zip(&s.pic) {
                let args = FloatVifScaleArgs {
                    src: src.ptr,
                    dst: dst.ptr,
                    col_idx: tables[0].ptr,
                    col_wt: tables[1].ptr,
                    row_idx: tables[2].ptr,
                    row_wt: tables[3].ptr,
                    w: self.w as i32,
                    h: self.h as i32,
                    sw: self.sw as i32,
                    sh: self.sh as i32,
                    method: t.method,
                    ntaps: t.ntaps as i32,
                };
                // SAFETY: FloatVifScaleArgs mirrors float_vif.cu; `src` holds w * h floats,
                // `dst` sw * sh; the tables hold ntaps entries per output column and row, every
                // index inside the picture (`Scaler::new` mirrors them once).
                unsafe {
                    launch(
                        k.scale,
                        (blocks(self.sw), self.sh as u32, 1),
                        BX,
                        c.stream,
                        &args,
                        "float_vif prescale",
                    )?
                };
            }
        }
        // The current scale's pictures: scale 0's, then each decimated level.
        let mut cur = &s.pic;
        let (mut w, mut h) = (self.sw, self.sh);
        for spec in &self.scales {
            // Decimate from the previous scale's size into this one (none for scale 0; with
            // vif_skip_scale0 scale 1 decimates straight from scale 0's pictures).
            if spec.scale > 0 {
                let next = &s.levels[spec.scale - 1];
                let mut a = self.args(&self.filters[spec.scale], w, h);
                a.reference = cur[0].ptr;
                a.distorted = cur[1].ptr;
                a.tmp = s.tmp.ptr;
                a.out = next[0].ptr;
                a.out2 = next[1].ptr;
                // SAFETY: FloatVifArgs mirrors float_vif.cu; the inputs hold w * h floats, `tmp`
                // 5 * sw * sh >= 2 * (h / 2) * w, the outputs (w / 2) * (h / 2); mirrored taps
                // stay inside (every scale is larger than its filter's radius: `check`).
                unsafe {
                    launch(
                        k.dec_vpass,
                        (blocks(w), (h / 2) as u32, 1),
                        BX,
                        c.stream,
                        &a,
                        "float_vif decimation (vertical)",
                    )?;
                    launch(
                        k.dec_hpass,
                        (blocks(w / 2), (h / 2) as u32, 1),
                        BX,
                        c.stream,
                        &a,
                        "float_vif decimation (horizontal)",
                    )?;
                }
                cur = next;
                w /= 2;
                h /= 2;
            }
            debug_assert_eq!((w, h), (spec.w, spec.h));
            let mut a = self.args(&(spec.filter, spec.ntaps), w, h);
            a.reference = cur[0].ptr;
            a.distorted = cur[1].ptr;
            a.tmp = s.tmp.ptr;
            a.out = s.num.ptr;
            a.out2 = s.den.ptr;
            a.sums = c.result(self.offset + spec.first);
            // SAFETY: FloatVifArgs mirrors float_vif.cu; the inputs hold w * h floats, `tmp`
            // 5 * sw * sh >= 5 * w * h, `num`/`den` sw * sh >= w * h each; `sums` is this
            // scale's 2 * h result slots.
            unsafe {
                launch(
                    k.vpass,
                    (blocks(w), h as u32, 1),
                    BX,
                    c.stream,
                    &a,
                    "float_vif vertical pass",
                )?;
                launch(
                    k.stat,
                    (blocks(w), h as u32, 1),
                    BX,
                    c.stream,
                    &a,
                    "float_vif statistic",
                )?;
                launch(
                    k.rowsum,
                    (h.div_ceil(FLOAT_VIF_ROWSUM_ROWS) as u32, 1, 1),
                    BX,
                    c.stream,
                    &a,
                    "float_vif row sums",
                )?;
            }
        }
        Ok(())
    }

    fn finish(&mut self, res: &[u64], io: FrameMeta, _: Geometry, row: &mut [f64]) {
        if !io.scored {
            return;
        }
        let mut s = [0f64; 8];
        for spec in &self.scales {
            let rows = &res[self.offset + spec.first..][..2 * spec.h];
            let (num, den) = sum_rows(rows, spec.h);
            s[2 * spec.scale] = num as f64;
            s[2 * spec.scale + 1] = den as f64;
        }
        float_vif::write_outputs(
            &s,
            self.skip_scale0,
            &self.min_val,
            self.debug,
            &mut row[self.col..self.col + OUTPUTS],
        );
    }
}

/// `statistic`'s `acc += row` over the rows in order, in `f32`, from the kernel's row sums (`f32`
/// bits in the low half of each slot: `h` num sums, then `h` den sums).
fn sum_rows(rows: &[u64], h: usize) -> (f32, f32) {
    let (mut num, mut den) = (0f32, 0f32);
    for i in 0..h {
        num += f32::from_bits(rows[i] as u32);
        den += f32::from_bits(rows[h + i] as u32);
    }
    (num, den)
}
