//! What libvmaf's cambi `init` derives from the options and the picture format: the sizes it
//! works at, the window, the visibility thresholds and the band of useful sample values, plus the
//! configurations vmaf_rs refuses because libvmaf would read or write outside its buffers there.

use super::luminance::{self, Eotf};
use crate::error::{Error, Result};
use crate::feature::options::OptValues;
use crate::picture::PictureFormat;

/// Neither side of the working size may be below this (libvmaf's `CAMBI_MIN_WIDTH_HEIGHT`: it
/// refuses a size only when both sides are).
const MIN_SIDE: usize = 216;
/// Number of scales (libvmaf's `NUM_SCALES`).
pub const NUM_SCALES: usize = 5;
/// Sizes from which each `cambi_high_res_speedup` value applies (libvmaf's
/// `CAMBI_HIGH_RES_SPEEDUP_THRESHOLD_*`, in pixels).
const SPEEDUP_FROM: [(i64, usize); 3] = [
    (1080, 1920 * 1080),
    (1440, 2560 * 1440),
    (2160, 3840 * 2160),
];
/// Size of libvmaf's reciprocal table (`CAMBI_RECIPROCAL_LUT_SIZE`): a window may hold at most
/// this many pixels minus one.
pub const LUT_SIZE: usize = 4226;
/// Suprathreshold contrast weight per step of 1..=32 levels (libvmaf's `g_contrast_weights`).
pub const CONTRAST_WEIGHTS: [i32; 32] = [
    1, 2, 3, 4, 4, 5, 5, 6, 6, 6, 6, 7, 7, 7, 7, 8, 8, 8, 8, 8, 8, 8, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9,
];
/// libvmaf's default `topk` / `cambi_topk` (`DEFAULT_CAMBI_TOPK_POOLING`).
pub const DEFAULT_TOPK: f64 = 0.6;

/// The sample values whose histogram counts any c-value can read (libvmaf's `v_band_base` and
/// `v_band_size`): `base <= v < base + size`. Values outside it never contribute.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Band {
    /// Smallest value in the band.
    pub base: u16,
    /// Number of values; 0 when no value can give a non-zero c-value (libvmaf's `uint16_t`
    /// size wraps then, with the same all-zero result).
    pub size: u16,
}

impl Band {
    /// The histogram row of sample `v`, if it is in the band.
    #[inline(always)]
    pub fn row(self, v: u16) -> Option<usize> {
        let r = v.wrapping_sub(self.base);
        (r < self.size).then_some(r as usize)
    }
}

/// One picture CAMBI scores (the distorted one, or in `full_ref` mode also the reference): the
/// size it is resampled to and the window used there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Target {
    /// Width after resampling.
    pub width: usize,
    /// Height after resampling.
    pub height: usize,
    /// Window side (odd), libvmaf's adjusted `window_size`.
    pub window: u16,
}

impl Target {
    /// The size at each scale: halved (rounding up) before every scale but the first, and
    /// before the first too with `speedup`.
    pub fn scale_sizes(&self, speedup: bool) -> [(usize, usize); NUM_SCALES] {
        let (mut w, mut h) = (self.width, self.height);
        let mut out = [(0, 0); NUM_SCALES];
        for (s, o) in out.iter_mut().enumerate() {
            if s > 0 || speedup {
                w = (w + 1) >> 1;
                h = (h + 1) >> 1;
            }
            *o = (w, h);
        }
        out
    }
}

/// Everything libvmaf's `init` fixes for the stream.
#[derive(Debug, Clone, PartialEq)]
pub struct Setup {
    /// The distorted picture's working size and window.
    pub enc: Target,
    /// The reference's (used with `full_ref`).
    pub src: Target,
    /// `enc_bitdepth`, defaulting to the input's depth: below 10 the anti-dithering filter runs.
    pub enc_bitdepth: u32,
    /// Whether the reference is scored too.
    pub full_ref: bool,
    /// Whether `cambi_high_res_speedup` applies at this size.
    pub speedup: bool,
    /// The size of libvmaf's working pictures (the larger of the two targets with `full_ref`).
    pub alloc: (usize, usize),
    /// Contrast steps considered (`1 << max_log_contrast`).
    pub num_diffs: u16,
    /// Per step `d + 1`: the largest visible sample, plus `num_diffs` (libvmaf's `tvi_for_diff`).
    pub tvi: Vec<u16>,
    /// Samples at or below this minus `d + 1 + num_diffs` are too dark to show banding.
    pub vlt_luma: u16,
    /// The useful sample values.
    pub band: Band,
    /// The pooling ratio in effect (`topk` if set, else `cambi_topk`).
    pub topk: f64,
    /// Scores are clipped to this (`cambi_max_val`).
    pub max_val: f64,
}

/// libvmaf's `adjust_window_size`: scaled by `(w + h) / (3840 + 2160)`, halved with the speedup,
/// rounded up to odd (in its `uint16_t`).
fn adjust_window(window: i64, w: usize, h: usize, speedup: bool) -> u16 {
    let mut ws = (((window as u64 * (w + h) as u64) / 375) >> 4) as u16;
    if speedup {
        ws = (ws + 1) >> 1;
    }
    ws | 1
}

