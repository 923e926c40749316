//! Integer VIF (libvmaf's `vif` extractor, `integer_vif.c`): visual information fidelity at four
//! scales, in libvmaf's fixed-point arithmetic so the scores are bit-identical.
//!
//! Per frame, scale 0 works on the input luma planes; every later scale on a copy filtered with
//! that scale's Gaussian and decimated by two in both directions. At each scale a separable
//! Gaussian gives the local means, variances and covariance, from which each pixel contributes a
//! `log2` term (above the noise floor) or a linear term; the per-scale score is `num / den` in
//! `float`. Borders are mirror-padded exactly like libvmaf's buffers (rows by iterated reflection
//! of the row index, line buffers by [`scalar::pad_line`]).
//!
//! The kernels in [`scalar`] take plain row slices and line buffers, so a SIMD or GPU peer can
//! replace them row by row; the drivers here resolve mirrored rows and walk the scales.
//!
//! The per-row kernels are dispatched through [`Kernels`], chosen once per instance from
//! [`crate::cpu::cpu_level`]; the `unsafe` of the SIMD peers stays in their arch modules.
#![deny(unsafe_code)]

pub mod scalar;
pub mod tables;
#[cfg(test)]
mod tests;
#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
mod x86_64_avx2;
#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
mod x86_64_avx512;
/// The AVX2 kernels compiled with AVX-VNNI as well ([`crate::cpu::CpuLevel::Avx2Vnni`]):
/// `x86_64_avx2.rs` with AVX-VNNI added to its target features, copied by build.rs.
#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
mod x86_64_avx2_vnni {
    include!(concat!(env!("OUT_DIR"), "/vif_x86_64_avx2_vnni.rs"));
}
/// The AVX-512 kernels compiled with VNNI as well ([`crate::cpu::CpuLevel::Avx512Vnni`]):
/// `x86_64_avx512.rs` with VNNI added to its target features, copied by build.rs.
#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
mod x86_64_avx512_vnni {
    include!(concat!(env!("OUT_DIR"), "/vif_x86_64_avx512_vnni.rs"));
}

use super::options::{OptKind, OptSpec};
use super::{Extractor, ExtractorConfig, ExtractorDef, FrameInput, SharedReference};
use crate::cpu::{cpu_level, CpuLevel};
use crate::error::{Error, Result};
use crate::picture::{Plane, Samples};
use scalar::{DownLines, StatLine, StatShifts, VifSums, WideAcc};
use tables::{FILTERS, FILTER_S0, LOG2_TABLE_LEN, MAX_TAPS, SCALES};

/// Options, with libvmaf's names, aliases, defaults, ranges and FEATURE_PARAM flags
/// (integer_vif.c `options[]`).
pub static OPTIONS: &[OptSpec] = &[
    OptSpec {
        name: "debug",
        alias: None,
        kind: OptKind::Bool(false),
        feature_param: false,
    },
    OptSpec {
        name: "vif_enhn_gain_limit",
        alias: Some("egl"),
        kind: OptKind::Double {
            default: tables::DEFAULT_ENHN_GAIN_LIMIT,
            min: 1.0,
            max: tables::DEFAULT_ENHN_GAIN_LIMIT,
        },
        feature_param: true,
    },
    OptSpec {
        name: "vif_skip_scale0",
        alias: Some("ssclz"),
        kind: OptKind::Bool(false),
        feature_param: true,
    },
];

/// Registry entry.
pub static DEF: ExtractorDef = ExtractorDef {
    name: "vif",
    options: OPTIONS,
    spatial: &[
        "VMAF_integer_feature_vif_scale0_score",
        "VMAF_integer_feature_vif_scale1_score",
        "VMAF_integer_feature_vif_scale2_score",
        "VMAF_integer_feature_vif_scale3_score",
    ],
    temporal: &[],
    needs_prev_ref: false,
    shares_reference: true,
    create,
    create_temporal: None,
    ..ExtractorDef::DEFAULTS
};

/// Smallest width/height accepted: every scale must be at least 2 pixels in each direction, below
/// which libvmaf's padding reads stale memory.
pub const MIN_SIZE: usize = 16;

/// The decimated reference and distorted luma of one scale above 0 (tightly packed).
#[derive(Debug, Clone)]
struct Level {
    reference: Vec<u16>,
    distorted: Vec<u16>,
    w: usize,
    h: usize,
}

/// Vertical statistic pass of 8-bit scale 0 ([`scalar::stat_vertical_u8`]).
pub type StatVerticalU8 = fn(&[&[u8]], &[&[u8]], usize, &mut StatLine);
/// [`StatVerticalU8`] of two consecutive output rows in one pass: 18 rows in, the first line from
/// rows 0..17, the second from rows 1..18 (the windows share 16 rows).
pub type StatVerticalU8x2 = fn(&[&[u8]], &[&[u8]], usize, [&mut StatLine; 2]);
/// Vertical statistic pass of 16-bit samples ([`scalar::stat_vertical_u16`]).
pub type StatVerticalU16 =
    fn(&[&[u16]], &[&[u16]], &[u16], StatShifts, usize, &mut StatLine, &mut WideAcc);
/// [`StatVerticalU16`] of two consecutive output rows in one pass: `taps + 1` rows in, the first
/// line from rows `0..taps`, the second from rows `1..=taps`.
pub type StatVerticalU16x2 =
    fn(&[&[u16]], &[&[u16]], &[u16], StatShifts, usize, [&mut StatLine; 2], &mut WideAcc);
/// Horizontal statistic pass ([`scalar::stat_horizontal`]).
pub type StatHorizontal =
    fn(&StatLine, &[u16], usize, f64, &[u16; LOG2_TABLE_LEN], &mut WideAcc, &mut VifSums);
/// The whole statistic of two consecutive rows of 8-bit scale 0 in one kernel: the vertical pass
/// of [`StatVerticalU8x2`] (18 rows in), written straight into 16-bit line copies
/// ([`WideAcc::rows16`]) instead of the 32-bit lines, their padding, and the horizontal pass of
/// [`StatHorizontal`] on each, the terms of both rows added to the sums. `false`, with nothing
/// added, where the kernel cannot take the row (the caller then runs the passes).
pub type StatRowsU8x2 =
    fn(&[&[u8]], &[&[u8]], usize, f64, &[u16; LOG2_TABLE_LEN], &mut WideAcc, &mut VifSums) -> bool;
/// Vertical downsampling pass ([`scalar::subsample_vertical`]).
pub type SubsampleVertical<T> =
    fn(&[&[T]], &[&[T]], &[u16], u32, u32, usize, &mut [u16], &mut [u16]);
/// Horizontal downsampling pass ([`scalar::subsample_horizontal`]).
pub type SubsampleHorizontal = fn(&[u16], &[u16], &[u16], usize, &mut [u16], &mut [u16]);

