//! Integer motion (libvmaf's `motion` extractor): the blurred SAD between consecutive reference
//! frames, and its temporal stage producing `motion2` (min of the two neighbouring differences) and
//! `motion3` (blended motion2), emitted with a one-frame lag yet identical to libvmaf's values,
//! which libvmaf only computes at flush.
//!
//! The SAD kernel is chosen once per instance from [`crate::cpu::cpu_level`] ([`sad_kernel`]); the
//! `unsafe` of the SIMD peers stays in their arch modules.
#![deny(unsafe_code)]

pub mod scalar;
#[cfg(test)]
mod tests;
#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
mod x86_64_avx2;
#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
mod x86_64_avx512;

use super::options::{OptKind, OptSpec, OptValues};
use super::{Extractor, ExtractorConfig, ExtractorDef, FrameInput, Temporal};
use crate::cpu::{cpu_level, CpuLevel};
use crate::error::{Error, Result};
use crate::picture::Plane;
use std::collections::VecDeque;

/// Options, with libvmaf's names, aliases, defaults and ranges (integer_motion.c).
pub static OPTIONS: &[OptSpec] = &[
    OptSpec {
        name: "motion_force_zero",
        alias: Some("force_0"),
        kind: OptKind::Bool(false),
        feature_param: true,
    },
    OptSpec {
        name: "motion_blend_factor",
        alias: Some("mbf"),
        kind: OptKind::Double {
            default: 1.0,
            min: 0.0,
            max: 1.0,
        },
        feature_param: true,
    },
    OptSpec {
        name: "motion_blend_offset",
        alias: Some("mbo"),
        kind: OptKind::Double {
            default: 40.0,
            min: 0.0,
            max: 1000.0,
        },
        feature_param: true,
    },
    OptSpec {
        name: "motion_fps_weight",
        alias: Some("mfw"),
        kind: OptKind::Double {
            default: 1.0,
            min: 0.0,
            max: 5.0,
        },
        feature_param: true,
    },
    OptSpec {
        name: "motion_max_val",
        alias: Some("mmxv"),
        kind: OptKind::Double {
            default: 10000.0,
            min: 0.0,
            max: 10000.0,
        },
        feature_param: true,
    },
    OptSpec {
        name: "motion_five_frame_window",
        alias: Some("mffw"),
        kind: OptKind::Bool(false),
        feature_param: true,
    },
    OptSpec {
        name: "motion_moving_average",
        alias: Some("mma"),
        kind: OptKind::Bool(false),
        feature_param: true,
    },
    OptSpec {
        name: "debug",
        alias: None,
        kind: OptKind::Bool(false),
        feature_param: false,
    },
];

/// Registry entry.
pub static DEF: ExtractorDef = ExtractorDef {
    name: "motion",
    options: OPTIONS,
    spatial: &["VMAF_integer_feature_motion_sad_score"],
    temporal: &[
        "VMAF_integer_feature_motion2_score",
        "VMAF_integer_feature_motion3_score",
    ],
    needs_prev_ref: true,
    reference_only: true,
    create,
    create_temporal: Some(create_temporal),
    ..ExtractorDef::DEFAULTS
};

/// The blurred-difference SAD kernel ([`scalar::blurred_diff_sad`]).
pub type SadKernel = fn(&Plane<'_>, &Plane<'_>, &mut scalar::SadScratch, u8) -> u64;

/// The best SAD kernel at or below `level` that this machine runs.
pub fn sad_kernel(level: CpuLevel) -> SadKernel {
    #[cfg(target_arch = "x86_64")]
    if level >= CpuLevel::Avx512 {
        if let Some(k) = x86_64_avx512::kernel() {
            return k;
        }
    }
    #[cfg(target_arch = "x86_64")]
    if level >= CpuLevel::Avx2 {
        if let Some(k) = x86_64_avx2::kernel() {
            return k;
        }
    }
    let _ = level;
    scalar::blurred_diff_sad
}

/// Calls `kernel`; with the `check_simd` feature also the scalar kernel, asserting equality.
fn dispatch(
    kernel: SadKernel,
    prev: &Plane<'_>,
    cur: &Plane<'_>,
    scratch: &mut scalar::SadScratch,
    bpc: u8,
) -> u64 {
    let sad = kernel(prev, cur, scratch, bpc);
    #[cfg(feature = "check_simd")]
    if kernel as usize != scalar::blurred_diff_sad as SadKernel as usize {
        let want = scalar::blurred_diff_sad(prev, cur, scratch, bpc);
        assert_eq!(sad, want, "check_simd: motion blurred_diff_sad");
    }
    sad
}

/// Per-frame motion: SAD of the blurred difference with the previous (or, in five-frame mode, the
/// one-before-previous) reference frame.
struct Motion {
    kernel: SadKernel,
    scratch: scalar::SadScratch,
    bpc: u8,
    fps_weight: f64,
    max_val: f64,
    force_zero: bool,
    five_frame: bool,
}

fn create(cfg: &ExtractorConfig) -> Result<Box<dyn Extractor>> {
    Ok(Box::new(Motion {
        kernel: sad_kernel(cpu_level()),
        scratch: scalar::SadScratch::new(cfg.format.width),
        bpc: cfg.format.bpc,
        fps_weight: cfg.opts.f64("motion_fps_weight"),
        max_val: cfg.opts.f64("motion_max_val"),
        force_zero: cfg.opts.bool("motion_force_zero"),
        five_frame: cfg.opts.bool("motion_five_frame_window"),
    }))
}

