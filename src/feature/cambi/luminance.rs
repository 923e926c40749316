//! The visibility thresholds CAMBI derives once from its options: libvmaf's luminance tools
//! (`luminance_tools.c`: limited-range 10-bit luma, the BT.1886 and PQ EOTFs) and cambi's
//! threshold searches (`get_tvi_for_diff`, `get_vlt_luma`).
//!
//! Everything here is `f64` as in libvmaf; only the integer thresholds leave this module.

use crate::error::{Error, Result};

/// Limited-range 10-bit luma: black (`16 << 2`) and white (`235 << 2`), libvmaf's
/// `VMAF_PIXEL_RANGE_LIMITED` at 10 bits.
pub const FOOT: i32 = 64;
/// See [`FOOT`].
pub const HEAD: i32 = 940;
/// The largest 10-bit sample, what `get_tvi_for_diff` returns when every level is visible.
const MAX_10BIT: i32 = 1023;

/// The EOTF the thresholds are computed with (cambi's `eotf` / `cambi_eotf`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Eotf {
    /// ITU-R BT.1886 with a 300 cd/m² white and a 0.01 cd/m² black (libvmaf's constants).
    Bt1886,
    /// SMPTE ST 2084 (PQ).
    Pq,
}

impl Eotf {
    /// The EOTF libvmaf names `word` (`bt1886` or `pq`; the option table admits no other).
    pub fn from_word(word: &str) -> Eotf {
        if word == "pq" {
            Eotf::Pq
        } else {
            Eotf::Bt1886
        }
    }

    /// Luminance in cd/m² of a normalised signal `v` in [0, 1].
    fn apply(self, v: f64) -> f64 {
        match self {
            Eotf::Bt1886 => bt1886(v),
            Eotf::Pq => pq(v),
        }
    }
}

/// BT.1886 as libvmaf writes it (`vmaf_luminance_bt1886_eotf`: gamma 2.4, white 300, black 0.01).
fn bt1886(v: f64) -> f64 {
    const GAMMA: f64 = 2.4;
    const LW: f64 = 300.0;
    const LB: f64 = 0.01;
    let (w, b) = (LW.powf(1.0 / GAMMA), LB.powf(1.0 / GAMMA));
    let a = (w - b).powf(GAMMA);
    let offset = b / (w - b);
    let x = v + offset;
    let x = if x > 0.0 { x } else { 0.0 };
    a * x.powf(GAMMA)
}

/// PQ as libvmaf writes it (`vmaf_luminance_pq_eotf`, ST 2084's constants).
fn pq(v: f64) -> f64 {
    const M1: f64 = 0.1593017578125;
    const M2: f64 = 78.84375;
    const C1: f64 = 0.8359375;
    const C2: f64 = 18.8515625;
    const C3: f64 = 18.6875;
    let num = v.powf(1.0 / M2) - C1;
    let num = if num > 0.0 { num } else { 0.0 };
    let den = C2 - C3 * v.powf(1.0 / M2);
    10000.0 * (num / den).powf(1.0 / M1)
}

/// Luminance of a 10-bit sample (clipped to the limited range first, as libvmaf does).
pub fn luminance(sample: i32, eotf: Eotf) -> f64 {
    let c = sample.clamp(FOOT, HEAD);
    eotf.apply((c - FOOT) as f64 / (HEAD - FOOT) as f64)
}

/// Whether a step of `diff` levels above `sample` is visible: its luminance step exceeds
/// `tvi` times the mean (libvmaf's `tvi_condition`).
fn visible(sample: i32, diff: i32, tvi: f64, eotf: Eotf) -> bool {
    let mean = luminance(sample, eotf);
    let stepped = luminance(sample + diff, eotf);
    stepped - mean > tvi * mean
}

/// Where `sample` lies against the threshold being searched for.
#[derive(PartialEq)]
enum Bisect {
    TooSmall,
    Correct,
    TooBig,
}

fn bisect_at(sample: i32, diff: i32, tvi: f64, eotf: Eotf) -> Bisect {
    if !visible(sample, diff, tvi, eotf) {
        Bisect::TooBig
    } else if visible(sample + 1, diff, tvi, eotf) {
        Bisect::TooSmall
    } else {
        Bisect::Correct
    }
}

/// The largest sample at which a step of `diff` levels is still visible (libvmaf's
/// `get_tvi_for_diff` at 10 bits: 0 when not even black shows it, 1023 when white still does).
pub fn tvi_for_diff(diff: i32, tvi: f64, eotf: Eotf) -> Result<i32> {
    let (mut foot, mut head) = (FOOT, HEAD - diff - 1);
    match bisect_at(foot, diff, tvi, eotf) {
        Bisect::TooBig => return Ok(0),
        Bisect::Correct => return Ok(foot),
        Bisect::TooSmall => {}
    }
    match bisect_at(head, diff, tvi, eotf) {
        Bisect::TooSmall => return Ok(MAX_10BIT),
        Bisect::Correct => return Ok(head),
        Bisect::TooBig => {}
    }
    // libvmaf loops until it meets the threshold; on a monotone condition that takes at most
    // log2(876) steps. A bound turns a condition that is not (libvmaf would hang) into an error.
    for _ in 0..64 {
        let mid = foot + (head - foot) / 2;
        match bisect_at(mid, diff, tvi, eotf) {
            Bisect::TooBig => head = mid,
            Bisect::TooSmall => foot = mid,
            Bisect::Correct => return Ok(mid),
        }
    }
    Err(Error::InvalidOption(format!(
        "cambi: tvi_threshold={tvi} gives no visibility threshold for a step of {diff} levels \
         (libvmaf would not terminate); use another tvi_threshold"
    )))
}

/// The smallest sample whose luminance reaches `threshold`, or 0 when black already does
/// (libvmaf's `get_vlt_luma`). Fails where libvmaf would loop forever: a threshold above white.
pub fn vlt_luma(threshold: f64, eotf: Eotf) -> Result<u16> {
    let mut sample = FOOT;
    while luminance(sample, eotf) < threshold {
        if sample >= HEAD {
            return Err(Error::InvalidOption(format!(
                "cambi: cambi_vis_lum_threshold={threshold} is above the luminance of white \
                 ({} cd/m² with this eotf), where libvmaf never finishes its setup; use a \
                 smaller cambi_vis_lum_threshold",
                luminance(HEAD, eotf)
            )));
        }
        sample += 1;
    }
    Ok(if sample == FOOT { 0 } else { sample as u16 })
}