/// Horizontal statistic pass of ladder scoring's first rendition: [`StatHorizontal`], also
/// writing each pixel's reference side to the row; `false` where it cannot run.
pub type StatHorizontalStore = fn(
    &StatLine,
    &[u16],
    usize,
    f64,
    &[u16; LOG2_TABLE_LEN],
    &mut WideAcc,
    &mut VifSums,
    RefRowMut<'_>,
) -> bool;
/// Horizontal statistic pass of ladder scoring's other renditions: the reference side read from
/// a row a [`StatHorizontalStore`] pass wrote, only the distorted-dependent sums added; `false`
/// where it cannot run.
pub type StatHorizontalDis = fn(
    &StatLine,
    &[u16],
    usize,
    f64,
    &[u16; LOG2_TABLE_LEN],
    &mut WideAcc,
    &mut VifSums,
    RefRow<'_>,
) -> bool;

/// One row of a scale's reference side, shared by a ladder's renditions: each pixel's
/// horizontally filtered mean `mu1` and its `sigma1_sq`, in the order of the kernels that wrote
/// it (both slices at least the row's width rounded up to [`SHARED_ROW_ALIGN`]).
#[derive(Clone, Copy)]
pub struct RefRow<'a> {
    /// Filtered reference means.
    pub mu1: &'a [u32],
    /// Reference variances (`sigma1_sq`).
    pub s1: &'a [i32],
}

/// A [`RefRow`] being written.
pub struct RefRowMut<'a> {
    /// Filtered reference means.
    pub mu1: &'a mut [u32],
    /// Reference variances (`sigma1_sq`).
    pub s1: &'a mut [i32],
}

/// Granularity of a shared row's length (the kernels write whole groups of 32 columns).
pub const SHARED_ROW_ALIGN: usize = 32;

/// The kernels that split a scale's statistic into its reference side, computed once per frame
/// of a ladder, and the distorted side, computed per rendition (ladder scoring,
/// [`crate::ladder`]); levels without them score each rendition whole.
#[derive(Clone, Copy)]
pub struct SplitKernels {
    /// [`StatVerticalU8`] writing only the distorted side's lines (`mu2`, `yy`, `xy`).
    pub stat_vertical_u8_dis: StatVerticalU8,
    /// [`StatVerticalU8x2`] writing only the distorted side's lines, where the level has it.
    pub stat_vertical_u8_dis_x2: Option<StatVerticalU8x2>,
    /// [`StatVerticalU16`] writing only the distorted side's lines (`mu2`, `yy`, `xy`).
    pub stat_vertical_u16_dis: StatVerticalU16,
    /// [`StatVerticalU16x2`] writing only the distorted side's lines, where the level has it.
    pub stat_vertical_u16_dis_x2: Option<StatVerticalU16x2>,
    /// See [`StatHorizontalStore`].
    pub stat_horizontal_store: StatHorizontalStore,
    /// See [`StatHorizontalDis`].
    pub stat_horizontal_dis: StatHorizontalDis,
    /// Largest gain limit the split passes take.
    pub max_gain_limit: f64,
}

/// The VIF row kernels of one CPU level: the scalar specification, with the entries a SIMD level
/// provides replaced (a level without its own kernel keeps the best lower one's).
///
/// With the `check_simd` feature every call through a SIMD entry is recomputed with the scalar
/// kernel and the outputs asserted equal.
#[derive(Clone, Copy)]
pub struct Kernels {
    level: CpuLevel,
    /// See [`StatVerticalU8`].
    pub stat_vertical_u8: StatVerticalU8,
    /// See [`StatVerticalU8x2`]; levels without it make two [`StatVerticalU8`] calls.
    pub stat_vertical_u8_x2: Option<StatVerticalU8x2>,
    /// See [`StatVerticalU16`].
    pub stat_vertical_u16: StatVerticalU16,
    /// See [`StatVerticalU16x2`]; levels without it make two [`StatVerticalU16`] calls.
    pub stat_vertical_u16_x2: Option<StatVerticalU16x2>,
    /// See [`StatHorizontal`].
    pub stat_horizontal: StatHorizontal,
    /// See [`StatRowsU8x2`]; levels without it run the passes.
    pub stat_rows_u8_x2: Option<StatRowsU8x2>,
    /// See [`SubsampleVertical`].
    pub subsample_vertical_u8: SubsampleVertical<u8>,
    /// See [`SubsampleVertical`].
    pub subsample_vertical_u16: SubsampleVertical<u16>,
    /// See [`SubsampleHorizontal`].
    pub subsample_horizontal: SubsampleHorizontal,
    /// The split statistic of ladder scoring, at levels that have it.
    pub split: Option<SplitKernels>,
}

impl Kernels {
    /// The scalar specification kernels.
    pub const SCALAR: Kernels = Kernels {
        level: CpuLevel::Scalar,
        stat_vertical_u8: scalar::stat_vertical_u8,
        stat_vertical_u8_x2: None,
        stat_vertical_u16: scalar::stat_vertical_u16,
        stat_vertical_u16_x2: None,
        stat_horizontal: scalar::stat_horizontal,
        stat_rows_u8_x2: None,
        subsample_vertical_u8: scalar::subsample_vertical::<u8>,
        subsample_vertical_u16: scalar::subsample_vertical::<u16>,
        subsample_horizontal: scalar::subsample_horizontal,
        split: Some(scalar::SPLIT),
    };

    /// The best kernels at or below `level` that this machine runs.
    pub fn for_level(level: CpuLevel) -> Self {
        #[allow(unused_mut)]
        let mut k = Self::SCALAR;
        #[cfg(target_arch = "x86_64")]
        {
            if level >= CpuLevel::Avx2 {
                x86_64_avx2::install(&mut k);
            }
            if level >= CpuLevel::Avx2Vnni {
                x86_64_avx2_vnni::install(&mut k);
            }
            if level >= CpuLevel::Avx512 {
                x86_64_avx512::install(&mut k);
            }
            if level >= CpuLevel::Avx512Vnni {
                x86_64_avx512_vnni::install(&mut k);
            }
        }
        k.level = level;
        k
    }

    /// The level these kernels were chosen for.
    pub fn level(&self) -> CpuLevel {
        self.level
    }

    fn stat_vertical_u8(&self, r: &[&[u8]], d: &[&[u8]], w: usize, line: &mut StatLine) {
        (self.stat_vertical_u8)(r, d, w, line);
        #[cfg(feature = "check_simd")]
        if self.level > CpuLevel::Scalar {
            let mut want = line.clone();
            scalar::stat_vertical_u8(r, d, w, &mut want);
            assert_line_eq(line, &want, w, "stat_vertical_u8");
        }
    }

