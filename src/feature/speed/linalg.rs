//! SpEED's small linear algebra, in libvmaf's operation order and types (`speed.c`): the
//! eigenvalues of the 25×25 covariance matrix (Householder tridiagonalisation, then implicit
//! symmetric QR steps, adapted by libvmaf from GSL's `gsl_eigen_symm`) and the solution of
//! `K X = Y` through a Householder QR decomposition of `K`.
//!
//! Everything is `f32`; where libvmaf's C mixes in a `double` (`sqrt`, the `1e-6` thresholds,
//! a `-0.5` or `2.0` literal) the value is widened and narrowed at the same places. libvmaf has
//! only C code for these (no SIMD), so this one version equals it on every host.
#![forbid(unsafe_code)]

/// The matrix order: SpEED's 5×5 blocks (`DEFAULT_BLOCK_SIZE` squared).
pub const N: usize = 25;

/// libvmaf's `EIGENVALUE_EPS` (a `double`): the singularity and deflation threshold.
const EPS: f64 = 1e-6;

/// libvmaf's `EIGENVALUE_MAX_ITERS`: QR steps before it gives up (and keeps the diagonal).
const MAX_ITERS: usize = 500;

/// C's `get_sign` as the `float` it is multiplied as: `x >= 0 ? 1 : -1`.
fn sign(x: f32) -> f32 {
    if x >= 0.0 {
        1.0
    } else {
        -1.0
    }
}

/// `pythagoras`: `sqrt(x * x + y * y)`, the sum in `float`, the root in `double`.
fn hypot(x: f32, y: f32) -> f32 {
    ((x * x + y * y) as f64).sqrt() as f32
}

/// `compute_column_norm`: the norm of `a[start.., col]`.
fn column_norm(a: &[f32; N * N], col: usize, start: usize) -> f32 {
    let mut norm = 0f32;
    for i in start..N {
        norm += a[i * N + col] * a[i * N + col];
    }
    (norm as f64).sqrt() as f32
}

/// `compute_householder_transform`: the reflection annihilating `a[start + 1.., col]`, stored
/// in place (scaled so its first element is an implicit 1, `beta` in its place); returns tau.
fn householder(a: &mut [f32; N * N], col: usize, start: usize) -> f32 {
    if N - start == 1 {
        return 0.0;
    }
    let xnorm = column_norm(a, col, start + 1);
    if xnorm == 0.0 {
        return 0.0;
    }
    let alpha = a[start * N + col];
    let beta = -sign(alpha) * hypot(alpha, xnorm);
    let tau = (beta - alpha) / beta;
    let s = alpha - beta;
    if s != 0.0 {
        for i in start..N {
            a[i * N + col] /= s;
        }
        a[start * N + col] = beta;
    }
    tau
}

/// `convert_to_tridiagonal` (GSL's `symmtd_decomp`): N-2 Householder similarity transforms;
/// returns the diagonal and subdiagonal (`sd[N - 1]` unused).
fn tridiagonalize(a: &mut [f32; N * N]) -> ([f32; N], [f32; N]) {
    let mut v = [0f32; N];
    let mut x = [0f32; N];
    for i in 0..N - 2 {
        let tau = householder(a, i, i + 1);
        for j in i + 1..N {
            v[j] = a[j * N + i];
        }
        if tau != 0.0 {
            let s = i + 1;
            a[s * N + i] = v[s];
            v[s] = 1.0;
            // x = tau A v
            for r in s..N {
                x[r] = 0.0;
                for c in s..N {
                    x[r] += tau * a[r * N + c] * v[c];
                }
            }
            // x -= (tau / 2) (x . v) v
            let mut xv = 0f32;
            for r in s..N {
                xv += x[r] * v[r];
            }
            let alpha = (-0.5 * tau as f64 * xv as f64) as f32;
            for r in s..N {
                x[r] += alpha * v[r];
            }
            // A -= x v' + v x'
            for r in s..N {
                for c in s..N {
                    a[r * N + c] -= x[r] * v[c] + v[r] * x[c];
                }
            }
        }
    }
    let mut d = [0f32; N];
    let mut sd = [0f32; N];
    for i in 0..N {
        d[i] = a[i * N + i];
    }
    for i in 0..N - 1 {
        sd[i] = a[(i + 1) * N + i];
    }
    (d, sd)
}