impl Extractor for Motion {
    fn extract(&mut self, input: &FrameInput<'_>, out: &mut [f64]) -> Result<()> {
        let min_idx = if self.five_frame { 2 } else { 1 };
        let mut score = 0.0;
        if !self.force_zero && input.index >= min_idx {
            let prev = if self.five_frame {
                input.prev_prev_reference
            } else {
                input.prev_reference
            }
            .ok_or_else(|| Error::Internal("motion: previous reference frame missing".into()))?;
            let cur = &input.reference;
            let sad = dispatch(self.kernel, &prev, cur, &mut self.scratch, self.bpc);
            // Same operation order as libvmaf: sad / 256 / (w*h) (a 32-bit unsigned product).
            let area = (cur.width as u32).wrapping_mul(cur.height as u32) as f64;
            score = (sad as f64 / 256.0 / area * self.fps_weight).min(self.max_val);
        }
        out[0] = score;
        Ok(())
    }
}

/// libvmaf's motion blend: `m·f + (1 − f)·min(offset, m)`.
fn blend(m: f64, factor: f64, offset: f64) -> f64 {
    m * factor + (1.0 - factor) * offset.min(m)
}

/// Streaming motion2/motion3: holds the last few SADs and emits each frame as soon as its
/// successor's SAD is known (the first frames wait for the SAD at `min_idx`).
struct MotionTemporal {
    min_idx: u64,
    five_frame: bool,
    blend_factor: f64,
    blend_offset: f64,
    max_val: f64,
    moving_average: bool,
    /// (index, sad) of frames not emitted yet, plus the last emitted one (for five-frame `lo`).
    sads: VecDeque<(u64, f64)>,
    /// Next frame index to emit.
    next: u64,
    /// motion3 value of the previous emitted frame (libvmaf's `prev_processed`).
    prev_processed: f64,
    stamp: f64,
}

fn create_temporal(opts: &OptValues) -> Box<dyn Temporal> {
    let five_frame = opts.bool("motion_five_frame_window");
    Box::new(MotionTemporal {
        min_idx: if five_frame { 2 } else { 1 },
        five_frame,
        blend_factor: opts.f64("motion_blend_factor"),
        blend_offset: opts.f64("motion_blend_offset"),
        max_val: opts.f64("motion_max_val"),
        moving_average: opts.bool("motion_moving_average"),
        sads: VecDeque::with_capacity(8),
        next: 0,
        prev_processed: 0.0,
        stamp: 0.0,
    })
}

impl MotionTemporal {
    fn sad(&self, index: u64) -> Option<f64> {
        self.sads.iter().find(|(i, _)| *i == index).map(|(_, s)| *s)
    }

    fn processed(&self, motion2: f64) -> f64 {
        blend(motion2, self.blend_factor, self.blend_offset).min(self.max_val)
    }

    /// Emits frame `self.next`; `hi` is the SAD of the frame after it, if any.
    fn emit_next(&mut self, hi: Option<f64>, emit: &mut dyn FnMut(u64, &[f64])) {
        let i = self.next;
        let (motion2, motion3);
        if i < self.min_idx {
            motion2 = 0.0;
            motion3 = self.stamp;
            self.prev_processed = self.stamp;
        } else {
            let sad_i = self.sad(i).unwrap_or(0.0);
            motion2 = match hi {
                None => sad_i,
                Some(hi) => {
                    let stride = if self.five_frame { 2 } else { 1 };
                    let lo_idx = i as i64 - (stride - 1);
                    if lo_idx >= self.min_idx as i64 {
                        let lo = self.sad(lo_idx as u64).unwrap_or(0.0);
                        if lo < hi {
                            lo
                        } else {
                            hi
                        }
                    } else {
                        hi
                    }
                }
            };
            let processed = self.processed(motion2);
            motion3 = if self.moving_average {
                (processed + self.prev_processed) / 2.0
            } else {
                processed
            };
            self.prev_processed = processed;
        }
        emit(i, &[motion2, motion3]);
        self.next += 1;
        // Keep only what `lo` of a later frame can still need (the frame just emitted).
        while self
            .sads
            .front()
            .is_some_and(|(idx, _)| *idx + 1 < self.next)
        {
            self.sads.pop_front();
        }
    }
}

impl Temporal for MotionTemporal {
    fn push(&mut self, index: u64, spatial: &[f64], emit: &mut dyn FnMut(u64, &[f64])) {
        self.sads.push_back((index, spatial[0]));
        if index == self.min_idx {
            // libvmaf stamps frames before min_idx with the blended SAD at min_idx, which exists
            // once the stream has more than min_idx frames.
            self.stamp = self.processed(spatial[0]);
            while self.next < self.min_idx {
                self.emit_next(None, emit);
            }
        }
        if index > self.min_idx {
            // Frame index-1 now has its successor.
            self.emit_next(Some(spatial[0]), emit);
        }
    }

    fn flush(&mut self, emit: &mut dyn FnMut(u64, &[f64])) {
        let last = self.sads.back().map(|(i, _)| *i);
        if let Some(last) = last {
            // Streams of min_idx frames or fewer: all frames precede min_idx, stamp stays 0.
            while self.next <= last {
                self.emit_next(None, emit);
            }
        }
    }
}