    /// The vertical pass of one step of the row loop ([`row_pair`]): with 17 rows in `r`/`d`,
    /// row `i` into `lines[0]`; with 18 (the first 17 row `i`'s window), rows `i` and `i + 1`
    /// into both lines, by the level's two-row kernel where it has one, else two calls. `split`:
    /// the distorted side only.
    fn stat_vertical_u8_pair(
        &self,
        split: Option<SplitKernels>,
        r: &[&[u8]],
        d: &[&[u8]],
        w: usize,
        lines: [&mut StatLine; 2],
    ) {
        let taps = FILTER_S0.len();
        if r.len() == taps {
            let [l0, _] = lines;
            return match split {
                Some(sk) => (sk.stat_vertical_u8_dis)(r, d, w, l0),
                None => self.stat_vertical_u8(r, d, w, l0),
            };
        }
        let (one, two) = match split {
            Some(sk) => (sk.stat_vertical_u8_dis, sk.stat_vertical_u8_dis_x2),
            None => (self.stat_vertical_u8, self.stat_vertical_u8_x2),
        };
        #[cfg(feature = "check_simd")]
        let want = |k: usize| {
            let mut l = StatLine::new(w);
            scalar::stat_vertical_u8(&r[k..k + taps], &d[k..k + taps], w, &mut l);
            l
        };
        let [l0, l1] = lines;
        match two {
            Some(f) => f(r, d, w, [&mut *l0, &mut *l1]),
            None => {
                one(&r[..taps], &d[..taps], w, l0);
                one(&r[1..], &d[1..], w, l1);
            }
        }
        #[cfg(feature = "check_simd")]
        if self.level > CpuLevel::Scalar {
            for (k, got) in [&*l0, &*l1].into_iter().enumerate() {
                let what = format!("stat_vertical_u8_x2 line {k}");
                assert_lines_eq(got, &want(k), w, &what, split.is_some());
            }
        }
    }