/// `chop_small_elements`: zeroes subdiagonal entries negligible next to their diagonal
/// neighbours (`|sd| < 1e-6 (|d_i| + |d_i+1|)`, the sum in `float`, the rest in `double`).
fn chop(d: &[f32], sd: &mut [f32], n: usize) {
    for i in 0..n - 1 {
        if (sd[i].abs() as f64) < EPS * (d[i].abs() + d[i + 1].abs()) as f64 {
            sd[i] = 0.0;
        }
    }
}

/// `trailing_eigenvalue`: Wilkinson's shift from the trailing 2×2 block.
fn trailing_eigenvalue(d: &[f32], sd: &[f32], n: usize) -> f32 {
    let ta = d[n - 2];
    let tb = d[n - 1];
    let tab = sd[n - 2];
    let dt = ((ta - tb) as f64 / 2.0) as f32;
    if dt > 0.0 {
        tb - tab * (tab / (dt + hypot(dt, tab)))
    } else if dt == 0.0 {
        tb - tab.abs()
    } else {
        tb + tab * (tab / (-dt + hypot(dt, tab)))
    }
}

/// `create_givens`: (c, s) of the rotation zeroing `b` against `a` (the root's reciprocal in
/// `double`).
fn givens(a: f32, b: f32) -> (f32, f32) {
    if b == 0.0 {
        (1.0, 0.0)
    } else if b.abs() > a.abs() {
        let t = -a / b;
        let s1 = (1.0 / ((1.0 + t * t) as f64).sqrt()) as f32;
        (s1 * t, s1)
    } else {
        let t = -b / a;
        let c1 = (1.0 / ((1.0 + t * t) as f64).sqrt()) as f32;
        (c1, c1 * t)
    }
}

/// `qr_step`: one implicit symmetric QR step with Wilkinson shift on the unreduced block
/// `d[..n]`, `sd[..n - 1]` (chasing the bulge down the band).
fn qr_step(d: &mut [f32], sd: &mut [f32], n: usize) {
    let mut mu = trailing_eigenvalue(d, sd, n);
    if EPS * (mu.abs() as f64) > (d[0].abs() + sd[0].abs()) as f64 {
        mu = 0.0;
    }
    let mut x = d[0] - mu;
    let mut z = sd[0];
    let mut bk = 0f32;
    let mut zk = 0f32;
    let mut ap = d[0];
    let mut bp = sd[0];
    let mut aq = d[1];
    if n == 2 {
        let (c, s) = givens(x, z);
        let ap1 = c * (c * ap - s * bp) + s * (s * aq - c * bp);
        let bp1 = c * (s * ap + c * bp) - s * (s * bp + c * aq);
        let aq1 = s * (s * ap + c * bp) + c * (s * bp + c * aq);
        d[0] = ap1;
        sd[0] = bp1;
        d[1] = aq1;
        return;
    }
    let mut bq = sd[1];
    for k in 0..n - 1 {
        let (c, s) = givens(x, z);
        // G' T G
        let bk1 = c * bk - s * zk;
        let ap1 = c * (c * ap - s * bp) + s * (s * aq - c * bp);
        let bp1 = c * (s * ap + c * bp) - s * (s * bp + c * aq);
        let zp1 = -s * bq;
        let aq1 = s * (s * ap + c * bp) + c * (s * bp + c * aq);
        let bq1 = c * bq;
        let ak = ap1;
        bk = bp1;
        zk = zp1;
        ap = aq1;
        bp = bq1;
        if k < n - 2 {
            aq = d[k + 2];
        }
        if k + 3 < n {
            bq = sd[k + 2];
        }
        d[k] = ak;
        if k > 0 {
            sd[k - 1] = bk1;
        }
        if k < n - 2 {
            sd[k + 1] = bp;
        }
        x = bk;
        z = zk;
    }
    d[n - 1] = ap;
    sd[n - 2] = bk;
}

