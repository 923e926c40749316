//! float_adm on the GPU (the kernels of `kernels/float_adm.cu`), bit-identical to
//! `feature::float_adm`:
//!
//! * per scale, the db2 DWT of both pictures (scale 0 straight from the frames, converted as
//!   `picture_copy::to_float` converts them; later scales from band a of the previous one),
//!   the decoupling, both CSF weightings and both contrast maskings, each sample in the CPU's
//!   `f32`/`f64` operations and order;
//! * the decoupling's RCPSS division: the GPU looks the host CPU's RCPSS up in a table measured
//!   on the host (`float_adm::rcp`); if this CPU's RCPSS does not follow the table model, the
//!   instance stays on the CPU (`supports`); where the CPU divides exactly (no SSE), so does
//!   the kernel;
//! * the pooled sums: one thread per row and band adds the row's cubes from left to right, then
//!   one thread per (scale, quantity, band) adds the rows in row order, the CPU's sequential
//!   `f32` sums exactly, kept as `f32` bits in the instance's 36 result slots;
//! * the host finishes with the CPU's own functions: `scalar::pool` (the `powf` of the sums and
//!   the noise constant), `Pooling::combine` and `Pooling::write`.
//!
//! `adm_p_norm` other than 3 raises every sample to a `powf`, which the GPU's does not equal:
//! those instances stay on the CPU (`supports`).

use super::super::driver::{launch, DevBuf};
use super::super::kernels::{
    blocks, FloatAdmCmArgs, FloatAdmCsfArgs, FloatAdmDecoupleArgs, FloatAdmDwtArgs,
    FloatAdmRowsArgs, FloatAdmTotalArgs, BX, FLOAT_ADM_TOTAL_THREADS,
};
use super::{Ctx, FrameIo, FrameMeta, Geometry, GpuDef, GpuPlan, Scratch, ScratchBufs};
use crate::engine::InstanceInfo;
use crate::error::Result;
use crate::feature::float_adm::scalar::{self, Region};
use crate::feature::float_adm::{self, Pooling, ScaleValues};
use cudarc::driver::sys;
use std::ops::Range;

/// float_adm's entry in the CUDA registry.
pub(super) static GPU: GpuDef = GpuDef {
    extractor: &float_adm::DEF,
    create,
    supports,
};

/// Scales computed.
const SCALES: usize = 4;
/// Sums per scale: the denominator's, DLM's and AIM's of the three bands.
const QUANTITIES: usize = 9;
/// Result slots: [`QUANTITIES`] `f32` totals per scale.
const RESULTS: usize = SCALES * QUANTITIES;