    /// [`Kernels::stat_vertical_u8_pair`] for 16-bit samples: `taps` rows (one line) or
    /// `taps + 1` (two).
    #[allow(clippy::too_many_arguments)]
    fn stat_vertical_u16_pair(
        &self,
        split: Option<SplitKernels>,
        r: &[&[u16]],
        d: &[&[u16]],
        filt: &[u16],
        sh: StatShifts,
        w: usize,
        lines: [&mut StatLine; 2],
        acc: &mut WideAcc,
    ) {
        let taps = filt.len();
        if r.len() == taps {
            let [l0, _] = lines;
            return match split {
                Some(sk) => (sk.stat_vertical_u16_dis)(r, d, filt, sh, w, l0, acc),
                None => self.stat_vertical_u16(r, d, filt, sh, w, l0, acc),
            };
        }
        let (one, two) = match split {
            Some(sk) => (sk.stat_vertical_u16_dis, sk.stat_vertical_u16_dis_x2),
            None => (self.stat_vertical_u16, self.stat_vertical_u16_x2),
        };
        let [l0, l1] = lines;
        match two {
            Some(f) => f(r, d, filt, sh, w, [&mut *l0, &mut *l1], acc),
            None => {
                one(&r[..taps], &d[..taps], filt, sh, w, l0, acc);
                one(&r[1..], &d[1..], filt, sh, w, l1, acc);
            }
        }
        #[cfg(feature = "check_simd")]
        if self.level > CpuLevel::Scalar {
            for (k, got) in [&*l0, &*l1].into_iter().enumerate() {
                let mut want = StatLine::new(w);
                let (rs, ds) = (&r[k..k + taps], &d[k..k + taps]);
                scalar::stat_vertical_u16(rs, ds, filt, sh, w, &mut want, &mut acc.clone());
                let what = format!("stat_vertical_u16_x2 line {k}");
                assert_lines_eq(got, &want, w, &what, split.is_some());
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn stat_vertical_u16(
        &self,
        r: &[&[u16]],
        d: &[&[u16]],
        filt: &[u16],
        sh: StatShifts,
        w: usize,
        line: &mut StatLine,
        acc: &mut WideAcc,
    ) {
        (self.stat_vertical_u16)(r, d, filt, sh, w, line, acc);
        #[cfg(feature = "check_simd")]
        if self.level > CpuLevel::Scalar {
            let mut want = line.clone();
            scalar::stat_vertical_u16(r, d, filt, sh, w, &mut want, &mut acc.clone());
            assert_line_eq(line, &want, w, "stat_vertical_u16");
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn stat_horizontal(
        &self,
        line: &StatLine,
        filt: &[u16],
        w: usize,
        gain_limit: f64,
        log2: &[u16; LOG2_TABLE_LEN],
        acc: &mut WideAcc,
        sums: &mut VifSums,
    ) {
        #[cfg(feature = "check_simd")]
        let before = *sums;
        (self.stat_horizontal)(line, filt, w, gain_limit, log2, acc, sums);
        #[cfg(feature = "check_simd")]
        if self.level > CpuLevel::Scalar {
            let mut want = before;
            scalar::stat_horizontal(line, filt, w, gain_limit, log2, &mut acc.clone(), &mut want);
            assert_eq!(*sums, want, "check_simd: vif stat_horizontal, w {w}");
        }
    }

    /// Two rows' statistic by the level's [`StatRowsU8x2`] kernel (18 rows in `r`/`d`); `false`,
    /// with nothing added, where the level has none or it cannot take the row.
    #[allow(clippy::too_many_arguments)]
    fn stat_rows_u8_x2(
        &self,
        r: &[&[u8]],
        d: &[&[u8]],
        w: usize,
        gain_limit: f64,
        log2: &[u16; LOG2_TABLE_LEN],
        acc: &mut WideAcc,
        sums: &mut VifSums,
    ) -> bool {
        let Some(f) = self.stat_rows_u8_x2 else {
            return false;
        };
        #[cfg(feature = "check_simd")]
        let before = *sums;
        if !f(r, d, w, gain_limit, log2, acc, sums) {
            return false;
        }
        #[cfg(feature = "check_simd")]
        {
            let mut want = before;
            let taps = FILTER_S0.len();
            for k in 0..2 {
                let mut l = StatLine::new(w);
                scalar::stat_vertical_u8(&r[k..k + taps], &d[k..k + taps], w, &mut l);
                scalar::pad_stat_line(&mut l, w, taps / 2);
                let mut a = WideAcc::new(w);
                scalar::stat_horizontal(&l, &FILTER_S0, w, gain_limit, log2, &mut a, &mut want);
            }
            assert_eq!(*sums, want, "check_simd: vif stat_rows_u8_x2, w {w}");
        }
        true
    }

    #[allow(clippy::too_many_arguments)]
    fn subsample_vertical<T: SubsampleSample>(
        &self,
        r: &[&[T]],
        d: &[&[T]],
        filt: &[u16],
        round: u32,
        shift: u32,
        w: usize,
        out_r: &mut [u16],
        out_d: &mut [u16],
    ) {
        (T::pick(self))(r, d, filt, round, shift, w, out_r, out_d);
        #[cfg(feature = "check_simd")]
        if self.level > CpuLevel::Scalar {
            let (mut wr, mut wd) = (out_r.to_vec(), out_d.to_vec());
            scalar::subsample_vertical(r, d, filt, round, shift, w, &mut wr, &mut wd);
            let cols = tables::PAD..tables::PAD + w;
            assert_eq!(
                out_r[cols.clone()],
                wr[cols.clone()],
                "check_simd: vif subsample_vertical"
            );
            assert_eq!(
                out_d[cols.clone()],
                wd[cols],
                "check_simd: vif subsample_vertical"
            );
        }
    }

    fn subsample_horizontal(
        &self,
        lr: &[u16],
        ld: &[u16],
        filt: &[u16],
        w: usize,
        out_r: &mut [u16],
        out_d: &mut [u16],
    ) {
        (self.subsample_horizontal)(lr, ld, filt, w, out_r, out_d);
        #[cfg(feature = "check_simd")]
        if self.level > CpuLevel::Scalar {
            let (mut wr, mut wd) = (out_r.to_vec(), out_d.to_vec());
            scalar::subsample_horizontal(lr, ld, filt, w, &mut wr, &mut wd);
            assert_eq!(out_r, &wr[..], "check_simd: vif subsample_horizontal");
            assert_eq!(out_d, &wd[..], "check_simd: vif subsample_horizontal");
        }
    }
}

/// Whether the folded downsampling passes take these taps: `2 half + 1` of them, symmetric
/// about the centre, each below 2^15 (so a folded 8-bit pair, at most 510, times a tap pair stays
/// within a `madd`'s exact `i32`).
#[cfg(target_arch = "x86_64")]
fn fold_taps_ok(filt: &[u16], half: usize) -> bool {
    filt.len() == 2 * half + 1
        && (0..half).all(|k| filt[k] == filt[2 * half - k])
        && filt.iter().all(|&f| f < 1 << 15)
}

/// The `i16` tap pairs of [`fold_taps_ok`]'s folded rows `0..=half` (`(f[2p], f[2p + 1])` in
/// each 32-bit lane, `f[half + 1]` taken as 0), 9 of them (the rest zero).
#[cfg(target_arch = "x86_64")]
fn fold_tap_pairs(filt: &[u16], half: usize) -> [i32; 9] {
    let tap = |k: usize| if k <= half { filt[k] as i32 } else { 0 };
    std::array::from_fn(|p| tap(2 * p + 1) << 16 | tap(2 * p))
}

/// Whether the 16-bit vertical pass may run on `madd`s (the SIMD peers'
/// `stat_vertical_u16_madd`): every tap an `i16`, each tap pair `(2i, 2i + 1)` summing below
/// 2^16 (no `madd` lane of offset samples overflows), all taps summing to at most 2^16 (every
/// filtered 16-bit value, and half of a square, stays below 2^32), and a square rounding that
/// drops at most 16 bits (`sq_shift <= 16`, `sq_round < 2^sq_shift`), so the split sums
/// recombine in 32 bits.
#[cfg(target_arch = "x86_64")]
fn madd_vertical_ok(filt: &[u16], sh: StatShifts) -> bool {
    filt.iter().all(|&f| f < 1 << 15)
        && filt
            .chunks(2)
            .all(|p| p.iter().map(|&f| f as u32).sum::<u32>() < 1 << 16)
        && filt.iter().map(|&f| f as u32).sum::<u32>() <= 1 << 16
        && sh.sq_shift <= 16
        && sh.sq_round < 1 << sh.sq_shift
}

/// Whether the two-row 16-bit vertical passes may run on `madd`s: [`madd_vertical_ok`], an odd
/// number of taps (so `taps + 1` rows make whole pairs), and the second line's tap pairs
/// `(2i - 1, 2i)` each summing below 2^16 too.
#[cfg(target_arch = "x86_64")]
fn madd_vertical_x2_ok(filt: &[u16], sh: StatShifts) -> bool {
    let f = |k: usize| filt.get(k).map_or(0, |&f| f as u32);
    let odd_ok = (0..filt.len().div_ceil(2))
        .all(|i| (if i == 0 { 0 } else { f(2 * i - 1) }) + f(2 * i) < 1 << 16);
    madd_vertical_ok(filt, sh) && odd_ok && filt.len() % 2 == 1
}

#[cfg(feature = "check_simd")]
fn assert_line_eq(got: &StatLine, want: &StatLine, w: usize, what: &str) {
    assert_lines_eq(got, want, w, what, false);
}

/// [`assert_line_eq`], or with `dis_only` the distorted side's lines alone (`mu2`, `yy`, `xy`).
#[cfg(feature = "check_simd")]
fn assert_lines_eq(got: &StatLine, want: &StatLine, w: usize, what: &str, dis_only: bool) {
    let c = tables::PAD..tables::PAD + w;
    for (name, g, x, reference) in [
        ("mu1", &got.mu1, &want.mu1, true),
        ("mu2", &got.mu2, &want.mu2, false),
        ("xx", &got.xx, &want.xx, true),
        ("yy", &got.yy, &want.yy, false),
        ("xy", &got.xy, &want.xy, false),
    ] {
        if !(dis_only && reference) {
            assert_eq!(g[c.clone()], x[c.clone()], "check_simd: vif {what} {name}");
        }
    }
}

/// Sample types the downsampling reads, with their entry of [`Kernels`].
pub trait SubsampleSample: Copy + Into<u32> {
    /// This type's vertical downsampling kernel.
    fn pick(k: &Kernels) -> SubsampleVertical<Self>;
}

impl SubsampleSample for u8 {
    fn pick(k: &Kernels) -> SubsampleVertical<u8> {
        k.subsample_vertical_u8
    }
}

impl SubsampleSample for u16 {
    fn pick(k: &Kernels) -> SubsampleVertical<u16> {
        k.subsample_vertical_u16
    }
}

/// A VIF instance: the options and all scratch, sized for one picture format.
pub struct Vif {
    w: usize,
    h: usize,
    skip_scale0: bool,
    ctx: StatCtx,
    /// Scales 1..=3.
    levels: Vec<Level>,
}

/// What the statistic passes run with: the kernels, the options they read and the line
/// scratch (apart from the scales' planes, which the passes read while writing the next
/// scale's).
struct StatCtx {
    bpc: u8,
    gain_limit: f64,
    kernels: Kernels,
    log2: &'static [u16; LOG2_TABLE_LEN],
    line: StatLine,
    /// The second line of the two-row vertical passes.
    line2: StatLine,
    wide: WideAcc,
    /// The downsampling's lines.
    down: DownLines,
}

/// Per-scale numerator and denominator, as libvmaf's `VifScore` (`float`).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct NumDen {
    /// Numerator.
    pub num: f32,
    /// Denominator.
    pub den: f32,
}

impl Vif {
    /// Allocates an instance for `width x height` pictures of `bpc` bits (8..=16).
    pub fn new(
        width: usize,
        height: usize,
        bpc: u8,
        gain_limit: f64,
        skip_scale0: bool,
    ) -> Result<Self> {
        if !(8..=16).contains(&bpc) {
            return Err(Error::Unsupported(format!(
                "vif: bit depth {bpc} (supported: 8 to 16)"
            )));
        }
        if width < MIN_SIZE || height < MIN_SIZE {
            return Err(Error::Unsupported(format!(
                "vif: picture size {width}x{height} (minimum {MIN_SIZE}x{MIN_SIZE})"
            )));
        }
        let mut levels = Vec::with_capacity(SCALES - 1);
        let (mut w, mut h) = (width, height);
        for _ in 1..SCALES {
            w /= 2;
            h /= 2;
            levels.push(Level {
                reference: vec![0; w * h],
                distorted: vec![0; w * h],
                w,
                h,
            });
        }
        Ok(Vif {
            w: width,
            h: height,
            skip_scale0,
            ctx: StatCtx {
                bpc,
                gain_limit,
                kernels: Kernels::for_level(cpu_level()),
                log2: tables::log2_table(),
                line: StatLine::new(width),
                line2: StatLine::new(width),
                down: DownLines::new(width),
                wide: WideAcc::new(width),
            },
            levels,
        })
    }

    /// Uses the kernels of `level` (at most what this machine runs) instead of
    /// [`cpu_level`]'s.
    pub fn with_cpu_level(mut self, level: CpuLevel) -> Self {
        self.ctx.kernels = Kernels::for_level(level.min(cpu_level()));
        self
    }

    /// Computes the four scales' `(num, den)` for one frame; scale 0 is left at zero when
    /// `vif_skip_scale0` is set.
    pub fn compute(&mut self, reference: &Plane<'_>, distorted: &Plane<'_>) -> Result<[NumDen; 4]> {
        self.compute_with(reference, distorted, &mut Side::Own)
    }

    /// [`Vif::compute`] for one rendition of a ladder ([`crate::ladder`]): the reference side
    /// of every scale (each pixel's filtered mean and variance, the denominator's sums) is
    /// computed by the first instance to reach the frame, with its own full statistic, into
    /// `shared`; the others read it and compute only their distorted side (or, reaching it while
    /// it is being filled, compute whole). The values equal
    /// [`Vif::compute`]'s. Without split kernels at this CPU level (or with a gain limit they do
    /// not take) every instance computes its whole statistic.
    pub fn compute_shared(
        &mut self,
        reference: &Plane<'_>,
        distorted: &Plane<'_>,
        shared: &SharedReference,
    ) -> Result<[NumDen; 4]> {
        let splits = self
            .ctx
            .kernels
            .split
            .is_some_and(|k| (0.0..=k.max_gain_limit).contains(&self.ctx.gain_limit));
        if !splits {
            return self.compute(reference, distorted);
        }
        let key = self.shared_key();
        let (w, h) = (self.w, self.h);
        let mut own = None;
        // A rendition that finds another filling the state computes whole rather than wait
        // for a whole statistic's time.
        let state = shared.get_or_skip(
            || SharedVif::new(key, w, h),
            |st| {
                own = Some(self.compute_with(reference, distorted, &mut Side::Store(st))?);
                Ok(())
            },
        )?;
        if let Some(own) = own {
            return Ok(own);
        }
        let Some(state) = state else {
            return self.compute(reference, distorted);
        };
        if state.key != key {
            return Err(Error::Internal(
                "vif: a shared reference state computed with other options".into(),
            ));
        }
        self.compute_with(reference, distorted, &mut Side::Load(&state))
    }

    /// What the reference side depends on besides the reference picture.
    fn shared_key(&self) -> SharedKey {
        (
            self.w,
            self.h,
            self.ctx.bpc,
            self.skip_scale0,
            self.ctx.kernels.level,
        )
    }

    fn compute_with(
        &mut self,
        reference: &Plane<'_>,
        distorted: &Plane<'_>,
        side: &mut Side<'_>,
    ) -> Result<[NumDen; 4]> {
        for (what, p) in [("reference", reference), ("distorted", distorted)] {
            if p.width != self.w || p.height != self.h {
                return Err(Error::Mismatch(format!(
                    "vif: {what} luma is {}x{}, expected {}x{}",
                    p.width, p.height, self.w, self.h
                )));
            }
        }
        let mut sums = [VifSums::default(); SCALES];
        // Whether the pass downsamples each scale inside the statistic of the scale before (its
        // rows still in cache) rather than in a pass of its own.
        let fuse = self.fuses_downsampling(side);
        // Scale 0's downsampling rounds by the input's depth.
        let (round, shift) = (1 << (self.ctx.bpc - 1), self.ctx.bpc as u32);
        let down0 = |out| Down {
            filt: FILTERS[1],
            round,
            shift,
            out,
        };
        match (reference.samples, distorted.samples) {
            (Samples::U8(r), Samples::U8(d)) if self.ctx.bpc == 8 => {
                let r = Src::new(r, reference.stride, self.w, self.h);
                let d = Src::new(d, distorted.stride, self.w, self.h);
                if !self.skip_scale0 {
                    let down = fuse.then(|| down0(&mut self.levels[0]));
                    sums[0] = statistic_u8(&mut self.ctx, r, d, side, down)?;
                }
                if !fuse {
                    self.downsample_scale0(r, d, round, shift, side);
                }
            }
            (Samples::U16(r), Samples::U16(d)) if self.ctx.bpc > 8 => {
                let r = Src::new(r, reference.stride, self.w, self.h);
                let d = Src::new(d, distorted.stride, self.w, self.h);
                if !self.skip_scale0 {
                    let down = fuse.then(|| down0(&mut self.levels[0]));
                    sums[0] = statistic_u16(&mut self.ctx, r, d, 0, side, down)?;
                }
                if !fuse {
                    self.downsample_scale0(r, d, round, shift, side);
                }
            }
            _ => {
                return Err(Error::Mismatch(format!(
                    "vif: {}-bit stream given samples of another width",
                    self.ctx.bpc
                )))
            }
        }
        for (scale, sum) in sums.iter_mut().enumerate().skip(1) {
            if scale > 1 && !fuse {
                self.downsample_level(scale, side);
            }
            let (lo, hi) = self.levels.split_at_mut(scale);
            let lv = &lo[scale - 1];
            let down = hi.first_mut().filter(|_| fuse).map(|out| Down {
                filt: FILTERS[scale + 1],
                round: 32768,
                shift: 16,
                out,
            });
            // A `Load` pass has no reference planes of its own: they are the state's.
            let r = match side {
                Side::Load(st) => {
                    let st: &SharedVif = st;
                    Src::new(&st.scales[scale].reference, lv.w, lv.w, lv.h)
                }
                _ => lv.src_ref(),
            };
            let d = lv.src_dis();
            *sum = statistic_u16(&mut self.ctx, r, d, scale, side, down)?;
        }
        if let Side::Store(st) = side {
            // Hand the downsampled reference planes to the state (the other renditions read
            // them); the state's previous buffers become this instance's, overwritten before
            // it reads them again.
            for (lv, sc) in self.levels.iter_mut().zip(&mut st.scales[1..]) {
                std::mem::swap(&mut lv.reference, &mut sc.reference);
            }
        }
        let mut out = [NumDen::default(); SCALES];
        for (s, (o, sum)) in out.iter_mut().zip(&sums).enumerate() {
            if s == 0 && self.skip_scale0 {
                continue;
            }
            let (num, den) = sum.num_den();
            *o = NumDen { num, den };
        }
        Ok(out)
    }

    /// Whether a pass downsamples inside the statistics ([`Down`]): a whole statistic of both
    /// planes, that is scale 0 computed and not a ladder's `Load` pass (which downsamples the
    /// distorted plane alone, two rows per kernel call).
    fn fuses_downsampling(&self, side: &Side<'_>) -> bool {
        !self.skip_scale0 && !matches!(side, Side::Load(_))
    }

    /// Filters and decimates the input planes into scale 1.
    fn downsample_scale0<T: SubsampleSample>(
        &mut self,
        r: Src<'_, T>,
        d: Src<'_, T>,
        round: u32,
        shift: u32,
        side: &Side<'_>,
    ) {
        let lv = &mut self.levels[0];
        downsample_side(
            &self.ctx.kernels,
            r,
            d,
            FILTERS[1],
            round,
            shift,
            &mut self.ctx.down,
            lv,
            side,
        );
    }

    /// Filters and decimates scale `scale - 1` (>= 1) into `scale`.
    fn downsample_level(&mut self, scale: usize, side: &Side<'_>) {
        let (lo, hi) = self.levels.split_at_mut(scale - 1);
        let src = &lo[scale - 2];
        let dst = &mut hi[0];
        // (A `Load` pass downsamples the distorted plane alone and never reads `r`.)
        downsample_side(
            &self.ctx.kernels,
            src.src_ref(),
            src.src_dis(),
            FILTERS[scale],
            32768,
            16,
            &mut self.ctx.down,
            dst,
            side,
        );
    }
}

/// Downsamples into `lv` as the pass `side` needs: both planes (`Own`, `Store`: its reference
/// planes go to the state once the statistic is done), or the distorted plane alone, half the
/// work, the reference being the state's (`Load`).
#[allow(clippy::too_many_arguments)]
fn downsample_side<T: SubsampleSample>(
    kern: &Kernels,
    r: Src<'_, T>,
    d: Src<'_, T>,
    filt: &'static [u16],
    round: u32,
    shift: u32,
    lines: &mut DownLines,
    lv: &mut Level,
    side: &Side<'_>,
) {
    if let Side::Load(_) = side {
        // The level's own reference plane is only scratch here.
        let (out, spare) = (&mut lv.distorted, &mut lv.reference);
        downsample_distorted(kern, d, filt, round, shift, lines, out, spare);
        return;
    }
    // Filtered, and the even rows and columns kept (`subsample_rd_*`, `decimate_and_pad`).
    let mut down = Down {
        filt,
        round,
        shift,
        out: lv,
    };
    for i in (0..r.h).step_by(2) {
        down.row(kern, r, d, i, lines);
    }
}

impl Level {
    fn src_ref(&self) -> Src<'_, u16> {
        Src::new(&self.reference, self.w, self.w, self.h)
    }
    fn src_dis(&self) -> Src<'_, u16> {
        Src::new(&self.distorted, self.w, self.w, self.h)
    }
}

/// A strided plane of one scale, read through libvmaf's row mirroring.
#[derive(Clone, Copy)]
struct Src<'a, T> {
    data: &'a [T],
    stride: usize,
    w: usize,
    h: usize,
}

impl<'a, T> Src<'a, T> {
    fn new(data: &'a [T], stride: usize, w: usize, h: usize) -> Self {
        Src { data, stride, w, h }
    }