/// `compute_eigenvalues`: the eigenvalues of the symmetric matrix `k` (row-major), in libvmaf's
/// (unsorted) order. Like libvmaf, a block that has not converged after 500 steps keeps its
/// diagonal.
pub fn eigenvalues(k: &[f32; N * N]) -> [f32; N] {
    let mut a = *k;
    let (mut d, mut sd) = tridiagonalize(&mut a);
    chop(&d, &mut sd, N);
    let mut b = N - 1;
    let mut iter = 0;
    while b > 0 && iter < MAX_ITERS {
        if sd[b - 1] == 0.0 {
            b -= 1;
            continue;
        }
        // The largest unreduced block ending at b.
        let mut a = b - 1;
        while a > 0 {
            if sd[a - 1] == 0.0 {
                break;
            }
            a -= 1;
        }
        let n = b - a + 1;
        qr_step(&mut d[a..], &mut sd[a..], n);
        chop(&d[a..], &mut sd[a..], n);
        iter += 1;
    }
    d
}

/// C's `matrix_mul` on N×N matrices: `dst = x y`, each entry summed over k from zero.
fn mul(dst: &mut [f32; N * N], x: &[f32; N * N], y: &[f32; N * N]) {
    dst.fill(0.0);
    for i in 0..N {
        for k in 0..N {
            let xik = x[i * N + k];
            for j in 0..N {
                dst[i * N + j] += xik * y[k * N + j];
            }
        }
    }
}

/// Scratch of [`Solver::solve`]: the factors of `K` and one block of work.
#[derive(Debug, Clone)]
pub struct Solver {
    /// The accumulated reflections `H_{N-1} … H_1` (libvmaf's `Q` after both transposes).
    q: [f32; N * N],
    r: [f32; N * N],
    z: [f32; N * N],
    h: [f32; N * N],
    prod: [f32; N * N],
    /// `Q' Y`, N × cols.
    qy: Vec<f32>,
}

/// `K` had a diagonal entry of `R` below 1e-6: libvmaf's `solve_triangular_system` gives up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Singular;

impl Solver {
    /// Scratch for right-hand sides of `cols` columns.
    pub fn new(cols: usize) -> Self {
        Solver {
            q: [0.0; N * N],
            r: [0.0; N * N],
            z: [0.0; N * N],
            h: [0.0; N * N],
            prod: [0.0; N * N],
            qy: vec![0.0; N * cols],
        }
    }

    /// `matrix_qr_decomposition`: Householder QR of `a`, as libvmaf computes it (each
    /// reflection built from the column of the reduced matrix but signed by `a`'s own
    /// diagonal, `R = Q a` recomputed at the end).
    fn factor(&mut self, a: &[f32; N * N]) {
        self.z = *a;
        self.q.fill(0.0);
        for i in 0..N {
            self.q[i * N + i] = 1.0;
        }
        let mut v = [0f32; N];
        for k in 0..N - 1 {
            // matrix_minor: the first k rows and columns become the identity's.
            for i in 0..N {
                for j in 0..N {
                    if i < k || j < k {
                        self.z[i * N + j] = if i == j { 1.0 } else { 0.0 };
                    }
                }
            }
            for (i, vi) in v.iter_mut().enumerate() {
                *vi = self.z[i * N + k];
            }
            let norm = vector_norm(&v);
            v[k] += sign(a[k * N + k]) * norm;
            let norm = vector_norm(&v);
            for vi in &mut v {
                *vi /= norm;
            }
            // h = I - 2 v v'
            for i in 0..N {
                for j in 0..N {
                    self.h[i * N + j] = -2.0 * v[i] * v[j];
                }
            }
            for i in 0..N {
                self.h[i * N + i] += 1.0;
            }
            mul(&mut self.prod, &self.h, &self.z);
            self.z = self.prod;
            mul(&mut self.prod, &self.h, &self.q);
            self.q = self.prod;
        }
        mul(&mut self.r, &self.q, a);
    }

