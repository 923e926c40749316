//! The scalar VIF kernels: the specification every SIMD/GPU peer must match bit for bit.
//!
//! Each scale runs two separable passes per output row, as libvmaf's `integer_vif.c` does:
//!
//! * a **vertical** pass over `taps` input rows (already mirror-resolved by the caller, so the
//!   kernels see plain row slices) into line buffers,
//! * libvmaf's mirror padding of those line buffers ([`pad_line`]),
//! * a **horizontal** pass over the padded line, which either accumulates the VIF statistic
//!   ([`stat_horizontal`]) or writes one decimated row of the next scale
//!   ([`subsample_horizontal`]).
//!
//! The integer types, rounding constants, shifts and casts are libvmaf's; accumulations are done
//! in a different order (tap-major instead of pixel-major), which is exact because they are
//! integer sums (modular in the rare `u32` wrapping cases, like C's unsigned arithmetic).
//!
//! Every kernel has a `*_cols` form over a column range, which the SIMD peers use for their tails.
#![forbid(unsafe_code)]

use std::ops::Range;

use super::tables::{log2_32, log2_64, EPS, FILTER_S0, LOG2_TABLE_LEN, PAD, SIGMA_NSQ};
use super::{RefRow, RefRowMut};

/// Line buffers of one row of vertically filtered values, each `PAD` entries of mirror padding on
/// both sides of `width` values (libvmaf's `buf.tmp`). Index `PAD + j` holds column `j`.
#[derive(Debug, Clone)]
pub struct StatLine {
    /// Filtered reference (`mu1`).
    pub mu1: Vec<u32>,
    /// Filtered distorted (`mu2`).
    pub mu2: Vec<u32>,
    /// Filtered reference squared (`ref`).
    pub xx: Vec<u32>,
    /// Filtered distorted squared (`dis`).
    pub yy: Vec<u32>,
    /// Filtered reference times distorted (`ref_dis`).
    pub xy: Vec<u32>,
}

impl StatLine {
    /// Zeroed buffers for lines of up to `width` values.
    pub fn new(width: usize) -> Self {
        let n = width + 2 * PAD;
        StatLine {
            mu1: vec![0; n],
            mu2: vec![0; n],
            xx: vec![0; n],
            yy: vec![0; n],
            xy: vec![0; n],
        }
    }
}

/// The two padded 16-bit lines the downsampling's vertical pass writes and its horizontal pass
/// reads ([`subsample_vertical`], [`subsample_horizontal`]): one per picture.
#[derive(Debug, Clone)]
pub struct DownLines {
    /// The reference's line.
    pub reference: Vec<u16>,
    /// The distorted picture's line.
    pub distorted: Vec<u16>,
}

impl DownLines {
    /// Zeroed lines for rows of up to `width` values.
    pub fn new(width: usize) -> Self {
        let n = width + 2 * PAD;
        DownLines {
            reference: vec![0; n],
            distorted: vec![0; n],
        }
    }
}

/// Length of one 16-bit line copy in [`WideAcc::narrow`]: a chunk of up to 256 output columns
/// plus the widest filter's reach and a vector's overhang (what the SIMD peers' `madd` paths of
/// the horizontal statistic read).
pub const NARROW_LINE: usize = 256 + 2 * PAD + 16;

/// Line copies in [`WideAcc::narrow`]: the two means and the low and high halves of the three
/// squares.
pub const NARROW_COPIES: usize = 8;

/// Per-row accumulators (`width` each, no padding): the 64-bit vertical sums of the squared terms
/// for 9–16 bit data, then the horizontal sums of all five terms.
#[derive(Debug, Clone)]
pub struct WideAcc {
    /// Sum of `f * mu1`.
    pub mu1: Vec<u32>,
    /// Sum of `f * mu2`.
    pub mu2: Vec<u32>,
    /// Sum of `f * ref * ref`.
    pub xx: Vec<u64>,
    /// Sum of `f * dis * dis`.
    pub yy: Vec<u64>,
    /// Sum of `f * ref * dis`.
    pub xy: Vec<u64>,
    /// Scratch of the SIMD peers: [`NARROW_COPIES`] 16-bit line copies of [`NARROW_LINE`]
    /// values each, kept here so no kernel zeroes a stack buffer per row (the scalar kernels do
    /// not use it).
    pub narrow: Vec<i16>,
    /// Scratch of the SIMD peers' two-row kernels (`Kernels::stat_rows_u8_x2`): two whole lines
    /// of `w` values as [`NARROW_COPIES`] 16-bit copies each, [`rows16_stride`]`(w)` apart (copy
    /// `q` of line `l` is the `8l + q`-th), line position `p` (column `j` at `PAD + j`) at index
    /// `p` of its copy.
    pub rows16: Vec<i16>,
}

