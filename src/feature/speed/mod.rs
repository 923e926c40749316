//! SpEED (libvmaf's `speed_chroma` and `speed_temporal` extractors, `speed.c`): spatial
//! efficient entropic differencing, the entropy difference of reference and distorted planes
//! after a strong low-pass and decimation, in 5×5 blocks.
//!
//! Both extractors share one core ([`Speed`]), given a pair of `float` planes (libvmaf's
//! `picture_copy`, `x - 128` on the 8-bit scale): `speed_chroma` gives it the Cb and the Cr
//! planes of the pair ([`chroma`]); `speed_temporal` the differences of consecutive luma frames
//! ([`temporal`]). Per plane the core
//!
//! 1. optionally rescales it (`speed_prescale`, by `speed_prescale_method`: libvmaf's float VIF
//!    scalers, [`super::scale`]);
//! 2. filters it with a wide Gaussian (the scale-1 VIF filter size, sigma doubled) and keeps
//!    every 16th sample of every 16th row; then subtracts the local mean (the scale-4 VIF
//!    Gaussian) from the small picture;
//! 3. estimates the 25×25 covariance matrix `K` of its 5×5 neighbourhoods, its eigenvalues
//!    ([`linalg`]) and, per block, the variance `s = y' K⁻¹ y / 25` of the block's samples `y`;
//!    a block's entropy is `Σ_eig log2(λ s + σ_nn) + log2(2πe)`;
//! 4. compares reference and distorted blocks above the noise floor, each entropy weighted by a
//!    `log2(1 + variance)` chosen by `speed_weight_var_mode`, averaged over the blocks.
//!
//! Everything is in libvmaf's types and operation order (mostly `float`, `double` where its C
//! promotes). Only libvmaf's covariance sums depend on the host (its AVX2 and AVX-512 kernels add
//! in other orders, with fused multiply-adds): [`cov`] reproduces each family, chosen by
//! `libvmaf_isa` ([`crate::fidelity`]). The filtering is computed only at the samples the
//! decimation keeps, with the same sums libvmaf's full-picture filter (C or AVX2) makes there.
#![deny(unsafe_code)]

pub mod chroma;
pub mod cov;
pub mod linalg;
pub mod temporal;
#[cfg(test)]
mod tests;
#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
mod x86_64_avx2;

use super::float_vif::scalar::{self as vif, Source};
use super::options::{fmt_g, OptKind, OptSpec, OptValues};
use super::scale::{Geom, Method, Scaler};
use crate::cpu::CpuLevel;
use crate::error::{Error, Result};
use crate::fidelity::LibvmafIsa;
use cov::CovKernel;
use linalg::{Solver, N};

/// SpEED's block side (`DEFAULT_BLOCK_SIZE`).
pub const BLOCK: usize = 5;

/// The covariance sums of one plane: the 25×25 matrix's lower triangle with its diagonal.
pub const COV_SUMS: usize = N * (N + 1) / 2;

/// The decimation: libvmaf's `NUM_SCALES` = 4 halvings, i.e. every 16th sample.
pub const NUM_SCALES: usize = 4;

/// `log2(2πe)`, as GCC folds libvmaf's `log2(2 * M_PI * M_E)` (correctly rounded).
#[allow(clippy::excessive_precision)]
const LOG2_2PIE: f64 = 4.094191170361282;

/// `speed_kernelscale` (the same for both extractors).
const KERNELSCALE: OptSpec = OptSpec {
    name: "speed_kernelscale",
    alias: Some("ks"),
    kind: OptKind::Double {
        default: 1.0,
        min: 0.1,
        max: 4.0,
    },
    feature_param: true,
};

/// `speed_prescale`.
const PRESCALE: OptSpec = OptSpec {
    name: "speed_prescale",
    alias: Some("ps"),
    kind: OptKind::Double {
        default: 1.0,
        min: 0.1,
        max: 4.0,
    },
    feature_param: true,
};

/// `speed_prescale_method`.
const PRESCALE_METHOD: OptSpec = OptSpec {
    name: "speed_prescale_method",
    alias: Some("psm"),
    kind: OptKind::Choice {
        default: "nearest",
        choices: Method::WORDS,
    },
    feature_param: true,
};