/// The decoupling's division on this host: what `scalar::divs` computes.
#[derive(Clone, Copy)]
enum Division {
    /// RCPSS and a Newton step, RCPSS from this CPU's table.
    #[cfg(target_arch = "x86_64")]
    Rcp(&'static float_adm::rcp::RcpModel),
    /// A plain division.
    #[cfg(not(target_arch = "x86_64"))]
    Exact,
}

/// The division the kernels can reproduce here: this CPU's RCPSS table, if it follows the model.
#[cfg(target_arch = "x86_64")]
fn division() -> Option<Division> {
    float_adm::rcp::model().map(Division::Rcp)
}

/// The division the kernels can reproduce here: the CPU divides exactly.
#[cfg(not(target_arch = "x86_64"))]
fn division() -> Option<Division> {
    Some(Division::Exact)
}

/// `adm_p_norm` 3 only (cubes; other powers are per-sample `powf`), and a division the GPU can
/// reproduce.
fn supports(info: &InstanceInfo<'_>) -> bool {
    info.opts.f64("adm_p_norm") == 3.0 && division().is_some()
}

/// One scale's geometry (as `FloatAdm::compute` computes it).
#[derive(Debug, Clone, Copy)]
struct ScaleGeom {
    /// The DWT's source size (the picture at scale 0, band a of the previous scale after).
    in_w: usize,
    in_h: usize,
    /// Band size.
    w: usize,
    h: usize,
    /// Decoupling/CSF region and pooling region.
    taps: Region,
    pool: Region,
    /// First row sum of the scale in the row-sum buffer: [`QUANTITIES`] × pooled rows.
    rows_off: usize,
}

impl ScaleGeom {
    fn pool_rows(&self) -> usize {
        self.pool.bottom - self.pool.top
    }
}

/// The four scales of a `w x h` picture and the row sums they need in all.
fn scales(w: usize, h: usize) -> ([ScaleGeom; SCALES], usize) {
    let (mut in_w, mut in_h, mut rows) = (w, h, 0);
    let g = std::array::from_fn(|_| {
        let (w, h) = (in_w.div_ceil(2), in_h.div_ceil(2));
        let s = ScaleGeom {
            in_w,
            in_h,
            w,
            h,
            taps: Region::taps(w, h),
            pool: Region::pool(w, h),
            rows_off: rows,
        };
        rows += QUANTITIES * s.pool_rows();
        (in_w, in_h) = (w, h);
        s
    });
    (g, rows)
}

fn create(info: &InstanceInfo<'_>, _geom: Geometry, offset: usize) -> Result<Box<dyn GpuPlan>> {
    // The CPU extractor's checks and messages (bit depths).
    (float_adm::DEF.check)(info.opts, &info.format)?;
    let o = info.opts;
    let (w, h) = (info.format.width, info.format.height);
    let (cos_1deg_sq, eps) = scalar::decouple_constants();
    Ok(Box::new(FloatAdmPlan {
        cols: info.columns.clone(),
        offset,
        w,
        h,
        scales: scales(w, h).0,
        division: division().expect("supports() checked the division"),
        gain_limit: o.f64("adm_enhn_gain_limit"),
        bypass_cm: o.int("adm_bypass_cm") != 0,
        skip_scale0: o.bool("adm_skip_scale0"),
        rfactor: float_adm::rfactors(o),
        cos_1deg_sq,
        eps,
        pooling: Pooling::new(o),
    }))
}

/// Device buffers of every float_adm instance of a stream (they depend on the geometry only;
/// the instances' work runs in order on one stream).
struct FloatAdmScratch {
    /// The DWT's vertical passes (low, high) per picture, picture-wide, half as high.
    tlo: [DevBuf; 2],
    thi: [DevBuf; 2],
    /// Band a per picture, by scale parity (the next scale's source).
    band_a: [[DevBuf; 2]; 2],
    /// Bands h, v, d per picture.
    hvd: [[DevBuf; 3]; 2],
    dec_r: [DevBuf; 3],
    dec_a: [DevBuf; 3],
    csf_a: [DevBuf; 3],
    csf_f: [DevBuf; 3],
    /// Contrast masking's per-sample values.
    val: [DevBuf; 3],
    /// Row sums of every scale (`f32`).
    rows: DevBuf,
    /// This CPU's RCPSS table (`u32[4096]`; 1 byte where the kernels divide exactly).
    rcp: DevBuf,
}

impl ScratchBufs for FloatAdmScratch {
    fn bytes(&self) -> usize {
        let all = self
            .tlo
            .iter()
            .chain(&self.thi)
            .chain(self.band_a.iter().flatten())
            .chain(self.hvd.iter().flatten())
            .chain(&self.dec_r)
            .chain(&self.dec_a)
            .chain(&self.csf_a)
            .chain(&self.csf_f)
            .chain(&self.val);
        all.map(|b| b.bytes).sum::<usize>() + self.rows.bytes + self.rcp.bytes
    }
}

struct FloatAdmPlan {
    cols: Range<usize>,
    /// First result slot: [`RESULTS`] totals.
    offset: usize,
    w: usize,
    h: usize,
    scales: [ScaleGeom; SCALES],
    division: Division,
    gain_limit: f64,
    bypass_cm: bool,
    skip_scale0: bool,
    rfactor: [[f32; 3]; 4],
    cos_1deg_sq: f32,
    eps: f32,
    pooling: Pooling,
}

/// Device addresses of three buffers.
fn ptrs(b: &[DevBuf; 3]) -> [u64; 3] {
    [b[0].ptr, b[1].ptr, b[2].ptr]
}

impl FloatAdmPlan {
    /// Band stride (every band of every scale, as the CPU's `buf_stride`).
    fn bs(&self) -> usize {
        self.w.div_ceil(2)
    }