impl WideAcc {
    /// Zeroed accumulators for lines of up to `width` values.
    pub fn new(width: usize) -> Self {
        WideAcc {
            mu1: vec![0; width],
            mu2: vec![0; width],
            xx: vec![0; width],
            yy: vec![0; width],
            xy: vec![0; width],
            narrow: vec![0; NARROW_COPIES * NARROW_LINE],
            rows16: vec![0; 2 * NARROW_COPIES * rows16_stride(width)],
        }
    }
}

/// The distance between two copies in [`WideAcc::rows16`] for lines of `width` values: the
/// width rounded up to 32, the padding on both sides, and the reach of a vector past the last
/// column.
pub fn rows16_stride(width: usize) -> usize {
    width.div_ceil(32) * 32 + 2 * PAD + 64
}

/// Rounding of the vertical statistic pass of `vif_statistic_16`: `mu = (acc + mu_round) >>
/// mu_shift` and `sq = (acc + sq_round) >> sq_shift`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StatShifts {
    /// Rounding constant for the filtered means.
    pub mu_round: u32,
    /// Shift for the filtered means.
    pub mu_shift: u32,
    /// Rounding constant for the filtered squares.
    pub sq_round: u64,
    /// Shift for the filtered squares.
    pub sq_shift: u32,
}

impl StatShifts {
    /// libvmaf's choice for `scale` at `bpc` bits: at scale 0 the means drop `bpc` bits and the
    /// squares `2 * (bpc - 8)`; at the other scales (whose samples are 16-bit) both drop 16.
    pub fn for_scale(scale: usize, bpc: u32) -> Self {
        if scale == 0 {
            let sq_shift = (bpc - 8) * 2;
            StatShifts {
                mu_round: 1 << (bpc - 1),
                mu_shift: bpc,
                sq_round: if bpc == 8 { 0 } else { 1 << (sq_shift - 1) },
                sq_shift,
            }
        } else {
            StatShifts {
                mu_round: 32768,
                mu_shift: 16,
                sq_round: 32768,
                sq_shift: 16,
            }
        }
    }
}

/// The integer sums one scale's statistic accumulates (libvmaf's `accum_*` / `VifResiduals`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct VifSums {
    /// Sum of `log2(numerator) * 2048` terms.
    pub num_log: i64,
    /// Sum of `log2(denominator) * 2048` terms.
    pub den_log: i64,
    /// Sum of clamped `sigma2_sq` where `sigma1_sq` is below the noise floor.
    pub num_non_log: i64,
    /// Count of pixels where `sigma1_sq` is below the noise floor.
    pub den_non_log: i64,
}

impl VifSums {
    /// Adds another partial sum (e.g. of a block of columns).
    pub fn add(&mut self, o: &VifSums) {
        self.num_log += o.num_log;
        self.den_log += o.den_log;
        self.num_non_log += o.num_non_log;
        self.den_non_log += o.den_non_log;
    }

    /// libvmaf's final `(num, den)` of a scale, computed in `double` and stored as `float`.
    pub fn num_den(&self) -> (f32, f32) {
        let num = self.num_log as f64 / 2048.0
            + (self.den_non_log as f64 - (self.num_non_log as f64 / 16384.0) / 65025.0);
        let den = self.den_log as f64 / 2048.0 + self.den_non_log as f64;
        (num as f32, den as f32)
    }
}

