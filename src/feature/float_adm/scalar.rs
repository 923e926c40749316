//! The float ADM kernels, in libvmaf's operation order and types (`adm_tools.c`, `adm_tools.h`).
//!
//! Bands are row-major `f32` with one stride for every band (libvmaf's `buf_stride`); the three
//! detail bands are indexed by orientation `theta` = 0 (h), 1 (v), 2 (d).

/// libvmaf's `ADM_BORDER_FACTOR`: the fraction of each side left out of the pooling.
pub const BORDER_FACTOR: f64 = 0.1;

/// libvmaf's db2 low-pass filter (double literals stored as `float`: the taps are
/// `LO[k] as f32`).
#[allow(clippy::excessive_precision)]
pub const LO: [f64; 4] = [
    0.482962913144690,
    0.836516303737469,
    0.224143868041857,
    -0.129409522550921,
];
/// libvmaf's db2 high-pass filter (as [`LO`]).
#[allow(clippy::excessive_precision)]
pub const HI: [f64; 4] = [
    -0.129409522550921,
    -0.224143868041857,
    0.836516303737469,
    -0.482962913144690,
];

/// `FLOAT_ONE_BY_30` and `FLOAT_ONE_BY_15`: double constants, so their products are computed in
/// double and rounded to float where stored.
#[allow(clippy::excessive_precision)]
pub const ONE_BY_30: f64 = 0.0333333351;
/// See [`ONE_BY_30`].
#[allow(clippy::excessive_precision)]
pub const ONE_BY_15: f64 = 0.0666666701;

/// The four bands of one DWT level.
#[derive(Debug, Clone)]
pub struct Bands {
    /// Approximation (low-pass both ways).
    pub a: Vec<f32>,
    /// Detail bands h, v, d.
    pub hvd: [Vec<f32>; 3],
}

impl Bands {
    /// Zeroed bands of `n` samples each.
    pub fn new(n: usize) -> Self {
        Bands {
            a: vec![0.0; n],
            hvd: std::array::from_fn(|_| vec![0.0; n]),
        }
    }
}

/// The DWT source rows (or columns) of each output (`dwt2_src_indices_filt_s`): `2i-1 .. 2i+2`,
/// mirrored as libvmaf does (`-i` before the start, `2n - i - 1` past the end). Indices libvmaf
/// would read outside the plane (sides of 1 sample only) are clamped.
pub fn src_indices(n: usize) -> Vec<[usize; 4]> {
    let n_i = n as isize;
    let fix = |i: isize| (i.max(0) as usize).min(n - 1);
    (0..n.div_ceil(2) as isize)
        .map(|i| {
            let i0 = 2 * i - 1;
            let i0 = if i0 < 0 {
                -i0
            } else if i0 >= n_i {
                2 * n_i - i0 - 1
            } else {
                i0
            };
            let up = |k: isize| if k >= n_i { 2 * n_i - k - 1 } else { k };
            [
                fix(i0),
                fix(up(2 * i)),
                fix(up(2 * i + 1)),
                fix(up(2 * i + 2)),
            ]
        })
        .collect()
}

#[inline]
fn taps(c: &[f64; 4], s: [f32; 4]) -> f32 {
    let mut acc = 0f32;
    for k in 0..4 {
        acc += c[k] as f32 * s[k];
    }
    acc
}

