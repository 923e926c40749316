//! `float_motion`: libvmaf's float motion. Each reference frame (`picture_copy` samples minus
//! 128) is blurred with a separable 5-tap (or 3-tap, or no-op) filter; `motion` is the mean
//! absolute difference of consecutive blurred frames, and the temporal stage gives `motion2`
//! (the smaller of a frame's two neighbouring differences) and `motion3` (blended `motion2`),
//! emitted with a one-frame lag, as libvmaf appends them.
//!
//! libvmaf's arithmetic, reproduced: vertical then horizontal `f32` convolution, each tap
//! accumulated from 0 in tap order, borders mirrored without repeating the edge (`-i`,
//! `2n - i - 2`); libvmaf's AVX2 convolution (what it runs on AVX2 and AVX-512 hosts) computes
//! every pixel the same way as its C code. The difference is summed per row in `f32`, then over
//! rows in `f32`, and divided in `f32`. With `motion_add_scale1` the blurred frames are also
//! halved with libvmaf's bilinear scaler and their mean difference added. With `motion_add_uv`
//! the Cb and Cr planes (libvmaf's chroma size) are blurred and differenced the same way and their
//! `float` differences added to luma's in `double`.

use super::options::{OptKind, OptSpec, OptValues};
use super::picture_copy::{check_depth, to_float};
use super::scale::{Geom, Method, Scaler, BILINEAR_MAX_WIDTH};
use super::{Extractor, ExtractorConfig, ExtractorDef, FrameInput, Temporal};
use crate::error::{Error, Result};
use crate::picture::{ChromaLayout, PictureFormat, Plane};

/// Options, with libvmaf's names, aliases, defaults and ranges (float_motion.c).
pub static OPTIONS: &[OptSpec] = &[
    OptSpec {
        name: "debug",
        alias: None,
        kind: OptKind::Bool(true),
        feature_param: false,
    },
    OptSpec {
        name: "motion_force_zero",
        alias: Some("force_0"),
        kind: OptKind::Bool(false),
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
        name: "motion_add_scale1",
        alias: Some("mdc"),
        kind: OptKind::Bool(false),
        feature_param: true,
    },
    OptSpec {
        name: "motion_filter_size",
        alias: Some("mfs"),
        kind: OptKind::Int {
            default: 5,
            min: 0,
            max: 9,
        },
        feature_param: true,
    },
    OptSpec {
        name: "motion_add_uv",
        alias: Some("mau"),
        kind: OptKind::Bool(false),
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
];

/// The per-frame outputs: libvmaf's `motion` (shown with `debug`, its default) and the raw
/// difference the temporal stage needs (never shown: libvmaf keeps it internally).
const SPATIAL: &[&str] = &["VMAF_feature_motion_score", "float_motion_raw_difference"];

/// Registry entry.
pub static DEF: ExtractorDef = ExtractorDef {
    name: "float_motion",
    options: OPTIONS,
    spatial: SPATIAL,
    temporal: &["VMAF_feature_motion2_score", "VMAF_feature_motion3_score"],
    needs_prev_ref: true,
    reference_only: true,
    reads_chroma,
    shows: Some(shows),
    check,
    create,
    create_temporal: Some(create_temporal),
    ..ExtractorDef::DEFAULTS
};

/// `motion_add_uv` adds the chroma planes' motion.
fn reads_chroma(o: &OptValues, _: &PictureFormat) -> bool {
    o.bool("motion_add_uv")
}

fn shows(o: &OptValues, _: &PictureFormat, name: &str) -> bool {
    name == SPATIAL[0] && o.bool("debug")
}

fn check(o: &OptValues, f: &PictureFormat) -> Result<()> {
    check_depth("float_motion", f.bpc)?;
    if o.bool("motion_add_uv") && f.layout == ChromaLayout::Gray {
        return Err(Error::Unsupported(
            "feature float_motion: motion_add_uv=true on gray (4:0:0) input, which has no chroma \
             (libvmaf's init refuses it); leave motion_add_uv at false or give 4:2:0, 4:2:2 or \
             4:4:4 input"
                .into(),
        ));
    }
    if o.bool("motion_add_uv") && o.bool("motion_add_scale1") && f.layout != ChromaLayout::Yuv444 {
        // vmaf_image_sad_c halves with the stride of the width it is given, the chroma width,
        // but the chroma planes are stored at the luma stride.
        return Err(Error::Unsupported(format!(
            "feature float_motion: motion_add_uv with motion_add_scale1 on {f} input (libvmaf \
             halves the chroma planes reading them with the wrong row stride, i.e. samples \
             outside them, so its result is not defined); use 4:4:4 input or drop one of the two \
             options"
        )));
    }
    if o.bool("motion_add_scale1") && scaled(f.width) > BILINEAR_MAX_WIDTH {
        return Err(Error::Unsupported(format!(
            "feature float_motion: motion_add_scale1 on a picture {} wide (libvmaf's scaler takes \
             at most {} wide, i.e. {BILINEAR_MAX_WIDTH} halved); scale the input down or leave \
             motion_add_scale1 at false",
            f.width,
            2 * BILINEAR_MAX_WIDTH
        )));
    }
    Ok(())
}

/// libvmaf's half size: `(int)(n * 0.5 + 0.5)`.
pub(crate) fn scaled(n: usize) -> usize {
    (n as f64 * 0.5 + 0.5) as usize
}

/// The blur filters (motion_tools.h): decimal literals of C `double`s rounded to `f32` (the CUDA
/// plan passes the same taps to its kernels).
pub(crate) fn filter(size: i64) -> &'static [f32] {
    static FILTER_5: [f32; 5] = [
        0.054488685f64 as f32,
        0.244201342f64 as f32,
        0.402619947f64 as f32,
        0.244201342f64 as f32,
        0.054488685f64 as f32,
    ];
    static FILTER_3: [f32; 3] = [
        0.166378498f64 as f32,
        0.667243004f64 as f32,
        0.166378498f64 as f32,
    ];
    static FILTER_5_NO_OP: [f32; 5] = [0.0, 0.0, 1.0, 0.0, 0.0];
    match size {
        1 => &FILTER_5_NO_OP,
        3 => &FILTER_3,
        // libvmaf takes the 5-tap filter for every other size.
        _ => &FILTER_5,
    }
}