/// `speed_sigma_nn`: the neural noise's standard deviation.
const SIGMA_NN: OptSpec = OptSpec {
    name: "speed_sigma_nn",
    alias: Some("snn"),
    kind: OptKind::Double {
        default: 0.29,
        min: 0.1,
        max: 2.0,
    },
    feature_param: true,
};

/// `speed_nn_floor`: the noise floor, a fraction of `speed_sigma_nn`.
const NN_FLOOR: OptSpec = OptSpec {
    name: "speed_nn_floor",
    alias: Some("nnf"),
    kind: OptKind::Double {
        default: 0.0,
        min: 0.0,
        max: 1.0,
    },
    feature_param: true,
};

/// `speed_max_val`: the largest value output (`speed_chroma` clips to it; `speed_temporal`
/// only takes it, for the name).
const MAX_VAL: OptSpec = OptSpec {
    name: "speed_max_val",
    alias: Some("mxv"),
    kind: OptKind::Double {
        default: 1000.0,
        min: 0.0,
        max: 1000.0,
    },
    feature_param: true,
};

/// The parameters the core takes, in the types libvmaf's `speed.c` uses them in.
#[derive(Debug, Clone, Copy)]
pub struct Params {
    /// `speed_kernelscale`, as the `float` libvmaf's filter functions take.
    pub kernelscale: f32,
    /// `speed_prescale`.
    pub prescale: f64,
    /// `speed_prescale_method`.
    pub method: Method,
    /// `speed_sigma_nn`, as `float`.
    pub sigma_nn: f32,
    /// `speed_nn_floor`, as `float`.
    pub nn_floor: f32,
    /// `speed_weight_var_mode` (0 for `speed_temporal`, which does not set it).
    pub weight_var_mode: i64,
}

impl Params {
    /// From an instance's options (both extractors name them alike).
    pub fn from_opts(o: &OptValues, weight_var_mode: i64) -> Self {
        Params {
            kernelscale: o.f64("speed_kernelscale") as f32,
            prescale: o.f64("speed_prescale"),
            method: Method::from_word(o.choice("speed_prescale_method")),
            sigma_nn: o.f64("speed_sigma_nn") as f32,
            nn_floor: o.f64("speed_nn_floor") as f32,
            weight_var_mode,
        }
    }
}

/// libvmaf's `SpeedDimensions` for a plane of `w × h`.
#[derive(Debug, Clone, Copy)]
pub struct Dims {
    /// The plane's size.
    pub w: usize,
    /// See `w`.
    pub h: usize,
    /// The size after `speed_prescale` (`(int)(w * prescale + 0.5)`).
    pub sw: usize,
    /// See `sw`.
    pub sh: usize,
    /// The decimated size (`sw >> 4`, `sh >> 4`).
    pub dw: usize,
    /// See `dw`.
    pub dh: usize,
    /// Blocks across and down (the decimated size cut to whole blocks).
    pub nbh: usize,
    /// See `nbh`.
    pub nbv: usize,
    /// Each of the 25 submatrices of the covariance estimate: the cut size less 4.
    pub subw: usize,
    /// See `subw`.
    pub subh: usize,
    /// Whether libvmaf rescales (`speed_prescale` not within 1e-3 of 1).
    pub rescaled: bool,
}

impl Dims {
    /// `speed_init_dimensions`.
    pub fn new(w: usize, h: usize, prescale: f64) -> Self {
        let sw = (w as f64 * prescale + 0.5) as usize;
        let sh = (h as f64 * prescale + 0.5) as usize;
        let (dw, dh) = (sw >> NUM_SCALES, sh >> NUM_SCALES);
        let (nbh, nbv) = (dw / BLOCK, dh / BLOCK);
        Dims {
            w,
            h,
            sw,
            sh,
            dw,
            dh,
            nbh,
            nbv,
            subw: (nbh * BLOCK).saturating_sub(BLOCK - 1),
            subh: (nbv * BLOCK).saturating_sub(BLOCK - 1),
            rescaled: (prescale - 1.0).abs() >= 1e-3,
        }
    }