/// Vertical statistic pass for 8-bit scale 0 (`vif_statistic_8`): 17 rows of `u8`, 32-bit
/// accumulators; the means are rounded by 8 bits, the squares kept whole.
///
/// `reference`/`distorted` hold the 17 rows `i - 8 ..= i + 8` (each at least `w` long);
/// columns `0..w` of `line` are written (at offset `PAD`).
pub fn stat_vertical_u8(reference: &[&[u8]], distorted: &[&[u8]], w: usize, line: &mut StatLine) {
    stat_vertical_u8_cols::<false>(reference, distorted, 0..w, line);
}

/// [`stat_vertical_u8`] for the columns `cols` only (the tail of a SIMD peer); with `DIS_ONLY`
/// only the distorted side's lines (`mu2`, `yy`, `xy`), as ladder scoring's later renditions
/// need (their reference side is read from the first one's rows).
pub fn stat_vertical_u8_cols<const DIS_ONLY: bool>(
    reference: &[&[u8]],
    distorted: &[&[u8]],
    cols: Range<usize>,
    line: &mut StatLine,
) {
    debug_assert_eq!(reference.len(), FILTER_S0.len());
    debug_assert_eq!(distorted.len(), FILTER_S0.len());
    let n = cols.len();
    let out = PAD + cols.start..PAD + cols.end;
    let mu1 = &mut line.mu1[out.clone()];
    let mu2 = &mut line.mu2[out.clone()];
    let xx = &mut line.xx[out.clone()];
    let yy = &mut line.yy[out.clone()];
    let xy = &mut line.xy[out];
    for (k, ((&f, r), d)) in FILTER_S0.iter().zip(reference).zip(distorted).enumerate() {
        let f = f as u32;
        let (r, d) = (&r[cols.clone()], &d[cols.clone()]);
        // The first tap initialises the line, the others accumulate into it.
        let keep = if k == 0 { 0 } else { u32::MAX };
        for j in 0..n {
            let (x, y) = (r[j] as u32, d[j] as u32);
            let (fx, fy) = (f * x, f * y);
            if !DIS_ONLY {
                mu1[j] = (mu1[j] & keep).wrapping_add(fx);
                xx[j] = (xx[j] & keep).wrapping_add(fx.wrapping_mul(x));
            }
            mu2[j] = (mu2[j] & keep).wrapping_add(fy);
            yy[j] = (yy[j] & keep).wrapping_add(fy.wrapping_mul(y));
            xy[j] = (xy[j] & keep).wrapping_add(fx.wrapping_mul(y));
        }
    }
    if !DIS_ONLY {
        for v in mu1.iter_mut() {
            *v = v.wrapping_add(128) >> 8;
        }
    }
    for v in mu2.iter_mut() {
        *v = v.wrapping_add(128) >> 8;
    }
}

/// Vertical statistic pass for 9–16 bit scale 0 and for every later scale
/// (`vif_statistic_16`): `filt.len()` rows of `u16`, 32-bit mean and 64-bit square accumulators,
/// rounded by `sh`; the means are truncated to 16 bits as libvmaf does.
///
/// `reference`/`distorted` hold the rows `i - taps/2 ..= i + taps/2` (each at least `w` long);
/// columns `0..w` of `line` are written (at offset `PAD`); `acc` is scratch.
pub fn stat_vertical_u16(
    reference: &[&[u16]],
    distorted: &[&[u16]],
    filt: &[u16],
    sh: StatShifts,
    w: usize,
    line: &mut StatLine,
    acc: &mut WideAcc,
) {
    stat_vertical_u16_cols::<false>(reference, distorted, filt, sh, 0..w, line, acc);
}

