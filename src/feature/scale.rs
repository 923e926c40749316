//! libvmaf's frame scalers (`vif_tools.c` `vif_scale_frame_s`): float VIF's `vif_prescale` with
//! `vif_prescale_method` nearest, bilinear, bicubic or lanczos4, SpEED's `speed_prescale` with
//! `speed_prescale_method` (the same scalers), and float motion's `motion_add_scale1` halving
//! (bilinear).
//!
//! Every method maps output sample `x` to source position `(x + 0.5) · (src / dst) - 0.5`
//! (nearest: `x · (src / dst)`, truncated), with the ratio in `f32` and the position computed in
//! `double` then rounded to `f32`, and mirrors taps past an edge (`-i`, `2 (n - 1) - i`). libvmaf
//! recomputes each pixel's source indices and weights; they depend only on its column (or row),
//! so they are computed once per column and row here, from the same values in the same types,
//! and each pixel then sums its taps in libvmaf's order. A picture whose size does not change is
//! copied, as libvmaf does.

/// A plane geometry: width, height, stride.
#[derive(Clone, Copy, Debug)]
pub struct Geom {
    /// Width.
    pub w: usize,
    /// Height.
    pub h: usize,
    /// Row stride in samples.
    pub stride: usize,
}

/// A scaling method, by libvmaf's name (`vif_get_scaling_method`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    /// Nearest neighbour (libvmaf's default).
    Nearest,
    /// Bilinear, two by two taps.
    Bilinear,
    /// Bicubic (Keys, a = -0.75), four by four taps.
    Bicubic,
    /// Lanczos with a = 4, nine by nine taps, normalised by their sum.
    Lanczos4,
}

impl Method {
    /// The words libvmaf accepts for `vif_prescale_method`, its default first.
    pub const WORDS: &'static [&'static str] = &["nearest", "bilinear", "bicubic", "lanczos4"];

    /// The method a word of [`Method::WORDS`] names. Panics on another word (the option table
    /// only lets those through).
    pub fn from_word(word: &str) -> Method {
        match word {
            "nearest" => Method::Nearest,
            "bilinear" => Method::Bilinear,
            "bicubic" => Method::Bicubic,
            "lanczos4" => Method::Lanczos4,
            _ => panic!("unknown scaling method {word}"),
        }
    }
}

/// libvmaf's bilinear scaler keeps its column tables on the stack, for at most this many output
/// columns (`VIF_BILINEAR_MAX_WIDTH`); float VIF's and float motion's `init` refuse wider
/// bilinear outputs.
pub const BILINEAR_MAX_WIDTH: usize = 7680;

/// The taps of one output column (or row).
#[derive(Debug, Clone, Copy)]
enum Taps {
    /// The source index.
    Nearest(usize),
    /// The two source indices and the weight of the second.
    Bilinear(usize, usize, f32),
    /// Four source indices and weights.
    Bicubic([usize; 4], [f32; 4]),
    /// Nine source indices and weights.
    Lanczos4([usize; 9], [f32; 9]),
}

/// A scaler from one size to another with its per-column and per-row taps (made once per
/// stream).
#[derive(Debug, Clone)]
pub struct Scaler {
    /// Whether the size is unchanged (then libvmaf copies).
    copy: bool,
    cols: Vec<Taps>,
    rows: Vec<Taps>,
}

/// libvmaf's edge mirror (`mirror` in vif_tools.c, on integral `float`s): `-i` before the start,
/// `2 (n - 1) - i` past the end. Every method's taps stay within one mirror of a picture of at
/// least 16 samples (`PictureFormat::validate`).
fn mirror(i: i32, n: usize) -> usize {
    let right = n as i32 - 1;
    let m = if i < 0 {
        -i
    } else if i > right {
        2 * right - i
    } else {
        i
    };
    usize::try_from(m).expect("scaler tap within one mirror of the picture")
}

/// Keys' cubic kernel with a = -0.75 (`bicubic_kernel`), in `float`.
fn bicubic_kernel(t: f32) -> f32 {
    let a = -0.75f32;
    let t = if t < 0.0 { -t } else { t };
    if t < 1.0 {
        return ((a + 2.0) * t - (a + 3.0)) * t * t + 1.0;
    }
    if t < 2.0 {
        return (((t - 5.0) * t + 8.0) * t - 4.0) * a;
    }
    0.0
}

/// The Lanczos kernel (`lanczos4_kernel`): `a sin(πx) sin(πx / a) / (π² x²)` in `double`,
/// returned as `float`.
fn lanczos4_kernel(x: f32, a: f32) -> f32 {
    use std::f64::consts::PI;
    if x == 0.0 {
        return 1.0;
    }
    if x > -a && x < a {
        let (x, a) = (x as f64, a as f64);
        return (a * (PI * x).sin() * (PI * x / a).sin() / (PI * PI * x * x)) as f32;
    }
    0.0
}