/// libvmaf's convolution mirror (`convolution_edge_s`) of `i` (out of range by less than `n`).
fn mirror(i: isize, n: usize) -> usize {
    let n = n as isize;
    (if i < 0 {
        -i
    } else if i >= n {
        2 * n - i - 2
    } else {
        i
    }) as usize
}

/// libvmaf's `convolution_f32_c_s` (and its AVX2 twin): vertical pass into `tmp`, horizontal
/// pass into `dst`, dense `w × h` images.
fn blur(f: &[f32], src: &[f32], tmp: &mut [f32], dst: &mut [f32], w: usize, h: usize) {
    let r = f.len() / 2;
    for i in 0..h {
        let out = &mut tmp[i * w..(i + 1) * w];
        out.fill(0.0);
        for (k, &fk) in f.iter().enumerate() {
            let y = mirror(i as isize - r as isize + k as isize, h);
            let row = &src[y * w..(y + 1) * w];
            for (o, &v) in out.iter_mut().zip(row) {
                *o += fk * v;
            }
        }
    }
    for i in 0..h {
        let row = &tmp[i * w..(i + 1) * w];
        let out = &mut dst[i * w..(i + 1) * w];
        for (j, o) in out.iter_mut().enumerate() {
            let mut accum = 0.0f32;
            if j >= r && j + r < w {
                for (&fk, &v) in f.iter().zip(&row[j - r..]) {
                    accum += fk * v;
                }
            } else {
                for (k, &fk) in f.iter().enumerate() {
                    accum += fk * row[mirror(j as isize - r as isize + k as isize, w)];
                }
            }
            *o = accum;
        }
    }
}

/// Mean absolute difference of two dense `w × h` images (libvmaf's `vmaf_image_sad_c`): each
/// row's `f32` sum from 0 in column order, then [`mean_of_row_sums`].
fn mean_abs_diff(a: &[f32], b: &[f32], w: usize, h: usize) -> f32 {
    let rows = a
        .chunks_exact(w)
        .zip(b.chunks_exact(w))
        .take(h)
        .map(|(ra, rb)| {
            let mut line = 0.0f32;
            for (&x, &y) in ra.iter().zip(rb) {
                line += (x - y).abs();
            }
            line
        });
    mean_of_row_sums(rows, w, h)
}

/// The rest of `vmaf_image_sad_c` after the per-row sums: their `f32` sum from 0 in row order,
/// divided by the `int` area in `f32`. The CUDA plan computes the row sums on the device and
/// finishes here.
pub(crate) fn mean_of_row_sums(rows: impl IntoIterator<Item = f32>, w: usize, h: usize) -> f32 {
    let mut accum = 0.0f32;
    for line in rows {
        accum += line;
    }
    accum / ((w * h) as i32 as f32)
}

/// A plane's difference with `motion_add_scale1`: the full-size and the halved mean absolute
/// differences added in `f32`.
pub(crate) fn with_scale1(scale0: f32, scale1: f32) -> f32 {
    scale0 + scale1
}

/// A frame's score: the planes' `float` differences (luma, Cb, Cr) added from 0 in `double`.
pub(crate) fn frame_score(differences: impl IntoIterator<Item = f32>) -> f64 {
    differences
        .into_iter()
        .fold(0.0f64, |acc, d| acc + d as f64)
}