    /// `solve_linear_system`: `x = K⁻¹ y` for `y` of N rows and `cols` columns (row-major), by
    /// `R x = Q' y` and back substitution. On [`Singular`], `x` is partly written (libvmaf's
    /// caller then zeroes it).
    pub fn solve(
        &mut self,
        k: &[f32; N * N],
        y: &[f32],
        cols: usize,
        x: &mut [f32],
    ) -> Result<(), Singular> {
        self.factor(k);
        // qy = Q y (libvmaf's Q, transposed twice), summed over k from zero.
        let qy = &mut self.qy[..N * cols];
        qy.fill(0.0);
        for i in 0..N {
            for kk in 0..N {
                let q = self.q[i * N + kk];
                let (dst, src) = (&mut qy[i * cols..(i + 1) * cols], &y[kk * cols..]);
                for (d, &s) in dst.iter_mut().zip(src) {
                    *d += q * s;
                }
            }
        }
        // solve_triangular_system
        for i in (0..N).rev() {
            let denominator = self.r[i * N + i];
            if (denominator.abs() as f64) < EPS {
                return Err(Singular);
            }
            for j in 0..cols {
                let mut t = qy[i * cols + j];
                for kk in i + 1..N {
                    t -= x[kk * cols + j] * self.r[i * N + kk];
                }
                x[i * cols + j] = t / denominator;
            }
        }
        Ok(())
    }
}

/// `vector_norm`: the sum of squares in `float`, its root in `double`.
fn vector_norm(v: &[f32; N]) -> f32 {
    let mut sum = 0f32;
    for &x in v {
        sum += x * x;
    }
    (sum as f64).sqrt() as f32
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A symmetric positive definite test matrix with known structure.
    fn spd(seed: u32) -> [f32; N * N] {
        let mut s = seed;
        let mut rnd = || {
            s = s.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            (s >> 8) as f32 / (1u32 << 24) as f32 - 0.5
        };
        let b: Vec<f32> = (0..N * N).map(|_| rnd()).collect();
        let mut k = [0f32; N * N];
        for i in 0..N {
            for j in 0..N {
                let mut acc = 0f64;
                for t in 0..N {
                    acc += b[i * N + t] as f64 * b[j * N + t] as f64;
                }
                k[i * N + j] = acc as f32 + if i == j { 0.5 } else { 0.0 };
            }
        }
        k
    }

    #[test]
    fn eigenvalues_of_a_diagonal_matrix_are_its_diagonal() {
        let mut k = [0f32; N * N];
        for i in 0..N {
            k[i * N + i] = (i + 1) as f32;
        }
        let mut e = eigenvalues(&k);
        e.sort_by(f32::total_cmp);
        let want: Vec<f32> = (1..=N).map(|i| i as f32).collect();
        assert_eq!(e.to_vec(), want);
    }

    #[test]
    fn eigenvalues_keep_the_trace_and_the_solution_solves() {
        for seed in 1..6 {
            let k = spd(seed);
            let e = eigenvalues(&k);
            let trace: f64 = (0..N).map(|i| k[i * N + i] as f64).sum();
            let sum: f64 = e.iter().map(|&x| x as f64).sum();
            assert!((trace - sum).abs() < 1e-3 * trace, "{trace} vs {sum}");
            assert!(e.iter().all(|&x| x > 0.4), "{e:?}");
            let cols = 3;
            let y: Vec<f32> = (0..N * cols).map(|i| (i % 7) as f32 - 3.0).collect();
            let mut x = vec![0f32; N * cols];
            Solver::new(cols).solve(&k, &y, cols, &mut x).unwrap();
            for i in 0..N {
                for j in 0..cols {
                    let kx: f64 = (0..N)
                        .map(|t| k[i * N + t] as f64 * x[t * cols + j] as f64)
                        .sum();
                    assert!((kx - y[i * cols + j] as f64).abs() < 1e-3, "{kx}");
                }
            }
        }
    }

    #[test]
    fn a_singular_matrix_is_reported() {
        // Rank N - 1: the last diagonal entry of R is 0.
        let mut k = [0f32; N * N];
        for i in 0..N - 1 {
            k[i * N + i] = 1.0;
        }
        let mut x = vec![0f32; N];
        assert_eq!(
            Solver::new(1).solve(&k, &[1.0; N], 1, &mut x),
            Err(Singular)
        );
    }
}