/// One DWT level (`adm_dwt2_s`, or `adm_dwt2_lo_s` with `lo_only`): `w x h` source with stride
/// `stride` into bands of `ceil(w/2) x ceil(h/2)` with stride `bs`.
#[allow(clippy::too_many_arguments)]
pub fn dwt2(
    src: &[f32],
    stride: usize,
    w: usize,
    iy: &[[usize; 4]],
    ix: &[[usize; 4]],
    out: &mut Bands,
    bs: usize,
    tmp: &mut [Vec<f32>; 2],
    lo_only: bool,
) {
    let [tlo, thi] = tmp;
    for (i, rows) in iy.iter().enumerate() {
        let r = rows.map(|k| &src[k * stride..k * stride + w]);
        for j in 0..w {
            let s = [r[0][j], r[1][j], r[2][j], r[3][j]];
            tlo[j] = taps(&LO, s);
            if !lo_only {
                thi[j] = taps(&HI, s);
            }
        }
        let o = i * bs;
        for (j, c) in ix.iter().enumerate() {
            let s = c.map(|k| tlo[k]);
            out.a[o + j] = taps(&LO, s);
            if !lo_only {
                out.hvd[1][o + j] = taps(&HI, s);
                let s = c.map(|k| thi[k]);
                out.hvd[0][o + j] = taps(&LO, s);
                out.hvd[2][o + j] = taps(&HI, s);
            }
        }
    }
}

/// A rectangle of band samples: rows `top..bottom`, columns `left..right`.
#[derive(Debug, Clone, Copy)]
pub struct Region {
    /// First row.
    pub top: usize,
    /// One past the last row.
    pub bottom: usize,
    /// First column.
    pub left: usize,
    /// One past the last column.
    pub right: usize,
}

impl Region {
    /// The pooling region of a `w x h` band: `(int)(n * 0.1 - 0.5)` left out on each side.
    pub fn pool(w: usize, h: usize) -> Region {
        let left = (w as f64 * BORDER_FACTOR - 0.5) as i64;
        let top = (h as f64 * BORDER_FACTOR - 0.5) as i64;
        Region {
            top: top as usize,
            bottom: (h as i64 - top) as usize,
            left: left as usize,
            right: (w as i64 - left) as usize,
        }
    }

    /// The decouple/CSF region: the pooling region grown for the masking taps, as libvmaf
    /// computes it (one more before, two more after the unclamped start, then clamped).
    pub fn taps(w: usize, h: usize) -> Region {
        let left = (w as f64 * BORDER_FACTOR - 0.5 - 1.0) as i64;
        let top = (h as f64 * BORDER_FACTOR - 0.5 - 1.0) as i64;
        let right = w as i64 - left + 2;
        let bottom = h as i64 - top + 2;
        Region {
            top: top.max(0) as usize,
            bottom: bottom.min(h as i64) as usize,
            left: left.max(0) as usize,
            right: right.min(w as i64) as usize,
        }
    }

    /// Width times height as libvmaf's `int` arguments of `get_noise_constant`.
    fn area(&self) -> i64 {
        (self.right as i64 - self.left as i64) * (self.bottom as i64 - self.top as i64)
    }
}

/// libvmaf's `DIVS(n, d)` on SSE2 builds: `n * rcp(d)` with RCPSS and one Newton step. RCPSS is
/// an approximation whose bits are the CPU model's, so this uses the instruction itself
/// (`super::x86_64::rcpss`): it equals what libvmaf computes on the same machine.
#[cfg(target_arch = "x86_64")]
#[inline]
pub fn divs(n: f32, d: f32) -> f32 {
    let xi = super::x86_64::rcpss(d);
    n * (xi + xi * (1.0 - d * xi))
}

/// libvmaf's `DIVS(n, d)` without SSE2: a plain division.
#[cfg(not(target_arch = "x86_64"))]
#[inline]
pub fn divs(n: f32, d: f32) -> f32 {
    n / d
}

/// The decoupling's `f32` constants: `cos(1 degree)^2` (computed in double) and the `1e-30`
/// added to the reference before the division.
pub fn decouple_constants() -> (f32, f32) {
    let c = (1.0 * std::f64::consts::PI / 180.0).cos();
    ((c * c) as f32, 1e-30f64 as f32)
}