    /// Fills `out[..taps]` with the rows `center - taps/2 ..= center + taps/2`, mirrored.
    fn rows(&self, center: usize, taps: usize, out: &mut [&'a [T]; MAX_TAPS]) {
        self.window(center as isize - (taps / 2) as isize, &mut out[..taps]);
    }

    /// Fills `out` with the rows from `top` on, mirrored.
    fn window(&self, top: isize, out: &mut [&'a [T]]) {
        for (k, slot) in out.iter_mut().enumerate() {
            let y = mirror(top + k as isize, self.h);
            let at = y * self.stride;
            *slot = &self.data[at..at + self.w];
        }
    }
}

/// The row libvmaf's top/bottom padding (`pad_top_and_bottom`) leaves at index `y` of a plane of
/// `h >= 2` rows: rows above are copies of `-y`, rows below of `2(h-1) - y`, applied repeatedly
/// (the padding copies rows in an order that makes deeper pad rows copies of earlier pad rows).
fn mirror(mut y: isize, h: usize) -> usize {
    let h = h as isize;
    if h < 2 {
        return 0;
    }
    loop {
        if y < 0 {
            y = -y;
        } else if y >= h {
            y = 2 * (h - 1) - y;
        } else {
            return y as usize;
        }
    }
}

/// Scale 0's statistic of 8-bit planes; with `down` also the downsampling into scale 1, row by
/// row.
fn statistic_u8(
    ctx: &mut StatCtx,
    r: Src<'_, u8>,
    d: Src<'_, u8>,
    side: &mut Side<'_>,
    mut down: Option<Down<'_>>,
) -> Result<VifSums> {
    let StatCtx {
        gain_limit,
        kernels: k,
        log2,
        line,
        line2,
        wide,
        down: sub,
        ..
    } = ctx;
    let (gain_limit, log2) = (*gain_limit, *log2);
    let taps = FILTERS[0].len();
    let mut sums = VifSums::default();
    let mut rr: [&[u8]; MAX_TAPS + 1] = [&[]; MAX_TAPS + 1];
    let mut dr: [&[u8]; MAX_TAPS + 1] = [&[]; MAX_TAPS + 1];
    let mut i = 0;
    while i < r.h {
        let (n, split) = row_pair(side, k, (&r, &d), i, taps, (&mut rr, &mut dr));
        let (rs, ds) = (&rr[..taps + n - 1], &dr[..taps + n - 1]);
        // A rendition alone takes both rows in one kernel where the level has it.
        let joined = n == 2
            && matches!(side, Side::Own)
            && k.stat_rows_u8_x2(rs, ds, r.w, gain_limit, log2, wide, &mut sums);
        if !joined {
            k.stat_vertical_u8_pair(split, rs, ds, r.w, [&mut *line, &mut *line2]);
            for (row, l) in [(i, &mut *line), (i + 1, &mut *line2)].into_iter().take(n) {
                scalar::pad_stat_line(l, r.w, taps / 2);
                side.horizontal(
                    k, 0, row, l, FILTERS[0], r.w, gain_limit, log2, wide, &mut sums,
                )?;
            }
        }
        if let Some(down) = &mut down {
            down.row(k, r, d, i, sub);
        }
        i += n;
    }
    side.finish(0, &mut sums);
    Ok(sums)
}

/// The statistic of one scale from 16-bit samples (`vif_statistic_16`); with `down` also the
/// downsampling of these planes into the next scale, row by row.
fn statistic_u16(
    ctx: &mut StatCtx,
    r: Src<'_, u16>,
    d: Src<'_, u16>,
    scale: usize,
    side: &mut Side<'_>,
    mut down: Option<Down<'_>>,
) -> Result<VifSums> {
    let StatCtx {
        bpc,
        gain_limit,
        kernels: k,
        log2,
        line,
        line2,
        wide,
        down: sub,
    } = ctx;
    let (gain_limit, log2) = (*gain_limit, *log2);
    let filt = FILTERS[scale];
    let taps = filt.len();
    let sh = StatShifts::for_scale(scale, *bpc as u32);
    let mut sums = VifSums::default();
    let mut rr: [&[u16]; MAX_TAPS + 1] = [&[]; MAX_TAPS + 1];
    let mut dr: [&[u16]; MAX_TAPS + 1] = [&[]; MAX_TAPS + 1];
    let mut i = 0;
    while i < r.h {
        let (n, split) = row_pair(side, k, (&r, &d), i, taps, (&mut rr, &mut dr));
        let (rs, ds) = (&rr[..taps + n - 1], &dr[..taps + n - 1]);
        let lines = [&mut *line, &mut *line2];
        k.stat_vertical_u16_pair(split, rs, ds, filt, sh, r.w, lines, wide);
        for (row, l) in [(i, &mut *line), (i + 1, &mut *line2)].into_iter().take(n) {
            scalar::pad_stat_line(l, r.w, taps / 2);
            side.horizontal(
                k, scale, row, l, filt, r.w, gain_limit, log2, wide, &mut sums,
            )?;
        }
        if let Some(down) = &mut down {
            down.row(k, r, d, i, sub);
        }
        i += n;
    }
    side.finish(scale, &mut sums);
    Ok(sums)
}

/// The next step of a statistic's row loop at row `i`: two rows at a time (their windows share
/// all but one row each), the last row of an odd height alone
/// ([`Kernels::stat_vertical_u8_pair`]). Fills the first `taps + n - 1` entries of `rows` with
/// the mirrored input rows of both pictures and returns `n`, and the split kernels where the
/// pass is a `Load` (a ladder's later renditions leave out the reference side).
fn row_pair<'a, T>(
    side: &Side<'_>,
    k: &Kernels,
    (r, d): (&Src<'a, T>, &Src<'a, T>),
    i: usize,
    taps: usize,
    rows: (&mut [&'a [T]], &mut [&'a [T]]),
) -> (usize, Option<SplitKernels>) {
    let split = match side {
        Side::Load(_) => side.split_kernels(k),
        _ => None,
    };
    let n = (r.h - i).min(2);
    let top = i as isize - (taps / 2) as isize;
    r.window(top, &mut rows.0[..taps + n - 1]);
    d.window(top, &mut rows.1[..taps + n - 1]);
    (n, split)
}

/// Which pass a statistic runs: a rendition's whole statistic, or one of ladder scoring's split
/// passes over a frame's [`SharedVif`].
enum Side<'s> {
    /// The whole statistic, nothing shared.
    Own,
    /// The whole statistic, the reference side written to the state (the first rendition).
    Store(&'s mut SharedVif),
    /// The distorted side, the reference side read from the state (the other renditions).
    Load(&'s SharedVif),
}

impl Side<'_> {
    /// The split kernels a split pass runs (`None` for [`Side::Own`]).
    fn split_kernels(&self, k: &Kernels) -> Option<SplitKernels> {
        match self {
            Side::Own => None,
            _ => k.split,
        }
    }

    /// The horizontal pass of row `i` of `scale`.
    #[allow(clippy::too_many_arguments)]
    fn horizontal(
        &mut self,
        k: &Kernels,
        scale: usize,
        i: usize,
        line: &StatLine,
        filt: &[u16],
        w: usize,
        gain_limit: f64,
        log2: &[u16; LOG2_TABLE_LEN],
        wide: &mut WideAcc,
        sums: &mut VifSums,
    ) -> Result<()> {
        let split = self.split_kernels(k);
        let ran = match (self, split) {
            (Side::Own, _) => {
                k.stat_horizontal(line, filt, w, gain_limit, log2, wide, sums);
                true
            }
            (Side::Store(st), Some(sk)) => {
                let row = st.scales[scale].row_mut(i);
                (sk.stat_horizontal_store)(line, filt, w, gain_limit, log2, wide, sums, row)
            }
            (Side::Load(st), Some(sk)) => {
                let row = st.scales[scale].row(i);
                (sk.stat_horizontal_dis)(line, filt, w, gain_limit, log2, wide, sums, row)
            }
            _ => false,
        };
        if !ran {
            return Err(Error::Internal(format!(
                "vif: the split statistic of scale {scale} could not run"
            )));
        }
        Ok(())
    }

    /// Completes a scale's sums: a `Store` pass keeps the reference side's (the denominator's),
    /// a `Load` pass takes them.
    fn finish(&mut self, scale: usize, sums: &mut VifSums) {
        match self {
            Side::Own => {}
            Side::Store(st) => {
                let sc = &mut st.scales[scale];
                (sc.den_log, sc.den_non_log) = (sums.den_log, sums.den_non_log);
            }
            Side::Load(st) => {
                let sc = &st.scales[scale];
                (sums.den_log, sums.den_non_log) = (sc.den_log, sc.den_non_log);
            }
        }
    }
}

/// What a [`SharedVif`] depends on besides the reference picture: size, depth, whether scale 0
/// is computed, and the CPU level whose kernels wrote it (their order of the rows).
type SharedKey = (usize, usize, u8, bool, CpuLevel);

/// One frame's reference side of every scale, shared by the VIF instances of a ladder's
/// renditions ([`Vif::compute_shared`]); kept from frame to frame with its buffers.
struct SharedVif {
    key: SharedKey,
    scales: Vec<SharedScale>,
}

/// One scale of a [`SharedVif`]: its rows ([`RefRow`]) and the denominator's sums.
struct SharedScale {
    stride: usize,
    mu1: Vec<u32>,
    s1: Vec<i32>,
    /// The reference plane downsampled to this scale (`w x h`; empty at scale 0), which the
    /// other renditions' statistics read.
    reference: Vec<u16>,
    den_log: i64,
    den_non_log: i64,
}

impl SharedVif {
    fn new(key: SharedKey, w: usize, h: usize) -> Self {
        let (mut w, mut h) = (w, h);
        let mut scales = Vec::with_capacity(SCALES);
        for s in 0..SCALES {
            if s > 0 {
                (w, h) = (w / 2, h / 2);
            }
            let stride = w.div_ceil(SHARED_ROW_ALIGN) * SHARED_ROW_ALIGN;
            let (.., skip_scale0, _) = key;
            // Scale 0 holds nothing when it is skipped.
            let n = if s == 0 && skip_scale0 { 0 } else { stride * h };
            scales.push(SharedScale {
                stride,
                mu1: vec![0; n],
                s1: vec![0; n],
                reference: vec![0; if s == 0 { 0 } else { w * h }],
                den_log: 0,
                den_non_log: 0,
            });
        }
        SharedVif { key, scales }
    }
}

impl SharedScale {
    fn row(&self, i: usize) -> RefRow<'_> {
        let at = i * self.stride..(i + 1) * self.stride;
        RefRow {
            mu1: &self.mu1[at.clone()],
            s1: &self.s1[at],
        }
    }