    fn enqueue_impl(&self, io: &FrameIo, c: &Ctx<'_>) -> Result<()> {
        let s = c.scratch.get::<FloatAdmScratch>();
        let k = &c.k.float_adm;
        let g = c.geom;
        let bs = self.bs() as i32;
        let (rcp_table, exact_div) = match self.division {
            #[cfg(target_arch = "x86_64")]
            Division::Rcp(_) => (s.rcp.ptr, 0),
            #[cfg(not(target_arch = "x86_64"))]
            Division::Exact => (s.rcp.ptr, 1),
        };
        let mut counts = [0i32; SCALES];
        for (scale, sc) in self.scales.iter().enumerate() {
            let lo_only = scale == 0 && self.skip_scale0;
            let parity = scale % 2;
            let dwt = FloatAdmDwtArgs {
                src: [io.reference, io.distorted],
                level: [s.band_a[0][1 - parity].ptr, s.band_a[1][1 - parity].ptr],
                tlo: [s.tlo[0].ptr, s.tlo[1].ptr],
                thi: [s.thi[0].ptr, s.thi[1].ptr],
                a: [s.band_a[0][parity].ptr, s.band_a[1][parity].ptr],
                hvd: [ptrs(&s.hvd[0]), ptrs(&s.hvd[1])],
                lo: scalar::LO.map(|c| c as f32),
                hi: scalar::HI.map(|c| c as f32),
                in_w: sc.in_w as i32,
                in_h: sc.in_h as i32,
                out_w: sc.w as i32,
                out_h: sc.h as i32,
                bs,
                bpc: g.bpc as i32,
                lo_only: lo_only as i32,
                pad_: 0,
            };
            let v = if scale > 0 {
                k.dwt_v[2]
            } else if g.eight_bit() {
                k.dwt_v[0]
            } else {
                k.dwt_v[1]
            };
            // SAFETY: FloatAdmDwtArgs mirrors float_adm.cu. Scale 0 reads the live borrowed
            // luma planes (held until the frame's event; the scorer checks that their rows hold
            // w samples); later scales read band a of the previous scale (in_h rows of in_w
            // floats at stride bs, written earlier on this stream). tlo/thi hold out_h rows of
            // in_w <= w floats (buffers of w * ceil(h/2)), the bands ceil(h/2) rows at stride bs.
            unsafe {
                launch(
                    v,
                    (blocks(sc.in_w), sc.h as u32, 2),
                    BX,
                    c.stream,
                    &dwt,
                    "float_adm DWT vertical pass",
                )?;
                launch(
                    k.dwt_h,
                    (blocks(sc.w), sc.h as u32, 2),
                    BX,
                    c.stream,
                    &dwt,
                    "float_adm DWT horizontal pass",
                )?;
            }
            if lo_only {
                continue;
            }
            counts[scale] = sc.pool_rows() as i32;
            let rf = self.rfactor[scale];
            let (t, p) = (sc.taps, sc.pool);
            let taps_grid = (blocks(t.right - t.left), (t.bottom - t.top) as u32, 1u32);
            let dec = FloatAdmDecoupleArgs {
                reference: ptrs(&s.hvd[0]),
                distorted: ptrs(&s.hvd[1]),
                r: ptrs(&s.dec_r),
                a: ptrs(&s.dec_a),
                rcp_table,
                gain_limit: self.gain_limit,
                cos_1deg_sq: self.cos_1deg_sq,
                eps: self.eps,
                bs,
                left: t.left as i32,
                right: t.right as i32,
                top: t.top as i32,
                bottom: t.bottom as i32,
                exact_div,
            };
            let rows_ptr =
                |q: usize| s.rows.ptr + 4 * (sc.rows_off + q * 3 * sc.pool_rows()) as u64;
            let rows = |src: [u64; 3], den: bool, q: usize| FloatAdmRowsArgs {
                src,
                out: rows_ptr(q),
                rfactor: rf,
                den: den as i32,
                bs,
                left: p.left as i32,
                right: p.right as i32,
                top: p.top as i32,
                bottom: p.bottom as i32,
                pad_: 0,
            };
            let csf = |src: &[DevBuf; 3], dst: &[DevBuf; 3], flt: &[DevBuf; 3]| FloatAdmCsfArgs {
                src: ptrs(src),
                dst: ptrs(dst),
                flt: ptrs(flt),
                one_by_30: scalar::ONE_BY_30,
                rfactor: rf,
                bs,
                left: t.left as i32,
                right: t.right as i32,
                top: t.top as i32,
                bottom: t.bottom as i32,
            };
            let cm = |src: &[DevBuf; 3], flt: &[DevBuf; 3], csf: &[DevBuf; 3]| FloatAdmCmArgs {
                src: ptrs(src),
                flt: ptrs(flt),
                csf: ptrs(csf),
                val: ptrs(&s.val),
                one_by_15: scalar::ONE_BY_15,
                rfactor: rf,
                w: sc.w as i32,
                h: sc.h as i32,
                bs,
                left: p.left as i32,
                right: p.right as i32,
                top: p.top as i32,
                bottom: p.bottom as i32,
                bypass: self.bypass_cm as i32,
                pad_: 0,
            };
            let pool_grid = (blocks(p.right - p.left), sc.pool_rows() as u32, 1u32);
            let rows_grid = (blocks(sc.pool_rows()), 3u32, 1u32);
            // The CPU's order: decouple, the denominator, DLM's CSF and masking, then AIM's with
            // the CSF buffers' roles swapped.
            let den = rows(ptrs(&s.hvd[0]), true, 0);
            let csf_dlm = csf(&s.dec_a, &s.csf_a, &s.csf_f);
            let cm_dlm = cm(&s.dec_r, &s.csf_f, &s.csf_a);
            let rows_dlm = rows(ptrs(&s.val), false, 1);
            let csf_aim = csf(&s.dec_r, &s.csf_f, &s.csf_a);
            let cm_aim = cm(&s.dec_a, &s.csf_a, &s.csf_f);
            let rows_aim = rows(ptrs(&s.val), false, 2);
            // SAFETY: the structs mirror float_adm.cu. Every buffer holds ceil(w/2) *
            // ceil(h/2) floats at stride bs and each kernel's region lies inside this scale's
            // band (Region::taps/pool are clamped to it; the masking's neighbours are mirrored
            // into the band and lie in the taps region, written by the CSF kernel before);
            // `rows_ptr(q)` has 3 * pool_rows floats inside the row-sum buffer (sized by
            // `scales`). The launches run in this order on one stream, so each kernel sees the
            // previous ones' writes (the masking's values are summed before being rewritten).
            unsafe {
                launch(
                    k.decouple,
                    taps_grid,
                    BX,
                    c.stream,
                    &dec,
                    "float_adm decoupling",
                )?;
                launch(
                    k.rows,
                    rows_grid,
                    BX,
                    c.stream,
                    &den,
                    "float_adm denominator rows",
                )?;
                let csf_grid = (taps_grid.0, taps_grid.1, 3);
                launch(k.csf, csf_grid, BX, c.stream, &csf_dlm, "float_adm CSF")?;
                launch(k.cm, pool_grid, BX, c.stream, &cm_dlm, "float_adm masking")?;
                launch(
                    k.rows,
                    rows_grid,
                    BX,
                    c.stream,
                    &rows_dlm,
                    "float_adm DLM rows",
                )?;
                launch(k.csf, csf_grid, BX, c.stream, &csf_aim, "float_adm CSF")?;
                launch(k.cm, pool_grid, BX, c.stream, &cm_aim, "float_adm masking")?;
                launch(
                    k.rows,
                    rows_grid,
                    BX,
                    c.stream,
                    &rows_aim,
                    "float_adm AIM rows",
                )?;
            }
        }
        let total = FloatAdmTotalArgs {
            rows: s.rows.ptr,
            out: c.result(self.offset),
            off: self.scales.map(|sc| sc.rows_off as i32),
            n: counts,
        };
        // SAFETY: FloatAdmTotalArgs mirrors float_adm.cu; scale s's 9 * n[s] row sums were
        // written above (n is 0 for a skipped scale, whose rows are not read); `out` is the
        // instance's RESULTS slots inside the result block.
        unsafe {
            launch(
                k.total,
                (1, 1, 1),
                FLOAT_ADM_TOTAL_THREADS,
                c.stream,
                &total,
                "float_adm totals",
            )
        }
    }
}

impl GpuPlan for FloatAdmPlan {
    fn name(&self) -> &'static str {
        GPU.extractor.name
    }