/// Detail/artefact decoupling (`adm_decouple_s`) over `reg`: writes the restored bands `r` and
/// the additive impairment bands `a`.
pub fn decouple(
    rf: &Bands,
    df: &Bands,
    r: &mut [Vec<f32>; 3],
    a: &mut [Vec<f32>; 3],
    reg: Region,
    bs: usize,
    gain_limit: f64,
) {
    let (cos_1deg_sq, eps) = decouple_constants();
    for i in reg.top..reg.bottom {
        for k in i * bs + reg.left..i * bs + reg.right {
            let o = [rf.hvd[0][k], rf.hvd[1][k], rf.hvd[2][k]];
            let t = [df.hvd[0][k], df.hvd[1][k], df.hvd[2][k]];
            let mut rst = [0f32; 3];
            for b in 0..3 {
                let kk = divs(t[b], o[b] + eps);
                // Same as C's `k < 0 ? 0 : (k > 1 ? 1 : k)`, NaN and -0 included.
                let kk = kk.clamp(0.0, 1.0);
                rst[b] = kk * o[b];
            }
            let ot_dp = o[0] * t[0] + o[1] * t[1];
            let o_mag_sq = o[0] * o[0] + o[1] * o[1];
            let t_mag_sq = t[0] * t[0] + t[1] * t[1];
            let angle = ot_dp >= 0.0 && ot_dp * ot_dp >= cos_1deg_sq * o_mag_sq * t_mag_sq;
            if angle {
                for b in 0..3 {
                    // In double: rst * gain_limit against the distorted value (C's MIN/MAX).
                    let tb = t[b] as f64;
                    if (rst[b] as f64) > 0.0 {
                        let g = rst[b] as f64 * gain_limit;
                        rst[b] = (if g < tb { g } else { tb }) as f32;
                    }
                    if (rst[b] as f64) < 0.0 {
                        let g = rst[b] as f64 * gain_limit;
                        rst[b] = (if g > tb { g } else { tb }) as f32;
                    }
                }
            }
            for b in 0..3 {
                r[b][k] = rst[b];
                a[b][k] = t[b] - rst[b];
            }
        }
    }
}

/// CSF weighting (`adm_csf_s`) over `reg`: `dst = rfactor * src`, `flt = |dst| / 30`.
pub fn csf(
    src: &[Vec<f32>; 3],
    dst: &mut [Vec<f32>; 3],
    flt: &mut [Vec<f32>; 3],
    rfactor: [f32; 3],
    reg: Region,
    bs: usize,
) {
    for b in 0..3 {
        for i in reg.top..reg.bottom {
            for k in i * bs + reg.left..i * bs + reg.right {
                let v = rfactor[b] * src[b][k];
                dst[b][k] = v;
                flt[b][k] = (ONE_BY_30 * v.abs() as f64) as f32;
            }
        }
    }
}

/// `|x|^p` as libvmaf sums it: `x * x * x` for p = 3, else `powf`.
#[inline]
fn pow_p(x: f32, p: f64) -> f32 {
    if p == 3.0 {
        x * x * x
    } else {
        x.powf(p as f32)
    }
}

/// `get_noise_constant`: `powf(w * h * weight, 1 / p)`.
fn noise_constant(reg: Region, weight: f64, p: f64) -> f32 {
    ((reg.area() as f64 * weight) as f32).powf((1.0 / p) as f32)
}

/// The denominator of a scale (`adm_csf_den_scale_s`): the p-norm of the CSF-weighted reference
/// detail bands over the pooling region, plus the noise constant, summed over orientations.
pub fn den_scale(
    rf: &Bands,
    rfactor: [f32; 3],
    w: usize,
    h: usize,
    bs: usize,
    p: f64,
    noise_weight: f64,
) -> f32 {
    let reg = Region::pool(w, h);
    let mut acc = [0f32; 3];
    for i in reg.top..reg.bottom {
        let mut inner = [0f32; 3];
        for k in i * bs + reg.left..i * bs + reg.right {
            for b in 0..3 {
                inner[b] += pow_p((rfactor[b] * rf.hvd[b][k]).abs(), p);
            }
        }
        for b in 0..3 {
            acc[b] += inner[b];
        }
    }
    pool(acc, reg, noise_weight, p)
}

