//! Float VIF (libvmaf's `float_vif` extractor, `float_vif.c` + `vif.c` + `vif_tools.c`): visual
//! information fidelity at four scales in single precision, `VMAF_feature_vif_scale0..3_score`
//! (logged as `vif_scale0..3`), with libvmaf's debug outputs under `debug=true`.
//!
//! Per frame, luma becomes `float` as libvmaf's `picture_copy` makes it (`x - 128` at 8 bits,
//! `x / 4 - 128`, `x / 16 - 128`, `x / 256 - 128` at 10, 12, 16 bits), is optionally rescaled
//! (`vif_prescale`, by `vif_prescale_method`: libvmaf's nearest, bilinear, bicubic or lanczos4
//! scaler, [`super::scale`]), and every scale after 0 filters the previous one with its
//! Gaussian and keeps every other sample. At each scale separable Gaussians give the local means,
//! variances and covariance, and each pixel contributes libvmaf's approximate-`log2` terms.
//!
//! Host dependence: none. On AVX2 hosts libvmaf convolves with `convolution_f32_avx_*`, whose
//! sums are the C fallback's, tap for tap (libvmaf's build does not contract them into FMA), so
//! one scalar implementation equals libvmaf on every host.

#[cfg(test)]
mod gpu_mirror;
pub mod scalar;

use super::options::{OptKind, OptSpec, OptValues};
use super::picture_copy::{check_depth, to_float};
use super::scale::{self, Method, Scaler};
use super::{Extractor, ExtractorConfig, ExtractorDef, FrameInput};
use crate::error::{Error, Result};
use crate::picture::PictureFormat;
use scalar::{Geom, Source};