    fn results_len(&self) -> usize {
        RESULTS
    }

    fn alloc_scratch(&self, s: &mut Scratch, _: Geometry, stream: sys::CUstream) -> Result<()> {
        s.get_or_alloc(|| {
            let band = self.bs() * self.h.div_ceil(2) * 4;
            let vert = self.w * self.h.div_ceil(2) * 4;
            let mk = |bytes: usize, what: &str| DevBuf::new(bytes, what);
            let three = |what: &str| -> Result<[DevBuf; 3]> {
                Ok([mk(band, what)?, mk(band, what)?, mk(band, what)?])
            };
            let rcp = match self.division {
                #[cfg(target_arch = "x86_64")]
                Division::Rcp(m) => {
                    let table: &'static [u32] = &m.table[..];
                    let b = mk(std::mem::size_of_val(table), "float_adm RCPSS table")?;
                    b.upload_async(table, stream)?;
                    b
                }
                #[cfg(not(target_arch = "x86_64"))]
                Division::Exact => mk(1, "float_adm (no RCPSS table)")?,
            };
            Ok(FloatAdmScratch {
                tlo: [
                    mk(vert, "float_adm DWT pass")?,
                    mk(vert, "float_adm DWT pass")?,
                ],
                thi: [
                    mk(vert, "float_adm DWT pass")?,
                    mk(vert, "float_adm DWT pass")?,
                ],
                band_a: [
                    [mk(band, "float_adm band a")?, mk(band, "float_adm band a")?],
                    [mk(band, "float_adm band a")?, mk(band, "float_adm band a")?],
                ],
                hvd: [three("float_adm band")?, three("float_adm band")?],
                dec_r: three("float_adm restored band")?,
                dec_a: three("float_adm impairment band")?,
                csf_a: three("float_adm CSF band")?,
                csf_f: three("float_adm CSF band")?,
                val: three("float_adm masked values")?,
                rows: mk(scales(self.w, self.h).1 * 4, "float_adm row sums")?,
                rcp,
            })
        })
    }