    fn row_mut(&mut self, i: usize) -> RefRowMut<'_> {
        let at = i * self.stride..(i + 1) * self.stride;
        RefRowMut {
            mu1: &mut self.mu1[at.clone()],
            s1: &mut self.s1[at],
        }
    }
}

/// The downsampling of a scale's two planes into the next one, done by the statistic of that
/// scale a row at a time: after the statistic's rows `i` and `i + 1` (`i` even), output row
/// `i / 2`, whose input rows the statistic has just read (all within its window), so that they
/// come from cache rather than from memory in a pass of their own ([`downsample_side`] runs it
/// as such a pass where it cannot be joined).
struct Down<'a> {
    /// The next scale's filter.
    filt: &'static [u16],
    round: u32,
    shift: u32,
    /// The next scale's planes.
    out: &'a mut Level,
}

impl Down<'_> {
    /// Output row `i / 2` (if `i` is even and the row exists) of `r` and `d`; `line` is scratch.
    fn row<T: SubsampleSample>(
        &mut self,
        kern: &Kernels,
        r: Src<'_, T>,
        d: Src<'_, T>,
        i: usize,
        lines: &mut DownLines,
    ) {
        if i.is_multiple_of(2) && i / 2 < r.h / 2 {
            let (k, wo) = (i / 2, r.w / 2);
            let at = k * wo..(k + 1) * wo;
            let lv = &mut *self.out;
            let outs = (&mut lv.reference[at.clone()], &mut lv.distorted[at]);
            let (filt, round, shift) = (self.filt, self.round, self.shift);
            downsample_rows(kern, (r, i), (d, i), filt, round, shift, lines, outs);
        }
    }
}