/// The spatial outputs of a frame (`motion`, the raw difference) from its score (`None` for
/// frame 0 and with `motion_force_zero`, whose outputs are 0).
pub(crate) fn spatial_values(score: Option<f64>, fps_weight: f64, max_val: f64) -> [f64; 2] {
    match score {
        None => [0.0, 0.0],
        Some(score) => [min(score * fps_weight, max_val), score],
    }
}

/// `motion_add_scale1`: libvmaf's bilinear halving and the two halved frames.
struct Scale1 {
    scaler: Scaler,
    /// The halved size.
    w: usize,
    h: usize,
    halves: [Vec<f32>; 2],
}

/// One plane's blur state (luma, and with `motion_add_uv` each chroma plane at its own size).
struct PlaneMotion {
    w: usize,
    h: usize,
    pic: Vec<f32>,
    tmp: Vec<f32>,
    /// Blurred current and previous reference.
    blurred: [Vec<f32>; 2],
    /// `motion_add_scale1`'s scaler and buffers.
    scale1: Option<Scale1>,
}

impl PlaneMotion {
    fn new(w: usize, h: usize, add_scale1: bool) -> Self {
        let scale1 = add_scale1.then(|| {
            let (sw, sh) = (scaled(w), scaled(h));
            Scale1 {
                scaler: Scaler::new(Method::Bilinear, (w, h), (sw, sh)),
                w: sw,
                h: sh,
                halves: [vec![0.0; sw * sh], vec![0.0; sw * sh]],
            }
        });
        PlaneMotion {
            w,
            h,
            pic: vec![0.0; w * h],
            tmp: vec![0.0; w * h],
            blurred: [vec![0.0; w * h], vec![0.0; w * h]],
            scale1,
        }
    }

    /// Blurs `plane` into `blurred[slot]`.
    fn blur_into(&mut self, filter: &[f32], bpc: u8, plane: &Plane<'_>, slot: usize) {
        to_float(plane, bpc, -128, &mut self.pic);
        blur(
            filter,
            &self.pic,
            &mut self.tmp,
            &mut self.blurred[slot],
            self.w,
            self.h,
        );
    }

    /// libvmaf's `compute_motion` of the previous and current blurred frames (`float`).
    fn difference(&mut self) -> f32 {
        let (w, h) = (self.w, self.h);
        let [cur, prev] = &self.blurred;
        let scale0 = mean_abs_diff(prev, cur, w, h);
        match &mut self.scale1 {
            None => scale0,
            Some(Scale1 {
                scaler,
                w: sw,
                h: sh,
                halves: [a, b],
            }) => {
                let dense = |w, h| Geom { w, h, stride: w };
                scaler.scale(prev, dense(w, h), a, dense(*sw, *sh));
                scaler.scale(cur, dense(w, h), b, dense(*sw, *sh));
                with_scale1(scale0, mean_abs_diff(a, b, *sw, *sh))
            }
        }
    }
}

struct FloatMotion {
    bpc: u8,
    filter: &'static [f32],
    force_zero: bool,
    fps_weight: f64,
    max_val: f64,
    /// Luma, then (with `motion_add_uv`) Cb and Cr.
    planes: Vec<PlaneMotion>,
    /// Frame index `blurred[0]` holds, if any (reused when the next frame arrives in order).
    blurred_index: Option<u64>,
}

fn create(cfg: &ExtractorConfig) -> Result<Box<dyn Extractor>> {
    check(&cfg.opts, &cfg.format)?;
    let f = &cfg.format;
    let add_scale1 = cfg.opts.bool("motion_add_scale1");
    let mut planes = vec![PlaneMotion::new(f.width, f.height, add_scale1)];
    if cfg.opts.bool("motion_add_uv") {
        // libvmaf's chroma size (`w >> 1`, and `h >> 1` for 4:2:0), as the engine keeps it.
        let (cw, ch) = chroma_size(f);
        planes.push(PlaneMotion::new(cw, ch, add_scale1));
        planes.push(PlaneMotion::new(cw, ch, add_scale1));
    }
    Ok(Box::new(FloatMotion {
        bpc: f.bpc,
        filter: filter(cfg.opts.int("motion_filter_size")),
        force_zero: cfg.opts.bool("motion_force_zero"),
        fps_weight: cfg.opts.f64("motion_fps_weight"),
        max_val: cfg.opts.f64("motion_max_val"),
        planes,
        blurred_index: None,
    }))
}

/// libvmaf's chroma plane size (`VmafPicture` `w[1]`, `h[1]`).
pub(crate) fn chroma_size(f: &PictureFormat) -> (usize, usize) {
    match f.layout {
        ChromaLayout::Yuv420 => (f.width >> 1, f.height >> 1),
        ChromaLayout::Yuv422 => (f.width >> 1, f.height),
        _ => (f.width, f.height),
    }
}