    fn enqueue(&self, io: &FrameIo, c: &Ctx<'_>) -> Result<()> {
        if io.meta.scored {
            self.enqueue_impl(io, c)?;
        }
        Ok(())
    }

    fn finish(&mut self, res: &[u64], io: FrameMeta, _: Geometry, row: &mut [f64]) {
        if !io.scored {
            return;
        }
        // The kernel stores each total's f32 bits in the low half of its slot.
        let t = |scale: usize, q: usize| -> [f32; 3] {
            let at = self.offset + scale * QUANTITIES + 3 * q;
            std::array::from_fn(|b| f32::from_bits(res[at + b] as u32))
        };
        let (p, nw) = (self.pooling.p_norm, self.pooling.noise_weight);
        let per_scale: [ScaleValues; SCALES] = std::array::from_fn(|scale| {
            if scale == 0 && self.skip_scale0 {
                return None;
            }
            let reg = self.scales[scale].pool;
            let den = scalar::pool(t(scale, 0), reg, nw, p);
            let num = scalar::pool(t(scale, 1), reg, nw, p);
            let aim = scalar::pool(t(scale, 2), reg, 0.0, p);
            Some((num, den, aim))
        });
        let scores = self.pooling.combine(self.w, self.h, per_scale);
        self.pooling.write(&scores, &mut row[self.cols.clone()]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The row-sum layout covers each scale's pooled rows once, scale after scale.
    #[test]
    fn scales_tile_the_row_sums() {
        for (w, h) in (1..70).flat_map(|w| (1..40).map(move |h| (w, h))).chain([
            (1920, 1080),
            (3840, 2160),
            (4097, 2161),
        ]) {
            let (g, total) = scales(w, h);
            let mut at = 0;
            for s in g {
                assert_eq!(s.rows_off, at);
                assert!(s.pool.right <= s.w && s.pool.bottom <= s.h && s.pool_rows() > 0);
                assert!(s.taps.right <= s.w && s.taps.bottom <= s.h);
                assert!(s.taps.left <= s.pool.left && s.taps.right >= s.pool.right);
                // The masking reads the CSF bands only where this scale's CSF wrote them (the
                // taps region), never stale values (the CPU's and the GPU's would differ).
                let before = |i: usize, n: usize| if i == 0 { 1.min(n - 1) } else { i - 1 };
                let after = |i: usize, n: usize| if i + 1 >= n { n - 1 } else { i + 1 };
                for i in s.pool.top..s.pool.bottom {
                    for r in [before(i, s.h), i, after(i, s.h)] {
                        assert!((s.taps.top..s.taps.bottom).contains(&r), "{w}x{h} row {r}");
                    }
                }
                for j in s.pool.left..s.pool.right {
                    for c in [before(j, s.w), j, after(j, s.w)] {
                        assert!((s.taps.left..s.taps.right).contains(&c), "{w}x{h} col {c}");
                    }
                }
                at += QUANTITIES * s.pool_rows();
            }
            assert_eq!(at, total);
        }
    }
}