/// [`stat_vertical_u16`] for the columns `cols` only (the tail of a SIMD peer); with `DIS_ONLY`
/// only the distorted side's lines (`mu2`, `yy`, `xy`), as in [`stat_vertical_u8_cols`].
pub fn stat_vertical_u16_cols<const DIS_ONLY: bool>(
    reference: &[&[u16]],
    distorted: &[&[u16]],
    filt: &[u16],
    sh: StatShifts,
    cols: Range<usize>,
    line: &mut StatLine,
    acc: &mut WideAcc,
) {
    debug_assert_eq!(reference.len(), filt.len());
    debug_assert_eq!(distorted.len(), filt.len());
    let n = cols.len();
    let out = PAD + cols.start..PAD + cols.end;
    let mu1 = &mut line.mu1[out.clone()];
    let mu2 = &mut line.mu2[out.clone()];
    let (axx, ayy, axy) = (&mut acc.xx[..n], &mut acc.yy[..n], &mut acc.xy[..n]);
    for (k, ((&f, r), d)) in filt.iter().zip(reference).zip(distorted).enumerate() {
        let f = f as u32;
        let (r, d) = (&r[cols.clone()], &d[cols.clone()]);
        // The first tap initialises the accumulators, the others add to them.
        let (keep32, keep64) = if k == 0 { (0, 0) } else { (u32::MAX, u64::MAX) };
        for j in 0..n {
            let (x, y) = (r[j] as u32, d[j] as u32);
            let (fx, fy) = (f * x, f * y);
            if !DIS_ONLY {
                mu1[j] = (mu1[j] & keep32).wrapping_add(fx);
                axx[j] = (axx[j] & keep64).wrapping_add(fx as u64 * x as u64);
            }
            mu2[j] = (mu2[j] & keep32).wrapping_add(fy);
            ayy[j] = (ayy[j] & keep64).wrapping_add(fy as u64 * y as u64);
            axy[j] = (axy[j] & keep64).wrapping_add(fx as u64 * y as u64);
        }
    }
    let mean = |v: &mut u32| *v = (v.wrapping_add(sh.mu_round) >> sh.mu_shift) as u16 as u32;
    if !DIS_ONLY {
        mu1.iter_mut().for_each(mean);
    }
    mu2.iter_mut().for_each(mean);
    let sq = |a: u64| (a.wrapping_add(sh.sq_round) >> sh.sq_shift) as u32;
    let out = PAD + cols.start..PAD + cols.end;
    if !DIS_ONLY {
        for (o, &a) in line.xx[out.clone()].iter_mut().zip(axx.iter()) {
            *o = sq(a);
        }
    }
    for (o, &a) in line.yy[out.clone()].iter_mut().zip(ayy.iter()) {
        *o = sq(a);
    }
    for (o, &a) in line.xy[out].iter_mut().zip(axy.iter()) {
        *o = sq(a);
    }
}

/// libvmaf's horizontal mirror padding of a line buffer (`PADDING_SQ_DATA`): for `f = 1..=half`,
/// `[-f] = [f]` then `[w-1+f] = [w-1-f]`, in that order (so lines narrower than the filter are
/// reflected repeatedly). `v` is a padded line (column `j` at `PAD + j`), `w >= 2`,
/// `half <= PAD`.
pub fn pad_line<T: Copy>(v: &mut [T], w: usize, half: usize) {
    debug_assert!(half <= PAD && v.len() >= w + 2 * PAD);
    let last = (PAD + w - 1) as isize;
    for f in 1..=half as isize {
        let p = PAD as isize;
        v[(p - f) as usize] = v[(p + f) as usize];
        v[(last + f) as usize] = v[(last - f) as usize];
    }
}

/// Pads all five buffers of a statistic line (see [`pad_line`]).
pub fn pad_stat_line(line: &mut StatLine, w: usize, half: usize) {
    pad_line(&mut line.mu1, w, half);
    pad_line(&mut line.mu2, w, half);
    pad_line(&mut line.xx, w, half);
    pad_line(&mut line.yy, w, half);
    pad_line(&mut line.xy, w, half);
}

/// Horizontal statistic pass over a padded line: filters each column (into `acc`, scratch),
/// forms the local variances and covariance, and accumulates VIF's log/non-log terms into `sums`.
pub fn stat_horizontal(
    line: &StatLine,
    filt: &[u16],
    w: usize,
    gain_limit: f64,
    log2: &[u16; LOG2_TABLE_LEN],
    acc: &mut WideAcc,
    sums: &mut VifSums,
) {
    stat_horizontal_cols(line, filt, 0..w, gain_limit, log2, acc, sums);
}