/// The step of an axis from `n` source samples to `m` output samples, `(float)src / dst` (the
/// CUDA float_motion kernel derives its bilinear taps from it as [`Scaler::new`] does).
pub(crate) fn axis_ratio(n: usize, m: usize) -> f32 {
    n as i32 as f32 / m as i32 as f32
}

/// The taps of every output position along one axis (`n` source samples, `m` output samples).
fn axis(method: Method, n: usize, m: usize) -> Vec<Taps> {
    // `(float)src / dst`, then each position `(x + 0.5) * ratio - 0.5` in double, kept as float.
    let ratio = axis_ratio(n, m);
    let pos = |x: usize| ((x as f64 + 0.5) * ratio as f64 - 0.5) as f32;
    (0..m)
        .map(|x| match method {
            Method::Nearest => Taps::Nearest((x as i32 as f32 * ratio) as usize),
            Method::Bilinear => {
                let xx = pos(x);
                let x1 = mirror(xx.floor() as i32, n);
                let x2 = mirror(xx.ceil() as i32, n);
                Taps::Bilinear(x1, x2, xx - x1 as i32 as f32)
            }
            Method::Bicubic => {
                let xx = pos(x);
                let x0 = xx.floor() as i32;
                let dx = xx - x0 as f32;
                Taps::Bicubic(
                    std::array::from_fn(|k| mirror(x0 + k as i32 - 1, n)),
                    std::array::from_fn(|k| bicubic_kernel((k as i32 - 1) as f32 - dx)),
                )
            }
            Method::Lanczos4 => {
                let xx = pos(x);
                let x0 = xx.floor() as i32;
                let dx = xx - x0 as f32;
                Taps::Lanczos4(
                    std::array::from_fn(|k| mirror(x0 + k as i32 - 4, n)),
                    std::array::from_fn(|k| lanczos4_kernel((k as i32 - 4) as f32 - dx, 4.0)),
                )
            }
        })
        .collect()
}

/// One axis of a [`Scaler`] as flat tables for a device kernel (the CUDA float_vif prescale):
/// each output position's `ntaps` source indices and weights, the values [`Scaler::scale`] uses.
#[derive(Debug, Clone, Default)]
pub struct AxisTable {
    /// Source indices, `ntaps` per output position.
    pub idx: Vec<i32>,
    /// Their weights (nearest: 0; bilinear: the second tap's weight, then 0).
    pub wt: Vec<f32>,
}

/// A [`Scaler`]'s taps for a device kernel: the method (0 nearest, 1 bilinear, 2 bicubic,
/// 3 lanczos4), taps per position, and the column and row tables.
#[derive(Debug, Clone)]
pub struct DeviceTaps {
    /// 0 nearest, 1 bilinear, 2 bicubic, 3 lanczos4.
    pub method: i32,
    /// Taps per position: 1, 2, 4 or 9.
    pub ntaps: usize,
    /// One entry per output column.
    pub cols: AxisTable,
    /// One entry per output row.
    pub rows: AxisTable,
}

/// Flattens one axis's taps.
fn flatten(taps: &[Taps]) -> AxisTable {
    let mut t = AxisTable::default();
    for tap in taps {
        let (idx, wt): (Vec<usize>, Vec<f32>) = match *tap {
            Taps::Nearest(i) => (vec![i], vec![0.0]),
            Taps::Bilinear(a, b, d) => (vec![a, b], vec![d, 0.0]),
            Taps::Bicubic(i, w) => (i.to_vec(), w.to_vec()),
            Taps::Lanczos4(i, w) => (i.to_vec(), w.to_vec()),
        };
        t.idx.extend(idx.iter().map(|&i| i as i32));
        t.wt.extend(wt);
    }
    t
}

impl Scaler {
    /// A scaler from `src` to `dst` (width, height).
    pub fn new(method: Method, src: (usize, usize), dst: (usize, usize)) -> Self {
        let copy = src == dst;
        let (cols, rows) = if copy {
            (Vec::new(), Vec::new())
        } else {
            (axis(method, src.0, dst.0), axis(method, src.1, dst.1))
        };
        Scaler { copy, cols, rows }
    }

    /// The taps as flat tables, or `None` when the size is unchanged (the scaler copies).
    pub fn device_taps(&self) -> Option<DeviceTaps> {
        if self.copy {
            return None;
        }
        let (method, ntaps) = match self.cols.first()? {
            Taps::Nearest(_) => (0, 1),
            Taps::Bilinear(..) => (1, 2),
            Taps::Bicubic(..) => (2, 4),
            Taps::Lanczos4(..) => (3, 9),
        };
        Some(DeviceTaps {
            method,
            ntaps,
            cols: flatten(&self.cols),
            rows: flatten(&self.rows),
        })
    }