/// Options, with libvmaf's names, aliases, defaults, ranges and FEATURE_PARAM flags
/// (`float_vif.c` `options[]`, in its order).
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
            default: 100.0,
            min: 1.0,
            max: 100.0,
        },
        feature_param: true,
    },
    OptSpec {
        name: "vif_kernelscale",
        alias: Some("ks"),
        kind: OptKind::Double {
            default: 1.0,
            min: 0.1,
            max: 4.0,
        },
        feature_param: true,
    },
    OptSpec {
        name: "vif_prescale",
        alias: Some("ps"),
        kind: OptKind::Double {
            default: 1.0,
            min: 0.1,
            max: 4.0,
        },
        feature_param: true,
    },
    OptSpec {
        name: "vif_scale1_min_val",
        alias: Some("s1miv"),
        kind: OptKind::Double {
            default: 0.0,
            min: 0.0,
            max: 1.0,
        },
        feature_param: true,
    },
    OptSpec {
        name: "vif_scale2_min_val",
        alias: Some("s2miv"),
        kind: OptKind::Double {
            default: 0.0,
            min: 0.0,
            max: 1.0,
        },
        feature_param: true,
    },
    OptSpec {
        name: "vif_scale3_min_val",
        alias: Some("s3miv"),
        kind: OptKind::Double {
            default: 0.0,
            min: 0.0,
            max: 1.0,
        },
        feature_param: true,
    },
    OptSpec {
        name: "vif_prescale_method",
        alias: Some("pm"),
        kind: OptKind::Choice {
            default: "nearest",
            choices: Method::WORDS,
        },
        feature_param: true,
    },
    OptSpec {
        name: "vif_sigma_nsq",
        alias: Some("snsq"),
        kind: OptKind::Double {
            default: 2.0,
            min: 0.0,
            max: 5.0,
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

/// Outputs in libvmaf's append order: the four scores, then the debug values.
const SPATIAL: &[&str] = &[
    "VMAF_feature_vif_scale0_score",
    "VMAF_feature_vif_scale1_score",
    "VMAF_feature_vif_scale2_score",
    "VMAF_feature_vif_scale3_score",
    "vif",
    "vif_num",
    "vif_den",
    "vif_num_scale0",
    "vif_den_scale0",
    "vif_num_scale1",
    "vif_den_scale1",
    "vif_num_scale2",
    "vif_den_scale2",
    "vif_num_scale3",
    "vif_den_scale3",
];

/// Registry entry.
pub static DEF: ExtractorDef = ExtractorDef {
    name: "float_vif",
    options: OPTIONS,
    spatial: SPATIAL,
    shows: Some(shows),
    check,
    create,
    ..ExtractorDef::DEFAULTS
};

/// The debug values only with `debug=true`, as libvmaf appends them.
fn shows(o: &OptValues, _: &PictureFormat, name: &str) -> bool {
    o.bool("debug") || SPATIAL[..4].contains(&name)
}

/// The picture size VIF works on (`(int)(w * vif_prescale + 0.5)`).
pub fn scaled_size(o: &OptValues, f: &PictureFormat) -> (usize, usize) {
    let ps = o.f64("vif_prescale");
    (
        (f.width as f64 * ps + 0.5) as usize,
        (f.height as f64 * ps + 0.5) as usize,
    )
}

/// The configure-time checks (bit depth, kernel scale, the bilinear table, every scale larger
/// than its filter's radius); the CUDA plan runs them too.
pub fn check(o: &OptValues, f: &PictureFormat) -> Result<()> {
    check_depth("float_vif", f.bpc)?;
    let ks = o.f64("vif_kernelscale");
    if !scalar::kernelscale_is_valid(ks) {
        return Err(Error::InvalidOption(format!(
            "feature float_vif: vif_kernelscale={ks} is not one libvmaf accepts (one of 1, 0.5, \
             1.5, 2, 2/3, 2.4, 360/97, 4/3, 3.5/3, 3.75/3, 4.25/3, 5/3, 3, 1/2.25, 1.4746, 1.54, \
             1.6, 1.06667, 0.711111, 0.74074, 1.111111)"
        )));
    }
    let (mut w, mut h) = scaled_size(o, f);
    let method = Method::from_word(o.choice("vif_prescale_method"));
    if method == Method::Bilinear && w > scale::BILINEAR_MAX_WIDTH {
        return Err(Error::Unsupported(format!(
            "feature float_vif: vif_prescale_method=bilinear makes a picture {w} wide (libvmaf's \
             bilinear scaler takes at most {} wide); use a smaller vif_prescale or another \
             vif_prescale_method",
            scale::BILINEAR_MAX_WIDTH
        )));
    }
    for scale in 0..4 {
        if scale > 0 {
            w /= 2;
            h /= 2;
        }
        let r = scalar::filter_size(scale, ks as f32) / 2;
        if w <= r || h <= r {
            return Err(Error::Unsupported(format!(
                "feature float_vif: scale {scale} would be {w}x{h}, not larger than its filter \
                 radius {r} (libvmaf reads outside the picture there); use a larger picture, a \
                 larger vif_prescale or a smaller vif_kernelscale"
            )));
        }
    }
    Ok(())
}

/// One instance: its options and the float planes and filter outputs of one frame.
struct FloatVif {
    /// Bit depth (for the float conversion).
    bpc: u8,
    /// Input size and VIF's (rescaled) size.
    w: usize,
    h: usize,
    sw: usize,
    sh: usize,
    gain_limit: f64,
    sigma_nsq: f64,
    skip_scale0: bool,
    min_val: [f64; 3],
    debug: bool,
    filters: [Vec<f32>; 4],
    /// `vif_prescale`'s scaler (used only when the size changes).
    scaler: Scaler,
    /// Full-size float pictures (reference, distorted), only when rescaled.
    full: [Vec<f32>; 2],
    /// Scale-0 input (reference, distorted).
    pic: [Vec<f32>; 2],
    /// Decimated input of the current scale above 0.
    level: [Vec<f32>; 2],
    mu: [Vec<f32>; 2],
    xx: Vec<f32>,
    yy: Vec<f32>,
    xy: Vec<f32>,
    tmp: Vec<f32>,
}

fn create(cfg: &ExtractorConfig) -> Result<Box<dyn Extractor>> {
    check(&cfg.opts, &cfg.format)?;
    let o = &cfg.opts;
    let (w, h) = (cfg.format.width, cfg.format.height);
    let (sw, sh) = scaled_size(o, &cfg.format);
    let ks = o.f64("vif_kernelscale") as f32;
    let n = sw * sh;
    let rescaled = (sw, sh) != (w, h);
    let full = if rescaled { w * h } else { 0 };
    Ok(Box::new(FloatVif {
        bpc: cfg.format.bpc,
        w,
        h,
        sw,
        sh,
        gain_limit: o.f64("vif_enhn_gain_limit"),
        sigma_nsq: o.f64("vif_sigma_nsq"),
        skip_scale0: o.bool("vif_skip_scale0"),
        min_val: [
            o.f64("vif_scale1_min_val"),
            o.f64("vif_scale2_min_val"),
            o.f64("vif_scale3_min_val"),
        ],
        debug: o.bool("debug"),
        filters: std::array::from_fn(|s| scalar::filter(s, ks)),
        scaler: Scaler::new(
            Method::from_word(o.choice("vif_prescale_method")),
            (w, h),
            (sw, sh),
        ),
        full: [vec![0.0; full], vec![0.0; full]],
        pic: [vec![0.0; n], vec![0.0; n]],
        level: [vec![0.0; n], vec![0.0; n]],
        mu: [vec![0.0; n], vec![0.0; n]],
        xx: vec![0.0; n],
        yy: vec![0.0; n],
        xy: vec![0.0; n],
        tmp: vec![0.0; sw],
    }))
}

impl FloatVif {
    /// libvmaf's `compute_vif`: (num, den) per scale, in `float`.
    fn scores(&mut self) -> [f64; 8] {
        let mut scores = [0f64; 8];
        let mut g = Geom {
            w: self.sw,
            h: self.sh,
            stride: self.sw,
        };
        let start = usize::from(self.skip_scale0);
        let mut decimated = false;
        for scale in start..4 {
            let f = &self.filters[scale];
            if scale > 0 {
                for p in 0..2 {
                    let src = if decimated {
                        &self.level[p]
                    } else {
                        &self.pic[p]
                    };
                    scalar::filter1d(f, Source::Plain(src), g, &mut self.mu[p], &mut self.tmp);
                    scalar::dec2(&self.mu[p], g, &mut self.level[p], g.stride);
                }
                g.w /= 2;
                g.h /= 2;
                decimated = true;
            }
            let (r, d) = if decimated {
                (&self.level[0], &self.level[1])
            } else {
                (&self.pic[0], &self.pic[1])
            };
            let [mu1, mu2] = &mut self.mu;
            scalar::filter1d(f, Source::Plain(r), g, mu1, &mut self.tmp);
            scalar::filter1d(f, Source::Plain(d), g, mu2, &mut self.tmp);
            scalar::filter1d(f, Source::Square(r), g, &mut self.xx, &mut self.tmp);
            scalar::filter1d(f, Source::Square(d), g, &mut self.yy, &mut self.tmp);
            scalar::filter1d(f, Source::Product(r, d), g, &mut self.xy, &mut self.tmp);
            let (num, den) = scalar::statistic(
                mu1,
                mu2,
                &self.xx,
                &self.yy,
                &self.xy,
                g,
                self.gain_limit,
                self.sigma_nsq,
            );
            scores[2 * scale] = num as f64;
            scores[2 * scale + 1] = den as f64;
        }
        scores
    }
}

/// The outputs of a frame from its per-scale `float` (num, den) pairs (scale 0's zero when
/// `skip_scale0`), in `SPATIAL` order: the four scores and, with `debug`, the debug values
/// (`min_val` is `vif_scale1..3_min_val`). The CUDA plan finishes with it too.
pub fn write_outputs(
    s: &[f64; 8],
    skip_scale0: bool,
    min_val: &[f64; 3],
    debug: bool,
    out: &mut [f64],
) {
    out[0] = if skip_scale0 { 0.0 } else { s[0] / s[1] };
    for k in 1..4 {
        out[k] = c_max(s[2 * k] / s[2 * k + 1], min_val[k - 1]);
    }
    if debug {
        let start = usize::from(skip_scale0);
        let (mut num, mut den) = (0f64, 0f64);
        for k in start..4 {
            num += s[2 * k];
            den += s[2 * k + 1];
        }
        out[4] = if den == 0.0 { 1.0 } else { num / den };
        out[5] = num;
        out[6] = den;
        out[7..15].copy_from_slice(s);
        if skip_scale0 {
            out[7] = 0.0;
            out[8] = -1.0;
        }
    }
}

/// C's `MAX(x, y)`: `x > y ? x : y`.
fn c_max(x: f64, y: f64) -> f64 {
    if x > y {
        x
    } else {
        y
    }
}

impl Extractor for FloatVif {
    fn extract(&mut self, input: &FrameInput<'_>, out: &mut [f64]) -> Result<()> {
        let planes = [input.reference, input.distorted];
        let g_full = Geom {
            w: self.w,
            h: self.h,
            stride: self.w,
        };
        let g_scaled = Geom {
            w: self.sw,
            h: self.sh,
            stride: self.sw,
        };
        for (p, plane) in planes.iter().enumerate() {
            if self.full[p].is_empty() {
                to_float(plane, self.bpc, -128, &mut self.pic[p]);
            } else {
                to_float(plane, self.bpc, -128, &mut self.full[p]);
                self.scaler
                    .scale(&self.full[p], g_full, &mut self.pic[p], g_scaled);
            }
        }
        let s = self.scores();
        write_outputs(&s, self.skip_scale0, &self.min_val, self.debug, out);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::scalar::*;
    use crate::feature::options::OptValues;
    use crate::picture::{ChromaLayout, PictureFormat};

    #[test]
    fn bilinear_prescale_is_refused_past_libvmafs_table_width() {
        let f = PictureFormat {
            width: 2000,
            height: 64,
            bpc: 8,
            layout: ChromaLayout::Yuv420,
        };
        let mut o = OptValues::defaults(super::OPTIONS);
        o.set("vif_prescale", "3.84").unwrap();
        o.set("vif_prescale_method", "bilinear").unwrap();
        assert!(
            super::check(&o, &f).is_ok(),
            "7680 wide is within the table"
        );
        o.set("vif_prescale", "3.85").unwrap();
        let e = super::check(&o, &f).unwrap_err().to_string();
        assert!(e.contains("7700 wide"), "{e}");
        o.set("vif_prescale_method", "bicubic").unwrap();
        assert!(super::check(&o, &f).is_ok(), "only bilinear has the table");
    }

    #[test]
    fn filter_sizes_follow_libvmaf() {
        let sizes: Vec<usize> = (0..4).map(|s| filter_size(s, 1.0)).collect();
        assert_eq!(sizes, [17, 9, 5, 3]);
        assert_eq!(filter_size(0, 0.5), 9);
        assert_eq!(filter_size(3, 0.5), 3);
        let f = filter(0, 1.0);
        assert_eq!(f.len(), 17);
        assert!((f.iter().sum::<f32>() - 1.0).abs() < 1e-6);
    }

    #[test]
    fn kernelscales() {
        assert!(kernelscale_is_valid(1.0));
        assert!(kernelscale_is_valid(0.5));
        assert!(kernelscale_is_valid(1.0 / 3.0 * 2.0));
        assert!(!kernelscale_is_valid(1.3));
    }

    #[test]
    fn log2_approximation_is_close() {
        for x in [0.5f32, 1.0, 1.5, 2.0, 10.0, 1234.5] {
            assert!((log2f_approx(x) - x.log2()).abs() < 1e-4, "{x}");
        }
        assert_eq!(log2f_approx(0.0), f32::NEG_INFINITY);
    }
}