/// The downsampling of the distorted plane alone: the kernels' two inputs take two output rows of
/// `d` at once, so it costs half a two-plane pass. `spare` (at least `w / 2` long) takes the
/// second row of an odd last pair.
#[allow(clippy::too_many_arguments)]
fn downsample_distorted<T: SubsampleSample>(
    kern: &Kernels,
    d: Src<'_, T>,
    filt: &[u16],
    round: u32,
    shift: u32,
    lines: &mut DownLines,
    out_d: &mut [u16],
    spare: &mut [u16],
) {
    let (wo, ho) = (d.w / 2, d.h / 2);
    for k in (0..ho).step_by(2) {
        let pair = k + 1 < ho;
        let b = (d, if pair { 2 * k + 2 } else { 2 * k });
        let outs = if pair {
            out_d[k * wo..(k + 2) * wo].split_at_mut(wo)
        } else {
            (&mut out_d[k * wo..(k + 1) * wo], &mut spare[..wo])
        };
        downsample_rows(kern, (d, 2 * k), b, filt, round, shift, lines, outs);
    }
}

/// One downsampled output row of each of two sources, given as (plane, centre row): the
/// kernels' vertical pass of both, padding, and their horizontal pass at the even columns.
#[allow(clippy::too_many_arguments)]
fn downsample_rows<T: SubsampleSample>(
    kern: &Kernels,
    (a, ya): (Src<'_, T>, usize),
    (b, yb): (Src<'_, T>, usize),
    filt: &[u16],
    round: u32,
    shift: u32,
    lines: &mut DownLines,
    (out_a, out_b): (&mut [u16], &mut [u16]),
) {
    let taps = filt.len();
    let mut ar: [&[T]; MAX_TAPS] = [&[]; MAX_TAPS];
    let mut br: [&[T]; MAX_TAPS] = [&[]; MAX_TAPS];
    a.rows(ya, taps, &mut ar);
    b.rows(yb, taps, &mut br);
    let (tmp_a, tmp_b) = (&mut lines.reference, &mut lines.distorted);
    kern.subsample_vertical(
        &ar[..taps],
        &br[..taps],
        filt,
        round,
        shift,
        a.w,
        tmp_a,
        tmp_b,
    );
    scalar::pad_line(tmp_a, a.w, taps / 2);
    scalar::pad_line(tmp_b, a.w, taps / 2);
    kern.subsample_horizontal(tmp_a, tmp_b, filt, a.w, out_a, out_b);
}

/// The extractor: four scores `num / den` (computed in `float`), scale 0 reported as 0 when
/// skipped.
struct VifExtractor {
    vif: Vif,
}

fn create(cfg: &ExtractorConfig) -> Result<Box<dyn Extractor>> {
    let f = &cfg.format;
    let vif = Vif::new(
        f.width,
        f.height,
        f.bpc,
        cfg.opts.f64("vif_enhn_gain_limit"),
        cfg.opts.bool("vif_skip_scale0"),
    )?;
    Ok(Box::new(VifExtractor { vif }))
}

impl VifExtractor {
    fn write(&self, nd: [NumDen; SCALES], out: &mut [f64]) {
        for (s, (o, v)) in out.iter_mut().zip(nd.iter()).enumerate() {
            *o = if s == 0 && self.vif.skip_scale0 {
                0.0
            } else {
                (v.num / v.den) as f64
            };
        }
    }
}

impl Extractor for VifExtractor {
    fn extract(&mut self, input: &FrameInput<'_>, out: &mut [f64]) -> Result<()> {
        let nd = self.vif.compute(&input.reference, &input.distorted)?;
        self.write(nd, out);
        Ok(())
    }

    fn extract_shared(
        &mut self,
        input: &FrameInput<'_>,
        shared: &SharedReference,
        out: &mut [f64],
    ) -> Result<()> {
        let nd = self
            .vif
            .compute_shared(&input.reference, &input.distorted, shared)?;
        self.write(nd, out);
        Ok(())
    }
}