    /// The number of blocks.
    pub fn blocks(&self) -> usize {
        self.nbh * self.nbv
    }
}

/// Checks what libvmaf's `speed_init` checks (and what it does not, but needs): a valid kernel
/// scale, a plane large enough for one block after decimation, and a prescale that libvmaf
/// either applies or whose size it keeps. `what` names the plane in messages.
pub fn check(feature: &str, p: &Params, w: usize, h: usize, what: &str) -> Result<()> {
    let ks = p.kernelscale as f64;
    if !vif::kernelscale_is_valid(ks) {
        let ks = fmt_g(ks);
        // libvmaf logs "invalid speed_kernelscale" and then fails on its unallocated buffers.
        return Err(Error::InvalidOption(format!(
            "feature {feature}: speed_kernelscale={ks} is not one libvmaf accepts (one of 1, \
             0.5, 1.5, 2, 2/3, 2.4, 360/97, 4/3, 3.5/3, 3.75/3, 4.25/3, 5/3, 3, 1/2.25, 1.4746, \
             1.54, 1.6, 1.06667, 0.711111, 0.74074, 1.111111)"
        )));
    }
    let d = Dims::new(w, h, p.prescale);
    if d.nbh == 0 || d.nbv == 0 {
        // libvmaf logs "SpEED: image too small" and goes on with no blocks (0/0).
        return Err(Error::Unsupported(format!(
            "feature {feature}: the {what} planes are {w}x{h}, {}x{} after speed_prescale, \
             {}x{} after SpEED's 16-fold decimation: less than one 5x5 block (libvmaf has no \
             score there); SpEED needs planes of at least 80x80 after speed_prescale, so use \
             larger input or a larger speed_prescale",
            d.sw, d.sh, d.dw, d.dh
        )));
    }
    if !d.rescaled && (d.sw, d.sh) != (w, h) {
        // libvmaf skips the rescale yet filters at the rescaled size, reading samples it never
        // wrote.
        return Err(Error::Unsupported(format!(
            "feature {feature}: speed_prescale={} is within 1e-3 of 1, so libvmaf does not \
             rescale, yet it makes the {what} planes ({w}x{h}) {}x{}, and then reads samples it \
             never wrote; use speed_prescale=1 or a value at least 1.001 or at most 0.999",
            p.prescale, d.sw, d.sh
        )));
    }
    Ok(())
}

/// One plane's entropies and variances per block (libvmaf's `SpeedResultBuffers`).
#[derive(Debug, Clone)]
struct Blocks {
    entropies: Vec<f32>,
    variances: Vec<f32>,
}

/// The SpEED core for planes of one size: its filters, scaler, covariance kernel and scratch
/// (allocated once; [`Speed::score`] allocates nothing).
#[derive(Debug, Clone)]
pub struct Speed {
    d: Dims,
    p: Params,
    cov: CovKernel,
    scaler: Option<Scaler>,
    /// The anti-alias Gaussian (`speed_get_antialias_filter`).
    antialias: Vec<f32>,
    /// The local-mean Gaussian (`vif_get_filter` at scale 4).
    mean_filter: Vec<f32>,
    /// The rescaled plane (`sw × sh`), when rescaled.
    scaled: Vec<f32>,
    /// One row of the anti-alias filter's vertical pass (`sw`).
    row: Vec<f32>,
    /// The decimated plane less its local mean (`dw × dh`), then its local mean.
    small: Vec<f32>,
    mean: Vec<f32>,
    /// The local-mean filter's row buffer (`dw`).
    tmp: Vec<f32>,
    /// The covariance matrix and its eigenvalues.
    k: Box<[f32; N * N]>,
    eig: [f32; N],
    /// The blocks' samples (25 × blocks), the solution of `K X = Y`, the solver's scratch.
    y: Vec<f32>,
    x: Vec<f32>,
    solver: Box<Solver>,
    /// Reference and distorted results.
    res: [Blocks; 2],
}