impl FloatMotion {
    /// Blurs a frame's planes (luma, then the chroma planes this instance reads) into
    /// `blurred[slot]`.
    fn blur_frame(
        &mut self,
        luma: &Plane<'_>,
        chroma: Option<[Plane<'_>; 2]>,
        slot: usize,
    ) -> Result<()> {
        let (filter, bpc) = (self.filter, self.bpc);
        let (y, uv) = self.planes.split_at_mut(1);
        y[0].blur_into(filter, bpc, luma, slot);
        if !uv.is_empty() {
            let chroma = chroma.ok_or_else(|| {
                Error::Internal("float_motion: motion_add_uv without chroma planes".into())
            })?;
            for (p, plane) in uv.iter_mut().zip(&chroma) {
                p.blur_into(filter, bpc, plane, slot);
            }
        }
        Ok(())
    }
}

impl Extractor for FloatMotion {
    fn extract(&mut self, input: &FrameInput<'_>, out: &mut [f64]) -> Result<()> {
        if self.force_zero {
            out[..2].copy_from_slice(&spatial_values(None, self.fps_weight, self.max_val));
            return Ok(());
        }
        let index = input.index;
        if index > 0 && self.blurred_index == Some(index - 1) {
            // The previous frame is this instance's last one: its blur is already there.
            for p in &mut self.planes {
                p.blurred.swap(0, 1);
            }
        } else if index > 0 {
            let prev = input.prev_reference.ok_or_else(|| {
                Error::Internal("float_motion: previous reference frame missing".into())
            })?;
            self.blur_frame(&prev, input.prev_reference_chroma, 1)?;
        }
        self.blur_frame(&input.reference, input.reference_chroma, 0)?;
        self.blurred_index = Some(index);
        let score =
            (index > 0).then(|| frame_score(self.planes.iter_mut().map(|p| p.difference())));
        out[..2].copy_from_slice(&spatial_values(score, self.fps_weight, self.max_val));
        Ok(())
    }
}

/// C's `MIN(x, y)`: `x < y ? x : y`.
fn min(x: f64, y: f64) -> f64 {
    if x < y {
        x
    } else {
        y
    }
}

/// libvmaf's motion blend: `m·f + (1 − f)·MIN(offset, m)`.
fn blend(m: f64, factor: f64, offset: f64) -> f64 {
    m * factor + (1.0 - factor) * min(offset, m)
}

/// motion2/motion3 as libvmaf's float_motion appends them: frame `i - 1` when frame `i`'s
/// difference is known, the last frame at flush.
struct FloatMotionTemporal {
    force_zero: bool,
    fps_weight: f64,
    blend_factor: f64,
    blend_offset: f64,
    max_val: f64,
    /// (index, raw difference) of the last frame pushed.
    last: Option<(u64, f64)>,
}

fn create_temporal(opts: &OptValues) -> Box<dyn Temporal> {
    Box::new(FloatMotionTemporal {
        force_zero: opts.bool("motion_force_zero"),
        fps_weight: opts.f64("motion_fps_weight"),
        blend_factor: opts.f64("motion_blend_factor"),
        blend_offset: opts.f64("motion_blend_offset"),
        max_val: opts.f64("motion_max_val"),
        last: None,
    })
}

impl FloatMotionTemporal {
    /// (motion2, motion3) of a difference.
    fn values(&self, m: f64) -> [f64; 2] {
        let m = m * self.fps_weight;
        [
            min(m, self.max_val),
            min(blend(m, self.blend_factor, self.blend_offset), self.max_val),
        ]
    }
}

impl Temporal for FloatMotionTemporal {
    fn push(&mut self, index: u64, spatial: &[f64], emit: &mut dyn FnMut(u64, &[f64])) {
        if self.force_zero {
            emit(index, &[0.0, 0.0]);
            return;
        }
        let score = spatial[1];
        if index == 1 {
            // Frame 0: motion2 is 0, motion3 the blended difference of frame 1.
            emit(0, &[0.0, self.values(score)[1]]);
        } else if let Some((prev_index, prev)) = self.last.filter(|_| index > 1) {
            // libvmaf recomputes the previous difference (the same value) and takes the smaller.
            let m = if prev < score { prev } else { score };
            emit(prev_index, &self.values(m));
        }
        self.last = Some((index, score));
    }

    fn flush(&mut self, emit: &mut dyn FnMut(u64, &[f64])) {
        match self.last.take() {
            Some((0, _)) => emit(0, &[0.0, 0.0]),
            Some((index, score)) => emit(index, &self.values(score)),
            None => {}
        }
    }
}