    /// Scales `src` (geometry `sg`) into `dst` (geometry `dg`, the size the scaler was made for).
    pub fn scale(&self, src: &[f32], sg: Geom, dst: &mut [f32], dg: Geom) {
        if self.copy {
            for i in 0..sg.h {
                dst[i * dg.stride..i * dg.stride + sg.w]
                    .copy_from_slice(&src[i * sg.stride..i * sg.stride + sg.w]);
            }
            return;
        }
        let s = sg.stride;
        for (y, row_taps) in self.rows.iter().enumerate() {
            let out = &mut dst[y * dg.stride..y * dg.stride + dg.w];
            for (o, col_taps) in out.iter_mut().zip(&self.cols) {
                *o = match (row_taps, col_taps) {
                    (Taps::Nearest(sy), Taps::Nearest(sx)) => src[sy * s + sx],
                    (&Taps::Bilinear(y1, y2, dy), &Taps::Bilinear(x1, x2, dx)) => {
                        let (r1, r2) = (&src[y1 * s..], &src[y2 * s..]);
                        (1.0 - dy) * (1.0 - dx) * r1[x1]
                            + (1.0 - dy) * dx * r1[x2]
                            + dy * (1.0 - dx) * r2[x1]
                            + dy * dx * r2[x2]
                    }
                    (Taps::Bicubic(yi, wy), Taps::Bicubic(xi, wx)) => {
                        // Rows outer, columns inner, from 0 (`bicubic_interpolation`).
                        let mut v = 0.0f32;
                        for (&sy, &wy) in yi.iter().zip(wy) {
                            let row = &src[sy * s..];
                            for (&sx, &wx) in xi.iter().zip(wx) {
                                v += row[sx] * (wx * wy);
                            }
                        }
                        v
                    }
                    (Taps::Lanczos4(yi, wy), Taps::Lanczos4(xi, wx)) => {
                        // Rows outer, columns inner; the weights' sum alongside
                        // (`lanczos4_interpolation`).
                        let (mut v, mut sum) = (0.0f32, 0.0f32);
                        for (&sy, &wy) in yi.iter().zip(wy) {
                            let row = &src[sy * s..];
                            for (&sx, &wx) in xi.iter().zip(wx) {
                                let w = wx * wy;
                                sum += w;
                                v += row[sx] * w;
                            }
                        }
                        v / sum
                    }
                    _ => unreachable!("one method per scaler"),
                };
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn geom(w: usize, h: usize) -> Geom {
        Geom { w, h, stride: w }
    }

    #[test]
    fn every_method_keeps_a_flat_picture_flat_and_copies_at_equal_size() {
        let src = vec![3.5f32; 20 * 18];
        for &word in Method::WORDS {
            let m = Method::from_word(word);
            let mut dst = vec![0.0f32; 10 * 9];
            Scaler::new(m, (20, 18), (10, 9)).scale(&src, geom(20, 18), &mut dst, geom(10, 9));
            // Lanczos normalises by its weights' sum, which need not round back exactly.
            assert!(
                dst.iter().all(|&v| (v - 3.5).abs() < 1e-5),
                "{word}: {dst:?}"
            );
            let ramp: Vec<f32> = (0..20 * 18).map(|i| i as f32).collect();
            let mut same = vec![0.0f32; 20 * 18];
            Scaler::new(m, (20, 18), (20, 18)).scale(&ramp, geom(20, 18), &mut same, geom(20, 18));
            assert_eq!(same, ramp, "{word}");
        }
    }

    #[test]
    fn kernels_follow_their_definitions() {
        assert_eq!(bicubic_kernel(0.0), 1.0);
        assert_eq!(bicubic_kernel(1.0), 0.0);
        assert_eq!(bicubic_kernel(-2.0), 0.0);
        assert_eq!(lanczos4_kernel(0.0, 4.0), 1.0);
        assert_eq!(lanczos4_kernel(4.0, 4.0), 0.0);
        assert!(lanczos4_kernel(1.0, 4.0).abs() < 1e-7);
        assert!((lanczos4_kernel(0.5, 4.0) - 0.6203).abs() < 1e-3);
    }

    #[test]
    fn taps_are_mirrored_inside_the_picture() {
        for &word in Method::WORDS {
            for (n, m) in [(16, 64), (16, 2), (97, 48), (17, 68)] {
                for t in axis(Method::from_word(word), n, m) {
                    let ok = match t {
                        Taps::Nearest(i) => i < n,
                        Taps::Bilinear(a, b, _) => a < n && b < n,
                        Taps::Bicubic(i, _) => i.iter().all(|&i| i < n),
                        Taps::Lanczos4(i, _) => i.iter().all(|&i| i < n),
                    };
                    assert!(ok, "{word} {n}->{m}: {t:?}");
                }
            }
        }
    }
}