impl Speed {
    /// A core for `w × h` planes (checked with [`check`]), reproducing libvmaf's `family`'s
    /// covariance sums at the best implementation at or below `level`.
    pub fn new(p: Params, w: usize, h: usize, family: LibvmafIsa, level: CpuLevel) -> Self {
        let d = Dims::new(w, h, p.prescale);
        let nb = d.blocks();
        let size1 = vif::filter_size(1, p.kernelscale);
        // speed_get_antialias_filter: sigma = sqrt(NUM_SCALES) * size / 5, in double.
        let sigma = ((NUM_SCALES as f64).sqrt() * size1 as f64 / 5.0) as f32;
        let blocks = || Blocks {
            entropies: vec![0.0; nb],
            variances: vec![0.0; nb],
        };
        Speed {
            d,
            p,
            cov: CovKernel::new(family, level),
            scaler: d
                .rescaled
                .then(|| Scaler::new(p.method, (w, h), (d.sw, d.sh))),
            antialias: vif::gaussian(size1, sigma),
            mean_filter: vif::filter(NUM_SCALES, p.kernelscale),
            scaled: if d.rescaled {
                vec![0.0; d.sw * d.sh]
            } else {
                Vec::new()
            },
            row: vec![0.0; d.sw],
            small: vec![0.0; d.dw * d.dh],
            mean: vec![0.0; d.dw * d.dh],
            tmp: vec![0.0; d.dw],
            k: Box::new([0.0; N * N]),
            eig: [0.0; N],
            y: vec![0.0; N * nb],
            x: vec![0.0; N * nb],
            solver: Box::new(Solver::new(nb)),
            res: [blocks(), blocks()],
        }
    }

    /// The plane size this core takes.
    pub fn dims(&self) -> &Dims {
        &self.d
    }

    /// libvmaf's `speed_extract_score` on a (reference, distorted) pair of dense `w × h` float
    /// planes: the score, and whether libvmaf reports an error (a covariance matrix it could
    /// not invert, on either side). Like libvmaf, a pair with exactly one such side scores 0.
    pub fn score(&mut self, reference: &[f32], distorted: &[f32]) -> (f32, bool) {
        let mut sums = [0f64; COV_SUMS];
        self.downscale(reference);
        self.cov_sums(&mut sums);
        let err_ref = self.estimate(&sums, 0);
        self.downscale(distorted);
        self.cov_sums(&mut sums);
        let err_dis = self.estimate(&sums, 1);
        self.pair_score(err_ref, err_dis)
    }

    /// [`Speed::score`] from the work done elsewhere (the CUDA kernels): `fill(side, small,
    /// sums)` writes side 0's (reference), then side 1's decimated plane less its local mean
    /// (`dw × dh`, as `filter_and_downscale` leaves it) and its [`COV_SUMS`] covariance sums (in
    /// `Speed::cov_sums`' order and the family's operation order); the rest (the covariance
    /// matrix, its eigenvalues, the solve, the entropies and the comparison) is this core's.
    pub fn score_prepared(
        &mut self,
        mut fill: impl FnMut(usize, &mut [f32], &mut [f64; COV_SUMS]),
    ) -> (f32, bool) {
        let mut sums = [0f64; COV_SUMS];
        fill(0, &mut self.small, &mut sums);
        let err_ref = self.estimate(&sums, 0);
        fill(1, &mut self.small, &mut sums);
        let err_dis = self.estimate(&sums, 1);
        self.pair_score(err_ref, err_dis)
    }

    /// The score of a pair whose sides' results are in `res`.
    fn pair_score(&self, err_ref: bool, err_dis: bool) -> (f32, bool) {
        let score = if err_ref != err_dis {
            0.0
        } else {
            self.compare()
        };
        (score, err_ref || err_dis)
    }

    /// The anti-alias filter's and the local-mean filter's taps.
    pub fn filters(&self) -> (&[f32], &[f32]) {
        (&self.antialias, &self.mean_filter)
    }

    /// The `speed_prescale` scaler (`None` when libvmaf does not rescale).
    pub fn scaler(&self) -> Option<&Scaler> {
        self.scaler.as_ref()
    }