/// The end of [`den_scale`] and [`cm`] from the three bands' sums over the pooling region `reg`
/// (`f32`, row partials added in row order): each sum's `1/p` power plus the noise constant,
/// summed over the bands (the CUDA plan finishes its device sums with this).
pub fn pool(acc: [f32; 3], reg: Region, noise_weight: f64, p: f64) -> f32 {
    let nc = noise_constant(reg, noise_weight, p);
    let s = acc.map(|a| a.powf((1.0 / p) as f32) + nc);
    s[0] + s[1] + s[2]
}

/// Contrast masking and pooling (`adm_cm_s`): each sample of `src` (weighted by `rfactor`)
/// less the masking threshold from the CSF bands `csf` (centre, /15) and their `flt` (/30)
/// neighbourhood, clipped at 0, p-norm pooled over the pooling region, plus the noise constant.
/// Neighbours mirror at the band edges as libvmaf's macros do: row/column 1 before the first,
/// the last one again after the last.
#[allow(clippy::too_many_arguments)]
pub fn cm(
    src: &[Vec<f32>; 3],
    flt: &[Vec<f32>; 3],
    csf: &[Vec<f32>; 3],
    rfactor: [f32; 3],
    w: usize,
    h: usize,
    bs: usize,
    p: f64,
    noise_weight: f64,
    bypass: bool,
) -> f32 {
    let reg = Region::pool(w, h);
    let before = |i: usize, n: usize| if i == 0 { 1.min(n - 1) } else { i - 1 };
    let after = |i: usize, n: usize| if i + 1 >= n { n - 1 } else { i + 1 };
    let mut acc = [0f32; 3];
    for i in reg.top..reg.bottom {
        let rows = [before(i, h) * bs, i * bs, after(i, h) * bs];
        let mut inner = [0f32; 3];
        for j in reg.left..reg.right {
            let cols = [before(j, w), j, after(j, w)];
            let mut thr = 0f32;
            if !bypass {
                for b in 0..3 {
                    let (f, c) = (&flt[b], &csf[b]);
                    let mut sum = 0f32;
                    for (ri, &ro) in rows.iter().enumerate() {
                        for (ci, &co) in cols.iter().enumerate() {
                            if ri == 1 && ci == 1 {
                                sum = (sum as f64 + ONE_BY_15 * c[ro + co].abs() as f64) as f32;
                            } else {
                                sum += f[ro + co];
                            }
                        }
                    }
                    thr += sum;
                }
            }
            let k = i * bs + j;
            for b in 0..3 {
                let x = (src[b][k] * rfactor[b]).abs() - thr;
                let x = if x < 0.0 { 0.0 } else { x };
                inner[b] += pow_p(x, p);
            }
        }
        for b in 0..3 {
            acc[b] += inner[b];
        }
    }
    pool(acc, reg, noise_weight, p)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn indices_mirror_like_libvmaf() {
        assert_eq!(
            src_indices(5),
            vec![[1, 0, 1, 2], [1, 2, 3, 4], [3, 4, 4, 3]]
        );
        assert_eq!(src_indices(4), vec![[1, 0, 1, 2], [1, 2, 3, 3]]);
    }

    #[test]
    fn regions() {
        let r = Region::pool(160, 120);
        assert_eq!((r.left, r.right, r.top, r.bottom), (15, 145, 11, 109));
        let t = Region::taps(160, 120);
        assert_eq!((t.left, t.right, t.top, t.bottom), (14, 148, 10, 112));
        let t = Region::taps(10, 3);
        assert_eq!((t.left, t.right, t.top, t.bottom), (0, 10, 0, 3));
    }

    #[test]
    fn divs_is_close_to_division() {
        for (n, d) in [(1.0f32, 3.0f32), (-2.5, 7.25), (100.0, -0.001)] {
            assert!((divs(n, d) - n / d).abs() <= (n / d).abs() * 1e-6);
        }
    }
}