/// [`stat_horizontal`] for the output columns `cols` only (the tail of a SIMD peer).
pub fn stat_horizontal_cols(
    line: &StatLine,
    filt: &[u16],
    cols: Range<usize>,
    gain_limit: f64,
    log2: &[u16; LOG2_TABLE_LEN],
    acc: &mut WideAcc,
    sums: &mut VifSums,
) {
    let n = cols.len();
    filter_cols::<true>(line, filt, cols, acc);
    for j in 0..n {
        let (mu1, sigma1_sq) = reference_side(acc, j);
        let (sigma2_sq, sigma12) = distorted_side(acc, j, mu1);
        vif_term(sigma1_sq, sigma2_sq, sigma12, gain_limit, log2, sums);
    }
}

/// The reference side a split pass of ladder scoring keeps or reads (see
/// [`stat_horizontal_cols_split`]).
pub enum SplitRow<'a> {
    /// Write each column's `mu1` and `sigma1_sq` (column `j` at index `j`).
    Store(RefRowMut<'a>),
    /// Read them (the lines' `mu1` and `xx` are not used) and add only the sums that depend on
    /// the distorted picture (`num_log`, `num_non_log`).
    Load(RefRow<'a>),
}

/// [`stat_horizontal_cols`] as a split pass of ladder scoring (the tail of a SIMD peer's
/// [`super::SplitKernels`] pass): with [`SplitRow::Store`] the whole statistic, each column's
/// reference side written to the row; with [`SplitRow::Load`] the distorted side only, the
/// reference side read from the row. The rows must reach `cols.end`.
#[allow(clippy::too_many_arguments)]
pub fn stat_horizontal_cols_split(
    line: &StatLine,
    filt: &[u16],
    cols: Range<usize>,
    gain_limit: f64,
    log2: &[u16; LOG2_TABLE_LEN],
    acc: &mut WideAcc,
    sums: &mut VifSums,
    row: &mut SplitRow<'_>,
) {
    let c0 = cols.start;
    let n = cols.len();
    // One loop per mode: no per-pixel branch on it.
    match row {
        SplitRow::Store(r) => {
            filter_cols::<true>(line, filt, cols, acc);
            for j in 0..n {
                let (mu1, sigma1_sq) = reference_side(acc, j);
                (r.mu1[c0 + j], r.s1[c0 + j]) = (mu1, sigma1_sq);
                let (sigma2_sq, sigma12) = distorted_side(acc, j, mu1);
                vif_term(sigma1_sq, sigma2_sq, sigma12, gain_limit, log2, sums);
            }
        }
        SplitRow::Load(r) => {
            filter_cols::<false>(line, filt, cols, acc);
            for j in 0..n {
                let (mu1, sigma1_sq) = (r.mu1[c0 + j], r.s1[c0 + j]);
                let (sigma2_sq, sigma12) = distorted_side(acc, j, mu1);
                vif_term_num(sigma1_sq, sigma2_sq, sigma12, gain_limit, log2, sums);
            }
        }
    }
}

/// Ladder scoring's split kernels at the scalar level ([`super::SplitKernels`]): the rows hold
/// column `j` at `j`, and any gain limit and mean is taken.
pub const SPLIT: super::SplitKernels = super::SplitKernels {
    stat_vertical_u8_dis,
    stat_vertical_u8_dis_x2: None,
    stat_vertical_u16_dis,
    stat_vertical_u16_dis_x2: None,
    stat_horizontal_store,
    stat_horizontal_dis,
    max_gain_limit: f64::INFINITY,
};

/// [`stat_vertical_u8`] writing only the distorted side's lines (see [`stat_vertical_u8_cols`]).
fn stat_vertical_u8_dis(reference: &[&[u8]], distorted: &[&[u8]], w: usize, line: &mut StatLine) {
    stat_vertical_u8_cols::<true>(reference, distorted, 0..w, line);
}

/// [`stat_vertical_u16`] writing only the distorted side's lines (see [`stat_vertical_u16_cols`]).
fn stat_vertical_u16_dis(
    reference: &[&[u16]],
    distorted: &[&[u16]],
    filt: &[u16],
    sh: StatShifts,
    w: usize,
    line: &mut StatLine,
    acc: &mut WideAcc,
) {
    stat_vertical_u16_cols::<true>(reference, distorted, filt, sh, 0..w, line, acc);
}

/// [`super::StatHorizontalStore`] at the scalar level; `false` if the row is shorter than `w`.
#[allow(clippy::too_many_arguments)]
fn stat_horizontal_store(
    line: &StatLine,
    filt: &[u16],
    w: usize,
    gain_limit: f64,
    log2: &[u16; LOG2_TABLE_LEN],
    acc: &mut WideAcc,
    sums: &mut VifSums,
    row: super::RefRowMut<'_>,
) -> bool {
    if row.mu1.len() < w || row.s1.len() < w {
        return false;
    }
    let mut row = SplitRow::Store(row);
    stat_horizontal_cols_split(line, filt, 0..w, gain_limit, log2, acc, sums, &mut row);
    true
}

/// [`super::StatHorizontalDis`] at the scalar level; `false` if the row is shorter than `w`.
#[allow(clippy::too_many_arguments)]
fn stat_horizontal_dis(
    line: &StatLine,
    filt: &[u16],
    w: usize,
    gain_limit: f64,
    log2: &[u16; LOG2_TABLE_LEN],
    acc: &mut WideAcc,
    sums: &mut VifSums,
    row: super::RefRow<'_>,
) -> bool {
    if row.mu1.len() < w || row.s1.len() < w {
        return false;
    }
    let mut row = SplitRow::Load(row);
    stat_horizontal_cols_split(line, filt, 0..w, gain_limit, log2, acc, sums, &mut row);
    true
}

/// The horizontal filter of the five lines for the output columns `cols`, into `acc[..n]`
/// (without `REFERENCE`, of the distorted side's three: a split pass that reads the reference
/// side from its row, where the lines' `mu1` and `xx` were not computed).
fn filter_cols<const REFERENCE: bool>(
    line: &StatLine,
    filt: &[u16],
    cols: Range<usize>,
    acc: &mut WideAcc,
) {
    let n = cols.len();
    let start = PAD - filt.len() / 2 + cols.start;
    let (amu1, amu2) = (&mut acc.mu1[..n], &mut acc.mu2[..n]);
    let (axx, ayy, axy) = (&mut acc.xx[..n], &mut acc.yy[..n], &mut acc.xy[..n]);
    for (k, &f) in filt.iter().enumerate() {
        let at = start + k..start + k + n;
        let (mu1, mu2) = (&line.mu1[at.clone()], &line.mu2[at.clone()]);
        let (xx, yy, xy) = (&line.xx[at.clone()], &line.yy[at.clone()], &line.xy[at]);
        // The first tap initialises the accumulators, the others add to them.
        let (keep32, keep64) = if k == 0 { (0, 0) } else { (u32::MAX, u64::MAX) };
        let (f32_, f64_) = (f as u32, f as u64);
        for j in 0..n {
            if REFERENCE {
                amu1[j] = (amu1[j] & keep32).wrapping_add(f32_.wrapping_mul(mu1[j]));
                axx[j] = (axx[j] & keep64).wrapping_add(f64_ * xx[j] as u64);
            }
            amu2[j] = (amu2[j] & keep32).wrapping_add(f32_.wrapping_mul(mu2[j]));
            ayy[j] = (ayy[j] & keep64).wrapping_add(f64_ * yy[j] as u64);
            axy[j] = (axy[j] & keep64).wrapping_add(f64_ * xy[j] as u64);
        }
    }
}

/// `(a * b + 2^31) >> 32` of two filtered means.
fn rsh32(a: u32, b: u32) -> u32 {
    ((a as u64 * b as u64 + 2147483648) >> 32) as u32
}

/// `(acc + 2^15) >> 16` of a filtered square, kept to 32 bits.
fn rsh16(a: u64) -> u32 {
    (a.wrapping_add(32768) >> 16) as u32
}

/// Column `j`'s filtered reference mean and `sigma1_sq` from the filter sums.
fn reference_side(acc: &WideAcc, j: usize) -> (u32, i32) {
    let mu1 = acc.mu1[j];
    (mu1, rsh16(acc.xx[j]).wrapping_sub(rsh32(mu1, mu1)) as i32)
}

/// Column `j`'s `sigma2_sq` and `sigma12` from the filter sums and the reference mean.
fn distorted_side(acc: &WideAcc, j: usize, mu1: u32) -> (i32, i32) {
    let mu2 = acc.mu2[j];
    (
        rsh16(acc.yy[j]).wrapping_sub(rsh32(mu2, mu2)) as i32,
        rsh16(acc.xy[j]).wrapping_sub(rsh32(mu1, mu2)) as i32,
    )
}

/// [`vif_term`] of the lanes whose bits are set in `lanes` (bit `l`: lane `l` of `s1`, `s2`,
/// `s12`, the statistics as `u32` lanes): the SIMD kernels' lane-by-lane path.
#[cfg(target_arch = "x86_64")]
pub(super) fn vif_term_lanes(
    [s1, s2, s12]: [&[u32]; 3],
    mut lanes: u32,
    gain_limit: f64,
    log2: &[u16; LOG2_TABLE_LEN],
    sums: &mut VifSums,
) {
    while lanes != 0 {
        let l = lanes.trailing_zeros() as usize;
        lanes &= lanes - 1;
        vif_term(
            s1[l] as i32,
            s2[l] as i32,
            s12[l] as i32,
            gain_limit,
            log2,
            sums,
        );
    }
}

/// Accumulates one pixel's VIF term from its local statistics (Q16 fixed point), as libvmaf
/// does: below the noise floor `sigma_nsq` a linear term, above it `log2` ratios from the table,
/// with the gain `g` computed in `double` and truncated conversions to integers.
#[inline]
pub fn vif_term(
    sigma1_sq: i32,
    sigma2_sq: i32,
    sigma12: i32,
    gain_limit: f64,
    log2: &[u16; LOG2_TABLE_LEN],
    sums: &mut VifSums,
) {
    // The denominator's part depends on the reference only (ladder scoring shares it).
    if sigma1_sq >= SIGMA_NSQ {
        // C: log2_32(table, sigma_nsq + sigma1_sq) with the int sum passed as uint32_t.
        let den = SIGMA_NSQ.wrapping_add(sigma1_sq) as u32;
        sums.den_log += (log2_32(log2, den) - 2048 * 17) as i64;
    } else {
        sums.den_non_log += 1;
    }
    vif_term_num(sigma1_sq, sigma2_sq, sigma12, gain_limit, log2, sums);
}

/// The numerator's part of [`vif_term`] (`num_log`, `num_non_log`): what depends on the
/// distorted picture.
#[inline]
pub fn vif_term_num(
    sigma1_sq: i32,
    sigma2_sq: i32,
    sigma12: i32,
    gain_limit: f64,
    log2: &[u16; LOG2_TABLE_LEN],
    sums: &mut VifSums,
) {
    let sigma2_sq = sigma2_sq.max(0);
    if sigma1_sq >= SIGMA_NSQ {
        if sigma12 > 0 && sigma2_sq > 0 {
            let g = sigma12 as f64 / (sigma1_sq as f64 + EPS);
            // C: int32_t sv_sq = sigma2_sq - g * sigma12 (truncation; can only leave the i32
            // range downwards, where C's INT_MIN and Rust's saturation both clamp to 0 below).
            let sv_sq = (sigma2_sq as f64 - g * sigma12 as f64) as i32;
            let sv_sq = sv_sq.max(0);
            let g = if g < gain_limit { g } else { gain_limit };
            let numer1 = sv_sq.wrapping_add(SIGMA_NSQ) as u32;
            let numer1_tmp = (g * g * sigma1_sq as f64) as i64 + numer1 as i64;
            sums.num_log +=
                (log2_64(log2, numer1_tmp as u64) - log2_64(log2, numer1 as u64)) as i64;
        }
    } else {
        sums.num_non_log += sigma2_sq as i64;
    }
}

/// Vertical pass of the downsampling into the next scale (`subsample_rd_8`/`_16`): `filt.len()`
/// rows into `out_ref`/`out_dis` (padded 16-bit lines, column `j` at `PAD + j`), rounded by
/// `(acc + round) >> shift` and truncated to 16 bits (libvmaf's `uint16_t` line buffers).
///
/// For 8-bit scale 0 libvmaf uses `round = 128, shift = 8` and no 16-bit truncation; its values
/// (at most 65280) never exceed 16 bits, so the truncation is a no-op there.
#[allow(clippy::too_many_arguments)]
pub fn subsample_vertical<T: Copy + Into<u32>>(
    reference: &[&[T]],
    distorted: &[&[T]],
    filt: &[u16],
    round: u32,
    shift: u32,
    w: usize,
    out_ref: &mut [u16],
    out_dis: &mut [u16],
) {
    subsample_vertical_cols(
        reference,
        distorted,
        filt,
        round,
        shift,
        0..w,
        out_ref,
        out_dis,
    );
}

/// [`subsample_vertical`] for the columns `cols` only (the tail of a SIMD peer).
#[allow(clippy::too_many_arguments)]
pub fn subsample_vertical_cols<T: Copy + Into<u32>>(
    reference: &[&[T]],
    distorted: &[&[T]],
    filt: &[u16],
    round: u32,
    shift: u32,
    cols: Range<usize>,
    out_ref: &mut [u16],
    out_dis: &mut [u16],
) {
    debug_assert_eq!(reference.len(), filt.len());
    debug_assert_eq!(distorted.len(), filt.len());
    let or = &mut out_ref[PAD + cols.start..PAD + cols.end];
    let od = &mut out_dis[PAD + cols.start..PAD + cols.end];
    // Tap by tap over chunks of columns, the sums in a stack buffer (row order: vectorisable).
    const CHUNK: usize = 64;
    for (rows, out) in [(reference, or), (distorted, od)] {
        for (c, out) in out.chunks_mut(CHUNK).enumerate() {
            let at = cols.start + c * CHUNK;
            let mut acc = [0u32; CHUNK];
            let acc = &mut acc[..out.len()];
            for (&f, row) in filt.iter().zip(rows) {
                let f = f as u32;
                for (a, &x) in acc.iter_mut().zip(&row[at..at + out.len()]) {
                    *a = a.wrapping_add(f.wrapping_mul(x.into()));
                }
            }
            for (o, &a) in out.iter_mut().zip(acc.iter()) {
                *o = (a.wrapping_add(round) >> shift) as u16;
            }
        }
    }
}

/// Horizontal pass of the downsampling: filters the padded lines at the even columns
/// `0, 2, …, 2 * (w / 2 - 1)` and writes the `w / 2` results (libvmaf's `mu1`/`mu2` after
/// decimation) to `out_ref`/`out_dis`.
pub fn subsample_horizontal(
    line_ref: &[u16],
    line_dis: &[u16],
    filt: &[u16],
    w: usize,
    out_ref: &mut [u16],
    out_dis: &mut [u16],
) {
    subsample_horizontal_cols(line_ref, line_dis, filt, 0..w / 2, out_ref, out_dis);
}

/// [`subsample_horizontal`] for the outputs `outs` (a range within `0..w / 2`) only (the tail of a
/// SIMD peer).
pub fn subsample_horizontal_cols(
    line_ref: &[u16],
    line_dis: &[u16],
    filt: &[u16],
    outs: Range<usize>,
    out_ref: &mut [u16],
    out_dis: &mut [u16],
) {
    let taps = filt.len();
    let start = PAD - taps / 2;
    for m in outs {
        let s = start + 2 * m;
        let (r, d) = (&line_ref[s..s + taps], &line_dis[s..s + taps]);
        let mut ar: u32 = 0;
        let mut ad: u32 = 0;
        for ((&f, &x), &y) in filt.iter().zip(r).zip(d) {
            let f = f as u32;
            ar = ar.wrapping_add(f.wrapping_mul(x as u32));
            ad = ad.wrapping_add(f.wrapping_mul(y as u32));
        }
        out_ref[m] = (ar.wrapping_add(32768) >> 16) as u16;
        out_dis[m] = (ad.wrapping_add(32768) >> 16) as u16;
    }
}