    /// The libvmaf family whose covariance sums this core reproduces.
    pub fn family(&self) -> LibvmafIsa {
        self.cov.family()
    }

    /// `filter_and_downscale`: rescale, anti-alias filter and decimate into `small`, subtract
    /// the local mean.
    fn downscale(&mut self, plane: &[f32]) {
        let d = self.d;
        let src = match &self.scaler {
            Some(s) => {
                let (gs, gd) = (dense(d.w, d.h), dense(d.sw, d.sh));
                s.scale(plane, gs, &mut self.scaled, gd);
                &self.scaled[..]
            }
            None => plane,
        };
        filter_decimated(&self.antialias, src, d, &mut self.row, &mut self.small);
        let g = dense(d.dw, d.dh);
        vif::filter1d(
            &self.mean_filter,
            Source::Plain(&self.small),
            g,
            &mut self.mean,
            &mut self.tmp,
        );
        for (s, &m) in self.small.iter_mut().zip(&self.mean) {
            *s -= m;
        }
    }

    /// Step 1 of `est_params` on `small`: the means of the 25 shifted submatrices and their
    /// covariance sums, `(xi, yi)` for `yi <= xi` at `xi (xi + 1) / 2 + yi`.
    fn cov_sums(&self, sums: &mut [f64; COV_SUMS]) {
        let d = self.d;
        let stride = d.dw;
        let data = &self.small;
        let n_sub = d.subw * d.subh;
        let mut means = [0f32; N];
        for (idx, m) in means.iter_mut().enumerate() {
            let (r0, c0) = (idx / BLOCK, idx % BLOCK);
            let mut acc = 0f32;
            for i in 0..d.subh {
                let o = (r0 + i) * stride + c0;
                for &v in &data[o..o + d.subw] {
                    acc += v;
                }
            }
            *m = acc / n_sub as f32;
        }
        for xi in 0..N {
            for yi in 0..=xi {
                let ox = (xi / BLOCK) * stride + xi % BLOCK;
                let oy = (yi / BLOCK) * stride + yi % BLOCK;
                sums[xi * (xi + 1) / 2 + yi] = self.cov.sum(
                    &data[ox..],
                    &data[oy..],
                    stride,
                    d.subh,
                    d.subw,
                    means[xi] as f64,
                    means[yi] as f64,
                );
            }
        }
    }

    /// `est_params` on `small` (with its covariance sums) into `res[side]`; returns whether `K`
    /// could not be inverted.
    fn estimate(&mut self, sums: &[f64; COV_SUMS], side: usize) -> bool {
        let d = self.d;
        let (stride, nb) = (d.dw, d.blocks());
        let n_sub = d.subw * d.subh;
        // Step 1: the covariance matrix of the 25 shifted submatrices.
        for xi in 0..N {
            for yi in 0..=xi {
                let c = (sums[xi * (xi + 1) / 2 + yi] / n_sub as f64) as f32;
                self.k[xi * N + yi] = c;
                self.k[yi * N + xi] = c;
            }
        }
        let data = &self.small;
        // Step 2: its eigenvalues.
        self.eig = linalg::eigenvalues(&self.k);
        // Step 3: the blocks' samples, one row per position in the block.
        for si in 0..BLOCK {
            for sj in 0..BLOCK {
                let row = &mut self.y[(si * BLOCK + sj) * nb..(si * BLOCK + sj + 1) * nb];
                for bi in 0..d.nbv {
                    for bj in 0..d.nbh {
                        row[bi * d.nbh + bj] = data[(si + BLOCK * bi) * stride + sj + BLOCK * bj];
                    }
                }
            }
        }
        // Step 4: K X = Y, if K is regular (no eigenvalue below 1e-6).
        let regular = !self.eig.iter().any(|&e| (e as f64) < 1e-6);
        let solved = regular && self.solver.solve(&self.k, &self.y, nb, &mut self.x).is_ok();
        if !solved {
            self.x.fill(0.0);
        }
        // Steps 5-6: s = Σ_rows (X Y) / 25, into the first row.
        let denominator = N as f32;
        for (x, &y) in self.x.iter_mut().zip(&self.y) {
            *x = (*x * y) / denominator;
        }
        let (first, rest) = self.x.split_at_mut(nb);
        for r in rest.chunks_exact(nb) {
            for (s, &v) in first.iter_mut().zip(r) {
                *s += v;
            }
        }
        // Steps 8-9: the entropies, one eigenvalue at a time.
        let out = &mut self.res[side];
        out.entropies.fill(0.0);
        let sigma_nn = self.p.sigma_nn;
        for &e in &self.eig {
            let l = if e < 0.0 { 0.0 } else { e };
            for (h, &s) in out.entropies.iter_mut().zip(first.iter()) {
                *h = (*h as f64 + (((l * s + sigma_nn) as f64).log2() + LOG2_2PIE)) as f32;
            }
        }
        out.variances.copy_from_slice(first);
        !solved
    }