impl Setup {
    /// Derives the setup, refusing what libvmaf refuses (its `-EINVAL`s) and what it cannot
    /// compute without reading outside its buffers.
    pub fn new(o: &OptValues, f: &PictureFormat) -> Result<Setup> {
        let (w, h) = (f.width, f.height);
        let opt = |k: &str| o.int(k) as usize;
        let enc_bitdepth = match o.int("enc_bitdepth") {
            0 => f.bpc as u32,
            b => b as u32,
        };
        let (mut ew, mut eh) = match (opt("enc_width"), opt("enc_height")) {
            (0, _) | (_, 0) => (w, h),
            s => s,
        };
        let (sw, sh) = match (opt("src_width"), opt("src_height")) {
            (0, _) | (_, 0) => (w, h),
            s => s,
        };
        // An encode that was scaled down is not scaled back up.
        if eh > h || ew > w {
            (ew, eh) = (w, h);
        }
        if ew < MIN_SIDE && eh < MIN_SIDE {
            return Err(Error::Unsupported(format!(
                "feature cambi: it works at {ew}x{eh} here (the picture, or enc_width x \
                 enc_height when smaller), and libvmaf needs one side of at least {MIN_SIDE}; \
                 use a larger picture or encoding size"
            )));
        }
        if sw < MIN_SIDE && sh < MIN_SIDE {
            return Err(Error::Unsupported(format!(
                "feature cambi: the source size {sw}x{sh} has no side of at least {MIN_SIDE}, \
                 which libvmaf needs; set a larger src_width and src_height"
            )));
        }
        if (sw > ew && sh < eh) || (sw < ew && sh > eh) {
            return Err(Error::InvalidOption(format!(
                "feature cambi: the source size {sw}x{sh} is larger than the encoding size \
                 {ew}x{eh} one way and smaller the other, which libvmaf refuses; give sizes of \
                 the same orientation"
            )));
        }
        let hrs = o.int("cambi_high_res_speedup");
        let speedup = SPEEDUP_FROM
            .iter()
            .any(|&(v, from)| v == hrs && ew * eh >= from);
        let full_ref = o.bool("full_ref");
        let alloc = if full_ref {
            (sw.max(ew), sh.max(eh))
        } else {
            (ew, eh)
        };
        let num_diffs = 1u16 << o.int("max_log_contrast");
        // cambi_eotf wins when it is not the default.
        let eotf = match o.choice("cambi_eotf") {
            "bt1886" => Eotf::from_word(o.choice("eotf")),
            other => Eotf::from_word(other),
        };
        let tvi_threshold = o.f64("tvi_threshold");
        let mut tvi = Vec::with_capacity(num_diffs as usize);
        for d in 0..num_diffs {
            let t = luminance::tvi_for_diff(d as i32 + 1, tvi_threshold, eotf)?;
            tvi.push(t as u16 + num_diffs);
        }
        // The band below relies on larger steps staying visible up to higher samples (as
        // libvmaf's own band does); a threshold where they would not is refused.
        if tvi.windows(2).any(|p| p[1] < p[0]) {
            return Err(Error::InvalidOption(format!(
                "feature cambi: tvi_threshold={tvi_threshold} gives visibility thresholds that \
                 fall with the step size ({tvi:?}); use another tvi_threshold"
            )));
        }
        let vlt_luma = luminance::vlt_luma(o.f64("cambi_vis_lum_threshold"), eotf)?;
        let base = (vlt_luma as i32 - 3 * num_diffs as i32 + 1).max(0);
        let top = tvi[num_diffs as usize - 1] as i32 + 1;
        let band = Band {
            base: base as u16,
            size: (top - base).max(0) as u16,
        };

        let window = o.int("window_size");
        let enc = Target {
            width: ew,
            height: eh,
            window: adjust_window(window, ew, eh, speedup),
        };
        let src = Target {
            width: sw,
            height: sh,
            window: adjust_window(window, sw, sh, speedup),
        };
        let max_window = enc.window.max(src.window) as usize;
        if max_window * max_window >= LUT_SIZE {
            return Err(Error::InvalidOption(format!(
                "feature cambi: window_size={window} becomes a {max_window}-pixel window at \
                 {}x{}, more than libvmaf's reciprocal table covers (its window may hold at most \
                 {} pixels); use a smaller window_size",
                if src.window > enc.window { sw } else { ew },
                if src.window > enc.window { sh } else { eh },
                LUT_SIZE - 1
            )));
        }
        let mut targets = vec![("", enc)];
        if full_ref {
            targets.push(("the reference at ", src));
        }
        for (what, t) in targets {
            let pad = (t.window >> 1) as usize;
            for (s, (sw, sh)) in t.scale_sizes(speedup).into_iter().enumerate() {
                if pad > sw || pad > sh {
                    return Err(Error::Unsupported(format!(
                        "feature cambi: {what}{}x{} is {sw}x{sh} at scale {s}, narrower than \
                         half its {}-pixel window, where libvmaf reads and writes outside its \
                         picture; use a picture (or encoding size) less elongated",
                        t.width, t.height, t.window
                    )));
                }
            }
        }

        let topk = match o.f64("topk") {
            t if t != DEFAULT_TOPK => t,
            _ => o.f64("cambi_topk"),
        };
        Ok(Setup {
            enc,
            src,
            enc_bitdepth,
            full_ref,
            speedup,
            alloc,
            num_diffs,
            tvi,
            vlt_luma,
            band,
            topk,
            max_val: o.f64("cambi_max_val"),
        })
    }
}