    /// `get_speed_score`: the mean over blocks of the weighted entropy differences (blocks where
    /// both entropies are below the noise floor's count as 0).
    fn compare(&self) -> f32 {
        let p = &self.p;
        let base =
            (N as f64 * ((((1.0 + p.nn_floor) * p.sigma_nn) as f64).log2() + LOG2_2PIE)) as f32;
        let [r, d] = &self.res;
        let lg = |v: f64| v.log2();
        let mut score = 0f32;
        for i in 0..self.d.blocks() {
            let (re, de) = (r.entropies[i], d.entropies[i]);
            if re < base && de < base {
                continue;
            }
            let (rv, dv) = (r.variances[i], d.variances[i]);
            // `1 + v` in float; the mixes of both in double.
            let own = |e: f32, v: f32| (e as f64 * lg((1.0 + v) as f64)) as f32;
            let mixed = |e: f32, m: f64| (e as f64 * lg(1.0 + m)) as f32;
            let half = (rv + dv) as f64 / 2.0;
            let (sr, sd) = match p.weight_var_mode {
                0 => (own(re, rv), own(de, dv)),
                1 => (own(re, rv), own(de, rv)),
                2 => (own(re, dv), own(de, dv)),
                3 => (mixed(re, half), mixed(de, half)),
                4 => (own(re, rv), mixed(de, half)),
                5 => (own(re, rv), mixed(de, 0.75 * rv as f64 + 0.25 * dv as f64)),
                6 => (own(re, rv), mixed(de, 0.25 * rv as f64 + 0.75 * dv as f64)),
                m => unreachable!("speed_weight_var_mode {m} passed the option range"),
            };
            score += (sr - sd).abs();
        }
        score / self.d.blocks() as f32
    }
}

/// A dense plane geometry.
fn dense(w: usize, h: usize) -> Geom {
    Geom { w, h, stride: w }
}

/// libvmaf's filter-size mirror (`vif_filter1d_s`): `-i` before the start, `2n - i - 2` past
/// the end (one reflection suffices: the plane is larger than the filter's radius).
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

/// `vif_filter1d_s` with the anti-alias filter followed by `vif_dec16_s`, computed at the kept
/// samples only: rows `16 i` of the vertical pass (every column), then the horizontal pass at
/// columns `16 j`. Each kept sample is the sum libvmaf's full filter makes there, tap by tap.
fn filter_decimated(f: &[f32], src: &[f32], d: Dims, row: &mut [f32], out: &mut [f32]) {
    let r = (f.len() / 2) as isize;
    let step = 1 << NUM_SCALES;
    for bi in 0..d.dh {
        let i = (bi * step) as isize;
        row.fill(0.0);
        for (k, &fk) in f.iter().enumerate() {
            let o = mirror(i - r + k as isize, d.sh) * d.sw;
            for (t, &v) in row.iter_mut().zip(&src[o..o + d.sw]) {
                *t += fk * v;
            }
        }
        for (bj, o) in out[bi * d.dw..(bi + 1) * d.dw].iter_mut().enumerate() {
            let j = (bj * step) as isize;
            let mut acc = 0f32;
            for (k, &fk) in f.iter().enumerate() {
                acc += fk * row[mirror(j - r + k as isize, d.sw)];
            }
            *o = acc;
        }
    }
}
